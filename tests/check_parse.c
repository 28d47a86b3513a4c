/* check_parse.c - the grant-language front end: lexer, parser, validation.
 *
 * Error cases are data: every tests/data/parse-errors/NAME.grant (top level;
 * include/ holds files they include) is compiled through the public API
 * with the fixed linux context of testutil (a windows one when its first
 * line is "# target: windows"), must fail, and must print
 * exactly NAME.expected (every diagnostic rendered, joined by newlines, as
 * grantc prints them minus its program prefix). File names in messages are
 * relative to GK_SRCDIR: the test runs there.
 *
 * GK_REGEN=1 rewrites the .expected files from the current output instead
 * of comparing (for a deliberate change; review the diff before committing).
 *
 * Valid files: every .grant in tests/data/grants parses and validates without
 * a diagnostic and compiles; the spec's example yields the AST it should.
 * Unit tables cover the portable regex subset, target classification,
 * string escapes and comments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syntax/syntax.h"
#include "testutil.h"

#define ERR_DIR "tests/data/parse-errors"
#define GRANTS_DIR "tests/data/grants"

static gk_strvec error_cases; /* srcdir-relative paths */
static gk_strvec grant_files;

/* srcdir-relative .grant files directly in dir (not in subdirectories). */
static gk_strvec list_cases(const char *dir)
{
    gk_autofree char *abs = gk_test_path(dir);
    gk_strvec all = gk_test_files(abs, ".grant");
    gk_strvec out = {0};
    size_t prefix = strlen(abs) + 1;
    for (size_t i = 0; i < all.n; i++) {
        const char *rel = all.v[i] + prefix;
        if (strchr(rel, '/'))
            continue;
        gk_strvec_push_take(&out, gk_printf("%s/%s", dir, rel));
    }
    gk_strvec_free(&all);
    return out;
}

static void enter_srcdir(void)
{
    ck_assert_int_eq(chdir(gk_test_srcdir()), 0);
}

/* Parse and validate text named name; returns the AST, diagnostics in *d. */
static gk_file_ast *parse_text(const char *name, const char *text, size_t len, grant_diags **d)
{
    gk_source *src = gk_source_new(name, text, len);
    *d = grant_diags_new();
    gk_file_ast *ast = gk_parse_grant(src, *d);
    ck_assert_ptr_nonnull(ast);
    gk_ast_validate(ast, *d);
    gk_source_unref(src);
    return ast;
}

static gk_file_ast *parse_str(const char *text, grant_diags **d)
{
    return parse_text("t.grant", text, strlen(text), d);
}

static void assert_clean(const char *what, const grant_diags *d)
{
    if (grant_diags_count(d)) {
        gk_autofree char *r = gk_test_render_diags(d);
        ck_abort_msg("%s: unexpected diagnostics:\n%s", what, r);
    }
}

/* ---- error cases (data) -------------------------------------------------- */

/* The fixed linux context, or, for a case whose first line is
 * "# target: windows", a windows one (home C:/Users/u, cwd C:/w, tempdir
 * C:/Temp, PATH C:/Windows/System32). */
static grant_context *error_case_context(const char *path)
{
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    if (!text || !gk_has_prefix(text, "# target: windows\n"))
        return gk_test_context_linux();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:/Users/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "C:/w"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "C:/Temp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows/System32"), 0);
    return ctx;
}

