/* test_overlap.c — unit tests of src/overlap.c (reference §4 "Overlap
 * sweep"): hand-made timelines, and a randomized comparison against a
 * literal port of the reference's analyze_overlap. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/intern.h"
#include "kerndiff/overlap.h"
#include "suites.h"

/* ---- helpers ------------------------------------------------------------ */

static kd_kernel_event mk(uint32_t idx, kd_sid stream, kd_category cat, kd_sid canon, double ts,
                          double dur)
{
    kd_kernel_event e;
    memset(&e, 0, sizeof e);
    e.idx = idx;
    e.stream = stream;
    e.category = cat;
    e.kind = cat; /* the built-in five are their own kinds */
    e.canonical = canon;
    e.name = canon;
    e.ts = ts;
    e.dur = dur;
    e.end = ts + dur;
    e.overlap_with = (kd_counter)KD_COUNTER_INIT;
    return e;
}

static void free_events(kd_kernel_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kd_counter_free(&ev[i].overlap_with);
}

static void sweep(kd_kernel_event *ev, size_t n, kd_overlap_stats *st)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_analyze_overlap(ev, n, st, &err), KD_OK);
}

/* exact float checks: the sweep must reproduce the reference's sums */
#define ASSERT_DBL(a, b) ck_assert_msg((a) == (b), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static void assert_times(const kd_kernel_event *e, double hidden, double exclusive, double hbc)
{
    ASSERT_DBL(e->hidden_us, hidden);
    ASSERT_DBL(e->exclusive_us, exclusive);
    ASSERT_DBL(e->hidden_by_compute_us, hbc);
}

/* ---- the literal port (the seed's analyze_overlap) ---------------------- */

typedef struct {
    double t;
    int is_start;
    size_t ev;
} ref_point;

static void ref_sort_points(ref_point *p, size_t n)
{
    /* a stable insertion sort by (time, flag) */
    for (size_t i = 1; i < n; i++) {
        ref_point x = p[i];
        size_t j = i;
        while (j > 0 && (x.t < p[j - 1].t || (x.t == p[j - 1].t && x.is_start < p[j - 1].is_start))) {
            p[j] = p[j - 1];
            j--;
        }
        p[j] = x;
    }
}

static size_t ref_distinct_streams(const kd_kernel_event *ev, const size_t *active, size_t na)
{
    size_t d = 0;
    for (size_t i = 0; i < na; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || ev[active[j]].stream == ev[active[i]].stream;
        d += !seen;
    }
    return d;
}

/* dominant_overlap_name: candidates sorted by (priority, dur) reverse,
 * stable, so the first maximum */
static kd_sid ref_dominant(const kd_kernel_event *ev, size_t self, const size_t *active, size_t na)
{
    long best = -1;
    for (size_t j = 0; j < na; j++) {
        const kd_kernel_event *o = &ev[active[j]];
        if (o->idx == ev[self].idx || o->stream == ev[self].stream)
            continue;
        if (best < 0)
            best = (long)active[j];
        else {
            const kd_kernel_event *b = &ev[best];
            int po = kd_category_priority(o->kind), pb = kd_category_priority(b->kind);
            if (po > pb || (po == pb && o->dur > b->dur))
                best = (long)active[j];
        }
    }
    return best < 0 ? 0 : ev[best].canonical;
}

static void ref_segment(kd_kernel_event *ev, const size_t *active, size_t na, double seg,
                        const kd_interner *names)
{
    for (size_t i = 0; i < na; i++) {
        kd_kernel_event *e = &ev[active[i]];
        bool others = false, compute = false;
        for (size_t j = 0; j < na; j++) {
            const kd_kernel_event *o = &ev[active[j]];
            if (o->idx != e->idx && o->stream != e->stream) {
                others = true;
                compute = compute || o->kind == KD_CAT_COMPUTE;
            }
        }
        if (others) {
            e->hidden_us += seg;
            if (compute)
                e->hidden_by_compute_us += seg;
            kd_sid name = ref_dominant(ev, active[i], active, na);
            bool empty = name == 0 || (names && kd_str_len(names, name) == 0);
            if (!empty)
                ck_assert(kd_counter_add(&e->overlap_with, name, seg));
        } else {
            e->exclusive_us += seg;
        }
    }
}

