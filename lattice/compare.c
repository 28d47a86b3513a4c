/* compare.c - deciding the order of two policies over a witness set
 * (grant-language.md §5): every name, path, dir and region either policy
 * mentions, with their parents, children and siblings, asked of both. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lattice/lattice.h"

#include <pcre2.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { Q_READ, Q_WRITE, Q_EXEC, Q_GATE, Q_NET } qkind;

typedef struct query {
    qkind kind;
    char *subject;            /* path, gate, spelling, or HOST:PORT (net) */
    char *walked, *canonical; /* exec identities (may be NULL) */
    char *argv1;              /* exec (may be NULL) */
    char *key;                /* serialised, for deduplication */
} query;

typedef struct witness {
    const char *kind;
    char *subject;
    bool a, b;
    query q; /* the query itself, for tests that re-decide it */
} witness;

struct grant_comparison {
    grant_order order;
    witness *w;
    size_t n, cap;
    size_t queries;
};

typedef struct qset {
    query *v;
    size_t n, cap;
} qset;

static void q_add(qset *s, qkind k, const char *subject, const char *walked, const char *canonical,
                  const char *argv1)
{
    query q = {k, gk_strdup(subject), gk_strdup(walked), gk_strdup(canonical), gk_strdup(argv1),
               NULL};
    q.key = gk_printf("%d\x1f%s\x1f%s\x1f%s\x1f%s", (int)k, subject, walked ? walked : "",
                      canonical ? canonical : "", argv1 ? argv1 : "\x1e");
    GK_VEC_PUSH(s->v, s->n, s->cap, q);
}

static void q_free(query *q)
{
    free(q->subject);
    free(q->walked);
    free(q->canonical);
    free(q->argv1);
    free(q->key);
}

static int q_cmp(const void *a, const void *b)
{
    return strcmp(((const query *)a)->key, ((const query *)b)->key);
}

static void qset_unique(qset *s)
{
    if (s->n < 2)
        return;
    qsort(s->v, s->n, sizeof(*s->v), q_cmp);
    size_t w = 1;
    for (size_t r = 1; r < s->n; r++) {
        if (strcmp(s->v[r].key, s->v[w - 1].key) == 0)
            q_free(&s->v[r]);
        else
            s->v[w++] = s->v[r];
    }
    s->n = w;
}

/* A path, its parent, a child, and siblings on both sides of the prefix
 * boundary (/usr-x is not within /usr). */
static void add_fs_witnesses(gk_strvec *paths, const char *p)
{
    gk_strvec_push(paths, p);
    char *parent = gk_path_parent(p);
    if (parent) {
        gk_strvec_push(paths, parent);
        gk_strvec_push_take(paths, gk_path_join(parent, "gk-sibling"));
        free(parent);
    }
    gk_strvec_push_take(paths, gk_path_join(p, "gk-child"));
    if (strcmp(p, "/") != 0)
        gk_strvec_push_take(paths, gk_printf("%s-gk", p));
}

static void collect_regions(gk_strvec *paths, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        add_fs_witnesses(paths, r->v[i].p.real);
        add_fs_witnesses(paths, r->v[i].p.path);
    }
}

/* A string the pattern matches, built from the portable subset (first
 * alternative, one repetition, first class member); NULL when the guess
 * does not match. */
