/* ir_read.c - the strict reader of a compiled policy (grant-language.md §7).
 *
 * jansson parses (rejecting duplicate keys); a strict validator walks the
 * tree and rebuilds the layers. json_t keeps no positions, so when a
 * diagnostic is needed a small scanner re-walks the source text along the
 * key path of the offending value to find its byte range.
 */
#include "ir/ir.h"
#include "gate/gate.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <jansson.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== */
/* Positions: find a value's byte range by re-scanning the source text       */
/* ======================================================================== */

/* One step of a key path: an object key, or an array index (key NULL). */
typedef struct ir_seg {
    const char *key;
    size_t idx;
} ir_seg;

typedef struct jscan {
    const char *s;
    size_t n, i;
} jscan;

static void js_ws(jscan *j)
{
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
                           j->s[j->i] == '\r'))
        j->i++;
}

static bool js_peek(jscan *j, char c)
{
    return j->i < j->n && j->s[j->i] == c;
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

static bool js_hex4(jscan *j, unsigned *out)
{
    if (j->i + 4 > j->n)
        return false;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(j->s[j->i + k]);
        if (h < 0)
            return false;
        v = v * 16 + (unsigned)h;
    }
    j->i += 4;
    *out = v;
    return true;
}

static void put_utf8(gk_buf *b, unsigned cp)
{
    char t[4];
    if (cp < 0x80) {
        gk_buf_putc(b, (char)cp);
        return;
    }
    if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        gk_buf_add(b, t, 2);
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        gk_buf_add(b, t, 3);
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        gk_buf_add(b, t, 4);
    }
}

