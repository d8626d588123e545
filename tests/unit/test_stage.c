/* test_stage.c — unit tests of src/stage.c (reference §2.1–2.2).
 *
 * Besides hand-made cases, a randomized test compares kd_resolve_kernel_stage
 * (binary search over prefix maxima) with a naive literal port of the
 * reference: a stable sort and merge of each window list, a linear scan of
 * each list, and the strict-improvement tie rules. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/load.h"
#include "kerndiff/stage.h"
#include "suites.h"

#define E KD_STAGE_EXTEND
#define D KD_STAGE_DECODE
#define A KD_STAGE_ALL

static kd_annotation_rec ann(double ts, double end, kd_stage stage, bool gpu, int64_t ext)
{
    kd_annotation_rec a = {ts, end, ext, (uint8_t)stage, gpu};
    return a;
}

/* A trace holding only the given annotation records (borrowed). */
static kd_trace ann_trace(kd_annotation_rec *v, size_t n)
{
    kd_trace t;
    memset(&t, 0, sizeof t);
    t.path = (char *)"mem";
    t.annotations.v = v;
    t.annotations.n = t.annotations.cap = n;
    return t;
}

static void build(kd_trace *t, kd_stage_annotations *sa)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_stage_annotations_build(t, sa, &err), KD_OK);
}

/* The kernel ts whose probe (ts + 1e-3) is exactly p. */
static double kts_for_probe(double p)
{
    double k = p - 1e-3;
    for (int i = 0; i < 200; i++) {
        double q = k + 1e-3;
        if (q == p)
            return k;
        k = q < p ? nextafter(k, INFINITY) : nextafter(k, -INFINITY);
    }
    ck_abort_msg("no kernel ts with probe %.17g", p);
    return 0;
}

#define RESOLVE(sa, ts) kd_resolve_kernel_stage((sa), (ts), KD_NOID)

/* ---- the naive reference (literal port of §2.1–2.2) ------------------ */

typedef struct {
    double ts, end;
    kd_stage stage;
} nwin;

typedef struct {
    nwin *w;
    size_t n;
} nlist;

typedef struct {
    const kd_annotation_rec *anns;
    int64_t *keys; /* by_external_id, in dict insertion order */
    size_t *idx;
    size_t nkeys;
    nlist gpu, cpu;
} naive_ann;

static bool nwin_less(const nwin *a, const nwin *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->end < b->end);
}

static void naive_list(const kd_annotation_rec *a, size_t n, bool gpu, nlist *out)
{
    nwin *tmp = malloc((n + 1) * sizeof *tmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i].is_gpu == gpu)
            tmp[k++] = (nwin){a[i].ts, a[i].end, (kd_stage)a[i].stage};
    /* insertion sort: stable */
    for (size_t i = 1; i < k; i++) {
        nwin x = tmp[i];
        size_t j = i;
        while (j > 0 && nwin_less(&x, &tmp[j - 1])) {
            tmp[j] = tmp[j - 1];
            j--;
        }
        tmp[j] = x;
    }
    out->w = malloc((k + 1) * sizeof *out->w);
    out->n = 0;
    for (size_t i = 0; i < k; i++) {
        nwin *last = out->n ? &out->w[out->n - 1] : NULL;
        if (last && last->stage == tmp[i].stage && tmp[i].ts <= last->end + 1e-3)
            last->end = tmp[i].end > last->end ? tmp[i].end : last->end; /* max(last.end, ann.end) */
        else
            out->w[out->n++] = tmp[i];
    }
    free(tmp);
}

static void naive_build(const kd_annotation_rec *a, size_t n, naive_ann *out)
{
    out->anns = a;
    out->keys = malloc((n + 1) * sizeof *out->keys);
    out->idx = malloc((n + 1) * sizeof *out->idx);
    out->nkeys = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].ext == KD_NOID)
            continue;
        size_t j = 0;
        while (j < out->nkeys && out->keys[j] != a[i].ext)
            j++;
        if (j == out->nkeys) {
            out->keys[out->nkeys] = a[i].ext;
            out->idx[out->nkeys++] = i;
            continue;
        }
        const kd_annotation_rec *cur = &a[out->idx[j]], *nw = &a[i];
        bool repl = (nw->is_gpu && !cur->is_gpu) ||
                    (nw->is_gpu == cur->is_gpu && (nw->end - nw->ts) > (cur->end - cur->ts));
        if (repl)
            out->idx[j] = i;
    }
    naive_list(a, n, true, &out->gpu);
    naive_list(a, n, false, &out->cpu);
}