static char *pattern_example(const gk_exec_dim *x, size_t i)
{
    const char *p = x->veto_match.v[i].key;
    gk_buf b = {0};
    int depth = 0, skip_depth = -1;
    for (size_t k = 0; p[k]; k++) {
        char c = p[k];
        if (skip_depth >= 0) {
            if (c == '\\' && p[k + 1])
                k++;
            else if (c == '(')
                depth++;
            else if (c == ')' && --depth < skip_depth)
                skip_depth = -1;
            continue;
        }
        switch (c) {
        case '^': case '$': case '*': case '?': case '+':
            break;
        case '(':
            depth++;
            break;
        case ')':
            depth--;
            break;
        case '|':
            /* Skip the other alternatives of this group. */
            skip_depth = depth;
            if (depth == 0)
                goto done;
            break;
        case '{':
            while (p[k] && p[k] != '}')
                k++;
            if (!p[k])
                goto done;
            break;
        case '.':
            gk_buf_putc(&b, 'a');
            break;
        case '[': {
            size_t j = k + 1;
            bool neg = p[j] == '^';
            if (neg)
                j++;
            gk_buf_putc(&b, neg ? (p[j] == 'Z' ? 'Y' : 'Z') : (p[j] == '\\' ? p[j + 1] : p[j]));
            /* find the closing bracket (a leading ']' is a member) */
            j++;
            while (p[j] && p[j] != ']')
                j += (p[j] == '\\' && p[j + 1]) ? 2 : 1;
            if (!p[j])
                goto done;
            k = j;
            break;
        }
        case '\\':
            if (p[k + 1])
                gk_buf_putc(&b, p[++k]);
            break;
        default:
            gk_buf_putc(&b, c);
        }
    }
done:
    if (!b.data)
        gk_buf_puts(&b, "");
    char *s = gk_buf_steal(&b, NULL);
    pcre2_code *code = x->match_code ? x->match_code[i] : NULL;
    if (!*s || !code) {
        free(s);
        return NULL;
    }
    /* A witness must really match: a matcher that gave up offers none. */
    if (gk_pattern_match(code, s, strlen(s), NULL) != 1) {
        free(s);
        return NULL;
    }
    return s;
}

typedef struct exec_material {
    gk_strvec names, files, dirs, argv1;
} exec_material;

static void collect_exec(exec_material *m, const gk_exec_dim *x)
{
    for (size_t i = 0; i < x->names.n; i++) {
        gk_strvec_push(&m->names, x->names.v[i].key);
        gk_strvec_copy(&m->argv1, &x->names.v[i].subs);
    }
    for (size_t i = 0; i < x->files.n; i++) {
        gk_strvec_push(&m->files, x->files.v[i].key);
        gk_strvec_push(&m->names, gk_basename(x->files.v[i].key));
        gk_strvec_copy(&m->argv1, &x->files.v[i].subs);
    }
    for (size_t i = 0; i < x->dirs.n; i++)
        gk_strvec_push(&m->dirs, x->dirs.v[i].key);
    for (size_t i = 0; i < x->veto_names.n; i++)
        gk_strvec_push(&m->names, x->veto_names.v[i].key);
    for (size_t i = 0; i < x->veto_files.n; i++) {
        gk_strvec_push(&m->files, x->veto_files.v[i].key);
        gk_strvec_push(&m->names, gk_basename(x->veto_files.v[i].key));
    }
    for (size_t i = 0; i < x->veto_dirs.n; i++)
        gk_strvec_push(&m->dirs, x->veto_dirs.v[i].key);
    for (size_t i = 0; i < x->veto_match.n; i++) {
        char *ex = pattern_example(x, i);
        if (ex)
            gk_strvec_push_take(&m->names, ex);
    }
}

/* PATH separator of the target (windows: ';', since ':' follows drives). */
static const char *path_sep(const grant_context *ctx)
{
    return ctx->target == GRANT_TARGET_WINDOWS ? ";" : ":";
}

/* On the host, a bare name walks PATH as the gate will. */
static char *host_walk(const grant_context *ctx, const char *name)
{
    if (ctx->target != GRANT_TARGET_HOST || !ctx->path)
        return NULL;
    char *list = gk_strdup(ctx->path);
    char *save = NULL, *walked = NULL;
    for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char *cand = gk_path_join(d, name);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            walked = cand;
            break;
        }
        free(cand);
    }
    free(list);
    return walked;
}

static char *host_canonical(const grant_context *ctx, const char *walked)
{
    if (ctx->target != GRANT_TARGET_HOST || !walked)
        return gk_strdup(walked);
    char *r = realpath(walked, NULL);
    return r ? r : NULL;
}

