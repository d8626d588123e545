/* test_split.c — the split load (load.c "split load"): a plain trace parsed
 * as two halves on two threads must give exactly the serial load — the same
 * records in the same order, the same string ids, the same counters — or,
 * for a bad file, the same error message.
 *
 * kd_test_load_both() is also used by test_load.c, whose every load
 * is done both ways (split at any size), so each loader edge case there
 * (repeated traceEvents, BOM, NaN, bad UTF-8, truncation, ...) checks the
 * split too. Here: a sweep moving the cut across a document with events of
 * every kind, cuts inside strings and nested objects, a tail with a second
 * traceEvents key, tail errors, files, and the fixture traces. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerndiff/load.h"
#include "suites.h"

/* ---- comparing two loads ---------------------------------------------- */

static void expect_same_trace(const kd_trace *a, const kd_trace *b, const char *what)
{
    char why[256];
    ck_assert_msg(kd_trace_same(a, b, why, sizeof why), "%s: serial and split loads differ: %s",
                  what, why);
}

void kd_test_expect_same_load(const kd_trace *serial, const kd_error *serial_err,
                              const kd_trace *split, const kd_error *split_err, const char *what)
{
    ck_assert_msg((serial == NULL) == (split == NULL), "%s: serial %s, split %s", what,
                  serial ? "loaded" : serial_err->msg, split ? "loaded" : split_err->msg);
    if (!serial) {
        ck_assert_int_eq(serial_err->status, split_err->status);
        ck_assert_str_eq(serial_err->msg, split_err->msg);
        return;
    }
    expect_same_trace(serial, split, what);
}

kd_trace *kd_test_load_both(const void *data, size_t len, const char *label, kd_error *err)
{
    kd_error_clear(err);
    kd_trace *a = kd_load_trace_mem(data, len, label, err);
    kd_error e2;
    kd_error_clear(&e2);
    kd_load_options split = {.threads = 2, .split_min_bytes = 1};
    kd_trace *b = kd_load_trace_mem_opts(data, len, label, &split, &e2);
    kd_test_expect_same_load(a, err, b, &e2, label);
    kd_trace_free(b);
    return a;
}

/* ---- documents ------------------------------------------------------------ */

