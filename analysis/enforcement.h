/* enforcement.h - the enforcement record: for one level of confinement
 * (namespaces: bwrap + helper + seccomp + Landlock; landlock: the helper
 * alone, no namespace), what enforces each rule of the stack and each
 * property of the envelope, and whether the level holds it as written,
 * stricter, weaker (the level's documented semantics) or not at all
 * (grantrun(1), "Levels of confinement").
 *
 * Derived once, from the projection and a few host facts (the Landlock
 * ABI, whether the caller is root, the resource limits asked for), and
 * read by everything that reports it: grantrun --report, grantrun's fail
 * closed refusal, grantc audit --level and the frame protocol's
 * run-result `enforcement` member (grant.h accessors). It lives in
 * analysis/ so that audit and the runtime include it without an include
 * running back up.
 *
 * Ownership: a grant_enforcement owns its rows and their strings; its
 * reason and bwrap version are owned too (set with gk_enforcement_set_*).
 */
#ifndef GK_ENFORCEMENT_H
#define GK_ENFORCEMENT_H

#include "gate/gate.h"

/* What holds a rule (a bit set; JSON names in this order). */
enum {
    GK_BY_GATE = 1 << 0,       /* grantrun's own decision on the command it starts */
    GK_BY_MOUNT = 1 << 1,      /* bwrap's binds and masks, the helper's noexec remounts */
    GK_BY_NAMESPACE = 1 << 2,  /* pid, ipc, net, user namespaces */
    GK_BY_LANDLOCK = 1 << 3,   /* the helper's Landlock ruleset (fs, net, scopes) */
    GK_BY_SECCOMP = 1 << 4,    /* the seccomp filters */
    GK_BY_RLIMIT = 1 << 5,     /* resource limits */
    GK_BY_SUPERVISOR = 1 << 6, /* grantrun itself, after the start (kill on timeout) */
};

typedef enum gk_enf_status {
    GK_ENF_ENFORCED,     /* as written */
    GK_ENF_STRICTER,     /* refuses more than the policy asks (why says what) */
    GK_ENF_WEAKER,       /* the level's documented semantics lose part of it:
                          * accepted by --level LEVEL, refused by auto */
    GK_ENF_NOT_ENFORCED, /* not held at all: only --allow-degraded runs it */
} gk_enf_status;

typedef struct gk_enf_row {
    char *rule;         /* "deny /home/u/.ssh", "net deny", "signals to host processes" */
    const char *kind;   /* static: "fs.deny", "exec.veto", "envelope.signal", ... */
    char *origin;       /* "file:line", "implicit:linux", "envelope", "grantrun" */
    bool policy;        /* a rule of the stack (auto falls back only if none is lost);
                         * false: a property of the envelope */
    unsigned by;        /* GK_BY_* */
    gk_enf_status status;
    char *why;          /* NULL when enforced as written */
} gk_enf_row;

/* What the host and the run add to the projection. */
typedef struct gk_enf_host {
    int landlock_abi;  /* the kernel's (0: Landlock unavailable) */
    bool root;         /* the caller is uid 0 (RLIMIT_NPROC never applies) */
    long processes, cpu_seconds, memory_bytes; /* 0: not asked */
    /* The frame protocol's scratch tree (frame-protocol.md): its quotas
     * (0: none). At the landlock level the scratch is a fresh private host
     * directory (0700) bound by Landlock, which no kernel bounds in size. */
    bool scratch;
    long fs_quota, fs_nodes;
} gk_enf_host;

struct grant_enforcement {
    grant_level level;
    char *reason;        /* why this level (grantrun), or NULL (audit) */
    char *bwrap_version; /* "0.8.0", or NULL when not asked or not there */
    int landlock_abi;
    gk_enf_row *v;
    size_t n, cap;
};

GK_HIDDEN void gk_enforcement_derive(const grant_policy *p, const gk_projection *pr,
                                     grant_level level, const gk_enf_host *host,
                                     grant_enforcement *out);
GK_HIDDEN void gk_enforcement_clear(grant_enforcement *e);
GK_HIDDEN void gk_enforcement_set_reason(grant_enforcement *e, const char *reason);
GK_HIDDEN void gk_enforcement_set_bwrap_version(grant_enforcement *e, const char *version);
/* How many rows are not enforced at all; how many rows the level loses
 * (not enforced, or weaker on a rule of the stack): what auto refuses. */
GK_HIDDEN size_t gk_enforcement_unenforced(const grant_enforcement *e);
GK_HIDDEN size_t gk_enforcement_lost(const grant_enforcement *e);
/* The rules not enforced at all, appended to out (the frame protocol's
 * run-result: enforcement.unenforced). */
GK_HIDDEN void gk_enforcement_unenforced_rules(const grant_enforcement *e, gk_strvec *out);
/* The rows with status >= min, one per line "  - RULE (ORIGIN): WHY",
 * appended to out. */
GK_HIDDEN void gk_enforcement_list(const grant_enforcement *e, gk_enf_status min, bool policy_only,
                                   gk_buf *out);
/* This host's Landlock ABI (0: unavailable). */
GK_HIDDEN int gk_enforcement_host_abi(void);

#endif
