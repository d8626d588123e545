/* test_aggregate.c — unit tests of src/aggregate.c (reference §4
 * "Aggregate" and "Opportunities"). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/aggregate.h"
#include "suites.h"

#define ASSERT_DBL(a, b) ck_assert_msg((a) == (b), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static kd_kernel_event mk(uint32_t idx, kd_sid canon, kd_category cat, double dur, double hidden,
                          double exclusive, double hbc)
{
    kd_kernel_event e;
    memset(&e, 0, sizeof e);
    e.idx = idx;
    e.canonical = canon;
    e.category = cat;
    e.kind = cat; /* the built-in five are their own kinds */
    e.dur = dur;
    e.hidden_us = hidden;
    e.exclusive_us = exclusive;
    e.hidden_by_compute_us = hbc;
    e.overlap_with = (kd_counter)KD_COUNTER_INIT;
    return e;
}

static void free_events(kd_kernel_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kd_counter_free(&ev[i].overlap_with);
}

static void aggregate(const kd_kernel_event *ev, size_t n, kd_aggregate_list *l)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_aggregate_events(ev, n, l, &err), KD_OK);
}

/* ---- aggregate_events -------------------------------------------------- */

START_TEST(test_aggregate_empty)
{
    kd_aggregate_list l;
    aggregate(NULL, 0, &l);
    ck_assert_uint_eq(l.n, 0);
    size_t out[5];
    ck_assert_uint_eq(kd_top_overlap_opportunities(&l, out), 0);
    ck_assert_uint_eq(kd_top_hidden_low_roi(&l, out), 0);
    kd_aggregate_list_free(&l);
}
END_TEST

START_TEST(test_aggregate_insertion_order_and_sums)
{
    /* key (canonical, category): one name with two categories gives two */
    kd_kernel_event ev[5] = {mk(10, 1, KD_CAT_COMPUTE, 0.1, 0.1, 0.0, 0.0),
                             mk(11, 2, KD_CAT_MEMORY, 1.0, 0.5, 0.5, 0.25),
                             mk(12, 1, KD_CAT_COMPUTE, 0.2, 0.0, 0.2, 0.0),
                             mk(13, 1, KD_CAT_MEMORY, 3.0, 1.0, 2.0, 1.0),
                             mk(14, 1, KD_CAT_COMPUTE, 0.3, 0.3, 0.0, 0.3)};
    kd_aggregate_list l;
    aggregate(ev, 5, &l);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_uint_eq(l.v[0].name, 1);
    ck_assert_int_eq(l.v[0].category, KD_CAT_COMPUTE);
    ck_assert_uint_eq(l.v[1].name, 2);
    ck_assert_uint_eq(l.v[2].name, 1);
    ck_assert_int_eq(l.v[2].category, KD_CAT_MEMORY);
    ck_assert_uint_eq(l.v[0].count, 3);
    /* event order: (0 + 0.1) + 0.2) + 0.3 */
    double total = 0.0;
    total += 0.1;
    total += 0.2;
    total += 0.3;
    ASSERT_DBL(l.v[0].total_us, total);
    ASSERT_DBL(l.v[0].hidden_us, 0.1 + 0.3);
    ASSERT_DBL(l.v[0].exclusive_us, 0.2);
    ASSERT_DBL(l.v[0].hidden_by_compute_us, 0.3);
    ASSERT_DBL(l.v[1].total_us, 1.0);
    ASSERT_DBL(l.v[1].hidden_by_compute_us, 0.25);
    kd_aggregate_list_free(&l);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_ptr_null(l.v);
}
END_TEST

