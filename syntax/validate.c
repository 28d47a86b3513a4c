/* validate.c - semantic checks shared by the grant and YAML surfaces
 * (grant-language.md §2). Reads the AST only; every error is a diagnostic.
 *
 * - the same exec target (same kind and text) with two verdicts, or both
 *   plain `allow` and `allow [subcommands]`: one error citing both places;
 * - a subcommand list only on `allow` with exactly one name or file target;
 * - `match` only on `deny`, its pattern inside the portable subset
 *   (regex_subset.c) and accepted by PCRE2;
 * - exec names are names: empty, or containing '/' without being a path, is
 *   an error (a relative path would never match anything). A drive path
 *   (C:/x, C:\x) is left to freezing, which knows the target: a file on
 *   windows (lattice/layer.c), an error or a name elsewhere.
 * - every net destination is a HOST[:PORT] pattern (netdest.h), the same
 *   pattern is not both allowed and denied, and `net allow;`/`net deny;`
 *   and a `net { }` list are not both written;
 * Scalars set twice differently are the front ends' to report: the AST
 * keeps one value per scalar.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "syntax/netdest.h"
#include "syntax/syntax.h"

#define SUBSET_HINT                                                                     \
    "portable patterns use literals (\\-escaped punctuation), '.', [classes], * + ? {m,n}, " \
    "|, ( ) and ^ $"

/* ---- positions inside a pattern ------------------------------------------ */

/* Source offset of byte `off` of the decoded text of w. In a grant-language
 * string the escapes are walked (\\d is written "\\\\d"); elsewhere the
 * text is taken as written when its length says so, else the word's start. */
static uint32_t word_offset(const gk_word *w, size_t off)
{
    const gk_source *src = w->loc.src;
    size_t dlen = strlen(w->text);
    if (!src || w->loc.end > src->len || w->loc.start >= w->loc.end)
        return w->loc.start;
    const char *raw = src->text + w->loc.start;
    size_t rlen = w->loc.end - w->loc.start;
    if (!w->quoted || raw[0] != '"') {
        if (rlen == dlen)
            return w->loc.start + (uint32_t)(off > dlen ? dlen : off);
        if (rlen == dlen + 2)
            return w->loc.start + 1 + (uint32_t)(off > dlen ? dlen : off);
        return w->loc.start;
    }
    /* Walk the grant string, counting decoded bytes. */
    size_t r = 1, d = 0;
    while (r < rlen && raw[r] != '"') {
        size_t rstep = 1, dstep = 1;
        if (raw[r] == '\\' && r + 1 < rlen) {
            char e = raw[r + 1];
            rstep = 2;
            if (e == 'x') {
                rstep = 4;
            } else if (e == 'u') {
                size_t j = r + 2;
                while (j < rlen && raw[j] != '}' && raw[j] != '"')
                    j++;
                rstep = j - r + 1;
                unsigned long cp = strtoul(raw + r + 3, NULL, 16);
                dstep = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            }
        }
        if (off < d + dstep)
            return w->loc.start + (uint32_t)r;
        r += rstep;
        d += dstep;
    }
    return w->loc.start + (uint32_t)(r < rlen ? r : rlen - 1);
}

static gk_loc word_range(const gk_word *w, size_t from, size_t to)
{
    gk_loc l = w->loc;
    l.start = word_offset(w, from);
    l.end = word_offset(w, to);
    if (l.end <= l.start)
        l.end = l.start + 1;
    return l;
}

/* The construct's spelling is the first '...' in its name. */
static size_t spelled_len(const char *name)
{
    const char *a = strchr(name, '\'');
    const char *b = a ? strchr(a + 1, '\'') : NULL;
    /* "escape '\\''" style names never occur: a quote is not a construct. */
    return a && b ? (size_t)(b - a - 1) : 1;
}

static void check_pattern(const gk_word *w, grant_diags *d)
{
    size_t at = 0;
    gk_autofree char *bad = gk_regex_unportable(w->text, &at);
    if (bad) {
        gk_loc l = word_range(w, at, at + spelled_len(bad));
        gk_diag_add(d, GK_ERROR, l, SUBSET_HINT, "pattern uses %s, outside the portable subset",
                    bad);
        return;
    }
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)w->text, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code,
                                   &off, NULL);
    if (re) {
        pcre2_code_free(re);
        return;
    }
    PCRE2_UCHAR msg[256];
    if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
        strcpy((char *)msg, "cannot compile");
    gk_diag_add(d, GK_ERROR, word_range(w, off, off + 1), NULL, "invalid pattern: %s",
                (const char *)msg);
}

/* ---- per rule ------------------------------------------------------------ */

static gk_loc subcmds_loc(const gk_exec_rule *r)
{
    if (!r->nsubcmds)
        return r->loc;
    gk_loc l = r->subcmds[0].loc;
    l.end = r->subcmds[r->nsubcmds - 1].loc.end;
    return l;
}