/* A string token at j->i; decoded into out when out is not NULL. */
static bool js_string(jscan *j, gk_buf *out)
{
    if (!js_peek(j, '"'))
        return false;
    j->i++;
    while (j->i < j->n) {
        char c = j->s[j->i++];
        if (c == '"')
            return true;
        if (c != '\\') {
            if (out)
                gk_buf_putc(out, c);
            continue;
        }
        if (j->i >= j->n)
            return false;
        char e = j->s[j->i++];
        unsigned cp;
        switch (e) {
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (!js_hex4(j, &cp))
                return false;
            if (cp >= 0xD800 && cp < 0xDC00 && j->i + 1 < j->n && j->s[j->i] == '\\' &&
                j->s[j->i + 1] == 'u') {
                unsigned lo;
                j->i += 2;
                if (!js_hex4(j, &lo))
                    return false;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            break;
        default: cp = (unsigned char)e; break;
        }
        if (out)
            put_utf8(out, cp);
    }
    return false;
}

static bool js_value(jscan *j);

static bool js_container(jscan *j, char open, char close)
{
    j->i++; /* open */
    (void)open;
    js_ws(j);
    if (js_peek(j, close)) {
        j->i++;
        return true;
    }
    for (;;) {
        js_ws(j);
        if (open == '{') {
            if (!js_string(j, NULL))
                return false;
            js_ws(j);
            if (!js_peek(j, ':'))
                return false;
            j->i++;
            js_ws(j);
        }
        if (!js_value(j))
            return false;
        js_ws(j);
        if (js_peek(j, ',')) {
            j->i++;
            continue;
        }
        if (js_peek(j, close)) {
            j->i++;
            return true;
        }
        return false;
    }
}

/* Skip one value (the document already parsed, so this can be lenient). */
static bool js_value(jscan *j)
{
    if (j->i >= j->n)
        return false;
    char c = j->s[j->i];
    if (c == '"')
        return js_string(j, NULL);
    if (c == '{')
        return js_container(j, '{', '}');
    if (c == '[')
        return js_container(j, '[', ']');
    size_t start = j->i;
    while (j->i < j->n && !strchr(",]} \t\r\n", j->s[j->i]))
        j->i++;
    return j->i > start;
}

/* Byte range of the value at path (or of its key, when want_key and the
 * last step is a key). Containers get a one-byte range on their opening
 * bracket: underlining a whole layer helps nobody. */
static bool js_locate(const char *s, size_t n, const ir_seg *path, int depth, bool want_key,
                      uint32_t *start, uint32_t *end)
{
    jscan j = {s, n, 0};
    gk_buf key = {0};
    bool ok = false;
    js_ws(&j);
    for (int d = 0; d < depth; d++) {
        bool last = d == depth - 1;
        if (path[d].key) {
            if (!js_peek(&j, '{'))
                goto out;
            j.i++;
            bool found = false;
            js_ws(&j);
            while (!found && !js_peek(&j, '}')) {
                js_ws(&j);
                size_t ks = j.i;
                key.len = 0;
                gk_buf_puts(&key, "");
                if (!js_string(&j, &key))
                    goto out;
                size_t ke = j.i;
                js_ws(&j);
                if (!js_peek(&j, ':'))
                    goto out;
                j.i++;
                js_ws(&j);
                if (key.len == strlen(path[d].key) && memcmp(key.data, path[d].key, key.len) == 0) {
                    found = true;
                    if (last && want_key) {
                        *start = (uint32_t)ks;
                        *end = (uint32_t)ke;
                        ok = true;
                        goto out;
                    }
                    break;
                }
                if (!js_value(&j))
                    goto out;
                js_ws(&j);
                if (js_peek(&j, ','))
                    j.i++;
                js_ws(&j);
            }
            if (!found)
                goto out;
        } else {
            if (!js_peek(&j, '['))
                goto out;
            j.i++;
            js_ws(&j);
            for (size_t k = 0; k < path[d].idx; k++) {
                if (!js_value(&j))
                    goto out;
                js_ws(&j);
                if (!js_peek(&j, ','))
                    goto out;
                j.i++;
                js_ws(&j);
            }
        }
    }
    if (j.i >= n)
        goto out;
    *start = (uint32_t)j.i;
    if (j.s[j.i] == '{' || j.s[j.i] == '[') {
        *end = *start + 1;
    } else {
        if (!js_value(&j))
            goto out;
        *end = (uint32_t)j.i;
    }
    ok = true;
out:
    gk_buf_free(&key);
    return ok;
}

/* ======================================================================== */
/* Input                                                                     */
/* ======================================================================== */

#define IR_MAX_DEPTH 16

typedef struct ir_reader {
    gk_source *src;
    grant_diags *diags;
    ir_seg path[IR_MAX_DEPTH];
    int depth;
    size_t errors;
    bool windows; /* drive-letter paths are absolute (IR target windows) */
    /* The IR's own context once read (NULL before, or when it is broken):
     * every region's real is checked against what freezing its path in
     * that context gives, on this host for a host target. */
    const grant_context *fctx;
    gk_resolve_cache cache;
} ir_reader;

static void enter_key(ir_reader *r, const char *key)
{
    if (r->depth < IR_MAX_DEPTH)
        r->path[r->depth] = (ir_seg){key, 0};
    r->depth++;
}

static void enter_idx(ir_reader *r, size_t idx)
{
    if (r->depth < IR_MAX_DEPTH)
        r->path[r->depth] = (ir_seg){NULL, idx};
    r->depth++;
}

static void leave(ir_reader *r)
{
    r->depth--;
}

/* "layers[0].fs.read[2].path" */
static char *path_text(const ir_reader *r)
{
    gk_buf b = {0};
    gk_buf_puts(&b, "");
    int d = r->depth < IR_MAX_DEPTH ? r->depth : IR_MAX_DEPTH;
    for (int i = 0; i < d; i++) {
        if (r->path[i].key) {
            if (i)
                gk_buf_putc(&b, '.');
            gk_buf_puts(&b, r->path[i].key);
        } else {
            gk_buf_printf(&b, "[%zu]", r->path[i].idx);
        }
    }
    return gk_buf_steal(&b, NULL);
}

static gk_loc here(const ir_reader *r, bool at_key)
{
    gk_loc loc = {r->src, 0, 0};
    uint32_t s, e;
    int d = r->depth < IR_MAX_DEPTH ? r->depth : IR_MAX_DEPTH;
    if (js_locate(r->src->text, r->src->len, r->path, d, at_key, &s, &e)) {
        loc.start = s;
        loc.end = e;
    } else if (r->src->len) {
        loc.end = 1;
    }
    return loc;
}

static gk_diag *err_at(ir_reader *r, bool at_key, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static gk_diag *err_at(ir_reader *r, bool at_key, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gk_autofree char *msg = gk_vprintf(fmt, ap);
    va_end(ap);
    r->errors++;
    return gk_diag_add(r->diags, GK_ERROR, here(r, at_key), hint, "%s", msg);
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static bool want(ir_reader *r, const json_t *v, bool ok, const char *what)
{
    if (ok)
        return true;
    gk_autofree char *at = path_text(r);
    if (*at)
        err_at(r, false, NULL, "expected %s for '%s', found %s", what, at, type_name(v));
    else
        err_at(r, false, NULL, "expected %s at the top level, found %s", what, type_name(v));
    return false;
}

#define WANT_OBJECT(r, v) want((r), (v), json_is_object(v), "an object")
#define WANT_ARRAY(r, v) want((r), (v), json_is_array(v), "an array")
#define WANT_STRING(r, v) want((r), (v), json_is_string(v), "a string")
#define WANT_BOOL(r, v) want((r), (v), json_is_boolean(v), "a boolean")

/* Every key of obj must be in keys[] and every key of keys[] in obj.
 * Returns false only when keys are missing: after an unknown key the
 * known ones can still be checked (the error is counted either way). */
static bool check_keys(ir_reader *r, json_t *obj, const char *const *keys, size_t nkeys)
{
    bool ok = true;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        bool known = false;
        for (size_t i = 0; i < nkeys && !known; i++)
            known = strcmp(k, keys[i]) == 0;
        if (known)
            continue;
        const char *near = gk_nearest(k, keys, nkeys);
        gk_autofree char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
        gk_autofree char *at = path_text(r);
        enter_key(r, k);
        if (*at)
            err_at(r, true, hint, "unknown key '%s' in '%s'", k, at);
        else
            err_at(r, true, hint, "unknown key '%s'", k);
        leave(r);
    }
    /* All missing keys in one diagnostic: a truncated object is one mistake. */
    gk_buf missing = {0};
    size_t nmissing = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (json_object_get(obj, keys[i]))
            continue;
        gk_buf_printf(&missing, "%s'%s'", nmissing ? ", " : "", keys[i]);
        nmissing++;
    }
    if (nmissing) {
        gk_autofree char *at = path_text(r);
        err_at(r, false, NULL, "missing key%s %s%s%s%s", nmissing > 1 ? "s" : "", missing.data,
               *at ? " in '" : "", at, *at ? "'" : "");
        ok = false;
    }
    gk_buf_free(&missing);
    return ok;
}

#define CHECK_KEYS(r, obj, ...)                                                 \
    check_keys((r), (obj), (const char *const[]){__VA_ARGS__},                  \
               sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* A frozen path: absolute ('/', or a drive "C:/" on windows) and lexically
 * normal (no empty, '.' or '..' segment, no trailing '/'). */
static bool path_is_frozen(const char *p, bool windows)
{
    const char *s = p;
    if (windows && ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':')
        s += 2;
    if (s[0] != '/')
        return false;
    if (s[1] == '\0')
        return true;
    for (const char *seg = s + 1;;) {
        const char *e = strchr(seg, '/');
        size_t n = e ? (size_t)(e - seg) : strlen(seg);
        if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (!e)
            return true;
        seg = e + 1;
    }
}

/* A string that must be a frozen path; NULL (error added) otherwise. */
static const char *get_path(ir_reader *r, json_t *v)
{
    if (!WANT_STRING(r, v))
        return NULL;
    const char *s = json_string_value(v);
    if (!path_is_frozen(s, r->windows)) {
        gk_autofree char *at = path_text(r);
        err_at(r, false, "compiled paths are absolute and lexically normal",
               "'%s' in '%s' is not a frozen path", s, at);
        return NULL;
    }
    return s;
}

static const char *get_nonempty(ir_reader *r, json_t *v)
{
    if (!WANT_STRING(r, v))
        return NULL;
    const char *s = json_string_value(v);
    if (!*s) {
        gk_autofree char *at = path_text(r);
        err_at(r, false, NULL, "empty string for '%s'", at);
        return NULL;
    }
    return s;
}

/* An exec name: a basename, never a path. */
static const char *get_name(ir_reader *r, json_t *v)
{
    const char *s = get_nonempty(r, v);
    if (s && strchr(s, '/')) {
        gk_autofree char *at = path_text(r);
        err_at(r, false, NULL, "'%s' in '%s' is a path, not a command name", s, at);
        return NULL;
    }
    return s;
}

static bool get_tri(ir_reader *r, json_t *v, gk_tri *out)
{
    if (json_is_null(v)) {
        *out = GK_TRI_NONE;
        return true;
    }
    if (!want(r, v, json_is_boolean(v), "a boolean or null"))
        return false;
    *out = json_is_true(v) ? GK_TRI_TRUE : GK_TRI_FALSE;
    return true;
}

/* A region's real is what the freezer makes of its path: the host's
 * canonical form for a host target (symlinks resolved here, now), the
 * alias table's offline. Trusting the IR's spelling would let
 * {"path":"/usr","real":"/"} grant everything under a reason that says
 * /usr. */
static bool real_agrees(ir_reader *r, const char *path, const char *real)
{
    if (!r->fctx)
        return true;
    gk_autofree char *canon = gk_canonicalize_cached(r->fctx, path, &r->cache);
    /* A windows layer is folded when read (windows_fold): a spelling that
     * differs only by case or '\' is the same path there. */
    gk_autofree char *folded =
        r->fctx->target == GRANT_TARGET_WINDOWS ? gk_win_fold(real) : gk_strdup(real);
    if (canon && strcmp(canon, folded) == 0)
        return true;
    bool host = r->fctx->target == GRANT_TARGET_HOST;
    gk_autofree char *hint = host ? gk_strdup("compile the policy again on this host")
                                  : gk_printf("the %s target spells it '%s'; compile the "
                                              "policy again", gk_target_name(r->fctx),
                                              canon ? canon : "(none)");
    if (host)
        err_at(r, false, hint,
               "'%s' is not the real path of '%s' on this host ('%s'): compiled on another "
               "host or edited", real, path, canon ? canon : "(a symlink loop)");
    else
        err_at(r, false, hint, "'%s' is not the real path of '%s': the IR was edited", real, path);
    return false;
}

/* [{"path","real"}...] into regs (regs NULL: shape only). */
static void read_regions(ir_reader *r, json_t *a, gk_regions *regs, const char *origin)
{
    if (!WANT_ARRAY(r, a))
        return;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        enter_idx(r, i);
        if (WANT_OBJECT(r, e) && CHECK_KEYS(r, e, "path", "real")) {
            enter_key(r, "path");
            const char *path = get_path(r, json_object_get(e, "path"));
            leave(r);
            enter_key(r, "real");
            const char *real = get_path(r, json_object_get(e, "real"));
            if (path && real && !real_agrees(r, path, real))
                real = NULL;
            leave(r);
            if (path && real && regs) {
                gk_fpath fp = {(char *)path, (char *)real};
                gk_regions_add(regs, &fp, origin);
            }
        }
        leave(r);
    }
}

/* An array of strings; each checked by get (NULL: any string) and, when
 * out is not NULL, added to it. */
static void read_strings(ir_reader *r, json_t *a, const char *(*get)(ir_reader *, json_t *),
                         gk_entries *out, gk_strvec *outv, const char *origin)
{
    if (!WANT_ARRAY(r, a))
        return;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        enter_idx(r, i);
        const char *s = get ? get(r, e) : (WANT_STRING(r, e) ? json_string_value(e) : NULL);
        if (s && out)
            gk_entries_add(out, s, origin);
        if (s && outv)
            gk_strvec_push(outv, s);
        leave(r);
    }
}

