/* test_match.c — unit tests of src/match.c (match.h): the keys of the
 * renumbered, template and retargeted steps; one pairing per kind with its
 * evidence; pairing inside a key group by evidence (launch order, launch
 * counts), never by the suffix number; the replaced step's neighbours and
 * launch ratio; rules before exact names; one-to-one and independence of the
 * input order on a generated set; empty sides; out of memory. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/failalloc.h"
#include "kerndiff/match.h"
#include "suites.h"

/* ---- helpers -------------------------------------------------------------- */

/* A compute kernel with no scope or launch op; total time = launches. */
static kd_match_item it(const char *name, uint64_t launches, double first_ts)
{
    return (kd_match_item){name, KD_CAT_COMPUTE, launches, (double)launches, "", "", first_ts};
}

/* The invariants of every matching: base_of and cand_of are inverse, in
 * range, no baseline kernel used twice, KD_MATCH_NONE exactly for the
 * unmatched candidates, evidence NULL for exact and unmatched, set for every
 * other kind. */
static void check_consistent_ev(const kd_matching *m, size_t nb, size_t nc, bool want_evidence)
{
    size_t matched_c = 0, matched_b = 0;
    for (size_t ci = 0; ci < nc; ci++) {
        long bi = m->base_of[ci];
        ck_assert_msg(bi >= -1 && bi < (long)nb, "base_of[%zu] = %ld out of range", ci, bi);
        if (bi < 0) {
            ck_assert_msg(m->kind[ci] == KD_MATCH_NONE, "unmatched candidate %zu has kind %s", ci,
                          kd_match_kind_name(m->kind[ci]));
            ck_assert_msg(m->evidence[ci] == NULL, "unmatched candidate %zu has evidence", ci);
            continue;
        }
        matched_c++;
        ck_assert_msg(m->cand_of[bi] == (long)ci, "base_of[%zu] = %ld but cand_of[%ld] = %ld", ci, bi, bi,
                      m->cand_of[bi]);
        ck_assert_msg(m->kind[ci] != KD_MATCH_NONE, "matched candidate %zu has kind none", ci);
        if (m->kind[ci] == KD_MATCH_EXACT)
            ck_assert_msg(m->evidence[ci] == NULL, "exact candidate %zu has evidence '%s'", ci, m->evidence[ci]);
        else if (want_evidence)
            ck_assert_msg(m->evidence[ci] && *m->evidence[ci], "candidate %zu (%s) without evidence", ci,
                          kd_match_kind_name(m->kind[ci]));
    }
    for (size_t bi = 0; bi < nb; bi++) {
        long ci = m->cand_of[bi];
        ck_assert_msg(ci >= -1 && ci < (long)nc, "cand_of[%zu] = %ld out of range", bi, ci);
        if (ci >= 0) {
            matched_b++;
            ck_assert_msg(m->base_of[ci] == (long)bi, "cand_of[%zu] = %ld but base_of[%ld] = %ld", bi, ci, ci,
                          m->base_of[ci]);
        }
    }
    ck_assert_uint_eq(matched_b, matched_c); /* so no baseline kernel is used twice */
}

static void check_consistent(const kd_matching *m, size_t nb, size_t nc) { check_consistent_ev(m, nb, nc, true); }

static void run(const kd_match_item *b, size_t nb, const kd_match_item *c, size_t nc, const kd_match_options *opt,
                kd_matching *m)
{
    kd_error err = {0};
    kd_status st = kd_match_kernels(b, nb, c, nc, opt, m, &err);
    ck_assert_msg(st == KD_OK, "kd_match_kernels: %s", err.msg);
    check_consistent(m, nb, nc);
}

/* candidate ci is paired with baseline bi by kind */
#define ck_pair(m, b, c, bi, ci, want_kind)                                                              \
    do {                                                                                               \
        long got_ = (m)->base_of[(ci)];                                                                \
        ck_assert_msg(got_ == (long)(bi) && (m)->kind[(ci)] == (want_kind),                            \
                      "candidate %s: got baseline %s (%s), want %s (%s)", (c)[(ci)].name,              \
                      got_ >= 0 ? (b)[got_].name : "none", kd_match_kind_name((m)->kind[(ci)]),        \
                      (b)[(bi)].name, kd_match_kind_name(want_kind));                                  \
    } while (0)

/* candidate ci is unmatched (added) */
#define ck_added(m, c, ci)                                                                               \
    ck_assert_msg((m)->base_of[(ci)] == -1 && (m)->kind[(ci)] == KD_MATCH_NONE,                        \
                  "candidate %s: paired with baseline %ld (%s), want added", (c)[(ci)].name,           \
                  (m)->base_of[(ci)], kd_match_kind_name((m)->kind[(ci)]))

#define ck_evidence_has(m, ci, needle)                                                                   \
    ck_assert_msg((m)->evidence[(ci)] && strstr((m)->evidence[(ci)], (needle)),                        \
                  "evidence of candidate %zu: '%s', want it to contain '%s'", (size_t)(ci),            \
                  (m)->evidence[(ci)] ? (m)->evidence[(ci)] : "(null)", (needle))

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the keys ---------------------------------------------------------------- */

