/* sbpl_read.c - the SBPL reader: text -> datums -> rules.
 *
 * Two stages. The datum reader is a small Scheme reader with byte
 * positions: lists, "strings" (escapes \n \t \r \" \\ \xHH), #"regex"
 * literals (raw: the bytes go to the regex engine as written), symbols,
 * numbers, #t/#f, comments ; and #| |# (nested) and #; (datum comment).
 * The static evaluator then runs the profile the way libsandbox's
 * prelude would, for the part of Scheme real profiles use: version,
 * allow/deny with operations, filters and (with ...) modifiers, define
 * of constants and of procedures (called with their arguments bound),
 * import, param, string-append, regex-quote, if/when/unless/and/or/not,
 * begin. Aliases follow sbpl_v1 (literal = path, prefix = path-prefix,
 * regex = path-regex, from = local, to = remote, no-log = no-report).
 *
 * Filters that only the running system can decide (extension,
 * require-entitlement, xattr, ...) become opaque: the evaluator answers
 * "undecided" when one of them matters. An unresolved param or import is
 * a warning and an unknown too. Everything else it cannot evaluate is an
 * error at its position.
 */
#include "analysis/sbpl.h"
#include "syntax/syntax.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Guards for hostile input (the fuzzer's and anyone's). */
#define MAX_NEST 200          /* list nesting */
#define MAX_CALL_DEPTH 64     /* procedure calls */
#define MAX_IMPORT_DEPTH 16
#define MAX_STEPS 2000000     /* evaluation steps over the whole read */
#define MAX_RULES 200000
#define MAX_FILE (16u << 20)

/* ---- datums ------------------------------------------------------------ */

typedef enum { SX_LIST, SX_STR, SX_REGEX, SX_SYM, SX_BOOL, SX_NUM } sx_type;

typedef struct sx sx;
struct sx {
    sx_type t;
    uint32_t start, end;      /* bytes of the datum in its source */
    char *s;                  /* STR/REGEX/SYM text (decoded for STR) */
    bool escaped;             /* STR: escapes changed the bytes (no 1:1 offsets) */
    long num;
    bool b;
    sx **v;                   /* LIST */
    size_t n, cap;
};

static void sx_free(sx *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++)
        sx_free(x->v[i]);
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

static gk_loc at(gk_source *src, size_t start, size_t end)
{
    gk_loc l = {src, (uint32_t)start, (uint32_t)end};
    return l;
}

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
            sx_free(skip);
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
        default: {
            char msg[64];
            snprintf(msg, sizeof(msg), "unknown escape '\\%c' in string", e);
            rd_error(r, esc, esc + 2, "the escapes are \\n \\t \\r \\\" \\\\ \\xHH", msg);
            gk_buf_free(&b);
            return NULL;
        }
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
    if (p[0] == '\'' || p[0] == '`' || p[0] == ',') {
        rd_error(r, start, start + 1, NULL, "quoting is not supported by this reader");
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
            sx_free(x);
            return NULL;
        }
        if (r->t[r->pos] == ')') {
            r->pos++;
            x->end = (uint32_t)r->pos;
            return x;
        }
        sx *k = read_datum(r, depth + 1);
        if (!k) {
            sx_free(x);
            return NULL;
        }
        GK_VEC_PUSH(x->v, x->n, x->cap, k);
    }
}

/* Every top-level datum; NULL (with errors in diags) on a syntax error. */
static sx *read_all(gk_source *src, grant_diags *diags)
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
        sx_free(top);
        return NULL;
    }
    top->end = (uint32_t)src->len;
    return top;
}

/* ---- values and environment ---------------------------------------------- */

typedef enum { V_NONE, V_BOOL, V_NUM, V_STR, V_REGEX, V_OP, V_FILTER, V_MOD, V_UNRES } vkind;

typedef struct val {
    vkind k;
    gk_loc loc;               /* where it was written */
    const char *s;            /* STR, REGEX; UNRES: the param's name */
    bool raw;                 /* s is the source bytes at loc.start + rawoff */
    unsigned rawoff;
    long num;
    bool b;
    int op;
    gk_sb_filter *f;
    unsigned mod;
} val;

typedef struct proc {
    const char *name;
    const sx *def;            /* (define (name p...) body...) */
    gk_source *src;
} proc;

typedef struct binding {
    const char *name;
    bool is_proc;
    val v;
    proc p;
} binding;

typedef struct scope {
    struct scope *up;
    binding *b;
    size_t n;
} scope;

typedef struct parsed {
    sx *top;
    gk_source *src;
} parsed;

typedef struct ctx {
    grant_sbpl *s;
    grant_diags *diags;
    const char *const *params;
    size_t nparams;
    unsigned flags;
    gk_source *src;           /* the file being evaluated */
    binding *globals;
    size_t nglobals, capglobals;
    scope *locals;
    int in_args;              /* >0: evaluating an argument (no rules here) */
    int call_depth;
    gk_loc via;               /* outermost call at rule level */
    bool version_seen;        /* in the current file */
    bool any_version;
    long version;
    unsigned long steps;
    bool failed, aborted;
    char **import_stack;      /* real paths being imported (cycles) */
    size_t nimport;
    parsed *files;            /* datums live until the end: procedures point into them */
    size_t nfiles, capfiles;
} ctx;

static void *arena(ctx *c, void *p)
{
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->arena, s->narena, s->caparena, p);
    return p;
}

