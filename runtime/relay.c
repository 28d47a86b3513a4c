/* relay.c - the envelope's listeners, handed to the proxy (see relay.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_on(int family, unsigned port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
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

static int hand_over(const char *token, const char *control_path, const int *fds, int nfds,
                     const char **step)
{
    char msg[80];
    size_t mlen = 4 + strlen(token);
    if (mlen > sizeof(msg)) {
        *step = "relay token";
        return -EINVAL;
    }
    memcpy(msg, "GKH1", 4);
    memcpy(msg + 4, token, mlen - 4);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if (strlen(control_path) >= sizeof(sun.sun_path)) {
        *step = "relay control path";
        return -ENAMETOOLONG;
    }
    strcpy(sun.sun_path, control_path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
        int err = -errno;
        if (s >= 0)
            close(s);
        *step = "relay: connect to the proxy";
        return err;
    }
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct iovec iov = {msg, mlen};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                       .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int))};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(h), fds, (size_t)nfds * sizeof(int));
    ssize_t w = sendmsg(s, &m, MSG_NOSIGNAL);
    /* The proxy's answer: the listeners are served before the command
     * can make its first connection. */
    char answer[2] = "";
    struct pollfd p = {s, POLLIN, 0};
    bool ok = w == (ssize_t)mlen && poll(&p, 1, 10000) == 1 && read(s, answer, 2) == 2 &&
              memcmp(answer, "ok", 2) == 0;
    int err = w < 0 ? -errno : -EPROTO;
    close(s);
    if (!ok) {
        *step = "relay: the proxy did not take the listeners";
        return err;
    }
    return 0;
}

int gk_relay_handoff(unsigned port, const char *token, const char *control_path,
                     const char **step)
{
    int fds[2];
    int n = 0;
    fds[n] = listen_on(AF_INET, port);
    if (fds[n] < 0) {
        *step = "relay listen 127.0.0.1";
        return fds[n];
    }
    n++;
    /* An envelope without IPv6 has no [::1]: 127.0.0.1 alone then. */
    fds[n] = listen_on(AF_INET6, port);
    if (fds[n] < 0 && fds[n] != -EADDRNOTAVAIL && fds[n] != -EAFNOSUPPORT) {
        int err = fds[n];
        close(fds[0]);
        *step = "relay listen [::1]";
        return err;
    }
    if (fds[n] >= 0)
        n++;
    int rc = hand_over(token, control_path, fds, n, step);
    for (int i = 0; i < n; i++)
        close(fds[i]); /* the proxy holds its own */
    return rc;
}
