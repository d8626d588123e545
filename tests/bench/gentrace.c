#include "config.h"

/*
 * gentrace: a deterministic generator of large, realistic Kineto (PyTorch
 * profiler) Chrome-trace JSON files for the kerndiff benchmark.
 *
 *   gentrace --size-mb N [--seed S] [--streams K] [--layers L] [--gzip]
 *            [--shift-us X] [--variant baseline|candidate] [--gpu-pid PID]
 *            [--ts-style frac|int] [--stages] -o FILE
 *   gentrace --distinct-names N [--variant baseline|candidate] [--gzip]
 *            [--gpu-pid PID] -o FILE
 *
 * The output models an SGLang-style decoder-only LLM serving loop: each
 * "step" is a ProfilerStep#N user_annotation on the CPU thread (plus its
 * gpu_user_annotation), a nested python_function tree (threading bootstrap ->
 * scheduler -> model runner -> nn.Module layers), cpu_op events with
 * External ids, cudaLaunchKernel / cuLaunchKernel / cudaMemcpyAsync runtime
 * events with correlation ids, ac2g flow events, and the GPU kernels on
 * several streams (7 compute, 8 NCCL overlapping compute, 9 memcpy, the rest
 * side streams).  Events are written when they close, as Kineto does, in a
 * Kineto-like multi-line layout.  Generation stops once N * 10^6 bytes of
 * uncompressed JSON have been written; the open spans are then closed and
 * the document is terminated properly.
 *
 * --distinct-names N writes instead N distinct kernel names, one launch each
 * (an aten::mm cpu_op, its cudaLaunchKernel, the kernel; about 610 bytes a
 * name), for the many-names scaling checks (tests/cli/test_scale.sh,
 * docs/performance.md); distinct_name() says what the names are and how a
 * candidate's differ.
 *
 * Everything is derived from a seeded xoshiro256** generator and integer
 * arithmetic, so the same arguments always give the same bytes.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define PROG "gentrace"
#define OUT_BUF_SIZE (1u << 20)
#define MAX_STREAMS 64
#define MAX_LAYERS 512
#define MAX_DEPTH 64
#define CPU_PID "3113936"
#define CPU_TID 3126441u
#define BASE_FRAC_NS 1365627867836596ull     /* 1365627867836.596 us */
#define BASE_INT_NS 1661203463029566000ull   /* 1661203463029566 us  */

/* ------------------------------------------------------------------ */
/* errors                                                              */

static const char *g_out_path; /* removed on fatal errors */

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (g_out_path)
        (void)unlink(g_out_path);
    exit(1);
}

/* ------------------------------------------------------------------ */
/* PRNG: xoshiro256** seeded through splitmix64                        */

typedef struct {
    uint64_t s[4];
} rng_t;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

/* Uniform integer in [0, n). */
static uint64_t rng_below(rng_t *r, uint64_t n)
{
    return n ? (rng_next(r) >> 11) % n : 0;
}

/* Uniform integer in [lo, hi]. */
static uint64_t rng_range(rng_t *r, uint64_t lo, uint64_t hi)
{
    return lo + rng_below(r, hi - lo + 1);
}

/* True with probability pct percent. */
static int rng_pct(rng_t *r, unsigned pct)
{
    return rng_below(r, 100) < pct;
}

/* mean_ns scaled by a factor in [1-spread%, 1+spread%], with a 2% tail
 * of 1.5x-3x outliers (as real kernels show). */
static uint64_t rng_jitter(rng_t *r, uint64_t mean_ns, unsigned spread)
{
    uint64_t f = rng_range(r, 100 - spread, 100 + spread);
    uint64_t v = mean_ns * f / 100;
    if (rng_below(r, 50) == 0)
        v = v * rng_range(r, 150, 300) / 100;
    return v ? v : 1;
}

/* ------------------------------------------------------------------ */
/* buffered output, plain or gzip                                      */

typedef struct {
    FILE *fp;
    gzFile gz;
    char *buf;
    size_t len;
    uint64_t total; /* uncompressed bytes written */
} writer_t;

static void w_flush(writer_t *w)
{
    if (w->len == 0)
        return;
    if (w->gz) {
        if (gzwrite(w->gz, w->buf, (unsigned)w->len) != (int)w->len) {
            int zerr = 0;
            const char *msg = gzerror(w->gz, &zerr);
            die("%s: gzip write failed: %s", g_out_path,
                zerr == Z_ERRNO ? strerror(errno) : msg);
        }
    } else if (fwrite(w->buf, 1, w->len, w->fp) != w->len) {
        die("%s: write failed: %s", g_out_path, strerror(errno));
    }
    w->len = 0;
}

