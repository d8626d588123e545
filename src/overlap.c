/* overlap.c */
#include "config.h"
#include "kerndiff/overlap.h"

kd_status kd_analyze_overlap(kd_kernel_event *events, size_t n, kd_overlap_stats *stats,
                             kd_error *err)
{
    (void)events; (void)n; (void)err;
    stats->total_busy_us = stats->total_overlap_us = stats->max_concurrent_streams = 0.0;
    return KD_OK; /* placeholder until the sweep lands */
}
