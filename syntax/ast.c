/* ast.c - the syntax tree shared by the grant and YAML front ends. */
#include <stdlib.h>
#include <string.h>

#include "syntax/syntax.h"

gk_file_ast *gk_ast_new(gk_source *src, gk_surface surface)
{
    gk_file_ast *ast = gk_calloc(1, sizeof(*ast));
    ast->src = gk_source_ref(src);
    ast->surface = surface;
    return ast;
}

void gk_word_free(gk_word *w)
{
    if (!w)
        return;
    free(w->text);
    w->text = NULL;
}

static void words_free(gk_word *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gk_word_free(&v[i]);
    free(v);
}

void gk_ast_free(gk_file_ast *ast)
{
    if (!ast)
        return;
    gk_word_free(&ast->name);
    words_free(ast->includes, ast->nincludes);
    words_free(ast->extends, ast->nextends);
    for (size_t i = 0; i < ast->nexec; i++) {
        gk_exec_rule *r = &ast->exec[i];
        for (size_t k = 0; k < r->ntargets; k++)
            gk_word_free(&r->targets[k].word);
        free(r->targets);
        words_free(r->subcmds, r->nsubcmds);
    }
    free(ast->exec);
    for (size_t i = 0; i < ast->nfs; i++)
        words_free(ast->fs[i].paths, ast->fs[i].npaths);
    free(ast->fs);
    for (size_t i = 0; i < ast->nnet_rules; i++)
        words_free(ast->net_rules[i].dests, ast->net_rules[i].ndests);
    free(ast->net_rules);
    free(ast->comments);
    free(ast->tokens);
    gk_source_unref(ast->src);
    free(ast);
}

bool gk_word_is_path(const char *text)
{
    if (!text)
        return false;
    return text[0] == '/' || text[0] == '~' || gk_has_prefix(text, "cwd:") ||
           gk_has_prefix(text, "tempdir:") || gk_has_prefix(text, "xdg:");
}

bool gk_word_is_drive_path(const char *text)
{
    return text && ((text[0] >= 'A' && text[0] <= 'Z') || (text[0] >= 'a' && text[0] <= 'z')) &&
           text[1] == ':' && (text[2] == '/' || text[2] == '\\');
}

gk_target_kind gk_classify_target(const char *text)
{
    if (!gk_word_is_path(text))
        return GK_T_NAME;
    size_t n = strlen(text);
    return text[n - 1] == '/' ? GK_T_DIR : GK_T_PATH;
}
