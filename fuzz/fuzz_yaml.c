/* fuzz_yaml.c - libFuzzer target for the YAML front end.
 *
 * bytes -> gk_load_yaml -> gk_ast_validate -> gk_fmt_yaml, then the
 * invariants of common.h: the fmt output loads again without errors;
 * in strict mode fmt is idempotent and yaml -> grant -> yaml gives back
 * the same canonical text.
 */
#include "common.h"

static void check_fmt_yaml(const gk_file_ast *ast, bool valid)
{
    size_t len = 0;
    char *text = gk_fmt_yaml(ast, &len);
    if (!text)
        fuzz_fail("gk_fmt_yaml returned NULL for a file that loaded", NULL, 0, NULL, 0, NULL);
    gk_source *src2 = NULL;
    gk_file_ast *ast2 = fuzz_reparse("fmt yaml", gk_load_yaml, "fuzz-fmt.yaml", text, len, valid, &src2);
    if (fuzz_strict()) {
        size_t len2 = 0;
        char *text2 = gk_fmt_yaml(ast2, &len2);
        fuzz_expect_same("fmt yaml is not idempotent", text, len, text2, len2);
        free(text2);
    }
    fuzz_release(ast2, src2);
    free(text);
}

/* yaml -> grant -> yaml: both surfaces print one canonical form. */
static void check_cross_surface(const gk_file_ast *ast)
{
    size_t glen = 0, ylen = 0, y2len = 0;
    char *grant = gk_fmt_grant(ast, false, &glen);
    if (!grant)
        fuzz_fail("gk_fmt_grant returned NULL for a file that loaded", NULL, 0, NULL, 0, NULL);
    gk_source *gsrc = NULL;
    gk_file_ast *gast = fuzz_reparse("yaml -> grant", gk_parse_grant, "fuzz-fmt.grant", grant, glen,
                                     true, &gsrc);
    char *yaml = gk_fmt_yaml(ast, &ylen);
    char *yaml2 = gk_fmt_yaml(gast, &y2len);
    fuzz_expect_same("yaml -> grant -> yaml changed the canonical text", yaml, ylen, yaml2, y2len);
    free(yaml);
    free(yaml2);
    fuzz_release(gast, gsrc);
    free(grant);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gk_source *src = gk_source_new("fuzz.yaml", (const char *)data, size);
    grant_diags *d = grant_diags_new();
    gk_file_ast *ast = gk_load_yaml(src, d);
    bool loaded = ast && grant_diags_errors(d) == 0;
    if (ast)
        gk_ast_validate(ast, d);
    bool valid = loaded && grant_diags_errors(d) == 0;
    fuzz_render_all(d);

    if (loaded) {
        check_fmt_yaml(ast, valid);
        /* Only valid files: the other surface cannot spell every invalid
         * rule (YAML has no `deny git [push]`). */
        if (fuzz_strict() && valid)
            check_cross_surface(ast);
    }
    gk_ast_free(ast);
    grant_diags_free(d);
    gk_source_unref(src);
    return 0;
}
