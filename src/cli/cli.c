/* cli.c — error printing and atomic output files (cli.h). */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kd_prog = "kerndiff";

int kd_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", kd_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return KD_EXIT_ERROR;
}

int kd_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s %s: ", kd_prog, cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see '%s %s --help')\n", kd_prog, cmd);
    va_end(ap);
    return KD_EXIT_ERROR;
}

static bool is_stdout(const char *path) { return !path || strcmp(path, "-") == 0; }

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

bool kd_output_check(const char *path)
{
    if (is_stdout(path))
        return true;
    char *dir = dir_of(path);
    bool ok = dir && access(dir, W_OK | X_OK) == 0;
    if (!ok)
        kd_cli_error("%s: cannot write output: %s", path, dir ? strerror(errno) : "out of memory");
    free(dir);
    return ok;
}

bool kd_output_open(kd_output *o, const char *path)
{
    o->path = path;
    o->tmp = NULL;
    o->fp = NULL;
    if (is_stdout(path)) {
        o->fp = stdout;
        return true;
    }
    size_t n = strlen(path) + 16;
    o->tmp = malloc(n);
    if (!o->tmp) {
        kd_cli_error("%s: out of memory", path);
        return false;
    }
    snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        kd_cli_error("%s: cannot write output: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return false;
    }
    o->fp = fdopen(fd, "w");
    if (!o->fp) {
        kd_cli_error("%s: cannot write output: %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return false;
    }
    return true;
}

bool kd_output_commit(kd_output *o)
{
    if (!o->tmp) {
        bool ok = fflush(o->fp) == 0 && !ferror(o->fp);
        if (!ok)
            kd_cli_error("standard output: write error: %s", strerror(errno));
        return ok;
    }
    bool ok = fflush(o->fp) == 0 && !ferror(o->fp);
    ok = (fclose(o->fp) == 0) && ok;
    o->fp = NULL;
    if (ok && rename(o->tmp, o->path) != 0)
        ok = false;
    if (!ok) {
        kd_cli_error("%s: cannot write output: %s", o->path, strerror(errno));
        unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    return ok;
}

void kd_output_abort(kd_output *o)
{
    if (o->tmp) {
        if (o->fp)
            fclose(o->fp);
        unlink(o->tmp);
        free(o->tmp);
    }
    o->tmp = NULL;
    o->fp = NULL;
}

bool kd_cli_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < 0)
        return false;
    *out = (size_t)v;
    return true;
}

bool kd_cli_parse_share(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end == '%')
        end++;
    if (errno || *end || end == s || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

bool kd_cli_write_outputs(const char *const files[], size_t n,
                          bool (*write)(void *ctx, size_t i, FILE *fp), void *ctx)
{
    kd_output outs[8];
    bool opened[8] = {false};
    bool ok = n <= 8;
    for (size_t i = 0; i < n && ok; i++) {
        if (!files[i])
            continue;
        ok = kd_output_open(&outs[i], files[i]);
        if (!ok)
            break;
        opened[i] = true;
        if (!write(ctx, i, outs[i].fp)) {
            kd_cli_error("%s: write error", files[i]);
            ok = false;
        }
    }
    for (size_t i = 0; i < n && i < 8; i++) {
        if (!opened[i])
            continue;
        if (ok)
            ok = kd_output_commit(&outs[i]);
        else
            kd_output_abort(&outs[i]);
    }
    return ok;
}

const char *const kd_cli_file_formats[3] = {"markdown", "csv", "json"};

bool kd_cli_parse_threads(const char *s, unsigned *out)
{
    if (strcmp(s, "1") != 0 && strcmp(s, "2") != 0)
        return false;
    *out = (unsigned)(s[0] - '0');
    return true;
}

kd_load_options kd_cli_load_options(unsigned threads, unsigned parallel)
{
    kd_load_options o = {1, 0};
    if (threads) {
        o.threads = threads;
        return o;
    }
    /* a split load only pays when its second thread gets a core of its own */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores >= 2 * (long)parallel)
        o.threads = 2;
    return o;
}

void kd_cli_common_init(kd_cli_common *o)
{
    memset(o, 0, sizeof *o);
    o->format = "text";
    o->analysis.min_share = 1.0;
}

int kd_cli_common_option(const char *cmd, int c, const char *arg, kd_cli_common *o)
{
    bool is_auto;
    kd_triage_options *a = &o->analysis;
    switch (c) {
    case 'p': a->pid_substring = arg; return 1;
    case 's':
        if (!kd_stage_from_name(arg, &a->stage_filter))
            return kd_cli_usage_error(cmd, "--stage must be extend, decode or all, not '%s'", arg), -1;
        a->has_stage_filter = true;
        return 1;
    case 'l':
        if (!kd_cli_parse_size(arg, &a->limit))
            return kd_cli_usage_error(cmd, "--limit takes a whole number >= 0, not '%s'", arg), -1;
        return 1;
    case 'S':
        if (!kd_cli_parse_share(arg, &a->min_share))
            return kd_cli_usage_error(cmd, "--min-share takes a percentage >= 0, not '%s'", arg), -1;
        return 1;
    case 'w':
        if (!kd_framework_parse(arg, &a->framework, &is_auto))
            return kd_cli_usage_error(cmd, "--framework must be auto, sglang, vllm, trtllm or tokenspeed, not '%s'",
                                      arg), -1;
        a->framework_set = !is_auto;
        return 1;
    case 'f': o->format = arg; return 1;
    case 'M': o->files[0] = arg; return 1;
    case 'C': o->files[1] = arg; return 1;
    case 'j': o->files[2] = arg; return 1;
    case 'K': a->no_kernel_map = true; return 1;
    case 'q': o->quiet = true; return 1;
    case 'T':
        if (!kd_cli_parse_threads(arg, &o->threads))
            return kd_cli_usage_error(cmd, "--threads must be 1 or 2, not '%s'", arg), -1;
        return 1;
    default: return 0;
    }
}
