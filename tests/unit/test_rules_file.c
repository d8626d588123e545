/* test_rules_file.c — unit tests of src/rules_file.c (rules_file.h): a new
 * category and its kind; a base category extended, replaced, given a regex;
 * [order] deciding which category wins; [match]; name and source; the
 * built-in and a file's profile written with kd_rules_write_ini and loaded
 * back classify alike; every malformed file is KD_EINPUT naming the file, the
 * line and the problem; out of memory. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz/failalloc.h"
#include "kerndiff/rules_file.h"
#include "suites.h"

/* ---- helpers -------------------------------------------------------------- */

/* text in a new temporary file; its path, malloc'd */
static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/kd_rules_testXXXXXX");
    ck_assert_ptr_nonnull(path);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(text);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

/* text loaded as a rules file; fails the test unless it loads */
static kd_rules_owned *load_ok(const char *text)
{
    char *path = write_tmp(text);
    kd_rules_owned *o = NULL;
    kd_error err = {0};
    kd_status st = kd_rules_load_file(path, &o, &err);
    ck_assert_msg(st == KD_OK, "load failed: %s\n--- file:\n%s", err.msg, text);
    ck_assert_ptr_nonnull(o);
    unlink(path);
    free(path);
    return o;
}

/* text must fail to load: KD_EINPUT, "PATH:LINE: ..." naming the problem */
static void expect_error(const char *text, int line, const char *word)
{
    char *path = write_tmp(text);
    kd_rules_owned *o = (kd_rules_owned *)1;
    kd_error err = {0};
    kd_status st = kd_rules_load_file(path, &o, &err);
    ck_assert_msg(st == KD_EINPUT, "expected KD_EINPUT (%s), got %d: %s\n--- file:\n%s", word, (int)st,
                  err.msg, text);
    ck_assert_ptr_null(o);
    char lead[4200];
    snprintf(lead, sizeof lead, "%s:%d: ", path, line);
    ck_assert_msg(strncmp(err.msg, lead, strlen(lead)) == 0, "'%s' does not start with '%s'", err.msg, lead);
    ck_assert_msg(strstr(err.msg, word), "'%s' does not say '%s'", err.msg, word);
    ck_assert_msg(!strchr(err.msg, '\n'), "'%s' is more than one line", err.msg);
    unlink(path);
    free(path);
}

/* names of every sort: CUDA, ROCm, NCCL/RCCL, copies, Triton, PyTorch */
static const char *const names[] = {
    "void cutlass::Kernel<cutlass_80_tensorop_gemm>(Params)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
    "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "ncclKernel_AllGather_RING_LL_Sum_int8_t",
    "rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)",
    "Memcpy DtoD (Device -> Device)",
    "Memset (Device)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
    "triton_poi_fused_add_0",
    "triton_red_fused_rmsnorm_1",
    "flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64>>",
    "fmha_cutlassF_f16_aligned_64x128_rf_sm80",
    "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*)",
    "void vllm::act_and_mul_kernel<silu>",
    "rotary_embedding_kernel",
    "fused_moe_kernel",
    "moe_dispatch",
    "fused_moe_kernel_dispatch",
    "deepep_combine_kernel",
    "broadcast_tensor",
    "copy_kernel",
    "gemm_copy",
    "void at::native::index_elementwise_kernel<128, 4>",
    "softmax_warp_forward",
    "topk_gating_kernel",
    "cross_device_reduce_1stage",
    "mooncake_transfer",
    "a2a_dispatch_kernel",
    "dma_prefetch_kernel",
    "void cub::DeviceRadixSortOnesweepKernel",
    "mystery_kernel",
    "sage_fwd_kernel",
    "hcom_send_recv_v2",
    "aiter::fmha_fwd_hd128_bf16",
    "ck_tile::kentry<gemm_xdl>",
    "wgmma_kernel",
    "conv2d_fprop",
    "bias_add_cast",
    "",
    "KD_COPY_12",
    "triton_poi_fused_addmm_fmha_v3_fwd_0",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x128x64",
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_bias_TNN",
    "void flashinfer::BatchPrefillWithPagedKVCacheKernel<cutlass::bfloat16_t>",
    "cub::DispatchReduceByKey",
    "prefill_kv_kernel",
    "KD_XFER_12",
};
#define N_NAMES (sizeof names / sizeof names[0])

