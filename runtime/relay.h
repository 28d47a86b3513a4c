/* relay.h - the envelope's end of the network allowlist (network.md §2):
 * part of grantkit-helper (static, libc only). Before the command runs,
 * the helper binds 127.0.0.1 and [::1] (where the envelope has IPv6) on
 * one port of the envelope's own network namespace and hands both
 * listening sockets to the proxy over its control socket (SCM_RIGHTS,
 * with the run's token, which only grantrun and this helper know), then
 * waits for the proxy's "ok". The proxy, on the host side, accepts
 * on them and serves each connection as it serves its unix socket.
 *
 * So the relay runs in no process inside the envelope: the command
 * cannot kill, trace or replace it, and the port stays bound (no
 * SO_REUSEPORT) for the whole run. A failed handoff stops the run before
 * the command starts (fail closed).
 *
 * Ownership: nothing is returned; the helper keeps no descriptor.
 */
#ifndef GK_RELAY_H
#define GK_RELAY_H

/* Bind and hand over. Returns 0, or -errno with *step naming what
 * failed. */
int gk_relay_handoff(unsigned port, const char *token, const char *control_path,
                     const char **step);

#endif
