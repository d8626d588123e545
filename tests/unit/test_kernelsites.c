/* test_kernelsites.c — unit tests of src/kernelsites.c (kernel-sites.md):
 * the location rules (frame_priority, source_location_priority, low_signal,
 * stack_loc, site_disp), normalize_source_location edge cases, choose/stack,
 * match_timed_event, the site sort, sampling positions, the entry lookup
 * branches on hand-built kernel maps, framework parsing/detection, and
 * end-to-end builds on small in-memory traces (cpu_op path, launch fallback,
 * rounded-total tie-break, categories, sampling, stage grouping, formal
 * overwrite, JSON layout). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/kernelsites.h"
#include "kerndiff/load.h"
#include "kerndiff/text.h"
#include "suites.h"

/* ---- helpers ------------------------------------------------------------------ */

static void check_str(char *got, const char *want)
{
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
}

static void check_stack_loc(const char *stack, const char *want)
{
    char *out = (char *)1;
    ck_assert(kd_ks_stack_location(stack, &out));
    if (!want) {
        ck_assert_ptr_null(out);
    } else {
        ck_assert_ptr_nonnull(out);
        ck_assert_str_eq(out, want);
    }
    free(out);
}

static kd_trace *trace_of(const char *json)
{
    kd_error err;
    kd_trace *t = kd_load_trace_mem(json, strlen(json), "mem.trace.json", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

static const kd_kernel_entry *entry_named(const kd_stage_payload *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(kd_str(p->strings, p->v[i].name), name) == 0)
            return &p->v[i];
    return NULL;
}

static const char *S(const kd_stage_payload *p, kd_sid s) { return kd_str(p->strings, s); }

static char *json_of(const kd_kernel_map *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kd_json j;
    ck_assert(kd_json_open(&j, f, false));
    kd_kernel_map_write_json(&j, m);
    ck_assert(kd_json_close(&j));
    fclose(f);
    return buf;
}

/* ---- §2 frame_priority -------------------------------------------------------- */

START_TEST(test_frame_priority_noise_raw)
{
    /* rule 1 is tested on the raw name */
    ck_assert_int_eq(kd_ks_frame_priority("threading.py(1012): _bootstrap"), -20);
    ck_assert_int_eq(kd_ks_frame_priority("  asyncio/base_events.py(600): run_forever"), -20);
    ck_assert_int_eq(kd_ks_frame_priority("<built-in method sleep of module object>"), -20);
    ck_assert_int_eq(kd_ks_frame_priority("<string>(1): <module>"), -20);
    /* an absolute stdlib path is not noise: 35 */
    ck_assert_int_eq(kd_ks_frame_priority("/usr/lib/python3.12/threading.py(1012): _bootstrap"), 35);
}
END_TEST

START_TEST(test_frame_priority_project)
{
    ck_assert_int_eq(kd_ks_frame_priority("/w/sglang/python/sglang/srt/l.py(450): forward"), 300);
    ck_assert_int_eq(kd_ks_frame_priority("/x/sglang/srt/l.py(4): f"), 300); /* -> python/sglang/ */
    ck_assert_int_eq(kd_ks_frame_priority("/x/site-packages/vllm/a.py(3): f"), 285);
    ck_assert_int_eq(kd_ks_frame_priority("/x/tensorrt_llm/a.py(3): f"), 280);
    ck_assert_int_eq(kd_ks_frame_priority("/x/TensorRT-LLM/a.py(3): f"), 280);
    ck_assert_int_eq(kd_ks_frame_priority("/x/sgl_kernel/ops.py(9): f"), 260);
    /* low-signal penalty on rule 2 */
    ck_assert_int_eq(kd_ks_frame_priority("/w/python/sglang/srt/m.py(7): __call__"), 220);
    ck_assert_int_eq(kd_ks_frame_priority("triton_kernels/matmul.py(5): run"), 220);
    ck_assert_int_eq(kd_ks_frame_priority("triton_kernels/x.py(5): _call_impl"), 140);
}
END_TEST

START_TEST(test_frame_priority_zero_rules)
{
    ck_assert_int_eq(kd_ks_frame_priority("triton/runtime/jit.py(300): run"), 0);
    ck_assert_int_eq(kd_ks_frame_priority("triton/backends/nvidia/driver.py(3): f"), 0);
    ck_assert_int_eq(kd_ks_frame_priority("torch/_ops.py(700): __call__"), 0);
    ck_assert_int_eq(kd_ks_frame_priority("torch/nn/modules/module.py(1750): _call_impl"), 0);
    ck_assert_int_eq(kd_ks_frame_priority("nn.Module: Linear_0"), 0);
    ck_assert_int_eq(kd_ks_frame_priority("aten::mm"), 0);
    ck_assert_int_eq(kd_ks_frame_priority(""), 0);
}
END_TEST

START_TEST(test_frame_priority_checkouts)
{
    /* rule 4: /data/ or /Users/ when nsl leaves no project prefix */
    ck_assert_int_eq(kd_ks_frame_priority("/data/mycode/train.py(3): main"), 100);
    ck_assert_int_eq(kd_ks_frame_priority("/data/sglang/launch"), 120);
    ck_assert_int_eq(kd_ks_frame_priority("/Users/me/vllm/run"), 118);
    ck_assert_int_eq(kd_ks_frame_priority("/data/TokenSpeed/x"), 117);
    ck_assert_int_eq(kd_ks_frame_priority("/Users/me/TensorRT-LLM/x"), 116);
    /* rule 5: ".py(" with a checkout dir but no "(N): " match */
    ck_assert_int_eq(kd_ks_frame_priority("/opt/sglang/a.py(12)"), 110);
    ck_assert_int_eq(kd_ks_frame_priority("/opt/vllm/a.py(x): f"), 108);
    ck_assert_int_eq(kd_ks_frame_priority("/opt/tokenspeed/a.py(x): f"), 107);
    ck_assert_int_eq(kd_ks_frame_priority("/opt/TensorRT-LLM/a.py(x)"), 106);
}
END_TEST

START_TEST(test_frame_priority_site_packages)
{
    /* site-packages torch module.py: 45 (after repo() it does not start with torch/) */
    ck_assert_int_eq(kd_ks_frame_priority(
                         "/usr/lib/python3/site-packages/torch/nn/modules/module.py(1750): _call_impl"),
                     45);
    ck_assert_int_eq(kd_ks_frame_priority("torch/_tensor.py(100): copy_"), 45);
    ck_assert_int_eq(kd_ks_frame_priority("/home/u/app.py(3): main"), 35);
}
END_TEST

/* ---- §2 slp, low_signal, is_preferred ----------------------------------------- */

START_TEST(test_source_location_priority)
{
    ck_assert_int_eq(kd_ks_source_location_priority(""), -100);
    ck_assert_int_eq(kd_ks_source_location_priority("  unresolved "), -100);
    ck_assert_int_eq(kd_ks_source_location_priority("python/sglang/srt/a.py:1 f"), 300);
    ck_assert_int_eq(kd_ks_source_location_priority("sglang/a.py:1 f"), 290);
    ck_assert_int_eq(kd_ks_source_location_priority("vllm/a.py:1 f"), 285);
    ck_assert_int_eq(kd_ks_source_location_priority("python/tokenspeed/a.py:1 f"), 283);
    ck_assert_int_eq(kd_ks_source_location_priority("tokenspeed/a.py:1 f"), 283);
    ck_assert_int_eq(kd_ks_source_location_priority("tensorrt_llm/a.py:1 f"), 280);
    ck_assert_int_eq(kd_ks_source_location_priority("sgl_kernel/a.py:1 f"), 260);
    ck_assert_int_eq(kd_ks_source_location_priority("python/sglang/a.py:1 __call__"), 220);
    ck_assert_int_eq(kd_ks_source_location_priority("python/other/a.py:1 f"), 180);
    ck_assert_int_eq(kd_ks_source_location_priority("python/other/a.py:1 _call_impl"), 100);
    ck_assert_int_eq(kd_ks_source_location_priority("torch/a.py:1 __call__"), 20);
    ck_assert_int_eq(kd_ks_source_location_priority("x/torch/a.py:1 f"), 20);
    ck_assert_int_eq(kd_ks_source_location_priority("x/a.py:1 f"), 120);
    ck_assert_int_eq(kd_ks_source_location_priority("x/a.py:1 __torch_function__"), 40);
    ck_assert_int_eq(kd_ks_source_location_priority("aten::mm"), 0);
    /* a joined summary: only the first prefix and any token anywhere count */
    ck_assert_int_eq(kd_ks_source_location_priority(
                         "python/sglang/a.py:1 f (site share 50%)<br>x/torch/b.py:2 g"),
                     300);
}
END_TEST

START_TEST(test_low_signal_and_preferred)
{
    ck_assert(kd_ks_is_low_signal("x.py:1 _wrapped_call_impl"));
    ck_assert(kd_ks_is_low_signal("vllm/model_executor/parameter.py:3 f"));
    ck_assert(kd_ks_is_low_signal("TORCH/FX/GRAPH_MODULE.PY:1 F")); /* lowered */
    ck_assert(!kd_ks_is_low_signal(""));
    ck_assert(!kd_ks_is_low_signal("python/sglang/a.py:1 forward"));
    ck_assert(kd_ks_is_preferred("  python/sglang/a.py:1 f"));
    ck_assert(kd_ks_is_preferred("sgl_kernel/x"));
    ck_assert(!kd_ks_is_preferred("torch/a.py:1 f"));
    ck_assert(!kd_ks_is_preferred("unresolved"));
}
END_TEST

/* ---- §2 normalize_source_location ------------------------------------------------ */

START_TEST(test_nsl_edge_cases)
{
    check_str(kd_normalize_source_location("/w/sglang/python/sglang/srt/l.py(450): forward"),
              "python/sglang/srt/l.py:450 forward");
    check_str(kd_normalize_source_location("a(12): b"), "a:12 b");
    check_str(kd_normalize_source_location("(12): b"), "(12): b"); /* the ( must be at i >= 1 */
    check_str(kd_normalize_source_location("a(12):b"), "a(12):b");
    check_str(kd_normalize_source_location("a(12): "), "a(12):"); /* stripped: nothing after ": " */
    check_str(kd_normalize_source_location("a(): b"), "a(): b");
    /* the first ( followed by digits and "): " */
    check_str(kd_normalize_source_location("a(x)(3): f(2): g"), "a(x):3 f(2): g");
    check_str(kd_normalize_source_location("  /w/vllm/x.py(7):   f  g "), "vllm/x.py:7 f g");
    check_str(kd_normalize_source_location("nn.Module: Linear"), "nn.Module: Linear");
    /* no hex canonicalization here */
    check_str(kd_normalize_source_location("m.py(1): f 0x7f00"), "m.py:1 f 0x7f00");
}
END_TEST

/* ---- §2 stack_loc and site_disp ------------------------------------------------- */

START_TEST(test_stack_location)
{
    check_stack_loc(NULL, NULL);
    check_stack_loc("", NULL);
    check_stack_loc("aten::mm -> nn.Module: X", NULL); /* nothing with slp > 0 */
    check_stack_loc("python/sglang/a.py:1 f -> torch/b.py:2 g", "python/sglang/a.py:1 f");
    /* the last part among equals wins */
    check_stack_loc("python/sglang/a.py:1 f -> python/sglang/b.py:2 g", "python/sglang/b.py:2 g");
    /* split on "->" without spaces too */
    check_stack_loc("x.py:1 f->python/sglang/c.py:3 h", "python/sglang/c.py:3 h");
    /* nsl is re-applied to each part */
    check_stack_loc("python/sglang/a.py:5 f(2): g", "python/sglang/a.py:5 f:2 g");
    check_stack_loc("/w/sglang/python/sglang/z.py(9): run -> x.py:1 f", "python/sglang/z.py:9 run");
    /* low signal lowers the part */
    check_stack_loc("python/sglang/a.py:1 __call__ -> vllm/b.py:2 g", "vllm/b.py:2 g");
}
END_TEST

START_TEST(test_site_display)
{
    check_str(kd_ks_site_display("python/sglang/a.py:1 f", "vllm/b.py:2 g"), "python/sglang/a.py:1 f");
    /* preferred but low signal: the stack's location */
    check_str(kd_ks_site_display("python/sglang/a.py:1 __call__", "x.py:1 f -> vllm/b.py:2 g"),
              "vllm/b.py:2 g");
    /* not preferred: the stack, else the location */
    check_str(kd_ks_site_display("torch/x.py:1 f", "sglang/s.py:3 h"), "sglang/s.py:3 h");
    check_str(kd_ks_site_display("torch/x.py:1 f", NULL), "torch/x.py:1 f");
    check_str(kd_ks_site_display("", NULL), "unresolved");
    check_str(kd_ks_site_display(NULL, "python/sglang/a.py:1 f"), "python/sglang/a.py:1 f");
    check_str(kd_ks_site_display("  unresolved ", "aten::mm"), "unresolved");
    /* site_disp keeps the location as is: no re-application of nsl */
    check_str(kd_ks_site_display("python/sglang/srt/layers/a.py:5 f(2): g", NULL),
              "python/sglang/srt/layers/a.py:5 f(2): g");
}
END_TEST

/* ---- §4 match_timed_event --------------------------------------------------------- */

START_TEST(test_match_timed_worked_example)
{
    /* §4 example: kernel at 10; A ts 1 dur 9 (end 10), B ts 9 dur 0.5 -> A */
    double ts[] = {1.0, 9.0}, dur[] = {9.0, 0.5};
    ck_assert_int_eq(kd_ks_match_timed(ts, dur, 2, 10.0), 0);
}
END_TEST

START_TEST(test_match_timed_rules)
{
    ck_assert_int_eq(kd_ks_match_timed(NULL, NULL, 0, 1.0), -1);
    /* only the 4 latest-starting at or before probe + 1e-3 are candidates */
    double ts[] = {0.0, 1.0, 2.0, 3.0, 4.0, 100.0}, dur[] = {10.0, 1.0, 1.0, 1.0, 1.0, 0.0};
    ck_assert_int_eq(kd_ks_match_timed(ts, dur, 6, 10.0), 4); /* item 0 ends at 10 but is 5th */
    /* tolerance: ts <= probe + 1e-3 */
    double ts2[] = {5.0, 10.0005}, dur2[] = {1.0, 0.0};
    ck_assert_int_eq(kd_ks_match_timed(ts2, dur2, 2, 10.0), 1);
    /* ties keep the first */
    double ts3[] = {1.0, 2.0}, dur3[] = {2.0, 1.0};
    ck_assert_int_eq(kd_ks_match_timed(ts3, dur3, 2, 3.0), 0);
    /* nothing before: the first two by |ts - probe| */
    double ts4[] = {11.0, 15.0, 20.0}, dur4[] = {1.0, 1.0, 1.0};
    ck_assert_int_eq(kd_ks_match_timed(ts4, dur4, 3, 10.0), 0);
    double ts5[] = {12.0, 12.0}, dur5[] = {5.0, 1.0};
    ck_assert_int_eq(kd_ks_match_timed(ts5, dur5, 2, 10.0), 0); /* by start, first on ties */
}
END_TEST

/* ---- §5 choose / stack ------------------------------------------------------------ */

START_TEST(test_choose_frame)
{
    kd_ks_frame a = {"a", 300, 0.0, 100.0}, b = {"b", 300, 10.0, 20.0}, c = {"c", 35, 12.0, 1.0},
                d = {"d", 300, 10.0, 5.0}, e = {"e", 300, 10.0, 5.0};
    const kd_ks_frame *act[] = {&a, &b, &c};
    ck_assert_int_eq(kd_ks_choose_frame(act, 0), -1);
    ck_assert_int_eq(kd_ks_choose_frame(act, 3), 1); /* same prio: the larger ts */
    const kd_ks_frame *act2[] = {&a, &b, &d, &e};
    ck_assert_int_eq(kd_ks_choose_frame(act2, 4), 2); /* same ts: the shorter; first on ties */
    kd_ks_frame n = {"noise", -20, 50.0, 1.0};
    const kd_ks_frame *act3[] = {&c, &n};
    ck_assert_int_eq(kd_ks_choose_frame(act3, 2), 0);
}
END_TEST

START_TEST(test_frame_stack)
{
    kd_ks_frame f[6] = {{"f0", 300, 0, 1}, {"f1", -20, 0, 1}, {"f2", 35, 0, 1},
                        {"f3", 0, 0, 1},   {"f4", 45, 0, 1},  {"f5", 300, 0, 1}};
    const kd_ks_frame *act[6] = {&f[0], &f[1], &f[2], &f[3], &f[4], &f[5]};
    check_str(kd_ks_frame_stack(act, 6), "f0 -> f2 -> f4 -> f5");
    const kd_ks_frame *act2[] = {&f[0], &f[2], &f[4], &f[5], &f[0]};
    check_str(kd_ks_frame_stack(act2, 5), "f2 -> f4 -> f5 -> f0"); /* the last 4 */
    const kd_ks_frame *act3[] = {&f[1], &f[3]};
    check_str(kd_ks_frame_stack(act3, 2), "f3"); /* none > 0: the last frame */
    check_str(kd_ks_frame_stack(act, 0), "");
}
END_TEST

/* ---- §7 site sort, §0 rounding, §8 sampling --------------------------------------- */

START_TEST(test_site_sort)
{
    kd_interner *in = kd_interner_new();
    kd_sid torch = kd_intern_cstr(in, "torch/a.py:1 f"), sg = kd_intern_cstr(in, "python/sglang/a.py:1 f"),
           sg2 = kd_intern_cstr(in, "python/sglang/b.py:2 g"), un = kd_intern_cstr(in, "unresolved"),
           st = kd_intern_cstr(in, "vllm/x.py:3 h");
    kd_site s[5] = {
        {torch, torch, 9, 500.0, 0, 0, 0},
        {sg, sg, 1, 1.0, 0, 0, 0},
        {sg2, sg2, 2, 1.0, 0, 0, 0}, /* same slp and rounded total: more launches first */
        {un, un, 50, 900.0, 0, 0, st}, /* site_disp = the stack's vllm location (285) */
        {sg, sg, 1, 2.0, 0, 0, 0},
    };
    ck_assert(kd_ks_sort_sites(s, 5, in));
    ck_assert_uint_eq(s[0].location, sg);
    ck_assert_double_eq(s[0].total_us, 2.0);
    ck_assert_uint_eq(s[1].location, sg2);
    ck_assert_uint_eq(s[2].location, sg);
    ck_assert_uint_eq(s[3].location, un);
    ck_assert_uint_eq(s[4].location, torch);
    kd_interner_free(in);
}
END_TEST

/* kd_ks_round3's arithmetic path against the text it replaces */
static double round3_by_text(double x)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.3f", x);
    return strtod(buf, NULL);
}

