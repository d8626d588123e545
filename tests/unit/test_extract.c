/* test_extract.c — unit tests of src/extract.c: select_heaviest_pid (reference
 * §1), extract_kernel_events (§4 "Extract"), the stage bundles (§3.4) and
 * pick_stage_value / render_stages (§3.5). Traces are built in memory as JSON
 * written with single quotes, which loadq() turns into double quotes. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "kerndiff/stage.h"
#include "suites.h"

static kd_trace *loadq_label(const char *q, const char *label)
{
    size_t n = strlen(q);
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, q, n + 1);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    kd_error err;
    kd_error_clear(&err);
    kd_trace *t = kd_load_trace_mem(s, strlen(s), label, &err);
    ck_assert_msg(t != NULL, "load failed: %s\n%s", err.msg, s);
    free(s);
    return t;
}

static kd_trace *loadq(const char *q) { return loadq_label(q, "mem"); }

#define TRACE(...) "{'traceEvents':[" __VA_ARGS__ "]}"
/* an OH kernel: cat kernel, with args */
#define KERN(pid, tid, ts, dur, name, args)                                                    \
    "{'ph':'X','cat':'kernel','name':'" name "','pid':" pid ",'tid':" tid ",'ts':" #ts         \
    ",'dur':" #dur ",'args':" args "}"

#define S(t, sid) kd_str((t)->strings, (sid))

static void extract(kd_trace *t, const char *sub, kd_kernel_list *out)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_extract_kernel_events(t, sub, out, &err), KD_OK);
}

static const char *pid_of(kd_trace *t, uint32_t mask, const char *sub, const char *const *pref)
{
    kd_sid p = kd_select_heaviest_pid(t, mask, sub, pref);
    return p ? S(t, p) : NULL;
}

#define ck_assert_pid(t, mask, sub, pref, want)                                               \
    do {                                                                                       \
        const char *got_ = pid_of((t), (mask), (sub), (pref));                                 \
        ck_assert_msg(got_ && strcmp(got_, (want)) == 0, "pid: got %s, want %s",              \
                      got_ ? got_ : "(None)", (want));                                         \
    } while (0)

static const char *const tp00[] = {"TP00", NULL};
static const char *const kh_pref[] = {"TP00", "TP-0", NULL};

/* ---- select_heaviest_pid ------------------------------------------------------ */

START_TEST(test_pid_totals)
{
    kd_trace *t = loadq(TRACE(KERN("'A'", "1", 0, 10, "k", "{}") ","
                              KERN("'B'", "1", 0, 12, "k", "{}") ","
                              KERN("'A'", "1", 0, 5, "k", "{}")));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "A");
    kd_trace_free(t);

    /* ties go to the pid seen first */
    t = loadq(TRACE(KERN("'B'", "1", 0, 10, "k", "{}") "," KERN("'A'", "1", 0, 10, "k", "{}")));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "B");
    kd_trace_free(t);
    t = loadq(TRACE(KERN("'A'", "1", 0, 10, "k", "{}") "," KERN("'B'", "1", 0, 4, "k", "{}") ","
                    KERN("'B'", "1", 0, 6, "k", "{}")));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "A");
    kd_trace_free(t);

    /* sums are floats built in event order: 0.1 + 0.2 > 0.3 */
    t = loadq(TRACE(KERN("'Y'", "1", 0, 0.3, "k", "{}") "," KERN("'X'", "1", 0, 0.1, "k", "{}") ","
                    KERN("'X'", "1", 0, 0.2, "k", "{}")));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "X");
    kd_trace_free(t);

    /* non-kernel events do not count */
    t = loadq(TRACE(KERN("'A'", "1", 0, 1, "k", "{}") ","
                    "{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':'B','tid':1,'ts':0,'dur':100},"
                    "{'ph':'X','cat':'python_function','name':'f','pid':'B','tid':1,'ts':0,'dur':100},"
                    "{'ph':'X','cat':'gpu_user_annotation','name':'decode','pid':'B','tid':1,'ts':0,'dur':100}"));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "A");
    kd_trace_free(t);

    /* no kernel at all: None */
    t = loadq(TRACE("{'ph':'X','cat':'cpu_op','name':'x','pid':1,'tid':1,'ts':0,'dur':1}"));
    ck_assert_uint_eq(kd_select_heaviest_pid(t, KD_KF_OH_KERNEL, NULL, tp00), 0);
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_uint_eq(l.pid, 0);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_pid_str_values)
{
    /* pids are compared as str(): 0 and "0" are one pid, 0.0 and a missing pid are others */
    kd_trace *t = loadq(TRACE(KERN("0", "1", 0, 3, "k", "{}") "," KERN("'0'", "1", 0, 3, "k", "{}") ","
                              KERN("0.0", "1", 0, 5, "k", "{}") ","
                              "{'ph':'X','cat':'kernel','name':'k','tid':1,'ts':0,'dur':4}"));
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "0");
    ck_assert_pid(t, KD_KF_OH_KERNEL, ".0", NULL, "0.0");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "None", NULL, "None");
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(S(t, l.pid), "0");
    ck_assert_str_eq(S(t, l.v[0].pid), "0");
    ck_assert_uint_eq(l.v[0].pid, l.v[1].pid);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

static const char sub_json[] = TRACE(
    KERN("'TP00-gpu'", "7", 0, 5, "k", "{}") "," KERN("'TP01-gpu'", "7", 0, 10, "k", "{}") ","
    KERN("'TP00-cpu'", "7", 0, 100, "k", "{}") "," KERN("'other'", "7", 0, 1000, "k", "{}"));

