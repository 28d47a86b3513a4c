/* audit_checks.c - the checks of `grantc audit` (the catalogue of ids is
 * audit.c) and grant_audit, which runs them and sorts the findings.
 *
 * Writability and readability are asked of the fold without the gate's
 * additions (gk_decide_fs): the implicit /tmp is a private tmpfs, so a
 * socket or a PATH dir there is not the host's, and the gate's protection
 * of the policy's own sources is exactly what finding GK004 looks past.
 * The host is read (sockets, realpath of sources, access(2) on PATH dirs,
 * lstat of deny entries) only for host-target policies.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analysis/analysis.h"
#include "common/pathmap.h"
#include "lattice/lattice.h"
#include "gate/gate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- programs whose arguments can run arbitrary commands (GK007) -------- */

/* subs: space-separated argv[1] values that run commands; NULL: any list,
 * because later arguments, options or escapes run commands whatever
 * argv[1] is. */
typedef struct shell_capable {
    const char *name;
    const char *subs;
    const char *why;
} shell_capable;

static const shell_capable shell_capable_table[] = {
    {"git", NULL,
     "aliases, `-c core.pager=...`/`-c core.sshCommand=...`, pagers, diff and textconv drivers, "
     "and repository config (core.fsmonitor, core.hooksPath, hooks) run commands"},
    {"find", NULL, "-exec, -execdir, -ok and -okdir run programs"},
    {"sh", NULL, "a shell runs anything"},
    {"bash", NULL, "a shell runs anything"},
    {"zsh", NULL, "a shell runs anything"},
    {"dash", NULL, "a shell runs anything"},
    {"ksh", NULL, "a shell runs anything"},
    {"mksh", NULL, "a shell runs anything"},
    {"fish", NULL, "a shell runs anything"},
    {"csh", NULL, "a shell runs anything"},
    {"tcsh", NULL, "a shell runs anything"},
    {"busybox", NULL, "busybox is every applet, sh included"},
    {"env", NULL, "env runs its arguments as a command"},
    {"xargs", NULL, "xargs runs its arguments as a command"},
    {"nice", NULL, "nice runs its arguments as a command"},
    {"timeout", NULL, "timeout runs its arguments as a command"},
    {"nohup", NULL, "nohup runs its arguments as a command"},
    {"stdbuf", NULL, "stdbuf runs its arguments as a command"},
    {"setsid", NULL, "setsid runs its arguments as a command"},
    {"time", NULL, "time runs its arguments as a command"},
    {"watch", NULL, "watch runs its arguments through a shell"},
    {"flock", NULL, "flock runs its arguments as a command"},
    {"ionice", NULL, "ionice runs its arguments as a command"},
    {"taskset", NULL, "taskset runs its arguments as a command"},
    {"chrt", NULL, "chrt runs its arguments as a command"},
    {"strace", NULL, "strace runs its arguments as a command"},
    {"ltrace", NULL, "ltrace runs its arguments as a command"},
    {"gdb", NULL, "gdb runs programs and shell commands"},
    {"sudo", NULL, "sudo runs its arguments as a command"},
    {"doas", NULL, "doas runs its arguments as a command"},
    {"make", NULL, "make runs the recipes of a (writable) makefile, and --eval/-f pick them"},
    {"awk", NULL, "awk programs call system() and pipe to commands"},
    {"gawk", NULL, "awk programs call system() and pipe to commands"},
    {"mawk", NULL, "awk programs call system() and pipe to commands"},
    {"nawk", NULL, "awk programs call system() and pipe to commands"},
    {"sed", NULL, "GNU sed's `e` command and `s///e` flag run commands"},
    {"vi", NULL, "`:!cmd` runs commands"},
    {"vim", NULL, "`:!cmd` and -c run commands"},
    {"nvim", NULL, "`:!cmd` and -c run commands"},
    {"ex", NULL, "`:!cmd` runs commands"},
    {"view", NULL, "`:!cmd` runs commands"},
    {"less", NULL, "`!cmd`, LESSOPEN and the editor key run commands"},
    {"more", NULL, "`!cmd` runs commands"},
    {"man", NULL, "man runs a pager (and `!cmd` in it) and preprocessors"},
    {"ssh", NULL, "a remote command, ProxyCommand and LocalCommand run commands"},
    {"tar", NULL, "--to-command, --use-compress-program and --checkpoint-action=exec run commands"},
    {"rsync", NULL, "-e and --rsync-path run commands"},
    {"python", NULL, "an interpreter runs any code (-c)"},
    {"python3", NULL, "an interpreter runs any code (-c)"},
    {"perl", NULL, "an interpreter runs any code (-e)"},
    {"ruby", NULL, "an interpreter runs any code (-e)"},
    {"node", NULL, "an interpreter runs any code (-e)"},
    {"lua", NULL, "an interpreter runs any code (-e)"},
    {"php", NULL, "an interpreter runs any code (-r)"},
    {"docker", "exec run create start compose build buildx container",
     "`docker exec`/`run` run commands in containers that can mount the host"},
    {"podman", "exec run create start compose build container",
     "`podman exec`/`run` run commands in containers that can mount the host"},
    {"kubectl", "exec run debug attach", "`kubectl exec`/`run`/`debug` run commands"},
    {"npm", "run run-script exec x install i ci test t start restart explore rebuild",
     "package scripts and `npm exec` run commands"},
    {"yarn", "run exec install add test start dlx", "package scripts run commands"},
    {"pnpm", "run exec install add test start dlx", "package scripts run commands"},
    {"cargo", "run build b check c test t bench install clippy doc",
     "build scripts (build.rs), proc macros and `cargo run` run code"},
};


typedef struct audit {
    const grant_policy *p;
    const gk_stack *s;
    const grant_context *ctx;
    gk_projection *pr;
    bool host, linux_target, windows_target, macos_target;
    /* Prefixes readable/writable before denies and readonly entries apply,
     * implicit grants included. all_fs: no layer restricts the filesystem. */
    bool all_fs;
    gk_strvec readable, writable;
    /* Admission entries found to admit nothing: notes about how they are
     * enforced (GK007, GK011) would only repeat that. */
    const gk_admit **dead;
    size_t ndead, capdead;
    /* Every deny and readonly entry of the stack by each of its spellings,
     * sorted by spelling: the entries that may cover a path are those keyed
     * by one of its ancestors (refusal_redundant). */
    struct refusal_key *refusals;
    size_t nrefusals;
    grant_findings *out;
} audit;

typedef struct refusal_key {
    const char *key;        /* the entry's real or surface spelling */
    const gk_region *entry;
    int kind;               /* 0 deny, 1 readonly */
    size_t layer, index;    /* the scan order refusal_redundant keeps */
} refusal_key;

static void mark_dead(audit *A, const gk_admit *a)
{
    GK_VEC_PUSH(A->dead, A->ndead, A->capdead, a);
}

static bool is_dead(const audit *A, const gk_admit *a)
{
    for (size_t i = 0; i < A->ndead; i++)
        if (A->dead[i] == a)
            return true;
    return false;
}

/* Split "file:line" (the origin of a rule or layer). */
static void split_origin(const char *origin, char **file, unsigned *line)
{
    *file = NULL;
    *line = 0;
    if (!origin || !*origin)
        return;
    const char *colon = strrchr(origin, ':');
    if (colon && colon[1]) {
        char *end = NULL;
        unsigned long n = strtoul(colon + 1, &end, 10);
        if (end && !*end && n > 0 && n < 0x7fffffffUL) {
            *file = gk_strndup(origin, (size_t)(colon - origin));
            *line = (unsigned)n;
            return;
        }
    }
    *file = gk_strdup(origin);
}

/* A policy found along the policy path (a bundled baseline such as
 * base/minimal.grant) that was not the first FILE: its rules are written
 * for every context and the user cannot edit them, so a rule of it that is
 * dead in this context is not reported (GK002, GK003). */
static bool library_file(const audit *A, const char *file)
{
    if (!file || !A->ctx->policy_path)
        return false;
    if (A->p->nsources && strcmp(file, A->p->sources[0].file) == 0)
        return false;
    bool lib = false;
    gk_autofree char *list = gk_strdup(A->ctx->policy_path);
    char *save = NULL;
    for (char *d = strtok_r(list, ":", &save); d && !lib; d = strtok_r(NULL, ":", &save)) {
        gk_autofree char *dir = gk_path_join(d, "");
        lib = *d && gk_has_prefix(file, dir);
    }
    return lib;
}

