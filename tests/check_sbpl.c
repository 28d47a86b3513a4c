/* check_sbpl.c - the offline Seatbelt evaluator (issue 5).
 *
 * Tests as data, under tests/data/sbpl/:
 *  - table.tsv: the oracle, at least 120 queries over the profiles of
 *    profiles/ (written in the style of the public deny-default profiles:
 *    a base import, require-all/require-not write roots from params, a .git
 *    regex that protects before the directory exists, procedures, network
 *    switches), each with the verdict and the deciding rule's file:line
 *    worked out by hand from the profile text;
 *  - errors/NAME.sb: profiles that must not read, with exactly the
 *    diagnostics of NAME.err;
 *  - lint/NAME.sb: lint findings must be exactly NAME.lint.
 * GK_REGEN=1 rewrites the .err and .lint goldens (review the diff); the
 * table is never regenerated.
 *
 * The conservatism invariant (backends.md), differentially: every bundled
 * policy and every grant of the tests is compiled for macOS, emitted as
 * sbpl, read back by this evaluator, and asked about a generated query set
 * (projected paths with parents, children, siblings and firmlink twins;
 * every nameable command and vetoed name on PATH and in admitted dirs;
 * the network). Wherever the profile allows, the gate must allow.
 * Over-restrictions (the gate allows, the profile denies) are printed, not
 * failures. Violations already known (a spec disagreement, an open emitter
 * bug) are listed in tests/data/sbpl/known-violations.tsv: any other one
 * fails, and so does a listed one that stopped happening. The sbpl-params
 * rendering, read with its own -D lines, must answer every query as sbpl.
 * A harness test shows the comparison can fail: allow-everything breaks it.
 */
#include "testutil.h"
#include "freeze/freeze.h"
#include "gate/gate.h"
#include "analysis/sbpl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *data(const char *rel)
{
    gk_autofree char *d = gk_test_path("tests/data/sbpl");
    return gk_path_join(d, rel);
}

/* Split s at sep into at most max fields (in place). */
static size_t split(char *s, char sep, char **f, size_t max)
{
    size_t n = 0;
    while (n < max) {
        f[n++] = s;
        char *e = strchr(s, sep);
        if (!e)
            break;
        *e = '\0';
        s = e + 1;
    }
    return n;
}

static const char *verdict_word(grant_sbpl_verdict v)
{
    return v == GRANT_SBPL_ALLOW ? "allow" : v == GRANT_SBPL_DENY ? "deny" : "undecided";
}

/* basename:line of an origin, so the table does not depend on the tree. */
static char *short_origin(const char *origin)
{
    const char *slash = strrchr(origin, '/');
    return gk_strdup(slash ? slash + 1 : origin);
}

/* ---- the oracle table ---------------------------------------------------------- */

START_TEST(test_table)
{
    gk_autofree char *path = data("table.tsv");
    gk_autofree char *text = gk_test_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    gk_buf bad = {0};
    size_t rows = 0, nbad = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0])
            continue;
        char *f[8];
        gk_autofree char *copy = gk_strdup(line);
        ck_assert_msg(split(line, '\t', f, 8) == 7, "bad table row: %s", copy);
        const char *profile = f[0], *params = f[1], *op = f[2], *arg = f[3], *vnode = f[4],
                   *want_verdict = f[5], *want_origin = f[6];
        gk_strvec pv = {0};
        if (strcmp(params, "-") != 0) {
            gk_autofree char *pc = gk_strdup(params);
            char *ps = NULL;
            for (char *p = strtok_r(pc, ",", &ps); p; p = strtok_r(NULL, ",", &ps))
                gk_strvec_push(&pv, p);
        }
        gk_autofree char *rel = gk_printf("profiles/%s", profile);
        gk_autofree char *file = data(rel);
        grant_diags *d = grant_diags_new();
        grant_sbpl *s = NULL;
        int rc = grant_sbpl_read(file, (const char *const *)pv.v, pv.n, 0, d, &s);
        if (rc != 0) {
            gk_autofree char *msg = gk_test_render_diags(d);
            ck_abort_msg("%s does not read:\n%s", profile, msg);
        }
        grant_sbpl_answer *a = NULL;
        rc = grant_sbpl_eval(s, op, strcmp(arg, "-") ? arg : NULL,
                             strcmp(vnode, "-") ? vnode : NULL, d, &a);
        if (rc != 0) {
            gk_autofree char *msg = gk_test_render_diags(d);
            ck_abort_msg("row '%s': eval failed (%d):\n%s", copy, rc, msg);
        }
        const char *got_verdict = verdict_word(grant_sbpl_answer_verdict(a));
        gk_autofree char *got_origin = short_origin(grant_sbpl_answer_origin(a));
        if (strcmp(got_verdict, want_verdict) != 0 || strcmp(got_origin, want_origin) != 0) {
            gk_buf_printf(&bad, "  %s\n    want %s %s, got %s %s: %s\n", copy, want_verdict,
                          want_origin, got_verdict, got_origin, grant_sbpl_answer_rule(a));
            nbad++;
        }
        rows++;
        grant_sbpl_answer_free(a);
        grant_sbpl_free(s);
        grant_diags_free(d);
        gk_strvec_free(&pv);
    }
    ck_assert_uint_ge(rows, 120);
    if (nbad) {
        /* Every row on stdout; Check's message holds only the start. */
        printf("table rows that differ:\n%s", bad.data);
        fflush(stdout);
        bad.data[bad.len > 3000 ? 3000 : bad.len] = '\0';
    }
    ck_assert_msg(nbad == 0, "%zu of %zu table rows differ:\n%s", nbad, rows,
                  bad.data ? bad.data : "");
    gk_buf_free(&bad);
}
END_TEST

/* ---- goldens: errors and lint ---------------------------------------------------- */

/* Every NAME.sb of dir, by bare name (chdir into dir, so diagnostics do
 * not depend on where the tree is). */
static gk_strvec bare_files(const char *dir)
{
    gk_strvec all = gk_test_files(dir, ".sb");
    gk_strvec out = {0};
    for (size_t i = 0; i < all.n; i++)
        gk_strvec_push(&out, all.v[i] + strlen(dir) + 1);
    gk_strvec_free(&all);
    ck_assert_int_eq(chdir(dir), 0);
    return out;
}

START_TEST(test_errors)
{
    gk_autofree char *dir = data("errors");
    gk_strvec files = bare_files(dir);
    ck_assert_uint_ge(files.n, 10);
    for (size_t i = 0; i < files.n; i++) {
        const char *params[] = {"HOME=/Users/u"};
        grant_diags *d = grant_diags_new();
        grant_sbpl *s = NULL;
        int rc = grant_sbpl_read(files.v[i], params, 1, 0, d, &s);
        ck_assert_msg(rc == -EPROTO, "%s: read returned %d, want -EPROTO", files.v[i], rc);
        ck_assert_ptr_null(s);
        ck_assert_uint_ge(grant_diags_errors(d), 1);
        gk_autofree char *got = gk_test_render_diags(d);
        gk_autofree char *stem = gk_strndup(files.v[i], strlen(files.v[i]) - 3);
        gk_autofree char *gpath = gk_printf("%s/%s.err", dir, stem);
        gk_autofree char *body = gk_printf("%s\n", got);
        gk_test_golden_text(gpath, body);
        grant_diags_free(d);
    }
    gk_strvec_free(&files);
}
END_TEST