START_TEST(test_aggregate_many_keys)
{
    /* past any small-table limit: order and counts stay right */
    enum { N = 3000 };
    kd_kernel_event *ev = malloc(N * sizeof *ev);
    ck_assert_ptr_nonnull(ev);
    for (uint32_t i = 0; i < N; i++)
        ev[i] = mk(i, 1 + (i * 7919u) % 1000u, (kd_category)((i / 1000) % 2), 1.0, 0, 1.0, 0);
    kd_aggregate_list l;
    aggregate(ev, N, &l);
    ck_assert_uint_eq(l.n, 2000);
    for (uint32_t i = 0; i < 2000; i++) {
        /* canonical follows i % 1000 (a bijection), category (i / 1000) % 2:
         * key i first appears at event i; events 2000.. repeat keys 0..999 */
        ck_assert_uint_eq(l.v[i].name, 1 + (i * 7919u) % 1000u);
        ck_assert_int_eq(l.v[i].category, (int)((i / 1000) % 2));
        ck_assert_uint_eq(l.v[i].count, i < 1000 ? 2 : 1);
        ck_assert_int_eq(l.v[i].representative_idx, i);
    }
    kd_aggregate_list_free(&l);
    free(ev);
}
END_TEST

START_TEST(test_aggregate_overlap_with_update_order)
{
    kd_kernel_event ev[2] = {mk(0, 1, KD_CAT_MEMORY, 4, 3, 1, 0),
                             mk(1, 1, KD_CAT_MEMORY, 4, 3, 1, 0)};
    ck_assert(kd_counter_add(&ev[0].overlap_with, 50, 1.0));
    ck_assert(kd_counter_add(&ev[0].overlap_with, 60, 2.0));
    ck_assert(kd_counter_add(&ev[1].overlap_with, 70, 1.0));
    ck_assert(kd_counter_add(&ev[1].overlap_with, 50, 0.5));
    kd_aggregate_list l;
    aggregate(ev, 2, &l);
    const kd_counter *c = &l.v[0].overlap_with;
    ck_assert_uint_eq(c->n, 3);
    ck_assert_uint_eq(c->items[0].key, 50);
    ck_assert_uint_eq(c->items[1].key, 60);
    ck_assert_uint_eq(c->items[2].key, 70);
    ASSERT_DBL(c->items[0].count, 1.5);
    /* the events' counters are untouched */
    ck_assert_uint_eq(ev[1].overlap_with.n, 2);
    kd_aggregate_list_free(&l);
    free_events(ev, 2);
}
END_TEST

START_TEST(test_aggregate_representative)
{
    /* first strictly largest hidden + exclusive; idx is the event's idx */
    kd_kernel_event ev[4] = {mk(20, 1, KD_CAT_OTHER, 5, 1, 2, 0), mk(21, 1, KD_CAT_OTHER, 5, 2, 3, 0),
                             mk(22, 1, KD_CAT_OTHER, 5, 3, 2, 0), mk(23, 1, KD_CAT_OTHER, 5, 0, 2, 0)};
    kd_aggregate_list l;
    aggregate(ev, 4, &l);
    ck_assert_int_eq(l.v[0].representative_idx, 21);
    ASSERT_DBL(l.v[0].representative_score, 5.0);
    kd_aggregate_list_free(&l);

    /* all-zero scores: 0 > -1, so the first event */
    kd_kernel_event z[2] = {mk(5, 2, KD_CAT_OTHER, 1, 0, 0, 0), mk(6, 2, KD_CAT_OTHER, 1, 0, 0, 0)};
    aggregate(z, 2, &l);
    ck_assert_int_eq(l.v[0].representative_idx, 5);
    ASSERT_DBL(l.v[0].representative_score, 0.0);
    kd_aggregate_list_free(&l);
}
END_TEST

START_TEST(test_aggregate_ratios)
{
    kd_aggregate a;
    memset(&a, 0, sizeof a);
    ASSERT_DBL(kd_aggregate_hidden_ratio(&a), 0.0);
    ASSERT_DBL(kd_aggregate_exclusive_ratio(&a), 0.0);
    a.total_us = 3.0;
    a.hidden_us = 1.0;
    a.exclusive_us = 2.0;
    ASSERT_DBL(kd_aggregate_hidden_ratio(&a), 1.0 / 3.0);
    ASSERT_DBL(kd_aggregate_exclusive_ratio(&a), 2.0 / 3.0);
}
END_TEST

/* ---- candidate lists -------------------------------------------------------- */

