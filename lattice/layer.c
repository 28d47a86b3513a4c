/* layer.c - frozen grants: building one from an AST, canonical form,
 * copying and equality. The lattice operations live in lattice.c and the
 * decisions in decide.c. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lattice/lattice.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

gk_layer *gk_layer_new(void)
{
    gk_layer *f = gk_calloc(1, sizeof(*f));
    f->net = GK_TRI_NONE;
    f->chdir = GK_TRI_NONE;
    f->ed_read = f->ed_write = f->ed_tui = GK_TRI_NONE;
    f->refs = 1;
    return f;
}

gk_layer *gk_layer_ref(gk_layer *f)
{
    f->refs++;
    return f;
}

static void entries_free(gk_entries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].key);
        free(e->v[i].origin);
    }
    free(e->v);
    memset(e, 0, sizeof(*e));
}

static void admits_free(gk_admits *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->v[i].key);
        free(a->v[i].origin);
        gk_strvec_free(&a->v[i].subs);
    }
    free(a->v);
    memset(a, 0, sizeof(*a));
}

static void regions_free(gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        gk_fpath_free(&r->v[i].p);
        free(r->v[i].origin);
    }
    free(r->v);
    memset(r, 0, sizeof(*r));
}

static void match_code_free(gk_exec_dim *x)
{
    if (!x->match_code)
        return;
    for (size_t i = 0; i < x->veto_match.n; i++)
        pcre2_code_free(x->match_code[i]);
    free(x->match_code);
    x->match_code = NULL;
}

void gk_layer_free(gk_layer *f)
{
    if (!f || --f->refs > 0)
        return;
    free(f->name);
    free(f->origin);
    for (int i = 0; i < 5; i++)
        free(f->gate_origin[i]);
    match_code_free(&f->exec);
    admits_free(&f->exec.names);
    admits_free(&f->exec.files);
    entries_free(&f->exec.dirs);
    entries_free(&f->exec.veto_names);
    entries_free(&f->exec.veto_files);
    entries_free(&f->exec.veto_dirs);
    entries_free(&f->exec.veto_match);
    regions_free(&f->fs.read);
    regions_free(&f->fs.write);
    regions_free(&f->fs.readonly);
    regions_free(&f->fs.deny);
    gk_net_dim_free(&f->netd);
    free(f);
}

void gk_entries_add(gk_entries *e, const char *key, const char *origin)
{
    gk_entry x = {gk_strdup(key), gk_strdup(origin)};
    GK_VEC_PUSH(e->v, e->n, e->cap, x);
}

const gk_entry *gk_entries_find(const gk_entries *e, const char *key)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(e->v[mid].key, key);
        if (c == 0)
            return &e->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool gk_entries_has(const gk_entries *e, const char *key)
{
    return gk_entries_find(e, key) != NULL;
}

gk_admit *gk_admits_find(const gk_admits *a, const char *key)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(a->v[mid].key, key);
        if (c == 0)
            return &a->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void gk_regions_add(gk_regions *r, const gk_fpath *p, const char *origin)
{
    gk_region x = {{gk_strdup(p->path), gk_strdup(p->real)}, gk_strdup(origin)};
    GK_VEC_PUSH(r->v, r->n, r->cap, x);
    if (strcmp(p->path, p->real) != 0)
        r->aliased++;
}

/* Index of the first region whose real spelling equals key, or -1. */
long gk_regions_first_real(const gk_regions *r, const char *key, size_t len)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *k = r->v[mid].p.real;
        int c = strncmp(k, key, len);
        if (c == 0 && k[len] != '\0')
            c = 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->n && strncmp(r->v[lo].p.real, key, len) == 0 && r->v[lo].p.real[len] == '\0'
               ? (long)lo
               : -1;
}

bool gk_regions_contain(const gk_regions *r, const char *p, bool both_spellings)
{
    if (!r->n)
        return false;
    /* Every prefix of p ending at a component boundary, p itself first.
     * The root is "/" or a drive root "C:/", which keeps its '/'. */
    size_t len = strlen(p), root = gk_path_root_len(p) == 3 ? 3 : 1;
    for (;;) {
        if (gk_regions_first_real(r, p, len == 0 ? 1 : len) >= 0)
            return true;
        if (len <= root)
            break;
        while (len > 0 && p[len - 1] != '/')
            len--;
        if (len > root)
            len--; /* drop the '/' too, except for the root */
    }
    if (both_spellings && r->aliased)
        for (size_t i = 0; i < r->n; i++)
            if (strcmp(r->v[i].p.path, r->v[i].p.real) != 0 &&
                gk_path_within(p, r->v[i].p.path))
                return true;
    return false;
}

