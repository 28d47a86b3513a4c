/* fuzz_ir.c - libFuzzer target for the IR JSON reader (ir/ir_read.c): a
 * compiled policy is an input as much as a grant file is (grantc and
 * grantrun take .json), and one from elsewhere must fail closed.
 *
 * Bytes as a .json policy -> grant_compile_buffer (offline linux target, so
 * nothing of this host is consulted) -> every diagnostic rendered; when it
 * reads, its IR reads back without error to the same IR (the reader and
 * the writer agree), and every backend renders it or refuses cleanly.
 * Seeds: fuzz/seeds/ir (the IR of bundled and test policies).
 */
#include "common.h"

static grant_context *ctx;

static void init(void)
{
    if (grant_context_new(&ctx) != 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) ||
        grant_context_set(ctx, GRANT_CTX_HOME, "/home/u") ||
        grant_context_set(ctx, GRANT_CTX_USER, "u") || grant_context_set(ctx, GRANT_CTX_CWD, "/w") ||
        grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp") ||
        grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin"))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx)
        init();
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile_buffer(ctx, "fuzz.json", (const char *)data, size, d, &p);
    fuzz_render_all(d);
    if (rc == 0 && p) {
        char *ir = NULL;
        size_t len = 0;
        if (grant_policy_ir(p, 0, &ir, &len) != 0)
            abort();
        grant_diags *d2 = grant_diags_new();
        grant_policy *q = NULL;
        int rc2 = grant_compile_buffer(ctx, "fuzz.json", ir, len, d2, &q);
        fuzz_render_all(d2);
        if (rc2 != 0 || grant_diags_errors(d2))
            fuzz_fail("the IR of a policy read from JSON does not read back", ir, len,
                      (const char *)data, size, d2);
        char *ir2 = NULL;
        size_t len2 = 0;
        if (grant_policy_ir(q, 0, &ir2, &len2) != 0)
            abort();
        fuzz_expect_same("JSON -> policy -> IR -> policy -> IR changed the IR", ir, len, ir2,
                         len2);
        static const char *const backends[] = {"bwrap", "landlock", "seatbelt", "appcontainer"};
        for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
            grant_backend be;
            if (grant_backend_from_name(backends[b], &be) != 0)
                abort();
            grant_diags *notes = grant_diags_new();
            char *out = NULL;
            size_t olen = 0;
            int erc = grant_emit(p, be, NULL, notes, &out, &olen);
            fuzz_render_all(notes);
            if (erc == 0 && !out)
                fuzz_fail("an emitter succeeded with no output", ir, len, NULL, 0, notes);
            free(out);
            grant_diags_free(notes);
        }
        free(ir2);
        grant_policy_free(q);
        grant_diags_free(d2);
        free(ir);
    }
    grant_policy_free(p);
    grant_diags_free(d);
    return 0;
}
