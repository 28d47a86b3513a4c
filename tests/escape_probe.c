/* escape_probe.c - the attacks of check_escape, run inside the envelope.
 *
 *   escape-probe STEP...
 *
 * Each STEP is VERB[:ARG[:ARG]] and prints one line "VERB=RESULT", where
 * RESULT is OK, ERR:<errno name>, or (steps that run a program in a child)
 * EXIT:<status> / SIG:<n>. Every step runs whatever came before it, so one
 * run holds an attack and its control. Steps:
 *   cp:SRC:DST        copy SRC to DST (created 0755)
 *   run:PATH          fork, execv PATH
 *   ldso:PATH         fork, execv the ELF interpreter on PATH
 *   memfd:PROG        fork; memfd_create(0), PROG copied in, execve its /proc/self/fd name
 *   memfd-fexec:PROG  the same through execveat(fd, "", AT_EMPTY_PATH)
 *   memfd-sealed:PROG memfd_create(MFD_NOEXEC_SEAL), PROG copied in, exec tried
 *                     (OK: created and written, and the exec was refused)
 *   memfd-ldso:PROG   memfd_create(MFD_NOEXEC_SEAL), PROG copied in, the ELF
 *                     interpreter run on its /proc/self/fd name
 *   execveat:PATH     fork; open PATH, execveat(fd, "", AT_EMPTY_PATH)
 *   mapexec:PATH      open PATH (O_NONBLOCK), mmap a page PROT_READ|PROT_EXEC
 *   chmod:MODE:PATH   chmod (octal MODE); fchmod: and fchmodat2: the same
 *   creat:MODE:PATH   open(O_CREAT|O_EXCL|O_WRONLY, MODE)
 *   tmpfile:MODE:DIR  open(DIR, O_TMPFILE|O_WRONLY, MODE)
 *   mknod:MODE:PATH   mknod(S_IFREG|MODE)
 *   setcap:PATH       setxattr security.capability (cap_setuid+ep)
 *   mode:PATH         prints mode=<octal> (the permission bits stat sees)
 *   fork:N            fork N children that wait; prints fork=<how many forked>
 *   chain:N:FILE      a chain of N processes below the probe, each in a session
 *                     of its own and the child of the one before; the last
 *                     appends "built" to FILE, lets the probe go on, and 2 s
 *                     later appends "alive" (a run that ends whole never lets
 *                     it): chain=OK once it is built
 * The attacks of the levels of confinement (check_level):
 *   read:PATH         open O_RDONLY and read a byte
 *   write:PATH        open O_WRONLY|O_CREAT|O_APPEND (0644) and write a byte
 *   list:DIR          opendir and readdir
 *   unlink:PATH       unlink(2); rename:FROM:TO rename(2); mkdir:PATH mkdir(2), 0755
 *   parentfd:N        open /proc/PPID/fd/N for writing (the parent's descriptor N)
 *   fdtype:N          what descriptor N is: reg, dir, fifo, chr, sock or other
 *   cmd:PROG ARG...   fork, execv PROG with the space-separated arguments
 *   tcp:IP:PORT       connect a TCP socket; udp:IP:PORT sendto a datagram
 *   abstract:NAME     connect a Unix stream socket to the abstract name
 *   unix:PATH         connect a Unix stream socket to the socket file
 *   unix-high:PATH    the same, the socket made by socket(2) with the family
 *                     AF_UNIX | 1 << 32 (the kernel reads 32 bits of it)
 *   socketpair        socketpair(AF_UNIX)
 *   socks:PATH        connect a Unix stream socket to PATH and send a SOCKS5
 *                     greeting: OK when answered 05 00 (a grantkit proxy),
 *                     NOANSWER when connected but not answered in 2 s
 *   dgram-pair:PATH   socketpair(AF_UNIX, SOCK_DGRAM), and sendto the datagram
 *                     socket file PATH from one end
 *   unix-flip:PROXY:OTHER  the TOCTOU race on a supervised connect(2): this
 *                     thread connects through one sockaddr holding PROXY
 *                     while another turns its sun_path into OTHER 0-300 us
 *                     after the call began (until each answer came 50 times,
 *                     at most 20,000 tries or 60 s), with a SOCKS5 greeting
 *                     on each connection; prints
 *                     unix-flip=proxy:N eacces:N elsewhere:N errors:N (answered
 *                     05 00, refused EACCES, connected but not answered in 2 s,
 *                     any other failure)
 *   kill:PID:SIG      kill(PID, SIG); killchild: fork a child and SIGKILL it
 *   ptrace:PID        PTRACE_ATTACH (detached again if it worked)
 *   tiocsti           ioctl(0, TIOCSTI, " "); winsize: ioctl(0, TIOCGWINSZ)
 *   kdskbsent         ioctl(0, KDSKBSENT): a console function key's string
 *   addkey, keysearch, requestkey   add_key(2), keyctl(KEYCTL_SEARCH) of the
 *                     user keyring, request_key(2)
 *   userns            unshare(CLONE_NEWUSER) in a child
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <arpa/inet.h>
#include <linux/keyctl.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

#if defined(__x86_64__)
#define LDSO "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
#else
#define LDSO "/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
#endif

static const char *verb;

static void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result(const char *fmt, ...)
{
    va_list ap;
    printf("%s=", verb);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static void err_result(int err)
{
    const char *n = strerrorname_np(err);
    result("ERR:%s", n ? n : "?");
}

static int rc_result(long rc)
{
    if (rc < 0)
        err_result(errno);
    else
        result("OK");
    return rc < 0 ? -1 : 0;
}

/* PROG's bytes into fd (0 on success). */
static int copy_into(int fd, const char *prog)
{
    int in = open(prog, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(fd, buf, (size_t)n) != n) {
            close(in);
            return -1;
        }
    close(in);
    return n < 0 ? -1 : 0;
}

