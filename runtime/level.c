/* level.c - the level of confinement and the landlock level's launch (see
 * level.h).
 *
 * The landlock level's ruleset starts from the namespaces level's (the
 * Landlock emitter mirrors the bwrap plan, whose binds name host paths at
 * their own names) and changes what only a mount namespace could do:
 *   - no private /tmp or /dev/shm: their rules go (unless a region of the
 *     policy grants them), and a fresh directory (mode 0700) made for the
 *     run is the command's TMPDIR;
 *   - no masks and no read-only re-binds: each deny, readonly entry, policy
 *     source and exec veto inside a granted tree is carved out of it.
 *     Landlock only adds rights along a path, so a grant on a directory
 *     that holds a carve-out is replaced by rules on the directory (what it
 *     may keep) and on each existing entry around the carve-out (the rest);
 *   - net deny: TCP bind and connect handled with no rule (ABI 4); the
 *     abstract-socket and signal scopes (ABI 6); socket(AF_UNIX), datagram
 *     socketpairs, and changes of mode, owner, xattrs and explicit file
 *     times, refused by a third seccomp filter (Landlock has no right for
 *     them);
 *   - destination lists: as net deny, but the proxy (proxy.h) runs, on a
 *     socket in the run's TMPDIR and on an abstract address; the third
 *     filter admits Unix stream sockets, refuses bind(2) and sends every
 *     connect(2) to grantrun's supervisor (unixnet.h), which connects only
 *     the proxy's path, and there to the abstract address. The command
 *     gets GRANTKIT_PROXY_SOCKET and ALL_PROXY=socks5h://localhost/PATH;
 *     HTTP_PROXY and HTTPS_PROXY are unset (no client speaks HTTP to a
 *     proxy on a Unix socket), so what cannot use it fails closed.
 *
 * Descriptors of the helper: 3 the ruleset, 4-6 the seccomp filters (main,
 * mount, unix), 7 the status pipe, 8 (destination lists) the socket the
 * listener of the third filter goes to grantrun by.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/level.h"
#include "runtime/probe_memo.h"
#include "backends/backend.h"
#include "runtime/seccomp.h"
#include "runtime/unixnet.h"
#include "runtime/syscalls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* Landlock's access bits (kernel values; Debian 12's headers stop at ABI 2). */
enum {
    LL_EXECUTE = 1 << 0,
    LL_WRITE_FILE = 1 << 1,
    LL_READ_FILE = 1 << 2,
    LL_READ_DIR = 1 << 3,
    LL_MAKE_CHAR = 1 << 6,
    LL_MAKE_BLOCK = 1 << 11,
    LL_TRUNCATE = 1 << 14,
    LL_IOCTL_DEV = 1 << 15,
    LL_NET_BIND_TCP = 1 << 0,
    LL_NET_CONNECT_TCP = 1 << 1,
    LL_SCOPE_ABSTRACT_UNIX = 1 << 0,
    LL_SCOPE_SIGNAL = 1 << 1,
};
#define LL_ALL 0xffffu
#define LL_READ (LL_READ_FILE | LL_READ_DIR)
/* Every right but the read ones and EXECUTE: write, truncate, make, remove, refer. */
#define LL_WRITES (LL_ALL & ~(LL_READ | LL_EXECUTE | LL_IOCTL_DEV))
#define LL_FILE_ONLY (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

enum {
    HFD_LANDLOCK = 3,
    HFD_SECCOMP = 4,
    HFD_MOUNT = 5,
    HFD_UNIX = 6,
    HFD_STATUS = 7,
    HFD_NOTIFY = 8,
};
#define HFDS 6

#define PRIVATE_TMP_TEMPLATE "grantkit-run-XXXXXX"

static void probe_reap(pid_t pid);

void gk_level_result_clear(gk_level_result *r)
{
    gk_launch_result_clear(&r->run);
    if (r->have_record)
        gk_enforcement_clear(&r->record);
    if (r->pr)
        gk_projection_free(r->pr);
    if (r->held)
        gk_placeholders_release(&r->ph);
    probe_reap(r->probe_pid);
    memset(r, 0, sizeof(*r));
}

static void fail(gk_launch_result *out, int status, char *message)
{
    out->status = status;
    free(out->message);
    out->message = message;
}

/* ---- the probe ------------------------------------------------------------ */

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In a child: what bwrap does first. Exit status: 0, or the step (1-6)
 * that failed, the errno in the low byte of a status pipe. */
static void __attribute__((noreturn)) probe_child(bool net, bool light, int report_fd)
{
    int step = 1;
    uid_t uid = geteuid();
    gid_t gid = getegid();
    char map[64];
    int flags = CLONE_NEWUSER | CLONE_NEWNS;
    if (!light)
        flags |= CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    if (!net && !light)
        flags |= CLONE_NEWNET;
    if (unshare(flags) < 0)
        goto out;
    step = 2;
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_text("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
        goto out;
    if (write_text("/proc/self/uid_map", map) < 0)
        goto out;
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (write_text("/proc/self/gid_map", map) < 0)
        goto out;
    step = 3; /* bwrap: "Failed to make / slave" */
    if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        goto out;
    step = 4; /* its sandbox root is a tmpfs */
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, NULL) < 0 &&
        mount("tmpfs", "/", "tmpfs", MS_NOSUID | MS_NODEV, NULL) < 0)
        goto out;
    if (!net && !light) {
        step = 5; /* "loopback: Failed RTM_NEWADDR": the interface cannot come up */
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr;
        memset(&ifr, 0, sizeof(ifr));
        strcpy(ifr.ifr_name, "lo");
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
            goto out;
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
            goto out;
    }
    /* Said before the exit: the parent need not wait for the namespaces
     * to be torn down. */
    unsigned char ok[2] = {0, 0};
    if (write(report_fd, ok, 2) < 0) {
        /* the parent sees the exit status */
    }
    _exit(0);
out:;
    int err = errno;
    unsigned char b[2] = {(unsigned char)step, (unsigned char)err};
    if (write(report_fd, b, 2) < 0) {
        /* the parent sees a bare failure */
    }
    _exit(1);
}

/* A probe under way: the child works while the parent goes on (the
 * projection, about as long), so its cost is hidden on a second core, and
 * a network namespace it made is gone before bwrap makes its own. */
typedef struct probe_run {
    pid_t pid;      /* -1: none started; why says why, if anything */
    int fd;
    char *why;
} probe_run;

static void probe_start(bool net, bool light, probe_run *r)
{
    r->pid = -1;
    r->fd = -1;
    r->why = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        r->why = gk_printf("cannot probe: pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        probe_child(net, light, p[1]);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        r->why = gk_printf("cannot probe: fork: %s", strerror(errno));
        return;
    }
    r->pid = pid;
    r->fd = p[0];
}

/* 1 when the namespaces can be made; 0, *why says what failed. A child
 * that said yes may still be exiting: with reap_later its pid stays in r
 * for probe_reap, else it is waited for here. */
static int probe_finish(probe_run *r, bool reap_later, char **why)
{
    static const char *const steps[] = {"", "a new user namespace", "the user namespace's id maps",
                                        "making / a slave mount (mount propagation)",
                                        "a tmpfs mount", "bringing up loopback"};
    *why = r->why;
    r->why = NULL;
    if (r->pid < 0)
        return 0;
    unsigned char b[2] = {0, 0};
    ssize_t got;
    do
        got = read(r->fd, b, 2);
    while (got < 0 && errno == EINTR);
    close(r->fd);
    r->fd = -1;
    if (got == 2 && b[0] == 0 && reap_later)
        return 1;
    int st = 0;
    while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->pid = -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 1;
    if (got == 2 && b[0] >= 1 && b[0] <= 5)
        *why = gk_printf("user namespaces are refused here: %s failed: %s", steps[b[0]],
                         strerror(b[1]));
    else
        *why = gk_strdup("user namespaces are refused here: the probe failed");
    return 0;
}

