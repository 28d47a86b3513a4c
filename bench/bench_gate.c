/* bench_gate.c - how fast the gate decides, against what the kernel-side
 * work alone costs.
 *
 * One generated stack (gen_policy_layers_opts: 1,000 rules over 5 layers,
 * fs regions and exec rules, fixed seed, three broad rules shared by every
 * layer) is compiled for the HOST target with every absolute path, home,
 * cwd, tempdir and XDG dir under a fresh temp dir (default under /var/tmp:
 * /tmp is an implicit write grant of the linux target and would decide
 * every query). The regions, bin dirs and commands the policy names are
 * created there (dirs, files, executables, and symlinks: a link to a
 * region, a link followed by '..', commands linked into a bin dir), so the
 * existing-path cases resolve real files.
 *
 * Cases (each a fixed list of --queries queries from the seed; one sample
 * is one pass over the list; the figure is the median sample):
 *   fs-fast       gk_gate_fs(p, op, canonical, NULL): the indexed decision
 *                 alone, no verdict (internal API; what a backend's hot
 *                 path would call). Target: 2,000,000 decisions/s/core.
 *   fs-resolved   grant_check_fs_resolved: the same queries through the
 *                 public call, which builds a verdict with its reason
 *                 strings (the explaining path). Baseline: fs-fast. The
 *                 2,000,000/s target is the decision's, not this row's.
 *   fs-existing   grant_check_fs on existing absolute paths (symlinks
 *                 among them): resolution as the kernel does + verdict.
 *                 Baseline: realpath(path, buf) alone on the same paths.
 *                 Target: at most 1.3x the baseline.
 *   fs-exist-fast gk_resolve_query + gk_gate_fs(.., NULL): the same
 *                 without the verdict strings, to split the cost.
 *   exec-query    grant_check_exec_query on resolved identities.
 *                 Baseline: gk_gate_exec(p, q, NULL) (no verdict).
 *   exec-walk     grant_check_exec(argv, PATH, cwd) with a PATH of the
 *                 temp bin dirs. Baseline: the PATH walk alone (stat of
 *                 each candidate until an executable regular file, then
 *                 realpath of it), as an exec would need.
 * Canonical queries: inside read/write regions (0-3 more components),
 * in deny and readonly entries, outside every region, deep (8-20 more
 * components), implicit system paths, the policy's own sources. Existing
 * ones: region dirs, files in them, files 5 dirs down, through a symlink
 * to a region, through a link and '..', system files. Exec: names the
 * policy admits or vetoes (most in ROOT/usr/bin, some in the layers' own
 * bin dirs, a vetoed dir, or linked to /opt/tools/bin), files, names a
 * pattern vetoes, common and unknown names; 85% with an argv[1].
 *
 * A case and its baseline are measured alternately, pass by pass, so a
 * load change on the machine hits both; the load average is printed.
 * Before measuring, every query is answered through both paths (and the
 * resolution compared with realpath's); a disagreement is reported and
 * makes the exit status 1. Targets are reported, not asserted. --dump
 * writes every verdict, so that a change of the library can be checked to
 * keep every answer and every reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grant/grant.h"
#include "gate/gate.h"
#include "gen_policy.h"

#define BENCH_DEFAULT_SEED UINT64_C(0x6772616e746b6974) /* "grantkit" */
#define BENCH_MIN_RUNS 5
#define BENCH_MAX_SAMPLES 2000000
#define FS_TARGET_PER_S 2000000.0
#define FS_TARGET_RATIO 1.3
#define N_PATH_DIRS 8 /* bin dirs on the PATH of exec-walk, before ROOT/usr/bin */

typedef struct bench_opts {
    double seconds; /* time budget per measurement */
    uint64_t seed;
    size_t rules, layers, queries;
    const char *dir;  /* parent of the temp dir */
    const char *only; /* run only cases whose label contains this */
    bool keep;        /* keep the temp dir (profiling) */
    const char *dump; /* write every query's verdict here (comparing builds) */
} bench_opts;

/* ---- helpers ---------------------------------------------------------- */

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

static void die(const char *what, int err)
{
    fprintf(stderr, "bench_gate: %s: %s\n", what, strerror(err));
    exit(2);
}

static void check_rc(int rc, const char *what)
{
    if (rc != 0)
        die(what, rc < 0 ? -rc : rc);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    va_end(ap);
    return s;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

/* A growable list of owned strings. */
typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_push(strlist *l, char *s) /* takes s */
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof(char *));
        if (!l->v)
            abort();
    }
    l->v[l->n++] = s;
}

static void sl_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* splitmix64, as gen_policy.c. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t below(rng *r, size_t n)
{
    return n ? (size_t)(rng_next(r) % n) : 0;
}

static bool chance(rng *r, unsigned percent)
{
    return below(r, 100) < percent;
}

static const char *pick_str(rng *r, const strlist *l)
{
    return l->v[below(r, l->n)];
}

/* ---- the temp tree ---------------------------------------------------- */

static char *bench_root;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void cleanup_root(void)
{
    if (bench_root)
        nftw(bench_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(buf))
        die(path, ENAMETOOLONG);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            die(buf, errno);
        buf[i] = c;
    }
}

static void write_file(const char *path, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        die(path, errno);
    static const char text[] = "#!/bin/sh\nexit 0\n";
    if (write(fd, text, sizeof(text) - 1) < 0)
        die(path, errno);
    close(fd);
    if (chmod(path, mode) != 0)
        die(path, errno);
}

