/* fuzz_windows.c - libFuzzer target for the Windows target's paths (issue
 * 16.4, freeze/freeze.c and the gate's query reading): drive paths, both
 * separators, \\?\ and \\.\ prefixes, trailing dots and spaces, streams,
 * NTFS case folding, 8.3 short names, exec heads with PATHEXT.
 *
 * The input is lines: the first five are rule paths (read, write, deny,
 * allow exec, deny exec), written into a grant as strings; the rest are
 * queries. On the windows target (home C:/Users/u, cwd C:/w, tempdir
 * C:/Temp, PATH C:/Windows/System32;C:/Windows):
 *   - every diagnostic renders; a policy that compiles emits for
 *     appcontainer (json and powershell) or refuses cleanly;
 *   - each query answers alike for every spelling Windows reads as the
 *     same path: '/' for '\', ASCII case swapped, a \\?\ prefix on a drive
 *     path; for read, write and as a command head.
 */
#include "common.h"

static grant_context *ctx;

static void init(void)
{
    if (grant_context_new(&ctx) != 0 || grant_context_set_target(ctx, GRANT_TARGET_WINDOWS) ||
        grant_context_set(ctx, GRANT_CTX_HOME, "C:/Users/u") ||
        grant_context_set(ctx, GRANT_CTX_USER, "u") || grant_context_set(ctx, GRANT_CTX_CWD, "C:/w") ||
        grant_context_set(ctx, GRANT_CTX_TEMPDIR, "C:/Temp") ||
        grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows/System32;C:/Windows"))
        abort();
}

/* A grant string: quotes and backslashes escaped, control bytes dropped
 * (they are a lexical error, not a path). */
static void put_string(char *out, size_t *o, const char *s, size_t n)
{
    out[(*o)++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            continue;
        if (c == '"' || c == '\\')
            out[(*o)++] = '\\';
        out[(*o)++] = (char)c;
    }
    out[(*o)++] = '"';
}

static int answer_fs(const grant_policy *p, grant_op op, const char *path)
{
    grant_verdict *v = NULL;
    if (grant_check_fs(p, op, path, NULL, &v) != 0)
        return -1;
    int a = grant_verdict_answer(v);
    char *js = grant_verdict_json(v);
    free(js);
    grant_verdict_free(v);
    return a;
}

static int answer_exec(const grant_policy *p, const char *head)
{
    const char *argv[] = {head, NULL};
    grant_verdict *v = NULL;
    if (grant_check_exec(p, argv, 1, NULL, NULL, &v) != 0)
        return -1;
    int a = grant_verdict_answer(v);
    grant_verdict_free(v);
    return a;
}

static void same(const char *what, const char *q, const char *alt, int a, int b)
{
    if (a != b) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: the answers differ (%d, %d)", what, a, b);
        fuzz_fail(msg, q, strlen(q), alt, strlen(alt), NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx)
        init();
    if (size > 4096)
        return 0;
    const char *s = (const char *)data, *end = s + size;
    const char *line[5];
    size_t len[5];
    for (int i = 0; i < 5; i++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        line[i] = s;
        len[i] = (size_t)((nl ? nl : end) - s);
        s = nl ? nl + 1 : end;
    }
    char *text = malloc(size * 2 + 256);
    if (!text)
        abort();
    size_t o = 0;
    static const char *const parts[5] = {"fs { read ", "; write ", "; deny ", "; }\nexec { allow ",
                                         "; deny "};
    o += (size_t)sprintf(text + o, "grant w {\n");
    for (int i = 0; i < 5; i++) {
        o += (size_t)sprintf(text + o, "%s", parts[i]);
        put_string(text, &o, line[i], len[i]);
    }
    o += (size_t)sprintf(text + o, "; }\n}\n");
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile_buffer(ctx, "fuzz.grant", text, o, d, &p);
    fuzz_render_all(d);
    if (rc == 0 && p) {
        grant_backend be;
        if (grant_backend_from_name("appcontainer", &be) != 0)
            abort();
        static const char *const formats[] = {"json", "powershell"};
        for (int f = 0; f < 2; f++) {
            grant_diags *notes = grant_diags_new();
            char *out = NULL;
            size_t olen = 0;
            (void)grant_emit(p, be, formats[f], notes, &out, &olen);
            fuzz_render_all(notes);
            free(out);
            grant_diags_free(notes);
        }
        /* the queries: the rest of the input, a line each (at most 8) */
        for (int k = 0; k < 8 && s < end; k++) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = (size_t)((nl ? nl : end) - s);
            char *q = strndup(s, n);
            s = nl ? nl + 1 : end;
            if (!q)
                abort();
            if (strlen(q) != n || !*q) { /* a NUL inside: not a path */
                free(q);
                continue;
            }
            char *slash = strdup(q), *swapped = strdup(q);
            char *prefixed = malloc(n + 5);
            if (!slash || !swapped || !prefixed)
                abort();
            for (char *c = slash; *c; c++)
                if (*c == '/')
                    *c = '\\';
            for (char *c = swapped; *c; c++)
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))
                    *c ^= 0x20;
            bool drive = ((q[0] | 0x20) >= 'a' && (q[0] | 0x20) <= 'z') && q[1] == ':' &&
                         (q[2] == '/' || q[2] == '\\');
            snprintf(prefixed, n + 5, "\\\\?\\%s", q);
            for (int op = 0; op < 2; op++) {
                grant_op gop = op ? GRANT_OP_WRITE : GRANT_OP_READ;
                int a = answer_fs(p, gop, q);
                same("fs: '\\' for '/'", q, slash, a, answer_fs(p, gop, slash));
                same("fs: ASCII case", q, swapped, a, answer_fs(p, gop, swapped));
                if (drive)
                    same("fs: a \\\\?\\ prefix", q, prefixed, a, answer_fs(p, gop, prefixed));
            }
            int e = answer_exec(p, q);
            same("exec: '\\' for '/'", q, slash, e, answer_exec(p, slash));
            same("exec: ASCII case", q, swapped, e, answer_exec(p, swapped));
            free(prefixed);
            free(swapped);
            free(slash);
            free(q);
        }
    }
    grant_policy_free(p);
    grant_diags_free(d);
    free(text);
    return 0;
}
