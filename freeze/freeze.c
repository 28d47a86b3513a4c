/* freeze.c - the freeze context and path freezing (grant-language.md §4).
 *
 * The host target (GRANT_TARGET_HOST) is the only place canonicalisation
 * touches a filesystem: symlinks are resolved here, on this machine, once,
 * at compile time. Offline targets (linux, macos, windows) describe another
 * machine, so freezing for them never calls lstat/readlink/getpwnam: the
 * answer must not depend on what happens to exist on the compiling host.
 * The context's defaults (HOME, USER, getcwd, ...) do come from this host;
 * the CLI's CTX flags override them.
 *
 * Windows target: '\' separates like '/', a drive path (C:/x) is absolute,
 * and both spellings use '/'; `real` is ASCII-lowercased because NTFS is
 * case-insensitive. UNC names (\\server\share) are rejected rather than
 * collapsed into /server/share. PATH uses ';' there.
 * Set the target before HOME/CWD/TEMPDIR/xdg values: drive paths are
 * accepted only once the target is windows.
 */
#include "freeze/freeze.h"
#include "common/pathmap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <locale.h>
#include <wctype.h>

#ifndef GK_POLICY_DIR
#define GK_POLICY_DIR "/usr/local/share/grantkit/policies"
#endif

/* The kernel's limit (MAXSYMLINKS); a longer chain is a loop for our purposes. */
#define GK_MAX_SYMLINKS 40

#define GK_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define GK_WINDOWS_PATH "C:/Windows/System32;C:/Windows"
/* A stock Mac's PATH (/etc/paths: the system directories) with Homebrew's
 * two prefixes after them (Apple silicon, then Intel): the PATH a command
 * started from a login shell finds its tools on, never the PATH of the
 * machine grantc runs on. */
#define GK_MACOS_PATH "/usr/bin:/bin:/usr/sbin:/sbin:/opt/homebrew/bin:/usr/local/bin"

const char *const gk_xdg_names[GK_XDG_COUNT] = {"config", "data", "cache", "state", "bin"};

static const char *const xdg_env_names[GK_XDG_COUNT] = {
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_BIN_HOME",
};

/* XDG Base Directory defaults (XDG_BIN_HOME is the de-facto ~/.local/bin). */
static const char *const xdg_default_under_home[GK_XDG_COUNT] = {
    ".config", ".local/share", ".cache", ".local/state", ".local/bin",
};

/* Every valid sigil spelling, for "did you mean" hints. */
static const char *const sigil_spellings[] = {
    "cwd:", "tempdir:", "xdg:config", "xdg:data", "xdg:cache", "xdg:state", "xdg:bin",
};
#define N_SIGILS (sizeof(sigil_spellings) / sizeof(sigil_spellings[0]))

static const char *const xdg_spellings[GK_XDG_COUNT] = {
    "xdg:config", "xdg:data", "xdg:cache", "xdg:state", "xdg:bin",
};

/* ---- small path helpers ------------------------------------------------ */

static bool is_drive_abs(const char *s)
{
    return isalpha((unsigned char)s[0]) && s[1] == ':' && (s[2] == '/' || s[2] == '\\');
}

/* A context value for the windows target: a drive path with no other ':'
 * (a second one names a stream, or a ':'-separated Unix list). */
static bool win_drive_path(const char *s)
{
    return is_drive_abs(s) && !strchr(s + 2, ':');
}

/* A drive-letter path (C:/x) is absolute only on the windows target. */
static bool abs_for_target(grant_target t, const char *s)
{
    return s[0] == '/' || (t == GRANT_TARGET_WINDOWS && is_drive_abs(s));
}

static bool valid_pathlist(grant_target t, const char *value);

static void backslashes_to_slashes(char *s)
{
    for (; *s; s++)
        if (*s == '\\')
            *s = '/';
}

/* Normalise a directory value for the context: absolute on the target,
 * valid UTF-8, lexically normal. NULL when it is none of those. */
static char *normalize_dir(grant_target t, const char *value)
{
    if (!value || !gk_utf8_valid(value, strlen(value)) || !abs_for_target(t, value))
        return NULL;
    /* A windows context names places on a Windows machine: a drive path,
     * never this host's /home/u or /tmp (UNC names are refused, as in
     * policies). */
    if (t == GRANT_TARGET_WINDOWS && !win_drive_path(value))
        return NULL;
    gk_autofree char *copy = gk_strdup(value);
    if (t == GRANT_TARGET_WINDOWS)
        backslashes_to_slashes(copy);
    return gk_lex_normalize(copy);
}

char *gk_lex_normalize(const char *abs)
{
    if (!abs)
        return NULL;
    /* The root: "/" or a drive "C:/" (kept as "C:" plus the '/' of each
     * component). Anything else is not absolute. */
    size_t root_len;
    if (abs[0] == '/')
        root_len = 0;
    else if (isalpha((unsigned char)abs[0]) && abs[1] == ':' && abs[2] == '/')
        root_len = 2;
    else
        return NULL;

    gk_buf out = {0};
    gk_buf_add(&out, abs, root_len);
    const char *p = abs + root_len;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - start);
        if (n == 1 && start[0] == '.')
            continue;
        if (n == 2 && start[0] == '.' && start[1] == '.') {
            if (out.len == root_len) {
                gk_buf_free(&out);
                return NULL;
            }
            char *slash = strrchr(out.data + root_len, '/');
            out.len = (size_t)(slash - out.data);
            out.data[out.len] = '\0';
            continue;
        }
        gk_buf_putc(&out, '/');
        gk_buf_add(&out, start, n);
    }
    if (out.len == root_len)
        gk_buf_putc(&out, '/');
    return gk_buf_steal(&out, NULL);
}

/* ---- the context ------------------------------------------------------- */

/* getpwuid_r/getpwnam_r with a growing buffer (the library may be used
 * from threads, so no static getpw* results). */
