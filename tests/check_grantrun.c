/* check_grantrun.c - grantrun, the real binary, running real commands in
 * the real envelope (bwrap, seccomp, grantkit-helper with Landlock and
 * noexec remounts) on this kernel.
 *
 * One policy (written into a scratch project under /var/tmp, which is the
 * command's cwd: bwrap's /tmp is private) and a table of runs: each row is
 * grantrun's arguments, the exit status and what stdout and stderr must
 * hold. Then what a table cannot say: the placeholder a mask needed is
 * gone after the run, and a file written in the project reached the host.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *project;  /* the command's cwd (write cwd:) */
static char *policy;   /* the policy file */
static char *bad;      /* a policy with a syntax error */

static const char policy_text[] =
    "grant t {\n"
    "    exec {\n"
    "        allow cat env true false ls sleep touch sha256sum unshare sh gk-missing-tool;\n"
    "        deny bash;\n"
    "    }\n"
    "    fs {\n"
    "        read /usr /etc;\n"
    "        write cwd:;\n"
    "        deny /etc/shadow cwd:/absent-secret;\n"
    "    }\n"
    "    net deny;\n"
    "}\n";

static void setup(void)
{
    char tmpl[] = "/var/tmp/gk-grantrun-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    project = gk_printf("%s/project", tmpl);
    ck_assert_int_eq(mkdir(project, 0755), 0);
    policy = gk_printf("%s/t.grant", tmpl);
    gk_test_write(policy, policy_text, 0644);
    /* Its own placeholders' lock: other suites' runs do not hold it. */
    gk_autofree char *rt = gk_printf("%s/run", tmpl);
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    bad = gk_printf("%s/bad.grant", tmpl);
    gk_test_write(bad, "grant b {\n    exec { allow ; }\n}\n", 0644);
    gk_autofree char *hello = gk_printf("%s/hello.txt", project);
    gk_test_write(hello, "hello from the project\n", 0644);
    /* A program written where the command may write: noexec must stop it. */
    gk_autofree char *dst = gk_printf("%s/written-prog", project);
    gk_test_copy("/usr/bin/true", dst, 0755);
    ck_assert_int_eq(chdir(project), 0);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    ck_assert_int_eq(setenv("GK_TEST_SECRET_VAR", "leak", 1), 0);
}

static void teardown(void)
{
    gk_autofree char *dir = gk_strndup(policy, strrchr(policy, '/') - policy);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(project);
    free(policy);
    free(bad);
}

/* grantrun ARGS (NULL-terminated; "@P" is the policy file, "@BAD" the
 * broken one). */
static int grantrun(const char *const *args, char **out, char **err)
{
    gk_strvec v = {0};
    gk_strvec_push_take(&v, gk_printf("%s/grantrun", gk_test_builddir()));
    for (size_t i = 0; args[i]; i++)
        gk_strvec_push(&v, strcmp(args[i], "@P") == 0     ? policy
                           : strcmp(args[i], "@BAD") == 0 ? bad
                                                          : args[i]);
    gk_strvec_push_take(&v, NULL);
    int st = gk_test_run(v.v, NULL, out, err);
    gk_strvec_free(&v);
    return st;
}

typedef struct row {
    const char *what;
    const char *args[12];
    int status;
    const char *out; /* substring of stdout, NULL: anything */
    const char *err; /* substring of stderr, NULL: anything */
    const char *not_out; /* must not be in stdout */
} row;

