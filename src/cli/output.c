/* output.c — the reports of one run, committed together or not at all
 * (output.h; docs/diff.md "Outputs"). */
#include "config.h"

#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "kerndiff/discover.h"

/* ---- temp files removed on a fatal signal ---------------------------------
 * The handler may only make async-signal-safe calls, so the temp names it
 * removes sit in a fixed table filled with the signals blocked. */

#define SIG_SLOTS KD_MAX_OUTPUTS
static char sig_path[SIG_SLOTS][PATH_MAX];
static volatile sig_atomic_t sig_used[SIG_SLOTS];

static void remove_temps_and_reraise(int sig)
{
    for (int i = 0; i < SIG_SLOTS; i++)
        if (sig_used[i])
            unlink(sig_path[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void kd_outputs_install_signals(void)
{
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temps_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaddset(&sa.sa_mask, fatal[i]);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaction(fatal[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void block_fatal_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void register_temp(const char *path)
{
    for (int i = 0; i < SIG_SLOTS; i++)
        if (!sig_used[i] && strlen(path) < PATH_MAX) {
            strcpy(sig_path[i], path);
            sig_used[i] = 1;
            return;
        }
}

static void unregister_temp(const char *path)
{
    for (int i = 0; i < SIG_SLOTS; i++)
        if (sig_used[i] && strcmp(sig_path[i], path) == 0)
            sig_used[i] = 0;
}

/* ---- naming outputs -------------------------------------------------------- */

void kd_outputs_init(kd_outputs *o, const char *cmd)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
}

static bool is_stdout(const char *path) { return strcmp(path, "-") == 0; }

bool kd_outputs_add(kd_outputs *o, const char *option, const char *path, const char *format)
{
    for (size_t i = 0; i < o->n; i++)
        if (is_stdout(path) && o->v[i].kind == KD_OUT_STDOUT)
            return kd_cli_usage_error(o->cmd,
                                      "the %s report (%s%s) and %s - would both go to standard "
                                      "output; write one to a file%s",
                                      o->v[i].format, o->v[i].option,
                                      strcmp(o->v[i].option, "--format") ? " -" : "", option,
                                      strcmp(o->v[i].option, "--format") ? "" : ", or add -q"),
                   false;
    if (o->n == KD_MAX_OUTPUTS)
        return kd_cli_usage_error(o->cmd, "too many outputs"), false;
    kd_output *out = &o->v[o->n++];
    memset(out, 0, sizeof *out);
    out->option = option;
    out->path = path;
    out->format = format;
    out->kind = is_stdout(path) ? KD_OUT_STDOUT : KD_OUT_RENAME;
    return true;
}

/* ---- checking them before the work ------------------------------------------ */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A symlink's target, relative to the link's directory when it is relative. */
static char *link_target(const char *link, size_t size_hint)
{
    size_t cap = size_hint ? size_hint + 1 : PATH_MAX;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    ssize_t n = readlink(link, t, cap - 1);
    if (n < 0) {
        free(t);
        return NULL;
    }
    t[n] = '\0';
    if (t[0] == '/')
        return t;
    char *dir = dir_of(link);
    char *joined = dir ? malloc(strlen(dir) + strlen(t) + 2) : NULL;
    if (joined)
        sprintf(joined, "%s/%s", dir, t);
    free(dir);
    free(t);
    return joined;
}

/* Follows symlinks from path (40 at most, as the kernel does) to the file an
 * open() would write. *exists tells whether that file exists (st is then its
 * lstat); NULL with errno set on failure. */
static char *follow_links(const char *path, struct stat *st, bool *exists)
{
    char *cur = strdup(path);
    for (int hop = 0; cur && hop <= 40; hop++) {
        if (lstat(cur, st) != 0) {
            if (errno != ENOENT)
                break;
            *exists = false;
            return cur;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = true;
            return cur;
        }
        char *next = link_target(cur, (size_t)st->st_size);
        free(cur);
        cur = next;
        if (hop == 40)
            errno = ELOOP;
    }
    int e = errno;
    free(cur);
    errno = e ? e : ENOMEM;
    return NULL;
}

typedef struct {
    dev_t dev;
    ino_t ino;
} file_id;

typedef struct {
    file_id *v;
    size_t n, cap;
} id_list;

static bool ids_add(id_list *l, const struct stat *st)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        file_id *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (file_id){st->st_dev, st->st_ino};
    return true;
}

static bool ids_have(const id_list *l, const struct stat *st)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].dev == st->st_dev && l->v[i].ino == st->st_ino)
            return true;
    return false;
}

/* Every file an input may read: the path itself and, for a directory, the
 * trace files it resolves to. A path that cannot be resolved is left to the
 * load, which reports it with its own message. */
static bool collect_input_ids(const char *const inputs[], size_t n, id_list *ids)
{
    struct stat st;
    for (size_t i = 0; i < n; i++) {
        if (!inputs[i] || is_stdout(inputs[i]) || stat(inputs[i], &st) != 0)
            continue;
        if (!ids_add(ids, &st))
            return false;
        if (!S_ISDIR(st.st_mode))
            continue;
        kd_trace_set set;
        kd_error err;
        kd_error_clear(&err);
        if (kd_discover_traces(inputs[i], &set, &err) != KD_OK)
            continue;
        for (size_t k = 0; k < set.n; k++)
            if (stat(set.files[k].path, &st) == 0 && !ids_add(ids, &st)) {
                kd_trace_set_free(&set);
                return false;
            }
        kd_trace_set_free(&set);
    }
    return true;
}

static bool out_error(const kd_output *out, const char *what)
{
    kd_cli_error("%s %s: %s", out->option, out->path, what);
    return false;
}

static unsigned new_file_mode(void)
{
    /* what open(path, O_CREAT, 0666) would give under the process umask */
    mode_t mask = umask(0);
    umask(mask);
    return 0666u & ~(unsigned)mask;
}

/* Decides how one output is written from what its path names now. */
static bool classify_output(kd_output *out, struct stat *st, bool *exists)
{
    out->target = follow_links(out->path, st, exists);
    if (!out->target)
        return out_error(out, strerror(errno));
    if (!*exists) {
        out->kind = KD_OUT_RENAME;
        out->mode = new_file_mode();
        return true;
    }
    if (S_ISDIR(st->st_mode))
        return out_error(out, "is a directory");
    if (S_ISBLK(st->st_mode))
        return out_error(out, "is a block device; refusing to write a report to it");
    if (S_ISREG(st->st_mode)) {
        /* an existing file keeps its permission bits, as open(O_TRUNC) would */
        out->kind = KD_OUT_RENAME;
        out->mode = (unsigned)st->st_mode & 07777u;
        return true;
    }
    out->kind = KD_OUT_DIRECT; /* character device, FIFO or socket */
    if (access(out->target, W_OK) != 0)
        return out_error(out, strerror(errno));
    return true;
}

/* The identity of a file that may not exist yet: its directory and name. */
static bool same_new_file(const kd_output *a, const kd_output *b)
{
    struct stat da, db;
    char *dir_a = dir_of(a->target), *dir_b = dir_of(b->target);
    bool same = dir_a && dir_b && stat(dir_a, &da) == 0 && stat(dir_b, &db) == 0 &&
                da.st_dev == db.st_dev && da.st_ino == db.st_ino &&
                strcmp(base_of(a->target), base_of(b->target)) == 0;
    free(dir_a);
    free(dir_b);
    return same;
}

/* The temp file's name: "NAME.tmpXXXXXX" beside the target, or a short
 * ".kdtmpXXXXXX" when that would exceed the directory's name limit (a legal
 * 250-byte NAME must still be writable). */
static char *temp_name(const char *target)
{
    char *dir = dir_of(target);
    if (!dir)
        return NULL;
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0)
        name_max = NAME_MAX;
    const char *base = base_of(target);
    size_t n = strlen(dir) + strlen(base) + 16;
    char *tmp = malloc(n);
    if (tmp) {
        if (strlen(base) + 10 <= (size_t)name_max)
            snprintf(tmp, n, "%s.tmpXXXXXX", target);
        else
            snprintf(tmp, n, "%s/.kdtmpXXXXXX", dir);
    }
    free(dir);
    return tmp;
}

