/* regex_subset.c - the portable subset of `match` patterns.
 *
 * Every backend must render a pattern the same way: PCRE2 for the gate,
 * Seatbelt's regex (POSIX ERE-like) on macOS, and a literal walk where a
 * backend has no regex at all. So a pattern may use only what those agree
 * on: literals (a backslash before ASCII punctuation makes it literal),
 * '.', bracket classes [a-z0-9_] and [^...], the quantifiers * + ? {m}
 * {m,} {m,n} (bounds up to 255, RE_DUP_MAX), alternation |, plain groups
 * ( ), and the anchors ^ $.
 *
 * Everything else is named precisely: every (?...) construct (lookaround,
 * named and non-capturing groups, inline options: ERE has none of them, so
 * even (?:...) is rejected; a plain group does the same job here),
 * backreferences, class escapes \d \w \s (inside a class too, where ERE
 * would read the backslash literally), POSIX classes [:alpha:], word
 * boundaries and other anchors, \p properties, lazy and possessive
 * quantifiers, and '{' that is not a quantifier.
 *
 * Syntax errors (an unclosed group or class, a trailing backslash, bounds
 * out of order) are left to PCRE2, which reports them with its own words.
 */
#include <stdlib.h>
#include <string.h>

#include "syntax/syntax.h"

