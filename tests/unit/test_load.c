/* test_load.c — unit tests of src/load.c (kd_load_trace, kd_load_trace_mem,
 * kd_probe_trace_shape): shapes, what is kept, Python str() of ids, the skip
 * counters, repeated traceEvents, BOM, NaN/Infinity, gzip, errors; and the
 * hostile inputs of the "Reliability" issue: failed allocations everywhere
 * (yajl's included: tests/fuzz/failalloc.h), strings longer than read blocks
 * and than max_string, gzip members ending next to a read-block boundary and
 * zero padding, zstd / xz / refused compressions, standard input.
 *
 * JSON is written with ' for " (see q()) to keep the literals readable. */
#include "config.h"

#include <fcntl.h>
#include <lzma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "kerndiff/load.h"
#include "kerndiff/text.h"
#include "suites.h"
#include "../fuzz/failalloc.h"

#define LABEL "mem-trace.json"

/* ---- helpers ------------------------------------------------------------ */

/* s with every ' turned into " (malloc'd). */
static char *q(const char *s)
{
    char *r = strdup(s);
    ck_assert_ptr_nonnull(r);
    for (char *p = r; *p; p++)
        if (*p == '\'')
            *p = '"';
    return r;
}

/* Every load here is done twice, serially and as a split load (two threads,
 * cut at the middle whatever the size): both must agree (test_split.c). */
static kd_trace *load_buf(const void *data, size_t len, kd_error *err)
{
    return kd_test_load_both(data, len, LABEL, err);
}

/* Loads q(json); fails the test if it does not load. */
static kd_trace *load_ok(const char *json)
{
    char *s = q(json);
    kd_error err;
    kd_trace *t = load_buf(s, strlen(s), &err);
    ck_assert_msg(t != NULL, "load failed: %s (input %.200s)", err.msg, s);
    free(s);
    return t;
}

/* Loads q(json) expecting failure; returns the error. */
static kd_error load_fail(const char *json)
{
    char *s = q(json);
    kd_error err;
    kd_trace *t = load_buf(s, strlen(s), &err);
    ck_assert_msg(t == NULL, "loaded, expected an error (input %.200s)", s);
    free(s);
    return err;
}

static void assert_one_line_naming_label(const kd_error *err)
{
    ck_assert_int_eq(err->status, KD_EINPUT);
    ck_assert_msg(strstr(err->msg, LABEL) != NULL, "message does not name the label: %s",
                  err->msg);
    ck_assert_msg(strchr(err->msg, '\n') == NULL, "message is not one line: %s", err->msg);
}

/* "byte" followed (after non-digits) by a number */
static void assert_byte_offset(const kd_error *err)
{
    const char *b = strstr(err->msg, "byte");
    ck_assert_msg(b != NULL, "no byte offset in: %s", err->msg);
    while (*b && (*b < '0' || *b > '9'))
        b++;
    ck_assert_msg(*b != '\0', "no number after 'byte' in: %s", err->msg);
}

unsigned char *kd_test_gzip(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    uLong cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static const char *S(const kd_trace *t, kd_sid id) { return kd_str(t->strings, id); }

/* kernel records the reference sees (not D7's accounting-only records) */
static size_t seen_kernels(const kd_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->kernels.n; i++)
        n += (t->kernels.v[i].flags & (KD_KF_OH_KERNEL | KD_KF_KH_KERNEL)) != 0;
    return n;
}

static const kd_kernel_rec *kernel_named(const kd_trace *t, const char *name)
{
    for (size_t i = 0; i < t->kernels.n; i++)
        if (strcmp(S(t, t->kernels.v[i].name), name) == 0)
            return &t->kernels.v[i];
    return NULL;
}

static uint64_t total_skipped(const kd_trace *t)
{
    uint64_t n = 0;
    for (int i = 0; i < KD_SKIP_COUNT; i++)
        n += t->skipped[i];
    return n;
}

