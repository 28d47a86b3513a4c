/* sbpl_read_sx.c - SBPL text -> datums.
 *
 * A small Scheme reader with byte positions: lists, "strings" (escapes \n
 * \t \r \" \\ \xHH; any other escaped byte stands for itself, as
 * libsandbox's reader takes "\." for "."), #"regex" literals (raw: the
 * bytes go to the regex engine as written, and as a string's bytes when
 * used as one), symbols, numbers (decimal, #o octal, #x hex, #b binary,
 * #d decimal), #t/#f, 'datum as (quote datum), comments ; and #| |#
 * (nested) and #; (datum comment). Quasiquote (` and ,) is refused.
 */
#include "analysis/sbpl_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

void gk_sx_free(sx *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++)
        gk_sx_free(x->v[i]);
    free(x->v);
    free(x->s);
    free(x);
}

typedef struct reader {
    gk_source *src;
    const char *t;
    size_t len, pos;
    grant_diags *diags;
    bool failed;
} reader;

static void rd_error(reader *r, size_t start, size_t end, const char *hint, const char *msg)
{
    gk_diag_add(r->diags, GK_ERROR, at(r->src, start, end), hint, "%s", msg);
    r->failed = true;
}

static bool is_delim(char c)
{
    return c == '(' || c == ')' || c == '"' || c == ';' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r' || c == '\f' || c == '\v';
}

static sx *read_datum(reader *r, int depth);

