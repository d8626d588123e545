/* test_kernelsites.c — unit tests of src/kernelsites.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_kernelsites_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *kernelsites_suite(void)
{
    Suite *s = suite_create("kernelsites");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_kernelsites_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
