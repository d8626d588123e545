/* trace.c — the loaded trace's storage helpers (trace.h). */
#include "config.h"

#include "kerndiff/trace.h"

#include <stdlib.h>

bool kd_vec_grow_(void **v, size_t *cap, size_t n, size_t elem)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    if (ncap < n + 1)
        ncap = n + 1;
    void *p = realloc(*v, ncap * elem);
    if (!p)
        return false;
    *v = p;
    *cap = ncap;
    return true;
}

const char *kd_skip_reason_name(kd_skip_reason r)
{
    static const char *const names[KD_SKIP_COUNT] = {
        "bad_ts", "bad_dur", "zero_extent", "missing_name",
        "bad_type", "bad_args", "int_range", "not_object",
    };
    return r < KD_SKIP_COUNT ? names[r] : "unknown";
}

void kd_trace_free(kd_trace *t)
{
    if (!t)
        return;
    free(t->path);
    kd_interner_free(t->strings);
    KD_VEC_FREE(t->kernels);
    KD_VEC_FREE(t->cpu_ops);
    KD_VEC_FREE(t->frames);
    KD_VEC_FREE(t->launches);
    KD_VEC_FREE(t->annotations);
    KD_VEC_FREE(t->thread_names);
    KD_VEC_FREE(t->corr_ext);
    KD_VEC_FREE(t->profiler_steps);
    KD_VEC_FREE(t->seen_cats);
    KD_VEC_FREE(t->seen_cat_counts);
    KD_VEC_FREE(t->seen_pids);
    free(t);
}
