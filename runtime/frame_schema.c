/* frame_schema.c - run-request and run-result: strict validation with
 * jansson, encoding with the one JSON writer, the §3c cuts (see frame.h).
 *
 * Validation order is fixed: the payload is JSON, an object, its `v` is
 * the integer 1 (before any other field is looked at), its `type` is the
 * expected one, then each member in turn; an unknown member anywhere is
 * named by its dotted path ("run.captureEncodng").
 */
#include "runtime/frame.h"
#include "common/json.h"
#include "common/base64.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- cutting (§3c) ------------------------------------------------------ */

static char *marker(unsigned long long n)
{
    return gk_printf("\n[truncated: %llu bytes omitted]\n", n);
}

/* The longest prefix of raw whose escaped form plus the marker for what
 * it leaves out fits budget; the marker's digits depend on the cut, so
 * the cut is redone until both agree. */
static char *utf8_cut(const char *raw, size_t len, uint64_t total, size_t budget,
                      size_t *out_len, long long *omitted)
{
    size_t keep = len;
    unsigned long long n = total - len;
    for (int round = 0; round < 4; round++) {
        gk_autofree char *m = marker(n);
        size_t mesc = strlen(m) + 2; /* each '\n' escapes to two bytes */
        size_t room = budget > mesc ? budget - mesc : 0;
        keep = gk_json_escaped_prefix(raw, len, room, NULL);
        unsigned long long again = total - keep;
        if (again == n)
            break;
        n = again;
    }
    gk_autofree char *m = marker(n);
    gk_buf b = {0};
    gk_buf_add(&b, raw, keep);
    gk_buf_puts(&b, m);
    *omitted = (long long)n;
    return gk_buf_steal(&b, out_len);
}

char *gk_capture_cut(const char *raw, size_t len, uint64_t total, gk_capture enc, size_t budget,
                     size_t *out_len, long long *omitted)
{
    *omitted = 0;
    if (enc == GK_CAPTURE_BASE64) {
        size_t keep = len;
        if (total > len || gk_base64_encoded_size(len) > budget) {
            size_t groups = budget / 4;
            if (keep > groups * 3)
                keep = groups * 3;
            keep -= keep % 3;
            *omitted = (long long)(total - keep);
        }
        gk_buf b = {0};
        gk_buf_grow(&b, gk_base64_encoded_size(keep));
        gk_base64_encode(&b, raw, keep);
        return gk_buf_steal(&b, out_len);
    }
    if (total == len && gk_json_escaped_size(raw, len) <= budget) {
        gk_buf b = {0};
        gk_buf_add(&b, raw ? raw : "", len);
        return gk_buf_steal(&b, out_len);
    }
    return utf8_cut(raw, len, total, budget, out_len, omitted);
}

char *gk_message_cut(const char *s, size_t budget)
{
    long long omitted;
    size_t len = strlen(s);
    return gk_capture_cut(s, len, len, GK_CAPTURE_UTF8, budget, NULL, &omitted);
}

/* ---- strict reading --------------------------------------------------- */

/* Long base64 values lifted out of a request before jansson reads it
 * (lift_base64): jansson takes a string a byte at a time, about 25 MB/s,
 * which made a 60 MiB baseline cost seconds in each of parent and child. */
typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct rd {
    const char *doc;  /* "run-request" / "run-result" */
    char *err;
    int rc;
    span *spans;
    size_t nspans;
} rd;

static bool bad(rd *r, int rc, char *msg)
{
    if (!r->err) {
        r->err = gk_printf("%s: %s", r->doc, msg);
        r->rc = rc;
    }
    free(msg);
    return false;
}

static char *dotted(const char *where, const char *key)
{
    return *where ? gk_printf("%s.%s", where, key) : gk_strdup(key);
}

/* Every member of o is in allowed; else the first unknown one is named. */
static bool known_keys(rd *r, json_t *o, const char *where, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(*a, k) == 0;
        if (!ok) {
            gk_autofree char *name = dotted(where, k);
            return bad(r, -EPROTO, gk_printf("unknown field '%s'", name));
        }
    }
    return true;
}

static json_t *member(rd *r, json_t *o, const char *where, const char *key, bool required)
{
    json_t *v = json_object_get(o, key);
    if (!v && required) {
        gk_autofree char *name = dotted(where, key);
        bad(r, -EPROTO, gk_printf("missing field '%s'", name));
    }
    return v;
}

static bool wrong_type(rd *r, const char *where, const char *key, const char *want)
{
    gk_autofree char *name = dotted(where, key);
    return bad(r, -EPROTO, gk_printf("field '%s' must be %s", name, want));
}

