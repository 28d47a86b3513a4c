/* bench_run.c - what grantrun costs per run, against the envelope it asks
 * for and against bubblewrap alone (issue 13).
 *
 * Every case starts a real process tree and waits for it. The cases are
 * interleaved: each round runs every case once (in an order rotated from
 * round to round), so a machine that slows down or speeds up during the
 * run weighs on every case alike. After one warm-up round, at least 50
 * rounds (--rounds N). Rows:
 *   - true:            /usr/bin/true, spawned and waited for (the floor);
 *   - bwrap:           a minimal bwrap (--unshare-all, the host root
 *                      read-only, /proc and /dev) running true;
 *   - envelope:        bwrap with grantrun's own envelope for
 *                      base/reasonable.grant, rebuilt from its --dry-run:
 *                      the same options through --args, the helper, both
 *                      seccomp filters, the Landlock ruleset, the status
 *                      and info pipes, at the same descriptor numbers;
 *   - grantrun:        grantrun -p base/reasonable.grant -- true;
 *   - envelope-tiny, grantrun-tiny: the same for a tiny policy
 *                      (exec { allow /usr/bin/; } fs { read /usr /etc;
 *                      write cwd:; } net deny;);
 *   - grantc-compile:  grantc compile of base/reasonable.grant (a process
 *                      like grantrun's own, without the launch);
 *   - firejail, sandbox-runtime: true under each, when installed;
 *   - with --against DIR (another build directory, say of the commit
 *     before a change): its grantrun, grantrun-tiny and grantc compile
 *     (grantrun@against, tiny@against, compile@against) in the same
 *     rounds, so a before/after comparison shares the machine's moods.
 * Ratios: against the minimal bwrap of the same invocation, and against
 * the row's own envelope. The mounts column counts the mount operations
 * the plan asks bwrap for (binds, tmpfs, proc, dev, remounts).
 *
 * A future envelope: bwrap re-reads /proc/self/mountinfo for every bind,
 * so each mount costs it about 0.1 ms here and more on a host with many
 * mounts. A prototype performing the same plan with the new mount API
 * (open_tree + mount_setattr + move_mount from one process, no mountinfo
 * re-reads) took 3.4 ms where bwrap took 11.2 ms for a 60-mount plan;
 * the envelope row minus the bwrap row is the most such an envelope could
 * save per run (issue 13, not done: bwrap stays the envelope).
 *
 * Needs bwrap and the build tree's grantrun, grantc and helper (run from
 * the build directory, as `make bench-run` does).
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/seccomp.h"
#include "timing.h"

extern char **environ;

/* The envelope's descriptor numbers (runtime/launch.c). */
enum { FD_ARGS = 3, FD_SECCOMP = 4, FD_LANDLOCK = 5, FD_MOUNT_FILTER = 6, FD_STATUS = 7,
       FD_INFO = 8 };

typedef struct envelope {
    char **argv;         /* bwrap --args 3 -- HELPER ... -- true */
    int args_fd, seccomp_fd, landlock_fd, mount_fd; /* memfds, rewound per run */
    size_t mounts;
} envelope;

typedef struct bcase {
    const char *name;
    char **argv;         /* a plain command, or NULL for an envelope */
    char **envp;         /* its environment; NULL: this one's */
    envelope *env;
    int ratio_to;        /* the row of its envelope, -1: none */
    double *samples;
    size_t n;
    bool failed;
    int rc;
} bcase;

