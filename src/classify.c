/* classify.c — kernel classification as a value (classify.h): the
 * reference's tables as the built-in kd_rules, and the functions that read
 * any kd_rules. */
#include "config.h"

#include "kerndiff/classify.h"

#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/text.h"

#include "classify_internal.h"

/* ---- the reference's tables ---------------------------------------------------
 * OH: the overlap module's keyword tuples, verbatim (reference §4). */

static const char *const oh_communication_strong[] = {
    "allreduce", "all_reduce", "reduce_scatter", "allgather", "all_gather", "nccl",
    "cross_device_reduce", "deepep", "a2a", "alltoall", "allreduce_fusion", "mooncake", NULL};
static const char *const oh_communication_weak[] = {"broadcast", "dispatch", "combine", NULL};
static const char *const oh_memory_strong[] = {"memcpy", "memset", "dma", "prefetch", NULL};
static const char *const oh_memory_weak[] = {"fill", "copy", NULL};
static const char *const oh_elementwise[] = {
    "sigmoid", "silu", "gelu", "relu", "softmax", "layernorm", "rmsnorm", "norm",
    "rotary", "rope", "topk", "gate", "bias", "_cast", "index", "gather", "scatter",
    "masked", "elementwise", "activation", NULL};
static const char *const oh_compute[] = {
    "cublas", "cudnn", "cutlass", "triton", "gemm", "gemv", "matmul", "grouped_mm",
    "flash", "attention", "fmha", "marlin", "fused_moe", "moe_kernel", "groupgemm",
    "mma", "wgmma", "conv", "bmm", "mm_kernel", NULL};

/* classify_kernel: memory/communication first, then compute/elementwise; the
 * weak tiers keep the module's "not compute-like" guards although the
 * compute step has already claimed every compute-like name (reference §4) */
static const kd_class_step oh_steps[] = {
    {KD_CAT_MEMORY, "memory", oh_memory_strong, false, NULL},
    {KD_CAT_COMMUNICATION, "communication", oh_communication_strong, false, NULL},
    {KD_CAT_COMPUTE, "compute", oh_compute, false, NULL},
    {KD_CAT_ELEMENTWISE, "elementwise", oh_elementwise, false, NULL},
    {KD_CAT_MEMORY, "memory", oh_memory_weak, true, NULL},
    {KD_CAT_COMMUNICATION, "communication", oh_communication_weak, true, NULL},
};

/* KH: the kernel-site helpers' lists (kernel-sites.md §2). */
static const char *const kh_communication_strong[] = {
    "nccl", "allreduce", "all_reduce", "reduce_scatter", "allgather", "all_gather",
    "alltoall", "all_to_all", "cross_device_reduce", "deepep", "mooncake", NULL};
static const char *const kh_memory_strong[] = {"memcpy", "memset", "dma", "prefetch", NULL};
const char *const kd_ref_site_compute_like[] = {
    "gemm", "gemv", "matmul", "cublas", "cutlass", "wgmma", "mma", "bmm", "nvjet",
    "fmha", "attention", "flash_attn", "flashattention", "flash_attention",
    "grouped_mm", "groupgemm", "moe", "expert", NULL};
static const char *const kh_memory_weak[] = {"copy", "fill", NULL};
static const char *const kh_communication_weak[] = {"broadcast", "dispatch", "combine", NULL};
static const char *const kh_hybrid_linear[] = {
    "gdn", "gated_delta", "mamba", "selective_scan", "ssd", "causal_conv", "ssm", NULL};
static const char *const kh_attention[] = {
    "flash_attn", "flashattention", "flash_attention", "fmha", "attention", "mla",
    "paged_attention", "decode_attention", NULL};
static const char *const kh_moe[] = {
    "fused_moe", "grouped_mm", "groupgemm", "group_gemm", "moe", "expert",
    "groupproblemshape", NULL};
