/* check_level.c - the levels of confinement (issue 11) on real hosts that
 * refuse user namespaces, made inside the suite:
 *
 *   no-userns  grantrun nested in `bwrap --unshare-user --disable-userns
 *              --dev-bind / /`: no user namespace can be created at all;
 *   no-mount   grantrun under tests/nomount: user namespaces are created,
 *              but every mount in them fails (as with Ubuntu's AppArmor
 *              restriction: bwrap dies in "Failed to make / slave");
 *   host       this machine as it is (namespaces allowed).
 *
 * The attack list of the issue runs at both levels, each attack beside a
 * control that succeeds, as root and as the unprivileged user; auto
 * refuses a policy that would lose a rule (125, the exact list) and runs
 * one that loses nothing; --report and grantc audit --level agree on
 * every bundled policy.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <netinet/in.h>
#include <unistd.h>

typedef enum host_kind { HOST, NO_USERNS, NO_MOUNT } host_kind;

static char *base, *project, *probe;
static uid_t user_uid;
static gid_t user_gid;
static bool have_user;
/* the host's side of the attacks */
static int tcp_fd = -1, udp_fd = -1, abstract_fd = -1, unix_fd = -1, dgram_fd = -1;
static int tcp_port, udp_port;
static char abstract_name[64];
static pid_t victim = -1;

static int listen_inet(int type, int *port)
{
    int s = socket(AF_INET, type, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &len), 0);
    if (type == SOCK_STREAM)
        ck_assert_int_eq(listen(s, 8), 0);
    *port = ntohs(sa.sin_port);
    return s;
}

static int listen_unix(const char *name, bool abstract)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(sa.sun_path + abstract, name, len);
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + len + !abstract);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sl), 0);
    ck_assert_int_eq(listen(s, 8), 0);
    return s;
}

static void setup(void)
{
    have_user = gk_test_user(&user_uid, &user_gid);
    char tmpl[] = "/var/tmp/gk-level-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_int_eq(chmod(tmpl, 0755), 0);
    base = gk_strdup(tmpl);
    project = gk_printf("%s/project", base);
    gk_autofree char *mk = gk_printf("mkdir -p %s/sub %s/hooks %s/bin %s/opt %s/outside", project,
                                     project, base, base, base);
    ck_assert_int_eq(system(mk), 0);
    probe = gk_printf("%s/bin/escape-probe", base);
    gk_autofree char *built = gk_printf("%s/tests/escape-probe", gk_test_builddir());
    gk_test_copy(built, probe, 0755);
    gk_autofree char *mkold = gk_printf("mkdir -p %s/opt/old", base);
    ck_assert_int_eq(system(mkold), 0);
    gk_autofree char *old = gk_printf("%s/opt/old/p", base);
    gk_test_copy("/usr/bin/true", old, 0755);
    gk_autofree char *vetoed = gk_printf("%s/opt/vetoed", base);
    gk_autofree char *admitted = gk_printf("%s/opt/admitted", base);
    gk_test_copy("/usr/bin/true", vetoed, 0755);
    gk_test_copy("/usr/bin/true", admitted, 0755);
    gk_autofree char *hello = gk_printf("%s/hello.txt", project);
    gk_test_write(hello, "hello from the project\n", 0644);
    gk_autofree char *hook = gk_printf("%s/hooks/h", project);
    gk_test_write(hook, "#!/bin/sh\n", 0644);
    gk_autofree char *secret = gk_printf("%s/secret", base);
    gk_test_write(secret, "outside every region\n", 0644);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    gk_autofree char *pp = gk_test_path("policies");
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", pp, 1), 0);
    ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
    ck_assert_int_eq(setenv("HOME", base, 1), 0);
    ck_assert_int_eq(chdir(project), 0);

    tcp_fd = listen_inet(SOCK_STREAM, &tcp_port);
    udp_fd = listen_inet(SOCK_DGRAM, &udp_port);
    snprintf(abstract_name, sizeof(abstract_name), "gk-level-%d", (int)getpid());
    abstract_fd = listen_unix(abstract_name, true);
    gk_autofree char *sock = gk_printf("%s/outside/s.sock", base);
    unix_fd = listen_unix(sock, false);
    ck_assert_int_eq(chmod(sock, 0777), 0);
    /* a host datagram socket file (as /dev/log), outside every region */
    gk_autofree char *dsock = gk_printf("%s/outside/d.sock", base);
    dgram_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un da = {.sun_family = AF_UNIX};
    strncpy(da.sun_path, dsock, sizeof(da.sun_path) - 1);
    ck_assert_int_eq(bind(dgram_fd, (struct sockaddr *)&da, sizeof(da)), 0);
    ck_assert_int_eq(chmod(dsock, 0777), 0);
}

/* A host process of the user the run has (root, or the test user). */
static void start_victim(bool as_user)
{
    victim = fork();
    ck_assert_int_ge(victim, 0);
    if (victim == 0) {
        if (as_user && geteuid() == 0 && (setgid(user_gid) < 0 || setuid(user_uid) < 0))
            _exit(1);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        for (;;)
            pause();
    }
}

