/* projection.c - what the OS backends render, derived from the fold
 * (grant-language.md §6). Effective regions are the intersection of every
 * restricting layer's regions; denies and readonly entries unite. */
#include "gate/gate.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Keep each candidate region every restricting layer grants, then drop the
 * ones nested inside another kept one: the intersection of unions of
 * prefixes is the union of the deeper member of each overlapping pair, and
 * every such member is a candidate. */
static bool held_by_every_restricting_layer(const grant_policy *p, size_t except,
                                            const char *real, bool write)
{
    int held = gk_gate_fs_held(p, real, write);
    if (held >= 0)
        return held;
    const gk_stack *s = &p->stack;
    for (size_t o = 0; o < s->n; o++) {
        const gk_layer *g = s->v[o];
        if (o != except && g->has_fs && g->fs.restricted &&
            !gk_regions_contain(write ? &g->fs.write : &g->fs.read, real, false))
            return false;
    }
    return true;
}

static void effective(gk_regions *out, const grant_policy *p, bool write)
{
    const gk_stack *s = &p->stack;
    size_t restricting = 0;
    for (size_t i = 0; i < s->n; i++)
        restricting += s->v[i]->has_fs && s->v[i]->fs.restricted;
    gk_regions kept = {0};
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->has_fs || !f->fs.restricted)
            continue;
        const gk_regions *r = write ? &f->fs.write : &f->fs.read;
        for (size_t k = 0; k < r->n; k++)
            if (restricting == 1 || held_by_every_restricting_layer(p, i, r->v[k].p.real, write))
                gk_regions_add(&kept, &r->v[k].p, r->v[k].origin);
    }
    gk_regions_sort_unique(&kept);
    for (size_t c = 0; c < kept.n; c++) {
        char *parent = gk_path_parent(kept.v[c].p.real);
        bool nested = parent && gk_regions_contain(&kept, parent, false);
        free(parent);
        if (!nested)
            gk_regions_add(out, &kept.v[c].p, kept.v[c].origin);
    }
    for (size_t c = 0; c < kept.n; c++) {
        gk_fpath_free(&kept.v[c].p);
        free(kept.v[c].origin);
    }
    free(kept.v);
}

static void unite(gk_regions *out, const gk_stack *s, bool readonly)
{
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->has_fs)
            continue;
        const gk_regions *r = readonly ? &f->fs.readonly : &f->fs.deny;
        for (size_t k = 0; k < r->n; k++)
            gk_regions_add(out, &r->v[k].p, r->v[k].origin);
    }
}

/* Every proper ancestor of entry e inside writable region w, w included:
 * renaming any of them would carry the protected entry to a new name. */
static void pin(gk_strvec *pinned, const char *e, const char *w)
{
    if (strcmp(e, w) == 0 || !gk_path_within(e, w))
        return;
    char *p = gk_path_parent(e);
    while (p && gk_path_within(p, w)) {
        gk_strvec_push(pinned, p);
        char *up = gk_path_parent(p);
        bool done = strcmp(p, w) == 0;
        free(p);
        p = done ? (free(up), NULL) : up;
    }
    free(p);
}

static void pinned_dirs(gk_projection *pr)
{
    const gk_regions *lists[2] = {&pr->deny, &pr->readonly};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            for (size_t w = 0; w < pr->write.n; w++)
                pin(&pr->pinned, lists[l]->v[i].p.real, pr->write.v[w].p.real);
    if (!pr->fs_restricted) {
        /* Unrestricted fs: everything is writable, so pin up to the root. */
        for (int l = 0; l < 2; l++)
            for (size_t i = 0; i < lists[l]->n; i++)
                pin(&pr->pinned, lists[l]->v[i].p.real, "/");
    }
    gk_strvec_sort_unique(&pr->pinned);
}

/* An OS-level admit cannot see arguments: it lists what the gate admits
 * for some argv[1]. */
static bool admitted_for_some_argv1(const grant_policy *p, const char *spelling,
                                    const char *walked, const char *canonical)
{
    grant_exec_query q = {spelling, walked, canonical, NULL};
    return gk_gate_exec_some_argv1(p, &q) == GRANT_ALLOWED;
}