static bool name_fits(const kd_output *out)
{
    char *dir = dir_of(out->target);
    long name_max = dir ? pathconf(dir, _PC_NAME_MAX) : -1;
    free(dir);
    if (name_max <= 0)
        name_max = NAME_MAX;
    if (strlen(base_of(out->target)) <= (size_t)name_max)
        return true;
    return out_error(out, strerror(ENAMETOOLONG));
}

/* Creates the temp file with the final mode and registers it for the signal
 * handler, with the signals blocked so no temp file escapes it. */
static bool create_temp(kd_output *out)
{
    out->tmp = temp_name(out->target);
    if (!out->tmp)
        return out_error(out, "out of memory");
    sigset_t old;
    block_fatal_signals(&old);
    int fd = mkstemp(out->tmp);
    if (fd >= 0)
        register_temp(out->tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        free(out->tmp);
        out->tmp = NULL;
        return out_error(out, strerror(errno));
    }
    if (fchmod(fd, (mode_t)out->mode) != 0 || !(out->fp = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        return out_error(out, strerror(e));
    }
    return true;
}

static bool check_one(kd_outputs *o, size_t i, const id_list *inputs)
{
    kd_output *out = &o->v[i];
    struct stat st;
    bool exists = false;
    if (!classify_output(out, &st, &exists))
        return false;
    if (exists && ids_have(inputs, &st))
        return out_error(out, "is an input trace; refusing to overwrite it");
    if (out->kind != KD_OUT_RENAME)
        return true;
    if (!name_fits(out))
        return false;
    for (size_t k = 0; k < i; k++) {
        const kd_output *prev = &o->v[k];
        struct stat pst;
        if (prev->kind != KD_OUT_RENAME)
            continue;
        bool same = exists ? stat(prev->target, &pst) == 0 && pst.st_dev == st.st_dev &&
                                 pst.st_ino == st.st_ino
                           : same_new_file(prev, out);
        if (same) {
            kd_cli_error("%s %s and %s %s name the same file", prev->option, prev->path,
                         out->option, out->path);
            return false;
        }
    }
    return true;
}

bool kd_outputs_prepare(kd_outputs *o, const char *const inputs[], size_t n_inputs)
{
    id_list ids = {NULL, 0, 0};
    bool ok = collect_input_ids(inputs, n_inputs, &ids);
    if (!ok)
        kd_cli_error("out of memory");
    for (size_t i = 0; ok && i < o->n; i++) {
        if (o->v[i].kind == KD_OUT_STDOUT) {
            if (kd_stdout_was_closed) {
                kd_cli_error("standard output is closed (redirect it, or add -q): nothing written");
                ok = false;
            }
            continue;
        }
        ok = check_one(o, i, &ids);
    }
    free(ids.v);
    for (size_t i = 0; ok && i < o->n; i++)
        if (o->v[i].kind == KD_OUT_RENAME)
            ok = create_temp(&o->v[i]);
    if (!ok)
        kd_outputs_abort(o);
    return ok;
}

/* ---- rendering and committing ----------------------------------------------- */

/* Standard output and the direct outputs are rendered into memory, the
 * others into their temp files. */
static bool render_one(kd_output *out, kd_render_fn render, void *ctx)
{
    if (out->kind != KD_OUT_RENAME) {
        if (!(out->fp = open_memstream(&out->buf, &out->len)))
            return out_error(out, "out of memory");
        bool rendered = render(ctx, out->format, out->fp);
        bool closed = fclose(out->fp) == 0; /* the buffer is final once closed */
        out->fp = NULL;
        return rendered && closed ? true : out_error(out, "out of memory");
    }
    bool ok = render(ctx, out->format, out->fp);
    ok = fflush(out->fp) == 0 && !ferror(out->fp) && ok;
    int e = errno;
    ok = fclose(out->fp) == 0 && ok;
    out->fp = NULL;
    return ok ? true : out_error(out, strerror(e ? e : errno));
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static bool commit_direct(kd_output *out)
{
    int fd = open(out->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return out_error(out, strerror(errno));
    bool ok = write_all(fd, out->buf, out->len);
    int e = errno;
    ok = close(fd) == 0 && ok;
    if (!ok)
        return out_error(out, strerror(e ? e : errno));
    return true;
}

static bool commit_stdout(kd_output *out)
{
    if (fwrite(out->buf, 1, out->len, stdout) == out->len && fflush(stdout) == 0)
        return true;
    kd_cli_error("standard output: write error: %s (no report file written)", strerror(errno));
    return false;
}

static bool commit_rename(kd_output *out)
{
    sigset_t old;
    block_fatal_signals(&old);
    bool ok = rename(out->tmp, out->target) == 0;
    int e = errno;
    if (ok) {
        unregister_temp(out->tmp);
        free(out->tmp);
        out->tmp = NULL;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return ok ? true : out_error(out, strerror(e));
}

/* In an order that lets the likeliest failures come before anything is
 * final: the devices and standard output (a full disk, a closed pipe), then
 * the renames, which fail only if the directory changed under the run. */
bool kd_outputs_write(kd_outputs *o, kd_render_fn render, void *ctx)
{
    bool ok = true;
    for (size_t i = 0; ok && i < o->n; i++)
        ok = render_one(&o->v[i], render, ctx);
    for (size_t i = 0; ok && i < o->n; i++)
        if (o->v[i].kind == KD_OUT_DIRECT)
            ok = commit_direct(&o->v[i]);
    for (size_t i = 0; ok && i < o->n; i++)
        if (o->v[i].kind == KD_OUT_STDOUT)
            ok = commit_stdout(&o->v[i]);
    for (size_t i = 0; ok && i < o->n; i++)
        if (o->v[i].kind == KD_OUT_RENAME)
            ok = commit_rename(&o->v[i]);
    kd_outputs_abort(o);
    return ok;
}

void kd_outputs_abort(kd_outputs *o)
{
    for (size_t i = 0; i < o->n; i++) {
        kd_output *out = &o->v[i];
        if (out->fp)
            fclose(out->fp);
        out->fp = NULL;
        if (out->tmp) {
            sigset_t old;
            block_fatal_signals(&old);
            unlink(out->tmp);
            unregister_temp(out->tmp);
            sigprocmask(SIG_SETMASK, &old, NULL);
            free(out->tmp);
            out->tmp = NULL;
        }
        free(out->target);
        out->target = NULL;
        free(out->buf);
        out->buf = NULL;
        out->len = 0;
    }
}
