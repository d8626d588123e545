/* discover.c — resolve a trace path (file or directory) to the trace files to
 * analyse, as the reference's discover_trace_targets (reference §3.2).
 *
 * Determinism: directory entries are read in name order, file lists are
 * ordered by (mtime with nanoseconds, path), and the final order is
 * (stage order, basename, path), so the result never depends on readdir
 * order. Symlinked directories are not followed by the recursive walk (as
 * pathlib's rglob), and a directory that is one of its own ancestors (bind
 * mounts) is skipped, so the walk always ends.
 *
 * Ranks (step 7) are never guessed: a file's rank is the distributedInfo.rank
 * its header declares (kd_peek_trace_header, read only when the directory
 * leaves more than one file to choose from), else the one its name gives
 * (the reference's patterns, then rank-N / rank_N). Several files of one
 * stage and no rank anywhere is an error, not the newest file. */
#include "config.h"

#include "kerndiff/discover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "kerndiff/load.h"
#include "kerndiff/strbuf.h"

/* ------------------------------------------------------------------------ */
/* small ASCII helpers (no dependency on text.c)                            */

static int lower_ascii(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static bool ci_equal_n(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower_ascii((unsigned char)s[i]) != (unsigned char)lit[i])
            return false;
    return true;
}

static bool ci_ends_with(const char *s, const char *lit)
{
    size_t n = strlen(s), m = strlen(lit);
    return n >= m && ci_equal_n(s + n - m, m, lit);
}

/* lit (lowercase) occurs in s[0..n) case-insensitively */
static bool ci_contains_n(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (m > n)
        return false;
    for (size_t i = 0; i + m <= n; i++)
        if (ci_equal_n(s + i, m, lit))
            return true;
    return false;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Growing string for the one-line `how`. */
/* ------------------------------------------------------------------------ */
/* parse_stage / parse_tp_rank / trace-file test                            */

kd_stage kd_parse_stage(const char *path)
{
    /* Path(path).parts[-6:]: components split on '/', with empty and "."
     * components dropped (pathlib normalizes them away). The root "/" part
     * can never match, so it is left out. */
    enum { KEEP = 6 };
    const char *start[KEEP];
    size_t len[KEEP];
    size_t count = 0;
    const char *p = path ? path : "";
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && *q != '/')
            q++;
        size_t n = (size_t)(q - p);
        if (!(n == 1 && p[0] == '.')) {
            start[count % KEEP] = p;
            len[count % KEEP] = n;
            count++;
        }
        p = q;
    }
    size_t k = count < KEEP ? count : KEEP;
    /* No pattern holds a space, so searching the space-joined string equals
     * searching each component. */
    for (size_t i = 0; i < k; i++) {
        const char *s = start[i];
        size_t n = len[i];
        if (ci_contains_n(s, n, "-extend") || ci_contains_n(s, n, "-prefill") ||
            ci_contains_n(s, n, "_extend") || ci_contains_n(s, n, "_prefill") ||
            ci_equal_n(s, n, "extend") || ci_equal_n(s, n, "prefill"))
            return KD_STAGE_EXTEND;
    }
    for (size_t i = 0; i < k; i++) {
        const char *s = start[i];
        size_t n = len[i];
        if (ci_contains_n(s, n, "-decode") || ci_contains_n(s, n, "_decode") ||
            ci_equal_n(s, n, "decode"))
            return KD_STAGE_DECODE;
    }
    return KD_STAGE_ALL;
}

/* Matches the lowercase ASCII word at s, case-insensitively as Python's
 * re.IGNORECASE does (which also lets 'k' match U+212A KELVIN SIGN).
 * Returns the number of bytes consumed, 0 on mismatch. */
static size_t ci_word_at(const char *s, const char *word)
{
    size_t used = 0;
    for (const char *w = word; *w; w++) {
        const unsigned char *u = (const unsigned char *)s + used;
        if (lower_ascii(u[0]) == (unsigned char)*w)
            used += 1;
        else if (*w == 'k' && u[0] == 0xE2 && u[1] == 0x84 && u[2] == 0xAA)
            used += 3;
        else
            return 0;
    }
    return used;
}

