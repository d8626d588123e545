/* value.c — Python semantics of one JSON scalar (reference §0, §1):
 * truthiness, float(), int(str), coerce_optional_int, str() and float repr.
 *
 * Number literals arrive as raw (pointer, length) text from the loader; they
 * are copied to a NUL-terminated buffer before strtod. */
#include "config.h"

#include "kerndiff/value.h"

#include "kerndiff/text.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

/* A NUL-terminated copy of (text, len): on the stack when short. */
typedef struct {
    char *buf;
    char local[128];
} cstr_copy;

static const char *cstr_copy_make(cstr_copy *c, const char *text, size_t len)
{
    c->buf = len < sizeof c->local ? c->local : malloc(len + 1);
    if (!c->buf)
        return NULL;
    if (len)
        memcpy(c->buf, text, len);
    c->buf[len] = '\0';
    return c->buf;
}

static void cstr_copy_release(cstr_copy *c)
{
    if (c->buf && c->buf != c->local)
        free(c->buf);
    c->buf = NULL;
}

/* strtod of a JSON number literal (also the loader's NaN/Infinity stand-ins,
 * which strtod reads as well). false only on out-of-memory. */
static bool literal_to_double(const char *text, size_t len, double *out)
{
    cstr_copy c;
    const char *s = cstr_copy_make(&c, text, len);
    if (!s)
        return false;
    *out = strtod(s, NULL);
    cstr_copy_release(&c);
    return true;
}

/* ------------------------------------------------------------------ */
/* Decimal literals without strtod                                      */
/* ------------------------------------------------------------------ */

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 kd_u128;

/* Whether the positive normal double with bits cb is the one nearest
 * m / 10^k (strictly: a tie returns false). With c = M 2^E,
 * |m / 10^k - c| < 2^(E-1) iff |2 m 2^-E - 2 M 10^k| < 10^k, all integers:
 * 2 m 2^-E < 2^128 needs -63 <= E <= 0, 2 M 10^k < 2^128 holds for k <= 22.
 * A power of two is refused: the gap below it is half as wide. */
static bool nearest_of(uint64_t m, unsigned k, uint64_t cb)
{
    int biased = (int)(cb >> 52);
    uint64_t frac = cb & ((UINT64_C(1) << 52) - 1);
    int E = biased - 1075;
    if (biased == 0 || biased >= 0x7ff || E > 0 || E < -63 || frac == 0)
        return false;
    uint64_t M = frac | (UINT64_C(1) << 52);
    kd_u128 p10 = 1;
    for (unsigned i = 0; i < k; i++)
        p10 *= 10;
    kd_u128 a = (kd_u128)m << (1 - E), b = (kd_u128)(2 * M) * p10;
    kd_u128 d = a > b ? a - b : b - a;
    return d < p10;
}
#endif

bool kd_decimal_to_double(const char *s, size_t len, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const uint64_t limit = (UINT64_MAX - 9) / 10; /* m * 10 + 9 still fits */
    size_t i = 0, end = len;
    bool neg = len && s[0] == '-';
    if (neg)
        i++;
    size_t first = i;
    uint64_t m = 0;
    unsigned d;
    for (; i < end && (d = (unsigned)(s[i] - '0')) <= 9; i++) {
        if (m > limit)
            return false;
        m = m * 10 + d;
    }
    if (i == first)
        return false;
    size_t frac = 0;
    if (i < end && s[i] == '.') {
        i++;
        while (end > i && s[end - 1] == '0') /* trailing fraction zeros change nothing */
            end--;
        for (; i < end && (d = (unsigned)(s[i] - '0')) <= 9; i++, frac++) {
            if (m > limit)
                return false;
            m = m * 10 + d;
        }
    }
    if (i != end || frac > 22)
        return false; /* an exponent, or too many digits: strtod */
    double v;
    if (m < (UINT64_C(1) << 53)) {
        /* Clinger: m and 10^frac exact, one correctly rounded division */
        v = (double)m / pow10[frac];
    } else {
#ifdef __SIZEOF_INT128__
        /* two roundings: within an ulp of the answer, so it is this or a
         * neighbour, and the exact test says which */
        double c = (double)m / pow10[frac];
        uint64_t cb;
        memcpy(&cb, &c, sizeof cb); /* positive: the neighbours are cb +- 1 */
        if (nearest_of(m, (unsigned)frac, cb))
            ;
        else if (nearest_of(m, (unsigned)frac, cb + 1))
            cb++;
        else if (nearest_of(m, (unsigned)frac, cb - 1))
            cb--;
        else
            return false;
        memcpy(&v, &cb, sizeof v);
#else
        return false;
#endif
    }
    *out = neg ? -v : v;
    return true;
}

