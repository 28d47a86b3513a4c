/* implicit.c - the grants every program needs on each target
 * (grant-language.md §6): read-only system paths, the private /tmp, the
 * devices; and, for macOS, where an exec lands (the xcrun shims and
 * Homebrew's links), since Seatbelt checks the resolved executable. The
 * gate adds the grants to its answers and the projection renders them;
 * both read them from here, so neither depends on the other. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "gate/gate.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const linux_read[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ssl",
    "/etc/ca-certificates", "/etc/passwd", "/etc/group", "/etc/alternatives", "/etc/localtime",
};
static const char *const linux_devices[] = {"/dev/null", "/dev/zero", "/dev/random",
                                            "/dev/urandom", "/dev/tty", "/dev/shm"};
/* What a program started on a stock Mac reads, each with why. */
static const gk_implicit_entry macos_read_table[] = {
    {"/usr", "libSystem, the dyld shared cache's sources, /usr/share (zoneinfo, locale)"},
    {"/bin", "the system's programs"},
    {"/sbin", "the system's programs"},
    {"/System", "frameworks, the dyld cache (/System/Library/dyld), SystemVersion.plist"},
    {"/Library/Apple", "Rosetta and the system's own libraries"},
    {"/private/var/db/dyld", "the dyld shared cache of older releases"},
    {"/private/etc", "passwd, hosts, gitconfig, localtime (a link into /var/db/timezone)"},
    {"/dev", "device metadata: random, urandom, the ttys"},
    {"/private/var/db/timezone", "the zoneinfo /etc/localtime points to (date, localtime)"},
    {"/private/var/db/xcode_select_link", "the developer dir xcode-select chose: the xcrun shims "
                                          "(/usr/bin/git, clang, make) read it to find the tool"},
    {"/Library/Developer", "the Command Line Tools: the real git, clang, make and the SDKs "
                           "(stdio.h) the shims run and read"},
    {"/Applications/Xcode.app", "the selected Xcode's toolchain and SDKs, when it is selected"},
    {"/opt/homebrew", "Homebrew's kegs, libraries and the Cellar its bin/ links resolve to, "
                      "when PATH leads there (on Intel it is /usr/local, which /usr already "
                      "covers)"},
};

/* Does the context's PATH hold a directory under prefix? */
static bool path_under(const grant_context *ctx, const char *prefix)
{
    if (!ctx->path)
        return false;
    gk_autofree char *list = gk_strdup(ctx->path);
    char *save = NULL;
    for (char *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save))
        if (gk_path_within(d, prefix))
            return true;
    return false;
}
/* Devices beyond the base (backends.md): the descriptor aliases a shell
 * redirection and `cat /dev/stdin` open; /dev/fd is a directory. */
static const gk_implicit_entry macos_device_table[] = {
    {"/dev/null", "the discard device"},
    {"/dev/zero", "zero pages"},
    {"/dev/tty", "the controlling terminal (read, write, ioctl)"},
    {"/dev/dtracehelper", "dyld registers DTrace probes at start-up"},
    {"/dev/ptmx", "openpty()"},
    {"/dev/fd", "a process's own descriptors (/dev/fd/N)"},
    {"/dev/stdin", "the link to /dev/fd/0"},
    {"/dev/stdout", "the link to /dev/fd/1"},
    {"/dev/stderr", "the link to /dev/fd/2"},
};

const gk_implicit_entry *gk_implicit_macos_table(int which, size_t *n)
{
    if (which == 0) {
        *n = sizeof(macos_read_table) / sizeof(*macos_read_table);
        return macos_read_table;
    }
    *n = sizeof(macos_device_table) / sizeof(*macos_device_table);
    return macos_device_table;
}
static const char *const windows_read[] = {"C:/Windows/System32", "C:/Windows/SysWOW64",
                                           "C:/Windows/WinSxS", "C:/Windows/Fonts"};

#define N(a) (sizeof(a) / sizeof(*(a)))