static void make_link(const char *target, const char *link)
{
    if (symlink(target, link) != 0 && errno != EEXIST)
        die(link, errno);
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Path words of the grant language end at whitespace, '"', ';', ',' and
 * brackets: the root is written unquoted into the generated files. */
static bool word_safe(const char *s)
{
    for (; *s; s++)
        if (*s <= ' ' || strchr("\"';,{}[]#\\", *s))
            return false;
    return true;
}

/* ---- the policy ---------------------------------------------------------- */

typedef struct gate_setup {
    char *root, *home, *cwd, *tempdir, *poldir, *usrbin;
    char *path_env;      /* PATH of exec-walk */
    gen_policy pol;
    grant_context *ctx;
    grant_policy *p;
    bool implicit;
    /* What the compiled stack names (canonical spellings). */
    strlist read_regions, write_regions, deny_regions, ro_regions;
    strlist names, files, bin_dirs, veto_dirs, patterns;
} gate_setup;

static grant_context *make_context(const gate_setup *g, bool implicit)
{
    grant_context *ctx = NULL;
    check_rc(grant_context_new(&ctx), "grant_context_new");
    check_rc(grant_context_set_target(ctx, GRANT_TARGET_HOST), "set target");
    check_rc(grant_context_set(ctx, GRANT_CTX_HOME, g->home), "set home");
    check_rc(grant_context_set(ctx, GRANT_CTX_USER, "bench"), "set user");
    check_rc(grant_context_set(ctx, GRANT_CTX_CWD, g->cwd), "set cwd");
    check_rc(grant_context_set(ctx, GRANT_CTX_TEMPDIR, g->tempdir), "set tempdir");
    check_rc(grant_context_set(ctx, GRANT_CTX_PATH, g->path_env ? g->path_env : g->usrbin),
             "set path");
    static const char *const xdg[][2] = {
        {"config", ".config"}, {"data", ".local/share"}, {"cache", ".cache"},
        {"state", ".local/state"}, {"bin", ".local/bin"},
    };
    for (size_t i = 0; i < sizeof(xdg) / sizeof(xdg[0]); i++) {
        char *d = xasprintf("%s/%s", g->home, xdg[i][1]);
        check_rc(grant_context_set_xdg(ctx, xdg[i][0], d), "set xdg");
        free(d);
    }
    check_rc(grant_context_set_implicit(ctx, implicit), "set implicit");
    check_rc(grant_context_set_policy_path(ctx, g->poldir), "set policy path");
    return ctx;
}

static grant_policy *compile_stack(gate_setup *g)
{
    grant_context_free(g->ctx);
    g->ctx = make_context(g, g->implicit);
    char *top = xasprintf("%s/%s", g->poldir, g->pol.files[0].name);
    const char *files[1] = {top};
    grant_diags *diags = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile(g->ctx, files, 1, NULL, 0, diags, &p);
    if (rc != 0) {
        fprintf(stderr, "bench_gate: grant_compile failed (%d)\n", rc);
        for (size_t i = 0; i < grant_diags_count(diags) && i < 20; i++) {
            char *s = grant_diags_render(diags, i);
            fprintf(stderr, "%s\n", s ? s : "(null)");
            free(s);
        }
        exit(2);
    }
    grant_diags_free(diags);
    free(top);
    return p;
}

static void collect_regions(strlist *out, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++)
        sl_push(out, strdup(r->v[i].p.real));
}

/* Read back what the compiled stack names: the regions and commands to
 * create and to query. */
static void collect(gate_setup *g)
{
    const grant_policy *p = g->p;
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (f->has_fs) {
            collect_regions(&g->read_regions, &f->fs.read);
            collect_regions(&g->write_regions, &f->fs.write);
            collect_regions(&g->deny_regions, &f->fs.deny);
            collect_regions(&g->ro_regions, &f->fs.readonly);
        }
        if (f->has_exec) {
            const gk_exec_dim *x = &f->exec;
            for (size_t i = 0; i < x->names.n; i++)
                sl_push(&g->names, strdup(x->names.v[i].key));
            for (size_t i = 0; i < x->veto_names.n; i++)
                sl_push(&g->names, strdup(x->veto_names.v[i].key));
            for (size_t i = 0; i < x->files.n; i++)
                sl_push(&g->files, strdup(x->files.v[i].key));
            for (size_t i = 0; i < x->veto_files.n; i++)
                sl_push(&g->files, strdup(x->veto_files.v[i].key));
            for (size_t i = 0; i < x->dirs.n; i++)
                sl_push(&g->bin_dirs, strdup(x->dirs.v[i].key));
            for (size_t i = 0; i < x->veto_dirs.n; i++)
                sl_push(&g->veto_dirs, strdup(x->veto_dirs.v[i].key));
            for (size_t i = 0; i < x->veto_match.n; i++)
                sl_push(&g->patterns, strdup(x->veto_match.v[i].key));
        }
    }
}

/* A name a generated `deny match "^badNNNNN-[a-z]+[0-9]*$"` vetoes. */
static char *pattern_victim(const char *pattern)
{
    unsigned n = 0;
    if (sscanf(pattern, "^bad%5u-", &n) != 1)
        return strdup("bad00000-x");
    return xasprintf("bad%05u-tool2", n);
}

/* Create the regions (dirs, a file in each, a deep file in some), the bin
 * dirs with commands, and the symlinks the queries go through. */
