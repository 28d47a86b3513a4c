/* grantrun_net.h - what grantrun prints and writes of a run's network
 * decisions (network.md §2): one stderr line per refused destination at
 * the end of the run, and the `network` member of --report FILE.
 *
 * Ownership: nothing is kept; the log stays the caller's.
 */
#ifndef GRANTRUN_NET_H
#define GRANTRUN_NET_H

#include <stdbool.h>

#include "runtime/launch.h"

/* "grantrun: net: refused HOST:PORT (RULE)" once per destination. */
void grantrun_net_print_refusals(const gk_net_log *log);
/* Can --report FILE be written (its directory exists and is writable)?
 * Asked before the run, so a bad FILE stops it before anything runs;
 * false after saying why. */
bool grantrun_net_report_writable(const char *path);
/* The run's record written atomically to path: the members of record
 * (grant_enforcement_json's object, or NULL when no level was chosen),
 * then "network": the decisions (null without an allowlist). Returns 0
 * or -errno. */
int grantrun_net_write_report(const char *path, const char *record, const gk_net_log *log);

#endif
