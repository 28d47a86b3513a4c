/* projection.c - what the OS backends render, derived from the fold
 * (grant-language.md §6). Effective regions are the intersection of every
 * restricting layer's regions; denies and readonly entries unite. */
#include "gate/gate.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
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

/* Is dir (canonical) writable for the command? */
static bool writable_dir(const gk_projection *pr, const char *dir)
{
    if (!pr->fs_restricted)
        return true;
    for (size_t w = 0; w < pr->write.n; w++)
        if (gk_path_within(dir, pr->write.v[w].p.real))
            return true;
    return false;
}

/* The symlinks the kernel meets walking path (absolute, as spelled), and
 * those of their targets in turn: a link in a writable directory carries
 * a protected entry's name, and replacing it (unlink, rename, a file of
 * the command's own in its place) would move the name off the protected
 * target. Each such link is recorded by its canonical directory and its
 * own name. */
static void links_on(gk_projection *pr, const char *path, int depth)
{
    size_t len = strlen(path);
    for (size_t k = 1; k <= len && depth < 40; k++) {
        if ((k < len && path[k] != '/') || path[k - 1] == '/')
            continue;
        gk_autofree char *prefix = gk_strndup(path, k);
        struct stat st;
        if (lstat(prefix, &st) < 0)
            return; /* absent from here on: no link further down */
        if (!S_ISLNK(st.st_mode))
            continue;
        char target[PATH_MAX];
        ssize_t n = readlink(prefix, target, sizeof(target) - 1);
        char *slash = strrchr(prefix, '/');
        gk_autofree char *parent = slash == prefix ? gk_strdup("/") : gk_strndup(prefix, (size_t)(slash - prefix));
        gk_autofree char *dir = realpath(parent, NULL);
        if (n <= 0 || !dir)
            return;
        target[n] = '\0';
        gk_autofree char *link = gk_path_join(dir, slash + 1);
        if (writable_dir(pr, dir))
            gk_strvec_push(&pr->links, link);
        /* On through the target, resolved where the kernel resolves it. */
        gk_autofree char *next = target[0] == '/' ? gk_printf("%s%s", target, path + k)
                                                  : gk_printf("%s/%s%s", dir, target, path + k);
        links_on(pr, next, depth + 1);
        return;
    }
}

/* The links of every deny and readonly entry spelled through one, and of
 * a policy source opened through one (the next run opens the same name),
 * their directories pinned like an entry's (pinned_dirs). */
