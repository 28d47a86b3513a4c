/* check_confine.c - the Linux confinement pieces against the real kernel.
 *
 * 1. The seccomp filters (runtime/seccomp.c): each probe runs in a fresh
 *    child that loads the exported BPF exactly as the helper does (plain
 *    prctl) and then makes the syscall; a control child without the
 *    filter shows the call is otherwise possible where that matters.
 * 2. The helper (runtime/helper.c) as the first program inside a real
 *    bwrap: noexec remounts of a writable bind, no_new_privs and no
 *    capabilities, a real Landlock ruleset (reads, writes and EXECUTE
 *    limited to its rules), the mount filter, and its status pipe
 *    (exec failures 126/127, setup failures 125, fail closed).
 * Suites that need bwrap or Landlock fail, not skip, when either is
 * missing: this project's CI machine has both.
 */
#include "backends/backend.h"
#include "runtime/seccomp.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BWRAP "/usr/bin/bwrap"

/* ---- seccomp probes --------------------------------------------------- */

static void load_filter(int fd)
{
    static char prog[65536];
    ssize_t n = pread(fd, prog, sizeof(prog), 0);
    if (n <= 0 || n % (ssize_t)sizeof(struct sock_filter))
        _exit(90);
    struct sock_fprog fp = {(unsigned short)(n / (ssize_t)sizeof(struct sock_filter)),
                            (struct sock_filter *)prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
        _exit(91);
}

/* The probe's result in a child: its exit code (0 = the call returned as
 * `want` says), or 128+N when a signal ended it. filter_fd < 0: none. */
typedef int (*probe_fn)(long arg);

static int in_child(int filter_fd, probe_fn probe, long arg)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (filter_fd >= 0)
            load_filter(filter_fd);
        _exit(probe(arg));
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Each probe exits 0 when the call succeeded, 1 on EPERM, 2 on another
 * error. */
static int outcome(long rc)
{
    return rc >= 0 ? 0 : errno == EPERM ? 1 : 2;
}

static int probe_ptrace(long arg)
{
    (void)arg;
    return outcome(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static int probe_bpf(long arg)
{
    (void)arg;
    return outcome(syscall(SYS_bpf, 0, NULL, 0));
}

static int probe_userfaultfd(long arg)
{
    (void)arg;
    return outcome(syscall(SYS_userfaultfd, 0));
}

static int probe_personality(long arg)
{
    return outcome(syscall(SYS_personality, (unsigned long)arg));
}

static int probe_socket(long family)
{
    /* Through syscall(2), so high bits reach the filter. */
    return outcome(syscall(SYS_socket, (unsigned long)family, SOCK_STREAM, 0));
}

/* TIOCSTI on a pseudo-terminal; arg carries high bits to set in the
 * request (the kernel reads 32). */
/* A pseudo-terminal's slave side, or -1. */
static int pty_slave(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
        return -1;
    return open(ptsname(m), O_RDWR | O_NOCTTY);
}

static int probe_tiocsti(long high)
{
    int s = pty_slave();
    if (s < 0)
        return 3;
    char c = 'x';
    unsigned long req = (unsigned long)TIOCSTI | ((unsigned long)high << 32);
    long rc = syscall(SYS_ioctl, s, req, &c);
    return outcome(rc);
}

/* A console request (KD*, VT_*) on a pseudo-terminal, which is no console:
 * the kernel says ENOTTY, the filter EPERM. */
static int probe_console_ioctl(long req)
{
    int s = pty_slave();
    if (s < 0)
        return 3;
    char buf[512] = {0};
    return outcome(syscall(SYS_ioctl, s, (unsigned long)req, buf));
}

static int probe_userns(long arg)
{
    (void)arg;
    return outcome(unshare(CLONE_NEWUSER));
}

static int probe_clone3(long arg)
{
    (void)arg;
    long rc = syscall(SYS_clone3, NULL, 0);
    return rc >= 0 ? 0 : errno == ENOSYS ? 4 : errno == EPERM ? 1 : 2;
}

/* getpid through the i386 ABI (int 0x80, eax 20). */
static int probe_int80(long arg)
{
    (void)arg;
#if defined(__x86_64__)
    long rc;
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory");
    return rc > 0 ? 0 : 2;
#else
    return 0;
#endif
}

/* getpid through x32 syscall numbers (bit 30 set). */
static int probe_x32(long arg)
{
    (void)arg;
    return outcome(syscall(0x40000000L | SYS_getpid));
}

/* mount(2) in a fresh user and mount namespace, where it is otherwise
 * allowed. */
static int probe_mount(long arg)
{
    (void)arg;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return 3;
    return outcome(mount("none", "/tmp", "tmpfs", 0, NULL));
}

START_TEST(main_filter_denies_the_listed_syscalls)
{
    int fd = gk_seccomp_main_fd(false, false);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(in_child(fd, probe_ptrace, 0), 1);
    ck_assert_int_eq(in_child(-1, probe_ptrace, 0), 0);
    ck_assert_int_eq(in_child(fd, probe_bpf, 0), 1);
    ck_assert_int_eq(in_child(fd, probe_userfaultfd, 0), 1);
    /* No new user namespace (grantrun's stand-in for --disable-userns). */
    ck_assert_int_eq(in_child(-1, probe_userns, 0), 0);
    ck_assert_int_eq(in_child(fd, probe_userns, 0), 1);
    ck_assert_int_eq(in_child(fd, probe_clone3, 0), 4);
    close(fd);
}
END_TEST

START_TEST(main_filter_allows_only_linux_and_the_query_personality)
{
    int fd = gk_seccomp_main_fd(true, false);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(in_child(fd, probe_personality, 0xffffffffL), 0);
    ck_assert_int_eq(in_child(fd, probe_personality, PER_LINUX), 0);
    /* The kernel reads 32 bits: high bits must change nothing. */
    ck_assert_int_eq(in_child(fd, probe_personality, (long)(1UL << 40)), 0);
    static const long refused[] = {READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, PER_LINUX32, 1,
                                   0x7fffffffL, 0x80000000L, 0xfffffffeL, 0xf0000000L,
                                   (long)(READ_IMPLIES_EXEC | (1UL << 40))};
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
        ck_assert_msg(in_child(fd, probe_personality, refused[i]) == 1,
                      "personality(0x%lx) was not refused", refused[i]);
        ck_assert_msg(in_child(-1, probe_personality, refused[i]) == 0,
                      "personality(0x%lx) fails even without the filter", refused[i]);
    }
    close(fd);
}
END_TEST

START_TEST(main_filter_blocks_terminal_injection)
{
    int fd = gk_seccomp_main_fd(true, false);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(in_child(fd, probe_tiocsti, 0), 1);
    ck_assert_int_eq(in_child(fd, probe_tiocsti, 1), 1); /* high bits ignored by the kernel */
    /* KDSKBSENT (a function key's string), KDSKBENT, KDSETKEYCODE,
     * KDFONTOP, VT_ACTIVATE, and KDSKBSENT with high bits */
    static const long console[] = {0x4B49, 0x4B47, 0x4B4D, 0x4B72, 0x5606,
                                   (long)(0x4B49 | (1UL << 32))};
    for (size_t i = 0; i < sizeof(console) / sizeof(*console); i++) {
        ck_assert_msg(in_child(fd, probe_console_ioctl, console[i]) == 1,
                      "console ioctl 0x%lx was not refused", console[i]);
        ck_assert_msg(in_child(-1, probe_console_ioctl, console[i]) == 2,
                      "console ioctl 0x%lx fails differently without the filter", console[i]);
    }
    /* control: a terminal request outside those groups reaches the kernel */
    ck_assert_int_eq(in_child(fd, probe_console_ioctl, TIOCGWINSZ), 0);
    close(fd);
}
END_TEST

START_TEST(main_filter_net_false_leaves_only_unix_sockets)
{
    int off = gk_seccomp_main_fd(false, false), on = gk_seccomp_main_fd(true, false);
    ck_assert_int_ge(off, 0);
    ck_assert_int_ge(on, 0);
    ck_assert_int_eq(in_child(off, probe_socket, AF_INET), 1);
    ck_assert_int_eq(in_child(off, probe_socket, AF_INET6), 1);
    ck_assert_int_eq(in_child(off, probe_socket, AF_NETLINK), 1);
    ck_assert_int_eq(in_child(off, probe_socket, AF_UNIX), 0);
    /* High bits the kernel drops must not carry AF_INET past the filter. */
    ck_assert_int_eq(in_child(-1, probe_socket, (long)(AF_INET | (1UL << 32))), 0);
    ck_assert_int_eq(in_child(off, probe_socket, (long)(AF_INET | (1UL << 32))), 1);
    ck_assert_int_eq(in_child(on, probe_socket, AF_INET), 0);
    close(off);
    close(on);
}
END_TEST

START_TEST(filters_kill_a_foreign_abi)
{
#if defined(__x86_64__)
    int fd = gk_seccomp_main_fd(true, false);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(in_child(fd, probe_int80, 0), 128 + SIGSYS);
    ck_assert_int_eq(in_child(fd, probe_x32, 0), 128 + SIGSYS);
    close(fd);
#endif
}
END_TEST

START_TEST(mount_filter_denies_mount)
{
    int fd = gk_seccomp_mount_fd();
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(in_child(-1, probe_mount, 0), 0);
    ck_assert_int_eq(in_child(fd, probe_mount, 0), 1);
    close(fd);
}
END_TEST

/* The precompiled filters grantrun serves are the libseccomp builder's,
 * byte for byte, for every setting (seccomp_gen.c ran it at build time). */
int gk_seccomp_build_main_fd(bool net, bool exec_restricted);
int gk_seccomp_build_mount_fd(void);

static char *fd_bytes(int fd, size_t *n)
{
    ck_assert_int_ge(fd, 0);
    gk_buf b = {0};
    char chunk[4096];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof(chunk))) > 0)
        gk_buf_add(&b, chunk, (size_t)r);
    close(fd);
    *n = b.len;
    return gk_buf_steal(&b, NULL);
}

