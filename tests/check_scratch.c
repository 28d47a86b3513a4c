/* check_scratch.c - the scratch tree module (runtime/scratch.h) on real
 * files: the baseline rules (a table, exact messages), materialise and
 * snapshot round trips (as root and as the unprivileged test user), the
 * diff in both formats against golden files (tests/data/diff/), the line
 * diff checked by GNU patch applying it and against an LCS count, the
 * budgets, seeds, and a real tmpfs filled to its size and its inodes in
 * a user and mount namespace of a forked child (full()).
 * Trees live in temp dirs under the build dir (a project dir, not /tmp).
 */
#include "common/base64.h"
#include "common/json.h"
#include "runtime/scratch.h"
#include "runtime/scratch_int.h"
#include "testutil.h"

#include <nettle/base64.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers */

static char *temp_dir(const char *tag)
{
    char *d = gk_printf("%s/scratch-%s-XXXXXX", gk_test_builddir(), tag);
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static void rm_rf(const char *dir)
{
    /* chmod first: the trees hold 0555 dirs and 0000 files. */
    char *argv[] = {"/bin/sh", "-c", NULL, NULL};
    gk_autofree char *cmd = gk_printf("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    argv[2] = cmd;
    gk_autofree char *out = NULL, *err = NULL;
    gk_test_run(argv, NULL, &out, &err);
}

static int open_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    return fd;
}

static const gk_snap_node *find(const gk_snapshot *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].path, path) == 0)
            return &s->v[i];
    return NULL;
}

static void put(int dirfd, const char *rel, const char *text)
{
    int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    ck_assert_msg(fd >= 0, "open %s: %s", rel, strerror(errno));
    size_t n = strlen(text);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static char *golden_path(const char *name)
{
    gk_autofree char *rel = gk_printf("tests/data/diff/%s", name);
    return gk_test_path(rel);
}

/* err matches the formatted message; both are freed. */
static void expect_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void expect_err(char **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gk_autofree char *want = gk_vprintf(fmt, ap);
    va_end(ap);
    ck_assert_ptr_nonnull(*err);
    ck_assert_str_eq(*err, want);
    free(*err);
    *err = NULL;
}

/* ---- validation: one row per rule, the exact message */

typedef struct vent {
    const char *path;
    gk_scratch_kind kind;
    const char *bytes;
    int mode;
} vent;

typedef struct vrow {
    const char *name;
    vent e[4];
    uint64_t quota, nodes;
    int rc;
    const char *msg;
} vrow;

static const vrow vrows[] = {
    {"relative", {{"a", GK_SCRATCH_FILE, "x", -1}}, 0, 0, -EINVAL,
     "baseline path \"a\" does not begin with '/'"},
    {"root", {{"/", GK_SCRATCH_DIR, NULL, -1}}, 0, 0, -EINVAL,
     "baseline path \"/\" is the scratch root itself"},
    {"empty component", {{"/a//b", GK_SCRATCH_FILE, "", -1}}, 0, 0, -EINVAL,
     "baseline path \"/a//b\" has an empty component"},
    {"trailing slash", {{"/a/", GK_SCRATCH_DIR, NULL, -1}}, 0, 0, -EINVAL,
     "baseline path \"/a/\" has an empty component"},
    {"dot", {{"/a/./b", GK_SCRATCH_FILE, "", -1}}, 0, 0, -EINVAL,
     "baseline path \"/a/./b\" has a \".\" component"},
    {"dotdot", {{"/a/../b", GK_SCRATCH_FILE, "", -1}}, 0, 0, -EINVAL,
     "baseline path \"/a/../b\" has a \"..\" component"},
    {"dotdot first", {{"/..", GK_SCRATCH_DIR, NULL, -1}}, 0, 0, -EINVAL,
     "baseline path \"/..\" has a \"..\" component"},
    {"setuid", {{"/x", GK_SCRATCH_FILE, "", 04755}}, 0, 0, -EINVAL,
     "baseline entry \"/x\": mode 04755 has set-user-ID or set-group-ID bits"},
    {"not a mode", {{"/x", GK_SCRATCH_FILE, "", 0100644}}, 0, 0, -EINVAL,
     "baseline entry \"/x\": mode 33188 is not a permission mode"},
    {"dir with bytes", {{"/d", GK_SCRATCH_DIR, "abc", -1}}, 0, 0, -EINVAL,
     "baseline entry \"/d\": a dir carries no bytes"},
    {"duplicate", {{"/a", GK_SCRATCH_FILE, "1", -1}, {"/a", GK_SCRATCH_FILE, "2", -1}}, 0, 0,
     -EINVAL, "baseline path \"/a\" appears twice"},
    {"file and dir same path",
     {{"/a", GK_SCRATCH_DIR, NULL, -1}, {"/a", GK_SCRATCH_FILE, "2", -1}}, 0, 0, -EINVAL,
     "baseline path \"/a\" appears twice"},
    {"below a file", {{"/f/x", GK_SCRATCH_FILE, "", -1}, {"/f", GK_SCRATCH_FILE, "1", -1}}, 0, 0,
     -EINVAL, "baseline path \"/f/x\" is below the file \"/f\""},
    {"deep below a file",
     {{"/f", GK_SCRATCH_FILE, "1", -1}, {"/f b", GK_SCRATCH_FILE, "", -1},
      {"/f/y/z", GK_SCRATCH_DIR, NULL, -1}},
     0, 0, -EINVAL, "baseline path \"/f/y/z\" is below the file \"/f\""},
    {"quota", {{"/a", GK_SCRATCH_FILE, "abc", -1}, {"/b", GK_SCRATCH_FILE, "def", -1}}, 5, 0,
     -ENOSPC,
     "baseline exceeds fsQuotaBytes 5: 6 bytes of files by \"/b\" (refused before spawning)"},
    {"nodes count implied parents and the root", {{"/a/b/c", GK_SCRATCH_FILE, "", -1}}, 0, 3,
     -ENOSPC,
     "baseline exceeds fsNodeLimit 3: 4 nodes (the root, entries and implied parents) by "
     "\"/a/b/c\" (refused before spawning)"},
    {"nodes at the limit", {{"/a/b/c", GK_SCRATCH_FILE, "", -1}}, 0, 4, 0, NULL},
    {"quota at the limit", {{"/a", GK_SCRATCH_FILE, "abc", -1}}, 3, 2, 0, NULL},
    {"siblings sorting between a file and its would-be children",
     {{"/a b", GK_SCRATCH_FILE, "", -1}, {"/a", GK_SCRATCH_FILE, "", -1},
      {"/a.c/d", GK_SCRATCH_FILE, "", 0600}},
     0, 0, 0, NULL},
};

START_TEST(validate_table)
{
    const vrow *r = &vrows[_i];
    gk_scratch_list l = {0};
    for (size_t k = 0; k < 4 && r->e[k].path; k++)
        gk_scratch_list_add(&l, r->e[k].path, r->e[k].kind, r->e[k].bytes,
                            r->e[k].bytes ? strlen(r->e[k].bytes) : 0, r->e[k].mode);
    gk_autofree char *err = NULL;
    int rc = gk_scratch_validate(&l, r->quota, r->nodes, NULL, &err);
    ck_assert_msg(rc == r->rc, "%s: rc %d, want %d (%s)", r->name, rc, r->rc,
                  err ? err : "no message");
    if (r->msg)
        ck_assert_str_eq(err, r->msg);
    else
        ck_assert_ptr_null(err);
    gk_scratch_list_free(&l);
}
END_TEST

START_TEST(validate_nul_depth_and_totals)
{
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_check_path("baseline path", "/a\0b", 4, &err), -EINVAL);
    ck_assert_str_eq(err, "baseline path \"/a\" contains a NUL byte");
    free(gk_steal(&err));
    gk_buf deep = {0};
    for (int i = 0; i < GK_SCRATCH_MAX_DEPTH + 1; i++)
        gk_buf_puts(&deep, "/d");
    ck_assert_int_eq(gk_scratch_check_path("baseline path", deep.data, deep.len, &err), -EINVAL);
    gk_autofree char *want = gk_printf("baseline path \"%s\" is deeper than %d components",
                                       deep.data, GK_SCRATCH_MAX_DEPTH);
    ck_assert_str_eq(err, want);
    free(gk_steal(&err));
    deep.len -= 2;
    deep.data[deep.len] = '\0';
    ck_assert_int_eq(gk_scratch_check_path("baseline path", deep.data, deep.len, &err), 0);
    gk_buf_free(&deep);

    gk_scratch_list l = {0};
    gk_scratch_list_add(&l, "/src/a.c", GK_SCRATCH_FILE, "int x;\n", 7, -1);
    gk_scratch_list_add(&l, "/src/lib/b.c", GK_SCRATCH_FILE, "y", 1, -1);
    gk_scratch_list_add(&l, "/doc", GK_SCRATCH_DIR, NULL, 0, 0700);
    gk_scratch_totals t;
    ck_assert_int_eq(gk_scratch_validate(&l, 8, 6, &t, &err), 0);
    ck_assert_uint_eq(t.bytes, 8);
    ck_assert_uint_eq(t.implied, 2); /* /src, /src/lib */
    ck_assert_uint_eq(t.nodes, 6);   /* root + 3 entries + 2 implied */
    gk_scratch_list_free(&l);
}
END_TEST

