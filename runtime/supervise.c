/* supervise.c - the frame protocol's parent (see supervise.h).
 *
 * One poll loop over the child's stdin (the request, written as the pipe
 * takes it), stdout (the result frame), stderr (only its last 4096 bytes
 * kept) and a pidfd, so a 60 MiB request and a chatty stderr cannot
 * deadlock each other and the deadline is seen even while the child
 * writes nothing. SIGPIPE is blocked in this thread while a write can
 * meet a dead reader (EPIPE is handled), and a SIGPIPE it raised is
 * consumed before the call returns.
 */
#include "runtime/supervise.h"
#include "runtime/syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#define TAIL_MAX 4096
/* How long the pipes are still drained after the child has exited (a
 * descendant that kept them open is not waited for longer). */
#define DRAIN_AFTER_EXIT_MS 1000

static int pinned_self = -1;

int gk_supervise_pin(void)
{
    if (pinned_self >= 0)
        return 0;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    pinned_self = fd;
    return 0;
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The last TAIL_MAX bytes of stderr. */
typedef struct tail {
    char b[TAIL_MAX];
    size_t len;
} tail;

static void tail_add(tail *t, const char *p, size_t n)
{
    if (n >= TAIL_MAX) {
        memcpy(t->b, p + n - TAIL_MAX, TAIL_MAX);
        t->len = TAIL_MAX;
        return;
    }
    if (t->len + n > TAIL_MAX) {
        size_t drop = t->len + n - TAIL_MAX;
        memmove(t->b, t->b + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->b + t->len, p, n);
    t->len += n;
}

/* The tail from its first code-point boundary (a cut at the front may
 * have split a sequence: its continuation bytes go). */
static const char *tail_text(const tail *t, size_t *len)
{
    size_t skip = 0;
    while (skip < 3 && skip < t->len && ((unsigned char)t->b[skip] & 0xC0) == 0x80)
        skip++;
    *len = t->len - skip;
    return t->b + skip;
}

static char *with_tail(char *msg, const tail *t)
{
    size_t n;
    const char *s = tail_text(t, &n);
    if (!n)
        return msg;
    gk_buf b = {0};
    gk_buf_puts(&b, msg);
    gk_buf_printf(&b, "; child stderr (last %zu bytes):\n", n);
    gk_buf_add(&b, s, n);
    free(msg);
    return gk_buf_steal(&b, NULL);
}

/* In the forked child: fds 0-2 from the pipes, nothing else across the
 * exec, default signals, cwd /, an empty environment. Never returns. */
static void exec_child(int exe, int in, int out, int err, char *const *argv)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int hi_in = fcntl(in, F_DUPFD_CLOEXEC, 10), hi_out = fcntl(out, F_DUPFD_CLOEXEC, 10),
        hi_err = fcntl(err, F_DUPFD_CLOEXEC, 10), hi_exe = fcntl(exe, F_DUPFD_CLOEXEC, 10);
    if (hi_in < 0 || hi_out < 0 || hi_err < 0 || hi_exe < 0 || dup2(hi_in, 0) < 0 ||
        dup2(hi_out, 1) < 0 || dup2(hi_err, 2) < 0)
        _exit(127);
    /* Everything above 2 closes at the exec (the binary's own descriptor
     * must live until then). */
    if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        for (int fd = 3; fd < 65536; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    for (int s = 1; s < 65; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (chdir("/") < 0)
        _exit(127);
    char *const envp[] = {NULL};
    syscall(SYS_execveat, hi_exe, "", argv, envp, AT_EMPTY_PATH);
    static const char msg[] = "grantrun: cannot execute the frame child\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* the parent sees the exit status */
    }
    _exit(127);
}

typedef struct run {
    int in, out, err, pidfd;
    pid_t pid;
    const unsigned char *prefix;
    const char *payload;
    size_t len, sent;         /* of 4 + len */
    gk_frame_reader frame;
    bool frame_bad;           /* ZERO or OVERSIZE: the child was killed for it */
    tail stderr_tail;
    bool exited, killed_at_deadline;
    int status;
    long long start, deadline, after_frame, drain_until;
} run;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void kill_child(run *r)
{
    if (r->exited)
        return;
    if (r->pidfd >= 0)
        syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    else
        kill(r->pid, SIGKILL); /* not reaped yet: the pid is still ours */
}

static void write_request(run *r)
{
    while (r->sent < 4 + r->len) {
        const char *p = r->sent < 4 ? (const char *)r->prefix + r->sent
                                    : r->payload + (r->sent - 4);
        size_t n = r->sent < 4 ? 4 - r->sent : r->len - (r->sent - 4);
        ssize_t w = write(r->in, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return;
        if (w <= 0) {
            /* EPIPE: the child stopped reading; what it says decides. */
            close_fd(&r->in);
            return;
        }
        r->sent += (size_t)w;
    }
    close_fd(&r->in); /* EOF after the one frame */
}

static void read_stdout(run *r)
{
    for (;;) {
        ssize_t n;
        if (r->frame.state == GK_FRAME_PREFIX || r->frame.state == GK_FRAME_PAYLOAD) {
            n = gk_frame_reader_step(&r->frame, r->out);
            if (r->frame.state == GK_FRAME_ZERO || r->frame.state == GK_FRAME_OVERSIZE) {
                /* Nothing trustworthy can follow: stop the child now. */
                r->frame_bad = true;
                kill_child(r);
                close_fd(&r->out);
                return;
            }
            if (r->frame.state == GK_FRAME_DONE && r->after_frame < 0)
                r->after_frame = now_ms();
        } else {
            char junk[65536]; /* after the one frame: read and dropped */
            n = read(r->out, junk, sizeof(junk));
            n = n < 0 ? -errno : n;
        }
        if (n == -EINTR)
            continue;
        if (n == -EAGAIN)
            return;
        if (n <= 0) {
            close_fd(&r->out);
            return;
        }
    }
}

static void read_stderr(run *r)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(r->err, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            close_fd(&r->err);
            return;
        }
        tail_add(&r->stderr_tail, chunk, (size_t)n);
    }
}

static void reap(run *r)
{
    int st;
    pid_t w;
    do
        w = waitpid(r->pid, &st, 0);
    while (w < 0 && errno == EINTR);
    r->exited = true;
    r->status = w == r->pid ? st : -1;
    r->drain_until = now_ms() + DRAIN_AFTER_EXIT_MS;
}

static void loop(run *r, long grace_ms)
{
    while (!r->exited || r->out >= 0 || r->err >= 0) {
        long long t = now_ms();
        if (r->exited && t >= r->drain_until)
            break;
        if (!r->exited && r->deadline > 0 && t >= r->deadline && !r->killed_at_deadline) {
            /* Evidence rule: a frame already whole is judged as it is. */
            r->killed_at_deadline = r->frame.state != GK_FRAME_DONE;
            kill_child(r);
            r->deadline = 0;
        }
        if (!r->exited && r->after_frame >= 0 && t >= r->after_frame + grace_ms) {
            kill_child(r); /* answered, then hung: the answer stands */
            r->after_frame = 1LL << 62;
        }
        struct pollfd p[4];
        int n = 0, i_in = -1, i_out = -1, i_err = -1, i_pid = -1;
        if (r->in >= 0)
            p[i_in = n++] = (struct pollfd){r->in, POLLOUT, 0};
        if (r->out >= 0)
            p[i_out = n++] = (struct pollfd){r->out, POLLIN, 0};
        if (r->err >= 0)
            p[i_err = n++] = (struct pollfd){r->err, POLLIN, 0};
        if (!r->exited && r->pidfd >= 0)
            p[i_pid = n++] = (struct pollfd){r->pidfd, POLLIN, 0};
        long long wait = -1;
        if (!r->exited && r->deadline > 0)
            wait = r->deadline - t;
        if (!r->exited && r->after_frame >= 0 && r->after_frame < (1LL << 61)) {
            long long w2 = r->after_frame + grace_ms - t;
            wait = wait < 0 || w2 < wait ? w2 : wait;
        }
        if (r->exited) {
            long long w2 = r->drain_until - t;
            wait = wait < 0 || w2 < wait ? w2 : wait;
        }
        if (!r->exited && r->pidfd < 0 && (wait < 0 || wait > 50))
            wait = 50; /* no pidfd: look at the child every 50 ms */
        if (wait > 0 && wait < 1)
            wait = 1;
        int rc = poll(p, (nfds_t)n, wait < 0 ? -1 : (int)(wait > 1 << 30 ? 1 << 30 : wait));
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0) {
            if (!r->exited && r->pidfd < 0 && waitpid(r->pid, &r->status, WNOHANG) == r->pid) {
                r->exited = true;
                r->drain_until = now_ms() + DRAIN_AFTER_EXIT_MS;
            }
            continue;
        }
        if (i_in >= 0 && p[i_in].revents)
            write_request(r);
        if (i_out >= 0 && p[i_out].revents)
            read_stdout(r);
        if (i_err >= 0 && p[i_err].revents)
            read_stderr(r);
        if (i_pid >= 0 && p[i_pid].revents)
            reap(r);
    }
    if (!r->exited) {
        kill_child(r);
        reap(r);
    }
}

