/* sbpl_read.c - the SBPL reader: text -> datums -> rules.
 *
 * Two stages. The datum reader (sbpl_read_sx.c) is a small Scheme reader
 * with byte positions. The static evaluator (sbpl_read_eval.c) then runs
 * the profile the way libsandbox's prelude would, for the part of Scheme
 * real profiles use; this file is what the profile builds: allow/deny with
 * operations, filters and (with ...) modifiers, import, the table of
 * built-in forms, and the public entry points. Aliases follow sbpl_v1
 * (literal = path, prefix = path-prefix, regex = path-regex, from = local,
 * to = remote, no-log = no-report).
 *
 * Every filter takes several operands, any of which matches; (with-filter
 * F rule...) adds F to the rules of its body.
 *
 * Filters that only the running system can decide (extension,
 * require-entitlement, xattr, ...) become opaque: the evaluator answers
 * "undecided" when one of them matters, and only for the kinds of query it
 * can match (control-name never matches a TCP address). An unresolved
 * param or import is a warning and an unknown too. Everything else it
 * cannot evaluate is an error at its position, naming the construct (the
 * Scheme out of the subset has entries of its own, gk_sbr_form_unsupported).
 */
#include "analysis/sbpl_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- filters ------------------------------------------------------------------ */

static gk_sb_filter *new_filter(ctx *c, gk_sb_fkind k, gk_loc loc)
{
    gk_sb_filter *f = gk_calloc(1, sizeof(*f));
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->filters, s->nfilters, s->capfilters, f);
    f->kind = k;
    f->loc = loc;
    f->port = -1;
    return f;
}

static void add_kid(ctx *c, gk_sb_filter *f, gk_sb_filter *k)
{
    (void)c;
    GK_VEC_PUSH(f->kids, f->nkids, f->capkids, k);
}

static gk_sb_filter *opaque(ctx *c, gk_loc loc, const char *why)
{
    gk_sb_filter *f = new_filter(c, GK_SBF_OPAQUE, loc);
    f->str = gk_sbr_arena_str(c, why);
    return f;
}

static val filter_val(gk_sb_filter *f)
{
    val v = gk_sbr_none();
    v.k = V_FILTER;
    v.f = f;
    v.loc = f->loc;
    return v;
}

/* A filter from an argument value (an unresolved param becomes opaque). */
static gk_sb_filter *need_filter(ctx *c, const val *v, const sx *x, const char *what)
{
    if (v->k == V_FILTER)
        return v->f;
    if (v->k == V_UNRES) {
        gk_sbr_record_param(c, v);
        char *why = gk_printf("param \"%s\" has no value", v->s);
        gk_sb_filter *f = opaque(c, v->loc, why);
        free(why);
        return f;
    }
    if (!c->failed || v->k != V_NONE)
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "%s needs a filter here", what);
    return NULL;
}

static const char *const modifiers[] = {
    "message", "report", "no-report", "no-log", "send-signal", "deprecated", "rootless",
    "user-approval", "no-approval-prompt", "telemetry", "no-times", "authority",
    "no-sandbox", "no-callout", "grant", "partial-symbolication", "entitlement",
};

/* One string operand of a filter (kind k), a path when absolute: an
 * unresolved param makes an opaque filter, a relative path an error. */
static gk_sb_filter *string_filter1(ctx *c, const sx *x, const sx *ax, gk_sb_fkind k,
                                    const char *name, bool absolute)
{
    val a = gk_sbr_eval_arg(c, ax);
    bool unres;
    const char *p = gk_sbr_need_string(c, &a, ax, name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a.s);
        gk_sb_filter *f = opaque(c, gk_sbr_loc(c, x), why);
        free(why);
        return f;
    }
    if (!p)
        return NULL;
    if (absolute && p[0] != '/') {
        gk_sbr_err(c, a.loc.src ? a.loc : gk_sbr_loc(c, ax), "Seatbelt compares absolute paths",
               "(%s ...) needs an absolute path, not \"%s\"", name, p);
        return NULL;
    }
    gk_sb_filter *f = new_filter(c, k, gk_sbr_loc(c, x));
    f->str = gk_sbr_arena_str(c, p);
    return f;
}

/* One absolute path operand of literal, subpath, prefix, path-ancestors. */
static gk_sb_filter *path_filter1(ctx *c, const sx *x, const sx *ax, gk_sb_fkind k,
                                  const char *name)
{
    return string_filter1(c, x, ax, k, name, true);
}

typedef gk_sb_filter *filter_of_operand(ctx *c, const sx *x, const sx *ax, gk_sb_fkind k,
                                        const char *name);

/* (literal "a" "b" ...) and the like: any of its operands, each made by one. */
static val any_operand(ctx *c, const sx *x, const gk_sbr_form *form, filter_of_operand *one_of)
{
    gk_sb_fkind k = (gk_sb_fkind)form->arg;
    const char *name = form->name;
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, name))
        return gk_sbr_none();
    gk_sb_filter *any = x->n > 2 ? new_filter(c, GK_SBF_ANY, gk_sbr_loc(c, x)) : NULL;
    gk_sb_filter *one = NULL;
    for (size_t i = 1; i < x->n; i++) {
        one = one_of(c, x, x->v[i], k, name);
        if (!one)
            return gk_sbr_none();
        if (any)
            add_kid(c, any, one);
    }
    return filter_val(any ? any : one);
}

