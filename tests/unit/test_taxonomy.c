/* test_taxonomy.c — the two built-in classification profiles on kernel names
 * of current CUDA and ROCm stacks (docs/taxonomy.md): the default profile
 * classifies collectives, GEMMs, attention, Inductor kernels, copies and
 * pointwise work correctly; the reference profile keeps the reference's
 * answers, wrong ones included, because conformance depends on them. Most
 * names are real ones from ../shared/corpus (some cut short after the part
 * that decides); the others are written the way their libraries name them. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "kerndiff/classify.h"
#include "suites.h"

#define C_COMP KD_CAT_COMPUTE
#define C_COMM KD_CAT_COMMUNICATION
#define C_MEM KD_CAT_MEMORY
#define C_ELEM KD_CAT_ELEMENTWISE
#define C_OTHER KD_CAT_OTHER
#define ANY (-1) /* the reference's answer is not checked */

typedef struct {
    const char *name;
    int dflt; /* the default profile's category */
    int ref;  /* the reference profile's, or ANY */
} expect;

/* Fails with the name and both categories unless r gives want. */
static void check_one(const kd_rules *r, const char *name, int want)
{
    kd_category got = kd_rules_classify(r, name);
    ck_assert_msg(got == want, "%s profile: %s for \"%.160s\", want %s", r->name, kd_category_name(got),
                  name, kd_category_name((kd_category)want));
}

static void check_all(const expect *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        check_one(kd_rules_default(), e[i].name, e[i].dflt);
        if (e[i].ref != ANY)
            check_one(kd_rules_reference(), e[i].name, e[i].ref);
    }
}

#define CHECK_ALL(table) check_all(table, sizeof(table) / sizeof((table)[0]))

/* ---- communication ---------------------------------------------------------------- */

