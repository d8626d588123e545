/* overlap.c — the overlap sweep of one stage's formal events (overlap.h;
 * reference §4 "Overlap sweep", the seed's analyze_overlap and
 * dominant_overlap_name).
 *
 * The reference rescans every active event for every active event on every
 * segment. Here the active set is an intrusive doubly-linked list in
 * activation order with per-stream counts kept incrementally, and each
 * segment costs two passes over the active list plus one over the active
 * streams: the first pass finds every stream's best candidate (first max of
 * (priority, dur) in activation order), then the best and second-best
 * streams give each event's dominant in O(1). Every event still receives
 * each segment's value separately, in time order, so the float sums are
 * the reference's (reference "Other quirks": float sums order). */
#include "config.h"

#include "kerndiff/overlap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"

#define NIL UINT32_MAX

/* One sweep point: (time, flag, event) with flag 1 for a start, 0 for an end. */
typedef struct {
    double t;
    uint32_t ev;
    uint32_t is_start;
} point;

typedef struct {
    kd_kernel_event *ev;
    size_t n;
    const kd_interner *names; /* may be NULL: then only sid 0 is "" */

    /* per event */
    uint32_t *stream;    /* dense stream index */
    unsigned char *prio; /* kd_category_priority */
    double *dur;         /* the events' dur, compact for the candidate scans */
    uint32_t *next, *prev;
    unsigned char *active;

    /* the active list, activation order (reference: dict insertion order) */
    uint32_t head, tail;

    /* per dense stream */
    uint32_t n_streams;
    uint32_t *active_count, *compute_count;
    uint32_t *best;      /* this segment's best candidate event of the stream */
    uint32_t *best_rank; /* its position in activation order */
    unsigned char *best_prio; /* its key (priority, dur) and canonical name */
    double *best_dur;
    kd_sid *best_name;
    size_t *stamp;       /* segment number that last touched the stream */
    uint32_t *touched;   /* streams active in this segment */
    uint32_t n_touched;

    uint32_t distinct; /* streams with an active event */
    uint32_t compute;  /* active compute events */
    size_t segment;
} sweep;

/* ---- points --------------------------------------------------------- */

/* reference §4: sort by (time, flag), so ends come before starts */
static bool point_before(const point *a, const point *b)
{
    return a->t < b->t || (a->t == b->t && a->is_start < b->is_start);
}

