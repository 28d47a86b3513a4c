/* pathmap.h - paths interned to dense ids, looked up by any prefix of a
 * path with the prefix's hash carried along (gk_fnv); optionally a
 * multimap from each key to a list of values.
 *
 * The gate's indexes and the emitters ask "what sits at each ancestor of
 * this path" millions of times; one hash probe per ancestor replaces a
 * binary search of string compares. Callers keep their per-key data in an
 * array indexed by id.
 *
 * Ownership: the map owns its tables, not its keys (borrowed: they must
 * outlive the map or the next gk_pathmap_clear).
 */
#ifndef GK_PATHMAP_H
#define GK_PATHMAP_H

#include "common/util.h"

/* A key, by id. The hash table holds only ids, so it stays small enough
 * to live in cache while the keys sit densely beside it. */
typedef struct gk_pathmap_key {
    const char *key;
    size_t len;
    uint64_t hash;
} gk_pathmap_key;

typedef struct gk_pathmap_entry {
    size_t value;
    uint32_t next;   /* 1 + entry index of the next value at the key, 0: none */
} gk_pathmap_entry;

typedef struct gk_pathmap {
    uint32_t *table; /* 1 + id, 0: empty; open addressing, at most half full */
    size_t cap;
    gk_pathmap_key *keys; /* by id: ids 0 .. n-1 in insertion order */
    size_t n, capkeys;
    uint32_t *first; /* multimap: per id, 1 + its newest entry, 0: none */
    size_t capfirst;
    gk_pathmap_entry *entries;
    size_t nentries, capentries;
} gk_pathmap;

/* Room for `keys` keys without rehashing (an optimisation only). */
GK_HIDDEN void gk_pathmap_reserve(gk_pathmap *m, size_t keys);
/* The id of key[0..len) (which need not end there), added if new. */
GK_HIDDEN size_t gk_pathmap_intern(gk_pathmap *m, const char *key, size_t len);
/* The id of s[0..len), or -1; h = gk_fnv(s, len). */
GK_HIDDEN long gk_pathmap_find(const gk_pathmap *m, const char *s, size_t len, uint64_t h);

/* Multimap use: add a value at key; walk the values (newest first) from
 * gk_pathmap_first (1-based entry index, 0: none) along .next. */
GK_HIDDEN void gk_pathmap_add(gk_pathmap *m, const char *key, size_t value);
GK_HIDDEN void gk_pathmap_add_len(gk_pathmap *m, const char *key, size_t len, size_t value);
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
