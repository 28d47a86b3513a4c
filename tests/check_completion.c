/* check_completion.c - the bash and zsh completions of grantc and grantrun.
 *
 * bash (completion/grantkit.bash.in, built as completion/grantc) is driven
 * the way bash drives it: COMP_WORDS and COMP_CWORD set, the function
 * called, COMPREPLY read back. zsh (completion/grantkit.zsh.in, built as
 * completion/_grantc and _grantrun) is driven by a real line editor:
 * tests/zsh_complete.zsh types the words into an interactive `zsh -f` with
 * compinit on a pseudo-terminal, presses TAB and reads back every match
 * the completion added; the #compdef lines must have assigned the two
 * functions. Without zsh its cases are skipped with a line saying so.
 * The programs both ask are the build's, so a flag or a value list added
 * to their --help is completed without touching either.
 *
 * A row: the words (the last is the one completed) and the answers that
 * must (and must not) be among the completions. Both shells run every row
 * of rows[]; zsh_rows[] are what only zsh offers.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    {"_grantc", {"@C", "check", "a.grant", "--", ""}, {"exec", "read", "write", "gate", "connect"},
     {NULL}},
    {"_grantc", {"@C", "check", "a.grant", "--", "gate", ""},
     {"shell.chdir", "editor.read", "editor.write", "editor.tui", "net"}, {NULL}},
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

/* zsh also completes "--opt=VALUE" in one word, and runs the command's
 * own completion after grantrun's "--" and grantc check's "-- exec CMD". */
static const row zsh_rows[] = {
    {"_grantc", {"@C", "audit", "--format="}, {"text", "json", "sarif"}, {NULL}},
    {"_grantc", {"@C", "emit", "--backend=land"}, {"landlock"}, {"bwrap"}},
    {"_grantc", {"@C", "check", "a.grant", "--", "exec", "git", "com"}, {"commit"}, {NULL}},
    {"_grantc", {"@C", "compile", "--policy-path=@PP", ""}, {"git.grant"}, {"base/minimal.grant"}},
    {"_grantrun", {"@R", "--level", ""}, {"auto", "namespaces", "landlock"}, {NULL}},
    {"_grantrun", {"@R", "-p", "x.grant", "--", "git", "com"}, {"commit"}, {"compile"}},
};
#define NZSH_ROWS (sizeof zsh_rows / sizeof zsh_rows[0])

/* The row's words with "@C", "@R" and "@PP" replaced, pushed onto v and
 * written into line (quoted, for the messages). */
static void push_words(gk_strvec *v, gk_buf *line, const row *r)
{
    gk_autofree char *grantc = gk_printf("%s/grantc", gk_test_builddir());
    gk_autofree char *grantrun = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *pp = gk_test_path("policies/tools");
    for (size_t i = 0; r->words[i]; i++) {
        const char *w = r->words[i];
        const char *at = strstr(w, "@PP");
        if (strcmp(w, "@C") == 0)
            gk_strvec_push(v, grantc);
        else if (strcmp(w, "@R") == 0)
            gk_strvec_push(v, grantrun);
        else if (at)
            gk_strvec_push_take(v, gk_printf("%.*s%s%s", (int)(at - w), w, pp, at + 3));
        else
            gk_strvec_push(v, w);
        gk_buf_printf(line, "%s'%s'", i ? " " : "", w);
    }
    gk_strvec_push_take(v, NULL);
}

/* Run argv, then hold its matches (one a line on stdout) to the row;
 * also, when not NULL, is one more line the output must have. */
static void expect(char *const argv[], const row *r, const char *also, const char *shell,
                   const char *line)
{
    char *out = NULL, *err = NULL;
    int st = gk_test_run(argv, NULL, &out, &err);
    ck_assert_msg(st == 0, "%s %s: exit %d: %s", shell, line, st, err);
    gk_autofree char *got = gk_printf("\n%s", out);
    gk_autofree char *also_line = also ? gk_printf("\n%s\n", also) : NULL;
    ck_assert_msg(!also || strstr(got, also_line), "%s %s: no '%s' in:%s", shell, line, also, got);
    for (size_t i = 0; r->want[i]; i++) {
        gk_autofree char *w = gk_printf("\n%s\n", r->want[i]);
        ck_assert_msg(strstr(got, w), "%s %s: no '%s' among:%s", shell, line, r->want[i], got);
    }
    for (size_t i = 0; r->not_want[i]; i++) {
        gk_autofree char *w = gk_printf("\n%s\n", r->not_want[i]);
        ck_assert_msg(!strstr(got, w), "%s %s: '%s' among:%s", shell, line, r->not_want[i], got);
    }
    free(out);
    free(err);
}

static void set_policy_path(void)
{
    gk_autofree char *lib = gk_test_path("policies");
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", lib, 1), 0);
}

START_TEST(bash_completes)
{
    const row *r = &rows[_i];
    gk_autofree char *script = gk_printf("%s/completion/grantc", gk_test_builddir());
    ck_assert_msg(access(script, R_OK) == 0, "%s not built", script);
    set_policy_path();
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
    push_words(&v, &line, r);
    expect(v.v, r, NULL, "bash", line.data);
    gk_buf_free(&line);
    gk_strvec_free(&v);
}
END_TEST

/* The zsh the suite drives: the first on PATH, else NULL. */
static char *find_zsh(void)
{
    const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
    gk_autofree char *copy = gk_strdup(path);
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *z = gk_printf("%s/zsh", d);
        if (access(z, X_OK) == 0)
            return z;
        free(z);
    }
    return NULL;
}

static void zsh_case(const row *r)
{
    gk_buf line = {0};
    gk_strvec v = {0};
    gk_autofree char *zsh = find_zsh();
    gk_autofree char *dir = gk_printf("%s/completion", gk_test_builddir());
    gk_autofree char *fn = gk_printf("%s/%s", dir, r->func);
    gk_autofree char *driver = gk_test_path("tests/zsh_complete.zsh");
    if (!zsh) {
        fprintf(stderr, "SKIP zsh completion: no zsh on PATH (./build.sh check installs it)\n");
        return;
    }
    ck_assert_msg(access(fn, R_OK) == 0, "%s not built", fn);
    set_policy_path();
    /* A completion that never returns fails the row instead of the suite
     * waiting for check's timeout. */
    gk_strvec_push(&v, "/usr/bin/timeout");
    gk_strvec_push(&v, "30");
    gk_strvec_push(&v, zsh);
    gk_strvec_push(&v, "-f");
    gk_strvec_push(&v, driver);
    gk_strvec_push(&v, dir);
    push_words(&v, &line, r);
    /* compinit assigned the functions from their #compdef lines */
    expect(v.v, r, "compdef grantc=_grantc grantrun=_grantrun", "zsh", line.data);
    gk_buf_free(&line);
    gk_strvec_free(&v);
}

START_TEST(zsh_completes)
{
    zsh_case(&rows[_i]);
}
END_TEST

START_TEST(zsh_only)
{
    zsh_case(&zsh_rows[_i]);
}
END_TEST

static Suite *completion_suite(void)
{
    Suite *s = suite_create("completion");
    TCase *t = tcase_create("bash");
    tcase_add_loop_test(t, bash_completes, 0, (int)NROWS);
    suite_add_tcase(s, t);
    TCase *z = tcase_create("zsh");
    tcase_add_loop_test(z, zsh_completes, 0, (int)NROWS);
    tcase_add_loop_test(z, zsh_only, 0, (int)NZSH_ROWS);
    tcase_set_timeout(z, 60);
    suite_add_tcase(s, z);
    return s;
}

int main(void)
{
    return gk_test_main(completion_suite());
}
