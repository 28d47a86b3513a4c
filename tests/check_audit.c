/* check_audit.c - grant_audit and `grantc audit`.
 *
 * - Every .grant file under tests/data/audit names the findings it must produce
 *   ("# expect: ID@LINE ..."; see tests/data/audit/README) and is audited in
 *   a fixed offline context (or, "# target: windows" or "macos", one of those).
 * - Chosen messages say what they must (the rule that shadows, the option
 *   that makes git unsafe).
 * - The JSON document is canonical and has the documented shape; the SARIF
 *   log passes a structural validator for what GitHub code scanning reads.
 * - The host-only findings run against real files made here: a Unix socket
 *   bound in a temporary directory, a policy source inside a writable
 *   region, a writable PATH directory, an absent deny under a read-only bind.
 * - The grantc binary: formats, --fail-on exit codes, usage errors.
 */
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

#define AUDIT_DIR "tests/data/audit"

/* The fixed offline context of the data files, as flags for grantc. The
 * temporary directory is one no checkout lives in, so the source files'
 * own location never makes a finding. */
#define LINUX_CTX                                                                          \
    "--target", "linux", "--home", "/home/u", "--user", "u", "--cwd", "/w", "--tempdir",   \
        "/scratch", "--path", "/usr/bin:/bin"

static gk_strvec audit_files;

/* ---- helpers --------------------------------------------------------------- */

static grant_context *offline_context(const char *target)
{
    grant_context *ctx = gk_test_context_linux();
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/scratch"), 0);
    if (target && strcmp(target, "windows") == 0) {
        grant_context_free(ctx);
        ck_assert_int_eq(grant_context_new(&ctx), 0);
        ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:/Users/u"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "C:/w"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "C:/Temp"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows/System32"), 0);
    } else if (target && strcmp(target, "macos") == 0) {
        grant_context_free(ctx);
        ck_assert_int_eq(grant_context_new(&ctx), 0);
        ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/Users/u"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/Users/u/w"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/private/tmp"), 0);
        char *pp = gk_test_path("tests/data/policy-path");
        ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
        free(pp);
    } else {
        ck_assert_msg(!target || strcmp(target, "linux") == 0, "unknown target '%s'", target);
    }
    return ctx;
}

static grant_policy *compile_or_fail(const grant_context *ctx, const char *file)
{
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[1] = {file};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    gk_autofree char *diags = gk_test_render_diags(d);
    ck_assert_msg(rc == 0 && p, "%s does not compile:\n%s", file, diags);
    grant_diags_free(d);
    return p;
}

static grant_findings *audit_or_fail(const grant_policy *p)
{
    grant_findings *f = NULL;
    ck_assert_int_eq(grant_audit(p, &f), 0);
    ck_assert_ptr_nonnull(f);
    return f;
}

/* "ID@LINE" for a finding in file `self`, "ID@BASENAME:LINE" for another
 * file, "ID@-" without a location. */
static char *finding_key(const grant_findings *f, size_t i, const char *self)
{
    const char *id, *file;
    unsigned line;
    ck_assert_int_eq(grant_finding(f, i, &id, NULL, NULL, &file, &line, NULL), 0);
    if (!file)
        return gk_printf("%s@-", id);
    if (strcmp(file, self) == 0)
        return gk_printf("%s@%u", id, line);
    return gk_printf("%s@%s:%u", id, gk_basename(file), line);
}

/* Every value of the "# NAME:" header lines of a data file. */
static gk_strvec header_values(const char *text, const char *name)
{
    gk_strvec v = {0};
    gk_autofree char *prefix = gk_printf("# %s:", name);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n >= strlen(prefix) && strncmp(line, prefix, strlen(prefix)) == 0) {
            gk_autofree char *rest = gk_strndup(line + strlen(prefix), n - strlen(prefix));
            char *save = NULL;
            for (char *w = strtok_r(rest, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
                gk_strvec_push(&v, w);
        }
        line = end ? end + 1 : NULL;
    }
    return v;
}