START_TEST(test_pid_substring_and_preference)
{
    kd_trace *t = loadq(sub_json);
    /* the function itself: substring filter, preferred list in order */
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "other");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "gpu", NULL, "TP01-gpu");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "", NULL, "other");
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, tp00, "TP00-cpu");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "gpu", tp00, "TP00-gpu");
    static const char *const p2[] = {"nope", "TP01", NULL};
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, p2, "TP01-gpu");
    static const char *const p3[] = {"nope", NULL};
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, p3, "other");
    static const char *const p0[] = {NULL};
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, p0, "other");
    ck_assert_uint_eq(kd_select_heaviest_pid(t, KD_KF_OH_KERNEL, "zzz", tp00), 0);

    /* extract: TP00 preferred only without a substring */
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_str_eq(S(t, l.pid), "TP00-cpu");
    ck_assert_uint_eq(l.n, 1);
    kd_kernel_list_free(&l);
    extract(t, "", &l); /* "" is falsy: as no substring */
    ck_assert_str_eq(S(t, l.pid), "TP00-cpu");
    kd_kernel_list_free(&l);
    extract(t, "gpu", &l);
    ck_assert_str_eq(S(t, l.pid), "TP01-gpu");
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(S(t, l.v[0].pid), "TP01-gpu");
    kd_kernel_list_free(&l);
    extract(t, "TP0", &l); /* substring given: no TP00 preference */
    ck_assert_str_eq(S(t, l.pid), "TP00-cpu");
    kd_kernel_list_free(&l);
    extract(t, "-", &l);
    ck_assert_str_eq(S(t, l.pid), "TP00-cpu");
    kd_kernel_list_free(&l);
    extract(t, "zzz", &l);
    ck_assert_uint_eq(l.pid, 0);
    ck_assert_uint_eq(l.n, 0);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_pid_kh_mask)
{
    /* P1's event has a stream marker but neither a kernel cat nor a kernel-like
     * name: KH counts it, OH does not */
    kd_trace *t = loadq(TRACE(
        KERN("'TP-01'", "1", 0, 5, "k", "{}") "," KERN("'gpu9'", "1", 0, 50, "k", "{}") ","
        "{'ph':'X','cat':'cuda','name':'mystery_op','pid':'P1','tid':1,'ts':0,'dur':1000,"
        "'args':{'stream':7}},"
        "{'ph':'X','cat':'cuda','name':'void hinted(int)','pid':'P2','tid':1,'ts':0,'dur':20,"
        "'args':{'cuda_stream':3}}"));
    ck_assert_uint_eq(t->kernels.n, 4);
    ck_assert_uint_eq(t->kernels.v[2].flags, KD_KF_KH_KERNEL);
    ck_assert_uint_eq(t->kernels.v[3].flags, KD_KF_KH_KERNEL | KD_KF_OH_KERNEL);
    ck_assert_pid(t, KD_KF_KH_KERNEL, NULL, kh_pref, "TP-01"); /* "TP-0" matches "TP-01" */
    ck_assert_pid(t, KD_KF_KH_KERNEL, NULL, NULL, "P1");
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, NULL, "gpu9");
    ck_assert_pid(t, KD_KF_OH_KERNEL, NULL, kh_pref, "TP-01");
    ck_assert_pid(t, KD_KF_OH_KERNEL | KD_KF_KH_KERNEL, NULL, NULL, "gpu9");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "P", NULL, "P2");
    ck_assert_pid(t, KD_KF_OH_KERNEL, "TP", NULL, "TP-01");
    kd_kernel_list l;
    extract(t, NULL, &l); /* OH: no TP00 pid, so the heaviest OH pid */
    ck_assert_str_eq(S(t, l.pid), "gpu9");
    kd_kernel_list_free(&l);
    extract(t, "P", &l);
    ck_assert_str_eq(S(t, l.pid), "P2");
    kd_kernel_list_free(&l);
    kd_trace_free(t);

    /* "TP00" is tried before "TP-0", whatever the totals */
    t = loadq(TRACE(KERN("'TP-0'", "1", 0, 100, "k", "{}") "," KERN("'xTP00'", "1", 0, 1, "k", "{}") ","
                    KERN("'TP-00'", "1", 0, 50, "k", "{}")));
    ck_assert_pid(t, KD_KF_KH_KERNEL, NULL, kh_pref, "xTP00");
    kd_trace_free(t);
    t = loadq(TRACE(KERN("'TP-0'", "1", 0, 100, "k", "{}") "," KERN("'TP-00'", "1", 0, 150, "k", "{}") ","
                    KERN("'TP-1'", "1", 0, 500, "k", "{}")));
    ck_assert_pid(t, KD_KF_KH_KERNEL, NULL, kh_pref, "TP-00");
    kd_trace_free(t);
}
END_TEST

/* ---- streams ---------------------------------------------------------------- */