static void check_round3(double x)
{
    double got = kd_ks_round3(x), want = round3_by_text(x);
    ck_assert_msg(memcmp(&got, &want, sizeof got) == 0, "round3(%.17g): got %.17g want %.17g", x,
                  got, want);
}

START_TEST(test_round3_matches_text_rounding)
{
    static const double edge[] = {
        0.0, 0.0005, 0.0015, 0.0025, 0.0625, 0.1875, 2.0005, 1.0005, 2.3455, 0.0004999999,
        1e-300, 4.9e-324, 0x1p40, 0x1p40 - 0.5, 0x1p39 + 0.0625, 1099511627775.9995,
        123456.0005, 0.5, 1.5, 2.5, 999.9995, 1e-4,
    };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        for (int sg = 0; sg < 2; sg++) {
            double x = sg ? -edge[i] : edge[i];
            check_round3(x);
            check_round3(nextafter(x, INFINITY));
            check_round3(nextafter(x, -INFINITY));
        }
    }
    uint64_t st = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 20000; i++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        /* exact ties: odd multiples of 1/2000 that are dyadic, k / 2^m */
        double tie = (double)(st % 4000000) / (double)(1u << (st >> 60 & 7));
        check_round3(tie);
        check_round3(-tie);
        /* trace-like microsecond totals and shares */
        check_round3((double)(st % 100000000) / 997.0);
        check_round3(100.0 * (double)(st % 1000) / (double)(st % 7919 + 1));
        /* any bit pattern */
        double any;
        memcpy(&any, &st, sizeof any);
        if (isfinite(any))
            check_round3(any);
    }
}
END_TEST

