/* fmt.c - the canonical printers (grant and YAML) and grant_fmt.
 *
 * The canonical form is what a grant file means, written one way:
 *
 *   # comments that preceded `grant`
 *   grant NAME {
 *       include "x";              one per line, deduplicated
 *       extend "y";
 *       exec {
 *           allow make cargo;     exec targets deduplicated in order of first
 *           allow git [log diff]; appearance; subcommand lists of one target
 *           deny bash sh;         united; consecutive plain targets with one
 *           deny match "^py$";    verdict share a line; patterns come last
 *       }
 *       fs {
 *           read /usr ~/p;        at most four lines, in this kind order,
 *           write cwd:;           paths deduplicated in order of first
 *           readonly cwd:/.grant; appearance
 *           deny ~/.ssh;
 *       }
 *       net deny;                 or a destination list: one allow and one
 *       net {                     deny line, canonical patterns (lower case,
 *           allow github.com;     no trailing dot) deduplicated in order of
 *           deny *.gist.github.com;  first appearance
 *       }
 *       shell { chdir allow; }
 *       editor { read allow; write deny; tui deny; }
 *       audit;
 *   }
 *
 * Four-space indent, one space between items, no blank lines, a final
 * newline. A word is printed bare unless it needs quoting (whitespace, '"',
 * punctuation, a leading '#', empty, non-printing characters, or a keyword
 * where the grammar would read it as one); quoting is decided from the text
 * alone so that fmt is idempotent and YAML (which cannot carry the grant
 * surface's quoting) round-trips byte for byte.
 *
 * This is exactly what the YAML surface can hold (one entry per exec target,
 * one list per fs kind, patterns in their own mapping), so grant -> yaml ->
 * grant is the identity on the canonical form.
 *
 * Comments: each attaches to the statement or rule that follows it; one on
 * the same line after a statement stays trailing on that statement's line
 * when the line prints exactly one source statement (merged lines get their
 * comments in front); comments before a block's '}' stay at the end of the
 * block; comments before `grant` stay at the top, after the final '}' at the
 * bottom.
 */
#include "syntax/netdest.h"
#include "syntax/syntax.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- small helpers -------------------------------------------------------- */

/* An insertion-ordered set of strings (borrowed), with a hash index. */
typedef struct strset {
    const char **v;
    size_t n, cap;
    size_t *slots; /* index + 1, 0 empty */
    size_t nslots;
} strset;

static uint64_t hash_bytes(const char *s, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static void strset_rehash(strset *s)
{
    size_t ns = s->nslots ? s->nslots * 2 : 16;
    free(s->slots);
    s->slots = gk_calloc(ns, sizeof(size_t));
    s->nslots = ns;
    for (size_t i = 0; i < s->n; i++) {
        size_t h = hash_bytes(s->v[i], 0) & (ns - 1);
        while (s->slots[h])
            h = (h + 1) & (ns - 1);
        s->slots[h] = i + 1;
    }
}

/* Index of text in s, adding it when absent. */
static size_t strset_add(strset *s, const char *text, bool *added)
{
    if (s->n * 2 >= s->nslots)
        strset_rehash(s);
    size_t h = hash_bytes(text, 0) & (s->nslots - 1);
    while (s->slots[h]) {
        size_t i = s->slots[h] - 1;
        if (strcmp(s->v[i], text) == 0) {
            if (added)
                *added = false;
            return i;
        }
        h = (h + 1) & (s->nslots - 1);
    }
    GK_VEC_PUSH(s->v, s->n, s->cap, text);
    s->slots[h] = s->n;
    if (added)
        *added = true;
    return s->n - 1;
}

static void strset_free(strset *s)
{
    free(s->v);
    free(s->slots);
    memset(s, 0, sizeof(*s));
}

static void indent(gk_buf *b, int level)
{
    for (int i = 0; i < level; i++)
        gk_buf_puts(b, "    ");
}

/* Decode one UTF-8 code point at s (assumed valid); returns its length. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0 && s[1]) {
        *cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        return 2;
    }
    if ((s[0] & 0xF0) == 0xE0 && s[1] && s[2]) {
        *cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        return 3;
    }
    if ((s[0] & 0xF8) == 0xF0 && s[1] && s[2] && s[3]) {
        *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
              ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        return 4;
    }
    *cp = s[0];
    return 1;
}

/* Code points a reader might take for a space, a line break or nothing at
 * all: always escaped, never printed raw. */
static bool invisible_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0xA0) || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF; /* the last two: not YAML-printable */
}

/* ---- grant words ---------------------------------------------------------- */

typedef enum wpos { W_NAME, W_TARGET, W_PATH, W_SUB } wpos;

static const char *const keywords[] = {
    "grant", "include", "extend",   "exec",  "fs",    "net",   "shell", "editor", "audit",
    "allow", "deny",    "read",     "write", "readonly", "match", "chdir", "tui",
};

static bool is_keyword(const char *s)
{
    for (size_t i = 0; i < sizeof(keywords) / sizeof(*keywords); i++)
        if (strcmp(s, keywords[i]) == 0)
            return true;
    return false;
}

static bool grant_needs_quote(const char *s, wpos pos)
{
    if (!*s || *s == '#')
        return true;
    /* Inside [...] nothing is a keyword; elsewhere a keyword-looking word is
     * quoted so no reader has to decide. */
    if (pos != W_SUB && is_keyword(s))
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp;
        size_t n = utf8_decode(p, &cp);
        if (cp < 0x80 && (cp <= 0x20 || cp == 0x7F || cp == '"' || strchr("{}[];,", (int)cp)))
            return true;
        if (invisible_cp(cp))
            return true;
        p += n;
    }
    return false;
}

static void put_grant_string(gk_buf *b, const char *s)
{
    gk_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp;
        size_t n = utf8_decode(p, &cp);
        if (cp == '"' || cp == '\\') {
            gk_buf_putc(b, '\\');
            gk_buf_putc(b, (char)cp);
        } else if (cp == '\n') {
            gk_buf_puts(b, "\\n");
        } else if (cp == '\t') {
            gk_buf_puts(b, "\\t");
        } else if (cp < 0x20 || cp == 0x7F) {
            gk_buf_printf(b, "\\x%02X", cp);
        } else if (invisible_cp(cp)) {
            gk_buf_printf(b, "\\u{%X}", cp);
        } else {
            gk_buf_add(b, (const char *)p, n);
        }
        p += n;
    }
    gk_buf_putc(b, '"');
}

static void put_grant_word(gk_buf *b, const char *s, wpos pos)
{
    if (grant_needs_quote(s, pos))
        put_grant_string(b, s);
    else
        gk_buf_puts(b, s);
}

/* Grouped rules wrap before this column, so bundled policies stay readable. */
#define FMT_WIDTH 100

