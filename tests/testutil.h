/* testutil.h - helpers shared by the Check suites.
 *
 * Ownership: every char * returned is malloc'd (free() it); gk_test_files
 * returns a gk_strvec the caller frees with gk_strvec_free.
 */
#ifndef GK_TESTUTIL_H
#define GK_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <sys/types.h>
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
/* Copy from to to (created or truncated) with mode; fails the test on any
 * error. */
void gk_test_copy(const char *from, const char *to, unsigned mode);
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
/* Golden files: the one helper every suite compares its goldens with.
 * GK_REGEN=1 in the environment (`GK_REGEN=1 make check`) rewrites every
 * golden from the current output instead of comparing (its directory is
 * created if missing); review the diff before committing it. A second run
 * without it must pass, and regenerating twice changes nothing. */
bool gk_test_regen(void);
/* Compare len bytes of got with the file at path, byte for byte, failing
 * the test with the first difference (line, byte, both sides); under
 * GK_REGEN=1 write them to path instead. got NULL: no golden may exist at
 * path (GK_REGEN=1 removes one). */
void gk_test_golden(const char *path, const char *got, size_t len);
/* The same for a NUL-terminated text. */
void gk_test_golden_text(const char *path, const char *got);
/* The unprivileged user the runtime suites also run as: the caller when
 * it is not root; run as root, the system user gk-escape (made with
 * useradd when missing). false when none can be had. */
#define GK_TEST_USER "gk-escape"
bool gk_test_user(uid_t *uid, gid_t *gid);
/* Push the argv prefix that runs what follows as uid and gid, with no
 * supplementary groups (setpriv executes the rest in place). */
void gk_test_setpriv(gk_strvec *v, uid_t uid, gid_t gid);
/* Run a suite with CK_NORMAL output; returns the process exit status. */
int gk_test_main(Suite *s);

#endif
