/* check_seatbelt.c - the Seatbelt emitter (backends.md "macOS"; issue 4).
 *
 * Goldens (tests as data): every bundled policy (policies/base), every grant
 * of tests/data/grants and every targeted case of tests/data/seatbelt/cases
 * is compiled with the fixed offline macOS context (home /Users/u, user u,
 * cwd /Users/u/proj, tempdir /private/tmp, path /usr/bin:/bin) and emitted
 * as sbpl (FILE.sb) and sbpl-params (FILE.params.sb); the fidelity notes go
 * to FILE.notes, which exists only when there are notes. Outputs live under
 * tests/data/seatbelt/{bundled,grants}/ and next to the cases. GK_REGEN=1
 * rewrites them from the current output (review the diff).
 *
 * Oracles, on every one of those profiles: an SBPL reader written here
 * (balanced s-expressions, string and #"regex" literals, comments) parses
 * the output, and the checks read the parsed rules, not the text:
 *  - (version 1) first, (deny default) second;
 *  - every deny after every allow it overlaps (operations and paths), so
 *    last-match-wins never lets an allow undo a deny;
 *  - no operand-less allow but the deliberate ones, which appear exactly
 *    when the projection says so;
 *  - every path with its firmlink twin in the same rule;
 *  - every projected path present, decoded, in the rule the spec gives it
 *    (the escaping round-trip);
 *  - sbpl-params with its parameters substituted is the sbpl profile, and
 *    names no context path literally;
 *  - a last-match evaluator over the parsed rules never allows a read, a
 *    write or an exec that the gate denies, over the projected paths, their
 *    parents, children, siblings and twins, and sample program names.
 */
#include "testutil.h"
#include "gate/gate.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- compile and emit ------------------------------------------------------ */

static grant_context *ctx_macos(bool implicit)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/Users/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/Users/u/proj"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/private/tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin"), 0);
    ck_assert_int_eq(grant_context_set_implicit(ctx, implicit), 0);
    char *pp = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    free(pp);
    return ctx;
}

/* Compile FILE (absolute) by its bare name from its own directory, so no
 * host path reaches the policy. */
static grant_policy *compile_with(grant_context *ctx, const char *file)
{
    gk_autofree char *dir = gk_path_parent(file);
    ck_assert_int_eq(chdir(dir), 0);
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {gk_basename(file)};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    if (rc != 0) {
        gk_autofree char *msg = gk_test_render_diags(d);
        ck_abort_msg("compiling %s failed (%d):\n%s", file, rc, msg);
    }
    grant_diags_free(d);
    grant_context_free(ctx);
    return p;
}

static grant_policy *compile_macos(const char *file)
{
    return compile_with(ctx_macos(true), file);
}

static char *emit(const grant_policy *p, const char *format, char **notes)
{
    grant_diags *n = grant_diags_new();
    char *out = NULL;
    size_t len = 0;
    int rc = grant_emit(p, GRANT_BACKEND_SEATBELT, format, n, &out, &len);
    ck_assert_msg(rc == 0, "emit %s: %d", format ? format : "(default)", rc);
    ck_assert_uint_eq(len, strlen(out));
    if (notes)
        *notes = gk_test_render_diags(n);
    grant_diags_free(n);
    return out;
}

/* ---- goldens ---------------------------------------------------------------- */

/* Every policy under test, absolute. */
static gk_strvec policy_files(void)
{
    gk_strvec all = {0};
    const char *dirs[] = {"policies/base", "tests/data/grants", "tests/data/seatbelt/cases"};
    const char *exts[] = {".grant", ".yaml"};
    for (size_t d = 0; d < 3; d++) {
        gk_autofree char *dir = gk_test_path(dirs[d]);
        for (size_t e = 0; e < 2; e++) {
            gk_strvec v = gk_test_files(dir, exts[e]);
            gk_strvec_copy(&all, &v);
            gk_strvec_free(&v);
        }
    }
    gk_strvec_sort_unique(&all);
    ck_assert_uint_ge(all.n, 20);
    return all;
}

/* Where FILE's outputs go: next to a case, else under seatbelt/<group>/. */
static char *golden_base(const char *file)
{
    gk_autofree char *cases = gk_test_path("tests/data/seatbelt/cases");
    if (gk_path_within(file, cases))
        return gk_strdup(file);
    const char *group = strstr(file, "/policies/base/") ? "bundled" : "grants";
    return gk_printf("%s/tests/data/seatbelt/%s/%s", gk_test_srcdir(), group, gk_basename(file));
}

START_TEST(test_goldens)
{
    gk_strvec files = policy_files();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_macos(files.v[i]);
        gk_autofree char *notes = NULL;
        gk_autofree char *sbpl = emit(p, "sbpl", &notes);
        gk_autofree char *params = emit(p, "sbpl-params", NULL);
        gk_autofree char *base = golden_base(files.v[i]);
        gk_autofree char *g1 = gk_printf("%s.sb", base);
        gk_autofree char *g2 = gk_printf("%s.params.sb", base);
        gk_autofree char *g3 = gk_printf("%s.notes", base);
        gk_test_golden_text(g1, sbpl);
        gk_test_golden_text(g2, params);
        gk_autofree char *nl = *notes ? gk_printf("%s\n", notes) : NULL;
        gk_test_golden_text(g3, nl);
        grant_policy_free(p);
    }
    gk_strvec_free(&files);
}
END_TEST

START_TEST(test_deterministic)
{
    gk_strvec files = policy_files();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *a = compile_macos(files.v[i]);
        grant_policy *b = compile_macos(files.v[i]);
        const char *formats[] = {"sbpl", "sbpl-params"};
        for (int f = 0; f < 2; f++) {
            gk_autofree char *x = emit(a, formats[f], NULL);
            gk_autofree char *y = emit(a, formats[f], NULL);
            gk_autofree char *z = emit(b, formats[f], NULL);
            ck_assert_str_eq(x, y);
            ck_assert_str_eq(x, z);
        }
        grant_policy_free(a);
        grant_policy_free(b);
    }
    gk_strvec_free(&files);
}
END_TEST

START_TEST(test_formats)
{
    gk_autofree char *f = gk_test_path("tests/data/grants/spec-example.grant");
    grant_policy *p = compile_macos(f);
    gk_autofree char *dflt = emit(p, NULL, NULL);
    gk_autofree char *sbpl = emit(p, "sbpl", NULL);
    ck_assert_str_eq(dflt, sbpl);
    char *out = (char *)"untouched";
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_SEATBELT, "json", NULL, &out, NULL), -EINVAL);
    ck_assert_ptr_null(out);
    grant_policy_free(p);
}
END_TEST

/* ---- an SBPL reader ----------------------------------------------------------- */

typedef enum { SX_LIST, SX_SYM, SX_STR, SX_REGEX } sx_kind;

typedef struct sx {
    sx_kind kind;
    char *text;   /* symbol, decoded string, or the regex as the engine sees it */
    struct sx **v;
    size_t n, cap;
} sx;

typedef struct reader {
    const char *s;
    size_t i;
} reader;

static void sx_free(sx *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++)
        sx_free(x->v[i]);
    free(x->v);
    free(x->text);
    free(x);
}