/* ---- classes of interchangeable witnesses ---------------------------------
 *
 * Two names that every layer of both policies treats alike (the same
 * admission and subcommands, the same veto, the same patterns hitting
 * them) decide alike in every query, and so do two subcommand words that
 * sit in exactly the same lists, and two files with the same rules, dirs
 * and basename class. The cross products of the witness set (walked places
 * x canonical files x words) take one representative per class, so a
 * policy of 100,000 rules written alike costs about as much as one rule;
 * every name still gets its own plain queries, so each differing name
 * still has its own witness. */

typedef struct compare_in {
    const grant_policy *pol[2];
    const gk_strvec *files; /* sorted */
    const gk_strvec *places;
} compare_in;

static void sig_admit(gk_buf *b, const gk_admit *a)
{
    if (!a)
        return;
    gk_buf_putc(b, a->all ? '*' : 'A');
    for (size_t k = 0; k < a->subs.n; k++) {
        gk_buf_puts(b, a->subs.v[k]);
        gk_buf_putc(b, '\x1f');
    }
}

/* Append, for every layer of both policies, what one item's rules there
 * are ('|' between layers): the signature two interchangeable items share. */
static void sig_layers(const compare_in *in, const char *item, gk_buf *b,
                       void (*rules)(gk_buf *, const gk_exec_dim *, const char *))
{
    for (int k = 0; k < 2; k++)
        for (size_t l = 0; l < in->pol[k]->stack.n; l++) {
            const gk_layer *f = in->pol[k]->stack.v[l];
            gk_buf_putc(b, '|');
            if (f->has_exec)
                rules(b, &f->exec, item);
        }
}

static void name_rules(gk_buf *b, const gk_exec_dim *x, const char *n)
{
    sig_admit(b, gk_admits_find(&x->names, n));
    if (gk_entries_has(&x->veto_names, n))
        gk_buf_putc(b, 'V');
    for (size_t i = 0; i < x->veto_match.n; i++)
        if (gk_veto_pattern_hits(x, i, n, strlen(n), NULL))
            gk_buf_printf(b, "P%zu,", i);
}

static void file_rules(gk_buf *b, const gk_exec_dim *x, const char *file)
{
    sig_admit(b, gk_admits_find(&x->files, file));
    if (gk_entries_has(&x->veto_files, file))
        gk_buf_putc(b, 'V');
    for (size_t i = 0; i < x->dirs.n; i++)
        if (gk_path_within(file, x->dirs.v[i].key) && strcmp(file, x->dirs.v[i].key))
            gk_buf_printf(b, "D%zu,", i);
    for (size_t i = 0; i < x->veto_dirs.n; i++)
        if (gk_path_within(file, x->veto_dirs.v[i].key) && strcmp(file, x->veto_dirs.v[i].key))
            gk_buf_printf(b, "W%zu,", i);
}

static char *name_sig(const compare_in *in, const char *n)
{
    /* A name that a place turns into a mentioned file is its own class. */
    for (size_t d = 0; d < in->places->n; d++) {
        gk_autofree char *p = gk_path_join(in->places->v[d], n);
        if (gk_strvec_bsearch(in->files, p))
            return gk_concat("\x1dunique:", n);
    }
    gk_buf b = {0};
    sig_layers(in, n, &b, name_rules);
    gk_buf_putc(&b, '\0');
    return gk_buf_steal(&b, NULL);
}

static char *file_sig(const compare_in *in, const char *file)
{
    gk_buf b = {0};
    sig_layers(in, file, &b, file_rules);
    gk_autofree char *base = name_sig(in, gk_basename(file));
    gk_buf_putc(&b, '#');
    gk_buf_puts(&b, base);
    return gk_buf_steal(&b, NULL);
}

typedef struct sig_item {
    char *sig;
    const char *item;
} sig_item;

static int sig_item_cmp(const void *a, const void *b)
{
    const sig_item *x = a, *y = b;
    int c = strcmp(x->sig, y->sig);
    return c ? c : gk_strcmp_bytes(x->item, y->item);
}

