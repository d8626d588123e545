/* trace.h — what the loader keeps of one trace file (product.md §1 "Load").
 *
 * One streaming pass fills these arrays; each keeps trace order, which the
 * reference's tie-breaks depend on. Strings are interned (intern.h): pid, tid
 * and stream are Python str() of the JSON values (reference §0), names and
 * categories are str() of the raw values, not normalized. Nothing here holds
 * an event the later pipeline does not read, so memory grows with kept
 * events, not with file size. */
#ifndef KERNDIFF_TRACE_H
#define KERNDIFF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerndiff/classify.h"
#include "kerndiff/intern.h"

/* coerce_optional_int gave None */
#define KD_NOID INT64_MIN

/* kd_kernel_rec.flags */
#define KD_KF_OH_KERNEL 0x01u /* passes OH is_kernel_event (reference §4) */
#define KD_KF_KH_KERNEL 0x02u /* passes KH is_gpu_kernel_event (kernel-sites.md §3) */
/* Records the reference never sees (neither bit above is set), kept so that
 * every kernel of a pid is accounted for (divergence D7): */
#define KD_KF_ZERO_DUR 0x04u /* would pass is_kernel_event but dur is 0 or absent:
                                the diff counts it as a launch with no time */
#define KD_KF_SKIPPED 0x08u  /* a kernel-like event skipped as malformed; the
                                reason is KD_KF_SKIP_REASON(flags) */
#define KD_KF_SKIP_SHIFT 8
#define KD_KF_SKIP_REASON(flags) ((kd_skip_reason)(((flags) >> KD_KF_SKIP_SHIFT) & 0xffu))

/* A kernel-like complete event: passes is_kernel_event or is_gpu_kernel_event
 * (or one of the accounting-only records: KD_KF_ZERO_DUR, KD_KF_SKIPPED). */
typedef struct {
    kd_sid name;   /* str(e["name"]) */
    kd_sid cat;    /* str(e["cat"]), "" when absent */
    kd_sid pid;    /* str(e.get("pid")) */
    kd_sid tid;    /* str(e.get("tid")) */
    kd_sid stream; /* str(args.stream or args.cuda_stream) when truthy, else 0 */
    uint32_t flags;
    double ts, dur;
    int64_t ext;  /* coerce(args["External id"]), KD_NOID if None (no corr fallback) */
    int64_t corr; /* coerce(args["correlation"]) */
} kd_kernel_rec;

/* A complete event whose cat is exactly "cpu_op". */
typedef struct {
    kd_sid name, pid, tid;
    double ts, dur;
    int64_t ext, corr; /* raw coerced values, no corr fallback */
} kd_cpu_op_rec;

/* An X event whose cat is exactly "python_function" (any dur: KH keeps them all;
 * OH uses only complete ones, see `complete`). */
typedef struct {
    kd_sid name, pid, tid;
    double ts, dur;
    bool complete; /* dur > 0 (is_complete_duration_event) */
} kd_frame_rec;

/* kd_launch_rec.flags */
#define KD_LF_KH 0x01u /* KH: lowered cat cuda_runtime/cuda_driver and "launch" in name */
#define KD_LF_OH 0x02u /* OH is_cuda_launch_event, case-insensitive (divergence D1) */

/* A CUDA/HIP launch with a coercible correlation. */
typedef struct {
    kd_sid name, pid, tid;
    uint32_t flags;
    double ts, dur;
    int64_t corr;
    bool complete;
} kd_launch_rec;

/* A complete user_annotation / gpu_user_annotation event that names a stage
 * (reference §2.1). stage: 0 extend, 1 decode (kd_stage values). */
typedef struct {
    double ts, end;
    int64_t ext;
    uint8_t stage;
    bool is_gpu;
} kd_annotation_rec;

/* ph "M" thread_name metadata with a non-empty args.name (later wins). */
typedef struct {
    kd_sid pid, tid, name;
} kd_thread_name_rec;

/* An event carrying both correlation and External id (any ph; later wins). */
typedef struct {
    int64_t corr, ext;
} kd_corr_ext_rec;

/* A ProfilerStep#N annotation (user_annotation or gpu_user_annotation, or
 * the Operator event of a 2021 export) and its span. */
typedef struct {
    int64_t step;
    bool is_gpu;
    double ts, end;
} kd_step_rec;