static const expect collectives[] = {
    /* NCCL (corpus) and RCCL, which keeps NCCL's kernel names */
    {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", C_COMM, C_COMM},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", C_COMM, C_COMM},
    {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", C_COMM, C_COMM},
    {"rcclKernel_Generic_LL128", C_COMM, C_OTHER},
    /* MSCCL / MSCCL++ */
    {"void mscclpp::executionKernel<__nv_bfloat16>(int, __nv_bfloat16*, __nv_bfloat16*, int)", C_COMM, C_OTHER},
    {"mscclKernel_Sum_half_Simple_false", C_COMM, C_OTHER},
    /* NVSHMEM */
    {"void nvshmemi_transfer_rma_nbi_kernel<(nvshmemi_op_t)1>(void*, void*, unsigned long, int)", C_COMM, C_OTHER},
    /* DeepEP: both spellings; "dispatch" would only be the weak tier */
    {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", C_COMM, C_COMM},
    {"void deep_ep::internode_ll::combine<false, 7168>(void*, void*, int*)", C_COMM, C_COMM},
    {"deepep_low_latency_combine", C_COMM, C_COMM},
    /* pplx-kernels, Mooncake, TensorRT-LLM MNNVL all-to-all */
    {"void pplx::dispatchKernel<__nv_bfloat16, 32>(int, unsigned long)", C_COMM, C_COMM},
    {"mooncake_ep_dispatch_kernel", C_COMM, C_COMM},
    {"void tensorrt_llm::kernels::moe_comm::moeA2ADispatchKernel<__nv_bfloat16>(int)", C_COMM, C_COMM},
    /* HCCL on Ascend, oneCCL */
    {"hcom_allReduce__368_0_1", C_COMM, C_COMM},
    {"hcom_send__368_2_1", C_COMM, C_OTHER},
    {"oneccl_bf16_bcast_kernel", C_COMM, C_OTHER},
    {"ccl_kernel_send_recv_int8", C_COMM, C_OTHER},
    /* custom all-reduces: vLLM / SGLang, PyTorch multimem (corpus), TensorRT-LLM,
     * AMD QuickReduce, one-shot / two-shot */
    {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, "
     "vllm::Signal*, __nv_bfloat16*, int, int)",
     C_COMM, C_COMM},
    {"void sglang::cross_device_reduce_2stage<__hip_bfloat16, 8>(sglang::RankData*)", C_COMM, C_COMM},
    {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, "
     "unsigned int**, unsigned long, unsigned long)",
     C_COMM, C_COMM},
    {"void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8>(int)", C_COMM,
     C_COMM},
    {"void tensorrt_llm::kernels::twoShotAllReduceKernel<__nv_bfloat16, 8>(int)", C_COMM, C_COMM},
    {"void quickreduce::allreduce_prototype_twoshot<__hip_bfloat16, quickreduce::CodecQ4>(int)", C_COMM, C_COMM},
    {"reduce_scatter_kernel_bf16", C_COMM, C_COMM},
    {"all_gather_into_tensor_kernel", C_COMM, C_COMM},
    /* the guarded weak tier: MoE dispatch / combine, unless compute-like */
    {"moe_dispatch", C_COMM, C_COMM},
    {"moe_combine_kernel", C_COMM, C_COMM},
    {"void mori::moe::EpDispatchIntraNodeKernel<__nv_bfloat16>(mori::moe::EpDispatchCombineArgs)", C_COMM, C_COMM},
    {"fused_moe_kernel_dispatch", C_COMP, C_COMP},
};

START_TEST(test_communication)
{
    CHECK_ALL(collectives);
}
END_TEST

/* Names the reference calls communication through a weak keyword hitting an
 * unrelated word, or that only look like a collective. */
static const expect not_collectives[] = {
    /* cub's Dispatch* template (corpus) */
    {"void cub::DeviceReduceByKeyKernel<cub::DispatchReduceByKey<long*, long*, cub::ConstantInputIterator<int, "
     "int>, int*, int*, cub::Equality, cub::Sum, int>::PtxReduceByKeyPolicy, long*, long*>(long*, long*)",
     C_OTHER, C_COMM},
    /* triton_kernels MoE routing (corpus): "_combined" */
    {"_combined_routing_compute", C_ELEM, C_COMM},
    {"_combined_routing_memset", C_MEM, C_MEM},
    /* "a2a" inside an unrelated identifier */
    {"void foo::ka2a_pack_kernel<float>(float*)", C_OTHER, C_COMM},
    /* a PyTorch broadcasting binary op is pointwise, not a broadcast */
    {"void at::native::elementwise_kernel_manual_unroll<128, 4, at::native::(anonymous namespace)::"
     "type_specialized_broadcast_kernel_launcher<1>::apply<at::native::BinaryFunctor<float> > >(int)",
     C_ELEM, C_ELEM},
};

START_TEST(test_not_communication)
{
    CHECK_ALL(not_collectives);
}
END_TEST

/* ---- compute: GEMMs, convolutions, attention ---------------------------------------- */

static const expect gemms[] = {
    /* Tensile / hipBLASLt (corpus: the Flux MI300X pair's two largest GEMMs are Bias variants) */
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x32_MI16x16x1_SN_LDSB1_AFC1_AG0_AFEM1_AFEM1_ASEM1_"
     "CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0",
     C_COMP, C_ELEM},
    {"Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN_1LDSB0_APM1_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASM",
     C_COMP, C_OTHER},
    /* cuBLAS: nvjet (corpus), xmma, cublasLt helpers */
    {"nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", C_COMP, C_ELEM},
    {"nvjet_tst_192x8_64x8_4x1_v_bz_TNT", C_COMP, C_OTHER},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
     "kernel__5x_cublas",
     C_COMP, C_COMP},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>"
     "(cublasLt::cublasSplitKParams<float>, float const*)",
     C_COMP, C_COMP},
    {"ampere_sgemm_128x64_nn", C_COMP, C_COMP},
    /* CUTLASS 2 and 3, a relu epilogue in the name */
    {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>"
     "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
     C_COMP, C_COMP},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
     "cutlass::gemm::collective::CollectiveMma<cutlass::bfloat16_t> > >(Params)",
     C_COMP, C_COMP},
    /* TensorRT-LLM / FlashInfer trtllm-gen batched GEMM, triton_kernels matmul_ogs (corpus) */
    {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
     "schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
     C_COMP, C_COMP},
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", C_COMP, C_COMP},
    /* MoE grouped GEMMs, vLLM ROCm skinny GEMM */
    {"fused_moe_kernel", C_COMP, C_COMP},
    {"void marlin::Marlin<256, 1, 8, 8, 4, 8>(int4 const*, int4 const*)", C_COMP, C_COMP},
    {"void wvSplitK_hf_sml_<__hip_bfloat16, 64, 2, 16, 8, 2, 1>(int, int, int)", C_COMP, C_OTHER},
    /* convolutions: cuDNN CUTLASS (corpus; the reference's "dma" hits "ThreadMap"), CK,
     * MIOpen, old cuDNN names */
    {"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22Implicit"
     "GemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIterator"
     "OptimizedINS_11MatrixShapeILi64ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapI",
     C_COMP, C_MEM},
    {"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_34Gridwise"
     "GemmMultiD_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorE",
     C_COMP, C_COMP},
    {"igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64", C_COMP, C_COMP},
    {"Im2d2Col_v2", C_COMP, C_OTHER},
    {"void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*)",
     C_COMP, C_OTHER},
    {"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int)", C_COMP,
     C_COMP},
    /* TorchInductor GEMM template */
    {"triton_tem_fused_addmm_relu_0", C_COMP, C_COMP},
};

