/* test_intern.c — unit tests of the small hand-written utilities:
 * src/intern.c (the string interner), src/hashmap.c (the int64 -> int64
 * map) and include/kerndiff/sort.h (the typed merge sort). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/intern.h"
#include "kerndiff/sort.h"
#include "suites.h"

/* ---- interner -------------------------------------------------------- */

START_TEST(test_intern_same_string_same_id)
{
    kd_interner *in = kd_interner_new();
    ck_assert_ptr_nonnull(in);
    ck_assert_uint_eq(kd_interner_count(in), 0);
    kd_sid a = kd_intern_cstr(in, "gemm");
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_eq(kd_intern_cstr(in, "gemm"), a);
    /* a different buffer with the same bytes */
    char buf[] = "xgemmx";
    ck_assert_uint_eq(kd_intern(in, buf + 1, 4), a);
    ck_assert_uint_eq(kd_interner_count(in), 1);
    ck_assert_str_eq(kd_str(in, a), "gemm");
    ck_assert_uint_eq(kd_str_len(in, a), 4);
    kd_interner_free(in);
}
END_TEST

START_TEST(test_intern_different_strings_different_ids)
{
    kd_interner *in = kd_interner_new();
    const char *words[] = {"a", "b", "ab", "ba", "A", "a ", " a", "gemm", "gemm2", "7", "7.0"};
    size_t n = sizeof words / sizeof *words;
    kd_sid ids[sizeof words / sizeof *words];
    for (size_t i = 0; i < n; i++) {
        ids[i] = kd_intern_cstr(in, words[i]);
        ck_assert_uint_ne(ids[i], 0);
        /* ids are handed out densely, in first-intern order */
        ck_assert_uint_eq(ids[i], i + 1);
    }
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(kd_str(in, ids[i]), words[i]);
        for (size_t j = i + 1; j < n; j++)
            ck_assert_uint_ne(ids[i], ids[j]);
    }
    ck_assert_uint_eq(kd_interner_count(in), n);
    kd_interner_free(in);
}
END_TEST

START_TEST(test_intern_empty_string)
{
    kd_interner *in = kd_interner_new();
    /* id 0 means "absent" and reads as "" */
    ck_assert_str_eq(kd_str(in, 0), "");
    ck_assert_uint_eq(kd_str_len(in, 0), 0);
    kd_sid e = kd_intern(in, "", 0);
    ck_assert_uint_ne(e, 0);
    ck_assert_uint_eq(kd_intern_cstr(in, ""), e);
    ck_assert_uint_eq(kd_intern(in, "ignored", 0), e); /* len 0 is "" whatever s holds */
    ck_assert_str_eq(kd_str(in, e), "");
    ck_assert_uint_eq(kd_str_len(in, e), 0);
    ck_assert_uint_eq(kd_interner_count(in), 1);
    /* ids past the count read as "" */
    ck_assert_str_eq(kd_str(in, e + 1), "");
    ck_assert_uint_eq(kd_str_len(in, 12345), 0);
    kd_interner_free(in);
}
END_TEST

START_TEST(test_intern_embedded_bytes)
{
    kd_interner *in = kd_interner_new();
    kd_sid a = kd_intern(in, "a\0b", 3);
    kd_sid b = kd_intern(in, "a\0c", 3);
    kd_sid c = kd_intern(in, "a", 1);
    kd_sid d = kd_intern(in, "a\0", 2);
    kd_sid z = kd_intern(in, "\0", 1);
    kd_sid hi = kd_intern(in, "\xff\xfe\x80", 3);
    kd_sid utf = kd_intern_cstr(in, "caf\xc3\xa9");
    ck_assert_uint_ne(a, b);
    ck_assert_uint_ne(a, c);
    ck_assert_uint_ne(a, d);
    ck_assert_uint_ne(c, d);
    ck_assert_uint_ne(z, kd_intern(in, "", 0));
    ck_assert_uint_eq(kd_intern(in, "a\0b", 3), a);
    ck_assert_uint_eq(kd_intern(in, "\xff\xfe\x80", 3), hi);
    ck_assert_uint_eq(kd_str_len(in, a), 3);
    ck_assert_uint_eq(kd_str_len(in, d), 2);
    ck_assert_uint_eq(kd_str_len(in, z), 1);
    ck_assert_int_eq(memcmp(kd_str(in, a), "a\0b", 4), 0); /* stored NUL-terminated */
    ck_assert_int_eq(memcmp(kd_str(in, b), "a\0c", 4), 0);
    ck_assert_int_eq(memcmp(kd_str(in, hi), "\xff\xfe\x80", 4), 0);
    ck_assert_str_eq(kd_str(in, utf), "caf\xc3\xa9");
    ck_assert_uint_eq(kd_str_len(in, utf), 5);
    kd_interner_free(in);
}
END_TEST

