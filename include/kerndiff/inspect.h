/* inspect.h — what is in a trace: files, shape, events kept and skipped,
 * pids and the chosen one, streams, stages, kernel categories, step markers
 * (`kerndiff inspect`). Computed from a loaded side (side.h). */
#ifndef KERNDIFF_INSPECT_H
#define KERNDIFF_INSPECT_H

#include <stdio.h>

#include "kerndiff/side.h"

typedef struct {
    char *pid;
    double kernel_us;
    uint64_t kernels;
} kd_inspect_pid;

typedef struct {
    char *stream;
    uint64_t kernels;
    double busy_us; /* union of the stream's kernel intervals */
} kd_inspect_stream;

typedef struct {
    kd_stage stage;
    uint64_t kernels;
    const char *how; /* "path", "annotation" or "none" */
    const char *trace;
} kd_inspect_stage;

typedef struct {
    const kd_side *side;
    const char *pid_substring;
    char *chosen_pid;      /* NULL when no kernel */
    const char *chosen_why;
    kd_inspect_pid *pids;
    size_t n_pids;
    kd_inspect_stream *streams;
    size_t n_streams;
    kd_inspect_stage stages[KD_STAGE_COUNT];
    size_t n_stages;
    const kd_rules *rules; /* the traces' (their categories) */
    uint64_t cat_launches[KD_CAT_MAX];
    double cat_total_us[KD_CAT_MAX];
    uint64_t events_read, complete_events, kernel_records, cpu_ops, frames, launches,
        annotations, thread_names, steps_cpu, steps_gpu, skipped[KD_SKIP_COUNT];
    uint64_t steps; /* distinct ProfilerStep numbers (CPU, else GPU annotations) */
    uint64_t legacy_cpu_ops; /* X events of category Operator (2021 exports' cpu_op) */
    kd_kernel_accounting acc; /* where every kernel of the chosen pid went */
} kd_inspect;

kd_status kd_inspect_build(const kd_side *side, const char *pid_substring, kd_inspect *out,
                           kd_error *err);
void kd_inspect_free(kd_inspect *r);
bool kd_inspect_write_text(const kd_inspect *r, FILE *out);
bool kd_inspect_write_json(const kd_inspect *r, FILE *out);

#endif