static void check_rule(const gk_exec_rule *r, grant_diags *d)
{
    for (size_t i = 0; i < r->ntargets; i++) {
        const gk_target *t = &r->targets[i];
        const char *text = t->word.text ? t->word.text : "";
        switch (t->kind) {
        case GK_T_MATCH:
            if (r->verdict != GK_DENY)
                gk_diag_add(d, GK_ERROR, t->word.loc,
                            "write deny match \"...\", and allow commands by name or path",
                            "patterns may only deny: they are vetoes");
            check_pattern(&t->word, d);
            break;
        case GK_T_NAME:
            if (!*text) {
                gk_diag_add(d, GK_ERROR, t->word.loc, NULL, "empty command name");
            } else if (strcmp(text, ".") == 0 || strcmp(text, "..") == 0) {
                /* A directory, never a program; joined to each PATH entry
                 * it would be a path that is not lexically normal, in the
                 * IR's projection too (found by fuzz_include). */
                gk_diag_add(d, GK_ERROR, t->word.loc, "name a program, or a dir ending in '/'",
                            "'%s' is not a command name", text);
            } else if (strchr(text, '/') && !gk_word_is_drive_path(text)) {
                /* A drive path (C:/x) is a file on the windows target and
                 * an error elsewhere: freezing knows the target. */
                gk_autofree char *hint =
                    gk_printf("exec paths start with '/', '~' or a sigil: write cwd:/%s", text);
                gk_diag_add(d, GK_ERROR, t->word.loc, hint, "'%s' is a relative path", text);
            }
            break;
        default:
            break;
        }
    }
    if (r->has_subcmds) {
        if (r->verdict == GK_DENY) {
            gk_diag_add(d, GK_ERROR, subcmds_loc(r),
                        "a subcommand list names what 'allow' admits; deny the whole command "
                        "or allow only the subcommands it may run",
                        "subcommand list on a 'deny' rule");
        } else if (r->ntargets > 1) {
            gk_diag_add(d, GK_ERROR, r->targets[1].word.loc,
                        "write one rule per command: allow NAME [SUB ...];",
                        "subcommand list on a rule with %zu targets", r->ntargets);
        } else if (r->ntargets == 1 && r->targets[0].kind == GK_T_DIR) {
            gk_diag_add(d, GK_ERROR, r->targets[0].word.loc,
                        "a subcommand list needs a command name or file",
                        "subcommand list on a directory '%s'", r->targets[0].word.text);
        } else if (r->ntargets == 1 && r->targets[0].kind == GK_T_MATCH) {
            gk_diag_add(d, GK_ERROR, r->targets[0].word.loc,
                        "a subcommand list needs a command name or file",
                        "subcommand list on a pattern");
        }
    }
}

/* ---- contradictions ------------------------------------------------------ */

/* The first occurrence of each use of one target (same kind and text). */
typedef struct tgroup {
    const gk_target *t;
    const gk_target *allow, *plain, *subs, *deny;
    size_t allow_at, plain_at, subs_at, deny_at; /* source order */
} tgroup;