static kd_aggregate agg(kd_sid name, kd_category cat, double total, double hidden, double excl,
                        double hbc)
{
    kd_aggregate a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.category = cat;
    a.kind = cat;
    a.count = 1;
    a.total_us = total;
    a.hidden_us = hidden;
    a.exclusive_us = excl;
    a.hidden_by_compute_us = hbc;
    a.overlap_with = (kd_counter)KD_COUNTER_INIT;
    a.representative_idx = 0;
    return a;
}

static void assert_list(const size_t *got, size_t n, const size_t *want, size_t m)
{
    ck_assert_uint_eq(n, m);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "position %zu: %zu, expected %zu", i, got[i], want[i]);
}

START_TEST(test_top_overlap_thresholds_and_weights)
{
    kd_aggregate v[] = {
        agg(1, KD_CAT_MEMORY, 4.999, 0, 4.999, 0),       /* 0: total < 5 */
        agg(2, KD_CAT_ELEMENTWISE, 10, 5.5, 4.5, 0),     /* 1: ratio 0.45: in, key 4.5 */
        agg(3, KD_CAT_ELEMENTWISE, 10, 5.6, 4.4, 0),     /* 2: ratio 0.44: out */
        agg(4, KD_CAT_COMMUNICATION, 10, 0, 10, 0),      /* 3: key 13 */
        agg(5, KD_CAT_MEMORY, 11, 0, 11, 0),             /* 4: key 12.65 */
        agg(6, KD_CAT_OTHER, 20, 0, 16, 0),              /* 5: key 12.8 */
        agg(7, KD_CAT_COMPUTE, 100, 0, 100, 0),          /* 6: compute, key 35: last */
        agg(8, KD_CAT_MEMORY, 5.0, 0, 5.0, 0),           /* 7: total exactly 5: in */
    };
    kd_aggregate_list l = {v, sizeof v / sizeof *v};
    size_t out[5];
    size_t n = kd_top_overlap_opportunities(&l, out);
    size_t want[] = {3, 5, 4, 7, 1};
    assert_list(out, n, want, 5); /* the compute fallback is cut by [:5] */
}
END_TEST

START_TEST(test_top_overlap_compute_after_non_compute)
{
    kd_aggregate v[] = {
        agg(1, KD_CAT_COMPUTE, 100, 0, 100, 0),
        agg(2, KD_CAT_ELEMENTWISE, 6, 0, 6, 0),
        agg(3, KD_CAT_COMPUTE, 200, 0, 200, 0),
        agg(4, KD_CAT_COMPUTE, 100, 0, 100, 0),
    };
    kd_aggregate_list l = {v, 4};
    size_t out[5];
    size_t n = kd_top_overlap_opportunities(&l, out);
    size_t want[] = {1, 2, 0, 3};
    assert_list(out, n, want, 4);
}
END_TEST

START_TEST(test_top_overlap_stable_ties)
{
    /* seven equal keys: the first five in list order */
    kd_aggregate v[7];
    for (int i = 0; i < 7; i++)
        v[i] = agg((kd_sid)(i + 1), KD_CAT_MEMORY, 10, 0, 10, 0);
    v[5].exclusive_us = 10.5; /* higher: jumps to the front */
    kd_aggregate_list l = {v, 7};
    size_t out[5];
    size_t n = kd_top_overlap_opportunities(&l, out);
    size_t want[] = {5, 0, 1, 2, 3};
    assert_list(out, n, want, 5);
}
END_TEST

