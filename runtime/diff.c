/* diff.c - the changes between two snapshots, as the JSON document or a
 * unified diff of the run-result's "diff" string, cut to its budget
 * (frame-protocol.md §3b, §3c; the formats are in scratch.h).
 *
 * Line diffs are Myers' O((N+M)D) algorithm in its linear-space form
 * (the middle snake, found from both ends, then recursion on the halves,
 * as GNU diff and git's xdiff do), over lines reduced to integer classes
 * so a comparison is one integer compare. D is unbounded in general, so
 * the search counts its steps and past max_steps gives up on a minimal
 * script: everything between the common head and tail of the two files
 * becomes one replace (still a correct diff, only a larger one).
 */
#include "runtime/scratch.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

#include "common/json.h"
#include "runtime/scratch_int.h"

#define CONTEXT 3

/* ---- lines and their classes */

typedef struct line {
    const char *s;
    size_t len; /* with its '\n', if it has one */
} line;

static line *split_lines(const char *s, size_t len, size_t *n_out)
{
    size_t n = 0, cap = 0;
    line *v = NULL;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - s) + 1 : len;
        line l = {s + i, e - i};
        GK_VEC_PUSH(v, n, cap, l);
        i = e;
    }
    *n_out = n;
    return v;
}

/* Give every distinct line one integer, equal lines the same one. */
static void classify(const line *a, size_t na, const line *b, size_t nb, long *ca, long *cb)
{
    size_t total = na + nb;
    size_t size = 16;
    while (size < total * 2)
        size <<= 1;
    typedef struct slot {
        const line *l;
        uint64_t h;
        long id;
    } slot;
    gk_autofree slot *t = gk_calloc(size, sizeof(*t));
    long next = 0;
    for (size_t k = 0; k < total; k++) {
        const line *l = k < na ? &a[k] : &b[k - na];
        uint64_t h = gk_fnv(l->s, l->len);
        size_t i = (size_t)h & (size - 1);
        while (t[i].l && !(t[i].h == h && t[i].l->len == l->len &&
                           memcmp(t[i].l->s, l->s, l->len) == 0))
            i = (i + 1) & (size - 1);
        if (!t[i].l)
            t[i] = (slot){l, h, next++};
        if (k < na)
            ca[k] = t[i].id;
        else
            cb[k - na] = t[i].id;
    }
}

/* ---- Myers, linear space */

typedef struct myers {
    const long *a, *b;
    bool *da, *db;      /* line deleted from a / inserted into b */
    long *fv, *bv;      /* furthest x per diagonal k, indexed k + off */
    uint64_t steps, max_steps;
    bool over;
} myers;

/* The middle snake of the box [a0,a1) x [b0,b1) (both non-empty, no
 * common head or tail): a point on an optimal path, in *sx, *sy. */
static void split(myers *m, long a0, long a1, long b0, long b1, long *sx, long *sy)
{
    const long *a = m->a, *b = m->b;
    long *fv = m->fv, *bv = m->bv;
    long dmin = a0 - b1, dmax = a1 - b0;
    long fmid = a0 - b0, bmid = a1 - b1;
    long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
    bool odd = ((fmid - bmid) & 1) != 0;
    fv[fmid] = a0;
    bv[bmid] = a1;
    for (;;) {
        long d;
        /* forward: extend each diagonal by one edit and its snake */
        if (fmin > dmin)
            fv[--fmin - 1] = -1;
        else
            ++fmin;
        if (fmax < dmax)
            fv[++fmax + 1] = -1;
        else
            --fmax;
        for (d = fmax; d >= fmin; d -= 2) {
            long x = fv[d - 1] >= fv[d + 1] ? fv[d - 1] + 1 : fv[d + 1];
            long y = x - d, x0 = x;
            while (x < a1 && y < b1 && a[x] == b[y])
                x++, y++;
            m->steps += (uint64_t)(x - x0);
            fv[d] = x;
            if (odd && bmin <= d && d <= bmax && bv[d] <= x) {
                *sx = x;
                *sy = y;
                return;
            }
        }
        /* backward */
        if (bmin > dmin)
            bv[--bmin - 1] = LONG_MAX;
        else
            ++bmin;
        if (bmax < dmax)
            bv[++bmax + 1] = LONG_MAX;
        else
            --bmax;
        for (d = bmax; d >= bmin; d -= 2) {
            long x = bv[d - 1] < bv[d + 1] ? bv[d - 1] : bv[d + 1] - 1;
            long y = x - d, x0 = x;
            while (x > a0 && y > b0 && a[x - 1] == b[y - 1])
                x--, y--;
            m->steps += (uint64_t)(x0 - x);
            bv[d] = x;
            if (!odd && fmin <= d && d <= fmax && x <= fv[d]) {
                *sx = x;
                *sy = y;
                return;
            }
        }
        /* Steps: the diagonals visited plus the snake lengths above, so
         * the bound holds the whole search's work, not only its D. */
        m->steps += (uint64_t)(fmax - fmin + bmax - bmin) / 2 + 2;
        if (m->steps > m->max_steps) {
            m->over = true;
            return;
        }
    }
}

