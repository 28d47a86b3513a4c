/* diag.c - sources, positions and the one diagnostic format. */
#include "common/diag.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gk_source *gk_source_new(const char *name, const char *text, size_t len)
{
    gk_source *s = gk_calloc(1, sizeof(*s));
    s->name = gk_strdup(name);
    s->text = gk_strndup(text, len);
    s->len = len;
    s->refs = 1;
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, len, (const uint8_t *)text);
    sha256_digest(&h, sizeof(s->sha256), s->sha256);
    return s;
}

gk_source *gk_source_ref(gk_source *s)
{
    if (s)
        s->refs++;
    return s;
}

void gk_source_unref(gk_source *s)
{
    if (!s || --s->refs > 0)
        return;
    free(s->name);
    free(s->text);
    free(s->line_starts);
    free(s);
}

char *gk_source_sha256_hex(const gk_source *s)
{
    char *hex = gk_malloc(65);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", s->sha256[i]);
    return hex;
}

/* Start of the line holding off. */
static uint32_t line_start(const gk_source *s, uint32_t off)
{
    while (off > 0 && s->text[off - 1] != '\n')
        off--;
    return off;
}

static unsigned count_codepoints(const char *p, size_t n)
{
    unsigned c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)p[i] & 0xC0) != 0x80)
            c++;
    return c;
}

/* Every rule's origin asks for its line: a table of line starts, built
 * once, turns each question into a binary search instead of a scan. */
static void build_line_table(gk_source *s)
{
    size_t n = 1;
    for (size_t i = 0; i < s->len; i++)
        n += s->text[i] == '\n';
    s->line_starts = gk_malloc(n * sizeof(*s->line_starts));
    s->line_starts[0] = 0;
    size_t k = 1;
    for (size_t i = 0; i < s->len; i++)
        if (s->text[i] == '\n')
            s->line_starts[k++] = (uint32_t)(i + 1);
    s->nlines = n;
}

/* Index of the line holding off (0-based). */
static size_t line_index(const gk_source *s, uint32_t off)
{
    if (!s->line_starts)
        build_line_table((gk_source *)s); /* a cache: the text never changes */
    size_t lo = 0, hi = s->nlines;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->line_starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void gk_source_linecol(const gk_source *s, uint32_t off, unsigned *line, unsigned *col)
{
    if (off > s->len)
        off = (uint32_t)s->len;
    size_t l = line_index(s, off);
    uint32_t ls = s->line_starts[l];
    *line = (unsigned)l + 1;
    *col = count_codepoints(s->text + ls, off - ls) + 1;
}

char *gk_loc_origin(gk_loc loc)
{
    if (!loc.src)
        return gk_strdup("?");
    uint32_t off = loc.start > loc.src->len ? (uint32_t)loc.src->len : loc.start;
    /* One per rule: built by hand, printf is a visible share of a compile. */
    char num[24];
    size_t n = (size_t)snprintf(num, sizeof(num), ":%zu", line_index(loc.src, off) + 1);
    size_t len = strlen(loc.src->name);
    char *o = gk_malloc(len + n + 1);
    memcpy(o, loc.src->name, len);
    memcpy(o + len, num, n + 1);
    return o;
}

static gk_diag *diag_push(grant_diags *d, gk_severity sev)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->v = gk_realloc(d->v, d->cap * sizeof(*d->v));
    }
    gk_diag *dg = &d->v[d->n++];
    memset(dg, 0, sizeof(*dg));
    dg->severity = sev;
    if (sev == GK_ERROR)
        d->errors++;
    return dg;
}

gk_diag *gk_diag_add(grant_diags *d, gk_severity sev, gk_loc loc, const char *hint,
                     const char *fmt, ...)
{
    gk_diag *dg = diag_push(d, sev);
    dg->loc = loc;
    gk_source_ref(loc.src);
    dg->hint = gk_strdup(hint);
    va_list ap;
    va_start(ap, fmt);
    dg->message = gk_vprintf(fmt, ap);
    va_end(ap);
    return dg;
}

gk_diag *gk_diag_file(grant_diags *d, gk_severity sev, const char *file, const char *fmt, ...)
{
    gk_diag *dg = diag_push(d, sev);
    dg->file = gk_strdup(file);
    va_list ap;
    va_start(ap, fmt);
    dg->message = gk_vprintf(fmt, ap);
    va_end(ap);
    return dg;
}