static char *dup_bytes(const char *s, size_t len, size_t *out_len)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    if (out_len)
        *out_len = len;
    return out;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Py_ISSPACE: the ASCII whitespace int() and float() strip after the
 * Unicode-to-ASCII transform (0x1c-0x1f are not among them). */
static bool is_c_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* ------------------------------------------------------------------ */
/* Python int(str) and float(str)                                      */
/* ------------------------------------------------------------------ */

/* _PyUnicode_TransformDecimalAndSpaceToASCII: Unicode whitespace becomes
 * ' ', Unicode decimal digits their ASCII digit, ASCII stays; any other
 * character (or invalid UTF-8) makes the literal invalid (false). The
 * result is never longer than the input. */
static bool ascii_number_text(const char *s, size_t len, char *dst, size_t *dst_len)
{
    size_t pos = 0, out = 0;
    while (pos < len) {
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (cp < 0x80) {
            dst[out++] = (char)cp;
        } else if (cp == KD_UTF8_INVALID) {
            return false;
        } else if (kd_is_py_space(cp)) {
            dst[out++] = ' ';
        } else {
            int d = kd_unicode_decimal(cp);
            if (d < 0)
                return false;
            dst[out++] = (char)('0' + d);
        }
        pos += n;
    }
    *dst_len = out;
    return true;
}

/* PyLong_FromString(base 10) on ASCII text: spaces, one sign, digits with
 * single '_' between them, spaces, end. Magnitudes beyond int64 set
 * *overflow. */
static bool parse_int_ascii(const char *a, size_t n, int64_t *out, bool *overflow)
{
    size_t i = 0;
    while (i < n && is_c_space(a[i]))
        i++;
    bool negative = false;
    if (i < n && (a[i] == '+' || a[i] == '-'))
        negative = a[i++] == '-';
    if (i >= n || !is_digit(a[i]))
        return false; /* no digits, or a leading '_' */
    uint64_t magnitude = 0;
    bool too_big = false;
    char prev = '\0';
    for (; i < n && (is_digit(a[i]) || a[i] == '_'); prev = a[i], i++) {
        if (a[i] == '_') {
            if (prev == '_')
                return false;
            continue;
        }
        unsigned d = (unsigned)(a[i] - '0');
        if (magnitude > (UINT64_MAX - d) / 10)
            too_big = true;
        else
            magnitude = magnitude * 10 + d;
    }
    if (prev == '_')
        return false;
    while (i < n && is_c_space(a[i]))
        i++;
    if (i != n)
        return false; /* trailing garbage or an embedded NUL */
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    if (too_big || magnitude > limit) {
        if (overflow)
            *overflow = true;
        return false;
    }
    if (negative)
        *out = magnitude == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)magnitude;
    else
        *out = (int64_t)magnitude;
    return true;
}

bool kd_py_int_from_str(const char *s, size_t len, int64_t *out, bool *overflow)
{
    if (overflow)
        *overflow = false;
    if (!s)
        return false;
    char local[128];
    char *buf = len < sizeof local ? local : malloc(len + 1);
    if (!buf)
        return false;
    size_t n = 0;
    int64_t value = 0;
    bool ok = ascii_number_text(s, len, buf, &n) && parse_int_ascii(buf, n, &value, overflow);
    if (buf != local)
        free(buf);
    if (ok && out)
        *out = value;
    return ok;
}

