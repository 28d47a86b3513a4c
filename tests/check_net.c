/* check_net.c - the network allowlist's runtime (network.md §2) against
 * real servers that never leave the machine.
 *
 * Each case makes its own network namespace (root: unshare -n; otherwise
 * with a user namespace), puts a public-looking address (11.0.0.1) on its
 * loopback (the proxy refuses private addresses for names) and a mount
 * namespace whose /etc/hosts maps the test names to it; starts HTTP
 * servers there (one also serving git-http-backend as CGI, one on
 * 127.0.0.1 for the private-address case); then runs real curl and git in
 * the real envelope (gk_launch: bwrap, the helper's relay, the proxy),
 * with a decision table standing in for the policy's net rules. Every
 * refused case has a control that succeeds in the same run.
 */
#include "runtime/launch.h"
#include "runtime/proxy.h"
#include "runtime/relay.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#define PUBLIC "11.0.0.1"
#define BWRAP "/usr/bin/bwrap"

/* ---- the decision table (what a policy's net block would answer) ---- */

static const struct {
    const char *host;
    unsigned port; /* 0: any */
} table[] = {
    {"allowed.test", 0},
    {"other.test", 8080},
    {"private.test", 0},
    {"slow.test", 0},
    {"multi.test", 0},
};

static int table_decide(void *ctx, const char *host, unsigned port, gk_net_decision *out)
{
    (void)ctx;
    size_t n = strlen(host);
    if (n && host[n - 1] == '.')
        n--;
    for (size_t i = 0; i < sizeof(table) / sizeof(*table); i++)
        if (strlen(table[i].host) == n && strncasecmp(host, table[i].host, n) == 0 &&
            (!table[i].port || table[i].port == port)) {
            out->allowed = true;
            out->rule = table[i].port ? gk_printf("allow %s:%u (table:%zu)", table[i].host,
                                                  table[i].port, i + 1)
                                      : gk_printf("allow %s (table:%zu)", table[i].host, i + 1);
            return 0;
        }
    out->allowed = false;
    out->rule = gk_strdup("no allow rule matches");
    return 0;
}

/* ---- the world: namespaces and servers ---- */

static char *workdir;
static long run_timeout_ms = 90000; /* the envelope's --timeout */
static uid_t outer_uid; /* who runs the envelope (nested: not root in it) */
static gid_t outer_gid;
static bool nested;

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* inside outside: one id each */
static void map_ids(unsigned uid_in, unsigned uid_out, unsigned gid_in, unsigned gid_out)
{
    char buf[64];
    write_file("/proc/self/setgroups", "deny");
    snprintf(buf, sizeof(buf), "%u %u 1", uid_in, uid_out);
    write_file("/proc/self/uid_map", buf);
    snprintf(buf, sizeof(buf), "%u %u 1", gid_in, gid_out);
    write_file("/proc/self/gid_map", buf);
}

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* One HTTP exchange, by a forked child per connection. */
static void serve_one(int c, const char *name)
{
    char req[65536];
    size_t n = 0;
    char *end = NULL;
    while (n < sizeof(req) - 1 && !end) {
        ssize_t r = read(c, req + n, sizeof(req) - 1 - n);
        if (r <= 0)
            _exit(0);
        n += (size_t)r;
        req[n] = '\0';
        end = strstr(req, "\r\n\r\n");
    }
    if (!end)
        _exit(0);
    char method[16] = "", path[2048] = "";
    sscanf(req, "%15s %2047s", method, path);
    char *host = strcasestr(req, "\r\nHost:");
    char hostname[256] = "?";
    if (host)
        sscanf(host + 7, " %255[^\r\n]", hostname);
    char head[4096];
    if (strcmp(path, "/redirect") == 0) {
        snprintf(head, sizeof(head),
                 "HTTP/1.1 302 Found\r\nLocation: http://denied.test/\r\nContent-Length: 0\r\n"
                 "\r\n");
        write(c, head, strlen(head));
    } else if (strncmp(path, "/git/", 5) == 0) {
        /* git-http-backend as CGI: the body (Content-Length) on its stdin. */
        char *cl = strcasestr(req, "\r\nContent-Length:");
        long len = cl ? atol(cl + 17) : 0;
        char *body_start = end + 4;
        size_t have = n - (size_t)(body_start - req);
        int in[2], out[2];
        if (pipe(in) < 0 || pipe(out) < 0)
            _exit(1);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[1]);
            close(out[0]);
            char *q = strchr(path, '?');
            if (q)
                *q++ = '\0';
            char *ct = strcasestr(req, "\r\nContent-Type:");
            char ctype[256] = "";
            if (ct)
                sscanf(ct + 15, " %255[^\r\n]", ctype);
            char lenbuf[32];
            snprintf(lenbuf, sizeof(lenbuf), "%ld", len);
            setenv("GIT_PROJECT_ROOT", workdir, 1);
            setenv("GIT_HTTP_EXPORT_ALL", "1", 1);
            setenv("REQUEST_METHOD", method, 1);
            setenv("PATH_INFO", path + 4, 1);
            setenv("QUERY_STRING", q ? q : "", 1);
            setenv("CONTENT_TYPE", ctype, 1);
            setenv("CONTENT_LENGTH", lenbuf, 1);
            setenv("REMOTE_ADDR", "11.0.0.1", 1);
            execl("/usr/lib/git-core/git-http-backend", "git-http-backend", (char *)NULL);
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        if (have > (size_t)len)
            have = (size_t)len;
        write(in[1], body_start, have);
        for (long left = len - (long)have; left > 0;) {
            ssize_t r = read(c, req, sizeof(req) < (size_t)left ? sizeof(req) : (size_t)left);
            if (r <= 0)
                break;
            write(in[1], req, (size_t)r);
            left -= r;
        }
        close(in[1]);
        /* CGI output: "Status:" becomes the status line. */
        gk_buf o = {0};
        char chunk[65536];
        ssize_t r;
        while ((r = read(out[0], chunk, sizeof(chunk))) > 0)
            gk_buf_add(&o, chunk, (size_t)r);
        waitpid(pid, NULL, 0);
        gk_buf_putc(&o, '\0');
        char *hend = strstr(o.data, "\r\n\r\n");
        size_t hl = hend ? (size_t)(hend - o.data) + 4 : 0;
        int status = 200;
        char *st = strcasestr(o.data, "Status:");
        if (st && st < o.data + hl)
            status = atoi(st + 7);
        snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n",
                 status, o.len - 1 - hl);
        write(c, head, strlen(head));
        write(c, o.data, o.len - 1);
        gk_buf_free(&o);
    } else if (strcmp(path, "/big") == 0) {
        static char zeros[65536];
        size_t total = 64u << 20;
        snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", total);
        write(c, head, strlen(head));
        for (size_t left = total; left;) {
            ssize_t w = write(c, zeros, left < sizeof(zeros) ? left : sizeof(zeros));
            if (w <= 0)
                break;
            left -= (size_t)w;
        }
    } else if (strcmp(path, "/post") == 0) {
        /* An interim 100 Continue, then the final answer (keep-alive, which
         * the proxy turns into close). */
        char *cl = strcasestr(req, "\r\nContent-Length:");
        long len = cl ? atol(cl + 17) : 0;
        if (strcasestr(req, "\r\nExpect: 100-continue")) {
            static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            write(c, cont, sizeof(cont) - 1);
        }
        long got = (long)(n - (size_t)(end + 4 - req));
        while (got < len) {
            ssize_t r = read(c, req, sizeof(req));
            if (r <= 0)
                break;
            got += r;
        }
        char body[128];
        snprintf(body, sizeof(body), "got %ld bytes\n", got);
        snprintf(head, sizeof(head),
                 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: keep-alive\r\n"
                 "Keep-Alive: timeout=5\r\n\r\n%s",
                 strlen(body), body);
        write(c, head, strlen(head));
    } else {
        if (strcmp(path, "/slow") == 0)
            sleep(8); /* long enough for all 300 to be open at once */
        char body[512];
        snprintf(body, sizeof(body), "hello from %s at %s\n", hostname, name);
        snprintf(head, sizeof(head),
                 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: keep-alive\r\n\r\n%s",
                 strlen(body), body);
        write(c, head, strlen(head));
    }
    shutdown(c, SHUT_WR);
    while (read(c, req, sizeof(req)) > 0)
        ;
    _exit(0);
}

