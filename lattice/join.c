/* lattice.c - the stack of layers, meet and join (grant-language.md §5).
 *
 * meet keeps layers apart: decide(meet(a, b), q) = decide(a, q) AND
 * decide(b, q) holds by construction, because the fold is a conjunction
 * over layers. Only duplicates are dropped (idempotence).
 *
 * join (extend) widens one layer structurally: allow lists and regions
 * unite. The spec's rule "vetoes and denies intersect" is not sound on its
 * own: with a = {allow /usr/bin/; deny bash} and b = {allow make}, both deny
 * /usr/bin/bash, yet the intersection of vetoes is empty and the united
 * allow dir admits it. So every deny, readonly entry and veto of one side is
 * classified against the other side:
 *   - the other side denies everything it covers: keep it (exact);
 *   - the other side grants everything it covers (for every operation the
 *     join would grant there): drop it (exact);
 *   - a deny whose whole area the other side may read but not write:
 *     keep it as a readonly entry (exact);
 *   - otherwise keep it, and report the join as lossy: it then admits less
 *     than the union, never more.
 * The result is sound (never admits what both sides deny) and equals the
 * union exactly whenever it is not lossy. */
#include "lattice/lattice.h"

#include <stdlib.h>
#include <string.h>

void gk_stack_push(gk_stack *s, gk_layer *f)
{
    GK_VEC_PUSH(s->v, s->n, s->cap, f);
}

void gk_stack_push_unique(gk_stack *s, gk_layer *f)
{
    for (size_t i = 0; i < s->n; i++) {
        if (gk_layer_equal(s->v[i], f)) {
            gk_layer_free(f);
            return;
        }
    }
    gk_stack_push(s, f);
}

void gk_stack_free(gk_stack *s)
{
    for (size_t i = 0; i < s->n; i++)
        gk_layer_free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

void gk_stack_copy(gk_stack *dst, const gk_stack *src)
{
    for (size_t i = 0; i < src->n; i++)
        gk_stack_push_unique(dst, gk_layer_ref(src->v[i]));
}

void gk_stack_meet(gk_stack *dst, const gk_stack *a, const gk_stack *b)
{
    gk_stack_copy(dst, a);
    gk_stack_copy(dst, b);
}

/* ---- fs ------------------------------------------------------------------ */

static bool overlaps(const char *p, const char *q)
{
    return gk_path_within(p, q) || gk_path_within(q, p);
}

static bool spelling_covered(const gk_regions *r, const char *x)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(x, r->v[i].p.real) || gk_path_within(x, r->v[i].p.path))
            return true;
    return false;
}

static bool spelling_touches(const gk_regions *r, const char *x)
{
    for (size_t i = 0; i < r->n; i++)
        if (overlaps(x, r->v[i].p.real) || overlaps(x, r->v[i].p.path))
            return true;
    return false;
}

static bool grant_contains(const gk_regions *r, const char *x)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(x, r->v[i].p.real))
            return true;
    return false;
}

static bool grant_touches(const gk_regions *r, const char *x)
{
    for (size_t i = 0; i < r->n; i++)
        if (overlaps(x, r->v[i].p.real))
            return true;
    return false;
}

/* Every point under spelling x is granted op by y. */
static bool fs_allows_all(const gk_layer *y, const char *x, grant_op op)
{
    if (!y->has_fs)
        return true;
    if (spelling_touches(&y->fs.deny, x))
        return false;
    if (op == GRANT_OP_WRITE && spelling_touches(&y->fs.readonly, x))
        return false;
    if (!y->fs.restricted)
        return true;
    return grant_contains(op == GRANT_OP_WRITE ? &y->fs.write : &y->fs.read, x);
}

/* Every point under spelling x is refused op by y. */
static bool fs_denies_all(const gk_layer *y, const char *x, grant_op op)
{
    if (!y->has_fs)
        return false;
    if (spelling_covered(&y->fs.deny, x))
        return true;
    if (op == GRANT_OP_WRITE && spelling_covered(&y->fs.readonly, x))
        return true;
    return y->fs.restricted &&
           !grant_touches(op == GRANT_OP_WRITE ? &y->fs.write : &y->fs.read, x);
}

