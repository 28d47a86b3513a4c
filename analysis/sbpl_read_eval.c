/* sbpl_read_eval.c - the SBPL reader's static Scheme evaluator.
 *
 * Runs a profile the way libsandbox's prelude would, for the part of
 * Scheme real profiles use: values (strings, regexes, numbers, booleans,
 * quoted symbols, operations, filters, modifiers, unknowns), define of
 * constants and of procedures (called with their arguments bound,
 * lexically scoped), let, let* and named let, param, string-append,
 * regex-quote, if/when/unless/and/or/not, begin, version, defined?,
 * string=? equal? string? number? string->number number->string
 * string-length substring, = < > <= >= + -. lambda, macros and list
 * procedures are refused by name (gk_sbr_form_unsupported): a profile
 * that needs them is out of the supported subset, never half read.
 * Every other form (rules, filters, import) is the builder's
 * (sbpl_read.c): a form's head is looked up in the table it hands over in
 * ctx.forms, never called by name.
 */
#include "analysis/sbpl_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

/* ---- context ------------------------------------------------------------------ */

void *gk_sbr_arena(ctx *c, void *p)
{
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->arena, s->narena, s->caparena, p);
    return p;
}

char *gk_sbr_arena_str(ctx *c, const char *s)
{
    return gk_sbr_arena(c, gk_strdup(s));
}

gk_loc gk_sbr_loc(ctx *c, const sx *x)
{
    return at(c->src, x->start, x->end);
}

void gk_sbr_err(ctx *c, gk_loc loc, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = gk_vprintf(fmt, ap);
    va_end(ap);
    gk_diag_add(c->diags, GK_ERROR, loc, hint, "%s", m);
    free(m);
    c->failed = true;
}

val gk_sbr_none(void)
{
    val v;
    memset(&v, 0, sizeof(v));
    return v;
}

/* ---- evaluation --------------------------------------------------------------- */

static bool step(ctx *c, const sx *x)
{
    if (c->aborted)
        return false;
    if (++c->steps > MAX_STEPS) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "the profile takes too long to evaluate (recursion?)");
        c->aborted = true;
        return false;
    }
    return true;
}

static const binding *lookup(ctx *c, const char *name)
{
    for (scope *f = c->locals; f; f = f->up)
        for (size_t i = f->n; i-- > 0;)
            if (strcmp(f->b[i].name, name) == 0)
                return &f->b[i];
    for (size_t i = c->nglobals; i-- > 0;)
        if (strcmp(c->globals[i].name, name) == 0)
            return &c->globals[i];
    return NULL;
}

const char *gk_sbr_param_value(ctx *c, const char *name)
{
    size_t nl = strlen(name);
    const char *found = NULL;
    for (size_t i = 0; i < c->nparams; i++) {
        const char *p = c->params[i];
        if (p && strncmp(p, name, nl) == 0 && p[nl] == '=')
            found = p + nl + 1; /* the last -D wins */
    }
    return found;
}

val gk_sbr_eval_arg(ctx *c, const sx *x)
{
    c->in_args++;
    val v = gk_sbr_eval(c, x);
    c->in_args--;
    return v;
}

void gk_sbr_record_param(ctx *c, const val *v)
{
    grant_sbpl *s = c->s;
    for (size_t i = 0; i < s->nparams; i++)
        if (s->params[i].loc.src == v->loc.src && s->params[i].loc.start == v->loc.start)
            return;
    gk_sb_unresolved u = {v->loc, gk_sbr_arena_str(c, v->s)};
    GK_VEC_PUSH(s->params, s->nparams, s->capparams, u);
    gk_diag_add(c->diags, GK_WARNING, v->loc, "give it with -D NAME=VALUE",
                "param \"%s\" has no value: what depends on it is undecided", v->s);
}

const char *gk_sbr_need_string(ctx *c, const val *v, const sx *x, const char *what, bool *unres)
{
    *unres = false;
    if (v->k == V_STR || v->k == V_REGEX) /* #"..." is a string too */
        return v->s;
    if (v->k == V_LIST) {
        gk_sbr_err(c, gk_sbr_loc(c, x), "grantc(1), SBPL SUBSET",
                   "%s: a list (a rest parameter's value) is outside the supported subset", what);
        return NULL;
    }
    if (v->k == V_UNRES) {
        gk_sbr_record_param(c, v);
        *unres = true;
        return NULL;
    }
    if (!c->failed || v->k != V_NONE)
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "%s needs a string here", what);
    return NULL;
}

