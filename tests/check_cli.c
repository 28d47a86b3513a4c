/* check_cli.c - the real grantc binary, run as a user would run it.
 *
 * Every case spawns GK_BUILDDIR/grantc and checks its exit status, stdout
 * and stderr: compile of every bundled policy, error paths that must write
 * nothing, atomic output, fmt --check / -i, compare, usage errors, offline
 * targets that do not depend on this host, the man page's examples, and
 * the two surfaces of base/reasonable compiling to the same layers.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include <sys/syscall.h>
#include <unistd.h>

/* The fixed offline context (as gk_test_context_linux), as flags. */
#define LINUX_CTX                                                                          \
    "--target", "linux", "--home", "/home/u", "--user", "u", "--cwd", "/w", "--tempdir",   \
        "/tmp", "--path", "/usr/bin:/bin"

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

/* Run grantc with a NULL-terminated argument list (after the program). */
static run_result grantc_v(const char *stdin_data, const char *const *args)
{
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = gk_calloc(n + 2, sizeof *argv);
    argv[0] = gk_path_join(gk_test_builddir(), "grantc");
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    run_result r = {0};
    r.status = gk_test_run(argv, stdin_data, &r.out, &r.err);
    ck_assert_msg(r.status >= 0, "cannot run %s", argv[0]);
    free(argv[0]);
    free(argv);
    return r;
}

#define GRANTC(...) grantc_v(NULL, (const char *const[]){__VA_ARGS__, NULL})
#define GRANTC_STDIN(in, ...) grantc_v((in), (const char *const[]){__VA_ARGS__, NULL})

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

static char *policies_dir(void)
{
    return gk_test_path("policies");
}

/* A fresh directory for one case (Check forks per case; removed at the end
 * of the case by rm_tree). */
static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = gk_printf("%s/gk-cli-XXXXXX", base && *base == '/' ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);
    ck_assert_ptr_nonnull(real);
    free(tmpl);
    return real;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static char *read_text(const char *path)
{
    char *s = gk_test_read(path, NULL);
    ck_assert_msg(s != NULL, "cannot read %s", path);
    return s;
}

/* Entries of dir, dot files included: a leftover temporary file counts. */
static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static json_t *parse_json(const char *text, const char *what)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s: invalid JSON at %d:%d: %s", what, e.line, e.column, e.text);
    return j;
}

/* A compiled policy document: the IR's required top-level shape. */
static void assert_ir(const char *text, const char *what)
{
    json_t *j = parse_json(text, what);
    ck_assert_msg(json_is_object(j), "%s: IR is not an object", what);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "grantkit")), GRANTKIT_IR_VERSION);
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "policy");
    ck_assert_msg(json_array_size(json_object_get(j, "layers")) >= 1, "%s: no layers", what);
    ck_assert_msg(json_is_object(json_object_get(j, "projection")), "%s: no projection", what);
    ck_assert_msg(json_is_array(json_object_get(j, "sources")), "%s: no sources", what);
    json_decref(j);
}

/* ---- compile ------------------------------------------------------------ */

static gk_strvec bundled_policies(void)
{
    char *dir = policies_dir();
    gk_strvec v = gk_test_files(dir, ".grant");
    gk_strvec y = gk_test_files(dir, ".yaml");
    for (size_t i = 0; i < y.n; i++)
        gk_strvec_push(&v, y.v[i]);
    gk_strvec_free(&y);
    free(dir);
    ck_assert_msg(v.n >= 3, "expected the bundled policies, found %zu", v.n);
    return v;
}

START_TEST(compile_bundled_policies)
{
    gk_strvec files = bundled_policies();
    char *pp = policies_dir();
    for (size_t i = 0; i < files.n; i++) {
        /* Both on this host and offline: a bundled policy compiles anywhere. */
        run_result host = GRANTC("compile", "--policy-path", pp, files.v[i]);
        ck_assert_msg(host.status == 0, "%s (host): exit %d\n%s", files.v[i], host.status,
                      host.err);
        ck_assert_msg(!strstr(host.err, "error:"), "%s: %s", files.v[i], host.err);
        assert_ir(host.out, files.v[i]);
        run_result off = GRANTC("compile", LINUX_CTX, "--policy-path", pp, files.v[i]);
        ck_assert_msg(off.status == 0, "%s (linux): exit %d\n%s", files.v[i], off.status, off.err);
        assert_ir(off.out, files.v[i]);
        run_free(&host);
        run_free(&off);
    }
    free(pp);
    gk_strvec_free(&files);
}
END_TEST

/* GRANTKIT_POLICY_PATH is the default of --policy-path. */
START_TEST(compile_policy_path_from_environment)
{
    char *dir = make_tmpdir();
    char *file = gk_path_join(dir, "uses-base.grant");
    write_text(file, "grant uses { include \"base/minimal.grant\"; net deny; }\n");
    char *pp = policies_dir();
    ck_assert_int_eq(setenv("GRANTKIT_POLICY_PATH", pp, 1), 0);
    run_result ok = GRANTC("compile", LINUX_CTX, file);
    ck_assert_msg(ok.status == 0, "exit %d\n%s", ok.status, ok.err);
    assert_ir(ok.out, file);
    /* The flag wins over the environment. */
    run_result miss = GRANTC("compile", LINUX_CTX, "--policy-path", dir, file);
    ck_assert_int_eq(miss.status, 2);
    ck_assert_str_eq(miss.out, "");
    ck_assert_msg(strstr(miss.err, "base/minimal.grant"), "%s", miss.err);
    run_free(&ok);
    run_free(&miss);
    free(pp);
    free(file);
    rm_tree(dir);
}
END_TEST