START_TEST(test_lint)
{
    gk_autofree char *dir = data("lint");
    gk_strvec files = bare_files(dir);
    ck_assert_uint_ge(files.n, 3);
    bool some_clean = false, some_findings = false;
    for (size_t i = 0; i < files.n; i++) {
        grant_diags *d = grant_diags_new();
        grant_sbpl *s = NULL;
        int rc = grant_sbpl_read(files.v[i], NULL, 0, 0, d, &s);
        if (rc != 0) {
            gk_autofree char *msg = gk_test_render_diags(d);
            ck_abort_msg("%s does not read:\n%s", files.v[i], msg);
        }
        grant_diags *f = grant_diags_new();
        size_t n = grant_sbpl_lint(s, f);
        ck_assert_uint_eq(n, grant_diags_count(f));
        /* The stable id is a field, not message text; rendered before it. */
        for (size_t k = 0; k < n; k++) {
            const char *id = grant_diags_id(f, k);
            const char *msg = grant_diags_message(f, k);
            ck_assert_msg(id && strlen(id) == 5 && gk_has_prefix(id, "SB"), "%s: finding %zu id",
                          files.v[i], k);
            ck_assert_msg(!gk_has_prefix(msg, "SB"), "%s: id in message '%s'", files.v[i], msg);
            gk_autofree char *text = grant_diags_render(f, k);
            gk_autofree char *want = gk_printf(": %s %s", id, msg);
            ck_assert_msg(strstr(text, want), "%s: render '%s'", files.v[i], text);
        }
        some_clean |= n == 0;
        some_findings |= n > 0;
        gk_autofree char *got = gk_test_render_diags(f);
        gk_autofree char *stem = gk_strndup(files.v[i], strlen(files.v[i]) - 3);
        gk_autofree char *gpath = gk_printf("%s/%s.lint", dir, stem);
        gk_autofree char *body = gk_printf("%s%s", got, n ? "\n" : "");
        gk_test_golden_text(gpath, body);
        grant_diags_free(f);
        grant_sbpl_free(s);
        grant_diags_free(d);
    }
    ck_assert(some_clean && some_findings);
    gk_strvec_free(&files);
}
END_TEST

/* Every id the linter has, at least once across the lint goldens. */
START_TEST(test_lint_ids)
{
    gk_autofree char *dir = data("lint");
    gk_strvec files = gk_test_files(dir, ".lint");
    gk_buf all = {0};
    for (size_t i = 0; i < files.n; i++) {
        size_t len = 0;
        gk_autofree char *t = gk_test_read(files.v[i], &len);
        if (t)
            gk_buf_add(&all, t, len); /* by length: an empty file's buffer is not terminated */
    }
    static const char *const ids[] = {"SB001 shadowed", "SB002 operand-less-allow",
                                      "SB003 allow-default", "SB004 unanchored-regex",
                                      "SB005 unresolved-param", "SB006 unresolved-import",
                                      "SB007 no-default", "SB008 unseen-path"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++)
        ck_assert_msg(all.data && strstr(all.data, ids[i]), "no lint golden shows %s", ids[i]);
    gk_buf_free(&all);
    gk_strvec_free(&files);
}
END_TEST

/* ---- semantics beyond the table ---------------------------------------------------- */

static grant_sbpl *read_text(const char *text, const char *const *params, size_t n)
{
    grant_diags *d = grant_diags_new();
    grant_sbpl *s = NULL;
    int rc = grant_sbpl_read_buffer("t.sb", text, strlen(text), params, n, GRANT_SBPL_NO_IMPORT,
                                    d, &s);
    if (rc != 0) {
        gk_autofree char *msg = gk_test_render_diags(d);
        ck_abort_msg("does not read (%d):\n%s\n%s", rc, text, msg);
    }
    grant_diags_free(d);
    return s;
}

/* "verdict origin" of one query. */
static char *ask(const grant_sbpl *s, const char *op, const char *arg)
{
    grant_sbpl_answer *a = NULL;
    ck_assert_int_eq(grant_sbpl_eval(s, op, arg, NULL, NULL, &a), 0);
    char *r = gk_printf("%s %s", verdict_word(grant_sbpl_answer_verdict(a)),
                        grant_sbpl_answer_origin(a));
    grant_sbpl_answer_free(a);
    return r;
}

#define ASK(s, op, arg, want)                                                                 \
    do {                                                                                      \
        gk_autofree char *got_ = ask(s, op, arg);                                             \
        ck_assert_msg(strcmp(got_, want) == 0, "%s %s: got '%s', want '%s'", op, arg ? arg : "", \
                      got_, want);                                                            \
    } while (0)

START_TEST(test_regex_anchoring)
{
    grant_sbpl *s = read_text("(version 1)\n(allow default)\n"
                              "(deny file-read* (regex #\"/\\.env$\"))\n"
                              "(deny file-read* (regex #\"^/opt/\"))\n"
                              "(deny file-read* (regex #\"secret\"))\n"
                              "(deny file-read* (regex \"^/srv/[a-z]+$\"))\n",
                              NULL, 0);
    ASK(s, "file-read-data", "/a/b/.env", "deny t.sb:3");    /* any depth */
    ASK(s, "file-read-data", "/a/b/.envrc", "allow t.sb:2"); /* $ anchors the end */
    ASK(s, "file-read-data", "/a/x.env", "allow t.sb:2");    /* the / is part of it */
    ASK(s, "file-read-data", "/opt/x", "deny t.sb:4");
    ASK(s, "file-read-data", "/x/opt/x", "allow t.sb:2");     /* ^ anchors the start */
    ASK(s, "file-read-data", "/home/mysecrets", "deny t.sb:5"); /* a bare word anywhere */
    ASK(s, "file-read-data", "/srv/www", "deny t.sb:6");      /* a string regex */
    ASK(s, "file-read-data", "/srv/www/x", "allow t.sb:2");
    grant_sbpl_free(s);
}
END_TEST