static bool has_header(const char *text, const char *name)
{
    gk_autofree char *prefix = gk_printf("# %s:", name);
    return strstr(text, prefix) != NULL;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join_sorted(gk_strvec *v)
{
    if (v->n > 1)
        qsort(v->v, v->n, sizeof(*v->v), cmp_strp);
    gk_buf b = {0};
    for (size_t i = 0; i < v->n; i++) {
        if (i)
            gk_buf_putc(&b, ' ');
        gk_buf_puts(&b, v->v[i]);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

static json_t *parse_json(const char *text, const char *what)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    ck_assert_msg(j != NULL, "%s: invalid JSON at %d:%d: %s\n%s", what, e.line, e.column, e.text,
                  text);
    return j;
}

/* Audit a data file in its own context. */
static grant_findings *audit_data_file(const char *path, grant_policy **policy)
{
    gk_autofree char *text = gk_test_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    gk_strvec target = header_values(text, "target");
    grant_context *ctx = offline_context(target.n ? target.v[0] : NULL);
    gk_strvec_free(&target);
    grant_policy *p = compile_or_fail(ctx, path);
    grant_context_free(ctx);
    grant_findings *f = audit_or_fail(p);
    if (policy)
        *policy = p;
    else
        grant_policy_free(p);
    return f;
}

static char *data_path(const char *name)
{
    gk_autofree char *rel = gk_printf("%s/%s", AUDIT_DIR, name);
    return gk_test_path(rel);
}

/* ---- the data files --------------------------------------------------------- */

START_TEST(test_corpus)
{
    ck_assert_msg(audit_files.n >= 10, "expected the audit data files, found %zu", audit_files.n);
    for (size_t i = 0; i < audit_files.n; i++) {
        gk_autofree char *text = gk_test_read(audit_files.v[i], NULL);
        ck_assert_msg(has_header(text, "expect"), "%s has no '# expect:' line", audit_files.v[i]);
    }
}
END_TEST

START_TEST(test_expected_findings)
{
    const char *path = audit_files.v[_i];
    gk_autofree char *text = gk_test_read(path, NULL);
    gk_strvec want = header_values(text, "expect");
    grant_findings *f = audit_data_file(path, NULL);
    gk_strvec got = {0};
    for (size_t i = 0; i < grant_findings_count(f); i++)
        gk_strvec_push_take(&got, finding_key(f, i, path));
    gk_autofree char *w = join_sorted(&want);
    gk_autofree char *g = join_sorted(&got);
    if (strcmp(w, g) != 0) {
        gk_buf b = {0};
        for (size_t i = 0; i < grant_findings_count(f); i++) {
            const char *id, *file, *msg;
            unsigned line;
            grant_finding(f, i, &id, NULL, NULL, &file, &line, &msg);
            gk_buf_printf(&b, "  %s %s:%u %s\n", id, file ? gk_basename(file) : "-", line, msg);
        }
        ck_abort_msg("%s:\n want: %s\n  got: %s\n%s", path, w, g, b.data ? b.data : "");
    }
    gk_strvec_free(&want);
    gk_strvec_free(&got);
    grant_findings_free(f);
}
END_TEST

/* The table of audit.c: ids, names and severities never change. */
static const struct {
    const char *id, *name;
    grant_severity severity;
} rule_table[] = {
    {"GK001", "deputy", GRANT_SEVERITY_WARNING},
    {"GK002", "shadowed", GRANT_SEVERITY_WARNING},
    {"GK003", "no-effect", GRANT_SEVERITY_WARNING},
    {"GK004", "source-writable", GRANT_SEVERITY_WARNING},
    {"GK005", "unix-socket", GRANT_SEVERITY_WARNING},
    {"GK006", "path-writable", GRANT_SEVERITY_WARNING},
    {"GK007", "shell-capable", GRANT_SEVERITY_WARNING},
    {"GK008", "fidelity-elf-loader", GRANT_SEVERITY_NOTE},
    {"GK009", "fidelity-windows-exec", GRANT_SEVERITY_NOTE},
    {"GK010", "fidelity-landlock-nesting", GRANT_SEVERITY_NOTE},
    {"GK011", "fidelity-subcommands", GRANT_SEVERITY_NOTE},
    {"GK012", "fidelity-absent-mask", GRANT_SEVERITY_NOTE},
    {"GK013", "fidelity-windows-rename", GRANT_SEVERITY_NOTE},
    {"GK014", "git-writable", GRANT_SEVERITY_WARNING},
    {"GK015", "build-file-shadowed", GRANT_SEVERITY_NOTE},
    {"GK016", "git-config-unreadable", GRANT_SEVERITY_WARNING},
    {"GK017", "net-shared-host", GRANT_SEVERITY_WARNING},
};
#define NRULES (sizeof(rule_table) / sizeof(rule_table[0]))

/* Ids the host tests below produce (the data files are offline). */
static const char *const host_only_ids[] = {"GK004", "GK005", "GK006", "GK012"};

/* Each finding's id, name and severity agree with the table, and the list
 * is sorted by file, line, id. */
START_TEST(test_table_and_order)
{
    for (size_t k = 0; k < audit_files.n; k++) {
        grant_findings *f = audit_data_file(audit_files.v[k], NULL);
        const char *pfile = NULL, *pid = NULL;
        unsigned pline = 0;
        for (size_t i = 0; i < grant_findings_count(f); i++) {
            const char *id, *name, *file, *msg;
            grant_severity sev;
            unsigned line;
            ck_assert_int_eq(grant_finding(f, i, &id, &name, &sev, &file, &line, &msg), 0);
            size_t r = 0;
            while (r < NRULES && strcmp(rule_table[r].id, id) != 0)
                r++;
            ck_assert_msg(r < NRULES, "unknown id %s", id);
            ck_assert_str_eq(name, rule_table[r].name);
            ck_assert_int_eq(sev, rule_table[r].severity);
            ck_assert_msg(msg && *msg, "%s: empty message", id);
            ck_assert_msg(!file || line > 0 || strcmp(id, "GK004") == 0,
                          "%s: a rule location without a line", id);
            if (i > 0 && file && pfile) {
                int c = strcmp(pfile, file);
                ck_assert_msg(c < 0 || (c == 0 && (pline < line ||
                                                   (pline == line && strcmp(pid, id) <= 0))),
                              "findings out of order: %s:%u %s before %s:%u %s", pfile, pline,
                              pid, file, line, id);
            }
            ck_assert_msg(!(pfile == NULL && i > 0 && file != NULL),
                          "a finding with a location after one without");
            pfile = file;
            pline = line;
            pid = id;
        }
        ck_assert_int_eq(grant_finding(f, grant_findings_count(f), NULL, NULL, NULL, NULL, NULL,
                                       NULL),
                         -EINVAL);
        grant_findings_free(f);
    }
}
END_TEST

/* Every id of the table has a case: an expectation in a data file or a
 * host test. A new finding without a test fails here. */
START_TEST(test_every_rule_has_a_case)
{
    gk_strvec seen = {0};
    for (size_t k = 0; k < audit_files.n; k++) {
        gk_autofree char *text = gk_test_read(audit_files.v[k], NULL);
        gk_strvec want = header_values(text, "expect");
        for (size_t i = 0; i < want.n; i++) {
            gk_autofree char *id = gk_strndup(want.v[i], strcspn(want.v[i], "@"));
            gk_strvec_push(&seen, id);
        }
        gk_strvec_free(&want);
    }
    for (size_t i = 0; i < sizeof(host_only_ids) / sizeof(*host_only_ids); i++)
        gk_strvec_push(&seen, host_only_ids[i]);
    for (size_t r = 0; r < NRULES; r++)
        ck_assert_msg(gk_strvec_contains(&seen, rule_table[r].id), "no case produces %s",
                      rule_table[r].id);
    /* And the SARIF rule list is exactly the table. */
    grant_findings *f = audit_data_file(audit_files.v[0], NULL);
    gk_autofree char *sarif = grant_findings_sarif(f);
    json_t *j = parse_json(sarif, "sarif");
    json_t *rules = json_object_get(
        json_object_get(json_object_get(json_array_get(json_object_get(j, "runs"), 0), "tool"),
                        "driver"),
        "rules");
    ck_assert_uint_eq(json_array_size(rules), NRULES);
    for (size_t r = 0; r < NRULES; r++) {
        json_t *o = json_array_get(rules, r);
        ck_assert_str_eq(json_string_value(json_object_get(o, "id")), rule_table[r].id);
        ck_assert_str_eq(json_string_value(json_object_get(o, "name")), rule_table[r].name);
    }
    json_decref(j);
    grant_findings_free(f);
    gk_strvec_free(&seen);
}
END_TEST

/* Messages say what and why. */
static const struct {
    const char *file, *key, *needle;
} message_cases[] = {
    {"deputy.grant", "GK001@8", "/w/bin is writable (write /w, "},
    {"deputy.grant", "GK001@8", "a program written there can then be run"},
    {"shadowed-exec.grant", "GK002@10", "vetoed by deny git (" AUDIT_DIR "/lib/no-vcs.grant:2)"},
    {"shadowed-exec.grant", "GK002@12", "deny match \"^python[0-9.]*$\""},
    {"shadowed-exec.grant", "GK002@16", "inside veto dir /opt/vcs/"},
    {"shadowed-exec.grant", "GK002@21", "subcommand list is empty"},
    {"shadowed-fs.grant", "GK002@11", "inside deny /data ("},
    {"shadowed-fs.grant", "GK002@16", "inside readonly /opt ("},
    {"shadowed-fs.grant", "GK002@8", "read /srv ("},
    {"shadowed-layers.grant", "GK002@8", "subcommands [push] of allow git [log push]"},
    {"shadowed-layers.grant", "GK002@8", "admits neither rg nor /usr/bin/rg"},
    {"shadowed-layers.grant", "GK002@9", "layers intersect"},
    {"shadowed-layers.grant", "GK002@6", "net allow in grant 'layered' has no effect"},
    {"no-effect.grant", "GK003@6", "outside every readable region"},
    {"no-effect.grant", "GK003@10", "read-only already"},
    {"path-writable.grant", "GK006@5", "xdg:bin (/home/u/.local/bin)"},
    {"path-writable.grant", "GK006@5", "PATH directory /usr/bin"},
    {"shell-capable.grant", "GK007@8", "option [-c]"},
    {"shell-capable.grant", "GK007@8", "core.hooksPath"},
    {"shell-capable.grant", "GK007@10", "the list admits [run]"},
    {"shell-capable.grant", "GK007@9", "-exec"},
    {"shell-capable.grant", "GK011@11", "allow kubectl [get] is enforced only by the gate"},
    {"windows.grant", "GK013@6", "C:/w/secret"},
    {"clean-notes.grant", "GK010@10", "1 deny or readonly entry lies over granted regions"},
};

START_TEST(test_messages)
{
    gk_autofree char *path = data_path(message_cases[_i].file);
    grant_findings *f = audit_data_file(path, NULL);
    gk_buf all = {0};
    bool found = false;
    for (size_t i = 0; i < grant_findings_count(f) && !found; i++) {
        gk_autofree char *key = finding_key(f, i, path);
        const char *msg;
        grant_finding(f, i, NULL, NULL, NULL, NULL, NULL, &msg);
        gk_buf_printf(&all, "  %s %s\n", key, msg);
        /* Rule locations name files as they were opened. */
        gk_autofree char *needle = NULL;
        const char *n = message_cases[_i].needle;
        const char *rel = strstr(n, AUDIT_DIR "/");
        if (rel) {
            gk_autofree char *abs = gk_test_path(AUDIT_DIR);
            needle = gk_printf("%.*s%s%s", (int)(rel - n), n, abs, rel + strlen(AUDIT_DIR));
            n = needle;
        }
        found = strcmp(key, message_cases[_i].key) == 0 && strstr(msg, n);
    }
    ck_assert_msg(found, "%s: no %s saying '%s' among\n%s", message_cases[_i].file,
                  message_cases[_i].key, message_cases[_i].needle, all.data ? all.data : "");
    gk_buf_free(&all);
    grant_findings_free(f);
}
END_TEST

/* A dead rule of a policy found along the policy path (a bundled baseline)
 * is not reported: its author wrote it for every context. The same rule in
 * the user's own file is. */
START_TEST(test_library_rules_not_reported)
{
    gk_autofree char *dir = gk_test_path(AUDIT_DIR);
    grant_context *ctx = offline_context(NULL);
    ck_assert_int_eq(grant_context_set_policy_path(ctx, dir), 0);
    const char *text = "grant uses_lib {\n"
                       "    include \"lib/no-vcs.grant\";\n"
                       "    exec { deny svn; }\n"
                       "    fs { read cwd:; }\n"
                       "    include \"lib/secrets.grant\";\n"
                       "}\n";
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    ck_assert_int_eq(grant_compile_buffer(ctx, "/w/uses-lib.grant", text, strlen(text), d, &p), 0);
    grant_findings *f = audit_or_fail(p);
    gk_strvec got = {0};
    for (size_t i = 0; i < grant_findings_count(f); i++)
        gk_strvec_push_take(&got, finding_key(f, i, "/w/uses-lib.grant"));
    gk_autofree char *g = join_sorted(&got);
    /* deny svn is redundant (the library vetoes svn too): reported in the
     * user's file. The library's denies of ~/.ssh and ~/.aws have no effect
     * here (home is not readable), but are not reported. */
    ck_assert_str_eq(g, "GK002@3");
    grant_findings_free(f);
    grant_policy_free(p);
    grant_diags_free(d);

    /* The same files named directly are the user's: reported. */
    gk_autofree char *secrets = gk_path_join(dir, "lib/secrets.grant");
    gk_autofree char *direct = gk_printf("grant direct {\n"
                                         "    include \"%s\";\n"
                                         "    fs { read cwd:; }\n"
                                         "}\n",
                                         secrets);
    d = grant_diags_new();
    ck_assert_int_eq(grant_context_set_policy_path(ctx, "/nonexistent-gk"), 0);
    ck_assert_int_eq(
        grant_compile_buffer(ctx, "/w/direct.grant", direct, strlen(direct), d, &p), 0);
    f = audit_or_fail(p);
    gk_strvec_free(&got);
    for (size_t i = 0; i < grant_findings_count(f); i++)
        gk_strvec_push_take(&got, finding_key(f, i, "/w/direct.grant"));
    gk_autofree char *g2 = join_sorted(&got);
    ck_assert_str_eq(g2, "GK003@secrets.grant:2 GK003@secrets.grant:2");
    gk_strvec_free(&got);
    grant_findings_free(f);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* ---- JSON ------------------------------------------------------------------- */

START_TEST(test_json_shape)
{
    for (size_t k = 0; k < audit_files.n; k++) {
        grant_findings *f = audit_data_file(audit_files.v[k], NULL);
        char *text = grant_findings_json(f);
        json_t *j = parse_json(text, audit_files.v[k]);
        ck_assert_msg(json_is_array(j), "%s: not an array", audit_files.v[k]);
        ck_assert_uint_eq(json_array_size(j), grant_findings_count(f));
        /* Canonical: sorted keys, compact. */
        char *again = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        ck_assert_str_eq(again, text);
        free(again);
        for (size_t i = 0; i < json_array_size(j); i++) {
            json_t *o = json_array_get(j, i);
            ck_assert_msg(json_is_object(o), "element %zu is not an object", i);
            ck_assert_uint_eq(json_object_size(o), 6);
            const char *id, *name, *file, *msg;
            grant_severity sev;
            unsigned line;
            grant_finding(f, i, &id, &name, &sev, &file, &line, &msg);
            ck_assert_str_eq(json_string_value(json_object_get(o, "id")), id);
            ck_assert_str_eq(json_string_value(json_object_get(o, "name")), name);
            ck_assert_str_eq(json_string_value(json_object_get(o, "message")), msg);
            ck_assert_str_eq(json_string_value(json_object_get(o, "severity")),
                             sev == GRANT_SEVERITY_ERROR     ? "error"
                             : sev == GRANT_SEVERITY_WARNING ? "warning"
                                                             : "note");
            json_t *jf = json_object_get(o, "file"), *jl = json_object_get(o, "line");
            if (file)
                ck_assert_str_eq(json_string_value(jf), file);
            else
                ck_assert_msg(json_is_null(jf), "file must be null");
            if (line)
                ck_assert_int_eq(json_integer_value(jl), line);
            else
                ck_assert_msg(json_is_null(jl), "line must be null");
        }
        json_decref(j);
        free(text);
        grant_findings_free(f);
    }
}
END_TEST

START_TEST(test_json_empty)
{
    gk_autofree char *path = data_path("clean-quiet.grant");
    grant_findings *f = audit_data_file(path, NULL);
    ck_assert_uint_eq(grant_findings_count(f), 0);
    gk_autofree char *json = grant_findings_json(f);
    ck_assert_str_eq(json, "[]");
    grant_findings_free(f);
    /* NULL is an empty list, not a crash. */
    gk_autofree char *none = grant_findings_json(NULL);
    ck_assert_str_eq(none, "[]");
    ck_assert_uint_eq(grant_findings_count(NULL), 0);
    ck_assert_int_eq(grant_audit(NULL, &f), -EINVAL);
}
END_TEST

/* ---- SARIF: what GitHub code scanning requires ------------------------------- */

/* A structural validator for the subset of SARIF 2.1.0 that GitHub code
 * scanning reads (its "SARIF support" page): the version, one or more runs
 * with tool.driver.name, rules with ids, results with message.text, a
 * ruleId that resolves, a level, at least one location with an artifact URI
 * and, when present, a region whose startLine >= 1. Returns NULL or what is
 * wrong (malloc'd). */
static char *sarif_problem(json_t *root);

#define SARIF_FAIL(...) return gk_printf(__VA_ARGS__)

static bool nonempty_string(json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

static bool is_level(json_t *v)
{
    static const char *const levels[] = {"none", "note", "warning", "error"};
    if (!json_is_string(v))
        return false;
    for (size_t i = 0; i < 4; i++)
        if (strcmp(json_string_value(v), levels[i]) == 0)
            return true;
    return false;
}

/* RFC 3986 URI-reference characters (unreserved, reserved, '%' escapes). */
static bool uri_ok(const char *s)
{
    if (!*s)
        return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '%') {
            if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]))
                return false;
            p += 2;
            continue;
        }
        if (c <= 0x20 || c >= 0x7f || strchr("\"<>\\^`{|}", c))
            return false;
    }
    return true;
}