static void materialise(gate_setup *g, rng *r)
{
    const strlist *fsl[4] = {&g->read_regions, &g->write_regions, &g->deny_regions,
                             &g->ro_regions};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < fsl[k]->n; i++) {
            const char *d = fsl[k]->v[i];
            if (strncmp(d, g->root, strlen(g->root)) != 0)
                continue; /* only under the temp dir */
            mkdir_p(d);
            char *f = xasprintf("%s/f.txt", d);
            write_file(f, 0644);
            free(f);
            if (i % 4 == 0) {
                char *deep = xasprintf("%s/a/b/c/d/e", d);
                mkdir_p(deep);
                char *leaf = xasprintf("%s/leaf.txt", deep);
                write_file(leaf, 0644);
                free(leaf);
                free(deep);
            }
        }
    mkdir_p(g->usrbin);
    for (size_t i = 0; i < g->bin_dirs.n; i++)
        mkdir_p(g->bin_dirs.v[i]);
    for (size_t i = 0; i < g->veto_dirs.n; i++)
        mkdir_p(g->veto_dirs.v[i]);
    for (size_t i = 0; i < g->files.n; i++) {
        char *dir = strdup(g->files.v[i]);
        *strrchr(dir, '/') = '\0';
        mkdir_p(dir);
        free(dir);
        write_file(g->files.v[i], 0755);
    }
    /* Named commands: most in ROOT/usr/bin (admitted by the shared dir
     * unless vetoed or restricted), some in the layers' own bin dirs or a
     * vetoed dir, some linked into usr/bin from /opt/tools/bin (walked and
     * canonical differ), some nowhere (admitted, not found). */
    for (size_t i = 0; i < g->names.n; i++) {
        const char *name = g->names.v[i];
        size_t roll = below(r, 100);
        char *at = NULL;
        if (roll < 55) {
            at = xasprintf("%s/%s", g->usrbin, name);
            write_file(at, 0755);
        } else if (roll < 70 && g->bin_dirs.n) {
            at = xasprintf("%s/%s", pick_str(r, &g->bin_dirs), name);
            write_file(at, 0755);
        } else if (roll < 75 && g->veto_dirs.n) {
            at = xasprintf("%s/%s", pick_str(r, &g->veto_dirs), name);
            write_file(at, 0755);
        } else if (roll < 90 && g->files.n) {
            at = xasprintf("%s/%s", g->usrbin, name);
            make_link(pick_str(r, &g->files), at);
        }
        free(at);
    }
    for (size_t i = 0; i < g->patterns.n; i++) {
        char *victim = pattern_victim(g->patterns.v[i]);
        char *at = xasprintf("%s/%s", g->usrbin, victim);
        write_file(at, 0755);
        free(at);
        free(victim);
    }
    /* Symlinks for the queries: a link to a region root (relative), one to
     * a shared region (absolute), a link whose '..' leads elsewhere than a
     * lexical fold would, and a link inside a region. */
    char *srv = xasprintf("%s/srv/data", g->root), *share = xasprintf("%s/usr/share/bench", g->root);
    mkdir_p(srv);
    mkdir_p(share);
    char *l1 = xasprintf("%s/data", g->home), *l2 = xasprintf("%s/lib", g->cwd);
    char *l3 = xasprintf("%s/cur", g->home), *l4 = xasprintf("%s/latest", srv);
    make_link("../../../srv/data", l1);
    make_link(share, l2);
    make_link("project/out", l3);
    const char *someregion = NULL;
    for (size_t i = 0; i < g->read_regions.n && !someregion; i++)
        if (strncmp(g->read_regions.v[i], srv, strlen(srv)) == 0 &&
            strlen(g->read_regions.v[i]) > strlen(srv))
            someregion = g->read_regions.v[i] + strlen(srv) + 1;
    make_link(someregion ? someregion : ".", l4);
    free(srv), free(share), free(l1), free(l2), free(l3), free(l4);
}

static void setup(gate_setup *g, const bench_opts *o)
{
    memset(g, 0, sizeof(*g));
    const char *parent = o->dir;
    if (!parent) {
        parent = access("/var/tmp", W_OK) == 0 ? "/var/tmp" : getenv("TMPDIR");
        if (!parent || !*parent)
            parent = "/tmp";
    }
    bench_root = xasprintf("%s/gk-gate-XXXXXX", parent);
    if (!mkdtemp(bench_root))
        die(bench_root, errno);
    if (!o->keep)
        atexit(cleanup_root);
    /* The root as the kernel spells it: regions freeze to it. */
    g->root = realpath(bench_root, NULL);
    if (!g->root)
        die(bench_root, errno);
    if (!word_safe(g->root)) {
        fprintf(stderr, "bench_gate: %s: use a --dir without spaces or grant punctuation\n",
                g->root);
        exit(2);
    }
    g->home = xasprintf("%s/home/bench", g->root);
    g->cwd = xasprintf("%s/project", g->home);
    g->tempdir = xasprintf("%s/tmp", g->root);
    g->poldir = xasprintf("%s/policy", g->root);
    g->usrbin = xasprintf("%s/usr/bin", g->root);
    static const char *const base[] = {
        "home/bench/project/out", "home/bench/work",  "home/bench/src",
        "home/bench/.secret",     "home/bench/.config", "home/bench/.cache",
        "home/bench/.local/share", "home/bench/.local/bin", "home/bench/.local/state",
        "tmp",                     "srv/data",          "usr/share/bench",
        "usr/bin",                 "etc/bench",         "opt/tools/bin",
        "policy",                  "outside/x",
    };
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
        char *d = xasprintf("%s/%s", g->root, base[i]);
        mkdir_p(d);
        free(d);
    }

    gen_opts go = {g->root, true};
    gen_policy_layers_opts(o->seed, o->rules, o->layers, &go, &g->pol);
    check_rc(gen_policy_write(&g->pol, g->poldir), g->poldir);

    g->implicit = true;
    g->p = compile_stack(g);
    /* On a root inside an implicit grant (/tmp on linux) the implicit
     * grant would decide every query: measure the regions instead. */
    char *probe = xasprintf("%s/outside/x", g->root);
    grant_verdict *v = NULL;
    check_rc(grant_check_fs_resolved(g->p, GRANT_OP_WRITE, probe, &v), "probe");
    if (strncmp(grant_verdict_origin(v), "implicit:", 9) == 0) {
        printf("note: %s lies in an implicit grant (%s): compiled with --no-implicit\n", g->root,
               grant_verdict_rule(v));
        g->implicit = false;
    }
    grant_verdict_free(v);
    free(probe);
    grant_policy_free(g->p);
    g->p = compile_stack(g);
    collect(g);

    rng r = {o->seed ^ 0x6d6174657269616cULL};
    materialise(g, &r);

    /* PATH for exec-walk: ~/.local/bin, N_PATH_DIRS of the layers' allow
     * dirs (under the root), one vetoed dir, then the shared ROOT/usr/bin:
     * a name in usr/bin costs a stat of every dir before it. */
    strlist dirs = {0};
    sl_push(&dirs, xasprintf("%s/.local/bin", g->home));
    for (size_t i = 0; i < g->bin_dirs.n && dirs.n < 1 + N_PATH_DIRS; i++)
        if (strncmp(g->bin_dirs.v[i], g->root, strlen(g->root)) == 0 &&
            strcmp(g->bin_dirs.v[i], g->usrbin) != 0)
            sl_push(&dirs, strdup(g->bin_dirs.v[i]));
    if (g->veto_dirs.n)
        sl_push(&dirs, strdup(g->veto_dirs.v[0]));
    sl_push(&dirs, strdup(g->usrbin));
    size_t len = 0;
    for (size_t i = 0; i < dirs.n; i++)
        len += strlen(dirs.v[i]) + 1;
    g->path_env = xcalloc(len + 1, 1);
    for (size_t i = 0; i < dirs.n; i++) {
        if (i)
            strcat(g->path_env, ":");
        strcat(g->path_env, dirs.v[i]);
    }
    sl_free(&dirs);

    /* Compile again now that the paths exist (the host freeze resolves the
     * existing prefix) and with the PATH in the context. */
    grant_policy_free(g->p);
    g->p = compile_stack(g);
}

