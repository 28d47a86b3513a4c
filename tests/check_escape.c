/* check_escape.c - the red team's routes out of grantrun (issue 14), each
 * against the real envelope (the grantrun binary, bwrap, the helper's
 * noexec remounts, Landlock and seccomp on this kernel), each with a
 * control action in the same run that succeeds.
 *
 * The attacks are steps of tests/escape-probe (see escape_probe.c), a
 * program the policies admit by its path; it prints one line per step.
 * The scratch tree lives under /var/tmp (bwrap's /tmp is private), mode
 * 0755, so an unprivileged user can run there too: run as root, the suite
 * creates the user gk-escape (useradd) and runs the tests marked "as the
 * user" through setpriv, every bundled policy included; run as another
 * user, it is that user.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define USER "gk-escape"

static char *base;    /* the scratch tree */
static char *project; /* base/project: the command's cwd, writable */
static char *probe;   /* base/bin/escape-probe */
static uid_t user_uid; /* the unprivileged user */
static gid_t user_gid;
static bool have_user;

static void setup(void)
{
    have_user = gk_test_user(&user_uid, &user_gid); /* made when run as root */
    char tmpl[] = "/var/tmp/gk-escape-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_int_eq(chmod(tmpl, 0755), 0);
    base = gk_strdup(tmpl);
    project = gk_printf("%s/project", base);
    ck_assert_int_eq(mkdir(project, 0755), 0);
    gk_autofree char *bin = gk_printf("%s/bin", base);
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    probe = gk_printf("%s/escape-probe", bin);
    gk_autofree char *built = gk_printf("%s/tests/escape-probe", gk_test_builddir());
    gk_test_copy(built, probe, 0755);
    gk_autofree char *hello = gk_printf("%s/hello.txt", project);
    gk_test_write(hello, "hello from the project\n", 0644);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
    ck_assert_int_eq(setenv("HOME", base, 1), 0);
    ck_assert_int_eq(chdir(project), 0);
}

static void teardown(void)
{
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
    free(base);
    free(project);
    free(probe);
}

/* The project handed to the unprivileged user (it writes there). */
static void give_project(void)
{
    gk_autofree char *cmd = gk_printf("chown -R %u:%u '%s'", (unsigned)user_uid,
                                      (unsigned)user_gid, project);
    ck_assert_int_eq(system(cmd), 0);
}

/* A policy file: text with every "@B" replaced by the scratch tree. */
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
    char *path = gk_printf("%s/%s", base, name);
    gk_test_write(path, body, 0644);
    return path;
}

/* The usual policy: exec restricted to the probe and a few tools, the
 * project writable. */
static const char restricted[] = "grant e {\n"
                                 "    exec { allow @B/bin/escape-probe true cat; }\n"
                                 "    fs {\n"
                                 "        read /usr /etc @B/bin;\n"
                                 "        write cwd:;\n"
                                 "        readonly cwd:/hooks;\n"
                                 "    }\n"
                                 "    net deny;\n"
                                 "}\n";

typedef struct run {
    int status;
    char *out, *err;
} run;

/* grantrun ARGS... (NULL-terminated), as root or as the user. */
static run grantrun_as(bool as_user, const char *const *args)
{
    gk_strvec v = {0};
    if (as_user && geteuid() == 0) {
        ck_assert_msg(have_user, "no unprivileged user could be made (useradd " USER ")");
        gk_test_setpriv(&v, user_uid, user_gid);
    }
    gk_strvec_push_take(&v, gk_printf("%s/grantrun", gk_test_builddir()));
    for (size_t i = 0; args[i]; i++)
        gk_strvec_push(&v, args[i]);
    gk_strvec_push_take(&v, NULL);
    run r = {0};
    r.status = gk_test_run(v.v, NULL, &r.out, &r.err);
    gk_strvec_free(&v);
    return r;
}

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Every "VERB=RESULT" line of want is in the probe's output. */
static void expect(const run *r, const char *const *want)
{
    for (size_t i = 0; want[i]; i++) {
        gk_autofree char *line = gk_printf("%s\n", want[i]);
        ck_assert_msg(strstr(r->out, line), "missing '%s' (status %d) in:\n%s\nstderr: %s",
                      want[i], r->status, r->out, r->err);
    }
}

static mode_t host_mode(const char *rel)
{
    gk_autofree char *p = gk_printf("%s/%s", project, rel);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    return st.st_mode & 07777;
}

/* ---- 2. fileless exec ------------------------------------------------- */

static void fileless(bool as_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    if (as_user)
        give_project();
    /* A sealed memfd (MFD_NOEXEC_SEAL) still goes through the ELF loader:
     * no memfd at all. */
    run r = grantrun_as(as_user, ARGS("-p", pol, "--", probe, "run:/usr/bin/true",
                                      "execveat:/usr/bin/true", "memfd:/usr/bin/true",
                                      "memfd-fexec:/usr/bin/true", "memfd-ldso:/usr/bin/true"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("run=EXIT:0", "execveat=EXIT:0", "memfd=ERR:ENOSYS",
                    "memfd-fexec=ERR:ENOSYS", "memfd-ldso=ERR:ENOSYS"));
    run_free(&r);
}

START_TEST(fileless_exec_is_refused)
{
    fileless(false);
}
END_TEST

START_TEST(fileless_exec_is_refused_as_the_user)
{
    fileless(true);
}
END_TEST

/* ---- 1, 3, 4: written files run through the ELF loader ---------------- */

#define LOADER_CONTROL "ldso:/usr/bin/true"

START_TEST(dev_shm_is_noexec)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, "cp:/usr/bin/true:/dev/shm/p",
                                    "ldso:/dev/shm/p", LOADER_CONTROL));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* The copy is made (/dev/shm stays writable), the loader cannot map
     * it (127: ld.so's own "error while loading"). */
    expect(&r, ARGS("cp=OK", "ldso=EXIT:127", "ldso=EXIT:0"));
    run_free(&r);
}
END_TEST

