/* net.c - the net dimension's destination lists (network.md §1): canonical
 * form, one layer's decision, join, and the stack's set as one list.
 *
 * A layer's set is full (`net allow;`), empty (`net deny;`), or
 * allow \ deny of its patterns. Meet needs nothing here: the fold over
 * layers is already the intersection, and a deny in any layer is sticky.
 * Join is the union, computed as for fs (join.c): allows unite, and each
 * deny of one side is classified against the other side: kept when the
 * other side refuses all it covers, dropped when the other side admits all
 * it covers, otherwise kept and the join flagged lossy (it then admits
 * less than the union, never more). */
#include "lattice/lattice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gk_net_dim_free(gk_net_dim *n)
{
    for (size_t i = 0; i < n->allow.n; i++) {
        free(n->allow.v[i].key);
        free(n->allow.v[i].origin);
    }
    for (size_t i = 0; i < n->deny.n; i++) {
        free(n->deny.v[i].key);
        free(n->deny.v[i].origin);
    }
    free(n->allow.v);
    free(n->deny.v);
    free(n->allow_d);
    free(n->deny_d);
    memset(n, 0, sizeof(*n));
}

static int entry_cmp(const void *a, const void *b)
{
    const gk_entry *x = a, *y = b;
    return gk_strcmp_bytes(x->key, y->key);
}

static gk_dest *entries_canon(gk_entries *e)
{
    if (e->n > 1)
        qsort(e->v, e->n, sizeof(*e->v), entry_cmp);
    size_t out = 0;
    for (size_t i = 0; i < e->n; i++) {
        if (out && strcmp(e->v[out - 1].key, e->v[i].key) == 0) {
            free(e->v[i].key);
            free(e->v[i].origin);
            continue;
        }
        e->v[out++] = e->v[i];
    }
    e->n = out;
    gk_dest *d = gk_calloc(out ? out : 1, sizeof(*d));
    for (size_t i = 0; i < out; i++) {
        gk_dest_error err;
        /* Keys come from gk_dest_format or a checked IR: they parse. A key
         * that does not is made to match nothing (an impossible name). */
        if (gk_dest_parse_pattern(e->v[i].key, &d[i], &err) < 0) {
            memset(&d[i], 0, sizeof(d[i]));
            d[i].kind = GK_DEST_NAME;
            strcpy(d[i].host, "-");
        }
    }
    return d;
}

void gk_net_dim_canonicalize(gk_net_dim *n)
{
    free(n->allow_d);
    free(n->deny_d);
    n->allow_d = entries_canon(&n->allow);
    n->deny_d = entries_canon(&n->deny);
}

void gk_net_dim_copy(gk_net_dim *dst, const gk_net_dim *src)
{
    for (size_t i = 0; i < src->allow.n; i++)
        gk_entries_add(&dst->allow, src->allow.v[i].key, src->allow.v[i].origin);
    for (size_t i = 0; i < src->deny.n; i++)
        gk_entries_add(&dst->deny, src->deny.v[i].key, src->deny.v[i].origin);
    if (src->allow_d || src->deny_d)
        gk_net_dim_canonicalize(dst);
}

bool gk_net_dim_equal(const gk_net_dim *a, const gk_net_dim *b)
{
    return gk_entries_keys_equal(&a->allow, &b->allow) && gk_entries_keys_equal(&a->deny, &b->deny);
}

/* ---- decisions ----------------------------------------------------------- */

static void why_set(gk_why *why, const char *origin, char *rule)
{
    if (!why) {
        free(rule);
        return;
    }
    gk_why_clear(why);
    why->origin = origin;
    why->rule = rule;
}

/* The position of key in e (sorted bytewise), or -1. */
static long find_key(const gk_entries *e, const char *key)
{
    const gk_entry *x = gk_entries_find(e, key);
    return x ? x - e->v : -1;
}

/* key = pre + host + post, then with ":PORT" (port: its digits). Returns
 * the length without the port. */
static size_t put_key(char *key, const char *pre, const char *host, size_t hlen, const char *post)
{
    size_t n = 0, l = strlen(pre);
    memcpy(key, pre, l);
    n += l;
    memcpy(key + n, host, hlen);
    n += hlen;
    l = strlen(post);
    memcpy(key + n, post, l);
    return n + l;
}

