/* check_yaml.c - the YAML surface: error cases as data, schema edge cases.
 *
 * Error cases: tests/data/yaml-errors/NAME.yaml with NAME.expected holding
 * every diagnostic grant_fmt reports, rendered and joined by newlines. The
 * file is handed over under its srcdir-relative name, so the expected text
 * is independent of where the tree lives. GK_REGEN=1 (gk_test_golden) rewrites the
 * .expected files (review the diff before committing).
 */
#include "testutil.h"
#include "syntax/syntax.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_DIR "tests/data/yaml-errors"

static gk_strvec error_cases;

/* srcdir-relative name of an absolute path under srcdir. */
static const char *rel_name(const char *abs)
{
    const char *src = gk_test_srcdir();
    size_t n = strlen(src);
    if (strncmp(abs, src, n) == 0 && abs[n] == '/')
        return abs + n + 1;
    return abs;
}

START_TEST(test_error_case)
{
    const char *path = error_cases.v[_i];
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    ck_assert_ptr_nonnull(text);
    const char *name = rel_name(path);

    grant_diags *d = grant_diags_new();
    char *out = (char *)"untouched";
    size_t outlen = 1;
    int rc = grant_fmt(name, text, len, GRANT_SURFACE_AUTO, GRANT_SURFACE_GRANT, d, &out, &outlen);
    ck_assert_msg(rc == -EPROTO, "%s: expected -EPROTO, got %d", name, rc);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(outlen, 0);
    ck_assert_uint_gt(grant_diags_errors(d), 0);
    gk_autofree char *got = gk_test_render_diags(d);
    grant_diags_free(d);

    gk_autofree char *exp_path = gk_strndup(path, strlen(path) - strlen(".yaml"));
    gk_autofree char *exp_file = gk_printf("%s.expected", exp_path);
    gk_autofree char *data = gk_printf("%s\n", got);
    gk_test_golden_text(exp_file, data);
}
END_TEST

/* Enough cases, and each covers one thing the spec names. */
START_TEST(test_error_corpus_complete)
{
    static const char *const required[] = {
        "unknown-key",      "fs-not-list",     "duplicate-key",   "alias",
        "anchor",           "multi-document",  "colon-flow",      "colon-block",
        "exec-null",        "match-allow",     "net-bad-bool",    "syntax-error",
        "subcmd-not-string", "dir-subcommands", "regex-unportable",
    };
    ck_assert_uint_ge(error_cases.n, 12);
    for (size_t i = 0; i < sizeof(required) / sizeof(*required); i++) {
        gk_autofree char *rel = gk_printf(ERR_DIR "/%s.yaml", required[i]);
        gk_autofree char *p = gk_test_path(rel);
        ck_assert_msg(gk_strvec_contains(&error_cases, p), "missing error case %s", rel);
    }
}
END_TEST

/* ---- loading edge cases --------------------------------------------------- */

typedef struct loaded {
    gk_source *src;
    gk_file_ast *ast;
    grant_diags *d;
} loaded;

static loaded load(const char *text)
{
    loaded l;
    l.d = grant_diags_new();
    l.src = gk_source_new("t.yaml", text, strlen(text));
    l.ast = gk_load_yaml(l.src, l.d);
    ck_assert_ptr_nonnull(l.ast);
    return l;
}

static void load_free(loaded *l)
{
    gk_ast_free(l->ast);
    gk_source_unref(l->src);
    grant_diags_free(l->d);
}

static void assert_clean(const loaded *l)
{
    gk_autofree char *r = gk_test_render_diags(l->d);
    ck_assert_msg(grant_diags_errors(l->d) == 0, "unexpected errors:\n%s", r);
}

START_TEST(test_true_is_a_command)
{
    loaded l = load("exec:\n  true: allow\n  false: deny\n  1.0: allow\n  null: allow\n");
    assert_clean(&l);
    ck_assert(l.ast->has_exec);
    ck_assert_uint_eq(l.ast->nexec, 4);
    const char *want[] = {"true", "false", "1.0", "null"};
    gk_verdict wv[] = {GK_ALLOW, GK_DENY, GK_ALLOW, GK_ALLOW};
    for (size_t i = 0; i < 4; i++) {
        const gk_exec_rule *r = &l.ast->exec[i];
        ck_assert_uint_eq(r->ntargets, 1);
        ck_assert_str_eq(r->targets[0].word.text, want[i]);
        ck_assert_int_eq(r->targets[0].kind, GK_T_NAME);
        ck_assert_int_eq(r->verdict, wv[i]);
        ck_assert(!r->has_subcmds);
        ck_assert(!r->targets[0].word.quoted);
    }
    load_free(&l);
}
END_TEST

