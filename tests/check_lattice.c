/* check_lattice.c - the laws of grant-language.md §5 by property testing:
 * random layers and queries from a fixed seed, comparing decisions (never
 * bytes). Every law is checked over at least 10,000 random policies. */
#include "lattice/lattice.h"
#include "gate/gate.h"
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 10000
#define QUERIES 24

/* xorshift64*: small, fixed, and the same on every machine. */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}
static size_t pick(size_t n)
{
    return (size_t)(rnd() % n);
}
static bool coin(unsigned percent)
{
    return pick(100) < percent;
}
#define PICK(arr) ((arr)[pick(sizeof(arr) / sizeof(*(arr)))])
#define N(arr) (sizeof(arr) / sizeof(*(arr)))

/* The universe: a small tree, so regions nest, overlap and miss often. */
static const char *const paths[] = {
    "/",        "/a",       "/a/b",      "/a/b/c", "/a/c", "/ab",   "/b",
    "/b/a",     "/b/a/c",   "/c",        "/a/b/d", "/b/ab", "/dev/null",
};
/* Two spellings: a frozen region may have path != real (a symlink). */
static const char *const aliases[] = {"/l", "/l/b", "/m/a", "/b"};

/* "cargo": an unanchored pattern (r.?g) matching inside a name. */
static const char *const names[] = {"git", "make", "bash", "sh", "rg", "python3", "cargo"};
static const char *const files[] = {"/usr/bin/git", "/bin/bash", "/opt/t/rg", "/usr/bin/sh",
                                    "/usr/bin/make", "/opt/t/python3"};
static const char *const dirs[] = {"/usr/bin", "/opt/t", "/bin", "/opt"};
static const char *const patterns[] = {"^b.*h$", "^s[h]$", "r.?g", "^python[0-9.]*$"};
static const char *const subs[] = {"log", "push", "status"};
static const char *const argv1s[] = {"log", "push", "status", "x"};

/* Destinations: nested wildcards, a port or none, both address families. */
static const char *const dest_patterns[] = {
    "github.com",    "*.github.com",     "api.github.com",   "*.api.github.com",
    "github.com:443", "*.github.com:443", "api.github.com:22", "*.gist.github.com",
    "gist.github.com", "npmjs.org",      "*.npmjs.org:443",  "127.0.0.1",
    "127.0.0.1:8080", "[::1]:8080",      "[::1]",            "*.co.uk",
};
static const char *const dest_hosts[] = {
    "github.com", "api.github.com", "x.api.github.com", "gist.github.com", "a.gist.github.com",
    "GitHub.COM.", "npmjs.org",     "registry.npmjs.org", "example.com",  "127.0.0.1",
    "::1",         "::ffff:127.0.0.1", "bbc.co.uk",    "co.uk",
};
static const unsigned dest_ports[] = {22, 443, 8080, 1};

static void add_dest(gk_entries *e)
{
    gk_dest d;
    ck_assert_int_eq(gk_dest_parse_pattern(PICK(dest_patterns), &d, NULL), 0);
    char *t = gk_dest_format(&d);
    gk_entries_add(e, t, "t:1");
    free(t);
}

static void add_region(gk_regions *r)
{
    gk_fpath p;
    p.real = (char *)PICK(paths);
    p.path = coin(20) ? (char *)PICK(aliases) : p.real;
    if (strcmp(p.real, "/dev/null") == 0)
        p.real = p.path = (char *)"/a";
    gk_regions_add(r, &p, "t:1");
}

static gk_tri rnd_tri(void)
{
    size_t k = pick(3);
    return k == 0 ? GK_TRI_NONE : k == 1 ? GK_TRI_FALSE : GK_TRI_TRUE;
}

static void add_admit(gk_admits *a, const char *key)
{
    gk_admit x = {gk_strdup(key), coin(60), {0}, gk_strdup("t:1")};
    if (!x.all) {
        size_t n = 1 + pick(2);
        for (size_t i = 0; i < n; i++)
            gk_strvec_push(&x.subs, PICK(subs));
    }
    GK_VEC_PUSH(a->v, a->n, a->cap, x);
}

