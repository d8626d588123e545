/* test_value.c — unit tests of src/value.c: Python float repr, int(str),
 * float(str), and truthiness / float() / coerce_optional_int / str() of a
 * JSON scalar (reference §0, §1). Expected values were checked against
 * CPython 3.11. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/value.h"
#include "suites.h"

/* ---- kd_jval builders ------------------------------------------------- */

static kd_jval jv(kd_jtype type, const char *text)
{
    kd_jval v = {type, false, false, text, text ? strlen(text) : 0};
    return v;
}

static kd_jval jbool(bool b)
{
    kd_jval v = {KD_J_BOOL, b, false, NULL, 0};
    return v;
}

static kd_jval jcontainer(kd_jtype type, bool empty)
{
    kd_jval v = {type, false, empty, NULL, 0};
    return v;
}

/* ---- kd_format_pyfloat ------------------------------------------------ */

static const struct {
    double v;
    const char *repr;
} repr_cases[] = {
    {7.0, "7.0"},
    {1e16, "1e+16"},
    {1e15, "1000000000000000.0"},
    {9999999999999998.0, "9999999999999998.0"},
    {1e-5, "1e-05"},
    {0.0001, "0.0001"},
    {123456789012345680.0, "1.2345678901234568e+17"},
    {0.1 + 0.2, "0.30000000000000004"},
    {0.1, "0.1"},
    {47.25, "47.25"},
    {2735.0, "2735.0"},
    {-1.5e-7, "-1.5e-07"},
    {1.5e-5, "1.5e-05"},
    {100.0, "100.0"},
    {0.5, "0.5"},
    {1e22, "1e+22"},
    {1e300, "1e+300"},
    {5e-324, "5e-324"},
    {1.7976931348623157e308, "1.7976931348623157e+308"},
    {2.2250738585072014e-308, "2.2250738585072014e-308"},
    /* a power of two whose shortest digits lie on the wide side of its
     * lopsided rounding interval: the nearest 16-digit value does not read
     * back, the one above it does */
    {7.120236347223045e-307, "7.120236347223045e-307"},
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {-7.0, "-7.0"},
};

START_TEST(test_format_pyfloat_matches_python_repr)
{
    for (size_t i = 0; i < sizeof repr_cases / sizeof repr_cases[0]; i++) {
        char buf[32];
        int n = kd_format_pyfloat(repr_cases[i].v, buf, sizeof buf);
        ck_assert_msg(strcmp(buf, repr_cases[i].repr) == 0, "case %zu: got %s want %s", i, buf,
                      repr_cases[i].repr);
        ck_assert_int_eq(n, (int)strlen(repr_cases[i].repr));
    }
}
END_TEST

START_TEST(test_format_pyfloat_non_finite)
{
    char buf[32];
    ck_assert_int_eq(kd_format_pyfloat(INFINITY, buf, sizeof buf), 3);
    ck_assert_str_eq(buf, "inf");
    kd_format_pyfloat(-INFINITY, buf, sizeof buf);
    ck_assert_str_eq(buf, "-inf");
    kd_format_pyfloat(NAN, buf, sizeof buf);
    ck_assert_str_eq(buf, "nan");
    kd_format_pyfloat(-NAN, buf, sizeof buf);
    ck_assert_str_eq(buf, "nan"); /* repr ignores the sign of a NaN */
}
END_TEST

START_TEST(test_format_pyfloat_truncates_like_snprintf)
{
    char buf[4];
    ck_assert_int_eq(kd_format_pyfloat(123.25, buf, sizeof buf), 6);
    ck_assert_str_eq(buf, "123");
}
END_TEST


/* The repr before its 15-digit fast path (value.c shortest_digits tried
 * every length from 1): the fast path must give the same text. */
typedef struct {
    char d[24];
    int n;
    int exp10;
} ref_digits;

/* Reads "%.*e" output of a positive number ("1.2345e+07"). */
static void ref_digits_from_e_format(const char *s, ref_digits *dd)
{
    dd->n = 0;
    for (; *s && *s != 'e'; s++) {
        if ((*s >= '0' && *s <= '9'))
            dd->d[dd->n++] = *s;
    }
    dd->exp10 = *s == 'e' ? atoi(s + 1) : 0;
}