/* ---- base64 */

START_TEST(base64_round_trip_and_strictness)
{
    for (size_t n = 0; n < 70; n++) {
        unsigned char raw[70];
        for (size_t i = 0; i < n; i++)
            raw[i] = (unsigned char)(i * 37 + n);
        gk_buf b = {0};
        gk_base64_encode(&b, raw, n);
        ck_assert_uint_eq(b.len, gk_base64_encoded_size(n));
        unsigned char *back;
        size_t len;
        ck_assert_int_eq(gk_base64_decode(b.data, b.len, &back, &len, NULL), 0);
        ck_assert_uint_eq(len, n);
        ck_assert(n == 0 || memcmp(back, raw, n) == 0);
        free(back);
        gk_buf_free(&b);
    }
    gk_buf b = {0};
    gk_base64_encode(&b, "hello", 5);
    ck_assert_str_eq(b.data, "aGVsbG8=");
    gk_buf_free(&b);
    static const struct {
        const char *s;
        size_t bad;
    } bad[] = {
        {"aGVsbG8", 7},     /* no padding */
        {"aGVs bG8=", 4},  /* whitespace */
        {"aGVsbG9=", 6},   /* non-zero unused bits */
        {"aGVsbA==x", 6},  /* after the padding */
        {"a=Vs", 1},       /* padding inside */
        {"aGV-", 3},       /* URL alphabet */
        {"aGVsbG8=\n", 7}, /* line break */
        {"aGVs#G8=", 4},   /* outside the alphabet in the padded group */
        {"aG=sbG8=", 2},   /* padding inside, before the last group */
        {"====", 0},       /* padding only */
        {"aGVsbG8A=", 9},  /* not a multiple of 4: bad at its end */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned char *out = (unsigned char *)"x";
        size_t at = 999;
        ck_assert_msg(gk_base64_decode(bad[i].s, strlen(bad[i].s), &out, NULL, &at) == -EINVAL,
                      "%s accepted", bad[i].s);
        ck_assert_ptr_null(out);
        ck_assert_msg(at == bad[i].bad, "%s: bad at %zu, want %zu", bad[i].s, at, bad[i].bad);
    }
    /* the same text as nettle's coder writes, at every length and
     * alignment of the fast paths */
    for (size_t n = 0; n < 200; n++) {
        unsigned char in[200];
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(i * 151 + n * 7 + 3);
        char ref[BASE64_ENCODE_RAW_LENGTH(200) + 1];
        base64_encode_raw((char *)ref, n, in);
        gk_buf e = {0};
        gk_base64_encode(&e, in, n);
        ck_assert_uint_eq(e.len, BASE64_ENCODE_RAW_LENGTH(n));
        ck_assert_msg(n == 0 || memcmp(e.data, ref, e.len) == 0, "length %zu", n);
        gk_buf_free(&e);
    }
    /* a long text, every byte value, decoded a group at a time: one bad
     * character anywhere is found, and named at its offset */
    unsigned char raw[3000];
    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (unsigned char)(i * 7 + i / 256);
    b = (gk_buf){0};
    gk_base64_encode(&b, raw, sizeof(raw));
    ck_assert_uint_eq(b.len, 4000);
    static const char spelled[] = "AAcOFRwjKjE4P0ZNVFtiaXB3foWMk5qhqK+2vcTL0tng5+71/AMKERgf";
    ck_assert_int_eq(strncmp(b.data, spelled, strlen(spelled)), 0);
    unsigned char *back = NULL;
    size_t len = 0;
    ck_assert_int_eq(gk_base64_decode(b.data, b.len, &back, &len, NULL), 0);
    ck_assert_uint_eq(len, sizeof(raw));
    ck_assert_int_eq(memcmp(back, raw, len), 0);
    free(back);
    static const char intruders[] = {' ', '\n', '=', '-', '_', '\0', (char)0x80, '.'};
    for (size_t k = 0; k < sizeof(intruders); k++) {
        size_t where = 1001 + k * 413;
        char saved = b.data[where];
        b.data[where] = intruders[k];
        size_t at = 0;
        unsigned char *out = NULL;
        ck_assert_int_eq(gk_base64_decode(b.data, b.len, &out, NULL, &at), -EINVAL);
        ck_assert_ptr_null(out);
        ck_assert_uint_eq(at, where);
        b.data[where] = saved;
    }
    gk_buf_free(&b);
}
END_TEST

/* ---- materialise and snapshot */

static void fill_baseline(gk_scratch_list *l)
{
    static const unsigned char bin[] = {0, 1, 2, 0xff, 0xfe, '\n', 0};
    gk_scratch_list_add(l, "/src/main.c", GK_SCRATCH_FILE, "int main(void) { return 0; }\n", 29,
                        -1);
    gk_scratch_list_add(l, "/src/run.sh", GK_SCRATCH_FILE, "#!/bin/sh\n", 10, 0755);
    gk_scratch_list_add(l, "/ro", GK_SCRATCH_DIR, NULL, 0, 0555);
    gk_scratch_list_add(l, "/ro/inside", GK_SCRATCH_FILE, "kept", 4, 0400);
    gk_scratch_list_add(l, "/empty", GK_SCRATCH_FILE, NULL, 0, 0600);
    gk_scratch_list_add(l, "/bin.dat", GK_SCRATCH_FILE, bin, sizeof(bin), -1);
    gk_scratch_list_add(l, "/deep/a/b/c.txt", GK_SCRATCH_FILE, "c\n", 2, -1);
    gk_scratch_list_add(l, "/sticky", GK_SCRATCH_DIR, NULL, 0, 01777);
}

/* Materialise, snapshot, compare; returns a failure text or NULL (so it
 * can run in a forked child as another user). */
static char *round_trip(const char *dir)
{
    gk_scratch_list l = {0};
    fill_baseline(&l);
    char *err = NULL;
    if (gk_scratch_validate(&l, 1 << 20, 64, NULL, &err) < 0)
        return err;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return gk_printf("open %s: %s", dir, strerror(errno));
    mode_t old = umask(0077); /* modes are exact whatever the umask */
    int rc = gk_scratch_materialise(fd, &l, &err);
    umask(old);
    if (rc < 0)
        return err;
    gk_snapshot s;
    if (gk_snapshot_take(fd, NULL, &s, &err) < 0)
        return err;
    static const struct {
        const char *path;
        gk_snap_kind kind;
        unsigned mode;
    } want[] = {
        {"/bin.dat", GK_SNAP_FILE, 0644},  {"/deep", GK_SNAP_DIR, 0755},
        {"/deep/a", GK_SNAP_DIR, 0755},    {"/deep/a/b", GK_SNAP_DIR, 0755},
        {"/deep/a/b/c.txt", GK_SNAP_FILE, 0644}, {"/empty", GK_SNAP_FILE, 0600},
        {"/ro", GK_SNAP_DIR, 0555},        {"/ro/inside", GK_SNAP_FILE, 0400},
        {"/src", GK_SNAP_DIR, 0755},       {"/src/main.c", GK_SNAP_FILE, 0644},
        {"/src/run.sh", GK_SNAP_FILE, 0755}, {"/sticky", GK_SNAP_DIR, 01777},
    };
    char *fail = NULL;
    if (s.n != sizeof(want) / sizeof(want[0]))
        fail = gk_printf("snapshot has %zu nodes, want %zu", s.n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; !fail && i < s.n; i++) {
        if (strcmp(s.v[i].path, want[i].path) || s.v[i].kind != want[i].kind ||
            s.v[i].mode != want[i].mode)
            fail = gk_printf("node %zu: %s kind %d mode 0%o, want %s kind %d mode 0%o", i,
                             s.v[i].path, s.v[i].kind, s.v[i].mode, want[i].path, want[i].kind,
                             want[i].mode);
    }
    for (size_t i = 0; !fail && i < l.n; i++) {
        const gk_snap_node *nd = find(&s, l.v[i].path);
        if (l.v[i].kind == GK_SCRATCH_FILE &&
            (!nd || nd->size != l.v[i].len ||
             (l.v[i].len && memcmp(nd->bytes, l.v[i].bytes, l.v[i].len))))
            fail = gk_printf("%s: bytes differ", l.v[i].path);
    }
    /* A second snapshot of the same fd sees the same tree. */
    gk_snapshot s2;
    if (!fail && gk_snapshot_take(fd, NULL, &s2, &err) < 0)
        fail = err;
    else if (!fail) {
        if (s2.n != s.n)
            fail = gk_printf("second snapshot has %zu nodes, first %zu", s2.n, s.n);
        gk_snapshot_free(&s2);
    }
    /* Materialising again into the now non-empty tree fails, naming it. */
    if (!fail) {
        rc = gk_scratch_materialise(fd, &l, &err);
        if (rc != -EEXIST || !strstr(err, "materialising \"/bin.dat\": create:"))
            fail = gk_printf("second materialise: %d %s", rc, err ? err : "");
        free(err);
    }
    gk_snapshot_free(&s);
    gk_scratch_list_free(&l);
    close(fd);
    return fail;
}

