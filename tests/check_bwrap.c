/* check_bwrap.c - the Linux emitters: bubblewrap argv and Landlock ruleset.
 *
 * Goldens (tests as data; GK_REGEN=1 rewrites them, review the diff):
 * - every bundled policy (policies/ .grant files, recursively) and every
 *   targeted case (tests/data/bwrap/cases), compiled with the fixed offline
 *   context (gk_test_context_linux), so they do not depend on this host:
 *   golden/NAME.bwrap.{sh,json,argv0}, NAME.landlock.json, NAME.notes;
 * - host cases (tests/data/bwrap/host, @ROOT@ standing for a tree this
 *   suite builds in a fresh directory): compiled for this host with
 *   --no-implicit and PATH inside the tree, so only lstat of the tree
 *   decides; the tree's path is written back as @ROOT@.
 * Oracles, on every golden input:
 * - the three bwrap formats carry the same argument vector (the shell line
 *   is unquoted back, argv0 split at NULs), and emitting twice gives the
 *   same bytes;
 * - the spec's order (namespaces, env, mounts, masks, --chdir); one mask
 *   per deny entry, or a note saying why not;
 * - a model of bwrap's mount table built from the argv alone: every name it
 *   shows readable or writable maps to a host path the gate allows for that
 *   operation (the conservatism invariant), and writable regions are
 *   writable;
 * - Landlock: rights within the handled set, EXECUTE only on exec admits
 *   and the ELF interpreter when exec is restricted, every region mirrored,
 *   every deny inside a granted tree noted.
 * The real launch: every bundled policy (run from the project and from the
 * home directory) and every host case is compiled for this host with home,
 * cwd and tempdir inside a fresh tree; bwrap really runs /bin/true and a
 * probe (a static C program built here) that reports from inside what it
 * can read, write, create and execute; the gate's answers bound every
 * report. The placeholders the plan names are removed, and the tree must be
 * exactly as it was. A missing bwrap fails the suite.
 */
#include "testutil.h"
#include "backends/backend.h"
#include "lattice/lattice.h"
#include "gate/gate.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

#define BWRAP "/usr/bin/bwrap"

static char *data_path(const char *rel)
{
    gk_autofree char *d = gk_test_path("tests/data/bwrap");
    return gk_path_join(d, rel);
}

static char *replace_all(const char *s, const char *from, const char *to)
{
    gk_buf b = {0};
    size_t n = strlen(from);
    for (const char *p = s; *p;) {
        if (n && strncmp(p, from, n) == 0) {
            gk_buf_puts(&b, to);
            p += n;
        } else {
            gk_buf_putc(&b, *p++);
        }
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

/* ---- compiling and emitting -------------------------------------------- */

static grant_policy *compile_path(const grant_context *ctx, const char *path)
{
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {path};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    if (rc != 0) {
        gk_autofree char *msg = gk_test_render_diags(d);
        ck_abort_msg("compiling %s failed (%d):\n%s", path, rc, msg);
    }
    grant_diags_free(d);
    return p;
}

typedef struct emitted {
    char *shell, *json, *argv0, *landlock, *notes;
    size_t argv0_len;
} emitted;

static char *emit_one(const grant_policy *p, grant_backend be, const char *format,
                      grant_diags *notes, size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    int rc = grant_emit(p, be, format, notes, &out, &n);
    ck_assert_msg(rc == 0, "grant_emit(%d, %s) = %d", (int)be, format ? format : "-", rc);
    ck_assert_ptr_nonnull(out);
    if (len)
        *len = n;
    else
        ck_assert_uint_eq(n, strlen(out));
    return out;
}

static emitted emit_all(const grant_policy *p)
{
    emitted e = {0};
    grant_diags *bw = grant_diags_new(), *ll = grant_diags_new(), *scratch = grant_diags_new();
    e.shell = emit_one(p, GRANT_BACKEND_BWRAP, NULL, bw, NULL);
    e.json = emit_one(p, GRANT_BACKEND_BWRAP, "json", scratch, NULL);
    e.argv0 = emit_one(p, GRANT_BACKEND_BWRAP, "argv0", scratch, &e.argv0_len);
    e.landlock = emit_one(p, GRANT_BACKEND_LANDLOCK, NULL, ll, NULL);
    gk_autofree char *a = gk_test_render_diags(bw);
    gk_autofree char *b = gk_test_render_diags(ll);
    e.notes = gk_printf("%s%s%s\n", a, *a && *b ? "\n" : "", b);
    grant_diags_free(bw);
    grant_diags_free(ll);
    grant_diags_free(scratch);
    return e;
}

static void emitted_free(emitted *e)
{
    free(e->shell);
    free(e->json);
    free(e->argv0);
    free(e->landlock);
    free(e->notes);
}

/* ---- the three formats carry one vector ----------------------------------- */

static gk_strvec argv_from_json(const char *s)
{
    json_error_t err;
    json_t *a = json_loads(s, 0, &err);
    ck_assert_msg(a && json_is_array(a), "bwrap json: %s", err.text);
    gk_strvec v = {0};
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        ck_assert(json_is_string(x));
        gk_strvec_push(&v, json_string_value(x));
    }
    json_decref(a);
    return v;
}

static gk_strvec argv_from_argv0(const char *s, size_t len)
{
    gk_strvec v = {0};
    ck_assert_msg(len == 0 || s[len - 1] == '\0', "argv0: last argument not NUL-terminated");
    for (size_t i = 0; i < len;) {
        gk_strvec_push(&v, s + i);
        i += strlen(s + i) + 1;
    }
    return v;
}

/* Undo the shell format: words split at spaces, '...' quoted, '\'' an
 * embedded quote; one line ending in a newline. */
static gk_strvec argv_from_shell(const char *s)
{
    size_t n = strlen(s);
    ck_assert_msg(n > 0 && s[n - 1] == '\n' && !memchr(s, '\n', n - 1),
                  "shell format: not one line");
    gk_strvec v = {0};
    gk_buf w = {0};
    bool in_word = false, quoted = false;
    for (size_t i = 0; i < n - 1; i++) {
        char c = s[i];
        if (quoted) {
            if (c == '\'')
                quoted = false;
            else
                gk_buf_putc(&w, c);
        } else if (c == '\'') {
            quoted = in_word = true;
        } else if (c == '\\' && s[i + 1] == '\'') {
            gk_buf_putc(&w, '\'');
            i++;
        } else if (c == ' ') {
            ck_assert_msg(in_word, "shell format: double space");
            gk_buf_puts(&w, "");
            gk_strvec_push(&v, w.data);
            w.len = 0;
            w.data[0] = '\0';
            in_word = false;
        } else {
            ck_assert_msg(strchr("\"$`\\*?[]{}();&|<>~#!\t", c) == NULL,
                          "shell format: unquoted special character '%c'", c);
            gk_buf_putc(&w, c);
            in_word = true;
        }
    }
    ck_assert_msg(!quoted, "shell format: unterminated quote");
    if (in_word) {
        gk_buf_puts(&w, "");
        gk_strvec_push(&v, w.data);
    }
    gk_buf_free(&w);
    return v;
}

static void assert_same_argv(const gk_strvec *a, const gk_strvec *b, const char *what)
{
    ck_assert_msg(a->n == b->n, "%s: %zu arguments vs %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        ck_assert_msg(strcmp(a->v[i], b->v[i]) == 0, "%s: argument %zu '%s' vs '%s'", what, i,
                      a->v[i], b->v[i]);
}

/* ---- a model of bwrap's mount table, from the argv alone ------------------ */

typedef enum sim_kind { S_RO, S_RW, S_MASK, S_PRIV, S_PROC, S_LINK } sim_kind;

typedef struct sim_op {
    sim_kind kind;
    const char *src, *dest;
} sim_op;

typedef struct sim {
    sim_op *v;
    size_t n, cap;
    size_t first_mask; /* index in argv of the first mask */
} sim;

static const struct {
    const char *flag;
    int args;
} arg_counts[] = {
    {"--setenv", 2}, {"--chdir", 1}, {"--cap-drop", 1}, {"--perms", 1}, {"--tmpfs", 1},
    {"--remount-ro", 1}, {"--ro-bind", 2}, {"--ro-bind-try", 2}, {"--bind", 2},
    {"--bind-try", 2}, {"--dev-bind", 2}, {"--dev-bind-try", 2}, {"--proc", 1},
    {"--dev", 1}, {"--symlink", 2}, {"--dir", 1},
};

static int nargs(const char *flag)
{
    for (size_t i = 0; i < sizeof(arg_counts) / sizeof(*arg_counts); i++)
        if (strcmp(flag, arg_counts[i].flag) == 0)
            return arg_counts[i].args;
    return 0;
}

static void sim_push(sim *s, sim_kind k, const char *src, const char *dest)
{
    sim_op op = {k, src, dest};
    GK_VEC_PUSH(s->v, s->n, s->cap, op);
}

static sim sim_build(const gk_strvec *a)
{
    sim s = {0};
    s.first_mask = a->n;
    bool perms0 = false;
    for (size_t i = 0; i < a->n;) {
        const char *f = a->v[i];
        int n = nargs(f);
        ck_assert_msg(i + (size_t)n < a->n || n == 0, "argv ends inside %s", f);
        const char *x = n >= 1 ? a->v[i + 1] : NULL, *y = n >= 2 ? a->v[i + 2] : NULL;
        bool mask = false;
        if (strcmp(f, "--perms") == 0) {
            perms0 = strcmp(x, "0000") == 0;
            mask = perms0;
        } else if (strcmp(f, "--tmpfs") == 0) {
            sim_push(&s, perms0 ? S_MASK : S_PRIV, NULL, x);
            perms0 = false;
        } else if (strcmp(f, "--ro-bind") == 0 || strcmp(f, "--ro-bind-try") == 0) {
            mask = strcmp(x, "/dev/null") == 0;
            sim_push(&s, mask ? S_MASK : S_RO, x, y);
        } else if (!strcmp(f, "--bind") || !strcmp(f, "--bind-try") || !strcmp(f, "--dev-bind") ||
                   !strcmp(f, "--dev-bind-try")) {
            sim_push(&s, S_RW, x, y);
        } else if (strcmp(f, "--proc") == 0) {
            sim_push(&s, S_PROC, NULL, x);
        } else if (strcmp(f, "--dev") == 0) {
            sim_push(&s, S_PRIV, NULL, x);
        } else if (strcmp(f, "--symlink") == 0) {
            sim_push(&s, S_LINK, x, y);
        }
        if (mask && s.first_mask == a->n)
            s.first_mask = i;
        i += 1 + (size_t)n;
    }
    return s;
}

/* What the sandbox shows at name q: the host path (NULL: nothing of the
 * host), and whether it can be read or written there. */
static char *sim_query(const sim *s, const char *q, bool *r, bool *w)
{
    *r = *w = false;
    gk_autofree char *cur = gk_strdup(q);
    for (int hops = 0; hops < 8; hops++) {
        bool moved = false;
        for (size_t i = 0; i < s->n && !moved; i++) {
            if (s->v[i].kind != S_LINK || !gk_path_within(cur, s->v[i].dest))
                continue;
            gk_autofree char *parent = gk_path_parent(s->v[i].dest);
            gk_autofree char *target = s->v[i].src[0] == '/' ? gk_strdup(s->v[i].src)
                                                              : gk_path_join(parent, s->v[i].src);
            char *next = gk_printf("%s%s", target, cur + strlen(s->v[i].dest));
            free(cur);
            cur = next;
            moved = true;
        }
        if (!moved)
            break;
    }
    const sim_op *eff = NULL;
    for (size_t i = s->n; i-- > 0 && !eff;)
        if (s->v[i].kind != S_LINK && gk_path_within(cur, s->v[i].dest))
            eff = &s->v[i];
    if (!eff || eff->kind == S_MASK || eff->kind == S_PRIV)
        return NULL;
    if (eff->kind == S_PROC) {
        *r = true;
        return gk_strdup(cur);
    }
    *r = true;
    *w = eff->kind == S_RW;
    const char *rest = strcmp(eff->dest, "/") == 0 ? cur : cur + strlen(eff->dest);
    if (!*rest)
        return gk_strdup(eff->src);
    return strcmp(eff->src, "/") == 0 ? gk_strdup(rest) : gk_printf("%s%s", eff->src, rest);
}

static grant_answer gate(const grant_policy *p, grant_op op, const char *path)
{
    grant_verdict *v = NULL;
    int rc = gk_target_is_offline(p->ctx) ? grant_check_fs_resolved(p, op, path, &v)
                                          : grant_check_fs(p, op, path, "/", &v);
    ck_assert_int_eq(rc, 0);
    grant_answer a = grant_verdict_answer(v);
    grant_verdict_free(v);
    return a;
}

static void add_with_children(gk_strvec *q, const char *p)
{
    gk_strvec_push(q, p);
    gk_strvec_push_take(q, gk_path_join(p, "gk-child"));
    char *up = gk_path_parent(p);
    if (up)
        gk_strvec_push_take(q, up);
}

static void add_regions(gk_strvec *q, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++) {
        add_with_children(q, r->v[i].p.real);
        add_with_children(q, r->v[i].p.path);
    }
}

