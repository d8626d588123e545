/* overlap.h — the overlap sweep of one stage's formal events (reference §4
 * analyze_overlap): each kernel's time split into exclusive (no other stream
 * active) and hidden (another stream active), hidden-by-compute, and the
 * dominant overlapping kernel per slice; busy / overlap / max concurrency of
 * the stage. Same numbers as the reference (segment-by-segment float sums in
 * time order), at O(n log n + n * streams) instead of O(points * active^2). */
#ifndef KERNDIFF_OVERLAP_H
#define KERNDIFF_OVERLAP_H

#include <stddef.h>

#include "kerndiff/error.h"
#include "kerndiff/extract.h"
#include "kerndiff/intern.h"

typedef struct {
    double total_busy_us;    /* union of all kernel intervals */
    double total_overlap_us; /* time with >= 2 distinct streams active */
    double max_concurrent_streams;
} kd_overlap_stats;

/* Fills hidden_us, exclusive_us, hidden_by_compute_us and overlap_with of
 * every event (they must start at zero) and returns the stage stats. */
kd_status kd_analyze_overlap(kd_kernel_event *events, size_t n, kd_overlap_stats *stats,
                             kd_error *err);

/* The same, given the interner of the events' canonical names: a dominant
 * whose canonical name is "" is not added to overlap_with (reference §4: an
 * empty name is falsy). Without it (kd_analyze_overlap, or names NULL) only
 * sid 0 counts as "", and an interned "" would be counted. */
kd_status kd_analyze_overlap_in(kd_kernel_event *events, size_t n, const kd_interner *names,
                                kd_overlap_stats *stats, kd_error *err);

#endif