START_TEST(compile_bad_file_reports_and_writes_nothing)
{
    char *bad = gk_test_path("tests/data/cli/bad.grant");
    run_result r = GRANTC("compile", LINUX_CTX, bad);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    /* The rendered diagnostic: position, source line, caret, hint. */
    char *where = gk_printf("%s:4:5: error: ", bad);
    ck_assert_msg(strstr(r.err, where), "no '%s' in:\n%s", where, r.err);
    ck_assert_msg(strstr(r.err, " |     exce { allow rg; }\n"), "no source line in:\n%s", r.err);
    ck_assert_msg(strstr(r.err, "|     ^~~~"), "no caret in:\n%s", r.err);
    ck_assert_msg(strstr(r.err, "'exce'"), "%s", r.err);
    free(where);
    run_free(&r);

    char *dir = make_tmpdir();
    char *out = gk_path_join(dir, "out.json");
    /* -o OUT: no file appears... */
    r = GRANTC("compile", LINUX_CTX, "-o", out, bad);
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(access(out, F_OK), -1);
    ck_assert_uint_eq(count_entries(dir), 0);
    run_free(&r);
    /* ...and an existing OUT keeps its bytes. */
    write_text(out, "previous\n");
    r = GRANTC("compile", LINUX_CTX, "--output", out, bad);
    ck_assert_int_eq(r.status, 2);
    char *kept = read_text(out);
    ck_assert_str_eq(kept, "previous\n");
    ck_assert_uint_eq(count_entries(dir), 1);
    free(kept);
    run_free(&r);
    free(out);
    rm_tree(dir);
    free(bad);
}
END_TEST

START_TEST(compile_missing_file)
{
    run_result r = GRANTC("compile", LINUX_CTX, "/nonexistent/grantkit/x.grant");
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "/nonexistent/grantkit/x.grant"), "%s", r.err);
    run_free(&r);
}
END_TEST

START_TEST(compile_output_file_is_the_ir)
{
    char *src = gk_test_path("policies/base/minimal.grant");
    char *dir = make_tmpdir();
    char *out = gk_path_join(dir, "min.json");
    write_text(out, "stale\n");
    ck_assert_int_eq(chmod(out, 0640), 0);
    run_result to_file = GRANTC("compile", LINUX_CTX, "-o", out, src);
    ck_assert_msg(to_file.status == 0, "exit %d: %s", to_file.status, to_file.err);
    ck_assert_str_eq(to_file.out, "");
    run_result to_stdout = GRANTC("compile", LINUX_CTX, src);
    ck_assert_int_eq(to_stdout.status, 0);
    char *written = read_text(out);
    ck_assert_str_eq(written, to_stdout.out);
    assert_ir(written, out);
    /* Replaced by rename: no temporary file left, the mode kept. */
    ck_assert_uint_eq(count_entries(dir), 1);
    struct stat st;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0640);
    /* Identical input and context: identical bytes. */
    run_result again = GRANTC("compile", LINUX_CTX, src);
    ck_assert_str_eq(again.out, to_stdout.out);
    /* "-o -" is standard output. */
    run_result dash = GRANTC("compile", LINUX_CTX, "-o", "-", src);
    ck_assert_str_eq(dash.out, to_stdout.out);
    free(written);
    run_free(&to_file);
    run_free(&to_stdout);
    run_free(&again);
    run_free(&dash);
    free(out);
    rm_tree(dir);
    free(src);
}
END_TEST

/* -o onto something that is not a regular file (a fifo, as /dev/null is a
 * device) writes into it; a rename would replace the node itself. And -o
 * through a symlink replaces the file and keeps the link. */
