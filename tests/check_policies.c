/* check_policies.c - the policy library (policies/): every bundled policy
 * has a decision table, and each runs its tool's --version for real.
 *
 * 1. Every .grant and .yaml under policies/ is named (lib:NAME) by a table
 *    under tests/data/gate/library/, which check_gate runs: the decisions
 *    that make each policy what its header says.
 * 2. For each base, tool grant and agent policy, a real grantrun run
 *    (bwrap, seccomp, the helper's Landlock) of a program's --version in
 *    a project under /var/tmp, as root and as the unprivileged test user.
 *    A program this host does not have (or the user cannot reach) is
 *    skipped with its reason on stderr (the suite's log), never passed
 *    silently as if it had run; PATH is the directories searched, so a
 *    shim earlier on the caller's PATH does not decide the result.
 */
#include "testutil.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- 1. every policy has a table ------------------------------------------ */

START_TEST(every_policy_has_a_decision_table)
{
    gk_autofree char *lib = gk_test_path("policies");
    gk_autofree char *tables_dir = gk_test_path("tests/data/gate/library");
    gk_strvec tables = gk_test_files(tables_dir, ".table");
    ck_assert_msg(tables.n > 0, "no tables in %s", tables_dir);
    gk_buf all = {0};
    for (size_t i = 0; i < tables.n; i++) {
        gk_autofree char *t = gk_test_read(tables.v[i], NULL);
        ck_assert_ptr_nonnull(t);
        gk_buf_puts(&all, t);
    }
    const char *suffixes[] = {".grant", ".yaml"};
    size_t n = 0;
    for (size_t s = 0; s < 2; s++) {
        gk_strvec files = gk_test_files(lib, suffixes[s]);
        for (size_t i = 0; i < files.n; i++) {
            /* base/reasonable.yaml is the same policy as its .grant
             * (check_cli holds them alike). */
            if (gk_has_suffix(files.v[i], "/base/reasonable.yaml"))
                continue;
            gk_autofree char *name = gk_printf("lib:%s ", files.v[i] + strlen(lib) + 1);
            gk_autofree char *last = gk_printf("lib:%s\n", files.v[i] + strlen(lib) + 1);
            ck_assert_msg(strstr(all.data, name) || strstr(all.data, last),
                          "%s: no decision table under tests/data/gate/library names it",
                          files.v[i]);
            n++;
        }
        gk_strvec_free(&files);
    }
    ck_assert_msg(n >= 10, "only %zu library policies", n);
    gk_buf_free(&all);
    gk_strvec_free(&tables);
}
END_TEST

/* ---- 2. real runs ----------------------------------------------------------- */

typedef struct version_run {
    const char *policy; /* -p, along the policy path */
    const char *extend; /* --extend, or NULL */
    const char *program;
    const char *dirs;   /* where to look for it, ':'-separated; ~ is $HOME */
    const char *expect; /* in its stdout */
    const char *arg;    /* its version argument, NULL: --version */
} version_run;

#define SYS "/usr/bin:/bin"
static const version_run runs[] = {
    {"base/minimal.grant", NULL, "ls", SYS, "GNU coreutils", NULL},
    {"base/reasonable.grant", NULL, "make", SYS, "GNU Make", NULL},
    {"base/reasonable.yaml", NULL, "make", SYS, "GNU Make", NULL},
    {"base/locked.grant", NULL, "cat", SYS, "GNU coreutils", NULL},
    {"agent/coding.grant", NULL, "make", SYS, "GNU Make", NULL},
    {"agent/protect.grant", NULL, "ls", SYS, "GNU coreutils", NULL},
    {"base/locked.grant", "tools/git.grant", "git", SYS, "git version", NULL},
    {"base/locked.grant", "tools/make-cc.grant", "make", SYS, "GNU Make", NULL},
    {"base/locked.grant", "tools/make-cc.grant", "cc", SYS, "Free Software Foundation", NULL},
    {"agent/coding.grant", "tools/make-cc.grant", "cc", SYS, "Free Software Foundation", NULL},
    {"base/locked.grant", "tools/node.grant", "node", SYS, "v", NULL},
    {"base/locked.grant", "tools/node.grant", "npm", SYS, ".", NULL},
    {"agent/coding.grant", "tools/node.grant", "npm", SYS, ".", NULL},
    {"base/locked.grant", "tools/python.grant", "python3", SYS, "Python 3", NULL},
    {"base/locked.grant", "tools/python.grant", "pip3", SYS, "pip ", NULL},
    {"agent/coding.grant", "tools/python.grant", "python3", SYS, "Python 3", NULL},
    {"base/locked.grant", "tools/cargo.grant", "cargo", "~/.cargo/bin:" SYS, "cargo ", NULL},
    {"agent/coding.grant", "tools/cargo.grant", "cargo", "~/.cargo/bin:" SYS, "cargo ", NULL},
    {"base/locked.grant", "tools/go.grant", "go", "/usr/local/go/bin:~/go/bin:/usr/lib/go/bin:" SYS,
     "go version", "version"},
};
#define NRUNS (sizeof runs / sizeof runs[0])

