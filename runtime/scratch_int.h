/* scratch_int.h - what the scratch module's files (scratch.c, snapshot.c,
 * diff.c, seed.c) share; not an interface (scratch.h is).
 *
 * Ownership: nothing here allocates except gk_scratch_fail's *err.
 */
#ifndef GK_SCRATCH_INT_H
#define GK_SCRATCH_INT_H

#include "runtime/scratch.h"

/* Store a formatted message in *err (if err) and return rc. */
GK_HIDDEN int gk_scratch_fail(char **err, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Path order: '/' below every other byte, so descendants follow their
 * ancestor directly. */
GK_HIDDEN int gk_scratch_path_cmp(const char *a, const char *b);
/* anc is a proper ancestor of p ("" is the root's). */
GK_HIDDEN bool gk_scratch_is_ancestor(const char *anc, const char *p);
/* Number of components. */
GK_HIDDEN size_t gk_scratch_depth(const char *p);
/* write() until done; EINTR retried. 0 or -errno. */
GK_HIDDEN int gk_write_all(int fd, const void *data, size_t len);
/* Read an open regular file whole, at most max bytes (-EFBIG beyond). */
GK_HIDDEN int gk_scratch_read_fd(int fd, uint64_t max, unsigned char **out, size_t *len);

#endif