START_TEST(test_round3_and_samples)
{
    ck_assert_double_eq(kd_ks_round3(267.0149999), 267.015);
    ck_assert_double_eq(kd_ks_round3(0.0005), 0.001); /* 0.0005 is above .0005 in binary */
    ck_assert_double_eq(kd_ks_round3(2.0005), 2.001); /* above in binary */
    ck_assert_double_eq(kd_ks_round3(1.0005), 1.0);   /* below in binary */
    ck_assert_double_eq(kd_ks_round3(2.3455), 2.345);
    ck_assert_double_eq(kd_ks_round3(1.0004), 1.0);
    ck_assert_uint_eq(kd_ks_sample_position(0, 17), 0);
    ck_assert_uint_eq(kd_ks_sample_position(15, 17), 16);
    ck_assert_uint_eq(kd_ks_sample_position(1, 17), 1);  /* round(16/15) */
    ck_assert_uint_eq(kd_ks_sample_position(8, 17), 9);  /* round(128/15 = 8.53) */
    ck_assert_uint_eq(kd_ks_sample_position(7, 100), 46); /* round(693/15 = 46.2) */
    ck_assert_uint_eq(kd_ks_sample_position(15, 100), 99);
}
END_TEST

/* ---- framework -------------------------------------------------------------------- */