static long find_both(const gk_entries *e, char *key, size_t n, const char *port, size_t plen)
{
    key[n] = ':';
    memcpy(key + n + 1, port, plen + 1);
    long i = find_key(e, key);
    if (i >= 0)
        return i;
    key[n] = 0;
    return find_key(e, key);
}

/* A pattern covers q exactly when its canonical key is one of q's
 * candidate keys: HOST:PORT and HOST, then for each suffix after a '.' of
 * a name, from the longest, *.SUFFIX:PORT and *.SUFFIX (an address has no
 * suffixes). So a check is a few binary searches, not a scan, and the
 * pattern that decides is the most specific one that matches. */
static long find_match(const gk_entries *e, const gk_dest *q)
{
    if (!e->n)
        return -1;
    char key[GK_DEST_HOST_MAX + 16], port[8];
    size_t plen = 0;
    for (unsigned p = q->port; p; p /= 10)
        port[plen++] = (char)('0' + p % 10);
    for (size_t i = 0; i < plen / 2; i++) {
        char t = port[i];
        port[i] = port[plen - 1 - i];
        port[plen - 1 - i] = t;
    }
    port[plen] = 0;
    bool v6 = q->kind == GK_DEST_V6;
    size_t hlen = strlen(q->host);
    long i = find_both(e, key, put_key(key, v6 ? "[" : "", q->host, hlen, v6 ? "]" : ""), port,
                       plen);
    if (i >= 0 || q->kind != GK_DEST_NAME)
        return i;
    for (const char *d = strchr(q->host, '.'); d; d = strchr(d + 1, '.')) {
        size_t n = put_key(key, "*", d, hlen - (size_t)(d - q->host), "");
        if ((i = find_both(e, key, n, port, plen)) >= 0)
            return i;
    }
    return -1;
}

int gk_layer_decide_connect(const gk_layer *f, const gk_dest *q, gk_why *why)
{
    if (!f->net_list) {
        if (f->net == GK_TRI_NONE)
            return -1;
        why_set(why, f->gate_origin[0] ? f->gate_origin[0] : f->origin,
                gk_strdup(f->net == GK_TRI_TRUE ? "net allow" : "net deny"));
        return f->net == GK_TRI_TRUE;
    }
    const gk_net_dim *n = &f->netd;
    long i = find_match(&n->deny, q);
    if (i >= 0) {
        if (why)
            why_set(why, n->deny.v[i].origin, gk_concat("deny ", n->deny.v[i].key));
        return 0;
    }
    if ((i = find_match(&n->allow, q)) >= 0) {
        if (why)
            why_set(why, n->allow.v[i].origin, gk_concat("allow ", n->allow.v[i].key));
        return 1;
    }
    if (why)
        why_set(why, f->gate_origin[0] ? f->gate_origin[0] : f->origin,
                gk_strdup("no allow rule matches"));
    return 0;
}

bool gk_decide_connect(const gk_stack *s, const gk_dest *q)
{
    for (size_t i = 0; i < s->n; i++)
        if (gk_layer_decide_connect(s->v[i], q, NULL) == 0)
            return false;
    return true;
}

/* ---- join ---------------------------------------------------------------- */

static bool any_subset_of(const gk_dest *d, const gk_dest *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gk_dest_subset(d, &set[i]))
            return true;
    return false;
}

static bool any_meets(const gk_dest *d, const gk_dest *set, size_t n)
{
    gk_dest x;
    for (size_t i = 0; i < n; i++)
        if (gk_dest_intersect(d, &set[i], &x))
            return true;
    return false;
}

/* Keep or drop each deny of `from` against the other side `other`. */
static void join_denies(gk_net_dim *j, const gk_net_dim *from, const gk_net_dim *other,
                        bool *lossy)
{
    for (size_t i = 0; i < from->deny.n; i++) {
        const gk_dest *d = &from->deny_d[i];
        bool other_refuses = !any_meets(d, other->allow_d, other->allow.n) ||
                             any_subset_of(d, other->deny_d, other->deny.n);
        bool other_admits = any_subset_of(d, other->allow_d, other->allow.n) &&
                            !any_meets(d, other->deny_d, other->deny.n);
        if (other_admits)
            continue; /* exact: the other side admits all of it */
        if (!other_refuses)
            *lossy = true;
        gk_entries_add(&j->deny, from->deny.v[i].key, from->deny.v[i].origin);
    }
}

