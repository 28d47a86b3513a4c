/* helper.c - grantkit-helper, the envelope's first program (backends.md,
 * "The helper"): tiny, static, libc only.
 *
 *   grantkit-helper [--status-fd N] [--pin-link PATH]... [--noexec PATH]... [--stdio guard]
 *                   [--nproc N]
 *                   [--nofile N] [--cpu SECONDS] [--as BYTES] [--landlock-fd N]
 *                   [--seccomp-fd N]... [--seccomp-notify-fd N --notify-fd N]
 *                   [--net-relay PORT:TOKEN:CONTROL] -- COMMAND [ARG...]
 *
 * Runs inside bwrap with CAP_SYS_ADMIN in the envelope's user namespace
 * only, and in this order: makes each --pin-link symlink a mountpoint of
 * its own (a bind of the link onto itself, so it can be neither removed
 * nor renamed nor replaced); remounts each --noexec path nosuid,nodev,noexec
 * (keeping the flags the mount already has, which a user namespace may not
 * clear); sets the resource limits; sets no_new_privs and drops every
 * capability; applies the Landlock ruleset read from --landlock-fd; loads
 * the seccomp programs read from each --seccomp-fd (in the envelope the
 * mount filter; at the landlock level, where the helper runs alone, the
 * main and mount filters and its own, runtime/level.c); with
 * --seccomp-notify-fd, loads that program last with a listener
 * (SECCOMP_FILTER_FLAG_NEW_LISTENER) and sends the listener to grantrun
 * over the socket --notify-fd (SCM_RIGHTS after "GKN1"), keeping no copy,
 * and waits for grantrun's "ok": its supervisor holds it before the
 * command can make a call it answers (runtime/unixnet.h); with
 * --net-relay, hands the envelope's loopback listeners on PORT to the
 * network proxy through its CONTROL socket, with the run's TOKEN
 * (relay.h); execs
 * COMMAND (PATH search in the envelope's environment). When it remounted
 * anything noexec, a regular file on descriptor 0-2 reaches COMMAND as a
 * pipe, the helper staying behind as its relay (guard_stdio); with
 * --stdio guard (the namespaces level), a read-only one too, and a
 * directory there fails the run.
 *
 * Status pipe (--status-fd, close-on-exec): the helper first writes
 * "started" (so a launcher tells "bwrap never ran the helper" from "the
 * command ran"); then EOF means the exec happened. Otherwise one line
 * "setup <step>: <reason>" (exit 125) or "exec <errno> <reason>" (exit 127
 * for ENOENT, else 126) says what failed. Every failure stops before the
 * command runs: nothing runs with less confinement than asked (fail
 * closed).
 *
 * Landlock ruleset format (one item per line; a path runs to the end of
 * its line, so a path holding a newline cannot be expressed and the
 * launcher refuses it):
 *   grantkit-landlock 1
 *   abi N                 the lowest ABI whose rights the ruleset uses
 *   net HEX               handled_access_net, no rule: TCP bind/connect denied
 *                         (optional, before handled; ABI 4)
 *   scope HEX             scoped: abstract Unix sockets, signals (optional,
 *                         before handled; ABI 6)
 *   handled HEX           handled_access_fs (kernel bit values)
 *   rule HEX f|d PATH     allowed access beneath PATH (f: a file)
 * A rule whose path does not open is skipped (a -try bind that mounted
 * nothing); a kernel older than `abi` is refused.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/relay.h"
#include "runtime/syscalls.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef SYS_capset
#define SYS_capset 126
#endif

/* Debian 12's headers stop at Landlock ABI 2: the structures are defined
 * here, as the kernel's uapi has them. */
struct gk_ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};
struct gk_ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));
#define GK_LL_CREATE_RULESET_VERSION (1U << 0)
#define GK_LL_RULE_PATH_BENEATH 1
/* Rights that apply to a file (the others only to directories). */
#define GK_LL_FILE_RIGHTS ((1ULL << 0) | (1ULL << 1) | (1ULL << 2) | (1ULL << 14) | (1ULL << 15))

#define MAX_NOEXEC 4096
#define MAX_PINS 4096
#define MAX_INPUT (16u << 20)

static int status_fd = -1;