static val path_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    return any_operand(c, x, form, path_filter1);
}

/* A regex filter from a #"..." literal or a string value. */
static gk_sb_filter *regex_filter(ctx *c, const sx *form, const sx *argx, const val *a,
                                  gk_sb_fkind k, const char *name)
{
    const char *pat = NULL;
    bool unres = false;
    if (a->k == V_REGEX)
        pat = a->s;
    else
        pat = gk_sbr_need_string(c, a, argx, name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a->s);
        gk_sb_filter *f = opaque(c, gk_sbr_loc(c, form), why);
        free(why);
        return f;
    }
    if (!pat)
        return NULL;
    char *err = NULL;
    size_t off = 0;
    void *re = gk_sb_regex_compile(pat, &err, &off);
    if (!re) {
        gk_loc l = a->loc.src ? a->loc : gk_sbr_loc(c, argx);
        if (a->raw && a->loc.src) {
            l.start = a->loc.start + a->rawoff + (uint32_t)off;
            l.end = l.start + 1;
        }
        gk_sbr_err(c, l, NULL, "%s", err);
        free(err);
        return NULL;
    }
    gk_sb_filter *f = new_filter(c, k, gk_sbr_loc(c, form));
    f->str = gk_sbr_arena_str(c, pat);
    f->re = re;
    /* Every compiled regex is listed once: freed from here, linted too. */
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->regexes, s->nregexes, s->capregexes, f);
    return f;
}

static val regex_filters(ctx *c, const sx *x, const gk_sbr_form *form)
{
    gk_sb_fkind k = (gk_sb_fkind)form->arg;
    const char *name = form->name;
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, name))
        return gk_sbr_none();
    gk_sb_filter *any = x->n > 2 ? new_filter(c, GK_SBF_ANY, gk_sbr_loc(c, x)) : NULL;
    gk_sb_filter *one = NULL;
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        one = regex_filter(c, x, x->v[i], &a, k, name);
        if (!one)
            return gk_sbr_none();
        if (any)
            add_kid(c, any, one);
    }
    return filter_val(any ? any : one);
}

static gk_sb_filter *name_filter1(ctx *c, const sx *x, const sx *ax, gk_sb_fkind k,
                                  const char *name)
{
    return string_filter1(c, x, ax, k, name, false);
}

static val name_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    return any_operand(c, x, form, name_filter1);
}

static val vnode_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, "vnode-type"))
        return gk_sbr_none();
    gk_sb_filter *f = new_filter(c, GK_SBF_VNODE, gk_sbr_loc(c, x));
    for (size_t i = 1; i < x->n; i++) {
        const sx *a = x->v[i];
        int t = a->t == SX_SYM ? gk_sb_vnode_lookup(a->s) : -1;
        if (t < 0) {
            gk_sbr_err(c, gk_sbr_loc(c, a),
                   "the types are REGULAR-FILE DIRECTORY SYMLINK FIFO SOCKET "
                   "CHARACTER-DEVICE BLOCK-DEVICE TTY",
                   "unknown vnode type");
            return gk_sbr_none();
        }
        f->vnodes |= 1u << t;
    }
    c->s->uses_vnode = true;
    return filter_val(f);
}

static val target_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    static const char *const targets[] = {"self", "same-sandbox", "others", "children", "pgrp",
                                          "parent"};
    if (!gk_sbr_argc_is(c, x, 1, 1, "target"))
        return gk_sbr_none();
    const sx *a = x->v[1];
    if (a->t != SX_SYM || !in_list(a->s, targets, N(targets))) {
        gk_sbr_err(c, gk_sbr_loc(c, a), "the targets are self same-sandbox others children pgrp parent",
               "unknown signal target");
        return gk_sbr_none();
    }
    gk_sb_filter *f = new_filter(c, GK_SBF_TARGET, gk_sbr_loc(c, x));
    f->str = gk_sbr_arena_str(c, a->s);
    return filter_val(f);
}

/* "HOST:PORT" of an ip filter: HOST is * or localhost, PORT * or 1-65535. */
static bool parse_hostport(ctx *c, gk_sb_filter *f, const char *s, gk_loc loc)
{
    const char *colon = strrchr(s, ':');
    if (!colon) {
        gk_sbr_err(c, loc, "write \"HOST:PORT\", e.g. \"localhost:8080\" or \"*:443\"",
               "network address \"%s\" has no port", s);
        return false;
    }
    char *host = gk_strndup(s, (size_t)(colon - s));
    const char *port = colon + 1;
    bool ok = strcmp(host, "*") == 0 || strcmp(host, "localhost") == 0;
    if (!ok) {
        gk_sbr_err(c, loc, "use a proxy or a firewall for other hosts",
               "Seatbelt accepts only '*' or 'localhost' as host, not \"%s\"", host);
        free(host);
        return false;
    }
    f->host = gk_sbr_arena(c, host);
    if (strcmp(port, "*") == 0) {
        f->port = -1;
        return true;
    }
    char *end = NULL;
    errno = 0;
    long p = port[0] >= '0' && port[0] <= '9' ? strtol(port, &end, 10) : -1;
    if (p < 1 || p > 65535 || errno || !end || *end) {
        gk_sbr_err(c, loc, NULL, "bad port \"%s\" (a number 1-65535, or *)", port);
        return false;
    }
    f->port = (int)p;
    return true;
}

