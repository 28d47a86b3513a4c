/* check_freeze.c - the freeze context and path freezing (grant-language.md §4).
 *
 * The main test is a table: a path word, the context tweaks and target it is
 * frozen under, and either both expected spellings or the expected error
 * message and hint. Host rows run against a real tree of directories and
 * symlinks built once per test case group in a mkdtemp directory; "$T" in
 * any column stands for that directory (canonical). Every row runs in its
 * own forked process with a controlled environment.
 */
#include "testutil.h"
#include "freeze/freeze.h"

#include <errno.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GK_POLICY_DIR
#define GK_POLICY_DIR "/usr/local/share/grantkit/policies"
#endif

#define HOST GRANT_TARGET_HOST
#define LINUX GRANT_TARGET_LINUX
#define MACOS GRANT_TARGET_MACOS
#define WINDOWS GRANT_TARGET_WINDOWS

typedef struct freeze_case {
    const char *word;
    grant_target target;
    /* space-separated KEY=VALUE: home user cwd tempdir path xdg.NAME */
    const char *tweaks;
    const char *path;    /* expected path; NULL: an error is expected */
    const char *real;    /* expected real; NULL: same as path */
    const char *message; /* expected error message */
    const char *hint;    /* expected hint; NULL: none */
} freeze_case;

#define OK(w, t, tw, p, r) {w, t, tw, p, r, NULL, NULL}
#define ERR(w, t, tw, m, h) {w, t, tw, NULL, NULL, m, h}

