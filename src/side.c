/* side.c — resolve, load and bundle one side (side.h). */
#include "config.h"

#include "kerndiff/side.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/load.h"

kd_status kd_side_load(const char *path, const char *pid_substring, const kd_load_options *load,
                       kd_side *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_status st = kd_discover_traces(path, &out->files, err);
    if (st)
        return st;
    out->traces = calloc(out->files.n, sizeof *out->traces);
    kd_stage *stages = calloc(out->files.n, sizeof *stages);
    if (!out->traces || !stages) {
        free(stages);
        kd_side_free(out);
        return kd_fail(err, KD_ENOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < out->files.n; i++) {
        out->traces[i] = kd_load_trace_opts(out->files.files[i].path, load, err);
        if (!out->traces[i]) {
            free(stages);
            kd_side_free(out);
            return err ? err->status : KD_EINPUT;
        }
        out->n++;
        stages[i] = out->files.files[i].stage;
    }
    st = kd_build_bundle_map(out->traces, stages, out->n, pid_substring, &out->bundles, err);
    free(stages);
    if (st)
        kd_side_free(out);
    return st;
}

kd_status kd_side_load_mem(const void *data, size_t len, const char *label, const char *pid_substring,
                           kd_side *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->files.files = calloc(1, sizeof *out->files.files);
    out->traces = calloc(1, sizeof *out->traces);
    if (out->files.files) {
        out->files.n = 1;
        out->files.files[0].path = strdup(label);
    }
    out->files.how = strdup("memory");
    if (!out->traces || !out->files.files || !out->files.files[0].path || !out->files.how) {
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
    kd_stage stage = KD_STAGE_ALL;
    kd_status st = kd_build_bundle_map(out->traces, &stage, 1, pid_substring, &out->bundles, err);
    if (st)
        kd_side_free(out);
    return st;
}

void kd_side_free(kd_side *s)
{
    kd_bundle_map_free(&s->bundles);
    for (size_t i = 0; i < s->n; i++)
        kd_trace_free(s->traces[i]);
    free(s->traces);
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

