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

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

enum { FD_ARGS = 3, FD_SECCOMP = 4, FD_LANDLOCK = 5, FD_MOUNT_FILTER = 6, FD_STATUS = 7,
       FD_INFO = 8 /* bwrap --info-fd: where the envelope's first process is */ };

/* Where the helper is bound when the sandbox root is bwrap's own tmpfs
 * (outside every region a policy can name). */
#define HELPER_IN_ENVELOPE "/.grantkit-helper"

void gk_launch_result_clear(gk_launch_result *r)
{
    free(r->message);
    memset(r, 0, sizeof(*r));
}

char *gk_launch_find_program(const grant_policy *p, const char *name, const char *path_env)
{
    char *walked = NULL, *canonical = NULL;
    gk_walk_head(p->ctx, name, path_env, "/", &walked, &canonical);
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

/* What this host cannot hold for the policy: the reason (the launch is
 * refused, 125, nothing runs), or NULL. */
static char *unenforceable(const gk_projection *pr, const gk_launch_opts *o)
{
    if (pr->exec_restricted && !pr->fs_restricted)
        /* The host root is bound writable (--dev-bind / /) and holds /usr:
         * no noexec mount can keep what the run writes from the ELF
         * loader. Refused rather than half kept (grantrun(1)). */
        return gk_strdup("confinement unavailable: exec is restricted but fs is not: with the "
                         "host root bound writable, a file the command writes could still be "
                         "run through the ELF loader; grant fs regions (read/write) or drop "
                         "the exec allow-list");
    if (o->processes > 0 && (getuid() == 0 || geteuid() == 0))
        /* The kernel exempts uid 0 from RLIMIT_NPROC, in a user namespace
         * too (its uid 0 is the host's): a limit set would never hold. */
        return gk_strdup("confinement unavailable: --processes cannot be enforced for root: the "
                         "kernel never applies RLIMIT_NPROC to uid 0; run grantrun as an "
                         "ordinary user, or without --processes");
    return NULL;
}

/* The plan's argv, with the helper bound where the plan leaves room for a
 * launcher's own mounts (with the host root bound, it is already at its
 * own path), and, for a caller who is not root, /dev without devpts. */
static void plan_args(const gk_bwrap_plan *plan, bool fs_restricted, const char *helper,
                      gk_strvec *args)
{
    bool unprivileged = geteuid() != 0;
    for (size_t k = 0, values = 0; k <= plan->argv.n; k++) {
        if (k == plan->insert_at && fs_restricted) {
            gk_strvec_push(args, "--ro-bind");
            gk_strvec_push(args, helper);
            gk_strvec_push(args, HELPER_IN_ENVELOPE);
        }
        if (k == plan->argv.n)
            break;
        const char *a = plan->argv.v[k];
        if (values) {
            values--;
        } else if (unprivileged && strcmp(a, "--dev") == 0 && k + 1 < plan->argv.n) {
            dev_without_devpts(args, plan->argv.v[++k]);
            continue;
        } else {
            values = bwrap_arity(a);
        }
        gk_strvec_push(args, a);
    }
}

static int memfd_with(const char *name, const char *data, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? -errno : -EIO;
            close(fd);
            return err;
        }
        off += (size_t)w;
    }
    if (lseek(fd, 0, SEEK_SET) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
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
 * reaper, which ignores it): the command gets it as from a terminal.
 * Returns how many were signalled. */
static int signal_envelope(pid_t init, int sig)
{
    char path[64];
    struct stat ns;
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
    if (stat(path, &ns) < 0)
        return 0;
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == init)
            continue;
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
        if (stat(path, &st) == 0 && st.st_ino == ns.st_ino && st.st_dev == ns.st_dev &&
            kill((pid_t)pid, sig) == 0)
            n++;
    }
    closedir(proc);
    return n;
}

/* In the child: the six descriptors at their numbers, nothing else open,
 * default signal dispositions, then the pinned bwrap. Never returns. */
#define NFDS (FD_INFO - FD_ARGS + 1)