static void skip_space(reader *r)
{
    for (;;) {
        char c = r->s[r->i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            r->i++;
        } else if (c == ';') {
            while (r->s[r->i] && r->s[r->i] != '\n')
                r->i++;
        } else if (c == '#' && r->s[r->i + 1] == '|') {
            const char *end = strstr(r->s + r->i + 2, "|#");
            ck_assert_msg(end != NULL, "unterminated #| comment");
            r->i = (size_t)(end - r->s) + 2;
        } else {
            return;
        }
    }
}

/* A string: `\X` is X. A regex: the text between the quotes as is (a `\"`
 * does not end it, and reaches the regex engine as an escaped quote). */
static char *read_literal(reader *r, bool regex)
{
    gk_buf b = {0};
    for (;;) {
        char c = r->s[r->i++];
        ck_assert_msg(c != '\0', "unterminated %s literal", regex ? "regex" : "string");
        if (c == '"')
            break;
        if (c == '\\') {
            char e = r->s[r->i++];
            ck_assert_msg(e != '\0', "backslash at end of input");
            if (regex)
                gk_buf_putc(&b, '\\');
            gk_buf_putc(&b, e);
            continue;
        }
        gk_buf_putc(&b, c);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

static sx *read_form(reader *r)
{
    skip_space(r);
    char c = r->s[r->i];
    ck_assert_msg(c != '\0' && c != ')', "unexpected %s at byte %zu",
                  c ? "')'" : "end of input", r->i);
    sx *x = gk_calloc(1, sizeof(*x));
    if (c == '(') {
        r->i++;
        x->kind = SX_LIST;
        for (;;) {
            skip_space(r);
            ck_assert_msg(r->s[r->i] != '\0', "unbalanced: missing ')'");
            if (r->s[r->i] == ')') {
                r->i++;
                break;
            }
            GK_VEC_PUSH(x->v, x->n, x->cap, read_form(r));
        }
    } else if (c == '"') {
        r->i++;
        x->kind = SX_STR;
        x->text = read_literal(r, false);
    } else if (c == '#' && r->s[r->i + 1] == '"') {
        r->i += 2;
        x->kind = SX_REGEX;
        x->text = read_literal(r, true);
    } else {
        size_t j = r->i;
        while (r->s[j] && !strchr(" \t\r\n()\";", r->s[j]))
            j++;
        x->kind = SX_SYM;
        x->text = gk_strndup(r->s + r->i, j - r->i);
        r->i = j;
    }
    return x;
}

/* ---- rules -------------------------------------------------------------------- */

typedef struct filt {
    char *kind;       /* literal, subpath, regex, global-name, target */
    char *arg;        /* decoded, params substituted */
    bool via_param;
} filt;

typedef struct rl {
    bool allow;
    char *ops;        /* the operations, space-separated */
    gk_strvec opv;
    filt *f;
    size_t nf, cap;
} rl;

typedef struct prof {
    rl *r;
    size_t n, cap;
    gk_strvec pname, pval;   /* sbpl-params: the `;; -D NAME=VALUE` lines */
} prof;

static void prof_free(prof *pf)
{
    for (size_t i = 0; i < pf->n; i++) {
        for (size_t k = 0; k < pf->r[i].nf; k++) {
            free(pf->r[i].f[k].kind);
            free(pf->r[i].f[k].arg);
        }
        free(pf->r[i].f);
        free(pf->r[i].ops);
        gk_strvec_free(&pf->r[i].opv);
    }
    free(pf->r);
    gk_strvec_free(&pf->pname);
    gk_strvec_free(&pf->pval);
}

static bool is_sym(const sx *x, const char *s)
{
    return x->kind == SX_SYM && strcmp(x->text, s) == 0;
}

/* A path operand: a string, (param "N"), or (string-append ...). */
static char *eval_str(const prof *pf, const sx *x, bool *via_param)
{
    if (x->kind == SX_STR)
        return gk_strdup(x->text);
    ck_assert_msg(x->kind == SX_LIST && x->n >= 1, "bad string expression");
    if (is_sym(x->v[0], "param")) {
        ck_assert_uint_eq(x->n, 2);
        ck_assert_int_eq(x->v[1]->kind, SX_STR);
        *via_param = true;
        for (size_t i = 0; i < pf->pname.n; i++)
            if (strcmp(pf->pname.v[i], x->v[1]->text) == 0)
                return gk_strdup(pf->pval.v[i]);
        ck_abort_msg("param %s is not in the parameter list", x->v[1]->text);
    }
    ck_assert_msg(is_sym(x->v[0], "string-append"), "unknown string expression");
    gk_buf b = {0};
    for (size_t i = 1; i < x->n; i++) {
        gk_autofree char *s = eval_str(pf, x->v[i], via_param);
        gk_buf_puts(&b, s);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

/* The proxy port of a destination list has no value in the profile (the
 * proxy chooses it when it runs); the oracles take this one. */
#define TEST_PROXY_PORT "3128"

static void read_params(const char *text, prof *pf)
{
    if (strstr(text, "(param \"PROXY_PORT\")")) {
        gk_strvec_push(&pf->pname, "PROXY_PORT");
        gk_strvec_push(&pf->pval, TEST_PROXY_PORT);
    }
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!gk_has_prefix(l, ";; -D "))
            continue;
        const char *kv = l + strlen(";; -D "), *eq = strchr(kv, '='), *nl = strchr(kv, '\n');
        ck_assert_ptr_nonnull(eq);
        gk_strvec_push_take(&pf->pname, gk_strndup(kv, (size_t)(eq - kv)));
        gk_strvec_push_take(&pf->pval,
                            gk_strndup(eq + 1, nl ? (size_t)(nl - eq - 1) : strlen(eq + 1)));
    }
}

/* Parse a whole profile: (version 1), (deny default), then rules only. */
static prof parse_profile(const char *text)
{
    prof pf = {0};
    read_params(text, &pf);
    reader r = {text, 0};
    size_t form = 0;
    for (;; form++) {
        skip_space(&r);
        if (!r.s[r.i])
            break;
        sx *x = read_form(&r);
        ck_assert_msg(x->kind == SX_LIST && x->n >= 1 && x->v[0]->kind == SX_SYM,
                      "form %zu is not a rule", form);
        if (form == 0) {
            ck_assert_msg(x->n == 2 && is_sym(x->v[0], "version") && is_sym(x->v[1], "1"),
                          "the first form is not (version 1)");
        } else if (form == 1) {
            ck_assert_msg(x->n == 2 && is_sym(x->v[0], "deny") && is_sym(x->v[1], "default"),
                          "the second form is not (deny default)");
        } else {
            ck_assert_msg(is_sym(x->v[0], "allow") || is_sym(x->v[0], "deny"),
                          "form %zu: %s is not allow or deny", form, x->v[0]->text);
            rl R = {.allow = is_sym(x->v[0], "allow")};
            gk_buf ops = {0};
            size_t k = 1;
            for (; k < x->n && x->v[k]->kind == SX_SYM; k++) {
                ck_assert_msg(strcmp(x->v[k]->text, "default") != 0, "a rule on default");
                if (ops.len)
                    gk_buf_putc(&ops, ' ');
                gk_buf_puts(&ops, x->v[k]->text);
                gk_strvec_push(&R.opv, x->v[k]->text);
            }
            ck_assert_msg(R.opv.n > 0, "form %zu has no operation", form);
            R.ops = gk_buf_steal(&ops, NULL);
            for (; k < x->n; k++) {
                const sx *f = x->v[k];
                bool remote = f->kind == SX_LIST && f->n == 3 && is_sym(f->v[0], "remote");
                ck_assert_msg(remote || (f->kind == SX_LIST && f->n == 2 && f->v[0]->kind == SX_SYM),
                              "form %zu: malformed filter", form);
                filt F = {.kind = gk_strdup(f->v[0]->text)};
                if (remote) {
                    /* (remote tcp "localhost:PORT"): a destination list's proxy */
                    ck_assert_msg(is_sym(f->v[1], "tcp"), "form %zu: remote is not tcp", form);
                    F.arg = eval_str(&pf, f->v[2], &F.via_param);
                } else if (strcmp(F.kind, "regex") == 0) {
                    ck_assert_int_eq(f->v[1]->kind, SX_REGEX);
                    F.arg = gk_strdup(f->v[1]->text);
                } else if (strcmp(F.kind, "target") == 0) {
                    ck_assert_int_eq(f->v[1]->kind, SX_SYM);
                    F.arg = gk_strdup(f->v[1]->text);
                } else {
                    ck_assert_msg(!strcmp(F.kind, "literal") || !strcmp(F.kind, "subpath") ||
                                      !strcmp(F.kind, "global-name"),
                                  "unknown filter %s", F.kind);
                    F.arg = eval_str(&pf, f->v[1], &F.via_param);
                }
                GK_VEC_PUSH(R.f, R.nf, R.cap, F);
            }
            GK_VEC_PUSH(pf.r, pf.n, pf.cap, R);
        }
        sx_free(x);
    }
    ck_assert_uint_ge(form, 2);
    return pf;
}

/* ---- semantics used by the oracles ----------------------------------------------- */

static bool is_path_filter(const filt *f)
{
    return !strcmp(f->kind, "literal") || !strcmp(f->kind, "subpath");
}

/* Does operation r cover query operation q (Seatbelt's `*` families)? */
static bool op_covers(const char *r, const char *q)
{
    size_t n = strlen(r);
    if (strcmp(r, q) == 0)
        return true;
    return n && r[n - 1] == '*' && strncmp(q, r, n - 1) == 0;
}

static bool ops_overlap(const rl *a, const rl *b)
{
    for (size_t i = 0; i < a->opv.n; i++)
        for (size_t k = 0; k < b->opv.n; k++)
            if (op_covers(a->opv.v[i], b->opv.v[k]) || op_covers(b->opv.v[k], a->opv.v[i]))
                return true;
    return false;
}

static bool filts_overlap(const filt *a, const filt *b)
{
    if (!strcmp(a->kind, "regex") || !strcmp(b->kind, "regex"))
        return true; /* conservatively: a regex may hit any path */
    if (is_path_filter(a) && is_path_filter(b)) {
        bool as = !strcmp(a->kind, "subpath"), bs = !strcmp(b->kind, "subpath");
        return strcmp(a->arg, b->arg) == 0 || (as && gk_path_within(b->arg, a->arg)) ||
               (bs && gk_path_within(a->arg, b->arg));
    }
    return !strcmp(a->kind, b->kind) && !strcmp(a->arg, b->arg);
}

static bool rules_overlap(const rl *a, const rl *b)
{
    if (!ops_overlap(a, b))
        return false;
    if (!a->nf || !b->nf)
        return true;
    for (size_t i = 0; i < a->nf; i++)
        for (size_t k = 0; k < b->nf; k++)
            if (filts_overlap(&a->f[i], &b->f[k]))
                return true;
    return false;
}

static bool regex_search(const char *re, const char *subject)
{
    int err;
    PCRE2_SIZE off;
    /* Bytes, as Seatbelt matches them: no UTF mode. */
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
    ck_assert_msg(code != NULL, "regex %s does not compile (at %zu)", re, (size_t)off);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    int rc = pcre2_match(code, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    return rc >= 0;
}

static bool filt_match(const filt *f, const char *path)
{
    if (!strcmp(f->kind, "literal"))
        return strcmp(path, f->arg) == 0;
    if (!strcmp(f->kind, "subpath"))
        return gk_path_within(path, f->arg);
    if (!strcmp(f->kind, "regex"))
        return regex_search(f->arg, path);
    return false;
}

/* Last match wins over the rules; (deny default) when none matches. */
static bool sb_allows(const prof *pf, const char *op, const char *path, int *rule)
{
    bool allow = false;
    *rule = -1;
    for (size_t i = 0; i < pf->n; i++) {
        const rl *R = &pf->r[i];
        bool op_hit = false;
        for (size_t k = 0; k < R->opv.n && !op_hit; k++)
            op_hit = op_covers(R->opv.v[k], op);
        if (!op_hit)
            continue;
        bool hit = R->nf == 0;
        for (size_t k = 0; k < R->nf && !hit; k++)
            hit = filt_match(&R->f[k], path);
        if (hit) {
            allow = R->allow;
            *rule = (int)i;
        }
    }
    return allow;
}

static char *twin_of(const char *p)
{
    const char *fl[] = {"/etc", "/tmp", "/var"};
    for (int i = 0; i < 3; i++) {
        gk_autofree char *priv = gk_printf("/private%s", fl[i]);
        if (gk_path_within(p, fl[i]))
            return gk_printf("/private%s", p);
        if (gk_path_within(p, priv))
            return gk_strdup(p + strlen("/private"));
    }
    return NULL;
}

static bool has_rule(const prof *pf, bool allow, const char *ops, const char *kind, const char *arg)
{
    for (size_t i = 0; i < pf->n; i++) {
        const rl *R = &pf->r[i];
        if (R->allow != allow || strcmp(R->ops, ops) != 0)
            continue;
        for (size_t k = 0; k < R->nf; k++)
            if (!strcmp(R->f[k].kind, kind) && !strcmp(R->f[k].arg, arg))
                return true;
    }
    return false;
}

/* ---- the rule-order oracle ---------------------------------------------------- */

static bool is_dev_null_reallow(const rl *R)
{
    if (!R->allow || !R->nf)
        return false;
    for (size_t k = 0; k < R->nf; k++)
        if (strcmp(R->f[k].kind, "literal") || strcmp(R->f[k].arg, "/dev/null"))
            return false;
    return true;
}

static void check_order(const char *what, const prof *pf)
{
    for (size_t j = 0; j < pf->n; j++) {
        if (pf->r[j].allow)
            continue;
        for (size_t i = j + 1; i < pf->n; i++) {
            const rl *A = &pf->r[i];
            if (!A->allow || is_dev_null_reallow(A))
                continue;
            ck_assert_msg(!rules_overlap(A, &pf->r[j]),
                          "%s: rule %zu (allow %s) follows and overlaps rule %zu (deny %s)", what,
                          i, A->ops, j, pf->r[j].ops);
        }
    }
}

static void check_operandless(const char *what, const prof *pf, const gk_projection *pr)
{
    const char *deliberate[] = {"process-fork", "sysctl-read", "pseudo-tty",
                                pr->exec_restricted ? NULL : "process-exec",
                                pr->fs_restricted ? NULL : "file-read* file-write*",
                                pr->net ? "network*" : NULL};
    bool seen[6] = {false};
    for (size_t i = 0; i < pf->n; i++) {
        const rl *R = &pf->r[i];
        if (R->nf)
            continue;
        ck_assert_msg(R->allow, "%s: operand-less deny %s", what, R->ops);
        bool ok = false;
        for (int k = 0; k < 6; k++)
            if (deliberate[k] && strcmp(R->ops, deliberate[k]) == 0)
                ok = seen[k] = true;
        ck_assert_msg(ok, "%s: operand-less (allow %s) is not deliberate here", what, R->ops);
    }
    for (int k = 0; k < 6; k++)
        ck_assert_msg(!deliberate[k] || seen[k], "%s: (allow %s) is missing", what,
                      deliberate[k]);
    /* Exec admits only through the projection: no process-exec allow when
     * it admits nothing. */
    if (pr->exec_restricted && !pr->exec_admit.n)
        for (size_t i = 0; i < pf->n; i++)
            ck_assert_msg(!(pf->r[i].allow && strstr(pf->r[i].ops, "process-exec")),
                          "%s: a process-exec allow with an empty admit list", what);
    if (pr->net)
        ck_assert_msg(pf->n && !strcmp(pf->r[pf->n - 1].ops, "network*"),
                      "%s: (allow network*) is not last", what);
    /* A destination list: outbound TCP to the proxy on localhost only, its
     * port a parameter (network.md §3), and nothing else of the network. */
    size_t remote = 0;
    for (size_t i = 0; i < pf->n; i++)
        for (size_t k = 0; k < pf->r[i].nf; k++)
            if (!strcmp(pf->r[i].f[k].kind, "remote")) {
                remote++;
                ck_assert_msg(pf->r[i].allow && !strcmp(pf->r[i].ops, "network-outbound") &&
                                  pf->r[i].f[k].via_param &&
                                  gk_has_prefix(pf->r[i].f[k].arg, "localhost:"),
                              "%s: a remote filter other than the proxy's", what);
            }
    ck_assert_msg(remote == (pr->net_list ? 1u : 0u), "%s: %zu proxy rules, want %d", what,
                  remote, pr->net_list);
}

static void check_twins(const char *what, const prof *pf)
{
    for (size_t i = 0; i < pf->n; i++) {
        const rl *R = &pf->r[i];
        for (size_t k = 0; k < R->nf; k++) {
            if (!is_path_filter(&R->f[k]))
                continue;
            gk_autofree char *t = twin_of(R->f[k].arg);
            if (!t)
                continue;
            bool found = false;
            for (size_t m = 0; m < R->nf && !found; m++)
                found = !strcmp(R->f[m].kind, R->f[k].kind) && !strcmp(R->f[m].arg, t);
            ck_assert_msg(found, "%s: rule %zu has %s but not its twin %s", what, i,
                          R->f[k].arg, t);
        }
        /* Pinned dirs are literals, never subpaths. */
        if (!R->allow && !strcmp(R->ops, "file-write-unlink"))
            for (size_t k = 0; k < R->nf; k++)
                ck_assert_str_eq(R->f[k].kind, "literal");
    }
}

/* One rule per entry: the same rule twice means a list held an entry at
 * both spellings and the emitter did not merge them. */
static void check_no_duplicates(const char *what, const prof *pf, const gk_projection *pr)
{
    for (size_t i = 0; i < pf->n; i++)
        for (size_t j = i + 1; j < pf->n; j++) {
            const rl *a = &pf->r[i], *b = &pf->r[j];
            /* A readable region that is also implicit (read /usr) keeps its
             * own rule: it is the policy's, and stays under --no-implicit. */
            if (a->nf && !strcmp(a->ops, "file-read*") &&
                (gk_strvec_contains(&pr->implicit.read, a->f[0].arg) ||
                 gk_strvec_contains(&pr->implicit.read, a->f[a->nf - 1].arg)))
                continue;
            if (is_dev_null_reallow(b))
                continue; /* after the denies, on purpose */
            bool same = a->allow == b->allow && !strcmp(a->ops, b->ops) && a->nf == b->nf;
            for (size_t k = 0; same && k < a->nf; k++)
                same = !strcmp(a->f[k].kind, b->f[k].kind) && !strcmp(a->f[k].arg, b->f[k].arg);
            ck_assert_msg(!same, "%s: rules %zu and %zu are the same (%s)", what, i, j, a->ops);
        }
}

static void expect(const char *what, const prof *pf, bool allow, const char *ops,
                   const char *kind, const char *arg)
{
    ck_assert_msg(has_rule(pf, allow, ops, kind, arg), "%s: no (%s %s (%s \"%s\"))", what,
                  allow ? "allow" : "deny", ops, kind, arg);
}

static void expect_regions(const char *what, const prof *pf, const gk_regions *r, bool allow,
                           const char *ops)
{
    for (size_t i = 0; i < r->n; i++) {
        expect(what, pf, allow, ops, "subpath", r->v[i].p.path);
        expect(what, pf, allow, ops, "subpath", r->v[i].p.real);
    }
}

static bool is_exec_dir(const grant_policy *p, const char *key, bool veto)
{
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_layer *f = p->stack.v[i];
        if (f->has_exec && gk_entries_has(veto ? &f->exec.veto_dirs : &f->exec.dirs, key))
            return true;
    }
    return false;
}

/* Every projected path in the rule the spec gives it, decoded: the
 * escaping round-trip. */
static void check_content(const char *what, const prof *pf, const gk_projection *pr,
                          const grant_policy *p)
{
    if (pr->fs_restricted) {
        expect_regions(what, pf, &pr->read, true, "file-read*");
        expect_regions(what, pf, &pr->write, true, "file-write*");
        const gk_regions *rs[2] = {&pr->read, &pr->write};
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < rs[k]->n; i++)
                for (char *a = gk_path_parent(rs[k]->v[i].p.real); a;) {
                    if (strcmp(a, "/") != 0)
                        expect(what, pf, true, "file-read-metadata", "literal", a);
                    char *up = gk_path_parent(a);
                    free(a);
                    a = up;
                }
        if (pr->has_implicit)
            for (size_t i = 0; i < pr->implicit.read.n; i++)
                expect(what, pf, true, "file-read*", "subpath", pr->implicit.read.v[i]);
    }
    expect_regions(what, pf, &pr->deny, false, "file-read* file-write*");
    expect_regions(what, pf, &pr->deny, false, "file-link");
    expect_regions(what, pf, &pr->readonly, false, "file-write*");
    for (size_t i = 0; i < pr->protect.n; i++)
        expect(what, pf, false, "file-write*", "subpath", pr->protect.v[i]);
    for (size_t i = 0; i < pr->pinned.n; i++)
        expect(what, pf, false, "file-write-unlink", "literal", pr->pinned.v[i]);
    if (pr->exec_restricted)
        for (size_t i = 0; i < pr->exec_admit.n; i++)
            expect(what, pf, true, "process-exec",
                   is_exec_dir(p, pr->exec_admit.v[i], false) ? "subpath" : "literal",
                   pr->exec_admit.v[i]);
    for (size_t i = 0; i < pr->exec_veto.n; i++)
        expect(what, pf, false, "process-exec",
               is_exec_dir(p, pr->exec_veto.v[i], true) ? "subpath" : "literal",
               pr->exec_veto.v[i]);
    /* A vetoed name: some regex hits it at any directory and only as a
     * whole basename. */
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        for (size_t i = 0; f->has_exec && i < f->exec.veto_names.n; i++) {
            const char *name = f->exec.veto_names.v[i].key;
            gk_autofree char *at1 = gk_printf("/usr/bin/%s", name);
            gk_autofree char *at2 = gk_printf("/Users/u/x y/%s", name);
            gk_autofree char *longer = gk_printf("/usr/bin/%sx", name);
            gk_autofree char *prefixed = gk_printf("/usr/bin/x%s", name);
            bool found = false;
            for (size_t r = 0; r < pf->n && !found; r++) {
                const rl *R = &pf->r[r];
                if (R->allow || strcmp(R->ops, "process-exec") || R->nf != 1 ||
                    strcmp(R->f[0].kind, "regex"))
                    continue;
                found = regex_search(R->f[0].arg, at1) && regex_search(R->f[0].arg, at2) &&
                        !regex_search(R->f[0].arg, longer) &&
                        !regex_search(R->f[0].arg, prefixed);
            }
            ck_assert_msg(found, "%s: no regex veto for the name %s", what, name);
        }
    }
}