START_TEST(test_hierarchy)
{
    grant_sbpl *s = read_text("(version 1)\n(deny default)\n"
                              "(allow file*)\n"
                              "(deny file-read-metadata (literal \"/x\"))\n"
                              "(allow process*)\n"
                              "(deny process-exec-interpreter)\n"
                              "(allow network*)\n"
                              "(deny file-unlink (literal \"/y\"))\n",
                              NULL, 0);
    ASK(s, "file-read-data", "/x", "allow t.sb:3");
    ASK(s, "file-read-metadata", "/x", "deny t.sb:4");
    ASK(s, "file-write-times", "/x", "allow t.sb:3");
    ASK(s, "file-link", "/x", "allow t.sb:3");
    ASK(s, "process-exec", "/bin/ls", "allow t.sb:5");
    ASK(s, "process-exec*", "/bin/ls", "deny t.sb:6"); /* a '*' asks every leaf */
    ASK(s, "process-fork", NULL, "allow t.sb:5");
    ASK(s, "network-bind", "localhost:1", "allow t.sb:7");
    ASK(s, "file-write-unlink", "/y", "deny t.sb:8"); /* file-unlink is its alias */
    ASK(s, "mach-lookup", "com.apple.x", "deny t.sb:2");
    ASK(s, "file-read*", "/x", "deny t.sb:4");
    /* The leaf that decided a '*' query is named. */
    grant_sbpl_answer *a = NULL;
    ck_assert_int_eq(grant_sbpl_eval(s, "file-read*", "/x", NULL, NULL, &a), 0);
    ck_assert_str_eq(grant_sbpl_answer_operation(a), "file-read-metadata");
    ck_assert_uint_eq(grant_sbpl_answer_line(a), 4);
    gk_autofree char *json = grant_sbpl_answer_json(a);
    ck_assert_str_eq(json, "{\"line\":4,\"note\":null,\"operation\":\"file-read-metadata\","
                           "\"origin\":\"t.sb:4\",\"rule\":\"(deny file-read-metadata (literal "
                           "\\\"/x\\\"))\",\"verdict\":\"deny\"}");
    grant_sbpl_answer_free(a);
    grant_sbpl_free(s);
}
END_TEST

START_TEST(test_params_and_procedures)
{
    const char *params[] = {"ROOT=/first", "ROOT=/w", "EMPTY="};
    grant_sbpl *s = read_text("(version 1)\n(deny default)\n"
                              "(define (rw p)\n  (allow file-read* file-write* (subpath p)))\n"
                              "(rw (param \"ROOT\"))\n"
                              "(rw (string-append (param \"ROOT\") \"-cache\"))\n"
                              "(if (param \"MISSING\") (allow file*) (deny file-link))\n"
                              "(when (param \"EMPTY\") (allow file-read* (literal \"/e\")))\n"
                              "(deny file-write* (regex (string-append \"^\" (regex-quote "
                              "(param \"ROOT\")) \"/\\\\.git(/|$)\")))\n",
                              params, 3);
    ASK(s, "file-write-data", "/w/a", "allow t.sb:5"); /* the last -D wins; call site */
    ASK(s, "file-write-data", "/w-cache/a", "allow t.sb:6");
    ASK(s, "file-write-data", "/first/a", "deny t.sb:2");
    ASK(s, "file-link", "/w/a", "deny t.sb:7");
    ASK(s, "file-read-data", "/e", "allow t.sb:8"); /* "" is true in Scheme */
    ASK(s, "file-write-data", "/w/.git/config", "deny t.sb:9");
    ASK(s, "file-write-data", "/w/x/.git/config", "allow t.sb:5");
    grant_sbpl_answer *a = NULL;
    ck_assert_int_eq(grant_sbpl_eval(s, "file-write-data", "/w/a", NULL, NULL, &a), 0);
    ck_assert_str_eq(grant_sbpl_answer_rule(a), "(allow file-read* file-write* (subpath p))");
    ck_assert_str_eq(grant_sbpl_answer_note(a), "the rule at t.sb:4, in a procedure called here");
    grant_sbpl_answer_free(a);
    grant_sbpl_free(s);
}
END_TEST

START_TEST(test_bad_queries)
{
    grant_sbpl *s = read_text("(version 1)\n(deny default)\n", NULL, 0);
    grant_diags *d = grant_diags_new();
    grant_sbpl_answer *a = NULL;
    ck_assert_int_eq(grant_sbpl_eval(s, "file-red-data", "/x", NULL, d, &a), -EINVAL);
    ck_assert_int_eq(grant_sbpl_eval(s, "default", NULL, NULL, d, &a), -EINVAL);
    ck_assert_int_eq(grant_sbpl_eval(s, "file-read-data", NULL, NULL, d, &a), -EINVAL);
    ck_assert_int_eq(grant_sbpl_eval(s, "file-read-data", "rel/x", NULL, d, &a), -EINVAL);
    ck_assert_int_eq(grant_sbpl_eval(s, "network-outbound", "nohostport", NULL, d, &a), -EINVAL);
    ck_assert_int_eq(grant_sbpl_eval(s, "file-read-data", "/x", "PIPE", d, &a), -EINVAL);
    ck_assert_ptr_null(a);
    ck_assert_uint_eq(grant_diags_errors(d), 6);
    gk_autofree char *msg = gk_test_render_diags(d);
    ck_assert_msg(strstr(msg, "did you mean 'file-read-data'?"), "%s", msg);
    grant_diags_free(d);
    grant_sbpl_free(s);
}
END_TEST

START_TEST(test_imports)
{
    gk_autofree char *dir = data("profiles");
    ck_assert_int_eq(chdir(dir), 0);
    /* Relative to the importing file, or off: then unresolved. */
    grant_diags *d = grant_diags_new();
    grant_sbpl *s = NULL;
    const char *t0 = "(version 1)\n(deny default)\n(import \"common.sb\")\n"
                     "(allow file-read* (subpath \"/usr\"))\n";
    ck_assert_int_eq(
        grant_sbpl_read_buffer("t.sb", t0, strlen(t0), NULL, 0, GRANT_SBPL_NO_IMPORT, d, &s), 0);
    ck_assert_uint_eq(grant_diags_errors(d), 0);
    gk_autofree char *w = gk_test_render_diags(d);
    ck_assert_msg(strstr(w, "import \"common.sb\" was not read (imports are off)"), "%s", w);
    ASK(s, "file-read-data", "/dev/null", "undecided t.sb:3");
    ASK(s, "file-read-data", "/usr/lib/x", "allow t.sb:4");
    ASK(s, "process-fork", NULL, "undecided t.sb:3");
    grant_sbpl_free(s);
    grant_diags_free(d);
    /* A procedure the missing import would define: an error that says so. */
    d = grant_diags_new();
    ck_assert_int_eq(grant_sbpl_read("dev.sb", NULL, 0, GRANT_SBPL_NO_IMPORT, d, &s), -EPROTO);
    gk_autofree char *e = gk_test_render_diags(d);
    ck_assert_msg(strstr(e, "unknown procedure or filter 'read-only-root'") &&
                      strstr(e, "the import at dev.sb:5 was not resolved"),
                  "%s", e);
    grant_sbpl_free(s);
    grant_diags_free(d);
    /* IMPORT_DIR, as sandbox-exec: a name not beside the profile. */
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *text = gk_strdup("(version 1)\n(deny default)\n(import \"common.sb\")\n");
    gk_autofree char *idir = gk_printf("IMPORT_DIR=%s", dir);
    const char *params[] = {idir};
    d = grant_diags_new();
    ck_assert_int_eq(
        grant_sbpl_read_buffer("/nonexistent/t.sb", text, strlen(text), params, 1, 0, d, &s), 0);
    ck_assert_uint_eq(grant_diags_count(d), 0);
    grant_sbpl_answer *a = NULL;
    ck_assert_int_eq(grant_sbpl_eval(s, "file-read-data", "/dev/null", NULL, NULL, &a), 0);
    ck_assert_int_eq(grant_sbpl_answer_verdict(a), GRANT_SBPL_ALLOW);
    ck_assert_msg(gk_has_suffix(grant_sbpl_answer_origin(a), "/common.sb:8"), "%s",
                  grant_sbpl_answer_origin(a));
    grant_sbpl_answer_free(a);
    grant_sbpl_free(s);
    grant_diags_free(d);
}
END_TEST

