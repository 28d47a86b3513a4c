/* ir_write.c - the compiled policy as canonical JSON (grant-language.md §7).
 *
 * Streamed by gk_json_out (common/json.h) in jansson's layout, keys in
 * bytewise order, compact or indented by two for --pretty. The escaping is
 * what the spec asks for: only '"', '\\' and U+0000..U+001F (\b \f \n \r
 * \t, else \u00XX); every other code point, U+2028 and U+2029 included, is
 * raw UTF-8. tests/check_ir.c holds the bytes to a jansson re-dump.
 */
#include "ir/ir.h"
#include "common/json.h"
#include "gate/gate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== */
/* Output                                                                    */
/* ======================================================================== */

/* Writing goes through gk_json_out (json_out.h): the bytes jansson would
 * dump, keys written in bytewise order, without building a tree. */

static void jtri(gk_json_out *j, gk_tri t)
{
    if (t == GK_TRI_NONE)
        gk_json_null(j);
    else
        gk_json_bool(j, t == GK_TRI_TRUE);
}

static void jstrvec(gk_json_out *j, const gk_strvec *sv)
{
    gk_json_array(j);
    for (size_t i = 0; i < sv->n; i++)
        gk_json_string(j, sv->v[i]);
    gk_json_end(j);
}

static void jentries(gk_json_out *j, const gk_entries *e)
{
    gk_json_array(j);
    for (size_t i = 0; i < e->n; i++)
        gk_json_string(j, e->v[i].key);
    gk_json_end(j);
}

static void jregions(gk_json_out *j, const gk_regions *r)
{
    gk_json_array(j);
    for (size_t i = 0; i < r->n; i++) {
        gk_json_object(j);
        gk_json_key(j, "path");
        gk_json_string(j, r->v[i].p.path);
        gk_json_key(j, "real");
        gk_json_string(j, r->v[i].p.real);
        gk_json_end(j);
    }
    gk_json_end(j);
}

/* Keyed by name or file: the layer keeps them sorted bytewise. */
static void jadmits(gk_json_out *j, const gk_admits *ad)
{
    gk_json_object(j);
    for (size_t i = 0; i < ad->n; i++) {
        const gk_admit *e = &ad->v[i];
        gk_json_key(j, e->key ? e->key : "");
        if (e->all)
            gk_json_string(j, "allow");
        else
            jstrvec(j, &e->subs);
    }
    gk_json_end(j);
}

static void jexec(gk_json_out *j, const gk_exec_dim *x)
{
    gk_json_object(j);
    gk_json_key(j, "allow");
    if (x->has_allow) {
        gk_json_object(j);
        gk_json_key(j, "dirs");
        jentries(j, &x->dirs);
        gk_json_key(j, "files");
        jadmits(j, &x->files);
        gk_json_key(j, "names");
        jadmits(j, &x->names);
        gk_json_end(j);
    } else {
        gk_json_null(j);
    }
    gk_json_key(j, "deny");
    gk_json_object(j);
    gk_json_key(j, "dirs");
    jentries(j, &x->veto_dirs);
    gk_json_key(j, "files");
    jentries(j, &x->veto_files);
    gk_json_key(j, "match");
    jentries(j, &x->veto_match);
    gk_json_key(j, "names");
    jentries(j, &x->veto_names);
    gk_json_end(j);
    gk_json_end(j);
}

static void jfs(gk_json_out *j, const gk_fs_dim *fs)
{
    gk_json_object(j);
    gk_json_key(j, "deny");
    jregions(j, &fs->deny);
    gk_json_key(j, "read");
    if (fs->restricted)
        jregions(j, &fs->read);
    else
        gk_json_null(j);
    gk_json_key(j, "readonly");
    jregions(j, &fs->readonly);
    gk_json_key(j, "write");
    if (fs->restricted)
        jregions(j, &fs->write);
    else
        gk_json_null(j);
    gk_json_end(j);
}