static void report(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void report(int code, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    int fd = status_fd >= 0 ? status_fd : 2;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += w;
    }
    _exit(code);
}

static void usage(const char *why)
{
    report(125, "setup usage: %s", why);
}

static long number(const char *flag, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        report(125, "setup usage: %s: not a number: %s", flag, s);
    return v;
}

/* Read a whole descriptor (at most MAX_INPUT bytes), NUL-terminated. */
static char *slurp(int fd, size_t *len, const char *what)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        report(125, "setup %s: out of memory", what);
    for (;;) {
        if (n + 1 == cap) {
            if (cap >= MAX_INPUT)
                report(125, "setup %s: input too large", what);
            cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown)
                report(125, "setup %s: out of memory", what);
            buf = grown;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            report(125, "setup %s: read: %s", what, strerror(errno));
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    close(fd);
    return buf;
}

/* 0. A symlink bound onto itself: a mountpoint cannot be unlinked or
 * renamed (EBUSY), so the protected name keeps leading where it led. It
 * must still be the symlink the launcher saw: anything else (gone, or
 * replaced since) fails the run. */
static void pin_link(const char *path)
{
    int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path,
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
    if (fd < 0)
        report(125, "setup pin %s: %s", path, strerror(errno));
    struct stat st;
    if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
        report(125, "setup pin %s: no longer a symlink", path);
    if (syscall(SYS_move_mount, fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
        report(125, "setup pin %s: %s", path, strerror(errno));
    close(fd);
}

/* 1. nosuid,nodev,noexec on a mount, keeping every flag it has (a user
 * namespace may not clear a flag the mount was locked with). */
static void remount_noexec(const char *path)
{
    struct statvfs sv;
    if (statvfs(path, &sv) < 0)
        report(125, "setup mount %s: %s", path, strerror(errno));
    static const struct {
        unsigned long st, ms;
    } keep[] = {
        {ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},         {ST_NODEV, MS_NODEV},
        {ST_NOEXEC, MS_NOEXEC},     {ST_SYNCHRONOUS, MS_SYNCHRONOUS}, {ST_MANDLOCK, MS_MANDLOCK},
        {ST_NOATIME, MS_NOATIME},   {ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME},
    };
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
        if (sv.f_flag & keep[i].st)
            flags |= keep[i].ms;
    if (mount(NULL, path, NULL, flags, NULL) < 0)
        report(125, "setup mount %s noexec: %s", path, strerror(errno));
}

/* soft = value; hard = value + grace (CPU: SIGXCPU first, SIGKILL a
 * second later). A limit already lower stays: raising a hard limit needs
 * a capability the helper does not have, and the lower one is stricter. */
static void set_limit(int resource, const char *name, long value, long grace)
{
    if (value < 0)
        return;
    struct rlimit cur, rl = {(rlim_t)value, (rlim_t)value + (rlim_t)grace};
    if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
        if (rl.rlim_max > cur.rlim_max)
            rl.rlim_max = cur.rlim_max;
        if (rl.rlim_cur > rl.rlim_max)
            rl.rlim_cur = rl.rlim_max;
    }
    if (setrlimit(resource, &rl) < 0)
        report(125, "setup rlimit %s: %s", name, strerror(errno));
}

/* 3. no_new_privs, then no capability in any set. */
static void drop_privileges(void)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        report(125, "setup no_new_privs: %s", strerror(errno));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        report(125, "setup ambient capabilities: %s", strerror(errno));
    struct {
        uint32_t version;
        int pid;
    } hdr = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    struct {
        uint32_t effective, permitted, inheritable;
    } data[2];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capset, &hdr, data) < 0)
        report(125, "setup capabilities: %s", strerror(errno));
}