/* A string member with no NUL inside (NULL when absent and optional). */
static bool get_string(rd *r, json_t *o, const char *where, const char *key, bool required,
                       bool nullable, const char **out)
{
    json_t *v = member(r, o, where, key, required);
    *out = NULL;
    if (!v)
        return !required;
    if (nullable && json_is_null(v))
        return true;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
        return wrong_type(r, where, key, nullable ? "a string or null" : "a string");
    *out = json_string_value(v);
    return true;
}

static bool get_bool(rd *r, json_t *o, const char *where, const char *key, bool required,
                     bool *out)
{
    json_t *v = member(r, o, where, key, required);
    if (!v)
        return !required;
    if (!json_is_boolean(v))
        return wrong_type(r, where, key, "true or false");
    *out = json_is_true(v);
    return true;
}

static bool get_count(rd *r, json_t *o, const char *where, const char *key, bool required,
                      long long *out)
{
    json_t *v = member(r, o, where, key, required);
    if (!v)
        return !required;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return wrong_type(r, where, key, "a non-negative integer");
    *out = json_integer_value(v);
    return true;
}

static bool get_enum(rd *r, json_t *o, const char *where, const char *key,
                     const char *const *names, int *out)
{
    const char *s;
    if (!get_string(r, o, where, key, false, false, &s))
        return false;
    if (!s)
        return true;
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return true;
        }
    gk_autofree char *name = dotted(where, key);
    gk_buf alts = {0};
    for (int i = 0; names[i]; i++)
        gk_buf_printf(&alts, "%s\"%s\"", i ? ", " : "", names[i]);
    bad(r, -EPROTO, gk_printf("field '%s' is \"%s\"; expected one of %s", name, s, alts.data));
    gk_buf_free(&alts);
    return false;
}

static bool get_object(rd *r, json_t *o, const char *where, const char *key, bool required,
                       json_t **out)
{
    json_t *v = member(r, o, where, key, required);
    *out = v;
    if (!v)
        return !required;
    if (!json_is_object(v))
        return wrong_type(r, where, key, "an object");
    return true;
}