bool gk_sbr_argc_is(ctx *c, const sx *x, size_t lo, size_t hi, const char *name)
{
    size_t n = x->n - 1;
    if (n >= lo && n <= hi)
        return true;
    if (lo == hi)
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "(%s ...) takes %zu argument%s, not %zu", name, lo,
               lo == 1 ? "" : "s", n);
    else if (hi == SIZE_MAX)
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "(%s ...) takes at least %zu argument%s", name, lo,
               lo == 1 ? "" : "s");
    else
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "(%s ...) takes %zu to %zu arguments, not %zu", name, lo,
               hi, n);
    return false;
}

/* allow, deny, import and param come with sbpl_v1, which (version 1)
 * loads: before it they do not exist. */
bool gk_sbr_need_version(ctx *c, const sx *x)
{
    if (c->any_version)
        return true;
    gk_sbr_err(c, gk_sbr_loc(c, x), "start the profile with (version 1)",
           "(version 1) must come before the first rule");
    c->any_version = true; /* once */
    return false;
}

val gk_sbr_form_string_append(ctx *c, const sx *x, const gk_sbr_form *form)
{
    gk_buf b = {0};
    val out = gk_sbr_none();
    out.k = V_STR;
    out.loc = gk_sbr_loc(c, x);
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        if (a.k == V_UNRES) {
            gk_buf_free(&b);
            return a; /* the whole string is unknown */
        }
        if (a.k != V_STR && a.k != V_REGEX) { /* #"..." is a string too */
            if (!c->failed || a.k != V_NONE)
                gk_sbr_err(c, gk_sbr_loc(c, x->v[i]), NULL, "string-append takes strings");
            gk_buf_free(&b);
            return gk_sbr_none();
        }
        gk_buf_puts(&b, a.s);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    out.s = gk_sbr_arena(c, gk_buf_steal(&b, NULL));
    return out;
}

val gk_sbr_form_regex_quote(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "regex-quote"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    if (a.k == V_UNRES)
        return a;
    bool unres;
    const char *s = gk_sbr_need_string(c, &a, x->v[1], "regex-quote", &unres);
    if (!s)
        return gk_sbr_none();
    gk_buf b = {0};
    for (const char *p = s; *p; p++) {
        if (strchr("^.[$()|*+?{\\", *p))
            gk_buf_putc(&b, '\\');
        gk_buf_putc(&b, *p);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    val v = gk_sbr_none();
    v.k = V_STR;
    v.loc = gk_sbr_loc(c, x);
    v.s = gk_sbr_arena(c, gk_buf_steal(&b, NULL));
    return v;
}

/* Truth of a condition value; -1 (with an error) when it has none offline. */
static int truth(ctx *c, const val *v, const sx *x)
{
    switch (v->k) {
    case V_BOOL:
        return v->b;
    case V_UNRES:
        gk_sbr_record_param(c, v);
        return 0; /* (param "X") is #f when X was not given */
    case V_FILTER:
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL,
               "this condition depends on the running process; it cannot be evaluated offline");
        return -1;
    case V_NONE:
        if (!c->failed)
            gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "this condition has no value");
        return -1;
    default:
        return 1;
    }
}

static val eval_body(ctx *c, const sx *x, size_t from)
{
    val last = gk_sbr_none();
    for (size_t i = from; i < x->n && !c->aborted; i++)
        last = gk_sbr_eval(c, x->v[i]);
    return last;
}

val gk_sbr_form_define(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (c->locals || c->in_args) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "define is supported only at the top level");
        return gk_sbr_none();
    }
    if (!gk_sbr_argc_is(c, x, 2, SIZE_MAX, "define"))
        return gk_sbr_none();
    const sx *target = x->v[1];
    binding b;
    memset(&b, 0, sizeof(b));
    if (target->t == SX_SYM) {
        if (x->n != 3) {
            gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "(define NAME VALUE) takes one value");
            return gk_sbr_none();
        }
        b.name = target->s;
        const binding *alias = x->v[2]->t == SX_SYM ? lookup(c, x->v[2]->s) : NULL;
        if (alias && alias->is_proc) {
            /* (define regex-home home-regex): another name for a procedure. */
            b.is_proc = true;
            b.p = alias->p;
            GK_VEC_PUSH(c->globals, c->nglobals, c->capglobals, b);
            return gk_sbr_none();
        }
        b.v = gk_sbr_eval_arg(c, x->v[2]);
        if (b.v.k == V_NONE)
            return gk_sbr_none();
    } else if (target->t == SX_LIST && target->n >= 1 && target->v[0]->t == SX_SYM) {
        for (size_t i = 1; i < target->n; i++) {
            /* (define (f a . rest) ...): a rest parameter, last. */
            bool dot = target->v[i]->t == SX_SYM && strcmp(target->v[i]->s, ".") == 0;
            if (dot && i + 2 == target->n && target->v[i + 1]->t == SX_SYM &&
                strcmp(target->v[i + 1]->s, ".") != 0)
                break;
            if (target->v[i]->t != SX_SYM || dot) {
                gk_sbr_err(c, gk_sbr_loc(c, target->v[i]), NULL,
                       "procedure parameters must be plain names");
                return gk_sbr_none();
            }
        }
        b.name = target->v[0]->s;
        b.is_proc = true;
        b.p.name = b.name;
        b.p.def = x;
        b.p.src = c->src;
    } else {
        gk_sbr_err(c, gk_sbr_loc(c, target), NULL, "define needs a name or (NAME PARAM...)");
        return gk_sbr_none();
    }
    GK_VEC_PUSH(c->globals, c->nglobals, c->capglobals, b);
    return gk_sbr_none();
}