/* Same text, same answers and the same lint, byte for byte. */
START_TEST(test_deterministic)
{
    gk_autofree char *path = data("profiles/mixed.sb");
    gk_autofree char *first = NULL;
    for (int round = 0; round < 2; round++) {
        grant_diags *d = grant_diags_new();
        grant_sbpl *s = NULL;
        ck_assert_int_eq(grant_sbpl_read(path, NULL, 0, 0, d, &s), 0);
        grant_diags *f = grant_diags_new();
        grant_sbpl_lint(s, f);
        gk_autofree char *r = gk_test_render_diags(f);
        if (!first)
            first = gk_strdup(r);
        else
            ck_assert_str_eq(first, r);
        grant_diags_free(f);
        grant_sbpl_free(s);
        grant_diags_free(d);
    }
}
END_TEST

/* ---- the CLI ------------------------------------------------------------------------- */

static int grantc(char *const *args, const char *in, char **out, char **err)
{
    gk_autofree char *bin = gk_path_join(gk_test_builddir(), "grantc");
    char *argv[32] = {bin};
    size_t n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    return gk_test_run(argv, in, out, err);
}

START_TEST(test_cli)
{
    gk_autofree char *dir = data("profiles");
    ck_assert_int_eq(chdir(dir), 0);
    char *out = NULL, *err = NULL;
    /* allow 0, deny 1, undecided 2 */
    char *a1[] = {"sbpl", "eval", "mixed.sb", "file-read-data", "/etc/hosts", NULL};
    ck_assert_int_eq(grantc(a1, NULL, &out, &err), 0);
    ck_assert_str_eq(out, "allow file-read-data /etc/hosts\n  by mixed.sb:4: (allow default)\n");
    free(out), free(err);
    char *a2[] = {"sbpl", "eval", "mixed.sb", "file-read-data", "/k/a.pem", NULL};
    ck_assert_int_eq(grantc(a2, NULL, &out, &err), 1);
    ck_assert_str_eq(out, "deny file-read-data /k/a.pem\n"
                          "  by mixed.sb:9: (deny file-read* (regex #\"\\.pem$\"))\n");
    free(out), free(err);
    char *a3[] = {"sbpl", "eval", "agent.sb", "file-read-data", "/usr/lib/x", NULL};
    ck_assert_int_eq(grantc(a3, NULL, &out, &err), 2);
    ck_assert_msg(strstr(out, "undecided file-read-data /usr/lib/x\n  at agent.sb:47"), "%s", out);
    ck_assert_msg(strstr(err, "warning: param \"HOME\" has no value"), "%s", err);
    free(out), free(err);
    char *a4[] = {"sbpl", "eval", "-D", "HOME=/Users/u", "-D", "WRITABLE_ROOT_0=/w", "-D",
                  "WRITABLE_ROOT_1=/v", "agent.sb", "--format", "json", "file-write-data",
                  "/w/.git/x", NULL};
    ck_assert_int_eq(grantc(a4, NULL, &out, &err), 1);
    ck_assert_str_eq(out, "{\"answer\":{\"line\":43,\"note\":null,\"operation\":\"file-write-"
                          "data\",\"origin\":\"agent.sb:43\",\"rule\":\"(deny file-write* (regex "
                          "#\\\"/\\\\.git(/|$)\\\"))\",\"verdict\":\"deny\"},\"query\":{"
                          "\"argument\":\"/w/.git/x\",\"operation\":\"file-write-data\"}}\n");
    free(out), free(err);
    /* --queries: one per line, the worst status wins */
    char *a5[] = {"sbpl", "eval", "mixed.sb", "--queries", "-", NULL};
    ck_assert_int_eq(grantc(a5, "# q\nfile-read-data /etc/hosts\n\nprocess-exec /usr/bin/sudo\n"
                                "file-read-data /my dir/a b\n",
                            &out, &err),
                     1);
    ck_assert_str_eq(out, "allow file-read-data /etc/hosts\n  by mixed.sb:4: (allow default)\n"
                          "deny process-exec /usr/bin/sudo\n"
                          "  by mixed.sb:13: (deny process-exec (literal \"/usr/bin/sudo\") "
                          "(literal \"/usr/bin/su\"))\n"
                          "allow file-read-data /my dir/a b\n  by mixed.sb:4: (allow default)\n");
    free(out), free(err);
    ck_assert_int_eq(grantc(a5, "bogus-op /x\n", &out, &err), 2);
    ck_assert_msg(strstr(err, "unknown operation"), "%s", err);
    free(out), free(err);
    /* lint: 0 clean, 1 findings, 2 errors */
    gk_autofree char *clean = data("lint/clean.sb");
    char *l1[] = {"sbpl", "lint", clean, NULL};
    ck_assert_int_eq(grantc(l1, NULL, &out, &err), 0);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    char *l2[] = {"sbpl", "lint", "--format", "json", "nodefault.sb", NULL};
    ck_assert_int_eq(grantc(l2, NULL, &out, &err), 1);
    ck_assert_str_eq(out, "[{\"id\":\"SB007\",\"location\":\"nodefault.sb:1:1\",\"message\":"
                          "\"no-default: the profile has no (deny default) or (allow default): "
                          "whatever no rule matches is allowed\",\"severity\":\"warning\"}]\n");
    free(out), free(err);
    gk_autofree char *bad = data("errors/unknown-op.sb");
    char *l3[] = {"sbpl", "lint", bad, NULL};
    ck_assert_int_eq(grantc(l3, NULL, &out, &err), 2);
    ck_assert_msg(strstr(err, "error: unknown operation or name"), "%s", err);
    free(out), free(err);
    char *u1[] = {"sbpl", "eval", "mixed.sb", NULL};
    ck_assert_int_eq(grantc(u1, NULL, &out, &err), 2);
    free(out), free(err);
    char *u2[] = {"sbpl", "frob", NULL};
    ck_assert_int_eq(grantc(u2, NULL, &out, &err), 2);
    free(out), free(err);
    char *u3[] = {"sbpl", "eval", "missing.sb", "file-read-data", "/x", NULL};
    ck_assert_int_eq(grantc(u3, NULL, &out, &err), 2);
    ck_assert_msg(strstr(err, "missing.sb: error: cannot read"), "%s", err);
    free(out), free(err);
}
END_TEST

