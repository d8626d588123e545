/* rules_default.c — the default profile (classify.h kd_rules_default): the
 * overlap categories' keywords corrected for current CUDA and ROCm stacks
 * (docs/taxonomy.md says what differs from the reference and why); every
 * other table is the reference's.
 *
 * Keywords are lowered substrings of the raw name, so each must be specific
 * enough not to hit unrelated words: the reference's "dma" hits "threadmap"
 * and "ldmatrix", "mma" hits "gamma", "conv" hits "typeconvert", "gemm" hits
 * "fbgemm", "flash" hits "flashinfer::" template arguments, "cutlass" hits
 * "cutlass::bfloat16_t", "gate" hits "aggregate", "dispatch" hits
 * "cub::DispatchReduceByKey", "combine" hits "_combined_". Steps are tried in
 * order, first match wins; attention is compute (the default keeps the five
 * built-in categories). */
#include "config.h"

#include "kerndiff/classify.h"

#include <stddef.h>

#include "classify_internal.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* 1. memory, strong: transfers and fills whatever else the name says */
static const char *const memory_strong[] = {
    /* CUDA/HIP runtime copies and memsets (gpu_memcpy / gpu_memset events) */
    "memcpy", "memset",
    /* ROCclr blit kernels: __amd_rocclr_fillBufferAligned, __amd_rocclr_copyBuffer… */
    "__amd_rocclr_",
    /* KV-cache writes: vLLM reshape_and_cache(_flash) / concat_and_cache_mla,
     * SGLang store_kvcache (the reference calls the first compute: "flash") */
    "reshape_and_cache", "concat_and_cache", "store_kvcache",
    /* layout transposes around convolutions: cuDNN nchwToNhwcKernel /
     * nhwcToNchwKernel, MIOpen batched_transpose_* */
    "nchwtonhwc", "nhwctonchw", "batched_transpose", NULL};

/* 2. communication, strong: collective libraries and custom all-reduces */
static const char *const communication_strong[] = {
    /* NCCL (ncclKernel_*, ncclDevKernel_*) and RCCL, which keeps NCCL's kernel
     * names (ncclDevKernel_Generic); "rccl" for its own symbols */
    "nccl", "rccl",
    /* MSCCL and MSCCL++ (mscclpp::…) */
    "msccl",
    /* NVSHMEM device-initiated transfers (nvshmemi_*, nvshmem-based all-to-all) */
    "nvshmem",
    /* DeepEP expert-parallel dispatch / combine (deep_ep::intranode::dispatch…) */
    "deep_ep", "deepep",
    /* pplx-kernels all-to-all (pplx::dispatchKernel, pplx::combineKernel) */
    "pplx",
    /* Mooncake transfer engine / EP */
    "mooncake",
    /* HCCL on Ascend: hcom_allReduce_…, hcom_broadcast_… */
    "hcom_", "hccl",
    /* oneCCL: oneccl…, ccl::…, ccl_kernel_… ("ccl" alone is too short) */
    "oneccl", "ccl_", "ccl::",
    /* the collectives by name: custom all-reduces (SGLang, TensorRT-LLM
     * allreduce_fusion_*, PyTorch symmetric memory one_shot_all_reduce…) */
    "allreduce", "all_reduce", "reduce_scatter", "reducescatter", "allgather", "all_gather",
    "alltoall", "all_to_all", "all2all",
    /* vLLM / SGLang / aiter custom all-reduce: cross_device_reduce_1stage|2stage */
    "cross_device_reduce",
    /* NVLink SHARP multicast collectives: multimem_all_reduce_kernel, multimem_all_gather */
    "multimem",
    /* one-shot / two-shot all-reduce kernels (TensorRT-LLM, FlashInfer comm,
     * AMD QuickReduce) */
    "oneshot", "twoshot", "quickreduce",
    /* TensorRT-LLM MNNVL all-to-all: moeA2ADispatchKernel, moeA2ACombineKernel
     * (not bare "a2a", which hits mangled names) */
    "moea2a", NULL};

/* 3. compute, strong: GEMM libraries whose names say so, before the precise
 * elementwise step below can claim them through a template argument */