/* Digits at s: their count in *ndig and the value in *val; false when there
 * is no digit or the value does not fit a long. */
static bool read_number(const char *s, size_t *ndig, long *val)
{
    size_t i = 0;
    long v = 0;
    bool fits = true;
    while (is_digit(s[i])) {
        int d = s[i] - '0';
        if (fits && v > (LONG_MAX - d) / 10)
            fits = false;
        else if (fits)
            v = v * 10 + d;
        i++;
    }
    *ndig = i;
    *val = v;
    return i > 0 && fits;
}

/* re.search(r"(?:^|[_-])WORD(\d+)(?:[_.-]|$)", s, re.I). A leftmost match
 * whose number overflows long counts as no match of this pattern. */
static bool match_delimited(const char *s, const char *word, long *out)
{
    for (size_t w = 0; s[w]; w++) {
        if (w > 0 && s[w - 1] != '_' && s[w - 1] != '-')
            continue;
        size_t used = ci_word_at(s + w, word);
        if (!used)
            continue;
        const char *d = s + w + used;
        size_t nd;
        long v;
        bool fits = read_number(d, &nd, &v);
        if (nd == 0)
            continue;
        char after = d[nd];
        if (after != '\0' && after != '_' && after != '.' && after != '-')
            continue; /* a shorter digit run would be followed by a digit */
        if (!fits)
            return false;
        *out = v;
        return true;
    }
    return false;
}

/* re.search(r"TP-(\d+)", s, re.I) */
static bool match_tp_dash(const char *s, long *out)
{
    for (size_t w = 0; s[w]; w++) {
        size_t used = ci_word_at(s + w, "tp-");
        if (!used)
            continue;
        size_t nd;
        long v;
        bool fits = read_number(s + w + used, &nd, &v);
        if (nd == 0)
            continue;
        if (!fits)
            return false;
        *out = v;
        return true;
    }
    return false;
}

long kd_parse_tp_rank(const char *basename)
{
    long v;
    if (!basename)
        return -1;
    if (match_delimited(basename, "tp", &v))
        return v;
    if (match_tp_dash(basename, &v))
        return v;
    if (match_delimited(basename, "rank", &v))
        return v;
    if (match_delimited(basename, "worker", &v))
        return v;
    return -1;
}

long kd_parse_rank_name(const char *basename)
{
    long v = kd_parse_tp_rank(basename);
    /* HTA's trace_rank-0.json and rank_3.json: not among the reference's
     * patterns, (?:^|[_-])rank[-_](\d+)(?:[_.-]|$) */
    if (v < 0 && basename && !match_delimited(basename, "rank-", &v) &&
        !match_delimited(basename, "rank_", &v))
        v = -1;
    return v;
}

int kd_is_trace_file_name(const char *basename)
{
    if (!basename)
        return 0;
    size_t n = strlen(basename);
    if (ci_equal_n(basename, n, "server_args.json") || ci_equal_n(basename, n, "metadata.json") ||
        ci_equal_n(basename, n, "config.json"))
        return 0;
    if (ci_ends_with(basename, ".trace.json") || ci_ends_with(basename, ".trace.json.gz") ||
        ci_contains_n(basename, n, ".pt.trace.json"))
        return 1;
    if (ci_ends_with(basename, ".json") || ci_ends_with(basename, ".json.gz"))
        return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* candidates and the directory walk                                        */

typedef struct {
    char *path;       /* dir + "/" + name (no "./" for the dir ".") */
    size_t base_off;  /* offset of the basename in path: path[0..base_off) is the parent */
    struct timespec mtime;
    kd_stage stage;
    long rank;             /* -1: unknown */
    long world_size;       /* -1: unknown */
    const char *rank_from; /* RANK_FROM_*, or NULL */
} kd_cand;

static const char RANK_FROM_CONTENT[] = "distributedInfo";
static const char RANK_FROM_NAME[] = "file name";

typedef struct {
    kd_cand *v;
    size_t n, cap;
} kd_cands;

typedef struct kd_anc {
    dev_t dev;
    ino_t ino;
    const struct kd_anc *up;
} kd_anc;

static void cands_free(kd_cands *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].path);
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

