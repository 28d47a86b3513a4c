/* fuzz_gate.c - libFuzzer target for the gate and the lattice.
 *
 * The input bytes are choices: they drive a small generator of random
 * stacks (layers built through the internal API, as tests/check_lattice.c
 * does, over a small universe of paths and names so that regions nest,
 * overlap and miss) and of queries over the same universe. Once the bytes
 * run out, a generator seeded by a hash of the input keeps choosing, so a
 * short input still asks many queries. Per input: stacks a and b, their
 * meet (gk_stack_meet and the public grant_policy_meet), policies of a, b
 * and the meet on an offline linux context (implicit grants on or off,
 * sometimes a protected policy source), and the join of a's and b's first
 * layers. Invariants (a broken one aborts, so libFuzzer keeps the input):
 *   - meet is exactly conjunction: decide(meet(a, b), q) == decide(a, q) &&
 *     decide(b, q), for the plain fold and for the gate (with implicit
 *     grants and sources);
 *   - the indexed gate gk_gate_fs(p, op, path, NULL) answers as the
 *     explaining gk_gate_fs(p, op, path, &verdict), and the public
 *     grant_check_fs_resolved as both; without implicit grants and sources
 *     the gate is the fold;
 *   - gk_gate_exec (with and without a verdict: the exec index and the
 *     explaining fold) and grant_check_exec_query answer as gk_decide_exec,
 *     and "admitted for some argv[1]" (index and fold) as gk_decide_exec
 *     for one word; the host gates as gk_decide_gate;
 *   - the connect gate (gk_gate_connect with and without a verdict,
 *     grant_check_connect, grant_decide_connect) answers as
 *     gk_decide_connect over random destination lists, and a destination
 *     the reader refuses ("127.1", "", port 0) is -EINVAL at every door;
 *   - gk_layer_join is sound (never allows what both sides deny) and, when
 *     it says it is not lossy, exactly the union;
 *   - every verdict names an origin and a rule, and grant_verdict_json
 *     returns a JSON object with all seven keys and the verdict's answer.
 * Known gap, tolerated: a verdict string that is not UTF-8 (a query path
 * that is not, and every reason quoting it) is left out of
 * grant_verdict_json (jansson refuses the string; GK_FUZZ_UTF8=1 asks for
 * every key anyway).
 */
#include "common.h"
#include "lattice/lattice.h"
#include "gate/gate.h"
#include "ir/ir.h"

#include <jansson.h>

/* ---- choices ---------------------------------------------------------------- */

typedef struct chooser {
    const uint8_t *p;
    size_t n, i;
    uint64_t s; /* xorshift64* state once the bytes are spent */
} chooser;

static unsigned take(chooser *c)
{
    if (c->i < c->n)
        return c->p[c->i++];
    c->s ^= c->s >> 12;
    c->s ^= c->s << 25;
    c->s ^= c->s >> 27;
    return (unsigned)((c->s * 2685821657736338717ULL) >> 56);
}

static size_t pick(chooser *c, size_t n)
{
    return n <= 256 ? take(c) % n : ((size_t)take(c) << 8 | take(c)) % n;
}

static bool coin(chooser *c, unsigned percent)
{
    return take(c) * 100u < percent * 256u;
}

#define PICK(c, arr) ((arr)[pick((c), sizeof(arr) / sizeof(*(arr)))])

/* ---- the universe -------------------------------------------------------------- */

static const char *const paths[] = {
    "/",       "/a",      "/a/b",    "/a/b/c",  "/a/c",      "/ab",         "/b",
    "/b/a",    "/b/a/c",  "/c",      "/a/b/d",  "/b/ab",     "/dev/null",   "/tmp",
    "/tmp/x",  "/usr",    "/usr/bin", "/etc/passwd", "/proc/1/status", "/dev/zero", "/a/b/c/d/e",
};
/* Second spellings: a frozen region may have path != real (a symlink). */
static const char *const aliases[] = {"/l", "/l/b", "/m/a", "/b", "/tmp/l"};
/* Query-only paths: awkward bytes (a quote, a newline, not UTF-8). */
static const char *const odd_paths[] = {"/a/q\"uote", "/a/new\nline", "/a/\xc3\xa9t\xc3\xa9",
                                        "/a/\xff\xfe", "/b/\x01"};
static char deep_path[4 * 300 + 1]; /* deeper than the index looks (GK_MAX_DEPTH) */