/* ---- the conservatism oracle: never allow what the gate denies ---------------- */

/* The pseudo-tty slaves of the macOS base (backends.md) are writable in the
 * profile, but the gate's implicit devices name no /dev/ttysN: reported,
 * not hidden. */
static bool known_base_write(const char *path)
{
    return regex_search("^/dev/ttys[0-9]+$", path);
}

static void add_family(gk_strvec *q, const char *p)
{
    if (!p || p[0] != '/')
        return;
    gk_strvec_push(q, p);
    gk_strvec_push_take(q, gk_path_join(p, "gk-child"));
    char *parent = gk_path_parent(p);
    if (parent) {
        gk_strvec_push(q, parent);
        gk_strvec_push_take(q, gk_path_join(parent, "gk-sibling"));
        free(parent);
    }
    char *t = twin_of(p);
    if (t) {
        gk_strvec_push(q, t);
        gk_strvec_push_take(q, gk_path_join(t, "gk-child"));
        free(t);
    }
}

static void fs_queries(const gk_projection *pr, gk_strvec *q)
{
    const gk_regions *rs[4] = {&pr->read, &pr->write, &pr->readonly, &pr->deny};
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < rs[k]->n; i++) {
            add_family(q, rs[k]->v[i].p.path);
            add_family(q, rs[k]->v[i].p.real);
        }
    const gk_strvec *vs[5] = {&pr->pinned, &pr->protect, &pr->implicit.read,
                              &pr->implicit.write, &pr->implicit.devices};
    for (int k = 0; k < 5; k++)
        for (size_t i = 0; i < vs[k]->n; i++)
            add_family(q, vs[k]->v[i]);
    const char *fixed[] = {"/", "/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper",
                           "/dev/ptmx", "/dev/ttys003", "/dev/disk0", "/Users/u/proj/src/a.c",
                           "/Users/u/.ssh/id_ed25519", "/tmp/x", "/private/var/folders/x",
                           "/etc/passwd", "/Library/Keychains/x"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
        add_family(q, fixed[i]);
    gk_strvec_sort_unique(q);
}

