/* bwrap.c - the bubblewrap emitter (backends.md, "Linux").
 *
 * The projection becomes a mount plan: namespaces and environment; then the
 * mounts (system, implicit set, readable, writable regions, pinned dirs,
 * readonly re-binds) in an order where a mount never hides one made before
 * it inside its own tree; then one mask per deny entry, absent readonly entry
 * and vetoed file, sorted; then --chdir. Every mount records which host tree
 * shows at its destination and what the command may do there, so a host path
 * can be followed to every name it has inside the sandbox (a region bound at
 * both spellings shows its denies twice) and each mask can be chosen by the
 * area its name falls in.
 *
 * Choices the spec leaves open, or where it had to be corrected:
 * - --cap-drop ALL follows the namespace flags: bwrap started by root keeps
 *   every capability inside otherwise, and a command never needs more than
 *   its user's rights (grantrun adds CAP_SYS_ADMIN back for its helper).
 *   With --disable-userns it also keeps the masks from being unmounted.
 * - Unrestricted fs also gets --proc /proc, the command's own pid namespace
 *   (the implicit /proc), rather than the host's.
 * - On the host, an implicit entry that is a symlink into another implicit
 *   entry (merged /usr: /bin -> usr/bin) is recreated with --symlink: two
 *   binds of one directory would each need every mask. Offline, merged /usr
 *   is assumed.
 * - Pinned dirs (projection) are bound onto themselves, writable: a
 *   mountpoint cannot be renamed or removed (EBUSY), so a mask or read-only
 *   re-bind below cannot be carried away and its name re-created. A pinned
 *   dir that a mask's mountpoint will create is made first with --dir.
 * - Readonly entries are re-bound only where they are writable: re-binding
 *   one that no region shows would expose it. A write mount inside a
 *   readonly entry is re-bound read-only as well.
 * - The policy's own source files are readonly entries (gate: policy-source).
 * - A read mount inside another mount showing the same host tree is dropped
 *   (it adds nothing, and inside a write mount it would narrow the policy).
 * - --no-implicit: no --proc, --dev or private /tmp; only /dev/null (the
 *   discard device the gate always allows) via --dev-bind.
 * - Restricted fs ends the mounts with --remount-ro /: bwrap's root tmpfs
 *   is writable by the command otherwise, so a name no region shows could
 *   be created (privately, but the gate refuses it). A launcher adds its
 *   own mounts between the plan's options and its late options: before the
 *   masks and this remount.
 * - The environment is minimal and deterministic (HOME, LANG=C.UTF-8, PATH,
 *   USER from the freeze context); grantrun passes the command's own.
 */
#include "backends/backend.h"
#include "common/json.h"
#include "common/pathmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOTE_FILE "bwrap"

typedef enum kind { K_ABSENT, K_FILE, K_DIR, K_LINK } kind;

static kind host_kind(const char *p)
{
    struct stat st;
    if (lstat(p, &st) < 0)
        return K_ABSENT;
    if (S_ISLNK(st.st_mode))
        return K_LINK;
    return S_ISDIR(st.st_mode) ? K_DIR : K_FILE;
}

static bool strictly_within(const char *p, const char *q)
{
    return strcmp(p, q) != 0 && gk_path_within(p, q);
}

static size_t depth(const char *p)
{
    size_t d = 0;
    for (const char *c = p; *c; c++)
        d += *c == '/';
    return strcmp(p, "/") == 0 ? 0 : d;
}

/* p (within `from`) moved under `to`. */
static char *rebase(const char *p, const char *from, const char *to)
{
    const char *rest = strcmp(from, "/") == 0 ? p : p + strlen(from);
    if (!*rest)
        return gk_strdup(to);
    return strcmp(to, "/") == 0 ? gk_strdup(rest) : gk_concat(to, rest);
}

/* ---- offline guesses --------------------------------------------------- */

static const char *const dotfiles[] = {
    ".netrc", ".git-credentials", ".gitconfig", ".npmrc", ".pypirc", ".pgpass", ".bash_history",
    ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".lesshst", ".viminfo",
    ".Xauthority", ".ICEauthority", ".boto", ".s3cfg", ".dockercfg", ".env", ".envrc",
    ".authinfo", ".wgetrc", ".curlrc", ".vault-token", ".profile", ".bashrc", ".zshrc",
    ".bash_profile", ".terraformrc", ".hgrc", ".yarnrc", ".rnd",
};
static const char *const plainfiles[] = {"known_hosts", "authorized_keys", "credentials",
                                         "passwd", "shadow", "group", "gshadow", "sudoers",
                                         "hosts", "localtime", "config"};