START_TEST(test_tilde_is_home)
{
    loaded l = load("fs:\n  read: [~, ~/p, \"cwd:\", 2]\n  deny:\n    - ~\n");
    assert_clean(&l);
    ck_assert(l.ast->has_fs);
    ck_assert_uint_eq(l.ast->nfs, 2);
    const gk_fs_rule *r = &l.ast->fs[0];
    ck_assert_int_eq(r->kind, GK_FS_READ);
    ck_assert_uint_eq(r->npaths, 4);
    ck_assert_str_eq(r->paths[0].text, "~");
    ck_assert_str_eq(r->paths[1].text, "~/p");
    ck_assert_str_eq(r->paths[2].text, "cwd:");
    ck_assert_str_eq(r->paths[3].text, "2");
    ck_assert(!r->paths[0].quoted);
    ck_assert(r->paths[2].quoted);
    /* the path's location is the scalar, quotes included */
    const char *t = l.src->text;
    ck_assert_uint_eq(r->paths[2].loc.start, (uint32_t)(strstr(t, "\"cwd:\"") - t));
    ck_assert_uint_eq(r->paths[2].loc.end, r->paths[2].loc.start + 6);
    ck_assert_int_eq(l.ast->fs[1].kind, GK_FS_DENY);
    ck_assert_str_eq(l.ast->fs[1].paths[0].text, "~");
    load_free(&l);
}
END_TEST

START_TEST(test_targets_classified)
{
    loaded l = load("exec:\n  /usr/bin/: allow\n  \"xdg:bin/\": deny\n  ~/bin/x: [a, 1, true]\n"
                    "exec-match:\n  \"^py$\": deny\n");
    assert_clean(&l);
    ck_assert_uint_eq(l.ast->nexec, 4);
    ck_assert_int_eq(l.ast->exec[0].targets[0].kind, GK_T_DIR);
    ck_assert_int_eq(l.ast->exec[1].targets[0].kind, GK_T_DIR);
    ck_assert(l.ast->exec[1].targets[0].word.quoted);
    const gk_exec_rule *r = &l.ast->exec[2];
    ck_assert_int_eq(r->targets[0].kind, GK_T_PATH);
    ck_assert_int_eq(r->verdict, GK_ALLOW);
    ck_assert(r->has_subcmds);
    ck_assert_uint_eq(r->nsubcmds, 3);
    ck_assert_str_eq(r->subcmds[1].text, "1");
    ck_assert_str_eq(r->subcmds[2].text, "true");
    ck_assert_int_eq(l.ast->exec[3].targets[0].kind, GK_T_MATCH);
    ck_assert_str_eq(l.ast->exec[3].targets[0].word.text, "^py$");
    ck_assert_int_eq(l.ast->exec[3].verdict, GK_DENY);
    /* every rule points into the YAML */
    for (size_t i = 0; i < l.ast->nexec; i++) {
        ck_assert_ptr_eq(l.ast->exec[i].loc.src, l.src);
        ck_assert_uint_gt(l.ast->exec[i].loc.end, l.ast->exec[i].loc.start);
    }
    load_free(&l);
}
END_TEST

START_TEST(test_empty_sections)
{
    loaded l = load("exec: {}\nfs: {}\nshell: {}\neditor: {}\n");
    assert_clean(&l);
    ck_assert(l.ast->has_exec && l.ast->nexec == 0);
    ck_assert(l.ast->has_fs && l.ast->nfs == 0);
    ck_assert(l.ast->has_shell && l.ast->shell_chdir.value == GK_UNSET);
    ck_assert(l.ast->has_editor);
    ck_assert_ptr_null(l.ast->name.text);
    load_free(&l);

    /* An explicit empty mapping is a grant that says nothing ... */
    loaded e = load("{}\n");
    assert_clean(&e);
    ck_assert(!e.ast->has_exec && !e.ast->has_fs && !e.ast->has_shell);
    ck_assert_int_eq(e.ast->net.value, GK_UNSET);
    load_free(&e);
    /* ... but a file with no document in it is an error, as an empty .grant
     * is: a truncated or blanked policy must never widen to "no opinion"
     * (the exact messages: tests/data/yaml-errors/empty.yaml and friends). */
    const char *empties[] = {"", "---\n", "# only a comment\n", "\n\n", "--- # c\n...\n"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(*empties); i++) {
        loaded n = load(empties[i]);
        ck_assert_msg(grant_diags_count(n.d) == 1, "case %zu: want one error", i);
        load_free(&n);
    }
}
END_TEST

