/* grantc - compile, format and compare grant policies.
 *
 * A thin shell over libgrant (grant/grant.h): it parses options, calls the
 * library, prints the library's diagnostics as rendered and the machine
 * output on stdout. Exit status (cli.md): 0 success or equal, 1 a
 * difference or a --check mismatch, 2 usage or input error. Every error
 * path writes nothing to an output file.
 */
#include <errno.h>
#include <signal.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cmd.h"
#include "cli_util.h"
#include "grant/grant.h"

static const char usage_main[] =
    "Usage: grantc COMMAND [OPTION]... [ARG]...\n"
    "Compile, check, audit and render grantkit sandbox policies (grant files).\n"
    "\n"
    "Commands:\n"
    "  compile [CTX] FILE... [--extend FILE]... [-o OUT] [--pretty]\n"
    "                        fold grant files into one policy; print its IR (JSON)\n"
    "  fmt [--to grant|yaml] [--check] [-i] FILE\n"
    "                        print a grant file in its canonical form\n"
    "  compare [CTX] A B [--format text|json]\n"
    "                        is A equal to, narrower than, wider than or incomparable\n"
    "                        with B? prints a witness for each difference\n"
    "  emit [CTX] --backend bwrap|seatbelt|appcontainer|landlock [--format F] FILE...\n"
    "                        render the policy for one OS backend\n"
    "  check [CTX] FILE... -- exec CMD [ARG...] | read PATH | write PATH | gate NAME\n"
    "                        | connect HOST:PORT\n"
    "                        is it allowed? prints the verdict and the deciding rule\n"
    "  audit [CTX] FILE... [--format text|json|sarif] [--fail-on LEVEL]\n"
    "                        findings about a policy (deputies, dead rules, sockets...)\n"
    "  sbpl eval|lint PROFILE ...\n"
    "                        evaluate or lint any Seatbelt profile offline\n"
    "  sid capability|appcontainer NAME\n"
    "                        Windows SID derivation, for audits\n"
    "\n"
    "Run 'grantc COMMAND --help' for the options of one command.\n"
    "\n"
    "Options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and what this build has (backends,\n"
    "                        targets, libraries) and exit\n"
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
    "Usage: grantc compare [CTX] A B [--format text|json] [--witnesses N]\n"
    "Decide how policy A relates to policy B and print one of: equal,\n"
    "narrower (A allows a strict subset of what B allows), wider, incomparable;\n"
    "then the witnesses, grouped by kind and verdicts ('exec: a denies, b allows\n"
    "(36)'), one line each; a command asked through every PATH directory is one\n"
    "line with a count of its spellings.\n"
    "Exit status: 0 equal, 1 any difference, 2 usage or input error.\n"
    "\n"
    "      --format text|json  json prints {\"order\":...,\"queries\":N,\"witnesses\":[...]}\n"
    "                        with every witness, one per spelling\n"
    "      --witnesses N     show at most N lines a group, then a count of the rest\n"
    "                        (default 10; 0 shows all)\n"
    "  -h, --help            print this help and exit\n"
    "\n" CTX_HELP;

/* ---- compile ------------------------------------------------------------ */

static int text_or_json(void *state, int opt, const char *arg)
{
    (void)opt; /* the only option of compare and check */
    bool *json = state;
    if (strcmp(arg, "json") == 0)
        *json = true;
    else if (strcmp(arg, "text") == 0)
        *json = false;
    else {
        cli_error("--format: unknown format '%s' (expected text or json)", arg);
        return -1;
    }
    return 0;
}

typedef struct compile_opts {
    const char *output;
    unsigned flags;
} compile_opts;

static int compile_option(void *state, int opt, const char *arg)
{
    compile_opts *o = state;
    if (opt == 'o')
        o->output = arg;
    else
        o->flags |= GRANT_IR_PRETTY;
    return 0;
}

static int cmd_compile(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"pretty", no_argument, NULL, OPT_PRETTY},
        {NULL, 0, NULL, 0},
    };
    compile_opts o = {NULL, 0};
    const cli_cmd_spec spec = {"compile", usage_compile, "o:", longopts, true, compile_option, &o};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, argc, argv, &args);
    if (status != CMD_RUN)
        return status;
    status = CLI_EXIT_USAGE;
    if (!cli_has_files("compile", args.first, argc))
        goto out;

    grant_policy *policy = NULL;
    if (cli_compile_files(args.ctx, argv + args.first, (size_t)(argc - args.first), args.extends,
                      args.nextends, &policy))
        goto out;
    char *ir = NULL;
    size_t len = 0;
    int rc = grant_policy_ir(policy, o.flags, &ir, &len);
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
    if (o.output && strcmp(o.output, "-") != 0) {
        rc = cli_write_file(o.output, ir, len);
        if (rc < 0)
            cli_error("cannot write '%s': %s", o.output,
                      rc == -ENXIO ? "a FIFO nobody reads" : strerror(-rc));
    } else {
        rc = cli_write_stream(stdout, ir, len);
        if (rc < 0)
            cli_error("cannot write to standard output: %s", strerror(-rc));
    }
    free(ir);
    status = rc < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
