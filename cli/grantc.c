/* grantc - compile, format and compare grant policies.
 *
 * A thin shell over libgrant (grant/grant.h): it parses options, calls the
 * library, prints the library's diagnostics as rendered and the machine
 * output on stdout. Exit status (cli.md): 0 success or equal, 1 a
 * difference or a --check mismatch, 2 usage or input error. Every error
 * path writes nothing to an output file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "grant/grant.h"

/* The name standard input has in diagnostics (as gcc spells it). */
#define STDIN_NAME "<stdin>"

enum {
    OPT_TARGET = 256,
    OPT_HOME,
    OPT_USER,
    OPT_CWD,
    OPT_TEMPDIR,
    OPT_PATH,
    OPT_XDG,
    OPT_NO_IMPLICIT,
    OPT_POLICY_PATH,
    OPT_EXTEND,
    OPT_PRETTY,
    OPT_TO,
    OPT_FROM,
    OPT_CHECK,
    OPT_FORMAT,
};

#define CTX_LONG_OPTIONS                                                                 \
    {"target", required_argument, NULL, OPT_TARGET},                                     \
        {"home", required_argument, NULL, OPT_HOME},                                     \
        {"user", required_argument, NULL, OPT_USER},                                     \
        {"cwd", required_argument, NULL, OPT_CWD},                                       \
        {"tempdir", required_argument, NULL, OPT_TEMPDIR},                               \
        {"path", required_argument, NULL, OPT_PATH},                                     \
        {"xdg", required_argument, NULL, OPT_XDG},                                       \
        {"no-implicit", no_argument, NULL, OPT_NO_IMPLICIT},                             \
        {"policy-path", required_argument, NULL, OPT_POLICY_PATH},                       \
        {"help", no_argument, NULL, 'h'}

#define CTX_HELP                                                                          \
    "Freeze context (CTX): how the paths in grant files are resolved\n"                   \
    "  --target host|linux|macos|windows\n"                                               \
    "                        the machine the policy is for (default host: paths are\n"    \
    "                        canonicalised here; any other target never touches the\n"    \
    "                        local filesystem)\n"                                         \
    "  --home DIR            home directory ('~'; default $HOME)\n"                       \
    "  --user NAME           user name (default $USER)\n"                                 \
    "  --cwd DIR             directory of 'cwd:' (default the working directory)\n"       \
    "  --tempdir DIR         directory of 'tempdir:' (default $TMPDIR, else /tmp)\n"      \
    "  --path PATHLIST       command search path (default $PATH)\n"                       \
    "  --xdg NAME=DIR        directory of 'xdg:NAME', NAME one of config, data, cache,\n" \
    "                        state, bin (default $XDG_*_HOME, else under home)\n"         \
    "  --no-implicit         leave out the grants every program needs to run\n"           \
    "  --policy-path PATHLIST\n"                                                          \
    "                        where 'include \"base/x.grant\"' is looked up (default\n"    \
    "                        $GRANTKIT_POLICY_PATH, else the installed policies)\n"

static const char usage_main[] =
    "Usage: grantc COMMAND [OPTION]... [ARG]...\n"
    "Compile, format and compare grantkit sandbox policies (grant files).\n"
    "\n"
    "Commands:\n"
    "  compile [CTX] FILE... [--extend FILE]... [-o OUT] [--pretty]\n"
    "                        fold grant files into one policy; print its IR (JSON)\n"
    "  fmt [--to grant|yaml] [--check] [-i] FILE\n"
    "                        print a grant file in its canonical form\n"
    "  compare [CTX] A B [--format text|json]\n"
    "                        is A equal to, narrower than, wider than or incomparable\n"
    "                        with B? prints a witness for each difference\n"
    "  emit, check, audit, sbpl, sid\n"
    "                        not implemented yet\n"
    "\n"
    "Run 'grantc COMMAND --help' for the options of one command.\n"
    "\n"
    "Options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and exit\n"
    "\n"
    "Exit status: 0 success or equal; 1 a difference, or 'fmt --check' found an\n"
    "unformatted file; 2 usage or input error (nothing is written).\n"
    "\n"
    "FILE is a .grant file, a .yaml/.yml file or a compiled .json policy; '-' is\n"
    "standard input. The grant language is described in grant(5).\n";

