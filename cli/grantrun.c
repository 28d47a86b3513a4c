/* grantrun - run a command under a compiled policy, on Linux, for real.
 *
 *   grantrun [CTX] -p FILE [-p FILE]... [--extend FILE]... [OPTIONS] -- CMD [ARG...]
 *
 * The gate decides first (126 refused, 127 admitted but missing); then the
 * command runs in the envelope of backends.md (bwrap, seccomp, and
 * grantkit-helper applying noexec remounts and Landlock). This version
 * runs in the calling process's place (--isolate none): the frame
 * protocol and the options that need it are not written yet, and asking
 * for them is an error, never a silent downgrade. Exit statuses: cli.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_cmd.h"
#include "cli_util.h"
#include "grantrun_net.h"
#include "runtime/features.h"
#include "runtime/launch.h"
#include "runtime/level.h"
#include "grantrun_frame.h"

#ifndef GK_HELPER_PATH
#define GK_HELPER_PATH "/usr/local/libexec/grantkit/grantkit-helper"
#endif
/* Below this an address-space limit kills the dynamic loader (SIGSEGV)
 * before the command runs: refused, documented in grantrun(1). */
#define GRANTRUN_MIN_MEMORY (16L << 20)

extern char **environ;

static const char usage_run[] =
    "Usage: grantrun [CTX] -p FILE [-p FILE]... [--extend FILE]... [OPTIONS] -- CMD [ARG...]\n"
    "Run CMD under the compiled policy: the gate decides first, then the command\n"
    "runs in a bubblewrap envelope with seccomp, Landlock and noexec writable mounts.\n"
    "\n"
    "  -p, --policy FILE     a policy to stack (repeatable; later ones narrow)\n"
    "      --extend FILE     join FILE into the first policy (repeatable)\n"
    "      --env NAME[=VALUE]\n"
    "                        set NAME in the command's environment (without a value:\n"
    "                        copy it from grantrun's); repeatable\n"
    "      --keep-env        start from grantrun's whole environment instead of the\n"
    "                        minimal one (PATH, HOME, LANG, TERM, USER)\n"
    "      --tty             keep the controlling terminal (seccomp still blocks\n"
    "                        TIOCSTI)\n"
    "      --timeout DURATION\n"
    "                        kill the envelope after DURATION (ms, s, m or h; bare:\n"
    "                        seconds): status 124\n"
    "      --processes N     at most N processes of the command's user (RLIMIT_NPROC)\n"
    "      --cpu SECONDS     CPU time limit (RLIMIT_CPU: SIGXCPU, then SIGKILL)\n"
    "      --memory BYTES    address-space limit (RLIMIT_AS; K, M, G suffixes; at\n"
    "                        least 16M); some runtimes reserve more than they use\n"
    "                        and fail early\n"
    "      --bwrap PATH      the bubblewrap to pin (default: first on PATH)\n"
    "      --level auto|namespaces|landlock\n"
    "                        the level of confinement (default auto: namespaces where\n"
    "                        the host allows them, else landlock if the policy loses\n"
    "                        nothing there, else refused with what it would lose)\n"
    "      --allow-degraded  run even where a rule cannot be enforced at the level;\n"
    "                        each such rule is printed\n"
    "      --report FILE     write the run's record to FILE as JSON: the level, why,\n"
    "                        per rule what enforces it, and the network decisions\n"
    "                        (\"network\": each destination asked, or null)\n"
    "      --dry-run         print the bwrap arguments and the Landlock ruleset, run\n"
    "                        nothing\n"
    "      --isolate none|process\n"
    "                        none (default): run the envelope in grantrun's place;\n"
    "                        process: supervise a child over the frame protocol\n"
    "                        (grant-frame(7)); the options below imply it\n"
    "      --grace-ms N      with --timeout, how long the supervisor waits past it\n"
    "                        before it kills the child (default 1000)\n"
    "      --seed HOSTPATH[=DEST]\n"
    "                        copy a file or tree into the run's scratch tree\n"
    "                        (repeatable; DEST below --root)\n"
    "      --root DIR        where the scratch tree is (default /work)\n"
    "      --fs-quota BYTES  size of the scratch tmpfs (K, M, G suffixes)\n"
    "      --fs-nodes N      inodes of the scratch tmpfs\n"
    "      --diff json|unified\n"
    "                        print what the command changed in the scratch tree\n"
    "      --diff-metadata   the diff lists mode and mtime changes too\n"
    "      --json            print the run-result document instead of replaying the\n"
    "                        command's output\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version, and what this build and host have\n"
    "                        (Landlock ABI, seccomp, bwrap and its version, user\n"
    "                        namespaces), and exit\n"
    "\n" CTX_HELP "\n"
    "Exit status: the command's own (0-123), 124 timeout, 125 grantrun failed (usage,\n"
    "policy, confinement unavailable), 126 refused by the policy or not executable,\n"
    "127 admitted but not found, 128+N killed by signal N.\n";