static val call_body(ctx *c, const sx *x, const proc *p, scope *frp);

static const char *param_name(const proc *p, size_t i)
{
    return p->params ? p->params->v[i]->v[0]->s : p->def->v[1]->v[i + 1]->s;
}

/* Call p with the values args[0..got) (already evaluated). */
/* A defined procedure's rest parameter: (f a . rest) has it after a ".". */
static bool has_rest(const proc *p)
{
    const sx *sig = p->def->v[1];
    return !p->params && sig->n >= 3 && sig->v[sig->n - 2]->t == SX_SYM &&
           strcmp(sig->v[sig->n - 2]->s, ".") == 0;
}

static val call_with(ctx *c, const sx *x, const proc *p, val *args, size_t got)
{
    bool rest = has_rest(p);
    size_t want = p->params ? p->params->n : p->def->v[1]->n - 1 - (rest ? 2 : 0);
    if (rest && got >= want) {
        /* The rest arguments are evaluated (their rules and errors count)
         * but bound to nothing: lists are outside the subset, so a body
         * that uses the rest parameter gets an error naming it. */
        scope fr = {p->env, gk_calloc(want + 1, sizeof(binding)), want + 1};
        for (size_t i = 0; i < want; i++) {
            fr.b[i].name = param_name(p, i);
            fr.b[i].v = args[i];
        }
        fr.b[want].name = p->def->v[1]->v[p->def->v[1]->n - 1]->s;
        fr.b[want].v = gk_sbr_none();
        fr.b[want].v.k = V_LIST;
        return call_body(c, x, p, &fr);
    }
    if (want != got) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "'%s' takes %zu argument%s, not %zu", p->name, want,
               want == 1 ? "" : "s", got);
        return gk_sbr_none();
    }
    if (c->call_depth >= MAX_CALL_DEPTH) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "procedure calls nest too deeply (recursion?)");
        c->aborted = true;
        return gk_sbr_none();
    }
    /* Lexical scope: a defined procedure sees its parameters and the
     * globals, never the caller's locals; a named let also sees the scope
     * it was written in. */
    scope fr = {p->env, gk_calloc(want ? want : 1, sizeof(binding)), want};
    for (size_t i = 0; i < want; i++) {
        fr.b[i].name = param_name(p, i);
        fr.b[i].v = args[i];
    }
    return call_body(c, x, p, &fr);
}

/* Run p's body in scope fr (taken), at the caller's rule level. */
static val call_body(ctx *c, const sx *x, const proc *p, scope *frp)
{
    scope fr = *frp;
    if (c->call_depth >= MAX_CALL_DEPTH) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "procedure calls nest too deeply (recursion?)");
        c->aborted = true;
        free(fr.b);
        return gk_sbr_none();
    }
    /* The body runs in the procedure's file, at the caller's rule level. */
    gk_source *saved_src = c->src;
    gk_loc saved_via = c->via;
    scope *saved_locals = c->locals;
    /* A named let's rules stand where they are written: only a call of a
     * defined procedure is a site of its own. */
    if (!c->via.src && c->in_args == 0 && !p->params)
        c->via = gk_sbr_loc(c, x);
    c->src = p->src;
    c->locals = &fr;
    c->call_depth++;
    val r = eval_body(c, p->def, p->params ? 3 : 2);
    c->call_depth--;
    c->locals = saved_locals;
    c->src = saved_src;
    c->via = saved_via;
    free(fr.b);
    return r;
}

static val call_proc(ctx *c, const sx *x, const proc *p)
{
    size_t got = x->n - 1;
    val *args = gk_calloc(got ? got : 1, sizeof(val));
    for (size_t i = 0; i < got; i++)
        args[i] = gk_sbr_eval_arg(c, x->v[i + 1]);
    val r = call_with(c, x, p, args, got);
    free(args);
    return r;
}