static void probe_reap(pid_t pid)
{
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static int probe(bool net, bool light, char **why)
{
    probe_run r;
    probe_start(net, light, &r);
    return probe_finish(&r, false, why);
}

int gk_level_probe_namespaces(bool net, char **why)
{
    return probe(net, false, why);
}

int gk_level_probe_user_mount(char **why)
{
    return probe(true, true, why);
}

/* ---- the landlock level's ruleset ----------------------------------------- */

typedef struct carve {
    char *path;
    uint32_t subtree; /* rights withheld on it and below */
    uint32_t above;   /* rights withheld from the directories between a grant and it */
} carve;

typedef struct carves {
    carve *v;
    size_t n, cap;
} carves;

static void add_carve(carves *c, const char *path, uint32_t subtree, uint32_t above)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].path, path) == 0) {
            c->v[i].subtree |= subtree;
            c->v[i].above |= above;
            return;
        }
    carve k = {gk_strdup(path), subtree, above};
    GK_VEC_PUSH(c->v, c->n, c->cap, k);
}

static void carves_free(carves *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].path);
    free(c->v);
}

/* What the masks and read-only re-binds of the namespaces level do. */
static void collect_carves(const gk_projection *pr, carves *out)
{
    for (size_t i = 0; i < pr->deny.n; i++) {
        const char *d = pr->deny.v[i].p.real;
        struct stat st;
        /* A file's listing in its directory is no read of it: keep READ_DIR
         * above a denied file (and an absent one, which stays uncreatable). */
        bool dir = lstat(d, &st) == 0 && S_ISDIR(st.st_mode);
        add_carve(out, d, LL_ALL, dir ? LL_ALL : LL_ALL & ~LL_READ_DIR);
    }
    for (size_t i = 0; i < pr->readonly.n; i++)
        add_carve(out, pr->readonly.v[i].p.real, LL_WRITES, LL_WRITES);
    for (size_t i = 0; i < pr->protect.n; i++)
        add_carve(out, pr->protect.v[i], LL_WRITES, LL_WRITES);
    /* A protected name that is a symlink: its directory takes no removal
     * or new entry (the link gets no rule, explode). */
    for (size_t i = 0; i < pr->links.n; i++)
        add_carve(out, pr->links.v[i], LL_WRITES, LL_WRITES);
    /* A vetoed file can be neither executed nor loaded nor copied (the
     * namespaces level binds /dev/null over it). */
    for (size_t i = 0; i < pr->exec_veto.n; i++)
        add_carve(out, pr->exec_veto.v[i], LL_EXECUTE | LL_READ_FILE, LL_EXECUTE | LL_READ_FILE);
}

typedef struct rules {
    gk_ll_rule *v;
    size_t n, cap;
} rules;

static void push_rule(rules *r, const char *path, uint32_t access, bool file)
{
    if (file)
        access &= LL_FILE_ONLY;
    if (!access)
        return;
    gk_ll_rule k = {gk_strdup(path), access, file};
    GK_VEC_PUSH(r->v, r->n, r->cap, k);
}

static int rule_cmp(const void *a, const void *b)
{
    return strcmp(((const gk_ll_rule *)a)->path, ((const gk_ll_rule *)b)->path);
}

/* Each directory listed once per launch: (path, its entries). */
typedef struct listing {
    char *dir;
    gk_strvec names;   /* entry names, symlinks left out */
    gk_strvec is_file; /* "1" or "" per name */
} listing;

typedef struct listings {
    listing *v;
    size_t n, cap;
} listings;

static const listing *list_dir(listings *ls, const char *dir)
{
    for (size_t i = 0; i < ls->n; i++)
        if (strcmp(ls->v[i].dir, dir) == 0)
            return &ls->v[i];
    listing l = {gk_strdup(dir), {0}, {0}};
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unsigned char t = e->d_type;
        if (t == DT_UNKNOWN) {
            struct stat st;
            gk_autofree char *p = gk_path_join(dir, e->d_name);
            if (lstat(p, &st) < 0)
                continue;
            t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
        }
        /* A symlink needs no rule: Landlock checks the path it leads to. A
         * name holding a newline cannot go to the helper: it gets no rule
         * (unreachable, stricter) rather than refusing the run. */
        if (t == DT_LNK || strchr(e->d_name, '\n'))
            continue;
        gk_strvec_push(&l.names, e->d_name);
        gk_strvec_push(&l.is_file, t == DT_DIR ? "" : "1");
    }
    if (d)
        closedir(d);
    GK_VEC_PUSH(ls->v, ls->n, ls->cap, l);
    return &ls->v[ls->n - 1];
}

static void listings_free(listings *ls)
{
    for (size_t i = 0; i < ls->n; i++) {
        free(ls->v[i].dir);
        gk_strvec_free(&ls->v[i].names);
        gk_strvec_free(&ls->v[i].is_file);
    }
    free(ls->v);
}

/* One grant A (path, rights) with the carve-outs below it: the rule on
 * each directory of the tree from A down to each carve-out keeps what no
 * carve-out beneath it withholds; every other existing entry of such a
 * directory gets the rest. K(N) = A & ~subtree(at or above N) & ~above(of
 * those strictly below N) grows down the tree, so the rules' union along
 * any path is exactly what that path may have. */
static void explode(const gk_ll_rule *a, const carves *cs, listings *ls, rules *out)
{
    gk_strvec nodes = {0};
    uint32_t withheld_here = 0;
    for (size_t i = 0; i < cs->n; i++) {
        const char *c = cs->v[i].path;
        if (gk_path_within(a->path, c) && strcmp(a->path, c) != 0)
            withheld_here |= cs->v[i].subtree; /* a carve-out above the grant */
    }
    uint32_t access = a->access & ~withheld_here;
    for (size_t i = 0; i < cs->n; i++) {
        const char *c = cs->v[i].path;
        if (a->file || !gk_path_within(c, a->path) || strcmp(a->path, c) == 0 ||
            !(access & (cs->v[i].above | cs->v[i].subtree)))
            continue;
        /* every directory from A down to c, and c */
        size_t base = strlen(a->path);
        for (size_t k = base + 1; c[k - 1]; k++)
            if (c[k] == '/' || c[k] == '\0')
                gk_strvec_push_take(&nodes, gk_strndup(c, k));
    }
    /* a carve-out at A itself */
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(a->path, cs->v[i].path) == 0)
            access &= ~cs->v[i].subtree;
    if (!nodes.n) {
        push_rule(out, a->path, access, a->file);
        gk_strvec_free(&nodes);
        return;
    }
    gk_strvec_push(&nodes, a->path);
    gk_strvec_sort_unique(&nodes);
    for (size_t n = 0; n < nodes.n; n++) {
        const char *node = nodes.v[n];
        uint32_t t = access, k;
        for (size_t i = 0; i < cs->n; i++)
            if (gk_path_within(node, cs->v[i].path))
                t &= ~cs->v[i].subtree;
        k = t;
        bool interior = false;
        for (size_t i = 0; i < cs->n; i++)
            if (gk_path_within(cs->v[i].path, node) && strcmp(cs->v[i].path, node) != 0) {
                k &= ~cs->v[i].above;
                interior = true;
            }
        struct stat st;
        bool there = lstat(node, &st) == 0, file = !interior && (!there || !S_ISDIR(st.st_mode));
        if (!interior && there && S_ISLNK(st.st_mode))
            continue; /* the helper would put the rule on what it leads to */
        push_rule(out, node, k, file);
        if (!interior || !(t & ~k))
            continue;
        const listing *l = list_dir(ls, node);
        for (size_t e = 0; e < l->names.n; e++) {
            gk_autofree char *p = gk_path_join(node, l->names.v[e]);
            if (gk_strvec_bsearch(&nodes, p))
                continue;
            push_rule(out, p, t, l->is_file.v[e][0] != '\0');
        }
    }
    gk_strvec_free(&nodes);
}