static double ref_digits_value(const ref_digits *dd)
{
    char buf[48];
    /* d.ddd form keeps exp10 the exponent of the first digit */
    snprintf(buf, sizeof buf, "%c.%.*se%d", dd->d[0], dd->n - 1, dd->d + 1, dd->exp10);
    return strtod(buf, NULL);
}

/* The p-digit decimal one unit of the last digit away (up or down). */
static void ref_step_last_digit(ref_digits *dd, bool up)
{
    int i = dd->n - 1;
    if (up) {
        while (i >= 0 && dd->d[i] == '9')
            dd->d[i--] = '0';
        if (i >= 0) {
            dd->d[i]++;
        } else { /* 99..9 -> 100..0: one decade up */
            dd->d[0] = '1';
            dd->exp10++;
        }
    } else {
        while (i >= 0 && dd->d[i] == '0')
            dd->d[i--] = '9';
        if (i >= 0)
            dd->d[i]--;
        if (dd->d[0] == '0') { /* 100..0 -> 99..9: one decade down */
            memset(dd->d, '9', (size_t)dd->n);
            dd->exp10--;
        }
    }
}

/* Shortest digits that read back as v (v finite, > 0), the nearest such
 * string when several have that length: what repr() (dtoa mode 0) prints.
 * The nearest p-digit decimal is tried first; at a power of two the rounding
 * interval is lopsided, so the neighbour on the other side is tried too. */
static void ref_shortest_digits(double v, ref_digits *dd)
{
    char buf[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        ref_digits_from_e_format(buf, dd);
        double nearest = strtod(buf, NULL);
        if (nearest == v)
            break;
        ref_digits other = *dd;
        ref_step_last_digit(&other, nearest < v);
        if (ref_digits_value(&other) == v) {
            *dd = other;
            break;
        }
    }
    while (dd->n > 1 && dd->d[dd->n - 1] == '0')
        dd->n--;
}

/* format_float_short(repr): exponent form when exp10 < -4 or >= 16. */
static int ref_render_python_float(const ref_digits *dd, bool negative, char *out)
{
    char *p = out;
    if (negative)
        *p++ = '-';
    int n = dd->n, decpt = dd->exp10 + 1;
    if (dd->exp10 < -4 || dd->exp10 >= 16) {
        *p++ = dd->d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, dd->d + 1, (size_t)(n - 1));
            p += n - 1;
        }
        p += sprintf(p, "e%c%02d", dd->exp10 < 0 ? '-' : '+', abs(dd->exp10));
    } else if (decpt <= 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -decpt; i++)
            *p++ = '0';
        memcpy(p, dd->d, (size_t)n);
        p += n;
    } else if (decpt >= n) {
        memcpy(p, dd->d, (size_t)n);
        p += n;
        for (int i = n; i < decpt; i++)
            *p++ = '0';
        *p++ = '.';
        *p++ = '0';
    } else {
        memcpy(p, dd->d, (size_t)decpt);
        p += decpt;
        *p++ = '.';
        memcpy(p, dd->d + decpt, (size_t)(n - decpt));
        p += n - decpt;
    }
    *p = '\0';
    return (int)(p - out);
}

static void ref_format_pyfloat(double v, char *out)
{
    ref_digits dd;
    ref_shortest_digits(fabs(v), &dd);
    ref_render_python_float(&dd, v < 0, out);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check_against_ref(double v)
{
    if (!isfinite(v) || v == 0.0)
        return;
    char got[64], want[64];
    kd_format_pyfloat(v, got, sizeof got);
    ref_format_pyfloat(v, want);
    ck_assert_msg(strcmp(got, want) == 0, "%.17g: got %s want %s", v, got, want);
}

START_TEST(test_format_pyfloat_fast_path_matches_full_search)
{
    static const double edge[] = {
        DBL_MIN, DBL_MIN * 2, DBL_MIN / 2, 4.9e-324, DBL_MAX, DBL_EPSILON, 1.0, 0.1, 0.3,
        0.1 + 0.2, 1e15, 1e16, 1e17, 9007199254740993.0, 123456789012345.6,
        1234567890123456.7, 7.120236347223045e-307, 2.0, 1024.0, 0.000123, 1e-5,
        12345.678, 999999999999999.9, 99999999999999.99, 9.999999999999999e22,
    };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        check_against_ref(edge[i]);
        check_against_ref(-edge[i]);
        check_against_ref(nextafter(edge[i], 0.0));
        check_against_ref(nextafter(edge[i], INFINITY));
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 800; i++) {
        uint64_t bits = xorshift(&s);
        double v;
        memcpy(&v, &bits, sizeof v);
        check_against_ref(v); /* any bit pattern, subnormals included */
        /* trace-like values: microseconds with a few decimals */
        check_against_ref((double)(xorshift(&s) % 100000000) / 1000.0);
        check_against_ref((double)(xorshift(&s) % 1000000) / 7.0);
        /* powers of two: the lopsided rounding intervals */
        check_against_ref(ldexp(1.0, (int)(xorshift(&s) % 2098) - 1074));
    }
}
END_TEST

