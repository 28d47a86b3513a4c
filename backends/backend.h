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

#include "projection.h"

/* What a launcher (grantrun) changes in the Linux plan; NULL when
 * emitting for a person to read. */
typedef struct gk_launch_env {
    const char *const *env; /* the command's environment, NAME=VALUE, NULL-terminated */
    bool tty;               /* keep the controlling terminal: no --new-session */
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

#endif
