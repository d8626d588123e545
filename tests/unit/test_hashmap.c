/* test_hashmap.c — the int64 map's hash spreads adversarial keys (Reliability
 * item 9): probes are counted, never timed. A hash that drops key bits sends
 * every kp << 32 | loc key with the same loc to one probe run, so its probe
 * count grows with the square of the key count; a full-width mixer keeps the
 * average near the 1 / (1 - load) of linear probing. */
#include "config.h"

#include <check.h>
#include <stdint.h>

#include "kerndiff/hashmap.h"
#include "suites.h"

/* Average probes per insert and per lookup of a present and of an absent key
 * stay below these, whatever the key pattern. At the map's maximum load of
 * 3/4 linear probing averages 2.5 probes for a hit and 8.5 for a miss; an
 * insert also pays for its share of the rehashes (each key is moved about
 * once more over the doublings), about 5.4 in all at 2^16 keys. The old
 * hash took 13,700 per insert on kp<<32|loc keys. */
#define MAX_AVG_INSERT 7.0
#define MAX_AVG_HIT 4.0
#define MAX_AVG_MISS 12.0

typedef int64_t (*key_fn)(size_t i);

/* kernel position << 32 | location, locations few (kernelsites' site index) */
static int64_t key_pair_few_lo(size_t i) { return (int64_t)(((uint64_t)i << 32) | (i % 3)); }
/* the same with the high half fixed and the low half counting */
static int64_t key_pair_fixed_hi(size_t i) { return (int64_t)((7ull << 32) | (uint64_t)i); }
/* only the high 32 bits vary */
static int64_t key_high_only(size_t i) { return (int64_t)((uint64_t)i << 32); }
/* only bits 44 and up vary (up to the sign bit for 2^17 keys) */
static int64_t key_top_bits(size_t i) { return (int64_t)(((uint64_t)i << 44) | 1); }
/* multiples of a large power of two (aligned pointers, ids scaled by 2^20) */
static int64_t key_pow2_stride(size_t i) { return (int64_t)i << 20; }
/* stage << 32 | name for three stages */
static int64_t key_stage_name(size_t i) { return (int64_t)(((uint64_t)(i % 3) << 32) | (i / 3)); }
/* multiples of the golden-ratio constant the old hash multiplied by */
static int64_t key_golden(size_t i) { return (int64_t)((uint64_t)i * 0x61C8864680B583EBull); }
/* plain consecutive ids, negative too */
static int64_t key_signed(size_t i) { return i % 2 ? -(int64_t)i : (int64_t)i; }

static const struct {
    const char *name;
    key_fn key;
} patterns[] = {
    {"kp<<32|loc", key_pair_few_lo}, {"7<<32|i", key_pair_fixed_hi}, {"i<<32", key_high_only},
    {"i<<44|1", key_top_bits},       {"i<<20", key_pow2_stride},     {"stage<<32|name", key_stage_name},
    {"i*golden", key_golden},        {"+-i", key_signed},
};

/* key(i) for n <= i < 2n are distinct from every inserted key: absent keys */
static void check_pattern(const char *name, key_fn key, size_t n)
{
    kd_i64map m;
    kd_i64map_init(&m);
    for (size_t i = 0; i < n; i++)
        ck_assert(kd_i64map_put(&m, key(i), (int64_t)i));
    ck_assert_uint_eq(m.n, n);
    double insert = (double)m.probes / (double)n;
    ck_assert_msg(insert < MAX_AVG_INSERT, "%s: %.2f probes per insert", name, insert);
    size_t hit = 0, miss = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = -1;
        ck_assert(kd_i64map_get(&m, key(i), &v));
        ck_assert_int_eq(v, (int64_t)i);
        hit += kd_i64map_probe_count(&m, key(i));
        ck_assert(!kd_i64map_get(&m, key(n + i), NULL));
        miss += kd_i64map_probe_count(&m, key(n + i));
    }
    ck_assert_msg((double)hit / (double)n < MAX_AVG_HIT, "%s: %.2f probes per hit", name,
                  (double)hit / (double)n);
    ck_assert_msg((double)miss / (double)n < MAX_AVG_MISS, "%s: %.2f probes per miss", name,
                  (double)miss / (double)n);
    kd_i64map_free(&m);
}

START_TEST(test_adversarial_keys_probe_near_linear)
{
    /* 2^16 keys: with the old hash, kp<<32|loc made every probe run thousands long */
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++)
        check_pattern(patterns[p].name, patterns[p].key, (size_t)1 << 16);
}
END_TEST

START_TEST(test_probe_count_basics)
{
    kd_i64map m;
    kd_i64map_init(&m);
    ck_assert_uint_eq(kd_i64map_probe_count(&m, 5), 0);
    ck_assert_uint_eq(m.probes, 0);
    ck_assert(kd_i64map_put(&m, 5, 1));
    ck_assert_uint_ge(m.probes, 1);
    ck_assert_uint_ge(kd_i64map_probe_count(&m, 5), 1);
    ck_assert_uint_ge(kd_i64map_probe_count(&m, 6), 1);
    size_t before = m.probes;
    ck_assert(kd_i64map_put(&m, 5, 2)); /* overwrite: probes still counted */
    ck_assert_uint_gt(m.probes, before);
    kd_i64map_free(&m);
    ck_assert_uint_eq(m.probes, 0); /* free leaves an empty map */
}
END_TEST

START_TEST(test_growth_keeps_values)
{
    /* the counter survives rehashes, and so does every pair */
    kd_i64map m;
    kd_i64map_init(&m);
    size_t last = 0;
    for (size_t i = 0; i < 5000; i++) {
        ck_assert(kd_i64map_put(&m, key_pair_few_lo(i), -(int64_t)i));
        ck_assert_uint_gt(m.probes, last);
        last = m.probes;
    }
    for (size_t i = 0; i < 5000; i++) {
        int64_t v = 0;
        ck_assert(kd_i64map_get(&m, key_pair_few_lo(i), &v));
        ck_assert_int_eq(v, -(int64_t)i);
    }
    kd_i64map_free(&m);
}
END_TEST

Suite *hashmap_suite(void)
{
    Suite *s = suite_create("hashmap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_adversarial_keys_probe_near_linear);
    tcase_add_test(tc, test_probe_count_basics);
    tcase_add_test(tc, test_growth_keeps_values);
    suite_add_tcase(s, tc);
    return s;
}
