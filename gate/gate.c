/* gate.c - the one place authority is decided (grant-language.md §6).
 *
 * Two paths give one answer:
 *   - the fast path (no verdict wanted) looks each ancestor of the query up
 *     once in a hash index of every region of every layer, carrying one bit
 *     per layer, so a check costs O(depth) lookups whatever the rule count;
 *   - the explaining path folds the layers one by one (decide.c) to name
 *     the deciding layer, rule and identity.
 * The property tests hold the two to the same answers. */
#include "gate/gate.h"
#include "common/json.h"
#include "common/pathmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the compiled fs index ------------------------------------------------ */

enum { F_IMPLICIT_READ = 1, F_IMPLICIT_WRITE = 2, F_SOURCE = 4, F_DEVICE = 8 };
#define GK_INDEX_MAX_LAYERS 64
#define GK_MAX_DEPTH 256

/* What the layers say at one key (indexed by the key's pathmap id). */
typedef struct slot {
    uint64_t read, write, deny, ro;
    unsigned flags;
    uint32_t refs;   /* 1 + index of the first region ref at this key, 0: none */
} slot;

/* Which region of which layer sits at a key: lets an explanation name the
 * deciding rule without searching the layer's lists. */
enum { K_READ, K_WRITE, K_DENY, K_RO };
typedef struct region_ref {
    const gk_region *r;
    uint32_t layer;
    uint32_t kind;
    uint32_t next;   /* 1 + index of the next ref at the same key, 0: none */
} region_ref;

typedef struct gk_gate_index {
    bool usable;            /* false: more layers than bits, explain-path only */
    gk_pathmap keys;        /* every region spelling, implicit entry and source */
    slot *slots;            /* by key id */
    size_t nslots, capslots;
    uint64_t fs_layers, restricted;
    gk_strvec owned;        /* keys not owned by a layer: implicit, sources */
    region_ref *refs;
    size_t nrefs, caprefs;
    gk_strvec sources;      /* resolved source files */
    gk_implicit implicit;
    gk_exec_index *exec;
} gk_gate_index;

static slot *index_slot(gk_gate_index *ix, const char *key)
{
    size_t id = gk_pathmap_intern(&ix->keys, key, strlen(key));
    if (id == ix->nslots) {
        slot empty = {0};
        GK_VEC_PUSH(ix->slots, ix->nslots, ix->capslots, empty);
    }
    return &ix->slots[id];
}

/* A device node is granted itself, not a path below it (/dev/null/x);
 * /dev/shm and macOS's /dev/fd are directories and grant their contents. */
static bool device_is_dir(const char *d)
{
    return strcmp(d, "/dev/shm") == 0 || strcmp(d, "/dev/fd") == 0;
}

static unsigned device_flag(const char *d)
{
    return device_is_dir(d) ? F_IMPLICIT_WRITE : F_DEVICE;
}

static const char *own(gk_gate_index *ix, char *s)
{
    gk_strvec_push_take(&ix->owned, s);
    return s;
}

static void index_regions(gk_gate_index *ix, const gk_regions *r, size_t layer, int which,
                          bool both)
{
    uint64_t bit = 1ULL << layer;
    for (size_t i = 0; i < r->n; i++) {
        const char *spellings[2] = {r->v[i].p.real, r->v[i].p.path};
        for (int k = 0; k < (both ? 2 : 1); k++) {
            slot *s = index_slot(ix, spellings[k]);
            uint64_t *m = which == 0 ? &s->read : which == 1 ? &s->write : which == 2 ? &s->deny
                                                                                       : &s->ro;
            *m |= bit;
            if (k == 1 && strcmp(spellings[0], spellings[1]) == 0)
                continue; /* one ref per region and key */
            region_ref ref = {&r->v[i], (uint32_t)layer, (uint32_t)which, s->refs};
            GK_VEC_PUSH(ix->refs, ix->nrefs, ix->caprefs, ref);
            s->refs = (uint32_t)ix->nrefs;
        }
    }
}

static gk_gate_index *index_build(const grant_policy *p, gk_resolve_cache *cache)
{
    gk_gate_index *ix = gk_calloc(1, sizeof(*ix));
    gk_implicit_for(p->ctx, &ix->implicit);
    ix->exec = gk_exec_index_build(p, cache);
    ix->usable = p->stack.n <= GK_INDEX_MAX_LAYERS;
    gk_strvec_copy(&ix->sources, &p->protect);
    if (!ix->usable)
        return ix;
    size_t keys = ix->implicit.read.n + ix->implicit.write.n + ix->implicit.devices.n + 1 +
                  ix->sources.n;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_fs_dim *fs = &p->stack.v[l]->fs;
        if (p->stack.v[l]->has_fs)
            keys += fs->read.n + fs->write.n + 2 * (fs->deny.n + fs->readonly.n);
    }
    gk_pathmap_reserve(&ix->keys, keys);
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_fs)
            continue;
        ix->fs_layers |= 1ULL << l;
        if (f->fs.restricted)
            ix->restricted |= 1ULL << l;
        index_regions(ix, &f->fs.read, l, 0, false);
        index_regions(ix, &f->fs.write, l, 1, false);
        index_regions(ix, &f->fs.deny, l, 2, true);
        index_regions(ix, &f->fs.readonly, l, 3, true);
    }
    const gk_implicit *im = &ix->implicit;
    for (size_t i = 0; i < im->read.n; i++)
        index_slot(ix, own(ix, gk_strdup(im->read.v[i])))->flags |= F_IMPLICIT_READ;
    for (size_t i = 0; i < im->write.n; i++)
        index_slot(ix, own(ix, gk_strdup(im->write.v[i])))->flags |= F_IMPLICIT_WRITE;
    for (size_t i = 0; i < im->devices.n; i++)
        index_slot(ix, own(ix, gk_strdup(im->devices.v[i])))->flags |= device_flag(im->devices.v[i]);
    if (im->proc)
        index_slot(ix, own(ix, gk_strdup("/proc")))->flags |= F_IMPLICIT_READ;
    for (size_t i = 0; i < ix->sources.n; i++)
        index_slot(ix, own(ix, gk_strdup(ix->sources.v[i])))->flags |= F_SOURCE;
    return ix;
}

static void gate_index_free(gk_gate_index *ix)
{
    if (!ix)
        return;
    gk_exec_index_free(ix->exec);
    gk_pathmap_clear(&ix->keys);
    free(ix->slots);
    free(ix->refs);
    gk_strvec_free(&ix->owned);
    gk_strvec_free(&ix->sources);
    gk_strvec_free(&ix->implicit.read);
    gk_strvec_free(&ix->implicit.write);
    gk_strvec_free(&ix->implicit.devices);
    free(ix);
}

