/* cli_util.c - messages, input, output and JSON strings for the CLIs. */
#include "config.h"
#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_progname = "grantc";

static void vmessage(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", cli_progname);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname);
}

size_t cli_print_diags(const grant_diags *d)
{
    size_t n = grant_diags_count(d);
    for (size_t i = 0; i < n; i++) {
        char *text = grant_diags_render(d, i);
        if (!text)
            continue;
        size_t len = strlen(text);
        fputs(text, stderr);
        if (len == 0 || text[len - 1] != '\n')
            fputc('\n', stderr);
        free(text);
    }
    return grant_diags_errors(d);
}

int cli_write_file(const char *path, const char *data, size_t len)
{
    sigset_t hold;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    sigaddset(&hold, SIGQUIT);
    return grant_write_file_atomic_holding(path, data, len, &hold);
}

int cli_write_stream(FILE *f, const char *data, size_t len)
{
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, f) != len)
        return errno ? -errno : -EIO;
    if (fflush(f) != 0)
        return errno ? -errno : -EIO;
    return 0;
}

void cli_json_string(FILE *f, const char *s)
{
    char *lit = grant_json_string(s);
    fputs(lit, f);
    free(lit);
}

bool cli_is_yaml_name(const char *name)
{
    size_t n = strlen(name);
    return (n >= 5 && strcmp(name + n - 5, ".yaml") == 0) ||
           (n >= 4 && strcmp(name + n - 4, ".yml") == 0);
}

void cli_print_linkage(void)
{
#ifdef GK_STATIC_LIBS
    printf("linked: static copies of %s (their security updates need a rebuild of grantkit; "
           "configure --disable-static-deps links the shared ones)\n",
           GK_STATIC_LIBS);
#else
    printf("linked: the shared libraries\n");
#endif
}
