/* seatbelt.c - the macOS backend: a Seatbelt profile (SBPL) from the
 * projection (backends.md "macOS").
 *
 * Seatbelt applies the last rule that matches, so the order below is the
 * semantics: every allow first, every deny after the allows it overrides,
 * network last. One rule per projected entry, holding every spelling of the
 * entry and its firmlink twin (/tmp and /private/tmp), so a deny can never
 * miss the spelling an allow used.
 *
 *   (version 1) (deny default)
 *   base             fork, signals and sysctl reads, the mach services libSystem
 *                    looks up at start-up, metadata of "/", device writes, ptys
 *   implicit         the target's read-only set as file-read* (never exec)
 *   ancestors        file-read-metadata literals above every granted prefix
 *   regions          file-read* per readable, file-write* per writable region
 *   exec             admitted files (literal) and dirs (subpath), then vetoes:
 *                    files, dirs, names and patterns (regex on the basename),
 *                    and what an empty subcommand list admits for no argument
 *   deny             file-read* file-write* and file-link per deny region
 *   readonly         file-write* and file-link per readonly entry and per
 *                    source file of the policy
 *   pinned           file-write-unlink literals (never subpath: the entries
 *                    of a pinned dir stay mutable)
 *   network*         when net is allowed
 *
 * Deliberate operand-less allows: process-fork, sysctl-read, pseudo-tty,
 * and, only when the projection says the dimension is unrestricted,
 * process-exec, file-read* file-write*, network*. An operand-less allow
 * of anything else would admit what the gate denies.
 *
 * A policy frozen for Linux (host target there) is rendered with its own
 * implicit set and no firmlink twins, with a warning; one frozen for
 * Windows cannot be (-ENOTSUP). Fidelity notes (grantc audit): arguments
 * are invisible to Seatbelt (subcommand lists), and it matches exec rules
 * on the resolved executable, not on the spelling the gate reads.
 *
 * Format "sbpl-params": the same rules, with every path under the context's
 * cwd, home or tempdir (or their firmlink twins) written as
 * (string-append (param "ROOT_n") "/rest"): ROOT_0 cwd, ROOT_1 its twin,
 * ROOT_2 home, ROOT_3 its twin, ROOT_4 tempdir, ROOT_5 its twin (fixed
 * numbers, so the text does not depend on the values), and on macOS the
 * per-user cache dir beside a /var/folders tempdir as
 * DARWIN_USER_CACHE_DIR (its /var twin DARWIN_USER_CACHE_DIR_VAR). After the profile,
 * a comment block lists the parameters used, one `;; -D NAME=VALUE` line
 * each, as sandbox-exec and `grantc sbpl eval` take them.
 */
#include "backends/backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof(*(a)))
#define NOTE_FILE "seatbelt"

/* The mach services every program a developer policy admits looks up on
 * a stock Mac, each with the reason (libSystem, Foundation and the xcrun
 * shims; compared with codex's and sandbox-runtime's base profiles).
 * Anything else (keychain, fonts, the window server, audio) is an
 * application's business, not every program's. */
static const struct {
    const char *name, *why;
} base_mach[] = {
    {"com.apple.system.logger", "asl: libSystem's syslog()"},
    {"com.apple.logd", "os_log, which libSystem and Foundation log through"},
    {"com.apple.system.notification_center", "notifyd: time zone and other change notices"},
    {"com.apple.system.opendirectoryd.libinfo", "getpwuid/getgrgid (git, ls, whoami)"},
    {"com.apple.system.opendirectoryd.membership", "mbr_* group membership (access checks)"},
    {"com.apple.bsd.dirhelper", "creates DARWIN_USER_TEMP_DIR/CACHE_DIR on first confstr()"},
    {"com.apple.cfprefsd.daemon", "CFPreferences, which xcrun and Foundation tools read"},
    {"com.apple.cfprefsd.agent", "CFPreferences of the user domain"},
    {"com.apple.coreservices.launchservicesd", "xcrun finds the selected Xcode by bundle"},
    {"com.apple.lsd.mapdb", "launch services' database, for the same"},
    {"com.apple.trustd.agent", "certificate checks of code signatures (git over https too)"},
    {"com.apple.diagnosticd", "os_activity tracing"},
    {"com.apple.system.DirectoryService.libinfo_v1", "getpwuid on releases before "
                                                     "opendirectoryd's libinfo"},
    /* Not com.apple.SecurityServer: it answers for the keychain, whose
     * items (git's credential-osxkeychain among them) are the user's
     * secrets, not something every program needs. */
};
/* Name resolution when the network is allowed: mDNSResponder and the DNS
 * configuration that getaddrinfo reads. */
static const char *const net_mach[] = {
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.dnssd.service",
};
/* Device writes of the base (backends.md): the discard device always;
 * with the implicit set, these and the target's implicit devices. */
static const char *const base_devices[] = {"/dev/dtracehelper", "/dev/null", "/dev/tty",
                                           "/dev/zero"};