static bool region_allows_all(const gk_layer *y, const gk_fpath *p, grant_op op)
{
    return fs_allows_all(y, p->real, op) && fs_allows_all(y, p->path, op);
}

static bool region_denies_all(const gk_layer *y, const gk_fpath *p, grant_op op)
{
    return fs_denies_all(y, p->real, op) && fs_denies_all(y, p->path, op);
}

/* Does the join grant op anywhere under either spelling of p? */
static bool join_grants_in(const gk_layer *j, const gk_fpath *p, grant_op op)
{
    if (!j->fs.restricted)
        return true;
    const gk_regions *r = op == GRANT_OP_WRITE ? &j->fs.write : &j->fs.read;
    return grant_touches(r, p->real) || grant_touches(r, p->path);
}

enum verdict_of_entry { KEEP, DROP, TO_READONLY };

static enum verdict_of_entry classify_deny(const gk_layer *j, const gk_layer *y,
                                           const gk_fpath *d, bool *lossy)
{
    bool need_read = join_grants_in(j, d, GRANT_OP_READ);
    bool need_write = join_grants_in(j, d, GRANT_OP_WRITE);
    bool read_ok = !need_read || region_allows_all(y, d, GRANT_OP_READ);
    bool write_ok = !need_write || region_allows_all(y, d, GRANT_OP_WRITE);
    if (read_ok && write_ok)
        return DROP;
    if (region_denies_all(y, d, GRANT_OP_READ))
        return KEEP;
    if (read_ok && region_denies_all(y, d, GRANT_OP_WRITE))
        return TO_READONLY;
    *lossy = true;
    return KEEP;
}

static enum verdict_of_entry classify_readonly(const gk_layer *j, const gk_layer *y,
                                               const gk_fpath *r, bool *lossy)
{
    if (!join_grants_in(j, r, GRANT_OP_WRITE) || region_allows_all(y, r, GRANT_OP_WRITE))
        return DROP;
    if (region_denies_all(y, r, GRANT_OP_WRITE))
        return KEEP;
    *lossy = true;
    return KEEP;
}

static void regions_union(gk_regions *dst, const gk_regions *a, const gk_regions *b)
{
    for (size_t i = 0; i < a->n; i++)
        gk_regions_add(dst, &a->v[i].p, a->v[i].origin);
    for (size_t i = 0; i < b->n; i++)
        gk_regions_add(dst, &b->v[i].p, b->v[i].origin);
}

static void join_entries_of(gk_layer *j, const gk_layer *x, const gk_layer *y, bool *lossy)
{
    for (size_t i = 0; i < x->fs.deny.n; i++) {
        const gk_region *d = &x->fs.deny.v[i];
        switch (classify_deny(j, y, &d->p, lossy)) {
        case KEEP:
            gk_regions_add(&j->fs.deny, &d->p, d->origin);
            break;
        case TO_READONLY:
            gk_regions_add(&j->fs.readonly, &d->p, d->origin);
            break;
        case DROP:
            break;
        }
    }
    for (size_t i = 0; i < x->fs.readonly.n; i++) {
        const gk_region *r = &x->fs.readonly.v[i];
        if (classify_readonly(j, y, &r->p, lossy) == KEEP)
            gk_regions_add(&j->fs.readonly, &r->p, r->origin);
    }
}

static void join_fs(gk_layer *j, const gk_layer *a, const gk_layer *b, bool *lossy)
{
    if (!a->has_fs || !b->has_fs)
        return; /* an abstaining side grants everything */
    j->has_fs = true;
    j->fs.restricted = a->fs.restricted && b->fs.restricted;
    if (j->fs.restricted) {
        regions_union(&j->fs.read, &a->fs.read, &b->fs.read);
        regions_union(&j->fs.write, &a->fs.write, &b->fs.write);
    }
    join_entries_of(j, a, b, lossy);
    join_entries_of(j, b, a, lossy);
}

/* ---- exec ---------------------------------------------------------------- */

static bool admits_nothing(const gk_exec_dim *y)
{
    return y->has_allow && !y->names.n && !y->files.n && !y->dirs.n;
}

