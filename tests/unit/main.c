/* main.c — runs every unit suite; CK_FORK defaults apply. */
#include <stdlib.h>

#include "suites.h"

const char *kd_test_srcdir(void)
{
    const char *d = getenv("KD_SRCDIR");
    return d && *d ? d : ".";
}

int main(void)
{
    SRunner *sr = srunner_create(value_suite());
    srunner_add_suite(sr, text_suite());
    srunner_add_suite(sr, classify_suite());
    srunner_add_suite(sr, intern_suite());
    srunner_add_suite(sr, hashmap_suite());
    srunner_add_suite(sr, load_suite());
    srunner_add_suite(sr, stage_suite());
    srunner_add_suite(sr, extract_suite());
    srunner_add_suite(sr, discover_suite());
    srunner_add_suite(sr, counter_suite());
    srunner_add_suite(sr, overlap_suite());
    srunner_add_suite(sr, aggregate_suite());
    srunner_add_suite(sr, sourcemap_suite());
    srunner_add_suite(sr, lookup_suite());
    srunner_add_suite(sr, rows_suite());
    srunner_add_suite(sr, kernelsites_suite());
    srunner_add_suite(sr, report_suite());
    srunner_add_suite(sr, diff_suite());
    srunner_add_suite(sr, split_suite());
    srunner_add_suite(sr, match_suite());
    srunner_add_suite(sr, rules_file_suite());
    srunner_add_suite(sr, taxonomy_suite());
    srunner_add_suite(sr, stats_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