/* ---- kd_py_int_from_str ----------------------------------------------- */

static const struct {
    const char *s;
    bool ok;
    int64_t value;
    bool overflow;
} int_cases[] = {
    {"1_000", true, 1000, false},
    {" +42 ", true, 42, false},
    {"-7", true, -7, false},
    {"007", true, 7, false},
    {"0_0", true, 0, false},
    {"\t12\n", true, 12, false},
    {"\xc2\xa0" "12\xe3\x80\x80", true, 12, false},      /* U+00A0, U+3000 around */
    {"\xd9\xa1\xd9\xa2", true, 12, false},               /* Arabic-Indic digits */
    {"\xef\xbc\x91\xef\xbc\x90", true, 10, false},       /* fullwidth digits */
    {"9223372036854775807", true, INT64_MAX, false},
    {"-9223372036854775808", true, INT64_MIN, false},
    {"9223372036854775808", false, 0, true},
    {"-9223372036854775809", false, 0, true},
    {"99999999999999999999999999", false, 0, true},
    {"3.0", false, 0, false},
    {"1e3", false, 0, false},
    {"0x10", false, 0, false},
    {"1__0", false, 0, false},
    {"_1", false, 0, false},
    {"1_", false, 0, false},
    {"+_1", false, 0, false},
    {"", false, 0, false},
    {"   ", false, 0, false},
    {"+", false, 0, false},
    {"- 1", false, 0, false},
    {"1 2", false, 0, false},
    {"\x1c" "1", false, 0, false}, /* isspace() but not stripped by int() */
    {"None", false, 0, false},
    {"1\xff", false, 0, false},    /* invalid UTF-8 */
};

START_TEST(test_py_int_from_str_cases)
{
    for (size_t i = 0; i < sizeof int_cases / sizeof int_cases[0]; i++) {
        int64_t v = -12345;
        bool overflow = !int_cases[i].overflow;
        bool ok = kd_py_int_from_str(int_cases[i].s, strlen(int_cases[i].s), &v, &overflow);
        ck_assert_msg(ok == int_cases[i].ok, "case %zu (%s): ok %d", i, int_cases[i].s, ok);
        ck_assert_msg(overflow == int_cases[i].overflow, "case %zu: overflow %d", i, overflow);
        if (ok)
            ck_assert_msg(v == int_cases[i].value, "case %zu: value %lld", i, (long long)v);
    }
}
END_TEST

START_TEST(test_py_int_from_str_uses_length_not_nul)
{
    int64_t v = 0;
    ck_assert(kd_py_int_from_str("123456", 3, &v, NULL));
    ck_assert_int_eq(v, 123);
    ck_assert(!kd_py_int_from_str("1\0" "2", 3, &v, NULL)); /* embedded NUL */
    ck_assert(!kd_py_int_from_str(NULL, 0, &v, NULL));
}
END_TEST

/* ---- kd_py_float_from_str --------------------------------------------- */

