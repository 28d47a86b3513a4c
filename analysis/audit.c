/* audit.c - `grantc audit`: the catalogue of findings about a compiled
 * policy (cli.md), and the grant_findings accessors. The checks are
 * audit_checks.c, the JSON and SARIF renderers audit_render.c.
 *
 * Every finding has a stable id. Ids are never renumbered or reused; a new
 * kind of finding takes the next number.
 *
 * | id    | name                      | severity | what it says                                   |
 * |-------|---------------------------|----------|------------------------------------------------|
 * | GK001 | deputy                    | warning  | a prefix is both writable and exec-admitted    |
 * | GK002 | shadowed                  | warning  | a rule cannot change any decision (a deny or   |
 * |       |                           |          | veto covers it, another layer grants nothing   |
 * |       |                           |          | there, a same-layer rule already covers it)    |
 * | GK003 | no-effect                 | warning  | a deny/readonly entry lies outside every       |
 * |       |                           |          | readable (writable) region                     |
 * | GK004 | source-writable           | warning  | a policy source lies in a writable region      |
 * | GK005 | unix-socket               | warning  | a Unix socket lies in a readable region (host) |
 * | GK006 | path-writable             | warning  | xdg:bin or a PATH directory is writable        |
 * | GK007 | shell-capable             | warning  | a subcommand list on a program that can run    |
 * |       |                           |          | arbitrary commands through its arguments       |
 * | GK008 | fidelity-elf-loader       | note     | Linux, exec restricted: ld.so loads readable   |
 * |       |                           |          | binaries that are not admitted                 |
 * | GK009 | fidelity-windows-exec     | note     | Windows: exec has no OS filter                 |
 * | GK010 | fidelity-landlock-nesting | note     | Linux: a deny/readonly inside an allowed       |
 * |       |                           |          | region is carried by bwrap masks, not Landlock |
 * | GK011 | fidelity-subcommands      | note     | argument lists are enforced only by the gate   |
 * | GK012 | fidelity-absent-mask      | note     | Linux host: an absent deny under a read-only   |
 * |       |                           |          | bind gets no mask                              |
 * | GK013 | fidelity-windows-rename   | note     | Windows: a rename keeps the ACE of the old     |
 * |       |                           |          | place                                          |
 * | GK014 | git-writable              | warning  | a git dir in a writable region: what git runs  |
 * |       |                           |          | commands from (config, hooks, commondir, ...)  |
 * |       |                           |          | is not all readonly                            |
 * | GK015 | build-file-shadowed       | note     | a readonly Makefile whose GNUmakefile or       |
 * |       |                           |          | makefile can be written (make reads it first)  |
 * | GK017 | net-shared-host           | warning  | a wildcard destination over a shared hosting   |
 * |       |                           |          | domain (anyone can publish a host under it)    |
 *
 * (GK016 is taken by the Seatbelt work, git-config-unreadable, in flight on
 * another branch: the net finding took the next free number after it.)
 *
 * Nothing is an error: an audit reports risks and dead rules in a policy
 * that compiles; `--fail-on warning` makes warnings fail a CI job. Dead
 * rules (GK002, GK003) of a policy included along the policy path are not
 * reported: a bundled baseline denies ~/.ssh for every context, and its
 * user cannot edit it.
 */
#include "analysis/analysis.h"

#include <errno.h>
#include <stdlib.h>

/* ---- the rule table (SARIF tool.driver.rules; order = ruleIndex) -------- */