/* Load, object, v (first), type. */
static json_t *open_doc(rd *r, const char *payload, size_t len, const char *type)
{
    json_error_t je;
    json_t *doc = json_loadb(payload, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
    if (!doc) {
        bad(r, -EPROTO, gk_printf("not JSON: %s at byte %d", je.text, je.position));
        return NULL;
    }
    if (!json_is_object(doc)) {
        bad(r, -EPROTO, gk_strdup("the payload is not a JSON object"));
        json_decref(doc);
        return NULL;
    }
    json_t *v = json_object_get(doc, "v");
    if (!v || !json_is_integer(v)) {
        bad(r, -EPROTO, gk_strdup(v ? "field 'v' must be an integer" : "missing field 'v'"));
    } else if (json_integer_value(v) != GK_FRAME_VERSION) {
        bad(r, -EPROTONOSUPPORT,
            gk_printf("frame version %" JSON_INTEGER_FORMAT " is not supported: this side "
                      "speaks version %d only",
                      json_integer_value(v), GK_FRAME_VERSION));
    } else {
        const char *t;
        if (get_string(r, doc, "", "type", true, false, &t) && strcmp(t, type) != 0)
            bad(r, -EPROTO, gk_printf("field 'type' is \"%s\", expected \"%s\"", t, type));
    }
    if (r->err) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* ---- run-request -------------------------------------------------------- */

#define LIFT_MIN 4096

/* A copy of the payload where each `"base64":"` value of at least
 * LIFT_MIN bytes without a backslash is replaced by "\u0000N" (N its index in
 * *spans), which no base64 text can be; parse_file takes the bytes from
 * the span. Only the exact compact spelling is lifted (a quote inside a
 * string is always escaped, so the pattern cannot start inside one);
 * jansson still checks everything around it. A member named base64 in
 * another object (an environment variable of that name with a value of
 * LIFT_MIN bytes) would arrive as the placeholder and be refused as
 * holding a NUL: a refusal, never a changed meaning. NULL when there is
 * nothing to lift. */
static char *lift_base64(const char *payload, size_t len, span **spans, size_t *nspans,
                         size_t *out_len)
{
    static const char key[] = "\"base64\":\"";
    const size_t klen = sizeof(key) - 1;
    gk_buf b = {0};
    size_t from = 0, n = 0, cap = 0;
    const char *end = payload + len;
    for (const char *p = payload; p < end;) {
        const char *hit = memmem(p, (size_t)(end - p), key, klen);
        if (!hit)
            break;
        const char *v = hit + klen;
        const char *q = memchr(v, '"', (size_t)(end - v));
        if (!q)
            break;
        /* No escape inside: then the JSON string's bytes are its value,
         * and anything not base64 in them is refused by the strict
         * decoder as it would be after jansson. */
        if ((size_t)(q - v) >= LIFT_MIN && !memchr(v, '\\', (size_t)(q - v))) {
            if (!b.data)
                gk_buf_grow(&b, len / 16 + 64);
            gk_buf_add(&b, payload + from, (size_t)(v - (payload + from)));
            gk_buf_printf(&b, "\\u0000%zu", n);
            GK_VEC_PUSH(*spans, n, cap, ((span){v, (size_t)(q - v)}));
            from = (size_t)(q - payload);
        }
        p = q > hit ? q : hit + 1;
    }
    *nspans = n;
    if (!n)
        return NULL;
    gk_buf_add(&b, payload + from, len - from);
    return gk_buf_steal(&b, out_len);
}

void gk_run_request_init(gk_run_request *r)
{
    memset(r, 0, sizeof(*r));
    r->fs_quota = GK_DEFAULT_FS_QUOTA;
    r->fs_nodes = GK_DEFAULT_FS_NODES;
    r->level = gk_strdup("auto");
}

void gk_run_request_clear(gk_run_request *r)
{
    gk_strvec_free(&r->argv);
    gk_strvec_free(&r->env);
    free(r->cwd);
    free(r->policy);
    free(r->level);
    free(r->root);
    gk_scratch_list_free(&r->files);
    memset(r, 0, sizeof(*r));
}

static bool parse_entry(rd *r, json_t *e, gk_run_request *out)
{
    static const char *const keys[] = {"argv", "env", "cwd", NULL};
    if (!known_keys(r, e, "entry", keys))
        return false;
    json_t *argv = member(r, e, "entry", "argv", true);
    if (!argv)
        return false;
    if (!json_is_array(argv) || json_array_size(argv) == 0)
        return wrong_type(r, "entry", "argv", "a non-empty array of strings");
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a) {
        if (!json_is_string(a) || strlen(json_string_value(a)) != json_string_length(a))
            return bad(r, -EPROTO, gk_printf("entry.argv[%zu] must be a string without NUL", i));
        gk_strvec_push(&out->argv, json_string_value(a));
    }
    if (!*out->argv.v[0])
        return bad(r, -EPROTO, gk_strdup("entry.argv[0] is an empty string"));
    json_t *env;
    if (!get_object(r, e, "entry", "env", true, &env))
        return false;
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) {
        if (!*k || strchr(k, '='))
            return bad(r, -EPROTO, gk_printf("entry.env: '%s' is not a variable name", k));
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
            return bad(r, -EPROTO, gk_printf("entry.env.%s must be a string without NUL", k));
        gk_strvec_push_take(&out->env, gk_printf("%s=%s", k, json_string_value(v)));
    }
    const char *cwd;
    if (!get_string(r, e, "entry", "cwd", false, false, &cwd))
        return false;
    if (cwd && cwd[0] != '/')
        return bad(r, -EPROTO, gk_printf("entry.cwd '%s' is not absolute", cwd));
    out->cwd = cwd ? gk_strdup(cwd) : NULL;
    return true;
}

static bool parse_execution(rd *r, json_t *x, gk_run_request *out)
{
    static const char *const keys[] = {"timeoutMs", "maxMemoryBytes", "maxProcesses",
                                       "cpuSeconds", "fsQuotaBytes", "fsNodeLimit", NULL};
    if (!x)
        return true;
    return known_keys(r, x, "execution", keys) &&
           get_count(r, x, "execution", "timeoutMs", false, &out->timeout_ms) &&
           get_count(r, x, "execution", "maxMemoryBytes", false, &out->max_memory) &&
           get_count(r, x, "execution", "maxProcesses", false, &out->max_processes) &&
           get_count(r, x, "execution", "cpuSeconds", false, &out->cpu_seconds) &&
           get_count(r, x, "execution", "fsQuotaBytes", false, &out->fs_quota) &&
           get_count(r, x, "execution", "fsNodeLimit", false, &out->fs_nodes);
}