START_TEST(test_intern_not_nul_terminated)
{
    kd_interner *in = kd_interner_new();
    char buf[8] = {'s', 't', 'r', 'e', 'a', 'm', '7', '8'}; /* no NUL */
    kd_sid a = kd_intern(in, buf, 6);
    kd_sid b = kd_intern(in, buf, 7);
    kd_sid c = kd_intern(in, buf, 8);
    ck_assert_str_eq(kd_str(in, a), "stream");
    ck_assert_str_eq(kd_str(in, b), "stream7");
    ck_assert_str_eq(kd_str(in, c), "stream78");
    ck_assert_uint_eq(kd_intern_cstr(in, "stream7"), b);
    /* the interner copies: changing the source does not change the string */
    buf[0] = 'S';
    ck_assert_str_eq(kd_str(in, a), "stream");
    kd_interner_free(in);
}
END_TEST

#define MANY 100000

START_TEST(test_intern_many_strings_growth)
{
    kd_interner *in = kd_interner_new();
    char buf[64];
    size_t bytes0 = kd_interner_bytes(in);
    const char *first = kd_str(in, kd_intern_cstr(in, "s0"));
    for (int i = 1; i < MANY; i++) {
        int n = snprintf(buf, sizeof buf, "s%d", i);
        kd_sid id = kd_intern(in, buf, (size_t)n);
        ck_assert_uint_eq(id, (kd_sid)i + 1);
    }
    ck_assert_uint_eq(kd_interner_count(in), MANY);
    ck_assert_uint_gt(kd_interner_bytes(in), bytes0);
    /* strings do not move when the tables grow */
    ck_assert_ptr_eq(kd_str(in, 1), first);
    /* every string is found again after all the growth, in reverse order */
    for (int i = MANY - 1; i >= 0; i--) {
        int n = snprintf(buf, sizeof buf, "s%d", i);
        ck_assert_uint_eq(kd_intern(in, buf, (size_t)n), (kd_sid)i + 1);
        ck_assert_str_eq(kd_str(in, (kd_sid)i + 1), buf);
        ck_assert_uint_eq(kd_str_len(in, (kd_sid)i + 1), (size_t)n);
    }
    ck_assert_uint_eq(kd_interner_count(in), MANY);
    /* near-duplicates are new strings */
    kd_sid x = kd_intern_cstr(in, "s100000");
    ck_assert_uint_eq(x, MANY + 1);
    kd_interner_free(in);
}
END_TEST

static char *pattern_string(size_t len, unsigned seed)
{
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        s[i] = (char)('a' + (x >> 16) % 26);
    }
    s[len] = '\0';
    return s;
}

