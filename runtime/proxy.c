/* proxy.c - the allowlist proxy (see proxy.h).
 *
 * libevent rather than a hand-written loop: bufferevents give buffered,
 * backpressured sockets with timeouts, and evdns a resolver that is
 * asynchronous (getaddrinfo(3) would block every connection behind one
 * slow name) and reads the host's /etc/hosts and resolv.conf.
 *
 * One connection moves through: the head (HTTP request head, or a SOCKS5
 * greeting and request), the decision, the resolution (names only), the
 * connect to the pinned address, then a tunnel both ways. Plain HTTP is
 * forwarded one request per connection: the request goes upstream with
 * "Connection: close" and the response comes back with it, so a client
 * opens a new proxy connection for its next request (a redirect hop
 * included) and that one is decided on its own; whatever else it sends on
 * the old one still reaches only the host already decided.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/proxy.h"
#include "runtime/syscalls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>


/* Connections past the bound still get their status (503, SOCKS 0x01);
 * past this many more they are closed at once. */
#define OVERFLOW_SLOTS 128
#define RESPONSE_HEAD_MAX 65536
#define GK_STR_(x) #x
#define GK_STR(x) GK_STR_(x)
#define GK_NET_DNS_RESOLVER_S 7
#define TUNNEL_HIGH (1u << 20) /* buffered towards one side: stop reading the other */
#define TUNNEL_CHUNK (256u << 10)

/* ---- the decision record, in memory shared with grantrun ------------- */

typedef struct shared_rec {
    char host[256];
    char address[64];
    char rule[512];
    unsigned port;
    bool allowed, has_address;
} shared_rec;

typedef struct shared_log {
    unsigned n;
    unsigned long long omitted;
    shared_rec rec[GK_NET_RECORDS];
} shared_log;

static void copy_bounded(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

static void record(shared_log *log, const char *host, unsigned port, const char *address,
                   bool allowed, const char *rule)
{
    if (!log)
        return;
    if (log->n >= GK_NET_RECORDS) {
        log->omitted++;
        return;
    }
    shared_rec *r = &log->rec[log->n];
    copy_bounded(r->host, sizeof(r->host), host);
    copy_bounded(r->address, sizeof(r->address), address);
    copy_bounded(r->rule, sizeof(r->rule), rule);
    r->port = port;
    r->allowed = allowed;
    r->has_address = address != NULL;
    __atomic_store_n(&log->n, log->n + 1, __ATOMIC_RELEASE);
}

/* ---- refused ranges --------------------------------------------------- */

static bool v4_refused(uint32_t a, const char **why)
{
    static const struct {
        uint32_t net;
        int bits;
        const char *why;
    } ranges[] = {
        {0x00000000, 8, "unspecified"},      {0x0a000000, 8, "private"},
        {0x64400000, 10, "CGNAT"},           {0x7f000000, 8, "loopback"},
        {0xa9fea9fe, 32, "cloud metadata"},  {0xa9fe0000, 16, "link-local"},
        {0xac100000, 12, "private"},         {0xc0000000, 24, "IETF protocol"},
        {0xc0000200, 24, "documentation"},   {0xc0a80000, 16, "private"},
        {0xc6120000, 15, "benchmarking"},    {0xc6336400, 24, "documentation"},
        {0xcb007100, 24, "documentation"},   {0xe0000000, 4, "multicast"},
        {0xf0000000, 4, "reserved"},
    };
    for (size_t i = 0; i < sizeof(ranges) / sizeof(*ranges); i++) {
        uint32_t mask = ranges[i].bits == 32 ? 0xffffffffu : ~(0xffffffffu >> ranges[i].bits);
        if ((a & mask) == ranges[i].net) {
            *why = ranges[i].why;
            return true;
        }
    }
    return false;
}

static bool v6_refused(const unsigned char *b, const char **why)
{
    static const unsigned char zero[16];
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (memcmp(b, zero, 15) == 0) {
        *why = b[15] == 1 ? "loopback" : "unspecified";
        return b[15] <= 1 || (*why = "IPv4-compatible IPv6", true);
    }
    if (memcmp(b, mapped, 12) == 0) {
        *why = "IPv4-mapped IPv6";
        return true;
    }
    if (memcmp(b, zero, 12) == 0) {
        *why = "IPv4-compatible IPv6";
        return true;
    }
    if (memcmp(b, nat64, 12) == 0 || (b[0] == 0x20 && b[1] == 0x02)) {
        /* NAT64 and 6to4 carry an IPv4 address: judged as that one. */
        const unsigned char *v4 = b[0] == 0x20 ? b + 2 : b + 12;
        return v4_refused((uint32_t)v4[0] << 24 | (uint32_t)v4[1] << 16 | (uint32_t)v4[2] << 8 | v4[3],
                          why);
    }
    if ((b[0] & 0xfe) == 0xfc)
        return *why = "private (unique local)", true;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
        return *why = "link-local", true;
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
        return *why = "site-local", true;
    if (b[0] == 0xff)
        return *why = "multicast", true;
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
        return *why = "documentation", true;
    if (b[0] == 0x3f && b[1] == 0xff && (b[2] & 0xf0) == 0)
        return *why = "documentation", true;
    if (b[0] == 0x01 && b[1] == 0 && memcmp(b + 2, zero, 6) == 0)
        return *why = "discard", true;
    return false;
}

bool gk_net_address_refused(const char *address, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, address, &a4) == 1)
        return v4_refused(ntohl(a4.s_addr), why);
    if (inet_pton(AF_INET6, address, &a6) == 1)
        return v6_refused(a6.s6_addr, why);
    *why = "not an address";
    return true;
}

