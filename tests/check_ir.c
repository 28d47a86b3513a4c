/* check_ir.c - the canonical IR (grant-language.md §7): goldens, determinism,
 * pretty vs compact, IR -> read -> IR identity, escaping, and the strict
 * reader's rejections.
 *
 * Goldens: every tests/data/ir/NAME.grant is compiled with the fixed offline
 * context (gk_test_context_linux) and compared byte for byte with NAME.json
 * (compact) and NAME.pretty.json. Rejections: every tests/data/ir/reject/
 * NAME.json must fail to read with exactly the diagnostics in NAME.err.
 * targets/{windows,macos}.grant pin the other offline targets the same way.
 * GK_REGEN=1 rewrites all of these from the current output instead of
 * comparing (review the diff before committing it).
 */
#include "testutil.h"
#include "ir/ir.h"
#include "common/json.h"
#include "gate/gate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *data_dir(void)
{
    return gk_test_path("tests/data/ir");
}

/* Compile one file of tests/data/ir by its bare name, so the `sources` in
 * the goldens do not depend on where the tree is checked out. */
static grant_policy *compile_rel(const char *name)
{
    gk_autofree char *dir = data_dir();
    ck_assert_int_eq(chdir(dir), 0);
    grant_context *ctx = gk_test_context_linux();
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    const char *files[] = {name};
    int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
    if (rc != 0) {
        gk_autofree char *msg = gk_test_render_diags(d);
        ck_abort_msg("compiling %s failed (%d):\n%s", name, rc, msg);
    }
    grant_diags_free(d);
    grant_context_free(ctx);
    return p;
}

static char *ir_of(const grant_policy *p, bool pretty)
{
    size_t len = 0;
    char *s = gk_ir_policy(p, pretty, &len);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(len, strlen(s));
    return s;
}

/* Read IR text back; NULL with diags filled on failure. */
static grant_policy *read_ir(const char *name, const char *text, const grant_context *ctx,
                             grant_diags *d)
{
    gk_source *src = gk_source_new(name, text, strlen(text));
    grant_policy *p = gk_ir_read(src, ctx, d);
    gk_source_unref(src);
    return p;
}

static void assert_same_text(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    size_t i = 0;
    while (got[i] && got[i] == want[i])
        i++;
    size_t from = i > 40 ? i - 40 : 0;
    ck_abort_msg("%s differs at byte %zu:\n got: ...%.120s\nwant: ...%.120s", what, i, got + from,
                 want + from);
}

static gk_strvec grant_files(void)
{
    gk_autofree char *dir = data_dir();
    gk_strvec all = gk_test_files(dir, ".grant");
    /* Only the top level: reject/ holds no grant files, but be explicit. */
    gk_strvec top = {0};
    for (size_t i = 0; i < all.n; i++) {
        const char *rel = all.v[i] + strlen(dir) + 1;
        if (!strchr(rel, '/'))
            gk_strvec_push(&top, rel);
    }
    gk_strvec_free(&all);
    ck_assert_uint_ge(top.n, 5);
    return top;
}

static char *golden_path(const char *grant, const char *suffix)
{
    gk_autofree char *dir = data_dir();
    gk_autofree char *stem = gk_strndup(grant, strlen(grant) - strlen(".grant"));
    return gk_printf("%s/%s%s", dir, stem, suffix);
}

/* ---- goldens, determinism, pretty ---------------------------------------- */

START_TEST(test_goldens)
{
    gk_strvec files = grant_files();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_rel(files.v[i]);
        gk_autofree char *compact = ir_of(p, false);
        gk_autofree char *pretty = ir_of(p, true);
        gk_autofree char *gc = golden_path(files.v[i], ".json");
        gk_autofree char *gp = golden_path(files.v[i], ".pretty.json");
        gk_test_golden_text(gc, compact);
        gk_test_golden_text(gp, pretty);
        grant_policy_free(p);
    }
    gk_strvec_free(&files);
}
END_TEST

START_TEST(test_deterministic)
{
    gk_strvec files = grant_files();
    for (size_t i = 0; i < files.n; i++) {
        for (int pretty = 0; pretty < 2; pretty++) {
            grant_policy *a = compile_rel(files.v[i]);
            grant_policy *b = compile_rel(files.v[i]);
            gk_autofree char *ia = ir_of(a, pretty);
            gk_autofree char *ib = ir_of(b, pretty);
            assert_same_text(files.v[i], ib, ia);
            /* And printing the same policy twice. */
            gk_autofree char *ia2 = ir_of(a, pretty);
            assert_same_text(files.v[i], ia2, ia);
            grant_policy_free(a);
            grant_policy_free(b);
        }
    }
    gk_strvec_free(&files);
}
END_TEST

/* Keys in bytewise order at every level, recursively. */
static void assert_sorted_keys(json_t *v, const char *where)
{
    if (json_is_object(v)) {
        const char *k, *prev = NULL;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (prev)
                ck_assert_msg(gk_strcmp_bytes(prev, k) < 0, "%s: key '%s' after '%s'", where, k,
                              prev);
            prev = k;
            assert_sorted_keys(x, where);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            assert_sorted_keys(x, where);
    }
}

/* The streaming writer's bytes are jansson's dump of the same document. */
static void assert_jansson_layout(const char *what, json_t *doc, const char *compact,
                                  const char *pretty)
{
    gk_autofree char *jc = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
    gk_autofree char *jp = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(2));
    ck_assert_ptr_nonnull(jc);
    ck_assert_ptr_nonnull(jp);
    assert_same_text(what, compact, jc);
    assert_same_text(what, pretty, jp);
}