out:
    cli_cmd_args_free(&args);
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

    cli_start_options(argv);
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
            return cli_print_help(usage_fmt);
        default:
            return cli_usage_hint("fmt");
        }
    }
    if (argc - optind != 1) {
        if (optind >= argc)
            cli_error("fmt: missing FILE");
        else
            cli_error("fmt: expected one FILE, got %d", argc - optind);
        return cli_usage_hint("fmt");
    }
    const char *path = argv[optind];
    bool is_stdin = strcmp(path, "-") == 0;
    if (check && in_place) {
        cli_error("fmt: --check and -i cannot be combined");
        return cli_usage_hint("fmt");
    }
    if (in_place) {
        grant_surface own = from != GRANT_SURFACE_AUTO ? from
                            : cli_is_yaml_name(path) ? GRANT_SURFACE_YAML
                                                     : GRANT_SURFACE_GRANT;
        if (is_stdin) {
            cli_error("fmt: -i needs a file, not standard input");
            return cli_usage_hint("fmt");
        }
        if (to != GRANT_SURFACE_AUTO && to != own) {
            cli_error("fmt: -i would write %s into '%s'; convert to standard output instead",
                      to == GRANT_SURFACE_YAML ? "YAML" : "the grant language", path);
            return cli_usage_hint("fmt");
        }
    }

    char *text = NULL;
    size_t len = 0;
    int rc = grant_read_input(path, &text, &len);
    if (rc < 0) {
        cli_error("cannot read '%s': %s", path, grant_read_strerror(rc));
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
            rc = cli_write_file(path, out, outlen);
            if (rc < 0) {
                cli_error("cannot write '%s': %s", path,
                          rc == -ENXIO ? "a FIFO nobody reads" : strerror(-rc));
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

/* The text form groups the witnesses by kind and verdicts, in the order
 * they first appear, and shows at most `cap` lines a group (0: all), then
 * a count of the rest. An exec witness asked through every PATH directory
 * (/usr/bin/rg, /bin/rg, ..., and "rg (not found on PATH)") is one line,
 * the command with a count of its spellings: a new user's question is
 * which programs differ, not where PATH looks. */
typedef struct witness_entry {
    const char *kind;
    bool a, b;
    char *key;        /* the command (name and arguments) or the subject */
    const char *first; /* the first spelling seen */
    size_t spellings;
} witness_entry;

/* The command an exec subject names, whatever PATH spelling it has:
 * "/usr/bin/rg -x", "rg (found at /bin/rg) -x" and "rg (not found on PATH)"
 * are one command; a "(-> CANONICAL)" note stays, as it names another
 * program. */
static char *exec_key(const char *subject)
{
    static const char *const drop[] = {" (found at ", " (not found on PATH"};
    char *k = strdup(subject);
    if (!k)
        abort();
    for (size_t d = 0; d < sizeof drop / sizeof drop[0]; d++) {
        char *at = strstr(k, drop[d]);
        char *close = at ? strchr(at, ')') : NULL;
        if (close)
            memmove(at, close + 1, strlen(close + 1) + 1);
    }
    if (k[0] == '/') {
        size_t word = strcspn(k, " ");
        char *base = k;
        for (char *p = k; p < k + word; p++)
            if (*p == '/')
                base = p + 1;
        memmove(k, base, strlen(base) + 1);
    }
    return k;
}

static void print_comparison_text(const grant_comparison *c, long cap)
{
    printf("%s\n", grant_order_name(grant_comparison_order(c)));
    size_t n = grant_comparison_witness_count(c), ne = 0;
    witness_entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        abort();
    for (size_t i = 0; i < n; i++) {
        const char *kind, *subject;
        bool a, b;
        if (grant_comparison_witness(c, i, &kind, &subject, &a, &b) < 0)
            continue;
        char *key = strcmp(kind, "exec") == 0 ? exec_key(subject) : strdup(subject);
        if (!key)
            abort();
        size_t j = 0;
        while (j < ne && !(e[j].a == a && e[j].b == b && strcmp(e[j].kind, kind) == 0 &&
                           strcmp(e[j].key, key) == 0))
            j++;
        if (j < ne) {
            e[j].spellings++;
            free(key);
            continue;
        }
        e[ne++] = (witness_entry){kind, a, b, key, subject, 1};
    }
    bool *done = calloc(ne ? ne : 1, sizeof *done);
    if (!done)
        abort();
    for (size_t g = 0; g < ne; g++) {
        if (done[g])
            continue;
        size_t lines = 0, witnesses = 0;
        for (size_t j = g; j < ne; j++)
            if (e[j].a == e[g].a && e[j].b == e[g].b && strcmp(e[j].kind, e[g].kind) == 0) {
                lines++;
                witnesses += e[j].spellings;
            }
        printf("%s: a %s, b %s (%zu)\n", e[g].kind, e[g].a ? "allows" : "denies",
               e[g].b ? "allows" : "denies", witnesses);
        size_t shown = 0;
        for (size_t j = g; j < ne; j++) {
            if (!(e[j].a == e[g].a && e[j].b == e[g].b && strcmp(e[j].kind, e[g].kind) == 0))
                continue;
            done[j] = true;
            if (cap > 0 && shown >= (size_t)cap)
                continue;
            shown++;
            if (e[j].spellings > 1)
                printf("  %s (%zu spellings along PATH, e.g. %s)\n", e[j].key, e[j].spellings,
                       e[j].first);
            else
                printf("  %s\n", e[j].first);
        }
        if (shown < lines)
            printf("  ... and %zu more (--witnesses 0 shows all)\n", lines - shown);
    }
    for (size_t j = 0; j < ne; j++)
        free(e[j].key);
    free(e);
    free(done);
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

enum { OPT_WITNESSES = 0x280 };

typedef struct compare_opts {
    bool json;
    long witnesses; /* lines a group shows in text, 0: all */
} compare_opts;

static int compare_option(void *state, int opt, const char *arg)
{
    compare_opts *o = state;
    if (opt == OPT_FORMAT)
        return text_or_json(&o->json, opt, arg);
    char *end;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (errno || end == arg || *end || n < 0) {
        cli_error("--witnesses: '%s' is not a count (0 shows every witness)", arg);
        return -1;
    }
    o->witnesses = n;
    return 0;
}

static int cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"witnesses", required_argument, NULL, OPT_WITNESSES},
        {NULL, 0, NULL, 0},
    };
    compare_opts o = {false, 10};
    const cli_cmd_spec spec = {"compare", usage_compare, "", longopts, false, compare_option, &o};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, argc, argv, &args);
    if (status != CMD_RUN)
        return status;
    status = CLI_EXIT_USAGE;
    grant_context *ctx = args.ctx;
    int first = args.first;
    grant_policy *a = NULL, *b = NULL;
    grant_comparison *cmp = NULL;

    if (argc - first != 2) {
        cli_error("compare: expected two policies A and B, got %d", argc - first);
        cli_usage_hint("compare");
        goto out;
    }
    if (strcmp(argv[first], "-") == 0 && strcmp(argv[first + 1], "-") == 0) {
        cli_usage_error("compare: standard input can stand for only one of A and B");
        goto out;
    }
    /* Compile both before giving up so one run shows every error. */
    int fa = cli_compile_files(ctx, argv + first, 1, NULL, 0, &a);
    int fb = cli_compile_files(ctx, argv + first + 1, 1, NULL, 0, &b);
    if (fa || fb)
        goto out;
    int rc = grant_compare(a, b, &cmp);
    if (rc < 0) {
        cli_error("cannot compare '%s' and '%s': %s", argv[first], argv[first + 1],
                  strerror(-rc));
        goto out;
    }
    if (o.json)
        print_comparison_json(cmp);
    else
        print_comparison_text(cmp, o.witnesses);
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        goto out;
    }
    status = grant_comparison_order(cmp) == GRANT_EQUAL ? CLI_EXIT_OK : CLI_EXIT_DIFFERENT;