static void compare(myers *m, long a0, long a1, long b0, long b1)
{
    while (a0 < a1 && b0 < b1 && m->a[a0] == m->b[b0])
        a0++, b0++;
    while (a0 < a1 && b0 < b1 && m->a[a1 - 1] == m->b[b1 - 1])
        a1--, b1--;
    if (a0 == a1) {
        for (long j = b0; j < b1; j++)
            m->db[j] = true;
        return;
    }
    if (b0 == b1) {
        for (long i = a0; i < a1; i++)
            m->da[i] = true;
        return;
    }
    if (m->over) {
        /* Past the bound: this box is one replace. */
        for (long i = a0; i < a1; i++)
            m->da[i] = true;
        for (long j = b0; j < b1; j++)
            m->db[j] = true;
        return;
    }
    long sx, sy;
    split(m, a0, a1, b0, b1, &sx, &sy);
    if (m->over) {
        compare(m, a0, a1, b0, b1);
        return;
    }
    compare(m, a0, sx, b0, sy);
    compare(m, sx, a1, sy, b1);
}

/* ---- hunks */

static void put_line(gk_buf *b, char tag, const line *l)
{
    gk_buf_putc(b, tag);
    gk_buf_add(b, l->s, l->len);
    if (l->len == 0 || l->s[l->len - 1] != '\n')
        gk_buf_puts(b, "\n\\ No newline at end of file\n");
}

static void put_range(gk_buf *b, long start, long count)
{
    /* GNU's spelling: "l" for one line, "l,n" else, an empty range
     * named by the line before it. */
    if (count == 1)
        gk_buf_printf(b, "%ld", start + 1);
    else
        gk_buf_printf(b, "%ld,%ld", count == 0 ? start : start + 1, count);
}

typedef struct group {
    long a0, a1, b0, b1;
} group;

static void write_hunks(gk_buf *b, const line *la, long na, const line *lb, long nb,
                        const bool *da, const bool *db)
{
    /* The change groups, in order; lines outside them pair up equal. */
    group *g = NULL;
    size_t ng = 0, cap = 0;
    long i = 0, j = 0;
    while (i < na || j < nb) {
        if ((i < na && da[i]) || (j < nb && db[j])) {
            group x = {i, i, j, j};
            while (x.a1 < na && da[x.a1])
                x.a1++;
            while (x.b1 < nb && db[x.b1])
                x.b1++;
            GK_VEC_PUSH(g, ng, cap, x);
            i = x.a1;
            j = x.b1;
        } else {
            i++, j++;
        }
    }
    for (size_t k = 0; k < ng;) {
        size_t last = k;
        while (last + 1 < ng && g[last + 1].a0 - g[last].a1 <= 2 * CONTEXT)
            last++;
        long ha0 = g[k].a0 - CONTEXT < 0 ? 0 : g[k].a0 - CONTEXT;
        long hb0 = g[k].b0 - (g[k].a0 - ha0);
        long ha1 = g[last].a1 + CONTEXT > na ? na : g[last].a1 + CONTEXT;
        long hb1 = g[last].b1 + (ha1 - g[last].a1);
        gk_buf_puts(b, "@@ -");
        put_range(b, ha0, ha1 - ha0);
        gk_buf_puts(b, " +");
        put_range(b, hb0, hb1 - hb0);
        gk_buf_puts(b, " @@\n");
        long x = ha0, y = hb0;
        for (size_t q = k; q <= last; q++) {
            for (; x < g[q].a0; x++, y++)
                put_line(b, ' ', &la[x]);
            for (; x < g[q].a1; x++)
                put_line(b, '-', &la[x]);
            for (; y < g[q].b1; y++)
                put_line(b, '+', &lb[y]);
        }
        for (; x < ha1; x++, y++)
            put_line(b, ' ', &la[x]);
        k = last + 1;
    }
    free(g);
}

