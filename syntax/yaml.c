/* yaml_load.c - the YAML surface (grant-language.md §3) into a gk_file_ast.
 *
 * libyaml's event API feeds a small node tree of our own (the document API
 * would resolve aliases silently, and we must reject them). The tree is then
 * walked against the grant schema. Strings are always the scalar's own text:
 * YAML's core schema is applied only where the schema takes booleans (net,
 * audit, the gate flags), so `true: allow` names the command `true` and a
 * bare `~` is home, not null.
 *
 * libyaml marks count code points (and we force UTF-8 so there is no BOM
 * skipping or UTF-16 transcoding); positions are mapped back to byte
 * offsets before they become gk_locs.
 */
#include "syntax/syntax.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Deeper nesting than any grant needs; bounds our recursion on hostile input. */
#define YL_MAX_DEPTH 64

typedef enum yl_type { YL_SCALAR, YL_SEQ, YL_MAP } yl_type;

typedef struct yl_node {
    yl_type type;
    uint32_t start, end;     /* byte offsets */
    char *value;             /* scalar text (may hold NULs: vlen counts) */
    size_t vlen;
    bool plain;              /* plain (unquoted, not block) scalar */
    bool quoted;             /* single- or double-quoted scalar */
    bool flow;               /* flow collection */
    bool bad;                /* an alias: already reported, skip it */
    const struct yl_node *first; /* a map key: the earlier key it repeats, else NULL */
    struct yl_node **kids;   /* seq items; map: key0, value0, key1, value1... */
    size_t n, cap;
} yl_node;

typedef struct yl_ctx {
    gk_source *src;
    grant_diags *diags;
    yaml_parser_t parser;
    uint32_t *cp2byte;       /* code point index -> byte offset; NULL for ASCII */
    size_t ncp;
    gk_file_ast *ast;
    size_t exec_cap, fs_cap, inc_cap, ext_cap, net_cap;
    bool stop;               /* a fatal error: stop reading events */
    bool syntax_error;       /* libyaml failed: the tree is partial */
} yl_ctx;

/* ---- positions ------------------------------------------------------------ */

static void build_cp_map(yl_ctx *c)
{
    const unsigned char *t = (const unsigned char *)c->src->text;
    size_t len = c->src->len;
    bool ascii = true;
    for (size_t i = 0; i < len; i++)
        if (t[i] >= 0x80) {
            ascii = false;
            break;
        }
    if (ascii)
        return;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if ((t[i] & 0xC0) != 0x80)
            n++;
    c->cp2byte = gk_malloc((n + 1) * sizeof(uint32_t));
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if ((t[i] & 0xC0) != 0x80)
            c->cp2byte[k++] = (uint32_t)i;
    c->cp2byte[k] = (uint32_t)len;
    c->ncp = n;
}

static uint32_t byte_off(const yl_ctx *c, size_t cp)
{
    if (!c->cp2byte)
        return cp > c->src->len ? (uint32_t)c->src->len : (uint32_t)cp;
    if (cp > c->ncp)
        cp = c->ncp;
    return c->cp2byte[cp];
}

static gk_loc loc_of(const yl_ctx *c, uint32_t start, uint32_t end)
{
    gk_loc l = {c->src, start, end < start ? start : end};
    return l;
}

static gk_loc node_loc(const yl_ctx *c, const yl_node *n)
{
    return loc_of(c, n->start, n->end);
}

/* A key and its value as one range (the value may sit on later lines; the
 * renderer only underlines the first line). */
static gk_loc pair_loc(const yl_ctx *c, const yl_node *k, const yl_node *v)
{
    uint32_t end = v && v->end > k->end ? v->end : k->end;
    return loc_of(c, k->start, end);
}

/* Where to point at a value: an empty value has no text of its own, so
 * point at its key. */
static gk_loc value_loc(const yl_ctx *c, const yl_node *k, const yl_node *v)
{
    if (v->type == YL_SCALAR && v->plain && v->vlen == 0)
        return node_loc(c, k);
    return node_loc(c, v);
}

/* ---- the node tree -------------------------------------------------------- */

static void node_free(yl_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++)
        node_free(n->kids[i]);
    free(n->kids);
    free(n->value);
    free(n);
}

