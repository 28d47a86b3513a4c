/* fuzz_gitindex.c - libFuzzer target for the git index reader
 * (gate/gitlinks.c): grantrun reads the index of every readonly .git on
 * the host, and a command that once had that .git writable may have
 * crafted it. The first byte picks the hash size (even: sha1's 20, odd:
 * sha256's 32); the rest is the index file.
 *   - no read outside the bytes (ASan), no hang;
 *   - every gitlink found is a plain relative path: not empty, no leading
 *     '/', no empty, "." or ".." component (the readonly entries made of it
 *     stay inside the work tree).
 */
#include "common.h"
#include "gate/gate.h"

static void plain_or_abort(const char *p)
{
    if (!*p || *p == '/')
        abort();
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            abort();
        c += n;
        if (*c == '/' && !*++c)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t hash = (data[0] & 1) ? 32 : 20;
    gk_strvec out = {0};
    gk_gitlinks_of_index(data + 1, size - 1, hash, &out);
    for (size_t i = 0; i < out.n; i++)
        plain_or_abort(out.v[i]);
    gk_strvec_free(&out);
    return 0;
}