/* The "HOST:PORT" operand ax of ip filter f (NULL: any address). */
static val ip_address(ctx *c, const sx *x, gk_sb_filter *f, const sx *ax, const char *name)
{
    f->host = gk_sbr_arena_str(c, "*");
    f->port = -1;
    if (!ax) {
        f->str = gk_sbr_arena_str(c, "*:*");
        return filter_val(f);
    }
    val a = gk_sbr_eval_arg(c, ax);
    bool unres;
    const char *s = gk_sbr_need_string(c, &a, ax, name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a.s);
        val v = filter_val(opaque(c, gk_sbr_loc(c, x), why));
        free(why);
        return v;
    }
    if (!s || !parse_hostport(c, f, s, a.loc.src ? a.loc : gk_sbr_loc(c, ax)))
        return gk_sbr_none();
    f->str = gk_sbr_arena_str(c, s);
    return filter_val(f);
}

static val net_filter(ctx *c, const sx *x, const gk_sbr_form *entry)
{
    gk_sb_fkind k = (gk_sb_fkind)entry->arg;
    const char *name = entry->name;
    static const struct {
        const char *name;
        unsigned protos, fams;
    } forms[] = {
        {"ip", GK_SB_PROTO_TCP | GK_SB_PROTO_UDP, GK_SB_FAM_4 | GK_SB_FAM_6},
        {"ip4", GK_SB_PROTO_TCP | GK_SB_PROTO_UDP, GK_SB_FAM_4},
        {"ip6", GK_SB_PROTO_TCP | GK_SB_PROTO_UDP, GK_SB_FAM_6},
        {"tcp", GK_SB_PROTO_TCP, GK_SB_FAM_4 | GK_SB_FAM_6},
        {"tcp4", GK_SB_PROTO_TCP, GK_SB_FAM_4},
        {"tcp6", GK_SB_PROTO_TCP, GK_SB_FAM_6},
        {"udp", GK_SB_PROTO_UDP, GK_SB_FAM_4 | GK_SB_FAM_6},
        {"udp4", GK_SB_PROTO_UDP, GK_SB_FAM_4},
        {"udp6", GK_SB_PROTO_UDP, GK_SB_FAM_6},
        {"unix-socket", GK_SB_PROTO_UNIX, 0},
        {"unix", GK_SB_PROTO_UNIX, 0},
    };
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, name))
        return gk_sbr_none();
    const sx *p = x->v[1];
    size_t form = N(forms);
    for (size_t i = 0; p->t == SX_SYM && i < N(forms); i++)
        if (strcmp(p->s, forms[i].name) == 0)
            form = i;
    if (form == N(forms)) {
        gk_sbr_err(c, gk_sbr_loc(c, p), "the forms are ip ip4 ip6 tcp tcp4 tcp6 udp udp4 udp6 unix-socket",
               "unknown network address form");
        return gk_sbr_none();
    }
    gk_sb_filter *f = new_filter(c, k, gk_sbr_loc(c, x));
    f->protos = forms[form].protos;
    f->fams = forms[form].fams;
    if (f->protos == GK_SB_PROTO_UNIX) {
        if (x->n == 2)
            return filter_val(f); /* (remote unix-socket): any socket path */
        if (!gk_sbr_argc_is(c, x, 1, 2, name))
            return gk_sbr_none();
        val a = gk_sbr_eval_arg(c, x->v[2]);
        gk_sb_filter *pf = need_filter(c, &a, x->v[2], name);
        if (!pf)
            return gk_sbr_none();
        add_kid(c, f, pf);
        return filter_val(f);
    }
    if (x->n <= 3)
        return ip_address(c, x, f, x->n == 3 ? x->v[2] : NULL, name);
    /* (local udp "*:500" "*:4500"): any of the addresses. */
    gk_sb_filter *any = new_filter(c, GK_SBF_ANY, gk_sbr_loc(c, x));
    for (size_t i = 2; i < x->n; i++) {
        gk_sb_filter *g = i == 2 ? f : new_filter(c, k, gk_sbr_loc(c, x));
        g->protos = f->protos;
        g->fams = f->fams;
        val v = ip_address(c, x, g, x->v[i], name);
        if (v.k != V_FILTER)
            return gk_sbr_none();
        add_kid(c, any, v.f);
    }
    return filter_val(any);
}

static val logic_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    gk_sb_fkind k = (gk_sb_fkind)form->arg;
    const char *name = form->name;
    if (k == GK_SBF_NOT && !gk_sbr_argc_is(c, x, 1, 1, name))
        return gk_sbr_none();
    gk_sb_filter *f = new_filter(c, k, gk_sbr_loc(c, x));
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        gk_sb_filter *kid = need_filter(c, &a, x->v[i], name);
        if (!kid)
            return gk_sbr_none();
        add_kid(c, f, kid);
    }
    return filter_val(f);
}

