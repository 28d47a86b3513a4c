/* ir.h - the canonical JSON form of a policy (grant-language.md §7): the
 * writer (ir_write.c) and the strict reader (ir_read.c).
 *
 * The writer is the only place the IR's bytes are decided: keys in a fixed
 * order, lists as the canonical layers hold them, strings through the
 * library's one JSON writer (common/json.h). The reader accepts exactly
 * what the writer can produce and rebuilds canonical layers from it.
 *
 * Ownership: every returned string is the caller's (free); a policy read
 * from IR is the caller's (grant_policy_free).
 */
#ifndef GK_IR_H
#define GK_IR_H

#include "lattice/lattice.h"

/* Canonical JSON of a whole policy / one layer (no trailing newline). */
GK_HIDDEN char *gk_ir_policy(const grant_policy *p, bool pretty, size_t *len);
GK_HIDDEN char *gk_ir_layer(const gk_layer *f, bool pretty);
/* The IR without the projection (which derives from the rest): compact,
 * what a policy digest hashes. */
GK_HIDDEN char *gk_ir_policy_core(const grant_policy *p, size_t *len);
/* Read a compiled IR document. Errors (with line:col) go to diags. */
GK_HIDDEN grant_policy *gk_ir_read(gk_source *src, const grant_context *ctx, grant_diags *diags);

#endif