static void naive_free(naive_ann *na)
{
    free(na->keys);
    free(na->idx);
    free(na->gpu.w);
    free(na->cpu.w);
}

static kd_stage naive_resolve(const naive_ann *na, double kernel_ts, int64_t ext)
{
    if (ext != KD_NOID)
        for (size_t j = 0; j < na->nkeys; j++)
            if (na->keys[j] == ext)
                return (kd_stage)na->anns[na->idx[j]].stage;
    double probe = kernel_ts + 1e-3;
    bool best_found = false;
    double best_gap = INFINITY;
    kd_stage best_stage = A;
    const nlist *lists[2] = {&na->gpu, &na->cpu};
    for (int l = 0; l < 2; l++) {
        bool found = false;
        double gap = INFINITY;
        kd_stage stage = A;
        for (size_t i = 0; i < lists[l]->n; i++) {
            const nwin *w = &lists[l]->w[i];
            if (w->ts <= probe && probe <= w->end + 1e-3)
                return w->stage;
            double a = fabs(probe - w->ts), b = fabs(probe - w->end);
            double g = b < a ? b : a; /* min(a, b) */
            if (!found || g < gap) {
                found = true;
                gap = g;
                stage = w->stage;
            }
        }
        if (found && (!best_found || gap < best_gap)) {
            best_found = true;
            best_gap = gap;
            best_stage = stage;
        }
    }
    if (best_found && best_gap <= 20000.0)
        return best_stage;
    return A;
}

/* ---- window building -------------------------------------------------- */

static void assert_window(const kd_window_list *l, size_t i, double ts, double end, kd_stage st)
{
    ck_assert_uint_lt(i, l->n);
    ck_assert_msg(l->w[i].ts == ts && l->w[i].end == end && l->w[i].stage == st,
                  "window %zu: got [%.17g, %.17g] %d, want [%.17g, %.17g] %d", i, l->w[i].ts,
                  l->w[i].end, l->w[i].stage, ts, end, st);
}

START_TEST(test_windows_same_stage_merge)
{
    double e1 = 10.0 + 1e-3; /* exactly last.end + 1e-3 */
    kd_annotation_rec v[] = {
        ann(0, 10, D, false, KD_NOID),
        ann(e1, 20, D, false, KD_NOID),                     /* on the tolerance: merges */
        ann(nextafter(20.0 + 1e-3, INFINITY), 30, D, false, KD_NOID), /* just past: new */
        ann(25, 28, D, false, KD_NOID),                     /* contained: end stays 30 */
        ann(30.0005, 31, D, false, KD_NOID),                /* within 1e-3: merges */
    };
    kd_trace t = ann_trace(v, 5);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_uint_eq(sa.gpu.n, 0);
    ck_assert_uint_eq(sa.cpu.n, 2);
    assert_window(&sa.cpu, 0, 0, 20, D);
    assert_window(&sa.cpu, 1, nextafter(20.0 + 1e-3, INFINITY), 31, D);
    ck_assert(sa.cpu.max_end[0] == 20 && sa.cpu.max_end[1] == 31);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_windows_different_stage_no_merge)
{
    kd_annotation_rec v[] = {
        ann(0, 10, D, true, KD_NOID),
        ann(5, 6, E, true, KD_NOID),  /* overlapping, other stage: a window of its own */
        ann(9, 11, D, true, KD_NOID), /* the last window is extend: no merge into [0,10] */
        ann(11, 12, D, true, KD_NOID),
    };
    kd_trace t = ann_trace(v, 4);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_uint_eq(sa.cpu.n, 0);
    ck_assert_uint_eq(sa.gpu.n, 3);
    assert_window(&sa.gpu, 0, 0, 10, D);
    assert_window(&sa.gpu, 1, 5, 6, E);
    assert_window(&sa.gpu, 2, 9, 12, D);
    /* prefix maxima of the ends */
    ck_assert(sa.gpu.max_end[0] == 10 && sa.gpu.max_end[1] == 10 && sa.gpu.max_end[2] == 12);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_windows_sorted_stably)
{
    /* input out of order; equal (ts, end) keep input order; equal ts sort by end */
    kd_annotation_rec v[] = {
        ann(50, 60, E, false, KD_NOID), ann(0, 10, D, false, KD_NOID),
        ann(0, 10, E, false, KD_NOID),  ann(20, 40, E, false, KD_NOID),
        ann(20, 30, D, false, KD_NOID),
    };
    kd_trace t = ann_trace(v, 5);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_uint_eq(sa.cpu.n, 5);
    assert_window(&sa.cpu, 0, 0, 10, D);
    assert_window(&sa.cpu, 1, 0, 10, E);
    assert_window(&sa.cpu, 2, 20, 30, D);
    assert_window(&sa.cpu, 3, 20, 40, E);
    assert_window(&sa.cpu, 4, 50, 60, E);
    kd_stage_annotations_free(&sa);

    /* same records with the two equal ones swapped */
    kd_annotation_rec w[] = {ann(0, 10, E, false, KD_NOID), ann(0, 10, D, false, KD_NOID)};
    t = ann_trace(w, 2);
    build(&t, &sa);
    assert_window(&sa.cpu, 0, 0, 10, E);
    assert_window(&sa.cpu, 1, 0, 10, D);
    /* a probe inside both: the first window in order wins */
    ck_assert_int_eq(RESOLVE(&sa, 5), E);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_windows_gpu_cpu_separate)
{
    kd_annotation_rec v[] = {
        ann(0, 10, D, true, KD_NOID), ann(5, 20, D, false, KD_NOID),
        ann(10, 30, D, true, KD_NOID), ann(100, 110, E, false, KD_NOID),
    };
    kd_trace t = ann_trace(v, 4);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_uint_eq(sa.gpu.n, 1);
    assert_window(&sa.gpu, 0, 0, 30, D);
    ck_assert_uint_eq(sa.cpu.n, 2);
    assert_window(&sa.cpu, 0, 5, 20, D);
    assert_window(&sa.cpu, 1, 100, 110, E);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_windows_empty)
{
    kd_trace t = ann_trace(NULL, 0);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_uint_eq(sa.gpu.n, 0);
    ck_assert_uint_eq(sa.cpu.n, 0);
    ck_assert_int_eq(RESOLVE(&sa, 0), A);
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 0, 5), A);
    kd_stage_annotations_free(&sa);
}
END_TEST