/* Writes len bytes to a new temp file; returns its malloc'd path. */
static char *temp_file(const void *data, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char *path = malloc(4096);
    ck_assert_ptr_nonnull(path);
    snprintf(path, 4096, "%s/kd-load-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *fp = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, len, fp), len);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

static char *temp_json(const char *json)
{
    char *s = q(json);
    char *p = temp_file(s, strlen(s));
    free(s);
    return p;
}

static bool probe_json(const char *json)
{
    char *p = temp_json(json);
    bool r = kd_probe_trace_shape(p);
    unlink(p);
    free(p);
    return r;
}

#define K1 "{'ph':'X','cat':'kernel','name':'k1','pid':3,'tid':7,'ts':100,'dur':10," \
           "'args':{'stream':7,'External id':1,'correlation':11}}"
#define K2 "{'ph':'X','cat':'kernel','name':'k2','pid':3,'tid':7,'ts':120,'dur':20," \
           "'args':{'stream':7,'External id':2,'correlation':12}}"
#define K3 "{'ph':'X','cat':'kernel','name':'ncclKernel_AllReduce','pid':3,'tid':20,'ts':105," \
           "'dur':30,'args':{'stream':20,'External id':3,'correlation':13}}"
#define EVENTS K1 "," K2 "," K3

static void assert_base(const kd_trace *t)
{
    ck_assert_uint_eq(t->kernels.n, 3);
    ck_assert_str_eq(S(t, t->kernels.v[0].name), "k1");
    ck_assert_str_eq(S(t, t->kernels.v[1].name), "k2");
    ck_assert_str_eq(S(t, t->kernels.v[2].name), "ncclKernel_AllReduce");
    ck_assert_str_eq(S(t, t->kernels.v[2].stream), "20");
    ck_assert_uint_eq(t->events_read, 3);
    ck_assert_uint_eq(total_skipped(t), 0);
}

/* ---- shapes ------------------------------------------------------------- */

START_TEST(test_shape_object)
{
    kd_trace *t = load_ok("{'traceEvents':[" EVENTS "]}");
    ck_assert_int_eq(t->shape, KD_SHAPE_OBJECT);
    ck_assert(t->has_trace_events);
    ck_assert(!t->gzip);
    ck_assert_uint_eq(t->complete_events, 3);
    ck_assert_str_eq(t->path, LABEL);
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_shape_list)
{
    kd_trace *t = load_ok("[" EVENTS "]");
    ck_assert_int_eq(t->shape, KD_SHAPE_LIST);
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_shape_other_keys)
{
    kd_trace *t = load_ok("{'schemaVersion':1,'deviceProperties':[{'id':0,'name':'GPU'}],"
                          "'distributedInfo':{'rank':0},'traceEvents':[" EVENTS "],"
                          "'traceName':'x','displayTimeUnit':'ms'}");
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_empty_event_list)
{
    kd_trace *t = load_ok("{'traceEvents':[]}");
    ck_assert_uint_eq(t->kernels.n, 0);
    ck_assert_uint_eq(t->events_read, 0);
    ck_assert(t->has_trace_events);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_gzip)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    kd_error err;
    kd_trace *t = load_buf(z, zn, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert(t->gzip);
    ck_assert_uint_eq(t->bytes_in, zn);
    ck_assert_uint_eq(t->bytes_json, strlen(s));
    assert_base(t);
    kd_trace_free(t);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_gzip_two_members)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t n = strlen(s), half = n / 2, z1n, z2n;
    unsigned char *z1 = kd_test_gzip(s, half, &z1n);
    unsigned char *z2 = kd_test_gzip(s + half, n - half, &z2n);
    unsigned char *both = malloc(z1n + z2n);
    ck_assert_ptr_nonnull(both);
    memcpy(both, z1, z1n);
    memcpy(both + z1n, z2, z2n);
    kd_error err;
    kd_trace *t = load_buf(both, z1n + z2n, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert(t->gzip);
    ck_assert_uint_eq(t->bytes_json, n);
    assert_base(t);
    kd_trace_free(t);
    free(both);
    free(z1);
    free(z2);
    free(s);
}
END_TEST

START_TEST(test_gzip_truncated)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    kd_error err;
    kd_trace *t = load_buf(z, zn / 2, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    /* the trailer (CRC, size) cut off */
    t = load_buf(z, zn - 4, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_gzip_corrupt)
{
    /* a long, varied document so the middle is inside the deflate data */
    size_t cap = 1 << 20, n = 0;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    n += (size_t)snprintf(s + n, cap - n, "{\"traceEvents\":[");
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d_%d\",\"pid\":3,"
                              "\"tid\":7,\"ts\":%d,\"dur\":%d,\"args\":{\"stream\":%d}}",
                              i ? "," : "", i, (i * 7919) % 1000, i * 10, 1 + i % 9, 7 + i % 3);
    n += (size_t)snprintf(s + n, cap - n, "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, n, &zn);
    for (size_t i = zn / 2; i < zn / 2 + 32; i++)
        z[i] ^= 0xff;
    kd_error err;
    kd_trace *t = load_buf(z, zn, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_gzip_trailing_garbage)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    unsigned char *g = malloc(zn + 7);
    ck_assert_ptr_nonnull(g);
    memcpy(g, z, zn);
    memcpy(g + zn, "GARBAGE", 7);
    kd_error err;
    kd_trace *t = load_buf(g, zn + 7, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    free(g);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_gzip_of_garbage)
{
    const char *s = "this is not JSON at all";
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    kd_error err;
    kd_trace *t = load_buf(z, zn, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    assert_byte_offset(&err);
    free(z);
}
END_TEST

/* ---- what is kept --------------------------------------------------------- */

START_TEST(test_kernel_fields)
{
    kd_trace *t = load_ok("[" K1 ",{'ph':'X','cat':'Kernel','name':'k_noids','pid':3,'tid':7,"
                          "'ts':1.5,'dur':2.25,'args':{'stream':7}}]");
    ck_assert_uint_eq(t->kernels.n, 2);
    const kd_kernel_rec *k = &t->kernels.v[0];
    ck_assert_str_eq(S(t, k->name), "k1");
    ck_assert_str_eq(S(t, k->cat), "kernel");
    ck_assert_str_eq(S(t, k->pid), "3");
    ck_assert_str_eq(S(t, k->tid), "7");
    ck_assert_str_eq(S(t, k->stream), "7");
    ck_assert_uint_eq(k->flags, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL);
    ck_assert_double_eq(k->ts, 100.0);
    ck_assert_double_eq(k->dur, 10.0);
    ck_assert_int_eq(k->ext, 1);
    ck_assert_int_eq(k->corr, 11);
    k = &t->kernels.v[1];
    ck_assert_str_eq(S(t, k->cat), "Kernel");
    ck_assert_uint_eq(k->flags, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL);
    ck_assert_double_eq(k->ts, 1.5);
    ck_assert_double_eq(k->dur, 2.25);
    ck_assert(k->ext == KD_NOID);
    ck_assert(k->corr == KD_NOID);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_kernel_gpu_cat)
{
    /* a cat starting gpu_ counts as a kernel cat */
    kd_trace *t = load_ok("[{'ph':'X','cat':'gpu_memcpy','name':'Memcpy HtoD','pid':3,'tid':7,"
                          "'ts':1,'dur':2,'args':{'stream':7}}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_uint_eq(t->kernels.v[0].flags, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_stream_marker_void_name)
{
    /* no kernel cat, but a stream marker and a "void " name: OH + KH */
    kd_trace *t = load_ok("[{'ph':'X','name':'void foo_impl<float>(float*)','pid':3,'tid':7,"
                          "'ts':1,'dur':2,'args':{'stream':7}},"
                          "{'ph':'X','cat':'cuda','name':'void bar(int)','pid':3,'tid':7,"
                          "'ts':3,'dur':2,'args':{'cuda_stream':8}}]");
    ck_assert_uint_eq(t->kernels.n, 2);
    ck_assert_str_eq(S(t, t->kernels.v[0].cat), "");
    ck_assert_uint_eq(t->kernels.v[0].flags, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL);
    ck_assert_str_eq(S(t, t->kernels.v[0].stream), "7");
    ck_assert_uint_eq(t->kernels.v[1].flags, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL);
    ck_assert_str_eq(S(t, t->kernels.v[1].stream), "8");
    kd_trace_free(t);
}
END_TEST

START_TEST(test_stream_marker_no_hint)
{
    /* a stream marker without a kernel-name hint: KH only */
    kd_trace *t = load_ok("[{'ph':'X','cat':'misc','name':'zzz_step','pid':3,'tid':7,"
                          "'ts':1,'dur':2,'args':{'stream':7}}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_uint_eq(t->kernels.v[0].flags, KD_KF_KH_KERNEL);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_not_kernels)
{
    kd_trace *t = load_ok(
        "["
        /* no kernel cat, no stream marker */
        "{'ph':'X','cat':'misc','name':'void foo()','pid':3,'tid':7,'ts':1,'dur':2,'args':{}},"
        /* a Python scope name with a stream marker */
        "{'ph':'X','cat':'misc','name':'model.py(12): forward','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        /* non-kernel categories */
        "{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        "{'ph':'X','cat':'gpu_trace','name':'x','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        /* annotations */
        "{'ph':'X','cat':'gpu_user_annotation','name':'x','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        "{'ph':'X','cat':'kernel','name':'## call foo ##','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        /* metadata names */
        "{'ph':'X','cat':'kernel','name':'thread_name','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        /* not complete: dur 0, dur missing, negative dur */
        "{'ph':'X','cat':'kernel','name':'zero','pid':3,'tid':7,'ts':1,'dur':0,"
        "'args':{'stream':7}},"
        "{'ph':'X','cat':'kernel','name':'nodur','pid':3,'tid':7,'ts':1,'args':{'stream':7}},"
        "{'ph':'X','cat':'kernel','name':'neg','pid':3,'tid':7,'ts':1,'dur':-5,"
        "'args':{'stream':7}},"
        /* not ph X */
        "{'ph':'B','cat':'kernel','name':'begin','pid':3,'tid':7,'ts':1,'args':{'stream':7}},"
        "{'ph':'i','cat':'kernel','name':'instant','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7}},"
        "{'cat':'kernel','name':'no_ph','pid':3,'tid':7,'ts':1,'dur':2,'args':{'stream':7}}"
        "]");
    /* what the reference never sees is kept for the accounting only (D7):
     * zero and nodur as launches without time, neg as a skipped kernel */
    for (size_t i = 0; i < t->kernels.n; i++) {
        const kd_kernel_rec *k = &t->kernels.v[i];
        const char *name = S(t, k->name);
        ck_assert_msg(!(k->flags & (KD_KF_OH_KERNEL | KD_KF_KH_KERNEL)), "unexpected kernel record '%s'",
                      name);
        if (strcmp(name, "neg") == 0)
            ck_assert(k->flags & KD_KF_SKIPPED && KD_KF_SKIP_REASON(k->flags) == KD_SKIP_BAD_DUR);
        else
            ck_assert_msg(k->flags == KD_KF_ZERO_DUR && (!strcmp(name, "zero") || !strcmp(name, "nodur")),
                          "unexpected record '%s'", name);
    }
    ck_assert_uint_eq(t->kernels.n, 3);
    ck_assert_uint_eq(t->events_read, 13);
    ck_assert_uint_eq(t->complete_events, 10);
    ck_assert_uint_eq(total_skipped(t), 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_cpu_ops)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':3,'tid':1,'ts':10,'dur':5,"
        "'args':{'External id':42}},"
        "{'ph':'X','cat':'cpu_op','name':'aten::add','pid':3,'tid':1,'ts':20,'dur':5,"
        "'args':{'correlation':9}},"
        "{'ph':'X','cat':'cpu_op','name':'aten::noid','pid':3,'tid':1,'ts':30,'dur':5,'args':{}},"
        "{'ph':'X','cat':'CPU_OP','name':'aten::upper','pid':3,'tid':1,'ts':30,'dur':5,"
        "'args':{'External id':43}}]");
    ck_assert_uint_eq(t->cpu_ops.n, 2);
    ck_assert_str_eq(S(t, t->cpu_ops.v[0].name), "aten::mm");
    ck_assert_str_eq(S(t, t->cpu_ops.v[0].pid), "3");
    ck_assert_str_eq(S(t, t->cpu_ops.v[0].tid), "1");
    ck_assert_int_eq(t->cpu_ops.v[0].ext, 42);
    ck_assert(t->cpu_ops.v[0].corr == KD_NOID);
    ck_assert_double_eq(t->cpu_ops.v[0].ts, 10.0);
    ck_assert_double_eq(t->cpu_ops.v[0].dur, 5.0);
    ck_assert_str_eq(S(t, t->cpu_ops.v[1].name), "aten::add");
    ck_assert(t->cpu_ops.v[1].ext == KD_NOID);
    ck_assert_int_eq(t->cpu_ops.v[1].corr, 9);
    ck_assert_uint_eq(t->kernels.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_python_frames)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'python_function','name':'model.py(10): forward','pid':3,'tid':1,"
        "'ts':10,'dur':5},"
        "{'ph':'X','cat':'python_function','name':'model.py(11): f0','pid':3,'tid':1,"
        "'ts':11,'dur':0},"
        "{'ph':'X','cat':'python_function','name':'model.py(12): nodur','pid':3,'tid':1,"
        "'ts':12},"
        "{'ph':'X','cat':'python_func','name':'other','pid':3,'tid':1,'ts':12,'dur':1}]");
    ck_assert_uint_eq(t->frames.n, 3);
    ck_assert_str_eq(S(t, t->frames.v[0].name), "model.py(10): forward");
    ck_assert(t->frames.v[0].complete);
    ck_assert_double_eq(t->frames.v[0].ts, 10.0);
    ck_assert_double_eq(t->frames.v[0].dur, 5.0);
    ck_assert_str_eq(S(t, t->frames.v[1].name), "model.py(11): f0");
    ck_assert(!t->frames.v[1].complete);
    ck_assert_double_eq(t->frames.v[1].dur, 0.0);
    ck_assert_str_eq(S(t, t->frames.v[2].name), "model.py(12): nodur");
    ck_assert(!t->frames.v[2].complete);
    ck_assert_uint_eq(t->kernels.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_launches)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':3,'tid':1,'ts':10,"
        "'dur':5,'args':{'correlation':11}},"
        "{'ph':'X','cat':'cuda_runtime','name':'hipLaunchKernel','pid':3,'tid':1,'ts':20,"
        "'dur':5,'args':{'correlation':12}},"
        "{'ph':'X','cat':'cuda_driver','name':'cuLaunchKernel','pid':3,'tid':1,'ts':30,"
        "'dur':5,'args':{'correlation':13}},"
        "{'ph':'X','cat':'CUDA_RUNTIME','name':'CUDALAUNCHKERNEL','pid':3,'tid':1,'ts':40,"
        "'dur':5,'args':{'correlation':14}},"
        /* no correlation, no launch in the name, zero dur */
        "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':3,'tid':1,'ts':50,"
        "'dur':5,'args':{}},"
        "{'ph':'X','cat':'cuda_runtime','name':'cudaMemcpyAsync','pid':3,'tid':1,'ts':60,"
        "'dur':5,'args':{'correlation':15}},"
        "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':3,'tid':1,'ts':70,"
        "'dur':0,'args':{'correlation':16}}]");
    ck_assert_uint_eq(t->launches.n, 5);
    const kd_launch_rec *l = t->launches.v;
    ck_assert_str_eq(S(t, l[0].name), "cudaLaunchKernel");
    ck_assert_uint_eq(l[0].flags, KD_LF_KH | KD_LF_OH);
    ck_assert_int_eq(l[0].corr, 11);
    ck_assert(l[0].complete);
    ck_assert_str_eq(S(t, l[0].pid), "3");
    ck_assert_str_eq(S(t, l[0].tid), "1");
    ck_assert_double_eq(l[0].ts, 10.0);
    ck_assert_double_eq(l[0].dur, 5.0);
    ck_assert_str_eq(S(t, l[1].name), "hipLaunchKernel");
    ck_assert_uint_eq(l[1].flags, KD_LF_KH);
    ck_assert_int_eq(l[1].corr, 12);
    ck_assert_str_eq(S(t, l[2].name), "cuLaunchKernel");
    ck_assert_uint_eq(l[2].flags, KD_LF_KH | KD_LF_OH);
    ck_assert_str_eq(S(t, l[3].name), "CUDALAUNCHKERNEL");
    ck_assert_uint_eq(l[3].flags, KD_LF_KH | KD_LF_OH); /* divergence D1 */
    ck_assert_int_eq(l[4].corr, 16);
    ck_assert_uint_eq(l[4].flags, KD_LF_KH); /* OH needs a complete event */
    ck_assert(!l[4].complete);
    ck_assert_uint_eq(t->kernels.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_stage_annotations)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'user_annotation','name':'prefill_batch','pid':3,'tid':1,'ts':10,"
        "'dur':5,'args':{'External id':7}},"
        "{'ph':'X','cat':'user_annotation','name':'Decode step','pid':3,'tid':1,'ts':20,"
        "'dur':5},"
        "{'ph':'X','cat':'gpu_user_annotation','name':'prefill','pid':3,'tid':1,'ts':30,"
        "'dur':5},"
        "{'ph':'X','cat':'user_annotation','name':'forward','pid':3,'tid':1,'ts':40,"
        "'dur':5},"
        "{'ph':'X','cat':'user_annotation','name':'decode','pid':3,'tid':1,'ts':50,'dur':0},"
        "{'ph':'X','cat':'cpu_op','name':'decode','pid':3,'tid':1,'ts':60,'dur':5}]");
    ck_assert_uint_eq(t->annotations.n, 3);
    const kd_annotation_rec *a = t->annotations.v;
    ck_assert_uint_eq(a[0].stage, KD_STAGE_EXTEND);
    ck_assert_double_eq(a[0].ts, 10.0);
    ck_assert_double_eq(a[0].end, 15.0);
    ck_assert_int_eq(a[0].ext, 7);
    ck_assert(!a[0].is_gpu);
    ck_assert_uint_eq(a[1].stage, KD_STAGE_DECODE);
    ck_assert(a[1].ext == KD_NOID);
    ck_assert(!a[1].is_gpu);
    ck_assert_uint_eq(a[2].stage, KD_STAGE_EXTEND);
    ck_assert(a[2].is_gpu);
    ck_assert_uint_eq(t->kernels.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_profiler_steps)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'user_annotation','name':'ProfilerStep#3','pid':3,'tid':1,'ts':10,"
        "'dur':5},"
        "{'ph':'X','cat':'gpu_user_annotation','name':'ProfilerStep#3','pid':3,'tid':9,'ts':11,"
        "'dur':5,'args':{'stream':7}},"
        "{'ph':'X','cat':'user_annotation','name':'ProfilerStep#12','pid':3,'tid':1,'ts':20,"
        "'dur':5},"
        "{'ph':'X','cat':'user_annotation','name':'ProfilerStep#x','pid':3,'tid':1,'ts':30,"
        "'dur':5},"
        "{'ph':'X','cat':'cpu_op','name':'ProfilerStep#5','pid':3,'tid':1,'ts':40,'dur':5}]");
    ck_assert_uint_eq(t->profiler_steps.n, 3);
    ck_assert_int_eq(t->profiler_steps.v[0].step, 3);
    ck_assert(!t->profiler_steps.v[0].is_gpu);
    ck_assert_int_eq(t->profiler_steps.v[1].step, 3);
    ck_assert(t->profiler_steps.v[1].is_gpu);
    ck_assert_int_eq(t->profiler_steps.v[2].step, 12);
    ck_assert_uint_eq(t->annotations.n, 0);
    ck_assert_uint_eq(t->kernels.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_thread_names)
{
    kd_trace *t = load_ok(
        "[{'ph':'M','name':'thread_name','pid':3,'tid':7,'args':{'name':'stream 7'}},"
        "{'ph':'M','name':'thread_name','pid':3,'tid':8,'args':{'name':''}},"
        "{'ph':'M','name':'thread_name','pid':3,'tid':9,'args':{}},"
        "{'ph':'M','name':'process_name','pid':3,'tid':0,'args':{'name':'python'}},"
        "{'ph':'M','name':'thread_name','pid':'TP00','tid':1.0,'args':{'name':'main'}}]");
    ck_assert_uint_eq(t->thread_names.n, 2);
    ck_assert_str_eq(S(t, t->thread_names.v[0].pid), "3");
    ck_assert_str_eq(S(t, t->thread_names.v[0].tid), "7");
    ck_assert_str_eq(S(t, t->thread_names.v[0].name), "stream 7");
    ck_assert_str_eq(S(t, t->thread_names.v[1].pid), "TP00");
    ck_assert_str_eq(S(t, t->thread_names.v[1].tid), "1.0");
    ck_assert_str_eq(S(t, t->thread_names.v[1].name), "main");
    ck_assert_uint_eq(t->complete_events, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_corr_ext_pairs)
{
    kd_trace *t = load_ok(
        "[{'ph':'f','name':'ac2g','pid':3,'tid':1,'ts':1,'args':{'correlation':5,"
        "'External id':50}},"
        "{'ph':'s','id':5,'args':{'External id':60,'correlation':6}},"
        "{'ph':'X','cat':'kernel','name':'k','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7,'correlation':7,'External id':70}},"
        "{'ph':'X','cat':'kernel','name':'k','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7,'correlation':8}},"
        "{'ph':'i','args':{'External id':90}}]");
    ck_assert_uint_eq(t->corr_ext.n, 3);
    ck_assert_int_eq(t->corr_ext.v[0].corr, 5);
    ck_assert_int_eq(t->corr_ext.v[0].ext, 50);
    ck_assert_int_eq(t->corr_ext.v[1].corr, 6);
    ck_assert_int_eq(t->corr_ext.v[1].ext, 60);
    ck_assert_int_eq(t->corr_ext.v[2].corr, 7);
    ck_assert_int_eq(t->corr_ext.v[2].ext, 70);
    kd_trace_free(t);
}
END_TEST

/* ---- Python str() of pid / tid / stream ---------------------------------- */

START_TEST(test_pystr_ids)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'kernel','name':'int','pid':7,'tid':8,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'float','pid':7.0,'tid':8.5,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'str','pid':'TP00','tid':'stream 7','ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'null','pid':null,'tid':null,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'missing','ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'bool','pid':true,'tid':false,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'exp','pid':1e2,'tid':-0,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'big','pid':123456789012345678901234567890,"
        "'tid':1E16,'ts':1,'dur':1}]");
    ck_assert_uint_eq(t->kernels.n, 8);
    static const char *const want[][3] = {
        {"int", "7", "8"},        {"float", "7.0", "8.5"},  {"str", "TP00", "stream 7"},
        {"null", "None", "None"}, {"missing", "None", "None"}, {"bool", "True", "False"},
        {"exp", "100.0", "0"},    {"big", "123456789012345678901234567890", "1e+16"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const kd_kernel_rec *k = kernel_named(t, want[i][0]);
        ck_assert_msg(k != NULL, "no kernel %s", want[i][0]);
        ck_assert_str_eq(S(t, k->pid), want[i][1]);
        ck_assert_str_eq(S(t, k->tid), want[i][2]);
    }
    kd_trace_free(t);
}
END_TEST

START_TEST(test_time_literals)
{
    /* ts / dur read through the fast decimal path or strtod: the double is
     * strtod's (Python's float()) in every case */
    static const char *const lits[] = {
        "0", "-0", "1", "1.5", "1.50000", "100.000", "-123.25", "0.1", "0.3", "1.7", "5.3",
        "0.30000000000000004",
        "1661203463029566.123", "1661203463029566.0", "1365627867836.596", "9007199254740993",
        "9007199254740991", "123.456e2", "1E3", "1.0e-3", "12345678901234567890.5",
        "3.0000000000000000000000001", "0.0000000000000000000001", "0.00000000000000000000001",
        "4503599627370497.5", "7.00000000000000000000000000000",
    };
    size_t n = sizeof lits / sizeof lits[0];
    char json[8192];
    size_t at = (size_t)snprintf(json, sizeof json, "[");
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(json + at, sizeof json - at,
                               "%s{'ph':'X','cat':'kernel','name':'k%zu','pid':1,'tid':1,"
                               "'ts':%s,'dur':%s}",
                               i ? "," : "", i, lits[i], i % 3 ? "1e6" : "1000000.000");
    snprintf(json + at, sizeof json - at, "]");
    kd_trace *t = load_ok(json);
    ck_assert_uint_eq(t->kernels.n, n);
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%zu", i);
        const kd_kernel_rec *k = kernel_named(t, name);
        ck_assert_msg(k != NULL, "no kernel %s", name);
        double want = strtod(lits[i], NULL);
        ck_assert_msg(memcmp(&k->ts, &want, sizeof want) == 0, "ts %s: got %.17g want %.17g",
                      lits[i], k->ts, want);
        ck_assert_double_eq(k->dur, 1e6);
    }
    kd_trace_free(t);
}
END_TEST

START_TEST(test_name_cat_pystr)
{
    /* names and cats are str() of the raw value; absent gives "" */
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'kernel','name':42,'pid':1,'tid':1,'ts':1,'dur':1,'args':{'stream':1}},"
        "{'ph':'X','cat':'kernel','name':1.5,'pid':1,'tid':1,'ts':1,'dur':1,'args':{'stream':1}},"
        "{'ph':'X','name':'void k()','pid':1,'tid':1,'ts':1,'dur':1,'args':{'stream':1}}]");
    ck_assert_uint_eq(t->kernels.n, 3);
    ck_assert_str_eq(S(t, t->kernels.v[0].name), "42");
    ck_assert_str_eq(S(t, t->kernels.v[1].name), "1.5");
    ck_assert_str_eq(S(t, t->kernels.v[2].cat), "");
    kd_trace_free(t);
}
END_TEST

START_TEST(test_stream_truthiness)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'kernel','name':'s0','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':0}},"
        "{'ph':'X','cat':'kernel','name':'s0c9','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':0,'cuda_stream':9}},"
        "{'ph':'X','cat':'kernel','name':'sempty','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':'','cuda_stream':5}},"
        "{'ph':'X','cat':'kernel','name':'sfalse','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':false}},"
        "{'ph':'X','cat':'kernel','name':'snull','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':null,'cuda_stream':0.0}},"
        "{'ph':'X','cat':'kernel','name':'sfloat','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':7.0}},"
        "{'ph':'X','cat':'kernel','name':'sstr','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':'s1','cuda_stream':2}},"
        "{'ph':'X','cat':'kernel','name':'strue','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'stream':true}},"
        "{'ph':'X','cat':'kernel','name':'none','pid':1,'tid':1,'ts':1,'dur':1}]");
    ck_assert_uint_eq(t->kernels.n, 9);
    ck_assert_uint_eq(kernel_named(t, "s0")->stream, 0);
    ck_assert_str_eq(S(t, kernel_named(t, "s0c9")->stream), "9");
    ck_assert_str_eq(S(t, kernel_named(t, "sempty")->stream), "5");
    ck_assert_uint_eq(kernel_named(t, "sfalse")->stream, 0);
    ck_assert_uint_eq(kernel_named(t, "snull")->stream, 0);
    ck_assert_str_eq(S(t, kernel_named(t, "sfloat")->stream), "7.0");
    ck_assert_str_eq(S(t, kernel_named(t, "sstr")->stream), "s1");
    ck_assert_str_eq(S(t, kernel_named(t, "strue")->stream), "True");
    ck_assert_uint_eq(kernel_named(t, "none")->stream, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_stream_marker_falsy_value)
{
    /* the KH stream marker is the key's presence, not its truthiness */
    kd_trace *t = load_ok("[{'ph':'X','cat':'misc','name':'zzz_op','pid':1,'tid':1,'ts':1,"
                          "'dur':1,'args':{'stream':0}}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_uint_eq(t->kernels.v[0].flags, KD_KF_KH_KERNEL);
    ck_assert_uint_eq(t->kernels.v[0].stream, 0);
    kd_trace_free(t);
}
END_TEST

/* ---- skip counters -------------------------------------------------------- */

START_TEST(test_skip_reasons)
{
    kd_trace *t = load_ok(
        "{'traceEvents':[" K1 ","
        /* bad_ts x3 */
        "{'ph':'X','cat':'kernel','name':'ts_abc','pid':1,'tid':1,'ts':'abc','dur':1},"
        "{'ph':'X','cat':'kernel','name':'ts_null','pid':1,'tid':1,'ts':null,'dur':1},"
        "{'ph':'X','cat':'kernel','name':'ts_missing','pid':1,'tid':1,'dur':1},"
        /* bad_dur x2 */
        "{'ph':'X','cat':'kernel','name':'dur_x','pid':1,'tid':1,'ts':1,'dur':'x'},"
        "{'ph':'X','cat':'kernel','name':'dur_list','pid':1,'tid':1,'ts':1,'dur':[1]},"
        /* zero_extent */
        "{'ph':'X','cat':'kernel','name':'forever','pid':1,'tid':1,'ts':1e17,'dur':1e-3},"
        /* missing_name */
        "{'ph':'X','cat':'kernel','pid':1,'tid':1,'ts':1,'dur':1},"
        /* bad_type x3 */
        "{'ph':'X','cat':'kernel','name':'pid_list','pid':[1],'tid':1,'ts':1,'dur':1},"
        "{'ph':'X','cat':'kernel','name':{'a':1},'pid':1,'tid':1,'ts':1,'dur':1},"
        "{'ph':'X','cat':['kernel'],'name':'cat_list','pid':1,'tid':1,'ts':1,'dur':1},"
        /* bad_args x2 (falsy non-dict args are fine) */
        "{'ph':'X','cat':'kernel','name':'args_str','pid':1,'tid':1,'ts':1,'dur':1,'args':'s'},"
        "{'ph':'X','cat':'kernel','name':'args_list','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':[1]},"
        "{'ph':'X','cat':'kernel','name':'args_empty','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':[]},"
        /* int_range x2 */
        "{'ph':'X','cat':'kernel','name':'big_ext','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'External id':99999999999999999999}},"
        "{'ph':'X','cat':'kernel','name':'big_corr','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'correlation':-99999999999999999999}},"
        /* an unrelated huge int is ignored */
        "{'ph':'X','cat':'kernel','name':'big_other','pid':1,'tid':1,'ts':1,'dur':1,"
        "'args':{'bytes':99999999999999999999999}},"
        /* not_object x5 */
        "1,'x',[],null,true]}");
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_TS], 3);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_DUR], 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_ZERO_EXTENT], 1);
    ck_assert_uint_eq(t->skipped[KD_SKIP_MISSING_NAME], 1);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_TYPE], 3);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_ARGS], 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_INT_RANGE], 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_NOT_OBJECT], 5);
    /* the kernel-like skipped events are kept as accounting records (D7) */
    size_t seen = 0, skipped = 0;
    for (size_t i = 0; i < t->kernels.n; i++) {
        seen += (t->kernels.v[i].flags & KD_KF_OH_KERNEL) != 0;
        skipped += (t->kernels.v[i].flags & KD_KF_SKIPPED) != 0;
    }
    ck_assert_uint_eq(seen, 3);
    ck_assert_uint_eq(skipped, 3 + 2 + 1 + 1);
    ck_assert_uint_eq(t->kernels.n, seen + skipped);
    ck_assert_ptr_nonnull(kernel_named(t, "k1"));
    ck_assert_ptr_nonnull(kernel_named(t, "args_empty"));
    ck_assert_ptr_nonnull(kernel_named(t, "big_other"));
    ck_assert_uint_eq(t->events_read, 1 + 3 + 2 + 1 + 1 + 3 + 3 + 2 + 1 + 5);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_skip_reason_names)
{
    static const char *const names[KD_SKIP_COUNT] = {
        "bad_ts", "bad_dur", "zero_extent", "missing_name",
        "bad_type", "bad_args", "int_range", "not_object",
    };
    for (int i = 0; i < KD_SKIP_COUNT; i++)
        ck_assert_str_eq(kd_skip_reason_name((kd_skip_reason)i), names[i]);
    ck_assert_str_eq(kd_skip_reason_name(KD_SKIP_COUNT), "unknown");
}
END_TEST

