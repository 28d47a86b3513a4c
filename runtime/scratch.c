/* scratch.c - baseline entries: the list, the §3a checks, materialisation
 * into the scratch tmpfs, and whether that tmpfs is full (scratch.h). */
#include "runtime/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "runtime/scratch_int.h"

/* ---- the list */

void gk_scratch_list_take(gk_scratch_list *l, char *path, gk_scratch_kind kind,
                          unsigned char *bytes, size_t len, int mode)
{
    gk_scratch_entry e = {.path = path, .kind = kind, .bytes = bytes, .len = len, .mode = mode};
    GK_VEC_PUSH(l->v, l->n, l->cap, e);
}

void gk_scratch_list_add(gk_scratch_list *l, const char *path, gk_scratch_kind kind,
                         const void *bytes, size_t len, int mode)
{
    unsigned char *copy = NULL;
    if (len > 0) {
        copy = gk_malloc(len);
        memcpy(copy, bytes, len);
    }
    gk_scratch_list_take(l, gk_strdup(path), kind, copy, len, mode);
}

void gk_scratch_list_free(gk_scratch_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].bytes);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

const char *gk_scratch_kind_name(gk_scratch_kind k)
{
    return k == GK_SCRATCH_DIR ? "dir" : "file";
}

int gk_scratch_kind_parse(const char *s, gk_scratch_kind *out)
{
    if (gk_str_eq(s, "file"))
        *out = GK_SCRATCH_FILE;
    else if (gk_str_eq(s, "dir"))
        *out = GK_SCRATCH_DIR;
    else
        return -EINVAL;
    return 0;
}

