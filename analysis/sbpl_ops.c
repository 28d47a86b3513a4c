/* sbpl_ops.c - what the SBPL reader and evaluator share: Seatbelt's
 * operation tree, its vnode types and its regex dialect.
 *
 * Operations form a tree: `default` is the root; a name ending in '*' is
 * the parent of every operation its stem prefixes (file* > file-read* >
 * file-read-data), the longest such stem winning. The reader resolves the
 * names a profile writes (aliases included) and compiles its regexes; the
 * evaluator walks the tree and matches. Neither calls into the other.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analysis/sbpl.h"
#include "syntax/syntax.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof(*(a)))

/* ---- operations ------------------------------------------------------------ */

/* Seatbelt's operation names (macOS 10.15 and later), `default` first. */
static const char *const op_table[] = {
    "default",
    "appleevent-send",
    "authorization-right-obtain",
    "boot-arg-set",
    "device*",
    "device-camera",
    "device-microphone",
    "darwin-notification-post",
    "distributed-notification-post",
    "dynamic-code-generation",
    "file*",
    "file-chroot",
    "file-clone",
    "file-ioctl",
    "file-issue-extension",
    "file-link",
    "file-map-executable",
    "file-mknod",
    "file-mount",
    "file-mount-update",
    "file-read*",
    "file-read-data",
    "file-read-metadata",
    "file-read-xattr",
    "file-revoke",
    "file-search",
    "file-test-existence",
    "file-unmount",
    "file-write*",
    "file-write-acl",
    "file-write-create",
    "file-write-data",
    "file-write-finderinfo",
    "file-write-flags",
    "file-write-mode",
    "file-write-owner",
    "file-write-setugid",
    "file-write-times",
    "file-write-unlink",
    "file-write-xattr",
    "fs-rename",
    "fs-snapshot*",
    "fs-snapshot-create",
    "fs-snapshot-delete",
    "fs-snapshot-revert",
    "generic-issue-extension",
    "qtn-user",
    "hid-control",
    "iokit*",
    "iokit-issue-extension",
    "iokit-open",
    "iokit-set-properties",
    "iokit-get-properties",
    "iokit-open-service",
    "iokit-open-user-client",
    "iokit-async-external-method",
    "iokit-external-method",
    "iokit-external-trap",
    "ipc*",
    "ipc-posix*",
    "ipc-posix-issue-extension",
    "ipc-posix-sem*",
    "ipc-posix-sem-create",
    "ipc-posix-sem-open",
    "ipc-posix-sem-post",
    "ipc-posix-sem-unlink",
    "ipc-posix-sem-wait",
    "ipc-posix-shm*",
    "ipc-posix-shm-read*",
    "ipc-posix-shm-read-data",
    "ipc-posix-shm-read-metadata",
    "ipc-posix-shm-write*",
    "ipc-posix-shm-write-create",
    "ipc-posix-shm-write-data",
    "ipc-posix-shm-write-unlink",
    "ipc-sysv*",
    "ipc-sysv-msg",
    "ipc-sysv-sem",
    "ipc-sysv-shm",
    "job-creation",
    "load-unsigned-code",
    "lsopen",
    "mach*",
    "mach-cross-domain-lookup",
    "mach-host*",
    "mach-host-exception-port-set",
    "mach-host-special-port-set",
    "mach-issue-extension",
    "mach-lookup",
    "mach-per-user-lookup",
    "mach-kernel-endpoint",
    "mach-bootstrap",
    "mach-priv*",
    "mach-priv-host-port",
    "mach-priv-task-port",
    "mach-register",
    "mach-task-name",
    "network*",
    "network-inbound",
    "network-bind",
    "network-outbound",
    "nvram*",
    "nvram-delete",
    "nvram-get",
    "nvram-set",
    "opendirectory-user-modify",
    "process*",
    "process-codesigning-status*",
    "process-codesigning-status-set",
    "process-codesigning-status-get",
    "process-exec*",
    "process-exec-interpreter",
    "process-fork",
    "process-info*",
    "process-info-codesignature",
    "process-info-dirtycontrol",
    "process-info-listpids",
    "process-info-rusage",
    "process-info-pidinfo",
    "process-info-pidfdinfo",
    "process-info-pidfileportinfo",
    "process-info-setcontrol",
    "pseudo-tty",
    "signal",
    "socket-ioctl",
    "sysctl*",
    "sysctl-read",
    "sysctl-write",
    "system*",
    "system-acct",
    "system-audit",
    "system-automount",
    "system-debug",
    "system-fsctl",
    "system-info",
    "system-kext*",
    "system-kext-load",
    "system-kext-unload",
    "system-kext-query",
    "system-mac-label",
    "system-mac-syscall",
    "system-necp-client-action",
    "system-kas-info",
    "system-nfssvc",
    "system-package-check",
    "system-privilege",
    "system-reboot",
    "system-sched",
    "system-set-time",
    "system-socket",
    "system-suspend-resume",
    "system-swap",
    "user-preference*",
    "user-preference-read",
    "managed-preference-read",
    "user-preference-write",
    "syscall*",
    "syscall-unix",
    "syscall-mach",
    "syscall-mig",
    "socket-option*",
    "socket-option-get",
    "socket-option-set",
    "necp-client-open",
    "storage-class-map",
};