static bool parse_run(rd *r, json_t *x, gk_run_request *out)
{
    static const char *const keys[] = {"includeDiff", "diffMetadata", "diffFormat",
                                       "captureEncoding", "level", "allowDegraded", NULL};
    static const char *const formats[] = {"json", "unified", NULL};
    static const char *const encodings[] = {"utf8", "base64", NULL};
    static const char *const levels[] = {"auto", "namespaces", "landlock", NULL};
    if (!x)
        return true;
    int fmt = out->diff_format, enc = out->capture, level = -1;
    if (!known_keys(r, x, "run", keys) ||
        !get_bool(r, x, "run", "includeDiff", false, &out->include_diff) ||
        !get_bool(r, x, "run", "diffMetadata", false, &out->diff_metadata) ||
        !get_enum(r, x, "run", "diffFormat", formats, &fmt) ||
        !get_enum(r, x, "run", "captureEncoding", encodings, &enc) ||
        !get_enum(r, x, "run", "level", levels, &level) ||
        !get_bool(r, x, "run", "allowDegraded", false, &out->allow_degraded))
        return false;
    out->diff_format = (gk_diff_format)fmt;
    out->capture = (gk_capture)enc;
    if (level >= 0) {
        free(out->level);
        out->level = gk_strdup(levels[level]);
    }
    return true;
}

static bool parse_file(rd *r, json_t *f, size_t i, gk_run_request *out)
{
    static const char *const keys[] = {"path", "kind", "base64", "mode", NULL};
    gk_autofree char *where = gk_printf("baseline.files[%zu]", i);
    if (!json_is_object(f))
        return bad(r, -EPROTO, gk_printf("%s must be an object", where));
    if (!known_keys(r, f, where, keys))
        return false;
    json_t *p = member(r, f, where, "path", true);
    if (!p)
        return false;
    if (!json_is_string(p))
        return wrong_type(r, where, "path", "a string");
    if (strlen(json_string_value(p)) != json_string_length(p))
        return bad(r, -EINVAL, gk_printf("baseline path '%s': " GK_SCRATCH_MSG_NUL,
                                         json_string_value(p)));
    static const char *const kinds[] = {"file", "dir", NULL};
    int kind = -1;
    if (!member(r, f, where, "kind", true) || !get_enum(r, f, where, "kind", kinds, &kind))
        return false;
    const char *b64 = NULL;
    size_t b64_len = 0;
    json_t *bv = json_object_get(f, "base64");
    if (bv && json_is_string(bv) && json_string_length(bv) > 1 &&
        json_string_value(bv)[0] == '\0') {
        size_t k = (size_t)strtoul(json_string_value(bv) + 1, NULL, 10);
        if (k >= r->nspans)
            return wrong_type(r, where, "base64", "a string");
        b64 = r->spans[k].p;
        b64_len = r->spans[k].n;
    } else if (!get_string(r, f, where, "base64", false, false, &b64)) {
        return false;
    } else if (b64) {
        b64_len = strlen(b64);
    }
    if (b64 && kind == GK_SCRATCH_DIR)
        return bad(r, -EINVAL, gk_printf("%s: a dir carries no base64", where));
    long long mode = -1;
    if (!get_count(r, f, where, "mode", false, &mode))
        return false;
    if (mode > 07777)
        return bad(r, -EINVAL, gk_printf("%s: mode %lld is not permission bits", where, mode));
    unsigned char *bytes = NULL;
    size_t len = 0, at = 0;
    if (b64 && gk_base64_decode(b64, b64_len, &bytes, &len, &at) < 0)
        return bad(r, -EINVAL,
                   gk_printf("%s.base64 is not standard base64 with padding (byte %zu)", where,
                             at));
    gk_scratch_list_take(&out->files, gk_strdup(json_string_value(p)), (gk_scratch_kind)kind,
                         bytes, len, (int)mode);
    return true;
}

static bool parse_baseline(rd *r, json_t *x, gk_run_request *out)
{
    static const char *const keys[] = {"root", "files", NULL};
    if (!x)
        return true;
    const char *root;
    if (!known_keys(r, x, "baseline", keys) ||
        !get_string(r, x, "baseline", "root", false, true, &root))
        return false;
    if (root && (root[0] != '/' || strcmp(root, "/") == 0 || strstr(root, "/../") ||
                 gk_has_suffix(root, "/..") || strstr(root, "//")))
        return bad(r, -EINVAL, gk_printf("baseline.root '%s' must be an absolute, normal "
                                         "path other than /",
                                         root));
    out->root = root ? gk_strdup(root) : NULL;
    json_t *files = member(r, x, "baseline", "files", false);
    if (!files)
        return true;
    if (!json_is_array(files))
        return wrong_type(r, "baseline", "files", "an array");
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) if (!parse_file(r, f, i, out)) return false;
    return true;
}

