/* seccomp.h - the two seccomp filters of the Linux envelope (backends.md,
 * "seccomp"), built with libseccomp and exported as classic BPF.
 *
 * The main filter goes to bwrap (--seccomp FD) and is in force from the
 * helper on; the mount filter is handed to the helper, which loads it
 * after its own remounts, just before exec.
 *
 * Ownership: each function returns a new descriptor (a sealed-size memfd
 * at offset 0 holding the program) that the caller closes.
 */
#ifndef GK_SECCOMP_H
#define GK_SECCOMP_H

#include <stdbool.h>

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