/* A destination pattern in its canonical form (gk_dest_format's): the IR
 * holds nothing a grant file could not have produced. */
static const char *get_dest(ir_reader *r, json_t *v)
{
    const char *s = get_nonempty(r, v);
    if (!s)
        return NULL;
    gk_dest d;
    gk_dest_error err;
    if (gk_dest_parse_pattern(s, &d, &err) < 0) {
        err_at(r, false, err.hint, "'%s' is not a destination: %s", s, err.msg);
        return NULL;
    }
    gk_autofree char *canon = gk_dest_format(&d);
    if (strcmp(canon, s) != 0) {
        err_at(r, false, "compiled destinations are lower-case, without a trailing dot",
               "'%s' is not in canonical form ('%s')", s, canon);
        return NULL;
    }
    return s;
}

/* net: a boolean, null, or {"allow":[DEST...],"deny":[DEST...]}; with f
 * NULL, the shape only (the projection's). */
static void read_net(ir_reader *r, json_t *v, gk_layer *f)
{
    if (json_is_object(v)) {
        if (!CHECK_KEYS(r, v, "allow", "deny"))
            return;
        enter_key(r, "allow");
        read_strings(r, json_object_get(v, "allow"), get_dest, f ? &f->netd.allow : NULL, NULL,
                     f ? f->origin : NULL);
        leave(r);
        enter_key(r, "deny");
        read_strings(r, json_object_get(v, "deny"), get_dest, f ? &f->netd.deny : NULL, NULL,
                     f ? f->origin : NULL);
        leave(r);
        if (f) {
            f->net_list = true;
            f->net = GK_TRI_FALSE;
        }
        return;
    }
    if (!f) {
        want(r, v, json_is_boolean(v) || json_is_object(v), "a boolean or an object");
        return;
    }
    if (!want(r, v, json_is_null(v) || json_is_boolean(v), "a boolean, null or an object"))
        return;
    get_tri(r, v, &f->net);
}

static const char *get_pattern(ir_reader *r, json_t *v)
{
    const char *s = get_nonempty(r, v);
    if (!s)
        return NULL;
    size_t at = 0;
    gk_autofree char *bad = gk_regex_unportable(s, &at);
    if (bad) {
        err_at(r, false, "match patterns use literals, '.', classes, * + ?, {m,n}, |, groups, ^ $",
               "pattern '%s' uses %s, outside the portable subset", s, bad);
        return NULL;
    }
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof(msg));
        err_at(r, false, NULL, "pattern '%s' does not compile: %s", s, (const char *)msg);
        return NULL;
    }
    pcre2_code_free(code);
    return s;
}

