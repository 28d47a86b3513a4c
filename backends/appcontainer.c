/* appcontainer.c - the AppContainer emitter (backends.md "Windows"): the
 * capability SIDs an AppContainer process is started with, and the ACL
 * plan that makes the filesystem answer those SIDs as the gate does.
 * Formats: "json" (the plan, for audits and runtimes) and "powershell" (a
 * script that applies the plan idempotently and removes it with -Revert).
 *
 * How the plan expresses the projection. An AppContainer reaches a file only
 * through ACEs naming its own SID or one of its capability SIDs (plus what
 * Windows grants every AppContainer: the system directories), and writes
 * only to objects labelled Low. Each (canonical path, kind) has its own
 * capability, grantkit.fs.<kind>.<hex>:
 *   rw    writable region: allow READ|WRITE|EXECUTE|DELETE, OI|CI, Low label;
 *   ro    readable region: allow READ|EXECUTE, OI|CI; a readonly entry (or
 *         a policy source): deny every write right, OI|CI (no allow: a
 *         readonly entry outside every region must not become readable);
 *   deny  deny entry: deny 0x1F01FF, OI|CI;
 *   pinned dir (no capability of its own): deny DELETE to the capability of
 *         its writable region, not inherited, so renaming it cannot carry a
 *         protected entry away while its contents stay writable.
 * Windows orders explicit ACEs before inherited ones, so an explicit allow
 * deeper in the tree would beat an inherited deny: a region inside a deny
 * entry therefore gets no allow at all, and a writable region inside a
 * readonly entry is granted read only. Every allow is thus dominated by the
 * denies that cover it, which keeps the conservatism invariant (a backend
 * never admits what the gate denies); the test suite checks it with a model
 * of the Windows access check.
 *
 * Offline nothing can be lstat'ed: every ACE is planned as for a directory
 * (OI|CI) and the script drops inheritance for a path that is a file when
 * it runs; absent deny/readonly names inside a writable region are occupied
 * by an empty directory (a placeholder) so the command cannot create them.
 */
#include "backends/backend.h"
#include "common/json.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Access masks (winnt.h). */
#define GK_FILE_GENERIC_READ 0x120089u
#define GK_FILE_GENERIC_WRITE 0x120116u
#define GK_FILE_GENERIC_EXECUTE 0x1200a0u
#define GK_DELETE 0x10000u
#define GK_FILE_ALL_ACCESS 0x1f01ffu
#define GK_MASK_RW \
    (GK_FILE_GENERIC_READ | GK_FILE_GENERIC_WRITE | GK_FILE_GENERIC_EXECUTE | GK_DELETE)
#define GK_MASK_RO (GK_FILE_GENERIC_READ | GK_FILE_GENERIC_EXECUTE)
/* Every right that changes an object or its name: WRITE_DATA, APPEND_DATA,
 * WRITE_EA, DELETE_CHILD, WRITE_ATTRIBUTES, DELETE, WRITE_DAC, WRITE_OWNER.
 * Not SYNCHRONIZE or READ_CONTROL, which every read asks for too. */
#define GK_MASK_NO_WRITE 0xd0156u

#define LOW_LABEL_SID "S-1-16-4096"
#define LABEL_SDDL "(ML;OICI;NW;;;" LOW_LABEL_SID ")"
#define NOTE_FILE "appcontainer"

typedef struct ac_ace {
    bool deny;
    unsigned mask;
    bool inherit; /* OI|CI on a directory */
} ac_ace;

typedef struct ac_entry {
    char *path;         /* surface spelling (the real one when there is none) */
    char *real;         /* canonical spelling: names the capability */
    const char *kind;   /* "rw", "ro", "deny", "pinned", "implicit" */
    char *cap;          /* capability name; for pinned, the region's; NULL for implicit */
    char *sid;
    char *group_sid;
    ac_ace aces[2];
    size_t naces;
    bool label;         /* Low mandatory label (writable regions) */
    bool placeholder;   /* created empty when absent: the command could create it */
} ac_entry;

typedef struct ac_plan {
    ac_entry *v;
    size_t n, cap;
} ac_plan;

typedef struct ac_note {
    gk_severity sev;
    char *msg;
} ac_note;

typedef struct ac_ctx {
    const gk_emit_input *in;
    ac_plan plan;
    gk_regions rw;      /* writable regions granted write (not under readonly) */
    ac_note notes[16];
    size_t nnotes;
    char *profile;
    char *profile_sid;
} ac_ctx;

static char *hex16(const char *s)
{
    static const char digits[] = "0123456789abcdef";
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, strlen(s), (const uint8_t *)s);
    sha256_digest(&h, sizeof(d), d);
    char *hex = gk_malloc(33);
    for (size_t i = 0; i < 16; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[32] = '\0';
    return hex;
}

/* A new entry for (real, kind). Entries naming the same (real, kind) are
 * merged after sorting: one capability per (canonical path, kind) however
 * many rules name it. The pointer is valid until the next entry_new. */
