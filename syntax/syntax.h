/* syntax.h - the syntax tree shared by both surfaces (grant language, YAML).
 *
 * Both front ends produce a gk_file_ast; everything downstream (validation,
 * fmt, freezing) reads only this. Rules are kept flat, in source order, each
 * with the byte range of its text, so that `fmt` can re-attach comments and
 * diagnostics can point at any rule.
 *
 * Ownership: a gk_file_ast owns every string and array reachable from it and
 * holds one reference on its gk_source. Free with gk_ast_free.
 */
#ifndef GK_AST_H
#define GK_AST_H

#include "common/diag.h"

typedef enum gk_verdict { GK_UNSET = 0, GK_ALLOW = 1, GK_DENY = 2 } gk_verdict;

typedef enum gk_target_kind {
    GK_T_NAME,  /* make, "my tool" */
    GK_T_PATH,  /* /usr/bin/git, ~/bin/x, cwd:/tool */
    GK_T_DIR,   /* /usr/bin/, xdg:bin/  (text keeps the trailing '/') */
    GK_T_MATCH, /* match "RE" (text is the pattern) */
} gk_target_kind;

typedef struct gk_word {
    char *text;  /* decoded (escapes applied), NUL-terminated, valid UTF-8 */
    gk_loc loc;  /* range of the token as written (quotes included) */
    bool quoted; /* written as a string: keeps fmt faithful */
} gk_word;

typedef struct gk_target {
    gk_target_kind kind;
    gk_word word;
} gk_target;

typedef struct gk_exec_rule {
    gk_verdict verdict;
    gk_target *targets;
    size_t ntargets;
    bool has_subcmds;   /* a [...] list was written (possibly empty) */
    gk_word *subcmds;
    size_t nsubcmds;
    gk_loc loc;         /* whole rule, verdict through ';' */
} gk_exec_rule;

typedef enum gk_fs_kind { GK_FS_READ, GK_FS_WRITE, GK_FS_READONLY, GK_FS_DENY } gk_fs_kind;

typedef struct gk_fs_rule {
    gk_fs_kind kind;
    gk_word *paths;
    size_t npaths;
    gk_loc loc;
} gk_fs_rule;

/* One rule of a `net { }` block: `allow DEST...;` or `deny DEST...;`, each
 * destination a HOST[:PORT] pattern as written (netdest.h reads it). */
typedef struct gk_net_rule {
    gk_verdict verdict;
    gk_word *dests;
    size_t ndests;
    gk_loc loc;
} gk_net_rule;

/* A scalar setting with the position where it was set. */
typedef struct gk_setting {
    gk_verdict value; /* GK_UNSET when not written */
    gk_loc loc;
} gk_setting;

typedef struct gk_comment {
    uint32_t start, end; /* byte range of "# ..." without the newline */
} gk_comment;

/* A token of a grant-surface file as its lexer read it: together with the
 * comments, the outline fmt walks to keep each comment beside the statement
 * it was written with (so fmt never scans the text a second way). */
typedef enum gk_token_kind {
    GK_TOKEN_WORD,
    GK_TOKEN_STRING,
    GK_TOKEN_LBRACE,
    GK_TOKEN_RBRACE,
    GK_TOKEN_LBRACKET,
    GK_TOKEN_RBRACKET,
    GK_TOKEN_SEMI,
    GK_TOKEN_COMMA,
} gk_token_kind;

typedef struct gk_token {
    uint32_t start, end; /* byte range as written (a string's quotes included) */
    gk_token_kind kind;
} gk_token;

typedef enum gk_surface { GK_SURFACE_GRANT, GK_SURFACE_YAML, GK_SURFACE_JSON } gk_surface;

typedef struct gk_file_ast {
    gk_source *src;
    gk_surface surface;

    gk_word name;          /* text NULL when the grant is anonymous */
    gk_loc grant_loc;      /* the `grant` keyword / YAML document start */

    gk_word *includes;     /* include "x"; (text is the path as written) */
    size_t nincludes;
    gk_word *extends;
    size_t nextends;

    bool has_exec;         /* an exec section was written (even empty) */
    gk_loc exec_loc;       /* first `exec` keyword */
    gk_exec_rule *exec;
    size_t nexec;

    bool has_fs;
    gk_loc fs_loc;
    gk_fs_rule *fs;
    size_t nfs;

    gk_setting net;        /* net allow; / net deny; */
    bool has_net_list;     /* a `net { }` block (YAML: net: {allow:, deny:}) */
    gk_loc net_list_loc;   /* its first `net` keyword */
    gk_net_rule *net_rules;
    size_t nnet_rules;

    bool has_shell;
    gk_loc shell_loc;
    gk_setting shell_chdir;

    bool has_editor;
    gk_loc editor_loc;
    gk_setting editor_read, editor_write, editor_tui;

    bool audit;
    gk_loc audit_loc;

    gk_comment *comments;  /* grant surface only, in source order */
    size_t ncomments;
    gk_token *tokens;      /* grant surface only, in source order; no comments */
    size_t ntokens;
} gk_file_ast;

GK_HIDDEN gk_file_ast *gk_ast_new(gk_source *src, gk_surface surface); /* takes a ref */
GK_HIDDEN void gk_ast_free(gk_file_ast *ast);
GK_HIDDEN void gk_word_free(gk_word *w);

/* Classify a target or path word as the spec says: a path starts with '/',
 * '~' or a sigil prefix (cwd:, tempdir:, xdg:); a path ending in '/' is a
 * dir. `match` targets are built by the parser directly. */
GK_HIDDEN gk_target_kind gk_classify_target(const char *text);
GK_HIDDEN bool gk_word_is_path(const char *text);
/* C:/x or C:\x: the AST keeps it a name (the syntax knows no target);
 * freezing for the windows target makes it a file or dir. */
GK_HIDDEN bool gk_word_is_drive_path(const char *text);

/* Front ends. Both return an AST (possibly partial) and add every error
 * they find to diags; the caller must treat diags->errors > 0 as failure.
 * They never touch the filesystem beyond what they are handed. */
GK_HIDDEN gk_file_ast *gk_parse_grant(gk_source *src, grant_diags *diags);
GK_HIDDEN gk_file_ast *gk_load_yaml(gk_source *src, grant_diags *diags);

/* Semantic checks shared by both surfaces (spec grant-language.md §2):
 * contradictions citing both positions, subcommand lists only on `allow`
 * with exactly one name or file target, `match` only on `deny`, patterns in
 * the portable subset, scalars set twice differently. Returns errors added. */
GK_HIDDEN size_t gk_ast_validate(const gk_file_ast *ast, grant_diags *diags);

/* The portable regex subset (literals, '.', classes, * + ?, {m,n}, |,
 * groups, ^ $). Returns NULL when pat is inside it, else a malloc'd name of
 * the first construct outside it ("backreference \\1") and its byte offset
 * within the pattern in *at. */
GK_HIDDEN char *gk_regex_unportable(const char *pat, size_t *at);

/* Printers (fmt). Output is the canonical form of the file: sections in the
 * order include, extend, exec, fs, net, shell, editor, audit; see fmt.c. */
GK_HIDDEN char *gk_fmt_grant(const gk_file_ast *ast, bool keep_comments, size_t *len);
GK_HIDDEN char *gk_fmt_yaml(const gk_file_ast *ast, size_t *len);

#endif