static yl_node *node_new(yl_ctx *c, yl_type t, const yaml_event_t *ev)
{
    yl_node *n = gk_calloc(1, sizeof(*n));
    n->type = t;
    n->start = byte_off(c, ev->start_mark.index);
    n->end = byte_off(c, ev->end_mark.index);
    return n;
}

static void report_parser_error(yl_ctx *c);

static bool next_event(yl_ctx *c, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&c->parser, ev)) {
        report_parser_error(c);
        c->stop = true;
        c->syntax_error = true;
        return false;
    }
    return true;
}

static void reject_anchor_tag(yl_ctx *c, const yaml_event_t *ev, const yaml_char_t *anchor,
                              const yaml_char_t *tag, bool implicit_tag)
{
    gk_loc l = loc_of(c, byte_off(c, ev->start_mark.index), byte_off(c, ev->end_mark.index));
    if (anchor)
        gk_diag_add(c->diags, GK_ERROR, l, "repeat the value where it is needed",
                    "anchors and aliases are not allowed");
    else if (tag && !implicit_tag)
        gk_diag_add(c->diags, GK_ERROR, l, "remove the tag; the schema decides each value's type",
                    "tags are not allowed");
}

/* Read one node whose first event is ev (consumed by the caller). */
static yl_node *read_node(yl_ctx *c, yaml_event_t *ev, int depth)
{
    yl_node *n = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT: {
        n = node_new(c, YL_SCALAR, ev);
        n->value = gk_strdup("");
        n->plain = true;
        n->bad = true;
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, n), "repeat the value where it is needed",
                    "anchors and aliases are not allowed");
        return n;
    }
    case YAML_SCALAR_EVENT: {
        reject_anchor_tag(c, ev, ev->data.scalar.anchor, ev->data.scalar.tag,
                          ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit);
        n = node_new(c, YL_SCALAR, ev);
        n->vlen = ev->data.scalar.length;
        n->value = gk_strndup((const char *)ev->data.scalar.value, n->vlen);
        n->value[n->vlen] = '\0';
        yaml_scalar_style_t st = ev->data.scalar.style;
        n->plain = st == YAML_PLAIN_SCALAR_STYLE || st == YAML_ANY_SCALAR_STYLE;
        n->quoted = st == YAML_SINGLE_QUOTED_SCALAR_STYLE || st == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        return n;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
        if (seq)
            reject_anchor_tag(c, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
                              ev->data.sequence_start.implicit);
        else
            reject_anchor_tag(c, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
                              ev->data.mapping_start.implicit);
        n = node_new(c, seq ? YL_SEQ : YL_MAP, ev);
        n->flow = seq ? ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                      : ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
        if (depth >= YL_MAX_DEPTH) {
            gk_diag_add(c->diags, GK_ERROR, node_loc(c, n), NULL, "nesting is too deep");
            c->stop = true;
            c->syntax_error = true;
            return n;
        }
        yaml_event_type_t end_type = seq ? YAML_SEQUENCE_END_EVENT : YAML_MAPPING_END_EVENT;
        for (;;) {
            yaml_event_t e;
            if (!next_event(c, &e))
                return n;
            if (e.type == end_type) {
                n->end = byte_off(c, e.end_mark.index);
                yaml_event_delete(&e);
                return n;
            }
            yl_node *kid = read_node(c, &e, depth + 1);
            yaml_event_delete(&e);
            if (kid)
                GK_VEC_PUSH(n->kids, n->n, n->cap, kid);
            if (c->stop)
                return n;
        }
    }
    default:
        return NULL;
    }
}

/* The whole stream: at most one document, whose root we return (NULL for an
 * empty stream). */
static yl_node *read_stream(yl_ctx *c)
{
    yl_node *root = NULL;
    int docs = 0;
    while (!c->stop) {
        yaml_event_t e;
        if (!next_event(c, &e))
            break;
        yaml_event_type_t t = e.type;
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            gk_loc l = loc_of(c, byte_off(c, e.start_mark.index), byte_off(c, e.end_mark.index));
            if (l.end == l.start)
                l.end = l.start + 1 <= c->src->len ? l.start + 1 : l.start;
            gk_diag_add(c->diags, GK_ERROR, l, "put each grant in its own file",
                        "more than one document in a grant file");
            c->stop = true;
        } else if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT ||
                   t == YAML_MAPPING_START_EVENT || t == YAML_ALIAS_EVENT) {
            root = read_node(c, &e, 0);
        }
        yaml_event_delete(&e);
        if (t == YAML_STREAM_END_EVENT)
            break;
    }
    return root;
}