static void w_bytes(writer_t *w, const char *p, size_t n)
{
    w->total += n;
    while (n > OUT_BUF_SIZE - w->len) {
        size_t room = OUT_BUF_SIZE - w->len;
        memcpy(w->buf + w->len, p, room);
        w->len += room;
        p += room;
        n -= room;
        w_flush(w);
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

#define W_LIT(w, s) w_bytes((w), (s), sizeof(s) - 1)

static void w_str(writer_t *w, const char *s)
{
    w_bytes(w, s, strlen(s));
}

static void w_u64(writer_t *w, uint64_t v)
{
    char tmp[24];
    int i = (int)sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    w_bytes(w, tmp + i, sizeof tmp - (size_t)i);
}

/* v / 1000 with exactly three decimals, e.g. 1365627867836.596 */
static void w_milli(writer_t *w, uint64_t v)
{
    char tmp[4];
    unsigned f = (unsigned)(v % 1000);
    w_u64(w, v / 1000);
    tmp[0] = '.';
    tmp[1] = (char)('0' + f / 100);
    tmp[2] = (char)('0' + f / 10 % 10);
    tmp[3] = (char)('0' + f % 10);
    w_bytes(w, tmp, 4);
}

static void w_open(writer_t *w, const char *path, int gzip)
{
    memset(w, 0, sizeof *w);
    w->buf = malloc(OUT_BUF_SIZE);
    if (!w->buf)
        die("out of memory");
    if (gzip) {
        w->gz = gzopen(path, "wb1");
        if (!w->gz)
            die("%s: cannot open for writing: %s", path, strerror(errno));
        if (gzbuffer(w->gz, 1u << 20) != 0)
            die("%s: gzbuffer failed", path);
    } else {
        w->fp = fopen(path, "wb");
        if (!w->fp)
            die("%s: cannot open for writing: %s", path, strerror(errno));
    }
}

static void w_close(writer_t *w)
{
    w_flush(w);
    if (w->gz) {
        int rc = gzclose(w->gz);
        if (rc != Z_OK)
            die("%s: gzip close failed (zlib error %d)", g_out_path, rc);
    } else if (fclose(w->fp) != 0) {
        die("%s: close failed: %s", g_out_path, strerror(errno));
    }
    free(w->buf);
    w->buf = NULL;
}

/* ------------------------------------------------------------------ */
/* the workload model                                                  */

typedef enum { BLK_NONE, BLK_ATTN, BLK_MLP } block_t;
typedef enum { ST_COMPUTE, ST_NCCL, ST_COPY, ST_SIDE } stream_kind_t;
typedef enum { KC_KERNEL, KC_MEMCPY, KC_MEMSET } kcat_t;
typedef enum { LN_RUNTIME, LN_DRIVER, LN_MEMCPY, LN_MEMSET } launch_t;

/* One CPU operation that launches one GPU activity. */
typedef struct {
    block_t block;
    const char *module;      /* "nn.Module: X_0" frame, or NULL */
    const char *frame;       /* python source frame */
    const char *builtin;     /* "<built-in ...>" frame, or NULL */
    const char *op;          /* outer cpu_op */
    const char *inner_op;    /* launching child cpu_op, or NULL */
    const char *op_args;     /* extra cpu_op args (Input Dims ...) */
    unsigned aux_ops;        /* tiny non-launching child cpu_ops */
    const char *kernel;      /* baseline name; NULL = candidate only */
    const char *kernel_cand; /* NULL = same as baseline; "" = removed */
    kcat_t kcat;
    launch_t launch;
    stream_kind_t stream;
    unsigned mean_ns;
    unsigned cand_pct; /* candidate duration, percent of baseline */
    const char *kargs; /* kernel args after "correlation" */
} op_tmpl_t;

#define KARGS(regs, smem, bps, wps, grid, block, occ)                         \
    "\"registers per thread\": " #regs ",\n      \"shared memory\": " #smem    \
    ",\n      \"blocks per SM\": " bps ",\n      \"warps per SM\": " wps       \
    ",\n      \"grid\": " grid ",\n      \"block\": " block                    \
    ",\n      \"est. achieved occupancy %\": " #occ

#define MEMARGS(bytes, bw) "\"bytes\": " #bytes ", \"memory bandwidth (GB/s)\": " bw

#define BF16x2 "\"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]"

#define GEMM(tile) \
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_" tile \
    "_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_" tile "_tn_align8::Params)"

#define LINEAR_FWD "python/sglang/srt/layers/linear.py(450): forward"
#define ROWLINEAR_FWD "python/sglang/srt/layers/linear.py(1285): forward"
#define ALLREDUCE_FRAME \
    "python/sglang/srt/distributed/communication_op.py(13): tensor_model_parallel_all_reduce"
#define NCCL_AR "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

static const op_tmpl_t LAYER_OPS[] = {
    {BLK_NONE, "nn.Module: RMSNorm_0", "python/sglang/srt/layers/layernorm.py(60): forward_cuda",
     "<built-in method rmsnorm of PyCapsule object at 0x7f3a2c1d5e30>", "sgl_kernel::rmsnorm", NULL,
     "\"Input Dims\": [[8, 4096], [4096], [8, 4096]], " BF16x2, 1,
     "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
     "__nv_bfloat16*, unsigned int, unsigned int, unsigned int, float)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 6000, 135,
     KARGS(32, 0, "0.0606061", "0.4848485", "[8, 1, 1]", "[512, 1, 1]", 1)},
    {BLK_ATTN, "nn.Module: QKVParallelLinear_0", LINEAR_FWD, "<built-in function linear>",
     "aten::linear", "aten::mm", "\"Input Dims\": [[8, 4096], [6144, 4096]], " BF16x2, 3,
     GEMM("128x128_64x3"), NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 38000, 100,
     KARGS(168, 98304, "0.3636364", "2.9090909", "[48, 1, 1]", "[128, 1, 1]", 5)},
    {BLK_ATTN, "nn.Module: RotaryEmbedding_0",
     "python/sglang/srt/layers/rotary_embedding.py(183): forward_cuda",
     "<built-in method rotary_embedding of PyCapsule object at 0x7f3a2c1d6a10>",
     "sgl_kernel::rotary_embedding", NULL, "\"Input Dims\": [[8], [8, 4096], [8, 1024]]", 1,
     "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
     "c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 4000, 100,
     KARGS(40, 0, "0.0606061", "0.2424242", "[8, 1, 1]", "[128, 1, 1]", 1)},
    {BLK_ATTN, NULL, "python/sglang/srt/mem_cache/memory_pool.py(312): set_kv_buffer", NULL,
     "aten::copy_", NULL, "\"Input Dims\": [[8, 8, 128], [8, 8, 128], []]", 0,
     "Memcpy DtoD (Device -> Device)", NULL, KC_MEMCPY, LN_MEMCPY, ST_COPY, 3000, 100,
     MEMARGS(16384, "5.461333")},
    {BLK_ATTN, "nn.Module: RadixAttention_0",
     "python/sglang/srt/layers/radix_attention.py(98): forward",
     "<built-in method fwd_kvcache of PyCapsule object at 0x7f3a2c1d7b80>",
     "sgl_kernel::fwd_kvcache", NULL, "\"Input Dims\": [[8, 1, 32, 128], [4096, 16, 8, 128]]", 2,
     "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, "
     "false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, "
     "true, false, false, false, true, true, false, false>(flash::Flash_fwd_params)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 55000, 90,
     KARGS(255, 49152, "0.9696970", "3.8787879", "[4, 8, 32]", "[128, 1, 1]", 12)},
    {BLK_ATTN, NULL, "python/sglang/srt/layers/layernorm.py(88): forward_native", NULL,
     "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", NULL, "\"Input Dims\": [[8, 4096]]", 0,
     NULL, "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_2", KC_KERNEL, LN_DRIVER, ST_COMPUTE,
     5000, 100, KARGS(26, 0, "0.0606061", "0.4848485", "[8, 1, 1]", "[256, 1, 1]", 1)},
    {BLK_ATTN, "nn.Module: RowParallelLinear_0", ROWLINEAR_FWD, "<built-in function linear>",
     "aten::linear", "aten::mm", "\"Input Dims\": [[8, 4096], [4096, 4096]], " BF16x2, 3,
     GEMM("64x64_64x4"), GEMM("128x64_64x4"), KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 22000, 95,
     KARGS(128, 73728, "0.2424242", "0.9696970", "[64, 1, 1]", "[128, 1, 1]", 3)},
    {BLK_ATTN, NULL, ALLREDUCE_FRAME, NULL, "c10d::allreduce_", "record_param_comms",
     "\"Input Dims\": [[8, 4096]], \"Input type\": [\"c10::BFloat16\"]", 1,
     NCCL_AR, NULL, KC_KERNEL, LN_RUNTIME, ST_NCCL, 30000, 120,
     KARGS(96, 0, "0.0606061", "0.9696970", "[8, 1, 1]", "[512, 1, 1]", 2)},
    {BLK_NONE, NULL, "python/sglang/srt/models/llama.py(246): forward", NULL, "aten::add", NULL,
     "\"Input Dims\": [[8, 4096], [8, 4096], []], " BF16x2, 0,
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "at::detail::Array<char*, 3>)",
     "", KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 3000, 100,
     KARGS(24, 0, "0.2424242", "1.9393939", "[32, 1, 1]", "[128, 1, 1]", 9)},
    {BLK_NONE, "nn.Module: RMSNorm_1", "python/sglang/srt/layers/layernorm.py(58): forward_cuda",
     "<built-in method fused_add_rmsnorm of PyCapsule object at 0x7f3a2c1d5f60>",
     "sgl_kernel::fused_add_rmsnorm", NULL, "\"Input Dims\": [[8, 4096], [8, 4096], [4096]]", 1,
     "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, "
     "__nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 7000, 100,
     KARGS(40, 16384, "0.0606061", "0.4848485", "[8, 1, 1]", "[512, 1, 1]", 1)},
    {BLK_MLP, "nn.Module: MergedColumnParallelLinear_0", LINEAR_FWD, "<built-in function linear>",
     "aten::linear", "aten::mm", "\"Input Dims\": [[8, 4096], [28672, 4096]], " BF16x2, 3,
     GEMM("256x128_32x3"), NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 65000, 80,
     KARGS(232, 81920, "0.9696970", "7.7575758", "[112, 1, 1]", "[256, 1, 1]", 12)},
    {BLK_MLP, "nn.Module: SiluAndMul_0", "python/sglang/srt/layers/activation.py(80): forward_cuda",
     NULL, "triton_poi_fused_mul_silu_0", NULL, "\"Input Dims\": [[8, 28672]]", 0,
     "triton_poi_fused_mul_silu_0", NULL, KC_KERNEL, LN_DRIVER, ST_COMPUTE, 9000, 100,
     KARGS(20, 0, "0.8484848", "3.3939394", "[112, 1, 1]", "[128, 1, 1]", 18)},
    {BLK_MLP, "nn.Module: RowParallelLinear_1", ROWLINEAR_FWD, "<built-in function linear>",
     "aten::linear", "aten::mm", "\"Input Dims\": [[8, 14336], [4096, 14336]], " BF16x2, 3,
     GEMM("128x256_64x3"), NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 45000, 100,
     KARGS(230, 147456, "0.2424242", "1.9393939", "[32, 1, 1]", "[256, 1, 1]", 6)},
    {BLK_MLP, NULL, ALLREDUCE_FRAME, NULL, "c10d::allreduce_", "record_param_comms",
     "\"Input Dims\": [[8, 4096]], \"Input type\": [\"c10::BFloat16\"]", 1,
     NCCL_AR, NULL, KC_KERNEL, LN_RUNTIME, ST_NCCL, 30000, 120,
     KARGS(96, 0, "0.0606061", "0.9696970", "[8, 1, 1]", "[512, 1, 1]", 2)},
    {BLK_NONE, NULL, "python/sglang/srt/layers/quantization/fp8_utils.py(142): apply", NULL,
     "aten::cat", NULL, "\"Input Dims\": [[8, 2048], [8, 2048]], " BF16x2, 1,
     "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
     "namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>(at::native::(anonymous "
     "namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<"
     "at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, "
     "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_SIDE, 8000, 100,
     KARGS(32, 0, "0.4848485", "3.8787879", "[64, 2, 1]", "[256, 1, 1]", 10)},
    {BLK_NONE, NULL, "python/sglang/srt/layers/moe/topk.py(210): select_experts", NULL,
     "aten::zero_", "aten::fill_", "\"Input Dims\": [[8, 64]]", 0,
     "Memset (Device)", NULL, KC_MEMSET, LN_MEMSET, ST_SIDE, 2000, 100,
     "\"bytes\": 2048, \"memory bandwidth (GB/s)\": 1.024"},
};

static const op_tmpl_t PROLOGUE_OPS[] = {
    {BLK_NONE, NULL, "python/sglang/srt/model_executor/forward_batch_info.py(412): init_new",
     "<built-in method to of Tensor object at 0x7f3a1e2b4c70>", "aten::to", "aten::copy_",
     "\"Input Dims\": [[8], [], [], [], []]", 2, "Memcpy HtoD (Pinned -> Device)", NULL,
     KC_MEMCPY, LN_MEMCPY, ST_COPY, 2500, 100, MEMARGS(64, "0.025600")},
    {BLK_NONE, "nn.Module: VocabParallelEmbedding_0",
     "python/sglang/srt/layers/vocab_parallel_embedding.py(488): forward",
     "<built-in function embedding>", "aten::embedding", "aten::index_select",
     "\"Input Dims\": [[128256, 4096], [8]], \"Input type\": [\"c10::BFloat16\", \"long int\"]", 2,
     "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
     "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
     "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
     "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned "
     "int, long)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 5000, 100,
     KARGS(38, 0, "0.4848485", "3.8787879", "[64, 1, 1]", "[128, 1, 1]", 9)},
};

static const op_tmpl_t EPILOGUE_OPS[] = {
    {BLK_NONE, "nn.Module: RMSNorm_64", "python/sglang/srt/layers/layernorm.py(60): forward_cuda",
     "<built-in method rmsnorm of PyCapsule object at 0x7f3a2c1d5e30>", "sgl_kernel::rmsnorm", NULL,
     "\"Input Dims\": [[8, 4096], [4096], [8, 4096]], " BF16x2, 1,
     "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
     "__nv_bfloat16*, unsigned int, unsigned int, unsigned int, float)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 6000, 135,
     KARGS(32, 0, "0.0606061", "0.4848485", "[8, 1, 1]", "[512, 1, 1]", 1)},
    {BLK_NONE, "nn.Module: LogitsProcessor_0",
     "python/sglang/srt/layers/logits_processor.py(331): forward", "<built-in function linear>",
     "aten::matmul", "aten::mm", "\"Input Dims\": [[8, 4096], [4096, 128256]], " BF16x2, 3,
     "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
     "tensor16x8x16_kernel",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 120000, 100,
     KARGS(214, 81920, "0.9696970", "3.8787879", "[1002, 1, 1]", "[128, 1, 1]", 24)},
    {BLK_NONE, NULL, "python/sglang/srt/layers/sampler.py(76): forward",
     "<built-in method softmax of Tensor object at 0x7f3a1e2b5d90>", "aten::softmax",
     "aten::_softmax", "\"Input Dims\": [[8, 128256], [], []]", 1,
     "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 14000, 100,
     KARGS(40, 2048, "0.0606061", "1.9393939", "[8, 1, 1]", "[1024, 1, 1]", 5)},
    {BLK_NONE, NULL, "python/sglang/srt/layers/sampler.py(112): forward",
     "<built-in method argmax of type object at 0x7f3a4b0e1aa0>", "aten::argmax", NULL,
     "\"Input Dims\": [[8, 128256], [], []]", 1,
     "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
     "at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, "
     "at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
     NULL, KC_KERNEL, LN_RUNTIME, ST_COMPUTE, 11000, 100,
     KARGS(32, 16, "0.0606061", "0.9696970", "[8, 1, 1]", "[32, 16, 1]", 3)},
    {BLK_NONE, NULL, "python/sglang/srt/managers/scheduler.py(1702): process_batch_result",
     "<built-in method tolist of Tensor object at 0x7f3a1e2b6ea0>", "aten::to", "aten::copy_",
     "\"Input Dims\": [[8], [], [], [], []]", 1, "Memcpy DtoH (Device -> Pinned)", NULL,
     KC_MEMCPY, LN_MEMCPY, ST_COMPUTE, 2000, 100, MEMARGS(64, "0.032000")},
};

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static const char *const AUX_OPS[] = {
    "aten::empty", "aten::as_strided", "aten::view", "aten::t", "aten::transpose",
    "aten::reshape", "aten::empty_strided", "aten::resolve_conj",
};

/* Frames opened once for the whole trace. */
static const char *const GLOBAL_FRAMES[] = {
    "threading.py(1012): _bootstrap",
    "threading.py(1075): _bootstrap_inner",
    "threading.py(1012): run",
    "python/sglang/srt/managers/scheduler.py(2484): run_scheduler_process",
    "python/sglang/srt/managers/scheduler.py(785): event_loop_normal",
};

/* Frames opened per step, below the ProfilerStep annotation. */
static const char *const STEP_FRAMES[] = {
    "python/sglang/srt/managers/scheduler.py(1660): run_batch",
    "python/sglang/srt/managers/tp_worker.py(239): forward_batch_generation",
    "python/sglang/srt/model_executor/model_runner.py(1200): forward",
    "python/sglang/srt/model_executor/model_runner.py(1105): forward_decode",
    "torch/nn/modules/module.py(1762): _call_impl",
    "nn.Module: LlamaForCausalLM_0",
    "python/sglang/srt/models/llama.py(420): forward",
    "torch/nn/modules/module.py(1762): _call_impl",
    "nn.Module: LlamaModel_0",
    "python/sglang/srt/models/llama.py(336): forward",
};

#define CALL_IMPL "torch/nn/modules/module.py(1762): _call_impl"

/* ------------------------------------------------------------------ */
/* generator state                                                     */

typedef enum { SP_PYTHON, SP_CPU_OP, SP_ANNOT } span_kind_t;

typedef struct {
    span_kind_t kind;
    const char *name;
    const char *args; /* extra cpu_op args text or NULL */
    uint64_t ts;
    uint64_t id;     /* Python id or External id */
    uint64_t parent; /* Python parent id */
} span_t;

typedef struct {
    /* options */
    uint64_t budget;
    uint64_t seed;
    unsigned nstreams;
    unsigned layers;
    int candidate;
    int int_ts;
    int stages;
    uint64_t base_ns;
    char gpu_pid[64]; /* JSON token: 0 or "TP00-gpu" */
    /* state */
    writer_t w;
    rng_t rng;       /* reseeded per op and per step (see reseed) */
    uint64_t serial; /* op/step counter, identical across variants */
    uint64_t now;  /* CPU thread clock, ns from base */
    uint64_t stream_free[MAX_STREAMS];
    unsigned stream_id[MAX_STREAMS];
    unsigned sid_compute, sid_nccl, sid_copy, side_first, side_count;
    uint64_t dep_ns; /* compute stream waits for this (NCCL) end */
    uint64_t ext, corr, pyid, ev_idx;
    uint64_t events, kernels, steps;
    uint64_t step_gpu_first, step_gpu_last;
    int have_events;
    span_t stack[MAX_DEPTH];
    int depth;
    char layer_names[MAX_LAYERS][48];
} gen_t;

/* ------------------------------------------------------------------ */
/* time formatting                                                     */

static uint64_t round_us(uint64_t ns)
{
    return (ns + 500) / 1000 * 1000;
}

static void w_time(gen_t *g, uint64_t off)
{
    uint64_t t = g->base_ns + off;
    if (g->int_ts)
        w_u64(&g->w, round_us(t) / 1000);
    else
        w_milli(&g->w, t);
}

static void w_dur(gen_t *g, uint64_t start, uint64_t end)
{
    if (g->int_ts)
        w_u64(&g->w, (round_us(g->base_ns + end) - round_us(g->base_ns + start)) / 1000);
    else
        w_milli(&g->w, end - start);
}

/* ------------------------------------------------------------------ */
/* event writers                                                       */

static void ev_begin(gen_t *g)
{
    if (g->have_events)
        W_LIT(&g->w, ",\n  {\n    ");
    else
        W_LIT(&g->w, "\n  {\n    ");
    g->have_events = 1;
    g->events++;
}

static void ev_end(gen_t *g)
{
    W_LIT(&g->w, "\n  }");
}

/* "ph": "X", "cat": ..., "name": ..., "pid": ..., "tid": ..., "ts", "dur" */
static void ev_complete_head(gen_t *g, const char *cat, const char *name, const char *pid,
                             uint64_t tid, uint64_t ts, uint64_t end)
{
    writer_t *w = &g->w;
    ev_begin(g);
    W_LIT(w, "\"ph\": \"X\", \"cat\": \"");
    w_str(w, cat);
    W_LIT(w, "\", \"name\": \"");
    w_str(w, name);
    W_LIT(w, "\", \"pid\": ");
    w_str(w, pid);
    W_LIT(w, ", \"tid\": ");
    w_u64(w, tid);
    W_LIT(w, ",\n    \"ts\": ");
    w_time(g, ts);
    W_LIT(w, ", \"dur\": ");
    w_dur(g, ts, end);
}

static void ev_args_begin(gen_t *g)
{
    W_LIT(&g->w, ",\n    \"args\": {\n      ");
}

static void ev_args_end(gen_t *g)
{
    W_LIT(&g->w, "\n    }");
}

static void emit_metadata(gen_t *g, const char *what, const char *pid, uint64_t tid,
                          const char *key, const char *value, uint64_t num)
{
    writer_t *w = &g->w;
    ev_begin(g);
    W_LIT(w, "\"name\": \"");
    w_str(w, what);
    W_LIT(w, "\", \"ph\": \"M\", \"ts\": ");
    w_time(g, 0);
    W_LIT(w, ", \"pid\": ");
    w_str(w, pid);
    W_LIT(w, ", \"tid\": ");
    w_u64(w, tid);
    W_LIT(w, ",\n    \"args\": {\n      \"");
    w_str(w, key);
    W_LIT(w, "\": ");
    if (value) {
        W_LIT(w, "\"");
        w_str(w, value);
        W_LIT(w, "\"");
    } else {
        w_u64(w, num);
    }
    W_LIT(w, "\n    }");
    ev_end(g);
}

static void emit_all_metadata(gen_t *g)
{
    char buf[64];
    emit_metadata(g, "process_name", CPU_PID, 0, "name", "python3", 0);
    emit_metadata(g, "process_labels", CPU_PID, 0, "labels", "CPU", 0);
    emit_metadata(g, "process_sort_index", CPU_PID, 0, "sort_index", NULL, 3113936);
    emit_metadata(g, "thread_name", CPU_PID, CPU_TID, "name", "thread 3126441 (python3)", 0);
    emit_metadata(g, "thread_sort_index", CPU_PID, CPU_TID, "sort_index", NULL, CPU_TID);
    emit_metadata(g, "process_name", g->gpu_pid, 0, "name", "GPU 0", 0);
    emit_metadata(g, "process_labels", g->gpu_pid, 0, "labels", "GPU 0", 0);
    emit_metadata(g, "process_sort_index", g->gpu_pid, 0, "sort_index", NULL, 5000000);
    for (unsigned i = 0; i < g->nstreams; i++) {
        snprintf(buf, sizeof buf, "stream %u", g->stream_id[i]);
        emit_metadata(g, "thread_name", g->gpu_pid, g->stream_id[i], "name", buf, 0);
        emit_metadata(g, "thread_sort_index", g->gpu_pid, g->stream_id[i], "sort_index", NULL,
                      g->stream_id[i]);
    }
}

static void emit_span(gen_t *g, const span_t *s, uint64_t end)
{
    writer_t *w = &g->w;
    switch (s->kind) {
    case SP_PYTHON:
        ev_complete_head(g, "python_function", s->name, CPU_PID, CPU_TID, s->ts, end);
        ev_args_begin(g);
        W_LIT(w, "\"Python parent id\": ");
        w_u64(w, s->parent);
        W_LIT(w, ", \"Python id\": ");
        w_u64(w, s->id);
        W_LIT(w, ", \"Python thread\": 0");
        break;
    case SP_CPU_OP:
        ev_complete_head(g, "cpu_op", s->name, CPU_PID, CPU_TID, s->ts, end);
        ev_args_begin(g);
        W_LIT(w, "\"External id\": ");
        w_u64(w, s->id);
        W_LIT(w, ", \"Record function id\": 0, \"Ev Idx\": ");
        w_u64(w, g->ev_idx++);
        if (s->args) {
            W_LIT(w, ",\n      ");
            w_str(w, s->args);
        }
        break;
    case SP_ANNOT:
        ev_complete_head(g, "user_annotation", s->name, CPU_PID, CPU_TID, s->ts, end);
        ev_args_begin(g);
        W_LIT(w, "\"External id\": ");
        w_u64(w, s->id);
        W_LIT(w, ", \"Record function id\": 0, \"Ev Idx\": ");
        w_u64(w, g->ev_idx++);
        break;
    }
    ev_args_end(g);
    ev_end(g);
}

static void emit_gpu_annotation(gen_t *g, const char *name, uint64_t ext, uint64_t ts,
                                uint64_t end)
{
    writer_t *w = &g->w;
    ev_complete_head(g, "gpu_user_annotation", name, g->gpu_pid, g->stream_id[g->sid_compute], ts,
                     end);
    ev_args_begin(g);
    W_LIT(w, "\"External id\": ");
    w_u64(w, ext);
    ev_args_end(g);
    ev_end(g);
}

static void emit_runtime(gen_t *g, const char *cat, const char *name, unsigned cbid, uint64_t ext,
                         uint64_t corr, uint64_t ts, uint64_t end)
{
    writer_t *w = &g->w;
    ev_complete_head(g, cat, name, CPU_PID, CPU_TID, ts, end);
    ev_args_begin(g);
    W_LIT(w, "\"External id\": ");
    w_u64(w, ext);
    W_LIT(w, ",\n      \"cbid\": ");
    w_u64(w, cbid);
    W_LIT(w, ", \"correlation\": ");
    w_u64(w, corr);
    ev_args_end(g);
    ev_end(g);
}

static void emit_flow(gen_t *g, int finish, uint64_t corr, const char *pid, uint64_t tid,
                      uint64_t ts)
{
    writer_t *w = &g->w;
    ev_begin(g);
    if (finish)
        W_LIT(w, "\"ph\": \"f\", \"id\": ");
    else
        W_LIT(w, "\"ph\": \"s\", \"id\": ");
    w_u64(w, corr);
    W_LIT(w, ", \"pid\": ");
    w_str(w, pid);
    W_LIT(w, ", \"tid\": ");
    w_u64(w, tid);
    W_LIT(w, ", \"ts\": ");
    w_time(g, ts);
    if (finish)
        W_LIT(w, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"");
    else
        W_LIT(w, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"");
    ev_end(g);
}

static const char *kcat_name(kcat_t k)
{
    return k == KC_MEMCPY ? "gpu_memcpy" : k == KC_MEMSET ? "gpu_memset" : "kernel";
}

static void emit_kernel(gen_t *g, const op_tmpl_t *t, const char *name, unsigned sid, uint64_t ext,
                        uint64_t corr, uint64_t ts, uint64_t end)
{
    writer_t *w = &g->w;
    unsigned stream = g->stream_id[sid];
    ev_complete_head(g, kcat_name(t->kcat), name, g->gpu_pid, stream, ts, end);
    ev_args_begin(g);
    W_LIT(w, "\"External id\": ");
    w_u64(w, ext);
    W_LIT(w, ",\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": ");
    w_u64(w, stream);
    W_LIT(w, ", \"correlation\": ");
    w_u64(w, corr);
    W_LIT(w, ",\n      ");
    w_str(w, t->kargs);
    ev_args_end(g);
    ev_end(g);
    g->kernels++;
}

/* ------------------------------------------------------------------ */
/* CPU span stack                                                      */

static uint64_t python_parent(const gen_t *g)
{
    for (int i = g->depth - 1; i >= 0; i--)
        if (g->stack[i].kind == SP_PYTHON)
            return g->stack[i].id;
    return 0;
}

static span_t *push_span(gen_t *g, span_kind_t kind, const char *name, const char *args)
{
    if (g->depth >= MAX_DEPTH)
        die("internal error: span stack overflow");
    span_t *s = &g->stack[g->depth];
    s->kind = kind;
    s->name = name;
    s->args = args;
    s->ts = g->now;
    s->parent = 0;
    if (kind == SP_PYTHON) {
        s->parent = python_parent(g);
        s->id = ++g->pyid;
    } else {
        s->id = ++g->ext;
    }
    g->depth++;
    return s;
}

static void open_frame(gen_t *g, const char *name)
{
    g->now += rng_range(&g->rng, 300, 1500);
    push_span(g, SP_PYTHON, name, NULL);
}

static uint64_t open_op(gen_t *g, const char *name, const char *args)
{
    g->now += rng_range(&g->rng, 500, 2500);
    return push_span(g, SP_CPU_OP, name, args)->id;
}

static void close_span(gen_t *g)
{
    if (g->depth <= 0)
        die("internal error: span stack underflow");
    g->now += rng_range(&g->rng, 200, 900);
    g->depth--;
    emit_span(g, &g->stack[g->depth], g->now);
}

static void close_to(gen_t *g, int depth)
{
    while (g->depth > depth)
        close_span(g);
}

/* A tiny non-launching cpu_op (aten::empty, aten::view, ...). */
static void aux_op(gen_t *g)
{
    open_op(g, AUX_OPS[rng_below(&g->rng, N_ELEMS(AUX_OPS))], NULL);
    g->now += rng_range(&g->rng, 300, 2000);
    close_span(g);
}

/* ------------------------------------------------------------------ */
/* GPU scheduling                                                      */

static unsigned pick_stream(gen_t *g, stream_kind_t k, unsigned salt)
{
    switch (k) {
    case ST_NCCL:
        return g->sid_nccl;
    case ST_COPY:
        return g->sid_copy;
    case ST_SIDE:
        return g->side_count ? g->side_first + salt % g->side_count : g->sid_compute;
    case ST_COMPUTE:
        break;
    }
    return g->sid_compute;
}

/* Place one GPU activity launched at launch_ts; returns its start. */
static uint64_t schedule_gpu(gen_t *g, unsigned sid, uint64_t launch_ts, uint64_t dur,
                             uint64_t *end)
{
    uint64_t start = launch_ts + rng_range(&g->rng, 2500, 7000);
    uint64_t ready = g->stream_free[sid] + rng_range(&g->rng, 300, 1800);
    if (ready > start)
        start = ready;
    /* a collective consumes the output of the compute kernel before it */
    if (sid == g->sid_nccl && sid != g->sid_compute &&
        g->stream_free[g->sid_compute] + 1000 > start)
        start = g->stream_free[g->sid_compute] + 1000;
    if (sid == g->sid_compute && g->dep_ns) {
        if (g->dep_ns + 800 > start)
            start = g->dep_ns + 800;
        g->dep_ns = 0;
    }
    if (g->int_ts) {
        start = round_us(g->base_ns + start) - g->base_ns;
        dur = dur < 1000 ? 1000 : round_us(dur);
    }
    *end = start + dur;
    g->stream_free[sid] = *end;
    if (!g->step_gpu_first || start < g->step_gpu_first)
        g->step_gpu_first = start;
    if (*end > g->step_gpu_last)
        g->step_gpu_last = *end;
    return start;
}

static const char *launch_name(launch_t l, const char **cat, unsigned *cbid)
{
    switch (l) {
    case LN_DRIVER:
        *cat = "cuda_driver";
        *cbid = 307;
        return "cuLaunchKernel";
    case LN_MEMCPY:
        *cat = "cuda_runtime";
        *cbid = 41;
        return "cudaMemcpyAsync";
    case LN_MEMSET:
        *cat = "cuda_runtime";
        *cbid = 51;
        return "cudaMemsetAsync";
    case LN_RUNTIME:
        break;
    }
    *cat = "cuda_runtime";
    *cbid = 211;
    return "cudaLaunchKernel";
}

/* Kernel name for this variant; NULL when the op is absent. */
static const char *variant_kernel(const gen_t *g, const op_tmpl_t *t)
{
    if (!g->candidate)
        return t->kernel;
    if (t->kernel_cand)
        return t->kernel_cand[0] ? t->kernel_cand : NULL;
    return t->kernel;
}

/* Launch the op's GPU activity from inside its innermost cpu_op. */
static void launch(gen_t *g, const op_tmpl_t *t, const char *kname, uint64_t ext, unsigned salt)
{
    const char *cat;
    unsigned cbid;
    const char *lname = launch_name(t->launch, &cat, &cbid);
    uint64_t dur = rng_jitter(&g->rng, t->mean_ns, 12);
    uint64_t ts = g->now + rng_range(&g->rng, 300, 1200);
    uint64_t rt_end = ts + rng_range(&g->rng, 2500, 6500);
    unsigned sid = pick_stream(g, t->stream, salt);
    uint64_t corr = ++g->corr;
    uint64_t kend;
    int nccl_wait = rng_pct(&g->rng, g->candidate ? 75 : 20);

    if (g->candidate)
        dur = dur * t->cand_pct / 100;
    uint64_t kts = schedule_gpu(g, sid, ts, dur, &kend);
    emit_runtime(g, cat, lname, cbid, ext, corr, ts, rt_end);
    emit_flow(g, 0, corr, CPU_PID, CPU_TID, ts);
    emit_kernel(g, t, kname, sid, ext, corr, kts, kend);
    emit_flow(g, 1, corr, g->gpu_pid, g->stream_id[sid], kts);
    g->now = rt_end;
    if (t->stream == ST_NCCL && nccl_wait)
        g->dep_ns = kend;
}

/* Every op and step draws from its own stream, keyed by a counter that
 * also counts ops absent from this variant: baseline and candidate then
 * see the same durations for the same op. */
static void reseed(gen_t *g)
{
    rng_seed(&g->rng, g->seed ^ (++g->serial * 0xd1b54a32d192ed03ull));
}

/* One op: module frames, cpu_op(s), launch, kernel. */
static void run_op(gen_t *g, const op_tmpl_t *t, unsigned salt)
{
    const char *kname = variant_kernel(g, t);
    int base = g->depth;
    reseed(g);
    if (!kname)
        return; /* absent in this variant */
    if (t->module) {
        open_frame(g, CALL_IMPL);
        open_frame(g, t->module);
    }
    open_frame(g, t->frame);
    if (t->builtin)
        open_frame(g, t->builtin);
    uint64_t ext = open_op(g, t->op, t->op_args);
    for (unsigned i = 0; i < t->aux_ops; i++)
        aux_op(g);
    if (t->inner_op)
        ext = open_op(g, t->inner_op, NULL);
    launch(g, t, kname, ext, salt);
    close_to(g, base);
}

/* ------------------------------------------------------------------ */
/* steps                                                               */

static int over_budget(const gen_t *g)
{
    return g->w.total >= g->budget;
}

static void switch_block(gen_t *g, block_t *cur, block_t want, int layer_depth)
{
    if (*cur == want)
        return;
    close_to(g, layer_depth);
    if (want == BLK_ATTN) {
        open_frame(g, CALL_IMPL);
        open_frame(g, "nn.Module: LlamaAttention_0");
        open_frame(g, "python/sglang/srt/models/llama.py(196): forward");
    } else if (want == BLK_MLP) {
        open_frame(g, CALL_IMPL);
        open_frame(g, "nn.Module: LlamaMLP_0");
        open_frame(g, "python/sglang/srt/models/llama.py(110): forward");
    }
    *cur = want;
}

/* One decoder layer; stops early when the byte budget runs out. */
static void run_layer(gen_t *g, unsigned layer)
{
    int base = g->depth;
    block_t cur = BLK_NONE;
    open_frame(g, CALL_IMPL);
    open_frame(g, g->layer_names[layer]);
    open_frame(g, "python/sglang/srt/models/llama.py(271): forward");
    int layer_depth = g->depth;
    for (size_t i = 0; i < N_ELEMS(LAYER_OPS); i++) {
        const op_tmpl_t *t = &LAYER_OPS[i];
        switch_block(g, &cur, t->block, layer_depth);
        run_op(g, t, layer + (unsigned)i);
        if (over_budget(g))
            break;
    }
    close_to(g, base);
}

static void run_ops(gen_t *g, const op_tmpl_t *ops, size_t n)
{
    for (size_t i = 0; i < n && !over_budget(g); i++)
        run_op(g, &ops[i], (unsigned)i);
}

/* The step ends with a blocking sync on the sampled tokens. */
static void sync_step(gen_t *g)
{
    int base = g->depth;
    uint64_t wait = 0;
    for (unsigned i = 0; i < g->nstreams; i++)
        if (g->stream_free[i] > wait)
            wait = g->stream_free[i];
    open_frame(g, "python/sglang/srt/managers/scheduler.py(1702): process_batch_result");
    open_frame(g, "<built-in method item of Tensor object at 0x7f3a1e2b7fb0>");
    uint64_t ext = open_op(g, "aten::item", NULL);
    open_op(g, "aten::_local_scalar_dense", NULL);
    uint64_t ts = g->now + rng_range(&g->rng, 300, 900);
    uint64_t end = ts + rng_range(&g->rng, 1500, 4000);
    if (wait + 2000 > end)
        end = wait + 2000;
    emit_runtime(g, "cuda_runtime", "cudaStreamSynchronize", 131, ext, ++g->corr, ts, end);
    g->now = end;
    close_to(g, base);
}

static void run_step(gen_t *g)
{
    char name[48];
    char stage_name[48];
    int base = g->depth;
    uint64_t step = g->steps++;
    int decode = (step % 8) != 0;

    snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)step);
    snprintf(stage_name, sizeof stage_name, "sglang::forward_%s",
             decode ? "decode" : "prefill");
    reseed(g);
    g->step_gpu_first = 0;
    g->step_gpu_last = 0;
    g->now += rng_range(&g->rng, 20000, 90000); /* scheduler idle time */
    span_t *annot = push_span(g, SP_ANNOT, name, NULL);
    uint64_t annot_ext = annot->id;
    uint64_t stage_ext = 0;
    if (g->stages)
        stage_ext = push_span(g, SP_ANNOT, stage_name, NULL)->id;
    for (size_t i = 0; i < N_ELEMS(STEP_FRAMES); i++)
        open_frame(g, STEP_FRAMES[i]);
    run_ops(g, PROLOGUE_OPS, N_ELEMS(PROLOGUE_OPS));
    for (unsigned l = 0; l < g->layers && !over_budget(g); l++)
        run_layer(g, l);
    run_ops(g, EPILOGUE_OPS, N_ELEMS(EPILOGUE_OPS));
    sync_step(g);
    close_to(g, base);
    if (g->step_gpu_first) {
        if (g->stages)
            emit_gpu_annotation(g, stage_name, stage_ext, g->step_gpu_first, g->step_gpu_last);
        emit_gpu_annotation(g, name, annot_ext, g->step_gpu_first, g->step_gpu_last);
    }
}

