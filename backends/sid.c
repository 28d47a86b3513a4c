/* sid.c - Windows SID derivation, reimplemented (backends.md "Windows"):
 * DeriveCapabilitySidsFromName and DeriveAppContainerSidFromAppContainerName,
 * so plans and audits can be computed on any host.
 *
 * Capability: SHA-256 over the name upper-cased and encoded UTF-16LE (no
 * terminator); the digest read as 8 little-endian 32-bit words w0..w7 gives
 * S-1-15-3-1024-w0-...-w7 and the group SID S-1-5-32-w0-...-w7. The twelve
 * legacy names (Windows 8) keep their assigned SIDs S-1-15-3-1 ...
 * S-1-15-3-12, matched after upper-casing as Windows and Chromium do; their
 * group SID is still the hash one (Microsoft's DeriveCapabilitySidsFromName
 * documentation: "the SID for the service group capability SID will be hash
 * based").
 *
 * AppContainer: SHA-256 over the name lower-cased in UTF-16LE; the first 7
 * words give S-1-15-2-w0-...-w6.
 *
 * Case mapping: ASCII by table; any other character of the Basic
 * Multilingual Plane by towupper_l/towlower_l in glibc's C.UTF-8 locale,
 * which is Unicode's simple (one-to-one) case mapping. Characters outside
 * the BMP are left as they are: Windows maps case per UTF-16 unit (its
 * NLS upcase table), so a surrogate pair never changes case there. Windows'
 * table is older than glibc's Unicode version, so a recently added letter
 * may map here and not there (documented in grantc(1)).
 */
#include "backends/backend.h"

#include <errno.h>
#include <locale.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

/* In SECURITY_CAPABILITY_* order (winnt.h): the index + 1 is the RID. */
static const char *const legacy_names[] = {
    "internetClient",     "internetClientServer",     "privateNetworkClientServer",
    "picturesLibrary",    "videosLibrary",            "musicLibrary",
    "documentsLibrary",   "enterpriseAuthentication", "sharedUserCertificates",
    "removableStorage",   "appointments",             "contacts",
};

/* Decode one code point of valid UTF-8 (the caller validated it). */
static uint32_t utf8_next(const unsigned char **pp)
{
    const unsigned char *p = *pp;
    uint32_t cp;
    size_t need;
    if (p[0] < 0x80) {
        *pp = p + 1;
        return p[0];
    }
    if ((p[0] & 0xE0) == 0xC0) {
        cp = p[0] & 0x1F;
        need = 1;
    } else if ((p[0] & 0xF0) == 0xE0) {
        cp = p[0] & 0x0F;
        need = 2;
    } else {
        cp = p[0] & 0x07;
        need = 3;
    }
    for (size_t i = 1; i <= need; i++)
        cp = (cp << 6) | (p[i] & 0x3F);
    *pp = p + need + 1;
    return cp;
}

/* name case-mapped (upper or lower) and encoded UTF-16LE into *out (*n
 * bytes; caller frees). Returns 0, -EINVAL for invalid UTF-8, -ENOTSUP when
 * a non-ASCII name needs a case table this system lacks (no C.UTF-8). */
static int utf16_cased(const char *name, bool upper, uint8_t **out, size_t *outlen)
{
    size_t len = strlen(name);
    bool ascii = true;
    for (size_t i = 0; i < len && ascii; i++)
        ascii = (unsigned char)name[i] < 0x80;
    if (ascii) {
        /* The common case (every capability name grantkit derives). */
        uint8_t *u16 = gk_malloc(2 * len + 1);
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)name[i];
            if (upper && c >= 'a' && c <= 'z')
                c -= 'a' - 'A';
            else if (!upper && c >= 'A' && c <= 'Z')
                c += 'a' - 'A';
            u16[2 * i] = c;
            u16[2 * i + 1] = 0;
        }
        *out = u16;
        *outlen = 2 * len;
        return 0;
    }
    if (!gk_utf8_valid(name, len))
        return -EINVAL;
    /* Only a non-ASCII name pays for a locale object. */
    locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (loc == (locale_t)0)
        return -ENOTSUP;
    /* At most two UTF-16 units (four bytes) per input byte. */
    uint8_t *u16 = gk_malloc(4 * len + 1);
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)name, *end = p + len;
    while (p < end) {
        uint32_t cp = utf8_next(&p);
        if (cp < 0x80) {
            if (upper && cp >= 'a' && cp <= 'z')
                cp -= 'a' - 'A';
            else if (!upper && cp >= 'A' && cp <= 'Z')
                cp += 'a' - 'A';
        } else if (cp < 0x10000) {
            wint_t m = upper ? towupper_l((wint_t)cp, loc) : towlower_l((wint_t)cp, loc);
            /* A BMP letter whose partner lies outside the BMP stays put:
             * Windows maps one UTF-16 unit to one unit. */
            if (m < 0x10000 && (m < 0xD800 || m > 0xDFFF))
                cp = (uint32_t)m;
        }
        if (cp < 0x10000) {
            u16[n++] = (uint8_t)(cp & 0xFF);
            u16[n++] = (uint8_t)(cp >> 8);
        } else {
            uint32_t v = cp - 0x10000;
            uint32_t hi = 0xD800 | (v >> 10), lo = 0xDC00 | (v & 0x3FF);
            u16[n++] = (uint8_t)(hi & 0xFF);
            u16[n++] = (uint8_t)(hi >> 8);
            u16[n++] = (uint8_t)(lo & 0xFF);
            u16[n++] = (uint8_t)(lo >> 8);
        }
    }
    freelocale(loc);
    *out = u16;
    *outlen = n;
    return 0;
}