START_TEST(a_single_file_write_region_is_noexec)
{
    gk_autofree char *pol = policy("f.grant", "grant f {\n"
                                              "    exec { allow @B/bin/escape-probe true; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin cwd:;\n"
                                              "        write cwd:/single;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *single = gk_printf("%s/single", project);
    gk_test_write(single, "", 0755);
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, "cp:/usr/bin/true:single",
                                    "ldso:./single", LOADER_CONTROL));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("cp=OK", "ldso=EXIT:127", "ldso=EXIT:0"));
    struct stat st;
    ck_assert_int_eq(stat(single, &st), 0);
    ck_assert_int_gt(st.st_size, 0); /* the write reached the host */
    run_free(&r);
}
END_TEST

START_TEST(a_readonly_rebind_inside_a_write_region_is_noexec)
{
    /* What the host (or an earlier run) put under a readonly entry of a
     * write region: readable, not writable, and not loadable either. */
    gk_autofree char *pol = policy("e.grant", restricted);
    gk_autofree char *hooks = gk_printf("%s/hooks", project);
    ck_assert_int_eq(mkdir(hooks, 0755), 0);
    gk_autofree char *planted = gk_printf("%s/t", hooks);
    gk_test_copy("/usr/bin/true", planted, 0755);
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, "cp:/usr/bin/true:hooks/x",
                                    "ldso:hooks/t", "cp:hooks/t:copy", LOADER_CONTROL));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("cp=ERR:EROFS", "ldso=EXIT:127", "cp=OK", "ldso=EXIT:0"));
    run_free(&r);
}
END_TEST

/* ---- descriptors the caller hands in ---------------------------------- */


/* ---- 6, 7: a vetoed program off PATH, and under another name ---------- */

/* A vetoed name in a lib/.../bin directory below an admitted dir (not on
 * PATH: google-cloud-sdk's bundled python3), and a hard link of a vetoed
 * file under an innocent name (Debian's perl5.36.0), run neither directly
 * nor through the ELF loader; an admitted program beside them does. */
START_TEST(a_vetoed_program_off_path_or_hard_linked_is_masked)
{
    gk_autofree char *bin = gk_printf("%s/opt/lib/tool/bin", base);
    gk_autofree char *mk = gk_printf("mkdir -p %s", bin);
    ck_assert_int_eq(system(mk), 0);
    gk_autofree char *py = gk_printf("%s/python3", bin);
    gk_autofree char *vetoed = gk_printf("%s/vetoed", bin);
    gk_autofree char *link_ = gk_printf("%s/innocent", bin);
    gk_autofree char *ok = gk_printf("%s/admitted", bin);
    gk_test_copy("/usr/bin/true", py, 0755);
    gk_test_copy("/usr/bin/true", vetoed, 0755);
    gk_test_copy("/usr/bin/true", ok, 0755);
    ck_assert_int_eq(link(vetoed, link_), 0);
    gk_autofree char *pol = policy("v.grant", "grant v {\n"
                                              "    exec {\n"
                                              "        allow @B/bin/escape-probe @B/opt/;\n"
                                              "        deny python3 @B/opt/lib/tool/bin/vetoed;\n"
                                              "    }\n"
                                              "    fs { read /usr /etc @B/bin @B/opt; write cwd:; }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *s1 = gk_printf("run:%s", py), *s2 = gk_printf("ldso:%s", py);
    gk_autofree char *s3 = gk_printf("run:%s", link_), *s4 = gk_printf("ldso:%s", link_);
    gk_autofree char *s5 = gk_printf("run:%s", ok), *s6 = gk_printf("ldso:%s", ok);
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, s1, s2, s3, s4, s5, s6));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("run=ERR:EACCES", "ldso=EXIT:127", "run=ERR:EACCES", "ldso=EXIT:127",
                    "run=EXIT:0", "ldso=EXIT:0"));
    run_free(&r);
}
END_TEST

/* With an exec allow-list, Landlock lets the command execute anything in
 * an admitted dir: a vetoed program anywhere below one (not in a bin
 * directory, hidden, reached through a link) is masked, however deep;
 * an admitted one beside it runs. (The layout scan never looked there:
 * /usr/lib/gcc/.../12/lto-wrapper under `allow /usr/lib/gcc/`.) */
START_TEST(a_vetoed_program_deep_in_an_admitted_dir_is_masked)
{
    gk_autofree char *deep = gk_printf("%s/opt/a/b/c/d/e", base);
    gk_autofree char *mk = gk_printf("mkdir -p %s", deep);
    ck_assert_int_eq(system(mk), 0);
    gk_autofree char *vetoed = gk_printf("%s/lto-wrapper", deep);
    gk_autofree char *hidden = gk_printf("%s/.cc1", deep);
    gk_autofree char *ok = gk_printf("%s/admitted", deep);
    gk_autofree char *lnk = gk_printf("%s/opt/a/cc1", base);
    gk_test_copy("/usr/bin/true", vetoed, 0755);
    gk_test_copy("/usr/bin/true", hidden, 0755);
    gk_test_copy("/usr/bin/true", ok, 0755);
    ck_assert_int_eq(symlink("b/c/d/e/.cc1", lnk), 0);
    gk_autofree char *pol = policy("d.grant", "grant d {\n"
                                              "    exec {\n"
                                              "        allow @B/bin/escape-probe @B/opt/;\n"
                                              "        deny lto-wrapper cc1 match \"^[.]cc\";\n"
                                              "    }\n"
                                              "    fs { read /usr /etc @B/bin @B/opt; write cwd:; }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *s1 = gk_printf("run:%s", vetoed), *s2 = gk_printf("ldso:%s", vetoed);
    gk_autofree char *s3 = gk_printf("run:%s", hidden), *s4 = gk_printf("run:%s", lnk);
    gk_autofree char *s5 = gk_printf("run:%s", ok), *s6 = gk_printf("ldso:%s", ok);
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, s1, s2, s3, s4, s5, s6));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("run=ERR:EACCES", "ldso=EXIT:127", "run=EXIT:0", "ldso=EXIT:0"));
    /* Each line in order: the three vetoed runs refused. */
    ck_assert_msg(strstr(r.out, "run=ERR:EACCES\nldso=EXIT:127\nrun=ERR:EACCES\nrun=ERR:EACCES\n"
                                "run=EXIT:0\nldso=EXIT:0\n"),
                  "unexpected:\n%s\nstderr: %s", r.out, r.err);
    run_free(&r);
}
END_TEST