out:
    grant_comparison_free(cmp);
    grant_policy_free(a);
    grant_policy_free(b);
    cli_cmd_args_free(&args);
    return status;
}

/* ---- check -------------------------------------------------------------- */

static const char usage_check[] =
    "Usage: grantc check [CTX] FILE... [--extend FILE]... [--format text|json] -- QUERY\n"
    "Ask the gate one question about the policy stacked from FILEs and print the\n"
    "verdict with its reason: the deciding layer and rule (file:line), the\n"
    "identity that matched, and a hint when there is one. QUERY is one of:\n"
    "  exec CMD [ARG]...     may CMD run with these arguments? (CMD is looked up\n"
    "                        along --path, relative to --cwd)\n"
    "  read PATH             may PATH be read? (relative to --cwd)\n"
    "  write PATH            may PATH be written?\n"
    "  gate NAME             a host gate: shell.chdir, editor.read, editor.write,\n"
    "                        editor.tui or net\n"
    "  connect HOST:PORT     may the command connect to HOST:PORT? (a name, an IPv4\n"
    "                        address or a bracketed IPv6 address: [::1]:443)\n"
    "Exit status: 0 allowed; 1 denied, or admitted but no such command\n"
    "('admitted, not found'); 2 usage or input error (a policy that does not\n"
    "compile is never reported as denied).\n"
    "\n"
    "      --extend FILE     join FILE into the first FILE (repeatable)\n"
    "      --format text|json  json prints the verdict as one canonical JSON object\n"
    "  -h, --help            print this help and exit\n"
    "\n" CTX_HELP;

static const char *answer_word(grant_answer a)
{
    switch (a) {
    case GRANT_ALLOWED:
        return "allowed";
    case GRANT_NOT_FOUND:
        return "admitted, not found";
    default:
        return "denied";
    }
}

/* One line for the question, as the user asked it (argv joined by spaces). */
static void print_query(char **q, int n)
{
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? " " : "", q[i]);
}

static void print_verdict_text(const grant_verdict *v, char **q, int nq)
{
    printf("%s: ", answer_word(grant_verdict_answer(v)));
    print_query(q, nq);
    const char *layer = grant_verdict_layer(v), *rule = grant_verdict_rule(v);
    printf("\n  by %s", grant_verdict_origin(v));
    if (layer)
        printf(" (layer %s)", layer);
    printf(": %s\n", rule ? rule : "");
    const char *identity = grant_verdict_identity(v), *hint = grant_verdict_hint(v);
    if (identity)
        printf("  identity: %s\n", identity);
    if (hint)
        printf("  hint: %s\n", hint);
}

/* Ask the gate; q[0] is the kind. Returns 0 with *out set, or
 * CLI_EXIT_USAGE after printing why. */
static int run_query(const grant_policy *p, char **q, int nq, grant_verdict **out)
{
    const char *kind = q[0];
    int rc;
    if (strcmp(kind, "exec") == 0) {
        if (nq < 2) {
            cli_error("check: 'exec' needs a command");
            return cli_usage_hint("check");
        }
        rc = grant_check_exec(p, (const char *const *)q + 1, (size_t)(nq - 1), NULL, NULL, out);
    } else if (strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0) {
        if (nq != 2) {
            cli_error("check: '%s' takes exactly one PATH", kind);
            return cli_usage_hint("check");
        }
        grant_op op = kind[0] == 'r' ? GRANT_OP_READ : GRANT_OP_WRITE;
        rc = grant_check_fs(p, op, q[1], NULL, out);
    } else if (strcmp(kind, "gate") == 0) {
        if (nq != 2) {
            cli_error("check: 'gate' takes exactly one NAME");
            return cli_usage_hint("check");
        }
        rc = grant_check_gate(p, q[1], out);
        if (rc == -EINVAL) {
            cli_error("check: unknown gate '%s' (expected shell.chdir, editor.read, "
                      "editor.write, editor.tui or net)",
                      q[1]);
            return cli_usage_hint("check");
        }
    } else if (strcmp(kind, "connect") == 0) {
        if (nq != 2) {
            cli_error("check: 'connect' takes exactly one HOST:PORT");
            return cli_usage_hint("check");
        }
        /* The port follows the last ':'; an IPv6 host is bracketed. */
        const char *colon = strrchr(q[1], ':');
        char *end = NULL;
        unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
        bool bare_v6 = colon && q[1][0] != '[' && memchr(q[1], ':', (size_t)(colon - q[1]));
        if (!colon || colon == q[1] || !colon[1] || *end || bare_v6 || port < 1 ||
            port > 65535) {
            cli_error("check: 'connect' takes HOST:PORT with a port 1-65535 (an IPv6 address "
                      "in brackets: [::1]:443), not '%s'",
                      q[1]);
            return cli_usage_hint("check");
        }
        char *host = strndup(q[1], (size_t)(colon - q[1]));
        if (!host)
            abort();
        rc = grant_check_connect(p, host, (unsigned)port, out);
        if (rc == -EINVAL) {
            cli_error("check: '%s' is not a host name, an IPv4 address or a bracketed IPv6 "
                      "address",
                      host);
            free(host);
            return cli_usage_hint("check");
        }
        free(host);
    } else {
        cli_error("check: unknown query '%s' (expected exec, read, write, gate or connect)",
                  kind);
        return cli_usage_hint("check");
    }
    if (rc < 0 || !*out) {
        cli_error("check: cannot decide '%s %s': %s", kind, nq > 1 ? q[1] : "",
                  strerror(rc < 0 ? -rc : EINVAL));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    /* The query after '--' is the user's, not ours: getopt must not see or
     * permute it (an 'exec grep -r' would otherwise lose its '-r'). */
    int nopts = 1;
    while (nopts < argc && strcmp(argv[nopts], "--") != 0)
        nopts++;
    char **query = nopts < argc ? argv + nopts + 1 : NULL;
    int nquery = nopts < argc ? argc - nopts - 1 : 0;

    bool json = false;
    const cli_cmd_spec spec = {"check", usage_check, "", longopts, true, text_or_json, &json};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, nopts, argv, &args);
    if (status != CMD_RUN)
        return status;
    status = CLI_EXIT_USAGE;
    grant_policy *policy = NULL;
    grant_verdict *v = NULL;
    if (!cli_has_files("check", args.first, nopts))
        goto out;
    if (!query || nquery == 0) {
        cli_error("check: missing the query after '--' (exec CMD..., read PATH, write PATH, "
                  "gate NAME or connect HOST:PORT)");
        cli_usage_hint("check");
        goto out;
    }
    if (cli_compile_files(args.ctx, argv + args.first, (size_t)(nopts - args.first), args.extends,
                      args.nextends, &policy))
        goto out;
    if (run_query(policy, query, nquery, &v))
        goto out;
    if (json) {
        char *j = grant_verdict_json(v);
        if (!j)
            abort();
        printf("%s\n", j);
        free(j);
    } else {
        print_verdict_text(v, query, nquery);
    }
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        goto out;
    }
    status = grant_verdict_answer(v) == GRANT_ALLOWED ? CLI_EXIT_OK : CLI_EXIT_DIFFERENT;
