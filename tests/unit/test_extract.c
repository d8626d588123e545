/* test_extract.c — unit tests of src/extract.c. */
#include "suites.h"

START_TEST(test_extract_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *extract_suite(void)
{
    Suite *s = suite_create("extract");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_extract_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
