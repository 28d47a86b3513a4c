/* freeze.h - the freeze context and path freezing (grant-language.md §4).
 *
 * A path word from a grant file is frozen once, at compile time:
 *   1. expand sigils (~, ~/x, ~user[/x], xdg:NAME[/x], cwd:[/x], tempdir:[/x]);
 *   2. lex (collapse //, ., apply .. lexically; .. above / is an error);
 *   3. canonicalise: host target resolves symlinks of the longest existing
 *      prefix; offline targets apply the alias table instead and never touch
 *      the local filesystem;
 * and keeps both spellings: `path` (after 2) and `real` (after 3).
 *
 * Ownership: grant_context owns its strings; gk_fpath owns path and real;
 * a gk_resolve_cache belongs to whoever declared it (one compile, one
 * projection), is passed explicitly and freed with gk_resolve_cache_free:
 * no resolution state is global or per thread.
 */
#ifndef GK_FREEZE_H
#define GK_FREEZE_H

#include "common/diag.h"
#include "common/pathmap.h"

enum gk_xdg { GK_XDG_CONFIG, GK_XDG_DATA, GK_XDG_CACHE, GK_XDG_STATE, GK_XDG_BIN, GK_XDG_COUNT };

struct grant_context {
    grant_target target;  /* GRANT_TARGET_HOST resolves against this machine */
    char *home, *user, *cwd, *tempdir, *path;
    char *xdg[GK_XDG_COUNT]; /* absolute, resolved (defaults under home) */
    bool implicit;
    char *policy_path;       /* ':'-separated dirs for non-./ includes */
    /* Which values were set explicitly (flags), as opposed to defaults from
     * the environment: a compiled IR read together with explicit values
     * that disagree with its context is an error. */
    unsigned explicit_mask;
    /* Ambient host inputs, read once with the defaults so that no later
     * stage reads the environment (the audit's socket scan starts here).
     * Never part of the IR or its context check; NULL when unset. */
    char *runtime_dir;   /* XDG_RUNTIME_DIR */
    char *ssh_auth_sock; /* SSH_AUTH_SOCK */
    char *docker_host;   /* DOCKER_HOST */
    unsigned uid;        /* getuid() */
};
#define GK_CTX_BIT(key) (1u << (key))             /* grant_ctx_key */
#define GK_CTX_BIT_TARGET (1u << 8)
#define GK_CTX_BIT_XDG(i) (1u << (9 + (i)))       /* enum gk_xdg */
#define GK_CTX_BIT_IMPLICIT (1u << 15)
/* Not a flag: xdg[i] came from XDG_*_HOME in the environment. Like a flag
 * (GK_CTX_BIT_XDG) it keeps its value when HOME changes later; defaults
 * (neither bit) follow the new home. Never part of the IR context check. */
#define GK_CTX_BIT_XDG_ENV(i) (1u << (16 + (i)))

GK_HIDDEN extern const char *const gk_xdg_names[GK_XDG_COUNT]; /* "config", ... */

/* "linux", "macos", "windows": the host target reports the OS it runs on. */
GK_HIDDEN const char *gk_target_name(const grant_context *ctx);
GK_HIDDEN bool gk_target_is_offline(const grant_context *ctx);
/* Windows 8.3 short names: the first component of path (either separator)
 * shaped like an alias Windows makes for a long name (PROGRA~1,
 * MICROS~2.EXE: up to six characters, '~', digits, an extension of up to
 * three), or NULL; *len is its length. Which long name an alias stands for
 * is the volume's to say (and can be turned off), so an offline policy
 * cannot know it: the windows target refuses such a component in a
 * policy, and the gate denies a query through one (fail closed). */
GK_HIDDEN const char *gk_win_short_name(const char *path, size_t *len);
GK_HIDDEN grant_context *gk_context_copy(const grant_context *ctx);

typedef struct gk_fpath {
    char *path; /* sigils expanded, lexically normal, absolute */
    char *real; /* canonical on the target (symlinks or alias table) */
} gk_fpath;

GK_HIDDEN void gk_fpath_free(gk_fpath *p);
GK_HIDDEN int gk_fpath_cmp(const gk_fpath *a, const gk_fpath *b); /* by real, then path */

/* Resolve an absolute path on this host as the kernel would: each symlink
 * before a following '..', '..' at the root stays there, the missing tail
 * appended lexically. NULL on a symlink loop. For queries (the gate). */
