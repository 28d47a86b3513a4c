/* placeholders.h - the lifecycle of the host mountpoints a run's masks
 * need (backends.md: an absent denied or readonly name under a write
 * region is masked, and the mask needs a mountpoint on the host).
 *
 * One lock per user (a file in the user's grantkit runtime directory,
 * grantrun(1) "Placeholders") is also the record of what grantrun made:
 *   1. before the plan is built, a shared lock, held for the whole run
 *      (no other descriptor or process gets it: close-on-exec);
 *   2. after the plan, grantrun itself creates the placeholders (walking
 *      from / with O_NOFOLLOW) and appends each one's identity to the
 *      record before bwrap starts;
 *   3. after the envelope has ended, the run that gets the lock exclusive
 *      without waiting (no envelope of this user is up then) removes every
 *      recorded placeholder that is still the one grantrun made and still
 *      empty, deepest first, and rewrites the record. A killed run's
 *      leftovers are removed by the next run that ends alone.
 * No run removes what another envelope masks, and nothing a user made.
 *
 * Ownership: a gk_placeholders owns its descriptor and strings
 * (gk_placeholders_release closes and frees them).
 */
#ifndef GK_PLACEHOLDERS_H
#define GK_PLACEHOLDERS_H

#include "backends/backend.h"
#include "common/util.h"

typedef struct gk_placeholders {
    int lock_fd; /* the lock and record, -1 without one */
    char *dir;   /* the runtime directory that holds it */
} gk_placeholders;

/* The user's grantkit runtime directory (grantrun(1) "Placeholders"),
 * made if missing: an O_PATH descriptor of it and, unless path is NULL,
 * its canonical path in *path (the caller frees it), or -errno when none
 * is ours alone. It also
 * holds auto's remembered probe answer (probe_memo.h). */
GK_HIDDEN int gk_runtime_dir(char **path);
/* 1. The shared lock (waits while a run removes placeholders, at most
 * 30 s). Returns 0, or -errno with lock_fd -1: -ETIMEDOUT when a run held
 * it exclusive all that time, -ESTALE when the runtime directory's record
 * is not a file of ours or keeps being moved off its name (a launcher
 * refuses to run on either: another envelope would not see this one);
 * otherwise there is no usable runtime directory, and this run creates
 * and removes nothing (bwrap makes what it needs, and it stays). */
GK_HIDDEN int gk_placeholders_lock(gk_placeholders *ph);
/* Is the held lock still the record the runtime directory names (true
 * without a lock)? Asked again once the placeholders are made: a record
 * moved aside since would let another side's cleanup remove them. */
GK_HIDDEN bool gk_placeholders_still_held(const gk_placeholders *ph);
/* The runtime directory, masked in the envelope where a mount of the plan
 * shows it (the command must not unlink the lock): bwrap options for the
 * launcher's slot. */
GK_HIDDEN void gk_placeholders_mask(const gk_placeholders *ph, const gk_bwrap_plan *plan,
                                    gk_strvec *slot);
/* 2. Create and record the plan's placeholders (those already there, made
 * by a concurrent run, are that run's record). */
GK_HIDDEN void gk_placeholders_make(gk_placeholders *ph, const gk_bwrap_plan *plan);
/* 3. After the envelope: remove if last, then drop the lock. */
GK_HIDDEN void gk_placeholders_release(gk_placeholders *ph);

#endif