/* One representative (the bytewise first) of each class of sigs[i]; takes
 * the signatures. The result is sorted. */
static void pick_reps(sig_item *v, size_t n, gk_strvec *reps)
{
    qsort(v, n, sizeof(*v), sig_item_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(v[i].sig, v[i - 1].sig) != 0)
            gk_strvec_push(reps, v[i].item);
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].sig);
    free(v);
    gk_strvec_sort_unique(reps);
}

/* One representative of each class of items, classed by sig. */
static void reps_of(const compare_in *in, const gk_strvec *items,
                    char *(*sig)(const compare_in *, const char *), gk_strvec *reps)
{
    sig_item *v = gk_calloc(items->n + 1, sizeof(*v));
    for (size_t i = 0; i < items->n; i++)
        v[i] = (sig_item){sig(in, items->v[i]), items->v[i]};
    pick_reps(v, items->n, reps);
}

/* Words: each word's signature lists the admissions whose subcommand list
 * holds it, gathered in one pass over the lists (words sorted). */
static void word_reps(const compare_in *in, const gk_strvec *words, gk_strvec *reps)
{
    gk_buf *bufs = gk_calloc(words->n + 1, sizeof(*bufs));
    for (int k = 0; k < 2; k++)
        for (size_t l = 0; l < in->pol[k]->stack.n; l++) {
            const gk_layer *f = in->pol[k]->stack.v[l];
            if (!f->has_exec)
                continue;
            const gk_admits *lists[2] = {&f->exec.names, &f->exec.files};
            for (int li = 0; li < 2; li++)
                for (size_t i = 0; i < lists[li]->n; i++) {
                    const gk_admit *a = &lists[li]->v[i];
                    for (size_t s = 0; s < a->subs.n; s++) {
                        long at = gk_strvec_index(words, a->subs.v[s]);
                        if (at >= 0)
                            gk_buf_printf(&bufs[at], "%d.%zu.%d.%s\x1f", k, l, li, a->key);
                    }
                }
        }
    sig_item *v = gk_calloc(words->n + 1, sizeof(*v));
    for (size_t i = 0; i < words->n; i++) {
        if (!bufs[i].data)
            gk_buf_puts(&bufs[i], "");
        v[i] = (sig_item){gk_buf_steal(&bufs[i], NULL), words->v[i]};
    }
    free(bufs);
    pick_reps(v, words->n, reps);
}