static bool in_regions(const gk_regions *r, const char *p)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within(p, r->v[i].p.real))
            return true;
    return false;
}

/* The helper's input for the landlock level. */
static void landlock_text(const gk_ll_ruleset *rs, const rules *r, bool net, gk_buf *out)
{
    gk_buf_printf(out, "grantkit-landlock 1\nabi %d\n", rs->abi);
    if (!net && rs->abi >= 4)
        gk_buf_printf(out, "net %x\n", LL_NET_BIND_TCP | LL_NET_CONNECT_TCP);
    if (rs->abi >= 6)
        gk_buf_printf(out, "scope %x\n", LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL);
    gk_buf_printf(out, "handled %x\n", rs->handled);
    for (size_t i = 0; i < r->n; i++)
        gk_buf_printf(out, "rule %x %c %s\n", r->v[i].access, r->v[i].file ? 'f' : 'd',
                      r->v[i].path);
}

/* ---- the landlock level's launch ------------------------------------------ */

typedef struct ll_run {
    gk_projection *pr;
    gk_bwrap_plan plan;
    gk_ll_ruleset rs;
    rules final;
    gk_buf text;
    char *tmpdir;
    const char *cwd;
    gk_strvec env;
    int fds[HFDS];
    int status_pipe[2];
    /* destination lists: the proxy, where the command finds it, and the
     * supervisor of its connect(2) calls with grantrun's end of the
     * listener's handoff */
    bool proxied;
    char *proxy_path, *proxy_abstract;
    gk_proxy *proxy;
    int notify_sock;
    gk_unixnet *sup;
} ll_run;

/* Each AF_UNIX socket type but SOCK_STREAM (the low four bits of the
 * type; other bits are flags, and the kernel refuses unknown ones). */
static int refuse_unix_types(scmp_filter_ctx ctx, int nr, uint64_t keep1, uint64_t keep2)
{
    int rc = 0;
    for (uint64_t t = 0; rc == 0 && t < 16; t++)
        if (t != keep1 && t != keep2)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
                                  SCMP_A0_64(SCMP_CMP_MASKED_EQ, UINT32_MAX, AF_UNIX),
                                  SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, t));
    return rc;
}

/* The Unix sockets of the landlock level. Without the proxy, none: no
 * socket(AF_UNIX) (connect(2) to a socket file is out of Landlock's
 * reach). With it: stream sockets only, no bind(2), and every connect(2)
 * answered by grantrun's supervisor (unixnet.h). Either way socketpair(2)
 * stays, but not of datagrams: sendto(2) on one reaches any datagram
 * socket file of the host (/dev/log), whatever the address (a stream or
 * seqpacket pair takes none). */
static int unix_rules(scmp_filter_ctx ctx, bool proxied)
{
    int rc = refuse_unix_types(ctx, SCMP_SYS(socketpair), SOCK_STREAM, SOCK_SEQPACKET);
    if (rc == 0 && !proxied)
        /* The family is an int to the kernel: the low 32 bits of the
         * register decide, whatever the high ones hold (socket(0x100000001)
         * is socket(AF_UNIX) to the kernel and no match for a full
         * comparison). */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                              SCMP_A0_64(SCMP_CMP_MASKED_EQ, UINT32_MAX, AF_UNIX));
    if (rc == 0 && proxied)
        rc = refuse_unix_types(ctx, SCMP_SYS(socket), SOCK_STREAM, SOCK_STREAM);
    if (rc == 0 && proxied)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(bind), 0);
    if (rc == 0 && proxied)
        rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
    return rc;
}

/* What Landlock (ABI <= 7) has no right for, refused by a third filter:
 * Unix sockets (unix_rules); every change of mode, owner or extended attribute
 * (chmod(2) and friends are not file writes to Landlock, so a read-only
 * region's files would otherwise take them), and of inode flags (chattr);
 * file times other than "now"
 * (utimensat and friends with explicit times; touch(1) of a file sets
 * "now" and still works). */
static int ll_filter_fd(bool proxied)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return -ENOMEM;
    int rc = unix_rules(ctx, proxied);
    static const char *const refused[] = {
        "chmod",    "fchmod",    "fchmodat",  "fchmodat2", "chown",        "fchown",
        "lchown",   "fchownat",  "setxattr",  "lsetxattr", "fsetxattr",    "removexattr",
        "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
    };
    for (size_t i = 0; rc == 0 && i < sizeof(refused) / sizeof(*refused); i++) {
        int nr = seccomp_syscall_resolve_name(refused[i]);
        if (nr == __NR_SCMP_ERROR && strcmp(refused[i], "fchmodat2") == 0)
            nr = 452;
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* inode flags (chattr) and project attributes: also metadata, through
     * a descriptor that may be open read-only (the request's low 32 bits) */
    static const uint64_t flag_ioctls[] = {0x40086602 /* FS_IOC_SETFLAGS */,
                                           0x40046602 /* FS_IOC32_SETFLAGS */,
                                           0x401c5820 /* FS_IOC_FSSETXATTR */};
    for (size_t i = 0; rc == 0 && i < sizeof(flag_ioctls) / sizeof(*flag_ioctls); i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, UINT32_MAX, flag_ioctls[i]));
    /* explicit times: the times argument is not NULL */
    static const struct {
        const char *name;
        unsigned arg;
    } times[] = {{"utimensat", 2}, {"utime", 1}, {"utimes", 1}, {"futimesat", 2}};
    for (size_t i = 0; rc == 0 && i < sizeof(times) / sizeof(*times); i++) {
        int nr = seccomp_syscall_resolve_name(times[i].name);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
                                  (struct scmp_arg_cmp){times[i].arg, SCMP_CMP_NE, 0, 0});
    }
    int fd = -1;
    if (rc == 0) {
        fd = memfd_create("grantkit-seccomp-landlock", MFD_CLOEXEC);
        if (fd < 0)
            rc = -errno;
    }
    if (rc == 0)
        rc = seccomp_export_bpf(ctx, fd);
    if (rc == 0 && lseek(fd, 0, SEEK_SET) < 0)
        rc = -errno;
    seccomp_release(ctx);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    return fd;
}

/* Does the policy admit programs at or below the scratch's place (the
 * namespaces level's test for its noexec remount, launch.c)? */
static bool scratch_exec_admitted(const gk_projection *pr, const char *at)
{
    if (!at)
        return false;
    for (size_t i = 0; i < pr->deputy.n; i++)
        if (gk_path_within(at, pr->deputy.v[i]) || gk_path_within(pr->deputy.v[i], at))
            return true;
    return false;
}

/* The policy's carve-outs at or below baseline.root hold in the scratch,
 * which the command sees at its host path at this level (no mount
 * namespace to put it at baseline.root): each is added again there. */
static void rebase_carves(carves *cs, const char *at, const char *dir)
{
    size_t n = cs->n;
    for (size_t i = 0; i < n; i++) {
        if (!gk_path_within(cs->v[i].path, at))
            continue;
        gk_autofree char *p = gk_printf("%s%s", dir, cs->v[i].path + strlen(at));
        add_carve(cs, p, cs->v[i].subtree, cs->v[i].above);
    }
}