static char *base;     /* scratch root under /var/tmp */
static char *project;  /* the command's cwd */
static uid_t user_uid;
static gid_t user_gid;
static bool have_user;

static void setup(void)
{
    have_user = gk_test_user(&user_uid, &user_gid);
    char tmpl[] = "/var/tmp/gk-policies-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_int_eq(chmod(tmpl, 0755), 0);
    base = gk_strdup(tmpl);
    project = gk_printf("%s/project", base);
    ck_assert_int_eq(mkdir(project, 0755), 0);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    ck_assert_int_eq(chdir(project), 0);
}

static void teardown(void)
{
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
    free(base);
    free(project);
}

/* Can the identity we run as (or the user) execute path? Asked in a child
 * that becomes the user, so the answer is the kernel's. */
static bool executable_as(bool as_user, const char *path)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (as_user && geteuid() == 0 &&
            (setgroups(0, NULL) < 0 || setresgid(user_gid, user_gid, user_gid) < 0 ||
             setresuid(user_uid, user_uid, user_uid) < 0))
            _exit(2);
        _exit(access(path, X_OK) == 0 ? 0 : 1);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The first of r->dirs holding the program, as a PATH of that directory and
 * the system's; NULL when none has it. */
static char *find_program(const version_run *r, bool as_user, const char *home)
{
    gk_autofree char *dirs = gk_strdup(r->dirs);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        gk_autofree char *dir = d[0] == '~' ? gk_printf("%s%s", home, d + 1) : gk_strdup(d);
        gk_autofree char *path = gk_printf("%s/%s", dir, r->program);
        if (executable_as(as_user, path))
            return strcmp(dir, "/usr/bin") == 0 || strcmp(dir, "/bin") == 0
                       ? gk_strdup(SYS)
                       : gk_printf("%s:" SYS, dir);
    }
    return NULL;
}

START_TEST(tool_version_under_policy)
{
    const version_run *r = &runs[_i / 2];
    bool as_user = _i % 2;
    const char *who = as_user ? "the test user" : (geteuid() == 0 ? "root" : "the caller");
    const char *arg = r->arg ? r->arg : "--version";
    gk_autofree char *what = gk_printf("%s%s%s: %s %s as %s", r->policy,
                                       r->extend ? " --extend " : "", r->extend ? r->extend : "",
                                       r->program, arg, who);
    if (as_user && geteuid() != 0) {
        fprintf(stderr, "SKIP %s: not root, so the caller is the unprivileged run\n", what);
        return;
    }
    ck_assert_msg(!as_user || have_user, "no unprivileged user could be made (useradd %s)",
                  GK_TEST_USER);
    /* The user gets a home of its own (the caller's is not theirs to read). */
    gk_autofree char *user_home = gk_printf("%s/home", base);
    const char *home = as_user ? user_home : getenv("HOME") ? getenv("HOME") : "/root";
    gk_autofree char *path = find_program(r, as_user, home);
    if (!path) {
        fprintf(stderr, "SKIP %s: no %s here that %s can run (looked in %s)\n", what,
                r->program, who, r->dirs);
        return;
    }
    gk_autofree char *rt = gk_printf("%s/run-%d", base, _i);
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
    gk_strvec v = {0};
    if (as_user) {
        ck_assert_int_eq(mkdir(user_home, 0700), 0);
        ck_assert_int_eq(setenv("HOME", user_home, 1), 0);
        gk_autofree char *cmd = gk_printf("chown -R %u:%u '%s' '%s' '%s'", (unsigned)user_uid,
                                          (unsigned)user_gid, project, rt, user_home);
        ck_assert_int_eq(system(cmd), 0);
        gk_test_setpriv(&v, user_uid, user_gid);
    }
    gk_strvec_push_take(&v, gk_printf("%s/grantrun", gk_test_builddir()));
    gk_strvec_push(&v, "-p");
    gk_strvec_push(&v, r->policy);
    if (r->extend) {
        gk_strvec_push(&v, "--extend");
        gk_strvec_push(&v, r->extend);
    }
    gk_strvec_push(&v, "--");
    gk_strvec_push(&v, r->program);
    gk_strvec_push(&v, arg);
    gk_strvec_push_take(&v, NULL);
    char *out = NULL, *err = NULL;
    int st = gk_test_run(v.v, NULL, &out, &err);
    ck_assert_msg(st == 0, "%s: exit %d\nstdout: %s\nstderr: %s", what, st, out, err);
    ck_assert_msg(strstr(out, r->expect), "%s: no '%s' in its output:\n%s%s", what, r->expect,
                  out, err);
    free(out);
    free(err);
    gk_strvec_free(&v);
}
END_TEST

