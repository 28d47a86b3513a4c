/* analysis.h - the analysis folder's interface: findings about a policy
 * (grantc audit) and about a Seatbelt profile (grantc sbpl lint).
 *
 * Both speak one findings type. A gk_rule is a kind of finding: its stable
 * id ("GK001", "SB001": never renumbered or reused, a new kind takes the
 * next number), a short name and its severity; a gk_finding is one
 * instance, pointing at its rule, with a message that carries neither id
 * nor name. Renderers read the fields: the audit's JSON and SARIF
 * (audit_render.c, the text form is grantc's over grant_finding), and the
 * lint's diagnostics (gk_findings_to_diags: "SB001 shadowed: MESSAGE",
 * the id in the diagnostic's id field).
 *
 *   audit.c         the GK rule catalogue and the grant_findings accessors
 *   audit_checks.c  the checks and grant_audit
 *   audit_render.c  JSON and SARIF
 *   findings.c      the findings type: free, and lint findings as diagnostics
 *   sbpl.h          the SBPL reader and evaluator (sbpl_read.c, sbpl_eval.c)
 *
 * Ownership: a gk_finding owns its strings; its rule is static. A
 * grant_findings owns its findings and its two strings.
 */
#ifndef GK_ANALYSIS_H
#define GK_ANALYSIS_H

#include "common/diag.h"

typedef struct gk_rule {
    const char *id;          /* "GK001", "SB001" */
    const char *name;        /* "deputy", "shadowed" */
    grant_severity severity; /* the default level (SARIF defaultConfiguration) */
    const char *brief;       /* SARIF shortDescription (audit only) */
    const char *full;        /* SARIF fullDescription (audit only) */
    const char *help;        /* what to do (audit only) */
} gk_rule;

typedef struct gk_finding {
    const gk_rule *rule;
    grant_severity severity; /* this instance's: the rule's, or lighter (SB002) */
    char *message;           /* no id, no name */
    /* Where: a file and line (audit, from a rule's origin "file:line"; file
     * NULL for none, line 0 unknown), or a source range (lint). */
    char *file;
    unsigned line;
    gk_loc loc;
    char *subject; /* what it is about: keys the SARIF fingerprint */
    char *hint;    /* lint: advice, or NULL */
    bool has_related;
    gk_loc related; /* lint: a second position ("the later rule") */
    char *related_message;
} gk_finding;

GK_HIDDEN void gk_finding_free(gk_finding *f);
/* Each finding as a diagnostic in out, in order: "ID NAME: MESSAGE" with
 * the id as the diagnostic's id, its hint and related position. Frees the
 * findings' strings. */
GK_HIDDEN void gk_findings_to_diags(gk_finding *v, size_t n, grant_diags *out);

/* ---- audit ---------------------------------------------------------------- */

/* The audit's rules; a finding's index in this table is its SARIF
 * ruleIndex. */
enum {
    GK_R_DEPUTY,
    GK_R_SHADOWED,
    GK_R_NO_EFFECT,
    GK_R_SOURCE_WRITABLE,
    GK_R_UNIX_SOCKET,
    GK_R_PATH_WRITABLE,
    GK_R_SHELL_CAPABLE,
    GK_R_ELF_LOADER,
    GK_R_WIN_EXEC,
    GK_R_LANDLOCK_NESTING,
    GK_R_SUBCOMMANDS,
    GK_R_ABSENT_MASK,
    GK_R_WIN_RENAME,
    GK_R_GIT_WRITABLE,
    GK_R_BUILD_SHADOW,
    GK_R_NET_SHARED_HOST,
    GK_R_COUNT
};
GK_HIDDEN extern const gk_rule gk_audit_rules[GK_R_COUNT];

struct grant_findings {
    gk_finding *v;
    size_t n, cap;
    char *cwd;     /* the context cwd: SARIF URIs are relative to it */
    char *primary; /* the first source file: where SARIF puts a finding
                    * that has no location (GitHub wants one) */
};

#endif
