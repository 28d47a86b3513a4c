/* sbpl_eval.c - the SBPL evaluator and linter.
 *
 * Operations form a tree: `default` is the root; a name ending in '*' is
 * the parent of every operation its stem prefixes (file* > file-read* >
 * file-read-data), the longest such stem winning. A rule applies to a
 * query when one of its operations is the query's or an ancestor of it.
 * Among those, the last rule with a filter that matches decides
 * (Seatbelt's "last match wins"). A rule with no filter is not a
 * positional rule but the operation's fallback, taken only where no
 * filtered rule matched, wherever it stands: the last unfiltered rule on
 * the operation or a family above it, else the last unfiltered rule on
 * default. (allow process*) before (deny default) allows process-fork.
 * An operation that (deny default) does not cover (the table of
 * sbpl_ops.c) ignores the default rules. With no fallback at all, Seatbelt
 * allows: that answer is named "implicit-default".
 *
 * Matches are three-valued (sbpl.h): a rule whose match is unknown (an
 * opaque filter, an unresolved param, the vnode type of a query that did
 * not give one, an unresolved import) makes the answer undecided only if
 * it could change it: a later rule that surely matches decides alone, and
 * an unknown rule with the same action as the decider changes nothing.
 */
#include "analysis/sbpl.h"
#include "analysis/analysis.h"
#include "common/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof(*(a)))

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* ---- matching ---------------------------------------------------------------- */