START_TEST(test_framework_parse)
{
    kd_framework fw;
    bool is_auto;
    static const struct {
        const char *s;
        kd_framework fw;
    } ok[] = {{"sglang", KD_FW_SGLANG},         {"vllm", KD_FW_VLLM},
              {"trtllm", KD_FW_TRTLLM},         {"tllm", KD_FW_TRTLLM},
              {"tensorrt-llm", KD_FW_TRTLLM},   {"tokenspeed", KD_FW_TOKENSPEED},
              {"token-speed", KD_FW_TOKENSPEED}, {"ts", KD_FW_TOKENSPEED}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        ck_assert(kd_framework_parse(ok[i].s, &fw, &is_auto));
        ck_assert_int_eq(fw, ok[i].fw);
        ck_assert(!is_auto);
    }
    ck_assert(kd_framework_parse("auto", &fw, &is_auto));
    ck_assert(is_auto);
    ck_assert_int_eq(fw, KD_FW_SGLANG);
    ck_assert(!kd_framework_parse("SGLang", &fw, &is_auto));
    ck_assert(!kd_framework_parse("tensorrt_llm", &fw, &is_auto));
    ck_assert(!kd_framework_parse("", &fw, &is_auto));
    ck_assert(!kd_framework_parse(NULL, &fw, NULL));
    ck_assert_str_eq(kd_framework_name(KD_FW_TRTLLM), "trtllm");
    ck_assert_str_eq(kd_framework_display_name(KD_FW_VLLM), "vLLM");
    ck_assert_str_eq(kd_framework_display_name(KD_FW_TRTLLM), "TensorRT-LLM");
}
END_TEST

START_TEST(test_framework_detect)
{
    ck_assert_int_eq(kd_framework_detect(NULL, 0, "/runs/vllm-b200/trace.json"), KD_FW_VLLM);
    ck_assert_int_eq(kd_framework_detect(NULL, 0, "/runs/TensorRT-LLM/x/a.json"), KD_FW_TRTLLM);
    /* the last component naming exactly one framework decides */
    ck_assert_int_eq(kd_framework_detect(NULL, 0, "/vllm/tokenspeed_run/a.json"), KD_FW_TOKENSPEED);
    ck_assert_int_eq(kd_framework_detect(NULL, 0, "/x/y.json"), KD_FW_SGLANG);
    ck_assert_int_eq(kd_framework_detect(NULL, 0, NULL), KD_FW_SGLANG);
    kd_trace *t = trace_of(
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/vllm/a.py(1): f\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/vllm/b.py(1): f\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"/w/sglang/c.py(1): f\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1}]}");
    /* a path naming two frameworks is ambiguous: the frames decide */
    ck_assert_int_eq(kd_framework_detect(&t, 1, "/cmp/vllm_vs_sglang/t.json"), KD_FW_VLLM);
    kd_trace_free(t);
}
END_TEST

/* ---- §9 lookup on hand-built maps --------------------------------------------------- */

/* An entry with one site at loc (best_location = loc). */
static void add_entry(kd_kernel_map *m, kd_stage_payload *p, const char *name, const char *loc,
                      double total_us)
{
    kd_kernel_entry *v = realloc(p->v, (p->n + 1) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    p->v = v;
    p->strings = m->strings;
    kd_kernel_entry *e = &p->v[p->n++];
    kd_sid l = kd_intern_cstr(m->strings, loc);
    e->name = kd_intern_cstr(m->strings, name);
    e->category = "other";
    e->best_location = l;
    e->n_sites = 1;
    e->sites = malloc(sizeof *e->sites);
    ck_assert_ptr_nonnull(e->sites);
    e->sites[0] = (kd_site){l, l, 1, total_us, 100.0, 0, 0};
}

static void map_new(kd_kernel_map *m)
{
    memset(m, 0, sizeof *m);
    m->strings = kd_interner_new();
    m->is_kernel_map = true;
    for (int s = 0; s < 3; s++)
        m->stages[s].strings = m->strings;
    m->global.strings = m->strings;
}

static void map_stage(kd_kernel_map *m, kd_stage s)
{
    m->has[s] = true;
    m->order[m->n_order++] = s;
}

static const char *lookup_name(kd_kernel_map *m, kd_stage stage, const char *name)
{
    const kd_interner *in = NULL;
    const kd_kernel_entry *e = kd_kernel_map_lookup(m, stage, name, &in);
    if (!e)
        return NULL;
    ck_assert_ptr_eq(in, m->strings);
    return kd_str(in, e->name);
}

START_TEST(test_lookup_exact_prefix_substring)
{
    kd_kernel_map m;
    map_new(&m);
    map_stage(&m, KD_STAGE_ALL);
    kd_stage_payload *p = &m.stages[KD_STAGE_ALL];
    add_entry(&m, p, "Gemm_Kernel_Small", "python/sglang/a.py:1 f", 1.0);
    add_entry(&m, p, "gemm_kernel", "python/sglang/b.py:1 f", 1.0);
    add_entry(&m, p, "fused_rope", "python/sglang/c.py:1 f", 1.0);
    add_entry(&m, p, "zz_fused_rope_kernel_long_name", "python/sglang/d.py:1 f", 1.0);
    /* exact */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "gemm_kernel"), "gemm_kernel");
    /* prefix (lowered), the longest min length wins */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "gemm_kernel_small_v2"), "Gemm_Kernel_Small");
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "GEMM"), "Gemm_Kernel_Small"); /* ties: first */
    /* substring: min // 2; the longer substring key wins */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "xx_fused_rope_yy"), "fused_rope");
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "_fused_rope_kernel_"),
                     "zz_fused_rope_kernel_long_name");
    ck_assert_ptr_null(lookup_name(&m, KD_STAGE_ALL, "softmax"));
    /* memoized: the same answer again */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "xx_fused_rope_yy"), "fused_rope");
    kd_kernel_map_free(&m);
}
END_TEST

