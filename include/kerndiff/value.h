/* value.h — one JSON scalar as the loader saw it, and the Python semantics the
 * reference applies to it (reference §0, §1: str(), truthiness, float(),
 * coerce_optional_int).
 *
 * Numbers keep their raw text (yajl's number callback), so str(int) is exact
 * for any size and ints beyond int64 are detected instead of wrapped. */
#ifndef KERNDIFF_VALUE_H
#define KERNDIFF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    KD_J_ABSENT = 0, /* key not present in the object */
    KD_J_NULL,
    KD_J_BOOL,
    KD_J_INT,    /* number literal without '.', 'e' or 'E' */
    KD_J_FLOAT,  /* any other number literal (incl. substituted NaN/Infinity) */
    KD_J_STRING,
    KD_J_ARRAY,  /* a container: only its emptiness is known */
    KD_J_OBJECT
} kd_jtype;

typedef struct {
    kd_jtype type;
    bool boolean;        /* KD_J_BOOL */
    bool container_empty; /* KD_J_ARRAY / KD_J_OBJECT */
    const char *text;    /* KD_J_INT/FLOAT: raw literal; KD_J_STRING: UTF-8 bytes */
    size_t len;          /* bytes of text (strings may contain NUL) */
} kd_jval;

/* Python truthiness: 0, 0.0, "", null, false, empty containers, absent are false. */
bool kd_jval_truthy(const kd_jval *v);

/* Python float(v) for numbers and numeric strings (" 1.5", "1e3", "1_0",
 * "inf", "nan"). Returns false where Python would raise (null, bool is
 * accepted as 0/1 like Python, containers, non-numeric strings). */
bool kd_jval_float(const kd_jval *v, double *out);

/* PC coerce_optional_int (reference §1). Returns false for None; sets
 * *overflow (if non-NULL) when the value is an integer that does not fit int64. */
bool kd_jval_coerce_int(const kd_jval *v, int64_t *out, bool *overflow);

/* Python str(v) into a malloc'd NUL-terminated string (absent and null give
 * "None", bools "True"/"False", ints their literal, floats Python repr).
 * Containers are not representable here: returns NULL. *out_len may be NULL. */
char *kd_jval_pystr(const kd_jval *v, size_t *out_len);

/* Python repr() of a double ("7.0", "1e+16", "0.0001", "1e-05", "inf", "nan")
 * into buf (at least 32 bytes). Returns the length. */
int kd_format_pyfloat(double v, char *buf, size_t bufsz);

/* Python int(s) for a str: surrounding Unicode whitespace, sign, '_' between
 * digits. false if not an integer literal or beyond int64 (*overflow set). */
bool kd_py_int_from_str(const char *s, size_t len, int64_t *out, bool *overflow);

/* A plain decimal literal (-?digits, optionally .digits) to the double
 * strtod (and Python's float) gives, without strtod: the loader reads two
 * per event. Up to 19 significant digits and 22 fraction digits: exactly;
 * false for anything else (exponents, longer literals, exact ties, values
 * of 2^53 and more with a mantissa that large), which strtod then reads. */
bool kd_decimal_to_double(const char *s, size_t len, double *out);

/* Python float(s) for a str. false where Python raises ValueError. */
bool kd_py_float_from_str(const char *s, size_t len, double *out);

#endif