static void add(audit *A, int rule, const char *origin, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void add(audit *A, int rule, const char *origin, const char *subject, const char *fmt, ...)
{
    gk_finding f = {.rule = &gk_audit_rules[rule], .severity = gk_audit_rules[rule].severity};
    split_origin(origin, &f.file, &f.line);
    if ((rule == GK_R_SHADOWED || rule == GK_R_NO_EFFECT) && library_file(A, f.file)) {
        free(f.file);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    f.message = gk_vprintf(fmt, ap);
    va_end(ap);
    f.subject = gk_strdup(subject ? subject : "");
    GK_VEC_PUSH(A->out->v, A->out->n, A->out->cap, f);
}

/* A location for a finding about a whole file (no rule responsible). */
static void add_file(audit *A, int rule, const char *file, const char *subject, const char *msg)
{
    gk_finding f = {.rule = &gk_audit_rules[rule],
                    .severity = gk_audit_rules[rule].severity,
                    .file = gk_strdup(file)};
    f.message = gk_strdup(msg);
    f.subject = gk_strdup(subject);
    GK_VEC_PUSH(A->out->v, A->out->n, A->out->cap, f);
}

/* ---- helpers ------------------------------------------------------------- */

static bool overlaps(const char *a, const char *b)
{
    return gk_path_within(a, b) || gk_path_within(b, a);
}

/* Does the region cover every canonical path within `real`? Regions that
 * refuse (deny, readonly) hold on both spellings. */
static bool real_covered(const char *real, const gk_fpath *by)
{
    return gk_path_within(real, by->real) || gk_path_within(real, by->path);
}

/* Does a refusing entry `by` cover everything refusing entry `e` covers
 * (both spellings of each)? */
static bool refusal_covered(const gk_fpath *e, const gk_fpath *by)
{
    return real_covered(e->real, by) && real_covered(e->path, by);
}

/* The prefix lists below are sorted bytewise, so every entry beneath a
 * path p (those starting with "p/") is one contiguous run, and each
 * ancestor of p is one binary search: a large policy costs O(depth log n)
 * per question rather than a scan. */
static bool within_any(const gk_strvec *prefixes, const char *p)
{
    if (!prefixes->n)
        return false;
    if (p[0] != '/') {
        /* A drive-letter path (windows target): lists are short there. */
        for (size_t i = 0; i < prefixes->n; i++)
            if (gk_path_within(p, prefixes->v[i]))
                return true;
        return false;
    }
    gk_autofree char *a = gk_strdup(p);
    size_t len = strlen(a);
    for (;;) {
        if (gk_strvec_bsearch(prefixes, a))
            return true;
        if (len <= 1)
            return false;
        while (len > 1 && a[len - 1] != '/')
            len--;
        a[len > 1 ? len - 1 : 1] = '\0';
        len = strlen(a);
    }
}

static bool has_entry_beneath(const gk_strvec *prefixes, const char *p)
{
    if (strcmp(p, "/") == 0)
        return prefixes->n > 0;
    /* A drive root "d:/" ends in its '/' already. */
    bool drive_root = gk_path_root_len(p) == 3 && !p[3];
    gk_autofree char *lo = drive_root ? gk_strdup(p) : gk_printf("%s/", p);
    size_t l = 0, h = prefixes->n;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (gk_strcmp_bytes(prefixes->v[mid], lo) < 0)
            l = mid + 1;
        else
            h = mid;
    }
    return l < prefixes->n && gk_has_prefix(prefixes->v[l], lo);
}

static bool overlaps_any(const gk_strvec *prefixes, const gk_fpath *e)
{
    return within_any(prefixes, e->real) || has_entry_beneath(prefixes, e->real) ||
           within_any(prefixes, e->path) || has_entry_beneath(prefixes, e->path);
}

/* Length of the longest prefix in the list holding p, or -1. */
static long longest_within(const gk_strvec *prefixes, const char *p)
{
    long best = -1;
    for (size_t i = 0; i < prefixes->n; i++)
        if (gk_path_within(p, prefixes->v[i]) && (long)strlen(prefixes->v[i]) > best)
            best = (long)strlen(prefixes->v[i]);
    return best;
}

/* The effective region holding p (its origin names the rule). */
static const gk_region *region_holding(const gk_regions *r, const char *p)
{
    const gk_region *best = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(p, r->v[i].p.real) &&
            (!best || strlen(r->v[i].p.real) > strlen(best->p.real)))
            best = &r->v[i];
    return best;
}

static const char *layer_name(const gk_layer *f)
{
    return f->name ? f->name : "(anonymous)";
}

static char *admit_text(const gk_admit *a)
{
    if (a->all)
        return gk_printf("allow %s", a->key);
    gk_autofree char *l = gk_strvec_join(&a->subs, " ");
    return gk_printf("allow %s [%s]", a->key, l);
}

static bool pattern_hits(const gk_exec_dim *x, size_t i, const char *base)
{
    return gk_veto_pattern_hits(x, i, base, strlen(base), NULL); /* as the gate decides */
}

/* Host: can this user create or replace entries in dir (or, if it does not
 * exist, in its nearest existing ancestor)? The sandbox never grants more
 * than the user has. */
static bool host_user_can_write(const char *dir)
{
    gk_autofree char *d = gk_strdup(dir);
    while (d) {
        if (access(d, W_OK) == 0)
            return true;
        if (errno != ENOENT && errno != ENOTDIR)
            return false;
        char *up = gk_path_parent(d);
        free(d);
        d = up;
    }
    return false;
}

/* A PATH entry or source file name made absolute and canonical for the
 * target, as the gate resolves its own queries. */
static char *resolve(const audit *A, const char *name)
{
    return gk_resolve_query(A->ctx, name, NULL);
}

/* Where a source file is. On the host, the file that was read (a relative
 * name was opened against the process's directory); for another target,
 * the name taken relative to the context cwd, as the policy's own paths. */
static char *source_path(const audit *A, const char *file)
{
    if (A->host) {
        char *real = realpath(file, NULL);
        if (real)
            return real;
    }
    return resolve(A, file);
}

/* gk_decide_fs says the stack lets a command write path. With a region
 * granting it, that is the policy's own doing. With no layer restricting
 * the filesystem, the command can write what its user can: on the host,
 * ask; offline, assume the user's own trees (home, the project, the
 * temporary directory), not system directories. */
static bool user_writable(const audit *A, const char *path)
{
    if (!A->all_fs)
        return true;
    if (A->host)
        return host_user_can_write(path);
    const char *mine[3] = {A->ctx->home, A->ctx->cwd, A->ctx->tempdir};
    for (int i = 0; i < 3; i++) {
        gk_autofree char *c = mine[i] ? gk_canonicalize(A->ctx, mine[i]) : NULL;
        if (c && strcmp(c, "/") != 0 && gk_path_within(path, c))
            return true;
    }
    return false;
}

/* ---- GK001 deputy ------------------------------------------------------- */

static const char *exec_origin_for(const audit *A, const char *prefix, const char **rule_key,
                                   bool *is_dir)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < A->s->n; i++) {
            const gk_layer *f = A->s->v[i];
            if (!f->has_exec || !f->exec.has_allow)
                continue;
            for (size_t k = 0; k < f->exec.dirs.n; k++) {
                const gk_entry *e = &f->exec.dirs.v[k];
                if (pass == 0 ? strcmp(e->key, prefix) == 0 : overlaps(e->key, prefix)) {
                    *rule_key = e->key;
                    *is_dir = true;
                    return e->origin;
                }
            }
            for (size_t k = 0; k < f->exec.files.n; k++) {
                const gk_admit *a = &f->exec.files.v[k];
                if (pass == 0 ? strcmp(a->key, prefix) == 0 : overlaps(a->key, prefix)) {
                    *rule_key = a->key;
                    *is_dir = false;
                    return a->origin;
                }
            }
        }
    return NULL;
}

static void check_deputy(audit *A)
{
    for (size_t i = 0; i < A->pr->deputy.n; i++) {
        const char *d = A->pr->deputy.v[i];
        const char *key = NULL;
        bool dir = false;
        const char *eorigin = exec_origin_for(A, d, &key, &dir);
        const gk_region *w = NULL;
        for (size_t k = 0; k < A->pr->write.n && !w; k++)
            if (overlaps(A->pr->write.v[k].p.real, d))
                w = &A->pr->write.v[k];
        gk_buf b = {0};
        gk_buf_printf(&b, "%s is writable", d);
        if (w)
            gk_buf_printf(&b, " (write %s, %s)", w->p.path, w->origin);
        gk_buf_puts(&b, " and exec-admitted");
        if (eorigin)
            gk_buf_printf(&b, " (allow %s%s, %s)", key, dir ? "/" : "", eorigin);
        gk_buf_puts(&b, ": a program written there can then be run");
        add(A, GK_R_DEPUTY, eorigin ? eorigin : w ? w->origin : NULL, d, "%s", b.data);
        gk_buf_free(&b);
    }
}

/* ---- GK002 / GK003: filesystem rules ------------------------------------ */

/* The first deny (any layer) covering every canonical path within real. */
static const gk_region *deny_covering(const audit *A, const char *real, const gk_region *self)
{
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (!g->has_fs)
            continue;
        for (size_t m = 0; m < g->fs.deny.n; m++)
            if (&g->fs.deny.v[m] != self && real_covered(real, &g->fs.deny.v[m].p))
                return &g->fs.deny.v[m];
    }
    return NULL;
}

/* A refusing entry (layer i, list `which` 0 deny / 1 readonly, index k)
 * covered by another one. Of two entries covering each other, the one in
 * the later layer is the redundant one. */
static int refusal_key_cmp(const void *a, const void *b)
{
    return gk_strcmp_bytes(((const refusal_key *)a)->key, ((const refusal_key *)b)->key);
}

static void refusals_index(audit *A)
{
    size_t cap = 0;
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (!g->has_fs)
            continue;
        for (int w = 0; w < 2; w++) {
            const gk_regions *r = w == 0 ? &g->fs.deny : &g->fs.readonly;
            for (size_t m = 0; m < r->n; m++) {
                const gk_region *o = &r->v[m];
                refusal_key a = {o->p.real, o, w, j, m}, b = {o->p.path, o, w, j, m};
                GK_VEC_PUSH(A->refusals, A->nrefusals, cap, a);
                if (strcmp(o->p.path, o->p.real) != 0)
                    GK_VEC_PUSH(A->refusals, A->nrefusals, cap, b);
            }
        }
    }
    if (A->nrefusals)
        qsort(A->refusals, A->nrefusals, sizeof(*A->refusals), refusal_key_cmp);
}

