/* netdest.h - network destination patterns and destinations (network.md §1).
 *
 * A pattern is HOST[:PORT]: an exact DNS name, a wildcard *.SUFFIX (one or
 * more labels before SUFFIX), an IPv4 address or a bracketed IPv6 address;
 * without a port, any port. Names are ASCII, compared case-insensitively
 * and without a trailing dot; an IPv4-mapped IPv6 address is the IPv4
 * address it maps. This module owns the one reading of that text (the
 * front ends' errors, the layer's canonical keys, the gate's queries), and
 * the set algebra on patterns the lattice needs (match, subset,
 * intersection), so every stage agrees on what a pattern covers.
 *
 * Ownership: a gk_dest is a plain value (no pointers); the strings this
 * module returns are malloc'd and the caller's.
 */
#ifndef GK_SYNTAX_NETDEST_H
#define GK_SYNTAX_NETDEST_H

#include "common/util.h"

typedef enum gk_dest_kind {
    GK_DEST_NAME, /* github.com */
    GK_DEST_WILD, /* *.github.com: host holds the suffix "github.com" */
    GK_DEST_V4,   /* 127.0.0.1 */
    GK_DEST_V6,   /* [::1]: host holds "::1" (inet_ntop's form) */
} gk_dest_kind;

#define GK_DEST_HOST_MAX 254 /* 253 for a name, NUL included */

typedef struct gk_dest {
    gk_dest_kind kind;
    uint16_t port; /* 0: any port (patterns only) */
    char host[GK_DEST_HOST_MAX];
} gk_dest;

/* Why a pattern is malformed: a message, the byte offset within the text
 * the error points at, and a hint (may be NULL). Both strings static. */
typedef struct gk_dest_error {
    const char *msg;
    const char *hint;
    size_t at, len; /* offending bytes of the text */
} gk_dest_error;

/* Read a pattern as written. 0 with *out filled, or -EINVAL with *err. */
GK_HIDDEN int gk_dest_parse_pattern(const char *text, gk_dest *out, gk_dest_error *err);
/* Read a destination host as a client asked for it: a name (any case, one
 * trailing dot allowed), an IPv4 address, an IPv6 address with or without
 * brackets. port must be 1-65535. -EINVAL when it is none of these (a
 * name with characters no DNS name has, "127.1", "2130706433"). */
GK_HIDDEN int gk_dest_parse_query(const char *host, unsigned port, gk_dest *out);

/* The canonical text: "github.com", "*.github.com:443", "[::1]:8080". */
GK_HIDDEN char *gk_dest_format(const gk_dest *d);
/* Does pattern p cover destination q (a query: NAME, V4 or V6, a port)? */
GK_HIDDEN bool gk_dest_matches(const gk_dest *p, const gk_dest *q);
/* Is every destination pattern a covers also covered by b? */
GK_HIDDEN bool gk_dest_subset(const gk_dest *a, const gk_dest *b);
/* The destinations both cover, as one pattern (the set is always one
 * pattern or empty). false when empty. */
GK_HIDDEN bool gk_dest_intersect(const gk_dest *a, const gk_dest *b, gk_dest *out);

#endif