START_TEST(test_stream_resolution)
{
    kd_trace *t = loadq(TRACE(
        "{'ph':'M','name':'thread_name','pid':'P','tid':3,'args':{'name':' Stream 3 '}},"
        "{'ph':'M','name':'thread_name','pid':'P','tid':6,'args':{'name':'first'}},"
        "{'ph':'M','name':'thread_name','pid':'Q','tid':4,'args':{'name':'other pid'}},"
        "{'ph':'M','name':'thread_name','pid':'P','tid':8,'args':{'name':''}},"
        "{'ph':'M','name':'process_name','pid':'P','tid':9,'args':{'name':'not a thread'}},"
        KERN("'P'", "1", 0, 1, "k", "{'stream':7}") ","                       /* 0 */
        KERN("'P'", "1", 1, 1, "k", "{'stream':7.0}") ","                     /* 1 */
        KERN("'P'", "1", 2, 1, "k", "{'stream':0,'cuda_stream':5}") ","       /* 2 */
        KERN("'P'", "3", 3, 1, "k", "{'stream':0}") ","                       /* 3 */
        KERN("'P'", "4", 4, 1, "k", "{'stream':0}") ","                       /* 4 */
        KERN("'P'", "1", 5, 1, "k", "{'cuda_stream':'s9'}") ","               /* 5 */
        KERN("'P'", "'abc'", 6, 1, "k", "{'stream':'','cuda_stream':0}") "," /* 6 */
        "{'ph':'X','cat':'kernel','name':'k','pid':'P','ts':7,'dur':1,'args':{'stream':0}}," /* 7 */
        KERN("'P'", "6", 8, 1, "k", "{'stream':0.0}") ","                     /* 8 */
        KERN("'P'", "8", 9, 1, "k", "{}") ","                                 /* 9 */
        KERN("'P'", "9", 10, 1, "k", "null") ","                              /* 10 */
        KERN("'P'", "1", 11, 1, "k", "{'stream':'7'}") ","                    /* 11 */
        KERN("'P'", "1", 12, 1, "k", "{'stream':true}") ","                   /* 12 */
        KERN("'P'", "3", 13, 1, "k", "{'stream':false,'cuda_stream':null}") "," /* 13 */
        KERN("'P'", "1", 14, 1, "k", "{'stream':' 0 '}") ","                  /* 14 */
        "{'ph':'M','name':'thread_name','pid':'P','tid':6,'args':{'name':'second'}}"));
    kd_kernel_list l;
    extract(t, NULL, &l);
    const char *want[] = {"7", "7.0", "5", " Stream 3 ", "tid=4", "s9", "tid=abc", "tid=None",
                          "second", "tid=8", "tid=9", "7", "True", " Stream 3 ", " 0 "};
    size_t nw = sizeof want / sizeof *want;
    ck_assert_uint_eq(l.n, nw);
    for (size_t i = 0; i < nw; i++)
        ck_assert_msg(strcmp(S(t, l.v[i].stream), want[i]) == 0, "event %zu: stream '%s', want '%s'",
                      i, S(t, l.v[i].stream), want[i]);
    /* 7 and "7" are one stream; 7 and 7.0 are two */
    ck_assert_uint_eq(l.v[0].stream, l.v[11].stream);
    ck_assert_uint_ne(l.v[0].stream, l.v[1].stream);
    ck_assert_uint_eq(l.v[3].stream, l.v[13].stream);
    kd_kernel_list_free(&l);
    kd_trace_free(t);

    /* the thread-name key is (str(pid), str(tid)): int and string ids match */
    t = loadq(TRACE("{'ph':'M','name':'thread_name','pid':'1','tid':'2','args':{'name':'named'}},"
                    KERN("1", "2", 0, 1, "k", "{'stream':0}") "," KERN("1", "2.0", 1, 1, "k", "{}")));
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(S(t, l.v[0].stream), "named");
    ck_assert_str_eq(S(t, l.v[1].stream), "tid=2.0");
    ck_assert_str_eq(S(t, l.v[0].tid), "2");
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

/* ---- External id ---------------------------------------------------------------- */

START_TEST(test_external_id_via_correlation)
{
    kd_trace *t = loadq(TRACE(
        "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':'P','tid':1,'ts':0,'dur':1,"
        "'args':{'correlation':101,'External id':42}},"
        KERN("'P'", "7", 1, 1, "k", "{'External id':5,'correlation':100}") ","   /* 0: own id */
        KERN("'P'", "7", 2, 1, "k", "{'correlation':101}") ","                   /* 1: 43 (later) */
        KERN("'P'", "7", 3, 1, "k", "{'correlation':102}") ","                   /* 2: none */
        KERN("'P'", "7", 4, 1, "k", "{'External id':'None','correlation':101}") "," /* 3 */
        KERN("'P'", "7", 5, 1, "k", "{'External id':' 7 '}") ","                 /* 4 */
        KERN("'P'", "7", 6, 1, "k", "{'External id':3.0}") ","                   /* 5 */
        KERN("'P'", "7", 7, 1, "k", "{'External id':3.5,'correlation':'101'}") "," /* 6 */
        KERN("'P'", "7", 8, 1, "k", "{}") ","                                    /* 7 */
        KERN("'P'", "7", 9, 1, "k", "{'correlation':100}") ","                   /* 8: from kernel 0 */
        KERN("'P'", "7", 10, 1, "k", "{'External id':0,'correlation':101}") ","  /* 9: 0 is an id */
        KERN("'P'", "7", 11, 1, "k", "{'External id':null,'correlation':103}") "," /* 10 */
        "{'ph':'f','id':1,'pid':'P','tid':1,'ts':0,'args':{'correlation':101,'External id':43}},"
        "{'ph':'i','pid':'P','tid':1,'ts':0,'args':{'correlation':103,'External id':'-9'}},"
        "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':'P','tid':1,'ts':0,"
        "'dur':1,'args':{'correlation':102}}"));
    kd_kernel_list l;
    extract(t, NULL, &l);
    const int64_t want_ext[] = {5, 43, KD_NOID, 43, 7, 3, 43, KD_NOID, 5, 0, -9};
    const int64_t want_corr[] = {100, 101, 102, 101, KD_NOID, KD_NOID, 101, KD_NOID, 100, 101, 103};
    size_t nw = sizeof want_ext / sizeof *want_ext;
    ck_assert_uint_eq(l.n, nw);
    for (size_t i = 0; i < nw; i++) {
        ck_assert_msg(l.v[i].ext == want_ext[i], "event %zu: ext %lld, want %lld", i,
                      (long long)l.v[i].ext, (long long)want_ext[i]);
        ck_assert_msg(l.v[i].corr == want_corr[i], "event %zu: corr %lld, want %lld", i,
                      (long long)l.v[i].corr, (long long)want_corr[i]);
    }
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

/* ---- idx, fields, names ------------------------------------------------------------ */

START_TEST(test_idx_and_fields)
{
    kd_trace *t = loadq(TRACE(
        KERN("'P'", "7", 100, 10, "void a(int)", "{'stream':7}") ","
        "{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':'P','tid':1,'ts':0,'dur':5},"
        KERN("'Q'", "7", 0, 1, "void q(int)", "{'stream':7}") ","
        "{'ph':'X','cat':'python_function','name':'x.py(1): f','pid':'P','tid':1,'ts':0,'dur':5},"
        "{'ph':'X','cat':'kernel','name':'zero dur','pid':'P','tid':7,'ts':1,'dur':0},"
        KERN("'P'", "8", 200.5, 0.25, "ncclKernel_AllReduce", "{'stream':8}") ","
        "{'ph':'M','name':'thread_name','pid':'P','tid':7,'args':{'name':'s7'}},"
        "{'ph':'X','cat':'cuda','name':'mystery_op','pid':'P','tid':7,'ts':3,'dur':1000,"
        "'args':{'stream':7}},"
        "{'ph':'X','cat':'kernel','name':'python/x.py(1): f','pid':'P','tid':7,'ts':300,"
        "'dur':2,'args':{}},"
        "{'ph':'X','cat':'gpu_memcpy','name':'Memcpy HtoD','pid':'P','tid':9,'ts':400,'dur':3}"));
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_str_eq(S(t, l.pid), "P");
    ck_assert_uint_eq(l.n, 4);
    const char *names[] = {"void a(int)", "ncclKernel_AllReduce", "python/x.py(1): f", "Memcpy HtoD"};
    const double ts[] = {100, 200.5, 300, 400}, dur[] = {10, 0.25, 2, 3};
    const char *streams[] = {"7", "8", "s7", "tid=9"};
    for (size_t i = 0; i < 4; i++) {
        const kd_kernel_event *e = &l.v[i];
        ck_assert_uint_eq(e->idx, i);
        ck_assert_str_eq(S(t, e->name), names[i]);
        ck_assert_str_eq(S(t, e->stream), streams[i]);
        ck_assert(e->ts == ts[i] && e->dur == dur[i] && e->end == ts[i] + dur[i]);
        ck_assert(e->hidden_us == 0 && e->exclusive_us == 0 && e->hidden_by_compute_us == 0);
        ck_assert_str_eq(S(t, e->pid), "P");
    }
    ck_assert_str_eq(S(t, l.v[0].tid), "7");
    ck_assert_str_eq(S(t, l.v[1].tid), "8");
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_canonical_and_category)
{
    kd_trace *t = loadq(TRACE(
        KERN("'P'", "7", 0, 1, "void cutlass::Kernel<0x1f>(Params)", "{'stream':7}") ","
        KERN("'P'", "7", 1, 1, "ncclKernel_AllReduce_RING", "{'stream':7}") ","
        KERN("'P'", "7", 2, 1, "  void   f(int)  ", "{'stream':7}") ","
        KERN("'P'", "7", 3, 1, "void elementwise_kernel<silu>(at::gemm_params)", "{'stream':7}") ","
        KERN("'P'", "7", 4, 1, "void f<int> (int)", "{'stream':7}") ","
        KERN("'P'", "7", 5, 1, "void k<0X1F>(float (*)(int))", "{'stream':7}") ","
        KERN("'P'", "7", 6, 1, "void cutlass::Kernel<0x1f>(Params)", "{'stream':7}") ","
        KERN("'P'", "7", 7, 1, "void cutlass::Kernel<0x2e>(Params)", "{'stream':7}") ","
        KERN("'P'", "7", 8, 1, "void broken(int", "{'stream':7}") ","
        "{'ph':'X','cat':'gpu_memset','name':'Memset (Device)','pid':'P','tid':7,'ts':9,'dur':1}"));
    kd_kernel_list l;
    extract(t, NULL, &l);
    struct {
        const char *canonical;
        kd_category cat;
    } want[] = {
        {"void cutlass::Kernel<0xADDR>", KD_CAT_COMPUTE},
        {"ncclKernel_AllReduce_RING", KD_CAT_COMMUNICATION},
        {"void f", KD_CAT_OTHER},
        {"void elementwise_kernel<silu>", KD_CAT_COMPUTE}, /* classified on the raw name */
        {"void f<int> ", KD_CAT_OTHER},
        {"void k<0X1F>", KD_CAT_OTHER},
        {"void cutlass::Kernel<0xADDR>", KD_CAT_COMPUTE},
        {"void cutlass::Kernel<0xADDR>", KD_CAT_COMPUTE},
        {"void broken(int", KD_CAT_OTHER},
        {"Memset (Device)", KD_CAT_MEMORY},
    };
    size_t nw = sizeof want / sizeof *want;
    ck_assert_uint_eq(l.n, nw);
    for (size_t i = 0; i < nw; i++) {
        const kd_kernel_event *e = &l.v[i];
        ck_assert_msg(strcmp(S(t, e->canonical), want[i].canonical) == 0,
                      "event %zu: canonical '%s', want '%s'", i, S(t, e->canonical),
                      want[i].canonical);
        ck_assert_msg(e->category == want[i].cat, "event %zu: category %s, want %s", i,
                      kd_category_name(e->category), kd_category_name(want[i].cat));
        /* the same as the text helpers on the raw name */
        char *c = kd_canonicalize_kernel_name(S(t, e->name));
        ck_assert_str_eq(S(t, e->canonical), c);
        free(c);
        ck_assert_int_eq(e->category, kd_classify_kernel(S(t, e->name)));
    }
    /* interned: equal canonical names share an id */
    ck_assert_uint_eq(l.v[0].canonical, l.v[6].canonical);
    ck_assert_uint_eq(l.v[0].canonical, l.v[7].canonical);
    ck_assert_uint_ne(l.v[0].name, l.v[7].name);
    ck_assert_uint_eq(l.v[0].name, l.v[6].name);
    kd_kernel_list_free(&l);
    /* extracting again gives the same ids */
    kd_kernel_list l2;
    extract(t, NULL, &l2);
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, l2.n);
    for (size_t i = 0; i < l.n; i++)
        ck_assert_uint_eq(l.v[i].canonical, l2.v[i].canonical);
    kd_kernel_list_free(&l);
    kd_kernel_list_free(&l2);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_event_stage)
{
    kd_trace *t = loadq(TRACE(
        "{'ph':'X','cat':'gpu_user_annotation','name':'decode','pid':'P','tid':7,'ts':1000,'dur':1000},"
        "{'ph':'X','cat':'user_annotation','name':'prefill','pid':'P','tid':1,'ts':0,'dur':10,"
        "'args':{'External id':55}},"
        "{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':'P','tid':1,'ts':0,'dur':1,"
        "'args':{'correlation':9,'External id':55}},"
        KERN("'P'", "7", 1500, 1, "k", "{'stream':7}") ","
        KERN("'P'", "7", 5000, 1, "k", "{'stream':7}") ","
        KERN("'P'", "7", 100000, 1, "k", "{'stream':7}") ","
        KERN("'P'", "7", 1500, 1, "k", "{'stream':7,'External id':55}") ","
        KERN("'P'", "7", 1500, 1, "k", "{'stream':7,'correlation':9}") ","
        /* own id 56 (not annotated) wins over the correlation; its corr 10 -> 56 */
        KERN("'P'", "7", 1500, 1, "k", "{'stream':7,'External id':56,'correlation':10}") ","
        KERN("'P'", "7", 5, 1, "k", "{'stream':7}")));
    kd_kernel_list l;
    extract(t, NULL, &l);
    const kd_stage want[] = {KD_STAGE_DECODE, KD_STAGE_DECODE, KD_STAGE_ALL, KD_STAGE_EXTEND,
                             KD_STAGE_EXTEND, KD_STAGE_DECODE, KD_STAGE_EXTEND};
    ck_assert_uint_eq(l.n, 7);
    for (size_t i = 0; i < 7; i++)
        ck_assert_msg(l.v[i].stage == want[i], "event %zu: stage %s, want %s", i,
                      kd_stage_name(l.v[i].stage), kd_stage_name(want[i]));
    /* the same as resolving by hand */
    kd_stage_annotations sa;
    kd_error err;
    ck_assert_int_eq(kd_stage_annotations_build(t, &sa, &err), KD_OK);
    for (size_t i = 0; i < l.n; i++)
        ck_assert_int_eq(l.v[i].stage, kd_resolve_kernel_stage(&sa, l.v[i].ts, l.v[i].ext));
    kd_stage_annotations_free(&sa);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

/* ---- bundles ------------------------------------------------------------------------ */

/* decode-annotated kernels at 10 and 20 and an unannotated one far away (all) */
static const char ann_json[] = TRACE(
    "{'ph':'X','cat':'gpu_user_annotation','name':'decode','pid':'TP00','tid':7,'ts':0,'dur':100},"
    KERN("'TP00'", "7", 10, 1, "d1", "{'stream':7}") "," KERN("'TP00'", "7", 1e6, 1, "a1", "{'stream':7}") ","
    KERN("'TP00'", "7", 20, 1, "d2", "{'stream':7}"));
/* extend, decode and all kernels */
static const char mixed_json[] = TRACE(
    "{'ph':'X','cat':'user_annotation','name':'prefill','pid':'TP00','tid':1,'ts':0,'dur':100},"
    "{'ph':'X','cat':'user_annotation','name':'decode','pid':'TP00','tid':1,'ts':200,'dur':100},"
    KERN("'TP00'", "7", 250, 1, "d1", "{'stream':7}") "," KERN("'TP00'", "7", 50, 1, "e1", "{'stream':7}") ","
    KERN("'TP00'", "7", 1e6, 1, "a1", "{'stream':7}") "," KERN("'TP00'", "7", 60, 1, "e2", "{'stream':7}"));
static const char all_json[] = TRACE(KERN("'TP00'", "7", 10, 1, "x1", "{'stream':7}") ","
                                     KERN("'TP00'", "7", 20, 1, "x2", "{'stream':7}"));
static const char nokern_json[] = TRACE(
    "{'ph':'X','cat':'cpu_op','name':'aten::mm','pid':'TP00','tid':1,'ts':0,'dur':5},"
    "{'ph':'X','cat':'gpu_user_annotation','name':'prefill','pid':'TP00','tid':7,'ts':0,'dur':100}");
static const char twopid_json[] = TRACE(
    KERN("'TP00-a'", "7", 10, 5, "p0", "{'stream':7}") "," KERN("'TP01-a'", "7", 20, 4, "p1", "{'stream':7}") ","
    KERN("'TP01-a'", "7", 30, 4, "p1b", "{'stream':7}"));

static void bundles(kd_trace *const *traces, const kd_stage *stages, size_t n, const char *sub,
                    kd_bundle_map *m)
{
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_build_bundle_map(traces, stages, n, sub, m, &err), KD_OK);
}

static void assert_bundle_names(kd_bundle_map *m, kd_stage s, kd_trace *t, const char *const *names,
                                size_t n)
{
    ck_assert_msg(m->has[s], "no %s bundle", kd_stage_name(s));
    const kd_bundle *b = &m->by_stage[s];
    ck_assert_ptr_eq(b->trace, t);
    ck_assert_uint_eq(b->n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strcmp(S(t, b->events[i].name), names[i]) == 0, "%s bundle event %zu: %s, want %s",
                      kd_stage_name(s), i, S(t, b->events[i].name), names[i]);
}

START_TEST(test_bundle_event_stages)
{
    kd_trace *t = loadq(ann_json);
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_ALL;
    bundles(&t, &ps, 1, NULL, &m);
    /* `all` is dropped because decode exists */
    ck_assert(!m.has[KD_STAGE_ALL] && !m.has[KD_STAGE_EXTEND]);
    const char *d[] = {"d1", "d2"};
    assert_bundle_names(&m, KD_STAGE_DECODE, t, d, 2);
    const kd_bundle *b = &m.by_stage[KD_STAGE_DECODE];
    ck_assert_str_eq(S(t, b->pid), "TP00");
    /* events keep their extract idx (position among all kept kernels) */
    ck_assert_uint_eq(b->events[0].idx, 0);
    ck_assert_uint_eq(b->events[1].idx, 2);
    ck_assert_int_eq(b->events[0].stage, KD_STAGE_DECODE);
    kd_bundle_map_free(&m);
    ck_assert(!m.has[KD_STAGE_DECODE]);

    /* three stages in one trace */
    kd_trace *mx = loadq(mixed_json);
    bundles(&mx, &ps, 1, NULL, &m);
    const char *e[] = {"e1", "e2"}, *dd[] = {"d1"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, mx, e, 2);
    assert_bundle_names(&m, KD_STAGE_DECODE, mx, dd, 1);
    ck_assert(!m.has[KD_STAGE_ALL]);
    kd_bundle_map_free(&m);

    /* only `all` events: an `all` bundle */
    kd_trace *al = loadq(all_json);
    bundles(&al, &ps, 1, NULL, &m);
    const char *a[] = {"x1", "x2"};
    assert_bundle_names(&m, KD_STAGE_ALL, al, a, 2);
    ck_assert(!m.has[KD_STAGE_EXTEND] && !m.has[KD_STAGE_DECODE]);
    kd_bundle_map_free(&m);

    kd_trace_free(t);
    kd_trace_free(mx);
    kd_trace_free(al);
}
END_TEST

START_TEST(test_bundle_path_stage_overrides)
{
    kd_trace *t = loadq(mixed_json);
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_EXTEND;
    bundles(&t, &ps, 1, NULL, &m);
    const char *all4[] = {"d1", "e1", "a1", "e2"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, t, all4, 4);
    ck_assert(!m.has[KD_STAGE_DECODE] && !m.has[KD_STAGE_ALL]);
    /* the events keep their own annotation stage */
    ck_assert_int_eq(m.by_stage[KD_STAGE_EXTEND].events[0].stage, KD_STAGE_DECODE);
    ck_assert_int_eq(m.by_stage[KD_STAGE_EXTEND].events[2].stage, KD_STAGE_ALL);
    kd_bundle_map_free(&m);
    ps = KD_STAGE_DECODE;
    bundles(&t, &ps, 1, NULL, &m);
    assert_bundle_names(&m, KD_STAGE_DECODE, t, all4, 4);
    ck_assert(!m.has[KD_STAGE_EXTEND] && !m.has[KD_STAGE_ALL]);
    kd_bundle_map_free(&m);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_bundle_first_claim_wins)
{
    kd_trace *t1 = loadq_label(all_json, "t1"), *t2 = loadq_label(mixed_json, "t2");
    kd_trace *t3 = loadq_label(ann_json, "t3");
    kd_bundle_map m;
    const char *x[] = {"x1", "x2"};
    {
        kd_trace *tr[] = {t1, t2};
        kd_stage ps[] = {KD_STAGE_EXTEND, KD_STAGE_EXTEND};
        bundles(tr, ps, 2, NULL, &m);
        assert_bundle_names(&m, KD_STAGE_EXTEND, t1, x, 2);
        ck_assert(!m.has[KD_STAGE_DECODE] && !m.has[KD_STAGE_ALL]);
        kd_bundle_map_free(&m);
    }
    {
        /* t2 (all path) gives extend and decode; t3's decode comes too late;
         * t1 still claims `all`, which nobody had */
        kd_trace *tr[] = {t2, t3, t1};
        kd_stage ps[] = {KD_STAGE_ALL, KD_STAGE_ALL, KD_STAGE_ALL};
        bundles(tr, ps, 3, NULL, &m);
        const char *e[] = {"e1", "e2"}, *d[] = {"d1"};
        assert_bundle_names(&m, KD_STAGE_EXTEND, t2, e, 2);
        assert_bundle_names(&m, KD_STAGE_DECODE, t2, d, 1);
        assert_bundle_names(&m, KD_STAGE_ALL, t1, x, 2);
        kd_stage rs[3];
        ck_assert_uint_eq(kd_render_stages(&m, rs), 2);
        ck_assert(rs[0] == KD_STAGE_EXTEND && rs[1] == KD_STAGE_DECODE);
        kd_bundle_map_free(&m);
    }
    {
        /* t3 claims decode (its `all` kernel dropped); t1 then claims `all` */
        kd_trace *tr[] = {t3, t1};
        kd_stage ps[] = {KD_STAGE_ALL, KD_STAGE_ALL};
        bundles(tr, ps, 2, NULL, &m);
        const char *d[] = {"d1", "d2"};
        assert_bundle_names(&m, KD_STAGE_DECODE, t3, d, 2);
        assert_bundle_names(&m, KD_STAGE_ALL, t1, x, 2);
        ck_assert(!m.has[KD_STAGE_EXTEND]);
        ck_assert_ptr_eq(kd_pick_stage_bundle(&m, KD_STAGE_EXTEND), &m.by_stage[KD_STAGE_ALL]);
        ck_assert_ptr_eq(kd_pick_stage_bundle(&m, KD_STAGE_DECODE), &m.by_stage[KD_STAGE_DECODE]);
        kd_bundle_map_free(&m);
    }
    kd_trace_free(t1);
    kd_trace_free(t2);
    kd_trace_free(t3);
}
END_TEST

START_TEST(test_bundle_skips_trace_without_kernels)
{
    kd_trace *t0 = loadq_label(nokern_json, "t0"), *t1 = loadq_label(all_json, "t1");
    kd_bundle_map m;
    kd_trace *tr[] = {t0, t1};
    kd_stage ps[] = {KD_STAGE_EXTEND, KD_STAGE_EXTEND};
    bundles(tr, ps, 2, NULL, &m);
    const char *x[] = {"x1", "x2"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, t1, x, 2);
    kd_bundle_map_free(&m);
    /* only kernel-less traces: an empty map */
    bundles(tr, ps, 1, NULL, &m);
    ck_assert(!m.has[0] && !m.has[1] && !m.has[2]);
    kd_stage rs[3];
    ck_assert_uint_eq(kd_render_stages(&m, rs), 0);
    ck_assert_ptr_null(kd_pick_stage_bundle(&m, KD_STAGE_EXTEND));
    kd_bundle_map_free(&m);
    /* no traces at all */
    bundles(tr, ps, 0, NULL, &m);
    ck_assert(!m.has[0] && !m.has[1] && !m.has[2]);
    kd_bundle_map_free(&m);
    kd_trace_free(t0);
    kd_trace_free(t1);
}
END_TEST

START_TEST(test_bundle_pid_substring)
{
    kd_trace *t = loadq_label(twopid_json, "tp"), *t1 = loadq_label(all_json, "t1");
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_ALL;
    bundles(&t, &ps, 1, NULL, &m); /* TP00 preferred although lighter */
    const char *p0[] = {"p0"};
    assert_bundle_names(&m, KD_STAGE_ALL, t, p0, 1);
    ck_assert_str_eq(S(t, m.by_stage[KD_STAGE_ALL].pid), "TP00-a");
    kd_bundle_map_free(&m);
    bundles(&t, &ps, 1, "TP01", &m);
    const char *p1[] = {"p1", "p1b"};
    assert_bundle_names(&m, KD_STAGE_ALL, t, p1, 2);
    ck_assert_str_eq(S(t, m.by_stage[KD_STAGE_ALL].pid), "TP01-a");
    kd_bundle_map_free(&m);
    /* a trace whose pids do not match the substring is skipped */
    kd_trace *tr[] = {t1, t};
    kd_stage pss[] = {KD_STAGE_ALL, KD_STAGE_ALL};
    bundles(tr, pss, 2, "-a", &m);
    const char *p00[] = {"p1", "p1b"};
    assert_bundle_names(&m, KD_STAGE_ALL, t, p00, 2); /* substring: no TP00 preference */
    kd_bundle_map_free(&m);
    kd_trace_free(t);
    kd_trace_free(t1);
}
END_TEST

/* ---- the whole-trace stage and the accounting (divergence D7) ------------------------------ */

static void bundles_opts(kd_trace *const *traces, const kd_stage *stages, size_t n, bool whole,
                         kd_bundle_map *m)
{
    kd_error err;
    kd_error_clear(&err);
    kd_bundle_options o = {NULL, whole};
    ck_assert_int_eq(kd_build_bundle_map_opts(traces, stages, n, &o, m, &err), KD_OK);
}

/* read = analysed + outside + unclaimed + zero_duration + skipped */
static void assert_adds_up(const kd_kernel_accounting *a)
{
    ck_assert_msg(a->read == a->analysed + a->outside + a->unclaimed + a->zero_duration +
                                 kd_accounting_skipped(a),
                  "read %llu != %llu analysed + %llu outside + %llu unclaimed + %llu zero + %llu skipped",
                  (unsigned long long)a->read, (unsigned long long)a->analysed,
                  (unsigned long long)a->outside, (unsigned long long)a->unclaimed,
                  (unsigned long long)a->zero_duration, (unsigned long long)kd_accounting_skipped(a));
}

#define ASSERT_ACC(a, r, an, o, u, z, sk)                                                      \
    do {                                                                                       \
        assert_adds_up(a);                                                                     \
        ck_assert_uint_eq((a)->read, (r));                                                     \
        ck_assert_uint_eq((a)->analysed, (an));                                                \
        ck_assert_uint_eq((a)->outside, (o));                                                  \
        ck_assert_uint_eq((a)->unclaimed, (u));                                                \
        ck_assert_uint_eq((a)->zero_duration, (z));                                            \
        ck_assert_uint_eq(kd_accounting_skipped(a), (sk));                                     \
    } while (0)

START_TEST(test_whole_trace_bundle)
{
    kd_trace *t = loadq(mixed_json);
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_ALL;
    bundles_opts(&t, &ps, 1, true, &m);
    const char *e[] = {"e1", "e2"}, *d[] = {"d1"}, *every[] = {"d1", "e1", "a1", "e2"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, t, e, 2);
    assert_bundle_names(&m, KD_STAGE_DECODE, t, d, 1);
    /* every event of the pid, in trace order, each keeping its own stage */
    assert_bundle_names(&m, KD_STAGE_ALL, t, every, 4);
    ck_assert(m.whole);
    ck_assert_str_eq(S(t, m.by_stage[KD_STAGE_ALL].pid), "TP00");
    ck_assert_int_eq(m.by_stage[KD_STAGE_ALL].events[0].stage, KD_STAGE_DECODE);
    ck_assert_int_eq(m.by_stage[KD_STAGE_ALL].events[1].stage, KD_STAGE_EXTEND);
    ck_assert_int_eq(m.by_stage[KD_STAGE_ALL].events[2].stage, KD_STAGE_ALL);
    for (size_t i = 0; i < 4; i++)
        ck_assert_uint_eq(m.by_stage[KD_STAGE_ALL].events[i].idx, i);
    kd_stage rs[3] = {99, 99, 99};
    ck_assert_uint_eq(kd_render_stages(&m, rs), 3);
    ck_assert(rs[0] == KD_STAGE_EXTEND && rs[1] == KD_STAGE_DECODE && rs[2] == KD_STAGE_ALL);
    /* the stages pair exactly: `all` is the whole trace, extend is extend */
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, KD_STAGE_ALL), &m.by_stage[KD_STAGE_ALL]);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, KD_STAGE_EXTEND), &m.by_stage[KD_STAGE_EXTEND]);
    /* a1 is outside every stage: in `all` only */
    ASSERT_ACC(&m.acc, 4, 3, 1, 0, 0, 0);
    ck_assert(m.acc.outside_us == 1.0);
    ck_assert_uint_eq(m.n_traces, 1);
    ck_assert(m.annotated[0]);
    kd_bundle_map_free(&m);

    /* without whole_trace: the reference's map, the same accounting */
    bundles_opts(&t, &ps, 1, false, &m);
    ck_assert(!m.has[KD_STAGE_ALL] && !m.whole);
    ck_assert_uint_eq(kd_render_stages(&m, rs), 2);
    ASSERT_ACC(&m.acc, 4, 3, 1, 0, 0, 0);
    kd_bundle_map_free(&m);

    /* kd_build_bundle_map is the opts call without whole_trace */
    bundles(&t, &ps, 1, NULL, &m);
    ck_assert(!m.has[KD_STAGE_ALL] && !m.whole);
    ASSERT_ACC(&m.acc, 4, 3, 1, 0, 0, 0);
    kd_bundle_map_free(&m);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_whole_trace_path_stage_and_unannotated)
{
    /* a path naming extend: every kernel in extend, and the whole trace in all */
    kd_trace *t = loadq(mixed_json);
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_EXTEND;
    bundles_opts(&t, &ps, 1, true, &m);
    const char *every[] = {"d1", "e1", "a1", "e2"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, t, every, 4);
    assert_bundle_names(&m, KD_STAGE_ALL, t, every, 4);
    ck_assert(!m.has[KD_STAGE_DECODE] && m.whole);
    kd_stage rs[3];
    ck_assert_uint_eq(kd_render_stages(&m, rs), 2);
    ck_assert(rs[0] == KD_STAGE_EXTEND && rs[1] == KD_STAGE_ALL);
    ASSERT_ACC(&m.acc, 4, 4, 0, 0, 0, 0);
    ck_assert(!m.annotated[0]); /* the path decided */
    kd_bundle_map_free(&m);
    kd_trace_free(t);

    /* no annotation: the one `all` bundle is the whole trace */
    kd_trace *al = loadq(all_json);
    ps = KD_STAGE_ALL;
    bundles_opts(&al, &ps, 1, true, &m);
    const char *a[] = {"x1", "x2"};
    assert_bundle_names(&m, KD_STAGE_ALL, al, a, 2);
    ck_assert(!m.has[KD_STAGE_EXTEND] && !m.has[KD_STAGE_DECODE]);
    ck_assert_uint_eq(kd_render_stages(&m, rs), 1);
    ck_assert(rs[0] == KD_STAGE_ALL);
    ASSERT_ACC(&m.acc, 2, 2, 0, 0, 0, 0);
    ck_assert(!m.annotated[0]);
    kd_bundle_map_free(&m);
    kd_trace_free(al);
}
END_TEST

