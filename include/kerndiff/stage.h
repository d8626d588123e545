/* stage.h — stage annotations and a kernel's stage (reference §2.1–2.2). */
#ifndef KERNDIFF_STAGE_H
#define KERNDIFF_STAGE_H

#include "kerndiff/error.h"
#include "kerndiff/hashmap.h"
#include "kerndiff/text.h"
#include "kerndiff/trace.h"

/* A merged annotation window. */
typedef struct {
    double ts, end;
    kd_stage stage;
} kd_stage_window;

/* One sorted, merged window list with the prefix maximum of its ends, so a
 * probe is answered by binary search instead of a scan of every window. */
typedef struct {
    kd_stage_window *w;
    double *max_end; /* max_end[i] = max(w[0..i].end) */
    size_t n;
} kd_window_list;

typedef struct {
    const kd_annotation_rec *anns; /* borrowed from the trace */
    kd_i64map by_ext;              /* External id -> index in anns */
    kd_window_list gpu, cpu;
} kd_stage_annotations;

kd_status kd_stage_annotations_build(const kd_trace *t, kd_stage_annotations *out, kd_error *err);
void kd_stage_annotations_free(kd_stage_annotations *a);

/* resolve_kernel_stage(kernel_ts, external_id) (reference §2.2);
 * ext = KD_NOID for None. */
kd_stage kd_resolve_kernel_stage(const kd_stage_annotations *a, double kernel_ts, int64_t ext);

#endif
