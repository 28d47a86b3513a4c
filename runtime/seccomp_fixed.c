/* seccomp_fixed.c - the envelope's seccomp filters as grantrun serves them
 * (see seccomp.h): the precompiled programs of the generated
 * seccomp_filters.h (runtime/seccomp_gen.c runs the libseccomp builder of
 * seccomp.c at build time), each copied into a sealed memfd. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/seccomp.h"
#include "common/util.h"
#include "runtime/seccomp_filters.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

static int filter_fd(const unsigned char *prog, size_t len)
{
    return gk_memfd_with("grantkit-seccomp", prog, len, true);
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
