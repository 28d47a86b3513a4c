/* placeholders.c - create, record and remove the host mountpoints of a
 * run's masks (see placeholders.h).
 *
 * Why a lock and not a tmpfs over the parent: a name absent from a write
 * region can only be occupied by a mount on that name, and bwrap mounts
 * on the host's tree; a tmpfs over the parent with every sibling re-bound
 * would hide what the host creates there during the run and turn the
 * command's own creations private. Since Linux 3.18 removing a mountpoint
 * detaches it in every other mount namespace, so removal waits until no
 * envelope of the user is up: the lock is held shared by every run from
 * before its plan to after its envelope, and taken exclusive only without
 * waiting.
 *
 * The record, one line per placeholder grantrun made:
 *   KIND DEV INO GENERATION BTIME.NS CTIME.NS PATH
 * KIND d or f; times from statx (0.0 when the file system keeps no birth
 * time), the generation 0 where there is none; PATH absolute, with
 * backslash and newline escaped (\\, \n). A directory is the one made
 * when device, inode, generation and birth time agree (its
 * ctime changes as placeholders inside come and go); a file also needs
 * its ctime and size 0. Each line goes out in one O_APPEND write, so runs
 * holding the lock shared append side by side.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/placeholders.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define RECORD "placeholders"
#define LOCK_WAIT_MS 30000
#define RECORD_MAX (4u << 20) /* a record larger than this is not read */

/* A runtime directory: made if missing, then it must be a directory of
 * ours that nobody else can write. Returns an O_PATH descriptor or -errno. */
static int own_dir(const char *dir)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

/* GRANTKIT_RUNTIME_DIR; else /run/grantkit for root, else
 * $XDG_RUNTIME_DIR/grantkit, else /tmp/grantkit-UID: the first that is
 * ours. */
int gk_runtime_dir(char **path)
{
    const char *env = getenv("GRANTKIT_RUNTIME_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
    char *cand[3] = {0};
    size_t n = 0;
    if (env && *env == '/') {
        cand[n++] = gk_strdup(env);
    } else {
        if (geteuid() == 0)
            cand[n++] = gk_strdup("/run/grantkit");
        else if (xdg && *xdg == '/')
            cand[n++] = gk_printf("%s/grantkit", xdg);
        cand[n++] = gk_printf("/tmp/grantkit-%u", (unsigned)geteuid());
    }
    int fd = -ENOENT;
    for (size_t i = 0; i < n; i++) {
        if (fd < 0 && (fd = own_dir(cand[i])) >= 0 && path) {
            /* Canonical, as the plan's host paths are (gk_placeholders_mask). */
            char *real = realpath(cand[i], NULL);
            *path = real ? gk_strdup(real) : gk_strdup(cand[i]);
            free(real);
        }
        free(cand[i]);
    }
    return fd;
}

/* Is the file fd locks still the record the runtime directory names? A
 * lock unlinked or replaced there (or the directory moved aside) by
 * whoever can write it, a command at the landlock level whose policy
 * writes the directory's parent say, splits the runs in two: each side's
 * exclusive lock would then not wait for the other side's envelopes,
 * whose masks' mountpoints it could remove. */
static bool still_named(int fd)
{
    int dfd = gk_runtime_dir(NULL);
    if (dfd < 0)
        return false;
    struct stat named, mine;
    bool same = fstatat(dfd, RECORD, &named, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &mine) == 0 &&
                named.st_dev == mine.st_dev && named.st_ino == mine.st_ino;
    close(dfd);
    return same;
}

/* How often a lock found no longer named is taken again before the run
 * is refused (something keeps moving the record). */
#define RENAMED_TRIES 5

static int lock_once(gk_placeholders *ph)
{
    ph->lock_fd = -1;
    ph->dir = NULL;
    int dfd = gk_runtime_dir(&ph->dir);
    if (dfd < 0)
        return dfd;
    int fd = openat(dfd, RECORD, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    0600);
    /* The directory is ours but its record is not a file of ours (a link,
     * a FIFO, another owner's): planted, not a missing runtime directory. */
    int err = fd >= 0 ? 0 : errno == ELOOP ? -ESTALE : -errno;
    close(dfd);
    struct stat st;
    if (!err && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()))
        err = -ESTALE;
    /* Waits only for a run removing placeholders (exclusive, brief). */
    for (int waited = 0; !err && flock(fd, LOCK_SH | LOCK_NB) < 0; waited += 5) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= LOCK_WAIT_MS) {
            err = errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
            break;
        }
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    /* Locked, but perhaps a file no longer named (still_named): taken
     * again, and in the end refused (gk_placeholders_lock). */
    if (!err && !still_named(fd))
        err = -ESTALE;
    if (err) {
        if (fd >= 0)
            close(fd);
        free(ph->dir);
        ph->dir = NULL;
        return err;
    }
    ph->lock_fd = fd;
    return 0;
}