/* ---- by_external_id ----------------------------------------------------- */

static kd_stage ext_stage(kd_annotation_rec *v, size_t n, int64_t ext)
{
    kd_trace t = ann_trace(v, n);
    kd_stage_annotations sa;
    build(&t, &sa);
    /* far from every window: only the External id can give a stage */
    kd_stage s = kd_resolve_kernel_stage(&sa, 1e9, ext);
    kd_stage_annotations_free(&sa);
    return s;
}

START_TEST(test_by_ext_gpu_beats_cpu)
{
    kd_annotation_rec v1[] = {ann(0, 100, E, false, 1), ann(0, 1, D, true, 1)};
    ck_assert_int_eq(ext_stage(v1, 2, 1), D);
    kd_annotation_rec v2[] = {ann(0, 1, D, true, 1), ann(0, 100, E, false, 1)};
    ck_assert_int_eq(ext_stage(v2, 2, 1), D);
    /* a later longer GPU one replaces a GPU one that replaced a CPU one */
    kd_annotation_rec v3[] = {ann(0, 100, E, false, 1), ann(0, 1, D, true, 1),
                              ann(0, 2, E, true, 1), ann(0, 500, D, false, 1)};
    ck_assert_int_eq(ext_stage(v3, 4, 1), E);
}
END_TEST

START_TEST(test_by_ext_longer_wins_equal_keeps_first)
{
    kd_annotation_rec v1[] = {ann(0, 10, E, false, 3), ann(50, 70, D, false, 3)};
    ck_assert_int_eq(ext_stage(v1, 2, 3), D);
    kd_annotation_rec v2[] = {ann(0, 20, E, false, 3), ann(50, 70, D, false, 3)};
    ck_assert_int_eq(ext_stage(v2, 2, 3), E);
    kd_annotation_rec v3[] = {ann(0, 20, E, true, 3), ann(50, 70, D, true, 3),
                              ann(0, 19.5, D, true, 3)};
    ck_assert_int_eq(ext_stage(v3, 3, 3), E);
    kd_annotation_rec v4[] = {ann(0, 20, E, true, 3), ann(0, 20.5, D, true, 3),
                              ann(100, 120.5, E, true, 3)};
    ck_assert_int_eq(ext_stage(v4, 3, 3), D);
    /* lengths are compared as end - ts in floating point */
    kd_annotation_rec v5[] = {ann(0, 10, E, false, 3), ann(1e12, 1e12 + 10, D, false, 3)};
    ck_assert_int_eq(ext_stage(v5, 2, 3), E);
}
END_TEST