/* ---- the conservatism invariant, differentially ------------------------------------------ */

static grant_context *ctx_macos(bool implicit)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/Users/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/Users/u/proj"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin:/usr/local/bin"), 0);
    ck_assert_int_eq(grant_context_set_implicit(ctx, implicit), 0);
    gk_autofree char *pp1 = gk_test_path("tests/data/policy-path");
    gk_autofree char *pp2 = gk_test_path("policies");
    gk_autofree char *pp = gk_printf("%s:%s", pp1, pp2);
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    return ctx;
}

/* Every policy the differential covers: the bundled ones and every grant
 * file of the tests (each tests/data/<suite>/ may hold some). */
static gk_strvec all_policies(void)
{
    gk_strvec v = {0};
    gk_autofree char *pol = gk_test_path("policies");
    gk_autofree char *tests = gk_test_path("tests/data");
    const char *dirs[] = {pol, tests};
    const char *sufs[] = {".grant", ".yaml", ".yml"};
    for (size_t d = 0; d < 2; d++)
        for (size_t s = 0; s < 3; s++) {
            gk_strvec f = gk_test_files(dirs[d], sufs[s]);
            for (size_t i = 0; i < f.n; i++)
                gk_strvec_push(&v, f.v[i]);
            gk_strvec_free(&f);
        }
    gk_strvec_sort_unique(&v);
    return v;
}

static void add_path_family(gk_strvec *q, const char *p)
{
    if (!p || p[0] != '/')
        return;
    gk_strvec_push(q, p);
    gk_strvec_push_take(q, gk_path_join(p, "gk-child"));
    gk_strvec_push_take(q, gk_path_join(p, ".git/config"));
    if (strcmp(p, "/") != 0) {
        gk_strvec_push_take(q, gk_printf("%s-sib", p));
        gk_strvec_push_take(q, gk_printf("%sx", p));
    }
    /* parents, and a sibling under each */
    for (char *a = gk_path_parent(p); a; ) {
        gk_strvec_push(q, a);
        gk_strvec_push_take(q, gk_path_join(a, "gk-sibling"));
        char *up = gk_path_parent(a);
        free(a);
        a = up;
    }
    /* the firmlink twin: /tmp <-> /private/tmp (and /var, /etc) */
    static const char *const fl[] = {"/tmp", "/var", "/etc"};
    for (size_t i = 0; i < 3; i++) {
        gk_autofree char *priv = gk_printf("/private%s", fl[i]);
        if (gk_path_within(p, fl[i]))
            gk_strvec_push_take(q, gk_printf("/private%s", p));
        else if (gk_path_within(p, priv))
            gk_strvec_push(q, p + strlen("/private"));
    }
}

static void add_regions(gk_strvec *q, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        add_path_family(q, r->v[i].p.path);
        add_path_family(q, r->v[i].p.real);
    }
}

/* tests/data/sbpl/known-violations.tsv: violations that are known (a spec
 * disagreement or an open emitter bug), each with the number of times it
 * was seen, so stale entries fail too. */
typedef struct known {
    gk_strvec policy, query;
    size_t *seen;
} known;

typedef struct diffstat {
    size_t queries, violations, over, known_hits;
    gk_buf report;    /* violations: fail */
    gk_buf findings;  /* over-restrictions: printed */
    gk_buf knowns;    /* known violations: printed */
    known *known;
} diffstat;

static void load_known(known *k)
{
    memset(k, 0, sizeof(*k));
    gk_autofree char *path = data("known-violations.tsv");
    gk_autofree char *text = gk_test_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0])
            continue;
        char *tab = strchr(line, '\t');
        ck_assert_msg(tab, "known-violations.tsv: no tab in '%s'", line);
        *tab = '\0';
        gk_strvec_push(&k->policy, line);
        gk_strvec_push(&k->query, tab + 1);
    }
    k->seen = gk_calloc(k->policy.n + 1, sizeof(size_t));
}

/* Is this violation listed? The policy name without " (no-implicit)". */
static bool is_known(known *k, const char *policy, const char *what)
{
    if (!k)
        return false;
    size_t plen = strcspn(policy, " ");
    for (size_t i = 0; i < k->policy.n; i++) {
        const char *kp = k->policy.v[i];
        bool pol = strcmp(kp, "*") == 0 || (strlen(kp) == plen && strncmp(kp, policy, plen) == 0);
        if (pol && strcmp(k->query.v[i], what) == 0) {
            k->seen[i]++;
            return true;
        }
    }
    return false;
}

static int sbpl_says(const grant_sbpl *s, const char *op, const char *arg, char **why)
{
    grant_sbpl_answer *a = NULL;
    grant_diags *d = grant_diags_new();
    int rc = grant_sbpl_eval(s, op, arg, NULL, d, &a);
    if (rc != 0) {
        gk_autofree char *m = gk_test_render_diags(d);
        ck_abort_msg("eval %s %s: %s", op, arg, m);
    }
    grant_diags_free(d);
    int v = grant_sbpl_answer_verdict(a);
    if (why)
        *why = gk_printf("%s %s", grant_sbpl_answer_origin(a), grant_sbpl_answer_rule(a));
    grant_sbpl_answer_free(a);
    return v;
}

/* Compare one query: allowed is the profile's answer, gate the gate's. */
static void judge(diffstat *st, const char *policy, const char *what, int sb, const char *sbwhy,
                  bool gate, const char *gatewhy)
{
    st->queries++;
    if (sb == GRANT_SBPL_UNDECIDED) {
        st->violations++;
        gk_buf_printf(&st->report, "  %s: %s: the profile is undecided (%s)\n", policy, what,
                      sbwhy);
    } else if (sb == GRANT_SBPL_ALLOW && !gate && is_known(st->known, policy, what)) {
        st->known_hits++;
        gk_buf_printf(&st->knowns, "  %s: %s: profile allows (%s), gate denies (%s)\n", policy,
                      what, sbwhy, gatewhy);
    } else if (sb == GRANT_SBPL_ALLOW && !gate) {
        st->violations++;
        gk_buf_printf(&st->report, "  %s: %s: profile allows (%s), gate denies (%s)\n", policy,
                      what, sbwhy, gatewhy);
    } else if (sb == GRANT_SBPL_DENY && gate) {
        st->over++;
        gk_buf_printf(&st->findings, "  %s: %s: gate allows, profile denies (%s)\n", policy,
                      what, sbwhy);
    }
}

static const char *const read_ops[] = {"file-read-data", "file-read-xattr"};
static const char *const write_ops[] = {
    "file-write-data",  "file-write-create", "file-write-unlink", "file-write-mode",
    "file-write-owner", "file-write-flags",  "file-write-times",  "file-write-xattr",
    "file-write-acl",   "file-write-setugid", "file-write-finderinfo"};