START_TEST(test_whole_trace_only_for_one_trace)
{
    /* two traces claim decode: the second's decode kernels are in a stage
     * already held; no whole-trace stage for a side of two traces */
    kd_trace *t1 = loadq_label(mixed_json, "t1"), *t2 = loadq_label(ann_json, "t2");
    kd_trace *tr[] = {t1, t2};
    kd_stage ps[] = {KD_STAGE_ALL, KD_STAGE_ALL};
    kd_bundle_map m;
    bundles_opts(tr, ps, 2, true, &m);
    ck_assert(!m.whole && !m.has[KD_STAGE_ALL]);
    const char *d[] = {"d1"};
    assert_bundle_names(&m, KD_STAGE_DECODE, t1, d, 1);
    /* read 4 + 3; analysed e1 e2 d1; outside a1 of each; unclaimed t2's d1 d2 */
    ASSERT_ACC(&m.acc, 7, 3, 2, 2, 0, 0);
    ck_assert(m.acc.unclaimed_us == 2.0 && m.acc.outside_us == 2.0);
    ck_assert_uint_eq(m.n_traces, 2);
    ck_assert(m.annotated[0] && m.annotated[1]);
    kd_stage rs[3];
    ck_assert_uint_eq(kd_render_stages(&m, rs), 2);
    kd_bundle_map_free(&m);

    /* the same stage from two paths: the second file's kernels unclaimed */
    kd_stage pe[] = {KD_STAGE_EXTEND, KD_STAGE_EXTEND};
    bundles_opts(tr, pe, 2, true, &m);
    ck_assert(!m.whole && !m.has[KD_STAGE_ALL]);
    ASSERT_ACC(&m.acc, 7, 4, 0, 3, 0, 0);
    ck_assert(!m.annotated[0] && !m.annotated[1]);
    kd_bundle_map_free(&m);
    kd_trace_free(t1);
    kd_trace_free(t2);
}
END_TEST