static gk_layer *rnd_layer(void)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_strdup("r");
    f->origin = gk_strdup("r.grant:1");
    if (coin(75)) {
        f->has_fs = true;
        f->fs.restricted = coin(70);
        if (f->fs.restricted) {
            for (size_t n = pick(4); n > 0; n--)
                add_region(&f->fs.read);
            for (size_t n = pick(3); n > 0; n--)
                add_region(&f->fs.write);
        }
        for (size_t n = pick(3); n > 0; n--)
            add_region(&f->fs.readonly);
        for (size_t n = pick(3); n > 0; n--)
            add_region(&f->fs.deny);
    }
    if (coin(75)) {
        f->has_exec = true;
        gk_exec_dim *x = &f->exec;
        x->has_allow = coin(65);
        if (x->has_allow) {
            for (size_t n = pick(3); n > 0; n--)
                add_admit(&x->names, PICK(names));
            for (size_t n = pick(2); n > 0; n--)
                add_admit(&x->files, PICK(files));
            for (size_t n = pick(2); n > 0; n--)
                gk_entries_add(&x->dirs, PICK(dirs), "t:1");
        }
        for (size_t n = pick(3); n > 0; n--)
            gk_entries_add(&x->veto_names, PICK(names), "t:1");
        if (coin(30))
            gk_entries_add(&x->veto_files, PICK(files), "t:1");
        if (coin(25))
            gk_entries_add(&x->veto_dirs, PICK(dirs), "t:1");
        if (coin(25))
            gk_entries_add(&x->veto_match, PICK(patterns), "t:1");
    }
    if (coin(60)) {
        if (coin(50)) {
            f->net_list = true;
            for (size_t n = pick(4); n > 0; n--)
                add_dest(&f->netd.allow);
            for (size_t n = pick(3); n > 0; n--)
                add_dest(&f->netd.deny);
        } else {
            f->net = rnd_tri();
        }
    }
    if (coin(50)) {
        f->has_shell = true;
        f->chdir = rnd_tri();
    }
    if (coin(40)) {
        f->has_editor = true;
        f->ed_read = rnd_tri();
        f->ed_write = rnd_tri();
        f->ed_tui = rnd_tri();
    }
    f->audit = coin(20);
    gk_layer_canonicalize(f);
    return f;
}

static void rnd_stack(gk_stack *s)
{
    for (size_t n = 1 + pick(3); n > 0; n--)
        gk_stack_push(s, rnd_layer());
}

typedef struct q {
    int kind; /* 0 read, 1 write, 2 exec, 3 gate, 4 connect */
    gk_dest dest;
    const char *path;
    grant_exec_query e;
    char walked[64], canonical[64];
} q;

static const char *const gates[] = {"net", "shell.chdir", "editor.read", "editor.write",
                                    "editor.tui"};

static void rnd_query(q *x)
{
    memset(x, 0, sizeof(*x));
    x->kind = (int)pick(5);
    if (x->kind == 4) {
        x->path = PICK(dest_hosts);
        ck_assert_int_eq(gk_dest_parse_query(x->path, PICK(dest_ports), &x->dest), 0);
        return;
    }
    if (x->kind < 2) {
        x->path = coin(10) ? PICK(aliases) : PICK(paths);
        return;
    }
    if (x->kind == 3) {
        x->path = PICK(gates);
        return;
    }
    /* An exec head: bare name (walked into a dir or not found) or a path;
     * the canonical file is the walked one or another (a symlink). */
    if (coin(55)) {
        x->e.spelling = PICK(names);
        if (coin(75)) {
            snprintf(x->walked, sizeof(x->walked), "%s/%s", PICK(dirs), x->e.spelling);
            x->e.walked = x->walked;
        }
    } else {
        x->e.spelling = coin(70) ? PICK(files) : PICK(dirs);
        if (!strchr(x->e.spelling + 1, '/') || coin(100)) {
            snprintf(x->walked, sizeof(x->walked), "%s", x->e.spelling);
            x->e.walked = x->walked;
        }
    }
    if (x->e.walked) {
        snprintf(x->canonical, sizeof(x->canonical), "%s", coin(25) ? PICK(files) : x->e.walked);
        x->e.canonical = x->canonical;
    }
    x->e.argv1 = coin(20) ? NULL : PICK(argv1s);
}

