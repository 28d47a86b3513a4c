/* testutil.h - helpers shared by the Check suites.
 *
 * Ownership: every char * returned is malloc'd (free() it); gk_test_files
 * returns a gk_strvec the caller frees with gk_strvec_free.
 */
#ifndef GK_TESTUTIL_H
#define GK_TESTUTIL_H

#include <check.h>
#include "grant/grant.h"
#include "common/util.h"

/* GK_SRCDIR / GK_BUILDDIR from `make check`, else the usual places. */
const char *gk_test_srcdir(void);
const char *gk_test_builddir(void);
/* srcdir-relative path made absolute. */
char *gk_test_path(const char *rel);
/* Whole file (NULL if unreadable). */
char *gk_test_read(const char *path, size_t *len);
/* Write text to path with mode (created or truncated); fails the test on
 * any error. */
void gk_test_write(const char *path, const char *text, unsigned mode);
/* Every file below dir (recursive) whose name ends in suffix, sorted. */
gk_strvec gk_test_files(const char *dir, const char *suffix);
/* The fixed offline context of the golden tests: --target linux,
 * home /home/u, user u, cwd /w, tempdir /tmp, path /usr/bin:/bin,
 * policy path GK_SRCDIR/tests/data/policy-path. */
grant_context *gk_test_context_linux(void);
/* Every diagnostic rendered, joined by newlines (no trailing newline). */
char *gk_test_render_diags(const grant_diags *d);
/* Run argv (argv[0] a path), feeding stdin_data (may be NULL), capturing
 * stdout and stderr. Returns the exit status, 128+N for a signal. */
int gk_test_run(char *const argv[], const char *stdin_data, char **out, char **err);
/* Run a suite with CK_NORMAL output; returns the process exit status. */
int gk_test_main(Suite *s);

#endif