START_TEST(test_gemm_and_conv)
{
    CHECK_ALL(gemms);
}
END_TEST

static const expect attention[] = {
    /* the Flux MI300X pair: aiter FMHA on one side, SageAttention on the other (corpus) */
    {"aiter::fmha_fwd_hd128_bf16_rtz", C_COMP, C_COMP},
    {"sage_fwd", C_COMP, C_OTHER},
    {"sage_quant_kernel", C_COMP, C_OTHER},
    {"attn_fwd", C_COMP, C_OTHER},
    {"kernel_unified_attention_2d", C_COMP, C_COMP},
    /* CK FMHA (corpus), TensorRT-LLM fmha (corpus), FlashAttention 2 / 3, FlashInfer, FlashMLA */
    {"_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefillPipeline",
     C_COMP, C_COMP},
    {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", C_COMP, C_COMP},
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
     "cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)",
     C_COMP, C_COMP},
    {"void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, 4, 1>(Flash_fwd_params)",
     C_COMP, C_COMP},
    {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90"
     "<2, cute::tuple<cute::C<1> > > > > >(Params)",
     C_COMP, C_COMP},
    {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<128>, __nv_bfloat16>(Params)",
     C_COMP, C_COMP},
    {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<true, (flashinfer::PosEncodingMode)0>(Params)", C_COMP,
     C_COMP},
    {"void flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8>, true>(Flash_fwd_mla_params)",
     C_COMP, C_COMP},
    {"void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128>(float*)", C_COMP, C_COMP},
    /* SGLang Triton decode attention */
    {"_fwd_kernel_stage1", C_COMP, C_OTHER},
    {"_fwd_grouped_kernel_stage1", C_COMP, C_OTHER},
    {"mha_batch_prefill_bf16_kernel", C_COMP, C_MEM},
    /* linear attention / SSM */
    {"chunk_gated_delta_rule_fwd_kernel_h_blockdim64", C_COMP, C_ELEM},
    {"void selective_scan_fwd_kernel<Selective_Scan_fwd_kernel_traits<32, 16> >(SSMParamsBase)", C_COMP, C_OTHER},
};

START_TEST(test_attention)
{
    CHECK_ALL(attention);
}
END_TEST

/* ---- TorchInductor and other Triton kernels --------------------------------------------- */

static const expect triton[] = {
    /* pointwise / reduction fusions whose op lists name the attention or GEMM they feed (corpus) */
    {"triton_poi_fused__to_copy_add_cat_fmha_v3_fwd_mul_neg_stack_unbind_unsqueeze_view_13", C_ELEM, C_COMP},
    {"triton_poi_fused__to_copy_add_aiter_sage_attn_cat_mul_neg_stack_transpose_unbind_unsqueeze_view_13", C_ELEM,
     C_COMP},
    {"triton_red_fused_add_addmm_mul_native_layer_norm_split_unsqueeze_view_15", C_ELEM, C_COMP},
    {"triton_per_fused__to_copy_addmm_mean_pow_view_7", C_ELEM, C_COMP},
    {"triton_poi_fused_addmm_gelu_view_17", C_ELEM, C_COMP},
    {"triton_poi_fused_convolution_relu_3", C_ELEM, C_COMP},
    {"triton_for_fused_0", C_ELEM, C_COMP},
    /* Inductor before descriptive names (corpus) */
    {"triton__0d1d2d3d4d5d6d", C_ELEM, C_COMP},
    /* a Triton helper that is neither (corpus) */
    {"create_flashinfer_kv_indices_triton", C_OTHER, C_COMP},
};

START_TEST(test_triton)
{
    CHECK_ALL(triton);
}
END_TEST

/* ---- memory ------------------------------------------------------------------------- */