/* Skip whitespace and comments; false at end of input or on an error. */
static bool skip_space(reader *r)
{
    while (r->pos < r->len) {
        char c = r->t[r->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            r->pos++;
        } else if (c == ';') {
            while (r->pos < r->len && r->t[r->pos] != '\n')
                r->pos++;
        } else if (c == '#' && r->pos + 1 < r->len && r->t[r->pos + 1] == '|') {
            size_t open = r->pos;
            int nest = 0;
            for (;;) {
                if (r->pos + 1 >= r->len) {
                    rd_error(r, open, open + 2, "close it with |#", "unterminated block comment");
                    r->pos = r->len;
                    return false;
                }
                if (r->t[r->pos] == '#' && r->t[r->pos + 1] == '|') {
                    nest++;
                    r->pos += 2;
                } else if (r->t[r->pos] == '|' && r->t[r->pos + 1] == '#') {
                    r->pos += 2;
                    if (--nest == 0)
                        break;
                } else {
                    r->pos++;
                }
            }
        } else if (c == '#' && r->pos + 1 < r->len && r->t[r->pos + 1] == ';') {
            r->pos += 2;
            sx *skip = read_datum(r, 0);
            if (!skip)
                return false;
            gk_sx_free(skip);
        } else {
            return true;
        }
    }
    return false;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static sx *new_sx(sx_type t, size_t start)
{
    sx *x = gk_calloc(1, sizeof(*x));
    x->t = t;
    x->start = (uint32_t)start;
    return x;
}

static sx *read_string(reader *r)
{
    size_t open = r->pos++;
    gk_buf b = {0};
    bool escaped = false;
    while (r->pos < r->len && r->t[r->pos] != '"') {
        char c = r->t[r->pos];
        if (c != '\\') {
            gk_buf_putc(&b, c);
            r->pos++;
            continue;
        }
        escaped = true;
        if (r->pos + 1 >= r->len)
            break;
        char e = r->t[r->pos + 1];
        size_t esc = r->pos;
        r->pos += 2;
        switch (e) {
        case 'n':
            gk_buf_putc(&b, '\n');
            break;
        case 't':
            gk_buf_putc(&b, '\t');
            break;
        case 'r':
            gk_buf_putc(&b, '\r');
            break;
        case '\\':
        case '"':
            gk_buf_putc(&b, e);
            break;
        case 'x': {
            int h1 = r->pos < r->len ? hexval(r->t[r->pos]) : -1;
            int h2 = r->pos + 1 < r->len ? hexval(r->t[r->pos + 1]) : -1;
            if (h1 < 0 || h2 < 0 || (h1 == 0 && h2 == 0)) {
                rd_error(r, esc, r->pos, "write \\xHH with two hex digits (not 00)",
                         "bad \\x escape in string");
                gk_buf_free(&b);
                return NULL;
            }
            gk_buf_putc(&b, (char)(h1 * 16 + h2));
            r->pos += 2;
            break;
        }
        default:
            /* libsandbox's reader keeps the escaped byte: "\." is ".". */
            gk_buf_putc(&b, e);
            break;
        }
    }
    if (r->pos >= r->len) {
        rd_error(r, open, open + 1, "add the closing '\"'", "unterminated string");
        gk_buf_free(&b);
        return NULL;
    }
    r->pos++;
    sx *x = new_sx(SX_STR, open);
    x->end = (uint32_t)r->pos;
    x->escaped = escaped;
    if (!b.data)
        gk_buf_puts(&b, "");
    x->s = gk_buf_steal(&b, NULL);
    return x;
}

/* #"...": raw bytes up to an unescaped '"' (a backslash keeps the next
 * byte, both bytes going to the regex engine). */
static sx *read_regex(reader *r)
{
    size_t open = r->pos;
    r->pos += 2;
    size_t from = r->pos;
    while (r->pos < r->len && r->t[r->pos] != '"') {
        if (r->t[r->pos] == '\\' && r->pos + 1 < r->len)
            r->pos++;
        r->pos++;
    }
    if (r->pos >= r->len) {
        rd_error(r, open, open + 2, "add the closing '\"'", "unterminated regex literal");
        return NULL;
    }
    sx *x = new_sx(SX_REGEX, open);
    x->s = gk_strndup(r->t + from, r->pos - from);
    r->pos++;
    x->end = (uint32_t)r->pos;
    return x;
}

static sx *read_atom(reader *r)
{
    size_t start = r->pos;
    while (r->pos < r->len && !is_delim(r->t[r->pos]))
        r->pos++;
    size_t n = r->pos - start;
    const char *p = r->t + start;
    if (p[0] == '#' && n > 2 && strchr("oxbdOXBD", p[1])) {
        /* #o755, #x1F, #b101, #d10: a radix prefix. */
        int base = strchr("oO", p[1]) ? 8 : strchr("xX", p[1]) ? 16 : strchr("bB", p[1]) ? 2 : 10;
        gk_autofree char *tmp = gk_strndup(p + 2, n - 2);
        char *end = NULL;
        errno = 0;
        long v = strtol(tmp, &end, base);
        if (errno == ERANGE || !end || *end || tmp[0] == '-' || tmp[0] == '+' || tmp[0] == ' ') {
            rd_error(r, start, r->pos, NULL, "bad number");
            return NULL;
        }
        sx *x = new_sx(SX_NUM, start);
        x->end = (uint32_t)r->pos;
        x->num = v;
        return x;
    }
    if (p[0] == '#') {
        sx *x = new_sx(SX_BOOL, start);
        x->end = (uint32_t)r->pos;
        if ((n == 2 && p[1] == 't') || (n == 5 && memcmp(p, "#true", 5) == 0)) {
            x->b = true;
            return x;
        }
        if ((n == 2 && p[1] == 'f') || (n == 6 && memcmp(p, "#false", 6) == 0))
            return x;
        free(x);
        rd_error(r, start, r->pos, "SBPL knows #t, #f, #\"regex\", #| comments |# and #;",
                 "unsupported '#' syntax");
        return NULL;
    }
    if (p[0] == '`' || p[0] == ',') {
        rd_error(r, start, start + 1, "write the list out, or 'name for a symbol",
                 "quasiquote is not supported by this reader");
        return NULL;
    }
    size_t d = (p[0] == '-' || p[0] == '+') && n > 1 ? 1 : 0;
    bool digits = n > d;
    for (size_t i = d; i < n && digits; i++)
        digits = p[i] >= '0' && p[i] <= '9';
    if (digits) {
        sx *x = new_sx(SX_NUM, start);
        x->end = (uint32_t)r->pos;
        errno = 0;
        char *tmp = gk_strndup(p, n);
        x->num = strtol(tmp, NULL, 10);
        free(tmp);
        if (errno == ERANGE) {
            free(x);
            rd_error(r, start, r->pos, NULL, "number out of range");
            return NULL;
        }
        return x;
    }
    sx *x = new_sx(SX_SYM, start);
    x->end = (uint32_t)r->pos;
    x->s = gk_strndup(p, n);
    return x;
}

/* One datum at r->pos (after skip_space). */
static sx *read_datum(reader *r, int depth)
{
    if (!skip_space(r)) {
        if (!r->failed)
            rd_error(r, r->len, r->len, NULL, "unexpected end of input");
        return NULL;
    }
    char c = r->t[r->pos];
    if (c == ')') {
        rd_error(r, r->pos, r->pos + 1, "remove it, or add the '(' it closes", "unexpected ')'");
        return NULL;
    }
    if (c == '"')
        return read_string(r);
    if (c == '#' && r->pos + 1 < r->len && r->t[r->pos + 1] == '"')
        return read_regex(r);
    if (c == '\'') {
        /* 'x is (quote x). */
        size_t q = r->pos++;
        if (depth >= MAX_NEST) {
            rd_error(r, q, q + 1, NULL, "lists nest too deeply");
            return NULL;
        }
        sx *d = read_datum(r, depth + 1);
        if (!d)
            return NULL;
        sx *x = new_sx(SX_LIST, q);
        sx *h = new_sx(SX_SYM, q);
        h->end = (uint32_t)(q + 1);
        h->s = gk_strdup("quote");
        GK_VEC_PUSH(x->v, x->n, x->cap, h);
        GK_VEC_PUSH(x->v, x->n, x->cap, d);
        x->end = d->end;
        return x;
    }
    if (c != '(')
        return read_atom(r);
    if (depth >= MAX_NEST) {
        rd_error(r, r->pos, r->pos + 1, NULL, "lists nest too deeply");
        return NULL;
    }
    sx *x = new_sx(SX_LIST, r->pos);
    r->pos++;
    for (;;) {
        if (!skip_space(r)) {
            if (!r->failed)
                rd_error(r, x->start, x->start + 1, "add the ')' that closes it", "unclosed '('");
            gk_sx_free(x);
            return NULL;
        }
        if (r->t[r->pos] == ')') {
            r->pos++;
            x->end = (uint32_t)r->pos;
            return x;
        }
        sx *k = read_datum(r, depth + 1);
        if (!k) {
            gk_sx_free(x);
            return NULL;
        }
        GK_VEC_PUSH(x->v, x->n, x->cap, k);
    }
}

sx *gk_sx_read_all(gk_source *src, grant_diags *diags)
{
    reader r = {src, src->text, src->len, 0, diags, false};
    for (size_t i = 0; i < src->len; i++)
        if (src->text[i] == '\0') {
            rd_error(&r, i, i + 1, NULL, "NUL byte in profile");
            return NULL;
        }
    sx *top = new_sx(SX_LIST, 0);
    while (skip_space(&r)) {
        sx *d = read_datum(&r, 0);
        if (!d)
            break;
        GK_VEC_PUSH(top->v, top->n, top->cap, d);
    }
    if (r.failed) {
        gk_sx_free(top);
        return NULL;
    }
    top->end = (uint32_t)src->len;
    return top;
}
