/* frame_child.c - one run as the frame child (see frame_child.h).
 *
 * The scratch tree: bwrap can size a tmpfs but not limit its inodes, and
 * a tmpfs bwrap makes is gone before it can be diffed, so the child
 * unshares a mount namespace (and, unless it is root, a user namespace
 * with its own uid and gid mapped to themselves), mounts
 * `tmpfs size=fsQuotaBytes,nr_inodes=fsNodeLimit` on a fresh private
 * directory (/tmp/grantkit-frame-XXXXXX: on the host only an empty
 * directory, removed at the end), materialises the baseline there, and
 * hands it to the envelope as a read-write bind at baseline.root. bwrap
 * runs nested inside these namespaces.
 *
 * Capture: the command's stdout and stderr are pipes drained by one
 * thread polling both, keeping at most what the field's budget can show
 * (an escaped byte is never shorter than the raw one) and counting the
 * rest, so a flood costs bounded memory and never blocks the command.
 *
 * The level (run.level, run.allowDegraded): chosen and its enforcement
 * record derived once (level.h) before the baseline is materialised; the
 * scratch tmpfs is tried first (unless landlock is asked for), and its
 * mount stands for auto's probe. At the landlock level there is no mount
 * namespace: the scratch is the fresh private host directory itself (mode
 * 0700) with no tmpfs on it, granted by the landlock ruleset, and the
 * command sees it at that host path, not at baseline.root (a cwd inside
 * baseline.root is moved along; the policy's carve-outs inside
 * baseline.root are applied to it there). Its quotas are not enforced,
 * which the record says, so such a run needs allowDegraded.
 */
#include "runtime/frame_child.h"

#include "common/json.h"
#include "runtime/launch.h"
#include "runtime/proxy.h"
#include "runtime/level.h"

#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- capture ------------------------------------------------------------ */

typedef struct stream {
    int fd;
    gk_buf kept;
    size_t cap;          /* raw bytes kept at most */
    uint64_t total;
} stream;

typedef struct capture {
    stream s[2];
    pthread_t thread;
    bool running;
} capture;

static void *capture_run(void *arg)
{
    capture *c = arg;
    char chunk[65536];
    for (;;) {
        struct pollfd p[2];
        nfds_t n = 0;
        int which[2];
        for (int i = 0; i < 2; i++)
            if (c->s[i].fd >= 0) {
                which[n] = i;
                p[n++] = (struct pollfd){c->s[i].fd, POLLIN, 0};
            }
        if (!n)
            return NULL;
        if (poll(p, n, -1) < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!p[k].revents)
                continue;
            stream *s = &c->s[which[k]];
            ssize_t r = read(s->fd, chunk, sizeof(chunk));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                close(s->fd);
                s->fd = -1;
                continue;
            }
            s->total += (uint64_t)r;
            if (s->kept.len < s->cap) {
                size_t room = s->cap - s->kept.len;
                gk_buf_add(&s->kept, chunk, (size_t)r < room ? (size_t)r : room);
            }
        }
    }
}

/* ---- the scratch tree --------------------------------------------------- */

static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, text, strlen(text));
    int err = w == (ssize_t)strlen(text) ? 0 : -(w < 0 ? errno : EIO);
    close(fd);
    return err;
}

/* A user and mount namespace of our own, with the scratch tmpfs mounted on
 * dir. Returns NULL or why not. */
/* Map our own uid and gid into a fresh user namespace. NULL or why not. */
static char *own_user_namespace(void)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return gk_printf("confinement unavailable: cannot make a user and mount namespace for "
                         "the scratch tree: %s",
                         strerror(errno));
    gk_autofree char *um = gk_printf("%u %u 1\n", (unsigned)uid, (unsigned)uid);
    gk_autofree char *gm = gk_printf("%u %u 1\n", (unsigned)gid, (unsigned)gid);
    int rc = write_proc("/proc/self/setgroups", "deny");
    if (rc == 0 || rc == -ENOENT)
        rc = write_proc("/proc/self/uid_map", um);
    if (rc == 0)
        rc = write_proc("/proc/self/gid_map", gm);
    if (rc < 0)
        return gk_printf("confinement unavailable: cannot map uid %u in the scratch's user "
                         "namespace: %s",
                         (unsigned)uid, strerror(-rc));
    return NULL;
}

/* A mount namespace of our own (with a user namespace unless we are
 * root, who needs none to mount and keeps its DAC override for what bwrap
 * binds), with the scratch tmpfs mounted on dir. NULL or why not. */