/* 4. The Landlock ruleset (format above). */
static void apply_landlock(int fd)
{
    char *text = slurp(fd, NULL, "landlock");
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    if (!line || strcmp(line, "grantkit-landlock 1") != 0)
        report(125, "setup landlock: not a grantkit-landlock 1 ruleset");
    long need_abi = -1;
    unsigned long long handled = 0, net = 0, scoped = 0;
    bool have_handled = false;
    int ruleset = -1;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, GK_LL_CREATE_RULESET_VERSION);
    while ((line = strtok_r(NULL, "\n", &save))) {
        if (strncmp(line, "abi ", 4) == 0) {
            need_abi = number("abi", line + 4);
            if (abi < need_abi)
                report(125, "setup landlock: the ruleset needs ABI %ld, this kernel has %s",
                       need_abi, abi < 0 ? strerror(errno) : "an older one");
        } else if ((strncmp(line, "net ", 4) == 0 || strncmp(line, "scope ", 6) == 0) &&
                   !have_handled) {
            bool is_net = line[0] == 'n';
            char *end;
            unsigned long long v = strtoull(line + (is_net ? 4 : 6), &end, 16);
            if (*end || !v)
                report(125, "setup landlock: bad %s line", is_net ? "net" : "scope");
            *(is_net ? &net : &scoped) = v;
        } else if (strncmp(line, "handled ", 8) == 0) {
            char *end;
            handled = strtoull(line + 8, &end, 16);
            if (*end || !handled)
                report(125, "setup landlock: bad handled line");
            struct gk_ll_ruleset_attr attr = {handled, net, scoped};
            if (need_abi < 0)
                report(125, "setup landlock: handled before abi");
            /* The kernel takes the structure as long as this ABI knows it. */
            size_t size = scoped ? sizeof(attr) : net ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
            ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
            if (ruleset < 0)
                report(125, "setup landlock: create ruleset: %s", strerror(errno));
            have_handled = true;
        } else if (strncmp(line, "rule ", 5) == 0 && have_handled) {
            char *end;
            unsigned long long access = strtoull(line + 5, &end, 16);
            if (*end != ' ' || (end[1] != 'f' && end[1] != 'd') || end[2] != ' ' || !end[3])
                report(125, "setup landlock: bad rule line: %s", line);
            bool file = end[1] == 'f';
            const char *path = end + 3;
            access &= handled;
            if (file)
                access &= GK_LL_FILE_RIGHTS;
            if (!access)
                continue;
            int pfd = open(path, O_PATH | O_CLOEXEC);
            if (pfd < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                    continue; /* a -try bind that mounted nothing */
                report(125, "setup landlock: open %s: %s", path, strerror(errno));
            }
            struct gk_ll_path_beneath_attr pb = {access, pfd};
            if (syscall(SYS_landlock_add_rule, ruleset, GK_LL_RULE_PATH_BENEATH, &pb, 0) < 0)
                report(125, "setup landlock: rule %s: %s", path, strerror(errno));
            close(pfd);
        } else {
            report(125, "setup landlock: unexpected line: %s", line);
        }
    }
    if (ruleset < 0)
        report(125, "setup landlock: no handled rights");
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
        report(125, "setup landlock: restrict self: %s", strerror(errno));
    close(ruleset);
    free(text);
}

/* 5. A classic BPF program as seccomp_export_bpf writes it. */
static void load_seccomp(int fd)
{
    size_t len = 0;
    char *prog = slurp(fd, &len, "seccomp");
    if (len == 0 || len % sizeof(struct sock_filter) != 0)
        report(125, "setup seccomp: not a BPF program (%zu bytes)", len);
    struct sock_fprog fp = {(unsigned short)(len / sizeof(struct sock_filter)),
                            (struct sock_filter *)prog};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
        report(125, "setup seccomp: %s", strerror(errno));
    free(prog);
}

/* 5a. The program whose connect(2) grantrun's supervisor answers: loaded
 * with a listener, which goes to grantrun; the helper keeps none. Only
 * fatal signals interrupt a call the supervisor took (WAIT_KILLABLE_RECV,
 * Linux 5.19), where the kernel has that. */
static void load_seccomp_listener(int fd, int sock)
{
    size_t len = 0;
    char *prog = slurp(fd, &len, "seccomp listener");
    if (len == 0 || len % sizeof(struct sock_filter) != 0)
        report(125, "setup seccomp listener: not a BPF program (%zu bytes)", len);
    struct sock_fprog fp = {(unsigned short)(len / sizeof(struct sock_filter)),
                            (struct sock_filter *)prog};
    long l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
                     &fp);
    if (l < 0 && errno == EINVAL)
        l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
    if (l < 0)
        report(125, "setup seccomp listener: %s", strerror(errno));
    free(prog);
    int listener = (int)l;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct iovec iov = {(void *)"GKN1", 4};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                       .msg_controllen = sizeof(cm.buf)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &listener, sizeof(int));
    ssize_t w = sendmsg(sock, &m, MSG_NOSIGNAL);
    int err = errno;
    close(listener);
    if (w != 4)
        report(125, "setup seccomp listener: cannot hand it to grantrun: %s",
                strerror(w < 0 ? err : EPROTO));
    char answer[2] = "";
    struct pollfd p = {sock, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1 || read(sock, answer, 2) != 2 || memcmp(answer, "ok", 2) != 0)
        report(125, "setup seccomp listener: grantrun's supervisor did not take it");
    close(sock);
}

