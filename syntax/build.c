/* build.c - the grant parser's second half: parse tree -> gk_file_ast.
 *
 * parser.y's grammar knows no keywords (they are not reserved); it builds a
 * small parse tree of statements and blocks (parse.h). This file holds that
 * tree's helpers, the keyword pass that reads the first word of each
 * statement and rule against what its block allows ("did you mean" hints,
 * the missing-';' split), and gk_parse_grant, which checks the bytes, runs
 * lexer and grammar, then this pass, and sorts the messages.
 */
#include "syntax/parse.h"
#include "syntax/parser.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- parse tree ---------------------------------------------------------- */

void gk_pitem_clear(gk_pitem *it)
{
    gk_word_free(&it->w);
}

void gk_pitems_push(gk_pitems *v, gk_pitem *it)
{
    GK_VEC_PUSH(v->v, v->n, v->cap, *it);
    it->w.text = NULL; /* moved */
}

void gk_pitems_push_comma(gk_pitems *v, gk_span at)
{
    gk_pitem it = {.is_comma = true};
    it.w.loc.start = at.start;
    it.w.loc.end = at.end;
    GK_VEC_PUSH(v->v, v->n, v->cap, it);
}

void gk_pitems_clear(gk_pitems *v)
{
    for (size_t i = 0; i < v->n; i++)
        gk_pitem_clear(&v->v[i]);
    free(v->v);
    *v = (gk_pitems){0};
}

void gk_pnodes_clear(gk_pnodes *v)
{
    for (size_t i = 0; i < v->n; i++)
        gk_pnode_free(v->v[i]);
    free(v->v);
    *v = (gk_pnodes){0};
}

void gk_pnode_free(gk_pnode *n)
{
    if (!n)
        return;
    gk_pitem_clear(&n->head);
    gk_pitems_clear(&n->items);
    gk_pitems_clear(&n->brackets.subs);
    gk_pnodes_clear(&n->kids);
    free(n);
}

gk_pnode *gk_pnode_new(gk_pstate *ps, gk_pitem *head, gk_pitems *items, gk_span span)
{
    gk_check_commas(ps, items, false);
    gk_pnode *n = gk_calloc(1, sizeof(*n));
    n->head = *head;
    head->w.text = NULL;
    n->items = *items;
    *items = (gk_pitems){0};
    n->span = span;
    return n;
}

/* ---- errors ---------------------------------------------------------------- */

static gk_loc loc_at(const gk_pstate *ps, uint32_t start, uint32_t end)
{
    return (gk_loc){ps->src, start, end};
}

gk_diag *gk_perr(gk_pstate *ps, uint32_t start, uint32_t end, const char *hint,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gk_autofree char *msg = gk_vprintf(fmt, ap);
    va_end(ap);
    return gk_diag_add(ps->diags, GK_ERROR, loc_at(ps, start, end), hint, "%s", msg);
}

/* Commas go between words (and, in a subcommand list, may end it): drop
 * them from the list, marking the word after each, and report the rest. */
void gk_check_commas(gk_pstate *ps, gk_pitems *v, bool trailing_ok)
{
    size_t out = 0;
    bool after_comma = false;
    for (size_t i = 0; i < v->n; i++) {
        gk_pitem it = v->v[i];
        if (!it.is_comma) {
            it.comma_before = after_comma;
            after_comma = false;
            v->v[out++] = it;
            continue;
        }
        bool last = i + 1 == v->n;
        if (out == 0 || after_comma || (last && !trailing_ok))
            gk_perr(ps, it.w.loc.start, it.w.loc.end, "commas go between words",
                    "unexpected ','");
        after_comma = true;
    }
    v->n = out;
}

/* ---- second pass: keywords and the AST ----------------------------------- */

static const char *const stmt_keywords[] = {"include", "extend", "exec",   "fs",
                                            "net",     "shell",  "editor", "audit"};
static const char *const exec_keywords[] = {"allow", "deny"};
static const char *const fs_keywords[] = {"read", "write", "readonly", "deny"};
static const char *const shell_keywords[] = {"chdir"};
static const char *const editor_keywords[] = {"read", "write", "tui"};
#define NKW(a) (sizeof(a) / sizeof((a)[0]))

typedef enum ctx_kind {
    CTX_GRANT,
    CTX_EXEC,
    CTX_FS,
    CTX_SHELL,
    CTX_EDITOR,
    CTX_NET,
    CTX_OTHER
} ctx_kind;