/* The firmlinked roots: /tmp, /var and /etc are /private/... on a Mac. */
static const struct {
    const char *link, *target;
} firmlinks[] = {{"/etc", "/private/etc"}, {"/tmp", "/private/tmp"}, {"/var", "/private/var"}};

#define NROOTS 8
/* The parameter of each root slot: cwd, home, tempdir (each with its
 * firmlink twin), then the per-user cache dir under the name getconf(1)
 * and confstr(3) give it. */
static const char *const root_names[NROOTS] = {
    "ROOT_0", "ROOT_1", "ROOT_2", "ROOT_3", "ROOT_4", "ROOT_5",
    "DARWIN_USER_CACHE_DIR", "DARWIN_USER_CACHE_DIR_VAR",
};

typedef struct sb {
    gk_buf *out;
    grant_diags *notes;
    const gk_projection *pr;
    const grant_policy *p;
    bool params;
    bool mac;            /* frozen for macOS: firmlink twins, the base's devices and ptys */
    char *root[NROOTS];  /* sbpl-params: ROOT_n values (NULL: unused slot) */
    bool used[NROOTS];
} sb;

/* ---- spellings ------------------------------------------------------------ */

/* The firmlink twin of p, or NULL (always NULL off macOS, where /tmp is
 * not /private/tmp). Caller frees. */
static char *twin_of(const sb *s, const char *p)
{
    if (!s->mac)
        return NULL;
    for (size_t i = 0; i < N(firmlinks); i++) {
        if (gk_path_within(p, firmlinks[i].link))
            return gk_printf("/private%s", p);
        if (gk_path_within(p, firmlinks[i].target))
            return gk_strdup(p + strlen("/private"));
    }
    return NULL;
}

/* Add p and its twin to v (the caller sorts). */
static void add_spelling(const sb *s, gk_strvec *v, const char *p)
{
    if (!p)
        return;
    gk_strvec_push(v, p);
    char *t = twin_of(s, p);
    if (t)
        gk_strvec_push_take(v, t);
}

/* ---- text ------------------------------------------------------------------- */

/* An SBPL string literal: `\` doubled, `"` escaped, every other byte as is. */
static void put_quoted(gk_buf *b, const char *s)
{
    gk_buf_putc(b, '"');
    for (;;) {
        size_t run = strcspn(s, "\\\"");
        gk_buf_add(b, s, run);
        s += run;
        if (!*s)
            break;
        gk_buf_putc(b, '\\');
        gk_buf_putc(b, *s++);
    }
    gk_buf_putc(b, '"');
}

/* The root of longest value holding path (ties: the lower number), or -1. */
static int root_of(const sb *s, const char *path)
{
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < NROOTS; i++) {
        if (!s->root[i] || !gk_path_within(path, s->root[i]))
            continue;
        size_t len = strlen(s->root[i]);
        if (best < 0 || len > best_len) {
            best = i;
            best_len = len;
        }
    }
    return best;
}

/* A path operand: a literal, or with sbpl-params a parameter reference. */
static void put_path(sb *s, const char *path)
{
    int r = s->params ? root_of(s, path) : -1;
    if (r < 0) {
        put_quoted(s->out, path);
        return;
    }
    s->used[r] = true;
    const char *rest = path + strlen(s->root[r]);
    if (!*rest) {
        gk_buf_printf(s->out, "(param \"%s\")", root_names[r]);
        return;
    }
    gk_buf_printf(s->out, "(string-append (param \"%s\") ", root_names[r]);
    put_quoted(s->out, rest);
    gk_buf_putc(s->out, ')');
}

/* A regex literal #"RE": RE is already regex syntax, so only `"` is
 * escaped; a backslash pair is copied whole, so the `\` of `\\"` is never
 * taken for the quote's escape. */
static void put_regex(gk_buf *b, const char *re)
{
    gk_buf_puts(b, "#\"");
    for (;;) {
        size_t run = strcspn(re, "\\\"");
        gk_buf_add(b, re, run);
        re += run;
        if (!*re)
            break;
        if (*re == '"' || re[1] == '"') {
            /* `"` and the regex's own `\"` are both a literal quote. */
            gk_buf_puts(b, "\\\"");
            re += *re == '"' ? 1 : 2;
        } else {
            gk_buf_add(b, re, re[1] ? 2 : 1);
            re += re[1] ? 2 : 1;
        }
    }
    gk_buf_putc(b, '"');
}

/* A literal inside a regex: `.^$*+?()[]{}|\/` backslash-escaped (and `"`,
 * by put_regex). */
static char *regex_quote(const char *lit)
{
    gk_buf b = {0};
    for (; *lit; lit++) {
        if (strchr(".^$*+?()[]{}|\\/", *lit))
            gk_buf_putc(&b, '\\');
        gk_buf_putc(&b, *lit);
    }
    if (!b.data)
        gk_buf_puts(&b, "");
    return gk_buf_steal(&b, NULL);
}

static void comment(sb *s, const char *text)
{
    gk_buf_printf(s->out, "\n;; %s\n", text);
}