static kd_status oom(kd_error *err)
{
    return kd_fail(err, KD_ENOMEM, "out of memory");
}

/* "PATH: <strerror(e) with a lowercase first letter>" */
static kd_status fail_errno(kd_error *err, kd_status st, const char *path, int e)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s", strerror(e));
    msg[0] = (char)lower_ascii((unsigned char)msg[0]);
    return kd_fail(err, st, "%s: %s", path, msg);
}

/* Python's str(Path(dir)): empty and "." components dropped, no trailing
 * slash; "" for the current directory (children are then bare names). */
static char *normalize_dir(const char *path)
{
    size_t n = strlen(path);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    const char *p = path;
    if (*p == '/')
        out[o++] = '/';
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && *q != '/')
            q++;
        size_t len = (size_t)(q - p);
        if (!(len == 1 && p[0] == '.')) {
            if (o > 0 && out[o - 1] != '/')
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = q;
    }
    out[o] = '\0';
    return out;
}

/* dir (normalized; "" = current directory) joined with name */
static char *join_path(const char *dir, const char *name, size_t *base_off)
{
    size_t dl = strlen(dir), nl = strlen(name);
    bool slash = dl > 0 && dir[dl - 1] != '/';
    char *p = malloc(dl + (slash ? 1 : 0) + nl + 1);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    if (slash)
        p[dl] = '/';
    size_t off = dl + (slash ? 1 : 0);
    memcpy(p + off, name, nl + 1);
    *base_off = off;
    return p;
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The entry names of dir, sorted. On failure returns false with *e = errno
 * (ENOMEM for allocation failure). */
static bool read_names(const char *dir, char ***names_out, size_t *n_out, int *e)
{
    DIR *d = opendir(*dir ? dir : ".");
    if (!d) {
        *e = errno;
        return false;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno != 0) {
                *e = errno;
                closedir(d);
                free_names(names, n);
                return false;
            }
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **nv = realloc(names, nc * sizeof *nv);
            if (!nv)
                goto nomem;
            names = nv;
            cap = nc;
        }
        names[n] = strdup(de->d_name);
        if (!names[n])
            goto nomem;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str_ptr);
    *names_out = names;
    *n_out = n;
    return true;
nomem:
    closedir(d);
    free_names(names, n);
    *e = ENOMEM;
    return false;
}

static bool is_trace_file(const char *path, const char *name)
{
    int r = kd_is_trace_file_name(name);
    if (r < 0)
        return kd_probe_trace_shape(path);
    return r == 1;
}

static bool cands_push(kd_cands *c, char *path, size_t base_off, const struct stat *st)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 16;
        kd_cand *nv = realloc(c->v, nc * sizeof *nv);
        if (!nv)
            return false;
        c->v = nv;
        c->cap = nc;
    }
    kd_cand *k = &c->v[c->n++];
    k->path = path;
    k->base_off = base_off;
    k->mtime = st->st_mtim;
    k->stage = kd_parse_stage(path);
    k->rank = -1;
    k->world_size = -1;
    k->rank_from = NULL;
    return true;
}

/* Trace files of dir (and, when recursive, of every sub-directory that is
 * not a symlink). Only a failure to read the top directory is an error;
 * unreadable sub-directories and entries that vanish are skipped, as
 * pathlib's rglob/is_file do. */
