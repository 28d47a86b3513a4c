/* bench_frame.c - what process isolation (frame-protocol.md) costs,
 * each figure against a baseline measured in the same invocation:
 *   (a) grantrun --isolate process of true with an empty baseline
 *       (scratch tree at /work, no files) against grantrun --isolate none
 *       of the same policy: the median ratio of --runs interleaved pairs
 *       (default 50; target at most 1.3x);
 *   (b) an isolated run with a 10 MiB baseline of 1,000 files and a JSON
 *       diff, against the same run with an empty baseline;
 *   (c) encoding a 60 MiB run-request, moving it through a real pipe and
 *       decoding it (frame read, strict parse, base64 decode), in MB/s and
 *       as a ratio to cat moving the same bytes through a pipe (target at
 *       least 0.25x).
 * Needs bwrap and the build tree's grantrun and helper (make bench-frame).
 *   bench_frame [--runs N] [--only a|b|c]
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"
#include "runtime/frame.h"

extern char **environ;

static int run(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (!getenv("BENCH_VERBOSE"))
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

static double timed(char *const argv[], int *status)
{
    double t = bench_now();
    *status = run(argv);
    return (bench_now() - t) * 1000;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Interleaved pairs: baseline then subject, n times; medians and the
 * median of the per-pair ratios. */
static int pairs(char *const base[], char *const subject[], size_t n, const char *label,
                 const char *base_label)
{
    double *a = calloc(n, sizeof(double)), *b = calloc(n, sizeof(double)),
           *r = calloc(n, sizeof(double));
    int st;
    timed(base, &st);
    timed(subject, &st); /* warm-up */
    for (size_t i = 0; i < n; i++) {
        a[i] = timed(base, &st);
        if (st != 0) {
            fprintf(stderr, "bench_frame: %s failed with status %d\n", base_label, st);
            return 1;
        }
        b[i] = timed(subject, &st);
        if (st != 0) {
            fprintf(stderr, "bench_frame: %s failed with status %d\n", label, st);
            return 1;
        }
        r[i] = b[i] / a[i];
    }
    printf("  %-44s %9.2f ms median (%zu runs)\n", base_label, median(a, n), n);
    printf("  %-44s %9.2f ms median (%zu runs)\n", label, median(b, n), n);
    printf("  %-44s %9.2fx median of per-pair ratios\n", "ratio", median(r, n));
    free(a);
    free(b);
    free(r);
    return 0;
}

static char *gr;        /* the build tree's grantrun */
static char *dir;       /* scratch for the bench */
static char *pol;

static int bench_a(size_t n)
{
    printf("(a) true: --isolate process (empty baseline) vs --isolate none\n");
    char *none[] = {gr, "-p", pol, "--", "true", NULL};
    char *proc[] = {gr, "--isolate", "process", "--root", "/work", "-p", pol, "--", "true",
                    NULL};
    return pairs(none, proc, n, "--isolate process --root /work", "--isolate none");
}

static int bench_b(size_t n)
{
    printf("(b) isolated true: 10 MiB / 1,000-file baseline + JSON diff vs empty baseline\n");
    char *seed = NULL, *seedarg = NULL;
    if (asprintf(&seed, "%s/seed", dir) < 0 || asprintf(&seedarg, "--seed=%s=/", seed) < 0)
        return 1;
    mkdir(seed, 0755);
    char *chunk = malloc(10485);
    memset(chunk, 'x', 10485);
    for (int i = 0; i < 1000; i++) {
        char *p = NULL;
        if (asprintf(&p, "%s/d%02d", seed, i / 50) < 0)
            return 1;
        mkdir(p, 0755);
        free(p);
        if (asprintf(&p, "%s/d%02d/f%04d.txt", seed, i / 50, i) < 0)
            return 1;
        int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, chunk, 10485) != 10485)
            return 1;
        close(fd);
        free(p);
    }
    free(chunk);
    char *empty[] = {gr, "--isolate", "process", "--root", "/work", "--diff", "json", "-p", pol,
                     "--", "true", NULL};
    char *full[] = {gr, "--isolate", "process", seedarg, "--fs-quota", "64M", "--diff", "json",
                    "-p", pol, "--", "true", NULL};
    int rc = pairs(empty, full, n < 20 ? n : 20, "10 MiB, 1,000 files, --diff json",
                   "empty baseline, --diff json");
    free(seed);
    free(seedarg);
    return rc;
}

/* (c): the bytes of a 60 MiB request, written by a child, read and parsed
 * (*parse: the seconds of the strict parse and decode alone). */
