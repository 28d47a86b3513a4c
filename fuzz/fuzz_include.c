/* fuzz_include.c - libFuzzer target for includes through the file system
 * (compile/compile.c: include and extends, the policy path, bounded reads).
 *
 * The input is split at each "\n%%\n" into up to four texts, written as
 * files in a private directory made once per process:
 *   DIR/main.grant   (compiled)
 *   DIR/lib/a.grant, DIR/lib/b.grant, DIR/lib/c.yaml
 * The policy path is DIR/lib, so `include "a.grant"`, `include "./lib/b.grant"`
 * and `extends "c.yaml"` reach them; beside them sit what an include must
 * not follow or read: DIR/lib/fifo.grant (a FIFO), DIR/lib/up (a symlink to
 * /etc), DIR/lib/self.grant (including itself), DIR/secret (outside the
 * policy path). Then:
 *   - every diagnostic renders (bad positions show under ASan);
 *   - a policy that compiles prints an IR, and that IR compiles again
 *     without errors (its sources are on disk, unchanged: the digest and
 *     real checks of ir/ir_read.c pass) to the same IR.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static grant_context *ctx;
static char dir[64];
static const char *const names[4] = {"main.grant", "lib/a.grant", "lib/b.grant", "lib/c.yaml"};

static void put(const char *rel, const char *text, size_t len)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    if (!f || (len && fwrite(text, 1, len, f) != len) || fclose(f) != 0)
        abort();
}

static void init(void)
{
    snprintf(dir, sizeof(dir), "/tmp/gk-fuzz-include-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    char p[128];
    snprintf(p, sizeof(p), "%s/lib", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/lib/fifo.grant", dir);
    mkfifo(p, 0644);
    snprintf(p, sizeof(p), "%s/lib/up", dir);
    if (symlink("/etc", p) < 0)
        abort();
    { const char *t = "include \"self.grant\";\ngrant s { net deny; }\n"; put("lib/self.grant", t, strlen(t)); }
    put("secret", "root:$6$not-a-policy\n", strlen("root:$6$not-a-policy\n"));
    snprintf(p, sizeof(p), "%s/lib", dir);
    if (grant_context_new(&ctx) != 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) ||
        grant_context_set(ctx, GRANT_CTX_HOME, "/home/u") ||
        grant_context_set(ctx, GRANT_CTX_USER, "u") || grant_context_set(ctx, GRANT_CTX_CWD, dir) ||
        grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp") ||
        grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin") ||
        grant_context_set_policy_path(ctx, p))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx)
        init();
    const char *s = (const char *)data, *end = s + size;
    for (int i = 0; i < 4; i++) {
        const char *cut = NULL;
        for (const char *q = s; i < 3 && q + 4 <= end; q++)
            if (memcmp(q, "\n%%\n", 4) == 0) {
                cut = q;
                break;
            }
        const char *stop = cut ? cut + 1 : end;
        put(names[i], s, (size_t)(stop - s));
        s = cut ? cut + 4 : end;
    }
    char main_path[128];
    snprintf(main_path, sizeof(main_path), "%s/main.grant", dir);
    const char *files[] = {main_path};
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
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
            fuzz_fail("the IR of a compiled policy does not read back", ir, len, NULL, 0, d2);
        char *ir2 = NULL;
        size_t len2 = 0;
        if (grant_policy_ir(q, 0, &ir2, &len2) != 0)
            abort();
        fuzz_expect_same("IR -> policy -> IR changed the IR", ir, len, ir2, len2);
        free(ir2);
        grant_policy_free(q);
        grant_diags_free(d2);
        free(ir);
    }
    grant_policy_free(p);
    grant_diags_free(d);
    return 0;
}
