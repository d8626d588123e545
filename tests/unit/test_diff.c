/* test_diff.c — unit tests of src/diff.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_diff_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_diff_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
