/* common.h - shared checks of the two front-end fuzz targets.
 *
 * A crash, a sanitizer report or a leak is a finding; so is a broken
 * invariant, which we turn into abort() so libFuzzer saves the input:
 *   - fmt output of a file that parsed must parse again without errors,
 *     and validate cleanly when the original did;
 *   - strict mode (default; GK_FUZZ_LAX=1 turns it off): fmt is idempotent,
 *     and a valid file round-trips through the other surface to the same
 *     canonical text.
 */
#ifndef GK_FUZZ_COMMON_H
#define GK_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syntax/syntax.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fuzz_strict(void)
{
    static int strict = -1;
    if (strict < 0) {
        const char *lax = getenv("GK_FUZZ_LAX");
        strict = !(lax && *lax && strcmp(lax, "0") != 0);
    }
    return strict;
}

static void fuzz_dump_diags(const grant_diags *d)
{
    for (size_t i = 0; i < grant_diags_count(d); i++) {
        char *s = grant_diags_render(d, i);
        fprintf(stderr, "%s\n", s ? s : "(null)");
        free(s);
    }
}

/* Rendering walks line tables and carets: out-of-range locations show up
 * here under ASan even when nobody prints them. */
static void fuzz_render_all(const grant_diags *d)
{
    for (size_t i = 0; i < grant_diags_count(d); i++) {
        char *s = grant_diags_render(d, i);
        if (!s)
            abort();
        (void)grant_diags_message(d, i);
        (void)grant_diags_severity(d, i);
        free(s);
    }
}

__attribute__((noreturn)) static void fuzz_fail(const char *what, const char *first, size_t flen,
                                                const char *second, size_t slen,
                                                const grant_diags *d)
{
    fprintf(stderr, "\n==== grantkit fuzz invariant broken: %s\n", what);
    if (first)
        fprintf(stderr, "---- first text (%zu bytes)\n%.*s\n", flen, (int)flen, first);
    if (second)
        fprintf(stderr, "---- second text (%zu bytes)\n%.*s\n", slen, (int)slen, second);
    if (d) {
        fprintf(stderr, "---- diagnostics\n");
        fuzz_dump_diags(d);
    }
    fprintf(stderr, "====\n");
    abort();
}

typedef gk_file_ast *(*fuzz_parse_fn)(gk_source *src, grant_diags *diags);

/* Parse text (printed by fmt) with parse; it must have no errors, and must
 * validate cleanly when expect_valid. Returns the AST; the caller frees it
 * and *src_out. */
static gk_file_ast *fuzz_reparse(const char *what, fuzz_parse_fn parse, const char *name,
                                 const char *text, size_t len, bool expect_valid,
                                 gk_source **src_out)
{
    gk_source *src = gk_source_new(name, text, len);
    grant_diags *d = grant_diags_new();
    gk_file_ast *ast = parse(src, d);
    if (!ast || grant_diags_errors(d) != 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: fmt output does not parse", what);
        fuzz_fail(msg, text, len, NULL, 0, d);
    }
    gk_ast_validate(ast, d);
    if (expect_valid && grant_diags_errors(d) != 0) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%s: fmt output of a valid file does not validate", what);
        fuzz_fail(msg, text, len, NULL, 0, d);
    }
    fuzz_render_all(d);
    grant_diags_free(d);
    *src_out = src;
    return ast;
}

static void fuzz_expect_same(const char *what, const char *a, size_t alen, const char *b,
                             size_t blen)
{
    if (alen != blen || memcmp(a, b, alen) != 0)
        fuzz_fail(what, a, alen, b, blen, NULL);
}

static void fuzz_release(gk_file_ast *ast, gk_source *src)
{
    gk_ast_free(ast);
    gk_source_unref(src);
}

#endif