static bool subpath_match(const char *path, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--; /* (subpath "/a/") covers /a and below, as (subpath "/a") */
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A network query: "[tcp:|udp:]HOST:PORT", or a unix socket path. */
typedef struct netq {
    bool unix_path;
    unsigned proto;           /* GK_SB_PROTO_TCP/UDP */
    unsigned fam;             /* GK_SB_FAM_4/6, 0 when a name */
    bool local;               /* localhost, 127.0.0.0/8, ::1 */
    int port;
} netq;

static bool all_digits(const char *s, size_t n)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static bool parse_netq(const char *a, netq *q)
{
    memset(q, 0, sizeof(*q));
    if (!a || !*a)
        return false;
    if (a[0] == '/') {
        q->unix_path = true;
        return true;
    }
    q->proto = GK_SB_PROTO_TCP;
    if (has_prefix(a, "tcp:"))
        a += 4;
    else if (has_prefix(a, "udp:")) {
        q->proto = GK_SB_PROTO_UDP;
        a += 4;
    }
    const char *colon = strrchr(a, ':');
    if (!colon || colon == a || !all_digits(colon + 1, strlen(colon + 1)))
        return false;
    long port = strtol(colon + 1, NULL, 10);
    if (port < 1 || port > 65535 || strlen(colon + 1) > 5)
        return false;
    q->port = (int)port;
    size_t hl = (size_t)(colon - a);
    char host[256];
    if (hl >= sizeof(host))
        return false;
    memcpy(host, a, hl);
    host[hl] = '\0';
    if (host[0] == '[') {
        if (hl < 3 || host[hl - 1] != ']')
            return false;
        q->fam = GK_SB_FAM_6;
        q->local = strcmp(host, "[::1]") == 0;
        return true;
    }
    unsigned o[4];
    char tail;
    if (sscanf(host, "%u.%u.%u.%u%c", &o[0], &o[1], &o[2], &o[3], &tail) == 4 && o[0] < 256 &&
        o[1] < 256 && o[2] < 256 && o[3] < 256) {
        q->fam = GK_SB_FAM_4;
        q->local = o[0] == 127;
        return true;
    }
    q->local = strcmp(host, "localhost") == 0;
    return strchr(host, ':') == NULL && hl > 0;
}

static gk_sb_tri tri_bool(bool b)
{
    return b ? GK_SB_YES : GK_SB_NO;
}

static gk_sb_tri tri_re(const void *re, const char *s)
{
    int m = gk_sb_regex_match(re, s);
    return m == 2 ? GK_SB_UNKNOWN : tri_bool(m == 1);
}

static gk_sb_tri path_leaf(const gk_sb_filter *f, const char *p)
{
    switch (f->kind) {
    case GK_SBF_LITERAL:
        return tri_bool(strcmp(p, f->str) == 0);
    case GK_SBF_SUBPATH:
        return tri_bool(subpath_match(p, f->str));
    case GK_SBF_PREFIX:
        return tri_bool(strncmp(p, f->str, strlen(f->str)) == 0);
    case GK_SBF_REGEX:
        return tri_re(f->re, p);
    default:
        return GK_SB_NO;
    }
}

static gk_sb_tri net_match(const gk_sb_filter *f, const gk_sb_query *q)
{
    netq n;
    if (!parse_netq(q->arg, &n))
        return GK_SB_UNKNOWN;
    /* An address of another kind never matches: an ip filter and a
     * socket path, or a unix-socket filter and an ip address. */
    if ((f->protos == GK_SB_PROTO_UNIX) != n.unix_path)
        return GK_SB_NO;
    if (!n.unix_path && !(f->protos & n.proto))
        return GK_SB_NO;
    const char *op = gk_sb_op_name(q->op);
    bool outbound = strcmp(op, "network-outbound") == 0;
    bool inbound = strcmp(op, "network-inbound") == 0 || strcmp(op, "network-bind") == 0;
    /* remote names the far end of an outbound connection, local the near
     * end of a bind or inbound one. The near end of an outbound ip
     * connection is known in part: loopback exactly when the far end is
     * (the route), on an ephemeral port; the far end of an inbound one is
     * not known at all. */
    if (f->kind == GK_SBF_LOCAL && outbound && !n.unix_path && (f->protos & n.proto)) {
        bool local_host = !f->host || strcmp(f->host, "localhost") != 0 || n.local;
        if (!local_host)
            return GK_SB_NO;
        if (f->fams != (GK_SB_FAM_4 | GK_SB_FAM_6) && (!n.fam || !(f->fams & n.fam)))
            return n.fam ? GK_SB_NO : GK_SB_UNKNOWN;
        return f->port < 0 ? GK_SB_YES : GK_SB_UNKNOWN;
    }
    /* A bind has no far end at all. */
    if (f->kind == GK_SBF_REMOTE && strcmp(op, "network-bind") == 0)
        return GK_SB_NO;
    if ((f->kind == GK_SBF_REMOTE && !outbound) || (f->kind == GK_SBF_LOCAL && !inbound))
        return GK_SB_UNKNOWN;
    if (f->protos == GK_SB_PROTO_UNIX) {
        if (!f->nkids)
            return GK_SB_YES; /* (remote unix-socket): any socket */
        /* The socket's path, matched as a file's would be. */
        gk_sb_query pq = {gk_sb_op_lookup("file-read-data"), q->arg, GK_SB_VNODE_SOCKET};
        return gk_sb_filter_match(f->kids[0], &pq);
    }
    if (n.unix_path || !(f->protos & n.proto))
        return GK_SB_NO;
    if (f->port >= 0 && f->port != n.port)
        return GK_SB_NO;
    if (f->host && strcmp(f->host, "localhost") == 0 && !n.local)
        return GK_SB_NO;
    if (f->fams != (GK_SB_FAM_4 | GK_SB_FAM_6)) {
        if (!n.fam)
            return GK_SB_UNKNOWN; /* a name: the family is the resolver's choice */
        if (!(f->fams & n.fam))
            return GK_SB_NO;
    }
    return GK_SB_YES;
}

gk_sb_tri gk_sb_filter_match(const gk_sb_filter *f, const gk_sb_query *q)
{
    gk_sb_argkind ak = gk_sb_op_argkind(q->op);
    switch (f->kind) {
    case GK_SBF_ANY: {
        gk_sb_tri r = GK_SB_NO;
        for (size_t i = 0; i < f->nkids && r != GK_SB_YES; i++) {
            gk_sb_tri k = gk_sb_filter_match(f->kids[i], q);
            if (k != GK_SB_NO)
                r = k;
        }
        return r;
    }
    case GK_SBF_ALL: {
        gk_sb_tri r = GK_SB_YES;
        for (size_t i = 0; i < f->nkids && r != GK_SB_NO; i++) {
            gk_sb_tri k = gk_sb_filter_match(f->kids[i], q);
            if (k != GK_SB_YES)
                r = k;
        }
        return r;
    }
    case GK_SBF_NOT: {
        gk_sb_tri k = f->nkids ? gk_sb_filter_match(f->kids[0], q) : GK_SB_NO;
        return k == GK_SB_UNKNOWN ? k : tri_bool(k == GK_SB_NO);
    }
    case GK_SBF_LITERAL:
    case GK_SBF_SUBPATH:
    case GK_SBF_PREFIX:
    case GK_SBF_REGEX:
        if (ak != GK_SB_ARG_PATH && !(ak == GK_SB_ARG_NET && q->arg && q->arg[0] == '/'))
            return GK_SB_NO;
        return q->arg ? path_leaf(f, q->arg) : GK_SB_UNKNOWN;
    case GK_SBF_ANCESTORS:
        /* The path itself and every directory above it. */
        if (ak != GK_SB_ARG_PATH)
            return GK_SB_NO;
        return q->arg ? tri_bool(subpath_match(f->str, q->arg)) : GK_SB_UNKNOWN;
    case GK_SBF_VNODE:
        if (ak != GK_SB_ARG_PATH)
            return GK_SB_NO;
        return q->vnode < 0 ? GK_SB_UNKNOWN : tri_bool(f->vnodes & (1u << q->vnode));
    case GK_SBF_GLOBAL_NAME:
    case GK_SBF_GLOBAL_NAME_REGEX:
    case GK_SBF_GLOBAL_NAME_PREFIX:
    case GK_SBF_LOCAL_NAME:
    case GK_SBF_LOCAL_NAME_REGEX:
    case GK_SBF_LOCAL_NAME_PREFIX:
    case GK_SBF_XPC_NAME:
    case GK_SBF_XPC_NAME_PREFIX: {
        if (ak != GK_SB_ARG_NAME || !q->arg)
            return GK_SB_NO;
        /* "local:NAME" asks about a per-process (local) service name,
         * "xpc:NAME" about an XPC service; a bare name is global. */
        int qns = has_prefix(q->arg, "local:") ? 1 : has_prefix(q->arg, "xpc:") ? 2 : 0;
        int fns = f->kind == GK_SBF_LOCAL_NAME || f->kind == GK_SBF_LOCAL_NAME_REGEX ||
                          f->kind == GK_SBF_LOCAL_NAME_PREFIX
                      ? 1
                  : f->kind == GK_SBF_XPC_NAME || f->kind == GK_SBF_XPC_NAME_PREFIX ? 2
                                                                                    : 0;
        if (qns != fns)
            return GK_SB_NO;
        const char *name = qns == 1 ? q->arg + 6 : qns == 2 ? q->arg + 4 : q->arg;
        if (f->re)
            return tri_re(f->re, name);
        if (f->kind == GK_SBF_GLOBAL_NAME_PREFIX || f->kind == GK_SBF_LOCAL_NAME_PREFIX ||
            f->kind == GK_SBF_XPC_NAME_PREFIX)
            return tri_bool(has_prefix(name, f->str));
        return tri_bool(strcmp(name, f->str) == 0);
    }
    case GK_SBF_IPC_NAME:
    case GK_SBF_IPC_NAME_PREFIX:
    case GK_SBF_IPC_NAME_REGEX:
        if (ak != GK_SB_ARG_IPC)
            return GK_SB_NO;
        if (!q->arg)
            return GK_SB_UNKNOWN; /* no object name given */
        if (f->re)
            return tri_re(f->re, q->arg);
        return tri_bool(f->kind == GK_SBF_IPC_NAME_PREFIX ? has_prefix(q->arg, f->str)
                                                          : strcmp(q->arg, f->str) == 0);
    case GK_SBF_SYSCTL_NAME:
        return tri_bool(ak == GK_SB_ARG_SYSCTL && q->arg && strcmp(q->arg, f->str) == 0);
    case GK_SBF_SYSCTL_PREFIX:
        return tri_bool(ak == GK_SB_ARG_SYSCTL && q->arg && has_prefix(q->arg, f->str));
    case GK_SBF_SYSCTL_REGEX:
        return ak == GK_SB_ARG_SYSCTL && q->arg ? tri_re(f->re, q->arg) : GK_SB_NO;
    case GK_SBF_TARGET:
        if (ak != GK_SB_ARG_TARGET || !q->arg)
            return GK_SB_NO;
        /* The process itself is in its own sandbox. */
        return tri_bool(strcmp(q->arg, f->str) == 0 ||
                        (strcmp(f->str, "same-sandbox") == 0 && strcmp(q->arg, "self") == 0));
    case GK_SBF_REMOTE:
    case GK_SBF_LOCAL:
        return ak == GK_SB_ARG_NET ? net_match(f, q) : GK_SB_NO;
    case GK_SBF_OPAQUE:
        /* Only where it can match the queried object: a kernel control
         * name is never a TCP address. */
        return !f->applies || (f->applies & (1u << ak)) ? GK_SB_UNKNOWN : GK_SB_NO;
    }
    return GK_SB_UNKNOWN;
}

static bool rule_applies(const gk_sb_rule *r, int op)
{
    for (size_t i = 0; i < r->nops; i++)
        if (gk_sb_op_covers(r->ops[i], op))
            return true;
    return false;
}

/* Does r name op, or a family above it, other than default? */
static bool rule_applies_below_default(const gk_sb_rule *r, int op)
{
    for (size_t i = 0; i < r->nops; i++)
        if (r->ops[i] != 0 && gk_sb_op_covers(r->ops[i], op))
            return true;
    return false;
}

static unsigned action_bit(gk_sb_action a)
{
    return a == GK_SB_ALLOW ? 1u : a == GK_SB_DENY ? 2u : 3u;
}

gk_sb_result gk_sbpl_decide(const grant_sbpl *s, const gk_sb_query *q)
{
    gk_sb_result res = {GRANT_SBPL_ALLOW, NULL, NULL, false};
    unsigned pending = 0; /* actions of later filtered rules whose match is unknown */
    /* Filtered rules, last first: the last that surely matches decides. */
    for (size_t i = s->n; i-- > 0;) {
        const gk_sb_rule *r = &s->rules[i];
        if (!rule_applies(r, q->op) || (!r->filter && r->action != GK_SB_UNRESOLVED))
            continue;
        gk_sb_tri m = r->action == GK_SB_UNRESOLVED ? GK_SB_UNKNOWN : gk_sb_filter_match(r->filter, q);
        if (m == GK_SB_NO)
            continue;
        unsigned a = action_bit(r->action);
        if (m == GK_SB_UNKNOWN) {
            if (!res.unknown)
                res.unknown = r;
            pending |= a;
            if (pending == 3u) {
                res.verdict = GRANT_SBPL_UNDECIDED;
                return res;
            }
            continue;
        }
        if ((pending | a) != a) {
            res.verdict = GRANT_SBPL_UNDECIDED;
            return res;
        }
        res.verdict = r->action == GK_SB_ALLOW ? GRANT_SBPL_ALLOW : GRANT_SBPL_DENY;
        res.rule = r;
        return res;
    }
    /* No filtered rule matched: the fallback. The last unfiltered rule on
     * the operation or a family of it, else the last on default (unless
     * (deny default) does not cover the operation). */
    const gk_sb_rule *fb = NULL, *fbdef = NULL;
    for (size_t i = s->n; i-- > 0 && !fb;) {
        const gk_sb_rule *r = &s->rules[i];
        if (r->filter || r->action == GK_SB_UNRESOLVED || !rule_applies(r, q->op))
            continue;
        if (rule_applies_below_default(r, q->op))
            fb = r;
        else if (!fbdef)
            fbdef = r;
    }
    bool uncovered = !fb && fbdef && gk_sb_op_uncovered(q->op);
    if (!fb && !uncovered)
        fb = fbdef;
    unsigned a = fb ? action_bit(fb->action) : 1u;
    if ((pending | a) != a) {
        res.verdict = GRANT_SBPL_UNDECIDED;
        return res;
    }
    res.verdict = fb && fb->action == GK_SB_DENY ? GRANT_SBPL_DENY : GRANT_SBPL_ALLOW;
    res.rule = fb;
    res.uncovered = uncovered;
    return res;
}

/* ---- answers ------------------------------------------------------------------- */

struct grant_sbpl_answer {
    grant_sbpl_verdict verdict;
    char *origin;
    unsigned line;
    char *rule;
    char *operation;
    char *note;
};

void grant_sbpl_answer_free(grant_sbpl_answer *a)
{
    if (!a)
        return;
    free(a->origin);
    free(a->rule);
    free(a->operation);
    free(a->note);
    free(a);
}

grant_sbpl_verdict grant_sbpl_answer_verdict(const grant_sbpl_answer *a)
{
    return a ? a->verdict : GRANT_SBPL_UNDECIDED;
}

const char *grant_sbpl_answer_origin(const grant_sbpl_answer *a)
{
    return a ? a->origin : NULL;
}

unsigned grant_sbpl_answer_line(const grant_sbpl_answer *a)
{
    return a ? a->line : 0;
}

const char *grant_sbpl_answer_rule(const grant_sbpl_answer *a)
{
    return a ? a->rule : NULL;
}

const char *grant_sbpl_answer_operation(const grant_sbpl_answer *a)
{
    return a ? a->operation : NULL;
}

const char *grant_sbpl_answer_note(const grant_sbpl_answer *a)
{
    return a ? a->note : NULL;
}

/* Where a rule "is": the top-level call that produced it when it came from
 * a procedure (that line tells its instances apart), else the form. */
static gk_loc rule_site(const gk_sb_rule *r)
{
    return r->via.src ? r->via : r->loc;
}

static unsigned loc_line(gk_loc l)
{
    unsigned line = 0, col = 0;
    if (l.src)
        gk_source_linecol(l.src, l.start, &line, &col);
    return line;
}

/* The first leaf of f that is unknown for q: what the answer waits on. */
static const gk_sb_filter *unknown_leaf(const gk_sb_filter *f, const gk_sb_query *q)
{
    if (!f || gk_sb_filter_match(f, q) != GK_SB_UNKNOWN)
        return NULL;
    if (f->kind == GK_SBF_ANY || f->kind == GK_SBF_ALL || f->kind == GK_SBF_NOT)
        for (size_t i = 0; i < f->nkids; i++) {
            const gk_sb_filter *k = unknown_leaf(f->kids[i], q);
            if (k)
                return k;
        }
    return f;
}

static char *unknown_reason(const gk_sb_rule *r, const gk_sb_query *q)
{
    if (r->action == GK_SB_UNRESOLVED)
        return gk_strdup("depends on an import that was not resolved");
    const gk_sb_filter *f = unknown_leaf(r->filter, q);
    if (!f)
        return gk_strdup("depends on a filter with no offline value");
    switch (f->kind) {
    case GK_SBF_OPAQUE:
        return gk_printf("depends on a filter with no offline value: %s", f->str);
    case GK_SBF_VNODE:
        return gk_strdup("depends on the vnode type (give one)");
    case GK_SBF_REMOTE:
    case GK_SBF_LOCAL:
        return gk_strdup("depends on the address family or the direction of the connection");
    default:
        return gk_strdup("depends on a filter with no offline value");
    }
}

static void fill_answer(grant_sbpl_answer *a, const gk_sb_result *r, const gk_sb_query *q)
{
    a->verdict = (grant_sbpl_verdict)r->verdict;
    free(a->operation);
    a->operation = gk_strdup(gk_sb_op_name(q->op));
    free(a->origin);
    free(a->rule);
    free(a->note);
    a->note = NULL;
    const gk_sb_rule *rule = r->verdict == GRANT_SBPL_UNDECIDED ? r->unknown : r->rule;
    if (!rule && r->uncovered) {
        a->origin = gk_strdup("not-covered-by-default");
        a->line = 0;
        a->rule = gk_printf("%s is not covered by (deny default) on macOS: allowed unless a rule "
                            "decides it",
                            gk_sb_op_name(q->op));
        a->note = gk_strdup(gk_sb_op_uncovered(q->op));
        return;
    }
    if (!rule) {
        a->origin = gk_strdup("implicit-default");
        a->line = 0;
        a->rule = gk_strdup("no rule matches and the profile has no default rule: Seatbelt allows");
        return;
    }
    gk_loc site = rule_site(rule);
    a->origin = gk_loc_origin(site);
    a->line = loc_line(site);
    a->rule = gk_strdup(rule->text);
    if (r->verdict == GRANT_SBPL_UNDECIDED) {
        a->note = unknown_reason(rule, q);
    } else if (rule->via.src) {
        gk_autofree char *body = gk_loc_origin(rule->loc);
        a->note = gk_printf("the rule at %s, in a procedure called here", body);
    }
}

static bool is_wildcard(const char *op)
{
    size_t n = strlen(op);
    return n > 1 && op[n - 1] == '*';
}

int grant_sbpl_eval(const grant_sbpl *s, const char *operation, const char *arg,
                    const char *vnode_type, grant_diags *diags, grant_sbpl_answer **out)
{
    if (!s || !operation || !out)
        return -EINVAL;
    *out = NULL;
    int op = gk_sb_op_lookup(operation);
    if (op < 0 || op == 0) {
        if (diags) {
            size_t n = 0;
            const char *const *names = gk_sb_op_names(&n);
            const char *near = op == 0 ? NULL : gk_nearest(operation, names, n);
            gk_autofree char *hint = near ? gk_printf("did you mean '%s'?", near) : NULL;
            gk_diag_file(diags, GK_ERROR, operation, "%s%s%s",
                         op == 0 ? "default is not an operation a process performs; ask about "
                                   "one, or a family such as file*"
                                 : "unknown operation",
                         hint ? "; " : "", hint ? hint : "");
        }
        return -EINVAL;
    }
    int vnode = -1;
    if (vnode_type && *vnode_type) {
        vnode = gk_sb_vnode_lookup(vnode_type);
        if (vnode < 0) {
            if (diags)
                gk_diag_file(diags, GK_ERROR, vnode_type,
                             "unknown vnode type (REGULAR-FILE DIRECTORY SYMLINK FIFO SOCKET "
                             "CHARACTER-DEVICE BLOCK-DEVICE TTY)");
            return -EINVAL;
        }
    }
    gk_sb_argkind ak = gk_sb_op_argkind(op);
    if (ak == GK_SB_ARG_IPC && arg && !*arg)
        arg = NULL; /* the object's name is optional */
    if (ak != GK_SB_ARG_NONE && ak != GK_SB_ARG_IPC && (!arg || !*arg)) {
        if (diags)
            gk_diag_file(diags, GK_ERROR, operation, "%s needs an argument (%s)", operation,
                         ak == GK_SB_ARG_PATH     ? "a path"
                         : ak == GK_SB_ARG_NAME   ? "a service name"
                         : ak == GK_SB_ARG_SYSCTL ? "a sysctl name"
                         : ak == GK_SB_ARG_TARGET ? "a signal target such as self or others"
                                                  : "[tcp:|udp:]HOST:PORT or a socket path");
        return -EINVAL;
    }
    if (ak == GK_SB_ARG_PATH && arg[0] != '/') {
        if (diags)
            gk_diag_file(diags, GK_ERROR, arg, "a path to evaluate must be absolute");
        return -EINVAL;
    }
    netq nq;
    if (ak == GK_SB_ARG_NET && !parse_netq(arg, &nq)) {
        if (diags)
            gk_diag_file(diags, GK_ERROR, arg,
                         "not a network address: write [tcp:|udp:]HOST:PORT, e.g. "
                         "localhost:8080 or tcp:93.184.216.34:443, or a socket path");
        return -EINVAL;
    }

    /* The leaves asked about: the operation, or everything below a '*'. */
    int *leaves = gk_malloc(gk_sb_op_count() * sizeof(int));
    size_t nleaves = 0;
    if (is_wildcard(gk_sb_op_name(op)) && is_wildcard(operation)) {
        for (size_t i = 1; i < gk_sb_op_count(); i++)
            if (gk_sb_op_covers(op, (int)i))
                leaves[nleaves++] = (int)i;
    } else {
        leaves[nleaves++] = op;
    }
    grant_sbpl_answer *a = gk_calloc(1, sizeof(*a));
    bool have = false;
    for (size_t i = 0; i < nleaves; i++) {
        gk_sb_query q = {leaves[i], arg, vnode};
        gk_sb_result r = gk_sbpl_decide(s, &q);
        const char *vnote = NULL;
        if (r.verdict == GRANT_SBPL_UNDECIDED && vnode < 0 && s->uses_vnode) {
            /* Decided if every vnode type gives the same answer. */
            gk_sb_result first = {0};
            bool same = true;
            for (int t = 0; t < GK_SB_VNODE_COUNT && same; t++) {
                gk_sb_query qt = {leaves[i], arg, t};
                gk_sb_result rt = gk_sbpl_decide(s, &qt);
                if (t == 0)
                    first = rt;
                same = rt.verdict != GRANT_SBPL_UNDECIDED && rt.verdict == first.verdict;
            }
            if (same) {
                r = first;
                vnote = "the same for every vnode type";
            }
        }
        /* A '*' query reports its first denial, else its first undecided
         * leaf, else its first leaf. */
        bool better = !have || (r.verdict == GRANT_SBPL_DENY && a->verdict != GRANT_SBPL_DENY) ||
                      (r.verdict == GRANT_SBPL_UNDECIDED && a->verdict == GRANT_SBPL_ALLOW);
        if (better) {
            fill_answer(a, &r, &q);
            if (vnote && !a->note)
                a->note = gk_strdup(vnote);
            have = true;
        }
    }
    free(leaves);
    *out = a;
    return 0;
}

/* ---- JSON -------------------------------------------------------------------------- */

static const char *verdict_name(grant_sbpl_verdict v)
{
    return v == GRANT_SBPL_ALLOW ? "allow" : v == GRANT_SBPL_DENY ? "deny" : "undecided";
}

char *grant_sbpl_answer_json(const grant_sbpl_answer *a)
{
    if (!a)
        return NULL;
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    gk_json_key(&j, "line");
    gk_json_int(&j, a->line);
    gk_json_key(&j, "note");
    gk_json_string(&j, a->note);
    gk_json_key(&j, "operation");
    gk_json_string(&j, a->operation);
    gk_json_key(&j, "origin");
    gk_json_string(&j, a->origin);
    gk_json_key(&j, "rule");
    gk_json_string(&j, a->rule);
    gk_json_key(&j, "verdict");
    gk_json_string(&j, verdict_name(a->verdict));
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

/* ---- lint ---------------------------------------------------------------------------- */

/* Is every query f matches also matched by g? Only certain answers are
 * true: an unknown comparison is false, so a finding is never a guess. */
static bool filter_within(const gk_sb_filter *f, const gk_sb_filter *g)
{
    if (!g)
        return true;
    if (!f)
        return false;
    if (f->kind == GK_SBF_ANY) {
        for (size_t i = 0; i < f->nkids; i++)
            if (!filter_within(f->kids[i], g))
                return false;
        return f->nkids > 0;
    }
    if (g->kind == GK_SBF_ALL) {
        for (size_t i = 0; i < g->nkids; i++)
            if (!filter_within(f, g->kids[i]))
                return false;
        return true;
    }
    if (g->kind == GK_SBF_ANY) {
        for (size_t i = 0; i < g->nkids; i++)
            if (filter_within(f, g->kids[i]))
                return true;
        /* fall through: f may still be within g as a whole (rare) */
    }
    if (f->kind == GK_SBF_ALL) {
        for (size_t i = 0; i < f->nkids; i++)
            if (filter_within(f->kids[i], g))
                return true;
        return false;
    }
    switch (g->kind) {
    case GK_SBF_LITERAL:
        return f->kind == GK_SBF_LITERAL && strcmp(f->str, g->str) == 0;
    case GK_SBF_SUBPATH:
        return (f->kind == GK_SBF_LITERAL || f->kind == GK_SBF_SUBPATH) &&
               subpath_match(f->str, g->str);
    case GK_SBF_PREFIX:
        return (f->kind == GK_SBF_LITERAL || f->kind == GK_SBF_SUBPATH ||
                f->kind == GK_SBF_PREFIX) &&
               has_prefix(f->str, g->str);
    case GK_SBF_REGEX:
        return (f->kind == GK_SBF_LITERAL && gk_sb_regex_match(g->re, f->str) == 1) ||
               (f->kind == GK_SBF_REGEX && strcmp(f->str, g->str) == 0);
    case GK_SBF_VNODE:
        return f->kind == GK_SBF_VNODE && (f->vnodes & ~g->vnodes) == 0;
    case GK_SBF_GLOBAL_NAME:
    case GK_SBF_LOCAL_NAME:
    case GK_SBF_SYSCTL_NAME:
    case GK_SBF_SYSCTL_PREFIX:
    case GK_SBF_TARGET:
    case GK_SBF_GLOBAL_NAME_REGEX:
    case GK_SBF_LOCAL_NAME_REGEX:
    case GK_SBF_SYSCTL_REGEX:
        return f->kind == g->kind && strcmp(f->str, g->str) == 0;
    case GK_SBF_REMOTE:
    case GK_SBF_LOCAL:
        if (f->kind != g->kind || g->protos == GK_SB_PROTO_UNIX || f->protos == GK_SB_PROTO_UNIX)
            return false;
        return (f->protos & ~g->protos) == 0 && (f->fams & ~g->fams) == 0 &&
               (g->port < 0 || g->port == f->port) &&
               (strcmp(g->host, "*") == 0 || strcmp(g->host, f->host) == 0);
    default:
        return false;
    }
}

/* Does later cover every operation of r? An unfiltered rule on default is
 * the fallback of last resort, so it never covers an operation that r
 * names below default (fallback priority, gk_sbpl_decide). */
static bool ops_within(const gk_sb_rule *r, const gk_sb_rule *later)
{
    bool fallbacks = !r->filter && !later->filter;
    for (size_t i = 0; i < r->nops; i++) {
        bool covered = false;
        for (size_t k = 0; k < later->nops && !covered; k++)
            covered = gk_sb_op_covers(later->ops[k], r->ops[i]) &&
                      !(fallbacks && later->ops[k] == 0 && r->ops[i] != 0);
        if (!covered)
            return false;
    }
    return true;
}

/* The lint's rules (analysis.h): ids are stable, never renumbered. */
enum {
    L_INCOMPLETE,
    L_SHADOWED,
    L_OPERAND_LESS,
    L_ALLOW_DEFAULT,
    L_UNANCHORED,
    L_UNRESOLVED_PARAM,
    L_UNRESOLVED_IMPORT,
    L_NO_DEFAULT,
    L_UNSEEN_PATH,
    L_UNCOVERED,
    L_COUNT
};

static const gk_rule lint_rules[L_COUNT] = {
    [L_INCOMPLETE] = {"SB000", "incomplete", GRANT_SEVERITY_NOTE, NULL, NULL, NULL},
    [L_SHADOWED] = {"SB001", "shadowed", GRANT_SEVERITY_WARNING, NULL, NULL, NULL},
    [L_OPERAND_LESS] = {"SB002", "operand-less-allow", GRANT_SEVERITY_WARNING, NULL, NULL, NULL},
    [L_ALLOW_DEFAULT] = {"SB003", "allow-default", GRANT_SEVERITY_WARNING, NULL, NULL, NULL},
    [L_UNANCHORED] = {"SB004", "unanchored-regex", GRANT_SEVERITY_NOTE, NULL, NULL, NULL},
    [L_UNRESOLVED_PARAM] = {"SB005", "unresolved-param", GRANT_SEVERITY_WARNING, NULL, NULL,
                            NULL},
    [L_UNRESOLVED_IMPORT] = {"SB006", "unresolved-import", GRANT_SEVERITY_WARNING, NULL, NULL,
                             NULL},
    [L_NO_DEFAULT] = {"SB007", "no-default", GRANT_SEVERITY_WARNING, NULL, NULL, NULL},
    [L_UNSEEN_PATH] = {"SB008", "unseen-path", GRANT_SEVERITY_NOTE, NULL, NULL, NULL},
    [L_UNCOVERED] = {"SB009", "uncovered-allowed", GRANT_SEVERITY_WARNING, NULL, NULL, NULL},
};

typedef struct findings {
    gk_finding *v;
    size_t n, cap;
    const grant_sbpl *s;
} findings;

static size_t src_index(const grant_sbpl *s, const gk_source *src)
{
    for (size_t i = 0; i < s->nsources; i++)
        if (s->sources[i] == src)
            return i;
    return s->nsources;
}

/* sev: the rule's, or lighter for this instance (SB002 on a non-path
 * operation is a note). */
static gk_finding *add_finding(findings *fs, int rule, gk_severity sev, gk_loc loc,
                               const char *hint, char *msg)
{
    gk_finding f = {.rule = &lint_rules[rule], .severity = sev, .loc = loc, .message = msg};
    f.hint = hint ? gk_strdup(hint) : NULL;
    GK_VEC_PUSH(fs->v, fs->n, fs->cap, f);
    return &fs->v[fs->n - 1];
}

/* By source, offset, id. */
static int finding_cmp(const void *pa, const void *pb, void *sbpl)
{
    const gk_finding *a = pa, *b = pb;
    size_t sa = src_index(sbpl, a->loc.src), sb = src_index(sbpl, b->loc.src);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (a->loc.start != b->loc.start)
        return a->loc.start < b->loc.start ? -1 : 1;
    return strcmp(a->rule->id, b->rule->id);
}

/* Paths Seatbelt never sees: the kernel resolves /tmp, /var and /etc to
 * /private/... before the profile is asked. */
static bool symlinked_spelling(const char *p)
{
    return subpath_match(p, "/tmp") || subpath_match(p, "/var") || subpath_match(p, "/etc");
}

static void lint_paths(findings *fs, const gk_sb_filter *f, int depth)
{
    if (!f || depth > 64)
        return;
    for (size_t i = 0; i < f->nkids; i++)
        lint_paths(fs, f->kids[i], depth + 1);
    /* The link itself (/etc, /tmp, /var) is a path Seatbelt does see: a
     * lookup of the symlink is asked about its own spelling. */
    bool pathy = f->kind == GK_SBF_LITERAL || f->kind == GK_SBF_SUBPATH || f->kind == GK_SBF_PREFIX;
    bool link_itself = pathy && f->str && (strcmp(f->str, "/etc") == 0 || strcmp(f->str, "/tmp") == 0 ||
                       strcmp(f->str, "/var") == 0);
    if (pathy && f->str && symlinked_spelling(f->str) && !(link_itself && f->kind == GK_SBF_LITERAL)) {
        for (size_t i = 0; i < fs->n; i++)
            if (fs->v[i].rule == &lint_rules[L_UNSEEN_PATH] && fs->v[i].loc.src == f->loc.src &&
                fs->v[i].loc.start == f->loc.start)
                return; /* a define'd filter used twice: once */
        add_finding(fs, L_UNSEEN_PATH, GK_NOTE, f->loc, NULL,
                    link_itself
                        ? gk_printf("\"%s\" is a symlink; Seatbelt matches what is under it at "
                                    "/private%s, so this filter matches only the link itself",
                                    f->str, f->str)
                        : gk_printf("\"%s\" is a symlinked spelling; Seatbelt matches the "
                                    "resolved path /private%s, so this filter never matches it",
                                    f->str, f->str));
    }
}

/* Is r an unfiltered rule on default ((deny default), (allow default))? */
static bool is_default_rule(const gk_sb_rule *r)
{
    for (size_t k = 0; k < r->nops && !r->filter && r->action != GK_SB_UNRESOLVED; k++)
        if (r->ops[k] == 0)
            return true;
    return false;
}

/* SB003 (allow default) or SB002 (an allow with no filter on an operation
 * that takes an operand). */
static void lint_broad_allow(findings *fs, const gk_sb_rule *r)
{
    bool on_default = false;
    for (size_t k = 0; k < r->nops; k++)
        on_default |= r->ops[k] == 0;
    if (on_default && r->action == GK_SB_ALLOW) {
        add_finding(fs, L_ALLOW_DEFAULT, GK_WARNING, r->loc,
                    "start from (deny default) and allow what the program needs",
                    gk_strdup("(allow default) allows every operation no later rule "
                              "denies"));
        return;
    }
    if (r->action != GK_SB_ALLOW || r->filter)
        return;
    for (size_t k = 0; k < r->nops; k++) {
        gk_sb_argkind ak = gk_sb_op_argkind(r->ops[k]);
        if (ak == GK_SB_ARG_NONE)
            continue;
        bool serious = ak == GK_SB_ARG_PATH;
        /* As profiles spell it: process-exec is the alias they use. */
        const char *name = gk_sb_op_name(r->ops[k]);
        if (strcmp(name, "process-exec*") == 0)
            name = "process-exec";
        add_finding(fs, L_OPERAND_LESS, serious ? GK_WARNING : GK_NOTE, r->loc,
                    "add a filter such as (subpath \"/dir\") or (literal \"/file\")",
                    gk_printf("(allow %s) has no filter, so it allows %s on everything", name,
                              name));
        return;
    }
}

#define SHADOW_BUDGET 4000000

/* The shadow search's pair count, shared by every rule: a huge profile
 * gets a note that the analysis stopped, never a long stall. */
typedef struct shadow_budget {
    size_t pairs;
    bool out;
} shadow_budget;

/* SB001: a later rule matches everything rule i does, so rule i never
 * decides (the first such later rule is named). */
static void lint_shadowed(findings *fs, size_t i, shadow_budget *b)
{
    const grant_sbpl *s = fs->s;
    const gk_sb_rule *r = &s->rules[i];
    for (size_t k = i + 1; k < s->n && !b->out; k++) {
        if (++b->pairs > SHADOW_BUDGET) {
            b->out = true;
            add_finding(fs, L_INCOMPLETE, GK_NOTE, r->loc, NULL,
                        gk_printf("shadowing was checked for the rules before this one "
                                  "only (%d rule pairs)",
                                  SHADOW_BUDGET));
            return;
        }
        const gk_sb_rule *l = &s->rules[k];
        /* A filtered rule is never shadowed by a later unfiltered one
         * (that is only its operation's fallback), nor the reverse. */
        if (l->action == GK_SB_UNRESOLVED || !r->filter != !l->filter || !ops_within(r, l) ||
            !filter_within(r->filter, l->filter))
            continue;
        gk_autofree char *where = gk_loc_origin(rule_site(l));
        bool same = l->action == r->action;
        gk_finding *f = add_finding(
            fs, L_SHADOWED, GK_WARNING, r->loc,
            same ? "remove it, or narrow the later rule" : "move it after the later rule",
            gk_printf("this rule never decides: the later rule at %s "
                      "matches every query it does%s",
                      where, same ? " (with the same action)" : " and overrides it"));
        f->has_related = true;
        f->related = rule_site(l);
        f->related_message = gk_strdup("the later rule");
        return;
    }
}

/* SB004: each regex (once, however often a define uses it) not anchored
 * with ^. */
static void lint_unanchored(findings *fs)
{
    const grant_sbpl *s = fs->s;
    for (size_t i = 0; i < s->nregexes; i++) {
        const gk_sb_filter *f = s->regexes[i];
        if (f->str[0] == '^')
            continue;
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = s->regexes[k]->loc.src == f->loc.src && s->regexes[k]->loc.start == f->loc.start;
        if (dup)
            continue;
        add_finding(fs, L_UNANCHORED, GK_NOTE, f->loc,
                    "start it with ^ to match from the root; keep it if any depth is meant",
                    gk_printf("#\"%s\" is searched anywhere in the string, not matched "
                              "from its start",
                              f->str));
    }
}

/* SB005, SB006: params without a value, imports not found. */
static void lint_unresolved(findings *fs)
{
    const grant_sbpl *s = fs->s;
    for (size_t i = 0; i < s->nparams; i++)
        add_finding(fs, L_UNRESOLVED_PARAM, GK_WARNING, s->params[i].loc,
                    "give it with -D NAME=VALUE",
                    gk_printf("param \"%s\" has no value", s->params[i].name));
    for (size_t i = 0; i < s->nimports; i++)
        add_finding(fs, L_UNRESOLVED_IMPORT, GK_WARNING, s->imports[i].loc,
                    "put the file beside the profile, or give -D IMPORT_DIR=DIR",
                    gk_printf("import \"%s\" was not resolved", s->imports[i].name));
}

/* An operation below family fam that the profile allows with no rule of
 * its own deciding it (the first in the operation table), or NULL. */
static const char *uncovered_leaf(const grant_sbpl *s, int fam)
{
    for (size_t op = 1; op < gk_sb_op_count(); op++) {
        const char *on = gk_sb_op_name((int)op);
        if (!gk_sb_op_covers(fam, (int)op) || on[strlen(on) - 1] == '*')
            continue;
        gk_sb_argkind ak = gk_sb_op_argkind((int)op);
        gk_sb_query q = {(int)op, ak == GK_SB_ARG_TARGET ? "others" : ak == GK_SB_ARG_PATH ? "/"
                                                                                      : NULL,
                         -1};
        gk_sb_result r = gk_sbpl_decide(s, &q);
        if (r.verdict == GRANT_SBPL_ALLOW && r.uncovered)
            return on;
    }
    return NULL;
}

/* SB009: (deny default) leaves some operations allowed
 * (gk_sb_op_uncovered): name each family the profile then lets through
 * for some object, at the last default rule when it is a deny. */
static void lint_uncovered(findings *fs)
{
    const grant_sbpl *s = fs->s;
    const gk_sb_rule *last_default = NULL;
    for (size_t i = s->n; i-- > 0 && !last_default;)
        if (is_default_rule(&s->rules[i]))
            last_default = &s->rules[i];
    if (!last_default || last_default->action != GK_SB_DENY)
        return;
    size_t nun = 0;
    const gk_sb_uncovered *un = gk_sb_uncovered_table(&nun);
    for (size_t k = 0; k < nun; k++) {
        const char *leaf = uncovered_leaf(s, gk_sb_op_lookup(un[k].op));
        if (!leaf)
            continue;
        add_finding(fs, L_UNCOVERED, GK_WARNING, last_default->loc,
                    "deny it after (deny default), then allow what the program needs",
                    gk_printf("(deny default) does not cover %s: with no rule of its own "
                              "deciding it, %s%s is allowed",
                              un[k].op, leaf,
                              gk_sb_op_argkind(gk_sb_op_lookup(leaf)) == GK_SB_ARG_TARGET
                                  ? " of other processes"
                                  : ""));
    }
}

size_t grant_sbpl_lint(const grant_sbpl *s, grant_diags *out)
{
    if (!s || !out)
        return 0;
    findings fs = {NULL, 0, 0, s};
    bool has_default = false;
    shadow_budget budget = {0, false};
    for (size_t i = 0; i < s->n; i++) {
        const gk_sb_rule *r = &s->rules[i];
        if (r->action == GK_SB_UNRESOLVED)
            continue;
        has_default |= is_default_rule(r);
        lint_broad_allow(&fs, r);
        lint_paths(&fs, r->filter, 0);
        lint_shadowed(&fs, i, &budget);
    }
    lint_unanchored(&fs);
    lint_unresolved(&fs);
    lint_uncovered(&fs);
    if (!has_default && s->nsources) {
        gk_loc top = {s->sources[0], 0, 0};
        add_finding(&fs, L_NO_DEFAULT, GK_WARNING, top, "add (deny default) after (version 1)",
                    gk_strdup("the profile has no (deny default) or (allow default): "
                              "whatever no rule matches is allowed"));
    }
    /* By source, offset, id; the steps above add in a fixed order, so
     * ties come out the same every run. */
    if (fs.n > 1)
        qsort_r(fs.v, fs.n, sizeof(*fs.v), finding_cmp, (void *)s);
    gk_findings_to_diags(fs.v, fs.n, out);
    free(fs.v);
    return fs.n;
}
