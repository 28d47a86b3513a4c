/* grantrun_frame.c - grantrun's process isolation (frame-protocol.md):
 * `grantrun --isolate process` (and the options that imply it),
 * `grantrun frame` (a host's one request on stdin, one result on
 * stdout) and the re-exec marker `grantrun --frame-child --bwrap PATH`.
 * Runs go through the public run API (grant_supervise); only the child
 * and the host mode's framing use the runtime's internals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "grantrun_frame.h"
#include "runtime/frame.h"
#include "runtime/frame_child.h"

static bool parse_grace(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 86400000L)
        return false;
    *out = v;
    return true;
}

int grantrun_frame_child(int argc, char **argv, const char *helper_default)
{
    const char *bwrap = NULL, *helper = helper_default, *scratch_dir = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--bwrap") == 0)
            bwrap = argv[i + 1];
        else if (strcmp(argv[i], "--helper") == 0)
            helper = argv[i + 1];
        else if (strcmp(argv[i], "--scratch-dir") == 0)
            scratch_dir = argv[i + 1];
    }
    return gk_frame_child_main(bwrap, helper, scratch_dir);
}

int grantrun_frame_host(int argc, char **argv, const char *bwrap_found, const char *helper)
{
    const char *bwrap = bwrap_found;
    long grace = -1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--bwrap") == 0 && i + 1 < argc) {
            bwrap = argv[++i];
        } else if (strcmp(argv[i], "--grace-ms") == 0 && i + 1 < argc) {
            if (!parse_grace(argv[++i], &grace)) {
                cli_error("--grace-ms: '%s' is not a number of milliseconds", argv[i]);
                return 125;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("Usage: grantrun frame [--bwrap PATH] [--grace-ms N]\n"
                   "Read one run-request frame on stdin, run it in a child process, write\n"
                   "one run-result frame on stdout (grant-frame(7)).\n");
            return 0;
        } else {
            cli_usage_error("frame: unexpected argument '%s'", argv[i]);
            return 125;
        }
    }
    char *payload = NULL, *err = NULL;
    size_t len = 0;
    grant_run_result *res = NULL;
    int rc = gk_frame_read(0, GK_FRAME_MAX, &payload, &len, &err);
    gk_run_result fallback;
    gk_run_result_init(&fallback);
    gk_buf out = {0};
    if (rc < 0) {
        gk_run_result_fail(&fallback, GK_FAIL_HOST,
                           gk_printf("cannot read the run-request: %s", err));
        gk_run_result_encode(&fallback, GK_FRAME_MAX, &out);
    } else if (!bwrap || bwrap[0] != '/') {
        gk_run_result_fail(&fallback, GK_FAIL_HOST,
                           gk_strdup("confinement unavailable: no bubblewrap (bwrap) on PATH; "
                                     "pass --bwrap PATH; nothing ran"));
        gk_run_result_encode(&fallback, GK_FRAME_MAX, &out);
    } else {
        grant_supervise_opts so = {.bwrap = bwrap, .grace_ms = grace,
                                   .child_program = GRANT_CHILD_SELF, .helper = helper};
        if (grant_supervise_json(payload, len, &so, &res) < 0 || !res) {
            gk_run_result_fail(&fallback, GK_FAIL_HOST, gk_strdup("cannot supervise the run"));
            gk_run_result_encode(&fallback, GK_FRAME_MAX, &out);
        } else {
            char *json;
            size_t jlen;
            grant_run_result_json(res, &json, &jlen);
            gk_buf_add(&out, json, jlen);
            free(json);
        }
    }
    free(err);
    free(payload);
    gk_run_result_clear(&fallback);
    rc = gk_frame_write(1, out.data, out.len, GK_FRAME_MAX);
    gk_buf_free(&out);
    grant_run_result_free(res);
    if (rc < 0) {
        cli_error("cannot write the run-result: %s", strerror(-rc));
        return 125;
    }
    return 0;
}

/* The first line of s, for the summary. */
static int first_line(const char *s)
{
    return (int)strcspn(s, "\n");
}

