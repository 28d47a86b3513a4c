/* enforcement.c - the enforcement record (see enforcement.h).
 *
 * One table per rule kind says what each level does with it; the rows are
 * the projection's entries (one per region, readonly, deny, veto), the
 * implicit grants, and the envelope's own properties. The landlock level's
 * semantics are grantrun(1)'s "Levels of confinement"; runtime/level.c
 * applies them.
 */
#include "analysis/enforcement.h"
#include "common/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

#define ABI_OFFLINE 3 /* what the Landlock emitter assumes for another machine */

static const char *const by_names[] = {"gate",     "mount",  "namespace", "landlock",
                                       "seccomp",  "rlimit", "supervisor"};
static const char *const status_names[] = {"enforced", "stricter", "weaker", "not-enforced"};

const char *grant_level_name(grant_level l)
{
    return l == GRANT_LEVEL_LANDLOCK ? "landlock" : "namespaces";
}

int grant_level_from_name(const char *name, grant_level *out)
{
    if (gk_str_eq(name, "namespaces"))
        *out = GRANT_LEVEL_NAMESPACES;
    else if (gk_str_eq(name, "landlock"))
        *out = GRANT_LEVEL_LANDLOCK;
    else
        return -EINVAL;
    return 0;
}

int gk_enforcement_host_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* VERSION */);
    return v > 0 ? (int)v : 0;
}

static void row(grant_enforcement *e, bool policy, const char *kind, const char *origin,
                unsigned by, gk_enf_status st, char *why, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void row(grant_enforcement *e, bool policy, const char *kind, const char *origin,
                unsigned by, gk_enf_status st, char *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        abort();
    va_end(ap);
    gk_enf_row r = {text, kind, gk_strdup(origin ? origin : "policy"), policy,
                    by, st, why};
    GK_VEC_PUSH(e->v, e->n, e->cap, r);
}

static bool within_regions(const gk_regions *r, const char *p)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(p, r->v[i].p.real))
            return true;
    return false;
}

static bool within_list(const gk_strvec *v, const char *p)
{
    for (size_t i = 0; i < v->n; i++)
        if (gk_path_within(p, v->v[i]))
            return true;
    return false;
}

/* A region's real spelling once (regions hold both spellings). */
static bool seen_before(const gk_regions *r, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(r->v[k].p.real, r->v[i].p.real) == 0)
            return true;
    return false;
}

typedef struct ctx {
    grant_enforcement *e;
    const gk_projection *pr;
    bool ll;      /* the landlock level */
    int abi;
    bool no_landlock; /* abi 0 */
    bool host;        /* compiled for this host: its files can be asked */
} ctx;

/* Landlock's share of a rule, or "not enforced" where the kernel has none. */
static gk_enf_status ll_only(const ctx *c, gk_enf_status st, char **why)
{
    if (!c->no_landlock)
        return st;
    free(*why);
    *why = gk_strdup("Landlock is unavailable on this kernel");
    return GK_ENF_NOT_ENFORCED;
}

