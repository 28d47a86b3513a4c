/* run_api.c - grant.h's run API: thin wrappers over frame.h and
 * supervise.h (ownership rules in grant.h). */
#include "runtime/frame.h"
#include "runtime/supervise.h"
#include "grant/grant.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef GK_GRANTRUN_PATH
#define GK_GRANTRUN_PATH "/usr/local/bin/grantrun"
#endif

struct grant_run_request {
    gk_run_request r;
};

struct grant_run_result {
    gk_run_result r;
};

grant_run_request *grant_run_request_new(void)
{
    grant_run_request *r = gk_calloc(1, sizeof(*r));
    gk_run_request_init(&r->r);
    return r;
}

void grant_run_request_free(grant_run_request *r)
{
    if (!r)
        return;
    gk_run_request_clear(&r->r);
    free(r);
}

int grant_run_request_set_argv(grant_run_request *r, const char *const *argv, size_t argc)
{
    if (!r || !argv || argc == 0 || !argv[0] || !*argv[0])
        return -EINVAL;
    gk_strvec_free(&r->r.argv);
    for (size_t i = 0; i < argc; i++)
        gk_strvec_push(&r->r.argv, argv[i] ? argv[i] : "");
    return 0;
}

int grant_run_request_set_env(grant_run_request *r, const char *const *env)
{
    if (!r)
        return -EINVAL;
    for (size_t i = 0; env && env[i]; i++)
        if (!strchr(env[i], '=') || env[i][0] == '=')
            return -EINVAL;
    gk_strvec_free(&r->r.env);
    for (size_t i = 0; env && env[i]; i++)
        gk_strvec_push(&r->r.env, env[i]);
    return 0;
}

int grant_run_request_set_cwd(grant_run_request *r, const char *cwd)
{
    if (!r || (cwd && cwd[0] != '/'))
        return -EINVAL;
    free(r->r.cwd);
    r->r.cwd = cwd ? gk_strdup(cwd) : NULL;
    return 0;
}

int grant_run_request_set_policy(grant_run_request *r, const grant_policy *p)
{
    if (!r || !p)
        return -EINVAL;
    char *ir = NULL;
    int rc = grant_policy_ir(p, 0, &ir, NULL);
    if (rc < 0)
        return rc;
    free(r->r.policy);
    r->r.policy = ir;
    return 0;
}

int grant_run_request_set_limit(grant_run_request *r, grant_run_limit which, long long value)
{
    if (!r || value < 0)
        return -EINVAL;
    long long *slot[] = {&r->r.timeout_ms, &r->r.max_memory, &r->r.max_processes,
                         &r->r.cpu_seconds, &r->r.fs_quota, &r->r.fs_nodes};
    if ((unsigned)which >= sizeof(slot) / sizeof(*slot))
        return -EINVAL;
    *slot[which] = value;
    return 0;
}

int grant_run_request_set_root(grant_run_request *r, const char *root)
{
    if (!r || (root && (root[0] != '/' || !root[1])))
        return -EINVAL;
    free(r->r.root);
    r->r.root = root ? gk_strdup(root) : NULL;
    return 0;
}

int grant_run_request_add_file(grant_run_request *r, const char *path, const void *data,
                               size_t len, int mode)
{
    if (!r || !path || (len && !data))
        return -EINVAL;
    gk_scratch_list_add(&r->r.files, path, GK_SCRATCH_FILE, data, len, mode);
    return 0;
}

int grant_run_request_add_dir(grant_run_request *r, const char *path, int mode)
{
    if (!r || !path)
        return -EINVAL;
    gk_scratch_list_add(&r->r.files, path, GK_SCRATCH_DIR, NULL, 0, mode);
    return 0;
}

int grant_run_request_add_seed(grant_run_request *r, const char *host_path, const char *dest,
                               char **err)
{
    if (!r || !host_path)
        return -EINVAL;
    return gk_scratch_seed_read(host_path, dest, 0, &r->r.files, err);
}

int grant_run_request_set_diff(grant_run_request *r, bool include, bool unified, bool metadata)
{
    if (!r)
        return -EINVAL;
    r->r.include_diff = include;
    r->r.diff_format = unified ? GK_DIFF_UNIFIED : GK_DIFF_JSON;
    r->r.diff_metadata = metadata;
    return 0;
}

