/* grant/grant.h - libgrant, the grantkit policy engine.
 *
 * Conventions (as libseccomp): every function that can fail returns 0 or a
 * negative errno value (-EINVAL bad argument, -ENOENT missing file, -EPROTO
 * the input does not compile: details are in the grant_diags you passed).
 * The library never prints and never exits; only the CLIs print.
 *
 * Ownership: an object returned through an out-pointer belongs to the
 * caller, who frees it with the matching grant_*_free (NULL is accepted).
 * A char * returned through an out-pointer is malloc'd; free() it.
 * A const char * returned by an accessor lives as long as its owner object.
 * Allocation failure aborts the process.
 *
 * Threads: a compiled grant_policy never changes (its lookup index is
 * built on first use and published atomically), so any number of threads
 * may check, decide and emit on one policy at once. A grant_context or
 * grant_diags is for one thread at a time.
 */
#ifndef GRANT_GRANT_H
#define GRANT_GRANT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRANT_API __attribute__((visibility("default")))

#define GRANTKIT_IR_VERSION 1

/* ---- diagnostics ------------------------------------------------------ */

typedef struct grant_diags grant_diags;

/* The one severity scale, of diagnostics, audit findings and lint. */
typedef enum grant_severity {
    GRANT_SEVERITY_NOTE = 0,
    GRANT_SEVERITY_WARNING = 1,
    GRANT_SEVERITY_ERROR = 2,
} grant_severity;

GRANT_API grant_diags *grant_diags_new(void);
GRANT_API void grant_diags_free(grant_diags *d);
GRANT_API size_t grant_diags_count(const grant_diags *d);
GRANT_API size_t grant_diags_errors(const grant_diags *d);
/* Diagnostic i in grantkit's one format ("file:line:col: error: ...", the
 * source line, a caret, a hint). Caller frees. */
GRANT_API char *grant_diags_render(const grant_diags *d, size_t i);
/* 0 error, 1 warning, 2 note (the reverse of grant_severity, kept). */
GRANT_API int grant_diags_severity(const grant_diags *d, size_t i);
/* The bare message of diagnostic i (no position, no id). */
GRANT_API const char *grant_diags_message(const grant_diags *d, size_t i);
/* The stable id of diagnostic i when it is a finding ("SB001"), else NULL.
 * grant_diags_render writes it before the message. */
GRANT_API const char *grant_diags_id(const grant_diags *d, size_t i);
/* "file:line:col" of diagnostic i ("file" alone when it has no position;
 * NULL when it has neither). Caller frees. For machine-readable reports. */
GRANT_API char *grant_diags_location(const grant_diags *d, size_t i);

/* ---- freeze context --------------------------------------------------- */

typedef struct grant_context grant_context;

typedef enum grant_target {
    GRANT_TARGET_HOST = 0, /* this machine: paths are canonicalised here */
    GRANT_TARGET_LINUX,
    GRANT_TARGET_MACOS,
    GRANT_TARGET_WINDOWS,
} grant_target;

typedef enum grant_ctx_key {
    GRANT_CTX_HOME,
    GRANT_CTX_USER,
    GRANT_CTX_CWD,
    GRANT_CTX_TEMPDIR,
    GRANT_CTX_PATH,
} grant_ctx_key;

/* Defaults come from the environment (HOME, USER, the working directory,
 * TMPDIR, PATH, XDG_*_HOME). */
GRANT_API int grant_context_new(grant_context **out);
GRANT_API void grant_context_free(grant_context *ctx);
GRANT_API int grant_context_set_target(grant_context *ctx, grant_target target);
/* -EINVAL unless value is absolute (PATH: a ':'-separated list). */
GRANT_API int grant_context_set(grant_context *ctx, grant_ctx_key key, const char *value);
/* name is config, data, cache, state or bin. */
GRANT_API int grant_context_set_xdg(grant_context *ctx, const char *name, const char *dir);
GRANT_API int grant_context_set_implicit(grant_context *ctx, bool implicit);
/* Policy search path for includes that do not start with ./ or ../
 * (default: $GRANTKIT_POLICY_PATH, else the installed policies). */
GRANT_API int grant_context_set_policy_path(grant_context *ctx, const char *pathlist);

/* ---- compile ---------------------------------------------------------- */

typedef struct grant_policy grant_policy;

/* Compile FILEs (.grant, .yaml/.yml, or compiled .json) into one policy:
 * the files are meet'd left to right and every `extends` file is joined
 * into the first. On failure returns -EPROTO (or -errno) and *out is NULL;
 * every error found is in diags. Warnings may be added on success. */
