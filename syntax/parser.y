/* parser.y - the grant language (grant-language.md §2): a pure bison parser.
 *
 * Keywords are not reserved (`allow allow;` names a command called allow),
 * so the grammar below knows no keywords at all. It parses the shape every
 * grant file shares,
 *
 *     stmt = word { [","] word } [ "[" { word [","] } "]" ] ";"
 *          | word { [","] word } "{" { stmt } "}"
 *
 * into a small parse tree (parse.h), and a second pass (build.c) reads
 * the words: the first word of a statement or rule is its keyword, checked
 * against what the enclosing block allows, with "did you mean" hints. This
 * keeps the grammar conflict-free (%expect 0) and lets the messages say what
 * was expected in words a user knows ("expected '{' after 'exec'") instead of
 * token names.
 *
 * Recovery: bison's `error` token resynchronises at ';' and '}' (a rule with
 * a missing ';' before '}' is kept); the lexer closes blocks left open at end
 * of file. Because keywords are plain words, a forgotten ';' before a line
 * that starts with a keyword of the enclosing block (`allow git` newline
 * `deny bash;`) parses as one long rule; the second pass splits it there and
 * reports the missing ';'. To name a command that is also a keyword at the
 * start of a continuation line, quote it.
 */
%define api.pure full
%define api.prefix {gk_yy}
%define api.token.prefix {TOK_}
%define api.location.type {gk_span}
%define parse.error custom
%locations
%expect 0

%param {yyscan_t scanner}
%parse-param {gk_pstate *ps}

%code requires {
#include "syntax/parse.h"
}

%code provides {
int gk_yylex(GK_YYSTYPE *lval, gk_span *lloc, yyscan_t scanner);
}

%code {
#include <stdlib.h>
#include <string.h>

/* Span of a rule: from the first symbol to the last; empty rules sit at the
 * end of what precedes them. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                             \
    do {                                                                        \
        if (N) {                                                                \
            (Cur).start = YYRHSLOC(Rhs, 1).start;                               \
            (Cur).end = YYRHSLOC(Rhs, N).end;                                   \
        } else {                                                                \
            (Cur).start = (Cur).end = YYRHSLOC(Rhs, 0).end;                     \
        }                                                                       \
    } while (0)

static void gk_yyerror(gk_span *loc, yyscan_t scanner, gk_pstate *ps, const char *msg);
}

%union {
    gk_pitem item;
    gk_pitems items;
    gk_pbrackets brackets;
    gk_pnode *node;
    gk_pnodes nodes;
}

%token <item> WORD "word" STRING "string"
%token LBRACE "{" RBRACE "}" LBRACKET "[" RBRACKET "]" SEMI ";" COMMA ","
%nterm <nodes> stmts
%nterm <node> stmt
%nterm <item> item
%nterm <items> items_opt subs
%nterm <brackets> brackets_opt

%destructor { gk_pitem_clear(&$$); } <item>
%destructor { gk_pitems_clear(&$$); } <items>
%destructor { gk_pitems_clear(&$$.subs); } <brackets>
%destructor { gk_pnode_free($$); } <node>
%destructor { gk_pnodes_clear(&$$); } <nodes>

%%

file:
    stmts                       { ps->root = $1; }
    ;

stmts:
    %empty                      { $$ = (gk_pnodes){0}; }
  | stmts stmt                  { $$ = $1; if ($2) GK_VEC_PUSH($$.v, $$.n, $$.cap, $2); }
  ;

stmt:
    item items_opt brackets_opt ";" {
        $$ = gk_pnode_new(ps, &$1, &$2, @$);
        $$->brackets = $3;
        $$->terminated = true;
        $$->semi = @4;
    }
  | item items_opt brackets_opt error {
        /* Missing ';': keep the rule (the error is already reported). */
        $$ = gk_pnode_new(ps, &$1, &$2, (gk_span){@1.start, $3.present ? @3.end : @2.end});
        $$->brackets = $3;
        $$->recovered = true;
    }
  | item items_opt "{" stmts "}" {
        $$ = gk_pnode_new(ps, &$1, &$2, @$);
        $$->is_block = true;
        $$->terminated = true;
        $$->lbrace = @3;
        $$->rbrace = @5;
        $$->kids = $4;
    }
  | error                       { $$ = NULL; }
  | error ";"                   { $$ = NULL; yyerrok; }
  ;

item:
    WORD
  | STRING
  ;

/* Commas are taken anywhere and checked afterwards (gk_check_commas), so a
 * stray one is one precise error instead of a resynchronisation. */
items_opt:
    %empty                      { $$ = (gk_pitems){0}; }
  | items_opt item              { $$ = $1; gk_pitems_push(&$$, &$2); }
  | items_opt ","               { $$ = $1; gk_pitems_push_comma(&$$, @2); }
  ;

brackets_opt:
    %empty                      { $$ = (gk_pbrackets){0}; }
  | "[" subs "]"                {
        $$ = (gk_pbrackets){true, $2, @$};
        gk_check_commas(ps, &$$.subs, true);
    }
  ;

