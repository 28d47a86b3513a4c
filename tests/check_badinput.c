/* check_badinput.c - the bad-input corpus: every kind of hostile or broken
 * input the CLIs take, one case per file, with the exit status and the
 * exact diagnostics they must give (and nothing half-written).
 *
 * A case is tests/data/bad-input/NAME.case, lines of:
 *   # comment
 *   file NAME            the lines up to "end" become NAME in the case's
 *   ...                  directory (a fresh one per case)
 *   end
 *   script NAME          the same, executable (0755)
 *   dir NAME             a directory
 *   link NAME TARGET     a symbolic link ({dir} allowed in TARGET)
 *   fifo NAME            a FIFO nobody writes to or reads from
 *   sparse NAME BYTES    a sparse regular file of that size
 *   run TOOL ARG...      TOOL is grantc or grantrun; ARGs split on spaces ('' is
 *                        an empty argument)
 *   exit N               the status it must exit with
 *   stderr               the lines up to "end": its whole stderr, exactly
 *   stderr-has TEXT      its stderr contains TEXT (where columns vary with {dir})
 *   fsize BYTES          run it with RLIMIT_FSIZE at BYTES (a write past it fails)
 *   absent NAME          nothing matching NAME (a glob) may exist afterwards
 * The command runs in the case's directory under timeout(1), so a hang is
 * a failure (exit 124), never a stuck suite. In expected text, {dir}
 * stands for the case's directory, in a file's text as well.
 */
#include "testutil.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CASE_DIR "tests/data/bad-input"
#define CASE_TIMEOUT "10"

static gk_strvec cases;

typedef struct bad_case {
    gk_strvec argv;     /* after timeout(1) and the tool */
    char *tool;
    int want_exit;
    char *want_stderr;  /* NULL: not checked */
    gk_strvec stderr_has;
    gk_strvec absent;
    long long fsize;    /* -1: no limit */
} bad_case;