/* net: true, false, or {"allow":[...],"deny":[...]} (network.md §1). */
static void jnet_list(gk_json_out *j, const gk_strvec *allow, const gk_strvec *deny)
{
    gk_json_object(j);
    gk_json_key(j, "allow");
    jstrvec(j, allow);
    gk_json_key(j, "deny");
    jstrvec(j, deny);
    gk_json_end(j);
}

static void jlayer(gk_json_out *j, const gk_layer *f)
{
    gk_json_object(j);
    gk_json_key(j, "audit");
    gk_json_bool(j, f->audit);
    gk_json_key(j, "editor");
    if (f->has_editor) {
        gk_json_object(j);
        gk_json_key(j, "read");
        jtri(j, f->ed_read);
        gk_json_key(j, "tui");
        jtri(j, f->ed_tui);
        gk_json_key(j, "write");
        jtri(j, f->ed_write);
        gk_json_end(j);
    } else {
        gk_json_null(j);
    }
    gk_json_key(j, "exec");
    if (f->has_exec)
        jexec(j, &f->exec);
    else
        gk_json_null(j);
    gk_json_key(j, "fs");
    if (f->has_fs)
        jfs(j, &f->fs);
    else
        gk_json_null(j);
    gk_json_key(j, "name");
    gk_json_string(j, f->name);
    gk_json_key(j, "net");
    if (f->net_list) {
        gk_json_object(j);
        gk_json_key(j, "allow");
        jentries(j, &f->netd.allow);
        gk_json_key(j, "deny");
        jentries(j, &f->netd.deny);
        gk_json_end(j);
    } else {
        jtri(j, f->net);
    }
    gk_json_key(j, "origin");
    gk_json_string(j, f->origin);
    gk_json_key(j, "shell");
    if (f->has_shell) {
        gk_json_object(j);
        gk_json_key(j, "chdir");
        jtri(j, f->chdir);
        gk_json_end(j);
    } else {
        gk_json_null(j);
    }
    gk_json_end(j);
}

static void jcontext(gk_json_out *j, const grant_context *ctx)
{
    gk_json_object(j);
    gk_json_key(j, "cwd");
    gk_json_string(j, ctx->cwd);
    gk_json_key(j, "home");
    gk_json_string(j, ctx->home);
    gk_json_key(j, "host");
    gk_json_bool(j, ctx->target == GRANT_TARGET_HOST);
    gk_json_key(j, "implicit");
    gk_json_bool(j, ctx->implicit);
    gk_json_key(j, "path");
    gk_json_string(j, ctx->path);
    gk_json_key(j, "target");
    gk_json_string(j, gk_target_name(ctx));
    gk_json_key(j, "tempdir");
    gk_json_string(j, ctx->tempdir);
    gk_json_key(j, "user");
    gk_json_string(j, ctx->user);
    gk_json_key(j, "xdg");
    gk_json_object(j);
    /* gk_xdg_names is in the order of the grant language; keys print sorted. */
    static const int xdg_sorted[GK_XDG_COUNT] = {GK_XDG_BIN, GK_XDG_CACHE, GK_XDG_CONFIG,
                                                GK_XDG_DATA, GK_XDG_STATE};
    for (int i = 0; i < GK_XDG_COUNT; i++) {
        gk_json_key(j, gk_xdg_names[xdg_sorted[i]]);
        gk_json_string(j, ctx->xdg[xdg_sorted[i]]);
    }
    gk_json_end(j);
    gk_json_end(j);
}