static bool lookup_passwd(const char *name, uid_t uid, char **home, char **user)
{
    size_t size = 1024;
    for (;;) {
        struct passwd pw, *res = NULL;
        char *buf = gk_malloc(size);
        int rc = name ? getpwnam_r(name, &pw, buf, size, &res) : getpwuid_r(uid, &pw, buf, size, &res);
        if (rc == ERANGE && size < (1u << 20)) {
            free(buf);
            size *= 2;
            continue;
        }
        bool ok = rc == 0 && res != NULL;
        if (ok) {
            if (home)
                *home = gk_strdup(pw.pw_dir);
            if (user)
                *user = gk_strdup(pw.pw_name);
        }
        free(buf);
        return ok;
    }
}

static bool valid_user(const char *u)
{
    return u && u[0] && !strchr(u, '/') && gk_utf8_valid(u, strlen(u));
}

/* POSIX reads an empty or relative PATH entry as the working directory; a
 * policy frozen at compile time must not depend on where it later runs, so
 * a PATH from the environment keeps only its absolute entries. */
static char *absolute_path_entries(const char *path)
{
    gk_buf b = {0};
    const char *p = path;
    while (true) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && p[0] == '/') {
            if (b.len)
                gk_buf_putc(&b, ':');
            gk_buf_add(&b, p, n);
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (!b.data)
        return gk_strdup("");
    return gk_buf_steal(&b, NULL);
}

static char *policy_path_default(void)
{
    const char *env = getenv("GRANTKIT_POLICY_PATH");
    if (env && env[0] && gk_utf8_valid(env, strlen(env)))
        return gk_strdup(env);
    return gk_strdup(GK_POLICY_DIR);
}

/* Recompute every xdg value that is neither a flag nor from the
 * environment, so defaults follow the current home. */
static void xdg_follow_home(grant_context *ctx)
{
    for (int i = 0; i < GK_XDG_COUNT; i++) {
        if (ctx->explicit_mask & (GK_CTX_BIT_XDG(i) | GK_CTX_BIT_XDG_ENV(i)))
            continue;
        free(ctx->xdg[i]);
        gk_autofree char *joined = gk_path_join(ctx->home, xdg_default_under_home[i]);
        ctx->xdg[i] = gk_lex_normalize(joined);
    }
}

/* Every value not set by a flag, from this host's environment (HOME or
 * the passwd entry, getcwd, TMPDIR, the absolute entries of PATH). */
static void host_defaults(grant_context *ctx)
{
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_HOME))) {
        free(ctx->home);
        ctx->home = normalize_dir(GRANT_TARGET_HOST, getenv("HOME"));
        char *pw_home = NULL;
        if (!ctx->home && lookup_passwd(NULL, geteuid(), &pw_home, NULL))
            ctx->home = normalize_dir(GRANT_TARGET_HOST, pw_home);
        free(pw_home);
        if (!ctx->home)
            ctx->home = gk_strdup("/");
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_CWD))) {
        /* cwd stays NULL when getcwd fails (a deleted directory): freezing
         * a cwd: path then asks for --cwd rather than guessing. */
        free(ctx->cwd);
        char *cwd = getcwd(NULL, 0);
        ctx->cwd = normalize_dir(GRANT_TARGET_HOST, cwd);
        free(cwd);
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_TEMPDIR))) {
        free(ctx->tempdir);
        ctx->tempdir = normalize_dir(GRANT_TARGET_HOST, getenv("TMPDIR"));
        if (!ctx->tempdir)
            ctx->tempdir = gk_strdup("/tmp");
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_PATH))) {
        free(ctx->path);
        const char *env_path = getenv("PATH");
        if (env_path && gk_utf8_valid(env_path, strlen(env_path)))
            ctx->path = absolute_path_entries(env_path);
        else
            ctx->path = gk_strdup(GK_DEFAULT_PATH);
    }
}

/* The windows target describes another machine: nothing of this host
 * (HOME, getcwd, TMPDIR, PATH) applies. Values not set by a flag are
 * Windows' own defaults: home C:/Users/USER, tempdir HOME/AppData/Local/Temp
 * (what %TEMP% is by default), PATH C:/Windows/System32;C:/Windows; the
 * working directory is unknown (cwd: then asks for --cwd). */
static void windows_defaults(grant_context *ctx)
{
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_HOME))) {
        free(ctx->home);
        ctx->home = gk_printf("C:/Users/%s", ctx->user);
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_CWD))) {
        free(ctx->cwd);
        ctx->cwd = NULL;
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_TEMPDIR))) {
        free(ctx->tempdir);
        ctx->tempdir = gk_printf("%s/AppData/Local/Temp", ctx->home);
    }
    if (!(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_PATH))) {
        free(ctx->path);
        ctx->path = gk_strdup(GK_WINDOWS_PATH);
    }
}

int grant_context_new(grant_context **out)
{
    if (!out)
        return -EINVAL;
    grant_context *ctx = gk_calloc(1, sizeof(*ctx));
    ctx->target = GRANT_TARGET_HOST;
    ctx->implicit = true;

    char *pw_user = NULL;
    bool have_pw = lookup_passwd(NULL, geteuid(), NULL, &pw_user);
    const char *env_user = getenv("USER");
    if (valid_user(env_user))
        ctx->user = gk_strdup(env_user);
    else if (have_pw && valid_user(pw_user))
        ctx->user = gk_strdup(pw_user);
    else /* a uid without a passwd entry (containers): name it by number */
        ctx->user = gk_printf("%u", (unsigned)geteuid());
    free(pw_user);
    host_defaults(ctx);

    for (int i = 0; i < GK_XDG_COUNT; i++) {
        /* XDG Base Directory spec: a relative value is invalid, ignore it. */
        char *v = normalize_dir(GRANT_TARGET_HOST, getenv(xdg_env_names[i]));
        if (v) {
            ctx->xdg[i] = v;
            ctx->explicit_mask |= GK_CTX_BIT_XDG_ENV(i);
        }
    }
    xdg_follow_home(ctx);
    ctx->policy_path = policy_path_default();
    ctx->runtime_dir = gk_strdup(getenv("XDG_RUNTIME_DIR"));
    ctx->ssh_auth_sock = gk_strdup(getenv("SSH_AUTH_SOCK"));
    ctx->docker_host = gk_strdup(getenv("DOCKER_HOST"));
    ctx->uid = (unsigned)getuid();
    *out = ctx;
    return 0;
}

