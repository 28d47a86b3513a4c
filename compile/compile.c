/* compile.c - the driver: read files, parse either surface, resolve
 * include/extend, freeze, and fold everything into one stack.
 *
 * include "x" adds x's layers (meet); extend "x" joins x's own layer into
 * this file's layer. The extended file's own includes are its demands, so
 * they are added as layers rather than joined (a join of a stack is not a
 * layer); this keeps extend sound.
 *
 * Resolution: "./" and "../" paths are relative to the including file;
 * absolute paths are taken as written; any other path is looked up only
 * along the policy path, so a file planted beside a project policy cannot
 * shadow base/minimal.grant. */
#include "ir/ir.h"

#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <nettle/version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define GK_INCLUDE_DEPTH 32

typedef struct unit {
    char *key;      /* canonical file name, for the cache and cycle checks */
    gk_stack layers; /* include layers, then the file's own layer last */
    bool has_own;   /* the last layer is this file's own layer */
    bool ok;
    grant_context *ctx; /* a compiled IR's own context, else NULL */
} unit;

typedef struct loader {
    const grant_context *ctx;
    grant_diags *diags;
    grant_policy *policy;
    unit **cache;
    size_t ncache, capcache;
    gk_strvec chain_keys, chain_names; /* files being loaded, outermost first */
    /* One compile freezes against one moment's view of the host: what
     * exists and what does not, dropped when the compile ends. */
    gk_resolve_cache host;
} loader;

static void unit_free(unit *u)
{
    if (!u)
        return;
    free(u->key);
    gk_stack_free(&u->layers);
    grant_context_free(u->ctx);
    free(u);
}

static gk_surface surface_of(const char *name)
{
    if (gk_has_suffix(name, ".yaml") || gk_has_suffix(name, ".yml"))
        return GK_SURFACE_YAML;
    if (gk_has_suffix(name, ".json"))
        return GK_SURFACE_JSON;
    return GK_SURFACE_GRANT;
}

static char *dir_of(const char *name)
{
    const char *s = strrchr(name, '/');
    if (!s)
        return gk_strdup(".");
    if (s == name)
        return gk_strdup("/");
    return gk_strndup(name, (size_t)(s - name));
}

/* dir + rel for display, without "./" noise. */
static char *join_display(const char *dir, const char *rel)
{
    while (gk_has_prefix(rel, "./"))
        rel += 2;
    if (strcmp(dir, ".") == 0)
        return gk_strdup(rel);
    return gk_path_join(dir, rel);
}

static bool has_dotdot(const char *rel)
{
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return true;
        p += n + (e != NULL);
    }
    return false;
}

/* The first directory of the policy path holding a readable rel: the
 * file's name there, or NULL. What is found there stays under it: a file a
 * link leads out of its directory ends the search with *outside (where it
 * leads) and *dir (the directory) set. Both callers refuse '..' first. */
static char *policy_path_find(const char *pp, const char *rel, char **outside, char **dir,
                              gk_strvec *absent)
{
    char *list = gk_strdup(pp), *save = NULL, *found = NULL;
    for (char *d = strtok_r(list, ":", &save); d && !found && !*outside;
         d = strtok_r(NULL, ":", &save)) {
        char *cand = gk_path_join(d, rel);
        int ok = access(cand, R_OK), err = errno;
        struct stat st;
        /* a directory is no policy (a run's placeholder, protect_absent) */
        bool is_dir = ok == 0 && stat(cand, &st) == 0 && S_ISDIR(st.st_mode);
        if (ok != 0 || is_dir) {
            if (absent && (is_dir || err == ENOENT) && d[0] == '/')
                gk_strvec_push(absent, cand);
            free(cand);
            continue;
        }
        gk_autofree char *real_dir = realpath(d, NULL), *real = realpath(cand, NULL);
        size_t n = real_dir ? strlen(real_dir) : 0;
        if (!real_dir || !real || strncmp(real, real_dir, n) != 0 ||
            (real[n] != '/' && !(n == 1 && real_dir[0] == '/'))) {
            *outside = gk_strdup(real ? real : cand);
            *dir = gk_strdup(d);
            free(cand);
        } else {
            found = cand;
        }
    }
    free(list);
    return found;
}