START_TEST(compile_output_to_special_files)
{
    char *src = gk_test_path("policies/base/minimal.grant");
    char *dir = make_tmpdir();
    char *fifo = gk_path_join(dir, "fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    /* Hold both ends so grantc's open does not block; the IR fits the pipe. */
    int fd = open(fifo, O_RDWR | O_NONBLOCK);
    ck_assert_int_ge(fd, 0);
    run_result to_fifo = GRANTC("compile", LINUX_CTX, "-o", fifo, src);
    ck_assert_msg(to_fifo.status == 0, "exit %d: %s", to_fifo.status, to_fifo.err);
    struct stat st;
    ck_assert_int_eq(lstat(fifo, &st), 0);
    ck_assert_msg(S_ISFIFO(st.st_mode), "the fifo was replaced");
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    run_result to_stdout = GRANTC("compile", LINUX_CTX, src);
    ck_assert_str_eq(buf, to_stdout.out);
    close(fd);

    char *file = gk_path_join(dir, "real.json"), *link = gk_path_join(dir, "link.json");
    write_text(file, "old\n");
    ck_assert_int_eq(symlink("real.json", link), 0);
    run_result via_link = GRANTC("compile", LINUX_CTX, "-o", link, src);
    ck_assert_int_eq(via_link.status, 0);
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert_msg(S_ISLNK(st.st_mode), "the symlink was replaced");
    char *written = read_text(file);
    ck_assert_str_eq(written, to_stdout.out);
    free(written);
    run_free(&to_fifo);
    run_free(&to_stdout);
    run_free(&via_link);
    free(file);
    free(link);
    free(fifo);
    rm_tree(dir);
    free(src);
}
END_TEST

START_TEST(compile_pretty)
{
    char *src = gk_test_path("policies/base/reasonable.grant");
    char *pp = policies_dir();
    run_result compact = GRANTC("compile", LINUX_CTX, "--policy-path", pp, src);
    run_result pretty = GRANTC("compile", LINUX_CTX, "--policy-path", pp, "--pretty", src);
    ck_assert_int_eq(compact.status, 0);
    ck_assert_int_eq(pretty.status, 0);
    /* Compact: one line. Pretty: two-space indent, one key per line. */
    char *nl = strchr(compact.out, '\n');
    ck_assert_msg(nl && nl[1] == '\0', "compact IR is not one line");
    ck_assert_msg(strncmp(pretty.out, "{\n  \"", 5) == 0, "not pretty:\n%.200s", pretty.out);
    ck_assert_msg(strstr(pretty.out, "\n    "), "no nested indent");
    json_t *a = parse_json(compact.out, "compact"), *b = parse_json(pretty.out, "pretty");
    ck_assert_msg(json_equal(a, b), "--pretty changed the document");
    json_decref(a);
    json_decref(b);
    run_free(&compact);
    run_free(&pretty);
    free(pp);
    free(src);
}
END_TEST

START_TEST(compile_extend)
{
    char *min = gk_test_path("policies/base/minimal.grant");
    char *extra = gk_test_path("tests/data/cli/extra.grant");
    run_result plain = GRANTC("compile", LINUX_CTX, min);
    run_result joined = GRANTC("compile", LINUX_CTX, min, "--extend", extra);
    ck_assert_int_eq(plain.status, 0);
    ck_assert_msg(joined.status == 0, "exit %d: %s", joined.status, joined.err);
    ck_assert_msg(!strstr(plain.out, "\"/home/u/extra\""), "%s", plain.out);
    ck_assert_msg(strstr(joined.out, "\"/home/u/extra\""), "--extend not joined:\n%s", joined.out);
    run_result missing = GRANTC("compile", LINUX_CTX, min, "--extend", "/nonexistent/grantkit/e.grant");
    ck_assert_int_eq(missing.status, 2);
    ck_assert_str_eq(missing.out, "");
    run_free(&plain);
    run_free(&joined);
    run_free(&missing);
    free(extra);
    free(min);
}
END_TEST

/* Compiled IR is accepted wherever a grant file is. */
START_TEST(compile_reads_compiled_ir)
{
    char *src = gk_test_path("policies/base/minimal.grant");
    char *dir = make_tmpdir();
    char *ir = gk_path_join(dir, "minimal.json");
    run_result first = GRANTC("compile", LINUX_CTX, "-o", ir, src);
    ck_assert_int_eq(first.status, 0);
    run_result second = GRANTC("compile", LINUX_CTX, ir);
    ck_assert_msg(second.status == 0, "exit %d: %s", second.status, second.err);
    assert_ir(second.out, ir);
    run_free(&first);
    run_free(&second);
    free(ir);
    rm_tree(dir);
    free(src);
}
END_TEST

START_TEST(compile_stdin)
{
    run_result r = GRANTC_STDIN("grant s { net deny; }\n", "compile", LINUX_CTX, "-");
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    assert_ir(r.out, "stdin");
    run_free(&r);
    r = GRANTC_STDIN("grant s { net maybe; }\n", "compile", LINUX_CTX, "-");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "<stdin>:1:"), "%s", r.err);
    run_free(&r);
}
END_TEST

/* ---- offline targets ------------------------------------------------------ */

static run_result compile_in_env(const char *cwd, const char *home, const char *tmp,
                                 const char *path, const char *file, const char *target)
{
    static const char *const xdg[] = {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                                       "XDG_STATE_HOME", "XDG_BIN_HOME"};
    for (size_t i = 0; i < sizeof xdg / sizeof xdg[0]; i++)
        unsetenv(xdg[i]);
    setenv("HOME", home, 1);
    setenv("USER", gk_basename(home), 1);
    setenv("TMPDIR", tmp, 1);
    setenv("PATH", path, 1);
    ck_assert_int_eq(chdir(cwd), 0);
    if (strcmp(target, "host") == 0)
        return GRANTC("compile", "--target", "host", "--home", "/home/u", "--user", "u",
                      "--cwd", "/w", "--tempdir", "/tmp", "--path", "/usr/bin:/bin", file);
    return GRANTC("compile", LINUX_CTX, file);
}

START_TEST(offline_target_ignores_this_host)
{
    char *dir = make_tmpdir();
    char *real = gk_path_join(dir, "real"), *link = gk_path_join(dir, "link");
    ck_assert_int_eq(mkdir(real, 0755), 0);
    ck_assert_int_eq(symlink("real", link), 0);
    char *file = gk_path_join(dir, "p.grant");
    char *text = gk_printf("grant p {\n    fs {\n        read %s/sub ~/docs;\n"
                           "        write cwd: tempdir:;\n    }\n}\n", link);
    write_text(file, text);
    char *path2 = gk_printf("%s:/usr/bin:/bin", dir);

    run_result a = compile_in_env("/", "/nonexistent-a", "/var/tmp", "/usr/bin:/bin", file,
                                  "linux");
    run_result b = compile_in_env(dir, dir, dir, path2, file, "linux");
    ck_assert_msg(a.status == 0, "exit %d: %s", a.status, a.err);
    ck_assert_msg(b.status == 0, "exit %d: %s", b.status, b.err);
    ck_assert_msg(strcmp(a.out, b.out) == 0, "the environment leaked into --target linux:\n%s\n%s",
                  a.out, b.out);
    /* No symlink of this machine is resolved for another machine... */
    char *via_link = gk_printf("\"%s/sub\"", link), *via_real = gk_printf("\"%s/sub\"", real);
    ck_assert_msg(strstr(a.out, via_link), "%s missing:\n%s", via_link, a.out);
    ck_assert_msg(!strstr(a.out, via_real), "host symlink resolved for linux:\n%s", a.out);
    ck_assert_msg(strstr(a.out, "\"/home/u/docs\""), "--home not applied:\n%s", a.out);
    /* ...while the host target does resolve it (so --target was applied). */
    run_result h = compile_in_env("/", "/nonexistent-a", "/var/tmp", "/usr/bin:/bin", file,
                                  "host");
    ck_assert_msg(h.status == 0, "exit %d: %s", h.status, h.err);
    ck_assert_msg(strstr(h.out, via_real), "host target did not canonicalise:\n%s", h.out);
    run_free(&a);
    run_free(&b);
    run_free(&h);
    free(via_link);
    free(via_real);
    free(path2);
    free(text);
    free(file);
    free(real);
    free(link);
    rm_tree(dir);
}
END_TEST