enum {
    OPT_ENV = 0x300,
    OPT_KEEP_ENV,
    OPT_TTY,
    OPT_DRY_RUN,
    OPT_BWRAP,
    OPT_TIMEOUT,
    OPT_ISOLATE,
    OPT_PROCESSES,
    OPT_CPU,
    OPT_MEMORY,
    OPT_LEVEL,
    OPT_ALLOW_DEGRADED,
    OPT_REPORT,
    OPT_GRACE_MS,
    OPT_SEED,
    OPT_ROOT,
    OPT_FS_QUOTA,
    OPT_FS_NODES,
    OPT_DIFF,
    OPT_DIFF_METADATA,
    OPT_JSON,
    OPT_LATER, /* an option of cli.md this version does not implement */
};

typedef struct run_opts {
    char **policies;
    size_t npolicies;
    char **env_args;
    size_t nenv;
    bool keep_env, tty, dry_run, allow_degraded;
    gk_level_choice level;
    const char *report;
    const char *bwrap;
    long timeout_ms;
    long processes, cpu_seconds, memory_bytes;
    /* process isolation (grantrun_frame.c) */
    int isolate;              /* -1 not given, 0 none, 1 process */
    bool implies_process;     /* an option only process isolation has */
    long grace_ms, fs_quota, fs_nodes;
    char **seeds;
    size_t nseeds;
    const char *root;
    int diff;
    bool diff_metadata, json;
} run_opts;

/* DURATION: a number with ms, s, m or h (bare: seconds). */
static int parse_duration(const char *s, long *ms)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double scale = strcmp(end, "ms") == 0  ? 1
                   : strcmp(end, "s") == 0 || !*end ? 1000
                   : strcmp(end, "m") == 0  ? 60000
                   : strcmp(end, "h") == 0  ? 3600000
                                            : -1;
    if (scale < 0 || v * scale > 1e15)
        return -1;
    *ms = (long)(v * scale);
    return *ms > 0 ? 0 : -1;
}

/* A positive count, or BYTES with K, M or G (powers of 1024). */
static int parse_amount(const char *s, bool bytes, long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long scale = 1;
    if (bytes && *end && !end[1])
        scale = *end == 'K' ? 1ULL << 10 : *end == 'M' ? 1ULL << 20 : *end == 'G' ? 1ULL << 30 : 0;
    else if (*end)
        scale = 0;
    if (errno || end == s || s[0] == '-' || !scale || v == 0 || v > (1ULL << 50) / scale)
        return -1;
    *out = (long)(v * scale);
    return 0;
}

