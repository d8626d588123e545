/* test_sourcemap.c — unit tests of src/sourcemap.c (reference §4 "Source
 * map"): sampling, CPU launch contexts, the nearest context, the temporal
 * fallback, launch contexts, kernel-map entries for empty chains, the payload
 * merge, and the scope predicates (choose_best_scope, is_low_signal_scope,
 * source_scope_priority, the meaningful / fallback predicates).
 *
 * Traces are built in memory as JSON (jb_* helpers), loaded with
 * kd_load_trace_mem and turned into the `all` stage bundle. */
#include "config.h"

#include <fenv.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "kerndiff/sourcemap.h"
#include "suites.h"

/* ---- JSON trace builder ----------------------------------------------------- */

typedef struct {
    char *s;
    size_t n, cap;
    int events;
} jb;

static void jb_printf(jb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(jb *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(w, 0);
        if (b->s && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + (size_t)w + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        ck_assert_ptr_nonnull(b->s);
        b->cap = cap;
    }
}

static void jb_sep(jb *b)
{
    if (!b->s)
        jb_printf(b, "{\"traceEvents\":[");
    if (b->events++)
        jb_printf(b, ",");
}

/* a JSON string literal */
static void jb_str(jb *b, const char *s)
{
    jb_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            jb_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            jb_printf(b, "\\u%04x", (unsigned)*s);
        else
            jb_printf(b, "%c", *s);
    }
    jb_printf(b, "\"");
}

#define NOID (-1L)

/* an OH kernel of pid TP00 on stream 7 */
static void jb_kernel(jb *b, const char *name, double ts, double dur, long ext, long corr)
{
    jb_sep(b);
    jb_printf(b, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":");
    jb_str(b, name);
    jb_printf(b, ",\"pid\":\"TP00\",\"tid\":7,\"ts\":%.17g,\"dur\":%.17g,\"args\":{\"stream\":7", ts, dur);
    if (ext != NOID)
        jb_printf(b, ",\"External id\":%ld", ext);
    if (corr != NOID)
        jb_printf(b, ",\"correlation\":%ld", corr);
    jb_printf(b, "}}");
}

static void jb_cpu_op(jb *b, const char *name, int pid, int tid, double ts, double dur, long ext)
{
    jb_sep(b);
    jb_printf(b, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":");
    jb_str(b, name);
    jb_printf(b, ",\"pid\":%d,\"tid\":%d,\"ts\":%.17g,\"dur\":%.17g,\"args\":{\"External id\":%ld}}",
              pid, tid, ts, dur, ext);
}