static bool in_list(const char *w, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w, list[i]) == 0)
            return true;
    return false;
}

/* The keyword a statement or rule starts with: an unquoted word. */
static const char *keyword(const gk_pitem *it)
{
    return it->w.quoted ? NULL : it->w.text;
}

static bool is_stmt_keyword(const gk_pitem *it)
{
    const char *k = keyword(it);
    return k && in_list(k, stmt_keywords, NKW(stmt_keywords));
}

/* A view of one statement: a whole node, or one piece of a node that the
 * missing-';' heuristic split. Brackets, block and terminator belong to the
 * last piece only. */
typedef struct sview {
    gk_pnode *node;
    gk_pitem *head;
    gk_pitem *items;
    size_t nitems;
    bool last;
} sview;

/* A rule cut short by a syntax error: what it lacks was already said. */
static bool sv_recovered(const sview *s) { return s->last && s->node->recovered; }

static bool sv_block(const sview *s) { return s->last && s->node->is_block; }
static bool sv_brackets(const sview *s) { return s->last && s->node->brackets.present; }
static bool sv_semi(const sview *s) { return s->last && s->node->terminated && !s->node->is_block; }

static uint32_t sv_start(const sview *s) { return s->head->w.loc.start; }

/* End of the statement as written (through ';' when there is one). */
static uint32_t sv_end(const sview *s)
{
    if (sv_semi(s))
        return s->node->semi.end;
    if (sv_block(s))
        return s->node->terminated ? s->node->rbrace.end : s->node->span.end;
    if (sv_brackets(s))
        return s->node->brackets.at.end;
    return s->nitems ? s->items[s->nitems - 1].w.loc.end : s->head->w.loc.end;
}

/* The token right after the head, for "expected X after 'kw'". */
static gk_span sv_after_head(const sview *s)
{
    if (s->nitems)
        return (gk_span){s->items[0].w.loc.start, s->items[0].w.loc.end};
    if (sv_brackets(s))
        return (gk_span){s->node->brackets.at.start, s->node->brackets.at.start + 1};
    if (sv_block(s))
        return s->node->lbrace;
    if (sv_semi(s))
        return s->node->semi;
    return (gk_span){s->head->w.loc.end, s->head->w.loc.end};
}

static gk_loc sv_loc(const gk_pstate *ps, const sview *s)
{
    return loc_at(ps, sv_start(s), sv_end(s));
}

