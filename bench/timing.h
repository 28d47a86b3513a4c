/* timing.h - timing repeated runs for the benchmarks: the median (and
 * the minimum, less sensitive to a loaded machine) of as many runs as fit
 * in a time budget. */
#ifndef GK_BENCH_TIMING_H
#define GK_BENCH_TIMING_H

#include <stddef.h>

typedef int (*bench_fn)(void *arg);

typedef struct timing {
    double median_ms, min_ms;
    size_t runs;
} timing;

double bench_now(void); /* seconds, monotonic */
/* Runs of fn within budget seconds (at least 5), after one warm-up run;
 * fn's first non-zero result is returned (nothing measured then). */
int bench_measure(bench_fn fn, void *arg, double budget, timing *t);
/* A run that times itself (leaving out its own set-up): 0 and *seconds,
 * or non-zero for a failure. */
typedef int (*bench_sample_fn)(void *arg, double *seconds);
/* Samples of fn within budget seconds of sampled time (at least 5), no
 * warm-up; fn's first non-zero result is returned. */
int bench_measure_samples(bench_sample_fn fn, void *arg, double budget, timing *t);
/* For qsort of doubles. */
int bench_cmp_double(const void *a, const void *b);

#endif