void gk_diag_relate(gk_diag *dg, gk_loc loc, const char *fmt, ...)
{
    if (dg->has_related) {
        gk_source_unref(dg->related.src);
        free(dg->related_message);
    }
    dg->has_related = true;
    dg->related = loc;
    gk_source_ref(loc.src);
    va_list ap;
    va_start(ap, fmt);
    dg->related_message = gk_vprintf(fmt, ap);
    va_end(ap);
}

static const char *severity_name(gk_severity s)
{
    switch (s) {
    case GK_ERROR:
        return "error";
    case GK_WARNING:
        return "warning";
    default:
        return "note";
    }
}

/* What a diagnostic shows of the source goes to terminals and CI logs:
 * control characters (C0 but tab, DEL, and C1 written as UTF-8) are shown
 * escaped as \xNN or \uNNNN so a policy cannot drive the terminal, and
 * an excerpt is at most GK_EXCERPT_MAX bytes of its line, around the
 * caret, so a huge line cannot flood stderr. */
#define GK_EXCERPT_MAX 160
#define GK_EXCERPT_BEFORE 60
#define GK_MESSAGE_MAX 1024

/* Bytes of the escape for the character at p (0: shown as it is). */
static unsigned escape_width(const char *p, const char *end)
{
    unsigned char c = (unsigned char)*p;
    if ((c < 0x20 && c != '\t') || c == 0x7f)
        return 4; /* \xNN */
    if (c == 0xc2 && p + 1 < end && (unsigned char)p[1] >= 0x80 && (unsigned char)p[1] <= 0x9f)
        return 6; /* \u0080..\u009f */
    return 0;
}

/* Append s[0..n) with its control characters escaped. */
static void put_safe(gk_buf *b, const char *s, size_t n)
{
    const char *end = s + n;
    for (const char *p = s; p < end; p++) {
        unsigned w = escape_width(p, end);
        if (w == 4) {
            gk_buf_printf(b, "\\x%02x", (unsigned char)*p);
        } else if (w == 6) {
            gk_buf_printf(b, "\\u%04x", (unsigned char)p[1]);
            p++;
        } else {
            gk_buf_putc(b, *p);
        }
    }
}

/* A message or name as shown: escaped, and cut at GK_MESSAGE_MAX bytes (at
 * a character boundary) with a marker. */
static void put_text(gk_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (n <= GK_MESSAGE_MAX) {
        put_safe(b, s, n);
        return;
    }
    size_t cut = GK_MESSAGE_MAX;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    put_safe(b, s, cut);
    gk_buf_printf(b, "... (%zu more bytes)", n - cut);
}

static uint32_t char_start(const gk_source *s, uint32_t off, uint32_t floor)
{
    while (off > floor && ((unsigned char)s->text[off] & 0xC0) == 0x80)
        off--;
    return off;
}

/* "FILE:LINE:COL: SEV: MSG" then the source line (or an excerpt of it)
 * and a caret line. */
static void render_at(gk_buf *b, gk_loc loc, const char *sev, const char *msg)
{
    const gk_source *s = loc.src;
    unsigned line, col;
    gk_source_linecol(s, loc.start, &line, &col);
    put_text(b, s->name);
    gk_buf_printf(b, ":%u:%u: %s: ", line, col, sev);
    put_text(b, msg);
    gk_buf_putc(b, '\n');

    uint32_t ls = line_start(s, loc.start > s->len ? (uint32_t)s->len : loc.start);
    uint32_t le = ls;
    while (le < s->len && s->text[le] != '\n' && s->text[le] != '\0')
        le++;
    if (le > ls && s->text[le - 1] == '\r')
        le--; /* a CRLF line ends where its CR is */
    uint32_t start = loc.start > le ? le : loc.start;
    uint32_t ws = ls, we = le; /* the window of the line shown */
    if (le - ls > GK_EXCERPT_MAX) {
        ws = start - ls > GK_EXCERPT_BEFORE ? char_start(s, start - GK_EXCERPT_BEFORE, ls) : ls;
        we = le - ws > GK_EXCERPT_MAX ? char_start(s, ws + GK_EXCERPT_MAX, ws) : le;
        if (start > we)
            start = we;
    }
    char num[16];
    int w = snprintf(num, sizeof(num), "%u", line);
    gk_buf_printf(b, " %s | ", num);
    if (ws > ls)
        gk_buf_puts(b, "...");
    put_safe(b, s->text + ws, we - ws);
    if (we < le)
        gk_buf_puts(b, "...");
    gk_buf_putc(b, '\n');
    gk_buf_printf(b, " %*s | ", w, "");
    if (ws > ls)
        gk_buf_puts(b, "   ");
    /* Pad with the source's own tabs so the caret lines up in any terminal;
     * an escape is as wide as it is written. */
    const char *end = s->text + we;
    for (uint32_t i = ws; i < start; i++) {
        unsigned char c = (unsigned char)s->text[i];
        unsigned ew = escape_width(s->text + i, end);
        if (c == '\t')
            gk_buf_putc(b, '\t');
        else if (ew)
            for (unsigned k = 0; k < ew; k++)
                gk_buf_putc(b, ' ');
        else if ((c & 0xC0) != 0x80)
            gk_buf_putc(b, ' ');
        if (ew == 6)
            i++;
    }
    gk_buf_putc(b, '^');
    uint32_t stop = loc.end > we ? we : loc.end;
    if (stop > start) {
        unsigned n = count_codepoints(s->text + start, stop - start);
        for (unsigned i = 1; i < n; i++)
            gk_buf_putc(b, '~');
    }
    gk_buf_putc(b, '\n');
}

