/* gate_exec.c - the compiled exec index: the gate's answer on a command
 * without folding the layers one by one (grant-language.md §6, steps 1-3).
 *
 * Every name, file and dir any layer lists is one hash slot carrying one
 * bit per layer and kind, so an answer costs a lookup per identity, per
 * basename and per ancestor of the walked and canonical paths, whatever
 * the rule count. Subcommands entries hang off their slot so step 2 sees
 * every entry that binds argv[1] at once, which also answers the
 * projection's question "for some argv[1]?" exactly: the intersection of
 * the binding entries' lists is not empty.
 *
 * The explaining fold (decide.c) stays the reference: the property tests
 * hold this index to it on random stacks. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "gate/gate.h"
#include "common/pathmap.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GK_EXEC_MAX_LAYERS 64

/* What a layer lists at a key. */
enum { X_NAME, X_FILE, X_DIR, X_VETO_NAME, X_VETO_FILE, X_VETO_DIR, X_KINDS };

/* What the layers list at one key (indexed by the key's pathmap id). */
typedef struct xslot {
    uint64_t bits[X_KINDS]; /* one bit per layer */
    uint32_t binds; /* 1 + index of the first Subcommands ref at this key, 0: none */
} xslot;

/* A Subcommands entry (not Allow) of an allowing layer at a key. */
typedef struct bind_ref {
    const gk_admit *a;
    uint32_t next; /* 1 + index of the next ref at the same key, 0: none */
} bind_ref;

typedef struct veto_pattern {
    const pcre2_code *code; /* NULL: uncompilable, vetoes everything (fail closed) */
    uint64_t layer;         /* its layer's bit */
    /* Bytes every match needs (PCRE2's own study, -1: none): most names
     * are turned away by a byte test before the matcher starts. */
    int first;              /* the first byte of any match */
    bool anchored;          /* ... which is then the subject's first byte */
    int last;               /* a byte somewhere in any match */
} veto_pattern;

static veto_pattern pattern_of(const pcre2_code *code, const char *text, uint64_t bit)
{
    veto_pattern vp = {code, bit, -1, false, -1};
    /* Inline options could make the literals caseless: no shortcut then. */
    if (!code || strstr(text, "(?"))
        return vp;
    uint32_t type = 0, unit = 0, options = 0;
    if (pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODETYPE, &type) == 0 && type == 1 &&
        pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODEUNIT, &unit) == 0 && unit < 256) {
        vp.first = (int)unit;
        vp.anchored = pcre2_pattern_info(code, PCRE2_INFO_ALLOPTIONS, &options) == 0 &&
                      (options & PCRE2_ANCHORED);
    }
    if (pcre2_pattern_info(code, PCRE2_INFO_LASTCODETYPE, &type) == 0 && type == 1 &&
        pcre2_pattern_info(code, PCRE2_INFO_LASTCODEUNIT, &unit) == 0 && unit < 256)
        vp.last = (int)unit;
    return vp;
}

/* A vetoed program's file on the compiling host: another name for it (a
 * hard link) is the same program. */
typedef struct same_file {
    dev_t dev;
    ino_t ino;
    const gk_entry *e;  /* the veto that named it */
    const gk_layer *layer;
} same_file;

/* The vetoed programs' files, sorted by (dev, ino); host target only.
 * Made when first needed (a PATH walk of every vetoed name): a query on
 * a file with one link cannot be another name of one, so checking a
 * command usually needs none. */
typedef struct same_table {
    same_file *v;
    size_t n, cap;
} same_table;

struct gk_exec_index {
    size_t nveto_dirs;     /* veto dir keys, any layer */
    const grant_policy *policy;
    same_table *same;      /* NULL until made (same_of) */
    bool usable; /* false: more layers than bits, the fold answers */
    uint64_t allow_layers; /* layers whose exec section lists admissions */
    gk_pathmap keys;       /* every name, file and dir a layer lists (borrowed) */
    xslot *slots;          /* by key id */
    size_t nslots, capslots;
    bind_ref *binds;
    size_t nbinds, capbinds;
    veto_pattern *patterns;
    size_t npatterns, cappatterns;
};

static xslot *slot_for(gk_exec_index *ix, const char *key)
{
    size_t id = gk_pathmap_intern(&ix->keys, key, strlen(key));
    if (id == ix->nslots) {
        xslot empty = {0};
        GK_VEC_PUSH(ix->slots, ix->nslots, ix->capslots, empty);
    }
    return &ix->slots[id];
}

static const xslot *lookup(const gk_exec_index *ix, const char *key)
{
    size_t len = strlen(key);
    long id = gk_pathmap_find(&ix->keys, key, len, gk_fnv(key, len));
    return id >= 0 ? &ix->slots[id] : NULL;
}