/* grantrun's stderr redirected into a file of the project: the command
 * gets a pipe, so it cannot write a program through the descriptor and
 * map it from the host's (exec) mount. */
static void handed_in(bool as_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    gk_autofree char *log = gk_printf("%s/err.log", project);
    gk_test_write(log, "", 0644);
    if (as_user)
        give_project();
    gk_autofree char *as = as_user && geteuid() == 0
                               ? gk_printf("/usr/bin/setpriv --reuid=%u --regid=%u "
                                           "--clear-groups -- ",
                                           (unsigned)user_uid, (unsigned)user_gid)
                               : gk_strdup("");
    gk_autofree char *script = gk_printf(
        "exec %s%s/grantrun -p '%s' -- '%s' cp:/usr/bin/true:/proc/self/fd/2 "
        "mapexec:/proc/self/fd/2 mapexec:/usr/bin/true 2>'%s'",
        as, gk_test_builddir(), pol, probe, log);
    run r = {0};
    char *const argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
    r.status = gk_test_run(argv, NULL, &r.out, &r.err);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    /* pipefs is noexec: EPERM. */
    expect(&r, ARGS("cp=OK", "mapexec=ERR:EPERM", "mapexec=OK"));
    struct stat st;
    ck_assert_int_eq(stat(log, &st), 0);
    ck_assert_int_gt(st.st_size, 4096); /* what the command wrote reached the file */
    run_free(&r);
}

/* The relay holds the file the command must not reach: its /proc/PID/fd
 * is closed to the command from the command's first instruction on (the
 * relay was dumpable for a moment after the fork, and a command that
 * reopened its parent's descriptor at once got the file back about one
 * run in three). Twenty runs, each reaching for it first. */
static void relay_race(bool as_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    gk_autofree char *log = gk_printf("%s/err.log", project);
    gk_test_write(log, "", 0644);
    if (as_user)
        give_project();
    gk_autofree char *as = as_user && geteuid() == 0
                               ? gk_printf("/usr/bin/setpriv --reuid=%u --regid=%u "
                                           "--clear-groups -- ",
                                           (unsigned)user_uid, (unsigned)user_gid)
                               : gk_strdup("");
    gk_autofree char *script = gk_printf(
        "for i in $(seq 20); do %s%s/grantrun -p '%s' -- '%s' parentfd:2 mode:. 2>>'%s' || "
        "exit 1; done",
        as, gk_test_builddir(), pol, probe, log);
    run r = {0};
    char *const argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
    r.status = gk_test_run(argv, NULL, &r.out, &r.err);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(!strstr(r.out, "parentfd=OK"), "the relay's descriptor was reopened:\n%s",
                  r.out);
    /* Control: each run got to its next step. */
    size_t runs = 0;
    for (const char *p = r.out; (p = strstr(p, "parentfd=ERR:EACCES\nmode=")); p++)
        runs++;
    ck_assert_uint_eq(runs, 20);
    run_free(&r);
}

START_TEST(the_relay_is_never_reopened)
{
    relay_race(false);
}
END_TEST

START_TEST(the_relay_is_never_reopened_as_the_user)
{
    relay_race(true);
}
END_TEST

/* Without noexec remounts (exec not restricted) the envelope's read-only
 * re-binds still protect: a protected file handed in read-only as stdin
 * reached the command as the host's descriptor, and /proc/self/fd/0
 * reopened it for writing on the host's mount; a directory handed in led
 * past every mount. The file comes as a pipe, the directory is refused;
 * a pipe and a file written through stdout are as they were. */