static const gk_gate_index *index_of_cached(const grant_policy *p, gk_resolve_cache *cache)
{
    /* A cache on a const policy: built once, then only read. Threads that
     * race to build it each build one; the first published wins and the
     * others free theirs, so a policy is shareable from the start. */
    grant_policy *mut = (grant_policy *)p;
    gk_gate_index *ix = __atomic_load_n(&mut->gate_index, __ATOMIC_ACQUIRE);
    if (ix)
        return ix;
    gk_gate_index *built = index_build(p, cache);
    /* Every racer stores the same function: written before the index is
     * published, read only when an index is there to free. */
    __atomic_store_n(&mut->gate_index_free, gate_index_free, __ATOMIC_RELAXED);
    if (__atomic_compare_exchange_n(&mut->gate_index, &ix, built, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return built;
    gate_index_free(built);
    return ix;
}

static const gk_gate_index *index_of(const grant_policy *p)
{
    return index_of_cached(p, NULL);
}

void gk_gate_index_prime(const grant_policy *p, gk_resolve_cache *cache)
{
    gk_exec_index_prime(index_of_cached(p, cache)->exec, cache);
}

typedef struct masks {
    uint64_t read, write, deny, ro;
    unsigned flags;
    bool ok; /* false: deeper than GK_MAX_DEPTH, use the explaining path */
} masks;

/* OR together the entries of every ancestor of p ("/", "/a", "/a/b", p).
 * When slots is not NULL, the existing slots are also kept there, shallow
 * to deep (GK_MAX_DEPTH at most), for an explanation. */
static masks lookup(const gk_gate_index *ix, const char *p, const slot **slots, size_t *nslots)
{
    masks m = {0};
    if (nslots)
        *nslots = 0;
    if (!ix->nslots)
        return (masks){.ok = true};
    uint64_t h = GK_FNV_BASIS;
    size_t depth = 0, root = gk_path_root_len(p) == 3 ? 3 : 1; /* "/" or "c:/" */
    for (size_t i = 0; p[i]; i++) {
        h = gk_fnv_step(h, (unsigned char)p[i]);
        bool at_root = i + 1 == root;
        if (at_root || p[i + 1] == '/' || p[i + 1] == '\0') {
            if (!at_root && (i + 1 < root || (p[i] == '/' && i > 0)))
                continue; /* a trailing '/' names the same prefix */
            if (++depth > GK_MAX_DEPTH)
                return (masks){0};
            long id = gk_pathmap_find(&ix->keys, p, i + 1, h);
            if (id >= 0) {
                const slot *s = &ix->slots[id];
                if (slots)
                    slots[(*nslots)++] = s;
                m.read |= s->read;
                m.write |= s->write;
                m.deny |= s->deny;
                m.ro |= s->ro;
                /* A device counts only for the path that names it. */
                m.flags |= p[i + 1] == '\0' ? s->flags : (s->flags & ~(unsigned)F_DEVICE);
            }
        }
    }
    m.ok = true;
    return m;
}

/* The deepest region of a layer and kind holding the path (ties: the first
 * in the layer's sorted list), and the slot it was found at. */
static const gk_region *deepest_ref(const gk_gate_index *ix, const slot *const *slots, size_t n,
                                    size_t layer, unsigned kind, const slot **at)
{
    for (size_t k = n; k-- > 0;) {
        const gk_region *best = NULL;
        for (uint32_t i = slots[k]->refs; i; i = ix->refs[i - 1].next) {
            const region_ref *rf = &ix->refs[i - 1];
            if (rf->layer == layer && rf->kind == kind && (!best || rf->r < best))
                best = rf->r;
        }
        if (best) {
            *at = slots[k];
            return best;
        }
    }
    return NULL;
}

/* Is there a write region of the layer spelled exactly as r at that key? */
static bool written_at(const gk_gate_index *ix, const slot *at, size_t layer, const gk_region *r)
{
    for (uint32_t i = at->refs; i; i = ix->refs[i - 1].next) {
        const region_ref *rf = &ix->refs[i - 1];
        if (rf->layer == layer && rf->kind == K_WRITE && strcmp(rf->r->p.path, r->p.path) == 0 &&
            strcmp(rf->r->p.real, r->p.real) == 0)
            return true;
    }
    return false;
}

int gk_gate_fs_held(const grant_policy *p, const char *canonical, bool write)
{
    const gk_gate_index *ix = index_of(p);
    if (!ix->usable)
        return -1;
    masks m = lookup(ix, canonical, NULL, NULL);
    if (!m.ok)
        return -1;
    return (ix->restricted & ~(write ? m.write : m.read)) == 0;
}

/* ---- implicit grants --------------------------------------------------- */

static const char *within_which(const gk_strvec *v, const char *p)
{
    for (size_t i = 0; i < v->n; i++)
        if (gk_path_within(p, v->v[i]))
            return v->v[i];
    return NULL;
}

/* macOS pseudo-terminal slaves (/dev/ttys000...) are numbered devices the
 * Seatbelt base grants (backends.md); no fixed list can name them. */
static bool macos_pseudo_tty(const gk_implicit *im, const char *p)
{
    /* No devices listed: the policy was compiled with --no-implicit. */
    if (!im->target || strcmp(im->target, "macos") != 0 || !im->devices.n ||
        !gk_has_prefix(p, "/dev/ttys") || !p[9])
        return false;
    for (const char *c = p + 9; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    return true;
}

static const char *implicit_entry(const gk_implicit *im, const char *p, grant_op op, bool *write)
{
    if (macos_pseudo_tty(im, p)) {
        *write = true;
        return p;
    }
    for (size_t i = 0; i < im->write.n; i++)
        if (gk_path_within(p, im->write.v[i])) {
            *write = true;
            return im->write.v[i];
        }
    for (size_t i = 0; i < im->devices.n; i++)
        if (device_is_dir(im->devices.v[i]) ? gk_path_within(p, im->devices.v[i])
                                            : strcmp(p, im->devices.v[i]) == 0) {
            *write = true;
            return im->devices.v[i];
        }
    if (op == GRANT_OP_WRITE)
        return NULL;
    *write = false;
    for (size_t i = 0; i < im->read.n; i++)
        if (gk_path_within(p, im->read.v[i]))
            return im->read.v[i];
    if (im->proc && gk_path_within(p, "/proc"))
        return "/proc";
    return NULL;
}

/* ---- verdicts ------------------------------------------------------------ */

void gk_verdict_clear(grant_verdict *v)
{
    if (!v)
        return;
    free(v->rule);
    if (v->identity != v->path)
        free(v->identity);
    free(v->path);
    free(v->hint);
    memset(v, 0, sizeof(*v));
}

static void verdict_set(grant_verdict *v, grant_answer a, const char *origin, const char *layer,
                        char *rule, char *identity, char *hint)
{
    gk_verdict_clear(v);
    v->answer = a;
    v->origin = origin;
    v->layer = layer;
    v->rule = rule;
    v->identity = identity;
    v->hint = hint;
}

static void verdict_from_why(grant_verdict *v, grant_answer a, const gk_layer *f, gk_why *why)
{
    verdict_set(v, a, why->origin, f->name, gk_steal(&why->rule), gk_steal(&why->identity),
                gk_steal(&why->hint));
}

/* ---- fs -------------------------------------------------------------------- */

static const char *implicit_origin(const grant_context *ctx)
{
    const char *t = gk_target_name(ctx);
    return strcmp(t, "macos") == 0 ? "implicit:macos"
           : strcmp(t, "windows") == 0 ? "implicit:windows"
                                       : "implicit:linux";
}

/* ---- the run's private /tmp ------------------------------------------------ */

/* On Linux the implicit write grant is a fresh, empty tmpfs (backends.md):
 * host entries under /tmp are in the run only where a region binds them.
 * The implicit dir holding path strictly below it, when the fs is
 * restricted (unrestricted, /tmp is the host's); *bound: every restricting
 * layer grants path a region, so the host's copy is bound there. */
static const char *private_dir_of(const grant_policy *p, const gk_gate_index *ix,
                                  const char *path, bool *bound)
{
    if (gk_target_is_offline(p->ctx))
        return NULL;
    for (size_t i = 0; i < ix->implicit.write.n; i++) {
        const char *d = ix->implicit.write.v[i];
        if (strcmp(path, d) == 0 || !gk_path_within(path, d))
            continue;
        bool restricted = false;
        for (size_t l = 0; l < p->stack.n && !restricted; l++)
            restricted = p->stack.v[l]->has_fs && p->stack.v[l]->fs.restricted;
        if (!restricted)
            return NULL;
        int held = gk_gate_fs_held(p, path, false);
        *bound = held < 0 ? gk_decide_fs(&p->stack, GRANT_OP_READ, path) : held == 1;
        return d;
    }
    return NULL;
}

/* Does the implicit grant fail to cover path? It covers only what the
 * run's tmpfs holds: a path that no region binds and the host has no entry
 * for. The host entry (the first component under the dir: every deeper
 * host path implies it, and no symlink is followed) goes to *entry, for
 * the reason; a bound path (*entry NULL) is the regions' to decide. */
static bool implicit_void(const grant_policy *p, const gk_gate_index *ix, const char *path,
                          char **entry)
{
    *entry = NULL;
    bool bound = false;
    const char *d = private_dir_of(p, ix, path, &bound);
    if (!d)
        return false;
    if (bound)
        return true;
    size_t n = strlen(d);
    const char *rest = path + n + (d[n - 1] == '/' ? 0 : 1);
    const char *slash = strchr(rest, '/');
    char *top = gk_strndup(path, slash ? (size_t)(slash - path) : strlen(path));
    struct stat st;
    if (lstat(top, &st) == 0) {
        *entry = top;
        return true;
    }
    free(top);
    return false;
}

static void verdict_private_tmp(grant_verdict *v, const grant_policy *p, const gk_layer *f,
                                const char *entry)
{
    gk_autofree char *d = gk_path_parent(entry);
    verdict_set(v, GRANT_DENIED, implicit_origin(p->ctx), f->name,
                gk_printf("%s is private to the run: the host's %s is not in it", d, entry),
                NULL,
                gk_printf("grant the host's copy with a region (read %s), or use a name the "
                          "host's %s does not hold",
                          entry, d));
}

static grant_answer fs_fast(const grant_policy *p, const gk_gate_index *ix, grant_op op,
                            const char *path, bool *decided)
{
    masks m = lookup(ix, path, NULL, NULL);
    *decided = ix->usable && m.ok;
    if (!*decided)
        return GRANT_DENIED;
    if (op == GRANT_OP_WRITE && (m.flags & F_SOURCE))
        return GRANT_DENIED;
    if (m.deny & ix->fs_layers)
        return GRANT_DENIED;
    if (op == GRANT_OP_WRITE && (m.ro & ix->fs_layers))
        return GRANT_DENIED;
    bool implicit = op == GRANT_OP_READ
                        ? (m.flags & (F_IMPLICIT_READ | F_IMPLICIT_WRITE | F_DEVICE)) != 0
                        : (m.flags & (F_IMPLICIT_WRITE | F_DEVICE)) != 0;
    if (!implicit && macos_pseudo_tty(&ix->implicit, path))
        implicit = true;
    uint64_t lacking = ix->restricted & ~(op == GRANT_OP_READ ? m.read : m.write);
    if (!implicit && lacking)
        return GRANT_DENIED;
    if (lacking) {
        /* Only the implicit grant covers it: not host content under the
         * private /tmp. */
        char *host = NULL;
        bool voided = implicit_void(p, ix, path, &host);
        free(host);
        if (voided)
            return GRANT_DENIED;
    }
    return GRANT_ALLOWED;
}

static grant_answer fs_explain(const grant_policy *p, const gk_gate_index *ix, grant_op op,
                               const char *path, grant_verdict *v, bool use_index);

static grant_answer fs_explain_indexed(const grant_policy *p, const gk_gate_index *ix,
                                       grant_op op, const char *path, grant_verdict *v,
                                       const masks *m, const slot *const *slots, size_t nslots)
{
    const char *source = op == GRANT_OP_WRITE && (m->flags & F_SOURCE)
                             ? within_which(&ix->sources, path)
                             : NULL;
    if (source) {
        verdict_set(v, GRANT_DENIED, "policy-source", NULL,
                    gk_printf("readonly %s (a source of this policy)", source), NULL,
                    gk_strdup("edit the policy outside the sandbox"));
        return GRANT_DENIED;
    }
    bool implicit = op == GRANT_OP_READ
                        ? (m->flags & (F_IMPLICIT_READ | F_IMPLICIT_WRITE | F_DEVICE)) != 0
                        : (m->flags & (F_IMPLICIT_WRITE | F_DEVICE)) != 0;
    implicit = implicit || macos_pseudo_tty(&ix->implicit, path);
    uint64_t grants = op == GRANT_OP_READ ? m->read : m->write;
    /* Host content under the private /tmp gets no implicit grant. */
    gk_autofree char *host = NULL;
    if (implicit && (ix->restricted & ~grants) && implicit_void(p, ix, path, &host))
        implicit = false;
    const slot *at = NULL;
    const gk_layer *last = NULL;
    size_t last_l = 0;
    for (size_t l = 0; l < p->stack.n; l++) {
        uint64_t bit = 1ULL << l;
        if (!(ix->fs_layers & bit))
            continue;
        const gk_layer *f = p->stack.v[l];
        const gk_region *r = NULL;
        const char *word = NULL;
        if (m->deny & bit) {
            r = deepest_ref(ix, slots, nslots, l, K_DENY, &at);
            word = "deny ";
        } else if (op == GRANT_OP_WRITE && (m->ro & bit)) {
            r = deepest_ref(ix, slots, nslots, l, K_RO, &at);
            word = "readonly ";
        } else if ((ix->restricted & bit) && host && !(grants & bit)) {
            verdict_private_tmp(v, p, f, host);
            return GRANT_DENIED;
        } else if ((ix->restricted & bit) && !implicit && !(grants & bit)) {
            verdict_set(v, GRANT_DENIED, f->origin, f->name,
                        gk_strdup(op == GRANT_OP_WRITE ? "no write region contains it"
                                                       : "no read region contains it"),
                        NULL, NULL);
            return GRANT_DENIED;
        }
        if (word) {
            if (!r) /* the index and the layer disagree (a bug): fold the layers */
                return fs_explain(p, ix, op, path, v, false);
            verdict_set(v, GRANT_DENIED, r->origin, f->name, gk_concat(word, r->p.path), NULL, NULL);
            return GRANT_DENIED;
        }
        last = f;
        last_l = l;
    }
    if (!last) {
        verdict_set(v, GRANT_ALLOWED, "no-opinion", NULL, gk_strdup("no layer has an opinion"),
                    NULL, NULL);
        return GRANT_ALLOWED;
    }
    /* The last layer with an opinion names its grant, unless only the
     * implicit grant of the target covers the path there. */
    const gk_region *g = last->fs.restricted
                             ? deepest_ref(ix, slots, nslots, last_l,
                                           op == GRANT_OP_WRITE ? K_WRITE : K_READ, &at)
                             : NULL;
    if (!last->fs.restricted) {
        verdict_set(v, GRANT_ALLOWED, last->origin, last->name,
                    gk_strdup("no deny or readonly entry applies"), NULL, NULL);
    } else if (g) {
        bool written = op == GRANT_OP_WRITE || written_at(ix, at, last_l, g);
        verdict_set(v, GRANT_ALLOWED, g->origin, last->name,
                    gk_concat(written ? "write " : "read ", g->p.path), NULL, NULL);
    } else {
        bool im_write = false;
        const char *im = implicit_entry(&ix->implicit, path, op, &im_write);
        verdict_set(v, GRANT_ALLOWED, implicit_origin(p->ctx), NULL,
                    gk_printf("implicit %s %s", im_write ? "write" : "read", im ? im : path),
                    NULL, NULL);
    }
    return GRANT_ALLOWED;
}

static grant_answer fs_explain(const grant_policy *p, const gk_gate_index *ix, grant_op op,
                               const char *path, grant_verdict *v, bool use_index)
{
    /* The index says which layer decides (the first that denies, else the
     * last with an opinion): explain only that one, and look the implicit
     * grant and the sources up only when they matter. */
    const slot *slots[GK_MAX_DEPTH];
    size_t nslots = 0;
    masks m = v && use_index && ix->usable ? lookup(ix, path, slots, &nslots) : (masks){0};
    if (v && use_index && ix->usable && m.ok)
        return fs_explain_indexed(p, ix, op, path, v, &m, slots, nslots);
    const char *source = op == GRANT_OP_WRITE ? within_which(&ix->sources, path) : NULL;
    if (source) {
        if (v)
            verdict_set(v, GRANT_DENIED, "policy-source", NULL,
                        gk_printf("readonly %s (a source of this policy)", source), NULL,
                        gk_strdup("edit the policy outside the sandbox"));
        return GRANT_DENIED;
    }
    bool im_write = false;
    const char *im = implicit_entry(&ix->implicit, path, op, &im_write);
    gk_autofree char *host = NULL;
    if (im && implicit_void(p, ix, path, &host) && !host)
        im = NULL; /* bound from the host: the regions decide */
    gk_why why = {0};
    const gk_layer *last = NULL;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        int d = gk_layer_decide_fs_why(f, op, path, im != NULL, v ? &why : NULL);
        if (d != 0 && host && gk_layer_decide_fs_why(f, op, path, false, NULL) == 0) {
            /* Allowed by the implicit grant alone, on host content the
             * run's private /tmp does not hold. */
            gk_why_clear(&why);
            if (v)
                verdict_private_tmp(v, p, f, host);
            return GRANT_DENIED;
        }
        if (d == 0) {
            if (v)
                verdict_from_why(v, GRANT_DENIED, f, &why);
            gk_why_clear(&why);
            return GRANT_DENIED;
        }
        if (d == 1)
            last = f;
    }
    gk_why_clear(&why);
    if (!v)
        return GRANT_ALLOWED;
    if (!last) {
        verdict_set(v, GRANT_ALLOWED, "no-opinion", NULL, gk_strdup("no layer has an opinion"),
                    NULL, NULL);
        return GRANT_ALLOWED;
    }
    /* The last layer with an opinion names its grant, unless only the
     * implicit grant of the target covers the path there. */
    if (gk_layer_decide_fs_why(last, op, path, false, &why) == 1) {
        verdict_from_why(v, GRANT_ALLOWED, last, &why);
    } else {
        verdict_set(v, GRANT_ALLOWED, implicit_origin(p->ctx), NULL,
                    gk_printf("implicit %s %s", im_write ? "write" : "read", im), NULL, NULL);
    }
    gk_why_clear(&why);
    return GRANT_ALLOWED;
}

grant_answer gk_gate_fs(const grant_policy *p, grant_op op, const char *path, grant_verdict *v)
{
    const gk_gate_index *ix = index_of(p);
    if (strcmp(path, "/dev/null") == 0) {
        if (v) {
            verdict_set(v, GRANT_ALLOWED, "discard", NULL,
                        gk_strdup("/dev/null needs no authority"), NULL, NULL);
            v->path = v->identity = gk_strdup(path);
        }
        return GRANT_ALLOWED;
    }
    if (!v) {
        bool decided;
        grant_answer a = fs_fast(p, ix, op, path, &decided);
        if (decided)
            return a;
    }
    grant_answer a = fs_explain(p, ix, op, path, v, true);
    if (v && !v->path)
        v->path = gk_strdup(path);
    if (v && !v->identity)
        v->identity = v->path; /* for fs the identity is the resolved path */
    return a;
}

/* ---- query resolution ---------------------------------------------------- */

/* A drive-letter path ("C:/x") is absolute on the windows target. */
static bool is_drive_path(const grant_context *ctx, const char *p)
{
    return ctx->target == GRANT_TARGET_WINDOWS &&
           ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
           (p[2] == '/' || p[2] == '\\');
}

static bool is_absolute(const grant_context *ctx, const char *p)
{
    return p[0] == '/' || is_drive_path(ctx, p);
}

/* A query's working directory: absolute, and on windows a drive path (a
 * rooted query is taken on its drive). */
static bool valid_cwd(const grant_context *ctx, const char *cwd)
{
    return ctx->target == GRANT_TARGET_WINDOWS ? is_drive_path(ctx, cwd) : is_absolute(ctx, cwd);
}

/* Lexical normalisation for a query: like the kernel, '..' at the root
 * stays at the root (a policy author's '..' above '/' is an error; a
 * query's is not). A drive prefix is kept in front of the root. */
static char *lex_clamped_in(const grant_context *ctx, const char *abs)
{
    gk_buf b = {0};
    const char *p = abs;
    gk_autofree char *slashed = NULL;
    size_t root = 0;
    if (is_drive_path(ctx, abs)) {
        slashed = gk_strdup(abs);
        for (char *c = slashed; *c; c++)
            if (*c == '\\')
                *c = '/';
        gk_buf_add(&b, slashed, 2);
        root = 2;
        p = slashed + 2;
    }
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if (n == 1 && p[0] == '.') {
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (b.len > root && b.data[b.len - 1] != '/')
                b.len--;
            if (b.len > root)
                b.len--;
            if (b.data)
                b.data[b.len] = '\0';
        } else {
            gk_buf_putc(&b, '/');
            gk_buf_add(&b, p, n);
        }
        p = e;
    }
    if (b.len == root)
        gk_buf_puts(&b, "/");
    return gk_buf_steal(&b, NULL);
}

/* Win32 drops the trailing dots and spaces of a component (secret. is
 * secret) and reads NAME:stream as a stream of NAME: each component is
 * cut so, or "cmd.exe." and "key.pem::$DATA" would miss their rules. A
 * component left empty ("...") is dropped. Takes s. */
static char *win_components(char *s)
{
    gk_buf b = {0};
    size_t root = gk_path_root_len(s);
    gk_buf_add(&b, s, root);
    const char *p = s + root;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t k = n;
        const char *colon = memchr(p, ':', n);
        if (colon)
            k = (size_t)(colon - p);
        bool dots = (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.');
        while (!dots && k > 0 && (p[k - 1] == '.' || p[k - 1] == ' '))
            k--;
        if (k) {
            if (b.len > root)
                gk_buf_putc(&b, '/');
            gk_buf_add(&b, p, k);
        }
        p += n;
        if (*p == '/')
            p++;
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    free(s);
    return gk_buf_steal(&b, NULL);
}

/* A windows query as Win32 would open it: '\' is '/'; \\?\C:\x and
 * \\.\C:\x are C:/x; a rooted path without a drive (\x) is on the drive
 * of cwd. UNC names (\\server\share) are left as they are: no policy can
 * name one, so they are inside no region. */
static char *win_spelling(const char *path, const char *cwd)
{
    char *s = gk_strdup(path);
    for (char *c = s; *c; c++)
        if (*c == '\\')
            *c = '/';
    if ((gk_has_prefix(s, "//?/") || gk_has_prefix(s, "//./")) && gk_path_root_len(s + 4) == 3) {
        memmove(s, s + 4, strlen(s + 4) + 1);
    } else if (s[0] == '/' && s[1] != '/' && gk_path_root_len(cwd) == 3) {
        char *d = gk_printf("%.2s%s", cwd, s);
        free(s);
        s = d;
    }
    return win_components(s);
}

char *gk_resolve_query(const grant_context *ctx, const char *path, const char *cwd)
{
    if (!path || !*path)
        return NULL;
    if (!cwd)
        cwd = ctx->cwd ? ctx->cwd : ctx->target == GRANT_TARGET_WINDOWS ? "C:/" : "/";
    gk_autofree char *win = ctx->target == GRANT_TARGET_WINDOWS ? win_spelling(path, cwd) : NULL;
    if (win)
        path = win;
    gk_autofree char *abs = is_absolute(ctx, path) ? gk_strdup(path) : gk_path_join(cwd, path);
    if (ctx->target == GRANT_TARGET_HOST)
        return gk_resolve_host(abs);
    gk_autofree char *lex = lex_clamped_in(ctx, abs);
    return gk_canonicalize(ctx, lex);
}

void gk_walk_head(const grant_context *ctx, const char *head, const char *path_env,
                  const char *cwd, char **walked, char **canonical)
{
    gk_walk_head_cached(ctx, head, path_env, cwd, walked, canonical, NULL);
}

void gk_walk_head_cached(const grant_context *ctx, const char *head, const char *path_env,
                         const char *cwd, char **walked, char **canonical,
                         gk_resolve_cache *cache)
{
    *walked = *canonical = NULL;
    bool host = ctx->target == GRANT_TARGET_HOST, win = ctx->target == GRANT_TARGET_WINDOWS;
    bool seen = false; /* *walked was just stat'ed: it exists */
    if (!cwd)
        cwd = ctx->cwd ? ctx->cwd : win ? "C:/" : "/";
    gk_autofree char *win_head = win ? win_spelling(head, cwd) : NULL;
    if (win_head)
        head = win_head;
    if (strchr(head, '/')) {
        gk_autofree char *abs = is_absolute(ctx, head) ? gk_strdup(head) : gk_path_join(cwd, head);
        *walked = lex_clamped_in(ctx, abs);
    } else {
        if (!path_env)
            path_env = ctx->path ? ctx->path : "";
        char sep = ctx->target == GRANT_TARGET_WINDOWS ? ';' : ':';
        const char *d = path_env;
        while (*d && !*walked) {
            const char *e = strchr(d, sep);
            size_t n = e ? (size_t)(e - d) : strlen(d);
            /* Only absolute entries: an empty or relative one would make the
             * working directory part of PATH. */
            if (n && is_absolute(ctx, d)) {
                gk_autofree char *dir = gk_strndup(d, n);
                /* A listing of dir that lacks the name settles it without
                 * a stat (or a string). */
                if (!host || gk_resolve_cache_may_exist(cache, dir, head)) {
                    /* CreateProcess appends .exe to a bare name without an
                     * extension: `cmd` runs C:/Windows/System32/cmd.exe. */
                    char *cand = win && !strchr(head, '.') ? gk_printf("%s/%s.exe", dir, head)
                                                           : gk_path_join(dir, head);
                    struct stat st;
                    /* Offline, nothing can be looked at: the first entry is
                     * where the name would be found. */
                    if (!host ||
                        (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))) {
                        *walked = cand;
                        seen = host;
                    }
                    else
                        free(cand);
                }
            }
            d = e ? e + 1 : d + n;
        }
    }
    if (!*walked)
        return;
    if (!host) {
        *canonical = gk_canonicalize(ctx, *walked);
        return;
    }
    char *c = cache ? gk_resolve_host_cached(*walked, cache) : gk_resolve_host(*walked);
    struct stat st;
    if (c && ((seen && strcmp(c, *walked) == 0) || stat(c, &st) == 0))
        *canonical = c;
    else
        free(c);
}

/* ---- exec ------------------------------------------------------------------ */

/* ---- windows: identities folded as NTFS compares ------------------------- */

/* The executable extensions of Windows' default PATHEXT: a shell runs
 * `cmd` as cmd.com, cmd.exe, ..., whichever it finds first. */
static const char *const win_pathext[] = {".com", ".exe", ".bat", ".cmd", ".vbs", ".vbe",
                                          ".js",  ".jse", ".wsf", ".wsh", ".msc"};

typedef struct win_query {
    grant_exec_query q;
    char *own[3];
    char *stem; /* the folded basename without its PATHEXT extension, or NULL */
} win_query;

/* The query with every identity '\'-converted and folded (the layers keep
 * their exec keys folded alike), for the windows target. */
static void win_query_init(win_query *w, const grant_exec_query *q)
{
    memset(w, 0, sizeof(*w));
    w->q = *q;
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    for (int k = 0; k < 3; k++)
        w->own[k] = ids[k] ? gk_win_fold(ids[k]) : NULL;
    w->q.spelling = w->own[0];
    w->q.walked = w->own[1];
    w->q.canonical = w->own[2];
    for (int k = 0; k < 3 && !w->stem; k++) {
        const char *base = w->own[k] ? gk_basename(w->own[k]) : NULL;
        const char *dot = base ? strrchr(base, '.') : NULL;
        for (size_t i = 0; dot && dot != base && i < sizeof(win_pathext) / sizeof(*win_pathext);
             i++)
            if (strcmp(dot, win_pathext[i]) == 0)
                w->stem = gk_strndup(base, (size_t)(dot - base));
    }
}

static void win_query_free(win_query *w)
{
    for (int k = 0; k < 3; k++)
        free(w->own[k]);
    free(w->stem);
}

/* `deny cmd` names the program cmd.exe (or cmd.bat ...) on Windows: the
 * stem of a head with a PATHEXT extension is asked about as a bare name
 * too, for vetoes only (admission stays with the spellings). */
static bool win_stem_vetoed(const grant_policy *p, const win_query *w, grant_verdict *v)
{
    if (!w->stem)
        return false;
    grant_exec_query sq = {w->stem, NULL, NULL, w->q.argv1};
    for (size_t i = 0; i < p->stack.n; i++)
        if (gk_layer_vetoes(p->stack.v[i], &sq)) {
            if (v) {
                gk_why why = {0};
                gk_layer_decide_exec_why(p->stack.v[i], &sq, &why);
                verdict_from_why(v, GRANT_DENIED, p->stack.v[i], &why);
                gk_why_clear(&why);
            }
            return true;
        }
    return false;
}

/* A vetoed program under another name is still the vetoed program: a
 * stack-wide step 1, before any layer is asked. */
static bool same_file_vetoed(const grant_policy *p, const grant_exec_query *q, grant_verdict *v)
{
    const gk_layer *f = NULL;
    const gk_entry *e = gk_exec_index_same_file(index_of(p)->exec, q->canonical, &f);
    if (!e)
        return false;
    if (v) {
        verdict_set(v, GRANT_DENIED, e->origin, f->name, gk_printf("deny %s", e->key),
                    gk_printf("canonical file %s", q->canonical),
                    gk_printf("the same file (device and inode) as the vetoed %s", e->key));
        free(v->path);
        v->path = gk_strdup(q->canonical);
    }
    return true;
}

static grant_answer exec_fold(const grant_policy *p, const grant_exec_query *q, grant_verdict *v);

/* The layers' answer; a program they admit may still be a vetoed one
 * under another name (the layers' own rules explain a denial first). */
static grant_answer gate_exec(const grant_policy *p, const grant_exec_query *q, grant_verdict *v)
{
    int fast = v ? -1 : gk_exec_index_answer(index_of(p)->exec, q, GK_EXEC_ARGV1);
    grant_answer a = fast >= 0 ? (grant_answer)fast : exec_fold(p, q, v);
    if (a == GRANT_ALLOWED && same_file_vetoed(p, q, v))
        return GRANT_DENIED;
    return a;
}

grant_answer gk_gate_exec(const grant_policy *p, const grant_exec_query *q, grant_verdict *v)
{
    if (p->ctx->target != GRANT_TARGET_WINDOWS)
        return gate_exec(p, q, v);
    win_query w;
    win_query_init(&w, q);
    grant_answer a = win_stem_vetoed(p, &w, v) ? GRANT_DENIED : gate_exec(p, &w.q, v);
    win_query_free(&w);
    return a;
}

static grant_answer exec_fold(const grant_policy *p, const grant_exec_query *q, grant_verdict *v)
{
    gk_why why = {0};
    const gk_layer *last = NULL;
    gk_why last_why = {0};
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        int d = gk_layer_decide_exec_why(f, q, v ? &why : NULL);
        if (d == 0) {
            if (v)
                verdict_from_why(v, GRANT_DENIED, f, &why);
            gk_why_clear(&why);
            gk_why_clear(&last_why);
            return GRANT_DENIED;
        }
        if (d == 1) {
            last = f;
            if (v) {
                gk_why_clear(&last_why);
                last_why = why;
                memset(&why, 0, sizeof(why));
            }
        }
    }
    if (v) {
        if (last) {
            verdict_from_why(v, GRANT_ALLOWED, last, &last_why);
        } else {
            verdict_set(v, GRANT_ALLOWED, "no-opinion", NULL, gk_strdup("no layer has an opinion"),
                        gk_printf("spelling '%s'", q->spelling), NULL);
        }
        free(v->path);
        v->path = gk_strdup(q->canonical);
    }
    gk_why_clear(&why);
    gk_why_clear(&last_why);
    return GRANT_ALLOWED;
}

