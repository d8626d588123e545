/* test_overlap.c — unit tests of src/overlap.c. */
#include "suites.h"

START_TEST(test_overlap_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *overlap_suite(void)
{
    Suite *s = suite_create("overlap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_overlap_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
