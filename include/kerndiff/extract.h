/* extract.h — one side's kernel events and stage bundles (reference §4
 * "Extract", §1 select_heaviest_pid, §3.4 TraceBundle construction). */
#ifndef KERNDIFF_EXTRACT_H
#define KERNDIFF_EXTRACT_H

#include <stddef.h>

#include "kerndiff/accounting.h"
#include "kerndiff/counter.h"
#include "kerndiff/error.h"
#include "kerndiff/text.h"
#include "kerndiff/trace.h"

/* A formal kernel event (OH KernelEvent). The overlap fields are filled by
 * the sweep (a later pipeline step). */
typedef struct {
    uint32_t idx;   /* position among the kept kernels of its trace */
    kd_sid name;    /* raw name */
    kd_sid canonical;
    kd_sid pid, tid, stream;
    kd_category category; /* in the trace's rules (kd_trace.rules) */
    kd_category kind;     /* its behaviour: one of the built-in five */
    kd_stage stage; /* annotation-resolved (reference §2.2) */
    double ts, dur, end;
    int64_t ext;  /* External id, else via correlation; KD_NOID for None */
    int64_t corr;
    double hidden_us, exclusive_us, hidden_by_compute_us;
    kd_counter overlap_with; /* canonical name (trace interner) -> hidden us */
} kd_kernel_event;

typedef struct {
    kd_kernel_event *v;
    size_t n;
    kd_sid pid; /* chosen pid; 0 when the trace has no kernel */
    /* what the reference does not see of the pid (divergence D7): kernels
     * without a duration (stage resolved, no sweep fields), and malformed
     * kernel events by reason; kernels of the other pids */
    kd_kernel_event *zero;
    size_t n_zero;
    uint64_t skipped[KD_SKIP_COUNT];
    uint64_t other_pids;
} kd_kernel_list;

/* select_heaviest_pid over the trace's kernel records that have all bits of
 * `flags_mask` (KD_KF_OH_KERNEL or KD_KF_KH_KERNEL). pid_substring may be NULL;
 * preferred is a NULL-terminated list (may be NULL). Returns 0 for None. */
kd_sid kd_select_heaviest_pid(const kd_trace *t, uint32_t flags_mask, const char *pid_substring,
                              const char *const *preferred);

/* extract_kernel_events(trace, pid_substring): OH kernels of the chosen pid,
 * in trace order. May intern canonical names into t->strings. */
kd_status kd_extract_kernel_events(kd_trace *t, const char *pid_substring, kd_kernel_list *out,
                                   kd_error *err);
void kd_kernel_list_free(kd_kernel_list *l);

/* One stage bundle: events of one stage of one trace (reference §3.4). */
typedef struct {
    kd_trace *trace;        /* borrowed */
    kd_kernel_event *events; /* owned */
    size_t n;
    kd_sid pid;
    kd_kernel_event *zero;   /* owned: the stage's kernels without a duration */
    size_t n_zero;
} kd_bundle;

/* A side's bundles by stage (the first trace to claim a stage wins). */
typedef struct {
    kd_bundle by_stage[KD_STAGE_COUNT];
    bool has[KD_STAGE_COUNT];
    /* by_stage[KD_STAGE_ALL] is the whole-trace stage, shown beside the
     * others (kd_bundle_options.whole_trace) */
    bool whole;
    kd_kernel_accounting acc;
    bool *annotated; /* per trace: some kernel of its pid is in an annotation's stage */
    size_t n_traces;
} kd_bundle_map;

typedef struct {
    const char *pid_substring; /* may be NULL */
    /* also a stage `all` holding every kernel of the pid when the side is
     * one trace and its kernels sit in other stages (the diff: divergence D7) */
    bool whole_trace;
} kd_bundle_options;

/* build_overlap_stage_bundle_map over traces already in reference order
 * (stage order of parse_stage(path), then basename). path_stages[i] is the
 * stage trace i's path gives (parse_stage), KD_STAGE_ALL for none. */
kd_status kd_build_bundle_map(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                              const char *pid_substring, kd_bundle_map *out, kd_error *err);
kd_status kd_build_bundle_map_opts(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                                   const kd_bundle_options *opt, kd_bundle_map *out, kd_error *err);
void kd_bundle_map_free(kd_bundle_map *m);

/* render_stages: stages present, `all` dropped if others exist (unless it
 * is the whole-trace stage), in stage order. Returns the count written to
 * out (at most 3). */
size_t kd_render_stages(const kd_bundle_map *m, kd_stage out[KD_STAGE_COUNT]);
/* pick_stage_value (reference §3.5): exact, else all, else the only one, else NULL. */
kd_bundle *kd_pick_stage_bundle(kd_bundle_map *m, kd_stage stage);

#endif