/* ------------------------------------------------------------------ */
/* document                                                            */

static void write_device_properties(writer_t *w)
{
    W_LIT(w, "  \"deviceProperties\": [\n"
             "    {\n"
             "      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": "
             "85031714816,\n"
             "      \"computeMajor\": 8, \"computeMinor\": 0,\n"
             "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
             "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
             "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 167936,\n"
             "      \"numSms\": 108, \"sharedMemPerBlockOptin\": 166912\n"
             "    }\n"
             "  ],\n");
}

static void write_trace_span(gen_t *g)
{
    writer_t *w = &g->w;
    ev_complete_head(g, "Trace", "PyTorch Profiler (0)", CPU_PID, 0, 0, g->now + 1000);
    ev_args_begin(g);
    W_LIT(w, "\"Op count\": 0");
    ev_args_end(g);
    ev_end(g);
}

static void setup_streams(gen_t *g)
{
    unsigned k = g->nstreams;
    for (unsigned i = 0; i < k; i++)
        g->stream_id[i] = 7 + i;
    g->sid_compute = 0;
    g->sid_nccl = k >= 2 ? 1 : 0;
    g->sid_copy = k >= 3 ? 2 : 0;
    g->side_first = 3;
    g->side_count = k > 3 ? k - 3 : 0;
}