static kd_status walk(const char *dir, const char *shown, bool recursive, const kd_anc *anc,
                      kd_cands *out, kd_error *err)
{
    char **names = NULL;
    size_t n = 0;
    int e = 0;
    if (!read_names(dir, &names, &n, &e)) {
        if (e == ENOMEM)
            return oom(err);
        if (anc->up == NULL)
            return fail_errno(err, KD_EIO, shown, e);
        return KD_OK;
    }
    kd_status st = KD_OK;
    for (size_t i = 0; i < n && st == KD_OK; i++) {
        size_t base_off;
        char *path = join_path(dir, names[i], &base_off);
        if (!path) {
            st = oom(err);
            break;
        }
        struct stat sb;
        if (stat(path, &sb) != 0) {
            free(path);
            continue;
        }
        if (S_ISREG(sb.st_mode)) {
            if (is_trace_file(path, names[i])) {
                if (!cands_push(out, path, base_off, &sb)) {
                    free(path);
                    st = oom(err);
                }
                continue;
            }
        } else if (S_ISDIR(sb.st_mode) && recursive) {
            struct stat lsb;
            if (lstat(path, &lsb) == 0 && S_ISDIR(lsb.st_mode)) {
                bool loop = false;
                for (const kd_anc *a = anc; a; a = a->up)
                    if (a->dev == sb.st_dev && a->ino == sb.st_ino)
                        loop = true;
                if (!loop) {
                    kd_anc me = {sb.st_dev, sb.st_ino, anc};
                    st = walk(path, shown, true, &me, out, err);
                }
            }
        }
        free(path);
    }
    free_names(names, n);
    return st;
}

/* ------------------------------------------------------------------------ */
/* ordering and selection                                                   */

static int cmp_mtime(const void *a, const void *b)
{
    const kd_cand *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int cmp_final(const void *a, const void *b)
{
    const kd_cand *x = a, *y = b;
    if (x->stage != y->stage)
        return (int)x->stage < (int)y->stage ? -1 : 1;
    int c = strcmp(x->path + x->base_off, y->path + y->base_off);
    if (c != 0)
        return c;
    return strcmp(x->path, y->path);
}

static bool same_parent(const kd_cand *a, const kd_cand *b)
{
    return a->base_off == b->base_off && memcmp(a->path, b->path, a->base_off) == 0;
}

/* Keeps the candidates for which keep[i] is true, in order; frees the rest. */
static void cands_filter(kd_cands *c, const bool *keep)
{
    size_t o = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (keep[i])
            c->v[o++] = c->v[i];
        else
            free(c->v[i].path);
    }
    c->n = o;
}

typedef enum { MODE_DIRECT, MODE_RECURSIVE, MODE_NEWEST } kd_mode;

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Where the chosen files' rank came from, for `how`. */
static const char *rank_source(const kd_cands *c)
{
    bool content = false, name = false;
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].rank_from == RANK_FROM_CONTENT)
            content = true;
        else if (c->v[i].rank_from == RANK_FROM_NAME)
            name = true;
    }
    if (content && name)
        return "from distributedInfo and the file names";
    if (content)
        return "from distributedInfo";
    return c->n == 1 ? "from the file name" : "from the file names";
}

