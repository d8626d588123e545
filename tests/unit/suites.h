/* suites.h — every Check suite of the unit-test runner; one file per module. */
#ifndef KD_TEST_SUITES_H
#define KD_TEST_SUITES_H
#include <check.h>

Suite *value_suite(void);
Suite *text_suite(void);
Suite *classify_suite(void);
Suite *intern_suite(void);
Suite *hashmap_suite(void);
Suite *load_suite(void);
Suite *stage_suite(void);
Suite *extract_suite(void);
Suite *discover_suite(void);
Suite *counter_suite(void);
Suite *overlap_suite(void);
Suite *aggregate_suite(void);
Suite *sourcemap_suite(void);
Suite *lookup_suite(void);
Suite *rows_suite(void);
Suite *kernelsites_suite(void);
Suite *report_suite(void);
Suite *diff_suite(void);
Suite *split_suite(void);
Suite *match_suite(void);
Suite *rules_file_suite(void);
Suite *taxonomy_suite(void);
Suite *stats_suite(void);

#include "kerndiff/load.h"
/* Fails the test unless a serial and a split load of the same bytes agree:
 * both loaded with equal records, ids and counters, or both failed with the
 * same message (test_split.c). */
void kd_test_expect_same_load(const kd_trace *serial, const kd_error *serial_err,
                              const kd_trace *split, const kd_error *split_err, const char *what);
/* Loads data serially and split (cut at the middle whatever the size),
 * expects both to agree, returns the serial trace (err: its error). */
kd_trace *kd_test_load_both(const void *data, size_t len, const char *label, kd_error *err);

/* gzip (one member, windowBits 31) of len bytes, malloc'd; *out_len set
 * (test_load.c). */
unsigned char *kd_test_gzip(const void *data, size_t len, size_t *out_len);

/* Directory of the source tree's fixtures (KD_SRCDIR env or "."). */
const char *kd_test_srcdir(void);
#endif