/* The rules of the run: the namespaces level's, without the private
 * mounts, with the private TMPDIR (and the frame protocol's scratch),
 * carved. */
static void build_rules(ll_run *r, const grant_policy *p, const gk_launch_opts *o)
{
    gk_launch_env le = {o->env, o->tty, NULL, NULL};
    gk_emit_input in = {p, r->pr, "shell", &le};
    grant_diags *scratch = grant_diags_new(); /* the namespaces level's notes */
    gk_bwrap_plan_build_mounts(&in, scratch, &r->plan);
    gk_landlock_build_from(&in, &r->plan, scratch, &r->rs);
    grant_diags_free(scratch);

    rules base = {0};
    for (size_t i = 0; i < r->rs.n; i++) {
        const gk_ll_rule *k = &r->rs.v[i];
        /* bwrap's private tmpfs mounts: the host's are not the run's */
        bool private_mount = strcmp(k->path, "/tmp") == 0 || strcmp(k->path, "/dev/shm") == 0;
        if (private_mount && !in_regions(&r->pr->read, k->path))
            continue;
        push_rule(&base, k->path, k->access, k->file);
    }
    /* as the private /tmp's rule: no device nodes (CAP_MKNOD is gone anyway) */
    uint32_t tmp = (LL_READ | LL_WRITES) & ~(LL_MAKE_CHAR | LL_MAKE_BLOCK) & r->rs.handled;
    if (!r->pr->exec_restricted)
        tmp |= LL_EXECUTE;
    push_rule(&base, r->tmpdir, tmp, false);
    if (o->scratch) {
        /* The frame protocol's scratch: a fresh host directory, readable
         * and writable whatever the policy says; EXECUTE only where the
         * policy admits programs at baseline.root (as its noexec remount
         * at the namespaces level). */
        uint32_t all = (LL_READ | LL_WRITES) & ~(LL_MAKE_CHAR | LL_MAKE_BLOCK) & r->rs.handled;
        if (!r->pr->exec_restricted || scratch_exec_admitted(r->pr, o->scratch_at))
            all |= LL_EXECUTE;
        push_rule(&base, o->scratch, all, false);
    }

    carves cs = {0};
    collect_carves(r->pr, &cs);
    if (o->scratch && o->scratch_at)
        rebase_carves(&cs, o->scratch_at, o->scratch);
    listings ls = {0};
    for (size_t i = 0; i < base.n; i++)
        explode(&base.v[i], &cs, &ls, &r->final);
    listings_free(&ls);
    carves_free(&cs);
    for (size_t i = 0; i < base.n; i++)
        free(base.v[i].path);
    free(base.v);

    /* one rule per path, rights united */
    if (r->final.n > 1)
        qsort(r->final.v, r->final.n, sizeof(*r->final.v), rule_cmp);
    size_t w = 0;
    for (size_t i = 0; i < r->final.n; i++) {
        if (w && strcmp(r->final.v[w - 1].path, r->final.v[i].path) == 0) {
            r->final.v[w - 1].access |= r->final.v[i].access;
            free(r->final.v[i].path);
            continue;
        }
        r->final.v[w++] = r->final.v[i];
    }
    r->final.n = w;
}

static void ll_free(ll_run *r)
{
    for (int i = 0; i < HFDS; i++)
        if (r->fds[i] >= 0)
            close(r->fds[i]);
    if (r->status_pipe[0] >= 0)
        close(r->status_pipe[0]);
    if (r->status_pipe[1] >= 0)
        close(r->status_pipe[1]);
    for (size_t i = 0; i < r->final.n; i++)
        free(r->final.v[i].path);
    free(r->final.v);
    gk_buf_free(&r->text);
    gk_landlock_free(&r->rs);
    gk_bwrap_plan_free(&r->plan);
    if (r->notify_sock >= 0)
        close(r->notify_sock);
    if (r->tmpdir && strstr(r->tmpdir, "XXXXXX") == NULL)
        gk_remove_tree(r->tmpdir);
    free(r->tmpdir);
    free(r->proxy_path);
    free(r->proxy_abstract);
    gk_strvec_free(&r->env);
}

/* Names the command's environment gets from the run, not the caller. */
static bool run_owned(const char *entry, bool proxied)
{
    static const char *const proxy_names[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                              "NO_PROXY", "GRANTKIT_PROXY_SOCKET"};
    if (gk_has_prefix(entry, "TMPDIR="))
        return true;
    for (size_t k = 0; proxied && k < sizeof(proxy_names) / sizeof(*proxy_names); k++) {
        size_t n = strlen(proxy_names[k]);
        if (strncasecmp(entry, proxy_names[k], n) == 0 && entry[n] == '=')
            return true;
    }
    return false;
}

/* The command's environment with TMPDIR the run's own directory; with the
 * proxy, its socket (network.md §2: ALL_PROXY in both cases, NO_PROXY
 * empty, no HTTP_PROXY or HTTPS_PROXY: no client speaks HTTP to a proxy on
 * a Unix socket, and one that would reach it through them fails closed). */
static void command_env(ll_run *r, const char *const *env)
{
    for (size_t i = 0; env && env[i]; i++)
        if (!run_owned(env[i], r->proxied))
            gk_strvec_push(&r->env, env[i]);
    gk_strvec_push_take(&r->env, gk_printf("TMPDIR=%s", r->tmpdir));
    if (r->proxied) {
        gk_strvec_push_take(&r->env, gk_printf("GRANTKIT_PROXY_SOCKET=%s", r->proxy_path));
        gk_strvec_push_take(&r->env, gk_printf("ALL_PROXY=socks5h://localhost%s", r->proxy_path));
        gk_strvec_push_take(&r->env, gk_printf("all_proxy=socks5h://localhost%s", r->proxy_path));
        gk_strvec_push(&r->env, "NO_PROXY=");
        gk_strvec_push(&r->env, "no_proxy=");
    }
    gk_strvec_push_take(&r->env, NULL);
}

static void helper_argv(const gk_launch_opts *o, bool proxied, gk_strvec *argv)
{
    gk_strvec_push(argv, o->helper);
    const struct {
        const char *flag;
        int fd;
    } fds[] = {{"--status-fd", HFD_STATUS},
               {"--landlock-fd", HFD_LANDLOCK},
               {"--seccomp-fd", HFD_SECCOMP},
               {"--seccomp-fd", HFD_MOUNT},
               {proxied ? "--seccomp-notify-fd" : "--seccomp-fd", HFD_UNIX},
               {proxied ? "--notify-fd" : NULL, HFD_NOTIFY}};
    for (size_t i = 0; i < sizeof(fds) / sizeof(*fds) && fds[i].flag; i++) {
        gk_strvec_push(argv, fds[i].flag);
        gk_strvec_push_take(argv, gk_printf("%d", fds[i].fd));
    }
    const struct {
        const char *flag;
        long value;
    } limits[] = {{"--nproc", o->processes}, {"--cpu", o->cpu_seconds}, {"--as", o->memory_bytes}};
    for (size_t i = 0; i < sizeof(limits) / sizeof(*limits); i++)
        if (limits[i].value > 0) {
            gk_strvec_push(argv, limits[i].flag);
            gk_strvec_push_take(argv, gk_printf("%ld", limits[i].value));
        }
    gk_strvec_push(argv, "--");
    for (size_t i = 0; i < o->argc; i++)
        gk_strvec_push(argv, o->argv[i]);
}

static char *drain(int fd)
{
    gk_buf b = {0};
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (b.len < 65536)
            gk_buf_add(&b, chunk, (size_t)n);
    }
    return gk_buf_steal(&b, NULL);
}

