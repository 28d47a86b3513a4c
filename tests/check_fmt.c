/* check_fmt.c - the canonical printers.
 *
 * Golden files: tests/data/fmt/NAME.grant -> NAME.fmt.grant (fmt, comments
 * kept) and NAME.fmt.yaml (--to yaml). GK_REGEN=1 (gk_test_golden) rewrites them
 * (review the diff before committing).
 *
 * Properties over every .grant file under tests/data (except error and
 * reject directories) and policies/:
 *   grant -> yaml -> grant equals fmt without comments (the round trip);
 *   fmt is idempotent, with and without comments;
 *   fmt keeps every comment's text.
 * And every such .yaml file: yaml -> grant -> yaml equals fmt --to yaml.
 */
#include "testutil.h"
#include "syntax/syntax.h"

#include <jansson.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FMT_DIR "tests/data/fmt"

static gk_strvec golden, grants, yamls;

static const char *rel_name(const char *abs)
{
    const char *src = gk_test_srcdir();
    size_t n = strlen(src);
    if (strncmp(abs, src, n) == 0 && abs[n] == '/')
        return abs + n + 1;
    return abs;
}

/* ---- parse and print in-process ------------------------------------------- */

typedef struct parsed {
    gk_source *src;
    gk_file_ast *ast;
} parsed;

static parsed parse_text(const char *name, const char *text, size_t len, gk_surface surface)
{
    parsed p;
    grant_diags *d = grant_diags_new();
    p.src = gk_source_new(name, text, len);
    p.ast = surface == GK_SURFACE_YAML ? gk_load_yaml(p.src, d) : gk_parse_grant(p.src, d);
    ck_assert_ptr_nonnull(p.ast);
    if (grant_diags_errors(d) == 0)
        gk_ast_validate(p.ast, d);
    gk_autofree char *r = gk_test_render_diags(d);
    ck_assert_msg(grant_diags_errors(d) == 0, "%s does not parse:\n%s\n--- text ---\n%s", name,
                  r, text);
    grant_diags_free(d);
    return p;
}

static void parsed_free(parsed *p)
{
    gk_ast_free(p->ast);
    gk_source_unref(p->src);
}

static char *fmt_grant_text(const char *name, const char *text, gk_surface from, bool comments)
{
    parsed p = parse_text(name, text, strlen(text), from);
    char *out = gk_fmt_grant(p.ast, comments, NULL);
    parsed_free(&p);
    return out;
}

static char *fmt_yaml_text(const char *name, const char *text, gk_surface from)
{
    parsed p = parse_text(name, text, strlen(text), from);
    char *out = gk_fmt_yaml(p.ast, NULL);
    parsed_free(&p);
    return out;
}

static char *read_src(const char *path)
{
    char *t = gk_test_read(path, NULL);
    ck_assert_msg(t != NULL, "cannot read %s", path);
    return t;
}

/* ---- golden files --------------------------------------------------------- */

static void check_golden(const char *got, const char *base, const char *suffix)
{
    gk_autofree char *path = gk_printf("%s%s", base, suffix);
    gk_test_golden_text(path, got);
}

START_TEST(test_golden)
{
    const char *path = golden.v[_i];
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    ck_assert_ptr_nonnull(text);
    gk_autofree char *base = gk_strndup(path, strlen(path) - strlen(".grant"));
    const char *name = rel_name(path);

    grant_diags *d = grant_diags_new();
    char *out = NULL;
    size_t n = 0;
    ck_assert_int_eq(grant_fmt(name, text, len, GRANT_SURFACE_AUTO, GRANT_SURFACE_AUTO, d, &out, &n),
                     0);
    ck_assert_uint_eq(grant_diags_errors(d), 0);
    ck_assert_uint_eq(n, strlen(out));
    check_golden(out, base, ".fmt.grant");
    free(out);

    ck_assert_int_eq(grant_fmt(name, text, len, GRANT_SURFACE_GRANT, GRANT_SURFACE_YAML, d, &out, &n),
                     0);
    ck_assert_uint_eq(grant_diags_errors(d), 0);
    check_golden(out, base, ".fmt.yaml");
    free(out);
    grant_diags_free(d);
}
END_TEST