START_TEST(materialise_snapshot_round_trip)
{
    gk_autofree char *dir = temp_dir("rt");
    gk_autofree char *fail = round_trip(dir);
    ck_assert_msg(!fail, "%s", fail);
    rm_rf(dir);
}
END_TEST

START_TEST(materialise_snapshot_round_trip_unprivileged)
{
    uid_t uid;
    gid_t gid;
    ck_assert_msg(gk_test_user(&uid, &gid), "no unprivileged test user");
    gk_autofree char *dir = temp_dir("rtu");
    ck_assert_int_eq(chown(dir, uid, gid), 0);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
            _exit(3);
        char *fail = round_trip(dir);
        if (fail)
            (void)!write(pfd[1], fail, strlen(fail));
        _exit(fail ? 1 : 0);
    }
    close(pfd[1]);
    char msg[1024] = {0};
    (void)!read(pfd[0], msg, sizeof(msg) - 1);
    close(pfd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "as uid %d: %s (status %d)", (int)uid,
                  msg, st);
    rm_rf(dir);
}
END_TEST

/* Random baselines: every one the rules accept materialises to exactly
 * its entries plus the implied 0755 parents (modes, bytes, kinds). */
START_TEST(materialise_snapshot_random_round_trips)
{
    static const char *names[] = {"a", "b", "a b", "\xc3\xa9", "a.b", "-"};
    static const int modes[] = {-1, 0600, 0755, 0400, 01777, 0};
    static const int dir_modes[] = {-1, 0700, 0755, 0500, 01777, 0711};
    unsigned seed = 4242;
    int accepted = 0;
    for (int round = 0; round < 40; round++) {
        gk_scratch_list l = {0};
        int n = 1 + rand_r(&seed) % 12;
        for (int i = 0; i < n; i++) {
            gk_buf p = {0};
            int depth = 1 + rand_r(&seed) % 4;
            for (int d = 0; d < depth; d++) {
                gk_buf_putc(&p, '/');
                gk_buf_puts(&p, names[rand_r(&seed) % 6]);
            }
            bool dir = rand_r(&seed) % 3 == 0;
            /* Only what its owner can read back: a 0000 file or a 0600 dir
             * is the unreadable test's. */
            int mode = dir ? dir_modes[rand_r(&seed) % 6] : modes[rand_r(&seed) % 6];
            if (mode == 0)
                mode = 0640;
            char text[32];
            int len = snprintf(text, sizeof(text), "%d:%d\n", round, i);
            gk_scratch_list_add(&l, p.data, dir ? GK_SCRATCH_DIR : GK_SCRATCH_FILE,
                                dir ? NULL : text, dir ? 0 : (size_t)len, mode);
            gk_buf_free(&p);
        }
        gk_scratch_totals t;
        gk_autofree char *err = NULL;
        if (gk_scratch_validate(&l, 0, 0, &t, &err) < 0) {
            gk_scratch_list_free(&l);
            continue;
        }
        accepted++;
        gk_autofree char *dir = temp_dir("rand");
        int fd = open_dir(dir);
        ck_assert_msg(gk_scratch_materialise(fd, &l, &err) == 0, "round %d: %s", round, err);
        gk_snapshot s;
        ck_assert_int_eq(gk_snapshot_take(fd, NULL, &s, &err), 0);
        ck_assert_uint_eq(s.n, l.n + t.implied);
        for (size_t i = 0; i < s.n; i++) {
            const gk_scratch_entry *e = NULL;
            for (size_t k = 0; k < l.n; k++)
                if (strcmp(l.v[k].path, s.v[i].path) == 0)
                    e = &l.v[k];
            if (!e) { /* implied */
                ck_assert_int_eq(s.v[i].kind, GK_SNAP_DIR);
                ck_assert_uint_eq(s.v[i].mode, 0755);
                continue;
            }
            ck_assert_int_eq(s.v[i].kind, e->kind == GK_SCRATCH_DIR ? GK_SNAP_DIR : GK_SNAP_FILE);
            unsigned want = e->mode == -1 ? (e->kind == GK_SCRATCH_DIR ? 0755u : 0644u)
                                          : (unsigned)e->mode;
            ck_assert_msg(s.v[i].mode == want, "round %d: %s mode 0%o, want 0%o", round,
                          s.v[i].path, s.v[i].mode, want);
            ck_assert_uint_eq(s.v[i].size, e->len);
            ck_assert(e->len == 0 || memcmp(s.v[i].bytes, e->bytes, e->len) == 0);
        }
        gk_snapshot_free(&s);
        close(fd);
        rm_rf(dir);
        gk_scratch_list_free(&l);
    }
    ck_assert_int_ge(accepted, 10); /* the generator is not refused every time */
}
END_TEST

START_TEST(materialise_never_follows_a_symlink)
{
    gk_autofree char *dir = temp_dir("nofollow");
    gk_autofree char *outside = temp_dir("outside");
    int fd = open_dir(dir);
    ck_assert_int_eq(symlinkat(outside, fd, "a"), 0);
    ck_assert_int_eq(symlinkat("/nonexistent-target", fd, "f"), 0);
    gk_scratch_list l = {0};
    gk_scratch_list_add(&l, "/a/x", GK_SCRATCH_FILE, "x", 1, -1);
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_materialise(fd, &l, &err), -EEXIST);
    ck_assert_str_eq(err, "materialising \"/a\": mkdir: File exists");
    gk_scratch_list_free(&l);
    free(gk_steal(&err));
    /* A dangling symlink is not a place to create a file either. */
    gk_scratch_list_add(&l, "/f", GK_SCRATCH_FILE, "x", 1, -1);
    ck_assert_int_eq(gk_scratch_materialise(fd, &l, &err), -EEXIST);
    ck_assert_str_eq(err, "materialising \"/f\": create: File exists");
    gk_scratch_list_free(&l);
    struct stat st;
    ck_assert_int_ne(stat("/nonexistent-target", &st), 0);
    gk_autofree char *x = gk_path_join(outside, "x");
    ck_assert_int_ne(stat(x, &st), 0);
    close(fd);
    rm_rf(dir);
    rm_rf(outside);
}
END_TEST