int gk_scratch_fail(char **err, int rc, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        *err = gk_vprintf(fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ---- path order and checks */

int gk_scratch_path_cmp(const char *a, const char *b)
{
    /* '/' sorts below every other byte, so a path's descendants follow it
     * directly ("/a", "/a/x", "/a b"): one pass with a stack of ancestors
     * sees every parent before its children. */
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    for (;; p++, q++) {
        unsigned x = *p == '/' ? 1u : *p == 0 ? 0u : *p + 1u;
        unsigned y = *q == '/' ? 1u : *q == 0 ? 0u : *q + 1u;
        if (x != y)
            return x < y ? -1 : 1;
        if (x == 0)
            return 0;
    }
}

bool gk_scratch_is_ancestor(const char *anc, const char *p)
{
    size_t n = strlen(anc);
    return strncmp(anc, p, n) == 0 && p[n] == '/';
}

size_t gk_scratch_depth(const char *p)
{
    size_t d = 0;
    for (; *p; p++)
        d += *p == '/';
    return d;
}

int gk_scratch_check_path(const char *what, const char *path, size_t len, char **err)
{
    if (!path)
        return gk_scratch_fail(err, -EINVAL, "%s is missing", what);
    if (strlen(path) != len)
        return gk_scratch_fail(err, -EINVAL, "%s \"%s\" %s", what, path, GK_SCRATCH_MSG_NUL);
    if (path[0] != '/')
        return gk_scratch_fail(err, -EINVAL, "%s \"%s\" does not begin with '/'", what, path);
    if (path[1] == '\0')
        return gk_scratch_fail(err, -EINVAL, "%s \"/\" is the scratch root itself", what);
    const char *c = path + 1;
    for (;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0)
            return gk_scratch_fail(err, -EINVAL, "%s \"%s\" has an empty component", what, path);
        if (n == 1 && c[0] == '.')
            return gk_scratch_fail(err, -EINVAL, "%s \"%s\" has a \".\" component", what, path);
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return gk_scratch_fail(err, -EINVAL, "%s \"%s\" has a \"..\" component", what, path);
        if (!e)
            break;
        c = e + 1;
    }
    if (gk_scratch_depth(path) > GK_SCRATCH_MAX_DEPTH)
        return gk_scratch_fail(err, -EINVAL, "%s \"%s\" is deeper than %d components", what, path,
                               GK_SCRATCH_MAX_DEPTH);
    return 0;
}

static int cmp_entryp(const void *a, const void *b)
{
    const gk_scratch_entry *x = *(const gk_scratch_entry *const *)a;
    const gk_scratch_entry *y = *(const gk_scratch_entry *const *)b;
    return gk_scratch_path_cmp(x->path, y->path);
}

/* The entries in path order, sorted pointers into l. */
static const gk_scratch_entry **sorted_entries(const gk_scratch_list *l)
{
    const gk_scratch_entry **v = gk_calloc(l->n ? l->n : 1, sizeof(*v));
    for (size_t i = 0; i < l->n; i++)
        v[i] = &l->v[i];
    qsort(v, l->n, sizeof(*v), cmp_entryp);
    return v;
}

/* The chain of ancestors of the entry being looked at (path order is a
 * depth-first walk: pop what is not an ancestor of the next path). An
 * ancestor is a prefix of some entry's path: pointer and length, so
 * implied parents need no string of their own. */
typedef struct anc {
    const char *path;
    size_t len;
    bool is_file;
} anc;

static bool anc_of(const anc *a, const char *p)
{
    return strncmp(a->path, p, a->len) == 0 && p[a->len] == '/';
}

int gk_scratch_validate(const gk_scratch_list *l, uint64_t quota_bytes, uint64_t node_limit,
                        gk_scratch_totals *totals, char **err)
{
    for (size_t i = 0; i < l->n; i++) {
        const gk_scratch_entry *e = &l->v[i];
        int rc = gk_scratch_check_path("baseline path", e->path, e->path ? strlen(e->path) : 0,
                                       err);
        if (rc < 0)
            return rc;
        if (e->mode != -1 && (e->mode < 0 || e->mode > 07777))
            return gk_scratch_fail(err, -EINVAL,
                                   "baseline entry \"%s\": mode %d is not a permission mode",
                                   e->path, e->mode);
        if (e->mode != -1 && (e->mode & 06000))
            return gk_scratch_fail(err, -EINVAL,
                                   "baseline entry \"%s\": mode 0%o has set-user-ID or "
                                   "set-group-ID bits",
                                   e->path, (unsigned)e->mode);
        if (e->kind == GK_SCRATCH_DIR && e->len > 0)
            return gk_scratch_fail(err, -EINVAL, "baseline entry \"%s\": a dir carries no bytes",
                                   e->path);
    }
    gk_autofree const gk_scratch_entry **v = sorted_entries(l);
    gk_autofree anc *st = gk_calloc(GK_SCRATCH_MAX_DEPTH + 1, sizeof(*st));
    size_t sn = 0;
    uint64_t bytes = 0, nodes = 1; /* the root is an inode of the tmpfs too */
    size_t implied = 0;
    int rc = 0;
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        const gk_scratch_entry *e = v[i];
        if (i > 0 && strcmp(v[i - 1]->path, e->path) == 0) {
            rc = gk_scratch_fail(err, -EINVAL, "baseline path \"%s\" appears twice", e->path);
            break;
        }
        while (sn > 0 && !anc_of(&st[sn - 1], e->path))
            sn--;
        if (sn > 0 && st[sn - 1].is_file) {
            rc = gk_scratch_fail(err, -EINVAL, "baseline path \"%s\" is below the file \"%.*s\"",
                                 e->path, (int)st[sn - 1].len, st[sn - 1].path);
            break;
        }
        /* Parents between the nearest listed or implied ancestor and e. */
        for (const char *c = e->path + (sn ? st[sn - 1].len : 0) + 1; *c; c++) {
            if (*c != '/')
                continue;
            st[sn++] = (anc){e->path, (size_t)(c - e->path), false};
            implied++;
            nodes++;
        }
        nodes++;
        if (e->kind == GK_SCRATCH_FILE)
            bytes += e->len;
        st[sn++] = (anc){e->path, strlen(e->path), e->kind == GK_SCRATCH_FILE};
        if (quota_bytes && bytes > quota_bytes)
            rc = gk_scratch_fail(err, -ENOSPC,
                                 "baseline exceeds fsQuotaBytes %llu: %llu bytes of files by "
                                 "\"%s\" (refused before spawning)",
                                 (unsigned long long)quota_bytes, (unsigned long long)bytes,
                                 e->path);
        else if (node_limit && nodes > node_limit)
            rc = gk_scratch_fail(err, -ENOSPC,
                                 "baseline exceeds fsNodeLimit %llu: %llu nodes (the root, "
                                 "entries and implied parents) by \"%s\" (refused before "
                                 "spawning)",
                                 (unsigned long long)node_limit, (unsigned long long)nodes,
                                 e->path);
    }
    if (rc == 0 && totals) {
        totals->bytes = bytes;
        totals->nodes = nodes;
        totals->implied = implied;
    }
    return rc;
}

/* ---- materialise */

int gk_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

typedef struct mat_dir {
    const char *path;
    int fd;
    unsigned mode;
} mat_dir;

/* Close the innermost open dir, giving it its final mode now that its
 * children exist. */
static int mat_pop(mat_dir *st, size_t *n, char **err)
{
    mat_dir *d = &st[--*n];
    int rc = 0;
    if (fchmod(d->fd, d->mode) < 0)
        rc = gk_scratch_fail(err, -errno, "materialising \"%s\": chmod: %s", d->path,
                             strerror(errno));
    close(d->fd);
    return rc;
}

static int mat_dir_at(int parent, const char *path, const char *name, int *fd_out, char **err)
{
    /* 0700 while its children are made; the real mode comes at mat_pop. */
    if (mkdirat(parent, name, 0700) < 0)
        return gk_scratch_fail(err, -errno, "materialising \"%s\": mkdir: %s", path,
                               strerror(errno));
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return gk_scratch_fail(err, -errno, "materialising \"%s\": open: %s", path,
                               strerror(errno));
    *fd_out = fd;
    return 0;
}