static const freeze_case cases[] = {
    /* ~ and ~user (base context: home /home/u, user u, cwd /w, tempdir /tmp) */
    OK("~", LINUX, "", "/home/u", NULL),
    OK("~/", LINUX, "", "/home/u", NULL),
    OK("~/project", LINUX, "", "/home/u/project", NULL),
    OK("~/project/", LINUX, "", "/home/u/project", NULL),
    OK("~u", LINUX, "", "/home/u", NULL),
    OK("~u/x", LINUX, "home=/srv/homes/u", "/srv/homes/u/x", NULL),
    OK("~bob/x", LINUX, "", "/home/bob/x", NULL),
    OK("~root", LINUX, "", "/root", NULL),
    OK("~root/.ssh", LINUX, "user=root home=/r", "/r/.ssh", NULL),
    OK("~bob", MACOS, "", "/Users/bob", NULL),
    OK("~root", MACOS, "", "/var/root", "/private/var/root"),
    OK("~bob/Docs", WINDOWS, "", "C:/Users/bob/Docs", "c:/users/bob/docs"),
    OK("~/x", WINDOWS, "home=C:/Users/U", "C:/Users/U/x", "c:/users/u/x"),
    /* xdg: defaults under home, flags, outside-home refusal */
    OK("xdg:config", LINUX, "", "/home/u/.config", NULL),
    OK("xdg:data/foo", LINUX, "", "/home/u/.local/share/foo", NULL),
    OK("xdg:cache", LINUX, "", "/home/u/.cache", NULL),
    OK("xdg:state/", LINUX, "", "/home/u/.local/state", NULL),
    OK("xdg:bin/", LINUX, "", "/home/u/.local/bin", NULL),
    OK("xdg:config", LINUX, "home=/h2", "/h2/.config", NULL),
    OK("xdg:config/x", LINUX, "xdg.config=/home/u/cfg", "/home/u/cfg/x", NULL),
    OK("xdg:data", LINUX, "xdg.data=/home/u", "/home/u", NULL),
    OK("xdg:data", WINDOWS, "home=C:/Users/U", "C:/Users/U/.local/share", "c:/users/u/.local/share"),
    /* windows compares home and xdg case-blind */
    OK("xdg:config", WINDOWS, "home=C:/Users/U xdg.config=c:\\users\\u\\cfg", "c:/users/u/cfg",
       NULL),
    ERR("xdg:data", LINUX, "xdg.data=/etc",
        "xdg:data resolves to '/etc', outside home '/home/u'; refusing (XDG_DATA_HOME?)",
        "set --xdg data=DIR inside home, or --home"),
    ERR("xdg:config/x", LINUX, "xdg.config=/home/user2/.config",
        "xdg:config resolves to '/home/user2/.config', outside home '/home/u'; refusing "
        "(XDG_CONFIG_HOME?)",
        "set --xdg config=DIR inside home, or --home"),
    ERR("xdg:bin", LINUX, "xdg.bin=/home/u/.local/bin home=/h2",
        "xdg:bin resolves to '/home/u/.local/bin', outside home '/h2'; refusing (XDG_BIN_HOME?)",
        "set --xdg bin=DIR inside home, or --home"),
    ERR("xdg:cofnig", LINUX, "", "unknown sigil 'xdg:cofnig'", "did you mean 'xdg:config'?"),
    ERR("xdg:dat/x", LINUX, "", "unknown sigil 'xdg:dat'", "did you mean 'xdg:data'?"),
    ERR("xdg:", LINUX, "", "unknown sigil 'xdg:'",
        "xdg: names one of xdg:config, xdg:data, xdg:cache, xdg:state, xdg:bin"),
    ERR("xdg:runtime", LINUX, "", "unknown sigil 'xdg:runtime'",
        "xdg: names one of xdg:config, xdg:data, xdg:cache, xdg:state, xdg:bin"),
    /* cwd: and tempdir: */
    OK("cwd:", LINUX, "", "/w", NULL),
    OK("cwd:/", LINUX, "", "/w", NULL),
    OK("cwd:/src/", LINUX, "", "/w/src", NULL),
    OK("cwd:/.git/config", LINUX, "cwd=/proj/", "/proj/.git/config", NULL),
    OK("cwd:\\sub", WINDOWS, "cwd=C:\\w", "C:/w/sub", "c:/w/sub"),
    ERR("cwd:sub", LINUX, "", "expected '/' after 'cwd:' in 'cwd:sub'", "write 'cwd:/sub'"),
    OK("tempdir:", LINUX, "", "/tmp", NULL),
    OK("tempdir:/x", LINUX, "tempdir=/var/tmp", "/var/tmp/x", NULL),
    OK("tempdir:", MACOS, "", "/tmp", "/private/tmp"),
    ERR("tempdir:x", LINUX, "", "expected '/' after 'tempdir:' in 'tempdir:x'",
        "write 'tempdir:/x'"),
    /* unknown sigils and relative paths */
    ERR("tmpdir:/x", LINUX, "", "unknown sigil 'tmpdir:'", "did you mean 'tempdir:'?"),
    ERR("cdw:", LINUX, "", "unknown sigil 'cdw:'", "did you mean 'cwd:'?"),
    ERR("home:", LINUX, "", "unknown sigil 'home:'",
        "paths start with /, ~, cwd:, tempdir: or xdg:NAME"),
    ERR("C:/x", LINUX, "", "unknown sigil 'C:'",
        "a drive letter is absolute only with --target windows"),
    ERR("project", LINUX, "", "relative path 'project'",
        "paths must be absolute or start with ~, cwd:, tempdir: or xdg: (e.g. 'cwd:/project')"),
    ERR("./src/x", LINUX, "", "relative path './src/x'",
        "paths must be absolute or start with ~, cwd:, tempdir: or xdg: (e.g. 'cwd:/src/x')"),
    ERR("a/b:c", LINUX, "", "relative path 'a/b:c'",
        "paths must be absolute or start with ~, cwd:, tempdir: or xdg: (e.g. 'cwd:/a/b:c')"),
    ERR("", LINUX, "", "empty path", NULL),
    /* lexical normalisation */
    OK("/a//b", LINUX, "", "/a/b", NULL),
    OK("/a/./b/.", LINUX, "", "/a/b", NULL),
    OK("/a/b/../c", LINUX, "", "/a/c", NULL),
    OK("/a/b/..", LINUX, "", "/a", NULL),
    OK("/usr/", LINUX, "", "/usr", NULL),
    OK("/", LINUX, "", "/", NULL),
    OK("//", LINUX, "", "/", NULL),
    OK("/..a/b.", LINUX, "", "/..a/b.", NULL),
    OK("~/../..", LINUX, "", "/", NULL),
    OK("/a:b/c", LINUX, "", "/a:b/c", NULL),
    ERR("/../etc", LINUX, "", "'..' climbs above '/' in '/../etc'", NULL),
    ERR("/a/../../b", LINUX, "", "'..' climbs above '/' in '/a/../../b'", NULL),
    ERR("~/../../..", LINUX, "", "'..' climbs above '/' in '~/../../..'",
        "'~/../../..' expands to '/home/u/../../..'"),
    ERR("C:/a/../..", WINDOWS, "", "'..' climbs above 'C:/' in 'C:/a/../..'", NULL),
    /* UTF-8 */
    OK("/home/u/\xc3\xa9t\xc3\xa9", LINUX, "", "/home/u/\xc3\xa9t\xc3\xa9", NULL),
    ERR("/a\xff", LINUX, "", "path is not valid UTF-8", NULL),
    ERR("~/\xc3", LINUX, "", "path is not valid UTF-8", NULL),
    /* macOS alias table */
    OK("/tmp/x", MACOS, "", "/tmp/x", "/private/tmp/x"),
    OK("/tmp", MACOS, "", "/tmp", "/private/tmp"),
    OK("/var/log/", MACOS, "", "/var/log", "/private/var/log"),
    OK("/etc/hosts", MACOS, "", "/etc/hosts", "/private/etc/hosts"),
    OK("/private/etc/hosts", MACOS, "", "/private/etc/hosts", NULL),
    OK("/tmpfoo", MACOS, "", "/tmpfoo", NULL),
    OK("/usr/bin", MACOS, "", "/usr/bin", NULL),
    OK("/Users/U/Docs", MACOS, "", "/Users/U/Docs", NULL),
    /* windows: backslashes, drive letters, case */
    OK("C:\\Users\\U\\Docs", WINDOWS, "", "C:/Users/U/Docs", "c:/users/u/docs"),
    OK("C:\\Users\\U\\..\\V\\", WINDOWS, "", "C:/Users/V", "c:/users/v"),
    /* A rooted path is on the drive of cwd (C:/w here, D:/w below). */
    OK("/Program Files/X", WINDOWS, "", "C:/Program Files/X", "c:/program files/x"),
    OK("\\Data\\x", WINDOWS, "cwd=D:/w", "D:/Data/x", "d:/data/x"),
    OK("d:/Data", WINDOWS, "", "d:/Data", "d:/data"),
    ERR("\\\\srv\\share\\x", WINDOWS, "", "UNC path '\\\\srv\\share\\x' is not supported",
        "name the share through a drive letter"),
    /* offline targets never look at the local disk ($T/dirlink is a symlink) */
    OK("$T/dirlink/file", LINUX, "", "$T/dirlink/file", NULL),
    OK("~nosuchuser-gk", LINUX, "", "/home/nosuchuser-gk", NULL),
    /* host canonicalisation against a real tree */
    OK("$T/real/file", HOST, "", "$T/real/file", NULL),
    OK("$T/dirlink/file", HOST, "", "$T/dirlink/file", "$T/real/file"),
    OK("$T/abslink/new/deeper", HOST, "", "$T/abslink/new/deeper", "$T/real/new/deeper"),
    OK("$T/chain1/file", HOST, "", "$T/chain1/file", "$T/real/file"),
    OK("$T/dangling", HOST, "", "$T/dangling", "$T/absent"),
    OK("$T/dangling/missing/x", HOST, "", "$T/dangling/missing/x", "$T/absent/missing/x"),
    OK("$T/dangrel/x", HOST, "", "$T/dangrel/x", "$T/nothere/x"),
    /* '..' is folded lexically before canonicalisation (policy paths) */
    OK("$T/dirlink/missing/../x", HOST, "", "$T/dirlink/x", "$T/real/x"),
    OK("$T/dirlink/..", HOST, "", "$T", NULL),
    /* a link whose target climbs through a missing directory */
    OK("$T/dangup/y", HOST, "", "$T/dangup/y", "$T/real2/y"),
    /* a '..' inside a link target applies after the link, as in the kernel */
    OK("$T/real/sub/uplink/file", HOST, "", "$T/real/sub/uplink/file", "$T/real/file"),
    OK("$T/real/toparent/real/file", HOST, "", "$T/real/toparent/real/file", "$T/real/file"),
    OK("$T/real/file/below", HOST, "", "$T/real/file/below", NULL),
    OK("$T/filelink", HOST, "", "$T/filelink", "$T/real/file"),
    /* per-process magic links stay symbolic rather than naming our pid */
    OK("/proc/self/fd", HOST, "", "/proc/self/fd", NULL),
    OK("/proc/thread-self/", HOST, "", "/proc/thread-self", NULL),
    OK("$T/fdlink/3", HOST, "", "$T/fdlink/3", "/proc/self/fd/3"),
    ERR("$T/loop1/x", HOST, "", "too many levels of symbolic links resolving '$T/loop1/x'", NULL),
    OK("~", HOST, "home=$T/dirlink", "$T/dirlink", "$T/real"),
    OK("~someone-else", HOST, "user=someone-else home=$T/abslink", "$T/abslink", "$T/real"),
    OK("~root/x", HOST, "user=gk-not-root", "/root/x", NULL),
    ERR("~nosuchuser-gk/x", HOST, "user=u", "unknown user 'nosuchuser-gk' in '~nosuchuser-gk/x'",
        NULL),
    /* xdg within home by real spelling: a symlinked home works... */
    OK("xdg:data/f", HOST, "home=$T/real xdg.data=$T/dirlink/share", "$T/dirlink/share/f",
       "$T/real/share/f"),
    /* ...and a link inside home that leaves it does not */
    ERR("xdg:data", HOST, "home=$T/real xdg.data=$T/real/etclink",
        "xdg:data resolves to '$T/real/etclink', outside home '$T/real'; refusing "
        "(XDG_DATA_HOME?)",
        "set --xdg data=DIR inside home, or --home"),
};

