/* gen_policy.c - deterministic grant policies for benchmarks.
 *
 * Targets are drawn from pools shared by all layers, so layers overlap the
 * way real stacks do (several layers naming `git` or ~/src), but each file
 * uses a pool entry at most once: within one file no target gets two
 * verdicts, which the compiler would reject.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gen_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* splitmix64: tiny, fast and fully determined by the seed. */
typedef struct gen_rng {
    uint64_t s;
} gen_rng;

static uint64_t rng_next(gen_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t rng_below(gen_rng *r, size_t n)
{
    return (size_t)(rng_next(r) % n);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

/* A pool of indices; `used` marks those taken in the current file. */
typedef struct gen_pool {
    bool *used;
    size_t size;
} gen_pool;

static void pool_init(gen_pool *p, size_t size)
{
    p->size = size;
    p->used = xcalloc(size, sizeof(bool));
}

static void pool_reset(gen_pool *p)
{
    memset(p->used, 0, p->size * sizeof(bool));
}

/* Pools are sized well above one file's draws, so probing ends quickly. */
static size_t pool_take(gen_pool *p, gen_rng *r)
{
    for (;;) {
        size_t i = rng_below(r, p->size);
        if (!p->used[i]) {
            p->used[i] = true;
            return i;
        }
    }
}

static const char *const subcmd_words[] = {
    "log", "status", "diff", "show", "add", "commit", "push", "fetch",
    "build", "run", "test", "fmt", "check", "clean", "install", "update",
};
#define N_SUBCMDS (sizeof(subcmd_words) / sizeof(subcmd_words[0]))

typedef enum rule_kind {
    R_ALLOW_NAMES, R_ALLOW_SUBCMDS, R_ALLOW_FILE, R_ALLOW_FILE_SUBCMDS, R_ALLOW_DIR,
    R_DENY_NAMES, R_DENY_FILE, R_DENY_DIR, R_DENY_MATCH,
    R_FS_READ, R_FS_WRITE, R_FS_READONLY, R_FS_DENY,
    R_COUNT
} rule_kind;

/* Per mille: half exec, half fs; mostly names and plain regions, as in
 * hand-written policies. */
static const unsigned rule_weights[R_COUNT] = {
    [R_ALLOW_NAMES] = 200, [R_ALLOW_SUBCMDS] = 80, [R_ALLOW_FILE] = 50,
    [R_ALLOW_FILE_SUBCMDS] = 20, [R_ALLOW_DIR] = 30, [R_DENY_NAMES] = 80,
    [R_DENY_FILE] = 20, [R_DENY_DIR] = 15, [R_DENY_MATCH] = 5,
    [R_FS_READ] = 200, [R_FS_WRITE] = 120, [R_FS_READONLY] = 60, [R_FS_DENY] = 120,
};

static rule_kind pick_kind(gen_rng *r)
{
    unsigned x = (unsigned)rng_below(r, 1000);
    for (int k = 0; k < R_COUNT; k++) {
        if (x < rule_weights[k])
            return (rule_kind)k;
        x -= rule_weights[k];
    }
    return R_FS_READ;
}

static bool is_exec_kind(rule_kind k)
{
    return k <= R_DENY_MATCH;
}

/* 70% of rules name one target, the rest two to four. */
static size_t pick_ntargets(gen_rng *r)
{
    return rng_below(r, 10) < 7 ? 1 : 2 + rng_below(r, 3);
}

typedef struct gen_pools {
    gen_pool names, files, dirs, patterns, paths;
} gen_pools;

static void emit_subcmds(FILE *f, gen_rng *r)
{
    bool taken[N_SUBCMDS] = {false};
    size_t n = 1 + rng_below(r, 4);
    fputs(" [", f);
    for (size_t i = 0; i < n; i++) {
        size_t w;
        do
            w = rng_below(r, N_SUBCMDS);
        while (taken[w]);
        taken[w] = true;
        fprintf(f, "%s%s", i ? " " : "", subcmd_words[w]);
    }
    fputc(']', f);
}

/* A path is PREFIX, the pool index, SUFFIX. */
typedef struct path_shape {
    const char *pre, *post;
} path_shape;

static const path_shape read_shapes[] = {
    {"/srv/data/d", ""}, {"~/src/p", ""}, {"/usr/share/bench/s", ""}, {"xdg:config/app", ""},
};
static const path_shape write_shapes[] = {
    {"cwd:/out/o", ""}, {"tempdir:/t", ""}, {"~/work/w", ""}, {"xdg:cache/c", ""},
};
static const path_shape readonly_shapes[] = {
    {"cwd:/out/o", "/.grant"}, {"~/work/w", "/.config"}, {"/srv/data/d", "/ro"},
};
static const path_shape deny_shapes[] = {
    {"~/.secret/k", ""}, {"cwd:/out/o", "/.git/config"}, {"/etc/bench/e", ""},
};

/* root: prefix of every absolute path ("" for none); sigil paths (~, cwd:,
 * tempdir:, xdg:) follow the context, so they take none. */
static void emit_fs_path(FILE *f, rule_kind k, size_t i, const char *root)
{
    const path_shape *shape;
    switch (k) {
    case R_FS_READ: shape = &read_shapes[i % 4]; break;
    case R_FS_WRITE: shape = &write_shapes[i % 4]; break;
    case R_FS_READONLY: shape = &readonly_shapes[i % 3]; break;
    default: shape = &deny_shapes[i % 3]; break;
    }
    fprintf(f, "%s%s%05zu%s", shape->pre[0] == '/' ? root : "", shape->pre, i, shape->post);
}

static void emit_rule(FILE *f, rule_kind k, gen_rng *r, gen_pools *p, const char *root)
{
    size_t n = pick_ntargets(r);
    fputs("        ", f);
    switch (k) {
    case R_ALLOW_NAMES:
    case R_DENY_NAMES:
        fputs(k == R_ALLOW_NAMES ? "allow" : "deny ", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, " tool%05zu", pool_take(&p->names, r));
        break;
    case R_ALLOW_SUBCMDS:
        fprintf(f, "allow tool%05zu", pool_take(&p->names, r));
        emit_subcmds(f, r);
        break;
    case R_ALLOW_FILE:
    case R_DENY_FILE:
        fputs(k == R_ALLOW_FILE ? "allow" : "deny ", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, " %s/opt/tools/bin/t%05zu", root, pool_take(&p->files, r));
        break;
    case R_ALLOW_FILE_SUBCMDS:
        fprintf(f, "allow %s/opt/tools/bin/t%05zu", root, pool_take(&p->files, r));
        emit_subcmds(f, r);
        break;
    case R_ALLOW_DIR:
        fputs("allow", f);
        for (size_t i = 0; i < n; i++) {
            size_t d = pool_take(&p->dirs, r);
            if (d % 2)
                fprintf(f, " %s/opt/pkg%05zu/bin/", root, d);
            else
                fprintf(f, " xdg:data/pkg%05zu/bin/", d);
        }
        break;
    case R_DENY_DIR:
        fputs("deny ", f);
        for (size_t i = 0; i < n; i++)
            fprintf(f, " %s/opt/bad%05zu/bin/", root, pool_take(&p->dirs, r));
        break;
    case R_DENY_MATCH:
        fprintf(f, "deny  match \"^bad%05zu-[a-z]+[0-9]*$\"", pool_take(&p->patterns, r));
        break;
    case R_FS_READ:
    case R_FS_WRITE:
    case R_FS_READONLY:
    case R_FS_DENY: {
        static const char *const kw[] = {"read    ", "write   ", "readonly", "deny    "};
        fputs(kw[k - R_FS_READ], f);
        for (size_t i = 0; i < n; i++) {
            fputc(' ', f);
            emit_fs_path(f, k, pool_take(&p->paths, r), root);
        }
        break;
    }
    default:
        abort();
    }
    fputs(";\n", f);
}

/* The rules every layer of a `shared` stack starts with: broad regions
 * and one bin dir that the layers' own rules refine, as the base policies
 * a real stack includes do. Without them almost no query would pass five
 * independently drawn layers. */
#define GEN_SHARED_RULES 3

static void emit_shared_exec(FILE *f, const char *root)
{
    fprintf(f, "        allow    %s/usr/bin/;\n", root);
}

static void emit_shared_fs(FILE *f, const char *root)
{
    fprintf(f, "        read     ~ %s/srv/data %s/usr/share/bench %s/etc/bench;\n", root, root, root);
    fputs("        write    cwd:/out tempdir: ~/work xdg:cache;\n", f);
}

void gen_policy_layers(uint64_t seed, size_t rules, size_t layers, gen_policy *out)
{
    gen_policy_layers_opts(seed, rules, layers, NULL, out);
}

void gen_policy_layers_opts(uint64_t seed, size_t rules, size_t layers, const gen_opts *opts,
                            gen_policy *out)
{
    static const gen_opts defaults = {NULL, false};
    if (!opts)
        opts = &defaults;
    const char *root = opts->root ? opts->root : "";
    memset(out, 0, sizeof(*out));
    if (layers == 0)
        layers = 1;
    out->files = xcalloc(layers, sizeof(gen_file));
    out->nfiles = layers;

    /* Up to four targets per rule: pools at 4x one file's worst case keep
     * pool_take fast and still let layers share entries. */
    size_t per_file = rules / layers + 1;
    size_t pool = 4 * 4 * per_file + 64;
    gen_pools p;
    pool_init(&p.names, pool);
    pool_init(&p.files, pool);
    pool_init(&p.dirs, pool);
    pool_init(&p.patterns, pool);
    pool_init(&p.paths, pool);
    gen_rng r = {seed};

    for (size_t l = 0; l < layers; l++) {
        gen_file *gf = &out->files[l];
        size_t quota = rules / layers + (l < rules % layers ? 1 : 0);
        size_t shared = opts->shared ? GEN_SHARED_RULES : 0;
        size_t drawn = quota > shared ? quota - shared : 0;
        if (l == 0)
            gf->name = strdup("policy.grant");
        else if (asprintf(&gf->name, "layer%zu.grant", l) < 0)
            gf->name = NULL;
        if (!gf->name)
            abort();
        pool_reset(&p.names);
        pool_reset(&p.files);
        pool_reset(&p.dirs);
        pool_reset(&p.patterns);
        pool_reset(&p.paths);

        /* Draw every rule first, then print exec rules and fs rules in
         * their sections, so the file reads like a hand-written one. */
        rule_kind *kinds = xcalloc(drawn, sizeof(rule_kind));
        for (size_t i = 0; i < drawn; i++)
            kinds[i] = pick_kind(&r);

        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
            abort();
        if (l == 0)
            fputs("# generated by bench/gen_policy.c\ngrant bench {\n", f);
        else
            fprintf(f, "# generated by bench/gen_policy.c\ngrant layer%zu {\n", l);
        if (l == 0)
            for (size_t j = 1; j < layers; j++)
                fprintf(f, "    include \"./layer%zu.grant\";\n", j);
        fputs("    exec {\n", f);
        if (shared)
            emit_shared_exec(f, root);
        for (size_t i = 0; i < drawn; i++)
            if (is_exec_kind(kinds[i]))
                emit_rule(f, kinds[i], &r, &p, root);
        fputs("    }\n    fs {\n", f);
        if (shared)
            emit_shared_fs(f, root);
        for (size_t i = 0; i < drawn; i++)
            if (!is_exec_kind(kinds[i]))
                emit_rule(f, kinds[i], &r, &p, root);
        fputs("    }\n", f);
        if (l == 0)
            fputs("    net deny;\n    shell { chdir allow; }\n", f);
        else if (l == 1)
            fputs("    editor { read allow; write allow; tui deny; }\n", f);
        fputs("}\n", f);
        /* open_memstream publishes buf and len only at fclose. */
        if (fclose(f) != 0)
            abort();
        gf->text = buf;
        gf->len = len;
        gf->rules = drawn + shared;
        out->rules += drawn + shared;
        out->bytes += gf->len;
        free(kinds);
    }
    free(p.names.used);
    free(p.files.used);
    free(p.dirs.used);
    free(p.patterns.used);
    free(p.paths.used);
}

/* 30 rules: 15 exec, 15 fs. */
static const char typical_policy[] =
    "# a typical agent policy, in the style of the spec's example\n"
    "grant agent {\n"
    "    exec {\n"
    "        allow make cmake ninja cargo rustc;\n"
    "        allow rg fd ls cat head tail wc sort uniq diff;\n"
    "        allow grep sed awk jq;\n"
    "        allow git [log status diff show add commit];\n"
    "        allow npm [install ci run test];\n"
    "        allow docker [ps images logs];\n"
    "        allow /usr/bin/;\n"
    "        allow /usr/local/bin/;\n"
    "        allow ~/.cargo/bin/;\n"
    "        deny  bash sh zsh dash fish;\n"
    "        deny  sudo su doas pkexec;\n"
    "        deny  curl wget nc;\n"
    "        deny  match \"^python[0-9.]*$\";\n"
    "        deny  xdg:bin/;\n"
    "        deny  /usr/bin/ssh;\n"
    "    }\n"
    "    fs {\n"
    "        read     ~/project /usr /etc /opt;\n"
    "        read     ~/.cargo ~/.rustup;\n"
    "        read     xdg:config/git;\n"
    "        read     /srv/shared;\n"
    "        write    cwd: tempdir:;\n"
    "        write    xdg:cache/cargo;\n"
    "        write    ~/project/target;\n"
    "        readonly cwd:/.grant;\n"
    "        readonly cwd:/.git/hooks;\n"
    "        readonly ~/project/Cargo.lock;\n"
    "        deny     ~/.ssh ~/.aws ~/.gnupg;\n"
    "        deny     cwd:/.git/config;\n"
    "        deny     cwd:/.env;\n"
    "        deny     /etc/shadow /etc/sudoers;\n"
    "        deny     xdg:config/gh;\n"
    "    }\n"
    "    net deny;\n"
    "    shell { chdir allow; }\n"
    "    editor { read allow; write allow; tui deny; }\n"
    "}\n";

void gen_policy_typical(gen_policy *out)
{
    memset(out, 0, sizeof(*out));
    out->files = xcalloc(1, sizeof(gen_file));
    out->nfiles = 1;
    gen_file *gf = &out->files[0];
    gf->name = strdup("agent.grant");
    gf->text = strdup(typical_policy);
    if (!gf->name || !gf->text)
        abort();
    gf->len = sizeof(typical_policy) - 1;
    gf->rules = 30;
    out->rules = gf->rules;
    out->bytes = gf->len;
}

int gen_policy_write(const gen_policy *p, const char *dir)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, p->files[i].name) < 0)
            abort();
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        free(path);
        if (fd < 0)
            return -errno;
        const char *s = p->files[i].text;
        size_t left = p->files[i].len;
        while (left > 0) {
            ssize_t w = write(fd, s, left);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                int e = errno;
                close(fd);
                return -e;
            }
            s += w;
            left -= (size_t)w;
        }
        if (close(fd) != 0)
            return -errno;
    }
    return 0;
}

void gen_policy_free(gen_policy *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        free(p->files[i].name);
        free(p->files[i].text);
    }
    free(p->files);
    memset(p, 0, sizeof(*p));
}