/* ---- libyaml's own errors ------------------------------------------------- */

/* The plain-scalar run that ends just before byte offset colon. */
static char *word_before(const yl_ctx *c, uint32_t colon)
{
    const char *t = c->src->text;
    uint32_t s = colon;
    while (s > 0 && !strchr(" \t\r\n[]{},", t[s - 1]))
        s--;
    return gk_strndup(t + s, colon - s);
}

static void report_parser_error(yl_ctx *c)
{
    yaml_parser_t *p = &c->parser;
    const char *problem = p->problem ? p->problem : "invalid YAML";
    uint32_t at;
    if (p->error == YAML_READER_ERROR)
        at = p->problem_offset > c->src->len ? (uint32_t)c->src->len : (uint32_t)p->problem_offset;
    else
        at = byte_off(c, p->problem_mark.index);
    gk_loc l = loc_of(c, at, at);
    const char *text = c->src->text;
    size_t len = c->src->len;
    bool colon = at < len && text[at] == ':';
    bool colon_ends = colon && (at + 1 >= len || strchr(" \t\r\n,]}", text[at + 1]));

    /* `[cwd:]` and `write: cwd:` - a plain scalar ending in ':' */
    if (colon_ends && (gk_str_eq(problem, "found unexpected ':'") ||
                       gk_str_eq(problem, "mapping values are not allowed in this context"))) {
        gk_autofree char *w = word_before(c, at);
        if (*w) {
            gk_autofree char *hint = gk_printf("quote paths ending in ':' (write \"%s:\")", w);
            gk_loc wl = loc_of(c, at - (uint32_t)strlen(w), at + 1);
            gk_diag_add(c->diags, GK_ERROR, wl, hint, "unquoted '%s:' ends in ':'", w);
            return;
        }
    }
    const char *hint = NULL;
    if (at < len && text[at] == '\t' &&
        gk_str_eq(problem, "found character that cannot start any token"))
        hint = "YAML does not allow tabs for indentation; use spaces";
    else if (gk_str_eq(problem, "mapping values are not allowed in this context"))
        hint = "quote values containing ': '";
    else if (gk_str_eq(problem, "found unexpected ':'"))
        hint = "quote strings containing ':'";
    if (at < len)
        l.end = at + 1;
    while (l.end < len && (text[l.end] & 0xC0) == 0x80)
        l.end++;
    if (!p->context) {
        gk_diag_add(c->diags, GK_ERROR, l, hint, "%s", problem);
        return;
    }
    gk_diag *dg = gk_diag_add(c->diags, GK_ERROR, l, hint, "%s %s", problem, p->context);
    /* "while parsing a flow sequence": show where that sequence began. */
    uint32_t ctx_at = byte_off(c, p->context_mark.index);
    const char *what = p->context;
    if (gk_has_prefix(what, "while parsing a "))
        what += strlen("while parsing a ");
    else if (gk_has_prefix(what, "while scanning a "))
        what += strlen("while scanning a ");
    else
        what = NULL;
    if (what && p->error != YAML_READER_ERROR && ctx_at != at) {
        gk_loc cl = loc_of(c, ctx_at, ctx_at < len ? ctx_at + 1 : ctx_at);
        gk_diag_relate(dg, cl, "the %s starts here", what);
    }
}

/* ---- schema helpers ------------------------------------------------------- */

static bool is_null(const yl_node *n)
{
    if (!n)
        return true;
    if (n->type != YL_SCALAR || !n->plain)
        return false;
    return n->vlen == 0 || gk_str_eq(n->value, "~") || gk_str_eq(n->value, "null") ||
           gk_str_eq(n->value, "Null") || gk_str_eq(n->value, "NULL");
}

static bool is_scalar(const yl_node *n)
{
    return n && n->type == YL_SCALAR;
}

/* A string value: the scalar's text as written, valid UTF-8 and NUL-free. */
static bool take_string(yl_ctx *c, const yl_node *n, gk_word *w)
{
    if (strlen(n->value) != n->vlen) {
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, n), NULL,
                    "strings must not contain NUL characters");
        return false;
    }
    if (!gk_utf8_valid(n->value, n->vlen)) {
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, n), NULL, "string is not valid UTF-8");
        return false;
    }
    w->text = gk_strdup(n->value);
    w->loc = node_loc(c, n);
    w->quoted = !n->plain;
    return true;
}

