/* fuzz_yaml_keys.c - libFuzzer target for the YAML loader's key checks
 * (syntax/yaml.c check_keys: duplicate keys, keys that are no strings).
 *
 * The input is a string of choices: each byte picks the next piece of a
 * YAML policy, a top-level mapping of sections (grant, exec, fs, net,
 * shell, include...) whose values are block or flow mappings of keys from
 * a small vocabulary (so keys repeat often), each key spelled plain,
 * 'single' or "double" quoted, sometimes a non-string key ([a], {a: b}),
 * up to a few thousand keys (the check must stay near-linear: libFuzzer's
 * -timeout catches a quadratic one). The generator knows which mappings
 * repeat a key, so:
 *   - a document without a repeated key gets no "duplicate key" error;
 *   - a repeated top-level key, or one repeated inside the first exec or
 *     fs section, gets one;
 *   - every diagnostic renders; a document that loads formats (fmt_yaml).
 */
#include "common.h"

typedef struct gen {
    const uint8_t *d;
    size_t n, i;
    uint64_t h;
} gen;

static unsigned pick(gen *g, unsigned k)
{
    unsigned v;
    if (g->i < g->n) {
        v = g->d[g->i++];
    } else {
        g->h = g->h * 6364136223846793005ull + 1442695040888963407ull;
        v = (unsigned)(g->h >> 33);
    }
    return k ? v % k : 0;
}

static const char *const sections[] = {"grant", "exec", "fs", "net", "shell", "editor",
                                       "include", "extends", "audit", "exec"};
static const char *const exec_keys[] = {"git", "make", "cc", "/usr/bin/", "/usr/bin/env",
                                        "python3", "ls", "gi\\x74"};
static const char *const fs_keys[] = {"read", "write", "deny", "readonly", "read"};

/* Key k in one of three spellings; the decoded text goes to seen. */
static void put_key(gen *g, gk_buf *b, const char *k)
{
    switch (pick(g, 3)) {
    case 0: gk_buf_puts(b, k); break;
    case 1: gk_buf_puts(b, "'"); gk_buf_puts(b, k); gk_buf_puts(b, "'"); break;
    default: gk_buf_puts(b, "\""); gk_buf_puts(b, k); gk_buf_puts(b, "\""); break;
    }
}

/* The decoded key: "gi\x74" is "git" only in double quotes; we avoid the
 * question by using that spelling plain only (where it stays literal). */
static const char *key_text(const char *k) { return k; }

static bool seen_add(gk_strvec *seen, const char *k)
{
    for (size_t i = 0; i < seen->n; i++)
        if (strcmp(seen->v[i], k) == 0)
            return true;
    gk_strvec_push(seen, k);
    return false;
}

/* A mapping of nkeys keys from vocab at indent; returns whether a key
 * repeated. flow: {k: v, ...}. */
static bool put_map(gen *g, gk_buf *b, const char *const *vocab, size_t nv, bool fs, bool flow)
{
    gk_strvec seen = {0};
    bool dup = false;
    size_t nkeys = 1 + pick(g, 6);
    if (pick(g, 16) == 0)
        nkeys = 200 + pick(g, 256) * 8; /* large: near-linear or timeout */
    if (flow)
        gk_buf_puts(b, " {");
    else
        gk_buf_puts(b, "\n");
    for (size_t i = 0; i < nkeys; i++) {
        char tmp[32];
        const char *k = vocab[pick(g, (unsigned)nv)];
        if (nkeys > 8 && pick(g, 4)) { /* mostly distinct in large maps */
            snprintf(tmp, sizeof(tmp), "%s%zu", fs ? "read" : "cmd", i);
            k = tmp;
        }
        if (strchr(k, '\\'))
            pick(g, 1); /* keep the byte stream aligned */
        if (flow && i)
            gk_buf_puts(b, ", ");
        else if (!flow)
            gk_buf_puts(b, "  ");
        bool quoted_escape = strchr(k, '\\') != NULL;
        if (quoted_escape)
            gk_buf_puts(b, k); /* plain: backslash is literal */
        else
            put_key(g, b, k);
        dup |= seen_add(&seen, key_text(k));
        gk_buf_puts(b, ": ");
        gk_buf_puts(b, fs ? "[/tmp]" : pick(g, 2) ? "allow" : "[log, diff]");
        if (!flow)
            gk_buf_puts(b, "\n");
    }
    if (flow)
        gk_buf_puts(b, "}\n");
    gk_strvec_free(&seen);
    return dup;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gen g = {data, size, 0, 0x9e3779b97f4a7c15ull ^ size};
    for (size_t i = 0; i < size; i++)
        g.h = (g.h ^ data[i]) * 1099511628211ull;
    gk_buf b = {0};
    gk_strvec top = {0};
    bool top_dup = false, sec_dup = false, any_dup = false;
    bool seen_exec = false, seen_fs = false, nonstring = false;
    size_t nsec = 1 + pick(&g, 8);
    for (size_t s = 0; s < nsec; s++) {
        const char *sec = sections[pick(&g, sizeof(sections) / sizeof(*sections))];
        if (pick(&g, 24) == 0) {
            gk_buf_puts(&b, pick(&g, 2) ? "[a]: x\n" : "{a: b}: x\n");
            nonstring = true;
            continue;
        }
        put_key(&g, &b, sec);
        bool d = seen_add(&top, sec);
        top_dup |= d;
        gk_buf_puts(&b, ":");
        bool flow = pick(&g, 3) == 0;
        if (strcmp(sec, "exec") == 0 || strcmp(sec, "fs") == 0) {
            bool fs = sec[0] == 'f';
            bool md = fs ? put_map(&g, &b, fs_keys, 5, true, flow)
                         : put_map(&g, &b, exec_keys, 8, false, flow);
            any_dup |= md;
            if (!d && md)
                sec_dup = true;
            if (fs)
                seen_fs = true;
            else
                seen_exec = true;
        } else if (strcmp(sec, "include") == 0 || strcmp(sec, "extends") == 0) {
            gk_buf_puts(&b, " [./x.grant]\n");
        } else if (strcmp(sec, "grant") == 0) {
            gk_buf_puts(&b, " g\n");
        } else {
            gk_buf_puts(&b, pick(&g, 2) ? " allow\n" : " deny\n");
        }
    }
    (void)seen_exec;
    (void)seen_fs;
    any_dup |= top_dup;
    size_t len = 0;
    char *text = gk_buf_steal(&b, &len);
    gk_source *src = gk_source_new("fuzz.yaml", text, len);
    grant_diags *d = grant_diags_new();
    gk_file_ast *ast = gk_load_yaml(src, d);
    fuzz_render_all(d);
    bool reported = false;
    for (size_t i = 0; i < grant_diags_count(d); i++)
        reported |= strstr(grant_diags_message(d, i), "duplicate key") != NULL;
    if (!any_dup && reported)
        fuzz_fail("a duplicate key reported where none is", text, len, NULL, 0, d);
    if ((top_dup || sec_dup) && !reported && !nonstring)
        fuzz_fail("a repeated key not reported", text, len, NULL, 0, d);
    if (ast && grant_diags_errors(d) == 0) {
        size_t flen = 0;
        char *f = gk_fmt_yaml(ast, &flen);
        if (!f)
            fuzz_fail("gk_fmt_yaml returned NULL for a file that loaded", text, len, NULL, 0, d);
        free(f);
    }
    gk_ast_free(ast);
    grant_diags_free(d);
    gk_source_unref(src);
    gk_strvec_free(&top);
    free(text);
    return 0;
}