subs:
    %empty                      { $$ = (gk_pitems){0}; }
  | subs item                   { $$ = $1; gk_pitems_push(&$$, &$2); }
  | subs ","                    { $$ = $1; gk_pitems_push_comma(&$$, @2); }
  ;

%%

/* Bison's own messages: only "memory exhausted" reaches here (syntax errors
 * go to yyreport_syntax_error), when its stack is full: absurd nesting. */
static void gk_yyerror(gk_span *loc, yyscan_t scanner, gk_pstate *ps, const char *msg)
{
    (void)scanner;
    if (strcmp(msg, "memory exhausted") == 0)
        gk_perr(ps, loc->start, loc->end, "grant files nest blocks two deep",
                "blocks nested too deeply");
    else
        gk_perr(ps, loc->start, loc->end, NULL, "%s", msg);
}

static bool expects(const yysymbol_kind_t *exp, int n, yysymbol_kind_t k)
{
    for (int i = 0; i < n; i++)
        if (exp[i] == k)
            return true;
    return false;
}

static const char *describe_token(yysymbol_kind_t k)
{
    switch (k) {
    case YYSYMBOL_YYEOF:
        return "end of file";
    case YYSYMBOL_WORD:
        return "word";
    case YYSYMBOL_STRING:
        return "string";
    case YYSYMBOL_LBRACE:
        return "'{'";
    case YYSYMBOL_RBRACE:
        return "'}'";
    case YYSYMBOL_LBRACKET:
        return "'['";
    case YYSYMBOL_RBRACKET:
        return "']'";
    case YYSYMBOL_SEMI:
        return "';'";
    case YYSYMBOL_COMMA:
        return "','";
    default:
        return "token";
    }
}

/* Say what was expected in the user's terms. The lexer recorded the brace
 * depth before the offending token and where the token before it ended
 * (a missing ';' is reported there, right after the rule it ends). */
static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, gk_pstate *ps)
{
    (void)scanner;
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0)
        n = 0;
    yysymbol_kind_t la = yypcontext_token(ctx);
    const gk_span *at = yypcontext_location(ctx);
    unsigned depth = ps->last_depth;
    GK_VEC_PUSH(ps->syntax_errs, ps->nsyntax_errs, ps->capsyntax_errs, at->start);

    if (la == YYSYMBOL_RBRACKET && !expects(exp, n, YYSYMBOL_RBRACKET)) {
        gk_perr(ps, at->start, at->end, NULL, "unmatched ']'");
    } else if (expects(exp, n, YYSYMBOL_RBRACKET)) {
        gk_diag *d = gk_perr(ps, at->start, at->end, NULL,
                         "expected ']' to close the subcommand list, found %s",
                         describe_token(la));
        gk_diag_relate(d, (gk_loc){ps->src, ps->lbracket, ps->lbracket + 1}, "to match this '['");
    } else if (expects(exp, n, YYSYMBOL_SEMI) && la != YYSYMBOL_LBRACE) {
        const char *head = ps->src->text + ps->head_start;
        size_t hlen = ps->head_end - ps->head_start;
        bool block_kw = depth == 1 && ps->head_end > ps->head_start &&
                        ((hlen == 4 && memcmp(head, "exec", 4) == 0) ||
                         (hlen == 2 && memcmp(head, "fs", 2) == 0) ||
                         (hlen == 5 && memcmp(head, "shell", 5) == 0) ||
                         (hlen == 6 && memcmp(head, "editor", 6) == 0));
        if (depth == 0)
            gk_perr(ps, ps->prev_end, ps->prev_end, "a grant file is one block: grant NAME { ... }",
                "expected '{' to open the grant block");
        else if (block_kw)
            gk_perr(ps, ps->prev_end, ps->prev_end, NULL, "expected '{' after '%.*s'", (int)hlen,
                head);
        else if (!ps->prev_unterminated) /* it swallowed the line, ';' too */
            gk_perr(ps, ps->prev_end, ps->prev_end, NULL, "expected ';' after %s",
                depth >= 2 ? "rule" : "statement");
    } else if (la == YYSYMBOL_RBRACE && depth == 0) {
        gk_perr(ps, at->start, at->end, NULL, "unmatched '}'");
    } else if (la == YYSYMBOL_LBRACE && expects(exp, n, YYSYMBOL_SEMI)) {
        gk_perr(ps, at->start, at->end, "a subcommand list ends the rule: allow NAME [SUB ...];",
            "unexpected '{' after a subcommand list");
    } else if (la == YYSYMBOL_LBRACE) {
        gk_perr(ps, at->start, at->end, NULL, "expected a keyword before '{'");
    } else if (la == YYSYMBOL_SEMI) {
        gk_perr(ps, at->start, at->end, "remove the extra ';'", "unexpected ';'");
    } else {
        gk_perr(ps, at->start, at->end, NULL, "unexpected %s", describe_token(la));
    }
    return 0;
}