/* {"name": "allow" | ["sub", ...]} */
static void read_admits(ir_reader *r, json_t *o, bool files, gk_admits *out, const char *origin)
{
    if (!WANT_OBJECT(r, o))
        return;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        enter_key(r, k);
        bool key_ok;
        if (files) {
            key_ok = path_is_frozen(k, r->windows);
            if (!key_ok)
                err_at(r, true, "compiled paths are absolute and lexically normal",
                       "'%s' is not a frozen file path", k);
        } else {
            key_ok = *k && !strchr(k, '/');
            if (!key_ok)
                err_at(r, true, NULL, "'%s' is not a command name", k);
        }
        gk_admit ad = {0};
        bool ok = key_ok;
        if (json_is_string(v)) {
            if (strcmp(json_string_value(v), "allow") != 0) {
                gk_autofree char *at = path_text(r);
                err_at(r, false, "write \"allow\" or a list of subcommands",
                       "expected \"allow\" or an array of subcommands for '%s', found '%s'", at,
                       json_string_value(v));
                ok = false;
            }
            ad.all = true;
        } else if (json_is_array(v)) {
            size_t n0 = r->errors;
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                enter_idx(r, i);
                const char *s = get_nonempty(r, e);
                if (s)
                    gk_strvec_push(&ad.subs, s);
                leave(r);
            }
            ok = ok && r->errors == n0;
        } else {
            want(r, v, false, "\"allow\" or an array of subcommands");
            ok = false;
        }
        if (ok) {
            ad.key = gk_strdup(k);
            ad.origin = gk_strdup(origin);
            GK_VEC_PUSH(out->v, out->n, out->cap, ad);
        } else {
            gk_strvec_free(&ad.subs);
        }
        leave(r);
    }
}

/* A windows layer keeps its exec keys and real spellings folded (the gate
 * folds its queries alike): a document written otherwise, by hand or by
 * an older grantc, must not escape by case. Our own output is folded, so
 * this is the identity there. */
static void fold_key(char **key)
{
    char *f = gk_win_fold(*key);
    free(*key);
    *key = f;
}

static void windows_fold(gk_layer *f)
{
    gk_exec_dim *x = &f->exec;
    gk_admits *admits[] = {&x->names, &x->files};
    for (int i = 0; i < 2; i++)
        for (size_t j = 0; j < admits[i]->n; j++)
            fold_key(&admits[i]->v[j].key);
    gk_entries *entries[] = {&x->dirs, &x->veto_names, &x->veto_files, &x->veto_dirs};
    for (int i = 0; i < 4; i++)
        for (size_t j = 0; j < entries[i]->n; j++)
            fold_key(&entries[i]->v[j].key);
    gk_regions *regions[] = {&f->fs.read, &f->fs.write, &f->fs.readonly, &f->fs.deny};
    for (int i = 0; i < 4; i++)
        for (size_t j = 0; j < regions[i]->n; j++)
            fold_key(&regions[i]->v[j].p.real);
}

/* The validator's contradiction (syntax/validate.c) for a layer that
 * never was a grant file: a command name both allowed and denied. A name
 * is kept as written, so this is exactly the grant file's rule; files and
 * dirs are frozen, and two spellings of one file (allow ~/x; deny /home/u/x)
 * compile to both lists legitimately (deny wins), so they are not errors.
 * At the deny entry (the later one in a grant file), citing the allow. */
static void check_contradictions(ir_reader *r, json_t *allow_names, json_t *deny_names)
{
    if (!json_is_object(allow_names) || !json_is_array(deny_names))
        return;
    size_t i;
    json_t *e;
    json_array_foreach(deny_names, i, e) {
        const char *name = json_string_value(e);
        if (!name || !json_object_get(allow_names, name))
            continue;
        enter_key(r, "allow");
        enter_key(r, "names");
        enter_key(r, name);
        gk_loc first = here(r, true);
        leave(r);
        leave(r);
        leave(r);
        enter_key(r, "deny");
        enter_key(r, "names");
        enter_idx(r, i);
        gk_diag *dg = err_at(r, false, NULL, "'%s' is both allowed and denied", name);
        gk_diag_relate(dg, first, "allowed here");
        leave(r);
        leave(r);
        leave(r);
    }
}

static void read_exec(ir_reader *r, json_t *o, gk_layer *f)
{
    if (!WANT_OBJECT(r, o) || !CHECK_KEYS(r, o, "allow", "deny"))
        return;
    f->has_exec = true;
    gk_exec_dim *x = &f->exec;
    json_t *allow = json_object_get(o, "allow");
    enter_key(r, "allow");
    if (!json_is_null(allow) && want(r, allow, json_is_object(allow), "an object or null") &&
        CHECK_KEYS(r, allow, "dirs", "files", "names")) {
        x->has_allow = true;
        enter_key(r, "dirs");
        read_strings(r, json_object_get(allow, "dirs"), get_path, &x->dirs, NULL, f->origin);
        leave(r);
        enter_key(r, "files");
        read_admits(r, json_object_get(allow, "files"), true, &x->files, f->origin);
        leave(r);
        enter_key(r, "names");
        read_admits(r, json_object_get(allow, "names"), false, &x->names, f->origin);
        leave(r);
    }
    leave(r);
    json_t *deny = json_object_get(o, "deny");
    enter_key(r, "deny");
    if (WANT_OBJECT(r, deny) && CHECK_KEYS(r, deny, "dirs", "files", "match", "names")) {
        static const char *const keys[] = {"dirs", "files", "match", "names"};
        gk_entries *dst[] = {&x->veto_dirs, &x->veto_files, &x->veto_match, &x->veto_names};
        const char *(*get[])(ir_reader *, json_t *) = {get_path, get_path, get_pattern, get_name};
        for (int i = 0; i < 4; i++) {
            enter_key(r, keys[i]);
            read_strings(r, json_object_get(deny, keys[i]), get[i], dst[i], NULL, f->origin);
            leave(r);
        }
    }
    leave(r);
    if (x->has_allow && json_is_object(deny))
        check_contradictions(r, json_object_get(allow, "names"), json_object_get(deny, "names"));
}