static void fs_rows(ctx *c)
{
    const gk_projection *pr = c->pr;
    grant_enforcement *e = c->e;
    if (!pr->fs_restricted) {
        row(e, true, "fs.all", "policy", c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT, GK_ENF_ENFORCED,
            NULL, "fs unrestricted (every path readable and writable by permission)");
    }
    for (size_t i = 0; i < pr->write.n; i++) {
        if (seen_before(&pr->write, i))
            continue;
        char *why = NULL;
        gk_enf_status st = c->ll ? ll_only(c, GK_ENF_ENFORCED, &why) : GK_ENF_ENFORCED;
        row(e, true, "fs.write", pr->write.v[i].origin,
            c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT | GK_BY_LANDLOCK, st, why, "write %s",
            pr->write.v[i].p.real);
    }
    for (size_t i = 0; i < pr->read.n; i++) {
        const char *r = pr->read.v[i].p.real;
        if (seen_before(&pr->read, i) || within_regions(&pr->write, r))
            continue;
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        if (c->ll && c->abi > 0 && c->abi < 3) {
            st = GK_ENF_NOT_ENFORCED;
            why = gk_printf("Landlock ABI %d cannot refuse truncate(2) (ABI 3)", c->abi);
        } else if (c->ll) {
            st = ll_only(c, st, &why);
        }
        row(e, true, "fs.read", pr->read.v[i].origin,
            c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT | GK_BY_LANDLOCK, st, why, "read %s", r);
    }
    /* readonly entries and the policy's own sources */
    gk_strvec ro = {0}, ro_origin = {0};
    for (size_t i = 0; i < pr->readonly.n; i++)
        if (!seen_before(&pr->readonly, i)) {
            gk_strvec_push(&ro, pr->readonly.v[i].p.real);
            gk_strvec_push(&ro_origin, pr->readonly.v[i].origin);
        }
    for (size_t i = 0; i < pr->protect.n; i++) {
        gk_strvec_push(&ro, pr->protect.v[i]);
        gk_strvec_push(&ro_origin, "policy-source");
    }
    for (size_t i = 0; i < ro.n; i++) {
        bool inside = within_regions(&pr->write, ro.v[i]) || !pr->fs_restricted;
        bool source = strcmp(ro_origin.v[i], "policy-source") == 0;
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        unsigned by = c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT;
        if (!inside) {
            why = gk_strdup("no write region holds it: nothing grants a write there");
            if (c->ll)
                st = ll_only(c, st, &why);
        } else if (c->ll) {
            st = GK_ENF_STRICTER;
            why = gk_strdup("Landlock cannot take a right back inside a grant: the write rights "
                            "go to each existing entry around it instead, so the directories "
                            "between the write region and it take no new entries, removals or "
                            "renames, and what the host adds there later is unreachable");
            st = ll_only(c, st, &why);
        }
        /* A file of several names: the re-bind (or carve) holds this one,
         * and another in a write region writes the same file. */
        struct stat fst;
        if (inside && c->host && lstat(ro.v[i], &fst) == 0 && S_ISREG(fst.st_mode) &&
            fst.st_nlink > 1) {
            st = GK_ENF_NOT_ENFORCED;
            free(why);
            why = gk_printf("the file has %lu names (hard links): one of them in a write "
                            "region would change it",
                            (unsigned long)fst.st_nlink);
        }
        row(e, true, source ? "fs.source" : "fs.readonly", ro_origin.v[i], by, st, why,
            "readonly %s%s", ro.v[i], source ? " (policy source)" : "");
    }
    gk_strvec_free(&ro);
    gk_strvec_free(&ro_origin);
    for (size_t i = 0; i < pr->deny.n; i++) {
        if (seen_before(&pr->deny, i))
            continue;
        const char *d = pr->deny.v[i].p.real;
        bool inside = within_regions(&pr->read, d) || !pr->fs_restricted;
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        if (!inside) {
            why = gk_strdup("no region holds it: nothing grants access there");
            if (c->ll)
                st = ll_only(c, st, &why);
        } else if (c->ll) {
            st = GK_ENF_WEAKER;
            why = gk_strdup("no mask without a mount namespace: reads and writes fail with "
                            "EACCES instead of the entry being invisible, and its name and "
                            "metadata (stat) stay visible; the directories between the region "
                            "and it can neither be listed nor take new entries (the rights go "
                            "to each existing entry around it)");
            st = ll_only(c, st, &why);
        }
        row(e, true, "fs.deny", pr->deny.v[i].origin, c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT, st,
            why, "deny %s", d);
    }
}