static char *arena_str(ctx *c, const char *s)
{
    return arena(c, gk_strdup(s));
}

static gk_loc loc_of(ctx *c, const sx *x)
{
    return at(c->src, x->start, x->end);
}

static void err_at(ctx *c, gk_loc loc, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_at(ctx *c, gk_loc loc, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = gk_vprintf(fmt, ap);
    va_end(ap);
    gk_diag_add(c->diags, GK_ERROR, loc, hint, "%s", m);
    free(m);
    c->failed = true;
}

static val none(void)
{
    val v;
    memset(&v, 0, sizeof(v));
    return v;
}

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
    f->str = arena_str(c, why);
    return f;
}

/* ---- names ---------------------------------------------------------------- */

static const char *const opaque_filters[] = {
    "extension", "require-entitlement", "entitlement-value", "entitlement-value-regex",
    "xattr", "xattr-prefix", "xattr-regex", "file-mode", "file-attribute", "socket-domain",
    "socket-type", "socket-protocol", "control-name", "iokit-registry-entry-class",
    "iokit-registry-entry-class-regex", "iokit-user-client-class", "iokit-user-client-class-regex",
    "iokit-property", "iokit-connection", "process-path", "process-attribute", "process-name",
    "signing-identifier", "appleevent-destination", "preference-domain", "ipc-posix-name",
    "ipc-posix-name-prefix", "ipc-posix-name-regex", "device-major", "device-minor",
    "device-conforms-to", "mount-relative-path", "mount-relative-path-regex",
    "mount-relative-literal", "mount-relative-regex", "debug-mode", "system-attribute",
    "state-flag", "notification-name", "info-type", "kext-bundle-id", "right-name",
    "ioctl-command", "fsctl-command", "storage-class", "uid", "semaphore-owner",
    "require-ancestor-with-entitlement", "csr", "host-special-port", "task-special-port",
    "container", "executable-bundle", "application-group", "system-container", "system-group",
    "process-is-plugin", "process-is-installer", "home-subpath", "home-literal", "home-prefix",
    "home-regex", "sandbox-extension", "granted-extensions", "mach-extension", "fs-type",
};

static const char *const modifiers[] = {
    "message", "report", "no-report", "no-log", "send-signal", "deprecated", "rootless",
    "user-approval", "no-approval-prompt", "telemetry", "no-times", "authority",
};

static const char *const builtins[] = {
    "version", "allow", "deny", "define", "import", "param", "getenv", "string-append",
    "regex-quote", "if", "when", "unless", "not", "and", "or", "begin", "with", "debug", "trace",
    "require-any", "require-all", "require-not", "literal", "path", "path-literal", "subpath",
    "prefix", "path-prefix", "regex", "path-regex", "vnode-type", "tty", "global-name",
    "global-name-regex", "local-name", "local-name-regex", "sysctl-name", "sysctl-name-prefix",
    "sysctl-name-regex", "target", "remote", "local", "to", "from",
};

#define N(a) (sizeof(a) / sizeof(*(a)))

static bool in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, l[i]) == 0)
            return true;
    return false;
}

/* Nearest known name for a misspelled head or operation (error path only:
 * the candidate table is built on demand). */
static const char *nearest_name(const char *w)
{
    size_t nops = 0;
    const char *const *ops = gk_sb_op_names(&nops);
    size_t n = N(builtins) + N(opaque_filters) + nops, k = 0;
    const char **all = gk_malloc(n * sizeof(*all));
    for (size_t i = 0; i < N(builtins); i++)
        all[k++] = builtins[i];
    for (size_t i = 0; i < N(opaque_filters); i++)
        all[k++] = opaque_filters[i];
    for (size_t i = 0; i < nops; i++)
        all[k++] = ops[i];
    const char *near = gk_nearest(w, all, k);
    free(all);
    return near;
}

static char *did_you_mean(const char *w)
{
    const char *n = nearest_name(w);
    return n ? gk_printf("did you mean '%s'?", n) : NULL;
}

/* ---- the form's text, for answers ---------------------------------------- */

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

/* ---- evaluation --------------------------------------------------------------- */

static val eval(ctx *c, const sx *x);