static int mat_file_at(int parent, const gk_scratch_entry *e, const char *name, char **err)
{
    int fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                    0600);
    if (fd < 0)
        return gk_scratch_fail(err, -errno, "materialising \"%s\": create: %s", e->path,
                               strerror(errno));
    int rc = gk_write_all(fd, e->bytes, e->len);
    if (rc < 0) {
        close(fd);
        return gk_scratch_fail(err, rc, "materialising \"%s\": write: %s", e->path,
                               strerror(-rc));
    }
    unsigned mode = e->mode == -1 ? GK_SCRATCH_FILE_MODE : (unsigned)e->mode;
    if (fchmod(fd, mode) < 0) {
        rc = -errno;
        close(fd);
        return gk_scratch_fail(err, rc, "materialising \"%s\": chmod: %s", e->path,
                               strerror(-rc));
    }
    if (close(fd) < 0 && errno != EINTR)
        return gk_scratch_fail(err, -errno, "materialising \"%s\": close: %s", e->path,
                               strerror(errno));
    return 0;
}

int gk_scratch_materialise(int dirfd, const gk_scratch_list *l, char **err)
{
    /* The walk below relies on the rules (no "..", no duplicate, nothing
     * below a file): checked again, since it costs little next to the
     * syscalls, so an unchecked list fails here instead of half-way. */
    int vrc = gk_scratch_validate(l, 0, 0, NULL, err);
    if (vrc < 0)
        return vrc;
    gk_autofree const gk_scratch_entry **v = sorted_entries(l);
    /* The open ancestor chain; st[0] is the root, never closed here. */
    gk_autofree mat_dir *st = gk_calloc(GK_SCRATCH_MAX_DEPTH + 2, sizeof(*st));
    size_t n = 1;
    st[0] = (mat_dir){.path = "", .fd = dirfd};
    gk_strvec implied = {0};
    int rc = 0;
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        const gk_scratch_entry *e = v[i];
        while (n > 1 && !gk_scratch_is_ancestor(st[n - 1].path, e->path) && rc == 0)
            rc = mat_pop(st, &n, err);
        if (rc < 0)
            break;
        /* Implied parents between the open chain and the entry. */
        const char *rest = e->path + strlen(st[n - 1].path) + 1;
        const char *slash;
        while (rc == 0 && (slash = strchr(rest, '/')) != NULL) {
            if (n > GK_SCRATCH_MAX_DEPTH) {
                rc = gk_scratch_fail(err, -EINVAL, "materialising \"%s\": too deep", e->path);
                break;
            }
            gk_autofree char *name = gk_strndup(rest, (size_t)(slash - rest));
            /* The stack points at it: implied keeps it alive until the end. */
            char *ppath = gk_strndup(e->path, (size_t)(slash - e->path));
            gk_strvec_push_take(&implied, ppath);
            int fd;
            rc = mat_dir_at(st[n - 1].fd, ppath, name, &fd, err);
            if (rc == 0)
                st[n++] = (mat_dir){.path = ppath, .fd = fd, .mode = GK_SCRATCH_DIR_MODE};
            rest = slash + 1;
        }
        if (rc < 0)
            break;
        if (e->kind == GK_SCRATCH_DIR) {
            if (n > GK_SCRATCH_MAX_DEPTH) {
                rc = gk_scratch_fail(err, -EINVAL, "materialising \"%s\": too deep", e->path);
                break;
            }
            int fd;
            rc = mat_dir_at(st[n - 1].fd, e->path, rest, &fd, err);
            if (rc == 0)
                st[n++] = (mat_dir){.path = e->path,
                                    .fd = fd,
                                    .mode = e->mode == -1 ? GK_SCRATCH_DIR_MODE
                                                          : (unsigned)e->mode};
        } else {
            rc = mat_file_at(st[n - 1].fd, e, rest, err);
        }
    }
    while (n > 1) {
        if (rc == 0)
            rc = mat_pop(st, &n, err);
        else
            close(st[--n].fd);
    }
    gk_strvec_free(&implied);
    return rc;
}

/* ---- the tmpfs */

int gk_scratch_full(int dirfd, bool *full, const char **what, char **err)
{
    struct statfs sf;
    if (fstatfs(dirfd, &sf) < 0)
        return gk_scratch_fail(err, -errno, "statfs of the scratch: %s", strerror(errno));
    /* A tmpfs without nr_inodes reports f_files 0: no inode limit. */
    bool inodes = sf.f_files > 0 && sf.f_ffree == 0;
    bool blocks = sf.f_blocks > 0 && sf.f_bfree == 0;
    *full = inodes || blocks;
    if (what)
        *what = inodes ? "inodes" : blocks ? "blocks" : NULL;
    return 0;
}