static void handed_in_readonly(bool as_user)
{
    gk_autofree char *pol = policy("v.grant", "grant v {\n"
                                              "    exec { deny bash; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd:;\n"
                                              "        readonly cwd:/hooks;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *hooks = gk_printf("%s/hooks", project);
    ck_assert_int_eq(mkdir(hooks, 0755), 0);
    gk_autofree char *h = gk_printf("%s/h", hooks);
    gk_test_write(h, "safe\n", 0644);
    if (as_user)
        give_project();
    gk_autofree char *as = as_user && geteuid() == 0
                               ? gk_printf("/usr/bin/setpriv --reuid=%u --regid=%u "
                                           "--clear-groups -- ",
                                           (unsigned)user_uid, (unsigned)user_gid)
                               : gk_strdup("");
    gk_autofree char *gr = gk_printf("%s%s/grantrun -p '%s' -- '%s'", as, gk_test_builddir(), pol,
                                     probe);
    const struct {
        const char *tail;
        int status;
        const char *out;
    } runs[] = {
        {"fdtype:0 write:/proc/self/fd/0 < hooks/h", 0, "fdtype=fifo\nwrite=OK\n"},
        {"write:/proc/self/fd/0/planted < hooks", 125, ""},
        {"fdtype:0 fdtype:1 < /dev/null > out.log; cat out.log", 0, "fdtype=chr\nfdtype=reg\n"},
        {"fdtype:0 < hooks/h | cat", 0, "fdtype=fifo\n"},
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
        gk_autofree char *script = gk_printf("%s %s", gr, runs[i].tail);
        run r = {0};
        char *const argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
        r.status = gk_test_run(argv, NULL, &r.out, &r.err);
        ck_assert_msg(r.status == runs[i].status && strcmp(r.out, runs[i].out) == 0,
                      "%s: status %d:\n%s\nstderr: %s", runs[i].tail, r.status, r.out, r.err);
        if (runs[i].status == 125)
            ck_assert_msg(strstr(r.err, "is a directory of the host"), "stderr: %s", r.err);
        run_free(&r);
    }
    gk_autofree char *text = gk_test_read(h, NULL);
    ck_assert_str_eq(text, "safe\n");
    gk_autofree char *planted = gk_printf("%s/planted", hooks);
    ck_assert_int_ne(access(planted, F_OK), 0);
}

START_TEST(a_protected_file_handed_in_stays_protected)
{
    handed_in_readonly(false);
}
END_TEST

START_TEST(a_protected_file_handed_in_stays_protected_as_the_user)
{
    handed_in_readonly(true);
}
END_TEST

START_TEST(a_file_handed_in_is_relayed)
{
    handed_in(false);
}
END_TEST

START_TEST(a_file_handed_in_is_relayed_as_the_user)
{
    handed_in(true);
}
END_TEST

/* ---- 5. unrestricted fs with restricted exec -------------------------- */

START_TEST(restricted_exec_needs_restricted_fs)
{
    /* The host root is bound writable: no noexec pass could cover what
     * the run writes, so grantrun refuses before anything runs. */
    gk_autofree char *pol = policy("u.grant", "grant u {\n"
                                              "    exec { allow @B/bin/escape-probe true; }\n"
                                              "    fs { deny /etc/shadow; }\n"
                                              "    net deny;\n"
                                              "}\n");
    run r = grantrun_as(false, ARGS("-p", pol, "--", probe, "cp:/usr/bin/true:x"));
    ck_assert_msg(r.status == 125, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "exec is restricted but fs is not"), "stderr: %s", r.err);
    ck_assert_str_eq(r.out, "");
    gk_autofree char *x = gk_printf("%s/x", project);
    ck_assert_int_ne(access(x, F_OK), 0); /* nothing ran */
    run_free(&r);
    /* Control: the same fs with vetoes only runs. */
    gk_autofree char *ok = policy("v.grant", "grant v {\n"
                                             "    exec { deny bash; }\n"
                                             "    fs { deny /etc/shadow; }\n"
                                             "    net deny;\n"
                                             "}\n");
    r = grantrun_as(false, ARGS("-p", ok, "--", probe, "cp:/usr/bin/true:x"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("cp=OK"));
    ck_assert_int_eq(access(x, F_OK), 0);
    run_free(&r);
}
END_TEST

/* ---- 9. setuid bits and file capabilities ----------------------------- */

static void no_setuid(bool as_user, const char *pol, const char *prog)
{
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("-p", pol, "--", prog, "cp:/usr/bin/id:s",
                                      "chmod:4755:s", "chmod:2755:s", "fchmod:6755:s",
                                      "fchmodat2:4711:s", "creat:4755:s2", "tmpfile:2755:.",
                                      "mknod:4755:s4", "setcap:s", "chmod:0750:s",
                                      "creat:0644:s3"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("cp=OK", "chmod=ERR:EPERM", "fchmod=ERR:EPERM", "fchmodat2=ERR:EPERM",
                    "creat=ERR:EPERM", "tmpfile=ERR:EPERM", "mknod=ERR:EPERM",
                    "setcap=ERR:EPERM", "chmod=OK", "creat=OK"));
    ck_assert_msg(!strstr(r.out, "chmod=OK\nchmod=OK"), "a setuid chmod held:\n%s", r.out);
    /* What reached the host carries no such bit. */
    ck_assert_uint_eq(host_mode("s"), 0750);
    ck_assert_uint_eq(host_mode("s3"), 0644);
    gk_autofree char *s2 = gk_printf("%s/s2", project), *s4 = gk_printf("%s/s4", project);
    ck_assert_int_ne(access(s2, F_OK), 0);
    ck_assert_int_ne(access(s4, F_OK), 0);
    run_free(&r);
}

START_TEST(nothing_written_is_setuid)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    no_setuid(false, pol, probe);
}
END_TEST

START_TEST(nothing_written_is_setuid_with_vetoes_only)
{
    /* base/minimal shows only the project: the probe runs from there (exec
     * is not restricted, so nothing is noexec). */
    gk_autofree char *pol = gk_test_path("policies/base/minimal.grant");
    gk_autofree char *local = gk_printf("%s/escape-probe", project);
    gk_test_copy(probe, local, 0755);
    no_setuid(false, pol, local);
}
END_TEST

START_TEST(nothing_written_is_setuid_as_the_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    no_setuid(true, pol, probe);
}
END_TEST

/* ---- 10. --processes ------------------------------------------------- */

static void processes(bool as_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("-p", pol, "--processes", "20", "--", probe, "fork:60"));
    if (!as_user && geteuid() == 0) {
        /* The kernel never applies RLIMIT_NPROC to uid 0: refused, and
         * said why, before anything runs. */
        ck_assert_msg(r.status == 125, "status %d: %s%s", r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "RLIMIT_NPROC"), "stderr: %s", r.err);
        ck_assert_str_eq(r.out, "");
    } else {
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        long made = -1;
        const char *f = strstr(r.out, "fork=");
        ck_assert_ptr_nonnull(f);
        made = strtol(f + 5, NULL, 10);
        ck_assert_msg(made >= 1 && made < 20, "%ld of 60 forks with --processes 20", made);
    }
    run_free(&r);
    /* Above the current hard limit: that limit is kept (and root is
     * refused whatever N). */
    r = grantrun_as(as_user, ARGS("-p", pol, "--processes", "100000000", "--", "true"));
    ck_assert_int_eq(r.status, as_user || geteuid() != 0 ? 0 : 125);
    run_free(&r);
    /* Control: without the limit, the forks all happen. */
    r = grantrun_as(as_user, ARGS("-p", pol, "--", probe, "fork:60"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("fork=60"));
    run_free(&r);
}