static void setup_free(gate_setup *g)
{
    grant_policy_free(g->p);
    grant_context_free(g->ctx);
    gen_policy_free(&g->pol);
    strlist *all[] = {&g->read_regions, &g->write_regions, &g->deny_regions, &g->ro_regions,
                      &g->names, &g->files, &g->bin_dirs, &g->veto_dirs, &g->patterns};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        sl_free(all[i]);
    free(g->root), free(g->home), free(g->cwd), free(g->tempdir), free(g->poldir);
    free(g->usrbin), free(g->path_env);
}

/* ---- query lists ----------------------------------------------------------- */

typedef struct fs_query {
    grant_op op;
    char *path;
} fs_query;

typedef struct fs_queries {
    fs_query *v;
    size_t n;
} fs_queries;

static const char *const tail_words[] = {"src", "lib", "main.c", "README", "x", "build", "a.out",
                                         ".git", "objects", "pack", "doc", "notes.txt"};
#define N_TAIL (sizeof(tail_words) / sizeof(tail_words[0]))

static char *with_tail(rng *r, const char *base, size_t min, size_t max)
{
    size_t n = min + below(r, max - min + 1);
    char *s = xcalloc(strlen(base) + n * 16 + 2, 1); /* tail words are short */
    strcpy(s, base);
    if (strcmp(s, "/") == 0)
        s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(s, "/");
        strcat(s, tail_words[below(r, N_TAIL)]);
    }
    if (!*s)
        strcpy(s, "/");
    return s;
}

static const strlist *nonempty(const strlist *a, const strlist *b)
{
    return a->n ? a : b;
}

/* Pre-canonical queries: inside regions, in denies and readonly entries,
 * outside every region, deep below a region, implicit system paths, the
 * policy's own sources, the discard device. */
static void make_resolved_queries(const gate_setup *g, size_t n, rng *r, fs_queries *out)
{
    static const char *const system[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/passwd",
                                         "/usr/bin/env", "/etc/ld.so.cache", "/proc/self/status",
                                         "/home/someone/.ssh/id_ed25519", "/etc/shadow",
                                         "/var/lib/dpkg/status", "/dev/null", "/"};
    out->v = xcalloc(n, sizeof(fs_query));
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        fs_query *q = &out->v[i];
        q->op = chance(r, 30) ? GRANT_OP_WRITE : GRANT_OP_READ;
        size_t roll = below(r, 100);
        if (roll < 35) {
            const strlist *l = q->op == GRANT_OP_WRITE ? nonempty(&g->write_regions, &g->read_regions)
                                                       : &g->read_regions;
            q->path = with_tail(r, pick_str(r, l), 0, 3);
        } else if (roll < 50) {
            const strlist *l = chance(r, 50) ? nonempty(&g->deny_regions, &g->read_regions)
                                             : nonempty(&g->ro_regions, &g->read_regions);
            q->path = with_tail(r, pick_str(r, l), 0, 2);
        } else if (roll < 65) {
            char *base = xasprintf(chance(r, 50) ? "%s/outside" : "%s/home/bench/.secret",
                                   g->root);
            q->path = with_tail(r, base, 1, 3);
            free(base);
        } else if (roll < 85) {
            q->path = with_tail(r, pick_str(r, &g->read_regions), 8, 20);
        } else if (roll < 95) {
            q->path = strdup(system[below(r, sizeof(system) / sizeof(system[0]))]);
        } else {
            q->path = xasprintf("%s/%s", g->poldir, g->pol.files[below(r, g->pol.nfiles)].name);
        }
    }
}

/* Existing paths, spelled as a program would (some through symlinks, one
 * with a symlink followed by '..'). Every one exists (checked). */