static void ref_analyze_overlap(kd_kernel_event *ev, size_t n, const kd_interner *names,
                                kd_overlap_stats *st)
{
    ref_point *p = malloc((2 * n + 1) * sizeof *p);
    size_t *active = malloc((n + 1) * sizeof *active), na = 0;
    ck_assert(p && active);
    for (size_t i = 0; i < n; i++) {
        p[2 * i] = (ref_point){ev[i].ts, 1, i};
        p[2 * i + 1] = (ref_point){ev[i].end, 0, i};
    }
    ref_sort_points(p, 2 * n);
    double busy = 0.0, overlap = 0.0, prev = 0.0;
    size_t max_conc = 0;
    bool have_prev = false;
    for (size_t k = 0; k < 2 * n; k++) {
        if (have_prev && p[k].t > prev && na) {
            double seg = p[k].t - prev;
            size_t d = ref_distinct_streams(ev, active, na);
            busy += seg;
            max_conc = d > max_conc ? d : max_conc;
            if (d >= 2)
                overlap += seg;
            ref_segment(ev, active, na, seg, names);
        }
        size_t at = na;
        for (size_t j = 0; j < na; j++)
            if (active[j] == p[k].ev)
                at = j;
        if (!p[k].is_start && at < na) {
            memmove(active + at, active + at + 1, (na - at - 1) * sizeof *active);
            na--;
        } else if (p[k].is_start && at == na) {
            active[na++] = p[k].ev;
        }
        prev = p[k].t;
        have_prev = true;
    }
    st->total_busy_us = busy;
    st->total_overlap_us = overlap;
    st->max_concurrent_streams = (double)max_conc;
    free(p);
    free(active);
}

/* ---- hand-made timelines -------------------------------------------------- */

enum { S1 = 101, S2 = 102, S3 = 103 };
enum { GEMM = 1, COPY = 2, NCCL = 3, ADD = 4, OTHER = 5, GEMM2 = 6 };

START_TEST(test_overlap_empty)
{
    kd_overlap_stats st = {1, 1, 1};
    sweep(NULL, 0, &st);
    ASSERT_DBL(st.total_busy_us, 0.0);
    ASSERT_DBL(st.total_overlap_us, 0.0);
    ASSERT_DBL(st.max_concurrent_streams, 0.0);
}
END_TEST

START_TEST(test_overlap_nested_two_streams)
{
    kd_kernel_event ev[2] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 0, 10),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 2, 3)};
    kd_overlap_stats st;
    sweep(ev, 2, &st);
    assert_times(&ev[0], 3, 7, 0);
    assert_times(&ev[1], 3, 0, 3);
    ck_assert_uint_eq(ev[0].overlap_with.n, 1);
    ck_assert_uint_eq(ev[0].overlap_with.items[0].key, COPY);
    ASSERT_DBL(ev[0].overlap_with.items[0].count, 3.0);
    ck_assert_uint_eq(ev[1].overlap_with.n, 1);
    ASSERT_DBL(kd_counter_get(&ev[1].overlap_with, GEMM), 3.0);
    ASSERT_DBL(st.total_busy_us, 10.0);
    ASSERT_DBL(st.total_overlap_us, 3.0);
    ASSERT_DBL(st.max_concurrent_streams, 2.0);
    free_events(ev, 2);
}
END_TEST