static void err_span(gk_pstate *ps, gk_span sp, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void err_span(gk_pstate *ps, gk_span sp, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gk_autofree char *msg = gk_vprintf(fmt, ap);
    va_end(ap);
    gk_diag_add(ps->diags, GK_ERROR, loc_at(ps, sp.start, sp.end), hint, "%s", msg);
}

/* "did you mean 'x'?" for the nearest keyword, or NULL. */
static char *suggest(const char *w, const char *const *list, size_t n)
{
    const char *near = w ? gk_nearest(w, list, n) : NULL;
    return near ? gk_printf("did you mean '%s'?", near) : NULL;
}

/* After a syntax error, bison resumes at the next word it can start a
 * statement with; if that word is in the middle of the line the error was
 * on and not a keyword, it is debris of the broken rule ("deny [x] /a;"
 * resumes at "/a"), and reading it as a statement would only add noise. */
static bool is_debris(const gk_pstate *ps, const gk_pnode *n, const char *const *kw, size_t nkw)
{
    if (n->head.line_start || !ps->nsyntax_errs)
        return false;
    /* A keyword of the block is a statement of its own ("allow git [log]
     * deny bash;" lacks a ';', and "deny bash" is real). */
    const char *k = keyword(&n->head);
    if (k && (in_list(k, kw, nkw) || in_list(k, stmt_keywords, NKW(stmt_keywords))))
        return false;
    uint32_t at = n->head.w.loc.start, line = at;
    while (line > 0 && ps->src->text[line - 1] != '\n')
        line--;
    for (size_t i = ps->nsyntax_errs; i-- > 0;) {
        uint32_t e = ps->syntax_errs[i];
        if (e >= line && e <= at)
            return true;
    }
    return false;
}

/* Call fn on each piece of node: a word at the start of a line that is a
 * keyword of the context (rule keywords, and statement keywords, which
 * signal a block left open) starts a new piece, and the piece before it
 * lacked its ';'. */
typedef void (*piece_fn)(gk_pstate *ps, const sview *s, void *arg);

static void for_each_piece(gk_pstate *ps, gk_pnode *n, const char *const *kw, size_t nkw,
                           piece_fn fn, void *arg)
{
    if (is_debris(ps, n, kw, nkw))
        return;
    sview s = {.node = n, .head = &n->head, .items = n->items.v, .nitems = 0};
    for (size_t i = 0; i < n->items.n; i++) {
        gk_pitem *it = &n->items.v[i];
        const char *k = keyword(it);
        bool splits = it->line_start && !it->comma_before && k &&
                      (in_list(k, kw, nkw) || in_list(k, stmt_keywords, NKW(stmt_keywords)));
        if (!splits) {
            s.nitems++;
            continue;
        }
        const gk_pitem *prev = s.nitems ? &s.items[s.nitems - 1] : s.head;
        if (!prev->broken)
            gk_perr(ps, prev->w.loc.end, prev->w.loc.end, NULL, "expected ';' after %s",
                kw == stmt_keywords ? "statement" : "rule");
        fn(ps, &s, arg);
        s.head = it;
        s.items = it + 1;
        s.nitems = 0;
    }
    s.last = true;
    fn(ps, &s, arg);
}

/* Words to the AST: the text moves out of the parse tree. */
static gk_word take_word(gk_pitem *it)
{
    gk_word w = it->w;
    it->w.text = NULL;
    if (!w.text)
        w.text = gk_strdup("");
    return w;
}

static void reject_brackets(gk_pstate *ps, const sview *s, const char *what)
{
    if (sv_brackets(s))
        err_span(ps, (gk_span){s->node->brackets.at.start, s->node->brackets.at.start + 1},
                 "only exec rules take a subcommand list", "unexpected '[' after '%s'", what);
}

/* `net allow;`, `chdir deny;`: exactly one unquoted allow or deny. */
static gk_verdict read_verdict(gk_pstate *ps, const sview *s, const char *what)
{
    if (sv_block(s)) {
        err_span(ps, s->node->lbrace, NULL, "expected 'allow' or 'deny' after '%s'", what);
        return GK_UNSET;
    }
    reject_brackets(ps, s, what);
    if (s->nitems == 0) {
        if (!sv_recovered(s))
            err_span(ps, sv_after_head(s), NULL, "expected 'allow' or 'deny' after '%s'", what);
        return GK_UNSET;
    }
    const gk_pitem *v = &s->items[0];
    const char *k = keyword(v);
    gk_verdict r = GK_UNSET;
    if (k && strcmp(k, "allow") == 0)
        r = GK_ALLOW;
    else if (k && strcmp(k, "deny") == 0)
        r = GK_DENY;
    if (r == GK_UNSET) {
        gk_autofree char *hint = suggest(k, exec_keywords, 2);
        gk_diag_add(ps->diags, GK_ERROR, v->w.loc, hint,
                    "expected 'allow' or 'deny' after '%s', found '%s'", what, v->w.text);
        return GK_UNSET;
    }
    if (s->nitems > 1) {
        gk_diag_add(ps->diags, GK_ERROR, s->items[1].w.loc, NULL, "unexpected '%s' after '%s %s'",
                    s->items[1].w.text, what, v->w.text);
        return GK_UNSET;
    }
    return r;
}

/* A scalar written once keeps its first position; a second, different
 * value is a contradiction citing both. */
static void set_scalar(gk_pstate *ps, gk_setting *set, gk_verdict v, gk_loc loc, const char *name)
{
    if (v == GK_UNSET)
        return;
    if (set->value == GK_UNSET) {
        set->value = v;
        set->loc = loc;
    } else if (set->value != v) {
        gk_diag *d = gk_diag_add(ps->diags, GK_ERROR, loc, NULL,
                                 "'%s' is both allowed and denied", name);
        gk_diag_relate(d, set->loc, "first written here");
    }
}

static void process_stmt(gk_pstate *ps, const sview *s, void *arg);

/* Rule pieces inside exec/fs/shell/editor blocks. */
typedef struct block_ctx {
    ctx_kind kind;
    const gk_pitem *head;       /* the block's keyword */
    bool reported_open;         /* "is a '}' missing" said once per block */
} block_ctx;

/* A statement keyword inside a block: most likely the block's '}' was
 * forgotten. Say so once, then read it as the statement it is. */
static bool stray_statement(gk_pstate *ps, const sview *s, block_ctx *b)
{
    if (!is_stmt_keyword(s->head))
        return false;
    if (!b->reported_open) {
        gk_diag *d = gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc,
                                 "is a '}' missing before it?", "unexpected '%s' inside '%s'",
                                 s->head->w.text, b->head->w.text);
        gk_diag_relate(d, b->head->w.loc, "'%s' block starts here", b->head->w.text);
        b->reported_open = true;
    }
    process_stmt(ps, s, NULL);
    return true;
}