static void add_admits(gk_exec_index *ix, const gk_admits *a, uint64_t bit, bool file)
{
    for (size_t i = 0; i < a->n; i++) {
        xslot *s = slot_for(ix, a->v[i].key);
        s->bits[file ? X_FILE : X_NAME] |= bit;
        if (a->v[i].all)
            continue;
        bind_ref r = {&a->v[i], s->binds};
        GK_VEC_PUSH(ix->binds, ix->nbinds, ix->capbinds, r);
        s->binds = (uint32_t)ix->nbinds;
    }
}

static void add_entries(gk_exec_index *ix, const gk_entries *e, uint64_t bit, int kind)
{
    for (size_t i = 0; i < e->n; i++)
        slot_for(ix, e->v[i].key)->bits[kind] |= bit;
}

static int same_cmp(const void *a, const void *b)
{
    const same_file *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static void add_same(same_table *t, const char *file, const gk_entry *e, const gk_layer *f)
{
    struct stat st;
    /* A file with one link has no other name to be run by: leaving it out
     * keeps the per-query stat away from every policy without such a veto. */
    if (!file || stat(file, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2)
        return;
    same_file sf = {st.st_dev, st.st_ino, e, f};
    GK_VEC_PUSH(t->v, t->n, t->cap, sf);
}

/* The files the vetoed names (as PATH finds them) and files are on this
 * host. Offline nothing can be looked at: vetoes stay names and paths. */
static void same_files_build(same_table *t, const grant_policy *p, gk_resolve_cache *cache)
{
    if (p->ctx->target != GRANT_TARGET_HOST)
        return;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        for (size_t i = 0; i < f->exec.veto_names.n; i++) {
            char *w, *c;
            gk_walk_head_cached(p->ctx, f->exec.veto_names.v[i].key, NULL, NULL, &w, &c, cache);
            add_same(t, c, &f->exec.veto_names.v[i], f);
            free(w);
            free(c);
        }
        for (size_t i = 0; i < f->exec.veto_files.n; i++)
            add_same(t, f->exec.veto_files.v[i].key, &f->exec.veto_files.v[i], f);
    }
    if (t->n > 1)
        qsort(t->v, t->n, sizeof(*t->v), same_cmp);
}

/* The table, made on first use (cache, may be NULL, answers its walk).
 * The index is shared once built: racers each make one, the first
 * published wins, the others free theirs (as the gate's index). */
static const same_table *same_of(const gk_exec_index *ix, gk_resolve_cache *cache)
{
    gk_exec_index *mut = (gk_exec_index *)ix;
    same_table *t = __atomic_load_n(&mut->same, __ATOMIC_ACQUIRE);
    if (t)
        return t;
    same_table *made = gk_calloc(1, sizeof(*made));
    same_files_build(made, ix->policy, cache);
    if (__atomic_compare_exchange_n(&mut->same, &t, made, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return made;
    free(made->v);
    free(made);
    return t;
}

void gk_exec_index_prime(const gk_exec_index *ix, gk_resolve_cache *cache)
{
    same_of(ix, cache);
}

const gk_entry *gk_exec_index_same_file(const gk_exec_index *ix, const char *canonical,
                                        const gk_layer **layer)
{
    if (!canonical || ix->policy->ctx->target != GRANT_TARGET_HOST)
        return NULL; /* offline the table is empty, and nothing is looked at */
    const same_table *made = __atomic_load_n(&ix->same, __ATOMIC_ACQUIRE);
    if (made && !made->n)
        return NULL;
    struct stat st;
    /* Every file in the table is regular with two links or more: the
     * same file has them too. */
    if (stat(canonical, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2)
        return NULL;
    return gk_exec_index_same_id(ix, st.st_dev, st.st_ino, layer);
}

const gk_entry *gk_exec_index_same_id(const gk_exec_index *ix, uint64_t dev, uint64_t ino,
                                      const gk_layer **layer)
{
    const same_table *t = same_of(ix, NULL);
    if (!t->n)
        return NULL;
    same_file key = {(dev_t)dev, (ino_t)ino, NULL, NULL};
    const same_file *hit = bsearch(&key, t->v, t->n, sizeof(*t->v), same_cmp);
    if (!hit)
        return NULL;
    if (layer)
        *layer = hit->layer;
    return hit->e;
}

gk_exec_index *gk_exec_index_build(const grant_policy *p, gk_resolve_cache *cache)
{
    gk_exec_index *ix = gk_calloc(1, sizeof(*ix));
    ix->policy = p;
    if (cache)
        same_of(ix, cache);
    ix->usable = p->stack.n <= GK_EXEC_MAX_LAYERS;
    if (!ix->usable)
        return ix;
    size_t keys = 0;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_exec_dim *x = &p->stack.v[l]->exec;
        if (p->stack.v[l]->has_exec)
            keys += x->names.n + x->files.n + x->dirs.n + x->veto_names.n + x->veto_files.n +
                    x->veto_dirs.n;
    }
    gk_pathmap_reserve(&ix->keys, keys);
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        const gk_exec_dim *x = &f->exec;
        uint64_t bit = 1ULL << l;
        if (x->has_allow) { /* a deny-only section admits by default */
            ix->allow_layers |= bit;
            add_admits(ix, &x->names, bit, false);
            add_admits(ix, &x->files, bit, true);
            add_entries(ix, &x->dirs, bit, X_DIR);
        }
        add_entries(ix, &x->veto_names, bit, X_VETO_NAME);
        add_entries(ix, &x->veto_files, bit, X_VETO_FILE);
        add_entries(ix, &x->veto_dirs, bit, X_VETO_DIR);
        ix->nveto_dirs += x->veto_dirs.n;
        for (size_t i = 0; i < x->veto_match.n; i++) {
            veto_pattern vp = pattern_of(x->match_code ? x->match_code[i] : NULL,
                                         x->veto_match.v[i].key, bit);
            GK_VEC_PUSH(ix->patterns, ix->npatterns, ix->cappatterns, vp);
        }
    }
    return ix;
}

void gk_exec_index_free(gk_exec_index *ix)
{
    if (!ix)
        return;
    gk_pathmap_clear(&ix->keys);
    if (ix->same)
        free(ix->same->v);
    free(ix->same);
    free(ix->slots);
    free(ix->binds);
    free(ix->patterns);
    free(ix);
}

/* The veto-dir and allow-dir bits of every proper ancestor of p, as the
 * fold's dir_holding sees them (a trailing '/' makes p its own ancestor):
 * every prefix gk_path_prefixes_of gives but p itself. */
static void ancestor_bits(const gk_exec_index *ix, const char *p, uint64_t *veto_dir,
                          uint64_t *dir)
{
    if (!ix->nslots || !gk_path_root_len(p)) /* "/" or a drive root "c:/" */
        return;
    gk_path_prefixes px;
    gk_path_prefixes_of(p, &px);
    for (size_t l = 0; l + 1 < px.n; l++) {
        long id = gk_pathmap_find(&ix->keys, p, px.len[l], px.hash[l]);
        if (id >= 0) {
            *veto_dir |= ix->slots[id].bits[X_VETO_DIR];
            *dir |= ix->slots[id].bits[X_DIR];
        }
    }
    gk_path_prefixes_free(&px);
}

/* The layers whose veto patterns hit a basename. */
static uint64_t pattern_bits(const gk_exec_index *ix, const char *base, pcre2_match_data **md)
{
    uint64_t bits = 0;
    size_t len = strlen(base);
    for (size_t i = 0; i < ix->npatterns; i++) {
        const veto_pattern *vp = &ix->patterns[i];
        if (bits & vp->layer)
            continue;
        if (!vp->code) {
            bits |= vp->layer;
            continue;
        }
        if (vp->first >= 0 && (vp->anchored ? (unsigned char)base[0] != vp->first
                                             : !memchr(base, vp->first, len)))
            continue;
        if (vp->last >= 0 && !memchr(base, vp->last, len))
            continue;
        if (!*md)
            *md = pcre2_match_data_create(1, NULL);
        /* No memory for the match data, or a matcher that gave up: a veto
         * that cannot tell has matched (fail closed). */
        if (!*md || gk_pattern_match(vp->code, base, len, *md) != 0)
            bits |= vp->layer;
    }
    return bits;
}

#define MAX_BINDS (6 * GK_EXEC_MAX_LAYERS) /* 3 identities x (id, basename) x layers */

/* A slot holds at most one entry per layer, so the bound is never reached;
 * false if it were, and the caller refuses rather than drop a restriction. */
static bool collect_binds(const gk_exec_index *ix, const xslot *s, const gk_admit **out,
                          size_t *n)
{
    for (uint32_t i = s ? s->binds : 0; i; i = ix->binds[i - 1].next) {
        if (*n == MAX_BINDS)
            return false;
        out[(*n)++] = ix->binds[i - 1].a;
    }
    return true;
}

int gk_exec_index_answer(const gk_exec_index *ix, const grant_exec_query *q, gk_exec_question what)
{
    if (!ix->usable)
        return -1;
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    uint64_t veto = 0, admitted = 0;
    const gk_admit *binds[MAX_BINDS];
    size_t nbinds = 0;
    bool complete = true;
    pcre2_match_data *md = NULL;
    const char *matched_base = NULL;
    uint64_t matched_bits = 0;
    for (int k = 0; k < 3; k++) {
        const char *id = ids[k];
        /* A canonical file spelled as the walked one adds nothing: steps
         * 1 and 2 read both alike, and step 3 reads neither. */
        if (!id || (k == 2 && ids[1] && strcmp(id, ids[1]) == 0))
            continue;
        const char *base = gk_basename(id);
        const xslot *at = lookup(ix, id);
        const xslot *at_base = base != id ? lookup(ix, base) : NULL;
        /* Step 1: vetoes read every identity and its basename; veto dirs
         * the walked and canonical paths. */
        if (at)
            veto |= at->bits[X_VETO_NAME] | at->bits[X_VETO_FILE];
        if (at_base)
            veto |= at_base->bits[X_VETO_NAME];
        if (ix->npatterns) {
            if (!matched_base || strcmp(matched_base, base) != 0) {
                matched_bits = pattern_bits(ix, base, &md);
                matched_base = base;
            }
            veto |= matched_bits;
        }
        uint64_t veto_dir = 0, allow_dir = 0;
        if (k > 0)
            ancestor_bits(ix, id, &veto_dir, &allow_dir);
        veto |= veto_dir;
        /* Step 2: Subcommands entries on any identity or its basename. */
        complete &= collect_binds(ix, at, binds, &nbinds);
        complete &= collect_binds(ix, at_base, binds, &nbinds);
        /* Step 3: the spelling (name or file), the walked file, and the
         * allow dirs holding the walked path. */
        if (k == 0 && at)
            admitted |= at->bits[X_NAME] | at->bits[X_FILE];
        if (k == 1)
            admitted |= (at ? at->bits[X_FILE] : 0) | allow_dir;
    }
    if (md)
        pcre2_match_data_free(md);
    if (what == GK_EXEC_VETO)
        return veto ? GRANT_DENIED : GRANT_ALLOWED;
    if (veto || !complete || (ix->allow_layers & ~admitted))
        return GRANT_DENIED;
    if (what == GK_EXEC_ANY_ARGV1)
        return gk_admits_share_argv1(binds, nbinds) ? GRANT_ALLOWED : GRANT_DENIED;
    for (size_t i = 0; i < nbinds; i++)
        if (!q->argv1 || !gk_strvec_bsearch(&binds[i]->subs, q->argv1))
            return GRANT_DENIED;
    return GRANT_ALLOWED;
}

/* ---- a directory scan's questions (projection.c) ---------------------------
 *
 * The veto scan asks about every entry of many directories: the same
 * answer as gk_exec_index_answer(GK_EXEC_VETO), taken apart so what all
 * entries of a directory share (the veto dirs above it) is computed once. */

bool gk_exec_index_usable(const gk_exec_index *ix)
{
    return ix->usable;
}

bool gk_exec_index_has_same(const gk_exec_index *ix)
{
    return same_of(ix, NULL)->n > 0;
}

uint64_t gk_exec_index_dir_bits(const gk_exec_index *ix, const char *dir)
{
    uint64_t veto_dir = 0, allow_dir = 0;
    if (!ix->nveto_dirs || !ix->nslots)
        return 0;
    /* The proper ancestors of dir/x: dir's own and dir itself. */
    gk_autofree char *probe = gk_path_join(dir, "x");
    ancestor_bits(ix, probe, &veto_dir, &allow_dir);
    return veto_dir;
}

uint64_t gk_exec_index_base_bits(const gk_exec_index *ix, const char *base, gk_scan_match *m)
{
    const xslot *at = lookup(ix, base);
    uint64_t veto = at ? at->bits[X_VETO_NAME] | at->bits[X_VETO_FILE] : 0;
    if (ix->npatterns)
        veto |= pattern_bits(ix, base, &m->md);
    return veto;
}

uint64_t gk_exec_index_file_bits(const gk_exec_index *ix, const char *path)
{
    const xslot *at = lookup(ix, path);
    return at ? at->bits[X_VETO_NAME] | at->bits[X_VETO_FILE] : 0;
}

bool gk_exec_index_dir_has_files(const gk_exec_index *ix, const char *dir)
{
    size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    for (size_t id = 0; id < ix->nslots; id++) {
        if (!ix->slots[id].bits[X_VETO_FILE] && !ix->slots[id].bits[X_VETO_NAME])
            continue;
        const gk_pathmap_key *k = &ix->keys.keys[id];
        /* A key directly inside dir (a veto name never holds a '/'). */
        if (k->len > n + 1 && memcmp(k->key, dir, n) == 0 && k->key[n] == '/' &&
            !memchr(k->key + n + 1, '/', k->len - n - 1))
            return true;
    }
    return false;
}

void gk_scan_match_free(gk_scan_match *m)
{
    if (m->md)
        pcre2_match_data_free(m->md);
    m->md = NULL;
}