static void make_existing_queries(const gate_setup *g, size_t n, rng *r, fs_queries *out)
{
    static const char *const system[] = {"/usr/bin/env", "/etc/passwd", "/etc/hosts",
                                         "/usr/lib/os-release", "/usr/share", "/bin/sh",
                                         "/etc/ld.so.cache"};
    char *srv = xasprintf("%s/srv/data/", g->root);
    char *share = xasprintf("%s/usr/share/bench/", g->root);
    strlist srv_regions = {0}, share_regions = {0}, all = {0};
    const strlist *fsl[4] = {&g->read_regions, &g->write_regions, &g->deny_regions,
                             &g->ro_regions};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < fsl[k]->n; i++) {
            const char *d = fsl[k]->v[i];
            if (strncmp(d, g->root, strlen(g->root)) != 0)
                continue;
            sl_push(&all, strdup(d));
            if (strncmp(d, srv, strlen(srv)) == 0)
                sl_push(&srv_regions, strdup(d + strlen(srv)));
            if (strncmp(d, share, strlen(share)) == 0)
                sl_push(&share_regions, strdup(d + strlen(share)));
        }
    out->v = xcalloc(n, sizeof(fs_query));
    out->n = 0;
    size_t tries = 0;
    while (out->n < n) {
        if (++tries > 100 * n)
            die("making existing queries", ENOENT);
        fs_query q = {chance(r, 30) ? GRANT_OP_WRITE : GRANT_OP_READ, NULL};
        size_t roll = below(r, 100);
        const char *reg = pick_str(r, &all);
        if (roll < 35)
            q.path = xasprintf("%s/f.txt", reg);
        else if (roll < 50)
            q.path = strdup(reg);
        else if (roll < 65)
            q.path = xasprintf("%s/a/b/c/d/e/leaf.txt", reg);
        else if (roll < 75 && srv_regions.n)
            q.path = xasprintf("%s/data/%s/f.txt", g->home, pick_str(r, &srv_regions));
        else if (roll < 82 && share_regions.n)
            q.path = xasprintf("%s/lib/%s/f.txt", g->cwd, pick_str(r, &share_regions));
        else if (roll < 87)
            q.path = xasprintf("%s/cur/../work", g->home); /* cur -> project/out */
        else if (roll < 90)
            q.path = xasprintf("%s/srv/data/latest/f.txt", g->root);
        else
            q.path = strdup(system[below(r, sizeof(system) / sizeof(system[0]))]);
        if (!exists(q.path)) {
            free(q.path);
            continue;
        }
        out->v[out->n++] = q;
    }
    free(srv);
    free(share);
    sl_free(&srv_regions);
    sl_free(&share_regions);
    sl_free(&all);
}

static void fs_queries_free(fs_queries *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->v[i].path);
    free(q->v);
}

/* One exec query: argv for grant_check_exec and the identities the walk
 * finds, for grant_check_exec_query. */
typedef struct exec_query {
    char *argv[3];
    grant_exec_query q;
    char *walked, *canonical;
} exec_query;

typedef struct exec_queries {
    exec_query *v;
    size_t n;
} exec_queries;

static const char *const sub_words[] = {"log", "status", "push", "build", "test", "install", "run"};

/* Walk PATH as an exec would (stat each candidate; the first executable
 * regular file wins), then realpath of it. Returns the walked path. */
static char *walk_path(const char *path_env, const char *name, char *canon, size_t canon_size)
{
    char cand[PATH_MAX];
    const char *d = path_env;
    canon[0] = '\0';
    while (*d) {
        const char *e = strchr(d, ':');
        size_t n = e ? (size_t)(e - d) : strlen(d);
        if (n && n + strlen(name) + 2 < sizeof(cand)) {
            memcpy(cand, d, n);
            cand[n] = '/';
            strcpy(cand + n + 1, name);
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
                char buf[PATH_MAX];
                if (realpath(cand, buf) && strlen(buf) < canon_size)
                    strcpy(canon, buf);
                return strdup(cand);
            }
        }
        d = e ? e + 1 : d + n;
    }
    return NULL;
}

static void make_exec_queries(const gate_setup *g, size_t n, rng *r, exec_queries *out)
{
    static const char *const common[] = {"git", "make", "bash", "sh", "env", "cargo"};
    out->v = xcalloc(n, sizeof(exec_query));
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        exec_query *x = &out->v[i];
        size_t roll = below(r, 100);
        if (roll < 65 && g->names.n)
            x->argv[0] = strdup(pick_str(r, &g->names));
        else if (roll < 75 && g->files.n)
            x->argv[0] = strdup(pick_str(r, &g->files));
        else if (roll < 80 && g->patterns.n)
            x->argv[0] = pattern_victim(pick_str(r, &g->patterns));
        else if (roll < 90)
            x->argv[0] = strdup(common[below(r, sizeof(common) / sizeof(common[0]))]);
        else
            x->argv[0] = xasprintf("nosuch%03zu", below(r, 1000));
        if (!chance(r, 15))
            x->argv[1] = strdup(sub_words[below(r, sizeof(sub_words) / sizeof(sub_words[0]))]);
        char canon[PATH_MAX];
        if (strchr(x->argv[0], '/')) {
            x->walked = strdup(x->argv[0]);
            if (realpath(x->walked, canon))
                x->canonical = strdup(canon);
        } else {
            x->walked = walk_path(g->path_env, x->argv[0], canon, sizeof(canon));
            if (x->walked && canon[0])
                x->canonical = strdup(canon);
        }
        x->q = (grant_exec_query){x->argv[0], x->walked, x->canonical, x->argv[1]};
    }
}

static void exec_queries_free(exec_queries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].argv[0]);
        free(e->v[i].argv[1]);
        free(e->v[i].walked);
        free(e->v[i].canonical);
    }
    free(e->v);
}

/* ---- the measured passes ------------------------------------------------------ */

typedef struct job {
    const gate_setup *g;
    const fs_queries *fs;
    const exec_queries *ex;
    size_t allowed, denied, not_found; /* of the last pass */
} job;

static volatile size_t sink;

static void count(job *j, grant_answer a)
{
    if (a == GRANT_ALLOWED)
        j->allowed++;
    else if (a == GRANT_NOT_FOUND)
        j->not_found++;
    else
        j->denied++;
}

static void reset(job *j)
{
    j->allowed = j->denied = j->not_found = 0;
}