START_TEST(test_pretty_vs_compact)
{
    gk_strvec files = grant_files();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_rel(files.v[i]);
        gk_autofree char *compact = ir_of(p, false);
        gk_autofree char *pretty = ir_of(p, true);
        json_error_t e;
        /* jansson keeps insertion order, so this also checks the order in
         * which keys were written. */
        json_t *a = json_loads(compact, JSON_REJECT_DUPLICATES, &e);
        ck_assert_msg(a != NULL, "%s: %s", files.v[i], e.text);
        json_t *b = json_loads(pretty, JSON_REJECT_DUPLICATES, &e);
        ck_assert_msg(b != NULL, "%s: %s", files.v[i], e.text);
        ck_assert_msg(json_equal(a, b), "%s: pretty and compact differ", files.v[i]);
        assert_sorted_keys(a, files.v[i]);
        assert_sorted_keys(b, files.v[i]);
        /* Byte for byte what jansson prints for the same document. */
        assert_jansson_layout(files.v[i], a, compact, pretty);
        /* No insignificant whitespace in compact output: every space or
         * newline sits inside a string (the test paths have none). */
        ck_assert_ptr_null(strchr(compact, '\n'));
        ck_assert_ptr_null(strstr(compact, "\": "));
        ck_assert_ptr_null(strstr(compact, ", "));
        /* Pretty: two-space indent, one key per line. */
        ck_assert_ptr_nonnull(strstr(pretty, "{\n  \"context\": {\n    \"cwd\": \"/w\",\n"));
        ck_assert_int_eq(pretty[strlen(pretty) - 1], '}');
        json_decref(a);
        json_decref(b);
        grant_policy_free(p);
    }
    gk_strvec_free(&files);
}
END_TEST

/* ---- round trip ----------------------------------------------------------- */

/* Warnings and errors: a note that a source is not on this machine (its
 * digest unchecked) is no fault of the IR. */
static size_t non_notes(const grant_diags *d)
{
    size_t n = 0;
    for (size_t i = 0; i < grant_diags_count(d); i++)
        n += grant_diags_severity(d, i) != 2; /* 2: a note */
    return n;
}

static void assert_roundtrip(const char *what, const grant_policy *p, const grant_context *ctx)
{
    for (int pretty = 0; pretty < 2; pretty++) {
        gk_autofree char *ir = ir_of(p, pretty);
        grant_diags *d = grant_diags_new();
        grant_policy *q = read_ir("roundtrip.json", ir, ctx, d);
        if (!q) {
            gk_autofree char *msg = gk_test_render_diags(d);
            ck_abort_msg("%s: reading its own IR failed:\n%s", what, msg);
        }
        ck_assert_msg(non_notes(d) == 0, "%s", gk_test_render_diags(d));
        /* Both output forms from either input form. */
        for (int pretty2 = 0; pretty2 < 2; pretty2++) {
            gk_autofree char *want = ir_of(p, pretty2);
            gk_autofree char *again = ir_of(q, pretty2);
            assert_same_text(what, again, want);
        }
        ck_assert_uint_eq(q->stack.n, p->stack.n);
        for (size_t i = 0; i < p->stack.n; i++)
            ck_assert(gk_layer_equal(q->stack.v[i], p->stack.v[i]));
        grant_policy_free(q);
        grant_diags_free(d);
    }
}

START_TEST(test_roundtrip_compiled)
{
    gk_strvec files = grant_files();
    grant_context *ctx = gk_test_context_linux();
    for (size_t i = 0; i < files.n; i++) {
        grant_policy *p = compile_rel(files.v[i]);
        assert_roundtrip(files.v[i], p, ctx);
        grant_policy_free(p);
    }
    grant_context_free(ctx);
    gk_strvec_free(&files);
}
END_TEST

/* Offline targets other than linux: drive letters and case-folded real
 * spellings (windows), aliased real spellings (macos). */
static grant_context *target_context(grant_target t)
{
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    ck_assert_int_eq(grant_context_set_target(ctx, t), 0);
    bool win = t == GRANT_TARGET_WINDOWS;
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_HOME, win ? "C:/Users/u" : "/Users/u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_USER, "u"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_CWD, win ? "C:/w" : "/w"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_TEMPDIR, win ? "C:/Temp" : "/tmp"), 0);
    ck_assert_int_eq(grant_context_set(ctx, GRANT_CTX_PATH, win ? "C:/Windows;C:/bin" : "/usr/bin:/bin"), 0);
    for (int i = 0; i < GK_XDG_COUNT; i++)
        ck_assert_int_eq(grant_context_set_xdg(ctx, gk_xdg_names[i], NULL), 0);
    return ctx;
}

START_TEST(test_targets)
{
    static const struct {
        grant_target t;
        const char *name;
    } targets[] = {{GRANT_TARGET_WINDOWS, "windows"}, {GRANT_TARGET_MACOS, "macos"}};
    gk_autofree char *dir = gk_test_path("tests/data/ir/targets");
    ck_assert_int_eq(chdir(dir), 0);
    for (size_t i = 0; i < 2; i++) {
        grant_context *ctx = target_context(targets[i].t);
        gk_autofree char *file = gk_printf("%s.grant", targets[i].name);
        const char *files[] = {file};
        grant_diags *d = grant_diags_new();
        grant_policy *p = NULL;
        int rc = grant_compile(ctx, files, 1, NULL, 0, d, &p);
        ck_assert_msg(rc == 0, "%s: %s", file, gk_test_render_diags(d));
        gk_autofree char *ir = ir_of(p, true);
        gk_autofree char *gpath = gk_printf("%s/%s.pretty.json", dir, targets[i].name);
        gk_test_golden_text(gpath, ir);
        gk_autofree char *want_target = gk_printf("\"target\": \"%s\"", targets[i].name);
        ck_assert_ptr_nonnull(strstr(ir, want_target));
        assert_roundtrip(file, p, ctx);
        grant_policy_free(p);
        grant_diags_free(d);
        grant_context_free(ctx);
    }
}
END_TEST

