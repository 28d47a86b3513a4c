/* emit.c - grant_emit: build the projection once and hand it to the
 * backend's emitter. */
#include "backends/backend.h"
#include "ir/ir.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    grant_backend backend;
    const char *default_format;
    int (*emit)(const gk_emit_input *, grant_diags *, gk_buf *);
} backends[] = {
    {"bwrap", GRANT_BACKEND_BWRAP, "shell", gk_emit_bwrap},
    {"seatbelt", GRANT_BACKEND_SEATBELT, "sbpl", gk_emit_seatbelt},
    {"appcontainer", GRANT_BACKEND_APPCONTAINER, "json", gk_emit_appcontainer},
    {"landlock", GRANT_BACKEND_LANDLOCK, "json", gk_emit_landlock},
};

int grant_backend_from_name(const char *name, grant_backend *out)
{
    for (size_t i = 0; i < sizeof(backends) / sizeof(*backends); i++)
        if (name && strcmp(name, backends[i].name) == 0) {
            *out = backends[i].backend;
            return 0;
        }
    return -EINVAL;
}

char *gk_policy_digest(const grant_policy *p)
{
    size_t len = 0;
    /* The projection derives from context, layers and sources: hashing it
     * too would only cost time. */
    gk_autofree char *ir = gk_ir_policy_core(p, &len);
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, len, (const uint8_t *)ir);
    sha256_digest(&h, sizeof(d), d);
    char *hex = gk_malloc(2 * sizeof(d) + 1);
    for (size_t i = 0; i < sizeof(d); i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return hex;
}

int grant_emit(const grant_policy *p, grant_backend backend, const char *format,
               grant_diags *notes, char **out, size_t *len)
{
    if (!p || !out)
        return -EINVAL;
    *out = NULL;
    for (size_t i = 0; i < sizeof(backends) / sizeof(*backends); i++) {
        if (backends[i].backend != backend)
            continue;
        gk_projection *proj = gk_projection_build(p);
        gk_emit_input in = {p, proj, format ? format : backends[i].default_format, NULL};
        gk_buf b = {0};
        grant_diags *scratch = notes ? NULL : grant_diags_new();
        int rc = backends[i].emit(&in, notes ? notes : scratch, &b);
        grant_diags_free(scratch);
        gk_projection_free(proj);
        if (rc < 0) {
            gk_buf_free(&b);
            return rc;
        }
        if (!b.data)
            gk_buf_puts(&b, "");
        *out = gk_buf_steal(&b, len);
        return 0;
    }
    return -EINVAL;
}