static const char *const kh_gemm[] = {
    "gemm", "gemv", "matmul", "cublas", "cutlass", "wgmma", "mma", "bmm", "nvjet", NULL};
static const char *const kh_norm[] = {"rmsnorm", "layernorm", "_norm_", " norm", "normkernel", NULL};
static const char *const kh_rope[] = {"rotary", "rope", "mrope", NULL};
static const char *const kh_softmax[] = {"softmax", NULL};
static const char *const kh_activation[] = {"silu", "gelu", "relu", "act_and_mul", "sigmoid", NULL};
static const char *const kh_quantize[] = {"quant", "fp8", "mxfp", "nvfp4", "dequant", "cvt", NULL};
static const char *const kh_reduce_topk[] = {
    "topk", "reduce", "argmax", "argtopk", "sampling", "multinomial", NULL};
static const char *const kh_sampling_io[] = {
    "prepare_inputs", "write_req_to", "catarraybatched", "prepare_next", "copy_next", NULL};
static const char *const kh_elementwise[] = {
    "elementwise", "vectorized_elementwise_kernel", "unrolled_elementwise_kernel",
    "gpu_kernel_impl", "binary_internal", "unaryfunctor", "add_kernel", "sub_kernel",
    "mul_kernel", "div_", "floor_kernel", "log_kernel", "neg_kernel", NULL};

/* KH classify_kernel: communication and memory first; the patterns; the
 * weak communication tier last (kernel-sites.md §2). The categories of the
 * patterns are labels only (KD_CAT_OTHER for the overlap module). */
const kd_class_step kd_ref_site_steps[KD_REF_N_SITE_STEPS] = {
    {KD_CAT_COMMUNICATION, "communication", kh_communication_strong, false, NULL},
    {KD_CAT_MEMORY, "memory", kh_memory_strong, false, NULL},
    {KD_CAT_MEMORY, "memory", kh_memory_weak, true, NULL},
    {KD_CAT_OTHER, "hybrid_linear", kh_hybrid_linear, false, NULL},
    {KD_CAT_OTHER, "attention", kh_attention, false, NULL},
    {KD_CAT_OTHER, "moe", kh_moe, false, NULL},
    {KD_CAT_OTHER, "gemm", kh_gemm, false, NULL},
    {KD_CAT_OTHER, "norm", kh_norm, false, NULL},
    {KD_CAT_OTHER, "rope", kh_rope, false, NULL},
    {KD_CAT_OTHER, "softmax", kh_softmax, false, NULL},
    {KD_CAT_OTHER, "activation", kh_activation, false, NULL},
    {KD_CAT_OTHER, "quantize", kh_quantize, false, NULL},
    {KD_CAT_OTHER, "reduce_topk", kh_reduce_topk, false, NULL},
    {KD_CAT_OTHER, "sampling_io", kh_sampling_io, false, NULL},
    {KD_CAT_OTHER, "elementwise", kh_elementwise, false, NULL},
    {KD_CAT_COMMUNICATION, "communication", kh_communication_weak, true, NULL},
};

/* OH KERNEL_NAME_HINTS and the prefixes of is_kernel_event's last step */
const char *const kd_ref_hint_prefixes[] = {"void ", "ampere_", "sm80_", "sm90_", NULL};
const char *const *const kd_ref_hint_lists[KD_REF_N_HINT_LISTS] = {
    oh_communication_strong, oh_communication_weak, oh_memory_strong, oh_memory_weak, oh_compute};

/* reference §2.1: generation_1 / decode before generation_0 / prefill */
const char *const kd_ref_decode_keywords[] = {"generation_1", "decode", NULL};
const char *const kd_ref_extend_keywords[] = {"generation_0", "prefill", NULL};

/* reference §3.5 launch contexts (divergence D1: compared lowered) */
const char *const kd_ref_launch_runtime[] = {"cudalaunchkernel", "cudalaunchkernelexc", NULL};
const char *const kd_ref_launch_any[] = {"culaunchkernel", "culaunchkernelex", "cudalaunchkernel",
                                         "cudalaunchkernelexc", NULL};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* the overlap module's five, in kd_category order */