static int run_option(void *state, int opt, const char *arg)
{
    run_opts *o = state;
    switch (opt) {
    case 'p':
        o->policies[o->npolicies++] = (char *)arg;
        return 0;
    case OPT_ENV:
        o->env_args[o->nenv++] = (char *)arg;
        return 0;
    case OPT_KEEP_ENV:
        o->keep_env = true;
        return 0;
    case OPT_TTY:
        o->tty = true;
        return 0;
    case OPT_DRY_RUN:
        o->dry_run = true;
        return 0;
    case OPT_BWRAP:
        o->bwrap = arg;
        return 0;
    case OPT_LEVEL: {
        grant_level l;
        if (strcmp(arg, "auto") == 0) {
            o->level = GK_LEVEL_AUTO;
        } else if (grant_level_from_name(arg, &l) == 0) {
            o->level = (gk_level_choice)l;
        } else {
            cli_error("--level: unknown level '%s' (expected auto, namespaces or landlock)", arg);
            return -1;
        }
        return 0;
    }
    case OPT_ALLOW_DEGRADED:
        o->allow_degraded = true;
        return 0;
    case OPT_REPORT:
        o->report = arg;
        return 0;
    case OPT_TIMEOUT:
        if (parse_duration(arg, &o->timeout_ms) < 0) {
            cli_error("--timeout: '%s' is not a duration (e.g. 500ms, 30s, 2m)", arg);
            return -1;
        }
        return 0;
    case OPT_PROCESSES:
    case OPT_CPU:
    case OPT_MEMORY: {
        long *slot = opt == OPT_PROCESSES ? &o->processes
                     : opt == OPT_CPU     ? &o->cpu_seconds
                                          : &o->memory_bytes;
        if (parse_amount(arg, opt == OPT_MEMORY, slot) == 0 && opt == OPT_MEMORY &&
            *slot < GRANTRUN_MIN_MEMORY) {
            cli_error("--memory: '%s' is below the minimum of 16M (the dynamic loader, the "
                      "helper and bubblewrap need that much address space); nothing ran",
                      arg);
            return -1;
        }
        if (parse_amount(arg, opt == OPT_MEMORY, slot) < 0) {
            cli_error("--%s: '%s' is not a positive %s", opt == OPT_PROCESSES ? "processes"
                                                         : opt == OPT_CPU     ? "cpu"
                                                                              : "memory",
                      arg, opt == OPT_MEMORY ? "size (BYTES, or with K, M, G)" : "number");
            return -1;
        }
        return 0;
    }
    case OPT_ISOLATE:
        if (strcmp(arg, "none") == 0 || strcmp(arg, "process") == 0) {
            o->isolate = strcmp(arg, "process") == 0;
            return 0;
        }
        cli_error("--isolate: '%s' is neither none nor process", arg);
        return -1;
    case OPT_GRACE_MS: {
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < 0 || v > 86400000L) {
            cli_error("--grace-ms: '%s' is not a number of milliseconds", arg);
            return -1;
        }
        o->grace_ms = v;
        return 0;
    }
    case OPT_SEED:
        o->seeds[o->nseeds++] = (char *)arg;
        o->implies_process = true;
        return 0;
    case OPT_ROOT:
        o->root = arg;
        o->implies_process = true;
        return 0;
    case OPT_FS_QUOTA:
    case OPT_FS_NODES:
        if (parse_amount(arg, opt == OPT_FS_QUOTA, opt == OPT_FS_QUOTA ? &o->fs_quota
                                                                       : &o->fs_nodes) < 0) {
            cli_error("--%s: '%s' is not a positive %s", opt == OPT_FS_QUOTA ? "fs-quota"
                                                                              : "fs-nodes",
                      arg, opt == OPT_FS_QUOTA ? "size (BYTES, or with K, M, G)" : "number");
            return -1;
        }
        o->implies_process = true;
        return 0;
    case OPT_DIFF:
        if (strcmp(arg, "json") != 0 && strcmp(arg, "unified") != 0) {
            cli_error("--diff: '%s' is neither json nor unified", arg);
            return -1;
        }
        o->diff = strcmp(arg, "json") == 0 ? 1 : 2;
        o->implies_process = true;
        return 0;
    case OPT_DIFF_METADATA:
        o->diff_metadata = true;
        o->implies_process = true;
        return 0;
    case OPT_JSON:
        o->json = true;
        o->implies_process = true;
        return 0;
    default:
        cli_error("this option is not available in this version of grantrun; nothing ran");
        return -1;
    }
}

/* The command's environment: the minimal set (or everything), then each
 * --env in order. Returns a NULL-terminated list of malloc'd strings. */
static char **command_env(const run_opts *o)
{
    size_t cap = 16 + o->nenv, n = 0;
    for (char **e = environ; o->keep_env && e && *e; e++)
        cap++;
    char **env = calloc(cap + 1, sizeof(*env));
    if (!env)
        abort();
    static const char *const minimal[] = {"PATH", "HOME", "LANG", "TERM", "USER"};
    for (char **e = environ; e && *e; e++) {
        bool keep = o->keep_env;
        for (size_t i = 0; i < sizeof(minimal) / sizeof(*minimal) && !keep; i++) {
            size_t len = strlen(minimal[i]);
            keep = strncmp(*e, minimal[i], len) == 0 && (*e)[len] == '=';
        }
        if (keep && n < cap)
            env[n++] = strdup(*e);
    }
    for (size_t i = 0; i < o->nenv; i++) {
        const char *a = o->env_args[i], *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        char *entry = NULL;
        if (eq) {
            entry = strdup(a);
        } else {
            const char *v = getenv(a);
            if (!v)
                continue;
            if (asprintf(&entry, "%s=%s", a, v) < 0)
                entry = NULL;
        }
        if (!entry)
            abort();
        size_t k = 0;
        while (k < n && !(strncmp(env[k], a, len) == 0 && env[k][len] == '='))
            k++;
        if (k < n)
            free(env[k]);
        else
            n++;
        env[k] = entry;
    }
    return env;
}