/* Unknown rule keyword: "expected 'allow' or 'deny', found 'alow'". */
static void bad_rule_keyword(gk_pstate *ps, const sview *s, const char *expected,
                             const char *const *kw, size_t nkw)
{
    const char *k = keyword(s->head);
    gk_autofree char *hint = suggest(k, kw, nkw);
    if (k)
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc, hint, "expected %s, found '%s'",
                    expected, k);
    else
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc, "keywords are not quoted",
                    "expected %s, found a string", expected);
}

static bool rule_is_block(gk_pstate *ps, const sview *s)
{
    if (!sv_block(s))
        return false;
    err_span(ps, s->node->lbrace, NULL, "unexpected '{' after '%s'", s->head->w.text);
    return true;
}

static void exec_rule(gk_pstate *ps, const sview *s, void *arg)
{
    block_ctx *b = arg;
    const char *k = keyword(s->head);
    gk_verdict v = !k ? GK_UNSET : strcmp(k, "allow") == 0 ? GK_ALLOW
                                 : strcmp(k, "deny") == 0  ? GK_DENY
                                                           : GK_UNSET;
    if (v == GK_UNSET) {
        if (stray_statement(ps, s, b))
            return;
        bad_rule_keyword(ps, s, "'allow' or 'deny'", exec_keywords, NKW(exec_keywords));
        return;
    }
    if (rule_is_block(ps, s))
        return;

    gk_exec_rule r = {.verdict = v, .loc = sv_loc(ps, s)};
    if (s->nitems)
        r.targets = gk_malloc(s->nitems * sizeof(*r.targets));
    for (size_t i = 0; i < s->nitems; i++) {
        gk_pitem *it = &s->items[i];
        const char *w = keyword(it);
        gk_target t;
        if (it->broken)
            continue; /* reported by the lexer */
        if (w && strcmp(w, "match") == 0) {
            gk_pitem *pat = i + 1 < s->nitems ? &s->items[i + 1] : NULL;
            if (pat && pat->broken) {
                i++;
                continue;
            }
            if (!pat || !pat->w.quoted || pat->comma_before) {
                gk_diag_add(ps->diags, GK_ERROR, it->w.loc,
                            "to name a command called match, quote it: \"match\"",
                            "expected a quoted pattern after 'match'");
                continue;
            }
            t.kind = GK_T_MATCH;
            t.word = take_word(pat);
            i++;
        } else {
            t.kind = gk_classify_target(it->w.text ? it->w.text : "");
            t.word = take_word(it);
        }
        r.targets[r.ntargets++] = t;
    }
    if (sv_brackets(s)) {
        gk_pitems *subs = &s->node->brackets.subs;
        r.has_subcmds = true;
        if (subs->n) {
            r.subcmds = gk_calloc(subs->n, sizeof(gk_word));
            for (size_t i = 0; i < subs->n; i++)
                if (!subs->v[i].broken)
                    r.subcmds[r.nsubcmds++] = take_word(&subs->v[i]);
        }
    }
    if (r.ntargets == 0) {
        if (sv_recovered(s))
            ;
        else if (sv_brackets(s) && s->nitems == 0)
            gk_diag_add(ps->diags, GK_ERROR,
                        loc_at(ps, s->node->brackets.at.start, s->node->brackets.at.start + 1),
                        "write allow NAME [SUB ...];", "subcommand list needs a name");
        else if (s->nitems == 0)
            err_span(ps, sv_after_head(s), NULL,
                     "expected a command name, path or 'match' after '%s'", k);
        for (size_t i = 0; i < r.nsubcmds; i++)
            gk_word_free(&r.subcmds[i]);
        free(r.subcmds);
        free(r.targets);
        return;
    }
    GK_VEC_PUSH(ps->ast->exec, ps->ast->nexec, ps->exec_cap, r);
}