static void exec_rows(ctx *c, const grant_policy *p)
{
    const gk_projection *pr = c->pr;
    grant_enforcement *e = c->e;
    if (pr->exec_restricted) {
        char *why = NULL;
        why = gk_strdup("EXECUTE only on the admitted programs and the ELF interpreter; the "
                        "interpreter still loads a readable program that is not admitted "
                        "(ld.so PROGRAM, audit GK008), at both levels");
        gk_enf_status st = ll_only(c, GK_ENF_ENFORCED, &why);
        row(e, true, "exec.allow", "policy", GK_BY_GATE | GK_BY_LANDLOCK, st, why,
            "exec allow-list (%zu programs and directories)", pr->exec_admit.n);
        bool writes = pr->write.n > 0 || !pr->fs_restricted;
        if (writes) {
            why = NULL;
            st = GK_ENF_ENFORCED;
            unsigned by = GK_BY_MOUNT | GK_BY_LANDLOCK;
            if (!pr->fs_restricted) {
                st = GK_ENF_NOT_ENFORCED;
                why = gk_strdup("exec is restricted but fs is not: with the host root writable, "
                                "a file the command writes could still be run through the ELF "
                                "loader; grant fs regions (read/write) or drop the exec "
                                "allow-list");
            } else if (c->ll) {
                by = GK_BY_LANDLOCK;
                st = GK_ENF_WEAKER;
                why = gk_strdup("no noexec mount without a mount namespace: EXECUTE is never "
                                "granted in a write region unless admitted, but the ELF loader "
                                "maps a written file without it (ld.so ./file runs it)");
                st = ll_only(c, st, &why);
            }
            row(e, true, "exec.written", "policy", by, st, why,
                "written files are not executable");
        }
    }
    for (size_t i = 0; i < pr->exec_veto.n; i++) {
        const char *v = pr->exec_veto.v[i];
        bool runnable = pr->exec_restricted ? within_list(&pr->exec_admit, v)
                                            : within_regions(&pr->read, v) || !pr->fs_restricted;
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        unsigned by = GK_BY_GATE;
        if (!runnable) {
            why = gk_strdup("nothing admits it below the gate");
            by |= GK_BY_LANDLOCK;
            if (pr->exec_restricted || c->ll)
                st = ll_only(c, st, &why);
        } else if (c->ll) {
            by |= GK_BY_LANDLOCK;
            why = gk_strdup("EXECUTE and READ_FILE are withheld from it (neither run, nor "
                            "loaded, nor copied) and go to each existing entry around it");
            st = ll_only(c, st, &why);
        } else if (gk_stack_names_exec_dir(&p->stack, v, true) && !pr->exec_restricted) {
            /* With an allow-list the projection scans every admitted dir
             * whole and masks each program below a vetoed one; without one
             * only PATH and the bin/sbin/libexec layout are scanned. */
            st = GK_ENF_WEAKER;
            why = gk_strdup("a vetoed directory with no exec allow-list: bwrap masks the "
                            "vetoed files the scan finds (PATH and the bin, sbin and libexec "
                            "dirs), and the namespaces level's Landlock rules cannot carve it "
                            "out, so elsewhere only the gate holds it");
        } else {
            by |= GK_BY_MOUNT;
        }
        row(e, true, "exec.veto", "policy", by, st, why, "exec veto %s", v);
    }
}

/* allow X [sub...]: no OS backend sees arguments. */
static void subcommand_rows(ctx *c, const grant_policy *p)
{
    for (size_t l = 0; l < p->stack.n; l++) {
        const gk_layer *f = p->stack.v[l];
        if (!f->has_exec)
            continue;
        const gk_admits *lists[] = {&f->exec.names, &f->exec.files};
        for (size_t k = 0; k < 2; k++)
            for (size_t i = 0; i < lists[k]->n; i++) {
                const gk_admit *a = &lists[k]->v[i];
                if (a->all)
                    continue;
                row(c->e, true, "exec.subcommands", a->origin, GK_BY_GATE, GK_ENF_ENFORCED,
                    gk_strdup("by the gate, for the command grantrun starts: no OS backend "
                              "sees arguments, so a program the command runs may start it "
                              "with others (the same at both levels)"),
                    "allow %s [%zu subcommands]", a->key, a->subs.n);
            }
    }
}