START_TEST(test_by_ext_keys)
{
    kd_annotation_rec v[] = {ann(0, 10, E, false, 1), ann(0, 10, D, false, 2),
                             ann(0, 10, D, false, KD_NOID), ann(0, 10, E, true, -5),
                             ann(0, 10, D, true, 0)};
    ck_assert_int_eq(ext_stage(v, 5, 1), E);
    ck_assert_int_eq(ext_stage(v, 5, 2), D);
    ck_assert_int_eq(ext_stage(v, 5, -5), E);
    ck_assert_int_eq(ext_stage(v, 5, 0), D);
    ck_assert_int_eq(ext_stage(v, 5, 3), A);
    ck_assert_int_eq(ext_stage(v, 5, KD_NOID), A);
}
END_TEST

/* ---- resolve ---------------------------------------------------------- */

START_TEST(test_resolve_ext_hit_wins)
{
    kd_annotation_rec v[] = {ann(0, 100, D, true, KD_NOID), ann(5000, 5010, E, false, 9)};
    kd_trace t = ann_trace(v, 2);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 50, 9), E);   /* inside a decode window */
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 50, 8), D);   /* unknown id: windows */
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 50, KD_NOID), D);
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 1e9, 9), E);  /* beyond the 20000 limit */
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_containment_first_in_order)
{
    /* [40,60] d listed first, but [0,100] e sorts first */
    kd_annotation_rec v[] = {ann(40, 60, D, false, KD_NOID), ann(0, 100, E, false, KD_NOID)};
    kd_trace t = ann_trace(v, 2);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 50), E);
    kd_stage_annotations_free(&sa);

    /* equal ts: the shorter one sorts first */
    kd_annotation_rec w[] = {ann(40, 100, E, false, KD_NOID), ann(40, 60, D, false, KD_NOID)};
    t = ann_trace(w, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 50), D);
    ck_assert_int_eq(RESOLVE(&sa, 80), E);
    kd_stage_annotations_free(&sa);

    /* a long early window contains probes past later, shorter ones */
    kd_annotation_rec x[] = {ann(0, 1000, D, false, KD_NOID), ann(10, 20, E, false, KD_NOID),
                             ann(30, 40, E, false, KD_NOID), ann(2000, 2001, E, false, KD_NOID)};
    t = ann_trace(x, 4);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 35), D);
    ck_assert_int_eq(RESOLVE(&sa, 999), D);
    ck_assert_int_eq(RESOLVE(&sa, 1499), D); /* gap 499.001 to 1000 vs 500.999 to 2000 */
    ck_assert_int_eq(RESOLVE(&sa, 1500), E); /* gap 500.001 vs 499.999 */
    ck_assert_int_eq(RESOLVE(&sa, 1600), E);
    ck_assert_int_eq(RESOLVE(&sa, 2000.5), E);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_probe_offset_and_tolerance)
{
    /* probe = ts + 1e-3: a kernel starting just before a GPU window is inside it */
    kd_annotation_rec v[] = {ann(100, 200, D, true, KD_NOID), ann(0, 99.9992, E, false, KD_NOID)};
    kd_trace t = ann_trace(v, 2);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 99.9995), D);
    ck_assert_int_eq(RESOLVE(&sa, 99.998), E); /* probe 99.999: CPU hit */
    kd_stage_annotations_free(&sa);

    /* end tolerance: probe <= end + 1e-3 */
    kd_annotation_rec w[] = {ann(0, 100, D, true, KD_NOID), ann(100.0012, 200, E, false, KD_NOID)};
    t = ann_trace(w, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 99.9995), D);
    ck_assert_int_eq(RESOLVE(&sa, 100.0), D);
    ck_assert_int_eq(RESOLVE(&sa, 100.0005), E);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_gpu_before_cpu)
{
    kd_annotation_rec v[] = {ann(0, 100, D, false, KD_NOID), ann(0, 100, E, true, KD_NOID)};
    kd_trace t = ann_trace(v, 2);
    kd_stage_annotations sa;
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 50), E);
    kd_stage_annotations_free(&sa);

    /* a CPU hit beats a near GPU miss */
    kd_annotation_rec w[] = {ann(0, 49.9, E, true, KD_NOID), ann(40, 60, D, false, KD_NOID)};
    t = ann_trace(w, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, 50), D);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_nearest_ties)
{
    double k20 = kts_for_probe(20.0);
    kd_stage_annotations sa;
    kd_trace t;
    /* one list, gap 10 before and 10 after: the first window wins */
    kd_annotation_rec v1[] = {ann(30, 40, D, true, KD_NOID), ann(0, 10, E, true, KD_NOID)};
    t = ann_trace(v1, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), E);
    kd_stage_annotations_free(&sa);
    kd_annotation_rec v2[] = {ann(0, 10, D, true, KD_NOID), ann(30, 40, E, true, KD_NOID)};
    t = ann_trace(v2, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), D);
    ck_assert_int_eq(RESOLVE(&sa, kts_for_probe(20.5)), E); /* 10.5 vs 9.5 */
    ck_assert_int_eq(RESOLVE(&sa, kts_for_probe(19.5)), D);
    kd_stage_annotations_free(&sa);
    /* two windows before the probe with the same end: the first */
    kd_annotation_rec v3[] = {ann(5, 10, D, true, KD_NOID), ann(0, 10, E, true, KD_NOID)};
    t = ann_trace(v3, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), E);
    kd_stage_annotations_free(&sa);
    /* two windows after the probe with the same ts: the first (shorter) */
    kd_annotation_rec v4[] = {ann(30, 50, E, true, KD_NOID), ann(30, 40, D, true, KD_NOID)};
    t = ann_trace(v4, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), D);
    kd_stage_annotations_free(&sa);
    /* the nearest before the probe is the one with the latest end, not the latest ts */
    kd_annotation_rec v5[] = {ann(0, 15, D, true, KD_NOID), ann(5, 10, E, true, KD_NOID),
                              ann(11, 12, E, true, KD_NOID)};
    t = ann_trace(v5, 3);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), D);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_nearest_across_lists)
{
    double k20 = kts_for_probe(20.0);
    kd_stage_annotations sa;
    kd_trace t;
    /* equal gaps: GPU (the earlier list) wins */
    kd_annotation_rec v1[] = {ann(30, 40, D, false, KD_NOID), ann(0, 10, E, true, KD_NOID)};
    t = ann_trace(v1, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), E);
    kd_stage_annotations_free(&sa);
    kd_annotation_rec v2[] = {ann(0, 10, D, false, KD_NOID), ann(30, 40, E, true, KD_NOID)};
    t = ann_trace(v2, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), E);
    kd_stage_annotations_free(&sa);
    /* CPU strictly nearer */
    kd_annotation_rec v3[] = {ann(29, 40, D, false, KD_NOID), ann(0, 10, E, true, KD_NOID)};
    t = ann_trace(v3, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), D);
    kd_stage_annotations_free(&sa);
    /* GPU strictly nearer */
    kd_annotation_rec v4[] = {ann(0, 10, D, false, KD_NOID), ann(0, 10.5, E, true, KD_NOID)};
    t = ann_trace(v4, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), E);
    kd_stage_annotations_free(&sa);
    /* only CPU windows */
    kd_annotation_rec v5[] = {ann(0, 10, D, false, KD_NOID)};
    t = ann_trace(v5, 1);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k20), D);
    kd_stage_annotations_free(&sa);
}
END_TEST

