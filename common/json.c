/* json.c - the one JSON writer, in jansson's layout (see json.h). */
#include "common/json.h"
#include "grant/grant.h"

#include <stdio.h>
#include <stdlib.h>

void gk_json_init(gk_json_out *j, gk_buf *b, bool pretty)
{
    *j = (gk_json_out){.b = b, .pretty = pretty};
}

static void newline(gk_json_out *j, int depth)
{
    static const char spaces[] = "\n                                                                ";
    size_t n = 1 + 2 * (size_t)depth;
    if (n > sizeof(spaces) - 1)
        abort(); /* deeper than GK_JSON_MAX_DEPTH */
    gk_buf_add(j->b, spaces, n);
}

/* Before any value or key: the separator from the previous element and,
 * pretty, the line break and indentation. Nothing after a key. */
static void before_item(gk_json_out *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (j->filled[j->depth - 1])
        gk_buf_putc(j->b, ',');
    j->filled[j->depth - 1] = true;
    if (j->pretty)
        newline(j, j->depth);
}

static void open(gk_json_out *j, char c)
{
    before_item(j);
    if (j->depth == GK_JSON_MAX_DEPTH)
        abort();
    gk_buf_putc(j->b, c);
    j->closer[j->depth] = c == '{' ? '}' : ']';
    j->filled[j->depth++] = false;
}

void gk_json_object(gk_json_out *j)
{
    open(j, '{');
}

void gk_json_array(gk_json_out *j)
{
    open(j, '[');
}

void gk_json_end(gk_json_out *j)
{
    if (j->depth == 0)
        abort();
    j->depth--;
    if (j->pretty && j->filled[j->depth])
        newline(j, j->depth);
    gk_buf_putc(j->b, j->closer[j->depth]);
}

void gk_json_key(gk_json_out *j, const char *key)
{
    before_item(j);
    gk_json_quote(j->b, key);
    gk_buf_add(j->b, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
    j->after_key = true;
}

/* Bytes a string cannot copy as they are: controls, '"', '\\', and every
 * non-ASCII byte (checked as UTF-8). */
static const unsigned char special[256] = {
    [0x00 ... 0x1F] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xFF] = 1,
};

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The first special byte in [p, end), or end; eight bytes at a time while
 * none is special (most strings are plain ASCII paths). */
static const char *skip_plain(const char *p, const char *end)
{
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t q = x ^ (ONES * '"'), bs = x ^ (ONES * '\\');
        uint64_t hit = ((x - ONES * 0x20) & ~x) | x | ((q - ONES) & ~q) | ((bs - ONES) & ~bs);
        if (hit & HIGHS)
            break;
        p += 8;
    }
    while (p < end && !special[(unsigned char)*p])
        p++;
    return p;
}

/* The bytes of one escaped unit starting at p (p < end), and their
 * escaped size; *adv is how many source bytes the unit covers. Shared by
 * the writer and the measurer so a budget measured is a budget written. */
static size_t escaped_unit(const char *p, const char *end, size_t *adv)
{
    unsigned char c = (unsigned char)*p;
    if (c >= 0x80) {
        size_t k = 2;
        while (k <= 4 && p + k <= end && !gk_utf8_valid(p, k))
            k++;
        if (k <= 4 && p + k <= end) {
            *adv = k;
            return k;
        }
        *adv = 1;
        return 3; /* U+FFFD */
    }
    *adv = 1;
    switch (c) {
    case '"': case '\\': case '\n': case '\t': case '\r': case '\b': case '\f': return 2;
    default: return c < 0x20 ? 6 : 1;
    }
}

void gk_json_quote_len(gk_buf *b, const char *s, size_t len)
{
    gk_buf_putc(b, '"');
    const char *end = s + len;
    const char *run = s;
    const char *p = s;
    for (;;) {
        p = skip_plain(p, end);
        if (p == end)
            break;
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80) {
            size_t adv;
            size_t out = escaped_unit(p, end, &adv);
            if (out == adv) {
                p += adv;
                continue;
            }
            gk_buf_add(b, run, (size_t)(p - run));
            gk_buf_add(b, "\xEF\xBF\xBD", 3);
            run = ++p;
            continue;
        }
        gk_buf_add(b, run, (size_t)(p - run));
        run = ++p;
        switch (c) {
        case '"': gk_buf_add(b, "\\\"", 2); break;
        case '\\': gk_buf_add(b, "\\\\", 2); break;
        case '\n': gk_buf_add(b, "\\n", 2); break;
        case '\t': gk_buf_add(b, "\\t", 2); break;
        case '\r': gk_buf_add(b, "\\r", 2); break;
        case '\b': gk_buf_add(b, "\\b", 2); break;
        case '\f': gk_buf_add(b, "\\f", 2); break;
        default: gk_buf_printf(b, "\\u%04X", c); break;
        }
    }
    gk_buf_add(b, run, (size_t)(p - run));
    gk_buf_putc(b, '"');
}

void gk_json_quote(gk_buf *b, const char *s)
{
    gk_json_quote_len(b, s, strlen(s));
}

size_t gk_json_escaped_size(const char *s, size_t len)
{
    const char *end = s + len;
    const char *p = s;
    size_t n = 0;
    for (;;) {
        const char *q = skip_plain(p, end);
        n += (size_t)(q - p);
        p = q;
        if (p == end)
            return n;
        size_t adv;
        n += escaped_unit(p, end, &adv);
        p += adv;
    }
}

size_t gk_json_escaped_prefix(const char *s, size_t len, size_t budget, size_t *escaped)
{
    const char *end = s + len;
    const char *p = s;
    size_t n = 0;
    while (p < end) {
        const char *q = skip_plain(p, end);
        if ((size_t)(q - p) > budget - n) {
            p += budget - n;
            n = budget;
            break;
        }
        n += (size_t)(q - p);
        p = q;
        if (p == end)
            break;
        size_t adv;
        size_t out = escaped_unit(p, end, &adv);
        if (out > budget - n)
            break;
        n += out;
        p += adv;
    }
    if (escaped)
        *escaped = n;
    return (size_t)(p - s);
}

char *grant_json_string(const char *s)
{
    if (!s)
        return NULL;
    gk_buf b = {0};
    gk_json_quote(&b, s);
    return gk_buf_steal(&b, NULL);
}

void gk_json_string_len(gk_json_out *j, const char *s, size_t len)
{
    before_item(j);
    gk_json_quote_len(j->b, s, len);
}

void gk_json_string(gk_json_out *j, const char *s)
{
    before_item(j);
    if (s)
        gk_json_quote(j->b, s);
    else
        gk_buf_add(j->b, "null", 4);
}

void gk_json_null(gk_json_out *j)
{
    before_item(j);
    gk_buf_add(j->b, "null", 4);
}

void gk_json_bool(gk_json_out *j, bool v)
{
    before_item(j);
    gk_buf_puts(j->b, v ? "true" : "false");
}

void gk_json_int(gk_json_out *j, long long v)
{
    before_item(j);
    gk_buf_printf(j->b, "%lld", v);
}

void gk_json_raw(gk_json_out *j, const char *text, size_t len)
{
    before_item(j);
    gk_buf_add(j->b, text, len);
}