#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* ---- the tree for host rows --------------------------------------------- */

static char *tree; /* canonical mkdtemp directory, made in the parent */

static void must(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "check_freeze: %s: %s\n", what, strerror(errno));
        abort();
    }
}

/* target is taken as written; a leading "$T" stands for the tree. */
static char *subst(const char *s);

static void tree_link(const char *target, const char *name)
{
    char *t = subst(target);
    char *n = gk_printf("%s/%s", tree, name);
    must(symlink(t, n), n);
    free(t);
    free(n);
}

static void tree_dir(const char *name)
{
    char *n = gk_printf("%s/%s", tree, name);
    must(mkdir(n, 0755), n);
    free(n);
}

static void tree_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    char *templ = gk_printf("%s/gk-freeze-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    must(mkdtemp(templ) ? 0 : -1, "mkdtemp");
    tree = realpath(templ, NULL);
    must(tree ? 0 : -1, "realpath");
    free(templ);
    tree_dir("real");
    tree_dir("real/sub");
    char *f = gk_printf("%s/real/file", tree);
    FILE *fp = fopen(f, "w");
    must(fp ? 0 : -1, f);
    fclose(fp);
    free(f);
    tree_link("real", "dirlink"); /* relative */
    tree_link("$T/real", "abslink"); /* absolute */
    tree_link("chain2", "chain1");
    tree_link("chain3", "chain2");
    tree_link("$T/dirlink", "chain3"); /* a link to a link */
    tree_link("$T/absent", "dangling");
    tree_link("nothere", "dangrel");
    tree_link("absent/../real2", "dangup");
    tree_link("..", "real/sub/uplink");
    tree_link("..", "real/toparent");
    tree_link("real/file", "filelink");
    tree_link("loop2", "loop1");
    tree_link("loop1", "loop2");
    tree_link("/etc", "real/etclink");
    tree_link("/proc/self/fd", "fdlink"); /* like /dev/fd */
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

static void tree_teardown(void)
{
    if (tree)
        nftw(tree, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(tree);
    tree = NULL;
}

/* "$T" replaced by the tree (NULL stays NULL). */
static char *subst(const char *s)
{
    if (!s)
        return NULL;
    gk_buf b = {0};
    gk_buf_puts(&b, "");
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == 'T') {
            gk_buf_puts(&b, tree ? tree : "/nonexistent-tree");
            p += 2;
        } else {
            gk_buf_putc(&b, *p++);
        }
    }
    return gk_buf_steal(&b, NULL);
}