static bool stack_decide(const gk_stack *s, const q *x)
{
    switch (x->kind) {
    case 0:
        return gk_decide_fs(s, GRANT_OP_READ, x->path);
    case 1:
        return gk_decide_fs(s, GRANT_OP_WRITE, x->path);
    case 2:
        return gk_decide_exec(s, &x->e);
    case 4:
        return gk_decide_connect(s, &x->dest);
    default:
        return gk_decide_gate(s, x->path) == GK_TRI_TRUE;
    }
}

static bool layer_decide(const gk_layer *f, const q *x)
{
    gk_stack s = {(gk_layer **)&f, 1, 1};
    return stack_decide(&s, x);
}

static char *describe(const q *x)
{
    if (x->kind == 2)
        return gk_printf("exec %s walked=%s canonical=%s argv1=%s", x->e.spelling,
                         x->e.walked ? x->e.walked : "-", x->e.canonical ? x->e.canonical : "-",
                         x->e.argv1 ? x->e.argv1 : "-");
    if (x->kind == 4) {
        gk_dest d = x->dest;
        char *t = gk_dest_format(&d);
        char *r = gk_printf("connect %s", t);
        free(t);
        return r;
    }
    return gk_printf("%s %s", x->kind == 0 ? "read" : x->kind == 1 ? "write" : "gate", x->path);
}

#define FAIL_LAW(law, x, ...)                                                                  \
    do {                                                                                       \
        char *d_ = describe(x);                                                                \
        ck_abort_msg("%s fails (round %zu) on %s", law, round, d_);                           \
    } while (0)

START_TEST(meet_laws)
{
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (size_t round = 0; round < ROUNDS; round++) {
        gk_stack a = {0}, b = {0}, c = {0};
        rnd_stack(&a);
        rnd_stack(&b);
        rnd_stack(&c);
        gk_stack ab = {0}, ba = {0}, ab_c = {0}, bc = {0}, a_bc = {0}, aa = {0}, empty = {0},
                 a_empty = {0}, a_f = {0};
        gk_stack_meet(&ab, &a, &b);
        gk_stack_meet(&ba, &b, &a);
        gk_stack_meet(&ab_c, &ab, &c);
        gk_stack_meet(&bc, &b, &c);
        gk_stack_meet(&a_bc, &a, &bc);
        gk_stack_meet(&aa, &a, &a);
        gk_stack_meet(&a_empty, &a, &empty);
        gk_stack single = {0};
        gk_stack_push(&single, rnd_layer());
        gk_stack_meet(&a_f, &a, &single);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            bool da = stack_decide(&a, &x), db = stack_decide(&b, &x), dc = stack_decide(&c, &x);
            bool dab = stack_decide(&ab, &x);
            if (dab != (da && db))
                FAIL_LAW("meet is exactly conjunction", &x);
            if (dab != stack_decide(&ba, &x))
                FAIL_LAW("meet is commutative", &x);
            if (stack_decide(&ab_c, &x) != stack_decide(&a_bc, &x) ||
                stack_decide(&ab_c, &x) != (da && db && dc))
                FAIL_LAW("meet is associative", &x);
            if (stack_decide(&aa, &x) != da)
                FAIL_LAW("meet is idempotent", &x);
            if (stack_decide(&a_empty, &x) != da)
                FAIL_LAW("the empty policy is the identity of meet", &x);
            if (!stack_decide(&empty, &x))
                FAIL_LAW("the empty policy allows everything", &x);
            if (stack_decide(&a_f, &x) && !da)
                FAIL_LAW("adding a layer never allows more", &x);
        }
        /* meet keeps no duplicate layer: idempotence holds on the stack too */
        ck_assert_uint_le(aa.n, a.n);
        gk_stack *all[] = {&a, &b, &c, &ab, &ba, &ab_c, &bc, &a_bc, &aa, &a_empty, &a_f, &single};
        for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
            gk_stack_free(all[i]);
    }
}
END_TEST