static const row rows[] = {
    {"an admitted program reads the project", {"-p", "@P", "--", "cat", "hello.txt"}, 0,
     "hello from the project", NULL, NULL},
    {"the command's status is relayed", {"-p", "@P", "--", "false"}, 1, NULL, NULL, NULL},
    {"a bundled policy is found along the policy path",
     {"-p", "base/reasonable.grant", "--", "cat", "hello.txt"}, 0, "hello from the project", NULL,
     NULL},
    {"a denied file is masked", {"-p", "@P", "--", "cat", "/etc/shadow"}, 1, NULL,
     "Permission denied", NULL},
    {"what no region grants is not there", {"-p", "@P", "--", "ls", "/root"}, 2, NULL,
     "No such file", NULL},
    {"a program written in a writable region cannot run (noexec)",
     {"-p", "@P", "--", "env", "./written-prog"}, 126, NULL, "Permission denied", NULL},
    {"a program the stack does not admit cannot run (Landlock)",
     {"-p", "@P", "--", "env", "id"}, 126, NULL, "Permission denied", NULL},
    {"writing outside the writable regions fails",
     {"-p", "@P", "--", "touch", "/var/tmp/gk-grantrun-outside"}, 1, NULL, NULL, NULL},
    {"the gate refuses a vetoed program before anything starts",
     {"-p", "@P", "--", "bash", "-c", "true"}, 126, NULL, "refused by the policy: deny bash",
     NULL},
    {"the gate refuses an unlisted program", {"-p", "@P", "--", "id"}, 126, NULL,
     "refused by the policy", NULL},
    {"admitted but missing", {"-p", "@P", "--", "gk-missing-tool"}, 127, NULL,
     "no such program", NULL},
    {"no new user namespace inside (seccomp, in place of --disable-userns)",
     {"-p", "@P", "--", "unshare", "--user", "true"}, 1, NULL, "Operation not permitted", NULL},
    {"timeout kills the envelope", {"-p", "@P", "--timeout", "300ms", "--", "sleep", "5"}, 124,
     NULL, "timed out", NULL},
    {"--cpu: a busy command gets SIGXCPU", {"-p", "@P", "--cpu", "1", "--", "sha256sum",
                                             "/dev/zero"}, 128 + 24, NULL, NULL, NULL},
    {"--memory: below the 16M minimum (the loader would fail or fault): refused",
     {"-p", "@P", "--memory", "1M", "--", "true"}, 125, NULL, "below the minimum of 16M", NULL},
    {"--memory: room enough", {"-p", "@P", "--memory", "512M", "--", "true"}, 0, NULL, NULL,
     NULL},
    {"--memory: a bad size", {"-p", "@P", "--memory", "12X", "--", "true"}, 125, NULL,
     "not a positive size", NULL},
    {"the default environment is minimal", {"-p", "@P", "--", "env"}, 0, "PATH=", NULL,
     "GK_TEST_SECRET_VAR"},
    {"--env sets a variable", {"-p", "@P", "--env", "FOO=bar", "--", "env"}, 0, "FOO=bar", NULL,
     "GK_TEST_SECRET_VAR"},
    {"--keep-env keeps grantrun's environment", {"-p", "@P", "--keep-env", "--", "env"}, 0,
     "GK_TEST_SECRET_VAR=leak", NULL, NULL},
    {"--dry-run describes and runs nothing", {"-p", "@P", "--dry-run", "--", "true"}, 0,
     "--seccomp", NULL, NULL},
    {"--tty keeps the controlling terminal (no new session)",
     {"-p", "@P", "--tty", "--dry-run", "--", "true"}, 0, "--unshare-pid", NULL,
     "--new-session"},
    {"without --tty, a new session", {"-p", "@P", "--dry-run", "--", "true"}, 0,
     "--new-session", NULL, NULL},
    {"--dry-run shows the Landlock ruleset", {"-p", "@P", "--dry-run", "--", "true"}, 0,
     "grantkit-landlock 1\n", NULL, NULL},
    {"no bubblewrap: fail closed", {"-p", "@P", "--bwrap", "/nonexistent/bwrap", "--", "true"},
     125, NULL, "confinement unavailable", NULL},
    {"a seed that does not exist is refused before spawning",
     {"-p", "@P", "--seed", "x", "--", "true"}, 125, NULL, "--seed x: seed \"x\"", NULL},
    {"--isolate process runs and names the failureKind",
     {"-p", "@P", "--isolate", "process", "--", "false"}, 1, NULL,
     "grantrun: script-error (exitCode 1", NULL},
    {"--tty has no terminal to keep under --isolate process",
     {"-p", "@P", "--isolate", "process", "--tty", "--", "true"}, 125, NULL,
     "no terminal to keep", NULL},
    {"a process-mode option with --isolate none is refused",
     {"-p", "@P", "--isolate", "none", "--json", "--", "true"}, 125, NULL,
     "need --isolate process", NULL},
    {"no policy", {"--", "true"}, 125, NULL, "missing -p FILE", NULL},
    {"a policy that does not compile: file:line:col, nothing runs",
     {"-p", "@BAD", "--", "true"}, 125, NULL, "bad.grant:2:", NULL},
    {"a working directory bwrap cannot enter: nothing runs",
     {"--cwd", "/proc/gk-nonexistent", "-p", "@P", "--", "true"}, 125, NULL,
     "could not set up the envelope", NULL},
    {"no command", {"-p", "@P"}, 125, NULL, "missing the command", NULL},
    {"a policy for another machine is refused",
     {"--target", "linux", "-p", "@P", "--", "true"}, 125, NULL, "compile for this host", NULL},
};

