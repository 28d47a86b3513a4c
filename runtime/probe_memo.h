/* probe_memo.h - --level auto's probe answer, remembered when it is yes
 * (grantrun(1), LEVELS OF CONFINEMENT).
 *
 * The probe costs every auto run a fork and five or six new namespaces:
 * about 1 ms of wall time and several of CPU on the other core, more than
 * the rest of grantrun's own work for a small policy. Its yes depends on
 * the host and on the caller, not on the run, so it is kept, in the user's
 * runtime directory (placeholders.h), under a key of everything that
 * decides it: the boot, this process's namespaces, credentials,
 * capabilities, seccomp and no_new_privs state and LSM label, and the
 * namespace sysctls. A remembered yes older than GK_PROBE_MEMO_SECONDS,
 * or under another key, is not used.
 *
 * A no is never kept. A remembered yes can only make a run try the
 * namespaces level; if bwrap then gives up before anything ran (a change
 * the key does not see: a seccomp filter's contents, SELinux policy),
 * gk_level_run asks the probe again and, when it says no, forgets the
 * memo and chooses as auto would have. Never less confinement; a forged
 * memo costs what the probe costs.
 *
 * Ownership: a key is a heap string the caller frees.
 */
#ifndef GK_PROBE_MEMO_H
#define GK_PROBE_MEMO_H

#include "common/util.h"

#define GK_PROBE_MEMO_SECONDS 600

/* This process's key, or NULL when a part cannot be read (then nothing is
 * remembered or used). */
GK_HIDDEN char *gk_probe_memo_key(void);
/* The age in seconds of a yes remembered under key, for a probe with a
 * network namespace when netns (one with a network namespace answers
 * for one without too), or -1 when there is none to use. */
GK_HIDDEN long gk_probe_memo_age(const char *key, bool netns);
/* Remember a yes (best effort: an unwritable runtime directory keeps
 * nothing). */
GK_HIDDEN void gk_probe_memo_store(const char *key, bool netns);
/* Forget every remembered yes. */
GK_HIDDEN void gk_probe_memo_forget(void);

#endif