static const char *const names[] = {"git", "make", "bash", "sh", "rg", "python3"};
static const char *const files[] = {"/usr/bin/git", "/bin/bash", "/opt/t/rg", "/usr/bin/sh",
                                    "/usr/bin/make", "/opt/t/python3"};
static const char *const dirs[] = {"/usr/bin", "/opt/t", "/bin", "/opt", "/"};
/* The last one does not compile: such a veto vetoes everything. */
static const char *const patterns[] = {"^b.*h$", "^s[h]$", "r.?g", "^python[0-9.]*$", "(["};
static const char *const subs[] = {"log", "push", "status"};
static const char *const argv1s[] = {"log", "push", "status", "x"};
static const char *const gates[] = {"net", "shell.chdir", "editor.read", "editor.write",
                                    "editor.tui"};
static const char *const origins[] = {"a.grant:1", "b.grant:7", "base/x.grant:12", "t:3"};
/* Destinations (network.md): nested wildcards, ports, both families. */
static const char *const dest_patterns[] = {
    "github.com",      "*.github.com",     "api.github.com",    "*.api.github.com",
    "github.com:443",  "*.github.com:443", "api.github.com:22", "*.gist.github.com",
    "127.0.0.1:8080",  "[::1]",            "*.co.uk",           "npmjs.org",
};
static const char *const dest_hosts[] = {
    "github.com", "API.github.com.", "x.api.github.com", "a.gist.github.com", "npmjs.org",
    "127.0.0.1",  "::ffff:127.0.0.1", "[::1]",           "bbc.co.uk",         "co.uk",
    "127.1",      "",
};
static const unsigned dest_ports[] = {22, 443, 8080, 0};

/* ---- layers and stacks ----------------------------------------------------------- */

static void add_region(chooser *c, gk_regions *r)
{
    gk_fpath p;
    p.real = (char *)PICK(c, paths);
    p.path = coin(c, 20) ? (char *)PICK(c, aliases) : p.real;
    if (strcmp(p.real, "/dev/null") == 0)
        p.real = p.path = (char *)"/a";
    gk_regions_add(r, &p, PICK(c, origins));
}

static gk_tri rnd_tri(chooser *c)
{
    size_t k = pick(c, 3);
    return k == 0 ? GK_TRI_NONE : k == 1 ? GK_TRI_FALSE : GK_TRI_TRUE;
}

static void add_admit(chooser *c, gk_admits *a, const char *key)
{
    gk_admit x = {gk_strdup(key), coin(c, 60), {0}, gk_strdup(PICK(c, origins))};
    if (!x.all)
        for (size_t n = 1 + pick(c, 2); n > 0; n--)
            gk_strvec_push(&x.subs, PICK(c, subs));
    GK_VEC_PUSH(a->v, a->n, a->cap, x);
}

static gk_layer *rnd_layer(chooser *c, unsigned id)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_printf("f%u", id);
    f->origin = gk_printf("f%u.grant:1", id);
    if (coin(c, 75)) {
        f->has_fs = true;
        f->fs.restricted = coin(c, 70);
        if (f->fs.restricted) {
            for (size_t n = pick(c, 4); n > 0; n--)
                add_region(c, &f->fs.read);
            for (size_t n = pick(c, 3); n > 0; n--)
                add_region(c, &f->fs.write);
        }
        for (size_t n = pick(c, 3); n > 0; n--)
            add_region(c, &f->fs.readonly);
        for (size_t n = pick(c, 3); n > 0; n--)
            add_region(c, &f->fs.deny);
    }
    if (coin(c, 75)) {
        f->has_exec = true;
        gk_exec_dim *x = &f->exec;
        x->has_allow = coin(c, 65);
        if (x->has_allow) {
            for (size_t n = pick(c, 3); n > 0; n--)
                add_admit(c, &x->names, PICK(c, names));
            for (size_t n = pick(c, 2); n > 0; n--)
                add_admit(c, &x->files, PICK(c, files));
            for (size_t n = pick(c, 2); n > 0; n--)
                gk_entries_add(&x->dirs, PICK(c, dirs), PICK(c, origins));
        }
        for (size_t n = pick(c, 3); n > 0; n--)
            gk_entries_add(&x->veto_names, PICK(c, names), PICK(c, origins));
        if (coin(c, 30))
            gk_entries_add(&x->veto_files, PICK(c, files), PICK(c, origins));
        if (coin(c, 25))
            gk_entries_add(&x->veto_dirs, PICK(c, dirs), PICK(c, origins));
        if (coin(c, 20))
            gk_entries_add(&x->veto_match, PICK(c, patterns), PICK(c, origins));
    }
    if (coin(c, 60)) {
        if (coin(c, 50)) {
            f->net_list = true;
            for (int k = 0; k < 2; k++)
                for (size_t n = pick(c, k ? 3 : 4); n > 0; n--) {
                    gk_dest d;
                    if (gk_dest_parse_pattern(PICK(c, dest_patterns), &d, NULL) < 0)
                        abort();
                    char *t = gk_dest_format(&d);
                    gk_entries_add(k ? &f->netd.deny : &f->netd.allow, t, PICK(c, origins));
                    free(t);
                }
        } else {
            f->net = rnd_tri(c);
        }
    }
    if (coin(c, 50)) {
        f->has_shell = true;
        f->chdir = rnd_tri(c);
    }
    if (coin(c, 40)) {
        f->has_editor = true;
        f->ed_read = rnd_tri(c);
        f->ed_write = rnd_tri(c);
        f->ed_tui = rnd_tri(c);
    }
    f->audit = coin(c, 20);
    gk_layer_canonicalize(f);
    return f;
}