START_TEST(test_lookup_long_prefix)
{
    char common[200], q[300], k1[300], k2[300], k3[300];
    /* compact forms >= 96; p >= 64 and >= int(0.4 * min) */
    snprintf(common, sizeof common, "void cutlass::device_kernel<flash::FlashAttnFwdSm90<"
                                    "CollectiveMainloop<Tile128x128x64, Stages2>, ");
    snprintf(q, sizeof q, "%sEpilogueQuery<bf16, Rows64>, SchedulerQ>>(Params)", common);
    snprintf(k1, sizeof k1, "%sEpilogueKey<half, Cols32>, SchedulerK>>(Params)", common);
    snprintf(k2, sizeof k2, "%sEpilogueQuery<fp8, Rows64>, SchedulerK>>(Params)", common);
    snprintf(k3, sizeof k3, "void cutlass::device_kernel<other::Kernel<%s>>", "x");
    kd_kernel_map m;
    map_new(&m);
    map_stage(&m, KD_STAGE_DECODE);
    kd_stage_payload *p = &m.stages[KD_STAGE_DECODE];
    add_entry(&m, p, k1, "python/sglang/a.py:1 f", 1.0);
    add_entry(&m, p, k2, "python/sglang/b.py:1 f", 1.0);
    add_entry(&m, p, k3, "python/sglang/c.py:1 f", 1.0);
    /* k2 shares the longer compact prefix (both flash: +32 each) */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_DECODE, q), k2);
    /* a short compact name never reaches the long-prefix step */
    ck_assert_ptr_null(lookup_name(&m, KD_STAGE_DECODE, "void cutlass::device_kernel<flash::Q>"));
    kd_kernel_map_free(&m);
}
END_TEST

START_TEST(test_lookup_long_prefix_ratio)
{
    /* p = 70 but int(0.4 * 200) = 80: skipped */
    char q[260], k[260];
    memset(q, 'a', 70);
    memset(k, 'a', 70);
    memset(q + 70, 'b', 130);
    memset(k + 70, 'c', 130);
    q[200] = k[200] = '\0';
    q[0] = 'Q'; /* lowered prefix tests differ too */
    k[0] = 'q';
    kd_kernel_map m;
    map_new(&m);
    kd_stage_payload *p = &m.global;
    add_entry(&m, p, k, "python/sglang/a.py:1 f", 1.0);
    ck_assert_ptr_null(lookup_name(&m, KD_STAGE_ALL, q));
    kd_kernel_map_free(&m);
}
END_TEST

START_TEST(test_lookup_alias)
{
    kd_kernel_map m;
    map_new(&m);
    kd_stage_payload *p = &m.global;
    add_entry(&m, p, "FlashAttnFwdSm90_kernel", "unresolved", 5.0); /* 1016 - 100 */
    add_entry(&m, p, "fa_main", "vllm/vllm_flash_attn/flash_attn_interface.py:9 flash_attn_varlen_func",
              200.0); /* 1031 + 285 + 20 */
    add_entry(&m, p, "unrelated", "python/sglang/a.py:1 f", 1e6);
    add_entry(&m, p, "other", "python/sglang/memset_helper.py:3 memset_zero", 1.0);
    /* the index is built on the first lookup: the payload is complete by now */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_EXTEND, "flash_attn_fwd_combine<2>"), "fa_main");
    /* memset group: a compact name starting with memset */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_DECODE, "Memset!"), "other");
    /* no group: none */
    ck_assert_ptr_null(lookup_name(&m, KD_STAGE_DECODE, "silu"));
    kd_kernel_map_free(&m);
}
END_TEST

START_TEST(test_lookup_alias_bonus)
{
    /* same group hit, the bonus decides: slp and int(TU // 10) */
    kd_kernel_map m;
    map_new(&m);
    kd_stage_payload *p = &m.global;
    add_entry(&m, p, "memset_a", "torch/x.py:1 f", 5000.0); /* slp 20 + 500 */
    add_entry(&m, p, "memset_b", "python/sglang/y.py:1 f", 100.0); /* 300 + 10 */
    ck_assert_str_eq(lookup_name(&m, KD_STAGE_ALL, "Memset (Device)"), "memset_a");
    kd_kernel_map_free(&m);
}
END_TEST

START_TEST(test_lookup_stage_aliases_and_global)
{
    kd_kernel_map m;
    map_new(&m);
    map_stage(&m, KD_STAGE_EXTEND);
    map_stage(&m, KD_STAGE_ALL);
    add_entry(&m, &m.stages[KD_STAGE_EXTEND], "alpha", "python/sglang/e.py:1 f", 1.0);
    add_entry(&m, &m.stages[KD_STAGE_ALL], "beta", "python/sglang/a.py:1 f", 1.0);
    add_entry(&m, &m.global, "alpha", "python/sglang/g.py:1 f", 1.0);
    add_entry(&m, &m.global, "beta", "python/sglang/g.py:2 f", 1.0);
    add_entry(&m, &m.global, "gamma", "python/sglang/g.py:3 f", 1.0);
    const kd_interner *in;
    ck_assert_ptr_eq(kd_kernel_map_lookup(&m, KD_STAGE_EXTEND, "alpha", &in), &m.stages[KD_STAGE_EXTEND].v[0]);
    /* extend -> [extend, prefill, all] */
    ck_assert_ptr_eq(kd_kernel_map_lookup(&m, KD_STAGE_EXTEND, "beta", &in), &m.stages[KD_STAGE_ALL].v[0]);
    /* decode -> [decode (missing), all]; then global */
    ck_assert_ptr_eq(kd_kernel_map_lookup(&m, KD_STAGE_DECODE, "beta", &in), &m.stages[KD_STAGE_ALL].v[0]);
    ck_assert_ptr_eq(kd_kernel_map_lookup(&m, KD_STAGE_DECODE, "alpha", &in), &m.global.v[0]);
    ck_assert_ptr_eq(kd_kernel_map_lookup(&m, KD_STAGE_ALL, "gamma", &in), &m.global.v[2]);
    ck_assert_ptr_null(kd_kernel_map_lookup(&m, KD_STAGE_ALL, "delta", &in));
    kd_kernel_map_free(&m);
}
END_TEST