START_TEST(test_top_low_roi)
{
    kd_aggregate v[] = {
        agg(1, KD_CAT_COMPUTE, 10, 10, 0, 0),          /* 0: wrong category */
        agg(2, KD_CAT_ELEMENTWISE, 10, 6.5, 3.5, 0),   /* 1: ratio 0.65 in, key 6.5 */
        agg(3, KD_CAT_MEMORY, 10, 6.4, 3.6, 0),        /* 2: ratio 0.64 out */
        agg(4, KD_CAT_MEMORY, 4.9, 4.9, 0, 0),         /* 3: total < 5 */
        agg(5, KD_CAT_MEMORY, 10, 7, 3, 7),            /* 4: key 14 */
        agg(6, KD_CAT_ELEMENTWISE, 20, 14, 6, 0),      /* 5: key 14, ratio 0.7 */
        agg(7, KD_CAT_ELEMENTWISE, 8, 7, 1, 0),        /* 6: key 7, ratio 0.875 */
        agg(8, KD_CAT_MEMORY, 16, 14, 2, 0),           /* 7: key 14, ratio 0.875 */
        agg(9, KD_CAT_COMMUNICATION, 10, 10, 0, 10),   /* 8: wrong category */
        agg(10, KD_CAT_MEMORY, 14, 14, 0, 0),          /* 9: key 14, ratio 1 */
        agg(11, KD_CAT_MEMORY, 14, 14, 0, 0),          /* 10: equal to 9: after it */
    };
    kd_aggregate_list l = {v, sizeof v / sizeof *v};
    size_t out[5];
    size_t n = kd_top_hidden_low_roi(&l, out);
    /* key 14: ratios 1, 1, 0.875, 0.7 (v[4]: 0.7) -> 9, 10, 7, then 4 before 5 */
    size_t want[] = {9, 10, 7, 4, 5};
    assert_list(out, n, want, 5);
}
END_TEST

START_TEST(test_top_low_roi_hbc_boost)
{
    /* hbc boosts: 5 * (1 + 5/5) = 10 beats 8 */
    kd_aggregate v[] = {
        agg(1, KD_CAT_ELEMENTWISE, 10, 8, 2, 0),
        agg(2, KD_CAT_MEMORY, 6, 5, 1, 5),
    };
    kd_aggregate_list l = {v, 2};
    size_t out[5];
    size_t n = kd_top_hidden_low_roi(&l, out);
    size_t want[] = {1, 0};
    assert_list(out, n, want, 2);
}
END_TEST

/* ---- add_launches: kernels without a duration (divergence D7) ---------- */

static void add_launches(kd_aggregate_list *l, const kd_kernel_event *zero, size_t n)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_aggregate_add_launches(l, zero, n, &err), KD_OK);
}