/* ---- properties over every grant file ------------------------------------- */

START_TEST(test_round_trip)
{
    const char *path = grants.v[_i];
    const char *name = rel_name(path);
    gk_autofree char *text = read_src(path);
    gk_autofree char *plain = fmt_grant_text(name, text, GK_SURFACE_GRANT, false);
    gk_autofree char *yaml = fmt_yaml_text(name, text, GK_SURFACE_GRANT);
    gk_autofree char *back = fmt_grant_text("round-trip.yaml", yaml, GK_SURFACE_YAML, false);
    ck_assert_msg(strcmp(back, plain) == 0, "%s: grant -> yaml -> grant differs\n--- fmt ---\n%s"
                  "--- yaml ---\n%s--- back ---\n%s", name, plain, yaml, back);
    /* and the YAML printer is stable on its own output */
    gk_autofree char *yaml2 = fmt_yaml_text("round-trip.yaml", yaml, GK_SURFACE_YAML);
    ck_assert_msg(strcmp(yaml2, yaml) == 0, "%s: fmt --to yaml is not idempotent\n%s---\n%s",
                  name, yaml, yaml2);
}
END_TEST

START_TEST(test_idempotent)
{
    const char *path = grants.v[_i];
    const char *name = rel_name(path);
    gk_autofree char *text = read_src(path);
    for (int comments = 0; comments < 2; comments++) {
        gk_autofree char *once = fmt_grant_text(name, text, GK_SURFACE_GRANT, comments);
        gk_autofree char *twice = fmt_grant_text(name, once, GK_SURFACE_GRANT, comments);
        ck_assert_msg(strcmp(once, twice) == 0,
                      "%s: fmt is not idempotent (comments %d)\n--- once ---\n%s--- twice ---\n%s",
                      name, comments, once, twice);
    }
}
END_TEST

static char *trimmed(const char *s, size_t n)
{
    while (n && strchr(" \t\r\n", s[n - 1]))
        n--;
    return gk_strndup(s, n);
}

START_TEST(test_comments_kept)
{
    const char *path = grants.v[_i];
    const char *name = rel_name(path);
    gk_autofree char *text = read_src(path);
    parsed in = parse_text(name, text, strlen(text), GK_SURFACE_GRANT);
    gk_autofree char *out = gk_fmt_grant(in.ast, true, NULL);
    parsed again = parse_text("out.grant", out, strlen(out), GK_SURFACE_GRANT);
    ck_assert_msg(again.ast->ncomments == in.ast->ncomments, "%s: %zu comments in, %zu out\n%s",
                  name, in.ast->ncomments, again.ast->ncomments, out);
    /* each comment's text, in order of the output's comments, as a multiset */
    bool *taken = gk_calloc(again.ast->ncomments + 1, sizeof(bool));
    for (size_t i = 0; i < in.ast->ncomments; i++) {
        gk_autofree char *c = trimmed(text + in.ast->comments[i].start,
                                      in.ast->comments[i].end - in.ast->comments[i].start);
        bool found = false;
        for (size_t j = 0; j < again.ast->ncomments && !found; j++) {
            if (taken[j])
                continue;
            gk_autofree char *o = trimmed(out + again.ast->comments[j].start,
                                          again.ast->comments[j].end - again.ast->comments[j].start);
            if (strcmp(c, o) == 0)
                found = taken[j] = true;
        }
        ck_assert_msg(found, "%s: comment '%s' lost\n%s", name, c, out);
    }
    free(taken);
    parsed_free(&again);
    parsed_free(&in);
}
END_TEST