static gk_layer *deny_all(void)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_strdup("deny_all");
    f->origin = gk_strdup("deny_all:1");
    f->has_fs = true;
    f->fs.restricted = true;
    f->has_exec = true;
    f->exec.has_allow = true;
    f->net = GK_TRI_FALSE;
    f->has_shell = true;
    f->chdir = GK_TRI_FALSE;
    f->has_editor = true;
    f->ed_read = f->ed_write = f->ed_tui = GK_TRI_FALSE;
    gk_layer_canonicalize(f);
    return f;
}

START_TEST(deny_all_allows_only_the_discard_device)
{
    rng_state = 0xD1B54A32D192ED03ULL;
    for (size_t round = 0; round < ROUNDS; round++) {
        gk_stack a = {0}, d = {0}, ad = {0};
        rnd_stack(&a);
        gk_stack_push(&d, deny_all());
        gk_stack_meet(&ad, &a, &d);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            bool discard = x.kind < 2 && strcmp(x.path, "/dev/null") == 0;
            if (stack_decide(&ad, &x) != discard)
                FAIL_LAW("meet with deny_all allows nothing but /dev/null", &x);
        }
        gk_stack_free(&a);
        gk_stack_free(&d);
        gk_stack_free(&ad);
    }
}
END_TEST

/* join is sound always, and exactly the union when it says it is not
 * lossy; then absorption meet(a, join(a, b)) = a holds too. */
START_TEST(join_laws)
{
    rng_state = 0xBF58476D1CE4E5B9ULL;
    size_t exact = 0, lossy_count = 0;
    for (size_t round = 0; round < ROUNDS; round++) {
        gk_layer *a = rnd_layer(), *b = rnd_layer(), *c = rnd_layer();
        bool l_ab, l_ba, l_aa, l_bc, l_ab_c, l_a_bc;
        gk_layer *ab = gk_layer_join(a, b, &l_ab);
        gk_layer *ba = gk_layer_join(b, a, &l_ba);
        gk_layer *aa = gk_layer_join(a, a, &l_aa);
        gk_layer *bc = gk_layer_join(b, c, &l_bc);
        gk_layer *ab_c = gk_layer_join(ab, c, &l_ab_c);
        gk_layer *a_bc = gk_layer_join(a, bc, &l_a_bc);
        if (l_ab)
            lossy_count++;
        else
            exact++;
        ck_assert_msg(l_ab == l_ba, "lossiness is symmetric (round %zu)", round);
        ck_assert_msg(!l_aa, "join(a, a) is exact (round %zu)", round);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            bool da = layer_decide(a, &x), db = layer_decide(b, &x), dc = layer_decide(c, &x);
            bool dab = layer_decide(ab, &x);
            if (dab && !da && !db)
                FAIL_LAW("join is sound", &x);
            if (!l_ab && dab != (da || db))
                FAIL_LAW("a join that is not lossy is exactly the union", &x);
            if (dab != layer_decide(ba, &x))
                FAIL_LAW("join is commutative", &x);
            if (layer_decide(aa, &x) != da)
                FAIL_LAW("join is idempotent", &x);
            bool d1 = layer_decide(ab_c, &x), d2 = layer_decide(a_bc, &x);
            if ((d1 && !da && !db && !dc) || (d2 && !da && !db && !dc))
                FAIL_LAW("join of three is sound", &x);
            if (!l_ab && !l_ab_c && !l_bc && !l_a_bc && d1 != d2)
                FAIL_LAW("join is associative", &x);
            if (!l_ab) {
                gk_stack s = {0};
                gk_stack_push(&s, gk_layer_copy(a));
                gk_stack_push(&s, gk_layer_copy(ab));
                if (stack_decide(&s, &x) != da)
                    FAIL_LAW("absorption: meet(a, join(a, b)) decides like a", &x);
                gk_stack_free(&s);
            }
        }
        gk_layer *all[] = {a, b, c, ab, ba, aa, bc, ab_c, a_bc};
        for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
            gk_layer_free(all[i]);
    }
    /* Enough joins must be exact, or the exactness and absorption laws
     * above test little (random layers conflict far more than real ones). */
    ck_assert_msg(exact > ROUNDS / 4, "only %zu of %d joins were exact (%zu lossy)", exact, ROUNDS,
                  lossy_count);
}
END_TEST

