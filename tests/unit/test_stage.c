/* test_stage.c — unit tests of src/stage.c. */
#include "suites.h"

START_TEST(test_stage_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *stage_suite(void)
{
    Suite *s = suite_create("stage");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_stage_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
