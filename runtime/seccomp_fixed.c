/* seccomp_fixed.c - the envelope's seccomp filters as grantrun serves them
 * (see seccomp.h): the precompiled programs of the generated
 * seccomp_filters.h (runtime/seccomp_gen.c runs the libseccomp builder of
 * seccomp.c at build time), each copied into a sealed memfd. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/seccomp.h"
#include "runtime/seccomp_filters.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

static int filter_fd(const unsigned char *prog, size_t len)
{
    int fd = memfd_create("grantkit-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, prog + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? -errno : -EIO;
            close(fd);
            return err;
        }
        off += (size_t)w;
    }
    if (lseek(fd, 0, SEEK_SET) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

int gk_seccomp_main_fd(bool net, bool exec_restricted)
{
    if (net)
        return exec_restricted
                   ? filter_fd(gk_filter_main_net_noexec, sizeof(gk_filter_main_net_noexec))
                   : filter_fd(gk_filter_main_net_exec, sizeof(gk_filter_main_net_exec));
    return exec_restricted
               ? filter_fd(gk_filter_main_nonet_noexec, sizeof(gk_filter_main_nonet_noexec))
               : filter_fd(gk_filter_main_nonet_exec, sizeof(gk_filter_main_nonet_exec));
}

int gk_seccomp_mount_fd(void)
{
    return filter_fd(gk_filter_mount, sizeof(gk_filter_mount));
}