static bool has_vetoes(const gk_exec_dim *y)
{
    return y->veto_names.n || y->veto_files.n || y->veto_dirs.n || y->veto_match.n;
}

static bool within_veto_dir(const gk_exec_dim *y, const char *p)
{
    for (size_t i = 0; i < y->veto_dirs.n; i++)
        if (gk_path_within(p, y->veto_dirs.v[i].key))
            return true;
    return false;
}

/* Keep veto `key` of one side unless the other side y provably admits
 * everything it covers. */
static bool keep_veto(const gk_exec_dim *y, const gk_entries *same_kind, const char *key,
                      bool is_path, bool *lossy)
{
    if (gk_entries_has(same_kind, key) || (is_path && within_veto_dir(y, key)) ||
        admits_nothing(y))
        return true;
    if (!y->has_allow && !has_vetoes(y))
        return false;
    *lossy = true;
    return true;
}

static void join_vetoes(gk_exec_dim *j, const gk_exec_dim *x, const gk_exec_dim *y, bool *lossy)
{
    struct {
        gk_entries *dst;
        const gk_entries *src, *other;
        bool is_path;
    } kinds[] = {
        {&j->veto_names, &x->veto_names, &y->veto_names, false},
        {&j->veto_files, &x->veto_files, &y->veto_files, true},
        {&j->veto_dirs, &x->veto_dirs, &y->veto_dirs, true},
        {&j->veto_match, &x->veto_match, &y->veto_match, false},
    };
    for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++)
        for (size_t i = 0; i < kinds[k].src->n; i++) {
            const gk_entry *e = &kinds[k].src->v[i];
            if (keep_veto(y, kinds[k].other, e->key, kinds[k].is_path, lossy))
                gk_entries_add(kinds[k].dst, e->key, e->origin);
        }
}

static size_t routes(const gk_exec_dim *x)
{
    return x->names.n + x->files.n + x->dirs.n;
}

/* Unite the admission entries of one list (names or files). A restriction
 * binds every route of its layer, so uniting Subcommands(S) with T or with
 * Allow is only exact when the sides have no other route that could admit
 * a head with that identity (a dir, another file, a name whose canonical
 * file is this one). Otherwise the join keeps the tighter set: sound, and
 * reported as lossy when it is tighter than the union. */
static void admits_union(gk_admits *dst, const gk_exec_dim *x, const gk_admits *ax,
                         const gk_exec_dim *y, const gk_admits *ay, bool *lossy)
{
    const gk_admits *lists[2] = {ax, ay};
    const gk_exec_dim *dims[2] = {x, y};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < lists[s]->n; i++) {
            const gk_admit *e = &lists[s]->v[i];
            const gk_admit *o = gk_admits_find(lists[1 - s], e->key);
            if (o && s == 1)
                continue; /* merged when side 0 saw it */
            gk_admit c = {gk_strdup(e->key), e->all, {0}, gk_strdup(e->origin)};
            if (!o) {
                gk_strvec_copy(&c.subs, &e->subs);
            } else {
                bool e_other = routes(dims[s]) > 1, o_other = routes(dims[1 - s]) > 1;
                const gk_admit *lo = e->all ? o : e, *hi = e->all ? e : o;
                if (e->all && o->all) {
                    c.all = true;
                } else if (!e->all && !o->all) {
                    /* Subcommands on both sides. */
                    c.all = false;
                    if (!e_other && !o_other) {
                        gk_strvec_copy(&c.subs, &e->subs);
                        gk_strvec_copy(&c.subs, &o->subs);
                    } else {
                        const gk_admit *only = e_other && !o_other ? e : !e_other ? o : NULL;
                        if (only) {
                            gk_strvec_copy(&c.subs, &only->subs);
                        } else {
                            for (size_t k = 0; k < e->subs.n; k++)
                                if (gk_strvec_bsearch(&o->subs, e->subs.v[k]))
                                    gk_strvec_push(&c.subs, e->subs.v[k]);
                        }
                        /* Tighter than the union only if S and T differ. */
                        gk_strvec u = {0};
                        gk_strvec_copy(&u, &e->subs);
                        gk_strvec_copy(&u, &o->subs);
                        gk_strvec_sort_unique(&u);
                        if (u.n != c.subs.n)
                            *lossy = true;
                        gk_strvec_free(&u);
                    }
                } else {
                    /* Allow on one side, Subcommands on the other. */
                    const gk_exec_dim *lo_dim = lo == e ? dims[s] : dims[1 - s];
                    if (routes(lo_dim) > 1) {
                        c.all = false;
                        gk_strvec_copy(&c.subs, &lo->subs);
                        *lossy = true;
                    } else {
                        c.all = true;
                    }
                    (void)hi;
                }
            }
            GK_VEC_PUSH(dst->v, dst->n, dst->cap, c);
        }
}

