/* relay.c - the envelope's relay to the proxy (see relay.h). A poll loop:
 * the helper is libc only, and the relay only copies bytes; every
 * decision is the proxy's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define RELAY_BUF 65536
#define RELAY_MAX 2048 /* pairs at once; the proxy bounds what it serves */

typedef struct half {
    int from, to;
    char *buf;
    size_t len, off;
    bool eof, shut;
} half;

typedef struct pair {
    int tcp, unix_fd;
    half up, down; /* tcp -> unix, unix -> tcp */
} pair;

static struct sockaddr_un target;

static int listen_on(int family, unsigned port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (family == AF_INET) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    } else {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
        a.sin6_addr = in6addr_loopback;
        rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    }
    if (rc < 0 || listen(fd, 1024) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

static void pair_close(pair *p)
{
    close(p->tcp);
    close(p->unix_fd);
    free(p->up.buf);
    free(p->down.buf);
}

static bool accept_one(int lfd, pair **pairs, size_t *n)
{
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0)
        return false;
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int u = *n < RELAY_MAX ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
    if (u < 0 || connect(u, (struct sockaddr *)&target, sizeof(target)) < 0) {
        if (u >= 0)
            close(u);
        close(c); /* no proxy: the client sees the connection end */
        return true;
    }
    fcntl(u, F_SETFL, O_NONBLOCK);
    pair *p = calloc(1, sizeof(*p));
    char *b1 = malloc(RELAY_BUF), *b2 = malloc(RELAY_BUF);
    if (!p || !b1 || !b2) {
        free(p), free(b1), free(b2);
        close(c), close(u);
        return true;
    }
    *p = (pair){c, u, {c, u, b1, 0, 0, false, false}, {u, c, b2, 0, 0, false, false}};
    pairs[(*n)++] = p;
    return true;
}

/* One step of one direction; false on an error (the pair ends). */
static bool half_step(half *h, short rev_from, short rev_to)
{
    if (h->len > h->off && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t w = send(h->to, h->buf + h->off, h->len - h->off, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return false;
        if (w > 0)
            h->off += (size_t)w;
        if (h->off == h->len)
            h->off = h->len = 0;
    }
    if (!h->eof && h->len == 0 && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t r = recv(h->from, h->buf, RELAY_BUF, 0);
        if (r < 0 && errno != EAGAIN && errno != EINTR)
            return false;
        if (r == 0)
            h->eof = true;
        if (r > 0) {
            h->len = (size_t)r;
            ssize_t w = send(h->to, h->buf, h->len, MSG_NOSIGNAL);
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                return false;
            if (w > 0)
                h->off = (size_t)w;
            if (h->off == h->len)
                h->off = h->len = 0;
        }
    }
    if (h->eof && h->len == 0 && !h->shut) {
        shutdown(h->to, SHUT_WR);
        h->shut = true;
    }
    return true;
}

static void __attribute__((noreturn)) relay_loop(int l4, int l6)
{
    pair **pairs = calloc(RELAY_MAX, sizeof(*pairs));
    struct pollfd *pf = calloc(2 + 2 * RELAY_MAX, sizeof(*pf));
    if (!pairs || !pf)
        _exit(1);
    size_t n = 0;
    for (;;) {
        size_t k = 0;
        /* At the bound the listeners wait (else poll would spin on them). */
        short accepting = n < RELAY_MAX ? POLLIN : 0;
        pf[k++] = (struct pollfd){l4, accepting, 0};
        pf[k++] = (struct pollfd){l6, accepting, 0};
        for (size_t i = 0; i < n; i++) {
            pair *p = pairs[i];
            short te = 0, ue = 0;
            if (!p->up.eof && p->up.len == 0)
                te |= POLLIN;
            if (p->down.len > p->down.off)
                te |= POLLOUT;
            if (!p->down.eof && p->down.len == 0)
                ue |= POLLIN;
            if (p->up.len > p->up.off)
                ue |= POLLOUT;
            pf[k++] = (struct pollfd){p->tcp, te, 0};
            pf[k++] = (struct pollfd){p->unix_fd, ue, 0};
        }
        if (poll(pf, k, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        size_t before = n;
        for (size_t i = 0, j = 2; i < before; i++, j += 2) {
            pair *p = pairs[i];
            short rt = pf[j].revents, ru = pf[j + 1].revents;
            bool ok = half_step(&p->up, rt, ru) && half_step(&p->down, ru, rt);
            if (!ok || (p->up.shut && p->down.shut)) {
                pair_close(p);
                free(p);
                pairs[i] = NULL;
            }
        }
        size_t m = 0;
        for (size_t i = 0; i < before; i++)
            if (pairs[i])
                pairs[m++] = pairs[i];
        n = m;
        if (pf[0].revents & POLLIN)
            while (accept_one(l4, pairs, &n) && n < RELAY_MAX)
                ;
        if (l6 >= 0 && (pf[1].revents & POLLIN))
            while (accept_one(l6, pairs, &n) && n < RELAY_MAX)
                ;
    }
}

int gk_relay_start(unsigned port, const char *socket_path, const char **step)
{
    if (strlen(socket_path) >= sizeof(target.sun_path)) {
        *step = "relay socket path";
        return -ENAMETOOLONG;
    }
    target.sun_family = AF_UNIX;
    strcpy(target.sun_path, socket_path);
    int l4 = listen_on(AF_INET, port);
    if (l4 < 0) {
        *step = "relay listen 127.0.0.1";
        return l4;
    }
    /* An envelope without IPv6 has no [::1]: 127.0.0.1 alone then. */
    int l6 = listen_on(AF_INET6, port);
    if (l6 < 0 && l6 != -EADDRNOTAVAIL && l6 != -EAFNOSUPPORT) {
        close(l4);
        *step = "relay listen [::1]";
        return l6;
    }
    pid_t first = fork();
    if (first < 0) {
        *step = "relay fork";
        return -errno;
    }
    if (first == 0) {
        if (fork() != 0)
            _exit(0); /* the relay is reparented to the envelope's init */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        prctl(PR_SET_NAME, "grantkit-relay");
        static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP};
        for (size_t i = 0; i < sizeof(ignored) / sizeof(*ignored); i++)
            signal(ignored[i], SIG_IGN);
        /* Nothing but the listeners: the status pipe and the command's
         * output must not stay open here. */
        int a = fcntl(l4, F_DUPFD_CLOEXEC, 0), b = l6 >= 0 ? fcntl(l6, F_DUPFD_CLOEXEC, 0) : -1;
        for (int fd = 0; fd < 3; fd++)
            close(fd);
        if (dup2(a, 0) < 0 || (b >= 0 && dup2(b, 1) < 0))
            _exit(1);
        if (syscall(SYS_close_range, 2U, ~0U, 0) < 0)
            for (int fd = 2; fd < 65536; fd++)
                close(fd);
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        relay_loop(0, b >= 0 ? 1 : -1);
    }
    close(l4);
    if (l6 >= 0)
        close(l6);
    int st;
    while (waitpid(first, &st, 0) < 0 && errno == EINTR)
        ;
    return 0;
}