static void ck_key(char *(*fn)(const char *), const char *name, const char *want)
{
    char *k = fn(name);
    if (!want)
        ck_assert_msg(k == NULL, "key of '%s': got '%s', want NULL", name, k);
    else
        ck_assert_msg(k && strcmp(k, want) == 0, "key of '%s': got '%s', want '%s'", name, k ? k : "(null)",
                      want);
    free(k);
}

static void ck_same_key(char *(*fn)(const char *), const char *a, const char *b, bool same)
{
    char *ka = fn(a), *kb = fn(b);
    ck_assert_msg(ka && kb, "keys of '%s' / '%s': NULL", a, b);
    ck_assert_msg((strcmp(ka, kb) == 0) == same, "keys '%s' / '%s' should be %s", ka, kb,
                  same ? "equal" : "different");
    free(ka);
    free(kb);
}

START_TEST(test_renumber_key)
{
    ck_key(kd_match_renumber_key, "triton_poi_fused_addmm_gelu_view_17", "triton_poi_fused_addmm_gelu_view");
    ck_key(kd_match_renumber_key, "triton_red_fused_sum_0", "triton_red_fused_sum");
    ck_key(kd_match_renumber_key, "triton_per_fused_native_layer_norm_123", "triton_per_fused_native_layer_norm");
    ck_key(kd_match_renumber_key, "triton_tem_fused_mm_3", "triton_tem_fused_mm");
    /* not generated: no triton_{poi,red,per,tem}_ */
    ck_key(kd_match_renumber_key, "gemm_17", NULL);
    ck_key(kd_match_renumber_key, "triton_xyz_fused_add_4", NULL);
    ck_key(kd_match_renumber_key, "my_triton_poi_fused_add_4", NULL);
    /* generated but without a number, or a number not after '_' */
    ck_key(kd_match_renumber_key, "triton_poi_x", NULL);
    ck_key(kd_match_renumber_key, "triton_poi_fused_add17", NULL);
    /* the same stem under two numbers: one key */
    ck_same_key(kd_match_renumber_key, "triton_poi_fused_addmm_gelu_view_21", "triton_poi_fused_addmm_gelu_view_22",
                true);
    ck_same_key(kd_match_renumber_key, "triton_poi_fused_addmm_gelu_view_21", "triton_red_fused_addmm_gelu_view_21",
                false);
}
END_TEST

START_TEST(test_template_key)
{
    const char *se2 = "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1"
                      "<float, float, 2ul>(int, float*)";
    const char *se5 = "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1"
                      "<float, float, 5ul>(int, float*)";
    ck_same_key(kd_match_template_key, se2, se5, true);
    ck_key(kd_match_template_key, se2,
           "split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1<T,T,T>");
    /* the functor stays: abs and fill are different kernels */
    const char *abs8 = "void at::native::vectorized_elementwise_kernel<8, at::native::AbsFunctor<c10::BFloat16>, "
                       "at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<c10::BFloat16>, "
                       "at::detail::Array<char*, 2>)";
    const char *fill8 = "void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, "
                        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, "
                        "at::detail::Array<char*, 1>)";
    const char *abs4 = "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
                       "at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<float>, "
                       "at::detail::Array<char*, 2>)";
    ck_same_key(kd_match_template_key, abs8, fill8, false);
    /* only sizes and scalar types differ: one key */
    ck_same_key(kd_match_template_key, abs8, abs4, true);
    /* no template arguments and no parameters: the step does not apply */
    ck_key(kd_match_template_key, "ampere_sgemm_128x128_tn", NULL);
    ck_key(kd_match_template_key, "void plain_kernel", NULL);
    /* parameters only: dropped */
    ck_key(kd_match_template_key, "void my_kernel(int, float*)", "my_kernel");
}
END_TEST

START_TEST(test_retarget_key)
{
    ck_same_key(kd_match_retarget_key, "ampere_sgemm_128x128_tn", "volta_sgemm_128x128_tn", true);
    ck_key(kd_match_retarget_key, "ampere_sgemm_128x128_tn", "ARCH_sgemm_128x128_tn");
    ck_same_key(kd_match_retarget_key, "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn",
                "hopper_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", true);
    ck_same_key(kd_match_retarget_key, "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4",
                "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4", true);
    ck_key(kd_match_retarget_key, "sm90a_xmma_gemm_x", "ARCH_xmma_gemm_x");
    ck_key(kd_match_retarget_key, "ck_gemm_gfx942_kernel", "ck_gemm_ARCH_kernel");
    /* words only at word boundaries */
    ck_key(kd_match_retarget_key, "amperefoo_x", NULL);
    ck_key(kd_match_retarget_key, "xampere_y", NULL);
    ck_key(kd_match_retarget_key, "sm8_gemm", NULL);
    ck_key(kd_match_retarget_key, "plain_gemm_kernel", NULL);
    /* different kernels stay apart */
    ck_same_key(kd_match_retarget_key, "ampere_sgemm_128x128_tn", "volta_sgemm_128x64_tn", false);
}
END_TEST