uint64_t gk_diff_text(gk_buf *b, const char *a_name, const char *a, size_t alen, const char *b_name,
                  const char *bb, size_t blen, uint64_t max_steps)
{
    gk_buf_printf(b, "--- %s\n+++ %s\n", a_name, b_name);
    size_t na, nb;
    gk_autofree line *la = split_lines(a, alen, &na);
    gk_autofree line *lb = split_lines(bb, blen, &nb);
    gk_autofree long *ca = gk_calloc(na + 1, sizeof(long));
    gk_autofree long *cb = gk_calloc(nb + 1, sizeof(long));
    classify(la, na, lb, nb, ca, cb);
    gk_autofree bool *da = gk_calloc(na + 1, sizeof(bool));
    gk_autofree bool *db = gk_calloc(nb + 1, sizeof(bool));
    size_t diags = na + nb + 3;
    gk_autofree long *fv = gk_calloc(diags, sizeof(long));
    gk_autofree long *bv = gk_calloc(diags, sizeof(long));
    myers m = {
        .a = ca,
        .b = cb,
        .da = da,
        .db = db,
        /* Diagonals run from -nb-1 to na+1. */
        .fv = fv + nb + 1,
        .bv = bv + nb + 1,
        .max_steps = max_steps ? max_steps : GK_DIFF_MAX_STEPS,
    };
    compare(&m, 0, (long)na, 0, (long)nb);
    write_hunks(b, la, (long)na, lb, (long)nb, da, db);
    return m.steps;
}

/* ---- changes */

typedef enum ch_kind { CH_CREATE, CH_MKDIR, CH_REPLACE, CH_MODIFY, CH_DELETE } ch_kind;
static const char *const ch_names[] = {"create", "mkdir", "replace", "modify", "delete"};

typedef struct change {
    ch_kind kind;
    const gk_snap_node *old, *new;
} change;

typedef struct meta {
    const gk_snap_node *old, *new;
    bool mode, mtime;
} meta;

static bool content_differs(const gk_snap_node *x, const gk_snap_node *y)
{
    switch (x->kind) {
    case GK_SNAP_FILE:
        if (x->unreadable || y->unreadable)
            return x->unreadable != y->unreadable || x->size != y->size ||
                   x->mtime_ns != y->mtime_ns;
        /* fall through */
    case GK_SNAP_SYMLINK:
        return x->size != y->size || (x->size && memcmp(x->bytes, y->bytes, x->size) != 0);
    default:
        return false;
    }
}

typedef struct changes {
    change *cur, *del;
    size_t ncur, ndel, capcur, capdel;
    meta *meta;
    size_t nmeta, capmeta;
} changes;

/* Below a dir one snapshot could not open or search: nothing there can
 * be compared, so nothing there is reported (not as deleted, not as
 * created). Only a walk without CAP_DAC_OVERRIDE meets one. */
static bool below_unreadable(const gk_strvec *dirs, const char *p)
{
    for (size_t i = 0; i < dirs->n; i++)
        if (gk_scratch_is_ancestor(dirs->v[i], p))
            return true;
    return false;
}

static void unreadable_dirs(const gk_snapshot *s, gk_strvec *out)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].kind == GK_SNAP_DIR && s->v[i].unreadable)
            gk_strvec_push(out, s->v[i].path);
}

