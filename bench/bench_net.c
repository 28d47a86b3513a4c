/* bench_net.c - how fast the gate decides a network destination (the call
 * grantrun's proxy makes once per connection and per plain-HTTP request).
 *
 * One generated stack of two destination lists (--patterns in all: exact
 * names, wildcards at two depths, ports, IPv4 and IPv6 literals, and denies
 * under the wildcards), a fixed list of --queries destinations from the
 * seed (a third allowed by a name, a third by a wildcard, the rest refused
 * by a deny or by no allow; a tenth with an address). One sample is one
 * pass over the list; the figure is the median sample.
 *   connect-parse    gk_dest_parse_query alone: reading the destination,
 *                    the floor every check pays.
 *   connect-decide   grant_decide_connect: the decision without reasons.
 *                    Baseline: connect-parse.
 *   connect-verdict  grant_check_connect + grant_verdict_free: the decision
 *                    with its deciding rule (what the proxy records).
 *                    Baseline: connect-decide.
 * The three are measured one after another in the same invocation. Before
 * measuring, every query is decided both ways and the answers compared; a
 * disagreement makes the exit status 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grant/grant.h"
#include "syntax/netdest.h"
#include "timing.h"

static uint64_t rng = UINT64_C(0x6772616e746b6974);
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * UINT64_C(2685821657736338717);
}

typedef struct query {
    char host[80];
    unsigned port;
} query;

typedef struct run {
    const grant_policy *p;
    const query *q;
    size_t n;
    int which; /* 0 parse, 1 decide, 2 verdict */
    size_t allowed;
} run;

static int sample(void *arg, double *seconds)
{
    run *r = arg;
    size_t allowed = 0;
    double t0 = bench_now();
    for (size_t i = 0; i < r->n; i++) {
        if (r->which == 0) {
            gk_dest d;
            allowed += gk_dest_parse_query(r->q[i].host, r->q[i].port, &d) == 0;
        } else if (r->which == 1) {
            allowed += grant_decide_connect(r->p, r->q[i].host, r->q[i].port) == 1;
        } else {
            grant_verdict *v = NULL;
            if (grant_check_connect(r->p, r->q[i].host, r->q[i].port, &v) < 0)
                return 1;
            allowed += grant_verdict_answer(v) == GRANT_ALLOWED;
            grant_verdict_free(v);
        }
    }
    *seconds = bench_now() - t0;
    r->allowed = allowed;
    return 0;
}

static grant_policy *compile_text(const grant_context *ctx, const char *name, const char *text)
{
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    if (grant_compile_buffer(ctx, name, text, strlen(text), d, &p) < 0) {
        for (size_t i = 0; i < grant_diags_count(d); i++) {
            char *m = grant_diags_render(d, i);
            fprintf(stderr, "%s\n", m);
            free(m);
        }
        exit(2);
    }
    grant_diags_free(d);
    return p;
}