static const char *verdict_word(gk_verdict v);

static size_t printed_len(const char *s, wpos pos)
{
    gk_buf t = {0};
    put_grant_word(&t, s, pos);
    size_t n = t.len;
    gk_buf_free(&t);
    return n;
}

/* ---- YAML scalars --------------------------------------------------------- */

static bool yaml_reserved(const char *s)
{
    static const char *const words[] = {"y",   "n",     "yes",  "no",   "true",  "false",
                                        "on",  "off",   "null", "~",    ".inf",  "-.inf",
                                        "+.inf", ".nan"};
    for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
        if (strcasecmp(s, words[i]) == 0)
            return true;
    return false;
}

/* Plain only when every YAML reader takes it back as the same string. */
static bool yaml_needs_quote(const char *s)
{
    size_t len = strlen(s);
    if (!len || yaml_reserved(s))
        return true;
    if (strchr("-?:,[]{}#&*!|>'\"%@`.+= ", s[0]) && !(s[0] == '.' && s[1] && s[1] != '.' &&
                                                     !(s[1] >= '0' && s[1] <= '9')))
        return true;
    if (s[0] >= '0' && s[0] <= '9')
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp;
        size_t n = utf8_decode(p, &cp);
        if (cp < 0x80 && (cp <= 0x20 || cp == 0x7F || strchr(":,[]{}#\"'\\", (int)cp)))
            return true;
        if (invisible_cp(cp))
            return true;
        p += n;
    }
    return false;
}

static void put_yaml_scalar(gk_buf *b, const char *s)
{
    if (!yaml_needs_quote(s)) {
        gk_buf_puts(b, s);
        return;
    }
    gk_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp;
        size_t n = utf8_decode(p, &cp);
        if (cp == '"' || cp == '\\') {
            gk_buf_putc(b, '\\');
            gk_buf_putc(b, (char)cp);
        } else if (cp == '\n') {
            gk_buf_puts(b, "\\n");
        } else if (cp == '\t') {
            gk_buf_puts(b, "\\t");
        } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0xFF && invisible_cp(cp))) {
            gk_buf_printf(b, "\\x%02X", cp);
        } else if (invisible_cp(cp)) {
            gk_buf_printf(b, "\\u%04X", cp);
        } else {
            gk_buf_add(b, (const char *)p, n);
        }
        p += n;
    }
    gk_buf_putc(b, '"');
}

/* ---- the canonical model -------------------------------------------------- */

typedef struct xent {
    gk_target_kind kind;
    gk_verdict verdict;
    const char *text;
    bool has_sub;
    strset subs;
    size_t line;
} xent;

typedef struct xline {
    size_t *ents; /* indices into canon.x, in print order */
    size_t n, cap;
} xline;

typedef struct canon {
    const gk_file_ast *ast;
    strset inc, ext;
    size_t *inc_of, *ext_of;   /* per AST include/extend: its index in inc/ext */
    xent *x;
    size_t nx, xcap;
    strset xkeys;              /* "kind:verdict:text" -> index into x */
    char **xkey_store;         /* owns the keys of xkeys */
    size_t nxkeys;
    size_t *rule_home;         /* per exec rule: entry of its first target (or SIZE_MAX) */
    xline *lines;
    size_t nlines, lcap;
    strset fs[4];
} canon;

static void canon_build(canon *c, const gk_file_ast *a)
{
    memset(c, 0, sizeof(*c));
    c->ast = a;
    c->inc_of = gk_calloc(a->nincludes + 1, sizeof(size_t));
    c->ext_of = gk_calloc(a->nextends + 1, sizeof(size_t));
    for (size_t i = 0; i < a->nincludes; i++)
        c->inc_of[i] = strset_add(&c->inc, a->includes[i].text ? a->includes[i].text : "", NULL);
    for (size_t i = 0; i < a->nextends; i++)
        c->ext_of[i] = strset_add(&c->ext, a->extends[i].text ? a->extends[i].text : "", NULL);

    c->rule_home = gk_calloc(a->nexec + 1, sizeof(size_t));
    size_t kcap = 0;
    for (size_t r = 0; r < a->nexec; r++) {
        const gk_exec_rule *er = &a->exec[r];
        c->rule_home[r] = SIZE_MAX;
        for (size_t t = 0; t < er->ntargets; t++) {
            const gk_target *tg = &er->targets[t];
            const char *text = tg->word.text ? tg->word.text : "";
            char *key = gk_printf("%d:%d:%s", (int)tg->kind, (int)er->verdict, text);
            bool added;
            size_t idx = strset_add(&c->xkeys, key, &added);
            if (added) {
                GK_VEC_PUSH(c->xkey_store, c->nxkeys, kcap, key);
                xent e = {0};
                e.kind = tg->kind;
                e.verdict = er->verdict;
                e.text = text;
                GK_VEC_PUSH(c->x, c->nx, c->xcap, e);
            } else {
                free(key);
            }
            xent *e = &c->x[idx];
            if (er->has_subcmds && tg->kind != GK_T_MATCH) {
                e->has_sub = true;
                for (size_t s = 0; s < er->nsubcmds; s++)
                    strset_add(&e->subs, er->subcmds[s].text ? er->subcmds[s].text : "", NULL);
            }
            if (t == 0)
                c->rule_home[r] = idx;
        }
    }

    /* Lines: plain targets grouped by runs of one verdict, wrapped into
     * another rule of the same verdict before FMT_WIDTH columns; a target
     * with a subcommand list alone; patterns last, one per line. */
    for (int pass = 0; pass < 2; pass++) {
        xline *open = NULL;
        gk_verdict open_v = GK_UNSET;
        size_t width = 0;
        for (size_t i = 0; i < c->nx; i++) {
            xent *e = &c->x[i];
            bool is_match = e->kind == GK_T_MATCH;
            if (is_match != (pass == 1))
                continue;
            bool groupable = !is_match && !e->has_sub;
            size_t w = 1 + printed_len(e->text, W_TARGET);
            bool continues = groupable && open && open_v == e->verdict && width + w + 1 <= FMT_WIDTH;
            width = continues ? width + w : 8 + strlen(verdict_word(e->verdict)) + w;
            if (!continues) {
                xline nl = {0};
                GK_VEC_PUSH(c->lines, c->nlines, c->lcap, nl);
                open = groupable ? &c->lines[c->nlines - 1] : NULL;
                open_v = e->verdict;
            }
            xline *l = &c->lines[c->nlines - 1];
            GK_VEC_PUSH(l->ents, l->n, l->cap, i);
            e->line = c->nlines - 1;
        }
    }

    for (size_t r = 0; r < a->nfs; r++) {
        const gk_fs_rule *fr = &a->fs[r];
        for (size_t p = 0; p < fr->npaths; p++)
            strset_add(&c->fs[fr->kind & 3], fr->paths[p].text ? fr->paths[p].text : "", NULL);
    }
}