/* A child that tries to exec; the status (or the exec's errno, sent
 * back on a pipe) is the result. */
typedef void (*exec_fn)(const char *arg);

static void in_child(exec_fn fn, const char *arg)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        err_result(errno);
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1); /* the program's own output is not the probe's */
        fn(arg);
        int err = errno;
        if (write(p[1], &err, sizeof(err)) < 0)
            _exit(121);
        _exit(120);
    }
    close(p[1]);
    int err = 0, st = 0;
    ssize_t got = read(p[0], &err, sizeof(err));
    close(p[0]);
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof(err))
        err_result(err);
    else if (WIFSIGNALED(st))
        result("SIG:%d", WTERMSIG(st));
    else
        result("EXIT:%d", WEXITSTATUS(st));
}

static char *const no_env[] = {NULL};

static void do_run(const char *path)
{
    char *const argv[] = {(char *)path, NULL};
    execve(path, argv, no_env);
}

static void do_ldso(const char *path)
{
    char *const argv[] = {(char *)LDSO, (char *)path, NULL};
    execve(LDSO, argv, no_env);
}

static int memfd_with(const char *prog, unsigned flags)
{
    int fd = memfd_create("probe", flags);
    if (fd < 0)
        return -1;
    if (copy_into(fd, prog) < 0)
        return -1;
    return fd;
}

static void do_memfd(const char *prog)
{
    int fd = memfd_with(prog, 0);
    if (fd < 0)
        return;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    char *const argv[] = {path, NULL};
    execve(path, argv, no_env);
}

static void do_memfd_fexec(const char *prog)
{
    int fd = memfd_with(prog, 0);
    if (fd < 0)
        return;
    char *const argv[] = {(char *)prog, NULL};
    syscall(SYS_execveat, fd, "", argv, no_env, AT_EMPTY_PATH);
}

static void do_memfd_ldso(const char *prog)
{
    int fd = memfd_with(prog, MFD_NOEXEC_SEAL);
    if (fd < 0)
        return;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    do_ldso(path);
}

static void do_execveat(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    char *const argv[] = {(char *)path, NULL};
    syscall(SYS_execveat, fd, "", argv, no_env, AT_EMPTY_PATH);
}

