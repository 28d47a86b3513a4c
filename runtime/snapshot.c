/* snapshot.c - a record of a directory tree, never following a symlink
 * (scratch.h): the before and after of a run, and the reader of --seed. */
#include "runtime/scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/scratch_int.h"

#define DEFAULT_MAX_NODES ((size_t)1 << 20)
#define DEFAULT_MAX_BYTES ((uint64_t)1 << 30)

int gk_scratch_read_fd(int fd, uint64_t max, unsigned char **out, size_t *len)
{
    /* Sized by fstat, so a snapshot holds what the files hold and not a
     * read buffer per file; a file that grows meanwhile still reads whole. */
    struct stat st;
    bool sized = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    /* Already over: refused unread (a sparse 2 GiB file would otherwise
     * be read, and buffered, up to the limit first). */
    if (sized && (uint64_t)st.st_size > max)
        return -EFBIG;
    size_t hint = sized ? (size_t)st.st_size : 0;
    gk_buf b = {0};
    gk_buf_grow(&b, hint + 1);
    for (;;) {
        if (b.cap - b.len - 1 == 0)
            gk_buf_grow(&b, b.len < 65536 ? 65536 : b.len);
        ssize_t r = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int rc = -errno;
            gk_buf_free(&b);
            return rc;
        }
        if (r == 0)
            break;
        b.len += (size_t)r;
        if (b.len > max) {
            gk_buf_free(&b);
            return -EFBIG;
        }
    }
    if (b.len == 0) {
        gk_buf_free(&b);
        *out = NULL;
        *len = 0;
        return 0;
    }
    b.data[b.len] = '\0';
    if (b.cap > b.len + 1 + 4096)
        b.data = gk_realloc(b.data, b.len + 1);
    *out = (unsigned char *)gk_buf_steal(&b, len);
    return 0;
}

typedef struct walker {
    gk_snapshot *s;
    size_t max_nodes;
    uint64_t max_bytes;
    char **err;
} walker;

static gk_snap_kind kind_of(mode_t m)
{
    if (S_ISREG(m))
        return GK_SNAP_FILE;
    if (S_ISDIR(m))
        return GK_SNAP_DIR;
    if (S_ISLNK(m))
        return GK_SNAP_SYMLINK;
    return GK_SNAP_OTHER;
}

static int read_link(int dfd, const char *name, const char *path, gk_snap_node *nd, char **err)
{
    size_t cap = nd->size + 1 > 64 ? nd->size + 1 : 64;
    for (;;) {
        char *buf = gk_malloc(cap);
        ssize_t r = readlinkat(dfd, name, buf, cap);
        if (r < 0) {
            int rc = -errno;
            free(buf);
            return gk_scratch_fail(err, rc, "snapshot of \"%s\": readlink: %s", path,
                                   strerror(-rc));
        }
        if ((size_t)r < cap) {
            buf[r] = '\0';
            nd->size = (uint64_t)r;
            if (r == 0)
                free(buf);
            else
                nd->bytes = (unsigned char *)buf;
            return 0;
        }
        free(buf);
        cap *= 2;
    }
}

static int read_file(walker *w, int dfd, const char *name, const char *path, gk_snap_node *nd)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == EACCES) {
            nd->unreadable = true;
            return 0;
        }
        return gk_scratch_fail(w->err, -errno, "snapshot of \"%s\": open: %s", path,
                               strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return gk_scratch_fail(w->err, -EAGAIN, "snapshot of \"%s\": changed while it was read",
                               path);
    }
    size_t len = 0;
    int rc = gk_scratch_read_fd(fd, w->max_bytes - w->s->content_bytes, &nd->bytes, &len);
    close(fd);
    if (rc == -EFBIG)
        return gk_scratch_fail(w->err, -E2BIG,
                               "snapshot of \"%s\": the tree holds more than %llu bytes of files",
                               path, (unsigned long long)w->max_bytes);
    if (rc < 0)
        return gk_scratch_fail(w->err, rc, "snapshot of \"%s\": read: %s", path, strerror(-rc));
    nd->size = len;
    w->s->content_bytes += len;
    return 0;
}

/* Walk the directory open at fd (taken over and closed), whose scratch
 * path is prefix ("" for the root), depth its component count, self its
 * node's index (-1 for the root). */
