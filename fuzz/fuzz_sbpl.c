/* fuzz_sbpl.c - libFuzzer target for the SBPL reader and evaluator.
 *
 * bytes -> grant_sbpl_read_buffer (imports off: the fuzzer never opens a
 * file) -> every diagnostic rendered -> grant_sbpl_lint -> a fixed set of
 * queries over every kind of operation and argument. Invariants (a broken
 * one is an abort(), so libFuzzer keeps the input):
 *   - a read that fails reports an error; one that succeeds reports none;
 *   - every answer has a verdict, an origin and a rule, and its line lies
 *     within the source (or is 0 for the implicit default);
 *   - answering is deterministic: the same query twice gives the same JSON;
 *   - a '*' query is allowed only if each operation below it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sbpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void fail(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "\n==== grantkit fuzz_sbpl invariant broken: %s\n---- input\n%.*s\n====\n",
            what, (int)size, (const char *)data);
    abort();
}

static void render_all(const grant_diags *d)
{
    for (size_t i = 0; i < grant_diags_count(d); i++) {
        char *s = grant_diags_render(d, i);
        char *l = grant_diags_location(d, i);
        if (!s)
            abort();
        free(s);
        free(l);
    }
}

static const struct {
    const char *op, *arg, *vnode;
} queries[] = {
    {"file-read-data", "/Users/u/a", NULL},
    {"file-read-metadata", "/", NULL},
    {"file-write-data", "/w/.git/config", NULL},
    {"file-write-create", "/w/x", "REGULAR-FILE"},
    {"file-read-data", "/private/tmp/d", "DIRECTORY"},
    {"file-link", "/w/a", NULL},
    {"process-exec", "/bin/sh", NULL},
    {"process-fork", NULL, NULL},
    {"network-outbound", "localhost:80", NULL},
    {"network-outbound", "udp:8.8.8.8:53", NULL},
    {"network-outbound", "[::1]:9000", NULL},
    {"network-bind", "/private/var/run/s", NULL},
    {"mach-lookup", "com.apple.system.logger", NULL},
    {"mach-lookup", "local:com.example", NULL},
    {"sysctl-read", "kern.osrelease", NULL},
    {"signal", "self", NULL},
    {"process-info-pidinfo", "others", NULL},
    {"pseudo-tty", NULL, NULL},
};

static grant_sbpl_answer *ask(const grant_sbpl *s, const char *op, const char *arg,
                              const char *vnode, const uint8_t *data, size_t size)
{
    grant_sbpl_answer *a = NULL;
    if (grant_sbpl_eval(s, op, arg, vnode, NULL, &a) != 0 || !a)
        fail("a well-formed query was refused", data, size);
    grant_sbpl_verdict v = grant_sbpl_answer_verdict(a);
    if (v != GRANT_SBPL_ALLOW && v != GRANT_SBPL_DENY && v != GRANT_SBPL_UNDECIDED)
        fail("answer without a verdict", data, size);
    if (!grant_sbpl_answer_origin(a) || !grant_sbpl_answer_rule(a) ||
        !grant_sbpl_answer_operation(a))
        fail("answer without origin, rule or operation", data, size);
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const params[] = {"HOME=/Users/u", "ROOT=/w", "IMPORT_DIR=/nonexistent"};
    grant_diags *d = grant_diags_new();
    grant_sbpl *s = NULL;
    int rc = grant_sbpl_read_buffer("fuzz.sb", (const char *)data, size, params, 3,
                                    GRANT_SBPL_NO_IMPORT, d, &s);
    render_all(d);
    if ((rc == 0) != (grant_diags_errors(d) == 0))
        fail("read status and errors disagree", data, size);
    if (rc == 0) {
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        grant_diags *f = grant_diags_new();
        size_t n = grant_sbpl_lint(s, f);
        if (n != grant_diags_count(f))
            fail("lint count differs from its findings", data, size);
        render_all(f);
        grant_diags_free(f);
        for (size_t i = 0; i < sizeof(queries) / sizeof(*queries); i++) {
            const char *op = queries[i].op, *arg = queries[i].arg, *vn = queries[i].vnode;
            grant_sbpl_answer *a = ask(s, op, arg, vn, data, size);
            grant_sbpl_answer *b = ask(s, op, arg, vn, data, size);
            if (grant_sbpl_answer_line(a) > lines)
                fail("answer line beyond the source", data, size);
            char *ja = grant_sbpl_answer_json(a), *jb = grant_sbpl_answer_json(b);
            if (!ja || !jb || strcmp(ja, jb) != 0)
                fail("the same query answered twice differently", data, size);
            free(ja);
            free(jb);
            grant_sbpl_answer_free(a);
            grant_sbpl_answer_free(b);
        }
        /* file-read* allows only if each leaf below it does. */
        static const char *const leaves[] = {"file-read-data", "file-read-metadata",
                                             "file-read-xattr"};
        grant_sbpl_answer *w = ask(s, "file-read*", "/Users/u/a", NULL, data, size);
        bool all = true;
        for (size_t i = 0; i < 3; i++) {
            grant_sbpl_answer *a = ask(s, leaves[i], "/Users/u/a", NULL, data, size);
            all &= grant_sbpl_answer_verdict(a) == GRANT_SBPL_ALLOW;
            grant_sbpl_answer_free(a);
        }
        if ((grant_sbpl_answer_verdict(w) == GRANT_SBPL_ALLOW) != all)
            fail("a '*' query disagrees with the operations below it", data, size);
        grant_sbpl_answer_free(w);
    }
    grant_sbpl_free(s);
    grant_diags_free(d);
    return 0;
}