out:
    grant_verdict_free(v);
    grant_policy_free(policy);
    cli_cmd_args_free(&args);
    return status;
}

/* ---- audit -------------------------------------------------------------- */

enum { OPT_AUDIT_FAIL_ON = 0x200, OPT_AUDIT_LEVEL };

static const char usage_audit[] =
    "Usage: grantc audit [CTX] FILE... [--extend FILE]... [--format text|json|sarif]\n"
    "                    [--fail-on error|warning|note|none]\n"
    "       grantc audit [CTX] FILE... --level namespaces|landlock [--format text|json]\n"
    "Report risks and dead rules in a policy. Each finding has a stable id, a\n"
    "severity, the rule responsible (file:line, when there is one) and a message.\n"
    "Host-target audits also look at this machine (Unix sockets, who can write the\n"
    "PATH directories); other targets never touch the local filesystem.\n"
    "\n"
    "      --format text|json|sarif\n"
    "                        text (default): one line per finding,\n"
    "                          FILE:LINE: SEVERITY[ID NAME]: MESSAGE\n"
    "                        (SEVERITY[ID NAME]: MESSAGE when it has no location),\n"
    "                        then a summary line;\n"
    "                        json: an array of objects with the keys file, id, line,\n"
    "                        message, name, severity (file and line null when\n"
    "                        unknown), canonical: sorted keys, no whitespace;\n"
    "                        sarif: a SARIF 2.1.0 log for GitHub code scanning (file\n"
    "                        URIs relative to the context cwd)\n"
    "      --fail-on error|warning|note|none\n"
    "                        exit 1 when a finding of this severity or a graver one\n"
    "                        exists (default error; none: findings never fail)\n"
    "      --extend FILE     join FILE into the first FILE (repeatable)\n"
    "      --level namespaces|landlock\n"
    "                        instead of findings, the enforcement record of that level\n"
    "                        of confinement (grantrun(1)): per rule what enforces it,\n"
    "                        and whether it holds as written, stricter, weaker or not\n"
    "                        at all (json: the document of grantrun --report); exit 1\n"
    "                        when the level loses a rule (what grantrun --level auto\n"
    "                        refuses to fall back over)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Findings:\n"
    "  GK001 deputy                    warning  writable exec-admitted prefix\n"
    "  GK002 shadowed                  warning  a rule that cannot change any decision\n"
    "  GK003 no-effect                 warning  deny/readonly outside every granted region\n"
    "  GK004 source-writable           warning  a policy source in a writable region\n"
    "  GK005 unix-socket               warning  a Unix socket in a readable region (host)\n"
    "  GK006 path-writable             warning  xdg:bin or a PATH directory writable\n"
    "  GK007 shell-capable             warning  subcommand list on a program that runs\n"
    "                                           commands (git, find, make, env, ...)\n"
    "  GK008 fidelity-elf-loader       note     Linux: ld.so loads readable binaries\n"
    "  GK009 fidelity-windows-exec     note     Windows: exec has no OS filter\n"
    "  GK010 fidelity-landlock-nesting note     Landlock alone cannot deny inside an allow\n"
    "  GK011 fidelity-subcommands      note     argument lists are enforced by the gate only\n"
    "  GK012 fidelity-absent-mask      note     an absent deny under a read-only bind\n"
    "  GK013 fidelity-windows-rename   note     Windows: a rename keeps the old ACE\n"
    "  GK014 git-writable              warning  a git dir whose config, hooks, commondir,\n"
    "                                           modules, ... a command can write\n"
    "  GK015 build-file-shadowed       note     a readonly Makefile whose GNUmakefile or\n"
    "                                           makefile is writable\n"
    "  GK017 net-shared-host           warning  a wildcard destination over a shared\n"
    "                                           hosting domain (*.githubusercontent.com)\n"
    "Dead rules (GK002, GK003) of a policy included along the policy path (a\n"
    "bundled baseline, written for every context) are not reported.\n"
    "\n"
    "Exit status: 0 no finding at or above --fail-on; 1 some; 2 usage or input\n"
    "error (a policy that does not compile).\n"
    "\n" CTX_HELP;

/* -1 for none: nothing fails. */
static int parse_fail_on(const char *s, int *out)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {
        {"error", GRANT_SEVERITY_ERROR},
        {"warning", GRANT_SEVERITY_WARNING},
        {"note", GRANT_SEVERITY_NOTE},
        {"none", -1},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(s, levels[i].name) == 0) {
            *out = levels[i].level;
            return 0;
        }
    return -EINVAL;
}