static void protected_links(gk_projection *pr, const grant_policy *p)
{
    const gk_regions *lists[2] = {&pr->deny, &pr->readonly};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            if (strcmp(lists[l]->v[i].p.path, lists[l]->v[i].p.real) != 0)
                links_on(pr, lists[l]->v[i].p.path, 0);
    char cwd[PATH_MAX];
    for (size_t i = 0; i < p->nsources; i++) {
        const char *f = p->sources[i].file;
        gk_autofree char *abs = f[0] == '/'              ? gk_strdup(f)
                                : getcwd(cwd, sizeof(cwd)) ? gk_path_join(cwd, f)
                                                           : NULL;
        gk_autofree char *real = abs ? realpath(abs, NULL) : NULL;
        /* only a name that leads to a protected source (the frame child
         * reads a policy compiled elsewhere, its names from another cwd) */
        if (real && strcmp(real, abs) != 0 && gk_strvec_contains(&pr->protect, real))
            links_on(pr, abs, 0);
    }
    gk_strvec_sort_unique(&pr->links);
    for (size_t i = 0; i < pr->links.n; i++) {
        for (size_t w = 0; w < pr->write.n; w++)
            pin(&pr->pinned, pr->links.v[i], pr->write.v[w].p.real);
        if (!pr->fs_restricted)
            pin(&pr->pinned, pr->links.v[i], "/");
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
 * can only mask files it is told about. Listing every readable file is
 * too slow for a launch (all of /usr: 157,000 entries, 0.3 s warm here,
 * against about 10 ms for the whole envelope), so the scan covers where a
 * vetoed program could be executed (grant(5) VETO MASKS says exactly
 * which):
 *   - every absolute PATH directory, read once per projection and shared
 *     with the PATH walk of the policy's names;
 *   - with an exec allow-list, every admitted dir, whole: Landlock lets the
 *     command execute any file there, and refuses every other file that is
 *     not admitted, so these and PATH are all execve(2) could reach;
 *   - without one (vetoes only: nothing else refuses execution), the
 *     layouts programs are installed in: in each readable root R (implicit
 *     and granted read regions, "/" when fs is unrestricted), R itself,
 *     R/A and R/A/B, and below a directory R/L whose name starts with
 *     "lib", R/L/A/B and R/L/A/B/C, when that directory is named bin, sbin
 *     or libexec.
 * The ELF interpreter's route (ld.so PROGRAM: read and mmap, which
 * Landlock's EXECUTE does not see) reaches any readable program that is
 * not admitted, vetoed or not; it is documented as one limit (grantrun(1)
 * GUARANTEES), not chased file by file. Listed: every entry the gate
 * vetoes, by name, file, dir or pattern, or as the same file (device and
 * inode) as a vetoed program: a hard link under another name (perl5.36.0
 * is perl). A vetoed file (exec_lists) is listed wherever it lies. */

/* Levels below a lib directory looked at: R/libX/A/B/C/bin is not. */
#define SCAN_LIB_DEPTH 3

/* One listed directory, read once per projection (a PATH directory is
 * shared by the name walk and the veto scan): every entry with its type
 * and inode, canonical files worked out only for the entries that need
 * them. */
typedef struct lentry {
    char *name;
    unsigned char type; /* d_type */
    bool resolved;      /* canon, dev, cino worked out */
    bool resolving;     /* being worked out (a loop of links comes back) */
    uint64_t ino;
    char *canon;        /* NULL: resolves nowhere */
    uint64_t dev, cino; /* canon's file, 0 0 when unknown */
} lentry;

typedef struct listing {
    char *real;         /* the directory's canonical path */
    int fd;             /* the directory, open: its links are read relative to it */
    uint64_t dev;       /* its device: a regular entry's id is (dev, ino) */
    lentry *v;
    size_t n, cap;
    gk_pathmap byname;  /* name -> index (keys borrowed from v), once indexed */
    bool indexed;
    char *names;        /* the block every entry's name lies in */
    bool shared;        /* share below worked out */
    bool path_visited;  /* scanned as a PATH directory, with path_bits above */
    uint64_t path_bits;
    uint64_t share_bits;
    bool share_files;
} listing;

typedef struct veto_scan {
    listing **v;        /* each apart: a listing stays put while others are added */
    size_t n, cap;
    gk_pathmap byreal;  /* real directory -> index (keys borrowed from v) */
    gk_pathmap wanted;  /* unlisted directories links lead into, by id: hits[id] */
    gk_strvec wanted_keys;
    gk_pathmap dirs_seen; /* link targets' directory parts, by id: dirs_real[id] */
    gk_strvec dirs_keys, dirs_real; /* "" when it resolves nowhere */
    size_t *hits;
    long long *dir_bytes; /* by id: the directory's size once asked, -1 before */
    size_t caphits;
} veto_scan;

static void listing_read(listing *l, DIR *dir)
{
    struct stat ds;
    l->dev = fstat(dirfd(dir), &ds) == 0 ? (uint64_t)ds.st_dev : 0;
    /* Kept past closedir: a readlink through it walks no path. */
    l->fd = fcntl(dirfd(dir), F_DUPFD_CLOEXEC, 0);
    /* Every name in one block (a large directory costs one allocation, not
     * one per entry); the entries point into it once it is complete. */
    gk_buf names = {0};
    size_t *at = NULL, nat = 0, capat = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        GK_VEC_PUSH(at, nat, capat, names.len);
        gk_buf_add(&names, e->d_name, strlen(e->d_name) + 1);
        lentry le = {NULL, e->d_type, false, false, (uint64_t)e->d_ino, NULL, 0, 0};
        GK_VEC_PUSH(l->v, l->n, l->cap, le);
    }
    l->names = gk_buf_steal(&names, NULL);
    for (size_t i = 0; i < l->n; i++)
        l->v[i].name = l->names + at[i];
    free(at);
}

/* The name map of a listing, made when first asked for (most directories
 * of an admitted tree are never looked into by name). */
static const gk_pathmap *listing_names(listing *l)
{
    if (!l->indexed) {
        gk_pathmap_reserve(&l->byname, l->n);
        for (size_t i = 0; i < l->n; i++)
            gk_pathmap_intern(&l->byname, l->v[i].name, strlen(l->v[i].name));
        l->indexed = true;
    }
    return &l->byname;
}

static long listing_at(const veto_scan *s, const char *dir);

/* The index of directory d's listing (each real directory once: /bin and
 * /usr/bin on a merged /usr are listed once, their entries' files are the
 * same), or -1 if it cannot be read. A PATH directory's listing also
 * answers the name walk's probes of d (gk_resolve_cache_listed). */
static long scan_list(veto_scan *s, const char *d, gk_resolve_cache *cache, bool on_path)
{
    char *d_real = gk_resolve_host_cached(d, cache);
    if (!d_real)
        return -1;
    long found = listing_at(s, d_real);
    if (found < 0) {
        DIR *dir = opendir(d);
        if (!dir) {
            free(d_real);
            return -1;
        }
        listing *fresh = gk_calloc(1, sizeof(*fresh));
        fresh->real = d_real;
        listing_read(fresh, dir);
        closedir(dir);
        GK_VEC_PUSH(s->v, s->n, s->cap, fresh);
        found = (long)s->n - 1;
        gk_pathmap_intern(&s->byreal, fresh->real, strlen(fresh->real));
    } else {
        free(d_real);
    }
    if (on_path) {
        listing *l = s->v[found];
        /* The scan outlives every use of the cache (exec_lists). */
        gk_resolve_cache_listed(cache, d, listing_names(l));
    }
    return found;
}

static void scan_free(veto_scan *s)
{
    for (size_t k = 0; k < s->n; k++) {
        listing *l = s->v[k];
        free(l->real);
        if (l->fd >= 0)
            close(l->fd);
        for (size_t i = 0; i < l->n; i++)
            free(l->v[i].canon);
        free(l->names);
        free(l->v);
        gk_pathmap_clear(&l->byname);
        free(l);
    }
    free(s->v);
    gk_pathmap_clear(&s->wanted);
    gk_strvec_free(&s->wanted_keys);
    gk_pathmap_clear(&s->dirs_seen);
    gk_strvec_free(&s->dirs_keys);
    gk_strvec_free(&s->dirs_real);
    free(s->hits);
    free(s->dir_bytes);
    gk_pathmap_clear(&s->byreal);
}

static const char *entry_canonical(veto_scan *s, listing *l, lentry *e,
                                   gk_resolve_cache *cache, uint64_t *dev, uint64_t *ino);

/* The listing of real directory dir, or -1. */
static long listing_at(const veto_scan *s, const char *dir)
{
    size_t n = strlen(dir);
    return gk_pathmap_find(&s->byreal, dir, n, gk_fnv(dir, n));
}

/* Links into a directory not listed yet: once this many have led there,
 * and the directory is small next to their number (a byte of directory
 * per LIST_BYTES_PER_LINK links' worth), it is listed: one reading instead
 * of a readlink and a stat per link. A large one (/usr/lib/<triplet>) is
 * not worth reading for a few links. */
#define LIST_AFTER_LINKS 8
#define LIST_BYTES_PER_LINK 512

static long list_wanted(veto_scan *s, const char *rdir, gk_resolve_cache *cache)
{
    size_t n = strlen(rdir);
    long id = gk_pathmap_find(&s->wanted, rdir, n, gk_fnv(rdir, n));
    if (id < 0) {
        char *key = gk_strdup(rdir);
        gk_strvec_push_take(&s->wanted_keys, key);
        id = (long)gk_pathmap_intern(&s->wanted, key, n);
        if ((size_t)id >= s->caphits) {
            s->caphits = s->caphits ? s->caphits * 2 : 16;
            s->hits = gk_realloc(s->hits, s->caphits * sizeof(*s->hits));
            s->dir_bytes = gk_realloc(s->dir_bytes, s->caphits * sizeof(*s->dir_bytes));
        }
        s->hits[id] = 0;
        s->dir_bytes[id] = -1;
    }
    if (++s->hits[id] < LIST_AFTER_LINKS)
        return -1;
    if (s->dir_bytes[id] < 0) {
        struct stat st;
        s->dir_bytes[id] = stat(rdir, &st) == 0 ? (long long)st.st_size : LLONG_MAX;
    }
    if (s->dir_bytes[id] > (long long)(s->hits[id] * LIST_BYTES_PER_LINK))
        return -1;
    return scan_list(s, rdir, cache, false);
}

/* dir resolved, remembered: links of one directory mostly lead into the
 * same few (../lib/llvm-14/bin, /etc/alternatives). The scan's. */
static const char *resolved_dir(veto_scan *s, const char *dir, gk_resolve_cache *cache)
{
    size_t n = strlen(dir);
    long id = gk_pathmap_find(&s->dirs_seen, dir, n, gk_fnv(dir, n));
    if (id >= 0)
        return s->dirs_real.v[id][0] ? s->dirs_real.v[id] : NULL;
    char *key = gk_strdup(dir), *real = gk_resolve_host_cached(dir, cache);
    gk_strvec_push_take(&s->dirs_keys, key);
    gk_pathmap_intern(&s->dirs_seen, key, n);
    gk_strvec_push_take(&s->dirs_real, real ? real : gk_strdup(""));
    return real;
}

/* Where link (or unknown) entry e of l leads, as gk_resolve_host would
 * say, and the file's id. A link into a listed directory (python3 ->
 * python3.11, clang -> ../lib/llvm-14/bin/clang) costs one readlink: its
 * directory part resolves in the cache and its last part is read from the
 * listing (a link there is followed the same way); anything else is
 * resolved and stat'ed. */
static char *resolve_link(veto_scan *s, listing *l, lentry *e, gk_resolve_cache *cache,
                          uint64_t *dev, uint64_t *ino)
{
    /* The entry's own path only when something needs it spelled out. */
    gk_autofree char *in_real = l->fd >= 0 ? NULL : gk_path_join(l->real, e->name);
    char target[4096];
    ssize_t tn = e->type != DT_LNK ? -1
                 : l->fd >= 0   ? readlinkat(l->fd, e->name, target, sizeof(target) - 1)
                                : readlink(in_real, target, sizeof(target) - 1);
    if (tn > 0) {
        target[tn] = '\0';
        gk_autofree char *full =
            target[0] == '/' ? gk_strdup(target) : gk_path_join(l->real, target);
        char *slash = strrchr(full, '/');
        const char *leaf = slash + 1;
        if (*leaf && strcmp(leaf, ".") != 0 && strcmp(leaf, "..") != 0) {
            gk_autofree char *dir =
                slash == full ? gk_strdup("/") : gk_strndup(full, (size_t)(slash - full));
            const char *rdir = resolved_dir(s, dir, cache);
            long at = rdir ? listing_at(s, rdir) : -1;
            if (at < 0 && rdir)
                at = list_wanted(s, rdir, cache);
            if (at >= 0) {
                listing *t = s->v[at];
                size_t ln = strlen(leaf);
                long k = gk_pathmap_find(listing_names(t), leaf, ln, gk_fnv(leaf, ln));
                if (k < 0)
                    return NULL; /* not in the listing: leads nowhere */
                if (!t->v[k].resolving) {
                    const char *c = entry_canonical(s, t, &t->v[k], cache, dev, ino);
                    return c ? gk_strdup(c) : NULL;
                }
            }
        }
    }
    if (!in_real)
        in_real = gk_path_join(l->real, e->name);
    if (tn > 0)
        gk_resolve_cache_note_link(cache, in_real, target); /* not read again */
    char *c = gk_resolve_host_cached(in_real, cache);
    struct stat st;
    if (c && stat(c, &st) != 0) {
        free(c);
        return NULL;
    }
    if (c) {
        *dev = (uint64_t)st.st_dev;
        *ino = (uint64_t)st.st_ino;
    }
    return c;
}

/* The canonical file of entry e of l, or NULL when it resolves nowhere;
 * its file's id in *dev, *ino (0 0: unknown). Worked out once per entry
 * (a directory is visited under each of its PATH spellings and again as
 * a layout directory, and links lead through others); the listing's. */
static const char *entry_canonical(veto_scan *s, listing *l, lentry *e,
                                   gk_resolve_cache *cache, uint64_t *dev, uint64_t *ino)
{
    if (!e->resolved) {
        e->dev = e->cino = 0;
        if (e->type != DT_LNK && e->type != DT_UNKNOWN) {
            /* Only a link can have another name behind it (rbash -> bash). */
            if (e->type == DT_REG && l->dev) {
                e->dev = l->dev;
                e->cino = e->ino;
            }
            e->canon = gk_path_join(l->real, e->name);
        } else {
            e->resolving = true;
            e->canon = resolve_link(s, l, e, cache, &e->dev, &e->cino);
            e->resolving = false;
        }
        e->resolved = true;
    }
    *dev = e->dev;
    *ino = e->cino;
    return e->canon;
}

/* Is c directly inside dir? */
static bool gk_path_parent_is(const char *c, const char *dir)
{
    size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    return strncmp(c, dir, n) == 0 && c[n] == '/' && c[n + 1] && !strchr(c + n + 1, '/');
}

/* What the scan asks the gate about each entry, with what entries of one
 * directory share worked out once. */
typedef struct scan_ask {
    const grant_policy *p;
    const gk_exec_index *ix; /* NULL: the index cannot answer, the gate folds */
    gk_scan_match m;
} scan_ask;

/* What every entry directly inside a directory shares in the veto
 * question: the veto dirs above them, and whether any veto file lies
 * there at all (if not, no entry's path needs looking up). */
typedef struct dir_share {
    uint64_t bits;
    bool files;
} dir_share;

static dir_share share_of(const scan_ask *a, const char *dir)
{
    dir_share sh = {gk_exec_index_dir_bits(a->ix, dir), gk_exec_index_dir_has_files(a->ix, dir)};
    return sh;
}

/* A listed directory's share, worked out once. */
static dir_share listing_share(const scan_ask *a, listing *l)
{
    if (!l->shared) {
        dir_share sh = share_of(a, l->real);
        l->share_bits = sh.bits;
        l->share_files = sh.files;
        l->shared = true;
    }
    dir_share sh = {l->share_bits, l->share_files};
    return sh;
}

static dir_share parent_share(const scan_ask *a, veto_scan *s, const char *path)
{
    gk_autofree char *parent = gk_path_parent(path);
    dir_share none = {0, false};
    if (!parent)
        return none;
    long at = listing_at(s, parent);
    return at >= 0 ? listing_share(a, s->v[at]) : share_of(a, parent);
}

/* The veto bits of a path identity directly in a directory of share sh,
 * its basename's bits already known (gk_exec_index_answer's per-identity
 * reading, taken apart). */
static uint64_t path_bits(const scan_ask *a, const char *path, uint64_t base_bits, dir_share sh)
{
    return base_bits | sh.bits | (sh.files ? gk_exec_index_file_bits(a->ix, path) : 0);
}

/* The same-file vetoes (a hard link of a vetoed program), by the id the
 * listing gave, else by the file. */
static bool same_vetoed(const scan_ask *a, const char *canonical, uint64_t dev, uint64_t ino)
{
    if (!gk_exec_index_has_same(a->ix))
        return false;
    if (dev || ino)
        return gk_exec_index_same_id(a->ix, dev, ino, NULL) != NULL;
    return gk_exec_index_same_file(a->ix, canonical, NULL) != NULL;
}

/* List every entry of d the gate vetoes (gk_gate_exec_vetoed_id's answer,
 * computed per directory where its entries share it). On PATH an entry
 * is spelled by its name; elsewhere only a path (or ld.so) can name it. */
static void veto_dir_entries(gk_projection *pr, scan_ask *a, veto_scan *s, const char *d,
                             bool on_path, bool hidden_too, gk_resolve_cache *cache)
{
    long at = scan_list(s, d, cache, on_path);
    if (at < 0)
        return;
    listing *l = s->v[at];
    dir_share d_sh = {0, false}, real_sh = {0, false};
    if (a->ix) {
        real_sh = listing_share(a, l);
        d_sh = strcmp(d, l->real) == 0 ? real_sh : share_of(a, d);
        /* The same directory again under another PATH spelling (/bin and
         * /usr/bin on a merged /usr): with the same veto dirs above both
         * and no veto file in either, every answer and every listed path
         * (in its real directory) is the one the first visit gave. */
        if (on_path && !d_sh.files) {
            if (l->path_visited && l->path_bits == d_sh.bits)
                return;
            l->path_visited = true;
            l->path_bits = d_sh.bits;
        }
    }
    for (size_t i = 0; i < l->n; i++) {
        lentry *e = &l->v[i];
        /* A directory is no program: execve refuses it whatever its name
         * (a zsh/ of modules in an admitted /usr/lib), and a directory in
         * the veto list would read as a veto dir. */
        if ((e->name[0] == '.' && !hidden_too) || e->type == DT_DIR)
            continue;
        uint64_t dev, ino;
        /* An entry that is no link is its own canonical file, real/NAME:
         * its path is spelled out only when something needs it. */
        bool in_place = e->type != DT_LNK && e->type != DT_UNKNOWN;
        gk_autofree char *own = NULL;
        const char *c;
        if (in_place) {
            dev = e->type == DT_REG ? l->dev : 0;
            ino = e->type == DT_REG && l->dev ? e->ino : 0;
            if (!dev)
                ino = 0;
            c = NULL;
            if (!a->ix || real_sh.files)
                c = own = gk_path_join(l->real, e->name);
        } else {
            c = entry_canonical(s, l, e, cache, &dev, &ino);
        }
        bool vetoed;
        if (!a->ix) {
            gk_autofree char *w = on_path ? gk_path_join(d, e->name) : NULL;
            grant_exec_query q = {on_path ? e->name : c, on_path ? w : c, c, NULL};
            vetoed = (on_path || c) && gk_gate_exec_vetoed_id(a->p, &q, dev, ino);
        } else {
            /* Off PATH a name is only a path: the file itself is asked
             * about (a link leads to a file the gate may admit, and bwrap
             * masks files, not links). On PATH: the name, the walked path
             * d/NAME, and the canonical file. A canonical file directly in
             * the listed directory shares its part. */
            uint64_t veto = 0;
            uint64_t name_bits = on_path ? gk_exec_index_base_bits(a->ix, e->name, &a->m) : 0;
            if (on_path && (d_sh.bits || name_bits)) {
                veto = name_bits | d_sh.bits;
            } else if (on_path && d_sh.files) {
                gk_autofree char *w = gk_path_join(d, e->name);
                veto = path_bits(a, w, name_bits, d_sh);
            }
            if (!veto && in_place) {
                uint64_t c_base = on_path ? name_bits : gk_exec_index_base_bits(a->ix, e->name, &a->m);
                veto = c_base | real_sh.bits | (real_sh.files ? gk_exec_index_file_bits(a->ix, c) : 0);
            } else if (!veto && c) {
                const char *cb = gk_basename(c);
                uint64_t c_base = on_path && strcmp(cb, e->name) == 0
                                      ? name_bits
                                      : gk_exec_index_base_bits(a->ix, cb, &a->m);
                bool here = gk_path_parent_is(c, l->real);
                veto = path_bits(a, c, c_base, here ? real_sh : parent_share(a, s, c));
            }
            vetoed = (on_path || in_place || c) &&
                     (veto || (gk_exec_index_has_same(a->ix) &&
                               same_vetoed(a, c ? c : (own = gk_path_join(l->real, e->name)),
                                           dev, ino)));
        }
        struct stat st;
        if (!vetoed || (!in_place && c && stat(c, &st) == 0 && S_ISDIR(st.st_mode)))
            continue; /* not vetoed, or a link to a directory */
        if (in_place && !c)
            c = own = gk_path_join(l->real, e->name);
        if (on_path)
            take_both(&pr->exec_veto, in_real_dir(gk_path_join(d, e->name), cache),
                      c ? gk_strdup(c) : NULL);
        else
            gk_strvec_push(&pr->exec_veto, c);
    }
}

static bool binish(const char *name)
{
    return strcmp(name, "bin") == 0 || strcmp(name, "sbin") == 0 || strcmp(name, "libexec") == 0;
}

/* The bin-ish directories of the layouts above, below dir (depth levels
 * further; below a lib directory, SCAN_LIB_DEPTH). Entries' types come
 * from the listing (a stat only where the file system leaves it unknown);
 * a directory that would not be listed further is only named, not
 * opened. */
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
    bool root = strcmp(dir, "/") == 0;
    gk_strvec sub = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *b = e->d_name;
        if (b[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue; /* a link is scanned where it leads, if that is a root */
        /* The kernel's own trees hold no programs, and walking /proc would
         * list every process. */
        if (root && (strcmp(b, "proc") == 0 || strcmp(b, "sys") == 0 || strcmp(b, "dev") == 0))
            continue;
        bool lib = !in_lib && gk_has_prefix(b, "lib") && !binish(b);
        /* Below depth 1 only a bin-ish name counts, and it needs no path
         * unless it is one. */
        if (depth == 1 && !lib && !binish(b))
            continue;
        char *full = gk_path_join(dir, b);
        struct stat st;
        if (e->d_type == DT_UNKNOWN && (lstat(full, &st) != 0 || !S_ISDIR(st.st_mode))) {
            free(full);
            continue;
        }
        gk_strvec_push_take(&sub, full);
    }
    closedir(d);
    for (size_t i = 0; i < sub.n; i++) {
        const char *b = gk_basename(sub.v[i]);
        bool lib = !in_lib && gk_has_prefix(b, "lib") && !binish(b);
        layout_dirs(sub.v[i], lib ? SCAN_LIB_DEPTH : depth - 1, in_lib || lib, out);
    }
    gk_strvec_free(&sub);
}

/* The readable roots the layouts are looked for in, real spellings. */
static void scan_roots(const gk_projection *pr, gk_strvec *out, gk_resolve_cache *cache)
{
    gk_strvec raw = {0};
    if (!pr->fs_restricted) {
        gk_strvec_push(&raw, "/");
    } else {
        gk_strvec_copy(&raw, &pr->implicit.read); /* worked out before exec_lists */
        for (size_t i = 0; i < pr->read.n; i++)
            gk_strvec_push(&raw, pr->read.v[i].p.real);
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

/* Does the policy veto anything the scan could find (host target only)? */
static bool scan_wanted(const grant_policy *p)
{
    bool any = false;
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_exec_dim *x = &p->stack.v[i]->exec;
        any |= p->stack.v[i]->has_exec &&
               (x->veto_match.n > 0 || x->veto_names.n > 0 || x->veto_files.n > 0);
    }
    return any && p->ctx->target == GRANT_TARGET_HOST;
}

/* Every absolute PATH directory, read once, before the name walk probes
 * them. */
static void scan_path_dirs(const grant_policy *p, veto_scan *s, gk_resolve_cache *cache)
{
    if (!p->ctx->path)
        return;
    char *list = gk_strdup(p->ctx->path), *save = NULL;
    for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
        if (d[0] == '/')
            scan_list(s, d, cache, true);
    free(list);
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

/* Every directory of the tree at dir, listed (real spellings, dir's
 * first). Entries' types come from the listings; the depth bound stops a
 * bind mount that shows a tree inside itself. */
#define ADMITTED_TREE_DEPTH 64

static void admitted_tree(veto_scan *s, const char *dir, int depth, gk_resolve_cache *cache,
                          gk_strvec *out)
{
    long at = scan_list(s, dir, cache, false);
    if (at < 0 || depth > ADMITTED_TREE_DEPTH)
        return;
    const listing *l = s->v[at];
    gk_strvec_push(out, l->real);
    gk_strvec sub = {0};
    for (size_t i = 0; i < l->n; i++) {
        const lentry *e = &l->v[i];
        if (e->type != DT_DIR && e->type != DT_UNKNOWN)
            continue;
        char *full = gk_path_join(l->real, e->name);
        struct stat st;
        if (e->type == DT_UNKNOWN && (lstat(full, &st) != 0 || !S_ISDIR(st.st_mode)))
            free(full);
        else
            gk_strvec_push_take(&sub, full);
    }
    for (size_t i = 0; i < sub.n; i++)
        admitted_tree(s, sub.v[i], depth + 1, cache, out);
    gk_strvec_free(&sub);
}

/* Where vetoed programs are looked for (grant(5) VETO MASKS): the PATH
 * directories always; then, with an exec allow-list, every admitted dir
 * with all it holds (Landlock lets the command execute anything there, so
 * a vetoed file inside must be masked; everywhere else Landlock refuses
 * its execution already); without one, the layouts programs are installed
 * in (above). */
static void veto_scan_host(gk_projection *pr, const grant_policy *p, veto_scan *s,
                           const keylist *admitted_dirs, gk_resolve_cache *cache)
{
    const gk_exec_index *ix = gk_gate_exec_index(p);
    scan_ask a = {p, gk_exec_index_usable(ix) ? ix : NULL, {NULL}};
    gk_strvec dirs = {0};
    if (pr->exec_restricted) {
        for (size_t i = 0; i < admitted_dirs->n; i++)
            admitted_tree(s, admitted_dirs->v[i], 0, cache, &dirs);
        gk_strvec_sort_unique(&dirs);
    } else {
        gk_strvec roots = {0};
        scan_roots(pr, &roots, cache);
        for (size_t i = 0; i < roots.n; i++)
            layout_dirs(roots.v[i], 2, false, &dirs);
        gk_strvec_free(&roots);
        /* Every directory listed before any entry is resolved: a link
         * into one of them is then read from its listing. */
        for (size_t i = 0; i < dirs.n; i++)
            scan_list(s, dirs.v[i], cache, false);
    }
    if (p->ctx->path) {
        char *list = gk_strdup(p->ctx->path), *save = NULL;
        for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
            if (d[0] == '/')
                veto_dir_entries(pr, &a, s, d, true, false, cache);
        free(list);
    }
    /* In an admitted dir every entry counts, hidden ones too: the command
     * may execute any of them. */
    for (size_t i = 0; i < dirs.n; i++)
        veto_dir_entries(pr, &a, s, dirs.v[i], false, pr->exec_restricted, cache);
    gk_strvec_free(&dirs);
    gk_scan_match_free(&a.m);
}

/* The layers' exec keys, sorted and unique (borrowed from the layers),
 * and the admitted dirs once worked out. */
typedef struct exec_keys {
    keylist names, files, dirs, veto_names, admitted;
} exec_keys;

static void exec_keys_free(exec_keys *k)
{
    free(k->names.v);
    free(k->files.v);
    free(k->dirs.v);
    free(k->veto_names.v);
    free(k->admitted.v);
}

/* Every layer's keys; the veto files and dirs go to the veto list at once
 * (a file in its real directory on the host, and its canonical file). */
static void collect_keys(gk_projection *pr, const grant_policy *p, exec_keys *k,
                         gk_resolve_cache *cache)
{
    const gk_stack *s = &p->stack;
    const grant_context *ctx = p->ctx;
    for (size_t i = 0; i < s->n; i++) {
        const gk_layer *f = s->v[i];
        if (!f->has_exec)
            continue;
        pr->exec_restricted |= f->exec.has_allow;
        for (size_t n = 0; n < f->exec.names.n; n++)
            GK_VEC_PUSH(k->names.v, k->names.n, k->names.cap, f->exec.names.v[n].key);
        for (size_t n = 0; n < f->exec.files.n; n++)
            GK_VEC_PUSH(k->files.v, k->files.n, k->files.cap, f->exec.files.v[n].key);
        for (size_t n = 0; n < f->exec.dirs.n; n++)
            GK_VEC_PUSH(k->dirs.v, k->dirs.n, k->dirs.cap, f->exec.dirs.v[n].key);
        for (size_t n = 0; n < f->exec.veto_names.n; n++)
            GK_VEC_PUSH(k->veto_names.v, k->veto_names.n, k->veto_names.cap,
                        f->exec.veto_names.v[n].key);
        for (size_t n = 0; n < f->exec.veto_files.n; n++) {
            const char *vf = f->exec.veto_files.v[n].key;
            gk_strvec_push_take(&pr->exec_veto, ctx->target == GRANT_TARGET_HOST
                                                    ? in_real_dir(gk_strdup(vf), cache)
                                                    : gk_strdup(vf));
            take_both(&pr->exec_veto, NULL, canonical_of(ctx, vf, cache));
        }
        for (size_t n = 0; n < f->exec.veto_dirs.n; n++)
            gk_strvec_push(&pr->exec_veto, f->exec.veto_dirs.v[n].key);
    }
    keys_sort_unique(&k->names);
    keys_sort_unique(&k->files);
    keys_sort_unique(&k->dirs);
    keys_sort_unique(&k->veto_names);
}

/* Offline for macOS, nothing says which PATH dir holds a name on the Mac:
 * a stock one has git in /usr/bin and rg in /opt/homebrew/bin. A name is
 * admitted wherever the PATH walk can find it. */
static void admit_name_every_dir(gk_projection *pr, const grant_policy *p, const char *name)
{
    gk_autofree char *list = gk_strdup(p->ctx->path);
    char *save = NULL;
    for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char *w = gk_path_join(d, name);
        char *c = gk_canonicalize(p->ctx, w);
        if (admitted_for_some_argv1(p, name, w, c)) {
            take_both(&pr->exec_admit, w, c);
        } else {
            free(w);
            free(c);
        }
    }
}

/* Every nameable command resolved via PATH, every file, every allow dir
 * the gate admits. */
static void admit_lists(gk_projection *pr, const grant_policy *p, exec_keys *k, bool every_dir,
                        gk_resolve_cache *cache)
{
    const grant_context *ctx = p->ctx;
    for (size_t i = 0; i < k->names.n; i++) {
        if (every_dir) {
            admit_name_every_dir(pr, p, k->names.v[i]);
            continue;
        }
        char *w, *c;
        gk_walk_head_cached(ctx, k->names.v[i], NULL, NULL, &w, &c, cache);
        if (w && admitted_for_some_argv1(p, k->names.v[i], w, c)) {
            take_both(&pr->exec_admit, w, c);
        } else {
            free(w);
            free(c);
        }
    }
    for (size_t i = 0; i < k->files.n; i++) {
        char *c = canonical_of(ctx, k->files.v[i], cache);
        if (admitted_for_some_argv1(p, k->files.v[i], k->files.v[i], c)) {
            gk_strvec_push(&pr->exec_admit, k->files.v[i]);
            take_both(&pr->exec_admit, NULL, c);
        } else {
            free(c);
        }
    }
    for (size_t i = 0; i < k->dirs.n; i++) {
        /* A dir is admitted when a fresh name walked inside it is. */
        char *probe = gk_path_join(k->dirs.v[i], "gk-probe");
        if (admitted_for_some_argv1(p, probe, probe, probe)) {
            gk_strvec_push(&pr->exec_admit, k->dirs.v[i]);
            GK_VEC_PUSH(k->admitted.v, k->admitted.n, k->admitted.cap, k->dirs.v[i]);
        }
        free(probe);
    }
}

/* The canonical file of every vetoed name found on PATH (offline for
 * macOS: the name in every PATH dir; the name regexes catch the rest). */
static void veto_name_list(gk_projection *pr, const grant_policy *p, const exec_keys *k,
                           bool every_dir, gk_resolve_cache *cache)
{
    const grant_context *ctx = p->ctx;
    for (size_t i = 0; i < k->veto_names.n; i++) {
        if (every_dir) {
            gk_autofree char *list = gk_strdup(ctx->path);
            char *save = NULL;
            for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
                if (d[0] == '/') {
                    char *w = gk_path_join(d, k->veto_names.v[i]);
                    take_both(&pr->exec_veto, w, gk_canonicalize(ctx, w));
                }
            continue;
        }
        char *w, *c;
        gk_walk_head_cached(ctx, k->veto_names.v[i], NULL, NULL, &w, &c, cache);
        if (w && gk_has_prefix(w, "/")) {
            take_both(&pr->exec_veto, in_real_dir(w, cache), c);
        } else {
            free(w);
            free(c);
        }
    }
}

/* The overlap of an admitted prefix and a writable region: a file written
 * there can then be executed. */
static void deputies(gk_projection *pr)
{
    if (!pr->exec_restricted || !pr->fs_restricted)
        return;
    for (size_t i = 0; i < pr->exec_admit.n; i++)
        for (size_t w = 0; w < pr->write.n; w++) {
            const char *a = pr->exec_admit.v[i], *wr = pr->write.v[w].p.real;
            if (gk_path_within(a, wr))
                gk_strvec_push(&pr->deputy, a);
            else if (gk_path_within(wr, a))
                gk_strvec_push(&pr->deputy, wr);
        }
    gk_strvec_sort_unique(&pr->deputy);
}

/* The exec admit and veto lists, from gate answers (grant-language.md §6):
 * every nameable command resolved via PATH, every file, every allow dir;
 * the canonical file of every vetoed name, file and pattern match found on
 * PATH, and the veto dirs. */
static void exec_lists(gk_projection *pr, const grant_policy *p)
{
    /* One moment's view of the host for every name resolved here. */
    gk_resolve_cache cache = {0};
    veto_scan scan = {0};
    exec_keys k = {0};
    bool scanning = scan_wanted(p);
    if (scanning) {
        scan_path_dirs(p, &scan, &cache);
        /* The gate's walk of the vetoed names then reads the listings. */
        gk_gate_index_prime(p, &cache);
    }
    collect_keys(pr, p, &k, &cache);
    bool every_dir = p->ctx->target == GRANT_TARGET_MACOS && p->ctx->path;
    admit_lists(pr, p, &k, every_dir, &cache);
    veto_name_list(pr, p, &k, every_dir, &cache);
    if (scanning)
        veto_scan_host(pr, p, &scan, &k.admitted, &cache);
    gk_strvec_sort_unique(&pr->exec_admit);
    gk_strvec_sort_unique(&pr->exec_veto);
    deputies(pr);
    exec_keys_free(&k);
    gk_resolve_cache_free(&cache);
    scan_free(&scan); /* after the cache, which borrows its listings */
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
        gk_gitlinks_protect(pr);
    if (!gk_target_is_offline(p->ctx))
        protect_file_ancestors(pr);
    gk_regions_sort_unique(&pr->read);
    gk_regions_sort_unique(&pr->write);
    gk_regions_sort_unique(&pr->readonly);
    gk_regions_sort_unique(&pr->deny);
    pinned_dirs(pr);
    pr->net = gk_decide_gate(s, "net") == GK_TRI_TRUE;
    pr->net_list = gk_stack_net(s, &pr->net_allow, &pr->net_deny) == GK_TRI_NONE;
    /* Once, before the veto scan reads its roots from it. */
    pr->has_implicit = p->ctx->implicit;
    gk_implicit_for(p->ctx, &pr->implicit);
    exec_lists(pr, p);
    /* Every source file read while compiling is readonly for the command
     * (cli.md): a confined command can read but never rewrite its policy. */
    gk_strvec_copy(&pr->protect, &p->protect);
    if (!gk_target_is_offline(p->ctx))
        protected_links(pr, p);
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
    gk_strvec_free(&pr->links);
    gk_strvec_free(&pr->exec_admit);
    gk_strvec_free(&pr->exec_veto);
    gk_strvec_free(&pr->deputy);
    gk_strvec_free(&pr->protect);
    gk_strvec_free(&pr->implicit.read);
    gk_strvec_free(&pr->implicit.write);
    gk_strvec_free(&pr->implicit.devices);
    free(pr);
}