static void start_server(const char *addr, unsigned port)
{
    bool v6 = strchr(addr, ':') != NULL;
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    inet_pton(AF_INET, addr, &a.sin_addr);
    inet_pton(AF_INET6, addr, &a6.sin6_addr);
    int rc = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
                : bind(fd, (struct sockaddr *)&a, sizeof(a));
    ck_assert_msg(rc == 0, "bind %s:%u: %s", addr, port, strerror(errno));
    ck_assert_int_eq(listen(fd, 1024), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGCHLD, SIG_IGN);
        char name[64];
        snprintf(name, sizeof(name), "%s:%u", addr, port);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                continue;
            if (fork() == 0) {
                close(fd);
                signal(SIGCHLD, SIG_DFL); /* git-http-backend waits for its own */
                serve_one(c, name);
            }
            close(c);
        }
    }
    close(fd);
}

/* A raw TCP server for the idle bound: every `every` seconds a byte, or
 * (0) never one. */
static void start_raw_server(unsigned port, unsigned every)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, PUBLIC, &a.sin_addr);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGCHLD, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c >= 0 && fork() == 0) {
                for (;;) {
                    if (!every)
                        pause();
                    sleep(every);
                    if (write(c, "x", 1) != 1)
                        _exit(0);
                }
            }
            close(c);
        }
    }
    close(fd);
}

/* A resolver that never answers (for the DNS bound). */
static void start_silent_dns(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, PUBLIC, &a.sin_addr);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    close(fd);
}

/* The namespaces, /etc/hosts and /etc/resolv.conf, and the servers; a
 * work directory (outside /tmp) for the runs and a git repository.
 * as_user: the envelope runs as an ordinary user (run as root, the test
 * user; the namespaces are then that user's, and the runs are made in a
 * user namespace nested in them, as that user again). */
static void world_as(bool as_user)
{
    char tmpl[] = "/var/tmp/gk-net-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_int_eq(chmod(tmpl, 0755), 0);
    workdir = gk_strdup(tmpl);
    if (as_user && getuid() == 0) {
        uid_t u;
        gid_t g;
        ck_assert(gk_test_user(&u, &g));
        ck_assert_int_eq(chown(workdir, u, g), 0);
        ck_assert_int_eq(setgroups(0, NULL), 0);
        ck_assert_int_eq(setgid(g), 0);
        ck_assert_int_eq(setuid(u), 0);
        prctl(PR_SET_DUMPABLE, 1); /* else /proc/self/uid_map stays root's */
    }
    outer_uid = getuid();
    outer_gid = getgid();
    nested = outer_uid != 0;
    int flags = CLONE_NEWNS | CLONE_NEWNET | (nested ? CLONE_NEWUSER : 0);
    ck_assert_msg(unshare(flags) == 0, "unshare: %s", strerror(errno));
    if (nested)
        map_ids(0, outer_uid, 0, outer_gid);
    ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
    ck_assert_int_eq(sh("ip link set lo up && ip addr add " PUBLIC "/32 dev lo"), 0);
    gk_autofree char *hosts = gk_printf("%s/hosts", workdir);
    /* multi.test: the first address has no route, the second serves. */
    write_file(hosts, "127.0.0.1 localhost private.test\n11.0.0.2 multi.test\n" PUBLIC
                      " multi.test\n" PUBLIC
                      " allowed.test denied.test other.test x.apps.test bad.apps.test\n");
    ck_assert_int_eq(mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL), 0);
    gk_autofree char *resolv = gk_printf("%s/resolv.conf", workdir);
    write_file(resolv, "nameserver " PUBLIC "\n");
    ck_assert_int_eq(mount(resolv, "/etc/resolv.conf", NULL, MS_BIND, NULL), 0);
    start_silent_dns();
    start_server(PUBLIC, 80);
    start_server(PUBLIC, 8080);
    start_server(PUBLIC, 443);
    start_server("127.0.0.1", 80);
    start_server("::1", 8081);
    ck_assert_int_eq(chdir(workdir), 0);
}

static void world(void)
{
    world_as(false);
}

static void world_end(void)
{
    if (workdir) {
        gk_autofree char *cmd = gk_printf("rm -rf '%s'", workdir);
        sh(cmd);
    }
}

/* ---- one run in the envelope ---- */

typedef struct run {
    int status;
    char *out, *err, *net; /* the command's stdout and stderr; the record as JSON */
} run;

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
    free(r->net);
}

/* In a run's child: back to the ordinary user when nested (no capability
 * in the envelope's parent namespace, as for a real run). */
static void become_runner(void)
{
    if (!nested)
        return;
    if (unshare(CLONE_NEWUSER) < 0)
        _exit(97);
    map_ids((unsigned)outer_uid, 0, (unsigned)outer_gid, 0);
    if (setgid(outer_gid) < 0 || setuid(outer_uid) < 0)
        _exit(97);
    prctl(PR_SET_DUMPABLE, 1);
}

/* The grantrun binary with args, run by the wrapper's argv when not NULL
 * (a host that refuses user namespaces, as check_level makes them); stdout
 * and stderr captured. */
static run grantrun_via(const char *const *wrapper, const char *const *args);

static run grantrun(const char *const *args)
{
    return grantrun_via(NULL, args);
}