/* Both the walked spelling and the canonical file (taken: either may be
 * NULL): Seatbelt matches the path exec'd, Landlock the file itself. */
static void take_both(gk_strvec *v, char *walked, char *canonical)
{
    if (walked)
        gk_strvec_push_take(v, walked);
    if (canonical)
        gk_strvec_push_take(v, canonical);
}

static char *canonical_of(const grant_context *ctx, const char *path, gk_resolve_cache *cache)
{
    char *w = NULL, *c = NULL;
    gk_walk_head_cached(ctx, path, NULL, "/", &w, &c, cache);
    free(w);
    return c;
}

/* A vetoed entry named through a linked directory (/usr/local/cuda ->
 * cuda-13.0, a PATH entry) is listed in its real directory: its mask goes
 * where the entry is, since bwrap cannot make a mountpoint through a link
 * in the new root. The entry itself may be a link (rbash -> bash): it keeps
 * its own name. Takes w; host paths only. */
static char *in_real_dir(char *w, gk_resolve_cache *cache)
{
    const char *slash = strrchr(w, '/');
    if (!slash || slash == w)
        return w;
    gk_autofree char *dir = gk_strndup(w, (size_t)(slash - w));
    gk_autofree char *real = gk_resolve_host_cached(dir, cache);
    if (!real || strcmp(real, dir) == 0)
        return w;
    char *moved = gk_path_join(real, slash + 1);
    free(w);
    return moved;
}

/* ---- the veto scan (host only) ----------------------------------------------
 *
 * The gate vetoes a program by any of its names, wherever it lies; bwrap
 * can only mask files it is told about, and the ELF loader runs any file
 * it can map, so every vetoed program the command could reach should be
 * on the list. Listing every readable file is too slow for a launch (all
 * of /usr: 157,000 entries, 0.3-0.6 s here, against 0.07 s for the whole
 * launch), so the scan covers the layouts programs are installed in
 * (grant(5) VETO MASKS says exactly which):
 *   - every absolute PATH directory;
 *   - in each readable root R (implicit and granted read regions, "/" when
 *     fs is unrestricted): R itself, R/A and R/A/B, and below a directory
 *     R/L whose name starts with "lib", R/L/A/B and R/L/A/B/C, when that
 *     directory is named bin, sbin or libexec.
 * Listed there: every entry the gate vetoes, by name, file, dir or
 * pattern, or as the same file (device and inode) as a vetoed program: a
 * hard link under another name (perl5.36.0 is perl). */

/* Levels below a lib directory looked at: R/libX/A/B/C/bin is not. */
#define SCAN_LIB_DEPTH 3

/* One listed directory: each entry once, with its canonical file. */
typedef struct listing {
    char *real;
    gk_strvec names, canon; /* canon[i] "" when names[i] resolves nowhere */
    struct file_id {
        uint64_t dev, ino;
    } *ids;                 /* canon[i]'s file, 0 0 when unknown */
    size_t nid, capid;
} listing;

typedef struct veto_scan {
    listing *v;
    size_t n, cap;
} veto_scan;

static void listing_read(listing *l, DIR *dir, const char *d, gk_resolve_cache *cache)
{
    /* A regular entry's identity is the directory's device and its d_ino:
     * the hard-link check costs no stat per entry. */
    struct stat ds;
    uint64_t dir_dev = fstat(dirfd(dir), &ds) == 0 ? (uint64_t)ds.st_dev : 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        /* Only a link can have another name behind it (rbash -> bash). */
        char *c;
        uint64_t dev = 0, ino = 0;
        if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
            gk_autofree char *w = gk_path_join(d, e->d_name);
            struct stat st;
            c = gk_resolve_host_cached(w, cache);
            if (c && stat(c, &st) != 0) {
                free(c);
                c = NULL;
            } else if (c) {
                dev = (uint64_t)st.st_dev;
                ino = (uint64_t)st.st_ino;
            }
        } else {
            c = gk_path_join(l->real, e->d_name);
            if (e->d_type == DT_REG && dir_dev) {
                dev = dir_dev;
                ino = (uint64_t)e->d_ino;
            }
        }
        gk_strvec_push(&l->names, e->d_name);
        gk_strvec_push_take(&l->canon, c ? c : gk_strdup(""));
        struct file_id id = {dev, ino};
        GK_VEC_PUSH(l->ids, l->nid, l->capid, id);
    }
}