val gk_sbr_form_version(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "version"))
        return gk_sbr_none();
    const sx *a = x->v[1];
    if (a->t != SX_NUM || a->num != 1) {
        gk_sbr_err(c, gk_sbr_loc(c, a), "write (version 1)", "unsupported SBPL version (only 1 exists)");
        c->any_version = true; /* one error, not one per rule after it */
        return gk_sbr_none();
    }
    /* A repeated (version 1) is harmless: libsandbox reloads sbpl_v1. */
    c->version_seen = c->any_version = true;
    return gk_sbr_none();
}

/* (param "X"), (getenv "X"): the -D value, or an unknown. */
val gk_sbr_form_param(ctx *c, const sx *x, const gk_sbr_form *form)
{
    const char *n = form->name;
    if (!gk_sbr_need_version(c, x) || !gk_sbr_argc_is(c, x, 1, 1, n))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    bool unres;
    const char *key = gk_sbr_need_string(c, &a, x->v[1], n, &unres);
    if (!key)
        return gk_sbr_none();
    const char *value = gk_sbr_param_value(c, key);
    val v = gk_sbr_none();
    v.loc = gk_sbr_loc(c, x);
    v.k = value ? V_STR : V_UNRES;
    v.s = gk_sbr_arena_str(c, value ? value : key);
    return v;
}

val gk_sbr_form_if(ctx *c, const sx *x, const gk_sbr_form *form)
{
    const char *n = form->name;
    bool is_if = n[0] == 'i';
    if (!gk_sbr_argc_is(c, x, 2, is_if ? 3 : SIZE_MAX, n))
        return gk_sbr_none();
    val cv = gk_sbr_eval_arg(c, x->v[1]);
    int t = truth(c, &cv, x->v[1]);
    if (t < 0)
        return gk_sbr_none();
    if (n[0] == 'u')
        t = !t;
    if (is_if)
        return t ? gk_sbr_eval(c, x->v[2]) : x->n == 4 ? gk_sbr_eval(c, x->v[3]) : gk_sbr_none();
    return t ? eval_body(c, x, 2) : gk_sbr_none();
}

val gk_sbr_form_not(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "not"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    int t = truth(c, &a, x->v[1]);
    if (t < 0)
        return gk_sbr_none();
    val v = gk_sbr_none();
    v.k = V_BOOL;
    v.b = !t;
    v.loc = gk_sbr_loc(c, x);
    return v;
}

/* (and ...), (or ...): the value that decided, as Scheme does. */
val gk_sbr_form_and_or(ctx *c, const sx *x, const gk_sbr_form *form)
{
    bool is_and = form->name[0] == 'a';
    val v = gk_sbr_none();
    v.k = V_BOOL;
    v.b = is_and;
    v.loc = gk_sbr_loc(c, x);
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        int t = truth(c, &a, x->v[i]);
        if (t < 0)
            return gk_sbr_none();
        v = a;
        if (is_and ? !t : t)
            break;
    }
    return v;
}

val gk_sbr_form_begin(ctx *c, const sx *x, const gk_sbr_form *form)
{
    return eval_body(c, x, 1);
}

val gk_sbr_form_ignore(ctx *c, const sx *x, const gk_sbr_form *form)
{
    return gk_sbr_none(); /* sbpl_v1: no effect on decisions */
}

static val bool_val(ctx *c, const sx *x, bool b)
{
    val v = gk_sbr_none();
    v.k = V_BOOL;
    v.b = b;
    v.loc = gk_sbr_loc(c, x);
    return v;
}

static val num_val(ctx *c, const sx *x, long n)
{
    val v = gk_sbr_none();
    v.k = V_NUM;
    v.num = n;
    v.loc = gk_sbr_loc(c, x);
    return v;
}

static val str_val(ctx *c, const sx *x, char *owned)
{
    val v = gk_sbr_none();
    v.k = V_STR;
    v.s = gk_sbr_arena(c, owned);
    v.loc = gk_sbr_loc(c, x);
    return v;
}

/* (quote x) and 'x: a symbol, or a string, number or boolean as itself. */
val gk_sbr_form_quote(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "quote"))
        return gk_sbr_none();
    const sx *d = x->v[1];
    if (d->t == SX_SYM) {
        val v = gk_sbr_none();
        v.k = V_SYM;
        v.s = d->s;
        v.loc = gk_sbr_loc(c, d);
        return v;
    }
    if (d->t == SX_LIST) {
        gk_sbr_err(c, gk_sbr_loc(c, x), "this reader quotes names only ('name)",
                   "quoted lists are outside the supported subset of Scheme");
        return gk_sbr_none();
    }
    return gk_sbr_eval_arg(c, d);
}

