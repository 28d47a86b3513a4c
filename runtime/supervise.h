/* supervise.h - the parent side of the frame protocol (frame-protocol.md
 * §1, §2, §4): spawn one child with exactly fds 0-2, an empty environment
 * and cwd /, write it the request, read its result, keep the last 4096
 * bytes of its stderr, hard-kill it at the deadline through its pidfd,
 * and classify what happened by the evidence rule.
 *
 * The child is the pinned grantrun binary (gk_supervise_pin, called at
 * start-up: an O_CLOEXEC descriptor on /proc/self/exe, executed with
 * execveat) run as `grantrun --frame-child --bwrap PATH [--helper H]
 * --scratch-dir DIR`, DIR the scratch's mountpoint, made here (mode
 * 0700) and removed here after the child is reaped; a library
 * caller may name another program (tests: the adversarial children).
 *
 * Ownership: the options are borrowed for the call; out is filled (and
 * owned by the caller: gk_run_result_clear) whatever happened.
 */
#ifndef GK_SUPERVISE_H
#define GK_SUPERVISE_H

#include "runtime/frame.h"

#define GK_GRACE_MS 1000L

typedef struct gk_supervise_opts {
    const char *program;      /* NULL: the pinned grantrun */
    char *const *argv;        /* NULL: grantrun --frame-child --bwrap BWRAP [--helper H]
                                 --scratch-dir DIR */
    const char *bwrap;        /* absolute; needed when argv is NULL */
    const char *helper;       /* NULL: the child's compiled-in helper */
    long timeout_ms;          /* the request's execution.timeoutMs; 0: no deadline */
    long grace_ms;            /* < 0: GK_GRACE_MS */
} gk_supervise_opts;

/* Pin /proc/self/exe (idempotent). 0 or -errno. */
GK_HIDDEN int gk_supervise_pin(void);

/* One run: payload is a whole run-request (not re-validated here; the
 * caller checked it). Returns 0 with out filled (host-error for a request
 * too large, a spawn or pipe failure), or -EINVAL for missing options. */
GK_HIDDEN int gk_supervise(const char *payload, size_t len, const gk_supervise_opts *o,
                           gk_run_result *out);

#endif