static const char *audit_severity_name(grant_severity s)
{
    return s == GRANT_SEVERITY_ERROR ? "error" : s == GRANT_SEVERITY_WARNING ? "warning" : "note";
}

static void print_findings_text(const grant_findings *f)
{
    size_t n = grant_findings_count(f), count[3] = {0};
    for (size_t i = 0; i < n; i++) {
        const char *id, *name, *file, *message;
        grant_severity sev;
        unsigned line;
        if (grant_finding(f, i, &id, &name, &sev, &file, &line, &message) < 0)
            continue;
        count[sev]++;
        if (file && line)
            printf("%s:%u: ", file, line);
        else if (file)
            printf("%s: ", file);
        printf("%s[%s %s]: %s\n", audit_severity_name(sev), id, name, message);
    }
    if (!n) {
        puts("no findings");
        return;
    }
    printf("%zu finding%s: %zu error%s, %zu warning%s, %zu note%s\n", n, n == 1 ? "" : "s",
           count[GRANT_SEVERITY_ERROR], count[GRANT_SEVERITY_ERROR] == 1 ? "" : "s",
           count[GRANT_SEVERITY_WARNING], count[GRANT_SEVERITY_WARNING] == 1 ? "" : "s",
           count[GRANT_SEVERITY_NOTE], count[GRANT_SEVERITY_NOTE] == 1 ? "" : "s");
}

typedef struct audit_opts {
    enum { AUDIT_TEXT, AUDIT_JSON, AUDIT_SARIF } format;
    int fail_on;
    bool has_level;
    grant_level level;
} audit_opts;

static int audit_option(void *state, int opt, const char *arg)
{
    audit_opts *o = state;
    if (opt == OPT_AUDIT_LEVEL) {
        if (grant_level_from_name(arg, &o->level) < 0) {
            cli_error("--level: unknown level '%s' (expected namespaces or landlock)", arg);
            cli_usage_hint("audit");
            return -1;
        }
        o->has_level = true;
        return 0;
    }
    if (opt == OPT_FORMAT) {
        if (strcmp(arg, "text") == 0)
            o->format = AUDIT_TEXT;
        else if (strcmp(arg, "json") == 0)
            o->format = AUDIT_JSON;
        else if (strcmp(arg, "sarif") == 0)
            o->format = AUDIT_SARIF;
        else {
            cli_error("--format: unknown format '%s' (expected text, json or sarif)", arg);
            cli_usage_hint("audit");
            return -1;
        }
    } else if (parse_fail_on(arg, &o->fail_on) < 0) {
        cli_error("--fail-on: unknown severity '%s' (expected error, warning, note or none)",
                  arg);
        cli_usage_hint("audit");
        return -1;
    }
    return 0;
}

/* grantc audit --level: the enforcement record instead of findings. */
static int audit_level(const grant_policy *policy, const audit_opts *o)
{
    if (o->format == AUDIT_SARIF) {
        cli_error("--level: the enforcement record has no SARIF form (text or json)");
        return CLI_EXIT_USAGE;
    }
    grant_enforcement *e = NULL;
    int rc = grant_enforcement_derive(policy, o->level, &e);
    if (rc < 0) {
        cli_error("cannot derive the enforcement record: %s", strerror(-rc));
        return CLI_EXIT_USAGE;
    }
    char *doc = o->format == AUDIT_JSON ? grant_enforcement_json(e) : grant_enforcement_text(e);
    fputs(doc, stdout);
    if (o->format == AUDIT_JSON)
        fputc('\n', stdout);
    free(doc);
    int status = grant_enforcement_lost_count(e) ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
    grant_enforcement_free(e);
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        return CLI_EXIT_USAGE;
    }
    return status;
}

static int cmd_audit(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"fail-on", required_argument, NULL, OPT_AUDIT_FAIL_ON},
        {"level", required_argument, NULL, OPT_AUDIT_LEVEL},
        {NULL, 0, NULL, 0},
    };
    audit_opts o = {AUDIT_TEXT, GRANT_SEVERITY_ERROR, false, GRANT_LEVEL_NAMESPACES};
    const cli_cmd_spec spec = {"audit", usage_audit, "", longopts, true, audit_option, &o};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, argc, argv, &args);
    if (status != CMD_RUN)
        return status;
    status = CLI_EXIT_USAGE;
    grant_policy *policy = NULL;
    grant_findings *findings = NULL;
    if (!cli_has_files("audit", args.first, argc))
        goto out;
    if (cli_compile_files(args.ctx, argv + args.first, (size_t)(argc - args.first), args.extends,
                      args.nextends, &policy))
        goto out;
    if (o.has_level) {
        status = audit_level(policy, &o);
        goto out;
    }
    int rc = grant_audit(policy, &findings);
    if (rc < 0) {
        cli_error("cannot audit the policy: %s", strerror(-rc));
        goto out;
    }
    if (o.format == AUDIT_TEXT) {
        print_findings_text(findings);
    } else {
        char *doc = o.format == AUDIT_JSON ? grant_findings_json(findings)
                                         : grant_findings_sarif(findings);
        if (!doc)
            abort();
        fputs(doc, stdout);
        fputc('\n', stdout);
        free(doc);
    }
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        goto out;
    }
    status = CLI_EXIT_OK;
    for (size_t i = 0; i < grant_findings_count(findings); i++) {
        grant_severity sev;
        if (grant_finding(findings, i, NULL, NULL, &sev, NULL, NULL, NULL) == 0 && o.fail_on >= 0 &&
            (int)sev >= o.fail_on)
            status = CLI_EXIT_DIFFERENT;
    }
out:
    grant_findings_free(findings);
    grant_policy_free(policy);
    cli_cmd_args_free(&args);
    return status;
}

/* ---- sid ---------------------------------------------------------------- */

