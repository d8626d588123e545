/* test_counter.c — unit tests of src/counter.c. */
#include "suites.h"

START_TEST(test_counter_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *counter_suite(void)
{
    Suite *s = suite_create("counter");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_counter_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