START_TEST(test_yaml_files)
{
    const char *path = yamls.v[_i];
    const char *name = rel_name(path);
    gk_autofree char *text = read_src(path);
    gk_autofree char *yaml = fmt_yaml_text(name, text, GK_SURFACE_YAML);
    gk_autofree char *grant = fmt_grant_text(name, text, GK_SURFACE_YAML, true);
    gk_autofree char *yaml2 = fmt_yaml_text("back.grant", grant, GK_SURFACE_GRANT);
    ck_assert_msg(strcmp(yaml, yaml2) == 0, "%s: yaml -> grant -> yaml differs\n%s---\n%s", name,
                  yaml, yaml2);
    gk_autofree char *yaml3 = fmt_yaml_text("again.yaml", yaml, GK_SURFACE_YAML);
    ck_assert_str_eq(yaml3, yaml);
}
END_TEST

START_TEST(test_corpus_nonempty)
{
    /* the properties above must have something to run on */
    ck_assert_uint_ge(golden.n, 4);
    ck_assert_uint_ge(grants.n, golden.n * 2);
    ck_assert_uint_ge(yamls.n, 1);
}
END_TEST

/* ---- specific behaviours -------------------------------------------------- */

static char *fmt_str(const char *text, grant_surface to, int *rc, grant_diags *d)
{
    char *out = NULL;
    size_t n = 0;
    *rc = grant_fmt("t.grant", text, strlen(text), GRANT_SURFACE_AUTO, to, d, &out, &n);
    return out;
}

static void expect_fmt(const char *in, const char *want)
{
    int rc;
    grant_diags *d = grant_diags_new();
    gk_autofree char *got = fmt_str(in, GRANT_SURFACE_AUTO, &rc, d);
    gk_autofree char *r = gk_test_render_diags(d);
    ck_assert_msg(rc == 0, "fmt failed:\n%s", r);
    ck_assert_msg(strcmp(got, want) == 0, "--- got ---\n%s--- want ---\n%s", got, want);
    grant_diags_free(d);
}

START_TEST(test_grouping)
{
    expect_fmt("grant g { exec { allow a; allow b; deny c; allow d [x]; allow e; allow d [y x]; "
               "deny match \"^z$\"; deny f; } }",
               "grant g {\n    exec {\n        allow a b;\n        deny c;\n"
               "        allow d [x y];\n        allow e;\n        deny f;\n"
               "        deny match \"^z$\";\n    }\n}\n");
}
END_TEST

START_TEST(test_merged_comments_move_up)
{
    expect_fmt("grant g {\n exec {\n  allow a; # on a\n  allow b; # on b\n  allow c d; # on cd\n }\n}\n",
               "grant g {\n    exec {\n        # on a\n        # on b\n        # on cd\n"
               "        allow a b c d;\n    }\n}\n");
    expect_fmt("grant g {\n exec {\n  allow a b; # on ab\n  deny c; # on c\n }\n}\n",
               "grant g {\n    exec {\n        allow a b; # on ab\n        deny c; # on c\n"
               "    }\n}\n");
}
END_TEST

START_TEST(test_comment_places)
{
    expect_fmt("# top\ngrant g # name\n{ # open\n  net allow; # net\n  exec { # exec open\n"
               "  } # exec close\n  # end\n} # close\n# bottom\n",
               "# top\n# name\ngrant g {\n    exec {\n        # exec open\n    } # exec close\n"
               "    # open\n    net allow; # net\n    # end\n} # close\n# bottom\n");
}
END_TEST

START_TEST(test_quoting)
{
    expect_fmt("grant \"a b\" { exec { allow \"match\" \"allow\" \"x y\" \"#h\" a#b ~; "
               "allow d [exec \"a b\"]; } fs { read \"/a b\" \"/t\\tx\" /q; } }",
               "grant \"a b\" {\n    exec {\n        allow \"match\" \"allow\" \"x y\" \"#h\" a#b ~;\n"
               "        allow d [exec \"a b\"];\n    }\n    fs {\n"
               "        read \"/a b\" \"/t\\tx\" /q;\n    }\n}\n");
}
END_TEST