static const char usage_sid[] =
    "Usage: grantc sid capability|appcontainer NAME\n"
    "Derive a Windows SID offline, for audits.\n"
    "  capability NAME       print the capability SID of NAME (as\n"
    "                        DeriveCapabilitySidsFromName), then its group SID on a\n"
    "                        second line; the twelve legacy names (internetClient ...\n"
    "                        contacts) keep S-1-15-3-1 ... S-1-15-3-12\n"
    "  appcontainer NAME     print the AppContainer SID of a profile or package\n"
    "                        family name (as DeriveAppContainerSidFromAppContainerName)\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "NAME is upper-cased (capability) or lower-cased (appcontainer) first, with\n"
    "Unicode simple case mapping; Windows' own table may differ outside ASCII.\n"
    "Exit status: 0 success; 2 usage error or a NAME that is not UTF-8.\n";

static int cmd_sid(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    cli_start_options(argv);
    /* '+': a NAME may start with '-' only after "--". */
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (opt == 'h')
            return cli_print_help(usage_sid);
        cli_usage_hint("sid");
        return CLI_EXIT_USAGE;
    }
    if (argc - optind != 2) {
        cli_error("sid: expected capability|appcontainer and one NAME, got %d argument%s",
                  argc - optind, argc - optind == 1 ? "" : "s");
        cli_usage_hint("sid");
        return CLI_EXIT_USAGE;
    }
    const char *kind = argv[optind], *name = argv[optind + 1];
    char *sid = NULL, *group = NULL;
    int rc;
    if (strcmp(kind, "capability") == 0) {
        rc = grant_sid_capability(name, &sid, &group);
    } else if (strcmp(kind, "appcontainer") == 0) {
        rc = grant_sid_appcontainer(name, &sid);
    } else {
        cli_error("sid: unknown kind '%s' (expected capability or appcontainer)", kind);
        cli_usage_hint("sid");
        return CLI_EXIT_USAGE;
    }
    if (rc < 0) {
        cli_error("sid: cannot derive a SID from '%s': %s", name,
                  rc == -EINVAL ? "not valid UTF-8" : strerror(-rc));
        return CLI_EXIT_USAGE;
    }
    printf("%s\n", sid);
    if (group)
        printf("%s\n", group);
    free(sid);
    free(group);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

/* ---- sbpl: audit any Seatbelt profile offline (cli.md) ------------------ */

static const char usage_sbpl[] =
    "Usage: grantc sbpl eval PROFILE [-D NAME=VALUE]... [--vnode-type TYPE]\n"
    "                        [--format text|json] (OPERATION [ARG] | --queries FILE)\n"
    "       grantc sbpl lint PROFILE [-D NAME=VALUE]... [--format text|json]\n"
    "Read a Seatbelt (SBPL) profile and answer what it allows, without a Mac.\n"
    "\n"
    "eval prints allow, deny or undecided and the deciding rule (file:line); the\n"
    "last rule whose operation and filters match decides, as in Seatbelt. ARG is\n"
    "a path (file-*, process-exec), a service name (mach-lookup; 'local:NAME' for\n"
    "a local name), a sysctl name, a signal target (self, same-sandbox, others,\n"
    "children, pgrp, parent) or an address ([tcp:|udp:]HOST:PORT, or a socket\n"
    "path). An OPERATION ending in '*' (file-read*) asks about every operation\n"
    "below it. Undecided means the answer depends on something unknown offline\n"
    "(a param without a value, an import not found, a filter such as extension).\n"
    "\n"
    "lint reports rules shadowed by a later rule, operand-less allows, allows of\n"
    "default, unanchored regexes, unresolved params and imports, a missing\n"
    "default rule and /tmp, /var, /etc spellings Seatbelt never sees.\n"
    "\n"
    "  -D NAME=VALUE         a param, as sandbox-exec -D (IMPORT_DIR=DIR is also\n"
    "                        searched for relative imports)\n"
    "      --queries FILE    evaluate one query per line: OPERATION [ARG] (ARG is\n"
    "                        the rest of the line; '#' starts a comment line;\n"
    "                        '-' reads standard input)\n"
    "      --vnode-type TYPE REGULAR-FILE, DIRECTORY, SYMLINK, FIFO, SOCKET,\n"
    "                        CHARACTER-DEVICE, BLOCK-DEVICE or TTY\n"
    "      --format text|json\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Regexes are searched anywhere in the path: #\"/\\.git(/|$)\" matches a .git at\n"
    "any depth; only ^ and $ anchor. A relative import is looked up beside the\n"
    "importing file, then in IMPORT_DIR.\n"
    "Exit status: eval 0 allowed, 1 denied (with --queries: any denied), 2\n"
    "undecided or usage or input error; lint 0 no findings, 1 findings, 2 error.\n";

enum { SBPL_OPT_QUERIES = 512, SBPL_OPT_VNODE, SBPL_OPT_FORMAT };

static const char *sbpl_verdict_word(grant_sbpl_verdict v)
{
    return v == GRANT_SBPL_ALLOW ? "allow" : v == GRANT_SBPL_DENY ? "deny" : "undecided";
}

/* One query: print its answer; returns its exit status (0/1/2). */
static int sbpl_query(const grant_sbpl *s, const char *op, const char *arg, const char *vnode,
                      bool json, bool *first_json)
{
    grant_diags *d = grant_diags_new();
    grant_sbpl_answer *a = NULL;
    int rc = grant_sbpl_eval(s, op, arg, vnode, d, &a);
    cli_print_diags(d);
    grant_diags_free(d);
    if (rc < 0)
        return CLI_EXIT_USAGE;
    grant_sbpl_verdict v = grant_sbpl_answer_verdict(a);
    if (json) {
        char *j = grant_sbpl_answer_json(a);
        if (first_json) {
            fputs(*first_json ? "" : ",", stdout);
            *first_json = false;
        }
        fputs("{\"answer\":", stdout);
        fputs(j, stdout);
        fputs(",\"query\":{\"argument\":", stdout);
        if (arg)
            cli_json_string(stdout, arg);
        else
            fputs("null", stdout);
        fputs(",\"operation\":", stdout);
        cli_json_string(stdout, op);
        fputs("}}", stdout);
        if (!first_json)
            fputc('\n', stdout);
        free(j);
    } else {
        printf("%s %s%s%s\n", sbpl_verdict_word(v), op, arg ? " " : "", arg ? arg : "");
        const char *leaf = grant_sbpl_answer_operation(a);
        bool other = leaf && strcmp(leaf, op) != 0 && op[strlen(op) - 1] == '*';
        printf("  %s %s%s%s%s: %s\n", v == GRANT_SBPL_UNDECIDED ? "at" : "by",
               grant_sbpl_answer_origin(a), other ? " (for " : "", other ? leaf : "",
               other ? ")" : "", grant_sbpl_answer_rule(a));
        if (grant_sbpl_answer_note(a))
            printf("  note: %s\n", grant_sbpl_answer_note(a));
    }
    grant_sbpl_answer_free(a);
    return v == GRANT_SBPL_ALLOW ? CLI_EXIT_OK : v == GRANT_SBPL_DENY ? CLI_EXIT_DIFFERENT
                                                                     : CLI_EXIT_USAGE;
}