bool gk_sbr_defined(ctx *c, const char *name)
{
    if (lookup(c, name) || gk_sb_op_lookup(name) >= 0)
        return true;
    for (size_t i = 0; i < c->nforms; i++)
        if (strcmp(c->forms[i].name, name) == 0)
            return true;
    return false;
}

/* (defined? 'name): a definition, a built-in form or an operation. */
val gk_sbr_form_defined(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "defined?"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    if (a.k != V_SYM) {
        if (!c->failed || a.k != V_NONE)
            gk_sbr_err(c, gk_sbr_loc(c, x->v[1]), "write (defined? 'name)",
                       "defined? takes a quoted name");
        return gk_sbr_none();
    }
    return bool_val(c, x, gk_sbr_defined(c, a.s));
}

/* (let ((v e)...) body...), (let* ...) and the named (let loop ((v e)...) body...). */
val gk_sbr_form_let(ctx *c, const sx *x, const gk_sbr_form *form)
{
    bool star = strcmp(form->name, "let*") == 0;
    bool named = !star && x->n >= 2 && x->v[1]->t == SX_SYM;
    size_t bi = named ? 2 : 1;
    if (!gk_sbr_argc_is(c, x, bi, SIZE_MAX, form->name))
        return gk_sbr_none();
    const sx *bl = x->v[bi];
    if (bl->t != SX_LIST) {
        gk_sbr_err(c, gk_sbr_loc(c, bl), "write (let ((name value) ...) body ...)",
                   "%s needs a list of bindings", form->name);
        return gk_sbr_none();
    }
    for (size_t i = 0; i < bl->n; i++)
        if (bl->v[i]->t != SX_LIST || bl->v[i]->n != 2 || bl->v[i]->v[0]->t != SX_SYM) {
            gk_sbr_err(c, gk_sbr_loc(c, bl->v[i]), NULL, "a binding is (name value)");
            return gk_sbr_none();
        }
    size_t n = bl->n;
    val *inits = gk_calloc(n ? n : 1, sizeof(val));
    /* let*: each value sees the bindings before it; let: none of them. */
    scope fr = {c->locals, gk_calloc(n + 1, sizeof(binding)), 0};
    scope *saved = c->locals;
    if (star)
        c->locals = &fr;
    for (size_t i = 0; i < n && !c->aborted; i++) {
        inits[i] = gk_sbr_eval_arg(c, bl->v[i]->v[1]);
        if (star) {
            fr.b[fr.n].name = bl->v[i]->v[0]->s;
            fr.b[fr.n++].v = inits[i];
        }
    }
    c->locals = saved;
    val r = gk_sbr_none();
    if (named) {
        /* The loop is a procedure bound in its own scope, so it can call itself. */
        fr.b[0].name = x->v[1]->s;
        fr.b[0].is_proc = true;
        fr.b[0].p.name = x->v[1]->s;
        fr.b[0].p.def = x;
        fr.b[0].p.params = bl;
        fr.b[0].p.src = c->src;
        fr.b[0].p.env = &fr;
        fr.n = 1;
        r = call_with(c, x, &fr.b[0].p, inits, n);
    } else {
        if (!star) {
            for (size_t i = 0; i < n; i++) {
                fr.b[i].name = bl->v[i]->v[0]->s;
                fr.b[i].v = inits[i];
            }
            fr.n = n;
        }
        c->locals = &fr;
        r = eval_body(c, x, 2);
        c->locals = saved;
    }
    free(inits);
    free(fr.b);
    return r;
}

/* A number operand; an unresolved param is an error that names it, since
 * no branch can be taken without its value. */
static bool need_num(ctx *c, const val *v, const sx *x, const char *what, long *out)
{
    if (v->k == V_NUM) {
        *out = v->num;
        return true;
    }
    if (v->k == V_UNRES) {
        gk_sbr_record_param(c, v);
        gk_sbr_err(c, gk_sbr_loc(c, x), "give it with -D NAME=VALUE",
                   "%s needs a number, and param \"%s\" has no value", what, v->s);
    } else if (!c->failed || v->k != V_NONE) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "%s needs a number here", what);
    }
    return false;
}

val gk_sbr_form_compare(ctx *c, const sx *x, const gk_sbr_form *form)
{
    const char *op = form->name;
    if (!gk_sbr_argc_is(c, x, 2, SIZE_MAX, op))
        return gk_sbr_none();
    long prev = 0;
    bool ok = true;
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        long n;
        if (!need_num(c, &a, x->v[i], op, &n))
            return gk_sbr_none();
        if (i > 1) {
            bool r = strcmp(op, "=") == 0    ? prev == n
                     : strcmp(op, "<") == 0  ? prev < n
                     : strcmp(op, ">") == 0  ? prev > n
                     : strcmp(op, "<=") == 0 ? prev <= n
                                             : prev >= n;
            ok = ok && r;
        }
        prev = n;
    }
    return bool_val(c, x, ok);
}

