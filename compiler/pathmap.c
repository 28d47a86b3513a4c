/* pathmap.c - path multimap with prefix lookups (see pathmap.h). */
#include "pathmap.h"

#include <stdlib.h>
#include <string.h>

static gk_pathmap_slot *probe(const gk_pathmap *m, const char *s, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        gk_pathmap_slot *sl = &m->slots[i];
        if (!sl->key || (sl->hash == h && sl->len == len && memcmp(sl->key, s, len) == 0))
            return sl;
    }
}

static void grow(gk_pathmap *m)
{
    gk_pathmap_slot *old = m->slots;
    size_t oldcap = m->cap;
    m->cap = oldcap ? oldcap * 2 : 64;
    m->slots = gk_calloc(m->cap, sizeof(*m->slots));
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key)
            *probe(m, old[i].key, old[i].len, old[i].hash) = old[i];
    free(old);
}

void gk_pathmap_add(gk_pathmap *m, const char *key, size_t value)
{
    gk_pathmap_add_len(m, key, strlen(key), value);
}

void gk_pathmap_add_len(gk_pathmap *m, const char *key, size_t len, size_t value)
{
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    uint64_t h = gk_fnv(key, len);
    gk_pathmap_slot *sl = probe(m, key, len, h);
    if (!sl->key) {
        *sl = (gk_pathmap_slot){key, len, h, 0};
        m->n++;
    }
    /* Prepend: values at a key come back newest first. */
    gk_pathmap_entry e = {value, sl->first};
    GK_VEC_PUSH(m->entries, m->nentries, m->capentries, e);
    sl->first = (uint32_t)m->nentries;
}

uint32_t gk_pathmap_first(const gk_pathmap *m, const char *s, size_t len, uint64_t h)
{
    if (!m->n)
        return 0;
    const gk_pathmap_slot *sl = probe(m, s, len, h);
    return sl->key ? sl->first : 0;
}

void gk_pathmap_clear(gk_pathmap *m)
{
    free(m->slots);
    free(m->entries);
    memset(m, 0, sizeof(*m));
}

void gk_path_prefixes_of(const char *p, gk_path_prefixes *out)
{
    size_t len = strlen(p), slashes = 0;
    for (size_t k = 0; k < len; k++)
        slashes += p[k] == '/';
    size_t max = slashes + 2;
    if (max <= sizeof(out->len_buf) / sizeof(*out->len_buf)) {
        out->len = out->len_buf;
        out->hash = out->hash_buf;
    } else {
        out->len = gk_malloc(max * sizeof(*out->len));
        out->hash = gk_malloc(max * sizeof(*out->hash));
    }
    out->n = 0;
    uint64_t h = GK_FNV_BASIS;
    for (size_t k = 0; k < len; k++) {
        if (k == 1 || (k > 1 && p[k] == '/')) {
            out->len[out->n] = k;
            out->hash[out->n++] = h;
        }
        h = gk_fnv_step(h, (unsigned char)p[k]);
    }
    if (len == 1) {
        out->len[out->n] = 1;
        out->hash[out->n++] = h;
    } else if (len > 1) {
        out->len[out->n] = len;
        out->hash[out->n++] = h;
    }
}

void gk_path_prefixes_free(gk_path_prefixes *px)
{
    if (px->len != px->len_buf) {
        free(px->len);
        free(px->hash);
    }
}
