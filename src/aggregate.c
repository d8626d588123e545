/* aggregate.c */
#include "config.h"
#include "kerndiff/aggregate.h"

#include <stdlib.h>
#include <string.h>

double kd_aggregate_hidden_ratio(const kd_aggregate *a) { return a->total_us ? a->hidden_us / a->total_us : 0.0; }
double kd_aggregate_exclusive_ratio(const kd_aggregate *a) { return a->total_us ? a->exclusive_us / a->total_us : 0.0; }
kd_status kd_aggregate_events(const kd_kernel_event *events, size_t n, kd_aggregate_list *out, kd_error *err)
{
    (void)events; (void)n; (void)err;
    memset(out, 0, sizeof *out);
    return KD_OK; /* placeholder */
}
void kd_aggregate_list_free(kd_aggregate_list *l) { free(l->v); memset(l, 0, sizeof *l); }
size_t kd_top_overlap_opportunities(const kd_aggregate_list *l, size_t out[5]) { (void)l; (void)out; return 0; }
size_t kd_top_hidden_low_roi(const kd_aggregate_list *l, size_t out[5]) { (void)l; (void)out; return 0; }