static const struct option run_longopts[] = {
    {"policy", required_argument, NULL, 'p'},
    {"env", required_argument, NULL, OPT_ENV},
    {"keep-env", no_argument, NULL, OPT_KEEP_ENV},
    {"tty", no_argument, NULL, OPT_TTY},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"bwrap", required_argument, NULL, OPT_BWRAP},
    {"report", required_argument, NULL, OPT_REPORT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"isolate", required_argument, NULL, OPT_ISOLATE},
    {"grace-ms", required_argument, NULL, OPT_GRACE_MS},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"processes", required_argument, NULL, OPT_PROCESSES},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"seed", required_argument, NULL, OPT_SEED},
    {"root", required_argument, NULL, OPT_ROOT},
    {"fs-quota", required_argument, NULL, OPT_FS_QUOTA},
    {"fs-nodes", required_argument, NULL, OPT_FS_NODES},
    {"diff", required_argument, NULL, OPT_DIFF},
    {"diff-metadata", no_argument, NULL, OPT_DIFF_METADATA},
    {"json", no_argument, NULL, OPT_JSON},
    {"allow-degraded", no_argument, NULL, OPT_ALLOW_DEGRADED},
    {"level", required_argument, NULL, OPT_LEVEL},
    {NULL, 0, NULL, 0},
};

/* No stray operand, a policy, a command: else say which is missing. */
static bool operands_ok(const cli_cmd_args *args, int nopts, char **argv, const run_opts *o,
                        char **command, size_t ncommand)
{
    if (args->first < nopts) {
        cli_error("unexpected operand '%s' (policies go with -p, the command after '--')",
                  argv[args->first]);
        cli_usage_hint(NULL);
        return false;
    }
    if (o->npolicies == 0) {
        cli_error("missing -p FILE");
        cli_usage_hint(NULL);
        return false;
    }
    if (ncommand == 0) {
        cli_error("missing the command after '--'");
        cli_usage_hint(NULL);
        return false;
    }
    if (!**command) {
        cli_error("the command after '--' is an empty string; nothing ran");
        return false;
    }
    return true;
}

/* The run at its level, its notes, description, record and message
 * printed; returns grantrun's exit status. */
static int launch_and_report(const grant_policy *policy, const gk_level_opts *lo,
                             const run_opts *o)
{
    grant_diags *notes = grant_diags_new();
    gk_buf described = {0};
    gk_level_result result = {0};
    int status = GK_RUN_FAILED;
    int rc = gk_level_run(policy, lo, notes, &described, &result);
    /* Fidelity notes matter when reading the plan, not on every run; a
     * rule run unenforced (--allow-degraded) is said every time. */
    if (lo->launch.dry_run || lo->allow_degraded)
        cli_print_diags(notes);
    grant_diags_free(notes);
    if (rc < 0) {
        cli_error("cannot run: %s%s", strerror(-rc),
                  rc == -EINVAL ? " (compile for this host: no --target)" : "");
    } else {
        if (lo->launch.dry_run && described.data)
            cli_write_stream(stdout, described.data, described.len);
        if (result.run.message)
            cli_error("%s", result.run.message);
        status = result.run.status;
        /* Why a download failed, where a person looks: the end of stderr. */
        grantrun_net_print_refusals(result.run.net);
        /* No record when the gate refused before a level was chosen: a
         * report of nothing ({"network":null}) is not written (cli.md:
         * no output file unless the run got that far). */
        if (o->report && result.have_record) {
            char *doc = grant_enforcement_json(&result.record);
            int wrc = grantrun_net_write_report(o->report, doc, result.run.net);
            free(doc);
            if (wrc < 0) {
                cli_error("--report %s: cannot write it: %s", o->report, strerror(-wrc));
                if (status == 0)
                    status = GK_RUN_FAILED;
            }
        }
    }
    gk_buf_free(&described);
    gk_level_result_clear(&result);
    return status;
}