static char *make_how(kd_mode mode, const kd_cands *c, size_t root_off, const char *newest_dir,
                      size_t newest_len, size_t merged_dropped, bool ranked, long rank,
                      size_t rank_of, const char *rank_from, size_t stage_of)
{
    kd_strbuf b = {0};
    kd_sb_printf(&b, "directory: ");
    if (mode == MODE_NEWEST) {
        kd_sb_printf(&b, "newest trace dir ");
        kd_sb_putn(&b, newest_dir, newest_len);
        kd_sb_printf(&b, ", ");
    }
    kd_sb_printf(&b, "%zu trace file%s", c->n, c->n == 1 ? "" : "s");
    if (mode == MODE_RECURSIVE) {
        /* the distinct parent directories, relative to the input, in order */
        size_t ndirs = 0;
        for (size_t i = 0; i < c->n; i++) {
            bool seen = false;
            for (size_t j = 0; j < i; j++)
                if (same_parent(&c->v[i], &c->v[j]))
                    seen = true;
            if (!seen)
                ndirs++;
        }
        kd_sb_printf(&b, " from ");
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++) {
            bool seen = false;
            for (size_t j = 0; j < i; j++)
                if (same_parent(&c->v[i], &c->v[j]))
                    seen = true;
            if (seen)
                continue;
            if (k > 0)
                kd_sb_printf(&b, k + 1 == ndirs ? " and " : ", ");
            const kd_cand *x = &c->v[i];
            size_t off = root_off <= x->base_off ? root_off : x->base_off;
            kd_sb_putn(&b, x->path + off, x->base_off - off);
            k++;
        }
        kd_sb_printf(&b, " sub-director%s", ndirs == 1 ? "y" : "ies");
    }
    if (merged_dropped)
        kd_sb_printf(&b, ", %zu merged- file%s dropped", merged_dropped,
                  merged_dropped == 1 ? "" : "s");
    if (ranked)
        kd_sb_printf(&b, ", rank %ld of %zu file%s, %s", rank, rank_of, rank_of == 1 ? "" : "s",
                     rank_from);
    if (stage_of > c->n)
        kd_sb_printf(&b, ", newest per stage of %zu%s", stage_of,
                     ranked ? " (one rank, several runs)" : "");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    for (char *p = b.s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return b.s;
}

/* Each candidate's rank: the distributedInfo of its header when there is a
 * choice to make (more than one file), else (or when it declares none) its
 * name's. A header that cannot be read declares nothing: the file may well
 * be dropped, and the loader names the problem if it is not. */
static kd_status find_ranks(kd_cands *c, kd_error *err)
{
    bool peek = c->n > 1;
    for (size_t i = 0; i < c->n; i++) {
        kd_cand *k = &c->v[i];
        k->rank = -1;
        k->world_size = -1;
        k->rank_from = NULL;
        if (peek) {
            kd_trace_header h;
            kd_error e;
            kd_error_clear(&e);
            kd_status ps = kd_peek_trace_header(k->path, &h, &e);
            if (ps == KD_ENOMEM)
                return oom(err);
            if (ps == KD_OK) {
                if (h.has_world_size && h.world_size >= 0 && h.world_size <= LONG_MAX)
                    k->world_size = (long)h.world_size;
                if (h.has_rank && h.rank >= 0 && h.rank <= LONG_MAX) {
                    k->rank = (long)h.rank;
                    k->rank_from = RANK_FROM_CONTENT;
                    continue;
                }
            }
        }
        long r = kd_parse_rank_name(k->path + k->base_off);
        if (r >= 0) {
            k->rank = r;
            k->rank_from = RANK_FROM_NAME;
        }
    }
    return KD_OK;
}

/* Whether some stage has more than one candidate. */
static bool stage_has_several(const kd_cands *c)
{
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = i + 1; j < c->n; j++)
            if (c->v[i].stage == c->v[j].stage)
                return true;
    return false;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "DIR: N trace files and no way to tell which is rank 0 (...): a, b, ..."
 * with the names relative to DIR (basenames for its own files), sorted. */
