/* sbpl.h - an offline Seatbelt (SBPL) reader and evaluator (issue 5).
 *
 * The reader (sbpl_read*.c) turns profile text into a flat, ordered list of
 * rules: imports are inlined where they stand, defines and calls of simple
 * procedures are evaluated statically, params come from -D. The evaluator
 * (sbpl_eval.c) answers one query the way Seatbelt does: among the rules
 * whose operation is the query's or an ancestor of it (default is the root
 * of the hierarchy), the last filtered one whose filter matches decides;
 * where none matches, the unfiltered rules are the operation's fallback
 * (the last one naming the operation or a family above it, else the last
 * on default, whatever their position), and an operation that (deny
 * default) does not cover (gk_sb_op_uncovered) is allowed.
 *
 * Nothing is guessed. What the reader cannot evaluate is an error with its
 * position; what cannot be known offline (a param without a -D value, an
 * import that is not found, a filter such as (extension ...) that depends
 * on the running process) is kept as an unknown, and a query whose answer
 * depends on one is "undecided", naming the rule.
 *
 * Regexes are PCRE2 with SBPL's semantics: a regex is searched for anywhere
 * in the path (POSIX regexec style), so only ^ anchors it at the start and
 * $ at the end: #"/\.git(/|$)" matches a .git at any depth, #"^/dev/fd/"
 * only under /dev/fd. Patterns are limited to the POSIX ERE constructs
 * Seatbelt's matcher has (gk_regex_unportable names the first other one).
 *
 * Ownership: a grant_sbpl owns its rules, its filters, an arena of the
 * strings they point to, and a reference on every source it read; answers
 * own their strings.
 */
#ifndef GK_SBPL_H
#define GK_SBPL_H

#include "common/diag.h"

/* Three-valued match: a filter that cannot be evaluated offline is UNKNOWN. */
typedef enum gk_sb_tri { GK_SB_NO = 0, GK_SB_YES = 1, GK_SB_UNKNOWN = 2 } gk_sb_tri;

typedef enum gk_sb_fkind {
    GK_SBF_ANY,              /* require-any, and the top-level filters of a rule */
    GK_SBF_ALL,              /* require-all */
    GK_SBF_NOT,              /* require-not */
    GK_SBF_LITERAL,          /* literal, path */
    GK_SBF_SUBPATH,
    GK_SBF_PREFIX,           /* prefix, path-prefix: a string prefix */
    GK_SBF_REGEX,            /* regex, path-regex */
    GK_SBF_VNODE,            /* vnode-type */
    GK_SBF_ANCESTORS,        /* path-ancestors: the path and every directory above it */
    GK_SBF_GLOBAL_NAME,
    GK_SBF_GLOBAL_NAME_REGEX,
    GK_SBF_GLOBAL_NAME_PREFIX,
    GK_SBF_LOCAL_NAME,
    GK_SBF_LOCAL_NAME_REGEX,
    GK_SBF_LOCAL_NAME_PREFIX,
    GK_SBF_XPC_NAME,         /* xpc-service-name: queried as "xpc:NAME" */
    GK_SBF_XPC_NAME_PREFIX,
    GK_SBF_IPC_NAME,         /* ipc-posix-name: a POSIX semaphore or shm name */
    GK_SBF_IPC_NAME_PREFIX,
    GK_SBF_IPC_NAME_REGEX,
    GK_SBF_SYSCTL_NAME,
    GK_SBF_SYSCTL_PREFIX,
    GK_SBF_SYSCTL_REGEX,
    GK_SBF_TARGET,           /* signal target */
    GK_SBF_REMOTE,           /* remote/to: ip forms, or a unix socket path */
    GK_SBF_LOCAL,            /* local/from */
    GK_SBF_OPAQUE,           /* no offline value: UNKNOWN where it applies (applies) */
} gk_sb_fkind;

/* Vnode types, as bits of gk_sb_filter.vnodes. */
enum {
    GK_SB_VNODE_REGULAR_FILE,
    GK_SB_VNODE_DIRECTORY,
    GK_SB_VNODE_SYMLINK,
    GK_SB_VNODE_FIFO,
    GK_SB_VNODE_SOCKET,
    GK_SB_VNODE_CHARACTER_DEVICE,
    GK_SB_VNODE_BLOCK_DEVICE,
    GK_SB_VNODE_TTY,
    GK_SB_VNODE_COUNT
};
GK_HIDDEN const char *gk_sb_vnode_name(int v);
GK_HIDDEN int gk_sb_vnode_lookup(const char *name); /* -1 if unknown */

/* Network filters: which protocols and families they accept. */
enum { GK_SB_PROTO_TCP = 1, GK_SB_PROTO_UDP = 2, GK_SB_PROTO_UNIX = 4 };
enum { GK_SB_FAM_4 = 1, GK_SB_FAM_6 = 2 };

typedef struct gk_sb_filter gk_sb_filter;
struct gk_sb_filter {
    gk_sb_fkind kind;
    gk_loc loc;               /* the filter form, for lint and reasons */
    char *str;                /* operand; for OPAQUE the reason it has no value */
    void *re;                 /* pcre2_code * of regex kinds */
    unsigned vnodes;          /* VNODE: bit per type */
    unsigned protos, fams;    /* REMOTE/LOCAL */
    unsigned applies;         /* OPAQUE: bits (1 << gk_sb_argkind) of the queries it can
                               * match (0: every query); NO for the others */
    char *host;               /* REMOTE/LOCAL ip: "*" or "localhost" */
    int port;                 /* REMOTE/LOCAL ip: -1 for "*" */
    gk_sb_filter **kids;      /* ANY/ALL/NOT; REMOTE/LOCAL unix: the path filter */
    size_t nkids, capkids;
};