typedef struct {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s)
{
    size_t len = strlen(s);
    if (b->n + len + 1 > b->cap) {
        b->cap = (b->n + len + 1) * 2;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
    memcpy(b->s + b->n, s, len + 1);
    b->n += len;
}

/* Events of every kind the loader keeps or skips, with ' for ". */
static const char *const EVENT_KINDS[] = {
    "{'ph':'X','cat':'kernel','name':'gemm_%d','pid':%d,'tid':7,'ts':%d.5,'dur':3,"
    "'args':{'stream':7,'correlation':%d,'External id':%d}}",
    "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':2,'ts':%d,'dur':1,"
    "'args':{'correlation':%d}}",
    "{'ph':'X','cat':'cpu_op','name':'aten::mm_%d','pid':1,'tid':2,'ts':%d,'dur':4,"
    "'args':{'External id':%d}}",
    "{'ph':'X','cat':'python_function','name':'model.py(%d): forward','pid':1,'tid':2,'ts':%d,'dur':9}",
    "{'ph':'X','cat':'user_annotation','name':'ProfilerStep#%d','pid':1,'tid':2,'ts':%d,'dur':50}",
    "{'ph':'X','cat':'gpu_user_annotation','name':'decode_%d','pid':3,'tid':7,'ts':%d,'dur':40,"
    "'args':{'External id':%d}}",
    "{'ph':'M','name':'thread_name','pid':%d,'tid':7,'args':{'name':'stream %d'}}",
    "{'ph':'X','cat':'kernel','name':'bad_ts_%d','pid':3,'tid':7,'ts':'x%d','dur':1}",
    "{'ph':'X','cat':'cat_%d','name':'other','pid':%d,'tid':1,'ts':%d,'dur':2,"
    "'args':{'nested':[{'a':1},{'b':{'c':[1,2]}}],'text':'}, {'}}",
    "7",
    "{'ph':'i','name':'instant','pid':1,'tid':1,'ts':%d,'args':{'correlation':%d,'External id':%d}}",
};
#define N_KINDS (sizeof EVENT_KINDS / sizeof *EVENT_KINDS)

static void put_events(buf *b, int count)
{
    char ev[512], fmt[512];
    for (int i = 0; i < count; i++) {
        const char *k = EVENT_KINDS[(size_t)i % N_KINDS];
        size_t j = 0;
        for (; k[j] && j + 1 < sizeof fmt; j++)
            fmt[j] = k[j] == '\'' ? '"' : k[j];
        fmt[j] = '\0';
        snprintf(ev, sizeof ev, fmt, i, i % 5 + 1, 1000 + i, i, i);
        if (i)
            put(b, i % 3 ? "," : ",\r\n  ");
        put(b, ev);
    }
}

static char *object_doc(int count, const char *head, const char *tail, size_t *len)
{
    buf b = {0};
    put(&b, head);
    put(&b, "{\"traceEvents\":[");
    put_events(&b, count);
    put(&b, "]");
    put(&b, tail);
    put(&b, "}");
    *len = b.n;
    return b.s;
}

/* ---- tests -------------------------------------------------------------- */

/* The cut (the first event boundary after the middle) moves across the
 * document as a trailing key grows: every event kind ends up at it. */
START_TEST(test_split_sweep)
{
    buf pad = {0};
    put(&pad, ",\"zzz\":\"");
    int split = 0;
    for (int k = 0; k < 300; k++) {
        buf tail = {0};
        put(&tail, pad.s);
        put(&tail, "\"");
        size_t len;
        char *doc = object_doc(60, "", tail.s, &len);
        char what[64];
        snprintf(what, sizeof what, "sweep %d", k);
        kd_error err;
        kd_trace *t = kd_test_load_both(doc, len, what, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        ck_assert_uint_eq(t->events_read, 60);
        kd_trace_free(t);
        kd_load_options opt = {.threads = 2, .split_min_bytes = 1};
        t = kd_load_trace_mem_opts(doc, len, "split.json", &opt, &err);
        split += t->split;
        kd_trace_free(t);
        free(doc);
        free(tail.s);
        put(&pad, "abcdefghijklmnopqrst"); /* the middle moves by 10 bytes */
    }
    free(pad.s);
    /* most cuts fall between events: those halves were parsed at once */
    ck_assert_msg(split > 200, "only %d of 300 loads split", split);
}
END_TEST

/* A bare list (divergence D2) with a BOM, cut anywhere. */
START_TEST(test_split_list_shape)
{
    for (int count = 8; count < 40; count++) {
        buf b = {0};
        put(&b, "\xEF\xBB\xBF  [");
        put_events(&b, count);
        put(&b, "]\n");
        kd_error err;
        kd_trace *t = kd_test_load_both(b.s, b.n, "list", &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        ck_assert_int_eq(t->shape, KD_SHAPE_LIST);
        kd_trace_free(t);
        free(b.s);
    }
}
END_TEST

/* Five events, one big kernel event of name `name` whose args.x list holds
 * `items` copies of `item` (comma-separated), five events: the middle of the
 * document falls inside the big event. Loads both ways; 11 events. */
static void expect_eleven_events(const char *name, int name_copies, const char *item, int items,
                                 const char *what)
{
    buf b = {0};
    put(&b, "{\"traceEvents\":[");
    put_events(&b, 5);
    put(&b, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
    for (int i = 0; i < name_copies; i++)
        put(&b, name);
    put(&b, "\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"args\":{\"stream\":7,\"x\":[");
    for (int i = 0; i < items; i++) {
        if (i)
            put(&b, ", ");
        put(&b, item);
    }
    put(&b, "]}},");
    put_events(&b, 5);
    put(&b, "]}");
    kd_error err;
    kd_trace *t = kd_test_load_both(b.s, b.n, what, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->events_read, 11);
    kd_trace_free(t);
    free(b.s);
}

/* Every candidate cut near the middle is false: the head goes on alone. */
START_TEST(test_split_false_boundaries)
{
    expect_eleven_events("}, {", 400, "{\"y\":1}", 100, "false boundaries in a string");
    expect_eleven_events("k", 1, "{\"y\":{}}", 400, "false boundaries in args");
}
END_TEST

/* Python keeps the last traceEvents: a second key in the tail drops the
 * head's events too (the split load reloads serially). */
START_TEST(test_split_second_key_in_tail)
{
    buf tail = {0};
    put(&tail, ",\"traceEvents\":[");
    put_events(&tail, 3);
    put(&tail, "]");
    size_t len;
    char *doc = object_doc(40, "", tail.s, &len);
    kd_error err;
    kd_trace *t = kd_test_load_both(doc, len, "second key", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->events_read, 3);
    kd_trace_free(t);
    free(doc);
    free(tail.s);
    doc = object_doc(40, "", ",\"traceEvents\":5", &len);
    t = kd_test_load_both(doc, len, "second key not a list", &err);
    ck_assert_ptr_null(t);
    free(doc);
}
END_TEST

/* Errors and NaN in the tail, truncation, bad UTF-8: the serial message. */
START_TEST(test_split_tail_errors)
{
    static const char *const tails[] = {
        ",\"x\":[1,2,}",                  /* invalid JSON */
        ",\"x\":\"\xC3\x28\"",             /* invalid UTF-8 (not kept: fine) */
        ",\"x\":NaN",                     /* D5: NaN after the list */
        ",\"x\":[Infinity, -Infinity]",
    };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t len;
        char *doc = object_doc(40, "", tails[i], &len);
        kd_error err;
        kd_trace *t = kd_test_load_both(doc, len, tails[i], &err);
        kd_trace_free(t);
        free(doc);
    }
    /* invalid UTF-8 in a kept name and a NaN ts late in the list */
    buf b = {0};
    put(&b, "{\"traceEvents\":[");
    put_events(&b, 40);
    put(&b, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\xED\xA0\x80\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1}]}");
    kd_error err;
    ck_assert_ptr_null(kd_test_load_both(b.s, b.n, "bad utf-8 name", &err));
    ck_assert_msg(strstr(err.msg, "invalid UTF-8") != NULL, "%s", err.msg);
    b.n = 0;
    put(&b, "{\"traceEvents\":[");
    put_events(&b, 40);
    put(&b, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":NaN,\"dur\":1}]}");
    kd_trace *t = kd_test_load_both(b.s, b.n, "nan ts", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_TS], 1 + 40 / N_KINDS);
    kd_trace_free(t);
    /* truncated at every length past the middle region */
    size_t full = b.n;
    for (size_t cut = full / 2; cut < full; cut += 7) {
        kd_trace *u = kd_test_load_both(b.s, cut, "truncated", &err);
        ck_assert_ptr_null(u);
    }
    free(b.s);
}
END_TEST