static void collect(const gk_snapshot *before, const gk_snapshot *after, bool metadata,
                    changes *c)
{
    gk_strvec blind = {0};
    unreadable_dirs(before, &blind);
    unreadable_dirs(after, &blind);
    size_t i = 0, j = 0;
    while (i < before->n || j < after->n) {
        int cmp = i < before->n && j < after->n
                      ? gk_strcmp_bytes(before->v[i].path, after->v[j].path)
                      : (i < before->n ? -1 : 1);
        if (cmp < 0) {
            change x = {CH_DELETE, &before->v[i++], NULL};
            if (!blind.n || !below_unreadable(&blind, x.old->path))
                GK_VEC_PUSH(c->del, c->ndel, c->capdel, x);
        } else if (cmp > 0) {
            const gk_snap_node *n = &after->v[j++];
            change x = {n->kind == GK_SNAP_DIR ? CH_MKDIR : CH_CREATE, NULL, n};
            if (!blind.n || !below_unreadable(&blind, n->path))
                GK_VEC_PUSH(c->cur, c->ncur, c->capcur, x);
        } else {
            const gk_snap_node *o = &before->v[i++], *n = &after->v[j++];
            if (o->kind != n->kind) {
                change x = {CH_REPLACE, o, n};
                GK_VEC_PUSH(c->cur, c->ncur, c->capcur, x);
                continue;
            }
            if (content_differs(o, n)) {
                change x = {CH_MODIFY, o, n};
                GK_VEC_PUSH(c->cur, c->ncur, c->capcur, x);
            }
            if (metadata && (o->mode != n->mode || o->mtime_ns != n->mtime_ns)) {
                meta x = {o, n, o->mode != n->mode, o->mtime_ns != n->mtime_ns};
                GK_VEC_PUSH(c->meta, c->nmeta, c->capmeta, x);
            }
        }
    }
    gk_strvec_free(&blind);
}

static void changes_free(changes *c)
{
    free(c->cur);
    free(c->del);
    free(c->meta);
}

static uint64_t node_bytes(const gk_snap_node *n)
{
    return n && (n->kind == GK_SNAP_FILE || n->kind == GK_SNAP_SYMLINK) ? n->size : 0;
}

/* ---- JSON */

/* One entry's JSON text, standalone: pieces are measured one by one. */
static char *json_change(const change *x)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    const gk_snap_node *n = x->kind == CH_DELETE ? x->old : x->new;
    gk_json_object(&j);
    gk_json_key(&j, "kind");
    gk_json_string(&j, ch_names[x->kind]);
    gk_json_key(&j, "path");
    gk_json_string(&j, n->path);
    if (n->kind == GK_SNAP_SYMLINK || n->kind == GK_SNAP_OTHER) {
        gk_json_key(&j, "node");
        gk_json_string(&j, n->kind == GK_SNAP_SYMLINK ? "symlink" : "other");
    }
    gk_json_key(&j, "oldBytes");
    gk_json_int(&j, (long long)node_bytes(x->old));
    gk_json_key(&j, "newBytes");
    gk_json_int(&j, (long long)node_bytes(x->new));
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

static char *json_meta(const char *path, const char *field, long long o, long long n)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    gk_json_key(&j, "path");
    gk_json_string(&j, path);
    gk_json_key(&j, "field");
    gk_json_string(&j, field);
    gk_json_key(&j, "old");
    gk_json_int(&j, o);
    gk_json_key(&j, "new");
    gk_json_int(&j, n);
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

static size_t digits(uint64_t v)
{
    size_t d = 1;
    while (v >= 10)
        v /= 10, d++;
    return d;
}