static void insertion_sort_points(point *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        point x = a[i];
        size_t j = i;
        while (j > 0 && point_before(&x, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Stable merge sort (reference §0: sorting is stable, so equal (time, flag)
 * keep list order). tmp holds at least n / 2 points. */
static void merge_sort_points(point *a, point *tmp, size_t n)
{
    if (n <= 16) {
        insertion_sort_points(a, n);
        return;
    }
    size_t mid = n / 2;
    merge_sort_points(a, tmp, mid);
    merge_sort_points(a + mid, tmp, n - mid);
    if (!point_before(&a[mid], &a[mid - 1]))
        return; /* already in order: traces are mostly sorted by ts */
    memcpy(tmp, a, mid * sizeof *tmp);
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        a[k++] = point_before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
    while (i < mid)
        a[k++] = tmp[i++];
}

/* reference §4: (ts, 1, idx) and (end, 0, idx) in event-list order */
static point *build_points(const kd_kernel_event *ev, size_t n)
{
    point *p = malloc(2 * n * sizeof *p);
    point *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!p || !tmp) {
        free(p);
        free(tmp);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        p[2 * i] = (point){ev[i].ts, (uint32_t)i, 1};
        p[2 * i + 1] = (point){ev[i].end, (uint32_t)i, 0};
    }
    merge_sort_points(p, tmp, 2 * n);
    free(tmp);
    return p;
}

/* ---- state ------------------------------------------------------------ */

static void sweep_free(sweep *w)
{
    free(w->stream);
    free(w->prio);
    free(w->dur);
    free(w->next);
    free(w->prev);
    free(w->active);
    free(w->active_count);
    free(w->compute_count);
    free(w->best);
    free(w->best_rank);
    free(w->best_prio);
    free(w->best_dur);
    free(w->best_name);
    free(w->stamp);
    free(w->touched);
}

/* Streams (interned ids) to dense indexes 0..n_streams-1. */
static bool map_streams(sweep *w)
{
    kd_i64map ids;
    kd_i64map_init(&ids);
    bool ok = true;
    for (size_t i = 0; i < w->n && ok; i++) {
        int64_t dense;
        if (!kd_i64map_get(&ids, w->ev[i].stream, &dense)) {
            dense = w->n_streams++;
            ok = kd_i64map_put(&ids, w->ev[i].stream, dense);
        }
        w->stream[i] = (uint32_t)dense;
    }
    kd_i64map_free(&ids);
    return ok;
}

static bool sweep_init(sweep *w, kd_kernel_event *ev, size_t n, const kd_interner *names)
{
    memset(w, 0, sizeof *w);
    w->ev = ev;
    w->n = n;
    w->names = names;
    w->head = w->tail = NIL;
    w->stream = malloc(n * sizeof *w->stream);
    w->prio = malloc(n);
    w->dur = malloc(n * sizeof *w->dur);
    w->next = malloc(n * sizeof *w->next);
    w->prev = malloc(n * sizeof *w->prev);
    w->active = calloc(n, 1);
    if (!w->stream || !w->prio || !w->dur || !w->next || !w->prev || !w->active || !map_streams(w))
        return false;
    size_t s = w->n_streams;
    w->active_count = calloc(s, sizeof *w->active_count);
    w->compute_count = calloc(s, sizeof *w->compute_count);
    w->best = malloc(s * sizeof *w->best);
    w->best_rank = malloc(s * sizeof *w->best_rank);
    w->best_prio = malloc(s);
    w->best_dur = malloc(s * sizeof *w->best_dur);
    w->best_name = malloc(s * sizeof *w->best_name);
    w->stamp = calloc(s, sizeof *w->stamp);
    w->touched = malloc(s * sizeof *w->touched);
    if (!w->active_count || !w->compute_count || !w->best || !w->best_rank || !w->best_prio ||
        !w->best_dur || !w->best_name || !w->stamp || !w->touched)
        return false;
    for (size_t i = 0; i < n; i++) {
        w->prio[i] = (unsigned char)kd_category_priority(ev[i].kind);
        w->dur[i] = ev[i].dur;
    }
    return true;
}

/* reference §4: a start inserts the event at the end of the active dict */
static void activate(sweep *w, uint32_t e)
{
    if (w->active[e])
        return;
    w->active[e] = 1;
    w->next[e] = NIL;
    w->prev[e] = w->tail;
    if (w->tail != NIL)
        w->next[w->tail] = e;
    else
        w->head = e;
    w->tail = e;
    uint32_t s = w->stream[e];
    if (w->active_count[s]++ == 0)
        w->distinct++;
    if (w->ev[e].kind == KD_CAT_COMPUTE) {
        w->compute_count[s]++;
        w->compute++;
    }
}

/* reference §4: an end pops the event (a no-op when it is not active, as
 * for an end sorted before its own start) */
static void deactivate(sweep *w, uint32_t e)
{
    if (!w->active[e])
        return;
    w->active[e] = 0;
    if (w->prev[e] != NIL)
        w->next[w->prev[e]] = w->next[e];
    else
        w->head = w->next[e];
    if (w->next[e] != NIL)
        w->prev[w->next[e]] = w->prev[e];
    else
        w->tail = w->prev[e];
    uint32_t s = w->stream[e];
    if (--w->active_count[s] == 0)
        w->distinct--;
    if (w->ev[e].kind == KD_CAT_COMPUTE) {
        w->compute_count[s]--;
        w->compute--;
    }
}

/* ---- one segment -------------------------------------------------------- */

/* dominant_overlap_name's key: (CATEGORY_PRIORITY, dur), greater is better */
static inline bool key_better(unsigned pa, double da, unsigned pb, double db)
{
    return pa != pb ? pa > pb : da > db;
}

/* Streams ordered by their best candidate, the earlier activation first on
 * equal keys (reference §0: a stable sort's first element). */
static inline bool stream_better(const sweep *w, uint32_t s, uint32_t t)
{
    if (w->best_prio[s] != w->best_prio[t])
        return w->best_prio[s] > w->best_prio[t];
    if (w->best_dur[s] != w->best_dur[t])
        return w->best_dur[s] > w->best_dur[t];
    return w->best_rank[s] < w->best_rank[t];
}

static inline void set_best(sweep *w, uint32_t s, uint32_t e, uint32_t rank)
{
    w->best[s] = e;
    w->best_rank[s] = rank;
    w->best_prio[s] = w->prio[e];
    w->best_dur[s] = w->dur[e];
}

/* First pass: each active stream's first maximum, in activation order. */
static void find_stream_bests(sweep *w)
{
    w->segment++;
    w->n_touched = 0;
    uint32_t rank = 0;
    for (uint32_t e = w->head; e != NIL; e = w->next[e], rank++) {
        uint32_t s = w->stream[e];
        if (w->stamp[s] != w->segment) {
            w->stamp[s] = w->segment;
            w->touched[w->n_touched++] = s;
            set_best(w, s, e, rank);
        } else if (key_better(w->prio[e], w->dur[e], w->best_prio[s], w->best_dur[s])) {
            set_best(w, s, e, rank);
        }
    }
    for (uint32_t i = 0; i < w->n_touched; i++)
        w->best_name[w->touched[i]] = w->ev[w->best[w->touched[i]]].canonical;
}

/* The best and second-best active streams (at least two are active). */
static void top_two_streams(const sweep *w, uint32_t *first, uint32_t *second)
{
    uint32_t b1 = w->touched[0], b2 = w->touched[1];
    if (stream_better(w, b2, b1)) {
        b1 = w->touched[1];
        b2 = w->touched[0];
    }
    for (uint32_t i = 2; i < w->n_touched; i++) {
        uint32_t s = w->touched[i];
        if (stream_better(w, s, b1)) {
            b2 = b1;
            b1 = s;
        } else if (stream_better(w, s, b2)) {
            b2 = s;
        }
    }
    *first = b1;
    *second = b2;
}

/* reference §4: an empty canonical name is falsy and not counted */
static bool name_is_empty(const sweep *w, kd_sid name)
{
    return name == 0 || (w->names && kd_str_len(w->names, name) == 0);
}

/* reference §4: with one stream active, every active event is exclusive
 * (same-stream concurrency counts as exclusive) */
static void add_exclusive(sweep *w, double seg)
{
    for (uint32_t e = w->head; e != NIL; e = w->next[e])
        w->ev[e].exclusive_us += seg;
}

/* reference §4: with >= 2 streams, every active event has others on another
 * stream: hidden, hidden by compute when another stream runs compute, and
 * the dominant of the other streams gets the segment. */
static bool add_hidden(sweep *w, double seg)
{
    uint32_t b1, b2;
    find_stream_bests(w);
    top_two_streams(w, &b1, &b2);
    for (uint32_t e = w->head; e != NIL; e = w->next[e]) {
        kd_kernel_event *ev = &w->ev[e];
        uint32_t s = w->stream[e];
        ev->hidden_us += seg;
        if (w->compute - w->compute_count[s] > 0)
            ev->hidden_by_compute_us += seg;
        kd_sid dom = w->best_name[s == b1 ? b2 : b1];
        if (!name_is_empty(w, dom) && !kd_counter_add(&ev->overlap_with, dom, seg))
            return false;
    }
    return true;
}

static bool sweep_segment(sweep *w, double seg, kd_overlap_stats *st)
{
    st->total_busy_us += seg;
    if ((double)w->distinct > st->max_concurrent_streams)
        st->max_concurrent_streams = (double)w->distinct;
    if (w->distinct >= 2) {
        st->total_overlap_us += seg;
        return add_hidden(w, seg);
    }
    add_exclusive(w, seg);
    return true;
}

static kd_status run_sweep(sweep *w, const point *pts, kd_overlap_stats *st, kd_error *err)
{
    bool have_prev = false;
    double prev = 0.0;
    for (size_t i = 0; i < 2 * w->n; i++) {
        const point *p = &pts[i];
        /* reference §4: a segment only when time > prev and something is active */
        if (have_prev && p->t > prev && w->head != NIL &&
            !sweep_segment(w, p->t - prev, st))
            return kd_fail(err, KD_ENOMEM, "overlap sweep: out of memory");
        if (p->is_start)
            activate(w, p->ev);
        else
            deactivate(w, p->ev);
        prev = p->t;
        have_prev = true;
    }
    return KD_OK;
}

kd_status kd_analyze_overlap_in(kd_kernel_event *events, size_t n, const kd_interner *names,
                                kd_overlap_stats *stats, kd_error *err)
{
    stats->total_busy_us = stats->total_overlap_us = stats->max_concurrent_streams = 0.0;
    if (n == 0)
        return KD_OK;
    if (n > UINT32_MAX / 2)
        return kd_fail(err, KD_ENOMEM, "overlap sweep: too many events (%zu)", n);
    sweep w;
    point *pts = NULL;
    kd_status st;
    if (!sweep_init(&w, events, n, names) || !(pts = build_points(events, n)))
        st = kd_fail(err, KD_ENOMEM, "overlap sweep: out of memory");
    else
        st = run_sweep(&w, pts, stats, err);
    free(pts);
    sweep_free(&w);
    return st;
}

kd_status kd_analyze_overlap(kd_kernel_event *events, size_t n, kd_overlap_stats *stats,
                             kd_error *err)
{
    return kd_analyze_overlap_in(events, n, NULL, stats, err);
}