static const char *signal_name(int sig)
{
    const char *abbrev = sigabbrev_np(sig);
    return abbrev ? abbrev : "unknown";
}

/* §4 by the evidence rule: a whole, valid frame read wins. */
static void classify(run *r, long long deadline_ms, gk_run_result *out)
{
    if (r->frame.state == GK_FRAME_DONE) {
        size_t len;
        gk_autofree char *payload = gk_frame_reader_take(&r->frame, &len);
        char *err = NULL;
        int rc = gk_run_result_parse(payload, len, out, &err);
        if (rc == 0 && out->failure == GK_FAIL_CRASH) {
            gk_run_result_clear(out);
            gk_run_result_init(out);
            gk_run_result_fail(out, GK_FAIL_CRASH,
                               with_tail(gk_strdup("the child's result claims "
                                                   "child-process-crash, which only the parent "
                                                   "sets: not trusted"),
                                         &r->stderr_tail));
        } else if (rc == -EPROTONOSUPPORT) {
            gk_run_result_init(out);
            gk_run_result_fail(out, GK_FAIL_HOST, err);
            err = NULL;
        } else if (rc < 0) {
            gk_run_result_init(out);
            gk_run_result_fail(out, GK_FAIL_CRASH,
                               with_tail(gk_printf("the child's result frame is invalid: %s", err),
                                         &r->stderr_tail));
        }
        free(err);
        return;
    }
    gk_run_result_init(out);
    if (r->killed_at_deadline) {
        gk_run_result_fail(out, GK_FAIL_CRASH,
                           gk_printf("execution deadline exceeded; child hard-killed after %lld ms",
                                     deadline_ms));
        return;
    }
    gk_autofree char *why = gk_frame_reader_why(&r->frame);
    char *msg;
    if (r->frame_bad)
        msg = gk_printf("the child sent %s", why);
    else if (r->status >= 0 && WIFSIGNALED(r->status))
        msg = gk_printf("the child was killed by signal %d (SIG%s) before a complete result "
                        "frame (%s)",
                        WTERMSIG(r->status), signal_name(WTERMSIG(r->status)), why);
    else if (r->status >= 0 && WIFEXITED(r->status))
        msg = gk_printf("the child exited with status %d before a complete result frame (%s)",
                        WEXITSTATUS(r->status), why);
    else
        msg = gk_printf("the child gave no complete result frame (%s)", why);
    gk_run_result_fail(out, GK_FAIL_CRASH, with_tail(msg, &r->stderr_tail));
}

