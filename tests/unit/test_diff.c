/* test_diff.c — unit tests of src/diff.c: the matcher kinds, one-to-one
 * claiming, priority changes, the gate syntax and verdicts. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerndiff/diff.h"
#include "suites.h"

typedef struct {
    const char *name;
    int stream;
    double ts, dur;
} kspec;

/* A small trace file: kernels on pid "TP00-gpu" and one ProfilerStep. */
static char *write_trace(const kspec *k, size_t n, int steps)
{
    char *path = strdup("/tmp/kd_diff_testXXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"traceEvents\": [", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":\"TP00-gpu\",\"tid\":%d,"
                   "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"stream\":%d}}",
                i ? "," : "", k[i].name, k[i].stream, k[i].ts, k[i].dur, k[i].stream);
    for (int s = 0; s < steps; s++)
        fprintf(f, ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,"
                   "\"tid\":1,\"ts\":%d,\"dur\":1}",
                s, s * 10);
    fputs("]}", f);
    fclose(f);
    return path;
}

static kd_diff run_diff(const char *b, const char *c)
{
    kd_diff_options o;
    memset(&o, 0, sizeof o);
    o.baseline_path = b;
    o.candidate_path = c;
    o.sides.min_share = 1.0;
    o.sequential = true;
    kd_diff d;
    kd_error err;
    kd_error_clear(&err);
    ck_assert_msg(kd_diff_run(&o, &d, &err) == KD_OK, "%s", err.msg);
    return d;
}

static const kd_diff_row *row_named(const kd_diff_stage *s, const char *name)
{
    for (size_t i = 0; i < s->n_rows; i++)
        if (strcmp(s->rows[i].name, name) == 0)
            return &s->rows[i];
    return NULL;
}

#define LONG_A "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GemmShape<128, 128, 64>, cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_64x3_tn_align8_variant_alpha>"
#define LONG_B "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GemmShape<128, 128, 64>, cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_64x3_tn_align8_variant_omega>"

START_TEST(test_match_kinds)
{
    kspec base[] = {
        {"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 50},
        {"void gemm_kernel<float>(int)", 7, 0, 40},
        {"triton_poi_fused_add_0", 7, 40, 10},
        {"elementwise_kernel_old_thing", 7, 50, 10},
        {LONG_A "(Params)", 7, 60, 30},
        {"Memset (Device)", 7, 90, 5},
        {"gone_kernel_xyz", 7, 95, 20},
    };
    kspec cand[] = {
        {"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 30},
        {"void gemm_kernel<float>(int)", 7, 0, 40},
        {"triton_poi_fused_add_0_extra", 7, 40, 10},
        {"my_elementwise_kernel_old_thing_v2", 7, 50, 10},
        {LONG_B "(Params)", 7, 60, 30},
        {"memset_kernel_variant", 7, 90, 5},
        {"brand_new_kernel_q", 7, 95, 20},
    };
    char *b = write_trace(base, 7, 2), *c = write_trace(cand, 7, 2);
    kd_diff d = run_diff(b, c);
    ck_assert_uint_eq(d.n_stages, 1);
    const kd_diff_stage *s = &d.stages[0];
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "void gemm_kernel<float>")), "exact");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "triton_poi_fused_add_0_extra")), "prefix");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "my_elementwise_kernel_old_thing_v2")), "substring");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, LONG_B)), "long-prefix");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "brand_new_kernel_q")), "added");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "gone_kernel_xyz")), "removed");
    const kd_diff_row *m = row_named(s, "memset_kernel_variant");
    ck_assert_str_eq(kd_diff_row_kind(m), "alias");
    ck_assert_str_eq(m->base.name, "Memset (Device)");
    /* rows ordered by |d exposed| descending */
    for (size_t i = 1; i < s->n_rows; i++)
        ck_assert(fabs(s->rows[i - 1].d_exposed_us) >= fabs(s->rows[i].d_exposed_us));
    const kd_diff_row *g = row_named(s, "void gemm_kernel<float>");
    ck_assert(g->d_total_us == 0.0);
    const kd_diff_row *gone = row_named(s, "gone_kernel_xyz");
    ck_assert(isnan(gone->pct_total) || gone->pct_total == -100.0);
    kd_diff_free(&d);
    unlink(b);
    unlink(c);
    free(b);
    free(c);
}
END_TEST