START_TEST(test_overlap_back_to_back_do_not_overlap)
{
    /* reference §4: ends before starts at equal times */
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 0, 5),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 5, 5),
                             mk(2, S1, KD_CAT_COMPUTE, GEMM, 10, 2)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    assert_times(&ev[0], 0, 5, 0);
    assert_times(&ev[1], 0, 5, 0);
    assert_times(&ev[2], 0, 2, 0);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(ev[i].overlap_with.n, 0);
    ASSERT_DBL(st.total_busy_us, 12.0);
    ASSERT_DBL(st.total_overlap_us, 0.0);
    ASSERT_DBL(st.max_concurrent_streams, 1.0);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_equal_starts_keep_list_order)
{
    /* equal (time, flag) keep list order, so activation order is list order:
     * with equal (priority, dur) on S2 and S3, S1 sees the first listed */
    kd_kernel_event ev[3] = {mk(0, S3, KD_CAT_MEMORY, NCCL, 0, 4),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 4),
                             mk(2, S1, KD_CAT_OTHER, OTHER, 0, 4)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    ck_assert_uint_eq(ev[2].overlap_with.n, 1);
    ck_assert_uint_eq(ev[2].overlap_with.items[0].key, NCCL);
    ck_assert_uint_eq(ev[0].overlap_with.items[0].key, COPY);
    ck_assert_uint_eq(ev[1].overlap_with.items[0].key, NCCL);
    ASSERT_DBL(st.max_concurrent_streams, 3.0);
    ASSERT_DBL(st.total_overlap_us, 4.0);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_dominant_priority_then_dur)
{
    /* S1's view: communication (prio 3) beats a longer memory (prio 2) */
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_OTHER, OTHER, 0, 10),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 100),
                             mk(2, S3, KD_CAT_COMMUNICATION, NCCL, 0, 1)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    ck_assert_uint_eq(ev[0].overlap_with.items[0].key, NCCL);
    ASSERT_DBL(ev[0].overlap_with.items[0].count, 1.0);
    /* after NCCL ends, COPY dominates S1's view */
    ck_assert_uint_eq(ev[0].overlap_with.n, 2);
    ck_assert_uint_eq(ev[0].overlap_with.items[1].key, COPY);
    ASSERT_DBL(ev[0].overlap_with.items[1].count, 9.0);
    /* NCCL is the overall best, so S3 sees the second-best stream */
    ck_assert_uint_eq(ev[2].overlap_with.items[0].key, COPY);
    free_events(ev, 3);

    /* equal priority: the longer dur wins, even when activated later */
    kd_kernel_event ev2[3] = {mk(0, S1, KD_CAT_ELEMENTWISE, ADD, 0, 10),
                              mk(1, S2, KD_CAT_COMPUTE, GEMM, 0, 5),
                              mk(2, S3, KD_CAT_COMPUTE, GEMM2, 1, 6)};
    sweep(ev2, 3, &st);
    ck_assert_uint_eq(ev2[0].overlap_with.n, 2);
    ASSERT_DBL(kd_counter_get(&ev2[0].overlap_with, GEMM), 1.0);
    ASSERT_DBL(kd_counter_get(&ev2[0].overlap_with, GEMM2), 6.0);
    ck_assert_uint_eq(ev2[0].overlap_with.items[0].key, GEMM);
    free_events(ev2, 3);
}
END_TEST

