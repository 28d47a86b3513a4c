/* decide.c - the fold of a stack on already-resolved queries
 * (grant-language.md §6). Each layer with an opinion must allow; a layer
 * without one abstains; a query nobody has an opinion on is allowed.
 *
 * Resolution of the query itself (canonicalising a path as the kernel
 * would, walking PATH for a command head) happens before these functions:
 * they take the identities as given. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "frame.h"

#include <pcre2.h>
#include <string.h>

int gk_frame_decide_fs(const gk_frame *f, grant_op op, const char *p)
{
    if (!f->has_fs)
        return -1;
    /* Denies and readonly entries hold on both spellings. */
    if (gk_regions_contain(&f->fs.deny, p, true))
        return 0;
    if (op == GRANT_OP_WRITE && gk_regions_contain(&f->fs.readonly, p, true))
        return 0;
    if (!f->fs.restricted)
        return 1;
    /* Grants match on the canonical spelling only. */
    return gk_regions_contain(op == GRANT_OP_WRITE ? &f->fs.write : &f->fs.read, p, false);
}

bool gk_decide_fs(const gk_stack *s, grant_op op, const char *p)
{
    if (strcmp(p, "/dev/null") == 0)
        return true; /* the discard device needs no authority */
    for (size_t i = 0; i < s->n; i++)
        if (gk_frame_decide_fs(s->v[i], op, p) == 0)
            return false;
    return true;
}

static bool pattern_hits(const gk_exec_dim *x, size_t i, const char *base)
{
    pcre2_code *code = x->match_code ? x->match_code[i] : NULL;
    if (!code)
        return true; /* an uncompilable veto vetoes everything: fail closed */
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    int rc = pcre2_match(code, (PCRE2_SPTR)base, strlen(base), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Is p strictly inside one of the (sorted) dirs? Each proper ancestor of
 * p is looked up, rather than every dir scanned. */
static bool dirs_contain(const gk_entries *dirs, const char *p)
{
    if (!dirs->n || p[0] != '/')
        return false;
    size_t len = strlen(p);
    char buf[4096];
    if (len >= sizeof(buf))
        goto scan;
    memcpy(buf, p, len + 1);
    while (len > 1) {
        while (len > 0 && buf[len - 1] != '/')
            len--;
        if (len > 1)
            len--; /* the separator, except for the root */
        buf[len == 0 ? 1 : len] = '\0';
        if (gk_entries_has(dirs, buf))
            return true;
    }
    return false;
scan:
    for (size_t i = 0; i < dirs->n; i++)
        if (strcmp(p, dirs->v[i].key) != 0 && gk_path_within(p, dirs->v[i].key))
            return true;
    return false;
}

/* Step 1: every veto beats every admission; vetoes read the broad set. */
static bool vetoed(const gk_exec_dim *x, const char *const ids[3])
{
    for (int k = 0; k < 3; k++) {
        const char *id = ids[k];
        if (!id)
            continue;
        const char *base = gk_basename(id);
        if (gk_entries_has(&x->veto_names, id) || gk_entries_has(&x->veto_names, base))
            return true;
        if (gk_entries_has(&x->veto_files, id))
            return true;
        for (size_t i = 0; i < x->veto_match.n; i++)
            if (pattern_hits(x, i, base))
                return true;
        /* Veto dirs bind the walked and canonical paths (ids 1 and 2). */
        if (k > 0 && dirs_contain(&x->veto_dirs, id))
            return true;
    }
    return false;
}

/* Step 2: a Subcommands(S) entry named by any identity or its basename
 * binds argv[1], however the head is admitted. */
static bool restriction_refuses(const gk_exec_dim *x, const char *const ids[3], const char *argv1)
{
    for (int k = 0; k < 3; k++) {
        const char *id = ids[k];
        if (!id)
            continue;
        const gk_admit *hits[3] = {gk_admits_find(&x->names, id),
                                   gk_admits_find(&x->names, gk_basename(id)),
                                   id[0] == '/' ? gk_admits_find(&x->files, id) : NULL};
        for (int h = 0; h < 3; h++) {
            const gk_admit *a = hits[h];
            if (!a || a->all)
                continue;
            if (!argv1 || !gk_strvec_bsearch(&a->subs, argv1))
                return true;
        }
    }
    return false;
}

/* Step 3: admission reads spellings; allow dirs see only the walked path. */
static bool admitted(const gk_exec_dim *x, const grant_exec_query *q)
{
    const char *s = q->spelling;
    if (!strchr(s, '/') && gk_admits_find(&x->names, s))
        return true;
    if (s[0] == '/' && gk_admits_find(&x->files, s))
        return true;
    if (q->walked && gk_admits_find(&x->files, q->walked))
        return true;
    if (q->walked && dirs_contain(&x->dirs, q->walked))
        return true;
    return false;
}

int gk_frame_decide_exec(const gk_frame *f, const grant_exec_query *q)
{
    if (!f->has_exec)
        return -1;
    const gk_exec_dim *x = &f->exec;
    const char *ids[3] = {q->spelling, q->walked, q->canonical};
    if (vetoed(x, ids))
        return 0;
    if (!x->has_allow)
        return 1; /* a deny-only section vetoes and admits everything else */
    if (restriction_refuses(x, ids, q->argv1))
        return 0;
    return admitted(x, q) ? 1 : 0;
}

bool gk_decide_exec(const gk_stack *s, const grant_exec_query *q)
{
    for (size_t i = 0; i < s->n; i++)
        if (gk_frame_decide_exec(s->v[i], q) == 0)
            return false;
    return true;
}

static gk_tri frame_gate(const gk_frame *f, const char *gate)
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

static bool gate_known(const char *gate)
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
    if (!gate_known(gate))
        return GK_TRI_NONE;
    for (size_t i = 0; i < s->n; i++)
        if (frame_gate(s->v[i], gate) == GK_TRI_FALSE)
            return GK_TRI_FALSE;
    return GK_TRI_TRUE;
}
