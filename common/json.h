/* json.h - the library's one JSON writer: every JSON document grantkit
 * prints (the IR, verdicts, findings and SARIF, SBPL answers, the bwrap
 * and landlock emitters, and through grant_json_string the CLIs) is
 * written here, in the bytes jansson's json_dumps would give
 * (JSON_COMPACT, or JSON_INDENT(2)), without building a tree.
 *
 * The IR, its digest and the large emitter outputs are mostly strings;
 * building a json_t tree only to print it cost more than everything else
 * the emitters do. The caller writes object keys in the order it wants
 * printed (bytewise order for canonical output).
 *
 * Strings, the one rule: escaped as jansson does with JSON_ESCAPE_SLASH
 * and JSON_ENSURE_ASCII off. '"' and '\\' are backslashed; U+0000..U+001F
 * become \b \f \n \r \t or \u00XX (upper-case hex); everything else,
 * DEL, U+2028 and U+2029 included, is copied as raw UTF-8. Invalid UTF-8
 * (RFC 3629: a stray continuation byte, a truncated or overlong sequence,
 * a surrogate, above U+10FFFF) cannot be printed as it is: each byte that
 * does not begin a well-formed sequence becomes one U+FFFD, and the valid
 * text around it is kept. Paths from the host need not be UTF-8, and a
 * document must neither vanish (jansson refuses such strings) nor be
 * invalid JSON. tests/check_ir.c holds the output to jansson and the rule
 * to a table.
 *
 * Ownership: a gk_json_out writes into the caller's gk_buf and owns
 * nothing; it keeps container state for at most GK_JSON_MAX_DEPTH levels
 * (deeper nesting aborts: no grantkit document comes near it).
 */
#ifndef GK_JSON_OUT_H
#define GK_JSON_OUT_H

#include "common/util.h"

#define GK_JSON_MAX_DEPTH 32

typedef struct gk_json_out {
    gk_buf *b;
    bool pretty;       /* JSON_INDENT(2) style, else compact */
    bool after_key;    /* a key was written: the value follows it directly */
    int depth;
    bool filled[GK_JSON_MAX_DEPTH]; /* the open container has an element */
    char closer[GK_JSON_MAX_DEPTH]; /* '}' or ']' */
} gk_json_out;

GK_HIDDEN void gk_json_init(gk_json_out *j, gk_buf *b, bool pretty);
GK_HIDDEN void gk_json_object(gk_json_out *j);
GK_HIDDEN void gk_json_array(gk_json_out *j);
GK_HIDDEN void gk_json_end(gk_json_out *j);  /* closes the innermost container */
GK_HIDDEN void gk_json_key(gk_json_out *j, const char *key);
GK_HIDDEN void gk_json_string(gk_json_out *j, const char *s); /* NULL: null */
GK_HIDDEN void gk_json_null(gk_json_out *j);
GK_HIDDEN void gk_json_bool(gk_json_out *j, bool v);
GK_HIDDEN void gk_json_int(gk_json_out *j, long long v);
/* Bytes that may hold NUL (captured output): U+0000 becomes \u0000. */
GK_HIDDEN void gk_json_string_len(gk_json_out *j, const char *s, size_t len);
/* A value already in JSON (a compiled policy embedded in a request),
 * copied as it is: the caller vouches for it. */
GK_HIDDEN void gk_json_raw(gk_json_out *j, const char *text, size_t len);
/* A JSON string literal of s into b (what gk_json_string writes). */
GK_HIDDEN void gk_json_quote(gk_buf *b, const char *s);
GK_HIDDEN void gk_json_quote_len(gk_buf *b, const char *s, size_t len);
/* The size of s's escaped form, quotes not counted: what a budget on a
 * field's JSON encoding measures. */
GK_HIDDEN size_t gk_json_escaped_size(const char *s, size_t len);
/* The longest prefix of s whose escaped form fits budget bytes, cut only
 * between escaped units, so never inside a UTF-8 sequence; returns its
 * length in source bytes and stores its escaped size in *escaped. A
 * plain-ASCII run is cut anywhere inside it (each byte is a unit). */
GK_HIDDEN size_t gk_json_escaped_prefix(const char *s, size_t len, size_t budget, size_t *escaped);

#endif
