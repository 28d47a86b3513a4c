/* layer.h - frozen grants (layers), the stack of layers, and the lattice.
 *
 * A layer is one grant with every path frozen, in canonical form: every
 * list sorted bytewise and free of duplicates, so two layers that decide
 * alike because they were written alike compare equal by their IR.
 *
 * Dimensions are optional: a layer without an opinion on a dimension
 * abstains (has_exec false, has_fs false, net GK_TRI_NONE...).
 *
 * Ownership: a gk_layer owns everything reachable from it and is reference
 * counted: gk_layer_ref shares it, gk_layer_free drops one reference. A
 * layer is never changed after gk_layer_canonicalize, so stacks share
 * layers. A gk_stack owns one reference on each of its layers. grant_policy owns its stack,
 * its context copy and its source list.
 */
#ifndef GK_LATTICE_H
#define GK_LATTICE_H

#include "freeze/freeze.h"
#include "syntax/netdest.h"
#include "syntax/syntax.h"

typedef enum gk_tri { GK_TRI_NONE = -1, GK_TRI_FALSE = 0, GK_TRI_TRUE = 1 } gk_tri;

/* An admission entry on a name or file: Allow (all) or Subcommands(subs). */
typedef struct gk_admit {
    char *key;        /* name, or lexically frozen absolute file path */
    bool all;         /* Allow: any argv[1] */
    gk_strvec subs;   /* Subcommands(S), sorted unique; empty when all */
    char *origin;     /* "file:line" of the rule that wrote it (reasons) */
} gk_admit;

/* A keyed entry with the rule that wrote it. */
typedef struct gk_entry {
    char *key;
    char *origin;
} gk_entry;

typedef struct gk_entries {
    gk_entry *v;
    size_t n, cap;
} gk_entries;

typedef struct gk_admits {
    gk_admit *v;
    size_t n, cap;
} gk_admits;

typedef struct gk_exec_dim {
    bool has_allow;       /* false: deny-only section (IR "allow": null) */
    gk_admits names;      /* sorted by key */
    gk_admits files;      /* sorted by key */
    gk_entries dirs;      /* allow dirs, no trailing '/', sorted */
    gk_entries veto_names, veto_files, veto_dirs, veto_match; /* sorted */
    void **match_code;    /* pcre2_code *, parallel to veto_match */
} gk_exec_dim;

typedef struct gk_region {
    gk_fpath p;
    char *origin;
} gk_region;

typedef struct gk_regions {
    gk_region *v;
    size_t n, cap;
    size_t aliased;       /* entries whose path differs from real: the only
                           * ones a surface-spelling match has to scan */
} gk_regions;

typedef struct gk_fs_dim {
    bool restricted;      /* false: only deny/readonly rules (IR read/write null) */
    gk_regions read;      /* readable; includes every writable region */
    gk_regions write;
    gk_regions readonly;
    gk_regions deny;
} gk_fs_dim;

/* The third form of net (network.md §1): destination patterns, each kept as
 * its canonical text (gk_dest_format) with the rule that wrote it, sorted
 * and unique, and read back into gk_dest (parallel arrays, built by
 * gk_layer_canonicalize) so a check parses nothing. */
typedef struct gk_net_dim {
    gk_entries allow, deny;
    gk_dest *allow_d, *deny_d;
} gk_net_dim;

typedef struct gk_layer {
    char *name;           /* grant name, or the file's stem when anonymous */
    char *origin;         /* "file:line" of the grant */
    bool has_exec;
    gk_exec_dim exec;
    bool has_fs;
    gk_fs_dim fs;
    gk_tri net;           /* with net_list: GK_TRI_FALSE (nothing unconditionally) */
    bool net_list;        /* net { allow ...; deny ...; } */
    gk_net_dim netd;
    bool has_shell;
    gk_tri chdir;
    bool has_editor;
    gk_tri ed_read, ed_write, ed_tui;
    bool audit;
    /* Where each host gate was set ("file:line"; NULL: the layer origin),
     * indexed net, shell.chdir, editor.read, editor.write, editor.tui. */
    char *gate_origin[5];
    int refs;             /* layers are immutable once canonical: shared, not copied */
} gk_layer;

typedef struct gk_stack {
    gk_layer **v;
    size_t n, cap;
} gk_stack;

typedef struct gk_policy_source {
    char *file;           /* as opened (given, or include-resolved) */
    char sha256[65];
} gk_policy_source;

struct grant_policy {
    grant_context *ctx;   /* owned copy */
    gk_stack stack;
    gk_policy_source *sources;
    size_t nsources;
    /* The gate's compiled index, built on first use and published
     * atomically (gate.c); the gate hands its destructor along with it, so
     * the policy frees what it owns without reaching up to the gate. */
    struct gk_gate_index *gate_index;
    void (*gate_index_free)(struct gk_gate_index *);
    gk_strvec protect;    /* where the source files are on the compiling host
                           * (host target only): readonly for the command */
};