/* two candidate kernels compete for one baseline kernel: the one with more
 * total time claims it, the other is added */
START_TEST(test_one_to_one_claim)
{
    kspec base[] = {{"attention_fwd_kernel", 7, 0, 50}};
    kspec cand[] = {{"attention_fwd_kernel_small", 7, 0, 10}, {"attention_fwd_kernel_big", 7, 10, 60}};
    char *b = write_trace(base, 1, 1), *c = write_trace(cand, 2, 1);
    kd_diff d = run_diff(b, c);
    const kd_diff_stage *s = &d.stages[0];
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "attention_fwd_kernel_big")), "prefix");
    ck_assert_str_eq(kd_diff_row_kind(row_named(s, "attention_fwd_kernel_small")), "added");
    ck_assert_uint_eq(s->n_rows, 2);
    kd_diff_free(&d);
    unlink(b);
    unlink(c);
    free(b);
    free(c);
}
END_TEST

START_TEST(test_identical_and_priority)
{
    kspec k[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 50}, {"void gemm_kernel<float>(int)", 7, 60, 40}};
    char *b = write_trace(k, 2, 3), *c = write_trace(k, 2, 3);
    kd_diff d = run_diff(b, c);
    for (size_t i = 0; i < d.stages[0].n_rows; i++) {
        const kd_diff_row *r = &d.stages[0].rows[i];
        ck_assert_str_eq(r->priority_change, "=");
        ck_assert(r->d_exposed_us == 0.0 && r->d_total_us == 0.0);
        ck_assert_str_eq(kd_diff_row_kind(r), "exact");
    }
    /* two files, the same bytes: said, and a gate refuses to judge */
    ck_assert_str_eq(d.identical, "the same bytes");
    ck_assert_uint_eq(d.n_warnings, 1);
    ck_assert(strstr(d.warnings[0], "the same bytes") != NULL);
    kd_gate fail;
    char msg[256];
    ck_assert(kd_gate_parse("5%", &fail, msg, sizeof msg));
    kd_gate none = {false, -1, 0};
    kd_gate_result g;
    kd_diff_gate(&d, &fail, &none, &g);
    ck_assert_int_eq(g.verdict, KD_VERDICT_UNJUDGED);
    ck_assert(strstr(g.line, "ERROR") && strstr(g.line, "--allow-identical"));
    kd_gate_result_free(&g);
    d.allow_identical = true; /* --allow-identical */
    kd_diff_gate(&d, &fail, &none, &g);
    ck_assert_int_eq(g.verdict, KD_VERDICT_PASS);
    ck_assert(strstr(g.line, "PASS") != NULL);
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    unlink(b);
    unlink(c);
    free(b);
    free(c);
}
END_TEST

START_TEST(test_gate_verdicts)
{
    /* exposed NCCL 50 -> 80 us: +60% and +30 us */
    kspec base[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 50}, {"void gemm_kernel<float>(int)", 7, 60, 40}};
    kspec cand[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 80}, {"void gemm_kernel<float>(int)", 7, 90, 40}};
    char *b = write_trace(base, 2, 1), *c = write_trace(cand, 2, 1);
    kd_diff d = run_diff(b, c);
    char msg[256];
    kd_gate fail, warn, none = {false, -1, 0};
    struct { const char *spec; kd_verdict as_fail; } cases[] = {
        {"5%", KD_VERDICT_FAIL}, {"5%,20us", KD_VERDICT_FAIL}, {"5%,40us", KD_VERDICT_PASS},
        {"70%", KD_VERDICT_PASS}, {"25us", KD_VERDICT_FAIL}, {"30us", KD_VERDICT_PASS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert(kd_gate_parse(cases[i].spec, &fail, msg, sizeof msg));
        kd_gate_result g;
        kd_diff_gate(&d, &fail, &none, &g);
        ck_assert_msg(g.verdict == cases[i].as_fail, "%s: %s", cases[i].spec, g.line);
        kd_gate_result_free(&g);
    }
    ck_assert(kd_gate_parse("10%", &warn, msg, sizeof msg));
    kd_gate_result g;
    kd_diff_gate(&d, &none, &warn, &g);
    ck_assert_int_eq(g.verdict, KD_VERDICT_WARN);
    ck_assert(strstr(g.line, "+30.0 us") != NULL);
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    /* the improvement direction never fails */
    d = run_diff(c, b);
    ck_assert(kd_gate_parse("0%", &fail, msg, sizeof msg));
    kd_diff_gate(&d, &fail, &none, &g);
    ck_assert_int_eq(g.verdict, KD_VERDICT_PASS);
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    unlink(b);
    unlink(c);
    free(b);
    free(c);
}
END_TEST