START_TEST(test_resolve_gap_limit)
{
    double k = kts_for_probe(30000.0);
    kd_stage_annotations sa;
    kd_trace t;
    /* before the probe: gap exactly 20000.0 */
    kd_annotation_rec v1[] = {ann(5000, 10000, D, true, KD_NOID)};
    t = ann_trace(v1, 1);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k), D);
    ck_assert_int_eq(RESOLVE(&sa, kts_for_probe(nextafter(30000.0, INFINITY))), A);
    kd_stage_annotations_free(&sa);
    kd_annotation_rec v2[] = {ann(5000, 10000.0 - 1e-9, D, true, KD_NOID)};
    t = ann_trace(v2, 1);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k), A);
    kd_stage_annotations_free(&sa);
    /* after the probe, in the CPU list */
    kd_annotation_rec v3[] = {ann(50000, 50010, E, false, KD_NOID)};
    t = ann_trace(v3, 1);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k), E);
    kd_stage_annotations_free(&sa);
    kd_annotation_rec v4[] = {ann(nextafter(50000.0, INFINITY), 50010, E, false, KD_NOID)};
    t = ann_trace(v4, 1);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k), A);
    kd_stage_annotations_free(&sa);
    /* a GPU window beyond the limit does not hide a CPU one within it */
    kd_annotation_rec v5[] = {ann(0, 1, D, true, KD_NOID), ann(50000, 50010, E, false, KD_NOID)};
    t = ann_trace(v5, 2);
    build(&t, &sa);
    ck_assert_int_eq(RESOLVE(&sa, k), E);
    ck_assert_int_eq(RESOLVE(&sa, 1e7), A);
    ck_assert_int_eq(RESOLVE(&sa, -1e7), A);
    kd_stage_annotations_free(&sa);
}
END_TEST