static int diff_json(const changes *c, const gk_diff_opts *o, gk_buf *out, bool *cut, char **err)
{
    gk_strvec ch = {0}, md = {0};
    for (size_t i = 0; i < c->ncur; i++)
        gk_strvec_push_take(&ch, json_change(&c->cur[i]));
    for (size_t i = 0; i < c->ndel; i++)
        gk_strvec_push_take(&ch, json_change(&c->del[i]));
    for (size_t i = 0; i < c->nmeta; i++) {
        const meta *m = &c->meta[i];
        if (m->mode)
            gk_strvec_push_take(&md, json_meta(m->new->path, "mode", m->old->mode, m->new->mode));
        if (m->mtime)
            gk_strvec_push_take(&md, json_meta(m->new->path, "mtime", m->old->mtime_ns,
                                               m->new->mtime_ns));
    }
    /* Escaped sizes add up piece by piece: every piece is valid UTF-8
     * (the writer replaced what was not) and escaping is per code point. */
    size_t nch = ch.n, nmd = md.n;
    gk_autofree size_t *ech = gk_calloc(nch + 1, sizeof(size_t));
    gk_autofree size_t *emd = gk_calloc(nmd + 1, sizeof(size_t));
    size_t sum = 0;
    for (size_t i = 0; i < nch; i++)
        sum += ech[i] = gk_json_escaped_size(ch.v[i], strlen(ch.v[i]));
    for (size_t i = 0; i < nmd; i++)
        sum += emd[i] = gk_json_escaped_size(md.v[i], strlen(md.v[i]));
    /* {"changes":[...]} escapes to {\"changes\":[...]}: 2 per quote. */
    const size_t base = strlen("{\\\"changes\\\":[]}") +
                        (o->metadata ? strlen(",\\\"metadataChanges\\\":[]") : 0);
    size_t kch = nch, kmd = nmd;
    size_t total = nch + nmd;
    for (;;) {
        size_t kept = kch + kmd;
        size_t commas = (kch ? kch - 1 : 0) + (kmd ? kmd - 1 : 0);
        size_t omitted = total - kept;
        size_t need = base + sum + commas +
                      (omitted ? strlen(",\\\"omitted\\\":") + digits(omitted) : 0);
        if (!o->budget || need <= o->budget)
            break;
        if (kept == 0) {
            gk_strvec_free(&ch);
            gk_strvec_free(&md);
            return gk_scratch_fail(err, -ENOBUFS,
                                   "diff budget of %zu bytes cannot hold even an empty document",
                                   o->budget);
        }
        if (kmd)
            sum -= emd[--kmd];
        else
            sum -= ech[--kch];
    }
    gk_buf_puts(out, "{\"changes\":[");
    for (size_t i = 0; i < kch; i++) {
        if (i)
            gk_buf_putc(out, ',');
        gk_buf_puts(out, ch.v[i]);
    }
    gk_buf_putc(out, ']');
    if (o->metadata) {
        gk_buf_puts(out, ",\"metadataChanges\":[");
        for (size_t i = 0; i < kmd; i++) {
            if (i)
                gk_buf_putc(out, ',');
            gk_buf_puts(out, md.v[i]);
        }
        gk_buf_putc(out, ']');
    }
    if (kch + kmd < total)
        gk_buf_printf(out, ",\"omitted\":%zu", total - kch - kmd);
    gk_buf_putc(out, '}');
    *cut = kch + kmd < total;
    gk_strvec_free(&ch);
    gk_strvec_free(&md);
    return 0;
}

/* ---- unified */

/* A path as the diff names it: "a" + path, in double quotes with C
 * escapes when it holds a control character, '"' or '\\' (git's rule),
 * so every entry stays one line. */
static void put_name(gk_buf *b, const char *side, const char *p)
{
    bool quote = false;
    for (const unsigned char *c = (const unsigned char *)p; *c; c++)
        if (*c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
            quote = true;
    if (!quote) {
        gk_buf_puts(b, side);
        gk_buf_puts(b, p);
        return;
    }
    gk_buf_putc(b, '"');
    gk_buf_puts(b, side);
    for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
        switch (*c) {
        case '\n': gk_buf_puts(b, "\\n"); break;
        case '\t': gk_buf_puts(b, "\\t"); break;
        case '"': gk_buf_puts(b, "\\\""); break;
        case '\\': gk_buf_puts(b, "\\\\"); break;
        default:
            if (*c < 0x20 || *c == 0x7f)
                gk_buf_printf(b, "\\%03o", *c);
            else
                gk_buf_putc(b, (char)*c);
        }
    }
    gk_buf_putc(b, '"');
}

static char *name_of(const char *side, const char *p)
{
    gk_buf b = {0};
    put_name(&b, side, p);
    return gk_buf_steal(&b, NULL);
}

static bool is_text(const gk_snap_node *n)
{
    return !n->unreadable && (n->size == 0 || (memchr(n->bytes, 0, n->size) == NULL &&
                                               gk_utf8_valid((const char *)n->bytes, n->size)));
}

static void put_target(gk_buf *b, const gk_snap_node *n)
{
    /* Targets are quoted like paths (the side prefix is empty). */
    gk_autofree char *t = gk_strndup(n->bytes ? (const char *)n->bytes : "", n->size);
    put_name(b, "", t);
}