static void implicit_rows(ctx *c)
{
    const gk_projection *pr = c->pr;
    grant_enforcement *e = c->e;
    if (!pr->has_implicit || !pr->fs_restricted)
        return;
    const gk_implicit *im = &pr->implicit;
    for (size_t i = 0; i < im->read.n; i++) {
        char *why = NULL;
        gk_enf_status st = c->ll ? ll_only(c, GK_ENF_ENFORCED, &why) : GK_ENF_ENFORCED;
        row(e, true, "implicit.read", "implicit:linux",
            c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT | GK_BY_LANDLOCK, st, why, "read %s (implicit)",
            im->read.v[i]);
    }
    for (size_t i = 0; i < im->write.n; i++) {
        bool granted = within_regions(&pr->write, im->write.v[i]);
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        if (c->ll && !granted) {
            st = GK_ENF_STRICTER;
            why = gk_printf("no private %s without a mount namespace: a fresh directory "
                            "(mode 0700) made for the run is its TMPDIR, and the host's %s is "
                            "unreachable",
                            im->write.v[i], im->write.v[i]);
            st = ll_only(c, st, &why);
        } else if (c->ll) {
            why = gk_printf("a write region of the policy: the host's %s", im->write.v[i]);
        }
        row(e, true, "implicit.tmp", "implicit:linux",
            c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT | GK_BY_LANDLOCK, st, why,
            "private %s (implicit)", im->write.v[i]);
    }
    if (im->devices.n) {
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        if (c->ll) {
            st = GK_ENF_STRICTER;
            why = gk_strdup("the host's /dev: only the listed devices are granted; no private "
                            "/dev/shm (POSIX shared memory fails), no /dev/pts beyond the "
                            "inherited terminal");
            st = ll_only(c, st, &why);
        }
        row(e, true, "implicit.dev", "implicit:linux",
            c->ll ? GK_BY_LANDLOCK : GK_BY_MOUNT | GK_BY_LANDLOCK, st, why,
            "/dev: %zu devices (implicit)", im->devices.n);
    }
}

static void net_rows(ctx *c)
{
    grant_enforcement *e = c->e;
    const gk_projection *pr = c->pr;
    if (pr->net_list) {
        /* Destination lists (network.md §2): the namespaces level's own
         * network namespace has no route out and grantrun's proxy decides
         * each connection; the landlock level has no namespace for the
         * relay: TCP and UDP are refused as for net deny, and the proxy is
         * reached through its Unix socket only, by the programs that can
         * (runtime/unixnet.h). */
        if (c->ll)
            row(e, true, "net.list", "policy",
                GK_BY_SECCOMP | GK_BY_SUPERVISOR | (c->abi >= 4 ? GK_BY_LANDLOCK : 0),
                GK_ENF_STRICTER,
                gk_strdup("no relay at this level: TCP and UDP are refused as for net deny; "
                          "grantrun's proxy decides each connection, reached only through its "
                          "Unix socket (GRANTKIT_PROXY_SOCKET; ALL_PROXY=socks5h://localhost/"
                          "PATH, no HTTP_PROXY): only programs that use a SOCKS5 proxy on a "
                          "Unix socket (curl 7.84 and later) reach an allowed destination, "
                          "others fail closed"),
                "net destination lists (%zu allowed, %zu denied)", pr->net_allow.n,
                pr->net_deny.n);
        else
            row(e, true, "net.list", "policy", GK_BY_NAMESPACE | GK_BY_SUPERVISOR | GK_BY_SECCOMP,
                GK_ENF_ENFORCED,
                gk_strdup("the envelope's network namespace has no route out; grantrun's proxy "
                          "on the host side decides each connection and each plain-HTTP request"),
                "net destination lists (%zu allowed, %zu denied)", pr->net_allow.n,
                pr->net_deny.n);
    } else if (!pr->net) {
        char *why = NULL;
        unsigned by = c->ll ? GK_BY_SECCOMP : GK_BY_NAMESPACE | GK_BY_SECCOMP;
        if (c->ll && c->abi >= 4)
            by |= GK_BY_LANDLOCK;
        if (c->ll)
            why = gk_strdup(c->abi >= 4 ? "socket() of every family but AF_UNIX refused; TCP "
                                          "bind and connect handled and denied by Landlock"
                                        : "socket() of every family but AF_UNIX refused");
        row(e, true, "net.deny", "policy", by, GK_ENF_ENFORCED, why, "net deny");
    }
    /* Unix sockets of the host: a mount namespace shows only the regions;
     * without one, connect(2) to a socket file is out of Landlock's reach
     * (ABI <= 7), so the landlock level refuses AF_UNIX sockets outright. */
    {
        char *why = NULL;
        gk_enf_status st = GK_ENF_ENFORCED;
        unsigned by = GK_BY_MOUNT;
        if (c->ll && pr->net_list) {
            st = GK_ENF_STRICTER;
            by = GK_BY_SECCOMP | GK_BY_SUPERVISOR;
            why = gk_strdup("Landlock cannot refuse connect(2) to a socket file: grantrun's "
                            "supervisor answers every connect(2), and connects only the proxy's "
                            "socket (EACCES for any other address, even one in a readable "
                            "region); Unix sockets other than stream ones, bind(2) and datagram "
                            "socketpairs are refused");
        } else if (c->ll) {
            st = GK_ENF_STRICTER;
            by = GK_BY_SECCOMP;
            why = gk_strdup("Landlock cannot refuse connect(2) to a socket file: socket(AF_UNIX) "
                            "is refused outright, so no Unix socket is reachable, not even one "
                            "in a readable region (socketpair(2) works, but not of datagrams, "
                            "whose sendto(2) reaches any datagram socket file)");
        }
        row(e, true, "net.unix", "implicit:linux", by, st, why,
            "Unix socket files outside the readable regions unreachable");
    }
}