void grant_context_free(grant_context *ctx)
{
    if (!ctx)
        return;
    free(ctx->home);
    free(ctx->user);
    free(ctx->cwd);
    free(ctx->tempdir);
    free(ctx->path);
    for (int i = 0; i < GK_XDG_COUNT; i++)
        free(ctx->xdg[i]);
    free(ctx->policy_path);
    free(ctx->runtime_dir);
    free(ctx->ssh_auth_sock);
    free(ctx->docker_host);
    free(ctx);
}

grant_context *gk_context_copy(const grant_context *ctx)
{
    if (!ctx)
        return NULL;
    grant_context *c = gk_calloc(1, sizeof(*c));
    *c = *ctx;
    c->home = gk_strdup(ctx->home);
    c->user = gk_strdup(ctx->user);
    c->cwd = gk_strdup(ctx->cwd);
    c->tempdir = gk_strdup(ctx->tempdir);
    c->path = gk_strdup(ctx->path);
    for (int i = 0; i < GK_XDG_COUNT; i++)
        c->xdg[i] = gk_strdup(ctx->xdg[i]);
    c->policy_path = gk_strdup(ctx->policy_path);
    c->runtime_dir = gk_strdup(ctx->runtime_dir);
    c->ssh_auth_sock = gk_strdup(ctx->ssh_auth_sock);
    c->docker_host = gk_strdup(ctx->docker_host);
    return c;
}

int grant_context_set_target(grant_context *ctx, grant_target target)
{
    if (!ctx || target < GRANT_TARGET_HOST || target > GRANT_TARGET_WINDOWS)
        return -EINVAL;
    /* A value set by a flag must be absolute on the new target: a drive
     * path only for windows, and for windows only a drive path. Defaults
     * are replaced by the target's own (windows_defaults, host_defaults). */
    bool win = target == GRANT_TARGET_WINDOWS, was_win = ctx->target == GRANT_TARGET_WINDOWS;
    static const grant_ctx_key dir_keys[] = {GRANT_CTX_HOME, GRANT_CTX_CWD, GRANT_CTX_TEMPDIR};
    const char *dirs[] = {ctx->home, ctx->cwd, ctx->tempdir};
    for (size_t i = 0; i < 3; i++)
        if ((ctx->explicit_mask & GK_CTX_BIT(dir_keys[i])) && dirs[i] &&
            (win ? !win_drive_path(dirs[i]) : dirs[i][0] != '/'))
            return -EINVAL;
    for (int i = 0; i < GK_XDG_COUNT; i++)
        if ((ctx->explicit_mask & GK_CTX_BIT_XDG(i)) && ctx->xdg[i] &&
            (win ? !win_drive_path(ctx->xdg[i]) : ctx->xdg[i][0] != '/'))
            return -EINVAL;
    if ((ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_PATH)) && ctx->path &&
        !valid_pathlist(target, ctx->path))
        return -EINVAL;
    ctx->target = target;
    ctx->explicit_mask |= GK_CTX_BIT_TARGET;
    if (win)
        windows_defaults(ctx);
    else if (was_win)
        host_defaults(ctx);
    if (target == GRANT_TARGET_MACOS && !(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_PATH))) {
        free(ctx->path);
        ctx->path = gk_strdup(GK_MACOS_PATH);
    } else if (target != GRANT_TARGET_MACOS && !win && !was_win &&
               !(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_PATH)) && ctx->path &&
               strcmp(ctx->path, GK_MACOS_PATH) == 0) {
        host_defaults(ctx); /* back from macos: this host's PATH again */
    }
    /* A profile for another host must not inherit this host's XDG_*_HOME:
     * offline, xdg values come from --xdg or follow the home. */
    if (target != GRANT_TARGET_HOST) {
        for (int i = 0; i < GK_XDG_COUNT; i++)
            ctx->explicit_mask &= ~GK_CTX_BIT_XDG_ENV(i);
        xdg_follow_home(ctx);
    }
    return 0;
}

/* PATH for the target: ':'-separated absolute entries; windows uses ';'
 * because ':' follows every drive letter. An empty value is an empty list. */
static bool valid_pathlist(grant_target t, const char *value)
{
    char sep = t == GRANT_TARGET_WINDOWS ? ';' : ':';
    if (!value[0])
        return true;
    const char *p = value;
    while (true) {
        const char *end = strchr(p, sep);
        size_t n = end ? (size_t)(end - p) : strlen(p);
        gk_autofree char *entry = gk_strndup(p, n);
        if (!abs_for_target(t, entry) || (t == GRANT_TARGET_WINDOWS && !win_drive_path(entry)))
            return false;
        if (!end)
            return true;
        p = end + 1;
    }
}