static void add_exec_queries(qset *qs, const grant_policy *const pol[2], exec_material *m)
{
    const grant_context *ctx = pol[0]->ctx;
    gk_strvec_sort_unique(&m->names);
    gk_strvec_sort_unique(&m->files);
    gk_strvec_sort_unique(&m->dirs);
    gk_strvec_sort_unique(&m->argv1);
    gk_strvec_push(&m->names, "gk-other");
    gk_strvec_push(&m->argv1, "gk-other");
    gk_strvec_sort_unique(&m->names);
    gk_strvec_sort_unique(&m->argv1);

    /* PATH entries are places a bare name may walk to. */
    gk_strvec places = {0};
    gk_strvec_copy(&places, &m->dirs);
    if (ctx->path) {
        char *list = gk_strdup(ctx->path), *save = NULL;
        const char *sep = path_sep(ctx);
        for (char *d = strtok_r(list, sep, &save); d; d = strtok_r(NULL, sep, &save))
                gk_strvec_push(&places, d);
        free(list);
    }
    gk_strvec_sort_unique(&places);

    compare_in in = {{pol[0], pol[1]}, &m->files, &places};
    gk_strvec names = {0}, files = {0}, words = {0};
    reps_of(&in, &m->names, name_sig, &names);
    reps_of(&in, &m->files, file_sig, &files);
    word_reps(&in, &m->argv1, &words);

    /* Offline, a walked file may be a link to anything: let its canonical
     * file be itself (slot 0), each file mentioned, or a file carrying each
     * name mentioned (names and patterns veto by basename). On the host the
     * filesystem answers instead. */
    gk_strvec canon = {0};
    gk_strvec_push(&canon, "");
    if (ctx->target != GRANT_TARGET_HOST) {
        gk_strvec_copy(&canon, &files);
        for (size_t i = 0; i < names.n; i++)
            gk_strvec_push_take(&canon, gk_path_join("/gk-canonical", names.v[i]));
    }

    for (size_t a = 0; a <= words.n; a++) {
        const char *argv1 = a < words.n ? words.v[a] : NULL;
        for (size_t i = 0; i < m->names.n; i++) {
            const char *n = m->names.v[i];
            char *walked = host_walk(ctx, n);
            char *host_canon = host_canonical(ctx, walked);
            q_add(qs, Q_EXEC, n, walked, host_canon, argv1);
            free(walked);
            free(host_canon);
            q_add(qs, Q_EXEC, n, NULL, NULL, argv1);
        }
        for (size_t i = 0; i < names.n; i++) {
            const char *n = names.v[i];
            for (size_t d = 0; d < places.n; d++) {
                char *p = gk_path_join(places.v[d], n);
                for (size_t c = 0; c < canon.n; c++) {
                    const char *cf = c == 0 ? p : canon.v[c];
                    q_add(qs, Q_EXEC, n, p, cf, argv1);
                    q_add(qs, Q_EXEC, p, p, cf, argv1);
                }
                free(p);
            }
        }
        for (size_t i = 0; i < m->files.n; i++) {
            const char *f = m->files.v[i];
            bool rep = gk_strvec_bsearch(&files, f);
            for (size_t c = 0; c < (rep ? canon.n : 1); c++) {
                const char *cf = c == 0 ? f : canon.v[c];
                q_add(qs, Q_EXEC, f, f, cf, argv1);
                q_add(qs, Q_EXEC, gk_basename(f), f, cf, argv1);
            }
        }
    }
    gk_strvec_free(&places);
    gk_strvec_free(&canon);
    gk_strvec_free(&names);
    gk_strvec_free(&files);
    gk_strvec_free(&words);
}

static void collect(qset *qs, gk_strvec *paths, exec_material *m, const grant_policy *p)
{
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_layer *f = p->stack.v[i];
        if (f->has_fs) {
            collect_regions(paths, &f->fs.read);
            collect_regions(paths, &f->fs.write);
            collect_regions(paths, &f->fs.readonly);
            collect_regions(paths, &f->fs.deny);
        }
        if (f->has_exec)
            collect_exec(m, &f->exec);
    }
    (void)qs;
}

/* ---- net witnesses ------------------------------------------------------
 *
 * A destination's decision depends only on which patterns match it: the
 * NAME patterns it equals, the wildcard suffixes it lies under (a chain, so
 * "w." + the longest one decides like every name under exactly those), the
 * address patterns it equals, and whether its port is named. So the
 * witnesses are each name and address, "w." + each wildcard suffix and the
 * suffix itself, one name no pattern matches, each at every named port and
 * one port none names. */

static void collect_net(gk_strvec *hosts, gk_strvec *ports, const gk_entries *e,
                        const gk_dest *d)
{
    for (size_t i = 0; i < e->n; i++) {
        const gk_dest *x = &d[i];
        if (x->port)
            gk_strvec_push_take(ports, gk_printf("%05u", (unsigned)x->port));
        if (x->kind == GK_DEST_WILD) {
            gk_strvec_push(hosts, x->host);
            gk_strvec_push_take(hosts, gk_concat("w.", x->host));
        } else if (x->kind == GK_DEST_V6) {
            gk_strvec_push_take(hosts, gk_printf("[%s]", x->host));
        } else {
            gk_strvec_push(hosts, x->host);
        }
    }
}