/* Many queries from a file: the worst status wins (undecided/error over
 * deny over allow). */
static int sbpl_queries(const grant_sbpl *s, const char *file, const char *vnode, bool json)
{
    char *text = NULL;
    size_t len = 0;
    int rc = grant_read_input(file, &text, &len);
    if (rc < 0) {
        cli_error("cannot read '%s': %s", file, grant_read_strerror(rc));
        return CLI_EXIT_USAGE;
    }
    int status = CLI_EXIT_OK;
    bool first = true;
    if (json)
        fputc('[', stdout);
    unsigned lineno = 0;
    for (char *line = text, *next; line && line < text + len; line = next) {
        next = memchr(line, '\n', (size_t)(text + len - line));
        if (next)
            *next++ = '\0';
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
            line[--n] = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line || *line == '#')
            continue;
        char *arg = line + strcspn(line, " \t");
        if (*arg) {
            *arg++ = '\0';
            arg += strspn(arg, " \t");
        }
        int st = sbpl_query(s, line, *arg ? arg : NULL, vnode, json, &first);
        if (st == CLI_EXIT_USAGE || (st == CLI_EXIT_DIFFERENT && status == CLI_EXIT_OK))
            status = st;
    }
    if (json)
        fputs("]\n", stdout);
    free(text);
    return status;
}

static void sbpl_lint_json(const grant_diags *f)
{
    fputc('[', stdout);
    for (size_t i = 0; i < grant_diags_count(f); i++) {
        const char *id = grant_diags_id(f, i);
        char *where = grant_diags_location(f, i);
        fputs(i ? ",{\"id\":" : "{\"id\":", stdout);
        cli_json_string(stdout, id ? id : "");
        fputs(",\"location\":", stdout);
        if (where)
            cli_json_string(stdout, where);
        else
            fputs("null", stdout);
        fputs(",\"message\":", stdout);
        cli_json_string(stdout, grant_diags_message(f, i));
        fputs(",\"severity\":", stdout);
        cli_json_string(stdout, grant_diags_severity(f, i) == 1 ? "warning" : "note");
        fputc('}', stdout);
        free(where);
    }
    fputs("]\n", stdout);
}

static int cmd_sbpl(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"queries", required_argument, NULL, SBPL_OPT_QUERIES},
        {"vnode-type", required_argument, NULL, SBPL_OPT_VNODE},
        {"format", required_argument, NULL, SBPL_OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_print_help(usage_sbpl);
    if (argc < 2) {
        cli_error("sbpl: expected eval or lint");
        return cli_usage_hint("sbpl");
    }
    if (strcmp(argv[1], "eval") != 0 && strcmp(argv[1], "lint") != 0) {
        cli_error("sbpl: unknown action '%s' (expected eval or lint)", argv[1]);
        return cli_usage_hint("sbpl");
    }
    bool lint = strcmp(argv[1], "lint") == 0;
    argc--;
    argv++;
    const char **params = calloc((size_t)argc + 1, sizeof(*params));
    size_t nparams = 0;
    const char *queries = NULL, *vnode = NULL;
    bool json = false;
    int status = CLI_EXIT_USAGE, opt;
    grant_sbpl *s = NULL;
    grant_diags *d = grant_diags_new();
    if (!params)
        abort();
    cli_start_options(argv);
    while ((opt = getopt_long(argc, argv, "hD:", longopts, NULL)) != -1) {
        if (opt == 'D') {
            if (!strchr(optarg, '=') || optarg[0] == '=') {
                cli_error("-D: expected NAME=VALUE, not '%s'", optarg);
                goto out;
            }
            params[nparams++] = optarg;
        } else if (opt == SBPL_OPT_QUERIES && !lint) {
            queries = optarg;
        } else if (opt == SBPL_OPT_VNODE && !lint) {
            vnode = optarg;
        } else if (opt == SBPL_OPT_FORMAT) {
            if (strcmp(optarg, "json") == 0 || strcmp(optarg, "text") == 0) {
                json = optarg[0] == 'j';
            } else {
                cli_error("--format: unknown format '%s' (expected text or json)", optarg);
                goto out;
            }
        } else if (opt == 'h') {
            status = cli_print_help(usage_sbpl);
            goto out;
        } else {
            cli_usage_hint("sbpl");
            goto out;
        }
    }
    int rest = argc - optind;
    if (rest < 1) {
        cli_error("sbpl %s: expected a PROFILE", lint ? "lint" : "eval");
        cli_usage_hint("sbpl");
        goto out;
    }
    if (lint ? rest != 1 : queries ? rest != 1 : rest < 2 || rest > 3) {
        cli_error(lint      ? "sbpl lint: expected only PROFILE"
                  : queries ? "sbpl eval: give either OPERATION [ARG] or --queries FILE"
                            : "sbpl eval: expected PROFILE OPERATION [ARG]");
        cli_usage_hint("sbpl");
        goto out;
    }
    const char *profile = argv[optind];
    int rc = grant_sbpl_read(profile, params, nparams, 0, d, &s);
    /* lint reports unresolved params and imports as findings: print the
     * reader's warnings only for eval, and its errors always. */
    if (rc < 0 || !lint)
        cli_print_diags(d);
    if (rc < 0) {
        if (rc != -EPROTO && grant_diags_count(d) == 0)
            cli_error("cannot read '%s': %s", profile, strerror(-rc));
        goto out;
    }
    if (lint) {
        grant_diags *f = grant_diags_new();
        size_t n = grant_sbpl_lint(s, f);
        if (json) {
            sbpl_lint_json(f);
        } else {
            for (size_t i = 0; i < grant_diags_count(f); i++) {
                char *text = grant_diags_render(f, i);
                puts(text ? text : "");
                free(text);
            }
        }
        grant_diags_free(f);
        status = n ? CLI_EXIT_DIFFERENT : CLI_EXIT_OK;
    } else if (queries) {
        status = sbpl_queries(s, queries, vnode, json);
    } else {
        status = sbpl_query(s, argv[optind + 1], rest == 3 ? argv[optind + 2] : NULL, vnode,
                            json, NULL);
    }
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output: %s", strerror(errno));
        status = CLI_EXIT_USAGE;
    }
