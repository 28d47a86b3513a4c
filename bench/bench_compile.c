/* bench_compile.c - how long grant_compile takes, against reading the bytes.
 *
 * Cases: a generated policy of 10,000 rules over 5 layers (a top file that
 * includes four others with "./" includes) and a typical 30-rule policy,
 * each compiled with an offline linux context (no filesystem access while
 * freezing, so the numbers do not depend on this host) and with the host
 * context. Each figure is the median of as many runs as fit in the time
 * budget (at least 1 s by default); the baseline is open+read of the same
 * files, measured in the same process and run.
 *
 * Only the public API (grant/grant.h) is used, as an embedding host would.
 * Targets (reported, not asserted): 10,000 rules under 20 ms, a typical
 * policy under 0.5 ms.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grant/grant.h"
#include "gen_policy.h"

#define BENCH_DEFAULT_SEED UINT64_C(0x6772616e746b6974) /* "grantkit" */
#define BENCH_MIN_RUNS 5
#define BENCH_MAX_SAMPLES 5000000

typedef struct bench_opts {
    double seconds;     /* time budget per measurement */
    uint64_t seed;
    size_t rules, layers;
    const char *only;   /* run only cases whose label contains this */
    bool host;          /* also measure the host target */
    bool ir;            /* also measure compile + canonical IR */
} bench_opts;

typedef struct bench_case {
    const char *label;
    gen_policy pol;
    char *dir;          /* temp dir holding the files */
    char **paths;       /* absolute paths, [0] is the top file */
    double target_ms;   /* the target for this case */
} bench_case;

typedef struct compile_job {
    grant_context *ctx;
    const char *const *files;
    bool with_ir;
} compile_job;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*bench_fn)(void *arg);

typedef struct bench_result {
    double median_ms;
    size_t runs;
} bench_result;

/* Median of repeated runs of fn until the budget is spent. A warm-up run
 * comes first (page cache, allocator, lazy binding); its failure is
 * returned without measuring. */
static int measure(bench_fn fn, void *arg, double budget, bench_result *res)
{
    double t0 = now_seconds();
    int rc = fn(arg);
    if (rc != 0)
        return rc;
    double warm = now_seconds() - t0;
    size_t min_runs = warm > budget ? 3 : BENCH_MIN_RUNS;

    size_t n = 0, cap = 1024;
    double *samples = malloc(cap * sizeof(double));
    double total = 0;
    if (!samples)
        abort();
    while ((total < budget || n < min_runs) && n < BENCH_MAX_SAMPLES) {
        double a = now_seconds();
        rc = fn(arg);
        double b = now_seconds();
        if (rc != 0) {
            free(samples);
            return rc;
        }
        if (n == cap) {
            cap *= 2;
            samples = realloc(samples, cap * sizeof(double));
            if (!samples)
                abort();
        }
        samples[n++] = b - a;
        total += b - a;
    }
    qsort(samples, n, sizeof(double), cmp_double);
    double med = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    res->median_ms = med * 1e3;
    res->runs = n;
    free(samples);
    return 0;
}

static int run_compile(void *arg)
{
    compile_job *job = arg;
    grant_diags *diags = grant_diags_new();
    grant_policy *pol = NULL;
    int rc = grant_compile(job->ctx, job->files, 1, NULL, 0, diags, &pol);
    if (rc == 0 && job->with_ir) {
        char *ir = NULL;
        size_t len = 0;
        rc = grant_policy_ir(pol, 0, &ir, &len);
        free(ir);
    }
    grant_policy_free(pol);
    grant_diags_free(diags);
    return rc;
}

typedef struct read_job {
    char *const *paths;
    size_t n;
} read_job;