static void add_net_queries(qset *qs, const grant_policy *const both[2])
{
    gk_strvec hosts = {0}, ports = {0};
    bool any = false;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < both[k]->stack.n; i++) {
            const gk_layer *f = both[k]->stack.v[i];
            if (!f->net_list)
                continue;
            any = true;
            collect_net(&hosts, &ports, &f->netd.allow, f->netd.allow_d);
            collect_net(&hosts, &ports, &f->netd.deny, f->netd.deny_d);
        }
    if (!any)
        return; /* the gate "net" tells all-or-nothing policies apart */
    gk_strvec_push(&hosts, "gk-witness.invalid");
    gk_strvec_sort_unique(&hosts);
    gk_strvec_sort_unique(&ports);
    unsigned unnamed = 1;
    for (size_t i = 0; i < ports.n && (unsigned)atoi(ports.v[i]) == unnamed; i++)
        unnamed++;
    for (size_t h = 0; h < hosts.n; h++) {
        for (size_t i = 0; i <= ports.n; i++) {
            unsigned port = i < ports.n ? (unsigned)atoi(ports.v[i]) : unnamed;
            gk_autofree char *subject = gk_printf("%s:%u", hosts.v[h], port);
            q_add(qs, Q_NET, subject, NULL, NULL, NULL);
        }
    }
    gk_strvec_free(&hosts);
    gk_strvec_free(&ports);
}

static bool decide_net(const grant_policy *p, const char *subject)
{
    const char *colon = strrchr(subject, ':');
    gk_autofree char *host = gk_strndup(subject, (size_t)(colon - subject));
    gk_dest q;
    if (gk_dest_parse_query(host, (unsigned)atoi(colon + 1), &q) < 0)
        return false;
    return gk_decide_connect(&p->stack, &q);
}

static const char *kind_name(qkind k)
{
    switch (k) {
    case Q_READ:
        return "read";
    case Q_WRITE:
        return "write";
    case Q_EXEC:
        return "exec";
    case Q_NET:
        return "net";
    default:
        return "gate";
    }
}

static bool decide(const grant_policy *p, const query *q)
{
    switch (q->kind) {
    case Q_READ:
        return gk_decide_fs(&p->stack, GRANT_OP_READ, q->subject);
    case Q_WRITE:
        return gk_decide_fs(&p->stack, GRANT_OP_WRITE, q->subject);
    case Q_EXEC: {
        grant_exec_query eq = {q->subject, q->walked, q->canonical, q->argv1};
        return gk_decide_exec(&p->stack, &eq);
    }
    case Q_NET:
        return decide_net(p, q->subject);
    default:
        return gk_decide_gate(&p->stack, q->subject) == GK_TRI_TRUE;
    }
}

static char *describe(const query *q)
{
    if (q->kind != Q_EXEC)
        return gk_strdup(q->subject);
    gk_buf b = {0};
    gk_buf_puts(&b, q->subject);
    if (q->argv1)
        gk_buf_printf(&b, " %s", q->argv1);
    if (q->walked && strcmp(q->walked, q->subject) != 0)
        gk_buf_printf(&b, " (found at %s)", q->walked);
    else if (!q->walked && !strchr(q->subject, '/'))
        gk_buf_puts(&b, " (not found on PATH)");
    if (q->canonical && q->walked && strcmp(q->canonical, q->walked) != 0)
        gk_buf_printf(&b, " (-> %s)", q->canonical);
    return gk_buf_steal(&b, NULL);
}

