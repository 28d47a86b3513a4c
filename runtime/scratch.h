/* scratch.h - the scratch tree of a process-isolated run (frame-protocol.md
 * §1, §3a-§3c): the baseline entries a run-request carries, their checks,
 * their materialisation into the child's tmpfs, a snapshot of that tree
 * before and after the command, the diff between the two (a JSON document
 * or a unified diff, cut to a budget), whether the tmpfs filled up, and
 * `grantrun --seed HOSTPATH[=DEST]`, which reads host files into entries.
 *
 * Ownership: a gk_scratch_list owns its entries and each entry its path
 * and bytes (gk_scratch_list_free); gk_scratch_list_add copies what it is
 * given, gk_scratch_list_take takes path and bytes (malloc'd) over. A
 * gk_snapshot owns its nodes (gk_snapshot_free). Every function that can
 * fail returns 0 or a negative errno and, on failure, stores a malloc'd
 * message in *err (which the caller frees; err may be NULL); messages
 * name the offending path and never end in a newline. Strings handed
 * back (*out of gk_scratch_diff) are the caller's. Nothing here prints.
 *
 * Paths are "scratch paths": "/a/b", relative to the scratch root,
 * absolute-looking and normalised (§3a); the root "/" itself is never an
 * entry. Nothing here follows a symlink: every walk opens with
 * O_NOFOLLOW (O_DIRECTORY for directories) relative to a directory fd.
 */
#ifndef GK_SCRATCH_H
#define GK_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

/* ---- baseline entries (run-request baseline.files) */

typedef enum gk_scratch_kind {
    GK_SCRATCH_FILE = 0,
    GK_SCRATCH_DIR = 1,
} gk_scratch_kind;

typedef struct gk_scratch_entry {
    char *path;           /* "/a/b", relative to baseline.root */
    gk_scratch_kind kind;
    unsigned char *bytes; /* file content (NULL when len is 0 or a dir) */
    size_t len;
    int mode;             /* permission bits (<= 01777); -1: 0644 file, 0755 dir */
} gk_scratch_entry;

typedef struct gk_scratch_list {
    gk_scratch_entry *v;
    size_t n, cap;
} gk_scratch_list;

/* Default modes of an entry with mode -1, and of an implied parent. */
#define GK_SCRATCH_FILE_MODE 0644
#define GK_SCRATCH_DIR_MODE 0755

/* Append a copy of path and bytes. */
GK_HIDDEN void gk_scratch_list_add(gk_scratch_list *l, const char *path, gk_scratch_kind kind,
                                   const void *bytes, size_t len, int mode);
/* Append, taking path and bytes (both malloc'd; bytes may be NULL). */
GK_HIDDEN void gk_scratch_list_take(gk_scratch_list *l, char *path, gk_scratch_kind kind,
                                    unsigned char *bytes, size_t len, int mode);
GK_HIDDEN void gk_scratch_list_free(gk_scratch_list *l);
/* "file" / "dir" and back; parse returns -EINVAL for anything else. */
GK_HIDDEN const char *gk_scratch_kind_name(gk_scratch_kind k);
GK_HIDDEN int gk_scratch_kind_parse(const char *s, gk_scratch_kind *out);

/* What a valid list costs on the tmpfs. */
typedef struct gk_scratch_totals {
    uint64_t bytes;   /* sum of the files' lengths */
    uint64_t nodes;   /* entries + implied parents + 1 for the root */
    size_t implied;   /* parents no entry names (created as 0755 dirs) */
} gk_scratch_totals;

/* The §3a rules, in this order per entry (gk_scratch_check_path): the
 * path begins with '/', is not "/" itself, has no empty component ("//",
 * a trailing '/'), no "." or ".." component, at most GK_SCRATCH_MAX_DEPTH
 * components; then the mode is -1 or a permission mode (<= 07777) without
 * set-user-ID/set-group-ID bits, and a dir carries no bytes; then over
 * the list: no duplicate, no entry below a file; then the totals: bytes
 * <= quota_bytes and nodes <= node_limit (0: no limit), both "refused
 * before spawning". Parents need not be listed: a missing one is implied
 * (a 0755 dir) and counted as a node, and so is the tmpfs root, since
 * nr_inodes counts it too: a list that passes always fits the tmpfs's
 * inodes. Bytes are the files' lengths as §3a says; tmpfs allocates
 * pages, so many small files can still fill a quota they fit by length:
 * materialisation then fails with ENOSPC, naming the file. Entries' paths
 * are C strings: a NUL from a decoded JSON string is found by calling
 * gk_scratch_check_path with the decoded length first. totals may be
 * NULL. -EINVAL (a rule) or -ENOSPC (a total). */
