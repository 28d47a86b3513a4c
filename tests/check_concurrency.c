/* check_concurrency.c - many grantrun runs at once in one project, and
 * runs that are killed (issue 16 item 1, issue 14 item 12), against the
 * real envelope.
 *
 * The project has no .git: every policy here masks the absent
 * .git/hooks and .git/config (readonly), so each run needs placeholders
 * on the host. What must hold: runs started a few ms apart all succeed
 * and leave nothing behind; a long run keeps its masks while short runs
 * come and go (removing a mountpoint on the host detaches it in the other
 * run's namespace); a SIGKILLed grantrun's placeholders are removed by the
 * next run; nothing the user made at a placeholder's path is removed, nor
 * anything reached through a symlink an ancestor was swapped for.
 *
 * Each test runs as root and as the unprivileged user gk-escape (made
 * with useradd, reached through setpriv, as in check_escape), each with
 * its own GRANTKIT_RUNTIME_DIR so other suites' runs do not hold the lock.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define USER "gk-escape"
#define ROUNDS 3
#define RUNS 40

static char *base;    /* the scratch tree, 0755 */
static char *project; /* base/project: the cwd, writable */
static char *pol;     /* base/c.grant */
static uid_t user_uid;
static gid_t user_gid;
static bool have_user;

static const char policy_text[] = "grant c {\n"
                                  "    exec { allow sh sleep touch true mkdir; }\n"
                                  "    fs {\n"
                                  "        read /usr /etc;\n"
                                  "        write cwd:;\n"
                                  "        readonly cwd:/.git/hooks cwd:/.git/config;\n"
                                  "    }\n"
                                  "    net deny;\n"
                                  "}\n";

static void setup(void)
{
    have_user = gk_test_user(&user_uid, &user_gid); /* made when run as root */
    char tmpl[] = "/var/tmp/gk-conc-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_int_eq(chmod(tmpl, 0755), 0);
    base = gk_strdup(tmpl);
    project = gk_printf("%s/project", base);
    ck_assert_int_eq(mkdir(project, 0755), 0);
    pol = gk_printf("%s/c.grant", base);
    gk_test_write(pol, policy_text, 0644);
    gk_autofree char *hello = gk_printf("%s/hello.txt", project);
    gk_test_write(hello, "hello\n", 0644);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    ck_assert_int_eq(setenv("PATH", "/usr/bin:/bin", 1), 0);
    ck_assert_int_eq(chdir(project), 0);
}

static void teardown(void)
{
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *cmd = gk_printf("rm -rf '%s'", base);
    ck_assert_int_eq(system(cmd), 0);
    free(base);
    free(project);
    free(pol);
}

/* As the user (_i 1): the project and a runtime directory are theirs. */
static void become(bool as_user)
{
    gk_autofree char *rt = gk_printf("%s/run-%s", base, as_user ? "user" : "root");
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    if (!as_user || geteuid() != 0)
        return;
    ck_assert_msg(have_user, "no unprivileged user could be made (useradd " USER ")");
    gk_autofree char *cmd = gk_printf("chown -R %u:%u '%s' '%s'", (unsigned)user_uid,
                                      (unsigned)user_gid, project, rt);
    ck_assert_int_eq(system(cmd), 0);
}

/* Start grantrun -p POLICY -- ARGS... with stdout to out (NULL: discarded),
 * stderr discarded; returns its pid (setpriv executes grantrun in place). */
static pid_t start(bool as_user, const char *policy, const char *out, const char *const *args)
{
    gk_strvec v = {0};
    if (as_user && geteuid() == 0) {
        gk_test_setpriv(&v, user_uid, user_gid);
    }
    gk_strvec_push_take(&v, gk_printf("%s/grantrun", gk_test_builddir()));
    gk_strvec_push(&v, "-p");
    gk_strvec_push(&v, policy);
    gk_strvec_push(&v, "--");
    for (size_t i = 0; args[i]; i++)
        gk_strvec_push(&v, args[i]);
    gk_strvec_push_take(&v, NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
        int n = open("/dev/null", O_RDWR);
        if (o < 0 || n < 0 || dup2(n, 0) < 0 || dup2(o, 1) < 0 || dup2(n, 2) < 0)
            _exit(99);
        execv(v.v[0], v.v);
        _exit(98);
    }
    gk_strvec_free(&v);
    return pid;
}