static char *name_at(size_t *at, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *name_at(size_t *at, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gk_vprintf(fmt, ap);
    va_end(ap);
    if (at)
        *at = off;
    return s;
}

static bool is_ascii_punct(unsigned char c)
{
    return c > 0x20 && c < 0x7F && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') &&
           !(c >= 'A' && c <= 'Z');
}

/* What a backslash followed by letter or digit c means to PCRE2. */
static const char *escape_name(unsigned char c)
{
    switch (c) {
    case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
    case 'h': case 'H': case 'v': case 'V': case 'N': case 'R': case 'X':
        return "class escape";
    case 'b': case 'B':
        return "word boundary";
    case 'A': case 'z': case 'Z': case 'G':
        return "anchor";
    case 'p': case 'P':
        return "unicode property";
    case 'k': case 'g':
        return "backreference";
    case 'Q': case 'E':
        return "quoting";
    case 'K':
        return "match reset";
    case 'C':
        return "code unit escape";
    case 'x': case 'o': case '0':
        return "character code escape";
    case 'n': case 't': case 'r': case 'f': case 'e': case 'a': case 'c':
        return "control escape";
    default:
        if (c >= '1' && c <= '9')
            return "backreference";
        return "escape";
    }
}

/* Name of the (?...) construct at p ("(?" already seen). */
static char *group_name(const char *p, size_t off, size_t *at)
{
    const char *q = p + 2;
    if (strncmp(q, "=", 1) == 0)
        return name_at(at, off, "lookahead '(?='");
    if (strncmp(q, "!", 1) == 0)
        return name_at(at, off, "negative lookahead '(?!'");
    if (strncmp(q, "<=", 2) == 0)
        return name_at(at, off, "lookbehind '(?<='");
    if (strncmp(q, "<!", 2) == 0)
        return name_at(at, off, "negative lookbehind '(?<!'");
    if (strncmp(q, "<", 1) == 0 || strncmp(q, "P<", 2) == 0 || strncmp(q, "'", 1) == 0)
        return name_at(at, off, "named group '(?%s'", q[0] == 'P' ? "P<" : q[0] == '<' ? "<" : "'");
    if (strncmp(q, ":", 1) == 0)
        return name_at(at, off, "non-capturing group '(?:'");
    if (strncmp(q, ">", 1) == 0)
        return name_at(at, off, "atomic group '(?>'");
    if (strncmp(q, "|", 1) == 0)
        return name_at(at, off, "branch reset group '(?|'");
    if (strncmp(q, "#", 1) == 0)
        return name_at(at, off, "comment '(?#'");
    if (strncmp(q, "(", 1) == 0)
        return name_at(at, off, "conditional group '(?('");
    if (q[0] == 'R' || q[0] == '&' || q[0] == '+' || (q[0] >= '0' && q[0] <= '9') ||
        strncmp(q, "P>", 2) == 0 || strncmp(q, "P=", 2) == 0)
        return name_at(at, off, "recursion or subroutine call '(?%c'", q[0]);
    return name_at(at, off, "inline option or extension '(?%.1s'", q);
}

/* Parse {m}, {m,} or {m,n} at p; returns its length, 0 if p does not start
 * a quantifier. Bounds go to *lo and *hi (hi = -1 for open). */
static size_t brace_quantifier(const char *p, long *lo, long *hi)
{
    const char *q = p + 1;
    char *end;
    if (*q < '0' || *q > '9')
        return 0;
    *lo = strtol(q, &end, 10);
    q = end;
    *hi = *lo;
    if (*q == ',') {
        q++;
        if (*q >= '0' && *q <= '9') {
            *hi = strtol(q, &end, 10);
            q = end;
        } else {
            *hi = -1;
        }
    }
    if (*q != '}')
        return 0;
    return (size_t)(q + 1 - p);
}

char *gk_regex_unportable(const char *pat, size_t *at)
{
    if (!pat)
        return NULL;
    size_t n = strlen(pat);
    /* Something a quantifier may follow: a literal, '.', a class, a group. */
    bool atom = false;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)pat[i];
        switch (c) {
        case '\\': {
            if (i + 1 >= n)
                return NULL; /* PCRE2: "\ at end of pattern" */
            unsigned char e = (unsigned char)pat[i + 1];
            if (is_ascii_punct(e)) {
                i += 2;
                atom = true;
                break;
            }
            if (e >= 0x80)
                return name_at(at, i, "escape '\\%.*s'", (int)(e < 0xE0 ? 2 : e < 0xF0 ? 3 : 4),
                               pat + i + 1);
            if (e == ' ')
                return name_at(at, i, "escape '\\ '");
            return name_at(at, i, "%s '\\%c'", escape_name(e), e);
        }
        case '(':
            if (pat[i + 1] == '?')
                return group_name(pat + i, i, at);
            if (pat[i + 1] == '*')
                return name_at(at, i, "verb '(*'");
            i++;
            atom = false;
            break;
        case ')':
            i++;
            atom = true;
            break;
        case '|':
        case '^':
            i++;
            atom = false;
            break;
        case '$':
            i++;
            atom = false;
            break;
        case '[': {
            size_t j = i + 1;
            if (pat[j] == '^')
                j++;
            if (pat[j] == ']')
                j++; /* a leading ']' is a literal */
            for (; j < n && pat[j] != ']'; j++) {
                if (pat[j] == '\\') {
                    unsigned char e = (unsigned char)pat[j + 1];
                    if (e && strchr("dDwWsShHvVN", e))
                        return name_at(at, j, "class escape '\\%c'", e);
                    if (e)
                        return name_at(at, j, "escape inside a class '\\%.*s'",
                                       e < 0x80 ? 1 : e < 0xE0 ? 2 : e < 0xF0 ? 3 : 4,
                                       pat + j + 1);
                    return NULL;
                }
                if (pat[j] == '[' && (pat[j + 1] == ':' || pat[j + 1] == '=' || pat[j + 1] == '.')) {
                    const char *close = strstr(pat + j + 2, (char[]){pat[j + 1], ']', 0});
                    int len = close ? (int)(close + 2 - (pat + j)) : 2;
                    return name_at(at, j, "%s '%.*s'",
                                   pat[j + 1] == ':' ? "POSIX class" : "collating element",
                                   len, pat + j);
                }
            }
            if (j >= n)
                return NULL; /* PCRE2: "missing terminating ]" */
            i = j + 1;
            atom = true;
            break;
        }
        case '*':
        case '+':
        case '?':
        case '{': {
            size_t qlen = 1;
            long lo = 0, hi = 0;
            if (c == '{') {
                qlen = brace_quantifier(pat + i, &lo, &hi);
                if (!qlen)
                    return name_at(at, i, "literal '{' (write \\{)");
                if (lo > 255 || hi > 255)
                    return name_at(at, i, "repetition bound above 255 '%.*s'", (int)qlen, pat + i);
                if (hi >= 0 && hi < lo)
                    return NULL; /* PCRE2: "numbers out of order" */
            }
            if (!atom)
                return name_at(at, i, "quantifier with nothing to repeat '%.*s'", (int)qlen,
                               pat + i);
            size_t k = i + qlen;
            if (pat[k] == '?')
                return name_at(at, i, "lazy quantifier '%.*s?'", (int)qlen, pat + i);
            if (pat[k] == '+')
                return name_at(at, i, "possessive quantifier '%.*s+'", (int)qlen, pat + i);
            if (pat[k] == '*' || (pat[k] == '{' && brace_quantifier(pat + k, &lo, &hi)))
                return name_at(at, k, "repeated quantifier '%c'", pat[k]);
            i = k;
            atom = false;
            break;
        }
        default:
            /* A literal character (a whole UTF-8 sequence). */
            i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            atom = true;
            break;
        }
    }
    return NULL;
}