static void pass_fs_fast(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->fs->n; i++)
        count(j, gk_gate_fs(j->g->p, j->fs->v[i].op, j->fs->v[i].path, NULL));
}

static void pass_fs_resolved(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->fs->n; i++) {
        grant_verdict *v = NULL;
        if (grant_check_fs_resolved(j->g->p, j->fs->v[i].op, j->fs->v[i].path, &v) != 0)
            abort();
        count(j, grant_verdict_answer(v));
        grant_verdict_free(v);
    }
}

static void pass_fs_check(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->fs->n; i++) {
        grant_verdict *v = NULL;
        if (grant_check_fs(j->g->p, j->fs->v[i].op, j->fs->v[i].path, NULL, &v) != 0)
            abort();
        count(j, grant_verdict_answer(v));
        grant_verdict_free(v);
    }
}

static void pass_fs_exist_fast(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->fs->n; i++) {
        char *res = gk_resolve_query(j->g->p->ctx, j->fs->v[i].path, NULL);
        count(j, res ? gk_gate_fs(j->g->p, j->fs->v[i].op, res, NULL) : GRANT_DENIED);
        free(res);
    }
}

static void pass_realpath(job *j)
{
    reset(j);
    char buf[PATH_MAX];
    for (size_t i = 0; i < j->fs->n; i++) {
        const char *s = realpath(j->fs->v[i].path, buf);
        sink += s ? (size_t)s[1] : 0;
    }
}

static void pass_exec_query(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->ex->n; i++) {
        grant_verdict *v = NULL;
        if (grant_check_exec_query(j->g->p, &j->ex->v[i].q, &v) != 0)
            abort();
        count(j, grant_verdict_answer(v));
        grant_verdict_free(v);
    }
}

static void pass_exec_fast(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->ex->n; i++)
        count(j, gk_gate_exec(j->g->p, &j->ex->v[i].q, NULL));
}

static void pass_exec_walk(job *j)
{
    reset(j);
    for (size_t i = 0; i < j->ex->n; i++) {
        grant_verdict *v = NULL;
        const exec_query *x = &j->ex->v[i];
        if (grant_check_exec(j->g->p, (const char *const *)x->argv, 0, j->g->path_env, j->g->cwd,
                             &v) != 0)
            abort();
        count(j, grant_verdict_answer(v));
        grant_verdict_free(v);
    }
}

static void pass_walk_only(job *j)
{
    reset(j);
    char canon[PATH_MAX];
    for (size_t i = 0; i < j->ex->n; i++) {
        const char *head = j->ex->v[i].argv[0];
        char *w;
        if (strchr(head, '/')) {
            w = realpath(head, canon) ? canon : NULL;
            sink += w ? 1 : 0;
            continue;
        }
        w = walk_path(j->g->path_env, head, canon, sizeof(canon));
        sink += w ? 1 : 0;
        free(w);
    }
}

typedef void (*pass_fn)(job *j);

typedef struct result {
    double median_s; /* one pass */
    size_t runs;
} result;

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Passes of fn (and, when given, of base, alternating with fn) until the
 * budget is spent; a warm-up pass of each comes first (the gate index is
 * built on the first check; page cache, allocator, lazy binding). */
static void measure(pass_fn fn, job *j, pass_fn base, job *bj, double budget, result *res,
                    result *bres)
{
    fn(j);
    if (base)
        base(bj);
    size_t cap = 1024, n = 0;
    double *s = malloc(cap * sizeof(double)), *bs = malloc(cap * sizeof(double));
    if (!s || !bs)
        abort();
    double start = now_seconds();
    while ((now_seconds() - start < budget || n < BENCH_MIN_RUNS) && n < BENCH_MAX_SAMPLES) {
        if (n == cap) {
            cap *= 2;
            s = realloc(s, cap * sizeof(double));
            bs = realloc(bs, cap * sizeof(double));
            if (!s || !bs)
                abort();
        }
        double a = now_seconds();
        fn(j);
        double b = now_seconds();
        s[n] = b - a;
        if (base) {
            base(bj);
            bs[n] = now_seconds() - b;
        }
        n++;
    }
    res->median_s = median(s, n);
    res->runs = n;
    if (base) {
        bres->median_s = median(bs, n);
        bres->runs = n;
    }
    free(s);
    free(bs);
}

/* ---- agreement checks (before measuring) ---------------------------------------- */

static int check_fs_paths(const gate_setup *g, const fs_queries *res, const fs_queries *ex)
{
    int bad = 0;
    for (size_t i = 0; i < res->n; i++) {
        grant_verdict *v = NULL;
        grant_check_fs_resolved(g->p, res->v[i].op, res->v[i].path, &v);
        grant_answer fast = gk_gate_fs(g->p, res->v[i].op, res->v[i].path, NULL);
        if (fast != grant_verdict_answer(v) && bad++ < 5)
            fprintf(stderr, "bench_gate: fast and explained gate disagree on %s %s\n",
                    res->v[i].op == GRANT_OP_READ ? "read" : "write", res->v[i].path);
        grant_verdict_free(v);
    }
    char buf[PATH_MAX];
    for (size_t i = 0; i < ex->n; i++) {
        char *mine = gk_resolve_query(g->p->ctx, ex->v[i].path, NULL);
        const char *theirs = realpath(ex->v[i].path, buf);
        if ((!mine || !theirs || strcmp(mine, theirs) != 0) && bad++ < 5)
            fprintf(stderr, "bench_gate: %s resolves to %s, realpath says %s\n", ex->v[i].path,
                    mine ? mine : "(null)", theirs ? theirs : "(null)");
        grant_verdict *v = NULL;
        grant_check_fs(g->p, ex->v[i].op, ex->v[i].path, NULL, &v);
        if (mine && gk_gate_fs(g->p, ex->v[i].op, mine, NULL) != grant_verdict_answer(v) &&
            bad++ < 5)
            fprintf(stderr, "bench_gate: check_fs and the fast path disagree on %s\n",
                    ex->v[i].path);
        grant_verdict_free(v);
        free(mine);
    }
    return bad;
}