static int sig_pipe[2] = {-1, -1};

static void note_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], &b, 1) < 0) {
        /* a signal is already pending */
    }
    errno = saved;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* (pid, ppid) of every process /proc lists. */
typedef struct proc_row {
    pid_t pid, ppid;
} proc_row;

static size_t list_procs(proc_row **out, size_t *cap)
{
    size_t n = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        const char *rp = strrchr(buf, ')');
        long ppid = 0;
        if (!rp || sscanf(rp + 2, "%*c %ld", &ppid) != 1)
            continue;
        proc_row row = {(pid_t)pid, (pid_t)ppid};
        GK_VEC_PUSH(*out, n, *cap, row);
    }
    if (proc)
        closedir(proc);
    return n;
}

static int row_cmp(const void *a, const void *b)
{
    pid_t x = ((const proc_row *)a)->pid, y = ((const proc_row *)b)->pid;
    return x < y ? -1 : x > y;
}

/* SIGKILL to every descendant of me /proc shows; how many there were.
 * Each row's state (0 unknown, 1 descendant, 2 not) is settled by walking
 * up its parents to me, to a process that is no descendant, or to a row
 * already settled; every row walked takes the answer. */
static size_t kill_descendants(pid_t me, proc_row **rows, size_t *cap)
{
    size_t n = list_procs(rows, cap);
    proc_row *v = *rows;
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), row_cmp);
    gk_autofree unsigned char *state = gk_calloc(n, 1);
    gk_autofree size_t *path = gk_calloc(n, sizeof(*path));
    for (size_t i = 0; i < n; i++) {
        size_t len = 0, at = i;
        unsigned char answer = 2;
        for (;;) {
            if (state[at]) {
                answer = state[at];
                break;
            }
            if (len == n) /* a loop of parents: /proc read mid-change */
                break;
            path[len++] = at;
            if (v[at].ppid == me) {
                answer = 1;
                break;
            }
            proc_row key = {v[at].ppid, 0};
            proc_row *up = v[at].ppid > 1 ? bsearch(&key, v, n, sizeof(*v), row_cmp) : NULL;
            if (!up)
                break;
            at = (size_t)(up - v);
        }
        for (size_t k = 0; k < len; k++)
            state[path[k]] = answer;
    }
    size_t killed = 0;
    for (size_t i = 0; i < n; i++)
        if (state[i] == 1 && v[i].pid != me) {
            kill(v[i].pid, SIGKILL);
            killed++;
        }
    return killed;
}

/* Every process of the run that is still there: grantrun is the
 * subreaper, so an orphan of the run is grantrun's child, and every other
 * one a descendant of such a child. Each round kills every descendant at
 * once (a process that leaves its session by setsid and its parent by a
 * double fork, at any depth, is among them; a SIGKILLed process forks no
 * more) and reaps what died, until no child is left: no cap on the rounds,
 * which a chain deeper than the cap would outlive. */
static void sweep(pid_t session)
{
    if (session > 0)
        kill(-session, SIGKILL);
    pid_t me = getpid();
    proc_row *rows = NULL;
    size_t cap = 0;
    for (;;) {
        size_t killed = kill_descendants(me, &rows, &cap);
        /* A killed descendant's top is a child of mine: one exit to wait
         * for. With none seen, a child may be one forked as /proc was
         * read: look again rather than wait for it. */
        pid_t w = waitpid(-1, NULL, killed ? 0 : WNOHANG);
        if (w < 0 && errno == ECHILD)
            break;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
    free(rows);
}

static void __attribute__((noreturn)) exec_helper(ll_run *r, const gk_launch_opts *o,
                                                   char **argv)
{
    gk_launch_child_signals(o);
    /* Its own session, as bwrap's --new-session (TIOCSTI is refused
     * anyway); it dies with grantrun, as --die-with-parent. */
    if (!o->tty)
        setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (r->cwd && chdir(r->cwd) < 0)
        _exit(GK_RUN_FAILED);
    gk_launch_take_stdio(o);
    int high[HFDS];
    for (int i = 0; i < HFDS; i++) {
        high[i] = -1;
        if (r->fds[i] >= 0 && (high[i] = fcntl(r->fds[i], F_DUPFD_CLOEXEC, 64)) < 0)
            _exit(GK_RUN_FAILED);
    }
    for (int i = 0; i < HFDS; i++) {
        if (high[i] < 0)
            close(HFD_LANDLOCK + i); /* none (no proxy): the number stays free */
        else if (dup2(high[i], HFD_LANDLOCK + i) < 0)
            _exit(GK_RUN_FAILED);
    }
    if (syscall(SYS_close_range, (unsigned)HFD_LANDLOCK + HFDS, ~0U, 0) < 0)
        for (int fd = HFD_LANDLOCK + HFDS; fd < 1024; fd++)
            close(fd);
    execve(o->helper, argv, r->env.v);
    _exit(GK_RUN_FAILED);
}

static void relay_status(int st, bool timed_out, const char *report, const gk_launch_opts *o,
                         gk_launch_result *out)
{
    bool started = gk_has_prefix(report, "started\n");
    const char *after = started ? report + 8 : report;
    size_t line = strcspn(after, "\n");
    out->started = started && !gk_has_prefix(after, "setup ") && !gk_has_prefix(after, "exec ");
    out->timed_out = timed_out;
    if (timed_out) {
        /* frame-protocol.md §3b: exitCode is the command's status, 128+N
         * for the signal that ended it, also after a timeout. */
        out->command_status = out->started ? gk_status_of_wait(st) : -1;
        fail(out, GK_RUN_TIMEOUT, gk_printf("timed out after %ld ms", o->timeout_ms));
    } else if (!started) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: cannot execute the helper %s", o->helper));
    } else if (gk_has_prefix(after, "setup ")) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement failed, nothing ran: %.*s", (int)line - 6, after + 6));
    } else if (gk_has_prefix(after, "exec ")) {
        int err = atoi(after + 5);
        const char *why = strchr(after + 5, ' ');
        fail(out, err == ENOENT ? GK_RUN_NOT_FOUND : GK_RUN_REFUSED,
             gk_printf("cannot execute%.*s", why ? (int)(line - (size_t)(why - after)) : 0,
                       why ? why : ""));
    } else {
        out->status = gk_status_of_wait(st);
    }
}

/* The keeper: grantrun's child and the helper's parent, a subreaper too.
 * grantrun kills every process of the run when the run ends or times out
 * (sweep); but a SIGKILL to grantrun itself would leave the command's
 * orphans to init. The keeper sees grantrun go (EOF on alive, whose write
 * end only grantrun holds) and kills the run then; every orphan of the
 * run is the keeper's (the nearest subreaper), and removes the run's
 * private TMPDIR, which grantrun would have. It ignores the signals
 * grantrun forwards, and ends as the helper ended (its exit status, or
 * its signal), so grantrun's wait reads the command's status. */