START_TEST(precompiled_filters_are_the_builders)
{
    for (int v = 0; v < 5; v++) {
        bool net = v & 1, exec = v & 2;
        size_t nf, nb;
        gk_autofree char *fixed =
            fd_bytes(v < 4 ? gk_seccomp_main_fd(net, exec) : gk_seccomp_mount_fd(), &nf);
        gk_autofree char *built = fd_bytes(
            v < 4 ? gk_seccomp_build_main_fd(net, exec) : gk_seccomp_build_mount_fd(), &nb);
        ck_assert_msg(nf == nb && nf > 0 && memcmp(fixed, built, nf) == 0,
                      "filter %d: precompiled %zu bytes, built %zu", v, nf, nb);
    }
}
END_TEST

/* ---- the helper inside bwrap ------------------------------------------ */

typedef struct envelope {
    char *base;    /* scratch dir on the host (under /var/tmp: bwrap's /tmp is private) */
    char *w;       /* base/w: the writable bind */
    char *secret;  /* base/secret.txt: readable on the host, in no rule */
    char *helper;
} envelope;

static envelope envelope_new(void)
{
    envelope e = {0};
    char tmpl[] = "/var/tmp/gk-confine-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    e.base = gk_strdup(tmpl);
    e.w = gk_printf("%s/w", e.base);
    e.secret = gk_printf("%s/secret.txt", e.base);
    ck_assert_int_eq(mkdir(e.w, 0755), 0);
    gk_test_write(e.secret, "secret\n", 0644);
    gk_autofree char *prog = gk_printf("%s/w/prog", e.base);
    gk_autofree char *data = gk_printf("%s/w/data", e.base);
    gk_test_copy("/usr/bin/true", prog, 0755);
    gk_test_write(data, "not a program\n", 0644);
    e.helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_msg(access(e.helper, X_OK) == 0, "no helper at %s", e.helper);
    ck_assert_msg(access(BWRAP, X_OK) == 0, "bwrap is required at " BWRAP);
    return e;
}