static const struct {
    const char *s;
    bool ok;
    const char *repr; /* of the parsed value */
} float_cases[] = {
    {" 1.5", true, "1.5"},
    {"1e3", true, "1000.0"},
    {"1_0", true, "10.0"},
    {"1e1_0", true, "10000000000.0"},
    {"1_0.5", true, "10.5"},
    {".5", true, "0.5"},
    {"5.", true, "5.0"},
    {"-0", true, "-0.0"},
    {"inf", true, "inf"},
    {"-Infinity", true, "-inf"},
    {"+iNf", true, "inf"},
    {"nAn", true, "nan"},
    {"-nan", true, "nan"},
    {"1e999", true, "inf"},
    {"1e-999", true, "0.0"},
    {"\xd9\xa1.\xd9\xa5", true, "1.5"}, /* Arabic-Indic 1.5 */
    {"\xe3\x80\x80" "2.5\xc2\x85", true, "2.5"},
    {"0.1", true, "0.1"},
    {"", false, NULL},
    {" ", false, NULL},
    {".", false, NULL},
    {"e5", false, NULL},
    {"1e", false, NULL},
    {"1e+", false, NULL},
    {"1_e5", false, NULL},
    {"1._5", false, NULL},
    {"_1", false, NULL},
    {"1_", false, NULL},
    {"1__0", false, NULL},
    {"infinit", false, NULL},
    {"nan(1)", false, NULL},
    {"0x10", false, NULL},
    {"1 2", false, NULL},
    {"--1", false, NULL},
    {"\x1f" "1", false, NULL},
    {"abc", false, NULL},
};

START_TEST(test_py_float_from_str_cases)
{
    for (size_t i = 0; i < sizeof float_cases / sizeof float_cases[0]; i++) {
        double v = 0.0;
        bool ok = kd_py_float_from_str(float_cases[i].s, strlen(float_cases[i].s), &v);
        ck_assert_msg(ok == float_cases[i].ok, "case %zu (%s): ok %d", i, float_cases[i].s, ok);
        if (ok) {
            char buf[32];
            kd_format_pyfloat(v, buf, sizeof buf);
            ck_assert_msg(strcmp(buf, float_cases[i].repr) == 0, "case %zu: %s", i, buf);
        }
    }
    double v = 0.0;
    ck_assert(!kd_py_float_from_str("1\0" "2", 3, &v));
}
END_TEST

/* ---- kd_jval_truthy --------------------------------------------------- */

START_TEST(test_jval_truthy)
{
    kd_jval absent = jv(KD_J_ABSENT, NULL), null = jv(KD_J_NULL, NULL);
    ck_assert(!kd_jval_truthy(&absent));
    ck_assert(!kd_jval_truthy(&null));
    kd_jval t = jbool(true), f = jbool(false);
    ck_assert(kd_jval_truthy(&t));
    ck_assert(!kd_jval_truthy(&f));
    const char *falsy_numbers[] = {"0", "-0"};
    for (size_t i = 0; i < 2; i++) {
        kd_jval v = jv(KD_J_INT, falsy_numbers[i]);
        ck_assert(!kd_jval_truthy(&v));
    }
    const char *falsy_floats[] = {"0.0", "-0.0", "0e5", "1e-400"};
    for (size_t i = 0; i < 4; i++) {
        kd_jval v = jv(KD_J_FLOAT, falsy_floats[i]);
        ck_assert_msg(!kd_jval_truthy(&v), "%s", falsy_floats[i]);
    }
    kd_jval i7 = jv(KD_J_INT, "7"), i10 = jv(KD_J_INT, "10"), fl = jv(KD_J_FLOAT, "0.5");
    kd_jval nan = jv(KD_J_FLOAT, "NaN");
    ck_assert(kd_jval_truthy(&i7));
    ck_assert(kd_jval_truthy(&i10));
    ck_assert(kd_jval_truthy(&fl));
    ck_assert(kd_jval_truthy(&nan)); /* bool(float('nan')) is True */
    kd_jval empty = jv(KD_J_STRING, ""), zero_str = jv(KD_J_STRING, "0");
    ck_assert(!kd_jval_truthy(&empty));
    ck_assert(kd_jval_truthy(&zero_str));
    kd_jval ea = jcontainer(KD_J_ARRAY, true), a = jcontainer(KD_J_ARRAY, false);
    kd_jval eo = jcontainer(KD_J_OBJECT, true), o = jcontainer(KD_J_OBJECT, false);
    ck_assert(!kd_jval_truthy(&ea));
    ck_assert(kd_jval_truthy(&a));
    ck_assert(!kd_jval_truthy(&eo));
    ck_assert(kd_jval_truthy(&o));
}
END_TEST

/* ---- kd_jval_float ---------------------------------------------------- */