static void setup_layers(gen_t *g)
{
    for (unsigned l = 0; l < g->layers; l++)
        snprintf(g->layer_names[l], sizeof g->layer_names[l], "nn.Module: LlamaDecoderLayer_%u", l);
}

static void generate(gen_t *g)
{
    writer_t *w = &g->w;
    reseed(g);
    setup_streams(g);
    setup_layers(g);
    W_LIT(w, "{\n  \"schemaVersion\": 1,\n");
    write_device_properties(w);
    W_LIT(w, "  \"traceEvents\": [");
    emit_all_metadata(g);
    g->now = 1000;
    for (size_t i = 0; i < N_ELEMS(GLOBAL_FRAMES); i++)
        open_frame(g, GLOBAL_FRAMES[i]);
    while (!over_budget(g))
        run_step(g);
    close_to(g, 0);
    write_trace_span(g);
    W_LIT(w, "\n  ],\n  \"displayTimeUnit\": \"ms\"\n}\n");
}

/* ------------------------------------------------------------------ */
/* --distinct-names: many distinct kernel names (the scaling benchmark) */

/* Kernel name number i of a --distinct-names trace.  Three quarters are
 * short templated names, a quarter long cutlass/flash-attention names (compact
 * form well over 96 characters, so the relaxed lookup's long-common-prefix
 * step runs), and one in sixteen carries "flash_attn_fwd_combine" (an alias
 * group trigger).  The variant's salt sits after the name's number: a
 * candidate name never equals, prefixes or contains a baseline name, and a
 * long candidate name shares its longest compact prefix with the baseline
 * name of the same number. */