/* ---- fmt ------------------------------------------------------------------ */

START_TEST(fmt_check)
{
    char *ugly = gk_test_path("tests/data/cli/unformatted.grant");
    run_result canon = GRANTC("fmt", ugly);
    ck_assert_msg(canon.status == 0, "exit %d: %s", canon.status, canon.err);
    char *orig = read_text(ugly);
    ck_assert_msg(strcmp(canon.out, orig) != 0, "test data is already canonical");
    ck_assert_msg(strstr(canon.out, "# A valid grant"), "fmt dropped the comment");

    run_result bad = GRANTC("fmt", "--check", ugly);
    ck_assert_int_eq(bad.status, 1);
    ck_assert_str_eq(bad.out, "");
    ck_assert_msg(strstr(bad.err, "unformatted.grant"), "no note on stderr: '%s'", bad.err);

    char *dir = make_tmpdir();
    char *pretty = gk_path_join(dir, "pretty.grant");
    write_text(pretty, canon.out);
    run_result good = GRANTC("fmt", "--check", pretty);
    ck_assert_msg(good.status == 0, "exit %d: %s", good.status, good.err);
    ck_assert_str_eq(good.out, "");
    /* fmt is idempotent. */
    run_result twice = GRANTC("fmt", pretty);
    ck_assert_str_eq(twice.out, canon.out);
    /* Standard input formats the same. */
    run_result in = GRANTC_STDIN(orig, "fmt", "-");
    ck_assert_int_eq(in.status, 0);
    ck_assert_str_eq(in.out, canon.out);

    run_free(&canon);
    run_free(&bad);
    run_free(&good);
    run_free(&twice);
    run_free(&in);
    free(pretty);
    rm_tree(dir);
    free(orig);
    free(ugly);
}
END_TEST

/* The bundled grant files ship in canonical form. */
START_TEST(fmt_bundled_policies_are_canonical)
{
    char *dir = policies_dir();
    gk_strvec files = gk_test_files(dir, ".grant");
    ck_assert_uint_ge(files.n, 2);
    for (size_t i = 0; i < files.n; i++) {
        run_result r = GRANTC("fmt", "--check", files.v[i]);
        ck_assert_msg(r.status == 0, "%s: exit %d\n%s", files.v[i], r.status, r.err);
        run_free(&r);
    }
    gk_strvec_free(&files);
    free(dir);
}
END_TEST

START_TEST(fmt_in_place)
{
    char *ugly = gk_test_path("tests/data/cli/unformatted.grant");
    char *dir = make_tmpdir();
    char *copy = gk_path_join(dir, "copy.grant");
    char *orig = read_text(ugly);
    write_text(copy, orig);
    run_result canon = GRANTC("fmt", ugly);
    ck_assert_int_eq(canon.status, 0);

    run_result r = GRANTC("fmt", "-i", copy);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "");
    char *now = read_text(copy);
    ck_assert_str_eq(now, canon.out);
    ck_assert_uint_eq(count_entries(dir), 1);
    run_result check = GRANTC("fmt", "--check", copy);
    ck_assert_int_eq(check.status, 0);

    /* A file that does not parse is left as it was. */
    char *badsrc = gk_test_path("tests/data/cli/bad.grant");
    char *bad = read_text(badsrc);
    free(badsrc);
    char *badcopy = gk_path_join(dir, "bad.grant");
    write_text(badcopy, bad);
    run_result fail = GRANTC("fmt", "--in-place", badcopy);
    ck_assert_int_eq(fail.status, 2);
    char *after = read_text(badcopy);
    ck_assert_str_eq(after, bad);
    ck_assert_uint_eq(count_entries(dir), 2);

    /* -i cannot put YAML into a .grant file, nor rewrite stdin. */
    run_result conv = GRANTC("fmt", "-i", "--to", "yaml", copy);
    ck_assert_int_eq(conv.status, 2);
    char *still = read_text(copy);
    ck_assert_str_eq(still, canon.out);
    run_result in = GRANTC_STDIN(orig, "fmt", "-i", "-");
    ck_assert_int_eq(in.status, 2);

    run_free(&canon);
    run_free(&r);
    run_free(&check);
    run_free(&fail);
    run_free(&conv);
    run_free(&in);
    free(still);
    free(after);
    free(badcopy);
    free(bad);
    free(now);
    free(orig);
    free(copy);
    rm_tree(dir);
    free(ugly);
}
END_TEST

