/* check_docs.c - the documentation as tests: the man pages render without
 * a warning, and every example in them, in README.md and in
 * policies/README.md is either run or says why not.
 *
 * 1. groff -ww -mandoc -Tutf8 renders each man/NAME.N with an empty
 *    stderr and status 0.
 * 2. Every example block carries a marker on the line before it:
 *      man pages (.EX or .nf)     README files (a ``` fence)
 *      .\" example: NAME          <!-- example: NAME -->   a file, written
 *                                                          as NAME
 *      .\" run                    <!-- run -->             commands, run
 *      .\" not-run: REASON        <!-- not-run: REASON --> neither
 *    A block without one fails the test, so a new example cannot slip in
 *    untested.
 * 3. The run blocks of each document run in order, each as one sh script,
 *    in a scratch project under /var/tmp holding every example file of
 *    every document, the fixtures in tests/data/docs/, ./grantc,
 *    ./grantrun and ./policies (links to the build), a git repository
 *    with one commit, and grantc and grantrun first on PATH. A command
 *    (backslash-continued lines are one) must exit 0, or what its trailing
 *    comment says: "# denied...", "# narrower...", "# wider...",
 *    "# incomparable..." mean 1; "# exit N" means N.
 */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const docs[] = {"man/grantc.1", "man/grantrun.1", "man/grant.5", "man/grant-frame.7",
                                   "README.md", "policies/README.md"};
#define NDOCS (sizeof docs / sizeof docs[0])

typedef enum { BLOCK_FILE, BLOCK_RUN, BLOCK_NOT_RUN } block_kind;

typedef struct block {
    block_kind kind;
    char *name;  /* BLOCK_FILE: its file name; BLOCK_NOT_RUN: the reason */
    char *text;  /* the example, roff escapes undone */
    unsigned line; /* of its first line in the document */
} block;

typedef struct doc_blocks {
    block *v;
    size_t n;
} doc_blocks;