static void check_fs_conservative(const char *what, const prof *pf, const gk_projection *pr,
                                  const grant_policy *p, size_t *nq)
{
    gk_strvec q = {0};
    fs_queries(pr, &q);
    const grant_op ops[2] = {GRANT_OP_READ, GRANT_OP_WRITE};
    const char *sbops[2] = {"file-read-data", "file-write-data"};
    for (size_t i = 0; i < q.n; i++)
        for (int o = 0; o < 2; o++) {
            grant_verdict *v = NULL;
            ck_assert_int_eq(grant_check_fs(p, ops[o], q.v[i], NULL, &v), 0);
            bool gate = grant_verdict_answer(v) == GRANT_ALLOWED;
            const char *canon = grant_verdict_path(v);
            /* Seatbelt sees the resolved path, or the name itself (lstat). */
            const char *seen[2] = {q.v[i], canon};
            for (int s = 0; s < 2; s++) {
                int rule;
                if (!seen[s] || !sb_allows(pf, sbops[o], seen[s], &rule) || gate)
                    continue;
                if (o == 1 && pr->has_implicit && known_base_write(seen[s]))
                    continue;
                ck_abort_msg("%s: the profile allows %s %s (rule %d: %s) but the gate denies "
                             "%s: %s",
                             what, sbops[o], seen[s], rule, pf->r[rule].ops, q.v[i],
                             grant_verdict_rule(v));
            }
            (*nq)++;
            grant_verdict_free(v);
        }
    gk_strvec_free(&q);
}