/* (ACTION OPS (FILTER "p") ...) over the sorted, unique spellings of v. */
static void rule(sb *s, const char *action, const char *ops, const char *filter, gk_strvec *v)
{
    if (!v->n)
        return;
    gk_strvec_sort_unique(v);
    gk_buf_putc(s->out, '(');
    gk_buf_puts(s->out, action);
    gk_buf_putc(s->out, ' ');
    gk_buf_puts(s->out, ops);
    for (size_t i = 0; i < v->n; i++) {
        gk_buf_puts(s->out, " (");
        gk_buf_puts(s->out, filter);
        gk_buf_putc(s->out, ' ');
        put_path(s, v->v[i]);
        gk_buf_putc(s->out, ')');
    }
    gk_buf_puts(s->out, ")\n");
}

/* One rule for one path at every spelling. */
static void rule1(sb *s, const char *action, const char *ops, const char *filter, const char *a,
                  const char *b)
{
    gk_strvec v = {0};
    add_spelling(s, &v, a);
    add_spelling(s, &v, b);
    rule(s, action, ops, filter, &v);
    gk_strvec_free(&v);
}

/* Entry i of sorted list v is also listed at its twin (a walked path and
 * its canonical file): the /private spelling carries the rule for both. */
static bool twin_listed(const sb *s, const gk_strvec *v, size_t i)
{
    if (gk_has_prefix(v->v[i], "/private/"))
        return false;
    gk_autofree char *t = twin_of(s, v->v[i]);
    return t && gk_strvec_bsearch(v, t);
}

static bool same_spellings(const sb *s, const gk_fpath *a, const gk_fpath *b)
{
    if (strcmp(a->real, b->real) != 0)
        return false; /* both spellings of one place canonicalise alike */
    gk_strvec x = {0}, y = {0};
    add_spelling(s, &x, a->path);
    add_spelling(s, &x, a->real);
    add_spelling(s, &y, b->path);
    add_spelling(s, &y, b->real);
    gk_strvec_sort_unique(&x);
    gk_strvec_sort_unique(&y);
    bool same = x.n == y.n;
    for (size_t i = 0; same && i < x.n; i++)
        same = strcmp(x.v[i], y.v[i]) == 0;
    gk_strvec_free(&x);
    gk_strvec_free(&y);
    return same;
}

/* Regions are sorted by real spelling: one written at both /tmp/x and
 * /private/tmp/x comes twice, adjacent, and is ruled once. */
static void rules_regions(sb *s, const char *action, const char *ops, const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (!i || !same_spellings(s, &r->v[i - 1].p, &r->v[i].p))
            rule1(s, action, ops, "subpath", r->v[i].p.path, r->v[i].p.real);
}

static void rules_strings(sb *s, const char *action, const char *ops, const char *filter,
                          const gk_strvec *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (!twin_listed(s, v, i))
            rule1(s, action, ops, filter, v->v[i], NULL);
}

/* ---- exec patterns --------------------------------------------------------- */

static size_t utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

/* Length of the quantifier at p ("*", "+", "?", "{m}", "{m,}", "{m,n}"), or 0. */
static size_t quantifier_len(const char *p)
{
    if (*p == '*' || *p == '+' || *p == '?')
        return 1;
    if (*p != '{')
        return 0;
    const char *q = p + 1;
    if (*q < '0' || *q > '9')
        return 0;
    while ((*q >= '0' && *q <= '9') || *q == ',')
        q++;
    return *q == '}' ? (size_t)(q - p + 1) : 0;
}

/* Length of the bracket class at p ('[' at p[0]), escapes and a leading ']'
 * included; the rest of the string when unclosed (PCRE2 refused it). */
static size_t class_len(const char *p)
{
    size_t i = 1;
    if (p[i] == '^')
        i++;
    if (p[i] == ']')
        i++;
    while (p[i] && p[i] != ']')
        i += p[i] == '\\' && p[i + 1] ? 2 : 1;
    return p[i] ? i + 1 : i;
}

/* A single-character atom that can match a non-ASCII character matches
 * one byte in Seatbelt and one code point in PCRE2: followed by neither
 * `*` nor `+`, it also takes the continuation bytes after it (any non-
 * printable byte), so the veto matches a superset of the names it matches
 * in the gate, never a subset. */
static void put_wide_atom(gk_buf *b, const char *atom, size_t len, bool repeated)
{
    if (repeated) {
        gk_buf_add(b, atom, len);
        return;
    }
    gk_buf_putc(b, '(');
    gk_buf_add(b, atom, len);
    gk_buf_puts(b, "[^ -~/]*)");
}

/* A bracket class of tl bytes at p, kept off '/'. A '"' cannot sit inside a
 * class in a #"..." literal (its escape would be a literal backslash
 * there): a positive class matches it as an alternative instead, exactly;
 * a negated one or a range ending at '"' loses it, wider (*lossy). Returns
 * whether the class can match a non-ASCII character. */
