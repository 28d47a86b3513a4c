/* launch.c - one command in the Linux envelope (see launch.h).
 *
 * Descriptors handed to the envelope, at fixed numbers: 3 bwrap's
 * arguments (--args), 4 the main seccomp filter (bwrap --seccomp), 5 the
 * Landlock ruleset, 6 the mount filter and 7 the status pipe (all three
 * for the helper), 8 bwrap's --info-fd (it names the envelope's first
 * process, so signals can be forwarded into the envelope). Nothing else
 * crosses: the child closes every other descriptor before it executes the
 * pinned bwrap with an empty environment (the command's own is set with
 * --setenv).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/launch.h"
#include "backends/backend.h"
#include "lattice/lattice.h"
#include "gate/gate.h"
#include "runtime/seccomp.h"
#include "runtime/placeholders.h"
#include "runtime/syscalls.h"

#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>


enum { FD_ARGS = 3, FD_SECCOMP = 4, FD_LANDLOCK = 5, FD_MOUNT_FILTER = 6, FD_STATUS = 7,
       FD_INFO = 8 /* bwrap --info-fd: where the envelope's first process is */ };

/* Where the helper is bound when the sandbox root is bwrap's own tmpfs
 * (outside every region a policy can name). */
#define HELPER_IN_ENVELOPE "/.grantkit-helper"
#define NET_SOCKET_IN_ENVELOPE "/.grantkit-net.sock"
#define NET_CONTROL_IN_ENVELOPE "/.grantkit-net-handoff.sock"
#define GK_NET_STR_(x) #x
#define GK_NET_STR(x) GK_NET_STR_(x)

void gk_launch_result_clear(gk_launch_result *r)
{
    free(r->message);
    if (r->net) {
        gk_net_log_free(r->net);
        free(r->net);
    }
    memset(r, 0, sizeof(*r));
}

char *gk_launch_find_program(const grant_policy *p, const char *name, const char *path_env)
{
    char *walked = NULL, *canonical = NULL;
    gk_walk_head(gk_policy_context(p), name, path_env, "/", &walked, &canonical);
    free(canonical);
    return walked;
}

static const char *env_get(const char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env && env[i]; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

static void fail(gk_launch_result *out, int status, char *message)
{
    out->status = status;
    free(out->message);
    out->message = message;
}

/* Is a writable mount one the stack may execute from (it overlaps an
 * exec-admitted prefix)? Then it stays exec. */
static bool exec_admitted(const gk_projection *pr, const char *dest)
{
    for (size_t i = 0; i < pr->deputy.n; i++)
        if (gk_path_within(dest, pr->deputy.v[i]) || gk_path_within(pr->deputy.v[i], dest))
            return true;
    return false;
}

/* What the helper remounts nosuid,nodev,noexec: every writable mount and
 * readonly re-bind that exists once bwrap is done (a -try bind of a
 * missing source mounts nothing), unless the stack does not restrict exec
 * or admits it there. */
static void noexec_mounts(const gk_projection *pr, const gk_bwrap_plan *plan, gk_strvec *out)
{
    if (!pr->exec_restricted)
        return;
    for (size_t i = 0; i < plan->nmounts; i++) {
        const gk_mount *m = &plan->mounts[i];
        /* --dev is a tmpfs too: /dev/shm in it is writable. A readonly
         * re-bind lies in a write region (the plan makes none elsewhere):
         * the host, or an earlier run, writes what it shows. */
        bool writable = m->role == GK_MOUNT_WRITE || m->role == GK_MOUNT_PIN ||
                        m->role == GK_MOUNT_READONLY ||
                        (m->role == GK_MOUNT_SYSTEM && m->flag &&
                         (strcmp(m->flag, "--tmpfs") == 0 || strcmp(m->flag, "--dev") == 0));
        if (!writable || m->link || !m->flag || exec_admitted(pr, m->dest))
            continue;
        struct stat st;
        bool there = m->host && stat(m->host, &st) == 0;
        if (m->host && strstr(m->flag, "-try") && !there)
            continue;
        /* A file bind is a mount of its own and takes the flags too; a
         * device would lose its use to nodev (and cannot be executed). */
        if (m->is_file && there && !S_ISREG(st.st_mode))
            continue;
        gk_strvec_push(out, m->dest);
    }
    gk_strvec_sort_unique(out);
}

/* How many values a bwrap option of the plan takes (the plan's argv is
 * walked option by option, so a value is never read as an option). */
static size_t bwrap_arity(const char *opt)
{
    static const char *const two[] = {"--setenv", "--bind", "--bind-try", "--ro-bind",
                                      "--ro-bind-try", "--dev-bind", "--dev-bind-try",
                                      "--symlink"};
    static const char *const one[] = {"--unsetenv", "--tmpfs", "--dev", "--proc", "--dir",
                                      "--remount-ro", "--chdir", "--perms", "--cap-add",
                                      "--cap-drop", "--mqueue"};
    for (size_t i = 0; i < sizeof(two) / sizeof(*two); i++)
        if (strcmp(opt, two[i]) == 0)
            return 2;
    for (size_t i = 0; i < sizeof(one) / sizeof(*one); i++)
        if (strcmp(opt, one[i]) == 0)
            return 1;
    return 0;
}

/* /dev as --dev makes it, but for devpts. For a caller who is not root,
 * bwrap mounts devpts as uid 0 of the user namespace and then moves the
 * command into a second, nested one (the caller's uid again) that owns no
 * mount: the helper's remounts are refused there. Without --dev there is
 * one user namespace, owning every mount. No /dev/pts, /dev/ptmx or
 * /dev/console then (grantrun(1)). */
static void dev_without_devpts(gk_strvec *args, const char *dev)
{
    static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
    static const char *const links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                           {"/proc/self/fd/1", "stdout"},
                                           {"/proc/self/fd/2", "stderr"}};
    gk_strvec_push(args, "--tmpfs");
    gk_strvec_push(args, dev);
    for (size_t i = 0; i < sizeof(nodes) / sizeof(*nodes); i++) {
        gk_strvec_push(args, "--dev-bind");
        gk_strvec_push_take(args, gk_printf("/dev/%s", nodes[i]));
        gk_strvec_push_take(args, gk_printf("%s/%s", dev, nodes[i]));
    }
    for (size_t i = 0; i < sizeof(links) / sizeof(*links); i++) {
        gk_strvec_push(args, "--symlink");
        gk_strvec_push(args, links[i][0]);
        gk_strvec_push_take(args, gk_printf("%s/%s", dev, links[i][1]));
    }
    gk_strvec_push(args, "--dir");
    gk_strvec_push_take(args, gk_printf("%s/shm", dev));
}