static void read_fs(ir_reader *r, json_t *o, gk_layer *f)
{
    if (!WANT_OBJECT(r, o) || !CHECK_KEYS(r, o, "deny", "read", "readonly", "write"))
        return;
    f->has_fs = true;
    gk_fs_dim *fs = &f->fs;
    json_t *rd = json_object_get(o, "read"), *wr = json_object_get(o, "write");
    /* read and write are null together: a section either restricts (lists
     * regions, possibly none) or only adds denies/readonly. */
    if (json_is_null(rd) != json_is_null(wr)) {
        enter_key(r, json_is_null(rd) ? "read" : "write");
        gk_autofree char *at = path_text(r);
        err_at(r, false, "'read' and 'write' are both null (unrestricted) or both arrays",
               "'%s' is null but its sibling is not", at);
        leave(r);
    }
    fs->restricted = !json_is_null(rd) || !json_is_null(wr);
    enter_key(r, "deny");
    read_regions(r, json_object_get(o, "deny"), &fs->deny, f->origin);
    leave(r);
    if (!json_is_null(rd)) {
        enter_key(r, "read");
        read_regions(r, rd, &fs->read, f->origin);
        leave(r);
    }
    enter_key(r, "readonly");
    read_regions(r, json_object_get(o, "readonly"), &fs->readonly, f->origin);
    leave(r);
    if (!json_is_null(wr)) {
        enter_key(r, "write");
        read_regions(r, wr, &fs->write, f->origin);
        leave(r);
    }
}

static gk_layer *read_layer(ir_reader *r, json_t *o)
{
    if (!WANT_OBJECT(r, o) ||
        !CHECK_KEYS(r, o, "audit", "editor", "exec", "fs", "name", "net", "origin", "shell"))
        return NULL;
    size_t n0 = r->errors;
    gk_layer *f = gk_layer_new();
    json_t *v;

    v = json_object_get(o, "name");
    enter_key(r, "name");
    if (!json_is_null(v) && get_nonempty(r, v))
        f->name = gk_strdup(json_string_value(v));
    leave(r);

    v = json_object_get(o, "origin");
    enter_key(r, "origin");
    if (!json_is_null(v) && get_nonempty(r, v))
        f->origin = gk_strdup(json_string_value(v));
    leave(r);

    v = json_object_get(o, "audit");
    enter_key(r, "audit");
    if (WANT_BOOL(r, v))
        f->audit = json_is_true(v);
    leave(r);

    v = json_object_get(o, "net");
    enter_key(r, "net");
    read_net(r, v, f);
    leave(r);

    v = json_object_get(o, "shell");
    enter_key(r, "shell");
    f->chdir = GK_TRI_NONE;
    if (!json_is_null(v) && want(r, v, json_is_object(v), "an object or null") &&
        CHECK_KEYS(r, v, "chdir")) {
        f->has_shell = true;
        enter_key(r, "chdir");
        get_tri(r, json_object_get(v, "chdir"), &f->chdir);
        leave(r);
    }
    leave(r);

    v = json_object_get(o, "editor");
    enter_key(r, "editor");
    f->ed_read = f->ed_write = f->ed_tui = GK_TRI_NONE;
    if (!json_is_null(v) && want(r, v, json_is_object(v), "an object or null") &&
        CHECK_KEYS(r, v, "read", "tui", "write")) {
        f->has_editor = true;
        enter_key(r, "read");
        get_tri(r, json_object_get(v, "read"), &f->ed_read);
        leave(r);
        enter_key(r, "tui");
        get_tri(r, json_object_get(v, "tui"), &f->ed_tui);
        leave(r);
        enter_key(r, "write");
        get_tri(r, json_object_get(v, "write"), &f->ed_write);
        leave(r);
    }
    leave(r);

    v = json_object_get(o, "exec");
    enter_key(r, "exec");
    if (!json_is_null(v) && want(r, v, json_is_object(v), "an object or null"))
        read_exec(r, v, f);
    leave(r);

    v = json_object_get(o, "fs");
    enter_key(r, "fs");
    if (!json_is_null(v) && want(r, v, json_is_object(v), "an object or null"))
        read_fs(r, v, f);
    leave(r);

    if (r->errors != n0) {
        gk_layer_free(f);
        return NULL;
    }
    if (r->windows)
        windows_fold(f);
    gk_layer_canonicalize(f);
    return f;
}

/* The projection is derived (recomputed on output) but its shape is still
 * checked, so a hand-edited document cannot carry junk through. */