START_TEST(processes_fails_closed_for_root)
{
    processes(false);
}
END_TEST

START_TEST(processes_holds_for_the_user)
{
    processes(true);
}
END_TEST

/* ---- 11. an ordinary user ------------------------------------------- */

START_TEST(written_files_cannot_run_as_the_user)
{
    gk_autofree char *pol = policy("e.grant", restricted);
    give_project();
    run r = grantrun_as(true, ARGS("-p", pol, "--", probe, "cp:/usr/bin/true:w", "ldso:./w",
                                   "cp:/usr/bin/true:/dev/shm/p", "ldso:/dev/shm/p",
                                   "run:/usr/bin/id", LOADER_CONTROL));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    expect(&r, ARGS("cp=OK", "ldso=EXIT:127", "run=ERR:EACCES", "ldso=EXIT:0"));
    ck_assert_msg(!strstr(r.out, "ldso=EXIT:0\nldso"), "a written file ran:\n%s", r.out);
    run_free(&r);
}
END_TEST

START_TEST(every_bundled_policy_runs_as_the_user)
{
    give_project();
    static const char *const bundled[] = {"base/minimal.grant", "base/reasonable.grant",
                                          "base/reasonable.yaml"};
    for (size_t i = 0; i < sizeof(bundled) / sizeof(*bundled); i++) {
        gk_autofree char *rel = gk_printf("policies/%s", bundled[i]);
        gk_autofree char *pol = gk_test_path(rel);
        run r = grantrun_as(true, ARGS("-p", pol, "--", "cat", "hello.txt"));
        ck_assert_msg(r.status == 0 && strstr(r.out, "hello from the project"),
                      "%s: status %d: %s%s", bundled[i], r.status, r.out, r.err);
        run_free(&r);
    }
}
END_TEST

/* ---- 12. a protected name that is a symlink -------------------------- */

/* A readonly entry whose name is a symlink in a write region (dotfiles
 * kept by stow: ~/.bashrc -> dotfiles/bashrc; a .git that is a link to
 * the git dir; a directory link on the way to the entry): the read-only
 * re-bind lands on the target, and the link itself must not be removed,
 * renamed or replaced either, or the name leads to what the command wrote
 * (the next shell, the next git on the host). A link the policy does not
 * protect, beside them, is written through, and a file elsewhere removed:
 * the controls. */
static void protected_links(bool as_user, const char *level)
{
    const char *const mk[] = {"dotfiles", "gitdir", "real", "real/sub", "h", "o"};
    for (size_t i = 0; i < sizeof(mk) / sizeof(*mk); i++) {
        gk_autofree char *d = gk_printf("%s/%s", project, mk[i]);
        ck_assert_int_eq(mkdir(d, 0755), 0);
    }
    const char *const files[] = {"dotfiles/rc", "gitdir/config", "real/sub/x", "dotfiles/other",
                                 "o/f"};
    for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
        gk_autofree char *f = gk_printf("%s/%s", project, files[i]);
        gk_test_write(f, "safe\n", 0644);
    }
    /* In a directory of their own: at the landlock level, the directories
     * holding a carve-out take no new entries anyway. */
    const char *const links[][2] = {{"../dotfiles/rc", "h/.rc"}, {"../gitdir", "h/.gd"},
                                    {"../real", "h/via"}, {"../dotfiles/other", "h/free"}};
    for (size_t i = 0; i < sizeof(links) / sizeof(*links); i++) {
        gk_autofree char *l = gk_printf("%s/%s", project, links[i][1]);
        ck_assert_int_eq(symlink(links[i][0], l), 0);
    }
    gk_autofree char *pol = policy("l.grant", "grant l {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd:;\n"
                                              "        readonly cwd:/h/.rc cwd:/h/.gd cwd:/h/via/sub;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    /* The policy itself opened through a link: the next run opens that name. */
    gk_autofree char *pol_link = gk_printf("%s/h/pol.grant", project);
    ck_assert_int_eq(symlink(pol, pol_link), 0);
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("--level", level, "-p", pol_link, "--", probe, "write:h/.rc",
                                      "write:h/.gd/config", "unlink:h/.rc", "rename:h/.rc:h/m",
                                      "unlink:h/.gd", "rename:h/.gd:h/m", "unlink:h/via",
                                      "rename:h/via:h/m", "unlink:h/pol.grant", "write:h/free",
                                      "unlink:o/f"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* Each line in order: every write, removal and rename of a protected
     * name refused; the controls done. */
    bool ns = strcmp(level, "namespaces") == 0;
    const char *no_write = ns ? "ERR:EROFS" : "ERR:EACCES", *no_move = ns ? "ERR:EBUSY" : "ERR:EACCES";
    gk_autofree char *want = gk_printf("write=%s\nwrite=%s\nunlink=%s\nrename=%s\nunlink=%s\n"
                                       "rename=%s\nunlink=%s\nrename=%s\nunlink=%s\nwrite=OK\n"
                                       "unlink=OK\n",
                                       no_write, no_write, no_move, no_move, no_move, no_move,
                                       no_move, no_move, no_move);
    ck_assert_msg(strcmp(r.out, want) == 0, "%s level:\n%s\nwanted:\n%s\nstderr: %s", level,
                  r.out, want, r.err);
    /* On the host the links are still the links. */
    const char *const kept[] = {"h/.rc", "h/.gd", "h/via", "h/pol.grant"};
    for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++) {
        gk_autofree char *l = gk_printf("%s/%s", project, kept[i]);
        struct stat st;
        ck_assert_int_eq(lstat(l, &st), 0);
        ck_assert_msg(S_ISLNK(st.st_mode), "%s is no longer a symlink", kept[i]);
    }
    run_free(&r);
}