static void teardown(void)
{
    if (victim > 0) {
        kill(victim, SIGKILL);
        waitpid(victim, NULL, 0);
        victim = -1;
    }
    int *fds[] = {&tcp_fd, &udp_fd, &abstract_fd, &unix_fd, &dgram_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
    free(base);
    free(project);
    free(probe);
}

static void give_project(void)
{
    gk_autofree char *cmd = gk_printf("chown -R %u:%u '%s'", (unsigned)user_uid,
                                      (unsigned)user_gid, project);
    ck_assert_int_eq(system(cmd), 0);
}

/* A policy file in the project (so it is a policy source inside the write
 * region): every "@B" replaced by the scratch tree. */
static char *policy(const char *name, const char *text)
{
    gk_buf b = {0};
    for (const char *p = text; *p; p++) {
        if (p[0] == '@' && p[1] == 'B') {
            gk_buf_puts(&b, base);
            p++;
        } else {
            gk_buf_putc(&b, *p);
        }
    }
    gk_autofree char *body = gk_buf_steal(&b, NULL);
    char *path = gk_printf("%s/%s", project, name);
    gk_test_write(path, body, 0644);
    return path;
}

static const char level_policy[] =
    "grant l {\n"
    "    exec {\n"
    "        allow @B/bin/escape-probe @B/opt/ sh find env true cat sleep;\n"
    "        deny @B/opt/vetoed @B/opt/old/;\n"
    "    }\n"
    "    fs {\n"
    "        read /usr /etc @B/bin @B/opt;\n"
    "        write cwd:;\n"
    "        readonly cwd:/hooks;\n"
    "    }\n"
    "    net deny;\n"
    "}\n";

typedef struct run {
    int status;
    char *out, *err;
} run;

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

/* PROGRAM ARGS... (NULL-terminated) on a host kind, as root or the user. */
static void command_on(host_kind kind, bool as_user, const char *program,
                       const char *const *args, gk_strvec *out);

static run run_on(host_kind kind, bool as_user, const char *program, const char *const *args)
{
    gk_strvec v = {0};
    command_on(kind, as_user, program, args, &v);
    run r = {0};
    r.status = gk_test_run(v.v, NULL, &r.out, &r.err);
    gk_strvec_free(&v);
    return r;
}

/* The argv run_on runs (NULL-terminated). */
static void command_on(host_kind kind, bool as_user, const char *program,
                       const char *const *args, gk_strvec *out)
{
    gk_strvec v = {0};
    if (as_user && geteuid() == 0) {
        ck_assert_msg(have_user, "no unprivileged user could be made (useradd " GK_TEST_USER ")");
        gk_test_setpriv(&v, user_uid, user_gid);
    }
    if (kind == NO_USERNS) {
        static const char *const nest[] = {"/usr/bin/bwrap", "--unshare-user", "--disable-userns",
                                           "--dev-bind", "/", "/", "--"};
        for (size_t i = 0; i < sizeof(nest) / sizeof(*nest); i++)
            gk_strvec_push(&v, nest[i]);
    } else if (kind == NO_MOUNT) {
        gk_strvec_push_take(&v, gk_printf("%s/tests/nomount", gk_test_builddir()));
    }
    gk_strvec_push_take(&v, gk_printf("%s/%s", gk_test_builddir(), program));
    for (size_t i = 0; args[i]; i++)
        gk_strvec_push(&v, args[i]);
    gk_strvec_push_take(&v, NULL);
    *out = v;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The landlock level runs only on a kernel with Landlock's signal scope
 * (ABI 6, Linux 6.12): below it "no signal to host processes" is not
 * enforced and the level refuses without --allow-degraded. On such a
 * kernel that refusal is what is checked, and the caller returns. */
static bool landlock_level_runs(void)
{
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U);
    if (abi >= 6)
        return true;
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    run r = run_on(HOST, false, "grantrun", ARGS("-p", minimal, "--level", "landlock", "--",
                                                 "true"));
    ck_assert_msg(r.status == 125 && strstr(r.err, "  - no signal to host processes (envelope): "
                                                   "not-enforced"),
                  "Landlock ABI %ld: status %d: %s", abi, r.status, r.err);
    run_free(&r);
    return false;
}

/* ---- the attack list, at both levels ------------------------------------ */

/* One attack (or control): the probe step (@B the scratch tree, @T/@U the
 * TCP/UDP ports, @A the abstract name, @P the host process) and what each
 * level answers. */
typedef struct attack {
    const char *what;
    const char *step;
    const char *ns, *ll; /* the probe's result at namespaces, at landlock */
    bool control;
} attack;

static const attack attacks[] = {
    {"read outside the read regions", "read:@B/secret", "ERR:ENOENT", "ERR:EACCES", false},
    {"control: read in the project", "read:hello.txt", "OK", "OK", true},
    {"write outside the write regions", "write:@B/bin/new", "ERR:EROFS", "ERR:EACCES", false},
    {"control: write in the project", "write:sub/new", "OK", "OK", true},
    {"control: write an existing file of the project", "write:hello.txt", "OK", "OK", true},
    {"stricter: a new file beside a readonly entry", "write:new-top", "OK", "ERR:EACCES", false},
    {"write a readonly file", "write:hooks/h", "ERR:EROFS", "ERR:EACCES", false},
    {"write the policy itself", "write:l.grant", "ERR:EROFS", "ERR:EACCES", false},
    {"chmod of a file outside the write regions", "chmod:0777:@B/bin/escape-probe", "ERR:EROFS",
     "ERR:EPERM", false},
    {"chmod of a readonly file", "chmod:0777:hooks/h", "ERR:EROFS", "ERR:EPERM", false},
    {"stricter: chmod in the project", "chmod:0600:sub/new", "OK", "ERR:EPERM", false},
    {"exec of a program not admitted", "run:/usr/bin/id", "ERR:EACCES", "ERR:EACCES", false},
    {"control: exec of an admitted program", "run:@B/opt/admitted", "EXIT:0", "EXIT:0", true},
    {"exec of a vetoed program", "run:@B/opt/vetoed", "ERR:EACCES", "ERR:EACCES", false},
    {"a program in a vetoed directory inside an admitted one (masked: the projection scans "
     "admitted dirs whole)",
     "run:@B/opt/old/p", "ERR:EACCES", "ERR:EACCES", false},
    {"a vetoed program through the ELF loader", "ldso:@B/opt/vetoed", "EXIT:127", "EXIT:127",
     false},
    {"control: an admitted one through the loader", "ldso:@B/opt/admitted", "EXIT:0", "EXIT:0",
     true},
    {"a vetoed program by sh -c", "cmd:/usr/bin/sh -c @B/opt/vetoed", "EXIT:126", "EXIT:126",
     false},
    {"control: sh -c", "cmd:/usr/bin/sh -c @B/opt/admitted", "EXIT:0", "EXIT:0", true},
    {"a vetoed program by find -exec",
     "cmd:/usr/bin/find @B/opt -maxdepth 0 -exec @B/opt/vetoed {} +", "EXIT:1", "EXIT:1", false},
    {"control: find -exec", "cmd:/usr/bin/find @B/opt -maxdepth 0 -exec @B/opt/admitted {} +",
     "EXIT:0", "EXIT:0", true},
    {"a vetoed program by env", "cmd:/usr/bin/env @B/opt/vetoed", "EXIT:126", "EXIT:126", false},
    {"control: env", "cmd:/usr/bin/env @B/opt/admitted", "EXIT:0", "EXIT:0", true},
    {"a written program, run", "cp:/usr/bin/true:sub/w", "OK", "OK", true},
    {"exec of a written file", "run:./sub/w", "ERR:EACCES", "ERR:EACCES", false},
    {"not claimed at landlock: a written file through the loader", "ldso:./sub/w", "EXIT:127",
     "EXIT:0", false},
    {"TCP with net deny", "tcp:127.0.0.1:@T", "ERR:EPERM", "ERR:EPERM", false},
    {"UDP with net deny", "udp:127.0.0.1:@U", "ERR:EPERM", "ERR:EPERM", false},
    {"a host abstract Unix socket", "abstract:@A", "ERR:ECONNREFUSED", "ERR:EPERM", false},
    {"a Unix socket file outside the readable regions", "unix:@B/outside/s.sock", "ERR:ENOENT",
     "ERR:EPERM", false},
    {"control: socketpair", "socketpair", "OK", "OK", true},
    {"a datagram socketpair's sendto(2) to a host datagram socket file",
     "dgram-pair:@B/outside/d.sock", "ERR:ENOENT", "ERR:EPERM", false},
    {"a signal to a host process", "kill:@P:15", "ERR:ESRCH", "ERR:EPERM", false},
    {"control: a signal to its own child", "killchild", "OK", "OK", true},
    {"ptrace of a host process", "ptrace:@P", "ERR:EPERM", "ERR:EPERM", false},
    {"TIOCSTI", "tiocsti", "ERR:EPERM", "ERR:EPERM", false},
    {"a console key's string (KDSKBSENT)", "kdskbsent", "ERR:EPERM", "ERR:EPERM", false},
    {"control: another ioctl reaches the kernel", "winsize", "ERR:ENOTTY", "ERR:ENOTTY", true},
    {"a new user namespace", "userns", "ERR:EPERM", "ERR:EPERM", false},
    /* The user's keyrings hold what other programs keep there (Kerberos
     * tickets, ecryptfs and fscrypt keys); at the landlock level the
     * command shares grantrun's user namespace and so its keyrings, and
     * only seccomp stands between them (without it a search succeeds). */
    {"add a key to a keyring", "addkey", "ERR:EPERM", "ERR:EPERM", false},
    {"search the user keyring", "keysearch", "ERR:EPERM", "ERR:EPERM", false},
    {"request a key", "requestkey", "ERR:EPERM", "ERR:EPERM", false},
};
#define NATTACKS (sizeof(attacks) / sizeof(*attacks))

static char *expand(const char *step)
{
    gk_buf b = {0};
    for (const char *p = step; *p; p++) {
        if (*p == '@' && p[1]) {
            p++;
            if (*p == 'B')
                gk_buf_puts(&b, base);
            else if (*p == 'T')
                gk_buf_printf(&b, "%d", tcp_port);
            else if (*p == 'U')
                gk_buf_printf(&b, "%d", udp_port);
            else if (*p == 'A')
                gk_buf_puts(&b, abstract_name);
            else if (*p == 'P')
                gk_buf_printf(&b, "%d", (int)victim);
            continue;
        }
        gk_buf_putc(&b, *p);
    }
    return gk_buf_steal(&b, NULL);
}

static void attack_list(host_kind kind, grant_level level, bool as_user)
{
    if (level == GRANT_LEVEL_LANDLOCK && !landlock_level_runs())
        return;
    gk_autofree char *pol = policy("l.grant", level_policy);
    if (as_user)
        give_project();
    start_victim(as_user);
    gk_strvec args = {0};
    gk_strvec_push(&args, "-p");
    gk_strvec_push(&args, pol);
    gk_strvec_push(&args, "--level");
    gk_strvec_push(&args, grant_level_name(level));
    gk_strvec_push(&args, "--");
    gk_strvec_push(&args, probe);
    for (size_t i = 0; i < NATTACKS; i++)
        gk_strvec_push_take(&args, expand(attacks[i].step));
    gk_strvec_push_take(&args, NULL);
    run r = run_on(kind, as_user, "grantrun", (const char *const *)args.v);
    gk_strvec_free(&args);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* one line per step, in order */
    char *save = NULL, *line = strtok_r(r.out, "\n", &save);
    for (size_t i = 0; i < NATTACKS; i++, line = strtok_r(NULL, "\n", &save)) {
        const char *want = level == GRANT_LEVEL_LANDLOCK ? attacks[i].ll : attacks[i].ns;
        ck_assert_msg(line, "%s: no line for '%s'", grant_level_name(level), attacks[i].what);
        const char *got = strchr(line, '=');
        ck_assert_msg(got && strcmp(got + 1, want) == 0, "%s level, %s: %s: got '%s', want '%s'",
                      grant_level_name(level), as_user ? "as the user" : "as root",
                      attacks[i].what, line, want);
    }
    /* the signal did not reach it */
    ck_assert_int_eq(kill(victim, 0), 0);
    run_free(&r);
}

START_TEST(attacks_no_userns_landlock)
{
    attack_list(NO_USERNS, GRANT_LEVEL_LANDLOCK, false);
}
END_TEST

START_TEST(attacks_no_mount_landlock)
{
    attack_list(NO_MOUNT, GRANT_LEVEL_LANDLOCK, false);
}
END_TEST

START_TEST(attacks_host_namespaces)
{
    attack_list(HOST, GRANT_LEVEL_NAMESPACES, false);
}
END_TEST

START_TEST(attacks_no_userns_landlock_as_the_user)
{
    attack_list(NO_USERNS, GRANT_LEVEL_LANDLOCK, true);
}
END_TEST

START_TEST(attacks_no_mount_landlock_as_the_user)
{
    attack_list(NO_MOUNT, GRANT_LEVEL_LANDLOCK, true);
}
END_TEST

START_TEST(attacks_host_namespaces_as_the_user)
{
    attack_list(HOST, GRANT_LEVEL_NAMESPACES, true);
}
END_TEST

/* ---- auto: fail closed, or fall to landlock when nothing is lost ------- */

static void auto_level(host_kind kind, bool as_user)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *pol = policy("l.grant", level_policy);
    if (as_user)
        give_project();
    gk_autofree char *report = gk_printf("%s/sub/report.json", project);
    /* exec-restricted: the loader route on written files would be lost */
    run r = run_on(kind, as_user, "grantrun",
                   ARGS("-p", pol, "--", probe, "write:sub/ran"));
    ck_assert_msg(r.status == 125, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_str_eq(r.out, "");
    gk_autofree char *ran = gk_printf("%s/sub/ran", project);
    ck_assert_int_ne(access(ran, F_OK), 0); /* nothing ran */
    /* exactly one rule listed: the one the landlock level loses */
    size_t items = 0;
    for (const char *p = r.err; (p = strstr(p, "\n  - ")); p++)
        items++;
    ck_assert_msg(items == 1 && strstr(r.err, "\n  - written files are not executable (policy): "
                                               "weaker: "),
                  "stderr: %s", r.err);
    ck_assert_msg(strstr(r.err, "--level landlock"), "no way to opt in: %s", r.err);
    ck_assert_msg(strstr(r.err, kind == NO_USERNS ? "a new user namespace failed"
                                                  : "making / a slave mount"),
                  "probe reason: %s", r.err);
    run_free(&r);
    /* a policy that loses nothing there: auto runs it at the landlock level */
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    r = run_on(kind, as_user, "grantrun",
               ARGS("-p", minimal, "--report", report, "--", "cat", "hello.txt"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "hello from the project"), "status %d: %s%s",
                  r.status, r.out, r.err);
    run_free(&r);
    gk_autofree char *doc = gk_test_read(report, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_msg(strstr(doc, "\"level\":\"landlock\"") &&
                      strstr(doc, "\"reason\":\"auto: user namespaces are refused here"),
                  "report: %s", doc);
}

START_TEST(auto_no_userns)
{
    auto_level(NO_USERNS, false);
}
END_TEST

START_TEST(auto_no_mount)
{
    auto_level(NO_MOUNT, false);
}
END_TEST

START_TEST(auto_no_userns_as_the_user)
{
    auto_level(NO_USERNS, true);
}
END_TEST

START_TEST(auto_no_mount_as_the_user)
{
    auto_level(NO_MOUNT, true);
}
END_TEST

START_TEST(auto_host_is_namespaces)
{
    gk_autofree char *pol = policy("l.grant", level_policy);
    gk_autofree char *report = gk_printf("%s/report.json", base);
    run r = run_on(HOST, false, "grantrun",
                   ARGS("-p", pol, "--report", report, "--", "cat", "hello.txt"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    run_free(&r);
    gk_autofree char *doc = gk_test_read(report, NULL);
    ck_assert_msg(doc && strstr(doc, "\"level\":\"namespaces\""), "report: %s", doc);
}
END_TEST

/* auto's yes is remembered (probe_memo.h): the second run takes it, and
 * it is not used where the key differs (a nested sandbox refusing user
 * namespaces, a changed key, a link, an old memo), nor kept once bwrap
 * fails on it. Each run's report says which it was. */
static run run_argv(const char *const *argv)
{
    run r = {0};
    r.status = gk_test_run((char *const *)argv, NULL, &r.out, &r.err);
    return r;
}

static char *auto_reason(host_kind kind, const char *pol, const char *bwrap, int want_status)
{
    gk_autofree char *report = gk_printf("%s/memo-report.json", base);
    unlink(report);
    run r = bwrap ? run_on(kind, false, "grantrun",
                           ARGS("--bwrap", bwrap, "-p", pol, "--report", report, "--", "true"))
                  : run_on(kind, false, "grantrun",
                           ARGS("-p", pol, "--report", report, "--", "true"));
    ck_assert_msg(r.status == want_status, "status %d: %s", r.status, r.err);
    gk_autofree char *doc = gk_test_read(report, NULL);
    char *reason = NULL;
    const char *at = doc ? strstr(doc, "\"reason\":\"") : NULL;
    if (at)
        reason = gk_strndup(at + 10, strcspn(at + 10, "\""));
    if (bwrap) { /* and what grantrun said */
        char *both = gk_printf("%s | %s", reason ? reason : "", r.err);
        free(reason);
        reason = both;
    }
    run_free(&r);
    return reason ? reason : gk_strdup("(no report)");
}

START_TEST(auto_remembers_the_probe)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *rt = gk_printf("%s/rt", base);
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    gk_autofree char *memo = gk_printf("%s/probe-yes.netns", rt);
    gk_autofree char *pol = policy("l.grant", level_policy); /* net deny: a netns probed */
    const char *probed = "a mount in a new user and mount namespace succeeded";
    char *why = auto_reason(HOST, pol, NULL, 0);
    ck_assert_msg(strstr(why, probed), "first run: %s", why);
    free(why);
    struct stat st;
    ck_assert_int_eq(lstat(memo, &st), 0);
    ck_assert(S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
    gk_autofree char *kept = gk_test_read(memo, NULL);
    ck_assert_msg(strstr(kept, "\nboot=") && strstr(kept, "\nns.user=") &&
                      strstr(kept, "\nSeccomp:"),
                  "memo: %s", kept);
    why = auto_reason(HOST, pol, NULL, 0);
    ck_assert_msg(strstr(why, "remembered"), "second run: %s", why);
    free(why);
    /* where user namespaces are refused the key differs: probed, refused */
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    why = auto_reason(NO_USERNS, minimal, NULL, 0);
    ck_assert_msg(strstr(why, "auto: user namespaces are refused here"), "nested: %s", why);
    free(why);
    /* another key: probed, and the memo rewritten */
    gk_autofree char *forged = gk_strdup(kept);
    char *e = strstr(forged, "euid=");
    ck_assert_ptr_nonnull(e);
    e[5] = e[5] == '9' ? '8' : '9';
    gk_test_write(memo, forged, 0600);
    why = auto_reason(HOST, pol, NULL, 0);
    ck_assert_msg(strstr(why, probed), "forged key: %s", why);
    free(why);
    gk_autofree char *again = gk_test_read(memo, NULL);
    ck_assert_str_eq(again, kept);
    /* a link: not followed, neither read nor written through */
    gk_autofree char *target = gk_printf("%s/outside/victim", base);
    gk_test_write(target, "mine\n", 0600);
    ck_assert_int_eq(unlink(memo), 0);
    ck_assert_int_eq(symlink(target, memo), 0);
    why = auto_reason(HOST, pol, NULL, 0);
    ck_assert_msg(strstr(why, probed), "link: %s", why);
    free(why);
    gk_autofree char *v = gk_test_read(target, NULL);
    ck_assert_str_eq(v, "mine\n");
    ck_assert_int_eq(lstat(memo, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    /* older than GK_PROBE_MEMO_SECONDS: probed */
    struct timeval old[2] = {{time(NULL) - 700, 0}, {time(NULL) - 700, 0}};
    ck_assert_int_eq(utimes(memo, old), 0);
    why = auto_reason(HOST, pol, NULL, 0);
    ck_assert_msg(strstr(why, probed), "old memo: %s", why);
    free(why);
    /* bwrap fails on a remembered yes for its own reasons: the probe, asked
     * again, still says yes; bwrap's failure stands, the yes is kept */
    ck_assert_int_eq(utimes(memo, old), 0);
    ck_assert_int_eq(utimes(memo, NULL), 0);
    why = auto_reason(HOST, pol, "/bin/false", 125);
    ck_assert_msg(strstr(why, "bubblewrap could not set up the envelope") &&
                      !strstr(why, "remembered probe answer"),
                  "failed launch: %s", why);
    free(why);
    ck_assert_int_eq(lstat(memo, &st), 0);
    /* A remembered yes that is wrong: a yes kept under a seccomp filter
     * that refuses nothing, then a host that looks the same from
     * /proc/self/status (one filter, no_new_privs) but refuses mounts.
     * bwrap gives up, nothing ran, the probe asked again says no, and auto
     * takes the landlock level as it would have. */
    gk_autofree char *plain = gk_printf("%s/probe-yes", rt);
    unlink(memo);
    unlink(plain);
    gk_autofree char *nm = gk_printf("%s/tests/nomount", gk_test_builddir());
    gk_autofree char *gr = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *rep = gk_printf("%s/memo-report.json", base);
    run r = run_argv(ARGS(nm, "--allow", gr, "-p", minimal, "--", "true"));
    ck_assert_msg(r.status == 0, "nomount --allow: %d: %s", r.status, r.err);
    run_free(&r);
    ck_assert_msg(lstat(memo, &st) == 0 || lstat(plain, &st) == 0, "nothing remembered");
    r = run_argv(ARGS(nm, gr, "-p", minimal, "--report", rep, "--", "cat", "hello.txt"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "hello from the project"), "nomount: %d: %s%s",
                  r.status, r.out, r.err);
    run_free(&r);
    gk_autofree char *doc = gk_test_read(rep, NULL);
    ck_assert_msg(doc && strstr(doc, "\"level\":\"landlock\"") &&
                      strstr(doc, "a remembered probe answer said otherwise: forgotten"),
                  "report: %s", doc);
    ck_assert_msg(lstat(memo, &st) < 0 && lstat(plain, &st) < 0, "the wrong yes was kept");
    unsetenv("GRANTKIT_RUNTIME_DIR");
}
END_TEST

/* ---- the run ends whole ------------------------------------------------- */

/* Processes whose command line (arguments joined by spaces) holds marker,
 * read from /proc (no ps needed). */
static int count_marked(const char *marker)
{
    int n = 0, seen = 0;
    DIR *proc = opendir("/proc");
    ck_assert_ptr_nonnull(proc);
    struct dirent *e;
    while ((e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        gk_autofree char *path = gk_printf("/proc/%ld/cmdline", pid);
        size_t len = 0;
        gk_autofree char *cmd = gk_test_read(path, &len);
        if (!cmd)
            continue;
        seen++;
        for (size_t i = 0; i + 1 < len; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        n += strstr(cmd, marker) != NULL;
    }
    closedir(proc);
    ck_assert_int_gt(seen, 0); /* the scan saw processes at all */
    return n;
}

static void ends_whole(bool as_user)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *pol = policy("l.grant", level_policy);
    /* Markers with this process's pid in their digits: another run of the
     * suite on the same machine sleeps the same lines. */
    int me = (int)getpid();
    gk_autofree char *left = gk_printf("sleep 61.25%d", me), *ctl = gk_printf("61.75%d", me),
                     *ctl_mark = gk_printf("sleep %s", ctl),
                     *both = gk_printf("sleep 61.5%d", me),
                     *left_cmd = gk_printf("%s </dev/null >/dev/null 2>&1 &", left),
                     *both_cmd = gk_printf("%s & %s", both, both),
                     *daemon = gk_printf("sleep 61.125%d", me),
                     *spelled = gk_printf("sleep 61.1$((20 + 5))%d", me),
                     *daemon_cmd = gk_printf("echo \"$TMPDIR\" > sub/tmpdir; "
                                             "%s </dev/null >/dev/null 2>&1 & sleep 62",
                                             spelled);
    if (as_user)
        give_project();
    /* A background process the command leaves behind dies with the run. */
    run r = run_on(NO_USERNS, as_user, "grantrun",
                   ARGS("-p", pol, "--level", "landlock", "--", "sh", "-c",
                        left_cmd));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    run_free(&r);
    ck_assert_int_eq(count_marked(left), 0);
    /* control: the scan finds such a process where there is one */
    pid_t control = fork();
    if (control == 0) {
        execl("/usr/bin/sleep", "sleep", ctl, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && count_marked(ctl_mark) == 0; i++)
        usleep(10000);
    ck_assert_int_eq(count_marked(ctl_mark), 1);
    kill(control, SIGKILL);
    waitpid(control, NULL, 0);
    /* The deadline kills the whole run: 124. */
    double t0 = (double)time(NULL);
    r = run_on(NO_USERNS, as_user, "grantrun",
               ARGS("-p", pol, "--level", "landlock", "--timeout", "500ms", "--", "sh", "-c",
                    both_cmd));
    ck_assert_msg(r.status == 124, "status %d: %s", r.status, r.err);
    ck_assert_msg((double)time(NULL) - t0 < 20, "the deadline did not hold");
    run_free(&r);
    ck_assert_int_eq(count_marked(both), 0);

    /* A chain of processes, each in its own session and the orphan of the
     * one before once that one dies: deeper than a sweep that reaps one
     * child a round and stops after 1000 rounds reaches. The chain was
     * built (the control: "built") and none of it outlives the run. */
    gk_autofree char *mark = gk_printf("%s/sub/chain", project);
    gk_autofree char *step = gk_printf("chain:1050:%s", mark);
    r = run_on(NO_USERNS, as_user, "grantrun",
               ARGS("-p", pol, "--level", "landlock", "--", probe, step));
    ck_assert_msg(r.status == 0 && strcmp(r.out, "chain=OK\n") == 0, "status %d: %s%s", r.status,
                  r.out, r.err);
    run_free(&r);
    ck_assert_int_eq(count_marked(step), 0);
    usleep(2500 * 1000);
    gk_autofree char *told = gk_test_read(mark, NULL);
    ck_assert_msg(told && strcmp(told, "built\n") == 0, "the chain's file: %s", told);

    /* grantrun itself SIGKILLed: what the command left behind dies too
     * (the helper dies with its parent; a background process of the
     * command did not: the keeper between grantrun and the helper sees
     * grantrun go and kills the rest).
     * The control: that process was running before the kill (only its
     * command line holds "sleep 61.125", the shell expands it). */
    gk_strvec v = {0};
    command_on(HOST, as_user, "grantrun",
               ARGS("-p", pol, "--level", "landlock", "--", "sh", "-c",
                    daemon_cmd),
               &v);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execv(v.v[0], v.v);
        _exit(127);
    }
    gk_strvec_free(&v);
    for (int i = 0; i < 1000 && count_marked(daemon) == 0; i++)
        usleep(10000);
    ck_assert_int_eq(count_marked(daemon), 1);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    /* the keeper's sweep, on a loaded machine, within 10 s */
    for (int i = 0; i < 1000 && (count_marked(daemon) > 0 ||
                                 count_marked(spelled) > 0);
         i++)
        usleep(10000);
    ck_assert_int_eq(count_marked(daemon), 0);
    /* grantrun, its keeper and the shell (their command lines spell the
     * daemon's argument unexpanded) */
    ck_assert_int_eq(count_marked(spelled), 0);
    /* and the run's private TMPDIR went with it (the control: it was one) */
    gk_autofree char *tmpfile = gk_printf("%s/sub/tmpdir", project);
    gk_autofree char *tmpdir = gk_test_read(tmpfile, NULL);
    ck_assert_msg(tmpdir && gk_has_prefix(tmpdir, "/tmp/grantkit-run-"), "TMPDIR %s", tmpdir);
    tmpdir[strcspn(tmpdir, "\n")] = '\0';
    struct stat st;
    for (int i = 0; i < 500 && lstat(tmpdir, &st) == 0; i++) /* the keeper's last step */
        usleep(10000);
    ck_assert_msg(lstat(tmpdir, &st) < 0 && errno == ENOENT, "%s is left on the host", tmpdir);
}

START_TEST(the_run_ends_whole)
{
    ends_whole(false);
}
END_TEST

START_TEST(the_run_ends_whole_as_the_user)
{
    ends_whole(true);
}
END_TEST

/* Carve-outs nest: a deny inside a readonly entry inside the write region;
 * each level answers every path as the policy says (EROFS or EACCES). */
START_TEST(carve_outs_nest)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *mk = gk_printf("mkdir -p %s/a/b %s/c", project, project);
    ck_assert_int_eq(system(mk), 0);
    static const char *const files[] = {"a/b/secret", "a/b/other", "a/x", "c/y"};
    for (size_t i = 0; i < 4; i++) {
        gk_autofree char *f = gk_printf("%s/%s", project, files[i]);
        gk_test_write(f, "x\n", 0644);
    }
    gk_autofree char *pol = gk_printf("%s/n.grant", base);
    gk_autofree char *text = gk_printf("grant n {\n"
                                       "    exec { allow %s; }\n"
                                       "    fs {\n"
                                       "        read /usr /etc %s/bin;\n"
                                       "        write cwd:;\n"
                                       "        readonly cwd:/a;\n"
                                       "        deny cwd:/a/b/secret;\n"
                                       "    }\n"
                                       "    net deny;\n"
                                       "}\n",
                                       probe, base);
    gk_test_write(pol, text, 0644);
    static const struct {
        const char *step, *ns, *ll;
    } want[] = {
        {"read:a/b/other", "OK", "OK"},          {"write:a/b/other", "ERR:EROFS", "ERR:EACCES"},
        {"read:a/b/secret", "ERR:EACCES", "ERR:EACCES"},
        {"write:a/b/secret", "ERR:EACCES", "ERR:EACCES"},
        {"read:a/x", "OK", "OK"},                {"write:a/x", "ERR:EROFS", "ERR:EACCES"},
        {"write:a/new", "ERR:EROFS", "ERR:EACCES"}, {"write:a/b/new", "ERR:EROFS", "ERR:EACCES"},
        {"read:c/y", "OK", "OK"},                {"write:c/y", "OK", "OK"},
        {"write:c/new", "OK", "OK"},             {"list:a/b", "OK", "OK"},
        {"list:a", "OK", "OK"},
    };
    for (int l = 0; l < 2; l++) {
        gk_strvec args = {0};
        const char *const head[] = {"-p", pol, "--level", l ? "landlock" : "namespaces", "--",
                                    probe};
        for (size_t i = 0; i < 6; i++)
            gk_strvec_push(&args, head[i]);
        for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
            gk_strvec_push(&args, want[i].step);
        gk_strvec_push_take(&args, NULL);
        run r = run_on(l ? NO_USERNS : HOST, false, "grantrun", (const char *const *)args.v);
        gk_strvec_free(&args);
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        char *save = NULL, *line = strtok_r(r.out, "\n", &save);
        for (size_t i = 0; i < sizeof(want) / sizeof(*want);
             i++, line = strtok_r(NULL, "\n", &save)) {
            const char *w = l ? want[i].ll : want[i].ns;
            ck_assert_msg(line && strcmp(strchr(line, '=') + 1, w) == 0, "%s: %s: got %s, want %s",
                          l ? "landlock" : "namespaces", want[i].step, line ? line : "nothing", w);
        }
        run_free(&r);
    }
}
END_TEST

/* The control of the network rows: without net deny, TCP and UDP reach
 * the host's listeners at both levels (a Unix socket still does not at the
 * landlock level: socket(AF_UNIX) is refused there, stricter). */
START_TEST(net_allowed_reaches_the_host)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *pol = policy("o.grant", "grant o {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs { read /usr /etc @B/bin; write cwd:; }\n"
                                              "}\n");
    gk_autofree char *tcp = gk_printf("tcp:127.0.0.1:%d", tcp_port);
    gk_autofree char *udp = gk_printf("udp:127.0.0.1:%d", udp_port);
    /* The host's socket file outside every region stays out of reach with
     * net allowed, also for a socket(2) whose family register has bits
     * above the 32 the kernel reads (a full 64-bit comparison in the
     * filter let that one through at the landlock level). */
    gk_autofree char *sock = gk_printf("unix:%s/outside/s.sock", base);
    gk_autofree char *high = gk_printf("unix-high:%s/outside/s.sock", base);
    for (int l = 0; l < 2; l++) {
        run r = run_on(l ? NO_USERNS : HOST, false, "grantrun",
                       ARGS("-p", pol, "--level", l ? "landlock" : "namespaces", "--", probe, tcp,
                            udp, "socketpair", sock, high));
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        const char *want = l ? "tcp=OK\nudp=OK\nsocketpair=OK\nunix=ERR:EPERM\n"
                               "unix-high=ERR:EPERM\n"
                             : "tcp=OK\nudp=OK\nsocketpair=OK\nunix=ERR:ENOENT\n"
                               "unix-high=ERR:ENOENT\n";
        ck_assert_msg(strcmp(r.out, want) == 0, "%s: %s", l ? "landlock" : "namespaces", r.out);
        run_free(&r);
    }
}
END_TEST

START_TEST(auto_without_bwrap)
{
    if (!landlock_level_runs())
        return;
    /* No bubblewrap on PATH: the namespaces level cannot run, and a
     * policy that loses nothing runs at the landlock level. */
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    gk_autofree char *report = gk_printf("%s/sub/report.json", project);
    ck_assert_int_eq(setenv("PATH", "/nonexistent", 1), 0);
    run r = run_on(HOST, false, "grantrun",
                   ARGS("-p", minimal, "--report", report, "--", "/usr/bin/cat", "hello.txt"));
    ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
    ck_assert_msg(r.status == 0 && strstr(r.out, "hello from the project"), "status %d: %s%s",
                  r.status, r.out, r.err);
    run_free(&r);
    gk_autofree char *doc = gk_test_read(report, NULL);
    ck_assert_msg(doc && strstr(doc, "\"level\":\"landlock\"") &&
                      strstr(doc, "auto: no bubblewrap (bwrap) on PATH"),
                  "report: %s", doc);
    /* and --level namespaces says there is none */
    ck_assert_int_eq(setenv("PATH", "/nonexistent", 1), 0);
    r = run_on(HOST, false, "grantrun",
               ARGS("-p", minimal, "--level", "namespaces", "--", "/usr/bin/cat", "hello.txt"));
    ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
    ck_assert_msg(r.status == 125 && strstr(r.err, "no bubblewrap"), "status %d: %s", r.status,
                  r.err);
    run_free(&r);
}
END_TEST

/* ---- --allow-degraded --------------------------------------------------- */

START_TEST(a_rule_not_enforced_needs_allow_degraded)
{
    if (!landlock_level_runs())
        return;
    /* exec restricted, fs not: no level keeps written files from the
     * loader (the host root is writable) */
    gk_autofree char *pol = policy("u.grant", "grant u {\n"
                                              "    exec { allow @B/bin/escape-probe true; }\n"
                                              "    fs { deny /etc/shadow; }\n"
                                              "    net deny;\n"
                                              "}\n");
    run r = run_on(NO_USERNS, false, "grantrun",
                   ARGS("-p", pol, "--level", "landlock", "--", probe, "write:sub/ran"));
    ck_assert_msg(r.status == 125, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "  - written files are not executable (policy): not-enforced"),
                  "stderr: %s", r.err);
    ck_assert_msg(strstr(r.err, "--allow-degraded"), "stderr: %s", r.err);
    gk_autofree char *ran = gk_printf("%s/sub/ran", project);
    ck_assert_int_ne(access(ran, F_OK), 0);
    run_free(&r);
    r = run_on(NO_USERNS, false, "grantrun",
               ARGS("-p", pol, "--level", "landlock", "--allow-degraded", "--", probe,
                    "write:sub/ran", "read:/etc/shadow"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "not enforced (--allow-degraded): written files are not "
                                "executable"),
                  "stderr: %s", r.err);
    ck_assert_msg(strstr(r.out, "write=OK\nread=ERR:EACCES\n"), "out: %s", r.out);
    run_free(&r);
}
END_TEST

/* ---- the frame protocol at each level ----------------------------------- */

static const char frame_policy[] =
    "grant f {\n"
    "    exec { allow sh cat ls rm true; }\n"
    "    fs {\n"
    "        read /usr /etc;\n"
    "        deny /work/locked/secret;\n"
    "        readonly /work/locked/ro;\n"
    "    }\n"
    "    net deny;\n"
    "}\n";

/* The run-result grantrun --json printed: its enforcement member as
 * compact JSON, and the document (caller frees both). */
static json_t *result_of(const run *r, char **enforcement)
{
    json_error_t je;
    json_t *doc = json_loads(r->out, 0, &je);
    ck_assert_msg(doc && json_is_object(doc), "not a run-result (%s): %s%s", je.text, r->out,
                  r->err);
    *enforcement = json_dumps(json_object_get(doc, "enforcement"), JSON_COMPACT | JSON_ENCODE_ANY);
    return doc;
}

static const char *str_of(json_t *doc, const char *key)
{
    const char *s = json_string_value(json_object_get(doc, key));
    return s ? s : "";
}

/* At the landlock level the scratch is a private host directory (0700),
 * granted by Landlock; the policy's deny and readonly inside baseline.root
 * hold there; the diff works; the quotas are reported as not enforced and
 * need --allow-degraded; the directory is gone afterwards. */
static void frame_landlock(host_kind kind, bool as_user)
{
    if (!landlock_level_runs())
        return;
    if (as_user)
        give_project();
    gk_autofree char *pol = policy("f.grant", frame_policy);
    gk_autofree char *mk = gk_printf("mkdir -p %s/seed/src %s/seed/locked && cd %s/seed && "
                                     "echo one > src/a.txt && echo old > src/old.txt && "
                                     "echo secret > locked/secret && echo ro > locked/ro",
                                     base, base, base);
    ck_assert_int_eq(system(mk), 0);
    gk_autofree char *src = gk_printf("%s/seed/src=/src", base);
    gk_autofree char *locked = gk_printf("%s/seed/locked=/locked", base);
    const char *script = "ls -ld . && cat src/a.txt && echo new > src/n.txt && "
                         "echo more >> src/a.txt && rm src/old.txt && "
                         "{ cat locked/secret 2>/dev/null || echo denied-read; } && "
                         "{ (echo x >> locked/ro) 2>/dev/null || echo denied-write; } && pwd";

    /* without --allow-degraded: refused, naming the quotas, nothing ran */
    run r = run_on(kind, as_user, "grantrun",
                   ARGS("-p", pol, "--isolate", "process", "--level", "landlock", "--seed", src,
                        "--seed", locked, "--diff", "json", "--json", "--", "sh", "-c", script));
    ck_assert_msg(r.status == 125, "status %d: %s%s", r.status, r.out, r.err);
    gk_autofree char *enf = NULL;
    json_t *doc = result_of(&r, &enf);
    const char *msg = str_of(doc, "errorMessage");
    ck_assert_str_eq(str_of(doc, "failureKind"), "host-error");
    ck_assert_msg(strstr(msg, "  - --fs-quota 16777216 (grantrun): not-enforced") &&
                      strstr(msg, "  - --fs-nodes 4096 (grantrun): not-enforced") &&
                      strstr(msg, "--allow-degraded") && strstr(msg, "nothing ran"),
                  "message: %s", msg);
    ck_assert_str_eq(enf, "null");
    ck_assert_str_eq(str_of(doc, "output"), "");
    json_decref(doc);
    run_free(&r);
    free(enf);
    enf = NULL;

    r = run_on(kind, as_user, "grantrun",
               ARGS("-p", pol, "--isolate", "process", "--level", "landlock", "--allow-degraded",
                    "--seed", src, "--seed", locked, "--diff", "json", "--json", "--", "sh", "-c",
                    script));
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    doc = result_of(&r, &enf);
    ck_assert_str_eq(enf, "{\"level\":\"landlock\",\"unenforced\":[\"--fs-quota 16777216\","
                          "\"--fs-nodes 4096\"]}");
    const char *out = str_of(doc, "output");
    ck_assert_msg(gk_has_prefix(out, "drwx------ ") &&
                      strstr(out, "\none\ndenied-read\ndenied-write\n/tmp/grantkit-frame-"),
                  "output: %s (stderr %s)", out, str_of(doc, "errorOutput"));
    ck_assert_str_eq(str_of(doc, "diff"),
                     "{\"changes\":["
                     "{\"kind\":\"modify\",\"path\":\"/src/a.txt\",\"oldBytes\":4,\"newBytes\":9},"
                     "{\"kind\":\"create\",\"path\":\"/src/n.txt\",\"oldBytes\":0,\"newBytes\":4},"
                     "{\"kind\":\"delete\",\"path\":\"/src/old.txt\",\"oldBytes\":4,"
                     "\"newBytes\":0}]}");
    /* the scratch is removed with the run */
    gk_autofree char *dir = gk_strdup(strstr(out, "/tmp/grantkit-frame-"));
    dir[strcspn(dir, "\n")] = '\0';
    ck_assert_msg(access(dir, F_OK) < 0 && errno == ENOENT, "%s is left", dir);
    json_decref(doc);
    run_free(&r);
}

START_TEST(frame_landlock_no_userns)
{
    frame_landlock(NO_USERNS, false);
}
END_TEST

START_TEST(frame_landlock_no_mount_as_the_user)
{
    frame_landlock(NO_MOUNT, true);
}
END_TEST

START_TEST(frame_landlock_no_userns_as_the_user)
{
    frame_landlock(NO_USERNS, true);
}
END_TEST

/* The result's enforcement member is the one record's, for the level the
 * run really had: auto falls to landlock where namespaces are refused
 * when the policy loses nothing (no scratch: no quota), refuses with the
 * list when it would (a scratch's quotas), and is namespaces here. */
static void frame_levels(host_kind kind, bool as_user)
{
    if (!landlock_level_runs())
        return;
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    run r = run_on(kind, as_user, "grantrun",
                   ARGS("-p", minimal, "--isolate", "process", "--json", "--", "cat",
                        "hello.txt"));
    gk_autofree char *enf = NULL;
    json_t *doc = result_of(&r, &enf);
    ck_assert_msg(r.status == 0 && strstr(str_of(doc, "output"), "hello from the project"),
                  "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_str_eq(enf, kind == HOST ? "{\"level\":\"namespaces\",\"unenforced\":[]}"
                                       : "{\"level\":\"landlock\",\"unenforced\":[]}");
    json_decref(doc);
    run_free(&r);
    free(enf);
    enf = NULL;

    r = run_on(kind, as_user, "grantrun",
               ARGS("-p", minimal, "--isolate", "process", "--root", "/work", "--json", "--",
                    "true"));
    doc = result_of(&r, &enf);
    if (kind == HOST) {
        ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
        ck_assert_str_eq(enf, "{\"level\":\"namespaces\",\"unenforced\":[]}");
    } else {
        const char *msg = str_of(doc, "errorMessage");
        ck_assert_msg(r.status == 125 && strcmp(str_of(doc, "failureKind"), "host-error") == 0,
                      "status %d: %s%s", r.status, r.out, r.err);
        ck_assert_msg(strstr(msg, "the namespaces level cannot run") &&
                          strstr(msg, "  - --fs-quota 16777216 (grantrun): not-enforced") &&
                          strstr(msg, "pass --level landlock"),
                      "message: %s", msg);
        ck_assert_str_eq(enf, "null");
    }
    json_decref(doc);
    run_free(&r);
    free(enf);
    enf = NULL;

    /* asked for: the level asked, and what it did not enforce */
    r = run_on(kind, as_user, "grantrun",
               ARGS("-p", minimal, "--isolate", "process", "--level", "landlock",
                    "--allow-degraded", "--root", "/work", "--fs-quota", "1048576", "--json",
                    "--", "true"));
    doc = result_of(&r, &enf);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_str_eq(enf, "{\"level\":\"landlock\",\"unenforced\":[\"--fs-quota 1048576\","
                          "\"--fs-nodes 4096\"]}");
    json_decref(doc);
    run_free(&r);
    free(enf);
    enf = NULL;
    if (kind != HOST) {
        r = run_on(kind, as_user, "grantrun",
                   ARGS("-p", minimal, "--isolate", "process", "--level", "namespaces", "--json",
                        "--", "true"));
        doc = result_of(&r, &enf);
        ck_assert_msg(r.status == 125 && strcmp(str_of(doc, "failureKind"), "host-error") == 0,
                      "status %d: %s%s", r.status, r.out, r.err);
        ck_assert_str_eq(enf, "null");
        json_decref(doc);
        run_free(&r);
    }
}

START_TEST(frame_levels_host)
{
    frame_levels(HOST, false);
}
END_TEST

START_TEST(frame_levels_no_userns)
{
    frame_levels(NO_USERNS, false);
}
END_TEST

START_TEST(frame_levels_no_mount_as_the_user)
{
    frame_levels(NO_MOUNT, true);
}
END_TEST

/* ---- one record: --report and grantc audit --level ---------------------- */

START_TEST(report_and_audit_agree_on_every_bundled_policy)
{
    static const char *const bundled[] = {"base/minimal.grant", "base/reasonable.grant",
                                          "base/reasonable.yaml"};
    static const grant_level levels[] = {GRANT_LEVEL_NAMESPACES, GRANT_LEVEL_LANDLOCK};
    gk_autofree char *report = gk_printf("%s/report.json", base);
    for (size_t i = 0; i < sizeof(bundled) / sizeof(*bundled); i++)
        for (size_t l = 0; l < 2; l++) {
            gk_autofree char *rel = gk_printf("policies/%s", bundled[i]);
            gk_autofree char *pol = gk_test_path(rel);
            const char *name = grant_level_name(levels[l]);
            unlink(report);
            run r = run_on(HOST, false, "grantrun",
                           ARGS("-p", pol, "--level", name, "--report", report, "--", "true"));
            int ran_status = r.status;
            gk_autofree char *ran_err = gk_strdup(r.err);
            run_free(&r);
            run a = run_on(HOST, false, "grantc",
                           ARGS("audit", "--level", name, "--format", "json", pol));
            ck_assert_msg(a.status == 0 || a.status == 1, "audit %s: %s", bundled[i], a.err);
            gk_autofree char *doc = gk_test_read(report, NULL);
            ck_assert_ptr_nonnull(doc);
            json_error_t jerr;
            json_t *ran = json_loads(doc, 0, &jerr), *offline = json_loads(a.out, 0, &jerr);
            ck_assert_ptr_nonnull(ran);
            ck_assert_ptr_nonnull(offline);
            /* it ran, unless the level does not enforce a rule at all
             * (then refused, the record written all the same) */
            size_t un = json_array_size(json_object_get(offline, "unenforced"));
            ck_assert_msg(ran_status == (un ? 125 : 0), "%s %s: status %d: %s", bundled[i], name,
                          ran_status, ran_err);
            const char *keys[] = {"level", "landlockAbi", "rules", "unenforced"};
            for (size_t k = 0; k < 4; k++) {
                char *x = json_dumps(json_object_get(ran, keys[k]), JSON_ENCODE_ANY);
                char *y = json_dumps(json_object_get(offline, keys[k]), JSON_ENCODE_ANY);
                ck_assert_msg(x && y && strcmp(x, y) == 0, "%s at %s: %s differ:\n%s\n%s",
                              bundled[i], name, keys[k], x, y);
                free(x);
                free(y);
            }
            /* and the exit status says whether the level loses a rule */
            size_t lost = 0;
            json_t *rules = json_object_get(offline, "rules"), *row;
            size_t idx;
            json_array_foreach(rules, idx, row)
            {
                const char *st = json_string_value(json_object_get(row, "status"));
                bool policy_row = json_is_true(json_object_get(row, "policy"));
                lost += strcmp(st, "not-enforced") == 0 ||
                        (strcmp(st, "weaker") == 0 && policy_row);
            }
            ck_assert_int_eq(a.status, lost ? 1 : 0);
            json_decref(ran);
            json_decref(offline);
            run_free(&a);
        }
}
END_TEST

/* ---- the record as data: golden files ---------------------------------- */

START_TEST(golden_records)
{
    gk_autofree char *dir = gk_test_path("tests/data/enforcement");
    gk_strvec files = gk_test_files(dir, ".grant");
    ck_assert_uint_gt(files.n, 0);
    for (size_t i = 0; i < files.n; i++) {
        grant_context *ctx = gk_test_context_linux();
        grant_diags *d = grant_diags_new();
        grant_policy *p = NULL;
        /* named as in the context's project, so origins do not name the tree */
        gk_autofree char *text = gk_test_read(files.v[i], NULL);
        gk_autofree char *name = gk_printf("/w/%s", gk_basename(files.v[i]));
        ck_assert_int_eq(grant_compile_buffer(ctx, name, text, strlen(text), d, &p), 0);
        for (int l = 0; l < 2; l++) {
            grant_enforcement *e = NULL;
            ck_assert_int_eq(grant_enforcement_derive(p, (grant_level)l, &e), 0);
            gk_autofree char *table = grant_enforcement_text(e);
            gk_autofree char *stem = gk_strndup(files.v[i], strlen(files.v[i]) - 6);
            gk_autofree char *golden = gk_printf("%s.%s.txt", stem, grant_level_name((grant_level)l));
            gk_test_golden_text(golden, table);
            /* the frame protocol's run-result member: the level and what
             * it does not enforce (frame-protocol.md 3b) */
            gk_autofree char *member = grant_enforcement_member_json(e);
            gk_autofree char *want = gk_printf(
                "{\"level\":\"%s\",\"unenforced\":[%s]}", grant_level_name((grant_level)l),
                l ? "\"no signal to host processes\"" : "");
            ck_assert_str_eq(member, want);
            ck_assert_uint_eq(grant_enforcement_unenforced_count(e), l ? 1 : 0);
            ck_assert_int_eq(grant_enforcement_level(e), l);
            grant_enforcement_free(e);
        }
        grant_policy_free(p);
        grant_diags_free(d);
        grant_context_free(ctx);
    }
    gk_strvec_free(&files);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("level");
    TCase *tc = tcase_create("root");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, attacks_no_userns_landlock);
    tcase_add_test(tc, attacks_no_mount_landlock);
    tcase_add_test(tc, attacks_host_namespaces);
    tcase_add_test(tc, auto_no_userns);
    tcase_add_test(tc, auto_no_mount);
    tcase_add_test(tc, auto_host_is_namespaces);
    tcase_add_test(tc, auto_remembers_the_probe);
    tcase_add_test(tc, auto_without_bwrap);
    tcase_add_test(tc, carve_outs_nest);
    tcase_add_test(tc, net_allowed_reaches_the_host);
    tcase_add_test(tc, a_rule_not_enforced_needs_allow_degraded);
    tcase_add_test(tc, the_run_ends_whole);
    tcase_add_test(tc, report_and_audit_agree_on_every_bundled_policy);
    tcase_add_test(tc, golden_records);
    tcase_add_test(tc, frame_landlock_no_userns);
    tcase_add_test(tc, frame_levels_host);
    tcase_add_test(tc, frame_levels_no_userns);
    suite_add_tcase(s, tc);
    TCase *user = tcase_create("as the user");
    tcase_set_timeout(user, 120);
    tcase_add_checked_fixture(user, setup, teardown);
    tcase_add_test(user, attacks_no_userns_landlock_as_the_user);
    tcase_add_test(user, attacks_no_mount_landlock_as_the_user);
    tcase_add_test(user, attacks_host_namespaces_as_the_user);
    tcase_add_test(user, auto_no_userns_as_the_user);
    tcase_add_test(user, auto_no_mount_as_the_user);
    tcase_add_test(user, the_run_ends_whole_as_the_user);
    tcase_add_test(user, frame_landlock_no_userns_as_the_user);
    tcase_add_test(user, frame_landlock_no_mount_as_the_user);
    tcase_add_test(user, frame_levels_no_mount_as_the_user);
    suite_add_tcase(s, user);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