/* A one-pair mapping {X: } where a string was expected is what libyaml makes
 * of a block item `- cwd:`: say to quote it. Returns true if reported. */
static bool report_colon_mapping(yl_ctx *c, const yl_node *n, const char *what)
{
    if (n->type != YL_MAP || n->n != 2 || !is_scalar(n->kids[0]) || !n->kids[0]->plain ||
        !is_null(n->kids[1]) || n->kids[1]->vlen != 0)
        return false;
    const yl_node *k = n->kids[0];
    gk_autofree char *hint = gk_printf("quote %s ending in ':' (write \"%s:\")", what, k->value);
    uint32_t end = k->end;
    if (end < c->src->len && c->src->text[end] == ':')
        end++;
    gk_diag_add(c->diags, GK_ERROR, loc_of(c, k->start, end), hint, "unquoted '%s:' ends in ':'",
                k->value);
    return true;
}

/* allow|deny, and for the flags that take booleans also true|false. */
static gk_verdict verdict_of(const yl_node *n, bool booleans)
{
    if (!is_scalar(n))
        return GK_UNSET;
    const char *v = n->value;
    if (gk_str_eq(v, "allow"))
        return GK_ALLOW;
    if (gk_str_eq(v, "deny"))
        return GK_DENY;
    if (booleans) {
        if (gk_str_eq(v, "true") || gk_str_eq(v, "True") || gk_str_eq(v, "TRUE"))
            return GK_ALLOW;
        if (gk_str_eq(v, "false") || gk_str_eq(v, "False") || gk_str_eq(v, "FALSE"))
            return GK_DENY;
    }
    return GK_UNSET;
}

static const char *const top_keys[] = {"grant",  "include", "extend", "exec",   "exec-match",
                                       "fs",     "net",     "shell",  "editor", "audit"};
static const char *const fs_keys[] = {"read", "write", "readonly", "deny"};
static const char *const net_keys[] = {"allow", "deny"};
static const char *const shell_keys[] = {"chdir"};
static const char *const editor_keys[] = {"read", "write", "tui"};

static void report_unknown_key(yl_ctx *c, const yl_node *k, const char *section,
                               const char *const *keys, size_t nkeys)
{
    const char *near = gk_nearest(k->value, keys, nkeys);
    gk_autofree char *hint = NULL;
    if (near) {
        hint = gk_printf("did you mean '%s'?", near);
    } else {
        gk_buf b = {0};
        gk_buf_puts(&b, "valid keys: ");
        for (size_t i = 0; i < nkeys; i++)
            gk_buf_printf(&b, "%s%s", i ? ", " : "", keys[i]);
        hint = gk_buf_steal(&b, NULL);
    }
    if (section)
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), hint, "unknown key '%s' in '%s'",
                    k->value, section);
    else
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), hint, "unknown key '%s'", k->value);
}

static int key_cmp(const void *a, const void *b)
{
    const yl_node *x = *(const yl_node *const *)a, *y = *(const yl_node *const *)b;
    if (x->vlen != y->vlen)
        return x->vlen < y->vlen ? -1 : 1;
    int c = memcmp(x->value, y->value, x->vlen);
    if (c)
        return c;
    return x->start < y->start ? -1 : x->start > y->start; /* earlier first */
}

/* Checks keys are strings and unique, marking each repeat with the key it
 * repeats (sorted, so 40,000 keys cost no more than sorting them). Returns
 * false if the mapping is too broken to walk (a non-scalar key). */
