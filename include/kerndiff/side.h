/* side.h — one side of an analysis: a trace path resolved (discover.h),
 * every file loaded once (load.h) and its stage bundles built (extract.h). */
#ifndef KERNDIFF_SIDE_H
#define KERNDIFF_SIDE_H

#include "kerndiff/discover.h"
#include "kerndiff/error.h"
#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "kerndiff/trace.h"

/* How a side's stages are decided. */
typedef enum {
    /* reference §3.4: the stage a file's path names (parse_stage), else the
     * stage annotations in the trace; what triage does */
    KD_STAGES_REFERENCE = 0,
    /* from the trace's content only, so that the same bytes give the same
     * stages under any name; a file's path stage is used only for a file of
     * a several-file side (prefill/ decode/) with no stage annotation at all.
     * What a diff uses unless both sides' paths name every file's stage. */
    KD_STAGES_CONTENT
} kd_stage_basis;

typedef struct {
    const char *pid_substring;   /* may be NULL */
    const kd_load_options *load; /* may be NULL: one thread */
    kd_stage_basis basis;
    bool whole_trace;            /* kd_bundle_options.whole_trace */
} kd_side_options;

/* Where one file's stages came from: "path", "annotations" or "none" (no
 * stage annotation: the whole file is stage all). */
typedef struct {
    kd_trace_set files;
    kd_trace **traces; /* one per file, in files order */
    size_t n;
    kd_stage *stages;         /* per file: the path stage the bundles used (KD_STAGE_ALL: none) */
    const char **stages_from; /* per file: "path", "annotations" or "none" (static strings) */
    const char *stages_how;   /* the side's: one of those, or "mixed" */
    kd_bundle_map bundles;
} kd_side;

/* Resolves, loads and bundles path. */
kd_status kd_side_open(const char *path, const kd_side_options *opt, kd_side *out, kd_error *err);
/* kd_side_open with the reference's stages. pid_substring and load (one
 * thread) may be NULL. */
kd_status kd_side_load(const char *path, const char *pid_substring, const kd_load_options *load,
                       kd_side *out, kd_error *err);
/* Whether every file of the set has a path that names its stage: the
 * precondition for deciding a diff's stages from the paths. */
bool kd_trace_set_path_staged(const kd_trace_set *s);
/* "the same file" when the two sets name the same files (device and inode),
 * "the same bytes" when their files have the same content, else NULL
 * (standard input is never judged the same). */
const char *kd_trace_sets_identical(const kd_trace_set *a, const kd_trace_set *b);
/* The same for one trace held in memory (plain or gzip JSON), named label
 * in messages; for tests and the fuzz targets. */
kd_status kd_side_load_mem(const void *data, size_t len, const char *label, const char *pid_substring,
                           kd_side *out, kd_error *err);
void kd_side_free(kd_side *s);

/* The name of the device a trace's kernels of `pid` ran on: the
 * deviceProperties entry whose id is the pid (Kineto's GPU pid is the
 * device index), else the one name every entry shares, else "". */
const char *kd_trace_device(const kd_trace *t, const char *pid);

/* Distinct ProfilerStep#N numbers over the side's traces: of the CPU
 * annotations when there are any, else of the GPU ones (0 = no markers). */
uint64_t kd_side_profiler_steps(const kd_side *s, bool gpu);

#endif
