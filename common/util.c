/* util.c - allocation, strings, vectors, buffers, file I/O. */
#include "common/util.h"
#include "grant/grant.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void gk_freep(void *pp)
{
    free(*(void **)pp);
}

static void *gk_oom(void)
{
    abort();
}

void *gk_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : gk_oom();
}

void *gk_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    return p ? p : gk_oom();
}

void *gk_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : gk_oom();
}

char *gk_strdup(const char *s)
{
    return s ? gk_strndup(s, strlen(s)) : NULL;
}

char *gk_strndup(const char *s, size_t n)
{
    char *d = gk_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *gk_concat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = gk_malloc(na + nb + 1);
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
    return s;
}

char *gk_vprintf(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        gk_oom();
    return s;
}

char *gk_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gk_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

bool gk_str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

bool gk_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool gk_has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

int gk_strcmp_bytes(const char *a, const char *b)
{
    /* strcmp compares as unsigned char, which is memcmp order for strings. */
    return strcmp(a, b);
}

int gk_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t gk_path_root_len(const char *p)
{
    if (p[0] == '/')
        return 1;
    /* Only the windows target freezes drive paths; elsewhere every
     * absolute path starts with '/', so this never changes their answers. */
    if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
        p[2] == '/')
        return 3;
    return 0;
}

bool gk_path_within(const char *p, const char *q)
{
    size_t n = strlen(q);
    if (n == 1 && q[0] == '/')
        return p[0] == '/';
    /* A drive root "C:/" holds everything on its drive, as "/" does. */
    if (n == 3 && gk_path_root_len(q) == 3)
        return strncmp(p, q, 3) == 0;
    if (strncmp(p, q, n) != 0)
        return false;
    return p[n] == '\0' || p[n] == '/';
}

const char *gk_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

char *gk_path_parent(const char *p)
{
    const char *s = strrchr(p, '/');
    if (!s || (s == p && p[1] == '\0'))
        return NULL;
    if (s == p)
        return gk_strdup("/");
    if (gk_path_root_len(p) == 3 && s == p + 2) /* "C:/x" -> "C:/"; "C:/" has none */
        return p[3] ? gk_strndup(p, 3) : NULL;
    return gk_strndup(p, (size_t)(s - p));
}

char *gk_path_join(const char *dir, const char *name)
{
    /* Without printf: resolution and the PATH walk join on every query. */
    size_t n = strlen(dir), m = strlen(name);
    bool slash = !(n && dir[n - 1] == '/');
    char *out = gk_malloc(n + slash + m + 1);
    memcpy(out, dir, n);
    if (slash)
        out[n] = '/';
    memcpy(out + n + slash, name, m + 1);
    return out;
}

size_t gk_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    size_t *row = gk_malloc((m + 1) * sizeof(*row));
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[m];
    free(row);
    return d;
}

const char *gk_nearest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    size_t len = strlen(word);
    /* Allow about one edit per three characters, at least one, at most three. */
    size_t limit = len / 3 + 1;
    if (limit > 3)
        limit = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = gk_edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best_d <= limit ? best : NULL;
}

bool gk_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned c = *p;
        size_t need;
        unsigned cp;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if ((size_t)(end - p) <= need)
            return false;
        for (size_t i = 1; i <= need; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
        if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return false;
        p += need + 1;
    }
    return true;
}

void gk_strvec_push(gk_strvec *sv, const char *s)
{
    gk_strvec_push_take(sv, gk_strdup(s));
}

void gk_strvec_push_take(gk_strvec *sv, char *s)
{
    GK_VEC_PUSH(sv->v, sv->n, sv->cap, s);
}

bool gk_strvec_contains(const gk_strvec *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return true;
    return false;
}

void gk_strvec_sort_unique(gk_strvec *sv)
{
    if (sv->n < 2)
        return;
    qsort(sv->v, sv->n, sizeof(char *), gk_cmp_strp);
    size_t w = 1;
    for (size_t r = 1; r < sv->n; r++) {
        if (strcmp(sv->v[r], sv->v[w - 1]) == 0)
            free(sv->v[r]);
        else
            sv->v[w++] = sv->v[r];
    }
    sv->n = w;
}