/* prefill [0, 100) and decode [200, 300) annotations; kernels of pid TP00:
 * e1 (extend), d1 (decode), a1 (outside), three without a duration (z1
 * extend, z2 decode, z3 outside), two skipped (bad ts, no name); one kernel
 * of another pid */
static const char zero_json[] = TRACE(
    "{'ph':'X','cat':'gpu_user_annotation','name':'prefill','pid':'TP00','tid':7,'ts':0,'dur':100},"
    "{'ph':'X','cat':'gpu_user_annotation','name':'decode','pid':'TP00','tid':7,'ts':200,'dur':100},"
    KERN("'TP00'", "7", 10, 4, "e1", "{'stream':7}") "," KERN("'TP00'", "7", 210, 2, "d1", "{'stream':7}") ","
    KERN("'TP00'", "7", 1e6, 8, "a1", "{'stream':7}") ","
    KERN("'TP00'", "7", 20, 0, "z1", "{'stream':7}") ","
    "{'ph':'X','cat':'kernel','name':'z2','pid':'TP00','tid':7,'ts':220,'args':{'stream':7}},"
    KERN("'TP00'", "7", 2e6, 0, "z3", "{'stream':7}") ","
    "{'ph':'X','cat':'kernel','name':'bad','pid':'TP00','tid':7,'ts':'x','dur':1,'args':{'stream':7}},"
    "{'ph':'X','cat':'kernel','pid':'TP00','tid':7,'ts':30,'dur':1,'args':{'stream':7}},"
    KERN("'other'", "7", 10, 1, "o1", "{'stream':7}"));