static void canon_free(canon *c)
{
    strset_free(&c->inc);
    strset_free(&c->ext);
    free(c->inc_of);
    free(c->ext_of);
    for (size_t i = 0; i < c->nx; i++)
        strset_free(&c->x[i].subs);
    free(c->x);
    strset_free(&c->xkeys);
    for (size_t i = 0; i < c->nxkeys; i++)
        free(c->xkey_store[i]);
    free(c->xkey_store);
    free(c->rule_home);
    for (size_t i = 0; i < c->nlines; i++)
        free(c->lines[i].ents);
    free(c->lines);
    for (int k = 0; k < 4; k++)
        strset_free(&c->fs[k]);
}

static const char *verdict_word(gk_verdict v)
{
    return v == GK_DENY ? "deny" : "allow";
}

static const char *const fs_kind_words[4] = {"read", "write", "readonly", "deny"};

/* ---- comments: placed by the lexer's outline -------------------------------
 *
 * The lexer recorded every comment and every token (ast->comments,
 * ast->tokens); walking the two in source order tells where statements and
 * blocks begin and end. Each comment gets a slot (the printed line or block
 * end it belongs to) and whether it trails a line.
 */

enum {
    SLOT_TOP,
    SLOT_GRANT_END,
    SLOT_EOF,
    SLOT_EOF_TRAIL,
    SLOT_EXEC_HEAD,
    SLOT_EXEC_END,
    SLOT_EXEC_CLOSE,
    SLOT_FS_HEAD,
    SLOT_FS_END,
    SLOT_FS_CLOSE,
    SLOT_NET,
    SLOT_SHELL,
    SLOT_EDITOR,
    SLOT_AUDIT,
    SLOT_FSLINE,          /* + kind (4) */
    SLOT_INC = SLOT_FSLINE + 4, /* + include index, then extends, then exec lines */
};

typedef enum crole { C_LEADING, C_TRAILING, C_BLOCK_END, C_CLOSE_TRAIL, C_FIXED } crole;

typedef struct cmt {
    uint32_t start, end; /* text, trailing blanks trimmed */
    crole role;
    long stmt;           /* statement the role refers to */
    size_t slot;
    bool trailing;       /* printed after its line */
} cmt;

typedef struct stmt {
    int depth;
    uint32_t start, end;
    long parent;         /* depth 2: the block statement */
    int kind;            /* index in keywords[] of the first word, or -1 */
    bool is_block;       /* exec { ... }, fs, shell, editor */
    size_t slot;
    size_t close_slot;   /* blocks: where a comment after '}' goes */
    size_t end_slot;     /* blocks: comments before '}' */
} stmt;

/* The statements and comments of one file, in source order. */
typedef struct coutline {
    cmt *c;
    size_t nc, ccap;
    stmt *s;
    size_t ns, scap;
} coutline;

static int keyword_index(const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof(keywords) / sizeof(*keywords); i++)
        if (strlen(keywords[i]) == n && memcmp(keywords[i], p, n) == 0)
            return (int)i;
    return -1;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

/* End of a comment's text: trailing blanks (a CR of CRLF too) are not kept. */
static uint32_t comment_end(const char *text, const gk_comment *gc)
{
    uint32_t te = gc->end;
    while (te > gc->start && is_space(text[te - 1]))
        te--;
    return te;
}

/* Where the walk stands between two tokens. */
typedef struct cwalk {
    const char *text;
    int depth;
    bool opened, closed;
    long cur[3];      /* open statement at depth 1 and 2 */
    long ended;       /* statement the previous token ended (-2: the grant) */
    uint32_t ended_at; /* end of the token that ended it */
} cwalk;

/* A comment: what it sits beside (the statement it is inside of, the one
 * it trails on the same line, or the next one of its block). */
static void walk_comment(coutline *L, const cwalk *w, const gk_comment *gc)
{
    cmt c = {gc->start, comment_end(w->text, gc), C_FIXED, -1, SLOT_TOP, false};
    int d = w->depth > 2 ? 2 : w->depth;
    bool same_line = w->ended != -1 && w->ended_at <= gc->start &&
                     !memchr(w->text + w->ended_at, '\n', gc->start - w->ended_at);
    if (!w->opened) {
        c.slot = SLOT_TOP;
    } else if (w->closed) {
        c.slot = w->ended == -2 && same_line ? SLOT_EOF_TRAIL : SLOT_EOF;
    } else if (d >= 1 && w->cur[d] >= 0) {
        c.role = C_LEADING; /* inside a statement */
        c.stmt = w->cur[d];
    } else if (w->ended >= 0 && same_line && L->s[w->ended].depth == d) {
        c.role = L->s[w->ended].is_block ? C_CLOSE_TRAIL : C_TRAILING;
        c.stmt = w->ended;
    } else {
        /* Waits for the next statement of this block; if the block closes
         * first, it ends the block. */
        c.role = C_BLOCK_END;
        c.stmt = d == 2 ? w->cur[1] : -1;
    }
    GK_VEC_PUSH(L->c, L->nc, L->ccap, c);
}

/* A '}': ends the block statement it closes, or the grant. */
static void walk_close(coutline *L, cwalk *w, const gk_token *t)
{
    if (w->depth >= 2) {
        w->cur[2] = -1;
        w->depth = 1;
        if (w->cur[1] >= 0) {
            L->s[w->cur[1]].end = t->end;
            w->ended = w->cur[1];
            w->ended_at = t->end;
            w->cur[1] = -1;
        }
    } else {
        w->cur[1] = -1;
        w->depth = 0;
        w->closed = true;
        w->ended = -2;
        w->ended_at = t->end;
    }
}

/* Any other token: ';' ends the open statement; anything else continues it
 * or starts one, which takes the comments waiting in its block. */
static void walk_token(coutline *L, cwalk *w, const gk_token *t)
{
    w->ended = -1;
    if (w->closed || (!w->opened && t->kind != GK_TOKEN_LBRACE))
        return;
    if (t->kind == GK_TOKEN_LBRACE) {
        if (w->depth == 0)
            w->opened = true;
        else if (w->depth == 1 && w->cur[1] >= 0)
            L->s[w->cur[1]].is_block = true;
        w->depth++;
        return;
    }
    if (t->kind == GK_TOKEN_RBRACE) {
        walk_close(L, w, t);
        return;
    }
    int d = w->depth > 2 ? 2 : w->depth;
    if (t->kind == GK_TOKEN_SEMI) {
        if (w->cur[d] >= 0) {
            L->s[w->cur[d]].end = t->end;
            w->ended = w->cur[d];
            w->ended_at = t->end;
            w->cur[d] = -1;
        }
        return;
    }
    if (w->cur[d] < 0) {
        stmt s = {0};
        s.depth = d;
        s.start = t->start;
        s.parent = d == 2 ? w->cur[1] : -1;
        s.kind = t->kind == GK_TOKEN_WORD ? keyword_index(w->text + t->start, t->end - t->start)
                                          : -1;
        GK_VEC_PUSH(L->s, L->ns, L->scap, s);
        w->cur[d] = (long)L->ns - 1;
        for (size_t k = L->nc; k > 0; k--) {
            cmt *m = &L->c[k - 1];
            if (m->role != C_BLOCK_END || m->stmt != (d == 2 ? s.parent : -1))
                break;
            m->role = C_LEADING;
            m->stmt = w->cur[d];
        }
    }
    L->s[w->cur[d]].end = t->end;
}

