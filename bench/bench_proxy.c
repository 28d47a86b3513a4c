/* bench_proxy.c - what the network allowlist's path costs (network.md §2),
 * against a direct loopback connection in the same invocation:
 *   - setup:      connect, one byte there and back, close; direct to a
 *                 loopback server, then through the loopback listener
 *                 the helper hands to the proxy, CONNECT and the proxy's
 *                 own connect: median and ratio;
 *   - throughput: 100 MiB from the server, read to EOF, both ways: MiB/s
 *                 and ratio.
 * The proxy decides with an allow-all function (the gate's cost is
 * bench_net's). The proxy runs in a process of its own, as in a run, and
 * ends with the benchmark.
 *   make bench-proxy BENCH_PROXY_ARGS='--seconds 3 --mib 100'
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/proxy.h"
#include "runtime/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"

static int allow_all(void *ctx, const char *host, unsigned port, gk_net_decision *out)
{
    (void)ctx, (void)host, (void)port;
    out->allowed = true;
    out->rule = gk_strdup("allow (bench)");
    return 0;
}

static int listen_loopback(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        exit(2);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Servers, each in a process: one byte back per connection, or `bulk`
 * bytes then EOF. */
static void server(int fd, size_t bulk)
{
    if (fork() != 0) {
        close(fd);
        return;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    static char buf[1 << 16];
    for (;;) {
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            continue;
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (!bulk) {
            char b;
            if (read(c, &b, 1) == 1 && write(c, &b, 1) != 1) {
                /* the client sees EOF */
            }
        } else {
            for (size_t left = bulk; left;) {
                ssize_t w = write(c, buf, left < sizeof(buf) ? left : sizeof(buf));
                if (w <= 0)
                    break;
                left -= (size_t)w;
            }
        }
        close(c);
    }
}

static int connect_to(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        exit(3);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Through relay and proxy: CONNECT, then the proxy's answer. */
static int connect_via(unsigned relay_port, unsigned target)
{
    int fd = connect_to(relay_port);
    char req[128], resp[256];
    int n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", target);
    if (write(fd, req, (size_t)n) != n)
        exit(4);
    size_t got = 0;
    while (got < sizeof(resp) - 1) {
        ssize_t r = read(fd, resp + got, 1); /* the tunnel starts right after the head */
        if (r <= 0)
            exit(5);
        got += (size_t)r;
        resp[got] = '\0';
        if (got >= 4 && strcmp(resp + got - 4, "\r\n\r\n") == 0)
            break;
    }
    if (strncmp(resp, "HTTP/1.1 200", 12) != 0)
        exit(6);
    return fd;
}

typedef struct setup_case {
    unsigned relay, target;
    bool via;
} setup_case;

static int one_setup(void *arg)
{
    setup_case *c = arg;
    int fd = c->via ? connect_via(c->relay, c->target) : connect_to(c->target);
    char b = 'x';
    if (write(fd, &b, 1) != 1 || read(fd, &b, 1) != 1)
        return 1;
    close(fd);
    return 0;
}

static int one_bulk(void *arg)
{
    setup_case *c = arg;
    int fd = c->via ? connect_via(c->relay, c->target) : connect_to(c->target);
    static char buf[1 << 17];
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    long mib = 100;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = strtod(argv[i + 1], NULL);
        else if (strcmp(argv[i], "--mib") == 0)
            mib = strtol(argv[i + 1], NULL, 10);
    }
    signal(SIGPIPE, SIG_IGN);
    unsigned echo_port, bulk_port, relay_port;
    server(listen_loopback(&echo_port), 0);
    server(listen_loopback(&bulk_port), (size_t)mib << 20);
    int probe = listen_loopback(&relay_port); /* a free port for the relay */
    close(probe);

    char dir[] = "/tmp/bench-net-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char sock[4096], ctl[4096];
    snprintf(sock, sizeof(sock), "%s/proxy.sock", dir);
    snprintf(ctl, sizeof(ctl), "%s/handoff.sock", dir);
    gk_proxy *px = NULL;
    gk_proxy_opts po = {sock, ctl, "bench", false, allow_all, NULL, NULL};
    if (gk_proxy_start(&po, &px) < 0)
        return 2;
    /* What the helper does in the envelope: the loopback listeners go to
     * the proxy. */
    const char *step = "";
    if (gk_relay_handoff(relay_port, "bench", ctl, &step) < 0) {
        fprintf(stderr, "bench_proxy: %s\n", step);
        return 2;
    }

    setup_case direct = {relay_port, echo_port, false}, via = {relay_port, echo_port, true};
    timing td, tv, sd, sv;
    if (bench_measure(one_setup, &direct, seconds, &td) || bench_measure(one_setup, &via, seconds, &tv))
        return 3;
    printf("%-28s %13s %13s %8s   (%ld MiB transfers)\n", "proxy", "median", "best", "ratio", mib);
    printf("%-28s %10.1f us %10.1f us %8s  (%zu runs)\n", "setup direct loopback",
           td.median_ms * 1e3, td.min_ms * 1e3, "1.00", td.runs);
    printf("%-28s %10.1f us %10.1f us %8.2f  (%zu runs)\n", "setup via proxy",
           tv.median_ms * 1e3, tv.min_ms * 1e3, tv.median_ms / td.median_ms, tv.runs);
    setup_case bd = {relay_port, bulk_port, false}, bv = {relay_port, bulk_port, true};
    if (bench_measure(one_bulk, &bd, seconds, &sd) || bench_measure(one_bulk, &bv, seconds, &sv))
        return 3;
    printf("%-28s %9.0f MiB/s %9.0f MiB/s %8s  (%zu runs)\n", "transfer direct",
           (double)mib * 1e3 / sd.median_ms, (double)mib * 1e3 / sd.min_ms, "1.00", sd.runs);
    printf("%-28s %9.0f MiB/s %9.0f MiB/s %8.2f  (%zu runs)\n", "transfer via proxy",
           (double)mib * 1e3 / sv.median_ms, (double)mib * 1e3 / sv.min_ms,
           sd.median_ms / sv.median_ms, sv.runs);
    printf("(ratio: setup time via / direct; throughput via / direct)\n");

    gk_proxy_stop(px, NULL);
    unlink(sock);
    unlink(ctl);
    rmdir(dir);
    return 0;
}
