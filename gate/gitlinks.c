/* gitlinks.c - the .git of every submodule of a protected git dir is
 * protected as the git dir is (see gate.h, gk_gitlinks_protect).
 *
 * Why: git status in a work tree recurses into each gitlink of the index
 * whose path holds a .git, and reads that repository's config from the
 * git dir the .git names ("gitdir: X" in a file, or the directory itself).
 * Whoever writes or creates such a .git names a git dir of their own, and
 * its core.fsmonitor or hooks run at the next git status on the host. The
 * index is inside the protected git dir, so the set of gitlinks it lists
 * at the start of a run is the set git will visit after it.
 *
 * The index (git's index-format): "DIRC", version 2, 3 or 4, the entry
 * count; each entry 40 bytes of stat data (the mode at offset 24), the
 * object name (20 bytes, 32 in a sha256 repository), 16 bits of flags
 * (extended: 16 more, version 3 and up), the path NUL-terminated (versions
 * 2 and 3: padded to a multiple of 8; version 4: prefix-compressed
 * against the previous path, no padding). A split index keeps the rest in
 * sharedindex.*, read as well.
 *
 * A linked work tree (git worktree add) has a .git file of its own, named
 * by G/worktrees/NAME/gitdir: readonly as well, for git run there. A
 * protected .git that is itself such a file protects the git dir it names
 * and that one's common dir.
 */
#include "gate/gate.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define INDEX_MAX (256u << 20) /* a larger index is not read */
#define DEPTH_MAX 8            /* submodules of submodules */
#define LINKS_MAX 4096         /* gitlinks followed in all: an index is the host's, but a
                                * crafted one must not make a run mount without end */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A whole file of at most max bytes, NUL-terminated, or NULL. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    char *data = NULL;
    return gk_read_file_max(path, max, &data, len) == 0 ? data : NULL;
}

/* A path git itself would write to an index: relative, no empty, "." or
 * ".." component. */
static bool plain_path(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *c = p; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += n + (c[n] == '/');
        if (c[-1] == '/' && !*c)
            return false;
    }
    return true;
}

/* The gitlink paths of one index file, appended to out. */
static void index_gitlinks(const char *file, size_t hash, gk_strvec *out)
{
    size_t len = 0;
    gk_autofree char *data = slurp(file, INDEX_MAX, &len);
    if (data)
        gk_gitlinks_of_index((const unsigned char *)data, len, hash, out);
}

void gk_gitlinks_of_index(const unsigned char *d, size_t len, size_t hash, gk_strvec *out)
{
    if (len < 12 || memcmp(d, "DIRC", 4) != 0)
        return;
    uint32_t version = be32(d + 4), count = be32(d + 8);
    if (version < 2 || version > 4)
        return;
    size_t off = 12;
    /* One buffer for every entry's path: version 4 builds each on the one
     * before; versions 2 and 3 copy only a gitlink's (an index of a large
     * repository holds 100,000 entries, a handful of them gitlinks). */
    gk_buf path = {0};
    for (uint32_t i = 0; i < count; i++) {
        size_t fixed = 40 + hash + 2;
        if (off + fixed > len)
            break;
        uint32_t mode = be32(d + off + 24);
        bool gitlink = (mode & 0170000) == 0160000;
        unsigned flags = (unsigned)d[off + 40 + hash] << 8 | d[off + 40 + hash + 1];
        size_t name = off + fixed + ((version >= 3 && (flags & 0x4000)) ? 2 : 0);
        if (name > len)
            break;
        size_t end;
        if (version == 4) {
            /* strip N bytes of the previous path (git's offset varint) */
            size_t k = name;
            uint64_t strip = 0;
            if (k >= len)
                break;
            unsigned char c = d[k++];
            strip = c & 127;
            while ((c & 128) && k < len && strip < (1u << 24)) {
                c = d[k++];
                strip = ((strip + 1) << 7) + (c & 127);
            }
            if (strip > path.len)
                break;
            const unsigned char *nul = memchr(d + k, 0, len - k);
            if (!nul)
                break;
            path.len -= (size_t)strip;
            gk_buf_add(&path, (const char *)d + k, (size_t)(nul - (d + k)));
            end = (size_t)(nul - d) + 1;
        } else {
            const unsigned char *nul = memchr(d + name, 0, len - name);
            if (!nul)
                break;
            if (gitlink) {
                path.len = 0;
                gk_buf_add(&path, (const char *)d + name, (size_t)(nul - (d + name)));
            }
            size_t used = (size_t)(nul - (d + off)) + 1;
            end = off + ((used + 7) & ~(size_t)7);
        }
        if (gitlink && plain_path(path.data))
            gk_strvec_push(out, path.data);
        off = end;
    }
    gk_buf_free(&path);
}

/* Every gitlink the git dir's index (and a split index's shared part)
 * lists. */
static void gitlinks_of(const char *gitdir, gk_strvec *out)
{
    size_t len = 0;
    gk_autofree char *cfgpath = gk_path_join(gitdir, "config");
    gk_autofree char *cfg = slurp(cfgpath, 1u << 20, &len);
    /* extensions.objectFormat = sha256: 32-byte object names */
    size_t hash = cfg && strcasestr(cfg, "sha256") ? 32 : 20;
    gk_autofree char *index = gk_path_join(gitdir, "index");
    index_gitlinks(index, hash, out);
    DIR *dir = opendir(gitdir);
    struct dirent *e;
    while (dir && (e = readdir(dir)))
        if (strncmp(e->d_name, "sharedindex.", 12) == 0) {
            gk_autofree char *p = gk_path_join(gitdir, e->d_name);
            index_gitlinks(p, hash, out);
        }
    if (dir)
        closedir(dir);
    gk_strvec_sort_unique(out);
}