static bool gate_exec_vetoed(const grant_policy *p, const grant_exec_query *q);

bool gk_gate_exec_vetoed(const grant_policy *p, const grant_exec_query *q)
{
    if (p->ctx->target != GRANT_TARGET_WINDOWS)
        return gate_exec_vetoed(p, q);
    win_query w;
    win_query_init(&w, q);
    bool vetoed = win_stem_vetoed(p, &w, NULL) || gate_exec_vetoed(p, &w.q);
    win_query_free(&w);
    return vetoed;
}

static bool names_vetoed(const grant_policy *p, const grant_exec_query *q);

static bool gate_exec_vetoed(const grant_policy *p, const grant_exec_query *q)
{
    return same_file_vetoed(p, q, NULL) || names_vetoed(p, q);
}

const gk_exec_index *gk_gate_exec_index(const grant_policy *p)
{
    return index_of(p)->exec;
}

bool gk_gate_exec_vetoed_id(const grant_policy *p, const grant_exec_query *q, uint64_t dev,
                            uint64_t ino)
{
    if ((!dev && !ino) || p->ctx->target == GRANT_TARGET_WINDOWS)
        return gk_gate_exec_vetoed(p, q);
    return gk_exec_index_same_id(index_of(p)->exec, dev, ino, NULL) || names_vetoed(p, q);
}