static void envelope_free(envelope *e)
{
    char *cmd = gk_printf("rm -rf '%s'", e->base);
    ck_assert_int_eq(system(cmd), 0);
    free(cmd);
    free(e->base);
    free(e->w);
    free(e->secret);
    free(e->helper);
}

/* Landlock rights (kernel bit values). */
enum {
    LL_EXECUTE = 1 << 0, LL_WRITE_FILE = 1 << 1, LL_READ_FILE = 1 << 2, LL_READ_DIR = 1 << 3,
    LL_REMOVE_DIR = 1 << 4, LL_REMOVE_FILE = 1 << 5, LL_MAKE_DIR = 1 << 7, LL_MAKE_REG = 1 << 8,
};
#define LL_HANDLED                                                                             \
    (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_REMOVE_DIR | LL_REMOVE_FILE |  \
     LL_MAKE_DIR | LL_MAKE_REG)
#define LL_READ (LL_READ_FILE | LL_READ_DIR)
#define LL_RW (LL_READ | LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG)

/* The ruleset of the probes: the system readable, the writable bind and
 * /tmp writable (and executable, so only noexec can stop a program
 * written there), EXECUTE on the shell, cat and the ELF interpreter. */
static char *ruleset(const envelope *e, const char *abi_line)
{
    gk_buf b = {0};
    gk_buf_printf(&b, "grantkit-landlock 1\n%s\nhandled %x\n", abi_line, LL_HANDLED);
    static const char *const sys[] = {"/usr", "/etc", "/proc", "/dev"};
    for (size_t i = 0; i < sizeof(sys) / sizeof(*sys); i++)
        gk_buf_printf(&b, "rule %x d %s\n", LL_READ, sys[i]);
    gk_buf_printf(&b, "rule %x d /dev/null\n", LL_READ_FILE | LL_WRITE_FILE);
    gk_buf_printf(&b, "rule %x d %s\n", LL_RW | LL_EXECUTE, e->w);
    gk_buf_printf(&b, "rule %x d /tmp\n", LL_RW);
    static const char *const exe[] = {"/usr/bin/dash", "/usr/bin/cat",
                                      "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                                      "/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"};
    for (size_t i = 0; i < sizeof(exe) / sizeof(*exe); i++)
        gk_buf_printf(&b, "rule %x f %s\n", LL_EXECUTE | LL_READ_FILE, exe[i]);
    gk_buf_puts(&b, "rule 1 d /no/such/dir\n"); /* skipped: does not open */
    return gk_buf_steal(&b, NULL);
}

static int memfd_of(const char *text)
{
    int fd = memfd_create("probe", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

typedef struct run_out {
    int status;   /* exit status, 128+N for a signal */
    char *out, *err;
    char *report; /* the helper's status after "started" ("" = exec happened) */
    bool started; /* the helper ran */
} run_out;

static char *drain(int fd)
{
    gk_buf b = {0};
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            gk_buf_add(&b, chunk, (size_t)n);
    close(fd);
    return gk_buf_steal(&b, NULL);
}

/* Run argv (bwrap first) with the Landlock text on fd 3 (if any), the
 * mount filter on fd 4 and the helper's status pipe on fd 5. Output is
 * read after the run: the probes write little. */
static run_out launch(gk_strvec *argv, const char *landlock)
{
    int ll = landlock ? memfd_of(landlock) : -1;
    int sc = gk_seccomp_mount_fd();
    ck_assert_int_ge(sc, 0);
    int status_pipe[2], out_pipe[2], err_pipe[2];
    ck_assert_int_eq(pipe2(status_pipe, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(out_pipe, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(err_pipe, O_CLOEXEC), 0);
    gk_strvec_push_take(argv, NULL);

    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        /* The descriptors land on 3, 4, 5 without close-on-exec. */
        int moved_ll = ll >= 0 ? fcntl(ll, F_DUPFD, 10) : -1;
        int moved_sc = fcntl(sc, F_DUPFD, 10), moved_st = fcntl(status_pipe[1], F_DUPFD, 10);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_pipe[1], 1) < 0 ||
            dup2(err_pipe[1], 2) < 0 || (moved_ll >= 0 && dup2(moved_ll, 3) < 0) ||
            dup2(moved_sc, 4) < 0 || dup2(moved_st, 5) < 0)
            _exit(99);
        execv(BWRAP, argv->v);
        _exit(98);
    }
    if (ll >= 0)
        close(ll);
    close(sc);
    close(status_pipe[1]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    run_out r = {0};
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.report = drain(status_pipe[0]);
    /* The helper announces itself first; keep what follows. */
    r.started = gk_has_prefix(r.report, "started\n");
    if (r.started)
        memmove(r.report, r.report + 8, strlen(r.report + 8) + 1);
    r.out = drain(out_pipe[0]);
    r.err = drain(err_pipe[0]);
    return r;
}

/* The helper's own part of argv: its options, then `--` command. */
static void push_helper(gk_strvec *argv, const char *at, bool noexec_w, const char *w,
                        bool landlock, char *const command[])
{
    const char *pre[] = {at, "--status-fd", "5", "--seccomp-fd", "4"};
    for (size_t i = 0; i < sizeof(pre) / sizeof(*pre); i++)
        gk_strvec_push(argv, pre[i]);
    if (noexec_w) {
        gk_strvec_push(argv, "--noexec");
        gk_strvec_push(argv, w);
    }
    if (landlock) {
        gk_strvec_push(argv, "--landlock-fd");
        gk_strvec_push(argv, "3");
    }
    gk_strvec_push(argv, "--");
    for (size_t i = 0; command[i]; i++)
        gk_strvec_push(argv, command[i]);
}

/* A hand-made envelope: the host root read-only, the writable bind,
 * bwrap's /proc, /dev and /tmp; the helper bound in read-only, as grantrun
 * will. landlock may be NULL. */
static run_out run_enveloped(const envelope *e, const char *landlock, char *const command[])
{
    gk_strvec argv = {0};
    const char *pre[] = {BWRAP, "--unshare-user", "--unshare-pid", "--unshare-ipc",
                         "--unshare-uts", "--die-with-parent", "--new-session",
                         "--cap-add", "CAP_SYS_ADMIN", "--ro-bind", "/", "/", "--proc", "/proc",
                         "--dev", "/dev", "--tmpfs", "/tmp", "--bind", e->w, e->w,
                         "--ro-bind", e->helper, "/tmp/grantkit-helper", "--"};
    for (size_t i = 0; i < sizeof(pre) / sizeof(*pre); i++)
        gk_strvec_push(&argv, pre[i]);
    push_helper(&argv, "/tmp/grantkit-helper", true, e->w, landlock != NULL, command);
    run_out r = launch(&argv, landlock);
    gk_strvec_free(&argv);
    return r;
}

static void run_out_free(run_out *r)
{
    free(r->out);
    free(r->err);
    free(r->report);
}

#define SH(...) ((char *const[]){"/bin/sh", "-c", __VA_ARGS__, NULL})

START_TEST(helper_confines_a_real_command)
{
    envelope e = envelope_new();
    gk_autofree char *rules = ruleset(&e, "abi 1");
    gk_autofree char *script = gk_printf(
        /* reads: the system yes, the secret no */
        "cat /etc/passwd >/dev/null && echo read-system-ok;"
        "cat %s 2>/dev/null || echo read-secret-refused;"
        /* writes: the writable bind yes, the rest of / no */
        "echo hi > %s/new && echo write-bind-ok;"
        "(echo x > %s/other) 2>/dev/null || echo write-outside-refused;"
        /* exec: cat yes; id (no EXECUTE) no; a program in the noexec bind no */
        "/usr/bin/id >/dev/null 2>&1 || echo exec-unlisted-refused;"
        "%s/prog 2>/dev/null || echo exec-written-refused;"
        /* descriptors: only 0-2 reach the command (dash keeps its own
         * above 9, none below) */
        "for fd in 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$fd ] && echo leaked-fd-$fd; done;"
        /* privileges */
        "cat /proc/self/status",
        e.secret, e.w, e.base, e.w);
    run_out r = run_enveloped(&e, rules, SH(script));
    ck_assert_msg(r.status == 0, "status %d, report '%s', stderr: %s", r.status, r.report, r.err);
    ck_assert(r.started);
    ck_assert_str_eq(r.report, "");
    static const char *const want[] = {
        "read-system-ok\n",        "read-secret-refused\n",   "write-bind-ok\n",
        "write-outside-refused\n", "exec-unlisted-refused\n", "exec-written-refused\n",
        "NoNewPrivs:\t1\n",        "CapEff:\t0000000000000000\n",
        "CapPrm:\t0000000000000000\n", "Seccomp:\t2\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
        ck_assert_msg(strstr(r.out, want[i]), "missing '%s' in:\n%s\nstderr: %s", want[i], r.out,
                      r.err);
    ck_assert_msg(!strstr(r.out, "leaked-fd"), "descriptors reached the command:\n%s", r.out);
    gk_autofree char *made = gk_printf("%s/new", e.w);
    ck_assert_int_eq(access(made, F_OK), 0); /* the write reached the host */
    run_out_free(&r);
    envelope_free(&e);
}
END_TEST

START_TEST(helper_noexec_holds_without_landlock)
{
    /* Without Landlock, only the remount keeps a written program from
     * running; the same program runs from /usr. */
    envelope e = envelope_new();
    gk_autofree char *script =
        gk_printf("%s/prog 2>/dev/null || echo refused; /usr/bin/true && echo usr-ok", e.w);
    run_out r = run_enveloped(&e, NULL, SH(script));
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "refused\nusr-ok\n");
    run_out_free(&r);
    envelope_free(&e);
}
END_TEST

START_TEST(helper_reports_exec_failures_on_the_status_pipe)
{
    envelope e = envelope_new();
    run_out r = run_enveloped(&e, NULL, ((char *const[]){"/no/such/program", NULL}));
    ck_assert_int_eq(r.status, 127);
    ck_assert_msg(gk_has_prefix(r.report, "exec 2 /no/such/program: "), "report: %s", r.report);
    run_out_free(&r);

    gk_autofree char *data = gk_printf("%s/data", e.w);
    r = run_enveloped(&e, NULL, ((char *const[]){data, NULL}));
    ck_assert_int_eq(r.status, 126);
    ck_assert_msg(gk_has_prefix(r.report, "exec 13 "), "report: %s", r.report);
    run_out_free(&r);

    /* The command's own status passes through; the pipe stays silent. */
    r = run_enveloped(&e, NULL, SH("exit 7"));
    ck_assert_int_eq(r.status, 7);
    ck_assert_str_eq(r.report, "");
    run_out_free(&r);
    envelope_free(&e);
}
END_TEST

START_TEST(helper_fails_closed_on_a_ruleset_it_cannot_apply)
{
    envelope e = envelope_new();
    /* A kernel older than the ruleset needs: refused, nothing runs. */
    gk_autofree char *future = ruleset(&e, "abi 99");
    gk_autofree char *marker = gk_printf("%s/ran", e.w);
    gk_autofree char *script = gk_printf("touch %s", marker);
    run_out r = run_enveloped(&e, future, SH(script));
    ck_assert_int_eq(r.status, 125);
    ck_assert_msg(strstr(r.report, "setup landlock: the ruleset needs ABI 99"), "report: %s",
                  r.report);
    ck_assert_int_ne(access(marker, F_OK), 0);
    run_out_free(&r);

    /* Garbage instead of a ruleset. */
    r = run_enveloped(&e, "not a ruleset\n", SH(script));
    ck_assert_int_eq(r.status, 125);
    ck_assert_msg(gk_has_prefix(r.report, "setup landlock: "), "report: %s", r.report);
    ck_assert_int_ne(access(marker, F_OK), 0);
    run_out_free(&r);
    envelope_free(&e);
}
END_TEST

/* The emitters' own output, enforced: the bwrap plan and the Landlock
 * ruleset of base/reasonable.grant (exec restricted to a tool list, shells
 * vetoed), compiled for this host, with the helper applying the ruleset.
 * A program the plan shows but the stack does not admit cannot run. */
START_TEST(emitted_plan_and_ruleset_confine_a_bundled_policy)
{
    envelope e = envelope_new();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, e.w), 0);
    gk_autofree char *policies = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, policies), 0);
    gk_autofree char *file = gk_test_path("policies/base/reasonable.grant");
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {file};
    ck_assert_int_eq(grant_compile(ctx, files, 1, NULL, 0, d, &p), 0);
    gk_projection *pr = gk_projection_build(p);
    gk_emit_input in = {p, pr, "shell", NULL};
    gk_bwrap_plan plan;
    gk_bwrap_plan_build(&in, d, &plan);
    gk_ll_ruleset rs;
    gk_landlock_build(&in, d, &rs);
    gk_buf text = {0};
    ck_assert_int_eq(gk_landlock_helper_text(&rs, &text), 0);
    ck_assert_int_gt(rs.n, 5);

    /* The helper goes where no region reaches (the sandbox root's tmpfs). */
    static const struct {
        const char *cmd;
        int status;
        const char *report; /* prefix; "" = exec happened */
    } cases[] = {
        {"/usr/bin/cat", 0, ""},        /* admitted */
        {"/usr/bin/id", 126, "exec 13 "}, /* bound, readable, not admitted */
        {"/usr/bin/dash", 126, "exec 13 "}, /* vetoed: masked, and no EXECUTE */
        {"/no/such/tool", 127, "exec 2 "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        gk_strvec argv = {0}, slot = {0};
        gk_strvec_push(&argv, BWRAP);
        gk_strvec_push(&slot, "--ro-bind");
        gk_strvec_push(&slot, e.helper);
        gk_strvec_push(&slot, "/.grantkit-helper");
        gk_bwrap_plan_options(&plan, &slot, &argv);
        gk_strvec_free(&slot);
        gk_strvec_push(&argv, "--");
        char *const command[] = {(char *)cases[i].cmd, (char *)"/etc/passwd", NULL};
        push_helper(&argv, "/.grantkit-helper", false, NULL, true, command);
        run_out r = launch(&argv, text.data);
        ck_assert_msg(r.status == cases[i].status && gk_has_prefix(r.report, cases[i].report),
                      "%s: status %d, report '%s', stderr: %s", cases[i].cmd, r.status, r.report,
                      r.err);
        if (cases[i].status == 0)
            ck_assert_msg(strstr(r.out, "root:"), "cat printed: %s", r.out);
        run_out_free(&r);
        gk_strvec_free(&argv);
    }
    for (size_t i = 0; i < plan.placeholders.n; i++) {
        struct stat st;
        if (lstat(plan.placeholders.v[i], &st) == 0 && S_ISDIR(st.st_mode))
            rmdir(plan.placeholders.v[i]);
        else if (lstat(plan.placeholders.v[i], &st) == 0 && st.st_size == 0)
            unlink(plan.placeholders.v[i]);
    }
    gk_buf_free(&text);
    gk_landlock_free(&rs);
    gk_bwrap_plan_free(&plan);
    gk_projection_free(pr);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
    envelope_free(&e);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("confine");
    TCase *sc = tcase_create("seccomp");
    tcase_add_test(sc, main_filter_denies_the_listed_syscalls);
    tcase_add_test(sc, main_filter_allows_only_linux_and_the_query_personality);
    tcase_add_test(sc, main_filter_blocks_terminal_injection);
    tcase_add_test(sc, main_filter_net_false_leaves_only_unix_sockets);
    tcase_add_test(sc, filters_kill_a_foreign_abi);
    tcase_add_test(sc, mount_filter_denies_mount);
    tcase_add_test(sc, precompiled_filters_are_the_builders);
    suite_add_tcase(s, sc);
    TCase *helper = tcase_create("helper");
    tcase_set_timeout(helper, 60);
    tcase_add_test(helper, helper_confines_a_real_command);
    tcase_add_test(helper, helper_noexec_holds_without_landlock);
    tcase_add_test(helper, helper_reports_exec_failures_on_the_status_pipe);
    tcase_add_test(helper, helper_fails_closed_on_a_ruleset_it_cannot_apply);
    tcase_add_test(helper, emitted_plan_and_ruleset_confine_a_bundled_policy);
    suite_add_tcase(s, helper);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