int gk_run_request_parse(const char *payload, size_t len, gk_run_request *out, char **err)
{
    gk_run_request_init(out);
    rd r = {"run-request", NULL, 0, NULL, 0};
    size_t lifted_len = 0;
    gk_autofree char *lifted = lift_base64(payload, len, &r.spans, &r.nspans, &lifted_len);
    json_t *doc = lifted ? open_doc(&r, lifted, lifted_len, "run-request")
                         : open_doc(&r, payload, len, "run-request");
    static const char *const keys[] = {"type", "v", "entry", "policy", "execution",
                                       "run", "baseline", NULL};
    json_t *entry, *policy, *execution, *run, *baseline;
    bool ok = doc && known_keys(&r, doc, "", keys) &&
              get_object(&r, doc, "", "entry", true, &entry) && parse_entry(&r, entry, out) &&
              get_object(&r, doc, "", "policy", true, &policy) &&
              get_object(&r, doc, "", "execution", false, &execution) &&
              parse_execution(&r, execution, out) &&
              get_object(&r, doc, "", "run", false, &run) && parse_run(&r, run, out) &&
              get_object(&r, doc, "", "baseline", false, &baseline) &&
              parse_baseline(&r, baseline, out);
    if (ok) {
        char *text = json_dumps(policy, JSON_COMPACT);
        out->policy = gk_strdup(text ? text : "{}");
        free(text);
        if (out->include_diff && !out->root)
            ok = bad(&r, -EINVAL, gk_strdup("run.includeDiff is true but baseline.root is "
                                            "null: there is no scratch tree to diff"));
        else if (!out->root && out->files.n)
            ok = bad(&r, -EINVAL, gk_strdup("baseline.files without a baseline.root"));
    }
    if (ok && out->root) {
        char *why = NULL;
        int rc = gk_scratch_validate(&out->files, (uint64_t)out->fs_quota,
                                     (uint64_t)out->fs_nodes, NULL, &why);
        if (rc < 0)
            ok = bad(&r, rc, gk_printf("baseline refused, nothing ran: %s", why ? why : ""));
        free(why);
    }
    json_decref(doc);
    free(r.spans);
    if (ok)
        return 0;
    if (err)
        *err = gk_steal(&r.err);
    free(r.err);
    gk_run_request_clear(out);
    return r.rc ? r.rc : -EPROTO;
}

void gk_run_request_encode(const gk_run_request *r, gk_buf *out)
{
    gk_json_out j;
    gk_json_init(&j, out, false);
    gk_json_object(&j);
    gk_json_key(&j, "type");
    gk_json_string(&j, "run-request");
    gk_json_key(&j, "v");
    gk_json_int(&j, GK_FRAME_VERSION);

    gk_json_key(&j, "entry");
    gk_json_object(&j);
    gk_json_key(&j, "argv");
    gk_json_array(&j);
    for (size_t i = 0; i < r->argv.n; i++)
        gk_json_string(&j, r->argv.v[i]);
    gk_json_end(&j);
    gk_json_key(&j, "env");
    gk_json_object(&j);
    for (size_t i = 0; i < r->env.n; i++) {
        const char *eq = strchr(r->env.v[i], '=');
        gk_autofree char *name = gk_strndup(r->env.v[i], eq ? (size_t)(eq - r->env.v[i])
                                                             : strlen(r->env.v[i]));
        gk_json_key(&j, name);
        gk_json_string(&j, eq ? eq + 1 : "");
    }
    gk_json_end(&j);
    if (r->cwd) {
        gk_json_key(&j, "cwd");
        gk_json_string(&j, r->cwd);
    }
    gk_json_end(&j);

    gk_json_key(&j, "policy");
    if (r->policy)
        gk_json_raw(&j, r->policy, strlen(r->policy));
    else
        gk_json_null(&j);

    gk_json_key(&j, "execution");
    gk_json_object(&j);
    const struct {
        const char *k;
        long long v;
    } ex[] = {{"timeoutMs", r->timeout_ms},     {"maxMemoryBytes", r->max_memory},
              {"maxProcesses", r->max_processes}, {"cpuSeconds", r->cpu_seconds},
              {"fsQuotaBytes", r->fs_quota},     {"fsNodeLimit", r->fs_nodes}};
    for (size_t i = 0; i < sizeof(ex) / sizeof(*ex); i++) {
        gk_json_key(&j, ex[i].k);
        gk_json_int(&j, ex[i].v);
    }
    gk_json_end(&j);

    gk_json_key(&j, "run");
    gk_json_object(&j);
    gk_json_key(&j, "includeDiff");
    gk_json_bool(&j, r->include_diff);
    gk_json_key(&j, "diffMetadata");
    gk_json_bool(&j, r->diff_metadata);
    gk_json_key(&j, "diffFormat");
    gk_json_string(&j, r->diff_format == GK_DIFF_UNIFIED ? "unified" : "json");
    gk_json_key(&j, "captureEncoding");
    gk_json_string(&j, r->capture == GK_CAPTURE_BASE64 ? "base64" : "utf8");
    gk_json_key(&j, "level");
    gk_json_string(&j, r->level ? r->level : "auto");
    gk_json_key(&j, "allowDegraded");
    gk_json_bool(&j, r->allow_degraded);
    gk_json_end(&j);

    gk_json_key(&j, "baseline");
    gk_json_object(&j);
    gk_json_key(&j, "root");
    gk_json_string(&j, r->root);
    gk_json_key(&j, "files");
    gk_json_array(&j);
    /* The base64 text goes straight into the payload: its alphabet needs
     * no escaping, so no copy and no escape scan; the room for all of it
     * is made once. */
    size_t room = 0;
    for (size_t i = 0; i < r->files.n; i++)
        room += gk_base64_encoded_size(r->files.v[i].len) + strlen(r->files.v[i].path) + 64;
    gk_buf_grow(out, room);
    gk_advise_large(out->data + out->len, room);
    for (size_t i = 0; i < r->files.n; i++) {
        const gk_scratch_entry *e = &r->files.v[i];
        gk_json_object(&j);
        gk_json_key(&j, "path");
        gk_json_string(&j, e->path);
        gk_json_key(&j, "kind");
        gk_json_string(&j, gk_scratch_kind_name(e->kind));
        if (e->kind == GK_SCRATCH_FILE) {
            gk_json_key(&j, "base64");
            gk_json_raw(&j, "\"", 1);
            gk_base64_encode(out, e->bytes, e->len);
            gk_buf_add(out, "\"", 1);
        }
        if (e->mode >= 0) {
            gk_json_key(&j, "mode");
            gk_json_int(&j, e->mode);
        }
        gk_json_end(&j);
    }
    gk_json_end(&j);
    gk_json_end(&j);
    gk_json_end(&j);
}

