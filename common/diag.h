/* diag.h - sources and diagnostics.
 *
 * A gk_source is one input text (a grant file, a YAML file, a compiled IR)
 * with its name and SHA-256. Positions everywhere in the compiler are byte
 * offsets into a source (gk_loc); only gk_diag_render turns them into
 * line:column, with the source line and a caret.
 *
 * Ownership: a gk_source is owned by the gk_source_table it was added to
 * (sources live as long as the diagnostics and ASTs that point at them).
 * grant_diags (public type, defined here) owns its entries and holds a
 * reference on the sources its entries point into.
 */
#ifndef GK_DIAG_H
#define GK_DIAG_H

#include "common/util.h"
#include "grant/grant.h"

typedef struct gk_source {
    char *name;       /* as given or as resolved (include); used in messages */
    char *text;       /* NUL-terminated copy of the bytes */
    size_t len;
    uint8_t sha256[32];
    int refs;
    uint32_t *line_starts; /* built on first use: offset of each line */
    size_t nlines;
} gk_source;

/* A source range [start, end) in bytes. src NULL means "no position". */
typedef struct gk_loc {
    gk_source *src;
    uint32_t start, end;
} gk_loc;

GK_HIDDEN gk_source *gk_source_new(const char *name, const char *text, size_t len);
GK_HIDDEN gk_source *gk_source_ref(gk_source *s);
GK_HIDDEN void gk_source_unref(gk_source *s);
/* 1-based line and column (column counts UTF-8 code points). */
GK_HIDDEN void gk_source_linecol(const gk_source *s, uint32_t off, unsigned *line, unsigned *col);
GK_HIDDEN char *gk_source_sha256_hex(const gk_source *s); /* caller frees */
/* "file:line" of an offset, for reasons and origins. Caller frees. */
GK_HIDDEN char *gk_loc_origin(gk_loc loc);

/* One severity scale: the public grant_severity (NOTE < WARNING < ERROR,
 * so "this grave or graver" is a >=). The short names are the library's
 * spelling of the same values. */
typedef grant_severity gk_severity;
#define GK_NOTE GRANT_SEVERITY_NOTE
#define GK_WARNING GRANT_SEVERITY_WARNING
#define GK_ERROR GRANT_SEVERITY_ERROR

typedef struct gk_diag {
    gk_severity severity;
    gk_loc loc;       /* may have src == NULL */
    char *file;       /* file name when loc.src is NULL (e.g. cannot open) */
    const char *id;   /* a finding's stable id ("SB001", static), else NULL */
    char *message;    /* "expected ';' after rule"; no id */
    char *hint;       /* "did you mean 'exec'?" or NULL */
    bool has_related;
    gk_loc related;   /* second position, e.g. the first of two conflicting rules */
    char *related_message;
} gk_diag;

struct grant_diags {
    gk_diag *v;
    size_t n, cap;
    size_t errors;
};

/* Add an error/warning at loc. hint may be NULL. Returns the new entry so a
 * caller can attach a related position. */
GK_HIDDEN gk_diag *gk_diag_add(grant_diags *d, gk_severity sev, gk_loc loc, const char *hint,
                               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* An error about a whole file (no position): "file: error: message". */
GK_HIDDEN gk_diag *gk_diag_file(grant_diags *d, gk_severity sev, const char *file,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
GK_HIDDEN void gk_diag_relate(gk_diag *dg, gk_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one diagnostic format:
 *
 *   FILE:LINE:COL: error: MESSAGE
 *    LINE | SOURCE LINE
 *         |     ^~~~
 *   hint: HINT
 *   FILE:LINE:COL: note: RELATED MESSAGE
 *    LINE | SOURCE LINE
 *         | ^
 *
 * Without a position: "FILE: error: MESSAGE". A finding's MESSAGE is
 * "ID MESSAGE" (its id field, then the message). Caller frees. */
GK_HIDDEN char *gk_diag_render(const gk_diag *dg);

#endif
