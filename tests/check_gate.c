/* check_gate.c - the gate (grant-language.md §6): decision tables, the
 * projection held to the gate, and `grantc check`.
 *
 * 1. Decision tables: tests/data/gate/NAME.table, one Check case each.
 *    Every table runs in a fresh scratch directory, written '@' below
 *    (outside /tmp and every other implicit grant of the host, so that only
 *    the policy decides there). One directive or row per line; '#' starts a
 *    comment line; blank lines are skipped. '@' in any field expands to the
 *    scratch directory, '%' to a directory made for the run in the host's
 *    /tmp (host content the run's private /tmp does not hold).
 *
 *      setup mkdir DIR             mkdir -p
 *      setup touch FILE            an empty file (parents created)
 *      setup exe FILE              an executable regular file (mode 0755)
 *      setup symlink TARGET LINK   symlink(TARGET, LINK) (parents of LINK created)
 *      setup hardlink FILE LINK    link(FILE, LINK): another name, the same file
 *      setup chmod OCTAL PATH
 *      file NAME                   the lines up to a line "end" are written
 *      ...                         verbatim (with '@' expanded) to @/NAME, so
 *      end                         an origin NAME:N is line N of that block
 *      policy [--target=T] [--no-implicit] FILE... [--extend FILE]...
 *                                  compile FILEs (relative to @, or lib:NAME
 *                                  for the bundled policies/NAME, whose
 *                                  origins read lib:NAME:LINE) as grantc
 *                                  compile would stack them; the rows below
 *                                  ask this policy. Host (the default): cwd @,
 *                                  home @/home, user u, tempdir @/tmp, PATH
 *                                  @/bin:@/usr/bin, xdg under @/home (bin is
 *                                  @/home/.local/bin). Offline targets: home
 *                                  /home/u, cwd /w, tempdir /tmp, PATH
 *                                  /usr/bin:/bin; windows: home C:/Users/u,
 *                                  cwd C:/w, tempdir C:/Temp, PATH
 *                                  C:/Windows/System32;C:/Windows. The
 *                                  policy path is the bundled policies/.
 *      QUERY | ANSWER | ORIGIN | RULE [| KEY=VALUE]...
 *
 *    Fields of a row are split on " | " (so a pattern may hold a bare '|').
 *    QUERY: `read P`, `write P` (grant_check_fs: resolved as the kernel
 *    would), `read! P`, `write! P` (grant_check_fs_resolved: P taken as
 *    canonical, so a surface spelling can be asked), `exec ARGV...`
 *    (grant_check_exec), `execq SPELLING WALKED CANONICAL ARGV1` (`-` is
 *    NULL; grant_check_exec_query), `gate NAME`, `connect HOST PORT`
 *    (grant_check_connect; grant_decide_connect must agree).
 *    ANSWER: allowed, denied, not-found, or einval (the call must return
 *    -EINVAL; ORIGIN and RULE are then left out).
 *    ORIGIN: the verdict's origin, with a leading "@/" of the actual value
 *    dropped (policies live in @, so `agent.grant:7`), or implicit:linux,
 *    discard, policy-source, no-opinion. RULE: exactly. `*` skips either.
 *    KEY=VALUE checks more of the verdict: identity=, hint=, layer=,
 *    resolved= (grant_verdict_path); `-` means NULL. And changes the
 *    query: cwd=DIR (the cwd argument), PATH=LIST (exec's PATH).
 *
 *    Every row also holds the verdict's JSON to its accessors, and every fs
 *    row holds the gate's fast path (no verdict) to the explained answer.
 *
 * 2. The projection (gk_projection_build) of every bundled policy, and of
 *    the stacks in tests/data/gate/projection ('@' expanded), against the
 *    gate. Paths: each region's two spellings, implicit grants, pinned dirs
 *    and sources, their parents, children, siblings, and symlinks to them;
 *    each resolved by grant_check_fs, then answered by the projection's
 *    regions exactly as by grant_check_fs_resolved. Commands: every name the
 *    policy lists (and a few common ones) made real on the fake PATH, every
 *    file, a fresh name in every dir: the gate admits one for some argv[1]
 *    iff the projection's admit/veto lists let its file run; and every
 *    listed admit (veto) entry is one the gate admits (denies).
 *
 * 3. grantc check, the real binary: verdict text, JSON, exit statuses.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lattice/lattice.h"
#include "gate/gate.h"
#include "testutil.h"

/* ---- scratch directories --------------------------------------------------- */

/* Every implicit grant of a Linux host (backends.md), by prefix: a scratch
 * directory inside one would be allowed whatever the policy says. */
static const char *const implicit_prefixes[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32",
                                                "/lib64", "/etc", "/tmp", "/dev", "/proc"};

static bool under_implicit(const char *p)
{
    for (size_t i = 0; i < sizeof implicit_prefixes / sizeof *implicit_prefixes; i++)
        if (gk_path_within(p, implicit_prefixes[i]))
            return true;
    return false;
}

/* One root for the whole run, made by main before Check forks a case, and
 * removed by main afterwards: a failing case ends at once (Check's _exit),
 * so a case cannot be trusted to clean up after itself. */
static char *scratch_root;
/* The same for the host's /tmp ('%' in the tables). */
static char *host_tmp_root;

/* A canonical directory outside every implicit grant: $GK_GATE_SCRATCH,
 * /var/tmp, the build directory or $HOME, the first that works. */
static char *make_root(void)
{
    const char *env = getenv("GK_GATE_SCRATCH");
    const char *cands[] = {env, "/var/tmp", gk_test_builddir(), getenv("HOME")};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        if (!cands[i] || cands[i][0] != '/')
            continue;
        char *base = realpath(cands[i], NULL);
        if (!base || under_implicit(base)) {
            free(base);
            continue;
        }
        char *tmpl = gk_printf("%s/gk-check-gate-XXXXXX", base);
        free(base);
        char *real = mkdtemp(tmpl) ? realpath(tmpl, NULL) : NULL;
        free(tmpl);
        if (real)
            return real;
    }
    fprintf(stderr, "check_gate: no scratch directory outside the implicit grants "
                    "(set GK_GATE_SCRATCH)\n");
    exit(99);
}

/* A fresh directory for one table or case. */
static char *make_scratch(void)
{
    ck_assert_ptr_nonnull(scratch_root);
    char *tmpl = gk_printf("%s/case-XXXXXX", scratch_root);
    ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp %s: %s", tmpl, strerror(errno));
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

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdir_p(const char *path)
{
    char *p = gk_strdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    int rc = mkdir(p, 0755);
    struct stat st;
    ck_assert_msg(rc == 0 || (errno == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode)),
                  "mkdir -p %s: %s", p, strerror(errno));
    free(p);
}

static void mkdir_parent(const char *path)
{
    char *parent = gk_path_parent(path);
    if (parent)
        mkdir_p(parent);
    free(parent);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    mkdir_parent(path);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

/* s with every '@' replaced by dir, every '%' by host_tmp_root. */
static char *expand(const char *s, const char *dir)
{
    gk_buf b = {0};
    gk_buf_puts(&b, "");
    for (; *s; s++) {
        if (*s == '@')
            gk_buf_puts(&b, dir);
        else if (*s == '%' && host_tmp_root)
            gk_buf_puts(&b, host_tmp_root);
        else
            gk_buf_putc(&b, *s);
    }
    return gk_buf_steal(&b, NULL);
}

/* Split on runs of spaces. */
static gk_strvec words(const char *s)
{
    gk_strvec v = {0};
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        const char *e = s;
        while (*e && *e != ' ' && *e != '\t')
            e++;
        gk_strvec_push_take(&v, gk_strndup(s, (size_t)(e - s)));
        s = e;
    }
    return v;
}

/* ---- contexts ------------------------------------------------------------ */

static const char *const xdg_rel[][2] = {{"config", ".config"},
                                         {"data", ".local/share"},
                                         {"cache", ".cache"},
                                         {"state", ".local/state"},
                                         {"bin", ".local/bin"}};

/* The host context of the tables and the projection test: everything the
 * policy names through a sigil lands in the scratch directory. */
static grant_context *host_context(const char *dir, const char *cwd, bool implicit)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_HOST), 0);
    char *home = gk_path_join(dir, "home"), *tmp = gk_path_join(dir, "tmp");
    char *path = gk_printf("%s/bin:%s/usr/bin", dir, dir);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, home), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, cwd), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, tmp), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, path), 0);
    /* Explicitly, so this machine's XDG_*_HOME cannot leak in. */
    for (size_t i = 0; i < sizeof xdg_rel / sizeof *xdg_rel; i++) {
        char *x = gk_path_join(home, xdg_rel[i][1]);
        ck_assert_int_eq(grant_context_set_xdg(ctx, xdg_rel[i][0], x), 0);
        free(x);
    }
    char *pp = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    ck_assert_int_eq(grant_context_set_implicit(ctx, implicit), 0);
    free(pp);
    free(home);
    free(tmp);
    free(path);
    return ctx;
}