START_TEST(test_jval_float)
{
    double d = -1.0;
    kd_jval t = jbool(true), f = jbool(false);
    ck_assert(kd_jval_float(&t, &d));
    ck_assert(d == 1.0);
    ck_assert(kd_jval_float(&f, &d));
    ck_assert(d == 0.0);
    kd_jval i = jv(KD_J_INT, "12345678901234567890");
    ck_assert(kd_jval_float(&i, &d));
    ck_assert(d == 12345678901234567890.0);
    kd_jval fl = jv(KD_J_FLOAT, "2.5e3");
    ck_assert(kd_jval_float(&fl, &d));
    ck_assert(d == 2500.0);
    kd_jval big = jv(KD_J_FLOAT, "1e999");
    ck_assert(kd_jval_float(&big, &d));
    ck_assert(isinf(d));
    kd_jval inf = jv(KD_J_FLOAT, "-Infinity");
    ck_assert(kd_jval_float(&inf, &d));
    ck_assert(isinf(d) && d < 0);
    kd_jval s = jv(KD_J_STRING, " 1.5 ");
    ck_assert(kd_jval_float(&s, &d));
    ck_assert(d == 1.5);
    kd_jval s2 = jv(KD_J_STRING, "1_0");
    ck_assert(kd_jval_float(&s2, &d));
    ck_assert(d == 10.0);

    /* where Python raises */
    char huge[400];
    memset(huge, '9', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    kd_jval hi = jv(KD_J_INT, huge); /* float(int) -> OverflowError */
    kd_jval bad = jv(KD_J_STRING, "abc"), empty = jv(KD_J_STRING, "");
    kd_jval null = jv(KD_J_NULL, NULL), absent = jv(KD_J_ABSENT, NULL);
    kd_jval arr = jcontainer(KD_J_ARRAY, false), obj = jcontainer(KD_J_OBJECT, true);
    const kd_jval *raising[] = {&hi, &bad, &empty, &null, &absent, &arr, &obj};
    for (size_t k = 0; k < sizeof raising / sizeof raising[0]; k++)
        ck_assert_msg(!kd_jval_float(raising[k], &d), "case %zu", k);
}
END_TEST

/* ---- kd_jval_coerce_int ----------------------------------------------- */

START_TEST(test_coerce_none_values)
{
    int64_t v = 99;
    bool overflow = true;
    kd_jval cases[] = {jv(KD_J_ABSENT, NULL),       jv(KD_J_NULL, NULL),
                       jv(KD_J_STRING, ""),         jv(KD_J_STRING, "None"),
                       jv(KD_J_STRING, "3.0"),      jv(KD_J_STRING, "abc"),
                       jv(KD_J_STRING, " None"),    jv(KD_J_FLOAT, "2.5"),
                       jv(KD_J_FLOAT, "NaN"),       jv(KD_J_FLOAT, "Infinity"),
                       jv(KD_J_FLOAT, "-Infinity"), jcontainer(KD_J_ARRAY, true),
                       jcontainer(KD_J_ARRAY, false), jcontainer(KD_J_OBJECT, false)};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        overflow = true;
        ck_assert_msg(!kd_jval_coerce_int(&cases[i], &v, &overflow), "case %zu", i);
        ck_assert_msg(!overflow, "case %zu sets overflow", i);
    }
    ck_assert_int_eq(v, 99); /* untouched */
}
END_TEST