static void memfd_sealed(const char *prog)
{
    int fd = memfd_with(prog, MFD_NOEXEC_SEAL | MFD_CLOEXEC);
    if (fd < 0) {
        err_result(errno);
        return;
    }
    char *const argv[] = {(char *)prog, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        syscall(SYS_execveat, fd, "", argv, no_env, AT_EMPTY_PATH);
        _exit(errno == EACCES ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    close(fd);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        result("OK");
    else
        result("EXECUTED");
}

static void copy_file(const char *src, const char *dst)
{
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        err_result(errno);
        return;
    }
    int rc = copy_into(out, src);
    int err = errno;
    close(out);
    if (rc < 0)
        err_result(err);
    else
        result("OK");
}

static void forks(long n)
{
    pid_t *kids = calloc((size_t)n, sizeof(*kids));
    long made = 0;
    for (; made < n; made++) {
        kids[made] = fork();
        if (kids[made] == 0) {
            pause();
            _exit(0);
        }
        if (kids[made] < 0)
            break;
    }
    for (long i = 0; i < made; i++)
        kill(kids[i], SIGKILL);
    for (long i = 0; i < made; i++)
        waitpid(kids[i], NULL, 0);
    result("%ld", made);
    free(kids);
}

/* VFS_CAP_REVISION_2 with CAP_SETUID (7) permitted and effective. */
static int set_capability(const char *path)
{
    struct {
        unsigned magic_etc;
        struct {
            unsigned permitted, inheritable;
        } data[2];
    } cap = {0x02000000 | 1 /* effective */, {{1u << 7, 0}, {0, 0}}};
    return setxattr(path, "security.capability", &cap, sizeof(cap), 0);
}

static void do_cmd(const char *line)
{
    char *copy = strdup(line), *save = NULL, *argv[64];
    size_t n = 0;
    for (char *w = strtok_r(copy, " ", &save); w && n < 63; w = strtok_r(NULL, " ", &save))
        argv[n++] = w;
    argv[n] = NULL;
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execv(argv[0], argv);
}

static void inet(const char *host, const char *port, bool stream)
{
    if (!port) {
        result("BAD");
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    inet_pton(AF_INET, host, &sa.sin_addr);
    int s = socket(AF_INET, (stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
    if (s < 0) {
        err_result(errno);
        return;
    }
    long rc = stream ? connect(s, (struct sockaddr *)&sa, sizeof(sa))
                     : sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa));
    rc_result(rc);
    close(s);
}

static void unix_connect(const char *name, bool abstract, bool high)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    if (len + 2 > sizeof(sa.sun_path)) {
        result("BAD");
        return;
    }
    memcpy(sa.sun_path + abstract, name, len);
    /* high: the family with bits above the 32 the kernel reads */
    int s = high ? (int)syscall(SYS_socket, (long)AF_UNIX | (1L << 32), SOCK_STREAM | SOCK_CLOEXEC,
                                0)
                 : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        err_result(errno);
        return;
    }
    rc_result(connect(s, (struct sockaddr *)&sa,
                      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + len +
                                  !abstract)));
    close(s);
}