START_TEST(test_empty_forms)
{
    expect_fmt("grant{}", "grant {\n}\n");
    expect_fmt("grant e { exec {} fs {} shell {} editor {} }",
               "grant e {\n    exec { }\n    fs { }\n    shell { }\n    editor { }\n}\n");
    int rc;
    gk_autofree char *y = fmt_str("grant {}", GRANT_SURFACE_YAML, &rc, NULL);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(y, "{}\n");
    gk_autofree char *y2 = fmt_str("grant e { exec {} fs {} shell {} }", GRANT_SURFACE_YAML, &rc, NULL);
    ck_assert_str_eq(y2, "grant: e\nexec: {}\nfs: {}\nshell: {}\n");
    gk_autofree char *y3 = fmt_str("grant e { exec { deny match \"x\"; } }", GRANT_SURFACE_YAML, &rc,
                                   NULL);
    ck_assert_str_eq(y3, "grant: e\nexec-match:\n  x: deny\n");
}
END_TEST

START_TEST(test_errors_leave_no_output)
{
    int rc;
    grant_diags *d = grant_diags_new();
    char *out = fmt_str("grant g { exec { alow make; } }", GRANT_SURFACE_AUTO, &rc, d);
    ck_assert_int_eq(rc, -EPROTO);
    ck_assert_ptr_null(out);
    ck_assert_uint_gt(grant_diags_errors(d), 0);
    grant_diags_free(d);

    /* validation errors count too */
    d = grant_diags_new();
    out = fmt_str("grant g { net allow; net deny; }", GRANT_SURFACE_YAML, &rc, d);
    ck_assert_int_eq(rc, -EPROTO);
    ck_assert_ptr_null(out);
    grant_diags_free(d);
}
END_TEST

START_TEST(test_to_yaml_warns_about_comments)
{
    int rc;
    grant_diags *d = grant_diags_new();
    gk_autofree char *out = fmt_str("# c\ngrant g { }", GRANT_SURFACE_YAML, &rc, d);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(out, "grant: g\n");
    ck_assert_uint_eq(grant_diags_count(d), 1);
    ck_assert_int_eq(grant_diags_severity(d, 0), 1);
    grant_diags_free(d);
    /* and nothing without comments, nor for grant -> grant */
    d = grant_diags_new();
    gk_autofree char *o2 = fmt_str("grant g { }", GRANT_SURFACE_YAML, &rc, d);
    gk_autofree char *o3 = fmt_str("# c\ngrant g { }", GRANT_SURFACE_GRANT, &rc, d);
    ck_assert_uint_eq(grant_diags_count(d), 0);
    grant_diags_free(d);
}
END_TEST

static bool in_error_dir(const char *rel)
{
    /* Directories of inputs that are meant not to parse, and templates
     * whose '@' a test expands first (tests/data/gate/projection). */
    return strstr(rel, "error") || strstr(rel, "reject") || strstr(rel, "invalid") ||
           strstr(rel, "/bad") || strstr(rel, "gate/projection/");
}

static void collect(const char *reldir, const char *suffix, gk_strvec *out)
{
    gk_autofree char *dir = gk_test_path(reldir);
    gk_strvec v = gk_test_files(dir, suffix);
    for (size_t i = 0; i < v.n; i++)
        if (!in_error_dir(rel_name(v.v[i])))
            gk_strvec_push(out, v.v[i]);
    gk_strvec_free(&v);
}


/* Both surfaces compile alike: the IR of a grant file and of its YAML
 * conversion (placed beside it, so ./ includes resolve the same) differ
 * only in "sources" and in the layer origins, which name the file. */
static json_t *ir_without_file_names(grant_policy *p)
{
    char *ir = NULL;
    ck_assert_int_eq(grant_policy_ir(p, 0, &ir, NULL), 0);
    json_error_t e;
    json_t *j = json_loads(ir, 0, &e);
    ck_assert_ptr_nonnull(j);
    free(ir);
    json_object_del(j, "sources");
    json_object_del(json_object_get(j, "projection"), "protect"); /* the source files */
    size_t i;
    json_t *layer;
    json_array_foreach(json_object_get(j, "layers"), i, layer)
        json_object_del(layer, "origin");
    return j;
}