START_TEST(fmt_converts_to_yaml_and_back)
{
    char *src = gk_test_path("tests/data/cli/unformatted.grant");
    char *dir = make_tmpdir();
    char *yaml = gk_path_join(dir, "u.yaml");
    run_result y = GRANTC("fmt", "--to", "yaml", src);
    ck_assert_msg(y.status == 0, "exit %d: %s", y.status, y.err);
    ck_assert_msg(strstr(y.out, "grant: unformatted"), "%s", y.out);
    /* A warning is printed and does not fail the run. */
    ck_assert_msg(strstr(y.err, "warning: comments are not carried over"), "%s", y.err);
    write_text(yaml, y.out);
    run_result check = GRANTC("fmt", "--check", yaml);
    ck_assert_msg(check.status == 0, "fmt --to yaml is not canonical YAML: %s", check.err);
    run_result back = GRANTC("fmt", "--to", "grant", yaml);
    ck_assert_int_eq(back.status, 0);
    ck_assert_msg(strstr(back.out, "grant unformatted {"), "%s", back.out);
    run_free(&y);
    run_free(&check);
    run_free(&back);
    free(yaml);
    rm_tree(dir);
    free(src);
}
END_TEST

/* ---- compare -------------------------------------------------------------- */

START_TEST(compare_policy_with_itself)
{
    char *pp = policies_dir();
    char *src = gk_test_path("policies/base/reasonable.grant");
    run_result r = GRANTC("compare", LINUX_CTX, "--policy-path", pp, src, src);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "equal\n");
    run_result j = GRANTC("compare", LINUX_CTX, "--policy-path", pp, "--format", "json", src, src);
    ck_assert_int_eq(j.status, 0);
    json_t *doc = parse_json(j.out, "compare json");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "order")), "equal");
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "witnesses")), 0);
    json_decref(doc);
    run_free(&r);
    run_free(&j);
    free(src);
    free(pp);
}
END_TEST

/* The text form: group headers "KIND: a X, b Y (N)" and indented lines, at
 * most cap a group, then "  ... and K more". Returns the witnesses the
 * headers count; every header must say "a allows, b denies" when
 * wider_only. */
static size_t text_witnesses(const char *out, bool wider_only, long cap, size_t *lines_out,
                             size_t *more_out)
{
    static const char *const kinds[] = {"read", "write", "exec", "gate", "net"};
    size_t witnesses = 0, lines = 0, more = 0;
    long in_group = -1;
    for (const char *line = strchr(out, '\n') + 1; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        gk_autofree char *l = gk_strndup(line, (size_t)(end - line));
        if (l[0] == ' ') {
            ck_assert_msg(in_group >= 0, "a witness line before any group: %s", l);
            if (strncmp(l, "  ... and ", 10) == 0) {
                more++;
            } else {
                in_group++;
                lines++;
                ck_assert_msg(cap == 0 || in_group <= cap, "more than %ld lines: %s", cap, l);
            }
        } else {
            bool kind = false;
            for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                kind |= gk_has_prefix(l, kinds[i]) && l[strlen(kinds[i])] == ':';
            const char *verdicts = strstr(l, ": a allows, b denies (");
            ck_assert_msg(kind && (verdicts || (!wider_only && strstr(l, ": a denies, b allows ("))),
                          "bad group header: %s", l);
            size_t n = 0;
            ck_assert_msg(sscanf(strrchr(l, '(') + 1, "%zu)", &n) == 1 && n > 0, "%s", l);
            witnesses += n;
            in_group = 0;
        }
        line = end + 1;
    }
    if (lines_out)
        *lines_out = lines;
    if (more_out)
        *more_out = more;
    return witnesses;
}

START_TEST(compare_minimal_and_reasonable)
{
    char *pp = policies_dir();
    char *min = gk_test_path("policies/base/minimal.grant");
    char *rea = gk_test_path("policies/base/reasonable.grant");
    run_result r = GRANTC("compare", LINUX_CTX, "--policy-path", pp, "--witnesses", "0", min, rea);
    ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
    /* reasonable stacks an allow list on minimal: minimal allows more. */
    ck_assert_msg(strncmp(r.out, "wider\n", 6) == 0, "%s", r.out);
    size_t all_lines = 0, more = 0;
    size_t witnesses = text_witnesses(r.out, true, 0, &all_lines, &more);
    ck_assert_uint_ge(witnesses, 1);
    ck_assert_uint_eq(more, 0);

    run_result rev = GRANTC("compare", LINUX_CTX, "--policy-path", pp, "--format=json", rea, min);
    ck_assert_int_eq(rev.status, 1);
    json_t *doc = parse_json(rev.out, "compare json");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "order")), "narrower");
    json_t *ws = json_object_get(doc, "witnesses");
    /* the headers count every witness the JSON lists */
    ck_assert_uint_eq(json_array_size(ws), witnesses);
    json_t *w0 = json_array_get(ws, 0);
    ck_assert(json_is_false(json_object_get(w0, "a")));
    ck_assert(json_is_true(json_object_get(w0, "b")));
    ck_assert(json_is_string(json_object_get(w0, "kind")));
    ck_assert(json_is_string(json_object_get(w0, "subject")));
    json_decref(doc);

    /* Capped: at most 2 lines a group, the rest counted; the same groups. */
    run_result capped = GRANTC("compare", LINUX_CTX, "--policy-path", pp, "--witnesses", "2",
                               min, rea);
    ck_assert_int_eq(capped.status, 1);
    size_t capped_lines = 0, capped_more = 0;
    ck_assert_uint_eq(text_witnesses(capped.out, true, 2, &capped_lines, &capped_more), witnesses);
    ck_assert_msg(capped_lines < all_lines && capped_more > 0, "%s", capped.out);
    /* a command asked through each PATH directory is one line */
    ck_assert_msg(strstr(r.out, " spellings along PATH, e.g. /"), "%s", r.out);
    run_result bad = GRANTC("compare", LINUX_CTX, "--witnesses", "-1", min, rea);
    ck_assert_int_eq(bad.status, 2);
    ck_assert_msg(strstr(bad.err, "--witnesses: '-1' is not a count"), "%s", bad.err);
    run_free(&bad);
    run_free(&capped);
    run_free(&r);
    run_free(&rev);
    free(min);
    free(rea);
    free(pp);
}
END_TEST