static void jb_frame(jb *b, const char *name, int pid, int tid, double ts, double dur)
{
    jb_sep(b);
    jb_printf(b, "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":");
    jb_str(b, name);
    jb_printf(b, ",\"pid\":%d,\"tid\":%d,\"ts\":%.17g,\"dur\":%.17g}", pid, tid, ts, dur);
}

static void jb_launch(jb *b, const char *cat, const char *name, int pid, int tid, double ts,
                      double dur, long corr)
{
    jb_sep(b);
    jb_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    jb_str(b, name);
    jb_printf(b, ",\"pid\":%d,\"tid\":%d,\"ts\":%.17g,\"dur\":%.17g,\"args\":{\"correlation\":%ld}}",
              pid, tid, ts, dur, corr);
}

/* ---- fixture: trace -> all-stage bundle -> source map ----------------------------- */

typedef struct {
    kd_trace *t;
    kd_bundle_map bm;
    kd_source_map sm;
} smfx;

static void smfx_build(smfx *f, jb *b, kd_stage stage, kd_kmap_lookup_fn lookup, void *ctx)
{
    if (!b->s)
        jb_sep(b), b->events = 0;
    jb_printf(b, "]}");
    kd_error err;
    kd_error_clear(&err);
    f->t = kd_load_trace_mem(b->s, b->n, "mem", &err);
    ck_assert_msg(f->t != NULL, "load: %s", err.msg);
    kd_trace *traces[1] = {f->t};
    kd_stage stages[1] = {KD_STAGE_ALL};
    ck_assert_int_eq(kd_build_bundle_map(traces, stages, 1, NULL, &f->bm, &err), KD_OK);
    ck_assert_msg(f->bm.has[KD_STAGE_ALL], "no all-stage bundle");
    ck_assert_int_eq(kd_source_map_build(&f->bm.by_stage[KD_STAGE_ALL], stage, lookup, ctx, &f->sm, &err),
                     KD_OK);
    free(b->s);
    memset(b, 0, sizeof *b);
}

static void smfx_free(smfx *f)
{
    kd_source_map_free(&f->sm);
    kd_bundle_map_free(&f->bm);
    kd_trace_free(f->t);
}

static const kd_source_stats *get(const kd_source_map *sm, const char *name)
{
    const kd_source_stats *s = kd_source_map_get(sm, name);
    ck_assert_msg(s != NULL, "no source-map entry %s", name);
    return s;
}

/* "key=count|key=count" in insertion order; caller frees */
static char *counter_text(const kd_source_map *sm, const kd_counter *c)
{
    jb b = {NULL, 0, 0, 0};
    jb_printf(&b, "%s", "");
    for (uint32_t i = 0; i < c->n; i++)
        jb_printf(&b, "%s%s=%g", i ? "|" : "", kd_str(sm->strings, c->items[i].key), c->items[i].count);
    return b.s;
}

#define ck_counter(sm, c, want)                                                              \
    do {                                                                                     \
        char *got_ = counter_text((sm), (c));                                                \
        ck_assert_msg(strcmp(got_, (want)) == 0, "%s:\n got  %s\n want %s", #c, got_, (want)); \
        free(got_);                                                                          \
    } while (0)

#define ck_best(sm, c, want)                                                                  \
    do {                                                                                      \
        const char *b_ = kd_source_stats_best((sm), (c));                                     \
        const char *w_ = (want);                                                              \
        if (!w_)                                                                              \
            ck_assert_msg(b_ == NULL, "%s best: %s, want NULL", #c, b_);                     \
        else                                                                                  \
            ck_assert_msg(b_ && strcmp(b_, w_) == 0, "%s best: %s, want %s", #c, b_ ? b_ : "NULL", w_); \
    } while (0)

#define BIGFRAME "python/sglang/m.py(1): run"

/* ---- sampling ------------------------------------------------------------------- */

/* expected sample positions of a group of n (n > 16): round(i*(n-1)/15) with
 * Python's round (half to even) of the double quotient */
static size_t ref_pos(size_t i, size_t n)
{
    int old = fegetround();
    fesetround(FE_TONEAREST);
    double q = (double)(i * (n - 1)) / 15.0;
    size_t p = (size_t)nearbyint(q);
    fesetround(old);
    return p;
}

/* Each kernel event has its own External id and a cpu_op "<name>#<j>" (j =
 * list position in its group) under one long Python frame, so the launch-op
 * counter of a name lists exactly its sampled events, in sample order. */
START_TEST(test_sample_positions_and_order)
{
    jb b = {NULL, 0, 0, 0};
    jb_frame(&b, BIGFRAME, 1, 1, 0, 1e7);
    long ext = 1;
    char nm[64];
    /* kA: 17 events, ts ascending; kB: 40 events, ts descending; kC: 3
     * events at one ts (ties: idx order) */
    for (int j = 0; j < 17; j++, ext++) {
        jb_kernel(&b, "kA", 1000 + 10 * j, 1, ext, NOID);
        snprintf(nm, sizeof nm, "kA#%d", j);
        jb_cpu_op(&b, nm, 1, 1, (double)ext, 0.5, ext);
    }
    for (int j = 0; j < 40; j++, ext++) {
        jb_kernel(&b, "kB", 5000 - 10 * j, 1, ext, NOID);
        snprintf(nm, sizeof nm, "kB#%d", j);
        jb_cpu_op(&b, nm, 1, 1, (double)ext, 0.5, ext);
    }
    for (int j = 0; j < 3; j++, ext++) {
        jb_kernel(&b, "kC", 500, 1, ext, NOID);
        snprintf(nm, sizeof nm, "kC#%d", j);
        jb_cpu_op(&b, nm, 1, 1, (double)ext, 0.5, ext);
    }
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);

    /* entries in first-sample order: the sample is sorted by (ts, idx), so
     * kC (ts 500) < kA (1000..) < kB (4610..5000), not by name */
    ck_assert_uint_eq(f.sm.n, 3);
    ck_assert_str_eq(kd_str(f.sm.strings, f.sm.v[0].name), "kC");
    ck_assert_str_eq(kd_str(f.sm.strings, f.sm.v[1].name), "kA");
    ck_assert_str_eq(kd_str(f.sm.strings, f.sm.v[2].name), "kB");

    /* kA: positions round(i*16/15): 0..7, 9..16 (8 skipped), ts order */
    {
        const kd_source_stats *s = get(&f.sm, "kA");
        ck_assert_uint_eq(s->total_count, 16);
        ck_assert_uint_eq(s->mapped_count, 16);
        jb want = {NULL, 0, 0, 0};
        jb_printf(&want, "%s", "");
        for (size_t i = 0; i < 16; i++)
            jb_printf(&want, "%skA#%zu=1", i ? "|" : "", ref_pos(i, 17));
        ck_counter(&f.sm, &s->launch_op, want.s);
        ck_assert(strstr(want.s, "kA#8=") == NULL);
        free(want.s);
        ck_counter(&f.sm, &s->scope, BIGFRAME "=16");
        ck_counter(&f.sm, &s->site_share, BIGFRAME "=16");
        ck_counter(&f.sm, &s->chain, BIGFRAME "=16");
    }
    /* kB: round(i*39/15) = 0,3,5,8,10,13,16,18,21,23,26,29,31,34,36,39; the
     * sample's ts order is the reverse of list order */
    {
        const kd_source_stats *s = get(&f.sm, "kB");
        ck_assert_uint_eq(s->total_count, 16);
        static const size_t lit[16] = {0, 3, 5, 8, 10, 13, 16, 18, 21, 23, 26, 29, 31, 34, 36, 39};
        jb want = {NULL, 0, 0, 0};
        jb_printf(&want, "%s", "");
        for (size_t i = 0; i < 16; i++) {
            ck_assert_uint_eq(ref_pos(i, 40), lit[i]);
            jb_printf(&want, "%skB#%zu=1", i ? "|" : "", ref_pos(15 - i, 40));
        }
        ck_counter(&f.sm, &s->launch_op, want.s);
        free(want.s);
    }
    /* kC: all 3, equal ts in idx order */
    {
        const kd_source_stats *s = get(&f.sm, "kC");
        ck_assert_uint_eq(s->total_count, 3);
        ck_counter(&f.sm, &s->launch_op, "kC#0=1|kC#1=1|kC#2=1");
        ck_assert_double_eq(kd_source_stats_mapping_ratio(s), 1.0);
    }
    smfx_free(&f);
}
END_TEST

START_TEST(test_sample_positions_many_sizes)
{
    static const size_t sizes[] = {16, 18, 23, 31, 46, 61, 100, 137};
    jb b = {NULL, 0, 0, 0};
    jb_frame(&b, BIGFRAME, 1, 1, 0, 1e7);
    long ext = 1;
    char nm[64], op[160];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        snprintf(nm, sizeof nm, "n%03zu", sizes[s]);
        for (size_t j = 0; j < sizes[s]; j++, ext++) {
            jb_kernel(&b, nm, (double)(100000 * (s + 1) + j), 1, ext, NOID);
            snprintf(op, sizeof op, "%s#%zu", nm, j);
            jb_cpu_op(&b, op, 1, 1, (double)ext, 0.5, ext);
        }
    }
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        snprintf(nm, sizeof nm, "n%03zu", n);
        const kd_source_stats *st = get(&f.sm, nm);
        ck_assert_uint_eq(st->total_count, 16);
        jb want = {NULL, 0, 0, 0};
        jb_printf(&want, "%s", "");
        for (size_t i = 0; i < 16; i++)
            jb_printf(&want, "%s%s#%zu=1", i ? "|" : "", nm, n <= 16 ? i : ref_pos(i, n));
        ck_counter(&f.sm, &st->launch_op, want.s);
        free(want.s);
    }
    smfx_free(&f);
}
END_TEST

START_TEST(test_sample_list_order_not_ts)
{
    /* positions index the group in list (trace) order, whatever the ts */
    jb b = {NULL, 0, 0, 0};
    jb_frame(&b, BIGFRAME, 1, 1, 0, 1e7);
    char op[32];
    static const int ts[17] = {50, 10, 70, 30, 90, 20, 60, 80, 5, 40, 15, 65, 35, 85, 25, 75, 45};
    for (int j = 0; j < 17; j++) {
        jb_kernel(&b, "kP", ts[j], 1, j + 1, NOID);
        snprintf(op, sizeof op, "kP#%d", j);
        jb_cpu_op(&b, op, 1, 1, j + 1, 0.5, j + 1);
    }
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    /* list position 8 (ts 5) is the one left out; the rest in ts order */
    const kd_source_stats *s = get(&f.sm, "kP");
    ck_counter(&f.sm, &s->launch_op,
               "kP#1=1|kP#10=1|kP#5=1|kP#14=1|kP#3=1|kP#12=1|kP#9=1|kP#16=1|kP#0=1|kP#6=1|kP#11=1|"
               "kP#2=1|kP#15=1|kP#7=1|kP#13=1|kP#4=1");
    smfx_free(&f);
}
END_TEST

/* ---- CPU launch contexts ---------------------------------------------------------- */

START_TEST(test_cpu_context_active_frames)
{
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kc", 1000, 5, 1, NOID);
    /* frames of thread (1,1); F2 is listed before F3 but starts later */
    jb_frame(&b, "/home/u/python/sglang/a.py(1): outer", 1, 1, 0, 200);
    jb_frame(&b, "threading.py(1): run", 1, 1, 1, 300);          /* fallback only */
    jb_frame(&b, "python/sglang/d.py(4): before", 1, 1, 10, 20);  /* ended at 30 */
    jb_frame(&b, "python/sglang/b.py(2): start_at", 1, 1, 100, 50); /* starts at the op */
    jb_frame(&b, "python/sglang/c.py(3): end_at", 1, 1, 50, 50);    /* ends at the op */
    jb_frame(&b, "<built-in method mm>", 1, 1, 90, 20);           /* neither: dropped */
    jb_frame(&b, "python/sglang/e.py(5): after", 1, 1, 100.5, 1);
    jb_frame(&b, "python/sglang/z.py(9): other_thread", 1, 2, 0, 1000);
    jb_frame(&b, "python/sglang/y.py(9): zero_dur", 1, 1, 50, 0);
    jb_cpu_op(&b, "aten::mm", 1, 1, 100, 3, 1);
    /* another External id's op on the same thread is not this kernel's */
    jb_cpu_op(&b, "aten::other", 1, 1, 1000, 3, 2);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kc");
    ck_assert_uint_eq(s->total_count, 1);
    ck_assert_uint_eq(s->mapped_count, 1);
    /* chain in activation order: outer (0), end_at (50), start_at (100);
     * best = the last (python/sglang 50 + index 2) */
    ck_counter(&f.sm, &s->chain,
               "python/sglang/a.py(1): outer -> python/sglang/c.py(3): end_at -> "
               "python/sglang/b.py(2): start_at=1");
    ck_counter(&f.sm, &s->scope, "python/sglang/b.py(2): start_at=1");
    ck_counter(&f.sm, &s->site_share, "python/sglang/b.py(2): start_at=1");
    ck_counter(&f.sm, &s->launch_op, "aten::mm=1");
    ck_best(&f.sm, &s->scope, "python/sglang/b.py(2): start_at");
    ck_best(&f.sm, &s->chain,
            "python/sglang/a.py(1): outer -> python/sglang/c.py(3): end_at -> "
            "python/sglang/b.py(2): start_at");
    ck_best(&f.sm, &s->launch_op, "aten::mm");
    smfx_free(&f);
}
END_TEST

START_TEST(test_cpu_context_last_six_meaningful)
{
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "k6", 1000, 5, 2, NOID);
    char nm[64];
    for (int i = 0; i < 8; i++) {
        /* f0 and f1 would win choose_best_scope (python/sglang, 50) if they
         * were in the chain */
        snprintf(nm, sizeof nm, "%s/l.py(%d): f%d", i < 2 ? "python/sglang" : "other", i, i);
        jb_frame(&b, nm, 1, 3, 400 + i, 200 - 2 * i);
        if (i == 3)
            jb_frame(&b, "torch/nn/modules/module.py(1): _call_impl", 1, 3, 403.5, 150);
    }
    jb_cpu_op(&b, "  aten::linear\t op ", 1, 3, 500, 1, 2);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "k6");
    /* chain = f2..f7 (ignored-prefix frame not meaningful); key = last 4;
     * best = f7 (index 5 + 10) */
    ck_counter(&f.sm, &s->chain,
               "other/l.py(4): f4 -> other/l.py(5): f5 -> other/l.py(6): f6 -> other/l.py(7): f7=1");
    ck_counter(&f.sm, &s->scope, "other/l.py(7): f7=1");
    /* launch op = short_name(normalize_text(op name), 100) */
    ck_counter(&f.sm, &s->launch_op, "aten::linear op=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_cpu_context_best_scope_not_last)
{
    /* the chain is [vllm/x (46+0), other/y.py (10+1)]: best = the first */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kv", 1000, 5, 4, NOID);
    jb_frame(&b, "/opt/site-packages/vllm/x.py(12): forward", 1, 1, 0, 100);
    jb_frame(&b, "other/y.py(3): helper", 1, 1, 10, 50);
    jb_cpu_op(&b, "aten::add", 1, 1, 20, 1, 4);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kv");
    ck_counter(&f.sm, &s->scope, "vllm/x.py(12): forward=1");
    ck_counter(&f.sm, &s->chain, "vllm/x.py(12): forward -> other/y.py(3): helper=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_cpu_context_fallback_frames)
{
    /* no meaningful frame active: the active fallback frames, in activation
     * order; built-ins are neither */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kfb", 1000, 5, 3, NOID);
    jb_frame(&b, "threading.py(10): run", 1, 4, 0, 200);
    jb_frame(&b, "nn.Module: Linear_0", 1, 4, 50, 100);
    jb_frame(&b, "<built-in method x>", 1, 4, 60, 100);
    jb_frame(&b, "torch/_ops.py(5): __call__", 1, 4, 70, 50);
    jb_frame(&b, "python/sglang/late.py(1): late", 1, 4, 150, 10); /* not active at 100 */
    jb_cpu_op(&b, "aten::fb", 1, 4, 100, 1, 3);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kfb");
    ck_assert_uint_eq(s->mapped_count, 1);
    ck_counter(&f.sm, &s->chain,
               "threading.py(10): run -> nn.Module: Linear_0 -> torch/_ops.py(5): __call__=1");
    /* scores: 0+10, 1+0, 2+10-25 */
    ck_counter(&f.sm, &s->scope, "threading.py(10): run=1");
    ck_counter(&f.sm, &s->launch_op, "aten::fb=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_nearest_cpu_context)
{
    jb b = {NULL, 0, 0, 0};
    jb_frame(&b, BIGFRAME, 1, 1, 0, 1e6);
    jb_frame(&b, "python/sglang/t2.py(2): g", 1, 2, 0, 1e6);
    jb_kernel(&b, "kn5", 1000, 1, 5, NOID);
    jb_kernel(&b, "kn6", 1000, 1, 6, NOID);
    jb_kernel(&b, "kn7", 1000, 1, 7, NOID);
    jb_kernel(&b, "kn8", 1000, 1, 8, NOID);
    jb_kernel(&b, "kn9", 1000, 1, 9, NOID);
    /* ext 5: equal distance 10, the shorter wins */
    jb_cpu_op(&b, "opA", 1, 1, 990, 4, 5);
    jb_cpu_op(&b, "opB", 1, 1, 1010, 2, 5);
    /* ext 6: equal distance and dur: the first (timeline order) */
    jb_cpu_op(&b, "opD", 1, 1, 1010, 3, 6);
    jb_cpu_op(&b, "opC", 1, 1, 990, 3, 6);
    /* ext 7: distance first, whatever the dur */
    jb_cpu_op(&b, "opG", 1, 1, 500, 1, 7);
    jb_cpu_op(&b, "opH", 1, 1, 1001, 100, 7);
    /* ext 8: same ts and dur: trace order */
    jb_cpu_op(&b, "opF", 1, 1, 1005, 3, 8);
    jb_cpu_op(&b, "opE", 1, 1, 1005, 3, 8);
    /* ext 9: the nearest op is on thread (1,2); its chain uses that thread */
    jb_cpu_op(&b, "opJ", 1, 1, 1010, 1, 9);
    jb_cpu_op(&b, "opI", 1, 2, 1003, 1, 9);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    ck_counter(&f.sm, &get(&f.sm, "kn5")->launch_op, "opB=1");
    ck_counter(&f.sm, &get(&f.sm, "kn6")->launch_op, "opC=1");
    ck_counter(&f.sm, &get(&f.sm, "kn7")->launch_op, "opH=1");
    ck_counter(&f.sm, &get(&f.sm, "kn8")->launch_op, "opF=1");
    ck_counter(&f.sm, &get(&f.sm, "kn9")->launch_op, "opI=1");
    ck_counter(&f.sm, &get(&f.sm, "kn9")->scope, "python/sglang/t2.py(2): g=1");
    ck_counter(&f.sm, &get(&f.sm, "kn5")->scope, BIGFRAME "=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_no_sampled_ext_means_no_filter)
{
    /* No sampled kernel has an External id: the target set is empty, which
     * the reference turns into "no filter" (quirk 3). The contexts are then
     * built for every cpu_op but never consulted (a kernel without ext has
     * no context), so the output is the temporal fallback's. */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "ke", 100, 1, NOID, NOID);
    jb_frame(&b, "python/sglang/x.py(1): f", 1, 1, 50, 100);
    jb_cpu_op(&b, "aten::unrelated", 1, 1, 100, 1, 42);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "ke");
    ck_counter(&f.sm, &s->launch_op, "time-window fallback=1");
    ck_counter(&f.sm, &s->scope, "python/sglang/x.py(1): f=1");
    ck_assert_uint_eq(s->mapped_count, 1);
    smfx_free(&f);
}
END_TEST

START_TEST(test_ext_without_context_uses_temporal)
{
    /* an External id with no cpu_op: fallback query, like a None ext */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kq", 100, 1, 77, NOID);
    jb_frame(&b, "python/sglang/q.py(1): q", 3, 3, 90, 20);
    jb_cpu_op(&b, "aten::other_ext", 3, 3, 100, 1, 78);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kq");
    ck_counter(&f.sm, &s->launch_op, "time-window fallback=1");
    ck_counter(&f.sm, &s->scope, "python/sglang/q.py(1): q=1");
    smfx_free(&f);
}
END_TEST

/* ---- temporal fallback -------------------------------------------------------------- */

static void temporal_trace(jb *b)
{
    jb_kernel(b, "kx", 100, 1, NOID, NOID);
    jb_kernel(b, "ky", 300, 1, NOID, NOID);
    jb_frame(b, "python/sglang/t.py(1): outer", 9, 9, 50, 400);
    jb_frame(b, "python/sglang/t.py(1): outer", 8, 1, 60, 100);        /* same name: deduped */
    jb_frame(b, "python/sglang/t.py(2): a", 7, 2, 100.0005, 10);        /* starts within tol */
    jb_frame(b, "python/sglang/t.py(4): pre", 7, 3, 90, 9.9995);        /* ends 99.9995 < first q */
    jb_frame(b, "python/sglang/t.py(3): b", 6, 1, 299, 0.9995);         /* ends 299.9995, tol */
    jb_frame(b, "python/sglang/t.py(5): post", 6, 2, 300.0005, 5);      /* starts > last q */
    jb_frame(b, "threading.py(1): run", 5, 5, 0, 1000);                 /* not meaningful */
    jb_frame(b, "python/sglang/t.py(6): zero", 5, 6, 100, 0);           /* not complete */
    jb_frame(b, "python/sglang/t.py(8): same_ts", 4, 4, 50, 100);
    jb_frame(b, "python/sglang/t.py(7): same_ts", 4, 5, 50, 100);
}

START_TEST(test_temporal_fallback)
{
    jb b = {NULL, 0, 0, 0};
    temporal_trace(&b);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    /* kx at 100: sorted (ts, -dur, name), names deduplicated keeping the first */
    const kd_source_stats *x = get(&f.sm, "kx");
    ck_counter(&f.sm, &x->chain,
               "python/sglang/t.py(1): outer -> python/sglang/t.py(7): same_ts -> "
               "python/sglang/t.py(8): same_ts -> python/sglang/t.py(2): a=1");
    ck_counter(&f.sm, &x->scope, "python/sglang/t.py(2): a=1");
    ck_counter(&f.sm, &x->launch_op, "time-window fallback=1");
    ck_assert_uint_eq(x->mapped_count, 1);
    /* ky at 300: b within the tolerance; post is cut by the pre-filter,
     * which has no tolerance (quirk 5) */
    const kd_source_stats *y = get(&f.sm, "ky");
    ck_counter(&f.sm, &y->chain, "python/sglang/t.py(1): outer -> python/sglang/t.py(3): b=1");
    ck_counter(&f.sm, &y->scope, "python/sglang/t.py(3): b=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_temporal_prefilter_uses_query_range)
{
    /* the same frames with one more query at 2000: "post" (300.0005) now
     * passes the pre-filter and matches 300 through the tolerance */
    jb b = {NULL, 0, 0, 0};
    temporal_trace(&b);
    jb_kernel(&b, "kz", 2000, 1, NOID, NOID);
    /* and with a query before 99.9995, "pre" matches kx at 100 */
    jb_kernel(&b, "kw", 10, 1, NOID, NOID);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *y = get(&f.sm, "ky");
    ck_counter(&f.sm, &y->chain,
               "python/sglang/t.py(1): outer -> python/sglang/t.py(3): b -> python/sglang/t.py(5): post=1");
    const kd_source_stats *x = get(&f.sm, "kx");
    ck_counter(&f.sm, &x->chain,
               "python/sglang/t.py(7): same_ts -> python/sglang/t.py(8): same_ts -> "
               "python/sglang/t.py(4): pre -> python/sglang/t.py(2): a=1");
    /* the full chain has 5 names: outer first; best = a (50 + 4) */
    ck_counter(&f.sm, &x->scope, "python/sglang/t.py(2): a=1");
    /* kz and kw: no frame -> empty chain, no entry lookup: unmapped */
    const kd_source_stats *z = get(&f.sm, "kz");
    ck_assert_uint_eq(z->total_count, 1);
    ck_assert_uint_eq(z->mapped_count, 0);
    ck_assert_uint_eq(z->scope.n, 0);
    ck_assert_uint_eq(z->launch_op.n, 0);
    ck_best(&f.sm, &z->scope, NULL);
    ck_best(&f.sm, &z->launch_op, NULL);
    ck_assert_double_eq(kd_source_stats_mapping_ratio(z), 0.0);
    smfx_free(&f);
}
END_TEST

START_TEST(test_temporal_last_six)
{
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kt", 1000, 1, NOID, NOID);
    char nm[64];
    for (int i = 0; i < 8; i++) {
        snprintf(nm, sizeof nm, "%s/n.py(%d): g%d", i < 2 ? "python/sglang" : "other", i, i);
        jb_frame(&b, nm, 20 + i, 1, 900 + i, 200 - 2 * i);
    }
    /* a repeat of g1's name inside: deduplicated, first position kept */
    jb_frame(&b, "python/sglang/n.py(1): g1", 40, 1, 999, 2);
    /* a repeat of g7's: deduplicated too (g7 stays last) */
    jb_frame(&b, "other/n.py(7): g7", 41, 1, 999.5, 1);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kt");
    /* last 6 = g2..g7; chain key = last 4 */
    ck_counter(&f.sm, &s->chain,
               "other/n.py(4): g4 -> other/n.py(5): g5 -> other/n.py(6): g6 -> other/n.py(7): g7=1");
    /* g0 / g1 (python/sglang) are cut: the best is g7 */
    ck_counter(&f.sm, &s->scope, "other/n.py(7): g7=1");
    smfx_free(&f);
}
END_TEST

/* ---- launch contexts (divergence D1; counted as "time-window fallback") ----------- */

START_TEST(test_launch_context_chain)
{
    jb b = {NULL, 0, 0, 0};
    /* kL: launches of correlation 77 at 50 and 850: the nearest (850) */
    jb_kernel(&b, "kL", 900, 1, NOID, 77);
    jb_launch(&b, "cuda_runtime", "cudaLaunchKernel", 1, 5, 50, 5, 77);
    jb_launch(&b, "cuda_runtime", "cudaLaunchKernel", 1, 5, 850, 5, 77);
    jb_frame(&b, "python/sglang/launch.py(1): far", 1, 5, 45, 10);
    jb_frame(&b, "python/sglang/launch2.py(2): near", 1, 5, 845, 10);
    /* kM: equal distance, the shorter launch (910) */
    jb_kernel(&b, "kM", 900, 1, NOID, 78);
    jb_launch(&b, "cuda_driver", "cuLaunchKernel", 1, 6, 890, 5, 78);
    jb_launch(&b, "cuda_driver", "cuLaunchKernel", 1, 6, 910, 2, 78);
    jb_frame(&b, "python/sglang/la.py(3): at_890", 1, 6, 888, 4);
    jb_frame(&b, "python/sglang/lb.py(4): at_910", 1, 6, 908, 4);
    /* kN: the launch's ts has no frame: the kernel-ts fallback */
    jb_kernel(&b, "kN", 900, 1, NOID, 79);
    jb_launch(&b, "cuda_runtime", "cudaLaunchKernelExC", 1, 7, 3000, 5, 79);
    /* the frame at the kernels' ts (any thread) */
    jb_frame(&b, "python/sglang/k.py(1): at_kernel", 2, 2, 895, 10);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *l = get(&f.sm, "kL");
    ck_counter(&f.sm, &l->scope, "python/sglang/launch2.py(2): near=1");
    ck_counter(&f.sm, &l->chain, "python/sglang/launch2.py(2): near=1");
    /* conformance outputs: the launch op is "time-window fallback", not the
     * launch's name (sourcemap.c header) */
    ck_counter(&f.sm, &l->launch_op, "time-window fallback=1");
    const kd_source_stats *m = get(&f.sm, "kM");
    ck_counter(&f.sm, &m->scope, "python/sglang/lb.py(4): at_910=1");
    const kd_source_stats *n = get(&f.sm, "kN");
    ck_counter(&f.sm, &n->scope, "python/sglang/k.py(1): at_kernel=1");
    ck_counter(&f.sm, &n->launch_op, "time-window fallback=1");
    smfx_free(&f);
}
END_TEST

START_TEST(test_launch_context_exact_bounds)
{
    /* the chain at a launch is ts <= launch.ts <= end, no tolerance: a frame
     * ending 0.0005 before the launch does not count, one ending exactly at
     * it does */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kX", 5000, 1, NOID, 90);
    jb_launch(&b, "cuda_runtime", "cudaLaunchKernel", 1, 5, 100, 5, 90);
    jb_frame(&b, "python/sglang/e.py(1): ends_at", 1, 5, 90, 10);
    jb_frame(&b, "python/sglang/e.py(2): ends_before", 1, 5, 90, 9.9995);
    jb_frame(&b, "python/sglang/e.py(3): starts_after", 1, 5, 100.0005, 1);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    const kd_source_stats *s = get(&f.sm, "kX");
    ck_counter(&f.sm, &s->chain, "python/sglang/e.py(1): ends_at=1");
    smfx_free(&f);
}
END_TEST

/* ---- kernel-map entries for empty chains --------------------------------------------- */

typedef struct {
    kd_interner *strings;
    kd_kernel_entry e[8];
    size_t n;
    kd_site sites[16];
    size_t n_sites;
    int calls;
    kd_stage last_stage;
    char last_name[64];
} kmap_fx;

static kd_sid S(kmap_fx *k, const char *s)
{
    if (!s)
        return 0;
    kd_sid id = kd_intern_cstr(k->strings, s);
    ck_assert_uint_ne(id, 0);
    return id;
}

static kd_kernel_entry *kfx_entry(kmap_fx *k, const char *name, const char *best_location)
{
    ck_assert_uint_lt(k->n, 8);
    kd_kernel_entry *e = &k->e[k->n++];
    memset(e, 0, sizeof *e);
    e->name = S(k, name);
    e->category = "other";
    e->best_location = S(k, best_location);
    e->sites = &k->sites[k->n_sites];
    return e;
}

static void kfx_site(kmap_fx *k, kd_kernel_entry *e, const char *location, const char *display,
                     int64_t launches, const char *top_cpu_op, const char *stack)
{
    ck_assert_uint_lt(k->n_sites, 16);
    ck_assert_ptr_eq(e->sites + e->n_sites, &k->sites[k->n_sites]);
    kd_site *s = &k->sites[k->n_sites++];
    memset(s, 0, sizeof *s);
    s->location = S(k, location);
    s->display_location = S(k, display);
    s->launches = launches;
    s->top_cpu_op = S(k, top_cpu_op);
    s->stack = S(k, stack);
    e->n_sites++;
}

static const kd_kernel_entry *kfx_lookup(void *ctx, kd_stage stage, const char *name,
                                         const kd_interner **strings)
{
    kmap_fx *k = ctx;
    k->calls++;
    k->last_stage = stage;
    snprintf(k->last_name, sizeof k->last_name, "%s", name);
    *strings = k->strings;
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(kd_str(k->strings, k->e[i].name), name) == 0)
            return &k->e[i];
    return NULL;
}

START_TEST(test_kernel_map_entry_empty_chain)
{
    kmap_fx k;
    memset(&k, 0, sizeof k);
    k.strings = kd_interner_new();
    ck_assert_ptr_nonnull(k.strings);
    kd_kernel_entry *e = kfx_entry(&k, "kE", "python/sglang/x.py:10 f");
    kfx_site(&k, e, "abs/x.py:10 f", "python/sglang/x.py:10 f", 3, "aten::mm", NULL);
    kfx_site(&k, e, "python/sglang/y.py:20 g", NULL, 0, "aten::add", NULL);
    kfx_site(&k, e, "python/sglang/v.py:5 v", "unresolved", 5, "aten::z", NULL);
    kfx_site(&k, e, NULL, "  python/sglang/w.py:1 h  ", -2, NULL, NULL);
    kfx_entry(&k, "kF", " python/sglang/f.py:3 f ");
    kd_kernel_entry *g = kfx_entry(&k, "kG", "python/sglang/should_not_appear.py:1 x");
    kfx_site(&k, g, "python/sglang/should_not_appear.py:1 x", NULL, 9, "aten::nope", NULL);
    kd_kernel_entry *h = kfx_entry(&k, "kH", "unresolved");
    kfx_site(&k, h, "python/sglang/h.py:1 h", NULL, 2, "aten::h", NULL);
    kfx_entry(&k, "kI", "   ");

    jb b = {NULL, 0, 0, 0};
    /* kE: a cpu_op context on a thread without frames: empty chain */
    jb_kernel(&b, "kE", 100, 1, 5, NOID);
    jb_cpu_op(&b, "aten::ctx_op", 1, 1, 100, 1, 5);
    /* kF, kH, kI, kJ: no context, no frame near */
    jb_kernel(&b, "kF", 200, 1, NOID, NOID);
    jb_kernel(&b, "kH", 300, 1, NOID, NOID);
    jb_kernel(&b, "kI", 400, 1, NOID, NOID);
    jb_kernel(&b, "kJ", 500, 1, NOID, NOID);
    /* kG: a non-empty chain: the entry is not used */
    jb_kernel(&b, "kG", 5000, 1, 6, NOID);
    jb_cpu_op(&b, "aten::g", 1, 2, 5000, 1, 6);
    jb_frame(&b, "python/sglang/g.py(1): g", 1, 2, 4990, 20);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_DECODE, kfx_lookup, &k);
    ck_assert_int_ge(k.calls, 1);
    ck_assert_int_eq(k.last_stage, KD_STAGE_DECODE);

    const kd_source_stats *se = get(&f.sm, "kE");
    ck_assert_uint_eq(se->total_count, 1);
    ck_assert_uint_eq(se->mapped_count, 1);
    ck_counter(&f.sm, &se->scope, "python/sglang/x.py:10 f=4");
    ck_counter(&f.sm, &se->site_share,
               "python/sglang/x.py:10 f=4|python/sglang/y.py:20 g=1|python/sglang/w.py:1 h=1");
    /* the context's op is dropped; top_cpu_op counts max(1, launches) even
     * when the display location is invalid */
    ck_counter(&f.sm, &se->launch_op, "aten::mm=3|aten::add=1|aten::z=5");
    ck_assert_uint_eq(se->chain.n, 0);
    ck_best(&f.sm, &se->launch_op, "aten::z");
    ck_best(&f.sm, &se->chain, NULL);

    const kd_source_stats *sf = get(&f.sm, "kF");
    ck_assert_uint_eq(sf->mapped_count, 1);
    ck_counter(&f.sm, &sf->scope, "python/sglang/f.py:3 f=1");
    ck_counter(&f.sm, &sf->site_share, "python/sglang/f.py:3 f=1");
    ck_assert_uint_eq(sf->launch_op.n, 0);

    const kd_source_stats *sg = get(&f.sm, "kG");
    ck_counter(&f.sm, &sg->scope, "python/sglang/g.py(1): g=1");
    ck_counter(&f.sm, &sg->launch_op, "aten::g=1");

    /* invalid best_location: nothing counted, sites ignored */
    for (int i = 0; i < 3; i++) {
        const char *nm = i == 0 ? "kH" : i == 1 ? "kI" : "kJ";
        const kd_source_stats *s = get(&f.sm, nm);
        ck_assert_uint_eq(s->total_count, 1);
        ck_assert_uint_eq(s->mapped_count, 0);
        ck_assert_uint_eq(s->scope.n, 0);
        ck_assert_uint_eq(s->site_share.n, 0);
        ck_assert_uint_eq(s->launch_op.n, 0);
    }
    smfx_free(&f);
    kd_interner_free(k.strings);
}
END_TEST

START_TEST(test_kernel_map_entry_empty_display_location)
{
    /* str(site.get("display_location") or site.get("location") or ""): an
     * empty display location falls back to the location */
    kmap_fx k;
    memset(&k, 0, sizeof k);
    k.strings = kd_interner_new();
    kd_kernel_entry *e = kfx_entry(&k, "kK", "python/sglang/k.py:1 k");
    kfx_site(&k, e, "python/sglang/kl.py:2 l", "", 2, NULL, NULL);
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kK", 100, 1, NOID, NOID);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, kfx_lookup, &k);
    const kd_source_stats *s = get(&f.sm, "kK");
    ck_counter(&f.sm, &s->site_share, "python/sglang/k.py:1 k=1|python/sglang/kl.py:2 l=2");
    ck_counter(&f.sm, &s->scope, "python/sglang/k.py:1 k=1|python/sglang/kl.py:2 l=2");
    smfx_free(&f);
    kd_interner_free(k.strings);
}
END_TEST

/* ---- merge_source_map_from_kernel_payload ------------------------------------------------- */

static void empty_map(kd_source_map *sm)
{
    memset(sm, 0, sizeof *sm);
    sm->strings = kd_interner_new();
    ck_assert_ptr_nonnull(sm->strings);
}

static void merge(kd_source_map *sm, kmap_fx *k)
{
    kd_stage_payload p = {k->strings, k->e, k->n};
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_source_map_merge_payload(sm, &p, &err), KD_OK);
}

START_TEST(test_merge_payload)
{
    kmap_fx k;
    memset(&k, 0, sizeof k);
    k.strings = kd_interner_new();
    kd_kernel_entry *a = kfx_entry(&k, "a_sites", "python/sglang/bl.py:1 b");
    kfx_site(&k, a, "python/sglang/l1.py:1 x", "ignored/display.py:1 d", 3, " aten::mm ", " s1 -> s2 ");
    kfx_site(&k, a, NULL, NULL, 0, "", NULL);          /* location -> best_location, n = 1 */
    kfx_site(&k, a, "unresolved", NULL, 2, "aten::u", "st3"); /* not mapped */
    kfx_site(&k, a, "  ", NULL, -5, "  ", "  ");       /* stripped empty: n = 1, not mapped */
    kfx_site(&k, a, "", NULL, 1, NULL, NULL);          /* empty location -> best_location */
    kfx_entry(&k, "b_nosites", " python/sglang/b.py:2 c ");
    kfx_entry(&k, "c_nosites_unresolved", "unresolved");
    kfx_entry(&k, "d_nosites_null", NULL);
    kfx_entry(&k, "d_nosites_blank", "  ");
    kd_kernel_entry *e = kfx_entry(&k, "e_sites_bad_bl", "unresolved");
    kfx_site(&k, e, NULL, NULL, 4, NULL, NULL);

    kd_source_map sm;
    empty_map(&sm);
    merge(&sm, &k);
    ck_assert_uint_eq(sm.n, 3);
    ck_assert_str_eq(kd_str(sm.strings, sm.v[0].name), "a_sites");
    ck_assert_str_eq(kd_str(sm.strings, sm.v[1].name), "b_nosites");
    ck_assert_str_eq(kd_str(sm.strings, sm.v[2].name), "e_sites_bad_bl");
    ck_assert_ptr_null(kd_source_map_get(&sm, "c_nosites_unresolved"));
    ck_assert_ptr_null(kd_source_map_get(&sm, "d_nosites_null"));
    ck_assert_ptr_null(kd_source_map_get(&sm, "d_nosites_blank"));

    const kd_source_stats *sa = get(&sm, "a_sites");
    ck_assert_uint_eq(sa->total_count, 3 + 1 + 2 + 1 + 1);
    ck_assert_uint_eq(sa->mapped_count, 3 + 1 + 1);
    ck_counter(&sm, &sa->scope, "python/sglang/l1.py:1 x=3|python/sglang/bl.py:1 b=2");
    ck_counter(&sm, &sa->site_share, "python/sglang/l1.py:1 x=3|python/sglang/bl.py:1 b=2");
    ck_counter(&sm, &sa->launch_op, "aten::mm=3|aten::u=2");
    ck_counter(&sm, &sa->chain, "s1 -> s2=3|st3=2");
    ck_assert_double_eq(kd_source_stats_mapping_ratio(sa), 5.0 / 8.0);
    ck_best(&sm, &sa->scope, "python/sglang/l1.py:1 x");
    ck_best(&sm, &sa->chain, "s1 -> s2");

    const kd_source_stats *sb = get(&sm, "b_nosites");
    ck_assert_uint_eq(sb->total_count, 1);
    ck_assert_uint_eq(sb->mapped_count, 1);
    ck_counter(&sm, &sb->scope, "python/sglang/b.py:2 c=1");
    ck_counter(&sm, &sb->site_share, "python/sglang/b.py:2 c=1");
    ck_assert_uint_eq(sb->launch_op.n + sb->chain.n, 0);

    const kd_source_stats *se = get(&sm, "e_sites_bad_bl");
    ck_assert_uint_eq(se->total_count, 4);
    ck_assert_uint_eq(se->mapped_count, 0);
    ck_assert_uint_eq(se->scope.n, 0);

    /* merging again adds up, in the same insertion order */
    merge(&sm, &k);
    ck_assert_uint_eq(sm.n, 3);
    sa = get(&sm, "a_sites");
    ck_assert_uint_eq(sa->total_count, 16);
    ck_counter(&sm, &sa->scope, "python/sglang/l1.py:1 x=6|python/sglang/bl.py:1 b=4");

    /* NULL and empty payloads change nothing */
    kd_error err;
    kd_error_clear(&err);
    ck_assert_int_eq(kd_source_map_merge_payload(&sm, NULL, &err), KD_OK);
    kd_stage_payload none = {k.strings, NULL, 0};
    ck_assert_int_eq(kd_source_map_merge_payload(&sm, &none, &err), KD_OK);
    ck_assert_uint_eq(sm.n, 3);
    ck_assert_uint_eq(get(&sm, "a_sites")->total_count, 16);
    kd_source_map_free(&sm);
    kd_interner_free(k.strings);
}
END_TEST

START_TEST(test_merge_payload_into_built_map)
{
    /* a formal payload entry adds to the mapping sample's stats and appends
     * new names after the built ones */
    jb b = {NULL, 0, 0, 0};
    jb_kernel(&b, "kA", 100, 1, 1, NOID);
    jb_cpu_op(&b, "aten::a", 1, 1, 100, 1, 1);
    jb_frame(&b, "python/sglang/a.py(1): a", 1, 1, 90, 20);
    smfx f;
    smfx_build(&f, &b, KD_STAGE_ALL, NULL, NULL);
    kmap_fx k;
    memset(&k, 0, sizeof k);
    k.strings = kd_interner_new();
    kd_kernel_entry *a = kfx_entry(&k, "kA", "python/sglang/a.py:1 a");
    kfx_site(&k, a, "python/sglang/a.py:1 a", NULL, 5, "aten::a", "python/sglang/a.py:1 a");
    kfx_entry(&k, "kNew", "python/sglang/n.py:1 n");
    merge(&f.sm, &k);
    ck_assert_uint_eq(f.sm.n, 2);
    ck_assert_str_eq(kd_str(f.sm.strings, f.sm.v[1].name), "kNew");
    const kd_source_stats *s = get(&f.sm, "kA");
    ck_assert_uint_eq(s->total_count, 6);
    ck_assert_uint_eq(s->mapped_count, 6);
    /* both scope formats in one counter; the KH site outweighs the sample */
    ck_counter(&f.sm, &s->scope, "python/sglang/a.py(1): a=1|python/sglang/a.py:1 a=5");
    ck_counter(&f.sm, &s->launch_op, "aten::a=6");
    ck_best(&f.sm, &s->scope, "python/sglang/a.py:1 a");
    smfx_free(&f);
    kd_interner_free(k.strings);
}
END_TEST

/* ---- choose_best_scope ------------------------------------------------------------------- */

/* Pins the score B of s at index 0: with N fillers of score i - off after it
 * (N = B + off), s still wins (tie: first); one more filler wins. */
static void assert_score_(const char *s, int B, int line)
{
    static const struct {
        const char *text;
        int off;
    } fillers[] = {{"f", 0},
                   {"x __call__", 25},
                   {"utils.py __call__", 40},
                   {"utils.py scheduler_profiler_mixin.py __call__", 60}};
    size_t k = 0;
    while (B + fillers[k].off < 0)
        k++;
    int N = B + fillers[k].off;
    const char *chain[128];
    ck_assert_int_lt(N + 2, 128);
    chain[0] = s;
    for (int i = 1; i <= N + 1; i++)
        chain[i] = fillers[k].text;
    int got = kd_choose_best_scope(chain, (size_t)N + 1);
    ck_assert_msg(got == 0, "line %d: %s with %d fillers: %d (score below %d)", line, s, N, got, B);
    got = kd_choose_best_scope(chain, (size_t)N + 2);
    ck_assert_msg(got == N + 1, "line %d: %s with %d fillers: %d (score above %d)", line, s, N + 1, got, B);
}
#define assert_score(s, B) assert_score_((s), (B), __LINE__)

START_TEST(test_choose_best_scope_bonuses)
{
    assert_score("python/sglang/srt/a.py(1): f", 50); /* first match only: not +10 more */
    assert_score("sglang/srt/a.py(1): f", 48);
    assert_score("vllm/a.py(1): f", 46);
    assert_score("python/tokenspeed/a.py(1): f", 45);
    assert_score("tokenspeed/a.py(1): f", 45);
    assert_score("tensorrt_llm/a.py(1): f", 44);
    assert_score("sgl_kernel/a.py(1): f", 30);
    assert_score("other/a.py(1): f", 10);
    assert_score("python/sglang/no_line", 50);
    assert_score("nn.Module: Linear", 0);
    assert_score("plain", 0);
    /* prefixes are case-sensitive and tested on the string as given */
    assert_score("Python/SGLang/a.py(1): f", 10);
    assert_score("/abs/python/sglang/a.py(1): f", 10);
    /* KH-format scopes get the prefix bonus, no ".py(" */
    assert_score("python/sglang/srt/a.py:12 forward", 50);
    assert_score("other/a.py:12 forward", 0);
}
END_TEST

START_TEST(test_choose_best_scope_penalties)
{
    /* utils.py + __call__: -15, and __call__ is low-signal: -25 */
    assert_score("python/sglang/utils.py(3): __call__", 10);
    /* low-signal lowercases, the utils test does not */
    assert_score("python/sglang/utils.py(3): __CALL__", 25);
    assert_score("python/sglang/scheduler_profiler_mixin.py(5): run", 30);
    assert_score("python/sglang/a.py(1): __torch_function__", 25);
    assert_score("python/sglang/a.py(1): __torch_dispatch__", 25);
    assert_score("python/sglang/a.py(1): _wrapped_call_impl", 25);
    assert_score("vllm/model_executor/parameter.py(3): load", 21);
    assert_score("vllm/model_executor/cuda_graph_runner.py:12 capture", 21);
    /* they add up */
    assert_score("python/sglang/utils.py(1): scheduler_profiler_mixin.py __call__", -10);
    assert_score("other/utils.py(1): __call__", -30);
    assert_score("x/scheduler_profiler_mixin.py(1): __call__", -35);
    assert_score("__call__", -25);
}
END_TEST

START_TEST(test_choose_best_scope_ties_and_index)
{
    ck_assert_int_eq(kd_choose_best_scope(NULL, 0), -1);
    const char *one[] = {"anything"};
    ck_assert_int_eq(kd_choose_best_scope(one, 1), 0);
    /* the index adds: the later of two equal bonuses */
    const char *two[] = {"vllm/a.py(1): f", "vllm/b.py(2): g"};
    ck_assert_int_eq(kd_choose_best_scope(two, 2), 1);
    /* 50 vs 1 + 48 */
    const char *c3[] = {"python/sglang/a.py(1): f", "sglang/b.py(1): g"};
    ck_assert_int_eq(kd_choose_best_scope(c3, 2), 0);
    /* 48 vs 1 + 46 vs 2 + 45: the first */
    const char *c4[] = {"sglang/b.py(1): g", "vllm/x.py(1): f", "tokenspeed/t.py(1): t"};
    ck_assert_int_eq(kd_choose_best_scope(c4, 3), 0);
    /* 46 vs 1 + 45: a tie, the first */
    const char *c5[] = {"vllm/x.py(1): f", "tokenspeed/t.py(1): t"};
    ck_assert_int_eq(kd_choose_best_scope(c5, 2), 0);
    /* all negative: the maximum still wins */
    const char *c6[] = {"a __call__", "b __call__ utils.py"};
    ck_assert_int_eq(kd_choose_best_scope(c6, 2), 0);
}
END_TEST

/* ---- is_low_signal_scope, source_scope_priority, scope predicates ------------------------ */

START_TEST(test_is_low_signal_scope)
{
    static const char *const yes[] = {
        "a.py(1): __torch_function__",
        "a.py(1): __torch_dispatch__",
        "a.py(1): __call__",
        "a.py(1): _call_impl",
        "a.py(1): _wrapped_call_impl",
        "vllm/model_executor/parameter.py(3): f",
        "vllm/model_executor/parameter.py:3 f",
        "vllm/model_executor/cuda_graph_runner.py(3): f",
        "vllm/model_executor/cuda_graph_runner.py:3 f",
        "vllm/compilation/cuda_graph.py(3): f",
        "vllm/compilation/cuda_graph.py:3 f",
        "tensorrt_llm/pyexecutor/cuda_graph_runner.py(3): f",
        "tensorrt_llm/pyexecutor/cuda_graph_runner.py:3 f",
        "tensorrt_llm/pyexecutor/py_executor.py(3): f",
        "tensorrt_llm/pyexecutor/py_executor.py:3 f",
        "tensorrt_llm/_torch/utils.py(3): f",
        "tensorrt_llm/_torch/utils.py:3 f",
        "torch/fx/graph_module.py(3): f",
        "torch/fx/graph_module.py:3 f",
        "A.PY(1): __CALL__",                       /* lowercased */
        "Torch/FX/Graph_Module.py(7): Forward",
        /* canonicalized first: backslashes become slashes in the path */
        "C:\\x\\vllm\\model_executor\\parameter.py(3): f",
        NULL,
    };
    for (const char *const *p = yes; *p; p++)
        ck_assert_msg(kd_is_low_signal_scope(*p), "%s should be low-signal", *p);
    static const char *const no[] = {
        "", "   ", "python/sglang/srt/layers/linear.py(450): forward", "nn.Module: Linear_0",
        "vllm/model_executor/parameters.py:3 f", "torch/fx/graph_module_x.py:3 f", "__call", NULL,
    };
    for (const char *const *p = no; *p; p++)
        ck_assert_msg(!kd_is_low_signal_scope(*p), "%s should not be low-signal", *p);
}
END_TEST

START_TEST(test_source_scope_priority)
{
    ck_assert_int_eq(kd_source_scope_priority(NULL), 0);
    ck_assert_int_eq(kd_source_scope_priority(""), 0);
    ck_assert_int_eq(kd_source_scope_priority("   "), 0);
    ck_assert_int_eq(kd_source_scope_priority("unmapped"), 0);
    ck_assert_int_eq(kd_source_scope_priority("python/sglang/a.py(1): f"), 300);
    /* canonicalization turns a bare "sglang/" path into "python/sglang/" */
    ck_assert_int_eq(kd_source_scope_priority("sglang/a.py(1): f"), 300);
    ck_assert_int_eq(kd_source_scope_priority("sglang/a.py:1 f"), 290);
    ck_assert_int_eq(kd_source_scope_priority("vllm/a.py(1): f"), 285);
    ck_assert_int_eq(kd_source_scope_priority("python/tokenspeed/a.py(1): f"), 283);
    ck_assert_int_eq(kd_source_scope_priority("tokenspeed/a.py(1): f"), 283);
    ck_assert_int_eq(kd_source_scope_priority("tensorrt_llm/a.py(1): f"), 280);
    ck_assert_int_eq(kd_source_scope_priority("sgl_kernel/a.py(1): f"), 260);
    ck_assert_int_eq(kd_source_scope_priority("other/a.py(1): f"), 120);
    ck_assert_int_eq(kd_source_scope_priority("nn.Module: Linear"), 0);
    ck_assert_int_eq(kd_source_scope_priority("aten::mm"), 0);
    /* low-signal: -80 */
    ck_assert_int_eq(kd_source_scope_priority("python/sglang/a.py(1): __call__"), 220);
    ck_assert_int_eq(kd_source_scope_priority("other/a.py(1): _call_impl"), 40);
    ck_assert_int_eq(kd_source_scope_priority("vllm/model_executor/parameter.py:3 f"), 205);
    /* KH format: the prefix counts, ".py(" does not */
    ck_assert_int_eq(kd_source_scope_priority("python/sglang/a.py:12 forward"), 300);
    ck_assert_int_eq(kd_source_scope_priority("foo/a.py:12 f"), 0);
    /* canonicalized first (repo-relative path) */
    ck_assert_int_eq(kd_source_scope_priority("/root/python/sglang/a.py(1): f"), 300);
    ck_assert_int_eq(kd_source_scope_priority("C:\\x\\sglang\\srt\\a.py(1): f"), 300);
    ck_assert_int_eq(kd_source_scope_priority("/site-packages/vllm/a.py(1): f"), 285);
    ck_assert_int_eq(kd_source_scope_priority("  python/sglang/a.py(1): f  "), 300);
}
END_TEST

START_TEST(test_meaningful_and_fallback_predicates)
{
    /* the documented reconstruction of the seed's truncated predicates */
    ck_assert(kd_is_meaningful_python_scope("python/sglang/a.py(1): f"));
    ck_assert(kd_is_meaningful_python_scope("foo.py(1): f"));
    ck_assert(kd_is_meaningful_python_scope("torch/nn/functional.py(1): linear"));
    ck_assert(!kd_is_meaningful_python_scope(""));
    ck_assert(!kd_is_meaningful_python_scope("<built-in method mm of type object>"));
    ck_assert(!kd_is_meaningful_python_scope("<frozen a.py(1): f>"));
    ck_assert(!kd_is_meaningful_python_scope("nn.Module: Linear_0"));
    ck_assert(!kd_is_meaningful_python_scope("aten::mm"));
    static const char *const ignored[] = {
        "threading.py(1): run", "selectors.py(1): s", "contextlib.py(1): c", "queue.py(1): q",
        "logging/x.py(1): l", "logging/__init__.py(1): l", "socket.py(1): s", "asyncio/x.py(1): a",
        "concurrent/futures/x.py(1): c", "tqdm/x.py(1): t", "uvicorn/x.py(1): u",
        "fastapi/x.py(1): f", "starlette/x.py(1): s", "http/x.py(1): h", "torch/_ops.py(1): o",
        "torch/nn/modules/module.py(1): _call_impl", "torch/utils/_contextlib.py(1): c",
        "torch/autograd/x.py(1): a", "torch/_tensor.py(1): t", "torch/distributed/x.py(1): d",
        "torch/_dynamo/x.py(1): d", "torch/_inductor/x.py(1): i", NULL,
    };
    for (const char *const *p = ignored; *p; p++) {
        ck_assert_msg(!kd_is_meaningful_python_scope(*p), "%s meaningful", *p);
        ck_assert_msg(kd_is_fallback_python_scope(*p), "%s not fallback", *p);
    }
    ck_assert(kd_is_fallback_python_scope("nn.Module: Linear_0"));
    ck_assert(kd_is_fallback_python_scope("python/sglang/a.py(1): f"));
    ck_assert(!kd_is_fallback_python_scope(""));
    ck_assert(!kd_is_fallback_python_scope("<built-in method x>"));
    ck_assert(!kd_is_fallback_python_scope("aten::mm"));
}
END_TEST

Suite *sourcemap_suite(void)
{
    Suite *s = suite_create("sourcemap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sample_positions_and_order);
    tcase_add_test(tc, test_sample_positions_many_sizes);
    tcase_add_test(tc, test_sample_list_order_not_ts);
    tcase_add_test(tc, test_cpu_context_active_frames);
    tcase_add_test(tc, test_cpu_context_last_six_meaningful);
    tcase_add_test(tc, test_cpu_context_best_scope_not_last);
    tcase_add_test(tc, test_cpu_context_fallback_frames);
    tcase_add_test(tc, test_nearest_cpu_context);
    tcase_add_test(tc, test_no_sampled_ext_means_no_filter);
    tcase_add_test(tc, test_ext_without_context_uses_temporal);
    tcase_add_test(tc, test_temporal_fallback);
    tcase_add_test(tc, test_temporal_prefilter_uses_query_range);
    tcase_add_test(tc, test_temporal_last_six);
    tcase_add_test(tc, test_launch_context_chain);
    tcase_add_test(tc, test_launch_context_exact_bounds);
    tcase_add_test(tc, test_kernel_map_entry_empty_chain);
    tcase_add_test(tc, test_kernel_map_entry_empty_display_location);
    tcase_add_test(tc, test_merge_payload);
    tcase_add_test(tc, test_merge_payload_into_built_map);
    tcase_add_test(tc, test_choose_best_scope_bonuses);
    tcase_add_test(tc, test_choose_best_scope_penalties);
    tcase_add_test(tc, test_choose_best_scope_ties_and_index);
    tcase_add_test(tc, test_is_low_signal_scope);
    tcase_add_test(tc, test_source_scope_priority);
    tcase_add_test(tc, test_meaningful_and_fallback_predicates);
    suite_add_tcase(s, tc);
    return s;
}