void gk_implicit_for(const grant_context *ctx, gk_implicit *out)
{
    memset(out, 0, sizeof(*out));
    out->target = gk_target_name(ctx);
    if (!ctx->implicit)
        return;
    bool host = !gk_target_is_offline(ctx);
    if (strcmp(out->target, "linux") == 0) {
        for (size_t i = 0; i < N(linux_read); i++) {
            struct stat st;
            /* On the host, only what exists (bwrap binds with -try). */
            if (!host || lstat(linux_read[i], &st) == 0)
                gk_strvec_push(&out->read, linux_read[i]);
        }
        gk_strvec_push(&out->write, "/tmp");
        for (size_t i = 0; i < N(linux_devices); i++)
            gk_strvec_push(&out->devices, linux_devices[i]);
        out->proc = true;
    } else if (strcmp(out->target, "macos") == 0) {
        for (size_t i = 0; i < N(macos_read_table); i++)
            /* Homebrew's tree only where its programs can be run from. */
            if (strcmp(macos_read_table[i].path, "/opt/homebrew") != 0 ||
                path_under(ctx, "/opt/homebrew"))
                gk_strvec_push(&out->read, macos_read_table[i].path);
        /* The devices the Seatbelt base lets a program write (backends.md). */
        for (size_t i = 0; i < N(macos_device_table); i++)
            gk_strvec_push(&out->devices, macos_device_table[i].path);
        /* Git checks its user config at start-up and dies on any error but
         * "no such file": under Seatbelt an unreadable ~/.gitconfig is
         * EPERM, and every git command would fail (grantc audit GK016). */
        if (ctx->home && ctx->home[0] == '/') {
            gk_strvec_push_take(&out->read, gk_path_join(ctx->home, ".gitconfig"));
            if (ctx->xdg[GK_XDG_CONFIG])
                gk_strvec_push_take(&out->read, gk_path_join(ctx->xdg[GK_XDG_CONFIG], "git"));
        }
        /* The per-user cache dir (confstr DARWIN_USER_CACHE_DIR), beside
         * the temporary dir a Mac gives TMPDIR: compilers keep their module
         * caches there. Known only when the temporary dir is that one. */
        char *cache = gk_macos_user_cache_dir(ctx->tempdir);
        if (cache)
            gk_strvec_push_take(&out->write, cache);
    } else {
        for (size_t i = 0; i < N(windows_read); i++)
            gk_strvec_push(&out->read, windows_read[i]);
        gk_strvec_push(&out->devices, "NUL");
    }
    /* Offline, the implicit set is matched against canonical queries: give
     * it the target's canonical spelling (Windows: case-folded). */
    if (!host) {
        gk_strvec *lists[3] = {&out->read, &out->write, &out->devices};
        for (int l = 0; l < 3; l++)
            for (size_t i = 0; i < lists[l]->n; i++) {
                char *c = gk_canonicalize(ctx, lists[l]->v[i]);
                if (c) {
                    free(lists[l]->v[i]);
                    lists[l]->v[i] = c;
                }
            }
    }
    gk_strvec_sort_unique(&out->read);
}

/* ---- macOS: the user cache dir ---------------------------------------------- */

/* /private/var/folders/XX/YYYY/T -> /private/var/folders/XX/YYYY/C (also
 * spelled under /var); NULL for any other temporary dir. */
char *gk_macos_user_cache_dir(const char *tempdir)
{
    if (!tempdir)
        return NULL;
    const char *t = gk_has_prefix(tempdir, "/private/var/folders/") ? tempdir + 21
                    : gk_has_prefix(tempdir, "/var/folders/")       ? tempdir + 13
                                                                     : NULL;
    if (!t)
        return NULL;
    const char *a = strchr(t, '/');
    if (!a || a == t)
        return NULL;
    const char *b = strchr(a + 1, '/');
    if (!b || b == a + 1 || strcmp(b, "/T") != 0)
        return NULL;
    return gk_printf("/private/var/folders/%.*s/C", (int)(b - t), t);
}

/* ---- macOS: where an exec lands ---------------------------------------------- */

/* The developer dirs the xcrun shims of /usr/bin run their tool from: the
 * Command Line Tools, or the selected Xcode (its own usr/bin, then its
 * default toolchain). */
static const char *const xcrun_dirs[] = {
    "/Library/Developer/CommandLineTools/usr/bin",
    "/Applications/Xcode.app/Contents/Developer/usr/bin",
    "/Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/bin",
};

/* The programs of /usr/bin that are xcrun shims (libxcselect trampolines)
 * rather than the tool itself: the shim execs DEVDIR/NAME. */
static const char *const xcrun_shims[] = {
    "ar",      "as",       "bison",    "c++",      "c89",      "c99",          "cc",
    "clang",   "clang++",  "cmpdylib", "codesign_allocate",    "cpp",          "ctags",
    "dsymutil", "dwarfdump", "flex",   "g++",      "gcc",      "gcov",         "git",
    "git-receive-pack",    "git-shell", "git-upload-archive",  "git-upload-pack",
    "gm4",     "gnumake",  "gperf",    "indent",   "install_name_tool",        "ld",
    "lex",     "libtool",  "lipo",     "lldb",     "lorder",   "m4",           "make",
    "mig",     "nm",       "nmedit",   "objdump",  "otool",    "pagestuff",    "pip3",
    "python3", "ranlib",   "rpcgen",   "segedit",  "size",     "strings",      "strip",
    "swift",   "swiftc",   "unifdef",  "unifdefall", "vtool",  "xcrun",        "yacc",
};