/* The names a later compile opens before a file it finds along the
 * policy path, absent now: compiled for this host, they are protected
 * like the sources (kept absent during runs), or the command could put a
 * policy of its own where the next run looks first. */
static void protect_absent(loader *L, const gk_strvec *names)
{
    if (L->ctx->target != GRANT_TARGET_HOST)
        return;
    for (size_t i = 0; i < names->n; i++)
        gk_strvec_push_take(&L->policy->protect, gk_lex_normalize(names->v[i]));
}

static char *resolve_include(loader *L, const char *from, const char *rel, gk_loc loc)
{
    if (rel[0] == '/')
        return gk_strdup(rel);
    if (gk_has_prefix(rel, "./") || gk_has_prefix(rel, "../")) {
        gk_autofree char *dir = dir_of(from);
        return join_display(dir, rel);
    }
    const char *pp = L->ctx->policy_path ? L->ctx->policy_path : "";
    /* What is found along the policy path stays under it: no '..' climbs
     * out, and a link inside it may not lead out either. */
    if (has_dotdot(rel)) {
        gk_diag_add(L->diags, GK_ERROR, loc,
                    "name a file under a policy path directory, or include it with './'",
                    "'%s' climbs out of the policy path with '..'", rel);
        return NULL;
    }
    gk_autofree char *outside = NULL, *dir = NULL;
    gk_strvec absent = {0};
    char *found = policy_path_find(pp, rel, &outside, &dir, &absent);
    if (found)
        protect_absent(L, &absent);
    gk_strvec_free(&absent);
    if (outside) {
        gk_diag_add(L->diags, GK_ERROR, loc, "policy path entries must not link out of it",
                    "'%s' on the policy path leads to '%s', outside '%s'", rel, outside, dir);
        return NULL;
    }
    if (!found)
        gk_diag_add(L->diags, GK_ERROR, loc,
                    "files beside this one are included with './'; others are looked up "
                    "only along GRANTKIT_POLICY_PATH",
                    "cannot find '%s' on the policy path '%s'", rel, pp);
    return found;
}

static unit *load_unit(loader *L, const char *name, const char *text, size_t len, gk_loc from);

/* Report a cycle closing at `key`, naming every file on it. */
static bool check_chain(loader *L, const char *key, const char *name, gk_loc from)
{
    for (size_t i = 0; i < L->chain_keys.n; i++) {
        if (strcmp(L->chain_keys.v[i], key) != 0)
            continue;
        gk_buf b = {0};
        for (size_t k = i; k < L->chain_names.n; k++)
            gk_buf_printf(&b, "%s -> ", L->chain_names.v[k]);
        gk_buf_puts(&b, name);
        gk_diag_add(L->diags, GK_ERROR, from, "remove one of the includes on the cycle",
                    "include cycle: %s", b.data);
        gk_buf_free(&b);
        return false;
    }
    if (L->chain_keys.n >= GK_INCLUDE_DEPTH) {
        gk_diag_add(L->diags, GK_ERROR, from, NULL, "includes nested deeper than %d levels at '%s'",
                    GK_INCLUDE_DEPTH, name);
        return false;
    }
    return true;
}

/* Load an include or extend target named in `ast` at word w. */
static unit *load_child(loader *L, const gk_file_ast *ast, const gk_word *w)
{
    gk_autofree char *path = resolve_include(L, ast->src->name, w->text, w->loc);
    if (!path)
        return NULL;
    return load_unit(L, path, NULL, 0, w->loc);
}

static void append_layers(gk_stack *dst, const gk_stack *src, size_t count)
{
    for (size_t i = 0; i < count && i < src->n; i++)
        gk_stack_push_unique(dst, gk_layer_ref(src->v[i]));
}