/* The plan's options as this caller's bwrap needs them: for a caller who
 * is not root, /dev without devpts (dev_without_devpts). The options are
 * walked option by option, so a value is never read as an option. */
static void options_for_caller(const gk_strvec *in, gk_strvec *out)
{
    bool unprivileged = geteuid() != 0;
    for (size_t k = 0, values = 0; k < in->n; k++) {
        const char *a = in->v[k];
        if (values) {
            values--;
        } else if (unprivileged && strcmp(a, "--dev") == 0 && k + 1 < in->n) {
            dev_without_devpts(out, in->v[++k]);
            continue;
        } else {
            values = bwrap_arity(a);
        }
        gk_strvec_push(out, a);
    }
}

static char *drain(int fd)
{
    gk_buf b = {0};
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (b.len < 65536)
            gk_buf_add(&b, chunk, (size_t)n);
    }
    return gk_buf_steal(&b, NULL);
}

/* A signal to grantrun is written to this pipe (the handler does nothing
 * else) and forwarded by the wait loop. */
static int signal_pipe[2] = {-1, -1};

static void note_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (signal_pipe[1] >= 0 && write(signal_pipe[1], &b, 1) < 0) {
        /* full pipe: a signal is already pending */
    }
    errno = saved;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* Send sig to every process in init's pid namespace but init itself (bwrap's
 * reaper, which ignores it) and those in done (then recorded there): the
 * command gets it as from a terminal. Returns how many were signalled. */
/* Processes a timeout's SIGTERM has reached, so that one forked while
 * the namespace was scanned (sh starting its next command) gets it at the
 * next scan, and none gets it twice (a second SIGTERM is "force quit" to
 * many programs). */
typedef struct pidset {
    pid_t *v;
    size_t n, cap;
} pidset;

static bool pidset_has(const pidset *s, pid_t p)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == p)
            return true;
    return false;
}

static int signal_envelope(pid_t init, int sig, pidset *done)
{
    char path[64];
    struct stat ns;
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
    struct stat own;
    /* init reaped and its pid reused by a host process: that is the
     * host's namespace, never signalled */
    if (stat(path, &ns) < 0 ||
        (stat("/proc/self/ns/pid", &own) == 0 && own.st_ino == ns.st_ino && own.st_dev == ns.st_dev))
        return 0;
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == init || (done && pidset_has(done, (pid_t)pid)))
            continue;
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
        if (stat(path, &st) == 0 && st.st_ino == ns.st_ino && st.st_dev == ns.st_dev &&
            kill((pid_t)pid, sig) == 0) {
            n++;
            if (done)
                GK_VEC_PUSH(done->v, done->n, done->cap, (pid_t)pid);
        }
    }
    closedir(proc);
    return n;
}

/* In the child: the six descriptors at their numbers, nothing else open,
 * default signal dispositions, then the pinned bwrap. Never returns. */
#define NFDS (FD_INFO - FD_ARGS + 1)

/* After a failed exec of bwrap, in the child: "bwrap-exec ERRNO\n" on the
 * status pipe (write(2) only, no stdio after fork), so grantrun can say
 * why instead of a bare 125. */
static void report_exec_errno(int err)
{
    char line[32] = "bwrap-exec ", digits[12];
    size_t n = 11, k = 0;
    unsigned v = err > 0 ? (unsigned)err : 0;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < sizeof(digits));
    while (k)
        line[n++] = digits[--k];
    line[n++] = '\n';
    if (write(FD_STATUS, line, n) < 0) {
        /* nothing more to say: the parent reports a bare failure */
    }
}

void gk_launch_child_signals(const gk_launch_opts *o)
{
    /* The kernel's own call: glibc refuses its two (32 and 33), and a
     * host can pass them on ignored. An all-zero kernel sigaction is
     * SIG_DFL, no flags, no mask, whatever the architecture's layout. */
    static const unsigned long dfl[8];
    for (int sig = 1; sig < NSIG; sig++) {
        bool is_forwarded = false;
        for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
            is_forwarded = is_forwarded || forwarded[i] == sig;
        if (is_forwarded || (o->default_signals && sig != SIGKILL && sig != SIGSTOP))
            syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)(NSIG / 8));
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

void gk_launch_take_stdio(const gk_launch_opts *o)
{
    if (!o->redirect_stdio)
        return;
    /* Lifted out of 0-2 first: a given descriptor may itself be 0-2. */
    int io[3];
    for (int i = 0; i < 3; i++)
        if ((io[i] = fcntl(o->stdio[i], F_DUPFD_CLOEXEC, 64)) < 0)
            _exit(GK_RUN_FAILED);
    for (int i = 0; i < 3; i++)
        if (dup2(io[i], i) < 0)
            _exit(GK_RUN_FAILED);
}

static void exec_bwrap(int bwrap_fd, const int fds[NFDS], char **tail, const gk_launch_opts *o)
{
    gk_launch_take_stdio(o);
    int high[NFDS], pinned = fcntl(bwrap_fd, F_DUPFD_CLOEXEC, 64);
    for (int i = 0; i < NFDS; i++) {
        high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 64);
        if (high[i] < 0)
            _exit(GK_RUN_FAILED);
    }
    /* They land on 3..8 (dup2 clears close-on-exec); the pinned bwrap on
     * 9, closed by the exec itself; everything else goes. */
    for (int i = 0; i < NFDS; i++)
        if (dup2(high[i], FD_ARGS + i) < 0)
            _exit(GK_RUN_FAILED);
    if (pinned < 0 || dup2(pinned, FD_INFO + 1) < 0 ||
        fcntl(FD_INFO + 1, F_SETFD, FD_CLOEXEC) < 0)
        _exit(GK_RUN_FAILED);
    if (syscall(SYS_close_range, FD_INFO + 2, ~0U, 0) < 0)
        for (int fd = FD_INFO + 2; fd < 65536; fd++)
            close(fd);
    gk_launch_child_signals(o);
    /* bwrap takes options from --args, the command from its own argv:
     * tail is "bwrap --args 3 -- HELPER ... -- COMMAND...". */
    char *const envp[] = {NULL};
    syscall(SYS_execveat, FD_INFO + 1, "", tail, envp, AT_EMPTY_PATH);
    report_exec_errno(errno);
    _exit(GK_RUN_FAILED);
}