static grant_context *offline_context(grant_target target, bool implicit)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, target), 0);
    bool win = target == GRANT_TARGET_WINDOWS; /* drive paths only */
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, win ? "C:/Users/u" : "/home/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, win ? "C:/w" : "/w"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, win ? "C:/Temp" : "/tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH,
                                       win ? "C:/Windows/System32;C:/Windows" : "/usr/bin:/bin"),
                     0);
    char *pp = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    ck_assert_int_eq(grant_context_set_implicit(ctx, implicit), 0);
    free(pp);
    return ctx;
}

/* ---- 1. decision tables ---------------------------------------------------- */

static gk_strvec table_files; /* filled by main, before the fork of each case */

typedef struct table_run {
    const char *name; /* the table's file name, for messages */
    char *dir;        /* '@' */
    grant_policy *policy;
    unsigned line;
    size_t rows, failures;
    gk_buf report;
} table_run;

static void fail_row(table_run *t, const char *row, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail_row(table_run *t, const char *row, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = gk_vprintf(fmt, ap);
    va_end(ap);
    gk_buf_printf(&t->report, "\n%s:%u: %s\n    %s", t->name, t->line, row, msg);
    free(msg);
    t->failures++;
}

/* A malformed table is the table's bug, not the gate's: stop at once. */
#define TABLE_ERROR(t, ...)                                                                \
    ck_abort_msg("%s:%u: %s", (t)->name, (t)->line, gk_printf(__VA_ARGS__))

static void run_setup(table_run *t, const char *rest)
{
    gk_strvec w = words(rest);
    if (w.n == 0)
        TABLE_ERROR(t, "setup: missing command");
    const char *cmd = w.v[0];
    if (strcmp(cmd, "mkdir") == 0 && w.n == 2) {
        mkdir_p(w.v[1]);
    } else if (strcmp(cmd, "touch") == 0 && w.n == 2) {
        write_file(w.v[1], "", 0644);
    } else if (strcmp(cmd, "exe") == 0 && w.n == 2) {
        write_file(w.v[1], "#!/bin/sh\nexit 0\n", 0755);
    } else if (strcmp(cmd, "symlink") == 0 && w.n == 3) {
        mkdir_parent(w.v[2]);
        if (symlink(w.v[1], w.v[2]) != 0)
            TABLE_ERROR(t, "symlink %s %s: %s", w.v[1], w.v[2], strerror(errno));
    } else if (strcmp(cmd, "hardlink") == 0 && w.n == 3) {
        mkdir_parent(w.v[2]);
        if (link(w.v[1], w.v[2]) != 0)
            TABLE_ERROR(t, "link %s %s: %s", w.v[1], w.v[2], strerror(errno));
    } else if (strcmp(cmd, "chmod") == 0 && w.n == 3) {
        if (chmod(w.v[2], (mode_t)strtoul(w.v[1], NULL, 8)) != 0)
            TABLE_ERROR(t, "chmod %s: %s", w.v[2], strerror(errno));
    } else {
        TABLE_ERROR(t, "setup: unknown command '%s' or wrong arity", rest);
    }
    gk_strvec_free(&w);
}

/* A policy FILE of a table: relative to @, or lib:NAME, the bundled
 * policies/NAME (the policy library's own tables, tests/data/gate/library). */
static char *table_file(table_run *t, const char *name)
{
    if (gk_has_prefix(name, "lib:")) {
        gk_autofree char *rel = gk_printf("policies/%s", name + 4);
        return gk_test_path(rel);
    }
    return gk_path_join(t->dir, name);
}

static void run_policy(table_run *t, const char *rest)
{
    gk_strvec w = words(rest);
    gk_strvec files = {0}, extends = {0};
    bool implicit = true, offline = false;
    grant_target target = GRANT_TARGET_HOST;
    for (size_t i = 0; i < w.n; i++) {
        const char *a = w.v[i];
        if (strcmp(a, "--no-implicit") == 0) {
            implicit = false;
        } else if (gk_has_prefix(a, "--target=")) {
            const char *v = a + 9;
            offline = true;
            target = strcmp(v, "linux") == 0   ? GRANT_TARGET_LINUX
                     : strcmp(v, "macos") == 0 ? GRANT_TARGET_MACOS
                     : strcmp(v, "windows") == 0
                         ? GRANT_TARGET_WINDOWS
                         : (TABLE_ERROR(t, "unknown target %s", v), GRANT_TARGET_HOST);
        } else if (strcmp(a, "--extend") == 0 && i + 1 < w.n) {
            gk_strvec_push_take(&extends, table_file(t, w.v[++i]));
        } else {
            gk_strvec_push_take(&files, table_file(t, a));
        }
    }
    if (!files.n)
        TABLE_ERROR(t, "policy: no FILE");
    grant_context *ctx = offline ? offline_context(target, implicit)
                                 : host_context(t->dir, t->dir, implicit);
    grant_diags *d = grant_diags_new();
    grant_policy_free(t->policy);
    t->policy = NULL;
    int rc = grant_compile(ctx, (const char *const *)files.v, files.n,
                           (const char *const *)extends.v, extends.n, d, &t->policy);
    if (rc < 0 || !t->policy)
        TABLE_ERROR(t, "policy %s does not compile:\n%s", rest, gk_test_render_diags(d));
    grant_diags_free(d);
    grant_context_free(ctx);
    gk_strvec_free(&files);
    gk_strvec_free(&extends);
    gk_strvec_free(&w);
}

static const char *answer_name(grant_answer a)
{
    return a == GRANT_ALLOWED ? "allowed" : a == GRANT_NOT_FOUND ? "not-found" : "denied";
}

static char *describe(const grant_verdict *v)
{
    const char *h = grant_verdict_hint(v), *l = grant_verdict_layer(v);
    const char *id = grant_verdict_identity(v), *p = grant_verdict_path(v);
    return gk_printf("got %s | %s | %s | identity=%s | hint=%s | layer=%s | resolved=%s",
                     answer_name(grant_verdict_answer(v)), grant_verdict_origin(v),
                     grant_verdict_rule(v), id ? id : "-", h ? h : "-", l ? l : "-",
                     p ? p : "-");
}

/* The verdict's JSON is one canonical object whose members are its
 * accessors. Returns a message, or NULL. */
static char *json_mismatch(const grant_verdict *v)
{
    char *text = grant_verdict_json(v);
    if (!text)
        return gk_strdup("grant_verdict_json returned NULL");
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    char *why = NULL;
    if (!j || !json_is_object(j)) {
        why = gk_printf("verdict JSON does not parse: %s", text);
        goto out;
    }
    static const char *const keys[] = {"answer", "hint", "identity", "layer",
                                       "origin", "path", "rule"};
    const char *want[] = {answer_name(grant_verdict_answer(v)),
                          grant_verdict_hint(v),
                          grant_verdict_identity(v),
                          grant_verdict_layer(v),
                          grant_verdict_origin(v),
                          grant_verdict_path(v),
                          grant_verdict_rule(v)};
    if (json_object_size(j) != 7) {
        why = gk_printf("verdict JSON has %zu members: %s", json_object_size(j), text);
        goto out;
    }
    for (size_t i = 0; i < 7; i++) {
        json_t *m = json_object_get(j, keys[i]);
        bool ok = want[i] ? json_is_string(m) && strcmp(json_string_value(m), want[i]) == 0
                          : json_is_null(m);
        if (!ok) {
            why = gk_printf("verdict JSON member %s is not %s: %s", keys[i],
                            want[i] ? want[i] : "null", text);
            goto out;
        }
    }
    /* Canonical: keys sorted, no insignificant whitespace, UTF-8 raw. */
    char *again = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    if (strcmp(again, text) != 0)
        why = gk_printf("verdict JSON is not canonical: %s (expected %s)", text, again);
    free(again);
out:
    json_decref(j);
    free(text);
    return why;
}

static bool field_eq(const char *want, const char *got)
{
    if (strcmp(want, "-") == 0)
        return got == NULL;
    return got && strcmp(want, got) == 0;
}

static void check_verdict(table_run *t, const char *row, const grant_verdict *v,
                          gk_strvec *fields)
{
    const char *want_answer = fields->v[1];
    char *got = describe(v);
    char *libdir = NULL, *lib_origin = NULL; /* freed at out: the gotos pass them */
    if (strcmp(want_answer, answer_name(grant_verdict_answer(v))) != 0) {
        fail_row(t, row, "answer: want %s; %s", want_answer, got);
        goto out;
    }
    if (fields->n < 4) {
        fail_row(t, row, "a row needs ORIGIN and RULE; %s", got);
        goto out;
    }
    const char *origin = grant_verdict_origin(v);
    size_t dl = strlen(t->dir);
    if (origin && strncmp(origin, t->dir, dl) == 0 && origin[dl] == '/')
        origin += dl + 1;
    /* A bundled policy's origin as lib:NAME:LINE, as the table names it. */
    libdir = gk_test_path("policies/");
    if (origin && gk_has_prefix(origin, libdir))
        origin = lib_origin = gk_printf("lib:%s", origin + strlen(libdir));
    if (strcmp(fields->v[2], "*") != 0 && !field_eq(fields->v[2], origin))
        fail_row(t, row, "origin: want %s; %s", fields->v[2], got);
    char *rule = expand(fields->v[3], t->dir);
    if (strcmp(rule, "*") != 0 && !field_eq(rule, grant_verdict_rule(v)))
        fail_row(t, row, "rule: want %s; %s", rule, got);
    free(rule);
    for (size_t i = 4; i < fields->n; i++) {
        const char *kv = fields->v[i], *eq = strchr(kv, '=');
        if (!eq)
            TABLE_ERROR(t, "field '%s' is not KEY=VALUE", kv);
        size_t kl = (size_t)(eq - kv);
        char *want = expand(eq + 1, t->dir);
        const char *have;
        if (kl == 8 && strncmp(kv, "identity", kl) == 0)
            have = grant_verdict_identity(v);
        else if (kl == 4 && strncmp(kv, "hint", kl) == 0)
            have = grant_verdict_hint(v);
        else if (kl == 5 && strncmp(kv, "layer", kl) == 0)
            have = grant_verdict_layer(v);
        else if (kl == 8 && strncmp(kv, "resolved", kl) == 0)
            have = grant_verdict_path(v);
        else if ((kl == 3 && strncmp(kv, "cwd", kl) == 0) ||
                 (kl == 4 && strncmp(kv, "PATH", kl) == 0)) {
            free(want);
            continue; /* query modifiers */
        } else
            TABLE_ERROR(t, "unknown key in '%s'", kv);
        if (!field_eq(want, have))
            fail_row(t, row, "%.*s: want %s; %s", (int)kl, kv, want, got);
        free(want);
    }
    char *js = json_mismatch(v);
    if (js)
        fail_row(t, row, "%s", js);
    free(js);
out:
    free(got);
    free(libdir);
    free(lib_origin);
}

/* The value of query modifier key (cwd, PATH) among the row's fields, or NULL. */
static char *modifier(table_run *t, gk_strvec *fields, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 4; i < fields->n; i++)
        if (strncmp(fields->v[i], key, kl) == 0 && fields->v[i][kl] == '=')
            return expand(fields->v[i] + kl + 1, t->dir);
    return NULL;
}