/* Names worth asking about: every path the projection mentions, with a
 * child and the parent, plus a few the policy does not mention. */
static gk_strvec query_set(const grant_policy *p, const gk_projection *pr)
{
    gk_strvec q = {0};
    add_regions(&q, &pr->read);
    add_regions(&q, &pr->write);
    add_regions(&q, &pr->readonly);
    add_regions(&q, &pr->deny);
    const gk_strvec *lists[] = {&pr->pinned, &pr->exec_admit, &pr->exec_veto, &pr->protect,
                                &pr->implicit.read, &pr->implicit.write, &pr->implicit.devices};
    for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            add_with_children(&q, lists[l]->v[i]);
    const char *extra[] = {"/", "/etc/shadow", "/root/x", "/home/u/other", "/proc/self/status",
                           "/dev/null", "/dev/sda", "/tmp/x", "/var/lib/x", "/srv/other"};
    for (size_t i = 0; i < sizeof(extra) / sizeof(*extra); i++)
        gk_strvec_push(&q, extra[i]);
    if (p->ctx->cwd)
        add_with_children(&q, p->ctx->cwd);
    gk_strvec_sort_unique(&q);
    return q;
}

/* The conservatism invariant on the model: nothing shown readable or
 * writable that the gate denies; the writable regions are writable. */
static void check_model(const grant_policy *p, const gk_projection *pr, const gk_strvec *a,
                        const char *what)
{
    sim s = sim_build(a);
    gk_strvec q = query_set(p, pr);
    bool offline = gk_target_is_offline(p->ctx);
    size_t shown = 0;
    for (size_t i = 0; i < q.n; i++) {
        /* On the host a symlink inside a bind leads elsewhere than the model
         * follows; the real launch covers those. */
        if (!offline) {
            gk_autofree char *res = gk_resolve_host(q.v[i]);
            if (!res || strcmp(res, q.v[i]) != 0)
                continue;
        }
        bool r, w;
        gk_autofree char *host = sim_query(&s, q.v[i], &r, &w);
        if (!host)
            continue;
        struct stat st;
        if (!offline && !w && lstat(host, &st) < 0)
            continue; /* absent and not creatable: nothing to read (noted) */
        shown++;
        if (r)
            ck_assert_msg(gate(p, GRANT_OP_READ, host) == GRANT_ALLOWED,
                          "%s: %s shows %s readable, the gate denies it", what, q.v[i], host);
        if (w)
            ck_assert_msg(gate(p, GRANT_OP_WRITE, host) == GRANT_ALLOWED,
                          "%s: %s shows %s writable, the gate denies it", what, q.v[i], host);
    }
    ck_assert_msg(shown > 0 || q.n == 0, "%s: the model shows nothing", what);
    for (size_t i = 0; i < pr->write.n; i++) {
        const char *wr = pr->write.v[i].p.real;
        if (gate(p, GRANT_OP_WRITE, wr) != GRANT_ALLOWED)
            continue;
        bool r, w;
        gk_autofree char *host = sim_query(&s, wr, &r, &w);
        ck_assert_msg(host && w && strcmp(host, wr) == 0, "%s: writable region %s not writable",
                      what, wr);
    }
    for (size_t i = 0; i < pr->read.n; i++) {
        const char *rd = pr->read.v[i].p.real;
        if (gate(p, GRANT_OP_READ, rd) != GRANT_ALLOWED)
            continue;
        bool r, w;
        gk_autofree char *host = sim_query(&s, rd, &r, &w);
        ck_assert_msg(host && r, "%s: readable region %s not readable", what, rd);
    }
    gk_strvec_free(&q);
    free(s.v);
}

/* ---- the spec's order ----------------------------------------------------- */

static const char *const ns_flags[] = {"--new-session", "--die-with-parent", "--unshare-user",
                                       "--disable-userns", "--unshare-ipc", "--unshare-uts",
                                       "--unshare-pid", "--unshare-cgroup-try"};

static bool is_mount_flag(const char *f)
{
    return strstr(f, "bind") || !strcmp(f, "--tmpfs") || !strcmp(f, "--proc") ||
           !strcmp(f, "--dev") || !strcmp(f, "--symlink") || !strcmp(f, "--dir");
}

