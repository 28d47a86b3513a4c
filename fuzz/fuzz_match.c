/* fuzz_match.c - libFuzzer target for the matcher-error path of `deny
 * match` (lattice/layer.c gk_pattern_match, the PCRE2 limits).
 *
 * Input: a pattern (up to the first '\n'), then a command name. A name
 * starting with '\x01' is its remaining bytes repeated to 512 bytes, so the
 * backtracking limits are reached often (the dictionary, fuzz/match.dict,
 * holds nested quantifiers). The pattern is compiled as part of a policy
 * (grant_compile_buffer of `deny match "..."`), then:
 *   - gk_pattern_match agrees with a pcre2_match of twice its limits whenever it
 *     answers (1 or 0): the limits never turn a match into a non-match;
 *   - a veto whose matcher gave up (-1) or matched denies the name, in the
 *     plain fold (grant_decide_exec) and in the gate (grant_check_exec_query,
 *     whose hint then says the matcher gave up); a clean non-match allows it
 *     in the fold (the policy has nothing else).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common.h"
#include "lattice/lattice.h"

static grant_context *ctx;

static void init(void)
{
    if (grant_context_new(&ctx) != 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) ||
        grant_context_set(ctx, GRANT_CTX_HOME, "/home/u") ||
        grant_context_set(ctx, GRANT_CTX_USER, "u") || grant_context_set(ctx, GRANT_CTX_CWD, "/w") ||
        grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp") ||
        grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin") ||
        grant_context_set_implicit(ctx, false))
        abort();
}

/* The pattern as a grant string: quote, backslash and controls escaped. */
static char *policy_text(const char *pat, size_t n)
{
    gk_buf b = {0};
    gk_buf_puts(&b, "grant f {\n    exec {\n        deny match \"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)pat[i];
        if (c == '"' || c == '\\') {
            char e[3] = {'\\', (char)c, 0};
            gk_buf_puts(&b, e);
        } else if (c < 0x20 || c == 0x7f) {
            char e[8];
            snprintf(e, sizeof(e), "\\x%02x", c);
            gk_buf_puts(&b, e);
        } else {
            gk_buf_add(&b, (const char *)&c, 1);
        }
    }
    gk_buf_puts(&b, "\";\n    }\n}\n");
    return gk_buf_steal(&b, NULL);
}

static void fail(const char *what, const char *pat, const char *name, int rc, int full)
{
    fprintf(stderr, "\n==== grantkit fuzz invariant broken: %s\npattern: %s\nname (%zu bytes): %.80s\n"
                    "gk_pattern_match %d, unbounded pcre2_match %d\n====\n",
            what, pat, strlen(name), name, rc, full);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx)
        init();
    const char *nl = memchr(data, '\n', size);
    if (!nl || nl == (const char *)data || (size_t)(nl - (const char *)data) > 256)
        return 0;
    size_t plen = (size_t)(nl - (const char *)data);
    if (memchr(data, '\0', plen))
        return 0;
    gk_autofree char *pat = gk_strndup((const char *)data, plen);
    /* The name: no '/', no NUL (a basename), maybe repeated. */
    const char *rest = nl + 1;
    size_t rlen = size - plen - 1;
    gk_buf nb = {0};
    bool repeat = rlen > 1 && rest[0] == '\x01';
    if (repeat)
        rest++, rlen--;
    do {
        for (size_t i = 0; i < rlen && nb.len < 512; i++)
            if (rest[i] && rest[i] != '/')
                gk_buf_add(&nb, rest + i, 1);
    } while (repeat && nb.len && nb.len < 512);
    if (!nb.len) {
        gk_buf_free(&nb);
        return 0;
    }
    gk_autofree char *name = gk_buf_steal(&nb, NULL);
    size_t nlen = strlen(name);

    gk_autofree char *text = policy_text(pat, plen);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int crc = grant_compile_buffer(ctx, "fuzz.grant", text, strlen(text), d, &p);
    fuzz_render_all(d);
    grant_diags_free(d);
    if (crc < 0 || !p)
        return 0;

    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code =
        pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!code)
        abort(); /* the policy compiled it: so must we */
    int rc = gk_pattern_match(code, name, nlen, NULL);
    /* A wider bound (twice the policy's): where both answer they
     * must agree. */
    static pcre2_match_context *wide;
    if (!wide) {
        wide = pcre2_match_context_create(NULL);
        pcre2_set_match_limit(wide, 2 * GK_MATCH_LIMIT);
        pcre2_set_depth_limit(wide, 2 * GK_MATCH_DEPTH_LIMIT);
        pcre2_set_heap_limit(wide, 2 * GK_MATCH_HEAP_LIMIT);
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    int full = pcre2_match(code, (PCRE2_SPTR)name, nlen, 0, 0, md, wide);
    int fullv = full >= 0 ? 1 : full == PCRE2_ERROR_NOMATCH ? 0 : -1;
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    if (rc != -1 && fullv != -1 && rc != fullv)
        fail("the bounded matcher answers differently", pat, name, rc, fullv);

    grant_exec_query q = {.spelling = name, .walked = NULL, .canonical = NULL, .argv1 = NULL};
    int fold = grant_decide_exec(p, &q);
    if (rc != 0 && fold != 0)
        fail("a veto that matched or gave up did not deny (fold)", pat, name, rc, fullv);
    if (rc == 0 && fold != 1)
        fail("a clean non-match was denied (fold)", pat, name, rc, fullv);
    grant_verdict *v = NULL;
    if (grant_check_exec_query(p, &q, &v) == 0 && v) {
        if (rc != 0 && grant_verdict_answer(v) != GRANT_DENIED)
            fail("a veto that matched or gave up did not deny (gate)", pat, name, rc, fullv);
        const char *hint = grant_verdict_hint(v);
        if (rc == -1 && (!hint || !strstr(hint, "gave up")))
            fail("a matcher that gave up is not named in the verdict", pat, name, rc, fullv);
        char *js = grant_verdict_json(v);
        free(js);
        grant_verdict_free(v);
    }
    grant_policy_free(p);
    return 0;
}
