/* landlock.c - the Landlock ruleset grantrun's helper applies (backends.md,
 * "Landlock ruleset"), as JSON:
 *
 *   {"abi":N,"handled_access_fs":[RIGHT...],"rules":[{"access":[RIGHT...],"path":P}...]}
 *
 * Keys in bytewise order, rules sorted by path, one rule per path, rights
 * in the kernel's bit order and named as the LANDLOCK_ACCESS_FS_* constants
 * in lower case ("read_file"). The rules mirror the mounts of the bwrap plan
 * (bwrap.h), so they name paths as the sandbox sees them: read rights on
 * every read-only bind, /proc and the implicit set; read and write rights
 * (with REFER, or a rename across directories fails with EXDEV) on every
 * writable bind and the private /tmp; the listed devices one by one;
 * EXECUTE only on the exec admits and the ELF interpreter (everywhere
 * readable when the stack does not restrict exec). A rule on a file keeps
 * only the rights that apply to files. Rights the ABI lacks are dropped.
 *
 * ABI: the host's (landlock_create_ruleset(NULL, 0, VERSION)) for a
 * host-target policy; 3 offline or when Landlock is unavailable. The
 * constants are defined here: Debian 12's headers stop at ABI 2.
 *
 * Landlock only adds rights, so a deny, readonly entry or exec veto inside
 * a granted tree cannot be expressed: each is a fidelity note (the bwrap
 * masks and read-only re-binds carry them).
 */
#include "backends/backend.h"
#include "common/json.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOTE_FILE "landlock"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#define GK_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define GK_LANDLOCK_DEFAULT_ABI 3

enum {
    LL_EXECUTE = 1 << 0,
    LL_WRITE_FILE = 1 << 1,
    LL_READ_FILE = 1 << 2,
    LL_READ_DIR = 1 << 3,
    LL_REMOVE_DIR = 1 << 4,
    LL_REMOVE_FILE = 1 << 5,
    LL_MAKE_CHAR = 1 << 6,
    LL_MAKE_DIR = 1 << 7,
    LL_MAKE_REG = 1 << 8,
    LL_MAKE_SOCK = 1 << 9,
    LL_MAKE_FIFO = 1 << 10,
    LL_MAKE_BLOCK = 1 << 11,
    LL_MAKE_SYM = 1 << 12,
    LL_REFER = 1 << 13,     /* ABI 2 */
    LL_TRUNCATE = 1 << 14,  /* ABI 3 */
    LL_IOCTL_DEV = 1 << 15, /* ABI 5 */
};

static const struct {
    const char *name;
    uint32_t bit;
    int abi;
} rights[] = {
    {"execute", LL_EXECUTE, 1},         {"write_file", LL_WRITE_FILE, 1},
    {"read_file", LL_READ_FILE, 1},     {"read_dir", LL_READ_DIR, 1},
    {"remove_dir", LL_REMOVE_DIR, 1},   {"remove_file", LL_REMOVE_FILE, 1},
    {"make_char", LL_MAKE_CHAR, 1},     {"make_dir", LL_MAKE_DIR, 1},
    {"make_reg", LL_MAKE_REG, 1},       {"make_sock", LL_MAKE_SOCK, 1},
    {"make_fifo", LL_MAKE_FIFO, 1},     {"make_block", LL_MAKE_BLOCK, 1},
    {"make_sym", LL_MAKE_SYM, 1},       {"refer", LL_REFER, 2},
    {"truncate", LL_TRUNCATE, 3},       {"ioctl_dev", LL_IOCTL_DEV, 5},
};
#define NRIGHTS (sizeof(rights) / sizeof(*rights))

#define R_READ (LL_READ_FILE | LL_READ_DIR)
/* Creating devices needs CAP_MKNOD, which the command never has: not
 * granted even where writes are. */
#define R_WRITE                                                                               \
    (LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | \
     LL_MAKE_FIFO | LL_MAKE_SYM | LL_TRUNCATE | LL_REFER)
#define R_DEVICE (LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV)
#define R_FILE_ONLY (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

/* The ELF interpreters, at their usual and their canonical (Debian
 * multiarch) spellings. On the host: those of this build's architecture
 * that exist; offline, where the target's architecture is unknown: both
 * architectures' (the helper skips a path that does not open). */