GK_HIDDEN int gk_scratch_validate(const gk_scratch_list *l, uint64_t quota_bytes,
                                  uint64_t node_limit, gk_scratch_totals *totals, char **err);
#define GK_SCRATCH_MSG_NUL "contains a NUL byte"

/* The per-path rules alone, on len bytes (a decoded JSON string may hold
 * a NUL): what gk_scratch_validate checks of each path, with the same
 * message. what names the path in it ("baseline path", "seed DEST"). */
GK_HIDDEN int gk_scratch_check_path(const char *what, const char *path, size_t len, char **err);

/* Create every entry (and implied parent) of a list below dirfd, which
 * must be an empty directory (the list is validated again first, without
 * totals: those are the tmpfs's to enforce now): mkdirat/openat with
 * O_NOFOLLOW|O_EXCL|O_CLOEXEC relative to opened parents, short-write
 * loops, exact modes set by fchmod (umask-independent; directories get
 * theirs after their children exist, so a 0555 dir can hold files).
 * Fails on the first error, naming the path (ENOSPC: the tmpfs is full);
 * what was created stays (the tmpfs is thrown away with the run). */
GK_HIDDEN int gk_scratch_materialise(int dirfd, const gk_scratch_list *l, char **err);

/* ---- snapshots */

typedef enum gk_snap_kind {
    GK_SNAP_FILE = 0,
    GK_SNAP_DIR,
    GK_SNAP_SYMLINK,
    GK_SNAP_OTHER,   /* fifo, socket, device: recorded, never opened */
} gk_snap_kind;

typedef struct gk_snap_node {
    char *path;            /* scratch path; the root is not a node */
    gk_snap_kind kind;
    unsigned mode;         /* st_mode & 07777 */
    int64_t mtime_ns;      /* st_mtim as nanoseconds since the epoch */
    uint64_t size;         /* st_size (a symlink: its target's length) */
    unsigned char *bytes;  /* file content, or a symlink's target; NULL if empty */
    bool unreadable;       /* the walk could not open it (EACCES; only
                            * without CAP_DAC_OVERRIDE): a file's size and
                            * mtime are compared instead of its bytes; a
                            * dir's contents are unknown, and the diff
                            * reports nothing below it */
} gk_snap_node;

typedef struct gk_snapshot {
    gk_snap_node *v;       /* sorted by path, bytewise */
    size_t n, cap;
    uint64_t content_bytes; /* sum of the files' sizes read */
} gk_snapshot;

/* Bounds of a walk; a tree beyond them is an error (-E2BIG) naming the
 * path where the walk stopped, never a silently partial snapshot. */
#define GK_SCRATCH_MAX_DEPTH 256
typedef struct gk_snapshot_limits {
    size_t max_nodes;      /* 0: 1 << 20 */
    uint64_t max_bytes;    /* total file content; 0: 1 GiB */
} gk_snapshot_limits;

/* Walk the tree below dirfd (not closed, not moved) without following
 * any symlink, recording every node. lim may be NULL (the defaults). */
GK_HIDDEN int gk_snapshot_take(int dirfd, const gk_snapshot_limits *lim, gk_snapshot *out,
                               char **err);
GK_HIDDEN void gk_snapshot_free(gk_snapshot *s);

/* ---- diffs */

typedef enum gk_diff_format {
    GK_DIFF_JSON = 0,
    GK_DIFF_UNIFIED,
} gk_diff_format;

typedef struct gk_diff_opts {
    gk_diff_format format;
    bool metadata;     /* run.diffMetadata */
    size_t budget;     /* limit on the JSON-escaped size of the result (what
                        * the result's "diff" string costs); 0: none */
} gk_diff_opts;

/* The §3c diff limit. */
#define GK_DIFF_BUDGET ((size_t)24 << 20)

/* Line-diff bounds: past GK_DIFF_MAX_STEPS Myers steps (diagonals visited
 * plus snake lengths, about (N+M)·D) for one file pair, or once the whole
 * diff has spent GK_DIFF_MAX_TOTAL_STEPS, a file's hunk is one replace of
 * everything between its common head and tail (every old line removed,
 * every new one added) instead of a minimal one: still a correct diff,
 * only a longer one. (About 0.2 s for one pair, 1.5 s for a whole diff.) */
#define GK_DIFF_MAX_STEPS ((uint64_t)1 << 24)
#define GK_DIFF_MAX_TOTAL_STEPS ((uint64_t)1 << 27)

