/* kernelsites.h — kernel-site attribution (kernel-sites.md, reference §2.3):
 * every KH kernel of a trace is tied to the Python frame that launched it
 * (cpu_op by External id, else the CUDA launch by correlation), aggregated
 * per (canonical kernel, location) into stage payloads. Two products:
 *   - the mapping kernel map {"stages": {stage: payload}, "global": payload}
 *     (build_mapping_kernel_map, §8), read by the overlap module through
 *     kd_kernel_map_lookup (§9);
 *   - the formal stage payloads {stage: payload} (§8), merged into the
 *     overlap module's source map (kd_source_map_merge_payload).
 * Built from the loader's records in one pass per trace: per-thread frame
 * timelines answered by a sweep over sorted probe times, nearest-event
 * matches by bisection. */
#ifndef KERNDIFF_KERNELSITES_H
#define KERNDIFF_KERNELSITES_H

#include <stdbool.h>
#include <stddef.h>

#include "kerndiff/error.h"
#include "kerndiff/framework.h"
#include "kerndiff/intern.h"
#include "kerndiff/jsonw.h"
#include "kerndiff/payload.h"
#include "kerndiff/text.h"
#include "kerndiff/trace.h"

typedef struct kd_kernel_map_lookup_state kd_kernel_map_lookup_state; /* private */

typedef struct {
    kd_interner *strings;       /* every payload string; owned unless strings_borrowed */
    bool strings_borrowed;      /* kd_kernel_sites_build_both: the kernel map's */
    kd_stage_payload stages[KD_STAGE_COUNT]; /* by kd_stage */
    bool has[KD_STAGE_COUNT];
    kd_stage order[KD_STAGE_COUNT];          /* first-merge (kernel map) / first-key (formal) order */
    size_t n_order;
    kd_stage_payload global;    /* mapping kernel map only */
    bool is_kernel_map;         /* true: {"stages":..., "global":...}; false: {stage: payload} */
    kd_kernel_map_lookup_state *lookup; /* private: relaxed indices and memo, built lazily */
} kd_kernel_map;

/* build_mapping_kernel_map (kernel-sites.md §8). traces in discover order;
 * path_stages[i] = kd_parse_stage(path of trace i). Traces are only read
 * (the parameter type matches the bundle builder's). */
kd_status kd_kernel_map_build(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                              kd_framework fw, kd_kernel_map *out, kd_error *err);
/* The formal stage payloads (§8): no sampling; a later trace's stage
 * overwrites the value and keeps the first key position. */
kd_status kd_formal_payloads_build(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                                   kd_kernel_map *out, kd_error *err);
/* Both of the above for a side that is its own mapping side (the default,
 * divergence D3: the same traces give the kernel map and the formal
 * payloads): each trace's records, indices and kernel sites are computed
 * once for the two (a kernel's site depends only on the kernel). The maps
 * equal the two separate builds' (same JSON); they share one interner,
 * owned by kmap: payloads is not used once kmap is freed (either may be
 * freed first). */
kd_status kd_kernel_sites_build_both(kd_trace *const *traces, const kd_stage *path_stages,
                                     size_t n, kd_framework fw, kd_kernel_map *kmap,
                                     kd_kernel_map *payloads, kd_error *err);
void kd_kernel_map_free(kd_kernel_map *m);

/* kd_kmap_lookup_fn for a mapping kernel map (ctx = kd_kernel_map *):
 * lookup_kernel_map_entry (§9): relaxed_kernel_entry_lookup in each alias
 * stage (extend -> extend, prefill, all; decode -> decode, all; X -> X, all),
 * then in global. The relaxed indices are built on the first lookup (the
 * payloads must not change afterwards) and answers are memoized per (stage,
 * name), so it mutates the map's private state: not thread-safe. NULL when
 * nothing matches (or on out-of-memory). */
const kd_kernel_entry *kd_kernel_map_lookup(void *kernel_map, kd_stage stage, const char *name,
                                            const kd_interner **strings);

/* pick_stage_value on the formal payloads (reference §3.5): the exact stage,
 * else all, else the only one, else NULL. */
const kd_stage_payload *kd_formal_payload_for(const kd_kernel_map *m, kd_stage stage);

/* The conformance layout: kernel map = {"stages": {stage: payload}, "global":
 * payload}; formal = {stage: payload}; payload = {"kernels": {name: {"category",
 * "sites": [{location, display_location, launches, total_us,
 * share_pct_within_kernel, top_cpu_op, stack}], "best_location"}}}. */
void kd_kernel_map_write_json(kd_json *j, const kd_kernel_map *m);
void kd_stage_payload_write_json(kd_json *j, const kd_stage_payload *p);

/* ---- rules of kernel-sites.md §2/§4/§5/§7, exposed for tests ---------- */

/* low_signal(loc) */
bool kd_ks_is_low_signal(const char *loc);
/* is_preferred(loc): strip(loc) starts with a PROJ prefix */
bool kd_ks_is_preferred(const char *loc);
/* source_location_priority (slp) */
int kd_ks_source_location_priority(const char *loc);
/* frame_priority (fp) of a raw python_function name */
int kd_ks_frame_priority(const char *name);
/* extract_preferred_stack_location: false on out-of-memory; *out is the
 * malloc'd location or NULL for none. stack may be NULL. */
bool kd_ks_stack_location(const char *stack, char **out);
/* site_display_location: location NULL/"" reads as "unresolved"; stack may be
 * NULL. malloc'd; NULL on out-of-memory. */
char *kd_ks_site_display(const char *location, const char *stack);

/* match_timed_event (§4) over n items sorted by ts: the index, or -1. */
long kd_ks_match_timed(const double *ts, const double *dur, size_t n, double probe);

/* One active frame, as choose/stack see it (§5). */
typedef struct {
    const char *norm; /* normalize_source_location(name) */
    int prio;         /* frame_priority(name) */
    double ts, dur;
} kd_ks_frame;
/* choose(act): index of the first frame with the maximal (prio, ts, -dur); -1 if n = 0 */
long kd_ks_choose_frame(const kd_ks_frame *const *act, size_t n);
/* stack(act): the last 4 norms of prio > 0 (else the last frame's), joined
 * with " -> ". malloc'd; "" when n = 0; NULL on out-of-memory. */
char *kd_ks_frame_stack(const kd_ks_frame *const *act, size_t n);

/* sample position i (0..15) of a group of n > 16: round(i(n-1)/15) */
size_t kd_ks_sample_position(size_t i, size_t n);

/* The payload site sort (§7 step 4): stable, descending by
 * (slp(site_disp(site)), rounded total_us, launches). false on OOM. */
bool kd_ks_sort_sites(kd_site *sites, size_t n, const kd_interner *strings);

/* Python round(x, 3) */
double kd_ks_round3(double x);

#endif