static bool step(ctx *c, const sx *x)
{
    if (c->aborted)
        return false;
    if (++c->steps > MAX_STEPS) {
        err_at(c, loc_of(c, x), NULL, "the profile takes too long to evaluate (recursion?)");
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

static const char *param_value(ctx *c, const char *name)
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

/* Evaluate an argument (no rules may be produced while doing so). */
static val eval_arg(ctx *c, const sx *x)
{
    c->in_args++;
    val v = eval(c, x);
    c->in_args--;
    return v;
}

static void record_unresolved_param(ctx *c, const val *v)
{
    grant_sbpl *s = c->s;
    for (size_t i = 0; i < s->nparams; i++)
        if (s->params[i].loc.src == v->loc.src && s->params[i].loc.start == v->loc.start)
            return;
    gk_sb_unresolved u = {v->loc, arena_str(c, v->s)};
    GK_VEC_PUSH(s->params, s->nparams, s->capparams, u);
    gk_diag_add(c->diags, GK_WARNING, v->loc, "give it with -D NAME=VALUE",
                "param \"%s\" has no value: what depends on it is undecided", v->s);
}

/* A string operand; NULL (and *unres set) for an unresolved param; NULL
 * with an error for anything else. */
static const char *need_string(ctx *c, const val *v, const sx *x, const char *what, bool *unres)
{
    *unres = false;
    if (v->k == V_STR)
        return v->s;
    if (v->k == V_UNRES) {
        record_unresolved_param(c, v);
        *unres = true;
        return NULL;
    }
    if (!c->failed || v->k != V_NONE)
        err_at(c, loc_of(c, x), NULL, "%s needs a string here", what);
    return NULL;
}

static val filter_val(gk_sb_filter *f)
{
    val v = none();
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
        record_unresolved_param(c, v);
        char *why = gk_printf("param \"%s\" has no value", v->s);
        gk_sb_filter *f = opaque(c, v->loc, why);
        free(why);
        return f;
    }
    if (!c->failed || v->k != V_NONE)
        err_at(c, loc_of(c, x), NULL, "%s needs a filter here", what);
    return NULL;
}

static bool argc_is(ctx *c, const sx *x, size_t lo, size_t hi, const char *name)
{
    size_t n = x->n - 1;
    if (n >= lo && n <= hi)
        return true;
    if (lo == hi)
        err_at(c, loc_of(c, x), NULL, "(%s ...) takes %zu argument%s, not %zu", name, lo,
               lo == 1 ? "" : "s", n);
    else if (hi == SIZE_MAX)
        err_at(c, loc_of(c, x), NULL, "(%s ...) takes at least %zu argument%s", name, lo,
               lo == 1 ? "" : "s");
    else
        err_at(c, loc_of(c, x), NULL, "(%s ...) takes %zu to %zu arguments, not %zu", name, lo,
               hi, n);
    return false;
}

/* literal, subpath, prefix: one absolute path. */
static val path_filter(ctx *c, const sx *x, gk_sb_fkind k, const char *name)
{
    if (!argc_is(c, x, 1, 1, name))
        return none();
    val a = eval_arg(c, x->v[1]);
    bool unres;
    const char *p = need_string(c, &a, x->v[1], name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a.s);
        val v = filter_val(opaque(c, loc_of(c, x), why));
        free(why);
        return v;
    }
    if (!p)
        return none();
    if (p[0] != '/') {
        err_at(c, a.loc.src ? a.loc : loc_of(c, x->v[1]), "Seatbelt compares absolute paths",
               "(%s ...) needs an absolute path, not \"%s\"", name, p);
        return none();
    }
    gk_sb_filter *f = new_filter(c, k, loc_of(c, x));
    f->str = arena_str(c, p);
    return filter_val(f);
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
        pat = need_string(c, a, argx, name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a->s);
        gk_sb_filter *f = opaque(c, loc_of(c, form), why);
        free(why);
        return f;
    }
    if (!pat)
        return NULL;
    char *err = NULL;
    size_t off = 0;
    void *re = gk_sb_regex_compile(pat, &err, &off);
    if (!re) {
        gk_loc l = a->loc.src ? a->loc : loc_of(c, argx);
        if (a->raw && a->loc.src) {
            l.start = a->loc.start + a->rawoff + (uint32_t)off;
            l.end = l.start + 1;
        }
        err_at(c, l, NULL, "%s", err);
        free(err);
        return NULL;
    }
    gk_sb_filter *f = new_filter(c, k, loc_of(c, form));
    f->str = arena_str(c, pat);
    f->re = re;
    /* Every compiled regex is listed once: freed from here, linted too. */
    grant_sbpl *s = c->s;
    GK_VEC_PUSH(s->regexes, s->nregexes, s->capregexes, f);
    return f;
}

static val regex_filters(ctx *c, const sx *x, gk_sb_fkind k, const char *name)
{
    if (!argc_is(c, x, 1, SIZE_MAX, name))
        return none();
    gk_sb_filter *any = x->n > 2 ? new_filter(c, GK_SBF_ANY, loc_of(c, x)) : NULL;
    gk_sb_filter *one = NULL;
    for (size_t i = 1; i < x->n; i++) {
        val a = eval_arg(c, x->v[i]);
        one = regex_filter(c, x, x->v[i], &a, k, name);
        if (!one)
            return none();
        if (any)
            add_kid(c, any, one);
    }
    return filter_val(any ? any : one);
}

static val name_filter(ctx *c, const sx *x, gk_sb_fkind k, const char *name)
{
    if (!argc_is(c, x, 1, 1, name))
        return none();
    val a = eval_arg(c, x->v[1]);
    bool unres;
    const char *s = need_string(c, &a, x->v[1], name, &unres);
    if (unres) {
        char *why = gk_printf("param \"%s\" has no value", a.s);
        val v = filter_val(opaque(c, loc_of(c, x), why));
        free(why);
        return v;
    }
    if (!s)
        return none();
    gk_sb_filter *f = new_filter(c, k, loc_of(c, x));
    f->str = arena_str(c, s);
    return filter_val(f);
}

static val vnode_filter(ctx *c, const sx *x)
{
    if (!argc_is(c, x, 1, SIZE_MAX, "vnode-type"))
        return none();
    gk_sb_filter *f = new_filter(c, GK_SBF_VNODE, loc_of(c, x));
    for (size_t i = 1; i < x->n; i++) {
        const sx *a = x->v[i];
        int t = a->t == SX_SYM ? gk_sb_vnode_lookup(a->s) : -1;
        if (t < 0) {
            err_at(c, loc_of(c, a),
                   "the types are REGULAR-FILE DIRECTORY SYMLINK FIFO SOCKET "
                   "CHARACTER-DEVICE BLOCK-DEVICE TTY",
                   "unknown vnode type");
            return none();
        }
        f->vnodes |= 1u << t;
    }
    c->s->uses_vnode = true;
    return filter_val(f);
}