START_TEST(test_coerce_values)
{
    static const struct {
        kd_jtype type;
        const char *text;
        int64_t want;
    } cases[] = {
        {KD_J_INT, "42", 42},
        {KD_J_INT, "-0", 0},
        {KD_J_INT, "-9223372036854775808", INT64_MIN},
        {KD_J_INT, "7", 7}, /* the 18-digit fast path, and either side of it */
        {KD_J_INT, "999999999999999999", INT64_C(999999999999999999)},
        {KD_J_INT, "-999999999999999999", -INT64_C(999999999999999999)},
        {KD_J_INT, "1234567890123456789", INT64_C(1234567890123456789)},
        {KD_J_INT, "9223372036854775807", INT64_MAX},
        {KD_J_FLOAT, "2.0", 2},
        {KD_J_FLOAT, "3.0", 3},
        {KD_J_FLOAT, "1e3", 1000},
        {KD_J_FLOAT, "-0.0", 0},
        {KD_J_FLOAT, "-9.223372036854775808e18", INT64_MIN},
        {KD_J_STRING, "1_000", 1000},
        {KD_J_STRING, "  12 ", 12},
        {KD_J_STRING, "-5", -5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kd_jval v = jv(cases[i].type, cases[i].text);
        int64_t got = 0;
        bool overflow = true;
        ck_assert_msg(kd_jval_coerce_int(&v, &got, &overflow), "case %zu", i);
        ck_assert_msg(got == cases[i].want, "case %zu: %lld", i, (long long)got);
        ck_assert(!overflow);
    }
    kd_jval t = jbool(true), f = jbool(false);
    int64_t got = -1;
    ck_assert(kd_jval_coerce_int(&t, &got, NULL));
    ck_assert_int_eq(got, 1);
    ck_assert(kd_jval_coerce_int(&f, &got, NULL));
    ck_assert_int_eq(got, 0);
}
END_TEST

START_TEST(test_coerce_overflow)
{
    kd_jval cases[] = {jv(KD_J_INT, "9223372036854775808"), jv(KD_J_INT, "-9223372036854775809"),
                       jv(KD_J_INT, "123456789012345678901234567890"),
                       jv(KD_J_FLOAT, "1e20"), jv(KD_J_FLOAT, "9.223372036854775807e18"),
                       jv(KD_J_STRING, "9223372036854775808")};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 0;
        bool overflow = false;
        ck_assert_msg(!kd_jval_coerce_int(&cases[i], &v, &overflow), "case %zu", i);
        ck_assert_msg(overflow, "case %zu: no overflow flag", i);
        ck_assert(!kd_jval_coerce_int(&cases[i], &v, NULL)); /* flag is optional */
    }
}
END_TEST

/* ---- kd_jval_pystr ---------------------------------------------------- */

#define ASSERT_PYSTR(val, want)                                                                \
    do {                                                                                       \
        kd_jval v_ = (val);                                                                    \
        size_t n_ = 999;                                                                       \
        char *s_ = kd_jval_pystr(&v_, &n_);                                                    \
        ck_assert_ptr_nonnull(s_);                                                             \
        ck_assert_str_eq(s_, (want));                                                          \
        ck_assert_uint_eq(n_, strlen(want));                                                   \
        free(s_);                                                                              \
    } while (0)

START_TEST(test_pystr_scalars)
{
    ASSERT_PYSTR(jv(KD_J_ABSENT, NULL), "None");
    ASSERT_PYSTR(jv(KD_J_NULL, NULL), "None");
    ASSERT_PYSTR(jbool(true), "True");
    ASSERT_PYSTR(jbool(false), "False");
    ASSERT_PYSTR(jv(KD_J_INT, "7"), "7");
    ASSERT_PYSTR(jv(KD_J_INT, "-0"), "0");
    ASSERT_PYSTR(jv(KD_J_INT, "123456789012345678901234567890"),
                 "123456789012345678901234567890");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "7.0"), "7.0");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "7.50"), "7.5");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "1E2"), "100.0");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "1e16"), "1e+16");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "1.0e-5"), "1e-05");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "-0.0"), "-0.0");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "1e999"), "inf");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "NaN"), "nan");
    ASSERT_PYSTR(jv(KD_J_FLOAT, "-Infinity"), "-inf");
    ASSERT_PYSTR(jv(KD_J_STRING, "stream 7"), "stream 7");
    ASSERT_PYSTR(jv(KD_J_STRING, ""), "");
}
END_TEST

START_TEST(test_pystr_string_keeps_bytes_and_containers_fail)
{
    kd_jval s = {KD_J_STRING, false, false, "a\0b-tail", 3};
    size_t n = 0;
    char *out = kd_jval_pystr(&s, &n);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(n, 3);
    ck_assert(memcmp(out, "a\0b", 4) == 0); /* and NUL-terminated */
    free(out);
    out = kd_jval_pystr(&s, NULL); /* out_len is optional */
    ck_assert_ptr_nonnull(out);
    free(out);
    kd_jval a = jcontainer(KD_J_ARRAY, false), o = jcontainer(KD_J_OBJECT, true);
    ck_assert_ptr_null(kd_jval_pystr(&a, &n));
    ck_assert_ptr_null(kd_jval_pystr(&o, &n));
}
END_TEST

/* ---- kd_decimal_to_double ------------------------------------------- */

/* The double is strtod's, bit for bit, whenever the function answers. */
static bool decimal_agrees(const char *lit, bool *answered)
{
    double got = 0.0, want = strtod(lit, NULL);
    *answered = kd_decimal_to_double(lit, strlen(lit), &got);
    return !*answered || memcmp(&got, &want, sizeof got) == 0;
}