static void admits_add(gk_admits *a, const char *key, bool all, const gk_strvec *subs,
                       const char *origin)
{
    gk_admit x = {gk_strdup(key), all, {0}, gk_strdup(origin)};
    if (subs)
        gk_strvec_copy(&x.subs, subs);
    GK_VEC_PUSH(a->v, a->n, a->cap, x);
}

/* ---- canonical form ------------------------------------------------------ */

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const gk_entry *)a)->key, ((const gk_entry *)b)->key);
}

static void entries_canon(gk_entries *e)
{
    if (e->n < 2)
        return;
    qsort(e->v, e->n, sizeof(*e->v), entry_cmp);
    size_t w = 1;
    for (size_t r = 1; r < e->n; r++) {
        if (strcmp(e->v[r].key, e->v[w - 1].key) == 0) {
            free(e->v[r].key);
            free(e->v[r].origin);
        } else {
            e->v[w++] = e->v[r];
        }
    }
    e->n = w;
}

static int admit_cmp(const void *a, const void *b)
{
    return strcmp(((const gk_admit *)a)->key, ((const gk_admit *)b)->key);
}

/* Same key twice: Allow absorbs Subcommands, Subcommands unite. */
static void admits_canon(gk_admits *a)
{
    if (a->n > 1)
        qsort(a->v, a->n, sizeof(*a->v), admit_cmp);
    size_t w = 0;
    for (size_t r = 0; r < a->n; r++) {
        if (w > 0 && strcmp(a->v[r].key, a->v[w - 1].key) == 0) {
            gk_admit *keep = &a->v[w - 1], *dup = &a->v[r];
            keep->all = keep->all || dup->all;
            gk_strvec_copy(&keep->subs, &dup->subs);
            free(dup->key);
            free(dup->origin);
            gk_strvec_free(&dup->subs);
        } else {
            a->v[w++] = a->v[r];
        }
    }
    a->n = w;
    for (size_t i = 0; i < a->n; i++) {
        if (a->v[i].all)
            gk_strvec_free(&a->v[i].subs);
        else
            gk_strvec_sort_unique(&a->v[i].subs);
    }
}

static int region_cmp(const void *a, const void *b)
{
    return gk_fpath_cmp(&((const gk_region *)a)->p, &((const gk_region *)b)->p);
}

void gk_regions_sort_unique(gk_regions *r)
{
    if (r->n < 2)
        return;
    qsort(r->v, r->n, sizeof(*r->v), region_cmp);
    size_t w = 1;
    for (size_t i = 1; i < r->n; i++) {
        if (gk_fpath_cmp(&r->v[i].p, &r->v[w - 1].p) == 0) {
            gk_fpath_free(&r->v[i].p);
            free(r->v[i].origin);
        } else {
            r->v[w++] = r->v[i];
        }
    }
    r->n = w;
    r->aliased = 0;
    for (size_t k = 0; k < r->n; k++)
        r->aliased += strcmp(r->v[k].p.path, r->v[k].p.real) != 0;
}

static void compile_patterns(gk_exec_dim *x)
{
    match_code_free(x);
    if (!x->veto_match.n)
        return;
    x->match_code = gk_calloc(x->veto_match.n, sizeof(void *));
    for (size_t i = 0; i < x->veto_match.n; i++) {
        int err;
        PCRE2_SIZE off;
        /* Validated at parse time; a failure here leaves NULL, which the
         * decision treats as matching everything (fail closed). */
        x->match_code[i] = pcre2_compile((PCRE2_SPTR)x->veto_match.v[i].key, PCRE2_ZERO_TERMINATED,
                                         PCRE2_UTF, &err, &off, NULL);
    }
}

/* One match context for every grant pattern: the limits are constants, so
 * it is made once and only read (threads may share it). */
