/* test_intern.c — unit tests of src/intern.c. */
#include "suites.h"

START_TEST(test_intern_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *intern_suite(void)
{
    Suite *s = suite_create("intern");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_intern_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
