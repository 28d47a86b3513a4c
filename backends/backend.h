/* backend.h - the emitters: one file per OS backend, each with one entry
 * point that reads the projection (never a grant file) and appends its
 * output to a buffer. Same projection and context, same bytes.
 *
 * Ownership: emitters borrow everything they are given; they append to
 * `out` and add fidelity notes to `notes` (gk_diag_file with the backend's
 * name as the "file", severity GK_WARNING for a rule that cannot be
 * enforced as written, GK_NOTE for an assumption). They return 0, -EINVAL
 * for an unknown format, or -ENOTSUP.
 */
#ifndef GK_BACKEND_H
#define GK_BACKEND_H

#include "gate/gate.h"

/* What a launcher (grantrun) changes in the Linux plan; NULL when
 * emitting for a person to read. */
typedef struct gk_launch_env {
    const char *const *env; /* the command's environment, NAME=VALUE, NULL-terminated */
    bool tty;               /* keep the controlling terminal: no --new-session */
    const char *scratch_at; /* a launcher's own writable mount at this sandbox path (the
                             * frame protocol's scratch), or NULL: masks below it are
                             * kept although no bind of the policy shows the name */
    const char *scratch;    /* the host directory bound at scratch_at, or NULL: what the
                             * policy names below scratch_at is looked up there, not at
                             * the host path (which the run never sees) */
} gk_launch_env;

typedef struct gk_emit_input {
    const grant_policy *policy;     /* for the context and the policy digest */
    const gk_projection *proj;
    const char *format;             /* never NULL: the dispatcher fills the default */
    const gk_launch_env *launch;    /* Linux plan only: the helper runs first (it
                                     * keeps CAP_SYS_ADMIN for its remounts, then
                                     * drops every capability itself) */
} gk_emit_input;

GK_HIDDEN int gk_emit_bwrap(const gk_emit_input *in, grant_diags *notes, gk_buf *out);
GK_HIDDEN int gk_emit_seatbelt(const gk_emit_input *in, grant_diags *notes, gk_buf *out);
GK_HIDDEN int gk_emit_appcontainer(const gk_emit_input *in, grant_diags *notes, gk_buf *out);
GK_HIDDEN int gk_emit_landlock(const gk_emit_input *in, grant_diags *notes, gk_buf *out);

/* SHA-256 of the policy's canonical IR without its projection (compact),
 * lowercase hex: names the AppContainer profile ("grantkit.<first 12
 * hex>"). Caller frees. */
GK_HIDDEN char *gk_policy_digest(const grant_policy *p);

/* ---- the Linux mount plan, shared by the bwrap and Landlock emitters and
 * grantrun's launcher.
 *
 * gk_bwrap_plan_build renders a projection into bubblewrap's options
 * (everything bwrap takes before `--`) and says which host paths bwrap will
 * create as mountpoints while setting up (placeholders), so that whoever
 * launches it can remove them after the run. The options stay in two parts
 * around the one place a launcher adds its own mounts; gk_bwrap_plan_options
 * joins them. The Landlock emitter reads the same plan's mounts, so its
 * rules mirror the binds exactly.
 *
 * Ownership: a gk_bwrap_plan owns every string in it; free with
 * gk_bwrap_plan_free.
 */

/* What the command may do below a mount's destination. */
typedef enum gk_area {
    GK_AREA_NONE,    /* not visible: the sandbox root's own tmpfs */
    GK_AREA_HOST_RO, /* a read-only bind of a host path */
    GK_AREA_HOST_RW, /* a writable bind of a host path: creations reach the host */
    GK_AREA_PRIV_RO, /* bwrap's own /proc */
    GK_AREA_PRIV_RW, /* a private tmpfs (/tmp, /dev): creations vanish with the run */
} gk_area;

typedef enum gk_mount_role {
    GK_MOUNT_SYSTEM,   /* --proc, --dev, --tmpfs /tmp, --dev-bind / / */
    GK_MOUNT_IMPLICIT, /* the target's implicit read set */
    GK_MOUNT_READ,     /* a readable region */
    GK_MOUNT_WRITE,    /* a writable region */
    GK_MOUNT_PIN,      /* a writable self-bind that pins a directory (rename: EBUSY) */
    GK_MOUNT_READONLY, /* a readonly entry (or policy source) re-bound read-only */
    GK_MOUNT_DEVICE,   /* one device of the implicit set (Landlock only; --dev makes it) */
} gk_mount_role;