START_TEST(run_table)
{
    const row *r = &rows[_i];
    char *out = NULL, *err = NULL;
    int st = grantrun(r->args, &out, &err);
    ck_assert_msg(st == r->status, "%s: status %d, want %d\nstdout: %s\nstderr: %s", r->what, st,
                  r->status, out, err);
    if (r->out)
        ck_assert_msg(strstr(out, r->out), "%s: stdout lacks '%s':\n%s", r->what, r->out, out);
    if (r->err)
        ck_assert_msg(strstr(err, r->err), "%s: stderr lacks '%s':\n%s", r->what, r->err, err);
    if (r->not_out)
        ck_assert_msg(!strstr(out, r->not_out), "%s: stdout has '%s':\n%s", r->what, r->not_out,
                      out);
    free(out);
    free(err);
}
END_TEST

START_TEST(writes_reach_the_host_and_placeholders_do_not_stay)
{
    /* deny cwd:/absent-secret needs a mask on a name that does not exist:
     * bwrap creates it on the host as a mountpoint, grantrun removes it. */
    gk_autofree char *absent = gk_printf("%s/absent-secret", project);
    gk_autofree char *made = gk_printf("%s/made-inside", project);
    const char *args[] = {"-p", "@P", "--", "touch", "made-inside", NULL};
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(grantrun(args, &out, &err), 0);
    ck_assert_int_eq(access(made, F_OK), 0);
    ck_assert_msg(access(absent, F_OK) < 0 && errno == ENOENT, "placeholder %s stayed", absent);
    free(out);
    free(err);
    /* The command could not create the denied name either. */
    const char *args2[] = {"-p", "@P", "--", "touch", "absent-secret", NULL};
    ck_assert_int_ne(grantrun(args2, &out, &err), 0);
    ck_assert_msg(access(absent, F_OK) < 0, "the command created %s", absent);
    free(out);
    free(err);
}
END_TEST

/* A vetoed program on a PATH directory reached through a link
 * (/usr/local/cuda -> cuda-13.0 on CUDA hosts): the run starts (the mask
 * goes where the file really is), the program is masked by both spellings,
 * and an admitted program runs beside it (the control). */
