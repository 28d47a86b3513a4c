/* seccomp.c - the envelope's seccomp filters (see seccomp.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U /* Linux 6.3; Debian 12's headers lack it */
#endif

static const char *const denied[] = {
    "ptrace",          "process_vm_readv", "process_vm_writev", "kexec_load",
    "kexec_file_load", "perf_event_open",  "bpf",               "keyctl",
    "add_key",         "request_key",      "userfaultfd",       "io_uring_setup",
    "io_uring_enter",  "io_uring_register",
};

static const char *const mounting[] = {
    "mount", "umount2", "pivot_root", "move_mount", "fsopen", "fsmount", "open_tree",
    "mount_setattr",
};

/* A filter on the native ABI only: a syscall made through another ABI
 * (int 0x80, x32 numbers) kills the process. */
static scmp_filter_ctx new_filter(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx && seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0) {
        seccomp_release(ctx);
        return NULL;
    }
    return ctx;
}

static int deny_names(scmp_filter_ctx ctx, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(names[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not on this architecture */
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* personality(2) with anything but PER_LINUX (0) or the query 0xffffffff.
 * The kernel reads the argument as 32 bits, so every comparison masks the
 * full register to its low half (a value with high bits set must not slip
 * past a 32-bit comparison). libseccomp compares an argument once per
 * rule, so [1, 0xfffffffe] is covered by 62 masked-equality blocks. */
static int deny_personalities(scmp_filter_ctx ctx)
{
    for (unsigned k = 0; k < 62; k++) {
        uint64_t mask, value;
        if (k < 31) {
            /* [2^k, 2^(k+1)): bits 31..k+1 clear, bit k set. */
            mask = UINT32_MAX & ~((UINT64_C(1) << k) - 1);
            value = UINT64_C(1) << k;
        } else {
            /* Bits 31..j+1 set, bit j clear: [2^31, 2^32 - 1). */
            unsigned j = k - 31;
            mask = UINT32_MAX & ~((UINT64_C(1) << j) - 1);
            value = mask & ~(UINT64_C(1) << j);
        }
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                                  SCMP_A0_64(SCMP_CMP_MASKED_EQ, mask, value));
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int export_fd(scmp_filter_ctx ctx)
{
    int fd = memfd_create("grantkit-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0 || lseek(fd, 0, SEEK_SET) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int err = rc < 0 ? rc : -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* Fileless exec: a memfd lies on no mount the envelope shows, so neither
 * noexec nor Landlock sees an exec of it (/proc/self/fd/N, fexecve,
 * execveat). Only a memfd sealed non-executable may be made
 * (MFD_NOEXEC_SEAL; a kernel before 6.3 refuses that flag, so there none
 * can be made); memfd_secret is refused outright. */
static int deny_exec_memfd(scmp_filter_ctx ctx)
{
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, MFD_NOEXEC_SEAL, 0));
    int nr = seccomp_syscall_resolve_name("memfd_secret");
    if (rc == 0 && nr != __NR_SCMP_ERROR)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    return rc;
}

int gk_seccomp_main_fd(bool net, bool exec_restricted)
{
    scmp_filter_ctx ctx = new_filter();
    if (!ctx)
        return -ENOMEM;
    int rc = deny_names(ctx, denied, sizeof(denied) / sizeof(*denied));
    if (rc == 0)
        rc = deny_personalities(ctx);
    /* The request is an unsigned int to the kernel: match the low 32 bits
     * of the register whatever the high ones hold. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, UINT32_MAX, TIOCSTI));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, UINT32_MAX, TIOCLINUX));
    /* The whole register: AF_UNIX with high bits set is refused too (the
     * kernel would read AF_UNIX, but no program passes such a value). */
    /* No new user namespaces (what bwrap's --disable-userns does, which
     * grantrun cannot use: it moves the command into a nested user
     * namespace where the helper may no longer remount). clone3 hides its
     * flags in memory, so it reports ENOSYS and libc falls back to clone. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                              SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                              SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (rc == 0) {
        int nr = seccomp_syscall_resolve_name("clone3");
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
    }
    if (rc == 0 && exec_restricted)
        rc = deny_exec_memfd(ctx);
    if (rc == 0 && !net)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                              SCMP_A0_64(SCMP_CMP_NE, AF_UNIX));
    if (rc == 0)
        rc = export_fd(ctx);
    seccomp_release(ctx);
    return rc;
}

int gk_seccomp_mount_fd(void)
{
    scmp_filter_ctx ctx = new_filter();
    if (!ctx)
        return -ENOMEM;
    int rc = deny_names(ctx, mounting, sizeof(mounting) / sizeof(*mounting));
    if (rc == 0)
        rc = export_fd(ctx);
    seccomp_release(ctx);
    return rc;
}