START_TEST(test_intern_long_strings)
{
    kd_interner *in = kd_interner_new();
    const size_t MiB = (size_t)1 << 20;
    size_t lens[] = {3 * MiB + 17, MiB - 1, MiB, MiB + 1, 2 * MiB};
    size_t nl = sizeof lens / sizeof *lens;
    char *longs[5];
    kd_sid lid[5];
    kd_sid small[5][3];
    char buf[32];
    kd_sid before = kd_intern_cstr(in, "before");
    for (size_t i = 0; i < nl; i++) {
        longs[i] = pattern_string(lens[i], (unsigned)i);
        lid[i] = kd_intern(in, longs[i], lens[i]);
        ck_assert_uint_ne(lid[i], 0);
        /* small strings around each long one share the regular blocks */
        for (int j = 0; j < 3; j++) {
            snprintf(buf, sizeof buf, "small-%zu-%d", i, j);
            small[i][j] = kd_intern_cstr(in, buf);
        }
    }
    /* a long string that differs only in its last byte is a new string */
    longs[0][lens[0] - 1] ^= 1;
    kd_sid other = kd_intern(in, longs[0], lens[0]);
    ck_assert_uint_ne(other, lid[0]);
    longs[0][lens[0] - 1] ^= 1;
    ck_assert_uint_ge(kd_interner_bytes(in), 8 * MiB);
    for (size_t i = 0; i < nl; i++) {
        ck_assert_uint_eq(kd_str_len(in, lid[i]), lens[i]);
        ck_assert_int_eq(memcmp(kd_str(in, lid[i]), longs[i], lens[i] + 1), 0);
        ck_assert_uint_eq(kd_intern(in, longs[i], lens[i]), lid[i]);
        for (int j = 0; j < 3; j++) {
            snprintf(buf, sizeof buf, "small-%zu-%d", i, j);
            ck_assert_str_eq(kd_str(in, small[i][j]), buf);
            ck_assert_uint_eq(kd_intern_cstr(in, buf), small[i][j]);
        }
    }
    ck_assert_str_eq(kd_str(in, before), "before");
    /* fill past one regular block with medium strings and check nothing was overwritten */
    kd_sid med[40];
    for (int i = 0; i < 40; i++) {
        char *m = pattern_string(60000, 100u + (unsigned)i);
        med[i] = kd_intern(in, m, 60000);
        free(m);
    }
    for (int i = 0; i < 40; i++) {
        char *m = pattern_string(60000, 100u + (unsigned)i);
        ck_assert_int_eq(memcmp(kd_str(in, med[i]), m, 60001), 0);
        free(m);
    }
    for (size_t i = 0; i < nl; i++) {
        ck_assert_int_eq(memcmp(kd_str(in, lid[i]), longs[i], lens[i] + 1), 0);
        free(longs[i]);
    }
    kd_interner_free(in);
}
END_TEST

START_TEST(test_intern_free_null)
{
    kd_interner_free(NULL); /* a no-op */
}
END_TEST

/* ---- hashmap --------------------------------------------------------- */

START_TEST(test_map_empty)
{
    kd_i64map m;
    kd_i64map_init(&m);
    int64_t v = 99;
    ck_assert(!kd_i64map_get(&m, 0, &v));
    ck_assert(!kd_i64map_get(&m, INT64_MIN, &v));
    ck_assert(!kd_i64map_get(&m, 5, NULL));
    ck_assert_int_eq(v, 99);
    ck_assert_uint_eq(m.n, 0);
    kd_i64map_free(&m);
    kd_i64map_free(&m); /* free twice is fine: free leaves an empty map */
}
END_TEST

START_TEST(test_map_put_get_overwrite)
{
    kd_i64map m;
    kd_i64map_init(&m);
    int64_t v;
    ck_assert(kd_i64map_put(&m, 7, 70));
    ck_assert(kd_i64map_put(&m, 8, 80));
    ck_assert(kd_i64map_get(&m, 7, &v));
    ck_assert_int_eq(v, 70);
    ck_assert(kd_i64map_get(&m, 8, &v));
    ck_assert_int_eq(v, 80);
    ck_assert(kd_i64map_get(&m, 8, NULL));
    ck_assert(!kd_i64map_get(&m, 9, &v));
    ck_assert_uint_eq(m.n, 2);
    /* a later put wins ("a later event wins") and does not add a key */
    ck_assert(kd_i64map_put(&m, 7, 71));
    ck_assert(kd_i64map_get(&m, 7, &v));
    ck_assert_int_eq(v, 71);
    ck_assert_uint_eq(m.n, 2);
    /* values may be anything, including INT64_MIN (KD_NOID) */
    ck_assert(kd_i64map_put(&m, 8, INT64_MIN));
    ck_assert(kd_i64map_get(&m, 8, &v));
    ck_assert_int_eq(v, INT64_MIN);
    kd_i64map_free(&m);
    ck_assert(!kd_i64map_get(&m, 7, &v));
    /* reusable after free */
    ck_assert(kd_i64map_put(&m, 7, 1));
    ck_assert(kd_i64map_get(&m, 7, &v));
    ck_assert_int_eq(v, 1);
    kd_i64map_free(&m);
}
END_TEST

