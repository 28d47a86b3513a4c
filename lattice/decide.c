/* decide.c - one layer's opinion on a resolved query, with the rule that
 * formed it, and the plain fold of a stack (grant-language.md §6).
 *
 * Each layer with an opinion must allow; a layer without one abstains; a
 * query nobody has an opinion on is allowed. The gate (gate.c) adds the
 * implicit grants, the discard device and the policy's own sources, and
 * resolves queries; these functions take the identities as given. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lattice/lattice.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

void gk_why_clear(gk_why *w)
{
    if (!w)
        return;
    free(w->rule);
    free(w->identity);
    free(w->hint);
    memset(w, 0, sizeof(*w));
}

static void why_set(gk_why *w, const char *origin, char *rule, char *identity)
{
    if (!w) {
        free(rule);
        free(identity);
        return;
    }
    gk_why_clear(w);
    w->origin = origin;
    w->rule = rule;
    w->identity = identity;
}

/* The deepest region of r holding p (real spelling, or either): the most
 * specific rule is the one a person wants to see; ties go to the first in
 * sorted order. Real spellings are found by a binary search per ancestor,
 * deepest first; only the aliased regions (path != real) are scanned. */
static const gk_region *region_holding(const gk_regions *r, const char *p, bool both)
{
    long best = -1;
    size_t best_len = 0, len = strlen(p), root = gk_path_root_len(p) == 3 ? 3 : 1;
    for (;;) {
        size_t l = len == 0 ? 1 : len;
        long i = gk_regions_first_real(r, p, l);
        if (i >= 0) {
            best = i;
            best_len = l;
            break;
        }
        if (len <= root)
            break;
        while (len > 0 && p[len - 1] != '/')
            len--;
        if (len > root)
            len--;
    }
    if (both && r->aliased)
        for (size_t i = 0; i < r->n; i++) {
            const gk_fpath *f = &r->v[i].p;
            if (strcmp(f->path, f->real) == 0 || gk_path_within(p, f->real) ||
                !gk_path_within(p, f->path))
                continue;
            size_t hl = strlen(f->path);
            if (hl > best_len || (hl == best_len && (long)i < best)) {
                best = (long)i;
                best_len = hl;
            }
        }
    return best < 0 ? NULL : &r->v[best];
}

static bool written_as_write(const gk_layer *f, const gk_region *r);

int gk_layer_decide_fs_why(const gk_layer *f, grant_op op, const char *p, bool implicit,
                           gk_why *why)
{
    if (!f->has_fs)
        return -1;
    /* Denies and readonly entries hold on both spellings. */
    if (gk_regions_contain(&f->fs.deny, p, true)) {
        if (why) {
            const gk_region *r = region_holding(&f->fs.deny, p, true);
            why_set(why, r->origin, gk_concat("deny ", r->p.path), NULL);
        }
        return 0;
    }
    if (op == GRANT_OP_WRITE && gk_regions_contain(&f->fs.readonly, p, true)) {
        if (why) {
            const gk_region *r = region_holding(&f->fs.readonly, p, true);
            why_set(why, r->origin, gk_concat("readonly ", r->p.path), NULL);
        }
        return 0;
    }
    if (!f->fs.restricted) {
        if (why)
            why_set(why, f->origin, gk_strdup("no deny or readonly entry applies"), NULL);
        return 1;
    }
    /* Grants match on the canonical spelling only. */
    const gk_regions *grants = op == GRANT_OP_WRITE ? &f->fs.write : &f->fs.read;
    if (gk_regions_contain(grants, p, false)) {
        if (why) {
            const gk_region *r = region_holding(grants, p, false);
            /* A readable region may have been written as `write X`. */
            bool written = op == GRANT_OP_WRITE || written_as_write(f, r);
            why_set(why, r->origin, gk_concat(written ? "write " : "read ", r->p.path), NULL);
        }
        return 1;
    }
    if (implicit)
        return 1; /* the gate names the implicit grant */
    if (why)
        why_set(why, f->origin,
                gk_strdup(op == GRANT_OP_WRITE ? "no write region contains it"
                                               : "no read region contains it"),
                NULL);
    return 0;
}