/* Two windows before the probe whose ends differ by less than the rounding of
 * probe - end: the computed gaps are equal, so the reference's scan keeps the
 * first window (the one with the smaller end), not the one with the largest
 * end. */
START_TEST(test_resolve_nearest_rounded_gap_tie)
{
    kd_annotation_rec v[] = {ann(0, 1.5, D, true, KD_NOID),
                             ann(1, nextafter(1.5, INFINITY), E, true, KD_NOID)};
    double kts = 15000.0, probe = kts + 1e-3;
    ck_assert(probe - v[0].end == probe - v[1].end); /* the premise: a rounded tie */
    kd_trace t = ann_trace(v, 2);
    kd_stage_annotations sa;
    build(&t, &sa);
    naive_ann na;
    naive_build(v, 2, &na);
    ck_assert_int_eq(naive_resolve(&na, kts, KD_NOID), D);
    ck_assert_int_eq(RESOLVE(&sa, kts), D);
    naive_free(&na);
    kd_stage_annotations_free(&sa);
}
END_TEST

/* ---- stage names through the loader --------------------------------------- */

static const char names_json[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"generation_1_step\",\"ts\":0,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"Decode\",\"ts\":100,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"GENERATION_0\",\"ts\":200,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"prefill_batch\",\"ts\":300,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"generation_0 decode\",\"ts\":400,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"forward\",\"ts\":500,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"generation_2\",\"ts\":600,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"decode\",\"ts\":700,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation_x\",\"name\":\"decode\",\"ts\":800,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\" User_Annotation \",\"name\":\"decode\",\"ts\":900,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"decode\",\"ts\":1000,\"dur\":0},"
    "{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"decode\",\"ts\":1100,\"dur\":5},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"de code pre fill\",\"ts\":1200,\"dur\":5},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"  prefill  \",\"ts\":1300,"
    "\"dur\":2.5,\"args\":{\"External id\":77}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"Generation_10\",\"ts\":1400,\"dur\":1,"
    "\"args\":{\"External id\":\"78\"}}"
    "]}";

START_TEST(test_stage_names)
{
    kd_error err;
    kd_trace *t = kd_load_trace_mem(names_json, sizeof names_json - 1, "names", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    struct {
        double ts, end;
        kd_stage stage;
        bool gpu;
        int64_t ext;
    } want[] = {
        {0, 10, D, false, KD_NOID},    {100, 110, D, true, KD_NOID}, {200, 210, E, false, KD_NOID},
        {300, 310, E, false, KD_NOID}, {400, 410, D, false, KD_NOID}, {900, 910, D, false, KD_NOID},
        {1300, 1302.5, E, true, 77},   {1400, 1401, D, false, 78},
    };
    size_t nw = sizeof want / sizeof *want;
    ck_assert_uint_eq(t->annotations.n, nw);
    for (size_t i = 0; i < nw; i++) {
        const kd_annotation_rec *a = &t->annotations.v[i];
        ck_assert_msg(a->ts == want[i].ts && a->end == want[i].end && a->stage == want[i].stage &&
                          a->is_gpu == want[i].gpu && a->ext == want[i].ext,
                      "annotation %zu: ts %g end %g stage %d gpu %d ext %lld", i, a->ts, a->end,
                      a->stage, a->is_gpu, (long long)a->ext);
    }
    kd_stage_annotations sa;
    build(t, &sa);
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 1e9, 77), E);
    ck_assert_int_eq(kd_resolve_kernel_stage(&sa, 1e9, 78), D);
    ck_assert_int_eq(RESOLVE(&sa, 105), D);  /* GPU window */
    ck_assert_int_eq(RESOLVE(&sa, 205), E);  /* CPU extend */
    ck_assert_int_eq(RESOLVE(&sa, 505), D);  /* "forward" is no window: nearest is 410 vs 900 */
    ck_assert_int_eq(RESOLVE(&sa, 1301), E);
    kd_stage_annotations_free(&sa);
    kd_trace_free(t);
}
END_TEST

