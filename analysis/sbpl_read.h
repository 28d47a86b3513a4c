/* sbpl_read.h - the SBPL reader's private interface (sbpl_read*.c).
 *
 * Three files, one way down: sbpl_read.c (the profile builder: filters,
 * modifiers, rules, import, the table of built-in forms, the public entry
 * points) -> sbpl_read_eval.c (the static Scheme evaluator: values, scopes,
 * define, procedure calls, conditionals; it dispatches a form through the
 * table the builder hands it, so it never calls the builder by name) ->
 * sbpl_read_sx.c (text -> datums with byte positions).
 *
 * Ownership: datums (sx) own their text and kids; the evaluator's context
 * owns its bindings and the datums of every file read (procedures point
 * into them) until the read ends; strings that values and filters point to
 * live in the profile's arena.
 */
#ifndef GK_SBPL_READ_H
#define GK_SBPL_READ_H

#include "analysis/sbpl.h"

#include <string.h>

/* Guards for hostile input (the fuzzer's and anyone's). */
#define MAX_NEST 200          /* list nesting */
#define MAX_CALL_DEPTH 64     /* procedure calls */
#define MAX_IMPORT_DEPTH 16
#define MAX_STEPS 2000000     /* evaluation steps over the whole read */
#define MAX_RULES 200000
#define MAX_FILE (16u << 20)

#define N(a) (sizeof(a) / sizeof(*(a)))

/* ---- datums (sbpl_read_sx.c) ------------------------------------------- */

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

static inline gk_loc at(gk_source *src, size_t start, size_t end)
{
    gk_loc l = {src, (uint32_t)start, (uint32_t)end};
    return l;
}

/* Every top-level datum of src, as one list; NULL (with errors in diags)
 * on a syntax error. */
GK_HIDDEN sx *gk_sx_read_all(gk_source *src, grant_diags *diags);
GK_HIDDEN void gk_sx_free(sx *x);

/* ---- values and evaluation (sbpl_read_eval.c) --------------------------- */

typedef struct gk_sbr_form gk_sbr_form;
typedef enum { V_NONE, V_BOOL, V_NUM, V_STR, V_REGEX, V_OP, V_FILTER, V_MOD, V_UNRES, V_SYM, V_LIST } vkind;

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

typedef struct scope scope;

typedef struct proc {
    const char *name;
    const sx *def;            /* (define (name p...) body...), or a named let */
    const sx *params;         /* named let: its ((var init)...) list; else NULL */
    gk_source *src;
    scope *env;               /* named let: the scope it closes over; else NULL */
} proc;

typedef struct binding {
    const char *name;
    bool is_proc;
    val v;
    proc p;
} binding;

struct scope {
    struct scope *up;
    binding *b;
    size_t n;
};

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
    const gk_sbr_form *forms; /* the built-in forms (sbpl_read.c), in hint order */
    size_t nforms;
    gk_sb_filter **with_filters; /* (with-filter F ...) around the rules being read */
    size_t nwith, capwith;
} ctx;

/* A built-in form: its handler gets the form's entry, so aliases share one
 * handler (name is the spelling written, arg a kind or an action). */
struct gk_sbr_form {
    const char *name;
    val (*fn)(ctx *c, const sx *x, const gk_sbr_form *form);
    int arg;
};

static inline bool in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, l[i]) == 0)
            return true;
    return false;
}

GK_HIDDEN void *gk_sbr_arena(ctx *c, void *p);          /* p now belongs to the profile */
GK_HIDDEN char *gk_sbr_arena_str(ctx *c, const char *s);
GK_HIDDEN gk_loc gk_sbr_loc(ctx *c, const sx *x);
GK_HIDDEN void gk_sbr_err(ctx *c, gk_loc loc, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
GK_HIDDEN val gk_sbr_none(void);

GK_HIDDEN val gk_sbr_eval(ctx *c, const sx *x);
/* Evaluate an argument (no rules may be produced while doing so). */
GK_HIDDEN val gk_sbr_eval_arg(ctx *c, const sx *x);
/* Evaluate every top-level form of src (read here) in c. */
GK_HIDDEN void gk_sbr_eval_file(ctx *c, gk_source *src);
/* The last -D NAME=VALUE given for name, or NULL. */
GK_HIDDEN const char *gk_sbr_param_value(ctx *c, const char *name);
/* Record (once) and warn about a param without a value. */
GK_HIDDEN void gk_sbr_record_param(ctx *c, const val *v);
/* A string operand; NULL (and *unres set) for an unresolved param; NULL
 * with an error for anything else. */
GK_HIDDEN const char *gk_sbr_need_string(ctx *c, const val *v, const sx *x, const char *what,
                                         bool *unres);
/* x has lo..hi arguments, or an error naming the form. */
GK_HIDDEN bool gk_sbr_argc_is(ctx *c, const sx *x, size_t lo, size_t hi, const char *name);
/* (version 1) came first, or an error (once). */
GK_HIDDEN bool gk_sbr_need_version(ctx *c, const sx *x);

/* The core forms, for the builder's table. */
GK_HIDDEN val gk_sbr_form_version(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_define(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_param(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_string_append(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_regex_quote(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_if(ctx *c, const sx *x, const gk_sbr_form *form); /* if when unless */
GK_HIDDEN val gk_sbr_form_not(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_and_or(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_begin(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_ignore(ctx *c, const sx *x, const gk_sbr_form *form); /* debug trace */
GK_HIDDEN val gk_sbr_form_quote(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_defined(ctx *c, const sx *x, const gk_sbr_form *form); /* defined? */
GK_HIDDEN val gk_sbr_form_let(ctx *c, const sx *x, const gk_sbr_form *form);     /* let let* */
GK_HIDDEN val gk_sbr_form_compare(ctx *c, const sx *x, const gk_sbr_form *form); /* = < > <= >= */
GK_HIDDEN val gk_sbr_form_arith(ctx *c, const sx *x, const gk_sbr_form *form);   /* + - */
GK_HIDDEN val gk_sbr_form_string_eq(ctx *c, const sx *x, const gk_sbr_form *form); /* string=? equal? eq? eqv? */
GK_HIDDEN val gk_sbr_form_type_p(ctx *c, const sx *x, const gk_sbr_form *form);  /* string? number? boolean? */
GK_HIDDEN val gk_sbr_form_string_to_number(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_number_to_string(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_string_length(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_substring(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_unsupported(ctx *c, const sx *x, const gk_sbr_form *form); /* lambda, macros */
GK_HIDDEN val gk_sbr_form_cond(ctx *c, const sx *x, const gk_sbr_form *form);
GK_HIDDEN val gk_sbr_form_num_p(ctx *c, const sx *x, const gk_sbr_form *form); /* zero? positive? negative? */
/* Is name bound (a definition, a built-in form or an operation)? */
GK_HIDDEN bool gk_sbr_defined(ctx *c, const char *name);

#endif