START_TEST(a_protected_symlink_stays)
{
    protected_links(false, "namespaces");
}
END_TEST

START_TEST(a_protected_symlink_stays_at_the_landlock_level)
{
    protected_links(false, "landlock");
}
END_TEST

START_TEST(a_protected_symlink_stays_as_the_user)
{
    protected_links(true, "namespaces");
}
END_TEST

START_TEST(a_protected_symlink_stays_at_the_landlock_level_as_the_user)
{
    protected_links(true, "landlock");
}
END_TEST

/* ---- 13. a submodule's .git ------------------------------------------- */

/* A readonly git dir keeps what git reads later: with submodules, git
 * status in the project runs status in each gitlink of the index that has
 * a .git, read from that .git (a "gitdir:" file, or a directory). A .git
 * there that the command could write, or create, would name a git dir of
 * its own, and its core.fsmonitor would run on the host at the next git
 * status. Each gitlink's .git is readonly as the git dir is: the
 * checked-out submodule's file, and the .git of one only in the index;
 * and a linked work tree's .git file, for git run there. */
static void submodule_git(bool as_user, const char *level)
{
    gk_autofree char *src = gk_printf("%s/subsrc", base);
    gk_autofree char *setup = gk_printf(
        "set -e; export GIT_CONFIG_NOSYSTEM=1 HOME='%s'; g='git -c user.email=a@b -c user.name=n "
        "-c protocol.file.allow=always -c init.defaultBranch=main';"
        "$g init -q '%s'; cd '%s'; echo a > a; $g add a; $g commit -qm a;"
        "cd '%s'; $g init -q .; $g submodule add -q '%s' sub; mkdir lib o; echo f > o/f;"
        "$g update-index --add --cacheinfo 160000,$($g -C sub rev-parse HEAD),lib;"
        "$g commit -qm s; $g worktree add -q wt",
        base, src, src, project, src);
    char *const sh[] = {(char *)"/bin/sh", (char *)"-c", setup, NULL};
    char *out = NULL, *err = NULL;
    int st = gk_test_run(sh, NULL, &out, &err);
    ck_assert_msg(st == 0, "git setup: %s%s", out, err);
    free(out);
    free(err);
    gk_autofree char *pol = policy("g.grant", "grant g {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd:;\n"
                                              "        readonly cwd:/.git;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("--level", level, "-p", pol, "--", probe, "write:wt/.git", "write:sub/.git",
                                      "unlink:sub/.git", "rename:sub:moved", "write:lib/.git",
                                      "write:o/f", "write:sub/a"));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    bool ns = strcmp(level, "namespaces") == 0;
    gk_autofree char *want =
        ns ? gk_strdup("write=ERR:EROFS\nwrite=ERR:EROFS\nunlink=ERR:EBUSY\nrename=ERR:EBUSY\nwrite=ERR:EISDIR\n"
                       "write=OK\nwrite=OK\n")
           : gk_strdup("write=ERR:EACCES\nwrite=ERR:EACCES\nunlink=ERR:EACCES\n"
                       "rename=ERR:EACCES\n"
                       "write=ERR:EACCES\nwrite=OK\nwrite=OK\n");
    ck_assert_msg(strcmp(r.out, want) == 0, "%s level:\n%s\nwanted:\n%s\nstderr: %s", level,
                  r.out, want, r.err);
    gk_autofree char *gitfile = gk_printf("%s/sub/.git", project);
    gk_autofree char *text = gk_test_read(gitfile, NULL);
    ck_assert_str_eq(text, "gitdir: ../.git/modules/sub\n");
    run_free(&r);
}

START_TEST(a_submodule_git_is_readonly)
{
    submodule_git(false, "namespaces");
}
END_TEST

START_TEST(a_submodule_git_is_readonly_at_the_landlock_level)
{
    submodule_git(false, "landlock");
}
END_TEST

START_TEST(a_submodule_git_is_readonly_as_the_user)
{
    submodule_git(true, "namespaces");
}
END_TEST

/* ---- 14. host abstract sockets with net allowed ----------------------- */

/* With net allowed the envelope shares the host's network namespace, and
 * with it every abstract Unix socket of the host (an X server's
 * @/tmp/.X11-unix/X0 takes keystrokes for the user's terminal; a
 * container runtime's shim): refused, while TCP to the same host goes. */
static void abstract_with_net(bool as_user, const char *level)
{
    int a = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    gk_autofree char *name = gk_printf("gk-escape-%d", (int)getpid());
    memcpy(sa.sun_path + 1, name, strlen(name));
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
    ck_assert_int_eq(bind(a, (struct sockaddr *)&sa, sl), 0);
    ck_assert_int_eq(listen(a, 8), 0);
    int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in si = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sil = sizeof(si);
    ck_assert_int_eq(bind(t, (struct sockaddr *)&si, sizeof(si)), 0);
    ck_assert_int_eq(listen(t, 8), 0);
    ck_assert_int_eq(getsockname(t, (struct sockaddr *)&si, &sil), 0);
    gk_autofree char *pol = policy("n.grant", "grant n {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs { read /usr /etc @B/bin; write cwd:; }\n"
                                              "    net allow;\n"
                                              "}\n");
    if (as_user)
        give_project();
    gk_autofree char *s1 = gk_printf("abstract:%s", name);
    gk_autofree char *s2 = gk_printf("tcp:127.0.0.1:%d", (int)ntohs(si.sin_port));
    run r = grantrun_as(as_user, ARGS("--level", level, "-p", pol, "--", probe, s1, s2));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strcmp(r.out, "abstract=ERR:EPERM\ntcp=OK\n") == 0, "%s level:\n%s\nstderr: %s",
                  level, r.out, r.err);
    run_free(&r);
    close(a);
    close(t);
}

