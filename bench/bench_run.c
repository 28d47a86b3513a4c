/* bench_run.c - what grantrun costs per run, against bubblewrap alone.
 *
 * Each case starts a real process tree and waits for it, as many times as
 * fit in the time budget (at least 5), and reports the median and the
 * minimum wall time:
 *   - true:          /usr/bin/true, fork and exec (the floor);
 *   - bwrap:         bwrap with new user and pid namespaces, the host root
 *                    read-only, /proc and /dev, running true (the baseline);
 *   - bwrap-plan:    bwrap with grantrun's own mount plan and namespaces
 *                    for the policy (from --dry-run), running true without
 *                    the helper or seccomp: what the policy's envelope costs;
 *   - grantrun-plan: grantrun --dry-run: compile, gate, plan, ruleset, but
 *                    nothing launched;
 *   - grantrun:      the whole run of true under base/reasonable.grant
 *                    (compile, gate, plan, Landlock ruleset, seccomp,
 *                    bwrap, the helper's remounts and Landlock, exec).
 * The ratio column divides by the bwrap baseline of the same invocation.
 * Needs bwrap and the build tree's grantrun and helper (run from the
 * build directory, as `make bench` does).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

extern char **environ;

/* Run argv with stdout and stderr to /dev/null; its exit status. */
static int run(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -rc;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run_case(void *argv)
{
    return run(argv);
}

int main(int argc, char **argv)
{
    double seconds = argc > 2 && strcmp(argv[1], "--seconds") == 0 ? strtod(argv[2], NULL) : 2.0;
    const char *src = getenv("GK_SRCDIR");
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        return 2;
    char *policy = NULL, *helper = NULL, *grantrun = NULL, *policies = NULL;
    if (asprintf(&policy, "%s/policies/base/reasonable.grant", src ? src : "..") < 0 ||
        asprintf(&policies, "%s/policies", src ? src : "..") < 0 ||
        asprintf(&helper, "%s/runtime/grantkit-helper", cwd) < 0 ||
        asprintf(&grantrun, "%s/grantrun", cwd) < 0)
        abort();
    if (access(policy, R_OK) < 0 || access(helper, X_OK) < 0 || access(grantrun, X_OK) < 0) {
        fprintf(stderr, "bench_run: run from the build directory after `make` (GK_SRCDIR=%s)\n",
                src ? src : "..");
        return 2;
    }
    setenv("GRANTKIT_HELPER", helper, 1);
    setenv("GRANTKIT_POLICY_PATH", policies, 1);
    /* The command's cwd (write cwd:) must be a host directory bwrap can
     * bind: a scratch one under /var/tmp. */
    char dir[] = "/var/tmp/gk-bench-run-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) < 0)
        return 2;

    char *const floor_argv[] = {(char *)"/usr/bin/true", NULL};
    char *const bwrap_argv[] = {(char *)"/usr/bin/bwrap", (char *)"--unshare-user",
                                (char *)"--unshare-pid", (char *)"--die-with-parent",
                                (char *)"--ro-bind", (char *)"/", (char *)"/", (char *)"--proc",
                                (char *)"/proc", (char *)"--dev", (char *)"/dev",
                                (char *)"/usr/bin/true", NULL};
    char *const plan_argv[] = {grantrun, (char *)"-p", policy, (char *)"--dry-run", (char *)"--",
                               (char *)"true", NULL};
    char *const run_argv[] = {grantrun, (char *)"-p", policy, (char *)"--", (char *)"true", NULL};
    /* bwrap's arguments as grantrun would pass them, up to --seccomp. */
    char **plan_bwrap = calloc(4096, sizeof(char *));
    size_t np = 0;
    plan_bwrap[np++] = (char *)"/usr/bin/bwrap";
    char *cmd = NULL;
    if (asprintf(&cmd, "'%s' -p '%s' --dry-run -- true 2>/dev/null", grantrun, policy) < 0)
        abort();
    FILE *dry = popen(cmd, "r");
    char line[8192];
    bool in_args = false;
    while (dry && fgets(line, sizeof(line), dry)) {
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, "bwrap") == 0) {
            in_args = true;
            continue;
        }
        if (!in_args || strncmp(line, "  ", 2) != 0 || strcmp(line, "  --seccomp") == 0) {
            in_args = false;
            continue;
        }
        if (np < 4090)
            plan_bwrap[np++] = strdup(line + 2);
    }
    if (dry)
        pclose(dry);
    free(cmd);
    /* The helper is not bound here: drop its --ro-bind triple. */
    for (size_t i = 1; i + 2 < np; i++)
        if (strcmp(plan_bwrap[i], "--ro-bind") == 0 && strstr(plan_bwrap[i + 2], "grantkit-helper")) {
            memmove(plan_bwrap + i, plan_bwrap + i + 3, (np - i - 3) * sizeof(char *));
            np -= 3;
            break;
        }
    plan_bwrap[np++] = (char *)"/usr/bin/true";
    plan_bwrap[np] = NULL;
    static const char *const names[] = {"true", "bwrap", "bwrap-plan", "grantrun-plan",
                                        "grantrun"};
    char *const *cases[] = {floor_argv, bwrap_argv, plan_bwrap, plan_argv, run_argv};

    printf("grantkit grantrun benchmark: %.2f s per case, median of runs; policy "
           "base/reasonable.grant\n",
           seconds);
    printf("%-14s %10s %10s %6s %12s %12s\n", "case", "median ms", "min ms", "runs", "x bwrap",
           "x bwrap-plan");
    double base = 0, plan_base = 0;
    int status = 0;
    for (size_t i = 0; i < 5; i++) {
        timing t = {0};
        int rc = bench_measure(run_case, (void *)cases[i], seconds, &t);
        if (rc != 0) {
            printf("%-14s %10s %10s %6s %12s  (exit %d)\n", names[i], "-", "-", "-", "-", rc);
            status = 1;
            continue;
        }
        if (i == 1)
            base = t.median_ms;
        if (i == 2)
            plan_base = t.median_ms;
        printf("%-14s %10.3f %10.3f %6zu %12.2f %12.2f\n", names[i], t.median_ms, t.min_ms,
               t.runs, base > 0 ? t.median_ms / base : 0.0,
               plan_base > 0 ? t.median_ms / plan_base : 0.0);
    }
    if (chdir("/") == 0)
        rmdir(dir);
    free(policy);
    free(policies);
    free(helper);
    free(grantrun);
    return status;
}
