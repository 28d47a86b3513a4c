/* relay.h - the envelope's end of the network allowlist (network.md §2):
 * part of grantkit-helper (static, libc only). Listens on 127.0.0.1 and
 * [::1] (where the envelope has IPv6) on one port and forwards each
 * connection to the proxy's unix socket, bound into the envelope.
 *
 * The helper binds before the command runs (so the port is the relay's
 * and a connection made at once waits in the backlog), then forks the
 * relay twice over (it is the envelope's init's child, not the
 * command's) and not dumpable. The command can still kill it (the same
 * user): then it has no network at all, which fails closed.
 *
 * Ownership: nothing is returned; the relay process owns its sockets.
 */
#ifndef GK_RELAY_H
#define GK_RELAY_H

/* Bind and start the relay. Returns 0, or -errno with *step naming what
 * failed (the helper then reports it and runs nothing). */
int gk_relay_start(unsigned port, const char *socket_path, const char **step);

#endif