const gk_rule gk_audit_rules[GK_R_COUNT] = {
    [GK_R_DEPUTY] = {"GK001", "deputy", GRANT_SEVERITY_WARNING,
                  "Writable exec-admitted prefix",
                  "A path prefix is both writable and admitted for execution, so a confined "
                  "command can write a program there and then run it: the exec restriction "
                  "no longer limits what runs.",
                  "Stop admitting the prefix for execution (admit the programs by name or by "
                  "file elsewhere), or stop granting write access to it."},
    [GK_R_SHADOWED] = {"GK002", "shadowed", GRANT_SEVERITY_WARNING,
                    "Rule shadowed or unreachable",
                    "A rule cannot change any decision of the stack: a deny or veto of some "
                    "layer covers all of it (every deny and veto wins), another layer grants "
                    "nothing it could widen (layers intersect), or another rule already says "
                    "the same.",
                    "Remove the rule, or fix the rule or layer that shadows it; a dead rule "
                    "usually means the policy does not do what its author thinks."},
    [GK_R_NO_EFFECT] = {"GK003", "no-effect", GRANT_SEVERITY_WARNING,
                     "Deny or readonly entry outside every granted region",
                     "In a stack that restricts the filesystem, a deny entry outside every "
                     "readable region (or a readonly entry outside every writable region) "
                     "refuses nothing that was not refused already.",
                     "Check the path (a typo, a sigil resolving elsewhere in this context), or "
                     "remove the entry."},
    [GK_R_SOURCE_WRITABLE] = {"GK004", "source-writable", GRANT_SEVERITY_WARNING,
                           "Policy source inside a writable region",
                           "A file this policy was compiled from lies inside a region the "
                           "policy lets commands write. The gate protects it during runs under "
                           "this policy, but a run under any other policy that grants the region, "
                           "or any tool outside the sandbox, can rewrite it for the next run.",
                           "Keep policy files outside writable regions, or mark them `readonly` "
                           "so every policy that includes this one protects them."},
    [GK_R_UNIX_SOCKET] = {"GK005", "unix-socket", GRANT_SEVERITY_WARNING,
                       "Unix socket inside a readable region",
                       "A Unix domain socket lies inside a readable region. Connecting to it "
                       "needs no network access, so `net deny` does not stop it; a Docker or "
                       "Podman socket is root on the host.",
                       "Deny the socket (or its directory), or narrow the readable region."},
    [GK_R_PATH_WRITABLE] = {"GK006", "path-writable", GRANT_SEVERITY_WARNING,
                         "Command search directory writable",
                         "xdg:bin or a directory of the context PATH is writable: a program "
                         "planted there shadows a name the policy admits, and runs unconfined "
                         "the next time a shell outside the sandbox looks the name up.",
                         "Mark the directory `readonly` (and veto it for execution with "
                         "`deny xdg:bin/`), or keep it out of every writable region."},
    [GK_R_SHELL_CAPABLE] = {"GK007", "shell-capable", GRANT_SEVERITY_WARNING,
                         "Subcommand list on a program that can run arbitrary commands",
                         "A subcommand list binds argv[1] only. This program can run arbitrary "
                         "commands through its later arguments, options, configuration or "
                         "interactive escapes, so the list does not contain it.",
                         "Do not rely on the list for containment: admit the program only when "
                         "running anything it can start is acceptable, or veto what it would "
                         "start (shells are vetoed by base/minimal.grant)."},
    [GK_R_ELF_LOADER] = {"GK008", "fidelity-elf-loader", GRANT_SEVERITY_NOTE,
                      "Linux: the ELF loader can load readable binaries",
                      "The ELF loader is executable, so a binary that is readable in an "
                      "exec-capable read region but not exec-admitted (for example one under "
                      "/usr/lib) can still be loaded through it. Written files are noexec, and "
                      "vetoed programs are masked where grantrun looks for them: the PATH "
                      "directories and the bin, sbin and libexec directories of the readable "
                      "regions (up to two levels down, three more below a lib directory); one "
                      "deeper, such as a tool's bundled interpreter, is denied by the gate but "
                      "can be loaded. A name veto is not containment: a copy of a vetoed "
                      "program under another name is a different file (a hard link is not, on "
                      "the host target).",
                      "Veto by file or directory, not only by name, what must never run."},
    [GK_R_WIN_EXEC] = {"GK009", "fidelity-windows-exec", GRANT_SEVERITY_NOTE,
                    "Windows: exec has no OS filter",
                    "AppContainer has no filter on process creation: exec admissions and "
                    "vetoes are enforced only by the in-process gate of the host that embeds "
                    "grantkit, not by the operating system.",
                    "Treat exec rules as advisory on Windows; contain with filesystem rules."},
    [GK_R_LANDLOCK_NESTING] = {"GK010", "fidelity-landlock-nesting", GRANT_SEVERITY_NOTE,
                            "Landlock cannot express a deny inside an allow",
                            "Landlock only adds rights beneath a directory, so a deny or readonly "
                            "entry inside an allowed region is enforced by the bubblewrap masks "
                            "alone; a Landlock-only ruleset (`grantc emit --backend landlock`) "
                            "grants the whole region.",
                            "Run under grantrun (bubblewrap plus Landlock), not Landlock alone."},
    [GK_R_SUBCOMMANDS] = {"GK011", "fidelity-subcommands", GRANT_SEVERITY_NOTE,
                       "Subcommand lists are enforced by the gate only",
                       "No OS backend can see arguments: bwrap/Landlock, Seatbelt and "
                       "AppContainer admit the program with any arguments. The gate checks the "
                       "command it is asked about; a program started inside the sandbox (a "
                       "script, make, xargs) can run it with any subcommand.",
                       "Veto the program where any of its subcommands must never run."},
    [GK_R_ABSENT_MASK] = {"GK012", "fidelity-absent-mask", GRANT_SEVERITY_NOTE,
                       "Absent deny under a read-only bind is not masked",
                       "The entry does not exist and lies under a read-only bind only, so "
                       "bubblewrap cannot place a mask there (the bind refuses creation). A "
                       "file the host creates there during a run is visible to the command.",
                       "Create the path before the run, or deny an existing parent."},
    [GK_R_WIN_RENAME] = {"GK013", "fidelity-windows-rename", GRANT_SEVERITY_NOTE,
                      "Windows: a rename keeps the ACE of the old place",
                      "ACLs travel with a file renamed within a volume: a file moved from a "
                      "granted region into a denied directory keeps the access it had.",
                      "Deny whole directories that nothing is moved into, or keep denied data "
                      "on another volume."},
    [GK_R_GIT_WRITABLE] = {"GK014", "git-writable", GRANT_SEVERITY_WARNING,
                        "Git dir writable where git reads commands from",
                        "A git repository's dir lies in a writable region, and not everything "
                        "git takes commands from there is readonly: config (core.pager, "
                        "core.fsmonitor, core.hooksPath, include.path, drivers, aliases), hooks, "
                        "commondir and config.worktree (which redirect both), modules/ and "
                        "worktrees/ (the git dirs of submodules and linked worktrees), and the "
                        "todo list of a rebase or cherry-pick in progress (its exec lines). A "
                        "confined command can plant any of them, and git runs what they say "
                        "outside the sandbox the next time it is used there.",
                        "Mark the whole git dir readonly (`readonly cwd:/.git`, as "
                        "base/minimal.grant does): one entry that exists, where listing the "
                        "files costs a placeholder for each absent one."},
    [GK_R_BUILD_SHADOW] = {"GK015", "build-file-shadowed", GRANT_SEVERITY_NOTE,
                        "Readonly Makefile shadowed by a writable GNUmakefile or makefile",
                        "GNU make reads GNUmakefile, then makefile, then Makefile, and BSD make "
                        "makefile before Makefile: a file written under an earlier name in the "
                        "run takes over the next make outside the sandbox, though the readonly "
                        "Makefile itself is unchanged.",
                        "Mark the earlier names readonly too (an absent one costs a placeholder "
                        "during runs), or make the whole directory readonly."},
    [GK_R_NET_SHARED_HOST] = {"GK017", "net-shared-host", GRANT_SEVERITY_WARNING,
                           "Wildcard destination over a shared hosting domain",
                           "A net allow pattern *.SUFFIX covers a domain where anyone can "
                           "publish a host (*.githubusercontent.com, *.amazonaws.com, "
                           "*.cloudfront.net, *.herokuapp.com, ...): the command can reach, and "
                           "send data to, hosts that strangers control. A destination policy "
                           "stops no exfiltration to an allowed host.",
                           "Name the hosts the command needs (raw.githubusercontent.com, "
                           "BUCKET.s3.amazonaws.com) instead of the whole domain."},
};


void grant_findings_free(grant_findings *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        gk_finding_free(&f->v[i]);
    free(f->v);
    free(f->cwd);
    free(f->primary);
    free(f);
}

size_t grant_findings_count(const grant_findings *f)
{
    return f ? f->n : 0;
}

int grant_finding(const grant_findings *f, size_t i, const char **id, const char **name,
                  grant_severity *severity, const char **file, unsigned *line,
                  const char **message)
{
    if (!f || i >= f->n)
        return -EINVAL;
    const gk_finding *x = &f->v[i];
    const gk_rule *r = x->rule;
    if (id)
        *id = r->id;
    if (name)
        *name = r->name;
    if (severity)
        *severity = x->severity;
    if (file)
        *file = x->file;
    if (line)
        *line = x->line;
    if (message)
        *message = x->message;
    return 0;
}