/* ---- end to end on small traces ------------------------------------------------------ */

#define FR(name, tid, ts, dur)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid  \
    ",\"ts\":" #ts ",\"dur\":" #dur "},"
#define OP(name, tid, ts, dur, ext)                                                              \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"External id\":" #ext "}},"
#define LA(tid, ts, corr, ext)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #corr ",\"External id\":" #ext "}},"
#define KN(name, ts, dur, corr)                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts     \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"stream\":7}},"
#define END "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":\"gpu\"}}]}"

static const char *const TRACE_SITES =
    "{\"traceEvents\":["
    FR("/w/sglang/python/sglang/srt/model_executor/model_runner.py(1200): forward", 1, 0, 1000)
    FR("/w/sglang/python/sglang/srt/layers/linear.py(450): forward", 1, 10, 20)
    FR("/usr/lib/python3/site-packages/torch/nn/modules/module.py(1750): _call_impl", 1, 11, 5)
    OP("aten::mm", 1, 12, 3, 7)
    LA(1, 14, 70, 7)
    KN("gemm_a", 50, 5, 70)
    /* an op on a frameless thread, its launch on another frameless thread */
    OP("aten::copy_", 2, 100, 2, 8)
    LA(3, 101, 80, 8)
    KN("copy_b", 150, 2, 80)
    /* tie: site a.py 1.0004 x1 first, site b.py 0.5 + 0.5001 x2 */
    FR("/w/sglang/python/sglang/a.py(1): f", 4, 200, 10)
    FR("/w/sglang/python/sglang/b.py(2): g", 5, 200, 100)
    LA(4, 201, 90, 9)
    KN("tie_k", 250, 1.0004, 90)
    LA(5, 205, 91, 10)
    KN("tie_k", 260, 0.5, 91)
    LA(5, 210, 92, 11)
    KN("tie_k", 270, 0.5001, 92)
    /* categories: the last kernel per canonical wins */
    KN("void foo<int>(copy_t)", 300, 1, 93)
    KN("void foo<int>(float*)", 301, 1, 94)
    END;

START_TEST(test_build_sites)
{
    kd_trace *t = trace_of(TRACE_SITES);
    kd_stage st = KD_STAGE_ALL;
    kd_kernel_map m;
    kd_error err;
    ck_assert_int_eq(kd_kernel_map_build(&t, &st, 1, KD_FW_SGLANG, &m, &err), KD_OK);
    ck_assert_uint_eq(m.n_order, 1);
    ck_assert_int_eq(m.order[0], KD_STAGE_ALL);
    const kd_stage_payload *p = &m.global;
    ck_assert_uint_eq(p->n, 4);
    /* sorted names */
    ck_assert_str_eq(S(p, p->v[0].name), "copy_b");
    ck_assert_str_eq(S(p, p->v[3].name), "void foo<int>");

    /* cpu_op path: ext via the launch's correlation; probe 13 */
    const kd_kernel_entry *e = entry_named(p, "gemm_a");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->category, "gemm");
    ck_assert_uint_eq(e->n_sites, 1);
    ck_assert_str_eq(S(p, e->sites[0].location), "python/sglang/srt/layers/linear.py:450 forward");
    ck_assert_str_eq(S(p, e->sites[0].top_cpu_op), "aten::mm");
    ck_assert_str_eq(S(p, e->sites[0].stack),
                     "python/sglang/srt/model_executor/model_runner.py:1200 forward -> "
                     "python/sglang/srt/layers/linear.py:450 forward -> "
                     "usr/lib/python3/site-packages/torch/nn/modules/module.py:1750 _call_impl");
    ck_assert_str_eq(S(p, e->sites[0].display_location), "python/sglang/srt/layers/linear.py:450 forward");
    ck_assert_double_eq(e->sites[0].share_pct_within_kernel, 100.0);

    /* launch fallback without frames: unresolved, the launch name, no stack */
    e = entry_named(p, "copy_b");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(S(p, e->sites[0].location), "unresolved");
    ck_assert_str_eq(S(p, e->sites[0].top_cpu_op), "cudaLaunchKernel");
    ck_assert_uint_eq(e->sites[0].stack, 0);
    ck_assert_str_eq(S(p, e->best_location), "unresolved");

    /* the site sort uses the rounded total: launches break the 1.0 tie */
    e = entry_named(p, "tie_k");
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->n_sites, 2);
    ck_assert_str_eq(S(p, e->sites[0].location), "python/sglang/b.py:2 g");
    ck_assert_int_eq(e->sites[0].launches, 2);
    ck_assert_double_eq(e->sites[0].total_us, 1.0);
    ck_assert_double_eq(e->sites[1].total_us, 1.0);
    ck_assert_double_eq(e->sites[1].share_pct_within_kernel, kd_ks_round3(100.0 * 1.0004 / (1.0004 + 1.0001)));
    ck_assert_str_eq(S(p, e->best_location), "python/sglang/b.py:2 g");

    e = entry_named(p, "void foo<int>");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->category, "other");
    ck_assert_int_eq(e->sites[0].launches, 2);
    kd_kernel_map_free(&m);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_build_sampling)
{
    /* 20 launches of one kernel: sglang keeps all, other frameworks 16 */
    char json[8192];
    size_t n = (size_t)snprintf(json, sizeof json, "{\"traceEvents\":[");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(json + n, sizeof json - n,
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                              "\"ts\":%d,\"dur\":1,\"args\":{\"stream\":7}},",
                              i);
    snprintf(json + n, sizeof json - n, "%s", END);
    kd_trace *t = trace_of(json);
    kd_stage st = KD_STAGE_ALL;
    kd_kernel_map m;
    kd_error err;
    ck_assert_int_eq(kd_kernel_map_build(&t, &st, 1, KD_FW_SGLANG, &m, &err), KD_OK);
    ck_assert_int_eq(m.global.v[0].sites[0].launches, 20);
    kd_kernel_map_free(&m);
    ck_assert_int_eq(kd_kernel_map_build(&t, &st, 1, KD_FW_VLLM, &m, &err), KD_OK);
    ck_assert_int_eq(m.global.v[0].sites[0].launches, 16);
    ck_assert_int_eq(m.stages[KD_STAGE_ALL].v[0].sites[0].launches, 16);
    kd_kernel_map_free(&m);
    /* formal payloads never sample */
    ck_assert_int_eq(kd_formal_payloads_build(&t, &st, 1, &m, &err), KD_OK);
    ck_assert_int_eq(m.stages[KD_STAGE_ALL].v[0].sites[0].launches, 20);
    kd_kernel_map_free(&m);
    kd_trace_free(t);
}
END_TEST