/* The listing of directory d (each real directory once: /bin and /usr/bin
 * on a merged /usr are listed once, their entries' files are the same),
 * or NULL if it cannot be read. */
static listing *scan_list(veto_scan *s, const char *d, gk_resolve_cache *cache)
{
    char *d_real = gk_resolve_host_cached(d, cache);
    if (!d_real)
        return NULL;
    for (size_t k = 0; k < s->n; k++)
        if (strcmp(s->v[k].real, d_real) == 0) {
            free(d_real);
            return &s->v[k];
        }
    DIR *dir = opendir(d);
    if (!dir) {
        free(d_real);
        return NULL;
    }
    listing fresh = {.real = d_real};
    listing_read(&fresh, dir, d, cache);
    closedir(dir);
    GK_VEC_PUSH(s->v, s->n, s->cap, fresh);
    return &s->v[s->n - 1];
}

static void scan_free(veto_scan *s)
{
    for (size_t k = 0; k < s->n; k++) {
        free(s->v[k].real);
        gk_strvec_free(&s->v[k].names);
        gk_strvec_free(&s->v[k].canon);
        free(s->v[k].ids);
    }
    free(s->v);
}

/* List every entry of d the gate vetoes. On PATH an entry is spelled by
 * its name; elsewhere only a path (or ld.so) can name it. */
static void veto_dir_entries(gk_projection *pr, const grant_policy *p, veto_scan *s,
                             const char *d, bool on_path, gk_resolve_cache *cache)
{
    listing *l = scan_list(s, d, cache);
    if (!l)
        return;
    for (size_t i = 0; i < l->names.n; i++) {
        const char *name = l->names.v[i], *c = l->canon.v[i][0] ? l->canon.v[i] : NULL;
        if (!on_path) {
            /* Off PATH a name is only a path: the file itself is asked
             * about (a link leads to a file the gate may admit, and bwrap
             * masks files, not links). */
            grant_exec_query q = {c, c, c, NULL};
            if (c && gk_gate_exec_vetoed_id(p, &q, l->ids[i].dev, l->ids[i].ino))
                gk_strvec_push(&pr->exec_veto, c);
            continue;
        }
        char *w = gk_path_join(d, name);
        grant_exec_query q = {name, w, c, NULL};
        if (gk_gate_exec_vetoed_id(p, &q, l->ids[i].dev, l->ids[i].ino))
            take_both(&pr->exec_veto, in_real_dir(w, cache), c ? gk_strdup(c) : NULL);
        else
            free(w);
    }
}

static bool binish(const char *name)
{
    return strcmp(name, "bin") == 0 || strcmp(name, "sbin") == 0 || strcmp(name, "libexec") == 0;
}

/* The bin-ish directories of the layouts above, below dir (depth levels
 * further; below a lib directory, SCAN_LIB_DEPTH). */