/* One to three layers; rarely more than the index has bits for (64), so
 * the gate's fallback to the explaining path is fuzzed too. */
static void rnd_stack(chooser *c, gk_stack *s, unsigned *id)
{
    size_t n = take(c) == 0xff ? 65 + pick(c, 4) : 1 + pick(c, 3);
    for (; n > 0; n--)
        gk_stack_push(s, rnd_layer(c, (*id)++));
}

/* ---- queries ------------------------------------------------------------------------ */

typedef struct query {
    int kind; /* 0 read, 1 write, 2 exec, 3 host gate, 4 connect */
    const char *path;
    unsigned port;
    gk_dest dest;
    bool dest_ok; /* the host and port read as a destination */
    grant_exec_query e;
    char walked[64], canonical[64];
} query;

static void rnd_query(chooser *c, query *x)
{
    memset(x, 0, sizeof(*x));
    x->kind = (int)pick(c, 5);
    if (x->kind == 4) {
        x->path = PICK(c, dest_hosts);
        x->port = PICK(c, dest_ports);
        x->dest_ok = gk_dest_parse_query(x->path, x->port, &x->dest) == 0;
        return;
    }
    if (x->kind < 2) {
        size_t k = pick(c, 100);
        x->path = k < 80 ? PICK(c, paths) : k < 90 ? PICK(c, aliases) : k < 98 ? PICK(c, odd_paths)
                                                                               : deep_path;
        return;
    }
    if (x->kind == 3) {
        x->path = PICK(c, gates);
        return;
    }
    /* A head: a bare name (walked into a dir, or not found) or a path; the
     * canonical file is the walked one or another (a symlink). */
    if (coin(c, 55)) {
        x->e.spelling = PICK(c, names);
        if (coin(c, 75)) {
            const char *d = PICK(c, dirs);
            snprintf(x->walked, sizeof(x->walked), "%s/%s", strcmp(d, "/") ? d : "",
                     x->e.spelling);
            x->e.walked = x->walked;
        }
    } else {
        x->e.spelling = coin(c, 70) ? PICK(c, files) : PICK(c, dirs);
        snprintf(x->walked, sizeof(x->walked), "%s", x->e.spelling);
        x->e.walked = x->walked;
    }
    if (x->e.walked && coin(c, 90)) {
        snprintf(x->canonical, sizeof(x->canonical), "%s",
                 coin(c, 25) ? PICK(c, files) : x->e.walked);
        x->e.canonical = x->canonical;
    }
    x->e.argv1 = coin(c, 20) ? NULL : PICK(c, argv1s);
}

static bool stack_decide(const gk_stack *s, const query *x)
{
    switch (x->kind) {
    case 0:
        return gk_decide_fs(s, GRANT_OP_READ, x->path);
    case 1:
        return gk_decide_fs(s, GRANT_OP_WRITE, x->path);
    case 2:
        return gk_decide_exec(s, &x->e);
    case 4:
        return x->dest_ok && gk_decide_connect(s, &x->dest);
    default:
        return gk_decide_gate(s, x->path) == GK_TRI_TRUE;
    }
}

static bool layer_decide(const gk_layer *f, const query *x)
{
    gk_stack s = {(gk_layer **)&f, 1, 1};
    return stack_decide(&s, x);
}

/* ---- reporting -------------------------------------------------------------------- */