START_TEST(test_zero_extent_boundary)
{
    /* a tiny dur on a small ts is fine; only ts + dur == ts is skipped */
    kd_trace *t = load_ok("[{'ph':'X','cat':'kernel','name':'tiny','pid':1,'tid':1,'ts':1,"
                          "'dur':1e-3},"
                          "{'ph':'X','cat':'kernel','name':'huge','pid':1,'tid':1,'ts':1e17,"
                          "'dur':100}]");
    ck_assert_uint_eq(t->kernels.n, 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_ZERO_EXTENT], 0);
    kd_trace_free(t);
}
END_TEST

/* ---- seen pids / cats (the no-GPU-kernel message) --------------------------- */

START_TEST(test_seen_pids_cats)
{
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':4242,'tid':1,'ts':1,'dur':5,"
        "'args':{'External id':1}},"
        "{'ph':'X','cat':'python_function','name':'a.py(1): f','pid':5151,'tid':1,'ts':1,"
        "'dur':5},"
        "{'ph':'X','cat':'cpu_op','name':'aten::add','pid':4242,'tid':1,'ts':1,'dur':5}]");
    ck_assert_uint_eq(t->kernels.n, 0);
    ck_assert_uint_eq(t->seen_cats.n, 2);
    ck_assert_str_eq(S(t, t->seen_cats.v[0]), "cpu_op");
    ck_assert_str_eq(S(t, t->seen_cats.v[1]), "python_function");
    ck_assert_uint_eq(t->seen_cat_counts.v[0], 2);
    ck_assert_uint_eq(t->seen_cat_counts.v[1], 1);
    ck_assert_uint_eq(t->seen_pids.n, 2);
    ck_assert_str_eq(S(t, t->seen_pids.v[0]), "4242");
    ck_assert_str_eq(S(t, t->seen_pids.v[1]), "5151");
    kd_trace_free(t);
}
END_TEST