START_TEST(a_veto_on_a_linked_path_directory_is_masked)
{
    gk_autofree char *root = gk_strndup(policy, strrchr(policy, '/') - policy);
    gk_autofree char *real = gk_printf("%s/real-bin", root);
    gk_autofree char *linked = gk_printf("%s/linked-bin", root);
    ck_assert_int_eq(mkdir(real, 0755), 0);
    ck_assert_int_eq(symlink(real, linked), 0);
    gk_autofree char *cp = gk_printf("cp /usr/bin/true '%s/gk-vetoed'", real);
    ck_assert_int_eq(system(cp), 0);
    gk_autofree char *pol = gk_printf("%s/linked.grant", root);
    gk_autofree char *text = gk_printf("grant l {\n    exec { allow sh true; deny gk-vetoed; }\n"
                                       "    fs { read /usr /etc %s; write cwd:; }\n}\n", root);
    gk_test_write(pol, text, 0644);
    gk_autofree char *path = gk_printf("%s:/usr/bin:/bin", linked);
    gk_autofree char *script = gk_printf("true && echo control-ran; %s/gk-vetoed && echo linked-ran; "
                                         "%s/gk-vetoed && echo real-ran; exit 0", linked, real);
    const char *args[] = {"-p", pol, "--", "sh", "-c", script, NULL};
    gk_autofree char *old = gk_strdup(getenv("PATH"));
    setenv("PATH", path, 1);
    char *out = NULL, *err = NULL;
    int st = grantrun(args, &out, &err);
    setenv("PATH", old, 1);
    ck_assert_msg(st == 0, "status %d; stderr: %s", st, err);
    ck_assert_msg(strstr(out, "control-ran"), "the control did not run: %s", out);
    ck_assert_msg(!strstr(out, "linked-ran") && !strstr(out, "real-ran"),
                  "the vetoed program ran: %s", out);
    free(out);
    free(err);
}
END_TEST

/* In a git worktree or submodule .git is a file naming the real git dir:
 * base/minimal's readonly .git/hooks and .git/config cannot exist there,
 * so the file itself is kept (a run used to fail with 125 on every
 * policy). The run works (the control writes the project) and the file
 * can be neither removed nor replaced by a directory of planted hooks. */
START_TEST(a_worktree_dot_git_file_is_kept)
{
    gk_autofree char *dotgit = gk_printf("%s/.git", project);
    gk_test_write(dotgit, "gitdir: /nonexistent/.git/worktrees/w\n", 0644);
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    const char *args[] = {"-p", minimal, "--", "/usr/bin/env", "touch", "control", NULL};
    char *out = NULL, *err = NULL;
    int st = grantrun(args, &out, &err);
    ck_assert_msg(st == 0, "status %d: %s", st, err);
    gk_autofree char *control = gk_printf("%s/control", project);
    ck_assert_int_eq(access(control, F_OK), 0);
    free(out);
    free(err);
    const char *args2[] = {"-p", minimal, "--", "/usr/bin/env", "rm", "-f", ".git", NULL};
    ck_assert_int_ne(grantrun(args2, &out, &err), 0);
    free(out);
    free(err);
    const char *args3[] = {"-p", minimal, "--", "/usr/bin/env", "mv", ".git", "moved", NULL};
    ck_assert_int_ne(grantrun(args3, &out, &err), 0);
    free(out);
    free(err);
    struct stat sb;
    ck_assert_int_eq(lstat(dotgit, &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
}
END_TEST

/* Git reads its config and hooks from more than .git/config and
 * .git/hooks (#14.8): a planted commondir redirects both to another tree,
 * config.worktree adds config, modules/ and worktrees/ hold whole git dirs.
 * base/minimal keeps the git dir readonly as a whole; the control writes
 * the project in the same run, and git can still read the repository. */
START_TEST(the_git_dir_takes_no_planted_commands)
{
    const char *dirs[] = {".git", ".git/hooks", ".git/objects", ".git/refs", ".git/refs/heads"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        gk_autofree char *d = gk_printf("%s/%s", project, dirs[i]);
        ck_assert_int_eq(mkdir(d, 0755), 0);
    }
    gk_autofree char *head = gk_printf("%s/.git/HEAD", project);
    gk_test_write(head, "ref: refs/heads/main\n", 0644);
    gk_autofree char *minimal = gk_test_path("policies/base/minimal.grant");
    const char *plants[][2] = {{"hello.txt", ".git/commondir"},
                               {"hello.txt", ".git/config.worktree"},
                               {"hello.txt", ".git/modules"},
                               {"hello.txt", ".git/worktrees"},
                               {"hello.txt", ".git/HEAD"}};
    for (size_t i = 0; i < sizeof plants / sizeof *plants; i++) {
        const char *args[] = {"-p", minimal, "--", "/usr/bin/env", "cp", plants[i][0],
                              plants[i][1], NULL};
        char *out = NULL, *err = NULL;
        int st = grantrun(args, &out, &err);
        ck_assert_msg(st != 0, "cp %s %s succeeded: %s", plants[i][0], plants[i][1], err);
        free(out);
        free(err);
    }
    const char *control[] = {"-p", minimal, "--", "/usr/bin/env", "touch", "control", NULL};
    char *out = NULL, *err = NULL;
    int st = grantrun(control, &out, &err);
    ck_assert_msg(st == 0, "status %d: %s", st, err);
    free(out);
    free(err);
    gk_autofree char *made = gk_printf("%s/control", project);
    ck_assert_int_eq(access(made, F_OK), 0);
    const char *names[] = {"commondir", "config.worktree", "modules", "worktrees"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        gk_autofree char *p = gk_printf("%s/.git/%s", project, names[i]);
        struct stat sb;
        ck_assert_msg(lstat(p, &sb) != 0, "%s reached the host", p);
    }
    gk_autofree char *h = gk_test_read(head, NULL);
    ck_assert_str_eq(h, "ref: refs/heads/main\n");
}
END_TEST

/* Is a process running `sleep SECONDS` (a test's marker) alive? */
static bool marker_alive(const char *seconds)
{
    char want[32];
    int wn = snprintf(want, sizeof(want), "sleep%c%s", '\0', seconds) + 1;
    DIR *proc = opendir("/proc");
    ck_assert_ptr_nonnull(proc);
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(proc))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        gk_autofree char *path = gk_printf("/proc/%s/cmdline", e->d_name);
        size_t len = 0;
        gk_autofree char *cmd = gk_test_read(path, &len);
        found = cmd && len == (size_t)wn && memcmp(cmd, want, len) == 0;
    }
    closedir(proc);
    return found;
}

