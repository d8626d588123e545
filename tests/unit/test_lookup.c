/* test_lookup.c — unit tests of src/lookup.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_lookup_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *lookup_suite(void)
{
    Suite *s = suite_create("lookup");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_lookup_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
