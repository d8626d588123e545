/* trace.c — the loaded trace's storage helpers (trace.h). */
#include "config.h"

#include "kerndiff/trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const kd_rules *kd_trace_rules(const kd_trace *t) { return t->rules ? t->rules : kd_rules_reference(); }

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
    KD_VEC_FREE(t->devices);
    free(t);
}

/* ---- kd_trace_same ------------------------------------------------------ */

static bool differ(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool differ(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool kernel_eq(const kd_kernel_rec *x, const kd_kernel_rec *y)
{
    return x->name == y->name && x->cat == y->cat && x->pid == y->pid && x->tid == y->tid &&
           x->stream == y->stream && x->flags == y->flags && x->ts == y->ts && x->dur == y->dur &&
           x->ext == y->ext && x->corr == y->corr;
}

static bool cpu_op_eq(const kd_cpu_op_rec *x, const kd_cpu_op_rec *y)
{
    return x->name == y->name && x->pid == y->pid && x->tid == y->tid && x->ts == y->ts &&
           x->dur == y->dur && x->ext == y->ext && x->corr == y->corr;
}

static bool frame_eq(const kd_frame_rec *x, const kd_frame_rec *y)
{
    return x->name == y->name && x->pid == y->pid && x->tid == y->tid && x->ts == y->ts &&
           x->dur == y->dur && x->complete == y->complete;
}

static bool launch_eq(const kd_launch_rec *x, const kd_launch_rec *y)
{
    return x->name == y->name && x->pid == y->pid && x->tid == y->tid && x->flags == y->flags &&
           x->ts == y->ts && x->dur == y->dur && x->corr == y->corr && x->complete == y->complete;
}

static bool annotation_eq(const kd_annotation_rec *x, const kd_annotation_rec *y)
{
    return x->ts == y->ts && x->end == y->end && x->ext == y->ext && x->stage == y->stage &&
           x->is_gpu == y->is_gpu;
}

static bool thread_name_eq(const kd_thread_name_rec *x, const kd_thread_name_rec *y)
{
    return x->pid == y->pid && x->tid == y->tid && x->name == y->name;
}

static bool corr_ext_eq(const kd_corr_ext_rec *x, const kd_corr_ext_rec *y)
{
    return x->corr == y->corr && x->ext == y->ext;
}

static bool step_eq(const kd_step_rec *x, const kd_step_rec *y)
{
    return x->step == y->step && x->is_gpu == y->is_gpu && x->ts == y->ts && x->end == y->end;
}

static bool device_eq(const kd_device_rec *x, const kd_device_rec *y)
{
    return x->id == y->id && x->name == y->name;
}

static bool sid_eq(const kd_sid *x, const kd_sid *y) { return *x == *y; }
static bool count_eq(const uint64_t *x, const uint64_t *y) { return *x == *y; }

#define SAME_VEC(vec, eq)                                                          \
    do {                                                                           \
        if (a->vec.n != b->vec.n)                                                  \
            return differ(why, why_len, #vec ": %zu and %zu", a->vec.n, b->vec.n); \
        for (size_t i = 0; i < a->vec.n; i++)                                      \
            if (!eq(&a->vec.v[i], &b->vec.v[i]))                                   \
                return differ(why, why_len, #vec "[%zu] differs", i);             \
    } while (0)

bool kd_trace_same(const kd_trace *a, const kd_trace *b, char *why, size_t why_len)
{
    if (a->shape != b->shape || a->has_trace_events != b->has_trace_events || a->gzip != b->gzip)
        return differ(why, why_len, "shape differs");
    if (a->events_read != b->events_read || a->complete_events != b->complete_events)
        return differ(why, why_len, "events read: %llu and %llu, complete: %llu and %llu",
                      (unsigned long long)a->events_read, (unsigned long long)b->events_read,
                      (unsigned long long)a->complete_events, (unsigned long long)b->complete_events);
    for (int r = 0; r < KD_SKIP_COUNT; r++)
        if (a->skipped[r] != b->skipped[r])
            return differ(why, why_len, "skipped %s differs", kd_skip_reason_name((kd_skip_reason)r));
    if (a->bytes_in != b->bytes_in || a->bytes_json != b->bytes_json)
        return differ(why, why_len, "byte counts differ");
    if (a->has_rank != b->has_rank || (a->has_rank && a->rank != b->rank))
        return differ(why, why_len, "distributedInfo.rank differs");
    if (a->has_world_size != b->has_world_size ||
        (a->has_world_size && a->world_size != b->world_size))
        return differ(why, why_len, "distributedInfo.world_size differs");
    uint32_t n = kd_interner_count(a->strings);
    if (n != kd_interner_count(b->strings))
        return differ(why, why_len, "strings: %u and %u", n, kd_interner_count(b->strings));
    for (kd_sid id = 1; id <= n; id++) {
        size_t len = kd_str_len(a->strings, id);
        if (len != kd_str_len(b->strings, id) ||
            memcmp(kd_str(a->strings, id), kd_str(b->strings, id), len) != 0)
            return differ(why, why_len, "string %u differs", id);
    }
    SAME_VEC(kernels, kernel_eq);
    SAME_VEC(cpu_ops, cpu_op_eq);
    SAME_VEC(frames, frame_eq);
    SAME_VEC(launches, launch_eq);
    SAME_VEC(annotations, annotation_eq);
    SAME_VEC(thread_names, thread_name_eq);
    SAME_VEC(corr_ext, corr_ext_eq);
    SAME_VEC(profiler_steps, step_eq);
    SAME_VEC(seen_cats, sid_eq);
    SAME_VEC(seen_cat_counts, count_eq);
    SAME_VEC(seen_pids, sid_eq);
    SAME_VEC(devices, device_eq);
    return true;
}