/* sbpl-params with its -D values must answer like sbpl, query by query. */
static void same_answers(diffstat *st, const char *policy, const grant_sbpl *s,
                         const grant_sbpl *sp, const char *op, const char *arg)
{
    if (!sp)
        return;
    gk_autofree char *w1 = NULL, *w2 = NULL;
    int a = sbpl_says(s, op, arg, &w1), b = sbpl_says(sp, op, arg, &w2);
    if (a != b) {
        st->violations++;
        gk_buf_printf(&st->report, "  %s: %s %s: sbpl says %s (%s), sbpl-params %s (%s)\n",
                      policy, op, arg, verdict_word(a), w1, verdict_word(b), w2);
    }
}

static void check_fs(diffstat *st, const char *policy, const grant_policy *p, const grant_sbpl *s,
                     const grant_sbpl *sp, const char *path)
{
    same_answers(st, policy, s, sp, "file-read-data", path);
    same_answers(st, policy, s, sp, "file-write-data", path);
    for (int op = 0; op < 2; op++) {
        grant_verdict *v = NULL;
        /* The kernel hands Seatbelt the resolved path: the gate answers on
         * the same resolution (offline: the macOS alias table). */
        ck_assert_int_eq(grant_check_fs(p, op ? GRANT_OP_WRITE : GRANT_OP_READ, path, "/", &v), 0);
        bool gate = grant_verdict_answer(v) == GRANT_ALLOWED;
        gk_autofree char *gatewhy =
            gk_printf("%s: %s", grant_verdict_origin(v), grant_verdict_rule(v));
        const char *const *ops = op ? write_ops : read_ops;
        size_t nops = op ? sizeof(write_ops) / sizeof(*write_ops) : 2;
        /* The profile's answer: allowed if any operation of the kind is. */
        int sb = GRANT_SBPL_DENY;
        gk_autofree char *sbwhy = NULL;
        for (size_t i = 0; i < nops; i++) {
            char *why = NULL;
            int r = sbpl_says(s, ops[i], path, &why);
            if (r == GRANT_SBPL_ALLOW || r == GRANT_SBPL_UNDECIDED || !sbwhy) {
                bool take = !sbwhy || (r != GRANT_SBPL_DENY && sb == GRANT_SBPL_DENY);
                if (take) {
                    free(sbwhy);
                    sbwhy = gk_printf("%s: %s", ops[i], why);
                    sb = r;
                }
            }
            free(why);
        }
        gk_autofree char *what = gk_printf("%s %s", op ? "write" : "read", path);
        judge(st, policy, what, sb, sbwhy, gate, gatewhy);
        grant_verdict_free(v);
    }
}

/* The spelling of c under its firmlinked root (/private/tmp/x -> /tmp/x),
 * or NULL. */
static char *firmlink_twin(const char *c)
{
    static const char *const fl[] = {"/private/tmp", "/private/var", "/private/etc"};
    for (size_t i = 0; i < 3; i++)
        if (gk_path_within(c, fl[i]))
            return gk_strdup(c + strlen("/private"));
    return NULL;
}

/* Does the gate admit the file Seatbelt sees as c (canonical) for some
 * spelling that reaches it (c itself, its firmlink twin, or its bare name
 * when the PATH walk leads there) and some first argument a layer names? */
static bool gate_admits(const grant_policy *p, const char *c, const gk_strvec *argv1s,
                        char **why)
{
    gk_autofree char *twin = firmlink_twin(c);
    const char *base = gk_basename(c);
    char *w = NULL, *wc = NULL;
    gk_walk_head(p->ctx, base, NULL, NULL, &w, &wc);
    bool walks_here = w && (strcmp(w, c) == 0 || (twin && strcmp(w, twin) == 0));
    struct {
        const char *spelling, *walked;
    } sp[3] = {{c, c}, {twin, twin}, {walks_here ? base : NULL, w}};
    bool ok = false;
    for (int k = 0; k < 3 && !ok; k++) {
        if (!sp[k].spelling)
            continue;
        for (size_t i = 0; i <= argv1s->n && !ok; i++) {
            grant_exec_query q = {sp[k].spelling, sp[k].walked, c,
                                  i < argv1s->n ? argv1s->v[i] : NULL};
            grant_verdict *v = NULL;
            ck_assert_int_eq(grant_check_exec_query(p, &q, &v), 0);
            ok = grant_verdict_answer(v) != GRANT_DENIED;
            if (!*why || ok) {
                free(*why);
                *why = gk_printf("%s: %s", grant_verdict_origin(v), grant_verdict_rule(v));
            }
            grant_verdict_free(v);
        }
    }
    free(w);
    free(wc);
    return ok;
}

/* The files Seatbelt could be asked to exec (canonical paths): every
 * named file, every name in every PATH dir and admitted or vetoed dir, a
 * fresh name in each dir; never a dir itself (exec of a directory fails in
 * the kernel before any profile is asked). */
static void collect_exec(const grant_policy *p, const gk_projection *pr, gk_strvec *files,
                         gk_strvec *argv1s)
{
    gk_strvec names = {0}, dirs = {0}, raw = {0};
    static const char *const probes[] = {"sh", "bash", "zsh", "git", "python", "python3",
                                         "python3.12", "node", "gk-unlisted", "sudo"};
    for (size_t i = 0; i < sizeof(probes) / sizeof(*probes); i++)
        gk_strvec_push(&names, probes[i]);
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        const gk_exec_dim *x = &f->exec;
        for (size_t i = 0; i < x->names.n; i++) {
            gk_strvec_push(&names, x->names.v[i].key);
            gk_strvec_copy(argv1s, &x->names.v[i].subs);
        }
        for (size_t i = 0; i < x->files.n; i++) {
            gk_strvec_push(&raw, x->files.v[i].key);
            gk_strvec_push(&names, gk_basename(x->files.v[i].key));
            gk_strvec_copy(argv1s, &x->files.v[i].subs);
        }
        for (size_t i = 0; i < x->dirs.n; i++)
            gk_strvec_push(&dirs, x->dirs.v[i].key);
        for (size_t i = 0; i < x->veto_names.n; i++)
            gk_strvec_push(&names, x->veto_names.v[i].key);
        for (size_t i = 0; i < x->veto_files.n; i++) {
            gk_strvec_push(&raw, x->veto_files.v[i].key);
            gk_strvec_push(&names, gk_basename(x->veto_files.v[i].key));
        }
        for (size_t i = 0; i < x->veto_dirs.n; i++)
            gk_strvec_push(&dirs, x->veto_dirs.v[i].key);
    }
    gk_autofree char *path = gk_strdup(p->ctx->path ? p->ctx->path : "");
    char *save = NULL;
    for (char *d = strtok_r(path, ":", &save); d; d = strtok_r(NULL, ":", &save))
        gk_strvec_push(&dirs, d);
    gk_strvec_sort_unique(&dirs);
    for (size_t i = 0; i < pr->exec_admit.n; i++)
        if (!gk_strvec_bsearch(&dirs, pr->exec_admit.v[i]))
            gk_strvec_push(&raw, pr->exec_admit.v[i]);
    for (size_t i = 0; i < pr->exec_veto.n; i++)
        if (!gk_strvec_bsearch(&dirs, pr->exec_veto.v[i]))
            gk_strvec_push(&raw, pr->exec_veto.v[i]);
    gk_strvec_sort_unique(&names);
    for (size_t d = 0; d < dirs.n; d++) {
        gk_strvec_push_take(&raw, gk_path_join(dirs.v[d], "gk-probe"));
        for (size_t n = 0; n < names.n; n++)
            if (!strchr(names.v[n], '/'))
                gk_strvec_push_take(&raw, gk_path_join(dirs.v[d], names.v[n]));
    }
    /* What Seatbelt sees is the resolved path. */
    gk_strvec canon_dirs = {0};
    for (size_t d = 0; d < dirs.n; d++)
        gk_strvec_push_take(&canon_dirs, gk_canonicalize(p->ctx, dirs.v[d]));
    gk_strvec_sort_unique(&canon_dirs);
    for (size_t i = 0; i < raw.n; i++) {
        char *c = raw.v[i][0] == '/' ? gk_canonicalize(p->ctx, raw.v[i]) : NULL;
        if (c && !gk_strvec_bsearch(&canon_dirs, c))
            gk_strvec_push_take(files, c);
        else
            free(c);
    }
    gk_strvec_push(argv1s, "gk-any");
    gk_strvec_sort_unique(argv1s);
    gk_strvec_sort_unique(files);
    gk_strvec_free(&names);
    gk_strvec_free(&dirs);
    gk_strvec_free(&canon_dirs);
    gk_strvec_free(&raw);
}