/* Statements and comments of a grant-surface AST, in source order. */
static void walk_outline(coutline *L, const gk_file_ast *a)
{
    cwalk w = {.text = a->src->text, .cur = {-1, -1, -1}, .ended = -1};
    size_t ti = 0, ci = 0;
    while (ti < a->ntokens || ci < a->ncomments) {
        if (ci < a->ncomments && (ti == a->ntokens || a->comments[ci].start < a->tokens[ti].start))
            walk_comment(L, &w, &a->comments[ci++]);
        else
            walk_token(L, &w, &a->tokens[ti++]);
    }
}

/* Slot numbering for one file: includes, extends, then exec lines. */
typedef struct slots {
    size_t ext_base, xline_base, n;
    size_t *contrib;
} slots;

/* Rules and statements both come in source order: search from where the
 * last match was, so mapping a whole file stays linear. */
static long find_loc(const void *base, size_t n, size_t stride, size_t loc_off, const stmt *s,
                     size_t *hint)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = (*hint + k) % n;
        const gk_loc *l = (const gk_loc *)((const char *)base + i * stride + loc_off);
        if (l->start >= s->start && l->start < s->end) {
            *hint = i;
            return (long)i;
        }
    }
    return -1;
}

static long find_rule_exec(const gk_file_ast *a, const stmt *s, size_t *hint)
{
    return find_loc(a->exec, a->nexec, sizeof(*a->exec), offsetof(gk_exec_rule, loc), s, hint);
}

static long find_rule_fs(const gk_file_ast *a, const stmt *s, size_t *hint)
{
    return find_loc(a->fs, a->nfs, sizeof(*a->fs), offsetof(gk_fs_rule, loc), s, hint);
}

static long find_word(const gk_word *w, size_t n, const stmt *s, size_t *hint)
{
    return find_loc(w, n, sizeof(*w), offsetof(gk_word, loc), s, hint);
}

/* Give every statement its slot and count the statements per slot. */
static void assign_stmt_slots(coutline *L, const canon *c, slots *sl)
{
    const gk_file_ast *a = c->ast;
    enum { K_INCLUDE = 1, K_EXTEND, K_EXEC, K_FS, K_NET, K_SHELL, K_EDITOR, K_AUDIT };
    size_t hint_inc = 0, hint_ext = 0, hint_exec = 0, hint_fs = 0;
    for (size_t i = 0; i < L->ns; i++) {
        stmt *s = &L->s[i];
        s->slot = s->end_slot = s->close_slot = SLOT_GRANT_END;
        if (s->depth == 1) {
            switch (s->kind) {
            case K_INCLUDE: {
                long w = find_word(a->includes, a->nincludes, s, &hint_inc);
                if (w >= 0)
                    s->slot = SLOT_INC + c->inc_of[w];
                break;
            }
            case K_EXTEND: {
                long w = find_word(a->extends, a->nextends, s, &hint_ext);
                if (w >= 0)
                    s->slot = sl->ext_base + c->ext_of[w];
                break;
            }
            case K_EXEC:
                s->slot = SLOT_EXEC_HEAD;
                s->end_slot = SLOT_EXEC_END;
                s->close_slot = SLOT_EXEC_CLOSE;
                break;
            case K_FS:
                s->slot = SLOT_FS_HEAD;
                s->end_slot = SLOT_FS_END;
                s->close_slot = SLOT_FS_CLOSE;
                break;
            case K_NET: /* `net deny;`, or a list whose comments go before it */
                s->slot = s->end_slot = s->close_slot = SLOT_NET;
                break;
            case K_SHELL:
                s->slot = s->end_slot = s->close_slot = SLOT_SHELL;
                break;
            case K_EDITOR:
                s->slot = s->end_slot = s->close_slot = SLOT_EDITOR;
                break;
            case K_AUDIT:
                s->slot = SLOT_AUDIT;
                break;
            default:
                break;
            }
            if (s->slot != SLOT_EXEC_HEAD && s->slot != SLOT_FS_HEAD)
                sl->contrib[s->slot]++;
            else
                sl->contrib[s->close_slot]++;
        } else {
            const stmt *p = s->parent >= 0 ? &L->s[s->parent] : NULL;
            int pk = p ? p->kind : -1;
            if (pk == K_EXEC) {
                long r = find_rule_exec(a, s, &hint_exec);
                size_t home = r >= 0 ? c->rule_home[r] : SIZE_MAX;
                s->slot = home != SIZE_MAX ? sl->xline_base + c->x[home].line : SLOT_EXEC_END;
                if (home != SIZE_MAX)
                    sl->contrib[s->slot]++;
            } else if (pk == K_FS) {
                long r = find_rule_fs(a, s, &hint_fs);
                if (r >= 0 && c->fs[a->fs[r].kind & 3].n) {
                    s->slot = SLOT_FSLINE + (a->fs[r].kind & 3);
                    sl->contrib[s->slot]++;
                } else {
                    s->slot = SLOT_FS_END;
                }
            } else if (p) {
                s->slot = p->slot; /* shell/editor: one printed line */
            }
        }
    }
    sl->contrib[SLOT_EOF_TRAIL] = 1; /* the final '}' is one statement */
    for (size_t i = 0; i < L->nc; i++) {
        cmt *m = &L->c[i];
        const stmt *s = m->stmt >= 0 ? &L->s[m->stmt] : NULL;
        switch (m->role) {
        case C_FIXED:
            break;
        case C_LEADING:
            m->slot = s ? s->slot : SLOT_GRANT_END;
            break;
        case C_TRAILING:
            m->slot = s ? s->slot : SLOT_GRANT_END;
            /* inside a one-line block (shell, editor) a trailing comment
             * cannot stay where it was */
            m->trailing = s && s->depth == 1;
            if (s && s->depth == 2 && s->parent >= 0) {
                int pk = L->s[s->parent].kind;
                m->trailing = pk == K_EXEC || pk == K_FS;
            }
            if (m->slot == SLOT_GRANT_END || m->slot == SLOT_EXEC_END || m->slot == SLOT_FS_END)
                m->trailing = false;
            break;
        case C_BLOCK_END:
            m->slot = s ? s->end_slot : SLOT_GRANT_END;
            break;
        case C_CLOSE_TRAIL:
            m->slot = s ? s->close_slot : SLOT_GRANT_END;
            m->trailing = true;
            break;
        }
        if (m->slot == SLOT_EOF_TRAIL)
            m->trailing = true;
    }
}

