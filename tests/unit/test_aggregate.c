/* test_aggregate.c — unit tests of src/aggregate.c. */
#include "suites.h"

START_TEST(test_aggregate_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *aggregate_suite(void)
{
    Suite *s = suite_create("aggregate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_aggregate_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