static void sha256_of(const uint8_t *data, size_t n, uint8_t out[SHA256_DIGEST_SIZE])
{
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, n, data);
    sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

/* Does the upper-cased UTF-16LE name spell the ASCII word w upper-cased?
 * (Windows compares after upper-casing, so "INTERNETCLIENT" and a name
 * with a dotless i both hit internetClient.) */
static bool utf16_is_upper_ascii(const uint8_t *u16, size_t n, const char *w)
{
    if (n != 2 * strlen(w))
        return false;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char c = (unsigned char)w[i];
        if (c >= 'a' && c <= 'z')
            c -= 'a' - 'A';
        if (u16[2 * i] != c || u16[2 * i + 1] != 0)
            return false;
    }
    return true;
}

static char *sid_from_words(const char *prefix, const uint8_t *d, size_t nwords)
{
    /* By hand rather than printf: plans derive thousands of these. */
    size_t plen = strlen(prefix);
    char *out = gk_malloc(plen + nwords * 11 + 1), *o = out + plen;
    memcpy(out, prefix, plen);
    for (size_t i = 0; i < nwords; i++) {
        const uint8_t *w = d + 4 * i;
        uint32_t v = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
                     (uint32_t)w[3] << 24;
        /* Two digits per division (plans derive thousands of SIDs). */
        static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                    "25262728293031323334353637383940414243444546474849"
                                    "50515253545556575859606162636465666768697071727374"
                                    "75767778798081828384858687888990919293949596979899";
        char digits[10];
        size_t n = sizeof(digits);
        while (v >= 100) {
            uint32_t r = v % 100;
            v /= 100;
            digits[--n] = pairs[2 * r + 1];
            digits[--n] = pairs[2 * r];
        }
        if (v >= 10) {
            digits[--n] = pairs[2 * v + 1];
            digits[--n] = pairs[2 * v];
        } else {
            digits[--n] = (char)('0' + v);
        }
        *o++ = '-';
        memcpy(o, digits + n, sizeof(digits) - n);
        o += sizeof(digits) - n;
    }
    *o = '\0';
    return out;
}

int grant_sid_capability(const char *name, char **sid, char **group_sid)
{
    if (!name || !sid)
        return -EINVAL;
    *sid = NULL;
    if (group_sid)
        *group_sid = NULL;
    uint8_t *u16 = NULL, d[SHA256_DIGEST_SIZE];
    size_t n = 0;
    int rc = utf16_cased(name, true, &u16, &n);
    if (rc < 0)
        return rc;
    sha256_of(u16, n, d);
    char *cap = NULL;
    for (size_t i = 0; i < sizeof(legacy_names) / sizeof(*legacy_names) && !cap; i++)
        if (utf16_is_upper_ascii(u16, n, legacy_names[i]))
            cap = gk_printf("S-1-15-3-%zu", i + 1);
    free(u16);
    if (!cap)
        cap = sid_from_words("S-1-15-3-1024", d, 8);
    *sid = cap;
    if (group_sid)
        *group_sid = sid_from_words("S-1-5-32", d, 8);
    return 0;
}

int grant_sid_appcontainer(const char *name, char **sid)
{
    if (!name || !sid)
        return -EINVAL;
    *sid = NULL;
    uint8_t *u16 = NULL, d[SHA256_DIGEST_SIZE];
    size_t n = 0;
    int rc = utf16_cased(name, false, &u16, &n);
    if (rc < 0)
        return rc;
    sha256_of(u16, n, d);
    free(u16);
    *sid = sid_from_words("S-1-15-2", d, 7);
    return 0;
}
