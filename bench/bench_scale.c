/* bench_scale.c - the corners that once grew faster than their input
 * (issue 16, item 8): YAML duplicate-key checks, audit of large deny and
 * read lists, compare of many subcommand rules against themselves.
 *
 * Each case is timed at N and 4N rules with the public API only. The
 * baseline, measured in the same run at the same sizes, is compiling the
 * same policy (what every command pays anyway). Printed per case: the
 * times, the growth from N to 4N as an exponent (1.0 is linear, 2.0
 * quadratic) beside the baseline's own, and the case's time over its
 * baseline at 4N. Targets (reported, not asserted): exponent at most 1.3,
 * or no more than the baseline's.
 *
 *   bench_scale [--seconds S] [--n N]
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grant/grant.h"
#include "timing.h"

typedef enum { K_YAML, K_DENY_AUDIT, K_READ_AUDIT, K_SUBCMD_COMPARE } kind;

typedef struct scale_case {
    const char *label;
    kind k;
} scale_case;

static const scale_case cases[] = {
    {"yaml: N exec keys (duplicate check)", K_YAML},
    {"audit: N denies", K_DENY_AUDIT},
    {"audit: N read regions", K_READ_AUDIT},
    {"compare: N subcommand rules, itself", K_SUBCMD_COMPARE},
};

typedef struct job {
    grant_context *ctx;
    const char *name; /* decides the surface */
    char *text;
    size_t len;
    kind k;
    bool baseline; /* compile only */
} job;

static char *policy_text(kind k, size_t n, size_t *len)
{
    size_t cap = 64 + n * 64;
    char *s = malloc(cap);
    size_t o = 0;
    if (k == K_YAML) {
        o += (size_t)snprintf(s + o, cap - o, "grant: big\nexec:\n");
        for (size_t i = 0; i < n; i++)
            o += (size_t)snprintf(s + o, cap - o, "  prog%zu: allow\n", i);
    } else {
        o += (size_t)snprintf(s + o, cap - o, "grant big {\n");
        if (k == K_SUBCMD_COMPARE) {
            o += (size_t)snprintf(s + o, cap - o, "    exec {\n");
            for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(s + o, cap - o, "        allow prog%zu [build test];\n", i);
        } else {
            o += (size_t)snprintf(s + o, cap - o, "    fs {\n        read /usr /etc;\n");
            for (size_t i = 0; i < n; i++)
                o += (size_t)snprintf(s + o, cap - o, "        %s /usr/share/d%zu;\n",
                                      k == K_DENY_AUDIT ? "deny" : "read", i);
        }
        o += (size_t)snprintf(s + o, cap - o, "    }\n");
        o += (size_t)snprintf(s + o, cap - o, "}\n");
    }
    *len = o;
    return s;
}

static int run_job(void *arg)
{
    job *j = arg;
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile_buffer(j->ctx, j->name, j->text, j->len, d, &p);
    if (rc == 0 && !j->baseline) {
        if (j->k == K_DENY_AUDIT || j->k == K_READ_AUDIT) {
            grant_findings *f = NULL;
            rc = grant_audit(p, &f);
            grant_findings_free(f);
        } else if (j->k == K_SUBCMD_COMPARE) {
            grant_comparison *c = NULL;
            rc = grant_compare(p, p, &c);
            grant_comparison_free(c);
        }
    }
    grant_policy_free(p);
    grant_diags_free(d);
    return rc;
}

static double time_case(grant_context *ctx, kind k, size_t n, bool baseline, double seconds)
{
    job j = {ctx, k == K_YAML ? "big.yaml" : "big.grant", NULL, 0, k, baseline};
    j.text = policy_text(k, n, &j.len);
    timing t = {0};
    int rc = bench_measure(run_job, &j, seconds, &t);
    free(j.text);
    if (rc != 0) {
        fprintf(stderr, "bench_scale: case failed (%d)\n", rc);
        exit(1);
    }
    return t.min_ms;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    size_t n = 4000;
    static const struct option opts[] = {
        {"seconds", required_argument, NULL, 's'}, {"n", required_argument, NULL, 'n'}, {0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 's')
            seconds = atof(optarg);
        else if (c == 'n')
            n = (size_t)strtoul(optarg, NULL, 10);
        else
            return 2;
    }
    grant_context *ctx = NULL;
    if (grant_context_new(&ctx) < 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) < 0 ||
        grant_context_set(ctx, GRANT_CTX_HOME, "/home/u") < 0 ||
        grant_context_set(ctx, GRANT_CTX_CWD, "/w") < 0 ||
        grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin") < 0) {
        fprintf(stderr, "bench_scale: cannot make the context\n");
        return 1;
    }
    printf("bench_scale: N = %zu, 4N = %zu (min of runs); baseline: compiling the same policy\n",
           n, 4 * n);
    printf("%-38s %9s %9s %8s %9s %9s %8s %7s\n", "case", "N ms", "4N ms", "exponent",
           "base N", "base 4N", "base exp", "x base");
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        double t1 = time_case(ctx, cases[i].k, n, false, seconds);
        double t4 = time_case(ctx, cases[i].k, 4 * n, false, seconds);
        double b1 = time_case(ctx, cases[i].k, n, true, seconds);
        double b4 = time_case(ctx, cases[i].k, 4 * n, true, seconds);
        double e = log(t4 / t1) / log(4.0), be = log(b4 / b1) / log(4.0);
        printf("%-38s %9.2f %9.2f %8.2f %9.2f %9.2f %8.2f %7.2f%s\n", cases[i].label, t1, t4, e,
               b1, b4, be, t4 / b4, e > 1.3 ? "  (superlinear)" : "");
    }
    grant_context_free(ctx);
    return 0;
}