const kd_category_def kd_builtin_categories[KD_N_BUILTIN_CATEGORIES] = {
    {"compute", KD_CAT_COMPUTE},       {"communication", KD_CAT_COMMUNICATION},
    {"memory", KD_CAT_MEMORY},         {"elementwise", KD_CAT_ELEMENTWISE},
    {"other", KD_CAT_OTHER},
};

static const kd_rules reference_rules = {
    .name = "reference",
    KD_BUILTIN_PROFILE,
    .steps = oh_steps,
    .n_steps = N_OF(oh_steps),
    .compute_like = oh_compute,
    KD_REF_SHARED_TABLES,
};

const kd_rules *kd_rules_reference(void) { return &reference_rules; }

const kd_rules *kd_rules_builtin(const char *name)
{
    if (strcmp(name, "default") == 0)
        return kd_rules_default();
    if (strcmp(name, "reference") == 0)
        return kd_rules_reference();
    return NULL;
}

const char *kd_rules_category_name(const kd_rules *r, kd_category c)
{
    r = r ? r : &reference_rules;
    return c < r->n_categories ? r->categories[c].name : "other";
}

kd_category kd_rules_kind(const kd_rules *r, kd_category c)
{
    r = r ? r : &reference_rules;
    return c < r->n_categories ? r->categories[c].kind : KD_CAT_OTHER;
}

