/* test_text.c — unit tests of src/text.c. */
#include "suites.h"

START_TEST(test_text_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_text_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