START_TEST(host_abstract_sockets_stay_closed_with_net)
{
    abstract_with_net(false, "namespaces");
    abstract_with_net(false, "landlock");
}
END_TEST

START_TEST(host_abstract_sockets_stay_closed_with_net_as_the_user)
{
    abstract_with_net(true, "namespaces");
}
END_TEST

/* ---- 15. the names the next run opens first ---------------------------- */

/* `grantrun -p tools/t.grant` from a project: a name that is not there is
 * looked up along GRANTKIT_POLICY_PATH, so the name as given (in the
 * project) and the same name in every earlier policy path directory are
 * where the next run looks first; an include found along the path
 * likewise. The command must not create any of them: its own policy
 * would confine the next run. */
static void shadowed_names(bool as_user, const char *level)
{
    gk_autofree char *lib = gk_printf("%s/lib", base);
    gk_autofree char *mk = gk_printf("mkdir -p '%s/tools' '%s/inc' '%s/pp' '%s/o'", lib, lib,
                                     project, project);
    ck_assert_int_eq(system(mk), 0);
    gk_autofree char *t = gk_printf("%s/tools/t.grant", lib);
    gk_autofree char *inc = gk_printf("%s/inc/i.grant", lib);
    gk_autofree char *body = gk_printf("grant t {\n"
                                       "    include \"inc/i.grant\";\n"
                                       "    exec { allow %s; }\n"
                                       "    fs { read /usr /etc %s/bin; write cwd:; }\n"
                                       "    net deny;\n"
                                       "}\n",
                                       probe, base);
    gk_test_write(t, body, 0644);
    gk_test_write(inc, "grant i {\n    net deny;\n}\n", 0644);
    gk_autofree char *f = gk_printf("%s/o/f", project);
    gk_test_write(f, "f\n", 0644);
    gk_autofree char *pp = gk_printf("%s/pp:%s", project, lib);
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", pp, 1), 0);
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("--level", level, "-p", "tools/t.grant", "--", probe, "mkdir:tools",
                                      "write:tools/t.grant", "mkdir:pp/tools",
                                      "write:pp/tools/t.grant", "mkdir:pp/inc",
                                      "write:pp/inc/i.grant", "write:o/f"));
    unsetenv("GRANTKIT_POLICY_PATH");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* Each mkdir and write of a protected name refused (how depends on
     * the level, and on a placeholder another run of the user keeps), the
     * control written. */
    const char *const verbs[] = {"mkdir=ERR:", "write=ERR:", "mkdir=ERR:", "write=ERR:",
                                 "mkdir=ERR:", "write=ERR:", "write=OK\n"};
    const char *line = r.out;
    for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++) {
        ck_assert_msg(line && gk_has_prefix(line, verbs[i]), "%s level, step %zu:\n%s\nstderr: %s",
                      level, i + 1, r.out, r.err);
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    const char *const names[] = {"tools/t.grant", "pp/tools/t.grant", "pp/inc/i.grant"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        gk_autofree char *n = gk_printf("%s/%s", project, names[i]);
        struct stat st;
        ck_assert_msg(lstat(n, &st) < 0 || !S_ISREG(st.st_mode), "%s was written", names[i]);
    }
    run_free(&r);
}

START_TEST(the_names_the_next_run_opens_stay_absent)
{
    shadowed_names(false, "namespaces");
    shadowed_names(false, "landlock");
}
END_TEST

START_TEST(the_names_the_next_run_opens_stay_absent_as_the_user)
{
    shadowed_names(true, "namespaces");
}
END_TEST

/* A readonly .git that is a file (a linked work tree) names its git dir
 * in the main repository, and that one the common dir with the hooks and
 * config: both are the git dir, readonly as well when the main repository
 * lies in a write region too. */