START_TEST(test_add_launches)
{
    kd_kernel_event ev[3] = {mk(0, 1, KD_CAT_COMPUTE, 10.0, 2.0, 8.0, 1.0),
                             mk(1, 2, KD_CAT_MEMORY, 5.0, 5.0, 0.0, 5.0),
                             mk(2, 1, KD_CAT_COMPUTE, 4.0, 0.0, 4.0, 0.0)};
    kd_aggregate_list l;
    aggregate(ev, 3, &l);
    ck_assert_uint_eq(l.n, 2);
    /* zero-duration: one more of (1, compute); (3, other) twice, new; (1,
     * memory) is another key than (1, compute): new */
    kd_kernel_event zero[4] = {mk(7, 1, KD_CAT_COMPUTE, 0.0, 0.0, 0.0, 0.0),
                               mk(8, 3, KD_CAT_OTHER, 0.0, 0.0, 0.0, 0.0),
                               mk(9, 1, KD_CAT_MEMORY, 0.0, 0.0, 0.0, 0.0),
                               mk(10, 3, KD_CAT_OTHER, 0.0, 0.0, 0.0, 0.0)};
    add_launches(&l, zero, 4);
    ck_assert_uint_eq(l.n, 4);
    /* the existing aggregate: count + 1, totals and representative unchanged */
    ck_assert_uint_eq(l.v[0].name, 1);
    ck_assert_int_eq(l.v[0].category, KD_CAT_COMPUTE);
    ck_assert_uint_eq(l.v[0].count, 3);
    ASSERT_DBL(l.v[0].total_us, 14.0);
    ASSERT_DBL(l.v[0].hidden_us, 2.0);
    ASSERT_DBL(l.v[0].exclusive_us, 12.0);
    ASSERT_DBL(l.v[0].hidden_by_compute_us, 1.0);
    ck_assert_int_eq(l.v[0].representative_idx, 0);
    ASSERT_DBL(l.v[0].representative_score, 10.0);
    /* the untouched one */
    ck_assert_uint_eq(l.v[1].name, 2);
    ck_assert_uint_eq(l.v[1].count, 1);
    ASSERT_DBL(l.v[1].total_us, 5.0);
    ck_assert_int_eq(l.v[1].representative_idx, 1);
    /* zero-only kernels: appended in first-seen order, count n, no time, no representative */
    ck_assert_uint_eq(l.v[2].name, 3);
    ck_assert_int_eq(l.v[2].category, KD_CAT_OTHER);
    ck_assert_uint_eq(l.v[2].count, 2);
    ck_assert_uint_eq(l.v[3].name, 1);
    ck_assert_int_eq(l.v[3].category, KD_CAT_MEMORY);
    ck_assert_uint_eq(l.v[3].count, 1);
    for (size_t i = 2; i < 4; i++) {
        ASSERT_DBL(l.v[i].total_us, 0.0);
        ASSERT_DBL(l.v[i].hidden_us, 0.0);
        ASSERT_DBL(l.v[i].exclusive_us, 0.0);
        ASSERT_DBL(l.v[i].hidden_by_compute_us, 0.0);
        ck_assert_int_eq(l.v[i].representative_idx, -1);
        ASSERT_DBL(kd_aggregate_hidden_ratio(&l.v[i]), 0.0);
        ASSERT_DBL(kd_aggregate_exclusive_ratio(&l.v[i]), 0.0);
        ck_assert_uint_eq(l.v[i].overlap_with.n, 0);
    }
    /* nothing to add: unchanged */
    add_launches(&l, NULL, 0);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_uint_eq(l.v[0].count, 3);
    /* a second call finds the aggregates the first appended */
    add_launches(&l, zero + 1, 1);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_uint_eq(l.v[2].count, 3);
    /* the candidate lists ignore what has no time */
    size_t out[5];
    size_t n = kd_top_overlap_opportunities(&l, out);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_lt(out[i], 2);
    n = kd_top_hidden_low_roi(&l, out);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_lt(out[i], 2);
    kd_aggregate_list_free(&l);
    free_events(ev, 3);
    free_events(zero, 4);
}
END_TEST

START_TEST(test_add_launches_empty_list_and_growth)
{
    /* a stage whose every kernel ran for zero time */
    kd_aggregate_list l;
    aggregate(NULL, 0, &l);
    enum { N = 40 };
    kd_kernel_event zero[2 * N];
    for (size_t i = 0; i < 2 * N; i++)
        zero[i] = mk((uint32_t)i, (kd_sid)(100 + i % N), KD_CAT_ELEMENTWISE, 0.0, 0.0, 0.0, 0.0);
    add_launches(&l, zero, 2 * N);
    ck_assert_uint_eq(l.n, N);
    for (size_t i = 0; i < N; i++) {
        ck_assert_uint_eq(l.v[i].name, 100 + i);
        ck_assert_uint_eq(l.v[i].count, 2);
        ASSERT_DBL(l.v[i].total_us, 0.0);
        ck_assert_int_eq(l.v[i].representative_idx, -1);
    }
    kd_aggregate_list_free(&l);
    free_events(zero, 2 * N);
}
END_TEST

Suite *aggregate_suite(void)
{
    Suite *s = suite_create("aggregate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_aggregate_empty);
    tcase_add_test(tc, test_aggregate_insertion_order_and_sums);
    tcase_add_test(tc, test_aggregate_many_keys);
    tcase_add_test(tc, test_aggregate_overlap_with_update_order);
    tcase_add_test(tc, test_aggregate_representative);
    tcase_add_test(tc, test_aggregate_ratios);
    tcase_add_test(tc, test_top_overlap_thresholds_and_weights);
    tcase_add_test(tc, test_top_overlap_compute_after_non_compute);
    tcase_add_test(tc, test_top_overlap_stable_ties);
    tcase_add_test(tc, test_top_low_roi);
    tcase_add_test(tc, test_top_low_roi_hbc_boost);
    tcase_add_test(tc, test_add_launches);
    tcase_add_test(tc, test_add_launches_empty_list_and_growth);
    suite_add_tcase(s, tc);
    return s;
}
