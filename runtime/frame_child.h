/* frame_child.h - the child side of the frame protocol
 * (`grantrun --frame-child --bwrap PATH`, frame-protocol.md §1): read and
 * check one run-request from fd 0, set up the scratch tree in a user and
 * mount namespace of its own, run the command in the envelope
 * (launch.h) with its output captured, classify, diff, and write one
 * run-result to fd 1.
 *
 * Ownership: nothing is handed back; everything the run made is freed
 * (the scratch tmpfs goes with the child's mount namespace).
 */
#ifndef GK_FRAME_CHILD_H
#define GK_FRAME_CHILD_H

#include "runtime/frame.h"

/* The whole child; returns its exit status (0 once a result was written,
 * 1 when not even that was possible). helper: the Landlock helper.
 * scratch_dir: the empty directory (of this user, under /tmp) the parent
 * made for the scratch's mountpoint and removes after the child; NULL:
 * the child makes one and removes it itself (when it gets to). */
GK_HIDDEN int gk_frame_child_main(const char *bwrap, const char *helper,
                                  const char *scratch_dir);

#endif