/* ---- one test per kind --------------------------------------------------------- */

START_TEST(test_kind_exact)
{
    const kd_match_item b[] = {it("gemm_kernel", 10, 1), it("softmax_kernel", 5, 2)};
    const kd_match_item c[] = {it("softmax_kernel", 7, 1), it("gemm_kernel", 10, 2)};
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_EXACT);
    ck_pair(&m, b, c, 1, 0, KD_MATCH_EXACT);
    ck_assert_ptr_null(m.evidence[0]);
    ck_assert_ptr_null(m.evidence[1]);
    kd_matching_free(&m, 2);
}
END_TEST

/* the same name in the same category first, then in another */
START_TEST(test_exact_same_category_first)
{
    kd_match_item b[] = {it("copy_kernel", 10, 1), it("copy_kernel", 10, 2)};
    b[1].category = KD_CAT_MEMORY;
    kd_match_item c[] = {it("copy_kernel", 10, 1), it("copy_kernel", 10, 2)};
    c[0].category = KD_CAT_MEMORY;
    c[1].category = KD_CAT_ELEMENTWISE;
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 1, 0, KD_MATCH_EXACT); /* memory <-> memory */
    ck_pair(&m, b, c, 0, 1, KD_MATCH_EXACT); /* then the name alone */
    kd_matching_free(&m, 2);
}
END_TEST

/* a generated name kept on both sides: the renumbered step pairs it, and
 * reports exact (no evidence) */
