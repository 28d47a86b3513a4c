/* bench_scratch.c - what the scratch tree costs a process-isolated run
 * (issue 10, make bench (b), the module's share): materialise a baseline,
 * snapshot it, let a "command" change it, snapshot again and diff, for a
 * 10 MiB baseline of 1,000 files against the same steps with an empty
 * baseline, in the same invocation; and the line diff's bound on a
 * pathological pair (every line different) against an ordinary edit of a
 * file of the same size.
 *
 * Trees are made on a tmpfs (/dev/shm, as the scratch is one; --dir DIR
 * to choose), each sample in a fresh directory; making and removing the
 * directory is left out of the time.
 *   make bench-scratch BENCH_SCRATCH_ARGS='--seconds 3 --dir /dev/shm'
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/scratch.h"
#include "timing.h"

typedef struct cfg {
    const char *dir;
    gk_scratch_list base;
    gk_diff_format format;
    int touch; /* files the "command" rewrites */
    /* Sums of the phases over the samples: materialise (with validate),
     * the two snapshots, the diff. */
    double mat, snap, diff;
    size_t n;
} cfg;

static void rm_rf(const char *d)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_scratch: cannot remove %s\n", d);
}

static int sample(void *arg, double *seconds)
{
    cfg *c = arg;
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/bench-scratch-XXXXXX", c->dir);
    if (!mkdtemp(tmpl))
        return -errno;
    int fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char *err = NULL;
    double t0 = bench_now();
    int rc = gk_scratch_validate(&c->base, 0, 0, NULL, &err);
    if (rc == 0)
        rc = gk_scratch_materialise(fd, &c->base, &err);
    double t1 = bench_now();
    gk_snapshot before, after;
    if (rc == 0)
        rc = gk_snapshot_take(fd, NULL, &before, &err);
    double t2 = bench_now();
    /* The command: rewrite some files, add one. */
    for (int i = 0; rc == 0 && i < c->touch && (size_t)i < c->base.n; i++) {
        const gk_scratch_entry *e = &c->base.v[i * (c->base.n / (size_t)c->touch)];
        int f = openat(fd, e->path + 1, O_WRONLY | O_APPEND);
        if (f < 0 || write(f, "appended line\n", 14) != 14)
            rc = -EIO;
        if (f >= 0)
            close(f);
    }
    int f = openat(fd, "new-file", O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (f < 0 || write(f, "new\n", 4) != 4)
        rc = -EIO;
    if (f >= 0)
        close(f);
    double t3 = bench_now();
    if (rc == 0)
        rc = gk_snapshot_take(fd, NULL, &after, &err);
    double t4 = bench_now();
    char *out = NULL;
    if (rc == 0) {
        gk_diff_opts o = {.format = c->format, .metadata = true, .budget = GK_DIFF_BUDGET};
        rc = gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err);
    }
    double t5 = bench_now();
    *seconds = t5 - t0;
    c->mat += t1 - t0;
    c->snap += (t2 - t1) + (t4 - t3);
    c->diff += t5 - t4;
    c->n++;
    if (rc == 0) {
        gk_snapshot_free(&before);
        gk_snapshot_free(&after);
    } else {
        fprintf(stderr, "bench_scratch: %s\n", err ? err : strerror(-rc));
    }
    free(out);
    free(err);
    close(fd);
    rm_rf(tmpl);
    return rc;
}

typedef struct textpair {
    char *a, *b;
    size_t alen, blen;
} textpair;

static int diff_sample(void *arg, double *seconds)
{
    textpair *p = arg;
    gk_buf b = {0};
    double t0 = bench_now();
    gk_diff_text(&b, "a/f", p->a, p->alen, "b/f", p->b, p->blen, 0);
    *seconds = bench_now() - t0;
    gk_buf_free(&b);
    return 0;
}

static void print(const char *name, const timing *t, const timing *base)
{
    printf("  %-34s median %9.3f ms  min %9.3f ms  runs %4zu", name, t->median_ms, t->min_ms,
           t->runs);
    if (base)
        printf("  ratio %6.2fx", t->median_ms / base->median_ms);
    printf("\n");
}

int main(int argc, char **argv)
{
    double seconds = 2;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: bench_scratch [--seconds S] [--dir DIR]\n");
            return 2;
        }
    }
    /* 1,000 text files of 10 KiB (lines of 64 bytes) in 20 dirs. */
    cfg big = {.dir = dir, .touch = 100, .format = GK_DIFF_JSON};
    char line[65];
    char *text = malloc(10240);
    for (int f = 0; f < 1000; f++) {
        for (int l = 0; l < 160; l++) {
            snprintf(line, sizeof(line), "%-63s", "");
            int n = snprintf(line, sizeof(line), "file %d line %d", f, l);
            line[n] = ' ';
            line[63] = '\n';
            memcpy(text + l * 64, line, 64);
        }
        char path[64];
        snprintf(path, sizeof(path), "/src/d%02d/f%04d.txt", f % 20, f);
        gk_scratch_list_add(&big.base, path, GK_SCRATCH_FILE, text, 10240, -1);
    }
    free(text);
    cfg empty = {.dir = dir, .touch = 0, .format = GK_DIFF_JSON};
    printf("scratch tree (dir %s, %.1f s per case): validate + materialise + snapshot + "
           "change + snapshot + diff\n",
           dir, seconds);
    timing te, tb, tu;
    if (bench_measure_samples(sample, &empty, seconds, &te) ||
        bench_measure_samples(sample, &big, seconds, &tb))
        return 1;
    big.format = GK_DIFF_UNIFIED;
    if (bench_measure_samples(sample, &big, seconds, &tu))
        return 1;
    print("empty baseline, json diff", &te, NULL);
    print("10 MiB / 1,000 files, json diff", &tb, &te);
    print("10 MiB / 1,000 files, unified diff", &tu, &te);
    printf("  10 MiB phases, mean of %zu runs (json and unified): materialise %.2f ms, "
           "two snapshots %.2f ms, diff %.2f ms\n",
           big.n, big.mat / big.n * 1e3, big.snap / big.n * 1e3, big.diff / big.n * 1e3);

    /* Line diff: 20,000 lines each; an ordinary edit (every 100th line
     * changed) against every line different (the bound's fallback). */
    gk_buf a = {0}, b = {0}, c = {0};
    for (int i = 0; i < 20000; i++) {
        gk_buf_printf(&a, "line %d of the old file\n", i);
        gk_buf_printf(&b, i % 100 == 0 ? "line %d, edited\n" : "line %d of the old file\n", i);
        gk_buf_printf(&c, "other %d of the new file\n", i);
    }
    textpair edit = {a.data, b.data, a.len, b.len}, worst = {a.data, c.data, a.len, c.len};
    timing t1, t2;
    if (bench_measure_samples(diff_sample, &edit, seconds, &t1) ||
        bench_measure_samples(diff_sample, &worst, seconds, &t2))
        return 1;
    printf("line diff, 20,000 lines a side:\n");
    print("200 lines edited", &t1, NULL);
    print("every line different (bounded)", &t2, &t1);
    gk_buf_free(&a);
    gk_buf_free(&b);
    gk_buf_free(&c);
    gk_scratch_list_free(&big.base);
    return 0;
}