START_TEST(test_overlap_dominant_activation_order)
{
    /* list order S2 event first, but the S3 event starts earlier: activation
     * order (not list order) breaks the (priority, dur) tie */
    kd_kernel_event ev[3] = {mk(0, S2, KD_CAT_COMPUTE, GEMM, 2, 5),
                             mk(1, S3, KD_CAT_COMPUTE, GEMM2, 1, 5),
                             mk(2, S1, KD_CAT_MEMORY, COPY, 0, 10)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    /* S1: [1,2) GEMM2 alone, [2,6) tie -> GEMM2 (earlier activation), [6,7) GEMM */
    ck_assert_uint_eq(ev[2].overlap_with.n, 2);
    ck_assert_uint_eq(ev[2].overlap_with.items[0].key, GEMM2);
    ASSERT_DBL(ev[2].overlap_with.items[0].count, 1.0 + 4.0);
    ASSERT_DBL(ev[2].overlap_with.items[1].count, 1.0);
    assert_times(&ev[2], 6, 4, 6);
    ASSERT_DBL(st.max_concurrent_streams, 3.0);
    ASSERT_DBL(st.total_overlap_us, 6.0);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_same_stream_candidates)
{
    /* two candidates on S2: the first maximum within the stream; S2's events
     * never see each other */
    kd_kernel_event ev[3] = {mk(0, S2, KD_CAT_MEMORY, COPY, 0, 8),
                             mk(1, S2, KD_CAT_COMPUTE, GEMM, 0, 8),
                             mk(2, S1, KD_CAT_ELEMENTWISE, ADD, 0, 8)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    ck_assert_uint_eq(ev[2].overlap_with.items[0].key, GEMM);
    ck_assert_uint_eq(ev[0].overlap_with.items[0].key, ADD);
    ck_assert_uint_eq(ev[1].overlap_with.items[0].key, ADD);
    assert_times(&ev[0], 8, 0, 0); /* the compute is on its own stream */
    assert_times(&ev[2], 8, 0, 8);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_one_stream_all_exclusive)
{
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 0, 10),
                             mk(1, S1, KD_CAT_MEMORY, COPY, 2, 4),
                             mk(2, S1, KD_CAT_OTHER, OTHER, 20, 1)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    assert_times(&ev[0], 0, 10, 0);
    assert_times(&ev[1], 0, 4, 0);
    assert_times(&ev[2], 0, 1, 0);
    ASSERT_DBL(st.total_busy_us, 11.0);
    ASSERT_DBL(st.total_overlap_us, 0.0);
    ASSERT_DBL(st.max_concurrent_streams, 1.0);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_zero_length_segments)
{
    /* many points at t=4: no zero-length segment, nothing gets a 0 entry */
    kd_kernel_event ev[4] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 0, 4),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 4),
                             mk(2, S3, KD_CAT_ELEMENTWISE, ADD, 4, 4),
                             mk(3, S1, KD_CAT_ELEMENTWISE, ADD, 4, 4)};
    kd_overlap_stats st;
    sweep(ev, 4, &st);
    assert_times(&ev[0], 4, 0, 0);
    assert_times(&ev[1], 4, 0, 4);
    assert_times(&ev[2], 4, 0, 0);
    assert_times(&ev[3], 4, 0, 0);
    ck_assert_uint_eq(ev[2].overlap_with.n, 1);
    ASSERT_DBL(ev[2].overlap_with.items[0].count, 4.0);
    ASSERT_DBL(st.total_busy_us, 8.0);
    ASSERT_DBL(st.total_overlap_us, 8.0);
    free_events(ev, 4);
}
END_TEST

START_TEST(test_overlap_hidden_by_compute)
{
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 0, 10),
                             mk(1, S1, KD_CAT_MEMORY, COPY, 0, 10),
                             mk(2, S2, KD_CAT_ELEMENTWISE, ADD, 5, 10)};
    kd_overlap_stats st;
    sweep(ev, 3, &st);
    assert_times(&ev[0], 5, 5, 0); /* the other stream has no compute */
    assert_times(&ev[1], 5, 5, 0); /* same-stream compute does not count */
    assert_times(&ev[2], 5, 5, 5);
    ck_assert_uint_eq(ev[2].overlap_with.items[0].key, GEMM);
    free_events(ev, 3);
}
END_TEST