/* An earlier refusal (in the order of the former scan: kind, layer, index)
 * that covers entry e, or NULL. Candidates are found by e's real spelling:
 * an entry covering it is keyed by one of its ancestors, so the cost is
 * O(depth log n) per entry instead of a scan of every entry. */
static const gk_region *refusal_redundant(const audit *A, size_t i, int which, size_t k,
                                          bool *by_deny)
{
    const gk_layer *f = A->s->v[i];
    const gk_region *e = which == 0 ? &f->fs.deny.v[k] : &f->fs.readonly.v[k];
    const refusal_key *best = NULL;
    gk_path_prefixes px;
    gk_path_prefixes_of(e->p.real, &px);
    gk_autofree char *a = gk_strdup(e->p.real);
    for (size_t pi = px.n; pi-- > 0;) { /* e itself, then each ancestor */
        a[px.len[pi]] = '\0';
        refusal_key probe = {.key = a};
        refusal_key *hit = A->nrefusals ? bsearch(&probe, A->refusals, A->nrefusals,
                                                  sizeof(*A->refusals), refusal_key_cmp)
                                        : NULL;
        /* bsearch lands on any of the equal keys: widen to the run. */
        const refusal_key *lo = hit, *hi = hit;
        while (lo && lo > A->refusals && strcmp((lo - 1)->key, a) == 0)
            lo--;
        while (hi && hi + 1 < A->refusals + A->nrefusals && strcmp((hi + 1)->key, a) == 0)
            hi++;
        for (const refusal_key *c = lo; c && c <= hi; c++) {
            const gk_region *o = c->entry;
            if (c->kind > which || o == e || !refusal_covered(&e->p, &o->p))
                continue;
            /* Mutual cover within one kind: keep the earlier entry. */
            if (c->kind == which && refusal_covered(&o->p, &e->p) &&
                (c->layer > i || (c->layer == i && c->index > k)))
                continue;
            if (!best || c->kind < best->kind ||
                (c->kind == best->kind &&
                 (c->layer < best->layer || (c->layer == best->layer && c->index < best->index))))
                best = c;
        }
    }
    gk_path_prefixes_free(&px);
    if (!best)
        return NULL;
    *by_deny = best->kind == 0;
    return best->entry;
}

/* Did this read entry come from a write rule (write implies read)? The
 * canonical write list is sorted by gk_fpath_cmp. */
static bool is_write_entry(const gk_layer *f, const gk_region *r)
{
    size_t lo = 0, hi = f->fs.write.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = gk_fpath_cmp(&f->fs.write.v[mid].p, &r->p);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The first region of the canonical list (sorted by real spelling) other
 * than entry k that holds it: an ancestor-or-self by real spelling, an
 * equal one only before k. Each ancestor of its real spelling is one
 * binary search, so a grant of 100,000 regions costs O(n depth log n). */
static const gk_region *same_layer_cover(const gk_regions *list, size_t k)
{
    const gk_region *r = &list->v[k];
    long best = -1;
    gk_path_prefixes px;
    gk_path_prefixes_of(r->p.real, &px);
    for (size_t pi = 0; pi < px.n; pi++) {
        size_t len = px.len[pi];
        bool self = r->p.real[len] == '\0';
        /* The first of each run of equal spellings is its smallest index. */
        for (long m = gk_regions_first_real(list, r->p.real, len);
             m >= 0 && (size_t)m < list->n && strncmp(list->v[m].p.real, r->p.real, len) == 0 &&
             list->v[m].p.real[len] == '\0';
             m++) {
            if ((size_t)m == k || (self && (size_t)m > k))
                continue;
            if (best < 0 || m < best)
                best = m;
            break;
        }
    }
    gk_path_prefixes_free(&px);
    return best < 0 ? NULL : &list->v[best];
}

/* A restricting layer other than f that grants nothing overlapping real
 * (read regions, or write regions when write). */
static const gk_layer *layer_granting_nothing(const audit *A, const gk_layer *f, const char *real,
                                              bool write)
{
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (g == f || !g->has_fs || !g->fs.restricted)
            continue;
        const gk_regions *r = write ? &g->fs.write : &g->fs.read;
        bool any = false;
        for (size_t m = 0; m < r->n && !any; m++)
            any = overlaps(r->v[m].p.real, real);
        if (!any)
            return g;
    }
    return NULL;
}

static void check_grants(audit *A, size_t i)
{
    const gk_layer *f = A->s->v[i];
    if (!f->fs.restricted)
        return;
    const gk_strvec *implicit_read = &A->pr->implicit.read;
    for (int which = 0; which < 2; which++) {
        const gk_regions *list = which == 0 ? &f->fs.read : &f->fs.write;
        for (size_t k = 0; k < list->n; k++) {
            const gk_region *r = &list->v[k];
            bool write = which == 1;
            if (!write && is_write_entry(f, r))
                continue; /* write implies read: judged as a write */
            const char *kw = write ? "write" : "read";
            const gk_region *d = deny_covering(A, r->p.real, NULL);
            if (d) {
                add(A, GK_R_SHADOWED, r->origin, r->p.path,
                    "%s %s grants nothing: it lies inside deny %s (%s), and a deny wins in every "
                    "layer",
                    kw, r->p.path, d->p.path, d->origin);
                continue;
            }
            const gk_layer *g = layer_granting_nothing(A, f, r->p.real, false);
            if (g && !within_any(implicit_read, r->p.real)) {
                add(A, GK_R_SHADOWED, r->origin, r->p.path,
                    "%s %s grants nothing: grant '%s' (%s) has no read or write region "
                    "overlapping it, and layers intersect",
                    kw, r->p.path, layer_name(g), g->origin);
                continue;
            }
            if (write) {
                const gk_region *ro = NULL;
                for (size_t j = 0; j < A->s->n && !ro; j++) {
                    const gk_layer *h = A->s->v[j];
                    for (size_t m = 0; h->has_fs && m < h->fs.readonly.n && !ro; m++)
                        if (real_covered(r->p.real, &h->fs.readonly.v[m].p))
                            ro = &h->fs.readonly.v[m];
                }
                if (ro) {
                    add(A, GK_R_SHADOWED, r->origin, r->p.path,
                        "write %s grants no writes: it lies inside readonly %s (%s); say read",
                        r->p.path, ro->p.path, ro->origin);
                    continue;
                }
                g = layer_granting_nothing(A, f, r->p.real, true);
                if (g) {
                    add(A, GK_R_SHADOWED, r->origin, r->p.path,
                        "write %s grants no writes: grant '%s' (%s) has no write region "
                        "overlapping it, and layers intersect",
                        r->p.path, layer_name(g), g->origin);
                    continue;
                }
            }
            /* Same layer: regions of one grant unite, so a nested one adds
             * nothing. Equal canonical spellings: the later entry is the
             * redundant one. */
            const gk_regions *outer = write ? &f->fs.write : &f->fs.read;
            const gk_region *o = same_layer_cover(outer, k);
            if (o)
                add(A, GK_R_SHADOWED, r->origin, r->p.path,
                    "%s %s is redundant: %s %s (%s) in the same grant already covers it", kw,
                    r->p.path, !write && is_write_entry(f, o) ? "write" : kw, o->p.path,
                    o->origin);
        }
    }
}

static void check_refusals(audit *A, size_t i)
{
    const gk_layer *f = A->s->v[i];
    for (int which = 0; which < 2; which++) {
        const gk_regions *list = which == 0 ? &f->fs.deny : &f->fs.readonly;
        const char *kw = which == 0 ? "deny" : "readonly";
        for (size_t k = 0; k < list->n; k++) {
            const gk_region *e = &list->v[k];
            if (!A->all_fs) {
                const gk_strvec *granted = which == 0 ? &A->readable : &A->writable;
                if (!overlaps_any(granted, &e->p)) {
                    if (which == 1 && overlaps_any(&A->readable, &e->p))
                        add(A, GK_R_NO_EFFECT, e->origin, e->p.path,
                            "readonly %s has no effect: no writable region of the stack "
                            "overlaps it, so it is read-only already",
                            e->p.path);
                    else
                        add(A, GK_R_NO_EFFECT, e->origin, e->p.path,
                            "%s %s has no effect: it lies outside every readable region of "
                            "the stack, so nothing there was reachable",
                            kw, e->p.path);
                    continue;
                }
            }
            bool by_deny = false;
            const gk_region *o = refusal_redundant(A, i, which, k, &by_deny);
            if (o)
                add(A, GK_R_SHADOWED, e->origin, e->p.path,
                    which == 1 && by_deny
                        ? "%s %s has no effect: it lies inside deny %s (%s), which refuses "
                          "writes too"
                        : "%s %s is redundant: %s %s (%s) already covers it",
                    kw, e->p.path, by_deny ? "deny" : "readonly", o->p.path, o->origin);
        }
    }
}

/* ---- GK002: exec rules -------------------------------------------------- */

/* The first layer vetoing q, with the veto's origin and rule. */
static bool find_veto(const audit *A, const grant_exec_query *q, char **rule, char **origin)
{
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (!gk_layer_vetoes(g, q))
            continue;
        gk_why why = {0};
        gk_layer_decide_exec_why(g, q, &why);
        *rule = gk_strdup(why.rule ? why.rule : "a veto");
        *origin = gk_strdup(why.origin ? why.origin : g->origin);
        gk_why_clear(&why);
        return true;
    }
    return false;
}