/* sbpl_v1's aliases of operations. */
static const struct {
    const char *alias, *op;
} op_aliases[] = {
    {"process-exec", "process-exec*"},
    {"file-unlink", "file-write-unlink"},
    {"file-write-mount", "file-mount"},
    {"file-write-unmount", "file-unmount"},
    {"file-write-umount", "file-unmount"},
    {"file-fsctl", "system-fsctl"},
    {"ipc-posix-sem", "ipc-posix-sem*"},
    {"ipc-posix-shm", "ipc-posix-shm*"},
    {"system-misc", "system*"},
    {"time-set", "system-set-time"},
    {"file-issue-extension*", "file-issue-extension"},
    {"file-issue-extension-read", "file-issue-extension"},
    {"file-issue-extension-write", "file-issue-extension"},
    {"managed-preference*", "managed-preference-read"},
};

#define NOPS N(op_table)

/* Operations that (deny default) leaves allowed on macOS: a profile must
 * deny them itself. One row per fact, with where it is stated. */
static const gk_sb_uncovered uncovered[] = {
    {"process-info*",
     "Gecko security/sandbox/mac/SandboxPolicyContent.h (mozilla/gecko-dev 1a9200d3): \"These "
     "are not included in (deny default)\" before its denials of process-info*, nvram*, "
     "iokit-get-properties and file-map-executable; Chromium sandbox/policy/mac/renderer.sb "
     "(660078f8, crbug.com/799149): \"These operations are allowed by default\" before (deny "
     "iokit-get-properties process-info* nvram*)"},
    {"nvram*", "Gecko SandboxPolicyContent.h and Chromium renderer.sb, as process-info*"},
    {"iokit-get-properties", "Gecko SandboxPolicyContent.h and Chromium renderer.sb, as process-info*"},
    {"file-map-executable", "Gecko SandboxPolicyContent.h, as process-info* (Chromium does not "
                            "deny it)"},
};

const gk_sb_uncovered *gk_sb_uncovered_table(size_t *n)
{
    *n = N(uncovered);
    return uncovered;
}

const char *gk_sb_op_uncovered(int op)
{
    for (size_t i = 0; i < N(uncovered); i++)
        if (gk_sb_op_covers(gk_sb_op_lookup(uncovered[i].op), op))
            return uncovered[i].source;
    return NULL;
}

static int op_parent_of(size_t i)
{
    if (i == 0)
        return -1;
    const char *name = op_table[i];
    int best = 0;
    size_t bestlen = 0;
    for (size_t k = 1; k < NOPS; k++) {
        const char *w = op_table[k];
        size_t wl = strlen(w);
        if (k == i || wl < 2 || w[wl - 1] != '*')
            continue;
        /* The stem ("file-read") prefixes the name, which is longer. */
        if (strlen(name) > wl - 1 && strncmp(name, w, wl - 1) == 0 && wl - 1 > bestlen &&
            strcmp(name, w) != 0) {
            best = (int)k;
            bestlen = wl - 1;
        }
    }
    return best;
}

static int op_parents[NOPS];
static gk_sb_argkind op_kinds[NOPS];
static const char *all_names[NOPS + N(op_aliases)];
static size_t nall_names;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static gk_sb_argkind argkind_of(const char *n);