START_TEST(test_missing_communication)
{
    kspec base[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 50}, {"void gemm_kernel<float>(int)", 7, 60, 40}};
    kspec cand[] = {{"void gemm_kernel<float>(int)", 7, 60, 40}};
    char *b = write_trace(base, 2, 1), *c = write_trace(cand, 1, 1);
    kd_diff d = run_diff(b, c);
    ck_assert_uint_ge(d.n_warnings, 1);
    ck_assert(strstr(d.warnings[d.n_warnings - 1], "no communication kernels") != NULL);
    char msg[256];
    kd_gate fail, none = {false, -1, 0};
    ck_assert(kd_gate_parse("5%", &fail, msg, sizeof msg));
    kd_gate_result g;
    kd_diff_gate(&d, &fail, &none, &g);
    ck_assert_int_eq(g.verdict, KD_VERDICT_FAIL); /* an untrustworthy gate fails */
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    unlink(b);
    unlink(c);
    free(b);
    free(c);
}
END_TEST

START_TEST(test_gate_syntax)
{
    kd_gate g;
    char msg[256];
    ck_assert(kd_gate_parse("5%", &g, msg, sizeof msg) && g.rel_pct == 5 && g.abs_us == 0);
    ck_assert(kd_gate_parse("5%,200us", &g, msg, sizeof msg) && g.rel_pct == 5 && g.abs_us == 200);
    ck_assert(kd_gate_parse("200us", &g, msg, sizeof msg) && g.rel_pct < 0 && g.abs_us == 200);
    ck_assert(kd_gate_parse("2.5%", &g, msg, sizeof msg) && g.rel_pct == 2.5);
    const char *bad[] = {"", "5", "%", "5%,", "5%,200", "200us,5%", "-5%", "5%%", "abc", "5%,200us,1%", "nan%"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!kd_gate_parse(bad[i], &g, msg, sizeof msg), "'%s' accepted", bad[i]);
    ck_assert(strstr(msg, "expected") != NULL);
}
END_TEST

START_TEST(test_normalize_steps)
{
    kspec k[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 60}};
    char *b = write_trace(k, 1, 2), *c = write_trace(k, 1, 3);
    kd_diff_options o;
    memset(&o, 0, sizeof o);
    o.baseline_path = b;
    o.candidate_path = c;
    o.normalize_steps = true;
    o.sequential = true;
    kd_diff d;
    kd_error err;
    ck_assert(kd_diff_run(&o, &d, &err) == KD_OK);
    const kd_diff_row *r = &d.stages[0].rows[0];
    ck_assert(fabs(r->base.total_us - 30.0) < 1e-9 && fabs(r->cand.total_us - 20.0) < 1e-9);
    /* the verdict line speaks per step too, threshold included */
    kd_gate fail;
    char msg[256];
    ck_assert(kd_gate_parse("5%,1us", &fail, msg, sizeof msg));
    kd_gate none_set = {0};
    kd_gate_result g;
    kd_diff_gate(&d, &fail, &none_set, &g);
    ck_assert_msg(strstr(g.line, "within 5% and 1 us/step: all 30.0 -> 20.0 us/step (-10.0 us/step, -33.3%)"),
                  "%s", g.line);
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    o.normalize_steps = false; /* different step counts: a warning */
    ck_assert(kd_diff_run(&o, &d, &err) == KD_OK);
    ck_assert(d.n_warnings >= 1 && strstr(d.warnings[0], "ProfilerStep") != NULL);
    kd_diff_gate(&d, &fail, &none_set, &g);
    ck_assert_msg(strstr(g.line, "all 60.0 us (unchanged)"), "%s", g.line);
    kd_gate_result_free(&g);
    kd_diff_free(&d);
    char *none = write_trace(k, 1, 0);
    o.candidate_path = none;
    o.normalize_steps = true;
    ck_assert(kd_diff_run(&o, &d, &err) == KD_EINPUT);
    ck_assert(strstr(err.msg, none) != NULL);
    unlink(b);
    unlink(c);
    unlink(none);
    free(b);
    free(c);
    free(none);
}
END_TEST