static int walk(walker *w, int fd, const char *prefix, size_t depth, long self)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = -errno;
        close(fd);
        return gk_scratch_fail(w->err, rc, "snapshot of \"%s\": %s", *prefix ? prefix : "/",
                               strerror(-rc));
    }
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno)
                rc = gk_scratch_fail(w->err, -errno, "snapshot of \"%s\": readdir: %s",
                                     *prefix ? prefix : "/", strerror(errno));
            break;
        }
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        gk_autofree char *path = gk_printf("%s/%s", prefix, name);
        struct stat st;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue;
            if (errno == EACCES && self >= 0) {
                /* Listable but not searchable (0600): search is per dir,
                 * so this is the first child and none was recorded. */
                w->s->v[self].unreadable = true;
                break;
            }
            rc = gk_scratch_fail(w->err, -errno, "snapshot of \"%s\": stat: %s", path,
                                 strerror(errno));
            break;
        }
        if (w->s->n >= w->max_nodes) {
            rc = gk_scratch_fail(w->err, -E2BIG,
                                 "snapshot of \"%s\": the tree holds more than %zu nodes", path,
                                 w->max_nodes);
            break;
        }
        if (depth + 1 > GK_SCRATCH_MAX_DEPTH) {
            rc = gk_scratch_fail(w->err, -E2BIG,
                                 "snapshot of \"%s\": deeper than %d components", path,
                                 GK_SCRATCH_MAX_DEPTH);
            break;
        }
        gk_snap_kind kind = kind_of(st.st_mode);
        gk_snap_node nd = {
            .kind = kind,
            .mode = (unsigned)(st.st_mode & 07777),
            .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
            .size = kind == GK_SNAP_FILE || kind == GK_SNAP_SYMLINK ? (uint64_t)st.st_size : 0,
        };
        if (nd.kind == GK_SNAP_FILE)
            rc = read_file(w, dirfd(d), name, path, &nd);
        else if (nd.kind == GK_SNAP_SYMLINK)
            rc = read_link(dirfd(d), name, path, &nd, w->err);
        int sub = -1;
        if (rc == 0 && nd.kind == GK_SNAP_DIR) {
            sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 && errno == EACCES)
                nd.unreadable = true;
            else if (sub < 0)
                rc = gk_scratch_fail(w->err, -errno, "snapshot of \"%s\": open: %s", path,
                                     strerror(errno));
        }
        if (rc < 0) {
            free(nd.bytes);
            break;
        }
        nd.path = gk_steal(&path);
        GK_VEC_PUSH(w->s->v, w->s->n, w->s->cap, nd);
        if (sub >= 0) {
            rc = walk(w, sub, w->s->v[w->s->n - 1].path, depth + 1, (long)w->s->n - 1);
            if (rc < 0)
                break;
        }
    }
    closedir(d);
    return rc;
}

static int cmp_node(const void *a, const void *b)
{
    return gk_strcmp_bytes(((const gk_snap_node *)a)->path, ((const gk_snap_node *)b)->path);
}

int gk_snapshot_take(int dirfd, const gk_snapshot_limits *lim, gk_snapshot *out, char **err)
{
    memset(out, 0, sizeof(*out));
    walker w = {
        .s = out,
        .max_nodes = lim && lim->max_nodes ? lim->max_nodes : DEFAULT_MAX_NODES,
        .max_bytes = lim && lim->max_bytes ? lim->max_bytes : DEFAULT_MAX_BYTES,
        .err = err,
    };
    /* A description of its own: reading dirfd's would move the caller's
     * directory offset (and a second snapshot would see nothing). */
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return gk_scratch_fail(err, -errno, "snapshot of \"/\": %s", strerror(errno));
    int rc = walk(&w, fd, "", 0, -1);
    if (rc < 0) {
        gk_snapshot_free(out);
        return rc;
    }
    if (out->n) /* qsort of a NULL array is undefined, even empty */
        qsort(out->v, out->n, sizeof(*out->v), cmp_node);
    return 0;
}

void gk_snapshot_free(gk_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].path);
        free(s->v[i].bytes);
    }
    free(s->v);
    memset(s, 0, sizeof(*s));
}
