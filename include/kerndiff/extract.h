/* extract.h — one side's kernel events and stage bundles (reference §4
 * "Extract", §1 select_heaviest_pid, §3.4 TraceBundle construction). */
#ifndef KERNDIFF_EXTRACT_H
#define KERNDIFF_EXTRACT_H

#include <stddef.h>

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
    kd_category category;
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
} kd_bundle;

/* A side's bundles by stage (the first trace to claim a stage wins). */
typedef struct {
    kd_bundle by_stage[KD_STAGE_COUNT];
    bool has[KD_STAGE_COUNT];
} kd_bundle_map;

/* build_overlap_stage_bundle_map over traces already in reference order
 * (stage order of parse_stage(path), then basename). path_stages[i] is
 * parse_stage of trace i's path. */
kd_status kd_build_bundle_map(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                              const char *pid_substring, kd_bundle_map *out, kd_error *err);
void kd_bundle_map_free(kd_bundle_map *m);

/* render_stages: stages present, `all` dropped if others exist, in stage order.
 * Returns the count written to out (at most 3). */
size_t kd_render_stages(const kd_bundle_map *m, kd_stage out[KD_STAGE_COUNT]);
/* pick_stage_value (reference §3.5): exact, else all, else the only one, else NULL. */
kd_bundle *kd_pick_stage_bundle(kd_bundle_map *m, kd_stage stage);

#endif
