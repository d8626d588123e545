/* jsonw.h — JSON output through yajl_gen with Python-compatible numbers
 * (floats in repr form: 47.25, 100.0, 1e+16), so documents compare equal to
 * the reference's and are byte-for-byte deterministic. */
#ifndef KERNDIFF_JSONW_H
#define KERNDIFF_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>

typedef struct {
    yajl_gen g;
    FILE *out;  /* where the text goes */
    bool failed; /* a write failed */
} kd_json;

/* pretty: indent by 1 space as Python's json.dumps(indent=1) is not needed;
 * pretty uses yajl's beautify. */
bool kd_json_open(kd_json *j, FILE *out, bool pretty);
/* Flushes and frees; false if any write failed. */
bool kd_json_close(kd_json *j);

void kd_json_map_open(kd_json *j);
void kd_json_map_close(kd_json *j);
void kd_json_array_open(kd_json *j);
void kd_json_array_close(kd_json *j);
void kd_json_key(kd_json *j, const char *key);
void kd_json_str(kd_json *j, const char *s);
void kd_json_strn(kd_json *j, const char *s, size_t len);
void kd_json_null(kd_json *j);
void kd_json_bool(kd_json *j, bool b);
void kd_json_int(kd_json *j, int64_t v);
/* Python repr of a double; non-finite values are written as null. */
void kd_json_double(kd_json *j, double v);
/* int64 or null for KD_NOID-style None */
void kd_json_opt_int(kd_json *j, int64_t v, int64_t none);

#endif