GRANT_API int grant_compile(const grant_context *ctx, const char *const *files, size_t nfiles,
                            const char *const *extends, size_t nextends, grant_diags *diags,
                            grant_policy **out);
/* Compile one in-memory text. name is used in diagnostics and to choose the
 * surface (.yaml/.yml: YAML; .json: IR; otherwise the grant language).
 * Includes resolve as for a file named name. */
GRANT_API int grant_compile_buffer(const grant_context *ctx, const char *name, const char *text,
                                   size_t len, grant_diags *diags, grant_policy **out);
GRANT_API void grant_policy_free(grant_policy *p);
GRANT_API size_t grant_policy_layer_count(const grant_policy *p);

#define GRANT_IR_PRETTY 1u
/* The canonical IR (grant-language.md §7), NUL-terminated. */
GRANT_API int grant_policy_ir(const grant_policy *p, unsigned flags, char **out, size_t *len);

/* meet: a stack with b's layers after a's (exact conjunction). */
GRANT_API int grant_policy_meet(const grant_policy *a, const grant_policy *b, grant_policy **out);

/* ---- fmt -------------------------------------------------------------- */

typedef enum grant_surface {
    GRANT_SURFACE_AUTO = 0, /* from the file name */
    GRANT_SURFACE_GRANT,
    GRANT_SURFACE_YAML,
} grant_surface;

/* Print a grant file in its canonical form, in surface `to` (AUTO: same
 * surface). Comments of a .grant file are kept when printing grant; YAML
 * loses comments (a warning is added when converting from YAML loses some).
 * The text is not compiled (includes are not read), only parsed and
 * validated. */
GRANT_API int grant_fmt(const char *name, const char *text, size_t len, grant_surface from,
                        grant_surface to, grant_diags *diags, char **out, size_t *outlen);

/* ---- decisions (a fold over the whole stack) --------------------------- */

typedef enum grant_op { GRANT_OP_READ, GRANT_OP_WRITE } grant_op;

/* An exec query with its identities already resolved: spelling as written,
 * the PATH-walked path (NULL if none), the canonical file (NULL if absent).
 * argv1 is NULL when the command has no first argument. */
typedef struct grant_exec_query {
    const char *spelling;
    const char *walked;
    const char *canonical;
    const char *argv1;
} grant_exec_query;

/* 1 allowed, 0 denied. path must be absolute and canonical. */
GRANT_API int grant_decide_fs(const grant_policy *p, grant_op op, const char *path);
GRANT_API int grant_decide_exec(const grant_policy *p, const grant_exec_query *q);
/* gate is shell.chdir, editor.read, editor.write, editor.tui or net.
 * Returns 1/0, or -EINVAL for an unknown gate. net is 1 only when every
 * destination is allowed: a destination list answers 0 here (ask
 * grant_check_connect about each destination). */
GRANT_API int grant_decide_gate(const grant_policy *p, const char *gate);

/* ---- the gate: checks with reasons (grant-language.md §6) ------------- */

/* The gate is the one place authority is decided. Unlike grant_decide_*,
 * it resolves the query itself, applies the target's implicit grants
 * (unless the policy was compiled with --no-implicit), the discard device,
 * and the protection of the policy's own source files (readonly), and
 * says why. */

typedef struct grant_verdict grant_verdict;

typedef enum grant_answer {
    GRANT_DENIED = 0,
    GRANT_ALLOWED = 1,
    GRANT_NOT_FOUND = 2, /* exec: the policy admits the head, but no file
                          * exists for it (grantrun: 127). A head the policy
                          * does not admit is DENIED whether or not it
                          * exists, so denial never reveals existence. */
} grant_answer;

/* A relative path is made absolute against cwd (NULL: the policy's context
 * cwd), then resolved as the kernel would (host target: each symlink
 * before a following '..'; the missing tail lexically) or, offline,
 * lexically with the target's alias table. */
GRANT_API int grant_check_fs(const grant_policy *p, grant_op op, const char *path, const char *cwd,
                             grant_verdict **out);
/* The same on a path that is already absolute and canonical: no
 * resolution, no system call. */
GRANT_API int grant_check_fs_resolved(const grant_policy *p, grant_op op, const char *canonical,
                                      grant_verdict **out);
/* argv[0] is the head: a spelling with '/' is made absolute against cwd and
 * normalised lexically (the walked path); a bare name is walked along
 * path_env (NULL: the context PATH) to the first executable regular file,
 * with no symlink resolved; the canonical file is the walked path with
 * every symlink resolved. argc may be 0 only if argv is NULL-terminated. */