val gk_sbr_form_arith(ctx *c, const sx *x, const gk_sbr_form *form)
{
    bool minus = form->name[0] == '-';
    if (!gk_sbr_argc_is(c, x, minus ? 1 : 0, SIZE_MAX, form->name))
        return gk_sbr_none();
    long acc = 0;
    for (size_t i = 1; i < x->n; i++) {
        val a = gk_sbr_eval_arg(c, x->v[i]);
        long n;
        if (!need_num(c, &a, x->v[i], form->name, &n))
            return gk_sbr_none();
        /* (- a) is -a; (- a b c) is a - b - c. */
        bool sub = minus && (i > 1 || x->n == 2);
        bool over = sub ? __builtin_sub_overflow(acc, n, &acc) : __builtin_add_overflow(acc, n, &acc);
        if (over) {
            gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "number out of range");
            return gk_sbr_none();
        }
    }
    return num_val(c, x, acc);
}

/* string=?, equal?, eq?, eqv?: an unresolved param equals nothing, as
 * the #f Seatbelt gives for a param that was not passed. */
val gk_sbr_form_string_eq(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 2, 2, form->name))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]), b = gk_sbr_eval_arg(c, x->v[2]);
    if (a.k == V_NONE || b.k == V_NONE)
        return gk_sbr_none();
    if (a.k == V_UNRES || b.k == V_UNRES) {
        if (a.k == V_UNRES)
            gk_sbr_record_param(c, &a);
        if (b.k == V_UNRES)
            gk_sbr_record_param(c, &b);
        return bool_val(c, x, false);
    }
    bool sa = a.k == V_STR || a.k == V_REGEX, sb = b.k == V_STR || b.k == V_REGEX;
    bool strict = strcmp(form->name, "string=?") == 0;
    if (strict && (!sa || !sb)) {
        gk_sbr_err(c, gk_sbr_loc(c, sa ? x->v[2] : x->v[1]), NULL, "string=? compares strings");
        return gk_sbr_none();
    }
    bool eq = false;
    if (sa && sb)
        eq = strcmp(a.s, b.s) == 0;
    else if (a.k == V_SYM && b.k == V_SYM)
        eq = strcmp(a.s, b.s) == 0;
    else if (a.k == V_NUM && b.k == V_NUM)
        eq = a.num == b.num;
    else if (a.k == V_BOOL && b.k == V_BOOL)
        eq = a.b == b.b;
    else if (a.k == V_OP && b.k == V_OP)
        eq = a.op == b.op;
    return bool_val(c, x, eq);
}

val gk_sbr_form_type_p(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, form->name))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    if (a.k == V_NONE)
        return gk_sbr_none();
    if (a.k == V_UNRES)
        gk_sbr_record_param(c, &a);
    const char *n = form->name;
    bool r = strcmp(n, "string?") == 0    ? a.k == V_STR || a.k == V_REGEX
             : strcmp(n, "number?") == 0  ? a.k == V_NUM
             : strcmp(n, "symbol?") == 0  ? a.k == V_SYM
                                          : a.k == V_BOOL || a.k == V_UNRES;
    return bool_val(c, x, r);
}

val gk_sbr_form_string_to_number(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 2, "string->number"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    if (a.k == V_UNRES)
        return a; /* still unknown: a comparison with it names the param */
    bool unres;
    const char *s = gk_sbr_need_string(c, &a, x->v[1], "string->number", &unres);
    if (!s)
        return gk_sbr_none();
    long radix = 10;
    if (x->n == 3) {
        val r = gk_sbr_eval_arg(c, x->v[2]);
        if (!need_num(c, &r, x->v[2], "string->number", &radix))
            return gk_sbr_none();
        if (radix != 2 && radix != 8 && radix != 10 && radix != 16) {
            gk_sbr_err(c, gk_sbr_loc(c, x->v[2]), NULL, "radix must be 2, 8, 10 or 16");
            return gk_sbr_none();
        }
    }
    char *end = NULL;
    errno = 0;
    long n = strtol(s, &end, (int)radix);
    if (!*s || errno || !end || *end || *s == ' ')
        return bool_val(c, x, false); /* not a number: #f, as Scheme gives */
    return num_val(c, x, n);
}