/* ---- layers ------------------------------------------------------------ */
GK_HIDDEN gk_layer *gk_layer_new(void);
GK_HIDDEN void gk_layer_free(gk_layer *f);
GK_HIDDEN gk_layer *gk_layer_copy(const gk_layer *f);  /* a new, unshared layer */
GK_HIDDEN gk_layer *gk_layer_ref(gk_layer *f);
/* Sort and deduplicate every list (write implies read; Allow absorbs
 * Subcommands), compile match patterns. Call after building by hand. */
GK_HIDDEN void gk_layer_canonicalize(gk_layer *f);
/* Equality of canonical layers (origins of rules ignored, layer origin and
 * name included). */
GK_HIDDEN bool gk_layer_equal(const gk_layer *a, const gk_layer *b);

/* Builders (keep the layer canonical only after gk_layer_canonicalize). */
GK_HIDDEN void gk_entries_add(gk_entries *e, const char *key, const char *origin);
GK_HIDDEN void gk_regions_add(gk_regions *r, const gk_fpath *p, const char *origin); /* copies */
GK_HIDDEN gk_admit *gk_admits_find(const gk_admits *a, const char *key);
GK_HIDDEN bool gk_entries_has(const gk_entries *e, const char *key);
GK_HIDDEN bool gk_entries_keys_equal(const gk_entries *a, const gk_entries *b); /* origins aside */
GK_HIDDEN const gk_entry *gk_entries_find(const gk_entries *e, const char *key); /* sorted e */
/* Sort by (real, path) and drop duplicates: the canonical order. */
GK_HIDDEN void gk_regions_sort_unique(gk_regions *r);
/* Is p within some region of r, matching each region's real spelling (and,
 * when both_spellings, its surface spelling too)? r must be canonical
 * (sorted by real): the test looks up each ancestor of p, so it costs
 * O(depth * log n) rather than a scan. */
GK_HIDDEN bool gk_regions_contain(const gk_regions *r, const char *p, bool both_spellings);
/* Index of the first region (sorted r) whose real spelling is key[0..len),
 * or -1. */
GK_HIDDEN long gk_regions_first_real(const gk_regions *r, const char *key, size_t len);

/* ---- patterns (deny match) -------------------------------------------- */
/* The limits every match of a grant pattern runs under, so a pattern
 * decides alike on every host and in bounded time (grant(5)). */
#define GK_MATCH_LIMIT 1000000u     /* backtracking steps */
#define GK_MATCH_DEPTH_LIMIT 10000u /* nested backtracking frames */
#define GK_MATCH_HEAP_LIMIT 20480u  /* KiB of backtracking memory */
/* Match a compiled pattern (pcre2_code) against s[0..len). md may be NULL
 * (a match data block is made for the call). 1: it matches; 0: it does not;
 * -1: the matcher gave up (a limit above, or no memory) and there is no
 * answer. The caller decides what "no answer" means, always the narrower:
 * a veto that cannot tell has matched, an admission has not. */
GK_HIDDEN int gk_pattern_match(const void *code, const char *s, size_t len, void *md);
/* Does veto pattern i of x hit s? A pattern that did not compile, or a
 * matcher that gave up, hits (fail closed); *gave_up (may be NULL) is set
 * then, so a verdict can say why. */
GK_HIDDEN bool gk_veto_pattern_hits(const gk_exec_dim *x, size_t i, const char *s, size_t len,
                                    bool *gave_up);

/* Build the layer of one validated AST: freezes every path against cache
 * (the compile's view of the host, freeze.h; NULL: uncached), errors to
 * diags. Returns NULL when any path failed to freeze. */
GK_HIDDEN gk_layer *gk_layer_from_ast(const grant_context *ctx, gk_resolve_cache *cache,
                                      const gk_file_ast *ast, grant_diags *diags);

/* ---- lattice ----------------------------------------------------------- */
GK_HIDDEN void gk_stack_push(gk_stack *s, gk_layer *f);      /* takes f */
GK_HIDDEN void gk_stack_push_unique(gk_stack *s, gk_layer *f); /* drops equal duplicates */
GK_HIDDEN void gk_stack_free(gk_stack *s);
/* Does some layer of s name dir, as the policy wrote it, among its exec
 * allow dirs (veto false) or its exec deny dirs (veto true)? The
 * projection's lists mix files and dirs; offline nothing tells them apart. */
GK_HIDDEN bool gk_stack_names_exec_dir(const gk_stack *s, const char *dir, bool veto);
GK_HIDDEN void gk_stack_copy(gk_stack *dst, const gk_stack *src);
/* meet: a's layers then b's, duplicates removed (exact conjunction). */
GK_HIDDEN void gk_stack_meet(gk_stack *dst, const gk_stack *a, const gk_stack *b);
/* join of two layers (extend): see lattice.c for the rule. Sound: never
 * admits what both deny. *lossy (may be NULL) is set when an entry of one
 * side had to be kept although the other side grants part of what it covers,
 * i.e. when the result admits less than the union. */
GK_HIDDEN gk_layer *gk_layer_join(const gk_layer *a, const gk_layer *b, bool *lossy);