static bool check_keys(yl_ctx *c, const yl_node *map, const char *section)
{
    bool ok = true;
    yl_node **keys = gk_calloc(map->n / 2 + 1, sizeof(*keys));
    size_t nkeys = 0;
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        yl_node *k = map->kids[i];
        k->first = NULL;
        if (is_scalar(k)) {
            keys[nkeys++] = k;
            continue;
        }
        if (section)
            gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), NULL,
                        "keys of '%s' must be strings", section);
        else
            gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), NULL, "keys must be strings");
        ok = false;
    }
    qsort(keys, nkeys, sizeof(*keys), key_cmp);
    for (size_t i = 1; i < nkeys; i++)
        if (keys[i]->vlen == keys[i - 1]->vlen &&
            memcmp(keys[i]->value, keys[i - 1]->value, keys[i]->vlen) == 0)
            keys[i]->first = keys[i - 1]->first ? keys[i - 1]->first : keys[i - 1];
    free(keys);
    /* Reported in the order of the file. */
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const yl_node *k = map->kids[i];
        if (!k->first)
            continue;
        gk_diag *dg;
        if (section)
            dg = gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), NULL,
                             "duplicate key '%s' in '%s'", k->value, section);
        else
            dg = gk_diag_add(c->diags, GK_ERROR, node_loc(c, k), NULL, "duplicate key '%s'",
                             k->value);
        gk_diag_relate(dg, node_loc(c, k->first), "first defined here");
    }
    return ok;
}

/* Whether key k (at index i of map) repeats an earlier key: the duplicate
 * was reported by check_keys and is not loaded again. */
static bool is_repeat(const yl_node *map, size_t i)
{
    return map->kids[i]->first != NULL;
}

/* A section that must be a mapping. */
static bool want_map(yl_ctx *c, const yl_node *k, const yl_node *v, const char *what)
{
    if (v && v->type == YL_MAP)
        return true;
    if (is_null(v))
        gk_diag_add(c->diags, GK_ERROR, pair_loc(c, k, v), NULL,
                    "'%s' needs a mapping; write '%s: {}' for an empty section", k->value,
                    k->value);
    else
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, v), NULL, "'%s' must be a mapping of %s",
                    k->value, what);
    return false;
}

/* ---- sections ------------------------------------------------------------- */

static void load_list(yl_ctx *c, const yl_node *k, const yl_node *v, gk_word **arr, size_t *n,
                      size_t *cap)
{
    if (is_null(v)) {
        gk_diag_add(c->diags, GK_ERROR, pair_loc(c, k, v), NULL,
                    "'%s' needs a list; write '%s: []' for none", k->value, k->value);
        return;
    }
    if (v->type != YL_SEQ) {
        gk_diag_add(c->diags, GK_ERROR, node_loc(c, v), NULL,
                    "'%s' must be a list of file names", k->value);
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        const yl_node *it = v->kids[i];
        if (it->bad)
            continue;
        if (!is_scalar(it)) {
            if (!report_colon_mapping(c, it, "file names"))
                gk_diag_add(c->diags, GK_ERROR, node_loc(c, it), NULL,
                            "'%s' must be a list of file names", k->value);
            continue;
        }
        gk_word w = {0};
        if (take_string(c, it, &w))
            GK_VEC_PUSH(*arr, *n, *cap, w);
    }
}

static void push_exec_rule(yl_ctx *c, gk_exec_rule r)
{
    gk_file_ast *a = c->ast;
    GK_VEC_PUSH(a->exec, a->nexec, c->exec_cap, r);
}

static void note_exec(yl_ctx *c, const yl_node *k)
{
    if (!c->ast->has_exec) {
        c->ast->has_exec = true;
        c->ast->exec_loc = node_loc(c, k);
    }
}

