/* level.h - the level of confinement (grantrun --level, grantrun(1) "Levels
 * of confinement"): which one a run gets, and the landlock level's own
 * launch.
 *
 *   namespaces  the envelope of launch.h (bwrap, helper, seccomp, Landlock)
 *   landlock    no namespace, no bwrap: grantkit-helper alone applies the
 *               resource limits, no_new_privs, a Landlock ruleset (fs
 *               rights per region with the policy's carve-outs pushed down
 *               onto the existing entries around them, TCP bind/connect
 *               denied with net deny, the abstract-socket and signal
 *               scopes of ABI 6) and the seccomp filters, then execs the
 *               command; grantrun stays its subreaper. With destination
 *               lists (net_decide, or the policy's own) TCP and UDP go as
 *               with net deny and the proxy is reached through its Unix
 *               socket only, grantrun answering every connect(2)
 *               (unixnet.h).
 *   auto        namespaces when the host allows them (probed as bwrap needs
 *               them: a user and mount namespace in which a mount
 *               succeeds), else landlock if the policy loses nothing there,
 *               else refused (125) with the list of what it would lose.
 *
 * The enforcement record (analysis/enforcement.h) is derived once, here,
 * for the level chosen; a rule it says is not enforced refuses the run
 * unless allow_degraded.
 *
 * Ownership: a gk_level_result owns its launch result and its record
 * (gk_level_result_clear).
 */
#ifndef GK_LEVEL_H
#define GK_LEVEL_H

#include "runtime/launch.h"
#include "analysis/enforcement.h"

typedef enum gk_level_choice {
    GK_LEVEL_AUTO = -1,
    GK_LEVEL_NAMESPACES = GRANT_LEVEL_NAMESPACES,
    GK_LEVEL_LANDLOCK = GRANT_LEVEL_LANDLOCK,
} gk_level_choice;

typedef struct gk_level_opts {
    gk_launch_opts launch;  /* bwrap may be NULL: none found (auto then probes landlock) */
    gk_level_choice level;
    bool allow_degraded;    /* run even with rules not enforced (each is a warning) */
    bool bwrap_version;     /* ask the pinned bwrap its version for the record */
    /* The frame protocol's scratch (launch.scratch_at set): its quotas,
     * for the record (0: none). */
    long fs_quota, fs_nodes;
    /* What the caller already found out, so auto does not probe again (the
     * frame child tries its scratch tmpfs in a user and mount namespace of
     * its own first): proven, the mount succeeded; else refused_why, why
     * it did not (NULL: not tried, probe). */
    bool namespaces_proven;
    const char *namespaces_refused_why;
} gk_level_opts;

typedef struct gk_level_result {
    gk_launch_result run;
    bool have_record;       /* a level was chosen (also when the run was refused) */
    grant_enforcement record;
    gk_projection *pr;      /* between gk_level_choose and gk_level_launch */
    /* The namespaces level's placeholders lock (gk_launch_lock), taken
     * before pr was built and handed to the launch with it. */
    bool held;
    gk_placeholders ph;
    int lock_rc;
    pid_t probe_pid;        /* auto's probe child, said yes, not reaped yet (0: none) */
    bool probe_remembered;  /* auto took a remembered yes (probe_memo.h) */
    long probe_memo_age;    /* that yes's age in seconds */
} gk_level_result;

/* Choose the level, derive its record, run (or describe). Returns 0 with
 * out filled, or -errno for a usage error. */
GK_HIDDEN int gk_level_run(const grant_policy *p, const gk_level_opts *o, grant_diags *notes,
                           gk_buf *described, gk_level_result *out);
GK_HIDDEN void gk_level_result_clear(gk_level_result *r);

/* gk_level_run in two steps, for a caller that acts between them (the
 * frame child makes its scratch tree the way the level chosen needs):
 * gk_level_choose decides the level and derives the record; 1: go on; 0:
 * out->run says why not (the gate, or the record refused it: status 125
 * with the rules not enforced); -errno for a usage error. Then
 * gk_level_launch runs at out->record.level, 0 or -errno. */
GK_HIDDEN int gk_level_choose(const grant_policy *p, const gk_level_opts *o,
                              gk_level_result *out);
GK_HIDDEN int gk_level_launch(const grant_policy *p, const gk_level_opts *o, grant_diags *notes,
                              gk_buf *described, gk_level_result *out);

/* Does this host give bwrap what it needs (user, mount, pid, ipc, uts and,
 * when net, network namespaces, and a mount inside)? 1 yes; 0 no, *why
 * says what failed (caller frees). */
GK_HIDDEN int gk_level_probe_namespaces(bool net, char **why);
/* Only the user and mount namespace with a mount inside (no pid, ipc, uts
 * or network namespace: the part of the probe that costs): for a caller
 * that already mounted in a mount namespace of its own as root, which
 * proves everything but the user namespace. */
GK_HIDDEN int gk_level_probe_user_mount(char **why);

#endif