/* ---- repeated traceEvents --------------------------------------------------- */

#define OLD "{'ph':'X','cat':'kernel','name':'old','pid':99,'tid':1,'ts':1,'dur':500," \
            "'args':{'stream':99}}"

START_TEST(test_duplicate_trace_events_last_wins)
{
    kd_trace *t = load_ok("{'traceEvents':[" OLD "," OLD ",{'ph':'X','ts':'bad'}],"
                          "'otherData':{},'traceEvents':[" EVENTS "]}");
    assert_base(t);
    ck_assert_uint_eq(t->seen_pids.n, 1);
    ck_assert_str_eq(S(t, t->seen_pids.v[0]), "3");
    ck_assert_uint_eq(t->seen_cats.n, 1);
    ck_assert_uint_eq(t->seen_cat_counts.v[0], 3);
    ck_assert_uint_eq(t->complete_events, 3);
    kd_trace_free(t);

    t = load_ok("{'traceEvents':[" EVENTS "],'traceEvents':[" OLD "]}");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_str_eq(S(t, t->kernels.v[0].name), "old");
    ck_assert_uint_eq(t->events_read, 1);
    ck_assert_uint_eq(t->seen_pids.n, 1);
    ck_assert_str_eq(S(t, t->seen_pids.v[0]), "99");
    kd_trace_free(t);

    /* a non-list earlier value is replaced by a later list */
    t = load_ok("{'traceEvents':5,'traceEvents':[" EVENTS "]}");
    assert_base(t);
    kd_trace_free(t);
    t = load_ok("{'traceEvents':{'a':[" OLD "]},'traceEvents':[" EVENTS "]}");
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_duplicate_trace_events_last_not_list)
{
    kd_error err = load_fail("{'traceEvents':[" EVENTS "],'traceEvents':{}}");
    assert_one_line_naming_label(&err);
    ck_assert_msg(strstr(err.msg, "traceEvents") != NULL, "%s", err.msg);
    err = load_fail("{'traceEvents':[" EVENTS "],'traceEvents':null}");
    assert_one_line_naming_label(&err);
}
END_TEST