static void run_row(table_run *t, const char *row)
{
    if (!t->policy)
        TABLE_ERROR(t, "a row before any policy");
    gk_strvec fields = {0};
    for (const char *s = row;;) {
        const char *sep = strstr(s, " | ");
        size_t n = sep ? (size_t)(sep - s) : strlen(s);
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        while (n && (*s == ' ' || *s == '\t'))
            s++, n--;
        gk_strvec_push_take(&fields, gk_strndup(s, n));
        if (!sep)
            break;
        s = sep + 3;
    }
    if (fields.n < 2)
        TABLE_ERROR(t, "a row needs QUERY | ANSWER | ORIGIN | RULE");
    char *query = expand(fields.v[0], t->dir);
    gk_strvec q = words(query);
    if (q.n < 2)
        TABLE_ERROR(t, "query '%s' needs an operand", query);
    const char *kind = q.v[0];
    bool want_einval = strcmp(fields.v[1], "einval") == 0;
    char *cwd = modifier(t, &fields, "cwd"), *path_env = modifier(t, &fields, "PATH");
    grant_verdict *v = NULL;
    int rc;
    bool fs = false;
    grant_op op = GRANT_OP_READ;
    if (strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0 || strcmp(kind, "read!") == 0 ||
        strcmp(kind, "write!") == 0) {
        fs = true;
        op = kind[0] == 'r' ? GRANT_OP_READ : GRANT_OP_WRITE;
        if (q.n != 2)
            TABLE_ERROR(t, "%s takes one path", kind);
        if (strchr(kind, '!'))
            rc = grant_check_fs_resolved(t->policy, op, q.v[1], &v);
        else
            rc = grant_check_fs(t->policy, op, q.v[1], cwd, &v);
    } else if (strcmp(kind, "exec") == 0) {
        rc = grant_check_exec(t->policy, (const char *const *)q.v + 1, q.n - 1, path_env, cwd,
                              &v);
    } else if (strcmp(kind, "execq") == 0) {
        if (q.n != 5)
            TABLE_ERROR(t, "execq takes SPELLING WALKED CANONICAL ARGV1");
        const char *id[4];
        for (int i = 0; i < 4; i++)
            id[i] = strcmp(q.v[i + 1], "-") == 0 ? NULL : q.v[i + 1];
        grant_exec_query eq = {id[0], id[1], id[2], id[3]};
        rc = grant_check_exec_query(t->policy, &eq, &v);
    } else if (strcmp(kind, "gate") == 0) {
        rc = grant_check_gate(t->policy, q.v[1], &v);
    } else if (strcmp(kind, "connect") == 0) {
        if (q.n != 3)
            TABLE_ERROR(t, "connect takes HOST PORT");
        unsigned port = (unsigned)strtoul(q.v[2], NULL, 10);
        rc = grant_check_connect(t->policy, q.v[1], port, &v);
        int d = grant_decide_connect(t->policy, q.v[1], port);
        if (rc < 0 ? d != rc : d != (grant_verdict_answer(v) == GRANT_ALLOWED))
            fail_row(t, row, "grant_decide_connect says %d, the verdict %d", d, rc);
    } else {
        TABLE_ERROR(t, "unknown query '%s'", kind);
    }
    t->rows++;
    if (want_einval) {
        if (rc != -EINVAL)
            fail_row(t, row, "want -EINVAL, got %d", rc);
    } else if (rc < 0 || !v) {
        fail_row(t, row, "the call failed: %s", strerror(-rc));
    } else {
        check_verdict(t, row, v, &fields);
        /* The fast path (no verdict: the hashed index) gives the same answer
         * on the resolved path as the explaining fold. */
        const char *resolved = grant_verdict_path(v);
        if (fs && resolved && resolved[0] == '/') {
            grant_answer fast = gk_gate_fs(t->policy, op, resolved, NULL);
            if (fast != grant_verdict_answer(v))
                fail_row(t, row, "fast path says %s on %s, the explained answer is %s",
                         answer_name(fast), resolved, answer_name(grant_verdict_answer(v)));
        }
    }
    grant_verdict_free(v);
    free(cwd);
    free(path_env);
    gk_strvec_free(&q);
    free(query);
    gk_strvec_free(&fields);
}

/* Run one table: directives in order, each row checked (failures go to
 * t->report, so one run shows every wrong row). */
static void run_table(table_run *t, const char *path)
{
    char *text = gk_test_read(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    gk_buf file = {0};
    char *file_name = NULL;
    unsigned file_start = 0;
    t->line = 0;
    /* strtok_r would merge empty lines, and a file block keeps them. */
    for (char *s = text; s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        char *line = s;
        s = nl ? nl + 1 : NULL;
        t->line++;
        if (file_name) {
            if (strcmp(line, "end") == 0) {
                char *dst = gk_path_join(t->dir, file_name);
                char *body = expand(file.data ? file.data : "", t->dir);
                write_file(dst, body, 0644);
                free(body);
                free(dst);
                free(file_name);
                file_name = NULL;
                gk_buf_free(&file);
            } else {
                gk_buf_puts(&file, line);
                gk_buf_putc(&file, '\n');
            }
            continue;
        }
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line || *line == '#')
            continue;
        if (gk_has_prefix(line, "file ")) {
            file_name = gk_strdup(line + 5);
            file_start = t->line;
            gk_buf_puts(&file, "");
        } else if (gk_has_prefix(line, "setup ")) {
            char *x = expand(line + 6, t->dir);
            run_setup(t, x);
            free(x);
        } else if (gk_has_prefix(line, "policy ")) {
            run_policy(t, line + 7);
        } else {
            run_row(t, line);
        }
    }
    if (file_name)
        ck_abort_msg("%s:%u: file %s has no 'end'", t->name, file_start, file_name);
    free(text);
}

START_TEST(decision_table)
{
    ck_assert_msg((size_t)_i < table_files.n, "no table %d", _i);
    const char *path = table_files.v[_i];
    table_run t = {0};
    t.name = gk_basename(path);
    t.dir = make_scratch();
    run_table(&t, path);
    grant_policy_free(t.policy);
    rm_tree(t.dir);
    free(t.dir);
    ck_assert_msg(t.rows > 0, "%s has no rows", t.name);
    if (t.failures)
        fprintf(stderr, "%s:%s\n", t.name, t.report.data);
    ck_assert_msg(t.failures == 0, "%s: %zu of %zu rows failed:%.3000s", t.name, t.failures,
                  t.rows, t.report.data ? t.report.data : "");
    gk_buf_free(&t.report);
}
END_TEST

/* Rows, counted without running them: every line outside a file block that
 * is not a directive. */
static size_t count_rows(const char *path)
{
    char *text = gk_test_read(path, NULL);
    ck_assert_ptr_nonnull(text);
    size_t n = 0;
    bool in_file = false;
    for (char *s = text; s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        char *line = s;
        s = nl ? nl + 1 : NULL;
        if (in_file) {
            in_file = strcmp(line, "end") != 0;
            continue;
        }
        while (*line == ' ')
            line++;
        if (!*line || *line == '#' || gk_has_prefix(line, "setup ") ||
            gk_has_prefix(line, "policy "))
            continue;
        if (gk_has_prefix(line, "file ")) {
            in_file = true;
            continue;
        }
        n++;
    }
    free(text);
    return n;
}

