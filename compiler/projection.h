/* projection.h - what the OS backends render (grant-language.md §6).
 *
 * Derived from the same fold as the decisions, never from the grant text,
 * so an emitter cannot disagree with the gate.
 *
 * Ownership: a gk_projection owns all its lists; free with
 * gk_projection_free.
 */
#ifndef GK_PROJECTION_H
#define GK_PROJECTION_H

#include "frame.h"

typedef struct gk_implicit {
    const char *target;   /* "linux", "macos", "windows" */
    gk_strvec read;       /* read-only paths every program needs */
    gk_strvec write;      /* private writable paths (/tmp on Linux) */
    gk_strvec devices;    /* /dev entries made available */
    bool proc;            /* /proc of the command's own pid namespace */
} gk_implicit;

typedef struct gk_projection {
    bool fs_restricted;   /* some layer grants only listed regions */
    gk_regions read;      /* effective readable regions (both spellings) */
    gk_regions write;     /* effective writable regions */
    gk_regions readonly;  /* union over layers */
    gk_regions deny;      /* union over layers */
    gk_strvec pinned;     /* proper ancestors of deny/readonly entries inside a writable region */
    bool net;
    bool exec_restricted; /* some layer restricts exec */
    gk_strvec exec_admit; /* files and dirs the stack admits */
    gk_strvec exec_veto;  /* canonical vetoed files, and veto dirs */
    gk_strvec deputy;     /* writable exec-admitted prefixes */
    gk_strvec protect;    /* the policy's own source files: readonly during a run */
    bool has_implicit;
    gk_implicit implicit;
} gk_projection;

GK_HIDDEN gk_projection *gk_projection_build(const grant_policy *p);
GK_HIDDEN void gk_projection_free(gk_projection *pr);
/* The implicit grants of the policy's target (empty with --no-implicit). */
GK_HIDDEN void gk_implicit_for(const grant_context *ctx, gk_implicit *out);

#endif
