/* nomount.c - run a command where user namespaces can be made but nothing
 * can be mounted in them, as on Ubuntu 24.04 with
 * apparmor_restrict_unprivileged_userns (check_level).
 *
 *   nomount [--allow] COMMAND [ARG...]
 *
 * Loads a seccomp filter (no_new_privs, raw BPF, native ABI) answering
 * EPERM to mount, umount2, pivot_root, move_mount, fsopen, fsconfig,
 * fsmount, open_tree and mount_setattr, then execs COMMAND. unshare and
 * clone stay allowed: bwrap creates its namespaces and then dies in setup.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENY(nr)                                                                    \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(int argc, char **argv)
{
    /* --allow: the same no_new_privs and one filter, refusing nothing: a
     * host that looks the same from /proc/self/status (check_level's
     * remembered probe answer) but lets mounts through */
    bool allow = argc >= 2 && strcmp(argv[1], "--allow") == 0;
    if (allow) {
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: nomount [--allow] COMMAND [ARG...]\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        DENY(SYS_mount),      DENY(SYS_umount2),  DENY(SYS_pivot_root), DENY(428 /* open_tree */),
        DENY(429 /* move_mount */), DENY(430 /* fsopen */), DENY(431 /* fsconfig */),
        DENY(432 /* fsmount */), DENY(442 /* mount_setattr */),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(*f)), f};
    if (allow)
        prog = (struct sock_fprog){1, all};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
        fprintf(stderr, "nomount: seccomp: %s\n", strerror(errno));
        return 125;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "nomount: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
