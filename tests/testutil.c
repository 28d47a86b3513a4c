/* testutil.c - helpers shared by the Check suites. */
#include "testutil.h"

#include <pwd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *gk_test_srcdir(void)
{
    const char *s = getenv("GK_SRCDIR");
    return s && *s ? s : "/work/main";
}

const char *gk_test_builddir(void)
{
    const char *s = getenv("GK_BUILDDIR");
    return s && *s ? s : gk_test_srcdir();
}

char *gk_test_path(const char *rel)
{
    return gk_path_join(gk_test_srcdir(), rel);
}

char *gk_test_read(const char *path, size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    if (gk_read_file(path, &out, &n) < 0)
        return NULL;
    if (len)
        *len = n;
    return out;
}

static void walk(const char *dir, const char *suffix, gk_strvec *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = gk_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            walk(p, suffix, out);
        else if (gk_has_suffix(e->d_name, suffix))
            gk_strvec_push(out, p);
        free(p);
    }
    closedir(d);
}

gk_strvec gk_test_files(const char *dir, const char *suffix)
{
    gk_strvec v = {0};
    walk(dir, suffix, &v);
    gk_strvec_sort_unique(&v);
    return v;
}

grant_context *gk_test_context_linux(void)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, "/home/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, "/w"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, "/tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, "/usr/bin:/bin"), 0);
    char *pp = gk_test_path("tests/data/policy-path");
    ck_assert_int_eq(grant_context_set_policy_path(ctx, pp), 0);
    free(pp);
    return ctx;
}

char *gk_test_render_diags(const grant_diags *d)
{
    gk_buf b = {0};
    for (size_t i = 0; i < grant_diags_count(d); i++) {
        char *r = grant_diags_render(d, i);
        if (i)
            gk_buf_putc(&b, '\n');
        gk_buf_puts(&b, r);
        free(r);
    }
    if (!b.data)
        return gk_strdup("");
    return gk_buf_steal(&b, NULL);
}

int gk_test_run(char *const argv[], const char *stdin_data, char **out, char **err)
{
    int in[2], o[2], e[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(o[1], 1);
        dup2(e[1], 2);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(o[1]);
    close(e[1]);
    signal(SIGPIPE, SIG_IGN);
    size_t inlen = stdin_data ? strlen(stdin_data) : 0, inoff = 0;
    if (!inlen) {
        close(in[1]);
        in[1] = -1;
    }
    gk_buf bo = {0}, be = {0};
    int open_fds = 2;
    while (open_fds > 0 || in[1] >= 0) {
        struct pollfd p[3] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                char buf[4096];
                ssize_t r = read(p[i].fd, buf, sizeof(buf));
                if (r > 0) {
                    gk_buf_add(i == 0 ? &bo : &be, buf, (size_t)r);
                } else {
                    close(p[i].fd);
                    if (i == 0)
                        o[0] = -1;
                    else
                        e[0] = -1;
                    open_fds--;
                }
            }
        }
        if (in[1] >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in[1], stdin_data + inoff, inlen - inoff);
            if (w > 0)
                inoff += (size_t)w;
            if (w < 0 || inoff == inlen) {
                close(in[1]);
                in[1] = -1;
            }
        }
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!bo.data)
        gk_buf_puts(&bo, "");
    if (!be.data)
        gk_buf_puts(&be, "");
    if (out)
        *out = gk_buf_steal(&bo, NULL);
    else
        gk_buf_free(&bo);
    if (err)
        *err = gk_buf_steal(&be, NULL);
    else
        gk_buf_free(&be);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int gk_test_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void gk_test_write(const char *path, const char *text, unsigned mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
    ck_assert_msg(fd >= 0, "cannot create %s: %s", path, strerror(errno));
    size_t len = strlen(text);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    ck_assert_int_eq(fchmod(fd, (mode_t)mode), 0);
    close(fd);
}

bool gk_test_regen(void)
{
    const char *r = getenv("GK_REGEN");
    return r && strcmp(r, "1") == 0;
}

void gk_test_golden(const char *path, const char *got, size_t len)
{
    if (gk_test_regen()) {
        if (!got) {
            ck_assert_msg(unlink(path) == 0 || errno == ENOENT, "cannot remove %s: %s", path,
                          strerror(errno));
            return;
        }
        gk_autofree char *dir = gk_path_parent(path);
        if (dir)
            mkdir(dir, 0777);
        int rc = gk_write_file_atomic(path, got, len);
        ck_assert_msg(rc == 0, "cannot write %s: %s", path, strerror(-rc));
        return;
    }
    size_t wlen = 0;
    gk_autofree char *want = gk_test_read(path, &wlen);
    if (!got) {
        ck_assert_msg(want == NULL, "%s should not exist (run with GK_REGEN=1)", path);
        return;
    }
    ck_assert_msg(want != NULL, "missing golden %s (run with GK_REGEN=1)", path);
    /* By length: outputs may hold NULs (argv0), and an empty file's buffer
     * is not terminated (gk_read_file). */
    size_t i = 0, line = 1;
    while (i < len && i < wlen && got[i] == want[i])
        line += got[i++] == '\n';
    if (i == len && i == wlen)
        return;
    size_t from = i > 60 ? i - 60 : 0;
    int gn = (int)(len - from < 160 ? len - from : 160);
    int wn = (int)(wlen - from < 160 ? wlen - from : 160);
    ck_abort_msg("%s differs at line %zu (byte %zu; %zu bytes, golden %zu):\n"
                 " got: ...%.*s\nwant: ...%.*s",
                 path, line, i, len, wlen, gn, got + from, wn, want + from);
}

void gk_test_golden_text(const char *path, const char *got)
{
    gk_test_golden(path, got, got ? strlen(got) : 0);
}

bool gk_test_user(uid_t *uid, gid_t *gid)
{
    if (geteuid() != 0) {
        *uid = geteuid();
        *gid = getegid();
        return true;
    }
    struct passwd *pw = getpwnam(GK_TEST_USER);
    if (!pw && system("useradd --system --no-create-home --shell /usr/sbin/nologin " GK_TEST_USER
                      " >/dev/null 2>&1") == 0)
        pw = getpwnam(GK_TEST_USER);
    if (!pw)
        return false;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return true;
}

void gk_test_copy(const char *from, const char *to, unsigned mode)
{
    size_t len = 0;
    char *data = gk_test_read(from, &len);
    ck_assert_msg(data, "cannot read %s", from);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
    ck_assert_msg(fd >= 0, "cannot create %s: %s", to, strerror(errno));
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    ck_assert_int_eq(fchmod(fd, (mode_t)mode), 0);
    close(fd);
    free(data);
}

void gk_test_setpriv(gk_strvec *v, uid_t uid, gid_t gid)
{
    gk_strvec_push(v, "/usr/bin/setpriv");
    gk_strvec_push_take(v, gk_printf("--reuid=%u", (unsigned)uid));
    gk_strvec_push_take(v, gk_printf("--regid=%u", (unsigned)gid));
    gk_strvec_push(v, "--clear-groups");
    gk_strvec_push(v, "--");
}