/* ---- the context of a row ----------------------------------------------- */

static const char *const xdg_env[] = {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                                      "XDG_STATE_HOME", "XDG_BIN_HOME"};

static void controlled_env(void)
{
    setenv("HOME", "/home/u", 1);
    setenv("USER", "u", 1);
    setenv("TMPDIR", "/tmp", 1);
    setenv("PATH", "/usr/bin:/bin", 1);
    for (size_t i = 0; i < 5; i++)
        unsetenv(xdg_env[i]);
    unsetenv("GRANTKIT_POLICY_PATH");
}

static void apply_tweaks(grant_context *ctx, const char *tweaks)
{
    char *all = subst(tweaks);
    for (char *save = NULL, *tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        ck_assert_msg(eq != NULL, "bad tweak '%s'", tok);
        *eq = '\0';
        const char *v = eq + 1;
        int rc;
        if (strcmp(tok, "home") == 0)
            rc = grant_context_set(ctx, GRANT_CTX_HOME, v);
        else if (strcmp(tok, "user") == 0)
            rc = grant_context_set(ctx, GRANT_CTX_USER, v);
        else if (strcmp(tok, "cwd") == 0)
            rc = grant_context_set(ctx, GRANT_CTX_CWD, v);
        else if (strcmp(tok, "tempdir") == 0)
            rc = grant_context_set(ctx, GRANT_CTX_TEMPDIR, v);
        else if (strcmp(tok, "path") == 0)
            rc = grant_context_set(ctx, GRANT_CTX_PATH, v);
        else if (gk_has_prefix(tok, "xdg."))
            rc = grant_context_set_xdg(ctx, tok + 4, v);
        else
            ck_abort_msg("unknown tweak '%s'", tok);
        ck_assert_msg(rc == 0, "tweak %s=%s failed: %d", tok, v, rc);
    }
    free(all);
}

static grant_context *row_context(const freeze_case *c)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, c->target), 0);
    /* A windows context takes only drive paths. */
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, c->target == WINDOWS ? "C:/w" : "/w"),
                     0);
    apply_tweaks(ctx, c->tweaks);
    return ctx;
}

static const char *diag_hint(const grant_diags *d, size_t i)
{
    return d->v[i].hint;
}

