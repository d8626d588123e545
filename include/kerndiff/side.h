/* side.h — one side of an analysis: a trace path resolved (discover.h),
 * every file loaded once (load.h) and its stage bundles built (extract.h). */
#ifndef KERNDIFF_SIDE_H
#define KERNDIFF_SIDE_H

#include "kerndiff/discover.h"
#include "kerndiff/error.h"
#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "kerndiff/trace.h"

typedef struct {
    kd_trace_set files;
    kd_trace **traces; /* one per file, in files order */
    size_t n;
    kd_bundle_map bundles;
} kd_side;

/* Resolves, loads and bundles path. pid_substring and load (one thread)
 * may be NULL. */
kd_status kd_side_load(const char *path, const char *pid_substring, const kd_load_options *load,
                       kd_side *out, kd_error *err);
/* The same for one trace held in memory (plain or gzip JSON), named label
 * in messages; for tests and the fuzz targets. */
kd_status kd_side_load_mem(const void *data, size_t len, const char *label, const char *pid_substring,
                           kd_side *out, kd_error *err);
void kd_side_free(kd_side *s);

/* Distinct ProfilerStep#N numbers over the side's traces: of the CPU
 * annotations when there are any, else of the GPU ones (0 = no markers). */
uint64_t kd_side_profiler_steps(const kd_side *s, bool gpu);

#endif
