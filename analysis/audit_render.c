/* audit_render.c - the audit's findings as JSON (an array) and as a SARIF
 * 2.1.0 log, through the one JSON writer (common/json.h): keys in bytewise
 * order, the id, name and severity read from each finding's fields. The
 * text form is grantc's, over grant_finding.
 */
#include "analysis/analysis.h"
#include "common/json.h"
#include "freeze/freeze.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const char *severity_name(grant_severity s)
{
    return s == GRANT_SEVERITY_ERROR ? "error" : s == GRANT_SEVERITY_WARNING ? "warning" : "note";
}

/* Keys are written in bytewise order (the documents are canonical). */
static void put_string(gk_json_out *j, const char *key, const char *value)
{
    gk_json_key(j, key);
    gk_json_string(j, value);
}

static void put_int(gk_json_out *j, const char *key, long long value)
{
    gk_json_key(j, key);
    gk_json_int(j, value);
}

static void put_text(gk_json_out *j, const char *key, const char *text)
{
    gk_json_key(j, key);
    gk_json_object(j);
    put_string(j, "text", text);
    gk_json_end(j);
}

char *grant_findings_json(const grant_findings *f)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_array(&j);
    for (size_t i = 0; f && i < f->n; i++) {
        const gk_finding *x = &f->v[i];
        const gk_rule *r = x->rule;
        gk_json_object(&j);
        put_string(&j, "file", x->file);
        put_string(&j, "id", r->id);
        gk_json_key(&j, "line");
        if (x->line)
            gk_json_int(&j, x->line);
        else
            gk_json_null(&j);
        put_string(&j, "message", x->message);
        put_string(&j, "name", r->name);
        put_string(&j, "severity", severity_name(x->severity));
        gk_json_end(&j);
    }
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

/* RFC 3986: keep unreserved characters and '/', percent-encode the rest. */
static void uri_encode(gk_buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
            gk_buf_putc(b, (char)c);
        else
            gk_buf_printf(b, "%%%02X", c);
    }
}

/* GitHub maps a relative URI onto the repository: a file under the context
 * cwd (the project) becomes relative to it; anything else stays an
 * absolute file: URI. */
static char *artifact_uri(const char *file, const char *cwd)
{
    gk_buf b = {0};
    /* A name opened as /a/b/../c is /a/c for the comparison with cwd. */
    gk_autofree char *lex = file[0] == '/' ? gk_lex_normalize(file) : NULL;
    if (lex)
        file = lex;
    if (file[0] != '/') {
        while (gk_has_prefix(file, "./"))
            file += 2;
        uri_encode(&b, file);
    } else if (cwd && strcmp(cwd, "/") != 0 && gk_path_within(file, cwd) &&
               strcmp(file, cwd) != 0) {
        uri_encode(&b, file + strlen(cwd) + 1);
    } else {
        gk_buf_puts(&b, "file://");
        uri_encode(&b, file);
    }
    return gk_buf_steal(&b, NULL);
}

static char *fingerprint(const gk_finding *x)
{
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    const char *parts[3] = {x->rule->id, x->file ? x->file : "", x->subject};
    sha256_init(&h);
    for (int i = 0; i < 3; i++)
        sha256_update(&h, strlen(parts[i]) + 1, (const uint8_t *)parts[i]);
    sha256_digest(&h, sizeof(d), d);
    char *hex = gk_malloc(2 * sizeof(d) + 1);
    for (size_t i = 0; i < sizeof(d); i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return hex;
}

static void sarif_rules(gk_json_out *j)
{
    gk_json_array(j);
    for (int i = 0; i < GK_R_COUNT; i++) {
        const gk_rule *r = &gk_audit_rules[i];
        gk_json_object(j);
        gk_json_key(j, "defaultConfiguration");
        gk_json_object(j);
        put_string(j, "level", severity_name(r->severity));
        gk_json_end(j);
        put_text(j, "fullDescription", r->full);
        put_text(j, "help", r->help);
        put_string(j, "id", r->id);
        put_string(j, "name", r->name);
        put_text(j, "shortDescription", r->brief);
        gk_json_end(j);
    }
    gk_json_end(j);
}

static void sarif_tool(gk_json_out *j)
{
    gk_json_key(j, "tool");
    gk_json_object(j);
    gk_json_key(j, "driver");
    gk_json_object(j);
    if (PACKAGE_URL[0])
        put_string(j, "informationUri", PACKAGE_URL);
    put_string(j, "name", "grantc");
    gk_json_key(j, "rules");
    sarif_rules(j);
    put_string(j, "semanticVersion", PACKAGE_VERSION);
    put_string(j, "version", PACKAGE_VERSION);
    gk_json_end(j);
    gk_json_end(j);
}

static void sarif_location(gk_json_out *j, const gk_finding *x, const char *file, const char *cwd)
{
    gk_json_key(j, "locations");
    gk_json_array(j);
    gk_json_object(j);
    gk_json_key(j, "physicalLocation");
    gk_json_object(j);
    gk_json_key(j, "artifactLocation");
    gk_json_object(j);
    gk_autofree char *uri = artifact_uri(file, cwd);
    put_string(j, "uri", uri);
    gk_json_end(j);
    if (x->file && x->line >= 1) {
        gk_json_key(j, "region");
        gk_json_object(j);
        put_int(j, "startLine", x->line);
        gk_json_end(j);
    }
    gk_json_end(j);
    gk_json_end(j);
    gk_json_end(j);
}

static void sarif_result(gk_json_out *j, const grant_findings *f, const gk_finding *x)
{
    const gk_rule *r = x->rule;
    gk_json_object(j);
    put_string(j, "level", severity_name(x->severity));
    const char *file = x->file ? x->file : f->primary;
    if (file)
        sarif_location(j, x, file, f->cwd);
    put_text(j, "message", x->message);
    gk_json_key(j, "partialFingerprints");
    gk_json_object(j);
    gk_autofree char *h = fingerprint(x);
    put_string(j, "grantkitFinding/v1", h);
    gk_json_end(j);
    put_string(j, "ruleId", r->id);
    put_int(j, "ruleIndex", x->rule - gk_audit_rules);
    gk_json_end(j);
}

char *grant_findings_sarif(const grant_findings *f)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, false);
    gk_json_object(&j);
    put_string(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    gk_json_key(&j, "runs");
    gk_json_array(&j);
    gk_json_object(&j);
    put_string(&j, "columnKind", "unicodeCodePoints");
    gk_json_key(&j, "results");
    gk_json_array(&j);
    for (size_t i = 0; f && i < f->n; i++)
        sarif_result(&j, f, &f->v[i]);
    gk_json_end(&j);
    sarif_tool(&j);
    gk_json_end(&j);
    gk_json_end(&j);
    put_string(&j, "version", "2.1.0");
    gk_json_end(&j);
    return gk_buf_steal(&b, NULL);
}