/* Sample basenames for exec: the veto names and patterns of the cases, near
 * misses, non-ASCII. */
static const char *const exec_samples[] = {
    "python", "python3", "python3.11", "pythonx", "ipython", "node", "nodejs", "perl", "perl5",
    "ruby", "rb", "xrb", "bash", "rbash", "bash2", "sh", "zsh", "ac", "bc", "abc", "xac", "x",
    "xy", "y", "yx", "pathon", "p\xc3\xa9thon", "pthon", "caf\xc3\xa9", "caf\xc3\xa9\xc3\xa9",
    "caf", "\xc3\xa9t\xc3\xa9", "et\xc3\xa9", "a.sh", ".sh", "sh.sh", "]q", "xq", "]z", "yz",
    "q\"t$", "q\"t$x", "v$x", "vx", "w", "ww", "www", "wwww", "g++", "c.sh", "cxsh", "a|b",
    "x(1)", "q\"uote", "back\\slash", "git", "rg", "make", "cargo", "sudo", "run", "tool",
    "tab\ttool", "my tool", "allow", "deny", "match", "docker", "gk-probe", "\"y", "\"k", "qk",
    "xk", "bs\\\"q", "bs\\q",
};

static bool gate_admits_somehow(const grant_policy *p, const char *path)
{
    /* Seatbelt sees neither the spelling nor the arguments: the gate must
     * admit the file for some spelling that walks to it and some argv[1]. */
    gk_strvec argv1 = {0};
    gk_strvec_push(&argv1, "gk-any");
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        const gk_admits *as[2] = {&f->exec.names, &f->exec.files};
        for (int k = 0; f->has_exec && k < 2; k++)
            for (size_t i = 0; i < as[k]->n; i++)
                gk_strvec_copy(&argv1, &as[k]->v[i].subs);
    }
    /* Seatbelt sees the resolved file: /private/tmp/x was spelled /tmp/x or
     * /private/tmp/x; a bare name when its dir is on PATH. */
    gk_autofree char *twin = twin_of(path);
    const char *canonical = twin && gk_has_prefix(twin, "/private/") ? twin : path;
    gk_autofree char *dir = gk_path_parent(path);
    bool on_path = !strcmp(dir, "/usr/bin") || !strcmp(dir, "/bin");
    const char *spellings[3] = {path, twin, on_path ? gk_basename(path) : NULL};
    bool ok = false;
    for (int s = 0; s < 3 && !ok; s++)
        for (size_t a = 0; spellings[s] && a <= argv1.n && !ok; a++) {
            const char *walked = s == 2 ? path : spellings[s];
            grant_exec_query q = {spellings[s], walked, canonical,
                                  a < argv1.n ? argv1.v[a] : NULL};
            grant_verdict *v = NULL;
            ck_assert_int_eq(grant_check_exec_query(p, &q, &v), 0);
            ok = grant_verdict_answer(v) != GRANT_DENIED;
            grant_verdict_free(v);
        }
    gk_strvec_free(&argv1);
    return ok;
}