static char *find_on_path(const char *prog)
{
    const char *path = getenv("PATH");
    gk_autofree char *copy = gk_strdup(path ? path : "/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char *p = gk_printf("%s/%s", d, prog);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* ---- 1. rendering ----------------------------------------------------------- */

START_TEST(man_pages_render_without_warnings)
{
    gk_autofree char *groff = find_on_path("groff");
    ck_assert_msg(groff, "groff is not installed (apt-get install groff-base; build.sh does)");
    gk_autofree char *dir = gk_test_path("man");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *dot = strrchr(e->d_name, '.');
        if (e->d_name[0] == '.' || !dot || dot[1] < '1' || dot[1] > '9' || dot[2])
            continue;
        gk_autofree char *page = gk_path_join(dir, e->d_name);
        char *argv[] = {groff, "-ww", "-mandoc", "-Tutf8", page, NULL};
        char *out = NULL, *err = NULL;
        int st = gk_test_run(argv, NULL, &out, &err);
        ck_assert_msg(st == 0 && !*err, "%s: groff exit %d:\n%s", e->d_name, st, err);
        ck_assert_msg(strlen(out) > 500, "%s renders to almost nothing", e->d_name);
        free(out);
        free(err);
        n++;
    }
    closedir(d);
    ck_assert_msg(n >= 3, "only %zu man pages", n);
}
END_TEST

/* ---- 2. extraction -------------------------------------------------------------- */

/* Undo the roff escapes examples use; any other fails the test, so what
 * runs is what man prints. */
static char *unroff(const char *line, const char *where)
{
    static const struct {
        const char *esc, *text;
    } escapes[] = {
        {"\\e", "\\"}, {"\\-", "-"}, {"\\&", ""}, {"\\(dq", "\""},
        {"\\(aq", "'"}, {"\\(ti", "~"}, {"\\(ha", "^"}, {"\\\\", "\\"},
    };
    gk_buf b = {0};
    gk_buf_puts(&b, "");
    for (const char *p = line; *p;) {
        if (*p != '\\') {
            gk_buf_putc(&b, *p++);
            continue;
        }
        size_t i = 0, n = sizeof escapes / sizeof escapes[0];
        while (i < n && strncmp(p, escapes[i].esc, strlen(escapes[i].esc)) != 0)
            i++;
        ck_assert_msg(i < n, "%s: unknown roff escape in an example: %s", where, p);
        gk_buf_puts(&b, escapes[i].text);
        p += strlen(escapes[i].esc);
    }
    return gk_buf_steal(&b, NULL);
}

/* The marker on the line before a block (kind, and name or reason in *arg),
 * or false. */
static bool marker(const char *line, bool roff, block_kind *kind, char **arg)
{
    const char *open = roff ? ".\\\" " : "<!-- ", *close = roff ? "" : " -->";
    if (!gk_has_prefix(line, open))
        return false;
    const char *m = line + strlen(open);
    size_t len = strlen(m);
    if (!gk_has_suffix(m, close))
        return false;
    len -= strlen(close);
    if (len == 3 && strncmp(m, "run", 3) == 0) {
        *kind = BLOCK_RUN;
        *arg = NULL;
        return true;
    }
    static const struct {
        const char *word;
        block_kind kind;
    } kinds[] = {{"example: ", BLOCK_FILE}, {"not-run: ", BLOCK_NOT_RUN}};
    for (size_t i = 0; i < 2; i++) {
        size_t wl = strlen(kinds[i].word);
        if (len > wl && strncmp(m, kinds[i].word, wl) == 0) {
            *kind = kinds[i].kind;
            *arg = gk_strndup(m + wl, len - wl);
            return true;
        }
    }
    return false;
}

static doc_blocks extract(const char *rel)
{
    gk_autofree char *path = gk_test_path(rel);
    gk_autofree char *text = gk_test_read(path, NULL);
    ck_assert_msg(text, "cannot read %s", path);
    bool roff = !gk_has_suffix(rel, ".md");
    doc_blocks out = {0};
    char *prev = NULL;
    block cur = {0};
    bool in = false;
    unsigned lineno = 0;
    size_t indent = 0; /* of the open fence */
    gk_buf body = {0};
    for (char *s = text; s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        char *line = s, *raw = s;
        s = nl ? nl + 1 : NULL;
        lineno++;
        /* a fence or marker may be indented (inside a list item) */
        if (!roff && !in)
            while (*line == ' ')
                line++;
        if (!roff && in)
            for (size_t k = 0; k < indent && *line == ' '; k++)
                line++;
        bool open = roff ? strcmp(line, ".EX") == 0 || strcmp(line, ".nf") == 0
                         : gk_has_prefix(line, "```");
        bool close = roff ? strcmp(line, ".EE") == 0 || strcmp(line, ".fi") == 0
                          : strcmp(line, "```") == 0;
        if (!in && open) {
            block_kind k;
            char *arg = NULL;
            ck_assert_msg(prev && marker(prev, roff, &k, &arg),
                          "%s:%u: an example without a marker before it (%s)", rel, lineno,
                          roff ? ".\\\" example: NAME | .\\\" run | .\\\" not-run: REASON"
                               : "<!-- example: NAME --> | <!-- run --> | <!-- not-run: REASON -->");
            cur = (block){k, arg, NULL, lineno + 1};
            indent = (size_t)(line - raw);
            gk_buf_puts(&body, "");
            in = true;
        } else if (in && close) {
            cur.text = gk_buf_steal(&body, NULL);
            out.v = gk_realloc(out.v, (out.n + 1) * sizeof *out.v);
            out.v[out.n++] = cur;
            in = false;
        } else if (in) {
            if (roff)
                ck_assert_msg(line[0] != '.' && line[0] != '\'', "%s:%u: a roff request in an example",
                              rel, lineno);
            gk_autofree char *where = gk_printf("%s:%u", rel, lineno);
            char *plain = roff ? unroff(line, where) : gk_strdup(line);
            gk_buf_puts(&body, plain);
            gk_buf_putc(&body, '\n');
            free(plain);
        }
        prev = line;
    }
    ck_assert_msg(!in, "%s: an example is not closed", rel);
    return out;
}

static void blocks_free(doc_blocks *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].name);
        free(b->v[i].text);
    }
    free(b->v);
}