/* compare: every witness's recorded decisions are the real decisions, and
 * the order it claims holds on random queries too. */
START_TEST(compare_agrees_with_decisions)
{
    rng_state = 0x94D049BB133111EBULL;
    grant_context *ctx = gk_test_context_linux();
    for (size_t round = 0; round < ROUNDS; round++) {
        grant_policy *pa = gk_policy_new(ctx), *pb = gk_policy_new(ctx);
        rnd_stack(&pa->stack);
        if (coin(30))
            gk_stack_copy(&pb->stack, &pa->stack);
        else
            rnd_stack(&pb->stack);
        if (coin(30))
            gk_stack_push(&pb->stack, rnd_layer());
        grant_comparison *cmp = NULL;
        ck_assert_int_eq(grant_compare(pa, pb, &cmp), 0);
        for (size_t i = 0; i < grant_comparison_witness_count(cmp); i++) {
            q x;
            memset(&x, 0, sizeof(x));
            bool wa, wb;
            ck_assert_int_eq(gk_comparison_query(cmp, i, &x.kind, &x.path, &x.e), 0);
            if (x.kind == 4) {
                const char *colon = strrchr(x.path, ':');
                char *host = gk_strndup(x.path, (size_t)(colon - x.path));
                ck_assert_int_eq(gk_dest_parse_query(host, (unsigned)atoi(colon + 1), &x.dest), 0);
                free(host);
            }
            ck_assert_int_eq(grant_comparison_witness(cmp, i, NULL, NULL, &wa, &wb), 0);
            if (stack_decide(&pa->stack, &x) != wa || stack_decide(&pb->stack, &x) != wb)
                FAIL_LAW("compare records the real decisions", &x);
            ck_assert(wa != wb);
        }
        grant_order o = grant_comparison_order(cmp);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            bool da = stack_decide(&pa->stack, &x), db = stack_decide(&pb->stack, &x);
            if (da && !db && (o == GRANT_EQUAL || o == GRANT_NARROWER))
                FAIL_LAW("compare's order holds on every query (a allows, b denies)", &x);
            if (db && !da && (o == GRANT_EQUAL || o == GRANT_WIDER))
                FAIL_LAW("compare's order holds on every query (b allows, a denies)", &x);
        }
        grant_comparison_free(cmp);
        grant_policy_free(pa);
        grant_policy_free(pb);
    }
    grant_context_free(ctx);
}
END_TEST

/* Net lists (network.md §1): meet is the intersection of the layers' sets,
 * a deny in any layer is sticky, `net deny` is the empty set and `net
 * allow` the full one; each checked on every destination of the universe. */