GRANT_API int grant_check_exec(const grant_policy *p, const char *const *argv, size_t argc,
                               const char *path_env, const char *cwd, grant_verdict **out);
/* The same on identities already resolved (no filesystem access). */
GRANT_API int grant_check_exec_query(const grant_policy *p, const grant_exec_query *q,
                                     grant_verdict **out);
/* gate: shell.chdir, editor.read, editor.write, editor.tui, net. */
GRANT_API int grant_check_gate(const grant_policy *p, const char *gate, grant_verdict **out);

/* ---- network destinations (network.md) -------------------------------- */

/* What the policy's stack says about the network as a whole:
 * GRANT_NET_DENY: no destination (some layer has `net deny;`, or the
 * lists leave nothing); GRANT_NET_ALLOW: every destination (no layer
 * restricts); GRANT_NET_LIST: some layer has `net { allow ...; deny ...; }`,
 * so each connection must be checked with grant_check_connect. (A stack
 * whose lists intersect to nothing is GRANT_NET_LIST here; every check
 * then refuses.) */
typedef enum grant_net_mode {
    GRANT_NET_DENY = 0,
    GRANT_NET_ALLOW = 1,
    GRANT_NET_LIST = 2,
} grant_net_mode;
GRANT_API grant_net_mode grant_policy_net_mode(const grant_policy *p);

/* Check one connection as a client asked for it, before anything is
 * resolved. Contract (the proxy calls it once per connection and per
 * plain-HTTP request, from any thread):
 * - host is a DNS name (any case, one trailing dot allowed), an IPv4
 *   address in dotted-quad form, or an IPv6 address with or without
 *   brackets; an IPv4-mapped IPv6 address is checked as the IPv4 address
 *   it maps. port is 1-65535.
 * - Returns 0 and a verdict, or -EINVAL (no verdict) when host or port is
 *   none of the above (a name with characters no DNS name has, "127.1",
 *   "2130706433", port 0): the caller refuses such a connection.
 * - The answer is GRANT_ALLOWED or GRANT_DENIED. The destination is
 *   allowed when, in every layer with a net opinion, some allow pattern
 *   matches it and no deny pattern does (`net allow;` matches all,
 *   `net deny;` nothing; a layer without net has no opinion).
 * - grant_verdict_origin is "file:line" of the deciding rule: the deny
 *   pattern that matched, or for an allowed destination the allow pattern
 *   that matched in the last list layer (else the last `net allow;`); of
 *   several matching patterns the most specific (HOST:PORT, HOST, then the
 *   longest *.SUFFIX, with its port first); when
 *   no allow pattern matched, the layer's `net` keyword. "no-opinion" when
 *   no layer has one.
 *   grant_verdict_rule is "allow *.github.com", "deny *.gist.github.com",
 *   "no allow rule matches", "net allow" or "net deny";
 *   grant_verdict_identity the destination in canonical form
 *   ("github.com:443", "[::1]:8080"); grant_verdict_layer the layer.
 * - Name patterns match names only and address patterns addresses only:
 *   the verdict is about the destination as asked. Refusing a name whose
 *   answer is a private address (network.md §1) is the resolver's part.
 * No system call, no allocation beyond the verdict's strings. */
GRANT_API int grant_check_connect(const grant_policy *p, const char *host, unsigned port,
                                  grant_verdict **out);
/* The same without reasons: 1 allowed, 0 denied, -EINVAL as above. */
GRANT_API int grant_decide_connect(const grant_policy *p, const char *host, unsigned port);

/* A verdict refers to its policy's rule origins and layer names: free it
 * (grant_verdict_free) before the policy. */
GRANT_API void grant_verdict_free(grant_verdict *v);
GRANT_API grant_answer grant_verdict_answer(const grant_verdict *v);
/* "file:line" of the deciding rule; or "implicit:<target>", "discard",
 * "policy-source" (a source file of the policy), "no-opinion" (no layer
 * has an opinion, so the query is allowed). */
GRANT_API const char *grant_verdict_origin(const grant_verdict *v);
/* Name of the deciding layer, or NULL when no layer decided. */
GRANT_API const char *grant_verdict_layer(const grant_verdict *v);
/* The deciding rule in grant syntax ("deny /home/u/.ssh", "allow git [log
 * status]", "deny match \"^python\"", "allow /usr/bin/"), or a sentence
 * when the decision is an absence ("no read or write region contains it",
 * "no allow rule admits it"). */