static val target_filter(ctx *c, const sx *x)
{
    static const char *const targets[] = {"self", "same-sandbox", "others", "children", "pgrp",
                                          "parent"};
    if (!argc_is(c, x, 1, 1, "target"))
        return none();
    const sx *a = x->v[1];
    if (a->t != SX_SYM || !in_list(a->s, targets, N(targets))) {
        err_at(c, loc_of(c, a), "the targets are self same-sandbox others children pgrp parent",
               "unknown signal target");
        return none();
    }
    gk_sb_filter *f = new_filter(c, GK_SBF_TARGET, loc_of(c, x));
    f->str = arena_str(c, a->s);
    return filter_val(f);
}

/* "HOST:PORT" of an ip filter: HOST is * or localhost, PORT * or 1-65535. */
static bool parse_hostport(ctx *c, gk_sb_filter *f, const char *s, gk_loc loc)
{
    const char *colon = strrchr(s, ':');
    if (!colon) {
        err_at(c, loc, "write \"HOST:PORT\", e.g. \"localhost:8080\" or \"*:443\"",
               "network address \"%s\" has no port", s);
        return false;
    }
    char *host = gk_strndup(s, (size_t)(colon - s));
    const char *port = colon + 1;
    bool ok = strcmp(host, "*") == 0 || strcmp(host, "localhost") == 0;
    if (!ok) {
        err_at(c, loc, "use a proxy or a firewall for other hosts",
               "Seatbelt accepts only '*' or 'localhost' as host, not \"%s\"", host);
        free(host);
        return false;
    }
    f->host = arena(c, host);
    if (strcmp(port, "*") == 0) {
        f->port = -1;
        return true;
    }
    char *end = NULL;
    errno = 0;
    long p = port[0] >= '0' && port[0] <= '9' ? strtol(port, &end, 10) : -1;
    if (p < 1 || p > 65535 || errno || !end || *end) {
        err_at(c, loc, NULL, "bad port \"%s\" (a number 1-65535, or *)", port);
        return false;
    }
    f->port = (int)p;
    return true;
}

static val net_filter(ctx *c, const sx *x, gk_sb_fkind k, const char *name)
{
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
    if (!argc_is(c, x, 1, 2, name))
        return none();
    const sx *p = x->v[1];
    size_t form = N(forms);
    for (size_t i = 0; p->t == SX_SYM && i < N(forms); i++)
        if (strcmp(p->s, forms[i].name) == 0)
            form = i;
    if (form == N(forms)) {
        err_at(c, loc_of(c, p), "the forms are ip ip4 ip6 tcp tcp4 tcp6 udp udp4 udp6 unix-socket",
               "unknown network address form");
        return none();
    }
    gk_sb_filter *f = new_filter(c, k, loc_of(c, x));
    f->protos = forms[form].protos;
    f->fams = forms[form].fams;
    if (f->protos == GK_SB_PROTO_UNIX) {
        if (x->n != 3) {
            err_at(c, loc_of(c, x), "e.g. (remote unix-socket (path-literal \"/var/run/s\"))",
                   "(%s unix-socket ...) needs a path filter", name);
            return none();
        }
        val a = eval_arg(c, x->v[2]);
        gk_sb_filter *pf = need_filter(c, &a, x->v[2], name);
        if (!pf)
            return none();
        add_kid(c, f, pf);
        return filter_val(f);
    }
    f->host = arena_str(c, "*");
    f->port = -1;
    if (x->n == 3) {
        val a = eval_arg(c, x->v[2]);
        bool unres;
        const char *s = need_string(c, &a, x->v[2], name, &unres);
        if (unres) {
            char *why = gk_printf("param \"%s\" has no value", a.s);
            val v = filter_val(opaque(c, loc_of(c, x), why));
            free(why);
            return v;
        }
        if (!s || !parse_hostport(c, f, s, a.loc.src ? a.loc : loc_of(c, x->v[2])))
            return none();
        f->str = arena_str(c, s);
    } else {
        f->str = arena_str(c, "*:*");
    }
    return filter_val(f);
}

static val logic_filter(ctx *c, const sx *x, gk_sb_fkind k, const char *name)
{
    if (k == GK_SBF_NOT && !argc_is(c, x, 1, 1, name))
        return none();
    gk_sb_filter *f = new_filter(c, k, loc_of(c, x));
    for (size_t i = 1; i < x->n; i++) {
        val a = eval_arg(c, x->v[i]);
        gk_sb_filter *kid = need_filter(c, &a, x->v[i], name);
        if (!kid)
            return none();
        add_kid(c, f, kid);
    }
    return filter_val(f);
}