typedef struct cprint {
    const char *text;
    const cmt *c;
    size_t nc;
    const size_t *contrib;
    bool *used;
    size_t *order; /* comment indices grouped by slot, in source order */
    size_t *first; /* per slot: its range in order, [first[s], first[s + 1]) */
    size_t nslots;
} cprint;

static void cprint_index(cprint *P)
{
    P->first = gk_calloc(P->nslots + 2, sizeof(size_t));
    P->order = gk_calloc(P->nc + 1, sizeof(size_t));
    for (size_t i = 0; i < P->nc; i++)
        P->first[P->c[i].slot + 1]++;
    for (size_t s = 0; s < P->nslots; s++)
        P->first[s + 1] += P->first[s];
    size_t *fill = gk_calloc(P->nslots + 1, sizeof(size_t));
    for (size_t i = 0; i < P->nc; i++) {
        size_t s = P->c[i].slot;
        P->order[P->first[s] + fill[s]++] = i;
    }
    free(fill);
}

#define SLOT_FOR(P, slot, var)                                                         \
    for (size_t var##_k = (P)->first[slot], var = 0;                                  \
         var##_k < (P)->first[(slot) + 1] && ((var = (P)->order[var##_k]), 1); var##_k++)

static void put_comment(gk_buf *b, const cprint *P, const cmt *m, int level)
{
    indent(b, level);
    gk_buf_add(b, P->text + m->start, m->end - m->start);
    gk_buf_putc(b, '\n');
}

/* The comment that stays trailing on slot's line, or NULL. */
static const cmt *trailing_of(const cprint *P, size_t slot)
{
    if (!P)
        return NULL;
    const cmt *t = NULL;
    size_t nt = 0;
    SLOT_FOR(P, slot, i)
    {
        if (P->c[i].trailing) {
            t = &P->c[i];
            nt++;
        }
    }
    return nt == 1 && P->contrib[slot] == 1 ? t : NULL;
}

/* Print slot's comments that go before its line. */
static void put_leading(gk_buf *b, const cprint *P, size_t slot, int level)
{
    if (!P)
        return;
    const cmt *keep = trailing_of(P, slot);
    SLOT_FOR(P, slot, i)
    {
        if (&P->c[i] != keep && !P->used[i]) {
            P->used[i] = true;
            put_comment(b, P, &P->c[i], level);
        }
    }
}

/* End a printed line, with its trailing comment if it keeps one. */
static void end_line(gk_buf *b, const cprint *P, size_t slot)
{
    const cmt *t = trailing_of(P, slot);
    if (t && !P->used[t - P->c]) {
        P->used[t - P->c] = true;
        gk_buf_putc(b, ' ');
        gk_buf_add(b, P->text + t->start, t->end - t->start);
    }
    gk_buf_putc(b, '\n');
}

static bool slot_has(const cprint *P, size_t slot)
{
    return P && P->first[slot + 1] > P->first[slot];
}

/* Comments before a block's '}' plus the ones after it that cannot trail,
 * merged in source order. */
static void put_block_end(gk_buf *b, const cprint *P, size_t end_slot, size_t close_slot,
                          int level)
{
    if (!P)
        return;
    const cmt *keep = trailing_of(P, close_slot);
    size_t i = P->first[end_slot], ie = P->first[end_slot + 1];
    size_t j = P->first[close_slot], je = P->first[close_slot + 1];
    while (i < ie || j < je) {
        size_t k;
        if (j >= je || (i < ie && P->order[i] < P->order[j]))
            k = P->order[i++];
        else
            k = P->order[j++];
        if (&P->c[k] != keep && !P->used[k]) {
            P->used[k] = true;
            put_comment(b, P, &P->c[k], level);
        }
    }
}

static void put_setting_line(gk_buf *b, const char *key, gk_verdict v)
{
    gk_buf_printf(b, " %s %s;", key, verdict_word(v));
}

/* One grant printout: the canonical model, where its comments go (pp is
 * NULL when none are kept) and the text so far. */
typedef struct gprint {
    const gk_file_ast *a;
    canon c;
    coutline L;
    slots sl;
    cprint P;
    cprint *pp;
    gk_buf b;
} gprint;

/* Walk the lexer's outline and give every comment its slot. */
static void place_comments(gprint *g)
{
    const gk_file_ast *a = g->a;
    walk_outline(&g->L, a);
    g->sl.ext_base = SLOT_INC + g->c.inc.n;
    g->sl.xline_base = g->sl.ext_base + g->c.ext.n;
    g->sl.n = g->sl.xline_base + g->c.nlines;
    g->sl.contrib = gk_calloc(g->sl.n, sizeof(size_t));
    assign_stmt_slots(&g->L, &g->c, &g->sl);
    g->P.text = a->src->text;
    g->P.c = g->L.c;
    g->P.nc = g->L.nc;
    g->P.contrib = g->sl.contrib;
    g->P.used = gk_calloc(g->L.nc + 1, sizeof(bool));
    g->P.nslots = g->sl.n;
    cprint_index(&g->P);
    g->pp = g->L.nc ? &g->P : NULL;
}

static void put_includes(gprint *g)
{
    gk_buf *b = &g->b;
    for (size_t i = 0; i < g->c.inc.n; i++) {
        put_leading(b, g->pp, SLOT_INC + i, 1);
        indent(b, 1);
        gk_buf_puts(b, "include ");
        put_grant_string(b, g->c.inc.v[i]);
        gk_buf_putc(b, ';');
        end_line(b, g->pp, SLOT_INC + i);
    }
    for (size_t i = 0; i < g->c.ext.n; i++) {
        put_leading(b, g->pp, g->sl.ext_base + i, 1);
        indent(b, 1);
        gk_buf_puts(b, "extend ");
        put_grant_string(b, g->c.ext.v[i]);
        gk_buf_putc(b, ';');
        end_line(b, g->pp, g->sl.ext_base + i);
    }
}

/* One printed exec rule: a verdict, its targets, one subcommand list. */
static void put_exec_line(gprint *g, size_t li)
{
    gk_buf *b = &g->b;
    const xline *l = &g->c.lines[li];
    size_t slot = g->sl.xline_base + li;
    put_leading(b, g->pp, slot, 2);
    indent(b, 2);
    const xent *first = &g->c.x[l->ents[0]];
    gk_buf_puts(b, verdict_word(first->verdict));
    for (size_t k = 0; k < l->n; k++) {
        const xent *e = &g->c.x[l->ents[k]];
        gk_buf_putc(b, ' ');
        if (e->kind == GK_T_MATCH) {
            gk_buf_puts(b, "match ");
            put_grant_string(b, e->text);
        } else {
            put_grant_word(b, e->text, W_TARGET);
        }
    }
    if (first->has_sub) {
        gk_buf_puts(b, " [");
        for (size_t s = 0; s < first->subs.n; s++) {
            if (s)
                gk_buf_putc(b, ' ');
            put_grant_word(b, first->subs.v[s], W_SUB);
        }
        gk_buf_putc(b, ']');
    }
    gk_buf_putc(b, ';');
    end_line(b, g->pp, slot);
}

static void put_exec(gprint *g)
{
    gk_buf *b = &g->b;
    const cprint *pp = g->pp;
    put_leading(b, pp, SLOT_EXEC_HEAD, 1);
    indent(b, 1);
    bool inner = g->c.nlines || slot_has(pp, SLOT_EXEC_END) ||
                 (slot_has(pp, SLOT_EXEC_CLOSE) && !trailing_of(pp, SLOT_EXEC_CLOSE));
    if (!inner) {
        gk_buf_puts(b, "exec { }");
    } else {
        gk_buf_puts(b, "exec {\n");
        for (size_t li = 0; li < g->c.nlines; li++)
            put_exec_line(g, li);
        put_block_end(b, pp, SLOT_EXEC_END, SLOT_EXEC_CLOSE, 2);
        indent(b, 1);
        gk_buf_putc(b, '}');
    }
    end_line(b, pp, SLOT_EXEC_CLOSE);
}

/* The paths of one fs kind, wrapped into further rules of the same kind. */
static void put_fs_line(gprint *g, int k)
{
    gk_buf *b = &g->b;
    const strset *paths = &g->c.fs[k];
    put_leading(b, g->pp, SLOT_FSLINE + k, 2);
    indent(b, 2);
    gk_buf_puts(b, fs_kind_words[k]);
    size_t width = 8 + strlen(fs_kind_words[k]);
    for (size_t p = 0; p < paths->n; p++) {
        size_t w = 1 + printed_len(paths->v[p], W_PATH);
        if (p > 0 && width + w + 1 > FMT_WIDTH) {
            /* Another rule of the same kind, not a longer line. */
            gk_buf_puts(b, ";\n");
            indent(b, 2);
            gk_buf_puts(b, fs_kind_words[k]);
            width = 8 + strlen(fs_kind_words[k]);
        }
        width += w;
        gk_buf_putc(b, ' ');
        put_grant_word(b, paths->v[p], W_PATH);
    }
    gk_buf_putc(b, ';');
    end_line(b, g->pp, SLOT_FSLINE + k);
}

static void put_fs(gprint *g)
{
    gk_buf *b = &g->b;
    const cprint *pp = g->pp;
    put_leading(b, pp, SLOT_FS_HEAD, 1);
    indent(b, 1);
    bool any = false;
    for (int k = 0; k < 4; k++)
        any |= g->c.fs[k].n > 0;
    bool inner = any || slot_has(pp, SLOT_FS_END) ||
                 (slot_has(pp, SLOT_FS_CLOSE) && !trailing_of(pp, SLOT_FS_CLOSE));
    if (!inner) {
        gk_buf_puts(b, "fs { }");
    } else {
        gk_buf_puts(b, "fs {\n");
        for (int k = 0; k < 4; k++)
            if (g->c.fs[k].n)
                put_fs_line(g, k);
        put_block_end(b, pp, SLOT_FS_END, SLOT_FS_CLOSE, 2);
        indent(b, 1);
        gk_buf_putc(b, '}');
    }
    end_line(b, pp, SLOT_FS_CLOSE);
}

/* The destination list in canonical form: patterns as gk_dest_format
 * writes them, deduplicated in order of first appearance, per verdict.
 * (Validation has read every pattern; one that does not parse is kept as
 * written.) */
typedef struct net_lists {
    gk_strvec v[2]; /* allow, deny */
} net_lists;

static void net_lists_build(net_lists *n, const gk_file_ast *a)
{
    memset(n, 0, sizeof(*n));
    for (size_t i = 0; i < a->nnet_rules; i++) {
        const gk_net_rule *r = &a->net_rules[i];
        gk_strvec *dst = &n->v[r->verdict == GK_DENY];
        for (size_t k = 0; k < r->ndests; k++) {
            gk_dest d;
            char *t = gk_dest_parse_pattern(r->dests[k].text, &d, NULL) == 0
                          ? gk_dest_format(&d)
                          : gk_strdup(r->dests[k].text);
            if (gk_strvec_contains(dst, t))
                free(t);
            else
                gk_strvec_push_take(dst, t);
        }
    }
}

static void net_lists_free(net_lists *n)
{
    gk_strvec_free(&n->v[0]);
    gk_strvec_free(&n->v[1]);
}

static void put_net_list(gprint *g)
{
    gk_buf *b = &g->b;
    net_lists n;
    net_lists_build(&n, g->a);
    put_leading(b, g->pp, SLOT_NET, 1);
    indent(b, 1);
    if (!n.v[0].n && !n.v[1].n) {
        gk_buf_puts(b, "net { }");
    } else {
        gk_buf_puts(b, "net {\n");
        static const char *const words[2] = {"allow", "deny"};
        for (int k = 0; k < 2; k++) {
            const gk_strvec *v = &n.v[k];
            if (!v->n)
                continue;
            indent(b, 2);
            gk_buf_puts(b, words[k]);
            size_t width = 8 + strlen(words[k]);
            for (size_t p = 0; p < v->n; p++) {
                size_t w = 1 + printed_len(v->v[p], W_PATH);
                if (p > 0 && width + w + 1 > FMT_WIDTH) {
                    gk_buf_puts(b, ";\n");
                    indent(b, 2);
                    gk_buf_puts(b, words[k]);
                    width = 8 + strlen(words[k]);
                }
                width += w;
                gk_buf_putc(b, ' ');
                /* "[::1]:443" is a word inside a net block. */
                if (v->v[p][0] == '[' && !is_keyword(v->v[p]) && !strpbrk(v->v[p], " \t\"{};,#"))
                    gk_buf_puts(b, v->v[p]);
                else
                    put_grant_word(b, v->v[p], W_PATH);
            }
            gk_buf_puts(b, ";\n");
        }
        indent(b, 1);
        gk_buf_putc(b, '}');
    }
    end_line(b, g->pp, SLOT_NET);
    net_lists_free(&n);
}

/* net, shell, editor and audit: one line each (a net list is a block). */
static void put_settings(gprint *g)
{
    gk_buf *b = &g->b;
    const cprint *pp = g->pp;
    const gk_file_ast *a = g->a;
    if (a->net.value != GK_UNSET) {
        put_leading(b, pp, SLOT_NET, 1);
        indent(b, 1);
        gk_buf_printf(b, "net %s;", verdict_word(a->net.value));
        end_line(b, pp, SLOT_NET);
    }
    if (a->has_net_list)
        put_net_list(g);
    if (a->has_shell || a->shell_chdir.value != GK_UNSET) {
        put_leading(b, pp, SLOT_SHELL, 1);
        indent(b, 1);
        gk_buf_puts(b, "shell {");
        if (a->shell_chdir.value != GK_UNSET)
            put_setting_line(b, "chdir", a->shell_chdir.value);
        gk_buf_puts(b, " }");
        end_line(b, pp, SLOT_SHELL);
    }
    if (a->has_editor || a->editor_read.value || a->editor_write.value || a->editor_tui.value) {
        put_leading(b, pp, SLOT_EDITOR, 1);
        indent(b, 1);
        gk_buf_puts(b, "editor {");
        if (a->editor_read.value != GK_UNSET)
            put_setting_line(b, "read", a->editor_read.value);
        if (a->editor_write.value != GK_UNSET)
            put_setting_line(b, "write", a->editor_write.value);
        if (a->editor_tui.value != GK_UNSET)
            put_setting_line(b, "tui", a->editor_tui.value);
        gk_buf_puts(b, " }");
        end_line(b, pp, SLOT_EDITOR);
    }
    if (a->audit) {
        put_leading(b, pp, SLOT_AUDIT, 1);
        indent(b, 1);
        gk_buf_puts(b, "audit;");
        end_line(b, pp, SLOT_AUDIT);
    }
}

/* Anything not placed yet (a statement the outline could not map) ends the
 * grant block rather than getting lost. */
static void put_unplaced(gprint *g)
{
    cprint *P = g->pp;
    if (!P)
        return;
    for (size_t i = 0; i < P->nc; i++) {
        size_t s = P->c[i].slot;
        if (!P->used[i] && s != SLOT_EOF && s != SLOT_EOF_TRAIL && s != SLOT_TOP) {
            P->used[i] = true;
            put_comment(&g->b, P, &P->c[i], 1);
        }
    }
}

char *gk_fmt_grant(const gk_file_ast *a, bool keep_comments, size_t *len)
{
    gprint g = {.a = a};
    canon_build(&g.c, a);
    if (keep_comments && a->surface == GK_SURFACE_GRANT && a->src && a->src->text)
        place_comments(&g);

    gk_buf *b = &g.b;
    put_leading(b, g.pp, SLOT_TOP, 0);
    gk_buf_puts(b, "grant ");
    if (a->name.text) {
        put_grant_word(b, a->name.text, W_NAME);
        gk_buf_putc(b, ' ');
    }
    gk_buf_puts(b, "{\n");
    put_includes(&g);
    if (a->has_exec)
        put_exec(&g);
    if (a->has_fs)
        put_fs(&g);
    put_settings(&g);
    put_unplaced(&g);
    gk_buf_putc(b, '}');
    end_line(b, g.pp, SLOT_EOF_TRAIL);
    put_leading(b, g.pp, SLOT_EOF, 0);

    free(g.P.used);
    free(g.P.order);
    free(g.P.first);
    free(g.sl.contrib);
    free(g.L.c);
    free(g.L.s);
    canon_free(&g.c);
    return gk_buf_steal(b, len);
}

/* ---- YAML ----------------------------------------------------------------- */

/* libyaml rejects implicit keys longer than 1024 characters. */
#define YAML_MAX_IMPLICIT_KEY 1000

static void put_yaml_key(gk_buf *b, const char *key, int level)
{
    gk_buf pk = {0};
    put_yaml_scalar(&pk, key);
    for (int i = 0; i < level; i++)
        gk_buf_puts(b, "  ");
    if (pk.len > YAML_MAX_IMPLICIT_KEY) {
        gk_buf_puts(b, "? ");
        gk_buf_add(b, pk.data, pk.len);
        gk_buf_putc(b, '\n');
        for (int i = 0; i < level; i++)
            gk_buf_puts(b, "  ");
        gk_buf_puts(b, ": ");
    } else {
        gk_buf_add(b, pk.data, pk.len);
        gk_buf_puts(b, ": ");
    }
    gk_buf_free(&pk);
}

static void put_yaml_list(gk_buf *b, const char *const *v, size_t n)
{
    gk_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            gk_buf_puts(b, ", ");
        put_yaml_scalar(b, v[i]);
    }
    gk_buf_putc(b, ']');
}