START_TEST(test_generated_same_name_is_exact)
{
    const kd_match_item b[] = {it("triton_poi_fused_add_3", 10, 1)};
    const kd_match_item c[] = {it("triton_poi_fused_add_3", 10, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_EXACT);
    ck_assert_ptr_null(m.evidence[0]);
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_rule)
{
    const char *rules[] = {"aiter::fmha_fwd*=sage_fwd"};
    kd_match_options opt = {rules, 1, NULL};
    const kd_match_item b[] = {it("aiter::fmha_fwd_hd128_bf16_causal", 500, 1)};
    const kd_match_item c[] = {it("sage_fwd", 3, 1)};
    kd_matching m;
    run(b, 1, c, 1, &opt, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_RULE);
    ck_evidence_has(&m, 0, "--match-rule 'aiter::fmha_fwd*=sage_fwd'");
    ck_evidence_has(&m, 0, "launches 500 -> 3");
    kd_matching_free(&m, 1);
    /* without the rule, nothing pairs them (launches 500 vs 3: not replaced) */
    run(b, 1, c, 1, NULL, &m);
    ck_added(&m, c, 0);
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_renumbered)
{
    const kd_match_item b[] = {it("triton_poi_fused_addmm_gelu_view_17", 72, 1)};
    const kd_match_item c[] = {it("triton_poi_fused_addmm_gelu_view_19", 72, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_RENUMBERED);
    ck_evidence_has(&m, 0, "_17 -> _19");
    ck_evidence_has(&m, 0, "launches 72 = 72");
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_template)
{
    const kd_match_item b[] = {
        it("void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1"
           "<float, float, 2ul>(int, float*)",
           40, 1)};
    const kd_match_item c[] = {
        it("void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1"
           "<float, float, 5ul>(int, float*)",
           40, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_TEMPLATE);
    ck_evidence_has(&m, 0, "template arguments");
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_retargeted)
{
    const kd_match_item b[] = {it("ampere_sgemm_128x128_tn", 12, 1)};
    const kd_match_item c[] = {it("volta_sgemm_128x128_tn", 12, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_RETARGETED);
    ck_evidence_has(&m, 0, "ampere -> volta");
    kd_matching_free(&m, 1);

    const kd_match_item b2[] = {it("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4", 12, 1)};
    const kd_match_item c2[] = {it("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4", 12, 1)};
    run(b2, 1, c2, 1, NULL, &m);
    ck_pair(&m, b2, c2, 0, 0, KD_MATCH_RETARGETED);
    ck_evidence_has(&m, 0, "sm80 -> sm90");
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_prefix)
{
    const kd_match_item b[] = {it("flash_fwd_kernel", 12, 1)};
    const kd_match_item c[] = {it("flash_fwd_kernel_v2", 12, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_PREFIX);
    ck_evidence_has(&m, 0, "one name starts the other");
    kd_matching_free(&m, 1);
}
END_TEST

START_TEST(test_kind_substring)
{
    const kd_match_item b[] = {it("xx_attention_core_yy", 12, 1)};
    const kd_match_item c[] = {it("attention_core", 12, 1)};
    kd_matching m;
    run(b, 1, c, 1, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_SUBSTRING);
    ck_evidence_has(&m, 0, "one name contains the other");
    kd_matching_free(&m, 1);
}
END_TEST

/* the relaxed step takes the candidates heaviest first: the heavier one gets
 * the one baseline kernel both would match */
START_TEST(test_relaxed_heaviest_first)
{
    const kd_match_item b[] = {it("flash_fwd_kernel", 12, 1)};
    kd_match_item c[] = {it("flash_fwd_kernel_v2", 12, 1), it("flash_fwd_kernel_v3", 12, 2)};
    c[1].total_us = 1000;
    kd_matching m;
    run(b, 1, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_PREFIX);
    ck_added(&m, c, 0);
    kd_matching_free(&m, 2);
}
END_TEST

START_TEST(test_kind_replaced)
{
    const kd_match_item b[] = {it("gemm_anchor_kernel", 10, 1), it("layer_norm_fwd", 10, 2),
                               it("softmax_anchor_kernel", 10, 3)};
    const kd_match_item c[] = {it("gemm_anchor_kernel", 10, 1), it("rms_norm_kernel", 10, 2),
                               it("softmax_anchor_kernel", 10, 3)};
    kd_matching m;
    run(b, 3, c, 3, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_EXACT);
    ck_pair(&m, b, c, 2, 2, KD_MATCH_EXACT);
    ck_pair(&m, b, c, 1, 1, KD_MATCH_REPLACED);
    ck_evidence_has(&m, 1, "after gemm_anchor_kernel");
    ck_evidence_has(&m, 1, "before softmax_anchor_kernel");
    ck_evidence_has(&m, 1, "launches 10 = 10");
    kd_matching_free(&m, 3);
}
END_TEST

/* launch counts 10 vs 100 (ratio > 1.5): not a replacement */
START_TEST(test_replaced_needs_comparable_launches)
{
    const kd_match_item b[] = {it("gemm_anchor_kernel", 10, 1), it("layer_norm_fwd", 10, 2),
                               it("softmax_anchor_kernel", 10, 3)};
    const kd_match_item c[] = {it("gemm_anchor_kernel", 10, 1), it("rms_norm_kernel", 100, 2),
                               it("softmax_anchor_kernel", 10, 3)};
    kd_matching m;
    run(b, 3, c, 3, NULL, &m);
    ck_added(&m, c, 1);
    ck_assert_int_eq(m.cand_of[1], -1);
    kd_matching_free(&m, 3);

    /* 10 vs 15: ratio 1.5 is comparable; 10 vs 16 is not */
    const kd_match_item c15[] = {it("gemm_anchor_kernel", 10, 1), it("rms_norm_kernel", 15, 2),
                                 it("softmax_anchor_kernel", 10, 3)};
    run(b, 3, c15, 3, NULL, &m);
    ck_pair(&m, b, c15, 1, 1, KD_MATCH_REPLACED);
    ck_evidence_has(&m, 1, "launches 10 -> 15");
    kd_matching_free(&m, 3);
    const kd_match_item c16[] = {it("gemm_anchor_kernel", 10, 1), it("rms_norm_kernel", 16, 2),
                                 it("softmax_anchor_kernel", 10, 3)};
    run(b, 3, c16, 3, NULL, &m);
    ck_added(&m, c16, 1);
    kd_matching_free(&m, 3);
}
END_TEST

/* the score threshold: one shared neighbour (2) is not enough; with the
 * same scope (3) it is */
START_TEST(test_replaced_score_threshold)
{
    kd_match_item b[] = {it("gemm_anchor_kernel", 10, 1), it("layer_norm_fwd", 10, 2)};
    kd_match_item c[] = {it("gemm_anchor_kernel", 10, 1), it("rms_norm_kernel", 10, 2)};
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_EXACT);
    ck_added(&m, c, 1);
    kd_matching_free(&m, 2);

    b[1].scope = c[1].scope = "model.py(42): forward";
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 1, 1, KD_MATCH_REPLACED);
    ck_evidence_has(&m, 1, "after gemm_anchor_kernel");
    ck_evidence_has(&m, 1, "same scope model.py(42): forward");
    kd_matching_free(&m, 2);

    /* the same launch op instead of the scope: also 3 */
    b[1].scope = c[1].scope = "";
    b[1].launch_op = c[1].launch_op = "aten::layer_norm";
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 1, 1, KD_MATCH_REPLACED);
    ck_evidence_has(&m, 1, "same launch op aten::layer_norm");
    kd_matching_free(&m, 2);

    /* scope and launch op without a shared neighbour: never */
    const kd_match_item b2[] = {{"layer_norm_fwd", KD_CAT_COMPUTE, 10, 10, "s.py(1)", "aten::x", 1}};
    const kd_match_item c2[] = {{"rms_norm_kernel", KD_CAT_COMPUTE, 10, 10, "s.py(1)", "aten::x", 1}};
    run(b2, 1, c2, 1, NULL, &m);
    ck_added(&m, c2, 0);
    kd_matching_free(&m, 1);
}
END_TEST

/* ---- pairing inside a key group -------------------------------------------------- */

/* flux in miniature: two generated kernels swapped their numbers; launch
 * order pairs them, not the names */
START_TEST(test_flux_swapped_numbers)
{
    const kd_match_item b[] = {it("triton_poi_fused_addmm_gelu_view_21", 72, 10),
                               it("triton_poi_fused_addmm_gelu_view_22", 72, 20)};
    const kd_match_item c[] = {it("triton_poi_fused_addmm_gelu_view_22", 72, 10),
                               it("triton_poi_fused_addmm_gelu_view_21", 72, 20)};
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 0, KD_MATCH_RENUMBERED); /* base _21 <-> cand _22 */
    ck_pair(&m, b, c, 1, 1, KD_MATCH_RENUMBERED); /* base _22 <-> cand _21 */
    /* the same-name (reverse) pairs are not made */
    ck_assert_int_ne(m.cand_of[0], 1);
    ck_assert_int_ne(m.cand_of[1], 0);
    ck_evidence_has(&m, 0, "_21 -> _22");
    ck_evidence_has(&m, 1, "_22 -> _21");
    kd_matching_free(&m, 2);
}
END_TEST

/* launch counts 76 / 12 against 12 / 76: the counts decide, not the numbers
 * (and not the global launch order either) */
START_TEST(test_launch_counts_break_tie)
{
    const kd_match_item b[] = {it("triton_red_fused_sum_3", 76, 10), it("triton_red_fused_sum_4", 12, 20)};
    const kd_match_item c[] = {it("triton_red_fused_sum_3", 12, 10), it("triton_red_fused_sum_4", 76, 20)};
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_RENUMBERED); /* 76 <-> 76 */
    ck_pair(&m, b, c, 1, 0, KD_MATCH_RENUMBERED); /* 12 <-> 12 */
    ck_evidence_has(&m, 1, "launches 76 = 76");
    ck_evidence_has(&m, 0, "launches 12 = 12");
    kd_matching_free(&m, 2);
}
END_TEST