/* The issue asks for at least 150 rows; every table must also say something. */
START_TEST(tables_are_big_enough)
{
    ck_assert_msg(table_files.n >= 10, "only %zu tables", table_files.n);
    size_t total = 0;
    for (size_t i = 0; i < table_files.n; i++) {
        size_t n = count_rows(table_files.v[i]);
        ck_assert_msg(n >= 5, "%s has only %zu rows", table_files.v[i], n);
        total += n;
    }
    ck_assert_msg(total >= 150, "only %zu rows in all tables", total);
}
END_TEST

/* ---- 2. the projection against the gate ----------------------------------- */

static bool listed(const gk_strvec *v, const char *p)
{
    for (size_t i = 0; i < v->n; i++)
        if (gk_path_within(p, v->v[i]))
            return true;
    return false;
}

static bool in_regions(const gk_regions *r, const char *p, bool both)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(p, r->v[i].p.real) || (both && gk_path_within(p, r->v[i].p.path)))
            return true;
    return false;
}

/* The Linux private /tmp (an empty tmpfs, backends.md): below it the run
 * has only what it creates, and the host entries bound by a read region.
 * Does the tmpfs itself hold p (not bound, no host entry under that name)? */
static bool private_tmp_holds(const gk_projection *pr, const char *p)
{
    for (size_t i = 0; i < pr->implicit.write.n; i++) {
        const char *d = pr->implicit.write.v[i];
        if (strcmp(p, d) == 0 || !gk_path_within(p, d))
            continue;
        if (in_regions(&pr->read, p, false))
            return false;
        const char *rest = p + strlen(d) + 1;
        const char *slash = strchr(rest, '/');
        gk_autofree char *top = gk_strndup(p, slash ? (size_t)(slash - p) : strlen(p));
        struct stat st;
        return lstat(top, &st) != 0;
    }
    return true;
}

/* What a backend rendering the projection allows on a canonical path. */
static grant_answer projection_fs(const gk_projection *pr, grant_op op, const char *p)
{
    if (strcmp(p, "/dev/null") == 0)
        return GRANT_ALLOWED;
    if (in_regions(&pr->deny, p, true))
        return GRANT_DENIED;
    /* The policy's own sources are readonly during a run (cli.md). */
    if (op == GRANT_OP_WRITE && (in_regions(&pr->readonly, p, true) || listed(&pr->protect, p)))
        return GRANT_DENIED;
    if (!pr->fs_restricted)
        return GRANT_ALLOWED;
    if (in_regions(op == GRANT_OP_WRITE ? &pr->write : &pr->read, p, false))
        return GRANT_ALLOWED;
    const gk_implicit *im = &pr->implicit;
    if (listed(&im->write, p))
        return private_tmp_holds(pr, p) ? GRANT_ALLOWED : GRANT_DENIED;
    /* A device node is granted itself; /dev/shm is a directory. */
    for (size_t i = 0; i < im->devices.n; i++)
        if (strcmp(im->devices.v[i], "/dev/shm") == 0 ? gk_path_within(p, im->devices.v[i])
                                                       : strcmp(p, im->devices.v[i]) == 0)
            return GRANT_ALLOWED;
    if (op == GRANT_OP_READ && (listed(&im->read, p) || (im->proc && gk_path_within(p, "/proc"))))
        return GRANT_ALLOWED;
    return GRANT_DENIED;
}

/* What a backend allows to execute: the admit list when some layer
 * restricts exec, minus the veto list. */
static bool projection_exec(const gk_projection *pr, const char *canonical)
{
    if (listed(&pr->exec_veto, canonical))
        return false;
    return !pr->exec_restricted || listed(&pr->exec_admit, canonical);
}

static void push_region_paths(gk_strvec *out, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        gk_strvec_push(out, r->v[i].p.path);
        gk_strvec_push(out, r->v[i].p.real);
    }
}

/* The policy's own prefixes: projected regions, every layer's regions,
 * implicit grants, pinned dirs and sources. */
static gk_strvec policy_prefixes(const grant_policy *p, const gk_projection *pr)
{
    gk_strvec v = {0};
    push_region_paths(&v, &pr->read);
    push_region_paths(&v, &pr->write);
    push_region_paths(&v, &pr->readonly);
    push_region_paths(&v, &pr->deny);
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_fs)
            continue;
        push_region_paths(&v, &f->fs.read);
        push_region_paths(&v, &f->fs.write);
        push_region_paths(&v, &f->fs.readonly);
        push_region_paths(&v, &f->fs.deny);
    }
    const gk_strvec *lists[] = {&pr->implicit.read, &pr->implicit.write, &pr->implicit.devices,
                                &pr->pinned};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        for (size_t k = 0; k < lists[i]->n; k++)
            gk_strvec_push(&v, lists[i]->v[k]);
    gk_strvec_push(&v, "/proc");
    for (size_t i = 0; i < p->nsources; i++) {
        char *r = realpath(p->sources[i].file, NULL);
        if (r)
            gk_strvec_push_take(&v, r);
    }
    gk_strvec_sort_unique(&v);
    return v;
}

/* Prefixes, their parents, children and siblings, and symlinks to each of
 * them (and into them) made under dir/links. */
static gk_strvec probe_paths(const gk_strvec *prefixes, const char *dir)
{
    gk_strvec v = {0};
    char *links = gk_printf("%s/links-XXXXXX", dir); /* fresh for each policy */
    ck_assert_ptr_nonnull(mkdtemp(links));
    for (size_t i = 0; i < prefixes->n; i++) {
        const char *p = prefixes->v[i];
        gk_strvec_push(&v, p);
        gk_strvec_push_take(&v, gk_path_join(p, "gk-child"));
        gk_strvec_push_take(&v, gk_printf("%s-gk", p)); /* same prefix, another component */
        char *parent = gk_path_parent(p);
        if (parent) {
            gk_strvec_push(&v, parent);
            gk_strvec_push_take(&v, gk_path_join(parent, "gk-sibling"));
        }
        free(parent);
        char *link = gk_printf("%s/l%zu", links, i);
        if (symlink(p, link) == 0) {
            gk_strvec_push(&v, link);
            gk_strvec_push_take(&v, gk_path_join(link, "gk-child"));
            gk_strvec_push_take(&v, gk_printf("%s/..", link)); /* the link's target's parent */
        }
        free(link);
    }
    const char *extra[] = {"/", "/dev/null", "/etc/shadow", "/root", "/var/tmp"};
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        gk_strvec_push(&v, extra[i]);
    /* Host content under the private /tmp, a host link there leading out,
     * and a link from the tree into it. */
    gk_autofree char *secret = gk_path_join(host_tmp_root, "secret");
    gk_autofree char *out = gk_printf("%s/out-%s", host_tmp_root, gk_basename(links));
    gk_autofree char *in = gk_path_join(links, "into-tmp");
    write_file(secret, "s\n", 0644);
    ck_assert_int_eq(symlink(dir, out), 0);
    ck_assert_int_eq(symlink(secret, in), 0);
    const char *host_tmp[] = {host_tmp_root, secret, out, in};
    for (size_t i = 0; i < sizeof host_tmp / sizeof *host_tmp; i++) {
        gk_strvec_push(&v, host_tmp[i]);
        gk_strvec_push_take(&v, gk_path_join(host_tmp[i], "gk-child"));
    }
    gk_strvec_push(&v, dir);
    gk_strvec_push_take(&v, gk_path_join(dir, "elsewhere"));
    free(links);
    gk_strvec_sort_unique(&v);
    return v;
}

static void collect_exec(const grant_policy *p, gk_strvec *names, gk_strvec *files,
                         gk_strvec *dirs, gk_strvec *subs)
{
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        const gk_exec_dim *x = &f->exec;
        for (size_t i = 0; i < x->names.n; i++) {
            gk_strvec_push(names, x->names.v[i].key);
            for (size_t k = 0; k < x->names.v[i].subs.n; k++)
                gk_strvec_push(subs, x->names.v[i].subs.v[k]);
        }
        for (size_t i = 0; i < x->files.n; i++) {
            gk_strvec_push(files, x->files.v[i].key);
            for (size_t k = 0; k < x->files.v[i].subs.n; k++)
                gk_strvec_push(subs, x->files.v[i].subs.v[k]);
        }
        for (size_t i = 0; i < x->dirs.n; i++)
            gk_strvec_push(dirs, x->dirs.v[i].key);
        for (size_t i = 0; i < x->veto_names.n; i++)
            gk_strvec_push(names, x->veto_names.v[i].key);
        for (size_t i = 0; i < x->veto_files.n; i++)
            gk_strvec_push(files, x->veto_files.v[i].key);
        for (size_t i = 0; i < x->veto_dirs.n; i++)
            gk_strvec_push(dirs, x->veto_dirs.v[i].key);
    }
    gk_strvec_sort_unique(names);
    gk_strvec_sort_unique(files);
    gk_strvec_sort_unique(dirs);
    gk_strvec_sort_unique(subs);
}