int grant_context_set(grant_context *ctx, grant_ctx_key key, const char *value)
{
    if (!ctx || !value || !gk_utf8_valid(value, strlen(value)))
        return -EINVAL;
    char **slot;
    char *v;
    switch (key) {
    case GRANT_CTX_HOME:
    case GRANT_CTX_CWD:
    case GRANT_CTX_TEMPDIR:
        v = normalize_dir(ctx->target, value);
        if (!v)
            return -EINVAL;
        slot = key == GRANT_CTX_HOME ? &ctx->home : key == GRANT_CTX_CWD ? &ctx->cwd : &ctx->tempdir;
        break;
    case GRANT_CTX_USER:
        if (!valid_user(value))
            return -EINVAL;
        v = gk_strdup(value);
        slot = &ctx->user;
        break;
    case GRANT_CTX_PATH:
        if (!valid_pathlist(ctx->target, value))
            return -EINVAL;
        v = gk_strdup(value);
        slot = &ctx->path;
        break;
    default:
        return -EINVAL;
    }
    free(*slot);
    *slot = v;
    ctx->explicit_mask |= GK_CTX_BIT(key);
    /* On windows the default home is C:/Users/USER: it follows the user. */
    if (key == GRANT_CTX_USER && ctx->target == GRANT_TARGET_WINDOWS)
        windows_defaults(ctx);
    if (key == GRANT_CTX_HOME || key == GRANT_CTX_USER) {
        if (key == GRANT_CTX_HOME && ctx->target == GRANT_TARGET_WINDOWS &&
            !(ctx->explicit_mask & GK_CTX_BIT(GRANT_CTX_TEMPDIR))) {
            free(ctx->tempdir);
            ctx->tempdir = gk_printf("%s/AppData/Local/Temp", ctx->home);
        }
        xdg_follow_home(ctx);
    }
    return 0;
}

static int xdg_index(const char *name)
{
    for (int i = 0; i < GK_XDG_COUNT; i++)
        if (strcmp(name, gk_xdg_names[i]) == 0)
            return i;
    return -1;
}

int grant_context_set_xdg(grant_context *ctx, const char *name, const char *dir)
{
    if (!ctx || !name)
        return -EINVAL;
    int i = xdg_index(name);
    if (i < 0)
        return -EINVAL;
    if (!dir) {
        /* Back to the default under home (and following it). */
        ctx->explicit_mask &= ~(GK_CTX_BIT_XDG(i) | GK_CTX_BIT_XDG_ENV(i));
        xdg_follow_home(ctx);
        return 0;
    }
    char *v = normalize_dir(ctx->target, dir);
    if (!v)
        return -EINVAL;
    free(ctx->xdg[i]);
    ctx->xdg[i] = v;
    ctx->explicit_mask &= ~GK_CTX_BIT_XDG_ENV(i);
    ctx->explicit_mask |= GK_CTX_BIT_XDG(i);
    return 0;
}

int grant_context_set_implicit(grant_context *ctx, bool implicit)
{
    if (!ctx)
        return -EINVAL;
    ctx->implicit = implicit;
    ctx->explicit_mask |= GK_CTX_BIT_IMPLICIT;
    return 0;
}

int grant_context_set_policy_path(grant_context *ctx, const char *pathlist)
{
    if (!ctx || (pathlist && !gk_utf8_valid(pathlist, strlen(pathlist))))
        return -EINVAL;
    free(ctx->policy_path);
    ctx->policy_path = pathlist ? gk_strdup(pathlist) : policy_path_default();
    return 0;
}

const char *gk_target_name(const grant_context *ctx)
{
    switch (ctx->target) {
    case GRANT_TARGET_LINUX:
        return "linux";
    case GRANT_TARGET_MACOS:
        return "macos";
    case GRANT_TARGET_WINDOWS:
        return "windows";
    case GRANT_TARGET_HOST:
    default:
#if defined(__APPLE__)
        return "macos";
#elif defined(_WIN32)
        return "windows";
#else
        return "linux";
#endif
    }
}

bool gk_target_is_offline(const grant_context *ctx)
{
    return ctx->target != GRANT_TARGET_HOST;
}

/* ---- frozen paths ------------------------------------------------------ */

void gk_fpath_free(gk_fpath *p)
{
    if (!p)
        return;
    free(p->path);
    free(p->real);
    p->path = p->real = NULL;
}

int gk_fpath_cmp(const gk_fpath *a, const gk_fpath *b)
{
    int c = gk_strcmp_bytes(a->real, b->real);
    return c ? c : gk_strcmp_bytes(a->path, b->path);
}

/* ---- step 3: canonicalisation ------------------------------------------ */

static char *read_link(const char *path)
{
    size_t size = 256;
    for (;;) {
        char *buf = gk_malloc(size);
        ssize_t n = readlink(path, buf, size);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < size) {
            buf[n] = '\0';
            return buf;
        }
        free(buf);
        size *= 2;
    }
}

/* Resolve as the kernel would, component by component: a symlink is
 * replaced by its target before the next component (or a '..' in the
 * target) is applied, so `link/..` is the parent of the link's target.
 * From the first component that does not exist (or cannot be examined)
 * the rest is appended lexically, so a dangling link is still followed to
 * where a create through it would land. Below /proc nothing is resolved
 * (see there). NULL after GK_MAX_SYMLINKS links. */
/* A copy of s the cache keeps (its maps borrow their keys). */
static const char *own_copy(gk_resolve_cache *c, const char *s)
{
    char *copy = gk_strdup(s);
    gk_strvec_push_take(&c->owned, copy);
    return copy;
}