START_TEST(test_freeze_table)
{
    const freeze_case *c = &cases[_i];
    grant_context *ctx = row_context(c);
    grant_diags *d = grant_diags_new();
    char *word = subst(c->word);
    char *want_path = subst(c->path);
    char *want_real = subst(c->real ? c->real : c->path);
    char *want_msg = subst(c->message);
    char *want_hint = subst(c->hint);
    gk_fpath fp = {0};
    int rc = gk_freeze_path(ctx, NULL, word, (gk_loc){0}, d, &fp);
    if (want_path) {
        ck_assert_msg(rc == 0, "row %d '%s': unexpected error: %s", _i, word,
                      grant_diags_count(d) ? grant_diags_message(d, 0) : "(no diagnostic)");
        ck_assert_uint_eq(grant_diags_count(d), 0);
        ck_assert_msg(strcmp(fp.path, want_path) == 0, "row %d '%s': path '%s', want '%s'", _i,
                      word, fp.path, want_path);
        ck_assert_msg(strcmp(fp.real, want_real) == 0, "row %d '%s': real '%s', want '%s'", _i,
                      word, fp.real, want_real);
        /* Steps 1-2 alone give the same path and never fail where 1-3 pass. */
        char *lex = NULL;
        ck_assert_int_eq(gk_freeze_lexical(ctx, NULL, word, (gk_loc){0}, d, &lex), 0);
        ck_assert_str_eq(lex, want_path);
        free(lex);
        gk_fpath_free(&fp);
    } else {
        ck_assert_msg(rc == -1, "row %d '%s': expected an error, got path '%s' real '%s'", _i,
                      word, fp.path ? fp.path : "", fp.real ? fp.real : "");
        ck_assert_ptr_null(fp.path);
        ck_assert_ptr_null(fp.real);
        ck_assert_uint_eq(grant_diags_count(d), 1);
        ck_assert_uint_eq(grant_diags_errors(d), 1);
        ck_assert_msg(strcmp(grant_diags_message(d, 0), want_msg) == 0,
                      "row %d '%s': message \"%s\", want \"%s\"", _i, word,
                      grant_diags_message(d, 0), want_msg);
        const char *hint = diag_hint(d, 0);
        ck_assert_msg(gk_str_eq(hint, want_hint), "row %d '%s': hint \"%s\", want \"%s\"", _i,
                      word, hint ? hint : "(none)", want_hint ? want_hint : "(none)");
    }
    free(word);
    free(want_path);
    free(want_real);
    free(want_msg);
    free(want_hint);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* The table is meant to cover every sigil on every target it matters for. */
START_TEST(test_table_size)
{
    ck_assert_int_ge(NCASES, 50);
}
END_TEST

/* ---- the context API ---------------------------------------------------- */

START_TEST(test_context_defaults_from_env)
{
    controlled_env();
    setenv("HOME", "/home/envu/", 1);
    setenv("USER", "envu", 1);
    setenv("TMPDIR", "/var//tmpx", 1);
    setenv("PATH", "/opt/bin:relative:/usr/bin::/bin", 1);
    setenv("XDG_CONFIG_HOME", "/home/envu/cfg", 1);
    setenv("XDG_DATA_HOME", "relative/data", 1); /* invalid per XDG: ignored */
    setenv("GRANTKIT_POLICY_PATH", "/pp1:/pp2", 1);
    ck_assert_int_eq(chdir("/"), 0);
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(ctx->target, GRANT_TARGET_HOST);
    ck_assert(ctx->implicit);
    ck_assert_str_eq(ctx->home, "/home/envu");
    ck_assert_str_eq(ctx->user, "envu");
    ck_assert_str_eq(ctx->cwd, "/");
    ck_assert_str_eq(ctx->tempdir, "/var/tmpx");
    ck_assert_str_eq(ctx->path, "/opt/bin:/usr/bin:/bin");
    ck_assert_str_eq(ctx->xdg[GK_XDG_CONFIG], "/home/envu/cfg");
    ck_assert_str_eq(ctx->xdg[GK_XDG_DATA], "/home/envu/.local/share");
    ck_assert_str_eq(ctx->xdg[GK_XDG_CACHE], "/home/envu/.cache");
    ck_assert_str_eq(ctx->xdg[GK_XDG_STATE], "/home/envu/.local/state");
    ck_assert_str_eq(ctx->xdg[GK_XDG_BIN], "/home/envu/.local/bin");
    ck_assert_str_eq(ctx->policy_path, "/pp1:/pp2");
    /* Nothing came from a flag. */
    unsigned flags = GK_CTX_BIT(GRANT_CTX_HOME) | GK_CTX_BIT(GRANT_CTX_USER) |
                     GK_CTX_BIT(GRANT_CTX_CWD) | GK_CTX_BIT(GRANT_CTX_TEMPDIR) |
                     GK_CTX_BIT(GRANT_CTX_PATH) | GK_CTX_BIT_TARGET | GK_CTX_BIT_IMPLICIT;
    for (int i = 0; i < GK_XDG_COUNT; i++)
        flags |= GK_CTX_BIT_XDG(i);
    ck_assert_uint_eq(ctx->explicit_mask & flags, 0);
    ck_assert(ctx->explicit_mask & GK_CTX_BIT_XDG_ENV(GK_XDG_CONFIG));
    ck_assert(!(ctx->explicit_mask & GK_CTX_BIT_XDG_ENV(GK_XDG_DATA)));
    ck_assert_str_eq(gk_target_name(ctx), "linux");
    ck_assert(!gk_target_is_offline(ctx));
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_context_fallbacks)
{
    controlled_env();
    setenv("HOME", "relative-home", 1); /* not absolute: use the passwd entry */
    unsetenv("USER");
    setenv("TMPDIR", "tmp", 1);
    unsetenv("PATH");
    char dir[] = "/tmp/gk-freeze-cwd-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(chdir(dir), 0);
    char *canon_dir = realpath(dir, NULL);

    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    struct passwd *pw = getpwuid(geteuid());
    if (pw) {
        ck_assert_str_eq(ctx->home, pw->pw_dir);
        ck_assert_str_eq(ctx->user, pw->pw_name);
    } else {
        ck_assert_str_eq(ctx->home, "/");
        char uid[32];
        snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
        ck_assert_str_eq(ctx->user, uid);
    }
    ck_assert_str_eq(ctx->cwd, canon_dir);
    ck_assert_str_eq(ctx->tempdir, "/tmp");
    ck_assert_str_eq(ctx->path, "/usr/local/bin:/usr/bin:/bin");
    ck_assert_str_eq(ctx->policy_path, GK_POLICY_DIR);
    char *cfg = gk_path_join(ctx->home, ".config");
    char *want = gk_lex_normalize(cfg);
    ck_assert_str_eq(ctx->xdg[GK_XDG_CONFIG], want);
    free(cfg);
    free(want);
    grant_context_free(ctx);
    ck_assert_int_eq(chdir("/"), 0);
    rmdir(dir);
    free(canon_dir);
}
END_TEST

/* --home moves the xdg defaults, never an XDG_*_HOME or a --xdg flag. */
START_TEST(test_xdg_follows_home)
{
    controlled_env();
    setenv("XDG_CACHE_HOME", "/elsewhere/cache", 1);
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_xdg(ctx, "state", "/home/u/st"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/h2/"), 0);
    ck_assert_str_eq(ctx->home, "/h2");
    ck_assert_str_eq(ctx->xdg[GK_XDG_CONFIG], "/h2/.config");
    ck_assert_str_eq(ctx->xdg[GK_XDG_DATA], "/h2/.local/share");
    ck_assert_str_eq(ctx->xdg[GK_XDG_CACHE], "/elsewhere/cache");
    ck_assert_str_eq(ctx->xdg[GK_XDG_STATE], "/home/u/st");
    ck_assert_str_eq(ctx->xdg[GK_XDG_BIN], "/h2/.local/bin");
    ck_assert(ctx->explicit_mask & GK_CTX_BIT_XDG(GK_XDG_STATE));
    ck_assert(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_HOME));
    /* NULL puts a value back on the default, which follows home again. */
    ck_assert_int_eq(grant_context_set_xdg(ctx, "state", NULL), 0);
    ck_assert_str_eq(ctx->xdg[GK_XDG_STATE], "/h2/.local/state");
    ck_assert(!(ctx->explicit_mask & GK_CTX_BIT_XDG(GK_XDG_STATE)));
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/h3"), 0);
    ck_assert_str_eq(ctx->xdg[GK_XDG_STATE], "/h3/.local/state");

    /* The environment's cache dir is now outside home: refused at use. */
    grant_diags *d = grant_diags_new();
    gk_fpath fp = {0};
    ck_assert_int_eq(gk_freeze_path(ctx, NULL, "xdg:cache/x", (gk_loc){0}, d, &fp), -1);
    ck_assert_str_eq(grant_diags_message(d, 0),
                     "xdg:cache resolves to '/elsewhere/cache', outside home '/h3'; refusing "
                     "(XDG_CACHE_HOME?)");
    ck_assert_int_eq(gk_freeze_path(ctx, NULL, "xdg:config/x", (gk_loc){0}, d, &fp), 0);
    ck_assert_str_eq(fp.path, "/h3/.config/x");
    gk_fpath_free(&fp);
    /* A profile for another host does not inherit this host's XDG_*_HOME;
     * values given with --xdg stay. */
    ck_assert_int_eq(grant_context_set_xdg(ctx, "state", "/h3/st"), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    ck_assert_str_eq(ctx->xdg[GK_XDG_CACHE], "/h3/.cache");
    ck_assert_str_eq(ctx->xdg[GK_XDG_STATE], "/h3/st");
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_context_set_validation)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "relative"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, ""), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/../x"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/h\xff"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "w"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "~/tmp"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, ""), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "a/b"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/bin:relative"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/bin::/usr/bin"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, (grant_ctx_key)99, "/x"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, NULL), -EINVAL);
    ck_assert_int_eq(grant_context_set(NULL, GRANT_CTX_HOME, "/x"), -EINVAL);
    ck_assert_int_eq(grant_context_set_xdg(ctx, "runtime", "/home/u/r"), -EINVAL);
    ck_assert_int_eq(grant_context_set_xdg(ctx, "data", "relative"), -EINVAL);
    ck_assert_int_eq(grant_context_set_target(ctx, (grant_target)7), -EINVAL);
    /* A drive letter is absolute only for windows. */
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:/Users/u"), -EINVAL);
    /* Failures changed nothing and set no flag bit. */
    ck_assert_str_eq(ctx->home, "/home/u");
    ck_assert_str_eq(ctx->user, "u");
    ck_assert_uint_eq(ctx->explicit_mask & 0xffffu, 0);

    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "alice"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/opt/bin:/bin"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/scratch/./t/"), 0);
    ck_assert_str_eq(ctx->tempdir, "/scratch/t");
    ck_assert_int_eq(grant_context_set_implicit(ctx, false), 0);
    ck_assert(!ctx->implicit);
    ck_assert_int_eq(grant_context_set_policy_path(ctx, "/a:/b"), 0);
    ck_assert_str_eq(ctx->policy_path, "/a:/b");
    setenv("GRANTKIT_POLICY_PATH", "/from-env", 1);
    ck_assert_int_eq(grant_context_set_policy_path(ctx, NULL), 0);
    ck_assert_str_eq(ctx->policy_path, "/from-env");
    ck_assert_uint_eq(ctx->explicit_mask & 0xffffu, GK_CTX_BIT(GRANT_CTX_USER) |
                                                        GK_CTX_BIT(GRANT_CTX_PATH) |
                                                        GK_CTX_BIT(GRANT_CTX_TEMPDIR) |
                                                        GK_CTX_BIT_IMPLICIT);

    /* A value set by a flag stays: a Unix tempdir or PATH is no value for
     * a windows context, so the target is refused, nothing changed. */
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), -EINVAL);
    ck_assert_int_eq(ctx->target, GRANT_TARGET_HOST);
    ck_assert_str_eq(ctx->tempdir, "/scratch/t");
    grant_context_free(ctx);

    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
    ck_assert(ctx->explicit_mask & GK_CTX_BIT_TARGET);
    /* Nothing of this Linux host: Windows' own defaults. */
    ck_assert_str_eq(ctx->home, "C:/Users/u");
    ck_assert_str_eq(ctx->tempdir, "C:/Users/u/AppData/Local/Temp");
    ck_assert_str_eq(ctx->path, "C:/Windows/System32;C:/Windows");
    ck_assert_ptr_null(ctx->cwd);
    ck_assert_str_eq(ctx->xdg[GK_XDG_CONFIG], "C:/Users/u/.config");
    /* The default home follows the user, and the tempdir the home. */
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "bob"), 0);
    ck_assert_str_eq(ctx->home, "C:/Users/bob");
    ck_assert_str_eq(ctx->tempdir, "C:/Users/bob/AppData/Local/Temp");
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:\\Users\\Alice\\"), 0);
    ck_assert_str_eq(ctx->home, "C:/Users/Alice");
    ck_assert_str_eq(ctx->tempdir, "C:/Users/Alice/AppData/Local/Temp");
    ck_assert_str_eq(ctx->xdg[GK_XDG_CONFIG], "C:/Users/Alice/.config");
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows;C:/bin"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows;bin"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:relative"), -EINVAL);
    /* Unix values are no Windows paths (nor are UNC names). */
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/home/alice"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/w"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "\\\\srv\\share"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin"), -EINVAL);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "C:/Windows;/usr/bin"), -EINVAL);
    ck_assert_int_eq(grant_context_set_xdg(ctx, "bin", "/home/u/bin"), -EINVAL);
    ck_assert_str_eq(ctx->home, "C:/Users/Alice");
    /* Leaving windows with a drive-letter home would make it relative. */
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), -EINVAL);
    ck_assert_int_eq(ctx->target, GRANT_TARGET_WINDOWS);
    grant_context_free(ctx);

    /* Defaults go back to this host's when a context leaves windows. */
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    ck_assert_str_eq(ctx->home, "/home/u");
    ck_assert_str_eq(ctx->tempdir, "/tmp");
    ck_assert_str_eq(ctx->path, "/usr/bin:/bin");
    ck_assert_ptr_nonnull(ctx->cwd);
    grant_context_free(ctx);
    grant_context_free(NULL);
    ck_assert_int_eq(grant_context_new(NULL), -EINVAL);
}
END_TEST