int grantrun_isolated(const grant_policy *policy, const grantrun_iso *o)
{
    grant_run_request *req = grant_run_request_new();
    int status = 125;
    char *err = NULL;
    grant_run_result *res = NULL;
    int rc = grant_run_request_set_argv(req, (const char *const *)o->argv, o->argc);
    if (rc == 0)
        rc = grant_run_request_set_env(req, o->env);
    if (rc == 0)
        rc = grant_run_request_set_policy(req, policy);
    if (rc < 0) {
        cli_error("cannot build the run-request: %s", strerror(-rc));
        goto done;
    }
    const char *root = o->root ? o->root : o->nseeds ? "/work" : NULL;
    if (root && grant_run_request_set_root(req, root) < 0) {
        cli_error("--root: '%s' must be an absolute path other than /", root);
        goto done;
    }
    if (!root) {
        /* No scratch tree: the command starts where grantrun was started
         * (as with --isolate none), not at "/". */
        char *here = getcwd(NULL, 0);
        if (here)
            grant_run_request_set_cwd(req, here);
        free(here);
    }
    grant_run_request_set_limit(req, GRANT_LIMIT_TIMEOUT_MS, o->timeout_ms);
    grant_run_request_set_limit(req, GRANT_LIMIT_MEMORY_BYTES, o->memory_bytes);
    grant_run_request_set_limit(req, GRANT_LIMIT_PROCESSES, o->processes);
    grant_run_request_set_limit(req, GRANT_LIMIT_CPU_SECONDS, o->cpu_seconds);
    if (o->fs_quota)
        grant_run_request_set_limit(req, GRANT_LIMIT_FS_QUOTA_BYTES, o->fs_quota);
    if (o->fs_nodes)
        grant_run_request_set_limit(req, GRANT_LIMIT_FS_NODES, o->fs_nodes);
    if (o->diff && !root) {
        cli_error("--diff needs a scratch tree (--seed or --root); nothing ran");
        goto done;
    }
    grant_run_request_set_diff(req, o->diff != 0, o->diff == 2, o->diff_metadata);
    grant_run_request_set_level(req, o->level, o->allow_degraded);
    for (size_t i = 0; i < o->nseeds; i++) {
        gk_autofree char *host = NULL, *dest = NULL;
        if (gk_scratch_seed_parse(o->seeds[i], &host, &dest, &err) < 0 ||
            grant_run_request_add_seed(req, host, dest, &err) < 0) {
            cli_error("--seed %s: %s; nothing ran", o->seeds[i], err ? err : "refused");
            goto done;
        }
    }
    grant_supervise_opts so = {.bwrap = o->bwrap, .grace_ms = o->grace_ms,
                               .child_program = GRANT_CHILD_SELF, .helper = o->helper};
    if (grant_supervise(req, &so, &res) < 0 || !res) {
        cli_error("cannot supervise the run");
        goto done;
    }
    status = grant_run_result_exit_status(res);
    if (o->json) {
        char *json;
        size_t len;
        grant_run_result_json(res, &json, &len);
        cli_write_stream(stdout, json, len);
        cli_write_stream(stdout, "\n", 1);
        free(json);
    } else {
        size_t n;
        const char *s = grant_run_result_output(res, &n);
        cli_write_stream(stdout, s, n);
        s = grant_run_result_error_output(res, &n);
        cli_write_stream(stderr, s, n);
        s = grant_run_result_diff(res, &n);
        if (s) {
            cli_write_stream(stdout, s, n);
            if (n && s[n - 1] != '\n')
                cli_write_stream(stdout, "\n", 1);
        }
        const char *msg = grant_run_result_error_message(res);
        int code = grant_run_result_exit_code(res);
        long long wall;
        grant_run_result_stats(res, &wall, NULL, NULL, NULL);
        char codebuf[16] = "null";
        if (code >= 0)
            snprintf(codebuf, sizeof(codebuf), "%d", code);
        fprintf(stderr, "grantrun: %s (exitCode %s, %lld ms)%s%.*s\n",
                grant_failure_name(grant_run_result_failure(res)), codebuf, wall,
                *msg ? ": " : "", first_line(msg), msg);
    }
done:
    free(err);
    grant_run_result_free(res);
    grant_run_request_free(req);
    return status;
}