static void fs_rule(gk_pstate *ps, const sview *s, void *arg)
{
    block_ctx *b = arg;
    const char *k = keyword(s->head);
    static const gk_fs_kind kinds[] = {GK_FS_READ, GK_FS_WRITE, GK_FS_READONLY, GK_FS_DENY};
    size_t which = NKW(fs_keywords);
    for (size_t i = 0; k && i < NKW(fs_keywords); i++)
        if (strcmp(k, fs_keywords[i]) == 0)
            which = i;
    if (which == NKW(fs_keywords)) {
        if (stray_statement(ps, s, b))
            return;
        bad_rule_keyword(ps, s, "'read', 'write', 'readonly' or 'deny'", fs_keywords,
                         NKW(fs_keywords));
        return;
    }
    if (rule_is_block(ps, s))
        return;
    reject_brackets(ps, s, k);
    if (s->nitems == 0) {
        if (!sv_recovered(s))
            err_span(ps, sv_after_head(s), NULL, "expected a path after '%s'", k);
        return;
    }
    gk_fs_rule r = {.kind = kinds[which], .loc = sv_loc(ps, s)};
    r.paths = gk_calloc(s->nitems, sizeof(gk_word));
    for (size_t i = 0; i < s->nitems; i++)
        if (!s->items[i].broken)
            r.paths[r.npaths++] = take_word(&s->items[i]);
    if (r.npaths == 0) {
        free(r.paths);
        return;
    }
    GK_VEC_PUSH(ps->ast->fs, ps->ast->nfs, ps->fs_cap, r);
}

/* `allow DEST...;` / `deny DEST...;` in a net block. The destinations are
 * read (and their errors given) by validation, shared with YAML. */
static void net_rule(gk_pstate *ps, const sview *s, void *arg)
{
    block_ctx *b = arg;
    const char *k = keyword(s->head);
    gk_verdict v = !k ? GK_UNSET : strcmp(k, "allow") == 0 ? GK_ALLOW
                                 : strcmp(k, "deny") == 0  ? GK_DENY
                                                           : GK_UNSET;
    if (v == GK_UNSET) {
        if (stray_statement(ps, s, b))
            return;
        bad_rule_keyword(ps, s, "'allow' or 'deny'", exec_keywords, NKW(exec_keywords));
        return;
    }
    if (rule_is_block(ps, s))
        return;
    if (sv_brackets(s)) {
        err_span(ps, (gk_span){s->node->brackets.at.start, s->node->brackets.at.start + 1},
                 "an IPv6 address is written [ADDRESS] or [ADDRESS]:PORT, with no space",
                 "unexpected '[' in a net rule");
        return;
    }
    if (s->nitems == 0) {
        if (!sv_recovered(s))
            err_span(ps, sv_after_head(s), "write HOST[:PORT]: github.com, *.npmjs.org:443",
                     "expected a destination after '%s'", k);
        return;
    }
    gk_net_rule r = {.verdict = v, .loc = sv_loc(ps, s)};
    r.dests = gk_calloc(s->nitems, sizeof(gk_word));
    for (size_t i = 0; i < s->nitems; i++)
        if (!s->items[i].broken)
            r.dests[r.ndests++] = take_word(&s->items[i]);
    if (r.ndests == 0) {
        free(r.dests);
        return;
    }
    GK_VEC_PUSH(ps->ast->net_rules, ps->ast->nnet_rules, ps->net_cap, r);
}

static void shell_rule(gk_pstate *ps, const sview *s, void *arg)
{
    block_ctx *b = arg;
    const char *k = keyword(s->head);
    if (!k || strcmp(k, "chdir") != 0) {
        if (stray_statement(ps, s, b))
            return;
        bad_rule_keyword(ps, s, "'chdir'", shell_keywords, NKW(shell_keywords));
        return;
    }
    gk_verdict v = read_verdict(ps, s, k);
    set_scalar(ps, &ps->ast->shell_chdir, v, sv_loc(ps, s), "shell.chdir");
}

static void editor_rule(gk_pstate *ps, const sview *s, void *arg)
{
    block_ctx *b = arg;
    const char *k = keyword(s->head);
    gk_setting *set = NULL;
    const char *name = NULL;
    if (k && strcmp(k, "read") == 0)
        set = &ps->ast->editor_read, name = "editor.read";
    else if (k && strcmp(k, "write") == 0)
        set = &ps->ast->editor_write, name = "editor.write";
    else if (k && strcmp(k, "tui") == 0)
        set = &ps->ast->editor_tui, name = "editor.tui";
    if (!set) {
        if (stray_statement(ps, s, b))
            return;
        bad_rule_keyword(ps, s, "'read', 'write' or 'tui'", editor_keywords,
                         NKW(editor_keywords));
        return;
    }
    gk_verdict v = read_verdict(ps, s, k);
    set_scalar(ps, set, v, sv_loc(ps, s), name);
}