static pcre2_match_context *match_context(void)
{
    static pcre2_match_context *shared;
    pcre2_match_context *mc = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
    if (mc)
        return mc;
    mc = pcre2_match_context_create(NULL);
    if (!mc)
        return NULL;
    pcre2_set_match_limit(mc, GK_MATCH_LIMIT);
    pcre2_set_depth_limit(mc, GK_MATCH_DEPTH_LIMIT);
    pcre2_set_heap_limit(mc, GK_MATCH_HEAP_LIMIT);
    pcre2_match_context *none = NULL;
    if (__atomic_compare_exchange_n(&shared, &none, mc, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mc;
    pcre2_match_context_free(mc);
    return none;
}

int gk_pattern_match(const void *code, const char *s, size_t len, void *md)
{
    pcre2_match_context *mc = match_context();
    pcre2_match_data *own = md ? NULL : pcre2_match_data_create_from_pattern(code, NULL);
    if (!mc || (!md && !own))
        return -1;
    int rc = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, md ? md : own, mc);
    pcre2_match_data_free(own);
    if (rc >= 0)
        return 1;
    return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

bool gk_veto_pattern_hits(const gk_exec_dim *x, size_t i, const char *s, size_t len, bool *gave_up)
{
    const void *code = x->match_code ? x->match_code[i] : NULL;
    int rc = code ? gk_pattern_match(code, s, len, NULL) : -1;
    if (gave_up)
        *gave_up = rc < 0;
    return rc != 0;
}

void gk_layer_canonicalize(gk_layer *f)
{
    gk_exec_dim *x = &f->exec;
    admits_canon(&x->names);
    admits_canon(&x->files);
    entries_canon(&x->dirs);
    entries_canon(&x->veto_names);
    entries_canon(&x->veto_files);
    entries_canon(&x->veto_dirs);
    entries_canon(&x->veto_match);
    compile_patterns(x);
    if (!f->has_exec || !x->has_allow) {
        admits_free(&x->names);
        admits_free(&x->files);
        entries_free(&x->dirs);
    }
    /* write implies read */
    for (size_t i = 0; i < f->fs.write.n; i++)
        gk_regions_add(&f->fs.read, &f->fs.write.v[i].p, f->fs.write.v[i].origin);
    gk_regions_sort_unique(&f->fs.read);
    gk_regions_sort_unique(&f->fs.write);
    gk_regions_sort_unique(&f->fs.readonly);
    gk_regions_sort_unique(&f->fs.deny);
    if (!f->has_fs || !f->fs.restricted) {
        regions_free(&f->fs.read);
        regions_free(&f->fs.write);
    }
    if (f->net_list) {
        f->net = GK_TRI_FALSE;
        gk_net_dim_canonicalize(&f->netd);
    } else {
        gk_net_dim_free(&f->netd);
    }
}

/* ---- copy and equality --------------------------------------------------- */

static void entries_copy(gk_entries *d, const gk_entries *s)
{
    for (size_t i = 0; i < s->n; i++)
        gk_entries_add(d, s->v[i].key, s->v[i].origin);
}

static void admits_copy(gk_admits *d, const gk_admits *s)
{
    for (size_t i = 0; i < s->n; i++)
        admits_add(d, s->v[i].key, s->v[i].all, &s->v[i].subs, s->v[i].origin);
}

static void regions_copy(gk_regions *d, const gk_regions *s)
{
    for (size_t i = 0; i < s->n; i++)
        gk_regions_add(d, &s->v[i].p, s->v[i].origin);
}

gk_layer *gk_layer_copy(const gk_layer *f)
{
    gk_layer *c = gk_layer_new();
    c->name = gk_strdup(f->name);
    c->origin = gk_strdup(f->origin);
    c->has_exec = f->has_exec;
    c->exec.has_allow = f->exec.has_allow;
    admits_copy(&c->exec.names, &f->exec.names);
    admits_copy(&c->exec.files, &f->exec.files);
    entries_copy(&c->exec.dirs, &f->exec.dirs);
    entries_copy(&c->exec.veto_names, &f->exec.veto_names);
    entries_copy(&c->exec.veto_files, &f->exec.veto_files);
    entries_copy(&c->exec.veto_dirs, &f->exec.veto_dirs);
    entries_copy(&c->exec.veto_match, &f->exec.veto_match);
    compile_patterns(&c->exec);
    c->has_fs = f->has_fs;
    c->fs.restricted = f->fs.restricted;
    regions_copy(&c->fs.read, &f->fs.read);
    regions_copy(&c->fs.write, &f->fs.write);
    regions_copy(&c->fs.readonly, &f->fs.readonly);
    regions_copy(&c->fs.deny, &f->fs.deny);
    c->net = f->net;
    c->net_list = f->net_list;
    gk_net_dim_copy(&c->netd, &f->netd);
    c->has_shell = f->has_shell;
    c->chdir = f->chdir;
    c->has_editor = f->has_editor;
    c->ed_read = f->ed_read;
    c->ed_write = f->ed_write;
    c->ed_tui = f->ed_tui;
    c->audit = f->audit;
    for (int i = 0; i < 5; i++)
        c->gate_origin[i] = gk_strdup(f->gate_origin[i]);
    return c;
}

bool gk_entries_keys_equal(const gk_entries *a, const gk_entries *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].key, b->v[i].key) != 0)
            return false;
    return true;
}