/* Is this very region (both spellings) also a write region of the layer?
 * A readable region written as `write X` is named so in a reason. */
static bool written_as_write(const gk_layer *f, const gk_region *r)
{
    long i = gk_regions_first_real(&f->fs.write, r->p.real, strlen(r->p.real));
    for (; i >= 0 && (size_t)i < f->fs.write.n && strcmp(f->fs.write.v[i].p.real, r->p.real) == 0;
         i++)
        if (strcmp(f->fs.write.v[i].p.path, r->p.path) == 0)
            return true;
    return false;
}

int gk_layer_decide_fs(const gk_layer *f, grant_op op, const char *p)
{
    return gk_layer_decide_fs_why(f, op, p, false, NULL);
}

bool gk_decide_fs(const gk_stack *s, grant_op op, const char *p)
{
    if (strcmp(p, "/dev/null") == 0)
        return true; /* the discard device needs no authority */
    for (size_t i = 0; i < s->n; i++)
        if (gk_layer_decide_fs(s->v[i], op, p) == 0)
            return false;
    return true;
}

/* The allow or veto dir strictly containing p (sorted dirs: each proper
 * ancestor of p is looked up rather than every dir scanned), or NULL. */
static const gk_entry *dir_holding(const gk_entries *dirs, const char *p)
{
    size_t root = gk_path_root_len(p); /* "/" or a drive root "C:/" */
    if (!dirs->n || !root)
        return NULL;
    size_t len = strlen(p);
    char buf[4096];
    if (len < sizeof(buf)) {
        memcpy(buf, p, len + 1);
        while (len > root) {
            while (len > 0 && buf[len - 1] != '/')
                len--;
            if (len > root)
                len--; /* the separator, except for the root */
            buf[len == 0 ? 1 : len] = '\0';
            const gk_entry *e = gk_entries_find(dirs, buf);
            if (e)
                return e;
        }
        return NULL;
    }
    for (size_t i = 0; i < dirs->n; i++)
        if (strcmp(p, dirs->v[i].key) != 0 && gk_path_within(p, dirs->v[i].key))
            return &dirs->v[i];
    return NULL;
}

static const char *const id_names[3] = {"spelling", "walked", "canonical"};

static char *identity_text(int k, const char *id, bool base)
{
    if (base)
        return gk_printf("basename '%s' of %s", gk_basename(id), id);
    return k == 0 ? gk_printf("spelling '%s'", id) : gk_printf("%s %s", id_names[k], id);
}

/* Step 1: every veto beats every admission; vetoes read the broad set. */
static bool vetoed(const gk_exec_dim *x, const char *const ids[3], gk_why *why)
{
    for (int k = 0; k < 3; k++) {
        const char *id = ids[k];
        if (!id)
            continue;
        const char *base = gk_basename(id);
        const gk_entry *e;
        if ((e = gk_entries_find(&x->veto_names, id))) {
            why_set(why, e->origin, gk_printf("deny %s", e->key), identity_text(k, id, false));
            return true;
        }
        if (base != id && (e = gk_entries_find(&x->veto_names, base))) {
            why_set(why, e->origin, gk_printf("deny %s", e->key), identity_text(k, id, true));
            return true;
        }
        if ((e = gk_entries_find(&x->veto_files, id))) {
            why_set(why, e->origin, gk_printf("deny %s", e->key), identity_text(k, id, false));
            return true;
        }
        for (size_t i = 0; i < x->veto_match.n; i++) {
            bool gave_up = false;
            if (gk_veto_pattern_hits(x, i, base, strlen(base), &gave_up)) {
                e = &x->veto_match.v[i];
                why_set(why, e->origin, gk_printf("deny match \"%s\"", e->key),
                        identity_text(k, id, base != id));
                if (why && gave_up)
                    why->hint = gk_strdup("the pattern matcher gave up on this name (a match, "
                                          "depth or heap limit): a veto that cannot tell counts "
                                          "as a match");
                return true;
            }
        }
        /* Veto dirs bind the walked and canonical paths (ids 1 and 2). */
        if (k > 0 && (e = dir_holding(&x->veto_dirs, id))) {
            why_set(why, e->origin, gk_printf("deny %s/", strcmp(e->key, "/") ? e->key : ""),
                    identity_text(k, id, false));
            return true;
        }
    }
    return false;
}