static run grantrun_via(const char *const *wrapper, const char *const *args)
{
    gk_autofree char *outp = gk_printf("%s/out", workdir), *errp = gk_printf("%s/err", workdir);
    gk_autofree char *bin = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        become_runner();
        setenv("GRANTKIT_HELPER", helper, 1);
        setenv("PATH", "/usr/bin:/bin", 1);
        setenv("HOME", workdir, 1);
        const char *argv[48];
        size_t k = 0;
        for (size_t n = 0; wrapper && wrapper[n] && k < 8; n++)
            argv[k++] = wrapper[n];
        argv[k++] = bin;
        for (size_t n = 0; args[n] && k < 47; n++)
            argv[k++] = args[n];
        argv[k] = NULL;
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    run r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), gk_test_read(outp, NULL),
             gk_test_read(errp, NULL), NULL};
    return r;
}

/* sh -c SCRIPT in the envelope, with a policy granting the work
 * directory and the network decided by the table. */
static pid_t envelope_start(const char *script)
{
    gk_autofree char *outp = gk_printf("%s/out", workdir), *errp = gk_printf("%s/err", workdir),
                     *netp = gk_printf("%s/net.json", workdir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        become_runner();
        grant_context *ctx = NULL;
        grant_diags *d = grant_diags_new();
        grant_policy *p = NULL;
        gk_autofree char *text =
            gk_printf("grant t { fs { write %s; } net allow; }\n", workdir);
        if (grant_context_new(&ctx) < 0 ||
            grant_compile_buffer(ctx, "t.grant", text, strlen(text), d, &p) < 0) {
            gk_autofree char *why = gk_test_render_diags(d);
            dprintf(2, "compile: %s\n", why);
            _exit(99);
        }
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        const char *env[] = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LANG=C", NULL};
        gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
        gk_launch_opts lo = {.argv = argv, .argc = 3, .env = env, .bwrap = BWRAP,
                             .helper = helper, .timeout_ms = run_timeout_ms,
                             .net_decide = table_decide};
        gk_launch_result res = {0};
        if (gk_launch(p, &lo, d, NULL, &res) < 0)
            _exit(98);
        if (res.message)
            dprintf(2, "launch: %s\n", res.message);
        if (res.net && res.net->ended)
            dprintf(2, "proxy-ended %d\n",
                    WIFSIGNALED(res.net->ended) ? WTERMSIG(res.net->ended) : -1);
        gk_buf b = {0};
        gk_json_out j;
        gk_json_init(&j, &b, false);
        if (res.net)
            gk_net_log_json(res.net, &j);
        else
            gk_json_null(&j);
        int n = open(netp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        write(n, b.data, b.len);
        _exit(res.status);
    }
    return pid;
}

static run envelope_finish(pid_t pid)
{
    gk_autofree char *outp = gk_printf("%s/out", workdir), *errp = gk_printf("%s/err", workdir),
                     *netp = gk_printf("%s/net.json", workdir);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    run r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), gk_test_read(outp, NULL),
             gk_test_read(errp, NULL), gk_test_read(netp, NULL)};
    ck_assert_msg(r.out && r.net, "the run ended %d: %s", r.status, r.err ? r.err : "");
    return r;
}

static run envelope(const char *script)
{
    return envelope_finish(envelope_start(script));
}

#define CURL "curl -sS -m 30 -o /dev/null -w '%{http_code}\\n' "

static void expect_in(const char *what, const char *text, const char *needle)
{
    ck_assert_msg(strstr(text, needle), "%s lacks \"%s\":\n%s", what, needle, text);
}

/* ---- cases ---- */

static void allowed_and_denied(bool as_user)
{
    world_as(as_user);
    run r = envelope("echo \"uid $(id -u)\"; echo \"$HTTP_PROXY $HTTPS_PROXY $ALL_PROXY $http_proxy $all_proxy "
                     "[$NO_PROXY] [$no_proxy]\"; curl -sS -m 30 http://allowed.test/; "
                     "curl -sS -m 30 -x 'http://[::1]:3128' http://allowed.test/v6; " CURL
                     "http://denied.test/");
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    expect_in("env", r.out,
              "http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:3128 "
              "http://127.0.0.1:3128 socks5h://127.0.0.1:3128 [] []");
    expect_in("control", r.out, "hello from allowed.test at " PUBLIC ":80");
    expect_in("relay on [::1]", r.out, "hello from allowed.test at " PUBLIC ":80\nhello from allowed.test at");
    expect_in("denied status", r.out, "\n403\n");
    gk_autofree char *uid = gk_printf("uid %u\n", (unsigned)outer_uid);
    ck_assert_msg(gk_has_prefix(r.out, uid) && (as_user == (outer_uid != 0)), "%s", r.out);
    expect_in("record", r.net,
              "{\"host\":\"allowed.test\",\"port\":80,\"address\":\"" PUBLIC
              "\",\"verdict\":\"allowed\",\"rule\":\"allow allowed.test (table:1)\"}");
    expect_in("record", r.net,
              "{\"host\":\"denied.test\",\"port\":80,\"address\":null,\"verdict\":\"refused\","
              "\"rule\":\"no allow rule matches\"}");
    expect_in("record", r.net, "\"omitted\":0");
    run_free(&r);
    world_end();
}

START_TEST(http_proxy_allowed_and_denied)
{
    allowed_and_denied(false);
}
END_TEST

START_TEST(http_proxy_allowed_and_denied_as_the_user)
{
    allowed_and_denied(true);
}
END_TEST

