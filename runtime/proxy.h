/* proxy.h - the network allowlist's proxy on the host side of the
 * envelope (network.md §2): HTTP CONNECT, absolute-form HTTP forwarding
 * and SOCKS5 (told apart by the first byte, 0x05) on one unix socket;
 * each connection and each plain-HTTP request decided on its own by a
 * decision function (the gate's connect answer); a name resolved once
 * and the connection pinned to an address of that answer, with the
 * refused ranges (loopback, private, link-local, CGNAT, multicast,
 * unspecified, documentation, IPv4-mapped IPv6, 169.254.169.254) never
 * reached through a name, only by a destination asked as the address
 * (which only a literal-address rule allows); bounded (16 KiB header: 431, 256
 * concurrent connections: 503 or SOCKS reply 0x01, 300 s idle, 5 s DNS);
 * every decision recorded (at most GK_NET_RECORDS, then counted).
 *
 * The proxy runs in a process of its own (libevent: bufferevents, evdns),
 * forked from grantrun's: it dies with grantrun (PR_SET_PDEATHSIG), keeps
 * nothing between runs, and writes its records into memory shared with
 * the parent, so they survive its end however it comes.
 *
 * Ownership: a gk_proxy is the caller's until gk_proxy_stop, which frees
 * it; a gk_net_log owns its records (gk_net_log_free); a gk_net_decision
 * owns its rule (the decision function fills it, the proxy frees it).
 */
#ifndef GK_PROXY_H
#define GK_PROXY_H

#include "common/util.h"
#include "common/json.h"

#define GK_NET_RECORDS 1000     /* decisions kept; more are counted */
#define GK_NET_MAX_HEADER 16384 /* request header bound: 431 beyond it */
#define GK_NET_MAX_CONNS 256    /* concurrent connections: 503 beyond */
#define GK_NET_IDLE_S 300       /* no byte either way for this long: closed */
#define GK_NET_DNS_S 5          /* a name not resolved in this time: refused */

typedef struct gk_net_decision {
    bool allowed;
    char *rule; /* the deciding rule as a person reads it, or why none */
} gk_net_decision;

/* Decide a destination as asked (a name, or an address without brackets)
 * and a port. Returns 0 with *out filled, or -errno (refused). Called in
 * the proxy's process. */
typedef int (*gk_net_decide_fn)(void *ctx, const char *host, unsigned port,
                                gk_net_decision *out);

typedef struct gk_net_record {
    char *host;    /* as asked */
    unsigned port;
    char *address; /* the pinned address, or NULL (refused before, or none) */
    bool allowed;
    char *rule;
} gk_net_record;

typedef struct gk_net_log {
    gk_net_record *v;
    size_t n;
    unsigned long long omitted;
    int ended; /* the proxy's wait status when it ended before the run did, else 0 */
} gk_net_log;

typedef struct gk_proxy gk_proxy;

typedef struct gk_proxy_opts {
    const char *socket;  /* the unix socket to bind and serve (must not exist) */
    const char *control; /* the control socket of the one handoff (relay.h), or NULL */
    const char *token;   /* what that handoff must carry: a secret of this run */
    bool unlink_after;   /* remove both paths once handed off (the envelope keeps its
                          * binds of them; no other run can find them) */
    gk_net_decide_fn decide;
    void *ctx;
    /* Also listen on this abstract address (the name without its leading
     * NUL), or NULL: the landlock level's supervisor connects the
     * command's sockets there (unixnet.h), through no path a command
     * could replace. */
    const char *abstract;
} gk_proxy_opts;

/* Bind the sockets and fork the proxy serving them. Returns 0 with *out,
 * or -errno (nothing runs). */
GK_HIDDEN int gk_proxy_start(const gk_proxy_opts *o, gk_proxy **out);
/* End the proxy, wait for it, and move its records into *log (may be
 * NULL); frees p. */
GK_HIDDEN void gk_proxy_stop(gk_proxy *p, gk_net_log *log);

/* Serve already listening sockets (listen_fd, and also_fd when >= 0) in
 * this process until killed (what the forked proxy runs). Returns -errno
 * when the event loop cannot start. */
GK_HIDDEN int gk_proxy_serve(int listen_fd, int also_fd, int ctl_fd, const gk_proxy_opts *o,
                             void *shared_log);

/* Is an address (text, no brackets) in a range a name pattern may not
 * reach? Sets *why to the range's name. */
GK_HIDDEN bool gk_net_address_refused(const char *address, const char **why);

GK_HIDDEN void gk_net_log_free(gk_net_log *log);
/* {"connections":[{"host","port","address","verdict","rule"}...],"omitted":N} */
GK_HIDDEN void gk_net_log_json(const gk_net_log *log, gk_json_out *j);

#endif