START_TEST(net_laws)
{
    rng_state = 0x61C8864680B583EBULL;
    gk_layer *none = gk_layer_new(), *all = gk_layer_new();
    none->name = gk_strdup("none");
    all->name = gk_strdup("all");
    none->net = GK_TRI_FALSE;
    all->net = GK_TRI_TRUE;
    size_t lists = 0;
    for (size_t round = 0; round < ROUNDS; round++) {
        gk_stack a = {0}, b = {0}, ab = {0}, a_none = {0}, a_all = {0}, one = {0};
        rnd_stack(&a);
        rnd_stack(&b);
        gk_stack_meet(&ab, &a, &b);
        gk_stack_push(&one, gk_layer_ref(none));
        gk_stack_meet(&a_none, &a, &one);
        gk_stack_free(&one);
        gk_stack_push(&one, gk_layer_ref(all));
        gk_stack_meet(&a_all, &a, &one);
        gk_stack_free(&one);
        for (size_t l = 0; l < a.n; l++)
            lists += a.v[l]->net_list;
        for (size_t h = 0; h < N(dest_hosts); h++)
            for (size_t pi = 0; pi < N(dest_ports); pi++) {
                q x;
                memset(&x, 0, sizeof(x));
                x.kind = 4;
                ck_assert_int_eq(gk_dest_parse_query(dest_hosts[h], dest_ports[pi], &x.dest), 0);
                bool da = stack_decide(&a, &x), db = stack_decide(&b, &x);
                /* the intersection, spelled out on each layer's set */
                bool in_all = true, denied = false;
                for (size_t l = 0; l < a.n; l++) {
                    const gk_layer *f = a.v[l];
                    bool in = f->net_list ? false : f->net != GK_TRI_FALSE;
                    for (size_t i = 0; f->net_list && i < f->netd.allow.n; i++)
                        in |= gk_dest_matches(&f->netd.allow_d[i], &x.dest);
                    for (size_t i = 0; f->net_list && i < f->netd.deny.n; i++)
                        if (gk_dest_matches(&f->netd.deny_d[i], &x.dest))
                            in = false, denied = true;
                    in_all &= in;
                }
                if (da != in_all)
                    FAIL_LAW("a stack's destinations are the intersection of its layers' sets", &x);
                if (denied && (da || stack_decide(&ab, &x)))
                    FAIL_LAW("a deny pattern in any layer is sticky", &x);
                if (stack_decide(&ab, &x) != (da && db))
                    FAIL_LAW("meet is the intersection", &x);
                if (stack_decide(&a_none, &x))
                    FAIL_LAW("net deny is the empty set", &x);
                if (stack_decide(&a_all, &x) != da)
                    FAIL_LAW("net allow is the full set", &x);
            }
        gk_stack *st[] = {&a, &b, &ab, &a_none, &a_all};
        for (size_t i = 0; i < N(st); i++)
            gk_stack_free(st[i]);
    }
    ck_assert_msg(lists > ROUNDS / 2, "only %zu random layers had a destination list", lists);
    gk_layer_free(none);
    gk_layer_free(all);
}
END_TEST

/* The classic counterexample to "vetoes intersect": both sides deny
 * /usr/bin/bash, so the join must too. */
START_TEST(join_keeps_a_veto_the_other_side_does_not_lift)
{
    gk_layer *a = gk_layer_new(), *b = gk_layer_new();
    a->name = gk_strdup("a");
    b->name = gk_strdup("b");
    a->has_exec = b->has_exec = true;
    a->exec.has_allow = b->exec.has_allow = true;
    gk_entries_add(&a->exec.dirs, "/usr/bin", "a:1");
    gk_entries_add(&a->exec.veto_names, "bash", "a:2");
    gk_admit make = {gk_strdup("make"), true, {0}, gk_strdup("b:1")};
    GK_VEC_PUSH(b->exec.names.v, b->exec.names.n, b->exec.names.cap, make);
    gk_layer_canonicalize(a);
    gk_layer_canonicalize(b);
    bool lossy;
    gk_layer *j = gk_layer_join(a, b, &lossy);
    grant_exec_query bash = {"bash", "/usr/bin/bash", "/usr/bin/bash", NULL};
    grant_exec_query mk = {"make", "/usr/bin/make", "/usr/bin/make", NULL};
    gk_stack s = {&j, 1, 1};
    ck_assert(!gk_decide_exec(&s, &bash));
    ck_assert(gk_decide_exec(&s, &mk));
    gk_layer_free(a);
    gk_layer_free(b);
    gk_layer_free(j);
}
END_TEST


/* The projection the backends render answers every fs query exactly as
 * the fold does. */
