/* test_discover.c — unit tests of src/discover.c. */
#include "suites.h"

START_TEST(test_discover_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *discover_suite(void)
{
    Suite *s = suite_create("discover");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_discover_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