/* A Subcommands entry of x that y does not name binds heads y may admit
 * by other routes with any argv[1]: the join then admits less. */
static void note_restrictions(const gk_exec_dim *x, const gk_exec_dim *y, bool *lossy)
{
    if (admits_nothing(y))
        return;
    const gk_admits *lists[2] = {&x->names, &x->files};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const gk_admit *e = &lists[l]->v[i];
            if (!e->all && !gk_admits_find(l == 0 ? &y->names : &y->files, e->key))
                *lossy = true;
        }
}

static void join_exec(gk_layer *j, const gk_layer *a, const gk_layer *b, bool *lossy)
{
    if (!a->has_exec || !b->has_exec)
        return;
    j->has_exec = true;
    const gk_exec_dim *x = &a->exec, *y = &b->exec;
    j->exec.has_allow = x->has_allow && y->has_allow;
    if (j->exec.has_allow) {
        admits_union(&j->exec.names, x, &x->names, y, &y->names, lossy);
        admits_union(&j->exec.files, x, &x->files, y, &y->files, lossy);
        for (size_t i = 0; i < x->dirs.n; i++)
            gk_entries_add(&j->exec.dirs, x->dirs.v[i].key, x->dirs.v[i].origin);
        for (size_t i = 0; i < y->dirs.n; i++)
            gk_entries_add(&j->exec.dirs, y->dirs.v[i].key, y->dirs.v[i].origin);
        note_restrictions(x, y, lossy);
        note_restrictions(y, x, lossy);
    }
    join_vetoes(&j->exec, x, y, lossy);
    join_vetoes(&j->exec, y, x, lossy);
}

/* ---- scalars ------------------------------------------------------------- */

/* An abstaining side allows, so the join abstains; else either allowing. */
static gk_tri tri_join(gk_tri a, gk_tri b)
{
    if (a == GK_TRI_NONE || b == GK_TRI_NONE)
        return GK_TRI_NONE;
    return (a == GK_TRI_TRUE || b == GK_TRI_TRUE) ? GK_TRI_TRUE : GK_TRI_FALSE;
}

gk_layer *gk_layer_join(const gk_layer *a, const gk_layer *b, bool *lossy)
{
    bool lost = false;
    gk_layer *j = gk_layer_new();
    j->name = gk_strdup(a->name);
    j->origin = gk_strdup(a->origin);
    join_exec(j, a, b, &lost);
    join_fs(j, a, b, &lost);
    if (a->net_list || b->net_list)
        gk_net_join(j, a, b, &lost);
    else
        j->net = tri_join(a->net, b->net);
    j->has_shell = a->has_shell && b->has_shell;
    j->chdir = j->has_shell ? tri_join(a->chdir, b->chdir) : GK_TRI_NONE;
    j->has_editor = a->has_editor && b->has_editor;
    if (j->has_editor) {
        j->ed_read = tri_join(a->ed_read, b->ed_read);
        j->ed_write = tri_join(a->ed_write, b->ed_write);
        j->ed_tui = tri_join(a->ed_tui, b->ed_tui);
    }
    j->audit = a->audit || b->audit;
    for (int i = 0; i < 5; i++)
        j->gate_origin[i] = gk_strdup(a->gate_origin[i] ? a->gate_origin[i] : b->gate_origin[i]);
    gk_layer_canonicalize(j);
    if (lossy)
        *lossy = lost;
    return j;
}