static kd_status fail_ambiguous(kd_error *err, const char *shown, const kd_cands *c,
                                size_t root_off)
{
    enum { SHOW = 8 };
    const char **names = malloc(c->n * sizeof *names);
    if (!names)
        return oom(err);
    for (size_t i = 0; i < c->n; i++) {
        const kd_cand *x = &c->v[i];
        names[i] = x->path + (root_off <= x->base_off ? root_off : x->base_off);
    }
    qsort(names, c->n, sizeof *names, cmp_cstr);
    kd_strbuf b = {0};
    for (size_t i = 0; i < c->n && i < SHOW; i++)
        kd_sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
    if (c->n > SHOW)
        kd_sb_printf(&b, ", and %zu more", c->n - SHOW);
    free(names);
    if (b.oom) {
        free(b.s);
        return oom(err);
    }
    for (char *p = b.s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    kd_status st = kd_fail(err, KD_EINPUT,
                           "%s: %zu trace files and no way to tell which is rank 0 (no "
                           "distributedInfo.rank, no rank in the file names): %s",
                           shown, c->n, b.s);
    free(b.s);
    return st;
}

static kd_status discover_dir(const char *shown, const struct stat *dst, kd_trace_set *out,
                              kd_error *err)
{
    kd_status st = KD_OK;
    kd_cands c = {0};
    bool *keep = NULL;
    char *newest_dir = NULL;
    size_t newest_len = 0;
    char *root = normalize_dir(shown);
    if (!root)
        return oom(err);
    /* offset of a child's path after "root/" */
    size_t rl = strlen(root);
    size_t root_off = rl == 0 ? 0 : (root[rl - 1] == '/' ? rl : rl + 1);
    kd_anc top = {dst->st_dev, dst->st_ino, NULL};

    /* 1. direct traces; the recursive walk is needed only without them */
    kd_mode mode = MODE_DIRECT;
    st = walk(root, shown, false, &top, &c, err);
    if (st != KD_OK)
        goto done;
    if (c.n == 0) {
        st = walk(root, shown, true, &top, &c, err);
        if (st != KD_OK)
            goto done;
        if (c.n == 0) {
            st = kd_fail(err, KD_EINPUT,
                         "%s: no trace files in directory (looked for *.trace.json[.gz], "
                         "*.pt.trace.json*, or *.json[.gz] holding traceEvents)",
                         shown);
            goto done;
        }
        bool staged = false;
        for (size_t i = 0; i < c.n; i++)
            if (c.v[i].stage != KD_STAGE_ALL)
                staged = true;
        mode = staged ? MODE_RECURSIVE : MODE_NEWEST;
    }

    /* 3. ordered by mtime */
    qsort(c.v, c.n, sizeof *c.v, cmp_mtime);
    keep = malloc(c.n * sizeof *keep);
    if (!keep) {
        st = oom(err);
        goto done;
    }

    /* 5. newest trace dir: only the traces directly inside it */
    if (mode == MODE_NEWEST) {
        const kd_cand newest = c.v[c.n - 1];
        size_t off = root_off <= newest.base_off ? root_off : newest.base_off;
        newest_len = newest.base_off - off;
        if (newest_len > 0)
            newest_len--; /* no trailing slash */
        newest_dir = malloc(newest_len + 1);
        if (!newest_dir) {
            st = oom(err);
            goto done;
        }
        memcpy(newest_dir, newest.path + off, newest_len);
        newest_dir[newest_len] = '\0';
        for (size_t i = 0; i < c.n; i++)
            keep[i] = same_parent(&c.v[i], &newest);
        cands_filter(&c, keep);
    }

    /* 6. drop merged- files unless that leaves nothing */
    size_t merged = 0;
    for (size_t i = 0; i < c.n; i++) {
        keep[i] = !starts_with(c.v[i].path + c.v[i].base_off, "merged-");
        if (!keep[i])
            merged++;
    }
    size_t merged_dropped = 0;
    if (merged > 0 && merged < c.n) {
        merged_dropped = merged;
        cands_filter(&c, keep);
    }

    /* 7. rank filter: rank 0, else the lowest; unranked files then go */
    st = find_ranks(&c, err);
    if (st != KD_OK)
        goto done;
    bool ranked = false;
    long chosen = -1;
    size_t rank_of = c.n;
    for (size_t i = 0; i < c.n; i++) {
        long r = c.v[i].rank;
        if (r >= 0 && (!ranked || r < chosen)) {
            chosen = r;
            ranked = true;
        }
    }
    if (ranked) {
        for (size_t i = 0; i < c.n; i++)
            keep[i] = c.v[i].rank == chosen;
        cands_filter(&c, keep);
    } else if (stage_has_several(&c)) {
        /* the reference would take the newest: a guess, refused */
        st = fail_ambiguous(err, shown, &c, root_off);
        goto done;
    }
    const char *rank_from = ranked ? rank_source(&c) : NULL;

    /* 8. the newest file per stage (the list is in mtime order) */
    size_t stage_of = c.n;
    for (size_t i = 0; i < c.n; i++) {
        keep[i] = true;
        for (size_t j = i + 1; j < c.n; j++)
            if (c.v[j].stage == c.v[i].stage) {
                keep[i] = false;
                break;
            }
    }
    cands_filter(&c, keep);

    /* 9. final order: (stage order, name) */
    qsort(c.v, c.n, sizeof *c.v, cmp_final);

    char *how = make_how(mode, &c, root_off, newest_dir, newest_len, merged_dropped, ranked,
                         chosen, rank_of, rank_from, stage_of);
    kd_trace_file *files = malloc(c.n * sizeof *files);
    if (!how || !files) {
        free(how);
        free(files);
        st = oom(err);
        goto done;
    }
    for (size_t i = 0; i < c.n; i++) {
        files[i].path = c.v[i].path;
        files[i].stage = c.v[i].stage;
        files[i].rank = c.v[i].rank;
        files[i].rank_from = c.v[i].rank_from;
        files[i].world_size = c.v[i].world_size;
    }
    out->files = files;
    out->n = c.n;
    out->how = how;
    free(c.v); /* the paths now belong to out */
    c.v = NULL;
    c.n = c.cap = 0;

done:
    cands_free(&c);
    free(keep);
    free(newest_dir);
    free(root);
    return st;
}

kd_status kd_discover_traces(const char *path, kd_trace_set *out, kd_error *err)
{
    if (!out)
        return kd_fail(err, KD_EUSAGE, "kd_discover_traces: no output");
    out->files = NULL;
    out->n = 0;
    out->how = NULL;
    if (!path || !*path)
        return kd_fail(err, KD_EINPUT, "empty trace path");

    /* "-" is standard input: one trace, read by the loader (load.h); a file
     * named "-" is reached as "./-" */
    bool is_stdin = strcmp(path, "-") == 0;
    struct stat sb;
    if (is_stdin)
        goto one_file;
    if (stat(path, &sb) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return kd_fail(err, KD_EINPUT, "%s: no such file or directory", path);
        return fail_errno(err, KD_EIO, path, e);
    }
    if (S_ISDIR(sb.st_mode))
        return discover_dir(path, &sb, out, err);
    if (!S_ISREG(sb.st_mode))
        return kd_fail(err, KD_EINPUT, "%s: not a regular file or directory", path);

    /* a file is taken as is; only its readability is checked here */
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return fail_errno(err, KD_EIO, path, errno);
    close(fd);
one_file:
    out->files = malloc(sizeof *out->files);
    out->how = strdup(is_stdin ? "standard input" : "file");
    if (out->files)
        out->files[0].path = strdup(path);
    if (!out->files || !out->how || !out->files[0].path) {
        if (out->files)
            free(out->files[0].path);
        free(out->files);
        free(out->how);
        out->files = NULL;
        out->how = NULL;
        return oom(err);
    }
    out->files[0].stage = kd_parse_stage(path);
    /* a file named on the command line is not read here: its name's rank */
    const char *base = strrchr(path, '/');
    long r = is_stdin ? -1 : kd_parse_rank_name(base ? base + 1 : path);
    out->files[0].rank = r;
    out->files[0].rank_from = r >= 0 ? RANK_FROM_NAME : NULL;
    out->files[0].world_size = -1;
    out->n = 1;
    return KD_OK;
}

void kd_trace_set_free(kd_trace_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->files[i].path);
    free(s->files);
    free(s->how);
    s->files = NULL;
    s->n = 0;
    s->how = NULL;
}