START_TEST(test_scalars)
{
    loaded l = load("grant: g\nnet: true\nshell: {chdir: deny}\n"
                    "editor: {read: allow, write: false, tui: True}\naudit: true\n");
    assert_clean(&l);
    ck_assert_str_eq(l.ast->name.text, "g");
    ck_assert_int_eq(l.ast->net.value, GK_ALLOW);
    ck_assert_ptr_eq(l.ast->net.loc.src, l.src);
    ck_assert_int_eq(l.ast->shell_chdir.value, GK_DENY);
    ck_assert_int_eq(l.ast->editor_read.value, GK_ALLOW);
    ck_assert_int_eq(l.ast->editor_write.value, GK_DENY);
    ck_assert_int_eq(l.ast->editor_tui.value, GK_ALLOW);
    ck_assert(l.ast->audit);
    load_free(&l);

    loaded f = load("audit: false\nnet: deny\n");
    assert_clean(&f);
    ck_assert(!f.ast->audit);
    ck_assert_int_eq(f.ast->net.value, GK_DENY);
    load_free(&f);
}
END_TEST

/* Marks count code points; locations are bytes. */
START_TEST(test_locations_are_bytes)
{
    loaded l = load("grant: caf\xc3\xa9\nfs:\n  read: [/\xc3\xa9t\xc3\xa9, /x]\n");
    assert_clean(&l);
    const char *t = l.src->text;
    const gk_word *w = &l.ast->fs[0].paths[1];
    ck_assert_str_eq(w->text, "/x");
    ck_assert_uint_eq(w->loc.start, (uint32_t)(strstr(t, "/x") - t));
    ck_assert_uint_eq(w->loc.end, w->loc.start + 2);
    ck_assert_str_eq(l.ast->name.text, "caf\xc3\xa9");
    ck_assert_uint_eq(l.ast->name.loc.end - l.ast->name.loc.start, 5);
    load_free(&l);
}
END_TEST

START_TEST(test_errors_collected)
{
    /* independent errors are all reported in one run */
    loaded l = load("grant: g\nexce: {}\nnet: maybe\nfs:\n  read: /x\n");
    ck_assert_uint_eq(grant_diags_errors(l.d), 3);
    load_free(&l);
}
END_TEST

/* ---- twins ---------------------------------------------------------------- */

static char *fmt_file(const char *path, gk_surface surface)
{
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    grant_diags *d = grant_diags_new();
    gk_source *src = gk_source_new(rel_name(path), text, len);
    gk_file_ast *ast =
        surface == GK_SURFACE_YAML ? gk_load_yaml(src, d) : gk_parse_grant(src, d);
    gk_ast_validate(ast, d);
    gk_autofree char *r = gk_test_render_diags(d);
    ck_assert_msg(grant_diags_errors(d) == 0, "%s:\n%s", path, r);
    char *out = gk_fmt_grant(ast, false, NULL);
    gk_ast_free(ast);
    gk_source_unref(src);
    grant_diags_free(d);
    return out;
}

static void check_twin(const char *grant_rel, const char *yaml_rel)
{
    gk_autofree char *gp = gk_test_path(grant_rel);
    gk_autofree char *yp = gk_test_path(yaml_rel);
    gk_autofree char *a = fmt_file(gp, GK_SURFACE_GRANT);
    gk_autofree char *b = fmt_file(yp, GK_SURFACE_YAML);
    ck_assert_msg(strcmp(a, b) == 0, "%s and %s differ:\n%s\n---\n%s", grant_rel, yaml_rel, a, b);
}

START_TEST(test_spec_twin)
{
    check_twin("tests/data/fmt/spec.grant", "tests/data/fmt/spec.twin.yaml");
}
END_TEST

START_TEST(test_policy_twin)
{
    gk_autofree char *yp = gk_test_path("policies/base/reasonable.yaml");
    gk_autofree char *y = gk_test_read(yp, NULL);
    if (!y)
        return; /* not written yet */
    check_twin("policies/base/reasonable.grant", "policies/base/reasonable.yaml");
}
END_TEST

