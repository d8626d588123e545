/* jsoncmp.c — the conformance comparison rule (jsoncmp.h). */
#include "config.h"

#include "jsoncmp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static bool is_float_text(yajl_val v)
{
    const char *r = YAJL_GET_NUMBER(v);
    return r && (strchr(r, '.') || strchr(r, 'e') || strchr(r, 'E'));
}

static bool differ(kd_jsoncmp *c, const char *where, const char *fmt, const char *a, const char *b)
{
    snprintf(c->where, sizeof c->where, "%s", where);
    snprintf(c->what, sizeof c->what, fmt, a, b);
    return false;
}

static bool floats_close(double a, double b)
{
    if (a == b)
        return true;
    double diff = fabs(a - b);
    return diff <= 1e-6 || diff <= 1e-9 * fmax(fabs(a), fabs(b));
}

static const char *type_name(yajl_val v)
{
    if (!v) return "absent";
    switch (v->type) {
    case yajl_t_string: return "string";
    case yajl_t_number: return is_float_text(v) ? "float" : "integer";
    case yajl_t_object: return "object";
    case yajl_t_array: return "array";
    case yajl_t_true: return "true";
    case yajl_t_false: return "false";
    case yajl_t_null: return "null";
    default: return "any";
    }
}

static bool equal_at(kd_jsoncmp *c, yajl_val e, yajl_val a, const char *where);

static bool equal_objects(kd_jsoncmp *c, yajl_val e, yajl_val a, const char *where)
{
    char sub[512];
    size_t na = a->u.object.len, ne = e->u.object.len;
    if (!c->actual_keys_only && na != ne) {
        for (size_t i = 0; i < ne; i++)
            if (!kd_json_member(a, e->u.object.keys[i]))
                return differ(c, where, "key '%s' missing from the output%s", e->u.object.keys[i], "");
        for (size_t i = 0; i < na; i++)
            if (!kd_json_member(e, a->u.object.keys[i]))
                return differ(c, where, "unexpected key '%s'%s", a->u.object.keys[i], "");
    }
    for (size_t i = 0; i < na; i++) {
        const char *k = a->u.object.keys[i];
        yajl_val ev = kd_json_member(e, k);
        snprintf(sub, sizeof sub, "%s.%s", where, k);
        if (!ev)
            return differ(c, sub, "unexpected key '%s'%s", k, "");
        if (!equal_at(c, ev, a->u.object.values[i], sub))
            return false;
    }
    return true;
}

static bool equal_at(kd_jsoncmp *c, yajl_val e, yajl_val a, const char *where)
{
    char sub[512], eb[64], ab[64];
    if (strcmp(type_name(e), type_name(a)) != 0)
        return differ(c, where, "expected %s, got %s", type_name(e), type_name(a));
    switch (e->type) {
    case yajl_t_string:
        if (strcmp(e->u.string, a->u.string) != 0)
            return differ(c, where, "expected \"%.200s\", got \"%.200s\"", e->u.string, a->u.string);
        return true;
    case yajl_t_number:
        if (is_float_text(e)) {
            if (!floats_close(YAJL_GET_DOUBLE(e), YAJL_GET_DOUBLE(a)))
                return differ(c, where, "expected %s, got %s", YAJL_GET_NUMBER(e), YAJL_GET_NUMBER(a));
            return true;
        }
        if (strcmp(YAJL_GET_NUMBER(e), YAJL_GET_NUMBER(a)) != 0)
            return differ(c, where, "expected %s, got %s", YAJL_GET_NUMBER(e), YAJL_GET_NUMBER(a));
        return true;
    case yajl_t_object:
        return equal_objects(c, e, a, where);
    case yajl_t_array:
        if (e->u.array.len != a->u.array.len) {
            snprintf(eb, sizeof eb, "%zu", e->u.array.len);
            snprintf(ab, sizeof ab, "%zu", a->u.array.len);
            return differ(c, where, "expected %s items, got %s", eb, ab);
        }
        for (size_t i = 0; i < e->u.array.len; i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", where, i);
            if (!equal_at(c, e->u.array.values[i], a->u.array.values[i], sub))
                return false;
        }
        return true;
    default:
        return true;
    }
}

bool kd_json_equal(kd_jsoncmp *c, yajl_val expected, yajl_val actual)
{
    c->where[0] = c->what[0] = '\0';
    return equal_at(c, expected, actual, "$");
}

yajl_val kd_json_member(yajl_val obj, const char *key)
{
    if (!obj || obj->type != yajl_t_object)
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

yajl_val kd_json_parse_buf(const char *buf, char *msg, size_t msgsz)
{
    return yajl_tree_parse(buf, msg, msgsz);
}

yajl_val kd_json_read_file(const char *path, char *msg, size_t msgsz)
{
    gzFile f = gzopen(path, "rb"); /* reads plain files too */
    if (!f) {
        snprintf(msg, msgsz, "%s: cannot open", path);
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int r;
    while (buf && (r = gzread(f, buf + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)r;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    gzclose(f);
    if (!buf) {
        snprintf(msg, msgsz, "%s: out of memory", path);
        return NULL;
    }
    buf[n] = '\0';
    yajl_val v = yajl_tree_parse(buf, msg, msgsz);
    free(buf);
    return v;
}