/* ---- connections ------------------------------------------------------ */

typedef struct proxy {
    struct event_base *base;
    struct evdns_base *dns;
    gk_net_decide_fn decide;
    void *ctx;
    shared_log *log;
    size_t active;
    const gk_proxy_opts *opts;
    int ctl_fd;              /* the handoff socket, until the one handoff */
    struct event *ctl_event;
    struct evconnlistener *handed[2]; /* the envelope's loopback listeners */
    struct evconnlistener *also;      /* the abstract listener (landlock level) */
} proxy;

enum kind { K_HTTP, K_CONNECT, K_FORWARD, K_SOCKS };
enum state { S_HEAD, S_SOCKS_GREET, S_SOCKS_REQ, S_RESOLVE, S_CONNECT, S_UP_HEAD, S_TUNNEL,
             S_FLUSH };

/* An address of the one answer, in the answer's order. */
#define MAX_CANDIDATES 8
typedef struct candidate {
    struct sockaddr_storage ss;
    socklen_t len;
    char text[64];
} candidate;

typedef struct conn {
    proxy *px;
    struct bufferevent *cl, *up;
    enum kind kind;
    enum state state;
    bool over; /* past the concurrency bound: answered, never connected */
    bool cl_eof, up_eof, cl_shut, up_shut;
    char host[256];
    unsigned port;
    char *uphead; /* forwarding: the request head as it goes upstream */
    char *rule;   /* the allowing rule */
    struct evdns_getaddrinfo_request *dnsreq;
    struct event *dnstimer;
    long long last; /* ms: the last byte either way */
    candidate cand[MAX_CANDIDATES];
    size_t ncand, icand;
    int connect_err;
} conn;

/* Called on every read and write: the coarse clock (no TSC read; a few
 * milliseconds of resolution are plenty for a 300 s bound). */
static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conn_free(conn *c)
{
    if (c->dnsreq) {
        struct evdns_getaddrinfo_request *r = c->dnsreq;
        c->dnsreq = NULL;
        evdns_getaddrinfo_cancel(r); /* its callback ignores a cancel */
    }
    if (c->dnstimer)
        event_free(c->dnstimer);
    if (c->cl)
        bufferevent_free(c->cl);
    if (c->up)
        bufferevent_free(c->up);
    c->px->active--;
    free(c->uphead);
    free(c->rule);
    free(c);
}

/* Answer the client and close once the answer is written. */
static void finish_with(conn *c, const char *data, size_t len)
{
    if (c->up) {
        bufferevent_free(c->up);
        c->up = NULL;
    }
    c->state = S_FLUSH;
    /* A client that never reads its answer does not keep its slot. */
    struct timeval idle = {GK_NET_IDLE_S, 0};
    bufferevent_set_timeouts(c->cl, NULL, &idle);
    bufferevent_disable(c->cl, EV_READ);
    bufferevent_enable(c->cl, EV_WRITE);
    bufferevent_write(c->cl, data, len);
}

static void http_status(conn *c, int code, const char *reason, const char *text)
{
    gk_autofree char *body = gk_printf("grantkit proxy: %s\n", text);
    gk_autofree char *msg = gk_printf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
                                      "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                                      code, reason, strlen(body), body);
    finish_with(c, msg, strlen(msg));
}

enum { SOCKS_FAIL = 1, SOCKS_RULESET = 2, SOCKS_NET_UNREACH = 3, SOCKS_HOST_UNREACH = 4,
       SOCKS_REFUSED = 5, SOCKS_TTL = 6, SOCKS_COMMAND = 7, SOCKS_ATYP = 8 };

static void socks_reply(conn *c, int code, bool close_after)
{
    unsigned char r[10] = {5, (unsigned char)code, 0, 1, 0, 0, 0, 0, 0, 0};
    if (close_after)
        finish_with(c, (const char *)r, sizeof(r));
    else
        bufferevent_write(c->cl, r, sizeof(r));
}

/* Refuse: the status the protocol gives (HTTP 403, SOCKS 0x02). */
static void refuse(conn *c, const char *why)
{
    if (c->kind == K_SOCKS) {
        socks_reply(c, SOCKS_RULESET, true);
        return;
    }
    gk_autofree char *text = gk_printf("refused %s:%u (%s)", c->host, c->port, why);
    http_status(c, 403, "Forbidden", text);
}

static void upstream_failed(conn *c, int http, const char *reason, int socks, const char *text)
{
    if (c->kind == K_SOCKS)
        socks_reply(c, socks, true);
    else
        http_status(c, http, reason, text);
}

/* ---- the tunnel ---- */

static void pump(conn *c, struct bufferevent *from, struct bufferevent *to)
{
    struct evbuffer *out = bufferevent_get_output(to);
    evbuffer_add_buffer(out, bufferevent_get_input(from));
    if (evbuffer_get_length(out) >= TUNNEL_HIGH)
        bufferevent_disable(from, EV_READ); /* until `to` drains (on_write) */
    (void)c;
}

/* Both sides ended and everything was written: done. Returns true when
 * c was freed. */
static bool maybe_done(conn *c)
{
    if (c->state != S_TUNNEL && c->state != S_UP_HEAD)
        return false;
    if (c->cl_eof && c->up && !c->up_shut &&
        evbuffer_get_length(bufferevent_get_output(c->up)) == 0) {
        shutdown(bufferevent_getfd(c->up), SHUT_WR);
        c->up_shut = true;
    }
    if (c->up_eof && !c->cl_shut && evbuffer_get_length(bufferevent_get_output(c->cl)) == 0) {
        shutdown(bufferevent_getfd(c->cl), SHUT_WR);
        c->cl_shut = true;
    }
    if (c->cl_shut && (c->up_shut || !c->up) && c->cl_eof && c->up_eof) {
        conn_free(c);
        return true;
    }
    return false;
}