static void __attribute__((noreturn)) keeper(ll_run *r, const gk_launch_opts *o, char **argv,
                                             int alive, int tell)
{
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        signal(forwarded[i], SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* Out of grantrun's process group, so one SIGKILL to the group does
     * not take both (with --tty the helper inherits the keeper's group,
     * which must stay the terminal's foreground one). */
    if (!o->tty)
        setpgid(0, 0);
    pid_t pid = fork();
    if (pid == 0)
        exec_helper(r, o, argv);
    int32_t told = pid;
    if (write(tell, &told, sizeof(told)) != (ssize_t)sizeof(told) || pid < 0)
        _exit(GK_RUN_FAILED);
    close(tell);
    for (int i = 0; i < HFDS; i++)
        if (r->fds[i] >= 0)
            close(r->fds[i]);
    close(r->status_pipe[0]);
    if (r->notify_sock >= 0)
        close(r->notify_sock);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    int st = 0;
    for (;;) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        struct pollfd pfd[2] = {{alive, POLLIN, 0}, {pidfd, POLLIN, 0}};
        if (poll(pfd, pidfd < 0 ? 1 : 2, pidfd < 0 ? 50 : -1) < 0 && errno != EINTR)
            continue;
        if (pfd[0].revents) { /* grantrun is gone: so is the run, and its TMPDIR */
            kill(pid, SIGKILL);
            sweep(o->tty ? 0 : pid);
            gk_remove_tree(r->tmpdir);
            _exit(128 + SIGKILL);
        }
    }
    sweep(o->tty ? 0 : pid);
    if (WIFSIGNALED(st)) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(WTERMSIG(st), SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, WTERMSIG(st));
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(WTERMSIG(st));
        _exit(128 + WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : GK_RUN_FAILED);
}

/* Fork the keeper and through it the helper, wait (signals forwarded to
 * the command's session, the deadline kept), sweep what is left. */
static void spawn_and_wait(ll_run *r, const gk_launch_opts *o, gk_launch_result *out)
{
    gk_strvec argv = {0};
    helper_argv(o, r->proxied, &argv);
    gk_strvec_push_take(&argv, NULL);
    int alive[2] = {-1, -1}, tell[2] = {-1, -1};
    if ((sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) ||
        pipe2(alive, O_CLOEXEC) < 0 || pipe2(tell, O_CLOEXEC) < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make a pipe: %s", strerror(errno)));
        for (int i = 0; i < 2; i++) {
            if (alive[i] >= 0)
                close(alive[i]);
            if (tell[i] >= 0)
                close(tell[i]);
        }
        gk_strvec_free(&argv);
        return;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    struct sigaction sa = {0}, old[sizeof(forwarded) / sizeof(*forwarded)];
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &sa, &old[i]);
    pid_t pid = fork();
    if (pid == 0) {
        close(alive[1]);
        close(tell[0]);
        keeper(r, o, argv.v, alive[0], tell[1]);
    }
    close(alive[0]);
    close(tell[1]);
    int32_t helper = -1;
    if (pid > 0) {
        ssize_t got;
        do
            got = read(tell[0], &helper, sizeof(helper));
        while (got < 0 && errno == EINTR);
        if (got != (ssize_t)sizeof(helper))
            helper = -1;
    }
    close(tell[0]);
    if (pid < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot fork: %s", strerror(errno)));
    } else {
        close(r->status_pipe[1]);
        r->status_pipe[1] = r->fds[HFD_STATUS - HFD_LANDLOCK] = -1;
        if (r->proxied) {
            /* The helper's end is the helper's alone (its EOF ends the
             * handoff); a supervisor that cannot start leaves the helper
             * without its "ok": nothing runs. */
            close(r->fds[HFD_NOTIFY - HFD_LANDLOCK]);
            r->fds[HFD_NOTIFY - HFD_LANDLOCK] = -1;
            int sock = r->notify_sock;
            r->notify_sock = -1;
            gk_unixnet_start(sock, r->proxy_path, r->proxy_abstract, &r->sup);
        }
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        struct timespec start = gk_launch_timeout_start(o), now;
        bool timed_out = false, reaped = false;
        int st = 0;
        for (;;) {
            if (waitpid(pid, &st, WNOHANG) == pid) {
                reaped = true;
                break;
            }
            int wait_ms = pidfd < 0 ? 50 : -1;
            if (o->timeout_ms > 0) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                long spent = (now.tv_sec - start.tv_sec) * 1000 +
                             (now.tv_nsec - start.tv_nsec) / 1000000;
                if (spent >= o->timeout_ms) {
                    timed_out = true;
                    break;
                }
                long left = o->timeout_ms - spent;
                if (left > (1L << 30)) /* poll takes an int */
                    left = 1L << 30;
                if (wait_ms < 0 || left < wait_ms)
                    wait_ms = (int)left;
            }
            struct pollfd pfd[2] = {{pidfd, POLLIN, 0}, {sig_pipe[0], POLLIN, 0}};
            if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR)
                break;
            unsigned char sig;
            while (read(sig_pipe[0], &sig, 1) == 1)
                if (helper > 0 && kill(o->tty ? helper : -helper, sig) < 0)
                    kill(helper, sig);
        }
        if (!reaped && timed_out && o->term_grace_ms > 0) {
            /* SIGTERM to the command's session first, SIGKILL after the grace */
            if (kill(o->tty ? pid : -pid, SIGTERM) < 0)
                kill(pid, SIGTERM);
            struct pollfd pfd = {pidfd, POLLIN, 0};
            if (pidfd >= 0)
                while (poll(&pfd, 1, (int)o->term_grace_ms) < 0 && errno == EINTR)
                    ;
            else
                usleep((useconds_t)o->term_grace_ms * 1000);
            reaped = waitpid(pid, &st, WNOHANG) == pid;
        }
        if (!reaped) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        }
        if (pidfd >= 0)
            close(pidfd);
        /* the keeper swept already, unless it was killed here first */
        sweep(o->tty || helper <= 0 ? 0 : helper);
        gk_unixnet_stop(r->sup);
        r->sup = NULL;
        gk_autofree char *report = drain(r->status_pipe[0]);
        relay_status(st, timed_out, report, o, out);
    }
    close(alive[1]);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
        sigaction(forwarded[i], &old[i], NULL);
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    gk_strvec_free(&argv);
}

static bool prepare(ll_run *r, gk_launch_result *out, int idx, int fd)
{
    if (fd < 0) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot prepare the helper: %s", strerror(-fd)));
        return false;
    }
    r->fds[idx] = fd;
    return true;
}

/* Destination lists: the proxy, on a socket in the run's TMPDIR (what the
 * command is told) and on an abstract address of 128 random bits (where
 * the supervisor connects: no path the command could replace), and the
 * socket the helper hands the listener over. False with out filled. */
static bool proxy_setup(ll_run *r, const gk_launch_opts *o, gk_net_decide_fn decide, void *ctx,
                        gk_launch_result *out)
{
    r->proxy_path = gk_printf("%s/proxy.sock", r->tmpdir);
    if (o->dry_run) {
        r->proxy_abstract = gk_strdup("grantkit-proxy-TOKEN");
        return true;
    }
    unsigned char rnd[16];
    char hex[33];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        fail(out, GK_RUN_FAILED, gk_printf("cannot make the proxy's name: %s", strerror(errno)));
        return false;
    }
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
    r->proxy_abstract = gk_printf("grantkit-proxy-%s", hex);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        fail(out, GK_RUN_FAILED,
             gk_printf("cannot make the supervisor's socket: %s", strerror(errno)));
        return false;
    }
    r->notify_sock = sv[0];
    r->fds[HFD_NOTIFY - HFD_LANDLOCK] = sv[1];
    gk_proxy_opts po = {r->proxy_path, NULL, NULL, false, decide, ctx, r->proxy_abstract};
    int rc = gk_proxy_start(&po, &r->proxy);
    if (rc < 0) {
        fail(out, GK_RUN_FAILED,
             gk_printf("confinement unavailable: cannot start the network proxy on %s: %s",
                       r->proxy_path, strerror(-rc)));
        return false;
    }
    out->net = gk_calloc(1, sizeof(*out->net));
    return true;
}