/* two candidates, one baseline kernel of their key: one wins, the other is
 * added */
START_TEST(test_two_candidates_one_baseline)
{
    const kd_match_item b[] = {it("triton_per_fused_softmax_5", 100, 10)};
    const kd_match_item c[] = {it("triton_per_fused_softmax_8", 50, 20), it("triton_per_fused_softmax_7", 100, 10)};
    kd_matching m;
    run(b, 1, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_RENUMBERED);
    ck_added(&m, c, 0);
    ck_assert_ptr_null(m.evidence[0]);
    ck_assert_int_eq(m.cand_of[0], 1);
    kd_matching_free(&m, 2);
}
END_TEST

/* template and retargeted groups pair by evidence too */
START_TEST(test_template_group_by_evidence)
{
    const kd_match_item b[] = {it("void kern<float, 128>(int)", 100, 10), it("void kern<float, 256>(int)", 4, 20)};
    const kd_match_item c[] = {it("void kern<c10::Half, 128>(int)", 4, 10),
                               it("void kern<c10::Half, 256>(int)", 100, 20)};
    kd_matching m;
    run(b, 2, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_TEMPLATE);
    ck_pair(&m, b, c, 1, 0, KD_MATCH_TEMPLATE);
    kd_matching_free(&m, 2);

    const kd_match_item b2[] = {it("ampere_sgemm_64x64_nn", 7, 10), it("turing_sgemm_64x64_nn", 300, 20)};
    const kd_match_item c2[] = {it("hopper_sgemm_64x64_nn", 300, 10), it("sm90_sgemm_64x64_nn", 7, 20)};
    run(b2, 2, c2, 2, NULL, &m);
    ck_pair(&m, b2, c2, 0, 1, KD_MATCH_RETARGETED);
    ck_pair(&m, b2, c2, 1, 0, KD_MATCH_RETARGETED);
    ck_evidence_has(&m, 1, "ampere -> sm90");
    ck_evidence_has(&m, 0, "turing -> hopper");
    kd_matching_free(&m, 2);
}
END_TEST

/* the steps in order: exact before renumbered before template before
 * retargeted before relaxed */
START_TEST(test_step_order)
{
    /* the candidate's exact name is taken first even though a sibling
     * matching by prefix has the better launch count */
    const kd_match_item b[] = {it("gemm_kernel", 10, 1)};
    const kd_match_item c[] = {it("gemm_kernel_v2", 10, 1), it("gemm_kernel", 999, 2)};
    kd_matching m;
    run(b, 1, c, 2, NULL, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_EXACT);
    ck_added(&m, c, 0);
    kd_matching_free(&m, 2);
}
END_TEST

/* ---- rules -------------------------------------------------------------------- */

/* Rules run first, on the kernels no earlier rule paired: a rule takes a
 * kernel away from its exact-name partner (documented behaviour of
 * match_rules: before match_exact). */
START_TEST(test_rule_before_exact)
{
    const char *rules[] = {"gemm_a=gemm_b"};
    kd_match_options opt = {rules, 1, NULL};
    const kd_match_item b[] = {it("gemm_a", 10, 1)};
    const kd_match_item c[] = {it("gemm_a", 10, 1), it("gemm_b", 10, 2)};
    kd_matching m;
    run(b, 1, c, 2, &opt, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_RULE);
    ck_added(&m, c, 0); /* its exact partner is taken */
    kd_matching_free(&m, 2);
}
END_TEST

/* among the kernels a rule names, evidence decides; a later rule only sees
 * what is left; a rule without '=' is ignored */