START_TEST(compare_input_error)
{
    char *bad = gk_test_path("tests/data/cli/bad.grant");
    char *min = gk_test_path("policies/base/minimal.grant");
    run_result r = GRANTC("compare", LINUX_CTX, min, bad);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "bad.grant:4:5: error:"), "%s", r.err);
    run_free(&r);
    free(min);
    free(bad);
}
END_TEST

/* ---- usage ---------------------------------------------------------------- */

START_TEST(usage_errors)
{
    char *min = gk_test_path("policies/base/minimal.grant");
    static const struct {
        const char *args[6];
        const char *says; /* on stderr */
    } cases[] = {
        {{NULL}, "missing COMMAND"},
        {{"frobnicate"}, "unknown command 'frobnicate'"},
        {{"--bogus"}, "unrecognized option '--bogus'"},
        {{"compile"}, "missing FILE"},
        {{"compile", "--bogus", "MIN"}, "--bogus"},
        {{"compile", "-o"}, "requires an argument"},
        {{"compile", "--target", "plan9", "MIN"}, "unknown target 'plan9'"},
        {{"compile", "--home", "relative/dir", "MIN"}, "'relative/dir' is not an absolute path"},
        {{"compile", "--xdg", "cofnig=/x", "MIN"}, "unknown name 'cofnig'"},
        {{"compile", "--xdg", "config", "MIN"}, "expected NAME=DIR"},
        {{"compile", "-", "MIN"}, "standard input"},
        {{"fmt"}, "missing FILE"},
        {{"fmt", "MIN", "MIN"}, "expected one FILE"},
        {{"fmt", "--to", "toml", "MIN"}, "unknown surface 'toml'"},
        {{"fmt", "--check", "-i", "MIN"}, "cannot be combined"},
        {{"fmt", "/nonexistent/grantkit/x.grant"}, "cannot read"},
        {{"compare", "MIN"}, "expected two policies"},
        {{"compare", "--format", "xml", "MIN", "MIN"}, "unknown format 'xml'"},
        {{"emit", "MIN"}, "emit: missing --backend"},
        {{"emit", "--backend", "nope", "MIN"}, "unknown backend 'nope'"},
        {{"check"}, "check: missing FILE"},
        {{"audit"}, "audit: missing FILE"},
        {{"sbpl"}, "sbpl: expected eval or lint"},
        {{"sid"}, "sid: expected capability|appcontainer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[7] = {NULL};
        for (size_t k = 0; cases[i].args[k]; k++)
            args[k] = strcmp(cases[i].args[k], "MIN") == 0 ? min : cases[i].args[k];
        run_result r = grantc_v(NULL, args);
        ck_assert_msg(r.status == 2, "case %zu (%s): exit %d", i, cases[i].says, r.status);
        ck_assert_msg(strcmp(r.out, "") == 0, "case %zu wrote to stdout: %s", i, r.out);
        ck_assert_msg(strncmp(r.err, "grantc: ", 8) == 0, "case %zu: '%s'", i, r.err);
        ck_assert_msg(strstr(r.err, cases[i].says), "case %zu: no '%s' in '%s'", i,
                      cases[i].says, r.err);
        run_free(&r);
    }
    free(min);
}
END_TEST

START_TEST(help_and_version)
{
    static const char *const helps[][3] = {
        {"--help"}, {"compile", "--help"}, {"fmt", "--help"}, {"compare", "--help"}};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        run_result r = grantc_v(NULL, helps[i]);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strncmp(r.out, "Usage: grantc", 13) == 0, "%s", r.out);
        ck_assert_str_eq(r.err, "");
        run_free(&r);
    }
    run_result c = GRANTC("compile", "--help");
    ck_assert_msg(strstr(c.out, "--policy-path") && strstr(c.out, "GRANTKIT_POLICY_PATH"),
                  "compile --help does not document the policy path");
    run_free(&c);
    run_result v = GRANTC("--version");
    ck_assert_int_eq(v.status, 0);
    ck_assert_msg(strncmp(v.out, "grantc (grantkit) ", 18) == 0, "%s", v.out);
    ck_assert_msg(strstr(v.out, grant_version()), "%s", v.out);
    run_free(&v);
}
END_TEST

/* grantrun --help names every option cli.md gives grantrun (it lacked the
 * process-isolation ones, which worked). */
START_TEST(grantrun_help_names_every_option)
{
    static const char *const opts[] = {
        "--policy FILE", "--extend FILE", "--isolate none|process", "--tty", "--timeout DURATION",
        "--grace-ms N", "--memory BYTES", "--processes N", "--cpu SECONDS",
        "--seed HOSTPATH[=DEST]", "--root DIR", "--fs-quota BYTES", "--fs-nodes N",
        "--diff json|unified", "--diff-metadata", "--json", "--env NAME[=VALUE]", "--keep-env",
        "--level auto|namespaces|landlock", "--report FILE", "--dry-run", "--bwrap PATH",
        "--allow-degraded", "--target host|linux|macos|windows", "--no-implicit"};
    gk_autofree char *grantrun = gk_printf("%s/grantrun", gk_test_builddir());
    char *argv[] = {grantrun, "--help", NULL};
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(gk_test_run(argv, NULL, &out, &err), 0);
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        ck_assert_msg(strstr(out, opts[i]), "grantrun --help lacks %s", opts[i]);
    free(out);
    free(err);
}
END_TEST

/* --version says what this build has (grantc) and what this build and host
 * have for the envelope (grantrun), each line checked against the host. */