static void check_exec_conservative(const char *what, const prof *pf, const gk_projection *pr,
                                    const grant_policy *p, size_t *nq)
{
    gk_strvec q = {0};
    const gk_strvec *vs[2] = {&pr->exec_admit, &pr->exec_veto};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < vs[k]->n; i++) {
            add_family(&q, vs[k]->v[i]);
            gk_strvec_push_take(&q, gk_path_join("/Users/u/proj", gk_basename(vs[k]->v[i])));
        }
    const char *dirs[] = {"/usr/bin", "/bin", "/Users/u/proj", "/private/tmp/x"};
    for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++)
        for (size_t i = 0; i < sizeof(exec_samples) / sizeof(*exec_samples); i++)
            gk_strvec_push_take(&q, gk_path_join(dirs[d], exec_samples[i]));
    /* Every name and file a layer admits or vetoes, inside every admitted
     * dir too (a name refused for every argument must not run from there). */
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        gk_strvec keys = {0};
        for (size_t i = 0; i < f->exec.names.n; i++)
            gk_strvec_push(&keys, f->exec.names.v[i].key);
        for (size_t i = 0; i < f->exec.files.n; i++) {
            add_family(&q, f->exec.files.v[i].key);
            gk_strvec_push(&keys, gk_basename(f->exec.files.v[i].key));
        }
        for (size_t i = 0; i < f->exec.veto_names.n; i++)
            gk_strvec_push(&keys, f->exec.veto_names.v[i].key);
        for (size_t a = 0; a < pr->exec_admit.n; a++)
            if (is_exec_dir(p, pr->exec_admit.v[a], false))
                for (size_t i = 0; i < keys.n; i++)
                    gk_strvec_push_take(&q, gk_path_join(pr->exec_admit.v[a], keys.v[i]));
        gk_strvec_free(&keys);
    }
    gk_strvec_sort_unique(&q);
    for (size_t i = 0; i < q.n; i++) {
        int rule;
        /* An admitted dir itself: (subpath D) holds D, the gate's dir rule
         * only what is below it; a directory cannot be executed anyway. */
        gk_autofree char *t = twin_of(q.v[i]);
        if (is_exec_dir(p, q.v[i], false) || (t && is_exec_dir(p, t, false)))
            continue;
        if (sb_allows(pf, "process-exec", q.v[i], &rule))
            ck_assert_msg(gate_admits_somehow(p, q.v[i]),
                          "%s: the profile allows process-exec %s (rule %d) but the gate "
                          "refuses it",
                          what, q.v[i], rule);
        (*nq)++;
    }
    gk_strvec_free(&q);
}

/* ---- params ------------------------------------------------------------------ */

static void check_params(const char *what, const prof *plain, const prof *params)
{
    ck_assert_msg(plain->n == params->n, "%s: %zu rules in sbpl, %zu in sbpl-params", what,
                  plain->n, params->n);
    for (size_t i = 0; i < plain->n; i++) {
        const rl *a = &plain->r[i], *b = &params->r[i];
        ck_assert_msg(a->allow == b->allow && !strcmp(a->ops, b->ops) && a->nf == b->nf,
                      "%s: rule %zu differs between formats", what, i);
        for (size_t k = 0; k < a->nf; k++) {
            ck_assert_str_eq(a->f[k].kind, b->f[k].kind);
            ck_assert_msg(!strcmp(a->f[k].arg, b->f[k].arg),
                          "%s: rule %zu: %s expands to %s", what, i, a->f[k].arg, b->f[k].arg);
            /* Only the proxy's port is a parameter in plain sbpl. */
            ck_assert(!a->f[k].via_param || !strcmp(a->f[k].kind, "remote"));
            /* A path under a root is always written through its param. */
            if (is_path_filter(&b->f[k]) && !b->f[k].via_param) {
                const char *roots[] = {"/Users/u", "/private/tmp", "/tmp"};
                for (int r = 0; r < 3; r++)
                    ck_assert_msg(!gk_path_within(b->f[k].arg, roots[r]),
                                  "%s: %s is written literally in sbpl-params", what,
                                  b->f[k].arg);
            }
        }
    }
}

/* ---- the oracle over every policy --------------------------------------------- */

static void oracle(const char *what, const grant_policy *p, size_t *nq)
{
    gk_autofree char *sbpl = emit(p, "sbpl", NULL);
    gk_autofree char *params = emit(p, "sbpl-params", NULL);
    prof a = parse_profile(sbpl), b = parse_profile(params);
    gk_projection *pr = gk_projection_build(p);
    check_order(what, &a);
    check_operandless(what, &a, pr);
    check_twins(what, &a);
    check_no_duplicates(what, &a, pr);
    check_content(what, &a, pr, p);
    check_params(what, &a, &b);
    check_fs_conservative(what, &a, pr, p, nq);
    check_exec_conservative(what, &a, pr, p, nq);
    gk_projection_free(pr);
    prof_free(&a);
    prof_free(&b);
}

START_TEST(test_oracle_all)
{
    gk_strvec files = policy_files();
    size_t nq = 0;
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_macos(files.v[i]);
        oracle(files.v[i], p, &nq);
        grant_policy_free(p);
        p = compile_with(ctx_macos(false), files.v[i]);
        gk_autofree char *w = gk_printf("%s (--no-implicit)", files.v[i]);
        oracle(w, p, &nq);
        grant_policy_free(p);
    }
    ck_assert_uint_ge(nq, 10000);
    gk_strvec_free(&files);
}
END_TEST

/* A destination list (network.md §3): the real evaluator, given the proxy's
 * port, allows outbound TCP to that port on localhost and nothing else of
 * the network, in both formats. */
START_TEST(test_net_list_proxy_only)
{
    gk_autofree char *file = gk_test_path("tests/data/seatbelt/cases/net-list.grant");
    grant_policy *p = compile_macos(file);
    const char *formats[] = {"sbpl", "sbpl-params"};
    static const struct {
        const char *op, *arg;
        grant_sbpl_verdict want;
    } rows[] = {
        {"network-outbound", "localhost:" TEST_PROXY_PORT, GRANT_SBPL_ALLOW},
        {"network-outbound", "tcp:localhost:" TEST_PROXY_PORT, GRANT_SBPL_ALLOW},
        {"network-outbound", "localhost:3129", GRANT_SBPL_DENY},
        {"network-outbound", "tcp:140.82.112.3:443", GRANT_SBPL_DENY},
        {"network-outbound", "udp:localhost:53", GRANT_SBPL_DENY},
        {"network-bind", "localhost:8080", GRANT_SBPL_DENY},
        {"network-inbound", "localhost:" TEST_PROXY_PORT, GRANT_SBPL_DENY},
    };
    for (int f = 0; f < 2; f++) {
        gk_autofree char *out = emit(p, formats[f], NULL);
        prof mine = parse_profile(out);
        gk_strvec kv = {0};
        for (size_t k = 0; k < mine.pname.n; k++)
            gk_strvec_push_take(&kv, gk_printf("%s=%s", mine.pname.v[k], mine.pval.v[k]));
        grant_diags *d = grant_diags_new();
        grant_sbpl *sb = NULL;
        ck_assert_int_eq(grant_sbpl_read_buffer("net.sb", out, strlen(out),
                                                (const char *const *)kv.v, kv.n, 0, d, &sb),
                         0);
        for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
            grant_sbpl_answer *a = NULL;
            ck_assert_int_eq(grant_sbpl_eval(sb, rows[i].op, rows[i].arg, NULL, d, &a), 0);
            ck_assert_msg(grant_sbpl_answer_verdict(a) == rows[i].want, "%s: %s %s: got %d, want %d",
                          formats[f], rows[i].op, rows[i].arg, grant_sbpl_answer_verdict(a),
                          rows[i].want);
            grant_sbpl_answer_free(a);
        }
        grant_sbpl_free(sb);
        grant_diags_free(d);
        gk_strvec_free(&kv);
        prof_free(&mine);
    }
    grant_policy_free(p);
}
END_TEST