static val eval_with(ctx *c, const sx *x)
{
    if (!argc_is(c, x, 1, SIZE_MAX, "with"))
        return none();
    const sx *m = x->v[1];
    if (m->t != SX_SYM || !in_list(m->s, modifiers, N(modifiers))) {
        const char *near = m->t == SX_SYM ? gk_nearest(m->s, modifiers, N(modifiers)) : NULL;
        char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
        err_at(c, loc_of(c, m), hint, "unknown modifier in (with ...)");
        free(hint);
        return none();
    }
    val v = none();
    v.k = V_MOD;
    v.loc = loc_of(c, x);
    const char *n = m->s;
    v.mod = strcmp(n, "report") == 0                                 ? GK_SBM_REPORT
            : strcmp(n, "no-report") == 0 || strcmp(n, "no-log") == 0 ? GK_SBM_NO_REPORT
            : strcmp(n, "message") == 0                               ? GK_SBM_MESSAGE
            : strcmp(n, "send-signal") == 0                           ? GK_SBM_SEND_SIGNAL
                                                                      : GK_SBM_OTHER;
    if (v.mod == GK_SBM_MESSAGE) {
        if (!argc_is(c, x, 2, 2, "with message"))
            return none();
        val a = eval_arg(c, x->v[2]);
        bool unres;
        if (!need_string(c, &a, x->v[2], "(with message ...)", &unres) && !unres)
            return none();
    }
    return v;
}

static void add_rule(ctx *c, gk_sb_rule *r)
{
    grant_sbpl *s = c->s;
    if (s->n >= MAX_RULES) {
        if (!c->aborted)
            err_at(c, r->loc, NULL, "too many rules (more than %d)", MAX_RULES);
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
    err_at(c, loc_of(c, x), "rules go at the top level or in a procedure called there",
           "%s cannot appear inside an argument", what);
    return false;
}

/* allow, deny, import and param come with sbpl_v1, which (version 1)
 * loads: before it they do not exist. */
static bool need_version(ctx *c, const sx *x)
{
    if (c->any_version)
        return true;
    err_at(c, loc_of(c, x), "start the profile with (version 1)",
           "(version 1) must come before the first rule");
    c->any_version = true; /* once */
    return false;
}

static val eval_rule(ctx *c, const sx *x, gk_sb_action action)
{
    const char *name = action == GK_SB_ALLOW ? "allow" : "deny";
    if (!rule_context(c, x, name) || !need_version(c, x))
        return none();
    gk_sb_rule r;
    memset(&r, 0, sizeof(r));
    r.action = action;
    r.loc = loc_of(c, x);
    r.via = c->via;
    gk_sb_filter *top = new_filter(c, GK_SBF_ANY, loc_of(c, x));
    size_t capops = 0;
    bool ok = true;
    for (size_t i = 1; i < x->n && ok; i++) {
        const sx *a = x->v[i];
        val v = eval_arg(c, a);
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
                err_at(c, loc_of(c, a), NULL,
                       "(%s ...) takes operations, filters and (with ...) modifiers", name);
            ok = false;
        }
    }
    if (ok && r.nops == 0) {
        err_at(c, loc_of(c, x), "e.g. (allow file-read* (subpath \"/usr\"))",
               "(%s ...) names no operation", name);
        ok = false;
    }
    if (!ok) {
        free(r.ops);
        return none();
    }
    r.filter = top->nkids == 0 ? NULL : top->nkids == 1 ? top->kids[0] : top;
    r.text = form_text(c->src, x->start, x->end);
    add_rule(c, &r);
    return none();
}