int gk_placeholders_lock(gk_placeholders *ph)
{
    int rc = lock_once(ph);
    for (int i = 1; rc == -ESTALE && i < RENAMED_TRIES; i++)
        rc = lock_once(ph);
    return rc;
}

bool gk_placeholders_still_held(const gk_placeholders *ph)
{
    return ph->lock_fd < 0 || still_named(ph->lock_fd);
}

void gk_placeholders_mask(const gk_placeholders *ph, const gk_bwrap_plan *plan, gk_strvec *slot)
{
    if (ph->lock_fd < 0)
        return;
    gk_strvec names = {0};
    for (size_t i = 0; i < plan->nmounts; i++) {
        const gk_mount *m = &plan->mounts[i];
        if (!m->host || m->link || !gk_path_within(ph->dir, m->host))
            continue;
        const char *rest = ph->dir + (strcmp(m->host, "/") == 0 ? 0 : strlen(m->host));
        gk_strvec_push_take(&names, strcmp(m->dest, "/") == 0 ? gk_strdup(rest)
                                                                : gk_printf("%s%s", m->dest, rest));
    }
    gk_strvec_sort_unique(&names);
    for (size_t i = 0; i < names.n; i++) {
        const char *opt[] = {"--perms", "0000", "--tmpfs", names.v[i], "--remount-ro", names.v[i]};
        for (size_t k = 0; k < sizeof(opt) / sizeof(*opt); k++)
            gk_strvec_push(slot, opt[k]);
    }
    gk_strvec_free(&names);
}

/* ---- walking without following ---------------------------------------- */

/* The directory holding path's last component, reached from / one
 * component at a time without following a symlink (an ancestor swapped
 * for one fails: ELOOP or ENOTDIR). Returns an O_PATH descriptor or
 * -errno; *leaf points into path. */
static int open_parent(const char *path, const char **leaf)
{
    if (path[0] != '/' || strcmp(path, "/") == 0)
        return -EINVAL;
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *p = path + 1;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.') ||
            len >= 256) {
            close(fd);
            return -EINVAL;
        }
        if (!slash) {
            *leaf = p;
            return fd;
        }
        char comp[256];
        memcpy(comp, p, len);
        comp[len] = '\0';
        int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int err = -errno;
        close(fd);
        if (next < 0)
            return err;
        fd = next;
        p = slash + 1;
    }
}

typedef struct ident {
    char kind; /* 'd' or 'f' */
    unsigned long long dev, ino;
    long long bsec, csec;
    long bnsec, cnsec;
    unsigned long gen; /* i_generation where the file system has one, else 0 */
} ident;

/* The inode's generation (ext4, btrfs, xfs): a new inode that reuses a
 * removed one's number gets another, where the coarse clock may give the
 * same birth time. */