static int check_exec_paths(const gate_setup *g, const exec_queries *e)
{
    int bad = 0;
    for (size_t i = 0; i < e->n; i++) {
        const exec_query *x = &e->v[i];
        grant_verdict *vq = NULL, *vw = NULL;
        grant_check_exec_query(g->p, &x->q, &vq);
        grant_check_exec(g->p, (const char *const *)x->argv, 0, g->path_env, g->cwd, &vw);
        grant_answer aq = grant_verdict_answer(vq), aw = grant_verdict_answer(vw);
        /* The query form has no existence test: "admitted, not found" is
         * an admission there. */
        if (aw == GRANT_NOT_FOUND && !x->canonical)
            aw = GRANT_ALLOWED;
        if (aq != aw && bad++ < 5)
            fprintf(stderr, "bench_gate: exec %s: check_exec says %d, on its identities %d\n",
                    x->argv[0], (int)aw, (int)aq);
        if (gk_gate_exec(g->p, &x->q, NULL) != aq && bad++ < 5)
            fprintf(stderr, "bench_gate: exec %s: fast and explained gate disagree\n", x->argv[0]);
        grant_verdict_free(vq);
        grant_verdict_free(vw);
    }
    return bad;
}

/* Every query and the JSON of its public verdict, one per line, with the
 * temp root written as ROOT: two builds of the library must print the
 * same file (the same answers and the same reasons). */
static void dump_line(FILE *f, const gate_setup *g, const char *what, const char *q,
                      grant_verdict *v)
{
    char *j = grant_verdict_json(v);
    gk_buf b = {0};
    gk_buf_printf(&b, "%s %s %s", what, q, j ? j : "(null)");
    free(j);
    grant_verdict_free(v);
    char *line = gk_buf_steal(&b, NULL);
    size_t rl = strlen(g->root);
    for (char *s = line; *s;) {
        char *hit = strstr(s, g->root);
        if (!hit) {
            fputs(s, f);
            break;
        }
        fwrite(s, 1, (size_t)(hit - s), f);
        fputs("ROOT", f);
        s = hit + rl;
    }
    fputc('\n', f);
    free(line);
}

static void dump_verdicts(const char *file, const gate_setup *g, const fs_queries *res,
                          const fs_queries *ex, const exec_queries *e)
{
    FILE *f = fopen(file, "w");
    if (!f)
        die(file, errno);
    static const char *const ops[] = {"read", "write"};
    for (size_t i = 0; i < res->n; i++) {
        grant_verdict *v = NULL;
        grant_check_fs_resolved(g->p, res->v[i].op, res->v[i].path, &v);
        dump_line(f, g, ops[res->v[i].op], res->v[i].path, v);
    }
    for (size_t i = 0; i < ex->n; i++) {
        grant_verdict *v = NULL;
        grant_check_fs(g->p, ex->v[i].op, ex->v[i].path, NULL, &v);
        dump_line(f, g, ops[ex->v[i].op], ex->v[i].path, v);
    }
    for (size_t i = 0; i < e->n; i++) {
        grant_verdict *v = NULL;
        const exec_query *x = &e->v[i];
        grant_check_exec(g->p, (const char *const *)x->argv, 0, g->path_env, g->cwd, &v);
        dump_line(f, g, "exec", x->argv[0], v);
    }
    if (fclose(f) != 0)
        die(file, errno);
}

/* ---- the table -------------------------------------------------------------------- */

typedef struct gate_case {
    const char *label;
    const char *what;      /* queries */
    pass_fn fn;
    const fs_queries *fs;
    const exec_queries *ex;
    const char *base_label; /* NULL: no baseline */
    pass_fn base;
    double target_rate;     /* decisions/s at least (0: none) */
    double target_ratio;    /* ratio to the baseline at most (0: none) */
    const char *note;       /* printed instead when there is no target */
} gate_case;

