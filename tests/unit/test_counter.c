/* test_counter.c — unit tests of src/counter.c, the insertion-ordered
 * Counter (reference §0: insertion order decides most_common ties). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/counter.h"
#include "suites.h"

#define ASSERT_DBL(a, b) ck_assert_msg((a) == (b), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static void assert_keys(const kd_counter *c, const kd_sid *keys, size_t n)
{
    ck_assert_uint_eq(c->n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(c->items[i].key, keys[i]);
}

START_TEST(test_counter_add_get)
{
    kd_counter c = KD_COUNTER_INIT;
    ASSERT_DBL(kd_counter_get(&c, 7), 0.0);
    ck_assert(kd_counter_add(&c, 7, 1.5));
    ck_assert(kd_counter_add(&c, 3, 2.0));
    ck_assert(kd_counter_add(&c, 7, 0.25));
    ck_assert(kd_counter_add(&c, 9, 0.1));
    kd_sid keys[] = {7, 3, 9};
    assert_keys(&c, keys, 3);
    ASSERT_DBL(kd_counter_get(&c, 7), 1.75);
    ASSERT_DBL(kd_counter_get(&c, 3), 2.0);
    ASSERT_DBL(kd_counter_get(&c, 9), 0.1);
    ASSERT_DBL(kd_counter_get(&c, 4), 0.0);
    /* sums in call order */
    ck_assert(kd_counter_add(&c, 9, 0.2));
    ASSERT_DBL(kd_counter_get(&c, 9), 0.1 + 0.2);
    kd_counter_free(&c);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_ptr_null(c.items);
    kd_counter_free(&c); /* twice is harmless */
}
END_TEST

START_TEST(test_counter_update_order)
{
    kd_counter a = KD_COUNTER_INIT, b = KD_COUNTER_INIT, e = KD_COUNTER_INIT;
    ck_assert(kd_counter_add(&a, 1, 1.0));
    ck_assert(kd_counter_add(&a, 2, 2.0));
    ck_assert(kd_counter_add(&b, 3, 1.0));
    ck_assert(kd_counter_add(&b, 1, 4.0));
    ck_assert(kd_counter_update(&a, &b));
    kd_sid keys[] = {1, 2, 3};
    assert_keys(&a, keys, 3);
    ASSERT_DBL(kd_counter_get(&a, 1), 5.0);
    ASSERT_DBL(kd_counter_get(&a, 3), 1.0);
    /* into an empty counter: src's order */
    ck_assert(kd_counter_update(&e, &b));
    kd_sid bkeys[] = {3, 1};
    assert_keys(&e, bkeys, 2);
    /* from an empty counter: unchanged */
    kd_counter none = KD_COUNTER_INIT;
    ck_assert(kd_counter_update(&e, &none));
    assert_keys(&e, bkeys, 2);
    kd_counter_free(&a);
    kd_counter_free(&b);
    kd_counter_free(&e);
}
END_TEST

START_TEST(test_counter_most_common_ties)
{
    kd_counter c = KD_COUNTER_INIT;
    ck_assert_uint_eq(kd_counter_most_common(&c), 0);
    ck_assert(kd_counter_add(&c, 5, 1.0));
    ck_assert(kd_counter_add(&c, 6, 3.0));
    ck_assert(kd_counter_add(&c, 7, 3.0));
    ck_assert(kd_counter_add(&c, 8, 2.0));
    ck_assert_uint_eq(kd_counter_most_common(&c), 6);
    ck_assert(kd_counter_add(&c, 7, 0.5));
    ck_assert_uint_eq(kd_counter_most_common(&c), 7);
    ck_assert(kd_counter_add(&c, 5, 2.5));
    ck_assert_uint_eq(kd_counter_most_common(&c), 5); /* 3.5 ties 7; 5 came first */
    kd_counter_free(&c);
}
END_TEST

static void assert_items(const kd_counter_item *got, size_t n, const kd_sid *keys, size_t m)
{
    ck_assert_uint_eq(n, m);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(got[i].key == keys[i], "position %zu: key %u, expected %u", i, got[i].key,
                      keys[i]);
}

