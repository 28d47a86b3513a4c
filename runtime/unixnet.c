/* unixnet.c - the landlock level's connect(2) supervisor (see unixnet.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/unixnet.h"
#include "runtime/syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for a thread, not only a leader */
#endif

struct gk_unixnet {
    pthread_t thread;
    int sock;    /* the handoff socket, until the listener came */
    int stop[2]; /* written once: the run is over */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct sockaddr_un proxy; /* the abstract address */
    socklen_t proxy_len;
};

/* The listener, from the helper (SCM_RIGHTS after "GKN1"); "ok" back once
 * it is ours. -1 when the helper ended first (EOF: grantrun holds no copy
 * of its end), the run did, or it sent something else. No deadline of its
 * own: the run's is grantrun's. */
static int take_listener(gk_unixnet *u)
{
    struct pollfd p[2] = {{u->sock, POLLIN, 0}, {u->stop[0], POLLIN, 0}};
    int rc;
    do
        rc = poll(p, 2, -1);
    while (rc < 0 && errno == EINTR);
    if (rc <= 0 || p[1].revents || !(p[0].revents & POLLIN))
        return -1;
    char tag[8] = "";
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct iovec iov = {tag, sizeof(tag)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                       .msg_controllen = sizeof(cm.buf)};
    ssize_t n = recvmsg(u->sock, &m, MSG_CMSG_CLOEXEC);
    int fd = -1;
    struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
        h->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(h), sizeof(int));
    if (fd >= 0 && (n != 4 || memcmp(tag, "GKN1", 4) != 0 || (m.msg_flags & MSG_CTRUNC))) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0 && send(u->sock, "ok", 2, MSG_NOSIGNAL) != 2) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A pidfd for the thread that made the call: PIDFD_THREAD where the
 * kernel has it, else its thread group's (read from /proc). */
static int pidfd_of(pid_t tid)
{
    int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (fd >= 0 || errno != EINVAL)
        return fd;
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    int s = open(path, O_RDONLY | O_CLOEXEC);
    if (s < 0)
        return -1;
    ssize_t n = read(s, buf, sizeof(buf) - 1);
    close(s);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *t = strstr(buf, "\nTgid:");
    return t ? (int)syscall(SYS_pidfd_open, (pid_t)atoi(t + 6), 0) : -1;
}

static bool still_waiting(int listener, __u64 id)
{
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The answer to one connect(2): 0 or an errno. */
static int connect_for(const gk_unixnet *u, int listener, const struct seccomp_notif *n)
{
    if (n->data.nr != __NR_connect)
        return EACCES;
    /* The kernel reads the length as an int: the low 32 bits. */
    uint32_t len = (uint32_t)n->data.args[2];
    if (len <= offsetof(struct sockaddr_un, sun_path) || len > sizeof(struct sockaddr_un))
        return EACCES;
    struct sockaddr_un copy;
    memset(&copy, 0, sizeof(copy));
    struct iovec here = {&copy, len};
    struct iovec there = {(void *)(uintptr_t)n->data.args[1], len};
    if (process_vm_readv((pid_t)n->pid, &here, 1, &there, 1, 0) != (ssize_t)len)
        return EACCES;
    /* The copy is what the target asked while it still waits (the pid was
     * not reused); from here on only the copy counts. */
    if (!still_waiting(listener, n->id))
        return EACCES;
    if (copy.sun_family != AF_UNIX)
        return EACCES;
    size_t plen = strnlen(copy.sun_path, len - offsetof(struct sockaddr_un, sun_path));
    /* An abstract name (a leading NUL) and an unnamed address have no path. */
    if (plen == 0 || plen != strlen(u->path) || memcmp(copy.sun_path, u->path, plen) != 0)
        return EACCES;
    int pidfd = pidfd_of((pid_t)n->pid);
    if (pidfd < 0)
        return EACCES;
    if (!still_waiting(listener, n->id)) {
        close(pidfd);
        return EACCES;
    }
    int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)n->data.args[0], 0);
    close(pidfd);
    if (fd < 0)
        return EACCES;
    int domain = 0, type = 0;
    socklen_t ol = sizeof(int);
    int err = EACCES;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &ol) == 0 && domain == AF_UNIX &&
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &ol) == 0 && type == SOCK_STREAM) {
        /* The target's own socket (its flags: a non-blocking one may answer
         * EAGAIN), to grantrun's own copy of the proxy's address. */
        err = connect(fd, (const struct sockaddr *)&u->proxy, u->proxy_len) == 0 ? 0 : errno;
    }
    close(fd);
    return err;
}

static void serve(gk_unixnet *u, int listener)
{
    struct seccomp_notif_sizes sizes = {0};
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
        return;
    /* The kernel's structures may be larger than these headers': room for both. */
    size_t nsz = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif
                                                                    : sizeof(struct seccomp_notif);
    size_t rsz = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                     ? sizes.seccomp_notif_resp
                     : sizeof(struct seccomp_notif_resp);
    struct seccomp_notif *req = calloc(1, nsz);
    struct seccomp_notif_resp *resp = calloc(1, rsz);
    while (req && resp) {
        struct pollfd p[2] = {{listener, POLLIN, 0}, {u->stop[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN)) {
            if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
                break; /* every process of the filter is gone */
            continue;
        }
        memset(req, 0, nsz);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
            continue; /* the target left the call (a signal, its end) */
        int err = connect_for(u, listener, req);
        memset(resp, 0, rsz);
        resp->id = req->id;
        resp->error = err ? -err : 0;
        resp->val = 0;
        resp->flags = 0;
        /* ENOENT: the target is gone, or was interrupted and will ask again */
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
    }
    free(req);
    free(resp);
}

static void *supervise(void *arg)
{
    gk_unixnet *u = arg;
    int listener = take_listener(u);
    close(u->sock);
    u->sock = -1;
    if (listener >= 0) {
        serve(u, listener);
        close(listener);
    }
    return NULL;
}

int gk_unixnet_start(int sock, const char *path, const char *abstract, gk_unixnet **out)
{
    *out = NULL;
    gk_unixnet *u = gk_calloc(1, sizeof(*u));
    u->sock = sock;
    u->stop[0] = u->stop[1] = -1;
    size_t alen = strlen(abstract);
    if (strlen(path) >= sizeof(u->path) || alen + 1 > sizeof(u->proxy.sun_path)) {
        close(sock);
        free(u);
        return -ENAMETOOLONG;
    }
    strcpy(u->path, path);
    u->proxy.sun_family = AF_UNIX;
    memcpy(u->proxy.sun_path + 1, abstract, alen);
    u->proxy_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + alen);
    if (pipe2(u->stop, O_CLOEXEC) < 0) {
        int err = -errno;
        close(sock);
        free(u);
        return err;
    }
    /* No signal of grantrun's is for this thread (its handlers stay the
     * main thread's business). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&u->thread, NULL, supervise, u);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(sock);
        close(u->stop[0]);
        close(u->stop[1]);
        free(u);
        return -rc;
    }
    *out = u;
    return 0;
}

void gk_unixnet_stop(gk_unixnet *u)
{
    if (!u)
        return;
    while (write(u->stop[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(u->thread, NULL);
    close(u->stop[0]);
    close(u->stop[1]);
    free(u);
}