/* Under agent/coding the absent protected names of a project (.idea,
 * .vscode, .envrc ...) are masks: empty read-only directories. git status
 * passes them in silence (a 0000 mask made git warn once per name, as the
 * user, on every status an agent ran), the command still cannot create
 * anything there, and nothing is left on the host. The control: git does
 * look, and reports a real untracked file. */
START_TEST(agent_git_status_is_quiet)
{
    bool as_user = _i;
    if (as_user && geteuid() != 0)
        return;
    ck_assert_msg(!as_user || have_user, "no unprivileged user could be made (useradd %s)",
                  GK_TEST_USER);
    if (access("/usr/bin/git", X_OK) != 0) {
        fprintf(stderr, "SKIP agent_git_status_is_quiet: no /usr/bin/git\n");
        return;
    }
    gk_autofree char *user_home = gk_printf("%s/home", base);
    ck_assert_int_eq(mkdir(user_home, 0700), 0);
    ck_assert_int_eq(setenv("HOME", user_home, 1), 0);
    gk_autofree char *rt = gk_printf("%s/run", base);
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    ck_assert_int_eq(setenv("PATH", SYS, 1), 0);
    ck_assert_int_eq(system("git init -q . && echo x > untracked.txt"), 0);
    if (as_user) {
        gk_autofree char *cmd = gk_printf("chown -R %u:%u '%s' '%s' '%s'", (unsigned)user_uid,
                                          (unsigned)user_gid, project, rt, user_home);
        ck_assert_int_eq(system(cmd), 0);
    }
    const char *scripts[] = {"git status --porcelain", "mkdir .idea/x"};
    for (size_t k = 0; k < 2; k++) {
        gk_strvec v = {0};
        if (as_user) {
            gk_test_setpriv(&v, user_uid, user_gid);
        }
        gk_strvec_push_take(&v, gk_printf("%s/grantrun", gk_test_builddir()));
        gk_strvec_push(&v, "-p");
        gk_strvec_push(&v, "agent/coding.grant");
        gk_strvec_push(&v, "--");
        /* no shell under agent/coding: each word is the program's own */
        if (k == 0) {
            gk_strvec_push(&v, "git");
            gk_strvec_push(&v, "status");
            gk_strvec_push(&v, "--porcelain");
        } else {
            gk_strvec_push(&v, "mkdir");
            gk_strvec_push(&v, ".idea/x");
        }
        gk_strvec_push_take(&v, NULL);
        char *out = NULL, *err = NULL;
        int st = gk_test_run(v.v, NULL, &out, &err);
        if (k == 0) {
            ck_assert_msg(st == 0, "%s: exit %d: %s", scripts[k], st, err);
            ck_assert_msg(strcmp(out, "?? untracked.txt\n") == 0, "%s: stdout %s", scripts[k],
                          out);
            ck_assert_msg(!err[0], "%s as %s: git warned:\n%s", scripts[k],
                          as_user ? "the user" : "root", err);
        } else {
            ck_assert_msg(st != 0 && strstr(err, "Read-only file system"),
                          "mkdir .idea/x: exit %d: %s", st, err);
        }
        free(out);
        free(err);
        gk_strvec_free(&v);
    }
    struct stat st;
    ck_assert_msg(lstat(".idea", &st) < 0 && errno == ENOENT, "a placeholder is left");
}
END_TEST

static Suite *policies_suite(void)
{
    Suite *s = suite_create("policies");
    TCase *t = tcase_create("tables");
    tcase_add_test(t, every_policy_has_a_decision_table);
    suite_add_tcase(s, t);
    t = tcase_create("runs");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_loop_test(t, tool_version_under_policy, 0, (int)(2 * NRUNS));
    tcase_add_loop_test(t, agent_git_status_is_quiet, 0, 2);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(policies_suite());
}