START_TEST(snapshot_records_symlinks_and_fifos_without_following)
{
    gk_autofree char *dir = temp_dir("snap");
    gk_autofree char *outside = temp_dir("outside");
    gk_autofree char *secret = gk_path_join(outside, "secret");
    gk_test_write(secret, "do not read", 0644);
    int fd = open_dir(dir);
    ck_assert_int_eq(symlinkat(outside, fd, "link"), 0);
    ck_assert_int_eq(mkfifoat(fd, "fifo", 0600), 0);
    ck_assert_int_eq(mkdirat(fd, "d", 0755), 0);
    put(fd, "d/f", "hello\n");
    gk_snapshot s;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, &s, &err), 0);
    ck_assert_uint_eq(s.n, 4);
    const gk_snap_node *l = find(&s, "/link");
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(l->kind, GK_SNAP_SYMLINK);
    ck_assert_uint_eq(l->size, strlen(outside));
    ck_assert_mem_eq(l->bytes, outside, l->size);
    ck_assert_ptr_null(find(&s, "/link/secret"));
    ck_assert_int_eq(find(&s, "/fifo")->kind, GK_SNAP_OTHER);
    ck_assert_ptr_null(find(&s, "/fifo")->bytes);
    ck_assert_uint_eq(s.content_bytes, 6);
    gk_snapshot_free(&s);
    /* Bounds are errors, never a partial snapshot. */
    gk_snapshot_limits lim = {.max_nodes = 3};
    ck_assert_int_eq(gk_snapshot_take(fd, &lim, &s, &err), -E2BIG);
    ck_assert_ptr_nonnull(strstr(err, "the tree holds more than 3 nodes"));
    ck_assert_uint_eq(s.n, 0);
    free(gk_steal(&err));
    lim = (gk_snapshot_limits){.max_bytes = 5};
    ck_assert_int_eq(gk_snapshot_take(fd, &lim, &s, &err), -E2BIG);
    ck_assert_str_eq(err, "snapshot of \"/d/f\": the tree holds more than 5 bytes of files");
    close(fd);
    rm_rf(dir);
    rm_rf(outside);
}
END_TEST

/* ---- diffs against golden files */

/* Every node's mtime set to t (seconds), so goldens with mtimes are fixed. */
static void stamp_all(int fd, int64_t t)
{
    gk_snapshot s;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, &s, &err), 0);
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    for (size_t i = 0; i < s.n; i++)
        ck_assert_int_eq(utimensat(fd, s.v[i].path + 1, ts, AT_SYMLINK_NOFOLLOW), 0);
    gk_snapshot_free(&s);
}

static void stamp(int fd, const char *rel, int64_t t)
{
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    ck_assert_int_eq(utimensat(fd, rel, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* The before tree, and the command's changes to it: one of each kind. */
static void make_change_trees(const char *dir, gk_snapshot *before, gk_snapshot *after)
{
    static const unsigned char bin1[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
    static const unsigned char bin2[] = {0x7f, 'E', 'L', 'F', 0, 9, 9, 9, 9};
    gk_scratch_list l = {0};
    gk_scratch_list_add(&l, "/keep.txt", GK_SCRATCH_FILE, "same\n", 5, -1);
    static const char edit[] = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
                               "eleven\ntwelve\nthirteen\nfourteen\n";
    gk_scratch_list_add(&l, "/edit.txt", GK_SCRATCH_FILE, edit, strlen(edit), -1);
    gk_scratch_list_add(&l, "/gone.txt", GK_SCRATCH_FILE, "bye\nbye", 7, -1);
    gk_scratch_list_add(&l, "/olddir/inner.txt", GK_SCRATCH_FILE, "x\n", 2, -1);
    gk_scratch_list_add(&l, "/was-file", GK_SCRATCH_FILE, "file\n", 5, -1);
    gk_scratch_list_add(&l, "/was-dir/child", GK_SCRATCH_FILE, "c\n", 2, -1);
    gk_scratch_list_add(&l, "/prog.bin", GK_SCRATCH_FILE, bin1, sizeof(bin1), 0755);
    gk_scratch_list_add(&l, "/mode.sh", GK_SCRATCH_FILE, "#!/bin/sh\n", 10, 0644);
    gk_scratch_list_add(&l, "/eol.txt", GK_SCRATCH_FILE, "a\nb", 3, -1);
    gk_scratch_list_add(&l, "/empty-gone", GK_SCRATCH_FILE, NULL, 0, -1);
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_validate(&l, 0, 0, NULL, &err), 0);
    int fd = open_dir(dir);
    ck_assert_int_eq(gk_scratch_materialise(fd, &l, &err), 0);
    gk_scratch_list_free(&l);
    stamp_all(fd, 1000000000);
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, before, &err), 0);

    put(fd, "new.txt", "fresh\nfile\n");
    put(fd, "edit.txt", "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
                        "eleven\ntwelve\nthirteen\nfourteen\nfifteen\n");
    ck_assert_int_eq(unlinkat(fd, "gone.txt", 0), 0);
    ck_assert_int_eq(unlinkat(fd, "olddir/inner.txt", 0), 0);
    ck_assert_int_eq(unlinkat(fd, "olddir", AT_REMOVEDIR), 0);
    ck_assert_int_eq(mkdirat(fd, "newdir", 0750), 0);
    ck_assert_int_eq(unlinkat(fd, "was-file", 0), 0);
    ck_assert_int_eq(mkdirat(fd, "was-file", 0755), 0);
    ck_assert_int_eq(unlinkat(fd, "was-dir/child", 0), 0);
    ck_assert_int_eq(unlinkat(fd, "was-dir", AT_REMOVEDIR), 0);
    put(fd, "was-dir", "now a file\n");
    int b = openat(fd, "prog.bin", O_WRONLY | O_TRUNC);
    ck_assert_int_eq(write(b, bin2, sizeof(bin2)), (ssize_t)sizeof(bin2));
    close(b);
    ck_assert_int_eq(fchmodat(fd, "mode.sh", 0755, 0), 0);
    put(fd, "eol.txt", "a\nb\n");
    ck_assert_int_eq(unlinkat(fd, "empty-gone", 0), 0);
    put(fd, "empty-new", "");
    ck_assert_int_eq(symlinkat("keep.txt", fd, "link"), 0);
    ck_assert_int_eq(mkfifoat(fd, "pipe", 0600), 0);
    stamp_all(fd, 1000000000);
    stamp(fd, "edit.txt", 1000000060);
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, after, &err), 0);
    close(fd);
}

static void check_diff_golden(const gk_snapshot *before, const gk_snapshot *after,
                              gk_diff_format f, bool metadata, const char *golden)
{
    gk_diff_opts o = {.format = f, .metadata = metadata, .budget = GK_DIFF_BUDGET};
    char *out = NULL;
    size_t len;
    bool cut = true;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_diff(before, after, &o, &out, &len, &cut, &err), 0);
    ck_assert(!cut);
    ck_assert_uint_eq(len, strlen(out));
    if (f == GK_DIFF_JSON) {
        json_error_t je;
        json_t *doc = json_loads(out, 0, &je);
        ck_assert_msg(doc != NULL, "diff is not JSON: %s", je.text);
        json_decref(doc);
    }
    gk_autofree char *path = golden_path(golden);
    gk_test_golden(path, out, len);
    free(out);
}

START_TEST(diff_each_kind_matches_goldens)
{
    gk_autofree char *dir = temp_dir("diff");
    gk_snapshot before, after;
    make_change_trees(dir, &before, &after);
    check_diff_golden(&before, &after, GK_DIFF_JSON, false, "changes.json");
    check_diff_golden(&before, &after, GK_DIFF_UNIFIED, false, "changes.diff");
    check_diff_golden(&before, &after, GK_DIFF_JSON, true, "changes-metadata.json");
    check_diff_golden(&before, &after, GK_DIFF_UNIFIED, true, "changes-metadata.diff");
    /* No change, no entry: the empty document and the empty diff. */
    gk_diff_opts o = {.format = GK_DIFF_JSON};
    char *out;
    ck_assert_int_eq(gk_scratch_diff(&after, &after, &o, &out, NULL, NULL, NULL), 0);
    ck_assert_str_eq(out, "{\"changes\":[]}");
    free(out);
    o.format = GK_DIFF_UNIFIED;
    o.metadata = true;
    ck_assert_int_eq(gk_scratch_diff(&after, &after, &o, &out, NULL, NULL, NULL), 0);
    ck_assert_str_eq(out, "");
    free(out);
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
    rm_rf(dir);
}
END_TEST

/* Names that need quoting, a symlink whose target holds a newline, a
 * name that is not UTF-8: every unified entry stays one line per line of
 * its own, and the JSON document stays valid (U+FFFD for the bad byte). */