/* The admission entries naming id: by name, by basename, by file. */
static void admits_naming(const gk_exec_dim *x, const char *id, const gk_admit *hits[3])
{
    hits[0] = gk_admits_find(&x->names, id);
    hits[1] = gk_admits_find(&x->names, gk_basename(id));
    hits[2] = gk_path_root_len(id) ? gk_admits_find(&x->files, id) : NULL; /* / or C:/ */
}

bool gk_admits_share_argv1(const gk_admit *const *binds, size_t n)
{
    if (n == 0)
        return true;
    for (size_t w = 0; w < binds[0]->subs.n; w++) {
        const char *word = binds[0]->subs.v[w];
        size_t i = 1;
        while (i < n && gk_strvec_bsearch(&binds[i]->subs, word))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* Step 2: a Subcommands(S) entry named by any identity or its basename
 * binds argv[1], however the head is admitted. */
static bool restriction_refuses(const gk_exec_dim *x, const char *const ids[3], const char *argv1,
                                gk_why *why)
{
    for (int k = 0; k < 3; k++) {
        const char *id = ids[k];
        if (!id)
            continue;
        const gk_admit *hits[3];
        admits_naming(x, id, hits);
        for (int h = 0; h < 3; h++) {
            const gk_admit *a = hits[h];
            if (!a || a->all)
                continue;
            if (!argv1 || !gk_strvec_bsearch(&a->subs, argv1)) {
                if (why) {
                    gk_autofree char *list = gk_strvec_join(&a->subs, " ");
                    why_set(why, a->origin, gk_printf("allow %s [%s]", a->key, list),
                            identity_text(k, id, h == 1 && gk_basename(id) != id));
                    why->hint = argv1 ? gk_printf("allowed subcommands: %s", list)
                                      : gk_printf("a subcommand is required; allowed: %s", list);
                }
                return true;
            }
        }
    }
    return false;
}

static char *admit_rule(const gk_admit *a)
{
    if (a->all)
        return gk_printf("allow %s", a->key);
    gk_autofree char *list = gk_strvec_join(&a->subs, " ");
    return gk_printf("allow %s [%s]", a->key, list);
}

/* Step 3: admission reads spellings; allow dirs see only the walked path;
 * named entries take precedence over dirs in the reason. */
static bool admitted(const gk_exec_dim *x, const grant_exec_query *q, gk_why *why)
{
    const char *s = q->spelling;
    const gk_admit *a;
    if (!strchr(s, '/') && (a = gk_admits_find(&x->names, s))) {
        if (why)
            why_set(why, a->origin, admit_rule(a), identity_text(0, s, false));
        return true;
    }
    if (gk_path_root_len(s) && (a = gk_admits_find(&x->files, s))) {
        if (why)
            why_set(why, a->origin, admit_rule(a), identity_text(0, s, false));
        return true;
    }
    if (q->walked && (a = gk_admits_find(&x->files, q->walked))) {
        if (why)
            why_set(why, a->origin, admit_rule(a), identity_text(1, q->walked, false));
        return true;
    }
    const gk_entry *d;
    if (q->walked && (d = dir_holding(&x->dirs, q->walked))) {
        if (why)
            why_set(why, d->origin, gk_printf("allow %s/", strcmp(d->key, "/") ? d->key : ""),
                    identity_text(1, q->walked, false));
        return true;
    }
    return false;
}

bool gk_layer_vetoes(const gk_layer *f, const grant_exec_query *q)
{
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    return f->has_exec && vetoed(&f->exec, ids, NULL);
}

int gk_layer_decide_exec_why(const gk_layer *f, const grant_exec_query *q, gk_why *why)
{
    if (!f->has_exec)
        return -1;
    const gk_exec_dim *x = &f->exec;
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    if (vetoed(x, ids, why))
        return 0;
    if (!x->has_allow) {
        /* A deny-only section vetoes and admits everything else. */
        if (why)
            why_set(why, f->origin, gk_strdup("no veto applies"), identity_text(0, q->spelling, false));
        return 1;
    }
    if (restriction_refuses(x, ids, q->argv1, why))
        return 0;
    if (admitted(x, q, why))
        return 1;
    /* The spelling only: naming where PATH found it would reveal that a
     * program the policy refuses exists. */
    if (why)
        why_set(why, f->origin, gk_strdup("no allow rule admits it"),
                identity_text(0, q->spelling, false));
    return 0;
}

int gk_layer_decide_exec(const gk_layer *f, const grant_exec_query *q)
{
    return gk_layer_decide_exec_why(f, q, NULL);
}

bool gk_decide_exec_some_argv1(const gk_stack *s, const grant_exec_query *q)
{
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    const gk_admit **binds = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    for (size_t l = 0; l < s->n && ok; l++) {
        const gk_layer *f = s->v[l];
        if (!f->has_exec)
            continue;
        if (vetoed(&f->exec, ids, NULL)) {
            ok = false;
        } else if (f->exec.has_allow) {
            ok = admitted(&f->exec, q, NULL);
            for (int k = 0; k < 3; k++) {
                const gk_admit *hits[3];
                if (!ids[k])
                    continue;
                admits_naming(&f->exec, ids[k], hits);
                for (int h = 0; h < 3; h++)
                    if (hits[h] && !hits[h]->all)
                        GK_VEC_PUSH(binds, n, cap, hits[h]);
            }
        }
    }
    ok = ok && gk_admits_share_argv1(binds, n);
    free(binds);
    return ok;
}

bool gk_decide_exec(const gk_stack *s, const grant_exec_query *q)
{
    for (size_t i = 0; i < s->n; i++)
        if (gk_layer_decide_exec(s->v[i], q) == 0)
            return false;
    return true;
}

gk_tri gk_layer_gate(const gk_layer *f, const char *gate)
{
    if (strcmp(gate, "net") == 0)
        return f->net;
    if (strcmp(gate, "shell.chdir") == 0)
        return f->has_shell ? f->chdir : GK_TRI_NONE;
    if (strcmp(gate, "editor.read") == 0)
        return f->has_editor ? f->ed_read : GK_TRI_NONE;
    if (strcmp(gate, "editor.write") == 0)
        return f->has_editor ? f->ed_write : GK_TRI_NONE;
    if (strcmp(gate, "editor.tui") == 0)
        return f->has_editor ? f->ed_tui : GK_TRI_NONE;
    return GK_TRI_NONE;
}

bool gk_gate_known(const char *gate)
{
    static const char *const gates[] = {"net", "shell.chdir", "editor.read", "editor.write",
                                        "editor.tui"};
    for (size_t i = 0; i < sizeof(gates) / sizeof(*gates); i++)
        if (strcmp(gate, gates[i]) == 0)
            return true;
    return false;
}

gk_tri gk_decide_gate(const gk_stack *s, const char *gate)
{
    if (!gk_gate_known(gate))
        return GK_TRI_NONE;
    for (size_t i = 0; i < s->n; i++)
        if (gk_layer_gate(s->v[i], gate) == GK_TRI_FALSE)
            return GK_TRI_FALSE;
    return GK_TRI_TRUE;
}
