/* fuzz_grant.c - libFuzzer target for the grant-language front end.
 *
 * bytes -> gk_parse_grant -> gk_ast_validate -> gk_fmt_grant, then the
 * invariants of common.h: the fmt output parses again (with and
 * without comments); in strict mode fmt is idempotent and
 * grant -> yaml -> grant gives back the same canonical text.
 */
#include "common.h"

/* Print, reparse and (strict) print again: the second print must match. */
static void check_fmt_grant(const gk_file_ast *ast, bool keep_comments, bool valid)
{
    const char *what = keep_comments ? "fmt grant (comments kept)" : "fmt grant (no comments)";
    size_t len = 0;
    char *text = gk_fmt_grant(ast, keep_comments, &len);
    if (!text)
        fuzz_fail("gk_fmt_grant returned NULL for a file that parsed", NULL, 0, NULL, 0, NULL);
    gk_source *src2 = NULL;
    gk_file_ast *ast2 = fuzz_reparse(what, gk_parse_grant, "fuzz-fmt.grant", text, len, valid, &src2);
    if (fuzz_strict()) {
        size_t len2 = 0;
        char *text2 = gk_fmt_grant(ast2, keep_comments, &len2);
        char msg[120];
        snprintf(msg, sizeof(msg), "%s is not idempotent", what);
        fuzz_expect_same(msg, text, len, text2, len2);
        free(text2);
    }
    fuzz_release(ast2, src2);
    free(text);
}

/* grant -> yaml -> grant is the identity on the canonical form (spec §1). */
static void check_cross_surface(const gk_file_ast *ast)
{
    size_t ylen = 0, glen = 0, g2len = 0;
    char *yaml = gk_fmt_yaml(ast, &ylen);
    if (!yaml)
        fuzz_fail("gk_fmt_yaml returned NULL for a file that parsed", NULL, 0, NULL, 0, NULL);
    gk_source *ysrc = NULL;
    gk_file_ast *yast = fuzz_reparse("grant -> yaml", gk_load_yaml, "fuzz-fmt.yaml", yaml, ylen,
                                     true, &ysrc);
    char *grant = gk_fmt_grant(ast, false, &glen);
    char *grant2 = gk_fmt_grant(yast, false, &g2len);
    fuzz_expect_same("grant -> yaml -> grant changed the canonical text", grant, glen, grant2, g2len);
    free(grant);
    free(grant2);
    fuzz_release(yast, ysrc);
    free(yaml);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gk_source *src = gk_source_new("fuzz.grant", (const char *)data, size);
    grant_diags *d = grant_diags_new();
    gk_file_ast *ast = gk_parse_grant(src, d);
    bool parsed = ast && grant_diags_errors(d) == 0;
    /* Validation runs on partial ASTs too: callers report syntax and
     * semantic errors in one run. */
    if (ast)
        gk_ast_validate(ast, d);
    bool valid = parsed && grant_diags_errors(d) == 0;
    fuzz_render_all(d);

    if (parsed) {
        check_fmt_grant(ast, true, valid);
        check_fmt_grant(ast, false, valid);
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