static char *resolve_host(const char *lexical, gk_resolve_cache *cache,
                          bool (*opaque)(const char *p, void *arg), void *arg)
{
    gk_buf out = {0};           /* resolved so far; "" is the root */
    char *rest = gk_strdup(lexical);
    size_t pos = 0;
    int links = 0;
    bool missing = false;
    gk_buf_puts(&out, "");
    for (;;) {
        while (rest[pos] == '/')
            pos++;
        if (!rest[pos])
            break;
        size_t start = pos;
        while (rest[pos] && rest[pos] != '/')
            pos++;
        size_t n = pos - start;
        const char *comp = rest + start;
        if (n == 1 && comp[0] == '.')
            continue;
        if (n == 2 && comp[0] == '.' && comp[1] == '.') {
            /* out has no symlinks left, so its lexical parent is real;
             * '..' at the root stays at the root, as in the kernel. */
            char *slash = strrchr(out.data, '/');
            if (slash) {
                out.len = (size_t)(slash - out.data);
                out.data[out.len] = '\0';
            }
            continue;
        }
        size_t before = out.len;
        gk_buf_putc(&out, '/');
        gk_buf_add(&out, comp, n);
        if (missing)
            continue;
        if (strcmp(out.data, "/proc") == 0) {
            /* /proc/self, /proc/thread-self and /proc/PID/fd/N are magic
             * links about the caller: resolving them here would freeze the
             * compiler's own pid and fds into the policy. Keep the rest of
             * a /proc path as written (after /dev/fd -> /proc/self/fd). */
            missing = true;
            continue;
        }
        if (opaque && opaque(out.data, arg)) {
            /* The caller's view there is not the host's (the run's private
             * /tmp): keep the rest as written. */
            missing = true;
            continue;
        }
        /* One readlink per component, as glibc's realpath: EINVAL means
         * it exists and is no link; any other error, missing. A link costs
         * one system call, not two, and readlink is cheaper than lstat. */
        if (cache) {
            uint64_t h = gk_fnv(out.data, out.len);
            if (gk_pathmap_find(&cache->known, out.data, out.len, h) >= 0)
                continue; /* seen in this scan: exists, no link */
            if (gk_pathmap_find(&cache->absent, out.data, out.len, h) >= 0) {
                missing = true; /* seen in this scan: not there */
                continue;
            }
        }
        char lbuf[1024];
        const char *cached_target = NULL;
        if (cache) {
            long id = gk_pathmap_find(&cache->links, out.data, out.len, gk_fnv(out.data, out.len));
            if (id >= 0)
                cached_target = cache->link_targets.v[id];
        }
        ssize_t ln = cached_target ? (ssize_t)strlen(cached_target)
                                   : readlink(out.data, lbuf, sizeof(lbuf));
        if (ln < 0) {
            int err = errno;
            if (err != EINVAL)
                missing = true;
            if (cache && (err == EINVAL || err == ENOENT))
                gk_pathmap_intern(err == EINVAL ? &cache->known : &cache->absent,
                                  own_copy(cache, out.data), out.len);
            continue;
        }
        if (++links > GK_MAX_SYMLINKS) {
            free(rest);
            gk_buf_free(&out);
            return NULL;
        }
        char *target = cached_target               ? gk_strdup(cached_target)
                       : (size_t)ln < sizeof(lbuf) ? gk_strndup(lbuf, (size_t)ln)
                                                   : read_link(out.data);
        if (cache && !cached_target && target && target[0]) {
            /* Seen in this scan: a link to target (ids follow insertion). */
            gk_pathmap_intern(&cache->links, own_copy(cache, out.data), out.len);
            gk_strvec_push(&cache->link_targets, target);
        }
        if (!target || !target[0]) {
            /* Unreadable or empty target: the kernel cannot follow it
             * either; keep the spelling and stop resolving. */
            free(target);
            missing = true;
            continue;
        }
        out.len = target[0] == '/' ? 0 : before;
        out.data[out.len] = '\0';
        char *next = gk_path_join(target, rest + pos); /* no printf: once per link */
        free(target);
        free(rest);
        rest = next;
        pos = 0;
    }
    free(rest);
    if (out.len == 0)
        gk_buf_putc(&out, '/');
    return gk_buf_steal(&out, NULL);
}

char *gk_resolve_host(const char *abs)
{
    return abs && abs[0] == '/' ? resolve_host(abs, NULL, NULL, NULL) : NULL;
}

char *gk_resolve_host_opaque(const char *abs, bool (*opaque)(const char *p, void *arg), void *arg)
{
    return abs && abs[0] == '/' ? resolve_host(abs, NULL, opaque, arg) : NULL;
}

void gk_resolve_cache_note_known(gk_resolve_cache *cache, const char *path)
{
    size_t n = strlen(path);
    if (gk_pathmap_find(&cache->known, path, n, gk_fnv(path, n)) < 0)
        gk_pathmap_intern(&cache->known, own_copy(cache, path), n);
}

void gk_resolve_cache_note_link(gk_resolve_cache *cache, const char *path, const char *target)
{
    size_t n = strlen(path);
    if (!target[0] || gk_pathmap_find(&cache->links, path, n, gk_fnv(path, n)) >= 0)
        return;
    gk_pathmap_intern(&cache->links, own_copy(cache, path), n);
    gk_strvec_push(&cache->link_targets, target);
}

char *gk_resolve_host_cached(const char *abs, gk_resolve_cache *cache)
{
    return abs && abs[0] == '/' ? resolve_host(abs, cache, NULL, NULL) : NULL;
}

void gk_resolve_cache_free(gk_resolve_cache *cache)
{
    gk_pathmap_clear(&cache->known);
    gk_pathmap_clear(&cache->absent);
    gk_pathmap_clear(&cache->links);
    gk_strvec_free(&cache->link_targets);
    gk_pathmap_clear(&cache->dirs);
    gk_pathmap_clear(&cache->entries);
    free(cache->probes);
    free(cache->listed);
    free(cache->names);
    gk_strvec_free(&cache->owned);
}

/* A directory is listed after this many probes: a typical policy's few
 * dozen names cost fewer stats than reading a large bin directory. */
#define LIST_AFTER_PROBES 64