static val eval_with(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, "with"))
        return gk_sbr_none();
    const sx *m = x->v[1];
    if (m->t != SX_SYM || !in_list(m->s, modifiers, N(modifiers))) {
        const char *near = m->t == SX_SYM ? gk_nearest(m->s, modifiers, N(modifiers)) : NULL;
        char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
        gk_sbr_err(c, gk_sbr_loc(c, m), hint, "unknown modifier in (with ...)");
        free(hint);
        return gk_sbr_none();
    }
    val v = gk_sbr_none();
    v.k = V_MOD;
    v.loc = gk_sbr_loc(c, x);
    const char *n = m->s;
    v.mod = strcmp(n, "report") == 0                                 ? GK_SBM_REPORT
            : strcmp(n, "no-report") == 0 || strcmp(n, "no-log") == 0 ? GK_SBM_NO_REPORT
            : strcmp(n, "message") == 0                               ? GK_SBM_MESSAGE
            : strcmp(n, "send-signal") == 0                           ? GK_SBM_SEND_SIGNAL
                                                                      : GK_SBM_OTHER;
    if (v.mod == GK_SBM_MESSAGE) {
        if (!gk_sbr_argc_is(c, x, 2, 2, "with message"))
            return gk_sbr_none();
        val a = gk_sbr_eval_arg(c, x->v[2]);
        bool unres;
        if (!gk_sbr_need_string(c, &a, x->v[2], "(with message ...)", &unres) && !unres)
            return gk_sbr_none();
    }
    return v;
}

static val tty_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 0, 0, form->name))
        return gk_sbr_none();
    gk_sb_filter *f = new_filter(c, GK_SBF_VNODE, gk_sbr_loc(c, x));
    f->vnodes = 1u << GK_SB_VNODE_TTY;
    c->s->uses_vnode = true;
    return filter_val(f);
}

/* Filters only the running system can decide (extension,
 * require-entitlement, xattr, ...): always unknown offline. */
static val opaque_form(ctx *c, const sx *x, const gk_sbr_form *form)
{
    char *why = gk_printf("(%s ...) is decided by the running system", form->name);
    gk_sb_filter *f = opaque(c, gk_sbr_loc(c, x), why);
    f->applies = (unsigned)form->arg;
    free(why);
    return filter_val(f);
}

/* (with-filter F rule...): every rule of the body also requires F. */
static val with_filter(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, SIZE_MAX, "with-filter"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    gk_sb_filter *f = need_filter(c, &a, x->v[1], "with-filter");
    if (!f)
        return gk_sbr_none();
    GK_VEC_PUSH(c->with_filters, c->nwith, c->capwith, f);
    val last = gk_sbr_none();
    for (size_t i = 2; i < x->n && !c->aborted; i++)
        last = gk_sbr_eval(c, x->v[i]);
    c->nwith--;
    return last;
}

/* ---- rules -------------------------------------------------------------------- */

/* Whitespace collapsed, comments dropped, capped: one line an answer can
 * quote. */