static void print_header(const bench_opts *o, const gate_setup *g)
{
    printf("\ngrantkit %s gate benchmark: seed 0x%" PRIx64 ", %zu rules over %zu layers (%zu bytes), "
           "host target%s, %zu queries per pass, %.2f s per measurement, median of passes\n",
           grant_version(), o->seed, g->pol.rules, grant_policy_layer_count(g->p), g->pol.bytes,
           g->implicit ? "" : " --no-implicit", o->queries, o->seconds);
    printf("paths under %s (%zu read, %zu write, %zu deny, %zu readonly regions; %zu names, "
           "%zu files, %zu allow dirs)\n",
           g->root, g->read_regions.n, g->write_regions.n, g->deny_regions.n, g->ro_regions.n,
           g->names.n, g->files.n, g->bin_dirs.n);
    /* Other work on the machine moves these numbers: say how busy it was. */
    FILE *la = fopen("/proc/loadavg", "r");
    char load[64] = "";
    if (la) {
        if (!fgets(load, sizeof(load), la))
            load[0] = '\0';
        fclose(la);
        char *third = load;
        for (int k = 0; k < 3 && third; k++)
            third = strchr(third + (k > 0), ' ');
        if (third)
            *third = '\0'; /* the three averages; not the run queue */
        load[strcspn(load, "\n")] = '\0';
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("load average %s, %ld cpus, single-threaded\n", load[0] ? load : "unknown", cpus);
#if defined(__SANITIZE_ADDRESS__)
    printf("note: built with AddressSanitizer; numbers are not representative\n");
#endif
#if !defined(__OPTIMIZE__)
    printf("note: built without optimisation; numbers are not representative\n");
#endif
    printf("%-14s %-22s %18s %12s %10s %-15s %12s %8s %s\n", "case", "queries (allow/deny/nf)",
           "decisions/s", "ns/decision", "passes", "baseline", "base ns", "ratio", "target");
}

static void run_case(const gate_case *c, const gate_setup *g, const bench_opts *o)
{
    job j = {g, c->fs, c->ex, 0, 0, 0}, bj = j;
    result r = {0}, br = {0};
    measure(c->fn, &j, c->base, &bj, o->seconds, &r, &br);
    size_t n = c->fs ? c->fs->n : c->ex->n;
    double ns = r.median_s * 1e9 / (double)n, rate = (double)n / r.median_s;
    char mix[48];
    snprintf(mix, sizeof(mix), "%s %zu/%zu/%zu", c->what, j.allowed, j.denied, j.not_found);
    printf("%-14s %-22s %18.0f %12.1f %10zu", c->label, mix, rate, ns, r.runs);
    double ratio = 0;
    if (c->base) {
        double bns = br.median_s * 1e9 / (double)n;
        ratio = br.median_s > 0 ? r.median_s / br.median_s : 0;
        printf(" %-15s %12.1f %7.2fx", c->base_label, bns, ratio);
    } else {
        printf(" %-15s %12s %8s", "-", "-", "-");
    }
    if (c->target_rate > 0)
        printf(" %s %.0f/s\n", rate >= c->target_rate ? "ok   >=" : "OVER <", c->target_rate);
    else if (c->target_ratio > 0)
        printf(" %s %.1fx\n", ratio <= c->target_ratio ? "ok   <=" : "OVER >", c->target_ratio);
    else
        printf(" (%s)\n", c->note ? c->note : "none");
    fflush(stdout);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_gate [--seconds S] [--seed N] [--rules N] [--layers N] [--queries N]\n"
            "                  [--dir DIR] [--only CASE] [--keep] [--dump FILE]\n"
            "  --dir DIR    where to make the temp tree (default /var/tmp; not under an\n"
            "               implicit grant such as /tmp, or --no-implicit is used)\n"
            "  --keep       keep the temp tree and print its path (for perf/callgrind)\n"
            "  --dump FILE  write every query with its verdict as JSON (temp dir as ROOT),\n"
            "               to compare the reasons two builds of the library give\n"
            "cases: fs-fast fs-resolved fs-existing fs-exist-fast exec-query exec-walk\n");
}

int main(int argc, char **argv)
{
    bench_opts o = {.seconds = 1.0, .seed = BENCH_DEFAULT_SEED, .rules = 1000, .layers = 5,
                    .queries = 4096};
    static const struct option longopts[] = {
        {"seconds", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
        {"rules", required_argument, NULL, 'r'},   {"layers", required_argument, NULL, 'l'},
        {"queries", required_argument, NULL, 'q'}, {"dir", required_argument, NULL, 'd'},
        {"only", required_argument, NULL, 'o'},    {"keep", no_argument, NULL, 'k'},
        {"dump", required_argument, NULL, 'D'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': o.seconds = strtod(optarg, NULL); break;
        case 'S': o.seed = strtoull(optarg, NULL, 0); break;
        case 'r': o.rules = strtoul(optarg, NULL, 10); break;
        case 'l': o.layers = strtoul(optarg, NULL, 10); break;
        case 'q': o.queries = strtoul(optarg, NULL, 10); break;
        case 'd': o.dir = optarg; break;
        case 'o': o.only = optarg; break;
        case 'k': o.keep = true; break;
        case 'D': o.dump = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || o.seconds <= 0 || o.rules < 10 * o.layers || o.layers == 0 ||
        o.queries == 0) {
        usage(stderr);
        return 2;
    }

    gate_setup g;
    setup(&g, &o);
    rng r = {o.seed ^ 0x7175657269657321ULL};
    fs_queries resolved, existing;
    exec_queries ex;
    make_resolved_queries(&g, o.queries, &r, &resolved);
    make_existing_queries(&g, o.queries, &r, &existing);
    make_exec_queries(&g, o.queries, &r, &ex);

    int bad = check_fs_paths(&g, &resolved, &existing) + check_exec_paths(&g, &ex);
    if (bad)
        fprintf(stderr, "bench_gate: %d disagreement(s): a gate bug; measuring anyway\n", bad);
    if (o.dump)
        dump_verdicts(o.dump, &g, &resolved, &existing, &ex);

    print_header(&o, &g);
    /* The 2,000,000/s target is the decision's (fs-fast); the 1.3x one
     * the full public check's (fs-existing). The other rows split costs. */
    const gate_case cases[] = {
        {"fs-fast", "canonical", pass_fs_fast, &resolved, NULL, NULL, NULL, FS_TARGET_PER_S, 0,
         NULL},
        {"fs-resolved", "canonical", pass_fs_resolved, &resolved, NULL, "fs-fast", pass_fs_fast,
         0, 0, "public call: verdict strings"},
        {"fs-existing", "existing", pass_fs_check, &existing, NULL, "realpath(buf)",
         pass_realpath, 0, FS_TARGET_RATIO, NULL},
        {"fs-exist-fast", "existing", pass_fs_exist_fast, &existing, NULL, "realpath(buf)",
         pass_realpath, 0, 0, "resolution + decision, no verdict"},
        {"exec-query", "identities", pass_exec_query, NULL, &ex, "exec-fast", pass_exec_fast, 0,
         0, "no target"},
        {"exec-walk", "argv", pass_exec_walk, NULL, &ex, "PATH walk", pass_walk_only, 0, 0,
         "no target"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!o.only || strstr(cases[i].label, o.only))
            run_case(&cases[i], &g, &o);
    if (o.keep)
        printf("kept %s\n", bench_root);

    fs_queries_free(&resolved);
    fs_queries_free(&existing);
    exec_queries_free(&ex);
    setup_free(&g);
    return bad ? 1 : 0; /* the temp tree goes at exit (cleanup_root) */
}