/* The whole comparison for one policy and one profile text. */
/* A destination list's profile reaches only a proxy on localhost, whose
 * port is a parameter without a value (known when the proxy runs): the
 * differential gives it this one. */
#define PROXY_PORT_PARAM "PROXY_PORT=3128"
static const char *const proxy_params[] = {PROXY_PORT_PARAM};
static size_t n_proxy_params(const char *sbpl)
{
    return strstr(sbpl, "(param \"PROXY_PORT\")") ? 1 : 0;
}

static void differential(diffstat *st, const char *policy, const grant_policy *p,
                         const char *sbpl, size_t len, const grant_sbpl *sp)
{
    grant_diags *d = grant_diags_new();
    grant_sbpl *s = NULL;
    int rc = grant_sbpl_read_buffer(policy, sbpl, len, proxy_params, n_proxy_params(sbpl),
                                    GRANT_SBPL_NO_IMPORT, d, &s);
    if (rc != 0) {
        gk_autofree char *m = gk_test_render_diags(d);
        ck_abort_msg("%s: the emitted profile does not read:\n%s\n%s", policy, m, sbpl);
    }
    ck_assert_msg(grant_diags_count(d) == 0, "%s: reading the emitted profile warned", policy);
    grant_diags_free(d);

    gk_projection *pr = gk_projection_build(p);
    gk_strvec q = {0};
    add_regions(&q, &pr->read);
    add_regions(&q, &pr->write);
    add_regions(&q, &pr->readonly);
    add_regions(&q, &pr->deny);
    for (size_t i = 0; i < pr->pinned.n; i++)
        add_path_family(&q, pr->pinned.v[i]);
    for (size_t i = 0; i < pr->implicit.read.n; i++)
        add_path_family(&q, pr->implicit.read.v[i]);
    for (size_t i = 0; i < pr->implicit.write.n; i++)
        add_path_family(&q, pr->implicit.write.v[i]);
    for (size_t i = 0; i < pr->implicit.devices.n; i++)
        add_path_family(&q, pr->implicit.devices.v[i]);
    static const char *const fixed[] = {
        "/", "/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/ttys001",
        "/dev/ptmx", "/dev/fd/3", "/private/etc/passwd", "/Users/u/.ssh/id_ed25519",
        "/Users/u/proj/.git/hooks/pre-commit", "/Library/Keychains/login.keychain-db",
        "/private/var/folders/xy/T/x", "/opt/homebrew/bin/brew"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
        add_path_family(&q, fixed[i]);
    gk_strvec_sort_unique(&q);
    for (size_t i = 0; i < q.n; i++)
        check_fs(st, policy, p, s, sp, q.v[i]);

    gk_strvec files = {0}, argv1s = {0};
    collect_exec(p, pr, &files, &argv1s);
    for (size_t i = 0; i < files.n; i++) {
        gk_autofree char *gatewhy = NULL;
        bool gate = gate_admits(p, files.v[i], &argv1s, &gatewhy);
        gk_autofree char *sbwhy = NULL;
        same_answers(st, policy, s, sp, "process-exec", files.v[i]);
        int sb = sbpl_says(s, "process-exec", files.v[i], &sbwhy);
        gk_autofree char *what = gk_printf("exec %s", files.v[i]);
        judge(st, policy, what, sb, sbwhy, gate, gatewhy);
    }

    static const char *const addrs[] = {"tcp:93.184.216.34:443", "udp:8.8.8.8:53",
                                        "localhost:8080"};
    grant_verdict *v = NULL;
    ck_assert_int_eq(grant_check_gate(p, "net", &v), 0);
    bool net = grant_verdict_answer(v) == GRANT_ALLOWED;
    grant_verdict_free(v);
    for (size_t i = 0; i < sizeof(addrs) / sizeof(*addrs); i++) {
        gk_autofree char *sbwhy = NULL;
        int sb = sbpl_says(s, "network-outbound", addrs[i], &sbwhy);
        gk_autofree char *what = gk_printf("connect %s", addrs[i]);
        judge(st, policy, what, sb, sbwhy, net, "net");
    }
    /* A destination list: the proxy, which applies it, is the one place the
     * profile lets the command connect to. */
    bool list = grant_policy_net_mode(p) == GRANT_NET_LIST;
    {
        gk_autofree char *sbwhy = NULL;
        int sb = sbpl_says(s, "network-outbound", "localhost:3128", &sbwhy);
        judge(st, policy, "connect localhost:3128 (the destination proxy)", sb, sbwhy,
              list || net, list ? "net list: the proxy decides" : "net");
    }
    gk_strvec_free(&files);
    gk_strvec_free(&argv1s);
    gk_strvec_free(&q);
    gk_projection_free(pr);
    grant_sbpl_free(s);
}

/* The sbpl-params rendering, read with the `;; -D NAME=VALUE` lines it
 * ends with. */
static grant_sbpl *read_params_variant(const char *policy, const grant_policy *p)
{
    char *out = NULL;
    size_t len = 0;
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_SEATBELT, "sbpl-params", NULL, &out, &len), 0);
    gk_strvec params = {0};
    for (const char *l = out; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (n > 6 && strncmp(l, ";; -D ", 6) == 0)
            gk_strvec_push_take(&params, gk_strndup(l + 6, n - 6));
        l = e ? e + 1 : NULL;
    }
    if (n_proxy_params(out))
        gk_strvec_push(&params, PROXY_PORT_PARAM);
    gk_autofree char *name = gk_printf("%s (params)", policy);
    grant_diags *d = grant_diags_new();
    grant_sbpl *s = NULL;
    int rc = grant_sbpl_read_buffer(name, out, len, (const char *const *)params.v, params.n,
                                    GRANT_SBPL_NO_IMPORT, d, &s);
    if (rc != 0 || grant_diags_count(d)) {
        gk_autofree char *m = gk_test_render_diags(d);
        ck_abort_msg("%s: sbpl-params does not read cleanly:\n%s", name, m);
    }
    grant_diags_free(d);
    gk_strvec_free(&params);
    free(out);
    return s;
}