/* What Landlock has no right for: metadata of files outside the write
 * regions (a read-only bind refuses it at the namespaces level). */
static void metadata_rows(ctx *c)
{
    bool ll = c->ll;
    row(c->e, true, "fs.metadata", "policy", ll ? GK_BY_SECCOMP : GK_BY_MOUNT,
        ll ? GK_ENF_STRICTER : GK_ENF_ENFORCED,
        ll ? gk_strdup("Landlock has no right for chmod, chown, extended attributes or inode "
                       "flags (chattr): they are refused everywhere, in the write regions too")
           : NULL,
        "no mode, owner or xattr change outside the write regions");
    row(c->e, false, "fs.times", "envelope", ll ? GK_BY_SECCOMP : GK_BY_MOUNT,
        ll ? GK_ENF_WEAKER : GK_ENF_ENFORCED,
        ll ? gk_strdup("Landlock has no right for file times: explicit times are refused "
                       "everywhere, but a file's times can be set to now (touch) wherever "
                       "its permissions allow")
           : NULL,
        "no file times changed outside the write regions");
}

static void envelope_rows(ctx *c, const gk_enf_host *h)
{
    grant_enforcement *e = c->e;
    const gk_projection *pr = c->pr;
    bool ll = c->ll;
    if (ll) {
        if (c->abi >= 6)
            row(e, false, "envelope.signal", "envelope", GK_BY_LANDLOCK, GK_ENF_ENFORCED,
                gk_strdup("Landlock's signal scope (ABI 6)"), "no signal to host processes");
        else
            row(e, false, "envelope.signal", "envelope", 0, GK_ENF_NOT_ENFORCED,
                gk_printf("Landlock ABI %d has no signal scope (ABI 6): the command could "
                          "signal every process of its user",
                          c->abi),
                "no signal to host processes");
    } else {
        row(e, false, "envelope.signal", "envelope", GK_BY_NAMESPACE, GK_ENF_ENFORCED, NULL,
            "no signal to host processes");
    }
    row(e, false, "envelope.ptrace", "envelope",
        GK_BY_SECCOMP | (ll ? (c->no_landlock ? 0 : GK_BY_LANDLOCK) : GK_BY_NAMESPACE),
        GK_ENF_ENFORCED, NULL, "no ptrace of host processes");
    row(e, false, "envelope.visible", "envelope", ll ? 0 : GK_BY_NAMESPACE,
        ll ? GK_ENF_WEAKER : GK_ENF_ENFORCED,
        ll ? gk_strdup("no pid namespace: host processes are listed in /proc (their memory, "
                       "environment and descriptors stay closed: Landlock's ptrace rule)")
           : NULL,
        "host processes invisible");
    if (ll) {
        const char *how = pr->net_list ? "grantrun's supervisor refuses connect(2) to an "
                                         "abstract address"
                                       : "socket(AF_UNIX) refused";
        row(e, false, "envelope.abstract", "envelope",
            GK_BY_SECCOMP | (pr->net_list ? GK_BY_SUPERVISOR : 0) |
                (c->abi >= 6 ? GK_BY_LANDLOCK : 0),
            GK_ENF_ENFORCED,
            c->abi >= 6 ? gk_printf("%s, and Landlock's abstract socket scope (ABI 6)", how)
                        : gk_strdup(how),
            "host abstract Unix sockets unreachable");
    } else {
        /* With net allowed the host's network namespace is shared: the
         * abstract-socket scope (ABI 6) stands for it (launch.c). */
        bool scoped = pr->net && c->abi >= 6;
        row(e, false, "envelope.abstract", "envelope",
            !pr->net ? GK_BY_NAMESPACE : scoped ? GK_BY_LANDLOCK : 0,
            pr->net && !scoped ? GK_ENF_WEAKER : GK_ENF_ENFORCED,
            scoped ? gk_strdup("with net allowed the envelope shares the host's network "
                               "namespace: Landlock's abstract socket scope (ABI 6)")
            : pr->net ? gk_printf("with net allowed the envelope shares the host's network "
                                  "namespace, and its abstract sockets (Landlock ABI %d has no "
                                  "abstract socket scope, ABI 6)",
                                  c->abi)
                      : NULL,
            "host abstract Unix sockets unreachable");
    }
    row(e, false, "envelope.ipc", "envelope", ll ? 0 : GK_BY_NAMESPACE,
        ll ? GK_ENF_WEAKER : GK_ENF_ENFORCED,
        ll ? gk_strdup("no ipc namespace: the host's SysV IPC objects and POSIX message queues "
                       "are reachable by their permissions")
           : NULL,
        "host SysV IPC unreachable");
    row(e, false, "envelope.tiocsti", "envelope", GK_BY_SECCOMP, GK_ENF_ENFORCED, NULL,
        "no TIOCSTI or TIOCLINUX");
    row(e, false, "envelope.userns", "envelope", GK_BY_SECCOMP, GK_ENF_ENFORCED, NULL,
        "no new user namespace");
    row(e, false, "envelope.privileges", "envelope", GK_BY_SECCOMP, GK_ENF_ENFORCED,
        gk_strdup("no_new_privs, no capability, no setuid or setgid bit on anything written"),
        "no privilege gained");
    row(e, false, "envelope.kill", "envelope", ll ? GK_BY_SUPERVISOR : GK_BY_NAMESPACE,
        GK_ENF_ENFORCED,
        ll ? gk_strdup("grantrun is the run's subreaper and kills every process left of it "
                       "(a process that leaves the subtree by a double fork stays ours); a "
                       "keeper process between grantrun and the helper does it if grantrun "
                       "itself is killed")
           : NULL,
        "every process of the run ends with it");
    if (h->processes > 0) {
        bool held = !h->root;
        row(e, true, "limit.processes", "grantrun", GK_BY_RLIMIT,
            !held ? GK_ENF_NOT_ENFORCED : ll ? GK_ENF_STRICTER : GK_ENF_ENFORCED,
            !held ? gk_strdup("the kernel never applies RLIMIT_NPROC to uid 0")
            : ll  ? gk_strdup("RLIMIT_NPROC counts every process of the user on the host")
                  : NULL,
            "--processes %ld", h->processes);
    }
    if (h->scratch) {
        row(e, true, "scratch.root", "grantrun", ll ? GK_BY_LANDLOCK : GK_BY_MOUNT,
            GK_ENF_ENFORCED,
            ll ? gk_strdup("a fresh private host directory (mode 0700) granted by Landlock "
                           "instead of a tmpfs")
               : NULL,
            "a private scratch tree");
        const struct {
            const char *kind, *flag;
            long v;
        } quotas[] = {{"scratch.quota", "--fs-quota", h->fs_quota},
                      {"scratch.nodes", "--fs-nodes", h->fs_nodes}};
        for (size_t i = 0; i < 2; i++)
            if (quotas[i].v > 0)
                row(e, true, quotas[i].kind, "grantrun", ll ? 0 : GK_BY_MOUNT,
                    ll ? GK_ENF_NOT_ENFORCED : GK_ENF_ENFORCED,
                    ll ? gk_strdup("no tmpfs without a mount namespace: nothing bounds a host "
                                   "directory")
                       : NULL,
                    "%s %ld", quotas[i].flag, quotas[i].v);
    }
    if (h->cpu_seconds > 0)
        row(e, true, "limit.cpu", "grantrun", GK_BY_RLIMIT, GK_ENF_ENFORCED, NULL, "--cpu %ld",
            h->cpu_seconds);
    if (h->memory_bytes > 0)
        row(e, true, "limit.memory", "grantrun", GK_BY_RLIMIT, GK_ENF_ENFORCED, NULL,
            "--memory %ld", h->memory_bytes);
}