/* Homebrew's prefixes: bin/NAME is a link to Cellar/FORMULA/VERSION/bin/NAME,
 * which Seatbelt sees. */
static const char *const brew_prefixes[] = {"/opt/homebrew", "/usr/local"};

/* Where a command resolves to when its link does not lead to the keg's
 * bin/ of the same name (the alias table, documented in grantc(1)). PREFIX
 * stands for a Homebrew prefix or the Command Line Tools; each pattern is
 * a Seatbelt regex (POSIX extended) over the resolved path. */
typedef struct exec_alias {
    const char *name;   /* the command, as admitted */
    const char *root;   /* "brew" (each Homebrew prefix) or "clt" (the shim of /usr/bin) */
    const char *tail;   /* regex after the root, anchored by the caller */
    const char *reason;
} exec_alias;

static const exec_alias exec_aliases[] = {
    {"python3", "brew",
     "/Cellar/python@[0-9.]+/[^/]+/Frameworks/Python\\.framework/Versions/[0-9.]+/bin/"
     "python3(\\.[0-9]+)?",
     "bin/python3 links to the framework's versioned python3.N"},
    {"python3", "brew",
     "/Cellar/python@[0-9.]+/[^/]+/Frameworks/Python\\.framework/Versions/[0-9.]+/Resources/"
     "Python\\.app/Contents/MacOS/Python",
     "the framework python re-executes itself as Python.app"},
    {"python3", "clt",
     "/Library/Frameworks/Python3\\.framework/Versions/[0-9.]+/bin/python3(\\.[0-9]+)?",
     "the CommandLineTools python3 links into its Python3.framework"},
    {"python3", "clt",
     "/Library/Frameworks/Python3\\.framework/Versions/[0-9.]+/Resources/Python\\.app/Contents/"
     "MacOS/Python",
     "and re-executes itself as Python.app"},
    {"pip3", "brew", "/Cellar/python@[0-9.]+/[^/]+/Frameworks/Python\\.framework/Versions/[0-9.]+/bin/pip3(\\.[0-9]+)?",
     "pip3 lives in the framework too"},
    {"node", "brew", "/Cellar/node(@[0-9]+)?/[^/]+/bin/node", "node@N kegs are versioned formulae"},
    {"pkg-config", "brew", "/Cellar/pkgconf/[^/]+/bin/pkgconf",
     "pkg-config is pkgconf's link of another name"},
    {"gawk", "brew", "/Cellar/gawk/[^/]+/bin/gawk(-[0-9.]+)?", "gawk links to a versioned gawk"},
};

static void quote_regex(gk_buf *b, const char *lit)
{
    for (; *lit; lit++) {
        if (strchr(".^$*+?()[]{}|\\/", *lit))
            gk_buf_putc(b, '\\');
        gk_buf_putc(b, *lit);
    }
}

static bool in_table(const char *s, const char *const *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, t[i]) == 0)
            return true;
    return false;
}

void gk_macos_exec_targets(const char *file, gk_strvec *literals, gk_strvec *regexes)
{
    const char *name = strrchr(file, '/');
    if (!name || !name[1])
        return;
    name++;
    size_t dirlen = (size_t)(name - 1 - file);
    if (dirlen == 8 && strncmp(file, "/usr/bin", 8) == 0 && in_table(name, xcrun_shims, N(xcrun_shims))) {
        for (size_t i = 0; i < N(xcrun_dirs); i++)
            gk_strvec_push_take(literals, gk_printf("%s/%s", xcrun_dirs[i], name));
        for (size_t i = 0; i < N(exec_aliases); i++)
            if (strcmp(exec_aliases[i].name, name) == 0 && strcmp(exec_aliases[i].root, "clt") == 0)
                gk_strvec_push_take(regexes, gk_printf("^/Library/Developer/CommandLineTools%s$",
                                                       exec_aliases[i].tail));
    }
    for (size_t p = 0; p < N(brew_prefixes); p++) {
        size_t pl = strlen(brew_prefixes[p]);
        if (dirlen != pl + 4 || strncmp(file, brew_prefixes[p], pl) != 0 ||
            strncmp(file + pl, "/bin", 4) != 0)
            continue;
        gk_buf b = {0};
        gk_buf_putc(&b, '^');
        quote_regex(&b, brew_prefixes[p]);
        gk_buf_puts(&b, "/Cellar/[^/]+/[^/]+/bin/");
        quote_regex(&b, name);
        gk_buf_putc(&b, '$');
        gk_strvec_push_take(regexes, gk_buf_steal(&b, NULL));
        for (size_t i = 0; i < N(exec_aliases); i++)
            if (strcmp(exec_aliases[i].name, name) == 0 && strcmp(exec_aliases[i].root, "brew") == 0) {
                gk_buf r = {0};
                gk_buf_putc(&r, '^');
                quote_regex(&r, brew_prefixes[p]);
                gk_buf_puts(&r, exec_aliases[i].tail);
                gk_buf_putc(&r, '$');
                gk_strvec_push_take(regexes, gk_buf_steal(&r, NULL));
            }
    }
}