static const char usage_compile[] =
    "Usage: grantc compile [CTX] FILE... [--extend FILE]... [-o OUT] [--pretty]\n"
    "Compile FILEs into one policy and print its IR (canonical JSON).\n"
    "Several FILEs are stacked (meet: each can only take authority away);\n"
    "--extend files are joined into the first FILE (they widen its lists).\n"
    "\n"
    "  -o, --output OUT      write the IR to OUT atomically instead of stdout;\n"
    "                        OUT is left untouched when compiling fails\n"
    "      --pretty          indent the JSON (two spaces, one key per line)\n"
    "      --extend FILE     join FILE into the first FILE (repeatable)\n"
    "  -h, --help            print this help and exit\n"
    "\n" CTX_HELP "\n"
    "'-' as the only FILE reads the grant language from standard input.\n";

static const char usage_fmt[] =
    "Usage: grantc fmt [--to grant|yaml] [--check] [-i] FILE\n"
    "Print FILE in its canonical form on stdout ('-' reads standard input).\n"
    "Comments of a .grant file are kept; YAML has none to keep.\n"
    "\n"
    "      --to grant|yaml   print in this surface (default: FILE's own)\n"
    "      --from grant|yaml the surface of FILE (default: from its name;\n"
    "                        standard input is the grant language)\n"
    "      --check           print nothing; exit 1 if FILE is not already in\n"
    "                        canonical form\n"
    "  -i, --in-place        rewrite FILE atomically (only when it changes)\n"
    "  -h, --help            print this help and exit\n";

static const char usage_compare[] =
    "Usage: grantc compare [CTX] A B [--format text|json]\n"
    "Decide how policy A relates to policy B and print one of: equal,\n"
    "narrower (A allows a strict subset of what B allows), wider, incomparable;\n"
    "then one line per witness, e.g. 'read /p: a allows, b denies'.\n"
    "Exit status: 0 equal, 1 any difference, 2 usage or input error.\n"
    "\n"
    "      --format text|json  json prints {\"order\":...,\"queries\":N,\"witnesses\":[...]}\n"
    "  -h, --help            print this help and exit\n"
    "\n" CTX_HELP;

/* ---- shared pieces ------------------------------------------------------ */

/* Reset getopt and make its messages read "grantc: ..." rather than the
 * subcommand's name. */
static void start_options(char **argv)
{
    optind = 0; /* glibc: full re-initialisation */
    opterr = 1;
    argv[0] = (char *)cli_progname;
}

static int usage_hint(const char *cmd)
{
    fprintf(stderr, "Try '%s %s --help' for more information.\n", cli_progname, cmd);
    return CLI_EXIT_USAGE;
}

static int print_help(const char *text)
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

static int set_dir(grant_context *ctx, grant_ctx_key key, const char *flag, const char *value)
{
    if (grant_context_set(ctx, key, value) < 0) {
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
        cli_error("--xdg: '%s' is not an absolute path", eq + 1);
        rc = -1;
    }
    free(name);
    return rc;
}

/* Apply one CTX option. Returns 1 if opt is not a CTX option, 0 when
 * applied, -1 after printing why the value is bad. */
static int ctx_option(grant_context *ctx, int opt, const char *arg)
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
    int rc = grant_context_set_target(ctx, t);
    if (rc < 0) {
        cli_error("--target %s: %s", value, strerror(-rc));
        return -1;
    }
    return 0;
}