START_TEST(diff_quotes_odd_names_and_targets)
{
    gk_autofree char *dir = temp_dir("odd");
    int fd = open_dir(dir);
    gk_snapshot before, after;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, &before, &err), 0);
    put(fd, "tab\there", "x\n");
    put(fd, "quote\"back\\slash", "y\n");
    put(fd, "bad\xff", "z\n");
    ck_assert_int_eq(symlinkat("line1\nline2", fd, "nl-link"), 0);
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, &after, &err), 0);
    gk_diff_opts o = {.format = GK_DIFF_UNIFIED};
    char *out;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err), 0);
    ck_assert_str_eq(out, "--- /dev/null\n+++ b/bad\xff\n@@ -0,0 +1 @@\n+z\n"
                          "New symlink b/nl-link -> \"line1\\nline2\"\n"
                          "--- /dev/null\n+++ \"b/quote\\\"back\\\\slash\"\n@@ -0,0 +1 @@\n+y\n"
                          "--- /dev/null\n+++ \"b/tab\\there\"\n@@ -0,0 +1 @@\n+x\n");
    free(out);
    o.format = GK_DIFF_JSON;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err), 0);
    json_t *doc = json_loads(out, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    json_t *first = json_array_get(json_object_get(doc, "changes"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(first, "path")), "/bad\xef\xbf\xbd");
    json_decref(doc);
    free(out);
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
    close(fd);
    rm_rf(dir);
}
END_TEST

/* As the unprivileged user a 0000 file cannot be read: the snapshot says
 * so, and a change to it is still seen through its size and mtime. */
static char *unreadable_child(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    put(fd, "secret", "s\n");
    fchmodat(fd, "secret", 0, 0);
    mkdirat(fd, "locked", 0700);
    put(fd, "locked/in", "x\n");
    gk_snapshot before, after;
    char *err = NULL;
    if (gk_snapshot_take(fd, NULL, &before, &err) < 0)
        return err;
    const gk_snap_node *n = find(&before, "/secret");
    if (!n || !n->unreadable || n->bytes)
        return gk_strdup("a 0000 file was read or not marked unreadable");
    if (!find(&before, "/locked/in"))
        return gk_strdup("/locked/in missing before");
    fchmodat(fd, "secret", 0600, 0);
    put(fd, "secret", "longer\n");
    fchmodat(fd, "secret", 0, 0);
    /* A dir made listable but not searchable: its children cannot be
     * seen, and are not reported deleted either. */
    fchmodat(fd, "locked", 0600, 0);
    if (gk_snapshot_take(fd, NULL, &after, &err) < 0)
        return err;
    n = find(&after, "/locked");
    if (!n || !n->unreadable || find(&after, "/locked/in"))
        return gk_strdup("a 0600 dir was searched or not marked unreadable");
    gk_diff_opts o = {.format = GK_DIFF_UNIFIED, .metadata = true};
    char *out;
    if (gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err) < 0)
        return err;
    char *fail = NULL;
    /* The dir's own mode change is seen; the file below it is not. */
    if (!gk_has_prefix(out, "Mode of b/locked: 0700 -> 0600\n") ||
        !strstr(out, "Files a/secret and b/secret differ (unreadable)\n") ||
        strstr(out, "locked/in"))
        fail = gk_printf("unified: %s", out);
    free(out);
    fchmodat(fd, "locked", 0700, 0);
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
    close(fd);
    return fail;
}

START_TEST(snapshot_of_an_unreadable_file_as_the_test_user)
{
    uid_t uid;
    gid_t gid;
    ck_assert_msg(gk_test_user(&uid, &gid), "no unprivileged test user");
    gk_autofree char *dir = temp_dir("unread");
    ck_assert_int_eq(chown(dir, uid, gid), 0);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
            _exit(3);
        char *fail = unreadable_child(dir);
        if (fail)
            (void)!write(pfd[1], fail, strlen(fail));
        _exit(fail ? 1 : 0);
    }
    close(pfd[1]);
    char msg[1024] = {0};
    (void)!read(pfd[0], msg, sizeof(msg) - 1);
    close(pfd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s (status %d)", msg, st);
    rm_rf(dir);
}
END_TEST

/* ---- the line diff: patch applies it, and it is minimal */

static size_t lcs(const char **a, size_t na, const char **b, size_t nb)
{
    gk_autofree size_t *t = gk_calloc((na + 1) * (nb + 1), sizeof(size_t));
    for (size_t i = na; i-- > 0;)
        for (size_t j = nb; j-- > 0;)
            t[i * (nb + 1) + j] = strcmp(a[i], b[j]) == 0
                                      ? t[(i + 1) * (nb + 1) + j + 1] + 1
                                      : (t[(i + 1) * (nb + 1) + j] > t[i * (nb + 1) + j + 1]
                                             ? t[(i + 1) * (nb + 1) + j]
                                             : t[i * (nb + 1) + j + 1]);
    return t[0];
}

static void count_edits(const char *d, size_t *minus, size_t *plus)
{
    *minus = *plus = 0;
    const char *p = d;
    /* skip the two header lines */
    p = strchr(p, '\n') + 1;
    p = strchr(p, '\n') + 1;
    for (; *p; p = strchr(p, '\n') + 1) {
        *minus += *p == '-';
        *plus += *p == '+';
    }
}

START_TEST(line_diff_applies_with_patch_and_is_minimal)
{
    gk_autofree char *dir = temp_dir("patch");
    gk_autofree char *fa = gk_path_join(dir, "f");
    gk_autofree char *fp = gk_path_join(dir, "p.diff");
    static const char *words[] = {"a\n", "b\n", "c\n", "d\n", "e\n"};
    unsigned seed = 12345;
    for (int round = 0; round < 60; round++) {
        size_t na = (size_t)(rand_r(&seed) % 25), nb = (size_t)(rand_r(&seed) % 25);
        const char *la[32], *lb[32];
        gk_buf a = {0}, b = {0};
        gk_buf_puts(&a, ""); /* NUL-terminated even when empty */
        gk_buf_puts(&b, "");
        for (size_t i = 0; i < na; i++)
            gk_buf_puts(&a, la[i] = words[rand_r(&seed) % 5]);
        for (size_t i = 0; i < nb; i++)
            gk_buf_puts(&b, lb[i] = words[rand_r(&seed) % 5]);
        bool chop = round % 3 == 0 && b.len > 0; /* no newline at the end */
        if (chop)
            b.data[--b.len] = '\0';
        gk_buf d = {0};
        gk_diff_text(&d, "a/f", a.data, a.len, "b/f", b.data, b.len, 0);
        if (!chop) {
            size_t minus, plus;
            count_edits(d.data, &minus, &plus);
            size_t l = lcs(la, na, lb, nb);
            ck_assert_msg(minus == na - l && plus == nb - l,
                          "round %d: %zu-/%zu+, want %zu/%zu:\n%s", round, minus, plus, na - l,
                          nb - l, d.data);
        }
        gk_test_write(fa, a.data, 0644);
        gk_test_write(fp, d.data, 0644);
        char *argv[] = {"/usr/bin/patch", "-s", "-f", "-p1", "-d", dir, "-i", fp, NULL};
        gk_autofree char *out = NULL, *err = NULL;
        int st = gk_test_run(argv, NULL, &out, &err);
        ck_assert_msg(st == 0, "round %d: patch failed (%d): %s%s\n%s", round, st, out, err,
                      d.data);
        size_t got_len;
        gk_autofree char *got = gk_test_read(fa, &got_len);
        ck_assert_msg(got && got_len == b.len && memcmp(got, b.data, b.len) == 0,
                      "round %d: patched file differs (%zu bytes, want %zu: %s)\n%s", round,
                      got ? got_len : 0, b.len, got ? got : "unreadable", d.data);
        gk_buf_free(&a);
        gk_buf_free(&b);
        gk_buf_free(&d);
    }
    rm_rf(dir);
}
END_TEST

