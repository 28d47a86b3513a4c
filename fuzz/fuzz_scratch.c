/* fuzz_scratch.c - libFuzzer target for the scratch module's pure parts
 * (runtime/scratch.h): baseline validation and the diffs.
 *
 * Input: byte 0 picks the mode, bytes 1-2 a budget or limits, the rest:
 *   - even: baseline lines "Kpath" (K 'd' a dir, else a file whose bytes
 *     are the line itself), validated with node and byte limits from
 *     bytes 1-2. Invariant: an accepted list has no duplicate, passes
 *     the per-path rules entry by entry, and its totals fit the limits.
 *   - odd: two texts split at the first NUL (the second ends at the next
 *     one, if any: text files hold none). The line diff of the two,
 *     applied by a small patcher here, must give the second text back
 *     exactly; then the two as a file in before/after snapshots (plus a
 *     dir, a symlink and a deletion), diffed in both formats with the
 *     budget: the escaped size stays within it (or -ENOBUFS), the JSON
 *     parses, and a cut unified diff ends with the marker.
 * A broken invariant aborts so libFuzzer keeps the input.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "runtime/scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
    fprintf(stderr, "\n==== grantkit fuzz invariant broken: %s\n", what);
    abort();
}

static void fuzz_validate(const char *s, size_t n, unsigned lim)
{
    gk_scratch_list l = {0};
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        if (e > i) {
            char *p = strndup(s + i + 1, e - i - 1);
            bool dir = s[i] == 'd';
            gk_scratch_list_add(&l, p, dir ? GK_SCRATCH_DIR : GK_SCRATCH_FILE, dir ? NULL : s + i,
                                dir ? 0 : e - i, (unsigned char)s[i] == 'm' ? 0700 : -1);
            free(p);
        }
        i = e + 1;
    }
    uint64_t quota = lim & 0xff, nodes = lim >> 8;
    gk_scratch_totals t;
    char *err = NULL;
    if (gk_scratch_validate(&l, quota, nodes, &t, &err) == 0) {
        for (size_t k = 0; k < l.n; k++) {
            if (gk_scratch_check_path("p", l.v[k].path, strlen(l.v[k].path), NULL) < 0)
                broken("an accepted entry fails the path rules");
            for (size_t j = k + 1; j < l.n; j++)
                if (strcmp(l.v[k].path, l.v[j].path) == 0)
                    broken("an accepted list holds a duplicate");
        }
        if ((quota && t.bytes > quota) || (nodes && t.nodes > nodes) || t.nodes < l.n + 1)
            broken("accepted totals beyond the limits");
    } else if (!err || !*err) {
        broken("a refusal without a message");
    }
    free(err);
    gk_scratch_list_free(&l);
}

/* Apply a unified diff of one file (headers first) to a; NULL if it does
 * not apply. */
static char *apply(const char *a, size_t alen, const char *d, size_t *out_len)
{
    gk_buf out = {0};
    gk_buf_puts(&out, "");
    const char *p = strchr(d, '\n') + 1;
    p = strchr(p, '\n') + 1; /* the two header lines */
    size_t pos = 0;          /* byte offset in a */
    long line = 1;           /* the line number at pos */
    while (*p) {
        long os, ol, ns, nl;
        if (sscanf(p, "@@ -%ld,%ld +%ld,%ld @@", &os, &ol, &ns, &nl) != 4) {
            ol = 1;
            if (sscanf(p, "@@ -%ld,%ld +", &os, &ol) != 2 && sscanf(p, "@@ -%ld +", &os) != 1)
                goto bad;
        }
        long start = ol == 0 ? os + 1 : os;
        while (line < start) {
            const char *e = memchr(a + pos, '\n', alen - pos);
            if (!e)
                goto bad;
            gk_buf_add(&out, a + pos, (size_t)(e - (a + pos)) + 1);
            pos = (size_t)(e - a) + 1;
            line++;
        }
        p = strchr(p, '\n') + 1;
        while (*p && *p != '@') {
            char tag = *p++;
            const char *e = strchr(p, '\n');
            size_t len = (size_t)(e - p) + 1;
            if (strncmp(e + 1, "\\ No newline at end of file\n", 28) == 0)
                len--;
            if (tag == ' ' || tag == '-') {
                if (pos + len > alen || memcmp(a + pos, p, len) != 0)
                    goto bad;
                pos += len;
                line++;
                if (tag == ' ')
                    gk_buf_add(&out, p, len);
            } else if (tag == '+') {
                gk_buf_add(&out, p, len);
            } else {
                goto bad;
            }
            p = e + 1;
            if (strncmp(p, "\\ No newline at end of file\n", 28) == 0)
                p += 28;
        }
    }
    gk_buf_add(&out, a + pos, alen - pos);
    return gk_buf_steal(&out, out_len);
bad:
    gk_buf_free(&out);
    return NULL;
}