/* Does layer g (restricting exec) admit the head at all, for some argv[1]?
 * Admission by spelling, walked file, or allow dir (decide.c step 3). */
static bool layer_admits_head(const gk_layer *g, const char *spelling, const char *walked)
{
    const gk_exec_dim *x = &g->exec;
    if (!strchr(spelling, '/') && gk_admits_find(&x->names, spelling))
        return true;
    if (spelling[0] == '/' && gk_admits_find(&x->files, spelling))
        return true;
    if (walked && gk_admits_find(&x->files, walked))
        return true;
    for (size_t m = 0; walked && m < x->dirs.n; m++)
        if (strcmp(walked, x->dirs.v[m].key) != 0 && gk_path_within(walked, x->dirs.v[m].key))
            return true;
    return false;
}

/* A restricting layer other than f admitting nothing under dir d. */
static const gk_layer *layer_admitting_nothing_in(const audit *A, const gk_layer *f, const char *d)
{
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (g == f || !g->has_exec || !g->exec.has_allow)
            continue;
        const gk_exec_dim *x = &g->exec;
        bool any = false;
        for (size_t m = 0; m < x->dirs.n && !any; m++)
            any = overlaps(x->dirs.v[m].key, d);
        for (size_t m = 0; m < x->files.n && !any; m++)
            any = gk_path_within(x->files.v[m].key, d);
        for (size_t m = 0; m < x->names.n && !any; m++) {
            char *w = NULL, *c = NULL;
            gk_walk_head(A->ctx, x->names.v[m].key, NULL, NULL, &w, &c);
            any = w && gk_path_within(w, d);
            free(w);
            free(c);
        }
        if (!any)
            return g;
    }
    return NULL;
}

/* An entry with a subcommand list in layer f: which of its subcommands does
 * another layer's list for the same key refuse? */
static void check_subcommand_intersection(audit *A, const gk_layer *f, const gk_admit *a,
                                          bool file)
{
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (g == f || !g->has_exec || !g->exec.has_allow)
            continue;
        const gk_admit *b = gk_admits_find(file ? &g->exec.files : &g->exec.names, a->key);
        if (!b || b->all)
            continue;
        gk_strvec dead = {0};
        for (size_t k = 0; k < a->subs.n; k++)
            if (!gk_strvec_bsearch(&b->subs, a->subs.v[k]))
                gk_strvec_push(&dead, a->subs.v[k]);
        if (dead.n) {
            gk_autofree char *rule = admit_text(a);
            gk_autofree char *dl = gk_strvec_join(&dead, " ");
            gk_autofree char *bl = gk_strvec_join(&b->subs, " ");
            if (dead.n == a->subs.n)
                mark_dead(A, a), add(A, GK_R_SHADOWED, a->origin, a->key,
                    "%s admits nothing: grant '%s' (%s) allows %s only with [%s], and the "
                    "lists of all layers intersect",
                    rule, layer_name(g), b->origin, a->key, bl);
            else
                add(A, GK_R_SHADOWED, a->origin, a->key,
                    "subcommands [%s] of %s can never run: grant '%s' (%s) allows %s only with "
                    "[%s]",
                    dl, rule, layer_name(g), b->origin, a->key, bl);
        }
        gk_strvec_free(&dead);
        return;
    }
}

static void check_admit(audit *A, const gk_layer *f, const gk_admit *a, bool file)
{
    gk_autofree char *rule = admit_text(a);
    gk_autofree char *walked = NULL, *canonical = NULL;
    gk_walk_head(A->ctx, a->key, NULL, NULL, &walked, &canonical);
    grant_exec_query q = {a->key, walked, canonical, NULL};
    gk_autofree char *vrule = NULL, *vorigin = NULL;
    /* A name is vetoed by spelling or basename whatever PATH finds; a
     * file also by its canonical file and the veto dirs. */
    grant_exec_query qv = file ? q : (grant_exec_query){a->key, NULL, NULL, NULL};
    if (find_veto(A, &qv, &vrule, &vorigin)) {
        mark_dead(A, a);
        if (!a->all)
            add(A, GK_R_SHADOWED, a->origin, a->key,
                "%s admits nothing: %s is vetoed by %s (%s), so its subcommand list can never "
                "apply; every veto beats every admission",
                rule, a->key, vrule, vorigin);
        else
            add(A, GK_R_SHADOWED, a->origin, a->key,
                "%s admits nothing: %s is vetoed by %s (%s); every veto beats every admission",
                rule, a->key, vrule, vorigin);
        return;
    }
    if (!a->all && a->subs.n == 0) {
        mark_dead(A, a);
        add(A, GK_R_SHADOWED, a->origin, a->key,
            "%s admits nothing: the subcommand list is empty, and a command with any or no "
            "argument is refused",
            rule);
        return;
    }
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (g == f || !g->has_exec || !g->exec.has_allow)
            continue;
        bool admits = layer_admits_head(g, a->key, walked);
        if (!admits && file) {
            /* The bare name walked along PATH onto this file is a spelling
             * g may admit by name while f admits the walked file. */
            const char *base = gk_basename(a->key);
            char *w = NULL, *c = NULL;
            gk_walk_head(A->ctx, base, NULL, NULL, &w, &c);
            admits = w && strcmp(w, a->key) == 0 && gk_admits_find(&g->exec.names, base);
            free(w);
            free(c);
        }
        if (!admits) {
            mark_dead(A, a);
            if (walked && strcmp(walked, a->key) != 0)
                add(A, GK_R_SHADOWED, a->origin, a->key,
                    "%s admits nothing: grant '%s' (%s) admits neither %s nor %s, and every "
                    "layer must admit a command",
                    rule, layer_name(g), g->origin, a->key, walked);
            else
                add(A, GK_R_SHADOWED, a->origin, a->key,
                    "%s admits nothing: grant '%s' (%s) does not admit %s, and every layer "
                    "must admit a command",
                    rule, layer_name(g), g->origin, a->key);
            return;
        }
    }
    if (!a->all)
        check_subcommand_intersection(A, f, a, file);
}

static void check_allow_dir(audit *A, const gk_layer *f, const gk_entry *d)
{
    gk_autofree char *rule = gk_printf("allow %s/", strcmp(d->key, "/") ? d->key : "");
    for (size_t j = 0; j < A->s->n; j++) {
        const gk_layer *g = A->s->v[j];
        if (!g->has_exec)
            continue;
        for (size_t m = 0; m < g->exec.veto_dirs.n; m++) {
            const gk_entry *v = &g->exec.veto_dirs.v[m];
            if (gk_path_within(d->key, v->key)) {
                add(A, GK_R_SHADOWED, d->origin, d->key,
                    "%s admits nothing: it lies inside veto dir %s/ (%s); every veto beats every "
                    "admission",
                    rule, strcmp(v->key, "/") ? v->key : "", v->origin);
                return;
            }
        }
    }
    const gk_layer *g = layer_admitting_nothing_in(A, f, d->key);
    if (g)
        add(A, GK_R_SHADOWED, d->origin, d->key,
            "%s admits nothing: grant '%s' (%s) admits nothing under it, and every layer must "
            "admit a command",
            rule, layer_name(g), g->origin);
}

/* A veto entry covered by another veto; of two equal ones (in different
 * layers) the later is redundant. */
static void check_vetoes(audit *A, size_t i)
{
    const gk_layer *f = A->s->v[i];
    const gk_exec_dim *x = &f->exec;
    for (size_t k = 0; k < x->veto_names.n; k++) {
        const gk_entry *e = &x->veto_names.v[k];
        for (size_t j = 0; j < A->s->n; j++) {
            const gk_layer *g = A->s->v[j];
            if (!g->has_exec)
                continue;
            const gk_entry *o = NULL;
            bool pattern = false;
            for (size_t m = 0; j < i && m < g->exec.veto_names.n && !o; m++)
                if (strcmp(g->exec.veto_names.v[m].key, e->key) == 0)
                    o = &g->exec.veto_names.v[m];
            for (size_t m = 0; m < g->exec.veto_match.n && !o; m++)
                if (pattern_hits(&g->exec, m, e->key))
                    o = &g->exec.veto_match.v[m], pattern = true;
            if (o) {
                gk_autofree char *by = pattern ? gk_printf("deny match \"%s\"", o->key)
                                               : gk_printf("deny %s", o->key);
                add(A, GK_R_SHADOWED, e->origin, e->key,
                    "deny %s is redundant: %s (%s) already vetoes it", e->key, by, o->origin);
                break;
            }
        }
    }
    for (size_t k = 0; k < x->veto_files.n; k++) {
        const gk_entry *e = &x->veto_files.v[k];
        const char *base = gk_basename(e->key);
        bool done = false;
        for (size_t j = 0; j < A->s->n && !done; j++) {
            const gk_layer *g = A->s->v[j];
            if (!g->has_exec)
                continue;
            const gk_exec_dim *y = &g->exec;
            char *by = NULL;
            for (size_t m = 0; m < y->veto_names.n && !by; m++)
                if (strcmp(y->veto_names.v[m].key, base) == 0)
                    by = gk_printf("deny %s (%s) vetoes every command of that name",
                                   y->veto_names.v[m].key, y->veto_names.v[m].origin);
            for (size_t m = 0; m < y->veto_match.n && !by; m++)
                if (pattern_hits(y, m, base))
                    by = gk_printf("deny match \"%s\" (%s) already vetoes it",
                                   y->veto_match.v[m].key, y->veto_match.v[m].origin);
            for (size_t m = 0; m < y->veto_dirs.n && !by; m++)
                if (strcmp(e->key, y->veto_dirs.v[m].key) != 0 &&
                    gk_path_within(e->key, y->veto_dirs.v[m].key))
                    by = gk_printf("veto dir %s/ (%s) already holds it", y->veto_dirs.v[m].key,
                                   y->veto_dirs.v[m].origin);
            for (size_t m = 0; j < i && m < y->veto_files.n && !by; m++)
                if (strcmp(y->veto_files.v[m].key, e->key) == 0)
                    by = gk_printf("deny %s (%s) already vetoes it", y->veto_files.v[m].key,
                                   y->veto_files.v[m].origin);
            if (by) {
                add(A, GK_R_SHADOWED, e->origin, e->key, "deny %s is redundant: %s", e->key, by);
                free(by);
                done = true;
            }
        }
    }
    for (size_t k = 0; k < x->veto_dirs.n; k++) {
        const gk_entry *e = &x->veto_dirs.v[k];
        bool done = false;
        for (size_t j = 0; j < A->s->n && !done; j++) {
            const gk_layer *g = A->s->v[j];
            for (size_t m = 0; g->has_exec && m < g->exec.veto_dirs.n && !done; m++) {
                const gk_entry *o = &g->exec.veto_dirs.v[m];
                if (o == e || !gk_path_within(e->key, o->key))
                    continue;
                if (strcmp(o->key, e->key) == 0 && j > i)
                    continue;
                add(A, GK_R_SHADOWED, e->origin, e->key,
                    "deny %s/ is redundant: veto dir %s/ (%s) already holds it", e->key, o->key,
                    o->origin);
                done = true;
            }
        }
    }
    for (size_t k = 0; k < x->veto_match.n; k++) {
        const gk_entry *e = &x->veto_match.v[k];
        for (size_t j = 0; j < i; j++) {
            const gk_layer *g = A->s->v[j];
            if (g->has_exec && gk_entries_has(&g->exec.veto_match, e->key)) {
                add(A, GK_R_SHADOWED, e->origin, e->key,
                    "deny match \"%s\" is redundant: grant '%s' (%s) has the same pattern",
                    e->key, layer_name(g), g->origin);
                break;
            }
        }
    }
}