static bool has_scheme(const char *s)
{
    const char *colon = strchr(s, ':');
    const char *slash = strchr(s, '/');
    return colon && (!slash || colon < slash) && colon > s;
}

static bool message_ok(json_t *m)
{
    return json_is_object(m) && nonempty_string(json_object_get(m, "text"));
}

static char *sarif_problem(json_t *root)
{
    if (!json_is_object(root))
        SARIF_FAIL("the log is not an object");
    json_t *version = json_object_get(root, "version");
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.1.0") != 0)
        SARIF_FAIL("version must be \"2.1.0\"");
    json_t *schema = json_object_get(root, "$schema");
    if (schema && (!nonempty_string(schema) || !has_scheme(json_string_value(schema))))
        SARIF_FAIL("$schema must be an absolute URI");
    json_t *runs = json_object_get(root, "runs");
    if (!json_is_array(runs) || json_array_size(runs) == 0)
        SARIF_FAIL("runs must be a non-empty array");
    for (size_t r = 0; r < json_array_size(runs); r++) {
        json_t *run = json_array_get(runs, r);
        if (!json_is_object(run))
            SARIF_FAIL("runs[%zu] is not an object", r);
        json_t *driver = json_object_get(json_object_get(run, "tool"), "driver");
        if (!json_is_object(driver))
            SARIF_FAIL("runs[%zu].tool.driver is missing", r);
        if (!nonempty_string(json_object_get(driver, "name")))
            SARIF_FAIL("runs[%zu].tool.driver.name must be a non-empty string", r);
        json_t *ver = json_object_get(driver, "version");
        if (ver && !json_is_string(ver))
            SARIF_FAIL("tool.driver.version must be a string");
        json_t *info = json_object_get(driver, "informationUri");
        if (info && (!nonempty_string(info) || !has_scheme(json_string_value(info))))
            SARIF_FAIL("tool.driver.informationUri must be an absolute URI");
        json_t *rules = json_object_get(driver, "rules");
        if (rules && !json_is_array(rules))
            SARIF_FAIL("tool.driver.rules must be an array");
        for (size_t i = 0; i < json_array_size(rules); i++) {
            json_t *rule = json_array_get(rules, i);
            if (!json_is_object(rule) || !nonempty_string(json_object_get(rule, "id")))
                SARIF_FAIL("rules[%zu].id must be a non-empty string", i);
            for (size_t k = 0; k < i; k++)
                if (json_equal(json_object_get(json_array_get(rules, k), "id"),
                               json_object_get(rule, "id")))
                    SARIF_FAIL("rules[%zu].id repeats rules[%zu].id", i, k);
            json_t *name = json_object_get(rule, "name");
            if (name && !json_is_string(name))
                SARIF_FAIL("rules[%zu].name must be a string", i);
            const char *texts[] = {"shortDescription", "fullDescription", "help"};
            for (size_t t = 0; t < 3; t++) {
                json_t *m = json_object_get(rule, texts[t]);
                if (m && !message_ok(m))
                    SARIF_FAIL("rules[%zu].%s.text must be a non-empty string", i, texts[t]);
            }
            json_t *cfg = json_object_get(rule, "defaultConfiguration");
            if (cfg && (!json_is_object(cfg) || !is_level(json_object_get(cfg, "level"))))
                SARIF_FAIL("rules[%zu].defaultConfiguration.level is not a level", i);
        }
        json_t *results = json_object_get(run, "results");
        if (!json_is_array(results))
            SARIF_FAIL("runs[%zu].results must be an array", r);
        for (size_t i = 0; i < json_array_size(results); i++) {
            json_t *res = json_array_get(results, i);
            if (!json_is_object(res))
                SARIF_FAIL("results[%zu] is not an object", i);
            if (!message_ok(json_object_get(res, "message")))
                SARIF_FAIL("results[%zu].message.text must be a non-empty string", i);
            json_t *rid = json_object_get(res, "ruleId");
            if (!nonempty_string(rid))
                SARIF_FAIL("results[%zu].ruleId must be a non-empty string", i);
            json_t *ridx = json_object_get(res, "ruleIndex");
            if (ridx) {
                if (!json_is_integer(ridx) || json_integer_value(ridx) < 0 ||
                    (size_t)json_integer_value(ridx) >= json_array_size(rules))
                    SARIF_FAIL("results[%zu].ruleIndex is out of range", i);
                json_t *rule = json_array_get(rules, (size_t)json_integer_value(ridx));
                if (!json_equal(json_object_get(rule, "id"), rid))
                    SARIF_FAIL("results[%zu].ruleIndex names another rule than ruleId", i);
            } else if (rules) {
                bool known = false;
                for (size_t k = 0; k < json_array_size(rules) && !known; k++)
                    known = json_equal(json_object_get(json_array_get(rules, k), "id"), rid);
                if (!known)
                    SARIF_FAIL("results[%zu].ruleId names no rule", i);
            }
            json_t *level = json_object_get(res, "level");
            if (level && !is_level(level))
                SARIF_FAIL("results[%zu].level is not a level", i);
            json_t *locs = json_object_get(res, "locations");
            if (!json_is_array(locs) || json_array_size(locs) == 0)
                SARIF_FAIL("results[%zu].locations must hold at least one location", i);
            for (size_t l = 0; l < json_array_size(locs); l++) {
                json_t *phys = json_object_get(json_array_get(locs, l), "physicalLocation");
                if (!json_is_object(phys))
                    SARIF_FAIL("results[%zu].locations[%zu].physicalLocation is missing", i, l);
                json_t *uri = json_object_get(json_object_get(phys, "artifactLocation"), "uri");
                if (!nonempty_string(uri) || !uri_ok(json_string_value(uri)))
                    SARIF_FAIL("results[%zu]: artifactLocation.uri is not a URI: %s", i,
                               json_is_string(uri) ? json_string_value(uri) : "(missing)");
                const char *u = json_string_value(uri);
                if (!has_scheme(u) && u[0] == '/')
                    SARIF_FAIL("results[%zu]: an absolute path must be a file: URI: %s", i, u);
                json_t *region = json_object_get(phys, "region");
                if (region) {
                    json_t *sl = json_object_get(region, "startLine");
                    if (!json_is_object(region) || !json_is_integer(sl) ||
                        json_integer_value(sl) < 1)
                        SARIF_FAIL("results[%zu]: region.startLine must be an integer >= 1", i);
                    json_t *sc = json_object_get(region, "startColumn");
                    if (sc && (!json_is_integer(sc) || json_integer_value(sc) < 1))
                        SARIF_FAIL("results[%zu]: region.startColumn must be >= 1", i);
                }
            }
            json_t *fps = json_object_get(res, "partialFingerprints");
            if (fps) {
                if (!json_is_object(fps))
                    SARIF_FAIL("results[%zu].partialFingerprints must be an object", i);
                const char *k;
                json_t *v;
                json_object_foreach(fps, k, v) if (!json_is_string(v))
                    SARIF_FAIL("results[%zu].partialFingerprints.%s must be a string", i, k);
            }
        }
    }
    return NULL;
}