/* The layers' vetoes of q's names, files, dirs and patterns. */
static bool names_vetoed(const grant_policy *p, const grant_exec_query *q)
{
    int fast = gk_exec_index_answer(index_of(p)->exec, q, GK_EXEC_VETO);
    if (fast >= 0)
        return fast == GRANT_DENIED;
    for (size_t i = 0; i < p->stack.n; i++)
        if (gk_layer_vetoes(p->stack.v[i], q))
            return true;
    return false;
}

static grant_answer gate_exec_some_argv1(const grant_policy *p, const grant_exec_query *q);

grant_answer gk_gate_exec_some_argv1(const grant_policy *p, const grant_exec_query *q)
{
    if (p->ctx->target != GRANT_TARGET_WINDOWS)
        return gate_exec_some_argv1(p, q);
    win_query w;
    win_query_init(&w, q);
    grant_answer a = win_stem_vetoed(p, &w, NULL) ? GRANT_DENIED : gate_exec_some_argv1(p, &w.q);
    win_query_free(&w);
    return a;
}

static grant_answer gate_exec_some_argv1(const grant_policy *p, const grant_exec_query *q)
{
    if (same_file_vetoed(p, q, NULL))
        return GRANT_DENIED;
    int fast = gk_exec_index_answer(index_of(p)->exec, q, GK_EXEC_ANY_ARGV1);
    if (fast >= 0)
        return (grant_answer)fast;
    return gk_decide_exec_some_argv1(&p->stack, q) ? GRANT_ALLOWED : GRANT_DENIED;
}

