/* cli_util.c - messages, input, atomic output and JSON strings for the CLIs. */
#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_progname = "grantc";

static void vmessage(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", cli_progname);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname);
}

size_t cli_print_diags(const grant_diags *d)
{
    size_t n = grant_diags_count(d);
    for (size_t i = 0; i < n; i++) {
        char *text = grant_diags_render(d, i);
        if (!text)
            continue;
        size_t len = strlen(text);
        fputs(text, stderr);
        if (len == 0 || text[len - 1] != '\n')
            fputc('\n', stderr);
        free(text);
    }
    return grant_diags_errors(d);
}

static int read_fd(int fd, char **out, size_t *len)
{
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    for (;;) {
        if (cap - n < 2) {
            cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown)
                abort();
            buf = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            free(buf);
            return -err;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int cli_read_input(const char *path, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0)
        return read_fd(STDIN_FILENO, out, len);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return -EISDIR;
    }
    int rc = read_fd(fd, out, len);
    close(fd);
    return rc;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t put = write(fd, data, len);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        data += put;
        len -= (size_t)put;
    }
    return 0;
}

/* The directory part of path ("." when there is none). Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static int write_atomic_at(const char *path, const char *data, size_t len);

static mode_t mode_for(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return st.st_mode & 07777;
    /* umask can only be read by setting it; we are single-threaded here. */
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

/* Not a regular file (/dev/null, a fifo, a terminal): renaming a temporary
 * file over it would replace the device itself, so write to it directly. */
static int write_special(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, data, len);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

int cli_write_atomic(const char *path, const char *data, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return write_special(path, data, len);
    /* A symlink to a file: replace the file, keep the link. */
    char *resolved = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (resolved = realpath(path, NULL)))
        path = resolved;
    int rc = write_atomic_at(path, data, len);
    free(resolved);
    return rc;
}

static int write_atomic_at(const char *path, const char *data, size_t len)
{
    char *dir = dir_of(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!dir)
        abort();
    if (*base == '\0') {
        free(dir);
        return -EISDIR;
    }
    size_t tlen = strlen(dir) + strlen(base) + 16;
    char *tmp = malloc(tlen);
    if (!tmp)
        abort();
    snprintf(tmp, tlen, "%s/.%s.XXXXXX", dir, base);

    int rc = 0;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    if (fchmod(fd, mode_for(path)) < 0 || (rc = write_all(fd, data, len)) < 0 || fsync(fd) < 0) {
        if (rc == 0)
            rc = -errno;
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        rc = -errno;
        unlink(tmp);
        goto out;
    }
    /* Make the rename itself durable. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
out:
    free(tmp);
    free(dir);
    return rc;
}

int cli_write_stream(FILE *f, const char *data, size_t len)
{
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, f) != len)
        return errno ? -errno : -EIO;
    if (fflush(f) != 0)
        return errno ? -errno : -EIO;
    return 0;
}

void cli_json_string(FILE *f, const char *s)
{
    char *lit = grant_json_string(s);
    fputs(lit, f);
    free(lit);
}

bool cli_is_yaml_name(const char *name)
{
    size_t n = strlen(name);
    return (n >= 5 && strcmp(name + n - 5, ".yaml") == 0) ||
           (n >= 4 && strcmp(name + n - 4, ".yml") == 0);
}
