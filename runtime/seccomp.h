/* seccomp.h - the two seccomp filters of the Linux envelope (backends.md,
 * "seccomp"), built with libseccomp and exported as classic BPF.
 *
 * The main filter goes to bwrap (--seccomp FD) and is in force from the
 * helper on; the mount filter is handed to the helper, which loads it
 * after its own remounts, just before exec.
 *
 * The filters are constants per architecture and setting, so they are
 * built once, when grantkit is built (seccomp_gen.c, seccomp_fixed.c).
 *
 * Ownership: each function returns a new descriptor (a sealed-size memfd
 * at offset 0 holding the program) that the caller closes.
 */
#ifndef GK_SECCOMP_H
#define GK_SECCOMP_H

#include <stdbool.h>

/* seccomp.c is the libseccomp builder, compiled only into the build step
 * runtime/gen-seccomp and the test that holds the precompiled filters to
 * it, where its functions are named gk_seccomp_build_* (GK_SECCOMP_BUILDER);
 * everything else gets the precompiled programs (seccomp_fixed.c). */
#ifdef GK_SECCOMP_BUILDER
#define gk_seccomp_main_fd gk_seccomp_build_main_fd
#define gk_seccomp_mount_fd gk_seccomp_build_mount_fd
#endif

/* Deny ptrace, process_vm_*, kexec_*, perf_event_open, bpf, the key
 * syscalls, userfaultfd, io_uring_*, personality other than PER_LINUX and
 * the query, ioctl TIOCSTI/TIOCLINUX, new user namespaces (unshare and
 * clone with CLONE_NEWUSER; clone3 answers ENOSYS); socket() but AF_UNIX
 * when !net; a setuid or setgid bit in chmod, fchmod, fchmodat(2), mknod(at),
 * creat and creating open(at) (openat2 answers ENOSYS); when exec_restricted,
 * memfd_create and memfd_secret, which answer ENOSYS (fileless exec).
 * Foreign ABIs (i386, x32) kill the process. fd or -errno. */
int gk_seccomp_main_fd(bool net, bool exec_restricted);
/* Deny mount, umount2, pivot_root, move_mount, fsopen, fsmount,
 * open_tree, mount_setattr. fd or -errno. */
int gk_seccomp_mount_fd(void);

#endif