static uint64_t target_hash(const gk_target *t)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)t->kind;
    for (const unsigned char *p = (const unsigned char *)t->word.text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* Report the later of two occurrences, citing the earlier. */
static void contradiction(grant_diags *d, const gk_target *a, size_t a_at, const gk_target *b,
                          size_t b_at, const char *what)
{
    const gk_target *first = a_at < b_at ? a : b;
    const gk_target *second = first == a ? b : a;
    gk_diag *dg = gk_diag_add(d, GK_ERROR, second->word.loc, NULL, "'%s' is %s",
                              second->word.text, what);
    gk_diag_relate(dg, first->word.loc, "first written here");
}

/* One pass with a hash table (files of 10,000 rules compile in
 * milliseconds): group every target by kind and text, remember the first
 * allow, plain allow, allow with subcommands and deny of each. */
static void check_contradictions(const gk_file_ast *ast, grant_diags *d)
{
    size_t n = 0;
    for (size_t i = 0; i < ast->nexec; i++)
        n += ast->exec[i].ntargets;
    if (n < 2)
        return;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *slot = gk_calloc(cap, sizeof(*slot)); /* group index + 1 */
    tgroup *g = gk_malloc(n * sizeof(*g));
    size_t ng = 0, order = 0;
    for (size_t i = 0; i < ast->nexec; i++) {
        const gk_exec_rule *r = &ast->exec[i];
        for (size_t j = 0; j < r->ntargets; j++, order++) {
            const gk_target *t = &r->targets[j];
            /* Patterns only veto; an allowed one is an error of its own. */
            if (t->kind == GK_T_MATCH || !t->word.text)
                continue;
            size_t h = (size_t)target_hash(t) & (cap - 1);
            tgroup *e = NULL;
            while (slot[h]) {
                tgroup *c = &g[slot[h] - 1];
                if (c->t->kind == t->kind && strcmp(c->t->word.text, t->word.text) == 0) {
                    e = c;
                    break;
                }
                h = (h + 1) & (cap - 1);
            }
            if (!e) {
                e = &g[ng++];
                *e = (tgroup){.t = t};
                slot[h] = (uint32_t)ng;
            }
            if (r->verdict == GK_DENY) {
                if (!e->deny)
                    e->deny = t, e->deny_at = order;
                continue;
            }
            if (!e->allow)
                e->allow = t, e->allow_at = order;
            bool subs = r->verdict == GK_ALLOW && r->has_subcmds;
            if (subs && !e->subs)
                e->subs = t, e->subs_at = order;
            if (!subs && !e->plain)
                e->plain = t, e->plain_at = order;
        }
    }
    for (size_t i = 0; i < ng; i++) {
        const tgroup *e = &g[i];
        if (e->allow && e->deny)
            contradiction(d, e->allow, e->allow_at, e->deny, e->deny_at, "both allowed and denied");
        if (e->plain && e->subs)
            contradiction(d, e->plain, e->plain_at, e->subs, e->subs_at,
                          "allowed both with and without a subcommand list");
    }
    free(g);
    free(slot);
}

/* ---- net destinations ------------------------------------------------------ */

typedef struct net_seen {
    char *canon;
    const gk_word *w;
    gk_verdict verdict;
    size_t order;
} net_seen;

static int net_seen_cmp(const void *a, const void *b)
{
    const net_seen *x = a, *y = b;
    int c = strcmp(x->canon, y->canon);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void check_net(const gk_file_ast *ast, grant_diags *d)
{
    if (ast->has_net_list && ast->net.value != GK_UNSET) {
        const char *word = ast->net.value == GK_ALLOW ? "allow" : "deny";
        bool list_first = ast->net_list_loc.start < ast->net.loc.start;
        gk_autofree char *hint = gk_printf("keep one: 'net %s;' or the destination list", word);
        gk_diag *dg = gk_diag_add(d, GK_ERROR, list_first ? ast->net.loc : ast->net_list_loc,
                                  hint, "'net' is set twice: 'net %s;' and a destination list",
                                  word);
        gk_diag_relate(dg, list_first ? ast->net_list_loc : ast->net.loc, "first written here");
    }
    size_t n = 0;
    for (size_t i = 0; i < ast->nnet_rules; i++)
        n += ast->net_rules[i].ndests;
    net_seen *seen = n ? gk_calloc(n, sizeof(*seen)) : NULL;
    size_t ns = 0;
    for (size_t i = 0; i < ast->nnet_rules; i++) {
        const gk_net_rule *r = &ast->net_rules[i];
        for (size_t j = 0; j < r->ndests; j++) {
            const gk_word *w = &r->dests[j];
            gk_dest dest;
            gk_dest_error err;
            if (!w->text)
                continue;
            if (gk_dest_parse_pattern(w->text, &dest, &err) < 0) {
                gk_diag_add(d, GK_ERROR, word_range(w, err.at, err.at + err.len), err.hint,
                            "%s: '%s'", err.msg, w->text);
                continue;
            }
            seen[ns] = (net_seen){gk_dest_format(&dest), w, r->verdict, ns};
            ns++;
        }
    }
    if (ns > 1)
        qsort(seen, ns, sizeof(*seen), net_seen_cmp);
    for (size_t i = 0; i < ns;) {
        size_t j = i;
        const net_seen *allow = NULL, *deny = NULL;
        for (; j < ns && strcmp(seen[j].canon, seen[i].canon) == 0; j++) {
            if (seen[j].verdict == GK_DENY && !deny)
                deny = &seen[j];
            if (seen[j].verdict == GK_ALLOW && !allow)
                allow = &seen[j];
        }
        if (allow && deny) {
            const net_seen *first = allow->order < deny->order ? allow : deny;
            const net_seen *second = first == allow ? deny : allow;
            gk_diag *dg = gk_diag_add(d, GK_ERROR, second->w->loc, NULL,
                                      "destination '%s' is both allowed and denied",
                                      second->w->text);
            gk_diag_relate(dg, first->w->loc, "first written here");
        }
        i = j;
    }
    for (size_t i = 0; i < ns; i++)
        free(seen[i].canon);
    free(seen);
}

/* ---- entry point --------------------------------------------------------- */

/* Stable merge sort of d->v[from..n) by position: per-rule errors and
 * contradictions come out in source order, and many errors stay cheap. */
static void sort_range(grant_diags *d, size_t from)
{
    size_t n = d->n - from;
    if (n < 2)
        return;
    gk_diag *a = d->v + from, *tmp = gk_malloc(n * sizeof(*tmp));
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = a[j].loc.start < a[i].loc.start ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, n * sizeof(*tmp));
    }
    free(tmp);
}

size_t gk_ast_validate(const gk_file_ast *ast, grant_diags *diags)
{
    if (!ast || !diags)
        return 0;
    size_t errors = diags->errors, first = diags->n;
    for (size_t i = 0; i < ast->nexec; i++)
        check_rule(&ast->exec[i], diags);
    check_contradictions(ast, diags);
    check_net(ast, diags);
    sort_range(diags, first);
    return diags->errors - errors;
}
