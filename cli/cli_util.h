/* cli_util.h - what grantkit's command-line programs share: messages,
 * reading input, writing output (atomic files: grant_write_file_atomic), tiny
 * JSON printing.
 *
 * The programs link only the public libgrant API (grant/grant.h), so these
 * helpers stand on libc and that API alone.
 */
#ifndef GK_CLI_UTIL_H
#define GK_CLI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "grant/grant.h"

/* Exit statuses shared by every grantc subcommand (cli.md). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_DIFFERENT = 1, /* denied, a difference, a --check mismatch */
    CLI_EXIT_USAGE = 2,     /* usage or input error */
};

/* Set once from main; prefixes every message ("grantc: ..."). */
extern const char *cli_progname;

/* "PROG: MESSAGE\n" on stderr, for messages that have no source position. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* As cli_error, then "Try 'PROG --help' for more information." */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print every diagnostic exactly as the library rendered it, on stderr.
 * Returns the number of errors among them. */
size_t cli_print_diags(const grant_diags *d);

/* grant_write_file_atomic with the signals that end a CLI (INT, TERM,
 * HUP, QUIT) held while its temporary file exists, so an interrupt never
 * leaves DIR/.BASE.NNNNNNNN behind (they take effect once it is renamed
 * or removed). 0 or -errno. */
int cli_write_file(const char *path, const char *data, size_t len);

/* Write all bytes to a stream and flush it; 0 or -errno. */
int cli_write_stream(FILE *f, const char *data, size_t len);

/* Print s as a JSON string literal (quotes included), by the library's
 * one rule (grant_json_string), so the CLIs' JSON matches the library's. */
void cli_json_string(FILE *f, const char *s);

/* true iff the name ends in .yaml or .yml (the library's surface rule). */
bool cli_is_yaml_name(const char *name);

/* --version's line on how this program carries its libraries (configure
 * --disable-static-deps), printed after grant_build_info's. */
void cli_print_linkage(void);

#endif