START_TEST(test_rule_groups_and_order)
{
    const char *rules[] = {"no equals sign", "gemm_*=newgemm_*", "gemm_*=other_*"};
    kd_match_options opt = {rules, 3, NULL};
    const kd_match_item b[] = {it("gemm_x", 76, 10), it("gemm_y", 12, 20)};
    const kd_match_item c[] = {it("newgemm_p", 12, 10), it("newgemm_q", 76, 20), it("other_r", 76, 30)};
    kd_matching m;
    run(b, 2, c, 3, &opt, &m);
    ck_pair(&m, b, c, 0, 1, KD_MATCH_RULE);
    ck_pair(&m, b, c, 1, 0, KD_MATCH_RULE);
    ck_added(&m, c, 2);
    ck_evidence_has(&m, 0, "--match-rule 'gemm_*=newgemm_*'");
    ck_evidence_has(&m, 1, "launches 76 = 76");
    kd_matching_free(&m, 3);

    /* the NULL options and zero rules: no rule step */
    kd_match_options none = {NULL, 0, NULL};
    run(b, 2, c, 3, &none, &m);
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_ne(m.kind[i], KD_MATCH_RULE);
    kd_matching_free(&m, 3);
}
END_TEST

/* ---- empty sides ------------------------------------------------------------ */

START_TEST(test_empty_sides)
{
    const kd_match_item items[] = {it("a_kernel", 1, 1), it("b_kernel", 2, 2), it("c_kernel", 3, 3)};
    kd_matching m;
    run(NULL, 0, NULL, 0, NULL, &m);
    ck_assert_ptr_nonnull(m.kind);
    kd_matching_free(&m, 0);
    ck_assert_ptr_null(m.kind);

    run(NULL, 0, items, 3, NULL, &m);
    for (size_t i = 0; i < 3; i++)
        ck_added(&m, items, i);
    kd_matching_free(&m, 3);

    run(items, 3, NULL, 0, NULL, &m);
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(m.cand_of[i], -1);
    kd_matching_free(&m, 0);

    const char *rules[] = {"*=*"};
    kd_match_options opt = {rules, 1, NULL};
    run(items, 3, NULL, 0, &opt, &m);
    kd_matching_free(&m, 0);
    run(NULL, 0, items, 3, &opt, &m);
    kd_matching_free(&m, 3);
}
END_TEST

/* ---- a generated set: one-to-one, independent of the input order ---------------- */

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}
static uint32_t rnd_to(uint32_t n) { return rnd() % n; }

#define GEN_N 60
#define GEN_NAME 160

typedef struct {
    char names[GEN_N][GEN_NAME];
    kd_match_item items[GEN_N];
    size_t n;
} gen_side;

static bool side_has(const gen_side *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return true;
    return false;
}

static const char *const g_words[] = {"add", "mul", "gelu", "view", "sum", "softmax"};
static const char *const g_scalars[] = {"float", "c10::Half", "c10::BFloat16", "int64_t"};
static const char *const g_arch[] = {"ampere", "volta", "hopper", "sm80", "sm90", "turing"};
static const char *const g_scope[] = {"", "model.py(10): forward", "model.py(20): forward"};
static const char *const g_op[] = {"", "aten::mm", "aten::add"};
static const uint64_t g_launches[] = {1, 12, 72, 76, 100, 228};

/* A name of family f; variant picks the side's flavour (another number,
 * other template arguments, another architecture, a suffix). */
static void gen_name(char *out, int f, bool cand)
{
    const char *w1 = g_words[rnd_to(4)], *w2 = g_words[2 + rnd_to(4)];
    switch (f) {
    case 0: /* generated Triton kernels, few stems, many numbers */
        snprintf(out, GEN_NAME, "triton_%s_fused_%s_%s_%u", rnd_to(2) ? "poi" : "red", w1, w2, rnd_to(40));
        break;
    case 1: /* templates */
        snprintf(out, GEN_NAME, "void kern_%s<%s, %u>(int, float*)", w1, g_scalars[rnd_to(4)], 64u << rnd_to(4));
        break;
    case 2: /* architectures */
        snprintf(out, GEN_NAME, "%s_%s_gemm_%ux%u_tn", g_arch[rnd_to(6)], w1, 64u << rnd_to(2), 64u << rnd_to(2));
        break;
    default: /* plain names (numbers ended by a letter: no name extends another),
              * a candidate sometimes with a suffix (the relaxed step) */
        snprintf(out, GEN_NAME, "plain_%s_%uk%s", w1, rnd_to(30), cand && rnd_to(3) == 0 ? "_v2" : "");
        break;
    }
}