START_TEST(version_features)
{
    run_result c = GRANTC("--version");
    ck_assert_int_eq(c.status, 0);
    ck_assert_msg(strstr(c.out, "\nbackends: bwrap landlock seatbelt appcontainer\n") &&
                      strstr(c.out, "\ntargets: host linux macos windows\n") &&
                      strstr(c.out, "\nlibraries: libyaml ") && strstr(c.out, ", PCRE2 10."),
                  "%s", c.out);
    run_free(&c);

    gk_autofree char *grantrun = gk_printf("%s/grantrun", gk_test_builddir());
    char *argv[] = {grantrun, "--version", NULL};
    char *out = NULL, *err = NULL;
    ck_assert_int_eq(gk_test_run(argv, NULL, &out, &err), 0);
    ck_assert_msg(strncmp(out, "grantrun (grantkit) ", 20) == 0 && strstr(out, grant_version()),
                  "%s", out);
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U);
    gk_autofree char *ll = abi > 0 ? gk_printf("\nlandlock: ABI %ld\n", abi)
                                   : gk_strdup("\nlandlock: unavailable (");
    ck_assert_msg(strstr(out, ll), "want '%s' in:\n%s", ll + 1, out);
    ck_assert_msg(strstr(out, "\nseccomp: filters; libseccomp 2.") ||
                      strstr(out, "\nseccomp: unavailable"),
                  "%s", out);
    ck_assert_msg(strstr(out, "\nuser namespaces: "), "%s", out);
    ck_assert_msg(strstr(out, "\nhelper: "), "%s", out);
    free(out);
    free(err);
    /* --bwrap names the one asked; one that gives no version says so */
    char *argv2[] = {grantrun, "--bwrap", "/bin/false", "--version", NULL};
    ck_assert_int_eq(gk_test_run(argv2, NULL, &out, &err), 0);
    ck_assert_msg(strstr(out, "\nbwrap: /bin/false (gave no version)\n"), "%s", out);
    free(out);
    free(err);
    if (access("/usr/bin/bwrap", X_OK) == 0) {
        char *argv3[] = {grantrun, "--version", "--bwrap=/usr/bin/bwrap", NULL};
        ck_assert_int_eq(gk_test_run(argv3, NULL, &out, &err), 0);
        ck_assert_msg(strstr(out, "\nbwrap: /usr/bin/bwrap (bubblewrap "), "%s", out);
        free(out);
        free(err);
    }
}
END_TEST

/* ---- the man page's examples ------------------------------------------------ */

/* Undo the roff escapes the examples use; anything else fails the test so
 * the extraction never silently differs from what man prints. */
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
        ck_assert_msg(i < n, "%s: unknown roff escape in example: %s", where, p);
        gk_buf_puts(&b, escapes[i].text);
        p += strlen(escapes[i].esc);
    }
    return gk_buf_steal(&b, NULL);
}

/* Every ".\" example: NAME" + .EX ... .EE block, written to dir/NAME. */
static gk_strvec extract_man_examples(const char *man, const char *dir)
{
    static const char marker[] = ".\\\" example: ";
    gk_strvec names = {0};
    char *text = read_text(man);
    char *save = NULL;
    char *name = NULL;
    gk_buf body = {0};
    enum { OUTSIDE, WANT_EX, IN_EX } state = OUTSIDE;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (state == OUTSIDE && strncmp(line, marker, sizeof marker - 1) == 0) {
            name = gk_strdup(line + sizeof marker - 1);
            ck_assert_msg(!strchr(name, '/') && *name, "bad example name '%s'", name);
            ck_assert_msg(!gk_strvec_contains(&names, name), "example '%s' twice", name);
            state = WANT_EX;
        } else if (state == WANT_EX) {
            ck_assert_msg(strcmp(line, ".EX") == 0, "example %s: expected .EX, got '%s'", name,
                          line);
            gk_buf_puts(&body, "");
            state = IN_EX;
        } else if (state == IN_EX && strcmp(line, ".EE") == 0) {
            char *path = gk_path_join(dir, name);
            write_text(path, body.data);
            free(path);
            gk_strvec_push_take(&names, name);
            name = NULL;
            gk_buf_free(&body);
            state = OUTSIDE;
        } else if (state == IN_EX) {
            ck_assert_msg(line[0] != '.' && line[0] != '\'', "example %s: roff request '%s'",
                          name, line);
            char *plain = unroff(line, name);
            gk_buf_puts(&body, plain);
            gk_buf_putc(&body, '\n');
            free(plain);
        }
    }
    ck_assert_msg(state == OUTSIDE, "unterminated example %s", name ? name : "");
    free(text);
    return names;
}

START_TEST(man_page_examples_compile)
{
    char *man = gk_test_path("man/grant.5");
    char *dir = make_tmpdir();
    gk_strvec names = extract_man_examples(man, dir);
    ck_assert_msg(names.n >= 4, "only %zu examples in %s", names.n, man);
    char *pp = policies_dir();
    bool yaml = false;
    for (size_t i = 0; i < names.n; i++) {
        ck_assert_msg(gk_has_suffix(names.v[i], ".grant") || gk_has_suffix(names.v[i], ".yaml"),
                      "example %s: name must end in .grant or .yaml", names.v[i]);
        yaml |= gk_has_suffix(names.v[i], ".yaml");
        char *path = gk_path_join(dir, names.v[i]);
        run_result r = GRANTC("compile", LINUX_CTX, "--policy-path", pp, path);
        ck_assert_msg(r.status == 0, "man example %s: exit %d\n%s", names.v[i], r.status, r.err);
        assert_ir(r.out, names.v[i]);
        run_free(&r);
        free(path);
    }
    ck_assert_msg(yaml, "no YAML example in %s", man);
    free(pp);
    gk_strvec_free(&names);
    rm_tree(dir);
    free(man);
}
END_TEST