int grant_compare(const grant_policy *a, const grant_policy *b, grant_comparison **out)
{
    if (!a || !b || !out)
        return -EINVAL;
    qset qs = {0};
    gk_strvec paths = {0};
    exec_material m = {0};
    collect(&qs, &paths, &m, a);
    collect(&qs, &paths, &m, b);
    gk_strvec_push(&paths, "/");
    gk_strvec_push(&paths, "/dev/null");
    gk_strvec_sort_unique(&paths);
    for (size_t i = 0; i < paths.n; i++) {
        q_add(&qs, Q_READ, paths.v[i], NULL, NULL, NULL);
        q_add(&qs, Q_WRITE, paths.v[i], NULL, NULL, NULL);
    }
    const grant_policy *const both[2] = {a, b};
    add_exec_queries(&qs, both, &m);
    static const char *const gates[] = {"net", "shell.chdir", "editor.read", "editor.write",
                                        "editor.tui"};
    for (size_t i = 0; i < sizeof(gates) / sizeof(*gates); i++)
        q_add(&qs, Q_GATE, gates[i], NULL, NULL, NULL);
    add_net_queries(&qs, both);
    qset_unique(&qs);

    grant_comparison *c = gk_calloc(1, sizeof(*c));
    bool a_only = false, b_only = false;
    const query *last = NULL;
    for (size_t i = 0; i < qs.n; i++) {
        bool da = decide(a, &qs.v[i]), db = decide(b, &qs.v[i]);
        /* One witness per subject and direction is enough to show a
         * difference; the queries are sorted, so repeats are adjacent. */
        bool repeat = last && last->kind == qs.v[i].kind &&
                      strcmp(last->subject, qs.v[i].subject) == 0 && c->n &&
                      c->w[c->n - 1].a == da;
        if (da != db && !repeat) {
            witness w = {kind_name(qs.v[i].kind), describe(&qs.v[i]), da, db, qs.v[i]};
            qs.v[i].key = NULL; /* ownership moved into the witness */
            qs.v[i].subject = qs.v[i].walked = qs.v[i].canonical = qs.v[i].argv1 = NULL;
            GK_VEC_PUSH(c->w, c->n, c->cap, w);
            last = &c->w[c->n - 1].q;
        }
        if (da != db) {
            a_only |= da;
            b_only |= db;
        }
    }
    c->queries = qs.n;
    c->order = !a_only && !b_only ? GRANT_EQUAL
               : !a_only          ? GRANT_NARROWER
               : !b_only          ? GRANT_WIDER
                                  : GRANT_INCOMPARABLE;
    for (size_t i = 0; i < qs.n; i++)
        q_free(&qs.v[i]);
    free(qs.v);
    gk_strvec_free(&paths);
    gk_strvec_free(&m.names);
    gk_strvec_free(&m.files);
    gk_strvec_free(&m.dirs);
    gk_strvec_free(&m.argv1);
    *out = c;
    return 0;
}

void grant_comparison_free(grant_comparison *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->w[i].subject);
        q_free(&c->w[i].q);
    }
    free(c->w);
    free(c);
}

grant_order grant_comparison_order(const grant_comparison *c)
{
    return c->order;
}

size_t grant_comparison_witness_count(const grant_comparison *c)
{
    return c->n;
}

size_t grant_comparison_queries(const grant_comparison *c)
{
    return c->queries;
}

int grant_comparison_witness(const grant_comparison *c, size_t i, const char **kind,
                             const char **subject, bool *a_allows, bool *b_allows)
{
    if (!c || i >= c->n)
        return -EINVAL;
    if (kind)
        *kind = c->w[i].kind;
    if (subject)
        *subject = c->w[i].subject;
    if (a_allows)
        *a_allows = c->w[i].a;
    if (b_allows)
        *b_allows = c->w[i].b;
    return 0;
}

const char *grant_order_name(grant_order o)
{
    switch (o) {
    case GRANT_EQUAL:
        return "equal";
    case GRANT_NARROWER:
        return "narrower";
    case GRANT_WIDER:
        return "wider";
    default:
        return "incomparable";
    }
}

int gk_comparison_query(const grant_comparison *c, size_t i, int *kind, const char **path,
                        grant_exec_query *eq)
{
    if (!c || i >= c->n)
        return -EINVAL;
    const query *q = &c->w[i].q;
    *kind = (int)q->kind;
    *path = q->subject;
    eq->spelling = q->subject;
    eq->walked = q->walked;
    eq->canonical = q->canonical;
    eq->argv1 = q->argv1;
    return 0;
}