static unit *load_ast_unit(loader *L, unit *u, const gk_file_ast *ast)
{
    bool ok = gk_ast_validate(ast, L->diags) == 0 && u->ok;
    for (size_t i = 0; i < ast->nincludes; i++) {
        unit *c = load_child(L, ast, &ast->includes[i]);
        if (!c || !c->ok) {
            ok = false;
            continue;
        }
        append_layers(&u->layers, &c->layers, c->layers.n);
    }
    gk_layer *own = ok ? gk_layer_from_ast(L->ctx, &L->host, ast, L->diags) : NULL;
    if (!own)
        ok = false;
    for (size_t i = 0; i < ast->nextends; i++) {
        unit *c = load_child(L, ast, &ast->extends[i]);
        if (!c || !c->ok || !c->layers.n) {
            ok = false;
            continue;
        }
        if (!own)
            continue;
        size_t n = c->layers.n;
        /* Its own layer is joined; the layers it includes stay layers. */
        append_layers(&u->layers, &c->layers, c->has_own ? n - 1 : n);
        if (c->has_own) {
            gk_layer *j = gk_layer_join(own, c->layers.v[n - 1], NULL);
            gk_layer_free(own);
            own = j;
        }
    }
    if (own) {
        gk_stack_push(&u->layers, own);
        u->has_own = true;
    }
    u->ok = ok;
    return u;
}