static void layout_dirs(const char *dir, int depth, bool in_lib, gk_strvec *out)
{
    if (binish(gk_basename(dir))) {
        gk_strvec_push(out, dir);
        return;
    }
    if (depth == 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    gk_strvec sub = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN))
            gk_strvec_push_take(&sub, gk_path_join(dir, e->d_name));
    closedir(d);
    for (size_t i = 0; i < sub.n; i++) {
        const char *b = gk_basename(sub.v[i]);
        /* The kernel's own trees hold no programs, and walking /proc would
         * list every process. */
        if (strcmp(dir, "/") == 0 &&
            (strcmp(b, "proc") == 0 || strcmp(b, "sys") == 0 || strcmp(b, "dev") == 0))
            continue;
        struct stat st;
        if (lstat(sub.v[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue; /* a link is scanned where it leads, if that is a root */
        bool lib = !in_lib && gk_has_prefix(b, "lib") && !binish(b);
        layout_dirs(sub.v[i], lib ? SCAN_LIB_DEPTH : depth - 1, in_lib || lib, out);
    }
    gk_strvec_free(&sub);
}

/* The readable roots the layouts are looked for in, real spellings. */
static void scan_roots(const gk_projection *pr, const grant_policy *p, gk_strvec *out,
                       gk_resolve_cache *cache)
{
    gk_strvec raw = {0};
    if (!pr->fs_restricted) {
        gk_strvec_push(&raw, "/");
    } else {
        gk_implicit im;
        gk_implicit_for(p->ctx, &im);
        gk_strvec_copy(&raw, &im.read);
        for (size_t i = 0; i < pr->read.n; i++)
            gk_strvec_push(&raw, pr->read.v[i].p.real);
        gk_strvec_free(&im.read);
        gk_strvec_free(&im.write);
        gk_strvec_free(&im.devices);
    }
    for (size_t i = 0; i < raw.n; i++) {
        char *r = gk_resolve_host_cached(raw.v[i], cache);
        struct stat st;
        if (r && stat(r, &st) == 0 && S_ISDIR(st.st_mode))
            gk_strvec_push_take(out, r);
        else
            free(r);
    }
    gk_strvec_free(&raw);
    gk_strvec_sort_unique(out);
    /* A root inside another root is walked with it. */
    size_t keep = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (keep && gk_path_within(out->v[i], out->v[keep - 1]))
            free(out->v[i]);
        else
            out->v[keep++] = out->v[i];
    }
    out->n = keep;
}

static void veto_scan_host(gk_projection *pr, const grant_policy *p, gk_resolve_cache *cache)
{
    const grant_context *ctx = p->ctx;
    bool any = false;
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_exec_dim *x = &p->stack.v[i]->exec;
        any |= p->stack.v[i]->has_exec &&
               (x->veto_match.n > 0 || x->veto_names.n > 0 || x->veto_files.n > 0);
    }
    if (!any || ctx->target != GRANT_TARGET_HOST)
        return;
    veto_scan s = {0};
    if (ctx->path) {
        char *list = gk_strdup(ctx->path), *save = NULL;
        for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
            if (d[0] == '/')
                veto_dir_entries(pr, p, &s, d, true, cache);
        free(list);
    }
    gk_strvec roots = {0}, dirs = {0};
    scan_roots(pr, p, &roots, cache);
    for (size_t i = 0; i < roots.n; i++)
        layout_dirs(roots.v[i], 2, false, &dirs);
    for (size_t i = 0; i < dirs.n; i++)
        veto_dir_entries(pr, p, &s, dirs.v[i], false, cache);
    gk_strvec_free(&roots);
    gk_strvec_free(&dirs);
    scan_free(&s);
}

/* Keys borrowed from the layers, sorted and unique. */
typedef struct keylist {
    const char **v;
    size_t n, cap;
} keylist;

static int key_cmp(const void *a, const void *b)
{
    return gk_strcmp_bytes(*(const char *const *)a, *(const char *const *)b);
}

static void keys_sort_unique(keylist *k)
{
    if (k->n > 1)
        qsort(k->v, k->n, sizeof(*k->v), key_cmp);
    size_t w = 0;
    for (size_t i = 0; i < k->n; i++)
        if (!w || strcmp(k->v[w - 1], k->v[i]) != 0)
            k->v[w++] = k->v[i];
    k->n = w;
}

/* The exec admit and veto lists, from gate answers (grant-language.md §6):
 * every nameable command resolved via PATH, every file, every allow dir;
 * the canonical file of every vetoed name, file and pattern match found on
 * PATH, and the veto dirs. */