static grant_context *new_context(int argc, char **argv)
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
static int compile_files(const grant_context *ctx, char *const *files, size_t nfiles,
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
        rc = cli_read_input("-", &text, &len);
        if (rc < 0) {
            cli_error("cannot read standard input: %s", strerror(-rc));
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

/* ---- compile ------------------------------------------------------------ */

static int cmd_compile(int argc, char **argv)
{
    static const struct option longopts[] = {
        CTX_LONG_OPTIONS,
        {"output", required_argument, NULL, 'o'},
        {"pretty", no_argument, NULL, OPT_PRETTY},
        {"extend", required_argument, NULL, OPT_EXTEND},
        {NULL, 0, NULL, 0},
    };
    grant_context *ctx = new_context(argc, argv);
    if (!ctx)
        return CLI_EXIT_USAGE;
    char **extends = calloc((size_t)argc, sizeof *extends);
    if (!extends)
        abort();
    size_t nextends = 0;
    const char *output = NULL;
    unsigned flags = 0;
    int status = CLI_EXIT_USAGE, opt;

    start_options(argv);
    while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        int r = ctx_option(ctx, opt, optarg);
        if (r < 0)
            goto out;
        if (r == 0)
            continue;
        switch (opt) {
        case 'o':
            output = optarg;
            break;
        case OPT_PRETTY:
            flags |= GRANT_IR_PRETTY;
            break;
        case OPT_EXTEND:
            extends[nextends++] = optarg;
            break;
        case 'h':
            status = print_help(usage_compile);
            goto out;
        default:
            usage_hint("compile");
            goto out;
        }
    }
    if (optind >= argc) {
        cli_error("compile: missing FILE");
        usage_hint("compile");
        goto out;
    }

    grant_policy *policy = NULL;
    if (compile_files(ctx, argv + optind, (size_t)(argc - optind), extends, nextends, &policy))
        goto out;
    char *ir = NULL;
    size_t len = 0;
    int rc = grant_policy_ir(policy, flags, &ir, &len);
    grant_policy_free(policy);
    if (rc < 0) {
        cli_error("cannot print the IR: %s", strerror(-rc));
        goto out;
    }
    /* A text file ends with a newline; JSON readers ignore it. */
    if (len == 0 || ir[len - 1] != '\n') {
        char *grown = realloc(ir, len + 2);
        if (!grown)
            abort();
        ir = grown;
        ir[len++] = '\n';
        ir[len] = '\0';
    }
    if (output && strcmp(output, "-") != 0) {
        rc = cli_write_atomic(output, ir, len);
        if (rc < 0)
            cli_error("cannot write '%s': %s", output, strerror(-rc));
    } else {
        rc = cli_write_stream(stdout, ir, len);
        if (rc < 0)
            cli_error("cannot write to standard output: %s", strerror(-rc));
    }
    free(ir);
    status = rc < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
out:
    free(extends);
    grant_context_free(ctx);
    return status;
}

/* ---- fmt ---------------------------------------------------------------- */

static int parse_surface(const char *flag, const char *s, grant_surface *out)
{
    if (strcmp(s, "grant") == 0)
        *out = GRANT_SURFACE_GRANT;
    else if (strcmp(s, "yaml") == 0)
        *out = GRANT_SURFACE_YAML;
    else {
        cli_error("%s: unknown surface '%s' (expected grant or yaml)", flag, s);
        return -1;
    }
    return 0;
}

static int cmd_fmt(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"to", required_argument, NULL, OPT_TO},
        {"from", required_argument, NULL, OPT_FROM},
        {"check", no_argument, NULL, OPT_CHECK},
        {"in-place", no_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    grant_surface from = GRANT_SURFACE_AUTO, to = GRANT_SURFACE_AUTO;
    bool check = false, in_place = false;
    int opt;

    start_options(argv);
    while ((opt = getopt_long(argc, argv, "ih", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_TO:
            if (parse_surface("--to", optarg, &to) < 0)
                return CLI_EXIT_USAGE;
            break;
        case OPT_FROM:
            if (parse_surface("--from", optarg, &from) < 0)
                return CLI_EXIT_USAGE;
            break;
        case OPT_CHECK:
            check = true;
            break;
        case 'i':
            in_place = true;
            break;
        case 'h':
            return print_help(usage_fmt);
        default:
            return usage_hint("fmt");
        }
    }
    if (argc - optind != 1) {
        if (optind >= argc)
            cli_error("fmt: missing FILE");
        else
            cli_error("fmt: expected one FILE, got %d", argc - optind);
        return usage_hint("fmt");
    }
    const char *path = argv[optind];
    bool is_stdin = strcmp(path, "-") == 0;
    if (check && in_place) {
        cli_error("fmt: --check and -i cannot be combined");
        return usage_hint("fmt");
    }
    if (in_place) {
        grant_surface own = from != GRANT_SURFACE_AUTO ? from
                            : cli_is_yaml_name(path) ? GRANT_SURFACE_YAML
                                                     : GRANT_SURFACE_GRANT;
        if (is_stdin) {
            cli_error("fmt: -i needs a file, not standard input");
            return usage_hint("fmt");
        }
        if (to != GRANT_SURFACE_AUTO && to != own) {
            cli_error("fmt: -i would write %s into '%s'; convert to standard output instead",
                      to == GRANT_SURFACE_YAML ? "YAML" : "the grant language", path);
            return usage_hint("fmt");
        }
    }

    char *text = NULL;
    size_t len = 0;
    int rc = cli_read_input(path, &text, &len);
    if (rc < 0) {
        cli_error("cannot read '%s': %s", path, strerror(-rc));
        return CLI_EXIT_USAGE;
    }
    grant_diags *diags = grant_diags_new();
    char *out = NULL;
    size_t outlen = 0;
    rc = grant_fmt(is_stdin ? STDIN_NAME : path, text, len, from, to, diags, &out, &outlen);
    size_t errors = cli_print_diags(diags);
    grant_diags_free(diags);
    int status = CLI_EXIT_OK;
    if (rc < 0 || !out) {
        if (errors == 0)
            cli_error("cannot format '%s': %s", path, strerror(rc < 0 ? -rc : EPROTO));
        status = CLI_EXIT_USAGE;
    } else if (check) {
        if (outlen != len || memcmp(out, text, len) != 0) {
            cli_error("%s: not in canonical form ('grantc fmt -i %s' rewrites it)",
                      is_stdin ? STDIN_NAME : path, is_stdin ? "FILE" : path);
            status = CLI_EXIT_DIFFERENT;
        }
    } else if (in_place) {
        /* An unchanged file is not rewritten: its mtime means something to make. */
        if (outlen != len || memcmp(out, text, len) != 0) {
            rc = cli_write_atomic(path, out, outlen);
            if (rc < 0) {
                cli_error("cannot write '%s': %s", path, strerror(-rc));
                status = CLI_EXIT_USAGE;
            }
        }
    } else {
        rc = cli_write_stream(stdout, out, outlen);
        if (rc < 0) {
            cli_error("cannot write to standard output: %s", strerror(-rc));
            status = CLI_EXIT_USAGE;
        }
    }
    free(out);
    free(text);
    return status;
}

/* ---- compare ------------------------------------------------------------ */

static void print_comparison_text(const grant_comparison *c)
{
    printf("%s\n", grant_order_name(grant_comparison_order(c)));
    size_t n = grant_comparison_witness_count(c);
    for (size_t i = 0; i < n; i++) {
        const char *kind, *subject;
        bool a, b;
        if (grant_comparison_witness(c, i, &kind, &subject, &a, &b) < 0)
            continue;
        printf("%s %s: a %s, b %s\n", kind, subject, a ? "allows" : "denies",
               b ? "allows" : "denies");
    }
}

/* Canonical like the IR: keys in bytewise order, no whitespace. */
static void print_comparison_json(const grant_comparison *c)
{
    fputs("{\"order\":", stdout);
    cli_json_string(stdout, grant_order_name(grant_comparison_order(c)));
    printf(",\"queries\":%zu,\"witnesses\":[", grant_comparison_queries(c));
    size_t n = grant_comparison_witness_count(c), printed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *kind, *subject;
        bool a, b;
        if (grant_comparison_witness(c, i, &kind, &subject, &a, &b) < 0)
            continue;
        printf("%s{\"a\":%s,\"b\":%s,\"kind\":", printed++ ? "," : "", a ? "true" : "false",
               b ? "true" : "false");
        cli_json_string(stdout, kind);
        fputs(",\"subject\":", stdout);
        cli_json_string(stdout, subject);
        fputc('}', stdout);
    }
    fputs("]}\n", stdout);
}

static int cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        CTX_LONG_OPTIONS,
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    grant_context *ctx = new_context(argc, argv);
    if (!ctx)
        return CLI_EXIT_USAGE;
    bool json = false;
    int status = CLI_EXIT_USAGE, opt;
    grant_policy *a = NULL, *b = NULL;
    grant_comparison *cmp = NULL;

    start_options(argv);
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int r = ctx_option(ctx, opt, optarg);
        if (r < 0)
            goto out;
        if (r == 0)
            continue;
        if (opt == OPT_FORMAT) {
            if (strcmp(optarg, "json") == 0)
                json = true;
            else if (strcmp(optarg, "text") == 0)
                json = false;
            else {
                cli_error("--format: unknown format '%s' (expected text or json)", optarg);
                goto out;
            }
        } else if (opt == 'h') {
            status = print_help(usage_compare);
            goto out;
        } else {
            usage_hint("compare");
            goto out;
        }
    }
    if (argc - optind != 2) {
        cli_error("compare: expected two policies A and B, got %d", argc - optind);
        usage_hint("compare");
        goto out;
    }
    if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0) {
        cli_usage_error("compare: standard input can stand for only one of A and B");
        goto out;
    }
    /* Compile both before giving up so one run shows every error. */
    int fa = compile_files(ctx, argv + optind, 1, NULL, 0, &a);
    int fb = compile_files(ctx, argv + optind + 1, 1, NULL, 0, &b);
    if (fa || fb)
        goto out;
    int rc = grant_compare(a, b, &cmp);
    if (rc < 0) {
        cli_error("cannot compare '%s' and '%s': %s", argv[optind], argv[optind + 1],
                  strerror(-rc));
        goto out;
    }
    if (json)
        print_comparison_json(cmp);
    else
        print_comparison_text(cmp);
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        goto out;
    }
    status = grant_comparison_order(cmp) == GRANT_EQUAL ? CLI_EXIT_OK : CLI_EXIT_DIFFERENT;
out:
    grant_comparison_free(cmp);
    grant_policy_free(a);
    grant_policy_free(b);
    grant_context_free(ctx);
    return status;
}

/* ---- main --------------------------------------------------------------- */

static const char *const future_commands[] = {"emit", "check", "audit", "sbpl", "sid"};

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage_error("missing COMMAND");
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
        return print_help(usage_main);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("grantc (grantkit) %s\n", grant_version());
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc - 1, argv + 1);
    if (strcmp(cmd, "fmt") == 0)
        return cmd_fmt(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof future_commands / sizeof future_commands[0]; i++)
        if (strcmp(cmd, future_commands[i]) == 0) {
            cli_error("'%s' is not implemented yet", cmd);
            return CLI_EXIT_USAGE;
        }
    if (cmd[0] == '-')
        cli_usage_error("unrecognized option '%s' (options follow the COMMAND)", cmd);
    else
        cli_usage_error("unknown command '%s'", cmd);
    return CLI_EXIT_USAGE;
}