void gk_macos_dir_targets(const char *dir, gk_strvec *literals, gk_strvec *regexes)
{
    if (gk_path_within("/usr/bin", dir))
        for (size_t i = 0; i < N(xcrun_shims); i++) {
            gk_autofree char *f = gk_printf("/usr/bin/%s", xcrun_shims[i]);
            gk_macos_exec_targets(f, literals, regexes);
        }
    for (size_t p = 0; p < N(brew_prefixes); p++) {
        gk_autofree char *bin = gk_printf("%s/bin", brew_prefixes[p]);
        if (!gk_path_within(bin, dir))
            continue;
        gk_buf b = {0};
        gk_buf_putc(&b, '^');
        quote_regex(&b, brew_prefixes[p]);
        gk_buf_puts(&b, "/Cellar/[^/]+/[^/]+/bin/[^/]+$");
        gk_strvec_push_take(regexes, gk_buf_steal(&b, NULL));
        for (size_t i = 0; i < N(exec_aliases); i++)
            if (strcmp(exec_aliases[i].root, "brew") == 0) {
                gk_buf r = {0};
                gk_buf_putc(&r, '^');
                quote_regex(&r, brew_prefixes[p]);
                gk_buf_puts(&r, exec_aliases[i].tail);
                gk_buf_putc(&r, '$');
                gk_strvec_push_take(regexes, gk_buf_steal(&r, NULL));
            }
    }
}

/* Does the regex re match all of s? */
static bool full_match(const char *re, const char *s)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_DOLLAR_ENDONLY, &ec,
                                  &eo, NULL);
    if (!c)
        return false;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(c, NULL);
    bool ok = pcre2_match(c, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL) >= 0;
    pcre2_match_data_free(md);
    pcre2_code_free(c);
    return ok;
}

char *gk_macos_exec_stand_in(const char *resolved)
{
    const char *name = strrchr(resolved, '/');
    if (!name || !name[1])
        return NULL;
    name++;
    size_t dirlen = (size_t)(name - 1 - resolved);
    for (size_t i = 0; i < N(xcrun_dirs); i++)
        if (strlen(xcrun_dirs[i]) == dirlen && strncmp(resolved, xcrun_dirs[i], dirlen) == 0 &&
            in_table(name, xcrun_shims, N(xcrun_shims)))
            return gk_printf("/usr/bin/%s", name);
    for (size_t i = 0; i < N(exec_aliases); i++) {
        const exec_alias *a = &exec_aliases[i];
        if (strcmp(a->root, "clt") == 0) {
            gk_autofree char *re = gk_printf("^/Library/Developer/CommandLineTools%s$", a->tail);
            if (full_match(re, resolved))
                return gk_printf("/usr/bin/%s", a->name);
        }
    }
    for (size_t p = 0; p < N(brew_prefixes); p++) {
        gk_autofree char *cellar = gk_printf("%s/Cellar/", brew_prefixes[p]);
        if (!gk_has_prefix(resolved, cellar))
            continue;
        /* PREFIX/Cellar/FORMULA/VERSION/bin/NAME */
        const char *f = resolved + strlen(cellar);
        const char *v = strchr(f, '/');
        const char *bin = v ? strchr(v + 1, '/') : NULL;
        if (v && v > f && bin && bin > v + 1 && gk_has_prefix(bin, "/bin/") && !strchr(bin + 5, '/'))
            return gk_printf("%s/bin/%s", brew_prefixes[p], bin + 5);
        for (size_t i = 0; i < N(exec_aliases); i++) {
            const exec_alias *a = &exec_aliases[i];
            if (strcmp(a->root, "brew") != 0)
                continue;
            gk_buf r = {0};
            gk_buf_putc(&r, '^');
            quote_regex(&r, brew_prefixes[p]);
            gk_buf_puts(&r, a->tail);
            gk_buf_putc(&r, '$');
            gk_autofree char *re = gk_buf_steal(&r, NULL);
            if (full_match(re, resolved))
                return gk_printf("%s/bin/%s", brew_prefixes[p], a->name);
        }
    }
    return NULL;
}

const char *gk_macos_exec_alias_reason(size_t i, const char **name, const char **root,
                                       const char **tail)
{
    if (i >= N(exec_aliases))
        return NULL;
    *name = exec_aliases[i].name;
    *root = exec_aliases[i].root;
    *tail = exec_aliases[i].tail;
    return exec_aliases[i].reason;
}