/* The envelope's first process, from bwrap's info document
 * ({"child-pid": N, ...}), or 0 while unknown. */
static pid_t child_pid_of(const char *info)
{
    const char *k = strstr(info, "\"child-pid\"");
    if (!k || !(k = strchr(k, ':')))
        return 0;
    long v = strtol(k + 1, NULL, 10);
    return v > 0 ? (pid_t)v : 0;
}

/* Wait for bwrap: forward signals into the envelope, kill it at the
 * deadline. Returns its wait status and sets *timed_out. */
static int wait_child(pid_t pid, int info_fd, long timeout_ms, long term_grace_ms,
                      struct timespec start, bool *timed_out)
{
    pidset termed = {0};
    long kill_at_ms = timeout_ms > LONG_MAX - term_grace_ms ? LONG_MAX : timeout_ms + term_grace_ms;
    *timed_out = false;
    /* Without pidfds (before Linux 5.3, older than Landlock itself) the
     * loop polls the child every 50 ms instead. */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct timespec now;
    gk_buf info = {0};
    pid_t init = 0;
    int st = 0;
    bool reaped = false;
    for (;;) {
        if (pidfd < 0 && waitpid(pid, &st, WNOHANG) == pid) {
            reaped = true;
            break;
        }
        struct pollfd pfd[3] = {{pidfd, POLLIN, 0}, {signal_pipe[0], POLLIN, 0},
                                {info_fd, POLLIN, 0}};
        int wait_ms = -1;
        if (timeout_ms > 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
            if (spent >= timeout_ms && term_grace_ms > 0 && spent < kill_at_ms) {
                /* SIGTERM into the envelope first; SIGKILL after the grace.
                 * The namespace is scanned again every 10 ms of the grace,
                 * and a process not yet signalled gets its SIGTERM then:
                 * one forked while the last scan ran, or the command itself
                 * while bwrap was still setting up (a loaded host). */
                *timed_out = true;
                if (init)
                    signal_envelope(init, SIGTERM, &termed);
                wait_ms = (int)(kill_at_ms - spent < 10 ? kill_at_ms - spent : 10);
            } else if (spent >= timeout_ms) {
                *timed_out = true;
                kill(pid, SIGKILL); /* the envelope dies with bwrap */
                break;
            } else {
                /* poll takes an int: a timeout of weeks waits in steps */
                long left = timeout_ms - spent;
                wait_ms = left > (1L << 30) ? 1 << 30 : (int)left;
            }
        }
        if (pidfd < 0 && (wait_ms < 0 || wait_ms > 50))
            wait_ms = 50;
        int r = poll(pfd, info_fd >= 0 ? 3 : 2, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (pidfd >= 0 && pfd[0].revents)
            break;
        if (info_fd >= 0 && pfd[2].revents) {
            char chunk[512];
            ssize_t n = read(info_fd, chunk, sizeof(chunk));
            if (n > 0 && info.len < 4096) {
                gk_buf_add(&info, chunk, (size_t)n);
                init = child_pid_of(info.data);
            } else if (n <= 0) {
                close(info_fd);
                info_fd = -1;
            }
        }
        if (pfd[1].revents) {
            unsigned char sig;
            while (read(signal_pipe[0], &sig, 1) == 1)
                /* Into the envelope, as a terminal would; before bwrap has
                 * said where it is, to bwrap (which then ends it all). */
                if (!init || signal_envelope(init, sig, NULL) == 0)
                    kill(pid, sig);
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    if (info_fd >= 0)
        close(info_fd);
    gk_buf_free(&info);
    free(termed.v);
    while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return st;
}

/* The placeholders' lock, for a run (not a dry run): without one this
 * run creates and removes none (placeholders.h). Held exclusive for 30 s:
 * refused, as a run that went ahead unlocked could have its masks removed
 * by the next one to clean up. */
int gk_launch_lock(const gk_launch_opts *o, gk_placeholders *ph, int *lock_rc,
                   gk_launch_result *out)
{
    ph->lock_fd = -1;
    ph->dir = NULL;
    *lock_rc = o->dry_run ? 0 : gk_placeholders_lock(ph);
    if (*lock_rc == -ETIMEDOUT) {
        fail(out, GK_RUN_FAILED,
             gk_strdup("placeholders: the lock in the runtime directory stayed held by a "
                       "cleanup for 30 s (GRANTKIT_RUNTIME_DIR, grantrun(1)); nothing ran"));
        return 0;
    }
    if (*lock_rc == -ESTALE) {
        fail(out, GK_RUN_FAILED,
             gk_strdup("placeholders: the runtime directory's lock is not a file of this user's, "
                       "or keeps being moved off its name (GRANTKIT_RUNTIME_DIR, grantrun(1)); "
                       "nothing ran"));
        return 0;
    }
    return 1;
}

/* ---- one launch, step by step ------------------------------------------ */

/* What runs, kept in its parts until the last step renders them: bwrap's
 * options (the plan's, the launcher's mounts in the plan's slot, the
 * descriptors bwrap reads), then the helper and its options, then the
 * command. */
typedef struct invocation {
    const gk_bwrap_plan *plan;
    gk_strvec slot;           /* the launcher's mounts: the helper's bind */
    gk_strvec fd_options;     /* --seccomp N --info-fd N */
    const char *helper;       /* where the helper is inside the envelope */
    gk_strvec helper_options; /* descriptors, noexec remounts, limits */
    char *const *command;
    size_t argc;
} invocation;

/* One launch's state: everything gk_launch builds, and frees in one place. */
typedef struct envelope {
    gk_projection *pr;
    gk_bwrap_plan plan;
    gk_ll_ruleset rs;
    gk_buf ruleset;           /* the helper's Landlock input */
    gk_strvec noexec;
    invocation call;
    int fds[NFDS];            /* at FD_ARGS.. in the child */
    int bwrap_fd;
    int status_pipe[2], info_pipe[2];
    /* a network allowlist: the command's environment with the proxy
     * variables, the proxy's socket directory on the host, the proxy */
    bool net_allowlist;
    gk_strvec net_env;
    char *net_dir, *net_socket, *net_control;
    char net_token[33];       /* the handoff's secret, hex */
    gk_proxy *proxy;
} envelope;

/* bwrap's options, as it reads them from FD_ARGS. */
static void render_options(const invocation *c, gk_strvec *out)
{
    gk_strvec plan = {0};
    gk_bwrap_plan_options(c->plan, &c->slot, &plan);
    options_for_caller(&plan, out);
    gk_strvec_free(&plan);
    gk_strvec_copy(out, &c->fd_options);
}

/* What bwrap runs: the helper, which runs the command. */
static void render_helper(const invocation *c, gk_strvec *out)
{
    gk_strvec_push(out, c->helper);
    gk_strvec_copy(out, &c->helper_options);
    gk_strvec_push(out, "--");
    for (size_t i = 0; i < c->argc; i++)
        gk_strvec_push(out, c->command[i]);
}

/* The dry run's description: bwrap's arguments one a line as if all were
 * on its command line, then the ruleset. */
static void describe(gk_buf *d, const invocation *c, const char *ruleset)
{
    gk_strvec args = {0};
    render_options(c, &args);
    gk_strvec_push(&args, "--");
    render_helper(c, &args);
    gk_buf_puts(d, "bwrap");
    for (size_t i = 0; i < args.n; i++) {
        gk_buf_puts(d, "\n  ");
        gk_buf_puts(d, args.v[i]);
    }
    gk_buf_puts(d, "\n# Landlock ruleset (helper input)\n");
    gk_buf_puts(d, ruleset);
    gk_strvec_free(&args);
}

/* 1. The gate decides before anything starts (launch.h). */
int gk_launch_gate(const grant_policy *p, const gk_launch_opts *o, gk_launch_result *out)
{
    grant_verdict *v = NULL;
    int rc = grant_check_exec(p, (const char *const *)o->argv, o->argc, env_get(o->env, "PATH"),
                              NULL, &v);
    if (rc < 0)
        return rc;
    grant_answer answer = grant_verdict_answer(v);
    if (answer == GRANT_NOT_FOUND) {
        fail(out, GK_RUN_NOT_FOUND,
             gk_printf("%s: the policy admits it, but no such program exists", o->argv[0]));
    } else if (answer != GRANT_ALLOWED) {
        const char *rule = grant_verdict_rule(v), *origin = grant_verdict_origin(v);
        /* 126 whether or not it exists (cli.md); a name found nowhere on
         * PATH is most likely a typo, so say that too. */
        gk_autofree char *found = strchr(o->argv[0], '/')
                                      ? NULL
                                      : gk_launch_find_program(p, o->argv[0],
                                                               env_get(o->env, "PATH"));
        bool nowhere = !strchr(o->argv[0], '/') && !found;
        fail(out, GK_RUN_REFUSED,
             gk_printf("%s: refused by the policy: %s (%s)%s", o->argv[0], rule ? rule : "",
                       origin ? origin : "", nowhere ? "; nor is it on PATH" : ""));
    }
    grant_verdict_free(v);
    return answer == GRANT_ALLOWED;
}

static void envelope_init(envelope *e)
{
    memset(e, 0, sizeof(*e));
    for (int i = 0; i < NFDS; i++)
        e->fds[i] = -1;
    e->bwrap_fd = -1;
    e->status_pipe[0] = e->status_pipe[1] = e->info_pipe[0] = e->info_pipe[1] = -1;
}

/* The policy's own decision for a destination (grant_check_connect), as
 * the proxy asks it: the rule with its origin ("allow github.com; rule
 * f.grant:3"). */
int gk_launch_net_decide(void *ctx, const char *host, unsigned port, gk_net_decision *out)
{
    const grant_policy *p = ctx;
    grant_verdict *v = NULL;
    int rc = grant_check_connect(p, host, port, &v);
    if (rc < 0) {
        out->allowed = false;
        out->rule = gk_strdup("not a destination a rule can name");
        return 0;
    }
    const char *rule = grant_verdict_rule(v), *origin = grant_verdict_origin(v);
    out->allowed = grant_verdict_answer(v) == GRANT_ALLOWED;
    out->rule = gk_printf("%s; rule %s", rule ? rule : "", origin ? origin : "");
    grant_verdict_free(v);
    return 0;
}

/* The command's environment with the proxy variables (network.md §2):
 * HTTP(S)_PROXY and ALL_PROXY in both cases, NO_PROXY empty; the same
 * names from the caller are replaced. NULL-terminated. */
static void net_environment(const char *const *env, gk_strvec *out)
{
    static const char *const names[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"};
    for (size_t i = 0; env && env[i]; i++) {
        bool ours = false;
        for (size_t k = 0; k < sizeof(names) / sizeof(*names) && !ours; k++) {
            size_t n = strlen(names[k]);
            ours = strncasecmp(env[i], names[k], n) == 0 && env[i][n] == '=';
        }
        if (!ours)
            gk_strvec_push(out, env[i]);
    }
    const char *http = "http://127.0.0.1:" GK_NET_STR(GK_NET_RELAY_PORT);
    const char *socks = "socks5h://127.0.0.1:" GK_NET_STR(GK_NET_RELAY_PORT);
    for (int lower = 0; lower < 2; lower++) {
        gk_strvec_push_take(out, gk_printf("%s=%s", lower ? "http_proxy" : "HTTP_PROXY", http));
        gk_strvec_push_take(out, gk_printf("%s=%s", lower ? "https_proxy" : "HTTPS_PROXY", http));
        gk_strvec_push_take(out, gk_printf("%s=%s", lower ? "all_proxy" : "ALL_PROXY", socks));
        gk_strvec_push(out, lower ? "no_proxy=" : "NO_PROXY=");
    }
    gk_strvec_push_take(out, NULL);
    out->n--; /* the terminator stays past the end */
}

/* 16 random bytes in hex: what the helper's handoff must carry. */
static bool net_token(char out[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return false;
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return true;
}

/* The network allowlist's parts: the proxy on a socket in a private
 * directory on the host (started here unless dry), the socket where the
 * envelope sees it, the relay, and a network namespace of the envelope's
 * own. Returns false with out filled. */
static bool net_setup(envelope *e, const gk_launch_opts *o, gk_launch_result *out)
{
    invocation *c = &e->call;
    const char *inside = NET_SOCKET_IN_ENVELOPE;
    if (!o->dry_run) {
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        if (!runtime || runtime[0] != '/' || strlen(runtime) > 64 || access(runtime, W_OK) < 0)
            runtime = "/tmp";
        e->net_dir = gk_printf("%s/grantrun-net-XXXXXX", runtime);
        if (!mkdtemp(e->net_dir)) {
            fail(out, GK_RUN_FAILED,
                 gk_printf("cannot make the proxy's directory %s: %s", e->net_dir,
                           strerror(errno)));
            free(e->net_dir);
            e->net_dir = NULL;
            return false;
        }
        e->net_socket = gk_printf("%s/proxy.sock", e->net_dir);
        e->net_control = gk_printf("%s/handoff.sock", e->net_dir);
        if (!net_token(e->net_token)) {
            fail(out, GK_RUN_FAILED,
                 gk_printf("cannot make the proxy's handoff token: %s", strerror(errno)));
            return false;
        }
        /* The host paths go once handed off: no other run (a shared /tmp)
         * finds them. With the root on bwrap's tmpfs the envelope keeps its
         * binds of them; with the host root bound, the loopback listeners
         * are the only way in. */
        gk_proxy_opts po = {e->net_socket, e->net_control, e->net_token, true, o->net_decide,
                            o->net_ctx, NULL};
        int rc = gk_proxy_start(&po, &e->proxy);
        if (rc < 0) {
            fail(out, GK_RUN_FAILED,
                 gk_printf("confinement unavailable: cannot start the network proxy on %s: %s",
                           e->net_socket, strerror(-rc)));
            return false;
        }
        out->net = gk_calloc(1, sizeof(*out->net));
    }
    const char *control = NET_CONTROL_IN_ENVELOPE;
    if (e->pr->fs_restricted) {
        gk_strvec_push(&c->slot, "--ro-bind");
        gk_strvec_push(&c->slot, e->net_socket ? e->net_socket : "PROXY-SOCKET");
        gk_strvec_push(&c->slot, inside);
        gk_strvec_push(&c->slot, "--ro-bind");
        gk_strvec_push(&c->slot, e->net_control ? e->net_control : "PROXY-CONTROL");
        gk_strvec_push(&c->slot, control);
    } else {
        inside = e->net_socket ? e->net_socket : "PROXY-SOCKET";
        control = e->net_control ? e->net_control : "PROXY-CONTROL";
    }
    (void)inside; /* the unix socket is there for clients that speak to it directly */
    gk_strvec_push(&c->fd_options, "--unshare-net");
    gk_strvec_push(&c->helper_options, "--net-relay");
    gk_strvec_push_take(&c->helper_options,
                        gk_printf("%d:%s:%s", GK_NET_RELAY_PORT,
                                  *e->net_token ? e->net_token : "TOKEN", control));
    return true;
}

/* After the run: the proxy's records, and its directory gone. */
static void net_teardown(envelope *e, gk_launch_result *out)
{
    if (e->proxy) {
        gk_proxy_stop(e->proxy, out->net);
        e->proxy = NULL;
    }
    if (e->net_socket)
        unlink(e->net_socket);
    if (e->net_control)
        unlink(e->net_control);
    free(e->net_control);
    e->net_control = NULL;
    if (e->net_dir)
        rmdir(e->net_dir);
    free(e->net_socket);
    free(e->net_dir);
    e->net_socket = e->net_dir = NULL;
}

/* 2. The plan, the ruleset, the remounts. Returns false with out filled. */
static bool plan_envelope(envelope *e, const grant_policy *p, const gk_launch_opts *o,
                          grant_diags *notes, gk_launch_result *out)
{
    gk_launch_env le = {o->env, o->tty, o->scratch ? o->scratch_at : NULL, o->scratch};
    if (o->net_decide) {
        e->net_allowlist = true;
        net_environment(o->env, &e->net_env);
        le.env = (const char *const *)e->net_env.v;
    }
    gk_emit_input in = {p, e->pr, "shell", &le};
    gk_bwrap_plan_build(&in, notes, &e->plan);
    gk_landlock_build_from(&in, &e->plan, notes, &e->rs);
    /* With net allowed the envelope shares the host's network namespace,
     * and with it the host's abstract Unix sockets (an X server's, a
     * container runtime's): Landlock's abstract-socket scope closes them. */
    if (e->pr->net && e->rs.abi >= 6)
        e->rs.scoped = 1; /* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET */
    if (o->scratch && o->scratch_at && e->rs.handled) {
        /* The run's own scratch: readable and writable whatever the policy
         * says (frame-protocol.md §3a); denies inside it are bwrap's masks. */
        gk_ll_rule r = {gk_strdup(o->scratch_at), e->rs.handled, false};
        GK_VEC_PUSH(e->rs.v, e->rs.n, e->rs.cap, r);
    }
    if (gk_landlock_helper_text(&e->rs, &e->ruleset) < 0) {
        fail(out, GK_RUN_FAILED,
             gk_strdup("a region's path holds a newline, which the Landlock helper cannot "
                       "take: refusing to run without it"));
        return false;
    }
    /* What the policy asks and this level cannot hold (exec restricted
     * with fs unrestricted, --processes for root) was refused before, by
     * the enforcement record (level.h), or opted into (--allow-degraded). */
    noexec_mounts(e->pr, &e->plan, &e->noexec);
    if (o->scratch_at) {
        /* The scratch covers the plan's mounts below it: they are not
         * there to remount; the scratch itself is. */
        size_t w = 0;
        for (size_t i = 0; i < e->noexec.n; i++)
            if (gk_path_within(e->noexec.v[i], o->scratch_at))
                free(e->noexec.v[i]);
            else
                e->noexec.v[w++] = e->noexec.v[i];
        e->noexec.n = w;
        if (e->pr->exec_restricted && !exec_admitted(e->pr, o->scratch_at))
            gk_strvec_push(&e->noexec, o->scratch_at);
        gk_strvec_sort_unique(&e->noexec);
    }
    return true;
}

/* 3. What runs, field by field. */
static void fill_invocation(envelope *e, const gk_launch_opts *o)
{
    invocation *c = &e->call;
    c->plan = &e->plan;
    /* The helper is bound where the plan leaves room for a launcher's own
     * mounts; with the host root bound, it is already at its own path. */
    if (e->pr->fs_restricted) {
        gk_strvec_push(&c->slot, "--ro-bind");
        gk_strvec_push(&c->slot, o->helper);
        gk_strvec_push(&c->slot, HELPER_IN_ENVELOPE);
    }
    c->helper = e->pr->fs_restricted ? HELPER_IN_ENVELOPE : o->helper;
    if (o->scratch && o->scratch_at) {
        /* After the plan's regions and readonly re-binds, before its late
         * options (masks, and readonly entries inside the scratch, which
         * bwrap_plan looks up in o->scratch): those hold inside it. */
        gk_strvec_push(&c->slot, "--bind");
        gk_strvec_push(&c->slot, o->scratch);
        gk_strvec_push(&c->slot, o->scratch_at);
    }
    if (o->cwd) {
        /* Instead of the plan's own (bwrap warns about a second one). */
        gk_strvec *late = &e->plan.late_options;
        for (size_t i = 0; i + 1 < late->n; i++)
            if (strcmp(late->v[i], "--chdir") == 0) {
                free(late->v[i]);
                free(late->v[i + 1]);
                memmove(late->v + i, late->v + i + 2, (late->n - i - 2) * sizeof(*late->v));
                late->n -= 2;
                break;
            }
        gk_strvec_push(&c->fd_options, "--chdir");
        gk_strvec_push(&c->fd_options, o->cwd);
    }
    gk_strvec_push(&c->fd_options, "--seccomp");
    gk_strvec_push_take(&c->fd_options, gk_printf("%d", FD_SECCOMP));
    gk_strvec_push(&c->fd_options, "--info-fd");
    gk_strvec_push_take(&c->fd_options, gk_printf("%d", FD_INFO));

    gk_strvec *h = &c->helper_options;
    gk_strvec_push(h, "--status-fd");
    gk_strvec_push_take(h, gk_printf("%d", FD_STATUS));
    gk_strvec_push(h, "--landlock-fd");
    gk_strvec_push_take(h, gk_printf("%d", FD_LANDLOCK));
    gk_strvec_push(h, "--seccomp-fd");
    gk_strvec_push_take(h, gk_printf("%d", FD_MOUNT_FILTER));
    /* A protected name that is a symlink: bwrap binds its target, the
     * helper makes the link itself a mountpoint (projection.h links). */
    for (size_t i = 0; i < e->pr->links.n; i++) {
        gk_strvec_push(h, "--pin-link");
        gk_strvec_push(h, e->pr->links.v[i]);
    }
    /* Descriptors handed in reach the host's mounts (helper.c, guard_stdio). */
    gk_strvec_push(h, "--stdio");
    gk_strvec_push(h, "guard");
    for (size_t i = 0; i < e->noexec.n; i++) {
        gk_strvec_push(h, "--noexec");
        gk_strvec_push(h, e->noexec.v[i]);
    }
    const struct {
        const char *flag;
        long value;
    } limits[] = {{"--nproc", o->processes}, {"--cpu", o->cpu_seconds}, {"--as", o->memory_bytes}};
    for (size_t i = 0; i < sizeof(limits) / sizeof(*limits); i++)
        if (limits[i].value > 0) {
            gk_strvec_push(h, limits[i].flag);
            gk_strvec_push_take(h, gk_printf("%ld", limits[i].value));
        }
    c->command = o->argv;
    c->argc = o->argc;
}

static bool prepare_failed(gk_launch_result *out, int fd)
{
    if (fd >= 0)
        return false;
    fail(out, GK_RUN_FAILED, gk_printf("cannot prepare the envelope: %s", strerror(-fd)));
    return true;
}

/* The mountpoints bwrap makes below the scratch (gk_launch_opts.prepare). */
static void scratch_mountpoints(const invocation *c, const char *root, gk_strvec *out)
{
    gk_strvec opts = {0};
    render_options(c, &opts);
    for (size_t k = 0; k < opts.n; k++) {
        const char *a = opts.v[k];
        size_t n = bwrap_arity(a);
        if (k + n >= opts.n) {
            k += n;
            continue;
        }
        const char *dest = n ? opts.v[k + n] : NULL;
        bool dir = strcmp(a, "--tmpfs") == 0 || strcmp(a, "--dir") == 0;
        bool bind = n == 2 && strstr(a, "bind") != NULL;
        if (dest && (dir || bind) && gk_path_within(dest, root) && strcmp(dest, root) != 0) {
            struct stat st;
            bool file = bind && stat(opts.v[k + 1], &st) == 0 && !S_ISDIR(st.st_mode);
            gk_strvec_push_take(out, gk_printf("%c%s", file ? 'f' : 'd', dest + strlen(root)));
        }
        k += n;
    }
    gk_strvec_free(&opts);
}

/* 4. bwrap's options through their descriptor, and its seccomp filter. */
static bool bwrap_descriptors(envelope *e, gk_launch_result *out)
{
    gk_strvec options = {0};
    render_options(&e->call, &options);
    gk_buf packed = {0};
    for (size_t i = 0; i < options.n; i++)
        gk_buf_add(&packed, options.v[i], strlen(options.v[i]) + 1);
    e->fds[FD_ARGS - FD_ARGS] = gk_memfd_with("grantkit-bwrap-args", packed.data, packed.len, false);
    gk_buf_free(&packed);
    gk_strvec_free(&options);
    /* An allowlist's envelope has its own network namespace: sockets
     * there reach only its loopback, where the relay is. */
    e->fds[FD_SECCOMP - FD_ARGS] =
        gk_seccomp_main_fd(e->pr->net || e->net_allowlist, e->pr->exec_restricted);
    return !prepare_failed(out, e->fds[FD_ARGS - FD_ARGS]) &&
           !prepare_failed(out, e->fds[FD_SECCOMP - FD_ARGS]);
}

/* 5. The helper's: the Landlock ruleset, the mount filter, the status pipe. */
static bool helper_descriptors(envelope *e, gk_launch_result *out)
{
    e->fds[FD_LANDLOCK - FD_ARGS] =
        gk_memfd_with("grantkit-landlock", e->ruleset.data, e->ruleset.len, false);
    e->fds[FD_MOUNT_FILTER - FD_ARGS] = gk_seccomp_mount_fd();
    if (prepare_failed(out, e->fds[FD_LANDLOCK - FD_ARGS]) ||
        prepare_failed(out, e->fds[FD_MOUNT_FILTER - FD_ARGS]))
        return false;
    if (pipe2(e->status_pipe, O_CLOEXEC) < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make the status pipe: %s", strerror(errno)));
        return false;
    }
    e->fds[FD_STATUS - FD_ARGS] = e->status_pipe[1];
    return true;
}

/* 6. Where grantrun learns the envelope's first process and its own
 * signals, and the pinned bwrap. */
static bool spawn_descriptors(envelope *e, const gk_launch_opts *o, gk_launch_result *out)
{
    if (pipe2(e->info_pipe, O_CLOEXEC) < 0 ||
        (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make a pipe: %s", strerror(errno)));
        return false;
    }
    e->fds[FD_INFO - FD_ARGS] = e->info_pipe[1];
    e->bwrap_fd = open(o->bwrap, O_PATH | O_CLOEXEC);
    if (e->bwrap_fd < 0) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: bubblewrap %s: %s", o->bwrap, strerror(errno)));
        return false;
    }
    return true;
}

/* 8. What the helper reported and how bwrap ended, as grantrun's status. */
static void relay_status(int st, bool timed_out, const char *report, const gk_launch_opts *o,
                         gk_launch_result *out)
{
    bool started = gk_has_prefix(report, "started\n");
    const char *after = started ? report + 8 : report;
    size_t line = strcspn(after, "\n");
    out->timed_out = timed_out;
    out->started = started && !gk_has_prefix(after, "setup ") && !gk_has_prefix(after, "exec ");
    if (timed_out) {
        /* frame-protocol.md §3b: exitCode is the command's status, 128+N
         * for the signal that ended it, also after a timeout. */
        out->command_status = out->started ? gk_status_of_wait(st) : -1;
        fail(out, GK_RUN_TIMEOUT, gk_printf("timed out after %ld ms", o->timeout_ms));
    } else if (gk_has_prefix(report, "bwrap-exec ")) {
        int err = atoi(report + 11);
        /* ENOENT for a file that is there: it runs from its pinned
         * descriptor, which a #! interpreter cannot reopen. */
        bool there = err == ENOENT && access(o->bwrap, F_OK) == 0;
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: cannot execute bubblewrap %s: %s%s; nothing ran",
                       o->bwrap, strerror(err),
                       err == EACCES    ? " (not an executable file)"
                       : err == ENOEXEC ? " (not a program this system can run)"
                       : there ? " (it exists: a #! script cannot run from the pinned descriptor, "
                                 "or its ELF interpreter is missing; give the bwrap binary itself)"
                               : ""));
    } else if (!started) {
        /* bwrap's own exit (not a signal: a Ctrl-C is no refusal) */
        out->envelope_refused = WIFEXITED(st);
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: bubblewrap could not set up the envelope "
                       "(%s %d)",
                       WIFEXITED(st) ? "exit status" : "signal",
                       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)));
    } else if (gk_has_prefix(after, "setup ")) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement failed, nothing ran: %.*s", (int)line - 6, after + 6));
    } else if (gk_has_prefix(after, "exec ")) {
        int err = atoi(after + 5);
        const char *why = strchr(after + 5, ' ');
        fail(out, err == ENOENT ? GK_RUN_NOT_FOUND : GK_RUN_REFUSED,
             gk_printf("cannot execute%.*s", why ? (int)(line - (size_t)(why - after)) : 0,
                       why ? why : ""));
    } else {
        out->status = gk_status_of_wait(st);
        /* Under an address-space limit a SIGSEGV is most often the loader
         * or allocator failing to map: say so, the status stays. */
        if (o->memory_bytes > 0 && out->status == 128 + SIGSEGV)
            fail(out, out->status,
                 gk_printf("the command was killed by SIGSEGV under --memory %ld: an address-space "
                           "limit too small for it faults instead of failing cleanly",
                           o->memory_bytes));
    }
}