static void assert_zero_names(const kd_bundle *b, kd_trace *t, const char *const *names, size_t n)
{
    ck_assert_uint_eq(b->n_zero, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strcmp(S(t, b->zero[i].name), names[i]) == 0, "zero %zu: %s, want %s", i,
                      S(t, b->zero[i].name), names[i]);
}

START_TEST(test_accounting_zero_duration_and_skipped)
{
    kd_trace *t = loadq(zero_json);
    kd_bundle_map m;
    kd_stage ps = KD_STAGE_ALL;
    bundles_opts(&t, &ps, 1, true, &m);
    const char *e[] = {"e1"}, *d[] = {"d1"}, *every[] = {"e1", "d1", "a1"};
    assert_bundle_names(&m, KD_STAGE_EXTEND, t, e, 1);
    assert_bundle_names(&m, KD_STAGE_DECODE, t, d, 1);
    assert_bundle_names(&m, KD_STAGE_ALL, t, every, 3);
    /* the kernels without a duration go with their stage, all three in all */
    const char *ze[] = {"z1"}, *zd[] = {"z2"}, *za[] = {"z1", "z2", "z3"};
    assert_zero_names(&m.by_stage[KD_STAGE_EXTEND], t, ze, 1);
    assert_zero_names(&m.by_stage[KD_STAGE_DECODE], t, zd, 1);
    assert_zero_names(&m.by_stage[KD_STAGE_ALL], t, za, 3);
    ck_assert_int_eq(m.by_stage[KD_STAGE_ALL].zero[0].stage, KD_STAGE_EXTEND);
    ck_assert_int_eq(m.by_stage[KD_STAGE_ALL].zero[2].stage, KD_STAGE_ALL);
    ck_assert(m.by_stage[KD_STAGE_ALL].zero[1].dur == 0.0);
    /* read 8 = 2 analysed + 1 outside + 3 zero + 2 skipped; o1 elsewhere */
    ASSERT_ACC(&m.acc, 8, 2, 1, 0, 3, 2);
    ck_assert_uint_eq(m.acc.skipped[KD_SKIP_BAD_TS], 1);
    ck_assert_uint_eq(m.acc.skipped[KD_SKIP_MISSING_NAME], 1);
    ck_assert_uint_eq(m.acc.other_pids, 1);
    ck_assert(m.acc.outside_us == 8.0);
    kd_bundle_map_free(&m);
    ck_assert(!m.has[KD_STAGE_ALL]);

    /* the extract list keeps them apart */
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_uint_eq(l.n_zero, 3);
    ck_assert_uint_eq(l.skipped[KD_SKIP_BAD_TS] + l.skipped[KD_SKIP_MISSING_NAME], 2);
    ck_assert_uint_eq(l.other_pids, 1);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_accounting_text)
{
    kd_kernel_accounting a;
    memset(&a, 0, sizeof a);
    a.read = 11;
    a.analysed = 5;
    a.outside = 2;
    a.zero_duration = 3;
    a.skipped[KD_SKIP_BAD_TS] = 1;
    ck_assert_uint_eq(kd_accounting_skipped(&a), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kd_accounting_write_text(&a, f);
    fclose(f);
    ck_assert_str_eq(buf, "11 read = 5 in a stage + 2 outside every stage + 0 in a stage already held + "
                          "3 zero-duration + 1 skipped (bad_ts 1)");
    free(buf);
    a.skipped[KD_SKIP_BAD_TS] = 0;
    a.read = 10;
    f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kd_accounting_write_text(&a, f);
    fclose(f);
    ck_assert_str_eq(buf, "10 read = 5 in a stage + 2 outside every stage + 0 in a stage already held + "
                          "3 zero-duration + 0 skipped");
    free(buf);
}
END_TEST

/* ---- Python str() with embedded NUL characters ------------------------------------------- */

/* JSON strings may hold U+0000; Python's `in` and f"tid={tid}" see the whole
 * string, so pid tests and the tid fallback must not stop at the first NUL. */
START_TEST(test_embedded_nul_pid_and_tid)
{
    static const char json[] = "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":\"x\\u0000TP00\","
        "\"tid\":\"a\\u0000b\",\"ts\":0,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":\"heavy\",\"tid\":\"a\","
        "\"ts\":0,\"dur\":5}]}";
    kd_error err;
    kd_trace *t = kd_load_trace_mem(json, sizeof json - 1, "nul", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    ck_assert_uint_eq(kd_str_len(t->strings, t->kernels.v[0].pid), 6);
    kd_sid p = kd_select_heaviest_pid(t, KD_KF_OH_KERNEL, NULL, tp00);
    ck_assert_msg(p == t->kernels.v[0].pid, "'TP00' in 'x\\x00TP00' is True in Python");
    ck_assert_uint_eq(kd_select_heaviest_pid(t, KD_KF_OH_KERNEL, "TP00", NULL), t->kernels.v[0].pid);
    kd_kernel_list l;
    extract(t, NULL, &l);
    ck_assert_uint_eq(l.n, 1);
    /* "tid=a\x00b" (7 characters), not "tid=a" */
    ck_assert_uint_eq(kd_str_len(t->strings, l.v[0].stream), 7);
    ck_assert_int_eq(memcmp(S(t, l.v[0].stream), "tid=a\0b", 8), 0);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

/* ---- pick_stage_value / render_stages on hand-made maps -------------------------------------- */

static kd_bundle_map map_with(bool e, bool d, bool a)
{
    kd_bundle_map m;
    memset(&m, 0, sizeof m);
    m.has[KD_STAGE_EXTEND] = e;
    m.has[KD_STAGE_DECODE] = d;
    m.has[KD_STAGE_ALL] = a;
    return m;
}

START_TEST(test_pick_stage_bundle)
{
    const kd_stage E = KD_STAGE_EXTEND, D = KD_STAGE_DECODE, A = KD_STAGE_ALL;
    kd_bundle_map m = map_with(true, true, false);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, E), &m.by_stage[E]);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, D), &m.by_stage[D]);
    ck_assert_ptr_null(kd_pick_stage_bundle(&m, A)); /* no exact, no all, two values */
    m = map_with(false, false, true);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, E), &m.by_stage[A]);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, D), &m.by_stage[A]);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, A), &m.by_stage[A]);
    m = map_with(false, true, false);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, E), &m.by_stage[D]); /* the only one */
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, A), &m.by_stage[D]);
    m = map_with(true, false, false);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, D), &m.by_stage[E]);
    m = map_with(true, false, true);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, D), &m.by_stage[A]); /* all before only-one */
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, E), &m.by_stage[E]);
    m = map_with(true, true, true);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, A), &m.by_stage[A]);
    ck_assert_ptr_eq(kd_pick_stage_bundle(&m, D), &m.by_stage[D]);
    m = map_with(false, false, false);
    ck_assert_ptr_null(kd_pick_stage_bundle(&m, E));
    ck_assert_ptr_null(kd_pick_stage_bundle(&m, D));
    ck_assert_ptr_null(kd_pick_stage_bundle(&m, A));
}
END_TEST

