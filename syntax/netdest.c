/* netdest.c - network destination patterns: reading, canonical text, and
 * the set algebra the lattice and the gate use (netdest.h). */
#include "syntax/netdest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(gk_dest_error *err, const char *msg, const char *hint, size_t at, size_t len)
{
    if (err)
        *err = (gk_dest_error){msg, hint, at, len ? len : 1};
    return -EINVAL;
}

/* Strict dotted quad: four decimal parts 0-255, no leading zeros (so
 * "010.0.0.1" is not silently octal somewhere else). */
static bool parse_v4(const char *s, size_t n, unsigned char out[4])
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (i >= n || s[i] < '0' || s[i] > '9')
            return false;
        unsigned v = 0;
        size_t start = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            v = v * 10 + (unsigned)(s[i] - '0');
            if (v > 255)
                return false;
            i++;
        }
        if (i - start > 1 && s[start] == '0')
            return false;
        out[part] = (unsigned char)v;
        if (part < 3) {
            if (i >= n || s[i] != '.')
                return false;
            i++;
        }
    }
    return i == n;
}

static void v4_text(const unsigned char a[4], char *out)
{
    snprintf(out, GK_DEST_HOST_MAX, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

/* An IPv6 address (no brackets, no zone) into d: V6, or V4 when it is
 * IPv4-mapped (::ffff:a.b.c.d is compared as a.b.c.d). */
static bool parse_v6(const char *s, size_t n, gk_dest *d)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    struct in6_addr a;
    if (inet_pton(AF_INET6, buf, &a) != 1)
        return false;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
        d->kind = GK_DEST_V4;
        v4_text(a.s6_addr + 12, d->host);
    } else {
        d->kind = GK_DEST_V6;
        inet_ntop(AF_INET6, &a, d->host, sizeof(d->host));
    }
    return true;
}

static bool all_digits_dots(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '.' || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return n > 0;
}

static bool name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

/* A DNS name s[0..n) (no trailing dot) into d->host, lower-cased. `base`
 * is its offset in the text, for errors. */
static int parse_name(const char *s, size_t n, size_t base, gk_dest *d, gk_dest_error *err)
{
    if (n == 0)
        return fail(err, "empty host name", "write HOST[:PORT]: github.com, *.npmjs.org:443",
                    base, 1);
    if (n > 253)
        return fail(err, "host name longer than 253 characters", NULL, base, n);
    size_t label = 0, last_label = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            size_t len = i - label;
            if (len == 0)
                return fail(err, "empty label in a host name", "labels are separated by one '.'",
                            base + i, 1);
            if (len > 63)
                return fail(err, "label longer than 63 characters", NULL, base + label, len);
            if (s[label] == '-' || s[i - 1] == '-')
                return fail(err, "a label cannot start or end with '-'", NULL, base + label, len);
            last_label = label;
            label = i + 1;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '*')
            return fail(err, "'*' is allowed only as the first label",
                        "a wildcard is written *.SUFFIX: *.github.com", base + i, 1);
        if (!name_char(c))
            return fail(err, "character not allowed in a host name",
                        "a name has letters, digits, '-' and '_'", base + i, 1);
    }
    if (all_digits_dots(s + last_label, n - last_label))
        return fail(err, "a host name's last label cannot be a number",
                    "an IPv4 address has four parts: 192.0.2.1", base, n);
    for (size_t i = 0; i < n; i++)
        d->host[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
    d->host[n] = 0;
    d->kind = GK_DEST_NAME;
    return 0;
}

static int parse_port(const char *s, size_t n, size_t base, uint16_t *port, gk_dest_error *err)
{
    if (n == 0)
        return fail(err, "expected a port after ':'", "leave the port out for any port", base, 1);
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return fail(err, "port is not a number",
                        "a port is 1-65535; leave it out for any port", base, n);
        if (v <= 65535)
            v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v < 1 || v > 65535)
        return fail(err, "port out of range (1-65535)", NULL, base, n);
    *port = (uint16_t)v;
    return 0;
}