void gk_net_join(gk_layer *j, const gk_layer *a, const gk_layer *b, bool *lossy)
{
    /* An abstaining side allows everything, as does `net allow`. */
    bool a_full = !a->net_list && a->net != GK_TRI_FALSE;
    bool b_full = !b->net_list && b->net != GK_TRI_FALSE;
    if (a_full || b_full) {
        j->net = (a->net == GK_TRI_NONE && !a->net_list) || (b->net == GK_TRI_NONE && !b->net_list)
                     ? GK_TRI_NONE
                     : GK_TRI_TRUE;
        return;
    }
    j->net_list = true;
    j->net = GK_TRI_FALSE;
    if (!a->net_list || !b->net_list) {
        /* One side is `net deny;`, the empty set: the union is the list. */
        gk_net_dim_copy(&j->netd, a->net_list ? &a->netd : &b->netd);
        return;
    }
    for (size_t i = 0; i < a->netd.allow.n; i++)
        gk_entries_add(&j->netd.allow, a->netd.allow.v[i].key, a->netd.allow.v[i].origin);
    for (size_t i = 0; i < b->netd.allow.n; i++)
        gk_entries_add(&j->netd.allow, b->netd.allow.v[i].key, b->netd.allow.v[i].origin);
    join_denies(&j->netd, &a->netd, &b->netd, lossy);
    join_denies(&j->netd, &b->netd, &a->netd, lossy);
}

/* ---- the stack as one list ----------------------------------------------- */

typedef struct dvec {
    gk_dest *v;
    size_t n, cap;
} dvec;

static void dvec_add_unique(dvec *d, const gk_dest *x)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].kind == x->kind && d->v[i].port == x->port &&
            strcmp(d->v[i].host, x->host) == 0)
            return;
    GK_VEC_PUSH(d->v, d->n, d->cap, *x);
}

/* Is v[i] inside another member of v? (v is free of duplicates, so two
 * members are never inside each other.) */
static bool within_other(const gk_dest *x, const gk_dest *v, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++)
        if (k != i && gk_dest_subset(x, &v[k]))
            return true;
    return false;
}

gk_tri gk_stack_net(const gk_stack *s, gk_strvec *allow, gk_strvec *deny)
{
    bool any_list = false;
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->net_list && f->net == GK_TRI_FALSE)
            return GK_TRI_FALSE;
        any_list |= f->net_list;
    }
    if (!any_list)
        return GK_TRI_TRUE;
    dvec cur = {0}, denies = {0};
    bool first = true;
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->net_list)
            continue;
        for (size_t k = 0; k < f->netd.deny.n; k++)
            dvec_add_unique(&denies, &f->netd.deny_d[k]);
        if (first) {
            for (size_t k = 0; k < f->netd.allow.n; k++)
                dvec_add_unique(&cur, &f->netd.allow_d[k]);
            first = false;
            continue;
        }
        dvec next = {0};
        for (size_t a = 0; a < cur.n; a++)
            for (size_t k = 0; k < f->netd.allow.n; k++) {
                gk_dest x;
                if (gk_dest_intersect(&cur.v[a], &f->netd.allow_d[k], &x))
                    dvec_add_unique(&next, &x);
            }
        free(cur.v);
        cur = next;
    }
    /* Tidy, without changing the set: an allow inside some deny admits
     * nothing, nor one inside another allow anything more; a deny meeting
     * no allow, or inside another deny, refuses nothing more. */
    for (size_t a = 0; a < cur.n; a++)
        if (!any_subset_of(&cur.v[a], denies.v, denies.n) &&
            !within_other(&cur.v[a], cur.v, cur.n, a))
            gk_strvec_push_take(allow, gk_dest_format(&cur.v[a]));
    gk_strvec_sort_unique(allow);
    for (size_t d = 0; d < denies.n; d++)
        if (allow->n && any_meets(&denies.v[d], cur.v, cur.n) &&
            !within_other(&denies.v[d], denies.v, denies.n, d))
            gk_strvec_push_take(deny, gk_dest_format(&denies.v[d]));
    gk_strvec_sort_unique(deny);
    free(cur.v);
    free(denies.v);
    if (!allow->n)
        return GK_TRI_FALSE;
    return GK_TRI_NONE;
}
