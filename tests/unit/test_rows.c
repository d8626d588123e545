/* test_rows.c — unit tests of src/rows.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_rows_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *rows_suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_rows_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