START_TEST(socks5h_allowed_and_denied)
{
    world();
    run r = envelope("curl -sS -m 30 -x \"$ALL_PROXY\" http://allowed.test/; "
                     "curl -sS -m 30 -x \"$ALL_PROXY\" http://denied.test/; echo \"curl $?\"; "
                     "curl -sS -m 30 -x socks4a://127.0.0.1:3128 http://allowed.test/; "
                     "echo \"socks4 $?\"");
    expect_in("control", r.out, "hello from allowed.test at " PUBLIC ":80");
    expect_in("denied", r.out, "curl 97"); /* the SOCKS reply: not allowed by ruleset */
    expect_in("curl's message", r.err, "to denied.test. (2)"); /* not allowed by ruleset */
    expect_in("socks4", r.out, "socks4 97\n");
    expect_in("record", r.net, "\"host\":\"denied.test\",\"port\":80,\"address\":null,"
                               "\"verdict\":\"refused\"");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(connect_tunnel_and_other_port)
{
    world();
    /* CONNECT (--proxytunnel) to 443, then a name allowed on 8080 only. */
    run r = envelope("curl -sS -m 30 -p http://allowed.test:443/; "
                     "curl -sS -m 30 http://other.test:8080/; " CURL "http://other.test/; " CURL
                     "-p http://other.test:443/");
    expect_in("tunnel", r.out, "hello from allowed.test:443 at " PUBLIC ":443");
    expect_in("other port allowed", r.out, "hello from other.test:8080 at " PUBLIC ":8080");
    expect_in("other port refused", r.out, "\n403\n");
    expect_in("record", r.net, "{\"host\":\"other.test\",\"port\":80,\"address\":null,"
                               "\"verdict\":\"refused\"");
    expect_in("record", r.net, "{\"host\":\"other.test\",\"port\":443,\"address\":null,"
                               "\"verdict\":\"refused\"");
    expect_in("record", r.net, "{\"host\":\"other.test\",\"port\":8080,\"address\":\"" PUBLIC
                               "\",\"verdict\":\"allowed\"");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(interim_answer_and_connection_close)
{
    world();
    run r = envelope("curl -sS -m 30 -D - -H 'Expect: 100-continue' --data-binary abcdef "
                     "http://allowed.test/post");
    expect_in("interim", r.out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n");
    expect_in("final head", r.out, "Connection: close\r\n\r\ngot 6 bytes\n");
    ck_assert_msg(!strcasestr(r.out, "keep-alive"), "%s", r.out);
    run_free(&r);
    world_end();
}
END_TEST

/* 64 MiB each way, through a CONNECT tunnel and plain forwarding: the
 * backpressure paths lose nothing. */
START_TEST(bulk_both_ways)
{
    world();
    run r = envelope("head -c 67108864 /dev/zero > big; "
                     "curl -sS -m 60 -p --data-binary @big http://allowed.test:443/post; "
                     "curl -sS -m 60 -H 'Expect:' --data-binary @big http://allowed.test/post; "
                     "curl -sS -m 60 -p http://allowed.test:443/big | wc -c; "
                     "curl -sS -m 60 -x \"$ALL_PROXY\" http://allowed.test/big | wc -c; rm big");
    expect_in("uploads", r.out, "got 67108864 bytes\ngot 67108864 bytes\n67108864\n67108864\n");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(redirect_second_hop_refused)
{
    world();
    run r = envelope(CURL "-L http://allowed.test/redirect; curl -sS -m 30 http://allowed.test/");
    expect_in("second hop", r.out, "403\n");
    expect_in("control", r.out, "hello from allowed.test at");
    const char *first = strstr(r.net, "\"host\":\"allowed.test\"");
    const char *second = strstr(r.net, "\"host\":\"denied.test\",\"port\":80,\"address\":null,"
                                       "\"verdict\":\"refused\"");
    ck_assert_msg(first && second && first < second, "records: %s", r.net);
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(next_address_of_the_answer)
{
    world();
    run r = envelope("curl -sS -m 30 http://multi.test/; curl -sS -m 30 -x \"$ALL_PROXY\" "
                     "http://multi.test/s");
    expect_in("fallback", r.out, "hello from multi.test at " PUBLIC ":80\nhello from multi.test");
    expect_in("record", r.net, "{\"host\":\"multi.test\",\"port\":80,\"address\":\"" PUBLIC
                               "\",\"verdict\":\"allowed\"");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(private_address_needs_a_literal)
{
    world();
    /* private.test is allowed by name but resolves to 127.0.0.1, where a
     * server does listen (host side). */
    run r = envelope(CURL "http://private.test/; curl -sS -m 30 http://allowed.test/");
    expect_in("refused", r.out, "403\n");
    expect_in("control", r.out, "hello from allowed.test");
    expect_in("record", r.net,
              "{\"host\":\"private.test\",\"port\":80,\"address\":\"127.0.0.1\",\"verdict\":"
              "\"refused\",\"rule\":\"private.test resolved to 127.0.0.1, a loopback address, "
              "which only a literal-address pattern may reach\"}");
    run_free(&r);
    /* The server is there: the refusal is the proxy's. */
    ck_assert_int_eq(sh("curl -sS -m 10 -o /dev/null http://127.0.0.1/"), 0);
    world_end();
}
END_TEST

static void bypass(bool as_user)
{
    world_as(as_user);
    /* The server is reachable from the test's namespace... */
    ck_assert_int_eq(sh("curl -sS -m 10 -o /dev/null http://" PUBLIC "/"), 0);
    /* ...but not from the envelope without the proxy: no route out for
     * TCP, UDP or DNS; through the proxy the control works. */
    run r = envelope("curl -sS -m 10 --noproxy '*' http://" PUBLIC "/; echo \"tcp $?\"; "
                     "curl -sS -m 10 --noproxy '*' http://allowed.test/; echo \"tcp-name $?\"; "
                     "echo x | timeout 5 /usr/bin/env bash -c 'echo x > /dev/udp/" PUBLIC
                     "/53' 2>&1; echo \"udp $?\"; "
                     "getent ahosts no-such-name.example; echo \"dns $?\"; "
                     "curl -sS -m 30 http://allowed.test/");
    expect_in("tcp", r.out, "tcp 7\n");       /* couldn't connect */
    expect_in("tcp-name", r.out, "tcp-name 7\n");
    expect_in("udp", r.out, "Network is unreachable");
    expect_in("dns", r.out, "dns 2\n");
    expect_in("control", r.out, "hello from allowed.test");
    run_free(&r);
    world_end();
}

START_TEST(bypass_tcp_udp_dns_fail)
{
    bypass(false);
}
END_TEST

START_TEST(bypass_tcp_udp_dns_fail_as_the_user)
{
    bypass(true);
}
END_TEST

START_TEST(dns_bound)
{
    world();
    /* slow.test is allowed but in no hosts file; the resolver never
     * answers: 504 after the bound, while the control goes through. */
    run r = envelope("date +%s; " CURL "http://slow.test/; date +%s; "
                     "curl -sS -m 30 http://allowed.test/");
    long t0 = 0, t1 = 0;
    char code[16] = "";
    ck_assert_msg(sscanf(r.out, "%ld\n%15s\n%ld", &t0, code, &t1) == 3, "%s", r.out);
    ck_assert_str_eq(code, "504");
    ck_assert_msg(t1 - t0 >= GK_NET_DNS_S - 1 && t1 - t0 <= GK_NET_DNS_S + 3,
                  "resolving took %ld s", t1 - t0);
    expect_in("control", r.out, "hello from allowed.test");
    expect_in("record", r.net, "{\"host\":\"slow.test\",\"port\":80,\"address\":null,"
                               "\"verdict\":\"allowed\",\"rule\":\"allow slow.test (table:4)\"}");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(header_over_the_bound)
{
    world();
    gk_autofree char *big = gk_malloc(GK_NET_MAX_HEADER + 1);
    memset(big, 'a', GK_NET_MAX_HEADER);
    big[GK_NET_MAX_HEADER] = '\0';
    gk_autofree char *script = gk_printf("curl -sS -m 30 -o /dev/null -w '%%{http_code}\\n' "
                                         "-H 'X-Big: %s' http://allowed.test/; "
                                              "curl -sS -m 30 -H 'X-Small: %.8000s' "
                                              "http://allowed.test/",
                                         big, big);
    run r = envelope(script);
    expect_in("oversize", r.out, "431\n");
    expect_in("control", r.out, "hello from allowed.test");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(concurrency_bound)
{
    world();
    /* 300 requests held open at once (the server sleeps): the first 256
     * get through, the others 503; then a control. */
    gk_buf urls = {0};
    for (int i = 0; i < 300; i++)
        gk_buf_puts(&urls, "http://allowed.test/slow ");
    gk_autofree char *u = gk_buf_steal(&urls, NULL);
    gk_autofree char *script =
        gk_printf("curl -s -m 60 --parallel --parallel-immediate --parallel-max 300 "
                  "-w '%%{http_code}\\n' -o /dev/null %s | sort | uniq -c; "
                  "curl -sS -m 30 http://allowed.test/",
                  u);
    run r = envelope(script);
    expect_in("within the bound", r.out, "256 200\n");
    expect_in("beyond it", r.out, "44 503\n");
    expect_in("control", r.out, "hello from allowed.test");
    run_free(&r);
    world_end();
}
END_TEST

/* The proxy killed mid-run (from outside: the command cannot reach it):
 * the command's next connection fails, and the run says the proxy ended. */
START_TEST(proxy_ended_during_the_run)
{
    world();
    gk_autofree char *m1 = gk_printf("%s/m1", workdir), *m2 = gk_printf("%s/m2", workdir);
    gk_autofree char *script = gk_printf("curl -sS -m 30 http://allowed.test/; touch %s; "
                                         "while [ ! -e %s ]; do sleep 0.1; done; "
                                         "curl -sS -m 10 http://allowed.test/; echo \"after $?\"",
                                         m1, m2);
    pid_t pid = envelope_start(script);
    struct stat st;
    for (int i = 0; i < 600 && stat(m1, &st) < 0; i++)
        usleep(50000);
    ck_assert_int_eq(stat(m1, &st), 0);
    /* The proxy is the launching process's child named grantrun-proxy. */
    gk_autofree char *kids_path = gk_printf("/proc/%d/task/%d/children", (int)pid, (int)pid);
    gk_autofree char *kids = gk_test_read(kids_path, NULL);
    ck_assert_ptr_nonnull(kids);
    int killed = 0;
    for (char *save = NULL, *tok = strtok_r(kids, " \n", &save); tok;
         tok = strtok_r(NULL, " \n", &save)) {
        gk_autofree char *comm_path = gk_printf("/proc/%s/comm", tok);
        gk_autofree char *comm = gk_test_read(comm_path, NULL);
        if (comm && strcmp(comm, "grantrun-proxy\n") == 0 && kill(atoi(tok), SIGKILL) == 0)
            killed++;
    }
    ck_assert_int_eq(killed, 1);
    write_file(m2, "");
    run r = envelope_finish(pid);
    expect_in("before", r.out, "hello from allowed.test");
    ck_assert_msg(strstr(r.out, "after ") && !strstr(r.out, "after 0"), "%s", r.out);
    expect_in("said", r.err, "proxy-ended 9\n");
    expect_in("record", r.net, "\"host\":\"allowed.test\"");
    run_free(&r);
    world_end();
}
END_TEST

/* The relay is out of the command's reach: kill -9 -1 leaves the network
 * as it was, the port cannot be taken over, and the handoff socket takes
 * nothing more once the helper used it. */
START_TEST(relay_out_of_reach)
{
    world();
    run r = envelope("kill -9 -1; sleep 0.2; curl -sS -m 30 http://allowed.test/; "
                     "timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128' 2>/dev/null && "
                     "echo connect-ok; "
                     "curl -sS -m 5 --unix-socket /.grantkit-net-handoff.sock http://x/; "
                     "echo \"handoff $?\"; "
                     /* the unix socket, bound inside, though its host path is gone */
                     "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
                     "s.connect(\"/.grantkit-net.sock\"); "
                     "s.sendall(b\"GET http://allowed.test/u HTTP/1.1\\r\\nHost: allowed.test"
                     "\\r\\n\\r\\n\"); print(s.recv(4096).decode())'");
    expect_in("still there", r.out, "hello from allowed.test");
    expect_in("unix socket", r.out, "Connection: close\r\n\r\nhello from allowed.test");
    expect_in("port", r.out, "connect-ok\n");
    expect_in("handoff closed", r.out, "handoff 7\n");
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(record_bound)
{
    world();
    /* 1,005 refusals and a control: 1,000 kept, the rest counted. */
    run r = envelope("curl -s -o /dev/null 'http://denied.test/[1-1005]'; "
                     "curl -sS -m 30 http://allowed.test/");
    expect_in("control", r.out, "hello from allowed.test");
    expect_in("record", r.net, "\"omitted\":6}");
    size_t n = 0;
    for (const char *p = r.net; (p = strstr(p, "\"host\":")); p++)
        n++;
    ck_assert_int_eq(n, GK_NET_RECORDS);
    run_free(&r);
    world_end();
}
END_TEST

START_TEST(git_clone_over_http)
{
    world();
    ck_assert_int_eq(sh("git init -q -b main src.git.work && cd src.git.work && "
                        "echo hello > README && git add README && "
                        "git -c user.name=t -c user.email=t@t commit -q -m one && "
                        "git clone -q --bare . ../src.git"),
                     0);
    run r = envelope("git clone -q http://allowed.test/git/src.git dst && cat dst/README; "
                     "git clone -q http://denied.test/git/src.git dst2; echo \"denied $?\"");
    expect_in("clone", r.out, "hello\n");
    expect_in("denied", r.out, "denied 128");
    expect_in("git's message", r.err, "403");
    expect_in("record", r.net, "\"host\":\"allowed.test\",\"port\":80,\"address\":\"" PUBLIC
                               "\",\"verdict\":\"allowed\"");
    run_free(&r);
    world_end();
}
END_TEST

/* The policy's own net block through grantrun: the gate decides, the
 * refusals are the last lines of stderr, --report carries the record;
 * a literal-address pattern reaches loopback, a name pointing there does
 * not. */
static void grantrun_policy(bool as_user)
{
    world_as(as_user);
    gk_autofree char *pol = gk_printf("%s/t.grant", workdir);
    gk_autofree char *text = gk_printf("grant t {\n"
                                       "    fs { write %s; }\n"
                                       "    net {\n"
                                       "        allow allowed.test *.apps.test other.test:8080\n"
                                       "              127.0.0.1:80 [::1]:8081 private.test;\n"
                                       "        deny bad.apps.test;\n"
                                       "    }\n"
                                       "}\n",
                                       workdir);
    write_file(pol, text);
    gk_autofree char *report = gk_printf("%s/report.json", workdir);
    const char *script = "curl -sS -m 30 http://allowed.test/; curl -sS -m 30 http://x.apps.test/; "
                         CURL "http://bad.apps.test/; " CURL
                         "http://elsewhere.example/; curl -sS -m 30 http://127.0.0.1/; "
                         "curl -sS -m 30 'http://[::1]:8081/'; " CURL "'http://[::1]:8082/'; "
                         "curl -sS -m 30 -x \"$ALL_PROXY\" 'http://[::1]:8081/s'; " CURL
                         "http://private.test/; true";
    const char *args[] = {"-p", pol, "--report", report, "--", "sh", "-c", script, NULL};
    run r = grantrun(args);
    ck_assert_msg(r.status == 0, "status %d: %s\n%s", r.status, r.out, r.err);
    expect_in("control", r.out, "hello from allowed.test at " PUBLIC ":80");
    expect_in("literal", r.out, "hello from 127.0.0.1 at 127.0.0.1:80");
    expect_in("literal v6", r.out, "hello from [::1]:8081 at ::1:8081\n403\nhello from [::1]:8081");
    expect_in("wildcard", r.out, "hello from x.apps.test at " PUBLIC ":80");
    gk_autofree char *deny = gk_printf("grantrun: net: refused bad.apps.test:80 (deny bad.apps.test; "
                                       "rule %s:6)\n",
                                       pol);
    gk_autofree char *none = gk_printf("grantrun: net: refused elsewhere.example:80 (no allow rule "
                                       "matches; rule %s:3)\n",
                                       pol);
    expect_in("stderr", r.err, deny);
    expect_in("stderr", r.err, none);
    expect_in("stderr v6", r.err, "grantrun: net: refused [::1]:8082 (no allow rule matches; ");
    expect_in("stderr", r.err, "grantrun: net: refused private.test:80 (private.test resolved to "
                               "127.0.0.1, a loopback address, which only a literal-address "
                               "pattern may reach)\n");
    gk_autofree char *rep = gk_test_read(report, NULL);
    ck_assert_ptr_nonnull(rep);
    gk_autofree char *allowed = gk_printf("\"host\":\"allowed.test\",\"port\":80,"
                                          "\"address\":\"" PUBLIC "\","
                                          "\"verdict\":\"allowed\",\"rule\":"
                                          "\"allow allowed.test; rule %s:4\"",
                                          pol);
    expect_in("report", rep, allowed);
    expect_in("report", rep, "\"omitted\":0");
    expect_in("report", rep, "\"level\":\"namespaces\"");
    run_free(&r);
    world_end();
}

START_TEST(grantrun_with_a_net_block)
{
    grantrun_policy(false);
}
END_TEST

START_TEST(grantrun_with_a_net_block_as_the_user)
{
    grantrun_policy(true);
}
END_TEST

/* A listening Unix stream socket of the test's: a path, or an abstract name. */
static int test_listener(const char *name, bool abstract)
{
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    ck_assert_uint_lt(len + 1, sizeof(sa.sun_path));
    memcpy(sa.sun_path + abstract, name, len);
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + len + !abstract);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sl), 0);
    ck_assert_int_eq(listen(s, 512), 0);
    if (!abstract)
        ck_assert_int_eq(chmod(name, 0777), 0);
    return s;
}

/* Nothing ever connected to it: its queue is empty (a connection stays
 * queued until accepted, even once its client closed). */
static void never_reached(int listener, const char *what)
{
    ck_assert_int_eq(fcntl(listener, F_SETFL, O_NONBLOCK), 0);
    int c = accept(listener, NULL, NULL);
    ck_assert_msg(c < 0 && errno == EAGAIN, "%s was reached", what);
    close(listener);
}

/* The landlock level (network.md §2, last item): no namespace, no relay;
 * the proxy reached through its Unix socket only (ALL_PROXY socks5h), and
 * every connect(2) answered by grantrun's supervisor. An allowed name
 * through curl, a denied one with its record, direct TCP and UDP, another
 * Unix socket file in a write region, an abstract socket, and the TOCTOU
 * race on the address (a thread flipping sun_path between the proxy's
 * path and the other socket's while another connects): the other
 * listeners are never reached, while the controls get through in the same
 * run. On the hosts check_level makes that refuse user namespaces (none
 * at all: a bwrap --disable-userns nest; no mount in them: tests/nomount)
 * auto chooses the level. */
typedef enum ll_host { LL_FORCED, LL_NO_USERNS, LL_NO_MOUNT } ll_host;

static void landlock_level(bool as_user, ll_host host)
{
    world_as(as_user);
    gk_autofree char *pol = gk_printf("%s/t.grant", workdir);
    gk_autofree char *text = gk_printf("grant t {\n"
                                       "    fs { write %s; }\n"
                                       "    net { allow allowed.test; }\n"
                                       "}\n",
                                       workdir);
    write_file(pol, text);
    gk_autofree char *other = gk_printf("%s/other.sock", workdir);
    int other_fd = test_listener(other, false);
    char abstract[64];
    snprintf(abstract, sizeof(abstract), "gk-net-abstract-%d", (int)getpid());
    int abstract_fd = test_listener(abstract, true);
    gk_autofree char *probe = gk_printf("%s/escape-probe", workdir);
    gk_autofree char *built = gk_printf("%s/tests/escape-probe", gk_test_builddir());
    gk_test_copy(built, probe, 0755);
    gk_autofree char *report = gk_printf("%s/report.json", workdir);
    gk_autofree char *script = gk_printf(
        "echo \"env [${HTTP_PROXY-unset}] [${HTTPS_PROXY-unset}] [${http_proxy-unset}] "
        "[${https_proxy-unset}] [$NO_PROXY] [$no_proxy]\"; "
        "[ \"$ALL_PROXY\" = \"socks5h://localhost$GRANTKIT_PROXY_SOCKET\" ] && "
        "[ \"$all_proxy\" = \"$ALL_PROXY\" ] && [ -S \"$GRANTKIT_PROXY_SOCKET\" ] && "
        "echo \"socket $GRANTKIT_PROXY_SOCKET\"; "
        "curl -sS -m 30 http://allowed.test/; "
        "curl -sS -m 30 http://denied.test/; echo \"denied $?\"; "
        "curl -sS -m 10 --noproxy '*' http://" PUBLIC "/; echo \"tcp $?\"; "
        /* the other socket also by a symlink beside the proxy's, its name one
         * byte off (so the flipped address is always one of the two) */
        "link=\"${GRANTKIT_PROXY_SOCKET%%?}X\"; ln -s %s \"$link\"; "
        "./escape-probe tcp:" PUBLIC ":80 udp:" PUBLIC ":53 unix:%s \"unix:$link\" abstract:%s "
        "\"unix:$GRANTKIT_PROXY_SOCKET\" \"unix-flip:$GRANTKIT_PROXY_SOCKET:$link\"; "
        /* the proxy's own path (in the command's TMPDIR) replaced by a
         * symlink to the other socket: grantrun connects its own address */
        "rm \"$GRANTKIT_PROXY_SOCKET\" && ln -s %s \"$GRANTKIT_PROXY_SOCKET\" && "
        "./escape-probe \"socks:$GRANTKIT_PROXY_SOCKET\"; "
        "curl -sS -m 30 http://allowed.test/again",
        other, other, abstract, other);
    const char *args[] = {"--level", host == LL_FORCED ? "landlock" : "auto",
                          "--report", report, "-p", pol, "--", "sh", "-c", script, NULL};
    gk_autofree char *nomount = gk_printf("%s/tests/nomount", gk_test_builddir());
    const char *const nest[] = {BWRAP, "--unshare-user", "--disable-userns", "--dev-bind", "/",
                                "/", "--", NULL};
    const char *const wrap_nomount[] = {nomount, NULL};
    run r = grantrun_via(host == LL_NO_USERNS ? nest : host == LL_NO_MOUNT ? wrap_nomount : NULL,
                         args);
    ck_assert_msg(r.status == 0, "status %d: %s\n%s", r.status, r.out, r.err);
    expect_in("no HTTP proxy", r.out, "env [unset] [unset] [unset] [unset] [] []\n");
    expect_in("the socket", r.out, "socket /tmp/grantkit-run-");
    expect_in("denied", r.out, "denied 97\n"); /* the SOCKS reply: not allowed by ruleset */
    expect_in("direct TCP", r.out, "tcp 7\n");
    expect_in("probe", r.out, "\ntcp=ERR:EPERM\nudp=ERR:EPERM\nunix=ERR:EACCES\n"
                              "unix=ERR:EACCES\nabstract=ERR:EACCES\nunix=OK\n");
    unsigned long via = 0, eacces = 0, elsewhere = 1, errors = 1;
    const char *flip = strstr(r.out, "unix-flip=");
    ck_assert_msg(flip && sscanf(flip, "unix-flip=proxy:%lu eacces:%lu elsewhere:%lu errors:%lu",
                                 &via, &eacces, &elsewhere, &errors) == 4,
                  "%s", r.out);
    /* both addresses were asked, many times (the race ran), and only the
     * proxy ever answered */
    ck_assert_msg(via >= 20 && eacces >= 20 && elsewhere == 0 && errors == 0, "%s", flip);
    expect_in("control before", r.out, "hello from allowed.test at " PUBLIC ":80\ndenied 97\n");
    expect_in("the path replaced", flip, "\nsocks=OK\nhello from allowed.test at " PUBLIC
                                         ":80\n");
    gk_autofree char *refused = gk_printf("grantrun: net: refused denied.test:80 (no allow rule "
                                          "matches; rule %s:3)\n",
                                          pol);
    expect_in("stderr", r.err, refused);
    gk_autofree char *rep = gk_test_read(report, NULL);
    ck_assert_ptr_nonnull(rep);
    expect_in("report", rep, "\"level\":\"landlock\"");
    gk_autofree char *allowed = gk_printf("{\"host\":\"allowed.test\",\"port\":80,"
                                          "\"address\":\"" PUBLIC "\",\"verdict\":\"allowed\","
                                          "\"rule\":\"allow allowed.test; rule %s:3\"}",
                                          pol);
    expect_in("report", rep, allowed);
    expect_in("report", rep, "{\"host\":\"denied.test\",\"port\":80,\"address\":null,"
                             "\"verdict\":\"refused\"");
    expect_in("report", rep, "only programs that use a SOCKS5 proxy on a Unix socket");
    never_reached(other_fd, "the other socket file");
    never_reached(abstract_fd, "the abstract socket");
    run_free(&r);
    world_end();
}

START_TEST(landlock_level_unix_socket_only)
{
    landlock_level(false, LL_FORCED);
}
END_TEST

START_TEST(landlock_level_unix_socket_only_as_the_user)
{
    landlock_level(true, LL_FORCED);
}
END_TEST

START_TEST(landlock_level_chosen_by_auto_without_mounts)
{
    landlock_level(false, LL_NO_MOUNT);
}
END_TEST

START_TEST(landlock_level_chosen_by_auto_without_mounts_as_the_user)
{
    landlock_level(true, LL_NO_MOUNT);
}
END_TEST

START_TEST(landlock_level_chosen_by_auto_without_userns)
{
    landlock_level(false, LL_NO_USERNS);
}
END_TEST

START_TEST(landlock_level_chosen_by_auto_without_userns_as_the_user)
{
    landlock_level(true, LL_NO_USERNS);
}
END_TEST

/* The frame protocol at the landlock level (grantrun --isolate process):
 * the run-result's network member carries the same proxy's decisions. */
START_TEST(landlock_level_frame_network_member)
{
    world();
    gk_autofree char *pol = gk_printf("%s/t.grant", workdir);
    gk_autofree char *text = gk_printf("grant t {\n"
                                       "    fs { write %s; }\n"
                                       "    net { allow allowed.test; }\n"
                                       "}\n",
                                       workdir);
    write_file(pol, text);
    const char *args[] = {"--isolate", "process", "--json", "--level", "landlock", "-p", pol,
                          "--", "sh", "-c",
                          "curl -sS -m 30 http://allowed.test/ && curl -sS -m 30 "
                          "http://denied.test/; echo \"denied $?\"",
                          NULL};
    run r = grantrun(args);
    ck_assert_msg(r.status == 0, "status %d: %s\n%s", r.status, r.out, r.err);
    expect_in("result", r.out, "\"level\":\"landlock\"");
    expect_in("result", r.out, "\"network\":{\"connections\":[{\"host\":\"allowed.test\","
                               "\"port\":80,\"address\":\"" PUBLIC "\",\"verdict\":\"allowed\"");
    expect_in("result", r.out, "{\"host\":\"denied.test\",\"port\":80,\"address\":null,"
                               "\"verdict\":\"refused\"");
    run_free(&r);
    world_end();
}
END_TEST

/* Without destination lists the record's network member is null; the
 * rest of it is the enforcement record. */
START_TEST(report_without_lists)
{
    char tmpl[] = "/var/tmp/gk-net-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    gk_autofree char *pol = gk_printf("%s/p.grant", tmpl), *rep = gk_printf("%s/r.json", tmpl);
    write_file(pol, "grant p { net deny; }\n");
    gk_autofree char *bin = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    setenv("GRANTKIT_HELPER", helper, 1);
    char *argv[] = {bin, "-p", pol, "--report", rep, "--", "true", NULL};
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(gk_test_run(argv, NULL, &out, &err), 0);
    gk_autofree char *got = gk_test_read(rep, NULL);
    ck_assert_ptr_nonnull(got);
    size_t n = strlen(got);
    ck_assert_msg(n > 18 && strcmp(got + n - 17, ",\"network\":null}\n") == 0 &&
                      strncmp(got, "{\"bwrapVersion\":", 16) == 0 && strstr(got, "\"level\":"),
                  "%s", got);
    free(out);
    free(err);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", tmpl);
    sh(cmd);
}
END_TEST

/* The idle bound (300 s; `make check-net-idle`, not part of make check):
 * a tunnel with no byte either way is closed after it, while one whose
 * server side sends a byte a minute (its client never does) stays. */
START_TEST(idle_bound)
{
    world();
    start_raw_server(7000, 0);
    start_raw_server(7001, 60);
    gk_autofree char *t = gk_printf("%s/t.sh", workdir);
    write_file(t, "exec 3<>/dev/tcp/127.0.0.1/3128\n"
                  "printf 'CONNECT allowed.test:%s HTTP/1.1\\r\\n\\r\\n' \"$1\" >&3\n"
                  "read -r status <&3; read -r blank <&3; echo \"$status\"\n"
                  "timeout 340 cat <&3 >/dev/null\n"
                  "echo \"rc $? at $SECONDS\"\n");
    run_timeout_ms = 400000;
    run r = envelope("bash t.sh 7000 > quiet.out & bash t.sh 7001 > busy.out & wait; "
                     "cat quiet.out busy.out");
    run_timeout_ms = 90000;
    long quiet_at = -1, busy_at = -1;
    int quiet_rc = -1, busy_rc = -1;
    const char *qa = strstr(r.out, "rc "), *ba = qa ? strstr(qa + 1, "rc ") : NULL;
    ck_assert_msg(qa && ba && sscanf(qa, "rc %d at %ld", &quiet_rc, &quiet_at) == 2 &&
                      sscanf(ba, "rc %d at %ld", &busy_rc, &busy_at) == 2,
                  "%s\n%s", r.out, r.err);
    ck_assert_msg(quiet_rc == 0 && quiet_at >= GK_NET_IDLE_S - 2 && quiet_at <= GK_NET_IDLE_S + 10,
                  "the quiet tunnel: %s", r.out);
    ck_assert_msg(busy_rc == 124, "the busy tunnel ended before its timeout: %s", r.out);
    run_free(&r);
    world_end();
}
END_TEST

/* The handoff takes one try, and only with the run's token. */
START_TEST(handoff_needs_the_token)
{
    world();
    for (int round = 0; round < 2; round++) {
        gk_autofree char *sock = gk_printf("%s/p%d.sock", workdir, round),
                         *ctl = gk_printf("%s/c%d.sock", workdir, round);
        gk_proxy_opts po = {sock, ctl, "0123456789abcdef", true, table_decide, NULL, NULL};
        gk_proxy *px = NULL;
        ck_assert_int_eq(gk_proxy_start(&po, &px), 0);
        const char *step = NULL;
        unsigned port = 5000 + (unsigned)round;
        if (round == 0) {
            ck_assert_int_lt(gk_relay_handoff(port, "0123456789abcdeX", ctl, &step), 0);
            ck_assert_str_eq(step, "relay: the proxy did not take the listeners");
            /* one try: the right token is too late now */
            ck_assert_int_lt(gk_relay_handoff(port + 10, "0123456789abcdef", ctl, &step), 0);
        } else {
            ck_assert_int_eq(gk_relay_handoff(port, "0123456789abcdef", ctl, &step), 0);
            /* served, and the paths are gone */
            gk_autofree char *cmd =
                gk_printf("curl -sS -m 10 -o /dev/null -x http://127.0.0.1:%u "
                          "http://allowed.test/", port);
            ck_assert_int_eq(sh(cmd), 0);
            struct stat st;
            ck_assert_int_lt(stat(sock, &st), 0);
            ck_assert_int_lt(stat(ctl, &st), 0);
        }
        gk_proxy_stop(px, NULL);
    }
    world_end();
}
END_TEST

START_TEST(address_ranges)
{
    static const struct {
        const char *a;
        bool refused;
    } rows[] = {
        {"11.0.0.1", false},       {"8.8.8.8", false},        {"127.0.0.1", true},
        {"10.1.2.3", true},        {"172.16.0.1", true},      {"172.32.0.1", false},
        {"192.168.1.1", true},     {"169.254.169.254", true}, {"169.254.1.1", true},
        {"100.64.0.1", true},      {"100.128.0.1", false},    {"224.0.0.1", true},
        {"0.0.0.0", true},         {"192.0.2.1", true},       {"198.51.100.1", true},
        {"203.0.113.1", true},     {"255.255.255.255", true}, {"::1", true},
        {"::", true},              {"::ffff:8.8.8.8", true},  {"::ffff:127.0.0.1", true},
        {"fe80::1", true},         {"fc00::1", true},         {"fd12::1", true},
        {"ff02::1", true},         {"2001:db8::1", true},     {"2606:4700::1", false},
        {"64:ff9b::808:808", false}, {"64:ff9b::a00:1", true}, {"2002:a00:1::", true},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        const char *why = NULL;
        ck_assert_msg(gk_net_address_refused(rows[i].a, &why) == rows[i].refused, "%s: %s",
                      rows[i].a, why ? why : "allowed");
    }
}
END_TEST

static Suite *net_suite(void)
{
    Suite *s = suite_create("net");
    TCase *t = tcase_create("proxy");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, address_ranges);
    tcase_add_test(t, report_without_lists);
    tcase_add_test(t, http_proxy_allowed_and_denied);
    tcase_add_test(t, http_proxy_allowed_and_denied_as_the_user);
    tcase_add_test(t, bypass_tcp_udp_dns_fail_as_the_user);
    tcase_add_test(t, dns_bound);
    tcase_add_test(t, grantrun_with_a_net_block);
    tcase_add_test(t, grantrun_with_a_net_block_as_the_user);
    tcase_add_test(t, socks5h_allowed_and_denied);
    tcase_add_test(t, connect_tunnel_and_other_port);
    tcase_add_test(t, redirect_second_hop_refused);
    tcase_add_test(t, bulk_both_ways);
    tcase_add_test(t, interim_answer_and_connection_close);
    tcase_add_test(t, private_address_needs_a_literal);
    tcase_add_test(t, next_address_of_the_answer);
    tcase_add_test(t, bypass_tcp_udp_dns_fail);
    tcase_add_test(t, header_over_the_bound);
    tcase_add_test(t, concurrency_bound);
    tcase_add_test(t, git_clone_over_http);
    tcase_add_test(t, record_bound);
    tcase_add_test(t, relay_out_of_reach);
    tcase_add_test(t, handoff_needs_the_token);
    tcase_add_test(t, proxy_ended_during_the_run);
    tcase_add_test(t, landlock_level_unix_socket_only);
    tcase_add_test(t, landlock_level_unix_socket_only_as_the_user);
    tcase_add_test(t, landlock_level_chosen_by_auto_without_mounts);
    tcase_add_test(t, landlock_level_chosen_by_auto_without_mounts_as_the_user);
    tcase_add_test(t, landlock_level_chosen_by_auto_without_userns);
    tcase_add_test(t, landlock_level_chosen_by_auto_without_userns_as_the_user);
    tcase_add_test(t, landlock_level_frame_network_member);
    suite_add_tcase(s, t);
    /* Five minutes and more: only when asked (make check-net-idle). */
    if (getenv("GK_NET_IDLE_TEST")) {
        TCase *idle = tcase_create("idle");
        tcase_set_timeout(idle, 420);
        tcase_add_test(idle, idle_bound);
        suite_add_tcase(s, idle);
    }
    return s;
}

int main(void)
{
    return gk_test_main(net_suite());
}