static void distinct_name(char *buf, size_t cap, uint64_t i, const char *salt)
{
    static const char *const words[] = {"gemm", "softmax", "rmsnorm", "rotary", "topk",
                                        "gather", "scatter", "reduce", "silu", "argmax",
                                        "layer_norm", "quantize"};
    unsigned w = (unsigned)(i % (sizeof words / sizeof words[0]));
    if (i % 16 == 5)
        snprintf(buf, cap,
                 "void flash::flash_attn_fwd_combine_%07llu_%s<cutlass::bfloat16_t, %u>"
                 "(flash::Flash_fwd_params)",
                 (unsigned long long)i, salt, w);
    else if (i % 4 == 3)
        snprintf(buf, cap,
                 "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
                 "flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, "
                 "cute::C<1> >, cute::tuple<cute::C<128>, cute::C<%u>, cute::C<128> >, tile_%07llu_%s, "
                 "cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false>, "
                 "flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128> >, "
                 "cutlass::bfloat16_t> > > >(flash::FlashAttnFwdSm90::Params)",
                 64u * (w + 1), (unsigned long long)i, salt);
    else
        snprintf(buf, cap, "void kdgen::%s_kernel_%07llu_%s<%u, float>(float const*, float*, int)",
                 words[w], (unsigned long long)i, salt, w);
}