START_TEST(test_map_special_keys)
{
    kd_i64map m;
    kd_i64map_init(&m);
    const int64_t keys[] = {0, -1, 1, -2, INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1,
                            (int64_t)1 << 32, -((int64_t)1 << 32), (int64_t)1 << 47,
                            (int64_t)1 << 62, -((int64_t)1 << 62)};
    size_t n = sizeof keys / sizeof *keys;
    for (size_t i = 0; i < n; i++)
        ck_assert(kd_i64map_put(&m, keys[i], (int64_t)i * 10 - 50));
    ck_assert_uint_eq(m.n, n);
    for (size_t i = 0; i < n; i++) {
        int64_t v = 12345;
        ck_assert_msg(kd_i64map_get(&m, keys[i], &v), "key %lld", (long long)keys[i]);
        ck_assert_int_eq(v, (int64_t)i * 10 - 50);
    }
    ck_assert(!kd_i64map_get(&m, 2, NULL));
    ck_assert(!kd_i64map_get(&m, -3, NULL));
    ck_assert(!kd_i64map_get(&m, INT64_MIN + 2, NULL));
    kd_i64map_free(&m);

    /* INT64_MIN alone, and as the only key overwritten */
    kd_i64map_init(&m);
    ck_assert(!kd_i64map_get(&m, INT64_MIN, NULL));
    ck_assert(kd_i64map_put(&m, INT64_MIN, 1));
    ck_assert(kd_i64map_put(&m, INT64_MIN, 2));
    int64_t v;
    ck_assert(kd_i64map_get(&m, INT64_MIN, &v));
    ck_assert_int_eq(v, 2);
    ck_assert_uint_eq(m.n, 1);
    ck_assert(!kd_i64map_get(&m, 0, NULL));
    kd_i64map_free(&m);
}
END_TEST

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

START_TEST(test_map_growth)
{
    kd_i64map m;
    kd_i64map_init(&m);
    const int64_t N = 200000;
    /* strided keys (multiples of 2^20, negative too) stress the hash's spread */
    for (int64_t i = 0; i < N; i++) {
        int64_t k = (i % 2 ? -1 : 1) * (i << 20);
        ck_assert(kd_i64map_put(&m, k, i));
    }
    ck_assert_uint_eq(m.n, (size_t)N);
    ck_assert_uint_ge(m.cap, (size_t)N);
    ck_assert_uint_eq(m.cap & (m.cap - 1), 0); /* power of two */
    for (int64_t i = 0; i < N; i++) {
        int64_t k = (i % 2 ? -1 : 1) * (i << 20), v = -1;
        ck_assert(kd_i64map_get(&m, k, &v));
        ck_assert_int_eq(v, i);
    }
    for (int64_t i = 0; i < N; i += 3)
        ck_assert(kd_i64map_put(&m, (i % 2 ? -1 : 1) * (i << 20), -i));
    ck_assert_uint_eq(m.n, (size_t)N);
    for (int64_t i = 0; i < N; i++) {
        int64_t k = (i % 2 ? -1 : 1) * (i << 20), v = 0;
        ck_assert(kd_i64map_get(&m, k, &v));
        ck_assert_int_eq(v, i % 3 ? i : -i);
        ck_assert(!kd_i64map_get(&m, k + 1, NULL));
    }
    kd_i64map_free(&m);
}
END_TEST