static void read_projection(ir_reader *r, json_t *o)
{
    if (!WANT_OBJECT(r, o) || !CHECK_KEYS(r, o, "deny", "deputy", "exec", "fs_restricted",
                                          "implicit", "net", "pinned", "protect", "read", "readonly",
                                          "write"))
        return;
    json_t *v;
    enter_key(r, "deny");
    read_regions(r, json_object_get(o, "deny"), NULL, NULL);
    leave(r);
    enter_key(r, "readonly");
    read_regions(r, json_object_get(o, "readonly"), NULL, NULL);
    leave(r);
    static const char *const nullable_regions[] = {"read", "write"};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(o, nullable_regions[i]);
        enter_key(r, nullable_regions[i]);
        if (!json_is_null(v))
            read_regions(r, v, NULL, NULL);
        leave(r);
    }
    enter_key(r, "deputy");
    read_strings(r, json_object_get(o, "deputy"), get_path, NULL, NULL, NULL);
    leave(r);
    enter_key(r, "pinned");
    read_strings(r, json_object_get(o, "pinned"), get_path, NULL, NULL, NULL);
    leave(r);
    enter_key(r, "protect");
    read_strings(r, json_object_get(o, "protect"), get_path, NULL, NULL, NULL);
    leave(r);
    enter_key(r, "net");
    read_net(r, json_object_get(o, "net"), NULL);
    leave(r);
    static const char *const bools[] = {"fs_restricted"};
    for (int i = 0; i < 1; i++) {
        enter_key(r, bools[i]);
        WANT_BOOL(r, json_object_get(o, bools[i]));
        leave(r);
    }
    v = json_object_get(o, "exec");
    enter_key(r, "exec");
    if (WANT_OBJECT(r, v) && CHECK_KEYS(r, v, "admit", "veto")) {
        json_t *admit = json_object_get(v, "admit");
        enter_key(r, "admit");
        if (!json_is_null(admit))
            read_strings(r, admit, get_path, NULL, NULL, NULL);
        leave(r);
        enter_key(r, "veto");
        read_strings(r, json_object_get(v, "veto"), get_path, NULL, NULL, NULL);
        leave(r);
    }
    leave(r);
    v = json_object_get(o, "implicit");
    enter_key(r, "implicit");
    if (!json_is_null(v) && want(r, v, json_is_object(v), "an object or null") &&
        CHECK_KEYS(r, v, "devices", "proc", "read", "target", "write")) {
        /* Device names need not be paths (windows: "NUL"). */
        static const char *const lists[] = {"devices", "read", "write"};
        for (int i = 0; i < 3; i++) {
            enter_key(r, lists[i]);
            read_strings(r, json_object_get(v, lists[i]), i ? get_path : get_nonempty, NULL, NULL,
                         NULL);
            leave(r);
        }
        enter_key(r, "proc");
        WANT_BOOL(r, json_object_get(v, "proc"));
        leave(r);
        enter_key(r, "target");
        get_nonempty(r, json_object_get(v, "target"));
        leave(r);
    }
    leave(r);
}

/* A source still where the IR says must be the text it was compiled from:
 * an edited grant file with a stale IR beside it would run the old rules
 * while the file reads as the new ones. A changed file is an error (grantrun
 * refuses to run, grantc to read the IR); a missing or unreadable one is a
 * note (the IR may well come from another machine). */
static void check_source(ir_reader *r, const char *file, const char *sha)
{
    char *text = NULL;
    size_t len = 0;
    /* A relative name was given relative to the compiling directory. */
    const char *cwd = r->fctx->cwd;
    gk_autofree char *at = file[0] == '/' ? gk_strdup(file)
                           : cwd          ? gk_printf("%s/%s", cwd, file)
                                          : NULL;
    if (!at)
        return;
    int rc = gk_read_file(at, &text, &len);
    if (rc < 0) {
        gk_diag_add(r->diags, GK_NOTE, here(r, false), NULL,
                    "source '%s' is not readable here (%s): its digest is not checked", file,
                    gk_read_strerror(rc));
        return;
    }
    gk_source *src = gk_source_new(file, text, len);
    free(text);
    gk_autofree char *hex = gk_source_sha256_hex(src);
    gk_source_unref(src);
    if (strcmp(hex, sha) != 0)
        err_at(r, false, "compile the policy again from its grant files",
               "source '%s' changed since it was compiled (its sha256 is now %s)", file, hex);
}

static void read_sources(ir_reader *r, json_t *a, grant_policy *p)
{
    if (!WANT_ARRAY(r, a))
        return;
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        enter_idx(r, i);
        if (WANT_OBJECT(r, e) && CHECK_KEYS(r, e, "file", "sha256")) {
            enter_key(r, "file");
            const char *file = get_nonempty(r, json_object_get(e, "file"));
            leave(r);
            enter_key(r, "sha256");
            const char *sha = NULL;
            json_t *hv = json_object_get(e, "sha256");
            if (WANT_STRING(r, hv)) {
                sha = json_string_value(hv);
                bool hex = strlen(sha) == 64;
                for (const char *c = sha; hex && *c; c++)
                    hex = (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f');
                if (!hex) {
                    err_at(r, false, NULL, "'%s' is not a SHA-256 (64 lower-case hex digits)", sha);
                    sha = NULL;
                }
            }
            leave(r);
            bool dup = false;
            for (size_t k = 0; file && sha && k < p->nsources; k++)
                dup |= strcmp(p->sources[k].file, file) == 0 && strcmp(p->sources[k].sha256, sha) == 0;
            if (file && sha && !dup && r->fctx) {
                enter_key(r, "sha256");
                check_source(r, file, sha);
                leave(r);
            }
            if (file && sha && !dup) {
                p->sources = gk_realloc(p->sources, (p->nsources + 1) * sizeof(*p->sources));
                gk_policy_source *ps = &p->sources[p->nsources++];
                ps->file = gk_strdup(file);
                memcpy(ps->sha256, sha, 65);
            }
        }
        leave(r);
    }
}

/* The IR's freeze context, before it replaces the caller's. */
typedef struct ir_context {
    const char *target; /* "linux", "macos", "windows" */
    bool host;
    bool implicit;
    const char *str[5]; /* indexed by grant_ctx_key */
    const char *xdg[GK_XDG_COUNT];
} ir_context;

static const char *const ctx_keys[5] = {"home", "user", "cwd", "tempdir", "path"};