static bool strvec_eq(const gk_strvec *a, const gk_strvec *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return false;
    return true;
}

static bool admits_eq(const gk_admits *a, const gk_admits *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].key, b->v[i].key) != 0 || a->v[i].all != b->v[i].all ||
            !strvec_eq(&a->v[i].subs, &b->v[i].subs))
            return false;
    return true;
}

static bool regions_eq(const gk_regions *a, const gk_regions *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (gk_fpath_cmp(&a->v[i].p, &b->v[i].p) != 0)
            return false;
    return true;
}

bool gk_layer_equal(const gk_layer *a, const gk_layer *b)
{
    if (!gk_str_eq(a->name, b->name) || !gk_str_eq(a->origin, b->origin))
        return false;
    if (a->has_exec != b->has_exec || a->has_fs != b->has_fs || a->net != b->net ||
        a->has_shell != b->has_shell || a->chdir != b->chdir || a->has_editor != b->has_editor ||
        a->ed_read != b->ed_read || a->ed_write != b->ed_write || a->ed_tui != b->ed_tui ||
        a->audit != b->audit || a->net_list != b->net_list)
        return false;
    if (a->net_list && !gk_net_dim_equal(&a->netd, &b->netd))
        return false;
    if (a->has_exec) {
        const gk_exec_dim *x = &a->exec, *y = &b->exec;
        if (x->has_allow != y->has_allow || !admits_eq(&x->names, &y->names) ||
            !admits_eq(&x->files, &y->files) || !gk_entries_keys_equal(&x->dirs, &y->dirs) ||
            !gk_entries_keys_equal(&x->veto_names, &y->veto_names) ||
            !gk_entries_keys_equal(&x->veto_files, &y->veto_files) ||
            !gk_entries_keys_equal(&x->veto_dirs, &y->veto_dirs) ||
            !gk_entries_keys_equal(&x->veto_match, &y->veto_match))
            return false;
    }
    if (a->has_fs) {
        if (a->fs.restricted != b->fs.restricted || !regions_eq(&a->fs.read, &b->fs.read) ||
            !regions_eq(&a->fs.write, &b->fs.write) ||
            !regions_eq(&a->fs.readonly, &b->fs.readonly) || !regions_eq(&a->fs.deny, &b->fs.deny))
            return false;
    }
    return true;
}

/* ---- from the AST -------------------------------------------------------- */

static gk_tri tri_of(gk_verdict v)
{
    return v == GK_UNSET ? GK_TRI_NONE : v == GK_ALLOW ? GK_TRI_TRUE : GK_TRI_FALSE;
}

static char *stem_of(const char *file)
{
    const char *b = gk_basename(file);
    const char *dot = strrchr(b, '.');
    return dot && dot != b ? gk_strndup(b, (size_t)(dot - b)) : gk_strdup(b);
}

/* What a word the syntax calls a name is on ctx's target. Windows: a drive
 * path (C:/x, C:\x, C:\dir\) is a file or dir, and any other word with a
 * '\' is a relative path (an error, as one with '/' is everywhere).
 * Elsewhere a drive path with a '/' is a relative path and C:\x stays a
 * name. false after a diagnostic. */