static char *form_text(const gk_source *src, uint32_t start, uint32_t end)
{
    gk_buf b = {0};
    const char *t = src->text;
    bool space = false;
    for (uint32_t i = start; i < end && i < src->len;) {
        char ch = t[i];
        if (ch == '"' || (ch == '#' && i + 1 < end && t[i + 1] == '"')) {
            if (space && b.len && b.data[b.len - 1] != '(')
                gk_buf_putc(&b, ' ');
            space = false;
            uint32_t j = i + (ch == '#' ? 2 : 1);
            while (j < end && t[j] != '"') {
                if (t[j] == '\\' && j + 1 < end)
                    j++;
                j++;
            }
            j = j < end ? j + 1 : end;
            gk_buf_add(&b, t + i, j - i);
            i = j;
            continue;
        }
        if (ch == ';') {
            while (i < end && t[i] != '\n')
                i++;
            space = true;
            continue;
        }
        if (ch == '#' && i + 1 < end && t[i + 1] == '|') {
            int nest = 0;
            while (i + 1 < end) {
                if (t[i] == '#' && t[i + 1] == '|') {
                    nest++;
                    i += 2;
                } else if (t[i] == '|' && t[i + 1] == '#') {
                    i += 2;
                    if (--nest == 0)
                        break;
                } else {
                    i++;
                }
            }
            space = true;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
            space = true;
            i++;
            continue;
        }
        if (space && b.len && b.data[b.len - 1] != '(' && ch != ')')
            gk_buf_putc(&b, ' ');
        space = false;
        gk_buf_putc(&b, ch);
        i++;
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    if (b.len > 300) {
        b.len = 297;
        b.data[b.len] = '\0';
        gk_buf_puts(&b, "...");
    }
    return gk_buf_steal(&b, NULL);
}

static void add_rule(ctx *c, gk_sb_rule *r)
{
    grant_sbpl *s = c->s;
    if (s->n >= MAX_RULES) {
        if (!c->aborted)
            gk_sbr_err(c, r->loc, NULL, "too many rules (more than %d)", MAX_RULES);
        c->aborted = true;
        free(r->ops);
        free(r->text);
        return;
    }
    GK_VEC_PUSH(s->rules, s->n, s->cap, *r);
}

static bool rule_context(ctx *c, const sx *x, const char *what)
{
    if (c->in_args == 0)
        return true;
    gk_sbr_err(c, gk_sbr_loc(c, x), "rules go at the top level or in a procedure called there",
           "%s cannot appear inside an argument", what);
    return false;
}

static val eval_rule(ctx *c, const sx *x, const gk_sbr_form *form)
{
    gk_sb_action action = (gk_sb_action)form->arg;
    const char *name = action == GK_SB_ALLOW ? "allow" : "deny";
    if (!rule_context(c, x, name) || !gk_sbr_need_version(c, x))
        return gk_sbr_none();
    gk_sb_rule r;
    memset(&r, 0, sizeof(r));
    r.action = action;
    r.loc = gk_sbr_loc(c, x);
    r.via = c->via;
    gk_sb_filter *top = new_filter(c, GK_SBF_ANY, gk_sbr_loc(c, x));
    size_t capops = 0;
    bool ok = true;
    for (size_t i = 1; i < x->n && ok; i++) {
        const sx *a = x->v[i];
        val v = gk_sbr_eval_arg(c, a);
        switch (v.k) {
        case V_OP:
            GK_VEC_PUSH(r.ops, r.nops, capops, v.op);
            break;
        case V_FILTER:
            add_kid(c, top, v.f);
            break;
        case V_UNRES: {
            gk_sb_filter *f = need_filter(c, &v, a, name);
            add_kid(c, top, f);
            break;
        }
        case V_MOD:
            r.mods |= v.mod;
            break;
        default:
            if (!c->failed || v.k != V_NONE)
                gk_sbr_err(c, gk_sbr_loc(c, a), NULL,
                       "(%s ...) takes operations, filters and (with ...) modifiers", name);
            ok = false;
        }
    }
    if (ok && r.nops == 0) {
        gk_sbr_err(c, gk_sbr_loc(c, x), "e.g. (allow file-read* (subpath \"/usr\"))",
               "(%s ...) names no operation", name);
        ok = false;
    }
    if (!ok) {
        free(r.ops);
        return gk_sbr_none();
    }
    r.filter = top->nkids == 0 ? NULL : top->nkids == 1 ? top->kids[0] : top;
    if (c->nwith) {
        /* Inside (with-filter F ...): F and the rule's own filters. */
        gk_sb_filter *all = new_filter(c, GK_SBF_ALL, gk_sbr_loc(c, x));
        for (size_t i = 0; i < c->nwith; i++)
            add_kid(c, all, c->with_filters[i]);
        if (r.filter)
            add_kid(c, all, r.filter);
        r.filter = all;
    }
    r.text = form_text(c->src, x->start, x->end);
    add_rule(c, &r);
    return gk_sbr_none();
}

/* ---- import ------------------------------------------------------------------- */

static bool regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *dir_of(const char *name)
{
    const char *slash = strrchr(name, '/');
    if (!slash)
        return gk_strdup(".");
    if (slash == name)
        return gk_strdup("/");
    return gk_strndup(name, (size_t)(slash - name));
}

static void unresolved_import(ctx *c, const sx *x, const char *name, const char *why)
{
    grant_sbpl *s = c->s;
    gk_sb_unresolved u = {gk_sbr_loc(c, x), gk_sbr_arena_str(c, name)};
    GK_VEC_PUSH(s->imports, s->nimports, s->capimports, u);
    gk_diag_add(c->diags, GK_WARNING, gk_sbr_loc(c, x),
                "put the file beside the profile, or give -D IMPORT_DIR=DIR",
                "import \"%s\" %s: what it could decide is undecided", name, why);
    gk_sb_rule r;
    memset(&r, 0, sizeof(r));
    r.action = GK_SB_UNRESOLVED;
    r.ops = gk_malloc(sizeof(int));
    r.ops[0] = 0; /* default: the root, so it covers every operation */
    r.nops = 1;
    r.loc = gk_sbr_loc(c, x);
    r.via = c->via;
    r.text = form_text(c->src, x->start, x->end);
    add_rule(c, &r);
}

static val eval_import(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!rule_context(c, x, "import") || !gk_sbr_need_version(c, x) || !gk_sbr_argc_is(c, x, 1, 1, "import"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    if (a.k == V_UNRES) {
        gk_sbr_record_param(c, &a);
        char *n = gk_printf("(param \"%s\")", a.s);
        unresolved_import(c, x, n, "names a param without a value");
        free(n);
        return gk_sbr_none();
    }
    bool unres;
    const char *name = gk_sbr_need_string(c, &a, x->v[1], "import", &unres);
    if (!name)
        return gk_sbr_none();
    if (c->flags & GRANT_SBPL_NO_IMPORT) {
        unresolved_import(c, x, name, "was not read (imports are off)");
        return gk_sbr_none();
    }
    char *found = NULL;
    if (name[0] == '/') {
        if (regular_file(name))
            found = gk_strdup(name);
    } else if (name[0]) {
        char *dir = strchr(c->src->name, '/') ? dir_of(c->src->name) : NULL;
        char *cand = dir ? gk_path_join(dir, name) : gk_strdup(name);
        free(dir);
        if (regular_file(cand))
            found = cand;
        else
            free(cand);
        const char *idir = gk_sbr_param_value(c, "IMPORT_DIR");
        if (!found && idir && idir[0]) {
            cand = gk_path_join(idir, name);
            if (regular_file(cand))
                found = cand;
            else
                free(cand);
        }
    }
    if (!found) {
        unresolved_import(c, x, name, "was not found");
        return gk_sbr_none();
    }
    char *real = realpath(found, NULL);
    if (!real)
        real = gk_strdup(found);
    for (size_t i = 0; i < c->nimport; i++)
        if (strcmp(c->import_stack[i], real) == 0) {
            gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "import cycle: \"%s\" imports itself", name);
            free(real);
            free(found);
            return gk_sbr_none();
        }
    if (c->nimport >= MAX_IMPORT_DEPTH) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "imports nest too deeply");
        free(real);
        free(found);
        return gk_sbr_none();
    }
    char *text = NULL;
    size_t len = 0;
    int rc = gk_read_file(found, &text, &len);
    if (rc < 0 || len > MAX_FILE) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "cannot read import \"%s\": %s", found,
               rc < 0 ? strerror(-rc) : "file too large");
        free(text);
        free(real);
        free(found);
        return gk_sbr_none();
    }
    gk_source *src = gk_source_new(found, text, len);
    free(text);
    free(found);
    c->import_stack = gk_realloc(c->import_stack, (c->nimport + 1) * sizeof(char *));
    c->import_stack[c->nimport++] = real;
    gk_source *saved = c->src;
    bool saved_version = c->version_seen;
    c->version_seen = false;
    gk_sbr_eval_file(c, src);
    c->version_seen = saved_version;
    c->src = saved;
    free(c->import_stack[--c->nimport]);
    gk_source_unref(src); /* the profile holds its own reference */
    return gk_sbr_none();
}