/* Does text begin, after blanks and comments, with the word 'grant'? */
static bool starts_as_grant(const char *text, size_t len)
{
    size_t i = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* a BOM */
    for (;;) {
        while (i < len && text[i] && strchr(" \t\r\n", text[i]))
            i++;
        if (i < len && text[i] == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    return len - i >= 5 && memcmp(text + i, "grant", 5) == 0 &&
           (len - i == 5 || strchr(" \t\r\n{", text[i + 5]));
}

static unit *load_unit(loader *L, const char *name, const char *text, size_t len, gk_loc from)
{
    gk_autofree char *owned = NULL;
    if (!text) {
        int r = gk_read_file(name, &owned, &len);
        if (r < 0) {
            if (from.src)
                gk_diag_add(L->diags, GK_ERROR, from, NULL, "cannot read '%s': %s", name,
                            gk_read_strerror(r));
            else
                gk_diag_file(L->diags, GK_ERROR, name, "cannot read: %s", gk_read_strerror(r));
            return NULL;
        }
        text = owned;
    }
    gk_autofree char *real = realpath(name, NULL);
    gk_autofree char *key = gk_strdup(real ? real : name);
    for (size_t i = 0; i < L->ncache; i++)
        if (strcmp(L->cache[i]->key, key) == 0)
            return L->cache[i];
    if (!check_chain(L, key, name, from))
        return NULL;

    gk_source *src = gk_source_new(name, text, len);
    gk_surface surface = surface_of(name);
    /* A compiled IR brings the sources it was compiled from instead, so
     * compiling it again reproduces it byte for byte. */
    if (surface != GK_SURFACE_JSON) {
        gk_policy_add_source(L->policy, name, src);
        /* Compiled for this host, the file itself is protected during runs;
         * for another host, where it will be is unknown. */
        if (L->ctx->target == GRANT_TARGET_HOST && real)
            gk_strvec_push(&L->policy->protect, real);
    }
    unit *u = gk_calloc(1, sizeof(*u));
    u->key = gk_strdup(key);
    u->ok = true;

    gk_strvec_push(&L->chain_keys, key);
    gk_strvec_push(&L->chain_names, name);
    if (surface == GK_SURFACE_JSON) {
        grant_policy *p = gk_ir_read(src, L->ctx, L->diags);
        if (p && p->stack.n == 0) {
            /* The empty policy is the lattice's top: allow everything. No
             * file compiles to it, so one read from a file was made by hand
             * or cut short, and never widens what runs. */
            gk_diag_file(L->diags, GK_ERROR, name,
                         "a compiled policy from a file has at least one layer; this one has "
                         "none (it would allow everything)");
            grant_policy_free(p);
            p = NULL;
        }
        if (p) {
            append_layers(&u->layers, &p->stack, p->stack.n);
            gk_strvec_copy(&L->policy->protect, &p->protect);
            u->has_own = p->stack.n > 0;
            for (size_t i = 0; i < p->nsources; i++) {
                /* The sources it was compiled from keep their digests. */
                bool seen = false;
                for (size_t k = 0; k < L->policy->nsources; k++)
                    seen |= strcmp(L->policy->sources[k].file, p->sources[i].file) == 0;
                if (!seen) {
                    L->policy->sources = gk_realloc(L->policy->sources,
                                                    (L->policy->nsources + 1) *
                                                        sizeof(*L->policy->sources));
                    gk_policy_source *s = &L->policy->sources[L->policy->nsources++];
                    s->file = gk_strdup(p->sources[i].file);
                    memcpy(s->sha256, p->sources[i].sha256, sizeof(s->sha256));
                }
            }
            u->ctx = gk_context_copy(p->ctx);
            grant_policy_free(p);
        } else {
            u->ok = false;
        }
    } else {
        gk_file_ast *ast = NULL;
        if (from.src && surface == GK_SURFACE_GRANT && !starts_as_grant(text, len)) {
            /* An included file that is no grant file (a typo, or an include
             * aimed at /etc/shadow) is named, never quoted. */
            gk_diag_add(L->diags, GK_ERROR, from, "a grant file starts with 'grant NAME {'",
                        "'%s' is not a grant file", name);
        } else {
            ast = surface == GK_SURFACE_YAML ? gk_load_yaml(src, L->diags)
                                             : gk_parse_grant(src, L->diags);
        }
        if (L->diags->errors || !ast)
            u->ok = false;
        if (ast)
            load_ast_unit(L, u, ast);
        gk_ast_free(ast);
    }
    free(L->chain_keys.v[--L->chain_keys.n]);
    free(L->chain_names.v[--L->chain_names.n]);
    gk_source_unref(src);

    GK_VEC_PUSH(L->cache, L->ncache, L->capcache, u);
    return u;
}

static void loader_free(loader *L)
{
    for (size_t i = 0; i < L->ncache; i++)
        unit_free(L->cache[i]);
    free(L->cache);
    gk_strvec_free(&L->chain_keys);
    gk_strvec_free(&L->chain_names);
    gk_resolve_cache_free(&L->host);
}

/* The shared body of grant_compile and grant_compile_buffer. */
/* A file named on the command line that does not exist where it is named
 * ("base/reasonable.grant" from a project) is looked up along the policy
 * path, as an include of the same name would be. Returns the name to load
 * (caller frees). */
static char *top_level_name(loader *L, const char *name)
{
    /* A directory there is no policy: the placeholder a run keeps there
     * (protect_absent) while another run of the user is up, say. */
    struct stat st;
    int there = stat(name, &st) == 0 ? (S_ISDIR(st.st_mode) ? 0 : 1) : errno == ENOENT ? 0 : 1;
    if (name[0] == '/' || strcmp(name, "-") == 0 || gk_has_prefix(name, "./") ||
        gk_has_prefix(name, "../") || has_dotdot(name) || there || !L->ctx->policy_path)
        return gk_strdup(name);
    /* One leading out of the policy path is not taken: the name stays,
     * and reading it fails as it would have. */
    gk_autofree char *outside = NULL, *dir = NULL;
    gk_strvec absent = {0};
    char cwd[PATH_MAX];
    /* the name as given comes first, in the working directory */
    if (getcwd(cwd, sizeof(cwd)) && cwd[0] == '/')
        gk_strvec_push_take(&absent, gk_path_join(cwd, name));
    char *found = policy_path_find(L->ctx->policy_path, name, &outside, &dir, &absent);
    if (found)
        protect_absent(L, &absent);
    gk_strvec_free(&absent);
    return found ? found : gk_strdup(name);
}

static int compile_units(const grant_context *ctx, const char *const *files, size_t nfiles,
                         const char *buf_text, size_t buf_len, const char *const *extends,
                         size_t nextends, grant_diags *diags, grant_policy **out)
{
    *out = NULL;
    if (!ctx || !diags || (!files && nfiles) || (!extends && nextends))
        return -EINVAL;
    loader L = {.ctx = ctx, .diags = diags, .policy = gk_policy_new(ctx)};
    size_t errors_before = diags->errors;
    /* head: the first file's includes; own: its layer (extends join into
     * it); tail: every later layer. Meet is the concatenation. */
    gk_stack head = {0}, tail = {0};
    gk_layer *own = NULL;
    for (size_t i = 0; i < nfiles; i++) {
        gk_loc none = {0};
        gk_autofree char *name = buf_text ? gk_strdup(files[i]) : top_level_name(&L, files[i]);
        unit *u = load_unit(&L, name, buf_text, buf_len, none);
        if (!u || !u->ok)
            continue;
        if (i == 0 && u->ctx) {
            /* A compiled IR given first keeps the context it was frozen in. */
            grant_context_free(L.policy->ctx);
            L.policy->ctx = gk_context_copy(u->ctx);
        }
        if (i == 0 && u->has_own) {
            append_layers(&head, &u->layers, u->layers.n - 1);
            own = gk_layer_ref(u->layers.v[u->layers.n - 1]);
        } else {
            append_layers(i == 0 ? &head : &tail, &u->layers, u->layers.n);
        }
    }
    for (size_t i = 0; i < nextends; i++) {
        gk_loc none = {0};
        gk_autofree char *name = top_level_name(&L, extends[i]);
        unit *u = load_unit(&L, name, NULL, 0, none);
        if (!u || !u->ok || !u->layers.n)
            continue;
        size_t n = u->layers.n;
        append_layers(&tail, &u->layers, u->has_own ? n - 1 : n);
        if (own && u->has_own) {
            gk_layer *j = gk_layer_join(own, u->layers.v[n - 1], NULL);
            gk_layer_free(own);
            own = j;
        }
    }
    gk_stack stack = {0};
    append_layers(&stack, &head, head.n);
    if (own)
        gk_stack_push_unique(&stack, own);
    append_layers(&stack, &tail, tail.n);
    gk_stack_free(&head);
    gk_stack_free(&tail);
    loader_free(&L);
    grant_policy *p = L.policy;
    p->stack = stack;
    gk_strvec_sort_unique(&p->protect);
    if (diags->errors > errors_before) {
        grant_policy_free(p);
        return -EPROTO;
    }
    *out = p;
    return 0;
}

int grant_compile(const grant_context *ctx, const char *const *files, size_t nfiles,
                  const char *const *extends, size_t nextends, grant_diags *diags,
                  grant_policy **out)
{
    if (!out)
        return -EINVAL;
    if (nfiles == 0) {
        *out = NULL;
        return -EINVAL;
    }
    return compile_units(ctx, files, nfiles, NULL, 0, extends, nextends, diags, out);
}

int grant_compile_buffer(const grant_context *ctx, const char *name, const char *text, size_t len,
                         grant_diags *diags, grant_policy **out)
{
    if (!out || !name || !text)
        return -EINVAL;
    const char *files[1] = {name};
    return compile_units(ctx, files, 1, text, len, NULL, 0, diags, out);
}

/* ---- build information (--version) --------------------------------------- */

char *grant_build_info(void)
{
    char pcre2[64] = "?";
    if (pcre2_config(PCRE2_CONFIG_VERSION, pcre2) < 0)
        strcpy(pcre2, "?");
    const char *san = GK_SANITIZERS; /* configure --enable-asan/--enable-ubsan */
    return gk_printf("backends: bwrap landlock seatbelt appcontainer\n"
                     "targets: host linux macos windows\n"
                     "inputs: .grant .yaml .yml .json (the IR)\n"
                     "libraries: libyaml %s, PCRE2 %s, jansson %s, nettle %d.%d\n"
                     "sanitizers: %s\n",
                     yaml_get_version_string(), pcre2, JANSSON_VERSION, NETTLE_VERSION_MAJOR,
                     NETTLE_VERSION_MINOR, *san ? san : "none");
}
