/* frame_adversary.c - a test-only frame child that speaks the protocol
 * wrongly on purpose (frame-protocol.md §5), one way per mode:
 *
 *   frame-adversary MODE [ARG]
 *
 * check_frame.c runs it through the supervisor (gk_supervise with this
 * program as the child, the library option, never a CLI flag) and holds
 * each misbehaviour to its failureKind and message. It reads the request
 * first (to EOF) unless the mode says otherwise. Not part of grantkit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char ok_result[] =
    "{\"type\":\"run-result\",\"v\":1,\"ok\":true,\"exitCode\":0,\"failureKind\":\"none\","
    "\"errorMessage\":\"\",\"output\":\"%s\",\"errorOutput\":\"\",\"encoding\":\"utf8\","
    "\"diffRequested\":false,\"diff\":null,\"truncated\":false,\"outputTruncatedBytes\":0,"
    "\"errorOutputTruncatedBytes\":0,\"stats\":{\"wallMs\":1,\"userMs\":0,\"sysMs\":0,"
    "\"maxRssBytes\":0},\"enforcement\":{\"level\":\"namespaces\",\"unenforced\":[]},"
    "\"network\":null}";

static void put(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(1, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(99);
        c += w;
        n -= (size_t)w;
    }
}

static void prefix(unsigned long len)
{
    unsigned char b[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
                          (unsigned char)(len >> 8), (unsigned char)len};
    put(b, 4);
}

static void frame(const char *payload)
{
    prefix(strlen(payload));
    put(payload, strlen(payload));
}

static char *result_with(const char *output)
{
    char *s;
    if (asprintf(&s, ok_result, output) < 0)
        _exit(98);
    return s;
}

static void drain_stdin(void)
{
    char b[65536];
    for (;;) {
        ssize_t n = read(0, b, sizeof(b));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
    }
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) < 0 && errno == EINTR) {
    }
}

static void die_by(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(97);
}

/* What the child was given: its descriptors, environment size, cwd. */
static void inspect(void)
{
    char out[512] = "fds=";
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int self = d ? dirfd(d) : -1;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != self) {
            strcat(out, e->d_name);
            strcat(out, ",");
        }
    if (d)
        closedir(d);
    size_t nenv = 0;
    for (char **p = environ; p && *p; p++)
        nenv++;
    char cwd[256] = "?";
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "?");
    char tail[300];
    snprintf(tail, sizeof(tail), " env=%zu cwd=%s", nenv, cwd);
    strcat(out, tail);
    char *r = result_with(out);
    frame(r);
    free(r);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : NULL;
    if (strcmp(mode, "oversize") == 0) {
        drain_stdin();
        prefix(0xFFFFFFF0UL); /* ~4 GiB declared */
        put("{", 1);
        sleep_ms(10000);
        return 0;
    }
    drain_stdin();
    if (strcmp(mode, "eof-prefix") == 0) {
        put("\0\0", 2);
        return 0;
    }
    if (strcmp(mode, "eof-payload") == 0) {
        prefix(100);
        put("{\"type\":", 8);
        return 0;
    }
    if (strcmp(mode, "zero") == 0) {
        prefix(0);
        sleep_ms(10000);
        return 0;
    }
    if (strcmp(mode, "non-json") == 0) {
        frame("this is not json");
        return 0;
    }
    if (strcmp(mode, "non-object") == 0) {
        frame("[1,2,3]");
        return 0;
    }
    if (strcmp(mode, "wrong-type") == 0) {
        frame("{\"type\":\"run-request\",\"v\":1}");
        return 0;
    }
    if (strcmp(mode, "wrong-v") == 0) {
        frame("{\"type\":\"run-result\",\"v\":2,\"ok\":true}");
        return 0;
    }
    if (strcmp(mode, "schema") == 0) {
        char *r = result_with("x");
        char *at = strstr(r, "\"truncated\":false");
        memcpy(at, "\"truncatex\"", 11); /* an unknown field */
        frame(r);
        free(r);
        return 0;
    }
    if (strcmp(mode, "claim-crash") == 0) {
        frame("{\"type\":\"run-result\",\"v\":1,\"ok\":false,\"exitCode\":null,"
              "\"failureKind\":\"child-process-crash\",\"errorMessage\":\"I crashed\","
              "\"output\":\"\",\"errorOutput\":\"\",\"encoding\":\"utf8\","
              "\"diffRequested\":false,\"diff\":null,\"truncated\":false,"
              "\"outputTruncatedBytes\":0,\"errorOutputTruncatedBytes\":0,"
              "\"stats\":{\"wallMs\":1,\"userMs\":0,\"sysMs\":0,\"maxRssBytes\":0},"
              "\"enforcement\":null,\"network\":null}");
        return 0;
    }
    if (strcmp(mode, "segv") == 0) {
        fputs("about to fault\n", stderr);
        die_by(SIGSEGV);
    }
    if (strcmp(mode, "abrt") == 0)
        abort();
    if (strcmp(mode, "kill-self") == 0)
        die_by(SIGKILL);
    if (strcmp(mode, "hang") == 0) {
        /* A grandchild as bwrap's envelope would be: it dies with its
         * parent (--die-with-parent); ARG gets its pid. */
        pid_t g = fork();
        if (g == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;)
                pause();
        }
        FILE *f = arg ? fopen(arg, "w") : NULL;
        if (f) {
            fprintf(f, "%d\n", (int)g);
            fclose(f);
        }
        for (;;)
            pause();
    }
    if (strcmp(mode, "stderr-flood") == 0) {
        static char chunk[1 << 16];
        memset(chunk, 'e', sizeof(chunk));
        for (long i = 0; i < (1L << 30) / (long)sizeof(chunk); i++)
            if (write(2, chunk, sizeof(chunk)) < 0)
                return 96;
        fputs("\nthe last words \xc3\xa9\n", stderr);
        return 3;
    }
    if (strcmp(mode, "late-result") == 0) {
        sleep_ms(arg ? atol(arg) : 500);
        char *r = result_with("late");
        frame(r);
        free(r);
        for (;;)
            pause();
    }
    if (strcmp(mode, "result-hang") == 0) {
        char *r = result_with("then-hang");
        frame(r);
        free(r);
        for (;;)
            pause();
    }
    if (strcmp(mode, "bytewise") == 0) {
        char *r = result_with("bytewise");
        size_t n = strlen(r);
        prefix(n);
        for (size_t i = 0; i < n; i++)
            put(r + i, 1);
        free(r);
        return 0;
    }
    if (strcmp(mode, "inspect") == 0) {
        inspect();
        return 0;
    }
    if (strcmp(mode, "ok") == 0) {
        char *r = result_with("fine");
        frame(r);
        free(r);
        return 0;
    }
    fprintf(stderr, "frame-adversary: unknown mode '%s'\n", mode);
    return 2;
}
