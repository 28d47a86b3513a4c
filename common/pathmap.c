/* pathmap.c - path multimap with prefix lookups (see pathmap.h). */
#include "common/pathmap.h"

#include <stdlib.h>
#include <string.h>

/* The table cell holding s[0..len), or the empty cell where it would go. */
static uint32_t *probe(const gk_pathmap *m, const char *s, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t *cell = &m->table[i];
        if (!*cell)
            return cell;
        const gk_pathmap_key *k = &m->keys[*cell - 1];
        if (k->hash == h && k->len == len && memcmp(k->key, s, len) == 0)
            return cell;
    }
}

void gk_pathmap_reserve(gk_pathmap *m, size_t keys)
{
    size_t cap = m->cap ? m->cap : 64;
    while (cap < 2 * keys + 2)
        cap *= 2;
    if (cap == m->cap)
        return;
    free(m->table);
    m->cap = cap;
    m->table = gk_calloc(cap, sizeof(*m->table));
    for (size_t id = 0; id < m->n; id++)
        *probe(m, m->keys[id].key, m->keys[id].len, m->keys[id].hash) = (uint32_t)(id + 1);
}

size_t gk_pathmap_intern(gk_pathmap *m, const char *key, size_t len)
{
    if ((m->n + 1) * 2 > m->cap)
        gk_pathmap_reserve(m, m->n + 1);
    uint64_t h = gk_fnv(key, len);
    uint32_t *cell = probe(m, key, len, h);
    if (*cell)
        return *cell - 1;
    gk_pathmap_key k = {key, len, h};
    GK_VEC_PUSH(m->keys, m->n, m->capkeys, k);
    *cell = (uint32_t)m->n;
    return m->n - 1;
}

long gk_pathmap_find(const gk_pathmap *m, const char *s, size_t len, uint64_t h)
{
    if (!m->n)
        return -1;
    uint32_t cell = *probe(m, s, len, h);
    return cell ? (long)cell - 1 : -1;
}

void gk_pathmap_add(gk_pathmap *m, const char *key, size_t value)
{
    gk_pathmap_add_len(m, key, strlen(key), value);
}

void gk_pathmap_add_len(gk_pathmap *m, const char *key, size_t len, size_t value)
{
    size_t id = gk_pathmap_intern(m, key, len);
    if (id >= m->capfirst) {
        size_t cap = m->capfirst ? m->capfirst * 2 : 64;
        while (cap <= id)
            cap *= 2;
        m->first = gk_realloc(m->first, cap * sizeof(*m->first));
        memset(m->first + m->capfirst, 0, (cap - m->capfirst) * sizeof(*m->first));
        m->capfirst = cap;
    }
    gk_pathmap_entry e = {value, m->first[id]};
    GK_VEC_PUSH(m->entries, m->nentries, m->capentries, e);
    m->first[id] = (uint32_t)m->nentries;
}

uint32_t gk_pathmap_first(const gk_pathmap *m, const char *s, size_t len, uint64_t h)
{
    long id = gk_pathmap_find(m, s, len, h);
    return id >= 0 && (size_t)id < m->capfirst ? m->first[id] : 0;
}

void gk_pathmap_clear(gk_pathmap *m)
{
    free(m->table);
    free(m->keys);
    free(m->first);
    free(m->entries);
    memset(m, 0, sizeof(*m));
}

static void prefix_push(gk_path_prefixes *out, size_t *cap, size_t len, uint64_t h)
{
    if (out->n == *cap) {
        size_t ncap = *cap * 2;
        size_t *l = gk_malloc(ncap * sizeof(*l));
        uint64_t *hs = gk_malloc(ncap * sizeof(*hs));
        memcpy(l, out->len, out->n * sizeof(*l));
        memcpy(hs, out->hash, out->n * sizeof(*hs));
        if (out->len != out->len_buf) {
            free(out->len);
            free(out->hash);
        }
        out->len = l;
        out->hash = hs;
        *cap = ncap;
    }
    out->len[out->n] = len;
    out->hash[out->n++] = h;
}

void gk_path_prefixes_of(const char *p, gk_path_prefixes *out)
{
    size_t cap = sizeof(out->len_buf) / sizeof(*out->len_buf);
    out->len = out->len_buf;
    out->hash = out->hash_buf;
    out->n = 0;
    uint64_t h = GK_FNV_BASIS;
    size_t k = 0;
    /* The root is "/" (length 1) or a drive root "C:/" (length 3). */
    size_t root = gk_path_root_len(p) == 3 ? 3 : 1;
    for (; p[k]; k++) {
        if (k == root || (k > root && p[k] == '/'))
            prefix_push(out, &cap, k, h);
        h = gk_fnv_step(h, (unsigned char)p[k]);
    }
    if (k >= 1)
        prefix_push(out, &cap, k, h); /* p itself ("/" when k is 1) */
}

void gk_path_prefixes_free(gk_path_prefixes *px)
{
    if (px->len != px->len_buf) {
        free(px->len);
        free(px->hash);
    }
}