typedef struct world {
    grant_policy *pa, *pb, *pab; /* pab: grant_policy_meet(pa, pb) */
    gk_stack ab;                 /* gk_stack_meet(a, b) */
    gk_layer *fa, *fb, *join;
    bool lossy, implicit, sources;
} world;

static char *describe_query(const query *x)
{
    if (x->kind == 2)
        return gk_printf("exec %s walked=%s canonical=%s argv1=%s", x->e.spelling,
                         x->e.walked ? x->e.walked : "-", x->e.canonical ? x->e.canonical : "-",
                         x->e.argv1 ? x->e.argv1 : "-");
    if (x->kind == 4)
        return gk_printf("connect %s %u", x->path, x->port);
    return gk_printf("%s %s", x->kind == 0 ? "read" : x->kind == 1 ? "write" : "gate",
                     x->path == deep_path ? "(the 300-component path)" : x->path);
}

__attribute__((noreturn)) static void broken(const char *law, const world *w, const query *x)
{
    gk_buf b = {0};
    char *q = describe_query(x);
    gk_buf_printf(&b, "query: %s\nimplicit: %s, sources: %s\n", q, w->implicit ? "on" : "off",
                  w->sources ? "yes" : "no");
    const grant_policy *ps[2] = {w->pa, w->pb};
    for (int k = 0; k < 2; k++) {
        if (ps[k]->stack.n > 8) {
            gk_buf_printf(&b, "---- stack %c: %zu layers (not printed)\n", "ab"[k],
                          ps[k]->stack.n);
            continue;
        }
        size_t len = 0;
        char *ir = gk_ir_policy(ps[k], true, &len);
        gk_buf_printf(&b, "---- stack %c\n%s\n", "ab"[k], ir ? ir : "(no IR)");
        free(ir);
    }
    char *j = gk_ir_layer(w->join, true);
    gk_buf_printf(&b, "---- join of their first layers (lossy: %s)\n%s\n", w->lossy ? "yes" : "no",
                  j ? j : "(no IR)");
    free(j);
    free(q);
    size_t len = 0;
    char *text = gk_buf_steal(&b, &len);
    fuzz_fail(law, text, len, NULL, 0, NULL);
}

static bool utf8_strict(void)
{
    static int on = -1;
    if (on < 0) {
        const char *s = getenv("GK_FUZZ_UTF8");
        on = s && *s && strcmp(s, "0") != 0;
    }
    return on;
}

/* The verdict explains itself, and (with_json) its JSON is an object
 * with every key. */
static void check_verdict(const grant_verdict *v, const world *w, const query *x, bool with_json)
{
    if (!v->origin || !v->rule)
        broken("a verdict without an origin or a rule", w, x);
    if (x->kind < 2 && !v->path)
        broken("an fs verdict without its path", w, x);
    if (!with_json || x->path == deep_path) /* 1,200 bytes to escape and parse: slow, no news */
        return;
    char *s = grant_verdict_json(v);
    if (!s)
        broken("grant_verdict_json returned NULL", w, x);
    json_error_t err;
    json_t *o = json_loads(s, 0, &err);
    if (!o || !json_is_object(o))
        broken("grant_verdict_json is not a JSON object", w, x);
    static const char *const keys[] = {"answer", "hint", "identity", "layer", "origin", "path",
                                       "rule"};
    const char *vals[] = {"", v->hint, v->identity, v->layer, v->origin, v->path, v->rule};
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        if (json_object_get(o, keys[i]))
            continue;
        /* Tolerated unless GK_FUZZ_UTF8: the value is not UTF-8. */
        if (vals[i] && !gk_utf8_valid(vals[i], strlen(vals[i])) && !utf8_strict())
            continue;
        char what[80];
        snprintf(what, sizeof(what), "grant_verdict_json lacks the key \"%s\"", keys[i]);
        broken(what, w, x);
    }
    static const char *const answers[] = {"denied", "allowed", "not-found"};
    const char *a = json_string_value(json_object_get(o, "answer"));
    if (!a || strcmp(a, answers[v->answer]) != 0)
        broken("grant_verdict_json's answer is not the verdict's", w, x);
    json_decref(o);
    free(s);
}

/* The gate's answer on p, through every door, after checking they agree.
 * The public doors only when the caller says `all` (once per query, in
 * turn on a, b and the meet), JSON only when it says `json`: printing and
 * parsing a verdict costs more than deciding it, and its text depends on
 * the verdict, not on which policy gave it. */
