/* stage.c — stage annotations and resolve_kernel_stage (reference §2.1–2.2). */
#include "config.h"

#include "kerndiff/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* reference §2.1: a new annotation replaces the current one for its External
 * id if it is GPU and the current is not, or same flag and strictly longer. */
static bool replaces(const kd_annotation_rec *cur, const kd_annotation_rec *nw)
{
    if (nw->is_gpu && !cur->is_gpu)
        return true;
    return nw->is_gpu == cur->is_gpu && (nw->end - nw->ts) > (cur->end - cur->ts);
}

typedef struct {
    double ts, end;
    size_t order; /* stable sort tie-break */
    kd_stage stage;
} window_item;

static int cmp_window_item(const void *pa, const void *pb)
{
    const window_item *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Sort stably by (ts, end), then merge same-stage neighbours within 1e-3. */
static bool build_window_list(const kd_trace *t, bool gpu, kd_window_list *out)
{
    size_t n = 0;
    for (size_t i = 0; i < t->annotations.n; i++)
        n += t->annotations.v[i].is_gpu == gpu;
    memset(out, 0, sizeof *out);
    if (!n)
        return true;
    window_item *items = malloc(n * sizeof *items);
    out->w = malloc(n * sizeof *out->w);
    out->max_end = malloc(n * sizeof *out->max_end);
    if (!items || !out->w || !out->max_end) {
        free(items);
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->annotations.n; i++) {
        const kd_annotation_rec *a = &t->annotations.v[i];
        if (a->is_gpu == gpu) {
            items[k] = (window_item){a->ts, a->end, k, (kd_stage)a->stage};
            k++;
        }
    }
    qsort(items, n, sizeof *items, cmp_window_item);
    for (size_t i = 0; i < n; i++) {
        kd_stage_window *last = out->n ? &out->w[out->n - 1] : NULL;
        if (last && last->stage == items[i].stage && items[i].ts <= last->end + 1e-3) {
            last->end = fmax(last->end, items[i].end);
        } else {
            out->w[out->n++] = (kd_stage_window){items[i].ts, items[i].end, items[i].stage};
        }
    }
    free(items);
    for (size_t i = 0; i < out->n; i++)
        out->max_end[i] = i ? fmax(out->max_end[i - 1], out->w[i].end) : out->w[i].end;
    return true;
}

kd_status kd_stage_annotations_build(const kd_trace *t, kd_stage_annotations *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->anns = t->annotations.v;
    kd_i64map_init(&out->by_ext);
    for (size_t i = 0; i < t->annotations.n; i++) {
        const kd_annotation_rec *a = &t->annotations.v[i];
        if (a->ext == KD_NOID)
            continue;
        int64_t cur;
        if (kd_i64map_get(&out->by_ext, a->ext, &cur) && !replaces(&t->annotations.v[cur], a))
            continue;
        if (!kd_i64map_put(&out->by_ext, a->ext, (int64_t)i))
            goto oom;
    }
    if (!build_window_list(t, true, &out->gpu) || !build_window_list(t, false, &out->cpu))
        goto oom;
    return KD_OK;
oom:
    kd_stage_annotations_free(out);
    return kd_fail(err, KD_ENOMEM, "%s: out of memory building stage annotations", t->path);
}

static void free_window_list(kd_window_list *l)
{
    free(l->w);
    free(l->max_end);
    memset(l, 0, sizeof *l);
}

void kd_stage_annotations_free(kd_stage_annotations *a)
{
    kd_i64map_free(&a->by_ext);
    free_window_list(&a->gpu);
    free_window_list(&a->cpu);
}

/* first index i with key(i) > x for the ts column (bisect_right) */
static size_t count_ts_le(const kd_window_list *l, double x)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->w[mid].ts <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* first index i < lim with max_end[i] + 1e-3 >= x (max_end is monotonic) */
static size_t first_max_end_reaching(const kd_window_list *l, size_t lim, double x)
{
    size_t lo = 0, hi = lim;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double e = l->max_end[mid] + 1e-3;
        if (e >= x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The first i < lim whose gap probe - end is minimal. probe - max_end[i] only
 * falls as i grows, and the computed gap (not the end) decides: two ends a few
 * ulps apart can give the same rounded gap, and then the earlier window wins. */
static size_t first_minimal_gap_before(const kd_window_list *l, size_t lim, double probe)
{
    double best = probe - l->max_end[lim - 1];
    size_t lo = 0, hi = lim - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (probe - l->max_end[mid] <= best)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

typedef struct {
    bool hit, found;
    double gap;
    kd_stage stage;
} window_probe;

/* The reference's scan (reference §2.2 step 3), answered in O(log n): the first
 * window with ts <= probe <= end + 1e-3 is a hit; otherwise the first window
 * of minimal gap min(|probe-ts|, |probe-end|). Before the probe (ts <= probe,
 * no hit) the gap is probe - end, minimal at the first maximal end; after it,
 * ts - probe, minimal at the first window past the probe. */
static window_probe probe_windows(const kd_window_list *l, double probe)
{
    window_probe r = {false, false, INFINITY, KD_STAGE_ALL};
    if (!l->n)
        return r;
    size_t before = count_ts_le(l, probe);
    if (before) {
        size_t i = first_max_end_reaching(l, before, probe);
        if (i < before) {
            r.hit = r.found = true;
            r.gap = 0.0;
            r.stage = l->w[i].stage;
            return r;
        }
        size_t j = first_minimal_gap_before(l, before, probe);
        const kd_stage_window *w = &l->w[j];
        r.found = true;
        r.gap = fmin(fabs(probe - w->ts), fabs(probe - w->end));
        r.stage = w->stage;
    }
    if (before < l->n) {
        const kd_stage_window *w = &l->w[before];
        double gap = fmin(fabs(probe - w->ts), fabs(probe - w->end));
        if (!r.found || gap < r.gap) {
            r.found = true;
            r.gap = gap;
            r.stage = w->stage;
        }
    }
    return r;
}

kd_stage kd_resolve_kernel_stage(const kd_stage_annotations *a, double kernel_ts, int64_t ext)
{
    int64_t idx;
    if (ext != KD_NOID && kd_i64map_get(&a->by_ext, ext, &idx))
        return (kd_stage)a->anns[idx].stage;
    double probe = kernel_ts + 1e-3;
    window_probe g = probe_windows(&a->gpu, probe);
    if (g.hit)
        return g.stage;
    window_probe c = probe_windows(&a->cpu, probe);
    if (c.hit)
        return c.stage;
    /* reference §2.2 step 4: the later list wins only with a strictly smaller gap */
    window_probe best = g;
    if (c.found && (!g.found || c.gap < g.gap))
        best = c;
    if (best.found && best.gap <= 20000.0)
        return best.stage;
    return KD_STAGE_ALL;
}