static void load_exec(yl_ctx *c, const yl_node *sk, const yl_node *v)
{
    if (!want_map(c, sk, v, "commands to allow, deny or a list of subcommands"))
        return;
    note_exec(c, sk);
    if (!check_keys(c, v, "exec"))
        return;
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yl_node *k = v->kids[i], *val = v->kids[i + 1];
        if (k->bad || val->bad)
            continue;
        if (is_repeat(v, i))
            continue;
        gk_exec_rule r = {0};
        r.loc = pair_loc(c, k, val);
        if (is_scalar(val) && !(val->plain && val->vlen == 0)) {
            r.verdict = verdict_of(val, false);
        } else if (val->type == YL_SEQ) {
            r.verdict = GK_ALLOW;
            r.has_subcmds = true;
            size_t cap = 0;
            bool bad = false;
            for (size_t j = 0; j < val->n; j++) {
                const yl_node *it = val->kids[j];
                if (it->bad) {
                    bad = true;
                    continue;
                }
                if (!is_scalar(it)) {
                    if (!report_colon_mapping(c, it, "subcommands"))
                        gk_diag_add(c->diags, GK_ERROR, node_loc(c, it), NULL,
                                    "subcommands of 'exec.%s' must be strings", k->value);
                    bad = true;
                    continue;
                }
                gk_word w = {0};
                if (take_string(c, it, &w))
                    GK_VEC_PUSH(r.subcmds, r.nsubcmds, cap, w);
                else
                    bad = true;
            }
            if (bad) {
                for (size_t j = 0; j < r.nsubcmds; j++)
                    gk_word_free(&r.subcmds[j]);
                free(r.subcmds);
                continue;
            }
        }
        if (r.verdict == GK_UNSET) {
            gk_diag_add(c->diags, GK_ERROR, value_loc(c, k, val), NULL,
                        "'exec.%s' must be allow, deny or a list of subcommands", k->value);
            continue;
        }
        gk_word w = {0};
        if (!take_string(c, k, &w)) {
            for (size_t j = 0; j < r.nsubcmds; j++)
                gk_word_free(&r.subcmds[j]);
            free(r.subcmds);
            continue;
        }
        r.targets = gk_calloc(1, sizeof(gk_target));
        r.ntargets = 1;
        r.targets[0].kind = gk_classify_target(w.text);
        r.targets[0].word = w;
        push_exec_rule(c, r);
    }
}

static void load_exec_match(yl_ctx *c, const yl_node *sk, const yl_node *v)
{
    if (!want_map(c, sk, v, "patterns to deny"))
        return;
    note_exec(c, sk);
    if (!check_keys(c, v, "exec-match"))
        return;
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yl_node *k = v->kids[i], *val = v->kids[i + 1];
        if (k->bad || val->bad)
            continue;
        if (is_repeat(v, i))
            continue;
        gk_verdict vd = verdict_of(val, false);
        if (vd == GK_ALLOW) {
            gk_diag_add(c->diags, GK_ERROR, node_loc(c, val),
                        "patterns are vetoes; list allowed commands under 'exec'",
                        "'exec-match' patterns can only deny");
            continue;
        }
        if (vd != GK_DENY) {
            gk_diag_add(c->diags, GK_ERROR, value_loc(c, k, val), NULL,
                        "'exec-match.%s' must be deny", k->value);
            continue;
        }
        gk_exec_rule r = {0};
        r.verdict = GK_DENY;
        r.loc = pair_loc(c, k, val);
        gk_word w = {0};
        if (!take_string(c, k, &w))
            continue;
        r.targets = gk_calloc(1, sizeof(gk_target));
        r.ntargets = 1;
        r.targets[0].kind = GK_T_MATCH;
        r.targets[0].word = w;
        push_exec_rule(c, r);
    }
}

/* The scalars of list val (the value of SECTION.KEY) as words; an item that
 * is no scalar is reported as not being one of WHAT. */
static void take_words(yl_ctx *c, const yl_node *val, const char *section, const char *key,
                       const char *what, gk_word **words, size_t *n)
{
    size_t cap = 0;
    for (size_t j = 0; j < val->n; j++) {
        const yl_node *it = val->kids[j];
        if (it->bad)
            continue;
        if (!is_scalar(it)) {
            if (!report_colon_mapping(c, it, what))
                gk_diag_add(c->diags, GK_ERROR, node_loc(c, it), NULL,
                            "'%s.%s' must be a list of %s", section, key, what);
            continue;
        }
        gk_word w = {0};
        if (take_string(c, it, &w))
            GK_VEC_PUSH(*words, *n, cap, w);
    }
}

/* Pair i of map v, a SECTION key whose value must be a list of WHAT: its
 * index in keys, or -1 when it is reported (unknown, repeated, not a list)
 * or already was (bad). */
static long list_key(yl_ctx *c, const yl_node *v, size_t i, const char *section,
                     const char *const *keys, size_t nkeys, const char *what, const char *hint)
{
    const yl_node *k = v->kids[i], *val = v->kids[i + 1];
    if (k->bad || val->bad)
        return -1;
    size_t kind;
    for (kind = 0; kind < nkeys; kind++)
        if (gk_str_eq(k->value, keys[kind]))
            break;
    if (kind == nkeys) {
        report_unknown_key(c, k, section, keys, nkeys);
        return -1;
    }
    if (is_repeat(v, i))
        return -1;
    if (val->type != YL_SEQ) {
        gk_diag_add(c->diags, GK_ERROR, value_loc(c, k, val), hint,
                    "'%s.%s' must be a list of %s", section, k->value, what);
        return -1;
    }
    return (long)kind;
}