int grant_run_request_set_capture_base64(grant_run_request *r, bool base64)
{
    if (!r)
        return -EINVAL;
    r->r.capture = base64 ? GK_CAPTURE_BASE64 : GK_CAPTURE_UTF8;
    return 0;
}

int grant_run_request_set_level(grant_run_request *r, const char *level, bool allow_degraded)
{
    if (!r)
        return -EINVAL;
    if (!level)
        level = "auto";
    if (strcmp(level, "auto") != 0 && strcmp(level, "namespaces") != 0 &&
        strcmp(level, "landlock") != 0)
        return -EINVAL;
    free(r->r.level);
    r->r.level = gk_strdup(level);
    r->r.allow_degraded = allow_degraded;
    return 0;
}

int grant_run_request_json(const grant_run_request *r, char **out, size_t *len)
{
    if (!r || !out)
        return -EINVAL;
    gk_buf b = {0};
    gk_run_request_encode(&r->r, &b);
    *out = gk_buf_steal(&b, len);
    return 0;
}

int grant_run_request_from_json(const char *json, size_t len, grant_run_request **out,
                                char **err)
{
    if (!json || !out)
        return -EINVAL;
    grant_run_request *r = gk_calloc(1, sizeof(*r));
    int rc = gk_run_request_parse(json, len, &r->r, err);
    if (rc < 0) {
        free(r);
        *out = NULL;
        return rc;
    }
    *out = r;
    return 0;
}

int grant_supervise_pin(void)
{
    return gk_supervise_pin();
}

static grant_run_result *host_error(char *msg)
{
    grant_run_result *res = gk_calloc(1, sizeof(*res));
    gk_run_result_init(&res->r);
    gk_run_result_fail(&res->r, GK_FAIL_HOST, msg);
    return res;
}

static gk_supervise_opts supervise_opts(const grant_supervise_opts *o, long long timeout_ms)
{
    return (gk_supervise_opts){
        .program = o->child_program && strcmp(o->child_program, GRANT_CHILD_SELF) == 0
                       ? NULL
                   : o->child_program ? o->child_program
                                      : GK_GRANTRUN_PATH,
        .argv = (char *const *)o->child_argv,
        .bwrap = o->bwrap,
        .helper = o->helper,
        .timeout_ms = (long)timeout_ms,
        .grace_ms = o->grace_ms,
    };
}