/* The git dir a .git names: itself when a directory, else the "gitdir:"
 * line of the file (relative to the file's directory). NULL if neither. */
static char *gitdir_of(const char *dotgit)
{
    struct stat st;
    if (stat(dotgit, &st) < 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return realpath(dotgit, NULL);
    size_t len = 0;
    gk_autofree char *text = slurp(dotgit, 4096, &len);
    if (!text || strncmp(text, "gitdir: ", 8) != 0)
        return NULL;
    text[strcspn(text, "\r\n")] = '\0';
    const char *g = text + 8;
    gk_autofree char *dir = gk_path_parent(dotgit);
    gk_autofree char *joined = g[0] == '/' ? gk_strdup(g) : gk_path_join(dir, g);
    return realpath(joined, NULL);
}

/* path readonly, as spelled and canonical (its directory resolved: a
 * link on the way is then kept too, gk_projection.links). */
static void add_readonly(gk_projection *pr, const char *path, const char *why)
{
    gk_autofree char *dir = gk_path_parent(path);
    gk_autofree char *rdir = dir ? realpath(dir, NULL) : NULL;
    const char *leaf = strrchr(path, '/') + 1;
    gk_autofree char *real = rdir ? gk_path_join(rdir, leaf) : gk_strdup(path);
    gk_fpath fp = {(char *)path, real};
    gk_regions_add(&pr->readonly, &fp, why);
}

#define WHY_SUB "submodule of a readonly git dir (git status reads it)"
#define WHY_WT "linked work tree of a readonly git dir (git reads it there)"
#define WHY_FILE "the git dir a readonly .git file names (git reads it there)"

/* A linked work tree's .git ("gitdir: G/worktrees/NAME"), named by the
 * gitdir file of each G/worktrees/NAME: git run there reads the git dir
 * it names. */
static void protect_worktrees(gk_projection *pr, const char *gitdir)
{
    gk_autofree char *wt = gk_path_join(gitdir, "worktrees");
    DIR *dir = opendir(wt);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        gk_autofree char *f = gk_printf("%s/%s/gitdir", wt, e->d_name);
        size_t len = 0;
        gk_autofree char *text = slurp(f, 4096, &len);
        if (!text)
            continue;
        text[strcspn(text, "\r\n")] = '\0';
        const char *leaf = strrchr(text, '/');
        if (text[0] == '/' && leaf && strcmp(leaf, "/.git") == 0)
            add_readonly(pr, text, WHY_WT);
    }
    if (dir)
        closedir(dir);
}

/* The work tree's gitlinks: each one's .git readonly, and its own. */
static void protect_tree(gk_projection *pr, const char *worktree, const char *gitdir, int depth,
                         size_t *budget)
{
    if (depth > DEPTH_MAX)
        return;
    gk_strvec links = {0};
    gitlinks_of(gitdir, &links);
    for (size_t i = 0; i < links.n && *budget; i++, --*budget) {
        gk_autofree char *sub = gk_path_join(worktree, links.v[i]);
        gk_autofree char *dotgit = gk_path_join(sub, ".git");
        add_readonly(pr, dotgit, WHY_SUB);
        gk_autofree char *g = gitdir_of(dotgit);
        if (g) {
            add_readonly(pr, g, WHY_SUB);
            protect_tree(pr, sub, g, depth + 1, budget);
        }
    }
    gk_strvec_free(&links);
}

/* A .git that is a file (a linked work tree, a submodule's checkout)
 * names its git dir elsewhere, and that one its common dir (commondir:
 * the main repository's, with the hooks and config git runs from): both
 * are the git dir the entry protects. */
static void protect_gitfile_dir(gk_projection *pr, const char *dotgit, const char *gitdir)
{
    struct stat st;
    if (lstat(dotgit, &st) < 0 || S_ISDIR(st.st_mode))
        return;
    add_readonly(pr, gitdir, WHY_FILE);
    gk_autofree char *f = gk_path_join(gitdir, "commondir");
    size_t len = 0;
    gk_autofree char *text = slurp(f, 4096, &len);
    if (!text)
        return;
    text[strcspn(text, "\r\n")] = '\0';
    gk_autofree char *joined = text[0] == '/' ? gk_strdup(text) : gk_path_join(gitdir, text);
    gk_autofree char *common = realpath(joined, NULL);
    if (common)
        add_readonly(pr, common, WHY_FILE);
}

void gk_gitlinks_protect(gk_projection *pr)
{
    const gk_regions *lists[2] = {&pr->readonly, &pr->deny};
    gk_strvec roots = {0};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *e = lists[l]->v[i].p.real;
            const char *slash = strrchr(e, '/');
            if (slash && strcmp(slash + 1, ".git") == 0)
                gk_strvec_push(&roots, e);
        }
    size_t budget = LINKS_MAX;
    for (size_t i = 0; i < roots.n; i++) {
        gk_autofree char *g = gitdir_of(roots.v[i]);
        gk_autofree char *worktree = gk_path_parent(roots.v[i]);
        if (g && worktree) {
            protect_tree(pr, worktree, g, 0, &budget);
            protect_worktrees(pr, g);
            protect_gitfile_dir(pr, roots.v[i], g);
        }
    }
    gk_strvec_free(&roots);
    gk_regions_sort_unique(&pr->readonly);
}