static bool exec_word_kind(const grant_context *ctx, const gk_word *w, grant_diags *diags,
                           gk_target_kind *kind)
{
    const char *text = w->text;
    bool win = ctx->target == GRANT_TARGET_WINDOWS;
    if (win && gk_word_is_drive_path(text)) {
        char last = text[strlen(text) - 1];
        *kind = last == '/' || last == '\\' ? GK_T_DIR : GK_T_PATH;
        return true;
    }
    bool sep0 = text[0] == '/' || text[0] == '\\', sep1 = text[1] == '/' || text[1] == '\\';
    if (win && sep0 && sep1) {
        gk_diag_add(diags, GK_ERROR, w->loc, "name the share through a drive letter",
                    "UNC path '%s' is not supported", text);
        return false;
    }
    if (strchr(text, '/') || (win && strchr(text, '\\'))) {
        gk_autofree char *hint = NULL;
        if (win) {
            gk_autofree char *slashed = gk_strdup(text);
            for (char *c = slashed; *c; c++)
                if (*c == '\\')
                    *c = '/';
            hint = gk_printf("exec paths start with a drive letter, '/', '~' or a sigil: write "
                             "cwd:/%s", slashed);
        } else {
            hint = gk_printf("exec paths start with '/', '~' or a sigil: write cwd:/%s", text);
        }
        gk_diag_add(diags, GK_ERROR, w->loc, hint, "'%s' is a relative path", text);
        return false;
    }
    return true;
}

static bool add_exec_rule(gk_layer *f, const grant_context *ctx, gk_resolve_cache *cache,
                          const gk_exec_rule *r, grant_diags *diags)
{
    bool ok = true;
    gk_autofree char *origin = gk_loc_origin(r->loc);
    gk_strvec subs = {0};
    for (size_t i = 0; i < r->nsubcmds; i++)
        gk_strvec_push(&subs, r->subcmds[i].text);
    bool win = ctx->target == GRANT_TARGET_WINDOWS;
    for (size_t t = 0; t < r->ntargets; t++) {
        const gk_target *tg = &r->targets[t];
        gk_target_kind kind = tg->kind;
        if (kind == GK_T_NAME && !exec_word_kind(ctx, &tg->word, diags, &kind)) {
            ok = false;
            continue;
        }
        char *key = NULL;
        if (kind == GK_T_PATH || kind == GK_T_DIR) {
            if (gk_freeze_lexical(ctx, cache, tg->word.text, tg->word.loc, diags, &key) < 0) {
                ok = false;
                continue;
            }
        } else {
            key = gk_strdup(tg->word.text);
        }
        /* NTFS: CMD.EXE is cmd.exe. Names, files and dirs are kept folded
         * (the gate folds its queries alike); patterns stay as written. */
        if (win && kind != GK_T_MATCH) {
            char *folded = gk_win_fold(key);
            free(key);
            key = folded;
        }
        gk_exec_dim *x = &f->exec;
        if (r->verdict == GK_ALLOW) {
            x->has_allow = true;
            if (kind == GK_T_NAME)
                admits_add(&x->names, key, !r->has_subcmds, &subs, origin);
            else if (kind == GK_T_PATH)
                admits_add(&x->files, key, !r->has_subcmds, &subs, origin);
            else if (kind == GK_T_DIR)
                gk_entries_add(&x->dirs, key, origin);
            /* `allow match` is rejected by validation. */
        } else {
            gk_entries *dst = kind == GK_T_NAME   ? &x->veto_names
                              : kind == GK_T_PATH ? &x->veto_files
                              : kind == GK_T_DIR  ? &x->veto_dirs
                                                  : &x->veto_match;
            gk_entries_add(dst, key, origin);
            /* A veto binds the file, not one spelling of it: `deny /bin/bash`
             * must stop /usr/bin/bash where /bin is a link to usr/bin (and
             * /private/var/x where /var is /private/var on macOS). The
             * canonical spelling is a second entry; admission stays with
             * the spelling as written. */
            if (kind == GK_T_PATH || kind == GK_T_DIR) {
                char *canon = gk_canonicalize_cached(ctx, key, cache);
                if (canon && strcmp(canon, key) != 0)
                    gk_entries_add(dst, canon, origin);
                free(canon);
            }
        }
        free(key);
    }
    gk_strvec_free(&subs);
    return ok;
}

