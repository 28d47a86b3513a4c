/* gen_policy.h - deterministic grant policies for benchmarks.
 *
 * A generated policy is a set of .grant files held in memory: file 0 is the
 * top file, which includes every other file with a "./" include, so
 * compiling file 0 yields one layer per file.
 *
 * Ownership: a gen_policy owns its files (free with gen_policy_free).
 */
#ifndef GK_BENCH_GEN_POLICY_H
#define GK_BENCH_GEN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gen_file {
    char *name; /* file name, no directory ("policy.grant") */
    char *text;
    size_t len;
    size_t rules; /* exec and fs rule statements in this file */
} gen_file;

typedef struct gen_policy {
    gen_file *files;
    size_t nfiles;
    size_t rules; /* total over all files */
    size_t bytes; /* total over all files */
} gen_policy;

/* `rules` rules (about half exec, half fs: names, files, dirs, subcommand
 * lists, patterns, read/write/readonly/deny) spread evenly over `layers`
 * files. The same seed always gives the same bytes. Every file compiles
 * without errors (no target is given two verdicts within one file). */
void gen_policy_layers(uint64_t seed, size_t rules, size_t layers, gen_policy *out);

/* Variations for benchmarks that look at the paths (bench_gate). */
typedef struct gen_opts {
    /* Prefix of every absolute path the rules name (/srv/data/..,
     * /opt/tools/bin/.., /opt/pkg../bin/), so that a benchmark can create
     * them under a temp dir; sigil paths follow the freeze context. NULL or
     * "": none (gen_policy_layers). Must not end in '/'. */
    const char *root;
    /* Every layer starts with three rules all layers share: `allow
     * ROOT/usr/bin/`, `read ~ ROOT/srv/data ROOT/usr/share/bench
     * ROOT/etc/bench` and `write cwd:/out tempdir: ~/work xdg:cache`, which
     * the drawn rules refine. They count towards `rules`. */
    bool shared;
} gen_opts;

/* gen_policy_layers with options (NULL: the defaults, same bytes). */
void gen_policy_layers_opts(uint64_t seed, size_t rules, size_t layers, const gen_opts *opts,
                            gen_policy *out);

/* A typical hand-sized policy of 30 rules, in the style of the spec's
 * example, in one file without includes. */
void gen_policy_typical(gen_policy *out);

/* Write every file into dir (which must exist). Returns 0 or -errno. */
int gen_policy_write(const gen_policy *p, const char *dir);

void gen_policy_free(gen_policy *p);

#endif