static char *write_temp(const void *data, size_t len)
{
    char *path = strdup("/tmp/kerndiff-split-XXXXXX");
    ck_assert_ptr_nonnull(path);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    close(fd);
    return path;
}

/* From a file (the tail seeks). */
START_TEST(test_split_file)
{
    size_t len;
    char *doc = object_doc(300, "", ",\"meta\":{\"a\":[1,2]}", &len);
    char *path = write_temp(doc, len);
    kd_error e1, e2;
    kd_error_clear(&e1);
    kd_error_clear(&e2);
    kd_trace *a = kd_load_trace(path, &e1);
    kd_load_options split = {.threads = 2, .split_min_bytes = 1};
    kd_trace *b = kd_load_trace_opts(path, &split, &e2);
    kd_test_expect_same_load(a, &e1, b, &e2, "file");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->bytes_in, len);
    /* under the threshold: an ordinary load */
    kd_load_options big = {.threads = 2, .split_min_bytes = 1u << 30};
    kd_trace *c = kd_load_trace_opts(path, &big, &e2);
    kd_test_expect_same_load(a, &e1, c, &e2, "file, no split");
    kd_trace_free(a);
    kd_trace_free(b);
    kd_trace_free(c);
    unlink(path);
    free(path);
    free(doc);
}
END_TEST