int kd_rules_category_index(const kd_rules *r, const char *name)
{
    for (size_t i = 0; r && i < r->n_categories; i++)
        if (strcmp(r->categories[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- categories ------------------------------------------------------------------ */

const char *kd_category_name(kd_category c)
{
    switch (c) {
    case KD_CAT_COMPUTE: return "compute";
    case KD_CAT_COMMUNICATION: return "communication";
    case KD_CAT_MEMORY: return "memory";
    case KD_CAT_ELEMENTWISE: return "elementwise";
    default: return "other";
    }
}

int kd_category_priority(kd_category c)
{
    /* OH CATEGORY_PRIORITY */
    switch (c) {
    case KD_CAT_COMPUTE: return 4;
    case KD_CAT_COMMUNICATION: return 3;
    case KD_CAT_MEMORY: return 2;
    case KD_CAT_ELEMENTWISE: return 1;
    default: return 0;
    }
}

/* ---- reading a profile --------------------------------------------------------------- */

/* A lowered copy of a raw name: on the stack when short (names are
 * classified once per distinct name, but there are many). */
typedef struct {
    char *s;
    char local[512];
} lowered;

static const char *lower(lowered *l, const char *raw)
{
    raw = raw ? raw : "";
    size_t len = strlen(raw);
    l->s = 2 * len + 1 <= sizeof l->local ? l->local : malloc(2 * len + 1);
    if (l->s)
        kd_lower_into(raw, len, l->s);
    return l->s;
}

static void lowered_free(lowered *l)
{
    if (l->s != l->local)
        free(l->s);
}

/* The byte pairs of a text, hashed into a bit set: a keyword with a pair
 * missing from the set is not in the text, so its substring search can be
 * skipped. A filter only: a hash collision just leaves a search to do. */
#define PAIR_BITS 4096u
typedef struct {
    uint64_t w[PAIR_BITS / 64];
} pair_set;

static unsigned pair_hash(unsigned char a, unsigned char b)
{
    return ((unsigned)a * 131u + (unsigned)b) & (PAIR_BITS - 1);
}

static void pair_set_of(pair_set *ps, const char *s)
{
    memset(ps, 0, sizeof *ps);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u[i] && u[i + 1]; i++) {
        unsigned h = pair_hash(u[i], u[i + 1]);
        ps->w[h / 64] |= 1ull << (h % 64);
    }
}

/* false only when keyword cannot be a substring of the set's text */
static bool pair_set_may_hold(const pair_set *ps, const char *keyword)
{
    const unsigned char *u = (const unsigned char *)keyword;
    for (size_t i = 0; u[i] && u[i + 1]; i++) {
        unsigned h = pair_hash(u[i], u[i + 1]);
        if (!(ps->w[h / 64] & (1ull << (h % 64))))
            return false;
    }
    return true;
}

/* kd_contains_any(l, keywords), the searches filtered by l's pair set */
static bool contains_any_filtered(const char *l, const pair_set *ps, const char *const *keywords)
{
    if (!keywords)
        return false;
    for (size_t i = 0; keywords[i]; i++) {
        if (pair_set_may_hold(ps, keywords[i]) && strstr(l, keywords[i]))
            return true;
    }
    return false;
}

/* The first step that claims a lowered name, or NULL. The compute-like test
 * is made once, only when a guarded step is reached. */
static const kd_class_step *first_step(const kd_class_step *steps, size_t n, const char *const *compute_like,
                                       const char *l)
{
    int compute = -1;
    pair_set ps;
    pair_set_of(&ps, l);
    for (size_t i = 0; i < n; i++) {
        if (!contains_any_filtered(l, &ps, steps[i].keywords) &&
            !(steps[i].regex && regexec(steps[i].regex, l, 0, NULL, 0) == 0))
            continue;
        if (steps[i].unless_compute_like) {
            if (compute < 0)
                compute = contains_any_filtered(l, &ps, compute_like);
            if (compute)
                continue;
        }
        return &steps[i];
    }
    return NULL;
}

kd_category kd_rules_classify(const kd_rules *r, const char *raw_name)
{
    lowered l;
    const char *s = lower(&l, raw_name);
    const kd_class_step *st = s ? first_step(r->steps, r->n_steps, r->compute_like, s) : NULL;
    lowered_free(&l);
    return st ? st->category : KD_CAT_OTHER;
}

const char *kd_rules_classify_site(const kd_rules *r, const char *raw_name)
{
    lowered l;
    const char *s = lower(&l, raw_name);
    const kd_class_step *st = s ? first_step(r->site_steps, r->n_site_steps, r->site_compute_like, s) : NULL;
    lowered_free(&l);
    return st ? st->label : "other";
}

bool kd_rules_kernel_name_hint(const kd_rules *r, const char *lowered_name)
{
    /* the name is lowered again (a no-op on Python-lowered text) so that an
     * ASCII-lowered input still sees what Python's lower() makes of U+212A
     * and U+0130 */
    lowered l;
    const char *s = lower(&l, lowered_name);
    bool hint = false;
    for (const char *const *p = r->hint_prefixes; s && *p && !hint; p++)
        hint = kd_starts_with(s, *p);
    for (size_t i = 0; s && i < r->n_hint_lists && !hint; i++)
        hint = kd_contains_any(s, r->hint_lists[i]);
    lowered_free(&l);
    return hint;
}

int kd_rules_annotation_stage(const kd_rules *r, const char *lowered_name)
{
    if (kd_contains_any(lowered_name, r->decode_keywords))
        return KD_STAGE_DECODE;
    if (kd_contains_any(lowered_name, r->extend_keywords))
        return KD_STAGE_EXTEND;
    return -1;
}

static bool in_set(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

bool kd_rules_is_launch(const kd_rules *r, const char *lowered_name, bool runtime)
{
    return in_set(lowered_name, runtime ? r->launch_runtime : r->launch_any);
}

kd_category kd_classify_kernel(const char *raw_name) { return kd_rules_classify(&reference_rules, raw_name); }

const char *kd_classify_kernel_kh(const char *raw_name)
{
    return kd_rules_classify_site(&reference_rules, raw_name);
}

bool kd_kernel_name_hint(const char *lowered_name)
{
    return kd_rules_kernel_name_hint(&reference_rules, lowered_name);
}