START_TEST(test_overlap_segments_not_merged)
{
    /* S1 gets 0.1 then 0.2 then 0.3 (three segments, split by S2 points):
     * the per-event sum is ((0 + 0.1) + 0.2) + 0.3 in time order */
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_OTHER, OTHER, 0, 0.6),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0.1, 0.2),
                             mk(2, S2, KD_CAT_MEMORY, COPY, 0.30000000000000004, 0.1)};
    ev[0].end = 0.6;
    kd_overlap_stats st, ref;
    sweep(ev, 3, &st);
    kd_kernel_event cp[3];
    for (int i = 0; i < 3; i++) {
        cp[i] = ev[i];
        cp[i].hidden_us = cp[i].exclusive_us = cp[i].hidden_by_compute_us = 0;
        cp[i].overlap_with = (kd_counter)KD_COUNTER_INIT;
    }
    ref_analyze_overlap(cp, 3, NULL, &ref);
    for (int i = 0; i < 3; i++)
        assert_times(&ev[i], cp[i].hidden_us, cp[i].exclusive_us, cp[i].hidden_by_compute_us);
    ASSERT_DBL(st.total_busy_us, ref.total_busy_us);
    free_events(ev, 3);
    free_events(cp, 3);
}
END_TEST

START_TEST(test_overlap_empty_name_not_counted)
{
    /* sid 0 is "" without an interner */
    kd_kernel_event ev[2] = {mk(0, S1, KD_CAT_COMPUTE, 0, 0, 4),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 4)};
    kd_overlap_stats st;
    sweep(ev, 2, &st);
    assert_times(&ev[1], 4, 0, 4);
    ck_assert_uint_eq(ev[1].overlap_with.n, 0);
    ck_assert_uint_eq(ev[0].overlap_with.n, 1);
    free_events(ev, 2);

    /* an interned "" through kd_analyze_overlap_in */
    kd_interner *in = kd_interner_new();
    ck_assert_ptr_nonnull(in);
    kd_sid empty = kd_intern_cstr(in, ""), copy = kd_intern_cstr(in, "copy");
    ck_assert_uint_ne(empty, 0);
    kd_kernel_event ev2[2] = {mk(0, S1, KD_CAT_COMPUTE, empty, 0, 4),
                              mk(1, S2, KD_CAT_MEMORY, copy, 0, 4)};
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_analyze_overlap_in(ev2, 2, in, &st, &err), KD_OK);
    ck_assert_uint_eq(ev2[1].overlap_with.n, 0);
    ck_assert_uint_eq(ev2[0].overlap_with.n, 1);
    ck_assert_uint_eq(ev2[0].overlap_with.items[0].key, copy);
    free_events(ev2, 2);
    kd_interner_free(in);
}
END_TEST

START_TEST(test_overlap_end_not_after_start)
{
    /* reference quirk (D4 is handled by the loader): an end sorted before its
     * start leaves the event active to the last point; no crash */
    kd_kernel_event ev[3] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 2, 1),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 10),
                             mk(2, S1, KD_CAT_OTHER, OTHER, 5, 1)};
    ev[0].end = ev[0].ts;
    kd_overlap_stats st, ref;
    sweep(ev, 3, &st);
    assert_times(&ev[0], 8, 0, 0);
    assert_times(&ev[1], 8, 2, 8);
    kd_kernel_event cp[3] = {mk(0, S1, KD_CAT_COMPUTE, GEMM, 2, 1),
                             mk(1, S2, KD_CAT_MEMORY, COPY, 0, 10),
                             mk(2, S1, KD_CAT_OTHER, OTHER, 5, 1)};
    cp[0].end = cp[0].ts;
    ref_analyze_overlap(cp, 3, NULL, &ref);
    for (int i = 0; i < 3; i++)
        assert_times(&ev[i], cp[i].hidden_us, cp[i].exclusive_us, cp[i].hidden_by_compute_us);
    ASSERT_DBL(st.total_busy_us, ref.total_busy_us);
    free_events(ev, 3);
    free_events(cp, 3);
}
END_TEST