/* The lines of text from *at up to a line "end" (consumed), joined. */
static char *block(char **at, const char *file)
{
    gk_buf b = {0};
    for (;;) {
        char *nl = strchr(*at, '\n');
        ck_assert_msg(nl, "%s: a block without 'end'", file);
        size_t n = (size_t)(nl - *at);
        if (n == 3 && strncmp(*at, "end", 3) == 0) {
            *at = nl + 1;
            break;
        }
        gk_buf_add(&b, *at, n + 1);
        *at = nl + 1;
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

static char *subst_dir(const char *text, const char *dir)
{
    gk_buf b = {0};
    for (const char *p = text; *p;) {
        const char *hit = strstr(p, "{dir}");
        if (!hit) {
            gk_buf_puts(&b, p);
            break;
        }
        gk_buf_add(&b, p, (size_t)(hit - p));
        gk_buf_puts(&b, dir);
        p = hit + 5;
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

/* Make what the case's setup lines ask for in dir; fill c from the rest. */
static void load_case(const char *file, const char *dir, bad_case *c)
{
    gk_autofree char *text = gk_test_read(file, NULL);
    ck_assert_msg(text, "cannot read %s", file);
    c->want_exit = -1;
    c->fsize = -1;
    for (char *at = text; *at;) {
        char *nl = strchr(at, '\n');
        ck_assert_msg(nl, "%s: the last line has no newline", file);
        *nl = '\0';
        char *line = at;
        at = nl + 1;
        if (!*line || *line == '#')
            continue;
        char name[256], target[512];
        unsigned long long size;
        if (strncmp(line, "file ", 5) == 0 || strncmp(line, "script ", 7) == 0) {
            bool script = line[0] == 's';
            gk_autofree char *raw = block(&at, file);
            gk_autofree char *body = subst_dir(raw, dir);
            gk_autofree char *path = gk_printf("%s/%s", dir, line + (script ? 7 : 5));
            gk_test_write(path, body, script ? 0755 : 0644);
        } else if (sscanf(line, "dir %255s", name) == 1) {
            gk_autofree char *path = gk_printf("%s/%s", dir, name);
            ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
        } else if (sscanf(line, "link %255s %511s", name, target) == 2) {
            gk_autofree char *path = gk_printf("%s/%s", dir, name);
            gk_autofree char *to = subst_dir(target, dir);
            ck_assert_msg(symlink(to, path) == 0, "symlink %s: %s", path, strerror(errno));
        } else if (sscanf(line, "fifo %255s", name) == 1) {
            gk_autofree char *path = gk_printf("%s/%s", dir, name);
            ck_assert_msg(mkfifo(path, 0644) == 0, "mkfifo %s: %s", path, strerror(errno));
        } else if (sscanf(line, "sparse %255s %llu", name, &size) == 2) {
            gk_autofree char *path = gk_printf("%s/%s", dir, name);
            FILE *f = fopen(path, "w");
            ck_assert_msg(f && ftruncate(fileno(f), (off_t)size) == 0, "sparse %s", path);
            fclose(f);
        } else if (strncmp(line, "run ", 4) == 0) {
            char *save = NULL;
            for (char *w = strtok_r(line + 4, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                gk_autofree char *word = strcmp(w, "''") == 0 ? gk_strdup("") : subst_dir(w, dir);
                if (!c->tool)
                    c->tool = gk_strdup(word);
                else
                    gk_strvec_push(&c->argv, word);
            }
        } else if (sscanf(line, "fsize %lld", &c->fsize) == 1) {
        } else if (sscanf(line, "exit %d", &c->want_exit) == 1) {
        } else if (strncmp(line, "stderr-has ", 11) == 0) {
            gk_autofree char *has = subst_dir(line + 11, dir);
            gk_strvec_push(&c->stderr_has, has);
        } else if (strcmp(line, "stderr") == 0) {
            gk_autofree char *body = block(&at, file);
            c->want_stderr = subst_dir(body, dir);
        } else if (strncmp(line, "absent ", 7) == 0) {
            gk_strvec_push(&c->absent, line + 7);
        } else {
            ck_abort_msg("%s: unknown line '%s'", file, line);
        }
    }
    ck_assert_msg(c->tool && c->want_exit >= 0, "%s: needs a run and an exit line", file);
}

START_TEST(bad_input_case)
{
    const char *file = cases.v[_i];
    gk_autofree char *dir = gk_printf("%s/badinput-XXXXXX", gk_test_builddir());
    ck_assert(mkdtemp(dir));
    bad_case c = {0};
    load_case(file, dir, &c);
    ck_assert_msg(strcmp(c.tool, "grantc") == 0 || strcmp(c.tool, "grantrun") == 0,
                  "%s: unknown tool %s", file, c.tool);
    gk_autofree char *tool = gk_printf("%s/%s", gk_test_builddir(), c.tool);
    gk_strvec argv = {0};
    /* The limit for the command only (the suite writes its own log). */
    gk_autofree char *fsize = c.fsize >= 0 ? gk_printf("--fsize=%lld", c.fsize) : NULL;
    if (fsize) {
        gk_strvec_push(&argv, "/usr/bin/prlimit");
        gk_strvec_push(&argv, fsize);
    }
    gk_strvec_push(&argv, "/usr/bin/timeout");
    gk_strvec_push(&argv, CASE_TIMEOUT);
    gk_strvec_push(&argv, tool);
    for (size_t i = 0; i < c.argv.n; i++)
        gk_strvec_push(&argv, c.argv.v[i]);
    char **v = gk_calloc(argv.n + 1, sizeof(char *));
    memcpy(v, argv.v, argv.n * sizeof(char *));
    ck_assert(chdir(dir) == 0);
    char *out = NULL, *err = NULL;
    int status = gk_test_run(v, NULL, &out, &err);
    ck_assert_msg(status != 124, "%s: hung (killed after " CASE_TIMEOUT " s)", file);
    ck_assert_msg(status == c.want_exit, "%s: exit %d, want %d; stderr:\n%s", file, status,
                  c.want_exit, err);
    if (c.want_stderr)
        ck_assert_msg(strcmp(err, c.want_stderr) == 0, "%s: stderr\n%s\nwant\n%s", file, err,
                      c.want_stderr);
    for (size_t i = 0; i < c.stderr_has.n; i++)
        ck_assert_msg(strstr(err, c.stderr_has.v[i]), "%s: stderr\n%s\nlacks\n%s", file, err,
                      c.stderr_has.v[i]);
    for (size_t i = 0; i < c.absent.n; i++) {
        glob_t g;
        int gr = glob(c.absent.v[i], GLOB_PERIOD | GLOB_NOSORT, NULL, &g);
        ck_assert_msg(gr == GLOB_NOMATCH, "%s: %s was left behind", file,
                      gr == 0 ? g.gl_pathv[0] : c.absent.v[i]);
        if (gr == 0)
            globfree(&g);
    }
    free(out);
    free(err);
    free(v);
    gk_strvec_free(&argv);
    gk_strvec_free(&c.argv);
    gk_strvec_free(&c.absent);
    gk_strvec_free(&c.stderr_has);
    free(c.tool);
    free(c.want_stderr);
    gk_autofree char *rm = gk_printf("rm -rf '%s'", dir);
    ck_assert(system(rm) == 0);
}
END_TEST

/* A signal in the held set that arrives while the temporary exists (here
 * raised from the SIGXFSZ handler, i.e. in the middle of the write, which
 * then fails) ends the process only once the temporary is gone. */
static void raise_term(int sig)
{
    (void)sig;
    raise(SIGTERM);
}

START_TEST(interrupted_write_leaves_no_temporary)
{
    gk_autofree char *dir = gk_printf("%s/badinput-XXXXXX", gk_test_builddir());
    ck_assert(mkdtemp(dir));
    gk_autofree char *out = gk_printf("%s/out.json", dir);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL); /* Check's handler would kill the suite */
        signal(SIGXFSZ, raise_term);
        struct rlimit fs = {4096, RLIM_INFINITY};
        getrlimit(RLIMIT_FSIZE, &fs);
        fs.rlim_cur = 4096;
        setrlimit(RLIMIT_FSIZE, &fs);
        static char data[1 << 16];
        memset(data, 'x', sizeof(data));
        sigset_t hold;
        sigemptyset(&hold);
        sigaddset(&hold, SIGTERM);
        grant_write_file_atomic_holding(out, data, sizeof(data), &hold);
        _exit(0); /* not reached: SIGTERM is pending */
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
    gk_autofree char *pat = gk_printf("%s/.out.json.*", dir);
    glob_t g;
    int gr = glob(pat, GLOB_NOSORT, NULL, &g);
    ck_assert_msg(gr == GLOB_NOMATCH, "%s was left behind", gr == 0 ? g.gl_pathv[0] : pat);
    struct stat sb;
    ck_assert(lstat(out, &sb) < 0);
    gk_autofree char *rm = gk_printf("rm -rf '%s'", dir);
    ck_assert(system(rm) == 0);
}
END_TEST

int main(void)
{
    gk_autofree char *dir = gk_test_path(CASE_DIR);
    cases = gk_test_files(dir, ".case");
    /* grantrun's helper is not installed: the build tree's. */
    gk_autofree char *helper = gk_printf("%s/runtime/grantkit-helper", gk_test_builddir());
    setenv("GRANTKIT_HELPER", helper, 1);
    Suite *s = suite_create("bad-input");
    TCase *t = tcase_create("corpus");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, bad_input_case, 0, (int)cases.n);
    suite_add_tcase(s, t);
    TCase *w = tcase_create("write");
    tcase_add_test(w, interrupted_write_leaves_no_temporary);
    suite_add_tcase(s, w);
    int rc = cases.n ? gk_test_main(s) : 1; /* no case found: the corpus is missing */
    gk_strvec_free(&cases);
    return rc;
}
