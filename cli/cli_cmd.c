/* cli_cmd.c - the option handling grantkit's programs share: the freeze
 * context options (CTX), compiling the named policies, and the option loop
 * of a command that takes them. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cmd.h"
#include "cli_util.h"

/* ---- shared pieces ------------------------------------------------------ */

/* Reset getopt and make its messages read "grantc: ..." rather than the
 * subcommand's name. */
void cli_start_options(char **argv)
{
    optind = 0; /* glibc: full re-initialisation */
    opterr = 1;
    argv[0] = (char *)cli_progname;
}

int cli_usage_hint(const char *cmd)
{
    if (cmd)
        fprintf(stderr, "Try '%s %s --help' for more information.\n", cli_progname, cmd);
    else
        fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname);
    return CLI_EXIT_USAGE;
}

int cli_print_help(const char *text)
{
    fputs(text, stdout);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

static int parse_target(const char *s, grant_target *out)
{
    static const struct {
        const char *name;
        grant_target target;
    } targets[] = {
        {"host", GRANT_TARGET_HOST},
        {"linux", GRANT_TARGET_LINUX},
        {"macos", GRANT_TARGET_MACOS},
        {"windows", GRANT_TARGET_WINDOWS},
    };
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(s, targets[i].name) == 0) {
            *out = targets[i].target;
            return 0;
        }
    return -EINVAL;
}

/* Set by apply_target, which runs before every other CTX option: a windows
 * context takes drive paths only, and the messages say so. */
static bool target_windows;

static int set_dir(grant_context *ctx, grant_ctx_key key, const char *flag, const char *value)
{
    if (grant_context_set(ctx, key, value) < 0) {
        if (target_windows)
            cli_error("%s: '%s' is not a drive path (C:/...), which --target windows needs",
                      flag, value);
        else
            cli_error("%s: '%s' is not an absolute path", flag, value);
        return -1;
    }
    return 0;
}

static int set_xdg(grant_context *ctx, const char *arg)
{
    static const char *const names[] = {"config", "data", "cache", "state", "bin"};
    const char *eq = strchr(arg, '=');
    if (!eq) {
        cli_error("--xdg: expected NAME=DIR, got '%s'", arg);
        return -1;
    }
    char *name = strndup(arg, (size_t)(eq - arg));
    if (!name)
        abort();
    bool known = false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        known |= strcmp(name, names[i]) == 0;
    int rc = 0;
    if (!known) {
        cli_error("--xdg: unknown name '%s' (expected config, data, cache, state or bin)", name);
        rc = -1;
    } else if (grant_context_set_xdg(ctx, name, eq + 1) < 0) {
        cli_error(target_windows ? "--xdg: '%s' is not a drive path (C:/...), which --target "
                                   "windows needs"
                                 : "--xdg: '%s' is not an absolute path",
                  eq + 1);
        rc = -1;
    }
    free(name);
    return rc;
}

/* Apply one CTX option. Returns 1 if opt is not a CTX option, 0 when
 * applied, -1 after printing why the value is bad. */
int cli_ctx_option(grant_context *ctx, int opt, const char *arg)
{
    switch (opt) {
    case OPT_TARGET:
        return 0; /* applied before every other option: see new_context */
    case OPT_HOME:
        return set_dir(ctx, GRANT_CTX_HOME, "--home", arg);
    case OPT_CWD:
        return set_dir(ctx, GRANT_CTX_CWD, "--cwd", arg);
    case OPT_TEMPDIR:
        return set_dir(ctx, GRANT_CTX_TEMPDIR, "--tempdir", arg);
    case OPT_USER:
        if (grant_context_set(ctx, GRANT_CTX_USER, arg) < 0) {
            cli_error("--user: invalid user name '%s'", arg);
            return -1;
        }
        return 0;
    case OPT_PATH:
        if (grant_context_set(ctx, GRANT_CTX_PATH, arg) < 0) {
            if (target_windows)
                cli_error("--path: '%s' is not a ';'-separated list of drive paths (C:/...), "
                          "which --target windows needs", arg);
            else
                cli_error("--path: '%s' is not a ':'-separated list of absolute directories", arg);
            return -1;
        }
        return 0;
    case OPT_XDG:
        return set_xdg(ctx, arg);
    case OPT_NO_IMPLICIT:
        return grant_context_set_implicit(ctx, false) < 0 ? -1 : 0;
    case OPT_POLICY_PATH:
        if (grant_context_set_policy_path(ctx, arg) < 0) {
            cli_error("--policy-path: invalid search path '%s'", arg);
            return -1;
        }
        return 0;
    default:
        return 1;
    }
}

/* The target decides what the other values mean (a drive-letter --home is
 * absolute only for windows; offline targets drop this host's XDG_*_HOME),
 * so --target is applied first, wherever it stands; the last one wins. */
static int apply_target(grant_context *ctx, int argc, char **argv)
{
    const char *value = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (strncmp(argv[i], "--target=", 9) == 0)
            value = argv[i] + 9;
    }
    if (!value)
        return 0;
    grant_target t;
    if (parse_target(value, &t) < 0) {
        cli_error("--target: unknown target '%s' (expected host, linux, macos or windows)", value);
        return -1;
    }
    target_windows = t == GRANT_TARGET_WINDOWS;
    int rc = grant_context_set_target(ctx, t);
    if (rc < 0) {
        cli_error("--target %s: %s", value, strerror(-rc));
        return -1;
    }
    return 0;
}