/* ---- the built-in forms ---------------------------------------------------- */

/* Every form a profile can call besides its own procedures, in the order
 * "did you mean" hints consider them: sbpl_v1's forms, then the opaque
 * filters. The evaluator finds a head here (ctx.forms). */
#define OPAQUE(n) {n, opaque_form, 0}
/* An opaque filter that can match only queries of the argument kinds in m
 * (a filter that cannot match the queried object does not make an answer
 * undecided: control-name never matches a TCP address). */
#define OPAQUE_ON(n, m) {n, opaque_form, (int)(m)}
#define AK(k) (1u << GK_SB_ARG_##k)
#define UNSUPPORTED(n) {n, gk_sbr_form_unsupported, 0}
static const gk_sbr_form builtin_forms[] = {
    {"version", gk_sbr_form_version, 0},
    {"allow", eval_rule, GK_SB_ALLOW},
    {"deny", eval_rule, GK_SB_DENY},
    {"define", gk_sbr_form_define, 0},
    {"import", eval_import, 0},
    {"param", gk_sbr_form_param, 0},
    {"getenv", gk_sbr_form_param, 0},
    {"string-append", gk_sbr_form_string_append, 0},
    {"regex-quote", gk_sbr_form_regex_quote, 0},
    {"if", gk_sbr_form_if, 0},
    {"when", gk_sbr_form_if, 0},
    {"unless", gk_sbr_form_if, 0},
    {"not", gk_sbr_form_not, 0},
    {"and", gk_sbr_form_and_or, 0},
    {"or", gk_sbr_form_and_or, 0},
    {"begin", gk_sbr_form_begin, 0},
    {"with", eval_with, 0},
    {"debug", gk_sbr_form_ignore, 0},
    {"trace", gk_sbr_form_ignore, 0},
    {"quote", gk_sbr_form_quote, 0},
    {"defined?", gk_sbr_form_defined, 0},
    {"let", gk_sbr_form_let, 0},
    {"let*", gk_sbr_form_let, 0},
    {"string=?", gk_sbr_form_string_eq, 0},
    {"equal?", gk_sbr_form_string_eq, 0},
    {"eq?", gk_sbr_form_string_eq, 0},
    {"eqv?", gk_sbr_form_string_eq, 0},
    {"string?", gk_sbr_form_type_p, 0},
    {"number?", gk_sbr_form_type_p, 0},
    {"boolean?", gk_sbr_form_type_p, 0},
    {"symbol?", gk_sbr_form_type_p, 0},
    {"string->number", gk_sbr_form_string_to_number, 0},
    {"number->string", gk_sbr_form_number_to_string, 0},
    {"string-length", gk_sbr_form_string_length, 0},
    {"substring", gk_sbr_form_substring, 0},
    {"=", gk_sbr_form_compare, 0},
    {"<", gk_sbr_form_compare, 0},
    {">", gk_sbr_form_compare, 0},
    {"<=", gk_sbr_form_compare, 0},
    {">=", gk_sbr_form_compare, 0},
    {"+", gk_sbr_form_arith, 0},
    {"-", gk_sbr_form_arith, 0},
    {"with-filter", with_filter, 0},
    {"cond", gk_sbr_form_cond, 0},
    {"zero?", gk_sbr_form_num_p, 0},
    {"positive?", gk_sbr_form_num_p, 0},
    {"negative?", gk_sbr_form_num_p, 0},
    /* Apple's prelude: switches of the running sandbox, no decision. */
    {"disable-full-symbolication", gk_sbr_form_ignore, 0},
    {"disable-callouts", gk_sbr_form_ignore, 0},
    {"require-any", logic_filter, GK_SBF_ANY},
    {"require-all", logic_filter, GK_SBF_ALL},
    {"require-not", logic_filter, GK_SBF_NOT},
    {"literal", path_filter, GK_SBF_LITERAL},
    {"path", path_filter, GK_SBF_LITERAL},
    {"path-literal", path_filter, GK_SBF_LITERAL},
    {"subpath", path_filter, GK_SBF_SUBPATH},
    {"prefix", path_filter, GK_SBF_PREFIX},
    {"path-prefix", path_filter, GK_SBF_PREFIX},
    {"regex", regex_filters, GK_SBF_REGEX},
    {"path-regex", regex_filters, GK_SBF_REGEX},
    {"vnode-type", vnode_filter, 0},
    {"tty", tty_filter, 0},
    {"global-name", name_filter, GK_SBF_GLOBAL_NAME},
    {"global-name-regex", regex_filters, GK_SBF_GLOBAL_NAME_REGEX},
    {"global-name-prefix", name_filter, GK_SBF_GLOBAL_NAME_PREFIX},
    {"local-name", name_filter, GK_SBF_LOCAL_NAME},
    {"local-name-regex", regex_filters, GK_SBF_LOCAL_NAME_REGEX},
    {"local-name-prefix", name_filter, GK_SBF_LOCAL_NAME_PREFIX},
    {"xpc-service-name", name_filter, GK_SBF_XPC_NAME},
    {"xpc-service-name-prefix", name_filter, GK_SBF_XPC_NAME_PREFIX},
    {"ipc-posix-name", name_filter, GK_SBF_IPC_NAME},
    {"ipc-posix-name-prefix", name_filter, GK_SBF_IPC_NAME_PREFIX},
    {"ipc-posix-name-regex", regex_filters, GK_SBF_IPC_NAME_REGEX},
    {"path-ancestors", path_filter, GK_SBF_ANCESTORS},
    {"sysctl-name", name_filter, GK_SBF_SYSCTL_NAME},
    {"sysctl-name-prefix", name_filter, GK_SBF_SYSCTL_PREFIX},
    {"sysctl-name-regex", regex_filters, GK_SBF_SYSCTL_REGEX},
    {"target", target_filter, 0},
    {"remote", net_filter, GK_SBF_REMOTE},
    {"local", net_filter, GK_SBF_LOCAL},
    {"to", net_filter, GK_SBF_REMOTE},
    {"from", net_filter, GK_SBF_LOCAL},
    /* Decided by the process or the system, for any query. */
    OPAQUE("extension"), OPAQUE("require-entitlement"), OPAQUE("entitlement-value"),
    OPAQUE("entitlement-value-regex"), OPAQUE("process-attribute"), OPAQUE("signing-identifier"),
    OPAQUE("debug-mode"), OPAQUE("system-attribute"), OPAQUE("state-flag"), OPAQUE("uid"),
    OPAQUE("require-ancestor-with-entitlement"), OPAQUE("csr"), OPAQUE("container"),
    OPAQUE("executable-bundle"), OPAQUE("application-group"), OPAQUE("system-container"),
    OPAQUE("system-group"), OPAQUE("process-is-plugin"), OPAQUE("process-is-installer"),
    OPAQUE("sandbox-extension"), OPAQUE("granted-extensions"), OPAQUE("mach-extension"),
    OPAQUE("extension-class"), OPAQUE("extension-class-regex"), OPAQUE("target-signing-identifier"),
    /* Properties of a file. */
    OPAQUE_ON("xattr", AK(PATH)), OPAQUE_ON("xattr-prefix", AK(PATH)),
    OPAQUE_ON("xattr-regex", AK(PATH)), OPAQUE_ON("file-mode", AK(PATH)),
    OPAQUE_ON("file-attribute", AK(PATH)), OPAQUE_ON("device-major", AK(PATH)),
    OPAQUE_ON("device-minor", AK(PATH)), OPAQUE_ON("device-conforms-to", AK(PATH)),
    OPAQUE_ON("mount-relative-path", AK(PATH)), OPAQUE_ON("mount-relative-path-regex", AK(PATH)),
    OPAQUE_ON("mount-relative-literal", AK(PATH)), OPAQUE_ON("mount-relative-regex", AK(PATH)),
    OPAQUE_ON("storage-class", AK(PATH)), OPAQUE_ON("fs-type", AK(PATH)),
    OPAQUE_ON("home-subpath", AK(PATH)), OPAQUE_ON("home-literal", AK(PATH)),
    OPAQUE_ON("home-prefix", AK(PATH)), OPAQUE_ON("home-regex", AK(PATH)),
    OPAQUE_ON("ioctl-command", AK(PATH) | AK(NONE)), OPAQUE_ON("fsctl-command", AK(PATH) | AK(NONE)),
    /* Sockets: a kernel control or socket attributes, never an address. */
    OPAQUE_ON("control-name", AK(NONE)), OPAQUE_ON("socket-domain", AK(NONE) | AK(NET)),
    OPAQUE_ON("socket-type", AK(NONE) | AK(NET)), OPAQUE_ON("socket-protocol", AK(NONE) | AK(NET)),
    /* Objects of operations with no offline argument. */
    OPAQUE_ON("iokit-registry-entry-class", AK(NONE)),
    OPAQUE_ON("iokit-registry-entry-class-regex", AK(NONE)),
    OPAQUE_ON("iokit-registry-entry-class-prefix", AK(NONE)),
    OPAQUE_ON("iokit-user-client-class", AK(NONE)),
    OPAQUE_ON("iokit-user-client-class-regex", AK(NONE)), OPAQUE_ON("iokit-property", AK(NONE)),
    OPAQUE_ON("iokit-property-regex", AK(NONE)), OPAQUE_ON("iokit-connection", AK(NONE)),
    OPAQUE_ON("appleevent-destination", AK(NONE)), OPAQUE_ON("preference-domain", AK(NONE)),
    OPAQUE_ON("preference-domain-regex", AK(NONE)),
    OPAQUE_ON("notification-name", AK(NONE)), OPAQUE_ON("kext-bundle-id", AK(NONE)),
    OPAQUE_ON("right-name", AK(NONE)), OPAQUE_ON("host-special-port", AK(NONE)),
    OPAQUE_ON("task-special-port", AK(NONE)), OPAQUE_ON("mac-policy-name", AK(NONE)),
    OPAQUE_ON("mac-syscall-number", AK(NONE)), OPAQUE_ON("syscall-number", AK(NONE)),
    OPAQUE_ON("machtrap-number", AK(NONE)), OPAQUE_ON("kernel-mig-routine", AK(NONE)),
    OPAQUE_ON("mach-kernel-endpoint-number", AK(NONE)),
    OPAQUE_ON("socket-option-level", AK(NONE)), OPAQUE_ON("socket-option-name", AK(NONE)),
    OPAQUE_ON("nvram-variable", AK(NONE)), OPAQUE_ON("semaphore-owner", AK(IPC)),
    /* The other process of signal, process-info and task-port operations. */
    OPAQUE_ON("process-path", AK(TARGET) | AK(NONE)), OPAQUE_ON("process-name", AK(TARGET) | AK(NONE)),
    OPAQUE_ON("info-type", AK(TARGET)),
    /* The Scheme that is out of the subset, by name. */
    UNSUPPORTED("lambda"), UNSUPPORTED("define-syntax"), UNSUPPORTED("let-syntax"),
    UNSUPPORTED("letrec"), UNSUPPORTED("letrec*"), UNSUPPORTED("syntax-rules"),
    UNSUPPORTED("case"), UNSUPPORTED("do"), UNSUPPORTED("map"),
    UNSUPPORTED("for-each"), UNSUPPORTED("apply"), UNSUPPORTED("list"), UNSUPPORTED("cons"),
    UNSUPPORTED("car"), UNSUPPORTED("cdr"), UNSUPPORTED("append"), UNSUPPORTED("set!"),
    UNSUPPORTED("call-with-current-continuation"), UNSUPPORTED("call/cc"),
    UNSUPPORTED("macro"), UNSUPPORTED("eval"),
};
#undef OPAQUE
#undef OPAQUE_ON
#undef AK
#undef UNSUPPORTED