START_TEST(test_render_stages)
{
    struct {
        bool e, d, a;
        size_t n;
        kd_stage s[3];
    } cases[] = {
        {true, true, true, 2, {KD_STAGE_EXTEND, KD_STAGE_DECODE}},
        {true, true, false, 2, {KD_STAGE_EXTEND, KD_STAGE_DECODE}},
        {false, false, true, 1, {KD_STAGE_ALL}},
        {false, true, false, 1, {KD_STAGE_DECODE}},
        {false, true, true, 1, {KD_STAGE_DECODE}},
        {true, false, true, 1, {KD_STAGE_EXTEND}},
        {true, false, false, 1, {KD_STAGE_EXTEND}},
        {false, false, false, 0, {KD_STAGE_ALL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kd_bundle_map m = map_with(cases[i].e, cases[i].d, cases[i].a);
        kd_stage out[3] = {99, 99, 99};
        size_t n = kd_render_stages(&m, out);
        ck_assert_msg(n == cases[i].n, "case %zu: %zu stages, want %zu", i, n, cases[i].n);
        for (size_t j = 0; j < n; j++)
            ck_assert_msg(out[j] == cases[i].s[j], "case %zu stage %zu: %d", i, j, out[j]);
    }
}
END_TEST

Suite *extract_suite(void)
{
    Suite *s = suite_create("extract");
    TCase *tp = tcase_create("select_heaviest_pid");
    tcase_add_test(tp, test_pid_totals);
    tcase_add_test(tp, test_pid_str_values);
    tcase_add_test(tp, test_pid_substring_and_preference);
    tcase_add_test(tp, test_pid_kh_mask);
    suite_add_tcase(s, tp);
    TCase *te = tcase_create("events");
    tcase_add_test(te, test_stream_resolution);
    tcase_add_test(te, test_external_id_via_correlation);
    tcase_add_test(te, test_idx_and_fields);
    tcase_add_test(te, test_canonical_and_category);
    tcase_add_test(te, test_event_stage);
    suite_add_tcase(s, te);
    TCase *tb = tcase_create("bundles");
    tcase_add_test(tb, test_bundle_event_stages);
    tcase_add_test(tb, test_bundle_path_stage_overrides);
    tcase_add_test(tb, test_bundle_first_claim_wins);
    tcase_add_test(tb, test_bundle_skips_trace_without_kernels);
    tcase_add_test(tb, test_bundle_pid_substring);
    tcase_add_test(tb, test_pick_stage_bundle);
    tcase_add_test(tb, test_render_stages);
    suite_add_tcase(s, tb);
    TCase *tw = tcase_create("whole_trace_and_accounting");
    tcase_add_test(tw, test_whole_trace_bundle);
    tcase_add_test(tw, test_whole_trace_path_stage_and_unannotated);
    tcase_add_test(tw, test_whole_trace_only_for_one_trace);
    tcase_add_test(tw, test_accounting_zero_duration_and_skipped);
    tcase_add_test(tw, test_accounting_text);
    suite_add_tcase(s, tw);
    TCase *tn = tcase_create("python_str_edges");
    tcase_add_test(tn, test_embedded_nul_pid_and_tid);
    suite_add_tcase(s, tn);
    return s;
}
