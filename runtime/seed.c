/* seed.c - grantrun --seed HOSTPATH[=DEST]: host files read into baseline
 * entries, refusing host symlinks and special files (scratch.h). */
#include "runtime/scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/scratch_int.h"

#define DEFAULT_MAX_BYTES ((uint64_t)1 << 30)
#define SEED_MAX_NODES ((size_t)1 << 20)

int gk_scratch_seed_parse(const char *arg, char **host, char **dest, char **err)
{
    *host = NULL;
    *dest = NULL;
    /* The last '=': a host path may hold one, a scratch path rarely does;
     * "a=b=/c" seeds the host file "a=b" at "/c". */
    const char *eq = strrchr(arg, '=');
    size_t hlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (hlen == 0)
        return gk_scratch_fail(err, -EINVAL, "--seed \"%s\": the host path is empty", arg);
    if (eq && eq[1] == '\0')
        return gk_scratch_fail(err, -EINVAL, "--seed \"%s\": DEST after '=' is empty", arg);
    *host = gk_strndup(arg, hlen);
    if (eq)
        *dest = gk_strdup(eq + 1);
    return 0;
}

/* "/" + the host path's last component, trailing slashes ignored. */
static int default_dest(const char *host, char **out, char **err)
{
    size_t n = strlen(host);
    while (n > 1 && host[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && host[b - 1] != '/')
        b--;
    gk_autofree char *base = gk_strndup(host + b, n - b);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "/") == 0)
        return gk_scratch_fail(err, -EINVAL,
                               "seed \"%s\": its name cannot be a scratch path; give one "
                               "(--seed HOSTPATH=DEST)",
                               host);
    *out = gk_concat("/", base);
    return 0;
}

typedef struct seed_item {
    const char *path;
    int origin;   /* 0: already in the list, 1: this seed */
    size_t index; /* into the list or the new entries */
    gk_scratch_kind kind;
} seed_item;

static int cmp_item(const void *a, const void *b)
{
    const seed_item *x = a, *y = b;
    int c = gk_scratch_path_cmp(x->path, y->path);
    if (c)
        return c;
    return x->origin - y->origin;
}

/* Append fresh to into unless a path conflicts (see scratch.h). fresh's
 * entries are moved into into (or freed) either way on success. */
static int merge(const char *host, gk_scratch_list *into, gk_scratch_list *fresh, char **err)
{
    size_t n = into->n + fresh->n;
    gk_autofree seed_item *it = gk_calloc(n ? n : 1, sizeof(*it));
    for (size_t i = 0; i < into->n; i++)
        it[i] = (seed_item){into->v[i].path, 0, i, into->v[i].kind};
    for (size_t i = 0; i < fresh->n; i++)
        it[into->n + i] = (seed_item){fresh->v[i].path, 1, i, fresh->v[i].kind};
    qsort(it, n, sizeof(*it), cmp_item);
    gk_autofree bool *skip = gk_calloc(fresh->n ? fresh->n : 1, sizeof(bool));
    /* Nearest file ancestor so far, per origin, on a stack of ancestors. */
    gk_autofree const seed_item **st = gk_calloc(n ? n : 1, sizeof(*st));
    size_t sn = 0;
    for (size_t i = 0; i < n; i++) {
        const seed_item *x = &it[i];
        if (i > 0 && strcmp(it[i - 1].path, x->path) == 0) {
            const seed_item *p = &it[i - 1];
            if (p->origin == 0 && x->origin == 1) {
                if (p->kind == GK_SCRATCH_DIR && x->kind == GK_SCRATCH_DIR) {
                    skip[x->index] = true; /* the same dir from two seeds: one */
                    continue;
                }
                return gk_scratch_fail(err, -EEXIST,
                                       "seed \"%s\": \"%s\" is already in the baseline "
                                       "(from an earlier seed)",
                                       host, x->path);
            }
        }
        while (sn > 0 && !gk_scratch_is_ancestor(st[sn - 1]->path, x->path))
            sn--;
        for (size_t k = 0; k < sn; k++) {
            if (st[k]->kind == GK_SCRATCH_FILE && st[k]->origin != x->origin)
                return gk_scratch_fail(err, -EEXIST,
                                       "seed \"%s\": \"%s\" is below the file \"%s\" %s", host,
                                       x->path, st[k]->path,
                                       st[k]->origin == 0 ? "of an earlier seed"
                                                          : "of this seed");
        }
        st[sn++] = x;
    }
    for (size_t i = 0; i < fresh->n; i++) {
        gk_scratch_entry *e = &fresh->v[i];
        if (skip[i]) {
            free(e->path);
            free(e->bytes);
        } else {
            gk_scratch_list_take(into, e->path, e->kind, e->bytes, e->len, e->mode);
        }
    }
    free(fresh->v);
    memset(fresh, 0, sizeof(*fresh));
    return 0;
}

static uint64_t list_bytes(const gk_scratch_list *l)
{
    uint64_t t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->v[i].len;
    return t;
}