/* The tree and the name list, computed once (read-only afterwards). */
static void build_tables(void)
{
    size_t k = 0;
    for (size_t i = 0; i < NOPS; i++) {
        op_parents[i] = op_parent_of(i);
        op_kinds[i] = argkind_of(op_table[i]);
        all_names[k++] = op_table[i];
    }
    for (size_t i = 0; i < N(op_aliases); i++)
        all_names[k++] = op_aliases[i].alias;
    nall_names = k;
}

int gk_sb_op_parent(int op)
{
    pthread_once(&tables_once, build_tables);
    return op < 0 || (size_t)op >= NOPS ? -1 : op_parents[op];
}

int gk_sb_op_lookup(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < N(op_aliases); i++)
        if (strcmp(name, op_aliases[i].alias) == 0)
            name = op_aliases[i].op;
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(name, op_table[i]) == 0)
            return (int)i;
    return -1;
}

const char *gk_sb_op_name(int op)
{
    return op >= 0 && (size_t)op < NOPS ? op_table[op] : "?";
}

size_t gk_sb_op_count(void)
{
    return NOPS;
}

bool gk_sb_op_covers(int ancestor, int op)
{
    for (int o = op; o >= 0; o = gk_sb_op_parent(o))
        if (o == ancestor)
            return true;
    return false;
}

gk_sb_argkind gk_sb_op_argkind(int op)
{
    pthread_once(&tables_once, build_tables);
    return op >= 0 && (size_t)op < NOPS ? op_kinds[op] : GK_SB_ARG_NONE;
}

static gk_sb_argkind argkind_of(const char *n)
{
    if (gk_has_prefix(n, "file") || gk_has_prefix(n, "process-exec"))
        return GK_SB_ARG_PATH;
    if (strcmp(n, "mach-lookup") == 0 || strcmp(n, "mach-register") == 0 ||
        strcmp(n, "mach-cross-domain-lookup") == 0 || strcmp(n, "mach-per-user-lookup") == 0)
        return GK_SB_ARG_NAME;
    if (gk_has_prefix(n, "sysctl"))
        return GK_SB_ARG_SYSCTL;
    if (strcmp(n, "signal") == 0 || gk_has_prefix(n, "process-info") ||
        strcmp(n, "mach-priv-task-port") == 0 || strcmp(n, "mach-task-name") == 0)
        return GK_SB_ARG_TARGET;
    if (gk_has_prefix(n, "network"))
        return GK_SB_ARG_NET;
    if (gk_has_prefix(n, "ipc-posix"))
        return GK_SB_ARG_IPC;
    return GK_SB_ARG_NONE;
}

const char *const *gk_sb_op_names(size_t *n)
{
    /* A flat table of names and aliases, for hints. */
    pthread_once(&tables_once, build_tables);
    *n = nall_names;
    return all_names;
}

/* ---- vnode types ---------------------------------------------------------- */

static const char *const vnode_names[GK_SB_VNODE_COUNT] = {
    "REGULAR-FILE", "DIRECTORY", "SYMLINK", "FIFO",
    "SOCKET", "CHARACTER-DEVICE", "BLOCK-DEVICE", "TTY",
};

const char *gk_sb_vnode_name(int v)
{
    return v >= 0 && v < GK_SB_VNODE_COUNT ? vnode_names[v] : "?";
}

int gk_sb_vnode_lookup(const char *name)
{
    for (int i = 0; name && i < GK_SB_VNODE_COUNT; i++)
        if (strcmp(name, vnode_names[i]) == 0)
            return i;
    return -1;
}

/* ---- regexes ---------------------------------------------------------------- */

/* A compiled SBPL regex: one pcre2 code, or two when the pattern escapes
 * a punctuation character inside a bracket class ("[^\.]", which Apple's
 * own profiles write). POSIX reads that backslash as a member of the
 * class, a Perl-style engine as an escape; which one Seatbelt's matcher
 * follows is not documented, so both readings are kept and an answer on
 * which they differ (a string holding a backslash) is unknown. */
typedef struct sb_regex {
    pcre2_code *a;   /* the escape reading ([^.]) or the only one */
    pcre2_code *b;   /* the POSIX reading ([^\\.]); NULL when unambiguous */
} sb_regex;