bool gk_bwrap_filelike(const char *path)
{
    const char *b = gk_basename(path);
    for (size_t i = 0; i < sizeof(dotfiles) / sizeof(*dotfiles); i++)
        if (strcmp(b, dotfiles[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(plainfiles) / sizeof(*plainfiles); i++)
        if (strcmp(b, plainfiles[i]) == 0)
            return true;
    if (gk_has_prefix(b, "id_"))
        return true; /* ssh keys */
    const char *dot = strrchr(b, '.');
    /* An extension (not a leading dot, not the conf.d convention). */
    return dot && dot > b && dot[1] && strcmp(dot, ".d") != 0;
}

/* Offline: merged /usr, as on Debian 12 and every current distribution. */
static const char *const merged_usr[][2] = {
    {"/bin", "usr/bin"}, {"/sbin", "usr/sbin"}, {"/lib", "usr/lib"},
    {"/lib32", "usr/lib32"}, {"/lib64", "usr/lib64"},
};
/* The implicit entries that are files (offline, where nothing is stat'ed). */
static const char *const implicit_files[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/resolv.conf", "/etc/nsswitch.conf",
    "/etc/hosts", "/etc/passwd", "/etc/group", "/etc/localtime",
};

/* ---- the builder ------------------------------------------------------- */

typedef struct mask {
    char *name;   /* in the sandbox */
    bool dir;     /* tmpfs mask (else /dev/null) */
    bool readable; /* an empty directory to look into (0555): the mask of an
                    * absent readonly name, which has nothing to hide; git
                    * status and tree walkers would warn on each 0000 one */
} mask;

typedef struct builder {
    const gk_projection *pr;
    const grant_context *ctx;
    const grant_policy *policy;
    grant_diags *notes;
    bool offline;
    const char *scratch_at; /* gk_launch_env.scratch_at */
    const char *scratch;    /* gk_launch_env.scratch */
    gk_strvec scratch_ro;   /* --ro-bind SRC DEST of readonly entries in the scratch: late
                             * options, since the launcher binds the scratch after the plan */
    gk_mount *m;
    size_t n, cap;
    size_t nbase;          /* mounts [0, nbase) are the base binds; the rest readonly */
    mask *masks;
    size_t nmasks, capmasks;
    gk_strvec placeholders;
    /* Lookups by destination and by host path, rebuilt after the mounts
     * change: a policy of 1,000 rules has hundreds of mounts, and every
     * entry asks which of them holds each of its names. */
    bool index_ok;
    gk_pathmap by_dest, by_host;
    size_t *links;
    size_t nlinks;
} builder;

static void index_drop(builder *b)
{
    gk_pathmap_clear(&b->by_dest);
    gk_pathmap_clear(&b->by_host);
    free(b->links);
    b->links = NULL;
    b->nlinks = 0;
    b->index_ok = false;
}

static void index_refresh(builder *b)
{
    if (b->index_ok)
        return;
    index_drop(b);
    b->links = gk_malloc((b->n ? b->n : 1) * sizeof(*b->links));
    for (size_t i = 0; i < b->n; i++) {
        const gk_mount *m = &b->m[i];
        if (!m->flag || !*m->flag)
            continue;
        if (m->link) {
            b->links[b->nlinks++] = i;
            continue;
        }
        gk_pathmap_add(&b->by_dest, m->dest, i);
        if (m->host)
            gk_pathmap_add(&b->by_host, m->host, i);
    }
    b->index_ok = true;
}

static gk_mount *add_mount(builder *b, gk_mount_role role, const char *flag, const char *src,
                           const char *dest, const char *host, gk_area area)
{
    gk_mount m = {0};
    m.role = role;
    m.flag = flag;
    m.src = src ? gk_strdup(src) : NULL;
    m.dest = gk_strdup(dest);
    m.host = host ? gk_strdup(host) : NULL;
    m.area = area;
    GK_VEC_PUSH(b->m, b->n, b->cap, m);
    b->index_ok = false;
    return &b->m[b->n - 1];
}

static void mount_free(gk_mount *m)
{
    free(m->src);
    free(m->dest);
    free(m->host);
    free(m->link);
}

static bool is_dir_on_host(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where a name below the frame protocol's scratch really is: in the
 * scratch tree (materialised from the request's baseline), not at the
 * host path; NULL for any other name. */
static char *in_scratch(const builder *b, const char *t)
{
    if (!b->scratch || !strictly_within(t, b->scratch_at))
        return NULL;
    size_t n = strlen(b->scratch_at);
    return gk_printf("%s%s", b->scratch, t + (n == 1 ? 0 : n));
}

/* The kind of what a policy entry names, where the run will see it. */
static kind entry_kind(const builder *b, const char *t)
{
    gk_autofree char *s = in_scratch(b, t);
    return host_kind(s ? s : t);
}

/* Follow --symlink mounts: the name a path has once bwrap's links are
 * resolved (offline /bin/x is /usr/bin/x). */
static char *sandbox_resolve(builder *b, const char *p)
{
    index_refresh(b);
    char *cur = gk_strdup(p);
    for (int hops = 0; hops < 8; hops++) {
        bool moved = false;
        for (size_t k = 0; k < b->nlinks && !moved; k++) {
            const gk_mount *m = &b->m[b->links[k]];
            if (gk_path_within(cur, m->dest)) {
                char *next = rebase(cur, m->dest, m->link);
                free(cur);
                cur = next;
                moved = true;
            }
        }
        if (!moved)
            break;
    }
    return cur;
}

/* The mount that decides what is at name p: the last one (in bwrap's
 * order) whose destination contains it; NULL for the sandbox root's tmpfs.
 * Symlinks and Landlock-only device entries are not mounts. */
static const gk_mount *effective(builder *b, const char *p)
{
    index_refresh(b);
    gk_path_prefixes px;
    gk_path_prefixes_of(p, &px);
    size_t best = SIZE_MAX;
    const gk_pathmap_entry *ev = b->by_dest.entries;
    for (size_t l = 0; l < px.n; l++)
        for (uint32_t e = gk_pathmap_first(&b->by_dest, p, px.len[l], px.hash[l]); e;
             e = ev[e - 1].next)
            if (best == SIZE_MAX || ev[e - 1].value > best)
                best = ev[e - 1].value;
    gk_path_prefixes_free(&px);
    return best == SIZE_MAX ? NULL : &b->m[best];
}

static gk_area area_of(const gk_mount *m)
{
    return m ? m->area : GK_AREA_NONE;
}

/* Does name p, decided by mount m, show host path t? */
static bool shows(const gk_mount *m, const char *p, const char *t)
{
    if (!m || !m->host)
        return strcmp(p, t) == 0;
    gk_autofree char *h = rebase(p, m->dest, m->host);
    return strcmp(h, t) == 0;
}

/* Every name under which host path t is visible in the sandbox (sorted).
 * If no mount shows it, t itself when that name falls in a private or
 * unbound area (the command could create it there). */
static void sandbox_names(builder *b, const char *t, gk_strvec *out)
{
    index_refresh(b);
    gk_path_prefixes px;
    gk_path_prefixes_of(t, &px);
    for (size_t l = 0; l < px.n; l++) {
        for (uint32_t at = gk_pathmap_first(&b->by_host, t, px.len[l], px.hash[l]); at;
             at = b->by_host.entries[at - 1].next) {
            const gk_mount *m = &b->m[b->by_host.entries[at - 1].value];
            char *n = rebase(t, m->host, m->dest);
            const gk_mount *e = effective(b, n);
            if (shows(e, n, t) && !gk_strvec_contains(out, n))
                gk_strvec_push_take(out, n);
            else
                free(n);
        }
    }
    gk_path_prefixes_free(&px);
    if (out->n == 0) {
        char *n = sandbox_resolve(b, t);
        if (strcmp(n, t) != 0) {
            /* Behind a --symlink mount (offline /bin/x): the object is the
             * link's target. */
            sandbox_names(b, n, out);
            free(n);
            return;
        }
        const gk_mount *e = effective(b, n);
        if (!e || !e->host)
            gk_strvec_push_take(out, n);
        else
            free(n);
    }
    gk_strvec_sort_unique(out);
}

/* The host path behind name p (NULL if private). */
static char *host_of(const gk_mount *m, const char *p)
{
    return m && m->host ? rebase(p, m->dest, m->host) : NULL;
}

static void add_placeholders(builder *b, const char *host_path)
{
    char *p = gk_strdup(host_path);
    while (p && strcmp(p, "/") != 0 && host_kind(p) == K_ABSENT) {
        if (!gk_strvec_contains(&b->placeholders, p))
            gk_strvec_push(&b->placeholders, p);
        char *up = gk_path_parent(p);
        free(p);
        p = up;
    }
    free(p);
}

/* Duplicates (a deny that is also a vetoed file) merge in finish_masks. */
static void add_mask(builder *b, const char *name, bool dir, bool readable)
{
    mask m = {gk_strdup(name), dir, readable};
    GK_VEC_PUSH(b->masks, b->nmasks, b->capmasks, m);
}

/* ---- mounts ------------------------------------------------------------ */

static bool in_list(const gk_strvec *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0)
            return true;
    return false;
}

/* A symlinked implicit entry whose target another implicit entry shows. */
static bool implicit_symlink(builder *b, const char *e)
{
    const gk_strvec *set = &b->pr->implicit.read;
    if (b->offline) {
        if (!in_list(set, "/usr"))
            return false;
        for (size_t i = 0; i < sizeof(merged_usr) / sizeof(*merged_usr); i++)
            if (strcmp(e, merged_usr[i][0]) == 0) {
                gk_mount *m = add_mount(b, GK_MOUNT_IMPLICIT, "--symlink", merged_usr[i][1], e,
                                        NULL, GK_AREA_NONE);
                m->link = gk_printf("/%s", merged_usr[i][1]);
                return true;
            }
        return false;
    }
    if (host_kind(e) != K_LINK)
        return false;
    gk_autofree char *target = gk_resolve_host(e);
    if (!target)
        return false;
    bool covered = false;
    for (size_t i = 0; i < set->n && !covered; i++)
        covered = strcmp(set->v[i], e) != 0 && gk_path_within(target, set->v[i]) &&
                  host_kind(set->v[i]) != K_LINK;
    if (!covered)
        return false;
    /* Keep the link's own text when its directory has no symlink in it, so
     * the sandbox reads like the host ("usr/bin"). */
    gk_autofree char *parent = gk_path_parent(e);
    gk_autofree char *rparent = gk_resolve_host(parent);
    char text[4096];
    ssize_t len = readlink(e, text, sizeof(text) - 1);
    bool own = len > 0 && rparent && strcmp(parent, rparent) == 0;
    if (own)
        text[len] = '\0';
    gk_mount *m = add_mount(b, GK_MOUNT_IMPLICIT, "--symlink", own ? text : target, e, NULL,
                            GK_AREA_NONE);
    m->link = gk_strdup(target);
    return true;
}

static void system_mounts(builder *b)
{
    const gk_implicit *im = &b->pr->implicit;
    if (!b->pr->fs_restricted) {
        add_mount(b, GK_MOUNT_SYSTEM, "--dev-bind", "/", "/", "/", GK_AREA_HOST_RW);
        if (im->proc)
            add_mount(b, GK_MOUNT_SYSTEM, "--proc", NULL, "/proc", NULL, GK_AREA_PRIV_RO);
        return;
    }
    if (im->proc)
        add_mount(b, GK_MOUNT_SYSTEM, "--proc", NULL, "/proc", NULL, GK_AREA_PRIV_RO);
    if (im->devices.n) {
        add_mount(b, GK_MOUNT_SYSTEM, "--dev", NULL, "/dev", NULL, GK_AREA_PRIV_RW);
    } else {
        /* The discard device needs no authority (gate), even without the
         * implicit set. */
        gk_mount *m = add_mount(b, GK_MOUNT_SYSTEM, "--dev-bind", "/dev/null", "/dev/null",
                                "/dev/null", GK_AREA_PRIV_RW);
        m->is_file = true;
    }
    for (size_t i = 0; i < im->write.n; i++)
        add_mount(b, GK_MOUNT_SYSTEM, "--tmpfs", NULL, im->write.v[i], NULL, GK_AREA_PRIV_RW);
    for (size_t i = 0; i < im->read.n; i++) {
        const char *e = im->read.v[i];
        if (implicit_symlink(b, e))
            continue;
        gk_autofree char *host = b->offline ? gk_strdup(e) : gk_resolve_host(e);
        gk_mount *m = add_mount(b, GK_MOUNT_IMPLICIT, "--ro-bind-try", e, e, host ? host : e,
                                GK_AREA_HOST_RO);
        if (b->offline) {
            for (size_t k = 0; k < sizeof(implicit_files) / sizeof(*implicit_files); k++)
                m->is_file |= strcmp(e, implicit_files[k]) == 0;
        } else {
            m->is_file = !is_dir_on_host(e);
        }
    }
    /* Devices: made by --dev; listed for Landlock, which grants them one by
     * one. Not mounts (flag NULL). */
    for (size_t i = 0; i < im->devices.n; i++) {
        gk_mount *m = add_mount(b, GK_MOUNT_DEVICE, NULL, NULL, im->devices.v[i], NULL,
                                GK_AREA_PRIV_RW);
        m->is_file = strcmp(im->devices.v[i], "/dev/shm") != 0;
    }
}

static void region_mounts(builder *b, const gk_regions *r, bool write)
{
    for (size_t i = 0; i < r->n; i++) {
        const gk_fpath *p = &r->v[i].p;
        const char *names[2] = {p->real, p->path};
        for (int k = 0; k < (strcmp(p->path, p->real) ? 2 : 1); k++) {
            gk_mount *m = add_mount(b, write ? GK_MOUNT_WRITE : GK_MOUNT_READ,
                                    write ? "--bind-try" : "--ro-bind-try", p->real, names[k],
                                    p->real, write ? GK_AREA_HOST_RW : GK_AREA_HOST_RO);
            m->is_file = b->offline ? gk_bwrap_filelike(p->real)
                                    : host_kind(p->real) != K_ABSENT && !is_dir_on_host(p->real);
        }
    }
}

/* A read-only bind that shows nothing its surroundings do not already show
 * (the same host tree at the same place) is left out. */
static bool redundant(builder *b, size_t i)
{
    index_refresh(b);
    const gk_mount *x = &b->m[i];
    if (!x->flag)
        return false;
    bool link = x->link != NULL;
    if (!link && (x->role != GK_MOUNT_IMPLICIT && x->role != GK_MOUNT_READ))
        return false;
    if (!link && x->area != GK_AREA_HOST_RO)
        return false;
    gk_path_prefixes px;
    gk_path_prefixes_of(x->dest, &px);
    bool found = false;
    for (size_t l = 0; l < px.n && !found; l++) {
        for (uint32_t e = gk_pathmap_first(&b->by_dest, x->dest, px.len[l], px.hash[l]);
             e && !found; e = b->by_dest.entries[e - 1].next) {
            size_t yi = b->by_dest.entries[e - 1].value;
            const gk_mount *y = &b->m[yi];
            if (yi == i || !y->host)
                continue;
            if (link) {
                /* A symlink inside a host bind: the host's own entry is
                 * there. */
                found = strictly_within(x->dest, y->dest);
                continue;
            }
            if (y->area != GK_AREA_HOST_RW && y->area != GK_AREA_HOST_RO)
                continue;
            gk_autofree char *h = rebase(x->dest, y->dest, y->host);
            if (strcmp(h, x->host) != 0)
                continue;
            /* Equal read-only binds: keep the first. */
            if (strcmp(x->dest, y->dest) == 0 && y->area == GK_AREA_HOST_RO && yi > i)
                continue;
            found = true;
        }
    }
    gk_path_prefixes_free(&px);
    return found;
}

/* Order mounts [from, b->n): the spec's groups, except that a mount is
 * moved before the first earlier mount it contains (it would hide that
 * one); redundant read-only binds are dropped first. */
static void order_mounts(builder *b, size_t from)
{
    size_t total = b->n - from;
    bool *drop = gk_calloc(total ? total : 1, sizeof(*drop));
    for (size_t i = from; i < b->n; i++)
        drop[i - from] = redundant(b, i);
    gk_mount *out = gk_calloc(total ? total : 1, sizeof(*out));
    /* Every proper ancestor of a placed destination: "does a placed mount
     * lie inside this one" is one lookup. */
    gk_pathmap holds_placed = {0};
    size_t n = 0;
    for (size_t i = from; i < b->n; i++) {
        if (drop[i - from]) {
            mount_free(&b->m[i]);
            continue;
        }
        const char *d = b->m[i].dest;
        size_t dl = strlen(d);
        bool contains = gk_pathmap_first(&holds_placed, d, dl, gk_fnv(d, dl)) != 0;
        size_t at = n;
        if (contains)
            for (size_t k = 0; k < n; k++)
                if (out[k].flag && strictly_within(out[k].dest, d)) {
                    at = k;
                    break;
                }
        memmove(out + at + 1, out + at, (n - at) * sizeof(*out));
        out[at] = b->m[i];
        n++;
        if (b->m[i].flag) {
            gk_path_prefixes px;
            gk_path_prefixes_of(d, &px);
            for (size_t l = 0; l + 1 < px.n; l++)
                gk_pathmap_add_len(&holds_placed, d, px.len[l], 0);
            gk_path_prefixes_free(&px);
        }
    }
    gk_pathmap_clear(&holds_placed);
    memcpy(b->m + from, out, n * sizeof(*out));
    b->n = from + n;
    b->index_ok = false;
    free(out);
    free(drop);
}

static void push2(gk_strvec *v, const char *a, const char *b)
{
    gk_strvec_push(v, a);
    gk_strvec_push(v, b);
}

/* Readonly entries (and the policy's sources) that some writable mount
 * shows are re-bound read-only there; so is every writable mount inside
 * one. Absent ones are masked later. */
static void readonly_mounts(builder *b, const gk_strvec *ro, gk_strvec *absent)
{
    for (size_t i = 0; i < ro->n; i++) {
        const char *t = ro->v[i];
        gk_autofree char *s = in_scratch(b, t);
        bool exists = b->offline || host_kind(s ? s : t) != K_ABSENT;
        if (!exists) {
            gk_strvec_push(absent, t);
            continue;
        }
        if (s) {
            /* In the run's scratch: the scratch's own entry, read-only. */
            push2(&b->scratch_ro, "--ro-bind", s);
            gk_strvec_push(&b->scratch_ro, t);
            continue;
        }
        gk_strvec names = {0};
        sandbox_names(b, t, &names);
        for (size_t k = 0; k < names.n; k++) {
            const gk_mount *e = effective(b, names.v[k]);
            if (area_of(e) == GK_AREA_HOST_RW && e->host) {
                gk_mount *m = add_mount(b, GK_MOUNT_READONLY, "--ro-bind", t, names.v[k], t,
                                        GK_AREA_HOST_RO);
                m->is_file = b->offline ? gk_bwrap_filelike(t) : !is_dir_on_host(t);
            }
        }
        gk_strvec_free(&names);
        /* Writable mounts below it (a write region inside a readonly one). */
        size_t n = b->n;
        for (size_t k = 0; k < n; k++) {
            const gk_mount *w = &b->m[k];
            if (w->flag && !w->link && w->host && w->area == GK_AREA_HOST_RW &&
                strictly_within(w->host, t)) {
                char *src = gk_strdup(w->host), *dest = gk_strdup(w->dest);
                const gk_mount *e = effective(b, dest);
                if (e == w)
                    add_mount(b, GK_MOUNT_READONLY, "--ro-bind-try", src, dest, src,
                              GK_AREA_HOST_RO);
                free(src);
                free(dest);
            }
        }
    }
}

/* ---- masks ------------------------------------------------------------- */

typedef enum entry_role { E_DENY, E_READONLY, E_VETO } entry_role;

static const char *role_word(entry_role r)
{
    return r == E_DENY ? "deny" : r == E_READONLY ? "readonly" : "exec veto";
}

/* One entry: its kind by one lstat (or a guess offline), then a mask at
 * each of its names, chosen by the area the name falls in. */
static void mask_entry(builder *b, const char *t, entry_role role)
{
    kind k;
    if (b->offline) {
        k = role == E_VETO || gk_bwrap_filelike(t) ? K_FILE : K_DIR;
        if (role == E_DENY) {
            /* One per deny of a large policy: built without printf. */
            gk_buf m = {0};
            gk_buf_puts(&m, "offline: deny ");
            gk_buf_puts(&m, t);
            gk_buf_puts(&m, k == K_FILE ? " is masked as a file (file-like name)"
                                        : " is masked as a directory (not a file-like name)");
            gk_buf_puts(&m, "; bwrap refuses to start if the target disagrees");
            gk_autofree char *msg = gk_buf_steal(&m, NULL);
            gk_diag_file(b->notes, GK_NOTE, NOTE_FILE, "%s", msg);
        }
    } else {
        k = role == E_READONLY ? K_ABSENT : entry_kind(b, t);
    }
    if (k == K_LINK) {
        /* A vetoed link: its target is on the list too. A link left in a
         * canonical deny path could not be followed (loop or unreadable):
         * the kernel cannot follow it either. */
        if (role == E_DENY)
            gk_diag_file(b->notes, GK_WARNING, NOTE_FILE,
                         "deny %s: an unresolvable symlink, not masked", t);
        return;
    }
    if (role == E_VETO && k == K_DIR) {
        gk_diag_file(b->notes, GK_NOTE, NOTE_FILE,
                     "exec veto of directory %s: not expressible with bwrap (Landlock and "
                     "noexec mounts in grantrun carry it)",
                     t);
        return;
    }
    gk_strvec names = {0};
    sandbox_names(b, t, &names);
    for (size_t i = 0; i < names.n; i++) {
        const char *n = names.v[i];
        const gk_mount *e = effective(b, n);
        gk_area a = area_of(e);
        /* Not in a bound region: the sandbox root's own tmpfs, read-only
         * from --remount-ro / on, shows nothing of the host there and
         * takes no new name, so a mask would change nothing the command
         * can reach (a home directory's secrets when no bind shows home). */
        if (a == GK_AREA_NONE && (role == E_VETO || b->pr->fs_restricted) &&
            !(b->scratch_at && gk_path_within(n, b->scratch_at)))
            continue;
        if (k == K_FILE || k == K_DIR) {
            add_mask(b, n, k == K_DIR, false);
            continue;
        }
        /* Absent: occupy the name if the command could create it. */
        if (a == GK_AREA_HOST_RO || a == GK_AREA_PRIV_RO) {
            if (role == E_DENY)
                gk_diag_file(b->notes, GK_WARNING, NOTE_FILE,
                             "deny %s: absent under a read-only bind, not masked (a file the "
                             "host creates there during the run is visible)",
                             n);
            continue;
        }
        add_mask(b, n, role != E_VETO, role == E_READONLY);
        if (a == GK_AREA_HOST_RW) {
            gk_autofree char *h = host_of(e, n);
            size_t before = b->placeholders.n;
            add_placeholders(b, h);
            for (size_t p = before; p < b->placeholders.n; p++)
                gk_diag_file(b->notes, GK_NOTE, NOTE_FILE,
                             "placeholder: bwrap creates %s on the host as the mountpoint of "
                             "the %s mask; remove it after the run if it is still empty",
                             b->placeholders.v[p], role_word(role));
        }
    }
    gk_strvec_free(&names);
}

static int mask_cmp(const void *a, const void *b)
{
    return gk_strcmp_bytes(((const mask *)a)->name, ((const mask *)b)->name);
}

/* Sorted, one per name (a file mask wins: offline, a name on the veto list
 * is a program, whatever its spelling suggests); a mask inside a directory
 * mask is dropped (the tmpfs hides the name, and its read-only root could
 * not take a mountpoint). */
static void finish_masks(builder *b)
{
    if (b->nmasks)
        qsort(b->masks, b->nmasks, sizeof(*b->masks), mask_cmp);
    gk_pathmap dirs = {0};
    size_t w = 0;
    for (size_t i = 0; i < b->nmasks; i++) {
        mask *m = &b->masks[i];
        if (w && strcmp(b->masks[w - 1].name, m->name) == 0) {
            b->masks[w - 1].dir &= m->dir;
            b->masks[w - 1].readable &= m->readable; /* a deny of it too: 0000 */
            free(m->name);
            continue;
        }
        /* Kept dir masks: look each proper ancestor up. */
        gk_path_prefixes px;
        gk_path_prefixes_of(m->name, &px);
        bool hidden = false;
        for (size_t l = 0; l + 1 < px.n && !hidden; l++)
            hidden = gk_pathmap_first(&dirs, m->name, px.len[l], px.hash[l]) != 0;
        gk_path_prefixes_free(&px);
        if (hidden) {
            free(m->name);
            continue;
        }
        b->masks[w++] = *m;
        if (m->dir)
            gk_pathmap_add(&dirs, m->name, 0);
    }
    b->nmasks = w;
    gk_pathmap_clear(&dirs);
}

/* Every proper ancestor of e inside writable region w, w included. */
static void pin_into(gk_strvec *out, const char *e, const char *w)
{
    if (!strictly_within(e, w))
        return;
    char *p = gk_path_parent(e);
    while (p && gk_path_within(p, w)) {
        gk_strvec_push(out, p);
        bool done = strcmp(p, w) == 0;
        char *up = gk_path_parent(p);
        free(p);
        p = done ? (free(up), NULL) : up;
    }
    free(p);
}

static void pinned_mounts(builder *b)
{
    const gk_projection *pr = b->pr;
    gk_strvec pins = {0};
    gk_strvec_copy(&pins, &pr->pinned);
    /* The policy's sources are readonly too: pin their ancestors alike. */
    for (size_t i = 0; i < pr->protect.n; i++) {
        for (size_t w = 0; w < pr->write.n; w++)
            pin_into(&pins, pr->protect.v[i], pr->write.v[w].p.real);
        if (!pr->fs_restricted)
            pin_into(&pins, pr->protect.v[i], "/");
    }
    gk_strvec_sort_unique(&pins);
    for (size_t i = 0; i < pins.n; i++) {
        const char *p = pins.v[i];
        if (strcmp(p, "/") == 0)
            continue;
        bool exists = b->offline || host_kind(p) == K_DIR;
        bool made = !b->offline && gk_strvec_contains(&b->placeholders, p);
        if (!exists && !made)
            continue;
        gk_strvec names = {0};
        sandbox_names(b, p, &names);
        for (size_t k = 0; k < names.n; k++) {
            const gk_mount *e = effective(b, names.v[k]);
            if (area_of(e) != GK_AREA_HOST_RW || strcmp(e->dest, names.v[k]) == 0)
                continue; /* not writable here, or already a mountpoint */
            gk_mount *m = add_mount(b, GK_MOUNT_PIN, "--bind-try", p, names.v[k], p,
                                    GK_AREA_HOST_RW);
            m->mkdir = made;
        }
        gk_strvec_free(&names);
    }
    gk_strvec_free(&pins);
}

/* ---- the plan ---------------------------------------------------------- */


static void emit_mount(gk_strvec *argv, const gk_mount *m)
{
    if (!m->flag || !*m->flag)
        return;
    if (m->mkdir)
        push2(argv, "--dir", m->dest);
    gk_strvec_push(argv, m->flag);
    if (m->src)
        gk_strvec_push(argv, m->src);
    gk_strvec_push(argv, m->dest);
}

static int placeholder_cmp(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    size_t dx = depth(x), dy = depth(y);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return gk_strcmp_bytes(x, y);
}

static bool cwd_visible(builder *b, const char *cwd)
{
    gk_autofree char *n = sandbox_resolve(b, cwd);
    const gk_mount *e = effective(b, n);
    if (!e || !(e->host ? shows(e, n, cwd) : strcmp(e->dest, n) == 0))
        return false;
    for (size_t k = 0; k < b->nmasks; k++)
        if (b->masks[k].dir && gk_path_within(n, b->masks[k].name))
            return false;
    return true;
}

static bool any_subcommands(const grant_policy *p)
{
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_layer *f = p->stack.v[i];
        if (!f->has_exec)
            continue;
        for (size_t k = 0; k < f->exec.names.n; k++)
            if (!f->exec.names.v[k].all)
                return true;
        for (size_t k = 0; k < f->exec.files.n; k++)
            if (!f->exec.files.v[k].all)
                return true;
    }
    return false;
}

/* Namespaces and capabilities. */
static void plan_namespaces(const gk_projection *pr, const gk_launch_env *launch,
                            gk_strvec *argv)
{
    static const char *const ns[] = {"--new-session", "--die-with-parent", "--unshare-user",
                                     "--disable-userns", "--unshare-ipc", "--unshare-uts",
                                     "--unshare-pid", "--unshare-cgroup-try"};
    for (size_t i = launch && launch->tty ? 1 : 0; i < sizeof(ns) / sizeof(*ns); i++)
        /* Launched, the seccomp filter refuses new user namespaces instead:
         * --disable-userns nests the command in a user namespace where the
         * helper could no longer remount writable regions noexec. */
        if (!launch || strcmp(ns[i], "--disable-userns") != 0)
            gk_strvec_push(argv, ns[i]);
    if (!pr->net)
        gk_strvec_push(argv, "--unshare-net");
    if (launch)
        push2(argv, "--cap-add", "CAP_SYS_ADMIN"); /* the helper's remounts, then it drops all */
    else
        push2(argv, "--cap-drop", "ALL");
}

/* The environment: a launcher's command's own, else the minimal one of the
 * freeze context. */
static void plan_environment(const grant_context *ctx, const gk_launch_env *launch,
                             gk_strvec *argv)
{
    gk_strvec_push(argv, "--clearenv");
    if (launch) {
        for (size_t i = 0; launch->env && launch->env[i]; i++) {
            const char *eq = strchr(launch->env[i], '=');
            if (!eq)
                continue;
            gk_strvec_push_take(argv, gk_strdup("--setenv"));
            gk_strvec_push_take(argv, gk_strndup(launch->env[i], (size_t)(eq - launch->env[i])));
            gk_strvec_push(argv, eq + 1);
        }
        return;
    }
    const char *env[][2] = {{"HOME", ctx->home},
                            {"LANG", "C.UTF-8"},
                            {"PATH", ctx->path},
                            {"USER", ctx->user}};
    for (size_t i = 0; i < sizeof(env) / sizeof(*env); i++)
        if (env[i][1]) {
            push2(argv, "--setenv", env[i][0]);
            gk_strvec_push(argv, env[i][1]);
        }
}

/* One mask per deny entry, absent readonly entry and vetoed file. */
static void plan_masks(builder *b, const gk_strvec *absent_ro)
{
    const gk_projection *pr = b->pr;
    for (size_t i = 0; i < pr->deny.n; i++)
        mask_entry(b, pr->deny.v[i].p.real, E_DENY);
    for (size_t i = 0; i < absent_ro->n; i++)
        mask_entry(b, absent_ro->v[i], E_READONLY);
    for (size_t i = 0; i < pr->exec_veto.n; i++) {
        const char *v = pr->exec_veto.v[i];
        if (gk_stack_names_exec_dir(&b->policy->stack, v, true)) {
            gk_diag_file(b->notes, GK_NOTE, NOTE_FILE,
                         "exec veto of directory %s: not expressible with bwrap (Landlock and "
                         "noexec mounts in grantrun carry it)",
                         v);
            continue;
        }
        mask_entry(b, v, E_VETO);
    }
}

/* Pinned dirs join the base mounts (so they precede the readonly re-binds
 * and masks inside them). They are chosen with the re-binds in place (a
 * dir inside a read-only re-bind needs no pin); a writable self-bind
 * changes no name's area or host path, so the masks stand. */
static void plan_pins(builder *b)
{
    size_t before = b->n;
    pinned_mounts(b);
    size_t npin = b->n - before, nro = before - b->nbase;
    gk_mount *rom = gk_malloc((nro ? nro : 1) * sizeof(*rom));
    memcpy(rom, b->m + b->nbase, nro * sizeof(*rom));
    memmove(b->m + b->nbase, b->m + before, npin * sizeof(*b->m));
    b->n = b->nbase + npin;
    b->index_ok = false;
    order_mounts(b, 0);
    for (size_t i = 0; i < nro; i++)
        GK_VEC_PUSH(b->m, b->n, b->cap, rom[i]);
    b->index_ok = false;
    free(rom);
}

/* The mounts in the order bwrap performs them, and the masks (they change
 * no mount: a mounts-only plan skips them). */
static void plan_mounts(builder *b, bool with_masks)
{
    const gk_projection *pr = b->pr;
    system_mounts(b);
    if (pr->fs_restricted) {
        region_mounts(b, &pr->read, false);
        region_mounts(b, &pr->write, true);
    }
    order_mounts(b, 0);
    b->nbase = b->n;
    gk_strvec ro = {0}, absent_ro = {0};
    for (size_t i = 0; i < pr->readonly.n; i++)
        gk_strvec_push(&ro, pr->readonly.v[i].p.real);
    gk_strvec_copy(&ro, &pr->protect);
    gk_strvec_sort_unique(&ro);
    readonly_mounts(b, &ro, &absent_ro);
    if (with_masks)
        plan_masks(b, &absent_ro);
    finish_masks(b);
    gk_strvec_free(&ro);
    gk_strvec_free(&absent_ro);
    plan_pins(b);
}

/* The options after a launcher's mounts: the masks, the read-only root,
 * the working directory. */
static void plan_late_options(builder *b, gk_bwrap_plan *out)
{
    gk_strvec *late = &out->late_options;
    gk_strvec_copy(late, &b->scratch_ro);
    bool file_masks = false;
    for (size_t i = 0; i < b->nmasks; i++) {
        const char *n = b->masks[i].name;
        if (b->masks[i].dir) {
            push2(late, "--perms", b->masks[i].readable ? "0555" : "0000");
            push2(late, "--tmpfs", n);
            push2(late, "--remount-ro", n);
        } else {
            push2(late, "--ro-bind", "/dev/null");
            gk_strvec_push(late, n);
            file_masks = true;
        }
        gk_strvec_push(&out->masks, n);
    }

    /* File masks bind this host's /dev/null: it must be the device. */
    struct stat null_st;
    if (!b->offline && file_masks &&
        (stat("/dev/null", &null_st) < 0 || !S_ISCHR(null_st.st_mode)))
        gk_diag_file(b->notes, GK_WARNING, NOTE_FILE,
                     "/dev/null on this host is not a character device: the file masks bind "
                     "whatever it holds");

    /* The sandbox root is bwrap's own tmpfs, writable by the command: names
     * outside every region could be created there (private, but the gate
     * refuses them). Every mountpoint exists by now. */
    if (b->pr->fs_restricted)
        push2(late, "--remount-ro", "/");

    const char *cwd = b->ctx->cwd;
    if (cwd) {
        if (!cwd_visible(b, cwd))
            gk_diag_file(b->notes, GK_WARNING, NOTE_FILE,
                         "the working directory %s is not visible in the sandbox: bwrap will "
                         "refuse to start (--chdir)",
                         cwd);
        push2(late, "--chdir", cwd);
    }
}

/* What bwrap leaves to the rest of grantrun. */
static void plan_left_over(const gk_emit_input *in, grant_diags *notes)
{
    const gk_projection *pr = in->proj;
    if (pr->exec_restricted)
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "bwrap does not restrict exec: the allow-list is applied by Landlock "
                     "(grantrun); vetoed files are masked");
    if (any_subcommands(in->policy))
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "subcommand lists (allow X [a b]) are enforced only by the gate: no OS "
                     "backend sees arguments");
    if (pr->fs_restricted && pr->implicit.devices.n)
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "--dev also provides /dev/full, /dev/ptmx and /dev/pts beyond the target's "
                     "device list; Landlock (grantrun) grants only the listed devices");
}