/* ---- decisions on resolved queries (a minimal fold; the gate refines) --- */
GK_HIDDEN bool gk_decide_fs(const gk_stack *s, grant_op op, const char *real_path);
GK_HIDDEN bool gk_decide_exec(const gk_stack *s, const grant_exec_query *q);
GK_HIDDEN gk_tri gk_decide_gate(const gk_stack *s, const char *gate); /* NONE: unknown gate */
/* One layer's opinion: 1 allows, 0 denies, -1 abstains. */
GK_HIDDEN int gk_layer_decide_fs(const gk_layer *f, grant_op op, const char *real_path);
GK_HIDDEN int gk_layer_decide_exec(const gk_layer *f, const grant_exec_query *q);

/* Why a layer decided: the rule's origin (borrowed from the layer), the
 * rule in grant syntax, the identity that matched, advice (owned). */
typedef struct gk_why {
    const char *origin;
    char *rule;
    char *identity;
    char *hint;
} gk_why;
GK_HIDDEN void gk_why_clear(gk_why *w);
/* As above, filling *why (may be NULL). `implicit`: the target's implicit
 * grants cover the path for op, so lacking a region is no refusal. */
GK_HIDDEN int gk_layer_decide_fs_why(const gk_layer *f, grant_op op, const char *real_path,
                                     bool implicit, gk_why *why);
GK_HIDDEN int gk_layer_decide_exec_why(const gk_layer *f, const grant_exec_query *q, gk_why *why);
GK_HIDDEN gk_tri gk_layer_gate(const gk_layer *f, const char *gate);
/* Would the stack admit q for some argv[1] (q->argv1 ignored)? The
 * reference for the projection's question: an OS backend cannot see
 * arguments. */
GK_HIDDEN bool gk_decide_exec_some_argv1(const gk_stack *s, const grant_exec_query *q);
/* Do the Subcommands lists of binds (none: yes) share a word? */
GK_HIDDEN bool gk_admits_share_argv1(const gk_admit *const *binds, size_t n);
/* Does a veto of f (name, file, dir or pattern) hit any identity of q? */
GK_HIDDEN bool gk_layer_vetoes(const gk_layer *f, const grant_exec_query *q);
GK_HIDDEN bool gk_gate_known(const char *gate);

/* ---- net destinations (net.c) ----------------------------------------- */
GK_HIDDEN void gk_net_dim_free(gk_net_dim *n);
GK_HIDDEN void gk_net_dim_copy(gk_net_dim *dst, const gk_net_dim *src);
GK_HIDDEN bool gk_net_dim_equal(const gk_net_dim *a, const gk_net_dim *b);
/* Sort, drop duplicates, read the patterns back (every key must parse). */
GK_HIDDEN void gk_net_dim_canonicalize(gk_net_dim *n);
/* One layer's opinion on destination q (gk_dest_parse_query): 1 allows,
 * 0 denies, -1 abstains; *why (may be NULL) gets the deciding rule: a deny
 * pattern that matches beats an allow pattern that matches; neither is a
 * refusal by the net block itself ("no allow rule matches"). */
GK_HIDDEN int gk_layer_decide_connect(const gk_layer *f, const gk_dest *q, gk_why *why);
/* The fold: every layer with a net opinion must allow (meet). */
GK_HIDDEN bool gk_decide_connect(const gk_stack *s, const gk_dest *q);
/* The net dimension of join(a, b) into j (j->net, j->net_list, j->netd):
 * the union of the two sets; *lossy set when a deny of one side had to be
 * kept although it cuts into what the other side allows. */
GK_HIDDEN void gk_net_join(gk_layer *j, const gk_layer *a, const gk_layer *b, bool *lossy);
/* The stack's destination set as one allow/deny pair (exact: the
 * intersection of every list layer, distributed over their patterns).
 * Returns GK_TRI_TRUE (every destination), GK_TRI_FALSE (none) or
 * GK_TRI_NONE (a list: allow and deny filled, canonical texts, sorted). */
GK_HIDDEN gk_tri gk_stack_net(const gk_stack *s, gk_strvec *allow, gk_strvec *deny);

/* ---- compare (test hook) ---------------------------------------------- */
/* Witness i's query: kind 0 read, 1 write, 2 exec, 3 gate, 4 net; *path
 * is the path, gate, spelling or HOST:PORT; eq is filled for exec. */
GK_HIDDEN int gk_comparison_query(const grant_comparison *c, size_t i, int *kind,
                                  const char **path, grant_exec_query *eq);

/* ---- the policy (policy.c) ------------------------------------------ */
GK_HIDDEN grant_policy *gk_policy_new(const grant_context *ctx);
GK_HIDDEN void gk_policy_add_source(grant_policy *p, const char *file, const gk_source *src);
/* The freeze context the policy was compiled in (borrowed from p): what a
 * caller outside the library's core reads instead of reaching into
 * struct grant_policy. */
GK_HIDDEN const grant_context *gk_policy_context(const grant_policy *p);

#endif