/* ---- connecting ---- */

static void on_up_read(struct bufferevent *bev, void *arg);
static void on_up_write(struct bufferevent *bev, void *arg);
static void on_up_event(struct bufferevent *bev, short what, void *arg);

static void set_idle(struct bufferevent *bev)
{
    struct timeval idle = {GK_NET_IDLE_S, 0};
    bufferevent_set_timeouts(bev, &idle, NULL);
}

/* Connect to the next address of the answer (pinned: never resolved
 * again); when none is left, the client hears why. */
static void connect_next(conn *c)
{
    while (c->icand < c->ncand) {
        const candidate *k = &c->cand[c->icand];
        c->up = bufferevent_socket_new(c->px->base, -1, BEV_OPT_CLOSE_ON_FREE);
        if (!c->up) {
            c->connect_err = ENOMEM;
            break;
        }
        bufferevent_setcb(c->up, on_up_read, on_up_write, on_up_event, c);
        struct timeval idle = {GK_NET_IDLE_S, 0};
        bufferevent_set_timeouts(c->up, NULL, &idle); /* the connect itself */
        c->state = S_CONNECT;
        if (bufferevent_socket_connect(c->up, (const struct sockaddr *)&k->ss, (int)k->len) == 0)
            return;
        c->connect_err = errno;
        bufferevent_free(c->up);
        c->up = NULL;
        c->icand++;
    }
    const char *addr = c->ncand ? c->cand[c->ncand - 1].text : NULL;
    record(c->px->log, c->host, c->port, addr, true, c->rule);
    int err = c->connect_err;
    gk_autofree char *t = gk_printf("cannot connect to %s:%u%s%s%s: %s", c->host, c->port,
                                    addr ? " (" : "", addr ? addr : "", addr ? ")" : "",
                                    strerror(err));
    upstream_failed(c, err == ETIMEDOUT ? 504 : 502,
                    err == ETIMEDOUT ? "Gateway Timeout" : "Bad Gateway",
                    err == ECONNREFUSED  ? SOCKS_REFUSED
                    : err == ENETUNREACH ? SOCKS_NET_UNREACH
                                         : SOCKS_HOST_UNREACH,
                    t);
}

static void add_candidate(conn *c, const char *text, unsigned port);

static bool sockaddr_of(const char *addr, unsigned port, struct sockaddr_storage *ss,
                        socklen_t *len)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        *len = sizeof(*s4);
        return true;
    }
    if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*s6);
        return true;
    }
    return false;
}

static void add_candidate(conn *c, const char *text, unsigned port)
{
    candidate *k = &c->cand[c->ncand];
    if (c->ncand < MAX_CANDIDATES && sockaddr_of(text, port, &k->ss, &k->len)) {
        copy_bounded(k->text, sizeof(k->text), text);
        c->ncand++;
    }
}

static void on_dns(int result, struct evutil_addrinfo *res, void *arg)
{
    if (result == EVUTIL_EAI_CANCEL) {
        if (res)
            evutil_freeaddrinfo(res);
        return; /* the connection is gone (conn_free, or the timer) */
    }
    conn *c = arg;
    c->dnsreq = NULL;
    if (c->dnstimer) {
        event_free(c->dnstimer);
        c->dnstimer = NULL;
    }
    proxy *px = c->px;
    if (result != 0) {
        record(px->log, c->host, c->port, NULL, true, c->rule);
        gk_autofree char *t = gk_printf("cannot resolve %s: %s", c->host,
                                        evutil_gai_strerror(result));
        upstream_failed(c, 502, "Bad Gateway", SOCKS_HOST_UNREACH, t);
        return;
    }
    char first[64] = "";
    const char *first_why = NULL;
    for (struct evutil_addrinfo *ai = res; ai; ai = ai->ai_next) {
        char text[64];
        const void *a = ai->ai_family == AF_INET
                            ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                            : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
        if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
            !evutil_inet_ntop(ai->ai_family, a, text, sizeof(text)))
            continue;
        const char *why = NULL;
        if (gk_net_address_refused(text, &why)) {
            /* A name never reaches these ranges, whatever rule allowed it:
             * only a destination asked as that address (a literal-address
             * rule) does. */
            if (!*first) {
                copy_bounded(first, sizeof(first), text);
                first_why = why;
            }
            continue;
        }
        add_candidate(c, text, c->port);
    }
    evutil_freeaddrinfo(res);
    if (!c->ncand) {
        gk_autofree char *why =
            *first ? gk_printf("%s resolved to %s, a %s address, which only a literal-address "
                               "pattern may reach",
                               c->host, first, first_why)
                   : gk_printf("%s resolved to no usable address", c->host);
        record(px->log, c->host, c->port, *first ? first : NULL, false, why);
        refuse(c, why);
        return;
    }
    connect_next(c); /* recorded once connected, or when none could be */
}

static void on_dns_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    conn *c = arg;
    if (c->dnsreq) {
        struct evdns_getaddrinfo_request *r = c->dnsreq;
        c->dnsreq = NULL;
        evdns_getaddrinfo_cancel(r);
    }
    record(c->px->log, c->host, c->port, NULL, true, c->rule);
    gk_autofree char *t = gk_printf("resolving %s took over %d s", c->host, GK_NET_DNS_S);
    upstream_failed(c, 504, "Gateway Timeout", SOCKS_HOST_UNREACH, t);
}

