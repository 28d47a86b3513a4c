/* grant-check.c - libgrant from a program of your own: compile a policy
 * (an in-memory grant here; grant_compile takes files) and ask the gate,
 * the one place authority is decided, about a command and two paths.
 *
 *   cc grant-check.c $(pkg-config --cflags --libs grant) -o grant-check
 *   ./grant-check
 *
 * Prints one verdict a line, "QUESTION: allowed|denied by ORIGIN (RULE)",
 * and exits 0 when every answer is the one the grant says (the install
 * test, `make installcheck`, builds and runs it against the installed
 * grant.pc).
 */
#include <grant/grant.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char policy[] =
    "grant example {\n"
    "    exec {\n"
    "        allow git [status log];\n"
    "        deny sh bash;\n"
    "    }\n"
    "    fs {\n"
    "        write /work/project;\n"
    "        deny /work/project/.env;\n"
    "    }\n"
    "    net deny;\n"
    "}\n";

static int report(const char *question, grant_verdict *v, grant_answer want)
{
    grant_answer a = grant_verdict_answer(v);
    printf("%s: %s by %s (%s)\n", question, a == GRANT_ALLOWED ? "allowed" : "denied",
           grant_verdict_origin(v), grant_verdict_rule(v));
    grant_verdict_free(v);
    return a == want ? 0 : 1;
}

int main(void)
{
    printf("libgrant %s\n", grant_version());
    grant_context *ctx = NULL;
    grant_diags *diags = grant_diags_new();
    grant_policy *p = NULL;
    /* An offline target: the answers do not depend on this machine. */
    if (!diags || grant_context_new(&ctx) < 0 ||
        grant_context_set_target(ctx, GRANT_TARGET_LINUX) < 0 ||
        grant_compile_buffer(ctx, "example.grant", policy, strlen(policy), diags, &p) < 0) {
        for (size_t i = 0; diags && i < grant_diags_count(diags); i++) {
            char *msg = grant_diags_render(diags, i);
            fprintf(stderr, "%s\n", msg);
            free(msg);
        }
        return 2;
    }
    int wrong = 0;
    grant_verdict *v = NULL;
    const char *status[] = {"git", "status"}, *push[] = {"git", "push"}, *shell[] = {"sh", "-c", "x"};
    if (grant_check_exec(p, status, 2, "/usr/bin:/bin", NULL, &v) < 0)
        return 2;
    wrong += report("exec git status", v, GRANT_ALLOWED);
    if (grant_check_exec(p, push, 2, "/usr/bin:/bin", NULL, &v) < 0)
        return 2;
    wrong += report("exec git push", v, GRANT_DENIED);
    if (grant_check_exec(p, shell, 3, "/usr/bin:/bin", NULL, &v) < 0)
        return 2;
    wrong += report("exec sh -c x", v, GRANT_DENIED);
    if (grant_check_fs(p, GRANT_OP_WRITE, "/work/project/src/main.c", NULL, &v) < 0)
        return 2;
    wrong += report("write /work/project/src/main.c", v, GRANT_ALLOWED);
    if (grant_check_fs(p, GRANT_OP_READ, "/work/project/.env", NULL, &v) < 0)
        return 2;
    wrong += report("read /work/project/.env", v, GRANT_DENIED);
    grant_policy_free(p);
    grant_context_free(ctx);
    grant_diags_free(diags);
    return wrong ? 1 : 0;
}