/* Does the gate admit the identities for some argv[1]? */
static bool gate_admits_some(const grant_policy *p, const char *spelling, const char *walked,
                             const char *canonical, const gk_strvec *subs)
{
    for (size_t i = 0; i < subs->n + 2; i++) {
        const char *argv1 = i == 0 ? NULL : i == 1 ? "gk-any" : subs->v[i - 2];
        grant_exec_query q = {spelling, walked, canonical, argv1};
        grant_verdict *v = NULL;
        ck_assert_int_eq(grant_check_exec_query(p, &q, &v), 0);
        bool yes = grant_verdict_answer(v) != GRANT_DENIED;
        grant_verdict_free(v);
        if (yes)
            return true;
    }
    return false;
}

/* Copy every .grant/.yaml file below src into dst, keeping the tree (and
 * expanding '@' to at, when given), so the policies' own sources lie inside
 * the scratch cwd and its write region. Returns the copies. */
static gk_strvec copy_policies(const char *src, const char *dst, const char *at)
{
    gk_strvec out = {0};
    const char *suffixes[] = {".grant", ".yaml", ".yml"};
    for (size_t s = 0; s < 3; s++) {
        gk_strvec files = gk_test_files(src, suffixes[s]);
        for (size_t i = 0; i < files.n; i++) {
            const char *rel = files.v[i] + strlen(src) + 1;
            char *to = gk_path_join(dst, rel);
            char *text = gk_test_read(files.v[i], NULL);
            ck_assert_ptr_nonnull(text);
            char *body = at ? expand(text, at) : gk_strdup(text);
            write_file(to, body, 0644);
            free(body);
            free(text);
            gk_strvec_push_take(&out, to);
        }
        gk_strvec_free(&files);
    }
    gk_strvec_sort_unique(&out);
    return out;
}

/* Programs every policy is asked about besides the ones it names, so that
 * patterns and deny-only sections meet names they did not list. */
static const char *const common_programs[] = {"bash", "sh", "zsh", "python", "python3",
                                              "python3.11", "perl", "perl5", "node", "sudo",
                                              "env", "gk-unlisted"};

/* One policy's comparison of projection and gate: what it is asked about,
 * and where disagreements are counted and described. */
typedef struct proj_check {
    const char *file, *dir; /* the policy; the scratch tree (cwd, home, PATH) */
    grant_policy *p;
    gk_projection *pr;
    gk_strvec names, xfiles, dirs, subs; /* what its exec sections can name */
    gk_buf *report;
    size_t *bad, *checked;
} proj_check;

/* Count one check; the report to describe it in when it disagreed. */
static gk_buf *disagree(proj_check *c)
{
    (*c->bad)++;
    return c->report;
}

/* Compile file for this host inside the scratch tree (its policies/ on
 * the policy path). */
static grant_policy *compile_in_scratch(const char *file, const char *dir)
{
    grant_context *ctx = host_context(dir, dir, true);
    gk_autofree char *pp = gk_path_join(dir, "policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {file};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    ck_assert_msg(rc == 0 && p, "%s does not compile:\n%s", file, gk_test_render_diags(d));
    grant_diags_free(d);
    grant_context_free(ctx);
    return p;
}

/* The commands the policy can name (and the common ones), made real on
 * the fake PATH; the regions under the scratch dir made to exist, so
 * symlinks to them resolve. Before the projection that is checked. */
static void make_host(proj_check *c)
{
    collect_exec(c->p, &c->names, &c->xfiles, &c->dirs, &c->subs);
    for (size_t i = 0; i < sizeof common_programs / sizeof *common_programs; i++)
        gk_strvec_push(&c->names, common_programs[i]);
    gk_strvec_sort_unique(&c->names);
    for (size_t i = 0; i < c->names.n; i++) {
        gk_autofree char *exe = gk_printf("%s/usr/bin/%s", c->dir, c->names.v[i]);
        write_file(exe, "#!/bin/sh\nexit 0\n", 0755);
    }
    gk_projection *pr0 = gk_projection_build(c->p);
    gk_strvec pre0 = policy_prefixes(c->p, pr0);
    for (size_t i = 0; i < pre0.n; i++)
        if (gk_path_within(pre0.v[i], c->dir) && strcmp(pre0.v[i], c->dir) != 0 &&
            access(pre0.v[i], F_OK) != 0)
            mkdir_p(pre0.v[i]);
    gk_strvec_free(&pre0);
    gk_projection_free(pr0);
}

/* Reads and writes of the probe paths: check_fs and check_fs_resolved
 * agree, and the gate agrees with the projection. */
static void compare_fs(proj_check *c)
{
    gk_strvec prefixes = policy_prefixes(c->p, c->pr);
    gk_strvec probes = probe_paths(&prefixes, c->dir);
    for (size_t i = 0; i < probes.n; i++) {
        for (int o = 0; o < 2; o++) {
            grant_op op = o ? GRANT_OP_WRITE : GRANT_OP_READ;
            const char *opname = o ? "write" : "read";
            grant_verdict *v = NULL, *r = NULL;
            ck_assert_int_eq(grant_check_fs(c->p, op, probes.v[i], NULL, &v), 0);
            /* The tables hold the verdict's path; here only the answer matters. */
            const char *resolved = grant_verdict_path(v) ? grant_verdict_path(v)
                                                         : grant_verdict_identity(v);
            ck_assert_msg(resolved && resolved[0] == '/', "%s: no resolved path for %s", c->file,
                          probes.v[i]);
            ck_assert_int_eq(grant_check_fs_resolved(c->p, op, resolved, &r), 0);
            grant_answer gate = grant_verdict_answer(r), proj = projection_fs(c->pr, op, resolved);
            (*c->checked)++;
            if (grant_verdict_answer(v) != gate)
                gk_buf_printf(disagree(c), "\n%s: %s %s: check_fs %s, check_fs_resolved(%s) %s",
                              c->file, opname, probes.v[i], answer_name(grant_verdict_answer(v)),
                              resolved, answer_name(gate));
            if (gate != proj)
                gk_buf_printf(disagree(c), "\n%s: %s %s: gate %s (%s: %s), projection %s", c->file,
                              opname, resolved, answer_name(gate), grant_verdict_origin(r),
                              grant_verdict_rule(r), answer_name(proj));
            grant_verdict_free(v);
            grant_verdict_free(r);
        }
    }
    gk_strvec_free(&probes);
    gk_strvec_free(&prefixes);
}

/* Every nameable command: names walked along the fake PATH, files as
 * written, a fresh name inside each dir. */
static void compare_exec_named(proj_check *c)
{
    size_t nn = c->names.n, nf = c->xfiles.n;
    for (size_t i = 0; i < nn + nf + c->dirs.n; i++) {
        gk_autofree char *spelling = NULL, *path = NULL;
        if (i < nn) {
            spelling = gk_strdup(c->names.v[i]);
            path = gk_printf("%s/usr/bin/%s", c->dir, c->names.v[i]);
        } else if (i < nn + nf) {
            spelling = gk_strdup(c->xfiles.v[i - nn]);
            path = gk_strdup(spelling);
        } else {
            spelling = gk_path_join(c->dirs.v[i - nn - nf], "gk-probe");
            path = gk_strdup(spelling);
        }
        /* Any spelling that reaches the file counts: the OS sees only the file. */
        bool gate = gate_admits_some(c->p, spelling, path, path, &c->subs) ||
                    gate_admits_some(c->p, path, path, path, &c->subs);
        bool proj = projection_exec(c->pr, path);
        (*c->checked)++;
        if (gate != proj)
            gk_buf_printf(disagree(c), "\n%s: exec %s (%s): gate %s, projection %s", c->file,
                          spelling, path, gate ? "admits" : "denies", proj ? "admits" : "denies");
    }
}

/* Each entry of the projection's admit and veto lists is something the
 * gate decides alike. */
static void compare_exec_listed(proj_check *c)
{
    const gk_projection *pr = c->pr;
    for (size_t i = 0; i < pr->exec_admit.n + pr->exec_veto.n; i++) {
        bool admit = i < pr->exec_admit.n;
        const char *e = admit ? pr->exec_admit.v[i] : pr->exec_veto.v[i - pr->exec_admit.n];
        struct stat st;
        bool is_dir = gk_strvec_contains(&c->dirs, e) || (stat(e, &st) == 0 && S_ISDIR(st.st_mode));
        gk_autofree char *probe = is_dir ? gk_path_join(e, "gk-probe") : gk_strdup(e);
        bool gate = gate_admits_some(c->p, probe, probe, probe, &c->subs);
        for (size_t k = 0; k < c->names.n && !gate; k++) {
            /* A name walked to this file admits it too. */
            gk_autofree char *walked = gk_printf("%s/usr/bin/%s", c->dir, c->names.v[k]);
            if (strcmp(walked, probe) == 0)
                gate = gate_admits_some(c->p, c->names.v[k], walked, walked, &c->subs);
        }
        (*c->checked)++;
        if (gate != admit)
            gk_buf_printf(disagree(c),
                          "\n%s: exec %s is in the projection's %s list, but the gate %s", c->file,
                          probe, admit ? "admit" : "veto", gate ? "admits" : "denies");
    }
}

/* The projection of file, compiled for this host in the scratch tree dir,
 * agrees with the gate on files, commands and its own lists. */
static void check_projection(const char *file, const char *dir, gk_buf *report, size_t *bad,
                             size_t *checked)
{
    proj_check c = {.file = file, .dir = dir, .report = report, .bad = bad, .checked = checked};
    c.p = compile_in_scratch(file, dir);
    make_host(&c);
    c.pr = gk_projection_build(c.p);
    compare_fs(&c);
    compare_exec_named(&c);
    compare_exec_listed(&c);
    gk_strvec_free(&c.names);
    gk_strvec_free(&c.xfiles);
    gk_strvec_free(&c.dirs);
    gk_strvec_free(&c.subs);
    gk_projection_free(c.pr);
    grant_policy_free(c.p);
}

/* ---- the veto scan against a plain reading of it ------------------------
 *
 * The projection's veto scan lists each directory once, resolves a link
 * through the listings and asks the veto question per directory where its
 * entries share it. The oracle here does it the plain way, entry by entry:
 * resolve every entry (gk_resolve_host), stat it, ask the gate
 * (gk_gate_exec_vetoed_id); the two lists must be equal, on a tree with
 * every kind of entry (links in the same directory, into another listed
 * one, through a chain, dangling, looping, a hard link of a vetoed file,
 * hidden files, a PATH spelling through a linked directory, directories
 * named as vetoed programs). A directory is no program (execve refuses
 * it): neither side lists one. */

static void oracle_dir(const grant_policy *p, const char *d, bool on_path, bool hidden,
                       gk_strvec *out)
{
    DIR *dir = opendir(d);
    if (!dir)
        return;
    char *d_real = gk_resolve_host(d);
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            (e->d_name[0] == '.' && !hidden) || e->d_type == DT_DIR)
            continue;
        char *w = gk_path_join(d, e->d_name);
        char *c = gk_resolve_host(w);
        struct stat st;
        uint64_t dev = 0, ino = 0;
        if (c && stat(c, &st) == 0) {
            dev = (uint64_t)st.st_dev;
            ino = (uint64_t)st.st_ino;
        } else {
            free(c);
            c = NULL;
        }
        /* A directory is never executed: no veto lists one. */
        if (c && S_ISDIR(st.st_mode)) {
            free(w);
            free(c);
            continue;
        }
        grant_exec_query q = {on_path ? e->d_name : c, on_path ? w : c, c, NULL};
        if ((on_path || c) && gk_gate_exec_vetoed_id(p, &q, dev, ino)) {
            if (on_path)
                gk_strvec_push_take(out, gk_path_join(d_real, e->d_name));
            if (c)
                gk_strvec_push(out, c);
        }
        free(w);
        free(c);
    }
    closedir(dir);
    free(d_real);
}