static bool translate_class(gk_buf *out, const char *p, size_t tl, bool *lossy)
{
    bool neg = p[1] == '^';
    size_t lead = neg ? 2 : 1;
    size_t end = tl > lead && p[tl - 1] == ']' ? tl - 1 : tl;
    if (p[lead] == ']' && end == lead)
        end = tl; /* "[]" unclosed: PCRE2 refused it already */
    bool quote = false, range = false, wide = neg;
    for (size_t k = lead; k < end; k++) {
        wide |= (unsigned char)p[k] >= 0x80;
        if (p[k] == '"') {
            quote = true;
            range |= (k > lead && p[k - 1] == '-') || (k + 1 < end && p[k + 1] == '-');
        }
    }
    gk_buf body = {0};
    for (size_t k = lead; k < end; k++)
        if (!quote || p[k] != '"')
            gk_buf_putc(&body, p[k]);
    if (quote && (neg || range)) {
        *lossy = true;
        if (range || !body.len) {
            gk_buf_puts(out, "[^/]");
            gk_buf_free(&body);
            return true;
        }
    }
    if (quote && !neg && !body.len) {
        gk_buf_putc(out, '"');
    } else {
        if (quote && !neg)
            gk_buf_puts(out, "(\"|");
        gk_buf_puts(out, neg ? "[^" : "[");
        /* Never '/' in a negated class: the basename has none. After a
         * leading ']', which is literal there; never last, where a '-'
         * before it would make a range. */
        size_t first = body.len && body.data[0] == ']' ? 1 : 0;
        gk_buf_add(out, body.data ? body.data : "", first);
        if (neg)
            gk_buf_putc(out, '/');
        gk_buf_add(out, body.data ? body.data + first : "", body.len - first);
        if (end < tl)
            gk_buf_putc(out, ']');
        if (quote && !neg)
            gk_buf_putc(out, ')');
    }
    gk_buf_free(&body);
    return wide;
}

/* Translate one top-level alternative of a basename pattern. */
static void translate_alt(gk_buf *b, const char *a, size_t n, bool *lossy)
{
    gk_autofree char *alt = gk_strndup(a, n);
    size_t len = n, start = 0;
    bool head = false, tail = false;
    while (start < len && alt[start] == '^') {
        head = true;
        start++;
    }
    /* A trailing '$' is an anchor unless an odd run of backslashes escapes it. */
    while (len > start && alt[len - 1] == '$') {
        size_t bs = 0;
        while (len - 1 - bs > start && alt[len - 2 - bs] == '\\')
            bs++;
        if (bs % 2)
            break;
        tail = true;
        len--;
    }
    alt[len] = '\0';
    /* ^ is the start of the basename: right after the last '/'. */
    gk_buf_puts(b, head ? "/" : "/[^/]*");
    for (size_t i = start; i < len;) {
        const char *p = alt + i;
        size_t tl;
        if (*p == '\\' && p[1]) {
            tl = 2;
            if (p[1] == '"')
                gk_buf_putc(b, '"'); /* put_regex escapes it */
            else
                gk_buf_add(b, p, tl);
        } else if (*p == '[') {
            tl = class_len(p);
            gk_buf cls = {0};
            bool wide = translate_class(&cls, p, tl, lossy);
            if (wide)
                put_wide_atom(b, cls.data, cls.len, p[tl] == '*' || p[tl] == '+');
            else
                gk_buf_add(b, cls.data, cls.len);
            gk_buf_free(&cls);
        } else if (*p == '.') {
            tl = 1;
            put_wide_atom(b, "[^/]", 4, p[1] == '*' || p[1] == '+');
        } else if (*p == '^' || *p == '$') {
            /* An anchor inside a group cannot be placed in a path regex:
             * dropping it can only widen the match, so the veto widens. */
            tl = 1;
            *lossy = true;
        } else {
            tl = utf8_len((unsigned char)*p);
            for (size_t k = 1; k < tl; k++)
                if (!p[k])
                    tl = k;
            /* A quantified multi-byte character repeats as a whole. */
            bool group = tl > 1 && quantifier_len(p + tl) > 0;
            if (group)
                gk_buf_putc(b, '(');
            gk_buf_add(b, p, tl);
            if (group)
                gk_buf_putc(b, ')');
        }
        i += tl;
    }
    gk_buf_puts(b, tail ? "$" : "[^/]*$");
}

/* A `match` pattern (PCRE2 searched in the basename) as a Seatbelt regex
 * over the whole path: each top-level alternative anchored at the last
 * '/', '.' and negated classes kept off '/'. "^python[0-9.]*$" becomes
 * "/python[0-9.]*$". Caller frees. */
static char *pattern_regex(const char *pat, bool *lossy)
{
    gk_buf b = {0};
    int depth = 0;
    const char *alt = pat;
    for (const char *p = pat;; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p == '[') {
            p += class_len(p) - 1; /* at its ']' (or last byte if unclosed) */
            continue;
        }
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        if (*p == '\0' || (*p == '|' && depth == 0)) {
            if (alt != pat)
                gk_buf_putc(&b, '|');
            translate_alt(&b, alt, (size_t)(p - alt), lossy);
            if (!*p)
                break;
            alt = p + 1;
        }
    }
    return gk_buf_steal(&b, NULL);
}

/* ---- sections ------------------------------------------------------------------ */