static bool gate_answer(const grant_policy *p, const world *w, const query *x, bool all,
                        bool json)
{
    grant_verdict v = {0};
    grant_answer a;
    if (x->kind < 2) {
        grant_op op = x->kind == 0 ? GRANT_OP_READ : GRANT_OP_WRITE;
        a = gk_gate_fs(p, op, x->path, NULL);
        if (gk_gate_fs(p, op, x->path, &v) != a)
            broken("the indexed and the explaining gate disagree (fs)", w, x);
        if (v.answer != a)
            broken("the explaining gate's verdict says otherwise (fs)", w, x);
        grant_verdict *pv = NULL;
        if (all && (grant_check_fs_resolved(p, op, x->path, &pv) != 0 ||
                    grant_verdict_answer(pv) != a))
            broken("grant_check_fs_resolved disagrees with the gate", w, x);
        grant_verdict_free(pv);
    } else if (x->kind == 2) {
        a = gk_gate_exec(p, &x->e, NULL);
        if (gk_gate_exec(p, &x->e, &v) != a || v.answer != a)
            broken("gk_gate_exec with and without a verdict disagree", w, x);
        if ((a == GRANT_ALLOWED) != gk_decide_exec(&p->stack, &x->e))
            broken("gk_gate_exec disagrees with gk_decide_exec", w, x);
        grant_verdict *pv = NULL;
        if (all && (grant_check_exec_query(p, &x->e, &pv) != 0 || grant_verdict_answer(pv) != a))
            broken("grant_check_exec_query disagrees with the gate", w, x);
        grant_verdict_free(pv);
        /* "For some argv[1]" (the projection's question) is the fold for
         * one of the universe's words, another one, or none. */
        bool some = false;
        for (size_t k = 0; k <= sizeof(argv1s) / sizeof(*argv1s) && !some; k++) {
            grant_exec_query e = x->e;
            e.argv1 = k < sizeof(argv1s) / sizeof(*argv1s) ? argv1s[k] : NULL;
            some = gk_decide_exec(&p->stack, &e);
        }
        if ((gk_gate_exec_some_argv1(p, &x->e) == GRANT_ALLOWED) != some ||
            gk_decide_exec_some_argv1(&p->stack, &x->e) != some)
            broken("admitted for some argv[1] disagrees with the fold", w, x);
    } else if (x->kind == 4) {
        /* A destination no client may ask (-EINVAL) is refused. */
        grant_verdict *pv = NULL;
        int rc = grant_check_connect(p, x->path, x->port, &pv);
        int d = grant_decide_connect(p, x->path, x->port);
        if ((rc < 0) != !x->dest_ok || (rc < 0 && d != rc) || (rc < 0 && pv))
            broken("grant_check_connect refuses a destination the reader takes, or not", w, x);
        if (!x->dest_ok)
            return false;
        a = gk_gate_connect(p, &x->dest, &v);
        if (gk_gate_connect(p, &x->dest, NULL) != a || v.answer != a ||
            grant_verdict_answer(pv) != a || d != (a == GRANT_ALLOWED))
            broken("the connect gate's doors disagree", w, x);
        if ((a == GRANT_ALLOWED) != gk_decide_connect(&p->stack, &x->dest))
            broken("the connect gate disagrees with the fold", w, x);
        grant_verdict_free(pv);
    } else {
        a = gk_gate_gate(p, x->path, &v);
        if ((a == GRANT_ALLOWED) != (gk_decide_gate(&p->stack, x->path) == GK_TRI_TRUE))
            broken("the host gate disagrees with the fold", w, x);
    }
    check_verdict(&v, w, x, json);
    gk_verdict_clear(&v);
    return a == GRANT_ALLOWED;
}

/* The destination set of a stack spelled out from gk_dest_matches, apart
 * from the gate's key lookup: in every layer with an opinion, an allow
 * pattern covers it and no deny pattern does. */
static bool spelled_out(const gk_stack *s, const gk_dest *q)
{
    for (size_t l = 0; l < s->n; l++) {
        const gk_layer *f = s->v[l];
        if (!f->net_list) {
            if (f->net == GK_TRI_FALSE)
                return false;
            continue;
        }
        bool in = false;
        for (size_t i = 0; i < f->netd.allow.n; i++)
            in |= gk_dest_matches(&f->netd.allow_d[i], q);
        for (size_t i = 0; i < f->netd.deny.n; i++)
            in &= !gk_dest_matches(&f->netd.deny_d[i], q);
        if (!in)
            return false;
    }
    return true;
}