/* The project's own SBPL reader (issue 5) reads every profile, both
 * formats, with no diagnostic: the output is in the dialect the evaluator
 * and `grantc sbpl` take, regexes included. */
START_TEST(test_project_reader)
{
    gk_strvec files = policy_files();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_macos(files.v[i]);
        const char *formats[] = {"sbpl", "sbpl-params"};
        for (int f = 0; f < 2; f++) {
            gk_autofree char *out = emit(p, formats[f], NULL);
            prof mine = parse_profile(out);
            gk_strvec kv = {0};
            for (size_t k = 0; k < mine.pname.n; k++)
                gk_strvec_push_take(&kv, gk_printf("%s=%s", mine.pname.v[k], mine.pval.v[k]));
            grant_diags *d = grant_diags_new();
            grant_sbpl *sb = NULL;
            int rc = grant_sbpl_read_buffer("emitted.sb", out, strlen(out),
                                            (const char *const *)kv.v, kv.n, 0, d, &sb);
            gk_autofree char *msg = gk_test_render_diags(d);
            ck_assert_msg(rc == 0 && grant_diags_count(d) == 0, "%s (%s): %d\n%s", files.v[i],
                          formats[f], rc, msg);
            ck_assert_uint_ge(grant_sbpl_rule_count(sb), mine.n);
            grant_sbpl_free(sb);
            grant_diags_free(d);
            gk_strvec_free(&kv);
            prof_free(&mine);
        }
        grant_policy_free(p);
    }
    gk_strvec_free(&files);
}
END_TEST

/* ---- targeted facts ------------------------------------------------------------ */

static grant_policy *compile_case(const char *name)
{
    gk_autofree char *f = gk_printf("%s/tests/data/seatbelt/cases/%s", gk_test_srcdir(), name);
    return compile_macos(f);
}

/* The reader itself: it must refuse what is not a profile, or the oracles
 * prove nothing. */
START_TEST(test_reader_rejects)
{
    const char *bad[] = {
        "(version 1)\n(deny default)\n(allow file-read* (literal \"/a\")",  /* unbalanced */
        "(version 1)\n(deny default)\n(allow file-read* (literal \"/a))\n", /* open string */
        "(deny default)\n(version 1)\n",                                    /* order */
        "(version 1)\n(allow default)\n",
        "(version 1)\n(deny default)\n(allow (literal \"/a\"))\n",          /* no operation */
        "(version 1)\n(deny default)\n(allow file-read* (subpath (param \"ROOT_9\")))\n",
    };
    /* Without Check's fork (CK_FORK=no, valgrind) a failed assertion in the
     * child would return into the runner and go on with the suite there. */
    const char *ck_fork = getenv("CK_FORK");
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad) && !(ck_fork && !strcmp(ck_fork, "no"));
         i++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            /* A failed assertion in the child ends it with a non-zero status. */
            prof pf = parse_profile(bad[i]);
            prof_free(&pf);
            _exit(0);
        }
        int st = 0;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "the reader accepted case %zu",
                      i);
    }
    prof pf = parse_profile(
        "; c\n#| block |#\n(version 1) (deny default)\n"
        "(allow file-read* (subpath \"/a\\\\b\\\"c\") (regex #\"^/x\\\"\\.y$\"))");
    ck_assert_uint_eq(pf.n, 1);
    ck_assert_str_eq(pf.r[0].f[0].arg, "/a\\b\"c");
    ck_assert_str_eq(pf.r[0].f[1].arg, "^/x\\\"\\.y$");
    prof_free(&pf);
}
END_TEST

START_TEST(test_escaping)
{
    grant_policy *p = compile_case("escaping.grant");
    gk_autofree char *out = emit(p, "sbpl", NULL);
    prof pf = parse_profile(out);
    /* The decoded operands are the projected paths, byte for byte. */
    expect("escaping", &pf, true, "process-exec", "literal", "/opt/we\"ird/a\\b");
    expect("escaping", &pf, true, "file-write*", "subpath", "/Users/u/out\\dir");
    expect("escaping", &pf, true, "file-read*", "subpath", "/Users/u/caf\xc3\xa9");
    expect("escaping", &pf, false, "file-read* file-write*", "subpath",
           "/srv/data set/\"secret\"");
    expect("escaping", &pf, false, "file-read* file-write*", "subpath", "/srv/re.gex[1]*/$HOME");
    /* Names in a regex: every metacharacter escaped, the quote once. */
    expect("escaping", &pf, false, "process-exec", "regex", "/g\\+\\+$");
    expect("escaping", &pf, false, "process-exec", "regex", "/c\\.sh$");
    expect("escaping", &pf, false, "process-exec", "regex", "/a\\|b$");
    expect("escaping", &pf, false, "process-exec", "regex", "/x\\(1\\)$");
    expect("escaping", &pf, false, "process-exec", "regex", "/q\\\"uote$");
    expect("escaping", &pf, false, "process-exec", "regex", "/back\\\\slash$");
    expect("escaping", &pf, false, "process-exec", "regex", "/bs\\\\\\\"q$");
    ck_assert_ptr_nonnull(strstr(out, "(regex #\"/bs\\\\\\\"q$\")"));
    ck_assert_ptr_nonnull(strstr(out, "(regex #\"/q\\\"uote$\")"));
    ck_assert_ptr_nonnull(strstr(out, "(subpath \"/Users/u/out\\\\dir\")"));
    prof_free(&pf);
    grant_policy_free(p);
}
END_TEST

/* The pattern translation against PCRE2 itself: for every sample name, the
 * profile vetoes it iff the gate's pattern does, except where the note says
 * the profile refuses more. */
