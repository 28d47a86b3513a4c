/* probe_memo.c - auto's probe answer, remembered when it is yes (see
 * probe_memo.h).
 *
 * The memo is one small file in the runtime directory, "probe-yes" (the
 * probe made no network namespace) or "probe-yes.netns", holding a header
 * line and the key; it is used only when it is a regular file of ours,
 * the key matches byte for byte, and its mtime is recent. Written to a
 * temporary name and renamed, so a reader sees a whole memo or none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/probe_memo.h"
#include "runtime/placeholders.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MEMO_HEADER "grantkit-probe-memo 1\n"
#define MEMO_MAX 8192
#define MEMO_PLAIN "probe-yes"
#define MEMO_NETNS "probe-yes.netns"

/* "name=value" for a file that may be missing on this kernel ("-"). */
static void add_file(gk_buf *key, const char *name, const char *path)
{
    gk_autofree char *v = NULL;
    size_t len = 0;
    gk_buf_puts(key, name);
    gk_buf_putc(key, '=');
    if (gk_read_file_max(path, MEMO_MAX, &v, &len) == 0) {
        while (len && v[len - 1] == '\n')
            len--;
        /* One line of text: SELinux's label ends in a NUL, which would cut
         * the key short as a C string. */
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)v[i];
            if (c < 0x20 || c >= 0x7f || c == '\\')
                gk_buf_printf(key, "\\x%02x", c);
            else
                gk_buf_putc(key, (char)c);
        }
    } else {
        gk_buf_puts(key, "-");
    }
    gk_buf_putc(key, '\n');
}

char *gk_probe_memo_key(void)
{
    gk_buf key = {0};
    gk_autofree char *status = NULL;
    size_t status_len = 0;
    gk_buf_printf(&key, "euid=%u egid=%u\n", (unsigned)geteuid(), (unsigned)getegid());
    add_file(&key, "boot", "/proc/sys/kernel/random/boot_id");
    /* The caller's own namespaces: another container, or a nested
     * sandbox that refuses new ones (bwrap --disable-userns), is another
     * key. */
    static const char *const ns[] = {"user", "mnt", "net", "pid", "ipc", "uts", "cgroup"};
    struct stat root;
    if (stat("/proc/self/root", &root) < 0) /* a chroot is another host */
        goto unknown;
    gk_buf_printf(&key, "root=%llu:%llu\n", (unsigned long long)root.st_dev,
                  (unsigned long long)root.st_ino);
    for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
        if (stat(path, &st) < 0)
            goto unknown;
        gk_buf_printf(&key, "ns.%s=%llu:%llu\n", ns[i], (unsigned long long)st.st_dev,
                      (unsigned long long)st.st_ino);
    }
    static const char *const sysctls[] = {
        "user/max_user_namespaces", "user/max_mnt_namespaces", "user/max_net_namespaces",
        "user/max_pid_namespaces", "user/max_ipc_namespaces", "user/max_uts_namespaces",
        "kernel/unprivileged_userns_clone", "kernel/apparmor_restrict_unprivileged_userns",
        "kernel/apparmor_restrict_unprivileged_unconfined"};
    for (size_t i = 0; i < sizeof(sysctls) / sizeof(*sysctls); i++) {
        gk_autofree char *path = gk_printf("/proc/sys/%s", sysctls[i]);
        add_file(&key, sysctls[i], path);
    }
    add_file(&key, "lsm", "/proc/self/attr/current");
    add_file(&key, "apparmor", "/proc/self/attr/apparmor/current");
    /* What the caller may do: capabilities, no_new_privs, seccomp (mode
     * and the number of filters stacked on it). */
    if (gk_read_file_max("/proc/self/status", MEMO_MAX, &status, &status_len) != 0)
        goto unknown;
    static const char *const fields[] = {"CapEff:", "CapBnd:", "NoNewPrivs:", "Seccomp:",
                                         "Seccomp_filters:"};
    for (const char *line = status; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
            if (strncmp(line, fields[i], strlen(fields[i])) == 0) {
                gk_buf_add(&key, line, n);
                gk_buf_putc(&key, '\n');
            }
        line = end ? end + 1 : NULL;
    }
    return gk_buf_steal(&key, NULL);
unknown:
    gk_buf_free(&key);
    return NULL;
}

/* The memo's age if dir holds name with exactly this key, else -1. */
static long memo_age_in(int dir, const char *name, const char *key)
{
    /* O_NONBLOCK: a FIFO planted there must not hold the run */
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    long age = -1;
    char buf[MEMO_MAX];
    size_t want = strlen(MEMO_HEADER) + strlen(key);
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (size_t)st.st_size == want && want <= sizeof(buf)) {
        ssize_t n = read(fd, buf, sizeof(buf));
        time_t now = time(NULL);
        /* A memo from the future (a clock set back) is as stale as an old one. */
        if (n == (ssize_t)want && memcmp(buf, MEMO_HEADER, strlen(MEMO_HEADER)) == 0 &&
            memcmp(buf + strlen(MEMO_HEADER), key, strlen(key)) == 0 &&
            st.st_mtime <= now + 2 && now - st.st_mtime < GK_PROBE_MEMO_SECONDS)
            age = st.st_mtime > now ? 0 : (long)(now - st.st_mtime);
    }
    close(fd);
    return age;
}

long gk_probe_memo_age(const char *key, bool netns)
{
    int dir = gk_runtime_dir(NULL);
    if (dir < 0)
        return -1;
    long age = memo_age_in(dir, MEMO_NETNS, key);
    if (age < 0 && !netns)
        age = memo_age_in(dir, MEMO_PLAIN, key);
    close(dir);
    return age;
}

void gk_probe_memo_store(const char *key, bool netns)
{
    int dir = gk_runtime_dir(NULL);
    if (dir < 0)
        return;
    /* By hand, relative to the directory, never through a name that may
     * be a link: rename replaces whatever the final name is, not its
     * target. */
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".probe-yes.%ld", (long)getpid());
    gk_autofree char *text = gk_printf("%s%s", MEMO_HEADER, key);
    size_t len = strlen(text);
    unlinkat(dir, tmp, 0);
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (!ok || renameat(dir, tmp, dir, netns ? MEMO_NETNS : MEMO_PLAIN) != 0)
        unlinkat(dir, tmp, 0); /* nothing remembered: the next run probes */
    close(dir);
}

void gk_probe_memo_forget(void)
{
    int dir = gk_runtime_dir(NULL);
    if (dir < 0)
        return;
    unlinkat(dir, MEMO_NETNS, 0);
    unlinkat(dir, MEMO_PLAIN, 0);
    close(dir);
}