/* The README's tiny grant (the ``` block that starts with "# demo.grant")
 * compiles and is in canonical form. */
START_TEST(readme_example)
{
    char *readme = gk_test_path("README.md");
    char *text = read_text(readme);
    char *start = strstr(text, "```\n# demo.grant\n");
    ck_assert_msg(start, "README.md lost its demo.grant example");
    start += 4;
    char *end = strstr(start, "```");
    ck_assert_ptr_nonnull(end);
    *end = '\0';
    char *dir = make_tmpdir();
    char *demo = gk_path_join(dir, "demo.grant");
    write_text(demo, start);
    char *pp = policies_dir();
    run_result r = GRANTC("compile", LINUX_CTX, "--policy-path", pp, demo);
    ck_assert_msg(r.status == 0, "README example: exit %d\n%s", r.status, r.err);
    run_result f = GRANTC("fmt", "--check", demo);
    ck_assert_msg(f.status == 0, "README example is not canonical: %s", f.err);
    run_free(&r);
    run_free(&f);
    free(pp);
    free(demo);
    rm_tree(dir);
    free(text);
    free(readme);
}
END_TEST

/* ---- both surfaces -------------------------------------------------------- */

/* An IR without what names its files: the sources and each layer's origin. */
static json_t *ir_without_sources(const char *text, const char *what)
{
    json_t *j = parse_json(text, what);
    ck_assert_int_eq(json_object_del(j, "sources"), 0);
    /* the projection protects the source files themselves */
    ck_assert_int_eq(json_object_del(json_object_get(j, "projection"), "protect"), 0);
    size_t i;
    json_t *layer;
    json_array_foreach(json_object_get(j, "layers"), i, layer)
        json_object_del(layer, "origin");
    return j;
}

static void assert_same_layers(const char *a_file, const char *b_file)
{
    char *pp = policies_dir();
    run_result a = GRANTC("compile", LINUX_CTX, "--policy-path", pp, "--pretty", a_file);
    run_result b = GRANTC("compile", LINUX_CTX, "--policy-path", pp, "--pretty", b_file);
    ck_assert_msg(a.status == 0, "%s: %s", a_file, a.err);
    ck_assert_msg(b.status == 0, "%s: %s", b_file, b.err);
    json_t *ja = ir_without_sources(a.out, a_file), *jb = ir_without_sources(b.out, b_file);
    if (!json_equal(ja, jb)) {
        char *sa = json_dumps(ja, JSON_INDENT(1) | JSON_SORT_KEYS);
        char *sb = json_dumps(jb, JSON_INDENT(1) | JSON_SORT_KEYS);
        ck_abort_msg("%s and %s compile differently:\n%s\n---\n%s", a_file, b_file, sa, sb);
    }
    json_decref(ja);
    json_decref(jb);
    run_free(&a);
    run_free(&b);
    free(pp);
}

START_TEST(reasonable_surfaces_compile_alike)
{
    char *g = gk_test_path("policies/base/reasonable.grant");
    char *y = gk_test_path("policies/base/reasonable.yaml");
    assert_same_layers(g, y);
    free(g);
    free(y);
}
END_TEST

START_TEST(man_page_surfaces_compile_alike)
{
    char *man = gk_test_path("man/grant.5");
    char *dir = make_tmpdir();
    gk_strvec names = extract_man_examples(man, dir);
    char *g = gk_path_join(dir, "agent.grant"), *y = gk_path_join(dir, "agent.yaml");
    ck_assert_msg(gk_strvec_contains(&names, "agent.grant") &&
                      gk_strvec_contains(&names, "agent.yaml"),
                  "the man page lost its agent example pair");
    assert_same_layers(g, y);
    free(g);
    free(y);
    gk_strvec_free(&names);
    rm_tree(dir);
    free(man);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *t = tcase_create("compile");
    tcase_add_test(t, compile_bundled_policies);
    tcase_add_test(t, compile_policy_path_from_environment);
    tcase_add_test(t, compile_bad_file_reports_and_writes_nothing);
    tcase_add_test(t, compile_missing_file);
    tcase_add_test(t, compile_output_file_is_the_ir);
    tcase_add_test(t, compile_output_to_special_files);
    tcase_add_test(t, compile_pretty);
    tcase_add_test(t, compile_extend);
    tcase_add_test(t, compile_reads_compiled_ir);
    tcase_add_test(t, compile_stdin);
    tcase_add_test(t, offline_target_ignores_this_host);
    suite_add_tcase(s, t);

    t = tcase_create("fmt");
    tcase_add_test(t, fmt_check);
    tcase_add_test(t, fmt_bundled_policies_are_canonical);
    tcase_add_test(t, fmt_in_place);
    tcase_add_test(t, fmt_converts_to_yaml_and_back);
    suite_add_tcase(s, t);

    t = tcase_create("compare");
    tcase_add_test(t, compare_policy_with_itself);
    tcase_add_test(t, compare_minimal_and_reasonable);
    tcase_add_test(t, compare_input_error);
    suite_add_tcase(s, t);

    t = tcase_create("usage");
    tcase_add_test(t, usage_errors);
    tcase_add_test(t, help_and_version);
    tcase_add_test(t, grantrun_help_names_every_option);
    tcase_add_test(t, version_features);
    suite_add_tcase(s, t);

    t = tcase_create("docs");
    tcase_add_test(t, man_page_examples_compile);
    tcase_add_test(t, readme_example);
    tcase_add_test(t, man_page_surfaces_compile_alike);
    tcase_add_test(t, reasonable_surfaces_compile_alike);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(cli_suite());
}
