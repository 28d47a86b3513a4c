/* policy.c - the one owner of grant_policy: creates it, records its
 * sources, frees it with everything it holds (lattice.h), and the public
 * entry points that only fold its stack (grant/grant.h). */
#include "lattice/lattice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

grant_policy *gk_policy_new(const grant_context *ctx)
{
    grant_policy *p = gk_calloc(1, sizeof(*p));
    p->ctx = gk_context_copy(ctx);
    return p;
}

void gk_policy_add_source(grant_policy *p, const char *file, const gk_source *src)
{
    for (size_t i = 0; i < p->nsources; i++)
        if (strcmp(p->sources[i].file, file) == 0)
            return;
    p->sources = gk_realloc(p->sources, (p->nsources + 1) * sizeof(*p->sources));
    gk_policy_source *s = &p->sources[p->nsources++];
    s->file = gk_strdup(file);
    char *hex = gk_source_sha256_hex(src);
    memcpy(s->sha256, hex, 65);
    free(hex);
}

const grant_context *gk_policy_context(const grant_policy *p)
{
    return p->ctx;
}

void grant_policy_free(grant_policy *p)
{
    if (!p)
        return;
    gk_stack_free(&p->stack);
    if (p->gate_index)
        p->gate_index_free(p->gate_index);
    gk_strvec_free(&p->protect);
    grant_context_free(p->ctx);
    for (size_t i = 0; i < p->nsources; i++)
        free(p->sources[i].file);
    free(p->sources);
    free(p);
}

size_t grant_policy_layer_count(const grant_policy *p)
{
    return p ? p->stack.n : 0;
}

int grant_policy_meet(const grant_policy *a, const grant_policy *b, grant_policy **out)
{
    if (!a || !b || !out)
        return -EINVAL;
    grant_policy *p = gk_policy_new(a->ctx);
    gk_stack_meet(&p->stack, &a->stack, &b->stack);
    const grant_policy *both[2] = {a, b};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < both[k]->nsources; i++) {
            bool seen = false;
            for (size_t j = 0; j < p->nsources; j++)
                seen |= strcmp(p->sources[j].file, both[k]->sources[i].file) == 0;
            if (seen)
                continue;
            p->sources = gk_realloc(p->sources, (p->nsources + 1) * sizeof(*p->sources));
            p->sources[p->nsources].file = gk_strdup(both[k]->sources[i].file);
            memcpy(p->sources[p->nsources].sha256, both[k]->sources[i].sha256, 65);
            p->nsources++;
        }
    gk_strvec_copy(&p->protect, &a->protect);
    gk_strvec_copy(&p->protect, &b->protect);
    gk_strvec_sort_unique(&p->protect);
    *out = p;
    return 0;
}

int grant_decide_fs(const grant_policy *p, grant_op op, const char *path)
{
    if (!p || !path || path[0] != '/')
        return -EINVAL;
    return gk_decide_fs(&p->stack, op, path) ? 1 : 0;
}

int grant_decide_exec(const grant_policy *p, const grant_exec_query *q)
{
    if (!p || !q || !q->spelling || !*q->spelling)
        return -EINVAL;
    return gk_decide_exec(&p->stack, q) ? 1 : 0;
}

int grant_decide_gate(const grant_policy *p, const char *gate)
{
    if (!p || !gate)
        return -EINVAL;
    gk_tri t = gk_decide_gate(&p->stack, gate);
    if (t == GK_TRI_NONE)
        return -EINVAL;
    return t == GK_TRI_TRUE;
}

const char *grant_version(void)
{
    return PACKAGE_VERSION;
}