/* left: what the whole unified diff may still spend on line diffs. */
static void unified_file(gk_buf *b, const gk_snap_node *o, const gk_snap_node *n, uint64_t *left)
{
    gk_autofree char *an = o ? name_of("a", o->path) : gk_strdup("/dev/null");
    gk_autofree char *bn = n ? name_of("b", n->path) : gk_strdup("/dev/null");
    if ((o && o->unreadable) || (n && n->unreadable)) {
        gk_buf_printf(b, "Files %s and %s differ (unreadable)\n", an, bn);
        return;
    }
    /* An empty file has no line to show and a bare ---/+++ pair reads
     * as nothing at all. */
    if (!o && n->size == 0) {
        gk_buf_printf(b, "New empty file %s\n", bn);
        return;
    }
    if (!n && o->size == 0) {
        gk_buf_printf(b, "Deleted empty file %s\n", an);
        return;
    }
    if ((o && !is_text(o)) || (n && !is_text(n))) {
        gk_buf_printf(b, "Binary files %s and %s differ\n", an, bn);
        return;
    }
    /* 1, not 0 (the default), once the total is spent: replace at once. */
    uint64_t max = *left < GK_DIFF_MAX_STEPS ? (*left ? *left : 1) : GK_DIFF_MAX_STEPS;
    uint64_t used = gk_diff_text(b, an, o ? (const char *)o->bytes : "", o ? o->size : 0, bn,
                                 n ? (const char *)n->bytes : "", n ? n->size : 0, max);
    *left = used < *left ? *left - used : 0;
}

static void unified_create(gk_buf *b, const gk_snap_node *n, uint64_t *left)
{
    switch (n->kind) {
    case GK_SNAP_FILE:
        unified_file(b, NULL, n, left);
        break;
    case GK_SNAP_DIR:
        gk_buf_puts(b, "New directory ");
        put_name(b, "b", n->path);
        gk_buf_putc(b, '\n');
        break;
    case GK_SNAP_SYMLINK:
        gk_buf_puts(b, "New symlink ");
        put_name(b, "b", n->path);
        gk_buf_puts(b, " -> ");
        put_target(b, n);
        gk_buf_putc(b, '\n');
        break;
    case GK_SNAP_OTHER:
        gk_buf_puts(b, "New special file ");
        put_name(b, "b", n->path);
        gk_buf_putc(b, '\n');
        break;
    }
}

static void unified_delete(gk_buf *b, const gk_snap_node *o, uint64_t *left)
{
    switch (o->kind) {
    case GK_SNAP_FILE:
        unified_file(b, o, NULL, left);
        break;
    case GK_SNAP_DIR:
        gk_buf_puts(b, "Deleted directory ");
        put_name(b, "a", o->path);
        gk_buf_putc(b, '\n');
        break;
    case GK_SNAP_SYMLINK:
        gk_buf_puts(b, "Deleted symlink ");
        put_name(b, "a", o->path);
        gk_buf_puts(b, " -> ");
        put_target(b, o);
        gk_buf_putc(b, '\n');
        break;
    case GK_SNAP_OTHER:
        gk_buf_puts(b, "Deleted special file ");
        put_name(b, "a", o->path);
        gk_buf_putc(b, '\n');
        break;
    }
}

static void unified_change(gk_buf *b, const change *x, uint64_t *left)
{
    switch (x->kind) {
    case CH_CREATE:
    case CH_MKDIR:
        unified_create(b, x->new, left);
        break;
    case CH_DELETE:
        unified_delete(b, x->old, left);
        break;
    case CH_REPLACE:
        unified_delete(b, x->old, left);
        unified_create(b, x->new, left);
        break;
    case CH_MODIFY:
        if (x->new->kind == GK_SNAP_SYMLINK) {
            gk_buf_puts(b, "Changed symlink ");
            put_name(b, "b", x->new->path);
            gk_buf_puts(b, ": ");
            put_target(b, x->old);
            gk_buf_puts(b, " -> ");
            put_target(b, x->new);
            gk_buf_putc(b, '\n');
        } else {
            unified_file(b, x->old, x->new, left);
        }
        break;
    }
}