static void jprojection(gk_json_out *j, const gk_projection *pr)
{
    gk_json_object(j);
    gk_json_key(j, "deny");
    jregions(j, &pr->deny);
    gk_json_key(j, "deputy");
    jstrvec(j, &pr->deputy);
    gk_json_key(j, "exec");
    gk_json_object(j);
    /* admit is null when no layer restricts exec, as read/write are null
     * when fs is unrestricted: "admits nothing" and "admits everything"
     * must not look alike to an emitter. */
    gk_json_key(j, "admit");
    if (pr->exec_restricted)
        jstrvec(j, &pr->exec_admit);
    else
        gk_json_null(j);
    gk_json_key(j, "veto");
    jstrvec(j, &pr->exec_veto);
    gk_json_end(j);
    gk_json_key(j, "fs_restricted");
    gk_json_bool(j, pr->fs_restricted);
    gk_json_key(j, "implicit");
    if (pr->has_implicit) {
        const gk_implicit *im = &pr->implicit;
        gk_json_object(j);
        gk_json_key(j, "devices");
        jstrvec(j, &im->devices);
        gk_json_key(j, "proc");
        gk_json_bool(j, im->proc);
        gk_json_key(j, "read");
        jstrvec(j, &im->read);
        gk_json_key(j, "target");
        gk_json_string(j, im->target);
        gk_json_key(j, "write");
        jstrvec(j, &im->write);
        gk_json_end(j);
    } else {
        gk_json_null(j);
    }
    gk_json_key(j, "net");
    if (pr->net_list)
        jnet_list(j, &pr->net_allow, &pr->net_deny);
    else
        gk_json_bool(j, pr->net);
    gk_json_key(j, "pinned");
    jstrvec(j, &pr->pinned);
    gk_json_key(j, "protect");
    jstrvec(j, &pr->protect);
    gk_json_key(j, "read");
    if (pr->fs_restricted)
        jregions(j, &pr->read);
    else
        gk_json_null(j);
    gk_json_key(j, "readonly");
    jregions(j, &pr->readonly);
    gk_json_key(j, "write");
    if (pr->fs_restricted)
        jregions(j, &pr->write);
    else
        gk_json_null(j);
    gk_json_end(j);
}

char *gk_ir_layer(const gk_layer *f, bool pretty)
{
    gk_buf b = {0};
    gk_json_out j;
    gk_json_init(&j, &b, pretty);
    jlayer(&j, f);
    return gk_buf_steal(&b, NULL);
}

static void ir_policy(gk_buf *b, const grant_policy *p, bool pretty, bool with_projection)
{
    gk_json_out j;
    gk_json_init(&j, b, pretty);
    gk_json_object(&j);
    gk_json_key(&j, "context");
    jcontext(&j, p->ctx);
    gk_json_key(&j, "grantkit");
    gk_json_int(&j, GRANTKIT_IR_VERSION);
    gk_json_key(&j, "kind");
    gk_json_string(&j, "policy");
    gk_json_key(&j, "layers");
    gk_json_array(&j);
    for (size_t i = 0; i < p->stack.n; i++)
        jlayer(&j, p->stack.v[i]);
    gk_json_end(&j);
    if (with_projection) {
        gk_projection *pr = gk_projection_build(p);
        gk_json_key(&j, "projection");
        jprojection(&j, pr);
        gk_projection_free(pr);
    }
    gk_json_key(&j, "sources");
    gk_json_array(&j);
    for (size_t i = 0; i < p->nsources; i++) {
        gk_json_object(&j);
        gk_json_key(&j, "file");
        gk_json_string(&j, p->sources[i].file);
        gk_json_key(&j, "sha256");
        gk_json_string(&j, p->sources[i].sha256);
        gk_json_end(&j);
    }
    gk_json_end(&j);
    gk_json_end(&j);
}

char *gk_ir_policy(const grant_policy *p, bool pretty, size_t *len)
{
    gk_buf b = {0};
    ir_policy(&b, p, pretty, true);
    return gk_buf_steal(&b, len);
}

char *gk_ir_policy_core(const grant_policy *p, size_t *len)
{
    gk_buf b = {0};
    ir_policy(&b, p, false, false);
    return gk_buf_steal(&b, len);
}

int grant_policy_ir(const grant_policy *p, unsigned flags, char **out, size_t *len)
{
    if (!p || !out)
        return -EINVAL;
    size_t n = 0;
    *out = gk_ir_policy(p, (flags & GRANT_IR_PRETTY) != 0, &n);
    if (!*out)
        return -ENOMEM;
    if (len)
        *len = n;
    return 0;
}
