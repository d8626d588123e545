/* test_value.c — unit tests of src/value.c. */
#include "suites.h"

START_TEST(test_value_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *value_suite(void)
{
    Suite *s = suite_create("value");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_value_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