/* What any compiler must do at least: open, size, allocate, read, close. */
static int run_read(void *arg)
{
    read_job *job = arg;
    for (size_t i = 0; i < job->n; i++) {
        int fd = open(job->paths[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        struct stat st;
        if (fstat(fd, &st) != 0) {
            close(fd);
            return -errno;
        }
        char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
            abort();
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        buf[got] = '\0';
        close(fd);
        free(buf);
        if (got != (size_t)st.st_size)
            return -EIO;
    }
    return 0;
}

/* Print the diagnostics of one failing compile, so a generator bug or a
 * compiler regression is visible instead of a silent missing row. */
static void report_failure(const bench_case *bc, grant_context *ctx)
{
    grant_diags *diags = grant_diags_new();
    grant_policy *pol = NULL;
    int rc = grant_compile(ctx, (const char *const *)bc->paths, 1, NULL, 0, diags, &pol);
    fprintf(stderr, "bench_compile: %s: grant_compile failed (%d, %s)\n", bc->label, rc,
            strerror(rc < 0 ? -rc : rc));
    size_t n = grant_diags_count(diags);
    for (size_t i = 0; i < n && i < 20; i++) {
        char *s = grant_diags_render(diags, i);
        fprintf(stderr, "%s\n", s ? s : "(null)");
        free(s);
    }
    if (n > 20)
        fprintf(stderr, "... and %zu more\n", n - 20);
    grant_policy_free(pol);
    grant_diags_free(diags);
}

static void die(const char *what, int err)
{
    fprintf(stderr, "bench_compile: %s: %s\n", what, strerror(err));
    exit(2);
}

static void check_ctx(int rc, const char *what)
{
    if (rc != 0)
        die(what, -rc);
}

/* Offline linux context with every value fixed, so the numbers and the
 * frozen paths are the same on every machine. */
static grant_context *make_context(grant_target target, const char *policy_dir)
{
    grant_context *ctx = NULL;
    check_ctx(grant_context_new(&ctx), "grant_context_new");
    if (target != GRANT_TARGET_HOST) {
        check_ctx(grant_context_set_target(ctx, target), "grant_context_set_target");
        check_ctx(grant_context_set(ctx, GRANT_CTX_HOME, "/home/bench"), "set home");
        check_ctx(grant_context_set(ctx, GRANT_CTX_CWD, "/home/bench/project"), "set cwd");
        check_ctx(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp"), "set tempdir");
        check_ctx(grant_context_set(ctx, GRANT_CTX_PATH, "/usr/local/bin:/usr/bin:/bin"), "set path");
        static const char *const xdg[][2] = {
            {"config", "/home/bench/.config"},   {"data", "/home/bench/.local/share"},
            {"cache", "/home/bench/.cache"},     {"state", "/home/bench/.local/state"},
            {"bin", "/home/bench/.local/bin"},
        };
        for (size_t i = 0; i < sizeof(xdg) / sizeof(xdg[0]); i++)
            check_ctx(grant_context_set_xdg(ctx, xdg[i][0], xdg[i][1]), "set xdg");
    }
    /* Includes here are all "./"; pinning the search path keeps the
     * environment's GRANTKIT_POLICY_PATH out of the measurement. */
    check_ctx(grant_context_set_policy_path(ctx, policy_dir), "grant_context_set_policy_path");
    return ctx;
}

static char *bench_tmpdir;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void cleanup_tmpdir(void)
{
    if (bench_tmpdir)
        nftw(bench_tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void case_setup(bench_case *bc, const char *root)
{
    if (asprintf(&bc->dir, "%s/%s", root, bc->label) < 0)
        abort();
    if (mkdir(bc->dir, 0755) != 0)
        die(bc->dir, errno);
    int rc = gen_policy_write(&bc->pol, bc->dir);
    if (rc != 0)
        die(bc->dir, -rc);
    bc->paths = calloc(bc->pol.nfiles + 1, sizeof(char *));
    if (!bc->paths)
        abort();
    for (size_t i = 0; i < bc->pol.nfiles; i++)
        if (asprintf(&bc->paths[i], "%s/%s", bc->dir, bc->pol.files[i].name) < 0)
            abort();
}

static void case_free(bench_case *bc)
{
    if (bc->paths)
        for (size_t i = 0; i < bc->pol.nfiles; i++)
            free(bc->paths[i]);
    free(bc->paths);
    free(bc->dir);
    gen_policy_free(&bc->pol);
}

static void print_header(const bench_opts *o)
{
    printf("grantkit %s compile benchmark: seed 0x%" PRIx64 ", %.2f s per measurement, median of runs\n",
           grant_version(), o->seed, o->seconds);
#if defined(__SANITIZE_ADDRESS__)
    printf("note: built with AddressSanitizer; numbers are not representative\n");
#endif
#if !defined(__OPTIMIZE__)
    printf("note: built without optimisation; numbers are not representative\n");
#endif
    printf("%-14s %-6s %5s %9s %6s %6s %14s %14s %14s %9s %s\n", "case", "target", "files", "bytes",
           "rules", "layers", "compile ms", "compile+ir ms", "read ms", "comp/read", "target");
}

static void print_result_cell(const bench_result *r, bool ok)
{
    if (!ok) {
        printf(" %14s", "-");
        return;
    }
    char cell[64];
    snprintf(cell, sizeof(cell), "%.4f (%zu)", r->median_ms, r->runs);
    printf(" %14s", cell);
}

/* Returns 0, or 1 when a compile failed. */
static int run_case(const bench_case *bc, grant_target target, const bench_opts *o)
{
    grant_context *ctx = make_context(target, bc->dir);
    compile_job job = {ctx, (const char *const *)bc->paths, false};
    bench_result comp = {0}, comp_ir = {0}, rd = {0};

    /* Layer count of one compile, as a sanity check of the includes. */
    size_t layers = 0;
    {
        grant_diags *diags = grant_diags_new();
        grant_policy *pol = NULL;
        if (grant_compile(ctx, job.files, 1, NULL, 0, diags, &pol) == 0)
            layers = grant_policy_layer_count(pol);
        grant_policy_free(pol);
        grant_diags_free(diags);
    }

    int rc = measure(run_compile, &job, o->seconds, &comp);
    if (rc != 0) {
        report_failure(bc, ctx);
        grant_context_free(ctx);
        return 1;
    }
    bool have_ir = false;
    if (o->ir) {
        job.with_ir = true;
        have_ir = measure(run_compile, &job, o->seconds, &comp_ir) == 0;
        if (!have_ir)
            fprintf(stderr, "bench_compile: %s: grant_policy_ir failed\n", bc->label);
    }
    read_job rj = {bc->paths, bc->pol.nfiles};
    rc = measure(run_read, &rj, o->seconds, &rd);
    if (rc != 0)
        die("reading the generated files", -rc);

    const char *tname = target == GRANT_TARGET_HOST ? "host" : "linux";
    printf("%-14s %-6s %5zu %9zu %6zu %6zu", bc->label, tname, bc->pol.nfiles, bc->pol.bytes,
           bc->pol.rules, layers);
    print_result_cell(&comp, true);
    print_result_cell(&comp_ir, have_ir);
    print_result_cell(&rd, true);
    double ratio = rd.median_ms > 0 ? comp.median_ms / rd.median_ms : 0;
    printf(" %8.0fx %s %.1f ms\n", ratio, comp.median_ms < bc->target_ms ? "ok  <" : "OVER >",
           bc->target_ms);
    fflush(stdout);
    grant_context_free(ctx);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_compile [--seconds S] [--seed N] [--rules N] [--layers N]\n"
            "                     [--only CASE] [--no-host] [--no-ir] [--emit DIR]\n"
            "  --emit DIR   write the generated policies into DIR and exit (for profiling\n"
            "               grantc with perf or callgrind)\n");
}

int main(int argc, char **argv)
{
    bench_opts o = {.seconds = 1.0, .seed = BENCH_DEFAULT_SEED, .rules = 10000, .layers = 5,
                    .host = true, .ir = true};
    const char *emit = NULL;
    static const struct option longopts[] = {
        {"seconds", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
        {"rules", required_argument, NULL, 'r'},   {"layers", required_argument, NULL, 'l'},
        {"only", required_argument, NULL, 'o'},    {"no-host", no_argument, NULL, 'H'},
        {"no-ir", no_argument, NULL, 'I'},         {"emit", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': o.seconds = strtod(optarg, NULL); break;
        case 'S': o.seed = strtoull(optarg, NULL, 0); break;
        case 'r': o.rules = strtoul(optarg, NULL, 10); break;
        case 'l': o.layers = strtoul(optarg, NULL, 10); break;
        case 'o': o.only = optarg; break;
        case 'H': o.host = false; break;
        case 'I': o.ir = false; break;
        case 'e': emit = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || o.seconds <= 0 || o.rules == 0 || o.layers == 0) {
        usage(stderr);
        return 2;
    }

    char big_label[32];
    snprintf(big_label, sizeof(big_label), "rules-%zu", o.rules);
    bench_case cases[2] = {{.label = big_label, .target_ms = 20.0}, {.label = "typical-30", .target_ms = 0.5}};
    gen_policy_layers(o.seed, o.rules, o.layers, &cases[0].pol);
    gen_policy_typical(&cases[1].pol);

    if (emit) {
        if (mkdir(emit, 0755) != 0 && errno != EEXIST)
            die(emit, errno);
        for (size_t i = 0; i < 2; i++) {
            int rc = gen_policy_write(&cases[i].pol, emit);
            if (rc != 0)
                die(emit, -rc);
            case_free(&cases[i]);
        }
        printf("wrote %s/policy.grant (+%zu layers) and %s/agent.grant\n", emit, o.layers - 1, emit);
        return 0;
    }

    const char *tmp = getenv("TMPDIR");
    if (asprintf(&bench_tmpdir, "%s/gk-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
        abort();
    if (!mkdtemp(bench_tmpdir))
        die(bench_tmpdir, errno);
    atexit(cleanup_tmpdir);

    print_header(&o);
    int failed = 0;
    for (size_t i = 0; i < 2; i++) {
        case_setup(&cases[i], bench_tmpdir);
        if (o.only && !strstr(cases[i].label, o.only))
            continue;
        failed |= run_case(&cases[i], GRANT_TARGET_LINUX, &o);
        if (o.host)
            failed |= run_case(&cases[i], GRANT_TARGET_HOST, &o);
    }
    for (size_t i = 0; i < 2; i++)
        case_free(&cases[i]);
    return failed;
}