static void base(sb *s)
{
    const gk_projection *pr = s->pr;
    comment(s, "base: what every dynamically linked program needs");
    gk_buf_puts(s->out, "(allow process-fork)\n");
    gk_buf_puts(s->out, "(allow signal (target same-sandbox))\n");
    gk_buf_puts(s->out, "(allow sysctl-read)\n");
    gk_buf_puts(s->out, "(allow mach-lookup");
    for (size_t i = 0; i < N(base_mach); i++) {
        gk_buf_puts(s->out, " (global-name ");
        put_quoted(s->out, base_mach[i].name);
        gk_buf_putc(s->out, ')');
    }
    gk_buf_puts(s->out, ")\n");
    if (s->mac) {
        /* What (deny default) leaves allowed must be denied here (the
         * uncovered operations, grantc(1)): other processes' info, NVRAM
         * and IOKit properties. The unfiltered deny is the operations'
         * fallback, so the filtered allow before it still lets a process
         * inspect its own sandbox (and no allow follows a deny it overlaps). */
        gk_buf_puts(s->out, "(allow process-info* (target same-sandbox))\n");
        gk_buf_puts(s->out, "(deny process-info* nvram* iokit-get-properties)\n");
        /* CFPreferences reads (xcrun, Foundation); host_processor_info()
         * for libuv's os.cpus() and sysconf(_SC_NPROCESSORS_*). */
        gk_buf_puts(s->out, "(allow user-preference-read)\n");
        gk_buf_puts(s->out, "(allow mach-host*)\n");
        /* POSIX semaphores and shared memory (Python's multiprocessing
         * SemLock, /mp-XXXX): their names are one global namespace that
         * Seatbelt cannot scope to the process, as codex and
         * sandbox-runtime grant them. */
        gk_buf_puts(s->out, "(allow ipc-posix-sem ipc-posix-shm)\n");
    }
    /* Metadata only: a subpath would admit the whole disk, and listing "/"
     * is a read of "/", which the gate does not grant. */
    gk_buf_puts(s->out, "(allow file-read-metadata (literal \"/\"))\n");
    /* The device writes are part of the implicit set: with --no-implicit
     * only the discard device, which the gate always allows, remains. */
    gk_strvec dev = {0};
    gk_strvec_push(&dev, "/dev/null");
    if (pr->has_implicit && s->mac) {
        for (size_t i = 0; i < N(base_devices); i++)
            gk_strvec_push(&dev, base_devices[i]);
    }
    bool fd_dir = false;
    if (pr->has_implicit)
        for (size_t i = 0; i < pr->implicit.devices.n; i++) {
            const char *d = pr->implicit.devices.v[i];
            /* /dev/ptmx has its own rule below, with ioctl; /dev/fd is a
             * directory of numbered entries. */
            if (s->mac && strcmp(d, "/dev/fd") == 0)
                fd_dir = true;
            else if (!s->mac || strcmp(d, "/dev/ptmx") != 0)
                gk_strvec_push(&dev, d);
        }
    rule(s, "allow", "file-read* file-write-data", "literal", &dev);
    gk_strvec_free(&dev);
    if (fd_dir)
        gk_buf_puts(s->out, "(allow file-read* file-write-data (subpath \"/dev/fd\"))\n");
    gk_buf_puts(s->out, "(allow pseudo-tty)\n");
    if (pr->has_implicit && s->mac) {
        gk_buf_puts(s->out, "(allow file-ioctl (literal \"/dev/tty\"))\n");
        gk_buf_puts(s->out, "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") "
                            "(regex #\"^/dev/ttys[0-9]+$\"))\n");
    }
}

static void implicit(sb *s)
{
    const gk_implicit *im = &s->pr->implicit;
    if (!s->pr->has_implicit || (!im->read.n && !im->write.n))
        return;
    gk_autofree char *c = gk_printf("implicit (%s): read-only, no exec from them", im->target);
    comment(s, c);
    rules_strings(s, "allow", "file-read*", "subpath", &im->read);
    rules_strings(s, "allow", "file-read* file-write*", "subpath", &im->write);
}

static void add_ancestors(const sb *s, gk_strvec *anc, const char *p)
{
    gk_strvec sp = {0};
    add_spelling(s, &sp, p);
    for (size_t i = 0; i < sp.n; i++) {
        char *a = gk_path_parent(sp.v[i]);
        while (a && strcmp(a, "/") != 0) {
            /* Keyed by the /private spelling: the twin joins its rule. */
            char *t = twin_of(s, a);
            gk_strvec_push(anc, t && gk_has_prefix(t, "/private/") ? t : a);
            free(t);
            char *up = gk_path_parent(a);
            free(a);
            a = up;
        }
        free(a);
    }
    gk_strvec_free(&sp);
}

/* Metadata of every proper ancestor of a granted prefix, so stat() and
 * path walks reach the grant; never the contents of the ancestor. */
