/* grantrun_frame.h - grantrun's process isolation and host mode
 * (grantrun_frame.c). Ownership: the options are borrowed. */
#ifndef GRANTRUN_FRAME_H
#define GRANTRUN_FRAME_H

#include <stdbool.h>
#include <stddef.h>

#include "grant/grant.h"

typedef struct grantrun_iso {
    char **argv;
    size_t argc;
    const char *const *env;
    const char *bwrap, *helper;
    long timeout_ms, grace_ms, memory_bytes, processes, cpu_seconds, fs_quota, fs_nodes;
    const char *root;          /* NULL: /work with seeds, else no scratch tree */
    char **seeds;
    size_t nseeds;
    int diff;                  /* 0 none, 1 json, 2 unified */
    bool diff_metadata, json;
    const char *level;         /* run.level: "auto", "namespaces", "landlock" */
    bool allow_degraded;
} grantrun_iso;

/* `grantrun --frame-child --bwrap PATH [--helper PATH]`: the child. */
int grantrun_frame_child(int argc, char **argv, const char *helper_default);
/* `grantrun frame`: one request on stdin, one result on stdout. */
int grantrun_frame_host(int argc, char **argv, const char *bwrap_found, const char *helper);
/* `grantrun --isolate process`: returns grantrun's exit status (§4). */
int grantrun_isolated(const grant_policy *policy, const grantrun_iso *o);

#endif