/* One name: an aten::mm cpu_op, its cudaLaunchKernel and the kernel, tied by
 * External id and correlation; one kernel in four on a second stream,
 * overlapping the next one. */
static void write_distinct_name(gen_t *g, uint64_t i, const char *salt)
{
    writer_t *w = &g->w;
    char name[1024];
    distinct_name(name, sizeof name, i, salt);
    uint64_t ext = 1000 + i, corr = 500000 + i;
    uint64_t dur_ns = 2000 + (i * 2654435761u) % 50000; /* 2-52 us, distinct-ish */
    uint64_t cpu = g->now, gpu = g->now + 5000;
    unsigned stream = i % 4 == 1 ? 8 : 7;
    W_LIT(w, ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":" CPU_PID ",\"tid\":");
    w_u64(w, CPU_TID);
    W_LIT(w, ",\"ts\":");
    w_milli(w, cpu);
    W_LIT(w, ",\"dur\":3.000,\"args\":{\"External id\":");
    w_u64(w, ext);
    W_LIT(w, "}},\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":" CPU_PID
             ",\"tid\":");
    w_u64(w, CPU_TID);
    W_LIT(w, ",\"ts\":");
    w_milli(w, cpu + 1000);
    W_LIT(w, ",\"dur\":1.000,\"args\":{\"External id\":");
    w_u64(w, ext);
    W_LIT(w, ",\"correlation\":");
    w_u64(w, corr);
    W_LIT(w, "}},\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
    w_str(w, name);
    W_LIT(w, "\",\"pid\":");
    w_str(w, g->gpu_pid);
    W_LIT(w, ",\"tid\":");
    w_u64(w, stream);
    W_LIT(w, ",\"ts\":");
    w_milli(w, gpu);
    W_LIT(w, ",\"dur\":");
    w_milli(w, dur_ns);
    W_LIT(w, ",\"args\":{\"External id\":");
    w_u64(w, ext);
    W_LIT(w, ",\"correlation\":");
    w_u64(w, corr);
    W_LIT(w, ",\"stream\":");
    w_u64(w, stream);
    W_LIT(w, ",\"device\":0}}");
    g->now += stream == 8 ? 4000 : (dur_ns > 3000 ? dur_ns : 3000) + 1000;
    g->events += 3;
    g->kernels++;
}

static void generate_distinct_names(gen_t *g, uint64_t n)
{
    writer_t *w = &g->w;
    const char *salt = g->candidate ? "v2" : "v1";
    W_LIT(w, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    W_LIT(w, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" CPU_PID ",\"tid\":");
    w_u64(w, CPU_TID);
    W_LIT(w, ",\"args\":{\"name\":\"thread 3126441 (python3)\"}}");
    g->events = 1;
    g->now = 1000000;
    for (uint64_t i = 0; i < n; i++)
        write_distinct_name(g, i, salt);
    W_LIT(w, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":" CPU_PID
             ",\"tid\":");
    w_u64(w, CPU_TID);
    W_LIT(w, ",\"ts\":999.000,\"dur\":");
    w_milli(w, g->now);
    W_LIT(w, "}\n]}\n");
    g->events++;
    g->steps = 1;
}

/* ------------------------------------------------------------------ */
/* options                                                             */

typedef struct {
    double size_mb;
    uint64_t seed;
    unsigned streams;
    unsigned layers;
    int gzip;
    double shift_us;
    int candidate;
    int int_ts;
    int stages;
    const char *gpu_pid;
    const char *out;
    uint64_t distinct_names; /* 0: the workload model */
} opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " --size-mb N [--seed S] [--streams K] [--layers L] [--gzip]\n"
            "       [--shift-us X] [--variant baseline|candidate] [--gpu-pid PID]\n"
            "       [--ts-style frac|int] [--stages] -o FILE\n"
            "       " PROG " --distinct-names N [--variant baseline|candidate] [--gzip]\n"
            "       [--gpu-pid PID] -o FILE\n");
}