static void ancestors(sb *s)
{
    const gk_projection *pr = s->pr;
    gk_strvec anc = {0};
    if (pr->has_implicit) {
        for (size_t i = 0; i < pr->implicit.read.n; i++)
            add_ancestors(s, &anc, pr->implicit.read.v[i]);
        for (size_t i = 0; i < pr->implicit.write.n; i++)
            add_ancestors(s, &anc, pr->implicit.write.v[i]);
    }
    const gk_regions *rs[2] = {&pr->read, &pr->write};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < rs[k]->n; i++) {
            add_ancestors(s, &anc, rs[k]->v[i].p.path);
            add_ancestors(s, &anc, rs[k]->v[i].p.real);
        }
    gk_strvec_sort_unique(&anc);
    if (anc.n) {
        comment(s, "ancestors of granted paths: metadata only");
        rules_strings(s, "allow", "file-read-metadata", "literal", &anc);
    }
    gk_strvec_free(&anc);
}

static void regions(sb *s)
{
    const gk_projection *pr = s->pr;
    if (!pr->fs_restricted) {
        comment(s, "fs unrestricted: everything but the denies below");
        gk_buf_puts(s->out, "(allow file-read* file-write*)\n");
        return;
    }
    if (pr->read.n) {
        comment(s, "readable regions");
        rules_regions(s, "allow", "file-read*", &pr->read);
    }
    if (pr->write.n) {
        comment(s, "writable regions");
        rules_regions(s, "allow", "file-write*", &pr->write);
    }
}

static void exec_rules(sb *s)
{
    const gk_projection *pr = s->pr;
    const grant_policy *p = s->p;
    comment(s, "exec");
    if (!pr->exec_restricted) {
        /* No layer restricts exec: the gate admits every program that is not
         * vetoed, and the vetoes follow. */
        gk_buf_puts(s->out, "(allow process-exec)\n");
    } else {
        /* An empty admit list emits nothing: an operand-less allow would
         * admit everything. */
        gk_strvec lits = {0}, res = {0};
        for (size_t i = 0; i < pr->exec_admit.n; i++) {
            const char *a = pr->exec_admit.v[i];
            bool dir = gk_stack_names_exec_dir(&p->stack, a, false);
            if (!twin_listed(s, &pr->exec_admit, i))
                rule1(s, "allow", "process-exec", dir ? "subpath" : "literal", a, NULL);
            if (s->mac && !dir)
                gk_macos_exec_targets(a, &lits, &res);
            else if (s->mac)
                gk_macos_dir_targets(a, &lits, &res);
        }
        /* Seatbelt checks the executable a Mac really runs: the developer
         * dir's tool behind an xcrun shim, the Cellar file behind a
         * Homebrew link (the alias table of gate/implicit.c). */
        gk_strvec_sort_unique(&lits);
        gk_strvec_sort_unique(&res);
        if (lits.n || res.n)
            comment(s, "where the admitted programs resolve to on a Mac");
        for (size_t i = 0; i < lits.n; i++)
            if (!gk_strvec_bsearch(&pr->exec_admit, lits.v[i]))
                rule1(s, "allow", "process-exec", "literal", lits.v[i], NULL);
        for (size_t i = 0; i < res.n; i++) {
            gk_buf_puts(s->out, "(allow process-exec (regex ");
            put_regex(s->out, res.v[i]);
            gk_buf_puts(s->out, "))\n");
        }
        gk_strvec_free(&lits);
        gk_strvec_free(&res);
    }
    gk_strvec vlits = {0}, vres = {0};
    for (size_t i = 0; i < pr->exec_veto.n; i++) {
        const char *v = pr->exec_veto.v[i];
        bool dir = gk_stack_names_exec_dir(&p->stack, v, true);
        if (!twin_listed(s, &pr->exec_veto, i))
            rule1(s, "deny", "process-exec", dir ? "subpath" : "literal", v, NULL);
        /* A vetoed shim or link is vetoed where it resolves to as well. */
        if (s->mac)
            (dir ? gk_macos_dir_targets : gk_macos_exec_targets)(v, &vlits, &vres);
    }
    gk_strvec_sort_unique(&vlits);
    gk_strvec_sort_unique(&vres);
    for (size_t i = 0; i < vlits.n; i++)
        rule1(s, "deny", "process-exec", "literal", vlits.v[i], NULL);
    for (size_t i = 0; i < vres.n; i++) {
        gk_buf_puts(s->out, "(deny process-exec (regex ");
        put_regex(s->out, vres.v[i]);
        gk_buf_puts(s->out, "))\n");
    }
    gk_strvec_free(&vlits);
    gk_strvec_free(&vres);
    /* Names and patterns, from every layer, in sorted order. A name or file
     * whose subcommand list is empty is admitted for no argv[1] at all (the
     * restriction reads every identity, and a name every basename): as good
     * as a veto, and one an admitted dir must not undo. */
    gk_strvec names = {0}, pats = {0}, never = {0};
    for (size_t i = 0; i < p->stack.n; i++) {
        const gk_layer *f = p->stack.v[i];
        if (!f->has_exec)
            continue;
        for (size_t k = 0; k < f->exec.veto_names.n; k++)
            gk_strvec_push(&names, f->exec.veto_names.v[k].key);
        for (size_t k = 0; k < f->exec.veto_match.n; k++)
            gk_strvec_push(&pats, f->exec.veto_match.v[k].key);
        for (size_t k = 0; k < f->exec.names.n; k++)
            if (!f->exec.names.v[k].all && !f->exec.names.v[k].subs.n)
                gk_strvec_push(&names, f->exec.names.v[k].key);
        for (size_t k = 0; k < f->exec.files.n; k++)
            if (!f->exec.files.v[k].all && !f->exec.files.v[k].subs.n)
                gk_strvec_push(&never, f->exec.files.v[k].key);
    }
    gk_strvec_sort_unique(&names);
    gk_strvec_sort_unique(&pats);
    gk_strvec_sort_unique(&never);
    for (size_t i = 0; i < never.n; i++)
        if (!gk_strvec_bsearch(&pr->exec_veto, never.v[i]))
            rule1(s, "deny", "process-exec", "literal", never.v[i], NULL);
    gk_strvec_free(&never);
    for (size_t i = 0; i < names.n; i++) {
        gk_autofree char *q = regex_quote(names.v[i]);
        gk_autofree char *re = gk_printf("/%s$", q);
        gk_buf_puts(s->out, "(deny process-exec (regex ");
        put_regex(s->out, re);
        gk_buf_puts(s->out, "))\n");
    }
    for (size_t i = 0; i < pats.n; i++) {
        bool lossy = false;
        gk_autofree char *re = pattern_regex(pats.v[i], &lossy);
        gk_buf_puts(s->out, "(deny process-exec (regex ");
        put_regex(s->out, re);
        gk_buf_puts(s->out, "))\n");
        if (lossy)
            gk_diag_file(s->notes, GK_NOTE, NOTE_FILE,
                         "deny match \"%s\": Seatbelt's regex cannot say it exactly (an anchor "
                         "inside a group, a '\"' in a negated class or range); rendered wider, "
                         "so the profile refuses more names than the gate",
                         pats.v[i]);
    }
    if (names.n)
        gk_diag_file(s->notes, GK_WARNING, NOTE_FILE,
                     "exec vetoes by name match the basename of the file Seatbelt sees (the "
                     "resolved executable): a link named like a vetoed program but pointing to "
                     "another one is refused by the gate only");
    gk_strvec_free(&names);
    gk_strvec_free(&pats);
}

