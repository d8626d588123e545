/* test_report.c — unit tests of src/report.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_report_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_report_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