grant_context *cli_new_context(int argc, char **argv)
{
    grant_context *ctx = NULL;
    int rc = grant_context_new(&ctx);
    if (rc < 0) {
        cli_error("cannot set up the freeze context: %s", strerror(-rc));
        return NULL;
    }
    if (apply_target(ctx, argc, argv) < 0) {
        grant_context_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Compile files (+ extends) into *out, printing every diagnostic. '-' may
 * stand as the only FILE (standard input, grant language). Returns 0 or
 * CLI_EXIT_USAGE after printing why. */
int cli_compile_files(const grant_context *ctx, char *const *files, size_t nfiles,
                         char *const *extends, size_t nextends, grant_policy **out)
{
    *out = NULL;
    bool uses_stdin = false;
    for (size_t i = 0; i < nfiles; i++)
        uses_stdin |= strcmp(files[i], "-") == 0;
    for (size_t i = 0; i < nextends; i++)
        uses_stdin |= strcmp(extends[i], "-") == 0;
    if (uses_stdin && (nfiles != 1 || nextends != 0)) {
        cli_usage_error("'-' (standard input) must be the only FILE, without --extend");
        return CLI_EXIT_USAGE;
    }

    grant_diags *diags = grant_diags_new();
    int rc;
    if (uses_stdin) {
        char *text = NULL;
        size_t len = 0;
        rc = grant_read_input("-", &text, &len);
        if (rc < 0) {
            cli_error("cannot read standard input: %s", grant_read_strerror(rc));
            grant_diags_free(diags);
            return CLI_EXIT_USAGE;
        }
        rc = grant_compile_buffer(ctx, STDIN_NAME, text, len, diags, out);
        free(text);
    } else {
        rc = grant_compile(ctx, (const char *const *)files, nfiles,
                           (const char *const *)extends, nextends, diags, out);
    }
    size_t errors = cli_print_diags(diags);
    grant_diags_free(diags);
    if (rc < 0 || !*out) {
        if (errors == 0)
            cli_error("cannot compile %s: %s", nfiles == 1 ? files[0] : "the policy",
                      strerror(rc < 0 ? -rc : EPROTO));
        grant_policy_free(*out);
        *out = NULL;
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* ---- the option loop of the policy commands ----------------------------- */



void cli_cmd_args_free(cli_cmd_args *a)
{
    free(a->extends);
    grant_context_free(a->ctx);
    memset(a, 0, sizeof(*a));
}

/* Parse argv[1..argc). CMD_RUN when the command should run (free *out
 * with cmd_args_free), else the exit status to return at once. */
int cli_parse_command(const cli_cmd_spec *c, int argc, char **argv, cli_cmd_args *out)
{
    static const struct option ctx_longopts[] = {CTX_LONG_OPTIONS};
    static const struct option extend_longopt = {"extend", required_argument, NULL, OPT_EXTEND};
    size_t nctx = sizeof(ctx_longopts) / sizeof(*ctx_longopts), nown = 0;
    while (c->longopts && c->longopts[nown].name)
        nown++;
    struct option *longopts = calloc(nctx + nown + 2, sizeof(*longopts));
    char *shortopts = malloc(strlen(c->shortopts) + 2);
    if (!longopts || !shortopts)
        abort();
    memcpy(longopts, ctx_longopts, sizeof(ctx_longopts));
    if (nown)
        memcpy(longopts + nctx, c->longopts, nown * sizeof(*longopts));
    if (c->extend)
        longopts[nctx + nown] = extend_longopt;
    snprintf(shortopts, strlen(c->shortopts) + 2, "h%s", c->shortopts);

    memset(out, 0, sizeof(*out));
    int status = CLI_EXIT_USAGE, opt;
    out->ctx = cli_new_context(argc, argv);
    out->extends = calloc((size_t)argc + 1, sizeof(*out->extends));
    if (!out->extends)
        abort();
    if (!out->ctx)
        goto refused;
    cli_start_options(argv);
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int r = cli_ctx_option(out->ctx, opt, optarg);
        if (r < 0)
            goto refused;
        if (r == 0)
            continue;
        if (opt == OPT_EXTEND && c->extend) {
            out->extends[out->nextends++] = optarg;
        } else if (opt == 'h') {
            status = cli_print_help(c->usage);
            goto refused;
        } else if (opt == '?' || opt == ':' || !c->own) {
            cli_usage_hint(c->name);
            goto refused;
        } else if (c->own(c->state, opt, optarg) < 0) {
            goto refused;
        }
    }
    out->first = optind;
    free(longopts);
    free(shortopts);
    return CMD_RUN;
refused:
    free(longopts);
    free(shortopts);
    cli_cmd_args_free(out);
    return status;
}

/* At least one FILE operand in argv[first..end). */
bool cli_has_files(const char *name, int first, int end)
{
    if (first < end)
        return true;
    cli_error("%s: missing FILE", name);
    cli_usage_hint(name);
    return false;
}

/* --format text|json, for compare and check. */