/* The validator itself must catch what GitHub rejects. */
START_TEST(test_sarif_validator_rejects)
{
    static const char *const bad[] = {
        "[]",
        "{\"version\":\"2.0.0\",\"runs\":[]}",
        "{\"version\":\"2.1.0\",\"runs\":[]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{}},\"results\":[]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\"}},"
        "\"results\":[{\"ruleId\":\"A\",\"message\":{}}]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\"}},"
        "\"results\":[{\"ruleId\":\"A\",\"message\":{\"text\":\"m\"}}]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\"}},"
        "\"results\":[{\"ruleId\":\"A\",\"message\":{\"text\":\"m\"},\"locations\":[{"
        "\"physicalLocation\":{\"artifactLocation\":{\"uri\":\"a b.grant\"}}}]}]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\"}},"
        "\"results\":[{\"ruleId\":\"A\",\"message\":{\"text\":\"m\"},\"locations\":[{"
        "\"physicalLocation\":{\"artifactLocation\":{\"uri\":\"a.grant\"},\"region\":{"
        "\"startLine\":0}}}]}]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\",\"rules\":[{"
        "\"id\":\"A\"}]}},\"results\":[{\"ruleId\":\"B\",\"ruleIndex\":0,\"message\":{\"text\":"
        "\"m\"},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":\"a\"}}}]}]}]}",
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\"}},"
        "\"results\":[{\"ruleId\":\"A\",\"level\":\"info\",\"message\":{\"text\":\"m\"},"
        "\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":\"a\"}}}]}]}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        json_t *j = parse_json(bad[i], "bad sarif");
        char *why = sarif_problem(j);
        ck_assert_msg(why != NULL, "accepted: %s", bad[i]);
        free(why);
        json_decref(j);
    }
    json_t *good = parse_json(
        "{\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{\"name\":\"x\",\"rules\":[{"
        "\"id\":\"A\"}]}},\"results\":[{\"ruleId\":\"A\",\"ruleIndex\":0,\"message\":{\"text\":"
        "\"m\"},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":"
        "\"dir/a%20b.grant\"},\"region\":{\"startLine\":3}}}]}]}]}",
        "good sarif");
    char *why = sarif_problem(good);
    ck_assert_msg(why == NULL, "rejected: %s", why);
    json_decref(good);
}
END_TEST