static void dgram_pair(const char *path)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
        err_result(errno);
        return;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
    rc_result(sendto(sv[0], "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)));
    close(sv[0]);
    close(sv[1]);
}

/* A connected socket's answer to a SOCKS5 greeting (no authentication):
 * a grantkit proxy says 05 00. */
static bool socks_answers(int s)
{
    unsigned char greet[3] = {5, 1, 0}, answer[2] = {0, 0};
    struct pollfd p = {s, POLLIN, 0};
    return send(s, greet, 3, MSG_NOSIGNAL) == 3 && poll(&p, 1, 2000) == 1 &&
           read(s, answer, 2) == 2 && answer[0] == 5 && answer[1] == 0;
}

static void socks(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        err_result(errno);
    else
        result(socks_answers(s) ? "OK" : "NOANSWER");
    if (s >= 0)
        close(s);
}

static struct sockaddr_un flip_sa;
static char flip_paths[2][sizeof(flip_sa.sun_path)];
static int flip_stop, flip_go, flip_done;
static long flip_delay_ns;

static long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Once the other thread is about to connect through flip_sa (holding
 * PROXY), wait flip_delay_ns and turn it into OTHER: early, before the
 * supervisor reads it; late, after it read it and while it connects (when
 * a supervisor that let the kernel read the address again would lose). */
static void *flipper(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&flip_stop, __ATOMIC_ACQUIRE)) {
        if (!__atomic_load_n(&flip_go, __ATOMIC_ACQUIRE))
            continue;
        long until = now_ns() + __atomic_load_n(&flip_delay_ns, __ATOMIC_RELAXED);
        while (now_ns() < until)
            ;
        memcpy(flip_sa.sun_path, flip_paths[1], sizeof(flip_sa.sun_path));
        __atomic_store_n(&flip_go, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&flip_done, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void unix_flip(const char *proxy, const char *other)
{
    if (!other || strlen(proxy) >= sizeof(flip_paths[0]) || strlen(other) >= sizeof(flip_paths[0])) {
        result("BAD");
        return;
    }
    flip_sa.sun_family = AF_UNIX;
    strcpy(flip_paths[0], proxy);
    strcpy(flip_paths[1], other);
    pthread_t t;
    if (pthread_create(&t, NULL, flipper, NULL) != 0) {
        result("BAD");
        return;
    }
    unsigned long via_proxy = 0, eacces = 0, elsewhere = 0, errors = 0;
    time_t until = time(NULL) + 60;
    for (unsigned i = 0; i < 20000 && (via_proxy < 50 || eacces < 50) && time(NULL) < until;
         i++) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
            errors++;
            continue;
        }
        memcpy(flip_sa.sun_path, flip_paths[0], sizeof(flip_sa.sun_path));
        /* 0 to 300 us, spread over the tries */
        __atomic_store_n(&flip_delay_ns, (long)((i * 7919u) % 300000u), __ATOMIC_RELAXED);
        __atomic_store_n(&flip_done, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&flip_go, 1, __ATOMIC_RELEASE);
        int rc = connect(s, (struct sockaddr *)&flip_sa, sizeof(flip_sa));
        int err = errno;
        while (!__atomic_load_n(&flip_done, __ATOMIC_ACQUIRE))
            ;
        if (rc < 0) {
            if (err == EACCES)
                eacces++;
            else
                errors++;
            close(s);
            continue;
        }
        if (socks_answers(s))
            via_proxy++;
        else
            elsewhere++;
        close(s);
    }
    __atomic_store_n(&flip_stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    result("proxy:%lu eacces:%lu elsewhere:%lu errors:%lu", via_proxy, eacces, elsewhere, errors);
}

static void chain(long n, const char *file)
{
    int p[2];
    if (pipe(p) < 0) {
        err_result(errno);
        return;
    }
    pid_t top = fork();
    if (top < 0) {
        err_result(errno);
        return;
    }
    if (top == 0) {
        close(p[0]);
        for (long i = 0; i < n; i++) {
            setsid();
            pid_t c = fork();
            if (c < 0)
                _exit(1); /* the probe reads EOF: no chain */
            if (c > 0) {
                close(p[1]);
                for (;;)
                    pause();
            }
        }
        setsid();
        int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "built\n", 6) != 6 || write(p[1], "x", 1) != 1)
            _exit(1);
        close(p[1]);
        sleep(2);
        if (write(fd, "alive\n", 6) != 6)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    char c;
    ssize_t got;
    do
        got = read(p[0], &c, 1);
    while (got < 0 && errno == EINTR);
    close(p[0]);
    if (got == 1)
        result("OK");
    else
        result("BAD");
}