static int run_payload(const char *json, size_t len, const grant_supervise_opts *o,
                       long long timeout_ms, grant_run_result **out)
{
    gk_supervise_opts so = supervise_opts(o, timeout_ms);
    grant_run_result *res = gk_calloc(1, sizeof(*res));
    int rc = gk_supervise(json, len, &so, &res->r);
    if (rc < 0) {
        free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* The payload, checked: the parent refuses what the child would. */
int grant_supervise_json(const char *json, size_t len, const grant_supervise_opts *o,
                         grant_run_result **out)
{
    if (!json || !o || !out || (!o->bwrap && !o->child_argv))
        return -EINVAL;
    if (len > GK_FRAME_MAX) {
        *out = host_error(gk_printf("the run-request is %zu bytes, over the frame limit of %zu "
                                    "bytes; nothing ran",
                                    len, GK_FRAME_MAX));
        return 0;
    }
    gk_run_request req;
    char *err = NULL;
    if (gk_run_request_parse(json, len, &req, &err) < 0) {
        *out = host_error(err);
        return 0;
    }
    long long timeout_ms = req.timeout_ms;
    gk_run_request_clear(&req);
    return run_payload(json, len, o, timeout_ms, out);
}

/* A request built here is checked as the parser would check its payload
 * (the rules that do not follow from the setters), without parsing it
 * back: a large baseline costs its encoding once. */
int grant_supervise(const grant_run_request *r, const grant_supervise_opts *o,
                    grant_run_result **out)
{
    if (!r || !o || !out || (!o->bwrap && !o->child_argv))
        return -EINVAL;
    const gk_run_request *q = &r->r;
    if (q->argv.n == 0 || !q->policy) {
        *out = host_error(gk_strdup(q->argv.n == 0 ? "the run-request has no command"
                                                    : "the run-request has no policy"));
        return 0;
    }
    if (q->include_diff && !q->root) {
        *out = host_error(gk_strdup("run-request: run.includeDiff is true but baseline.root is "
                                    "null: there is no scratch tree to diff"));
        return 0;
    }
    if (!q->root && q->files.n) {
        *out = host_error(gk_strdup("run-request: baseline.files without a baseline.root"));
        return 0;
    }
    if (q->root) {
        char *why = NULL;
        if (gk_scratch_validate(&q->files, (uint64_t)q->fs_quota, (uint64_t)q->fs_nodes, NULL,
                                &why) < 0) {
            *out = host_error(gk_printf("run-request: baseline refused, nothing ran: %s",
                                        why ? why : ""));
            free(why);
            return 0;
        }
    }
    gk_buf b = {0};
    gk_run_request_encode(q, &b);
    int rc;
    if (b.len > GK_FRAME_MAX) {
        *out = host_error(gk_printf("the run-request is %zu bytes, over the frame limit of %zu "
                                    "bytes; nothing ran",
                                    b.len, GK_FRAME_MAX));
        rc = 0;
    } else {
        rc = run_payload(b.data, b.len, o, q->timeout_ms, out);
    }
    gk_buf_free(&b);
    return rc;
}

void grant_run_result_free(grant_run_result *res)
{
    if (!res)
        return;
    gk_run_result_clear(&res->r);
    free(res);
}

grant_failure grant_run_result_failure(const grant_run_result *res)
{
    return (grant_failure)res->r.failure;
}

const char *grant_failure_name(grant_failure f)
{
    return gk_failure_name((gk_failure)f);
}

bool grant_run_result_ok(const grant_run_result *res)
{
    return res->r.failure == GK_FAIL_NONE;
}

int grant_run_result_exit_code(const grant_run_result *res)
{
    return res->r.exit_code;
}

int grant_run_result_exit_status(const grant_run_result *res)
{
    return gk_failure_status(res->r.failure, res->r.exit_code);
}

const char *grant_run_result_error_message(const grant_run_result *res)
{
    return res->r.error_message ? res->r.error_message : "";
}

const char *grant_run_result_output(const grant_run_result *res, size_t *len)
{
    if (len)
        *len = res->r.output_len;
    return res->r.output ? res->r.output : "";
}

const char *grant_run_result_error_output(const grant_run_result *res, size_t *len)
{
    if (len)
        *len = res->r.error_output_len;
    return res->r.error_output ? res->r.error_output : "";
}

bool grant_run_result_base64(const grant_run_result *res)
{
    return res->r.encoding == GK_CAPTURE_BASE64;
}

long long grant_run_result_output_truncated_bytes(const grant_run_result *res)
{
    return res->r.output_truncated;
}

long long grant_run_result_error_output_truncated_bytes(const grant_run_result *res)
{
    return res->r.error_output_truncated;
}

const char *grant_run_result_diff(const grant_run_result *res, size_t *len)
{
    if (len)
        *len = res->r.diff ? res->r.diff_len : 0;
    return res->r.diff;
}

bool grant_run_result_truncated(const grant_run_result *res)
{
    return res->r.truncated;
}

void grant_run_result_stats(const grant_run_result *res, long long *wall_ms, long long *user_ms,
                            long long *sys_ms, long long *max_rss_bytes)
{
    if (wall_ms)
        *wall_ms = res->r.wall_ms;
    if (user_ms)
        *user_ms = res->r.user_ms;
    if (sys_ms)
        *sys_ms = res->r.sys_ms;
    if (max_rss_bytes)
        *max_rss_bytes = res->r.max_rss;
}

int grant_run_result_json(const grant_run_result *res, char **out, size_t *len)
{
    if (!res || !out)
        return -EINVAL;
    gk_run_result copy = res->r; /* encode may apply the fallback: on a copy */
    copy.diff = res->r.diff ? gk_strndup(res->r.diff, res->r.diff_len) : NULL;
    copy.error_message = gk_strdup(res->r.error_message ? res->r.error_message : "");
    copy.output = gk_malloc(res->r.output_len + 1);
    memcpy(copy.output, res->r.output ? res->r.output : "", res->r.output_len + 1);
    copy.error_output = gk_malloc(res->r.error_output_len + 1);
    memcpy(copy.error_output, res->r.error_output ? res->r.error_output : "",
           res->r.error_output_len + 1);
    gk_buf b = {0};
    gk_run_result_encode(&copy, GK_FRAME_MAX, &b);
    free(copy.diff);
    free(copy.error_message);
    free(copy.output);
    free(copy.error_output);
    *out = gk_buf_steal(&b, len);
    return 0;
}