static void load_fs(yl_ctx *c, const yl_node *sk, const yl_node *v)
{
    if (!want_map(c, sk, v, "read, write, readonly and deny lists"))
        return;
    gk_file_ast *a = c->ast;
    a->has_fs = true;
    a->fs_loc = node_loc(c, sk);
    if (!check_keys(c, v, "fs"))
        return;
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yl_node *k = v->kids[i], *val = v->kids[i + 1];
        long kind = list_key(c, v, i, "fs", fs_keys, 4, "paths", NULL);
        if (kind < 0)
            continue;
        gk_fs_rule r = {0};
        r.kind = (gk_fs_kind)kind;
        r.loc = pair_loc(c, k, val);
        take_words(c, val, "fs", k->value, "paths", &r.paths, &r.npaths);
        /* The grant language cannot write an empty fs rule; an empty list is
         * the same as leaving the key out. */
        if (r.npaths == 0) {
            free(r.paths);
            continue;
        }
        GK_VEC_PUSH(a->fs, a->nfs, c->fs_cap, r);
    }
}

static void load_setting(yl_ctx *c, const yl_node *k, const yl_node *v, const char *name,
                         gk_setting *out)
{
    gk_verdict vd = verdict_of(v, true);
    if (vd == GK_UNSET) {
        gk_diag_add(c->diags, GK_ERROR, value_loc(c, k, v), NULL,
                    "'%s' must be allow, deny, true or false", name);
        return;
    }
    out->value = vd;
    out->loc = pair_loc(c, k, v);
}

/* net: allow | deny | true | false, or {allow: [DEST...], deny: [DEST...]}
 * (network.md §1); the destinations are read by validation. */
static void load_net(yl_ctx *c, const yl_node *sk, const yl_node *v)
{
    gk_file_ast *a = c->ast;
    if (!v || v->type != YL_MAP) {
        load_setting(c, sk, v, "net", &a->net);
        return;
    }
    a->has_net_list = true;
    a->net_list_loc = node_loc(c, sk);
    if (!check_keys(c, v, "net"))
        return;
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yl_node *k = v->kids[i], *val = v->kids[i + 1];
        long kind = list_key(c, v, i, "net", net_keys, 2, "destinations",
                             "write net: {allow: [github.com, \"*.npmjs.org:443\"]}");
        if (kind < 0)
            continue;
        gk_net_rule r = {0};
        r.verdict = kind == 0 ? GK_ALLOW : GK_DENY;
        r.loc = pair_loc(c, k, val);
        take_words(c, val, "net", k->value, "destinations", &r.dests, &r.ndests);
        if (r.ndests == 0) {
            free(r.dests);
            continue;
        }
        GK_VEC_PUSH(a->net_rules, a->nnet_rules, c->net_cap, r);
    }
}

static void load_gates(yl_ctx *c, const yl_node *sk, const yl_node *v, const char *section,
                       const char *const *keys, size_t nkeys, gk_setting *const *slots)
{
    if (!want_map(c, sk, v, nkeys == 1 ? "flags like {chdir: allow}"
                                        : "flags like {read: allow, write: deny}"))
        return;
    if (!check_keys(c, v, section))
        return;
    for (size_t i = 0; i + 1 < v->n; i += 2) {
        const yl_node *k = v->kids[i], *val = v->kids[i + 1];
        if (k->bad || val->bad)
            continue;
        size_t j;
        for (j = 0; j < nkeys; j++)
            if (gk_str_eq(k->value, keys[j]))
                break;
        if (j == nkeys) {
            report_unknown_key(c, k, section, keys, nkeys);
            continue;
        }
        if (is_repeat(v, i))
            continue;
        gk_autofree char *name = gk_printf("%s.%s", section, keys[j]);
        load_setting(c, k, val, name, slots[j]);
    }
}