START_TEST(line_diff_hunks_and_bound)
{
    /* Two changes 7 lines apart are two hunks; 6 apart, one. */
    gk_buf a = {0}, b = {0}, c = {0};
    for (int i = 1; i <= 20; i++) {
        char n[16];
        snprintf(n, sizeof(n), "%d", i);
        gk_buf_printf(&a, "%s\n", n);
        gk_buf_printf(&b, "%s\n", i == 2 ? "X" : i == 10 ? "Y" : n);
        gk_buf_printf(&c, "%s\n", i == 2 ? "X" : i == 9 ? "Y" : n);
    }
    gk_buf d = {0};
    gk_diff_text(&d, "a/n", a.data, a.len, "b/n", b.data, b.len, 0);
    ck_assert_str_eq(d.data, "--- a/n\n+++ b/n\n"
                             "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n"
                             "@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+Y\n 11\n 12\n 13\n");
    d.len = 0;
    gk_diff_text(&d, "a/n", a.data, a.len, "b/n", c.data, c.len, 0);
    ck_assert_str_eq(d.data, "--- a/n\n+++ b/n\n"
                             "@@ -1,12 +1,12 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+Y\n"
                             " 10\n 11\n 12\n");
    /* Creation, deletion, one line, no newline at the end. */
    d.len = 0;
    gk_diff_text(&d, "/dev/null", "", 0, "b/x", "solo", 4, 0);
    ck_assert_str_eq(d.data, "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+solo\n"
                             "\\ No newline at end of file\n");
    d.len = 0;
    gk_diff_text(&d, "a/x", "p\nq\n", 4, "/dev/null", "", 0, 0);
    ck_assert_str_eq(d.data, "--- a/x\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-p\n-q\n");
    /* Past the step bound: one replace between the common head and tail,
     * still a correct diff. 4,000 distinct lines against 4,000 others
     * with a shared first and last line. */
    gk_buf x = {0}, y = {0};
    gk_buf_puts(&x, "head\n");
    gk_buf_puts(&y, "head\n");
    for (int i = 0; i < 4000; i++) {
        gk_buf_printf(&x, "x%d\n", i);
        gk_buf_printf(&y, "y%d\n", i);
    }
    gk_buf_puts(&x, "tail\n");
    gk_buf_puts(&y, "tail\n");
    d.len = 0;
    gk_diff_text(&d, "a/p", x.data, x.len, "b/p", y.data, y.len, 1000);
    size_t minus, plus;
    count_edits(d.data, &minus, &plus);
    ck_assert_uint_eq(minus, 4000);
    ck_assert_uint_eq(plus, 4000);
    ck_assert(gk_has_prefix(d.data, "--- a/p\n+++ b/p\n@@ -1,4002 +1,4002 @@\n head\n-x0\n"));
    gk_buf_free(&a);
    gk_buf_free(&b);
    gk_buf_free(&c);
    gk_buf_free(&d);
    gk_buf_free(&x);
    gk_buf_free(&y);
}
END_TEST

/* ---- budgets */

/* A tree with many created files whose names and contents are multibyte
 * and hold characters JSON escapes. */
static void make_many(const char *dir, int n, gk_snapshot *before, gk_snapshot *after)
{
    int fd = open_dir(dir);
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, before, &err), 0);
    for (int i = 0; i < n; i++) {
        gk_autofree char *name = gk_printf("f\"é日%03d", i);
        gk_autofree char *text = gk_printf("line \"%d\" \\ é\ttab\n日本語 %d\n", i, i);
        put(fd, name, text);
    }
    ck_assert_int_eq(gk_snapshot_take(fd, NULL, after, &err), 0);
    close(fd);
}

START_TEST(json_budget_drops_whole_entries)
{
    gk_autofree char *dir = temp_dir("bj");
    gk_snapshot before, after;
    make_many(dir, 50, &before, &after);
    gk_diff_opts o = {.format = GK_DIFF_JSON};
    char *full;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &full, NULL, NULL, NULL), 0);
    size_t full_esc = gk_json_escaped_size(full, strlen(full));
    for (size_t budget = 40; budget < full_esc + 10; budget += 97) {
        o.budget = budget;
        char *out;
        bool cut;
        gk_autofree char *err = NULL;
        ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, NULL, &cut, &err), 0);
        size_t esc = gk_json_escaped_size(out, strlen(out));
        ck_assert_msg(esc <= budget, "escaped %zu > budget %zu", esc, budget);
        ck_assert(cut == (budget < full_esc));
        json_error_t je;
        json_t *doc = json_loads(out, 0, &je);
        ck_assert_msg(doc, "invalid JSON at budget %zu: %s", budget, je.text);
        size_t kept = json_array_size(json_object_get(doc, "changes"));
        json_t *om = json_object_get(doc, "omitted");
        ck_assert_int_eq(cut, om != NULL);
        ck_assert_uint_eq(kept + (om ? (size_t)json_integer_value(om) : 0), 50);
        if (cut) {
            /* Maximal: one entry more would not have fitted. */
            ck_assert_uint_lt(kept, 50);
            size_t n_om = (size_t)json_integer_value(om);
            json_decref(doc);
            o.budget = 0;
            char *all;
            ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &all, NULL, NULL, NULL), 0);
            json_t *fd = json_loads(all, 0, NULL);
            json_t *next = json_array_get(json_object_get(fd, "changes"), kept);
            char *nt = json_dumps(next, JSON_COMPACT);
            gk_autofree char *s1 = gk_printf(",\\\"omitted\\\":%zu", n_om);
            gk_autofree char *s0 = n_om > 1 ? gk_printf(",\\\"omitted\\\":%zu", n_om - 1)
                                            : gk_strdup("");
            size_t need_next = esc - strlen(s1) + strlen(s0) +
                               gk_json_escaped_size(nt, strlen(nt)) + (kept ? 1 : 0);
            ck_assert_msg(need_next > budget, "budget %zu: one more entry would fit (%zu)",
                          budget, need_next);
            free(nt);
            json_decref(fd);
            free(all);
        } else {
            json_decref(doc);
        }
        free(out);
    }
    o.budget = 10;
    char *out = (char *)"x";
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err), -ENOBUFS);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err, "diff budget of 10 bytes cannot hold even an empty document");
    free(full);
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
    rm_rf(dir);
}
END_TEST

START_TEST(unified_budget_cuts_at_a_line_with_the_marker)
{
    gk_autofree char *dir = temp_dir("bu");
    gk_snapshot before, after;
    make_many(dir, 40, &before, &after);
    gk_diff_opts o = {.format = GK_DIFF_UNIFIED};
    char *full;
    size_t full_len;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &full, &full_len, NULL, NULL), 0);
    size_t full_esc = gk_json_escaped_size(full, full_len);
    for (size_t budget = 60; budget < full_esc + 10; budget += 131) {
        o.budget = budget;
        char *out;
        size_t len;
        bool cut;
        ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, &len, &cut, NULL), 0);
        size_t esc = gk_json_escaped_size(out, len);
        ck_assert_msg(esc <= budget, "escaped %zu > budget %zu", esc, budget);
        ck_assert(gk_utf8_valid(out, len));
        if (budget >= full_esc) {
            ck_assert(!cut);
            ck_assert_str_eq(out, full);
        } else {
            ck_assert(cut);
            const char *m = strstr(out, "\n[truncated: ");
            ck_assert_ptr_nonnull(m);
            size_t kept = (size_t)(m - out);
            ck_assert(kept == 0 || full[kept] == '\n'); /* cut at a line's end */
            ck_assert_mem_eq(out, full, kept);
            gk_autofree char *marker =
                gk_printf("\n[truncated: %zu bytes omitted]\n", full_len - kept);
            ck_assert_str_eq(m, marker);
            /* Nearly all of the budget is used: the next line would not fit. */
            const char *next = strchr(full + kept + 1, '\n');
            if (next) {
                size_t with_next = gk_json_escaped_size(full, (size_t)(next - full)) +
                                   gk_json_escaped_size(marker, strlen(marker));
                ck_assert_uint_gt(with_next, budget - 2);
            }
        }
        free(out);
    }
    o.budget = 20;
    char *out;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_diff(&before, &after, &o, &out, NULL, NULL, &err), -ENOBUFS);
    ck_assert_str_eq(err, "diff budget of 20 bytes cannot hold the truncation marker");
    free(full);
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
    rm_rf(dir);
}
END_TEST

/* ---- seeds */

START_TEST(seed_parse_and_defaults)
{
    char *h, *d;
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_seed_parse("src", &h, &d, &err), 0);
    ck_assert_str_eq(h, "src");
    ck_assert_ptr_null(d);
    free(h);
    ck_assert_int_eq(gk_scratch_seed_parse("a=b=/c", &h, &d, &err), 0);
    ck_assert_str_eq(h, "a=b");
    ck_assert_str_eq(d, "/c");
    free(h);
    free(d);
    ck_assert_int_eq(gk_scratch_seed_parse("=/c", &h, &d, &err), -EINVAL);
    ck_assert_str_eq(err, "--seed \"=/c\": the host path is empty");
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_parse("x=", &h, &d, &err), -EINVAL);
    ck_assert_str_eq(err, "--seed \"x=\": DEST after '=' is empty");
}
END_TEST