/* The changes from before to after. JSON format:
 *   {"changes":[{"kind":K,"path":P,"oldBytes":N,"newBytes":M},...],
 *    "metadataChanges":[{"path":P,"field":F,"old":X,"new":Y},...],
 *    "omitted":N}
 * K: create (absent before), mkdir (a dir absent before), replace (the
 * node's type changed: file<->dir, or to or from a symlink or other),
 * modify (a file's bytes or a symlink's target changed), delete. Paths
 * sorted bytewise, every path of the current tree first, then the
 * deletions; the root never listed. oldBytes/newBytes: a file's size, a
 * symlink target's length, 0 for a dir, other or absence. An entry whose
 * node (the new one, or the old one for a delete) is a symlink or other
 * carries an extra "node":"symlink"|"other" after "path". The walk never
 * follows a symlink, so only the link itself is reported.
 * metadataChanges (only with metadata; paths present with the same type
 * before and after): F "mode" (X, Y the permission bits as integers) or
 * "mtime" (X, Y nanoseconds since the epoch), sorted by path then field.
 * Unified format, per change in the same order: text files (valid UTF-8
 * without NUL) as ---/+++ headers (/dev/null for a creation or deletion)
 * and @@ hunks with 3 lines of context and "\ No newline at end of file";
 * other files "Binary files a/P and b/P differ" (/dev/null for one side);
 * an empty file created or deleted "New empty file b/P" / "Deleted empty
 * file a/P"; a file the snapshot could not read "Files a/P and b/P differ
 * (unreadable)"; paths (and link targets) holding a control character,
 * '"' or '\\' are double-quoted with C escapes, as git does;
 * dirs "New directory b/P" / "Deleted directory a/P"; symlinks
 * "New symlink b/P -> T", "Deleted symlink a/P -> T", "Changed symlink
 * b/P: T1 -> T2"; other nodes "New special file b/P" / "Deleted special
 * file a/P"; a replace is the old node's deletion then the new node's
 * creation; with metadata "Mode of b/P: 0644 -> 0755" and
 * "Mtime of b/P: X -> Y" lines before the path's hunks.
 * Budget: a JSON document is cut by dropping whole entries from the end
 * (metadataChanges first, then changes) and adding "omitted": N (the
 * count of entries left out), so it stays valid JSON; a unified diff is
 * cut before the newline ending its last whole line, followed by the
 * marker "\n[truncated: N bytes omitted]\n" (N: raw diff bytes left out).
 * *cut says whether it was cut (may be NULL). *out is NUL-terminated,
 * *out_len (may be NULL) its length. -ENOBUFS if the budget cannot hold
 * even the empty document or the marker. */
GK_HIDDEN int gk_scratch_diff(const gk_snapshot *before, const gk_snapshot *after,
                              const gk_diff_opts *o, char **out, size_t *out_len, bool *cut,
                              char **err);

/* The unified line diff of two texts alone (what each text file pair
 * gets), headers given; appended to b. max_steps 0: GK_DIFF_MAX_STEPS.
 * Returns the steps spent. For the scratch diff, tests and fuzzing. */
GK_HIDDEN uint64_t gk_diff_text(gk_buf *b, const char *a_name, const char *a, size_t alen,
                            const char *b_name, const char *bb, size_t blen, uint64_t max_steps);

/* ---- the tmpfs */

/* *full: the filesystem of dirfd has no free blocks or no free inodes
 * (statfs), what proves fsQuotaBytes/fsNodeLimit was hit (§4); *what
 * (when not NULL): "inodes" or "blocks", the one exhausted (inodes when
 * both), or NULL when not full. */
GK_HIDDEN int gk_scratch_full(int dirfd, bool *full, const char **what, char **err);

/* ---- seeds (grantrun --seed HOSTPATH[=DEST], cli.md) */

/* Split a --seed argument at its last '=' into host path and DEST (NULL
 * when there is none: the default is "/" + the host path's basename).
 * -EINVAL for an empty host path or DEST. Both out strings are malloc'd. */
GK_HIDDEN int gk_scratch_seed_parse(const char *arg, char **host, char **dest, char **err);

/* Read a host file or directory tree into entries below dest (a scratch
 * path; NULL: the default), appended to into. Refuses (-ELOOP) a host
 * symlink anywhere, the top included, naming it; refuses special files
 * (-EINVAL) and a total content beyond max_bytes (-EFBIG; 0: 1 GiB).
 * The host path's own parents may be symlinks (they are how the user
 * names it); the path itself and everything below it may not, and
 * nothing is opened without O_NOFOLLOW. Modes are the host's & 01777
 * (set-user-ID and set-group-ID bits dropped). Merging with what into already holds: a
 * dir seeded twice merges (the first mode kept); any other path already
 * present, or a path below a file already present, is a conflict
 * (-EEXIST) naming the path and the seed. On failure into is unchanged. */
GK_HIDDEN int gk_scratch_seed_read(const char *host_path, const char *dest, uint64_t max_bytes,
                                   gk_scratch_list *into, char **err);

#endif