static void exec_lists(gk_projection *pr, const grant_policy *p)
{
    const gk_stack *s = &p->stack;
    const grant_context *ctx = p->ctx;
    keylist names = {0}, files = {0}, dirs = {0}, veto_names = {0};
    /* One moment's view of the host for every name resolved here. */
    gk_resolve_cache cache = {0};
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->has_exec)
            continue;
        pr->exec_restricted |= f->exec.has_allow;
        for (size_t k = 0; k < f->exec.names.n; k++)
            GK_VEC_PUSH(names.v, names.n, names.cap, f->exec.names.v[k].key);
        for (size_t k = 0; k < f->exec.files.n; k++)
            GK_VEC_PUSH(files.v, files.n, files.cap, f->exec.files.v[k].key);
        for (size_t k = 0; k < f->exec.dirs.n; k++)
            GK_VEC_PUSH(dirs.v, dirs.n, dirs.cap, f->exec.dirs.v[k].key);
        for (size_t k = 0; k < f->exec.veto_names.n; k++)
            GK_VEC_PUSH(veto_names.v, veto_names.n, veto_names.cap,
                        f->exec.veto_names.v[k].key);
        for (size_t k = 0; k < f->exec.veto_files.n; k++) {
            const char *vf = f->exec.veto_files.v[k].key;
            gk_strvec_push_take(&pr->exec_veto, ctx->target == GRANT_TARGET_HOST
                                                    ? in_real_dir(gk_strdup(vf), &cache)
                                                    : gk_strdup(vf));
            take_both(&pr->exec_veto, NULL, canonical_of(ctx, vf, &cache));
        }
        for (size_t k = 0; k < f->exec.veto_dirs.n; k++)
            gk_strvec_push(&pr->exec_veto, f->exec.veto_dirs.v[k].key);
    }
    keys_sort_unique(&names);
    keys_sort_unique(&files);
    keys_sort_unique(&dirs);
    keys_sort_unique(&veto_names);

    for (size_t i = 0; i < names.n; i++) {
        char *w, *c;
        gk_walk_head_cached(ctx, names.v[i], NULL, NULL, &w, &c, &cache);
        if (w && admitted_for_some_argv1(p, names.v[i], w, c)) {
            take_both(&pr->exec_admit, w, c);
        } else {
            free(w);
            free(c);
        }
    }
    for (size_t i = 0; i < files.n; i++) {
        char *c = canonical_of(ctx, files.v[i], &cache);
        if (admitted_for_some_argv1(p, files.v[i], files.v[i], c)) {
            gk_strvec_push(&pr->exec_admit, files.v[i]);
            take_both(&pr->exec_admit, NULL, c);
        } else {
            free(c);
        }
    }
    for (size_t i = 0; i < dirs.n; i++) {
        /* A dir is admitted when a fresh name walked inside it is. */
        char *probe = gk_path_join(dirs.v[i], "gk-probe");
        if (admitted_for_some_argv1(p, probe, probe, probe))
            gk_strvec_push(&pr->exec_admit, dirs.v[i]);
        free(probe);
    }
    for (size_t i = 0; i < veto_names.n; i++) {
        char *w, *c;
        gk_walk_head_cached(ctx, veto_names.v[i], NULL, NULL, &w, &c, &cache);
        if (w && gk_has_prefix(w, "/")) {
            take_both(&pr->exec_veto, in_real_dir(w, &cache), c);
        } else {
            free(w);
            free(c);
        }
    }
    veto_scan_host(pr, p, &cache);
    gk_strvec_sort_unique(&pr->exec_admit);
    gk_strvec_sort_unique(&pr->exec_veto);
    if (pr->exec_restricted && pr->fs_restricted) {
        for (size_t i = 0; i < pr->exec_admit.n; i++)
            for (size_t w = 0; w < pr->write.n; w++) {
                /* The overlap of an admitted prefix and a writable region:
                 * a file written there can then be executed. */
                const char *a = pr->exec_admit.v[i], *wr = pr->write.v[w].p.real;
                if (gk_path_within(a, wr))
                    gk_strvec_push(&pr->deputy, a);
                else if (gk_path_within(wr, a))
                    gk_strvec_push(&pr->deputy, wr);
            }
        gk_strvec_sort_unique(&pr->deputy);
    }
    free(names.v);
    free(files.v);
    free(dirs.v);
    free(veto_names.v);
    gk_resolve_cache_free(&cache);
}

static void regions_free(gk_regions *r);