/* 5b. Descriptors handed in. A regular file (or block device) on 0-2 is
 * open on the host's mount, not the envelope's noexec one: through
 * /proc/self/fd/N the command could write a program into it and map it
 * executable. When the helper remounted anything noexec, such a
 * descriptor reaches the command as a pipe instead, and the helper stays
 * behind as a relay between pipe and file (confined like the command, and
 * not dumpable, so /proc/PID/fd of the relay is closed to it), ending
 * with the command's status once the command has exited. */
typedef struct relay {
    int file, pipe;
    bool in; /* file -> pipe (a read-only descriptor), else pipe -> file */
    bool done;
    char buf[65536];
    size_t len, off;
} relay;

static bool exec_capable_file(int fd, struct stat *st)
{
    struct statvfs sv;
    if (fstat(fd, st) < 0 || !(S_ISREG(st->st_mode) || S_ISBLK(st->st_mode)))
        return false;
    return fstatvfs(fd, &sv) < 0 || !(sv.f_flag & ST_NOEXEC);
}

/* One step of one relay; false once it is finished. */
static bool relay_step(relay *r, short revents)
{
    if (!r->in) {
        ssize_t n = read(r->pipe, r->buf, sizeof(r->buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return true;
        for (ssize_t off = 0; n > 0 && off < n;) {
            ssize_t w = write(r->file, r->buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return false;
            off += w;
        }
        return n > 0;
    }
    if (revents & (POLLERR | POLLHUP))
        return false;
    if (r->off == r->len) {
        ssize_t n = read(r->file, r->buf, sizeof(r->buf));
        if (n <= 0)
            return n < 0 && errno == EINTR;
        r->len = (size_t)n;
        r->off = 0;
    }
    ssize_t w = write(r->pipe, r->buf + r->off, r->len - r->off);
    if (w > 0)
        r->off += (size_t)w;
    return w > 0 || errno == EAGAIN || errno == EINTR;
}

static void __attribute__((noreturn)) relay_until_exit(pid_t child, relay *r, size_t n)
{
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    for (size_t i = 0; i < sizeof(ignored) / sizeof(*ignored); i++)
        signal(ignored[i], SIG_IGN); /* forwarded to the command; the relay drains */
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    bool exited = false;
    while (!exited) {
        struct pollfd p[4];
        size_t np = 0;
        for (size_t i = 0; i < n; i++)
            if (!r[i].done)
                p[np++] = (struct pollfd){r[i].pipe, r[i].in ? POLLOUT : POLLIN, 0};
        p[np] = (struct pollfd){pidfd, POLLIN, 0};
        if (poll(p, np + 1, pidfd < 0 ? 50 : -1) < 0 && errno != EINTR)
            break;
        exited = pidfd < 0 ? waitpid(child, NULL, WNOHANG | WNOWAIT) == child
                           : (p[np].revents & POLLIN) != 0;
        for (size_t i = 0, k = 0; i < n; i++)
            if (!r[i].done && p[k++].revents && !relay_step(&r[i], p[k - 1].revents)) {
                r[i].done = true;
                if (r[i].in)
                    close(r[i].pipe); /* the command reads EOF */
            }
    }
    /* What the command wrote before it ended (without waiting for a
     * descendant that keeps the pipe open: the envelope ends now). */
    for (size_t i = 0; i < n; i++) {
        if (r[i].in)
            continue;
        fcntl(r[i].pipe, F_SETFL, O_NONBLOCK);
        while (!r[i].done) {
            errno = 0;
            r[i].done = !relay_step(&r[i], 0) || errno == EAGAIN;
        }
    }
    int st = 0;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

/* Which of 0-2 reach the command as a pipe: after noexec remounts, a
 * regular file (or block device) on an exec-capable mount; otherwise (the
 * envelope's read-only re-binds and masks still hold) a regular file open
 * read-only, which /proc/self/fd/N would reopen for writing on the host's
 * mount, read-only re-bind or not. A directory would lead into the host's
 * tree past every mount of the envelope: refused. */
static bool needs_relay(int fd, struct stat *st, bool noexec)
{
    if (fstat(fd, st) < 0)
        return false;
    if (S_ISDIR(st->st_mode))
        report(125, "setup stdio: descriptor %d is a directory of the host: through it the "
                    "command would reach past the envelope's mounts",
               fd);
    if (noexec)
        return exec_capable_file(fd, st);
    return S_ISREG(st->st_mode) && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY;
}

static void guard_stdio(bool noexec)
{
    static relay r[3];
    struct stat st[3];
    int child_end[3] = {-1, -1, -1};
    size_t n = 0;
    for (int fd = 0; fd < 3; fd++) {
        if (!needs_relay(fd, &st[fd], noexec))
            continue;
        bool in = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY;
        /* 2>&1 into one file: one pipe keeps the writes in order. */
        for (int k = 0; k < fd && !in && child_end[fd] < 0; k++)
            if (child_end[k] >= 0 && st[k].st_dev == st[fd].st_dev &&
                st[k].st_ino == st[fd].st_ino && (fcntl(k, F_GETFL) & O_ACCMODE) != O_RDONLY)
                child_end[fd] = child_end[k];
        if (child_end[fd] >= 0)
            continue;
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            report(125, "setup relay of descriptor %d: %s", fd, strerror(errno));
        r[n] = (relay){.file = fd, .pipe = in ? p[1] : p[0], .in = in};
        if (in)
            fcntl(p[1], F_SETFL, O_NONBLOCK);
        child_end[fd] = in ? p[0] : p[1];
        n++;
    }
    if (!n)
        return;
    /* Not dumpable before the fork: the command's first instruction may
     * already reach for /proc/PPID/fd (its own exec makes it dumpable). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        report(125, "setup relay: not dumpable: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        report(125, "setup relay: fork: %s", strerror(errno));
    if (pid == 0) {
        for (int fd = 0; fd < 3; fd++)
            if (child_end[fd] >= 0 && dup2(child_end[fd], fd) < 0)
                report(125, "setup relay: %s", strerror(errno));
        for (size_t i = 0; i < n; i++)
            close(r[i].pipe);
        return; /* on to the command; the other ends close on exec */
    }
    for (int fd = 0; fd < 3; fd++)
        if (child_end[fd] >= 0 && (fd == 0 || child_end[fd] != child_end[fd - 1]))
            close(child_end[fd]);
    if (status_fd >= 0)
        close(status_fd); /* the command's exec closes its copy: EOF */
    relay_until_exit(pid, r, n);
}

static int fd_arg(const char *flag, const char *s)
{
    long v = number(flag, s);
    if (v < 3 || v > 65535)
        report(125, "setup usage: %s: bad descriptor %s", flag, s);
    return (int)v;
}

int main(int argc, char **argv)
{
    const char *noexec[MAX_NOEXEC], *pins[MAX_PINS];
    size_t nnoexec = 0, npins = 0;
    int landlock_fd = -1, seccomp_fd[4], notify_prog = -1, notify_sock = -1;
    size_t nseccomp = 0;
    const char *net_relay = NULL;
    bool guard = false; /* --stdio guard: the envelope's mounts are the protection */
    long nproc = -1, nofile = -1, cpu = -1, as = -1;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc)
            usage("an option lacks its value");
        const char *v = argv[++i];
        if (strcmp(flag, "--status-fd") == 0) {
            status_fd = fd_arg(flag, v);
            if (fcntl(status_fd, F_SETFD, FD_CLOEXEC) < 0)
                report(125, "setup usage: --status-fd %d: %s", status_fd, strerror(errno));
        } else if (strcmp(flag, "--noexec") == 0) {
            if (nnoexec == MAX_NOEXEC)
                usage("too many --noexec paths");
            noexec[nnoexec++] = v;
        } else if (strcmp(flag, "--pin-link") == 0) {
            if (npins == MAX_PINS)
                usage("too many --pin-link paths");
            pins[npins++] = v;
        } else if (strcmp(flag, "--landlock-fd") == 0) {
            landlock_fd = fd_arg(flag, v);
        } else if (strcmp(flag, "--seccomp-fd") == 0) {
            if (nseccomp == sizeof(seccomp_fd) / sizeof(*seccomp_fd))
                usage("too many --seccomp-fd");
            seccomp_fd[nseccomp++] = fd_arg(flag, v);
        } else if (strcmp(flag, "--stdio") == 0) {
            if (strcmp(v, "guard") != 0)
                usage("--stdio: not 'guard'");
            guard = true;
        } else if (strcmp(flag, "--seccomp-notify-fd") == 0) {
            notify_prog = fd_arg(flag, v);
        } else if (strcmp(flag, "--notify-fd") == 0) {
            notify_sock = fd_arg(flag, v);
        } else if (strcmp(flag, "--net-relay") == 0) {
            net_relay = v;
        } else if (strcmp(flag, "--nproc") == 0) {
            nproc = number(flag, v);
        } else if (strcmp(flag, "--nofile") == 0) {
            nofile = number(flag, v);
        } else if (strcmp(flag, "--cpu") == 0) {
            cpu = number(flag, v);
        } else if (strcmp(flag, "--as") == 0) {
            as = number(flag, v);
        } else {
            report(125, "setup usage: unknown option %s", flag);
        }
    }
    /* Said before anything runs, or nothing runs: a launcher retries a
     * launch that never said it (level.c), so it must never run unsaid. */
    if (status_fd >= 0) {
        ssize_t w;
        while ((w = write(status_fd, "started\n", 8)) < 0 && errno == EINTR)
            ;
        if (w != 8)
            _exit(125);
    }
    if (i + 1 >= argc)
        usage("missing -- COMMAND");
    if ((notify_prog < 0) != (notify_sock < 0))
        usage("--seccomp-notify-fd and --notify-fd go together");
    char **command = argv + i + 1;

    for (size_t k = 0; k < npins; k++)
        pin_link(pins[k]);
    for (size_t k = 0; k < nnoexec; k++)
        remount_noexec(noexec[k]);
    set_limit(RLIMIT_NPROC, "nproc", nproc, 0);
    set_limit(RLIMIT_NOFILE, "nofile", nofile, 0);
    set_limit(RLIMIT_CPU, "cpu", cpu, 1);
    set_limit(RLIMIT_AS, "as", as, 0);
    drop_privileges();
    if (landlock_fd >= 0)
        apply_landlock(landlock_fd);
    for (size_t k = 0; k < nseccomp; k++)
        load_seccomp(seccomp_fd[k]);
    if (notify_prog >= 0)
        load_seccomp_listener(notify_prog, notify_sock);
    if (net_relay) {
        char *end;
        long port = strtol(net_relay, &end, 10);
        const char *step = "relay";
        char *token = end + 1, *path = *end == ':' ? strchr(token, ':') : NULL;
        if (!path || port < 1 || port > 65535 || path[1] != '/' || path - token > 64)
            usage("--net-relay: not PORT:TOKEN:/CONTROL");
        *path++ = '\0';
        int rc = gk_relay_handoff((unsigned)port, token, path, &step);
        if (rc < 0)
            report(125, "setup %s: %s", step, strerror(-rc));
    }
    if (nnoexec > 0 || guard)
        guard_stdio(nnoexec > 0);
    /* Only 0-2 reach the command (the status pipe closes on exec). */
    int keep = status_fd >= 3 ? status_fd : 3;
    if (keep > 3 && syscall(SYS_close_range, 3U, (unsigned)keep - 1, 0) < 0)
        for (int fd = 3; fd < keep; fd++)
            close(fd);
    if (syscall(SYS_close_range, (unsigned)keep + (status_fd >= 3), ~0U, 0) < 0)
        for (int fd = keep + (status_fd >= 3); fd < 65536; fd++)
            close(fd);
    execvp(command[0], command);
    int err = errno;
    report(err == ENOENT ? 127 : 126, "exec %d %s: %s", err, command[0], strerror(err));
}