GRANT_API const char *grant_verdict_rule(const grant_verdict *v);
/* The identity that matched: for exec "spelling 'bash'", "walked
 * /usr/bin/bash", "canonical /usr/bin/dash", "basename 'bash' of
 * /usr/bin/bash"; for fs the resolved path. */
GRANT_API const char *grant_verdict_identity(const grant_verdict *v);
/* The resolved path (fs), or the canonical file (exec; NULL if none). */
GRANT_API const char *grant_verdict_path(const grant_verdict *v);
/* Advice for a person, or NULL ("allowed subcommands: log status"). */
GRANT_API const char *grant_verdict_hint(const grant_verdict *v);
/* The verdict as one canonical JSON object (--format json). Caller frees. */
GRANT_API char *grant_verdict_json(const grant_verdict *v);

/* ---- audit ------------------------------------------------------------ */

typedef struct grant_findings grant_findings;

/* Findings about a compiled policy (cli.md, grantc audit), sorted by file,
 * line, id. Reads the host only for host-target policies. */
GRANT_API int grant_audit(const grant_policy *p, grant_findings **out);
GRANT_API void grant_findings_free(grant_findings *f);
GRANT_API size_t grant_findings_count(const grant_findings *f);
/* Finding i: a stable id ("GK001"), a short rule name ("deputy"), the
 * severity, its location (file may be NULL; line 0 when unknown) and a
 * message. */
GRANT_API int grant_finding(const grant_findings *f, size_t i, const char **id, const char **name,
                            grant_severity *severity, const char **file, unsigned *line,
                            const char **message);
/* The findings as JSON (an array) or as a SARIF 2.1.0 log. Caller frees. */
GRANT_API char *grant_findings_json(const grant_findings *f);
GRANT_API char *grant_findings_sarif(const grant_findings *f);

/* ---- levels of confinement and the enforcement record ------------------ */

/* grantrun's levels (grantrun(1), "Levels of confinement"), strongest first:
 * namespaces (bwrap, the helper, seccomp, Landlock, noexec remounts, masks,
 * private /tmp, pid/ipc/uts/net namespaces) and landlock (the helper alone:
 * rlimits, no_new_privs, Landlock, seccomp; no namespace). */
typedef enum grant_level {
    GRANT_LEVEL_NAMESPACES,
    GRANT_LEVEL_LANDLOCK,
} grant_level;

GRANT_API const char *grant_level_name(grant_level l);
/* "namespaces" | "landlock" -> level; -EINVAL. */
GRANT_API int grant_level_from_name(const char *name, grant_level *out);

/* Per rule of the stack (and per property of the envelope): what enforces
 * it at a level (gate, mount, namespace, landlock, seccomp, rlimit,
 * supervisor) and whether it holds as written ("enforced"), "stricter",
 * "weaker" (the level's documented semantics) or "not-enforced". One
 * record is derived per run and read by grantrun --report, grantc audit
 * --level and the frame protocol's run-result. */
typedef struct grant_enforcement grant_enforcement;

/* The record of policy p at a level on this host (host target: this
 * kernel's Landlock ABI; another target: ABI 3 assumed), with no resource
 * limits. -EINVAL for a bad level. */
GRANT_API int grant_enforcement_derive(const grant_policy *p, grant_level level,
                                       grant_enforcement **out);
GRANT_API void grant_enforcement_free(grant_enforcement *e);
GRANT_API grant_level grant_enforcement_level(const grant_enforcement *e);
/* Rows not enforced at all (what only --allow-degraded runs). */
GRANT_API size_t grant_enforcement_unenforced_count(const grant_enforcement *e);
/* Rows the level loses: not enforced, or weaker on a rule of the stack
 * (what --level auto refuses to fall back over). */
GRANT_API size_t grant_enforcement_lost_count(const grant_enforcement *e);
/* The whole record as canonical JSON (sorted keys, no whitespace):
 *   {"bwrapVersion":S|null,"landlockAbi":N,"level":L,"reason":S|null,
 *    "rules":[{"by":[..],"kind":K,"origin":O,"policy":B,"rule":R,
 *              "status":S,"why":S|null}...],"unenforced":[R...]}
 * Caller frees. */
GRANT_API char *grant_enforcement_json(const grant_enforcement *e);
/* The frame protocol's run-result member (frame-protocol.md 3b):
 * {"level":L,"unenforced":[R...]}. Caller frees. */
