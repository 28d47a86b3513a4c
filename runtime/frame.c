/* frame.c - length-prefixed frames and the failure taxonomy (see frame.h). */
#include "runtime/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gk_frame_prefix(unsigned char out[4], size_t len)
{
    out[0] = (unsigned char)(len >> 24);
    out[1] = (unsigned char)(len >> 16);
    out[2] = (unsigned char)(len >> 8);
    out[3] = (unsigned char)len;
}

void gk_frame_reader_init(gk_frame_reader *r, size_t max)
{
    memset(r, 0, sizeof(*r));
    r->max = max;
}

void gk_frame_reader_free(gk_frame_reader *r)
{
    free(r->payload);
    r->payload = NULL;
}

ssize_t gk_frame_reader_step(gk_frame_reader *r, int fd)
{
    ssize_t n;
    if (r->state == GK_FRAME_PREFIX) {
        n = read(fd, r->prefix + r->got, 4 - r->got);
        if (n <= 0)
            return n < 0 ? -errno : 0;
        r->got += (size_t)n;
        if (r->got < 4)
            return n;
        r->declared = (uint32_t)r->prefix[0] << 24 | (uint32_t)r->prefix[1] << 16 |
                      (uint32_t)r->prefix[2] << 8 | r->prefix[3];
        r->got = 0;
        /* The length is judged before it sizes anything. */
        if (r->declared == 0)
            r->state = GK_FRAME_ZERO;
        else if (r->declared > r->max)
            r->state = GK_FRAME_OVERSIZE;
        else {
            r->payload = gk_malloc((size_t)r->declared + 1);
            gk_advise_large(r->payload, (size_t)r->declared + 1);
            r->state = GK_FRAME_PAYLOAD;
        }
        return n;
    }
    if (r->state != GK_FRAME_PAYLOAD)
        return 0;
    n = read(fd, r->payload + r->got, r->declared - r->got);
    if (n <= 0)
        return n < 0 ? -errno : 0;
    r->got += (size_t)n;
    if (r->got == r->declared) {
        r->payload[r->got] = '\0';
        r->state = GK_FRAME_DONE;
    }
    return n;
}

char *gk_frame_reader_take(gk_frame_reader *r, size_t *len)
{
    if (r->state != GK_FRAME_DONE)
        return NULL;
    if (len)
        *len = r->declared;
    return gk_steal(&r->payload);
}

char *gk_frame_reader_why(const gk_frame_reader *r)
{
    switch (r->state) {
    case GK_FRAME_PREFIX:
        return r->got == 0 ? gk_strdup("EOF before any frame")
                           : gk_printf("EOF after %zu of the 4 bytes of the length prefix",
                                       r->got);
    case GK_FRAME_PAYLOAD:
        return gk_printf("EOF after %zu of the %u bytes of the frame's payload", r->got,
                         r->declared);
    case GK_FRAME_ZERO:
        return gk_strdup("a zero-length frame (invalid)");
    case GK_FRAME_OVERSIZE:
        return gk_printf("a frame declaring %u bytes, over the limit of %zu", r->declared,
                         r->max);
    case GK_FRAME_DONE:
        break;
    }
    return gk_strdup("a complete frame");
}

int gk_frame_read(int fd, size_t max, char **payload, size_t *len, char **err)
{
    gk_frame_reader r;
    gk_frame_reader_init(&r, max);
    while (r.state == GK_FRAME_PREFIX || r.state == GK_FRAME_PAYLOAD) {
        ssize_t n = gk_frame_reader_step(&r, fd);
        if (n == -EINTR)
            continue;
        if (n < 0) {
            gk_frame_reader_free(&r);
            if (err)
                *err = gk_printf("cannot read the frame: %s", strerror((int)-n));
            return (int)n;
        }
        if (n == 0)
            break;
    }
    if (r.state != GK_FRAME_DONE) {
        if (err)
            *err = gk_frame_reader_why(&r);
        gk_frame_reader_free(&r);
        return -EPROTO;
    }
    *payload = gk_frame_reader_take(&r, len);
    return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EIO;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int gk_frame_write(int fd, const char *payload, size_t len, size_t max)
{
    if (len == 0 || len > max || len > UINT32_MAX)
        return -EMSGSIZE;
    unsigned char prefix[4];
    gk_frame_prefix(prefix, len);
    int rc = write_all(fd, (const char *)prefix, 4);
    return rc < 0 ? rc : write_all(fd, payload, len);
}

/* ---- the taxonomy */

static const char *const failure_names[] = {
    [GK_FAIL_NONE] = "none",         [GK_FAIL_SCRIPT] = "script-error",
    [GK_FAIL_RESOURCE] = "resource-limit", [GK_FAIL_TIMEOUT] = "timeout",
    [GK_FAIL_HOST] = "host-error",   [GK_FAIL_CRASH] = "child-process-crash",
};

const char *gk_failure_name(gk_failure f)
{
    return (unsigned)f < sizeof(failure_names) / sizeof(*failure_names) ? failure_names[f]
                                                                           : "host-error";
}

int gk_failure_parse(const char *s, gk_failure *out)
{
    for (size_t i = 0; i < sizeof(failure_names) / sizeof(*failure_names); i++)
        if (strcmp(s, failure_names[i]) == 0) {
            *out = (gk_failure)i;
            return 0;
        }
    return -EINVAL;
}

int gk_failure_status(gk_failure f, int exit_code)
{
    switch (f) {
    case GK_FAIL_NONE:
        return 0;
    case GK_FAIL_SCRIPT:
        return exit_code >= 0 ? exit_code : 125;
    case GK_FAIL_TIMEOUT:
        return 124;
    case GK_FAIL_RESOURCE:
        return exit_code >= 0 ? exit_code : 125;
    case GK_FAIL_HOST:
    case GK_FAIL_CRASH:
        break;
    }
    return 125;
}