static void check_exec_rules(audit *A, size_t i)
{
    const gk_layer *f = A->s->v[i];
    if (!f->has_exec)
        return;
    const gk_exec_dim *x = &f->exec;
    if (x->has_allow) {
        for (size_t k = 0; k < x->names.n; k++)
            check_admit(A, f, &x->names.v[k], false);
        for (size_t k = 0; k < x->files.n; k++)
            check_admit(A, f, &x->files.v[k], true);
        for (size_t k = 0; k < x->dirs.n; k++)
            check_allow_dir(A, f, &x->dirs.v[k]);
    }
    check_vetoes(A, i);
}

/* ---- GK002: host gates ---------------------------------------------------- */

static void check_gates(audit *A)
{
    static const char *const gates[] = {"net", "shell.chdir", "editor.read", "editor.write",
                                        "editor.tui"};
    for (size_t g = 0; g < sizeof(gates) / sizeof(*gates); g++) {
        const gk_layer *denier = NULL;
        for (size_t i = 0; i < A->s->n && !denier; i++)
            if (gk_layer_gate(A->s->v[i], gates[g]) == GK_TRI_FALSE)
                denier = A->s->v[i];
        if (!denier)
            continue;
        for (size_t i = 0; i < A->s->n; i++) {
            const gk_layer *f = A->s->v[i];
            if (gk_layer_gate(f, gates[g]) != GK_TRI_TRUE)
                continue;
            const char *word = strcmp(gates[g], "net") == 0 ? "net allow" : NULL;
            gk_autofree char *what = word ? gk_strdup(word) : gk_printf("%s allow", gates[g]);
            if (word && denier->net_list)
                add(A, GK_R_SHADOWED, f->origin, gates[g],
                    "%s in grant '%s' has no effect: grant '%s' (%s) lists the destinations, "
                    "and every layer must allow one",
                    what, layer_name(f), layer_name(denier), denier->origin);
            else
                add(A, GK_R_SHADOWED, f->origin, gates[g],
                    "%s in grant '%s' has no effect: grant '%s' (%s) says deny, and a deny in "
                    "any layer wins",
                    what, layer_name(f), layer_name(denier), denier->origin);
        }
    }
}

/* ---- GK004 source-writable ------------------------------------------------ */

static void check_sources(audit *A)
{
    for (size_t i = 0; i < A->p->nsources; i++) {
        const char *file = A->p->sources[i].file;
        if (strcmp(file, "<stdin>") == 0)
            continue; /* read from a pipe: there is no file to rewrite */
        gk_autofree char *path = source_path(A, file);
        if (!path || !gk_decide_fs(A->s, GRANT_OP_WRITE, path) || !user_writable(A, path))
            continue;
        const gk_region *w = A->all_fs ? NULL : region_holding(&A->pr->write, path);
        /* The finding belongs to the file that is exposed: at the write
         * rule when that file grants the region itself, else on the file
         * as a whole, naming where the region comes from (an included
         * base's line is not where the exposed policy can be mended). */
        gk_autofree char *wfile = NULL;
        unsigned wline = 0;
        if (w)
            split_origin(w->origin, &wfile, &wline);
        if (w && wfile && strcmp(wfile, file) == 0)
            add(A, GK_R_SOURCE_WRITABLE, w->origin, path,
                "policy source %s lies inside writable region %s: runs under this policy cannot "
                "change it, but runs under any other policy granting that region can",
                path, w->p.path);
        else if (w) {
            gk_autofree char *msg = gk_printf(
                "policy source %s lies inside writable region %s (granted at %s): runs under "
                "this policy cannot change it, but runs under any other policy granting that "
                "region can",
                path, w->p.path, w->origin ? w->origin : "an unknown rule");
            add_file(A, GK_R_SOURCE_WRITABLE, file, path, msg);
        } else {
            gk_autofree char *msg = gk_printf(
                "policy source %s is writable (no layer restricts the filesystem and no readonly "
                "entry covers it): runs under this policy cannot change it, but others can",
                path);
            add_file(A, GK_R_SOURCE_WRITABLE, file, path, msg);
        }
    }
}

/* ---- GK005 unix-socket (host only) ---------------------------------------- */

#define SOCKET_SCAN_BUDGET 4096
#define SOCKET_SCAN_DEPTH 2

static void scan_sockets(const char *path, int depth, size_t *budget, gk_strvec *found)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISSOCK(st.st_mode)) {
        gk_strvec_push(found, path);
        return;
    }
    if (!S_ISDIR(st.st_mode) || depth >= SOCKET_SCAN_DEPTH || *budget == 0)
        return;
    /* Kernel pseudo-filesystems hold no socket files worth a budget. */
    if (strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0)
        return;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    gk_strvec names = {0};
    struct dirent *e;
    while (*budget > 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        (*budget)--;
        gk_strvec_push(&names, e->d_name);
    }
    closedir(d);
    /* Sorted, so a budget cut off by a large directory cuts the same way
     * every time. */
    gk_strvec_sort_unique(&names);
    for (size_t i = 0; i < names.n; i++) {
        char *child = gk_path_join(path, names.v[i]);
        scan_sockets(child, depth + 1, budget, found);
        free(child);
    }
    gk_strvec_free(&names);
}