void gk_enforcement_derive(const grant_policy *p, const gk_projection *pr, grant_level level,
                           const gk_enf_host *host, grant_enforcement *out)
{
    memset(out, 0, sizeof(*out));
    out->level = level;
    out->landlock_abi = host->landlock_abi;
    ctx c = {out, pr, level == GRANT_LEVEL_LANDLOCK, host->landlock_abi,
             host->landlock_abi <= 0, !gk_target_is_offline(gk_policy_context(p))};
    fs_rows(&c);
    exec_rows(&c, p);
    subcommand_rows(&c, p);
    implicit_rows(&c);
    net_rows(&c);
    if (pr->fs_restricted)
        metadata_rows(&c);
    envelope_rows(&c, host);
}

void gk_enforcement_clear(grant_enforcement *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].rule);
        free(e->v[i].origin);
        free(e->v[i].why);
    }
    free(e->v);
    free(e->reason);
    free(e->bwrap_version);
    memset(e, 0, sizeof(*e));
}

void gk_enforcement_set_reason(grant_enforcement *e, const char *reason)
{
    free(e->reason);
    e->reason = reason ? gk_strdup(reason) : NULL;
}

void gk_enforcement_set_bwrap_version(grant_enforcement *e, const char *version)
{
    free(e->bwrap_version);
    e->bwrap_version = version ? gk_strdup(version) : NULL;
}