START_TEST(test_patterns_exact)
{
    grant_policy *p = compile_case("patterns.grant");
    gk_autofree char *notes = NULL;
    gk_autofree char *out = emit(p, "sbpl", &notes);
    prof pf = parse_profile(out);
    ck_assert_ptr_nonnull(strstr(out, "(deny process-exec (regex #\"/python[0-9.]*$\"))"));
    ck_assert_ptr_nonnull(strstr(notes, "(^a|b)c"));
    /* (^a|b)c loses its anchor, [^"x] its quote: only those rules may
     * refuse more. */
    const char *lossy[] = {"/[^/]*(a|b)c[^/]*$", "/([^/x][^ -~/]*)k$"};
    size_t agree = 0, wider = 0;
    for (size_t i = 0; i < sizeof(exec_samples) / sizeof(*exec_samples); i++) {
        const char *base = exec_samples[i];
        gk_autofree char *path = gk_path_join("/opt/x", base);
        grant_exec_query q = {path, path, path, NULL};
        bool gate = grant_decide_exec(p, &q) == 1;
        int rule;
        bool sb = sb_allows(&pf, "process-exec", path, &rule);
        bool expected_wider = false;
        for (int l = 0; l < 2 && !sb && rule >= 0 && pf.r[rule].nf == 1; l++)
            expected_wider |= !strcmp(pf.r[rule].f[0].arg, lossy[l]);
        wider += expected_wider && gate;
        if (sb)
            ck_assert_msg(gate, "the profile runs %s, the gate vetoes it", base);
        else if (!expected_wider)
            ck_assert_msg(!gate, "the profile vetoes %s (rule %d), the gate does not", base,
                          rule);
        agree += sb == gate;
    }
    ck_assert_uint_ge(agree, 60);
    ck_assert_uint_ge(wider, 2); /* "xac" and "\"k": refused by the profile only */
    ck_assert_ptr_nonnull(strstr(out, "(deny process-exec (regex #\"/(\\\"|[x])y$\"))"));
    prof_free(&pf);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_unrestricted)
{
    grant_policy *p = compile_case("unrestricted.grant");
    gk_autofree char *out = emit(p, "sbpl", NULL);
    prof pf = parse_profile(out);
    ck_assert(has_rule(&pf, false, "process-exec", "subpath", "/usr/local/bin"));
    ck_assert_ptr_nonnull(strstr(out, "\n(allow process-exec)\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n(allow file-read* file-write*)\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n(allow network*)\n"));
    /* fs unrestricted: no implicit section and no ancestors, they would be
     * shadowed by the operand-less allow. */
    ck_assert_ptr_null(strstr(out, "(subpath \"/System\")"));
    ck_assert_ptr_null(strstr(out, "file-read-metadata (literal \"/Users\")"));
    /* Pinned up to the root, with twins. */
    ck_assert(has_rule(&pf, false, "file-write-unlink", "literal", "/private/etc"));
    ck_assert(has_rule(&pf, false, "file-write-unlink", "literal", "/etc"));
    ck_assert(has_rule(&pf, false, "file-write-unlink", "literal", "/Users/u/.config"));
    prof_free(&pf);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_exec_empty)
{
    grant_policy *p = compile_case("exec-empty.grant");
    gk_projection *pr = gk_projection_build(p);
    ck_assert(pr->exec_restricted);
    ck_assert_uint_eq(pr->exec_admit.n, 0);
    gk_autofree char *out = emit(p, "sbpl", NULL);
    ck_assert_ptr_null(strstr(out, "(allow process-exec"));
    gk_projection_free(pr);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_dev_null)
{
    grant_policy *p = compile_case("devnull.grant");
    gk_autofree char *out = emit(p, "sbpl", NULL);
    prof pf = parse_profile(out);
    int rule;
    ck_assert(sb_allows(&pf, "file-write-data", "/dev/null", &rule));
    ck_assert(!sb_allows(&pf, "file-write-data", "/dev/zero", &rule));
    ck_assert(!sb_allows(&pf, "file-read-data", "/dev/tty", &rule));
    prof_free(&pf);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_no_implicit)
{
    gk_autofree char *f = gk_test_path("policies/base/minimal.grant");
    grant_policy *p = compile_with(ctx_macos(false), f);
    gk_autofree char *out = emit(p, "sbpl", NULL);
    ck_assert_ptr_null(strstr(out, "/System"));
    ck_assert_ptr_null(strstr(out, "/dev/zero"));
    ck_assert_ptr_null(strstr(out, "/dev/ptmx"));
    ck_assert_ptr_nonnull(
        strstr(out, "(allow file-read* file-write-data (literal \"/dev/null\"))"));
    grant_policy_free(p);
}
END_TEST

START_TEST(test_notes)
{
    gk_autofree char *f = gk_test_path("tests/data/grants/spec-example.grant");
    grant_policy *p = compile_macos(f);
    gk_autofree char *notes = NULL;
    gk_autofree char *out = emit(p, "sbpl", &notes);
    ck_assert_ptr_nonnull(strstr(notes, "seatbelt: warning: git: Seatbelt cannot see arguments"));
    ck_assert_ptr_nonnull(strstr(notes, "resolved executable"));
    grant_policy_free(p);
}
END_TEST

START_TEST(test_other_targets)
{
    gk_autofree char *f = gk_test_path("tests/data/grants/spec-example.grant");
    grant_policy *p = compile_with(gk_test_context_linux(), f);
    gk_autofree char *notes = NULL;
    gk_autofree char *out = emit(p, "sbpl", &notes);
    ck_assert_ptr_nonnull(strstr(notes, "compiled for linux"));
    prof pf = parse_profile(out);
    size_t nq = 0;
    gk_projection *pr = gk_projection_build(p);
    check_order("linux", &pf);
    check_fs_conservative("linux", &pf, pr, p, &nq);
    gk_projection_free(pr);
    prof_free(&pf);
    grant_policy_free(p);

    /* A windows context from the start: it takes only drive paths. */
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_WINDOWS), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    char *pp = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    free(pp);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "C:/Users/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "C:/Users/u/proj"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "C:/Temp"), 0);
    p = compile_with(ctx, f);
    char *o = NULL;
    grant_diags *d = grant_diags_new();
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_SEATBELT, NULL, d, &o, NULL), -ENOTSUP);
    ck_assert_ptr_null(o);
    ck_assert_uint_eq(grant_diags_errors(d), 1);
    grant_diags_free(d);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_params_block)
{
    gk_autofree char *f = gk_test_path("tests/data/seatbelt/cases/firmlinks.grant");
    grant_policy *p = compile_macos(f);
    gk_autofree char *out = emit(p, "sbpl-params", NULL);
    /* The parameters used, each once, as sandbox-exec takes them. */
    ck_assert_ptr_nonnull(strstr(out, "\n;; -D ROOT_4=/private/tmp\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n;; -D ROOT_5=/tmp\n"));
    ck_assert_ptr_nonnull(
        strstr(out, "(subpath (string-append (param \"ROOT_4\") \"/work\"))"));
    grant_policy_free(p);
}
END_TEST

static Suite *seatbelt_suite(void)
{
    Suite *s = suite_create("seatbelt");
    TCase *g = tcase_create("goldens");
    tcase_add_test(g, test_goldens);
    tcase_add_test(g, test_deterministic);
    tcase_add_test(g, test_formats);
    suite_add_tcase(s, g);
    TCase *o = tcase_create("oracle");
    tcase_set_timeout(o, 300);
    tcase_add_test(o, test_reader_rejects);
    tcase_add_test(o, test_oracle_all);
    tcase_add_test(o, test_project_reader);
    suite_add_tcase(s, o);
    TCase *t = tcase_create("targeted");
    tcase_add_test(t, test_escaping);
    tcase_add_test(t, test_patterns_exact);
    tcase_add_test(t, test_unrestricted);
    tcase_add_test(t, test_exec_empty);
    tcase_add_test(t, test_dev_null);
    tcase_add_test(t, test_no_implicit);
    tcase_add_test(t, test_notes);
    tcase_add_test(t, test_other_targets);
    tcase_add_test(t, test_params_block);
    tcase_add_test(t, test_net_list_proxy_only);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return gk_test_main(seatbelt_suite());
}