/* ---- run-result --------------------------------------------------------- */

void gk_run_result_init(gk_run_result *r)
{
    memset(r, 0, sizeof(*r));
    r->exit_code = -1;
    r->error_message = gk_strdup("");
    r->output = gk_strdup("");
    r->error_output = gk_strdup("");
}

void gk_run_result_clear(gk_run_result *r)
{
    free(r->error_message);
    free(r->output);
    free(r->error_output);
    free(r->diff);
    free(r->level);
    free(r->network);
    gk_strvec_free(&r->unenforced);
    memset(r, 0, sizeof(*r));
    r->exit_code = -1;
}

void gk_run_result_fail(gk_run_result *r, gk_failure f, char *message)
{
    r->failure = f;
    r->exit_code = -1;
    free(r->error_message);
    r->error_message = gk_message_cut(message ? message : "", GK_BUDGET_MESSAGE);
    free(message);
    free(r->level);
    r->level = NULL;
    free(r->network);
    r->network = NULL;
    gk_strvec_free(&r->unenforced);
}

static bool get_text(rd *r, json_t *o, const char *key, char **out, size_t *len)
{
    json_t *v = member(r, o, "", key, true);
    if (!v)
        return false;
    if (!json_is_string(v))
        return wrong_type(r, "", key, "a string");
    free(*out);
    *out = gk_malloc(json_string_length(v) + 1);
    memcpy(*out, json_string_value(v), json_string_length(v) + 1);
    if (len)
        *len = json_string_length(v);
    return true;
}

static bool parse_stats(rd *r, json_t *s, gk_run_result *out)
{
    static const char *const keys[] = {"wallMs", "userMs", "sysMs", "maxRssBytes", NULL};
    return known_keys(r, s, "stats", keys) &&
           get_count(r, s, "stats", "wallMs", true, &out->wall_ms) &&
           get_count(r, s, "stats", "userMs", true, &out->user_ms) &&
           get_count(r, s, "stats", "sysMs", true, &out->sys_ms) &&
           get_count(r, s, "stats", "maxRssBytes", true, &out->max_rss);
}