static void worktree_gitdir(const char *level)
{
    gk_autofree char *setup = gk_printf(
        "set -e; export GIT_CONFIG_NOSYSTEM=1 HOME='%s'; g='git -c user.email=a@b -c user.name=n "
        "-c init.defaultBranch=main'; $g init -q '%s/main'; cd '%s/main'; echo a > a; $g add a;"
        "$g commit -qm a; $g worktree add -q '%s/wt'",
        base, base, base, base);
    char *const sh[] = {(char *)"/bin/sh", (char *)"-c", setup, NULL};
    char *out = NULL, *err = NULL;
    int st = gk_test_run(sh, NULL, &out, &err);
    ck_assert_msg(st == 0, "git setup: %s%s", out, err);
    free(out);
    free(err);
    gk_autofree char *pol = policy("w.grant", "grant w {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd: @B/main @B/wt;\n"
                                              "        readonly @B/wt/.git;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *s1 = gk_printf("write:%s/main/.git/hooks/pre-commit", base);
    gk_autofree char *s2 = gk_printf("write:%s/main/.git/worktrees/wt/HEAD", base);
    gk_autofree char *s3 = gk_printf("write:%s/main/a", base);
    run r = grantrun_as(false, ARGS("--level", level, "-p", pol, "--", probe, s1, s2, s3));
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    gk_autofree char *want = strcmp(level, "namespaces") == 0
                                 ? gk_strdup("write=ERR:EROFS\nwrite=ERR:EROFS\nwrite=OK\n")
                                 : gk_strdup("write=ERR:EACCES\nwrite=ERR:EACCES\nwrite=OK\n");
    ck_assert_msg(strcmp(r.out, want) == 0, "%s level:\n%s\nwanted:\n%s\nstderr: %s", level,
                  r.out, want, r.err);
    run_free(&r);
}

START_TEST(a_worktree_git_dir_is_readonly)
{
    worktree_gitdir("namespaces");
    gk_autofree char *cmd = gk_printf("rm -rf '%s/main' '%s/wt'", base, base);
    ck_assert_int_eq(system(cmd), 0);
    worktree_gitdir("landlock");
}
END_TEST

/* ---- 16. a protected file of several names ----------------------------- */

/* A readonly file that has another name (a hard link, as some dotfile
 * managers make them) in a write region: the re-bind holds one name, the
 * other writes the same file. Neither level can hold it: refused, said
 * why, before anything runs; a file of one name beside it is the control. */
static void hard_linked(bool as_user, const char *level)
{
    gk_autofree char *rc = gk_printf("%s/rc", project), *other = gk_printf("%s/dotlink", project);
    gk_autofree char *one = gk_printf("%s/one", project);
    gk_test_write(rc, "safe\n", 0644);
    gk_test_write(one, "safe\n", 0644);
    ck_assert_int_eq(link(rc, other), 0);
    gk_autofree char *pol = policy("h.grant", "grant h {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd:;\n"
                                              "        readonly cwd:/rc;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    gk_autofree char *ctl = policy("c.grant", "grant c {\n"
                                              "    exec { allow @B/bin/escape-probe; }\n"
                                              "    fs {\n"
                                              "        read /usr /etc @B/bin;\n"
                                              "        write cwd:;\n"
                                              "        readonly cwd:/one;\n"
                                              "    }\n"
                                              "    net deny;\n"
                                              "}\n");
    if (as_user)
        give_project();
    run r = grantrun_as(as_user, ARGS("--level", level, "-p", pol, "--", probe, "write:dotlink"));
    ck_assert_msg(r.status == 125 && strstr(r.err, "hard links"), "%s level: status %d:\n%s%s",
                  level, r.status, r.out, r.err);
    ck_assert_str_eq(r.out, "");
    run_free(&r);
    gk_autofree char *text = gk_test_read(rc, NULL);
    ck_assert_str_eq(text, "safe\n");
    r = grantrun_as(as_user, ARGS("--level", level, "-p", ctl, "--", probe, "write:one",
                                  "write:dotlink"));
    gk_autofree char *want = gk_printf("write=%s\nwrite=OK\n",
                                       strcmp(level, "namespaces") == 0 ? "ERR:EROFS"
                                                                        : "ERR:EACCES");
    ck_assert_msg(r.status == 0 && strcmp(r.out, want) == 0, "%s level: status %d:\n%s%s", level,
                  r.status, r.out, r.err);
    run_free(&r);
}

START_TEST(a_protected_file_with_another_name_is_refused)
{
    hard_linked(false, "namespaces");
    gk_autofree char *cmd = gk_printf("rm -f '%s/rc' '%s/dotlink' '%s/one'", project, project,
                                      project);
    ck_assert_int_eq(system(cmd), 0);
    hard_linked(false, "landlock");
}
END_TEST

START_TEST(a_protected_file_with_another_name_is_refused_as_the_user)
{
    hard_linked(true, "namespaces");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("escape");
    TCase *tc = tcase_create("envelope");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fileless_exec_is_refused);
    tcase_add_test(tc, dev_shm_is_noexec);
    tcase_add_test(tc, a_single_file_write_region_is_noexec);
    tcase_add_test(tc, a_readonly_rebind_inside_a_write_region_is_noexec);
    tcase_add_test(tc, restricted_exec_needs_restricted_fs);
    tcase_add_test(tc, a_vetoed_program_off_path_or_hard_linked_is_masked);
    tcase_add_test(tc, a_vetoed_program_deep_in_an_admitted_dir_is_masked);
    tcase_add_test(tc, processes_fails_closed_for_root);
    tcase_add_test(tc, a_file_handed_in_is_relayed);
    tcase_add_test(tc, the_relay_is_never_reopened);
    tcase_add_test(tc, a_protected_file_handed_in_stays_protected);
    tcase_add_test(tc, nothing_written_is_setuid);
    tcase_add_test(tc, nothing_written_is_setuid_with_vetoes_only);
    tcase_add_test(tc, a_protected_symlink_stays);
    tcase_add_test(tc, a_protected_symlink_stays_at_the_landlock_level);
    tcase_add_test(tc, a_submodule_git_is_readonly);
    tcase_add_test(tc, a_submodule_git_is_readonly_at_the_landlock_level);
    tcase_add_test(tc, host_abstract_sockets_stay_closed_with_net);
    tcase_add_test(tc, the_names_the_next_run_opens_stay_absent);
    tcase_add_test(tc, a_worktree_git_dir_is_readonly);
    tcase_add_test(tc, a_protected_file_with_another_name_is_refused);
    suite_add_tcase(s, tc);
    TCase *user = tcase_create("as the user");
    tcase_set_timeout(user, 120);
    tcase_add_checked_fixture(user, setup, teardown);
    tcase_add_test(user, fileless_exec_is_refused_as_the_user);
    tcase_add_test(user, written_files_cannot_run_as_the_user);
    tcase_add_test(user, every_bundled_policy_runs_as_the_user);
    tcase_add_test(user, processes_holds_for_the_user);
    tcase_add_test(user, a_file_handed_in_is_relayed_as_the_user);
    tcase_add_test(user, the_relay_is_never_reopened_as_the_user);
    tcase_add_test(user, a_protected_file_handed_in_stays_protected_as_the_user);
    tcase_add_test(user, nothing_written_is_setuid_as_the_user);
    tcase_add_test(user, a_protected_symlink_stays_as_the_user);
    tcase_add_test(user, a_protected_symlink_stays_at_the_landlock_level_as_the_user);
    tcase_add_test(user, a_submodule_git_is_readonly_as_the_user);
    tcase_add_test(user, host_abstract_sockets_stay_closed_with_net_as_the_user);
    tcase_add_test(user, the_names_the_next_run_opens_stay_absent_as_the_user);
    tcase_add_test(user, a_protected_file_with_another_name_is_refused_as_the_user);
    suite_add_tcase(s, user);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
