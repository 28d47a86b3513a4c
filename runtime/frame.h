/* frame.h - the frame protocol of frame-protocol.md: length-prefixed JSON
 * frames (§2), the run-request and run-result documents (§3) with their
 * strict validation and their per-field budgets (§3c), and the failure
 * taxonomy (§4). The supervisor (the parent side, supervise.c) and the
 * child (frame_child.c) are built on these; grant.h's run API wraps them.
 *
 * Framing: a 4-byte big-endian payload length, then the payload (one
 * UTF-8 JSON object). A declared length above the cap (GK_FRAME_MAX,
 * 64 MiB) is refused before anything is allocated; a zero length is an
 * invalid frame. Reads and writes move exact byte counts, retrying EINTR.
 *
 * Ownership: a gk_frame_reader owns its payload until gk_frame_reader_take
 * hands it over; a gk_run_request / gk_run_result owns every string and
 * list in it (gk_run_request_clear / gk_run_result_clear). Every error
 * message handed back through char **err is malloc'd and the caller's.
 */
#ifndef GK_FRAME_H
#define GK_FRAME_H

#include <stdint.h>
#include <sys/types.h>

#include "common/util.h"
#include "runtime/scratch.h"

#define GK_FRAME_VERSION 1
#define GK_FRAME_MAX ((size_t)67108864)

/* §3c: limits on each field's JSON-escaped encoding. */
#define GK_BUDGET_OUTPUT ((size_t)16 << 20)
#define GK_BUDGET_ERROR_OUTPUT ((size_t)8 << 20)
#define GK_BUDGET_DIFF ((size_t)24 << 20)
#define GK_BUDGET_MESSAGE ((size_t)64 << 10)

/* ---- frames */

typedef enum gk_frame_state {
    GK_FRAME_PREFIX = 0,   /* reading the length (got < 4 bytes) */
    GK_FRAME_PAYLOAD,      /* reading the payload */
    GK_FRAME_DONE,         /* one whole frame */
    GK_FRAME_ZERO,         /* declared length 0: invalid */
    GK_FRAME_OVERSIZE,     /* declared length above max: nothing allocated */
} gk_frame_state;

typedef struct gk_frame_reader {
    gk_frame_state state;
    size_t max;            /* the cap for this reader (GK_FRAME_MAX) */
    unsigned char prefix[4];
    size_t got;            /* bytes of the current part (prefix or payload) */
    uint32_t declared;
    char *payload;         /* declared + 1 bytes, NUL-terminated once DONE */
} gk_frame_reader;

GK_HIDDEN void gk_frame_reader_init(gk_frame_reader *r, size_t max);
/* One read(2) of what the frame still needs (never past its end). Returns
 * the bytes read (> 0), 0 at EOF, or -errno (EINTR and EAGAIN included:
 * the caller decides). The state moves to DONE, ZERO or OVERSIZE. */
GK_HIDDEN ssize_t gk_frame_reader_step(gk_frame_reader *r, int fd);
/* The payload of a DONE reader (the caller's, NUL-terminated). */
GK_HIDDEN char *gk_frame_reader_take(gk_frame_reader *r, size_t *len);
GK_HIDDEN void gk_frame_reader_free(gk_frame_reader *r);
/* Why a reader that stopped (EOF or a bad length) gave no frame, as a
 * sentence ("EOF after 2 of the 4 bytes of the length prefix"). */
GK_HIDDEN char *gk_frame_reader_why(const gk_frame_reader *r);

/* Blocking: read exactly one frame from fd (EINTR retried). 0 with
 * *payload; -EPROTO (a bad or incomplete frame: *err says why) or -errno. */
GK_HIDDEN int gk_frame_read(int fd, size_t max, char **payload, size_t *len, char **err);
/* Blocking: write prefix and payload whole (EINTR retried). -EMSGSIZE when
 * len is 0 or above max; else 0 or -errno. */
GK_HIDDEN int gk_frame_write(int fd, const char *payload, size_t len, size_t max);
/* The 4-byte prefix of a payload of len bytes. */
GK_HIDDEN void gk_frame_prefix(unsigned char out[4], size_t len);

/* ---- the taxonomy (§4) */

typedef enum gk_failure {
    GK_FAIL_NONE = 0,
    GK_FAIL_SCRIPT,
    GK_FAIL_RESOURCE,
    GK_FAIL_TIMEOUT,
    GK_FAIL_HOST,
    GK_FAIL_CRASH,
} gk_failure;