static void plan_build(const gk_emit_input *in, grant_diags *notes, gk_bwrap_plan *out,
                       bool with_masks)
{
    memset(out, 0, sizeof(*out));
    builder b = {0};
    b.pr = in->proj;
    b.ctx = gk_policy_context(in->policy);
    b.policy = in->policy;
    b.notes = notes;
    b.offline = gk_target_is_offline(b.ctx);
    b.scratch_at = in->launch ? in->launch->scratch_at : NULL;
    b.scratch = in->launch && b.scratch_at ? in->launch->scratch : NULL;

    plan_namespaces(b.pr, in->launch, &out->options);
    plan_environment(b.ctx, in->launch, &out->options);
    if (b.offline)
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "offline target: nothing on this host is examined; merged /usr is assumed "
                     "(/bin, /sbin, /lib, /lib32, /lib64 are symlinks into /usr) and every "
                     "readonly entry, pinned dir and vetoed file is assumed to exist");
    plan_mounts(&b, with_masks);
    for (size_t i = 0; i < b.n; i++)
        emit_mount(&out->options, &b.m[i]);
    plan_late_options(&b, out);
    gk_strvec_free(&b.scratch_ro);
    plan_left_over(in, notes);

    if (b.placeholders.n > 1)
        qsort(b.placeholders.v, b.placeholders.n, sizeof(char *), placeholder_cmp);
    out->placeholders = b.placeholders;
    out->mounts = b.m;
    out->nmounts = b.n;
    out->offline = b.offline;
    for (size_t i = 0; i < b.nmasks; i++)
        free(b.masks[i].name);
    free(b.masks);
    index_drop(&b);
}