/* ---- hand-built layers: every shape, no compiler needed ------------------- */

static void add_region(gk_regions *r, const char *path, const char *real)
{
    gk_fpath fp = {(char *)path, (char *)real};
    gk_regions_add(r, &fp, "hand.grant:9");
}

static void add_admit(gk_admits *a, const char *key, const char *const *subs, size_t nsubs)
{
    gk_admit ad = {0};
    ad.key = gk_strdup(key);
    ad.all = subs == NULL;
    for (size_t i = 0; i < nsubs; i++)
        gk_strvec_push(&ad.subs, subs[i]);
    ad.origin = gk_strdup("hand.grant:3");
    GK_VEC_PUSH(a->v, a->n, a->cap, ad);
}

/* Layer 1: everything restricted. */
static gk_layer *layer_full(void)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_strdup("full");
    f->origin = gk_strdup("hand.grant:1");
    f->has_exec = true;
    f->exec.has_allow = true;
    const char *git[] = {"status", "log"};
    add_admit(&f->exec.names, "make", NULL, 0);
    add_admit(&f->exec.names, "git", git, 2);
    const char *run[] = {"start"};
    add_admit(&f->exec.files, "/opt/run", run, 1);
    add_admit(&f->exec.files, "/usr/bin/env", NULL, 0);
    gk_entries_add(&f->exec.dirs, "/usr/bin", "hand.grant:4");
    gk_entries_add(&f->exec.veto_names, "bash", "hand.grant:5");
    gk_entries_add(&f->exec.veto_files, "/usr/bin/sudo", "hand.grant:5");
    gk_entries_add(&f->exec.veto_dirs, "/home/u/.local/bin", "hand.grant:5");
    gk_entries_add(&f->exec.veto_match, "^python[0-9.]*$", "hand.grant:6");
    f->has_fs = true;
    f->fs.restricted = true;
    add_region(&f->fs.read, "/usr", "/usr");
    add_region(&f->fs.read, "/home/u/project", "/home/u/project");
    add_region(&f->fs.write, "/w", "/w");
    add_region(&f->fs.readonly, "/w/.git/hooks", "/w/.git/hooks");
    add_region(&f->fs.deny, "/home/u/.ssh", "/home/u/.ssh");
    f->net = GK_TRI_FALSE;
    f->has_shell = true;
    f->chdir = GK_TRI_TRUE;
    f->has_editor = true;
    f->ed_read = GK_TRI_TRUE;
    f->ed_write = GK_TRI_FALSE;
    f->ed_tui = GK_TRI_NONE;
    f->audit = true;
    gk_layer_canonicalize(f);
    return f;
}

/* Layer 2: deny-only sections, empty shell, net allowed. */
static gk_layer *layer_overlay(void)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_strdup("overlay");
    f->origin = gk_strdup("over.grant:2");
    f->has_exec = true;
    gk_entries_add(&f->exec.veto_names, "sh", "over.grant:3");
    f->has_fs = true;
    add_region(&f->fs.deny, "/etc/shadow", "/etc/shadow");
    add_region(&f->fs.readonly, "/w/.grant", "/w/.grant");
    f->net = GK_TRI_TRUE;
    f->has_shell = true;
    gk_layer_canonicalize(f);
    return f;
}

/* Layer 3: abstains everywhere; empty exec/fs admit nothing. */
static gk_layer *layer_empty(bool empty_sections)
{
    gk_layer *f = gk_layer_new();
    f->name = gk_strdup(empty_sections ? "nothing" : "abstain");
    f->origin = gk_strdup("empty.grant:1");
    if (empty_sections) {
        f->has_exec = true;
        f->exec.has_allow = true;
        f->has_fs = true;
        f->fs.restricted = true;
    }
    gk_layer_canonicalize(f);
    return f;
}

static grant_policy *policy_hand(const grant_context *ctx)
{
    grant_policy *p = gk_policy_new(ctx);
    gk_stack_push(&p->stack, layer_full());
    gk_stack_push(&p->stack, layer_overlay());
    gk_stack_push(&p->stack, layer_empty(false));
    gk_stack_push(&p->stack, layer_empty(true));
    gk_source *s = gk_source_new("hand.grant", "grant full {}", 13);
    gk_policy_add_source(p, "hand.grant", s);
    gk_source_unref(s);
    return p;
}

