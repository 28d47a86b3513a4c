/* check_completion.c - the bash completion of grantc and grantrun
 * (completion/grantkit.bash.in, built as completion/grantc), driven the
 * way bash drives it: COMP_WORDS and COMP_CWORD set, the function called,
 * COMPREPLY read back. The programs it asks are the build's, so a flag or
 * a value list added to their --help is completed without touching it.
 *
 * A row: the words (the last is the one completed) and the answers that
 * must (and must not) be among the completions.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct row {
    const char *func;
    const char *words[10];
    const char *want[10];
    const char *not_want[4];
} row;

/* "@C" is the build's grantc, "@R" its grantrun, "@PP" policies/tools (a
 * policy path given on the line); the policy path is policies/. */
static const row rows[] = {
    {"_grantc", {"@C", ""}, {"compile", "fmt", "compare", "emit", "check", "audit", "sbpl", "sid"},
     {"--backend"}},
    {"_grantc", {"@C", "co"}, {"compile", "compare"}, {"check"}},
    {"_grantc", {"@C", "emit", "--backend", ""}, {"bwrap", "seatbelt", "appcontainer", "landlock"},
     {"base/minimal.grant"}},
    {"_grantc", {"@C", "compile", "--target", ""}, {"host", "linux", "macos", "windows"}, {NULL}},
    {"_grantc", {"@C", "audit", "--format", ""}, {"text", "json", "sarif"}, {NULL}},
    {"_grantc", {"@C", "fmt", "--to", ""}, {"grant", "yaml"}, {NULL}},
    {"_grantc", {"@C", "compile", "--pre"}, {"--pretty"}, {"--backend"}},
    {"_grantc", {"@C", "emit", "--"}, {"--backend", "--format", "--target", "--home"}, {NULL}},
    {"_grantc", {"@C", "compile", "base/"},
     {"base/minimal.grant", "base/reasonable.grant", "base/reasonable.yaml", "base/locked.grant"},
     {"tools/git.grant"}},
    {"_grantc", {"@C", "check", "agent/"}, {"agent/coding.grant", "agent/protect.grant"}, {NULL}},
    {"_grantc", {"@C", "compile", "--policy-path", "@PP", ""}, {"git.grant", "cargo.grant"},
     {"base/minimal.grant", "tools/git.grant"}},
    {"_grantc", {"@C", "check", "a.grant", "--", ""}, {"exec", "read", "write", "gate"}, {NULL}},
    {"_grantc", {"@C", "check", "a.grant", "--", "gate", ""},
     {"shell.chdir", "editor.read", "editor.write", "editor.tui"}, {NULL}},
    {"_grantc", {"@C", "sbpl", ""}, {"eval", "lint"}, {NULL}},
    {"_grantc", {"@C", "sid", ""}, {"capability", "appcontainer"}, {NULL}},
    {"_grantrun", {"@R", "-p", "tools/"},
     {"tools/git.grant", "tools/cargo.grant", "tools/node.grant", "tools/python.grant"}, {NULL}},
    {"_grantrun", {"@R", "-p", "x.grant", "--extend", "tools/g"}, {"tools/git.grant", "tools/go.grant"},
     {"tools/node.grant"}},
    {"_grantrun", {"@R", "--ti"}, {"--timeout"}, {NULL}},
    {"_grantrun", {"@R", "-p", "x.grant", "--"}, {"--timeout", "--env", "--dry-run", "--bwrap"}, {NULL}},
    {"_grantrun", {"@R", "-p", "x.grant", "--", "mak"}, {"make"}, {"--timeout"}},
};
#define NROWS (sizeof rows / sizeof rows[0])

START_TEST(completes)
{
    const row *r = &rows[_i];
    gk_autofree char *script = gk_printf("%s/completion/grantc", gk_test_builddir());
    ck_assert_msg(access(script, R_OK) == 0, "%s not built", script);
    gk_autofree char *grantc = gk_printf("%s/grantc", gk_test_builddir());
    gk_autofree char *grantrun = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *pp = gk_test_path("policies/tools");
    gk_autofree char *lib = gk_test_path("policies");
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", lib, 1), 0);
    gk_strvec v = {0};
    gk_strvec_push(&v, "/bin/bash");
    gk_strvec_push(&v, "--norc");
    gk_strvec_push(&v, "-c");
    gk_strvec_push(&v, "source \"$1\" || exit 99; f=$2; shift 2; COMP_WORDS=(\"$@\"); "
                       "COMP_CWORD=$(($# - 1)); \"$f\"; printf '%s\\n' \"${COMPREPLY[@]}\"");
    gk_strvec_push(&v, "bash");
    gk_strvec_push(&v, script);
    gk_strvec_push(&v, r->func);
    gk_buf line = {0};
    for (size_t i = 0; r->words[i]; i++) {
        const char *w = strcmp(r->words[i], "@C") == 0    ? grantc
                        : strcmp(r->words[i], "@R") == 0  ? grantrun
                        : strcmp(r->words[i], "@PP") == 0 ? pp
                                                          : r->words[i];
        gk_strvec_push(&v, w);
        gk_buf_printf(&line, "%s'%s'", i ? " " : "", r->words[i]);
    }
    gk_strvec_push_take(&v, NULL);
    char *out = NULL, *err = NULL;
    int st = gk_test_run(v.v, NULL, &out, &err);
    ck_assert_msg(st == 0, "%s: exit %d: %s", line.data, st, err);
    gk_autofree char *got = gk_printf("\n%s", out);
    for (size_t i = 0; r->want[i]; i++) {
        gk_autofree char *w = gk_printf("\n%s\n", r->want[i]);
        ck_assert_msg(strstr(got, w), "%s: no '%s' among:%s", line.data, r->want[i], got);
    }
    for (size_t i = 0; r->not_want[i]; i++) {
        gk_autofree char *w = gk_printf("\n%s\n", r->not_want[i]);
        ck_assert_msg(!strstr(got, w), "%s: '%s' among:%s", line.data, r->not_want[i], got);
    }
    free(out);
    free(err);
    gk_buf_free(&line);
    gk_strvec_free(&v);
}
END_TEST

static Suite *completion_suite(void)
{
    Suite *s = suite_create("completion");
    TCase *t = tcase_create("bash");
    tcase_add_loop_test(t, completes, 0, (int)NROWS);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(completion_suite());
}