START_TEST(seed_reads_files_and_trees_and_merges)
{
    gk_autofree char *dir = temp_dir("seed");
    gk_autofree char *proj = gk_path_join(dir, "proj");
    ck_assert_int_eq(mkdir(proj, 0750), 0);
    gk_autofree char *sub = gk_path_join(proj, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    gk_autofree char *f1 = gk_path_join(proj, "a.c");
    gk_test_write(f1, "int a;\n", 0640);
    gk_autofree char *f2 = gk_path_join(sub, "b.sh");
    gk_test_write(f2, "#!/bin/sh\n", 0755);
    gk_autofree char *lone = gk_path_join(dir, "lone.txt");
    gk_test_write(lone, "lone\n", 0600);

    gk_scratch_list l = {0};
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_seed_read(proj, NULL, 0, &l, &err), 0);
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/etc/lone", 0, &l, &err), 0);
    ck_assert_int_eq(gk_scratch_seed_read(lone, NULL, 0, &l, &err), 0);
    /* The same dir seeded again at another place, and a dir merge. */
    ck_assert_int_eq(gk_scratch_seed_read(sub, "/proj/sub", 0, &l, &err), -EEXIST);
    expect_err(&err, "seed \"%s\": \"/proj/sub/b.sh\" is already in the baseline "
                                    "(from an earlier seed)",
                                    sub);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/proj/sub/lone", 0, &l, &err), 0);
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/lone.txt/x", 0, &l, &err), -EEXIST);
    expect_err(&err, "seed \"%s\": \"/lone.txt/x\" is below the file "
                                    "\"/lone.txt\" of an earlier seed",
                                    lone);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_read(proj, "/etc/lone/inner", 0, &l, &err), -EEXIST);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_validate(&l, 0, 0, NULL, &err), 0);
    static const struct {
        const char *path;
        gk_scratch_kind kind;
        int mode;
        const char *bytes;
    } want[] = {
        {"/proj", GK_SCRATCH_DIR, 0750, NULL},
        {"/proj/a.c", GK_SCRATCH_FILE, 0640, "int a;\n"},
        {"/proj/sub", GK_SCRATCH_DIR, 0755, NULL},
        {"/proj/sub/b.sh", GK_SCRATCH_FILE, 0755, "#!/bin/sh\n"},
        {"/etc/lone", GK_SCRATCH_FILE, 0600, "lone\n"},
        {"/lone.txt", GK_SCRATCH_FILE, 0600, "lone\n"},
        {"/proj/sub/lone", GK_SCRATCH_FILE, 0600, "lone\n"},
    };
    ck_assert_uint_eq(l.n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < l.n; i++) {
        ck_assert_str_eq(l.v[i].path, want[i].path);
        ck_assert_int_eq(l.v[i].kind, want[i].kind);
        ck_assert_int_eq(l.v[i].mode, want[i].mode);
        if (want[i].bytes) {
            ck_assert_uint_eq(l.v[i].len, strlen(want[i].bytes));
            ck_assert_mem_eq(l.v[i].bytes, want[i].bytes, l.v[i].len);
        }
    }
    gk_scratch_list_free(&l);
    /* A dir's contents at the root, and the size bound. */
    ck_assert_int_eq(gk_scratch_seed_read(proj, "/", 0, &l, &err), 0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.v[0].path, "/a.c");
    gk_scratch_list_free(&l);
    ck_assert_int_eq(gk_scratch_seed_read(proj, "/", 10, &l, &err), -EFBIG);
    ck_assert_uint_eq(l.n, 0);
    expect_err(&err, "seed \"%s\": the seeds hold more than 10 bytes", proj);
    /* The bound is on all seeds together. */
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/one", 20, &l, &err), 0);
    ck_assert_int_eq(gk_scratch_seed_read(proj, "/p", 20, &l, &err), -EFBIG);
    expect_err(&err, "seed \"%s\": the seeds hold more than 20 bytes", proj);
    ck_assert_uint_eq(l.n, 1);
    gk_scratch_list_free(&l);
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/x", 4, &l, &err), -EFBIG);
    expect_err(&err, "seed \"%s\": the seeds hold more than 4 bytes", lone);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_read(lone, "/a/../b", 0, &l, &err), -EINVAL);
    expect_err(&err, "seed \"%s\": DEST \"/a/../b\" has a \"..\" component", lone);
    free(gk_steal(&err));
    rm_rf(dir);
}
END_TEST

/* A file larger than the bound is refused by its size, unread: a sparse
 * 4 GiB file against a 1 MiB bound costs no 1 MiB of reading, let alone
 * the 4 GiB (measured by the process's peak resident size, which a read
 * up to the bound would raise by at least the bound; the control: a
 * file at the bound is read and does raise it). */
static long peak_kb(void)
{
    gk_autofree char *st = gk_test_read("/proc/self/status", NULL);
    const char *hwm = st ? strstr(st, "VmHWM:") : NULL;
    return hwm ? atol(hwm + 6) : -1;
}

START_TEST(seed_too_large_is_refused_unread)
{
    gk_autofree char *dir = temp_dir("seedbig");
    gk_autofree char *big = gk_path_join(dir, "big");
    int fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)4 << 30), 0);
    close(fd);
    gk_scratch_list l = {0};
    gk_autofree char *err = NULL;
    long before = peak_kb();
    ck_assert_int_gt(before, 0);
    ck_assert_int_eq(gk_scratch_seed_read(big, "/big", (uint64_t)64 << 20, &l, &err), -EFBIG);
    expect_err(&err, "seed \"%s\": the seeds hold more than 67108864 bytes", big);
    free(gk_steal(&err));
    ck_assert_msg(peak_kb() - before < 16 << 10, "peak grew by %ld KiB", peak_kb() - before);
    ck_assert_uint_eq(l.n, 0);
    /* control: 64 MiB exactly is read (and held) */
    ck_assert_int_eq(truncate(big, (off_t)64 << 20), 0);
    ck_assert_int_eq(gk_scratch_seed_read(big, "/big", (uint64_t)64 << 20, &l, &err), 0);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_msg(peak_kb() - before >= 60 << 10, "peak grew by %ld KiB", peak_kb() - before);
    gk_scratch_list_free(&l);
    rm_rf(dir);
}
END_TEST

START_TEST(seed_refuses_host_symlinks_and_special_files)
{
    gk_autofree char *dir = temp_dir("seedlink");
    gk_autofree char *proj = gk_path_join(dir, "proj");
    ck_assert_int_eq(mkdir(proj, 0755), 0);
    gk_autofree char *f = gk_path_join(proj, "ok.txt");
    gk_test_write(f, "ok\n", 0644);
    gk_autofree char *top = gk_path_join(dir, "top-link");
    ck_assert_int_eq(symlink(proj, top), 0);
    gk_scratch_list l = {0};
    gk_autofree char *err = NULL;
    ck_assert_int_eq(gk_scratch_seed_read(top, NULL, 0, &l, &err), -ELOOP);
    expect_err(&err, "seed \"%s\": \"%s\" is a symlink (seeds never follow or "
                                    "copy host symlinks)",
                                    top, top);
    free(gk_steal(&err));
    /* A trailing slash names the link's target to lstat and open: still
     * the link that is refused, once or twice slashed. */
    gk_autofree char *slashed = gk_concat(top, "/");
    gk_autofree char *twice = gk_concat(top, "//");
    ck_assert_int_eq(gk_scratch_seed_read(slashed, "/p", 0, &l, &err), -ELOOP);
    expect_err(&err, "seed \"%s\": \"%s\" is a symlink (seeds never follow or "
                                    "copy host symlinks)",
                                    slashed, slashed);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_read(twice, "/p", 0, &l, &err), -ELOOP);
    free(gk_steal(&err));
    ck_assert_uint_eq(l.n, 0);
    /* control: the directory itself, slashed, is read */
    gk_autofree char *proj_slashed = gk_concat(proj, "/");
    ck_assert_int_eq(gk_scratch_seed_read(proj_slashed, "/p", 0, &l, &err), 0);
    ck_assert_uint_eq(l.n, 2);
    gk_scratch_list_free(&l);
    gk_autofree char *inner = gk_path_join(proj, "inner-link");
    ck_assert_int_eq(symlink("/etc/passwd", inner), 0);
    ck_assert_int_eq(gk_scratch_seed_read(proj, NULL, 0, &l, &err), -ELOOP);
    expect_err(&err, "seed \"%s\": \"%s/inner-link\" is a symlink (seeds never "
                                    "follow or copy host symlinks)",
                                    proj, proj);
    ck_assert_uint_eq(l.n, 0);
    free(gk_steal(&err));
    ck_assert_int_eq(unlink(inner), 0);
    gk_autofree char *fifo = gk_path_join(proj, "fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(gk_scratch_seed_read(proj, NULL, 0, &l, &err), -EINVAL);
    expect_err(&err, "seed \"%s\": \"%s/fifo\" is not a regular file or directory",
                                    proj, proj);
    free(gk_steal(&err));
    ck_assert_int_eq(gk_scratch_seed_read(fifo, "/p", 0, &l, &err), -EINVAL);
    expect_err(&err, "seed \"%s\": \"%s\" is not a regular file or directory", fifo,
                               fifo);
    ck_assert_uint_eq(l.n, 0);
    rm_rf(dir);
}
END_TEST