static const expect memory[] = {
    {"Memcpy HtoD (Pinned -> Device)", C_MEM, C_MEM},
    {"Memcpy DtoD (Device -> Device)", C_MEM, C_MEM},
    {"Memset (Device)", C_MEM, C_MEM},
    {"__amd_rocclr_fillBufferAligned", C_MEM, C_MEM},
    {"__amd_rocclr_copyBuffer", C_MEM, C_MEM},
    {"fill_kernel_0x7f3a", C_MEM, C_MEM},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*, "
     "at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>)",
     C_MEM, C_MEM},
    {"_copy_page_indices_kernel", C_MEM, C_MEM},
    /* KV-cache writes (corpus); the reference reads "flash" in the first */
    {"void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>"
     "(__hip_bfloat16 const*, __hip_bfloat16 const*)",
     C_MEM, C_COMP},
    {"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)",
     C_MEM, C_OTHER},
    /* layout transposes around convolutions (corpus) */
    {"void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, "
     "float const*, float*, float, float)",
     C_MEM, C_COMP},
    {"void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>"
     "(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)",
     C_MEM, C_COMP},
    {"batched_transpose_32x32_half", C_MEM, C_OTHER},
    /* "prefill" is not a fill */
    {"prefill_metadata_update", C_OTHER, C_MEM},
};

START_TEST(test_memory)
{
    CHECK_ALL(memory);
}
END_TEST

/* ---- elementwise -------------------------------------------------------------------- */

static const expect pointwise[] = {
    /* norms; the reference reads "conv" in _typeConvert, "flash" in flashinfer::, "mma" in Gamma */
    {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, long)", C_ELEM, C_ELEM},
    {"std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
     "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*)",
     C_ELEM, C_COMP},
    {"void flashinfer::rmsnorm_kernel<float>(float*, float*, int)", C_ELEM, C_COMP},
    {"void flashinfer::norm::RMSNormKernel<8, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*)", C_ELEM, C_COMP},
    {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib", C_ELEM,
     C_ELEM},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float)", C_ELEM,
     C_ELEM},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*)",
     C_ELEM, C_COMP},
    {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*)",
     C_ELEM, C_OTHER},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float const*)",
     C_ELEM, C_COMP},
    /* activations, rotary, softmax, top-k */
    {"_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i",
     C_ELEM, C_ELEM},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel("
     "at::TensorIteratorBase&)::{lambda()#1}, std::array<char*, 2ul> >(int)",
     C_ELEM, C_ELEM},
    {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)", C_ELEM, C_ELEM},
    {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*)", C_ELEM,
     C_ELEM},
    {"_topk_forward", C_ELEM, C_ELEM},
    /* quantisation; "flash" of a flashinfer:: argument, "gemm" of fbgemm_gpu:: (corpus) */
    {"void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*)", C_ELEM,
     C_OTHER},
    {"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, "
     "__nv_bfloat16, 32, true>(int, int, flashinfer::QuantizationSFLayout)",
     C_ELEM, C_COMP},
    {"void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, "
     "long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int)",
     C_ELEM, C_COMP},
    /* FBGEMM sparse and embedding kernels: gathers, like index_select */
    {"void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int)", C_ELEM, C_COMP},
    {"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>("
     "at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>)",
     C_ELEM, C_OTHER},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
     "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>)",
     C_ELEM, C_ELEM},
    /* MoE routing and finalize (corpus) */
    {"void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<"
     "__nv_bfloat16, __nv_bfloat16, 128, false, true, true> >(int)",
     C_ELEM, C_ELEM},
    {"void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::bfloat16_t, "
     "cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::bfloat16_t>)",
     C_ELEM, C_COMP},
    {"_finalize_matmul_scatter_bf16", C_ELEM, C_COMP},
    {"_sum_bitmatrix_rows", C_ELEM, C_OTHER},
    {"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*)", C_ELEM, C_OTHER},
};

START_TEST(test_elementwise)
{
    CHECK_ALL(pointwise);
}
END_TEST

/* Substrings of unrelated words hit nothing in the default profile. */
static const expect unrelated[] = {
    {"segment_aggregate_kernel", C_OTHER, C_ELEM},                    /* "gate" */
    {"enormous_batch_kernel", C_OTHER, C_ELEM},                       /* "norm" */
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, "
     "float>, unsigned int, float, 4> >(at::native::ReduceOp<float>)",
     C_OTHER, C_ELEM},
    {"convert_layout_kernel", C_OTHER, C_COMP},                       /* "conv" */
    {"comma_separated_scan_kernel", C_OTHER, C_COMP},                 /* "mma" */
    {"ldmatrix_load_kernel", C_OTHER, C_MEM},                         /* "dma" */
    {"reindex_tokens_kernel", C_OTHER, C_ELEM},                       /* "index" */
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float> > >()",
     C_OTHER, C_OTHER},
    {"mystery", C_OTHER, C_OTHER},
};

