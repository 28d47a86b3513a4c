/* embed.c - a short embedder of libgrant's run API (grant.h): compile a
 * policy, run one command through the frame protocol in a fresh child
 * process (the installed grantrun), with a scratch tree seeded from
 * bytes, and print what came back.
 *
 *   cc embed.c $(pkg-config --cflags --libs grant) -o embed
 *   ./embed POLICY.grant CMD [ARG...]
 *
 * The command runs with /work as its scratch tree, holding hello.txt.
 * GRANTRUN=PATH runs that grantrun as the child (default: the installed).
 */
#include <grant/grant.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s POLICY CMD [ARG...]\n", argv[0]);
        return 2;
    }
    grant_context *ctx = NULL;
    grant_diags *diags = grant_diags_new();
    grant_policy *policy = NULL;
    const char *files[] = {argv[1]};
    if (grant_context_new(&ctx) < 0 ||
        grant_compile(ctx, files, 1, NULL, 0, diags, &policy) < 0) {
        for (size_t i = 0; i < grant_diags_count(diags); i++) {
            char *line = grant_diags_render(diags, i);
            fprintf(stderr, "%s\n", line);
            free(line);
        }
        return 2;
    }

    /* The request copies what it is given: the policy could be freed now. */
    grant_run_request *req = grant_run_request_new();
    const char *env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
    grant_run_request_set_argv(req, (const char *const *)argv + 2, (size_t)(argc - 2));
    grant_run_request_set_env(req, env);
    grant_run_request_set_policy(req, policy);
    grant_run_request_set_root(req, "/work");
    grant_run_request_add_file(req, "/hello.txt", "hello from the embedder\n", 24, 0644);
    grant_run_request_set_limit(req, GRANT_LIMIT_TIMEOUT_MS, 10000);
    grant_run_request_set_diff(req, true, true, false);

    /* bwrap: where the embedder found it; child_program NULL: the
     * installed grantrun is the child ($GRANTRUN names another). */
    grant_supervise_opts opts = {.bwrap = "/usr/bin/bwrap", .grace_ms = -1,
                                 .child_program = getenv("GRANTRUN"),
                                 .helper = getenv("GRANTKIT_HELPER")};
    grant_run_result *res = NULL;
    if (grant_supervise(req, &opts, &res) < 0) {
        fprintf(stderr, "grant_supervise: bad arguments\n");
        return 2;
    }
    size_t n;
    const char *out = grant_run_result_output(res, &n);
    fwrite(out, 1, n, stdout);
    const char *diff = grant_run_result_diff(res, &n);
    if (diff)
        fwrite(diff, 1, n, stdout);
    fprintf(stderr, "failureKind %s, exitCode %d: %s\n",
            grant_failure_name(grant_run_result_failure(res)), grant_run_result_exit_code(res),
            grant_run_result_error_message(res));
    int status = grant_run_result_exit_status(res);
    /* The result owns its strings: they go with it. */
    grant_run_result_free(res);
    grant_run_request_free(req);
    grant_policy_free(policy);
    grant_context_free(ctx);
    grant_diags_free(diags);
    return status;
}