static void oracle_tree(const grant_policy *p, const char *d, gk_strvec *out)
{
    oracle_dir(p, d, false, true, out);
    DIR *dir = opendir(d);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && e->d_type == DT_DIR) {
            char *sub = gk_path_join(d, e->d_name);
            oracle_tree(p, sub, out);
            free(sub);
        }
    closedir(dir);
}

static void scan_tree_make(const char *dir)
{
    /* opt/a/b/zsh, lib/tool/bin/bash: directories named as vetoed
     * programs (zsh's modules in /usr/lib/x86_64-linux-gnu/zsh), which no
     * veto lists. */
    static const char *const dirs[] = {"usr/bin", "etc/alt", "lib/tool/bin", "opt/a/b/c/d",
                                       "home", "tmp", "w", "opt/a/b/zsh", "usr/bin/python-lib",
                                       "lib/tool/bin/bash"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        gk_autofree char *cmd = gk_printf("mkdir -p '%s/%s'", dir, dirs[i]);
        ck_assert_int_eq(system(cmd), 0);
    }
    static const char *const files[] = {"usr/bin/bash", "usr/bin/ok1", "usr/bin/vetofile",
                                        "usr/bin/python3.11", "usr/bin/.zsh", "lib/tool/bin/zsh",
                                        "lib/tool/bin/fine", "opt/a/b/c/d/lto-wrapper",
                                        "opt/a/b/c/d/.cc1", "opt/a/b/c/d/plain",
                                        "opt/a/b/zsh/module.so"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        gk_autofree char *f = gk_path_join(dir, files[i]);
        gk_test_write(f, "x\n", 0755);
    }
    static const char *const links[][2] = {
        {"usr/bin/sh", "bash"},          {"usr/bin/rbash", "bash"},
        {"usr/bin/py3", "python3.11"},   {"usr/bin/x", "../../lib/tool/bin/zsh"},
        {"usr/bin/y", "../lib/tool/bin/fine"}, {"usr/bin/alt", "@/etc/alt/alt"},
        {"etc/alt/alt", "@/usr/bin/bash"}, {"usr/bin/gone", "nothere"},
        {"usr/bin/loop1", "loop2"},      {"usr/bin/loop2", "loop1"},
        {"usr/bin/deep", "../../opt/a/b/c/d/lto-wrapper"}, {"bin", "usr/bin"},
        {"opt/a/cc", "b/c/d/.cc1"},      {"opt/a/up", "../usr/bin/bash"},
        {"usr/bin/zsh", "ok1"}, /* a vetoed name on an innocent file */
        {"usr/bin/python-dir", "../../opt/a"}}; /* a vetoed name on a directory */
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        gk_autofree char *at = gk_path_join(dir, links[i][0]);
        gk_autofree char *to = links[i][1][0] == '@' ? gk_printf("%s%s", dir, links[i][1] + 1)
                                                     : gk_strdup(links[i][1]);
        ck_assert_int_eq(symlink(to, at), 0);
    }
    gk_autofree char *vf = gk_path_join(dir, "usr/bin/vetofile");
    gk_autofree char *hl = gk_path_join(dir, "usr/bin/innocent");
    ck_assert_int_eq(link(vf, hl), 0);
}

static void scan_matches_oracle(const char *dir, const char *text, bool allow_list)
{
    gk_autofree char *file = gk_path_join(dir, "scan.grant");
    gk_buf b = {0};
    for (const char *q = text; *q; q++)
        if (*q == '@')
            gk_buf_puts(&b, dir);
        else
            gk_buf_putc(&b, *q);
    gk_autofree char *body = gk_buf_steal(&b, NULL);
    gk_test_write(file, body, 0644);
    gk_autofree char *cwd = gk_path_join(dir, "w");
    grant_context *ctx = host_context(dir, cwd, true);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {file};
    ck_assert_msg(grant_compile(ctx, files, 1, NULL, 0, d, &p) == 0, "%s",
                  gk_test_render_diags(d));
    gk_projection *pr = gk_projection_build(p);
    gk_strvec want = {0};
    gk_autofree char *bin = gk_path_join(dir, "bin"), *ubin = gk_path_join(dir, "usr/bin");
    oracle_dir(p, bin, true, false, &want);
    oracle_dir(p, ubin, true, false, &want);
    if (allow_list) {
        gk_autofree char *opt = gk_path_join(dir, "opt");
        oracle_tree(p, opt, &want);
    } else {
        gk_autofree char *lb = gk_path_join(dir, "lib/tool/bin");
        oracle_dir(p, lb, false, false, &want);
        oracle_dir(p, ubin, false, false, &want);
    }
    /* What exec_lists adds apart from the scan: the vetoed file itself
     * and the walk of each vetoed name (both sides alike). */
    gk_strvec_push_take(&want, gk_path_join(dir, "usr/bin/vetofile"));
    gk_strvec_sort_unique(&want);
    gk_strvec got = {0};
    for (size_t i = 0; i < pr->exec_veto.n; i++)
        if (strncmp(pr->exec_veto.v[i], dir, strlen(dir)) == 0)
            gk_strvec_push(&got, pr->exec_veto.v[i]);
    gk_strvec_sort_unique(&got);
    gk_buf diff = {0};
    for (size_t i = 0; i < want.n; i++)
        if (!gk_strvec_contains(&got, want.v[i]))
            gk_buf_printf(&diff, "\n  missing %s", want.v[i]);
    for (size_t i = 0; i < got.n; i++)
        if (!gk_strvec_contains(&want, got.v[i]))
            gk_buf_printf(&diff, "\n  extra %s", got.v[i]);
    ck_assert_msg(diff.len == 0, "veto scan and its oracle differ (%s):%s",
                  allow_list ? "allow-list" : "vetoes only", diff.data ? diff.data : "");
    gk_buf_free(&diff);
    gk_strvec_free(&want);
    gk_strvec_free(&got);
    gk_projection_free(pr);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}

START_TEST(veto_scan_agrees_with_a_plain_reading)
{
    char *dir = make_scratch();
    scan_tree_make(dir);
    scan_matches_oracle(dir,
                        "grant s {\n"
                        "    exec {\n"
                        "        allow ok1 @/opt/;\n"
                        "        deny bash zsh lto-wrapper match \"^python\" match \"^[.]cc\";\n"
                        "        deny @/usr/bin/vetofile;\n"
                        "    }\n"
                        "    fs { read @; write cwd:; }\n"
                        "}\n",
                        true);
    scan_matches_oracle(dir,
                        "grant s {\n"
                        "    exec { deny bash zsh match \"^python\" @/usr/bin/vetofile; }\n"
                        "    fs { read @; write cwd:; }\n"
                        "}\n",
                        false);
    free(dir);
}
END_TEST

