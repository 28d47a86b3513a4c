/* gate.h - the gate: every decision with its reason (grant-language.md §6).
 *
 * The gate folds the whole stack on a resolved query, adds the target's
 * implicit grants, the discard device and the protection of the policy's
 * own sources, and fills a grant_verdict saying which layer and rule
 * decided and which identity matched. The projection and every backend
 * derive from these answers.
 *
 * Ownership: a grant_verdict owns its rule, identity, path and hint; its
 * origin and layer are borrowed from the policy (free the verdict first). The
 * compiled index (gk_gate_index) belongs to its grant_policy: built on the
 * first check and freed with the policy; a policy may be shared between
 * threads once it has answered one check.
 */
#ifndef GK_GATE_H
#define GK_GATE_H

#include "frame.h"

struct grant_verdict {
    grant_answer answer;
    /* Borrowed from the policy's frames or static: a verdict lives no
     * longer than its policy (grant.h), and a check allocates less. */
    const char *origin; /* "file:line", "implicit:linux", "discard", "policy-source", "no-opinion" */
    const char *layer;  /* deciding layer's name, or NULL */
    char *rule;         /* the rule in grant syntax, or a sentence for an absence */
    char *identity;     /* the identity that matched (== path for fs: not freed twice) */
    char *path;         /* resolved path (fs) or canonical file (exec) */
    char *hint;
};

/* Decide on a canonical path. v may be NULL when only the answer matters
 * (the fast path: no string is built). Returns GRANT_ALLOWED/DENIED. */
GK_HIDDEN grant_answer gk_gate_fs(const grant_policy *p, grant_op op, const char *canonical,
                                  grant_verdict *v);
/* Decide on resolved exec identities (NOT_FOUND is reported only by
 * grant_check_exec, which knows whether the head exists). */
GK_HIDDEN grant_answer gk_gate_exec(const grant_policy *p, const grant_exec_query *q,
                                    grant_verdict *v);
GK_HIDDEN grant_answer gk_gate_gate(const grant_policy *p, const char *gate, grant_verdict *v);

/* Resolve a query path: absolute against cwd, then as the kernel would
 * (host) or lexically with the alias table (offline). NULL on a symlink
 * loop. Caller frees. */
GK_HIDDEN char *gk_resolve_query(const grant_context *ctx, const char *path, const char *cwd);
/* The three identities of a command head (spec §6). *walked and
 * *canonical may come back NULL. */
GK_HIDDEN void gk_walk_head(const grant_context *ctx, const char *head, const char *path_env,
                            const char *cwd, char **walked, char **canonical);

/* Where a source file named file (relative to the context cwd) is,
 * resolved like a query. Caller frees; NULL on a loop. The policy's own
 * list of protected sources is grant_policy.protect. */
GK_HIDDEN char *gk_source_path(const grant_context *ctx, const char *file);

GK_HIDDEN void gk_verdict_clear(grant_verdict *v);
GK_HIDDEN void gk_gate_index_free(void *index);

#endif