static ac_entry *entry_new(ac_ctx *c, const char *path, const char *real, const char *kind)
{
    ac_entry e = {0};
    e.path = gk_strdup(path ? path : real);
    e.real = gk_strdup(real);
    e.kind = kind;
    GK_VEC_PUSH(c->plan.v, c->plan.n, c->plan.cap, e);
    return &c->plan.v[c->plan.n - 1];
}

/* The capability of (real, kind) and its SIDs. */
static void capability_of(const char *real, const char *kind, char **name, char **sid,
                          char **group_sid)
{
    gk_autofree char *hex = hex16(real);
    gk_buf b = {0};
    gk_buf_puts(&b, "grantkit.fs.");
    gk_buf_puts(&b, kind);
    gk_buf_putc(&b, '.');
    gk_buf_puts(&b, hex);
    *name = gk_buf_steal(&b, NULL);
    /* Capability names are ASCII: derivation cannot fail. */
    if (grant_sid_capability(*name, sid, group_sid) < 0)
        abort();
}

static void add_ace(ac_entry *e, bool deny, unsigned mask, bool inherit)
{
    for (size_t i = 0; i < e->naces; i++)
        if (e->aces[i].deny == deny && e->aces[i].mask == mask && e->aces[i].inherit == inherit)
            return;
    if (e->naces < sizeof(e->aces) / sizeof(*e->aces))
        e->aces[e->naces++] = (ac_ace){deny, mask, inherit};
    else
        abort(); /* every kind plans at most one allow and one deny */
}

static bool within_strvec(const gk_strvec *v, const char *p)
{
    for (size_t i = 0; i < v->n; i++)
        if (gk_path_within(p, v->v[i]))
            return true;
    return false;
}

/* Real spellings suffice: a Windows surface spelling differs from its real
 * one only by case, which names the same file there (and asking for both
 * spellings would scan every entry). */
static bool under_deny(const gk_projection *pr, const char *real)
{
    return gk_regions_contain(&pr->deny, real, false);
}

static bool under_readonly(const gk_projection *pr, const char *real)
{
    return gk_regions_contain(&pr->readonly, real, false) || within_strvec(&pr->protect, real);
}