/* ---- randomized: implementation == naive reference --------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint32_t rndn(uint32_t n) { return (uint32_t)(rnd() % n); }

/* A time value for the given mode. */
static double rnd_time(int mode)
{
    switch (mode) {
    case 0: /* small integer grid: many equal timestamps */
        return (double)rndn(40);
    case 1: /* large Kineto-like base */
        return 1.7e12 + (double)rndn(60) * 0.5;
    case 2: /* fractional, near zero, negative too */
        return ((double)rndn(2000) - 500.0) / 64.0;
    case 3: /* wide spread around the 20000 limit */
        return (double)rndn(8) * 10000.0 + (double)rndn(3) * 0.0005;
    default: /* mixed */
        return (double)rndn(100) + (double)rndn(1000) * 1e-4;
    }
}

static double rnd_dur(int mode)
{
    switch (rndn(6)) {
    case 0: return 1e-3;
    case 1: return 0.5e-3;
    case 2: return (double)(1 + rndn(5));
    case 3: return mode == 3 ? (double)(1 + rndn(3)) * 5000.0 : (double)(1 + rndn(30));
    case 4: return (double)(1 + rndn(1000)) * 1e-4;
    default: return (double)(1 + rndn(10)) / 8.0;
    }
}

static double jitter(double x)
{
    switch (rndn(12)) {
    case 0: return x + 1e-3;
    case 1: return x - 1e-3;
    case 2: return x + 2e-3;
    case 3: return x - 2e-3;
    case 4: return nextafter(x, INFINITY);
    case 5: return nextafter(x, -INFINITY);
    case 6: return x + 0.5e-3;
    case 7: return x - 0.5e-3;
    case 8: return nextafter(x + 1e-3, INFINITY);
    case 9: return nextafter(x - 1e-3, -INFINITY);
    default: return x;
    }
}

static void random_annotations(kd_annotation_rec *v, size_t n, int mode)
{
    for (size_t i = 0; i < n; i++) {
        double ts = rnd_time(mode);
        double end;
        if (i && rndn(4) == 0) {
            /* relative to an earlier one: equal ts/ends, chains within 1e-3, nudged ends */
            const kd_annotation_rec *p = &v[rndn((uint32_t)i)];
            switch (rndn(5)) {
            case 0: ts = p->ts; break;
            case 1: ts = jitter(p->end); break;
            case 2: ts = p->ts + (p->end - p->ts) / 2; break;
            case 3: ts = jitter(p->ts); break;
            default: ts = p->end; break;
            }
            switch (rndn(4)) {
            case 0: end = p->end; break;
            case 1: end = nextafter(p->end, rndn(2) ? INFINITY : -INFINITY); break;
            default: end = ts + rnd_dur(mode); break;
            }
        } else {
            end = ts + rnd_dur(mode);
        }
        if (!(end > ts))
            end = ts + rnd_dur(mode);
        if (!(end > ts))
            end = nextafter(ts, INFINITY);
        int64_t ext = rndn(3) == 0 ? (int64_t)rndn(5) : KD_NOID;
        v[i] = ann(ts, end, rndn(2) ? D : E, rndn(2) != 0, ext);
    }
}

static double random_probe(const kd_annotation_rec *v, size_t n, const naive_ann *na, int mode)
{
    switch (n ? rndn(6) : 0) {
    case 0: return rnd_time(mode);
    case 1: return jitter(v[rndn((uint32_t)n)].ts);
    case 2: return jitter(v[rndn((uint32_t)n)].end);
    case 3: { /* around the 20000 limit of a raw window */
        const kd_annotation_rec *a = &v[rndn((uint32_t)n)];
        double p = rndn(2) ? a->end + 20000.0 : a->ts - 20000.0;
        return jitter(p - 1e-3);
    }
    case 4: { /* merged window boundaries */
        const nlist *l = rndn(2) ? &na->gpu : &na->cpu;
        if (!l->n)
            return rnd_time(mode);
        const nwin *w = &l->w[rndn((uint32_t)l->n)];
        return jitter(rndn(2) ? w->ts - 1e-3 : w->end);
    }
    default: { /* between two windows */
        const kd_annotation_rec *a = &v[rndn((uint32_t)n)], *b = &v[rndn((uint32_t)n)];
        return (a->end + b->ts) / 2 - 1e-3;
    }
    }
}