/* The destination is known: decide, then resolve or connect. */
static void decide_and_go(conn *c)
{
    proxy *px = c->px;
    if (c->over) {
        if (c->kind == K_SOCKS)
            socks_reply(c, SOCKS_FAIL, true);
        else
            http_status(c, 503, "Service Unavailable",
                        "too many connections (at most " GK_STR(GK_NET_MAX_CONNS) " at once)");
        return;
    }
    gk_net_decision d = {0};
    if (px->decide(px->ctx, c->host, c->port, &d) < 0) {
        d.allowed = false;
        free(d.rule);
        d.rule = gk_strdup("the policy could not decide");
    }
    if (!d.allowed) {
        record(px->log, c->host, c->port, NULL, false, d.rule);
        refuse(c, d.rule ? d.rule : "no allow rule matches");
        free(d.rule);
        return;
    }
    c->rule = d.rule;
    add_candidate(c, c->host, c->port);
    if (c->ncand) {
        connect_next(c); /* an address asked for: that one, no resolution */
        return;
    }
    c->state = S_RESOLVE;
    bufferevent_disable(c->cl, EV_READ);
    struct timeval t = {GK_NET_DNS_S, 0};
    c->dnstimer = evtimer_new(px->base, on_dns_timeout, c);
    evtimer_add(c->dnstimer, &t);
    struct evutil_addrinfo hints = {0};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    /* on_dns may run before this returns (/etc/hosts); it never frees c. */
    struct evdns_getaddrinfo_request *r = evdns_getaddrinfo(px->dns, c->host, NULL, &hints,
                                                            on_dns, c);
    if (c->state == S_RESOLVE && !c->dnsreq)
        c->dnsreq = r;
}

/* ---- parsing ---- */

/* HOST[:PORT] or [V6][:PORT]; a missing port is dflt (0: required). */
static bool parse_authority(const char *s, size_t n, unsigned dflt, char *host, size_t cap,
                            unsigned *port)
{
    const char *h = s, *colon = NULL;
    size_t hl;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close)
            return false;
        h = s + 1;
        hl = (size_t)(close - h);
        size_t rest = n - (size_t)(close - s) - 1;
        if (rest && close[1] != ':')
            return false;
        colon = rest ? close + 1 : NULL;
        struct in6_addr a6;
        char tmp[64];
        if (hl >= sizeof(tmp))
            return false;
        memcpy(tmp, h, hl);
        tmp[hl] = '\0';
        if (inet_pton(AF_INET6, tmp, &a6) != 1)
            return false;
    } else {
        colon = memrchr(s, ':', n);
        hl = colon ? (size_t)(colon - s) : n;
        if (memchr(s, ':', hl))
            return false; /* an IPv6 address must be bracketed */
    }
    if (hl == 0 || hl >= cap)
        return false;
    for (size_t i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch <= ' ' || ch >= 0x7f || ch == '/' || ch == '@' || ch == '\\')
            return false;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (!colon) {
        *port = dflt;
        return dflt != 0;
    }
    const char *p = colon + 1, *end = s + n;
    unsigned v = 0;
    if (p == end || end - p > 5)
        return false;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (unsigned)(*p - '0');
    }
    if (v == 0 || v > 65535)
        return false;
    *port = v;
    return true;
}

/* Hop-by-hop headers the proxy replaces with its own "Connection: close". */
static bool hop_by_hop(const char *line, size_t n)
{
    static const char *const names[] = {"connection", "proxy-connection", "keep-alive",
                                        "proxy-authorization"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        size_t k = strlen(names[i]);
        if (n > k && line[k] == ':' && strncasecmp(line, names[i], k) == 0)
            return true;
    }
    return false;
}

/* The header lines after the first, without the hop-by-hop ones, then
 * "Connection: close" and the blank line. */
static void rewrite_headers(gk_buf *out, const char *lines)
{
    for (const char *l = lines; *l && !(l[0] == '\r' && l[1] == '\n');) {
        const char *e = strstr(l, "\r\n");
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (!hop_by_hop(l, n)) {
            gk_buf_add(out, l, n);
            gk_buf_puts(out, "\r\n");
        }
        l += n + (e ? 2 : 0);
    }
    gk_buf_puts(out, "Connection: close\r\n\r\n");
}

static void http_head(conn *c, char *head)
{
    char *eol = strstr(head, "\r\n");
    *eol = '\0';
    char *sp1 = strchr(head, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 || strchr(sp2 + 1, ' ')) {
        http_status(c, 400, "Bad Request", "not an HTTP/1 request line");
        return;
    }
    const char *method = head, *target = sp1 + 1, *version = sp2 + 1;
    *sp1 = *sp2 = '\0';
    if (strcmp(method, "CONNECT") == 0) {
        c->kind = K_CONNECT;
        if (!parse_authority(target, strlen(target), 0, c->host, sizeof(c->host), &c->port)) {
            http_status(c, 400, "Bad Request", "CONNECT needs HOST:PORT");
            return;
        }
        decide_and_go(c);
        return;
    }
    if (strncasecmp(target, "http://", 7) != 0) {
        http_status(c, 400, "Bad Request",
                    strncasecmp(target, "https://", 8) == 0
                        ? "https:// goes through CONNECT"
                        : "a proxy request needs an absolute http:// URL or CONNECT");
        return;
    }
    const char *auth = target + 7;
    size_t an = strcspn(auth, "/?#");
    if (!parse_authority(auth, an, 80, c->host, sizeof(c->host), &c->port)) {
        http_status(c, 400, "Bad Request", "bad host in the request URL");
        return;
    }
    c->kind = K_FORWARD;
    gk_buf up = {0};
    const char *path = auth + an;
    gk_buf_printf(&up, "%s %s%s %s\r\n", method, *path == '/' ? "" : "/", path, version);
    rewrite_headers(&up, eol + 2);
    c->uphead = gk_buf_steal(&up, NULL);
    decide_and_go(c);
}