START_TEST(projection_agrees_with_the_fold)
{
    rng_state = 0x2545F4914F6CDD1DULL;
    grant_context *ctx = gk_test_context_linux();
    for (size_t round = 0; round < ROUNDS; round++) {
        grant_policy *p = gk_policy_new(ctx);
        rnd_stack(&p->stack);
        gk_projection *pr = gk_projection_build(p);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            if (x.kind == 4) {
                bool proj = pr->net;
                if (pr->net_list) {
                    proj = false;
                    for (size_t i = 0; i < pr->net_allow.n; i++) {
                        gk_dest d;
                        ck_assert_int_eq(gk_dest_parse_pattern(pr->net_allow.v[i], &d, NULL), 0);
                        proj |= gk_dest_matches(&d, &x.dest);
                    }
                    for (size_t i = 0; i < pr->net_deny.n; i++) {
                        gk_dest d;
                        ck_assert_int_eq(gk_dest_parse_pattern(pr->net_deny.v[i], &d, NULL), 0);
                        proj &= !gk_dest_matches(&d, &x.dest);
                    }
                }
                if (proj != stack_decide(&p->stack, &x))
                    FAIL_LAW("the projection's net list decides like the fold", &x);
                continue;
            }
            if (x.kind > 1 || strcmp(x.path, "/dev/null") == 0)
                continue;
            bool write = x.kind == 1;
            bool proj = (!pr->fs_restricted ||
                         gk_regions_contain(write ? &pr->write : &pr->read, x.path, false)) &&
                        !gk_regions_contain(&pr->deny, x.path, true) &&
                        !(write && gk_regions_contain(&pr->readonly, x.path, true));
            if (proj != stack_decide(&p->stack, &x))
                FAIL_LAW("the projection decides like the fold", &x);
        }
        gk_projection_free(pr);
        grant_policy_free(p);
    }
    grant_context_free(ctx);
}
END_TEST


/* The gate's two paths (indexed answer, explained answer) agree, and on a
 * policy without implicit grants or sources both equal the plain fold. */
START_TEST(gate_paths_agree_with_the_fold)
{
    rng_state = 0x5851F42D4C957F2DULL;
    grant_context *ctx = gk_test_context_linux();
    for (size_t round = 0; round < ROUNDS; round++) {
        bool implicit = coin(50);
        grant_context_set_implicit(ctx, implicit);
        grant_policy *p = gk_policy_new(ctx);
        rnd_stack(&p->stack);
        for (int k = 0; k < QUERIES; k++) {
            q x;
            rnd_query(&x);
            grant_verdict v = {0};
            if (x.kind < 2) {
                grant_op op = x.kind == 0 ? GRANT_OP_READ : GRANT_OP_WRITE;
                grant_answer fast = gk_gate_fs(p, op, x.path, NULL);
                grant_answer slow = gk_gate_fs(p, op, x.path, &v);
                if (fast != slow)
                    FAIL_LAW("the indexed and the explained gate agree", &x);
                ck_assert_ptr_nonnull(v.rule);
                ck_assert_ptr_nonnull(v.origin);
                if (!implicit && (fast == GRANT_ALLOWED) != stack_decide(&p->stack, &x))
                    FAIL_LAW("the gate without implicit grants is the fold", &x);
                if (implicit && stack_decide(&p->stack, &x) && fast != GRANT_ALLOWED)
                    FAIL_LAW("implicit grants never take authority away", &x);
            } else if (x.kind == 2) {
                grant_answer a = gk_gate_exec(p, &x.e, &v);
                if ((a == GRANT_ALLOWED) != stack_decide(&p->stack, &x) ||
                    a != gk_gate_exec(p, &x.e, NULL))
                    FAIL_LAW("the exec gate is the fold", &x);
                ck_assert_ptr_nonnull(v.rule);
                /* "For some argv[1]" (what the projection asks) is the fold
                 * for one of the words the stacks name, or another, or none. */
                bool some = false;
                for (size_t w = 0; w <= N(argv1s) && !some; w++) {
                    grant_exec_query e = x.e;
                    e.argv1 = w < N(argv1s) ? argv1s[w] : NULL;
                    some = gk_decide_exec(&p->stack, &e);
                }
                if ((gk_gate_exec_some_argv1(p, &x.e) == GRANT_ALLOWED) != some ||
                    gk_decide_exec_some_argv1(&p->stack, &x.e) != some)
                    FAIL_LAW("admitted for some argv[1] is the fold for one", &x);
                /* The index's veto question is the layers' own. */
                bool vetoed = false;
                for (size_t l = 0; l < p->stack.n && !vetoed; l++)
                    vetoed = gk_layer_vetoes(p->stack.v[l], &x.e);
                if (gk_gate_exec_vetoed(p, &x.e) != vetoed)
                    FAIL_LAW("the index's vetoes are the layers' vetoes", &x);
            } else if (x.kind == 4) {
                grant_answer a = gk_gate_connect(p, &x.dest, &v);
                if ((a == GRANT_ALLOWED) != stack_decide(&p->stack, &x) ||
                    a != gk_gate_connect(p, &x.dest, NULL))
                    FAIL_LAW("the connect gate is the fold", &x);
                ck_assert_ptr_nonnull(v.rule);
                ck_assert_ptr_nonnull(v.origin);
            } else {
                grant_answer a = gk_gate_gate(p, x.path, &v);
                if ((a == GRANT_ALLOWED) != stack_decide(&p->stack, &x))
                    FAIL_LAW("the host gates are the fold", &x);
            }
            gk_verdict_clear(&v);
        }
        grant_policy_free(p);
    }
    grant_context_free(ctx);
}
END_TEST