static void level_step(const char *step, const char *a, const char *b)
{
    if (strcmp(step, "read") == 0) {
        char c;
        int fd = open(a, O_RDONLY | O_CLOEXEC);
        rc_result(fd < 0 ? -1 : read(fd, &c, 1));
    } else if (strcmp(step, "write") == 0) {
        int fd = open(a, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        rc_result(fd < 0 ? -1 : write(fd, "x", 1));
    } else if (strcmp(step, "parentfd") == 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getppid(), atoi(a));
        rc_result(open(path, O_WRONLY | O_CLOEXEC));
    } else if (strcmp(step, "fdtype") == 0) {
        struct stat st;
        if (fstat(atoi(a), &st) < 0)
            err_result(errno);
        else
            result("%s", S_ISREG(st.st_mode)    ? "reg"
                         : S_ISDIR(st.st_mode)  ? "dir"
                         : S_ISFIFO(st.st_mode) ? "fifo"
                         : S_ISCHR(st.st_mode)  ? "chr"
                         : S_ISSOCK(st.st_mode) ? "sock"
                                                : "other");
    } else if (strcmp(step, "mkdir") == 0) {
        rc_result(mkdir(a, 0755));
    } else if (strcmp(step, "unlink") == 0) {
        rc_result(unlink(a));
    } else if (strcmp(step, "rename") == 0) {
        rc_result(b ? rename(a, b) : -1);
    } else if (strcmp(step, "list") == 0) {
        DIR *d = opendir(a);
        rc_result(d && readdir(d) ? 0 : -1);
    } else if (strcmp(step, "cmd") == 0) {
        in_child(do_cmd, a);
    } else if (strcmp(step, "tcp") == 0 || strcmp(step, "udp") == 0) {
        inet(a, b, step[0] == 't');
    } else if (strcmp(step, "abstract") == 0 || strcmp(step, "unix") == 0 ||
               strcmp(step, "unix-high") == 0) {
        unix_connect(a, step[0] == 'a', strcmp(step, "unix-high") == 0);
    } else if (strcmp(step, "socketpair") == 0) {
        int sv[2];
        rc_result(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    } else if (strcmp(step, "socks") == 0 && a) {
        socks(a);
    } else if (strcmp(step, "dgram-pair") == 0 && a) {
        dgram_pair(a);
    } else if (strcmp(step, "unix-flip") == 0 && a) {
        unix_flip(a, b);
    } else if (strcmp(step, "kill") == 0) {
        rc_result(kill((pid_t)atoi(a), b ? atoi(b) : 0));
    } else if (strcmp(step, "killchild") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            pause();
            _exit(0);
        }
        rc_result(kill(pid, SIGKILL));
        waitpid(pid, NULL, 0);
    } else if (strcmp(step, "ptrace") == 0) {
        long rc = ptrace(PTRACE_ATTACH, (pid_t)atoi(a), NULL, NULL);
        rc_result(rc);
        if (rc == 0)
            ptrace(PTRACE_DETACH, (pid_t)atoi(a), NULL, NULL);
    } else if (strcmp(step, "tiocsti") == 0) {
        char c = ' ';
        rc_result(ioctl(0, TIOCSTI, &c));
    } else if (strcmp(step, "kdskbsent") == 0) {
        unsigned char kbs[520] = {0}; /* struct kbsentry: the key, then its string */
        rc_result(ioctl(0, 0x4B49 /* KDSKBSENT */, kbs));
    } else if (strcmp(step, "winsize") == 0) {
        struct winsize ws;
        rc_result(ioctl(0, TIOCGWINSZ, &ws));
    } else if (strcmp(step, "addkey") == 0) {
        rc_result(syscall(SYS_add_key, "user", "grantkit:probe", "x", (size_t)1,
                          KEY_SPEC_PROCESS_KEYRING));
    } else if (strcmp(step, "keysearch") == 0) {
        rc_result(syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user",
                          "grantkit:probe", 0));
    } else if (strcmp(step, "requestkey") == 0) {
        rc_result(syscall(SYS_request_key, "user", "grantkit:probe", NULL, 0));
    } else if (strcmp(step, "userns") == 0) {
        int p[2];
        if (pipe(p) < 0) {
            err_result(errno);
            return;
        }
        pid_t pid = fork();
        if (pid == 0) {
            int err = unshare(CLONE_NEWUSER) < 0 ? errno : 0;
            if (write(p[1], &err, sizeof(err)) < 0)
                _exit(1);
            _exit(0);
        }
        int err = -1;
        if (read(p[0], &err, sizeof(err)) != (ssize_t)sizeof(err))
            err = EIO;
        waitpid(pid, NULL, 0);
        close(p[0]);
        close(p[1]);
        if (err)
            err_result(err);
        else
            result("OK");
    } else {
        fprintf(stderr, "escape-probe: bad step %s\n", step);
        exit(2);
    }
}