static grant_policy *compile_one(const char *file, bool implicit)
{
    grant_context *ctx = ctx_macos(implicit);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {file};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    grant_diags_free(d);
    grant_context_free(ctx);
    return rc == 0 ? p : NULL; /* error cases of other suites do not compile */
}

START_TEST(test_conservatism)
{
    gk_strvec pols = all_policies();
    known k;
    load_known(&k);
    diffstat st = {0};
    st.known = &k;
    size_t emitted = 0;
    bool unsupported = false;
    gk_autofree char *src = gk_strdup(gk_test_srcdir());
    for (size_t i = 0; i < pols.n && !unsupported; i++) {
        for (int implicit = 1; implicit >= 0; implicit--) {
            grant_policy *p = compile_one(pols.v[i], implicit);
            /* The bundled policies and the grants of the tests must compile;
             * other suites' data may hold error cases. */
            const char *rel0 = gk_has_prefix(pols.v[i], src) ? pols.v[i] + strlen(src) + 1
                                                             : pols.v[i];
            ck_assert_msg(p || !(gk_has_prefix(rel0, "policies/") ||
                                 gk_has_prefix(rel0, "tests/data/grants/")),
                          "%s does not compile for macOS", pols.v[i]);
            if (!p)
                continue;
            char *out = NULL;
            size_t len = 0;
            int rc = grant_emit(p, GRANT_BACKEND_SEATBELT, "sbpl", NULL, &out, &len);
            if (rc == -ENOTSUP) {
                unsupported = true;
                grant_policy_free(p);
                break;
            }
            ck_assert_msg(rc == 0, "%s: grant_emit returned %d", pols.v[i], rc);
            emitted++;
            const char *rel = gk_has_prefix(pols.v[i], src) ? pols.v[i] + strlen(src) + 1
                                                            : pols.v[i];
            gk_autofree char *name = gk_printf("%s%s", rel, implicit ? "" : " (no-implicit)");
            grant_sbpl *sp = read_params_variant(name, p);
            differential(&st, name, p, out, len, sp);
            grant_sbpl_free(sp);
            free(out);
            grant_policy_free(p);
        }
    }
    if (unsupported) {
        printf("check_sbpl: conservatism: grant_emit(seatbelt) returns -ENOTSUP: not run\n");
    } else {
        ck_assert_uint_ge(emitted, 10);
        printf("check_sbpl: conservatism: %zu policy files, %zu compiled and emitted (with "
               "and without implicit grants), %zu queries, %zu violations, %zu known "
               "violations, %zu over-restrictions\n",
               pols.n, emitted, st.queries, st.violations, st.known_hits, st.over);
        if (st.over)
            printf("over-restrictions (the gate allows, the profile denies):\n%s",
                   st.findings.data);
        if (st.known_hits)
            printf("known violations (tests/data/sbpl/known-violations.tsv):\n%s",
                   st.knowns.data);
        fflush(stdout);
        for (size_t i = 0; i < k.policy.n; i++)
            ck_assert_msg(k.seen[i] > 0,
                          "known-violations.tsv: '%s %s' no longer happens: delete the line",
                          k.policy.v[i], k.query.v[i]);
    }
    if (st.violations) {
        /* The whole list on stdout; Check's message holds only its start. */
        printf("violations (the profile allows, the gate denies):\n%s", st.report.data);
        fflush(stdout);
        st.report.data[st.report.len > 3000 ? 3000 : st.report.len] = '\0';
    }
    ck_assert_msg(st.violations == 0, "%zu queries the profile allows and the gate denies:\n%s",
                  st.violations, st.report.data ? st.report.data : "");
    gk_buf_free(&st.report);
    gk_buf_free(&st.findings);
    gk_buf_free(&st.knowns);
    gk_strvec_free(&k.policy);
    gk_strvec_free(&k.query);
    free(k.seen);
    gk_strvec_free(&pols);
}
END_TEST

/* The harness itself can fail: an allow-everything profile breaks the
 * invariant on every restrictive policy, deny-everything never does. */
START_TEST(test_conservatism_harness)
{
    gk_autofree char *file = gk_test_path("tests/data/grants/spec-example.grant");
    grant_policy *p = compile_one(file, true);
    ck_assert_ptr_nonnull(p);
    const char *all = "(version 1)\n(allow default)\n";
    const char *none = "(version 1)\n(deny default)\n";
    diffstat a = {0}, b = {0};
    differential(&a, "allow-all", p, all, strlen(all), NULL);
    differential(&b, "deny-all", p, none, strlen(none), NULL);
    ck_assert_uint_gt(a.violations, 10);
    ck_assert_msg(a.report.data && strstr(a.report.data, "read /Users/u/.ssh: profile allows"),
                  "%s", a.report.data);
    ck_assert_msg(strstr(a.report.data, "exec /usr/bin/bash: profile allows"), "%s",
                  a.report.data);
    ck_assert_uint_eq(b.violations, 0);
    ck_assert_uint_gt(b.over, 10);
    gk_buf_free(&a.report);
    gk_buf_free(&a.findings);
    gk_buf_free(&b.report);
    gk_buf_free(&b.findings);
    grant_policy_free(p);
}
END_TEST

static Suite *sbpl_suite(void)
{
    Suite *s = suite_create("sbpl");
    TCase *t = tcase_create("evaluator");
    tcase_add_test(t, test_table);
    tcase_add_test(t, test_regex_anchoring);
    tcase_add_test(t, test_hierarchy);
    tcase_add_test(t, test_params_and_procedures);
    tcase_add_test(t, test_bad_queries);
    tcase_add_test(t, test_imports);
    tcase_add_test(t, test_deterministic);
    suite_add_tcase(s, t);
    TCase *g = tcase_create("goldens");
    tcase_add_test(g, test_errors);
    tcase_add_test(g, test_lint);
    tcase_add_test(g, test_lint_ids);
    suite_add_tcase(s, g);
    TCase *c = tcase_create("cli");
    tcase_add_test(c, test_cli);
    suite_add_tcase(s, c);
    TCase *d = tcase_create("conservatism");
    tcase_set_timeout(d, 600);
    tcase_add_test(d, test_conservatism);
    tcase_add_test(d, test_conservatism_harness);
    suite_add_tcase(s, d);
    return s;
}

int main(void)
{
    return gk_test_main(sbpl_suite());
}