START_TEST(test_layer_shape)
{
    /* The exact layer shape of the spec (§7), pinned byte for byte. */
    gk_layer *f = layer_full();
    gk_autofree char *s = gk_ir_layer(f, false);
    const char *want =
        "{\"audit\":true,\"editor\":{\"read\":true,\"tui\":null,\"write\":false},"
        "\"exec\":{\"allow\":{\"dirs\":[\"/usr/bin\"],"
        "\"files\":{\"/opt/run\":[\"start\"],\"/usr/bin/env\":\"allow\"},"
        "\"names\":{\"git\":[\"log\",\"status\"],\"make\":\"allow\"}},"
        "\"deny\":{\"dirs\":[\"/home/u/.local/bin\"],\"files\":[\"/usr/bin/sudo\"],"
        "\"match\":[\"^python[0-9.]*$\"],\"names\":[\"bash\"]}},"
        "\"fs\":{\"deny\":[{\"path\":\"/home/u/.ssh\",\"real\":\"/home/u/.ssh\"}],"
        "\"read\":[{\"path\":\"/home/u/project\",\"real\":\"/home/u/project\"},"
        "{\"path\":\"/usr\",\"real\":\"/usr\"},{\"path\":\"/w\",\"real\":\"/w\"}],"
        "\"readonly\":[{\"path\":\"/w/.git/hooks\",\"real\":\"/w/.git/hooks\"}],"
        "\"write\":[{\"path\":\"/w\",\"real\":\"/w\"}]},"
        "\"name\":\"full\",\"net\":false,\"origin\":\"hand.grant:1\",\"shell\":{\"chdir\":true}}";
    assert_same_text("full layer", s, want);
    gk_layer_free(f);

    f = layer_overlay();
    gk_autofree char *o = gk_ir_layer(f, false);
    assert_same_text("overlay layer", o,
                     "{\"audit\":false,\"editor\":null,\"exec\":{\"allow\":null,"
                     "\"deny\":{\"dirs\":[],\"files\":[],\"match\":[],\"names\":[\"sh\"]}},"
                     "\"fs\":{\"deny\":[{\"path\":\"/etc/shadow\",\"real\":\"/etc/shadow\"}],"
                     "\"read\":null,\"readonly\":[{\"path\":\"/w/.grant\",\"real\":\"/w/.grant\"}],"
                     "\"write\":null},\"name\":\"overlay\",\"net\":true,"
                     "\"origin\":\"over.grant:2\",\"shell\":{\"chdir\":null}}");
    gk_layer_free(f);

    f = layer_empty(false);
    gk_autofree char *a = gk_ir_layer(f, false);
    assert_same_text("abstaining layer", a,
                     "{\"audit\":false,\"editor\":null,\"exec\":null,\"fs\":null,"
                     "\"name\":\"abstain\",\"net\":null,\"origin\":\"empty.grant:1\",\"shell\":null}");
    gk_layer_free(f);

    f = layer_empty(true);
    gk_autofree char *e = gk_ir_layer(f, true);
    assert_same_text("empty-sections layer (pretty)", e,
                     "{\n  \"audit\": false,\n  \"editor\": null,\n  \"exec\": {\n"
                     "    \"allow\": {\n      \"dirs\": [],\n      \"files\": {},\n"
                     "      \"names\": {}\n    },\n    \"deny\": {\n      \"dirs\": [],\n"
                     "      \"files\": [],\n      \"match\": [],\n      \"names\": []\n    }\n"
                     "  },\n  \"fs\": {\n    \"deny\": [],\n    \"read\": [],\n"
                     "    \"readonly\": [],\n    \"write\": []\n  },\n  \"name\": \"nothing\",\n"
                     "  \"net\": null,\n  \"origin\": \"empty.grant:1\",\n  \"shell\": null\n}");
    gk_layer_free(f);
}
END_TEST

START_TEST(test_roundtrip_hand)
{
    grant_context *ctx = gk_test_context_linux();
    grant_policy *p = policy_hand(ctx);
    gk_autofree char *ir = ir_of(p, false);
    /* Top-level shape. */
    ck_assert(gk_has_prefix(ir, "{\"context\":{\"cwd\":\"/w\",\"home\":\"/home/u\",\"host\":false,"
                                "\"implicit\":true,\"path\":\"/usr/bin:/bin\",\"target\":\"linux\","
                                "\"tempdir\":\"/tmp\",\"user\":\"u\",\"xdg\":{\"bin\":"
                                "\"/home/u/.local/bin\",\"cache\":\"/home/u/.cache\","
                                "\"config\":\"/home/u/.config\",\"data\":\"/home/u/.local/share\","
                                "\"state\":\"/home/u/.local/state\"}},\"grantkit\":1,"
                                "\"kind\":\"policy\",\"layers\":[{\"audit\":true,"));
    ck_assert_ptr_nonnull(strstr(ir, "],\"projection\":{\"deny\":["));
    gk_source *s = gk_source_new("hand.grant", "grant full {}", 13);
    gk_autofree char *sha = gk_source_sha256_hex(s);
    gk_source_unref(s);
    gk_autofree char *tail = gk_printf(",\"sources\":[{\"file\":\"hand.grant\",\"sha256\":\"%s\"}]}", sha);
    ck_assert_msg(gk_has_suffix(ir, tail), "%s", ir);
    assert_roundtrip("hand-built", p, ctx);
    grant_policy_free(p);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_roundtrip_empty_policy)
{
    grant_context *ctx = gk_test_context_linux();
    grant_policy *p = gk_policy_new(ctx);
    gk_autofree char *ir = ir_of(p, false);
    ck_assert_ptr_nonnull(strstr(ir, "\"layers\":[]"));
    ck_assert(gk_has_suffix(ir, "\"sources\":[]}"));
    assert_roundtrip("empty policy", p, ctx);
    grant_policy_free(p);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_roundtrip_no_implicit)
{
    grant_context *ctx = gk_test_context_linux();
    ck_assert_int_eq(grant_context_set_implicit(ctx, false), 0);
    grant_policy *p = policy_hand(ctx);
    gk_autofree char *ir = ir_of(p, false);
    ck_assert_ptr_nonnull(strstr(ir, "\"implicit\":false"));
    ck_assert_ptr_nonnull(strstr(ir, "\"implicit\":null"));
    assert_roundtrip("no-implicit", p, ctx);
    grant_policy_free(p);
    grant_context_free(ctx);
}
END_TEST

/* ---- escaping ------------------------------------------------------------- */