void gk_bwrap_plan_build(const gk_emit_input *in, grant_diags *notes, gk_bwrap_plan *out)
{
    plan_build(in, notes, out, true);
}

void gk_bwrap_plan_build_mounts(const gk_emit_input *in, grant_diags *notes, gk_bwrap_plan *out)
{
    plan_build(in, notes, out, false);
}

void gk_bwrap_plan_options(const gk_bwrap_plan *p, const gk_strvec *slot, gk_strvec *out)
{
    gk_strvec_copy(out, &p->options);
    if (slot)
        gk_strvec_copy(out, slot);
    gk_strvec_copy(out, &p->late_options);
}

void gk_bwrap_plan_free(gk_bwrap_plan *p)
{
    if (!p)
        return;
    gk_strvec_free(&p->options);
    gk_strvec_free(&p->late_options);
    gk_strvec_free(&p->placeholders);
    gk_strvec_free(&p->masks);
    for (size_t i = 0; i < p->nmounts; i++)
        mount_free(&p->mounts[i]);
    free(p->mounts);
    memset(p, 0, sizeof(*p));
}

/* ---- formats ----------------------------------------------------------- */

/* Characters no POSIX shell treats specially in an unquoted word. */
static bool shell_safe(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *s))
            return false;
    return true;
}