START_TEST(test_surfaces_compile_alike)
{
    const char *path = grants.v[_i];
    gk_autofree char *text = read_src(path);
    gk_autofree char *yaml = fmt_yaml_text(rel_name(path), text, GK_SURFACE_GRANT);
    gk_autofree char *stem = gk_strndup(path, strlen(path) - strlen(".grant"));
    gk_autofree char *yaml_name = gk_printf("%s.yaml", stem);

    grant_context *ctx = gk_test_context_linux();
    grant_diags *dg = grant_diags_new(), *dy = grant_diags_new();
    grant_policy *pg = NULL, *py = NULL;
    const char *files[1] = {path};
    int rg = grant_compile(ctx, files, 1, NULL, 0, dg, &pg);
    int ry = grant_compile_buffer(ctx, yaml_name, yaml, strlen(yaml), dy, &py);
    /* A file that does not compile (a sample of odd quoting) must fail on
     * both surfaces. */
    ck_assert_msg((rg == 0) == (ry == 0), "%s: grant compiles %d, yaml %d", path, rg, ry);
    if (rg == 0) {
        json_t *jg = ir_without_file_names(pg), *jy = ir_without_file_names(py);
        char *sg = json_dumps(jg, JSON_SORT_KEYS | JSON_INDENT(1));
        char *sy = json_dumps(jy, JSON_SORT_KEYS | JSON_INDENT(1));
        ck_assert_msg(json_equal(jg, jy), "%s: the surfaces compile differently\n--- grant\n%s\n--- yaml\n%s",
                      path, sg, sy);
        free(sg);
        free(sy);
        json_decref(jg);
        json_decref(jy);
    }
    grant_policy_free(pg);
    grant_policy_free(py);
    grant_diags_free(dg);
    grant_diags_free(dy);
    grant_context_free(ctx);
}
END_TEST


static Suite *fmt_suite(void)
{
    Suite *s = suite_create("fmt");

    gk_autofree char *fdir = gk_test_path(FMT_DIR);
    gk_strvec all = gk_test_files(fdir, ".grant");
    for (size_t i = 0; i < all.n; i++)
        if (!gk_has_suffix(all.v[i], ".fmt.grant"))
            gk_strvec_push(&golden, all.v[i]);
    gk_strvec_free(&all);
    collect("tests/data", ".grant", &grants);
    collect("policies", ".grant", &grants);
    collect("tests/data", ".yaml", &yamls);
    collect("tests/data", ".yml", &yamls);
    collect("policies", ".yaml", &yamls);
    collect("policies", ".yml", &yamls);

    TCase *tc = tcase_create("golden");
    tcase_add_loop_test(tc, test_golden, 0, (int)golden.n);
    suite_add_tcase(s, tc);

    tc = tcase_create("properties");
    tcase_add_test(tc, test_corpus_nonempty);
    tcase_add_loop_test(tc, test_round_trip, 0, (int)grants.n);
    tcase_add_loop_test(tc, test_idempotent, 0, (int)grants.n);
    tcase_add_loop_test(tc, test_comments_kept, 0, (int)grants.n);
    tcase_add_loop_test(tc, test_surfaces_compile_alike, 0, (int)grants.n);
    tcase_add_loop_test(tc, test_yaml_files, 0, (int)yamls.n);
    suite_add_tcase(s, tc);

    tc = tcase_create("behaviour");
    tcase_add_test(tc, test_grouping);
    tcase_add_test(tc, test_merged_comments_move_up);
    tcase_add_test(tc, test_comment_places);
    tcase_add_test(tc, test_quoting);
    tcase_add_test(tc, test_empty_forms);
    tcase_add_test(tc, test_errors_leave_no_output);
    tcase_add_test(tc, test_to_yaml_warns_about_comments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return gk_test_main(fmt_suite());
}
