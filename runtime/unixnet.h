/* unixnet.h - the landlock level's way to the network proxy (network.md
 * §2, last item): no namespace, so no relay; the command reaches the
 * proxy through one Unix socket path only, and grantrun decides every
 * connect(2) it makes.
 *
 * The landlock level's third seccomp filter (level.c) answers connect(2)
 * with SECCOMP_RET_USER_NOTIF; the helper loads it with a listener and
 * hands the listener to grantrun over a socket before the command runs
 * (helper.c, --seccomp-notify-fd). The supervisor here, a thread of
 * grantrun, takes each notification and:
 *   - copies the target's address (process_vm_readv), then checks the
 *     notification is still valid (the target still waits in that call);
 *   - only when the copy is an AF_UNIX path exactly equal to the proxy's
 *     path, takes the target's socket (pidfd_getfd: the same open file
 *     description), checks it is an AF_UNIX stream socket and connects it
 *     itself to the proxy's abstract address (grantrun's own constant,
 *     never the target's memory or a path the command could replace);
 *   - answers connect's own result (0 or -errno: EINPROGRESS, EAGAIN stand),
 *     and EACCES for anything else: another path, an abstract or unnamed
 *     address, another family, unreadable memory, a descriptor that is no
 *     AF_UNIX stream socket, a target it may not read.
 * When the supervisor is gone the kernel answers ENOSYS: closed.
 *
 * Ownership: gk_unixnet_start takes sock (closed by the thread once the
 * handoff is over); gk_unixnet_stop ends the thread and frees u.
 */
#ifndef GK_UNIXNET_H
#define GK_UNIXNET_H

#include "common/util.h"

typedef struct gk_unixnet gk_unixnet;

/* Start the supervisor on sock (grantrun's end of the helper's handoff
 * socket): path is what the command connects to, abstract the proxy's
 * abstract name (without its NUL). 0 with *out, or -errno (sock closed). */
GK_HIDDEN int gk_unixnet_start(int sock, const char *path, const char *abstract,
                               gk_unixnet **out);
GK_HIDDEN void gk_unixnet_stop(gk_unixnet *u);

#endif