GK_HIDDEN char *gk_resolve_host(const char *abs);
/* The same, but no symlink is followed at or below a prefix for which
 * opaque(prefix, arg) is true: the rest is kept as written (the gate's
 * view of the run's private /tmp, whose host entries the run never sees). */
GK_HIDDEN char *gk_resolve_host_opaque(const char *abs, bool (*opaque)(const char *p, void *arg),
                                       void *arg);
/* The same, remembering which paths exist and are no symlinks, for a scan
 * that resolves many paths under the same directories at one moment (a
 * PATH listing). The cache owns copies of its paths; free it when the scan
 * ends (the filesystem may change after). */
typedef struct gk_resolve_cache {
    gk_pathmap known;   /* exist, and are no symlink */
    gk_pathmap links;   /* symlinks, by id: their targets in link_targets */
    gk_strvec link_targets;
    gk_pathmap absent;  /* do not exist (nor does anything below them) */
    gk_strvec owned;
    /* PATH directories probed often enough get listed once. */
    gk_pathmap dirs;    /* by id: probes[id], listed[id] */
    size_t *probes;
    bool *listed;
    size_t capdirs;
    gk_pathmap entries; /* "DIR/NAME" of every listed directory's entries */
    const gk_pathmap **names; /* by dir id: a caller's listing of it (borrowed), or NULL */
} gk_resolve_cache;
GK_HIDDEN char *gk_resolve_host_cached(const char *abs, gk_resolve_cache *cache);
/* path (no symlink in it) was just seen to exist by the caller (a
 * directory listing's entry that is no link). */
GK_HIDDEN void gk_resolve_cache_note_known(gk_resolve_cache *cache, const char *path);
/* path (no symlink above its last component) was just read as a symlink
 * to target by the caller: the resolution reads it from the cache. */
GK_HIDDEN void gk_resolve_cache_note_link(gk_resolve_cache *cache, const char *path,
                                          const char *target);
GK_HIDDEN void gk_resolve_cache_free(gk_resolve_cache *cache);
/* May dir/name exist? false only when a listing of dir (taken once dir
 * has been asked about often) lacks name; the caller still stats a true. */
GK_HIDDEN bool gk_resolve_cache_may_exist(gk_resolve_cache *cache, const char *dir,
                                          const char *name);

/* dir has just been listed by the caller: names maps every entry's name
 * (dot entries too), and gk_resolve_cache_may_exist answers from it from
 * the first probe on (one reading of a PATH directory per projection).
 * Borrowed: the caller keeps it until it stops using the cache. */
GK_HIDDEN void gk_resolve_cache_listed(gk_resolve_cache *cache, const char *dir,
                                       const gk_pathmap *names);

/* The freezing functions take the cache explicitly (NULL: resolve
 * uncached): a compile owns one (compile.c), so a policy of thousands of
 * paths under a few directories is frozen against one moment's view of the
 * host, and nothing is remembered between compiles or shared between
 * threads. Only host canonicalisation reads it. */

/* Freeze a path word written at loc. On error adds a diagnostic at loc
 * (with a hint: the nearest sigil name, "write ~/x" for a relative path...)
 * and returns -1; on success fills *out and returns 0. A trailing '/' is
 * dropped (the caller remembers dir-ness). */
GK_HIDDEN int gk_freeze_path(const grant_context *ctx, gk_resolve_cache *cache, const char *text,
                             gk_loc loc, grant_diags *diags, gk_fpath *out);

/* Steps 1 and 2 only (exec targets: admission reads spellings); the cache
 * serves the xdg: sigil's inside-home check. */
GK_HIDDEN int gk_freeze_lexical(const grant_context *ctx, gk_resolve_cache *cache,
                                const char *text, gk_loc loc, grant_diags *diags, char **out);

/* Lexical normalisation of an absolute path: returns NULL when .. climbs
 * above the root. */
GK_HIDDEN char *gk_lex_normalize(const char *abs);

/* The windows target's canonical form of a name or path: '\' is '/', and
 * case folded as NTFS compares (see freeze.c; ASCII always, non-ASCII
 * BMP letters by Unicode's simple uppercase mapping). Caller frees. */
GK_HIDDEN char *gk_win_fold(const char *s);

/* Step 3 on its own, for a lexically normal absolute path (uncached: a
 * single query), and with the caller's cache. */
GK_HIDDEN char *gk_canonicalize(const grant_context *ctx, const char *lexical);
GK_HIDDEN char *gk_canonicalize_cached(const grant_context *ctx, const char *lexical,
                                       gk_resolve_cache *cache);

#endif