size_t gk_enforcement_unenforced(const grant_enforcement *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++)
        n += e->v[i].status == GK_ENF_NOT_ENFORCED;
    return n;
}

void gk_enforcement_unenforced_rules(const grant_enforcement *e, gk_strvec *out)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].status == GK_ENF_NOT_ENFORCED)
            gk_strvec_push(out, e->v[i].rule);
}

size_t gk_enforcement_lost(const grant_enforcement *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++)
        n += e->v[i].status == GK_ENF_NOT_ENFORCED ||
             (e->v[i].status == GK_ENF_WEAKER && e->v[i].policy);
    return n;
}

void gk_enforcement_list(const grant_enforcement *e, gk_enf_status min, bool policy_only,
                         gk_buf *out)
{
    for (size_t i = 0; i < e->n; i++) {
        const gk_enf_row *r = &e->v[i];
        if (r->status < min || (policy_only && !r->policy && r->status != GK_ENF_NOT_ENFORCED))
            continue;
        gk_buf_printf(out, "  - %s (%s): %s%s%s\n", r->rule, r->origin, status_names[r->status],
                      r->why ? ": " : "", r->why ? r->why : "");
    }
}

/* ---- public accessors ----------------------------------------------------- */

int grant_enforcement_derive(const grant_policy *p, grant_level level, grant_enforcement **out)
{
    *out = NULL;
    if (!p || (level != GRANT_LEVEL_NAMESPACES && level != GRANT_LEVEL_LANDLOCK))
        return -EINVAL;
    gk_projection *pr = gk_projection_build(p);
    gk_enf_host h = {0};
    h.landlock_abi = gk_target_is_offline(gk_policy_context(p)) ? ABI_OFFLINE
                                                                : gk_enforcement_host_abi();
    h.root = geteuid() == 0;
    grant_enforcement *e = gk_calloc(1, sizeof(*e));
    gk_enforcement_derive(p, pr, level, &h, e);
    gk_projection_free(pr);
    *out = e;
    return 0;
}