out:
    grant_sbpl_free(s);
    grant_diags_free(d);
    free(params);
    return status;
}

/* ---- emit: what each OS enforces (backends.md) -------------------------- */

static const char usage_emit[] =
    "Usage: grantc emit [CTX] --backend bwrap|seatbelt|appcontainer|landlock\n"
    "                   [--format F] FILE... [--extend FILE]...\n"
    "Render the compiled policy for one OS backend on standard output. Fidelity\n"
    "notes (what the backend cannot express, assumptions made offline, host paths\n"
    "bwrap will create as mountpoints) go to standard error.\n"
    "\n"
    "  -b, --backend NAME    bwrap, seatbelt, appcontainer or landlock\n"
    "  -f, --format F        bwrap: shell (default: one line, each argument quoted\n"
    "                        only when needed), argv0 (NUL-terminated arguments, for\n"
    "                        xargs -0) or json (an array of strings); seatbelt:\n"
    "                        sbpl (default) or sbpl-params; appcontainer: json\n"
    "                        (default) or powershell; landlock: json\n"
    "      --extend FILE     join FILE into the first FILE (repeatable)\n"
    "  -h, --help            print this help and exit\n"
    "\n" CTX_HELP "\n"
    "bwrap output is the arguments bwrap takes before '--' (no program name, no\n"
    "helper, no command): namespaces, a minimal environment, mounts, masks and\n"
    "--chdir. Landlock and seccomp are applied only by grantrun. For example:\n"
    "  eval \"bwrap $(grantc emit --backend bwrap demo.grant) -- make\"\n"
    "Exit status: 0 success; 2 usage or input error, an unknown format, or a\n"
    "backend that cannot render this policy (e.g. bwrap for --target macos).\n";

typedef struct emit_opts {
    const char *backend, *format;
} emit_opts;

static int emit_option(void *state, int opt, const char *arg)
{
    emit_opts *o = state;
    *(opt == 'b' ? &o->backend : &o->format) = arg;
    return 0;
}

static int cmd_emit(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"backend", required_argument, NULL, 'b'},
        {"format", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    emit_opts o = {NULL, NULL};
    const cli_cmd_spec spec = {"emit", usage_emit, "b:f:", longopts, true, emit_option, &o};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, argc, argv, &args);
    if (status != CMD_RUN)
        return status;
    status = CLI_EXIT_USAGE;
    const char *backend_name = o.backend, *format = o.format;
    grant_policy *policy = NULL;
    grant_diags *notes = NULL;
    char *out = NULL;
    grant_backend backend;
    if (!backend_name) {
        cli_error("emit: missing --backend (bwrap, seatbelt, appcontainer or landlock)");
        cli_usage_hint("emit");
        goto done;
    }
    if (grant_backend_from_name(backend_name, &backend) < 0) {
        cli_error("emit: unknown backend '%s' (expected bwrap, seatbelt, appcontainer or "
                  "landlock)",
                  backend_name);
        cli_usage_hint("emit");
        goto done;
    }
    if (!cli_has_files("emit", args.first, argc))
        goto done;
    if (cli_compile_files(args.ctx, argv + args.first, (size_t)(argc - args.first), args.extends,
                      args.nextends, &policy))
        goto done;
    notes = grant_diags_new();
    size_t len = 0;
    int rc = grant_emit(policy, backend, format, notes, &out, &len);
    cli_print_diags(notes);
    if (rc == -EINVAL) {
        cli_error("emit: backend %s has no format '%s'", backend_name, format ? format : "");
        cli_usage_hint("emit");
        goto done;
    }
    if (rc == -ENOTSUP) {
        cli_error("emit: backend %s cannot render this policy (built for another OS, or not "
                  "available in this build)",
                  backend_name);
        goto done;
    }
    if (rc < 0) {
        cli_error("emit: %s", strerror(-rc));
        goto done;
    }
    rc = cli_write_stream(stdout, out, len);
    if (rc < 0) {
        cli_error("cannot write to standard output: %s", strerror(-rc));
        goto done;
    }
    status = CLI_EXIT_OK;
done:
    free(out);
    grant_diags_free(notes);
    grant_policy_free(policy);
    cli_cmd_args_free(&args);
    return status;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
    /* A file size limit makes a write fail (EFBIG, reported) instead of
     * killing grantc beside a half-written temporary. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        cli_usage_error("missing COMMAND");
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
        return cli_print_help(usage_main);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        /* The version, then what this build has (cli.md: --version). */
        char *info = grant_build_info();
        printf("grantc (grantkit) %s\n%s", grant_version(), info ? info : "");
        free(info);
        cli_print_linkage();
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc - 1, argv + 1);
    if (strcmp(cmd, "fmt") == 0)
        return cmd_fmt(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "audit") == 0)
        return cmd_audit(argc - 1, argv + 1);
    if (strcmp(cmd, "sid") == 0)
        return cmd_sid(argc - 1, argv + 1);
    if (strcmp(cmd, "sbpl") == 0)
        return cmd_sbpl(argc - 1, argv + 1);
    if (strcmp(cmd, "emit") == 0)
        return cmd_emit(argc - 1, argv + 1);
    if (cmd[0] == '-')
        cli_usage_error("unrecognized option '%s' (options follow the COMMAND)", cmd);
    else
        cli_usage_error("unknown command '%s'", cmd);
    return CLI_EXIT_USAGE;
}