/* The first existing proper ancestor of p that is not a directory (a git
 * worktree's or submodule's .git file), or NULL. Host only. */
static char *file_ancestor(const char *p)
{
    char *a = gk_path_parent(p);
    char *found = NULL;
    while (a && strcmp(a, "/") != 0 && !found) {
        struct stat st;
        if (lstat(a, &st) == 0 && !S_ISDIR(st.st_mode))
            found = gk_strdup(a);
        char *up = gk_path_parent(a);
        free(a);
        a = up;
    }
    free(a);
    return found;
}

/* A deny or readonly entry below an existing file (cwd:/.git/config when
 * .git is a worktree's "gitdir:" file) cannot exist, and nothing can be
 * mounted there; it can only come to exist if the file is replaced by a
 * directory. So the file itself becomes readonly: as long as it stays,
 * the entry stays impossible. Stricter than the gate, never looser. */
static void protect_file_ancestors(gk_projection *pr)
{
    gk_regions *lists[2] = {&pr->deny, &pr->readonly};
    gk_regions moved = {0};
    for (int l = 0; l < 2; l++) {
        gk_regions *r = lists[l];
        size_t keep = 0;
        for (size_t i = 0; i < r->n; i++) {
            char *a = file_ancestor(r->v[i].p.real);
            if (!a) {
                r->v[keep++] = r->v[i];
                continue;
            }
            gk_fpath fp = {a, a};
            gk_regions_add(&moved, &fp, r->v[i].origin);
            free(a);
            gk_fpath_free(&r->v[i].p);
            free(r->v[i].origin);
        }
        r->n = keep;
    }
    for (size_t i = 0; i < moved.n; i++)
        gk_regions_add(&pr->readonly, &moved.v[i].p, moved.v[i].origin);
    regions_free(&moved);
}

gk_projection *gk_projection_build(const grant_policy *p)
{
    gk_projection *pr = gk_calloc(1, sizeof(*pr));
    const gk_stack *s = &p->stack;
    for (size_t i = 0; i < s->n; i++)
        pr->fs_restricted |= s->v[i]->has_fs && s->v[i]->fs.restricted;
    if (pr->fs_restricted) {
        effective(&pr->read, p, false);
        effective(&pr->write, p, true);
    }
    unite(&pr->readonly, s, true);
    unite(&pr->deny, s, false);
    if (!gk_target_is_offline(p->ctx))
        protect_file_ancestors(pr);
    gk_regions_sort_unique(&pr->read);
    gk_regions_sort_unique(&pr->write);
    gk_regions_sort_unique(&pr->readonly);
    gk_regions_sort_unique(&pr->deny);
    pinned_dirs(pr);
    pr->net = gk_decide_gate(s, "net") == GK_TRI_TRUE;
    pr->net_list = gk_stack_net(s, &pr->net_allow, &pr->net_deny) == GK_TRI_NONE;
    exec_lists(pr, p);
    /* Every source file read while compiling is readonly for the command
     * (cli.md): a confined command can read but never rewrite its policy. */
    gk_strvec_copy(&pr->protect, &p->protect);
    pr->has_implicit = p->ctx->implicit;
    gk_implicit_for(p->ctx, &pr->implicit);
    return pr;
}

static void regions_free(gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        gk_fpath_free(&r->v[i].p);
        free(r->v[i].origin);
    }
    free(r->v);
}

void gk_projection_free(gk_projection *pr)
{
    if (!pr)
        return;
    gk_strvec_free(&pr->net_allow);
    gk_strvec_free(&pr->net_deny);
    regions_free(&pr->read);
    regions_free(&pr->write);
    regions_free(&pr->readonly);
    regions_free(&pr->deny);
    gk_strvec_free(&pr->pinned);
    gk_strvec_free(&pr->exec_admit);
    gk_strvec_free(&pr->exec_veto);
    gk_strvec_free(&pr->deputy);
    gk_strvec_free(&pr->protect);
    gk_strvec_free(&pr->implicit.read);
    gk_strvec_free(&pr->implicit.write);
    gk_strvec_free(&pr->implicit.devices);
    free(pr);
}