/* Run (or describe) the command under the compiled policy, with the
 * pinned bubblewrap and the helper; returns grantrun's exit status. */
static int run_command(const grant_policy *policy, const run_opts *o, char **command,
                       size_t ncommand)
{
    int status = GK_RUN_FAILED;
    char **env = command_env(o);
    char *bwrap = o->bwrap ? strdup(o->bwrap)
                           : gk_launch_find_program(policy, "bwrap", getenv("PATH"));
    const char *helper = getenv("GRANTKIT_HELPER");
    gk_level_opts lo = {
        .launch =
            {
                .argv = command,
                .argc = ncommand,
                .env = (const char *const *)env,
                .tty = o->tty,
                .bwrap = bwrap && bwrap[0] == '/' ? bwrap : NULL,
                .helper = helper && *helper ? helper : GK_HELPER_PATH,
                .timeout_ms = o->timeout_ms,
                .processes = o->processes,
                .cpu_seconds = o->cpu_seconds,
                .memory_bytes = o->memory_bytes,
                .dry_run = o->dry_run,
            },
        .level = o->level,
        .allow_degraded = o->allow_degraded,
        .bwrap_version = o->report != NULL,
    };
    bool process = o->isolate == 1 || (o->isolate < 0 && o->implies_process);
    if (o->isolate == 0 && o->implies_process && !o->dry_run)
        cli_error("--seed, --root, --fs-quota, --fs-nodes, --diff, --diff-metadata and --json "
                  "need --isolate process; nothing ran");
    else if (process && o->tty && !o->dry_run)
        cli_error("--tty: with --isolate process the command's stdin is /dev/null and its "
                  "output is captured, so there is no terminal to keep; nothing ran");
    else if (process && o->report)
        cli_error("--report is a wrap-mode option in this version (an isolated run's result "
                  "carries its enforcement member: --json); nothing ran");
    else if (o->report && !grantrun_net_report_writable(o->report))
        ; /* said why; nothing ran */
    else if ((process || o->level == GK_LEVEL_NAMESPACES) && !lo.launch.bwrap)
        cli_error("confinement unavailable: no bubblewrap (bwrap) on PATH; install it or pass "
                  "--bwrap PATH; nothing ran");
    else if (access(lo.launch.helper, X_OK) < 0)
        cli_error("confinement unavailable: no helper at %s; nothing ran", lo.launch.helper);
    else if (process && !o->dry_run) {
        grantrun_iso iso = {
            .argv = command, .argc = ncommand, .env = (const char *const *)env,
            .bwrap = bwrap, .helper = helper && *helper ? helper : NULL,
            .timeout_ms = o->timeout_ms, .grace_ms = o->grace_ms,
            .memory_bytes = o->memory_bytes, .processes = o->processes,
            .cpu_seconds = o->cpu_seconds, .fs_quota = o->fs_quota, .fs_nodes = o->fs_nodes,
            .root = o->root, .seeds = o->seeds, .nseeds = o->nseeds, .diff = o->diff,
            .diff_metadata = o->diff_metadata, .json = o->json,
            .level = o->level == GK_LEVEL_AUTO ? "auto"
                                               : grant_level_name((grant_level)o->level),
            .allow_degraded = o->allow_degraded,
        };
        status = grantrun_isolated(policy, &iso);
    } else
        status = launch_and_report(policy, &lo, o);
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
    free(bwrap);
    return status;
}

/* The first executable bwrap on the absolute entries of PATH (host mode
 * has no policy whose context could walk it), or NULL. */
static char *bwrap_on_path(void)
{
    const char *path = getenv("PATH");
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n && p[0] == '/') {
            char *cand = NULL;
            if (asprintf(&cand, "%.*s/bwrap", (int)n, p) >= 0 && access(cand, X_OK) == 0)
                return cand;
            free(cand);
        }
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* grantrun --version [--bwrap PATH]: the version, then what this build and
 * host have for the envelope (cli.md). Only looks: a run still fails
 * closed on what it finds missing. */