static bool parse_enforcement(rd *r, json_t *e, gk_run_result *out)
{
    if (!e || json_is_null(e))
        return true;
    if (!json_is_object(e))
        return wrong_type(r, "", "enforcement", "an object or null");
    static const char *const keys[] = {"level", "unenforced", NULL};
    const char *level;
    if (!known_keys(r, e, "enforcement", keys) ||
        !get_string(r, e, "enforcement", "level", true, false, &level))
        return false;
    out->level = gk_strdup(level);
    json_t *u = member(r, e, "enforcement", "unenforced", true);
    if (!u)
        return false;
    if (!json_is_array(u))
        return wrong_type(r, "enforcement", "unenforced", "an array of strings");
    size_t i;
    json_t *a;
    json_array_foreach(u, i, a) {
        if (!json_is_string(a))
            return wrong_type(r, "enforcement", "unenforced", "an array of strings");
        gk_strvec_push(&out->unenforced, json_string_value(a));
    }
    return true;
}

int gk_run_result_parse(const char *payload, size_t len, gk_run_result *out, char **err)
{
    gk_run_result_init(out);
    rd r = {"run-result", NULL, 0, NULL, 0};
    json_t *doc = open_doc(&r, payload, len, "run-result");
    static const char *const keys[] = {
        "type", "v", "ok", "exitCode", "failureKind", "errorMessage", "output", "errorOutput",
        "encoding", "diffRequested", "diff", "truncated", "outputTruncatedBytes",
        "errorOutputTruncatedBytes", "stats", "enforcement", "network", NULL};
    static const char *const encodings[] = {"utf8", "base64", NULL};
    bool ok_field = false;
    const char *kind = NULL;
    int enc = 0;
    json_t *stats = NULL, *exit_code = NULL, *diff = NULL, *network = NULL;
    bool ok = doc && known_keys(&r, doc, "", keys) &&
              get_bool(&r, doc, "", "ok", true, &ok_field) &&
              (exit_code = member(&r, doc, "", "exitCode", true)) &&
              get_string(&r, doc, "", "failureKind", true, false, &kind) &&
              get_text(&r, doc, "errorMessage", &out->error_message, NULL) &&
              get_text(&r, doc, "output", &out->output, &out->output_len) &&
              get_text(&r, doc, "errorOutput", &out->error_output, &out->error_output_len) &&
              member(&r, doc, "", "encoding", true) &&
              get_enum(&r, doc, "", "encoding", encodings, &enc) &&
              get_bool(&r, doc, "", "diffRequested", true, &out->diff_requested) &&
              (diff = member(&r, doc, "", "diff", true)) &&
              get_bool(&r, doc, "", "truncated", true, &out->truncated) &&
              get_count(&r, doc, "", "outputTruncatedBytes", true, &out->output_truncated) &&
              get_count(&r, doc, "", "errorOutputTruncatedBytes", true,
                        &out->error_output_truncated) &&
              get_object(&r, doc, "", "stats", true, &stats) && parse_stats(&r, stats, out) &&
              member(&r, doc, "", "enforcement", true) &&
              parse_enforcement(&r, json_object_get(doc, "enforcement"), out) &&
              (network = member(&r, doc, "", "network", true));
    if (ok) {
        out->encoding = (gk_capture)enc;
        if (json_is_null(exit_code))
            out->exit_code = -1;
        else if (json_is_integer(exit_code) && json_integer_value(exit_code) >= 0 &&
                 json_integer_value(exit_code) <= 255 + 128)
            out->exit_code = (int)json_integer_value(exit_code);
        else
            ok = wrong_type(&r, "", "exitCode", "an integer status or null");
    }
    if (ok && gk_failure_parse(kind, &out->failure) < 0)
        ok = bad(&r, -EPROTO, gk_printf("failureKind \"%s\" is not one of the taxonomy", kind));
    if (ok && ok_field != (out->failure == GK_FAIL_NONE))
        ok = bad(&r, -EPROTO, gk_printf("ok is %s but failureKind is \"%s\"",
                                        ok_field ? "true" : "false", kind));
    if (ok) {
        if (json_is_string(diff)) {
            out->diff_len = json_string_length(diff);
            out->diff = gk_malloc(out->diff_len + 1);
            memcpy(out->diff, json_string_value(diff), out->diff_len + 1);
        } else if (!json_is_null(diff)) {
            ok = wrong_type(&r, "", "diff", "a string or null");
        } else if (out->diff_requested && !out->truncated && out->failure != GK_FAIL_HOST) {
            /* host-error: the run (or its diff) failed, so there is none. */
            ok = bad(&r, -EPROTO, gk_strdup("diff is null with diffRequested true, but the "
                                            "result is not truncated"));
        }
    }
    if (ok && !json_is_null(network)) {
        if (!json_is_object(network)) {
            ok = wrong_type(&r, "", "network", "an object or null");
        } else {
            char *text = json_dumps(network, JSON_COMPACT);
            out->network = gk_strdup(text ? text : "null");
            free(text);
        }
    }
    json_decref(doc);
    if (ok)
        return 0;
    if (err)
        *err = gk_steal(&r.err);
    free(r.err);
    gk_run_result_clear(out);
    return r.rc ? r.rc : -EPROTO;
}