/* 7. Fork, execute the pinned bwrap, wait with signals forwarded; then 8. */
static void spawn_and_wait(envelope *e, const gk_launch_opts *o, gk_launch_result *out)
{
    /* The last step: the argv bwrap is executed with. Options come through
     * FD_ARGS; the helper and the command stay on the command line. */
    gk_strvec argv = {0};
    gk_strvec_push(&argv, "bwrap");
    gk_strvec_push(&argv, "--args");
    gk_strvec_push_take(&argv, gk_printf("%d", FD_ARGS));
    gk_strvec_push(&argv, "--");
    render_helper(&e->call, &argv);
    char **tail = gk_calloc(argv.n + 1, sizeof(*tail));
    memcpy(tail, argv.v, argv.n * sizeof(*tail));

    struct sigaction sa = {0}, old[sizeof(forwarded) / sizeof(*forwarded)];
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &sa, &old[i]);
    /* vfork: the child only moves descriptors and executes, so the
     * parent's page tables need no copy (and its heap no copy-on-write).
     * Every signal blocked across it, as posix_spawn does: no handler of
     * the parent's runs in the child on the shared stack; the child
     * resets them before it unblocks (gk_launch_child_signals). */
    struct timespec since = gk_launch_timeout_start(o);
    sigset_t all, saved;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &saved);
    pid_t pid = vfork();
    if (pid == 0)
        exec_bwrap(e->bwrap_fd, e->fds, tail, o);
    sigprocmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot fork: %s", strerror(errno)));
    } else {
        /* Only the envelope may hold the write ends: EOF then means it is done. */
        close(e->status_pipe[1]);
        e->status_pipe[1] = e->fds[FD_STATUS - FD_ARGS] = -1;
        close(e->info_pipe[1]);
        e->info_pipe[1] = e->fds[FD_INFO - FD_ARGS] = -1;
        bool timed_out;
        int st = wait_child(pid, e->info_pipe[0], o->timeout_ms, o->term_grace_ms, since,
                            &timed_out);
        e->info_pipe[0] = -1; /* closed by wait_child */
        gk_autofree char *report = drain(e->status_pipe[0]);
        relay_status(st, timed_out, report, o, out);
    }
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &old[i], NULL);
    free(tail);
    gk_strvec_free(&argv);
}