static int seed_dir(const char *host, int fd, const char *dest, uint64_t room, uint64_t max,
                    gk_scratch_list *fresh, char **err)
{
    gk_snapshot s;
    gk_snapshot_limits lim = {.max_nodes = SEED_MAX_NODES, .max_bytes = room ? room : 1};
    gk_autofree char *werr = NULL;
    int rc = gk_snapshot_take(fd, &lim, &s, &werr);
    if (rc == -E2BIG && strstr(werr, "bytes of files"))
        return gk_scratch_fail(err, -EFBIG, "seed \"%s\": the seeds hold more than %llu bytes",
                               host, (unsigned long long)max);
    if (rc == -E2BIG)
        return gk_scratch_fail(err, -EFBIG, "seed \"%s\": %s", host, werr);
    if (rc < 0)
        return gk_scratch_fail(err, rc, "seed \"%s\": %s", host, werr);
    if (s.content_bytes > room)
        rc = gk_scratch_fail(err, -EFBIG, "seed \"%s\": the seeds hold more than %llu bytes",
                             host, (unsigned long long)max);
    for (size_t i = 0; i < s.n && rc == 0; i++) {
        gk_snap_node *nd = &s.v[i];
        if (nd->kind == GK_SNAP_SYMLINK)
            rc = gk_scratch_fail(err, -ELOOP,
                                 "seed \"%s\": \"%s%s\" is a symlink (seeds never follow or "
                                 "copy host symlinks)",
                                 host, host, nd->path);
        else if (nd->kind == GK_SNAP_OTHER)
            rc = gk_scratch_fail(err, -EINVAL,
                                 "seed \"%s\": \"%s%s\" is not a regular file or directory",
                                 host, host, nd->path);
        else if (nd->unreadable)
            rc = gk_scratch_fail(err, -EACCES, "seed \"%s\": \"%s%s\": %s", host, host,
                                 nd->path, strerror(EACCES));
    }
    if (rc < 0) {
        gk_snapshot_free(&s);
        return rc;
    }
    /* dest "/" seeds the dir's contents at the scratch root. */
    const char *base = strcmp(dest, "/") == 0 ? "" : dest;
    for (size_t i = 0; i < s.n; i++) {
        gk_snap_node *nd = &s.v[i];
        char *p = gk_concat(base, nd->path);
        gk_scratch_kind k = nd->kind == GK_SNAP_DIR ? GK_SCRATCH_DIR : GK_SCRATCH_FILE;
        gk_scratch_list_take(fresh, p, k, gk_steal(&nd->bytes), k == GK_SCRATCH_FILE ? nd->size : 0,
                             (int)(nd->mode & 01777));
    }
    gk_snapshot_free(&s);
    return 0;
}

int gk_scratch_seed_read(const char *host_path, const char *dest, uint64_t max_bytes,
                         gk_scratch_list *into, char **err)
{
    if (!max_bytes)
        max_bytes = DEFAULT_MAX_BYTES;
    gk_autofree char *dflt = NULL;
    if (!dest) {
        int rc = default_dest(host_path, &dflt, err);
        if (rc < 0)
            return rc;
        dest = dflt;
    }
    if (strcmp(dest, "/") != 0) {
        gk_autofree char *perr = NULL;
        int rc = gk_scratch_check_path("DEST", dest, strlen(dest), &perr);
        if (rc < 0)
            return gk_scratch_fail(err, rc, "seed \"%s\": %s", host_path, perr);
    }
    /* The path's own last component is looked at, never what a trailing
     * slash would resolve a symlink to ("link/" names the link's target). */
    gk_autofree char *own = gk_strdup(host_path);
    for (size_t n = strlen(own); n > 1 && own[n - 1] == '/'; n--)
        own[n - 1] = '\0';
    struct stat st;
    if (lstat(own, &st) < 0)
        return gk_scratch_fail(err, -errno, "seed \"%s\": %s", host_path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return gk_scratch_fail(err, -ELOOP,
                               "seed \"%s\": \"%s\" is a symlink (seeds never follow or copy "
                               "host symlinks)",
                               host_path, host_path);
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return gk_scratch_fail(err, -EINVAL,
                               "seed \"%s\": \"%s\" is not a regular file or directory",
                               host_path, host_path);
    /* O_NOFOLLOW and a second look at what was opened: a swap between the
     * lstat and the open cannot slip a symlink or a FIFO in. */
    int fd = open(own, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return gk_scratch_fail(err, errno == ELOOP ? -ELOOP : -errno, "seed \"%s\": %s",
                               host_path, strerror(errno));
    struct stat fst;
    if (fstat(fd, &fst) < 0 || (fst.st_mode & S_IFMT) != (st.st_mode & S_IFMT) ||
        fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
        close(fd);
        return gk_scratch_fail(err, -EAGAIN, "seed \"%s\": changed while it was read",
                               host_path);
    }
    uint64_t have = list_bytes(into);
    uint64_t room = have < max_bytes ? max_bytes - have : 0;
    gk_scratch_list fresh = {0};
    int rc = 0;
    if (S_ISDIR(fst.st_mode)) {
        if (strcmp(dest, "/") != 0)
            gk_scratch_list_add(&fresh, dest, GK_SCRATCH_DIR, NULL, 0, (int)(fst.st_mode & 01777));
        rc = seed_dir(host_path, fd, dest, room, max_bytes, &fresh, err); /* fd is not taken */
        close(fd);
    } else {
        if (strcmp(dest, "/") == 0) {
            close(fd);
            return gk_scratch_fail(err, -EINVAL,
                                   "seed \"%s\": a file cannot be the scratch root (DEST \"/\")",
                                   host_path);
        }
        unsigned char *bytes = NULL;
        size_t len = 0;
        rc = gk_scratch_read_fd(fd, room, &bytes, &len);
        close(fd);
        if (rc == -EFBIG)
            rc = gk_scratch_fail(err, rc, "seed \"%s\": the seeds hold more than %llu bytes",
                                 host_path, (unsigned long long)max_bytes);
        else if (rc < 0)
            rc = gk_scratch_fail(err, rc, "seed \"%s\": read: %s", host_path, strerror(-rc));
        else
            gk_scratch_list_take(&fresh, gk_strdup(dest), GK_SCRATCH_FILE, bytes, len,
                                 (int)(fst.st_mode & 01777));
    }
    if (rc == 0)
        rc = merge(host_path, into, &fresh, err);
    gk_scratch_list_free(&fresh);
    return rc;
}