void grant_enforcement_free(grant_enforcement *e)
{
    if (!e)
        return;
    gk_enforcement_clear(e);
    free(e);
}

grant_level grant_enforcement_level(const grant_enforcement *e)
{
    return e->level;
}

size_t grant_enforcement_unenforced_count(const grant_enforcement *e)
{
    return gk_enforcement_unenforced(e);
}

size_t grant_enforcement_lost_count(const grant_enforcement *e)
{
    return gk_enforcement_lost(e);
}

static void unenforced_json(gk_json_out *j, const grant_enforcement *e)
{
    gk_strvec rules = {0};
    gk_enforcement_unenforced_rules(e, &rules);
    gk_json_key(j, "unenforced");
    gk_json_array(j);
    for (size_t i = 0; i < rules.n; i++)
        gk_json_string(j, rules.v[i]);
    gk_json_end(j);
    gk_strvec_free(&rules);
}

char *grant_enforcement_json(const grant_enforcement *e)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    gk_json_key(&j, "bwrapVersion");
    gk_json_string(&j, e->bwrap_version);
    gk_json_key(&j, "landlockAbi");
    gk_json_int(&j, e->landlock_abi);
    gk_json_key(&j, "level");
    gk_json_string(&j, grant_level_name(e->level));
    gk_json_key(&j, "reason");
    gk_json_string(&j, e->reason);
    gk_json_key(&j, "rules");
    gk_json_array(&j);
    for (size_t i = 0; i < e->n; i++) {
        const gk_enf_row *r = &e->v[i];
        gk_json_object(&j);
        gk_json_key(&j, "by");
        gk_json_array(&j);
        for (size_t k = 0; k < sizeof(by_names) / sizeof(*by_names); k++)
            if (r->by & (1u << k))
                gk_json_string(&j, by_names[k]);
        gk_json_end(&j);
        gk_json_key(&j, "kind");
        gk_json_string(&j, r->kind);
        gk_json_key(&j, "origin");
        gk_json_string(&j, r->origin);
        gk_json_key(&j, "policy");
        gk_json_bool(&j, r->policy);
        gk_json_key(&j, "rule");
        gk_json_string(&j, r->rule);
        gk_json_key(&j, "status");
        gk_json_string(&j, status_names[r->status]);
        gk_json_key(&j, "why");
        gk_json_string(&j, r->why);
        gk_json_end(&j);
    }
    gk_json_end(&j);
    unenforced_json(&j, e);
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

char *grant_enforcement_member_json(const grant_enforcement *e)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    gk_json_key(&j, "level");
    gk_json_string(&j, grant_level_name(e->level));
    unenforced_json(&j, e);
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

char *grant_enforcement_text(const grant_enforcement *e)
{
    gk_buf b = {0};
    gk_buf_printf(&b, "level %s, Landlock ABI %d%s%s\n", grant_level_name(e->level),
                  e->landlock_abi, e->reason ? ": " : "", e->reason ? e->reason : "");
    for (size_t i = 0; i < e->n; i++) {
        const gk_enf_row *r = &e->v[i];
        gk_buf by = {0};
        for (size_t k = 0; k < sizeof(by_names) / sizeof(*by_names); k++)
            if (r->by & (1u << k))
                gk_buf_printf(&by, "%s%s", by.len ? "+" : "", by_names[k]);
        gk_buf_printf(&b, "%-12s %-24s %s (%s)\n", status_names[r->status],
                      by.len ? by.data : "-", r->rule, r->origin);
        if (r->why)
            gk_buf_printf(&b, "%38s%s\n", "", r->why);
        gk_buf_free(&by);
    }
    size_t lost = gk_enforcement_lost(e), un = gk_enforcement_unenforced(e);
    gk_buf_printf(&b, "%zu rule%s lost at this level (%zu not enforced)\n", lost,
                  lost == 1 ? "" : "s", un);
    return gk_buf_steal(&b, NULL);
}
