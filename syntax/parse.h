/* parse.h - the grant parser's private interface: parse tree and state.
 *
 * Three files share it: lexer.l (tokens, comments, the token outline fmt
 * reads), parser.y (the grammar: bison builds the parse tree below) and
 * build.c (the parse tree's helpers, the keyword pass that turns it into a
 * gk_file_ast, and gk_parse_grant). Nothing outside syntax/ includes it.
 *
 * Ownership: a gk_pnode owns its words, its kids and its arrays; the
 * gk_pstate owns the root nodes and its lexer bookkeeping, and fills (but
 * does not own) ps->ast.
 */
#ifndef GK_SYNTAX_PARSE_H
#define GK_SYNTAX_PARSE_H

#include "syntax/syntax.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

/* Byte offsets into the source being parsed (the source itself is in the
 * parse state). */
typedef struct gk_span {
    uint32_t start, end;
} gk_span;

/* A word or string as the lexer saw it. */
typedef struct gk_pitem {
    gk_word w;          /* owned */
    bool line_start;    /* first token on its line */
    bool comma_before;  /* written after a ',' */
    bool broken;        /* the lexer reported an error inside it */
    bool is_comma;      /* a ',' (only until the list is checked) */
} gk_pitem;

typedef struct gk_pitems {
    gk_pitem *v;
    size_t n, cap;
} gk_pitems;

typedef struct gk_pnode gk_pnode;
typedef struct gk_pnodes {
    gk_pnode **v;
    size_t n, cap;
} gk_pnodes;

typedef struct gk_pbrackets {
    bool present;
    gk_pitems subs;
    gk_span at; /* '[' ... ']' */
} gk_pbrackets;

/* One statement or rule: head word, its words, an optional [...] list,
 * and either a terminating ';' or a { block }. */
struct gk_pnode {
    gk_pitem head;
    gk_pitems items;
    gk_pbrackets brackets;
    bool terminated;    /* ';' written (blocks: '}' written) */
    bool recovered;     /* ended by a syntax error (already reported) */
    gk_span semi;       /* the ';' when terminated and not a block */
    bool is_block;
    gk_span lbrace, rbrace;
    gk_pnodes kids;
    gk_span span;       /* whole statement */
};

/* State shared by the lexer (as yyextra) and the parser. */
typedef struct gk_pstate {
    gk_source *src;
    gk_file_ast *ast;
    grant_diags *diags;
    gk_pnodes root;
    size_t comments_cap, tokens_cap, exec_cap, fs_cap, net_cap; /* of the AST's arrays */

    /* lexer bookkeeping */
    uint32_t offset;        /* of the next byte to scan */
    size_t input_pos;       /* of the next byte to hand to flex */
    bool newline_seen;      /* since the last token */
    uint32_t last_end;      /* end of the last token returned */
    uint32_t prev_end;      /* end of the token before it */
    unsigned last_depth;    /* brace depth before the last token */
    uint32_t *braces;       /* offsets of the '{' still open */
    size_t nbraces, capbraces;
    uint32_t lbracket;      /* offset of the last '[' */
    uint32_t head_start, head_end; /* first word of the current statement */
    int last_kind;          /* token kind of the last token */
    bool last_unterminated, prev_unterminated; /* an unterminated string */
    bool pending_unterminated;
    uint32_t *syntax_errs;  /* offsets of the syntax errors bison reported */
    size_t nsyntax_errs, capsyntax_errs;
    bool eof_reported;
    unsigned net_depth;     /* brace depth inside a `net {` block, 0 outside:
                             * there "[::1]:443" is one word, not a '[' */
} gk_pstate;
/* Parse-tree helpers (build.c), used by the grammar's actions and
 * %destructors. A push moves the item's text into the list. */
GK_HIDDEN void gk_pitem_clear(gk_pitem *it);
GK_HIDDEN void gk_pitems_push(gk_pitems *v, gk_pitem *it);
GK_HIDDEN void gk_pitems_push_comma(gk_pitems *v, gk_span at);
GK_HIDDEN void gk_pitems_clear(gk_pitems *v);
GK_HIDDEN void gk_pnodes_clear(gk_pnodes *v);
GK_HIDDEN void gk_pnode_free(gk_pnode *n);
/* A node from a head and its words (both moved); checks the commas. */
GK_HIDDEN gk_pnode *gk_pnode_new(gk_pstate *ps, gk_pitem *head, gk_pitems *items, gk_span span);
/* Commas go between words (and, in a subcommand list, may end it): drop
 * them from v, marking the word after each, and report the rest. */
GK_HIDDEN void gk_check_commas(gk_pstate *ps, gk_pitems *v, bool trailing_ok);

/* An error at [start, end) of the source being parsed. */
GK_HIDDEN gk_diag *gk_perr(gk_pstate *ps, uint32_t start, uint32_t end, const char *hint,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* lexer.l: set up a scanner over ps->src (from byte `from`), and tear it down. */
GK_HIDDEN int gk_lex_begin(gk_pstate *ps, uint32_t from, yyscan_t *scanner);
GK_HIDDEN void gk_lex_end(yyscan_t scanner);

#endif
