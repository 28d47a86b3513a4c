/* timing.c - see timing.h. */
#include "timing.h"

#include <stdlib.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_measure_samples(bench_sample_fn fn, void *arg, double budget, timing *t)
{
    size_t n = 0, cap = 1024;
    double *s = malloc(cap * sizeof(*s)), total = 0;
    if (!s)
        abort();
    while (total < budget || n < 5) {
        double sample = 0;
        int rc = fn(arg, &sample);
        if (rc != 0) {
            free(s);
            return rc;
        }
        if (n == cap) {
            cap *= 2;
            s = realloc(s, cap * sizeof(*s));
            if (!s)
                abort();
        }
        s[n++] = sample;
        total += sample;
    }
    qsort(s, n, sizeof(*s), bench_cmp_double);
    t->median_ms = (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) * 1e3;
    t->min_ms = s[0] * 1e3;
    t->runs = n;
    free(s);
    return 0;
}

/* bench_measure's runs, timed from outside. */
typedef struct timed_run {
    bench_fn fn;
    void *arg;
} timed_run;

static int time_run(void *arg, double *seconds)
{
    timed_run *r = arg;
    double a = bench_now();
    int rc = r->fn(r->arg);
    *seconds = bench_now() - a;
    return rc;
}

int bench_measure(bench_fn fn, void *arg, double budget, timing *t)
{
    int rc = fn(arg);
    if (rc != 0)
        return rc;
    timed_run r = {fn, arg};
    return bench_measure_samples(time_run, &r, budget, t);
}