static const char *const compute_library[] = {
    /* CUTLASS kernels (cutlass::Kernel<…>, cutlass::device_kernel<…>,
     * cutlass_80_tensorop_…, cutlass_cudnn_*); not "cutlass::bfloat16_t" */
    "cutlass::kernel", "cutlass::device_kernel", "cutlass_",
    /* cuBLAS / cuBLASLt and their helpers (splitKreduce, gemv, epilogue) */
    "cublas",
    /* Tensile / hipBLASLt GEMMs, Cijk_Alik_Bljk_…_Bias_…: "bias" made them elementwise */
    "cijk_",
    /* cuBLAS nvjet GEMMs (nvjet_tst_…_bias_TNN); the reference has no keyword */
    "nvjet",
    /* cuDNN / cuBLAS implicit-GEMM kernels: sm80_xmma_fprop_implicit_gemm_… */
    "xmma_", NULL};

/* 4. elementwise, strong: names that carry a compute keyword but are not
 * GEMMs or attention */
static const char *const elementwise_strong[] = {
    /* TorchInductor pointwise / reduction / foreach kernels: their fused op
     * lists name the extern GEMM or attention they feed (addmm, fmha_v3_fwd,
     * sage_attn); GEMM templates are triton_tem_ (compute) */
    "triton_poi_", "triton_per_", "triton_red_", "triton_for_",
    /* TorchInductor kernels before descriptive names (triton__0d1d2d…):
     * 1-D grids of pointwise / reduction fusions */
    "triton__",
    /* FBGEMM sparse, quantisation and TBE kernels (permute_2D_data_kernel,
     * _float_to_hfp8_gpu, bounds_check_indices…): "fbgemm" contains "gemm" */
    "fbgemm_gpu::",
    /* cuDNN batch norm (cudnn::bn_fw_tr_1C11_…): a norm, not a convolution */
    "::bn_",
    /* MoE finalize (un-permute and weighted sum of expert outputs): OpenAI
     * triton_kernels _finalize_matmul_scatter */
    "_finalize_matmul", NULL};

/* 5. compute: GEMMs, convolutions, attention (attention is compute) */
static const char *const compute[] = {
    /* GEMM / GEMV by name, cuDNN, MAGMA through "gemm" */
    "cudnn", "gemm", "gemv", "matmul", "bmm", "_mm_kernel", "grouped_mm", "groupgemm",
    "group_gemm", "scaled_mm",
    /* the precise GEMM-library keywords, again: compute_like must hold them */
    "cutlass::kernel", "cutlass::device_kernel", "cutlass_", "cublas", "cijk_", "nvjet", "xmma_",
    /* tensor-core instruction names in kernel names ("mma" alone hits "gamma") */
    "wgmma", "hmma", "imma",
    /* vLLM ROCm skinny GEMMs (wvSplitK_hf_…) */
    "wvsplitk",
    /* MoE grouped GEMMs: Triton fused_moe_kernel, Marlin, aiter fmoe */
    "fused_moe", "moe_kernel", "marlin", "fmoe_",
    /* convolutions ("conv" alone hits "convert"): cuDNN / MIOpen / CK engines */
    "conv1d", "conv2d", "conv3d", "convolution", "convolve", "conv_fwd", "conv_bwd", "naive_conv",
    "grouped_conv", "wgrad_alg", "dgrad_alg", "dgrad_engine", "winograd", "im2col", "im2d2col",
    /* attention: FlashAttention 2/3 (flash_fwd_kernel, flash::FlashAttnFwdSm90),
     * FlashMLA, aiter / CK / TensorRT-LLM fmha, PyTorch / vLLM attention */
    "attention", "fmha", "flash_fwd", "flash_bwd", "flash_attn", "flashattn", "flash::",
    "flash_mla", "flashmla", "mha_fwd", "mha_bwd",
    /* Triton attention kernels: attn_fwd, _attn_fwd_inner, SGLang / LightLLM
     * decode attention _fwd_kernel_stage1, _fwd_grouped_kernel_stage1 */
    "attn_fwd", "attn_bwd", "_fwd_kernel_stage", "_fwd_grouped_kernel_stage",
    /* FlashInfer attention (BatchPrefillWithPagedKVCacheKernel, BatchDecodeWith…),
     * aiter mha_batch_prefill */
    "prefillwith", "decodewith", "batch_prefill",
    /* SageAttention: sage_fwd and the INT8 quantisation of Q/K that belongs to
     * it (sage_quant_kernel), so aiter FMHA → Sage compares attention with attention */
    "sage_fwd", "sage_quant", "sage_attn", "sageattn",
    /* linear attention / state-space models: GDN, Mamba selective scan, SSD chunks */
    "gated_delta", "selective_scan", "chunk_scan", "chunk_state", "mamba",
    /* TorchInductor GEMM / convolution / flex-attention templates */
    "triton_tem_", NULL};