val gk_sbr_form_number_to_string(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "number->string"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    long n;
    if (!need_num(c, &a, x->v[1], "number->string", &n))
        return gk_sbr_none();
    return str_val(c, x, gk_printf("%ld", n));
}

/* A string operand for the string procedures; an unresolved param is an
 * error naming it (its length or its pieces are not known). */
static const char *need_str_known(ctx *c, const val *v, const sx *x, const char *what)
{
    if (v->k == V_STR || v->k == V_REGEX)
        return v->s;
    if (v->k == V_UNRES) {
        gk_sbr_record_param(c, v);
        gk_sbr_err(c, gk_sbr_loc(c, x), "give it with -D NAME=VALUE",
                   "%s needs a string, and param \"%s\" has no value", what, v->s);
    } else if (!c->failed || v->k != V_NONE) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "%s needs a string here", what);
    }
    return NULL;
}

val gk_sbr_form_string_length(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, "string-length"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    const char *s = need_str_known(c, &a, x->v[1], "string-length");
    return s ? num_val(c, x, (long)strlen(s)) : gk_sbr_none();
}

val gk_sbr_form_substring(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 2, 3, "substring"))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    const char *s = need_str_known(c, &a, x->v[1], "substring");
    if (!s)
        return gk_sbr_none();
    long len = (long)strlen(s), from, to = len;
    val f = gk_sbr_eval_arg(c, x->v[2]);
    if (!need_num(c, &f, x->v[2], "substring", &from))
        return gk_sbr_none();
    if (x->n == 4) {
        val t = gk_sbr_eval_arg(c, x->v[3]);
        if (!need_num(c, &t, x->v[3], "substring", &to))
            return gk_sbr_none();
    }
    if (from < 0 || to < from || to > len) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "substring %ld..%ld is outside a string of %ld bytes",
                   from, to, len);
        return gk_sbr_none();
    }
    return str_val(c, x, gk_strndup(s + from, (size_t)(to - from)));
}

/* (cond (TEST EXPR...) ... (else EXPR...)): the first true clause. */
val gk_sbr_form_cond(ctx *c, const sx *x, const gk_sbr_form *form)
{
    for (size_t i = 1; i < x->n && !c->aborted; i++) {
        const sx *cl = x->v[i];
        if (cl->t != SX_LIST || cl->n == 0) {
            gk_sbr_err(c, gk_sbr_loc(c, cl), "write (TEST EXPR ...)", "a cond clause is a list");
            return gk_sbr_none();
        }
        int t = 1;
        if (!(cl->v[0]->t == SX_SYM && strcmp(cl->v[0]->s, "else") == 0)) {
            val tv = gk_sbr_eval_arg(c, cl->v[0]);
            t = truth(c, &tv, cl->v[0]);
            if (t < 0)
                return gk_sbr_none();
            if (t && cl->n == 1)
                return tv;
        }
        if (t)
            return eval_body(c, cl, 1);
    }
    return gk_sbr_none();
}

val gk_sbr_form_num_p(ctx *c, const sx *x, const gk_sbr_form *form)
{
    if (!gk_sbr_argc_is(c, x, 1, 1, form->name))
        return gk_sbr_none();
    val a = gk_sbr_eval_arg(c, x->v[1]);
    long n;
    if (!need_num(c, &a, x->v[1], form->name, &n))
        return gk_sbr_none();
    const char *w = form->name;
    return bool_val(c, x, w[0] == 'z' ? n == 0 : w[0] == 'p' ? n > 0 : n < 0);
}

/* The rest of Scheme: named, so a profile out of the subset says exactly
 * which construct it needs. */
val gk_sbr_form_unsupported(ctx *c, const sx *x, const gk_sbr_form *form)
{
    gk_sbr_err(c, gk_sbr_loc(c, x->v[0]),
               "grantc(1), SBPL SUBSET, lists what this reader evaluates",
               "'%s' is outside the supported subset of SBPL's Scheme (it needs a full Scheme "
               "interpreter)",
               form->name);
    c->aborted = true; /* what follows may depend on it: stop here */
    return gk_sbr_none();
}

/* ---- forms ------------------------------------------------------------------ */

/* Nearest known name for a misspelled head (error path only: the candidate
 * table is built on demand). */
static char *did_you_mean(const ctx *c, const char *w)
{
    size_t nops = 0;
    const char *const *ops = gk_sb_op_names(&nops);
    size_t n = c->nforms + nops, k = 0;
    const char **all = gk_malloc((n ? n : 1) * sizeof(*all));
    for (size_t i = 0; i < c->nforms; i++)
        all[k++] = c->forms[i].name;
    for (size_t i = 0; i < nops; i++)
        all[k++] = ops[i];
    const char *near = gk_nearest(w, all, k);
    free(all);
    return near ? gk_printf("did you mean '%s'?", near) : NULL;
}