START_TEST(test_build_stages_and_formal)
{
    kd_trace *t1 = trace_of("{\"traceEvents\":[" KN("alpha", 1, 2, 1) END);
    kd_trace *t2 = trace_of("{\"traceEvents\":[" KN("beta", 1, 3, 1) END);
    kd_trace *ts[2] = {t1, t2};
    kd_error err;
    kd_kernel_map m;
    /* the path stage overrides; stages in first-merge order plus global */
    kd_stage st[2] = {KD_STAGE_DECODE, KD_STAGE_EXTEND};
    ck_assert_int_eq(kd_kernel_map_build(ts, st, 2, KD_FW_SGLANG, &m, &err), KD_OK);
    ck_assert_uint_eq(m.n_order, 2);
    ck_assert_int_eq(m.order[0], KD_STAGE_DECODE);
    ck_assert_int_eq(m.order[1], KD_STAGE_EXTEND);
    ck_assert_uint_eq(m.global.n, 2);
    char *j = json_of(&m);
    ck_assert_str_eq(j, "{\"stages\":{\"decode\":{\"kernels\":{\"alpha\":{\"category\":\"other\",\"sites\":"
                        "[{\"location\":\"unresolved\",\"display_location\":\"unresolved\",\"launches\":1,"
                        "\"total_us\":2.0,\"share_pct_within_kernel\":100.0,\"top_cpu_op\":null,\"stack\":null}],"
                        "\"best_location\":\"unresolved\"}}},\"extend\":{\"kernels\":{\"beta\":{\"category\":"
                        "\"other\",\"sites\":[{\"location\":\"unresolved\",\"display_location\":\"unresolved\","
                        "\"launches\":1,\"total_us\":3.0,\"share_pct_within_kernel\":100.0,\"top_cpu_op\":null,"
                        "\"stack\":null}],\"best_location\":\"unresolved\"}}}},\"global\":{\"kernels\":{\"alpha\":"
                        "{\"category\":\"other\",\"sites\":[{\"location\":\"unresolved\",\"display_location\":"
                        "\"unresolved\",\"launches\":1,\"total_us\":2.0,\"share_pct_within_kernel\":100.0,"
                        "\"top_cpu_op\":null,\"stack\":null}],\"best_location\":\"unresolved\"},\"beta\":{"
                        "\"category\":\"other\",\"sites\":[{\"location\":\"unresolved\",\"display_location\":"
                        "\"unresolved\",\"launches\":1,\"total_us\":3.0,\"share_pct_within_kernel\":100.0,"
                        "\"top_cpu_op\":null,\"stack\":null}],\"best_location\":\"unresolved\"}}}}");
    free(j);
    kd_kernel_map_free(&m);

    /* formal: a later trace overwrites its stage, the key keeps its position */
    kd_stage fs[2] = {KD_STAGE_ALL, KD_STAGE_ALL};
    ck_assert_int_eq(kd_formal_payloads_build(ts, fs, 2, &m, &err), KD_OK);
    ck_assert_uint_eq(m.n_order, 1);
    ck_assert_uint_eq(m.stages[KD_STAGE_ALL].n, 1);
    ck_assert_str_eq(S(&m.stages[KD_STAGE_ALL], m.stages[KD_STAGE_ALL].v[0].name), "beta");
    ck_assert_ptr_eq(kd_formal_payload_for(&m, KD_STAGE_DECODE), &m.stages[KD_STAGE_ALL]);
    kd_kernel_map_free(&m);

    /* pick_stage_value: exact, else all, else the only one, else NULL */
    ck_assert_int_eq(kd_formal_payloads_build(ts, st, 2, &m, &err), KD_OK);
    ck_assert_ptr_eq(kd_formal_payload_for(&m, KD_STAGE_EXTEND), &m.stages[KD_STAGE_EXTEND]);
    ck_assert_ptr_null(kd_formal_payload_for(&m, KD_STAGE_ALL));
    j = json_of(&m);
    ck_assert(strncmp(j, "{\"decode\":{\"kernels\":{\"alpha\"", 29) == 0);
    free(j);
    kd_kernel_map_free(&m);
    ck_assert_int_eq(kd_formal_payloads_build(ts, st, 1, &m, &err), KD_OK);
    ck_assert_ptr_eq(kd_formal_payload_for(&m, KD_STAGE_EXTEND), &m.stages[KD_STAGE_DECODE]);
    kd_kernel_map_free(&m);
    kd_trace_free(t1);
    kd_trace_free(t2);
}
END_TEST

START_TEST(test_build_empty)
{
    kd_trace *t = trace_of("{\"traceEvents\":[" FR("a.py(1): f", 1, 0, 1) END);
    kd_stage st = KD_STAGE_ALL;
    kd_kernel_map m;
    kd_error err;
    ck_assert_int_eq(kd_kernel_map_build(&t, &st, 1, KD_FW_SGLANG, &m, &err), KD_OK);
    char *j = json_of(&m);
    ck_assert_str_eq(j, "{\"stages\":{},\"global\":{\"kernels\":{}}}");
    free(j);
    ck_assert_ptr_null(kd_kernel_map_lookup(&m, KD_STAGE_ALL, "x", NULL));
    kd_kernel_map_free(&m);
    ck_assert_int_eq(kd_formal_payloads_build(&t, &st, 1, &m, &err), KD_OK);
    j = json_of(&m);
    ck_assert_str_eq(j, "{}");
    free(j);
    ck_assert_ptr_null(kd_formal_payload_for(&m, KD_STAGE_ALL));
    kd_kernel_map_free(&m);
    kd_trace_free(t);
}
END_TEST

/* kd_kernel_sites_build_both equals the two separate builds, byte for byte,
 * and its kernel map answers lookups (the shared interner). */