static void load_top(yl_ctx *c, const yl_node *root)
{
    gk_file_ast *a = c->ast;
    a->grant_loc = loc_of(c, root->start, root->start);
    if (!check_keys(c, root, NULL))
        return;
    for (size_t i = 0; i + 1 < root->n; i += 2) {
        const yl_node *k = root->kids[i], *v = root->kids[i + 1];
        if (k->bad || v->bad)
            continue;
        size_t which;
        for (which = 0; which < sizeof(top_keys) / sizeof(*top_keys); which++)
            if (gk_str_eq(k->value, top_keys[which]))
                break;
        if (which == sizeof(top_keys) / sizeof(*top_keys)) {
            report_unknown_key(c, k, NULL, top_keys, which);
            continue;
        }
        if (is_repeat(root, i))
            continue;
        switch (which) {
        case 0: /* grant */
            a->grant_loc = node_loc(c, k);
            if (is_null(v) && v->vlen == 0)
                break; /* anonymous */
            if (!is_scalar(v)) {
                gk_diag_add(c->diags, GK_ERROR, node_loc(c, v), NULL, "'grant' must be a name");
                break;
            }
            take_string(c, v, &a->name);
            break;
        case 1: {
            size_t n = a->nincludes;
            load_list(c, k, v, &a->includes, &n, &c->inc_cap);
            a->nincludes = n;
            break;
        }
        case 2: {
            size_t n = a->nextends;
            load_list(c, k, v, &a->extends, &n, &c->ext_cap);
            a->nextends = n;
            break;
        }
        case 3:
            load_exec(c, k, v);
            break;
        case 4:
            load_exec_match(c, k, v);
            break;
        case 5:
            load_fs(c, k, v);
            break;
        case 6:
            load_net(c, k, v);
            break;
        case 7: {
            gk_setting *slots[] = {&a->shell_chdir};
            if (v->type == YL_MAP) {
                a->has_shell = true;
                a->shell_loc = node_loc(c, k);
            }
            load_gates(c, k, v, "shell", shell_keys, 1, slots);
            break;
        }
        case 8: {
            gk_setting *slots[] = {&a->editor_read, &a->editor_write, &a->editor_tui};
            if (v->type == YL_MAP) {
                a->has_editor = true;
                a->editor_loc = node_loc(c, k);
            }
            load_gates(c, k, v, "editor", editor_keys, 3, slots);
            break;
        }
        case 9: {
            gk_verdict vd = verdict_of(v, true);
            bool boolean = is_scalar(v) && !gk_str_eq(v->value, "allow") &&
                           !gk_str_eq(v->value, "deny");
            if (vd == GK_UNSET || !boolean) {
                gk_diag_add(c->diags, GK_ERROR, value_loc(c, k, v), NULL,
                            "'audit' must be true or false");
                break;
            }
            a->audit = vd == GK_ALLOW;
            if (a->audit)
                a->audit_loc = pair_loc(c, k, v);
            break;
        }
        }
    }
}

gk_file_ast *gk_load_yaml(gk_source *src, grant_diags *diags)
{
    yl_ctx c = {0};
    c.src = src;
    c.diags = diags;
    c.ast = gk_ast_new(src, GK_SURFACE_YAML);
    build_cp_map(&c);
    if (!yaml_parser_initialize(&c.parser)) {
        gk_diag_add(diags, GK_ERROR, loc_of(&c, 0, 0), NULL, "cannot initialise the YAML parser");
        free(c.cp2byte);
        return c.ast;
    }
    /* Forced UTF-8: no UTF-16 transcoding, so marks map back onto our bytes. */
    yaml_parser_set_encoding(&c.parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)src->text, src->len);
    yl_node *root = read_stream(&c);
    yaml_parser_delete(&c.parser);

    /* After a syntax error the tree is partial: checking it would only add
     * noise. Anchors, tags and a second document leave the first whole. */
    if (!c.syntax_error) {
        if (root && root->type == YL_MAP)
            load_top(&c, root);
        else if (root && !(root->type == YL_SCALAR && root->plain && root->vlen == 0))
            gk_diag_add(diags, GK_ERROR, node_loc(&c, root), "start with 'grant: NAME'",
                        "a grant file must be a mapping of sections");
        else /* A truncated or blanked file must never widen to "no opinion". */
            gk_diag_add(diags, GK_ERROR, loc_of(&c, 0, 0), "start with 'grant: NAME'",
                        "a grant file must be a mapping of sections, and this one is empty");
    }
    node_free(root);
    free(c.cp2byte);
    return c.ast;
}