static void assert_same_windows(const kd_window_list *l, const nlist *nl, const char *which,
                                int set)
{
    ck_assert_msg(l->n == nl->n, "set %d %s: %zu windows, naive %zu", set, which, l->n, nl->n);
    for (size_t i = 0; i < l->n; i++)
        ck_assert_msg(l->w[i].ts == nl->w[i].ts && l->w[i].end == nl->w[i].end &&
                          l->w[i].stage == nl->w[i].stage,
                      "set %d %s window %zu differs", set, which, i);
}

static void dump_case(const kd_annotation_rec *v, size_t n, double kts, int64_t ext)
{
    fprintf(stderr, "kd_annotation_rec v[] = {\n");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "    {%a, %a, %lld, %d, %d}, /* %.17g %.17g */\n", v[i].ts, v[i].end,
                (long long)v[i].ext, v[i].stage, v[i].is_gpu, v[i].ts, v[i].end);
    fprintf(stderr, "}; kernel_ts = %a (%.17g), ext = %lld\n", kts, kts, (long long)ext);
}

START_TEST(test_resolve_random_vs_naive)
{
    rng_state = 0x2545f4914f6cdd1dull;
    enum { SETS = 4000, PROBES = 40, MAXN = 16 };
    kd_annotation_rec v[MAXN];
    long checked = 0;
    for (int set = 0; set < SETS; set++) {
        int mode = (int)rndn(5);
        size_t n = rndn(MAXN + 1);
        random_annotations(v, n, mode);
        kd_trace t = ann_trace(v, n);
        kd_stage_annotations sa;
        build(&t, &sa);
        naive_ann na;
        naive_build(v, n, &na);
        assert_same_windows(&sa.gpu, &na.gpu, "gpu", set);
        assert_same_windows(&sa.cpu, &na.cpu, "cpu", set);
        for (int p = 0; p < PROBES; p++) {
            double kts = random_probe(v, n, &na, mode);
            int64_t ext = rndn(4) == 0 ? (int64_t)rndn(7) : KD_NOID;
            kd_stage got = kd_resolve_kernel_stage(&sa, kts, ext);
            kd_stage want = naive_resolve(&na, kts, ext);
            if (got != want)
                dump_case(v, n, kts, ext);
            ck_assert_msg(got == want, "set %d probe %d (mode %d): kd %s, naive %s", set, p, mode,
                          kd_stage_name(got), kd_stage_name(want));
            checked++;
        }
        naive_free(&na);
        kd_stage_annotations_free(&sa);
    }
    ck_assert_int_eq(checked, (long)SETS * PROBES);
}
END_TEST

Suite *stage_suite(void)
{
    Suite *s = suite_create("stage");
    TCase *tw = tcase_create("windows");
    tcase_add_test(tw, test_windows_same_stage_merge);
    tcase_add_test(tw, test_windows_different_stage_no_merge);
    tcase_add_test(tw, test_windows_sorted_stably);
    tcase_add_test(tw, test_windows_gpu_cpu_separate);
    tcase_add_test(tw, test_windows_empty);
    suite_add_tcase(s, tw);
    TCase *te = tcase_create("by_external_id");
    tcase_add_test(te, test_by_ext_gpu_beats_cpu);
    tcase_add_test(te, test_by_ext_longer_wins_equal_keeps_first);
    tcase_add_test(te, test_by_ext_keys);
    suite_add_tcase(s, te);
    TCase *tr = tcase_create("resolve");
    tcase_add_test(tr, test_resolve_ext_hit_wins);
    tcase_add_test(tr, test_resolve_containment_first_in_order);
    tcase_add_test(tr, test_resolve_probe_offset_and_tolerance);
    tcase_add_test(tr, test_resolve_gpu_before_cpu);
    tcase_add_test(tr, test_resolve_nearest_ties);
    tcase_add_test(tr, test_resolve_nearest_across_lists);
    tcase_add_test(tr, test_resolve_gap_limit);
    tcase_add_test(tr, test_resolve_nearest_rounded_gap_tie);
    tcase_add_test(tr, test_stage_names);
    suite_add_tcase(s, tr);
    TCase *tx = tcase_create("random");
    tcase_add_test(tx, test_resolve_random_vs_naive);
    tcase_set_timeout(tx, 60);
    suite_add_tcase(s, tx);
    return s;
}
