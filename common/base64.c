/* base64.c - strict standard base64 over nettle (see base64.h). */
#include "common/base64.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <nettle/base64.h>

size_t gk_base64_encoded_size(size_t n)
{
    return (n / 3 + (n % 3 != 0)) * 4;
}

/* Each character's 6 bits, -1 outside the alphabet ('=' included: the
 * padding is handled apart, at the end only). */
static const signed char b64_value[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
    -1,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, -1,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Two characters per 12 bits, in memory order. */
static uint16_t b64_pairs[4096];
static pthread_once_t b64_tables_once = PTHREAD_ONCE_INIT;

/* For decoding: each character's 6 bits already placed where they land
 * in the group's 3 bytes (little-endian words: byte 0 first), one table
 * per position; b64_bad (in the unused fourth byte) outside the alphabet,
 * so one OR of four lookups decodes and validates a group. */
static uint32_t b64_dec[4][256], b64_bad;

static void b64_tables_init(void)
{
    const unsigned char bad[4] = {0, 0, 0, 1};
    memcpy(&b64_bad, bad, 4);
    for (unsigned i = 0; i < 4096; i++) {
        unsigned char two[2] = {(unsigned char)b64_alphabet[i >> 6],
                                (unsigned char)b64_alphabet[i & 63]};
        memcpy(&b64_pairs[i], two, 2);
    }
    for (unsigned c = 0; c < 256; c++) {
        int v = b64_value[c];
        if (v < 0) {
            for (int k = 0; k < 4; k++)
                b64_dec[k][c] = b64_bad;
            continue;
        }
        uint32_t u = (uint32_t)v;
        unsigned char w[4][4] = {{(unsigned char)(u << 2), 0, 0, 0},
                                 {(unsigned char)(u >> 4), (unsigned char)(u << 4), 0, 0},
                                 {0, (unsigned char)(u >> 2), (unsigned char)(u << 6), 0},
                                 {0, 0, (unsigned char)u, 0}};
        for (int k = 0; k < 4; k++)
            memcpy(&b64_dec[k][c], w[k], 4);
    }
}

/* Encoded with a table of character pairs rather than nettle's
 * base64_encode_update (a character per step, about a third of the speed
 * here): 3 bytes are two lookups and one 4-byte store. The tail (1 or 2
 * bytes, padded) goes through nettle, the reference for the format. */
void gk_base64_encode(gk_buf *b, const void *data, size_t n)
{
    const uint8_t *src = data;
    pthread_once(&b64_tables_once, b64_tables_init);
    gk_buf_grow(b, gk_base64_encoded_size(n) + BASE64_ENCODE_FINAL_LENGTH + 4);
    char *dst = b->data + b->len;
    size_t whole = n / 3, g = 0;
    /* 6 bytes at a time through one 8-byte load (2 bytes past them are
     * read, never used: only while 8 remain) and one 8-character store */
    for (; (g + 2) * 3 + 2 <= n; g += 2, src += 6, dst += 8) {
        uint64_t w;
        memcpy(&w, src, 8);
        w = __builtin_bswap64(w);
        uint64_t c0 = b64_pairs[w >> 52], c1 = b64_pairs[(w >> 40) & 0xfff],
                 c2 = b64_pairs[(w >> 28) & 0xfff], c3 = b64_pairs[(w >> 16) & 0xfff];
        uint64_t out = c0 | c1 << 16 | c2 << 32 | c3 << 48;
        memcpy(dst, &out, 8);
    }
    for (; g < whole; g++, src += 3, dst += 4) {
        uint32_t x = (uint32_t)src[0] << 16 | (uint32_t)src[1] << 8 | src[2];
        uint16_t hi = b64_pairs[x >> 12], lo = b64_pairs[x & 0xfff];
        memcpy(dst, &hi, 2);
        memcpy(dst + 2, &lo, 2);
    }
    size_t rest = n - whole * 3;
    if (rest) {
        struct base64_encode_ctx ctx;
        base64_encode_init(&ctx);
        size_t done = base64_encode_update(&ctx, dst, rest, src);
        done += base64_encode_final(&ctx, dst + done);
        dst += done;
    }
    b->len = (size_t)(dst - b->data);
    b->data[b->len] = '\0';
}


/* The offset of the first byte of s[0, n) outside the alphabet, or n. */
static size_t first_bad(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n && b64_value[s[i]] >= 0)
        i++;
    return i;
}

/* Decoded with a table rather than nettle's base64_decode_update: that one
 * takes a character at a time through a library call (about 100 MB/s here,
 * and it skips whitespace, so a strict pre-scan had to run first), while
 * a 4-character group looked up and validated in one step runs at memory
 * speed. Strict in the same pass: any character outside the alphabet
 * (whitespace, '=' before the end) fails its group. */
int gk_base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len,
                     size_t *bad_at)
{
    const unsigned char *u = (const unsigned char *)s;
    *out = NULL;
    if (out_len)
        *out_len = 0;
    size_t pad = 0;
    if (len >= 1 && s[len - 1] == '=')
        pad++;
    if (pad && len >= 2 && s[len - 2] == '=')
        pad++;
    size_t body = len - pad;
    if (len % 4 != 0) {
        if (bad_at)
            *bad_at = first_bad(u, body) < body ? first_bad(u, body) : len;
        return -EINVAL;
    }
    size_t groups = len / 4, full = pad ? groups - 1 : groups;
    /* slack: two groups are stored as 8 bytes, 6 of them kept */
    unsigned char *dst = gk_malloc(groups * 3 + 8);
    gk_advise_large(dst, groups * 3 + 8);
    unsigned char *q = dst;
    const unsigned char *p = u;
    pthread_once(&b64_tables_once, b64_tables_init);
    size_t g = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* two groups per 8-byte store (the second's bytes follow the first's
     * three in a little-endian word) */
    for (; g + 2 <= full; g += 2, p += 8, q += 6) {
        uint32_t x = b64_dec[0][p[0]] | b64_dec[1][p[1]] | b64_dec[2][p[2]] | b64_dec[3][p[3]];
        uint32_t y = b64_dec[0][p[4]] | b64_dec[1][p[5]] | b64_dec[2][p[6]] | b64_dec[3][p[7]];
        if ((x | y) & b64_bad)
            goto bad;
        uint64_t w = (uint64_t)x | (uint64_t)y << 24;
        memcpy(q, &w, 8);
    }
#endif
    for (; g < full; g++, p += 4, q += 3) {
        uint32_t x = b64_dec[0][p[0]] | b64_dec[1][p[1]] | b64_dec[2][p[2]] | b64_dec[3][p[3]];
        if (x & b64_bad)
            goto bad;
        memcpy(q, &x, 4);
    }
    if (pad) {
        int a = b64_value[p[0]], b = b64_value[p[1]];
        int c = pad == 1 ? b64_value[p[2]] : 0;
        if ((a | b | c) < 0)
            goto bad;
        /* the last data character's unused low bits must be zero */
        if ((pad == 1 && (c & 0x3)) || (pad == 2 && (b & 0xf))) {
            free(dst);
            if (bad_at)
                *bad_at = body - 1;
            return -EINVAL;
        }
        *q++ = (unsigned char)(a << 2 | b >> 4);
        if (pad == 1)
            *q++ = (unsigned char)(b << 4 | c >> 2);
    }
    *q = '\0';
    *out = dst;
    if (out_len)
        *out_len = (size_t)(q - dst);
    return 0;
bad:
    free(dst);
    if (bad_at)
        *bad_at = first_bad(u, body);
    return -EINVAL;
}