START_TEST(projection_of_bundled_policies_agrees_with_the_gate)
{
    char *dir = make_scratch();
    char *pdir = gk_path_join(dir, "policies");
    char *src = gk_test_path("policies");
    gk_strvec files = copy_policies(src, pdir, NULL);
    ck_assert_msg(files.n >= 3, "expected the bundled policies, found %zu", files.n);
    free(src);
    /* And stacks the bundled ones do not show: several restricted layers. */
    src = gk_test_path("tests/data/gate/projection");
    char *xdir = gk_path_join(pdir, "gate");
    gk_strvec extra = copy_policies(src, xdir, dir);
    ck_assert_msg(extra.n >= 2, "expected tests/data/gate/projection, found %zu", extra.n);
    for (size_t i = 0; i < extra.n; i++)
        gk_strvec_push(&files, extra.v[i]);
    gk_strvec_free(&extra);
    free(xdir);
    free(src);
    gk_buf report = {0};
    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < files.n; i++)
        check_projection(files.v[i], dir, &report, &bad, &checked);
    ck_assert_msg(checked > 100, "only %zu checks", checked);
    /* Check's messages are short: the whole list goes to stderr. */
    const char *msg = report.data ? report.data : "";
    if (bad)
        fprintf(stderr, "projection vs gate:%s\n", msg);
    rm_tree(dir);
    ck_assert_msg(bad == 0, "%zu of %zu projection checks disagree with the gate (first: %.1500s)",
                  bad, checked, msg);
    gk_buf_free(&report);
    gk_strvec_free(&files);
    free(pdir);
    free(dir);
}
END_TEST

/* ---- 3. grantc check ------------------------------------------------------ */

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

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

/* A scratch dir with agent.grant, a fake PATH and flags naming both. */
typedef struct cli_fixture {
    char *dir, *policy, *bad, *extra;
    char *cwd_flag, *home_flag, *tmp_flag, *path_flag;
} cli_fixture;

static cli_fixture cli_setup(void)
{
    cli_fixture f = {0};
    f.dir = make_scratch();
    f.policy = gk_path_join(f.dir, "agent.grant");
    f.bad = gk_path_join(f.dir, "bad.grant");
    f.extra = gk_path_join(f.dir, "extra.grant");
    char *text = gk_printf("grant agent {\n"                           /* 1 */
                           "    exec {\n"                              /* 2 */
                           "        allow rg make;\n"                  /* 3 */
                           "        allow git [log status];\n"         /* 4 */
                           "        deny bash;\n"                      /* 5 */
                           "    }\n"                                   /* 6 */
                           "    fs {\n"                                /* 7 */
                           "        read %s/src;\n"                    /* 8 */
                           "        write %s/out;\n"                   /* 9 */
                           "        deny %s/src/secret;\n"             /* 10 */
                           "    }\n"                                   /* 11 */
                           "    shell { chdir deny; }\n"               /* 12 */
                           "    editor { read allow; }\n"              /* 13 */
                           "}\n",
                           f.dir, f.dir, f.dir);
    write_file(f.policy, text, 0644);
    free(text);
    /* A pattern may only deny: this does not compile. */
    write_file(f.bad, "grant bad {\n    exec { allow match \"^x$\"; }\n}\n", 0644);
    text = gk_printf("grant extra {\n    fs { read %s/docs; }\n}\n", f.dir);
    write_file(f.extra, text, 0644);
    free(text);
    char *p;
    p = gk_path_join(f.dir, "src/secret");
    mkdir_p(p);
    free(p);
    p = gk_path_join(f.dir, "out");
    mkdir_p(p);
    free(p);
    p = gk_path_join(f.dir, "usr/bin/rg");
    write_file(p, "#!/bin/sh\nexit 0\n", 0755);
    free(p);
    p = gk_path_join(f.dir, "usr/bin/git");
    write_file(p, "#!/bin/sh\nexit 0\n", 0755);
    free(p);
    f.cwd_flag = gk_printf("--cwd=%s", f.dir);
    f.home_flag = gk_printf("--home=%s/home", f.dir);
    f.tmp_flag = gk_printf("--tempdir=%s/tmp", f.dir);
    f.path_flag = gk_printf("--path=%s/usr/bin", f.dir);
    return f;
}

static void cli_teardown(cli_fixture *f)
{
    rm_tree(f->dir);
    free(f->dir);
    free(f->policy);
    free(f->bad);
    free(f->extra);
    free(f->cwd_flag);
    free(f->home_flag);
    free(f->tmp_flag);
    free(f->path_flag);
}

#define CHECK(f, ...)                                                                       \
    GRANTC("check", (f).cwd_flag, (f).home_flag, (f).tmp_flag, (f).path_flag, (f).policy,  \
           __VA_ARGS__)

/* out, with the scratch dir written '@' (so expectations read as tables do). */
static char *at(const cli_fixture *f, const char *out)
{
    gk_buf b = {0};
    gk_buf_puts(&b, "");
    size_t dl = strlen(f->dir);
    for (const char *s = out; *s;) {
        if (strncmp(s, f->dir, dl) == 0) {
            gk_buf_putc(&b, '@');
            s += dl;
        } else {
            gk_buf_putc(&b, *s++);
        }
    }
    return gk_buf_steal(&b, NULL);
}

static void expect(const cli_fixture *f, run_result r, int status, const char *out)
{
    char *o = at(f, r.out);
    ck_assert_msg(r.status == status, "exit %d, want %d\nstdout: %s\nstderr: %s", r.status,
                  status, r.out, r.err);
    ck_assert_msg(strcmp(o, out) == 0, "stdout:\n%s\nwant:\n%s\nstderr: %s", o, out, r.err);
    free(o);
    run_free(&r);
}

START_TEST(cli_check_text)
{
    cli_fixture f = cli_setup();
    expect(&f, CHECK(f, "--", "exec", "rg", "--version"), 0,
           "allowed: exec rg --version\n"
           "  by @/agent.grant:3 (layer agent): allow rg\n"
           "  identity: spelling 'rg'\n");
    /* Options after '--' belong to the command, not to grantc. */
    expect(&f, CHECK(f, "--", "exec", "git", "--help"), 1,
           "denied: exec git --help\n"
           "  by @/agent.grant:4 (layer agent): allow git [log status]\n"
           "  identity: spelling 'git'\n"
           "  hint: allowed subcommands: log status\n");
    expect(&f, CHECK(f, "--", "exec", "bash", "-c", "true"), 1,
           "denied: exec bash -c true\n"
           "  by @/agent.grant:5 (layer agent): deny bash\n"
           "  identity: spelling 'bash'\n");
    /* Admitted, but no such file: exit 1 as a denial, said apart. */
    run_result r = CHECK(f, "--", "exec", "make");
    ck_assert_msg(r.status == 1, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(gk_has_prefix(r.out, "admitted, not found: exec make\n"
                                       "  by "),
                  "%s", r.out);
    ck_assert_msg(strstr(r.out, "agent.grant:3 (layer agent): allow make\n"), "%s", r.out);
    run_free(&r);
    expect(&f, CHECK(f, "--", "read", "src/main.c"), 0,
           "allowed: read src/main.c\n"
           "  by @/agent.grant:8 (layer agent): read @/src\n"
           "  identity: @/src/main.c\n");
    expect(&f, CHECK(f, "--", "write", "src/main.c"), 1,
           "denied: write src/main.c\n"
           "  by @/agent.grant:1 (layer agent): no write region contains it\n"
           "  identity: @/src/main.c\n");
    expect(&f, CHECK(f, "--", "read", "src/secret/key"), 1,
           "denied: read src/secret/key\n"
           "  by @/agent.grant:10 (layer agent): deny @/src/secret\n"
           "  identity: @/src/secret/key\n");
    expect(&f, CHECK(f, "--", "write", "/dev/null"), 0,
           "allowed: write /dev/null\n"
           "  by discard: /dev/null needs no authority\n"
           "  identity: /dev/null\n");
    expect(&f, CHECK(f, "--", "gate", "shell.chdir"), 1,
           "denied: gate shell.chdir\n"
           "  by @/agent.grant:12 (layer agent): chdir deny\n"
           "  identity: shell.chdir\n");
    expect(&f, CHECK(f, "--", "gate", "editor.read"), 0,
           "allowed: gate editor.read\n"
           "  by @/agent.grant:13 (layer agent): read allow\n"
           "  identity: editor.read\n");
    expect(&f, CHECK(f, "--", "gate", "net"), 0,
           "allowed: gate net\n"
           "  by no-opinion: no layer has an opinion\n"
           "  identity: net\n");
    cli_teardown(&f);
}
END_TEST

START_TEST(cli_check_json)
{
    cli_fixture f = cli_setup();
    /* A denial carries no path: it would tell that the file exists. */
    run_result r = CHECK(f, "--format", "json", "--", "exec", "git", "push");
    ck_assert_msg(r.status == 1, "exit %d\n%s", r.status, r.err);
    char *o = at(&f, r.out);
    ck_assert_str_eq(o, "{\"answer\":\"denied\",\"hint\":\"allowed subcommands: log status\","
                        "\"identity\":\"spelling 'git'\",\"layer\":\"agent\","
                        "\"origin\":\"@/agent.grant:4\",\"path\":null,"
                        "\"rule\":\"allow git [log status]\"}\n");
    free(o);
    run_free(&r);
    /* --format may stand anywhere before '--'. */
    r = GRANTC("check", "--format=json", f.cwd_flag, f.home_flag, f.policy, f.tmp_flag,
               f.path_flag, "--", "read", "out/x");
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    ck_assert_msg(j && json_is_object(j), "not JSON: %s", r.out);
    ck_assert_str_eq(json_string_value(json_object_get(j, "answer")), "allowed");
    ck_assert_msg(json_is_null(json_object_get(j, "hint")), "%s", r.out);
    ck_assert_int_eq(json_object_size(j), 7);
    json_decref(j);
    run_free(&r);
    r = CHECK(f, "--format", "json", "--", "exec", "make");
    ck_assert_msg(r.status == 1, "exit %d\n%s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "\"answer\":\"not-found\""), "%s", r.out);
    run_free(&r);
    r = CHECK(f, "--format", "text", "--", "gate", "editor.read");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(gk_has_prefix(r.out, "allowed: gate editor.read\n"), "%s", r.out);
    run_free(&r);
    cli_teardown(&f);
}
END_TEST