/* The slot of dir in the cache's directory table. */
static size_t dir_slot(gk_resolve_cache *c, const char *dir)
{
    size_t dlen = strlen(dir);
    long known = gk_pathmap_find(&c->dirs, dir, dlen, gk_fnv(dir, dlen));
    /* A copy only for a directory seen the first time: this runs per name
     * per PATH entry. */
    size_t id = known >= 0 ? (size_t)known : gk_pathmap_intern(&c->dirs, own_copy(c, dir), dlen);
    if (id >= c->capdirs) {
        size_t cap = c->capdirs ? c->capdirs * 2 : 16;
        while (cap <= id)
            cap *= 2;
        c->probes = gk_realloc(c->probes, cap * sizeof(*c->probes));
        c->listed = gk_realloc(c->listed, cap * sizeof(*c->listed));
        c->names = gk_realloc(c->names, cap * sizeof(*c->names));
        memset(c->names + c->capdirs, 0, (cap - c->capdirs) * sizeof(*c->names));
        memset(c->probes + c->capdirs, 0, (cap - c->capdirs) * sizeof(*c->probes));
        memset(c->listed + c->capdirs, 0, (cap - c->capdirs) * sizeof(*c->listed));
        c->capdirs = cap;
    }
    return id;
}

void gk_resolve_cache_listed(gk_resolve_cache *c, const char *dir, const gk_pathmap *names)
{
    size_t id = dir_slot(c, dir);
    if (c->listed[id])
        return;
    c->names[id] = names;
    c->listed[id] = true;
}

bool gk_resolve_cache_may_exist(gk_resolve_cache *c, const char *dir, const char *name)
{
    if (!c)
        return true;
    size_t id = dir_slot(c, dir);
    if (!c->listed[id] && ++c->probes[id] >= LIST_AFTER_PROBES) {
        DIR *d = opendir(dir);
        if (!d)
            return true; /* cannot list: stat decides */
        struct dirent *e;
        while ((e = readdir(d))) {
            gk_autofree char *full = gk_path_join(dir, e->d_name);
            gk_pathmap_intern(&c->entries, own_copy(c, full), strlen(full));
        }
        closedir(d);
        c->listed[id] = true;
    }
    if (!c->listed[id])
        return true;
    if (c->names[id]) {
        size_t n = strlen(name);
        return gk_pathmap_find(c->names[id], name, n, gk_fnv(name, n)) >= 0;
    }
    gk_autofree char *full = gk_path_join(dir, name);
    size_t len = strlen(full);
    return gk_pathmap_find(&c->entries, full, len, gk_fnv(full, len)) >= 0;
}

/* macOS: /tmp, /var and /etc are symlinks into /private; a profile for a
 * Mac must name the /private spelling the kernel checks. The table is the
 * one macOS ships; it is applied without looking at the local disk. */
static const char *const macos_aliases[] = {"/tmp", "/var", "/etc"};

/* NTFS compares names after mapping each UTF-16 unit through its upcase
 * table (simple, one-to-one uppercase mapping). Two names are the same
 * file iff their upper-cased forms are equal, so the folded form is the
 * upper-cased one with ASCII then lowered again: ASCII-only paths keep the
 * lower-case spelling grantkit has always written, and no two names that
 * NTFS tells apart fold alike (no uppercase letter is lower-case ASCII).
 * Non-ASCII letters of the Basic Multilingual Plane are mapped with
 * towupper_l in C.UTF-8 (Unicode's simple mapping; Windows' table is older,
 * so a recent letter may differ); without that locale only ASCII folds.
 * Characters outside the BMP never change case (NTFS maps per unit). */
static uint32_t fold_cp(uint32_t cp, locale_t loc)
{
    if (cp >= 0x80 && cp < 0x10000 && loc != (locale_t)0) {
        wint_t m = towupper_l((wint_t)cp, loc);
        if (m < 0x10000 && (m < 0xD800 || m > 0xDFFF))
            cp = (uint32_t)m;
    }
    if (cp >= 'A' && cp <= 'Z')
        cp += 'a' - 'A';
    return cp;
}

static void put_utf8(gk_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    gk_buf_add(b, u, n);
}

char *gk_win_fold(const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s);
    bool ascii = true;
    for (size_t i = 0; i < len && ascii; i++)
        ascii = (unsigned char)s[i] < 0x80;
    if (ascii || !gk_utf8_valid(s, len)) {
        char *r = gk_strdup(s);
        for (char *p = r; *p; p++)
            if (*p == '\\')
                *p = '/';
            else if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        return r;
    }
    locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    gk_buf b = {0};
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp = *p;
        size_t need = cp < 0x80 ? 0 : cp < 0xE0 ? 1 : cp < 0xF0 ? 2 : 3;
        if (need)
            cp &= need == 1 ? 0x1F : need == 2 ? 0x0F : 0x07;
        for (size_t i = 1; i <= need; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        p += need + 1;
        put_utf8(&b, cp == '\\' ? '/' : fold_cp(cp, loc));
    }
    if (loc != (locale_t)0)
        freelocale(loc);
    return gk_buf_steal(&b, NULL);
}

char *gk_canonicalize(const grant_context *ctx, const char *lexical)
{
    return gk_canonicalize_cached(ctx, lexical, NULL);
}

char *gk_canonicalize_cached(const grant_context *ctx, const char *lexical,
                             gk_resolve_cache *cache)
{
    if (!lexical)
        return NULL;
    switch (ctx->target) {
    case GRANT_TARGET_HOST:
        if (lexical[0] != '/')
            return NULL;
        return resolve_host(lexical, cache, NULL, NULL);
    case GRANT_TARGET_MACOS:
        /* Case is kept: APFS volumes may be case-sensitive, and Seatbelt
         * compares the bytes of the path it is given. */
        for (size_t i = 0; i < sizeof(macos_aliases) / sizeof(macos_aliases[0]); i++)
            if (gk_path_within(lexical, macos_aliases[i]))
                return gk_printf("/private%s", lexical);
        return gk_strdup(lexical);
    case GRANT_TARGET_WINDOWS:
        /* '\' separates like '/'; `real` is the NTFS-folded form
         * (gk_win_fold), so matching on it is case-blind. */
        return gk_win_fold(lexical);
    case GRANT_TARGET_LINUX:
    default:
        return gk_strdup(lexical);
    }
}

