/* aggregate.h — per-kernel aggregates of one stage (reference §4 aggregate_events)
 * and the two candidate lists (top_overlap_opportunities, top_hidden_low_roi). */
#ifndef KERNDIFF_AGGREGATE_H
#define KERNDIFF_AGGREGATE_H

#include <stddef.h>

#include "kerndiff/counter.h"
#include "kerndiff/error.h"
#include "kerndiff/extract.h"

typedef struct {
    kd_sid name; /* canonical name */
    kd_category category;
    kd_category kind; /* the category's behaviour (classify.h) */
    uint64_t count;
    double total_us, hidden_us, exclusive_us, hidden_by_compute_us;
    kd_counter overlap_with;
    int64_t representative_idx; /* -1 for None */
    double representative_score;
} kd_aggregate;

/* hidden_us / total_us, 0 when total is 0 */
double kd_aggregate_hidden_ratio(const kd_aggregate *a);
double kd_aggregate_exclusive_ratio(const kd_aggregate *a);

typedef struct {
    kd_aggregate *v; /* first-insertion order of (canonical, category) */
    size_t n;
} kd_aggregate_list;

kd_status kd_aggregate_events(const kd_kernel_event *events, size_t n, kd_aggregate_list *out,
                              kd_error *err);
void kd_aggregate_list_free(kd_aggregate_list *l);

/* Counts kernels without a duration as launches of their (canonical,
 * category) aggregate, appending an aggregate with no time for a kernel
 * that only ever ran for zero time (divergence D7). */
kd_status kd_aggregate_add_launches(kd_aggregate_list *l, const kd_kernel_event *zero, size_t n,
                                    kd_error *err);

/* The candidate lists as indexes into the aggregate list (at most 5 each);
 * return the count written to out[5]. */
size_t kd_top_overlap_opportunities(const kd_aggregate_list *l, size_t out[5]);
size_t kd_top_hidden_low_roi(const kd_aggregate_list *l, size_t out[5]);

#endif