static void check_order(const grant_policy *p, const gk_projection *pr, const gk_strvec *a,
                        const char *notes, const char *what)
{
    size_t i = 0;
    for (size_t k = 0; k < sizeof(ns_flags) / sizeof(*ns_flags); k++, i++)
        ck_assert_msg(i < a->n && strcmp(a->v[i], ns_flags[k]) == 0, "%s: argument %zu not %s",
                      what, i, ns_flags[k]);
    if (!pr->net)
        ck_assert_str_eq(a->v[i++], "--unshare-net");
    ck_assert_str_eq(a->v[i++], "--cap-drop");
    ck_assert_str_eq(a->v[i++], "ALL");
    ck_assert_str_eq(a->v[i++], "--clearenv");
    const char *prev = "";
    while (i < a->n && strcmp(a->v[i], "--setenv") == 0) {
        ck_assert_msg(strcmp(prev, a->v[i + 1]) < 0, "%s: --setenv not sorted", what);
        prev = a->v[i + 1];
        i += 3;
    }
    for (size_t k = 0; k < i; k++)
        ck_assert_msg(strcmp(a->v[k], "--unshare-net") != 0 || !pr->net, "%s: net", what);
    if (pr->fs_restricted)
        ck_assert_msg(a->n >= 4 && !strcmp(a->v[a->n - 4], "--remount-ro") &&
                          !strcmp(a->v[a->n - 3], "/"),
                      "%s: a restricted fs does not end with --remount-ro /", what);
    /* --chdir last. */
    ck_assert_msg(a->n >= 2 && strcmp(a->v[a->n - 2], "--chdir") == 0, "%s: --chdir not last",
                  what);
    ck_assert_str_eq(a->v[a->n - 1], p->ctx->cwd);
    /* Mounts: none after the first mask; no mount hides an earlier one;
     * masks sorted. */
    sim s = sim_build(a);
    gk_strvec masks = {0};
    bool in_masks = false;
    gk_strvec dests = {0};
    gk_strvec rw = {0}; /* "1" where dests[k] is a writable bind */
    for (; i < a->n - 2;) {
        const char *f = a->v[i];
        int n = nargs(f);
        /* 0555: an absent readonly name's empty directory (nothing to hide) */
        bool mask = (!strcmp(f, "--perms") &&
                     (!strcmp(a->v[i + 1], "0000") || !strcmp(a->v[i + 1], "0555"))) ||
                    (!strcmp(f, "--ro-bind") && !strcmp(a->v[i + 1], "/dev/null"));
        if (mask) {
            in_masks = true;
            const char *name = !strcmp(f, "--perms") ? a->v[i + 3] : a->v[i + 2];
            if (!strcmp(f, "--perms")) {
                ck_assert_str_eq(a->v[i + 2], "--tmpfs");
                ck_assert_str_eq(a->v[i + 4], "--remount-ro");
                ck_assert_str_eq(a->v[i + 5], name);
                n = 5;
            }
            if (masks.n)
                ck_assert_msg(gk_strcmp_bytes(masks.v[masks.n - 1], name) < 0,
                              "%s: masks not sorted (%s after %s)", what, name,
                              masks.v[masks.n - 1]);
            gk_strvec_push(&masks, name);
        } else if (!strcmp(f, "--remount-ro") && !strcmp(a->v[i + 1], "/")) {
            /* The sandbox root made read-only once every mountpoint exists. */
            ck_assert_msg(pr->fs_restricted && i + 2 == a->n - 2,
                          "%s: --remount-ro / must close the mounts of a restricted fs", what);
        } else if (is_mount_flag(f)) {
            ck_assert_msg(!in_masks, "%s: %s %s after a mask", what, f, a->v[i + n]);
            const char *dest = a->v[i + n];
            bool readonly_rebind = !strcmp(f, "--ro-bind") || !strcmp(f, "--ro-bind-try");
            for (size_t k = 0; k < dests.n && strcmp(f, "--dir") != 0; k++) {
                bool hides = strcmp(dests.v[k], dest) != 0 && gk_path_within(dests.v[k], dest);
                /* A read-only re-bind hides the writable mount it covers on
                 * purpose (a write region inside a readonly entry). */
                ck_assert_msg(!hides || (readonly_rebind && rw.v[k][0] == '1'),
                              "%s: %s %s hides the earlier %s", what, f, dest, dests.v[k]);
            }
            gk_strvec_push(&dests, dest);
            gk_strvec_push(&rw, !strcmp(f, "--bind") || !strcmp(f, "--bind-try") ? "1" : "0");
        } else {
            ck_abort_msg("%s: unexpected argument '%s' among the mounts", what, f);
        }
        i += 1 + (size_t)n;
    }
    /* One mask per deny entry, or a note saying why not. */
    for (size_t k = 0; k < pr->deny.n; k++) {
        const char *t = pr->deny.v[k].p.real;
        bool ok = gk_strvec_contains(&masks, t) || strstr(notes, t) != NULL;
        for (size_t m = 0; m < masks.n && !ok; m++)
            ok = gk_path_within(t, masks.v[m]);
        if (!ok && !gk_target_is_offline(p->ctx)) {
            /* Not shown anywhere in the sandbox: nothing to mask. */
            bool r, w;
            gk_autofree char *h = sim_query(&s, t, &r, &w);
            ok = h == NULL;
        }
        ck_assert_msg(ok, "%s: deny %s has no mask and no note", what, t);
    }
    gk_strvec_free(&masks);
    gk_strvec_free(&dests);
    gk_strvec_free(&rw);
    free(s.v);
}

/* ---- Landlock ----------------------------------------------------------- */

static const char *const interp[] = {"/lib64/ld-linux-x86-64.so.2",
                                     "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                                     "/lib/ld-linux-aarch64.so.1",
                                     "/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"};

static bool json_has(json_t *arr, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x)
        if (strcmp(json_string_value(x), s) == 0)
            return true;
    return false;
}

static void check_landlock(const gk_projection *pr, bool offline, const char *text,
                           const char *notes, const char *what)
{
    json_error_t err;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    ck_assert_msg(o && json_is_object(o), "%s: landlock json: %s", what, err.text);
    json_t *abi = json_object_get(o, "abi"), *handled = json_object_get(o, "handled_access_fs"),
           *rules = json_object_get(o, "rules");
    ck_assert(json_is_integer(abi) && json_integer_value(abi) >= 1);
    ck_assert(json_is_array(handled) && json_is_array(rules));
    ck_assert(json_has(handled, "read_file") && json_has(handled, "execute"));
    ck_assert_int_eq(json_has(handled, "truncate"), json_integer_value(abi) >= 3);
    size_t i;
    json_t *r;
    const char *prev = "";
    json_array_foreach(rules, i, r) {
        const char *path = json_string_value(json_object_get(r, "path"));
        json_t *acc = json_object_get(r, "access");
        ck_assert_msg(path && gk_strcmp_bytes(prev, path) < 0, "%s: rules not sorted", what);
        prev = path;
        ck_assert_msg(json_array_size(acc) > 0, "%s: rule %s grants nothing", what, path);
        size_t k;
        json_t *x;
        json_array_foreach(acc, k, x)
            ck_assert_msg(json_has(handled, json_string_value(x)), "%s: %s: %s not handled",
                          what, path, json_string_value(x));
        if (json_has(acc, "execute") && pr->exec_restricted) {
            bool ok = gk_strvec_contains(&pr->exec_admit, path);
            for (size_t n = 0; n < sizeof(interp) / sizeof(*interp); n++)
                ok |= strcmp(path, interp[n]) == 0;
            ck_assert_msg(ok, "%s: EXECUTE on %s, which exec does not admit", what, path);
        }
    }
    /* Every region mirrored with its rights (offline every region is there;
     * on the host a missing one is skipped, as bwrap's -try skips it). */
    const gk_regions *lists[2] = {&pr->read, &pr->write};
    for (int l = 0; l < 2; l++)
        for (size_t n = 0; n < lists[l]->n; n++) {
            const char *p = lists[l]->v[n].p.real;
            struct stat st;
            if (!offline && stat(p, &st) < 0)
                continue;
            bool found = false;
            json_array_foreach(rules, i, r) {
                if (strcmp(json_string_value(json_object_get(r, "path")), p) != 0)
                    continue;
                json_t *acc = json_object_get(r, "access");
                found = json_has(acc, "read_file") &&
                        (l == 0 || (json_has(acc, "write_file") &&
                                    (json_integer_value(abi) < 2 || json_has(acc, "refer"))));
            }
            ck_assert_msg(found, "%s: %s region %s has no matching rule", what,
                          l ? "writable" : "readable", p);
        }
    /* A deny inside a granted tree is noted. */
    for (size_t n = 0; n < pr->deny.n; n++) {
        const char *d = pr->deny.v[n].p.real;
        bool inside = false;
        json_array_foreach(rules, i, r) {
            inside |= gk_path_within(d, json_string_value(json_object_get(r, "path")));
        }
        if (inside) {
            gk_autofree char *needle = gk_printf("landlock: warning: deny %s inside", d);
            ck_assert_msg(strstr(notes, needle), "%s: deny %s inside a rule, not noted", what,
                          d);
        }
    }
    json_decref(o);
}

/* ---- every oracle on one policy ------------------------------------------ */

static void check_all(const grant_policy *p, const emitted *e, const char *what)
{
    gk_strvec vj = argv_from_json(e->json);
    gk_strvec v0 = argv_from_argv0(e->argv0, e->argv0_len);
    gk_strvec vs = argv_from_shell(e->shell);
    assert_same_argv(&vj, &v0, "json vs argv0");
    assert_same_argv(&vj, &vs, "json vs shell");
    gk_projection *pr = gk_projection_build(p);
    check_order(p, pr, &vj, e->notes, what);
    check_model(p, pr, &vj, what);
    check_landlock(pr, gk_target_is_offline(p->ctx), e->landlock, e->notes, what);
    /* The internal plan is what the formats print. */
    gk_emit_input in = {p, pr, "json", NULL};
    grant_diags *d = grant_diags_new();
    gk_bwrap_plan plan;
    gk_bwrap_plan_build(&in, d, &plan);
    gk_strvec options = {0};
    gk_bwrap_plan_options(&plan, NULL, &options);
    assert_same_argv(&options, &vj, "plan vs json");
    /* A launcher's mounts go after the policy's, before masks and remount. */
    ck_assert_uint_gt(plan.late_options.n, 0);
    const char *at = plan.late_options.v[0];
    ck_assert_msg(!strcmp(at, "--perms") || !strcmp(at, "--remount-ro") ||
                      !strcmp(at, "--chdir") ||
                      (!strcmp(at, "--ro-bind") && plan.late_options.n > 1 &&
                       !strcmp(plan.late_options.v[1], "/dev/null")),
                  "%s: the late options start at %s", what, at);
    gk_strvec_free(&options);
    gk_bwrap_plan_free(&plan);
    grant_diags_free(d);
    gk_projection_free(pr);
    gk_strvec_free(&vj);
    gk_strvec_free(&v0);
    gk_strvec_free(&vs);
}

/* root (the tree) is written back as @ROOT@ and base (the run directory
 * holding it) as @RUN@. */