/* The two readings of pat, or 0 when no class holds an escaped
 * punctuation byte (an escaped letter or digit is a class escape, which
 * gk_regex_unportable names). */
static int class_readings(const char *pat, char **esc, char **posix)
{
    gk_buf e = {0}, p = {0};
    bool any = false;
    for (size_t i = 0; pat[i];) {
        if (pat[i] == '\\' && pat[i + 1]) {
            gk_buf_add(&e, pat + i, 2);
            gk_buf_add(&p, pat + i, 2);
            i += 2;
            continue;
        }
        if (pat[i] != '[') {
            gk_buf_putc(&e, pat[i]);
            gk_buf_putc(&p, pat[i]);
            i++;
            continue;
        }
        size_t j = i + 1;
        if (pat[j] == '^')
            j++;
        if (pat[j] == ']')
            j++;
        gk_buf_add(&e, pat + i, j - i);
        gk_buf_add(&p, pat + i, j - i);
        for (; pat[j] && pat[j] != ']'; j++) {
            unsigned char c = (unsigned char)pat[j + 1];
            if (pat[j] == '\\' && c && c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                                  (c >= '0' && c <= '9'))) {
                any = true;
                /* escape reading: the byte; POSIX reading: backslash and byte */
                if (c == ']' || c == '\\' || c == '^' || c == '-')
                    gk_buf_putc(&e, '\\');
                gk_buf_putc(&e, (char)c);
                gk_buf_puts(&p, "\\\\");
                if (c == ']' || c == '^' || c == '-')
                    gk_buf_putc(&p, '\\');
                gk_buf_putc(&p, (char)c);
                j++;
                continue;
            }
            gk_buf_putc(&e, pat[j]);
            gk_buf_putc(&p, pat[j]);
        }
        if (pat[j] == ']') {
            gk_buf_putc(&e, ']');
            gk_buf_putc(&p, ']');
            j++;
        }
        i = j;
    }
    if (!any) {
        gk_buf_free(&e);
        gk_buf_free(&p);
        return 0;
    }
    *esc = gk_buf_steal(&e, NULL);
    *posix = gk_buf_steal(&p, NULL);
    return 1;
}

static pcre2_code *compile1(const char *pat, char **err, size_t *erroff)
{
    int ec = 0;
    PCRE2_SIZE eo = 0;
    /* POSIX semantics: '.' matches any byte, '$' only at the very end; no
     * UTF mode, since paths are bytes. Unanchored: searched anywhere. */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                   PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        if (pcre2_get_error_message(ec, msg, sizeof(msg)) < 0)
            snprintf((char *)msg, sizeof(msg), "error %d", ec);
        *err = gk_printf("bad regex: %s", (const char *)msg);
        *erroff = eo;
    }
    return re;
}

void *gk_sb_regex_compile(const char *pat, char **err, size_t *erroff)
{
    char *esc = NULL, *posix = NULL;
    bool two = class_readings(pat, &esc, &posix);
    size_t off = 0;
    /* The subset check reads the escape reading, which has no escape left
     * inside a class; offsets then point at the pattern as written only
     * approximately, so errors of a two-reading pattern point at its start. */
    char *why = gk_regex_unportable(two ? esc : pat, &off);
    if (why) {
        *err = gk_printf("%s is not in Seatbelt's regex dialect (POSIX extended)", why);
        *erroff = two ? 0 : off;
        free(why);
        free(esc);
        free(posix);
        return NULL;
    }
    sb_regex *r = gk_calloc(1, sizeof(*r));
    r->a = compile1(two ? esc : pat, err, erroff);
    if (r->a && two)
        r->b = compile1(posix, err, erroff);
    free(esc);
    free(posix);
    if (!r->a || (two && !r->b)) {
        if (two)
            *erroff = 0;
        gk_sb_regex_free(r);
        return NULL;
    }
    *err = NULL;
    return r;
}

static int match1(const pcre2_code *re, const char *s)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

int gk_sb_regex_match(const void *re, const char *s)
{
    const sb_regex *r = re;
    int a = match1(r->a, s);
    if (!r->b)
        return a;
    return match1(r->b, s) == a ? a : 2;
}

void gk_sb_regex_free(void *re)
{
    sb_regex *r = re;
    if (!r)
        return;
    pcre2_code_free(r->a);
    pcre2_code_free(r->b);
    free(r);
}