static void gen_side_fill(gen_side *s, bool cand)
{
    /* distinct first launches: a permutation */
    size_t order[GEN_N];
    for (size_t i = 0; i < GEN_N; i++)
        order[i] = i;
    for (size_t i = GEN_N; i > 1; i--) {
        size_t j = rnd_to((uint32_t)i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    s->n = 0;
    while (s->n < GEN_N) {
        char name[GEN_NAME];
        gen_name(name, (int)rnd_to(4), cand);
        if (side_has(s, name))
            continue;
        size_t i = s->n++;
        memcpy(s->names[i], name, GEN_NAME);
        uint64_t launches = g_launches[rnd_to(6)];
        s->items[i] = (kd_match_item){s->names[i],
                                      (kd_category)rnd_to(3),
                                      launches,
                                      (double)launches * 3.0 + (double)i * 0.001 + (cand ? 0.0005 : 0.0),
                                      g_scope[rnd_to(3)],
                                      g_op[rnd_to(3)],
                                      (double)order[i] * 10.0 + 1.0};
    }
}

typedef struct {
    const char *b, *c;
    kd_match_kind kind;
    const char *evidence;
} name_pair;

static int cmp_name_pair(const void *pa, const void *pb)
{
    const name_pair *a = pa, *b = pb;
    int r = strcmp(a->c, b->c);
    return r ? r : strcmp(a->b, b->b);
}

/* the (baseline name, candidate name, kind, evidence) pairs, sorted */
static size_t pairs_of(const kd_match_item *b, const kd_match_item *c, size_t nc, const kd_matching *m,
                       name_pair *out)
{
    size_t k = 0;
    for (size_t ci = 0; ci < nc; ci++)
        if (m->base_of[ci] >= 0)
            out[k++] = (name_pair){b[m->base_of[ci]].name, c[ci].name, m->kind[ci],
                                   m->evidence[ci] ? m->evidence[ci] : ""};
    qsort(out, k, sizeof *out, cmp_name_pair);
    return k;
}

static void expect_same_pairs(const name_pair *a, size_t na, const name_pair *b, size_t nb, const char *what)
{
    size_t n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strcmp(a[i].b, b[i].b) == 0 && strcmp(a[i].c, b[i].c) == 0 && a[i].kind == b[i].kind &&
                          strcmp(a[i].evidence, b[i].evidence) == 0,
                      "%s: pair %zu: %s <- %s (%s, '%s') vs %s <- %s (%s, '%s')", what, i, a[i].c, a[i].b,
                      kd_match_kind_name(a[i].kind), a[i].evidence, b[i].c, b[i].b, kd_match_kind_name(b[i].kind),
                      b[i].evidence);
    ck_assert_msg(na == nb, "%s: %zu pairs vs %zu", what, na, nb);
}

static void permute(kd_match_item *v, size_t n, bool reverse)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = reverse ? n - i : rnd_to((uint32_t)i);
        if (reverse && j >= i - 1)
            break;
        kd_match_item t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

START_TEST(test_generated_one_to_one_order_independent)
{
    static gen_side bs, cs;
    static kd_match_item pb[GEN_N], pc[GEN_N];
    name_pair ref[GEN_N], got[GEN_N];
    for (uint64_t seed = 1; seed <= 40; seed++) {
        rng_state = seed * 0x9e3779b97f4a7c15ULL;
        gen_side_fill(&bs, false);
        gen_side_fill(&cs, true);
        kd_matching m;
        run(bs.items, GEN_N, cs.items, GEN_N, NULL, &m);
        size_t nref = pairs_of(bs.items, cs.items, GEN_N, &m, ref);
        /* the set exercises more than one step */
        bool seen[KD_MATCH_REPLACED + 1] = {false};
        for (size_t i = 0; i < GEN_N; i++)
            seen[m.kind[i]] = true;
        ck_assert_msg(seen[KD_MATCH_EXACT] && seen[KD_MATCH_RENUMBERED] && seen[KD_MATCH_NONE],
                      "seed %llu: a poor set", (unsigned long long)seed);
        for (int p = 0; p < 3; p++) {
            memcpy(pb, bs.items, sizeof pb);
            memcpy(pc, cs.items, sizeof pc);
            permute(pb, GEN_N, p == 0);
            permute(pc, GEN_N, p == 0);
            if (p == 2) /* one side only */
                memcpy(pc, cs.items, sizeof pc);
            kd_matching pm;
            run(pb, GEN_N, pc, GEN_N, NULL, &pm);
            size_t ngot = pairs_of(pb, pc, GEN_N, &pm, got);
            char what[64];
            snprintf(what, sizeof what, "seed %llu, %s", (unsigned long long)seed,
                     p == 0 ? "both reversed" : p == 1 ? "both shuffled" : "baseline shuffled");
            expect_same_pairs(ref, nref, got, ngot, what);
            kd_matching_free(&pm, GEN_N);
        }
        kd_matching_free(&m, GEN_N);
    }
}
END_TEST

/* the same matching twice: deterministic */
START_TEST(test_generated_deterministic)
{
    static gen_side bs, cs;
    name_pair a[GEN_N], b[GEN_N];
    rng_state = 12345;
    gen_side_fill(&bs, false);
    gen_side_fill(&cs, true);
    kd_matching m1, m2;
    run(bs.items, GEN_N, cs.items, GEN_N, NULL, &m1);
    run(bs.items, GEN_N, cs.items, GEN_N, NULL, &m2);
    for (size_t i = 0; i < GEN_N; i++) {
        ck_assert_int_eq(m1.base_of[i], m2.base_of[i]);
        ck_assert_int_eq(m1.kind[i], m2.kind[i]);
    }
    expect_same_pairs(a, pairs_of(bs.items, cs.items, GEN_N, &m1, a), b, pairs_of(bs.items, cs.items, GEN_N, &m2, b),
                      "twice");
    kd_matching_free(&m1, GEN_N);
    kd_matching_free(&m2, GEN_N);
}
END_TEST

/* ---- out of memory ------------------------------------------------------------ */

/* Every allocation failing in turn (once, and from then on): KD_ENOMEM with a
 * message, or KD_OK with a consistent matching; never a crash.
 * Deliberately weak: today a failed allocation inside the template or
 * retarget key (treated as "the step does not apply") or inside an evidence
 * string (left NULL) still returns KD_OK, with another matching or a pair
 * without evidence; this test does not assert "KD_OK means the same result". */
START_TEST(test_oom)
{
    static gen_side bs, cs;
    rng_state = 777;
    gen_side_fill(&bs, false);
    gen_side_fill(&cs, true);
    const char *rules[] = {"plain_add_*=plain_mul_*"};
    kd_match_options opt = {rules, 1, NULL};
    /* the result without a failure: KD_OK must always mean that result */
    static name_pair want[GEN_N], got[GEN_N];
    kd_matching ref;
    kd_error rerr = {0};
    ck_assert_int_eq(kd_match_kernels(bs.items, GEN_N, cs.items, GEN_N, &opt, &ref, &rerr), KD_OK);
    size_t nwant = pairs_of(bs.items, cs.items, GEN_N, &ref, want);
    for (int mode = 0; mode < 2; mode++) {
        long fails = 0, n = 0;
        for (;; n++) {
            kd_matching m;
            kd_error err = {0};
            failalloc_arm(n, mode ? FAILALLOC_FROM : FAILALLOC_ONE);
            kd_status st = kd_match_kernels(bs.items, GEN_N, cs.items, GEN_N, &opt, &m, &err);
            long failed = failalloc_disarm();
            if (st == KD_OK) {
                /* a failed allocation is never a different matching or a
                 * lost evidence string: it is KD_ENOMEM */
                check_consistent(&m, GEN_N, GEN_N);
                size_t ngot = pairs_of(bs.items, cs.items, GEN_N, &m, got);
                expect_same_pairs(want, nwant, got, ngot, "KD_OK under failing allocations");
                kd_matching_free(&m, GEN_N);
                if (!failed)
                    break;
                continue;
            }
            fails++;
            ck_assert_msg(failed > 0, "allocation %ld: failed without a failed allocation", n);
            ck_assert_msg(st == KD_ENOMEM && strstr(err.msg, "out of memory"), "allocation %ld: %d %s", n, (int)st,
                          err.msg);
            ck_assert_ptr_null(m.kind);
            ck_assert_ptr_null(m.evidence);
        }
        ck_assert_msg(n > 10 && fails > 0, "mode %d: %ld allocations, %ld failures", mode, n, fails);
    }
    kd_matching_free(&ref, GEN_N);
}
END_TEST

Suite *match_suite(void)
{
    Suite *s = suite_create("match");
    TCase *keys = tcase_create("keys");
    tcase_add_test(keys, test_renumber_key);
    tcase_add_test(keys, test_template_key);
    tcase_add_test(keys, test_retarget_key);
    suite_add_tcase(s, keys);
    TCase *kinds = tcase_create("kinds");
    tcase_add_test(kinds, test_kind_exact);
    tcase_add_test(kinds, test_exact_same_category_first);
    tcase_add_test(kinds, test_generated_same_name_is_exact);
    tcase_add_test(kinds, test_kind_rule);
    tcase_add_test(kinds, test_kind_renumbered);
    tcase_add_test(kinds, test_kind_template);
    tcase_add_test(kinds, test_kind_retargeted);
    tcase_add_test(kinds, test_kind_prefix);
    tcase_add_test(kinds, test_kind_substring);
    tcase_add_test(kinds, test_relaxed_heaviest_first);
    tcase_add_test(kinds, test_kind_replaced);
    tcase_add_test(kinds, test_replaced_needs_comparable_launches);
    tcase_add_test(kinds, test_replaced_score_threshold);
    suite_add_tcase(s, kinds);
    TCase *groups = tcase_create("groups");
    tcase_add_test(groups, test_flux_swapped_numbers);
    tcase_add_test(groups, test_launch_counts_break_tie);
    tcase_add_test(groups, test_two_candidates_one_baseline);
    tcase_add_test(groups, test_template_group_by_evidence);
    tcase_add_test(groups, test_step_order);
    tcase_add_test(groups, test_rule_before_exact);
    tcase_add_test(groups, test_rule_groups_and_order);
    tcase_add_test(groups, test_empty_sides);
    suite_add_tcase(s, groups);
    TCase *gen = tcase_create("generated");
    tcase_set_timeout(gen, 120);
    tcase_add_test(gen, test_generated_one_to_one_order_independent);
    tcase_add_test(gen, test_generated_deterministic);
    tcase_add_test(gen, test_oom);
    suite_add_tcase(s, gen);
    return s;
}
