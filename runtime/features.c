/* features.c - probe what the host offers the envelope (features.h). */
#include "runtime/features.h"
#include "runtime/syscalls.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GK_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)

extern char **environ;

static long read_long(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

static char *find_on_path(const char *name, const char *path_env)
{
    gk_autofree char *copy = gk_strdup(path_env ? path_env : "");
    char *save = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue; /* the gate's walk: absolute entries only */
        char *p = gk_path_join(d, name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

/* The first line bwrap --version prints, or NULL. */
static char *bwrap_version(const char *bwrap)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)bwrap, "--version", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, bwrap, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return NULL;
    }
    char buf[256];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(pipefd[0], buf + n, sizeof buf - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n == sizeof buf - 1)
            break;
    }
    close(pipefd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !buf[0])
        return NULL;
    return gk_strdup(buf);
}

void gk_host_features_probe(const char *bwrap, const char *path_env, gk_host_features *out)
{
    memset(out, 0, sizeof *out);
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, GK_LANDLOCK_CREATE_RULESET_VERSION);
    out->landlock_abi = abi >= 1 ? (int)abi : -errno;
    /* PR_GET_SECCOMP answers when the kernel has seccomp; actions_avail
     * exists when it also takes filters (CONFIG_SECCOMP_FILTER). */
    out->seccomp_filter =
        prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && access("/proc/sys/kernel/seccomp/actions_avail", F_OK) == 0;
    const struct scmp_version *v = seccomp_version();
    if (v)
        out->libseccomp = gk_printf("%u.%u.%u", v->major, v->minor, v->micro);
    out->bwrap = bwrap ? gk_strdup(bwrap) : find_on_path("bwrap", path_env);
    if (out->bwrap)
        out->bwrap_version = bwrap_version(out->bwrap);
    out->max_userns = read_long("/proc/sys/user/max_user_namespaces");
    long u = read_long("/proc/sys/kernel/unprivileged_userns_clone");
    out->unpriv_userns = u < 0 ? -1 : u != 0;
}

void gk_host_features_clear(gk_host_features *f)
{
    free(f->libseccomp);
    free(f->bwrap);
    free(f->bwrap_version);
    memset(f, 0, sizeof *f);
}