START_TEST(test_sarif_shape)
{
    for (size_t k = 0; k < audit_files.n; k++) {
        grant_findings *f = audit_data_file(audit_files.v[k], NULL);
        char *text = grant_findings_sarif(f);
        json_t *j = parse_json(text, audit_files.v[k]);
        char *why = sarif_problem(j);
        ck_assert_msg(why == NULL, "%s: %s\n%s", audit_files.v[k], why, text);
        json_t *run = json_array_get(json_object_get(j, "runs"), 0);
        ck_assert_str_eq(
            json_string_value(json_object_get(json_object_get(json_object_get(run, "tool"),
                                                              "driver"),
                                              "name")),
            "grantc");
        json_t *results = json_object_get(run, "results");
        ck_assert_uint_eq(json_array_size(results), grant_findings_count(f));
        for (size_t i = 0; i < json_array_size(results); i++) {
            json_t *res = json_array_get(results, i);
            const char *id, *file;
            grant_severity sev;
            unsigned line;
            grant_finding(f, i, &id, NULL, &sev, &file, &line, NULL);
            ck_assert_str_eq(json_string_value(json_object_get(res, "ruleId")), id);
            ck_assert_str_eq(json_string_value(json_object_get(res, "level")),
                             sev == GRANT_SEVERITY_WARNING ? "warning" : "note");
            json_t *region = json_object_get(
                json_object_get(json_array_get(json_object_get(res, "locations"), 0),
                                "physicalLocation"),
                "region");
            if (file && line)
                ck_assert_int_eq(json_integer_value(json_object_get(region, "startLine")),
                                 line);
            else
                ck_assert_msg(region == NULL, "a region without a line");
        }
        json_decref(j);
        free(text);
        free(why);
        grant_findings_free(f);
    }
}
END_TEST

/* A file under the context cwd gets a relative URI (what GitHub maps onto
 * the repository); others an absolute file: URI, escaped. */
START_TEST(test_sarif_uris)
{
    const char *srcdir = gk_test_srcdir();
    grant_context *ctx = offline_context(NULL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, srcdir), 0);
    gk_autofree char *path = data_path("deputy.grant");
    grant_policy *p = compile_or_fail(ctx, path);
    grant_findings *f = audit_or_fail(p);
    gk_autofree char *text = grant_findings_sarif(f);
    json_t *j = parse_json(text, "sarif");
    json_t *res = json_object_get(json_array_get(json_object_get(j, "runs"), 0), "results");
    ck_assert_uint_ge(json_array_size(res), 1);
    for (size_t i = 0; i < json_array_size(res); i++) {
        const char *uri = json_string_value(json_object_get(
            json_object_get(json_object_get(json_array_get(
                                                json_object_get(json_array_get(res, i), "locations"),
                                                0),
                                            "physicalLocation"),
                            "artifactLocation"),
            "uri"));
        ck_assert_str_eq(uri, AUDIT_DIR "/deputy.grant");
    }
    json_decref(j);
    grant_findings_free(f);
    grant_policy_free(p);
    grant_context_free(ctx);

    /* Outside the cwd, with a space and a non-ASCII byte in the name. */
    ctx = offline_context(NULL);
    const char *t = "grant s { fs { write cwd:; } exec { allow cwd:/bin/; } }\n";
    grant_diags *d = grant_diags_new();
    ck_assert_int_eq(grant_compile_buffer(ctx, "/elsewhere/my p\xc3\xa9.grant", t, strlen(t), d,
                                          &p),
                     0);
    f = audit_or_fail(p);
    gk_autofree char *s2 = grant_findings_sarif(f);
    ck_assert_msg(strstr(s2, "\"uri\":\"file:///elsewhere/my%20p%C3%A9.grant\""), "%s", s2);
    json_t *j2 = parse_json(s2, "sarif");
    char *why = sarif_problem(j2);
    ck_assert_msg(why == NULL, "%s", why);
    json_decref(j2);
    grant_findings_free(f);
    grant_policy_free(p);
    grant_diags_free(d);

    /* A finding about a whole file (a writable source: no line) has an
     * artifact but no region; one with no location at all (xdg:bin) is put
     * on the first source file, as GitHub wants a location. */
    const char *t3 = "grant s { net deny; }\n";
    d = grant_diags_new();
    ck_assert_int_eq(grant_compile_buffer(ctx, "/w/src.grant", t3, strlen(t3), d, &p), 0);
    f = audit_or_fail(p);
    gk_strvec keys = {0};
    for (size_t i = 0; i < grant_findings_count(f); i++)
        gk_strvec_push_take(&keys, finding_key(f, i, "/w/src.grant"));
    gk_autofree char *k3 = join_sorted(&keys);
    ck_assert_str_eq(k3, "GK004@0 GK006@- GK014@-");
    gk_strvec_free(&keys);
    gk_autofree char *s3 = grant_findings_sarif(f);
    json_t *j3 = parse_json(s3, "sarif");
    why = sarif_problem(j3);
    ck_assert_msg(why == NULL, "%s\n%s", why, s3);
    json_t *r3 = json_object_get(json_array_get(json_object_get(j3, "runs"), 0), "results");
    ck_assert_uint_eq(json_array_size(r3), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *phys = json_object_get(
            json_array_get(json_object_get(json_array_get(r3, i), "locations"), 0),
            "physicalLocation");
        ck_assert_str_eq(
            json_string_value(json_object_get(json_object_get(phys, "artifactLocation"), "uri")),
            "src.grant");
        ck_assert_msg(json_object_get(phys, "region") == NULL, "a region without a line: %s", s3);
    }
    json_decref(j3);
    grant_findings_free(f);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* ---- host findings on real files --------------------------------------------- */

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = gk_printf("%s/gk-audit-XXXXXX", base && *base == '/' ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);
    ck_assert_ptr_nonnull(real);
    free(tmpl);
    return real;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

static void make_dirs(const char *path)
{
    gk_autofree char *p = gk_strdup(path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
}

/* A real Unix socket bound at path (the descriptor stays open: the file is
 * what the audit looks for). */
static int bind_socket(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    ck_assert_msg(strlen(path) < sizeof(a.sun_path), "socket path too long: %s", path);
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind %s: %s", path,
                  strerror(errno));
    return fd;
}

/* Compile text as dir/p.grant for this host (cwd dir, a tempdir and PATH
 * of our choosing) and audit it. Returns the findings; *file gets the
 * policy's file name. */
static grant_findings *audit_host_text(const char *dir, const char *text, const char *path_env,
                                       grant_target target, char **file)
{
    char *f = gk_path_join(dir, "p.grant");
    write_text(f, text);
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    if (target != GRANT_TARGET_HOST) {
        ck_assert_int_eq(grant_context_set_target(ctx, target), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/home/u"), 0);
        ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    }
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, dir), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/nonexistent-gk-tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, path_env ? path_env : "/usr/bin"), 0);
    grant_policy *p = compile_or_fail(ctx, f);
    grant_findings *out = audit_or_fail(p);
    grant_policy_free(p);
    grant_context_free(ctx);
    *file = f;
    return out;
}

