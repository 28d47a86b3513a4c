/* findings.c - the one findings type of audit and lint (analysis.h). */
#include "analysis/analysis.h"

#include <stdlib.h>

void gk_finding_free(gk_finding *f)
{
    free(f->message);
    free(f->file);
    free(f->subject);
    free(f->hint);
    free(f->related_message);
}

void gk_findings_to_diags(gk_finding *v, size_t n, grant_diags *out)
{
    for (size_t i = 0; i < n; i++) {
        gk_finding *f = &v[i];
        gk_diag *d = gk_diag_add(out, f->severity, f->loc, f->hint, "%s: %s", f->rule->name,
                                 f->message);
        d->id = f->rule->id;
        if (f->has_related)
            gk_diag_relate(d, f->related, "%s", f->related_message);
        gk_finding_free(f);
    }
}