static const char *need_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die("option %s needs a value", argv[*i]);
    return argv[++*i];
}

static double parse_double(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end)
        die("%s: not a number: '%s'", opt, s);
    return v;
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        die("%s: not a non-negative integer: '%s'", opt, s);
    return (uint64_t)v;
}

static int pid_is_safe(const char *s)
{
    if (!*s || strlen(s) > 40)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.' || *p == ':'))
            return 0;
    return 1;
}

static void parse_opts(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->streams = 8;
    o->layers = 32;
    o->gpu_pid = "0";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--size-mb"))
            o->size_mb = parse_double(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--seed"))
            o->seed = parse_u64(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--streams"))
            o->streams = (unsigned)parse_u64(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--layers"))
            o->layers = (unsigned)parse_u64(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--distinct-names"))
            o->distinct_names = parse_u64(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--gzip"))
            o->gzip = 1;
        else if (!strcmp(a, "--stages"))
            o->stages = 1;
        else if (!strcmp(a, "--shift-us"))
            o->shift_us = parse_double(a, need_arg(argc, argv, &i));
        else if (!strcmp(a, "--gpu-pid"))
            o->gpu_pid = need_arg(argc, argv, &i);
        else if (!strcmp(a, "-o"))
            o->out = need_arg(argc, argv, &i);
        else if (!strcmp(a, "--variant")) {
            const char *v = need_arg(argc, argv, &i);
            if (!strcmp(v, "candidate"))
                o->candidate = 1;
            else if (strcmp(v, "baseline"))
                die("--variant: expected baseline or candidate, got '%s'", v);
        } else if (!strcmp(a, "--ts-style")) {
            const char *v = need_arg(argc, argv, &i);
            if (!strcmp(v, "int"))
                o->int_ts = 1;
            else if (strcmp(v, "frac"))
                die("--ts-style: expected frac or int, got '%s'", v);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            die("unknown option '%s'", a);
        }
    }
    if (!(o->size_mb > 0) && !o->distinct_names)
        die("--size-mb N (N > 0) or --distinct-names N is required");
    if (o->distinct_names > 100000000)
        die("--distinct-names %llu is too large", (unsigned long long)o->distinct_names);
    if (o->size_mb > 1e6)
        die("--size-mb %g is too large", o->size_mb);
    if (!o->out)
        die("-o FILE is required");
    if (o->streams < 1 || o->streams > MAX_STREAMS)
        die("--streams must be between 1 and %d", MAX_STREAMS);
    if (o->layers < 1 || o->layers > MAX_LAYERS)
        die("--layers must be between 1 and %d", MAX_LAYERS);
    if (!pid_is_safe(o->gpu_pid))
        die("--gpu-pid: use letters, digits and -_.: only (got '%s')", o->gpu_pid);
    if (o->shift_us < 0 || o->shift_us > 1e12)
        die("--shift-us must be between 0 and 1e12");
}

static int all_digits(const char *s)
{
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static void configure(gen_t *g, const opts_t *o)
{
    g->budget = (uint64_t)(o->size_mb * 1e6);
    g->seed = o->seed;
    g->nstreams = o->streams;
    g->layers = o->layers;
    g->candidate = o->candidate;
    g->int_ts = o->int_ts;
    g->stages = o->stages;
    g->base_ns = (o->int_ts ? BASE_INT_NS : BASE_FRAC_NS) + (uint64_t)(o->shift_us * 1000.0 + 0.5);
    if (all_digits(o->gpu_pid) && strlen(o->gpu_pid) < 19)
        snprintf(g->gpu_pid, sizeof g->gpu_pid, "%s", o->gpu_pid);
    else
        snprintf(g->gpu_pid, sizeof g->gpu_pid, "\"%s\"", o->gpu_pid);
}

int main(int argc, char **argv)
{
    opts_t o;
    static gen_t g;

    parse_opts(argc, argv, &o);
    configure(&g, &o);
    w_open(&g.w, o.out, o.gzip);
    g_out_path = o.out; /* from now on a failure removes the partial file */
    if (o.distinct_names)
        generate_distinct_names(&g, o.distinct_names);
    else
        generate(&g);
    uint64_t bytes = g.w.total;
    w_close(&g.w);
    fprintf(stderr, "%s: %llu bytes, %llu events, %llu kernels, %llu steps\n", o.out,
            (unsigned long long)bytes, (unsigned long long)g.events,
            (unsigned long long)g.kernels, (unsigned long long)g.steps);
    return 0;
}