static const struct {
    const char *path;
    bool native;
} interpreter[] = {
#if defined(__aarch64__)
    {"/lib/ld-linux-aarch64.so.1", true},
    {"/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", true},
    {"/lib64/ld-linux-x86-64.so.2", false},
    {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", false},
#else
    {"/lib64/ld-linux-x86-64.so.2", true},
    {"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true},
    {"/lib/ld-linux-aarch64.so.1", false},
    {"/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", false},
#endif
};

typedef gk_ll_rule rule;
typedef gk_ll_ruleset ruleset;

static void grant(ruleset *rs, const char *path, uint32_t access, bool file)
{
    rule n = {gk_strdup(path), access, file};
    GK_VEC_PUSH(rs->v, rs->n, rs->cap, n);
}

static int rule_cmp(const void *a, const void *b)
{
    return gk_strcmp_bytes(((const rule *)a)->path, ((const rule *)b)->path);
}

/* Sort by path and merge the rules of one path (rights unite). */
static void merge(ruleset *rs)
{
    if (rs->n > 1)
        qsort(rs->v, rs->n, sizeof(*rs->v), rule_cmp);
    size_t w = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (w && strcmp(rs->v[w - 1].path, rs->v[i].path) == 0) {
            rs->v[w - 1].access |= rs->v[i].access;
            rs->v[w - 1].file &= rs->v[i].file;
            free(rs->v[i].path);
            continue;
        }
        rs->v[w++] = rs->v[i];
    }
    rs->n = w;
}

static const rule *find(const ruleset *rs, const char *p, size_t len)
{
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(rs->v[mid].path, p, len);
        if (!c)
            c = rs->v[mid].path[len] != '\0';
        if (c == 0)
            return &rs->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The innermost rule (of a merged set) whose path contains p and grants
 * any of `want`: "/", then each ancestor of p, then p, looked up. */
static const rule *covering(const ruleset *rs, const char *p, uint32_t want)
{
    const rule *best = NULL;
    size_t len = strlen(p);
    for (size_t k = 1; k <= len; k++) {
        if (k != 1 && k != len && p[k] != '/')
            continue;
        const rule *r = find(rs, p, k);
        if (r && (r->access & want))
            best = r;
    }
    return best;
}

int gk_landlock_abi_override;

static int host_abi(grant_diags *notes)
{
    if (gk_landlock_abi_override > 0)
        return gk_landlock_abi_override;
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, GK_LANDLOCK_CREATE_RULESET_VERSION);
    if (v >= 1)
        return (int)v;
    gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                 "Landlock is unavailable on this host (%s): ABI %d assumed; grantrun refuses "
                 "to run without --allow-degraded",
                 strerror(errno), GK_LANDLOCK_DEFAULT_ABI);
    return GK_LANDLOCK_DEFAULT_ABI;
}

/* p as the sandbox resolves bwrap's --symlink mounts (/lib64/x is
 * /usr/lib64/x under merged /usr). Caller frees. */
static char *through_links(const gk_bwrap_plan *plan, const char *p)
{
    char *cur = gk_strdup(p);
    for (int hops = 0; hops < 8; hops++) {
        const gk_mount *hit = NULL;
        for (size_t i = 0; i < plan->nmounts && !hit; i++)
            if (plan->mounts[i].link && gk_path_within(cur, plan->mounts[i].dest))
                hit = &plan->mounts[i];
        if (!hit)
            break;
        const char *rest = cur + strlen(hit->dest);
        char *next = gk_printf("%s%s", hit->link, rest);
        free(cur);
        cur = next;
    }
    return cur;
}

/* Rights on every mount of the plan. */
static void mount_rules(ruleset *rs, const gk_bwrap_plan *plan, bool offline, bool exec_all)
{
    for (size_t i = 0; i < plan->nmounts; i++) {
        const gk_mount *m = &plan->mounts[i];
        if (m->link)
            continue;
        /* On the host a -try bind of a missing source mounts nothing, and
         * the helper skips a rule whose path does not open. */
        if (!offline && m->host && m->flag && strstr(m->flag, "-try")) {
            struct stat st;
            if (stat(m->host, &st) < 0)
                continue;
        }
        uint32_t a = 0;
        switch (m->role) {
        case GK_MOUNT_SYSTEM:
            if (strcmp(m->flag, "--proc") == 0)
                a = R_READ;
            else if (strcmp(m->flag, "--dev") == 0)
                a = 0; /* devices are listed one by one */
            else if (strcmp(m->dest, "/") == 0)
                a = R_READ | R_WRITE | LL_IOCTL_DEV;
            else if (m->is_file)
                a = R_DEVICE; /* the discard device alone (--no-implicit) */
            else
                a = R_READ | R_WRITE;
            break;
        case GK_MOUNT_IMPLICIT:
        case GK_MOUNT_READ:
            a = R_READ;
            break;
        case GK_MOUNT_WRITE:
            a = R_READ | R_WRITE;
            break;
        case GK_MOUNT_DEVICE:
            a = m->is_file ? R_DEVICE : R_READ | R_WRITE;
            break;
        case GK_MOUNT_PIN:
        case GK_MOUNT_READONLY:
            a = 0; /* inside a write mount: rights cannot be taken back */
            break;
        }
        /* Unrestricted exec: whatever is readable may run (not devices). */
        if (exec_all && (a & LL_READ_FILE) && m->role != GK_MOUNT_DEVICE &&
            !(m->role == GK_MOUNT_SYSTEM && m->is_file))
            a |= LL_EXECUTE;
        if (a)
            grant(rs, m->dest, a, m->is_file);
    }
}