START_TEST(test_decimal_fixed_cases)
{
    static const char *const yes[] = {
        "0", "-0", "7", "0.3", "1.7", "5.3", "100.000", "-123.25", "0.30000000000000004",
        "1661203463029566.123", "1712195495519689.047", "1712195495519695.812",
        "9007199254740991", "4503599627370497.25", "1234567890123456.789",
        "0.1234567890123456789", "0.1844674407370955161", "3.0000000000000000000000",
        "0.0000000000000000000001",
    };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        bool answered;
        ck_assert_msg(decimal_agrees(yes[i], &answered), "%s differs from strtod", yes[i]);
        ck_assert_msg(answered, "%s left to strtod", yes[i]);
    }
    /* left to strtod: exponents, too many digits, >= 2^53 with a big mantissa,
     * more than 22 fraction digits, not a plain literal */
    static const char *const no[] = {
        "1e3", "1.5E2", "18446744073709551616", "123456789012345678901.5", "9007199254740993",
        "0.00000000000000000000001", ".5", "-", "", "1.2.3", "nan", "0x10", "1 ",
        "1844674407370955161", "12345678901234567.89",
        "4503599627370497.5", /* a tie (the ulp is 1 there): strtod rounds it to even */
    };
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        double d = 42.0;
        ck_assert_msg(!kd_decimal_to_double(no[i], strlen(no[i]), &d), "%s answered", no[i]);
        ck_assert(d == 42.0);
    }
}
END_TEST

START_TEST(test_decimal_random_against_strtod)
{
    /* 400,000 literals shaped like trace times: 1-19 integer digits, 0-9
     * fraction digits (sometimes trailing zeros), both signs */
    uint64_t x = 0x9E3779B97F4A7C15u;
    size_t answered_n = 0, n = 400000;
    for (size_t t = 0; t < n; t++) {
        char lit[48];
        size_t at = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x & 1)
            lit[at++] = '-';
        unsigned int_digits = 1 + (unsigned)((x >> 8) % 19), frac_digits = (unsigned)((x >> 16) % 10);
        for (unsigned i = 0; i < int_digits; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            lit[at++] = (char)('0' + (i == 0 && int_digits > 1 ? 1 + x % 9 : x % 10));
        }
        if (frac_digits) {
            lit[at++] = '.';
            for (unsigned i = 0; i < frac_digits; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                lit[at++] = (char)('0' + ((x >> 3) & 3 ? x % 10 : 0));
            }
        }
        lit[at] = '\0';
        bool answered;
        ck_assert_msg(decimal_agrees(lit, &answered), "%s differs from strtod", lit);
        answered_n += answered;
    }
    /* nearly all are answered (the rest: 2^53 and beyond, or too long) */
    ck_assert_msg(answered_n > n * 7 / 10, "only %zu of %zu answered", answered_n, n);
}
END_TEST

Suite *value_suite(void)
{
    Suite *s = suite_create("value");
    TCase *repr = tcase_create("float_repr");
    tcase_add_test(repr, test_format_pyfloat_matches_python_repr);
    tcase_add_test(repr, test_format_pyfloat_non_finite);
    tcase_add_test(repr, test_format_pyfloat_truncates_like_snprintf);
    tcase_add_test(repr, test_format_pyfloat_fast_path_matches_full_search);
    suite_add_tcase(s, repr);

    TCase *parse = tcase_create("parse");
    tcase_add_test(parse, test_py_int_from_str_cases);
    tcase_add_test(parse, test_py_int_from_str_uses_length_not_nul);
    tcase_add_test(parse, test_py_float_from_str_cases);
    suite_add_tcase(s, parse);

    TCase *jval = tcase_create("jval");
    tcase_add_test(jval, test_jval_truthy);
    tcase_add_test(jval, test_jval_float);
    tcase_add_test(jval, test_coerce_none_values);
    tcase_add_test(jval, test_coerce_values);
    tcase_add_test(jval, test_coerce_overflow);
    tcase_add_test(jval, test_pystr_scalars);
    tcase_add_test(jval, test_pystr_string_keeps_bytes_and_containers_fail);
    tcase_add_test(parse, test_decimal_fixed_cases);
    tcase_add_test(parse, test_decimal_random_against_strtod);
    suite_add_tcase(s, jval);
    return s;
}
