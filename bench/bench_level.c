/* bench_level.c - what each level of confinement costs per run (issue 11),
 * in one invocation:
 *   - true:        /usr/bin/true, fork and exec (the floor);
 *   - namespaces:  grantrun --level namespaces -p base/reasonable.grant --
 *                  true (bwrap, seccomp, the helper's remounts and Landlock);
 *   - landlock:    grantrun --level landlock, the same (the helper alone:
 *                  the carved Landlock ruleset, three seccomp filters);
 *   - auto:        grantrun with the default level on this host (the
 *                  namespace probe, then namespaces here).
 * Ratios against true and against the namespaces level of the same run.
 * Run from the build directory (`make bench-level`).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"

extern char **environ;

static int run_case(void *arg)
{
    char *const *argv = arg;
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
        fprintf(stderr, "bench_level: run from the build directory after `make`\n");
        return 2;
    }
    setenv("GRANTKIT_HELPER", helper, 1);
    setenv("GRANTKIT_POLICY_PATH", policies, 1);
    char dir[] = "/var/tmp/gk-bench-level-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) < 0)
        return 2;

    char *const floor_argv[] = {(char *)"/usr/bin/true", NULL};
    char *const ns_argv[] = {grantrun, (char *)"--level", (char *)"namespaces", (char *)"-p",
                             policy, (char *)"--", (char *)"true", NULL};
    char *const ll_argv[] = {grantrun, (char *)"--level", (char *)"landlock", (char *)"-p",
                             policy, (char *)"--", (char *)"true", NULL};
    char *const auto_argv[] = {grantrun, (char *)"-p", policy, (char *)"--", (char *)"true", NULL};
    static const char *const names[] = {"true", "namespaces", "landlock", "auto"};
    char *const *cases[] = {floor_argv, ns_argv, ll_argv, auto_argv};

    printf("grantkit levels benchmark: %.2f s per case, median of runs; policy "
           "base/reasonable.grant, command true\n",
           seconds);
    printf("%-12s %10s %10s %6s %10s %14s\n", "case", "median ms", "min ms", "runs", "x true",
           "x namespaces");
    double floor_ms = 0, ns_ms = 0;
    int status = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        timing t = {0};
        int rc = bench_measure(run_case, (void *)cases[i], seconds, &t);
        if (rc != 0) {
            printf("%-12s %10s %10s %6s %10s %14s  (exit %d)\n", names[i], "-", "-", "-", "-", "-",
                   rc);
            status = 1;
            continue;
        }
        if (i == 0)
            floor_ms = t.median_ms;
        if (i == 1)
            ns_ms = t.median_ms;
        printf("%-12s %10.3f %10.3f %6zu %10.2f %14.2f\n", names[i], t.median_ms, t.min_ms, t.runs,
               floor_ms > 0 ? t.median_ms / floor_ms : 0.0, ns_ms > 0 ? t.median_ms / ns_ms : 0.0);
    }
    if (chdir("/") == 0)
        rmdir(dir);
    free(policy);
    free(policies);
    free(helper);
    free(grantrun);
    return status;
}