static void shell_word(gk_buf *out, const char *s)
{
    if (shell_safe(s)) {
        gk_buf_puts(out, s);
        return;
    }
    gk_buf_putc(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            gk_buf_puts(out, "'\\''");
        else
            gk_buf_putc(out, *s);
    }
    gk_buf_putc(out, '\'');
}

int gk_emit_bwrap(const gk_emit_input *in, grant_diags *notes, gk_buf *out)
{
    const char *f = in->format;
    if (strcmp(f, "shell") != 0 && strcmp(f, "json") != 0 && strcmp(f, "argv0") != 0)
        return -EINVAL;
    if (strcmp(gk_target_name(in->policy->ctx), "linux") != 0)
        return -ENOTSUP; /* a Linux sandbox for a policy frozen for another OS */
    gk_bwrap_plan plan;
    gk_bwrap_plan_build(in, notes, &plan);
    if (in->proj->net_list)
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "net: the destination list is enforced by grantrun's proxy and relay, not "
                     "by these options: alone, --unshare-net gives the command no network at all "
                     "(net deny)");
    gk_strvec options = {0};
    gk_bwrap_plan_options(&plan, NULL, &options);
    const gk_strvec *a = &options;
    if (strcmp(f, "argv0") == 0) {
        for (size_t i = 0; i < a->n; i++)
            gk_buf_add(out, a->v[i], strlen(a->v[i]) + 1);
    } else if (strcmp(f, "json") == 0) {
        gk_json_out j;
        gk_json_init(&j, out, false);
        gk_json_array(&j);
        for (size_t i = 0; i < a->n; i++)
            gk_json_string(&j, a->v[i]);
        gk_json_end(&j);
        gk_buf_putc(out, '\n');
    } else {
        for (size_t i = 0; i < a->n; i++) {
            if (i)
                gk_buf_putc(out, ' ');
            shell_word(out, a->v[i]);
        }
        gk_buf_putc(out, '\n');
    }
    gk_strvec_free(&options);
    gk_bwrap_plan_free(&plan);
    return 0;
}