static char *unroot(const char *s, const char *root, const char *base)
{
    if (!root)
        return gk_strdup(s);
    gk_autofree char *a = replace_all(s, root, "@ROOT@");
    return replace_all(a, base, "@RUN@");
}

/* Notes that depend on the state of this host, not on the tree. */
static char *drop_host_notes(const char *notes)
{
    gk_buf b = {0};
    gk_autofree char *copy = gk_strdup(notes);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (!strstr(l, "/dev/null on this host")) {
            gk_buf_puts(&b, l);
            gk_buf_putc(&b, '\n');
        }
    if (!b.data)
        gk_buf_puts(&b, "\n");
    return gk_buf_steal(&b, NULL);
}

static void golden_all(const char *stem, const emitted *e, const char *root, const char *base)
{
    gk_autofree char *notes = drop_host_notes(e->notes);
    struct {
        const char *suffix, *text;
    } outs[] = {{".bwrap.sh", e->shell},
                {".bwrap.json", e->json},
                {".landlock.json", e->landlock},
                {".notes", notes}};
    for (size_t i = 0; i < sizeof(outs) / sizeof(*outs); i++) {
        gk_autofree char *rel = gk_printf("golden/%s%s", stem, outs[i].suffix);
        gk_autofree char *path = data_path(rel);
        gk_autofree char *text = unroot(outs[i].text, root, base);
        gk_test_golden_text(path, text);
    }
    /* argv0 keeps its NULs: substitute argument by argument. */
    gk_buf b = {0};
    for (size_t i = 0; i < e->argv0_len;) {
        const char *arg = e->argv0 + i;
        gk_autofree char *sub = unroot(arg, root, base);
        gk_buf_add(&b, sub, strlen(sub) + 1);
        i += strlen(arg) + 1;
    }
    gk_autofree char *rel = gk_printf("golden/%s.bwrap.argv0", stem);
    gk_autofree char *path = data_path(rel);
    gk_test_golden(path, b.data ? b.data : "", b.len);
    gk_buf_free(&b);
}

/* ---- offline goldens: bundled policies and targeted cases ----------------- */

typedef struct input {
    char *stem, *path;
} input;

static size_t offline_inputs(input **out)
{
    gk_autofree char *pol = gk_test_path("policies");
    gk_autofree char *cases = data_path("cases");
    gk_strvec a = gk_test_files(pol, ".grant"), b = gk_test_files(cases, ".grant");
    ck_assert_uint_ge(a.n, 2);
    ck_assert_uint_ge(b.n, 8);
    input *v = gk_calloc(a.n + b.n, sizeof(*v));
    size_t n = 0;
    const gk_strvec *lists[2] = {&a, &b};
    const char *prefix[2] = {"policies", "cases"};
    const char *dirs[2] = {pol, cases};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *rel = lists[l]->v[i] + strlen(dirs[l]) + 1;
            gk_autofree char *stem = gk_strndup(rel, strlen(rel) - strlen(".grant"));
            for (char *c = stem; *c; c++)
                if (*c == '/')
                    *c = '-';
            v[n].stem = gk_printf("%s-%s", prefix[l], stem);
            v[n].path = gk_strdup(lists[l]->v[i]);
            n++;
        }
    gk_strvec_free(&a);
    gk_strvec_free(&b);
    *out = v;
    return n;
}

static void inputs_free(input *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].stem);
        free(v[i].path);
    }
    free(v);
}

START_TEST(test_offline_goldens)
{
    input *in;
    size_t n = offline_inputs(&in);
    grant_context *ctx = gk_test_context_linux();
    for (size_t i = 0; i < n; i++) {
        grant_policy *p = compile_path(ctx, in[i].path);
        emitted e = emit_all(p);
        /* Oracles first: their failures say more than a diff. */
        check_all(p, &e, in[i].stem);
        golden_all(in[i].stem, &e, NULL, NULL);
        /* Same policy, same bytes. */
        emitted again = emit_all(p);
        ck_assert_str_eq(again.shell, e.shell);
        ck_assert_str_eq(again.landlock, e.landlock);
        ck_assert_str_eq(again.notes, e.notes);
        emitted_free(&again);
        emitted_free(&e);
        grant_policy_free(p);
    }
    grant_context_free(ctx);
    inputs_free(in, n);
}
END_TEST

/* Formats and targets the emitters refuse. */
START_TEST(test_refusals)
{
    grant_context *ctx = gk_test_context_linux();
    gk_autofree char *path = gk_test_path("policies/base/minimal.grant");
    grant_policy *p = compile_path(ctx, path);
    char *out = NULL;
    size_t len;
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_BWRAP, "yaml", NULL, &out, &len), -EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_LANDLOCK, "shell", NULL, &out, &len), -EINVAL);
    grant_policy_free(p);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_MACOS), 0);
    p = compile_path(ctx, path);
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_BWRAP, NULL, NULL, &out, &len), -ENOTSUP);
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_LANDLOCK, NULL, NULL, &out, &len), -ENOTSUP);
    grant_policy_free(p);
    grant_context_free(ctx);
}
END_TEST

/* On the host the ABI is the kernel's (or 3, with a warning, without
 * Landlock), and the handled rights are exactly those of that ABI. */
START_TEST(test_landlock_host_abi)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    const char *text = "grant h { fs { read /usr; } }\n";
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    ck_assert_int_eq(grant_compile_buffer(ctx, "h.grant", text, strlen(text), d, &p), 0);
    char *out = NULL;
    size_t len = 0;
    grant_diags *notes = grant_diags_new();
    ck_assert_int_eq(grant_emit(p, GRANT_BACKEND_LANDLOCK, NULL, notes, &out, &len), 0);
    long k = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U);
    json_t *o = json_loads(out, 0, NULL);
    ck_assert_ptr_nonnull(o);
    int abi = (int)json_integer_value(json_object_get(o, "abi"));
    ck_assert_int_eq(abi, k >= 1 ? (int)k : 3);
    json_t *h = json_object_get(o, "handled_access_fs");
    ck_assert_int_eq(json_has(h, "refer"), abi >= 2);
    ck_assert_int_eq(json_has(h, "truncate"), abi >= 3);
    ck_assert_int_eq(json_has(h, "ioctl_dev"), abi >= 5);
    gk_autofree char *rendered = gk_test_render_diags(notes);
    ck_assert_int_eq(strstr(rendered, "Landlock is unavailable") != NULL, k < 1);
    json_decref(o);
    free(out);
    grant_diags_free(notes);
    grant_diags_free(d);
    grant_policy_free(p);
    grant_context_free(ctx);
}
END_TEST

/* Shell quoting: only when needed, single quotes, embedded quote. */
START_TEST(test_shell_quoting)
{
    grant_context *ctx = gk_test_context_linux();
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/w/it's a dir"), 0);
    const char *text = "grant q { fs { write cwd:; deny \"cwd:/$HOME\"; } }\n";
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile_buffer(ctx, "q.grant", text, strlen(text), d, &p);
    if (rc) {
        gk_autofree char *m = gk_test_render_diags(d);
        ck_abort_msg("%s", m);
    }
    emitted e = emit_all(p);
    ck_assert_ptr_nonnull(strstr(e.shell, " --chdir '/w/it'\\''s a dir'\n"));
    ck_assert_ptr_nonnull(strstr(e.shell, " '/w/it'\\''s a dir/$HOME' "));
    ck_assert_ptr_nonnull(strstr(e.shell, " --setenv PATH /usr/bin:/bin "));
    check_all(p, &e, "quoting");
    emitted_free(&e);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

/* ---- the host tree ------------------------------------------------------- */

/* Every directory a test makes lives under one of two run directories the
 * runner process makes before the tests and removes after them, whatever
 * happened in the forked tests. */
static char *run_tmp, *run_vartmp;
static void rm_tree(const char *dir);

static char *make_run_dir(const char *base)
{
    char *tmpl = gk_printf("%s/gk-bwrap-run-XXXXXX", base);
    if (!mkdtemp(tmpl)) {
        free(tmpl);
        return NULL;
    }
    char *real = realpath(tmpl, NULL);
    free(tmpl);
    return real;
}

static void run_dirs_setup(void)
{
    struct stat st;
    run_tmp = make_run_dir("/tmp");
    /* /var/tmp for launches: outside the target's implicitly writable /tmp,
     * so the gate answers about the tree from the policy alone. */
    run_vartmp = make_run_dir(stat("/var/tmp", &st) == 0 ? "/var/tmp" : "/tmp");
}

static void run_dirs_teardown(void)
{
    if (run_tmp)
        rm_tree(run_tmp);
    if (run_vartmp)
        rm_tree(run_vartmp);
    free(run_tmp);
    free(run_vartmp);
    run_tmp = run_vartmp = NULL;
}

static char *fresh_dir_in(const char *base, const char *tag)
{
    ck_assert_msg(base != NULL, "no run directory");
    char *tmpl = gk_printf("%s/%s-XXXXXX", base, tag);
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);
    ck_assert_ptr_nonnull(real);
    free(tmpl);
    return real;
}

static char *fresh_dir(const char *tag)
{
    return fresh_dir_in(run_tmp, tag);
}

static char *launch_dir(const char *tag)
{
    return fresh_dir_in(run_vartmp, tag);
}

static void put(const char *root, const char *rel, const char *content)
{
    gk_autofree char *p = gk_path_join(root, rel);
    /* mkdir -p the parent. */
    for (char *s = strchr(p + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", p,
                      strerror(errno));
        *s = '/';
    }
    if (content)
        ck_assert_int_eq(gk_write_file_atomic(p, content, strlen(content)), 0);
    else
        ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s", p);
}