/* ---- randomized comparison -------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
    /* xorshift64*, the state is the test's own */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static double rnd_unit(uint64_t *s) { return (double)(rnd(s) >> 11) / 9007199254740992.0; }

static double rnd_time(uint64_t *s, double scale)
{
    /* mostly a coarse grid, so equal timestamps are common */
    if (rnd(s) % 3)
        return (double)(rnd(s) % 12) * 0.5 * scale;
    return rnd_unit(s) * 6.0 * scale;
}

static void random_events(uint64_t *s, kd_kernel_event *ev, size_t n, unsigned streams)
{
    for (size_t i = 0; i < n; i++) {
        double ts = rnd_time(s, 1.0);
        double dur = rnd(s) % 3 ? (double)(1 + rnd(s) % 6) * 0.25 : 0.01 + rnd_unit(s) * 3.0;
        kd_sid canon = (kd_sid)(rnd(s) % 7); /* 0 = "" */
        ev[i] = mk((uint32_t)(i * 3 + 7), (kd_sid)(200 + rnd(s) % streams),
                   (kd_category)(rnd(s) % KD_CAT_COUNT), canon, ts, dur);
        if (rnd(s) % 97 == 0)
            ev[i].end = ev[i].ts; /* the ts + dur == ts quirk */
    }
}

static void assert_same_counter(const kd_counter *a, const kd_counter *b)
{
    ck_assert_uint_eq(a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) {
        ck_assert_uint_eq(a->items[i].key, b->items[i].key);
        ASSERT_DBL(a->items[i].count, b->items[i].count);
    }
}

START_TEST(test_overlap_random_vs_reference)
{
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    enum { MAXN = 48 };
    kd_kernel_event ev[MAXN], ref[MAXN];
    for (int trial = 0; trial < 600; trial++) {
        size_t n = 1 + rnd(&seed) % MAXN;
        unsigned streams = 1 + (unsigned)(rnd(&seed) % 6);
        random_events(&seed, ev, n, streams);
        memcpy(ref, ev, n * sizeof *ev);
        kd_overlap_stats st, rst;
        sweep(ev, n, &st);
        ref_analyze_overlap(ref, n, NULL, &rst);
        ASSERT_DBL(st.total_busy_us, rst.total_busy_us);
        ASSERT_DBL(st.total_overlap_us, rst.total_overlap_us);
        ASSERT_DBL(st.max_concurrent_streams, rst.max_concurrent_streams);
        for (size_t i = 0; i < n; i++) {
            assert_times(&ev[i], ref[i].hidden_us, ref[i].exclusive_us,
                         ref[i].hidden_by_compute_us);
            assert_same_counter(&ev[i].overlap_with, &ref[i].overlap_with);
        }
        free_events(ev, n);
        free_events(ref, n);
    }
}
END_TEST

Suite *overlap_suite(void)
{
    Suite *s = suite_create("overlap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_overlap_empty);
    tcase_add_test(tc, test_overlap_nested_two_streams);
    tcase_add_test(tc, test_overlap_back_to_back_do_not_overlap);
    tcase_add_test(tc, test_overlap_equal_starts_keep_list_order);
    tcase_add_test(tc, test_overlap_dominant_priority_then_dur);
    tcase_add_test(tc, test_overlap_dominant_activation_order);
    tcase_add_test(tc, test_overlap_same_stream_candidates);
    tcase_add_test(tc, test_overlap_one_stream_all_exclusive);
    tcase_add_test(tc, test_overlap_zero_length_segments);
    tcase_add_test(tc, test_overlap_hidden_by_compute);
    tcase_add_test(tc, test_overlap_segments_not_merged);
    tcase_add_test(tc, test_overlap_empty_name_not_counted);
    tcase_add_test(tc, test_overlap_end_not_after_start);
    tcase_add_test(tc, test_overlap_random_vs_reference);
    suite_add_tcase(s, tc);
    tcase_set_timeout(tc, 60);
    return s;
}