int gk_dest_parse_pattern(const char *text, gk_dest *out, gk_dest_error *err)
{
    gk_dest d = {0};
    size_t n = strlen(text);
    if (n == 0)
        return fail(err, "empty destination", "write HOST[:PORT]: github.com, *.npmjs.org:443",
                    0, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80)
            return fail(err, "non-ASCII character in a destination",
                        "write an internationalised name in its xn-- (punycode) form", i, 1);
        if (c <= ' ' || c == 0x7f)
            return fail(err, "control character or space in a destination", NULL, i, 1);
        if (c == '/')
            return fail(err, "CIDR ranges are not supported", "name each address", i, n - i);
    }
    size_t host_at = 0, host_len, port_at = 0;
    bool has_port = false;
    if (text[0] == '[') {
        const char *rb = strchr(text, ']');
        if (!rb)
            return fail(err, "expected ']' to close the IPv6 address", NULL, 0, 1);
        host_at = 1;
        host_len = (size_t)(rb - text) - 1;
        size_t after = (size_t)(rb - text) + 1;
        if (after < n) {
            if (text[after] != ':')
                return fail(err, "expected ':PORT' after ']'", NULL, after, 1);
            has_port = true;
            port_at = after + 1;
        }
        if (memchr(text + 1, '%', host_len))
            return fail(err, "IPv6 zone ('%') not allowed in a destination", NULL, 1, host_len);
        if (!parse_v6(text + 1, host_len, &d))
            return fail(err, "not an IPv6 address", NULL, 1, host_len ? host_len : 1);
    } else {
        const char *c1 = strchr(text, ':');
        if (c1 && strchr(c1 + 1, ':')) {
            gk_dest tmp;
            bool v6 = parse_v6(text, n, &tmp);
            return fail(err,
                        v6 ? "an IPv6 address is written in brackets" : "more than one ':' in a destination",
                        v6 ? "write [ADDRESS] or [ADDRESS]:PORT: [::1]:8080" : NULL, 0, n);
        }
        host_len = c1 ? (size_t)(c1 - text) : n;
        if (c1) {
            has_port = true;
            port_at = host_len + 1;
        }
        const char *h = text;
        size_t hl = host_len;
        if (hl == 0)
            return fail(err, "empty host name", "write HOST[:PORT]: github.com, *.npmjs.org:443", 0,
                        1);
        /* One trailing dot is the root: github.com. is github.com. */
        if (hl > 1 && h[hl - 1] == '.' && h[hl - 2] != '.')
            hl--;
        if (hl == 1 && h[0] == '*')
            return fail(err, "'*' alone would allow every destination",
                        "write 'net allow;' for the whole network", 0, 1);
        if (hl >= 2 && h[0] == '*' && h[1] == '.') {
            int rc = parse_name(h + 2, hl - 2, 2, &d, err);
            if (rc < 0)
                return rc;
            if (!strchr(d.host, '.'))
                return fail(err, "a wildcard over a top-level domain",
                            "name at least two labels after '*.': *.example.com", 0, hl);
            d.kind = GK_DEST_WILD;
        } else if (h[0] == '*') {
            return fail(err, "'*' is allowed only as the first label",
                        "a wildcard is written *.SUFFIX: *.github.com", 0, 1);
        } else if (all_digits_dots(h, hl)) {
            unsigned char a[4];
            if (hl != host_len || !parse_v4(h, hl, a))
                return fail(err, "not an IPv4 address",
                            "an IPv4 address has four parts 0-255: 192.0.2.1", 0, host_len);
            d.kind = GK_DEST_V4;
            v4_text(a, d.host);
        } else {
            int rc = parse_name(h, hl, 0, &d, err);
            if (rc < 0)
                return rc;
        }
    }
    if (has_port) {
        int rc = parse_port(text + port_at, n - port_at, port_at, &d.port, err);
        if (rc < 0)
            return rc;
    }
    (void)host_at;
    *out = d;
    return 0;
}

int gk_dest_parse_query(const char *host, unsigned port, gk_dest *out)
{
    if (!host || port < 1 || port > 65535)
        return -EINVAL;
    gk_dest d = {0};
    size_t n = strlen(host);
    if (n == 0)
        return -EINVAL;
    if (host[0] == '[') {
        if (n < 3 || host[n - 1] != ']' || !parse_v6(host + 1, n - 2, &d))
            return -EINVAL;
    } else if (strchr(host, ':')) {
        if (!parse_v6(host, n, &d))
            return -EINVAL;
    } else {
        size_t hl = n;
        if (hl > 1 && host[hl - 1] == '.')
            hl--;
        if (all_digits_dots(host, hl)) {
            unsigned char a[4];
            if (hl != n || !parse_v4(host, hl, a))
                return -EINVAL;
            d.kind = GK_DEST_V4;
            v4_text(a, d.host);
        } else if (parse_name(host, hl, 0, &d, NULL) < 0) {
            return -EINVAL;
        }
    }
    d.port = (uint16_t)port;
    *out = d;
    return 0;
}

char *gk_dest_format(const gk_dest *d)
{
    const char *pre = d->kind == GK_DEST_WILD ? "*." : d->kind == GK_DEST_V6 ? "[" : "";
    const char *post = d->kind == GK_DEST_V6 ? "]" : "";
    if (d->port)
        return gk_printf("%s%s%s:%u", pre, d->host, post, (unsigned)d->port);
    return gk_printf("%s%s%s", pre, d->host, post);
}

/* Is name within *.suffix: one or more labels before suffix? */
static bool under_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s + 1 && name[n - s - 1] == '.' && memcmp(name + n - s, suffix, s) == 0;
}

static bool port_covers(uint16_t pattern, uint16_t q)
{
    return pattern == 0 || pattern == q;
}

bool gk_dest_matches(const gk_dest *p, const gk_dest *q)
{
    if (!port_covers(p->port, q->port))
        return false;
    switch (p->kind) {
    case GK_DEST_WILD:
        return q->kind == GK_DEST_NAME && under_suffix(q->host, p->host);
    default:
        return p->kind == q->kind && strcmp(p->host, q->host) == 0;
    }
}

static bool host_subset(const gk_dest *a, const gk_dest *b)
{
    if (b->kind == GK_DEST_WILD) {
        if (a->kind == GK_DEST_NAME)
            return under_suffix(a->host, b->host);
        if (a->kind == GK_DEST_WILD)
            return strcmp(a->host, b->host) == 0 || under_suffix(a->host, b->host);
        return false;
    }
    return a->kind == b->kind && strcmp(a->host, b->host) == 0;
}

bool gk_dest_subset(const gk_dest *a, const gk_dest *b)
{
    if (b->port != 0 && a->port != b->port)
        return false;
    return host_subset(a, b);
}

bool gk_dest_intersect(const gk_dest *a, const gk_dest *b, gk_dest *out)
{
    if (a->port && b->port && a->port != b->port)
        return false;
    uint16_t port = a->port ? a->port : b->port;
    const gk_dest *h;
    if (host_subset(a, b))
        h = a;
    else if (host_subset(b, a))
        h = b;
    else
        return false; /* two patterns' hosts are nested or disjoint */
    *out = *h;
    out->port = port;
    return true;
}