/* r and s classify every name alike (but those with the substring skip) */
static void expect_same_classes_but(const kd_rules *r, const kd_rules *s, const char *what, const char *skip)
{
    for (size_t i = 0; i < N_NAMES; i++) {
        if (skip && strstr(names[i], skip))
            continue;
        kd_category a = kd_rules_classify(r, names[i]), b = kd_rules_classify(s, names[i]);
        ck_assert_msg(a == b && strcmp(kd_rules_category_name(r, a), kd_rules_category_name(s, b)) == 0 &&
                          kd_rules_kind(r, a) == kd_rules_kind(s, b),
                      "%s: '%s' is %s in one, %s in the other", what, names[i], kd_rules_category_name(r, a),
                      kd_rules_category_name(s, b));
    }
}

static void expect_same_classes(const kd_rules *r, const kd_rules *s, const char *what)
{
    expect_same_classes_but(r, s, what, NULL);
}

/* r written with kd_rules_write_ini and loaded back */
static kd_rules_owned *round_trip(const kd_rules *r, char **text_out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert(kd_rules_write_ini(r, f));
    fclose(f);
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        ck_assert_msg(n < 120, "a written line of %zu bytes", n);
        line += n + (nl ? 1 : 0);
    }
    kd_rules_owned *o = load_ok(text);
    if (text_out)
        *text_out = text;
    else
        free(text);
    return o;
}

/* ---- a new category ------------------------------------------------------------ */

static const char attention_file[] =
    "; a specific category before the generic ones\n"
    "[rules]\n"
    "name = attn-stack\n"
    "\n"
    "[category attention]\n"
    "kind = compute\n"
    "strong = FMHA, flash_attn ,  sage_fwd\n";

START_TEST(test_new_category)
{
    kd_rules_owned *o = load_ok(attention_file);
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_str_eq(r->name, "attn-stack");
    ck_assert_uint_eq(r->n_categories, KD_CAT_COUNT + 1);
    int att = kd_rules_category_index(r, "attention");
    ck_assert_int_eq(att, KD_CAT_COUNT);
    ck_assert_str_eq(kd_rules_category_name(r, (kd_category)att), "attention");
    ck_assert_int_eq(kd_rules_kind(r, (kd_category)att), KD_CAT_COMPUTE);
    /* the built-in five keep their places */
    for (kd_category c = 0; c < KD_CAT_COUNT; c++) {
        ck_assert_str_eq(kd_rules_category_name(r, c), kd_category_name(c));
        ck_assert_int_eq(kd_rules_kind(r, c), c);
    }
    ck_assert_int_eq(kd_rules_classify(r, "sage_fwd"), att);
    ck_assert_int_eq(kd_rules_classify(r, "SAGE_FWD_kernel"), att);
    /* keywords lowered and trimmed; the new step before the base's "flash" */
    ck_assert_int_eq(kd_rules_classify(r, "fmha_cutlassF_f16"), att);
    ck_assert_int_eq(kd_rules_classify(r, "flash_attn_fwd"), att);
    ck_assert_int_eq(kd_rules_classify(r, "void gemm_kernel"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "flash_fwd_splitkv_kernel"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "ncclDevKernel_AllReduce"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "mystery"), KD_CAT_OTHER);
    /* the rest of the profile is the base's */
    const kd_rules *d = kd_rules_default();
    ck_assert_str_eq(kd_rules_classify_site(r, "flash_attn_fwd"), kd_rules_classify_site(d, "flash_attn_fwd"));
    ck_assert(kd_rules_kernel_name_hint(r, "void foo"));
    ck_assert_int_eq(kd_rules_annotation_stage(r, "decode step"), kd_rules_annotation_stage(d, "decode step"));
    ck_assert(kd_rules_is_launch(r, "cudalaunchkernel", true));
    ck_assert_uint_eq(r->n_match_rules, 0);
    /* the compute-like guard: the compute kind's strong keywords, the new ones too */
    bool has_sage = false, has_gemm = false;
    for (size_t i = 0; r->compute_like[i]; i++) {
        has_sage = has_sage || strcmp(r->compute_like[i], "sage_fwd") == 0;
        has_gemm = has_gemm || strcmp(r->compute_like[i], "gemm") == 0;
    }
    ck_assert(has_sage && has_gemm);
    kd_rules_owned_free(o);
}
END_TEST

/* the guard reaches the base's weak steps: "zeta_dispatch" is compute-like
 * once a compute-kind category has "zeta" */
START_TEST(test_new_compute_kind_guards_weak_steps)
{
    kd_rules_owned *o = load_ok("[rules]\nbase = reference\n"
                                "[category zeta]\n"
                                "kind = compute\n"
                                "strong = zeta\n"
                                "[order]\n"
                                "steps = memory, communication, compute, elementwise, memory:weak,\n"
                                "    communication:weak, zeta\n");
    const kd_rules *r = kd_rules_owned_get(o);
    int z = kd_rules_category_index(r, "zeta");
    ck_assert_int_eq(kd_rules_classify(r, "zeta_dispatch"), z);
    ck_assert_int_eq(kd_rules_classify(r, "moe_dispatch"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "zeta_memcpy"), KD_CAT_MEMORY);
    kd_rules_owned_free(o);
}
END_TEST