static void launch_landlock(const grant_policy *p, gk_projection *pr, const gk_launch_opts *o,
                            gk_buf *described, gk_launch_result *out)
{
    ll_run r;
    memset(&r, 0, sizeof(r));
    for (int i = 0; i < HFDS; i++)
        r.fds[i] = -1;
    r.status_pipe[0] = r.status_pipe[1] = -1;
    r.notify_sock = -1;
    /* A policy with destination lists: the gate decides each connection. */
    gk_net_decide_fn decide = o->net_decide;
    void *decide_ctx = o->net_ctx;
    if (!decide && grant_policy_net_mode(p) == GRANT_NET_LIST) {
        decide = gk_launch_net_decide;
        decide_ctx = (void *)p;
    }
    r.proxied = decide != NULL;
    bool net = pr->net && !r.proxied; /* the proxy's way only: TCP and UDP as for net deny */
    r.pr = pr;
    r.cwd = o->cwd ? o->cwd : gk_policy_context(p)->cwd;
    const char *base = "/tmp";
    r.tmpdir = gk_printf("%s/" PRIVATE_TMP_TEMPLATE, base);
    if (!o->dry_run && !mkdtemp(r.tmpdir)) {
        fail(out, GK_RUN_FAILED,
             gk_printf("cannot make the run's private temporary directory under %s: %s", base,
                       strerror(errno)));
        ll_free(&r);
        return;
    }
    build_rules(&r, p, o);
    for (size_t i = 0; i < r.final.n; i++)
        if (strchr(r.final.v[i].path, '\n')) {
            fail(out, GK_RUN_FAILED,
                 gk_strdup("a region's path holds a newline, which the Landlock helper cannot "
                           "take: refusing to run without it"));
            ll_free(&r);
            return;
        }
    landlock_text(&r.rs, &r.final, net, &r.text);
    if (r.proxied && !proxy_setup(&r, o, decide, decide_ctx, out)) {
        gk_proxy_stop(r.proxy, out->net);
        ll_free(&r);
        return;
    }
    command_env(&r, o->env);
    if (o->dry_run) {
        if (described) {
            gk_strvec argv = {0};
            helper_argv(o, r.proxied, &argv);
            gk_buf_puts(described, "# level landlock: the helper alone, no bwrap\n");
            gk_buf_printf(described, "cd %s\nenv TMPDIR=%s\n", r.cwd ? r.cwd : ".", r.tmpdir);
            if (r.proxied)
                gk_buf_printf(described,
                              "# the proxy on %s and @%s; connect(2) answered by grantrun\n"
                              "env GRANTKIT_PROXY_SOCKET=%s ALL_PROXY=socks5h://localhost%s\n",
                              r.proxy_path, r.proxy_abstract, r.proxy_path, r.proxy_path);
            for (size_t i = 0; i < argv.n; i++)
                gk_buf_printf(described, "%s%s", i ? "\n  " : "", argv.v[i]);
            gk_buf_puts(described, "\n# Landlock ruleset (helper input)\n");
            gk_buf_puts(described, r.text.data ? r.text.data : "");
            gk_strvec_free(&argv);
        }
        out->status = 0;
        ll_free(&r);
        return;
    }
    if (prepare(&r, out, HFD_LANDLOCK - HFD_LANDLOCK,
                gk_memfd_with("grantkit-landlock", r.text.data, r.text.len, false)) &&
        prepare(&r, out, HFD_SECCOMP - HFD_LANDLOCK,
                gk_seccomp_main_fd(net, pr->exec_restricted)) &&
        prepare(&r, out, HFD_MOUNT - HFD_LANDLOCK, gk_seccomp_mount_fd()) &&
        prepare(&r, out, HFD_UNIX - HFD_LANDLOCK, ll_filter_fd(r.proxied))) {
        if (pipe2(r.status_pipe, O_CLOEXEC) < 0) {
            fail(out, GK_RUN_FAILED, gk_printf("cannot make the status pipe: %s", strerror(errno)));
        } else {
            r.fds[HFD_STATUS - HFD_LANDLOCK] = r.status_pipe[1];
            spawn_and_wait(&r, o, out);
        }
    }
    /* the proxy's records; its socket goes with the TMPDIR */
    gk_proxy_stop(r.proxy, out->net);
    ll_free(&r);
}

/* ---- choosing the level --------------------------------------------------- */