/* ---- host gates ------------------------------------------------------------ */

/* The rule that set a host gate, or the layer when it is unknown (a layer
 * read back from IR keeps no rule positions). */
static const char *gate_origin(const gk_layer *f, const char *gate)
{
    static const char *const g[5] = {"net", "shell.chdir", "editor.read", "editor.write",
                                     "editor.tui"};
    for (int i = 0; i < 5; i++)
        if (strcmp(gate, g[i]) == 0 && f->gate_origin[i])
            return f->gate_origin[i];
    return f->origin;
}

grant_answer gk_gate_gate(const grant_policy *p, const char *gate, grant_verdict *v)
{
    const gk_layer *last = NULL;
    const char *word = strchr(gate, '.') ? strchr(gate, '.') + 1 : gate;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        gk_tri t = gk_layer_gate(f, gate);
        if (t == GK_TRI_FALSE && f->net_list && strcmp(gate, "net") == 0) {
            /* A list grants no destination unconditionally. */
            if (v)
                verdict_set(v, GRANT_DENIED, gate_origin(f, gate), f->name,
                            gk_strdup("net { ... } (a destination list)"), gk_strdup(gate),
                            gk_strdup("ask about one destination: connect HOST:PORT"));
            return GRANT_DENIED;
        }
        if (t == GK_TRI_FALSE) {
            if (v)
                verdict_set(v, GRANT_DENIED, gate_origin(f, gate), f->name, gk_printf("%s deny", word),
                            gk_strdup(gate), NULL);
            return GRANT_DENIED;
        }
        if (t == GK_TRI_TRUE)
            last = f;
    }
    if (v) {
        if (last)
            verdict_set(v, GRANT_ALLOWED, gate_origin(last, gate), last->name, gk_printf("%s allow", word),
                        gk_strdup(gate), NULL);
        else
            verdict_set(v, GRANT_ALLOWED, "no-opinion", NULL, gk_strdup("no layer has an opinion"),
                        gk_strdup(gate), NULL);
    }
    return GRANT_ALLOWED;
}

