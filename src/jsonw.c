/* jsonw.c — yajl_gen wrapper with Python-compatible number text (jsonw.h). */
#include "config.h"

#include "kerndiff/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kerndiff/value.h"

static void write_cb(void *ctx, const char *s, size_t len)
{
    kd_json *j = ctx;
    if (len && fwrite(s, 1, len, j->out) != len)
        j->failed = true;
}

bool kd_json_open(kd_json *j, FILE *out, bool pretty)
{
    j->out = out;
    j->failed = false;
    j->g = yajl_gen_alloc(NULL);
    if (!j->g)
        return false;
    yajl_gen_config(j->g, yajl_gen_print_callback, write_cb, j);
    yajl_gen_config(j->g, yajl_gen_beautify, pretty ? 1 : 0);
    if (pretty)
        yajl_gen_config(j->g, yajl_gen_indent_string, "  ");
    return true;
}

bool kd_json_close(kd_json *j)
{
    if (j->g)
        yajl_gen_free(j->g);
    j->g = NULL;
    if (fflush(j->out) != 0)
        j->failed = true;
    return !j->failed;
}

static void check(kd_json *j, yajl_gen_status st)
{
    if (st != yajl_gen_status_ok)
        j->failed = true;
}

void kd_json_map_open(kd_json *j) { check(j, yajl_gen_map_open(j->g)); }
void kd_json_map_close(kd_json *j) { check(j, yajl_gen_map_close(j->g)); }
void kd_json_array_open(kd_json *j) { check(j, yajl_gen_array_open(j->g)); }
void kd_json_array_close(kd_json *j) { check(j, yajl_gen_array_close(j->g)); }
void kd_json_key(kd_json *j, const char *key) { kd_json_str(j, key); }

void kd_json_str(kd_json *j, const char *s)
{
    check(j, yajl_gen_string(j->g, (const unsigned char *)s, strlen(s)));
}

void kd_json_strn(kd_json *j, const char *s, size_t len)
{
    check(j, yajl_gen_string(j->g, (const unsigned char *)s, len));
}

void kd_json_null(kd_json *j) { check(j, yajl_gen_null(j->g)); }
void kd_json_bool(kd_json *j, bool b) { check(j, yajl_gen_bool(j->g, b)); }

void kd_json_int(kd_json *j, int64_t v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    check(j, yajl_gen_number(j->g, buf, (size_t)n));
}

void kd_json_double(kd_json *j, double v)
{
    if (!isfinite(v)) {
        kd_json_null(j);
        return;
    }
    char buf[40];
    int n = kd_format_pyfloat(v, buf, sizeof buf);
    check(j, yajl_gen_number(j->g, buf, (size_t)n));
}

void kd_json_opt_int(kd_json *j, int64_t v, int64_t none)
{
    if (v == none)
        kd_json_null(j);
    else
        kd_json_int(j, v);
}