static char *bwrap_version(const char *bwrap)
{
    if (!bwrap)
        return NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
        char *const argv[] = {(char *)"bwrap", (char *)"--version", NULL};
        char *const envp[] = {NULL};
        execve(bwrap, argv, envp);
        _exit(127);
    }
    close(p[1]);
    char *text = pid > 0 ? drain(p[0]) : NULL;
    close(p[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (!text)
        return NULL;
    text[strcspn(text, "\n")] = '\0';
    const char *v = strrchr(text, ' ');
    char *version = *text ? gk_strdup(v ? v + 1 : text) : NULL;
    free(text);
    return version;
}

static void derive(grant_enforcement *e, const grant_policy *p, const gk_projection *pr,
                   grant_level level, const gk_level_opts *lo, int abi)
{
    const gk_launch_opts *o = &lo->launch;
    gk_enf_host h = {abi,           geteuid() == 0 || getuid() == 0,
                     o->processes,  o->cpu_seconds,
                     o->memory_bytes, o->scratch_at != NULL,
                     lo->fs_quota,  lo->fs_nodes};
    gk_enforcement_derive(p, pr, level, &h, e);
}

/* The gate's answer (1 go on, else gk_launch_gate's), and for a command
 * it admits the projection, built under the lock the namespaces plan
 * needs (placeholders.h; taken unless landlock is asked for, and let go
 * by a landlock level chosen later). auto's probe is started first and
 * asked once the projection is built: the child makes its namespaces (the
 * network one the dearest) on another core meanwhile, and they are gone
 * before bwrap makes its own. The network namespace is probed when bwrap
 * will make one (the projection's net, decided here the same way). */
static int choose_start(const grant_policy *p, const gk_level_opts *o, gk_level_result *out,
                        gk_projection **pr, int *probed, char **probe_why)
{
    const gk_launch_opts *lo = &o->launch;
    bool probing = o->level != GK_LEVEL_NAMESPACES && o->level != GK_LEVEL_LANDLOCK &&
                   lo->bwrap && !o->namespaces_proven && !o->namespaces_refused_why;
    probe_run pb = {-1, -1, NULL};
    /* The probe makes a network namespace when bwrap will (net not allowed). */
    bool netns = gk_decide_gate(&p->stack, "net") != GK_TRI_TRUE;
    gk_autofree char *memo_key = probing ? gk_probe_memo_key() : NULL;
    out->probe_memo_age = memo_key ? gk_probe_memo_age(memo_key, netns) : -1;
    if (out->probe_memo_age >= 0) {
        out->probe_remembered = true;
        probing = false;
        *probed = 1;
    }
    if (probing)
        probe_start(!netns, false, &pb);
    int rc = gk_launch_gate(p, lo, &out->run);
    if (rc > 0 && o->level != GK_LEVEL_LANDLOCK) {
        if (gk_launch_lock(lo, &out->ph, &out->lock_rc, &out->run))
            out->held = true;
        else
            rc = 0;
    }
    *pr = rc > 0 ? gk_projection_build(p) : NULL;
    if (probing) {
        *probed = probe_finish(&pb, true, probe_why);
        out->probe_pid = pb.pid; /* reaped with the result */
        if (*probed && memo_key)
            gk_probe_memo_store(memo_key, netns);
    }
    return rc;
}

int gk_level_choose(const grant_policy *p, const gk_level_opts *o, gk_level_result *out)
{
    memset(out, 0, sizeof(*out));
    const gk_launch_opts *lo = &o->launch;
    if (!p || !lo->argv || lo->argc == 0 || !lo->helper)
        return -EINVAL;
    if (gk_target_is_offline(gk_policy_context(p)))
        return -EINVAL;
    gk_projection *pr = NULL;
    gk_autofree char *probe_why = NULL;
    int probed = 0;
    int rc = choose_start(p, o, out, &pr, &probed, &probe_why);
    if (rc <= 0)
        return rc;
    int abi = gk_enforcement_host_abi();
    grant_level level = GRANT_LEVEL_NAMESPACES;
    gk_autofree char *reason = NULL;
    if (o->level == GK_LEVEL_NAMESPACES) {
        level = GRANT_LEVEL_NAMESPACES;
        reason = gk_strdup("asked for (--level namespaces)");
    } else if (o->level == GK_LEVEL_LANDLOCK) {
        level = GRANT_LEVEL_LANDLOCK;
        reason = gk_strdup("asked for (--level landlock)");
    } else {
        gk_autofree char *why = NULL;
        bool ns;
        if (!lo->bwrap)
            ns = false;
        else if (o->namespaces_proven)
            ns = true;
        else if (o->namespaces_refused_why)
            ns = false, why = gk_strdup(o->namespaces_refused_why);
        else
            ns = probed, why = probe_why, probe_why = NULL;
        if (!lo->bwrap)
            why = gk_strdup("no bubblewrap (bwrap) on PATH");
        if (ns && out->probe_remembered) {
            reason = gk_printf("auto: this host allows user and mount namespaces (the probe's "
                               "yes of %ld s ago, remembered for this boot, namespaces, "
                               "credentials, seccomp and LSM state)",
                               out->probe_memo_age);
        } else if (ns) {
            reason = gk_strdup("auto: this host allows user and mount namespaces (a mount in "
                               "a new user and mount namespace succeeded)");
        } else {
            level = GRANT_LEVEL_LANDLOCK;
            derive(&out->record, p, pr, level, o, abi);
            out->have_record = true;
            if (gk_enforcement_lost(&out->record) > 0) {
                gk_buf list = {0};
                gk_enforcement_list(&out->record, GK_ENF_WEAKER, true, &list);
                fail(&out->run, GK_RUN_FAILED,
                     gk_printf("confinement unavailable: the namespaces level cannot run (%s), "
                               "and the landlock level would not enforce, for this policy:\n"
                               "%sto run at the landlock level anyway, pass --level landlock "
                               "(its semantics: grantrun(1), \"Levels of confinement\")%s; "
                               "nothing ran",
                               why, list.data ? list.data : "",
                               gk_enforcement_unenforced(&out->record)
                                   ? " and --allow-degraded for the rules not enforced at all"
                                   : ""));
                gk_buf_free(&list);
                gk_enforcement_set_reason(&out->record, "auto: refused (the landlock level "
                                                        "would lose rules of the policy)");
                gk_projection_free(pr);
                return 0;
            }
            reason = gk_printf("auto: %s; the policy loses nothing at the landlock level", why);
        }
    }
    if (!out->have_record) /* derived once: auto's fallback has it already */
        derive(&out->record, p, pr, level, o, abi);
    out->have_record = true;
    gk_enforcement_set_reason(&out->record, reason);
    if (o->bwrap_version) {
        gk_autofree char *v = bwrap_version(lo->bwrap);
        gk_enforcement_set_bwrap_version(&out->record, v);
    }
    size_t unenforced = gk_enforcement_unenforced(&out->record);
    if (unenforced && !o->allow_degraded) {
        gk_buf list = {0};
        gk_enforcement_list(&out->record, GK_ENF_NOT_ENFORCED, false, &list);
        fail(&out->run, GK_RUN_FAILED,
             gk_printf("confinement unavailable: the %s level would not enforce, for this "
                       "policy:\n%s--allow-degraded runs anyway; nothing ran",
                       grant_level_name(level), list.data ? list.data : ""));
        gk_buf_free(&list);
        gk_projection_free(pr);
        return 0;
    }
    if (level == GRANT_LEVEL_NAMESPACES && !lo->bwrap) {
        fail(&out->run, GK_RUN_FAILED,
             gk_strdup("confinement unavailable: no bubblewrap (bwrap) on PATH; install it, "
                       "pass --bwrap PATH, or --level landlock; nothing ran"));
        gk_projection_free(pr);
        return 0;
    }
    out->pr = pr;
    if (level == GRANT_LEVEL_LANDLOCK && out->held) {
        gk_placeholders_release(&out->ph);
        out->held = false;
    }
    return 1;
}

int gk_level_launch(const grant_policy *p, const gk_level_opts *o, grant_diags *notes,
                    gk_buf *described, gk_level_result *out)
{
    const gk_launch_opts *lo = &o->launch;
    if (!out->have_record || !out->pr)
        return -EINVAL;
    for (size_t i = 0; i < out->record.n; i++)
        if (out->record.v[i].status == GK_ENF_NOT_ENFORCED)
            gk_diag_file(notes, GK_WARNING, "grantrun", "not enforced (--allow-degraded): %s: %s",
                         out->record.v[i].rule,
                         out->record.v[i].why ? out->record.v[i].why : "");
    gk_launch_result_clear(&out->run);
    if (out->record.level == GRANT_LEVEL_NAMESPACES) {
        /* Both go to the launch, which releases and frees them. */
        gk_placeholders ph = {-1, NULL};
        if (out->held)
            ph = out->ph;
        gk_projection *pr = out->pr;
        out->pr = NULL;
        out->held = false;
        int rc = gk_launch_gate(p, lo, &out->run);
        if (rc <= 0) {
            gk_placeholders_release(&ph);
            gk_projection_free(pr);
            return rc;
        }
        rc = gk_launch_planned(p, lo, &ph, out->lock_rc, pr, notes, described, &out->run);
        /* The remembered yes may be what failed: gk_level_run asks the
         * probe again; a caller of the two steps fails closed, and its
         * next run probes. */
        if (out->probe_remembered && out->run.envelope_refused)
            gk_probe_memo_forget();
        return rc;
    }
    /* Landlock missing, --processes for root: refused by the record unless
     * --allow-degraded (the helper still refuses a ruleset it cannot
     * create). */
    launch_landlock(p, out->pr, lo, described, &out->run);
    return 0;
}

int gk_level_run(const grant_policy *p, const gk_level_opts *o, grant_diags *notes,
                 gk_buf *described, gk_level_result *out)
{
    int rc = gk_level_choose(p, o, out);
    if (rc <= 0)
        return rc;
    rc = gk_level_launch(p, o, notes, described, out);
    if (rc < 0 || !out->probe_remembered || !out->run.envelope_refused)
        return rc;
    /* bwrap gave up before the helper started, on a remembered yes:
     * nothing ran. The probe, live, says whether that yes was wrong; if
     * so, auto chooses again as it would have (probe_memo.h), else
     * bwrap's failure stands and the yes is kept again. */
    bool net = gk_decide_gate(&p->stack, "net") == GK_TRI_TRUE;
    char *why = NULL;
    if (gk_level_probe_namespaces(net, &why)) {
        gk_autofree char *key = gk_probe_memo_key();
        if (key)
            gk_probe_memo_store(key, !net);
        return rc;
    }
    char *wrong = gk_printf("%s (a remembered probe answer said otherwise: forgotten)", why);
    free(why);
    why = wrong;
    gk_level_opts again = *o;
    again.namespaces_refused_why = why;
    gk_level_result_clear(out);
    rc = gk_level_choose(p, &again, out);
    if (rc > 0)
        rc = gk_level_launch(p, &again, notes, described, out);
    free(why);
    return rc;
}