/* The rule keywords of a block, and where they belong when they appear
 * outside one. */
static const char *rule_home(const char *k)
{
    if (!k)
        return NULL;
    if (strcmp(k, "allow") == 0 || strcmp(k, "match") == 0)
        return "an 'exec' block";
    if (strcmp(k, "deny") == 0)
        return "an 'exec' or 'fs' block";
    if (strcmp(k, "read") == 0 || strcmp(k, "write") == 0)
        return "an 'fs' or 'editor' block";
    if (strcmp(k, "readonly") == 0)
        return "an 'fs' block";
    if (strcmp(k, "chdir") == 0)
        return "a 'shell' block";
    if (strcmp(k, "tui") == 0)
        return "an 'editor' block";
    return NULL;
}

static void block_stmt(gk_pstate *ps, const sview *s, ctx_kind kind)
{
    const char *k = s->head->w.text;
    if (!sv_block(s)) {
        if (!sv_recovered(s) || s->nitems)
            err_span(ps, sv_after_head(s), NULL, "expected '{' after '%s'", k);
        return;
    }
    if (s->nitems)
        err_span(ps, sv_after_head(s), NULL, "expected '{' after '%s'", k);
    gk_file_ast *ast = ps->ast;
    /* Each block kind: where its AST records it, its rule, its keywords. */
    struct {
        bool *seen;
        gk_loc *loc;
        piece_fn fn;
        const char *const *kw;
        size_t nkw;
    } const blocks[] = {
        [CTX_EXEC] = {&ast->has_exec, &ast->exec_loc, exec_rule, exec_keywords, NKW(exec_keywords)},
        [CTX_FS] = {&ast->has_fs, &ast->fs_loc, fs_rule, fs_keywords, NKW(fs_keywords)},
        [CTX_NET] = {&ast->has_net_list, &ast->net_list_loc, net_rule, exec_keywords,
                     NKW(exec_keywords)},
        [CTX_SHELL] = {&ast->has_shell, &ast->shell_loc, shell_rule, shell_keywords,
                       NKW(shell_keywords)},
        [CTX_EDITOR] = {&ast->has_editor, &ast->editor_loc, editor_rule, editor_keywords,
                        NKW(editor_keywords)},
    };
    size_t at = (size_t)kind < sizeof(blocks) / sizeof(*blocks) && blocks[kind].fn
                    ? (size_t)kind
                    : (size_t)CTX_EDITOR;
    if (!*blocks[at].seen)
        *blocks[at].loc = s->head->w.loc;
    *blocks[at].seen = true;
    piece_fn fn = blocks[at].fn;
    const char *const *kw = blocks[at].kw;
    size_t nkw = blocks[at].nkw;
    block_ctx b = {.kind = kind, .head = s->head};
    for (size_t i = 0; i < s->node->kids.n; i++)
        for_each_piece(ps, s->node->kids.v[i], kw, nkw, fn, &b);
}

/* include "x"; extend "x"; */
static void path_stmt(gk_pstate *ps, const sview *s, gk_word **arr, size_t *n)
{
    const char *k = s->head->w.text;
    if (sv_block(s)) {
        err_span(ps, s->node->lbrace, NULL, "expected a quoted path after '%s'", k);
        return;
    }
    reject_brackets(ps, s, k);
    if (s->nitems == 0) {
        if (!sv_recovered(s))
            err_span(ps, sv_after_head(s), NULL, "expected a quoted path after '%s'", k);
        return;
    }
    gk_pitem *p = &s->items[0];
    if (p->broken)
        return;
    if (!p->w.quoted) {
        gk_autofree char *hint = gk_printf("write %s \"%s\";", k, p->w.text);
        gk_diag_add(ps->diags, GK_ERROR, p->w.loc, hint, "expected a quoted path after '%s'", k);
        return;
    }
    if (s->nitems > 1) {
        gk_autofree char *hint = gk_printf("write one '%s' per file", k);
        gk_diag_add(ps->diags, GK_ERROR, s->items[1].w.loc, hint,
                    "unexpected '%s' after the path", s->items[1].w.text);
        return;
    }
    gk_word w = take_word(p);
    *arr = gk_realloc(*arr, (*n + 1) * sizeof(gk_word));
    (*arr)[(*n)++] = w;
}