/* ---- grant_fmt's YAML side ------------------------------------------------ */

static int fmt_text(const char *name, const char *text, grant_surface to, grant_diags *d,
                    char **out)
{
    size_t n;
    return grant_fmt(name, text, strlen(text), GRANT_SURFACE_AUTO, to, d, out, &n);
}

START_TEST(test_comment_warning)
{
    grant_diags *d = grant_diags_new();
    char *out = NULL;
    ck_assert_int_eq(fmt_text("c.yaml", "grant: c  # the name\nnet: deny\n", GRANT_SURFACE_GRANT,
                              d, &out),
                     0);
    ck_assert_str_eq(out, "grant c {\n    net deny;\n}\n");
    free(out);
    ck_assert_uint_eq(grant_diags_count(d), 1);
    ck_assert_int_eq(grant_diags_severity(d, 0), 1);
    ck_assert_str_eq(grant_diags_message(d, 0),
                     "comments are not carried over from YAML (libyaml does not report them)");
    grant_diags_free(d);

    /* '#' inside scalars is not a comment */
    const char *no_comment[] = {
        "grant: \"a #b\"\nnet: deny\n",
        "grant: 'x #y'\n",
        "exec:\n  a#b: allow\n",
        "fs:\n  read: [\"/x #y\", /a#b]\n",
    };
    for (size_t i = 0; i < 4; i++) {
        d = grant_diags_new();
        ck_assert_int_eq(fmt_text("c.yml", no_comment[i], GRANT_SURFACE_GRANT, d, &out), 0);
        free(out);
        ck_assert_msg(grant_diags_count(d) == 0, "case %zu warned", i);
        grant_diags_free(d);
    }
}
END_TEST

START_TEST(test_yaml_to_yaml)
{
    grant_diags *d = grant_diags_new();
    char *out = NULL;
    ck_assert_int_eq(fmt_text("x.yml",
                              "audit: true\nfs:\n  deny: [\"~/.ssh\"]\n  read:\n    - /usr\n"
                              "exec:\n  git: [log, log, diff]\n  true: allow\ngrant: x\n",
                              GRANT_SURFACE_AUTO, d, &out),
                     0);
    ck_assert_str_eq(out, "grant: x\nexec:\n  git: [log, diff]\n  \"true\": allow\nfs:\n"
                          "  read: [/usr]\n  deny: [~/.ssh]\naudit: true\n");
    free(out);
    grant_diags_free(d);
}
END_TEST

START_TEST(test_bad_arguments)
{
    char *out = NULL;
    size_t n;
    ck_assert_int_eq(grant_fmt(NULL, "", 0, 0, 0, NULL, &out, &n), -EINVAL);
    ck_assert_int_eq(grant_fmt("a.yaml", "", 0, 0, 0, NULL, NULL, &n), -EINVAL);
    ck_assert_int_eq(grant_fmt("a.yaml", "", 0, (grant_surface)7, 0, NULL, &out, &n), -EINVAL);
    ck_assert_ptr_null(out);
    /* diags may be NULL: the result is the same */
    ck_assert_int_eq(grant_fmt("a.yaml", "net: maybe\n", 11, 0, 0, NULL, &out, &n), -EPROTO);
    ck_assert_ptr_null(out);
}
END_TEST

static Suite *yaml_suite(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("errors");
    gk_autofree char *dir = gk_test_path(ERR_DIR);
    error_cases = gk_test_files(dir, ".yaml");
    tcase_add_loop_test(tc, test_error_case, 0, (int)error_cases.n);
    tcase_add_test(tc, test_error_corpus_complete);
    suite_add_tcase(s, tc);

    tc = tcase_create("load");
    tcase_add_test(tc, test_true_is_a_command);
    tcase_add_test(tc, test_tilde_is_home);
    tcase_add_test(tc, test_targets_classified);
    tcase_add_test(tc, test_empty_sections);
    tcase_add_test(tc, test_scalars);
    tcase_add_test(tc, test_locations_are_bytes);
    tcase_add_test(tc, test_errors_collected);
    suite_add_tcase(s, tc);

    tc = tcase_create("twins");
    tcase_add_test(tc, test_spec_twin);
    tcase_add_test(tc, test_policy_twin);
    suite_add_tcase(s, tc);

    tc = tcase_create("fmt");
    tcase_add_test(tc, test_comment_warning);
    tcase_add_test(tc, test_yaml_to_yaml);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return gk_test_main(yaml_suite());
}