/* A fresh policy shared by threads from its first query: each thread asks
 * every query while the others race to build the index, and all get the
 * fold's answers. */
#define SHARED_THREADS 8
#define SHARED_QUERIES 256

typedef struct shared_run {
    const grant_policy *p;
    const q *queries;
    const bool *want;
    pthread_barrier_t *start;
    size_t wrong;
} shared_run;

static void *shared_worker(void *arg)
{
    shared_run *r = arg;
    pthread_barrier_wait(r->start);
    for (size_t k = 0; k < SHARED_QUERIES; k++) {
        const q *x = &r->queries[k];
        grant_answer a = x->kind == 0   ? gk_gate_fs(r->p, GRANT_OP_READ, x->path, NULL)
                         : x->kind == 1 ? gk_gate_fs(r->p, GRANT_OP_WRITE, x->path, NULL)
                         : x->kind == 2 ? gk_gate_exec(r->p, &x->e, NULL)
                         : x->kind == 4 ? gk_gate_connect(r->p, &x->dest, NULL)
                                        : gk_gate_gate(r->p, x->path, NULL);
        r->wrong += (a == GRANT_ALLOWED) != r->want[k];
    }
    return NULL;
}

START_TEST(threads_share_a_fresh_policy)
{
    rng_state = 0x9E3779B97F4A7C15ULL;
    grant_context *ctx = gk_test_context_linux();
    grant_context_set_implicit(ctx, false);
    for (size_t round = 0; round < 50; round++) {
        grant_policy *p = gk_policy_new(ctx);
        rnd_stack(&p->stack);
        static q queries[SHARED_QUERIES];
        bool want[SHARED_QUERIES];
        for (size_t k = 0; k < SHARED_QUERIES; k++) {
            rnd_query(&queries[k]); /* its identities point into queries[k] */
            want[k] = stack_decide(&p->stack, &queries[k]);
        }
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, SHARED_THREADS);
        pthread_t th[SHARED_THREADS];
        shared_run runs[SHARED_THREADS];
        for (int t = 0; t < SHARED_THREADS; t++) {
            runs[t] = (shared_run){p, queries, want, &start, 0};
            ck_assert_int_eq(pthread_create(&th[t], NULL, shared_worker, &runs[t]), 0);
        }
        for (int t = 0; t < SHARED_THREADS; t++) {
            pthread_join(th[t], NULL);
            ck_assert_msg(runs[t].wrong == 0, "round %zu: thread %d gave %zu wrong answers",
                          round, t, runs[t].wrong);
        }
        pthread_barrier_destroy(&start);
        grant_policy_free(p);
    }
    grant_context_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("lattice");
    TCase *tc = tcase_create("laws");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, meet_laws);
    tcase_add_test(tc, deny_all_allows_only_the_discard_device);
    tcase_add_test(tc, join_laws);
    tcase_add_test(tc, net_laws);
    tcase_add_test(tc, compare_agrees_with_decisions);
    tcase_add_test(tc, join_keeps_a_veto_the_other_side_does_not_lift);
    tcase_add_test(tc, projection_agrees_with_the_fold);
    tcase_add_test(tc, gate_paths_agree_with_the_fold);
    tcase_add_test(tc, threads_share_a_fresh_policy);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
