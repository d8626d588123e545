/* cli.c — error printing, standard descriptors and option parsing (cli.h). */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
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

bool kd_stdout_was_closed = false;

void kd_cli_guard_stdio(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        if (fd == STDOUT_FILENO)
            kd_stdout_was_closed = true;
        int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
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

const char *const kd_cli_file_formats[3] = {"markdown", "csv", "json"};

bool kd_cli_parse_max_string(const char *s, uint64_t *out)
{
    if (strcmp(s, "none") == 0) {
        *out = UINT64_MAX;
        return true;
    }
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    if (errno || *end || v == 0 || v > (UINT64_MAX >> shift) || (v << shift) == UINT64_MAX)
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

bool kd_cli_parse_threads(const char *s, unsigned *out)
{
    if (strcmp(s, "1") != 0 && strcmp(s, "2") != 0)
        return false;
    *out = (unsigned)(s[0] - '0');
    return true;
}

kd_load_options kd_cli_load_options(unsigned threads, unsigned parallel, uint64_t max_string)
{
    kd_load_options o;
    memset(&o, 0, sizeof o); /* zero: every other field at its default */
    o.threads = 1;
    o.max_string = max_string;
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
    o->rules = "default";
}

/* --markdown, --csv, --json: each names one file, once */
static int file_option(const char *cmd, const char *name, const char **slot, const char *arg)
{
    if (*slot)
        return kd_cli_usage_error(cmd, "--%s given twice ('%s', then '%s')", name, *slot, arg), -1;
    *slot = arg;
    return 1;
}

int kd_cli_common_option(const char *cmd, int c, const char *arg, kd_cli_common *o)
{
    bool is_auto;
    kd_triage_options *a = &o->analysis;
    switch (c) {
    case 'p': a->pid_substring = arg; return 1;
    case 's':
        if (!kd_stage_from_name(arg, &a->stage_filter))
            return kd_cli_usage_error(cmd, "--stage must be extend (or prefill), decode or all, not '%s'",
                                      arg), -1;
        a->has_stage_filter = true;
        return 1;
    case 'l':
        if (!kd_cli_parse_size(arg, &a->limit) || a->limit > KD_CLI_LIMIT_MAX)
            return kd_cli_usage_error(cmd, "--limit takes a whole number from 0 (no limit) to %d, not '%s'",
                                      KD_CLI_LIMIT_MAX, arg), -1;
        return 1;
    case 'S':
        if (!kd_cli_parse_share(arg, &a->min_share) || a->min_share > 100.0)
            return kd_cli_usage_error(cmd, "--min-share takes a percentage from 0 to 100, not '%s'", arg), -1;
        return 1;
    case 'w':
        if (!kd_framework_parse(arg, &a->framework, &is_auto))
            return kd_cli_usage_error(cmd, "--framework must be auto, sglang, vllm, trtllm or tokenspeed, not '%s'",
                                      arg), -1;
        a->framework_set = !is_auto;
        return 1;
    case 'f': o->format = arg; return 1;
    case 'M': return file_option(cmd, "markdown", &o->files[0], arg);
    case 'C': return file_option(cmd, "csv", &o->files[1], arg);
    case 'j': return file_option(cmd, "json", &o->files[2], arg);
    case 'K': a->no_kernel_map = true; return 1;
    case 'q': o->quiet = true; return 1;
    case 'T':
        if (!kd_cli_parse_threads(arg, &o->threads))
            return kd_cli_usage_error(cmd, "--threads must be 1 or 2, not '%s'", arg), -1;
        return 1;
    case 'r': o->rules = arg; return 1;
    case 'X':
        if (!kd_cli_parse_max_string(arg, &o->max_string))
            return kd_cli_usage_error(cmd, "--max-string takes a byte count >= 1 (K, M, G allowed) or none, "
                                           "not '%s'", arg), -1;
        return 1;
    default: return 0;
    }
}

bool kd_cli_rules(const char *spec, const kd_rules **rules, kd_rules_owned **owned)
{
    kd_error err;
    kd_error_clear(&err);
    if (kd_rules_resolve(spec, rules, owned, &err) != KD_OK) {
        kd_cli_error("%s", err.msg);
        return false;
    }
    return true;
}

bool kd_cli_plan_outputs(const char *cmd, const kd_cli_common *com, const char *const inputs[],
                         size_t n_inputs, kd_outputs *outs)
{
    kd_outputs_init(outs, cmd);
    static const char *const options[3] = {"--markdown", "--csv", "--json"};
    bool ok = com->quiet || kd_outputs_add(outs, "--format", "-", com->format);
    for (int i = 0; ok && i < 3; i++)
        if (com->files[i])
            ok = kd_outputs_add(outs, options[i], com->files[i], kd_cli_file_formats[i]);
    return ok && kd_outputs_prepare(outs, inputs, n_inputs);
}

bool kd_cli_one_stdin(const char *cmd, const char *const inputs[], size_t n)
{
    int seen = 0;
    for (size_t i = 0; i < n; i++)
        seen += inputs[i] && strcmp(inputs[i], "-") == 0;
    if (seen <= 1)
        return true;
    kd_cli_usage_error(cmd, "'-' (standard input) can be read only once");
    return false;
}

/* ---- suggestions for what was not understood -------------------------------- */

/* Levenshtein distance, two rows; names here are short. */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b);
    if (na > 64 || nb > 64)
        return (size_t)-1;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (nb + 1) * sizeof prev[0]);
    }
    return prev[nb];
}

const char *kd_cli_nearest(const char *word, size_t len, const char *const names[], size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, len, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    size_t bar = len / 3 > 2 ? len / 3 : 2;
    return best_d <= bar ? best : NULL;
}

int kd_cli_bad_option(const char *cmd, const struct option *opts, int c, const char *arg)
{
    if (c == ':')
        return kd_cli_usage_error(cmd, "option '%s' needs a value", arg);
    if (strncmp(arg, "--", 2) != 0)
        return kd_cli_usage_error(cmd, "unknown option '%s'", arg);
    const char *word = arg + 2;
    size_t len = strcspn(word, "=");
    const char *names[64];
    size_t n = 0, n_prefix = 0;
    const char *prefixed[2] = {NULL, NULL};
    for (const struct option *op = opts; op->name && n < 64; op++) {
        names[n++] = op->name;
        if (len && strncmp(op->name, word, len) == 0 && n_prefix++ < 2)
            prefixed[n_prefix - 1] = op->name;
    }
    if (n_prefix >= 2)
        return kd_cli_usage_error(cmd, "option '%.*s' is ambiguous (--%s, --%s%s)", (int)len + 2, arg,
                                  prefixed[0], prefixed[1], n_prefix > 2 ? ", ..." : "");
    const char *near = kd_cli_nearest(word, len, names, n);
    if (near)
        return kd_cli_usage_error(cmd, "unknown option '%.*s'; did you mean '--%s'?", (int)len + 2, arg, near);
    return kd_cli_usage_error(cmd, "unknown option '%.*s'", (int)len + 2, arg);
}