/* ---- a real tmpfs, filled */

static int write_id_map(const char *file, const char *map)
{
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, map, strlen(map));
    close(fd);
    return n == (ssize_t)strlen(map) ? 0 : -1;
}

/* In a forked child as the test user: a user and mount namespace, a tmpfs
 * of 64 KiB and 16 inodes at dir. Exit codes: 0 passed, 77 namespaces
 * refused (a skip), else the failing step (message on fd out). */
static int tmpfs_child(const char *dir, uid_t uid, gid_t gid, int out)
{
#define FAIL(...)                                                                                 \
    do {                                                                                          \
        dprintf(out, __VA_ARGS__);                                                                \
        return 1;                                                                                 \
    } while (0)
    if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0))
        FAIL("cannot become uid %d", (int)uid);
    /* setuid cleared dumpable, which makes /proc/self/uid_map root's. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
        dprintf(out, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror(errno));
        return 77;
    }
    char map[64];
    snprintf(map, sizeof(map), "0 %d 1", (int)uid);
    if (write_id_map("/proc/self/setgroups", "deny") < 0 ||
        write_id_map("/proc/self/uid_map", map) < 0)
        FAIL("uid_map: %s", strerror(errno));
    snprintf(map, sizeof(map), "0 %d 1", (int)gid);
    if (write_id_map("/proc/self/gid_map", map) < 0)
        FAIL("gid_map: %s", strerror(errno));
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        FAIL("make / private: %s", strerror(errno));
    for (int round = 0; round < 2; round++) {
        if (mount("scratch", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=65536,nr_inodes=16") < 0) {
            dprintf(out, "mount tmpfs: %s", strerror(errno));
            return 77;
        }
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        gk_scratch_list l = {0};
        gk_scratch_list_add(&l, "/src/a", GK_SCRATCH_FILE, "a\n", 2, -1);
        char *err = NULL;
        if (gk_scratch_validate(&l, 65536, 16, NULL, &err) < 0 ||
            gk_scratch_materialise(fd, &l, &err) < 0)
            FAIL("baseline: %s", err);
        gk_scratch_list_free(&l);
        bool full = true;
        const char *what = "?";
        if (gk_scratch_full(fd, &full, &what, &err) < 0 || full || what)
            FAIL("round %d: full before the fill (%s)", round, err ? err : "");
        int rc = 0;
        if (round == 0) {
            /* bytes: one file grows until ENOSPC */
            int f = openat(fd, "big", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            char buf[4096];
            memset(buf, 'x', sizeof(buf));
            for (int i = 0; i < 64 && rc == 0; i++)
                rc = gk_write_all(f, buf, sizeof(buf));
            close(f);
            if (rc != -ENOSPC)
                FAIL("filling bytes: %d, want ENOSPC", rc);
        } else {
            /* inodes: empty files until ENOSPC */
            int i;
            for (i = 0; i < 64; i++) {
                char name[16];
                snprintf(name, sizeof(name), "n%d", i);
                int f = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (f < 0)
                    break;
                close(f);
            }
            if (i == 64 || errno != ENOSPC)
                FAIL("filling inodes: stopped at %d: %s", i, strerror(errno));
            if (i != 16 - 3)
                FAIL("filling inodes: %d files fit, want 13 (root, /src, /src/a use 3)", i);
        }
        if (gk_scratch_full(fd, &full, &what, &err) < 0 || !full)
            FAIL("round %d: not full after the fill (%s)", round, err ? err : "");
        if (strcmp(what, round == 0 ? "blocks" : "inodes") != 0)
            FAIL("round %d: %s exhausted, want %s", round, what, round == 0 ? "blocks" : "inodes");
        /* A baseline the tmpfs cannot hold fails with ENOSPC, naming it. */
        if (round == 1) {
            int sub = openat(fd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            gk_scratch_list_add(&l, "/more", GK_SCRATCH_FILE, "m", 1, -1);
            rc = gk_scratch_materialise(sub, &l, &err);
            if (rc != -ENOSPC || strcmp(err, "materialising \"/more\": create: No space left on "
                                             "device") != 0)
                FAIL("over-full materialise: %d %s", rc, err ? err : "");
            gk_scratch_list_free(&l);
            close(sub);
        }
        close(fd);
        if (umount(dir) < 0)
            FAIL("umount: %s", strerror(errno));
    }
    return 0;
#undef FAIL
}

START_TEST(full_sees_a_real_tmpfs_exhausted)
{
    uid_t uid;
    gid_t gid;
    ck_assert_msg(gk_test_user(&uid, &gid), "no unprivileged test user");
    gk_autofree char *dir = temp_dir("tmpfs");
    ck_assert_int_eq(chown(dir, uid, gid), 0);
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        _exit(tmpfs_child(dir, uid, gid, pfd[1]));
    }
    close(pfd[1]);
    char msg[1024] = {0};
    (void)!read(pfd[0], msg, sizeof(msg) - 1);
    close(pfd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77) {
        fprintf(stderr, "check_scratch: SKIP full_sees_a_real_tmpfs_exhausted: %s\n", msg);
        rm_rf(dir);
        return;
    }
    ck_assert_msg(WEXITSTATUS(st) == 0, "%s", msg);
    rm_rf(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("scratch");
    TCase *v = tcase_create("validate");
    tcase_add_loop_test(v, validate_table, 0, sizeof(vrows) / sizeof(vrows[0]));
    tcase_add_test(v, validate_nul_depth_and_totals);
    tcase_add_test(v, base64_round_trip_and_strictness);
    suite_add_tcase(s, v);
    TCase *t = tcase_create("tree");
    tcase_add_test(t, materialise_snapshot_round_trip);
    tcase_add_test(t, materialise_snapshot_round_trip_unprivileged);
    tcase_add_test(t, materialise_snapshot_random_round_trips);
    tcase_add_test(t, materialise_never_follows_a_symlink);
    tcase_add_test(t, snapshot_records_symlinks_and_fifos_without_following);
    tcase_add_test(t, full_sees_a_real_tmpfs_exhausted);
    suite_add_tcase(s, t);
    TCase *d = tcase_create("diff");
    tcase_set_timeout(d, 60);
    tcase_add_test(d, diff_each_kind_matches_goldens);
    tcase_add_test(d, diff_quotes_odd_names_and_targets);
    tcase_add_test(d, snapshot_of_an_unreadable_file_as_the_test_user);
    tcase_add_test(d, line_diff_applies_with_patch_and_is_minimal);
    tcase_add_test(d, line_diff_hunks_and_bound);
    tcase_add_test(d, json_budget_drops_whole_entries);
    tcase_add_test(d, unified_budget_cuts_at_a_line_with_the_marker);
    suite_add_tcase(s, d);
    TCase *sd = tcase_create("seed");
    tcase_add_test(sd, seed_parse_and_defaults);
    tcase_add_test(sd, seed_reads_files_and_trees_and_merges);
    tcase_add_test(sd, seed_refuses_host_symlinks_and_special_files);
    tcase_add_test(sd, seed_too_large_is_refused_unread);
    suite_add_tcase(s, sd);
    return s;
}

int main(void)
{
    return gk_test_main(suite());
}