static int print_version(int nopts, char **argv)
{
    const char *bwrap = NULL;
    for (int i = 1; i < nopts; i++) {
        if (strcmp(argv[i], "--bwrap") == 0 && i + 1 < nopts)
            bwrap = argv[++i];
        else if (strncmp(argv[i], "--bwrap=", 8) == 0)
            bwrap = argv[i] + 8;
    }
    gk_host_features f;
    gk_host_features_probe(bwrap, getenv("PATH"), &f);
    const char *helper = getenv("GRANTKIT_HELPER");
    if (!helper || !*helper)
        helper = GK_HELPER_PATH;
    char *info = grant_build_info();
    printf("grantrun (grantkit) %s\n%s", grant_version(), info ? info : "");
    free(info);
    cli_print_linkage();
    printf("helper: %s%s\n", helper, access(helper, X_OK) == 0 ? "" : " (missing)");
    if (f.landlock_abi > 0)
        printf("landlock: ABI %d\n", f.landlock_abi);
    else
        printf("landlock: unavailable (%s)\n", strerror(-f.landlock_abi));
    printf("seccomp: %s; libseccomp %s\n",
           f.seccomp_filter ? "filters" : "unavailable (the kernel takes no filters)",
           f.libseccomp ? f.libseccomp : "?");
    if (f.bwrap)
        printf("bwrap: %s (%s)\n", f.bwrap, f.bwrap_version ? f.bwrap_version : "gave no version");
    else
        printf("bwrap: none on PATH\n");
    printf("user namespaces: ");
    if (f.max_userns >= 0)
        printf("at most %ld", f.max_userns);
    else
        printf("limit unknown");
    if (f.unpriv_userns >= 0)
        printf(", unprivileged %s", f.unpriv_userns ? "allowed" : "refused");
    printf("\n");
    /* The levels this build has; which one a run gets is probed then
     * (--level auto, grantrun(1) LEVELS OF CONFINEMENT). */
    printf("levels: namespaces (bwrap, where user namespaces allow a mount), landlock (%s)\n",
           f.landlock_abi > 0 ? "available" : "unavailable: no Landlock");
    gk_host_features_clear(&f);
    return fflush(stdout) == 0 ? 0 : GK_RUN_FAILED;
}

int main(int argc, char **argv)
{
    cli_progname = "grantrun";
    /* Pinned before anything else: the child is this binary, whatever
     * later happens to the file on disk. */
    grant_supervise_pin();
    if (argc >= 2 && strcmp(argv[1], "--frame-child") == 0)
        return grantrun_frame_child(argc, argv, GK_HELPER_PATH);
    if (argc >= 2 && strcmp(argv[1], "frame") == 0) {
        const char *helper = getenv("GRANTKIT_HELPER");
        char *bwrap = bwrap_on_path();
        int st = grantrun_frame_host(argc, argv, bwrap, helper && *helper ? helper : NULL);
        free(bwrap);
        return st;
    }
    /* The command after '--' is not ours: getopt must not see it. */
    int nopts = 1;
    while (nopts < argc && strcmp(argv[nopts], "--") != 0)
        nopts++;
    for (int i = 1; i < nopts; i++)
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0)
            return print_version(nopts, argv);
    char **command = nopts < argc ? argv + nopts + 1 : NULL;
    size_t ncommand = nopts < argc ? (size_t)(argc - nopts - 1) : 0;

    run_opts o = {0};
    o.level = GK_LEVEL_AUTO;
    o.isolate = -1;
    o.grace_ms = -1;
    o.policies = calloc((size_t)argc + 1, sizeof(char *));
    o.env_args = calloc((size_t)argc + 1, sizeof(char *));
    o.seeds = calloc((size_t)argc + 1, sizeof(char *));
    if (!o.policies || !o.env_args || !o.seeds)
        abort();
    const cli_cmd_spec spec = {NULL, usage_run, "p:", run_longopts, true, run_option, &o};
    cli_cmd_args args;
    int status = cli_parse_command(&spec, nopts, argv, &args);
    if (status != CMD_RUN) {
        free(o.policies);
        free(o.env_args);
        free(o.seeds);
        return status == CLI_EXIT_OK ? 0 : GK_RUN_FAILED;
    }
    status = GK_RUN_FAILED;
    grant_policy *policy = NULL;
    if (operands_ok(&args, nopts, argv, &o, command, ncommand) &&
        cli_compile_files(args.ctx, o.policies, o.npolicies, args.extends, args.nextends,
                          &policy) == 0)
        status = run_command(policy, &o, command, ncommand);
    grant_policy_free(policy);
    free(o.policies);
    free(o.env_args);
    free(o.seeds);
    cli_cmd_args_free(&args);
    return status;
}