static void check_both_builds(kd_trace **ts, const kd_stage *st, size_t n, kd_framework fw,
                              bool free_payloads_first)
{
    kd_kernel_map km, fp, bkm, bfp;
    kd_error err;
    ck_assert_int_eq(kd_kernel_map_build(ts, st, n, fw, &km, &err), KD_OK);
    ck_assert_int_eq(kd_formal_payloads_build(ts, st, n, &fp, &err), KD_OK);
    ck_assert_int_eq(kd_kernel_sites_build_both(ts, st, n, fw, &bkm, &bfp, &err), KD_OK);
    ck_assert(!bkm.strings_borrowed && bfp.strings_borrowed && bfp.strings == bkm.strings);
    char *a = json_of(&km), *b = json_of(&bkm);
    ck_assert_str_eq(b, a);
    free(a);
    free(b);
    a = json_of(&fp);
    b = json_of(&bfp);
    ck_assert_str_eq(b, a);
    free(a);
    free(b);
    for (size_t i = 0; i < km.global.n; i++) {
        const char *name = kd_str(km.strings, km.global.v[i].name);
        const kd_interner *in = NULL;
        const kd_kernel_entry *e = kd_kernel_map_lookup(&bkm, KD_STAGE_ALL, name, &in);
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(kd_str(in, e->name), name);
    }
    if (free_payloads_first)
        kd_kernel_map_free(&bfp);
    kd_kernel_map_free(&bkm);
    if (!free_payloads_first)
        kd_kernel_map_free(&bfp);
    kd_kernel_map_free(&km);
    kd_kernel_map_free(&fp);
}

START_TEST(test_build_both_equals_separate)
{
    kd_trace *sites = trace_of(TRACE_SITES);
    kd_stage all = KD_STAGE_ALL;
    check_both_builds(&sites, &all, 1, KD_FW_SGLANG, false);
    check_both_builds(&sites, &all, 1, KD_FW_VLLM, true);
    kd_trace_free(sites);

    /* sampled kernel map (20 launches of each name, 16 kept) next to
     * unsampled payloads */
    char json[8192];
    size_t n = (size_t)snprintf(json, sizeof json, "{\"traceEvents\":[");
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(json + n, sizeof json - n,
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,"
                              "\"ts\":%d,\"dur\":1,\"args\":{\"stream\":7}},",
                              i % 2, i);
    snprintf(json + n, sizeof json - n, "%s", END);
    kd_trace *sampled = trace_of(json);
    check_both_builds(&sampled, &all, 1, KD_FW_TRTLLM, false);
    kd_trace_free(sampled);

    /* several traces, path stages, a later trace overwriting a stage */
    kd_trace *t1 = trace_of("{\"traceEvents\":[" KN("alpha", 1, 2, 1) END);
    kd_trace *t2 = trace_of("{\"traceEvents\":[" KN("beta", 1, 3, 1) END);
    kd_trace *t3 = trace_of("{\"traceEvents\":[" FR("a.py(1): f", 1, 0, 1) END);
    kd_trace *ts[3] = {t1, t2, t3};
    kd_stage st[3] = {KD_STAGE_DECODE, KD_STAGE_EXTEND, KD_STAGE_ALL};
    check_both_builds(ts, st, 3, KD_FW_SGLANG, true);
    kd_stage same[3] = {KD_STAGE_ALL, KD_STAGE_ALL, KD_STAGE_ALL};
    check_both_builds(ts, same, 3, KD_FW_VLLM, false);
    check_both_builds(&t3, same, 1, KD_FW_SGLANG, false); /* no kernels at all */
    kd_trace_free(t1);
    kd_trace_free(t2);
    kd_trace_free(t3);
}
END_TEST

START_TEST(test_active_tolerance)
{
    /* a frame ending 0.0005 before the probe is active; 0.002 before is not */
    kd_trace *t = trace_of("{\"traceEvents\":["
                           FR("/w/sglang/python/sglang/near.py(1): f", 1, 0, 12.9995)
                           FR("/w/sglang/python/sglang/far.py(2): g", 2, 0, 12.998)
                           OP("op1", 1, 12, 2, 1) OP("op2", 2, 12, 2, 2)
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":20,"
                           "\"dur\":1,\"args\":{\"External id\":1,\"stream\":7}},"
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k2\",\"pid\":0,\"tid\":7,\"ts\":20,"
                           "\"dur\":1,\"args\":{\"External id\":2,\"stream\":7}},"
                           END);
    kd_stage st = KD_STAGE_ALL;
    kd_kernel_map m;
    kd_error err;
    ck_assert_int_eq(kd_formal_payloads_build(&t, &st, 1, &m, &err), KD_OK);
    const kd_stage_payload *p = &m.stages[KD_STAGE_ALL];
    ck_assert_str_eq(S(p, entry_named(p, "k1")->sites[0].location), "python/sglang/near.py:1 f");
    ck_assert_str_eq(S(p, entry_named(p, "k2")->sites[0].location), "unresolved");
    ck_assert_str_eq(S(p, entry_named(p, "k2")->sites[0].top_cpu_op), "op2");
    kd_kernel_map_free(&m);
    kd_trace_free(t);
}
END_TEST

Suite *kernelsites_suite(void)
{
    Suite *s = suite_create("kernelsites");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, test_frame_priority_noise_raw);
    tcase_add_test(rules, test_frame_priority_project);
    tcase_add_test(rules, test_frame_priority_zero_rules);
    tcase_add_test(rules, test_frame_priority_checkouts);
    tcase_add_test(rules, test_frame_priority_site_packages);
    tcase_add_test(rules, test_source_location_priority);
    tcase_add_test(rules, test_low_signal_and_preferred);
    tcase_add_test(rules, test_nsl_edge_cases);
    tcase_add_test(rules, test_stack_location);
    tcase_add_test(rules, test_site_display);
    tcase_add_test(rules, test_match_timed_worked_example);
    tcase_add_test(rules, test_match_timed_rules);
    tcase_add_test(rules, test_choose_frame);
    tcase_add_test(rules, test_frame_stack);
    tcase_add_test(rules, test_site_sort);
    tcase_add_test(rules, test_round3_and_samples);
    tcase_add_test(rules, test_round3_matches_text_rounding);
    tcase_add_test(rules, test_framework_parse);
    tcase_add_test(rules, test_framework_detect);
    suite_add_tcase(s, rules);
    TCase *lookup = tcase_create("lookup");
    tcase_add_test(lookup, test_lookup_exact_prefix_substring);
    tcase_add_test(lookup, test_lookup_long_prefix);
    tcase_add_test(lookup, test_lookup_long_prefix_ratio);
    tcase_add_test(lookup, test_lookup_alias);
    tcase_add_test(lookup, test_lookup_alias_bonus);
    tcase_add_test(lookup, test_lookup_stage_aliases_and_global);
    suite_add_tcase(s, lookup);
    TCase *build = tcase_create("build");
    tcase_add_test(build, test_build_sites);
    tcase_add_test(build, test_build_sampling);
    tcase_add_test(build, test_build_stages_and_formal);
    tcase_add_test(build, test_build_empty);
    tcase_add_test(build, test_build_both_equals_separate);
    tcase_add_test(build, test_active_tolerance);
    suite_add_tcase(s, build);
    return s;
}
