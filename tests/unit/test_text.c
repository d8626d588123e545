/* test_text.c — unit tests of src/text.c: Python str semantics of the PC
 * and OH/KH string helpers (reference §0, §1, §4; kernel-sites.md §2).
 * Expected values were checked against CPython 3.11 running the reference
 * functions. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/text.h"
#include "suites.h"

/* Checks a malloc'd result and frees it. */
#define ASSERT_TEXT(call, want)                                                                \
    do {                                                                                       \
        char *got_ = (call);                                                                   \
        ck_assert_ptr_nonnull(got_);                                                           \
        ck_assert_str_eq(got_, (want));                                                        \
        free(got_);                                                                            \
    } while (0)

typedef struct {
    const char *in;
    const char *want;
} text_case;

typedef char *(*text_fn)(const char *);

static void check_cases(text_fn fn, const text_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = fn(cases[i].in);
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: \"%s\" -> \"%s\", want \"%s\"",
                      i, cases[i].in, got, cases[i].want);
        free(got);
    }
}

#define CHECK_CASES(fn, cases) check_cases((fn), (cases), sizeof(cases) / sizeof((cases)[0]))

/* ---- character classes and UTF-8 ------------------------------------- */

START_TEST(test_is_py_space_set)
{
    static const uint32_t spaces[] = {' ',    '\t',   '\n',   '\v',   '\f',   '\r',   0x1C,
                                      0x1D,   0x1E,   0x1F,   0x85,   0xA0,   0x1680, 0x2000,
                                      0x2005, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    static const uint32_t others[] = {'a', '0', 0x08, 0x1B, 0x7F, 0x200B, 0x180E, 0xFEFF, 0x2060,
                                      KD_UTF8_INVALID};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        ck_assert_msg(kd_is_py_space(spaces[i]), "U+%04X", (unsigned)spaces[i]);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        ck_assert_msg(!kd_is_py_space(others[i]), "U+%04X", (unsigned)others[i]);
}
END_TEST

START_TEST(test_utf8_decode)
{
    uint32_t cp = 0;
    ck_assert_uint_eq(kd_utf8_decode("a", 1, &cp), 1);
    ck_assert_uint_eq(cp, 'a');
    ck_assert_uint_eq(kd_utf8_decode("\xc3\xa9", 2, &cp), 2);
    ck_assert_uint_eq(cp, 0xE9);
    ck_assert_uint_eq(kd_utf8_decode("\xe2\x82\xac", 3, &cp), 3);
    ck_assert_uint_eq(cp, 0x20AC);
    ck_assert_uint_eq(kd_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
    ck_assert_uint_eq(cp, 0x1F600);
    /* invalid: stray continuation, overlong space, truncated, bad lead */
    const char *bad[] = {"\x80", "\xc0\xa0", "\xe2\x82", "\xff", "\xf5\x80\x80\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_uint_eq(kd_utf8_decode(bad[i], strlen(bad[i]), &cp), 1);
        ck_assert_uint_eq(cp, KD_UTF8_INVALID);
    }
    ck_assert_uint_eq(kd_utf8_decode("", 0, &cp), 0);
}
END_TEST

/* product.md §7: the loader refuses what yajl's lexer lets through */
START_TEST(test_utf8_input_valid)
{
    const char *good[] = {"", "plain ascii", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "\xed\xb0\x80" /* low: an escape */};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(kd_utf8_input_valid(good[i], strlen(good[i])), "good %zu", i);
    const char *bad[] = {"a\xc0\xaf" "b", "\xed\xa0\x80", "\xf4\x90\x80\x80", "x\x80", "\xe2\x82"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!kd_utf8_input_valid(bad[i], strlen(bad[i])), "bad %zu", i);
}
END_TEST

START_TEST(test_unicode_decimal)
{
    ck_assert_int_eq(kd_unicode_decimal('7'), 7);
    ck_assert_int_eq(kd_unicode_decimal(0x661), 1);   /* ARABIC-INDIC ONE */
    ck_assert_int_eq(kd_unicode_decimal(0xFF19), 9);  /* FULLWIDTH NINE */
    ck_assert_int_eq(kd_unicode_decimal(0x1D7CE), 0); /* MATHEMATICAL BOLD ZERO */
    ck_assert_int_eq(kd_unicode_decimal(0x1FBF9), 9);
    ck_assert_int_eq(kd_unicode_decimal('a'), -1);
    ck_assert_int_eq(kd_unicode_decimal(0xB2), -1); /* SUPERSCRIPT TWO is not Nd */
    ck_assert_int_eq(kd_unicode_decimal(0x66A), -1);
    ck_assert_int_eq(kd_unicode_decimal(KD_UTF8_INVALID), -1);
}
END_TEST

START_TEST(test_utf8_len_counts_code_points)
{
    ck_assert_uint_eq(kd_utf8_len(""), 0);
    ck_assert_uint_eq(kd_utf8_len("abc"), 3);
    ck_assert_uint_eq(kd_utf8_len("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), 4);
    ck_assert_uint_eq(kd_utf8_len("\xff\xfe"), 2); /* each invalid byte is one */
}
END_TEST

/* ---- strip / normalize_text / lower ----------------------------------- */

START_TEST(test_normalize_text)
{
    static const text_case cases[] = {
        {"  a  b \t c ", "a b c"},
        {"a\xc2\xa0 b", "a b"},                 /* an ASCII space triggers the split */
        {"a\xc2\xa0" "b", "a\xc2\xa0" "b"},     /* a lone U+00A0 survives */
        {"\xc2\xa0" "a\xe3\x80\x80", "a"},      /* but strip() removes it at the ends */
        {"a\xe3\x80\x80\xe3\x80\x80" "b", "a\xe3\x80\x80\xe3\x80\x80" "b"},
        {"a\x1c b", "a b"},                     /* 0x1c splits... */
        {"a\x1c" "b", "a\x1c" "b"},             /* ...but does not trigger a split */
        {"x\n\ny", "x y"},
        {"", ""},
        {" \t\n ", ""},
        {"\xff  a", "\xff a"},                  /* invalid bytes are not spaces */
        {"plain", "plain"},
    };
    CHECK_CASES(kd_normalize_text, cases);
}
END_TEST

START_TEST(test_strip)
{
    static const text_case cases[] = {
        {"  a  b  ", "a  b"},
        {"\xe3\x80\x80x\xe2\x80\x83", "x"},
        {"\x1f" "x\xc2\x85", "x"},
        {"   ", ""},
        {"x", "x"},
    };
    CHECK_CASES(kd_strip, cases);
}
END_TEST

START_TEST(test_lower)
{
    static const text_case cases[] = {
        {"GEMM_Kernel<Float>", "gemm_kernel<float>"},
        {"\xc3\x89t\xc3\xa9", "\xc3\x89t\xc3\xa9"}, /* other non-ASCII unchanged */
        {"MOE_\xe2\x84\xaa" "ERNEL", "moe_kernel"}, /* KELVIN SIGN -> k */
        {"\xc4\xb0X", "i\xcc\x87x"},                /* U+0130 -> i + U+0307 */
        {"", ""},
    };
    CHECK_CASES(kd_lower, cases);
}
END_TEST

START_TEST(test_prefix_suffix_keywords)
{
    ck_assert(kd_starts_with("void f", "void "));
    ck_assert(kd_starts_with("abc", ""));
    ck_assert(!kd_starts_with("voi", "void"));
    ck_assert(kd_ends_with("f(int)", ")"));
    ck_assert(!kd_ends_with(")", "))"));
    static const char *const kws[] = {"gemm", "nccl", NULL};
    ck_assert(kd_contains_any("xx_gemm_yy", kws));
    ck_assert(!kd_contains_any("xx_GEMM_yy", kws)); /* case-sensitive */
    ck_assert(!kd_contains_any("", kws));
    ck_assert(!kd_contains_any("gemm", NULL));
}
END_TEST

/* ---- short_name -------------------------------------------------------- */

START_TEST(test_short_name)
{
    ASSERT_TEXT(kd_short_name("abcdefghij", 10), "abcdefghij");
    ASSERT_TEXT(kd_short_name("abcdefghijk", 10), "abcdefg...");
    /* code points, not bytes: 11 x U+00E9 */
    ASSERT_TEXT(kd_short_name("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                              "\xc3\xa9\xc3\xa9\xc3\xa9",
                              10),
                "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
    ASSERT_TEXT(kd_short_name("\xe2\x82\xac\xe2\x82\xac", 2), "\xe2\x82\xac\xe2\x82\xac");
    ASSERT_TEXT(kd_short_name("  a   b  ", 80), "a b"); /* normalized first */
    /* max_len < 3: Python's name[:max_len-3] counts from the end */
    ASSERT_TEXT(kd_short_name("abcd", 2), "abc...");
    ASSERT_TEXT(kd_short_name("abcd", 0), "a...");
    ASSERT_TEXT(kd_short_name("ab", 0), "...");
}
END_TEST

/* ---- hex addresses and canonical kernel names -------------------------- */

START_TEST(test_replace_hex_addr)
{
    static const text_case cases[] = {
        {"at 0x7f3aBC end", "at 0xADDR end"},
        {"0X12", "0X12"},                /* lowercase x only */
        {"0x", "0x"},
        {"0xg", "0xg"},
        {"a0x1b0x2c", "a0xADDRx2c"},     /* greedy hex run, then no 0 before x */
        {"00x1", "00xADDR"},
        {"0xADDR", "0xADDRR"},           /* not a fixed point: ADD are hex digits */
        {"", ""},
    };
    CHECK_CASES(kd_replace_hex_addr, cases);
}
END_TEST

START_TEST(test_canonicalize_kernel_name)
{
    static const text_case cases[] = {
        {"void f<int> (int)", "void f<int> "},    /* trailing space kept */
        {"void k(float*, int)", "void k"},
        {"void k<(1)>(a, (b))", "void k<(1)>"},   /* cut at the balancing '(' */
        {"void f(a(b)", "void f(a"},
        {"void f)", "void f)"},                    /* depth never returns to 0 */
        {"void f(a))", "void f(a))"},
        {"kernel(int)", "kernel(int)"},            /* not a "void " name */
        {"void f(int) const", "void f(int) const"}, /* does not end with ')' */
        {"void k<0x7f>(0x10)", "void k<0xADDR>"},
        {"  void   f (int)  ", "void f "},         /* normalized first */
        {"ampere_sgemm_128x64", "ampere_sgemm_128x64"},
        {"", ""},
    };
    CHECK_CASES(kd_canonicalize_kernel_name, cases);
    /* re-canonicalizing is not idempotent on 0xADDR (reference §4) */
    char *once = kd_canonicalize_kernel_name("p 0x10");
    ASSERT_TEXT(kd_canonicalize_kernel_name(once), "p 0xADDRR");
    free(once);
}
END_TEST

/* ---- python scope names and source locations --------------------------- */

START_TEST(test_canonicalize_python_scope_name)
{
    static const text_case cases[] = {
        {"/w/sglang/python/sglang/srt/l.py(450): forward", "python/sglang/srt/l.py(450): forward"},
        {" /x/vllm/a.py(7):  g  h ", "vllm/a.py(7): g h"},
        {"a(1): b(2): c", "a(1): b(2): c"},         /* shortest path */
        {"p(a)(3): f", "p(a)(3): f"},               /* '(' not followed by digits is skipped */
        {"obj at 0x7f(3): f", "obj at 0xADDR(3): f"},
        {"x(12): ", "x(12):"},                      /* strip leaves no function */
        {"(1): x", "(1): x"},                       /* the path needs one character */
        {"a(1):b", "a(1):b"},
        {"a(\xd9\xa1\xd9\xa2): f", "a(\xd9\xa1\xd9\xa2): f"}, /* \d is Unicode */
        {"nn.Module: Linear", "nn.Module: Linear"},
        {"C:\\src\\sgl_kernel\\ops.py(9): run", "sgl_kernel/ops.py(9): run"},
    };
    CHECK_CASES(kd_canonicalize_python_scope_name, cases);
}
END_TEST

START_TEST(test_normalize_source_location)
{
    static const text_case cases[] = {
        {"/w/sglang/python/sglang/srt/l.py(450): forward", "python/sglang/srt/l.py:450 forward"},
        {"a(1): b(2): c", "a:1 b(2): c"},
        {"p(a)(3): f", "p(a):3 f"},
        {"obj at 0x7f(3): f", "obj at 0x7f:3 f"},   /* no hex rewriting in KH */
        {"python/sglang/a.py:5 f(2): g", "python/sglang/a.py:5 f:2 g"},
        {"a(\xd9\xa1\xd9\xa2): f", "a:\xd9\xa1\xd9\xa2 f"},
        {"x(12): ", "x(12):"},
        {"no location", "no location"},
        {"", ""},
    };
    CHECK_CASES(kd_normalize_source_location, cases);
}
END_TEST

START_TEST(test_normalize_repo_relative_path)
{
    static const text_case cases[] = {
        {"/x/vllm/a/sgl_kernel/b.py", "sgl_kernel/b.py"},        /* marker order beats position */
        {"/a/python/sglang/srt/x.py", "python/sglang/srt/x.py"},
        {"/a/Python/SGLang/Srt/X.py", "python/sglang/Srt/X.py"}, /* suffix keeps its case */
        {"/home/u/SGLang/srt/x.py", "python/SGLang/srt/x.py"},   /* sglang/ fallback */
        {"C:\\work\\vllm\\x.py", "vllm/x.py"},
        {"/opt/TensorRT-LLM/tensorrt_llm/a.py", "tensorrt_llm/a.py"},
        {"/opt/TensorRT-LLM/x.py", "tensorrt_llm/x.py"},
        {"/w/tokenspeed/python/tokenspeed/m.py", "python/tokenspeed/m.py"},
        {"/w/TokenSpeed/m.py", "tokenspeed/m.py"},
        {"vllm//x", "vllm/x"},
        {"///a/b", "a/b"},
        {"/usr/lib/python3.12/threading.py", "usr/lib/python3.12/threading.py"},
        {"  /a/vllm/x y.py  ", "vllm/x y.py"},
        {"/a/sgl_\xe2\x84\xaa" "ernel/b.py", "sgl_kernel/b.py"}, /* lower() of KELVIN SIGN */
        /* U+0130 lowers to two code points, so Python's index lands one
         * character late in the original text */
        {"\xc4\xb0sglang/x", "python/glang/x"},
        {"", ""},
    };
    CHECK_CASES(kd_normalize_repo_relative_path, cases);
}
END_TEST

START_TEST(test_compact_match_text)
{
    static const text_case cases[] = {
        {"  Fused_MoE-Kernel<\xc3\xa9> 0x1 ", "fusedmoekernel0x1"},
        {"A.B c", "abc"},
        {"---", ""},
    };
    CHECK_CASES(kd_compact_match_text, cases);
}
END_TEST

/* ---- categories --------------------------------------------------------- */

START_TEST(test_category_names_and_priorities)
{
    static const char *const names[] = {"compute", "communication", "memory", "elementwise",
                                        "other"};
    static const int prio[] = {4, 3, 2, 1, 0};
    for (int c = 0; c < KD_CAT_COUNT; c++) {
        ck_assert_str_eq(kd_category_name((kd_category)c), names[c]);
        ck_assert_int_eq(kd_category_priority((kd_category)c), prio[c]);
    }
}
END_TEST

static const struct {
    const char *name;
    kd_category oh;
    const char *kh;
} classify_cases[] = {
    {"ncclDevKernel_AllReduce_Sum_f32", KD_CAT_COMMUNICATION, "communication"},
    {"Memcpy DtoH (Device -> Pinned)", KD_CAT_MEMORY, "memory"},
    {"memcpy_gemm", KD_CAT_MEMORY, "memory"},            /* OH: memory strong first */
    {"all_gather_gemm", KD_CAT_COMMUNICATION, "communication"},
    {"triton_poi_fused_add_0", KD_CAT_COMPUTE, "other"}, /* OH: triton is compute */
    {"triton_red_fused_copy", KD_CAT_COMPUTE, "memory"}, /* KH: copy and not compute-like */
    {"sm90_xmma_gemm_bf16", KD_CAT_COMPUTE, "gemm"},
    {"nvjet_tst_128x256", KD_CAT_OTHER, "gemm"},
    {"GEMM_upper", KD_CAT_COMPUTE, "gemm"},              /* lowered first */
    {"gemm_copy", KD_CAT_COMPUTE, "gemm"},               /* KH: compute hint blocks memory */
    {"fill_attention", KD_CAT_COMPUTE, "attention"},
    {"flash_fwd_kernel", KD_CAT_COMPUTE, "other"},
    {"mamba_chunk_scan", KD_CAT_OTHER, "hybrid_linear"},
    {"fused_moe_kernel", KD_CAT_COMPUTE, "moe"},
    {"moe_dispatch", KD_CAT_COMMUNICATION, "moe"},       /* OH weak comm; KH pattern first */
    {"rmsnorm_kernel", KD_CAT_ELEMENTWISE, "norm"},
    {"fused_add norm", KD_CAT_ELEMENTWISE, "norm"},      /* KH " norm" */
    {"rotary_embedding", KD_CAT_ELEMENTWISE, "rope"},
    {"topk_softmax", KD_CAT_ELEMENTWISE, "softmax"},     /* category order, not keyword position */
    {"silu_and_mul", KD_CAT_ELEMENTWISE, "activation"},
    {"per_token_quant_fp8", KD_CAT_OTHER, "quantize"},
    {"argmax_kernel", KD_CAT_OTHER, "reduce_topk"},
    {"prepare_inputs_kernel", KD_CAT_OTHER, "sampling_io"},
    {"copy_next", KD_CAT_MEMORY, "memory"},
    {"fill_kernel", KD_CAT_MEMORY, "memory"},
    {"void at::native::vectorized_elementwise_kernel<4>(int)", KD_CAT_ELEMENTWISE, "elementwise"},
    {"index_select_kernel", KD_CAT_ELEMENTWISE, "other"},
    {"dispatch_kernel", KD_CAT_COMMUNICATION, "communication"},
    {"broadcast_kernel", KD_CAT_COMMUNICATION, "communication"},
    {"a2a_combine", KD_CAT_COMMUNICATION, "communication"},
    {"cudaMemsetAsync", KD_CAT_MEMORY, "memory"},
    {"void foo(int)", KD_CAT_OTHER, "other"},
    {"foo", KD_CAT_OTHER, "other"},
    {"", KD_CAT_OTHER, "other"},
};

START_TEST(test_classify_kernel_oh_and_kh)
{
    for (size_t i = 0; i < sizeof classify_cases / sizeof classify_cases[0]; i++) {
        kd_category oh = kd_classify_kernel(classify_cases[i].name);
        ck_assert_msg(oh == classify_cases[i].oh, "OH %s -> %s", classify_cases[i].name,
                      kd_category_name(oh));
        const char *kh = kd_classify_kernel_kh(classify_cases[i].name);
        ck_assert_msg(strcmp(kh, classify_cases[i].kh) == 0, "KH %s -> %s",
                      classify_cases[i].name, kh);
    }
}
END_TEST

START_TEST(test_kernel_name_hint)
{
    const char *yes[] = {"void foo", "ampere_sgemm", "sm80_xmma", "sm90_x", "triton_poi",
                         "fill", "my_allgather", "cudnn_conv", "x_dispatch",
                         ("moe_\xe2\x84\xaa" "ernel") /* ASCII-lowered KELVIN SIGN */};
    const char *no[] = {"elementwise_kernel", "rmsnorm", "mykernel", "void", "sm70_x", ""};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(kd_kernel_name_hint(yes[i]), "%s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!kd_kernel_name_hint(no[i]), "%s", no[i]);
}
END_TEST

/* ---- PC predicates ------------------------------------------------------ */

START_TEST(test_trace_metadata_name_is_exact)
{
    ck_assert(kd_is_trace_metadata_name("process_name"));
    ck_assert(kd_is_trace_metadata_name("thread_name"));
    ck_assert(kd_is_trace_metadata_name("process_sort_index"));
    ck_assert(kd_is_trace_metadata_name("thread_sort_index"));
    ck_assert(!kd_is_trace_metadata_name(" process_name"));
    ck_assert(!kd_is_trace_metadata_name("Thread_name"));
    ck_assert(!kd_is_trace_metadata_name("process_labels"));
}
END_TEST

START_TEST(test_annotation_event)
{
    ck_assert(kd_is_annotation_event("x", "gpu_user_annotation"));
    ck_assert(kd_is_annotation_event("x", " User_Annotation "));
    ck_assert(kd_is_annotation_event("## Call foo ##", "kernel"));
    ck_assert(kd_is_annotation_event("  ##  call   foo", "kernel")); /* normalized */
    ck_assert(!kd_is_annotation_event("##call foo", "kernel"));
    ck_assert(!kd_is_annotation_event("## call", "kernel")); /* needs the space */
    ck_assert(!kd_is_annotation_event("gemm", "kernel"));
}
END_TEST

START_TEST(test_non_kernel_trace_category)
{
    const char *yes[] = {"python_function", "cpu_op", "gpu_trace", " CPU_OP ", "Trace",
                         "ac2g_trace"};
    const char *no[] = {"kernel", "gpu_memcpy", "cuda_runtime", "", "python function"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(kd_is_non_kernel_trace_category(yes[i]), "%s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!kd_is_non_kernel_trace_category(no[i]), "%s", no[i]);
}
END_TEST

START_TEST(test_looks_like_python_scope_name)
{
    const char *yes[] = {"a.py(12): f", "x/Y.PY(3): g", "Python/x", "  python/x",
                         "nn.Module: Linear", " NN.MODULE: x"};
    const char *no[] = {"gemm", "a.py:12 f", "my python/x", "nn.Module Linear", ""};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(kd_looks_like_python_scope_name(yes[i]), "%s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!kd_looks_like_python_scope_name(no[i]), "%s", no[i]);
}
END_TEST

START_TEST(test_long_inputs_use_the_heap_path)
{
    /* longer than the predicates' stack scratch buffer */
    size_t n = 5000;
    char *s = malloc(n + 16);
    ck_assert_ptr_nonnull(s);
    memset(s, 'A', n);
    strcpy(s + n, "_GPU_TRACE");
    ck_assert(kd_is_non_kernel_trace_category(s));
    ck_assert(!kd_looks_like_python_scope_name(s));
    ck_assert_int_eq(kd_classify_kernel(s), KD_CAT_OTHER);
    strcpy(s + n, "_NCCL");
    ck_assert_str_eq(kd_classify_kernel_kh(s), "communication");
    free(s);
}
END_TEST

/* ---- fast paths against the plain definitions ---------------------------
 * normalize_text, lower, canonicalize and the classifiers have fast paths
 * (ASCII bytes without decoding, an identity test for already normal text,
 * a byte-pair filter before substring searches, stack buffers). Here each is
 * compared with a direct transcription of its definition, code point by
 * code point, on random strings mixing the tricky pieces: every kind of
 * whitespace, U+0130, U+212A, stray and truncated UTF-8 bytes, hex
 * addresses, "void ...(...)" signatures, keywords, and lengths past every
 * stack buffer. */

typedef struct {
    char *s;
    size_t n, cap;
} rbuf;

static void rb_add(rbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

/* Python s.strip(), then " ".join(s.split()) only if one of the six ASCII
 * whitespace characters remains (reference §1) */
static char *ref_normalize(const char *s)
{
    size_t len = strlen(s), pos = 0, b = 0, e = 0;
    bool found = false;
    while (pos < len) {
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (!kd_is_py_space(cp)) {
            if (!found)
                b = pos, found = true;
            e = pos + n;
        }
        pos += n;
    }
    rbuf out = {0};
    rb_add(&out, "", 0);
    bool ascii_ws = false;
    for (size_t i = b; i < e; i++)
        ascii_ws |= strchr(" \t\n\r\v\f", s[i]) != NULL && s[i] != '\0';
    if (!ascii_ws) {
        rb_add(&out, s + b, e - b);
        return out.s;
    }
    bool pending = false;
    for (pos = b; pos < e;) {
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, e - pos, &cp);
        if (kd_is_py_space(cp)) {
            pending = true;
        } else {
            if (pending && out.n)
                rb_add(&out, " ", 1);
            pending = false;
            rb_add(&out, s + pos, n);
        }
        pos += n;
    }
    return out.s;
}

/* lower() as kd_lower documents it, one code point at a time */
static char *ref_lower(const char *s)
{
    size_t len = strlen(s), pos = 0;
    rbuf out = {0};
    rb_add(&out, "", 0);
    while (pos < len) {
        uint32_t cp;
        size_t n = kd_utf8_decode(s + pos, len - pos, &cp);
        if (cp >= 'A' && cp <= 'Z') {
            char c = (char)(cp - 'A' + 'a');
            rb_add(&out, &c, 1);
        } else if (cp == 0x130) {
            rb_add(&out, "i\xCC\x87", 3);
        } else if (cp == 0x212A) {
            rb_add(&out, "k", 1);
        } else {
            rb_add(&out, s + pos, n);
        }
        pos += n;
    }
    return out.s;
}

/* canonicalize_name (reference §4): normalize, 0xADDR, cut the "(" that
 * balances the last ")" of a "void ...)" name */
static char *ref_canonical(const char *s)
{
    char *n = ref_normalize(s);
    char *h = kd_replace_hex_addr(n);
    free(n);
    ck_assert_ptr_nonnull(h);
    size_t len = strlen(h);
    if (strncmp(h, "void ", 5) == 0 && h[len - 1] == ')') {
        long depth = 0;
        for (size_t i = len; i-- > 0;) {
            if (h[i] == ')') {
                depth++;
            } else if (h[i] == '(' && --depth == 0) {
                h[i] = '\0';
                break;
            }
        }
    }
    return h;
}

static const kd_class_step *ref_first_step(const kd_class_step *steps, size_t n,
                                           const char *const *compute_like, const char *l)
{
    for (size_t i = 0; i < n; i++) {
        if (!kd_contains_any(l, steps[i].keywords))
            continue;
        if (steps[i].unless_compute_like && kd_contains_any(l, compute_like))
            continue;
        return &steps[i];
    }
    return NULL;
}

static const char *const fast_path_pieces[] = {
    "a", "Z", "_", "0", "7", "::", "<", ">", ",", "*", "(", ")", "void ", " ", "  ", "\t",
    "\n", "\r", "\v", "\f", "\x1c", "\x1f", "\x01", "\x7f",
    "\xc2\xa0",         /* U+00A0, a space to split() but not ASCII */
    "\xe2\x80\x80",     /* U+2000 */
    "\xe3\x80\x80",     /* U+3000 */
    "\xc2\x85",         /* U+0085 */
    "\xc4\xb0",         /* U+0130: lowers to i + U+0307 */
    "\xe2\x84\xaa",     /* U+212A KELVIN SIGN: lowers to k */
    "\xc3\xa9",         /* é */
    "\xff", "\x80", "\xc2", "\xe2\x84", "\xc0\xa0", /* stray, truncated, overlong */
    "0x", "0x1F", "0xdeadBEEF", "0X12", "GEMM", "gemm", "Nccl", "AllReduce", "fill",
    "copy", "Flash", "attention", "moe", "mma", "norm", " norm", "_norm_", "\xe2\x84\xaa"
    "ernel", "broadcast", "CUTLASS", "memcpy", "dma", "python/", ".py(", "nn.Module:",
    "cpu_op", "Trace", "python_function", "quant", "topk", "elementwise", "rope",
};

static char *random_piece_string(uint64_t *st, size_t max_pieces)
{
    size_t npieces = sizeof fast_path_pieces / sizeof fast_path_pieces[0];
    rbuf b = {0};
    rb_add(&b, "", 0);
    *st ^= *st << 13, *st ^= *st >> 7, *st ^= *st << 17;
    size_t k = (size_t)(*st % (max_pieces + 1));
    for (size_t i = 0; i < k; i++) {
        *st ^= *st << 13, *st ^= *st >> 7, *st ^= *st << 17;
        const char *p = fast_path_pieces[*st % npieces];
        rb_add(&b, p, strlen(p));
    }
    return b.s;
}

static void check_fast_paths(const char *s)
{
    char *norm = ref_normalize(s), *low = ref_lower(s), *nlow = ref_lower(norm);
    char *got = kd_normalize_text(s);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(strcmp(got, norm) == 0, "normalize_text(\"%s\")", s);
    free(got);
    got = kd_lower(s);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(strcmp(got, low) == 0, "lower(\"%s\")", s);
    free(got);
    size_t len = strlen(s);
    char *buf = malloc(3 * len + 2);
    ck_assert_ptr_nonnull(buf);
    ck_assert_msg(strcmp(kd_normalized_lower_into(s, len, buf), nlow) == 0, "nl(\"%s\")", s);
    free(buf);
    char *canon = ref_canonical(s);
    got = kd_canonicalize_kernel_name(s);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(strcmp(got, canon) == 0, "canonicalize(\"%s\"): %s, want %s", s, got, canon);
    free(got);
    ck_assert(kd_looks_like_python_scope_name(s) == kd_looks_like_python_scope_lowered(nlow));
    ck_assert(kd_is_non_kernel_trace_category(s) == kd_is_non_kernel_category_lowered(nlow));
    ck_assert(kd_looks_like_python_scope_lowered(nlow) ==
              (strstr(nlow, ".py(") || strncmp(nlow, "python/", 7) == 0 ||
               strncmp(nlow, "nn.module:", 10) == 0));
    const kd_rules *r = kd_rules_reference();
    const kd_class_step *st = ref_first_step(r->steps, r->n_steps, r->compute_like, low);
    ck_assert_msg(kd_rules_classify(r, s) == (st ? st->category : KD_CAT_OTHER), "classify(\"%s\")", s);
    st = ref_first_step(r->site_steps, r->n_site_steps, r->site_compute_like, low);
    ck_assert_msg(strcmp(kd_rules_classify_site(r, s), st ? st->label : "other") == 0,
                  "classify_site(\"%s\")", s);
    free(canon);
    free(norm);
    free(low);
    free(nlow);
}

START_TEST(test_fast_paths_match_definitions)
{
    static const char *const fixed[] = {
        "", " ", "a", " a", "a ", "a  b", "a b", "a\tb", "\xc2\xa0" "a", "a\xc2\xa0" "b",
        "a\xc2\xa0 b", "\xc4\xb0STANBUL", "\xe2\x84\xaa" "ernel", "void f<0x10>(int)",
        "void k(int) (float)", "\xff", "a\x1c" "b", "a\x1c b", "\x01", "x\x7f",
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_fast_paths(fixed[i]);
    uint64_t st = 0x6A09E667F3BCC908ull;
    for (int i = 0; i < 4000; i++) {
        char *s = random_piece_string(&st, i % 50 == 0 ? 600 : 24);
        check_fast_paths(s);
        free(s);
    }
}
END_TEST

/* ---- stages ------------------------------------------------------------- */

START_TEST(test_stage_names)
{
    ck_assert_str_eq(kd_stage_name(KD_STAGE_EXTEND), "extend");
    ck_assert_str_eq(kd_stage_name(KD_STAGE_DECODE), "decode");
    ck_assert_str_eq(kd_stage_name(KD_STAGE_ALL), "all");
    ck_assert_str_eq(kd_stage_display_name(KD_STAGE_EXTEND), "extend/prefill");
    ck_assert_str_eq(kd_stage_display_name(KD_STAGE_DECODE), "decode");
    ck_assert_str_eq(kd_stage_display_name(KD_STAGE_ALL), "all");

    kd_stage s = KD_STAGE_ALL;
    ck_assert(kd_stage_from_name("extend", &s));
    ck_assert_int_eq(s, KD_STAGE_EXTEND);
    s = KD_STAGE_ALL;
    ck_assert(kd_stage_from_name("prefill", &s));
    ck_assert_int_eq(s, KD_STAGE_EXTEND);
    ck_assert(kd_stage_from_name("decode", &s));
    ck_assert_int_eq(s, KD_STAGE_DECODE);
    ck_assert(kd_stage_from_name("all", &s));
    ck_assert_int_eq(s, KD_STAGE_ALL);
    const char *bad[] = {"Extend", "extend/prefill", " decode", "", "both"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!kd_stage_from_name(bad[i], &s), "%s", bad[i]);
    ck_assert(!kd_stage_from_name(NULL, &s));
}
END_TEST

Suite *text_suite(void)
{
    Suite *s = suite_create("text");
    TCase *chars = tcase_create("chars");
    tcase_add_test(chars, test_is_py_space_set);
    tcase_add_test(chars, test_utf8_decode);
    tcase_add_test(chars, test_utf8_input_valid);
    tcase_add_test(chars, test_unicode_decimal);
    tcase_add_test(chars, test_utf8_len_counts_code_points);
    suite_add_tcase(s, chars);

    TCase *basic = tcase_create("basic");
    tcase_add_test(basic, test_normalize_text);
    tcase_add_test(basic, test_strip);
    tcase_add_test(basic, test_lower);
    tcase_add_test(basic, test_prefix_suffix_keywords);
    tcase_add_test(basic, test_short_name);
    suite_add_tcase(s, basic);

    TCase *names = tcase_create("names");
    tcase_add_test(names, test_replace_hex_addr);
    tcase_add_test(names, test_canonicalize_kernel_name);
    tcase_add_test(names, test_canonicalize_python_scope_name);
    tcase_add_test(names, test_normalize_source_location);
    tcase_add_test(names, test_normalize_repo_relative_path);
    tcase_add_test(names, test_compact_match_text);
    suite_add_tcase(s, names);

    TCase *cats = tcase_create("categories");
    tcase_add_test(cats, test_category_names_and_priorities);
    tcase_add_test(cats, test_classify_kernel_oh_and_kh);
    tcase_add_test(cats, test_kernel_name_hint);
    suite_add_tcase(s, cats);

    TCase *preds = tcase_create("predicates");
    tcase_add_test(preds, test_trace_metadata_name_is_exact);
    tcase_add_test(preds, test_annotation_event);
    tcase_add_test(preds, test_non_kernel_trace_category);
    tcase_add_test(preds, test_looks_like_python_scope_name);
    tcase_add_test(preds, test_long_inputs_use_the_heap_path);
    tcase_add_test(preds, test_fast_paths_match_definitions);
    tcase_add_test(preds, test_stage_names);
    suite_add_tcase(s, preds);
    return s;
}