char *gk_fmt_yaml(const gk_file_ast *a, size_t *len)
{
    canon c;
    canon_build(&c, a);
    gk_buf b = {0};

    if (a->name.text) {
        gk_buf_puts(&b, "grant: ");
        put_yaml_scalar(&b, a->name.text);
        gk_buf_putc(&b, '\n');
    }
    if (c.inc.n) {
        gk_buf_puts(&b, "include: ");
        put_yaml_list(&b, c.inc.v, c.inc.n);
        gk_buf_putc(&b, '\n');
    }
    if (c.ext.n) {
        gk_buf_puts(&b, "extend: ");
        put_yaml_list(&b, c.ext.v, c.ext.n);
        gk_buf_putc(&b, '\n');
    }
    if (a->has_exec) {
        size_t nplain = 0, nmatch = 0;
        for (size_t i = 0; i < c.nx; i++)
            if (c.x[i].kind == GK_T_MATCH)
                nmatch++;
            else
                nplain++;
        if (nplain || !nmatch) {
            gk_buf_puts(&b, nplain ? "exec:\n" : "exec: {}\n");
            /* In line order, which is first-appearance order for plain targets. */
            for (size_t li = 0; li < c.nlines; li++)
                for (size_t k = 0; k < c.lines[li].n; k++) {
                    const xent *e = &c.x[c.lines[li].ents[k]];
                    if (e->kind == GK_T_MATCH)
                        continue;
                    put_yaml_key(&b, e->text, 1);
                    if (e->has_sub)
                        put_yaml_list(&b, e->subs.v, e->subs.n);
                    else
                        gk_buf_puts(&b, verdict_word(e->verdict));
                    gk_buf_putc(&b, '\n');
                }
        }
        if (nmatch) {
            gk_buf_puts(&b, "exec-match:\n");
            for (size_t li = 0; li < c.nlines; li++)
                for (size_t k = 0; k < c.lines[li].n; k++) {
                    const xent *e = &c.x[c.lines[li].ents[k]];
                    if (e->kind != GK_T_MATCH)
                        continue;
                    put_yaml_key(&b, e->text, 1);
                    gk_buf_puts(&b, verdict_word(e->verdict));
                    gk_buf_putc(&b, '\n');
                }
        }
    }
    if (a->has_fs) {
        bool any = false;
        for (int k = 0; k < 4; k++)
            any |= c.fs[k].n > 0;
        gk_buf_puts(&b, any ? "fs:\n" : "fs: {}\n");
        for (int k = 0; k < 4; k++) {
            if (!c.fs[k].n)
                continue;
            gk_buf_printf(&b, "  %s: ", fs_kind_words[k]);
            put_yaml_list(&b, c.fs[k].v, c.fs[k].n);
            gk_buf_putc(&b, '\n');
        }
    }
    if (a->net.value != GK_UNSET)
        gk_buf_printf(&b, "net: %s\n", verdict_word(a->net.value));
    if (a->has_net_list) {
        net_lists n;
        net_lists_build(&n, a);
        gk_buf_puts(&b, n.v[0].n || n.v[1].n ? "net:\n" : "net: {}\n");
        static const char *const words[2] = {"allow", "deny"};
        for (int k = 0; k < 2; k++) {
            if (!n.v[k].n)
                continue;
            gk_buf_printf(&b, "  %s: ", words[k]);
            put_yaml_list(&b, (const char *const *)n.v[k].v, n.v[k].n);
            gk_buf_putc(&b, '\n');
        }
        net_lists_free(&n);
    }
    if (a->has_shell || a->shell_chdir.value != GK_UNSET) {
        gk_buf_puts(&b, "shell: {");
        if (a->shell_chdir.value != GK_UNSET)
            gk_buf_printf(&b, "chdir: %s", verdict_word(a->shell_chdir.value));
        gk_buf_puts(&b, "}\n");
    }
    if (a->has_editor || a->editor_read.value || a->editor_write.value || a->editor_tui.value) {
        gk_buf_puts(&b, "editor: {");
        const char *sep = "";
        const gk_setting *v[3] = {&a->editor_read, &a->editor_write, &a->editor_tui};
        const char *k[3] = {"read", "write", "tui"};
        for (int i = 0; i < 3; i++)
            if (v[i]->value != GK_UNSET) {
                gk_buf_printf(&b, "%s%s: %s", sep, k[i], verdict_word(v[i]->value));
                sep = ", ";
            }
        gk_buf_puts(&b, "}\n");
    }
    if (a->audit)
        gk_buf_puts(&b, "audit: true\n");
    if (b.len == 0)
        gk_buf_puts(&b, "{}\n"); /* an empty grant is still a mapping */
    canon_free(&c);
    return gk_buf_steal(&b, len);
}