/* One statement inside the grant block. */
static void process_stmt(gk_pstate *ps, const sview *s, void *arg)
{
    (void)arg;
    gk_file_ast *ast = ps->ast;
    const char *k = keyword(s->head);
    if (!k) {
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc, "keywords are not quoted",
                    "expected a statement keyword, found a string");
        return;
    }
    if (strcmp(k, "include") == 0) {
        path_stmt(ps, s, &ast->includes, &ast->nincludes);
    } else if (strcmp(k, "extend") == 0) {
        path_stmt(ps, s, &ast->extends, &ast->nextends);
    } else if (strcmp(k, "exec") == 0) {
        block_stmt(ps, s, CTX_EXEC);
    } else if (strcmp(k, "fs") == 0) {
        block_stmt(ps, s, CTX_FS);
    } else if (strcmp(k, "shell") == 0) {
        block_stmt(ps, s, CTX_SHELL);
    } else if (strcmp(k, "editor") == 0) {
        block_stmt(ps, s, CTX_EDITOR);
    } else if (strcmp(k, "net") == 0 && sv_block(s)) {
        block_stmt(ps, s, CTX_NET);
    } else if (strcmp(k, "net") == 0) {
        gk_verdict v = read_verdict(ps, s, k);
        set_scalar(ps, &ast->net, v, sv_loc(ps, s), "net");
    } else if (strcmp(k, "audit") == 0) {
        if (sv_block(s))
            err_span(ps, s->node->lbrace, "write 'audit;'", "unexpected '{' after '%s'", k);
        else if (s->nitems)
            gk_diag_add(ps->diags, GK_ERROR, s->items[0].w.loc, "write 'audit;'",
                        "unexpected '%s' after 'audit'", s->items[0].w.text);
        else if (sv_brackets(s))
            reject_brackets(ps, s, k);
        else {
            if (!ast->audit)
                ast->audit_loc = sv_loc(ps, s);
            ast->audit = true;
        }
    } else if (strcmp(k, "grant") == 0) {
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc, "a file holds exactly one grant block",
                    "unexpected 'grant' inside the grant block");
    } else if (rule_home(k)) {
        gk_autofree char *msg = gk_printf("'%s' rules belong in %s", k, rule_home(k));
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc, NULL, "%s", msg);
    } else {
        gk_autofree char *hint = suggest(k, stmt_keywords, NKW(stmt_keywords));
        gk_diag_add(ps->diags, GK_ERROR, s->head->w.loc,
                    hint ? hint
                         : "statements are include, extend, exec, fs, net, shell, editor "
                           "and audit",
                    "unknown keyword '%s'", k);
    }
}

static void process_grant(gk_pstate *ps, gk_pnode *n)
{
    gk_file_ast *ast = ps->ast;
    sview s = {.node = n, .head = &n->head, .items = n->items.v, .nitems = n->items.n,
               .last = true};
    ast->grant_loc = n->head.w.loc;
    if (n->items.n >= 1)
        ast->name = take_word(&n->items.v[0]);
    if (n->items.n > 1)
        gk_diag_add(ps->diags, GK_ERROR, n->items.v[1].w.loc,
                    "quote a name with spaces: grant \"my name\" { ... }",
                    "unexpected '%s' after the grant name", n->items.v[1].w.text);
    if (!n->is_block) {
        if (n->items.n > 1)
            return;
        const char *after = n->items.n ? "the grant name" : "'grant'";
        if (sv_brackets(&s))
            err_span(ps, (gk_span){n->brackets.at.start, n->brackets.at.start + 1}, NULL,
                     "expected '{' after %s", after);
        else if (n->terminated)
            err_span(ps, n->semi, NULL, "expected '{' after %s", after);
        return;
    }
    for (size_t i = 0; i < n->kids.n; i++)
        for_each_piece(ps, n->kids.v[i], stmt_keywords, NKW(stmt_keywords), process_stmt, NULL);
}