static bool add_fs_rule(gk_layer *f, const grant_context *ctx, gk_resolve_cache *cache,
                        const gk_fs_rule *r, grant_diags *diags)
{
    bool ok = true;
    gk_autofree char *origin = gk_loc_origin(r->loc);
    gk_regions *dst = r->kind == GK_FS_READ    ? &f->fs.read
                      : r->kind == GK_FS_WRITE ? &f->fs.write
                      : r->kind == GK_FS_READONLY ? &f->fs.readonly
                                                  : &f->fs.deny;
    if (r->kind == GK_FS_READ || r->kind == GK_FS_WRITE)
        f->fs.restricted = true;
    for (size_t i = 0; i < r->npaths; i++) {
        gk_fpath p = {0};
        if (gk_freeze_path(ctx, cache, r->paths[i].text, r->paths[i].loc, diags, &p) < 0) {
            ok = false;
            continue;
        }
        gk_regions_add(dst, &p, origin);
        gk_fpath_free(&p);
    }
    return ok;
}

gk_layer *gk_layer_from_ast(const grant_context *ctx, gk_resolve_cache *cache,
                            const gk_file_ast *ast, grant_diags *diags)
{
    gk_layer *f = gk_layer_new();
    bool ok = true;
    f->name = ast->name.text ? gk_strdup(ast->name.text) : stem_of(ast->src->name);
    f->origin = ast->grant_loc.src ? gk_loc_origin(ast->grant_loc)
                                   : gk_printf("%s:1", ast->src->name);

    f->has_exec = ast->has_exec;
    /* `exec { }` admits nothing: an empty section restricts. */
    f->exec.has_allow = ast->has_exec && ast->nexec == 0;
    for (size_t i = 0; i < ast->nexec; i++)
        ok &= add_exec_rule(f, ctx, cache, &ast->exec[i], diags);

    f->has_fs = ast->has_fs;
    f->fs.restricted = ast->has_fs && ast->nfs == 0;
    for (size_t i = 0; i < ast->nfs; i++)
        ok &= add_fs_rule(f, ctx, cache, &ast->fs[i], diags);

    f->net = tri_of(ast->net.value);
    if (ast->has_net_list) {
        f->net_list = true;
        for (size_t i = 0; i < ast->nnet_rules; i++) {
            const gk_net_rule *r = &ast->net_rules[i];
            gk_autofree char *origin = gk_loc_origin(r->loc);
            for (size_t k = 0; k < r->ndests; k++) {
                gk_dest d;
                gk_dest_error err;
                if (gk_dest_parse_pattern(r->dests[k].text, &d, &err) < 0) {
                    /* validation reported it; an AST built by hand may not */
                    gk_diag_add(diags, GK_ERROR, r->dests[k].loc, err.hint, "%s: '%s'", err.msg,
                                r->dests[k].text);
                    ok = false;
                    continue;
                }
                gk_autofree char *key = gk_dest_format(&d);
                gk_entries_add(r->verdict == GK_DENY ? &f->netd.deny : &f->netd.allow, key,
                               origin);
            }
        }
    }
    f->has_shell = ast->has_shell;
    f->chdir = tri_of(ast->shell_chdir.value);
    f->has_editor = ast->has_editor;
    f->ed_read = tri_of(ast->editor_read.value);
    f->ed_write = tri_of(ast->editor_write.value);
    f->ed_tui = tri_of(ast->editor_tui.value);
    f->audit = ast->audit;
    const gk_setting *st[5] = {&ast->net, &ast->shell_chdir, &ast->editor_read,
                               &ast->editor_write, &ast->editor_tui};
    for (int i = 0; i < 5; i++)
        if (st[i]->value != GK_UNSET && st[i]->loc.src)
            f->gate_origin[i] = gk_loc_origin(st[i]->loc);
    if (ast->has_net_list && !f->gate_origin[0] && ast->net_list_loc.src)
        f->gate_origin[0] = gk_loc_origin(ast->net_list_loc);

    if (!ok) {
        gk_layer_free(f);
        return NULL;
    }
    gk_layer_canonicalize(f);
    return f;
}

bool gk_stack_names_exec_dir(const gk_stack *s, const char *dir, bool veto)
{
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (f->has_exec && gk_entries_has(veto ? &f->exec.veto_dirs : &f->exec.dirs, dir))
            return true;
    }
    return false;
}