START_TEST(test_escaping_compiled)
{
    grant_policy *p = compile_rel("escapes.grant");
    gk_autofree char *ir = ir_of(p, false);
    /* Escaped: quote, backslash, tab, newline. */
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/quote\\\"d\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/back\\\\slash\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/tab\\there\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/new\\nline\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"my tool\":[\"sub cmd\",\"x\\\"y\"]"));
    /* Raw: non-ASCII, U+2028, '/'. */
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/caf\xC3\xA9\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/\xC3\xA9-raw\""));
    ck_assert_ptr_nonnull(strstr(ir, "\"/w/sep\xE2\x80\xA8" "arator\""));
    ck_assert_ptr_null(strstr(ir, "\\u"));
    ck_assert_ptr_null(strstr(ir, "\\/"));
    ck_assert_ptr_null(strchr(ir, '\t'));
    ck_assert_ptr_null(strchr(ir, '\n'));
    gk_autofree char *pretty = ir_of(p, true);
    ck_assert_ptr_nonnull(strstr(pretty, "\"/w/sep\xE2\x80\xA8" "arator\""));
    ck_assert_ptr_null(strstr(pretty, "\\u"));
    grant_context *ctx = gk_test_context_linux();
    assert_roundtrip("escapes.grant", p, ctx);
    grant_context_free(ctx);
    grant_policy_free(p);
}
END_TEST

START_TEST(test_escaping_controls)
{
    /* Every control character U+0000..U+001F (NUL cannot occur in a C
     * string) is escaped, with the short forms where JSON has them and
     * \u00XX (upper-case hex) otherwise; DEL and C1 are not JSON control
     * characters and stay raw, as RFC 8259 and RFC 8785 have it. */
    gk_layer *f = gk_layer_new();
    f->origin = gk_strdup("c.grant:1");
    gk_buf name = {0};
    for (int c = 1; c < 0x20; c++)
        gk_buf_putc(&name, (char)c);
    gk_buf_puts(&name, "\x7F\xC2\x85/\"\\");
    f->name = gk_buf_steal(&name, NULL);
    gk_autofree char *s = gk_ir_layer(f, false);
    const char *want = "\"name\":\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n"
                       "\\u000B\\f\\r\\u000E\\u000F\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015"
                       "\\u0016\\u0017\\u0018\\u0019\\u001A\\u001B\\u001C\\u001D\\u001E\\u001F"
                       "\x7F\xC2\x85/\\\"\\\\\"";
    ck_assert_msg(strstr(s, want) != NULL, "got %s", s);
    gk_layer_free(f);
}
END_TEST

/* Random bytes, nesting and empty containers through gk_json_out, held
 * to jansson's reading and re-dumping of the result. */
START_TEST(test_json_out_is_jansson)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int round = 0; round < 3000; round++) {
        char str[16];
        size_t n = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        for (size_t len = x % 15; n < len; n++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            str[n] = (char)(1 + x % 255);
        }
        str[n] = '\0';
        for (int pretty = 0; pretty < 2; pretty++) {
            gk_buf b = {0};
            gk_json_out j;
            gk_json_init(&j, &b, pretty);
            gk_json_object(&j);
            gk_json_key(&j, "a");
            gk_json_array(&j);
            gk_json_string(&j, str);
            gk_json_null(&j);
            gk_json_bool(&j, round % 2);
            gk_json_int(&j, (long long)(x % 2001) - 1000);
            gk_json_array(&j);
            gk_json_end(&j);
            gk_json_object(&j);
            gk_json_end(&j);
            gk_json_end(&j);
            gk_json_key(&j, "b");
            gk_json_object(&j);
            gk_json_key(&j, "c");
            gk_json_string(&j, NULL);
            gk_json_end(&j);
            gk_json_key(&j, "k");
            gk_json_string(&j, str);
            gk_json_end(&j);
            gk_autofree char *got = gk_buf_steal(&b, NULL);
            json_error_t e;
            json_t *doc = json_loads(got, JSON_REJECT_DUPLICATES, &e);
            ck_assert_msg(doc != NULL, "round %d: %s in %s", round, e.text, got);
            gk_autofree char *want =
                json_dumps(doc, JSON_SORT_KEYS | (pretty ? JSON_INDENT(2) : JSON_COMPACT));
            assert_same_text("gk_json_out", got, want);
            json_decref(doc);
        }
    }
}
END_TEST

/* The one string rule (common/json.h, grantc(1) JSON OUTPUT), once, as a
 * table: every JSON document of the library and the CLIs goes through it. */
START_TEST(test_json_string_rule)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"", "\"\""},
        {"/usr/bin", "\"/usr/bin\""},
        {"a\"b\\c/d", "\"a\\\"b\\\\c/d\""},
        /* valid non-ASCII: copied as it is, 2, 3 and 4 bytes */
        {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\""},
        /* U+2028, U+2029, U+0085 and DEL: valid JSON raw, not escaped */
        {"\xE2\x80\xA8|\xE2\x80\xA9|\xC2\x85|\x7F", "\"\xE2\x80\xA8|\xE2\x80\xA9|\xC2\x85|\x7F\""},
        /* control characters: short escapes, else \u00XX in upper case */
        {"\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""},
        {"\x01\x0B\x1F", "\"\\u0001\\u000B\\u001F\""},
        /* invalid UTF-8: each byte that begins no well-formed sequence is
         * one U+FFFD, the valid text around it kept */
        {"a\xFF" "b", "\"a\xEF\xBF\xBD" "b\""},
        {"\x80\xBF", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},                 /* stray continuations */
        {"\xC3", "\"\xEF\xBF\xBD\""},                                 /* truncated at the end */
        {"\xE2\x82" "x", "\"\xEF\xBF\xBD\xEF\xBF\xBDx\""},            /* truncated inside */
        {"\xC0\xAF", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},                 /* overlong '/' */
        {"\xED\xA0\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""}, /* a surrogate */
        {"\xF4\x90\x80\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""}, /* > U+10FFFF */
        {"\xC3\xA9\xFF\xC3\xA9", "\"\xC3\xA9\xEF\xBF\xBD\xC3\xA9\""},  /* valid kept around */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gk_autofree char *got = grant_json_string(cases[i].in);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: got %s, want %s", i, got,
                      cases[i].want);
        gk_buf b = {0};
        gk_json_quote(&b, cases[i].in);
        gk_autofree char *quoted = gk_buf_steal(&b, NULL);
        ck_assert_str_eq(quoted, got);
        /* and it is JSON that jansson reads back */
        json_error_t e;
        gk_autofree char *doc = gk_printf("[%s]", got);
        json_t *v = json_loads(doc, 0, &e);
        ck_assert_msg(v != NULL, "case %zu: %s", i, e.text);
        json_decref(v);
    }
    ck_assert_ptr_null(grant_json_string(NULL));
}
END_TEST