START_TEST(test_counter_most_common_n_stable)
{
    kd_counter c = KD_COUNTER_INIT;
    /* counts 2, 5, 2, 5, 1, 2, 5, 0 */
    double counts[] = {2, 5, 2, 5, 1, 2, 5, 0};
    for (kd_sid k = 0; k < 8; k++)
        ck_assert(kd_counter_add(&c, 10 + k, counts[k]));
    kd_counter_item out[8];
    /* a stable sort by count descending: 11 13 16 10 12 15 14 17 */
    kd_sid all[] = {11, 13, 16, 10, 12, 15, 14, 17};
    for (size_t n = 1; n <= 8; n++) {
        memset(out, 0, sizeof out);
        assert_items(out, kd_counter_most_common_n(&c, n, out), all, n);
    }
    memset(out, 0, sizeof out);
    assert_items(out, kd_counter_most_common_n(&c, 0, out), all, 8); /* 0 = all */
    memset(out, 0, sizeof out);
    assert_items(out, kd_counter_most_common_n(&c, 20, out), all, 8); /* more than held */
    ASSERT_DBL(out[0].count, 5.0);
    ASSERT_DBL(out[7].count, 0.0);
    kd_counter empty = KD_COUNTER_INIT;
    ck_assert_uint_eq(kd_counter_most_common_n(&empty, 2, out), 0);
    kd_counter_free(&c);
}
END_TEST

START_TEST(test_counter_growth)
{
    /* past the small-scan limit: the hash index must keep finding keys */
    enum { N = 5000 };
    kd_counter c = KD_COUNTER_INIT;
    for (kd_sid k = 0; k < N; k++)
        ck_assert(kd_counter_add(&c, 1 + k * 37u, (double)(k % 10)));
    ck_assert_uint_eq(c.n, N);
    for (kd_sid k = 0; k < N; k++) {
        ck_assert_uint_eq(c.items[k].key, 1 + k * 37u);
        ASSERT_DBL(kd_counter_get(&c, 1 + k * 37u), (double)(k % 10));
    }
    ASSERT_DBL(kd_counter_get(&c, 2), 0.0);
    /* adding to existing keys: no duplicates, order kept */
    for (kd_sid k = 0; k < N; k += 3)
        ck_assert(kd_counter_add(&c, 1 + k * 37u, 1.0));
    ck_assert_uint_eq(c.n, N);
    ASSERT_DBL(kd_counter_get(&c, 1 + 9 * 37u), 10.0);
    /* the first 10.0 is key index 9 */
    ck_assert_uint_eq(kd_counter_most_common(&c), 1 + 9 * 37u);
    kd_counter_item top[3];
    ck_assert_uint_eq(kd_counter_most_common_n(&c, 3, top), 3);
    ck_assert_uint_eq(top[0].key, 1 + 9 * 37u);
    ck_assert_uint_eq(top[1].key, 1 + 39 * 37u);
    ck_assert_uint_eq(top[2].key, 1 + 69 * 37u);
    kd_counter_item *all = malloc(N * sizeof *all);
    ck_assert_ptr_nonnull(all);
    ck_assert_uint_eq(kd_counter_most_common_n(&c, 0, all), N);
    for (size_t i = 1; i < N; i++)
        ck_assert(all[i - 1].count >= all[i].count);
    free(all);
    /* update into a large counter */
    kd_counter d = KD_COUNTER_INIT;
    ck_assert(kd_counter_update(&d, &c));
    ck_assert_uint_eq(d.n, N);
    ASSERT_DBL(kd_counter_get(&d, 1 + 4999 * 37u), kd_counter_get(&c, 1 + 4999 * 37u));
    kd_counter_free(&c);
    kd_counter_free(&d);
}
END_TEST

Suite *counter_suite(void)
{
    Suite *s = suite_create("counter");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_counter_add_get);
    tcase_add_test(tc, test_counter_update_order);
    tcase_add_test(tc, test_counter_most_common_ties);
    tcase_add_test(tc, test_counter_most_common_n_stable);
    tcase_add_test(tc, test_counter_growth);
    suite_add_tcase(s, tc);
    return s;
}