int main(int argc, char **argv)
{
    size_t npatterns = 1000, nqueries = 10000;
    double seconds = 1.0;
    static const struct option opts[] = {{"patterns", required_argument, NULL, 'p'},
                                         {"queries", required_argument, NULL, 'q'},
                                         {"seconds", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'p')
            npatterns = strtoul(optarg, NULL, 10);
        else if (c == 'q')
            nqueries = strtoul(optarg, NULL, 10);
        else if (c == 's')
            seconds = strtod(optarg, NULL);
        else
            return 2;
    }
    if (npatterns < 10 || nqueries < 1)
        return 2;
    /* Layer a: names d<i>.example.com, wildcards *.w<i>.example.org (some
     * with a port), addresses; layer b: the wildcards *.example.com and
     * *.example.org with denies under them. */
    FILE *fa = NULL, *fb = NULL;
    char *ta = NULL, *tb = NULL;
    size_t la = 0, lb = 0;
    fa = open_memstream(&ta, &la);
    fb = open_memstream(&tb, &lb);
    fprintf(fa, "grant a {\n    net {\n");
    fprintf(fb, "grant b {\n    net {\n        allow *.example.com *.example.org 192.0.2.0 "
                "[2001:db8::1];\n");
    size_t na = npatterns * 3 / 4;
    for (size_t i = 0; i < na; i++) {
        switch (i % 5) {
        case 0:
        case 1:
            fprintf(fa, "        allow d%zu.example.com;\n", i);
            break;
        case 2:
            fprintf(fa, "        allow *.w%zu.example.org:443;\n", i);
            break;
        case 3:
            fprintf(fa, "        allow *.x.w%zu.example.org;\n", i);
            break;
        default:
            fprintf(fa, "        allow 192.0.%zu.%zu;\n", (i / 250) % 256, i % 250 + 1);
            break;
        }
    }
    for (size_t i = 0; i < npatterns - na; i++)
        fprintf(fb, "        deny *.bad%zu.w%zu.example.org;\n", i, (i * 7) % na);
    fprintf(fa, "    }\n}\n");
    fprintf(fb, "    }\n}\n");
    fclose(fa);
    fclose(fb);

    grant_context *ctx = NULL;
    if (grant_context_new(&ctx) < 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) < 0)
        return 2;
    grant_policy *pa = compile_text(ctx, "a.grant", ta), *pb = compile_text(ctx, "b.grant", tb);
    grant_policy *p = NULL;
    if (grant_policy_meet(pa, pb, &p) < 0)
        return 2;

    query *q = calloc(nqueries, sizeof(*q));
    static const unsigned ports[] = {443, 80, 22, 8080};
    for (size_t i = 0; i < nqueries; i++) {
        size_t k = rnd() % na;
        unsigned port = ports[rnd() % 4];
        switch (rnd() % 10) {
        case 0:
            snprintf(q[i].host, sizeof(q[i].host), "192.0.%zu.%zu", (k / 250) % 256, k % 250 + 1);
            break;
        case 1:
        case 2:
        case 3:
            snprintf(q[i].host, sizeof(q[i].host), "D%zu.Example.COM.", k);
            break;
        case 4:
        case 5:
        case 6:
            snprintf(q[i].host, sizeof(q[i].host), "api.w%zu.example.org", k);
            port = 443;
            break;
        case 7:
            snprintf(q[i].host, sizeof(q[i].host), "h.bad%zu.w%zu.example.org",
                     k % (npatterns - na), ((k % (npatterns - na)) * 7) % na);
            break;
        default:
            snprintf(q[i].host, sizeof(q[i].host), "n%zu.example.net", k);
            break;
        }
        q[i].port = port;
    }

    int status = 0;
    size_t allowed = 0;
    for (size_t i = 0; i < nqueries; i++) {
        grant_verdict *v = NULL;
        int d = grant_decide_connect(p, q[i].host, q[i].port);
        if (grant_check_connect(p, q[i].host, q[i].port, &v) < 0 || d < 0 ||
            (grant_verdict_answer(v) == GRANT_ALLOWED) != (d == 1)) {
            fprintf(stderr, "bench_net: %s:%u: the two calls disagree\n", q[i].host, q[i].port);
            status = 1;
        }
        allowed += d == 1;
        grant_verdict_free(v);
    }
    printf("bench_net: %zu patterns in 2 layers, %zu queries (%zu allowed)\n", npatterns,
           nqueries, allowed);

    const char *names[3] = {"connect-parse", "connect-decide", "connect-verdict"};
    timing t[3];
    for (int w = 0; w < 3; w++) {
        run r = {p, q, nqueries, w, 0};
        if (bench_measure_samples(sample, &r, seconds, &t[w]) != 0)
            return 2;
    }
    printf("%-16s %12s %14s %10s\n", "case", "median ms", "per second", "ratio");
    for (int w = 0; w < 3; w++) {
        double per_s = (double)nqueries / (t[w].median_ms / 1000.0);
        if (w == 0)
            printf("%-16s %12.3f %14.0f %10s\n", names[w], t[w].median_ms, per_s, "-");
        else
            printf("%-16s %12.3f %14.0f %9.2fx (vs %s)\n", names[w], t[w].median_ms, per_s,
                   t[w].median_ms / t[w - 1].median_ms, names[w - 1]);
    }
    free(q);
    free(ta);
    free(tb);
    grant_policy_free(p);
    grant_policy_free(pa);
    grant_policy_free(pb);
    grant_context_free(ctx);
    return status;
}