/* ---- steps 1 and 2: sigils and lexing ---------------------------------- */

/* The home of ~user. The context user is the context home on every target;
 * other users come from the passwd database on the host and from the
 * target's convention offline. */
static char *user_home(const grant_context *ctx, const char *user)
{
    if (ctx->user && strcmp(user, ctx->user) == 0)
        return gk_strdup(ctx->home);
    bool root = strcmp(user, "root") == 0;
    switch (ctx->target) {
    case GRANT_TARGET_HOST: {
        char *home = NULL;
        if (!lookup_passwd(user, 0, &home, NULL))
            return NULL;
        return home;
    }
    case GRANT_TARGET_MACOS:
        return root ? gk_strdup("/var/root") : gk_printf("/Users/%s", user);
    case GRANT_TARGET_WINDOWS:
        return gk_printf("C:/Users/%s", user);
    case GRANT_TARGET_LINUX:
    default:
        return root ? gk_strdup("/root") : gk_printf("/home/%s", user);
    }
}

static void unknown_sigil(grant_diags *diags, gk_loc loc, const grant_context *ctx,
                          const char *sigil, bool is_xdg)
{
    const char *near = is_xdg ? gk_nearest(sigil, xdg_spellings, GK_XDG_COUNT)
                              : gk_nearest(sigil, sigil_spellings, N_SIGILS);
    gk_autofree char *hint = NULL;
    if (near)
        hint = gk_printf("did you mean '%s'?", near);
    else if (is_xdg)
        hint = gk_strdup("xdg: names one of xdg:config, xdg:data, xdg:cache, xdg:state, xdg:bin");
    else if (strlen(sigil) == 2 && isalpha((unsigned char)sigil[0]) && ctx->target != GRANT_TARGET_WINDOWS)
        hint = gk_strdup("a drive letter is absolute only with --target windows");
    else if (strlen(sigil) == 2 && isalpha((unsigned char)sigil[0]))
        hint = gk_printf("write '%s/...': without a separator after the drive, a path is "
                         "relative to that drive's working directory", sigil);
    else
        hint = gk_strdup("paths start with /, ~, cwd:, tempdir: or xdg:NAME");
    gk_diag_add(diags, GK_ERROR, loc, hint, "unknown sigil '%s'", sigil);
}

/* Expand the sigil of word (already '\'-converted on windows) into an
 * absolute, not yet lexed path. -1 with a diagnostic on error. */
static int expand_sigil(const grant_context *ctx, gk_resolve_cache *cache, const char *word,
                        gk_loc loc, grant_diags *diags, char **out)
{
    const char *base = NULL;
    const char *rest = NULL;
    gk_autofree char *owned_base = NULL;

    if (abs_for_target(ctx->target, word)) {
        *out = gk_strdup(word);
        return 0;
    }
    if (word[0] == '~') {
        const char *slash = strchr(word, '/');
        size_t ulen = slash ? (size_t)(slash - word - 1) : strlen(word + 1);
        rest = word + 1 + ulen;
        if (ulen == 0) {
            base = ctx->home;
        } else {
            gk_autofree char *user = gk_strndup(word + 1, ulen);
            owned_base = user_home(ctx, user);
            if (!owned_base) {
                gk_diag_add(diags, GK_ERROR, loc, NULL, "unknown user '%s' in '%s'", user, word);
                return -1;
            }
            if (!abs_for_target(ctx->target, owned_base)) {
                gk_diag_add(diags, GK_ERROR, loc, NULL, "home of user '%s' is not absolute ('%s')",
                            user, owned_base);
                return -1;
            }
            base = owned_base;
        }
    } else {
        const char *colon = strchr(word, ':');
        const char *slash = strchr(word, '/');
        if (!colon || (slash && slash < colon)) {
            gk_autofree char *eg = NULL;
            const char *w = word;
            while (w[0] == '.' && w[1] == '/')
                w += 2;
            eg = gk_printf("paths must be absolute or start with ~, cwd:, tempdir: or xdg: "
                           "(e.g. 'cwd:/%s')", w);
            gk_diag_add(diags, GK_ERROR, loc, eg, "relative path '%s'", word);
            return -1;
        }
        size_t plen = (size_t)(colon - word) + 1;
        gk_autofree char *prefix = gk_strndup(word, plen);
        const char *after = colon + 1;
        if (strcmp(prefix, "cwd:") == 0 || strcmp(prefix, "tempdir:") == 0) {
            bool is_cwd = prefix[0] == 'c';
            if (after[0] && after[0] != '/') {
                gk_autofree char *hint = gk_printf("write '%s/%s'", prefix, after);
                gk_diag_add(diags, GK_ERROR, loc, hint, "expected '/' after '%s' in '%s'", prefix, word);
                return -1;
            }
            base = is_cwd ? ctx->cwd : ctx->tempdir;
            if (!base) {
                gk_diag_add(diags, GK_ERROR, loc, "pass --cwd DIR",
                            "'%s' needs the working directory, which is unknown", word);
                return -1;
            }
            rest = after;
        } else if (strcmp(prefix, "xdg:") == 0) {
            const char *name_end = strchr(after, '/');
            size_t nlen = name_end ? (size_t)(name_end - after) : strlen(after);
            gk_autofree char *name = gk_strndup(after, nlen);
            int i = xdg_index(name);
            if (i < 0) {
                gk_autofree char *sigil = gk_printf("xdg:%s", name);
                unknown_sigil(diags, loc, ctx, sigil, true);
                return -1;
            }
            base = ctx->xdg[i];
            rest = after + nlen;
            /* A hostile XDG_*_HOME (=/etc) would otherwise turn a rule
             * about the user's own files into one about the system's.
             * Compared on real spellings so a symlinked home still works. */
            gk_autofree char *real_base = gk_canonicalize_cached(ctx, base, cache);
            gk_autofree char *real_home = gk_canonicalize_cached(ctx, ctx->home, cache);
            bool inside = real_base && real_home ? gk_path_within(real_base, real_home)
                                                 : gk_path_within(base, ctx->home);
            if (!inside) {
                gk_autofree char *hint = gk_printf("set --xdg %s=DIR inside home, or --home", name);
                gk_diag_add(diags, GK_ERROR, loc, hint,
                            "xdg:%s resolves to '%s', outside home '%s'; refusing (%s?)", name, base,
                            ctx->home, xdg_env_names[i]);
                return -1;
            }
        } else {
            unknown_sigil(diags, loc, ctx, prefix, false);
            return -1;
        }
    }
    if (!rest[0]) {
        *out = gk_strdup(base);
        return 0;
    }
    /* base + '/' + rest, by hand: this runs for every sigil path and printf
     * was a visible share of a large compile. */
    size_t nb = strlen(base), nr = strlen(rest), slash = rest[0] == '/' ? 0 : 1;
    char *o = gk_malloc(nb + slash + nr + 1);
    memcpy(o, base, nb);
    if (slash)
        o[nb] = '/';
    memcpy(o + nb + slash, rest, nr + 1);
    *out = o;
    return 0;
}

