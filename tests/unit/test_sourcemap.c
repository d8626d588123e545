/* test_sourcemap.c — unit tests of src/sourcemap.c. */
#include "config.h"

#include "suites.h"

START_TEST(test_sourcemap_placeholder) { ck_assert_int_eq(1, 1); }
END_TEST

Suite *sourcemap_suite(void)
{
    Suite *s = suite_create("sourcemap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sourcemap_placeholder);
    suite_add_tcase(s, tc);
    return s;
}
