/* util.h - small allocation, string and vector helpers shared by libgrant.
 *
 * Ownership: gk_strvec owns its strings (gk_strvec_free frees them);
 * gk_buf owns its bytes until gk_buf_steal hands them to the caller.
 * Allocation failure aborts (as glib does): a policy compiler that ran out
 * of memory half-way has nothing safe to return.
 */
#ifndef GK_UTIL_H
#define GK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>

#define GK_HIDDEN __attribute__((visibility("hidden")))

/* Cleanup attributes in the style of bubblewrap/systemd. */
#define gk_autofree __attribute__((cleanup(gk_freep)))
GK_HIDDEN void gk_freep(void *pp);
static inline void *gk_steal_pointer(void *pp)
{
    void **p = (void **)pp;
    void *v = *p;
    *p = NULL;
    return v;
}
#define gk_steal(pp) gk_steal_pointer(pp)

/* FNV-1a, byte at a time: the gate's indexes hash every ancestor of a path
 * in one pass by carrying the hash of the prefix. */
#define GK_FNV_BASIS 14695981039346656037ULL
static inline uint64_t gk_fnv_step(uint64_t h, unsigned char c)
{
    return (h ^ c) * 1099511628211ULL;
}
static inline uint64_t gk_fnv(const char *s, size_t n)
{
    uint64_t h = GK_FNV_BASIS;
    for (size_t i = 0; i < n; i++)
        h = gk_fnv_step(h, (unsigned char)s[i]);
    return h;
}

GK_HIDDEN void *gk_malloc(size_t n);
/* A hint for a large buffer about to be filled (a frame's payload, its
 * decoded bytes): transparent huge pages on its 2 MiB-aligned interior,
 * which takes the page faults of filling it from one per 4 KiB to one per
 * 2 MiB (about 50 ms to 9 ms for 60 MiB here). Below 4 MiB, or where the
 * kernel says no, nothing. */
GK_HIDDEN void gk_advise_large(void *p, size_t n);
GK_HIDDEN void *gk_calloc(size_t n, size_t size);
GK_HIDDEN void *gk_realloc(void *p, size_t n);
GK_HIDDEN char *gk_strdup(const char *s);
GK_HIDDEN char *gk_strndup(const char *s, size_t n);
/* a followed by b, without printf (hot paths build reasons with it). */
GK_HIDDEN char *gk_concat(const char *a, const char *b);
GK_HIDDEN char *gk_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
GK_HIDDEN char *gk_vprintf(const char *fmt, va_list ap);
GK_HIDDEN bool gk_str_eq(const char *a, const char *b); /* NULL-safe */
GK_HIDDEN bool gk_has_prefix(const char *s, const char *prefix);
GK_HIDDEN bool gk_has_suffix(const char *s, const char *suffix);
/* Bytewise (memcmp order) comparison, the order of the canonical IR. */
GK_HIDDEN int gk_strcmp_bytes(const char *a, const char *b);
/* qsort comparator over char* elements, bytewise. */
GK_HIDDEN int gk_cmp_strp(const void *a, const void *b);

/* Path helpers on absolute, lexically normal paths. */
/* Length of p's root: 1 for "/", 3 for a drive root "C:/" (the windows
 * target's spelling), 0 for a relative path. */
GK_HIDDEN size_t gk_path_root_len(const char *p);
/* true iff p == q or p starts with q followed by '/' (q == "/" contains all,
 * a drive root "C:/" all of its drive). */
GK_HIDDEN bool gk_path_within(const char *p, const char *q);
GK_HIDDEN const char *gk_basename(const char *p); /* pointer into p */
/* Parent of an absolute path ("/" for "/a", NULL for "/"). Caller frees. */
GK_HIDDEN char *gk_path_parent(const char *p);
GK_HIDDEN char *gk_path_join(const char *dir, const char *name);

/* Damerau-free Levenshtein distance, for "did you mean" hints. */
GK_HIDDEN size_t gk_edit_distance(const char *a, const char *b);
/* Nearest candidate within a small distance, or NULL. */
GK_HIDDEN const char *gk_nearest(const char *word, const char *const *candidates, size_t n);