static bool covers_dev_null(const gk_regions *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (gk_path_within("/dev/null", r->v[i].p.real) ||
            gk_path_within("/dev/null", r->v[i].p.path))
            return true;
    return false;
}

static void denies(sb *s)
{
    const gk_projection *pr = s->pr;
    if (pr->deny.n) {
        comment(s, "denied regions");
        for (size_t i = 0; i < pr->deny.n; i++) {
            const gk_fpath *e = &pr->deny.v[i].p;
            rule1(s, "deny", "file-read* file-write*", "subpath", e->path, e->real);
            rule1(s, "deny", "file-link", "subpath", e->path, e->real);
        }
    }
    if (pr->readonly.n || pr->protect.n) {
        /* file-link too: a hard link made in a writable region would be a
         * second, writable name for the same file. */
        comment(s, "readonly entries and the policy's own sources");
        for (size_t i = 0; i < pr->readonly.n; i++) {
            const gk_fpath *e = &pr->readonly.v[i].p;
            rule1(s, "deny", "file-write*", "subpath", e->path, e->real);
            rule1(s, "deny", "file-link", "subpath", e->path, e->real);
        }
        for (size_t i = 0; i < pr->protect.n; i++) {
            rule1(s, "deny", "file-write*", "subpath", pr->protect.v[i], NULL);
            rule1(s, "deny", "file-link", "subpath", pr->protect.v[i], NULL);
        }
    }
    if (pr->pinned.n) {
        comment(s, "pinned dirs: renaming one would carry a protected entry away");
        rules_strings(s, "deny", "file-write-unlink", "literal", &pr->pinned);
    }
    /* The gate allows the discard device whatever denies it (gate.c). */
    if (covers_dev_null(&pr->deny) || covers_dev_null(&pr->readonly)) {
        comment(s, "the discard device needs no authority");
        gk_buf_puts(s->out, "(allow file-read* file-write-data (literal \"/dev/null\"))\n");
    }
}

/* A destination list (network.md §3): Seatbelt cannot match names, so the
 * profile lets the command reach only a proxy on localhost that applies
 * the list; its port is a parameter, known only when the proxy runs. */
static void network_list(sb *s)
{
    comment(s, "network: only the proxy that applies the destination list");
    gk_buf_puts(s->out, "(allow network-outbound (remote tcp (string-append \"localhost:\" "
                        "(param \"PROXY_PORT\"))))\n");
    gk_diag_file(s->notes, GK_NOTE, NOTE_FILE,
                 "net: Seatbelt cannot restrict by destination name; the profile allows outbound "
                 "TCP only to localhost:PROXY_PORT (-D PROXY_PORT=N), where a proxy applying the "
                 "same rules (%zu allowed, %zu denied patterns) must run on the Mac",
                 s->pr->net_allow.n, s->pr->net_deny.n);
}