/* Returns false when the connection was answered (or needs more bytes). */
static void socks_step(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->cl);
    size_t len = evbuffer_get_length(in);
    unsigned char b[4 + 1 + 255 + 2];
    if (c->state == S_SOCKS_GREET) {
        if (len < 2)
            return;
        evbuffer_copyout(in, b, 2);
        size_t need = 2 + (size_t)b[1];
        if (len < need)
            return;
        evbuffer_remove(in, b, need);
        bool noauth = memchr(b + 2, 0, b[1]) != NULL;
        unsigned char reply[2] = {5, noauth ? 0 : 0xff};
        if (!noauth) {
            finish_with(c, (const char *)reply, 2);
            return;
        }
        bufferevent_write(c->cl, reply, 2);
        c->state = S_SOCKS_REQ;
        len -= need;
    }
    if (len < 5)
        return;
    evbuffer_copyout(in, b, 5);
    size_t need = b[3] == 1 ? 10 : b[3] == 4 ? 22 : b[3] == 3 ? 7 + (size_t)b[4] : 0;
    if (b[0] != 5 || need == 0) {
        socks_reply(c, SOCKS_ATYP, true);
        return;
    }
    if (len < need)
        return;
    evbuffer_remove(in, b, need);
    if (b[1] != 1) {
        socks_reply(c, SOCKS_COMMAND, true);
        return;
    }
    c->kind = K_SOCKS;
    c->port = (unsigned)b[need - 2] << 8 | b[need - 1];
    if (b[3] == 1)
        inet_ntop(AF_INET, b + 4, c->host, sizeof(c->host));
    else if (b[3] == 4)
        inet_ntop(AF_INET6, b + 4, c->host, sizeof(c->host));
    else {
        size_t hl = b[4];
        for (size_t i = 0; i < hl; i++)
            if (b[5 + i] <= ' ' || b[5 + i] >= 0x7f) {
                socks_reply(c, SOCKS_ATYP, true);
                return;
            }
        memcpy(c->host, b + 5, hl);
        c->host[hl] = '\0';
    }
    if (!*c->host || c->port == 0) {
        socks_reply(c, SOCKS_ATYP, true);
        return;
    }
    decide_and_go(c);
}

/* ---- callbacks ---- */

static void on_cl_read(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    c->last = now_ms();
    struct evbuffer *in = bufferevent_get_input(bev);
    switch (c->state) {
    case S_HEAD: {
        size_t len = evbuffer_get_length(in);
        if (!len)
            return;
        unsigned char first;
        evbuffer_copyout(in, &first, 1);
        if (first == 5) {
            c->kind = K_SOCKS;
            c->state = S_SOCKS_GREET;
            socks_step(c);
            return;
        }
        if (first == 4) {
            /* SOCKS4 cannot carry a name to resolve here: rejected (0x5b)
             * at once rather than left waiting for an HTTP head. */
            static const char rejected[8] = {0, 0x5b};
            finish_with(c, rejected, sizeof(rejected));
            return;
        }
        struct evbuffer_ptr p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
        if ((p.pos < 0 && len > GK_NET_MAX_HEADER) ||
            (p.pos >= 0 && (size_t)p.pos + 4 > GK_NET_MAX_HEADER)) {
            http_status(c, 431, "Request Header Fields Too Large",
                        "the request header is over " GK_STR(GK_NET_MAX_HEADER) " bytes");
            return;
        }
        if (p.pos < 0)
            return;
        gk_autofree char *head = gk_malloc((size_t)p.pos + 5);
        evbuffer_remove(in, head, (size_t)p.pos + 4);
        head[p.pos + 4] = '\0';
        if (memchr(head, '\0', (size_t)p.pos + 4)) {
            http_status(c, 400, "Bad Request", "a NUL byte in the request head");
            return;
        }
        /* Bytes past the head wait in the input until the upstream is up. */
        bufferevent_setwatermark(bev, EV_READ, 0, TUNNEL_HIGH);
        http_head(c, head);
        return;
    }
    case S_SOCKS_GREET:
    case S_SOCKS_REQ:
        socks_step(c);
        return;
    case S_TUNNEL:
    case S_UP_HEAD:
        if (c->up)
            pump(c, c->cl, c->up);
        return;
    default:
        return; /* held until the upstream is connected */
    }
}

static void on_cl_write(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    c->last = now_ms();
    if (c->state == S_FLUSH) {
        if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
            conn_free(c);
        return;
    }
    if (c->up && !c->up_eof && c->state == S_TUNNEL)
        bufferevent_enable(c->up, EV_READ);
    maybe_done(c);
}

/* An idle timeout on one side is the connection's only when the other
 * side was quiet too. Returns true when c was freed. */
static bool idle(conn *c, struct bufferevent *bev)
{
    long long quiet = now_ms() - c->last;
    if (quiet < GK_NET_IDLE_S * 1000LL) {
        /* The other side was busy: wait out the rest of the bound. */
        long long rest = GK_NET_IDLE_S * 1000LL - quiet;
        struct timeval t = {(time_t)(rest / 1000), (suseconds_t)(rest % 1000) * 1000};
        bufferevent_set_timeouts(bev, &t, NULL);
        bufferevent_enable(bev, EV_READ);
        return false;
    }
    conn_free(c);
    return true;
}