static void exec_bwrap(int bwrap_fd, const int fds[NFDS], char **tail)
{
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
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        signal(forwarded[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* bwrap takes options from --args, the command from its own argv:
     * tail is "bwrap --args 3 -- HELPER ... -- COMMAND...". */
    char *const envp[] = {NULL};
    syscall(SYS_execveat, FD_INFO + 1, "", tail, envp, AT_EMPTY_PATH);
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
static int wait_child(pid_t pid, int info_fd, long timeout_ms, bool *timed_out)
{
    *timed_out = false;
    /* Without pidfds (before Linux 5.3, older than Landlock itself) the
     * loop polls the child every 50 ms instead. */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
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
            if (spent >= timeout_ms) {
                *timed_out = true;
                kill(pid, SIGKILL); /* the envelope dies with bwrap */
                break;
            }
            wait_ms = (int)(timeout_ms - spent);
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
                if (!init || signal_envelope(init, sig) == 0)
                    kill(pid, sig);
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    if (info_fd >= 0)
        close(info_fd);
    gk_buf_free(&info);
    while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return st;
}

/* Remove what bwrap created on the host, deepest first, if still empty. */
static void remove_placeholders(const gk_bwrap_plan *plan)
{
    for (size_t i = 0; i < plan->placeholders.n; i++) {
        const char *p = plan->placeholders.v[i];
        struct stat st;
        if (lstat(p, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode))
            rmdir(p); /* fails, and stays, if something was put inside */
        else if (S_ISREG(st.st_mode) && st.st_size == 0)
            unlink(p);
    }
}

static void describe(gk_buf *d, const gk_strvec *args, const char *ruleset)
{
    gk_buf_puts(d, "bwrap");
    for (size_t i = 0; i < args->n; i++) {
        gk_buf_puts(d, "\n  ");
        gk_buf_puts(d, args->v[i]);
    }
    gk_buf_puts(d, "\n# Landlock ruleset (helper input)\n");
    gk_buf_puts(d, ruleset);
}

int gk_launch(const grant_policy *p, const gk_launch_opts *o, grant_diags *notes,
              gk_buf *described, gk_launch_result *out)
{
    memset(out, 0, sizeof(*out));
    if (!p || !o || !o->argv || o->argc == 0 || !o->bwrap || !o->helper)
        return -EINVAL;
    if (p->ctx->target != GRANT_TARGET_HOST)
        return -EINVAL; /* paths frozen for another machine */

    /* 1. The gate decides before anything starts. */
    grant_verdict *v = NULL;
    int rc = grant_check_exec(p, (const char *const *)o->argv, o->argc, env_get(o->env, "PATH"),
                              NULL, &v);
    if (rc < 0)
        return rc;
    grant_answer answer = grant_verdict_answer(v);
    if (answer != GRANT_ALLOWED) {
        const char *rule = grant_verdict_rule(v), *origin = grant_verdict_origin(v);
        if (answer == GRANT_NOT_FOUND)
            fail(out, GK_RUN_NOT_FOUND,
                 gk_printf("%s: the policy admits it, but no such program exists", o->argv[0]));
        else
            fail(out, GK_RUN_REFUSED,
                 gk_printf("%s: refused by the policy: %s (%s)", o->argv[0], rule ? rule : "",
                           origin ? origin : ""));
        grant_verdict_free(v);
        return 0;
    }
    grant_verdict_free(v);

    /* 2. The envelope: the plan, the ruleset, the remounts. */
    gk_projection *pr = gk_projection_build(p);
    gk_launch_env le = {o->env, o->tty};
    gk_emit_input in = {p, pr, "shell", &le};
    gk_bwrap_plan plan;
    gk_bwrap_plan_build(&in, notes, &plan);
    gk_ll_ruleset rs;
    gk_landlock_build_from(&in, &plan, notes, &rs);
    gk_buf ll = {0};
    gk_strvec noexec = {0}, args = {0};
    int fds[NFDS] = {-1, -1, -1, -1, -1, -1}, bwrap_fd = -1, status_pipe[2] = {-1, -1};
    int info_pipe[2] = {-1, -1};
    char **tail = NULL; /* bwrap's own argv: "bwrap --args N -- ..." */
    if (gk_landlock_helper_text(&rs, &ll) < 0) {
        fail(out, GK_RUN_FAILED,
             gk_strdup("a region's path holds a newline, which the Landlock helper cannot "
                       "take: refusing to run without it"));
        goto done;
    }
    char *refused = unenforceable(pr, o);
    if (refused) {
        fail(out, GK_RUN_FAILED, refused);
        goto done;
    }
    noexec_mounts(pr, &plan, &noexec);

    /* The helper is bound where the plan leaves room for a launcher's own
     * mounts; with the host root bound, it is already at its own path. */
    const char *helper_at = pr->fs_restricted ? HELPER_IN_ENVELOPE : o->helper;
    plan_args(&plan, pr->fs_restricted, o->helper, &args);
    gk_strvec_push(&args, "--seccomp");
    gk_strvec_push_take(&args, gk_printf("%d", FD_SECCOMP));
    gk_strvec_push(&args, "--info-fd");
    gk_strvec_push_take(&args, gk_printf("%d", FD_INFO));
    gk_strvec_push(&args, "--");
    gk_strvec_push(&args, helper_at);
    gk_strvec_push(&args, "--status-fd");
    gk_strvec_push_take(&args, gk_printf("%d", FD_STATUS));
    gk_strvec_push(&args, "--landlock-fd");
    gk_strvec_push_take(&args, gk_printf("%d", FD_LANDLOCK));
    gk_strvec_push(&args, "--seccomp-fd");
    gk_strvec_push_take(&args, gk_printf("%d", FD_MOUNT_FILTER));
    for (size_t i = 0; i < noexec.n; i++) {
        gk_strvec_push(&args, "--noexec");
        gk_strvec_push(&args, noexec.v[i]);
    }
    const struct {
        const char *flag;
        long value;
    } limits[] = {{"--nproc", o->processes}, {"--cpu", o->cpu_seconds}, {"--as", o->memory_bytes}};
    for (size_t i = 0; i < sizeof(limits) / sizeof(*limits); i++)
        if (limits[i].value > 0) {
            gk_strvec_push(&args, limits[i].flag);
            gk_strvec_push_take(&args, gk_printf("%ld", limits[i].value));
        }
    gk_strvec_push(&args, "--");
    for (size_t i = 0; i < o->argc; i++)
        gk_strvec_push(&args, o->argv[i]);

    if (o->dry_run) {
        if (described)
            describe(described, &args, ll.data ? ll.data : "");
        out->status = 0;
        goto done;
    }

    /* 3. Descriptors, then bwrap. */
    /* Options through the descriptor; from "--" on, bwrap's own argv. */
    size_t dashes = 0;
    while (dashes < args.n && strcmp(args.v[dashes], "--") != 0)
        dashes++;
    gk_buf packed = {0};
    for (size_t i = 0; i < dashes; i++)
        gk_buf_add(&packed, args.v[i], strlen(args.v[i]) + 1);
    tail = gk_calloc(args.n - dashes + 4, sizeof(*tail));
    size_t nt = 0;
    tail[nt++] = (char *)"bwrap";
    tail[nt++] = (char *)"--args";
    tail[nt++] = gk_printf("%d", FD_ARGS);
    for (size_t i = dashes; i < args.n; i++)
        tail[nt++] = args.v[i];
    fds[0] = memfd_with("grantkit-bwrap-args", packed.data, packed.len);
    gk_buf_free(&packed);
    fds[1] = gk_seccomp_main_fd(pr->net, pr->exec_restricted);
    fds[2] = memfd_with("grantkit-landlock", ll.data, ll.len);
    fds[3] = gk_seccomp_mount_fd();
    for (int i = 0; i < 4; i++)
        if (fds[i] < 0) {
            fail(out, GK_RUN_FAILED,
                 gk_printf("cannot prepare the envelope: %s", strerror(-fds[i])));
            goto done;
        }
    if (pipe2(status_pipe, O_CLOEXEC) < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make the status pipe: %s", strerror(errno)));
        goto done;
    }
    fds[4] = status_pipe[1];
    if (pipe2(info_pipe, O_CLOEXEC) < 0 ||
        (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make a pipe: %s", strerror(errno)));
        goto done;
    }
    fds[5] = info_pipe[1];
    bwrap_fd = open(o->bwrap, O_PATH | O_CLOEXEC);
    if (bwrap_fd < 0) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: bubblewrap %s: %s", o->bwrap, strerror(errno)));
        goto done;
    }

    struct sigaction sa = {0}, old[sizeof(forwarded) / sizeof(*forwarded)];
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &sa, &old[i]);
    pid_t pid = fork();
    if (pid == 0)
        exec_bwrap(bwrap_fd, fds, tail);
    if (pid < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot fork: %s", strerror(errno)));
    } else {
        close(status_pipe[1]);
        status_pipe[1] = fds[4] = -1;
        close(info_pipe[1]);
        info_pipe[1] = fds[5] = -1;
        bool timed_out;
        int st = wait_child(pid, info_pipe[0], o->timeout_ms, &timed_out);
        info_pipe[0] = -1; /* closed by wait_child at EOF, or below */
        gk_autofree char *report = drain(status_pipe[0]);
        bool started = gk_has_prefix(report, "started\n");
        const char *after = started ? report + 8 : report;
        size_t line = strcspn(after, "\n");
        if (timed_out) {
            fail(out, GK_RUN_TIMEOUT, gk_printf("timed out after %ld ms", o->timeout_ms));
        } else if (!started) {
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
            out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
    }
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &old[i], NULL);
    remove_placeholders(&plan);

done:
    if (tail) {
        free(tail[2]);
        free(tail);
    }
    for (int i = 0; i < NFDS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (info_pipe[0] >= 0)
        close(info_pipe[0]);
    if (status_pipe[0] >= 0)
        close(status_pipe[0]);
    if (bwrap_fd >= 0)
        close(bwrap_fd);
    gk_strvec_free(&args);
    gk_strvec_free(&noexec);
    gk_buf_free(&ll);
    gk_landlock_free(&rs);
    gk_bwrap_plan_free(&plan);
    gk_projection_free(pr);
    return 0;
}