static bool is_level_step(const char *step)
{
    static const char *const steps[] = {"read",      "write",     "list",       "cmd",
                                        "unlink",    "rename",    "parentfd",  "mkdir",
                                        "fdtype",
                                        "tcp",       "udp",       "abstract",   "unix",
                                        "unix-high", "socketpair", "kill",      "killchild",
                                        "dgram-pair", "unix-flip", "socks",
                                        "ptrace",    "tiocsti",   "kdskbsent",  "winsize",    "userns",
                                        "addkey",    "keysearch", "requestkey"};
    for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++)
        if (strcmp(step, steps[i]) == 0)
            return true;
    return false;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        char *step = strdup(argv[i]);
        char *a = strchr(step, ':'), *b = NULL;
        if (a) {
            *a++ = '\0';
            b = strchr(a, ':');
            if (b)
                *b++ = '\0';
        }
        verb = step;
        if (is_level_step(step)) {
            /* cmd: takes the rest of the step whole (its words may hold ':') */
            if (strcmp(step, "cmd") == 0 && a && b)
                a[strlen(a)] = ':';
            level_step(step, a, b);
            free(step);
            continue;
        }
        mode_t mode = a ? (mode_t)strtoul(a, NULL, 8) : 0;
        if (strcmp(step, "cp") == 0 && b)
            copy_file(a, b);
        else if (strcmp(step, "run") == 0 && a)
            in_child(do_run, a);
        else if (strcmp(step, "ldso") == 0 && a)
            in_child(do_ldso, a);
        else if (strcmp(step, "memfd") == 0 && a)
            in_child(do_memfd, a);
        else if (strcmp(step, "memfd-fexec") == 0 && a)
            in_child(do_memfd_fexec, a);
        else if (strcmp(step, "memfd-ldso") == 0 && a)
            in_child(do_memfd_ldso, a);
        else if (strcmp(step, "memfd-sealed") == 0 && a)
            memfd_sealed(a);
        else if (strcmp(step, "execveat") == 0 && a)
            in_child(do_execveat, a);
        else if (strcmp(step, "chmod") == 0 && b)
            rc_result(chmod(b, mode));
        else if (strcmp(step, "mapexec") == 0 && a) {
            int fd = open(a, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
            void *m = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
            rc_result(m == MAP_FAILED ? -1 : 0);
        } else if (strcmp(step, "fchmod") == 0 && b) {
            int fd = open(b, O_RDONLY | O_CLOEXEC);
            rc_result(fd < 0 ? fd : fchmod(fd, mode));
        } else if (strcmp(step, "fchmodat2") == 0 && b)
            rc_result(syscall(452 /* fchmodat2, Linux 6.6 */, AT_FDCWD, b, mode, 0));
        else if (strcmp(step, "creat") == 0 && b)
            rc_result(open(b, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode));
        else if (strcmp(step, "tmpfile") == 0 && b)
            rc_result(open(b, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
        else if (strcmp(step, "mknod") == 0 && b)
            rc_result(mknod(b, S_IFREG | mode, 0));
        else if (strcmp(step, "setcap") == 0 && a)
            rc_result(set_capability(a));
        else if (strcmp(step, "mode") == 0 && a) {
            struct stat st;
            if (stat(a, &st) < 0)
                err_result(errno);
            else
                result("%04o", (unsigned)(st.st_mode & 07777));
        } else if (strcmp(step, "fork") == 0 && a)
            forks(strtol(a, NULL, 10));
        else if (strcmp(step, "chain") == 0 && b)
            chain(strtol(a, NULL, 10), b);
        else {
            fprintf(stderr, "escape-probe: bad step %s\n", argv[i]);
            return 2;
        }
        free(step);
    }
    return 0;
}