void gk_strvec_copy(gk_strvec *dst, const gk_strvec *src)
{
    for (size_t i = 0; i < src->n; i++)
        gk_strvec_push(dst, src->v[i]);
}

void gk_strvec_free(gk_strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

char *gk_strvec_join(const gk_strvec *sv, const char *sep)
{
    gk_buf b = {0};
    for (size_t i = 0; i < sv->n; i++) {
        if (i)
            gk_buf_puts(&b, sep);
        gk_buf_puts(&b, sv->v[i]);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

long gk_strvec_index(const gk_strvec *sv, const char *s)
{
    size_t lo = 0, hi = sv->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sv->v[mid], s);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

bool gk_strvec_bsearch(const gk_strvec *sv, const char *s)
{
    return gk_strvec_index(sv, s) >= 0;
}

void gk_advise_large(void *p, size_t n)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!p || n < ((size_t)4 << 20))
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
#ifdef MADV_HUGEPAGE
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
}

void gk_buf_grow(gk_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = gk_realloc(b->data, cap);
    b->cap = cap;
}

void gk_buf_printf(gk_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gk_vprintf(fmt, ap);
    va_end(ap);
    gk_buf_puts(b, s);
    free(s);
}

char *gk_buf_steal(gk_buf *b, size_t *len)
{
    gk_buf_grow(b, 0);
    b->data[b->len] = '\0'; /* a buffer never written to is "" too */
    char *d = b->data;
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

void gk_buf_free(gk_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int gk_read_file(const char *path, char **out, size_t *len)
{
    return gk_read_file_max(path, GK_INPUT_MAX, out, len);
}

int gk_read_file_max(const char *path, size_t max, char **out, size_t *len)
{
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    /* O_NONBLOCK: a FIFO without a writer must not hang the open; what is
     * not a regular file is refused below before anything is read. */
    int fd = is_stdin ? dup(0) : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    int refuse = S_ISDIR(st.st_mode)                      ? -EISDIR
                 : !is_stdin && !S_ISREG(st.st_mode)      ? -EINVAL
                 : S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max ? -EFBIG
                                                          : 0;
    if (refuse) {
        close(fd);
        return refuse;
    }
    /* Read in place: a regular file's size is the first guess (a git index
     * of a large repository is megabytes; a chunk copied on would be read
     * twice over), room grows for one that grows or a pipe. */
    gk_buf b = {0};
    gk_buf_grow(&b, S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536);
    for (;;) {
        if (b.cap - b.len < 2)
            gk_buf_grow(&b, 65536);
        ssize_t r = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            gk_buf_free(&b);
            return e;
        }
        if (r == 0)
            break;
        /* A file that grows while read, or a pipe on standard input, stops
         * at the same bound. */
        if (b.len + (size_t)r > max) {
            close(fd);
            gk_buf_free(&b);
            return -EFBIG;
        }
        b.len += (size_t)r;
        b.data[b.len] = '\0';
    }
    close(fd);
    *out = gk_buf_steal(&b, len);
    return 0;
}

const char *gk_read_strerror(int rc)
{
    switch (rc) {
    case -EINVAL:
        return "not a regular file (policy inputs are regular files or standard input)";
    case -EFBIG:
        return "larger than the 64 MiB a policy input may be";
    default:
        return strerror(-rc);
    }
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Not a regular file (/dev/null, a fifo, a terminal): renaming over it
 * would replace the device itself, so write to it in place. */
static int write_in_place(const char *path, const char *data, size_t len)
{
    /* O_NONBLOCK for the open only: a FIFO nobody reads fails (ENXIO)
     * instead of hanging; the writes then block as usual. */
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int err = write_all(fd, data, len);
    if (close(fd) < 0 && !err)
        err = -errno;
    return err;
}

/* A new temporary file DIR/.BASE.NNNNNNNN beside the target. O_EXCL with
 * mode 0666 lets the kernel apply the umask (reading it would mean setting
 * it, which races with other threads creating files); a name another writer
 * holds is retried. Returns the fd or -errno, *tmp the name. */
static int create_temp(const char *dir, const char *base, char **tmp)
{
    static unsigned counter;
    for (int tries = 0; tries < 100; tries++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        unsigned id = (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec ^ n * 40503u;
        *tmp = gk_printf("%s/.%s.%08x", dir, base, id);
        int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0)
            return fd;
        int err = -errno;
        free(*tmp);
        *tmp = NULL;
        if (err != -EEXIST)
            return err;
    }
    return -EEXIST;
}

/* Write, fsync, rename over path, fsync the directory (the rename itself
 * is durable then). path is a regular file or missing. The signals in hold
 * (NULL: none) stay blocked while the temporary file exists, so one of
 * them cannot end the process between its creation and its rename or
 * removal; a pending one is delivered when the old mask comes back. */
static int replace_file(const char *path, const char *data, size_t len, const sigset_t *hold)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        return -EISDIR;
    gk_autofree char *dir = !slash         ? gk_strdup(".")
                            : slash == path ? gk_strdup("/")
                                            : gk_strndup(path, (size_t)(slash - path));
    struct stat st;
    bool existed = stat(path, &st) == 0;
    gk_autofree char *tmp = NULL;
    sigset_t saved;
    bool held = hold && pthread_sigmask(SIG_BLOCK, hold, &saved) == 0;
    int fd = create_temp(dir, base, &tmp);
    if (fd < 0) {
        if (held)
            pthread_sigmask(SIG_SETMASK, &saved, NULL);
        return fd;
    }
    /* An existing file keeps its permission bits. */
    int err = existed && fchmod(fd, st.st_mode & 07777) < 0 ? -errno : 0;
    if (!err)
        err = write_all(fd, data, len);
    if (!err && fsync(fd) < 0)
        err = -errno;
    if (close(fd) < 0 && !err)
        err = -errno;
    if (!err && rename(tmp, path) < 0)
        err = -errno;
    if (err)
        unlink(tmp);
    if (held)
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (err)
        return err;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

static int write_file_atomic(const char *path, const char *data, size_t len, const sigset_t *hold)
{
    if (!path || !*path || (!data && len))
        return -EINVAL;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return write_in_place(path, data, len);
    /* A symlink to a file: replace the file, keep the link. */
    gk_autofree char *resolved = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        resolved = realpath(path, NULL);
    return replace_file(resolved ? resolved : path, data, len, hold);
}

int gk_write_file_atomic(const char *path, const char *data, size_t len)
{
    return write_file_atomic(path, data, len, NULL);
}

int grant_read_input(const char *path, char **out, size_t *len)
{
    if (!path || !out)
        return -EINVAL;
    size_t n = 0;
    int rc = gk_read_file(path, out, &n);
    if (len)
        *len = rc == 0 ? n : 0;
    return rc;
}

const char *grant_read_strerror(int rc)
{
    return gk_read_strerror(rc);
}

int grant_write_file_atomic(const char *path, const char *data, size_t len)
{
    return write_file_atomic(path, data, len, NULL);
}

int grant_write_file_atomic_holding(const char *path, const char *data, size_t len,
                                    const sigset_t *hold)
{
    return write_file_atomic(path, data, len, hold);
}

int gk_memfd_with(const char *name, const void *data, size_t len, bool seal)
{
    int fd = memfd_create(name, MFD_CLOEXEC | (seal ? MFD_ALLOW_SEALING : 0));
    if (fd < 0)
        return -errno;
    const char *p = data;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? -errno : -EIO;
            close(fd);
            return err;
        }
        off += (size_t)w;
    }
    if (lseek(fd, 0, SEEK_SET) < 0 ||
        (seal &&
         fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void gk_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