START_TEST(test_target_names)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    static const struct {
        grant_target t;
        const char *name;
        bool offline;
    } rows[] = {
        {GRANT_TARGET_HOST, "linux", false}, /* this suite runs on Linux */
        {GRANT_TARGET_LINUX, "linux", true},
        {GRANT_TARGET_MACOS, "macos", true},
        {GRANT_TARGET_WINDOWS, "windows", true},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ck_assert_int_eq(grant_context_set_target(ctx, rows[i].t), 0);
        ck_assert_str_eq(gk_target_name(ctx), rows[i].name);
        ck_assert(gk_target_is_offline(ctx) == rows[i].offline);
    }
    ck_assert_str_eq(gk_xdg_names[GK_XDG_CONFIG], "config");
    ck_assert_str_eq(gk_xdg_names[GK_XDG_BIN], "bin");
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_context_copy)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
    ck_assert_int_eq(grant_context_set_xdg(ctx, "bin", "/home/u/b"), 0);
    grant_context *c = gk_context_copy(ctx);
    ck_assert_ptr_ne(c->home, ctx->home);
    ck_assert_str_eq(c->home, ctx->home);
    ck_assert_str_eq(c->xdg[GK_XDG_BIN], "/home/u/b");
    ck_assert_ptr_ne(c->xdg[GK_XDG_BIN], ctx->xdg[GK_XDG_BIN]);
    ck_assert_str_eq(c->policy_path, ctx->policy_path);
    ck_assert_int_eq(c->target, GRANT_TARGET_MACOS);
    ck_assert_uint_eq(c->explicit_mask, ctx->explicit_mask);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/other"), 0);
    grant_context_free(ctx);
    ck_assert_str_eq(c->home, "/home/u"); /* independent of the original */
    ck_assert_str_eq(c->xdg[GK_XDG_DATA], "/home/u/.local/share");
    grant_context_free(c);
    ck_assert_ptr_null(gk_context_copy(NULL));
}
END_TEST