/* grantrun ... -- ARGV in the background, SIGTERM once `sleep MARKER`
 * runs; its exit status. */
static int terminate_run(const char *marker, char *const argv[])
{
    gk_autofree char *bin = gk_printf("%s/grantrun", gk_test_builddir());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0), dup2(devnull, 1), dup2(devnull, 2);
        char *full[16] = {bin, (char *)"-p", policy, (char *)"--"};
        for (int i = 0; argv[i] && i < 11; i++)
            full[4 + i] = argv[i];
        execv(bin, full);
        _exit(99);
    }
    for (int i = 0; i < 150 && !marker_alive(marker); i++)
        usleep(20000);
    ck_assert_msg(marker_alive(marker), "the command never started");
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    for (int i = 0; i < 50 && marker_alive(marker); i++)
        usleep(20000);
    ck_assert_msg(!marker_alive(marker), "the command outlived grantrun");
    ck_assert_msg(WIFEXITED(st), "grantrun itself died: 0x%x", st);
    return WEXITSTATUS(st);
}

/* A signal to grantrun goes to the command (as from a terminal): one that
 * does not catch it dies by it (128+N), and nothing of it outlives grantrun. */
START_TEST(a_signal_reaches_the_command)
{
    char *const argv[] = {(char *)"sleep", (char *)"7.77", NULL};
    ck_assert_int_eq(terminate_run("7.77", argv), 128 + SIGTERM);
}
END_TEST

/* ... and one that catches it can finish on its own terms. */
START_TEST(a_command_may_catch_the_signal)
{
    char *const argv[] = {(char *)"sh", (char *)"-c",
                          (char *)"trap 'exit 42' TERM; sleep 7.78 & wait", NULL};
    ck_assert_int_eq(terminate_run("7.78", argv), 42);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("grantrun");
    TCase *t = tcase_create("runs");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_loop_test(t, run_table, 0, (int)(sizeof(rows) / sizeof(*rows)));
    tcase_add_test(t, writes_reach_the_host_and_placeholders_do_not_stay);
    tcase_add_test(t, a_veto_on_a_linked_path_directory_is_masked);
    tcase_add_test(t, a_worktree_dot_git_file_is_kept);
    tcase_add_test(t, the_git_dir_takes_no_planted_commands);
    tcase_add_test(t, a_signal_reaches_the_command);
    tcase_add_test(t, a_command_may_catch_the_signal);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