/* A gzip trace is inflated by a second thread while the first parses it,
 * then cut (load.c "gzip split"): the streaming load's trace, still marked
 * gzip with the file's byte count; in memory and from a file. */
START_TEST(test_split_gzip)
{
    size_t len, zn;
    char *doc = object_doc(300, "", ",\"meta\":{\"a\":[1,2]}", &len);
    unsigned char *z = kd_test_gzip(doc, len, &zn);
    char *path = write_temp(z, zn);
    kd_load_options split = {.threads = 2, .split_min_bytes = 1};
    for (int from_file = 0; from_file < 2; from_file++) {
        kd_error e1, e2;
        kd_error_clear(&e1);
        kd_error_clear(&e2);
        kd_trace *a = from_file ? kd_load_trace(path, &e1) : kd_load_trace_mem(z, zn, "gz", &e1);
        kd_trace *b = from_file ? kd_load_trace_opts(path, &split, &e2)
                                : kd_load_trace_mem_opts(z, zn, "gz", &split, &e2);
        kd_test_expect_same_load(a, &e1, b, &e2, from_file ? "gzip file" : "gzip in memory");
        ck_assert_ptr_nonnull(b);
        ck_assert_msg(b->split, "a gzip trace over the threshold was not split");
        ck_assert(b->gzip);
        ck_assert_uint_eq(b->bytes_in, zn);
        ck_assert_uint_eq(b->bytes_json, len);
        kd_trace_free(a);
        kd_trace_free(b);
    }
    /* under the threshold (uncompressed size), or one thread: streamed */
    kd_load_options big = {.threads = 2, .split_min_bytes = len + 1};
    kd_load_options one = {.threads = 1, .split_min_bytes = 1};
    kd_error err;
    kd_trace *c = kd_load_trace_mem_opts(z, zn, "gz", &big, &err);
    ck_assert_ptr_nonnull(c);
    ck_assert(!c->split);
    kd_trace_free(c);
    c = kd_load_trace_mem_opts(z, zn, "gz", &one, &err);
    ck_assert_ptr_nonnull(c);
    ck_assert(!c->split);
    kd_trace_free(c);
    unlink(path);
    free(path);
    free(z);
    free(doc);
}
END_TEST

/* When the gzip split cannot finish, the streaming load decides, with its
 * own result or message: a trailer that lies about the size (smaller: the
 * buffer is full before the stream ends, then zlib's length check fails;
 * larger than the cap: not tried), a second member (the trailer gives only
 * the last one's size), a NaN literal (the filtered pass), gzip inside
 * gzip (not JSON), a truncated stream. */