/* ---- the helpers on their own ------------------------------------------- */

START_TEST(test_lex_normalize)
{
    static const struct {
        const char *in, *out; /* out NULL: rejected */
    } rows[] = {
        {"/", "/"},           {"///", "/"},         {"/a/", "/a"},
        {"/a/./b", "/a/b"},   {"/a/b/../../c", "/c"}, {"/a/..", "/"},
        {"/..", NULL},        {"/a/../..", NULL},   {"relative", NULL},
        {"", NULL},           {"C:/x/../y", "C:/y"}, {"C:/", "C:/"},
        {"C:/..", NULL},      {"/...", "/..."},     {"/a/.hidden/./", "/a/.hidden"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *got = gk_lex_normalize(rows[i].in);
        ck_assert_msg(gk_str_eq(got, rows[i].out), "lex '%s' = '%s', want '%s'", rows[i].in,
                      got ? got : "(null)", rows[i].out ? rows[i].out : "(null)");
        free(got);
    }
    ck_assert_ptr_null(gk_lex_normalize(NULL));
}
END_TEST

START_TEST(test_canonicalize_offline)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    char *r;
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
    r = gk_canonicalize(ctx, "/var");
    ck_assert_str_eq(r, "/private/var");
    free(r);
    r = gk_canonicalize(ctx, "/variable");
    ck_assert_str_eq(r, "/variable");
    free(r);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
    r = gk_canonicalize(ctx, "C:\\Program Files\\Git");
    ck_assert_str_eq(r, "c:/program files/git");
    free(r);
    /* Only ASCII is folded (documented): non-ASCII bytes pass through. */
    r = gk_canonicalize(ctx, "/\xc3\x89T\xc3\x89");
    ck_assert_str_eq(r, "/\xc3\x89t\xc3\x89");
    free(r);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    r = gk_canonicalize(ctx, "/tmp/x");
    ck_assert_str_eq(r, "/tmp/x");
    free(r);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_HOST), 0);
    ck_assert_ptr_null(gk_canonicalize(ctx, "relative"));
    r = gk_canonicalize(ctx, "/");
    ck_assert_str_eq(r, "/");
    free(r);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_host_lexical_keeps_links)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    grant_diags *d = grant_diags_new();
    char *word = gk_printf("%s/dirlink/", tree);
    char *want = gk_printf("%s/dirlink", tree);
    char *out = NULL;
    ck_assert_int_eq(gk_freeze_lexical(ctx, NULL, word, (gk_loc){0}, d, &out), 0);
    ck_assert_str_eq(out, want);
    free(out);
    free(word);
    free(want);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_fpath_cmp)
{
    gk_fpath a = {"/z", "/a"}, b = {"/a", "/b"}, c = {"/b", "/a"};
    ck_assert_int_lt(gk_fpath_cmp(&a, &b), 0); /* real first */
    ck_assert_int_gt(gk_fpath_cmp(&a, &c), 0); /* then path */
    ck_assert_int_eq(gk_fpath_cmp(&a, &a), 0);
    gk_fpath hi = {"/\xc3\xa9", "/\xc3\xa9"}, lo = {"/z", "/z"};
    ck_assert_int_gt(gk_fpath_cmp(&hi, &lo), 0); /* bytewise: 0xC3 > 'z' */
    gk_fpath_free(NULL);
}
END_TEST