/* true when p points into the diff's own string arena */
static bool owned(const kd_diff *d, const char *p)
{
    kd_sid id = kd_intern_find(d->strings, p, strlen(p));
    return !*p || (id && kd_str(d->strings, id) == p);
}

/* architecture: the diff owns its data. kd_diff_run frees both triages
 * before it returns; every string of the result lies in the diff's arena,
 * and the result stays readable after its trace files are gone (under
 * ASan a borrowed pointer would be a use after free). */
START_TEST(test_diff_owns_its_data)
{
    kspec base[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 50}, {"void gemm_kernel<float>(int)", 7, 0, 40},
                    {"gone_kernel_xyz", 7, 40, 20}};
    kspec cand[] = {{"ncclDevKernel_AllReduce_Sum_bf16", 8, 0, 30}, {"void gemm_kernel<float>(int)", 7, 0, 40},
                    {"brand_new_kernel_q", 7, 40, 20}};
    char *b = write_trace(base, 3, 2), *c = write_trace(cand, 3, 2);
    kd_diff d = run_diff(b, c);
    unlink(b);
    unlink(c);
    ck_assert(owned(&d, d.base_in.path) && owned(&d, d.cand_in.path));
    ck_assert_uint_eq(d.base_in.n_files, 1);
    ck_assert(owned(&d, d.base_in.files[0].path) && strcmp(d.base_in.files[0].path, b) == 0);
    ck_assert_uint_eq(d.n_stages, 1);
    const kd_diff_stage *s = &d.stages[0];
    ck_assert(owned(&d, s->base_pid) && strcmp(s->cand_pid, "TP00-gpu") == 0);
    ck_assert_uint_eq(s->n_rows, 4);
    for (size_t i = 0; i < s->n_rows; i++) {
        const kd_diff_row *r = &s->rows[i];
        ck_assert(owned(&d, r->name));
        for (int k = 0; k < 2; k++) {
            const kd_diff_side *x = k ? &r->cand : &r->base;
            if (!x->present)
                continue;
            ck_assert(owned(&d, x->name) && owned(&d, x->python_scope));
            ck_assert(!x->priority || owned(&d, x->priority));
            ck_assert(!x->recommendation || owned(&d, x->recommendation));
        }
    }
    ck_assert_ptr_nonnull(row_named(s, "brand_new_kernel_q"));
    kd_diff_free(&d);
    free(b);
    free(c);
}
END_TEST

/* kd_diff_row_finish: the deltas, relative changes and priority change */
START_TEST(test_row_finish)
{
    kd_diff_row r;
    memset(&r, 0, sizeof r);
    r.base = (kd_diff_side){.present = true, .name = "k", .total_us = 10, .exposed_us = 4, .priority = "P2"};
    r.cand = (kd_diff_side){.present = true, .name = "k2", .total_us = 15, .exposed_us = 0, .priority = "P1"};
    kd_diff_row_finish(&r, KD_MATCH_PREFIX);
    ck_assert_str_eq(r.name, "k2");
    ck_assert(r.match == KD_MATCH_PREFIX);
    ck_assert(fabs(r.d_total_us - 5) < 1e-12 && fabs(r.pct_total - 50) < 1e-12);
    ck_assert(fabs(r.pct_exposed + 100) < 1e-12 && isnan(r.pct_hidden));
    ck_assert_str_eq(r.priority_change, "P2->P1");
    r.cand.present = false;
    r.cand.priority = NULL;
    kd_diff_row_finish(&r, KD_MATCH_NONE);
    ck_assert_str_eq(r.name, "k");
    ck_assert_str_eq(r.priority_change, "P2->none");
}
END_TEST

Suite *diff_suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_match_kinds);
    tcase_add_test(tc, test_one_to_one_claim);
    tcase_add_test(tc, test_identical_and_priority);
    tcase_add_test(tc, test_gate_verdicts);
    tcase_add_test(tc, test_missing_communication);
    tcase_add_test(tc, test_gate_syntax);
    tcase_add_test(tc, test_normalize_steps);
    tcase_add_test(tc, test_diff_owns_its_data);
    tcase_add_test(tc, test_row_finish);
    suite_add_tcase(s, tc);
    return s;
}