static void check_query(const world *w, const gk_stack *a, const gk_stack *b, const query *x,
                        size_t k)
{
    /* The plain fold: meet is exactly conjunction. */
    bool da = stack_decide(a, x), db = stack_decide(b, x);
    if (stack_decide(&w->ab, x) != (da && db))
        broken("meet is not exactly conjunction (fold)", w, x);
    /* The gate, through every door, on each policy; meet again. */
    bool json = k % 4 == 0;
    bool ga = gate_answer(w->pa, w, x, k % 3 == 0, json && k % 3 == 0);
    bool gb = gate_answer(w->pb, w, x, k % 3 == 1, json && k % 3 == 1);
    bool gab = gate_answer(w->pab, w, x, k % 3 == 2, json && k % 3 == 2);
    if (gab != (ga && gb))
        broken("meet is not exactly conjunction (gate)", w, x);
    if (x->kind == 4 && (ga != da || gb != db))
        broken("the connect gate is not the fold", w, x);
    if (x->kind == 4 && x->dest_ok && da != spelled_out(a, &x->dest))
        broken("the connect fold is not the intersection of the layers' sets", w, x);
    if (!w->implicit && !w->sources && x->kind < 2 && (ga != da || gb != db))
        broken("the gate without implicit grants or sources is not the fold", w, x);
    if (w->implicit && x->kind < 2 && ((da && !ga) || (db && !gb)) && !w->sources)
        broken("implicit grants took authority away", w, x);
    /* join: sound; exact when not lossy. */
    bool ja = layer_decide(w->fa, x), jb = layer_decide(w->fb, x), dj = layer_decide(w->join, x);
    if (dj && !ja && !jb)
        broken("join allows what both sides deny", w, x);
    if (!w->lossy && dj != (ja || jb))
        broken("a join that is not lossy is not exactly the union", w, x);
}

/* ---- the target ------------------------------------------------------------------------ */

static grant_context *contexts[2]; /* implicit off, on */

static void init(void)
{
    for (int k = 0; k < 2; k++) {
        grant_context *ctx = NULL;
        if (grant_context_new(&ctx) != 0 || grant_context_set_target(ctx, GRANT_TARGET_LINUX) ||
            grant_context_set(ctx, GRANT_CTX_HOME, "/home/u") ||
            grant_context_set(ctx, GRANT_CTX_USER, "u") ||
            grant_context_set(ctx, GRANT_CTX_CWD, "/w") ||
            grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp") ||
            grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin") ||
            grant_context_set_implicit(ctx, k == 1))
            abort();
        contexts[k] = ctx;
    }
    char *p = deep_path;
    for (int i = 0; i < 300; i++, p += 2)
        memcpy(p, "/a", 2);
    *p = '\0';
}

/* A protected source file of the policy (as a host compile records it):
 * the gate denies writes to it. */
static void add_source(chooser *c, grant_policy *p)
{
    gk_strvec_push(&p->protect, PICK(c, paths));
    gk_strvec_sort_unique(&p->protect);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!contexts[0])
        init();
    /* FNV-1a of the input seeds the choices made after the bytes. */
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ULL;
    chooser c = {data, size, 0, h | 1};

    world w = {0};
    w.implicit = coin(&c, 50);
    w.sources = coin(&c, 20);
    const grant_context *ctx = contexts[w.implicit];
    unsigned id = 0;
    gk_stack a = {0}, b = {0};
    rnd_stack(&c, &a, &id);
    rnd_stack(&c, &b, &id);
    gk_stack_meet(&w.ab, &a, &b);
    w.pa = gk_policy_new(ctx);
    w.pb = gk_policy_new(ctx);
    gk_stack_copy(&w.pa->stack, &a);
    gk_stack_copy(&w.pb->stack, &b);
    if (w.sources) {
        add_source(&c, w.pa);
        if (coin(&c, 50))
            add_source(&c, w.pb);
    }
    if (grant_policy_meet(w.pa, w.pb, &w.pab) != 0)
        abort();
    w.fa = a.v[0];
    w.fb = b.v[0];
    w.join = gk_layer_join(w.fa, w.fb, &w.lossy);

    size_t nq = 8 + pick(&c, 25);
    for (size_t k = 0; k < nq; k++) {
        query x;
        rnd_query(&c, &x);
        check_query(&w, &a, &b, &x, k);
    }

    gk_layer_free(w.join);
    grant_policy_free(w.pa);
    grant_policy_free(w.pb);
    grant_policy_free(w.pab);
    gk_stack_free(&w.ab);
    gk_stack_free(&a);
    gk_stack_free(&b);
    return 0;
}