static void encode_result(const gk_run_result *r, gk_buf *out)
{
    gk_json_out j;
    gk_json_init(&j, out, false);
    gk_json_object(&j);
    gk_json_key(&j, "type");
    gk_json_string(&j, "run-result");
    gk_json_key(&j, "v");
    gk_json_int(&j, GK_FRAME_VERSION);
    gk_json_key(&j, "ok");
    gk_json_bool(&j, r->failure == GK_FAIL_NONE);
    gk_json_key(&j, "exitCode");
    if (r->exit_code >= 0)
        gk_json_int(&j, r->exit_code);
    else
        gk_json_null(&j);
    gk_json_key(&j, "failureKind");
    gk_json_string(&j, gk_failure_name(r->failure));
    gk_json_key(&j, "errorMessage");
    gk_json_string(&j, r->error_message ? r->error_message : "");
    gk_json_key(&j, "output");
    gk_json_string_len(&j, r->output ? r->output : "", r->output ? r->output_len : 0);
    gk_json_key(&j, "errorOutput");
    gk_json_string_len(&j, r->error_output ? r->error_output : "",
                       r->error_output ? r->error_output_len : 0);
    gk_json_key(&j, "encoding");
    gk_json_string(&j, r->encoding == GK_CAPTURE_BASE64 ? "base64" : "utf8");
    gk_json_key(&j, "diffRequested");
    gk_json_bool(&j, r->diff_requested);
    gk_json_key(&j, "diff");
    if (r->diff)
        gk_json_string_len(&j, r->diff, r->diff_len);
    else
        gk_json_null(&j);
    gk_json_key(&j, "truncated");
    gk_json_bool(&j, r->truncated);
    gk_json_key(&j, "outputTruncatedBytes");
    gk_json_int(&j, r->output_truncated);
    gk_json_key(&j, "errorOutputTruncatedBytes");
    gk_json_int(&j, r->error_output_truncated);
    gk_json_key(&j, "stats");
    gk_json_object(&j);
    gk_json_key(&j, "wallMs");
    gk_json_int(&j, r->wall_ms);
    gk_json_key(&j, "userMs");
    gk_json_int(&j, r->user_ms);
    gk_json_key(&j, "sysMs");
    gk_json_int(&j, r->sys_ms);
    gk_json_key(&j, "maxRssBytes");
    gk_json_int(&j, r->max_rss);
    gk_json_end(&j);
    gk_json_key(&j, "enforcement");
    if (r->level) {
        gk_json_object(&j);
        gk_json_key(&j, "level");
        gk_json_string(&j, r->level);
        gk_json_key(&j, "unenforced");
        gk_json_array(&j);
        for (size_t i = 0; i < r->unenforced.n; i++)
            gk_json_string(&j, r->unenforced.v[i]);
        gk_json_end(&j);
        gk_json_end(&j);
    } else {
        gk_json_null(&j);
    }
    gk_json_key(&j, "network");
    if (r->network)
        gk_json_raw(&j, r->network, strlen(r->network));
    else
        gk_json_null(&j);
    gk_json_end(&j);
}

void gk_run_result_encode(gk_run_result *r, size_t max, gk_buf *out)
{
    out->len = 0;
    encode_result(r, out);
    if (out->len + 4 <= max)
        return;
    /* §3c fallback, in its order; each step only while still too large. */
    free(r->diff);
    r->diff = NULL;
    r->diff_len = 0;
    r->truncated = true;
    out->len = 0;
    encode_result(r, out);
    if (out->len + 4 <= max)
        return;
    char *cut = gk_message_cut(r->error_message ? r->error_message : "", GK_BUDGET_MESSAGE);
    free(r->error_message);
    r->error_message = cut;
    out->len = 0;
    encode_result(r, out);
    if (out->len + 4 <= max)
        return;
    /* Only a cap far below the §3c sums gets here (a test's): the captures
     * go too, counted, so a frame is still sent. */
    if (r->encoding == GK_CAPTURE_UTF8) {
        r->output_truncated += (long long)r->output_len;
        r->error_output_truncated += (long long)r->error_output_len;
    }
    free(r->output);
    free(r->error_output);
    r->output = gk_strdup("");
    r->error_output = gk_strdup("");
    r->output_len = r->error_output_len = 0;
    out->len = 0;
    encode_result(r, out);
}