/* Why an event was skipped as malformed (counted, not fatal; product.md §7). */
typedef enum {
    KD_SKIP_BAD_TS = 0,     /* ts missing, null, non-numeric or non-finite */
    KD_SKIP_BAD_DUR,        /* dur non-numeric or non-finite */
    KD_SKIP_ZERO_EXTENT,    /* ts + dur == ts in floating point (divergence D4) */
    KD_SKIP_MISSING_NAME,   /* kernel event without "name" */
    KD_SKIP_BAD_TYPE,       /* name/cat/pid/tid/ph of a container type */
    KD_SKIP_BAD_ARGS,       /* truthy args that is not an object */
    KD_SKIP_INT_RANGE,      /* an id beyond int64 */
    KD_SKIP_NOT_OBJECT,     /* a traceEvents element that is not an object */
    KD_SKIP_COUNT
} kd_skip_reason;

/* "bad_ts", "bad_dur", ... (JSON keys of inspect's "skipped"). */
const char *kd_skip_reason_name(kd_skip_reason r);

#define KD_VEC(T) struct { T *v; size_t n, cap; }

/* Top-level metadata of a Kineto export (absent: has_* false / n 0). */
typedef struct {
    int64_t id;     /* deviceProperties[i].id (-1 when absent or not an integer) */
    kd_sid name;    /* deviceProperties[i].name, interned; 0 when absent */
} kd_device_rec;

typedef enum {
    KD_SHAPE_OBJECT = 0, /* {"traceEvents": [...]} */
    KD_SHAPE_LIST        /* bare top-level list (divergence D2) */
} kd_trace_shape;

typedef struct kd_trace {
    char *path; /* as given (resolved file path) */
    kd_interner *strings;
    kd_trace_shape shape;
    bool has_trace_events; /* object shape: a traceEvents list was found */

    /* Kineto's top-level metadata, wherever it is in the object (before or
     * after traceEvents; a repeated key: the last one wins, as Python's
     * json). Not events: a later traceEvents key leaves it alone. */
    bool has_rank, has_world_size;
    int64_t rank, world_size;          /* distributedInfo.rank / .world_size (integers only) */
    KD_VEC(kd_device_rec) devices;     /* deviceProperties, in order */

    KD_VEC(kd_kernel_rec) kernels;
    KD_VEC(kd_cpu_op_rec) cpu_ops;
    KD_VEC(kd_frame_rec) frames;
    KD_VEC(kd_launch_rec) launches;
    KD_VEC(kd_annotation_rec) annotations;
    KD_VEC(kd_thread_name_rec) thread_names;
    KD_VEC(kd_corr_ext_rec) corr_ext;
    KD_VEC(kd_step_rec) profiler_steps; /* trace order */

    /* Counts for inspect. */
    uint64_t events_read;    /* elements of traceEvents */
    uint64_t complete_events; /* ph X */
    uint64_t skipped[KD_SKIP_COUNT];
    /* Distinct cats of X events with their counts, and distinct pids of X
     * events: first-seen order (for "no GPU kernels: saw pids ..., cats ..."). */
    KD_VEC(kd_sid) seen_cats;
    KD_VEC(uint64_t) seen_cat_counts;
    KD_VEC(kd_sid) seen_pids;
    uint64_t bytes_in;   /* file bytes */
    uint64_t bytes_json; /* decompressed JSON bytes */
    bool gzip;
    const char *compression; /* "plain", "gzip", "zstd" or "xz" (static) */
    bool split; /* parsed as two halves at once (load.h kd_load_options) */
    /* the classification the trace was loaded with (load.h
     * kd_load_options.rules); every later step classifies its names with
     * it. NULL: the reference's (kd_trace_rules). */
    const kd_rules *rules;
} kd_trace;

/* t->rules, or the reference's when the trace was loaded without any. */
const kd_rules *kd_trace_rules(const kd_trace *t);

void kd_trace_free(kd_trace *t);

/* Whether two loads of the same bytes agree: the same strings under the same
 * ids, the same records in the same order, the same counters (path and
 * `split` aside). false names the first difference in why (tests and the
 * fuzz target check a split load against a serial one with it). */
bool kd_trace_same(const kd_trace *a, const kd_trace *b, char *why, size_t why_len);

/* Grow a KD_VEC to hold one more element; false on OOM. */
bool kd_vec_grow_(void **v, size_t *cap, size_t n, size_t elem);
#define KD_VEC_PUSH(vec, val)                                                      \
    (((vec).n < (vec).cap ||                                                       \
      kd_vec_grow_((void **)&(vec).v, &(vec).cap, (vec).n, sizeof(*(vec).v)))      \
         ? ((vec).v[(vec).n++] = (val), true)                                      \
         : false)
#define KD_VEC_FREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

#endif