static void on_cl_event(struct bufferevent *bev, short what, void *arg)
{
    conn *c = arg;
    if (c->state == S_FLUSH) {
        conn_free(c); /* the answer cannot be delivered */
        return;
    }
    if (what & BEV_EVENT_TIMEOUT) {
        idle(c, bev);
        return;
    }
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
        (c->state == S_TUNNEL || c->state == S_UP_HEAD)) {
        c->cl_eof = true;
        if (c->up)
            pump(c, c->cl, c->up);
        maybe_done(c);
        return;
    }
    conn_free(c); /* an error, or the client left before a tunnel existed */
}

static void on_up_read(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    c->last = now_ms();
    struct evbuffer *in = bufferevent_get_input(bev);
    /* An interim answer (100 Continue, 103) goes on as it is; the final
     * head gets "Connection: close" in place of the hop-by-hop headers. */
    while (c->state == S_UP_HEAD) {
        struct evbuffer_ptr p = evbuffer_search(in, "\r\n\r\n", 4, NULL);
        if (p.pos < 0) {
            if (evbuffer_get_length(in) > RESPONSE_HEAD_MAX)
                http_status(c, 502, "Bad Gateway", "the upstream response head is too large");
            return;
        }
        size_t n = (size_t)p.pos + 4;
        gk_autofree char *head = gk_malloc(n + 1);
        evbuffer_remove(in, head, n);
        head[n] = '\0';
        const char *eol = memmem(head, n, "\r\n", 2);
        bool interim = n > 12 && strncmp(head, "HTTP/1.", 7) == 0 && head[9] == '1' &&
                       strncmp(head + 9, "101", 3) != 0;
        if (interim || memchr(head, '\0', n)) {
            /* (a head with a NUL is passed on untouched, then the rest) */
            bufferevent_write(c->cl, head, n);
            if (!interim)
                c->state = S_TUNNEL;
            continue;
        }
        gk_buf out = {0};
        gk_buf_add(&out, head, (size_t)(eol - head) + 2);
        rewrite_headers(&out, eol + 2);
        bufferevent_write(c->cl, out.data, out.len);
        gk_buf_free(&out);
        c->state = S_TUNNEL;
    }
    if (c->state == S_TUNNEL)
        pump(c, c->up, c->cl);
}

static void on_up_write(struct bufferevent *bev, void *arg)
{
    (void)bev;
    conn *c = arg;
    c->last = now_ms();
    if (!c->cl_eof && (c->state == S_TUNNEL || c->state == S_UP_HEAD))
        bufferevent_enable(c->cl, EV_READ);
    maybe_done(c);
}

static void on_up_event(struct bufferevent *bev, short what, void *arg)
{
    conn *c = arg;
    if (what & BEV_EVENT_CONNECTED) {
        record(c->px->log, c->host, c->port, c->cand[c->icand].text, true, c->rule);
        set_idle(bev);
        /* libevent reads 16 KiB at a time by default: a bulk transfer
         * would cost a loop turn per 16 KiB. */
        bufferevent_set_max_single_read(bev, TUNNEL_CHUNK);
        bufferevent_set_max_single_write(bev, TUNNEL_CHUNK);
        bufferevent_set_max_single_read(c->cl, TUNNEL_CHUNK);
        bufferevent_set_max_single_write(c->cl, TUNNEL_CHUNK);
        bufferevent_setwatermark(bev, EV_WRITE, TUNNEL_HIGH / 4, 0);
        bufferevent_setwatermark(c->cl, EV_WRITE, TUNNEL_HIGH / 4, 0);
        bufferevent_setwatermark(c->cl, EV_READ, 0, 0);
        bufferevent_enable(bev, EV_READ | EV_WRITE);
        if (c->kind == K_CONNECT) {
            static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
            bufferevent_write(c->cl, ok, sizeof(ok) - 1);
            c->state = S_TUNNEL;
        } else if (c->kind == K_SOCKS) {
            socks_reply(c, 0, false);
            c->state = S_TUNNEL;
        } else {
            bufferevent_write(bev, c->uphead, strlen(c->uphead));
            c->state = S_UP_HEAD;
        }
        bufferevent_enable(c->cl, EV_READ);
        pump(c, c->cl, c->up);
        return;
    }
    if (c->state == S_CONNECT) {
        /* This address failed: the next of the same answer. */
        c->connect_err = (what & BEV_EVENT_TIMEOUT) ? ETIMEDOUT : EVUTIL_SOCKET_ERROR();
        if (!c->connect_err)
            c->connect_err = ECONNREFUSED;
        bufferevent_free(c->up);
        c->up = NULL;
        c->icand++;
        connect_next(c);
        return;
    }
    if (what & BEV_EVENT_TIMEOUT) {
        idle(c, bev);
        return;
    }
    if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR)) {
        c->up_eof = true;
        if (c->state == S_UP_HEAD) {
            /* No complete head: pass on what there is. */
            c->state = S_TUNNEL;
        }
        pump(c, c->up, c->cl);
        maybe_done(c);
        return;
    }
    conn_free(c);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
    (void)l, (void)sa, (void)len;
    proxy *px = arg;
    if (px->active >= GK_NET_MAX_CONNS + OVERFLOW_SLOTS) {
        evutil_closesocket(fd);
        return;
    }
    conn *c = gk_calloc(1, sizeof(*c));
    c->px = px;
    c->over = px->active >= GK_NET_MAX_CONNS;
    c->last = now_ms();
    px->active++;
    c->cl = bufferevent_socket_new(px->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->cl) {
        evutil_closesocket(fd);
        px->active--;
        free(c);
        return;
    }
    bufferevent_setcb(c->cl, on_cl_read, on_cl_write, on_cl_event, c);
    set_idle(c->cl);
    bufferevent_enable(c->cl, EV_READ | EV_WRITE);
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
    (void)l, (void)arg; /* EMFILE and the like: the next accept may work */
}