START_TEST(test_error_case)
{
    enter_srcdir();
    const char *path = error_cases.v[_i];
    gk_autofree char *expected_path =
        gk_printf("%.*s.expected", (int)(strlen(path) - strlen(".grant")), path);

    grant_context *ctx = error_case_context(path);
    /* The same directory, spelled relative to GK_SRCDIR (where the test
     * runs) so that messages naming the search path are stable. */
    ck_assert_int_eq(grant_context_set_policy_path(ctx, "tests/data/policy-path"), 0);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int r = grant_compile(ctx, &path, 1, NULL, 0, d, &p);
    gk_autofree char *got = gk_test_render_diags(d);
    ck_assert_msg(r < 0, "%s compiled (r=%d); diagnostics:\n%s", path, r, got);
    ck_assert_ptr_null(p);
    ck_assert_msg(grant_diags_errors(d) > 0, "%s failed without an error", path);

    gk_autofree char *text = gk_printf("%s\n", got);
    gk_test_golden_text(expected_path, text);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* Every .expected belongs to a case (a renamed case must not leave a stale
 * file that is silently never compared). */
START_TEST(test_no_orphan_expected)
{
    enter_srcdir();
    gk_autofree char *abs = gk_test_path(ERR_DIR);
    gk_strvec exp = gk_test_files(abs, ".expected");
    ck_assert_uint_ge(error_cases.n, 35);
    ck_assert_uint_eq(exp.n, error_cases.n);
    for (size_t i = 0; i < exp.n; i++) {
        gk_autofree char *g = gk_printf("%.*s.grant", (int)(strlen(exp.v[i]) - 9), exp.v[i]);
        ck_assert_msg(access(g, R_OK) == 0, "%s has no .grant", exp.v[i]);
    }
    gk_strvec_free(&exp);
}
END_TEST

/* ---- valid files --------------------------------------------------------- */

START_TEST(test_grants_parse)
{
    enter_srcdir();
    const char *path = grant_files.v[_i];
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    ck_assert_ptr_nonnull(text);
    grant_diags *d;
    gk_file_ast *ast = parse_text(path, text, len, &d);
    assert_clean(path, d);
    ck_assert_msg(ast->ncomments > 0, "%s: sample files carry comments (fmt keeps them)", path);
    gk_ast_free(ast);
    grant_diags_free(d);

    grant_context *ctx = gk_test_context_linux();
    grant_diags *d2 = grant_diags_new();
    grant_policy *p = NULL;
    int r = grant_compile(ctx, &path, 1, NULL, 0, d2, &p);
    gk_autofree char *got = gk_test_render_diags(d2);
    ck_assert_msg(r == 0, "%s does not compile:\n%s", path, got);
    ck_assert_uint_eq(grant_diags_errors(d2), 0);
    grant_policy_free(p);
    grant_diags_free(d2);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_spec_example)
{
    enter_srcdir();
    const char *path = GRANTS_DIR "/spec-example.grant";
    size_t len = 0;
    gk_autofree char *text = gk_test_read(path, &len);
    ck_assert_ptr_nonnull(text);
    grant_diags *d;
    gk_file_ast *ast = parse_text(path, text, len, &d);
    assert_clean(path, d);

    ck_assert_str_eq(ast->name.text, "agent");
    ck_assert(!ast->name.quoted);
    ck_assert_uint_eq(ast->grant_loc.start, (uint32_t)(strstr(text, "grant agent") - text));
    ck_assert_uint_eq(ast->nincludes, 1);
    ck_assert_str_eq(ast->includes[0].text, "./minimal.grant");
    ck_assert(ast->includes[0].quoted);
    ck_assert_uint_eq(ast->nextends, 0);

    ck_assert(ast->has_exec);
    ck_assert_uint_eq(ast->nexec, 6);
    static const struct {
        gk_verdict v;
        size_t ntargets;
        gk_target_kind kind;
        const char *first;
        int nsubs; /* -1: no list */
    } ex[] = {
        {GK_ALLOW, 3, GK_T_NAME, "make", -1},    {GK_ALLOW, 1, GK_T_NAME, "git", 4},
        {GK_DENY, 3, GK_T_NAME, "bash", -1},     {GK_DENY, 1, GK_T_MATCH, "^python[0-9.]*$", -1},
        {GK_ALLOW, 1, GK_T_DIR, "/usr/bin/", -1}, {GK_DENY, 1, GK_T_DIR, "xdg:bin/", -1},
    };
    for (size_t i = 0; i < 6; i++) {
        const gk_exec_rule *r = &ast->exec[i];
        ck_assert_int_eq(r->verdict, ex[i].v);
        ck_assert_uint_eq(r->ntargets, ex[i].ntargets);
        ck_assert_int_eq(r->targets[0].kind, ex[i].kind);
        ck_assert_str_eq(r->targets[0].word.text, ex[i].first);
        ck_assert_int_eq(r->has_subcmds, ex[i].nsubs >= 0);
        if (ex[i].nsubs >= 0)
            ck_assert_uint_eq(r->nsubcmds, (size_t)ex[i].nsubs);
        /* A rule's range is its text, verdict through ';'. */
        ck_assert(strncmp(text + r->loc.start, ex[i].v == GK_ALLOW ? "allow" : "deny",
                          ex[i].v == GK_ALLOW ? 5 : 4) == 0);
        ck_assert_int_eq(text[r->loc.end - 1], ';');
    }
    ck_assert_str_eq(ast->exec[1].subcmds[3].text, "show");
    ck_assert_str_eq(ast->exec[2].targets[2].word.text, "zsh");
    /* The word's range covers the token as written, quotes included. */
    const gk_word *pat = &ast->exec[3].targets[0].word;
    ck_assert(pat->quoted);
    ck_assert_int_eq(text[pat->loc.start], '"');
    ck_assert_int_eq(text[pat->loc.end - 1], '"');

    ck_assert(ast->has_fs);
    ck_assert_uint_eq(ast->nfs, 4);
    static const gk_fs_kind kinds[] = {GK_FS_READ, GK_FS_WRITE, GK_FS_READONLY, GK_FS_DENY};
    static const size_t npaths[] = {3, 2, 1, 3};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(ast->fs[i].kind, kinds[i]);
        ck_assert_uint_eq(ast->fs[i].npaths, npaths[i]);
    }
    ck_assert_str_eq(ast->fs[3].paths[2].text, "cwd:/.git/config");

    ck_assert_int_eq(ast->net.value, GK_DENY);
    ck_assert(ast->has_shell);
    ck_assert_int_eq(ast->shell_chdir.value, GK_ALLOW);
    ck_assert(!ast->has_editor);
    ck_assert(!ast->audit);

    /* Comments in source order, '#' through the end of the line. */
    ck_assert_uint_eq(ast->ncomments, 3);
    for (size_t i = 0; i < ast->ncomments; i++) {
        ck_assert_int_eq(text[ast->comments[i].start], '#');
        ck_assert(ast->comments[i].end == len || text[ast->comments[i].end] == '\n');
        if (i)
            ck_assert_uint_gt(ast->comments[i].start, ast->comments[i - 1].end);
    }
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

/* ---- the language in small --------------------------------------------- */

START_TEST(test_keywords_are_names)
{
    grant_diags *d;
    gk_file_ast *ast = parse_str("grant grant {\n"
                                 "  exec {\n"
                                 "    allow allow deny exec;\n"
                                 "    allow docker [exec run, allow];\n"
                                 "    deny \"match\" match \"^x$\";\n"
                                 "  }\n"
                                 "  fs { read /read; deny cwd:/deny; }\n"
                                 "}\n",
                                 &d);
    assert_clean("keywords", d);
    ck_assert_str_eq(ast->name.text, "grant");
    ck_assert_uint_eq(ast->nexec, 3);
    ck_assert_uint_eq(ast->exec[0].ntargets, 3);
    ck_assert_str_eq(ast->exec[0].targets[0].word.text, "allow");
    ck_assert_str_eq(ast->exec[0].targets[2].word.text, "exec");
    ck_assert_uint_eq(ast->exec[1].nsubcmds, 3);
    ck_assert_str_eq(ast->exec[1].subcmds[0].text, "exec");
    ck_assert_str_eq(ast->exec[1].subcmds[2].text, "allow");
    ck_assert_uint_eq(ast->exec[2].ntargets, 2);
    ck_assert_int_eq(ast->exec[2].targets[0].kind, GK_T_NAME);
    ck_assert_str_eq(ast->exec[2].targets[0].word.text, "match");
    ck_assert_int_eq(ast->exec[2].targets[1].kind, GK_T_MATCH);
    ck_assert_str_eq(ast->exec[2].targets[1].word.text, "^x$");
    ck_assert_uint_eq(ast->nfs, 2);
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

START_TEST(test_blocks_merge_and_scalars)
{
    grant_diags *d;
    gk_file_ast *ast = parse_str("grant {\n"
                                 "  exec { allow a; }\n"
                                 "  fs { read /a; }\n"
                                 "  exec { deny b; }\n"
                                 "  exec { }\n"
                                 "  fs { write /b; }\n"
                                 "  net allow; net allow;\n"
                                 "  editor { read allow; write deny; tui allow; }\n"
                                 "  shell { }\n"
                                 "  audit; audit;\n"
                                 "  include \"./x.grant\"; extend \"./y.grant\"; include \"z\";\n"
                                 "}\n",
                                 &d);
    assert_clean("merge", d);
    ck_assert_ptr_null(ast->name.text);
    ck_assert_uint_eq(ast->nexec, 2);
    ck_assert_uint_eq(ast->nfs, 2);
    ck_assert_int_eq(ast->fs[1].kind, GK_FS_WRITE);
    /* The first exec keyword is the section's position. */
    ck_assert_uint_eq(ast->exec_loc.start, 10);
    ck_assert_int_eq(ast->net.value, GK_ALLOW);
    ck_assert_int_eq(ast->editor_read.value, GK_ALLOW);
    ck_assert_int_eq(ast->editor_write.value, GK_DENY);
    ck_assert_int_eq(ast->editor_tui.value, GK_ALLOW);
    ck_assert(ast->has_shell);
    ck_assert_int_eq(ast->shell_chdir.value, GK_UNSET);
    ck_assert(ast->audit);
    ck_assert_uint_eq(ast->nincludes, 2);
    ck_assert_str_eq(ast->includes[1].text, "z");
    ck_assert_uint_eq(ast->nextends, 1);
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

START_TEST(test_strings_and_comments)
{
    const char *text = "grant \"a b\" { # one\n"
                       "  exec { allow \"x\\\\y\\\"z\\n\\t\\x41\\u{e9}\\u{1F600}\" a#b; }#two\n"
                       "  fs { read \"/with space\"  # three\n"
                       "   ; }\n"
                       "}# four";
    grant_diags *d;
    gk_file_ast *ast = parse_str(text, &d);
    assert_clean("strings", d);
    ck_assert_str_eq(ast->name.text, "a b");
    ck_assert(ast->name.quoted);
    ck_assert_str_eq(ast->exec[0].targets[0].word.text, "x\\y\"z\n\tA\xC3\xA9\xF0\x9F\x98\x80");
    ck_assert(ast->exec[0].targets[0].word.quoted);
    ck_assert_str_eq(ast->exec[0].targets[1].word.text, "a#b");
    ck_assert(!ast->exec[0].targets[1].word.quoted);
    ck_assert_str_eq(ast->fs[0].paths[0].text, "/with space");
    ck_assert_uint_eq(ast->ncomments, 4);
    static const char *const want[] = {"# one", "#two", "# three", "# four"};
    for (size_t i = 0; i < 4; i++) {
        const gk_comment *c = &ast->comments[i];
        ck_assert_uint_eq(c->end - c->start, strlen(want[i]));
        ck_assert(memcmp(text + c->start, want[i], strlen(want[i])) == 0);
    }
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

/* A byte order mark is skipped, CRLF line ends are whitespace. */
START_TEST(test_bom_and_crlf)
{
    grant_diags *d;
    gk_file_ast *ast = parse_str("\xEF\xBB\xBFgrant t {\r\n  net deny;\r\n}\r\n", &d);
    assert_clean("bom", d);
    ck_assert_str_eq(ast->name.text, "t");
    ck_assert_uint_eq(ast->grant_loc.start, 3);
    ck_assert_int_eq(ast->net.value, GK_DENY);
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

/* Partial ASTs: every independent error is reported, and what parsed is kept. */
START_TEST(test_recovery_keeps_rules)
{
    grant_diags *d;
    gk_file_ast *ast = parse_str("grant t {\n"
                                 "  exec {\n"
                                 "    allow git\n"
                                 "    deny bash;\n"
                                 "    allow make }\n"
                                 "  fs { raed /x; read /y; }\n"
                                 "  net deny\n"
                                 "}\n",
                                 &d);
    ck_assert_uint_eq(grant_diags_errors(d), 4);
    ck_assert_uint_eq(ast->nexec, 3);
    ck_assert_str_eq(ast->exec[0].targets[0].word.text, "git");
    ck_assert_int_eq(ast->exec[1].verdict, GK_DENY);
    ck_assert_str_eq(ast->exec[2].targets[0].word.text, "make");
    ck_assert_uint_eq(ast->nfs, 1);
    ck_assert_int_eq(ast->net.value, GK_DENY);
    /* In source order. */
    for (size_t i = 1; i < grant_diags_count(d); i++)
        ck_assert_uint_le(d->v[i - 1].loc.start, d->v[i].loc.start);
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

/* Nesting beyond the parser's stack is an error, not a crash; thousands of
 * errors stay fast and in order. */
START_TEST(test_hostile_shapes)
{
    gk_buf b = {0};
    gk_buf_puts(&b, "grant t {");
    for (int i = 0; i < 5000; i++)
        gk_buf_puts(&b, " exec {");
    grant_diags *d;
    gk_file_ast *ast = parse_text("deep.grant", b.data, b.len, &d);
    ck_assert_uint_ge(grant_diags_errors(d), 1);
    ck_assert_str_eq(grant_diags_message(d, 0), "blocks nested too deeply");
    gk_ast_free(ast);
    grant_diags_free(d);
    gk_buf_free(&b);

    gk_buf_puts(&b, "grant t { exec {\n");
    for (int i = 0; i < 20000; i++)
        gk_buf_printf(&b, "allow ,a%d; deny a%d;\n", i, i);
    gk_buf_puts(&b, "} }\n");
    /* parse_text runs the parser, then validation: each phase's errors come
     * out in source order (commas first, then contradictions). */
    ast = parse_text("many.grant", b.data, b.len, &d);
    ck_assert_uint_eq(grant_diags_errors(d), 40000);
    for (size_t i = 1; i < grant_diags_count(d); i++)
        if (i != 20000)
            ck_assert_uint_le(d->v[i - 1].loc.start, d->v[i].loc.start);
    ck_assert_str_eq(grant_diags_message(d, 19999), "unexpected ','");
    ck_assert_str_eq(grant_diags_message(d, 20000), "'a0' is both allowed and denied");
    gk_ast_free(ast);
    grant_diags_free(d);
    gk_buf_free(&b);
}
END_TEST

START_TEST(test_classify)
{
    static const struct {
        const char *text;
        gk_target_kind kind;
        bool path;
    } t[] = {
        {"make", GK_T_NAME, false},         {"my tool", GK_T_NAME, false},
        {"/usr/bin/git", GK_T_PATH, true},  {"/usr/bin/", GK_T_DIR, true},
        {"/", GK_T_DIR, true},              {"~", GK_T_PATH, true},
        {"~/bin/", GK_T_DIR, true},         {"~u/x", GK_T_PATH, true},
        {"cwd:", GK_T_PATH, true},          {"cwd:/tool", GK_T_PATH, true},
        {"tempdir:/", GK_T_DIR, true},      {"xdg:bin/", GK_T_DIR, true},
        {"xdg", GK_T_NAME, false},          {"cwd", GK_T_NAME, false},
        {"bin/tool", GK_T_NAME, false},     {"xdgfoo:/x", GK_T_NAME, false},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        ck_assert_msg(gk_classify_target(t[i].text) == t[i].kind, "classify %s", t[i].text);
        ck_assert_msg(gk_word_is_path(t[i].text) == t[i].path, "is_path %s", t[i].text);
    }
}
END_TEST

START_TEST(test_regex_subset)
{
    static const char *const ok[] = {
        "",          "^python[0-9.]*$", "^(ba|z|fi)sh$", "a.b+c?d*",      "x{2}y{2,}z{0,255}",
        "[^a-z_]",   "[]a]",            "[^]a-]",        "\\.\\*\\+\\\\", "\\[\\]\\{\\}\\(\\)\\|",
        "^$",        "(a(b)c)*",        "é+",            "a|",            "[[]",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        size_t at = 99;
        gk_autofree char *bad = gk_regex_unportable(ok[i], &at);
        ck_assert_msg(bad == NULL, "'%s' rejected: %s", ok[i], bad);
    }
    static const struct {
        const char *pat;
        const char *name;
        size_t at;
    } no[] = {
        {"a(?=b)", "lookahead '(?='", 1},
        {"(?!x)", "negative lookahead '(?!'", 0},
        {"(?<=x)y", "lookbehind '(?<='", 0},
        {"(?<!x)y", "negative lookbehind '(?<!'", 0},
        {"(?<n>x)", "named group '(?<'", 0},
        {"(?P<n>x)", "named group '(?P<'", 0},
        {"x(?:y)", "non-capturing group '(?:'", 1},
        {"(?i)x", "inline option or extension '(?i'", 0},
        {"(?>x)", "atomic group '(?>'", 0},
        {"(a)\\1", "backreference '\\1'", 3},
        {"\\k<n>", "backreference '\\k'", 0},
        {"a\\d", "class escape '\\d'", 1},
        {"\\w+", "class escape '\\w'", 0},
        {"[\\s]", "class escape '\\s'", 1},
        {"[a\\.]", "escape inside a class '\\.'", 2},
        {"[[:alpha:]]", "POSIX class '[:alpha:]'", 1},
        {"[[=a=]]", "collating element '[=a=]'", 1},
        {"\\bx", "word boundary '\\b'", 0},
        {"\\Ax\\z", "anchor '\\A'", 0},
        {"\\p{L}", "unicode property '\\p'", 0},
        {"a\\n", "control escape '\\n'", 1},
        {"\\x41", "character code escape '\\x'", 0},
        {"a*?", "lazy quantifier '*?'", 1},
        {"a{2,3}?", "lazy quantifier '{2,3}?'", 1},
        {"a++", "possessive quantifier '++'", 1},
        {"a**", "repeated quantifier '*'", 2},
        {"*a", "quantifier with nothing to repeat '*'", 0},
        {"(+a)", "quantifier with nothing to repeat '+'", 1},
        {"x{", "literal '{' (write \\{)", 1},
        {"x{,3}", "literal '{' (write \\{)", 1},
        {"a{256}", "repetition bound above 255 '{256}'", 1},
        {"(*UTF)a", "verb '(*'", 0},
    };
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        size_t at = 99;
        gk_autofree char *bad = gk_regex_unportable(no[i].pat, &at);
        ck_assert_msg(bad != NULL, "'%s' accepted", no[i].pat);
        ck_assert_msg(strcmp(bad, no[i].name) == 0, "'%s': got \"%s\", want \"%s\"", no[i].pat,
                      bad, no[i].name);
        ck_assert_msg(at == no[i].at, "'%s': at %zu, want %zu", no[i].pat, at, no[i].at);
    }
    /* Syntax errors are PCRE2's to name. */
    static const char *const pcre_errors[] = {"(a", "[a-", "a\\", "a{3,2}"};
    for (size_t i = 0; i < sizeof(pcre_errors) / sizeof(pcre_errors[0]); i++) {
        gk_autofree char *bad = gk_regex_unportable(pcre_errors[i], NULL);
        ck_assert_msg(bad == NULL, "'%s': %s", pcre_errors[i], bad);
    }
}
END_TEST

/* A construct inside an escaped string is reported where it is written. */
START_TEST(test_pattern_offsets)
{
    grant_diags *d;
    gk_file_ast *ast = parse_str("grant t { exec { deny match \"\\u{e9}\\\\.\\\\1\"; } }", &d);
    ck_assert_uint_eq(grant_diags_errors(d), 1);
    ck_assert_str_eq(grant_diags_message(d, 0), "pattern uses backreference '\\1', outside the "
                                                "portable subset");
    /* The string starts at 29: "\u{e9}" is 6 bytes written (2 decoded), the
     * escaped "\\." 3 (2), so the decoded "\1" is written "\\1" at 38..41. */
    ck_assert_uint_eq(d->v[0].loc.start, 38);
    ck_assert_uint_eq(d->v[0].loc.end, 41);
    gk_ast_free(ast);
    grant_diags_free(d);
}
END_TEST

/* ---- driver ------------------------------------------------------------- */

static Suite *parse_suite(void)
{
    Suite *s = suite_create("parse");

    TCase *errors = tcase_create("errors");
    tcase_set_timeout(errors, 120);
    tcase_add_loop_test(errors, test_error_case, 0, (int)error_cases.n);
    tcase_add_test(errors, test_no_orphan_expected);
    suite_add_tcase(s, errors);

    TCase *valid = tcase_create("valid");
    tcase_set_timeout(valid, 120);
    tcase_add_loop_test(valid, test_grants_parse, 0, (int)grant_files.n);
    tcase_add_test(valid, test_spec_example);
    suite_add_tcase(s, valid);

    TCase *lang = tcase_create("language");
    tcase_add_test(lang, test_keywords_are_names);
    tcase_add_test(lang, test_blocks_merge_and_scalars);
    tcase_add_test(lang, test_strings_and_comments);
    tcase_add_test(lang, test_bom_and_crlf);
    tcase_add_test(lang, test_recovery_keeps_rules);
    tcase_add_test(lang, test_hostile_shapes);
    tcase_add_test(lang, test_classify);
    tcase_add_test(lang, test_regex_subset);
    tcase_add_test(lang, test_pattern_offsets);
    suite_add_tcase(s, lang);
    return s;
}

int main(void)
{
    if (chdir(gk_test_srcdir()) != 0) {
        perror(gk_test_srcdir());
        return 99;
    }
    error_cases = list_cases(ERR_DIR);
    grant_files = list_cases(GRANTS_DIR);
    if (error_cases.n == 0 || grant_files.n == 0) {
        fprintf(stderr, "check_parse: no test data under %s\n", gk_test_srcdir());
        return 99;
    }
    int r = gk_test_main(parse_suite());
    gk_strvec_free(&error_cases);
    gk_strvec_free(&grant_files);
    return r;
}