GK_HIDDEN const char *gk_failure_name(gk_failure f);  /* "script-error" */
GK_HIDDEN int gk_failure_parse(const char *s, gk_failure *out);
/* grantrun's exit status in process mode (§4). exit_code < 0: none. */
GK_HIDDEN int gk_failure_status(gk_failure f, int exit_code);

/* ---- run-request (§3a) */

typedef enum gk_capture { GK_CAPTURE_UTF8 = 0, GK_CAPTURE_BASE64 } gk_capture;

typedef struct gk_run_request {
    gk_strvec argv;
    gk_strvec env;            /* NAME=VALUE, in the request's order */
    char *cwd;                /* NULL: baseline.root, else "/" */
    char *policy;             /* the policy object, compact JSON */
    long long timeout_ms, max_memory, max_processes, cpu_seconds;
    long long fs_quota, fs_nodes;
    bool include_diff, diff_metadata;
    gk_diff_format diff_format;
    gk_capture capture;
    char *level;              /* "auto" | "namespaces" | "landlock" */
    bool allow_degraded;
    char *root;               /* NULL: no scratch tree */
    gk_scratch_list files;
} gk_run_request;

#define GK_DEFAULT_FS_QUOTA 16777216LL
#define GK_DEFAULT_FS_NODES 4096LL

/* Defaults of §3a (empty argv, env and policy: fill them). */
GK_HIDDEN void gk_run_request_init(gk_run_request *r);
GK_HIDDEN void gk_run_request_clear(gk_run_request *r);
/* Strict: v checked first (another version: -EPROTONOSUPPORT, naming
 * both), then type, then every field (an unknown one is named); baseline
 * checked with gk_scratch_validate. 0, or -errno with *err. */
GK_HIDDEN int gk_run_request_parse(const char *payload, size_t len, gk_run_request *out,
                                   char **err);
/* The payload (one JSON object, written with common/json.h). */
GK_HIDDEN void gk_run_request_encode(const gk_run_request *r, gk_buf *out);

/* ---- run-result (§3b) */

typedef struct gk_run_result {
    gk_failure failure;
    int exit_code;            /* -1: null (the command never ran) */
    char *error_message;      /* never NULL after a parse or a build */
    /* output/error_output: the field's text as it goes on the wire (utf8:
     * bytes, cut, with the marker; base64: the base64 text). */
    char *output, *error_output;
    size_t output_len, error_output_len;
    gk_capture encoding;
    bool diff_requested;
    char *diff;               /* NULL: null */
    size_t diff_len;
    bool truncated;
    long long output_truncated, error_output_truncated;
    long long wall_ms, user_ms, sys_ms, max_rss;
    char *level;              /* enforcement.level; NULL: enforcement null */
    gk_strvec unenforced;
    char *network;            /* the network member as compact JSON; NULL: null */
} gk_run_result;

GK_HIDDEN void gk_run_result_init(gk_run_result *r);
GK_HIDDEN void gk_run_result_clear(gk_run_result *r);
/* A result that says only failure and message (a failure before the
 * command ran): exit_code null, enforcement and network null. */
GK_HIDDEN void gk_run_result_fail(gk_run_result *r, gk_failure f, char *message);
/* Strict, as the request: 0; -EPROTONOSUPPORT for another v (host-error
 * in the parent); -EPROTO for anything else invalid. *err says why. */
GK_HIDDEN int gk_run_result_parse(const char *payload, size_t len, gk_run_result *out,
                                  char **err);
/* Encode, then re-check the whole frame against max; when it overflows,
 * the fallback of §3c: diff null, errorMessage cut to its limit,
 * truncated true (in that order, each only while still too large). */
GK_HIDDEN void gk_run_result_encode(gk_run_result *r, size_t max, gk_buf *out);

/* §3c cuts of captured bytes into a result field. Returns the field's
 * wire text (utf8: a prefix plus the marker when cut; base64: the base64
 * of a prefix of whole 3-byte groups) and stores in *omitted the raw
 * bytes left out of total (total >= len: bytes counted but not kept). */
GK_HIDDEN char *gk_capture_cut(const char *raw, size_t len, uint64_t total, gk_capture enc,
                               size_t budget, size_t *out_len, long long *omitted);
/* The same rule for a message: cut to budget with the marker. */
GK_HIDDEN char *gk_message_cut(const char *s, size_t budget);

#endif