static gk_snap_node node(const char *path, gk_snap_kind k, const char *bytes, size_t len)
{
    gk_snap_node n = {.path = strdup(path), .kind = k, .mode = 0644, .size = len};
    if (len) {
        n.bytes = malloc(len);
        memcpy(n.bytes, bytes, len);
    }
    return n;
}

static void fuzz_diff(const char *s, size_t n, unsigned budget)
{
    const char *z = memchr(s, 0, n);
    size_t alen = z ? (size_t)(z - s) : n / 2;
    const char *b = z ? z + 1 : s + alen;
    size_t blen = n - alen - (z ? 1 : 0);
    /* Text files hold no NUL (one makes a file binary): b ends at one. */
    const char *z2 = memchr(b, 0, blen);
    if (z2)
        blen = (size_t)(z2 - b);
    gk_buf d = {0};
    gk_diff_text(&d, "a/f", s, alen, "b/f", b, blen, budget & 1 ? 64 : 0);
    size_t got_len = 0;
    char *got = apply(s, alen, d.data, &got_len);
    if (!got || got_len != blen || memcmp(got, b, blen) != 0) {
        fprintf(stderr, "diff:\n%s\n", d.data);
        broken("the line diff does not give the new text back");
    }
    free(got);
    gk_buf_free(&d);

    gk_snapshot before = {0}, after = {0};
    gk_snap_node v;
    v = node("/d", GK_SNAP_DIR, NULL, 0);
    GK_VEC_PUSH(before.v, before.n, before.cap, v);
    v = node("/f", GK_SNAP_FILE, s, alen);
    GK_VEC_PUSH(before.v, before.n, before.cap, v);
    v = node("/old", GK_SNAP_FILE, b, blen);
    GK_VEC_PUSH(before.v, before.n, before.cap, v);
    v = node("/d", GK_SNAP_FILE, s, alen);
    GK_VEC_PUSH(after.v, after.n, after.cap, v);
    v = node("/f", GK_SNAP_FILE, b, blen);
    GK_VEC_PUSH(after.v, after.n, after.cap, v);
    v = node("/l\xe9\"", GK_SNAP_SYMLINK, b, blen < 40 ? blen : 40);
    GK_VEC_PUSH(after.v, after.n, after.cap, v);
    for (int f = 0; f < 2; f++) {
        gk_diff_opts o = {.format = f ? GK_DIFF_UNIFIED : GK_DIFF_JSON, .metadata = true,
                          .budget = budget};
        char *out = NULL;
        size_t len = 0;
        bool cut = false;
        int rc = gk_scratch_diff(&before, &after, &o, &out, &len, &cut, NULL);
        if (rc == -ENOBUFS)
            continue;
        if (rc < 0)
            broken("diff failed");
        if (budget && gk_json_escaped_size(out, len) > budget)
            broken("diff beyond its budget");
        if (!f) {
            json_t *j = json_loads(out, 0, NULL);
            if (!j)
                broken("JSON diff does not parse");
            if (cut != (json_object_get(j, "omitted") != NULL))
                broken("cut and omitted disagree");
            json_decref(j);
        } else if (cut) {
            const char *m = strstr(out, "\n[truncated: ");
            const char *last = m;
            while (m) {
                last = m;
                m = strstr(m + 1, "\n[truncated: ");
            }
            if (!last || last[strlen(last) - 1] != '\n' || !strstr(last, " bytes omitted]\n"))
                broken("cut unified diff without its marker");
        }
        free(out);
    }
    gk_snapshot_free(&before);
    gk_snapshot_free(&after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 65536)
        return 0;
    unsigned arg = (unsigned)data[1] | (unsigned)data[2] << 8;
    if (data[0] & 1)
        fuzz_diff((const char *)data + 3, size - 3, arg);
    else
        fuzz_validate((const char *)data + 3, size - 3, arg);
    return 0;
}
