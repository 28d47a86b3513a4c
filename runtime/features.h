/* features.h - what this host offers the Linux envelope, for `grantrun
 * --version` (cli.md: the version and the features this build and host
 * have): the Landlock ABI the kernel answers, seccomp filters, the
 * libseccomp linked, the bubblewrap found and its version, user
 * namespaces. A probe only looks; it never decides whether a run may go
 * ahead (launch.c does, failing closed).
 *
 * Ownership: a gk_host_features owns its strings (gk_host_features_clear).
 */
#ifndef GK_FEATURES_H
#define GK_FEATURES_H

#include <stdbool.h>
#include "common/util.h"

typedef struct gk_host_features {
    int landlock_abi;     /* the kernel's ABI (>= 1), or -errno (-ENOSYS, -EOPNOTSUPP) */
    bool seccomp_filter;  /* the kernel takes seccomp filters */
    char *libseccomp;     /* the linked libseccomp's version, "2.5.4" */
    char *bwrap;          /* the bubblewrap asked (or found on PATH), NULL if none */
    char *bwrap_version;  /* its --version line, NULL when it did not give one */
    long max_userns;      /* /proc/sys/user/max_user_namespaces, -1 unknown */
    int unpriv_userns;    /* kernel.unprivileged_userns_clone: 1, 0, -1 absent */
} gk_host_features;

/* Probe. bwrap: the one to ask (NULL: the first executable `bwrap` on the
 * absolute entries of path_env). Never fails: what cannot be learnt is
 * left unknown. */
GK_HIDDEN void gk_host_features_probe(const char *bwrap, const char *path_env,
                                      gk_host_features *out);
GK_HIDDEN void gk_host_features_clear(gk_host_features *f);

#endif