static val eval_string_append(ctx *c, const sx *x)
{
    gk_buf b = {0};
    val out = none();
    out.k = V_STR;
    out.loc = loc_of(c, x);
    for (size_t i = 1; i < x->n; i++) {
        val a = eval_arg(c, x->v[i]);
        if (a.k == V_UNRES) {
            gk_buf_free(&b);
            return a; /* the whole string is unknown */
        }
        if (a.k != V_STR) {
            if (!c->failed || a.k != V_NONE)
                err_at(c, loc_of(c, x->v[i]), NULL, "string-append takes strings");
            gk_buf_free(&b);
            return none();
        }
        gk_buf_puts(&b, a.s);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    out.s = arena(c, gk_buf_steal(&b, NULL));
    return out;
}

static val eval_regex_quote(ctx *c, const sx *x)
{
    if (!argc_is(c, x, 1, 1, "regex-quote"))
        return none();
    val a = eval_arg(c, x->v[1]);
    if (a.k == V_UNRES)
        return a;
    bool unres;
    const char *s = need_string(c, &a, x->v[1], "regex-quote", &unres);
    if (!s)
        return none();
    gk_buf b = {0};
    for (const char *p = s; *p; p++) {
        if (strchr("^.[$()|*+?{\\", *p))
            gk_buf_putc(&b, '\\');
        gk_buf_putc(&b, *p);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    val v = none();
    v.k = V_STR;
    v.loc = loc_of(c, x);
    v.s = arena(c, gk_buf_steal(&b, NULL));
    return v;
}

/* Truth of a condition value; -1 (with an error) when it has none offline. */
static int truth(ctx *c, const val *v, const sx *x)
{
    switch (v->k) {
    case V_BOOL:
        return v->b;
    case V_UNRES:
        return 0; /* (param "X") is #f when X was not given */
    case V_FILTER:
        err_at(c, loc_of(c, x), NULL,
               "this condition depends on the running process; it cannot be evaluated offline");
        return -1;
    case V_NONE:
        if (!c->failed)
            err_at(c, loc_of(c, x), NULL, "this condition has no value");
        return -1;
    default:
        return 1;
    }
}

static val eval_body(ctx *c, const sx *x, size_t from)
{
    val last = none();
    for (size_t i = from; i < x->n && !c->aborted; i++)
        last = eval(c, x->v[i]);
    return last;
}

static val eval_define(ctx *c, const sx *x)
{
    if (c->locals || c->in_args) {
        err_at(c, loc_of(c, x), NULL, "define is supported only at the top level");
        return none();
    }
    if (!argc_is(c, x, 2, SIZE_MAX, "define"))
        return none();
    const sx *target = x->v[1];
    binding b;
    memset(&b, 0, sizeof(b));
    if (target->t == SX_SYM) {
        if (x->n != 3) {
            err_at(c, loc_of(c, x), NULL, "(define NAME VALUE) takes one value");
            return none();
        }
        b.name = target->s;
        b.v = eval_arg(c, x->v[2]);
        if (b.v.k == V_NONE)
            return none();
    } else if (target->t == SX_LIST && target->n >= 1 && target->v[0]->t == SX_SYM) {
        for (size_t i = 1; i < target->n; i++)
            if (target->v[i]->t != SX_SYM || strcmp(target->v[i]->s, ".") == 0) {
                err_at(c, loc_of(c, target->v[i]), NULL,
                       "procedure parameters must be plain names");
                return none();
            }
        b.name = target->v[0]->s;
        b.is_proc = true;
        b.p.name = b.name;
        b.p.def = x;
        b.p.src = c->src;
    } else {
        err_at(c, loc_of(c, target), NULL, "define needs a name or (NAME PARAM...)");
        return none();
    }
    GK_VEC_PUSH(c->globals, c->nglobals, c->capglobals, b);
    return none();
}

static val call_proc(ctx *c, const sx *x, const proc *p)
{
    const sx *sig = p->def->v[1];
    size_t want = sig->n - 1, got = x->n - 1;
    if (want != got) {
        err_at(c, loc_of(c, x), NULL, "'%s' takes %zu argument%s, not %zu", p->name, want,
               want == 1 ? "" : "s", got);
        return none();
    }
    if (c->call_depth >= MAX_CALL_DEPTH) {
        err_at(c, loc_of(c, x), NULL, "procedure calls nest too deeply (recursion?)");
        c->aborted = true;
        return none();
    }
    /* Lexical scope: procedures are defined at the top level, so the body
     * sees its parameters and the globals, never the caller's locals. */
    scope fr = {NULL, gk_calloc(want ? want : 1, sizeof(binding)), want};
    for (size_t i = 0; i < want; i++) {
        fr.b[i].name = sig->v[i + 1]->s;
        fr.b[i].v = eval_arg(c, x->v[i + 1]);
    }
    /* The body runs in the procedure's file, at the caller's rule level. */
    gk_source *saved_src = c->src;
    gk_loc saved_via = c->via;
    scope *saved_locals = c->locals;
    if (!c->via.src && c->in_args == 0)
        c->via = loc_of(c, x);
    c->src = p->src;
    c->locals = &fr;
    c->call_depth++;
    val r = eval_body(c, p->def, 2);
    c->call_depth--;
    c->locals = saved_locals;
    c->src = saved_src;
    c->via = saved_via;
    free(fr.b);
    return r;
}

static void eval_file(ctx *c, gk_source *src);

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
    gk_sb_unresolved u = {loc_of(c, x), arena_str(c, name)};
    GK_VEC_PUSH(s->imports, s->nimports, s->capimports, u);
    gk_diag_add(c->diags, GK_WARNING, loc_of(c, x),
                "put the file beside the profile, or give -D IMPORT_DIR=DIR",
                "import \"%s\" %s: what it could decide is undecided", name, why);
    gk_sb_rule r;
    memset(&r, 0, sizeof(r));
    r.action = GK_SB_UNRESOLVED;
    r.ops = gk_malloc(sizeof(int));
    r.ops[0] = 0; /* default: the root, so it covers every operation */
    r.nops = 1;
    r.loc = loc_of(c, x);
    r.via = c->via;
    r.text = form_text(c->src, x->start, x->end);
    add_rule(c, &r);
}

static val eval_import(ctx *c, const sx *x)
{
    if (!rule_context(c, x, "import") || !need_version(c, x) || !argc_is(c, x, 1, 1, "import"))
        return none();
    val a = eval_arg(c, x->v[1]);
    if (a.k == V_UNRES) {
        record_unresolved_param(c, &a);
        char *n = gk_printf("(param \"%s\")", a.s);
        unresolved_import(c, x, n, "names a param without a value");
        free(n);
        return none();
    }
    bool unres;
    const char *name = need_string(c, &a, x->v[1], "import", &unres);
    if (!name)
        return none();
    if (c->flags & GRANT_SBPL_NO_IMPORT) {
        unresolved_import(c, x, name, "was not read (imports are off)");
        return none();
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
        const char *idir = param_value(c, "IMPORT_DIR");
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
        return none();
    }
    char *real = realpath(found, NULL);
    if (!real)
        real = gk_strdup(found);
    for (size_t i = 0; i < c->nimport; i++)
        if (strcmp(c->import_stack[i], real) == 0) {
            err_at(c, loc_of(c, x), NULL, "import cycle: \"%s\" imports itself", name);
            free(real);
            free(found);
            return none();
        }
    if (c->nimport >= MAX_IMPORT_DEPTH) {
        err_at(c, loc_of(c, x), NULL, "imports nest too deeply");
        free(real);
        free(found);
        return none();
    }
    char *text = NULL;
    size_t len = 0;
    int rc = gk_read_file(found, &text, &len);
    if (rc < 0 || len > MAX_FILE) {
        err_at(c, loc_of(c, x), NULL, "cannot read import \"%s\": %s", found,
               rc < 0 ? strerror(-rc) : "file too large");
        free(text);
        free(real);
        free(found);
        return none();
    }
    gk_source *src = gk_source_new(found, text, len);
    free(text);
    free(found);
    c->import_stack = gk_realloc(c->import_stack, (c->nimport + 1) * sizeof(char *));
    c->import_stack[c->nimport++] = real;
    gk_source *saved = c->src;
    bool saved_version = c->version_seen;
    c->version_seen = false;
    eval_file(c, src);
    c->version_seen = saved_version;
    c->src = saved;
    free(c->import_stack[--c->nimport]);
    gk_source_unref(src); /* the profile holds its own reference */
    return none();
}

static val eval_version(ctx *c, const sx *x)
{
    if (!argc_is(c, x, 1, 1, "version"))
        return none();
    const sx *a = x->v[1];
    if (a->t != SX_NUM || a->num != 1) {
        err_at(c, loc_of(c, a), "write (version 1)", "unsupported SBPL version (only 1 exists)");
        c->any_version = true; /* one error, not one per rule after it */
        return none();
    }
    if (c->version_seen) {
        err_at(c, loc_of(c, x), NULL, "only one (version ...) may be given");
        return none();
    }
    c->version_seen = c->any_version = true;
    return none();
}

static val eval_list(ctx *c, const sx *x)
{
    if (x->n == 0) {
        err_at(c, loc_of(c, x), NULL, "empty list '()' cannot be evaluated");
        return none();
    }
    const sx *h = x->v[0];
    if (h->t != SX_SYM) {
        err_at(c, loc_of(c, h), NULL, "cannot evaluate: the head of a form must be a name");
        return none();
    }
    const char *n = h->s;
    const binding *b = lookup(c, n);
    if (b && b->is_proc)
        return call_proc(c, x, &b->p);
    if (b) {
        err_at(c, loc_of(c, h), NULL, "'%s' is not a procedure", n);
        return none();
    }
    if (strcmp(n, "version") == 0)
        return eval_version(c, x);
    if (strcmp(n, "allow") == 0)
        return eval_rule(c, x, GK_SB_ALLOW);
    if (strcmp(n, "deny") == 0)
        return eval_rule(c, x, GK_SB_DENY);
    if (strcmp(n, "define") == 0)
        return eval_define(c, x);
    if (strcmp(n, "import") == 0)
        return eval_import(c, x);
    if (strcmp(n, "param") == 0 || strcmp(n, "getenv") == 0) {
        if (!need_version(c, x) || !argc_is(c, x, 1, 1, n))
            return none();
        val a = eval_arg(c, x->v[1]);
        bool unres;
        const char *key = need_string(c, &a, x->v[1], n, &unres);
        if (!key)
            return none();
        const char *value = param_value(c, key);
        val v = none();
        v.loc = loc_of(c, x);
        v.k = value ? V_STR : V_UNRES;
        v.s = arena_str(c, value ? value : key);
        return v;
    }
    if (strcmp(n, "string-append") == 0)
        return eval_string_append(c, x);
    if (strcmp(n, "regex-quote") == 0)
        return eval_regex_quote(c, x);
    if (strcmp(n, "if") == 0 || strcmp(n, "when") == 0 || strcmp(n, "unless") == 0) {
        bool is_if = n[0] == 'i';
        if (!argc_is(c, x, 2, is_if ? 3 : SIZE_MAX, n))
            return none();
        val cv = eval_arg(c, x->v[1]);
        int t = truth(c, &cv, x->v[1]);
        if (t < 0)
            return none();
        if (n[0] == 'u')
            t = !t;
        if (is_if)
            return t ? eval(c, x->v[2]) : x->n == 4 ? eval(c, x->v[3]) : none();
        return t ? eval_body(c, x, 2) : none();
    }
    if (strcmp(n, "not") == 0) {
        if (!argc_is(c, x, 1, 1, "not"))
            return none();
        val a = eval_arg(c, x->v[1]);
        int t = truth(c, &a, x->v[1]);
        if (t < 0)
            return none();
        val v = none();
        v.k = V_BOOL;
        v.b = !t;
        v.loc = loc_of(c, x);
        return v;
    }
    if (strcmp(n, "and") == 0 || strcmp(n, "or") == 0) {
        bool is_and = n[0] == 'a';
        val v = none();
        v.k = V_BOOL;
        v.b = is_and;
        v.loc = loc_of(c, x);
        for (size_t i = 1; i < x->n; i++) {
            val a = eval_arg(c, x->v[i]);
            int t = truth(c, &a, x->v[i]);
            if (t < 0)
                return none();
            v = a;
            if (is_and ? !t : t)
                break;
        }
        return v;
    }
    if (strcmp(n, "begin") == 0)
        return eval_body(c, x, 1);
    if (strcmp(n, "with") == 0)
        return eval_with(c, x);
    if (strcmp(n, "debug") == 0 || strcmp(n, "trace") == 0)
        return none(); /* sbpl_v1: no effect on decisions */
    if (strcmp(n, "require-any") == 0)
        return logic_filter(c, x, GK_SBF_ANY, n);
    if (strcmp(n, "require-all") == 0)
        return logic_filter(c, x, GK_SBF_ALL, n);
    if (strcmp(n, "require-not") == 0)
        return logic_filter(c, x, GK_SBF_NOT, n);
    if (strcmp(n, "literal") == 0 || strcmp(n, "path") == 0 || strcmp(n, "path-literal") == 0)
        return path_filter(c, x, GK_SBF_LITERAL, n);
    if (strcmp(n, "subpath") == 0)
        return path_filter(c, x, GK_SBF_SUBPATH, n);
    if (strcmp(n, "prefix") == 0 || strcmp(n, "path-prefix") == 0)
        return path_filter(c, x, GK_SBF_PREFIX, n);
    if (strcmp(n, "regex") == 0 || strcmp(n, "path-regex") == 0)
        return regex_filters(c, x, GK_SBF_REGEX, n);
    if (strcmp(n, "vnode-type") == 0)
        return vnode_filter(c, x);
    if (strcmp(n, "tty") == 0) {
        if (!argc_is(c, x, 0, 0, n))
            return none();
        gk_sb_filter *f = new_filter(c, GK_SBF_VNODE, loc_of(c, x));
        f->vnodes = 1u << GK_SB_VNODE_TTY;
        c->s->uses_vnode = true;
        return filter_val(f);
    }
    if (strcmp(n, "global-name") == 0)
        return name_filter(c, x, GK_SBF_GLOBAL_NAME, n);
    if (strcmp(n, "local-name") == 0)
        return name_filter(c, x, GK_SBF_LOCAL_NAME, n);
    if (strcmp(n, "global-name-regex") == 0)
        return regex_filters(c, x, GK_SBF_GLOBAL_NAME_REGEX, n);
    if (strcmp(n, "local-name-regex") == 0)
        return regex_filters(c, x, GK_SBF_LOCAL_NAME_REGEX, n);
    if (strcmp(n, "sysctl-name") == 0)
        return name_filter(c, x, GK_SBF_SYSCTL_NAME, n);
    if (strcmp(n, "sysctl-name-prefix") == 0)
        return name_filter(c, x, GK_SBF_SYSCTL_PREFIX, n);
    if (strcmp(n, "sysctl-name-regex") == 0)
        return regex_filters(c, x, GK_SBF_SYSCTL_REGEX, n);
    if (strcmp(n, "target") == 0)
        return target_filter(c, x);
    if (strcmp(n, "remote") == 0 || strcmp(n, "to") == 0)
        return net_filter(c, x, GK_SBF_REMOTE, n);
    if (strcmp(n, "local") == 0 || strcmp(n, "from") == 0)
        return net_filter(c, x, GK_SBF_LOCAL, n);
    if (in_list(n, opaque_filters, N(opaque_filters))) {
        char *why = gk_printf("(%s ...) is decided by the running system", n);
        val v = filter_val(opaque(c, loc_of(c, x), why));
        free(why);
        return v;
    }
    if (gk_sb_op_lookup(n) >= 0) {
        err_at(c, loc_of(c, h), "operations are plain names inside (allow ...) or (deny ...)",
               "'%s' is an operation, not a procedure", n);
        return none();
    }
    char *hint = NULL;
    if (c->s->nimports) {
        /* It may be defined there: say so rather than suggest a spelling. */
        gk_autofree char *where = gk_loc_origin(c->s->imports[c->s->nimports - 1].loc);
        hint = gk_printf("the import at %s was not resolved; it may define it", where);
    } else {
        hint = did_you_mean(n);
    }
    err_at(c, loc_of(c, h), hint, "unknown procedure or filter '%s'", n);
    free(hint);
    return none();
}

static val eval(ctx *c, const sx *x)
{
    if (!step(c, x))
        return none();
    val v = none();
    v.loc = loc_of(c, x);
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
            err_at(c, v.loc, NULL, "procedure '%s' used as a value (call it: (%s ...))", x->s,
                   x->s);
            return none();
        }
        int op = gk_sb_op_lookup(x->s);
        if (op >= 0) {
            v.k = V_OP;
            v.op = op;
            return v;
        }
        if (strcmp(x->s, "tty") == 0) {
            err_at(c, v.loc, "write (tty)", "tty is a procedure");
            return none();
        }
        size_t nops = 0;
        const char *const *ops = gk_sb_op_names(&nops);
        const char *near = gk_nearest(x->s, ops, nops);
        char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
        err_at(c, v.loc, hint, "unknown operation or name '%s'", x->s);
        free(hint);
        return none();
    }
    case SX_LIST:
        return eval_list(c, x);
    }
    return none();
}

static void eval_file(ctx *c, gk_source *src)
{
    sx *top = read_all(src, c->diags);
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
            err_at(c, loc_of(c, x), NULL, "a profile is a sequence of forms like (allow ...)");
            continue;
        }
        eval(c, x);
        c->src = src;
    }
}

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
    c.import_stack = gk_malloc(sizeof(char *));
    c.import_stack[c.nimport++] = real ? real : gk_strdup(src->name ? src->name : "");
    eval_file(&c, src);
    if (!c.failed && !c.any_version)
        err_at(&c, at(src, 0, 0), "start the profile with (version 1)",
               "no (version 1) in profile");
    for (size_t i = 0; i < c.nimport; i++)
        free(c.import_stack[i]);
    free(c.import_stack);
    for (size_t i = 0; i < c.nfiles; i++)
        sx_free(c.files[i].top);
    free(c.files);
    free(c.globals);
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
