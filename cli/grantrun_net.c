/* grantrun_net.c - a run's network decisions, printed and reported (see
 * grantrun_net.h). */
#include "grantrun_net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "common/json.h"

void grantrun_net_print_refusals(const gk_net_log *log)
{
    for (size_t i = 0; log && i < log->n; i++) {
        const gk_net_record *r = &log->v[i];
        if (r->allowed)
            continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !log->v[k].allowed && log->v[k].port == r->port &&
                   strcmp(log->v[k].host, r->host) == 0;
        if (seen)
            continue;
        bool v6 = strchr(r->host, ':') != NULL;
        cli_error("net: refused %s%s%s:%u (%s)", v6 ? "[" : "", r->host, v6 ? "]" : "", r->port,
                  r->rule && *r->rule ? r->rule : "no allow rule matches");
    }
    if (log && log->ended)
        cli_error("net: the proxy ended during the run (%s %d): connections made after that "
                  "failed",
                  WIFSIGNALED(log->ended) ? "signal" : "exit status",
                  WIFSIGNALED(log->ended) ? WTERMSIG(log->ended) : WEXITSTATUS(log->ended));
    if (log && log->omitted)
        cli_error("net: %llu more decisions were not recorded (at most %d are)", log->omitted,
                  GK_NET_RECORDS);
}

bool grantrun_net_report_writable(const char *path)
{
    gk_autofree char *dir = gk_path_parent(path);
    struct stat st;
    const char *where = dir && *dir ? dir : ".";
    if (!*path || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        cli_error("--report %s: not a file name; nothing ran", path);
        return false;
    }
    errno = 0;
    if (stat(where, &st) < 0 || !S_ISDIR(st.st_mode) || access(where, W_OK | X_OK) < 0) {
        cli_error("--report %s: cannot write in %s: %s; nothing ran", path, where,
                  strerror(errno ? errno : ENOTDIR));
        return false;
    }
    return true;
}

int grantrun_net_write_report(const char *path, const char *record, const gk_net_log *log)
{
    gk_buf net = {0};
    gk_json_out j;
    gk_json_init(&j, &net, false);
    if (log)
        gk_net_log_json(log, &j);
    else
        gk_json_null(&j);
    gk_buf b = {0};
    /* The record is one object: its members, then "network". */
    size_t n = record ? strlen(record) : 0;
    while (n && (record[n - 1] == '\n' || record[n - 1] == ' '))
        n--;
    if (n >= 2 && record[0] == '{' && record[n - 1] == '}') {
        gk_buf_add(&b, record, n - 1);
        gk_buf_puts(&b, n > 2 ? ",\"network\":" : "\"network\":");
    } else {
        gk_buf_puts(&b, "{\"network\":");
    }
    gk_buf_add(&b, net.data ? net.data : "null", net.data ? net.len : 4);
    gk_buf_puts(&b, "}\n");
    int rc = gk_write_file_atomic(path, b.data, b.len);
    gk_buf_free(&b);
    gk_buf_free(&net);
    return rc;
}