/* The '_' rule of _Py_string_to_number_with_underscores, applied to the
 * whole text: every '_' sits between two digits. Removes them in place. */
static bool remove_digit_underscores(char *a, size_t *n)
{
    size_t out = 0;
    char prev = '\0';
    for (size_t i = 0; i < *n; i++) {
        char c = a[i];
        if (c == '_') {
            if (!is_digit(prev))
                return false;
        } else {
            if (prev == '_' && !is_digit(c))
                return false;
            a[out++] = c;
        }
        prev = c;
    }
    if (prev == '_')
        return false;
    *n = out;
    return true;
}

static bool match_word_ci(const char *a, size_t n, const char *word)
{
    size_t m = strlen(word);
    if (n != m)
        return false;
    for (size_t i = 0; i < m; i++) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return false;
    }
    return true;
}

/* The float syntax of _Py_dg_strtod / _Py_parse_inf_or_nan on stripped
 * ASCII: [sign] (inf | infinity | nan | digits [. digits] | . digits)
 * [(e|E) [sign] digits]. No hex, no "nan(...)", no inner spaces. */
static bool is_py_float_syntax(const char *a, size_t n)
{
    size_t i = 0;
    if (i < n && (a[i] == '+' || a[i] == '-'))
        i++;
    if (match_word_ci(a + i, n - i, "inf") || match_word_ci(a + i, n - i, "infinity") ||
        match_word_ci(a + i, n - i, "nan"))
        return true;
    size_t digits = 0;
    while (i < n && is_digit(a[i]))
        i++, digits++;
    if (i < n && a[i] == '.') {
        i++;
        while (i < n && is_digit(a[i]))
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < n && (a[i] == 'e' || a[i] == 'E')) {
        i++;
        if (i < n && (a[i] == '+' || a[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < n && is_digit(a[i]))
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

/* PyFloat_FromString on the ASCII-transformed text a[0..n) (modified). */
static bool parse_float_ascii(char *a, size_t n, double *out)
{
    if (memchr(a, '\0', n))
        return false; /* embedded NUL */
    if (memchr(a, '_', n) && !remove_digit_underscores(a, &n))
        return false;
    size_t b = 0, e = n;
    while (b < e && is_c_space(a[b]))
        b++;
    while (e > b && is_c_space(a[e - 1]))
        e--;
    if (b == e || !is_py_float_syntax(a + b, e - b))
        return false;
    a[e] = '\0';
    /* glibc strtod is correctly rounded like Python's dtoa, gives +-inf on
     * overflow (Python does not raise there) and reads inf/nan the same. */
    *out = strtod(a + b, NULL);
    return true;
}

bool kd_py_float_from_str(const char *s, size_t len, double *out)
{
    if (!s)
        return false;
    char local[128];
    char *buf = len < sizeof local ? local : malloc(len + 1);
    if (!buf)
        return false;
    size_t n = 0;
    double value = 0.0;
    bool ok = ascii_number_text(s, len, buf, &n) && parse_float_ascii(buf, n, &value);
    if (buf != local)
        free(buf);
    if (ok && out)
        *out = value;
    return ok;
}

/* ------------------------------------------------------------------ */
/* Python float repr                                                    */
/* ------------------------------------------------------------------ */

/* value = d[0].d[1..n-1] x 10^exp10, digits as ASCII. */
typedef struct {
    char d[24];
    int n;
    int exp10;
} decimal_digits;

/* Reads "%.*e" output of a positive number ("1.2345e+07"). */
static void digits_from_e_format(const char *s, decimal_digits *dd)
{
    dd->n = 0;
    for (; *s && *s != 'e'; s++) {
        if (is_digit(*s))
            dd->d[dd->n++] = *s;
    }
    dd->exp10 = *s == 'e' ? atoi(s + 1) : 0;
}

static double digits_value(const decimal_digits *dd)
{
    char buf[48];
    /* d.ddd form keeps exp10 the exponent of the first digit */
    snprintf(buf, sizeof buf, "%c.%.*se%d", dd->d[0], dd->n - 1, dd->d + 1, dd->exp10);
    return strtod(buf, NULL);
}

/* The p-digit decimal one unit of the last digit away (up or down). */
static void step_last_digit(decimal_digits *dd, bool up)
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
static void shortest_digits(double v, decimal_digits *dd)
{
    char buf[48];
    int first = 1;
    /* Fast path, same result: for a normal double the 15-digit decimals are
     * more than 4 ulp apart, so if some p-digit decimal (p <= 15) reads back
     * as v it is the nearest one of p digits, and padded with zeros it is
     * also the nearest 15-digit decimal, which then reads back as v too.
     * So when the nearest 15-digit decimal reads back, its digits without
     * trailing zeros are what the loop below finds; when it does not, no
     * p <= 15 can succeed and the loop may start at 16. */
    if (v >= DBL_MIN) {
        snprintf(buf, sizeof buf, "%.14e", v);
        if (strtod(buf, NULL) == v) {
            digits_from_e_format(buf, dd);
            while (dd->n > 1 && dd->d[dd->n - 1] == '0')
                dd->n--;
            return;
        }
        first = 16;
    }
    int exp2;
    bool pow2 = frexp(v, &exp2) == 0.5;
    for (int p = first; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        digits_from_e_format(buf, dd);
        double nearest = strtod(buf, NULL);
        if (nearest == v)
            break;
        /* away from a power of two the rounding interval is symmetric and
         * the neighbour, farther from v than the nearest, cannot read back */
        if (!pow2)
            continue;
        decimal_digits other = *dd;
        step_last_digit(&other, nearest < v);
        if (digits_value(&other) == v) {
            *dd = other;
            break;
        }
    }
    while (dd->n > 1 && dd->d[dd->n - 1] == '0')
        dd->n--;
}

/* format_float_short(repr): exponent form when exp10 < -4 or >= 16. */
static int render_python_float(const decimal_digits *dd, bool negative, char *out)
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

int kd_format_pyfloat(double v, char *buf, size_t bufsz)
{
    char tmp[64];
    int len;
    if (isnan(v)) {
        len = sprintf(tmp, "nan");
    } else if (isinf(v)) {
        len = sprintf(tmp, v < 0 ? "-inf" : "inf");
    } else if (v == 0.0) {
        len = sprintf(tmp, signbit(v) ? "-0.0" : "0.0");
    } else {
        decimal_digits dd;
        shortest_digits(fabs(v), &dd);
        len = render_python_float(&dd, v < 0, tmp);
    }
    if (buf && bufsz > 0) {
        size_t copy = (size_t)len < bufsz ? (size_t)len : bufsz - 1;
        memcpy(buf, tmp, copy);
        buf[copy] = '\0';
    }
    return len;
}

/* ------------------------------------------------------------------ */
/* kd_jval                                                              */
/* ------------------------------------------------------------------ */

/* A JSON int literal is zero when it has no non-zero digit ("0", "-0"). */
static bool int_literal_is_zero(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] >= '1' && text[i] <= '9')
            return false;
    }
    return true;
}

bool kd_jval_truthy(const kd_jval *v)
{
    if (!v)
        return false;
    switch (v->type) {
    case KD_J_BOOL:
        return v->boolean;
    case KD_J_INT:
        return !int_literal_is_zero(v->text, v->len);
    case KD_J_FLOAT: {
        /* the parsed value decides: 1e-400 is 0.0 (falsy), NaN is truthy */
        double d = 0.0;
        return literal_to_double(v->text, v->len, &d) && d != 0.0;
    }
    case KD_J_STRING:
        return v->len > 0;
    case KD_J_ARRAY:
    case KD_J_OBJECT:
        return !v->container_empty;
    default:
        return false;
    }
}

bool kd_jval_float(const kd_jval *v, double *out)
{
    if (!v)
        return false;
    double d = 0.0;
    switch (v->type) {
    case KD_J_BOOL:
        d = v->boolean ? 1.0 : 0.0;
        break;
    case KD_J_INT:
        /* float(int) raises OverflowError when the int is beyond double */
        if (!literal_to_double(v->text, v->len, &d) || isinf(d))
            return false;
        break;
    case KD_J_FLOAT:
        if (!literal_to_double(v->text, v->len, &d))
            return false;
        break;
    case KD_J_STRING:
        if (!kd_py_float_from_str(v->text, v->len, &d))
            return false;
        break;
    default:
        return false;
    }
    if (out)
        *out = d;
    return true;
}

/* int(x) of an integral float; beyond int64 it is an overflow. */
static bool integral_double_to_int(double d, int64_t *out, bool *overflow)
{
    /* [-2^63, 2^63) is exactly the range that converts */
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
        if (overflow)
            *overflow = true;
        return false;
    }
    if (out)
        *out = (int64_t)d;
    return true;
}