static void link_to(const char *root, const char *rel, const char *target)
{
    gk_autofree char *p = gk_path_join(root, rel);
    ck_assert_int_eq(symlink(target, p), 0);
}

/* The tree every host case and launch uses. Programs in bin/ are copies of
 * the probe (so they can be executed with no loader). */
static void build_tree(const char *r, const char *probe)
{
    put(r, "home/.ssh/id_rsa", "PRIVATE KEY\n");
    put(r, "home/.gnupg/pubring.kbx", "keyring\n");
    put(r, "home/.netrc", "machine example.com password hunter2\n");
    put(r, "home/.bashrc", "alias ll='ls -l'\n");
    put(r, "home/notes.txt", "notes\n");
    put(r, "proj/src/main.c", "int main(void) { return 0; }\n");
    put(r, "proj/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
    put(r, "proj/.git/config", "[core]\n");
    put(r, "proj/.git/HEAD", "ref: refs/heads/main\n");
    put(r, "proj/secret.txt", "s3cret\n");
    put(r, "proj/private/data", "private\n");
    put(r, "proj/private2/x", "behind a link\n");
    link_to(r, "proj/link", "private2");
    put(r, "proj/vendor/lib.c", "/* vendored */\n");
    put(r, "proj/vendor/keys/k", "vendor key\n");
    put(r, "ro/file", "read only\n");
    put(r, "real/secret", "aliased secret\n");
    put(r, "real/pub", "aliased public\n");
    link_to(r, "alias", "real");
    put(r, "tmp/scratch", "scratch\n");
    put(r, "data/out/f", "output\n");
    put(r, "data/private/p", "data private\n");
    put(r, "data/pub", "data public\n");
    put(r, "bin", NULL);
    if (probe) {
        gk_autofree char *victim = gk_path_join(r, "bin/victim");
        gk_autofree char *ok = gk_path_join(r, "bin/okprog");
        gk_test_copy(probe, victim, 0755);
        gk_test_copy(probe, ok, 0755);
    } else {
        put(r, "bin/victim", "#!/bin/true\n");
        put(r, "bin/okprog", "#!/bin/true\n");
        gk_autofree char *v = gk_path_join(r, "bin/victim");
        gk_autofree char *o = gk_path_join(r, "bin/okprog");
        ck_assert_int_eq(chmod(v, 0755), 0);
        ck_assert_int_eq(chmod(o, 0755), 0);
    }
    link_to(r, "bin/sh", "victim");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static gk_buf snap_buf;
static const char *snap_root;

static int snap_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag, (void)ftw;
    gk_buf_printf(&snap_buf, "%s %o %lld\n", path + strlen(snap_root), (unsigned)st->st_mode,
                  S_ISDIR(st->st_mode) ? 0LL : (long long)st->st_size);
    return 0;
}

/* Every entry under root with its mode and size. */
static char *snapshot(const char *root)
{
    snap_buf = (gk_buf){0};
    snap_root = root;
    ck_assert_int_eq(nftw(root, snap_entry, 16, FTW_PHYS), 0);
    gk_strvec lines = {0};
    for (char *s = snap_buf.data, *save = NULL, *l = strtok_r(s, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save))
        gk_strvec_push(&lines, l);
    gk_buf_free(&snap_buf);
    gk_strvec_sort_unique(&lines);
    gk_buf b = {0};
    for (size_t i = 0; i < lines.n; i++) {
        gk_buf_puts(&b, lines.v[i]);
        gk_buf_putc(&b, '\n');
    }
    gk_strvec_free(&lines);
    return gk_buf_steal(&b, NULL);
}

static grant_context *host_context(const char *r, const char *cwd_rel, bool implicit,
                                   const char *path)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    gk_autofree char *home = gk_path_join(r, "home");
    gk_autofree char *cwd = gk_path_join(r, cwd_rel);
    gk_autofree char *tmp = gk_path_join(r, "tmp");
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, home), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, cwd), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, tmp), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, path), 0);
    static const char *const xdg[][2] = {{"config", ".config"}, {"data", ".local/share"},
                                         {"cache", ".cache"},   {"state", ".local/state"},
                                         {"bin", ".local/bin"}};
    for (size_t i = 0; i < sizeof(xdg) / sizeof(*xdg); i++) {
        gk_autofree char *d = gk_path_join(home, xdg[i][1]);
        ck_assert_int_eq(grant_context_set_xdg(ctx, xdg[i][0], d), 0);
    }
    ck_assert_int_eq(grant_context_set_implicit(ctx, implicit), 0);
    gk_autofree char *pp = gk_test_path("policies");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    return ctx;
}

/* Write host case NAME with @ROOT@ replaced into the project (so the policy
 * file is a protected source inside a writable region). */
static char *host_policy(const char *r, const char *name)
{
    gk_autofree char *rel = gk_printf("host/%s.grant", name);
    gk_autofree char *src = data_path(rel);
    gk_autofree char *tmpl = gk_test_read(src, NULL);
    ck_assert_ptr_nonnull(tmpl);
    gk_autofree char *text = replace_all(tmpl, "@ROOT@", r);
    gk_autofree char *out_rel = gk_printf("proj/%s.grant", name);
    put(r, out_rel, text);
    return gk_path_join(r, out_rel);
}

static const char *const host_cases[] = {"alias", "kinds", "nested", "readonly",
                                         "unrestricted", "vetoed"};

START_TEST(test_host_goldens)
{
    /* The kernel's Landlock ABI is this host's business: pin it. */
    gk_landlock_abi_override = 3;
    gk_autofree char *r = fresh_dir("bwrap");
    build_tree(r, NULL);
    gk_autofree char *before = snapshot(r);
    gk_autofree char *bin = gk_path_join(r, "bin");
    for (size_t i = 0; i < sizeof(host_cases) / sizeof(*host_cases); i++) {
        gk_autofree char *file = host_policy(r, host_cases[i]);
        grant_context *ctx = host_context(r, "proj", false, bin);
        grant_policy *p = compile_path(ctx, file);
        emitted e = emit_all(p);
        gk_autofree char *stem = gk_printf("host-%s", host_cases[i]);
        check_all(p, &e, stem);
        golden_all(stem, &e, r, run_tmp);
        emitted_free(&e);
        grant_policy_free(p);
        grant_context_free(ctx);
        gk_autofree char *pf = gk_path_join(r, "proj");
        gk_autofree char *f = gk_printf("%s/%s.grant", pf, host_cases[i]);
        unlink(f);
    }
    /* Emitting examines the host; it changes nothing there. */
    gk_autofree char *after = snapshot(r);
    ck_assert_str_eq(after, before);
    rm_tree(r);
    gk_landlock_abi_override = 0;
}
END_TEST

/* ---- the real launch ------------------------------------------------------ */

static const char probe_src[] =
    "#define _GNU_SOURCE\n"
    "#include <dirent.h>\n#include <fcntl.h>\n#include <stdio.h>\n#include <string.h>\n"
    "#include <sys/mount.h>\n#include <sys/stat.h>\n#include <sys/wait.h>\n"
    "#include <unistd.h>\n"
    "/* One line per question, tab-separated: PATH, then r= (some bytes read, or\n"
    " * a directory listed), w= (opened for writing, a file created inside a\n"
    " * directory, or an absent name created), e= (the entries listed, or the\n"
    " * first bytes read in hex); or x= (executed), m= (renamed and put back) or\n"
    " * u= (unmounted). */\n"
    "static int can_read(const char *p, char *names, size_t cap) {\n"
    "  struct stat st; names[0] = 0; if (stat(p, &st) < 0) return 0;\n"
    "  if (S_ISDIR(st.st_mode)) { DIR *d = opendir(p); if (!d) return 0; struct dirent *e;\n"
    "    int n = 0; while ((e = readdir(d))) { if (!strcmp(e->d_name, \".\") ||\n"
    "      !strcmp(e->d_name, \"..\")) continue; n = 1;\n"
    "      if (strlen(names) + strlen(e->d_name) + 2 < cap) {\n"
    "        if (names[0]) strcat(names, \"/\"); strcat(names, e->d_name); } }\n"
    "    closedir(d); return n; }\n"
    "  int fd = open(p, O_RDONLY | O_NONBLOCK); if (fd < 0) return 0;\n"
    "  unsigned char c[32]; ssize_t r = read(fd, c, sizeof c); close(fd);\n"
    "  for (ssize_t i = 0; i < r; i++) sprintf(names + 2 * i, \"%02x\", c[i]);\n"
    "  return r > 0; }\n"
    "static int can_write(const char *p) {\n"
    "  struct stat st;\n"
    "  if (lstat(p, &st) < 0) {\n"
    "    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);\n"
    "    if (fd >= 0) { close(fd); unlink(p); return 1; }\n"
    "    if (mkdir(p, 0700) == 0) { rmdir(p); return 1; } return 0; }\n"
    "  if (S_ISDIR(st.st_mode)) { char q[4096];\n"
    "    snprintf(q, sizeof q, \"%s/.gk-probe-w\", p);\n"
    "    int fd = open(q, O_WRONLY | O_CREAT | O_EXCL, 0600); if (fd < 0) return 0;\n"
    "    close(fd); unlink(q); return 1; }\n"
    "  int fd = open(p, O_WRONLY | O_APPEND | O_NONBLOCK); if (fd < 0) return 0;\n"
    "  close(fd); return 1; }\n"
    "static int can_exec(const char *p) {\n"
    "  pid_t c = fork(); if (c == 0) { execl(p, p, \"--gk-exec-probe\", (char *)0); _exit(127); }\n"
    "  int st = 0; waitpid(c, &st, 0); return WIFEXITED(st) && WEXITSTATUS(st) == 42; }\n"
    "static int can_move(const char *p) {\n"
    "  char q[4096]; snprintf(q, sizeof q, \"%s.gk-moved\", p);\n"
    "  if (rename(p, q) < 0) return 0; rename(q, p); return 1; }\n"
    "/* Can the mount at p be taken away (a mask unmounted)? */\n"
    "static int can_umount(const char *p) { return umount2(p, MNT_DETACH) == 0; }\n"
    "int main(int argc, char **argv) {\n"
    "  static char names[65536];\n"
    "  if (argc > 1 && !strcmp(argv[1], \"--gk-exec-probe\")) return 42;\n"
    "  for (int i = 1; i < argc; i++) {\n"
    "    const char *p = argv[i] + 2;\n"
    "    if (argv[i][0] == 'x') printf(\"%s\\tx=%d\\n\", p, can_exec(p));\n"
    "    else if (argv[i][0] == 'm') printf(\"%s\\tm=%d\\n\", p, can_move(p));\n"
    "    else if (argv[i][0] == 'u') printf(\"%s\\tu=%d\\n\", p, can_umount(p));\n"
    "    else { int r = can_read(p, names, sizeof names);\n"
    "      printf(\"%s\\tr=%d\\tw=%d\\te=%s\\n\", p, r, can_write(p), names); }\n"
    "  }\n"
    "  printf(\"ok\\n\"); return 0; }\n";