/* 6. elementwise: pointwise math, norms, activations, rotary, softmax,
 * top-k and routing, gathers, quantisation */
static const char *const elementwise[] = {
    /* activations, incl. gated ones (silu_and_mul, act_and_mul, swiglu) */
    "sigmoid", "silu", "gelu", "relu", "tanh", "act_and_mul", "swiglu", "activation",
    "softmax",
    /* norms ("norm" alone hits "normal", "NormTwoOps" reductions) */
    "layernorm", "layer_norm", "rmsnorm", "rms_norm", "groupnorm", "group_norm", "batchnorm",
    "batch_norm", "instancenorm", "instance_norm", "l2norm", "l2_norm", "_norm_",
    "rowwisemoments", "gammabeta",
    /* rotary embeddings */
    "rotary", "rope",
    /* top-k and MoE routing (TensorRT-LLM moe::dev::routing, triton_kernels
     * _combined_routing_*, _sum_bitmatrix_rows, gating, vLLM / SGLang
     * moe_align_block_size) and the MoE finalize / sum of expert outputs */
    "topk", "routing", "bitmatrix", "gating", "moe_align", "moe::dev::finalize", "moe_sum",
    /* bias adds and casts */
    "bias", "_cast",
    /* gathers, scatters, index ops, embeddings ("index" alone is everywhere) */
    "gather", "scatter", "index_select", "indexselect", "indexfunc", "index_put", "index_add",
    "linearize_index", "embedding", "upsample",
    /* FBGEMM / TorchRec helpers outside the fbgemm_gpu namespace
     * (bounds_check_indices_kernel, permute_pooled_embs_kernel) and MoE
     * token permutes: reorderings, like the gathers */
    "bounds_check_indices", "permute",
    /* quantisation and dequantisation (vLLM scaled_fp8_quant, TensorRT-LLM
     * quantize_with_block_size, aiter …_quant_kernel) */
    "quant",
    /* PyTorch TensorIterator kernels, masked ops */
    "masked", "elementwise", NULL};

/* 7. other, pinned: names that would trip a weak tier below */
static const char *const other_pinned[] = {
    /* "prefill" contains "fill": a prefill kernel that no step above
     * recognises is not a memory fill */
    "prefill", NULL};

/* 8. memory, weak: copies and fills, unless compute-like ("dma" dropped: it
 * hits "threadmap" and "ldmatrix") */
static const char *const memory_weak[] = {"fill", "copy", "prefetch", NULL};

/* 9. communication, weak: MoE expert-parallel dispatch / combine and
 * broadcast of libraries not named above, unless compute-like; never bare
 * "dispatch" (cub::DispatchReduceByKey) or "combine" (_combined_routing_) */
static const char *const communication_weak[] = {
    "broadcast", "_dispatch", "dispatch_", "dispatchkernel", "combine_", "_combine_",
    "combinekernel", "epdispatch", "epcombine", NULL};

static const kd_class_step steps[] = {
    {KD_CAT_MEMORY, "memory", memory_strong, false, NULL},
    {KD_CAT_COMMUNICATION, "communication", communication_strong, false, NULL},
    {KD_CAT_COMPUTE, "compute", compute_library, false, NULL},
    {KD_CAT_ELEMENTWISE, "elementwise", elementwise_strong, false, NULL},
    {KD_CAT_COMPUTE, "compute", compute, false, NULL},
    {KD_CAT_ELEMENTWISE, "elementwise", elementwise, false, NULL},
    {KD_CAT_OTHER, "other", other_pinned, false, NULL},
    {KD_CAT_MEMORY, "memory", memory_weak, true, NULL},
    {KD_CAT_COMMUNICATION, "communication", communication_weak, true, NULL},
};

static const kd_rules default_rules = {
    .name = "default",
    KD_BUILTIN_PROFILE,
    .steps = steps,
    .n_steps = N_OF(steps),
    .compute_like = compute,
    KD_REF_SHARED_TABLES,
};

const kd_rules *kd_rules_default(void) { return &default_rules; }