static void unified_meta(gk_buf *b, const meta *m)
{
    if (m->mode) {
        gk_buf_puts(b, "Mode of ");
        put_name(b, "b", m->new->path);
        gk_buf_printf(b, ": 0%o -> 0%o\n", m->old->mode, m->new->mode);
    }
    if (m->mtime) {
        gk_buf_puts(b, "Mtime of ");
        put_name(b, "b", m->new->path);
        gk_buf_printf(b, ": %" PRId64 " -> %" PRId64 "\n", m->old->mtime_ns, m->new->mtime_ns);
    }
}

/* Each entry is written to a piece of its own and kept only while the
 * text so far is within budget raw bytes: every raw byte costs at least
 * one escaped byte, so nothing past that can survive the cut, and only
 * its length (*dropped, for the marker's N) is needed. */
static void keep_piece(gk_buf *out, gk_buf *piece, size_t budget, size_t *dropped)
{
    if (!budget || out->len <= budget)
        gk_buf_add(out, piece->data ? piece->data : "", piece->len);
    else
        *dropped += piece->len;
    piece->len = 0;
}

static void diff_unified(const changes *c, size_t budget, gk_buf *out, size_t *dropped)
{
    /* The current tree's changes and the metadata lines, merged by path
     * (a path's metadata first), then the deletions. */
    gk_buf piece = {0};
    uint64_t left = GK_DIFF_MAX_TOTAL_STEPS;
    size_t i = 0, k = 0;
    while (i < c->ncur || k < c->nmeta) {
        const char *pc = i < c->ncur ? c->cur[i].new->path : NULL;
        const char *pm = k < c->nmeta ? c->meta[k].new->path : NULL;
        if (pm && (!pc || gk_strcmp_bytes(pm, pc) <= 0))
            unified_meta(&piece, &c->meta[k++]);
        else
            unified_change(&piece, &c->cur[i++], &left);
        keep_piece(out, &piece, budget, dropped);
    }
    for (size_t d = 0; d < c->ndel; d++) {
        unified_change(&piece, &c->del[d], &left);
        keep_piece(out, &piece, budget, dropped);
    }
    gk_buf_free(&piece);
}

/* Cut a unified diff to budget (escaped size): before the newline that
 * ends its last whole line, then the marker. */
static int cut_unified(gk_buf *b, size_t dropped, size_t budget, bool *cut, char **err)
{
    size_t total = b->len + dropped;
    if (!budget || (!dropped && gk_json_escaped_size(b->data, b->len) <= budget)) {
        *cut = false;
        return 0;
    }
    /* Room for the marker with N at its widest (N <= total). */
    gk_autofree char *widest = gk_printf("\n[truncated: %zu bytes omitted]\n", total);
    size_t mark = gk_json_escaped_size(widest, strlen(widest));
    if (mark > budget)
        return gk_scratch_fail(err, -ENOBUFS,
                               "diff budget of %zu bytes cannot hold the truncation marker",
                               budget);
    size_t esc;
    size_t fit = gk_json_escaped_prefix(b->data, b->len, budget - mark, &esc);
    /* The kept text is b[0, p) where b[p] is a '\n' and p <= fit. */
    size_t p = fit;
    while (p > 0 && b->data[p] != '\n')
        p--;
    if (b->data[p] != '\n')
        p = 0;
    b->len = p;
    b->data[p] = '\0';
    gk_buf_printf(b, "\n[truncated: %zu bytes omitted]\n", total - p);
    *cut = true;
    return 0;
}

int gk_scratch_diff(const gk_snapshot *before, const gk_snapshot *after, const gk_diff_opts *o,
                    char **out, size_t *out_len, bool *cut, char **err)
{
    changes c = {0};
    collect(before, after, o->metadata, &c);
    gk_buf b = {0};
    gk_buf_grow(&b, 64);
    bool was_cut = false;
    int rc;
    if (o->format == GK_DIFF_JSON) {
        rc = diff_json(&c, o, &b, &was_cut, err);
    } else {
        size_t dropped = 0;
        diff_unified(&c, o->budget, &b, &dropped);
        rc = cut_unified(&b, dropped, o->budget, &was_cut, err);
    }
    changes_free(&c);
    if (rc < 0) {
        gk_buf_free(&b);
        *out = NULL;
        return rc;
    }
    if (cut)
        *cut = was_cut;
    *out = gk_buf_steal(&b, out_len);
    return 0;
}
