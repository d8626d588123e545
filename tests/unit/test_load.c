/* test_load.c — unit tests of src/load.c. */
#include "suites.h"

START_TEST(test_load_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *load_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_load_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