/* ---- network destinations (network.md §1) --------------------------------- */

/* Every layer with a net opinion must allow: the first that refuses
 * decides; an allowed destination cites the allow pattern of the last list
 * layer that matched it (what says why this host, rather than a
 * `net allow;` under it), else the last layer that allowed it. */
grant_answer gk_gate_connect(const grant_policy *p, const gk_dest *q, grant_verdict *v)
{
    const gk_layer *last = NULL;
    gk_why why = {0}, last_why = {0};
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        int d = gk_layer_decide_connect(f, q, v ? &why : NULL);
        if (d == 0) {
            if (v)
                verdict_set(v, GRANT_DENIED, why.origin, f->name, gk_steal(&why.rule),
                            gk_dest_format(q), NULL);
            gk_why_clear(&why);
            gk_why_clear(&last_why);
            return GRANT_DENIED;
        }
        if (d == 1 && v && (f->net_list || !last || !last->net_list)) {
            last = f;
            gk_why_clear(&last_why);
            last_why = why;
            memset(&why, 0, sizeof(why));
        }
    }
    if (v) {
        if (last)
            verdict_set(v, GRANT_ALLOWED, last_why.origin, last->name, gk_steal(&last_why.rule),
                        gk_dest_format(q), NULL);
        else
            verdict_set(v, GRANT_ALLOWED, "no-opinion", NULL, gk_strdup("no layer has an opinion"),
                        gk_dest_format(q), NULL);
    }
    gk_why_clear(&why);
    gk_why_clear(&last_why);
    return GRANT_ALLOWED;
}