GRANT_API char *grant_enforcement_member_json(const grant_enforcement *e);
/* The record as a table for a person (grantc audit --level). Caller frees. */
GRANT_API char *grant_enforcement_text(const grant_enforcement *e);

/* ---- emit: what each OS enforces (backends.md) ------------------------ */

typedef enum grant_backend {
    GRANT_BACKEND_BWRAP,
    GRANT_BACKEND_SEATBELT,
    GRANT_BACKEND_APPCONTAINER,
    GRANT_BACKEND_LANDLOCK,
} grant_backend;

/* Render the policy's projection for a backend. format NULL is the
 * backend's default: bwrap "shell" (also "argv0", "json"); seatbelt "sbpl"
 * (also "sbpl-params"); appcontainer "json" (also "powershell"); landlock
 * "json". Same policy and context, same bytes. Fidelity notes (what the
 * backend cannot express, assumptions made offline) are added to notes as
 * warnings or notes; -EINVAL for an unknown format, -ENOTSUP when the
 * backend cannot render this policy at all. */
GRANT_API int grant_emit(const grant_policy *p, grant_backend backend, const char *format,
                         grant_diags *notes, char **out, size_t *len);
/* "bwrap", "seatbelt", "appcontainer", "landlock" -> backend; -EINVAL. */
GRANT_API int grant_backend_from_name(const char *name, grant_backend *out);

/* Windows SID derivation (backends.md), for audits: the capability SID and
 * its group SID of a capability name (the twelve legacy names map to
 * S-1-15-3-1 ... S-1-15-3-12; their group SID is still the hash one, as
 * Windows' DeriveCapabilitySidsFromName gives it); the AppContainer SID of a
 * profile name. group_sid may be NULL. Strings are malloc'd. -EINVAL for a
 * name that is not UTF-8. */
GRANT_API int grant_sid_capability(const char *name, char **sid, char **group_sid);
GRANT_API int grant_sid_appcontainer(const char *name, char **sid);

/* ---- sbpl: Seatbelt profiles read and evaluated offline (cli.md) ------- */

/* An SBPL profile, read and statically evaluated: imports inlined, defines
 * and simple procedures applied, params taken from -D. Evaluation follows
 * Seatbelt: the last rule whose operation covers the query's and whose
 * filters match decides. A regex is searched anywhere in the path (only ^
 * and $ anchor it). What cannot be known offline (a param without a value,
 * an import not found, a filter such as (extension ...)) is never guessed:
 * a query that depends on it is GRANT_SBPL_UNDECIDED. */
typedef struct grant_sbpl grant_sbpl;
typedef struct grant_sbpl_answer grant_sbpl_answer;

#define GRANT_SBPL_NO_IMPORT 1u /* open no file: every import is unresolved */

/* Read a profile. params are "NAME=VALUE" (sandbox-exec -D). A relative
 * import resolves against the importing file's directory, then the
 * IMPORT_DIR param. Syntax errors, unknown operations or filters and bad
 * regexes fail with -EPROTO (positions in diags); unresolved params and
 * imports are warnings. -ENOENT (or -errno) when file cannot be read. */
GRANT_API int grant_sbpl_read(const char *file, const char *const *params, size_t nparams,
                              unsigned flags, grant_diags *diags, grant_sbpl **out);
/* The same on a text; name is used in positions and for relative imports. */
GRANT_API int grant_sbpl_read_buffer(const char *name, const char *text, size_t len,
                                     const char *const *params, size_t nparams, unsigned flags,
                                     grant_diags *diags, grant_sbpl **out);
GRANT_API void grant_sbpl_free(grant_sbpl *s);
GRANT_API size_t grant_sbpl_rule_count(const grant_sbpl *s);

typedef enum grant_sbpl_verdict {
    GRANT_SBPL_DENY = 0,
    GRANT_SBPL_ALLOW = 1,
    GRANT_SBPL_UNDECIDED = 2, /* depends on something unknown offline */
} grant_sbpl_verdict;

/* Evaluate operation on arg: a path (file*, process-exec), a service name
 * (mach-lookup), a sysctl name, a signal target (self, same-sandbox,
 * children, pgrp, parent, others), a network address ("[tcp:|udp:]HOST:PORT",
 * or a unix socket path), NULL where the operation takes none. An operation
 * ending in '*' asks about every operation below it: allowed only if all
 * are. vnode_type (REGULAR-FILE, DIRECTORY, ...) may be NULL: a vnode-type
 * filter then decides only if every type gives the same answer. -EINVAL
 * with a diagnostic for an unknown operation or a missing argument. */
