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
 * compiled index (gk_gate_index, with its exec half gk_exec_index) belongs
 * to its grant_policy: built on the first check (published atomically, so
 * threads may share a policy from the start) and freed with the policy.
 */
#ifndef GK_GATE_H
#define GK_GATE_H

#include "lattice/lattice.h"

struct grant_verdict {
    grant_answer answer;
    /* Borrowed from the policy's layers or static: a verdict lives no
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
/* Does every fs-restricting layer hold the canonical path in its read
 * (write) regions? 1 or 0 from the index, -1 when it cannot say (the
 * caller then asks the layers). Implicit grants play no part. */
GK_HIDDEN int gk_gate_fs_held(const grant_policy *p, const char *canonical, bool write);
/* Would the gate admit q for some argv[1] (q->argv1 ignored)? What an OS
 * backend, which cannot see arguments, must let run. */
GK_HIDDEN grant_answer gk_gate_exec_some_argv1(const grant_policy *p, const grant_exec_query *q);
GK_HIDDEN grant_answer gk_gate_gate(const grant_policy *p, const char *gate, grant_verdict *v);
/* Decide on a destination read by gk_dest_parse_query (network.md §1).
 * v may be NULL (no string is built). */
GK_HIDDEN grant_answer gk_gate_connect(const grant_policy *p, const gk_dest *q, grant_verdict *v);

/* Resolve a query path: absolute against cwd, then as the kernel would
 * (host) or lexically with the alias table (offline). NULL on a symlink
 * loop. Caller frees. */
GK_HIDDEN char *gk_resolve_query(const grant_context *ctx, const char *path, const char *cwd);
/* The three identities of a command head (spec §6). *walked and
 * *canonical may come back NULL. */
GK_HIDDEN void gk_walk_head(const grant_context *ctx, const char *head, const char *path_env,
                            const char *cwd, char **walked, char **canonical);
/* The same with a resolution cache (freeze.h) for a scan of many heads. */
GK_HIDDEN void gk_walk_head_cached(const grant_context *ctx, const char *head,
                                   const char *path_env, const char *cwd, char **walked,
                                   char **canonical, gk_resolve_cache *cache);

/* The compiled exec index (gate_exec.c), part of the gate's index. */
typedef struct gk_exec_index gk_exec_index;
/* cache (may be NULL) answers the PATH walk of the vetoed names. */
GK_HIDDEN gk_exec_index *gk_exec_index_build(const grant_policy *p, gk_resolve_cache *cache);
GK_HIDDEN void gk_exec_index_free(gk_exec_index *ix);
/* Make the same-file table now if it is not made, its walk through cache. */
GK_HIDDEN void gk_exec_index_prime(const gk_exec_index *ix, gk_resolve_cache *cache);
/* The question asked of the index on resolved identities: the gate's
 * answer for q->argv1, for some argv[1], or only whether a veto (any
 * layer's) hits q. GRANT_ALLOWED or GRANT_DENIED (for GK_EXEC_VETO:
 * DENIED when vetoed); -1 when the index cannot answer (more layers than
 * it has bits), and the fold must. */
typedef enum gk_exec_question { GK_EXEC_ARGV1, GK_EXEC_ANY_ARGV1, GK_EXEC_VETO } gk_exec_question;
GK_HIDDEN int gk_exec_index_answer(const gk_exec_index *ix, const grant_exec_query *q,
                                   gk_exec_question what);
/* Host target: the veto (and its layer) whose program's file, recorded
 * when the index was built, is the file at canonical (same device and
 * inode: a hard link under another name); NULL if none. */
GK_HIDDEN const gk_entry *gk_exec_index_same_file(const gk_exec_index *ix, const char *canonical,
                                                 const gk_layer **layer);
/* The same by a file's identity already known (a scan's d_ino). */
GK_HIDDEN const gk_entry *gk_exec_index_same_id(const gk_exec_index *ix, uint64_t dev, uint64_t ino,
                                               const gk_layer **layer);
/* A directory scan's share of the veto question (projection.c), answered
 * as gk_exec_index_answer(GK_EXEC_VETO) would, taken apart so what the
 * entries of one directory share is asked once: the veto-dir bits of
 * everything directly inside dir; whether any veto file lies directly
 * inside dir; then per identity the names and patterns at its basename
 * and, for a path, the veto files at it. Non-zero bits: vetoed. Only when
 * the index is usable; the same-file vetoes are asked apart
 * (gk_exec_index_same_id). */
typedef struct gk_scan_match {
    struct pcre2_real_match_data_8 *md;
} gk_scan_match;
GK_HIDDEN bool gk_exec_index_usable(const gk_exec_index *ix);
GK_HIDDEN bool gk_exec_index_has_same(const gk_exec_index *ix);
GK_HIDDEN uint64_t gk_exec_index_dir_bits(const gk_exec_index *ix, const char *dir);
GK_HIDDEN bool gk_exec_index_dir_has_files(const gk_exec_index *ix, const char *dir);
GK_HIDDEN uint64_t gk_exec_index_base_bits(const gk_exec_index *ix, const char *base,
                                           gk_scan_match *m);
GK_HIDDEN uint64_t gk_exec_index_file_bits(const gk_exec_index *ix, const char *path);
GK_HIDDEN void gk_scan_match_free(gk_scan_match *m);
/* The policy's exec index (built on first use, like every check's). */
GK_HIDDEN const gk_exec_index *gk_gate_exec_index(const grant_policy *p);
/* Build the policy's index now if it is not built, its host look-ups
 * through cache (a projection's, which has read the PATH directories
 * already): the same index, fewer stats. */
GK_HIDDEN void gk_gate_index_prime(const grant_policy *p, gk_resolve_cache *cache);
/* Does a veto of any layer hit q (names, files, dirs, patterns, or the
 * same file as a vetoed program)? */
GK_HIDDEN bool gk_gate_exec_vetoed(const grant_policy *p, const grant_exec_query *q);
/* The same with the canonical file's device and inode given (both 0:
 * looked up), so a directory scan pays no stat per entry. */
GK_HIDDEN bool gk_gate_exec_vetoed_id(const grant_policy *p, const grant_exec_query *q,
                                      uint64_t dev, uint64_t ino);

GK_HIDDEN void gk_verdict_clear(grant_verdict *v);

/* ---- the projection: what the OS backends render (grant-language.md §6).
 *
 * Derived from the same fold as the decisions, never from the grant text,
 * so an emitter cannot disagree with the gate.
 *
 * Ownership: a gk_projection owns all its lists; free with
 * gk_projection_free.
 */


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
    gk_strvec links;      /* host target: symlinks in a writable directory on the way to a
                           * deny/readonly entry (its name, not only its target, is kept) */
    bool net;             /* every destination (net allow, or no opinion) */
    bool net_list;        /* some destinations: net_allow minus net_deny (network.md) */
    gk_strvec net_allow;  /* canonical patterns, sorted (net_list only) */
    gk_strvec net_deny;
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
/* Host target: for each readonly or deny entry named .git, the .git of
 * every gitlink its index lists (and that repository's git dir, and
 * theirs in turn) becomes readonly too (gitlinks.c). */
GK_HIDDEN void gk_gitlinks_protect(gk_projection *pr);
/* The gitlink paths (mode 160000, relative, no "." or ".." component) an
 * index file's bytes list (versions 2-4; hash 20 for sha1, 32 for sha256),
 * appended to out. The bytes are the host's and may be crafted: every
 * length is checked against len. Exposed for the fuzz target. */
GK_HIDDEN void gk_gitlinks_of_index(const unsigned char *d, size_t len, size_t hash,
                                    gk_strvec *out);
/* The implicit grants of the policy's target (empty with --no-implicit). */
GK_HIDDEN void gk_implicit_for(const grant_context *ctx, gk_implicit *out);

/* The macOS implicit tables, with why each entry is there: which 0 the
 * read-only paths, 1 the devices. */
typedef struct gk_implicit_entry {
    const char *path;
    const char *reason;
} gk_implicit_entry;
GK_HIDDEN const gk_implicit_entry *gk_implicit_macos_table(int which, size_t *n);
/* DARWIN_USER_CACHE_DIR for a Mac's TMPDIR (/private/var/folders/X/Y/T ->
 * .../C), or NULL when tempdir is not of that form. Caller frees. */
GK_HIDDEN char *gk_macos_user_cache_dir(const char *tempdir);
/* macOS runs some files by another one: /usr/bin/git is an xcrun shim that
 * executes the developer dir's git, /opt/homebrew/bin/rg a link into the
 * Cellar. For an admitted file, the resolved executables Seatbelt will be
 * asked about: literals and (anchored) regexes, appended. */
GK_HIDDEN void gk_macos_exec_targets(const char *file, gk_strvec *literals, gk_strvec *regexes);
/* The same for an admitted dir: every shim of /usr/bin and every Cellar
 * file a Homebrew bin/ inside it leads to. */
GK_HIDDEN void gk_macos_dir_targets(const char *dir, gk_strvec *literals, gk_strvec *regexes);
/* The reverse: the file a Mac ran when Seatbelt sees resolved (the shim or
 * the link), or NULL. Caller frees. */
GK_HIDDEN char *gk_macos_exec_stand_in(const char *resolved);
/* Row i of the exec alias table (NULL past its end), for documentation. */
GK_HIDDEN const char *gk_macos_exec_alias_reason(size_t i, const char **name, const char **root,
                                                 const char **tail);

#endif