/* The handoff (relay.h): one connection on the control socket brings the
 * envelope's listening sockets (SCM_RIGHTS after "GKH1"); each one that
 * is a listening TCP socket is served like the unix socket. Then the
 * control socket closes: there is one handoff, the helper's, made before
 * the command runs. Answers "ok", or "no" (the helper then runs nothing). */
static void on_ctl(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    proxy *px = arg;
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    struct timeval t = {5, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t));
    char tag[80] = "";
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } cm;
    struct iovec iov = {tag, sizeof(tag)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                       .msg_controllen = sizeof(cm.buf)};
    ssize_t r = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
    int fds[2] = {-1, -1};
    size_t nfds = 0;
    for (struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (h->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                int got;
                memcpy(&got, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
                if (nfds < 2)
                    fds[nfds++] = got;
                else
                    close(got);
            }
    /* "GKH1" and the run's token: another envelope that finds this socket
     * (a shared /tmp) cannot hand its listeners to this run's proxy. */
    const char *token = px->opts->token ? px->opts->token : "";
    size_t tl = strlen(token);
    unsigned char diff = r == (ssize_t)(4 + tl) ? 0 : 1;
    for (size_t i = 0; i < tl && r == (ssize_t)(4 + tl); i++)
        diff |= (unsigned char)(tag[4 + i] ^ token[i]);
    bool ok = r >= 4 && memcmp(tag, "GKH1", 4) == 0 && !diff && nfds > 0;
    for (size_t i = 0; i < nfds && ok; i++) {
        int listening = 0, domain = 0, type = 0;
        socklen_t len = sizeof(int);
        ok = getsockopt(fds[i], SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening &&
             getsockopt(fds[i], SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
             (domain == AF_INET || domain == AF_INET6) &&
             getsockopt(fds[i], SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
    }
    for (size_t i = 0; i < nfds && ok; i++) {
        evutil_make_socket_nonblocking(fds[i]);
        px->handed[i] =
            evconnlistener_new(px->base, on_accept, px, LEV_OPT_CLOSE_ON_FREE, -1, fds[i]);
        ok = px->handed[i] != NULL;
        if (ok) {
            evconnlistener_set_error_cb(px->handed[i], on_accept_error);
            fds[i] = -1;
        }
    }
    for (size_t i = 0; i < nfds; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (send(c, ok ? "ok" : "no", 2, MSG_NOSIGNAL) < 0) {
        /* the helper sees no answer and runs nothing */
    }
    close(c);
    event_free(px->ctl_event);
    px->ctl_event = NULL;
    close(px->ctl_fd);
    px->ctl_fd = -1;
    if (ok && px->opts->unlink_after) {
        unlink(px->opts->socket);
        unlink(px->opts->control);
        /* and their directory when that leaves it empty: a grantrun killed
         * outright leaves nothing behind */
        gk_autofree char *dir = gk_path_parent(px->opts->socket);
        if (dir)
            rmdir(dir);
    }
}

int gk_proxy_serve(int listen_fd, int also_fd, int ctl_fd, const gk_proxy_opts *o,
                   void *shared)
{
    proxy px = {.decide = o->decide, .ctx = o->ctx, .log = shared, .opts = o, .ctl_fd = ctl_fd};
    px.base = event_base_new();
    if (!px.base)
        return -ENOMEM;
    px.dns = evdns_base_new(px.base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
                                         EVDNS_BASE_DISABLE_WHEN_INACTIVE);
    if (!px.dns)
        px.dns = evdns_base_new(px.base, 0); /* no resolv.conf: /etc/hosts only */
    if (!px.dns) {
        event_base_free(px.base);
        return -ENOMEM;
    }
    evdns_base_load_hosts(px.dns, NULL);
    /* The bound is the proxy's own timer (on_dns_timeout); evdns gives up
     * a little later, so a silent resolver always ends in the same 504. */
    evdns_base_set_option(px.dns, "timeout:", GK_STR(GK_NET_DNS_RESOLVER_S));
    evdns_base_set_option(px.dns, "attempts:", "1");
    evutil_make_socket_nonblocking(listen_fd);
    struct evconnlistener *l =
        evconnlistener_new(px.base, on_accept, &px, LEV_OPT_CLOSE_ON_FREE, -1, listen_fd);
    if (!l) {
        evdns_base_free(px.dns, 0);
        event_base_free(px.base);
        return -ENOMEM;
    }
    evconnlistener_set_error_cb(l, on_accept_error);
    if (also_fd >= 0) {
        evutil_make_socket_nonblocking(also_fd);
        px.also = evconnlistener_new(px.base, on_accept, &px, LEV_OPT_CLOSE_ON_FREE, -1, also_fd);
        if (!px.also)
            return -ENOMEM;
        evconnlistener_set_error_cb(px.also, on_accept_error);
    }
    if (ctl_fd >= 0) {
        px.ctl_event = event_new(px.base, ctl_fd, EV_READ | EV_PERSIST, on_ctl, &px);
        if (!px.ctl_event || event_add(px.ctl_event, NULL) < 0)
            return -ENOMEM;
    }
    event_base_dispatch(px.base);
    for (int i = 0; i < 2; i++)
        if (px.handed[i])
            evconnlistener_free(px.handed[i]);
    if (px.ctl_event)
        event_free(px.ctl_event);
    if (px.also)
        evconnlistener_free(px.also);
    evconnlistener_free(l);
    evdns_base_free(px.dns, 0);
    event_base_free(px.base);
    return 0;
}

/* ---- the proxy's process ---------------------------------------------- */

struct gk_proxy {
    pid_t pid;
    shared_log *log;
};

/* A path, or with abstract the name of an abstract address. */
static int unix_listener(const char *path, bool abstract, int backlog)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len + abstract >= sizeof(sun.sun_path))
        return -ENAMETOOLONG;
    memcpy(sun.sun_path + abstract, path, len);
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + len +
                               !abstract);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sun, sl) < 0 || listen(fd, backlog) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

int gk_proxy_start(const gk_proxy_opts *o, gk_proxy **out)
{
    int fd = unix_listener(o->socket, false, 1024);
    if (fd < 0)
        return fd;
    int ctl = o->control ? unix_listener(o->control, false, 4) : -1;
    if (o->control && ctl < 0) {
        close(fd);
        return ctl;
    }
    int also = o->abstract ? unix_listener(o->abstract, true, 1024) : -1;
    if (o->abstract && also < 0) {
        close(fd);
        if (ctl >= 0)
            close(ctl);
        return also;
    }
    shared_log *log = mmap(NULL, sizeof(*log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
    if (log == MAP_FAILED) {
        int err = -errno;
        close(fd);
        if (ctl >= 0)
            close(ctl);
        if (also >= 0)
            close(also);
        return err;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int err = -errno;
        close(fd);
        if (ctl >= 0)
            close(ctl);
        if (also >= 0)
            close(also);
        munmap(log, sizeof(*log));
        return err;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        prctl(PR_SET_NAME, "grantrun-proxy");
        static const int ignored[] = {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGPIPE};
        for (size_t i = 0; i < sizeof(ignored) / sizeof(*ignored); i++)
            signal(ignored[i], SIG_IGN);
        /* Nothing of grantrun's but the sockets (at 3, 4 and 5): no pipe
         * stays open here. */
        int null = open("/dev/null", O_RDWR);
        for (int k = 0; k < 3 && null >= 0; k++)
            dup2(null, k);
        int a = fcntl(fd, F_DUPFD, 10), b = ctl >= 0 ? fcntl(ctl, F_DUPFD, 10) : -1;
        int c = also >= 0 ? fcntl(also, F_DUPFD, 10) : -1;
        if (a < 0 || dup2(a, 3) < 0 || (b >= 0 && dup2(b, 4) < 0) || (c >= 0 && dup2(c, 5) < 0))
            _exit(1);
        if (syscall(SYS_close_range, 6U, ~0U, 0) < 0)
            for (int k = 6; k < 65536; k++)
                close(k);
        /* A tunnel's buffers come and go at 256 KiB: kept on the heap
         * (not mmap'd and unmapped each time, faulting every page in). */
        mallopt(M_MMAP_THRESHOLD, 4 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max &&
            rl.rlim_cur < 4096) {
            rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        _exit(gk_proxy_serve(3, c >= 0 ? 5 : -1, b >= 0 ? 4 : -1, o, log) < 0 ? 1 : 0);
    }
    close(fd);
    if (ctl >= 0)
        close(ctl);
    if (also >= 0)
        close(also);
    gk_proxy *p = gk_calloc(1, sizeof(*p));
    p->pid = pid;
    p->log = log;
    *out = p;
    return 0;
}

void gk_proxy_stop(gk_proxy *p, gk_net_log *log)
{
    if (!p)
        return;
    /* Still there (it never ends on its own), or why not. */
    int st = 0;
    pid_t gone = waitpid(p->pid, &st, WNOHANG);
    if (gone != p->pid) {
        kill(p->pid, SIGKILL); /* the records are in shared memory already */
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        st = 0;
    } else if (!st) {
        st = 1 << 8; /* exited 0 is still early: say it ended */
    }
    if (log) {
        memset(log, 0, sizeof(*log));
        unsigned n = __atomic_load_n(&p->log->n, __ATOMIC_ACQUIRE);
        log->v = gk_calloc(n ? n : 1, sizeof(*log->v));
        for (unsigned i = 0; i < n && i < GK_NET_RECORDS; i++) {
            const shared_rec *r = &p->log->rec[i];
            log->v[i] = (gk_net_record){gk_strdup(r->host), r->port,
                                        r->has_address ? gk_strdup(r->address) : NULL,
                                        r->allowed, gk_strdup(r->rule)};
            log->n++;
        }
        log->omitted = p->log->omitted;
        log->ended = st;
    }
    munmap(p->log, sizeof(*p->log));
    free(p);
}

void gk_net_log_free(gk_net_log *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n; i++) {
        free(log->v[i].host);
        free(log->v[i].address);
        free(log->v[i].rule);
    }
    free(log->v);
    memset(log, 0, sizeof(*log));
}

void gk_net_log_json(const gk_net_log *log, gk_json_out *j)
{
    gk_json_object(j);
    gk_json_key(j, "connections");
    gk_json_array(j);
    for (size_t i = 0; i < log->n; i++) {
        const gk_net_record *r = &log->v[i];
        gk_json_object(j);
        gk_json_key(j, "host");
        gk_json_string(j, r->host);
        gk_json_key(j, "port");
        gk_json_int(j, r->port);
        gk_json_key(j, "address");
        gk_json_string(j, r->address);
        gk_json_key(j, "verdict");
        gk_json_string(j, r->allowed ? "allowed" : "refused");
        gk_json_key(j, "rule");
        gk_json_string(j, r->rule);
        gk_json_end(j);
    }
    gk_json_end(j);
    gk_json_key(j, "omitted");
    gk_json_int(j, (long long)log->omitted);
    gk_json_end(j);
}
