/* priority.h — the triage action rows of one stage (reference §4 "Neighbours and
 * dependency signal", "Priority and rows"): for the top overlap opportunities
 * and the hidden low-ROI kernels, the Python scope and launch op (relaxed
 * source-map lookup, memoized), the same-stream neighbours of the
 * representative event and their dependency signal, priority,
 * recommendation and suggestion. */
#ifndef KERNDIFF_PRIORITY_H
#define KERNDIFF_PRIORITY_H

#include <stddef.h>

#include "kerndiff/aggregate.h"
#include "kerndiff/error.h"
#include "kerndiff/extract.h"
#include "kerndiff/lookup.h"
#include "kerndiff/sourcemap.h"

/* The reference's render bar: rows below this share are not rendered. */
#define KD_MIN_RENDER_SHARE_PCT 1.0

/* relaxed_source_stats_lookup over one source map, memoized per name. */
typedef struct {
    const kd_source_map *sm;
    kd_relaxed_index ix;
    const char **keys;
    kd_interner *asked; /* query names */
    long *memo;         /* by query id: position + 1, -1 none, 0 not asked */
    size_t memo_cap;
} kd_source_lookup;

bool kd_source_lookup_init(kd_source_lookup *l, const kd_source_map *sm);
void kd_source_lookup_free(kd_source_lookup *l);
/* The stats for a kernel name, or NULL. *kind (may be NULL) gets the match stage. */
const kd_source_stats *kd_source_lookup_find(kd_source_lookup *l, const char *name,
                                             kd_match_kind *kind);

typedef struct {
    const char *priority;       /* "P1".."P5" */
    const char *verdict;        /* "headroom" / "low-roi-hidden" */
    const char *recommendation; /* "try overlap", "try fusion", "check deps", "skip", ... */
    const char *dependency_signal;
    size_t aggregate; /* index in the stage's aggregate list */
    kd_sid kernel;    /* canonical name (formal trace interner) */
    kd_category category;
    double total_us, share_pct, exclusive_ratio, hidden_ratio, mapping_ratio;
    char *python_scope, *launch_op, *prev_neighbor, *next_neighbor, *suggestion;
    int64_t representative_idx;
} kd_action_row;

typedef struct {
    kd_action_row *v;
    size_t n;
} kd_action_rows;

/* build_action_rows; limit > 0 truncates (--limit, applied before the render bar). */
kd_status kd_build_action_rows(const kd_bundle *formal, const kd_aggregate_list *aggs,
                               const size_t *top_overlap, size_t n_top_overlap,
                               const size_t *top_low_roi, size_t n_top_low_roi,
                               kd_source_lookup *sources, double total_busy_us, size_t limit,
                               kd_action_rows *out, kd_error *err);
void kd_action_rows_free(kd_action_rows *r);

/* dependency_risk_label: low / high / unclear, other signals unchanged */
const char *kd_dependency_risk_label(const char *signal);

/* build_priority_and_recommendation (every branch, for tests) */
void kd_priority_and_recommendation(const char *verdict, kd_category category,
                                    const char *signal, double exclusive_ratio,
                                    double hidden_ratio, double share_pct,
                                    const char **priority, const char **recommendation);

/* parse_scope_signature + same_scope_family */
bool kd_same_scope_family(const char *a, const char *b);

#endif