static void note(ac_ctx *c, gk_severity sev, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(ac_ctx *c, gk_severity sev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = gk_vprintf(fmt, ap);
    va_end(ap);
    if (c->nnotes < sizeof(c->notes) / sizeof(*c->notes))
        c->notes[c->nnotes++] = (ac_note){sev, msg};
    else
        free(msg);
}

static int region_real_cmp(const void *key, const void *elem)
{
    return gk_strcmp_bytes(key, ((const gk_region *)elem)->p.real);
}

/* The writable region that contains p, or NULL: each ancestor of p looked
 * up in c->rw (sorted by real, as the projection's write list is). */
static const gk_region *rw_region_of(const ac_ctx *c, const char *p)
{
    if (!c->rw.n)
        return NULL;
    gk_autofree char *a = gk_strdup(p);
    for (;;) {
        const gk_region *r = bsearch(a, c->rw.v, c->rw.n, sizeof(*c->rw.v), region_real_cmp);
        if (r)
            return r;
        char *slash = strrchr(a, '/');
        if (!slash)
            return NULL;
        if (slash == a) {
            /* "/x" -> "/", then stop. */
            if (!a[1])
                return NULL;
            a[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

static void plan_regions(ac_ctx *c)
{
    const gk_projection *pr = c->in->proj;
    if (!pr->fs_restricted)
        return;
    for (size_t i = 0; i < pr->write.n; i++) {
        const gk_region *w = &pr->write.v[i];
        if (under_deny(pr, w->p.real))
            continue; /* the deny above it decides, and an allow here would beat it */
        if (under_readonly(pr, w->p.real)) {
            add_ace(entry_new(c, w->p.path, w->p.real, "ro"), false, GK_MASK_RO, true);
            continue;
        }
        ac_entry *e = entry_new(c, w->p.path, w->p.real, "rw");
        add_ace(e, false, GK_MASK_RW, true);
        e->label = true;
        gk_regions_add(&c->rw, &w->p, w->origin);
    }
    for (size_t i = 0; i < pr->read.n; i++) {
        const gk_region *r = &pr->read.v[i];
        /* Writable regions are readable regions too: planned above. */
        if (gk_regions_contain(&pr->write, r->p.real, false) || under_deny(pr, r->p.real))
            continue;
        add_ace(entry_new(c, r->p.path, r->p.real, "ro"), false, GK_MASK_RO, true);
    }
}

static void plan_denies(ac_ctx *c)
{
    const gk_projection *pr = c->in->proj;
    for (size_t i = 0; i < pr->deny.n; i++) {
        const gk_region *d = &pr->deny.v[i];
        ac_entry *e = entry_new(c, d->p.path, d->p.real, "deny");
        add_ace(e, true, GK_FILE_ALL_ACCESS, true);
        e->placeholder = rw_region_of(c, d->p.real) != NULL;
    }
    for (size_t i = 0; i < pr->readonly.n; i++) {
        const gk_region *o = &pr->readonly.v[i];
        if (under_deny(pr, o->p.real))
            continue;
        ac_entry *e = entry_new(c, o->p.path, o->p.real, "ro");
        add_ace(e, true, GK_MASK_NO_WRITE, true);
        e->placeholder = rw_region_of(c, o->p.real) != NULL;
    }
    for (size_t i = 0; i < pr->protect.n; i++) {
        const char *s = pr->protect.v[i];
        if (under_deny(pr, s))
            continue;
        ac_entry *e = entry_new(c, NULL, s, "ro");
        add_ace(e, true, GK_MASK_NO_WRITE, true);
        e->placeholder = rw_region_of(c, s) != NULL;
    }
    for (size_t i = 0; i < pr->pinned.n; i++) {
        const char *p = pr->pinned.v[i];
        const gk_region *w = rw_region_of(c, p);
        /* Unrestricted fs pins up to the root, but an AppContainer holds no
         * DELETE outside its writable regions: nothing to pin there. */
        if (!w || under_deny(pr, p))
            continue;
        ac_entry *e = entry_new(c, NULL, p, "pinned");
        /* The region's own capability holds the DELETE to take away. */
        capability_of(w->p.real, "rw", &e->cap, &e->sid, &e->group_sid);
        free(e->group_sid);
        e->group_sid = NULL;
        add_ace(e, true, GK_DELETE, false);
    }
}

static void plan_implicit(ac_ctx *c)
{
    const gk_implicit *im = &c->in->proj->implicit;
    for (size_t i = 0; i < im->read.n; i++) {
        gk_autofree char *real = gk_canonicalize(c->in->policy->ctx, im->read.v[i]);
        entry_new(c, im->read.v[i], real ? real : im->read.v[i], "implicit");
    }
}

static int entry_cmp(const void *a, const void *b)
{
    const ac_entry *x = a, *y = b;
    int r = gk_strcmp_bytes(x->real, y->real);
    if (!r)
        r = strcmp(x->kind, y->kind);
    return r ? r : gk_strcmp_bytes(x->path, y->path);
}

static void entry_free(ac_entry *e)
{
    free(e->path);
    free(e->real);
    free(e->cap);
    free(e->sid);
    free(e->group_sid);
}

/* Sort, merge entries of the same (real, kind) (the first spelling wins),
 * and give each fs entry its capability. */
static void plan_finish(ac_ctx *c)
{
    ac_plan *pl = &c->plan;
    if (pl->n > 1)
        qsort(pl->v, pl->n, sizeof(*pl->v), entry_cmp);
    size_t w = 0;
    for (size_t i = 0; i < pl->n; i++) {
        ac_entry *e = &pl->v[i];
        if (w > 0 && strcmp(pl->v[w - 1].real, e->real) == 0 &&
            strcmp(pl->v[w - 1].kind, e->kind) == 0) {
            ac_entry *keep = &pl->v[w - 1];
            for (size_t k = 0; k < e->naces; k++)
                add_ace(keep, e->aces[k].deny, e->aces[k].mask, e->aces[k].inherit);
            keep->label |= e->label;
            keep->placeholder |= e->placeholder;
            entry_free(e);
            continue;
        }
        pl->v[w++] = *e;
    }
    pl->n = w;
    for (size_t i = 0; i < pl->n; i++) {
        ac_entry *e = &pl->v[i];
        if (!e->cap && strcmp(e->kind, "implicit") != 0)
            capability_of(e->real, e->kind, &e->cap, &e->sid, &e->group_sid);
    }
}

static bool any_subcommands(const grant_policy *p)
{
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_layer *f = p->stack.v[i];
        if (!f->has_exec)
            continue;
        const gk_admits *lists[2] = {&f->exec.names, &f->exec.files};
        for (int l = 0; l < 2; l++)
            for (size_t k = 0; k < lists[l]->n; k++)
                if (!lists[l]->v[k].all)
                    return true;
    }
    return false;
}

static bool any_exec(const grant_policy *p)
{
    for (size_t i = 0; i < p->stack.n; i++)
        if (p->stack.v[i]->has_exec)
            return true;
    return false;
}

/* What the plan cannot say, in the order a reader needs it. */
static void fidelity_notes(ac_ctx *c)
{
    const gk_projection *pr = c->in->proj;
    const grant_policy *p = c->in->policy;
    size_t stamped = 0, placeholders = 0, deny_in_ro = 0, driveless = 0;
    bool any_rw = false;
    for (size_t i = 0; i < c->plan.n; i++) {
        const ac_entry *e = &c->plan.v[i];
        stamped += e->naces > 0;
        /* Canonical Windows paths are case-folded: "c:/..." */
        driveless += e->naces > 0 && !(e->real[0] >= 'a' && e->real[0] <= 'z' &&
                                       e->real[1] == ':' && e->real[2] == '/');
        placeholders += e->placeholder;
        any_rw |= e->label;
        if (strcmp(e->kind, "deny") == 0 && !e->placeholder && pr->fs_restricted &&
            gk_regions_contain(&pr->read, e->real, false))
            deny_in_ro++;
    }
    if (any_exec(p))
        note(c, GK_WARNING,
             "exec rules have no OS filter here: an AppContainer can run any program it can "
             "read, so admission and vetoes are enforced only by the in-process gate");
    if (any_subcommands(p))
        note(c, GK_WARNING,
             "argument-level rules (Subcommands) are enforced only by the gate, never by "
             "the OS");
    if (!pr->has_implicit)
        note(c, GK_WARNING,
             "--no-implicit cannot be enforced: Windows grants every AppContainer read access "
             "to the system directories, and the plan cannot take it away");
    if (!pr->fs_restricted)
        note(c, GK_NOTE,
             "the policy does not restrict the filesystem, but an AppContainer reaches only "
             "what its capabilities are granted and the system directories: narrower than "
             "the policy");
    if (stamped)
        note(c, GK_NOTE,
             "a rename within a volume keeps the ACEs of the old place: an object an "
             "unconfined process moves out of a granted region stays reachable, and one moved "
             "into a denied region keeps its old grants until inheritance is reapplied");
    if (stamped)
        note(c, GK_NOTE,
             "offline, files cannot be told from directories: every ACE is planned with OI|CI "
             "inheritance, and the script drops the inheritance flags for a path that is a "
             "file");
    if (placeholders)
        note(c, GK_NOTE,
             "%zu denied or readonly name%s inside a writable region: when absent, the script "
             "creates an empty directory there (recorded; -Revert removes it if still empty) "
             "so the command cannot create the name",
             placeholders, placeholders == 1 ? "" : "s");
    if (driveless)
        note(c, GK_NOTE,
             "%zu planned path%s name%s no drive (like /usr): Windows takes %s on the drive "
             "that is current when the script runs",
             driveless, driveless == 1 ? "" : "s", driveless == 1 ? "s" : "",
             driveless == 1 ? "it" : "them");
    if (deny_in_ro)
        note(c, GK_NOTE,
             "%zu deny entr%s inside a read-only region: one that is absent when the plan is "
             "applied gets no ACE, and if it is created later it inherits the region's read "
             "grant; apply the plan again once it exists",
             deny_in_ro, deny_in_ro == 1 ? "y" : "ies");
    if (any_rw)
        note(c, GK_NOTE,
             "writable regions are labelled Low (no-write-up) so the AppContainer can write "
             "there; other Low-integrity processes of the user can then write there too");
    if (pr->net)
        note(c, GK_NOTE,
             "net: internetClient and privateNetworkClientServer do not reach the loopback "
             "interface (Windows network isolation): narrower than the policy");
    if (pr->net_list)
        note(c, GK_WARNING,
             "net: Windows cannot restrict an AppContainer by destination name: internetClient "
             "lets the command reach every internet destination, not only the %zu allowed "
             "patterns (wider than the policy; run it behind a proxy applying the same rules), "
             "and no private or loopback address (narrower)",
             pr->net_allow.n);
    note(c, GK_NOTE,
         "the AppContainer's own profile folder (%%LOCALAPPDATA%%\\Packages\\%s) is writable "
         "by the command, as a private scratch directory",
         c->profile);
}

static void build(ac_ctx *c)
{
    gk_autofree char *digest = gk_policy_digest(c->in->policy);
    c->profile = gk_printf("grantkit.%.12s", digest);
    if (grant_sid_appcontainer(c->profile, &c->profile_sid) < 0)
        abort(); /* an ASCII name cannot fail */
    plan_regions(c);
    plan_denies(c);
    plan_implicit(c);
    plan_finish(c);
    fidelity_notes(c);
}

static void ctx_free(ac_ctx *c)
{
    for (size_t i = 0; i < c->plan.n; i++)
        entry_free(&c->plan.v[i]);
    free(c->plan.v);
    for (size_t i = 0; i < c->rw.n; i++) {
        gk_fpath_free(&c->rw.v[i].p);
        free(c->rw.v[i].origin);
    }
    free(c->rw.v);
    for (size_t i = 0; i < c->nnotes; i++)
        free(c->notes[i].msg);
    free(c->profile);
    free(c->profile_sid);
}

/* (A|D;[OICI];0xMASK;;;SID), without printf: a plan writes one per ACE. */
static char *ace_sddl(const ac_ace *a, const char *sid)
{
    char hex[9];
    size_t n = sizeof(hex);
    unsigned m = a->mask;
    do {
        hex[--n] = "0123456789abcdef"[m & 0xf];
        m >>= 4;
    } while (m);
    gk_buf b = {0};
    gk_buf_puts(&b, a->deny ? "(D;" : "(A;");
    gk_buf_puts(&b, a->inherit ? "OICI;0x" : ";0x");
    gk_buf_add(&b, hex + n, sizeof(hex) - n);
    gk_buf_puts(&b, ";;;");
    gk_buf_puts(&b, sid);
    gk_buf_putc(&b, ')');
    return gk_buf_steal(&b, NULL);
}

/* ---- capabilities -------------------------------------------------------- */

typedef struct ac_cap {
    const char *name, *sid, *group_sid, *kind, *path;
} ac_cap;

static int cap_cmp(const void *a, const void *b)
{
    return gk_strcmp_bytes(((const ac_cap *)a)->name, ((const ac_cap *)b)->name);
}

static const char *const net_caps[] = {"internetClient", "privateNetworkClientServer"};

/* Every capability the process must hold, sorted by name. The network ones
 * are resolved into *owned (caller frees each string). */
static ac_cap *capabilities(const ac_ctx *c, size_t *n, gk_strvec *owned)
{
    ac_cap *v = gk_calloc(c->plan.n + 2, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < c->plan.n; i++) {
        const ac_entry *e = &c->plan.v[i];
        if (e->group_sid)
            v[k++] = (ac_cap){e->cap, e->sid, e->group_sid, e->kind, e->path};
    }
    /* A destination list: internetClient only (network.md §3). */
    size_t nnet = c->in->proj->net ? 2 : c->in->proj->net_list ? 1 : 0;
    if (nnet)
        for (size_t i = 0; i < nnet; i++) {
            char *sid = NULL, *group = NULL;
            if (grant_sid_capability(net_caps[i], &sid, &group) < 0)
                abort();
            gk_strvec_push_take(owned, sid);
            gk_strvec_push_take(owned, group);
            v[k++] = (ac_cap){net_caps[i], owned->v[owned->n - 2], owned->v[owned->n - 1],
                              "net", NULL};
        }
    qsort(v, k, sizeof(*v), cap_cmp);
    *n = k;
    return v;
}

/* ---- json ------------------------------------------------------------------ */

static const char *sev_name(gk_severity s)
{
    return s == GK_ERROR ? "error" : s == GK_WARNING ? "warning" : "note";
}

static void put_string(gk_json_out *j, const char *key, const char *value)
{
    gk_json_key(j, key);
    gk_json_string(j, value);
}

/* Streamed (json_out.h), keys in bytewise order, two-space indentation:
 * a plan for a large policy is mostly strings. */
static void emit_json(const ac_ctx *c, gk_buf *b)
{
    gk_json_out j;
    gk_json_init(&j, b, true);
    gk_json_object(&j);
    gk_json_key(&j, "capabilities");
    gk_strvec owned = {0};
    size_t ncaps = 0;
    ac_cap *caps = capabilities(c, &ncaps, &owned);
    gk_json_array(&j);
    for (size_t i = 0; i < ncaps; i++) {
        gk_json_object(&j);
        put_string(&j, "group_sid", caps[i].group_sid);
        put_string(&j, "kind", caps[i].kind);
        put_string(&j, "name", caps[i].name);
        put_string(&j, "path", caps[i].path);
        put_string(&j, "sid", caps[i].sid);
        gk_json_end(&j);
    }
    gk_json_end(&j);
    free(caps);
    gk_strvec_free(&owned);

    gk_json_key(&j, "grantkit");
    gk_json_int(&j, 1);
    put_string(&j, "kind", "appcontainer-plan");
    gk_json_key(&j, "net");
    if (c->in->proj->net_list) {
        /* As the IR's projection writes it: the destinations the policy
         * means, which internetClient only approximates (see notes). */
        gk_json_object(&j);
        static const char *const keys[2] = {"allow", "deny"};
        const gk_strvec *lists[2] = {&c->in->proj->net_allow, &c->in->proj->net_deny};
        for (int k = 0; k < 2; k++) {
            gk_json_key(&j, keys[k]);
            gk_json_array(&j);
            for (size_t i = 0; i < lists[k]->n; i++)
                gk_json_string(&j, lists[k]->v[i]);
            gk_json_end(&j);
        }
        gk_json_end(&j);
    } else {
        gk_json_bool(&j, c->in->proj->net);
    }

    gk_json_key(&j, "notes");
    gk_json_array(&j);
    for (size_t i = 0; i < c->nnotes; i++) {
        gk_json_object(&j);
        put_string(&j, "message", c->notes[i].msg);
        put_string(&j, "severity", sev_name(c->notes[i].sev));
        gk_json_end(&j);
    }
    gk_json_end(&j);

    gk_json_key(&j, "plan");
    gk_json_array(&j);
    for (size_t i = 0; i < c->plan.n; i++) {
        const ac_entry *e = &c->plan.v[i];
        gk_json_object(&j);
        gk_json_key(&j, "aces");
        gk_json_array(&j);
        for (size_t k = 0; k < e->naces; k++) {
            gk_autofree char *sddl = ace_sddl(&e->aces[k], e->sid);
            gk_json_string(&j, sddl);
        }
        gk_json_end(&j);
        put_string(&j, "capability", e->cap);
        put_string(&j, "kind", e->kind);
        put_string(&j, "label", e->label ? LABEL_SDDL : NULL);
        put_string(&j, "path", e->path);
        gk_json_key(&j, "placeholder");
        gk_json_bool(&j, e->placeholder);
        put_string(&j, "real", e->real);
        gk_json_key(&j, "stamped");
        gk_json_bool(&j, e->naces);
        gk_json_end(&j);
    }
    gk_json_end(&j);

    put_string(&j, "profile", c->profile);
    put_string(&j, "sid", c->profile_sid);
    gk_json_end(&j);
    gk_buf_putc(b, '\n');
}

/* ---- powershell -------------------------------------------------------------- */

/* A single-quoted PowerShell literal of a Windows path: '/' becomes '\';
 * a quote character doubles, and PowerShell takes the typographic quotes
 * U+2018..U+201B for quotes too. */
static void ps_path(gk_buf *b, const char *s)
{
    gk_buf_putc(b, '\'');
    for (const char *p = s; *p; p++) {
        const unsigned char *u = (const unsigned char *)p;
        if (*p == '/') {
            gk_buf_putc(b, '\\');
        } else if (*p == '\'') {
            gk_buf_puts(b, "''");
        } else if (u[0] == 0xE2 && u[1] == 0x80 && u[2] >= 0x98 && u[2] <= 0x9B) {
            gk_buf_add(b, p, 3);
            gk_buf_add(b, p, 3);
            p += 2;
        } else {
            gk_buf_putc(b, *p);
        }
    }
    gk_buf_putc(b, '\'');
}

/* Text for a comment line: control characters would end the comment. */
static void ps_comment_text(gk_buf *b, const char *s)
{
    for (const char *p = s; *p; p++)
        gk_buf_putc(b, (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
}

/* "#   LEAD TEXT" wrapped before 79 columns. */
static void ps_comment_wrapped(gk_buf *b, const char *lead, const char *text)
{
    gk_buf_printf(b, "#   %s", lead);
    size_t col = 4 + strlen(lead);
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t w = strcspn(p, " ");
        if (col + 1 + w > 78) {
            gk_buf_puts(b, "\n#     ");
            col = 7;
        } else {
            gk_buf_putc(b, ' ');
            col++;
        }
        gk_buf_add(b, p, w);
        col += w;
        p += w;
    }
    gk_buf_putc(b, '\n');
}

static const char ps_body[] =
    "Set-StrictMode -Version 2.0\n"
    "$ErrorActionPreference = 'Stop'\n"
    "$SidType = [System.Security.Principal.SecurityIdentifier]\n"
    "\n"
    "# The rule an ACE of the plan stands for. Inheritance (OI|CI) only on a\n"
    "# directory: .NET refuses inheritance flags on a file.\n"
    "function New-GkRule($Ace) {\n"
    "    $flags = [System.Security.AccessControl.InheritanceFlags]::None\n"
    "    if ($Ace.Inherit -and (Test-Path -LiteralPath $Ace.Path -PathType Container)) {\n"
    "        $flags = [System.Security.AccessControl.InheritanceFlags]'ContainerInherit, "
    "ObjectInherit'\n"
    "    }\n"
    "    $sid = New-Object System.Security.Principal.SecurityIdentifier($Ace.Sid)\n"
    "    $rights = [enum]::ToObject([System.Security.AccessControl.FileSystemRights], "
    "$Ace.Mask)\n"
    "    $type = [System.Security.AccessControl.AccessControlType]$Ace.Type\n"
    "    New-Object System.Security.AccessControl.FileSystemAccessRule($sid, $rights, $flags,\n"
    "        [System.Security.AccessControl.PropagationFlags]::None, $type)\n"
    "}\n"
    "\n"
    "# Is there already an explicit ACE for the same SID, type and inheritance\n"
    "# that grants (or denies) at least these rights?\n"
    "function Test-GkRule($Acl, $Rule) {\n"
    "    foreach ($r in $Acl.GetAccessRules($true, $false, $SidType)) {\n"
    "        if ($r.IdentityReference.Value -eq $Rule.IdentityReference.Value -and\n"
    "            $r.AccessControlType -eq $Rule.AccessControlType -and\n"
    "            $r.InheritanceFlags -eq $Rule.InheritanceFlags -and\n"
    "            $r.PropagationFlags -eq $Rule.PropagationFlags -and\n"
    "            (([int]$r.FileSystemRights -band [int]$Rule.FileSystemRights) -eq "
    "[int]$Rule.FileSystemRights)) {\n"
    "            return $true\n"
    "        }\n"
    "    }\n"
    "    return $false\n"
    "}\n"
    "\n"
    "# Occupy each absent name (and its absent parents) with an empty directory,\n"
    "# recording what was created so -Revert can remove it.\n"
    "function Add-GkPlaceholders {\n"
    "    foreach ($p in $Placeholders) {\n"
    "        $missing = @()\n"
    "        $q = $p\n"
    "        while ($q -and -not (Test-Path -LiteralPath $q)) {\n"
    "            $missing = @($q) + $missing\n"
    "            $q = Split-Path -Parent $q\n"
    "        }\n"
    "        foreach ($m in $missing) {\n"
    "            [void][System.IO.Directory]::CreateDirectory((Split-Path -Parent $StateFile))\n"
    "            [void][System.IO.Directory]::CreateDirectory($m)\n"
    "            Add-Content -LiteralPath $StateFile -Value $m -Encoding UTF8\n"
    "            Write-Host \"placeholder created: $m\"\n"
    "        }\n"
    "    }\n"
    "}\n"
    "\n"
    "function Add-GkAces {\n"
    "    foreach ($ace in $Aces) {\n"
    "        if (-not (Test-Path -LiteralPath $ace.Path)) {\n"
    "            Write-Warning \"absent, no ACE: $($ace.Path) (apply again once it exists)\"\n"
    "            continue\n"
    "        }\n"
    "        $acl = Get-Acl -LiteralPath $ace.Path\n"
    "        $rule = New-GkRule $ace\n"
    "        if (Test-GkRule $acl $rule) {\n"
    "            Write-Host \"present: $($ace.Sddl) on $($ace.Path)\"\n"
    "            continue\n"
    "        }\n"
    "        $acl.AddAccessRule($rule)\n"
    "        Set-Acl -LiteralPath $ace.Path -AclObject $acl\n"
    "        Write-Host \"added: $($ace.Sddl) on $($ace.Path)\"\n"
    "    }\n"
    "}\n"
    "\n"
    "# Every SID of the plan is a grantkit capability, so purging its explicit\n"
    "# ACEs removes exactly what a plan stamped.\n"
    "function Remove-GkAces {\n"
    "    foreach ($ace in $Aces) {\n"
    "        if (-not (Test-Path -LiteralPath $ace.Path)) {\n"
    "            continue\n"
    "        }\n"
    "        $acl = Get-Acl -LiteralPath $ace.Path\n"
    "        $rule = New-GkRule $ace\n"
    "        if (-not (Test-GkRule $acl $rule)) {\n"
    "            continue\n"
    "        }\n"
    "        $acl.PurgeAccessRules((New-Object System.Security.Principal.SecurityIdentifier("
    "$ace.Sid)))\n"
    "        Set-Acl -LiteralPath $ace.Path -AclObject $acl\n"
    "        Write-Host \"removed: $($ace.Sid) from $($ace.Path)\"\n"
    "    }\n"
    "}\n"
    "\n"
    "# Low lets the AppContainer write; -Revert sets Medium, which is what an\n"
    "# object without a label has.\n"
    "function Set-GkLabels($Level) {\n"
    "    foreach ($p in $Labels) {\n"
    "        if (-not (Test-Path -LiteralPath $p)) {\n"
    "            continue\n"
    "        }\n"
    "        $spec = $Level\n"
    "        if (Test-Path -LiteralPath $p -PathType Container) {\n"
    "            $spec = \"(OI)(CI)$Level\"\n"
    "        }\n"
    "        & icacls.exe $p /setintegritylevel $spec | Out-Null\n"
    "        if ($LASTEXITCODE -ne 0) {\n"
    "            throw \"icacls /setintegritylevel $spec failed on $p\"\n"
    "        }\n"
    "        Write-Host \"label ${Level}: $p\"\n"
    "    }\n"
    "}\n"
    "\n"
    "function Remove-GkPlaceholders {\n"
    "    if (-not (Test-Path -LiteralPath $StateFile)) {\n"
    "        return\n"
    "    }\n"
    "    $made = @(Get-Content -LiteralPath $StateFile -Encoding UTF8)\n"
    "    [array]::Reverse($made)\n"
    "    foreach ($m in $made) {\n"
    "        if ((Test-Path -LiteralPath $m -PathType Container) -and\n"
    "            -not (Get-ChildItem -LiteralPath $m -Force | Select-Object -First 1)) {\n"
    "            Remove-Item -LiteralPath $m\n"
    "            Write-Host \"placeholder removed: $m\"\n"
    "        }\n"
    "    }\n"
    "    Remove-Item -LiteralPath $StateFile\n"
    "}\n"
    "\n"
    "if ($Revert) {\n"
    "    Remove-GkAces\n"
    "    Set-GkLabels 'M'\n"
    "    Remove-GkPlaceholders\n"
    "} else {\n"
    "    Add-GkPlaceholders\n"
    "    Add-GkAces\n"
    "    Set-GkLabels 'L'\n"
    "}\n";

static void emit_powershell(const ac_ctx *c, gk_buf *b)
{
    gk_buf_printf(b, "# grantkit AppContainer ACL plan for profile %s\n", c->profile);
    gk_buf_printf(b, "# AppContainer SID %s\n", c->profile_sid);
    gk_buf_puts(b,
                "#\n"
                "# Generated by 'grantc emit --backend appcontainer --format powershell'.\n"
                "# Run it as the owner of the paths (or an administrator):\n"
                "#     powershell -ExecutionPolicy Bypass -File plan.ps1\n"
                "# and remove what it stamped with:\n"
                "#     powershell -ExecutionPolicy Bypass -File plan.ps1 -Revert\n"
                "# Applying it again changes nothing: each ACE is looked for before it is\n"
                "# added. A capability is shared by every grantkit profile that grants the\n"
                "# same path the same way, so -Revert takes it from those profiles too.\n"
                "#\n"
                "# Start the command in the AppContainer with these capabilities:\n");
    gk_strvec owned = {0};
    size_t ncaps = 0;
    ac_cap *caps = capabilities(c, &ncaps, &owned);
    for (size_t i = 0; i < ncaps; i++) {
        gk_buf_printf(b, "#   %s\n#       %s", caps[i].name, caps[i].sid);
        if (caps[i].path) {
            gk_buf_puts(b, "  ");
            ps_comment_text(b, caps[i].path);
        }
        gk_buf_putc(b, '\n');
    }
    if (!ncaps)
        gk_buf_puts(b, "#   (none)\n");
    free(caps);
    gk_strvec_free(&owned);
    if (c->nnotes) {
        gk_buf_puts(b, "#\n# Fidelity notes:\n");
        for (size_t i = 0; i < c->nnotes; i++) {
            gk_autofree char *lead = gk_printf("%s:", sev_name(c->notes[i].sev));
            ps_comment_wrapped(b, lead, c->notes[i].msg);
        }
    }
    size_t n_implicit = 0;
    for (size_t i = 0; i < c->plan.n; i++)
        n_implicit += strcmp(c->plan.v[i].kind, "implicit") == 0;
    if (n_implicit) {
        gk_buf_puts(b, "#\n# Readable by every AppContainer already (never stamped):\n");
        for (size_t i = 0; i < c->plan.n; i++)
            if (strcmp(c->plan.v[i].kind, "implicit") == 0) {
                gk_buf_puts(b, "#   ");
                ps_comment_text(b, c->plan.v[i].path);
                gk_buf_putc(b, '\n');
            }
    }
    gk_buf_puts(b, "[CmdletBinding()]\nparam(\n    [switch]$Revert,\n"
                   "    [string]$StateFile = (Join-Path $env:LOCALAPPDATA ");
    gk_autofree char *state = gk_printf("grantkit/%s.placeholders", c->profile);
    ps_path(b, state);
    gk_buf_puts(b, ")\n)\n\n");

    gk_buf_puts(b, "# Each ACE: the path, Allow or Deny, the access mask, whether a directory\n"
                   "# passes it on (OI|CI), and the capability SID.\n$Aces = @(");
    bool any = false;
    for (size_t i = 0; i < c->plan.n; i++) {
        const ac_entry *e = &c->plan.v[i];
        for (size_t k = 0; k < e->naces; k++) {
            const ac_ace *a = &e->aces[k];
            gk_autofree char *sddl = ace_sddl(a, e->sid);
            gk_buf_puts(b, "\n    @{ Path = ");
            ps_path(b, e->path);
            gk_buf_printf(b, "; Type = '%s'; Mask = 0x%x; Inherit = $%s\n       Sid = '%s'\n",
                          a->deny ? "Deny" : "Allow", a->mask, a->inherit ? "true" : "false",
                          e->sid);
            gk_buf_printf(b, "       Sddl = '%s' }", sddl);
            any = true;
        }
    }
    gk_buf_puts(b, any ? "\n)\n" : ")\n");

    gk_buf_puts(b, "# Writable regions: a Low mandatory label (no-write-up).\n$Labels = @(");
    any = false;
    for (size_t i = 0; i < c->plan.n; i++)
        if (c->plan.v[i].label) {
            gk_buf_puts(b, "\n    ");
            ps_path(b, c->plan.v[i].path);
            any = true;
        }
    gk_buf_puts(b, any ? "\n)\n" : ")\n");

    gk_buf_puts(b, "# Denied or readonly names the command could create: occupied when absent.\n"
                   "$Placeholders = @(");
    any = false;
    for (size_t i = 0; i < c->plan.n; i++)
        if (c->plan.v[i].placeholder) {
            gk_buf_puts(b, "\n    ");
            ps_path(b, c->plan.v[i].path);
            any = true;
        }
    gk_buf_puts(b, any ? "\n)\n\n" : ")\n\n");
    gk_buf_puts(b, ps_body);
}

/* Windows PowerShell 5.1 reads a script without a byte-order mark in the
 * ANSI code page: a script with any non-ASCII byte (a path) starts with
 * the UTF-8 BOM so its literals mean the same paths. */
static void emit_powershell_file(const ac_ctx *c, gk_buf *out)
{
    gk_buf s = {0};
    emit_powershell(c, &s);
    bool ascii = true;
    for (size_t i = 0; i < s.len && ascii; i++)
        ascii = (unsigned char)s.data[i] < 0x80;
    if (!ascii)
        gk_buf_puts(out, "\xEF\xBB\xBF");
    gk_buf_add(out, s.data, s.len);
    gk_buf_free(&s);
}

int gk_emit_appcontainer(const gk_emit_input *in, grant_diags *notes, gk_buf *out)
{
    bool json = strcmp(in->format, "json") == 0;
    if (!json && strcmp(in->format, "powershell") != 0)
        return -EINVAL;
    const char *target = gk_target_name(in->policy->ctx);
    if (strcmp(target, "windows") != 0) {
        gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                     "the policy was compiled for %s: an AppContainer plan needs Windows paths "
                     "(compile with --target windows)",
                     target);
        return -ENOTSUP;
    }
    ac_ctx c = {.in = in};
    build(&c);
    if (json)
        emit_json(&c, out);
    else
        emit_powershell_file(&c, out);
    for (size_t i = 0; i < c.nnotes; i++)
        gk_diag_file(notes, c.notes[i].sev, NOTE_FILE, "%s", c.notes[i].msg);
    ctx_free(&c);
    return 0;
}
