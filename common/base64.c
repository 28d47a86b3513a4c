/* base64.c - strict standard base64 over nettle (see base64.h). */
#include "common/base64.h"

#include <errno.h>
#include <stdlib.h>
#include <nettle/base64.h>

size_t gk_base64_encoded_size(size_t n)
{
    return (n / 3 + (n % 3 != 0)) * 4;
}

void gk_base64_encode(gk_buf *b, const void *data, size_t n)
{
    const uint8_t *src = data;
    /* nettle wants BASE64_ENCODE_LENGTH(slice) of room per call: a few
     * bytes beyond the exact total. */
    gk_buf_grow(b, gk_base64_encoded_size(n) + 8);
    char *dst = b->data + b->len;
    /* In slices of 3 MiB: the room nettle asks for is per call. */
    struct base64_encode_ctx ctx;
    base64_encode_init(&ctx);
    size_t done = 0;
    while (n > 0) {
        size_t take = n > (3u << 20) ? (3u << 20) : n;
        done += base64_encode_update(&ctx, dst + done, take, src);
        src += take;
        n -= take;
    }
    done += base64_encode_final(&ctx, dst + done);
    b->len += done;
    b->data[b->len] = '\0';
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int gk_base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len,
                     size_t *bad_at)
{
    *out = NULL;
    if (out_len)
        *out_len = 0;
    /* nettle skips whitespace and does not check the padding bits: the
     * strict rules are checked here first, then nettle decodes. */
    size_t pad = 0;
    if (len >= 1 && s[len - 1] == '=')
        pad++;
    if (pad && len >= 2 && s[len - 2] == '=')
        pad++;
    size_t body = len - pad;
    for (size_t i = 0; i < body; i++) {
        if (b64_value((unsigned char)s[i]) < 0) {
            if (bad_at)
                *bad_at = i;
            return -EINVAL;
        }
    }
    if (len % 4 != 0) {
        if (bad_at)
            *bad_at = len;
        return -EINVAL;
    }
    if (pad > 0) {
        /* The last data character's unused low bits must be zero. */
        int v = b64_value((unsigned char)s[body - 1]);
        if ((pad == 1 && (v & 0x3)) || (pad == 2 && (v & 0xf))) {
            if (bad_at)
                *bad_at = body - 1;
            return -EINVAL;
        }
    }
    size_t cap = len / 4 * 3 + 4; /* BASE64_DECODE_LENGTH slack */
    unsigned char *dst = gk_malloc(cap);
    struct base64_decode_ctx ctx;
    base64_decode_init(&ctx);
    size_t done = 0;
    const char *p = s;
    size_t left = len;
    while (left > 0) {
        size_t take = left > (4u << 20) ? (4u << 20) : left;
        size_t got = cap - done;
        if (!base64_decode_update(&ctx, &got, dst + done, take, p)) {
            free(dst);
            if (bad_at)
                *bad_at = (size_t)(p - s);
            return -EINVAL;
        }
        done += got;
        p += take;
        left -= take;
    }
    if (!base64_decode_final(&ctx)) {
        free(dst);
        if (bad_at)
            *bad_at = len;
        return -EINVAL;
    }
    dst[done] = '\0';
    *out = dst;
    if (out_len)
        *out_len = done;
    return 0;
}