START_TEST(test_map_random_against_array)
{
    /* random keys from a small range (many repeats) checked against a plain array */
    enum { RANGE = 5000, OPS = 50000 };
    int64_t *ref = malloc(RANGE * sizeof *ref);
    unsigned char *has = calloc(RANGE, 1);
    ck_assert(ref && has);
    kd_i64map m;
    kd_i64map_init(&m);
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t distinct = 0;
    for (int op = 0; op < OPS; op++) {
        int64_t k = (int64_t)(xorshift(&seed) % RANGE);
        int64_t key = (k - RANGE / 2) * 1000003; /* negative and positive, spread */
        int64_t val = (int64_t)xorshift(&seed);
        ck_assert(kd_i64map_put(&m, key, val));
        if (!has[k])
            distinct++;
        has[k] = 1;
        ref[k] = val;
        if (op % 997 == 0) {
            for (int64_t j = 0; j < RANGE; j++) {
                int64_t v;
                bool got = kd_i64map_get(&m, (j - RANGE / 2) * 1000003, &v);
                ck_assert_int_eq(got, has[j] != 0);
                if (got)
                    ck_assert_int_eq(v, ref[j]);
            }
        }
    }
    ck_assert_uint_eq(m.n, distinct);
    kd_i64map_free(&m);
    free(ref);
    free(has);
}
END_TEST

/* ---- sort.h ---------------------------------------------------------- */

typedef struct {
    int key;
    size_t pos; /* input position: stability is checked on it */
} sort_item;

/* by key only, so equal keys show whether the sort is stable */
static int cmp_sort_key(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

KD_DEFINE_SORT(sort_items_by_key, sort_item, cmp_sort_key)

START_TEST(test_sort_stable_and_sorted)
{
    /* every size around the run length and its doublings, few distinct keys */
    static const size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 64, 65, 100, 1000, 4097, 50000};
    uint64_t x = 88172645463325252u;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        sort_item *v = malloc((n ? n : 1) * sizeof *v);
        size_t *count = calloc(64, sizeof *count);
        ck_assert(v && count);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int key = z % 3 == 0 ? (int)(n - i) : (int)(x % 64); /* descending or random */
            v[i] = (sort_item){key % 64, i};
            count[key % 64]++;
        }
        sort_items_by_key(v, n);
        size_t *seen = calloc(64, sizeof *seen);
        ck_assert(seen);
        for (size_t i = 0; i < n; i++) {
            seen[v[i].key]++;
            if (i == 0)
                continue;
            ck_assert_msg(v[i - 1].key <= v[i].key, "n=%zu: unsorted at %zu", n, i);
            if (v[i - 1].key == v[i].key)
                ck_assert_msg(v[i - 1].pos < v[i].pos, "n=%zu: not stable at %zu", n, i);
        }
        for (int k = 0; k < 64; k++)
            ck_assert_uint_eq(seen[k], count[k]); /* a permutation of the input */
        free(seen);
        free(count);
        free(v);
    }
}
END_TEST

Suite *intern_suite(void)
{
    Suite *s = suite_create("intern");
    TCase *tc = tcase_create("interner");
    tcase_add_test(tc, test_intern_same_string_same_id);
    tcase_add_test(tc, test_intern_different_strings_different_ids);
    tcase_add_test(tc, test_intern_empty_string);
    tcase_add_test(tc, test_intern_embedded_bytes);
    tcase_add_test(tc, test_intern_not_nul_terminated);
    tcase_add_test(tc, test_intern_many_strings_growth);
    tcase_add_test(tc, test_intern_long_strings);
    tcase_add_test(tc, test_intern_free_null);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("hashmap");
    tcase_add_test(tm, test_map_empty);
    tcase_add_test(tm, test_map_put_get_overwrite);
    tcase_add_test(tm, test_map_special_keys);
    tcase_add_test(tm, test_map_growth);
    tcase_add_test(tm, test_map_random_against_array);
    tcase_add_test(tm, test_sort_stable_and_sorted);
    tcase_set_timeout(tm, 60);
    suite_add_tcase(s, tm);
    return s;
}
