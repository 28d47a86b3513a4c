/* pathmap.h - a multimap from path strings to indices, looked up by any
 * prefix of a path with the prefix's hash carried along (gk_fnv).
 *
 * Emitters ask "which mounts sit at each ancestor of this name" thousands
 * of times per policy; one hash probe per ancestor replaces a binary
 * search of string compares.
 *
 * Ownership: the map owns its tables, not its keys (borrowed: they must
 * outlive the map or the next gk_pathmap_clear).
 */
#ifndef GK_PATHMAP_H
#define GK_PATHMAP_H

#include "util.h"

typedef struct gk_pathmap_slot {
    const char *key; /* NULL: empty */
    size_t len;
    uint64_t hash;
    uint32_t first;  /* 1 + entry index, 0: none */
} gk_pathmap_slot;

typedef struct gk_pathmap_entry {
    size_t value;
    uint32_t next;   /* 1 + entry index of the next value at the key, 0: none */
} gk_pathmap_entry;

typedef struct gk_pathmap {
    gk_pathmap_slot *slots;
    size_t cap, n;
    gk_pathmap_entry *entries;
    size_t nentries, capentries;
} gk_pathmap;

GK_HIDDEN void gk_pathmap_add(gk_pathmap *m, const char *key, size_t value);
/* The key is key[0..len), which need not end there. */
GK_HIDDEN void gk_pathmap_add_len(gk_pathmap *m, const char *key, size_t len, size_t value);
/* The first entry (1-based, 0: none) at key s[0..len), h = gk_fnv(s, len). */
GK_HIDDEN uint32_t gk_pathmap_first(const gk_pathmap *m, const char *s, size_t len, uint64_t h);
GK_HIDDEN void gk_pathmap_clear(gk_pathmap *m);

/* The prefixes of a path that name it or an ancestor ("/", "/a", "/a/b"),
 * by length, each with its hash. */
typedef struct gk_path_prefixes {
    size_t n;
    size_t *len;
    uint64_t *hash;
    size_t len_buf[32];
    uint64_t hash_buf[32];
} gk_path_prefixes;

GK_HIDDEN void gk_path_prefixes_of(const char *p, gk_path_prefixes *out);
GK_HIDDEN void gk_path_prefixes_free(gk_path_prefixes *px);

#endif