/* ---- grant_fmt ------------------------------------------------------------ */

/* Byte offset of the first comment of a parsed grant source, or -1. */
static long grant_first_comment(const gk_file_ast *ast, uint32_t *end)
{
    if (!ast->ncomments)
        return -1;
    *end = comment_end(ast->src->text, &ast->comments[0]);
    return (long)ast->comments[0].start;
}

/* Byte offset of the first YAML comment, or -1: a '#' at a line start or
 * after a blank that lies outside every scalar libyaml reports (quoted and
 * block scalars may hold " #"). */
static long yaml_first_comment(const gk_source *src, uint32_t *end)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return -1;
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&p, (const unsigned char *)src->text, src->len);
    size_t *rs = NULL, nr = 0, rcap = 0; /* scalar ranges in code points, pairs */
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e))
            break;
        if (e.type == YAML_SCALAR_EVENT) {
            GK_VEC_PUSH(rs, nr, rcap, e.start_mark.index);
            GK_VEC_PUSH(rs, nr, rcap, e.end_mark.index);
        }
        yaml_event_type_t t = e.type;
        yaml_event_delete(&e);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    long found = -1;
    size_t cp = 0, r = 0;
    const char *t = src->text;
    for (size_t i = 0; i < src->len; i++) {
        if (((unsigned char)t[i] & 0xC0) == 0x80)
            continue;
        while (r + 1 < nr && rs[r + 1] <= cp)
            r += 2;
        bool in_scalar = r + 1 < nr && rs[r] <= cp && cp < rs[r + 1];
        if (t[i] == '#' && !in_scalar && (i == 0 || strchr(" \t\r\n", t[i - 1]))) {
            found = (long)i;
            size_t e = i;
            while (e < src->len && t[e] != '\n' && t[e] != '\r')
                e++;
            *end = (uint32_t)e;
            break;
        }
        cp++;
    }
    free(rs);
    return found;
}

