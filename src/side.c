/* side.c — resolve, load and bundle one side (side.h). */
#include "config.h"

#include "kerndiff/side.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kerndiff/load.h"

bool kd_trace_set_path_staged(const kd_trace_set *s)
{
    if (!s->n)
        return false;
    for (size_t i = 0; i < s->n; i++)
        if (s->files[i].stage == KD_STAGE_ALL)
            return false;
    return true;
}

const char *kd_trace_device(const kd_trace *t, const char *pid)
{
    char *end;
    long long id = strtoll(pid, &end, 10);
    bool numeric = *pid && !*end;
    const char *shared = NULL;
    for (size_t i = 0; i < t->devices.n; i++) {
        const char *name = t->devices.v[i].name ? kd_str(t->strings, t->devices.v[i].name) : "";
        if (numeric && t->devices.v[i].id == id)
            return name;
        shared = !shared || strcmp(shared, name) == 0 ? name : "";
    }
    return shared ? shared : "";
}

/* Whether two regular files of the same size hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    static const size_t chunk = 1 << 16;
    char *ba = malloc(chunk), *bb = malloc(chunk);
    same = same && ba && bb;
    while (same) {
        size_t na = fread(ba, 1, chunk, fa), nb = fread(bb, 1, chunk, fb);
        same = na == nb && memcmp(ba, bb, na) == 0;
        if (na < chunk)
            break;
    }
    same = same && !ferror(fa) && !ferror(fb);
    free(ba);
    free(bb);
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

const char *kd_trace_sets_identical(const kd_trace_set *a, const kd_trace_set *b)
{
    if (a->n != b->n || !a->n)
        return NULL;
    bool same_file = true;
    for (size_t i = 0; i < a->n; i++) {
        struct stat sa, sb;
        if (strcmp(a->files[i].path, "-") == 0 || strcmp(b->files[i].path, "-") == 0 ||
            stat(a->files[i].path, &sa) != 0 || stat(b->files[i].path, &sb) != 0 ||
            !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size)
            return NULL;
        same_file = same_file && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    if (same_file)
        return "the same file";
    for (size_t i = 0; i < a->n; i++)
        if (!same_bytes(a->files[i].path, b->files[i].path))
            return NULL;
    return "the same bytes";
}

/* The stage each file's path contributes under the basis (side.h). */
static void choose_path_stages(kd_side *s, kd_stage_basis basis)
{
    for (size_t i = 0; i < s->n; i++) {
        kd_stage path = s->files.files[i].stage;
        if (basis == KD_STAGES_CONTENT)
            path = s->n > 1 && s->traces[i]->annotations.n == 0 ? path : KD_STAGE_ALL;
        s->stages[i] = path;
    }
}

static void describe_stages(kd_side *s)
{
    s->stages_how = NULL;
    for (size_t i = 0; i < s->n; i++) {
        s->stages_from[i] = s->stages[i] != KD_STAGE_ALL ? "path"
                            : s->bundles.annotated[i]    ? "annotations"
                                                         : "none";
        s->stages_how = !s->stages_how || strcmp(s->stages_how, s->stages_from[i]) == 0
                            ? s->stages_from[i]
                            : "mixed";
    }
    if (!s->stages_how)
        s->stages_how = "none";
}

kd_status kd_side_open(const char *path, const kd_side_options *opt, kd_side *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_status st = kd_discover_traces(path, &out->files, err);
    if (st)
        return st;
    out->traces = calloc(out->files.n, sizeof *out->traces);
    out->stages = calloc(out->files.n ? out->files.n : 1, sizeof *out->stages);
    out->stages_from = calloc(out->files.n ? out->files.n : 1, sizeof *out->stages_from);
    if (!out->traces || !out->stages || !out->stages_from) {
        kd_side_free(out);
        return kd_fail(err, KD_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < out->files.n; i++) {
        out->traces[i] = kd_load_trace_opts(out->files.files[i].path, opt->load, err);
        if (!out->traces[i]) {
            kd_side_free(out);
            return err ? err->status : KD_EINPUT;
        }
        out->n++;
    }
    choose_path_stages(out, opt->basis);
    kd_bundle_options bo = {opt->pid_substring, opt->whole_trace};
    st = kd_build_bundle_map_opts(out->traces, out->stages, out->n, &bo, &out->bundles, err);
    if (st) {
        kd_side_free(out);
        return st;
    }
    describe_stages(out);
    return KD_OK;
}

kd_status kd_side_load(const char *path, const char *pid_substring, const kd_load_options *load,
                       kd_side *out, kd_error *err)
{
    kd_side_options o = {pid_substring, load, KD_STAGES_REFERENCE, false};
    return kd_side_open(path, &o, out, err);
}

kd_status kd_side_load_mem(const void *data, size_t len, const char *label, const char *pid_substring,
                           kd_side *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->files.files = calloc(1, sizeof *out->files.files);
    out->traces = calloc(1, sizeof *out->traces);
    out->stages = calloc(1, sizeof *out->stages);
    out->stages_from = calloc(1, sizeof *out->stages_from);
    if (out->files.files) {
        out->files.n = 1;
        out->files.files[0].path = strdup(label);
    }
    out->files.how = strdup("memory");
    if (!out->traces || !out->files.files || !out->files.files[0].path || !out->files.how ||
        !out->stages || !out->stages_from) {
        kd_side_free(out);
        return kd_fail(err, KD_ENOMEM, "%s: out of memory", label);
    }
    out->files.files[0].stage = KD_STAGE_ALL;
    out->traces[0] = kd_load_trace_mem(data, len, label, err);
    if (!out->traces[0]) {
        kd_side_free(out);
        return err ? err->status : KD_EINPUT;
    }
    out->n = 1;
    out->stages[0] = KD_STAGE_ALL;
    kd_status st = kd_build_bundle_map(out->traces, out->stages, 1, pid_substring, &out->bundles, err);
    if (st)
        kd_side_free(out);
    else
        describe_stages(out);
    return st;
}

void kd_side_free(kd_side *s)
{
    kd_bundle_map_free(&s->bundles);
    for (size_t i = 0; i < s->n; i++)
        kd_trace_free(s->traces[i]);
    free(s->traces);
    free(s->stages);
    free(s->stages_from);
    kd_trace_set_free(&s->files);
    memset(s, 0, sizeof *s);
}


static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* distinct ProfilerStep#N numbers of one kind (CPU or GPU annotations) */
uint64_t kd_side_profiler_steps(const kd_side *side, bool gpu)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; i < side->n; i++)
        n += side->traces[i]->profiler_steps.n;
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = 0; i < side->n; i++)
        for (size_t j = 0; j < side->traces[i]->profiler_steps.n; j++)
            if (side->traces[i]->profiler_steps.v[j].is_gpu == gpu)
                v[k++] = side->traces[i]->profiler_steps.v[j].step;
    qsort(v, k, sizeof *v, cmp_i64);
    uint64_t d = 0;
    for (size_t i = 0; i < k; i++)
        d += i == 0 || v[i] != v[i - 1];
    free(v);
    return d;
}