static void process_root(gk_pstate *ps, size_t syntax_errors)
{
    gk_pnode *grant = NULL;
    bool reported_before = false, reported_after = false;
    for (size_t i = 0; i < ps->root.n; i++) {
        gk_pnode *n = ps->root.v[i];
        const char *k = keyword(&n->head);
        if (k && strcmp(k, "grant") == 0) {
            if (!grant) {
                grant = n;
                process_grant(ps, n);
            } else {
                gk_diag *d = gk_diag_add(ps->diags, GK_ERROR, n->head.w.loc, NULL,
                                         "a file must contain exactly one grant block");
                gk_diag_relate(d, grant->head.w.loc, "first grant block here");
            }
        } else if (grant) {
            if (!reported_after)
                gk_diag_add(ps->diags, GK_ERROR, n->head.w.loc, NULL,
                            "unexpected '%s' after the grant block", n->head.w.text);
            reported_after = true;
        } else if (!reported_before && !k) {
            gk_diag_add(ps->diags, GK_ERROR, n->head.w.loc, "keywords are not quoted",
                        "expected 'grant', found a string");
            reported_before = true;
        } else if (!reported_before) {
            const char *const grant_kw[] = {"grant"};
            gk_autofree char *hint = suggest(k, grant_kw, 1);
            if (!hint)
                hint = gk_strdup("a grant file is one block: grant NAME { ... }");
            gk_diag_add(ps->diags, GK_ERROR, n->head.w.loc, hint,
                        "expected 'grant', found '%s'", n->head.w.text);
            reported_before = true;
        }
    }
    if (!grant && !reported_before && syntax_errors == 0)
        gk_diag_add(ps->diags, GK_ERROR, loc_at(ps, 0, 0),
                    "a grant file is one block: grant NAME { ... }", "expected a grant block");
}

/* ---- entry point --------------------------------------------------------- */

/* Offset of the first NUL byte or invalid UTF-8 sequence, or len. */
static size_t first_bad_byte(const unsigned char *s, size_t len, bool *is_nul)
{
    size_t i = 0;
    *is_nul = false;
    while (i < len) {
        unsigned c = s[i];
        if (c == 0) {
            *is_nul = true;
            return i;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned cp, min;
        if (c >= 0xC2 && c <= 0xDF)
            need = 1, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            need = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4)
            need = 3, cp = c & 0x07, min = 0x10000;
        else
            return i;
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += need + 1;
    }
    return len;
}

/* Keep the parser's messages in source order: bison reports while parsing,
 * the keyword pass afterwards. */
static int diag_cmp(const void *a, const void *b)
{
    const gk_diag *x = a, *y = b;
    if (x->loc.start != y->loc.start)
        return x->loc.start < y->loc.start ? -1 : 1;
    return 0;
}

/* Stable merge sort of d->v[from..n) by position (a hostile file can
 * produce many errors: no quadratic sort). */
static void sort_diags(grant_diags *d, size_t from)
{
    size_t n = d->n - from;
    if (n < 2)
        return;
    gk_diag *a = d->v + from, *tmp = gk_malloc(n * sizeof(*tmp));
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = diag_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof(*tmp));
    }
    free(tmp);
}

gk_file_ast *gk_parse_grant(gk_source *src, grant_diags *diags)
{
    gk_file_ast *ast = gk_ast_new(src, GK_SURFACE_GRANT);
    if (!src)
        return ast;
    size_t first_diag = diags->n;
    size_t errors_before = diags->errors;
    gk_pstate ps = {.src = src, .ast = ast, .diags = diags};

    bool is_nul;
    size_t bad = first_bad_byte((const unsigned char *)src->text, src->len, &is_nul);
    if (bad < src->len) {
        gk_loc at = {src, (uint32_t)bad, (uint32_t)bad + 1};
        if (is_nul)
            gk_diag_add(diags, GK_ERROR, at, "grant files are UTF-8 text", "unexpected NUL byte");
        else
            gk_diag_add(diags, GK_ERROR, at, "grant files are UTF-8 text",
                        "invalid UTF-8 byte 0x%02x", (unsigned char)src->text[bad]);
        return ast;
    }
    /* A UTF-8 byte order mark is not part of the text. */
    uint32_t from = src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;

    yyscan_t scanner;
    if (gk_lex_begin(&ps, from, &scanner) != 0)
        abort(); /* out of memory, as everywhere in libgrant */
    /* 1 or 2 (nesting beyond bison's stack): the error is reported and what
     * was parsed is gone; process_root sees an empty file. */
    gk_yyparse(scanner, &ps);
    gk_lex_end(scanner);
    process_root(&ps, diags->errors - errors_before);
    gk_pnodes_clear(&ps.root);
    free(ps.braces);
    free(ps.syntax_errs);
    sort_diags(diags, first_diag);
    return ast;
}