static void check_sockets(audit *A)
{
    if (!A->host)
        return;
    gk_strvec cands = {0}, tops = {0};
    static const char *const known[] = {
        "/run/docker.sock",          "/var/run/docker.sock",
        "/run/podman/podman.sock",   "/run/containerd/containerd.sock",
        "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket",
        "/run/snapd.socket",         "/run/libvirt/libvirt-sock",
        "/run/user",                 "/tmp/.X11-unix",
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
        gk_strvec_push(&tops, known[i]);
    /* The environment as the context captured it (freeze.h). */
    const char *ambient[] = {A->ctx->runtime_dir, A->ctx->ssh_auth_sock, A->ctx->docker_host};
    for (size_t i = 0; i < sizeof(ambient) / sizeof(*ambient); i++) {
        const char *v = ambient[i];
        if (v && gk_has_prefix(v, "unix://"))
            v += 7;
        if (v && v[0] == '/')
            gk_strvec_push(&tops, v);
    }
    gk_strvec_push_take(&tops, gk_printf("/run/user/%u", A->ctx->uid));
    if (A->ctx->home)
        gk_strvec_push_take(&tops, gk_path_join(A->ctx->home, ".docker/run/docker.sock"));
    if (A->all_fs)
        gk_strvec_push(&tops, "/");
    else
        for (size_t i = 0; i < A->pr->read.n; i++)
            gk_strvec_push(&tops, A->pr->read.v[i].p.real);
    size_t budget = SOCKET_SCAN_BUDGET;
    for (size_t i = 0; i < tops.n; i++)
        scan_sockets(tops.v[i], 0, &budget, &cands);
    gk_strvec seen = {0};
    for (size_t i = 0; i < cands.n; i++) {
        gk_autofree char *real = realpath(cands.v[i], NULL);
        if (!real || gk_strvec_contains(&seen, real))
            continue;
        gk_strvec_push(&seen, real);
        /* connect(2) needs write permission on the socket file. */
        if (access(real, W_OK) != 0)
            continue;
        if (!gk_decide_fs(A->s, GRANT_OP_READ, real))
            continue;
        const char *base = gk_basename(real);
        bool daemon = strstr(base, "docker") || strstr(base, "podman") ||
                      strstr(base, "containerd") || strstr(base, "libvirt");
        const gk_region *r = A->all_fs ? NULL : region_holding(&A->pr->read, real);
        gk_buf b = {0};
        gk_buf_printf(&b, "Unix socket %s", real);
        if (r)
            gk_buf_printf(&b, " lies inside readable region %s", r->p.path);
        else
            gk_buf_puts(&b, " is reachable (no layer restricts the filesystem)");
        gk_buf_puts(&b, ": a confined command can connect to it whatever `net` says");
        if (daemon)
            gk_buf_puts(&b, ", and this daemon's socket is root on the host");
        add(A, GK_R_UNIX_SOCKET, r ? r->origin : NULL, real, "%s", b.data);
        gk_buf_free(&b);
    }
    gk_strvec_free(&seen);
    gk_strvec_free(&cands);
    gk_strvec_free(&tops);
}

/* ---- GK006 path-writable --------------------------------------------------- */

static void check_path_dirs(audit *A)
{
    gk_strvec dirs = {0}, labels = {0};
    char sep = A->windows_target ? ';' : ':';
    if (A->ctx->xdg[GK_XDG_BIN]) {
        gk_strvec_push(&dirs, A->ctx->xdg[GK_XDG_BIN]);
        gk_strvec_push_take(&labels, gk_printf("xdg:bin (%s)", A->ctx->xdg[GK_XDG_BIN]));
    }
    const char *p = A->ctx->path ? A->ctx->path : "";
    while (*p) {
        const char *e = strchr(p, sep);
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) {
            char *d = gk_strndup(p, n);
            gk_strvec_push(&labels, d);
            gk_strvec_push_take(&dirs, d);
        }
        p = e ? e + 1 : p + n;
    }
    gk_strvec seen = {0};
    for (size_t i = 0; i < dirs.n; i++) {
        gk_autofree char *real = resolve(A, dirs.v[i]);
        if (!real || gk_strvec_contains(&seen, real))
            continue;
        gk_strvec_push(&seen, real);
        if (!gk_decide_fs(A->s, GRANT_OP_WRITE, real))
            continue;
        if (!user_writable(A, real))
            continue;
        const gk_region *w = A->all_fs ? NULL : region_holding(&A->pr->write, real);
        const char *what = i == 0 && A->ctx->xdg[GK_XDG_BIN] ? labels.v[i] : NULL;
        gk_autofree char *label =
            what ? gk_strdup(what) : gk_printf("PATH directory %s", labels.v[i]);
        if (w)
            add(A, GK_R_PATH_WRITABLE, w->origin, real,
                "%s lies inside writable region %s: a program planted there shadows an admitted "
                "name, and runs unconfined when a shell outside the sandbox looks it up",
                label, w->p.path);
        else
            add(A, GK_R_PATH_WRITABLE, NULL, real,
                "%s is writable (no layer restricts the filesystem and no readonly entry covers "
                "it): a program planted there shadows an admitted name",
                label);
    }
    gk_strvec_free(&seen);
    gk_strvec_free(&dirs);
    gk_strvec_free(&labels);
}

/* ---- GK007 shell-capable ---------------------------------------------------- */

static bool word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        p = e ? e + 1 : p + len;
    }
    return false;
}

/* Programs Windows has that run other programs or script text: on the
 * windows target only, where they are what `cmd`, `powershell` name. */
static const shell_capable win_shell_capable_table[] = {
    {"cmd", NULL, "cmd /c runs any command line"},
    {"powershell", NULL, "PowerShell runs any script, -Command and -EncodedCommand included"},
    {"pwsh", NULL, "PowerShell runs any script, -Command and -EncodedCommand included"},
    {"wscript", NULL, "Windows Script Host runs any script file"},
    {"cscript", NULL, "Windows Script Host runs any script file"},
    {"mshta", NULL, "mshta runs script in an HTML application"},
    {"rundll32", NULL, "rundll32 calls any exported DLL function"},
    {"regsvr32", NULL, "regsvr32 loads a DLL (or a scriptlet) and runs its code"},
    {"forfiles", NULL, "forfiles /c runs a command for every file"},
    {"schtasks", NULL, "schtasks /create schedules any command, run later outside the sandbox"},
    {"wsl", NULL, "wsl runs a Linux shell and its commands"},
    {"start", NULL, "start runs any program"},
};

/* The name a shell-capable entry is known by: the basename; on the windows
 * target (entries are folded) without the extension CreateProcess would
 * add (git.exe is git, cmd.com is cmd), so the check is exact there too. */
static char *exec_helper_name(const audit *A, const char *key)
{
    char *base = gk_strdup(gk_basename(key));
    if (!A->windows_target)
        return base;
    static const char *const exts[] = {".exe", ".com", ".bat", ".cmd"};
    size_t n = strlen(base);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (n > 4 && strcmp(base + n - 4, exts[i]) == 0) {
            base[n - 4] = '\0';
            break;
        }
    return base;
}

static void check_shell_capable_entry(audit *A, const gk_admit *a)
{
    if (a->all || is_dead(A, a))
        return;
    gk_autofree char *base = exec_helper_name(A, a->key);
    const shell_capable *sc = NULL;
    for (size_t i = 0; i < sizeof(shell_capable_table) / sizeof(*shell_capable_table); i++)
        if (strcmp(shell_capable_table[i].name, base) == 0)
            sc = &shell_capable_table[i];
    for (size_t i = 0; A->windows_target && !sc &&
                       i < sizeof(win_shell_capable_table) / sizeof(*win_shell_capable_table);
         i++)
        if (strcmp(win_shell_capable_table[i].name, base) == 0)
            sc = &win_shell_capable_table[i];
    if (!sc)
        return;
    gk_autofree char *rule = admit_text(a);
    gk_strvec hits = {0}, options = {0};
    for (size_t k = 0; k < a->subs.n; k++) {
        if (a->subs.v[k][0] == '-')
            gk_strvec_push(&options, a->subs.v[k]);
        if (sc->subs && word_in(sc->subs, a->subs.v[k]))
            gk_strvec_push(&hits, a->subs.v[k]);
    }
    if (sc->subs && !hits.n && !options.n) {
        gk_strvec_free(&hits);
        gk_strvec_free(&options);
        return;
    }
    gk_buf b = {0};
    gk_buf_printf(&b, "the subcommand list of %s does not contain %s: %s", rule, base,
                  sc->why);
    if (hits.n) {
        gk_autofree char *h = gk_strvec_join(&hits, " ");
        gk_buf_printf(&b, "; the list admits [%s]", h);
    }
    if (options.n) {
        gk_autofree char *o = gk_strvec_join(&options, " ");
        gk_buf_printf(&b, "; the list admits option%s [%s] as argv[1], which can carry %s",
                      options.n > 1 ? "s" : "", o,
                      strcmp(base, "git") == 0 ? "-c config that runs commands"
                                               : "the command to run");
    }
    if (strcmp(base, "git") == 0) {
        /* Repository config is honoured by every subcommand. */
        gk_autofree char *cfg = gk_path_join(A->ctx->cwd ? A->ctx->cwd : "/", ".git/config");
        gk_autofree char *real = resolve(A, cfg);
        if (real && gk_decide_fs(A->s, GRANT_OP_WRITE, real) && user_writable(A, real))
            gk_buf_printf(&b, "; and %s is writable here, so a confined command can set "
                              "core.fsmonitor or core.hooksPath for every later git run",
                          real);
        else
            gk_buf_puts(&b, "; git also honours repository config (core.fsmonitor, "
                            "core.hooksPath) wherever the repository is writable");
    }
    add(A, GK_R_SHELL_CAPABLE, a->origin, a->key, "%s", b.data);
    gk_buf_free(&b);
    gk_strvec_free(&hits);
    gk_strvec_free(&options);
}

static void check_shell_capable(audit *A)
{
    for (size_t i = 0; i < A->s->n; i++) {
        const gk_layer *f = A->s->v[i];
        if (!f->has_exec || !f->exec.has_allow)
            continue;
        for (size_t k = 0; k < f->exec.names.n; k++)
            check_shell_capable_entry(A, &f->exec.names.v[k]);
        for (size_t k = 0; k < f->exec.files.n; k++)
            check_shell_capable_entry(A, &f->exec.files.v[k]);
    }
}

/* ---- GK014 git-writable, GK015 build-file-shadowed ---------------------- */

/* Can a confined command change path? The fold says so, and no readonly
 * or deny entry of the projection holds it (there a readonly entry below
 * an existing file, such as .git/hooks below a .git file, has become one
 * on the file); with no layer restricting the filesystem, the user can. */
static bool can_write(const audit *A, const char *path)
{
    return gk_decide_fs(A->s, GRANT_OP_WRITE, path) && user_writable(A, path) &&
           !gk_regions_contain(&A->pr->readonly, path, true) &&
           !gk_regions_contain(&A->pr->deny, path, true);
}

/* What git takes commands from in a git dir (gitrepository-layout(5)):
 * config and hooks; commondir and config.worktree, which redirect them;
 * the git dirs of submodules and linked worktrees; the todo lists of a
 * rebase or cherry-pick in progress, whose exec lines `--continue` runs.
 * info/attributes only selects drivers that config defines. */
static const char *const git_exec_entries[] = {
    "config", "config.worktree", "commondir", "hooks", "modules",
    "worktrees", "rebase-merge", "rebase-apply", "sequencer",
};