START_TEST(every_example_is_marked)
{
    size_t run = 0, files = 0;
    for (size_t i = 0; i < NDOCS; i++) {
        doc_blocks b = extract(docs[i]);
        for (size_t j = 0; j < b.n; j++) {
            run += b.v[j].kind == BLOCK_RUN;
            files += b.v[j].kind == BLOCK_FILE;
            ck_assert_msg(b.v[j].kind != BLOCK_NOT_RUN || strlen(b.v[j].name) >= 8,
                          "%s:%u: say why it is not run", docs[i], b.v[j].line);
        }
        blocks_free(&b);
    }
    ck_assert_msg(run >= 5 && files >= 6, "only %zu run blocks and %zu files", run, files);
}
END_TEST

/* ---- 3. running ------------------------------------------------------------------ */

/* The status a command line expects, from its trailing comment. */
static int expected_status(const char *line)
{
    const char *c = strstr(line, " # ");
    if (!c)
        return 0;
    c += 3;
    static const char *const one[] = {"denied", "narrower", "wider", "incomparable"};
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
        if (gk_has_prefix(c, one[i]))
            return 1;
    int n;
    if (sscanf(c, "exit %d", &n) == 1)
        return n;
    return 0;
}

/* A block as a script that runs each command and reports every one whose
 * status is not the expected one, then exits 1 if any was not. */
static char *script(const block *b, const char *doc)
{
    gk_buf s = {0};
    gk_buf_puts(&s, "fail=0\n");
    gk_autofree char *text = gk_strdup(b->text);
    unsigned line = b->line;
    gk_buf cmd = {0};
    unsigned first = line;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save), line++) {
        if (!cmd.len)
            first = line;
        gk_buf_puts(&cmd, l);
        gk_buf_putc(&cmd, '\n');
        if (gk_has_suffix(l, "\\"))
            continue;
        const char *trim = l;
        while (*trim == ' ')
            trim++;
        if (*trim && *trim != '#') {
            int want = expected_status(l);
            gk_buf_printf(&s, "%sst=$?; if [ $st != %d ]; then echo \"%s:%u: exit $st, expected %d\" >&2; fail=1; fi\n",
                          cmd.data, want, doc, first, want);
        }
        gk_buf_free(&cmd);
    }
    gk_buf_puts(&s, "exit $fail\n");
    gk_buf_free(&cmd);
    return gk_buf_steal(&s, NULL);
}

static void link_to(const char *target, const char *dir, const char *name)
{
    gk_autofree char *p = gk_path_join(dir, name);
    ck_assert_msg(symlink(target, p) == 0, "symlink %s: %s", p, strerror(errno));
}

static int sh(const char *dir, const char *cmd)
{
    gk_autofree char *full = gk_printf("cd '%s' && %s", dir, cmd);
    return system(full);
}