static bool read_context(ir_reader *r, json_t *o, ir_context *c)
{
    size_t n0 = r->errors;
    if (!WANT_OBJECT(r, o) || !CHECK_KEYS(r, o, "cwd", "home", "host", "implicit", "path", "target",
                                          "tempdir", "user", "xdg"))
        return false;
    json_t *v = json_object_get(o, "target");
    enter_key(r, "target");
    if (WANT_STRING(r, v)) {
        static const char *const targets[] = {"linux", "macos", "windows"};
        const char *t = json_string_value(v);
        for (int i = 0; i < 3; i++)
            if (strcmp(t, targets[i]) == 0)
                c->target = targets[i];
        if (!c->target) {
            const char *near = gk_nearest(t, targets, 3);
            gk_autofree char *hint =
                gk_printf("%s%s%s", near ? "did you mean '" : "targets are linux, macos, windows",
                          near ? near : "", near ? "'?" : "");
            err_at(r, false, hint, "unknown target '%s'", t);
        }
    }
    leave(r);
    r->windows = gk_str_eq(c->target, "windows");
    for (int k = 0; k < 5; k++) {
        json_t *kv = json_object_get(o, ctx_keys[k]);
        enter_key(r, ctx_keys[k]);
        if (json_is_null(kv))
            c->str[k] = NULL;
        else if (k == GRANT_CTX_USER || k == GRANT_CTX_PATH)
            c->str[k] = want(r, kv, json_is_string(kv), "a string or null") ? json_string_value(kv)
                                                                            : NULL;
        else
            c->str[k] = get_path(r, kv);
        leave(r);
    }
    static const char *const bools[] = {"host", "implicit"};
    bool *dst[] = {&c->host, &c->implicit};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(o, bools[i]);
        enter_key(r, bools[i]);
        if (WANT_BOOL(r, v))
            *dst[i] = json_is_true(v);
        leave(r);
    }
    v = json_object_get(o, "xdg");
    enter_key(r, "xdg");
    if (WANT_OBJECT(r, v) &&
        check_keys(r, v, (const char *const *)gk_xdg_names, GK_XDG_COUNT)) {
        for (int i = 0; i < GK_XDG_COUNT; i++) {
            json_t *x = json_object_get(v, gk_xdg_names[i]);
            enter_key(r, gk_xdg_names[i]);
            c->xdg[i] = json_is_null(x) ? NULL : get_path(r, x);
            leave(r);
        }
    }
    leave(r);
    return r->errors == n0;
}

static const char *host_os_name(void)
{
    grant_context tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.target = GRANT_TARGET_HOST;
    return gk_target_name(&tmp);
}

static char *target_display(bool host, const char *name, bool other_host)
{
    if (host && other_host)
        return gk_printf("host (%s)", name);
    return gk_strdup(host ? "host" : name);
}

/* A value the caller set explicitly (a flag) must match the IR's: the
 * paths inside were frozen against the IR's context, not the caller's. */
static void check_agreement(ir_reader *r, const grant_context *ctx, const ir_context *c)
{
    unsigned m = ctx->explicit_mask;
    enter_key(r, "context");
    for (int k = 0; k < 5; k++) {
        const char *mine;
        switch (k) {
        case GRANT_CTX_HOME: mine = ctx->home; break;
        case GRANT_CTX_USER: mine = ctx->user; break;
        case GRANT_CTX_CWD: mine = ctx->cwd; break;
        case GRANT_CTX_TEMPDIR: mine = ctx->tempdir; break;
        default: mine = ctx->path; break;
        }
        if (!(m & GK_CTX_BIT(k)) || gk_str_eq(mine, c->str[k]))
            continue;
        enter_key(r, ctx_keys[k]);
        err_at(r, false, "drop the flag, or compile the policy again from its grant files",
               "compiled policy was frozen with %s '%s', but --%s is '%s'", ctx_keys[k],
               c->str[k] ? c->str[k] : "(unset)", ctx_keys[k], mine ? mine : "(unset)");
        leave(r);
    }
    for (int i = 0; i < GK_XDG_COUNT; i++) {
        if (!(m & GK_CTX_BIT_XDG(i)) || gk_str_eq(ctx->xdg[i], c->xdg[i]))
            continue;
        enter_key(r, "xdg");
        enter_key(r, gk_xdg_names[i]);
        err_at(r, false, "drop the flag, or compile the policy again from its grant files",
               "compiled policy was frozen with xdg:%s '%s', but --xdg %s is '%s'", gk_xdg_names[i],
               c->xdg[i] ? c->xdg[i] : "(unset)", gk_xdg_names[i],
               ctx->xdg[i] ? ctx->xdg[i] : "(unset)");
        leave(r);
        leave(r);
    }
    if ((m & GK_CTX_BIT_TARGET) && c->target) {
        bool my_host = ctx->target == GRANT_TARGET_HOST;
        const char *my_name = gk_target_name(ctx);
        if (my_host != c->host || strcmp(my_name, c->target) != 0) {
            gk_autofree char *theirs = target_display(c->host, c->target, my_host);
            gk_autofree char *mine = target_display(my_host, my_name, c->host);
            enter_key(r, c->host ? "host" : "target");
            err_at(r, false, "drop the flag, or compile the policy again from its grant files",
                   "compiled policy was frozen with target '%s', but --target is '%s'", theirs,
                   mine);
            leave(r);
        }
    }
    if ((m & GK_CTX_BIT_IMPLICIT) && ctx->implicit != c->implicit) {
        enter_key(r, "implicit");
        if (c->implicit)
            err_at(r, false, "drop --no-implicit, or compile the policy again with it",
                   "compiled policy was frozen with implicit grants, but --no-implicit is given");
        else
            err_at(r, false, "compile the policy again without --no-implicit",
                   "compiled policy was frozen with --no-implicit, but implicit grants are asked for");
        leave(r);
    }
    leave(r);
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = v ? gk_strdup(v) : NULL;
}

static void apply_context(grant_context *dst, const ir_context *c)
{
    /* host:true means the paths were canonicalised on the machine that
     * compiled; if that was another OS, the closest reading here is the
     * offline target of that OS. */
    if (c->host && strcmp(c->target, host_os_name()) == 0)
        dst->target = GRANT_TARGET_HOST;
    else if (strcmp(c->target, "linux") == 0)
        dst->target = GRANT_TARGET_LINUX;
    else if (strcmp(c->target, "macos") == 0)
        dst->target = GRANT_TARGET_MACOS;
    else
        dst->target = GRANT_TARGET_WINDOWS;
    set_str(&dst->home, c->str[GRANT_CTX_HOME]);
    set_str(&dst->user, c->str[GRANT_CTX_USER]);
    set_str(&dst->cwd, c->str[GRANT_CTX_CWD]);
    set_str(&dst->tempdir, c->str[GRANT_CTX_TEMPDIR]);
    set_str(&dst->path, c->str[GRANT_CTX_PATH]);
    for (int i = 0; i < GK_XDG_COUNT; i++)
        set_str(&dst->xdg[i], c->xdg[i]);
    dst->implicit = c->implicit;
}

/* jansson reports the byte offset just past the offending token and names
 * it ("... near 'tok'"): point at the token itself when we can. */