static void host_error(gk_run_result *out, char *msg)
{
    gk_run_result_init(out);
    gk_run_result_fail(out, GK_FAIL_HOST, msg);
}

static int make_pipes(int in[2], int out[2], int err[2])
{
    in[0] = in[1] = out[0] = out[1] = err[0] = err[1] = -1;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
        return -errno;
    /* Larger pipes: a 60 MiB request moves in fewer wake-ups. */
    fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
    fcntl(out[0], F_SETPIPE_SZ, 1 << 20);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    return 0;
}

int gk_supervise(const char *payload, size_t len, const gk_supervise_opts *o, gk_run_result *out)
{
    if (!payload || !o || (!o->argv && !o->bwrap))
        return -EINVAL;
    long long start = now_ms();
    if (len > GK_FRAME_MAX) {
        host_error(out, gk_printf("the run-request is %zu bytes, over the frame limit of %zu "
                                  "bytes; nothing ran",
                                  len, GK_FRAME_MAX));
        return 0;
    }
    if (len == 0) {
        host_error(out, gk_strdup("the run-request is empty; nothing ran"));
        return 0;
    }
    int exe = -1;
    if (o->program) {
        exe = open(o->program, O_RDONLY | O_CLOEXEC);
        if (exe < 0) {
            host_error(out, gk_printf("cannot open the child program %s: %s; nothing ran",
                                      o->program, strerror(errno)));
            return 0;
        }
    } else {
        int rc = gk_supervise_pin();
        if (rc < 0) {
            host_error(out, gk_printf("cannot pin grantrun's own binary (/proc/self/exe): %s; "
                                      "nothing ran",
                                      strerror(-rc)));
            return 0;
        }
        exe = pinned_self;
    }
    char *const *argv = o->argv;
    char *def[10] = {"grantrun", "--frame-child", "--bwrap", (char *)o->bwrap, NULL};
    /* The scratch's mountpoint is made here and removed here once the
     * child is reaped: a child killed at the deadline (or by anyone) never
     * removes it itself, and the empty directory would stay on the host. */
    char scratch[] = "/tmp/grantkit-frame-XXXXXX";
    bool made_scratch = false;
    if (!argv) {
        size_t n = 4;
        if (o->helper) {
            def[n++] = "--helper";
            def[n++] = (char *)o->helper;
        }
        if (mkdtemp(scratch)) {
            made_scratch = true;
            def[n++] = "--scratch-dir";
            def[n++] = scratch;
        }
        argv = def;
    }
    int in[2], po[2], pe[2];
    int rc = make_pipes(in, po, pe);
    sigset_t pipe_set, old_mask, pending_before;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    sigpending(&pending_before);
    pid_t pid = -1;
    if (rc == 0) {
        pid = fork();
        if (pid == 0)
            exec_child(exe, in[0], po[1], pe[1], argv);
        if (pid < 0)
            rc = -errno;
    }
    if (o->program)
        close(exe);
    close_fd(&in[0]);
    close_fd(&po[1]);
    close_fd(&pe[1]);
    if (rc < 0) {
        close_fd(&in[1]);
        close_fd(&po[0]);
        close_fd(&pe[0]);
        if (made_scratch)
            rmdir(scratch);
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        host_error(out, gk_printf("cannot start the frame child: %s; nothing ran", strerror(-rc)));
        return 0;
    }
    unsigned char prefix[4];
    gk_frame_prefix(prefix, len);
    long grace = o->grace_ms < 0 ? GK_GRACE_MS : o->grace_ms;
    run r = {.in = in[1], .out = po[0], .err = pe[0], .pid = pid, .prefix = prefix,
             .payload = payload, .len = len, .start = start, .after_frame = -1};
    r.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    gk_frame_reader_init(&r.frame, GK_FRAME_MAX);
    long long deadline_ms = o->timeout_ms > 0 ? o->timeout_ms + grace : 0;
    r.deadline = deadline_ms ? start + deadline_ms : 0;
    write_request(&r);
    loop(&r, grace);
    /* Reaped: on the host the mountpoint is an empty directory (the tmpfs
     * was the child's mount namespace's), whether the child removed it or
     * not. */
    if (made_scratch)
        rmdir(scratch);
    classify(&r, deadline_ms, out);
    if (out->wall_ms == 0)
        out->wall_ms = now_ms() - start;
    gk_frame_reader_free(&r.frame);
    close_fd(&r.in);
    close_fd(&r.out);
    close_fd(&r.err);
    close_fd(&r.pidfd);
    /* A SIGPIPE raised by a write to a dead child is ours: consume it. */
    if (!sigismember(&pending_before, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return 0;
}