typedef enum gk_sb_action {
    GK_SB_ALLOW,
    GK_SB_DENY,
    GK_SB_UNRESOLVED,         /* an import that was not found: any action */
} gk_sb_action;

/* Modifiers, as bits. */
enum {
    GK_SBM_REPORT = 1,
    GK_SBM_NO_REPORT = 2,
    GK_SBM_MESSAGE = 4,
    GK_SBM_SEND_SIGNAL = 8,
    GK_SBM_OTHER = 16,
};

typedef struct gk_sb_rule {
    gk_sb_action action;
    int *ops;                 /* operation ids (sbpl_ops.c table) */
    size_t nops;
    gk_sb_filter *filter;     /* NULL: every query of its operations */
    gk_loc loc;               /* the (allow ...)/(deny ...)/(import ...) form */
    gk_loc via;               /* the procedure call that produced it (src NULL if none) */
    unsigned mods;
    char *text;               /* the form as written, whitespace collapsed */
} gk_sb_rule;

/* A use of something unknown offline, kept for lint. */
typedef struct gk_sb_unresolved {
    gk_loc loc;
    char *name;
} gk_sb_unresolved;

struct grant_sbpl {
    gk_sb_rule *rules;
    size_t n, cap;
    gk_source **sources;      /* every file read, one reference each */
    size_t nsources, capsources;
    gk_sb_filter **filters;   /* every filter (owns its kids array) */
    size_t nfilters, capfilters;
    void **arena;             /* strings the filters and values point to */
    size_t narena, caparena;
    gk_sb_unresolved *params; /* (param "X") without a value */
    size_t nparams, capparams;
    gk_sb_unresolved *imports; /* imports not found */
    size_t nimports, capimports;
    gk_sb_filter **regexes;   /* every regex filter (owns its code), for lint */
    size_t nregexes, capregexes;
    bool uses_vnode;          /* some filter tests the vnode type */
};

/* ---- operations, vnode types, regexes (sbpl_ops.c) ------------------- */

/* Kinds of argument an operation's filters look at. */
typedef enum gk_sb_argkind {
    GK_SB_ARG_NONE,
    GK_SB_ARG_PATH,           /* file*, process-exec* */
    GK_SB_ARG_NAME,           /* mach-lookup, mach-register */
    GK_SB_ARG_SYSCTL,
    GK_SB_ARG_TARGET,         /* signal */
    GK_SB_ARG_NET,            /* network* */
    GK_SB_ARG_IPC,            /* ipc-posix*: a semaphore or shm name (optional) */
} gk_sb_argkind;

GK_HIDDEN int gk_sb_op_lookup(const char *name);  /* aliases resolved; -1 if unknown */
GK_HIDDEN const char *gk_sb_op_name(int op);
GK_HIDDEN size_t gk_sb_op_count(void);
GK_HIDDEN int gk_sb_op_parent(int op);             /* -1 for default */
GK_HIDDEN bool gk_sb_op_covers(int ancestor, int op); /* ancestor-or-self */
GK_HIDDEN gk_sb_argkind gk_sb_op_argkind(int op);
/* Operations that (deny default) does not cover on macOS: allowed unless a
 * rule decides them. NULL when op is covered; else the source of the fact. */
GK_HIDDEN const char *gk_sb_op_uncovered(int op);
/* The table itself, for documentation and tests. */
typedef struct gk_sb_uncovered {
    const char *op;
    const char *source;
} gk_sb_uncovered;
GK_HIDDEN const gk_sb_uncovered *gk_sb_uncovered_table(size_t *n);
/* Every known operation and alias name, for "did you mean" hints. */
GK_HIDDEN const char *const *gk_sb_op_names(size_t *n);

/* Compile an SBPL regex (PCRE2, searched unanchored; ERE constructs only).
 * NULL with *err (malloc'd) and *at (byte offset in pat) on failure. */
GK_HIDDEN void *gk_sb_regex_compile(const char *pat, char **err, size_t *at);
/* 1 match, 0 none, 2 unknown (the two readings of an escape inside a
 * class, "[^\.]", disagree on s). */
GK_HIDDEN int gk_sb_regex_match(const void *re, const char *s);
GK_HIDDEN void gk_sb_regex_free(void *re);

/* ---- reader (sbpl_read.c) --------------------------------------------- */

/* Read a profile; see grant_sbpl_read. src is borrowed (a reference is
 * taken). Returns NULL when an error was added to diags. */
GK_HIDDEN grant_sbpl *gk_sbpl_read(gk_source *src, const char *const *params, size_t nparams,
                                   unsigned flags, grant_diags *diags);

/* ---- evaluator (sbpl_eval.c) ------------------------------------------ */

typedef struct gk_sb_query {
    int op;                   /* an operation id (never a '*' expansion) */
    const char *arg;          /* path, name, target or address; may be NULL */
    int vnode;                /* GK_SB_VNODE_*, or -1 when unknown */
} gk_sb_query;

typedef struct gk_sb_result {
    int verdict;              /* grant_sbpl_verdict */
    const gk_sb_rule *rule;   /* deciding rule; NULL for the implicit default */
    bool uncovered;           /* decided by the uncovered-operations table */
    const gk_sb_rule *unknown;/* undecided: the rule whose match is unknown */
} gk_sb_result;

/* One leaf query. */
GK_HIDDEN gk_sb_result gk_sbpl_decide(const grant_sbpl *s, const gk_sb_query *q);
/* Does filter f match q? */
GK_HIDDEN gk_sb_tri gk_sb_filter_match(const gk_sb_filter *f, const gk_sb_query *q);

#endif