static unsigned long generation(int dfd, const char *leaf)
{
    int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int gen = 0;
    if (fd >= 0) {
        if (ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
            gen = 0;
        close(fd);
    }
    return (unsigned long)(unsigned)gen;
}

static int ident_at(int dfd, const char *leaf, ident *id, long long *size)
{
    struct statx sx;
    if (statx(dfd, leaf, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
        return -errno;
    id->kind = S_ISDIR(sx.stx_mode) ? 'd' : S_ISREG(sx.stx_mode) ? 'f' : '?';
    id->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    id->ino = sx.stx_ino;
    bool birth = sx.stx_mask & STATX_BTIME;
    id->bsec = birth ? sx.stx_btime.tv_sec : 0;
    id->bnsec = birth ? (long)sx.stx_btime.tv_nsec : 0;
    id->csec = sx.stx_ctime.tv_sec;
    id->cnsec = (long)sx.stx_ctime.tv_nsec;
    if (size)
        *size = (long long)sx.stx_size;
    id->gen = id->kind == '?' ? 0 : generation(dfd, leaf);
    return 0;
}

/* Is what is there now the placeholder recorded? */
static bool same(const ident *rec, const ident *now, long long size)
{
    if (rec->kind != now->kind || rec->dev != now->dev || rec->ino != now->ino ||
        rec->bsec != now->bsec || rec->bnsec != now->bnsec || rec->gen != now->gen)
        return false;
    return rec->kind == 'd' ||
           (size == 0 && rec->csec == now->csec && rec->cnsec == now->cnsec);
}

/* ---- making ------------------------------------------------------------ */

static void record_line(gk_buf *b, const ident *id, const char *path)
{
    gk_buf_printf(b, "%c %llu %llu %lu %lld.%09ld %lld.%09ld ", id->kind, id->dev, id->ino,
                  id->gen, id->bsec, id->bnsec, id->csec, id->cnsec);
    for (const char *c = path; *c; c++) {
        if (*c == '\\')
            gk_buf_puts(b, "\\\\");
        else if (*c == '\n')
            gk_buf_puts(b, "\\n");
        else
            gk_buf_putc(b, *c);
    }
    gk_buf_putc(b, '\n');
}

/* Does v hold the options a b c (a c when b is NULL) in a row? */
static bool has_triple(const gk_strvec *v, const char *a, const char *b, const char *c)
{
    size_t w = b ? 3 : 2;
    for (size_t k = 0; k + w <= v->n; k++)
        if (strcmp(v->v[k], a) == 0 && (!b || strcmp(v->v[k + 1], b) == 0) &&
            strcmp(v->v[k + w - 1], c) == 0)
            return true;
    return false;
}

/* What bwrap would make at placeholder i: 'd', 'f', or 0 when the plan
 * does not say (its mask is under another name: bwrap makes it, and it is
 * not removed). */
static char kind_of(const gk_bwrap_plan *plan, size_t i)
{
    const char *p = plan->placeholders.v[i];
    for (size_t k = 0; k < plan->placeholders.n; k++)
        if (k != i && gk_path_within(plan->placeholders.v[k], p))
            return 'd';
    if (has_triple(&plan->late_options, "--ro-bind", "/dev/null", p))
        return 'f';
    if (has_triple(&plan->late_options, "--tmpfs", NULL, p))
        return 'd';
    for (size_t k = 0; k < plan->nmounts; k++)
        if (strcmp(plan->mounts[k].dest, p) == 0)
            return plan->mounts[k].is_file ? 'f' : 'd';
    return 0;
}

static void make_one(int lock_fd, const char *path, char kind)
{
    const char *leaf;
    int dfd = open_parent(path, &leaf);
    if (dfd < 0)
        return; /* bwrap will fail on it, or make it: then it stays */
    int rc;
    if (kind == 'd') {
        rc = mkdirat(dfd, leaf, 0755);
    } else {
        rc = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (rc >= 0)
            rc = close(rc);
    }
    ident id;
    /* EEXIST: a concurrent run made it, and recorded it. */
    if (rc == 0 && ident_at(dfd, leaf, &id, NULL) == 0) {
        gk_buf line = {0};
        record_line(&line, &id, path);
        if (write(lock_fd, line.data, line.len) != (ssize_t)line.len) {
            /* unrecorded: it stays on the host, the mask holds */
        }
        gk_buf_free(&line);
    }
    close(dfd);
}

void gk_placeholders_make(gk_placeholders *ph, const gk_bwrap_plan *plan)
{
    if (ph->lock_fd < 0)
        return;
    /* Shallowest first: the plan lists them deepest first. */
    for (size_t i = plan->placeholders.n; i-- > 0;) {
        char kind = kind_of(plan, i);
        if (kind)
            make_one(ph->lock_fd, plan->placeholders.v[i], kind);
    }
}

/* ---- removing ---------------------------------------------------------- */

typedef struct entry {
    ident id;
    char *path;
    size_t depth;
    char *line; /* as read, kept when the entry stays */
} entry;

static bool parse_line(const char *line, entry *e)
{
    memset(e, 0, sizeof(*e));
    int off = 0;
    if (sscanf(line, "%c %llu %llu %lu %lld.%ld %lld.%ld %n", &e->id.kind, &e->id.dev,
               &e->id.ino, &e->id.gen, &e->id.bsec, &e->id.bnsec, &e->id.csec, &e->id.cnsec,
               &off) != 8 ||
        off == 0 || (e->id.kind != 'd' && e->id.kind != 'f') || line[off] != '/')
        return false;
    gk_buf p = {0};
    for (const char *c = line + off; *c; c++) {
        if (*c == '\\' && (c[1] == '\\' || c[1] == 'n')) {
            gk_buf_putc(&p, c[1] == 'n' ? '\n' : '\\');
            c++;
        } else {
            gk_buf_putc(&p, *c);
        }
        if (*c == '/')
            e->depth++;
    }
    e->path = gk_buf_steal(&p, NULL);
    e->line = gk_strdup(line);
    return true;
}

static int deepest_first(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth > y->depth ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Remove e if it is still the placeholder made and still empty. Returns
 * true when the record keeps it (it could not be removed for now). */
static bool remove_one(const entry *e)
{
    const char *leaf;
    int dfd = open_parent(e->path, &leaf);
    if (dfd < 0)
        return false; /* gone, or reached only through a symlink now */
    ident now;
    long long size = 0;
    bool keep = false;
    if (ident_at(dfd, leaf, &now, &size) == 0 && same(&e->id, &now, size)) {
        /* A directory with something inside is no placeholder any more. */
        int rc = unlinkat(dfd, leaf, e->id.kind == 'd' ? AT_REMOVEDIR : 0);
        keep = rc < 0 && errno == EBUSY; /* a mountpoint here: later */
    }
    close(dfd);
    return keep;
}

static char *read_record(int fd, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || (unsigned long long)st.st_size > RECORD_MAX)
        return NULL;
    char *data = gk_malloc((size_t)st.st_size + 1);
    ssize_t n = pread(fd, data, (size_t)st.st_size, 0);
    if (n < 0)
        n = 0;
    data[n] = '\0';
    *len = (size_t)n;
    return data;
}

/* With the lock exclusive: every recorded placeholder, deepest first. */
static void remove_recorded(int fd)
{
    size_t len = 0;
    char *data = read_record(fd, &len);
    if (!data)
        return;
    entry *v = NULL;
    size_t n = 0, cap = 0;
    for (char *line = data, *nl; line < data + len; line = nl + 1) {
        if (!(nl = strchr(line, '\n')))
            break; /* a line cut short: its run never finished writing it */
        *nl = '\0';
        entry e;
        if (parse_line(line, &e))
            GK_VEC_PUSH(v, n, cap, e);
    }
    if (n)
        qsort(v, n, sizeof(*v), deepest_first);
    gk_buf kept = {0};
    for (size_t i = 0; i < n; i++) {
        if (remove_one(&v[i])) {
            gk_buf_puts(&kept, v[i].line);
            gk_buf_putc(&kept, '\n');
        }
        free(v[i].path);
        free(v[i].line);
    }
    free(v);
    free(data);
    if (ftruncate(fd, 0) == 0 && kept.len && write(fd, kept.data, kept.len) < 0) {
        /* lost: those stay on the host */
    }
    gk_buf_free(&kept);
}

void gk_placeholders_release(gk_placeholders *ph)
{
    if (ph->lock_fd >= 0) {
        /* Converting drops the shared lock first: of two runs ending at
         * once, the second always gets it. Nothing is removed under a
         * lock no longer named (still_named): the placeholders stay. */
        if (flock(ph->lock_fd, LOCK_EX | LOCK_NB) == 0 && still_named(ph->lock_fd))
            remove_recorded(ph->lock_fd);
        close(ph->lock_fd);
    }
    ph->lock_fd = -1;
    free(ph->dir);
    ph->dir = NULL;
}
