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
#include <sys/stat.h>
#include <unistd.h>

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
 * execveat), and MFD_NOEXEC_SEAL stops only execve, not the ELF loader's
 * mmap(PROT_EXEC) of /proc/self/fd/N. So no memfd at all: ENOSYS, which
 * programs take for an old kernel and fall back to a file (in /dev/shm or
 * /tmp, both noexec). memfd_secret likewise. */
static int deny_exec_memfd(scmp_filter_ctx ctx)
{
    static const char *const names[] = {"memfd_create", "memfd_secret"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        int nr = seccomp_syscall_resolve_name(names[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* No setuid or setgid bit on anything the command makes or changes:
 * under a root caller its uid 0 is the host's on every write bind. Every
 * call that sets a mode: chmod, fchmod, fchmodat(2), mknod(at), creat,
 * and open(at) when it creates (O_CREAT, O_TMPFILE). openat2 keeps its
 * mode in memory, out of the filter's reach: ENOSYS, as for clone3 (libc
 * does not use it). File capabilities need CAP_SETFCAP, which the helper
 * drops. A syscall this architecture lacks is skipped. */
static int deny_setid_mode(scmp_filter_ctx ctx, const char *name, int nr, unsigned mode_arg,
                           int flags_arg)
{
    int known = seccomp_syscall_resolve_name(name);
    if (known != __NR_SCMP_ERROR)
        nr = known;
    if (nr < 0)
        return 0;
    static const uint64_t bits[] = {S_ISUID, S_ISGID};
    static const uint64_t creating[] = {O_CREAT, O_TMPFILE & ~O_DIRECTORY};
    for (size_t b = 0; b < 2; b++) {
        struct scmp_arg_cmp mode = {mode_arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]};
        for (size_t c = 0; c < (flags_arg < 0 ? 1 : 2); c++) {
            struct scmp_arg_cmp flags = {(unsigned)flags_arg, SCMP_CMP_MASKED_EQ, creating[c],
                                         creating[c]};
            int rc = flags_arg < 0
                         ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, mode)
                         : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, flags, mode);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int deny_setid_modes(scmp_filter_ctx ctx)
{
    static const struct {
        const char *name;
        int nr; /* if libseccomp does not know it (fchmodat2: Linux 6.6, every ABI) */
        unsigned mode;
        int flags;
    } calls[] = {
        {"chmod", -1, 1, -1},  {"fchmod", -1, 1, -1}, {"fchmodat", -1, 2, -1},
        {"fchmodat2", 452, 2, -1}, {"mknod", -1, 1, -1}, {"mknodat", -1, 2, -1},
        {"creat", -1, 1, -1},  {"open", -1, 2, 1},    {"openat", -1, 3, 2},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
        int rc = deny_setid_mode(ctx, calls[i].name, calls[i].nr, calls[i].mode, calls[i].flags);
        if (rc < 0)
            return rc;
    }
    int nr = seccomp_syscall_resolve_name("openat2");
    return nr == __NR_SCMP_ERROR ? 0 : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
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
    /* The virtual console's keyboard, font and switching requests (KD*
     * 0x4Bxx, VT_* 0x56xx): with --tty on a Linux console a command could
     * rebind a key (KDSKBSENT) to type a command for the user after the
     * run, which outlives the envelope as TIOCSTI would. No program a
     * policy runs needs them. */
    static const uint32_t console_groups[] = {0x4B00, 0x5600};
    for (size_t i = 0; rc == 0 && i < sizeof(console_groups) / sizeof(*console_groups); i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xFFFFFF00u, console_groups[i]));
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
    if (rc == 0)
        rc = deny_setid_modes(ctx);
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