GRANT_API int grant_sbpl_eval(const grant_sbpl *s, const char *operation, const char *arg,
                              const char *vnode_type, grant_diags *diags,
                              grant_sbpl_answer **out);
GRANT_API void grant_sbpl_answer_free(grant_sbpl_answer *a);
GRANT_API grant_sbpl_verdict grant_sbpl_answer_verdict(const grant_sbpl_answer *a);
/* "file:line" of the deciding rule, or "implicit-default" when no rule
 * matched and the profile has no default rule (Seatbelt then allows). */
GRANT_API const char *grant_sbpl_answer_origin(const grant_sbpl_answer *a);
GRANT_API unsigned grant_sbpl_answer_line(const grant_sbpl_answer *a); /* 0: none */
/* The deciding rule as written (whitespace collapsed), or a sentence. */
GRANT_API const char *grant_sbpl_answer_rule(const grant_sbpl_answer *a);
/* The operation that decided: the query's, or for a '*' query the first
 * one below it that was denied or undecided. */
GRANT_API const char *grant_sbpl_answer_operation(const grant_sbpl_answer *a);
/* Undecided: what it depends on; otherwise NULL or a note ("produced by
 * the call at p.sb:30"). */
GRANT_API const char *grant_sbpl_answer_note(const grant_sbpl_answer *a);
/* The answer as one canonical JSON object. Caller frees. */
GRANT_API char *grant_sbpl_answer_json(const grant_sbpl_answer *a);

/* Lint (cli.md, sbpl lint): rules shadowed by a later rule, operand-less
 * allows, allows of default, unanchored regexes, unresolved params and
 * imports, no default rule, paths Seatbelt never sees (/tmp, /var, /etc).
 * Each finding is a warning or note in findings with its stable id
 * (grant_diags_id: "SB001") and the message "NAME: TEXT" ("shadowed:
 * ..."); rendered, "SB001 shadowed: ...". Returns the number of findings. */
GRANT_API size_t grant_sbpl_lint(const grant_sbpl *s, grant_diags *findings);

/* ---- compare ---------------------------------------------------------- */

typedef enum grant_order {
    GRANT_EQUAL,
    GRANT_NARROWER,   /* a allows a strict subset of what b allows */
    GRANT_WIDER,
    GRANT_INCOMPARABLE,
} grant_order;

typedef struct grant_comparison grant_comparison;

/* Decide the order of a and b over the witness set built from every name,
 * path, dir and region either mentions (with parents, children, siblings).
 * Both must have been compiled with the same context. */
GRANT_API int grant_compare(const grant_policy *a, const grant_policy *b, grant_comparison **out);
GRANT_API void grant_comparison_free(grant_comparison *c);
GRANT_API grant_order grant_comparison_order(const grant_comparison *c);
GRANT_API size_t grant_comparison_witness_count(const grant_comparison *c);
/* Witness i: kind is "read", "write", "exec", "gate" or "net"; subject the
 * path, command line or gate; a_allows/b_allows the two decisions. */
GRANT_API int grant_comparison_witness(const grant_comparison *c, size_t i, const char **kind,
                                       const char **subject, bool *a_allows, bool *b_allows);
GRANT_API size_t grant_comparison_queries(const grant_comparison *c); /* witnesses tried */

GRANT_API const char *grant_order_name(grant_order o);
GRANT_API const char *grant_version(void);
/* What this build of libgrant has, for --version: one "name: value" line
 * each (backends, targets, inputs, the libraries it was built with and
 * runs with, sanitizers), newline-terminated. The caller frees it. */
GRANT_API char *grant_build_info(void);

/* ---- files ------------------------------------------------------------ */

/* Read a policy input whole, as the compiler reads its own: a regular file
 * ("-": standard input) of at most 64 MiB, opened without blocking, so a
 * FIFO or a device such as /dev/zero is refused at once. Returns 0 or
 * -errno: -EISDIR, -EINVAL (not a regular file), -EFBIG (too large), or the
 * open/read error; *out is NUL-terminated (a NUL inside is kept) and the
 * caller's. grant_read_strerror words a code for a message. */
GRANT_API int grant_read_input(const char *path, char **out, size_t *len);
GRANT_API const char *grant_read_strerror(int rc);

/* Write len bytes of data to path atomically: a temporary file beside it,
 * fsync, rename over path, fsync the directory, so a reader sees the old
 * content or the new, never a part. An existing file keeps its permission
 * bits, a new one gets 0666 & ~umask; a symlink to a file is kept and its
 * target replaced; a path that is no regular file (/dev/null, a fifo) is
 * written in place. On failure nothing at path changes and the temporary
 * file is removed. Returns 0 or -errno (-EISDIR for a path ending in '/'). */