START_TEST(test_nested_trace_events_key_ignored)
{
    /* only the top-level key counts */
    kd_trace *t = load_ok("{'meta':{'traceEvents':[" OLD "]},'traceEvents':[" EVENTS "],"
                          "'more':[{'traceEvents':[" OLD "]}]}");
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

/* ---- BOM, CRLF, NaN / Infinity, odd content -------------------------------- */

START_TEST(test_bom_plain)
{
    char *s = q("\xEF\xBB\xBF{'traceEvents':[" EVENTS "]}");
    kd_error err;
    kd_trace *t = load_buf(s, strlen(s), &err);
    ck_assert_msg(t != NULL, "a UTF-8 BOM before plain JSON was refused: %s", err.msg);
    assert_base(t);
    kd_trace_free(t);
    free(s);
}
END_TEST

START_TEST(test_bom_gzip)
{
    char *s = q("\xEF\xBB\xBF[" EVENTS "]");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    kd_error err;
    kd_trace *t = load_buf(z, zn, &err);
    ck_assert_msg(t != NULL, "a UTF-8 BOM inside gzip was refused: %s", err.msg);
    ck_assert_int_eq(t->shape, KD_SHAPE_LIST);
    assert_base(t);
    kd_trace_free(t);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_crlf)
{
    kd_trace *t = load_ok("{\r\n'traceEvents': [\r\n" K1 ",\r\n" K2 ",\r\n" K3 "\r\n]\r\n}\r\n");
    assert_base(t);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_nan_infinity)
{
    kd_trace *t = load_ok(
        "{'meta':NaN,'traceEvents':[" K1 ","
        "{'ph':'X','cat':'kernel','name':'nan_ts','pid':3,'tid':7,'ts':NaN,'dur':5},"
        "{'ph':'X','cat':'kernel','name':'inf_dur','pid':3,'tid':7,'ts':5,'dur':Infinity},"
        "{'ph':'X','cat':'kernel','name':'minf_ts','pid':3,'tid':7,'ts':-Infinity,'dur':5},"
        "{'ph':'X','cat':'kernel','name':'NaN Infinity in a string','pid':3,'tid':7,'ts':120,"
        "'dur':20,'args':{'stream':7,'ratio':NaN,'lim':[Infinity,-Infinity]}},"
        K3 "],'tail':Infinity}");
    ck_assert_uint_eq(seen_kernels(t), 3);
    ck_assert_uint_eq(t->kernels.n, 3 + 3); /* and the three skipped, for the accounting */
    const kd_kernel_rec *k = kernel_named(t, "NaN Infinity in a string");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(S(t, k->stream), "7");
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_TS], 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_DUR], 1);
    ck_assert_uint_eq(total_skipped(t), 3);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_nonfinite_pystr)
{
    /* Python: str(float("nan")) is "nan", str(float("inf")) "inf" */
    kd_trace *t = load_ok("[{'ph':'X','cat':'kernel','name':'k','pid':NaN,'tid':Infinity,'ts':1,"
                          "'dur':2,'args':{'stream':-Infinity}}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_str_eq(S(t, t->kernels.v[0].pid), "nan");
    ck_assert_str_eq(S(t, t->kernels.v[0].tid), "inf");
    ck_assert_str_eq(S(t, t->kernels.v[0].stream), "-inf");
    kd_trace_free(t);
}
END_TEST

/* A NaN / Infinity literal at every offset around the 4 MiB mark (where the
 * loader's parse blocks end): the parse must not depend on where it falls. */
START_TEST(test_nonfinite_block_boundary)
{
    static const char *const lits[] = {"NaN", "Infinity", "-Infinity"};
    const size_t mark = (size_t)4 << 20;
    const char *pre = "{\"pad\":\"", *mid = "\",\"x\":";
    const char *post = ",\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                       "\"pid\":3,\"tid\":7,\"ts\":1,\"dur\":2}]}";
    char *buf = malloc(mark + 256);
    ck_assert_ptr_nonnull(buf);
    char failed[512] = "";
    size_t nf = 0;
    for (size_t l = 0; l < sizeof lits / sizeof lits[0]; l++) {
        for (size_t at = mark - 12; at <= mark + 4; at++) {
            size_t pad = at - strlen(pre) - strlen(mid);
            char *p = buf;
            memcpy(p, pre, strlen(pre));
            p += strlen(pre);
            memset(p, 'a', pad);
            p += pad;
            p += sprintf(p, "%s%s%s", mid, lits[l], post);
            kd_error err;
            kd_trace *t = load_buf(buf, (size_t)(p - buf), &err);
            if (!t || t->kernels.n != 1) {
                nf += (size_t)snprintf(failed + nf, sizeof failed - nf, " %s@%zu", lits[l], at);
                if (nf >= sizeof failed)
                    nf = sizeof failed - 1;
            }
            kd_trace_free(t);
        }
    }
    free(buf);
    ck_assert_msg(failed[0] == '\0', "loads failed with the literal at:%s", failed);
}
END_TEST

START_TEST(test_nan_string_ts)
{
    /* Python float("nan") / float("inf") succeed but are not finite: skipped */
    kd_trace *t = load_ok(
        "[" K1 ",{'ph':'X','cat':'kernel','name':'s_nan','pid':3,'tid':7,'ts':'nan','dur':5},"
        "{'ph':'X','cat':'kernel','name':'s_inf','pid':3,'tid':7,'ts':1,'dur':'inf'},"
        "{'ph':'X','cat':'kernel','name':'s_num','pid':3,'tid':7,'ts':' 12.5 ','dur':'2'},"
        "{'ph':'X','cat':'kernel','name':'overflow','pid':3,'tid':7,'ts':1e999,'dur':1}]");
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_TS], 2);
    ck_assert_uint_eq(t->skipped[KD_SKIP_BAD_DUR], 1);
    ck_assert_uint_eq(seen_kernels(t), 2);
    const kd_kernel_rec *k = kernel_named(t, "s_num");
    ck_assert_ptr_nonnull(k);
    ck_assert_double_eq(k->ts, 12.5);
    ck_assert_double_eq(k->dur, 2.0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_long_name)
{
    size_t n = 1u << 20;
    const char *head = "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"";
    const char *tail = "\",\"pid\":3,\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"stream\":7}}]";
    size_t len = strlen(head) + n + strlen(tail);
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    strcpy(s, head);
    memset(s + strlen(head), 'n', n);
    strcpy(s + strlen(head) + n, tail);
    kd_error err;
    kd_trace *t = load_buf(s, len, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_uint_eq(kd_str_len(t->strings, t->kernels.v[0].name), n);
    ck_assert_str_eq(S(t, t->kernels.v[0].stream), "7");
    kd_trace_free(t);
    free(s);
}
END_TEST

START_TEST(test_deep_args)
{
    int depth = 10000;
    const char *head = "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"deep\",\"pid\":3,\"tid\":7,"
                       "\"ts\":1,\"dur\":2,\"args\":{\"stream\":7,\"deep\":";
    const char *tail = ",\"External id\":77},\"tid\":8}]";
    size_t len = strlen(head) + (size_t)depth * 2 + 1 + strlen(tail);
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    char *p = s;
    p += sprintf(p, "%s", head);
    for (int i = 0; i < depth; i++)
        *p++ = '[';
    *p++ = '1';
    for (int i = 0; i < depth; i++)
        *p++ = ']';
    p += sprintf(p, "%s", tail);
    kd_error err;
    kd_trace *t = load_buf(s, (size_t)(p - s), &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_int_eq(t->kernels.v[0].ext, 77);
    ck_assert_str_eq(S(t, t->kernels.v[0].tid), "8"); /* the later duplicate key wins */
    ck_assert_str_eq(S(t, t->kernels.v[0].stream), "7");
    kd_trace_free(t);
    free(s);
}
END_TEST

START_TEST(test_deep_objects_in_args)
{
    /* nested objects whose keys look like the fields the loader reads */
    kd_trace *t = load_ok(
        "[{'ph':'X','cat':'kernel','name':'k','pid':3,'tid':7,'ts':1,'dur':2,"
        "'args':{'stream':7,'inner':{'stream':99,'External id':5,'name':'x',"
        "'args':{'correlation':6}},'list':[{'ph':'M','name':'thread_name'}]},"
        "'extra':{'name':'not me','ts':'abc','pid':[1]}}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_str_eq(S(t, t->kernels.v[0].name), "k");
    ck_assert_str_eq(S(t, t->kernels.v[0].stream), "7");
    ck_assert(t->kernels.v[0].ext == KD_NOID);
    ck_assert(t->kernels.v[0].corr == KD_NOID);
    ck_assert_uint_eq(total_skipped(t), 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_unicode_escapes)
{
    kd_trace *t = load_ok("[{'ph':'X','cat':'kernel','name':'k\\u00e9\\ud83d\\ude00\\n','pid':"
                          "'\\u0033','tid':7,'ts':1,'dur':2}]");
    ck_assert_uint_eq(t->kernels.n, 1);
    ck_assert_str_eq(S(t, t->kernels.v[0].name), "k\xc3\xa9\xf0\x9f\x98\x80\n");
    ck_assert_str_eq(S(t, t->kernels.v[0].pid), "3");
    kd_trace_free(t);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

START_TEST(test_error_empty)
{
    kd_error err;
    kd_trace *t = load_buf("", 0, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    ck_assert_msg(strstr(err.msg, "empty") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_error_whitespace)
{
    kd_error err = load_fail(" \n\t\r\n ");
    assert_one_line_naming_label(&err);
}
END_TEST

START_TEST(test_error_truncated)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t n = strlen(s);
    for (size_t cut = 1; cut < n; cut += 37) {
        kd_error err;
        kd_trace *t = load_buf(s, cut, &err);
        ck_assert_msg(t == NULL, "loaded a document cut at %zu", cut);
        assert_one_line_naming_label(&err);
        assert_byte_offset(&err);
    }
    free(s);
}
END_TEST

START_TEST(test_error_not_json)
{
    static const char *const bad[] = {"hello", "{'traceEvents':[1,]}", "{traceEvents:[]}",
                                      "[{'a':1}] trailing", "{'traceEvents':[]}}",
                                      "[Nonsense]", "[{'ts':NaNa}]", "[Inf]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kd_error err = load_fail(bad[i]);
        assert_one_line_naming_label(&err);
        assert_byte_offset(&err);
    }
}
END_TEST

/* the number after "byte" in a message */
static long long msg_offset(const kd_error *err)
{
    const char *b = strstr(err->msg, "byte");
    ck_assert_msg(b != NULL, "no byte offset in: %s", err->msg);
    while (*b && (*b < '0' || *b > '9'))
        b++;
    return strtoll(b, NULL, 10);
}

START_TEST(test_error_offset_after_nan)
{
    /* the offset counts the file's bytes, whatever the NaN/Infinity rewrite did */
    kd_error plain = load_fail("[{'a':0.0,'b':'NaN'},x]");
    kd_error nan = load_fail("[{'a':NaN,'b':'NaN'},x]");
    ck_assert_msg(msg_offset(&plain) == msg_offset(&nan),
                  "same error position, different offsets: '%s' vs '%s'", plain.msg, nan.msg);
}
END_TEST

START_TEST(test_error_invalid_utf8)
{
    const char *s = "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bad\xff\xfe\",\"pid\":3,"
                    "\"tid\":7,\"ts\":1,\"dur\":2}]";
    kd_error err;
    kd_trace *t = load_buf(s, strlen(s), &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
    assert_byte_offset(&err);
}
END_TEST

START_TEST(test_error_shapes)
{
    static const char *const bad[] = {"{'traceEvents':{}}", "{'traceEvents':'x'}",
                                      "{'foo':1}", "{}", "42", "'str'", "null", "true"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kd_error err = load_fail(bad[i]);
        assert_one_line_naming_label(&err);
        if (i < 4)
            ck_assert_msg(strstr(err.msg, "traceEvents") != NULL, "%s", err.msg);
    }
}
END_TEST

START_TEST(test_error_nul_byte)
{
    const char s[] = "[{\"ph\":\"X\"}\0]";
    kd_error err;
    kd_trace *t = load_buf(s, sizeof s - 1, &err);
    ck_assert_ptr_null(t);
    assert_one_line_naming_label(&err);
}
END_TEST

/* ---- files and the shape probe ------------------------------------------ */

START_TEST(test_load_file)
{
    char *p = temp_json("{'traceEvents':[" EVENTS "]}");
    kd_error err;
    kd_error_clear(&err);
    kd_trace *t = kd_load_trace(p, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_str_eq(t->path, p);
    ck_assert_uint_eq(t->bytes_in, t->bytes_json);
    assert_base(t);
    kd_trace_free(t);

    /* gzip detected by content, whatever the name */
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    char *pz = temp_file(z, zn);
    t = kd_load_trace(pz, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert(t->gzip);
    ck_assert_uint_eq(t->bytes_in, zn);
    assert_base(t);
    kd_trace_free(t);

    unlink(p);
    unlink(pz);
    t = kd_load_trace(p, &err);
    ck_assert_ptr_null(t);
    ck_assert(err.status == KD_EINPUT || err.status == KD_EIO);
    ck_assert_msg(strstr(err.msg, p) != NULL, "%s", err.msg);
    free(pz);
    free(z);
    free(s);
    free(p);
}
END_TEST

START_TEST(test_load_file_empty)
{
    char *p = temp_file("", 0);
    kd_error err;
    kd_error_clear(&err);
    kd_trace *t = kd_load_trace(p, &err);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(err.status, KD_EINPUT);
    ck_assert_msg(strstr(err.msg, p) != NULL, "%s", err.msg);
    unlink(p);
    free(p);
}
END_TEST

START_TEST(test_probe)
{
    ck_assert(probe_json("{'traceEvents':[" EVENTS "]}"));
    ck_assert(probe_json("{'a':{'traceEvents':{}},'traceEvents':[]}"));
    ck_assert(probe_json("[" EVENTS "]"));
    ck_assert(probe_json("[{}]"));
    ck_assert(probe_json("[{},{},{},{},{},{},{},{},1]")); /* only the first 8 items */
    ck_assert(!probe_json("[]"));
    ck_assert(!probe_json("[1,{}]"));
    ck_assert(!probe_json("[{},{},{},{},{},{},{},1]"));
    ck_assert(!probe_json("{'traceEvents':{}}"));
    ck_assert(!probe_json("{'traceEvents':5}"));
    ck_assert(!probe_json("{'foo':[{}]}"));
    ck_assert(!probe_json("{'a':{'traceEvents':[]}}"));
    ck_assert(!probe_json("42"));
    ck_assert(!probe_json("garbage"));
    ck_assert(!probe_json(""));
    ck_assert(!probe_json("{'traceEvents'"));
    ck_assert(!kd_probe_trace_shape("/nonexistent-kd-dir/x.json"));
}
END_TEST

START_TEST(test_probe_gzip)
{
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = kd_test_gzip(s, strlen(s), &zn);
    char *p = temp_file(z, zn);
    ck_assert(kd_probe_trace_shape(p));
    unlink(p);
    free(p);
    free(z);
    free(s);
}
END_TEST

START_TEST(test_probe_bom)
{
    ck_assert_msg(probe_json("\xEF\xBB\xBF{'traceEvents':[]}"),
                  "a UTF-8 BOM before plain JSON fails the shape probe");
}
END_TEST

START_TEST(test_probe_nan)
{
    /* Python's json (reference §3.2) accepts bare NaN / Infinity (D5) */
    ck_assert_msg(probe_json("{'meta':NaN,'traceEvents':[]}"),
                  "NaN before traceEvents fails the shape probe");
}
END_TEST

START_TEST(test_probe_nan_in_list)
{
    ck_assert_msg(probe_json("[{'ph':'X','ts':NaN},{'dur':Infinity}]"),
                  "NaN inside the first list items fails the shape probe");
}
END_TEST

/* ---- hostile inputs ("Reliability" issue items 7, 8, 11, 12, stdin) ---- */

#define IN_BLOCK_BYTES (1u << 20) /* load.c IN_BLOCK: the compressed read block */

static void expect_same(const kd_trace *a, const kd_trace *b, const char *what)
{
    char why[256];
    ck_assert_msg(a && b, "%s: not loaded", what);
    ck_assert_msg(kd_trace_same(a, b, why, sizeof why), "%s: %s", what, why);
}

/* The same records from a compressed file as from its plain JSON. */
static void expect_same_content(const kd_trace *plain, kd_trace *packed, const char *what)
{
    ck_assert_msg(packed != NULL, "%s: not loaded", what);
    packed->bytes_in = plain->bytes_in;
    packed->gzip = plain->gzip;
    expect_same(plain, packed, what);
}

static kd_trace *base_trace(void)
{
    return load_ok("{'traceEvents':[" EVENTS "]}");
}

/* One gzip member (no name, mtime 0) of len bytes at the given level. */
static unsigned char *gzip_level(const void *data, size_t len, int level, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(deflateInit2(&z, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    uLong cap = deflateBound(&z, (uLong)len) + 64;
    unsigned char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

/* A gzip member of exactly size bytes holding `{"pad":"xxx…",` (stored,
 * level 0: its size follows the padding byte by byte), or NULL. */
static unsigned char *member_of_size(size_t size)
{
    size_t pad = size - 64;
    for (int tries = 0; tries < 4096; tries++, pad--) {
        char *json = malloc(pad + 16);
        ck_assert_ptr_nonnull(json);
        strcpy(json, "{\"pad\":\"");
        memset(json + 8, 'x', pad);
        strcpy(json + 8 + pad, "\",");
        size_t n;
        unsigned char *z = gzip_level(json, strlen(json), 0, &n);
        free(json);
        if (n == size)
            return z;
        free(z);
        if (n < size) /* overshot downwards: one stored-block header too few */
            return NULL;
    }
    return NULL;
}

/* Item 11: a member that ends on either side of a 1 MiB read block's end,
 * then a second member: one trace, read as zcat reads it. */
START_TEST(test_gzip_member_at_block_boundary)
{
    kd_trace *base = base_trace();
    char *rest = q("'traceEvents':[" EVENTS "]}");
    size_t rn;
    unsigned char *second = gzip_level(rest, strlen(rest), 6, &rn);
    int done = 0;
    for (long delta = -4; delta <= 4; delta++) { /* the block ends a few bytes past 1 MiB */
        unsigned char *first = member_of_size((size_t)(IN_BLOCK_BYTES + delta));
        if (!first)
            continue; /* no stored member of that exact size: the next one */
        size_t fn = (size_t)(IN_BLOCK_BYTES + delta);
        unsigned char *both = malloc(fn + rn);
        ck_assert_ptr_nonnull(both);
        memcpy(both, first, fn);
        memcpy(both + fn, second, rn);
        kd_error err;
        kd_trace *t = load_buf(both, fn + rn, &err);
        ck_assert_msg(t != NULL, "member of %zu bytes: %s", fn, err.msg);
        ck_assert(t->gzip);
        ck_assert_uint_eq(t->kernels.n, 3);
        ck_assert_uint_eq(t->events_read, 3);
        kd_trace_free(t);
        /* from a file too (the read blocks of a FILE) */
        char *p = temp_file(both, fn + rn);
        t = kd_load_trace(p, &err);
        ck_assert_msg(t != NULL, "file, member of %zu bytes: %s", fn, err.msg);
        kd_trace_free(t);
        unlink(p);
        free(p);
        free(both);
        free(first);
        done += delta == -1;
    }
    ck_assert_msg(done == 1, "no member of 1 MiB - 1 bytes was built");
    free(second);
    free(rest);
    kd_trace_free(base);
}
END_TEST

/* Item 11: zero padding after the last member is accepted (gzip -t does),
 * also across a read block; anything else after it is trailing garbage. */
START_TEST(test_gzip_zero_padding)
{
    kd_trace *base = base_trace();
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t zn;
    unsigned char *z = gzip_level(s, strlen(s), 6, &zn);
    static const size_t pads[] = {1, 2, 512, 3u << 20};
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
        size_t n = zn + pads[i];
        unsigned char *buf = calloc(1, n + 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, z, zn);
        kd_error err;
        kd_trace *t = load_buf(buf, n, &err);
        ck_assert_msg(t != NULL, "%zu zero bytes after the member: %s", pads[i], err.msg);
        assert_base(t);
        kd_trace_free(t);
        buf[n] = 'x'; /* zeros, then garbage */
        t = load_buf(buf, n + 1, &err);
        ck_assert_ptr_null(t);
        ck_assert_msg(strstr(err.msg, "trailing garbage after the gzip stream"), "%s", err.msg);
        free(buf);
    }
    free(z);
    free(s);
    kd_trace_free(base);
}
END_TEST

static unsigned char *zstd_of(const void *data, size_t len, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    unsigned char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    size_t n = ZSTD_compress(out, cap, data, len, 3);
    ck_assert(!ZSTD_isError(n));
    *out_len = n;
    return out;
}

static unsigned char *xz_of(const void *data, size_t len, size_t *out_len)
{
    size_t cap = lzma_stream_buffer_bound(len), pos = 0;
    unsigned char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, data, len, out, &pos, cap),
                     LZMA_OK);
    *out_len = pos;
    return out;
}

/* Item 12: zstd and xz are read as gzip is (by content, not name), whole,
 * in pieces (two frames / streams), from a file; truncated or corrupt ones
 * are named. */
START_TEST(test_zstd_xz)
{
    kd_trace *base = base_trace();
    char *s = q("{'traceEvents':[" EVENTS "]}");
    size_t n = strlen(s), half = n / 2;
    for (int codec = 0; codec < 2; codec++) {
        const char *name = codec ? "xz" : "zstd";
        unsigned char *(*pack)(const void *, size_t, size_t *) = codec ? xz_of : zstd_of;
        size_t zn, an, bn;
        unsigned char *z = pack(s, n, &zn);
        kd_error err;
        kd_trace *t = load_buf(z, zn, &err);
        ck_assert_msg(t != NULL, "%s: %s", name, err.msg);
        ck_assert_uint_eq(t->bytes_in, zn);
        ck_assert_uint_eq(t->bytes_json, n);
        expect_same_content(base, t, name);
        kd_trace_free(t);

        unsigned char *a = pack(s, half, &an), *b = pack(s + half, n - half, &bn);
        unsigned char *ab = malloc(an + bn);
        ck_assert_ptr_nonnull(ab);
        memcpy(ab, a, an);
        memcpy(ab + an, b, bn);
        t = load_buf(ab, an + bn, &err);
        ck_assert_msg(t != NULL, "%s in two pieces: %s", name, err.msg);
        expect_same_content(base, t, name);
        kd_trace_free(t);

        char *p = temp_file(z, zn);
        t = kd_load_trace(p, &err);
        ck_assert_msg(t != NULL, "%s file: %s", name, err.msg);
        expect_same_content(base, t, name);
        kd_trace_free(t);
        unlink(p);
        free(p);

        for (size_t cut = 6; cut < zn; cut += 7) { /* from the whole magic on */
            t = load_buf(z, cut, &err);
            ck_assert_msg(t == NULL, "%s cut at %zu loaded", name, cut);
            ck_assert_msg(strstr(err.msg, LABEL) && strstr(err.msg, name) && !strchr(err.msg, '\n'),
                          "%s cut at %zu: %s", name, cut, err.msg);
        }
        z[zn / 2] ^= 0x55;
        z[zn / 2 + 1] ^= 0xaa;
        t = load_buf(z, zn, &err);
        ck_assert_msg(t == NULL, "corrupt %s loaded", name);
        /* xz checks a CRC; a zstd frame without checksum may inflate to
         * bytes that fail as JSON instead */
        ck_assert_msg(strstr(err.msg, name) || (!codec && strstr(err.msg, "JSON")), "%s", err.msg);
        free(a);
        free(b);
        free(ab);
        free(z);
    }
    free(s);
    kd_trace_free(base);
}
END_TEST

/* Item 12: compressions that are not read are named, not "invalid JSON". */
START_TEST(test_refused_compressions)
{
    static const struct {
        const char *magic;
        size_t n;
        const char *name;
    } cases[] = {{"BZh91AY&SY", 10, "bzip2"},
                 {"\x04\x22\x4d\x18\x64\x40", 6, "lz4"},
                 {"PK\x03\x04\x14\x00", 6, "zip"},
                 {"LZIP\x01\x0c", 6, "lzip"},
                 {"\x1f\x9d\x90\x7b\x22", 5, "compress"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kd_error err;
        kd_trace *t = load_buf(cases[i].magic, cases[i].n, &err);
        ck_assert_ptr_null(t);
        assert_one_line_naming_label(&err);
        ck_assert_msg(strstr(err.msg, cases[i].name) && !strstr(err.msg, "invalid JSON"), "%s",
                      err.msg);
    }
}
END_TEST

/* A document with one string of n bytes of c: the kernel's name (kept)
 * or the value of a key before traceEvents (skipped). */
static char *doc_with_string(size_t n, bool as_name, size_t *len, size_t *at)
{
    const char *head = as_name ? "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
                               : "{\"skipped\":";
    const char *tail = as_name ? ",\"pid\":3,\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"stream\":7}}]}"
                               : ",\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                                 "\"pid\":3,\"tid\":7,\"ts\":1,\"dur\":2,\"args\":{\"stream\":7}}]}";
    size_t h = strlen(head), tl = strlen(tail);
    *len = h + n + 2 + tl;
    char *s = malloc(*len + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, head, h);
    s[h] = '"';
    memset(s + h + 1, 'n', n);
    s[h + 1 + n] = '"';
    memcpy(s + h + 2 + n, tail, tl + 1);
    *at = h; /* the opening quote */
    return s;
}

/* Item 8: strings spanning many read blocks load (linear since the blocks
 * grow with the open token; the quadratic version took minutes for these
 * sizes under ASan), kept whole or skipped. */
START_TEST(test_long_strings_span_blocks)
{
    static const size_t sizes[] = {(4u << 20) + 17, 24u << 20};
    for (size_t i = 0; i < 2; i++) {
        for (int as_name = 0; as_name < 2; as_name++) {
            if (as_name && i == 1)
                continue; /* a kept 24 MB name: its classification is slow under ASan */
            size_t len, at;
            char *s = doc_with_string(sizes[i], as_name, &len, &at);
            char *p = temp_file(s, len);
            kd_error err;
            kd_load_options two = {.threads = 2, .split_min_bytes = 1};
            kd_trace *t = kd_load_trace(p, &err), *u = kd_load_trace_opts(p, &two, &err);
            ck_assert_msg(t && u, "a %zu-byte string: %s", sizes[i], err.msg);
            expect_same(t, u, "a long string, split load");
            ck_assert_uint_eq(t->kernels.n, 1);
            if (as_name)
                ck_assert_uint_eq(kd_str_len(t->strings, t->kernels.v[0].name), sizes[i]);
            kd_trace_free(t);
            kd_trace_free(u);
            /* and gzip'd (the reader thread's blocks) */
            size_t zn;
            unsigned char *z = gzip_level(s, len, 1, &zn);
            t = kd_load_trace_mem(z, zn, LABEL, &err);
            ck_assert_msg(t != NULL, "gzip, a %zu-byte string: %s", sizes[i], err.msg);
            kd_trace_free(t);
            free(z);
            unlink(p);
            free(p);
            free(s);
        }
    }
}
END_TEST

/* Item 8: max_string. A string of the limit loads; one byte more stops the
 * load naming the offset of its opening quote; an open string of more than
 * the limit stops it before it ends (named "at or before" a byte). */
START_TEST(test_max_string)
{
    for (int as_name = 0; as_name < 2; as_name++) {
        size_t len, at;
        char *s = doc_with_string(1000, as_name, &len, &at);
        kd_error err;
        kd_load_options lim = {.threads = 1, .max_string = 1000};
        kd_load_options lim2 = {.threads = 2, .split_min_bytes = 1, .max_string = 1000};
        kd_load_options less = {.threads = 1, .max_string = 999};
        kd_trace *t = kd_load_trace_mem_opts(s, len, LABEL, &lim, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        kd_trace_free(t);
        for (int k = 0; k < 2; k++) {
            t = kd_load_trace_mem_opts(s, len, LABEL, k ? &lim2 : &less, &err);
            if (k) { /* the limit: loads split too */
                ck_assert_msg(t != NULL, "%s", err.msg);
                kd_trace_free(t);
                continue;
            }
            ck_assert_ptr_null(t);
            assert_one_line_naming_label(&err);
            char want[128];
            snprintf(want, sizeof want, "longer than the 999-byte limit (--max-string) at byte %zu",
                     at);
            ck_assert_msg(strstr(err.msg, want), "%s (want %s)", err.msg, want);
        }
        free(s);
    }
    /* open longer than the limit: stopped before its end */
    size_t len, at;
    char *s = doc_with_string(12u << 20, false, &len, &at);
    char *p = temp_file(s, len);
    kd_error err;
    kd_load_options lim = {.threads = 1, .max_string = 2u << 20};
    kd_trace *t = kd_load_trace_opts(p, &lim, &err);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.msg, "longer than the 2097152-byte limit (--max-string) at or before byte "),
                  "%s", err.msg);
    unsigned long long b = strtoull(strstr(err.msg, "before byte ") + 12, NULL, 10);
    ck_assert_msg(b >= at && b < (8u << 20), "offset %llu, string at %zu", b, at);
    /* the default limit (256 MiB) takes it */
    t = kd_load_trace(p, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    kd_trace_free(t);
    ck_assert_uint_eq(KD_LOAD_MAX_STRING, 256u << 20);
    unlink(p);
    free(p);
    free(s);
}
END_TEST

/* Item 7: every allocation of a load, one at a time and from it on, fails:
 * the load either recovers (the same trace) or ends with KD_ENOMEM naming
 * the label, "out of memory", everything released (the ASan build checks
 * leaks). Plain, gzip, zstd and xz; serial and split; a string longer than
 * yajl's buffers and than a read block, so yajl's own reallocs fail too. */
START_TEST(test_oom_every_allocation)
{
    size_t len, at;
    char *s = doc_with_string((1u << 20) + 5000, false, &len, &at);
    size_t zn[4] = {len, 0, 0, 0};
    unsigned char *in[4] = {(unsigned char *)s, gzip_level(s, len, 1, &zn[1]), zstd_of(s, len, &zn[2]),
                            xz_of(s, len, &zn[3])};
    kd_load_options two = {.threads = 2, .split_min_bytes = 1};
    for (int codec = 0; codec < 4; codec++) {
        for (int split = 0; split < 2; split++) {
            const kd_load_options *opt = split ? &two : NULL;
            kd_error err;
            kd_trace *ref = kd_load_trace_mem_opts(in[codec], zn[codec], LABEL, opt, &err);
            ck_assert_msg(ref != NULL, "%s", err.msg);
            for (int mode = 0; mode < 2; mode++) {
                long n = 0, fails = 0;
                for (;; n++) {
                    failalloc_arm(n, mode ? FAILALLOC_FROM : FAILALLOC_ONE);
                    kd_trace *t = kd_load_trace_mem_opts(in[codec], zn[codec], LABEL, opt, &err);
                    long failed = failalloc_disarm();
                    if (!failed) {
                        expect_same(ref, t, "no allocation failed");
                        kd_trace_free(t);
                        break;
                    }
                    if (t) {
                        expect_same(ref, t, "recovered from a failed allocation");
                        kd_trace_free(t);
                        continue;
                    }
                    fails++;
                    ck_assert_msg(err.status == KD_ENOMEM && strstr(err.msg, LABEL) &&
                                      strstr(err.msg, "out of memory"),
                                  "codec %d split %d mode %d allocation %ld: %s", codec, split,
                                  mode, n, err.msg);
                }
                /* one failure in a split load: it falls back to one thread */
                ck_assert_msg(n > 10 && (fails > 0 || (split && !mode)),
                              "codec %d split %d mode %d: %ld allocations, %ld failed loads",
                              codec, split, mode, n, fails);
            }
            kd_trace_free(ref);
        }
    }
    for (int i = 0; i < 4; i++)
        free(in[i]);
}
END_TEST

/* The probe under the same: never a crash, and false or the right answer. */
START_TEST(test_oom_probe)
{
    char *p = temp_json("{'traceEvents':[" EVENTS "]}");
    for (long n = 0; n < 400; n++) {
        failalloc_arm(n, FAILALLOC_FROM);
        bool r = kd_probe_trace_shape(p);
        long failed = failalloc_disarm();
        ck_assert(r || failed);
    }
    unlink(p);
    free(p);
}
END_TEST

/* "-" is standard input: plain, gzip, zstd and xz, named "standard input"
 * in messages; the trace's path is "-". */
static kd_trace *load_stdin(const void *data, size_t len, const kd_load_options *opt,
                            kd_error *err)
{
    char *p = temp_file(data, len);
    int fd = open(p, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, 0), 0);
    close(fd);
    clearerr(stdin);
    kd_trace *t = kd_load_trace_opts("-", opt, err);
    unlink(p);
    free(p);
    return t;
}

START_TEST(test_stdin)
{
    kd_trace *base = base_trace();
    char *s = q("{'meta':NaN,'traceEvents':[" EVENTS "]}");
    size_t n = strlen(s), zn[4] = {n, 0, 0, 0};
    unsigned char *in[4] = {(unsigned char *)s, gzip_level(s, n, 6, &zn[1]), zstd_of(s, n, &zn[2]),
                            xz_of(s, n, &zn[3])};
    kd_load_options two = {.threads = 2, .split_min_bytes = 1};
    for (int codec = 0; codec < 4; codec++) {
        kd_error err;
        /* two threads asked: standard input is still read once, serially */
        kd_trace *t = load_stdin(in[codec], zn[codec], &two, &err);
        ck_assert_msg(t != NULL, "codec %d: %s", codec, err.msg);
        kd_trace *ref = kd_load_trace_mem(in[codec], zn[codec], LABEL, &err);
        ck_assert_msg(ref != NULL, "%s", err.msg);
        expect_same(ref, t, "standard input");
        kd_trace_free(ref);
        ck_assert_uint_eq(t->kernels.n, 3);
        ck_assert_str_eq(t->path, "-");
        ck_assert(!t->split);
        ck_assert(t->gzip == (codec == 1));
        kd_trace_free(t);
    }
    kd_error err;
    kd_trace *t = load_stdin("{\"traceEvents\":[", 16, NULL, &err);
    ck_assert_ptr_null(t);
    ck_assert_msg(strncmp(err.msg, "standard input: truncated JSON", 30) == 0, "%s", err.msg);
    t = load_stdin("", 0, NULL, &err);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err.msg, "standard input: empty file");
    for (int i = 0; i < 4; i++)
        free(in[i]);
    kd_trace_free(base);
}
END_TEST


/* ---- metadata: distributedInfo, deviceProperties; the header peek ------- */

static void assert_devices(const kd_trace *t, size_t n, const int64_t *ids, const char *const *names)
{
    ck_assert_uint_eq(t->devices.n, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(t->devices.v[i].id, ids[i]);
        if (names[i])
            ck_assert_str_eq(S(t, t->devices.v[i].name), names[i]);
        else
            ck_assert_uint_eq(t->devices.v[i].name, 0);
    }
}

START_TEST(test_meta_before_events)
{
    kd_trace *t = load_ok("{'schemaVersion':1,'deviceProperties':[{'id':0,'name':'Tesla "
                          "V100-DGXS-32GB','totalGlobalMem':34087305216,'computeMajor':7},"
                          "{'id':1,'name':'B'}],'distributedInfo':{'backend':'nccl','rank':1,"
                          "'world_size':128,'pg_config':[{'rank':7,'ranks':[0,1]}]},"
                          "'traceEvents':[" EVENTS "]}");
    assert_base(t);
    ck_assert(t->has_rank && t->has_world_size);
    ck_assert_int_eq(t->rank, 1);
    ck_assert_int_eq(t->world_size, 128);
    static const int64_t ids[] = {0, 1};
    static const char *const names[] = {"Tesla V100-DGXS-32GB", "B"};
    assert_devices(t, 2, ids, names);
    kd_trace_free(t);

    /* none: nothing recorded */
    t = load_ok("{'traceEvents':[" EVENTS "]}");
    ck_assert(!t->has_rank && !t->has_world_size);
    ck_assert_uint_eq(t->devices.n, 0);
    kd_trace_free(t);
    t = load_ok("[" EVENTS "]");
    ck_assert(!t->has_rank && !t->has_world_size);
    ck_assert_uint_eq(t->devices.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_meta_after_events)
{
    kd_trace *t = load_ok("{'traceEvents':[" EVENTS "],'distributedInfo':{'rank':3,"
                          "'world_size':4},'deviceProperties':[{'name':'X','id':7}]}");
    assert_base(t);
    ck_assert(t->has_rank && t->has_world_size);
    ck_assert_int_eq(t->rank, 3);
    ck_assert_int_eq(t->world_size, 4);
    static const int64_t ids[] = {7};
    static const char *const names[] = {"X"};
    assert_devices(t, 1, ids, names);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_meta_not_integers)
{
    static const char *const ranks[] = {"'1'", "1.0", "1e0", "true", "null", "NaN", "[1]",
                                        "{'rank':1}", "99999999999999999999", "-0.5"};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        char doc[256];
        snprintf(doc, sizeof doc,
                 "{'distributedInfo':{'rank':%s,'world_size':2},'traceEvents':[" K1 "]}",
                 ranks[i]);
        kd_trace *t = load_ok(doc);
        ck_assert_msg(!t->has_rank, "rank %s was recorded", ranks[i]);
        ck_assert(t->has_world_size);
        ck_assert_int_eq(t->world_size, 2);
        kd_trace_free(t);
    }
    /* the int64 range, negative ones included */
    kd_trace *t = load_ok("{'distributedInfo':{'rank':-9223372036854775808,"
                          "'world_size':9223372036854775807},'traceEvents':[]}");
    ck_assert(t->has_rank && t->has_world_size);
    ck_assert_int_eq(t->rank, INT64_MIN);
    ck_assert_int_eq(t->world_size, INT64_MAX);
    kd_trace_free(t);
    /* a distributedInfo that is not an object, or nested elsewhere */
    t = load_ok("{'distributedInfo':[{'rank':1}],'x':{'distributedInfo':{'rank':1}},"
                "'traceEvents':[{'ph':'X','args':{'distributedInfo':{'rank':1},"
                "'deviceProperties':[{'id':1}]}}]}");
    ck_assert(!t->has_rank && !t->has_world_size);
    ck_assert_uint_eq(t->devices.n, 0);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_meta_duplicates)
{
    /* the last key wins, as Python's json: of a member, and of the object */
    kd_trace *t = load_ok("{'distributedInfo':{'rank':1,'rank':2,'world_size':3},"
                          "'traceEvents':[" EVENTS "]}");
    ck_assert_int_eq(t->rank, 2);
    kd_trace_free(t);
    t = load_ok("{'distributedInfo':{'rank':1,'world_size':2},'traceEvents':[" EVENTS "],"
                "'distributedInfo':{'rank':0}}");
    ck_assert(t->has_rank && !t->has_world_size);
    ck_assert_int_eq(t->rank, 0);
    kd_trace_free(t);
    t = load_ok("{'distributedInfo':{'rank':5},'traceEvents':[" EVENTS "],"
                "'distributedInfo':{'rank':1,'rank':'x','world_size':8}}");
    ck_assert(!t->has_rank && t->has_world_size);
    ck_assert_int_eq(t->world_size, 8);
    kd_trace_free(t);
    t = load_ok("{'distributedInfo':{'rank':5},'distributedInfo':null,'traceEvents':[]}");
    ck_assert(!t->has_rank);
    kd_trace_free(t);
    t = load_ok("{'deviceProperties':[{'id':0,'name':'A'},{'id':1,'name':'B'}],"
                "'traceEvents':[" EVENTS "],'deviceProperties':[{'id':2,'name':'C','name':'D',"
                "'id':'x'}]}");
    static const int64_t ids[] = {-1};
    static const char *const names[] = {"D"};
    assert_devices(t, 1, ids, names);
    kd_trace_free(t);
    t = load_ok("{'deviceProperties':[{'id':0,'name':'A'}],'deviceProperties':{},"
                "'traceEvents':[]}");
    ck_assert_uint_eq(t->devices.n, 0);
    kd_trace_free(t);
    /* a second traceEvents key drops the events, not the metadata */
    t = load_ok("{'distributedInfo':{'rank':2},'deviceProperties':[{'id':0}],"
                "'traceEvents':[" K1 "],'traceEvents':[" EVENTS "]}");
    assert_base(t);
    ck_assert(t->has_rank);
    ck_assert_int_eq(t->rank, 2);
    ck_assert_uint_eq(t->devices.n, 1);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_meta_devices)
{
    kd_trace *t = load_ok("{'deviceProperties':[{'name':'A'},7,{'id':1.5,'name':3},"
                          "{'id':2,'name':{'x':'y'},'sub':{'id':9,'name':'no'}},[{'id':4}],"
                          "{'id':-3,'name':''},{}],'traceEvents':[]}");
    static const int64_t ids[] = {-1, -1, 2, -3, -1};
    static const char *const names[] = {"A", NULL, NULL, "", NULL};
    assert_devices(t, 5, ids, names);
    kd_trace_free(t);
}
END_TEST

/* n events of every kept kind, with metadata before (pre) and after (post). */
static char *meta_doc(const char *pre, int n, const char *post)
{
    size_t cap = strlen(pre) + strlen(post) + (size_t)n * 200 + 64;
    char *d = malloc(cap);
    ck_assert_ptr_nonnull(d);
    size_t o = (size_t)snprintf(d, cap, "{%s'traceEvents':[", pre);
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(d + o, cap - o,
                              "%s{'ph':'X','cat':'kernel','name':'k%d','pid':1,'tid':7,'ts':%d,"
                              "'dur':2,'args':{'stream':7,'correlation':%d}}",
                              i ? "," : "", i % 17, i * 10, i);
    snprintf(d + o, cap - o, "]%s}", post);
    char *r = q(d);
    free(d);
    return r;
}

/* A split load of data (two threads, cut whatever the size) must split and
 * agree with the serial one; returns the split trace. */
static kd_trace *expect_split_same(const void *data, size_t len, const kd_trace *serial)
{
    kd_error err;
    kd_load_options opt = {.threads = 2, .split_min_bytes = 1};
    kd_trace *t = kd_load_trace_mem_opts(data, len, LABEL, &opt, &err);
    ck_assert_msg(t != NULL, "split load failed: %s", err.msg);
    ck_assert_msg(t->split, "the load did not split");
    char why[256];
    ck_assert_msg(kd_trace_same(serial, t, why, sizeof why), "split differs: %s", why);
    return t;
}

START_TEST(test_meta_split)
{
    static const char *const cases[][2] = {
        {"'distributedInfo':{'rank':1,'world_size':2},'deviceProperties':[{'id':0,'name':'G'}],",
         ""},
        {"", ",'distributedInfo':{'rank':1,'world_size':2},'deviceProperties':[{'id':0,'name':'G'},"
             "{'id':1,'name':'k3'}]"},
        /* in both halves: the tail's (later) key wins, key by key */
        {"'distributedInfo':{'rank':1,'world_size':2},'deviceProperties':[{'id':0,'name':'G'}],",
         ",'distributedInfo':{'rank':0},'deviceProperties':[{'id':5,'name':'k1'},{'id':6}]"},
        {"'distributedInfo':{'rank':1,'world_size':2},",
         ",'deviceProperties':[{'id':5,'name':'new name'}]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *doc = meta_doc(cases[c][0], 400, cases[c][1]);
        size_t len = strlen(doc);
        kd_error err;
        kd_trace *serial = kd_load_trace_mem(doc, len, LABEL, &err);
        ck_assert_msg(serial != NULL, "%s", err.msg);
        ck_assert(serial->has_rank);
        ck_assert_uint_ge(serial->devices.n, 1);
        kd_trace *t = expect_split_same(doc, len, serial);
        ck_assert_int_eq(t->rank, c == 2 ? 0 : 1);
        ck_assert(t->has_world_size == (c != 2));
        kd_trace_free(t);
        /* the gzip split: inflated on one thread, parsed on both */
        size_t zn;
        unsigned char *z = kd_test_gzip(doc, len, &zn);
        kd_trace *zs = kd_load_trace_mem(z, zn, LABEL, &err);
        ck_assert_msg(zs != NULL, "%s", err.msg);
        t = expect_split_same(z, zn, zs);
        ck_assert(t->has_rank == serial->has_rank && t->rank == serial->rank);
        ck_assert_uint_eq(t->devices.n, serial->devices.n);
        for (size_t i = 0; i < t->devices.n; i++) {
            ck_assert_int_eq(t->devices.v[i].id, serial->devices.v[i].id);
            ck_assert_str_eq(S(t, t->devices.v[i].name), S(serial, serial->devices.v[i].name));
        }
        kd_trace_free(t);
        kd_trace_free(zs);
        kd_trace_free(serial);
        free(z);
        free(doc);
    }
}
END_TEST

START_TEST(test_meta_compressed)
{
    char *doc = meta_doc("'distributedInfo':{'rank':6,'world_size':8},", 20,
                         ",'deviceProperties':[{'id':3,'name':'MI300X'}]");
    size_t len = strlen(doc);
    for (int codec = 0; codec < 2; codec++) {
        size_t zn;
        unsigned char *z = codec ? xz_of(doc, len, &zn) : zstd_of(doc, len, &zn);
        kd_error err;
        kd_trace *t = load_buf(z, zn, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        ck_assert(t->has_rank && t->rank == 6 && t->world_size == 8);
        ck_assert_uint_eq(t->devices.n, 1);
        ck_assert_str_eq(S(t, t->devices.v[0].name), "MI300X");
        kd_trace_free(t);
        free(z);
    }
    free(doc);
}
END_TEST

/* Peeks at a temp file holding data. */
static kd_trace_header peek_data(const void *data, size_t len)
{
    char *p = temp_file(data, len);
    kd_trace_header h;
    kd_error err;
    kd_error_clear(&err);
    kd_status st = kd_peek_trace_header(p, &h, &err);
    ck_assert_msg(st == KD_OK, "peek: %s", err.msg);
    unlink(p);
    free(p);
    return h;
}

static kd_trace_header peek_json(const char *json)
{
    char *s = q(json);
    kd_trace_header h = peek_data(s, strlen(s));
    free(s);
    return h;
}

static void expect_peek(const char *json, bool has_rank, int64_t rank, bool has_ws, int64_t ws)
{
    kd_trace_header h = peek_json(json);
    ck_assert_msg(h.has_rank == has_rank && (!has_rank || h.rank == rank) &&
                      h.has_world_size == has_ws && (!has_ws || h.world_size == ws),
                  "peek %s: rank %d/%lld, world size %d/%lld", json, (int)h.has_rank,
                  (long long)h.rank, (int)h.has_world_size, (long long)h.world_size);
}

START_TEST(test_peek_header)
{
    expect_peek("{'distributedInfo':{'backend':'nccl','rank':1,'world_size':128,"
                "'pg_config':[{'rank':5}]},'traceEvents':[" EVENTS "]}",
                true, 1, true, 128);
    expect_peek("{'deviceProperties':[{'id':0}],'distributedInfo':{'rank':0},'traceEvents':[]}",
                true, 0, false, 0);
    /* parsing stops at traceEvents: what follows is never read */
    expect_peek("{'distributedInfo':{'rank':3,'world_size':4},'traceEvents':[ this is not "
                "JSON at all",
                true, 3, true, 4);
    /* traceEvents first: looks no further */
    expect_peek("{'traceEvents':[],'distributedInfo':{'rank':3}}", false, 0, false, 0);
    expect_peek("[{'ph':'X'}]", false, 0, false, 0);
    /* the last key before traceEvents wins; integers only */
    expect_peek("{'distributedInfo':{'rank':1,'rank':2},'traceEvents':[]}", true, 2, false, 0);
    expect_peek("{'distributedInfo':{'rank':1},'distributedInfo':{'world_size':2},"
                "'traceEvents':[]}",
                false, 0, true, 2);
    expect_peek("{'distributedInfo':{'rank':'0','world_size':2.0},'traceEvents':[]}", false, 0,
                false, 0);
    expect_peek("{'distributedInfo':{'rank':true},'traceEvents':[]}", false, 0, false, 0);
    expect_peek("{'x':{'distributedInfo':{'rank':1}},'traceEvents':[]}", false, 0, false, 0);
    /* NaN before traceEvents (D5), a BOM, a document with no traceEvents */
    expect_peek("{'meta':NaN,'distributedInfo':{'rank':4},'traceEvents':[]}", true, 4, false, 0);
    expect_peek("\xEF\xBB\xBF{'distributedInfo':{'rank':4}}", true, 4, false, 0);
    /* malformed or cut short: nothing declared, not an error */
    expect_peek("{'distributedInfo':{'rank':3,", false, 0, false, 0);
    expect_peek("{'distributedInfo':{'rank':3}} garbage", true, 3, false, 0);
    expect_peek("{'distributedInfo':{'rank':3},,'traceEvents':[]}", false, 0, false, 0);
    expect_peek("", false, 0, false, 0);
    expect_peek("42", false, 0, false, 0);
    kd_trace_header h = peek_data("BZh91AY&SY", 10); /* bzip2: not read, not an error */
    ck_assert(!h.has_rank);
}
END_TEST

START_TEST(test_peek_long_header)
{
    /* a 3 MB string before distributedInfo: read through (in growing blocks) */
    size_t n = 3u << 20;
    char *d = malloc(n + 200);
    ck_assert_ptr_nonnull(d);
    size_t o = (size_t)sprintf(d, "{\"huge\":\"");
    memset(d + o, 'a', n);
    o += n;
    o += (size_t)sprintf(d + o, "\",\"distributedInfo\":{\"rank\":9},\"traceEvents\":[");
    kd_trace_header h = peek_data(d, o);
    ck_assert(h.has_rank);
    ck_assert_int_eq(h.rank, 9);
    free(d);
}
END_TEST

START_TEST(test_peek_compressed)
{
    /* a header, then 8 MB of garbage the peek never inflates */
    const char *head = "{\"distributedInfo\":{\"rank\":2,\"world_size\":16},\"traceEvents\":[";
    size_t n = strlen(head) + (8u << 20);
    char *d = malloc(n);
    ck_assert_ptr_nonnull(d);
    memcpy(d, head, strlen(head));
    memset(d + strlen(head), '!', n - strlen(head));
    for (int codec = 0; codec < 3; codec++) {
        size_t zn;
        unsigned char *z = codec == 0   ? kd_test_gzip(d, n, &zn)
                           : codec == 1 ? zstd_of(d, n, &zn)
                                        : xz_of(d, n, &zn);
        kd_trace_header h = peek_data(z, zn);
        ck_assert_msg(h.has_rank && h.rank == 2 && h.has_world_size && h.world_size == 16,
                      "codec %d", codec);
        /* a truncated stream: the header is still there */
        h = peek_data(z, zn / 2);
        ck_assert_msg(h.has_rank && h.rank == 2, "codec %d truncated", codec);
        free(z);
    }
    free(d);
}
END_TEST

/* Every allocation failing in turn: a load with metadata in both halves
 * either fails with "out of memory" or equals the full one; the peek either
 * says KD_ENOMEM or gives the right answer. */
START_TEST(test_oom_meta)
{
    char *doc = meta_doc("'distributedInfo':{'rank':1,'world_size':2},'deviceProperties':[{'id':0,"
                         "'name':'G'}],",
                         60, ",'deviceProperties':[{'id':1,'name':'H'},{'id':2,'name':'I'}]");
    size_t len = strlen(doc);
    kd_load_options two = {.threads = 2, .split_min_bytes = 1};
    for (int split = 0; split < 2; split++) {
        const kd_load_options *opt = split ? &two : NULL;
        kd_error err;
        kd_trace *ref = kd_load_trace_mem_opts(doc, len, LABEL, opt, &err);
        ck_assert_msg(ref != NULL, "%s", err.msg);
        ck_assert_uint_eq(ref->devices.n, 2);
        for (long n = 0;; n++) {
            failalloc_arm(n, FAILALLOC_ONE);
            kd_trace *t = kd_load_trace_mem_opts(doc, len, LABEL, opt, &err);
            long failed = failalloc_disarm();
            if (t) {
                char why[256];
                ck_assert_msg(kd_trace_same(ref, t, why, sizeof why), "allocation %ld: %s", n,
                              why);
                kd_trace_free(t);
            } else {
                ck_assert_msg(err.status == KD_ENOMEM, "allocation %ld: %s", n, err.msg);
            }
            if (!failed)
                break;
        }
        kd_trace_free(ref);
    }
    char *p = temp_file(doc, len);
    for (long n = 0; n < 200; n++) {
        failalloc_arm(n, FAILALLOC_FROM);
        kd_trace_header h;
        kd_error err;
        kd_status st = kd_peek_trace_header(p, &h, &err);
        long failed = failalloc_disarm();
        if (st == KD_OK)
            ck_assert_msg(h.has_rank && h.rank == 1 && h.world_size == 2, "allocation %ld", n);
        else
            ck_assert_msg(failed && st == KD_ENOMEM, "allocation %ld: %d %s", n, (int)st, err.msg);
    }
    unlink(p);
    free(p);
    free(doc);
}
END_TEST

START_TEST(test_peek_errors)
{
    kd_trace_header h = {true, true, 1, 1};
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_peek_trace_header("/nonexistent-kd-dir/x.json", &h, &err), KD_EINPUT);
    ck_assert(!h.has_rank && !h.has_world_size);
    ck_assert_msg(strncmp(err.msg, "/nonexistent-kd-dir/x.json: ", 28) == 0, "%s", err.msg);
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    kd_error_clear(&err);
    ck_assert_int_eq(kd_peek_trace_header("/", &h, &err), KD_EINPUT); /* a directory */
    ck_assert_msg(strncmp(err.msg, "/: ", 3) == 0, "%s", err.msg);
}
END_TEST

Suite *load_suite(void)
{
    Suite *s = suite_create("load");

    TCase *tm = tcase_create("metadata");
    tcase_set_timeout(tm, 60);
    tcase_add_test(tm, test_meta_before_events);
    tcase_add_test(tm, test_meta_after_events);
    tcase_add_test(tm, test_meta_not_integers);
    tcase_add_test(tm, test_meta_duplicates);
    tcase_add_test(tm, test_meta_devices);
    tcase_add_test(tm, test_meta_split);
    tcase_add_test(tm, test_meta_compressed);
    tcase_add_test(tm, test_peek_header);
    tcase_add_test(tm, test_peek_long_header);
    tcase_add_test(tm, test_peek_compressed);
    tcase_add_test(tm, test_peek_errors);
    tcase_add_test(tm, test_oom_meta);
    suite_add_tcase(s, tm);

    TCase *tc = tcase_create("shapes");
    tcase_add_test(tc, test_shape_object);
    tcase_add_test(tc, test_shape_list);
    tcase_add_test(tc, test_shape_other_keys);
    tcase_add_test(tc, test_empty_event_list);
    tcase_add_test(tc, test_gzip);
    tcase_add_test(tc, test_gzip_two_members);
    tcase_add_test(tc, test_gzip_truncated);
    tcase_add_test(tc, test_gzip_corrupt);
    tcase_add_test(tc, test_gzip_trailing_garbage);
    tcase_add_test(tc, test_gzip_of_garbage);
    suite_add_tcase(s, tc);

    tc = tcase_create("kept");
    tcase_add_test(tc, test_kernel_fields);
    tcase_add_test(tc, test_kernel_gpu_cat);
    tcase_add_test(tc, test_stream_marker_void_name);
    tcase_add_test(tc, test_stream_marker_no_hint);
    tcase_add_test(tc, test_not_kernels);
    tcase_add_test(tc, test_cpu_ops);
    tcase_add_test(tc, test_python_frames);
    tcase_add_test(tc, test_launches);
    tcase_add_test(tc, test_stage_annotations);
    tcase_add_test(tc, test_profiler_steps);
    tcase_add_test(tc, test_thread_names);
    tcase_add_test(tc, test_corr_ext_pairs);
    tcase_add_test(tc, test_seen_pids_cats);
    suite_add_tcase(s, tc);

    tc = tcase_create("pystr");
    tcase_add_test(tc, test_pystr_ids);
    tcase_add_test(tc, test_time_literals);
    tcase_add_test(tc, test_name_cat_pystr);
    tcase_add_test(tc, test_stream_truthiness);
    tcase_add_test(tc, test_stream_marker_falsy_value);
    suite_add_tcase(s, tc);

    tc = tcase_create("skips");
    tcase_add_test(tc, test_skip_reasons);
    tcase_add_test(tc, test_skip_reason_names);
    tcase_add_test(tc, test_zero_extent_boundary);
    suite_add_tcase(s, tc);

    tc = tcase_create("content");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_duplicate_trace_events_last_wins);
    tcase_add_test(tc, test_duplicate_trace_events_last_not_list);
    tcase_add_test(tc, test_nested_trace_events_key_ignored);
    tcase_add_test(tc, test_bom_plain);
    tcase_add_test(tc, test_bom_gzip);
    tcase_add_test(tc, test_crlf);
    tcase_add_test(tc, test_nan_infinity);
    tcase_add_test(tc, test_nan_string_ts);
    tcase_add_test(tc, test_nonfinite_pystr);
    tcase_add_test(tc, test_nonfinite_block_boundary);
    tcase_add_test(tc, test_long_name);
    tcase_add_test(tc, test_deep_args);
    tcase_add_test(tc, test_deep_objects_in_args);
    tcase_add_test(tc, test_unicode_escapes);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, test_error_empty);
    tcase_add_test(tc, test_error_whitespace);
    tcase_add_test(tc, test_error_truncated);
    tcase_add_test(tc, test_error_not_json);
    tcase_add_test(tc, test_error_invalid_utf8);
    tcase_add_test(tc, test_error_offset_after_nan);
    tcase_add_test(tc, test_error_shapes);
    tcase_add_test(tc, test_error_nul_byte);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_load_file_empty);
    tcase_add_test(tc, test_probe);
    tcase_add_test(tc, test_probe_gzip);
    tcase_add_test(tc, test_probe_bom);
    tcase_add_test(tc, test_probe_nan);
    tcase_add_test(tc, test_probe_nan_in_list);
    suite_add_tcase(s, tc);

    tc = tcase_create("hostile");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_gzip_member_at_block_boundary);
    tcase_add_test(tc, test_gzip_zero_padding);
    tcase_add_test(tc, test_zstd_xz);
    tcase_add_test(tc, test_refused_compressions);
    tcase_add_test(tc, test_long_strings_span_blocks);
    tcase_add_test(tc, test_max_string);
    tcase_add_test(tc, test_oom_every_allocation);
    tcase_add_test(tc, test_oom_probe);
    tcase_add_test(tc, test_stdin);
    suite_add_tcase(s, tc);
    return s;
}