/* ---- public API ------------------------------------------------------------ */

static int new_verdict(grant_verdict **out)
{
    if (!out)
        return -EINVAL;
    *out = gk_calloc(1, sizeof(grant_verdict));
    return 0;
}

int grant_check_fs_resolved(const grant_policy *p, grant_op op, const char *canonical,
                            grant_verdict **out)
{
    if (!p || !canonical || !is_absolute(p->ctx, canonical) ||
        (op != GRANT_OP_READ && op != GRANT_OP_WRITE))
        return -EINVAL;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    gk_gate_fs(p, op, canonical, *out);
    return 0;
}

typedef struct private_walk {
    const grant_policy *p;
    const gk_gate_index *ix;
} private_walk;

static bool private_prefix(const char *prefix, void *arg)
{
    const private_walk *w = arg;
    bool bound = false;
    return private_dir_of(w->p, w->ix, prefix, &bound) && !bound;
}

/* gk_resolve_query, but a host symlink under the run's private /tmp is not
 * followed: the run has no such link there, only what it creates itself. */
static char *resolve_fs_query(const grant_policy *p, const char *path, const char *cwd)
{
    const grant_context *ctx = p->ctx;
    const gk_gate_index *ix = index_of(p);
    if (ctx->target != GRANT_TARGET_HOST || !ix->implicit.write.n || !path || !*path)
        return gk_resolve_query(ctx, path, cwd);
    if (!cwd)
        cwd = ctx->cwd ? ctx->cwd : "/";
    gk_autofree char *abs = is_absolute(ctx, path) ? gk_strdup(path) : gk_path_join(cwd, path);
    private_walk w = {p, ix};
    return gk_resolve_host_opaque(abs, private_prefix, &w);
}