static void network(sb *s)
{
    if (s->pr->net_list) {
        network_list(s);
        return;
    }
    if (!s->pr->net)
        return;
    comment(s, "network");
    gk_buf_puts(s->out, "(allow mach-lookup");
    for (size_t i = 0; i < N(net_mach); i++) {
        gk_buf_puts(s->out, " (global-name ");
        put_quoted(s->out, net_mach[i]);
        gk_buf_putc(s->out, ')');
    }
    gk_buf_puts(s->out, ")\n");
    gk_buf_puts(s->out, "(allow network*)\n");
}

/* Arguments are invisible to Seatbelt: say which admissions lose their
 * subcommand list. */
static void subcommand_notes(sb *s)
{
    gk_strvec keys = {0};
    for (size_t i = 0; i < s->p->stack.n; i++) {
        const gk_layer *f = s->p->stack.v[i];
        if (!f->has_exec)
            continue;
        const gk_admits *as[2] = {&f->exec.names, &f->exec.files};
        for (int k = 0; k < 2; k++)
            for (size_t j = 0; j < as[k]->n; j++)
                if (!as[k]->v[j].all && as[k]->v[j].subs.n) /* empty: denied above */
                    gk_strvec_push(&keys, as[k]->v[j].key);
    }
    gk_strvec_sort_unique(&keys);
    for (size_t i = 0; i < keys.n; i++)
        gk_diag_file(s->notes, GK_WARNING, NOTE_FILE,
                     "%s: Seatbelt cannot see arguments, so the profile admits it with any "
                     "subcommand; only the gate (grantrun) enforces the list",
                     keys.v[i]);
    gk_strvec_free(&keys);
}

static void set_root(sb *s, int slot, const char *value)
{
    /* "/" would parameterise every path; a newline cannot sit in the
     * `;; -D` line. */
    if (!value || value[0] != '/' || !value[1] || strchr(value, '\n'))
        return;
    s->root[slot] = gk_strdup(value);
    s->root[slot + 1] = twin_of(s, value);
}

int gk_emit_seatbelt(const gk_emit_input *in, grant_diags *notes, gk_buf *out)
{
    bool params;
    if (strcmp(in->format, "sbpl") == 0)
        params = false;
    else if (strcmp(in->format, "sbpl-params") == 0)
        params = true;
    else
        return -EINVAL;
    const grant_context *ctx = in->policy->ctx;
    const char *target = gk_target_name(ctx);
    if (strcmp(target, "windows") == 0) {
        gk_diag_file(notes, GK_ERROR, NOTE_FILE,
                     "the policy was compiled for windows: its paths mean nothing to Seatbelt "
                     "(compile with --target macos)");
        return -ENOTSUP;
    }
    if (strcmp(target, "macos") != 0)
        gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                     "the policy was compiled for %s: its paths and implicit set are that "
                     "system's, not a Mac's (compile with --target macos)",
                     target);

    sb s = {.out = out,
            .notes = notes,
            .pr = in->proj,
            .p = in->policy,
            .params = params,
            .mac = strcmp(target, "macos") == 0};
    if (params) {
        set_root(&s, 0, ctx->cwd);
        set_root(&s, 2, ctx->home);
        set_root(&s, 4, ctx->tempdir);
        gk_autofree char *cache = s.mac ? gk_macos_user_cache_dir(ctx->tempdir) : NULL;
        set_root(&s, 6, cache);
    }
    gk_buf_puts(out, ";; Seatbelt profile generated by grantkit from the policy's projection.\n"
                     ";; Last matching rule wins: each deny follows the allows it overrides.\n");
    gk_buf_puts(out, "(version 1)\n(deny default)\n");
    base(&s);
    if (s.pr->fs_restricted) {
        implicit(&s);
        ancestors(&s);
    }
    regions(&s);
    exec_rules(&s);
    denies(&s);
    network(&s);

    if (s.pr->exec_restricted && s.pr->exec_admit.n)
        gk_diag_file(notes, GK_WARNING, NOTE_FILE,
                     "Seatbelt admits an exec by the resolved executable: a link to an admitted "
                     "file, or into an admitted dir, is admitted by the profile although the "
                     "gate, which reads spellings, refuses it");
    subcommand_notes(&s);

    bool any = false;
    for (int i = 0; params && i < NROOTS; i++)
        any |= s.used[i];
    if (any || s.pr->net_list) {
        gk_buf_puts(out, "\n;; params (pass each to sandbox-exec or grantc sbpl eval):\n");
        for (int i = 0; params && i < NROOTS; i++)
            if (s.used[i])
                gk_buf_printf(out, ";; -D %s=%s\n", root_names[i], s.root[i]);
        if (s.pr->net_list) /* known only when the proxy runs: no value here */
            gk_buf_puts(out, ";; PROXY_PORT: the port of the destination proxy on localhost "
                             "(-D PROXY_PORT=N)\n");
    }
    for (int i = 0; i < NROOTS; i++)
        free(s.root[i]);
    return 0;
}