/* ---- rejections as data --------------------------------------------------- */

START_TEST(test_rejects)
{
    gk_autofree char *dir = gk_test_path("tests/data/ir/reject");
    gk_strvec files = gk_test_files(dir, ".json");
    ck_assert_uint_ge(files.n, 12);
    grant_context *ctx = gk_test_context_linux();
    ctx->explicit_mask = 0; /* only the document is on trial here */
    for (size_t i = 0; i < files.n; i++) {
        size_t len = 0;
        gk_autofree char *text = gk_test_read(files.v[i], &len);
        ck_assert_ptr_nonnull(text);
        const char *base = gk_basename(files.v[i]);
        gk_source *src = gk_source_new(base, text, len);
        grant_diags *d = grant_diags_new();
        grant_policy *p = gk_ir_read(src, ctx, d);
        ck_assert_msg(p == NULL, "%s: accepted", base);
        ck_assert_msg(grant_diags_errors(d) > 0, "%s: rejected without an error", base);
        gk_autofree char *got = gk_test_render_diags(d);
        gk_autofree char *errpath =
            gk_printf("%.*s.err", (int)(strlen(files.v[i]) - strlen(".json")), files.v[i]);
        gk_autofree char *got_nl = gk_printf("%s\n", got);
        gk_test_golden_text(errpath, got_nl);
        grant_diags_free(d);
        gk_source_unref(src);
    }
    grant_context_free(ctx);
    gk_strvec_free(&files);
}
END_TEST

/* A valid document to mutate: the hand-built policy, so these tests do not
 * depend on the front ends. */
static char *hand_ir(void)
{
    grant_context *ctx = gk_test_context_linux();
    grant_policy *p = policy_hand(ctx);
    char *ir = ir_of(p, false);
    grant_policy_free(p);
    grant_context_free(ctx);
    return ir;
}

static char *replace_once(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    ck_assert_msg(at != NULL, "'%s' not in the document", from);
    return gk_printf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

static char *read_expect_error(const char *text, const grant_context *ctx)
{
    grant_diags *d = grant_diags_new();
    grant_policy *p = read_ir("hand.json", text, ctx, d);
    ck_assert_ptr_null(p);
    ck_assert_uint_gt(grant_diags_errors(d), 0);
    char *r = gk_test_render_diags(d);
    grant_diags_free(d);
    return r;
}

START_TEST(test_reject_inline)
{
    /* The same kinds of error built from the live output, so they keep
     * testing the reader when the format grows. */
    gk_autofree char *ir = hand_ir();
    grant_context *ctx = gk_test_context_linux();
    ctx->explicit_mask = 0;
    struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"grantkit\":1", "\"grantkit\":2", "error: unsupported IR version 2"},
        {"\"grantkit\":1", "\"grantkit\":\"1\"", "error: expected an integer for 'grantkit', found a string"},
        {"\"kind\":\"policy\"", "\"kind\":\"layer\"", "error: unsupported kind 'layer'"},
        {"\"audit\":false", "\"audit\":false,\"audti\":1", "error: unknown key 'audti' in 'layers[1]'"},
        {"\"audit\":false", "\"audit\":false,\"audit\":true", "error: duplicate key 'audit'"},
        {"\"net\":false,\"origin\"", "\"net\":\"no\",\"origin\"", "error: expected a boolean, null or an object for 'layers[0].net', found a string"},
        {"\"path\":\"/home/u/.ssh\"", "\"path\":\"home/u/.ssh\"", "error: 'home/u/.ssh' in 'layers[0].fs.deny[0].path' is not a frozen path"},
        {"\"make\":\"allow\"", "\"make\":\"deny\"", "error: expected \"allow\" or an array of subcommands for 'layers[0].exec.allow.names.make', found 'deny'"},
        {"\"target\":\"linux\"", "\"target\":\"linus\"", "error: unknown target 'linus'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gk_autofree char *doc = replace_once(ir, cases[i].from, cases[i].to);
        gk_autofree char *got = read_expect_error(doc, ctx);
        ck_assert_msg(strstr(got, cases[i].want) != NULL, "case %zu: want '%s', got:\n%s", i,
                      cases[i].want, got);
    }
    /* Truncated anywhere: always an error, never a crash or a policy. */
    size_t n = strlen(ir);
    for (size_t cut = 0; cut < n; cut += 1 + cut / 16) {
        gk_autofree char *doc = gk_strndup(ir, cut);
        gk_autofree char *got = read_expect_error(doc, ctx);
        ck_assert_msg(strstr(got, "hand.json:1:") != NULL, "cut %zu: %s", cut, got);
    }
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_parse_error_position)
{
    grant_context *ctx = gk_test_context_linux();
    gk_autofree char *got = read_expect_error("{\n  \"grantkit\": 1,\n  \"kind\": tru\n}", ctx);
    assert_same_text("parse error", got,
                     "hand.json:3:11: error: invalid JSON: invalid token near 'tru'\n"
                     " 3 |   \"kind\": tru\n"
                     "   | " "          " "^~~");
    grant_context_free(ctx);
}
END_TEST