static int wait_for(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run argv with stdout and stderr to /dev/null; its exit status. */
static int run(char *const argv[], char *const envp[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc != 0 ? -rc : wait_for(pid);
}

/* Above the envelope's numbers, so no dup2 onto them clobbers another. */
static int high(int fd)
{
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 20);
    if (h < 0)
        abort();
    close(fd);
    return h;
}

/* Run an envelope as grantrun would: its descriptors at their numbers,
 * fresh pipes, the memfds rewound. */
static int run_envelope(envelope *e)
{
    int status[2], info[2];
    if (pipe2(status, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(info, O_CLOEXEC) < 0) {
        close(status[0]);
        close(status[1]);
        return -errno;
    }
    status[1] = high(status[1]);
    info[1] = high(info[1]);
    int fds[6] = {e->args_fd, e->seccomp_fd, e->landlock_fd, e->mount_fd, status[1], info[1]};
    for (int i = 0; i < 4; i++)
        lseek(fds[i], 0, SEEK_SET);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!getenv("BENCH_RUN_STDERR"))
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < 6; i++)
        posix_spawn_file_actions_adddup2(&fa, fds[i], FD_ARGS + i);
    pid_t pid;
    char *const envp[] = {NULL};
    int rc = posix_spawn(&pid, e->argv[0], &fa, NULL, e->argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(status[1]);
    close(info[1]);
    if (rc == 0) {
        rc = wait_for(pid);
        char buf[256];
        ssize_t got = read(status[0], buf, sizeof(buf) - 1);
        if (getenv("BENCH_RUN_STDERR") && got > 0)
            fprintf(stderr, "status: %.*s\n", (int)got, buf);
        /* The helper says "started" and then nothing if the exec happened. */
        if (rc == 0 && (got < 7 || strncmp(buf, "started", 7) != 0 ||
                        (got > 8 && buf[8] != '\0')))
            rc = 200;
    } else {
        rc = -rc;
    }
    close(status[0]);
    close(info[0]);
    return rc;
}

static int memfd_of(const char *data, size_t len)
{
    int fd = memfd_create("bench-run", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len)
        abort();
    return high(fd);
}

static bool is_mount_option(const char *a)
{
    static const char *const ops[] = {"--bind", "--bind-try", "--ro-bind", "--ro-bind-try",
                                      "--dev-bind", "--dev-bind-try", "--tmpfs", "--proc",
                                      "--dev", "--remount-ro", "--mqueue"};
    for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
        if (strcmp(a, ops[i]) == 0)
            return true;
    return false;
}

/* grantrun's envelope for policy, from its --dry-run: bwrap's arguments
 * one a line, then the helper's Landlock ruleset. NULL if it fails. */
static envelope *envelope_of(const char *grantrun, const char *policy, const char *bwrap)
{
    char *cmd = NULL;
    if (asprintf(&cmd, "'%s' -p '%s' --dry-run -- true 2>/dev/null", grantrun, policy) < 0)
        abort();
    FILE *dry = popen(cmd, "r");
    free(cmd);
    if (!dry)
        return NULL;
    size_t cap = 64, n = 0;
    char **args = malloc(cap * sizeof(*args));
    char *ruleset = NULL;
    size_t rlen = 0;
    FILE *rs = open_memstream(&ruleset, &rlen);
    char line[8192];
    int part = 0; /* 0 before "bwrap", 1 its arguments, 2 the ruleset */
    while (fgets(line, sizeof(line), dry)) {
        if (part == 2) {
            fputs(line, rs);
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        if (part == 0 && strcmp(line, "bwrap") == 0) {
            part = 1;
        } else if (part == 1 && strncmp(line, "  ", 2) == 0) {
            if (n + 8 >= cap)
                args = realloc(args, (cap *= 2) * sizeof(*args));
            args[n++] = strdup(line + 2);
        } else if (part == 1 && line[0] == '#') {
            part = 2;
        }
    }
    fclose(rs);
    if (pclose(dry) != 0 || n == 0) {
        free(ruleset);
        return NULL;
    }
    envelope *e = calloc(1, sizeof(*e));
    /* Options up to the first "--" go through --args, NUL-separated. */
    size_t dash = 0;
    while (dash < n && strcmp(args[dash], "--") != 0)
        dash++;
    char *packed = NULL;
    size_t plen = 0;
    FILE *pk = open_memstream(&packed, &plen);
    bool net = true, exec_restricted = false;
    for (size_t i = 0; i < dash; i++) {
        fwrite(args[i], 1, strlen(args[i]) + 1, pk);
        net &= strcmp(args[i], "--unshare-net") != 0;
        e->mounts += is_mount_option(args[i]);
    }
    for (size_t i = dash; i < n; i++)
        exec_restricted |= strcmp(args[i], "--noexec") == 0;
    fclose(pk);
    e->args_fd = memfd_of(packed, plen);
    e->landlock_fd = memfd_of(ruleset, rlen);
    free(packed);
    free(ruleset);
    e->seccomp_fd = gk_seccomp_main_fd(net, exec_restricted);
    e->mount_fd = gk_seccomp_mount_fd();
    if (e->seccomp_fd < 0 || e->mount_fd < 0)
        abort();
    e->seccomp_fd = high(e->seccomp_fd);
    e->mount_fd = high(e->mount_fd);
    e->argv = calloc(n + 4, sizeof(char *));
    size_t k = 0;
    e->argv[k++] = (char *)bwrap;
    e->argv[k++] = (char *)"--args";
    e->argv[k++] = (char *)"3";
    for (size_t i = dash; i < n; i++)
        e->argv[k++] = args[i];
    return e;
}

static int run_one(bcase *c)
{
    return c->env ? run_envelope(c->env) : run(c->argv, c->envp);
}

static char *first_on_path(const char *name)
{
    const char *path = getenv("PATH");
    char *list = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;
    char *found = NULL;
    for (char *d = strtok_r(list, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = NULL;
        if (d[0] == '/' && asprintf(&p, "%s/%s", d, name) >= 0 && access(p, X_OK) == 0)
            found = p;
        else
            free(p);
    }
    free(list);
    return found;
}

static double median(double *s, size_t n)
{
    qsort(s, n, sizeof(*s), bench_cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The environment with LD_LIBRARY_PATH set to libs (the other build's
 * grantc finds its own library, as its libtool wrapper would). */
static char **env_with_libs(const char *libs)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 2, sizeof(*e));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0)
            e[k++] = environ[i];
    if (asprintf(&e[k++], "LD_LIBRARY_PATH=%s", libs) < 0)
        abort();
    return e;
}

int main(int argc, char **argv)
{
    long rounds = 60;
    const char *against = NULL; /* another build directory, for before/after rows */
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--against") == 0)
            against = argv[i + 1];
    if (rounds < 50) {
        fprintf(stderr, "bench_run: at least 50 rounds (issue 13)\n");
        rounds = 50;
    }
    const char *src = getenv("GK_SRCDIR");
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        return 2;
    char *policy = NULL, *helper = NULL, *grantrun = NULL, *grantc = NULL, *policies = NULL;
    if (asprintf(&policy, "%s/policies/base/reasonable.grant", src ? src : "..") < 0 ||
        asprintf(&policies, "%s/policies", src ? src : "..") < 0 ||
        asprintf(&helper, "%s/runtime/grantkit-helper", cwd) < 0 ||
        asprintf(&grantrun, "%s/grantrun", cwd) < 0 || asprintf(&grantc, "%s/grantc", cwd) < 0)
        abort();
    char *bwrap = first_on_path("bwrap");
    if (access(policy, R_OK) < 0 || access(helper, X_OK) < 0 || access(grantrun, X_OK) < 0 ||
        access(grantc, X_OK) < 0 || !bwrap) {
        fprintf(stderr, "bench_run: needs bwrap on PATH; run from the build directory after "
                        "`make` (GK_SRCDIR=%s)\n",
                src ? src : "..");
        return 2;
    }
    setenv("GRANTKIT_HELPER", helper, 1);
    setenv("GRANTKIT_POLICY_PATH", policies, 1);
    /* The command's cwd (write cwd:) must be a host directory bwrap can
     * bind: a scratch one under /var/tmp, holding the tiny policy too. */
    char dir[] = "/var/tmp/gk-bench-run-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) < 0)
        return 2;
    char tiny[sizeof(dir) + 16];
    snprintf(tiny, sizeof(tiny), "%s/tiny.grant", dir);
    FILE *tf = fopen(tiny, "w");
    if (!tf)
        return 2;
    fputs("grant tiny {\n    exec { allow /usr/bin/; }\n    fs { read /usr /etc; write cwd:; }\n"
          "    net deny;\n}\n",
          tf);
    fclose(tf);

    char *floor_argv[] = {(char *)"/usr/bin/true", NULL};
    char *bwrap_argv[] = {bwrap, (char *)"--unshare-all", (char *)"--die-with-parent",
                          (char *)"--ro-bind", (char *)"/", (char *)"/", (char *)"--proc",
                          (char *)"/proc", (char *)"--dev", (char *)"/dev",
                          (char *)"/usr/bin/true", NULL};
    char *run_argv[] = {grantrun, (char *)"-p", policy, (char *)"--", (char *)"true", NULL};
    char *tiny_argv[] = {grantrun, (char *)"-p", tiny, (char *)"--", (char *)"true", NULL};
    /* grantc in the build tree is libtool's shell wrapper: time the
     * program behind it, with its library found where the wrapper would. */
    char *real_grantc = NULL, *libs = NULL;
    if (asprintf(&real_grantc, "%s/.libs/grantc", cwd) < 0 || asprintf(&libs, "%s/.libs", cwd) < 0)
        abort();
    if (access(real_grantc, X_OK) == 0) {
        setenv("LD_LIBRARY_PATH", libs, 1);
        grantc = real_grantc;
    }
    char *compile_argv[] = {grantc, (char *)"compile", policy, NULL};
    envelope *env = envelope_of(grantrun, policy, bwrap);
    envelope *env_tiny = envelope_of(grantrun, tiny, bwrap);
    if (!env || !env_tiny) {
        fprintf(stderr, "bench_run: grantrun --dry-run failed\n");
        return 2;
    }
    char *firejail = first_on_path("firejail"), *srt = first_on_path("srt");
    char *fj_argv[] = {firejail, (char *)"--quiet", (char *)"--noprofile", (char *)"/usr/bin/true",
                       NULL};
    char *srt_argv[] = {srt, (char *)"/usr/bin/true", NULL};

    /* --against DIR: that build's grantrun and grantc in the same rounds,
     * against the same envelopes (an unchanged plan: bench/identity.sh). */
    char *a_run = NULL, *a_grantc = NULL, *a_libs = NULL;
    if (against && (asprintf(&a_run, "%s/grantrun", against) < 0 ||
                    asprintf(&a_grantc, "%s/.libs/grantc", against) < 0 ||
                    asprintf(&a_libs, "%s/.libs", against) < 0))
        abort();
    if (against && (access(a_run, X_OK) < 0 || access(a_grantc, X_OK) < 0)) {
        fprintf(stderr, "bench_run: --against %s: no grantrun or .libs/grantc there\n", against);
        return 2;
    }
    char *a_run_argv[] = {a_run, (char *)"-p", policy, (char *)"--", (char *)"true", NULL};
    char *a_tiny_argv[] = {a_run, (char *)"-p", tiny, (char *)"--", (char *)"true", NULL};
    char *a_compile_argv[] = {a_grantc, (char *)"compile", policy, NULL};

    bcase cases[13] = {{0}};
    size_t nc = 0;
    cases[nc++] = (bcase){"true", floor_argv, NULL, NULL, -1, NULL, 0, false, 0};
    cases[nc++] = (bcase){"bwrap", bwrap_argv, NULL, NULL, -1, NULL, 0, false, 0};
    cases[nc++] = (bcase){"envelope", NULL, NULL, env, -1, NULL, 0, false, 0};
    cases[nc++] = (bcase){"grantrun", run_argv, NULL, NULL, 2, NULL, 0, false, 0};
    cases[nc++] = (bcase){"envelope-tiny", NULL, NULL, env_tiny, -1, NULL, 0, false, 0};
    cases[nc++] = (bcase){"grantrun-tiny", tiny_argv, NULL, NULL, 4, NULL, 0, false, 0};
    cases[nc++] = (bcase){"grantc-compile", compile_argv, NULL, NULL, -1, NULL, 0, false, 0};
    if (against) {
        char **a_env = env_with_libs(a_libs);
        cases[nc++] = (bcase){"grantrun@against", a_run_argv, NULL, NULL, 2, NULL, 0, false, 0};
        cases[nc++] = (bcase){"tiny@against", a_tiny_argv, NULL, NULL, 4, NULL, 0, false, 0};
        cases[nc++] = (bcase){"compile@against", a_compile_argv, a_env, NULL, -1, NULL, 0, false,
                              0};
    }
    if (firejail)
        cases[nc++] = (bcase){"firejail", fj_argv, NULL, NULL, -1, NULL, 0, false, 0};
    if (srt)
        cases[nc++] = (bcase){"sandbox-runtime", srt_argv, NULL, NULL, -1, NULL, 0, false, 0};
    for (size_t i = 0; i < nc; i++)
        cases[i].samples = calloc((size_t)rounds, sizeof(double));

    for (long r = -1; r < rounds; r++) /* round -1 warms up */
        for (size_t j = 0; j < nc; j++) {
            bcase *c = &cases[(j + (size_t)(r < 0 ? 0 : r)) % nc];
            if (c->failed)
                continue;
            double a = bench_now();
            int rc = run_one(c);
            double t = bench_now() - a;
            if (rc != 0) {
                c->failed = true;
                c->rc = rc;
            } else if (r >= 0) {
                c->samples[c->n++] = t * 1e3;
            }
        }

    printf("grantkit grantrun benchmark: %ld interleaved rounds; policy base/reasonable.grant "
           "and tiny (exec { allow /usr/bin/; } fs { read /usr /etc; write cwd:; } net deny;)\n",
           rounds);
    if (against)
        printf("@against: the build in %s, in the same rounds\n", against);
    printf("%-16s %10s %10s %6s %7s %10s %12s\n", "case", "median ms", "min ms", "runs",
           "mounts", "x bwrap", "x envelope");
    double base = 0;
    int status = 0;
    double med[13] = {0};
    for (size_t i = 0; i < nc; i++) {
        bcase *c = &cases[i];
        if (c->failed) {
            printf("%-16s %10s %10s %6s %7s %10s %12s  (exit %d)\n", c->name, "-", "-", "-", "-",
                   "-", "-", c->rc);
            status = 1;
            continue;
        }
        med[i] = median(c->samples, c->n);
        double min = c->samples[0];
        if (i == 1)
            base = med[i];
        size_t mounts = c->env ? c->env->mounts
                        : c->ratio_to >= 0 && cases[c->ratio_to].env
                            ? cases[c->ratio_to].env->mounts
                            : 0;
        char mbuf[24] = "", rbuf[16] = "";
        if (mounts)
            snprintf(mbuf, sizeof(mbuf), "%zu", mounts);
        if (c->ratio_to >= 0 && med[c->ratio_to] > 0)
            snprintf(rbuf, sizeof(rbuf), "%.2f", med[i] / med[c->ratio_to]);
        printf("%-16s %10.3f %10.3f %6zu %7s %10.2f %12s\n", c->name, med[i], min, c->n, mbuf,
               base > 0 ? med[i] / base : 0.0, rbuf);
    }
    if (!firejail)
        printf("%-16s (not installed)\n", "firejail");
    if (!srt)
        printf("%-16s (not installed)\n", "sandbox-runtime");
    if (med[1] > 0 && med[2] > 0)
        printf("a future envelope (one process, the new mount API, no mountinfo re-read per "
               "bind) could save at most envelope - bwrap = %.3f ms per run here (%zu mounts)\n",
               med[2] - med[1], env->mounts);
    printf("targets (issue 13): grantrun <= 1.10x envelope and <= 2.5x bwrap; grantrun-tiny "
           "<= 1.3x bwrap; grantc-compile <= 3 ms\n");
    unlink(tiny);
    /* The envelope rows' bwrap makes the .git mask's mountpoint itself
     * (grantrun records and removes its own): empty, it goes too. */
    rmdir(".git");
    if (chdir("/") == 0)
        rmdir(dir);
    return status;
}