/* 9. Every descriptor, string and table the launch made. */
static void envelope_free(envelope *e)
{
    for (int i = 0; i < NFDS; i++)
        if (e->fds[i] >= 0)
            close(e->fds[i]);
    if (e->info_pipe[0] >= 0)
        close(e->info_pipe[0]);
    if (e->status_pipe[0] >= 0)
        close(e->status_pipe[0]);
    if (e->bwrap_fd >= 0)
        close(e->bwrap_fd);
    gk_strvec_free(&e->call.slot);
    gk_strvec_free(&e->call.fd_options);
    gk_strvec_free(&e->call.helper_options);
    gk_strvec_free(&e->noexec);
    gk_strvec_free(&e->net_env);
    gk_buf_free(&e->ruleset);
    gk_landlock_free(&e->rs);
    gk_bwrap_plan_free(&e->plan);
    gk_projection_free(e->pr);
}

static bool prepared(envelope *e, const gk_launch_opts *o, gk_launch_result *out)
{
    gk_strvec points = {0};
    scratch_mountpoints(&e->call, o->scratch_at, &points);
    int rc = o->prepare(o->prepare_arg, &points);
    gk_strvec_free(&points);
    if (rc != 0)
        fail(out, GK_RUN_FAILED, gk_printf("cannot prepare the scratch tree: %s", strerror(rc < 0 ? -rc : rc)));
    return rc == 0;
}