/* ---- context agreement ---------------------------------------------------- */

START_TEST(test_context_disagreement)
{
    gk_autofree char *ir = hand_ir();
    struct {
        int what; /* 0 home, 1 user, 2 cwd, 3 tempdir, 4 path, 5 target, 6 xdg, 7 implicit */
        const char *value;
        const char *want;
    } cases[] = {
        {0, "/home/b", "error: compiled policy was frozen with home '/home/u', but --home is '/home/b'"},
        {1, "b", "error: compiled policy was frozen with user 'u', but --user is 'b'"},
        {2, "/x", "error: compiled policy was frozen with cwd '/w', but --cwd is '/x'"},
        {3, "/var/tmp", "error: compiled policy was frozen with tempdir '/tmp', but --tempdir is '/var/tmp'"},
        {4, "/bin", "error: compiled policy was frozen with path '/usr/bin:/bin', but --path is '/bin'"},
        {5, "macos", "error: compiled policy was frozen with target 'linux', but --target is 'macos'"},
        {5, "host", "error: compiled policy was frozen with target 'linux', but --target is 'host'"},
        {6, "/home/u/cfg", "error: compiled policy was frozen with xdg:config '/home/u/.config', but --xdg config is '/home/u/cfg'"},
        {7, NULL, "error: compiled policy was frozen with implicit grants, but --no-implicit is given"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        grant_context *ctx = gk_test_context_linux();
        ctx->explicit_mask = 0;
        int w = cases[i].what;
        if (w <= 4)
            ck_assert_int_eq(grant_context_set(ctx, (grant_ctx_key)w, cases[i].value), 0);
        else if (w == 5)
            ck_assert_int_eq(grant_context_set_target(ctx, strcmp(cases[i].value, "host") == 0
                                                               ? GRANT_TARGET_HOST
                                                               : GRANT_TARGET_MACOS),
                             0);
        else if (w == 6)
            ck_assert_int_eq(grant_context_set_xdg(ctx, "config", cases[i].value), 0);
        else
            ck_assert_int_eq(grant_context_set_implicit(ctx, false), 0);
        gk_autofree char *got = read_expect_error(ir, ctx);
        ck_assert_msg(strstr(got, cases[i].want) != NULL, "case %zu: want '%s', got:\n%s", i,
                      cases[i].want, got);
        /* The caret points at the IR's value, not at the document start. */
        ck_assert_msg(strstr(got, "hand.json:1:1:") == NULL, "case %zu: %s", i, got);
        ck_assert_ptr_nonnull(strstr(got, "hint: "));
        grant_context_free(ctx);
    }
}
END_TEST

START_TEST(test_context_agreement)
{
    /* Explicit flags equal to the IR's values are fine, and the policy's
     * context is the IR's. */
    gk_autofree char *ir = hand_ir();
    grant_context *ctx = gk_test_context_linux();
    ck_assert_int_eq(grant_context_set_xdg(ctx, "config", "/home/u/.config"), 0);
    ck_assert_int_eq(grant_context_set_implicit(ctx, true), 0);
    grant_diags *d = grant_diags_new();
    grant_policy *p = read_ir("hand.json", ir, ctx, d);
    ck_assert_msg(p != NULL, "%s", gk_test_render_diags(d));
    gk_autofree char *again = ir_of(p, false);
    assert_same_text("agreeing flags", again, ir);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

START_TEST(test_context_defaults_yield)
{
    /* No explicit flags: the host's defaults differ from the IR's context
     * everywhere, and the IR's context wins without complaint. */
    gk_autofree char *ir = hand_ir();
    grant_context *ctx = NULL;
    ck_assert_int_eq(grant_context_new(&ctx), 0);
    free(ctx->home);
    ctx->home = gk_strdup("/elsewhere");
    free(ctx->user);
    ctx->user = gk_strdup("someone");
    free(ctx->cwd);
    ctx->cwd = gk_strdup("/srv");
    ctx->implicit = false;
    ctx->target = GRANT_TARGET_HOST;
    ctx->explicit_mask = 0;
    grant_diags *d = grant_diags_new();
    grant_policy *p = read_ir("hand.json", ir, ctx, d);
    ck_assert_msg(p != NULL, "%s", gk_test_render_diags(d));
    ck_assert_uint_eq(non_notes(d), 0);
    ck_assert_str_eq(p->ctx->home, "/home/u");
    ck_assert_str_eq(p->ctx->user, "u");
    ck_assert_str_eq(p->ctx->cwd, "/w");
    ck_assert_int_eq(p->ctx->target, GRANT_TARGET_LINUX);
    ck_assert(p->ctx->implicit);
    gk_autofree char *again = ir_of(p, false);
    assert_same_text("defaults yield", again, ir);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);

    /* No caller context at all: likewise. */
    d = grant_diags_new();
    p = read_ir("hand.json", ir, NULL, d);
    ck_assert_msg(p != NULL, "%s", gk_test_render_diags(d));
    gk_autofree char *again2 = ir_of(p, false);
    assert_same_text("no context", again2, ir);
    grant_policy_free(p);
    grant_diags_free(d);
}
END_TEST

START_TEST(test_context_host)
{
    /* "host": true (paths canonicalised on the compiling machine) reads
     * back as the host target here, and disagrees with an explicit offline
     * --target of the same OS. */
    grant_context *hctx = gk_test_context_linux();
    ck_assert_int_eq(grant_context_set_target(hctx, GRANT_TARGET_HOST), 0);
    grant_policy *hp = policy_hand(hctx);
    gk_autofree char *ir = ir_of(hp, false);
    ck_assert_ptr_nonnull(strstr(ir, "\"host\":true"));
    grant_context *ctx = gk_test_context_linux();
    ctx->explicit_mask = 0;
    grant_diags *d = grant_diags_new();
    grant_policy *p = read_ir("host.json", ir, ctx, d);
    ck_assert_msg(p != NULL, "%s", gk_test_render_diags(d));
    ck_assert_int_eq(p->ctx->target, GRANT_TARGET_HOST);
    gk_autofree char *again = ir_of(p, false);
    assert_same_text("host round trip", again, ir);
    grant_policy_free(p);
    grant_diags_free(d);

    ck_assert_int_eq(grant_context_set_target(ctx, GRANT_TARGET_LINUX), 0);
    gk_autofree char *got = read_expect_error(ir, ctx);
    ck_assert_msg(strstr(got, "error: compiled policy was frozen with target 'host', but --target "
                              "is 'linux'") != NULL, "%s", got);

    /* Canonicalised on a host of another OS: read as that OS's offline
     * target (the paths are that machine's, not this one's). */
    const char *other = strcmp(gk_target_name(hctx), "macos") == 0 ? "windows" : "macos";
    gk_autofree char *from = gk_printf("\"target\":\"%s\"", gk_target_name(hctx));
    gk_autofree char *to = gk_printf("\"target\":\"%s\"", other);
    gk_autofree char *foreign = replace_once(ir, from, to);
    ctx->explicit_mask = 0;
    d = grant_diags_new();
    p = read_ir("host.json", foreign, ctx, d);
    ck_assert_msg(p != NULL, "%s", gk_test_render_diags(d));
    ck_assert_str_eq(gk_target_name(p->ctx), other);
    ck_assert_int_ne(p->ctx->target, GRANT_TARGET_HOST);
    grant_policy_free(p);
    grant_diags_free(d);

    grant_context_free(ctx);
    grant_policy_free(hp);
    grant_context_free(hctx);
}
END_TEST

static json_t *member(const char *doc, const char *key)
{
    json_error_t e;
    json_t *root = json_loads(doc, 0, &e);
    ck_assert_msg(root != NULL, "%s", e.text);
    json_t *v = json_incref(json_object_get(root, key));
    json_decref(root);
    ck_assert_ptr_nonnull(v);
    return v;
}

START_TEST(test_compile_buffer_json)
{
    /* Compiled JSON is accepted wherever a grant file is: the same layers
     * in the same context (sources gain the .json itself). */
    gk_autofree char *ir = hand_ir();
    grant_context *ctx = gk_test_context_linux();
    grant_diags *d = grant_diags_new();
    grant_policy *p = NULL;
    int rc = grant_compile_buffer(ctx, "hand.json", ir, strlen(ir), d, &p);
    ck_assert_msg(rc == 0, "%d: %s", rc, gk_test_render_diags(d));
    ck_assert_uint_eq(grant_policy_layer_count(p), 4);
    char *out = NULL;
    size_t len = 0;
    ck_assert_int_eq(grant_policy_ir(p, 0, &out, &len), 0);
    const char *keys[] = {"context", "layers", "grantkit", "kind"};
    for (size_t i = 0; i < 4; i++) {
        json_t *a = member(ir, keys[i]), *b = member(out, keys[i]);
        ck_assert_msg(json_equal(a, b), "'%s' differs:\n%s", keys[i], out);
        json_decref(a);
        json_decref(b);
    }
    free(out);
    grant_policy_free(p);
    grant_diags_free(d);
    grant_context_free(ctx);
}
END_TEST

static Suite *ir_suite(void)
{
    Suite *s = suite_create("ir");
    /* "compiled" goes through grant_compile; "reader" and "writer" need
     * only layers, so CK_RUN_CASE can run them on their own. */
    TCase *compiled = tcase_create("compiled");
    tcase_set_timeout(compiled, 120);
    tcase_add_test(compiled, test_goldens);
    tcase_add_test(compiled, test_deterministic);
    tcase_add_test(compiled, test_pretty_vs_compact);
    tcase_add_test(compiled, test_roundtrip_compiled);
    tcase_add_test(compiled, test_escaping_compiled);
    tcase_add_test(compiled, test_targets);
    suite_add_tcase(s, compiled);

    TCase *writer = tcase_create("writer");
    tcase_add_test(writer, test_layer_shape);
    tcase_add_test(writer, test_roundtrip_hand);
    tcase_add_test(writer, test_roundtrip_empty_policy);
    tcase_add_test(writer, test_roundtrip_no_implicit);
    tcase_add_test(writer, test_escaping_controls);
    tcase_add_test(writer, test_json_out_is_jansson);
    tcase_add_test(writer, test_json_string_rule);
    suite_add_tcase(s, writer);

    TCase *reader = tcase_create("reader");
    tcase_set_timeout(reader, 120);
    tcase_add_test(reader, test_rejects);
    tcase_add_test(reader, test_reject_inline);
    tcase_add_test(reader, test_parse_error_position);
    tcase_add_test(reader, test_context_disagreement);
    tcase_add_test(reader, test_context_agreement);
    tcase_add_test(reader, test_context_defaults_yield);
    tcase_add_test(reader, test_context_host);
    tcase_add_test(reader, test_compile_buffer_json);
    suite_add_tcase(s, reader);
    return s;
}

int main(void)
{
    return gk_test_main(ir_suite());
}