/* Git dirs the policy's commands can reach: on the host, the one git finds
 * from the cwd (the nearest ancestor holding .git) and each write
 * region's own .git, where they exist; offline, cwd:/.git (a project
 * usually is a repository, and nothing can be looked at). */
static void git_dirs(const audit *A, gk_strvec *out)
{
    gk_autofree char *cwd = A->ctx->cwd ? resolve(A, A->ctx->cwd) : NULL;
    if (!A->host) {
        if (cwd)
            gk_strvec_push_take(out, gk_path_join(cwd, ".git"));
        return;
    }
    struct stat st;
    for (char *d = cwd ? gk_strdup(cwd) : NULL; d;) {
        char *g = gk_path_join(d, ".git");
        char *up = strcmp(d, "/") == 0 ? NULL : gk_path_parent(d);
        free(d);
        d = up;
        if (lstat(g, &st) == 0) {
            gk_strvec_push_take(out, g);
            free(d);
            break;
        }
        free(g);
    }
    for (size_t i = 0; i < A->pr->write.n; i++) {
        char *g = gk_path_join(A->pr->write.v[i].p.real, ".git");
        if (lstat(g, &st) == 0)
            gk_strvec_push_take(out, g);
        else
            free(g);
    }
    gk_strvec_sort_unique(out);
}

static void check_git_dir(audit *A, const char *g)
{
    if (!can_write(A, g))
        return; /* readonly or denied as a whole */
    struct stat st;
    gk_buf what = {0};
    if (A->host && lstat(g, &st) == 0 && !S_ISDIR(st.st_mode)) {
        gk_buf_printf(&what, "the .git file itself, which can be rewritten to name a planted "
                             "git dir");
    } else {
        for (size_t i = 0; i < sizeof git_exec_entries / sizeof *git_exec_entries; i++) {
            gk_autofree char *e = gk_path_join(g, git_exec_entries[i]);
            if (can_write(A, e))
                gk_buf_printf(&what, "%s%s", what.len ? ", " : "", git_exec_entries[i]);
        }
    }
    if (what.len) {
        const gk_region *w = A->all_fs ? NULL : region_holding(&A->pr->write, g);
        gk_autofree char *where =
            w ? gk_printf("lies inside writable region %s", w->p.path)
              : gk_strdup("is writable (no layer restricts the filesystem)");
        add(A, GK_R_GIT_WRITABLE, w ? w->origin : NULL, g,
            "git dir %s %s, and a confined command can write %s: git takes commands from "
            "them (hooks, core.fsmonitor, a commondir naming a planted tree) and runs them "
            "outside the sandbox the next time it is used there; make %s readonly",
            g, where, what.data, g);
    }
    gk_buf_free(&what);
}

static void check_git(audit *A)
{
    gk_strvec dirs = {0};
    git_dirs(A, &dirs);
    for (size_t i = 0; i < dirs.n; i++)
        check_git_dir(A, dirs.v[i]);
    gk_strvec_free(&dirs);
}

static const gk_layer *first_exec_layer(const audit *A, bool with_allow);

/* GK016: on macOS git dies when it cannot even check its config files
 * (access() failing with EPERM is fatal to it, ENOENT is not), so a policy
 * that admits git must let it read them. */
static void check_git_config(audit *A)
{
    if (!A->macos_target || !A->ctx->home)
        return;
    char *w = NULL, *c = NULL;
    gk_walk_head(A->ctx, "git", NULL, NULL, &w, &c);
    grant_exec_query q = {"git", w, c, NULL};
    bool admitted = w && gk_gate_exec_some_argv1(A->p, &q) == GRANT_ALLOWED;
    free(w);
    free(c);
    if (!admitted)
        return;
    const char *xdg = A->ctx->xdg[GK_XDG_CONFIG];
    gk_autofree char *user = gk_path_join(A->ctx->home, ".gitconfig");
    gk_autofree char *xdgc = xdg ? gk_path_join(xdg, "git/config") : NULL;
    const char *files[2] = {user, xdgc};
    gk_buf which = {0};
    for (int i = 0; i < 2; i++) {
        if (!files[i])
            continue;
        gk_autofree char *r = resolve(A, files[i]);
        grant_verdict v = {0};
        if (gk_gate_fs(A->p, GRANT_OP_READ, r ? r : files[i], &v) == GRANT_DENIED)
            gk_buf_printf(&which, "%s%s", which.len ? " and " : "", files[i]);
        gk_verdict_clear(&v);
    }
    if (which.len) {
        /* At the rule that admits git, when one names it. */
        const char *origin = NULL;
        for (size_t i = 0; i < A->s->n && !origin; i++) {
            const gk_layer *f = A->s->v[i];
            const gk_admit *a = f->has_exec ? gk_admits_find(&f->exec.names, "git") : NULL;
            if (a)
                origin = a->origin;
        }
        if (!origin) {
            const gk_layer *f = first_exec_layer(A, false);
            origin = f ? f->origin : NULL;
        }
        add(A, GK_R_GIT_CONFIG, origin, "git",
            "the policy admits git but it cannot read %s: Seatbelt answers EPERM, which git "
            "treats as fatal, so git will not start on macOS; read them (read ~/.gitconfig "
            "xdg:config/git;)",
            which.data);
    }
    gk_buf_free(&which);
}

/* The names make looks up before each one: GNU make GNUmakefile, makefile,
 * Makefile; BSD make makefile before Makefile. */
static const char *const make_shadows[][3] = {
    {"Makefile", "GNUmakefile", "makefile"},
    {"makefile", "GNUmakefile", NULL},
};

static void check_build_files(audit *A)
{
    for (size_t i = 0; i < A->s->n; i++) {
        const gk_layer *f = A->s->v[i];
        if (!f->has_fs)
            continue;
        for (size_t k = 0; k < f->fs.readonly.n; k++) {
            const gk_region *r = &f->fs.readonly.v[k];
            const char *base = gk_basename(r->p.real);
            for (size_t m = 0; m < sizeof make_shadows / sizeof *make_shadows; m++) {
                if (strcmp(base, make_shadows[m][0]) != 0)
                    continue;
                gk_autofree char *dir = gk_path_parent(r->p.real);
                gk_buf open = {0};
                int nopen = 0;
                for (int n = 1; n < 3 && make_shadows[m][n]; n++) {
                    gk_autofree char *e = gk_path_join(dir ? dir : "/", make_shadows[m][n]);
                    if (can_write(A, e))
                        gk_buf_printf(&open, "%s%s", nopen++ ? " and " : "", e);
                }
                if (nopen)
                    add(A, GK_R_BUILD_SHADOW, r->origin, r->p.real,
                        "readonly %s: make reads %s before it, and a confined command can write "
                        "%s, so a makefile written in the run takes over the next make outside "
                        "the sandbox; mark %s readonly too",
                        r->p.path, open.data, nopen > 1 ? "both" : "it",
                        nopen > 1 ? "them" : "it");
                gk_buf_free(&open);
            }
        }
    }
}

/* ---- net lists: GK017 net-shared-host, and GK002/GK003 of destinations ---- */

/* Domains under which anyone can publish a host (a bucket, an app, a page,
 * a tunnel): a wildcard over one of them, under one, or over a parent of
 * one lets the command reach strangers' hosts. */
static const char *const shared_hosting[] = {
    "githubusercontent.com", "github.io",           "gitlab.io",
    "bitbucket.io",          "amazonaws.com",       "cloudfront.net",
    "awsapps.com",           "azurewebsites.net",   "blob.core.windows.net",
    "azureedge.net",         "trafficmanager.net",  "cloudapp.net",
    "appspot.com",           "googleusercontent.com", "storage.googleapis.com",
    "firebaseapp.com",       "web.app",             "run.app",
    "herokuapp.com",         "vercel.app",          "netlify.app",
    "pages.dev",             "workers.dev",         "r2.dev",
    "trycloudflare.com",     "fly.dev",             "onrender.com",
    "glitch.me",             "repl.co",             "ngrok.io",
    "ngrok-free.app",        "fastly.net",          "akamaized.net",
    "digitaloceanspaces.com", "ondigitalocean.app", "surge.sh",
};