static char *build_probe(const char *dir)
{
    gk_autofree char *src = gk_path_join(dir, "probe.c");
    char *bin = gk_path_join(dir, "gk-probe");
    ck_assert_int_eq(gk_write_file_atomic(src, probe_src, strlen(probe_src)), 0);
    const char *cc = access("/usr/bin/cc", X_OK) == 0 ? "/usr/bin/cc" : "/usr/bin/gcc";
    char *argv[] = {(char *)cc, "-static", "-O1", "-o", bin, src, NULL};
    gk_autofree char *out = NULL, *err = NULL;
    int st = gk_test_run(argv, NULL, &out, &err);
    ck_assert_msg(st == 0, "cannot build the static probe with %s:\n%s", cc, err);
    return bin;
}

typedef struct launch {
    const char *root;
    const char *probe;      /* the static probe on the host */
    const char *label;
    const char *movable;    /* a dir of a writable region that may be renamed */
    size_t min_moves;       /* rename probes expected at least (pinned + movable) */
} launch;

static void require_bwrap(void)
{
    ck_assert_msg(access(BWRAP, X_OK) == 0,
                  "%s is missing: the launch tests need bubblewrap (apt-get install bubblewrap)",
                  BWRAP);
}

/* Run bwrap with the plan, then `--` cmd. The probe is bound at /gk-probe
 * (outside every region the policies name) unless the host root is bound. */
static int run_plan(const gk_bwrap_plan *plan, const char *probe, bool unrestricted,
                    const char *const *cmd, char **out, char **err)
{
    gk_strvec v = {0}, slot = {0};
    gk_strvec_push(&v, BWRAP);
    if (probe && !unrestricted) {
        gk_strvec_push(&slot, "--ro-bind");
        gk_strvec_push(&slot, probe);
        gk_strvec_push(&slot, "/gk-probe");
    }
    gk_bwrap_plan_options(plan, &slot, &v);
    gk_strvec_free(&slot);
    gk_strvec_push(&v, "--");
    for (size_t i = 0; cmd[i]; i++)
        gk_strvec_push(&v, cmd[i]);
    char **argv = gk_calloc(v.n + 1, sizeof(*argv));
    for (size_t i = 0; i < v.n; i++)
        argv[i] = v.v[i];
    int st = gk_test_run(argv, NULL, out, err);
    free(argv);
    gk_strvec_free(&v);
    return st;
}

/* Remove what bwrap created, deepest first; each must be empty. */
static void remove_placeholders(const gk_bwrap_plan *plan, const char *label)
{
    for (size_t i = 0; i < plan->placeholders.n; i++) {
        const char *p = plan->placeholders.v[i];
        struct stat st;
        if (lstat(p, &st) < 0)
            continue; /* bwrap never got that far, or it was never needed */
        if (S_ISDIR(st.st_mode))
            ck_assert_msg(rmdir(p) == 0, "%s: placeholder %s: %s", label, p, strerror(errno));
        else
            ck_assert_msg(S_ISREG(st.st_mode) && st.st_size == 0 && unlink(p) == 0,
                          "%s: placeholder %s is not an empty file", label, p);
    }
    for (size_t i = 0; i < plan->placeholders.n; i++) {
        struct stat st;
        ck_assert_msg(lstat(plan->placeholders.v[i], &st) < 0, "%s: placeholder %s remains",
                      label, plan->placeholders.v[i]);
    }
}

typedef struct expect {
    const char *rel; /* under the root */
    int r, w;        /* -1: only the gate's bound applies */
} expect;

typedef struct xexpect {
    const char *rel;
    int x;
} xexpect;

/* Paths every launch asks about (under the root). */
static const char *const probe_paths[] = {
    "", "home", "home/.ssh", "home/.ssh/id_rsa", "home/.gnupg", "home/.gnupg/pubring.kbx",
    "home/.netrc", "home/.bashrc", "home/notes.txt", "home/.aws", "home/.aws/credentials",
    "home/.config", "home/.config/gh", "home/.git", "home/.git/hooks", "home/.git/hooks/x",
    "home/.local/bin", "home/.local/bin/tool", "home/gk-new",
    "proj", "proj/src", "proj/src/main.c", "proj/.git", "proj/.git/hooks",
    "proj/.git/hooks/pre-commit", "proj/.git/hooks/post-merge", "proj/.git/config",
    "proj/.git/HEAD", "proj/.git/commondir", "proj/secret.txt", "proj/private", "proj/private/data", "proj/link",
    "proj/private2", "proj/private2/x", "proj/absent", "proj/absent/deeper",
    "proj/absent/deeper/y", "proj/absent-ro", "proj/absent-ro/x", "proj/vendor",
    "proj/vendor/lib.c", "proj/vendor/keys", "proj/vendor/keys/k", "proj/gk-new",
    "ro", "ro/file", "ro/absent", "alias", "alias/secret", "alias/pub", "real",
    "real/secret", "real/pub", "tmp", "tmp/scratch", "tmp/gk-new", "data", "data/out",
    "data/out/f", "data/out/gk-new", "data/private", "data/private/p", "data/pub",
    "bin", "bin/victim", "outside",
};

/* The probe's command line: what it is asked, in order. r: every probe
 * path; x: each exec expectation; m: every pinned dir and placeholder
 * below the root (they must not move; a mask or re-bind below would go
 * along and free its name), then the movable dir (a plain dir of a
 * writable region may); u: every mask (no mask can be unmounted: bwrap
 * started by root keeps every capability unless told to drop them), asked
 * last because a success changes what later questions would see. */
static void probe_questions(const gk_projection *pr, const gk_bwrap_plan *plan, const launch *L,
                            const xexpect *xwant, const char *movable, gk_strvec *args)
{
    gk_strvec_push(args, pr->fs_restricted ? "/gk-probe" : L->probe);
    for (size_t i = 0; i < sizeof(probe_paths) / sizeof(*probe_paths); i++)
        gk_strvec_push_take(args, gk_printf("r:%s%s%s", L->root, *probe_paths[i] ? "/" : "",
                                            probe_paths[i]));
    for (size_t i = 0; xwant && xwant[i].rel; i++)
        gk_strvec_push_take(args, gk_printf("x:%s/%s", L->root, xwant[i].rel));
    gk_strvec pinned = {0};
    gk_strvec_copy(&pinned, &pr->pinned);
    for (size_t i = 0; i < plan->placeholders.n; i++)
        gk_strvec_push(&pinned, plan->placeholders.v[i]);
    gk_strvec_sort_unique(&pinned);
    for (size_t i = 0; i < pinned.n; i++)
        if (gk_path_within(pinned.v[i], L->root) && strcmp(pinned.v[i], L->root) != 0)
            gk_strvec_push_take(args, gk_printf("m:%s", pinned.v[i]));
    gk_strvec_free(&pinned);
    if (movable)
        gk_strvec_push_take(args, gk_printf("m:%s", movable));
    for (size_t i = 0; i < plan->masks.n; i++)
        gk_strvec_push_take(args, gk_printf("u:%s", plan->masks.v[i]));
}

/* The destination of every mount in the plan's options, masks included
 * (a symlink is no mount). */
static void mount_dests(const gk_bwrap_plan *plan, gk_strvec *dests)
{
    gk_strvec options = {0};
    gk_bwrap_plan_options(plan, NULL, &options);
    for (size_t i = 0; i < options.n; i++) {
        int n = nargs(options.v[i]);
        if (n && is_mount_flag(options.v[i]) && strcmp(options.v[i], "--symlink") != 0)
            gk_strvec_push(dests, options.v[i + (size_t)n]);
        i += (size_t)n;
    }
    gk_strvec_free(&options);
}