static int finish(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static bool exists(const char *rel)
{
    gk_autofree char *p = gk_printf("%s/%s", project, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Until rel exists (a run has made its placeholders), at most 10 s. */
static void await(const char *rel)
{
    for (int i = 0; i < 1000 && !exists(rel); i++)
        usleep(10000);
    ck_assert_msg(exists(rel), "%s never appeared", rel);
}

/* The project holds what the test put there, and no .git. */
static void nothing_left(const char *when)
{
    DIR *d = opendir(project);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)))
        ck_assert_msg(strcmp(e->d_name, ".git") != 0, "%s: the placeholders stayed", when);
    closedir(d);
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

/* 3 x 40 runs started 3 ms apart: the placeholders' lifecycle raced
 * (25-71 of 120 failed with 125, some left placeholders behind). */
START_TEST(staggered_runs_all_succeed_and_leave_nothing)
{
    bool as_user = _i;
    become(as_user);
    int failed = 0, first = 0;
    for (int r = 0; r < ROUNDS; r++) {
        pid_t pids[RUNS];
        for (int i = 0; i < RUNS; i++) {
            /* base/reasonable.grant (readonly .git/hooks .git/config), as
             * the issue ran it, and this suite's own policy in turn. */
            pids[i] = start(as_user, i % 2 ? pol : "base/reasonable.grant", NULL, ARGS("true"));
            sleep_ms(3);
        }
        for (int i = 0; i < RUNS; i++) {
            int st = finish(pids[i]);
            if (st != 0 && !failed++)
                first = st;
        }
        gk_autofree char *when = gk_printf("after round %d", r + 1);
        nothing_left(when);
    }
    ck_assert_msg(failed == 0, "%d of %d runs failed (the first with %d)", failed, ROUNDS * RUNS,
                  first);
}
END_TEST

/* A long run's masks hold while short runs come and go: it then tries to
 * write the masked hook. */
START_TEST(a_long_run_keeps_its_masks)
{
    bool as_user = _i;
    become(as_user);
    gk_autofree char *out = gk_printf("%s/long.out", base);
    pid_t lng = start(as_user, pol, out,
                      ARGS("sh", "-c",
                           "while [ ! -e go ]; do sleep 0.05; done; "
                           "mkdir -p .git/hooks && touch .git/hooks/pre-commit && echo WROTE; "
                           "mkdir .git/config/x && echo WROTE; echo DONE"));
    /* Started with it, these plan while .git is absent, as it does, and
     * end while it runs. */
    pid_t along[4];
    for (int k = 0; k < 4; k++)
        along[k] = start(as_user, pol, NULL, ARGS("sleep", "0.5"));
    await(".git/hooks");
    int short_failed = 0;
    for (int k = 0; k < 4; k++)
        short_failed += finish(along[k]) != 0;
    for (int i = 0; i < 8; i++) {
        pid_t pids[3];
        for (int k = 0; k < 3; k++)
            pids[k] = start(as_user, pol, NULL, ARGS("true"));
        for (int k = 0; k < 3; k++)
            short_failed += finish(pids[k]) != 0;
    }
    bool kept = exists(".git/hooks") && exists(".git/config");
    gk_autofree char *go = gk_printf("%s/go", project);
    gk_test_write(go, "", 0644);
    ck_assert_int_eq(finish(lng), 0);
    gk_autofree char *said = gk_test_read(out, NULL);
    ck_assert_ptr_nonnull(said);
    ck_assert_msg(strstr(said, "DONE") && !strstr(said, "WROTE"),
                  "the long run wrote through its masks: %s", said);
    ck_assert_msg(kept, "a short run removed what the long one still masks");
    ck_assert_msg(short_failed == 0, "%d of 28 short runs failed", short_failed);
    ck_assert(!exists(".git/hooks/pre-commit"));
    ck_assert(!exists(".git/config/x"));
    ck_assert_int_eq(unlink(go), 0);
    nothing_left("after the long run");
}
END_TEST

/* grantrun killed mid-run: its placeholders stay, the next run takes them. */
static void kill_a_run(bool as_user)
{
    pid_t p = start(as_user, pol, NULL, ARGS("sleep", "30"));
    await(".git/config");
    sleep_ms(300);
    ck_assert_int_eq(kill(p, SIGKILL), 0);
    ck_assert_int_eq(finish(p), 128 + SIGKILL);
    sleep_ms(100); /* the envelope dies with it (--die-with-parent) */
    ck_assert_msg(exists(".git/hooks") && exists(".git/config"), "nothing to clean up");
}

START_TEST(the_next_run_cleans_up_after_a_killed_one)
{
    bool as_user = _i;
    become(as_user);
    kill_a_run(as_user);
    ck_assert_int_eq(finish(start(as_user, pol, NULL, ARGS("true"))), 0);
    nothing_left("after the next run");
}
END_TEST

/* The user replaces the leftovers (as `git init` would): theirs stay. */
START_TEST(what_the_user_made_at_a_placeholder_stays)
{
    bool as_user = _i;
    become(as_user);
    kill_a_run(as_user);
    gk_autofree char *config = gk_printf("%s/.git/config", project);
    gk_autofree char *hooks = gk_printf("%s/.git/hooks", project);
    ck_assert_int_eq(rmdir(config), 0);
    gk_test_write(config, "", 0644); /* an empty file where a directory was */
    ck_assert_int_eq(rmdir(hooks), 0);
    ck_assert_int_eq(mkdir(hooks, 0755), 0); /* an empty directory of the user's */
    ck_assert_int_eq(finish(start(as_user, pol, NULL, ARGS("true"))), 0);
    ck_assert_msg(exists(".git/config"), "the user's empty .git/config was removed");
    ck_assert_msg(exists(".git/hooks"), "the user's empty .git/hooks was removed");
}
END_TEST

/* .git swapped for a symlink to the same directories elsewhere: the
 * cleanup must not follow it. */
START_TEST(cleanup_does_not_follow_a_swapped_ancestor)
{
    bool as_user = _i;
    become(as_user);
    kill_a_run(as_user);
    gk_autofree char *moved = gk_printf("%s/moved-git", base);
    gk_autofree char *dotgit = gk_printf("%s/.git", project);
    ck_assert_int_eq(rename(dotgit, moved), 0);
    ck_assert_int_eq(symlink(moved, dotgit), 0);
    finish(start(as_user, pol, NULL, ARGS("true"))); /* its status does not matter */
    gk_autofree char *h = gk_printf("%s/hooks", moved);
    gk_autofree char *c = gk_printf("%s/config", moved);
    struct stat st;
    ck_assert_msg(lstat(h, &st) == 0 && lstat(c, &st) == 0,
                  "the cleanup followed the symlink .git");
}
END_TEST

/* Until file holds text, at most 10 s. */
static void await_text(const char *file, const char *text)
{
    for (int i = 0; i < 1000; i++) {
        gk_autofree char *t = gk_test_read(file, NULL);
        if (t && strstr(t, text))
            return;
        usleep(10000);
    }
    ck_abort_msg("%s never said %s", file, text);
}

/* The lock moved off its name while a run holds it (by whoever can write
 * the runtime directory: a command at the landlock level whose policy
 * writes its parent). A run started after holds a new lock; the first
 * run, ending, must not remove the placeholders the second one's masks
 * stand on (its exclusive lock no longer waits for that envelope). */
START_TEST(a_lock_moved_aside_splits_no_runs)
{
    bool as_user = _i;
    become(as_user);
    gk_autofree char *first_out = gk_printf("%s/first.out", base);
    gk_autofree char *second_out = gk_printf("%s/second.out", base);
    pid_t first = start(as_user, pol, first_out,
                        ARGS("sh", "-c", "echo UP; while [ ! -e go1 ]; do sleep 0.05; done"));
    await_text(first_out, "UP");
    ck_assert(exists(".git/hooks"));
    const char *rt = getenv("GRANTKIT_RUNTIME_DIR");
    gk_autofree char *lock = gk_printf("%s/placeholders", rt);
    gk_autofree char *aside = gk_printf("%s/placeholders.aside", rt);
    ck_assert_int_eq(rename(lock, aside), 0);
    pid_t second = start(as_user, pol, second_out,
                         ARGS("sh", "-c",
                              "echo UP; while [ ! -e go2 ]; do sleep 0.05; done; "
                              "mkdir -p .git/hooks && touch .git/hooks/pre-commit && echo WROTE; "
                              "echo DONE"));
    await_text(second_out, "UP");
    gk_autofree char *go1 = gk_printf("%s/go1", project);
    gk_test_write(go1, "", 0644);
    ck_assert_int_eq(finish(first), 0);
    ck_assert_msg(exists(".git/hooks"), "the first run removed what the second one masks");
    gk_autofree char *go2 = gk_printf("%s/go2", project);
    gk_test_write(go2, "", 0644);
    ck_assert_int_eq(finish(second), 0);
    gk_autofree char *said = gk_test_read(second_out, NULL);
    ck_assert_msg(strstr(said, "DONE") && !strstr(said, "WROTE"),
                  "the second run wrote through its masks: %s", said);
    ck_assert(!exists(".git/hooks/pre-commit"));
}
END_TEST

/* A record that is not a file of the user's (a link planted where the
 * lock lives, a FIFO): the run is refused, never run unlocked beside runs
 * whose cleanup would remove what its masks stand on. The control: the
 * same run once the record is a file again. */
START_TEST(a_planted_lock_refuses_the_run)
{
    bool as_user = _i;
    become(as_user);
    const char *rt = getenv("GRANTKIT_RUNTIME_DIR");
    gk_autofree char *lock = gk_printf("%s/placeholders", rt);
    gk_autofree char *target = gk_printf("%s/elsewhere", base);
    gk_test_write(target, "", 0644);
    ck_assert_int_eq(symlink(target, lock), 0);
    gk_autofree char *out = gk_printf("%s/planted.out", base);
    ck_assert_int_eq(finish(start(as_user, pol, out, ARGS("sh", "-c", "echo RAN"))), 125);
    gk_autofree char *said = gk_test_read(out, NULL);
    ck_assert_msg(!strstr(said, "RAN"), "it ran beside a planted lock");
    ck_assert_int_eq(unlink(lock), 0);
    ck_assert_int_eq(mkfifo(lock, 0600), 0);
    if (as_user && geteuid() == 0)
        ck_assert_int_eq(chown(lock, user_uid, user_gid), 0);
    ck_assert_int_eq(finish(start(as_user, pol, NULL, ARGS("true"))), 125);
    ck_assert_int_eq(unlink(lock), 0);
    ck_assert_int_eq(finish(start(as_user, pol, out, ARGS("sh", "-c", "echo RAN"))), 0);
    gk_autofree char *again = gk_test_read(out, NULL);
    ck_assert_str_eq(again, "RAN\n");
    nothing_left("after the control");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("concurrency");
    TCase *tc = tcase_create("placeholders");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    /* _i 0: root (or the caller); 1: the unprivileged user. */
    tcase_add_loop_test(tc, staggered_runs_all_succeed_and_leave_nothing, 0, 2);
    tcase_add_loop_test(tc, a_long_run_keeps_its_masks, 0, 2);
    tcase_add_loop_test(tc, the_next_run_cleans_up_after_a_killed_one, 0, 2);
    tcase_add_loop_test(tc, what_the_user_made_at_a_placeholder_stays, 0, 2);
    tcase_add_loop_test(tc, cleanup_does_not_follow_a_swapped_ancestor, 0, 2);
    tcase_add_loop_test(tc, a_lock_moved_aside_splits_no_runs, 0, 2);
    tcase_add_loop_test(tc, a_planted_lock_refuses_the_run, 0, 2);
    suite_add_tcase(s, tc);
    return gk_test_main(s);
}