START_TEST(cli_check_stacks_extends_and_stdin)
{
    cli_fixture f = cli_setup();
    /* Without the extension docs/ is outside every region... */
    expect(&f, CHECK(f, "--", "read", "docs/a"), 1,
           "denied: read docs/a\n"
           "  by @/agent.grant:1 (layer agent): no read region contains it\n"
           "  identity: @/docs/a\n");
    /* ...joined into the first FILE it is granted... */
    run_result r = CHECK(f, "--extend", f.extra, "--", "read", "docs/a");
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    run_free(&r);
    /* ...and stacked as a second FILE it narrows: src/ is not in extra's
     * regions, so the second layer denies. */
    r = CHECK(f, f.extra, "--", "read", "src/a");
    ck_assert_msg(r.status == 1, "exit %d\n%s%s", r.status, r.out, r.err);
    char *o = at(&f, r.out);
    ck_assert_msg(strstr(o, "by @/extra.grant:1 (layer extra): no read region contains it"),
                  "%s", o);
    free(o);
    run_free(&r);
    /* The policy's own sources are protected. */
    r = CHECK(f, "--", "write", f.policy);
    ck_assert_msg(r.status == 1, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "by policy-source: readonly "), "%s", r.out);
    run_free(&r);
    /* '-' reads the policy from standard input. */
    r = GRANTC_STDIN("grant s { exec { allow rg; } }\n", "check", f.path_flag, "-", "--", "exec",
                     "rg");
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "by <stdin>:1 (layer s): allow rg\n"), "%s", r.out);
    run_free(&r);
    /* An offline target never looks at this host: /tmp is /private/tmp on macOS. */
    r = GRANTC_STDIN("grant m { fs { read /tmp/x; } }\n", "check", "--target", "macos", "--home",
                     "/Users/u", "--cwd", "/w", "-", "--", "read", "/private/tmp/x/f");
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "(layer m): read /tmp/x\n"), "%s", r.out);
    run_free(&r);
    r = GRANTC_STDIN("grant m { fs { read /w; } }\n", "check", "--target", "macos", "--home",
                     "/Users/u", "--cwd", "/w", "--no-implicit", "-", "--", "read", "/usr/lib/x");
    ck_assert_msg(r.status == 1, "exit %d\n%s%s", r.status, r.out, r.err);
    run_free(&r);
    cli_teardown(&f);
}
END_TEST

START_TEST(cli_check_usage_and_input_errors)
{
    cli_fixture f = cli_setup();
    /* A policy that does not compile is an input error, never "denied". */
    run_result r = GRANTC("check", f.bad, "--", "read", "/x");
    ck_assert_msg(r.status == 2, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "bad.grant:2:"), "%s", r.err);
    run_free(&r);
    char *missing = gk_path_join(f.dir, "missing.grant");
    const char *const *cases[] = {
        (const char *const[]){"check", f.policy, NULL},                        /* no query */
        (const char *const[]){"check", f.policy, "--", NULL},                  /* empty query */
        (const char *const[]){"check", "--", "read", "/x", NULL},              /* no FILE */
        (const char *const[]){"check", f.policy, "--", "list", "/x", NULL},    /* unknown kind */
        (const char *const[]){"check", f.policy, "--", "read", NULL},          /* no PATH */
        (const char *const[]){"check", f.policy, "--", "read", "/a", "/b", NULL},
        (const char *const[]){"check", f.policy, "--", "exec", NULL},          /* no CMD */
        (const char *const[]){"check", f.policy, "--", "gate", "shell", NULL}, /* unknown gate */
        (const char *const[]){"check", "--format", "yaml", f.policy, "--", "read", "/x", NULL},
        (const char *const[]){"check", "--frobnicate", f.policy, "--", "read", "/x", NULL},
        (const char *const[]){"check", "--target", "plan9", f.policy, "--", "read", "/x", NULL},
        (const char *const[]){"check", missing, "--", "read", "/x", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        r = grantc_v(NULL, cases[i]);
        ck_assert_msg(r.status == 2, "case %zu: exit %d\nstdout: %s\nstderr: %s", i, r.status,
                      r.out, r.err);
        ck_assert_msg(strcmp(r.out, "") == 0, "case %zu wrote stdout: %s", i, r.out);
        ck_assert_msg(gk_has_prefix(r.err, "grantc: ") || strstr(r.err, "error:"),
                      "case %zu: stderr %s", i, r.err);
        run_free(&r);
    }
    r = GRANTC("check", "--help");
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "Usage: grantc check"), "%s", r.out);
    run_free(&r);
    free(missing);
    cli_teardown(&f);
}
END_TEST

/* ---- matcher limits ------------------------------------------------------------ */

/* A veto whose matcher gives up (catastrophic backtracking on a name it
 * does not match) counts as a match on every path that decides: the index
 * behind grantrun and the projection (no verdict), the explaining fold, the
 * minimal fold of grant_decide_exec. A quick pattern is the control. */
START_TEST(matcher_that_gives_up_vetoes_everywhere)
{
    char name[64];
    memset(name, 'a', 40);
    strcpy(name + 40, "b");
    gk_autofree char *text = gk_printf("grant slow {\n exec {\n  allow %s ab;\n"
                                       "  deny match \"^(a|aa)+$\";\n }\n}\n", name);
    grant_context *ctx = gk_test_context_linux();
    grant_policy *p = NULL;
    grant_diags *d = grant_diags_new();
    ck_assert_int_eq(grant_compile_buffer(ctx, "slow.grant", text, strlen(text), d, &p), 0);
    grant_exec_query slow = {.spelling = name}, quick = {.spelling = "ab"};
    ck_assert_int_eq(gk_gate_exec(p, &slow, NULL), GRANT_DENIED);
    ck_assert(gk_gate_exec_vetoed(p, &slow));
    ck_assert_int_eq(grant_decide_exec(p, &slow), 0);
    grant_verdict *v = NULL;
    ck_assert_int_eq(grant_check_exec_query(p, &slow, &v), 0);
    ck_assert_int_eq(grant_verdict_answer(v), GRANT_DENIED);
    grant_verdict_free(v);
    ck_assert_int_eq(gk_gate_exec(p, &quick, NULL), GRANT_ALLOWED);
    ck_assert(!gk_gate_exec_vetoed(p, &quick));
    ck_assert_int_eq(grant_decide_exec(p, &quick), 1);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* ---- suite ------------------------------------------------------------------ */

static Suite *gate_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *t = tcase_create("tables");
    tcase_set_timeout(t, 60);
    tcase_add_loop_test(t, decision_table, 0, (int)table_files.n);
    tcase_add_test(t, tables_are_big_enough);
    tcase_add_test(t, matcher_that_gives_up_vetoes_everywhere);
    suite_add_tcase(s, t);

    t = tcase_create("projection");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, projection_of_bundled_policies_agrees_with_the_gate);
    tcase_add_test(t, veto_scan_agrees_with_a_plain_reading);
    suite_add_tcase(s, t);

    t = tcase_create("cli");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, cli_check_text);
    tcase_add_test(t, cli_check_json);
    tcase_add_test(t, cli_check_stacks_extends_and_stdin);
    tcase_add_test(t, cli_check_usage_and_input_errors);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    char *dir = gk_test_path("tests/data/gate");
    table_files = gk_test_files(dir, ".table");
    free(dir);
    scratch_root = make_root();
    /* Canonical: the tables name it as the gate resolves it. */
    char tmpl[] = "/tmp/gk-check-gate-host-XXXXXX";
    host_tmp_root = mkdtemp(tmpl) ? realpath(tmpl, NULL) : NULL;
    if (!host_tmp_root || !gk_path_within(host_tmp_root, "/tmp")) {
        fprintf(stderr, "check_gate: cannot make a directory in /tmp\n");
        return 99;
    }
    int rc = gk_test_main(gate_suite());
    rm_tree(scratch_root);
    free(scratch_root);
    rm_tree(host_tmp_root);
    free(host_tmp_root);
    gk_strvec_free(&table_files);
    return rc;
}