/* One answer "PATH r=R w=W [e=ENTRIES]": within the gate's, as expected. */
static void check_access(const grant_policy *p, const launch *L, const expect *want,
                         const gk_strvec *dests, char *const f[4], size_t nf)
{
    const char *path = f[0];
    ck_assert_msg(nf >= 3 && gk_has_prefix(f[1], "r=") && gk_has_prefix(f[2], "w="),
                  "%s: probe line for %s", L->label, path);
    int r = atoi(f[1] + 2), w = atoi(f[2] + 2);
    const char *entries = nf == 4 && gk_has_prefix(f[3], "e=") ? f[3] + 2 : "";
    struct stat hst;
    bool host_dir = stat(path, &hst) == 0 && S_ISDIR(hst.st_mode);
    if (r && !host_dir) {
        /* Readable means the host file's own bytes came out: a mask
         * binds /dev/null, whatever this host keeps there. */
        size_t hlen = 0;
        gk_autofree char *hdata = gk_test_read(path, &hlen);
        gk_buf hex = {0};
        for (size_t k = 0; hdata && k < hlen && k < 32; k++)
            gk_buf_printf(&hex, "%02x", (unsigned char)hdata[k]);
        r = hex.data && strcmp(hex.data, entries) == 0;
        gk_buf_free(&hex);
    }
    if (r && gate(p, GRANT_OP_READ, path) != GRANT_ALLOWED) {
        /* A directory bwrap made in its own root to hold mountpoints
         * lists only those: nothing of the host's directory. */
        bool skeleton = host_dir && *entries != '\0';
        gk_autofree char *copy = gk_strdup(entries);
        for (char *s3 = NULL, *e = strtok_r(copy, "/", &s3); e && skeleton;
             e = strtok_r(NULL, "/", &s3)) {
            gk_autofree char *child = gk_path_join(path, e);
            skeleton = false;
            for (size_t k = 0; k < dests->n && !skeleton; k++)
                skeleton = gk_path_within(dests->v[k], child);
        }
        ck_assert_msg(skeleton,
                      "%s: %s is readable inside (entries '%s'), the gate denies reading it",
                      L->label, path, entries);
    }
    if (w)
        ck_assert_msg(gate(p, GRANT_OP_WRITE, path) == GRANT_ALLOWED,
                      "%s: %s is writable inside, the gate denies writing it", L->label, path);
    for (size_t i = 0; want && want[i].rel; i++) {
        gk_autofree char *full = gk_path_join(L->root, want[i].rel);
        if (strcmp(full, path) != 0)
            continue;
        if (want[i].r >= 0)
            ck_assert_msg(r == want[i].r, "%s: read %s: %d, want %d", L->label, path, r,
                          want[i].r);
        if (want[i].w >= 0)
            ck_assert_msg(w == want[i].w, "%s: write %s: %d, want %d", L->label, path, w,
                          want[i].w);
    }
}

/* Every answer of the probe (out, consumed) within the gate's; the
 * expectations met. */
static void check_answers(const grant_policy *p, const launch *L, const expect *want,
                          const xexpect *xwant, const gk_strvec *dests, const char *movable,
                          char *out)
{
    size_t lines = 0, moves = 0;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strcmp(l, "ok") == 0)
            break;
        lines++;
        char *f[4] = {NULL};
        size_t nf = 0;
        for (char *s2 = NULL, *t = strtok_r(l, "\t", &s2); t && nf < 4;
             t = strtok_r(NULL, "\t", &s2))
            f[nf++] = t;
        ck_assert_msg(nf >= 2, "%s: probe line '%s'", L->label, l);
        const char *path = f[0];
        if (gk_has_prefix(f[1], "m=")) {
            int m = atoi(f[1] + 2);
            if (movable && strcmp(path, movable) == 0)
                ck_assert_msg(m == 1, "%s: %s (not pinned) cannot be renamed", L->label, path);
            else
                ck_assert_msg(m == 0, "%s: pinned dir %s can be renamed", L->label, path);
            moves++;
        } else if (gk_has_prefix(f[1], "u=")) {
            ck_assert_msg(atoi(f[1] + 2) == 0, "%s: the mask at %s can be unmounted", L->label,
                          path);
        } else if (gk_has_prefix(f[1], "x=")) {
            int x = atoi(f[1] + 2);
            for (size_t i = 0; xwant && xwant[i].rel; i++) {
                gk_autofree char *full = gk_path_join(L->root, xwant[i].rel);
                if (strcmp(full, path) == 0)
                    ck_assert_msg(x == xwant[i].x, "%s: exec %s: %d, want %d", L->label, path,
                                  x, xwant[i].x);
            }
        } else {
            check_access(p, L, want, dests, f, nf);
        }
    }
    ck_assert_uint_ge(lines, sizeof(probe_paths) / sizeof(*probe_paths));
    ck_assert_msg(!L->min_moves || moves >= L->min_moves, "%s: only %zu rename probes", L->label,
                  moves);
}

static void check_launch(const grant_policy *p, const launch *L, const expect *want,
                         const xexpect *xwant)
{
    gk_projection *pr = gk_projection_build(p);
    gk_emit_input in = {p, pr, "json", NULL};
    grant_diags *notes = grant_diags_new();
    gk_bwrap_plan plan;
    gk_bwrap_plan_build(&in, notes, &plan);
    bool unrestricted = !pr->fs_restricted;
    gk_autofree char *before = snapshot(L->root);

    /* /bin/true: the body runs. */
    {
        const char *cmd[] = {"/bin/true", NULL};
        gk_autofree char *out = NULL, *err = NULL;
        int st = run_plan(&plan, NULL, unrestricted, cmd, &out, &err);
        ck_assert_msg(st == 0, "%s: bwrap ... -- /bin/true exited %d:\n%s", L->label, st, err);
    }
    /* The probe. */
    gk_autofree char *movable = L->movable ? gk_path_join(L->root, L->movable) : NULL;
    gk_strvec args = {0}, dests = {0};
    probe_questions(pr, &plan, L, xwant, movable, &args);
    mount_dests(&plan, &dests);
    const char **cmd = gk_calloc(args.n + 1, sizeof(*cmd));
    for (size_t i = 0; i < args.n; i++)
        cmd[i] = args.v[i];
    gk_autofree char *out = NULL, *err = NULL;
    int st = run_plan(&plan, L->probe, unrestricted, cmd, &out, &err);
    free(cmd);
    ck_assert_msg(st == 0, "%s: the probe exited %d:\n%s\n%s", L->label, st, out, err);
    ck_assert_msg(gk_has_suffix(out, "ok\n"), "%s: the probe did not finish:\n%s", L->label,
                  out);
    check_answers(p, L, want, xwant, &dests, movable, out);
    gk_strvec_free(&dests);

    /* Nothing left behind. */
    remove_placeholders(&plan, L->label);
    gk_autofree char *after = snapshot(L->root);
    ck_assert_msg(strcmp(before, after) == 0, "%s: the tree changed:\nbefore:\n%s\nafter:\n%s",
                  L->label, before, after);
    gk_strvec_free(&args);
    gk_bwrap_plan_free(&plan);
    grant_diags_free(notes);
    gk_projection_free(pr);
}

/* The tree as it was before compiling (the run's placeholders removed). */
static void assert_pristine(const char *root, const char *pristine, const char *label)
{
    gk_autofree char *now = snapshot(root);
    ck_assert_msg(strcmp(now, pristine) == 0, "%s: the tree changed:\nbefore:\n%s\nafter:\n%s",
                  label, pristine, now);
}

START_TEST(test_launch_bundled)
{
    require_bwrap();
    gk_autofree char *work = fresh_dir("bwrap-probe");
    gk_autofree char *probe = build_probe(work);
    /* The bundled policies that are whole baselines (write the cwd and the
     * tempdir, deny the secrets); the library's tool grants and overlays
     * are not, and check_policies runs them for real. */
    static const char *const bases[] = {"base/minimal.grant", "base/reasonable.grant",
                                        "agent/coding.grant"};
    gk_strvec files = {0};
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        gk_autofree char *rel = gk_printf("policies/%s", bases[i]);
        gk_strvec_push_take(&files, gk_test_path(rel));
    }
    static const char *const cwds[] = {"proj", "home"};
    for (size_t f = 0; f < files.n; f++)
        for (size_t c = 0; c < 2; c++) {
            gk_autofree char *r = launch_dir("bwrap-tree");
            build_tree(r, probe);
            gk_autofree char *pristine = snapshot(r);
            grant_context *ctx = host_context(r, cwds[c], true, "/usr/local/bin:/usr/bin:/bin");
            grant_policy *p = compile_path(ctx, files.v[f]);
            gk_autofree char *label = gk_printf("%s (cwd %s)", files.v[f], cwds[c]);
            launch L = {r, probe, label, c == 0 ? "proj/src" : "home/notes.txt", c == 0 ? 2 : 4};
            /* Both bundled policies write the cwd and the tempdir, and deny
             * the secrets under ~ (visible when the cwd is home). */
            expect in_proj[] = {{"proj", 1, 1},
                                {"proj/src/main.c", 1, 1},
                                {"proj/gk-new", -1, 1},
                                {"proj/.git/hooks/pre-commit", 1, 0},
                                {"proj/.git/config", 1, 0},
                                {"proj/.git/hooks/post-merge", -1, 0},
                                /* The whole git dir: commondir, modules,
                                 * worktrees, a rebase's todo list. */
                                {"proj/.git/HEAD", 1, 0},
                                {"proj/.git/commondir", -1, 0},
                                {"tmp", 1, 1},
                                {"tmp/gk-new", -1, 1},
                                {"home/.ssh/id_rsa", 0, 0},
                                {"outside", 0, 0},
                                {"home/gk-new", 0, 0},
                                {NULL, 0, 0}};
            expect in_home[] = {{"home", 1, 1},
                                {"home/notes.txt", 1, 1},
                                {"home/gk-new", -1, 1},
                                {"home/.ssh", 0, 0},
                                {"home/.ssh/id_rsa", 0, 0},
                                {"home/.gnupg/pubring.kbx", 0, 0},
                                {"home/.netrc", 0, 0},
                                {"home/.aws", 0, 0},
                                {"home/.aws/credentials", 0, 0},
                                {"home/.config/gh", 0, 0},
                                {"home/.git/hooks/x", 0, 0},
                                {"tmp", 1, 1},
                                {"outside", 0, 0},
                                {"proj/gk-new", 0, 0},
                                {NULL, 0, 0}};
            check_launch(p, &L, c == 0 ? in_proj : in_home, NULL);
            assert_pristine(r, pristine, label);
            grant_policy_free(p);
            grant_context_free(ctx);
            rm_tree(r);
        }
    gk_strvec_free(&files);
    rm_tree(work);
}
END_TEST