/* One mount (or symlink) in the order bwrap performs it. */
typedef struct gk_mount {
    gk_mount_role role;
    const char *flag;  /* "--ro-bind-try", "--symlink", ... (static) */
    char *src;         /* emitted source, NULL for --proc/--dev/--tmpfs */
    char *dest;        /* path inside the sandbox */
    char *host;        /* host path whose tree appears at dest; NULL when private */
    char *link;        /* --symlink: absolute path (in the sandbox) the link points to */
    gk_area area;
    bool mkdir;        /* emit `--dir DEST` first (a pinned dir a mask will create) */
    bool is_file;      /* dest is not a directory (stat on the host, or assumed offline) */
} gk_mount;

typedef struct gk_bwrap_plan {
    /* bwrap's options in the order it applies them; a launcher's own mounts
     * (helper, scratch root) go between the two parts. */
    gk_strvec options;      /* namespaces, capabilities, environment, the
                             * policy's mounts */
    gk_strvec late_options; /* the masks (after every mount, so none is hidden),
                             * --remount-ro / (once every mountpoint is made),
                             * --chdir */
    gk_strvec placeholders; /* host paths bwrap creates (deepest first): after the
                             * run remove each that is still an empty directory or
                             * empty regular file, in this order */
    gk_mount *mounts;       /* the mounts of the options, in order (masks excluded) */
    size_t nmounts;
    gk_strvec masks;        /* sandbox paths masked (sorted) */
    bool offline;           /* built without looking at this host */
} gk_bwrap_plan;

/* Build the plan of in->proj. Fidelity notes go to notes (file "bwrap").
 * Reads the host (one lstat per entry) only for host-target policies. */
GK_HIDDEN void gk_bwrap_plan_build(const gk_emit_input *in, grant_diags *notes,
                                   gk_bwrap_plan *out);
/* The mounts alone (no masks, no placeholders): what the Landlock
 * ruleset mirrors, at about half the cost. */
GK_HIDDEN void gk_bwrap_plan_build_mounts(const gk_emit_input *in, grant_diags *notes,
                                          gk_bwrap_plan *out);
GK_HIDDEN void gk_bwrap_plan_free(gk_bwrap_plan *p);
/* Append to out bwrap's options: the plan's, with a launcher's own mounts
 * (slot; NULL or empty: none) between its two parts. */
GK_HIDDEN void gk_bwrap_plan_options(const gk_bwrap_plan *p, const gk_strvec *slot,
                                     gk_strvec *out);

/* The Landlock ruleset of a projection (landlock.c): rights in the
 * kernel's bit values, already limited to what `abi` handles and, on a
 * file, to file rights; rules sorted by path, one per path, named as the
 * sandbox sees them (they mirror the plan's mounts). Owns its paths. */
typedef struct gk_ll_rule {
    char *path;
    uint32_t access;
    bool file;
} gk_ll_rule;

typedef struct gk_ll_ruleset {
    int abi;           /* the ABI assumed (the host's, or 3 offline) */
    uint32_t handled;  /* handled_access_fs */
    uint32_t scoped;   /* Landlock scopes the helper applies (ABI 6), 0 none; a launcher's */
    gk_ll_rule *v;
    size_t n, cap;
} gk_ll_ruleset;

GK_HIDDEN void gk_landlock_build(const gk_emit_input *in, grant_diags *notes, gk_ll_ruleset *out);
/* The same from a plan already built for in (a launcher has one). */
GK_HIDDEN void gk_landlock_build_from(const gk_emit_input *in, const gk_bwrap_plan *plan,
                                      grant_diags *notes, gk_ll_ruleset *out);
GK_HIDDEN void gk_landlock_free(gk_ll_ruleset *rs);
/* The ruleset in grantkit-helper's input format (runtime/helper.c);
 * -EINVAL for a path holding a newline, which that format cannot carry. */
GK_HIDDEN int gk_landlock_helper_text(const gk_ll_ruleset *rs, gk_buf *out);

/* Tests only: the Landlock ABI a host-target emit assumes instead of asking
 * the kernel (0, the default: ask), so host goldens do not depend on the
 * kernel they run on. */
GK_HIDDEN extern int gk_landlock_abi_override;

/* Offline guess at whether a path names a file rather than a directory (an
 * extension, or a well-known dotfile such as .netrc). */
GK_HIDDEN bool gk_bwrap_filelike(const char *path);

#endif
