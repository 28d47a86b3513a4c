/* cli_cmd.h - the option handling grantkit's programs share (see
 * cli_cmd.c). Public libgrant API only.
 *
 * Ownership: a cli_cmd_args owns its context and its extends array (the
 * strings are argv's); free with cli_cmd_args_free.
 */
#ifndef GK_CLI_CMD_H
#define GK_CLI_CMD_H

#include <getopt.h>
#include <stdbool.h>

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


/* Reset getopt; its messages then read "PROG: ...". */
void cli_start_options(char **argv);
/* "Try 'PROG CMD --help' ..." (cmd NULL: "PROG --help"); returns the
 * usage status. */
int cli_usage_hint(const char *cmd);
int cli_print_help(const char *text);
/* One CTX option: 1 not one, 0 applied, -1 refused (reported). */
int cli_ctx_option(grant_context *ctx, int opt, const char *arg);
/* A context with --target applied first, wherever it stands. */
grant_context *cli_new_context(int argc, char **argv);
/* Compile files (+ extends), printing every diagnostic; '-' may stand as
 * the only FILE. 0, or the usage status after printing why. */
int cli_compile_files(const grant_context *ctx, char *const *files, size_t nfiles,
                      char *const *extends, size_t nextends, grant_policy **out);

/* What compile, compare, check, audit and emit share: the freeze context
 * options, --extend (when the command stacks files), -h, and their own
 * options, handed to `own` (0 taken, -1 refused and reported). */
typedef struct cli_cmd_spec {
    const char *name;
    const char *usage;
    const char *shortopts;          /* the command's own short options */
    const struct option *longopts;  /* the command's own, NULL-terminated, or NULL */
    bool extend;
    int (*own)(void *state, int opt, const char *arg);
    void *state;
} cli_cmd_spec;

typedef struct cli_cmd_args {
    grant_context *ctx;
    char **extends;
    size_t nextends;
    int first;                      /* index of the first operand */
} cli_cmd_args;

#define CMD_RUN (-1)

/* Parse argv[1..argc) (CTX, --extend when the command takes it, -h, its
 * own). CMD_RUN: run (free *out with cli_cmd_args_free); else the exit
 * status to return at once. */
int cli_parse_command(const cli_cmd_spec *c, int argc, char **argv, cli_cmd_args *out);
void cli_cmd_args_free(cli_cmd_args *a);
/* At least one FILE operand in argv[first..end), else report it. */
bool cli_has_files(const char *name, int first, int end);

#endif
