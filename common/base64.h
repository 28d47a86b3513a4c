/* base64.h - standard-alphabet base64 with padding (RFC 4648 §4), the
 * encoding of binary data inside frames (frame-protocol.md §2: baseline
 * bytes, base64 capture). Table-driven (base64.c says why not nettle's
 * per-character coder), nettle kept for the padded tail and as the
 * tests' reference.
 *
 * Decoding is strict, so two hosts never disagree on what a frame holds:
 * the length is a multiple of 4, only the alphabet and at most two
 * trailing '=' appear (no whitespace, no line breaks), and the unused
 * bits of the last group are zero (one spelling per byte string).
 *
 * Ownership: encode appends to the caller's gk_buf; decode returns a
 * malloc'd buffer (the caller's; a NUL follows the bytes, not counted).
 */
#ifndef GK_BASE64_H
#define GK_BASE64_H

#include "common/util.h"

/* Encoded size of n bytes (no NUL counted). */
GK_HIDDEN size_t gk_base64_encoded_size(size_t n);
GK_HIDDEN void gk_base64_encode(gk_buf *b, const void *data, size_t n);
/* 0, or -EINVAL for text that is not strict base64 (then *out is NULL and,
 * if bad_at is not NULL, *bad_at is the offset of the first bad byte). */
GK_HIDDEN int gk_base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len,
                               size_t *bad_at);

#endif