/* UTF-8 validation: returns true when s[0..len) is valid UTF-8. */
GK_HIDDEN bool gk_utf8_valid(const char *s, size_t len);

/* A growable vector of owned strings. */
typedef struct gk_strvec {
    char **v;
    size_t n, cap;
} gk_strvec;
GK_HIDDEN void gk_strvec_push(gk_strvec *sv, const char *s);      /* copies s */
GK_HIDDEN void gk_strvec_push_take(gk_strvec *sv, char *s);       /* takes s */
GK_HIDDEN bool gk_strvec_contains(const gk_strvec *sv, const char *s);
GK_HIDDEN void gk_strvec_sort_unique(gk_strvec *sv);              /* bytewise */
GK_HIDDEN void gk_strvec_copy(gk_strvec *dst, const gk_strvec *src);
GK_HIDDEN void gk_strvec_free(gk_strvec *sv);
/* The strings joined by sep; "" for none. Caller frees. */
GK_HIDDEN char *gk_strvec_join(const gk_strvec *sv, const char *sep);
/* Sorted-vector helpers (after gk_strvec_sort_unique). */
GK_HIDDEN bool gk_strvec_bsearch(const gk_strvec *sv, const char *s);
/* Index of s in the sorted sv, or -1. */
GK_HIDDEN long gk_strvec_index(const gk_strvec *sv, const char *s);

/* A growable byte buffer, always NUL-terminated. */
typedef struct gk_buf {
    char *data;
    size_t len, cap;
} gk_buf;
/* Room for n more bytes and the terminating NUL. */
GK_HIDDEN void gk_buf_grow(gk_buf *b, size_t n);
/* Inline: emitters append hundreds of thousands of short pieces. */
static inline void gk_buf_add(gk_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap)
        gk_buf_grow(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}
static inline void gk_buf_puts(gk_buf *b, const char *s)
{
    gk_buf_add(b, s, strlen(s));
}
static inline void gk_buf_putc(gk_buf *b, char c)
{
    gk_buf_add(b, &c, 1);
}
GK_HIDDEN void gk_buf_printf(gk_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
GK_HIDDEN char *gk_buf_steal(gk_buf *b, size_t *len);
GK_HIDDEN void gk_buf_free(gk_buf *b);

/* Generic growable array: GK_VEC_PUSH(arr, n, cap, value). */
#define GK_VEC_PUSH(arr, n, cap, value)                                         \
    do {                                                                        \
        if ((n) == (cap)) {                                                     \
            (cap) = (cap) ? (cap) * 2 : 8;                                      \
            (arr) = gk_realloc((arr), (cap) * sizeof(*(arr)));                  \
        }                                                                       \
        (arr)[(n)++] = (value);                                                 \
    } while (0)

/* Read a policy input whole: a regular file ("-": standard input) of at
 * most GK_INPUT_MAX bytes, opened without blocking. -EISDIR, -EINVAL (not a
 * regular file: a FIFO, a device such as /dev/zero), -EFBIG (too large), or
 * the open/read errno; gk_read_strerror words them for a diagnostic. */
#define GK_INPUT_MAX (64u << 20)
GK_HIDDEN int gk_read_file(const char *path, char **out, size_t *len);
/* gk_read_file with another bound than GK_INPUT_MAX (-EFBIG above max).
 * *out is NUL-terminated. */
GK_HIDDEN int gk_read_file_max(const char *path, size_t max, char **out, size_t *len);
GK_HIDDEN const char *gk_read_strerror(int rc);
/* Write atomically; grant_write_file_atomic (grant.h) is this, exported. */
GK_HIDDEN int gk_write_file_atomic(const char *path, const char *data, size_t len);
/* A close-on-exec memfd named name holding data, at offset 0; with seal,
 * its size and contents sealed (what the kernel reads is what was
 * written). fd or -errno. */
GK_HIDDEN int gk_memfd_with(const char *name, const void *data, size_t len, bool seal);
/* Remove path and everything below it, never following a symlink nor
 * crossing into another mount; best effort (a run's private directory). */
GK_HIDDEN void gk_remove_tree(const char *path);

#endif