static bool labels_under(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n == s ? strcmp(name, suffix) == 0
                  : n > s + 1 && name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

static void check_net(audit *A)
{
    for (size_t i = 0; i < A->s->n; i++) {
        const gk_layer *f = A->s->v[i];
        if (!f->net_list)
            continue;
        const gk_net_dim *n = &f->netd;
        for (size_t k = 0; k < n->allow.n; k++) {
            const gk_dest *d = &n->allow_d[k];
            const gk_entry *e = &n->allow.v[k];
            if (d->kind == GK_DEST_WILD)
                for (size_t h = 0; h < sizeof shared_hosting / sizeof *shared_hosting; h++) {
                    const char *dom = shared_hosting[h];
                    if (!labels_under(d->host, dom) && !labels_under(dom, d->host))
                        continue;
                    add(A, GK_R_NET_SHARED_HOST, e->origin, e->key,
                        "net allow %s covers %s, where anyone can publish a host: the command "
                        "can reach (and send data to) hosts strangers control; name the hosts "
                        "it needs",
                        e->key, labels_under(d->host, dom) ? d->host : dom);
                    break;
                }
            /* Within one layer a deny beats an allow: an allow inside a
             * deny of its own layer admits nothing. */
            for (size_t m = 0; m < n->deny.n; m++)
                if (gk_dest_subset(d, &n->deny_d[m])) {
                    add(A, GK_R_SHADOWED, e->origin, e->key,
                        "net allow %s in grant '%s' has no effect: deny %s (%s) covers it",
                        e->key, layer_name(f), n->deny.v[m].key, n->deny.v[m].origin);
                    break;
                }
        }
        /* A deny cuts only its own layer's allows. */
        for (size_t m = 0; m < n->deny.n; m++) {
            gk_dest x;
            bool meets = false;
            for (size_t k = 0; k < n->allow.n && !meets; k++)
                meets = gk_dest_intersect(&n->deny_d[m], &n->allow_d[k], &x);
            if (!meets)
                add(A, GK_R_NO_EFFECT, n->deny.v[m].origin, n->deny.v[m].key,
                    "net deny %s in grant '%s' refuses nothing: no allow pattern of the grant "
                    "covers any destination it names",
                    n->deny.v[m].key, layer_name(f));
        }
    }
}

/* ---- GK008-GK013 fidelity notes ---------------------------------------------- */

static const gk_layer *first_exec_layer(const audit *A, bool with_allow)
{
    for (size_t i = 0; i < A->s->n; i++)
        if (A->s->v[i]->has_exec && (!with_allow || A->s->v[i]->exec.has_allow))
            return A->s->v[i];
    return NULL;
}

static void check_fidelity(audit *A)
{
    const gk_projection *pr = A->pr;
    if (A->linux_target && pr->exec_restricted) {
        const gk_layer *f = first_exec_layer(A, true);
        add(A, GK_R_ELF_LOADER, f ? f->origin : NULL, "elf-loader", "%s",
            gk_audit_rules[GK_R_ELF_LOADER].full);
    }
    if (A->windows_target) {
        const gk_layer *f = first_exec_layer(A, false);
        if (f)
            add(A, GK_R_WIN_EXEC, f->origin, "windows-exec",
                "exec rules have no OS filter on Windows (AppContainer cannot filter process "
                "creation): admissions and vetoes hold only in the in-process gate");
        const gk_region *e = pr->deny.n ? &pr->deny.v[0] : pr->readonly.n ? &pr->readonly.v[0]
                                                                          : NULL;
        if (e)
            add(A, GK_R_WIN_RENAME, e->origin, "windows-rename",
                "a file renamed within a volume keeps the ACE of its old place: one moved from a "
                "granted region into %s (or any denied or readonly path) keeps the access it had",
                e->p.path);
    }
    /* Subcommand lists: no OS backend sees arguments. */
    for (size_t i = 0; i < A->s->n; i++) {
        const gk_layer *f = A->s->v[i];
        if (!f->has_exec || !f->exec.has_allow)
            continue;
        const gk_admits *lists[2] = {&f->exec.names, &f->exec.files};
        for (int l = 0; l < 2; l++)
            for (size_t k = 0; k < lists[l]->n; k++) {
                const gk_admit *a = &lists[l]->v[k];
                if (a->all || is_dead(A, a))
                    continue;
                gk_autofree char *rule = admit_text(a);
                add(A, GK_R_SUBCOMMANDS, a->origin, a->key,
                    "%s is enforced only by the gate: OS backends cannot see arguments and admit "
                    "%s with any subcommand, so a program started inside the sandbox (a script, "
                    "make, xargs) can run %s with any",
                    rule, a->key, a->key);
            }
    }
    if (!A->linux_target)
        return;
    /* Landlock cannot carve a deny out of a granted region. One note for
     * the stack, at the first such entry. */
    size_t nested = 0;
    const gk_region *first = NULL;
    const gk_regions *refusals[2] = {&pr->deny, &pr->readonly};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < refusals[l]->n; i++) {
            const gk_region *e = &refusals[l]->v[i];
            /* A deny over a granted region (deny /data, read /data/x) needs
             * a mask as much as one inside it. */
            bool inside = A->all_fs || overlaps_any(l == 0 ? &A->readable : &A->writable, &e->p);
            if (inside) {
                nested++;
                if (!first)
                    first = e;
            }
        }
    if (first)
        add(A, GK_R_LANDLOCK_NESTING, first->origin, "landlock-nesting",
            "%zu deny or readonly entr%s over granted regions (the first: %s): Landlock alone "
            "cannot carve a deny out of an allowed region, so only the bubblewrap masks enforce "
            "%s; a Landlock-only ruleset (emit --backend landlock) does not",
            nested, nested == 1 ? "y lies" : "ies lie", first->p.path,
            nested == 1 ? "it" : "them");
    if (!A->host)
        return;
    /* bwrap masks an absent deny only where it can create the mountpoint. */
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < refusals[l]->n; i++) {
            const gk_region *e = &refusals[l]->v[i];
            if (l == 1 && pr->deny.n && gk_regions_contain(&pr->deny, e->p.real, true))
                continue;
            struct stat st;
            if (lstat(e->p.real, &st) == 0 || lstat(e->p.path, &st) == 0)
                continue;
            /* The deepest bind holding it decides: a read region inside the
             * private /tmp is a read-only bind on top of it. */
            if (A->all_fs)
                continue;
            long r = longest_within(&A->readable, e->p.real);
            long w = longest_within(&A->writable, e->p.real);
            if (r < 0 || w >= r)
                continue;
            add(A, GK_R_ABSENT_MASK, e->origin, e->p.real,
                "%s %s does not exist and lies under a read-only bind only, so bubblewrap cannot "
                "mask it: a file the host creates there during a run is visible to the command",
                l == 0 ? "deny" : "readonly", e->p.path);
        }
}

/* ---- the audit ------------------------------------------------------------ */

static void prefixes_init(audit *A)
{
    const gk_projection *pr = A->pr;
    A->all_fs = !pr->fs_restricted;
    for (size_t i = 0; i < pr->read.n; i++)
        gk_strvec_push(&A->readable, pr->read.v[i].p.real);
    for (size_t i = 0; i < pr->write.n; i++)
        gk_strvec_push(&A->writable, pr->write.v[i].p.real);
    const gk_implicit *im = &pr->implicit;
    const gk_strvec *rl[3] = {&im->read, &im->write, &im->devices};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < rl[l]->n; i++)
            gk_strvec_push(&A->readable, rl[l]->v[i]);
    for (size_t i = 0; i < im->write.n; i++)
        gk_strvec_push(&A->writable, im->write.v[i]);
    if (im->proc)
        gk_strvec_push(&A->readable, "/proc");
    /* The implicit lists are as the target spells them; regions are
     * compared on canonical spellings. */
    size_t n = A->readable.n;
    for (size_t i = 0; i < n; i++) {
        char *c = gk_canonicalize(A->ctx, A->readable.v[i]);
        if (c)
            gk_strvec_push_take(&A->readable, c);
    }
    n = A->writable.n;
    for (size_t i = 0; i < n; i++) {
        char *c = gk_canonicalize(A->ctx, A->writable.v[i]);
        if (c)
            gk_strvec_push_take(&A->writable, c);
    }
    gk_strvec_sort_unique(&A->readable);
    gk_strvec_sort_unique(&A->writable);
}

static int cmp_str_null_last(const char *a, const char *b)
{
    if (!a || !b)
        return a ? -1 : b ? 1 : 0;
    return gk_strcmp_bytes(a, b);
}

static int finding_cmp(const void *pa, const void *pb)
{
    const gk_finding *a = pa, *b = pb;
    int c = cmp_str_null_last(a->file, b->file);
    if (c)
        return c;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->rule != b->rule)
        return a->rule < b->rule ? -1 : 1;
    return gk_strcmp_bytes(a->message, b->message);
}

int grant_audit(const grant_policy *p, grant_findings **out)
{
    if (!p || !out)
        return -EINVAL;
    grant_findings *F = gk_calloc(1, sizeof(*F));
    F->cwd = p->ctx->cwd ? gk_strdup(p->ctx->cwd) : NULL;
    F->primary = p->nsources ? gk_strdup(p->sources[0].file) : NULL;
    audit A = {.p = p, .s = &p->stack, .ctx = p->ctx, .out = F};
    A.host = !gk_target_is_offline(p->ctx);
    A.linux_target = strcmp(gk_target_name(p->ctx), "linux") == 0;
    A.windows_target = strcmp(gk_target_name(p->ctx), "windows") == 0;
    A.macos_target = strcmp(gk_target_name(p->ctx), "macos") == 0;
    A.pr = gk_projection_build(p);
    prefixes_init(&A);
    refusals_index(&A);

    check_deputy(&A);
    for (size_t i = 0; i < A.s->n; i++) {
        if (A.s->v[i]->has_fs) {
            check_grants(&A, i);
            check_refusals(&A, i);
        }
        check_exec_rules(&A, i);
    }
    check_gates(&A);
    check_sources(&A);
    check_sockets(&A);
    check_path_dirs(&A);
    check_shell_capable(&A);
    check_git(&A);
    check_git_config(&A);
    check_build_files(&A);
    check_net(&A);
    check_fidelity(&A);

    if (F->n > 1) {
        qsort(F->v, F->n, sizeof(*F->v), finding_cmp);
        size_t w = 1;
        for (size_t r = 1; r < F->n; r++) {
            if (finding_cmp(&F->v[r], &F->v[w - 1]) == 0)
                gk_finding_free(&F->v[r]);
            else
                F->v[w++] = F->v[r];
        }
        F->n = w;
    }
    gk_strvec_free(&A.readable);
    gk_strvec_free(&A.writable);
    free(A.dead);
    free(A.refusals);
    gk_projection_free(A.pr);
    *out = F;
    return 0;
}

