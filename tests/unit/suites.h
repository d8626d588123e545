/* suites.h — every Check suite of the unit-test runner; one file per module. */
#ifndef KD_TEST_SUITES_H
#define KD_TEST_SUITES_H
#include <check.h>

Suite *value_suite(void);
Suite *text_suite(void);
Suite *intern_suite(void);
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

/* Directory of the source tree's fixtures (KD_SRCDIR env or "."). */
const char *kd_test_srcdir(void);
#endif