int gk_launch(const grant_policy *p, const gk_launch_opts *o, grant_diags *notes,
              gk_buf *described, gk_launch_result *out)
{
    memset(out, 0, sizeof(*out));
    if (!p || !o || !o->argv || o->argc == 0 || !o->bwrap || !o->helper)
        return -EINVAL;
    if (gk_target_is_offline(gk_policy_context(p)))
        return -EINVAL; /* paths frozen for another machine */
    int rc = gk_launch_gate(p, o, out);
    if (rc <= 0)
        return rc;
    gk_placeholders ph;
    int lock_rc;
    if (!gk_launch_lock(o, &ph, &lock_rc, out))
        return 0;
    return gk_launch_planned(p, o, &ph, lock_rc, gk_projection_build(p), notes, described, out);
}

int gk_launch_planned(const grant_policy *p, const gk_launch_opts *given, gk_placeholders *ph,
                      int lock_rc, gk_projection *pr, grant_diags *notes, gk_buf *described,
                      gk_launch_result *out)
{
    envelope e;
    envelope_init(&e);
    e.pr = pr;
    if (!p || !given || !given->argv || given->argc == 0 || !given->bwrap || !given->helper ||
        gk_target_is_offline(gk_policy_context(p))) {
        gk_placeholders_release(ph);
        envelope_free(&e);
        return -EINVAL;
    }
    /* A policy with destination lists: the gate decides each connection. */
    gk_launch_opts eff = *given;
    if (!eff.net_decide && grant_policy_net_mode(p) == GRANT_NET_LIST) {
        eff.net_decide = gk_launch_net_decide;
        eff.net_ctx = (void *)p;
    }
    const gk_launch_opts *o = &eff;
    if (lock_rc < 0 && lock_rc != -ETIMEDOUT)
        gk_diag_file(notes, GK_NOTE, "grantrun",
                     "placeholders: no lock in the runtime directory (%s): any placeholder bwrap "
                     "creates for this run stays on the host",
                     strerror(-lock_rc));
    /* The lock (ph) was taken before the projection looked at the host and
     * is held until the envelope has ended: no run removes a placeholder
     * another still masks. */
    if (plan_envelope(&e, p, o, notes, out)) {
        fill_invocation(&e, o);
        gk_placeholders_mask(ph, &e.plan, &e.call.slot);
        if (o->net_decide && !net_setup(&e, o, out)) {
            /* out says why; nothing ran */
        } else if (o->dry_run) {
            if (described)
                describe(described, &e.call, e.ruleset.data ? e.ruleset.data : "");
            out->status = 0;
        } else if (o->prepare && o->scratch_at && !prepared(&e, o, out)) {
            /* out says why */
        } else if (bwrap_descriptors(&e, out) && helper_descriptors(&e, out) &&
                   spawn_descriptors(&e, o, out)) {
            gk_placeholders_make(ph, &e.plan);
            if (gk_placeholders_still_held(ph))
                spawn_and_wait(&e, o, out);
            else
                fail(out, GK_RUN_FAILED,
                     gk_strdup("placeholders: the runtime directory's lock was moved off its "
                               "name during the plan (grantrun(1)); nothing ran"));
        }
    }
    net_teardown(&e, out);
    gk_placeholders_release(ph);
    envelope_free(&e);
    return 0;
}