char *gk_diag_render(const gk_diag *dg)
{
    gk_buf b = {0};
    const char *sev = severity_name(dg->severity);
    gk_autofree char *with_id = dg->id ? gk_printf("%s %s", dg->id, dg->message) : NULL;
    const char *msg = with_id ? with_id : dg->message;
    if (dg->loc.src)
        render_at(&b, dg->loc, sev, msg);
    else {
        if (dg->file) {
            put_text(&b, dg->file);
            gk_buf_puts(&b, ": ");
        }
        gk_buf_printf(&b, "%s: ", sev);
        put_text(&b, msg);
        gk_buf_putc(&b, '\n');
    }
    if (dg->hint) {
        gk_buf_puts(&b, "hint: ");
        put_text(&b, dg->hint);
        gk_buf_putc(&b, '\n');
    }
    if (dg->has_related) {
        if (dg->related.src)
            render_at(&b, dg->related, "note", dg->related_message);
        else {
            gk_buf_puts(&b, "note: ");
            put_text(&b, dg->related_message);
            gk_buf_putc(&b, '\n');
        }
    }
    /* No trailing newline: callers join and terminate lines themselves. */
    if (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    return gk_buf_steal(&b, NULL);
}

/* ---- public API ---------------------------------------------------------- */

grant_diags *grant_diags_new(void)
{
    return gk_calloc(1, sizeof(grant_diags));
}

void grant_diags_free(grant_diags *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        gk_diag *dg = &d->v[i];
        gk_source_unref(dg->loc.src);
        gk_source_unref(dg->related.src);
        free(dg->file);
        free(dg->message);
        free(dg->hint);
        free(dg->related_message);
    }
    free(d->v);
    free(d);
}

size_t grant_diags_count(const grant_diags *d)
{
    return d ? d->n : 0;
}

size_t grant_diags_errors(const grant_diags *d)
{
    return d ? d->errors : 0;
}

char *grant_diags_render(const grant_diags *d, size_t i)
{
    if (!d || i >= d->n)
        return NULL;
    return gk_diag_render(&d->v[i]);
}

int grant_diags_severity(const grant_diags *d, size_t i)
{
    if (!d || i >= d->n)
        return -1;
    /* grant.h promises 0 error, 1 warning, 2 note: the reverse of the
     * one scale (grant_severity), kept for callers written against it. */
    return GRANT_SEVERITY_ERROR - (int)d->v[i].severity;
}

const char *grant_diags_id(const grant_diags *d, size_t i)
{
    if (!d || i >= d->n)
        return NULL;
    return d->v[i].id;
}

const char *grant_diags_message(const grant_diags *d, size_t i)
{
    if (!d || i >= d->n)
        return NULL;
    return d->v[i].message;
}

char *grant_diags_location(const grant_diags *d, size_t i)
{
    if (!d || i >= d->n)
        return NULL;
    const gk_diag *dg = &d->v[i];
    if (dg->loc.src) {
        unsigned line, col;
        gk_source_linecol(dg->loc.src, dg->loc.start, &line, &col);
        return gk_printf("%s:%u:%u", dg->loc.src->name, line, col);
    }
    return dg->file ? gk_strdup(dg->file) : NULL;
}