START_TEST(test_new_category_weak_and_other_kind)
{
    kd_rules_owned *o = load_ok("[category host_sync]\n"
                                "kind = other\n"
                                "strong = cudaeventsync\n"
                                "weak = wait\n"
                                "[category quant]\n"
                                "kind = elementwise\n"
                                "strong = dequant, \"fp8 cast\"\n");
    const kd_rules *r = kd_rules_owned_get(o);
    int h = kd_rules_category_index(r, "host_sync"), q = kd_rules_category_index(r, "quant");
    ck_assert_int_eq(h, KD_CAT_COUNT);
    ck_assert_int_eq(q, KD_CAT_COUNT + 1);
    ck_assert_int_eq(kd_rules_kind(r, (kd_category)h), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_kind(r, (kd_category)q), KD_CAT_ELEMENTWISE);
    ck_assert_int_eq(kd_rules_classify(r, "CudaEventSync_x"), h);
    ck_assert_int_eq(kd_rules_classify(r, "wait_kernel"), h);
    ck_assert_int_eq(kd_rules_classify(r, "gemm_wait"), KD_CAT_COMPUTE); /* weak: not when compute-like */
    ck_assert_int_eq(kd_rules_classify(r, "dequant_int4"), q);
    ck_assert_int_eq(kd_rules_classify(r, "bf16 fp8 cast"), q);
    /* file order: host_sync's steps, then quant's, then the base's */
    ck_assert_int_eq(r->steps[0].category, h);
    ck_assert(!r->steps[0].unless_compute_like);
    ck_assert_int_eq(r->steps[1].category, h);
    ck_assert(r->steps[1].unless_compute_like);
    ck_assert_int_eq(r->steps[2].category, q);
    ck_assert_int_eq(r->steps[3].category, kd_rules_default()->steps[0].category);
    ck_assert_uint_eq(r->n_steps, 3 + kd_rules_default()->n_steps);
    kd_rules_owned_free(o);
}
END_TEST

/* ---- a base category: extended, replaced, a regex ------------------------------ */