START_TEST(test_launch_host_cases)
{
    require_bwrap();
    gk_autofree char *work = fresh_dir("bwrap-probe");
    gk_autofree char *probe = build_probe(work);
    for (size_t i = 0; i < sizeof(host_cases) / sizeof(*host_cases); i++) {
        const char *name = host_cases[i];
        gk_autofree char *r = launch_dir("bwrap-tree");
        build_tree(r, probe);
        gk_autofree char *file = host_policy(r, name);
        gk_autofree char *pristine = snapshot(r);
        gk_autofree char *path = gk_printf("%s/bin:/usr/bin:/bin", r);
        /* Every case shows the tempdir; not every one shows the project. */
        grant_context *ctx = host_context(r, "tmp", true, path);
        grant_policy *p = compile_path(ctx, file);
        gk_autofree char *label = gk_printf("host case %s", name);
        gk_autofree char *own = gk_printf("proj/%s.grant", name);
        bool pins = !strcmp(name, "kinds") || !strcmp(name, "readonly") ||
                    !strcmp(name, "unrestricted");
        launch L = {r, probe, label, "tmp/scratch", pins ? 2 : 1};
        expect none[] = {{NULL, 0, 0}};
        expect kinds[] = {{"proj/secret.txt", 0, 0}, {"proj/private/data", 0, 0},
                          {"proj/private", 0, 0},    {"proj/absent/deeper", 0, 0},
                          {"proj/absent/deeper/y", 0, 0}, {"proj/private2/x", 0, 0},
                          {"proj/src/main.c", 1, 1}, {"ro/file", 1, 0},
                          {"ro/absent", 0, 0},       {own, 1, 0},
                          {NULL, 0, 0}};
        expect alias[] = {{"alias/secret", 0, 0}, {"real/secret", 0, 0},
                          {"alias/pub", 1, 0},    {"real/pub", 1, 0},
                          {NULL, 0, 0}};
        expect readonly[] = {{"proj/.git/hooks/pre-commit", 1, 0},
                             {"proj/.git/hooks/post-merge", 0, 0},
                             {"proj/.git/config", 1, 0},
                             {"proj/.git/HEAD", 1, 1},
                             {"proj/vendor/lib.c", 1, 0},
                             {"proj/vendor/keys/k", 0, 0},
                             {"proj/absent-ro/x", 0, 0},
                             {"proj/src/main.c", 1, 1},
                             {own, 1, 0},
                             {NULL, 0, 0}};
        expect nested[] = {{"data/out/f", 1, 0},    {"data/out/gk-new", 0, 0},
                           {"data/pub", 1, 0},      {"data/private/p", 0, 0},
                           {"home/notes.txt", 1, 0}, {"home/.ssh/id_rsa", 0, 0},
                           {"tmp/scratch", 1, 1},   {NULL, 0, 0}};
        expect unrestricted[] = {{"home/.ssh/id_rsa", 0, 0}, {"home/.netrc", 0, 0},
                                 {"home/.aws", 0, 0},        {"home/.aws/credentials", 0, 0},
                                 {"home/.bashrc", 1, 0},     {"proj/.git/config", 1, 0},
                                 {"home/notes.txt", 1, 1},   {"proj/src/main.c", 1, 1},
                                 {"outside", 0, 1},          {NULL, 0, 0}};
        xexpect vetoed_x[] = {{"bin/victim", 0}, {"bin/sh", 0}, {"bin/okprog", 1}, {NULL, 0}};
        const expect *want = none;
        const xexpect *xwant = NULL;
        if (!strcmp(name, "kinds"))
            want = kinds;
        else if (!strcmp(name, "alias"))
            want = alias;
        else if (!strcmp(name, "readonly"))
            want = readonly;
        else if (!strcmp(name, "nested"))
            want = nested;
        else if (!strcmp(name, "unrestricted"))
            want = unrestricted;
        else if (!strcmp(name, "vetoed"))
            xwant = vetoed_x;
        check_launch(p, &L, want, xwant);
        assert_pristine(r, pristine, label);
        grant_policy_free(p);
        grant_context_free(ctx);
        rm_tree(r);
    }
    rm_tree(work);
}
END_TEST

/* ---- grantc emit ------------------------------------------------------------ */

static int grantc(const char *const *args, char **out, char **err)
{
    size_t n = 0;
    while (args[n])
        n++;
    char **argv = gk_calloc(n + 2, sizeof(*argv));
    argv[0] = gk_path_join(gk_test_builddir(), "grantc");
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    int st = gk_test_run(argv, NULL, out, err);
    free(argv[0]);
    free(argv);
    return st;
}

#define LINUX_CTX                                                                          \
    "--target", "linux", "--home", "/home/u", "--user", "u", "--cwd", "/w", "--tempdir",   \
        "/tmp", "--path", "/usr/bin:/bin", "--policy-path", "/nonexistent"

START_TEST(test_cli_emit)
{
    gk_autofree char *pol = gk_test_path("policies/base/reasonable.grant");
    gk_autofree char *want_json = data_path("golden/policies-base-reasonable.bwrap.json");
    gk_autofree char *want_sh = data_path("golden/policies-base-reasonable.bwrap.sh");
    gk_autofree char *want_ll = data_path("golden/policies-base-reasonable.landlock.json");
    gk_autofree char *json = gk_test_read(want_json, NULL);
    gk_autofree char *sh = gk_test_read(want_sh, NULL);
    gk_autofree char *ll = gk_test_read(want_ll, NULL);
    ck_assert_ptr_nonnull(json);
    {
        const char *a[] = {"emit", LINUX_CTX, "--backend", "bwrap", "--format", "json", pol,
                           NULL};
        gk_autofree char *out = NULL, *err = NULL;
        ck_assert_int_eq(grantc(a, &out, &err), 0);
        ck_assert_msg(strcmp(out, json) == 0, "emit --format json differs from the golden");
        ck_assert_ptr_nonnull(strstr(err, "bwrap: note: "));
    }
    {
        const char *a[] = {"emit", "--backend=bwrap", LINUX_CTX, pol, NULL};
        gk_autofree char *out = NULL, *err = NULL;
        ck_assert_int_eq(grantc(a, &out, &err), 0);
        ck_assert_msg(strcmp(out, sh) == 0, "emit (shell) differs from the golden");
    }
    {
        const char *a[] = {"emit", LINUX_CTX, "-b", "landlock", pol, NULL};
        gk_autofree char *out = NULL, *err = NULL;
        ck_assert_int_eq(grantc(a, &out, &err), 0);
        ck_assert_msg(strcmp(out, ll) == 0, "emit --backend landlock differs from the golden");
    }
    struct {
        const char *args[24];
        const char *msg;
    } bad[] = {
        {{"emit", LINUX_CTX, pol, NULL}, "missing --backend"},
        {{"emit", LINUX_CTX, "--backend", "nope", pol, NULL}, "unknown backend 'nope'"},
        {{"emit", LINUX_CTX, "--backend", "bwrap", "--format", "yaml", pol, NULL},
         "no format 'yaml'"},
        {{"emit", LINUX_CTX, "--backend", "bwrap", NULL}, "missing FILE"},
        {{"emit", "--target", "macos", "--backend", "bwrap", pol, NULL}, "cannot render"},
        {{"emit", LINUX_CTX, "--backend", "bwrap", "/nonexistent/x.grant", NULL}, "x.grant"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        gk_autofree char *out = NULL, *err = NULL;
        ck_assert_int_eq(grantc(bad[i].args, &out, &err), 2);
        ck_assert_str_eq(out, "");
        ck_assert_msg(strstr(err, bad[i].msg), "case %zu: '%s' not in:\n%s", i, bad[i].msg, err);
    }
    {
        const char *a[] = {"emit", "--help", NULL};
        gk_autofree char *out = NULL, *err = NULL;
        ck_assert_int_eq(grantc(a, &out, &err), 0);
        ck_assert_ptr_nonnull(strstr(out, "argv0"));
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bwrap");
    TCase *t = tcase_create("emit");
    tcase_add_unchecked_fixture(t, run_dirs_setup, run_dirs_teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_offline_goldens);
    tcase_add_test(t, test_refusals);
    tcase_add_test(t, test_landlock_host_abi);
    tcase_add_test(t, test_shell_quoting);
    tcase_add_test(t, test_host_goldens);
    tcase_add_test(t, test_cli_emit);
    suite_add_tcase(s, t);
    TCase *l = tcase_create("launch");
    tcase_add_unchecked_fixture(l, run_dirs_setup, run_dirs_teardown);
    tcase_set_timeout(l, 300);
    tcase_add_test(l, test_launch_bundled);
    tcase_add_test(l, test_launch_host_cases);
    suite_add_tcase(s, l);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