static double frame_pipe(const char *payload, size_t len, double *parse)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    double t = bench_now();
    pid_t w = fork();
    if (w == 0) {
        close(p[0]);
        _exit(gk_frame_write(p[1], payload, len, GK_FRAME_MAX) < 0);
    }
    close(p[1]);
    char *got = NULL, *err = NULL;
    size_t n = 0;
    int rc = gk_frame_read(p[0], GK_FRAME_MAX, &got, &n, &err);
    close(p[0]);
    gk_run_request req;
    double tp = bench_now();
    if (rc == 0)
        rc = gk_run_request_parse(got, n, &req, &err);
    *parse = bench_now() - tp;
    waitpid(w, NULL, 0);
    double s = bench_now() - t;
    if (rc < 0) {
        fprintf(stderr, "bench_frame: decode failed: %s\n", err ? err : "");
        return -1;
    }
    gk_run_request_clear(&req);
    free(got);
    return s;
}

static double cat_pipe(const char *file, size_t len)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    double t = bench_now();
    pid_t c = fork();
    if (c == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl("/bin/cat", "cat", file, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    static char buf[1 << 16];
    size_t got = 0;
    for (ssize_t r; (r = read(p[0], buf, sizeof(buf))) > 0;)
        got += (size_t)r;
    close(p[0]);
    waitpid(c, NULL, 0);
    return got == len ? bench_now() - t : -1;
}

static int bench_c(void)
{
    printf("(c) a 60 MiB run-request: encode + pipe + decode vs cat through a pipe\n");
    size_t raw = 45u << 20; /* base64: 60 MiB */
    gk_run_request r;
    gk_run_request_init(&r);
    gk_strvec_push(&r.argv, "true");
    r.policy = gk_strdup("{}");
    r.root = gk_strdup("/work");
    r.fs_quota = 1LL << 30;
    unsigned char *bytes = malloc(raw);
    for (size_t i = 0; i < raw; i++)
        bytes[i] = (unsigned char)(i * 2654435761u >> 13);
    gk_scratch_list_take(&r.files, gk_strdup("/blob"), GK_SCRATCH_FILE, bytes, raw, -1);
    double best_frame = 1e9, best_cat = 1e9, best_enc = 0, best_parse = 0;
    size_t len = 0;
    char *file = NULL;
    if (asprintf(&file, "%s/request.bin", dir) < 0)
        return 1;
    for (int i = 0; i < 5; i++) {
        double t = bench_now();
        gk_buf b = {0};
        gk_run_request_encode(&r, &b);
        double enc = bench_now() - t;
        len = b.len;
        double parse = 0;
        double s = frame_pipe(b.data, b.len, &parse);
        if (s < 0)
            return 1;
        if (enc + s < best_frame) {
            best_frame = enc + s;
            best_enc = enc;
            best_parse = parse;
        }
        if (i == 0) {
            int fd = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len)
                return 1;
            close(fd);
        }
        gk_buf_free(&b);
        double c = cat_pipe(file, len);
        if (c < 0)
            return 1;
        if (c < best_cat)
            best_cat = c;
    }
    double mb = (double)len / (1 << 20);
    printf("  %-44s %9.1f MiB\n", "request payload", mb);
    printf("  %-44s %9.0f MiB/s (best of 5: %.0f ms)\n", "encode + frame through a pipe + decode",
           mb / best_frame, best_frame * 1000);
    printf("  %-44s %9.0f ms encode, %.0f ms frame through the pipe, %.0f ms parse + "
           "decode\n",
           "  of which", best_enc * 1000, (best_frame - best_enc - best_parse) * 1000,
           best_parse * 1000);
    printf("  %-44s %9.0f MiB/s (best of 5: %.0f ms)\n", "cat through a pipe", mb / best_cat,
           best_cat * 1000);
    printf("  %-44s %9.2fx of cat's throughput\n", "ratio", best_cat / best_frame);
    unlink(file);
    free(file);
    gk_run_request_clear(&r);
    return 0;
}

int main(int argc, char **argv)
{
    size_t runs = 50;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--runs") == 0)
            runs = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    if (runs < 5)
        runs = 5;
    const char *build = getenv("GK_BUILDDIR");
    if (asprintf(&gr, "%s/grantrun", build ? build : ".") < 0)
        return 1;
    char tmpl[] = "/var/tmp/gk-bench-frame-XXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    dir = tmpl;
    if (asprintf(&pol, "%s/t.grant", dir) < 0)
        return 1;
    FILE *f = fopen(pol, "w");
    fputs("grant t {\n  exec { allow true; }\n  fs { read /usr /etc; write cwd:; }\n  net deny;\n}\n",
          f);
    fclose(f);
    if (!getenv("GRANTKIT_HELPER")) {
        char *h = NULL;
        if (asprintf(&h, "%s/runtime/grantkit-helper", build ? build : ".") >= 0)
            setenv("GRANTKIT_HELPER", h, 1);
        free(h);
    }
    int rc = 0;
    if (!only || strcmp(only, "a") == 0)
        rc |= bench_a(runs);
    if (!only || strcmp(only, "b") == 0)
        rc |= bench_b(runs);
    if (!only || strcmp(only, "c") == 0)
        rc |= bench_c();
    char *cmd = NULL;
    if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0 && system(cmd) != 0)
        rc = 1;
    free(cmd);
    return rc;
}