START_TEST(test_unrelated_substrings)
{
    CHECK_ALL(unrelated);
}
END_TEST

/* ---- the profiles as values --------------------------------------------------------- */

/* The default differs from the reference in the overlap steps only. */
START_TEST(test_default_shares_the_other_tables)
{
    const kd_rules *d = kd_rules_default(), *r = kd_rules_reference();
    ck_assert_ptr_eq(kd_rules_builtin("default"), d);
    ck_assert_ptr_eq(kd_rules_builtin("reference"), r);
    ck_assert_str_eq(d->name, "default");
    ck_assert_str_eq(r->name, "reference");
    ck_assert_ptr_ne(d->steps, r->steps);
    ck_assert_uint_eq(d->n_categories, KD_CAT_COUNT);
    ck_assert_ptr_eq(d->categories, r->categories);
    ck_assert_ptr_eq(d->site_steps, r->site_steps);
    ck_assert_uint_eq(d->n_site_steps, r->n_site_steps);
    ck_assert_ptr_eq(d->site_compute_like, r->site_compute_like);
    ck_assert_ptr_eq(d->hint_prefixes, r->hint_prefixes);
    ck_assert_ptr_eq(d->hint_lists, r->hint_lists);
    ck_assert_ptr_eq(d->decode_keywords, r->decode_keywords);
    ck_assert_ptr_eq(d->extend_keywords, r->extend_keywords);
    ck_assert_ptr_eq(d->launch_runtime, r->launch_runtime);
    ck_assert_ptr_eq(d->launch_any, r->launch_any);
    /* the kernel-site categories are the reference's under both profiles */
    ck_assert_str_eq(kd_rules_classify_site(d, "sage_fwd"), kd_rules_classify_site(r, "sage_fwd"));
    ck_assert_str_eq(kd_rules_classify_site(d, "flash_attn_fwd"), "attention");
    /* every step is one of the built-in five, no regex; the compute-like
     * list is the compute step's keywords, the weak tiers guarded */
    bool compute_like_is_a_step = false;
    for (size_t i = 0; i < d->n_steps; i++) {
        ck_assert_uint_lt(d->steps[i].category, KD_CAT_COUNT);
        ck_assert_ptr_null(d->steps[i].regex);
        ck_assert_ptr_nonnull(d->steps[i].keywords);
        ck_assert_str_eq(d->steps[i].label, kd_category_name(d->steps[i].category));
        compute_like_is_a_step = compute_like_is_a_step || (d->steps[i].category == KD_CAT_COMPUTE &&
                                                            d->steps[i].keywords == d->compute_like);
        if (d->steps[i].unless_compute_like)
            ck_assert(d->steps[i].category == KD_CAT_MEMORY || d->steps[i].category == KD_CAT_COMMUNICATION);
    }
    ck_assert(compute_like_is_a_step);
    /* keywords are lowered: the classifier compares lowered names */
    for (size_t i = 0; i < d->n_steps; i++)
        for (const char *const *k = d->steps[i].keywords; *k; k++)
            for (const char *c = *k; *c; c++)
                ck_assert_msg(!(*c >= 'A' && *c <= 'Z'), "keyword \"%s\" is not lowered", *k);
}
END_TEST

/* Classification is on the lowered name, under both profiles. */
START_TEST(test_case_insensitive)
{
    check_one(kd_rules_default(), "NCCLDEVKERNEL_ALLREDUCE", C_COMM);
    check_one(kd_rules_default(), "CIJK_ALIK_BLJK_BIAS", C_COMP);
    check_one(kd_rules_default(), "Sage_Fwd", C_COMP);
    check_one(kd_rules_reference(), "CIJK_ALIK_BLJK_BIAS", C_ELEM);
    check_one(kd_rules_default(), "", C_OTHER);
    check_one(kd_rules_reference(), "", C_OTHER);
}
END_TEST

Suite *taxonomy_suite(void)
{
    Suite *s = suite_create("taxonomy");
    TCase *tc = tcase_create("profiles");
    tcase_add_test(tc, test_communication);
    tcase_add_test(tc, test_not_communication);
    tcase_add_test(tc, test_gemm_and_conv);
    tcase_add_test(tc, test_attention);
    tcase_add_test(tc, test_triton);
    tcase_add_test(tc, test_memory);
    tcase_add_test(tc, test_elementwise);
    tcase_add_test(tc, test_unrelated_substrings);
    tcase_add_test(tc, test_default_shares_the_other_tables);
    tcase_add_test(tc, test_case_insensitive);
    suite_add_tcase(s, tc);
    return s;
}