/* Findings with this id: "LINE message" each, joined by newlines. */
static char *findings_with(const grant_findings *f, const char *want_id, size_t *count)
{
    gk_buf b = {0};
    *count = 0;
    for (size_t i = 0; i < grant_findings_count(f); i++) {
        const char *id, *msg;
        unsigned line;
        grant_finding(f, i, &id, NULL, NULL, NULL, &line, &msg);
        if (strcmp(id, want_id) != 0)
            continue;
        gk_buf_printf(&b, "%u %s\n", line, msg);
        (*count)++;
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

/* GK014 on the host: the git dir git finds from the cwd (here or in an
 * ancestor) and a write region's own .git, where they exist; a .git file
 * (worktree, submodule) is covered by a readonly entry below it, which
 * becomes readonly of the file; the whole git dir readonly is clean. */
START_TEST(test_git_writable_host)
{
    char *dir = make_tmpdir();
    gk_autofree char *sub = gk_path_join(dir, "src/deep");
    make_dirs(sub);
    const char *partial = "grant g { fs { write cwd:; readonly cwd:/.git/hooks cwd:/.git/config; } }\n";
    const char *whole = "grant g { fs { write cwd:; readonly cwd:/.git; } }\n";
    char *file = NULL;
    size_t n = 0;

    /* No repository: nothing to say. */
    grant_findings *f = audit_host_text(dir, partial, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *none = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 0, "%s", none);
    grant_findings_free(f);
    free(file);

    gk_autofree char *git = gk_path_join(dir, ".git");
    gk_autofree char *hooks = gk_path_join(dir, ".git/hooks");
    make_dirs(hooks);
    f = audit_host_text(dir, partial, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *got = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 1 && strstr(got, "commondir") && strstr(got, "modules") &&
                      strstr(got, "worktrees") && !strstr(got, " hooks,") && strstr(got, git),
                  "%s", got);
    grant_findings_free(f);
    free(file);

    f = audit_host_text(dir, whole, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *clean = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 0, "%s", clean);
    grant_findings_free(f);
    free(file);

    /* Found from a subdirectory: git walks up to the repository. */
    gk_autofree char *up = gk_printf("grant g { fs { write %s; } }\n", dir);
    f = audit_host_text(sub, up, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *walked = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 1 && strstr(walked, git) && strstr(walked, "hooks"), "%s", walked);
    grant_findings_free(f);
    free(file);

    /* A .git file: the readonly entries below it protect the file itself. */
    ck_assert_int_eq(remove(hooks), 0);
    ck_assert_int_eq(remove(git), 0);
    write_text(git, "gitdir: /nonexistent/.git/worktrees/w\n");
    f = audit_host_text(dir, partial, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *kept = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 0, "%s", kept);
    grant_findings_free(f);
    free(file);
    const char *bare = "grant g { fs { write cwd:; } }\n";
    f = audit_host_text(dir, bare, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *open = findings_with(f, "GK014", &n);
    ck_assert_msg(n == 1 && strstr(open, "the .git file itself"), "%s", open);
    grant_findings_free(f);
    free(file);
    rm_tree(dir);
}
END_TEST

START_TEST(test_unix_socket)
{
    char *dir = make_tmpdir();
    gk_autofree char *run = gk_path_join(dir, "run");
    make_dirs(run);
    gk_autofree char *sock = gk_path_join(run, "app.sock");
    int fd = bind_socket(sock);

    /* Readable: found, located at the read rule. */
    gk_autofree char *t1 = gk_printf("grant s {\n    fs {\n        read \"%s\";\n    }\n}\n", dir);
    char *file = NULL;
    grant_findings *f = audit_host_text(dir, t1, NULL, GRANT_TARGET_HOST, &file);
    size_t n = 0;
    gk_autofree char *got = findings_with(f, "GK005", &n);
    ck_assert_msg(n == 1, "want one GK005, got:\n%s", got);
    gk_autofree char *want = gk_printf("3 Unix socket %s lies inside readable region %s", sock, dir);
    ck_assert_msg(gk_has_prefix(got, want), "got: %s\nwant: %s", got, want);
    const char *loc_file;
    for (size_t i = 0; i < grant_findings_count(f); i++) {
        const char *id;
        grant_finding(f, i, &id, NULL, NULL, &loc_file, NULL, NULL);
        if (strcmp(id, "GK005") == 0)
            ck_assert_str_eq(loc_file, file);
    }
    grant_findings_free(f);
    free(file);

    /* Denied, or outside the readable region: nothing. */
    gk_autofree char *t2 =
        gk_printf("grant s { fs { read \"%s\"; deny \"%s\"; } }\n", dir, sock);
    gk_autofree char *other = gk_path_join(dir, "other");
    make_dirs(other);
    gk_autofree char *t3 = gk_printf("grant s { fs { read \"%s\"; } }\n", other);
    const char *quiet[2] = {t2, t3};
    for (int k = 0; k < 2; k++) {
        f = audit_host_text(dir, quiet[k], NULL, GRANT_TARGET_HOST, &file);
        gk_autofree char *g = findings_with(f, "GK005", &n);
        ck_assert_msg(n == 0, "case %d: unexpected GK005:\n%s", k, g);
        grant_findings_free(f);
        free(file);
    }

    /* An offline target never looks at this host. */
    f = audit_host_text(dir, t1, NULL, GRANT_TARGET_LINUX, &file);
    gk_autofree char *g = findings_with(f, "GK005", &n);
    ck_assert_msg(n == 0, "offline GK005:\n%s", g);
    grant_findings_free(f);
    free(file);
    close(fd);
    rm_tree(dir);
}
END_TEST

/* The scan is bounded (depth 2 below a region's top) and follows no
 * symlink: a socket three levels down is not found, not even through a
 * symlink that would bring it to depth two. */
START_TEST(test_unix_socket_scan_bounds)
{
    char *dir = make_tmpdir();
    gk_autofree char *deep = gk_path_join(dir, "a/b");
    make_dirs(deep);
    gk_autofree char *sock = gk_path_join(deep, "deep.sock");
    int fd = bind_socket(sock);
    gk_autofree char *link = gk_path_join(dir, "l");
    ck_assert_int_eq(symlink(deep, link), 0);
    gk_autofree char *t = gk_printf("grant s { fs { read \"%s\"; } }\n", dir);
    char *file = NULL;
    grant_findings *f = audit_host_text(dir, t, NULL, GRANT_TARGET_HOST, &file);
    size_t n = 0;
    gk_autofree char *g = findings_with(f, "GK005", &n);
    ck_assert_msg(n == 0, "found beyond the bounds:\n%s", g);
    grant_findings_free(f);
    free(file);

    /* The same socket as a region's top is found. */
    gk_autofree char *t2 = gk_printf("grant s { fs { read \"%s\"; } }\n", deep);
    f = audit_host_text(dir, t2, NULL, GRANT_TARGET_HOST, &file);
    gk_autofree char *g2 = findings_with(f, "GK005", &n);
    ck_assert_msg(n == 1, "want one GK005:\n%s", g2);
    grant_findings_free(f);
    free(file);
    close(fd);
    rm_tree(dir);
}
END_TEST

START_TEST(test_source_writable)
{
    char *dir = make_tmpdir();
    gk_autofree char *t1 = gk_printf("grant w {\n    fs { write \"%s\"; }\n}\n", dir);
    char *file = NULL;
    grant_findings *f = audit_host_text(dir, t1, NULL, GRANT_TARGET_HOST, &file);
    size_t n = 0;
    gk_autofree char *got = findings_with(f, "GK004", &n);
    ck_assert_msg(n == 1, "want one GK004:\n%s", got);
    gk_autofree char *want = gk_printf("2 policy source %s lies inside writable region %s", file,
                                       dir);
    ck_assert_msg(gk_has_prefix(got, want), "got: %s\nwant: %s", got, want);
    grant_findings_free(f);
    free(file);

    /* The region granted by an included file: the finding is the exposed
     * file's (the whole file, naming the rule), not a line of the include;
     * the included file, a source inside the region too, has its own. */
    gk_autofree char *libdir = gk_path_join(dir, "lib");
    ck_assert_int_eq(mkdir(libdir, 0755), 0);
    gk_autofree char *lib = gk_path_join(libdir, "base.grant");
    gk_autofree char *lib_text = gk_printf("grant base {\n    fs { write \"%s\"; }\n}\n", dir);
    write_text(lib, lib_text);
    f = audit_host_text(dir, "grant top {\n    include \"./lib/base.grant\";\n}\n", NULL,
                        GRANT_TARGET_HOST, &file);
    gk_strvec where = {0};
    for (size_t i = 0; i < grant_findings_count(f); i++) {
        const char *id, *ffile, *msg;
        unsigned line;
        grant_finding(f, i, &id, NULL, NULL, &ffile, &line, &msg);
        if (strcmp(id, "GK004") != 0)
            continue;
        gk_strvec_push_take(&where, gk_printf("%s@%u", ffile ? gk_basename(ffile) : "-", line));
        if (ffile && strcmp(ffile, file) == 0) {
            gk_autofree char *granted = gk_printf("(granted at %s:2)", lib);
            ck_assert_msg(strstr(msg, granted), "%s", msg);
        }
    }
    gk_autofree char *w2 = join_sorted(&where);
    ck_assert_str_eq(w2, "base.grant@2 p.grant@0");
    gk_strvec_free(&where);
    grant_findings_free(f);
    free(file);

    /* Protected by a readonly entry, or outside the writable part: quiet. */
    gk_autofree char *p = gk_path_join(dir, "p.grant");
    gk_autofree char *out = gk_path_join(dir, "out");
    gk_autofree char *t2 = gk_printf("grant w { fs { write \"%s\"; readonly \"%s\"; } }\n", dir, p);
    gk_autofree char *t3 = gk_printf("grant w { fs { read \"%s\"; write \"%s\"; } }\n", dir, out);
    const char *quiet[2] = {t2, t3};
    for (int k = 0; k < 2; k++) {
        f = audit_host_text(dir, quiet[k], NULL, GRANT_TARGET_HOST, &file);
        gk_autofree char *g = findings_with(f, "GK004", &n);
        ck_assert_msg(n == 0, "case %d: unexpected GK004:\n%s", k, g);
        grant_findings_free(f);
        free(file);
    }
    rm_tree(dir);
}
END_TEST

START_TEST(test_path_writable_host)
{
    char *dir = make_tmpdir();
    gk_autofree char *bin = gk_path_join(dir, "bin");
    make_dirs(bin);
    gk_autofree char *path_env = gk_printf("%s:/usr/bin", bin);
    gk_autofree char *t = gk_printf("grant w {\n    fs { read /usr; write \"%s\"; }\n}\n", dir);
    char *file = NULL;
    grant_findings *f = audit_host_text(dir, t, path_env, GRANT_TARGET_HOST, &file);
    size_t n = 0;
    gk_autofree char *got = findings_with(f, "GK006", &n);
    gk_autofree char *want = gk_printf("2 PATH directory %s lies inside writable region %s", bin, dir);
    ck_assert_msg(n == 1 && gk_has_prefix(got, want), "got:\n%s\nwant: %s", got, want);
    grant_findings_free(f);
    free(file);
    /* Read-only: quiet. */
    gk_autofree char *t2 = gk_printf("grant w { fs { write \"%s\"; readonly \"%s\"; } }\n", dir, bin);
    f = audit_host_text(dir, t2, path_env, GRANT_TARGET_HOST, &file);
    gk_autofree char *g2 = findings_with(f, "GK006", &n);
    ck_assert_msg(n == 0, "unexpected GK006:\n%s", g2);
    grant_findings_free(f);
    free(file);
    rm_tree(dir);
}
END_TEST

/* An absent deny under a read-only bind cannot be masked (Linux hosts). */
START_TEST(test_absent_mask_host)
{
#ifndef __linux__
    return;
#endif
    char *dir = make_tmpdir();
    gk_autofree char *absent = gk_path_join(dir, "absent");
    gk_autofree char *t1 = gk_printf("grant m {\n    fs {\n        read \"%s\";\n        deny "
                                     "\"%s\";\n    }\n}\n",
                                     dir, absent);
    char *file = NULL;
    grant_findings *f = audit_host_text(dir, t1, NULL, GRANT_TARGET_HOST, &file);
    size_t n = 0;
    gk_autofree char *got = findings_with(f, "GK012", &n);
    ck_assert_msg(n == 1 && gk_has_prefix(got, "4 deny "), "got:\n%s", got);
    grant_findings_free(f);
    free(file);
    /* Writable: bwrap creates the mountpoint and masks it. Existing: masked. */
    gk_autofree char *t2 = gk_printf("grant m { fs { write \"%s\"; deny \"%s\"; } }\n", dir, absent);
    gk_autofree char *present = gk_path_join(dir, "present");
    write_text(present, "x");
    gk_autofree char *t3 = gk_printf("grant m { fs { read \"%s\"; deny \"%s\"; } }\n", dir, present);
    const char *quiet[2] = {t2, t3};
    for (int k = 0; k < 2; k++) {
        f = audit_host_text(dir, quiet[k], NULL, GRANT_TARGET_HOST, &file);
        gk_autofree char *g = findings_with(f, "GK012", &n);
        ck_assert_msg(n == 0, "case %d: unexpected GK012:\n%s", k, g);
        grant_findings_free(f);
        free(file);
    }
    rm_tree(dir);
}
END_TEST

/* ---- grantc audit -------------------------------------------------------------- */

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

static run_result grantc_v(const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = gk_calloc(n + 2, sizeof *argv);
    argv[0] = gk_path_join(gk_test_builddir(), "grantc");
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    run_result r = {0};
    r.status = gk_test_run(argv, NULL, &r.out, &r.err);
    ck_assert_msg(r.status >= 0, "cannot run %s", argv[0]);
    free(argv[0]);
    free(argv);
    return r;
}

#define GRANTC(...) grantc_v((const char *const[]){__VA_ARGS__, NULL})

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* Exit status by --fail-on: clean-notes has notes only, shadowed-fs has
 * warnings; nothing is an error. */
static const struct {
    const char *file, *fail_on;
    int status;
} fail_on_cases[] = {
    {"clean-quiet.grant", NULL, 0},     {"clean-quiet.grant", "note", 0},
    {"clean-notes.grant", NULL, 0},     {"clean-notes.grant", "error", 0},
    {"clean-notes.grant", "warning", 0}, {"clean-notes.grant", "note", 1},
    {"clean-notes.grant", "none", 0},   {"shadowed-fs.grant", NULL, 0},
    {"shadowed-fs.grant", "error", 0},  {"shadowed-fs.grant", "warning", 1},
    {"shadowed-fs.grant", "note", 1},   {"shadowed-fs.grant", "none", 0},
};

START_TEST(test_cli_fail_on)
{
    gk_autofree char *path = data_path(fail_on_cases[_i].file);
    const char *formats[3] = {"text", "json", "sarif"};
    for (int k = 0; k < 3; k++) {
        run_result r = fail_on_cases[_i].fail_on
                           ? GRANTC("audit", LINUX_CTX, "--format", formats[k], "--fail-on",
                                    fail_on_cases[_i].fail_on, path)
                           : GRANTC("audit", LINUX_CTX, "--format", formats[k], path);
        ck_assert_msg(r.status == fail_on_cases[_i].status, "%s --fail-on %s --format %s: exit %d\n%s%s",
                      fail_on_cases[_i].file,
                      fail_on_cases[_i].fail_on ? fail_on_cases[_i].fail_on : "(default)",
                      formats[k], r.status, r.out, r.err);
        ck_assert_str_eq(r.err, "");
        run_free(&r);
    }
}
END_TEST

static const char *const usage_cases[][6] = {
    {"audit", NULL},
    {"audit", "--fail-on", "warnings", "@clean-notes.grant", NULL},
    {"audit", "--format", "xml", "@clean-notes.grant", NULL},
    {"audit", "--bogus", "@clean-notes.grant", NULL},
    {"audit", "@does-not-exist.grant", NULL},
    {"audit", "--fail-on", "none", "@../cli/bad.grant", NULL},
    {"audit", "--target", "plan9", "@clean-notes.grant", NULL},
};

START_TEST(test_cli_usage_errors)
{
    const char *const *c = usage_cases[_i];
    gk_strvec args = {0};
    for (size_t i = 0; c[i]; i++) {
        if (c[i][0] == '@') {
            gk_autofree char *p = data_path(c[i] + 1);
            gk_strvec_push(&args, p);
        } else {
            gk_strvec_push(&args, c[i]);
        }
    }
    gk_strvec_push_take(&args, NULL);
    run_result r = grantc_v((const char *const *)args.v);
    ck_assert_msg(r.status == 2, "case %d: exit %d\n%s", _i, r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "error") || strstr(r.err, "grantc: "), "case %d: no message: %s",
                  _i, r.err);
    run_free(&r);
    args.n--; /* the NULL terminator */
    gk_strvec_free(&args);
}
END_TEST

START_TEST(test_cli_text)
{
    gk_autofree char *path = data_path("shadowed-layers.grant");
    run_result r = GRANTC("audit", LINUX_CTX, path);
    ck_assert_int_eq(r.status, 0);
    regex_t located, summary;
    ck_assert_int_eq(regcomp(&located,
                             "^([^:]+:[0-9]+: |[^:]+: )?(error|warning|note)\\[GK[0-9]{3} "
                             "[a-z-]+\\]: .+$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    ck_assert_int_eq(regcomp(&summary,
                             "^[0-9]+ findings?: [0-9]+ errors?, [0-9]+ warnings?, [0-9]+ notes?$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    size_t lines = 0;
    char *save = NULL, *last = NULL;
    for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (last)
            ck_assert_msg(regexec(&located, last, 0, NULL, 0) == 0, "bad line: %s", last);
        last = l;
        lines++;
    }
    ck_assert_msg(last && regexec(&summary, last, 0, NULL, 0) == 0, "bad summary: %s", last);
    /* The library's count, by severity. */
    grant_findings *f = audit_data_file(path, NULL);
    ck_assert_uint_eq(lines, grant_findings_count(f) + 1);
    size_t count[3] = {0};
    for (size_t i = 0; i < grant_findings_count(f); i++) {
        grant_severity sev;
        grant_finding(f, i, NULL, NULL, &sev, NULL, NULL, NULL);
        count[sev]++;
    }
    ck_assert_msg(count[GRANT_SEVERITY_WARNING] > 1 && count[GRANT_SEVERITY_NOTE] > 1,
                  "the case needs warnings and notes");
    gk_autofree char *want = gk_printf("%zu findings: 0 errors, %zu warnings, %zu notes",
                                       grant_findings_count(f), count[GRANT_SEVERITY_WARNING],
                                       count[GRANT_SEVERITY_NOTE]);
    ck_assert_str_eq(last, want);
    grant_findings_free(f);
    regfree(&located);
    regfree(&summary);
    run_free(&r);

    gk_autofree char *quiet = data_path("clean-quiet.grant");
    r = GRANTC("audit", LINUX_CTX, quiet);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "no findings\n");
    run_free(&r);

    /* A finding without a location: no "file:line: " prefix. */
    gk_autofree char *sc = data_path("shell-capable.grant");
    r = GRANTC("audit", LINUX_CTX, sc);
    ck_assert_msg(strstr(r.out, "\nwarning[GK006 path-writable]: xdg:bin (/home/u/.local/bin)"),
                  "%s", r.out);
    gk_autofree char *loc = gk_printf("%s:8: warning[GK007 shell-capable]: ", sc);
    ck_assert_msg(strstr(r.out, loc), "%s", r.out);
    run_free(&r);
}
END_TEST

START_TEST(test_cli_json_and_sarif)
{
    gk_autofree char *path = data_path("shadowed-layers.grant");
    grant_findings *f = audit_data_file(path, NULL);
    gk_autofree char *lib = grant_findings_json(f);
    run_result r = GRANTC("audit", LINUX_CTX, "--format", "json", path);
    ck_assert_int_eq(r.status, 0);
    gk_autofree char *want = gk_printf("%s\n", lib);
    ck_assert_str_eq(r.out, want);
    run_free(&r);

    /* --cwd at the source tree: relative URIs, as GitHub maps them. */
    r = GRANTC("audit", "--target", "linux", "--home", "/home/u", "--cwd", gk_test_srcdir(),
               "--tempdir", "/scratch", "--path", "/usr/bin", "--format", "sarif", path);
    ck_assert_int_eq(r.status, 0);
    json_t *j = parse_json(r.out, "grantc audit --format sarif");
    char *why = sarif_problem(j);
    ck_assert_msg(why == NULL, "%s", why);
    ck_assert_msg(strstr(r.out, "\"uri\":\"" AUDIT_DIR "/shadowed-layers.grant\""), "%s", r.out);
    ck_assert_msg(strstr(r.out, "\"uri\":\"" AUDIT_DIR "/lib/layers-base.grant\""), "%s", r.out);
    json_decref(j);
    run_free(&r);
    grant_findings_free(f);

    /* --extend joins into the first file; the audit sees the result. */
    gk_autofree char *quiet = data_path("clean-quiet.grant");
    gk_autofree char *deputy = data_path("deputy.grant");
    r = GRANTC("audit", LINUX_CTX, "--format", "json", quiet, "--extend", deputy);
    ck_assert_msg(r.status == 0 && r.out[0] == '[', "exit %d\n%s%s", r.status, r.out, r.err);
    run_free(&r);

    r = GRANTC("audit", "--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "--fail-on") && strstr(r.out, "GK013"), "%s", r.out);
    run_free(&r);
}
END_TEST

/* ---- suite --------------------------------------------------------------------- */

static Suite *audit_suite(void)
{
    Suite *s = suite_create("audit");
    gk_autofree char *dir = gk_test_path(AUDIT_DIR);
    gk_strvec all = gk_test_files(dir, ".grant");
    gk_autofree char *lib = gk_path_join(dir, "lib/");
    for (size_t i = 0; i < all.n; i++)
        if (!gk_has_prefix(all.v[i], lib))
            gk_strvec_push(&audit_files, all.v[i]);
    gk_strvec_free(&all);

    TCase *tc = tcase_create("data");
    tcase_add_test(tc, test_corpus);
    tcase_add_loop_test(tc, test_expected_findings, 0, (int)audit_files.n);
    tcase_add_test(tc, test_table_and_order);
    tcase_add_test(tc, test_every_rule_has_a_case);
    tcase_add_loop_test(tc, test_messages, 0, (int)(sizeof(message_cases) / sizeof(*message_cases)));
    tcase_add_test(tc, test_library_rules_not_reported);
    suite_add_tcase(s, tc);

    tc = tcase_create("formats");
    tcase_add_test(tc, test_json_shape);
    tcase_add_test(tc, test_json_empty);
    tcase_add_test(tc, test_sarif_validator_rejects);
    tcase_add_test(tc, test_sarif_shape);
    tcase_add_test(tc, test_sarif_uris);
    suite_add_tcase(s, tc);

    tc = tcase_create("host");
    tcase_add_test(tc, test_unix_socket);
    tcase_add_test(tc, test_unix_socket_scan_bounds);
    tcase_add_test(tc, test_source_writable);
    tcase_add_test(tc, test_path_writable_host);
    tcase_add_test(tc, test_absent_mask_host);
    tcase_add_test(tc, test_git_writable_host);
    suite_add_tcase(s, tc);

    tc = tcase_create("cli");
    tcase_add_loop_test(tc, test_cli_fail_on, 0,
                        (int)(sizeof(fail_on_cases) / sizeof(*fail_on_cases)));
    tcase_add_loop_test(tc, test_cli_usage_errors, 0,
                        (int)(sizeof(usage_cases) / sizeof(*usage_cases)));
    tcase_add_test(tc, test_cli_text);
    tcase_add_test(tc, test_cli_json_and_sarif);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return gk_test_main(audit_suite());
}