GRANT_API int grant_write_file_atomic(const char *path, const char *data, size_t len);
/* The same, with the signals in hold blocked (pthread_sigmask, this thread)
 * for as long as the temporary file exists: a program that ends on SIGINT,
 * SIGTERM or SIGHUP passes them here and never leaves the temporary behind
 * (a pending signal is delivered once it is renamed or removed). The
 * library installs no handler. Writing in place (a path that is no regular
 * file, e.g. a FIFO whose reader may stall) holds nothing, so an interrupt
 * still ends that write. hold NULL: as grant_write_file_atomic. */
GRANT_API int grant_write_file_atomic_holding(const char *path, const char *data, size_t len,
                                              const sigset_t *hold);

/* ---- JSON --------------------------------------------------------------- */

/* s as a JSON string literal, quotes included, by the library's one rule
 * (grantc(1), JSON OUTPUT): '"', '\\' and control characters escaped,
 * other UTF-8 copied, each byte of invalid UTF-8 as U+FFFD. For programs
 * that print JSON of their own around the library's. Caller frees. */
GRANT_API char *grant_json_string(const char *s);


/* ---- runs: the frame protocol (grant-frame(7), frame-protocol.md) ------ */

/* One command run in a fresh child process: a run-request goes to the
 * child (`grantrun --frame-child`) as one frame, one run-result comes
 * back, whatever the child does (a crash, a hang, garbage: the result then
 * says child-process-crash). The command runs in the Linux envelope under
 * a policy compiled for this host, in a scratch tree seeded from bytes.
 *
 * Ownership: a grant_run_request copies everything it is given (a policy
 * is serialised when set: the policy may be freed afterwards); a
 * grant_run_result is the caller's (grant_run_result_free), and the
 * strings its accessors return live as long as it. */

typedef struct grant_run_request grant_run_request;
typedef struct grant_run_result grant_run_result;

typedef enum grant_failure {
    GRANT_FAILURE_NONE = 0,
    GRANT_FAILURE_SCRIPT_ERROR,
    GRANT_FAILURE_RESOURCE_LIMIT,
    GRANT_FAILURE_TIMEOUT,
    GRANT_FAILURE_HOST_ERROR,
    GRANT_FAILURE_CHILD_PROCESS_CRASH,
} grant_failure;

typedef enum grant_run_limit {
    GRANT_LIMIT_TIMEOUT_MS,      /* 0: none */
    GRANT_LIMIT_MEMORY_BYTES,    /* 0: unlimited (RLIMIT_AS) */
    GRANT_LIMIT_PROCESSES,       /* 0: unlimited (RLIMIT_NPROC) */
    GRANT_LIMIT_CPU_SECONDS,     /* 0: unlimited (RLIMIT_CPU) */
    GRANT_LIMIT_FS_QUOTA_BYTES,  /* the scratch tmpfs's size (16 MiB) */
    GRANT_LIMIT_FS_NODES,        /* its inodes (4096) */
} grant_run_limit;

GRANT_API grant_run_request *grant_run_request_new(void);
GRANT_API void grant_run_request_free(grant_run_request *r);
/* -EINVAL for an empty argv or argv[0] "". */
GRANT_API int grant_run_request_set_argv(grant_run_request *r, const char *const *argv,
                                         size_t argc);
/* NAME=VALUE strings, NULL-terminated (NULL: empty); replaces the last. */
GRANT_API int grant_run_request_set_env(grant_run_request *r, const char *const *env);
/* Absolute; NULL: baseline root, else "/". */
GRANT_API int grant_run_request_set_cwd(grant_run_request *r, const char *cwd);
GRANT_API int grant_run_request_set_policy(grant_run_request *r, const grant_policy *p);
GRANT_API int grant_run_request_set_limit(grant_run_request *r, grant_run_limit which,
                                          long long value);
/* The scratch tree's place in the envelope (absolute, not "/"); NULL: none. */
GRANT_API int grant_run_request_set_root(grant_run_request *r, const char *root);
/* Baseline entries: path relative to the root ("/src/main.c"); mode -1:
 * 0644 / 0755. Checked when the request is run or encoded. */
GRANT_API int grant_run_request_add_file(grant_run_request *r, const char *path, const void *data,
                                         size_t len, int mode);