START_TEST(test_split_gzip_fallbacks)
{
    size_t len, zn;
    char *doc = object_doc(200, "", "", &len);
    unsigned char *z = kd_test_gzip(doc, len, &zn);
    kd_error err;
    /* ISIZE 5: no room for the rest, then "incorrect length check" */
    unsigned char *lie = malloc(zn);
    ck_assert_ptr_nonnull(lie);
    memcpy(lie, z, zn);
    memcpy(lie + zn - 4, "\x05\x00\x00\x00", 4);
    ck_assert_ptr_null(kd_test_load_both(lie, zn, "small isize", &err));
    ck_assert_msg(strstr(err.msg, "corrupt gzip data") != NULL, "%s", err.msg);
    /* ISIZE 4 GiB - 1, above the cap */
    memcpy(lie + zn - 4, "\xff\xff\xff\xff", 4);
    ck_assert_ptr_null(kd_test_load_both(lie, zn, "huge isize", &err));
    ck_assert_msg(strstr(err.msg, "corrupt gzip data") != NULL, "%s", err.msg);
    free(lie);
    /* two members: the first large, the last (whose size the trailer holds) small */
    size_t z1n, z2n, cut = len - 60;
    while (doc[cut] != ',')
        cut++;
    unsigned char *z1 = kd_test_gzip(doc, cut, &z1n), *z2 = kd_test_gzip(doc + cut, len - cut, &z2n);
    unsigned char *two = malloc(z1n + z2n);
    ck_assert_ptr_nonnull(two);
    memcpy(two, z1, z1n);
    memcpy(two + z1n, z2, z2n);
    kd_trace *t = kd_test_load_both(two, z1n + z2n, "two members", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->bytes_json, len);
    kd_trace_free(t);
    /* a NaN literal (divergence D5): the head meets it, the filtered pass loads */
    buf b = {0};
    put(&b, "{\"traceEvents\":[");
    put_events(&b, 100);
    put(&b, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":NaN}]}");
    size_t bzn;
    unsigned char *bz = kd_test_gzip(b.s, b.n, &bzn);
    t = kd_test_load_both(bz, bzn, "gzip with NaN", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    kd_trace_free(t);
    free(bz);
    free(b.s);
    /* gzip of the gzip */
    size_t zzn;
    unsigned char *zz = kd_test_gzip(z, zn, &zzn);
    ck_assert_ptr_null(kd_test_load_both(zz, zzn, "gzip in gzip", &err));
    ck_assert_msg(strstr(err.msg, "invalid JSON") != NULL, "%s", err.msg);
    /* truncated at several points */
    for (size_t n = zn / 2; n < zn; n += zn / 7 + 1) {
        ck_assert_ptr_null(kd_test_load_both(z, n, "truncated gzip", &err));
    }
    free(zz);
    free(two);
    free(z1);
    free(z2);
    free(z);
    free(doc);
}
END_TEST

/* Every trace of fixtures/ loads the same both ways. */
START_TEST(test_split_fixtures)
{
    static const char *const files[] = {
        "fixtures/diff/base.json", "fixtures/diff/improve.json", "fixtures/diff/regress.json",
        "fixtures/examples/baseline.json.gz",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", kd_test_srcdir(), files[i]);
        kd_error e1, e2;
        kd_error_clear(&e1);
        kd_error_clear(&e2);
        kd_trace *a = kd_load_trace(path, &e1);
        kd_load_options split = {.threads = 2, .split_min_bytes = 1};
        kd_trace *b = kd_load_trace_opts(path, &split, &e2);
        ck_assert_msg(a != NULL, "%s", e1.msg);
        kd_test_expect_same_load(a, &e1, b, &e2, files[i]);
        kd_trace_free(a);
        kd_trace_free(b);
    }
}
END_TEST

/* kd_trace_same names what differs. */
START_TEST(test_trace_same_reports)
{
    size_t n1, n2;
    char *d1 = object_doc(20, "", "", &n1), *d2 = object_doc(21, "", "", &n2);
    kd_error err;
    kd_trace *a = kd_test_load_both(d1, n1, "a", &err), *b = kd_test_load_both(d2, n2, "b", &err);
    char why[256] = "";
    ck_assert(kd_trace_same(a, a, why, sizeof why));
    ck_assert(!kd_trace_same(a, b, why, sizeof why));
    ck_assert_msg(strstr(why, "events read: 20 and 21") != NULL, "%s", why);
    kd_trace_free(a);
    kd_trace_free(b);
    free(d1);
    free(d2);
}
END_TEST

Suite *split_suite(void)
{
    Suite *s = suite_create("split load");
    TCase *tc = tcase_create("split");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_split_sweep);
    tcase_add_test(tc, test_split_list_shape);
    tcase_add_test(tc, test_split_false_boundaries);
    tcase_add_test(tc, test_split_second_key_in_tail);
    tcase_add_test(tc, test_split_tail_errors);
    tcase_add_test(tc, test_split_file);
    tcase_add_test(tc, test_split_gzip);
    tcase_add_test(tc, test_split_gzip_fallbacks);
    tcase_add_test(tc, test_split_fixtures);
    tcase_add_test(tc, test_trace_same_reports);
    suite_add_tcase(s, tc);
    return s;
}