int grant_check_fs(const grant_policy *p, grant_op op, const char *path, const char *cwd,
                   grant_verdict **out)
{
    if (!p || !path || !*path || (op != GRANT_OP_READ && op != GRANT_OP_WRITE) ||
        (cwd && !valid_cwd(p->ctx, cwd)))
        return -EINVAL;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    size_t sl = 0;
    const char *sn = p->ctx->target == GRANT_TARGET_WINDOWS ? gk_win_short_name(path, &sl) : NULL;
    if (sn) {
        /* The alias may name a denied long name: refused, never guessed. */
        verdict_set(*out, GRANT_DENIED, "resolution", NULL, gk_printf("8.3 short name %.*s", (int)sl, sn),
                    gk_strdup(path),
                    gk_strdup("an 8.3 short name stands for a long name only the volume knows: "
                              "ask with the long name"));
        return 0;
    }
    char *resolved = resolve_fs_query(p, path, cwd);
    if (!resolved) {
        verdict_set(*out, GRANT_DENIED, "resolution", NULL, gk_strdup("symlink loop"),
                    gk_strdup(path), gk_strdup("too many levels of symbolic links"));
        return 0;
    }
    gk_gate_fs(p, op, resolved, *out);
    free(resolved);
    return 0;
}

/* An exec head through an 8.3 short name on windows (see grant_check_fs):
 * denied, filled in v. */
static bool exec_short_name(const grant_policy *p, const char *head, grant_verdict *v)
{
    size_t sl = 0;
    const char *sn = p->ctx->target == GRANT_TARGET_WINDOWS && head ? gk_win_short_name(head, &sl)
                                                                     : NULL;
    if (!sn)
        return false;
    verdict_set(v, GRANT_DENIED, "resolution", NULL, gk_printf("8.3 short name %.*s", (int)sl, sn),
                gk_strdup(head),
                gk_strdup("an 8.3 short name stands for a long name only the volume knows: "
                          "run it by the long name"));
    return true;
}

int grant_check_exec_query(const grant_policy *p, const grant_exec_query *q, grant_verdict **out)
{
    if (!p || !q || !q->spelling || !*q->spelling)
        return -EINVAL;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    if (exec_short_name(p, q->spelling, *out) || exec_short_name(p, q->walked, *out))
        return 0;
    gk_gate_exec(p, q, *out);
    return 0;
}

int grant_check_exec(const grant_policy *p, const char *const *argv, size_t argc,
                     const char *path_env, const char *cwd, grant_verdict **out)
{
    if (!p || !argv || !argv[0] || !*argv[0] || (cwd && !valid_cwd(p->ctx, cwd)))
        return -EINVAL;
    if (argc == 0)
        while (argv[argc])
            argc++;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    if (exec_short_name(p, argv[0], *out))
        return 0;
    char *walked, *canonical;
    gk_walk_head(p->ctx, argv[0], path_env, cwd, &walked, &canonical);
    grant_exec_query q = {argv[0], walked, canonical, argc > 1 ? argv[1] : NULL};
    grant_answer a = gk_gate_exec(p, &q, *out);
    /* Existence is told only to a head the policy admits. */
    if (a == GRANT_ALLOWED && !canonical) {
        (*out)->answer = GRANT_NOT_FOUND;
        free((*out)->hint);
        (*out)->hint = walked ? gk_printf("no file at %s", walked)
                              : gk_printf("'%s' is not on PATH", argv[0]);
    }
    free(walked);
    free(canonical);
    return 0;
}

int grant_check_gate(const grant_policy *p, const char *gate, grant_verdict **out)
{
    if (!p || !gate || !gk_gate_known(gate))
        return -EINVAL;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    gk_gate_gate(p, gate, *out);
    return 0;
}

int grant_check_connect(const grant_policy *p, const char *host, unsigned port,
                        grant_verdict **out)
{
    gk_dest q;
    if (!p || !out || gk_dest_parse_query(host, port, &q) < 0)
        return -EINVAL;
    int rc = new_verdict(out);
    if (rc < 0)
        return rc;
    gk_gate_connect(p, &q, *out);
    return 0;
}

int grant_decide_connect(const grant_policy *p, const char *host, unsigned port)
{
    gk_dest q;
    if (!p || gk_dest_parse_query(host, port, &q) < 0)
        return -EINVAL;
    return gk_gate_connect(p, &q, NULL) == GRANT_ALLOWED;
}

grant_net_mode grant_policy_net_mode(const grant_policy *p)
{
    bool list = false;
    for (size_t l = 0; p && l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->net_list && f->net == GK_TRI_FALSE)
            return GRANT_NET_DENY;
        list |= f->net_list;
    }
    return list ? GRANT_NET_LIST : GRANT_NET_ALLOW;
}

void grant_verdict_free(grant_verdict *v)
{
    if (!v)
        return;
    gk_verdict_clear(v);
    free(v);
}

grant_answer grant_verdict_answer(const grant_verdict *v)
{
    return v ? v->answer : GRANT_DENIED;
}

const char *grant_verdict_origin(const grant_verdict *v)
{
    return v ? v->origin : NULL;
}

const char *grant_verdict_layer(const grant_verdict *v)
{
    return v ? v->layer : NULL;
}

const char *grant_verdict_rule(const grant_verdict *v)
{
    return v ? v->rule : NULL;
}

const char *grant_verdict_identity(const grant_verdict *v)
{
    return v ? v->identity : NULL;
}

const char *grant_verdict_path(const grant_verdict *v)
{
    return v ? v->path : NULL;
}

const char *grant_verdict_hint(const grant_verdict *v)
{
    return v ? v->hint : NULL;
}

/* Keys in bytewise order, a missing field as null; a path that is not
 * UTF-8 keeps its key (common/json.h's one rule). */
char *grant_verdict_json(const grant_verdict *v)
{
    if (!v)
        return NULL;
    static const char *const answers[] = {"denied", "allowed", "not-found"};
    const struct {
        const char *key, *value;
    } fields[] = {
        {"answer", answers[v->answer]}, {"hint", v->hint},     {"identity", v->identity},
        {"layer", v->layer},            {"origin", v->origin}, {"path", v->path},
        {"rule", v->rule},
    };
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        gk_json_key(&j, fields[i].key);
        gk_json_string(&j, fields[i].value);
    }
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}