GRANT_API int grant_run_request_add_dir(grant_run_request *r, const char *path, int mode);
/* A host file or tree read into the baseline at dest (NULL: "/" + its
 * basename); a host symlink is refused. On failure *err (malloc'd) says
 * why, naming the path. */
GRANT_API int grant_run_request_add_seed(grant_run_request *r, const char *host_path,
                                         const char *dest, char **err);
GRANT_API int grant_run_request_set_diff(grant_run_request *r, bool include, bool unified,
                                         bool metadata);
GRANT_API int grant_run_request_set_capture_base64(grant_run_request *r, bool base64);
/* run.level ("auto", "namespaces" or "landlock"; NULL: auto) and
 * run.allowDegraded (grantrun(1), --level and --allow-degraded). -EINVAL
 * for another level. */
GRANT_API int grant_run_request_set_level(grant_run_request *r, const char *level,
                                          bool allow_degraded);
/* The request's payload JSON (what goes in the frame). Caller frees. */
GRANT_API int grant_run_request_json(const grant_run_request *r, char **out, size_t *len);
/* A payload read back, strictly (unknown fields and other versions are
 * refused: -EPROTO / -EPROTONOSUPPORT with *err). */
GRANT_API int grant_run_request_from_json(const char *json, size_t len, grant_run_request **out,
                                          char **err);

/* The child program: NULL runs the installed grantrun; GRANT_CHILD_SELF
 * runs the calling program itself (pinned at the first call, or by
 * grant_supervise_pin at start-up), which must then handle --frame-child. */
#define GRANT_CHILD_SELF "/proc/self/exe"
typedef struct grant_supervise_opts {
    const char *bwrap;              /* absolute path of bubblewrap (required
                                     * unless child_argv is given) */
    long grace_ms;                  /* the deadline's grace; < 0: 1000 */
    const char *child_program;      /* see above; or any program's path */
    const char *const *child_argv;  /* NULL: grantrun --frame-child --bwrap BWRAP */
    const char *helper;             /* NULL: the child's compiled-in helper */
} grant_supervise_opts;

GRANT_API int grant_supervise_pin(void);
/* Run r. Returns 0 with *out set whatever the run did (a request over the
 * 64 MiB frame limit or a failed spawn is a host-error result, nothing
 * ran), or -EINVAL for missing arguments. */
GRANT_API int grant_supervise(const grant_run_request *r, const grant_supervise_opts *o,
                              grant_run_result **out);
/* The same for a payload as a host wrote it (checked first: a bad one is
 * a host-error result without a spawn). */
GRANT_API int grant_supervise_json(const char *json, size_t len, const grant_supervise_opts *o,
                                   grant_run_result **out);

GRANT_API void grant_run_result_free(grant_run_result *res);
GRANT_API grant_failure grant_run_result_failure(const grant_run_result *res);
/* "none", "script-error", "resource-limit", "timeout", "host-error",
 * "child-process-crash". */
GRANT_API const char *grant_failure_name(grant_failure f);
GRANT_API bool grant_run_result_ok(const grant_run_result *res);
/* The command's status (128+N for signal N), or -1 when it never ran or
 * was ended by the timeout (exitCode null). */
GRANT_API int grant_run_result_exit_code(const grant_run_result *res);
/* grantrun's exit status for it (0, the command's, 124, 125). */
GRANT_API int grant_run_result_exit_status(const grant_run_result *res);
GRANT_API const char *grant_run_result_error_message(const grant_run_result *res);
/* Captured stdout / stderr as the result carries them (utf8 text with the
 * truncation marker, or base64 text when capture was base64). */
GRANT_API const char *grant_run_result_output(const grant_run_result *res, size_t *len);
GRANT_API const char *grant_run_result_error_output(const grant_run_result *res, size_t *len);
GRANT_API bool grant_run_result_base64(const grant_run_result *res);
GRANT_API long long grant_run_result_output_truncated_bytes(const grant_run_result *res);
GRANT_API long long grant_run_result_error_output_truncated_bytes(const grant_run_result *res);
/* The diff (NULL when none), and whether the overflow fallback dropped it. */
GRANT_API const char *grant_run_result_diff(const grant_run_result *res, size_t *len);
GRANT_API bool grant_run_result_truncated(const grant_run_result *res);
GRANT_API void grant_run_result_stats(const grant_run_result *res, long long *wall_ms,
                                      long long *user_ms, long long *sys_ms,
                                      long long *max_rss_bytes);
/* The result's payload JSON. Caller frees. */
GRANT_API int grant_run_result_json(const grant_run_result *res, char **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