/* ---- public API ------------------------------------------------------------------ */

static void sbpl_free_internal(grant_sbpl *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->rules[i].ops);
        free(s->rules[i].text);
    }
    free(s->rules);
    for (size_t i = 0; i < s->nregexes; i++)
        gk_sb_regex_free(s->regexes[i]->re);
    free(s->regexes);
    for (size_t i = 0; i < s->nfilters; i++) {
        free(s->filters[i]->kids);
        free(s->filters[i]);
    }
    free(s->filters);
    for (size_t i = 0; i < s->narena; i++)
        free(s->arena[i]);
    free(s->arena);
    free(s->params);
    free(s->imports);
    for (size_t i = 0; i < s->nsources; i++)
        gk_source_unref(s->sources[i]);
    free(s->sources);
    free(s);
}

grant_sbpl *gk_sbpl_read(gk_source *src, const char *const *params, size_t nparams,
                         unsigned flags, grant_diags *diags)
{
    ctx c;
    memset(&c, 0, sizeof(c));
    c.s = gk_calloc(1, sizeof(*c.s));
    c.diags = diags;
    c.params = params;
    c.nparams = nparams;
    c.flags = flags;
    char *real = src->name ? realpath(src->name, NULL) : NULL;
    c.forms = builtin_forms;
    c.nforms = N(builtin_forms);
    c.import_stack = gk_malloc(sizeof(char *));
    c.import_stack[c.nimport++] = real ? real : gk_strdup(src->name ? src->name : "");
    gk_sbr_eval_file(&c, src);
    if (!c.failed && !c.any_version)
        gk_sbr_err(&c, at(src, 0, 0), "start the profile with (version 1)",
               "no (version 1) in profile");
    for (size_t i = 0; i < c.nimport; i++)
        free(c.import_stack[i]);
    free(c.import_stack);
    for (size_t i = 0; i < c.nfiles; i++)
        gk_sx_free(c.files[i].top);
    free(c.files);
    free(c.globals);
    free(c.with_filters);
    if (c.failed) {
        sbpl_free_internal(c.s);
        return NULL;
    }
    return c.s;
}

