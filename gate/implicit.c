/* implicit.c - the grants every program needs on each target
 * (grant-language.md §6): read-only system paths, the private /tmp, the
 * devices. The gate adds them to its answers and the projection renders
 * them; both read them from here, so neither depends on the other. */
#include "gate/gate.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const linux_read[] = {
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/hosts", "/etc/ssl",
    "/etc/ca-certificates", "/etc/passwd", "/etc/group", "/etc/alternatives", "/etc/localtime",
};
static const char *const linux_devices[] = {"/dev/null", "/dev/zero", "/dev/random",
                                            "/dev/urandom", "/dev/tty", "/dev/shm"};
static const char *const macos_read[] = {"/usr", "/bin", "/sbin", "/System", "/Library/Apple",
                                         "/private/var/db/dyld", "/private/etc", "/dev"};
static const char *const windows_read[] = {"C:/Windows/System32", "C:/Windows/SysWOW64",
                                           "C:/Windows/WinSxS", "C:/Windows/Fonts"};

#define N(a) (sizeof(a) / sizeof(*(a)))

void gk_implicit_for(const grant_context *ctx, gk_implicit *out)
{
    memset(out, 0, sizeof(*out));
    out->target = gk_target_name(ctx);
    if (!ctx->implicit)
        return;
    bool host = !gk_target_is_offline(ctx);
    if (strcmp(out->target, "linux") == 0) {
        for (size_t i = 0; i < N(linux_read); i++) {
            struct stat st;
            /* On the host, only what exists (bwrap binds with -try). */
            if (!host || lstat(linux_read[i], &st) == 0)
                gk_strvec_push(&out->read, linux_read[i]);
        }
        gk_strvec_push(&out->write, "/tmp");
        for (size_t i = 0; i < N(linux_devices); i++)
            gk_strvec_push(&out->devices, linux_devices[i]);
        out->proc = true;
    } else if (strcmp(out->target, "macos") == 0) {
        for (size_t i = 0; i < N(macos_read); i++)
            gk_strvec_push(&out->read, macos_read[i]);
        /* The devices the Seatbelt base lets a program write (backends.md). */
        gk_strvec_push(&out->devices, "/dev/null");
        gk_strvec_push(&out->devices, "/dev/zero");
        gk_strvec_push(&out->devices, "/dev/tty");
        gk_strvec_push(&out->devices, "/dev/dtracehelper");
        gk_strvec_push(&out->devices, "/dev/ptmx");
    } else {
        for (size_t i = 0; i < N(windows_read); i++)
            gk_strvec_push(&out->read, windows_read[i]);
        gk_strvec_push(&out->devices, "NUL");
    }
    /* Offline, the implicit set is matched against canonical queries: give
     * it the target's canonical spelling (Windows: case-folded). */
    if (!host) {
        gk_strvec *lists[3] = {&out->read, &out->write, &out->devices};
        for (int l = 0; l < 3; l++)
            for (size_t i = 0; i < lists[l]->n; i++) {
                char *c = gk_canonicalize(ctx, lists[l]->v[i]);
                if (c) {
                    free(lists[l]->v[i]);
                    lists[l]->v[i] = c;
                }
            }
    }
    gk_strvec_sort_unique(&out->read);
}