/* The rights ABI abi handles, with a note for each it lacks. */
static uint32_t handled_rights(int abi, bool offline, grant_diags *notes)
{
    if (offline)
        gk_diag_file(notes, GK_NOTE, NOTE_FILE,
                     "offline target: Landlock ABI %d is assumed; EXECUTE goes to the ELF "
                     "interpreters of x86-64 and aarch64; a region is taken for a file only if "
                     "its name looks like one",
                     abi);
    uint32_t handled = 0;
    for (size_t i = 0; i < NRIGHTS; i++)
        if (rights[i].abi <= abi)
            handled |= rights[i].bit;
    if (!(handled & LL_REFER))
        gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                     "Landlock ABI %d has no REFER right: renaming or linking across "
                     "directories fails with EXDEV",
                     abi);
    if (!(handled & LL_TRUNCATE))
        gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                     "Landlock ABI %d cannot restrict truncate(2) (bwrap's read-only binds still "
                     "refuse it)",
                     abi);
    return handled;
}

/* EXECUTE on the admits and the interpreter. */
static void exec_rules(ruleset *rs, const gk_emit_input *in, const gk_bwrap_plan *plan,
                       bool offline)
{
    const gk_projection *pr = in->proj;
    gk_strvec exe = {0};
    gk_strvec_copy(&exe, &pr->exec_admit);
    for (size_t i = 0; i < sizeof(interpreter) / sizeof(*interpreter); i++) {
        struct stat st;
        if (offline || (interpreter[i].native && stat(interpreter[i].path, &st) == 0))
            gk_strvec_push(&exe, interpreter[i].path);
    }
    gk_strvec_sort_unique(&exe);
    size_t mounted = rs->n; /* covering() reads only the sorted part */
    for (size_t i = 0; i < exe.n; i++) {
        const char *a = exe.v[i];
        /* Only what the sandbox shows can be run at all. */
        gk_autofree char *seen = through_links(plan, a);
        ruleset sorted = {.v = rs->v, .n = mounted, .cap = rs->cap};
        if (!covering(&sorted, seen, LL_READ_FILE))
            continue;
        bool file;
        if (offline) {
            file = !gk_stack_names_exec_dir(&in->policy->stack, a, false);
        } else {
            struct stat st;
            if (stat(a, &st) < 0)
                continue;
            file = !S_ISDIR(st.st_mode);
        }
        grant(rs, a, LL_EXECUTE, file);
    }
    gk_strvec_free(&exe);
    merge(rs);
}

/* What Landlock cannot take back inside a granted tree. */
static void nesting_notes(const ruleset *rs, const gk_emit_input *in, grant_diags *notes)
{
    const gk_projection *pr = in->proj;
    for (size_t i = 0; i < pr->deny.n; i++) {
        const char *d = pr->deny.v[i].p.real;
        const rule *r = covering(rs, d, ~0u);
        if (r)
            gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                         "deny %s inside %s: Landlock cannot express a deny inside an allow "
                         "(the bwrap mask carries it)",
                         d, r->path);
    }
    gk_strvec ro = {0};
    for (size_t i = 0; i < pr->readonly.n; i++)
        gk_strvec_push(&ro, pr->readonly.v[i].p.real);
    gk_strvec_copy(&ro, &pr->protect);
    gk_strvec_sort_unique(&ro);
    for (size_t i = 0; i < ro.n; i++) {
        const rule *r = covering(rs, ro.v[i], R_WRITE);
        if (r)
            gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                         "readonly %s inside writable %s: Landlock cannot take write rights back "
                         "(the bwrap read-only re-bind or mask carries it)",
                         ro.v[i], r->path);
    }
    gk_strvec_free(&ro);
    for (size_t i = 0; i < pr->exec_veto.n; i++) {
        const char *v = pr->exec_veto.v[i];
        const rule *r = covering(rs, v, LL_EXECUTE);
        if (!r)
            continue;
        if (gk_stack_names_exec_dir(&in->policy->stack, v, true))
            gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                         "exec veto of directory %s inside executable %s: neither Landlock nor "
                         "bwrap can express it; only the gate (the command grantrun starts) "
                         "enforces it",
                         v, r->path);
        else
            gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                         "exec veto %s inside executable %s: Landlock cannot carve it out (the "
                         "bwrap /dev/null mask carries it)",
                         v, r->path);
    }
}