int grant_fmt(const char *name, const char *text, size_t len, grant_surface from,
              grant_surface to, grant_diags *diags, char **out, size_t *outlen)
{
    if (out)
        *out = NULL;
    if (outlen)
        *outlen = 0;
    if (!name || !out || (!text && len) || (unsigned)from > GRANT_SURFACE_YAML ||
        (unsigned)to > GRANT_SURFACE_YAML)
        return -EINVAL;
    if (from == GRANT_SURFACE_AUTO)
        from = gk_has_suffix(name, ".yaml") || gk_has_suffix(name, ".yml") ? GRANT_SURFACE_YAML
                                                                            : GRANT_SURFACE_GRANT;
    if (to == GRANT_SURFACE_AUTO)
        to = from;

    grant_diags *local = NULL;
    if (!diags)
        diags = local = grant_diags_new();
    size_t before = diags->errors;
    gk_source *src = gk_source_new(name, text ? text : "", len);
    gk_file_ast *ast = from == GRANT_SURFACE_YAML ? gk_load_yaml(src, diags)
                                                  : gk_parse_grant(src, diags);
    int rc = 0;
    if (ast && diags->errors == before)
        gk_ast_validate(ast, diags);
    if (!ast || diags->errors > before) {
        rc = -EPROTO;
        goto done;
    }

    uint32_t cend = 0;
    if (from == GRANT_SURFACE_YAML) {
        long at = yaml_first_comment(src, &cend);
        if (at >= 0) {
            gk_loc l = {src, (uint32_t)at, cend};
            gk_diag_add(diags, GK_WARNING, l, NULL,
                        "comments are not carried over from YAML (libyaml does not report them)");
        }
    } else if (to == GRANT_SURFACE_YAML) {
        long at = grant_first_comment(ast, &cend);
        if (at >= 0) {
            gk_loc l = {src, (uint32_t)at, cend};
            gk_diag_add(diags, GK_WARNING, l, NULL, "comments are not carried over to YAML");
        }
    }

    size_t n = 0;
    char *s = to == GRANT_SURFACE_YAML ? gk_fmt_yaml(ast, &n)
                                       : gk_fmt_grant(ast, from == GRANT_SURFACE_GRANT, &n);
    *out = s;
    if (outlen)
        *outlen = n;
done:
    gk_ast_free(ast);
    gk_source_unref(src);
    grant_diags_free(local);
    return rc;
}