static gk_loc parse_error_loc(gk_source *src, const json_error_t *e)
{
    size_t pos = e->position < 0 ? 0 : (size_t)e->position;
    if (pos > src->len)
        pos = src->len;
    gk_loc loc = {src, (uint32_t)pos, (uint32_t)pos};
    const char *near = strstr(e->text, " near '");
    size_t tl = strlen(e->text);
    if (near && tl >= 2 && e->text[tl - 1] == '\'' && tl < JSON_ERROR_TEXT_LENGTH - 2) {
        const char *tok = near + 7;
        size_t n = (size_t)(e->text + tl - 1 - tok);
        if (n > 0 && n <= pos && memcmp(src->text + pos - n, tok, n) == 0) {
            loc.start = (uint32_t)(pos - n);
            loc.end = (uint32_t)pos;
        }
    }
    if (loc.start == loc.end && loc.end < src->len)
        loc.end = loc.start + 1;
    return loc;
}

/* The document as JSON, or NULL with the parse error as a diagnostic. */
static json_t *parse_document(gk_source *src, grant_diags *diags)
{
    json_error_t je;
    json_t *root = json_loadb(src->text, src->len, JSON_REJECT_DUPLICATES, &je);
    if (root)
        return root;
    gk_loc loc = parse_error_loc(src, &je);
    if (json_error_code(&je) == json_error_duplicate_key) {
        /* The token is the key as written, quotes included. */
        gk_autofree char *key = gk_strndup(src->text + loc.start, loc.end - loc.start);
        size_t kl = strlen(key);
        if (kl >= 2 && key[0] == '"' && key[kl - 1] == '"')
            gk_diag_add(diags, GK_ERROR, loc, "each key may appear once per object",
                        "duplicate key '%.*s'", (int)(kl - 2), key + 1);
        else
            gk_diag_add(diags, GK_ERROR, loc, NULL, "duplicate key %s", key);
    } else {
        gk_diag_add(diags, GK_ERROR, loc, NULL, "invalid JSON: %s", je.text);
    }
    return NULL;
}

/* Version and kind first: a document of another version or kind is not
 * worth a list of unknown keys. */
static bool read_header(ir_reader *r, json_t *root)
{
    json_t *v = json_object_get(root, "grantkit");
    enter_key(r, "grantkit");
    if (!v) {
        leave(r);
        err_at(r, false, "is this a compiled policy? ('grantc compile' writes one)",
               "missing key 'grantkit'");
        return false;
    }
    if (!want(r, v, json_is_integer(v), "an integer")) {
        leave(r);
        return false;
    }
    if (json_integer_value(v) != GRANTKIT_IR_VERSION) {
        gk_autofree char *hint = gk_printf("this grantkit reads version %d; compile the policy again",
                                           GRANTKIT_IR_VERSION);
        err_at(r, false, hint, "unsupported IR version %" JSON_INTEGER_FORMAT,
               json_integer_value(v));
        leave(r);
        return false;
    }
    leave(r);
    v = json_object_get(root, "kind");
    enter_key(r, "kind");
    if (v && WANT_STRING(r, v) && strcmp(json_string_value(v), "policy") != 0) {
        err_at(r, false, "expected 'policy'", "unsupported kind '%s'", json_string_value(v));
        leave(r);
        return false;
    }
    leave(r);
    return r->errors == 0;
}

/* The one derived fact that cannot be derived again elsewhere: where the
 * sources were on the compiling host. */
static void read_protect(json_t *root, grant_policy *p)
{
    json_t *prot = json_object_get(json_object_get(root, "projection"), "protect");
    size_t i;
    json_t *e;
    if (json_is_array(prot))
        json_array_foreach(prot, i, e) if (json_is_string(e))
            gk_strvec_push(&p->protect, json_string_value(e));
    gk_strvec_sort_unique(&p->protect);
}

/* The policy a well-headed document describes, errors counted in r. */
static grant_policy *read_policy(ir_reader *r, json_t *root, const grant_context *ctx)
{
    ir_context c = {0};
    enter_key(r, "context");
    bool ctx_ok = read_context(r, json_object_get(root, "context"), &c);
    leave(r);
    if (ctx_ok)
        check_agreement(r, ctx, &c);

    grant_policy *p = gk_policy_new(ctx);
    if (ctx_ok) {
        apply_context(p->ctx, &c);
        /* Reals canonicalised on a host of another OS cannot be checked
         * here; every other IR's can. */
        if (!c.host || p->ctx->target == GRANT_TARGET_HOST)
            r->fctx = p->ctx;
    }

    json_t *layers = json_object_get(root, "layers");
    enter_key(r, "layers");
    if (WANT_ARRAY(r, layers)) {
        size_t i;
        json_t *e;
        json_array_foreach(layers, i, e) {
            enter_idx(r, i);
            gk_layer *f = read_layer(r, e);
            if (f)
                gk_stack_push_unique(&p->stack, f);
            leave(r);
        }
    }
    leave(r);

    enter_key(r, "projection");
    read_projection(r, json_object_get(root, "projection"));
    leave(r);
    read_protect(root, p);

    enter_key(r, "sources");
    read_sources(r, json_object_get(root, "sources"), p);
    leave(r);
    return p;
}

grant_policy *gk_ir_read(gk_source *src, const grant_context *ctx, grant_diags *diags)
{
    json_t *root = parse_document(src, diags);
    if (!root)
        return NULL;
    /* No caller context: nothing was set explicitly, the IR's rules. */
    grant_context *own_ctx = NULL;
    if (!ctx) {
        grant_context_new(&own_ctx);
        own_ctx->explicit_mask = 0;
        ctx = own_ctx;
    }
    ir_reader rd = {.src = src, .diags = diags};
    ir_reader *r = &rd;
    grant_policy *p = NULL;
    if (WANT_OBJECT(r, root) && read_header(r, root) &&
        CHECK_KEYS(r, root, "context", "grantkit", "kind", "layers", "projection", "sources"))
        p = read_policy(r, root, ctx);
    json_decref(root);
    grant_context_free(own_ctx);
    gk_resolve_cache_free(&r->cache);
    if (r->errors) {
        grant_policy_free(p);
        return NULL;
    }
    return p;
}