/* Final rights: what the ABI handles, and on a file only file rights;
 * a rule left with none is dropped. */
static void final_rights(ruleset *rs, uint32_t handled)
{
    size_t w = 0;
    for (size_t i = 0; i < rs->n; i++) {
        uint32_t a = rs->v[i].access & handled;
        if (rs->v[i].file)
            a &= R_FILE_ONLY;
        if (!a) {
            free(rs->v[i].path);
            continue;
        }
        rs->v[w] = rs->v[i];
        rs->v[w++].access = a;
    }
    rs->n = w;
}

void gk_landlock_build_from(const gk_emit_input *in, const gk_bwrap_plan *given,
                            grant_diags *notes, gk_ll_ruleset *out)
{
    const gk_projection *pr = in->proj;
    bool offline = gk_target_is_offline(in->policy->ctx);
    int abi = offline ? GK_LANDLOCK_DEFAULT_ABI : host_abi(notes);
    uint32_t handled = handled_rights(abi, offline, notes);

    gk_bwrap_plan own;
    if (!given) {
        grant_diags *scratch = grant_diags_new(); /* the bwrap notes are bwrap's */
        gk_bwrap_plan_build_mounts(in, scratch, &own);
        grant_diags_free(scratch);
    }
    const gk_bwrap_plan *plan = given ? given : &own;

    ruleset rs = {0};
    rs.abi = abi;
    rs.handled = handled;
    mount_rules(&rs, plan, offline, !pr->exec_restricted);
    merge(&rs);
    if (pr->exec_restricted)
        exec_rules(&rs, in, plan, offline);
    nesting_notes(&rs, in, notes);
    final_rights(&rs, handled);
    if (!given)
        gk_bwrap_plan_free(&own);
    *out = rs;
}

void gk_landlock_build(const gk_emit_input *in, grant_diags *notes, gk_ll_ruleset *out)
{
    gk_landlock_build_from(in, NULL, notes, out);
}

void gk_landlock_free(gk_ll_ruleset *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free(rs->v[i].path);
    free(rs->v);
    memset(rs, 0, sizeof(*rs));
}

int gk_landlock_helper_text(const gk_ll_ruleset *rs, gk_buf *out)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strchr(rs->v[i].path, '\n'))
            return -EINVAL;
    gk_buf_printf(out, "grantkit-landlock 1\nabi %d\n", rs->abi);
    if (rs->scoped)
        gk_buf_printf(out, "scope %x\n", rs->scoped);
    gk_buf_printf(out, "handled %x\n", rs->handled);
    for (size_t i = 0; i < rs->n; i++)
        gk_buf_printf(out, "rule %x %c %s\n", rs->v[i].access, rs->v[i].file ? 'f' : 'd',
                      rs->v[i].path);
    return 0;
}

/* The names of the rights in mask, in the table's order. */
static void rights_json(gk_json_out *j, uint32_t mask)
{
    gk_json_array(j);
    for (size_t i = 0; i < NRIGHTS; i++)
        if (mask & rights[i].bit)
            gk_json_string(j, rights[i].name);
    gk_json_end(j);
}

int gk_emit_landlock(const gk_emit_input *in, grant_diags *notes, gk_buf *out)
{
    if (strcmp(in->format, "json") != 0)
        return -EINVAL;
    if (strcmp(gk_target_name(in->policy->ctx), "linux") != 0)
        return -ENOTSUP;
    gk_ll_ruleset rs;
    gk_landlock_build(in, notes, &rs);
    /* Rules are sorted by path; keys in bytewise order. */
    gk_json_out j;
    gk_json_init(&j, out, false);
    gk_json_object(&j);
    gk_json_key(&j, "abi");
    gk_json_int(&j, rs.abi);
    gk_json_key(&j, "handled_access_fs");
    rights_json(&j, rs.handled);
    gk_json_key(&j, "rules");
    gk_json_array(&j);
    for (size_t i = 0; i < rs.n; i++) {
        gk_json_object(&j);
        gk_json_key(&j, "access");
        rights_json(&j, rs.v[i].access);
        gk_json_key(&j, "path");
        gk_json_string(&j, rs.v[i].path);
        gk_json_end(&j);
    }
    gk_json_end(&j);
    gk_json_end(&j);
    gk_buf_putc(out, '\n');
    gk_landlock_free(&rs);
    return 0;
}