bool kd_jval_coerce_int(const kd_jval *v, int64_t *out, bool *overflow)
{
    if (overflow)
        *overflow = false;
    if (!v)
        return false;
    switch (v->type) {
    case KD_J_BOOL:
        /* bool is an int subclass: True -> 1 */
        if (out)
            *out = v->boolean ? 1 : 0;
        return true;
    case KD_J_INT: {
        /* a JSON integer literal is -?[0-9]+: with up to 18 digits it fits
         * int64 as it is; anything else takes Python's rules */
        const char *p = v->text;
        size_t n = v->len, i = n && p[0] == '-', k = i;
        int64_t x = 0;
        for (; k < n && n - i <= 18 && p[k] >= '0' && p[k] <= '9'; k++)
            x = x * 10 + (p[k] - '0');
        if (k == n && n > i) {
            if (out)
                *out = i ? -x : x;
            return true;
        }
        return kd_py_int_from_str(v->text, v->len, out, overflow);
    }
    case KD_J_FLOAT: {
        /* reference §1: only an integral float converts; NaN/inf do not */
        double d = 0.0;
        if (!literal_to_double(v->text, v->len, &d) || !isfinite(d) || d != trunc(d))
            return false;
        return integral_double_to_int(d, out, overflow);
    }
    case KD_J_STRING:
        /* value in (None, "", "None") -> None, else int(str(value)) */
        if (v->len == 0 || (v->len == 4 && memcmp(v->text, "None", 4) == 0))
            return false;
        return kd_py_int_from_str(v->text, v->len, out, overflow);
    default:
        /* None, absent, and containers (int("[...]") raises) */
        return false;
    }
}

char *kd_jval_pystr(const kd_jval *v, size_t *out_len)
{
    if (!v)
        return NULL;
    switch (v->type) {
    case KD_J_ABSENT:
    case KD_J_NULL:
        return dup_bytes("None", 4, out_len);
    case KD_J_BOOL:
        return v->boolean ? dup_bytes("True", 4, out_len) : dup_bytes("False", 5, out_len);
    case KD_J_INT:
        /* json gives int("-0") == 0, printed "0"; other literals are canonical */
        if (v->len == 2 && memcmp(v->text, "-0", 2) == 0)
            return dup_bytes("0", 1, out_len);
        return dup_bytes(v->text, v->len, out_len);
    case KD_J_FLOAT: {
        double d = 0.0;
        char buf[64];
        if (!literal_to_double(v->text, v->len, &d))
            return NULL;
        int n = kd_format_pyfloat(d, buf, sizeof buf);
        return dup_bytes(buf, (size_t)n, out_len);
    }
    case KD_J_STRING:
        return dup_bytes(v->text, v->len, out_len);
    default:
        return NULL;
    }
}