/* The diagnostic lands on the word it was given, in the one format. */
START_TEST(test_diag_position)
{
    controlled_env();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    const char *text = "grant a {\n  fs { read xdg:cofnig/x; }\n}\n";
    gk_source *src = gk_source_new("t.grant", text, strlen(text));
    const char *at = strstr(text, "xdg:");
    gk_loc loc = {src, (uint32_t)(at - text), (uint32_t)(at - text + strlen("xdg:cofnig/x"))};
    grant_diags *d = grant_diags_new();
    gk_fpath fp = {0};
    ck_assert_int_eq(gk_freeze_path(ctx, NULL, "xdg:cofnig/x", loc, d, &fp), -1);
    char *r = grant_diags_render(d, 0);
    ck_assert_msg(strstr(r, "t.grant:2:13: error: unknown sigil 'xdg:cofnig'\n") == r, "%s", r);
    ck_assert_msg(strstr(r, "fs { read xdg:cofnig/x; }") != NULL, "%s", r);
    ck_assert_msg(strstr(r, "^~~~~~~~~~~") != NULL, "%s", r);
    ck_assert_msg(strstr(r, "hint: did you mean 'xdg:config'?") != NULL, "%s", r);
    free(r);
    grant_diags_free(d);
    gk_source_unref(src);
    grant_context_free(ctx);
}
END_TEST

static Suite *freeze_suite(void)
{
    Suite *s = suite_create("freeze");
    TCase *t = tcase_create("table");
    tcase_add_unchecked_fixture(t, tree_setup, tree_teardown);
    tcase_add_loop_test(t, test_freeze_table, 0, NCASES);
    tcase_add_test(t, test_table_size);
    tcase_add_test(t, test_host_lexical_keeps_links);
    suite_add_tcase(s, t);

    TCase *c = tcase_create("context");
    tcase_add_test(c, test_context_defaults_from_env);
    tcase_add_test(c, test_context_fallbacks);
    tcase_add_test(c, test_xdg_follows_home);
    tcase_add_test(c, test_context_set_validation);
    tcase_add_test(c, test_target_names);
    tcase_add_test(c, test_context_copy);
    suite_add_tcase(s, c);

    TCase *h = tcase_create("helpers");
    tcase_add_test(h, test_lex_normalize);
    tcase_add_test(h, test_canonicalize_offline);
    tcase_add_test(h, test_fpath_cmp);
    tcase_add_test(h, test_diag_position);
    suite_add_tcase(s, h);
    return s;
}

int main(void)
{
    return gk_test_main(freeze_suite());
}