START_TEST(test_extend_communication)
{
    const kd_rules *d = kd_rules_default();
    ck_assert_int_eq(kd_rules_classify(d, "zcomm_send_recv_v2"), KD_CAT_OTHER);
    kd_rules_owned *o = load_ok("[category communication]\nstrong = zcomm_, my_custom_\n");
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_uint_eq(r->n_categories, KD_CAT_COUNT);
    ck_assert_int_eq(kd_rules_classify(r, "zcomm_send_recv_v2"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "my_custom_allreduce_xyz"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "My_Custom_Gather"), KD_CAT_COMMUNICATION);
    /* the base's keywords stay, in the base's places */
    ck_assert_uint_eq(r->n_steps, d->n_steps);
    expect_same_classes(d, r, "default extended");
    /* on the reference, hcom_ names become communication */
    kd_rules_owned_free(o);
    o = load_ok("[rules]\nbase = reference\n[category communication]\nstrong = hcom_\n");
    r = kd_rules_owned_get(o);
    ck_assert_int_eq(kd_rules_classify(kd_rules_reference(), "hcom_send_recv_v2"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(r, "hcom_send_recv_v2"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "moe_dispatch"), KD_CAT_COMMUNICATION);
    expect_same_classes_but(kd_rules_reference(), r, "reference extended", "hcom_");
    /* default name: the path; source: the path and the hash */
    ck_assert_ptr_nonnull(strstr(r->source, " (hash "));
    ck_assert(strncmp(r->source, r->name, strlen(r->name)) == 0);
    ck_assert_str_eq(r->source + strlen(r->name), strstr(r->source, " (hash "));
    ck_assert_uint_eq(strlen(r->source), strlen(r->name) + strlen(" (hash 0123456789abcdef)"));
    kd_rules_owned_free(o);
}
END_TEST

START_TEST(test_replace)
{
    kd_rules_owned *o = load_ok("[rules]\nbase = reference\n"
                                "[category communication]\nreplace = true\nstrong = hcom_\n");
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_int_eq(kd_rules_classify(r, "hcom_allgather"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "ncclDevKernel_AllReduce"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(r, "moe_dispatch"), KD_CAT_OTHER); /* the weak keywords too */
    ck_assert_uint_eq(r->n_steps, kd_rules_reference()->n_steps - 1);
    kd_rules_owned_free(o);
    /* replace = false: extended */
    o = load_ok("[category communication]\nreplace = no\nstrong = hcom_\n");
    ck_assert_int_eq(kd_rules_classify(kd_rules_owned_get(o), "ncclDevKernel"), KD_CAT_COMMUNICATION);
    kd_rules_owned_free(o);
}
END_TEST

START_TEST(test_regex)
{
    kd_rules_owned *o = load_ok("[category memory]\n"
                                "regex = ^kd_xfer_[0-9]+$\n"
                                "regex = (^|_)h2d_xfer\n"
                                "[category attention]\n"
                                "kind = compute\n"
                                "regex = ^zeta(_[a-z]+)+_run$\n");
    const kd_rules *r = kd_rules_owned_get(o);
    int att = kd_rules_category_index(r, "attention");
    ck_assert_int_eq(kd_rules_classify(r, "KD_XFER_12"), KD_CAT_MEMORY); /* on the lowered name */
    ck_assert_int_eq(kd_rules_classify(r, "kd_xfer_x"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(r, "pre_h2d_xfer_kernel"), KD_CAT_MEMORY);
    ck_assert_int_eq(kd_rules_classify(r, "memcpy_async"), KD_CAT_MEMORY);
    ck_assert_int_eq(kd_rules_classify(r, "zeta_qk_pv_run"), att);
    ck_assert_int_eq(kd_rules_classify(r, "xzeta_qk_run"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(r, "zeta_q1_run"), KD_CAT_OTHER);
    kd_rules_owned_free(o);
}
END_TEST

/* ---- [order], [match], name ------------------------------------------------------- */

START_TEST(test_order)
{
    const kd_rules *ref = kd_rules_reference();
    ck_assert_int_eq(kd_rules_classify(ref, "nccl_memcpy_kernel"), KD_CAT_MEMORY);
    ck_assert_int_eq(kd_rules_classify(ref, "gemm_rmsnorm"), KD_CAT_COMPUTE);
    kd_rules_owned *o = load_ok("[rules]\nbase = reference\n"
                                "[order]\n"
                                "steps = communication, memory, elementwise, compute:strong, memory:weak,\n"
                                "    communication:weak\n");
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_int_eq(kd_rules_classify(r, "nccl_memcpy_kernel"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "gemm_rmsnorm"), KD_CAT_ELEMENTWISE);
    ck_assert_uint_eq(r->n_steps, 6);
    kd_rules_owned_free(o);
    /* a new category placed last; "other" names an empty step */
    o = load_ok("[rules]\nbase = reference\n"
                "[category attention]\nkind = compute\nstrong = flash_attn\n"
                "[order]\n"
                "steps = memory, communication, compute, elementwise, memory:weak, communication:weak, "
                "attention, other\n");
    r = kd_rules_owned_get(o);
    ck_assert_int_eq(kd_rules_classify(r, "flash_attn_fwd"), KD_CAT_COMPUTE); /* "flash" first */
    ck_assert_int_eq(r->steps[6].category, kd_rules_category_index(r, "attention"));
    ck_assert_uint_eq(r->n_steps, 7);
    kd_rules_owned_free(o);
}
END_TEST

/* a category's further steps of a strength: strong2..., CAT:strong2 */
START_TEST(test_tiers)
{
    kd_rules_owned *o = load_ok("[rules]\nbase = reference\n"
                                "[category compute]\n"
                                "strong2 = zz_gemm_lib\n"
                                "regex2 = ^yy[0-9]+$\n"
                                "[category communication]\n"
                                "weak2 = sendrecv\n"
                                "[order]\n"
                                "steps = compute:strong2, memory, communication, compute, elementwise,\n"
                                "    memory:weak, communication:weak, communication:weak2\n");
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_uint_eq(r->n_steps, 8);
    ck_assert_int_eq(r->steps[0].category, KD_CAT_COMPUTE);
    ck_assert_ptr_nonnull(r->steps[0].regex);
    ck_assert_int_eq(kd_rules_classify(r, "zz_gemm_lib_memcpy"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "YY42"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "sendrecv_kernel"), KD_CAT_COMMUNICATION);
    /* a weak step: not when compute-like (the guard has the tier's keywords) */
    ck_assert_int_eq(kd_rules_classify(r, "zz_gemm_lib_sendrecv"), KD_CAT_COMPUTE);
    ck_assert_int_eq(r->steps[7].category, KD_CAT_COMMUNICATION);
    ck_assert(r->steps[7].unless_compute_like);
    bool guarded = false;
    for (size_t i = 0; r->compute_like[i]; i++)
        guarded = guarded || strcmp(r->compute_like[i], "zz_gemm_lib") == 0;
    ck_assert(guarded);
    kd_rules_owned_free(o);
    /* without [order]: the new steps first, strong tiers then weak ones */
    o = load_ok("[rules]\nbase = reference\n[category compute]\nweak2 = b\nstrong3 = a\n");
    r = kd_rules_owned_get(o);
    ck_assert_uint_eq(r->n_steps, 8);
    ck_assert_str_eq(r->steps[0].keywords[0], "a");
    ck_assert(!r->steps[0].unless_compute_like);
    ck_assert_str_eq(r->steps[1].keywords[0], "b");
    ck_assert(r->steps[1].unless_compute_like);
    kd_rules_owned_free(o);
    /* the default's steps of a category are reachable one by one: every
     * name the default calls elementwise still is, with one more keyword */
    o = load_ok("[category elementwise]\nstrong2 = zz_elt\n");
    r = kd_rules_owned_get(o);
    ck_assert_int_eq(kd_rules_classify(r, "zz_elt_kernel"), KD_CAT_ELEMENTWISE);
    expect_same_classes(kd_rules_default(), r, "default, elementwise extended");
    kd_rules_owned_free(o);
}
END_TEST

START_TEST(test_match_and_name)
{
    kd_rules_owned *o = load_ok("[rules]\n"
                                "name = rocm stack ; a comment\n"
                                "[match]\n"
                                "aiter::fmha_fwd* = sage_fwd*   ; the rewrite\n"
                                "old_kernel=new_kernel\n"
                                "void foo<*>(*) = void bar<*>(*)\n");
    const kd_rules *r = kd_rules_owned_get(o);
    ck_assert_str_eq(r->name, "rocm stack");
    ck_assert_uint_eq(r->n_match_rules, 3);
    ck_assert_str_eq(r->match_rules[0], "aiter::fmha_fwd*=sage_fwd*");
    ck_assert_str_eq(r->match_rules[1], "old_kernel=new_kernel");
    ck_assert_str_eq(r->match_rules[2], "void foo<*>(*)=void bar<*>(*)");
    kd_rules_owned_free(o);
}
END_TEST

START_TEST(test_resolve)
{
    const kd_rules *r = NULL;
    kd_rules_owned *owned = (kd_rules_owned *)1;
    kd_error err = {0};
    ck_assert_int_eq(kd_rules_resolve("default", &r, &owned, &err), KD_OK);
    ck_assert_ptr_eq(r, kd_rules_default());
    ck_assert_ptr_null(owned);
    ck_assert_int_eq(kd_rules_resolve("reference", &r, &owned, &err), KD_OK);
    ck_assert_ptr_eq(r, kd_rules_reference());
    char *path = write_tmp(attention_file);
    ck_assert_int_eq(kd_rules_resolve(path, &r, &owned, &err), KD_OK);
    ck_assert_ptr_nonnull(owned);
    ck_assert_ptr_eq(r, kd_rules_owned_get(owned));
    ck_assert_str_eq(r->name, "attn-stack");
    kd_rules_owned_free(owned);
    ck_assert_int_eq(kd_rules_resolve("/nonexistent/kd/rules.ini", &r, &owned, &err), KD_EINPUT);
    ck_assert_ptr_null(owned);
    ck_assert_str_eq(err.msg, "/nonexistent/kd/rules.ini: cannot open: No such file or directory");
    unlink(path);
    free(path);
}
END_TEST

/* the same bytes, the same hash; one byte more, another */
START_TEST(test_source_hash)
{
    kd_rules_owned *a = load_ok(attention_file), *b = load_ok(attention_file);
    char text[sizeof attention_file + 2];
    snprintf(text, sizeof text, "%s\n", attention_file);
    kd_rules_owned *c = load_ok(text);
    const char *ha = strstr(kd_rules_owned_get(a)->source, "(hash "), *hb = strstr(kd_rules_owned_get(b)->source, "(hash "),
               *hc = strstr(kd_rules_owned_get(c)->source, "(hash ");
    ck_assert_str_eq(ha, hb);
    ck_assert_str_ne(ha, hc);
    kd_rules_owned_free(a);
    kd_rules_owned_free(b);
    kd_rules_owned_free(c);
}
END_TEST

/* what inih reads as it does: a UTF-8 BOM, CRLF lines, white space in a
 * header, ';' and '#' comments, a list continued on indented lines (an
 * inline comment cut there too), "::" in a match glob */
START_TEST(test_syntax_details)
{
    kd_rules_owned *o = load_ok("\xef\xbb\xbf; a BOM first\r\n"
                                "[ rules ]\r\n"
                                "name = crlf\r\n"
                                "[ category   attention ]\r\n"
                                "kind = compute ; the kind\r\n"
                                "strong = fmha,\r\n"
                                "\tsage_fwd ; continued\r\n"
                                "# a comment\r\n"
                                "    , flash_attn\r\n"
                                "regex = ^x:y$\r\n"
                                "\r\n"
                                "[match]\r\n"
                                "void a::b<*> = void c::d<*>\r\n");
    const kd_rules *r = kd_rules_owned_get(o);
    int att = kd_rules_category_index(r, "attention");
    ck_assert_int_eq(att, KD_CAT_COUNT);
    ck_assert_str_eq(r->name, "crlf");
    ck_assert_ptr_nonnull(r->steps[0].keywords);
    ck_assert_str_eq(r->steps[0].keywords[0], "fmha");
    ck_assert_str_eq(r->steps[0].keywords[1], "sage_fwd");
    ck_assert_str_eq(r->steps[0].keywords[2], "flash_attn");
    ck_assert_ptr_null(r->steps[0].keywords[3]);
    ck_assert_int_eq(kd_rules_classify(r, "X:Y"), att);
    ck_assert_uint_eq(r->n_match_rules, 1);
    ck_assert_str_eq(r->match_rules[0], "void a::b<*>=void c::d<*>");
    kd_rules_owned_free(o);
    /* an empty file is the base, named by its path */
    o = load_ok("");
    r = kd_rules_owned_get(o);
    expect_same_classes(kd_rules_default(), r, "an empty file");
    ck_assert_uint_eq(r->n_steps, kd_rules_default()->n_steps);
    kd_rules_owned_free(o);
}
END_TEST

/* ---- round trip ------------------------------------------------------------------------ */

START_TEST(test_round_trip_builtin)
{
    const kd_rules *builtin[] = {kd_rules_default(), kd_rules_reference()};
    for (size_t i = 0; i < 2; i++) {
        char *text;
        kd_rules_owned *o = round_trip(builtin[i], &text);
        const kd_rules *r = kd_rules_owned_get(o);
        expect_same_classes(builtin[i], r, builtin[i]->name);
        ck_assert_str_eq(r->name, builtin[i]->name);
        ck_assert_uint_eq(r->n_categories, builtin[i]->n_categories);
        ck_assert_uint_eq(r->n_steps, builtin[i]->n_steps);
        /* step by step: the same category, strength and keywords */
        for (size_t k = 0; k < r->n_steps; k++) {
            const kd_class_step *a = &builtin[i]->steps[k], *b = &r->steps[k];
            ck_assert_int_eq(a->category, b->category);
            ck_assert_int_eq(a->unless_compute_like, b->unless_compute_like);
            size_t n = 0;
            for (; a->keywords[n]; n++)
                ck_assert_str_eq(a->keywords[n], b->keywords[n]);
            ck_assert_ptr_null(b->keywords[n]);
        }
        ck_assert_ptr_nonnull(strstr(text, "[rules]\nbase = reference\n"));
        ck_assert_ptr_nonnull(strstr(text, "[order]\nsteps = "));
        /* written again, the same text but for the first line (the source) */
        char *text2;
        kd_rules_owned *o2 = round_trip(r, &text2);
        ck_assert_str_eq(strchr(text, '\n'), strchr(text2, '\n'));
        kd_rules_owned_free(o2);
        free(text2);
        free(text);
        kd_rules_owned_free(o);
    }
}
END_TEST

START_TEST(test_round_trip_file)
{
    kd_rules_owned *o = load_ok("[rules]\nbase = reference\nname = mine\n"
                                "[category attention]\nkind = compute\nstrong = fmha, flash_attn, sage_fwd\n"
                                "[category communication]\nstrong = hcom_\nweak = \" send\", \"a,b\"\n"
                                "[category memory]\nregex = ^kd_copy_[0-9]+$\nregex = h2d\n"
                                "[category quant]\nkind = elementwise\nweak = dequant, #x\n"
                                "[category nothing]\nkind = other\n"
                                "[match]\naiter::fmha_fwd* = sage_fwd*\n");
    const kd_rules *r = kd_rules_owned_get(o);
    kd_rules_owned *back = round_trip(r, NULL);
    const kd_rules *b = kd_rules_owned_get(back);
    expect_same_classes(r, b, "a file's profile");
    ck_assert_int_eq(kd_rules_classify(b, "x send y"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(b, "xa,by"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(b, "xsend"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(b, "#x"), kd_rules_category_index(b, "quant"));
    ck_assert_str_eq(b->name, "mine");
    ck_assert_uint_eq(b->n_categories, r->n_categories);
    for (kd_category c = 0; c < r->n_categories; c++) {
        ck_assert_str_eq(kd_rules_category_name(b, c), kd_rules_category_name(r, c));
        ck_assert_int_eq(kd_rules_kind(b, c), kd_rules_kind(r, c));
    }
    ck_assert_uint_eq(b->n_steps, r->n_steps);
    for (size_t i = 0; i < r->n_steps; i++) {
        ck_assert_int_eq(b->steps[i].category, r->steps[i].category);
        ck_assert_int_eq(b->steps[i].unless_compute_like, r->steps[i].unless_compute_like);
        ck_assert_int_eq(b->steps[i].regex != NULL, r->steps[i].regex != NULL);
    }
    ck_assert_uint_eq(b->n_match_rules, 1);
    ck_assert_str_eq(b->match_rules[0], "aiter::fmha_fwd*=sage_fwd*");
    kd_rules_owned_free(back);
    kd_rules_owned_free(o);
}
END_TEST

/* ---- malformed files ------------------------------------------------------------- */

START_TEST(test_errors)
{
    expect_error("[rules]\nbogus = 1\n", 2, "unknown key");
    expect_error("[category memory]\nstrong = a\nstrnog = b\n", 3, "unknown key");
    expect_error("[order]\nstep = memory\n", 2, "unknown key");
    expect_error("[rules]\nbase = default\n\n[stuff]\n", 4, "unknown section");
    expect_error("[category]\n", 1, "without a name");
    expect_error("[category Attention]\nkind = compute\n", 1, "bad category name");
    expect_error("[category memory]\nregex = ([a\n", 2, "bad regex");
    expect_error("[category memory]\nregex = (a)\\1\n", 2, "bad regex");
    expect_error("[rules]\nbase =\n", 2, "missing base");
    expect_error("[rules]\nbase = nope\n", 2, "unknown base");
    expect_error("[rules]\nbase = default\nbase = reference\n", 3, "duplicate key");
    expect_error("[rules]\nname = x\n[category memory]\nstrong = a\n[rules]\n", 5, "duplicate section");
    expect_error("[category memory]\n[category memory]\n", 2, "duplicate section");
    expect_error("[match]\na = b\n[match]\n", 3, "duplicate section");
    expect_error("; new\n[category attention]\nstrong = fmha\n", 2, "without kind");
    expect_error("[category attention]\nkind = gpu\n", 2, "bad kind");
    expect_error("[category attention]\nkind = compute\nkind = memory\n", 3, "duplicate key");
    expect_error("[category compute]\nkind = memory\n", 2, "kind cannot change");
    expect_error("[category memory]\nreplace = maybe\n", 2, "replace");
    expect_error("[order]\nsteps = memory, communication,\n    nosuch, compute\n", 3, "unknown step");
    expect_error("[order]\nsteps = memory:strongest\n", 2, "unknown step");
    expect_error("[order]\nsteps = memory:weak0\n", 2, "unknown step");
    expect_error("[category memory]\nstrong100 = x\n", 2, "unknown key");
    expect_error("[category memory]\nstrong02 = x\n", 2, "unknown key");
    expect_error("[order]\nsteps = memory, memory\n", 2, "twice");
    expect_error("[rules]\nbase = reference\n[order]\nsteps = memory, communication, compute, elementwise,\n"
                 "    memory:weak\n",
                 3, "leaves out step 'communication:weak'");
    expect_error("[match]\nfoo =\n", 2, "empty side");
    expect_error("[match]\n= bar\n", 2, "empty side");
    expect_error("[match]\nfoo:bar\n", 2, "without '='");
    expect_error("[match]\na = b = c\n", 2, "more than one '='");
    expect_error("name = x\n", 1, "before any section");
    expect_error("[rules]\nname\n", 2, "expected NAME = VALUE");
    expect_error("[rules\nname = x\n", 1, "without ']'");
    expect_error("[category x]\nkind = compute\nstrong = \"abc\n", 3, "unterminated");
    expect_error("[category x]\nkind = compute\nstrong = \"\"\n", 3, "empty keyword");
    expect_error("[rules]\nname = \xff\n", 2, "UTF-8");
    /* more than KD_CAT_MAX categories: the first one too many */
    char big[4096] = "";
    int line = 0, too_many = 0;
    for (int i = 0; i < KD_CAT_MAX; i++) {
        char sec[64];
        snprintf(sec, sizeof sec, "[category extra%d]\nkind = compute\n", i);
        strcat(big, sec);
        line += 2;
        if (i == KD_CAT_MAX - KD_CAT_COUNT)
            too_many = line - 1;
    }
    expect_error(big, too_many, "too many categories");
    /* a line longer than inih's buffer */
    char longline[512];
    snprintf(longline, sizeof longline, "[category x]\nkind = compute\nstrong = %0300d\n", 7);
    expect_error(longline, 3, "longer than");
    /* the first error of the file is the one reported */
    expect_error("[rules]\nbase = nope\n[stuff]\n", 2, "unknown base");
}
END_TEST

START_TEST(test_unreadable)
{
    kd_rules_owned *o = (kd_rules_owned *)1;
    kd_error err = {0};
    ck_assert_int_eq(kd_rules_load_file("/nonexistent/kd/rules.ini", &o, &err), KD_EINPUT);
    ck_assert_ptr_null(o);
    ck_assert_str_eq(err.msg, "/nonexistent/kd/rules.ini: cannot open: No such file or directory");
    ck_assert_int_eq(kd_rules_load_file("/tmp", &o, &err), KD_EINPUT);
    ck_assert_ptr_null(o);
    ck_assert_ptr_nonnull(strstr(err.msg, "/tmp: cannot read"));
    /* a binary file */
    char *path = write_tmp("[rules]\nna\001me = x\n");
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 10, SEEK_SET);
    fputc(0, f);
    fclose(f);
    ck_assert_int_eq(kd_rules_load_file(path, &o, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, ":2: a NUL byte"));
    unlink(path);
    free(path);
}
END_TEST

/* an allocation failing anywhere: KD_ENOMEM or the same profile, never a crash or a leak */
START_TEST(test_oom)
{
    static const char text[] = "[rules]\nbase = reference\nname = oom\n"
                               "[category attention]\nkind = compute\nstrong = fmha, flash_attn\nregex = ^sage\n"
                               "[category communication]\nreplace = true\nstrong = hcom_\nweak = send\n"
                               "[order]\nsteps = attention, communication, memory, compute, elementwise,\n"
                               "    communication:weak, memory:weak\n"
                               "[match]\na* = b*\n";
    char *path = write_tmp(text);
    for (int mode = 0; mode < 2; mode++) {
        for (long n = 0;; n++) {
            kd_rules_owned *o = NULL;
            kd_error err = {0};
            failalloc_arm(n, mode ? FAILALLOC_FROM : FAILALLOC_ONE);
            kd_status st = kd_rules_load_file(path, &o, &err);
            long failed = failalloc_disarm();
            if (st == KD_OK) {
                const kd_rules *r = kd_rules_owned_get(o);
                ck_assert_int_eq(kd_rules_classify(r, "sage_x"), kd_rules_category_index(r, "attention"));
                ck_assert_int_eq(kd_rules_classify(r, "hcom_send"), KD_CAT_COMMUNICATION);
                ck_assert_uint_eq(r->n_match_rules, 1);
                kd_rules_owned_free(o);
                if (!failed)
                    break;
                continue;
            }
            ck_assert_msg(failed > 0 && st == KD_ENOMEM && strstr(err.msg, "out of memory"),
                          "allocation %ld: %d %s", n, (int)st, err.msg);
            ck_assert_ptr_null(o);
        }
    }
    unlink(path);
    free(path);
}
END_TEST

Suite *rules_file_suite(void)
{
    Suite *s = suite_create("rules_file");
    TCase *load = tcase_create("load");
    tcase_add_test(load, test_new_category);
    tcase_add_test(load, test_new_compute_kind_guards_weak_steps);
    tcase_add_test(load, test_new_category_weak_and_other_kind);
    tcase_add_test(load, test_extend_communication);
    tcase_add_test(load, test_replace);
    tcase_add_test(load, test_regex);
    tcase_add_test(load, test_order);
    tcase_add_test(load, test_tiers);
    tcase_add_test(load, test_match_and_name);
    tcase_add_test(load, test_resolve);
    tcase_add_test(load, test_source_hash);
    tcase_add_test(load, test_syntax_details);
    suite_add_tcase(s, load);
    TCase *write = tcase_create("write");
    tcase_add_test(write, test_round_trip_builtin);
    tcase_add_test(write, test_round_trip_file);
    suite_add_tcase(s, write);
    TCase *bad = tcase_create("malformed");
    tcase_add_test(bad, test_errors);
    tcase_add_test(bad, test_unreadable);
    tcase_add_test(bad, test_oom);
    suite_add_tcase(s, bad);
    return s;
}
