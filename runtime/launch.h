/* launch.h - run one command in the Linux envelope (backends.md): the
 * gate first, then bwrap with the policy's plan, the seccomp filters and
 * grantkit-helper applying the Landlock ruleset; wait, relay the status,
 * make and later remove the placeholders its masks need (placeholders.h;
 * grantrun --isolate none, cli.md).
 *
 * With a network allowlist (net_decide set), the envelope keeps its own
 * network namespace, grantrun runs the proxy (proxy.h) for the run's
 * length, the helper starts the relay (relay.h) on GK_NET_RELAY_PORT, and
 * the command gets the proxy variables (network.md §2).
 *
 * Ownership: a gk_launch_result owns its message and its network record
 * (gk_launch_result_clear).
 */
#ifndef GK_LAUNCH_H
#define GK_LAUNCH_H

#include "grant/grant.h"
#include "common/util.h"
#include "runtime/proxy.h"
#include "runtime/placeholders.h"

#include <sys/wait.h>
#include <time.h>

/* grantrun's exit statuses (cli.md). */
enum {
    GK_RUN_TIMEOUT = 124,
    GK_RUN_FAILED = 125,   /* usage, policy, confinement unavailable, host error */
    GK_RUN_REFUSED = 126,  /* the gate denied it, or it cannot be executed */
    GK_RUN_NOT_FOUND = 127,
};

typedef struct gk_launch_opts {
    char *const *argv;        /* the command, argv[0] as given */
    size_t argc;
    const char *const *env;   /* its environment, NAME=VALUE, NULL-terminated */
    bool tty;                 /* keep the controlling terminal */
    const char *bwrap;        /* absolute path of the bubblewrap to pin */
    const char *helper;       /* absolute path of grantkit-helper */
    long timeout_ms;          /* 0: none; then the envelope is killed: 124 */
    long processes;           /* RLIMIT_NPROC inside (0: none) */
    long cpu_seconds;         /* RLIMIT_CPU inside (0: none) */
    long memory_bytes;        /* RLIMIT_AS inside (0: none) */
    bool dry_run;             /* describe, do not run */
    /* Process isolation (the frame child, frame_child.c): */
    bool redirect_stdio;      /* the command's fds 0-2 are stdio[] */
    int stdio[3];
    const char *scratch;      /* a host directory bound read-write at scratch_at, */
    const char *scratch_at;   /* writable under Landlock too; NULL: none (at the
                               * landlock level, level.h, the command sees it at
                               * its own path; scratch_at is where the policy's
                               * rules about it are written) */
    const char *cwd;          /* the command's working directory; NULL: the plan's */
    long term_grace_ms;       /* at the timeout SIGTERM first, SIGKILL this much
                               * later (0: SIGKILL at once) */
    struct timespec timeout_since; /* CLOCK_MONOTONIC: timeout_ms counts from
                               * here (zero: from the spawn; the frame child
                               * counts from its own start) */
    bool default_signals;     /* every signal default in the command, whatever
                               * this process or its host ignored (otherwise an
                               * ignored SIGHUP passes on, as nohup expects) */
    /* Called once the plan is known, before anything is spawned, with the
     * mountpoints bwrap will make inside the scratch (the policy's masks
     * and re-binds there), each "d/path" or "f/path" (a directory or a
     * file, path below scratch_at); the frame child makes them first, so
     * its diff does not report them. Non-zero: the run is refused. */
    int (*prepare)(void *arg, const gk_strvec *mountpoints);
    void *prepare_arg;
    gk_net_decide_fn net_decide; /* non-NULL: the network is an allowlist it decides */
    void *net_ctx;
} gk_launch_opts;

/* Where the relay listens inside the envelope (127.0.0.1 and [::1]). */
#define GK_NET_RELAY_PORT 3128

typedef struct gk_launch_result {
    int status;     /* grantrun's exit status */
    char *message;  /* why grantrun itself decided (124-127 from the gate or
                     * setup), or NULL when the status is the command's */
    bool timed_out; /* the timeout ended it (status 124) */
    bool started;   /* the helper reported the command started */
    bool envelope_refused; /* bwrap ran and gave up before the helper did
                            * (namespaces or mounts refused, say) */
    int command_status; /* after a timeout: the command's own status (128+N for
                         * signal N), or -1 when it never started */
    gk_net_log *net; /* the proxy's decisions, or NULL (net not an allowlist) */
} gk_launch_result;

/* Run (or with dry_run, write to `described` what would run: the bwrap
 * argv one argument per line, then the helper's Landlock ruleset). The
 * policy must be compiled for this host. Returns 0 with *out filled, or
 * -errno for a usage error (nothing ran). */
GK_HIDDEN int gk_launch(const grant_policy *p, const gk_launch_opts *o, grant_diags *notes,
                        gk_buf *described, gk_launch_result *out);
GK_HIDDEN void gk_launch_result_clear(gk_launch_result *r);
/* Where a launcher's timeout counts from: o->timeout_since, or now. */
static inline struct timespec gk_launch_timeout_start(const gk_launch_opts *o)
{
    struct timespec t = o->timeout_since;
    if (!t.tv_sec && !t.tv_nsec)
        clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}
/* A wait status as a shell reports it: the exit status, or 128+N for
 * signal N. */
static inline int gk_status_of_wait(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
/* gk_launch after its gate, in two steps, for a caller that needs the
 * projection before the plan (gk_level_choose builds it once for both):
 * gk_launch_lock takes the placeholders' shared lock unless o->dry_run
 * (placeholders.h: before anything looks at the host); 1, *lock_rc its
 * answer, or 0 when out says why nothing may run (the lock stayed held by
 * a cleanup). Then the caller builds the projection, and
 * gk_launch_planned takes ph and pr (released and freed in every case)
 * and runs as gk_launch does. */
GK_HIDDEN int gk_launch_lock(const gk_launch_opts *o, gk_placeholders *ph, int *lock_rc,
                             gk_launch_result *out);
GK_HIDDEN int gk_launch_planned(const grant_policy *p, const gk_launch_opts *o,
                                gk_placeholders *ph, int lock_rc, gk_projection *pr,
                                grant_diags *notes, gk_buf *described, gk_launch_result *out);
/* In a launched child before its exec: the signals grantrun forwards
 * back to their default, with o->default_signals every one, and none
 * blocked (shared by both levels' launchers). */
GK_HIDDEN void gk_launch_child_signals(const gk_launch_opts *o);
/* In a launched child before its exec: with o->redirect_stdio, fds 0-2
 * become o->stdio (shared by both levels' launchers); _exit(125) when
 * that fails. */
GK_HIDDEN void gk_launch_take_stdio(const gk_launch_opts *o);

/* The gate's decision on o's command, before anything starts: 1 when it is
 * admitted, 0 when out says why not (126 refused, 127 admitted but
 * missing), or -errno. gk_launch asks it first; the landlock level too. */
GK_HIDDEN int gk_launch_gate(const grant_policy *p, const gk_launch_opts *o,
                             gk_launch_result *out);

/* The policy's own decision for a destination (grant_check_connect; ctx
 * the grant_policy), as the proxy asks it: both levels' net_decide for a
 * policy with destination lists. */
GK_HIDDEN int gk_launch_net_decide(void *ctx, const char *host, unsigned port,
                                   gk_net_decision *out);

/* Where the PATH walk of the policy's context finds `name` in path_env
 * (absolute entries only, an executable regular file: the gate's own
 * walk), or NULL. Caller frees. */
GK_HIDDEN char *gk_launch_find_program(const grant_policy *p, const char *name,
                                       const char *path_env);

#endif