const char *gk_win_short_name(const char *path, size_t *len)
{
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/\\");
        const char *tilde = memchr(p, '~', n);
        if (tilde && tilde > p && tilde - p <= 6) {
            bool base_ok = true;
            for (const char *c = p; c < tilde; c++)
                base_ok &= *c != '.' && *c != ' ';
            const char *d = tilde + 1;
            while (d < p + n && *d >= '0' && *d <= '9')
                d++;
            size_t ext = (size_t)(p + n - d);
            bool digits = d > tilde + 1;
            bool ext_ok = ext == 0 || (d[0] == '.' && ext >= 2 && ext <= 4 &&
                                       !memchr(d + 1, '.', ext - 1));
            if (base_ok && digits && ext_ok && (size_t)(d - p) <= 8) {
                *len = n;
                return p;
            }
        }
        p += n;
        while (*p == '/' || *p == '\\')
            p++;
    }
    return NULL;
}

int gk_freeze_lexical(const grant_context *ctx, gk_resolve_cache *cache, const char *text,
                      gk_loc loc, grant_diags *diags, char **out)
{
    *out = NULL;
    if (!text || !text[0]) {
        gk_diag_add(diags, GK_ERROR, loc, NULL, "empty path");
        return -1;
    }
    if (!gk_utf8_valid(text, strlen(text))) {
        gk_diag_add(diags, GK_ERROR, loc, NULL, "path is not valid UTF-8");
        return -1;
    }
    gk_autofree char *word = gk_strdup(text);
    if (ctx->target == GRANT_TARGET_WINDOWS) {
        size_t sl = 0;
        const char *sn = gk_win_short_name(text, &sl);
        if (sn) {
            gk_diag_add(diags, GK_ERROR, loc,
                        "write the long name: which one an alias stands for is the volume's "
                        "to say",
                        "'%.*s' in '%s' is an 8.3 short name", (int)sl, sn, text);
            return -1;
        }
        backslashes_to_slashes(word);
        if (word[0] == '/' && word[1] == '/') {
            gk_diag_add(diags, GK_ERROR, loc, "name the share through a drive letter",
                        "UNC path '%s' is not supported", text);
            return -1;
        }
        /* \x is on the current drive: the working directory's (C: when
         * it is unknown), as the gate reads a query \x. Frozen with its
         * drive so the ACL plan names one place whatever drive applies it. */
        if (word[0] == '/') {
            char drive = ctx->cwd && is_drive_abs(ctx->cwd) ? ctx->cwd[0] : 'C';
            char *d = gk_printf("%c:%s", drive, word);
            free(word);
            word = d;
        }
    }

    gk_autofree char *expanded = NULL;
    if (expand_sigil(ctx, cache, word, loc, diags, &expanded) < 0)
        return -1;
    if (!gk_utf8_valid(expanded, strlen(expanded))) {
        gk_diag_add(diags, GK_ERROR, loc, NULL, "'%s' expands to a path that is not valid UTF-8", text);
        return -1;
    }
    char *lexed = gk_lex_normalize(expanded);
    if (!lexed) {
        gk_autofree char *root = expanded[0] == '/' ? gk_strdup("/") : gk_strndup(expanded, 3);
        gk_autofree char *hint = NULL;
        if (strcmp(expanded, text) != 0)
            hint = gk_printf("'%s' expands to '%s'", text, expanded);
        gk_diag_add(diags, GK_ERROR, loc, hint, "'..' climbs above '%s' in '%s'", root, text);
        return -1;
    }
    *out = lexed;
    return 0;
}

int gk_freeze_path(const grant_context *ctx, gk_resolve_cache *cache, const char *text, gk_loc loc,
                   grant_diags *diags, gk_fpath *out)
{
    out->path = out->real = NULL;
    gk_autofree char *path = NULL;
    if (gk_freeze_lexical(ctx, cache, text, loc, diags, &path) < 0)
        return -1;
    char *real = gk_canonicalize_cached(ctx, path, cache);
    if (!real) {
        gk_diag_add(diags, GK_ERROR, loc, NULL,
                    "too many levels of symbolic links resolving '%s'", path);
        return -1;
    }
    if (!gk_utf8_valid(real, strlen(real))) {
        free(real);
        gk_diag_add(diags, GK_ERROR, loc, NULL,
                    "'%s' resolves through a symbolic link to a name that is not valid UTF-8", path);
        return -1;
    }
    out->path = gk_steal(&path);
    out->real = real;
    return 0;
}