/* A head that names no binding and no built-in form. */
static val unknown_head(ctx *c, const sx *h)
{
    const char *n = h->s;
    if (gk_sb_op_lookup(n) >= 0) {
        gk_sbr_err(c, gk_sbr_loc(c, h), "operations are plain names inside (allow ...) or (deny ...)",
                   "'%s' is an operation, not a procedure", n);
        return gk_sbr_none();
    }
    char *hint = NULL;
    if (c->s->nimports) {
        /* It may be defined there: say so rather than suggest a spelling. */
        gk_autofree char *where = gk_loc_origin(c->s->imports[c->s->nimports - 1].loc);
        hint = gk_printf("the import at %s was not resolved; it may define it", where);
    } else {
        hint = did_you_mean(c, n);
    }
    gk_sbr_err(c, gk_sbr_loc(c, h), hint, "unknown procedure or filter '%s'", n);
    free(hint);
    return gk_sbr_none();
}

/* (HEAD ...): a procedure the profile defined, else a built-in form. */
static val eval_list(ctx *c, const sx *x)
{
    if (x->n == 0) {
        gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "empty list '()' cannot be evaluated");
        return gk_sbr_none();
    }
    const sx *h = x->v[0];
    if (h->t != SX_SYM) {
        gk_sbr_err(c, gk_sbr_loc(c, h), NULL, "cannot evaluate: the head of a form must be a name");
        return gk_sbr_none();
    }
    const binding *b = lookup(c, h->s);
    if (b && b->is_proc)
        return call_proc(c, x, &b->p);
    if (b) {
        gk_sbr_err(c, gk_sbr_loc(c, h), NULL, "'%s' is not a procedure", h->s);
        return gk_sbr_none();
    }
    for (size_t i = 0; i < c->nforms; i++)
        if (strcmp(h->s, c->forms[i].name) == 0)
            return c->forms[i].fn(c, x, &c->forms[i]);
    return unknown_head(c, h);
}

val gk_sbr_eval(ctx *c, const sx *x)
{
    if (!step(c, x))
        return gk_sbr_none();
    val v = gk_sbr_none();
    v.loc = gk_sbr_loc(c, x);
    switch (x->t) {
    case SX_STR:
        v.k = V_STR;
        v.s = x->s;
        v.raw = !x->escaped;
        v.rawoff = 1;
        return v;
    case SX_REGEX:
        v.k = V_REGEX;
        v.s = x->s;
        v.raw = true;
        v.rawoff = 2;
        return v;
    case SX_BOOL:
        v.k = V_BOOL;
        v.b = x->b;
        return v;
    case SX_NUM:
        v.k = V_NUM;
        v.num = x->num;
        return v;
    case SX_SYM: {
        const binding *b = lookup(c, x->s);
        if (b && !b->is_proc)
            return b->v;
        if (b) {
            gk_sbr_err(c, v.loc, NULL, "procedure '%s' used as a value (call it: (%s ...))", x->s,
                   x->s);
            return gk_sbr_none();
        }
        int op = gk_sb_op_lookup(x->s);
        if (op >= 0) {
            v.k = V_OP;
            v.op = op;
            return v;
        }
        if (strcmp(x->s, "tty") == 0) {
            gk_sbr_err(c, v.loc, "write (tty)", "tty is a procedure");
            return gk_sbr_none();
        }
        size_t nops = 0;
        const char *const *ops = gk_sb_op_names(&nops);
        const char *near = gk_nearest(x->s, ops, nops);
        char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
        gk_sbr_err(c, v.loc, hint, "unknown operation or name '%s'", x->s);
        free(hint);
        return gk_sbr_none();
    }
    case SX_LIST:
        return eval_list(c, x);
    }
    return gk_sbr_none();
}

void gk_sbr_eval_file(ctx *c, gk_source *src)
{
    sx *top = gk_sx_read_all(src, c->diags);
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->sources, s->nsources, s->capsources, gk_source_ref(src));
    if (!top) {
        c->failed = true;
        return;
    }
    parsed p = {top, src};
    GK_VEC_PUSH(c->files, c->nfiles, c->capfiles, p);
    c->src = src;
    for (size_t i = 0; i < top->n && !c->aborted; i++) {
        const sx *x = top->v[i];
        if (x->t != SX_LIST) {
            gk_sbr_err(c, gk_sbr_loc(c, x), NULL, "a profile is a sequence of forms like (allow ...)");
            continue;
        }
        gk_sbr_eval(c, x);
        c->src = src;
    }
}