static char *scratch_mount(const char *dir, long long quota, long long nodes, bool *userns)
{
    *userns = false;
    if (!(geteuid() == 0 && unshare(CLONE_NEWNS) == 0)) {
        char *why = own_user_namespace();
        if (why)
            return why;
        *userns = true;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return gk_printf("confinement unavailable: cannot make the mounts private: %s",
                         strerror(errno));
    gk_autofree char *opts = gk_printf("size=%lld,nr_inodes=%lld,mode=0755", quota, nodes);
    if (mount("grantkit-scratch", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return gk_printf("confinement unavailable: cannot mount the scratch tmpfs (%s): %s", opts,
                         strerror(errno));
    return NULL;
}

/* ---- the run ------------------------------------------------------------ */

static const char *child_bwrap, *child_helper, *child_scratch_dir;

typedef struct child {
    gk_run_request req;
    bool mounted;            /* the scratch tmpfs is mounted on dir */
    bool ns_proven;          /* and bwrap's namespaces can be made: auto needs no probe */
    char *ns_why;            /* why it could not be (auto then tries landlock) */
    gk_level_opts lv;
    gk_level_result chosen;
    gk_run_result res;
    grant_policy *policy;
    char dir[64];            /* the scratch's mountpoint, "" when none */
    int dirfd;
    gk_snapshot before;
    bool have_before;
    long long t0;
} child;

static void fail(child *c, gk_failure f, char *msg)
{
    gk_run_result_fail(&c->res, f, msg);
}

static bool load_policy(child *c)
{
    grant_context *ctx = NULL;
    grant_diags *d = grant_diags_new();
    int rc = grant_context_new(&ctx);
    if (rc == 0)
        rc = grant_compile_buffer(ctx, "run-request.policy.json", c->req.policy,
                                  strlen(c->req.policy), d, &c->policy);
    grant_context_free(ctx);
    if (rc < 0) {
        gk_buf b = {0};
        gk_buf_puts(&b, "the request's policy does not load: ");
        for (size_t i = 0; i < grant_diags_count(d); i++) {
            char *line = grant_diags_render(d, i);
            gk_buf_printf(&b, "%s%s", i ? "\n" : "", line);
            free(line);
        }
        if (!grant_diags_count(d))
            gk_buf_puts(&b, strerror(-rc));
        fail(c, GK_FAIL_HOST, gk_buf_steal(&b, NULL));
    } else if (gk_target_is_offline(gk_policy_context(c->policy))) {
        /* --target linux freezes paths without looking at any host
         * (no symlink resolved, nothing stat'ed): runnable only here. */
        fail(c, GK_FAIL_HOST,
             gk_strdup("the request's policy was compiled for another machine (grantc compile "
                       "--target): its paths are not frozen against this host; compile it here "
                       "without --target"));
        rc = -EINVAL;
    }
    grant_diags_free(d);
    return rc == 0;
}

/* The scratch's directory, and unless the landlock level is asked for,
 * its tmpfs in a user and mount namespace of our own, before the level is
 * chosen: that mount is what auto's probe would try (the mount bwrap
 * needs), so when it works auto does not probe again (a fork and six
 * namespaces saved per run), and when it fails auto knows why. */
static bool early_scratch(child *c)
{
    if (!c->req.root)
        return true;
    if (child_scratch_dir) {
        /* the parent's: an empty directory of ours, not a link to one */
        struct stat st;
        if (strlen(child_scratch_dir) >= sizeof(c->dir) || lstat(child_scratch_dir, &st) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
            fail(c, GK_FAIL_HOST,
                 gk_printf("the scratch mountpoint %s is not a directory of this user",
                           child_scratch_dir));
            return false;
        }
        strcpy(c->dir, child_scratch_dir);
    } else {
        strcpy(c->dir, "/tmp/grantkit-frame-XXXXXX");
        if (!mkdtemp(c->dir)) {
            c->dir[0] = '\0';
            fail(c, GK_FAIL_HOST,
                 gk_printf("cannot make the scratch mountpoint: %s", strerror(errno)));
            return false;
        }
    }
    if (strcmp(c->req.level, "landlock") == 0)
        return true;
    bool userns = false;
    char *why = scratch_mount(c->dir, c->req.fs_quota, c->req.fs_nodes, &userns);
    if (!why) {
        c->mounted = true;
        /* root mounted without a user namespace, which bwrap still makes:
         * that one alone is probed (a fork, no pid or network namespace) */
        c->ns_proven = userns || strcmp(c->req.level, "namespaces") == 0 ||
                       gk_level_probe_user_mount(&c->ns_why);
    } else if (strcmp(c->req.level, "namespaces") == 0) {
        fail(c, GK_FAIL_HOST, why);
        return false;
    } else {
        c->ns_why = why;
    }
    return true;
}

static bool setup_scratch(child *c)
{
    if (!c->req.root)
        return true;
    if (c->chosen.record.level == GRANT_LEVEL_NAMESPACES && !c->mounted) {
        fail(c, GK_FAIL_HOST, gk_strdup(c->ns_why ? c->ns_why : "the scratch tmpfs is not mounted"));
        return false;
    }
    c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *err = NULL;
    if (c->dirfd < 0 || gk_scratch_materialise(c->dirfd, &c->req.files, &err) < 0) {
        fail(c, GK_FAIL_HOST,
             gk_printf("materialising the baseline failed, nothing ran: %s",
                       err ? err : strerror(errno)));
        free(err);
        return false;
    }
    return true;
}

/* The command's working directory: the request's, else baseline.root,
 * else "/"; at the landlock level one inside baseline.root is moved into
 * the scratch's host directory. */
static char *command_cwd(const child *c, bool landlock)
{
    const char *cwd = c->req.cwd ? c->req.cwd : c->req.root ? c->req.root : "/";
    if (landlock && c->req.root && c->dir[0] && gk_path_within(cwd, c->req.root))
        return gk_printf("%s%s", c->dir, cwd + strlen(c->req.root));
    return gk_strdup(cwd);
}

/* The level of the run and its record (gk_level_choose), before anything
 * is made. False when the run is refused (c->res says why). */
static bool choose_level(child *c, const char **envp)
{
    gk_level_opts *lv = &c->lv;
    lv->launch = (gk_launch_opts){
        .argv = c->req.argv.v,
        .argc = c->req.argv.n,
        .env = envp,
        .bwrap = child_bwrap && child_bwrap[0] == '/' ? child_bwrap : NULL,
        .helper = child_helper,
        .timeout_ms = (long)c->req.timeout_ms,
        .processes = (long)c->req.max_processes,
        .cpu_seconds = (long)c->req.cpu_seconds,
        .memory_bytes = (long)c->req.max_memory,
        .scratch_at = c->req.root,
    };
    lv->level = strcmp(c->req.level, "namespaces") == 0 ? GK_LEVEL_NAMESPACES
                : strcmp(c->req.level, "landlock") == 0 ? GK_LEVEL_LANDLOCK
                                                         : GK_LEVEL_AUTO;
    lv->allow_degraded = c->req.allow_degraded;
    lv->fs_quota = c->req.root ? (long)c->req.fs_quota : 0;
    lv->fs_nodes = c->req.root ? (long)c->req.fs_nodes : 0;
    lv->namespaces_proven = c->ns_proven;
    lv->namespaces_refused_why = c->ns_why;
    int rc = gk_level_choose(c->policy, lv, &c->chosen);
    if (rc > 0)
        return true;
    if (rc < 0) {
        fail(c, GK_FAIL_HOST,
             gk_printf("cannot run: %s%s", strerror(-rc),
                       rc == -EINVAL ? " (the policy must be compiled for this host)" : ""));
        return false;
    }
    /* Refused before anything ran: by the record (host-error, naming the
     * rules) or by the gate (126/127, the command's status). */
    gk_launch_result *lr = &c->chosen.run;
    if (lr->status == GK_RUN_FAILED) {
        fail(c, GK_FAIL_HOST,
             gk_message_cut(lr->message ? lr->message : "confinement unavailable; nothing ran",
                            GK_BUDGET_MESSAGE));
    } else {
        c->res.failure = GK_FAIL_SCRIPT;
        c->res.exit_code = lr->status;
        free(c->res.error_message);
        c->res.error_message = gk_strdup(lr->message ? lr->message : "");
        if (c->req.include_diff) {
            /* nothing ran, so nothing changed: the empty diff */
            gk_snapshot none = {0};
            gk_diff_opts o = {c->req.diff_format, c->req.diff_metadata, GK_BUDGET_DIFF};
            bool cut = false;
            char *err = NULL;
            if (gk_scratch_diff(&none, &none, &o, &c->res.diff, &c->res.diff_len, &cut, &err) < 0)
                fail(c, GK_FAIL_HOST, gk_printf("cannot diff the scratch tree: %s",
                                                err ? err : "?"));
            free(err);
        }
    }
    return false;
}

/* The baseline's snapshot, once (before the command). */
static int snapshot_before(child *c)
{
    if (!c->req.include_diff || c->have_before)
        return 0;
    char *err = NULL;
    int rc = gk_snapshot_take(c->dirfd, NULL, &c->before, &err);
    if (rc < 0) {
        fail(c, GK_FAIL_HOST, gk_printf("cannot snapshot the baseline: %s", err));
        free(err);
        return rc;
    }
    c->have_before = true;
    return 0;
}

/* gk_launch_opts.prepare: bwrap's mountpoints inside the scratch made now
 * (as bwrap would: directories 0755, empty files), then the snapshot, so
 * the diff shows what the command did, not what the envelope needed. */
static int prepare_scratch(void *arg, const gk_strvec *points)
{
    child *c = arg;
    for (size_t i = 0; i < points->n; i++) {
        const char *p = points->v[i];
        bool file = p[0] == 'f';
        gk_autofree char *rel = gk_strdup(p + 2); /* past "d/" */
        int fd = dup(c->dirfd);
        for (char *part = rel, *next; fd >= 0 && part && *part; part = next) {
            next = strchr(part, '/');
            if (next)
                *next++ = '\0';
            bool last = !next || !*next;
            int nfd;
            if (last && file) {
                nfd = openat(fd, part, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (nfd < 0 && errno == EEXIST)
                    nfd = -2;
            } else {
                if (mkdirat(fd, part, 0755) < 0 && errno != EEXIST)
                    nfd = -1;
                else
                    nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            }
            close(fd);
            fd = nfd;
        }
        if (fd >= 0)
            close(fd);
        /* A failure here is left to bwrap, which then says it exactly. */
    }
    return snapshot_before(c) < 0 ? EIO : 0;
}

/* The command's status under §4: which failure it is, and why. */
static void classify(child *c, const gk_launch_result *lr, const struct rusage *ru)
{
    gk_run_result *r = &c->res;
    int s = lr->status;
    long long cpu_ms = (long long)ru->ru_utime.tv_sec * 1000 + ru->ru_utime.tv_usec / 1000 +
                       (long long)ru->ru_stime.tv_sec * 1000 + ru->ru_stime.tv_usec / 1000;
    if (lr->timed_out) {
        r->failure = GK_FAIL_TIMEOUT;
        r->exit_code = lr->command_status;
        free(r->error_message);
        r->error_message = gk_printf("timed out after %lld ms: SIGTERM to the command, SIGKILL "
                                     "200 ms later to what was left",
                                     c->req.timeout_ms);
        return;
    }
    if (lr->message && s == GK_RUN_FAILED && !lr->started) {
        fail(c, GK_FAIL_HOST, gk_strdup(lr->message));
        return;
    }
    r->exit_code = s;
    free(r->error_message);
    r->error_message = gk_strdup(lr->message ? lr->message : "");
    if (s == 0) {
        r->failure = GK_FAIL_NONE;
        return;
    }
    r->failure = GK_FAIL_SCRIPT;
    int sig = s > 128 ? s - 128 : 0;
    if (c->req.cpu_seconds > 0 &&
        (sig == SIGXCPU || (sig == SIGKILL && cpu_ms + 50 >= c->req.cpu_seconds * 1000))) {
        r->failure = GK_FAIL_RESOURCE;
        free(r->error_message);
        r->error_message = gk_printf("cpuSeconds %lld reached (RLIMIT_CPU: %s after %lld ms of "
                                     "CPU)",
                                     c->req.cpu_seconds, sig == SIGXCPU ? "SIGXCPU" : "SIGKILL",
                                     cpu_ms);
        return;
    }
    bool full = false;
    const char *what = NULL;
    if (c->dirfd >= 0 && gk_scratch_full(c->dirfd, &full, &what, NULL) == 0 && full) {
        r->failure = GK_FAIL_RESOURCE;
        free(r->error_message);
        r->error_message =
            gk_printf("the scratch tree is full: %s exhausted (fsQuotaBytes %lld, fsNodeLimit "
                      "%lld)",
                      what, c->req.fs_quota, c->req.fs_nodes);
    }
}

static void run_command(child *c, const char **envp)
{
    bool landlock = c->chosen.record.level == GRANT_LEVEL_LANDLOCK;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        fail(c, GK_FAIL_HOST, gk_printf("cannot make the capture pipes: %s", strerror(errno)));
        return;
    }
    capture cap = {0};
    bool b64 = c->req.capture == GK_CAPTURE_BASE64;
    cap.s[0] = (stream){out[0], {0}, b64 ? GK_BUDGET_OUTPUT / 4 * 3 : GK_BUDGET_OUTPUT, 0};
    cap.s[1] = (stream){err[0], {0}, b64 ? GK_BUDGET_ERROR_OUTPUT / 4 * 3
                                         : GK_BUDGET_ERROR_OUTPUT, 0};
    cap.running = pthread_create(&cap.thread, NULL, capture_run, &cap) == 0;

    gk_autofree char *cwd = command_cwd(c, landlock);
    gk_launch_opts *lo = &c->lv.launch;
    lo->env = envp;
    lo->redirect_stdio = true;
    lo->stdio[0] = devnull;
    lo->stdio[1] = out[1];
    lo->stdio[2] = err[1];
    /* at the landlock level (no mount namespace) the command sees the
     * scratch at its host path; scratch_at stays where the policy's rules
     * about it are written */
    lo->scratch = c->req.root ? c->dir : NULL;
    lo->scratch_at = c->req.root;
    lo->cwd = cwd;
    lo->term_grace_ms = 200;
    lo->default_signals = true; /* not this process's ignored SIGPIPE */
    lo->prepare = prepare_scratch;
    lo->prepare_arg = c;
    /* timeoutMs runs from this child's start, as the parent's deadline
     * (timeoutMs + grace) runs from the spawn: what comes before the
     * command (the policy, the probe, the scratch tree and its baseline;
     * long on a loaded host) is spent from it, so the child's own timeout
     * and its report still come before the parent's hard kill. */
    lo->timeout_since = (struct timespec){(time_t)(c->t0 / 1000), (long)(c->t0 % 1000) * 1000000};
    grant_diags *notes = grant_diags_new();
    long long t = now_ms();
    /* bwrap's prepare hook takes the snapshot at the namespaces level;
     * the landlock level makes no mountpoint, so it is taken now */
    int rc = landlock && snapshot_before(c) < 0 ? 1
                                                : gk_level_launch(c->policy, &c->lv, notes, NULL,
                                                                  &c->chosen);
    gk_launch_result lr = c->chosen.run;
    memset(&c->chosen.run, 0, sizeof(c->chosen.run));
    c->res.wall_ms = now_ms() - t;
    grant_diags_free(notes);
    close(out[1]);
    close(err[1]);
    close(devnull);
    if (cap.running)
        pthread_join(cap.thread, NULL);
    else {
        close(out[0]);
        close(err[0]);
    }
    struct rusage ru = {0};
    getrusage(RUSAGE_CHILDREN, &ru);
    if (rc > 0) {
        /* the snapshot failed: c->res says so */
    } else if (rc < 0) {
        fail(c, GK_FAIL_HOST,
             gk_printf("cannot run: %s%s", strerror(-rc),
                       rc == -EINVAL ? " (the policy must be compiled for this host)" : ""));
    } else {
        classify(c, &lr, &ru);
        c->res.user_ms = (long long)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
        c->res.sys_ms = (long long)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
        c->res.max_rss = (long long)ru.ru_maxrss * 1024;
        if (c->res.failure != GK_FAIL_HOST && lr.started) {
            /* what the run really had: the one record's level and the
             * rules it did not enforce (non-empty only with allowDegraded) */
            free(c->res.level);
            c->res.level = gk_strdup(grant_level_name(c->chosen.record.level));
            gk_strvec_free(&c->res.unenforced);
            gk_enforcement_unenforced_rules(&c->chosen.record, &c->res.unenforced);
        }
        if (lr.net) {
            /* network.md §2: the proxy's decisions (at most 1,000, then
             * counted), null when the policy has no destination lists */
            gk_buf nb = {0};
            gk_json_out nj;
            gk_json_init(&nj, &nb, false);
            gk_net_log_json(lr.net, &nj);
            free(c->res.network);
            c->res.network = gk_buf_steal(&nb, NULL);
        }
    }
    gk_launch_result_clear(&lr);
    free(c->res.output);
    free(c->res.error_output);
    c->res.output = gk_capture_cut(cap.s[0].kept.data, cap.s[0].kept.len, cap.s[0].total,
                                   c->req.capture, GK_BUDGET_OUTPUT, &c->res.output_len,
                                   &c->res.output_truncated);
    c->res.error_output = gk_capture_cut(cap.s[1].kept.data, cap.s[1].kept.len, cap.s[1].total,
                                         c->req.capture, GK_BUDGET_ERROR_OUTPUT,
                                         &c->res.error_output_len,
                                         &c->res.error_output_truncated);
    gk_buf_free(&cap.s[0].kept);
    gk_buf_free(&cap.s[1].kept);
}

static void make_diff(child *c)
{
    if (!c->req.include_diff || c->res.failure == GK_FAIL_HOST || snapshot_before(c) < 0)
        return;
    gk_snapshot after = {0};
    char *err = NULL;
    gk_diff_opts o = {c->req.diff_format, c->req.diff_metadata, GK_BUDGET_DIFF};
    bool cut = false;
    int rc = gk_snapshot_take(c->dirfd, NULL, &after, &err);
    if (rc == 0)
        rc = gk_scratch_diff(&c->before, &after, &o, &c->res.diff, &c->res.diff_len, &cut, &err);
    if (rc < 0) {
        /* The command ran: its status stays; the diff is what failed. */
        gk_autofree char *old = c->res.error_message;
        c->res.error_message = gk_message_cut(
            gk_printf("%s%scannot diff the scratch tree: %s", old ? old : "",
                      old && *old ? "; " : "", err ? err : strerror(-rc)),
            GK_BUDGET_MESSAGE);
        c->res.failure = GK_FAIL_HOST;
    }
    free(err);
    gk_snapshot_free(&after);
}

int gk_frame_child_main(const char *bwrap, const char *helper, const char *scratch_dir)
{
    child_bwrap = bwrap;
    child_helper = helper;
    child_scratch_dir = scratch_dir;
    signal(SIGPIPE, SIG_IGN);
    child c = {.dirfd = -1, .t0 = now_ms()};
    gk_run_result_init(&c.res);
    char *payload = NULL, *err = NULL;
    size_t len = 0;
    int rc = gk_frame_read(0, GK_FRAME_MAX, &payload, &len, &err);
    if (rc < 0) {
        fail(&c, GK_FAIL_HOST, gk_printf("cannot read the run-request: %s", err));
        free(err);
    } else if ((rc = gk_run_request_parse(payload, len, &c.req, &err)) < 0) {
        fail(&c, GK_FAIL_HOST, err);
        gk_run_request_init(&c.req);
    } else {
        c.res.encoding = c.req.capture;
        c.res.diff_requested = c.req.include_diff;
        gk_strvec env = c.req.env;
        const char **envp = gk_calloc(env.n + 1, sizeof(*envp));
        for (size_t i = 0; i < env.n; i++)
            envp[i] = env.v[i];
        if ((!bwrap || bwrap[0] != '/') && strcmp(c.req.level, "landlock") != 0)
            fail(&c, GK_FAIL_HOST, gk_strdup("confinement unavailable: no bubblewrap given "
                                             "(--bwrap PATH)"));
        else if (load_policy(&c) && early_scratch(&c) && choose_level(&c, envp) &&
                 setup_scratch(&c)) {
            run_command(&c, envp);
            make_diff(&c);
        }
        free(envp);
    }
    free(payload);
    if (c.res.wall_ms == 0)
        c.res.wall_ms = now_ms() - c.t0;
    gk_buf frame = {0};
    gk_run_result_encode(&c.res, GK_FRAME_MAX, &frame);
    rc = gk_frame_write(1, frame.data, frame.len, GK_FRAME_MAX);
    gk_buf_free(&frame);
    if (c.have_before)
        gk_snapshot_free(&c.before);
    if (c.dirfd >= 0)
        close(c.dirfd);
    if (c.dir[0]) {
        if (c.mounted) {
            umount2(c.dir, MNT_DETACH);
            rmdir(c.dir);
        } else {
            gk_remove_tree(c.dir); /* the landlock level's: a host directory */
        }
    }
    gk_level_result_clear(&c.chosen);
    free(c.ns_why);
    grant_policy_free(c.policy);
    gk_run_request_clear(&c.req);
    gk_run_result_clear(&c.res);
    return rc < 0 ? 1 : 0;
}