START_TEST(examples_run)
{
    const char *doc = docs[_i];
    char tmpl[] = "/var/tmp/gk-docs-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    gk_autofree char *dir = gk_path_join(tmpl, "project");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    /* every document's files, so one may use another's (man pages share
     * agent.grant) */
    for (size_t i = 0; i < NDOCS; i++) {
        doc_blocks b = extract(docs[i]);
        for (size_t j = 0; j < b.n; j++)
            if (b.v[j].kind == BLOCK_FILE) {
                gk_autofree char *p = gk_path_join(dir, b.v[j].name);
                gk_test_write(p, b.v[j].text, 0644);
            }
        blocks_free(&b);
    }
    gk_autofree char *fixtures = gk_test_path("tests/data/docs");
    gk_autofree char *cp = gk_printf("cp -R '%s'/. .", fixtures);
    ck_assert_int_eq(sh(dir, cp), 0);
    ck_assert_int_eq(sh(dir, "git init -q && git add -A && git -c user.name=docs "
                             "-c user.email=docs@example.invalid commit -qm docs"), 0);
    gk_autofree char *grantc = gk_printf("%s/grantc", gk_test_builddir());
    gk_autofree char *grantrun = gk_printf("%s/grantrun", gk_test_builddir());
    gk_autofree char *policies = gk_test_path("policies");
    link_to(grantc, dir, "grantc");
    link_to(grantrun, dir, "grantrun");
    link_to(policies, dir, "policies");
    /* the README's GRANTKIT_HELPER=$PWD/runtime/grantkit-helper */
    gk_autofree char *runtime = gk_printf("%s/runtime", gk_test_builddir());
    link_to(runtime, dir, "runtime");
    ck_assert_int_eq(
        sh(dir, "printf 'grantc\\ngrantrun\\npolicies\\nruntime\\n' >> .git/info/exclude"), 0);
    gk_autofree char *bin = gk_path_join(tmpl, "bin");
    ck_assert_int_eq(mkdir(bin, 0755), 0);
    link_to(grantc, bin, "grantc");
    link_to(grantrun, bin, "grantrun");
    gk_autofree char *rt = gk_path_join(tmpl, "run");
    ck_assert_int_eq(mkdir(rt, 0700), 0);
    gk_autofree char *path = gk_printf("%s:/usr/bin:/bin", bin);
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
    ck_assert_int_eq(setenv("GRANTKIT_HELPER", helper, 1), 0);
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", policies, 1), 0);
    ck_assert_int_eq(setenv("GRANTKIT_RUNTIME_DIR", rt, 1), 0);
    ck_assert_int_eq(chdir(dir), 0);

    doc_blocks b = extract(doc);
    size_t ran = 0;
    gk_buf failures = {0};
    for (size_t j = 0; j < b.n; j++) {
        if (b.v[j].kind != BLOCK_RUN)
            continue;
        gk_autofree char *s = script(&b.v[j], doc);
        char *argv[] = {"/bin/sh", "-c", s, NULL};
        char *out = NULL, *err = NULL;
        int st = gk_test_run(argv, NULL, &out, &err);
        if (st != 0)
            gk_buf_printf(&failures, "\n-- %s:%u (exit %d):\n%s\nstdout:\n%.500s\n", doc,
                          b.v[j].line, st, err, out);
        free(out);
        free(err);
        ran++;
    }
    blocks_free(&b);
    ck_assert_int_eq(chdir("/"), 0);
    gk_autofree char *rm = gk_printf("rm -rf '%s'", tmpl);
    ck_assert_int_eq(system(rm), 0);
    if (failures.len)
        fprintf(stderr, "examples of %s failed:%s\n", doc, failures.data);
    ck_assert_msg(!failures.len, "examples of %s failed:%.3000s", doc, failures.data);
    /* grant.5 and the READMEs have their command blocks; a document that
     * lost all of them would pass vacuously */
    ck_assert_msg(ran > 0, "%s has no run block", doc);
}
END_TEST

static Suite *docs_suite(void)
{
    Suite *s = suite_create("docs");
    TCase *t = tcase_create("man");
    tcase_add_test(t, man_pages_render_without_warnings);
    tcase_add_test(t, every_example_is_marked);
    suite_add_tcase(s, t);
    t = tcase_create("examples");
    tcase_set_timeout(t, 300);
    tcase_add_loop_test(t, examples_run, 0, (int)NDOCS);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(docs_suite());
}