int grant_sbpl_read_buffer(const char *name, const char *text, size_t len,
                           const char *const *params, size_t nparams, unsigned flags,
                           grant_diags *diags, grant_sbpl **out)
{
    if (!out || (!text && len) || !diags)
        return -EINVAL;
    *out = NULL;
    gk_source *src = gk_source_new(name ? name : "<profile>", text ? text : "", len);
    grant_sbpl *s = gk_sbpl_read(src, params, nparams, flags, diags);
    gk_source_unref(src);
    if (!s)
        return -EPROTO;
    *out = s;
    return 0;
}

int grant_sbpl_read(const char *file, const char *const *params, size_t nparams, unsigned flags,
                    grant_diags *diags, grant_sbpl **out)
{
    if (!file || !out || !diags)
        return -EINVAL;
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = gk_read_file(file, &text, &len);
    if (rc < 0) {
        gk_diag_file(diags, GK_ERROR, file, "cannot read: %s", strerror(-rc));
        return rc;
    }
    rc = grant_sbpl_read_buffer(file, text, len, params, nparams, flags, diags, out);
    free(text);
    return rc;
}

void grant_sbpl_free(grant_sbpl *s)
{
    sbpl_free_internal(s);
}

size_t grant_sbpl_rule_count(const grant_sbpl *s)
{
    return s ? s->n : 0;
}
