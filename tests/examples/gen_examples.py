#!/usr/bin/env python3
"""gen_examples.py - writes the bundled example pair
fixtures/examples/{baseline,candidate}.json.gz (Python 3 standard library only).

Two small synthetic Kineto traces of one decoder layer of an SGLang-like
model, four ProfilerStep#N steps each, that show every part of a
`kerndiff diff` report (docs/diff.md):

* the tensor-parallel NCCL all-reduce is exposed in the baseline (it runs
  alone after the o_proj GEMM) and hidden under the gate_up GEMM in the
  candidate: exposed communication goes down, the gate passes, and its
  triage row goes P1 -> none;
* the residual add and the RMSNorm of the baseline are replaced by one
  fused add+RMSNorm kernel: two `removed` kernels and one `added`;
* the qkv cutlass GEMM is renamed (another threadblock swizzle and stage
  count): the names share a compact prefix far longer than 96 characters, so
  the matcher reports `long-prefix`;
* silu_and_mul is launched back to back with its GEMM neighbours in the
  baseline (dependency risk high: P2 check deps) and with slack in the
  candidate (risk low: P1 try fusion);
* a KV-cache memcpy stays hidden under the GEMM on both sides (an unchanged
  low-ROI P4 row).

GPU pid "TP00-gpu": stream 7 compute, 8 NCCL, 9 memcpy. The CPU thread
(pid/tid 4242) carries python_function frames, cpu_ops with External ids and
cudaLaunchKernel / cudaMemcpyAsync with correlation ids, so every kernel maps
to its Python scope. The output is deterministic: fixed numbers, sorted
keys, gzip with mtime 0 and no file name.

Usage: gen_examples.py [OUTDIR]   (default: fixtures/examples of this tree)
"""

import gzip
import io
import json
import os
import sys

GPU_PID = "TP00-gpu"
CPU_PID = 4242
STEPS = 4
STEP_PERIOD = 400.0
GPU_T0 = 1000.0
S_COMPUTE, S_NCCL, S_MEMCPY = 7, 8, 9

RUNNER = "python/sglang/srt/model_executor/model_runner.py(1200): forward"

_CUTLASS_HEAD = (
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<"
    "cutlass::gemm::GemmShape<128, 128, 64>, "
    "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_64x3_tn_align8, "
    "cutlass::epilogue::thread::LinearCombination<cutlass::bfloat16_t, 8, float, float>, "
    "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<")

# name, category of the launch ("kernel" / "gpu_memcpy"), stream, python scope
KERNELS = {
    "qkv_old": (_CUTLASS_HEAD + "1>, 3>>(Params)", "kernel", S_COMPUTE,
                "python/sglang/srt/layers/linear.py(420): forward"),
    "qkv_new": (_CUTLASS_HEAD + "8>, 4>>(Params)", "kernel", S_COMPUTE,
                "python/sglang/srt/layers/linear.py(420): forward"),
    "attn": ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, "
             "cutlass::bfloat16_t>, false, true, false>(Flash_fwd_params)", "kernel", S_COMPUTE,
             "python/sglang/srt/layers/radix_attention.py(100): forward"),
    "o_proj": ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
               "execute_segment_k_off_kernel__5x_cublas", "kernel", S_COMPUTE,
               "python/sglang/srt/layers/linear.py(1280): forward"),
    "allreduce": ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                  "kernel", S_NCCL,
                  "python/sglang/srt/distributed/communication_op.py(20): "
                  "tensor_model_parallel_all_reduce"),
    "add": ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
            "at::detail::Array<char*, 3>)", "kernel", S_COMPUTE,
            "python/sglang/srt/models/llama.py(320): forward"),
    "rmsnorm": ("void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, "
                "__nv_bfloat16*, unsigned int, unsigned int, float)", "kernel", S_COMPUTE,
                "python/sglang/srt/layers/layernorm.py(60): forward_cuda"),
    "fused_norm": ("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, "
                   "__nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, float)", "kernel",
                   S_COMPUTE, "python/sglang/srt/layers/layernorm.py(60): forward_cuda"),
    "gate_up": ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_32x3_nn_align8>"
                "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_32x3_nn_align8::Params)", "kernel",
                S_COMPUTE, "python/sglang/srt/layers/linear.py(450): forward"),
    "silu": ("void sgl_kernel::silu_and_mul_kernel<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16 const*, int)",
             "kernel", S_COMPUTE, "python/sglang/srt/layers/activation.py(80): forward_cuda"),
    "down": ("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", "kernel", S_COMPUTE,
             "python/sglang/srt/layers/linear.py(1280): forward"),
    "kv_copy": ("Memcpy DtoD (Device -> Device)", "gpu_memcpy", S_MEMCPY,
                "python/sglang/srt/mem_cache/memory_pool.py(300): set_kv_buffer"),
}

# The cpu_op that launches each kernel (default aten::mm).
CPU_OPS = {
    "attn": "flash_attn::fwd",
    "allreduce": "sglang::inplace_all_reduce",
    "add": "aten::add_",
    "rmsnorm": "sgl_kernel::rmsnorm",
    "fused_norm": "sgl_kernel::fused_add_rmsnorm",
    "silu": "sgl_kernel::silu_and_mul",
    "kv_copy": "aten::copy_",
}

# One step of each side: (kernel, when, duration in us). `when` is the gap
# after the end of the previous stream-7 kernel (the first kernel starts the
# step), or {"start": K, "delta": d} / {"after": K, "delta": d}: d us after
# the start / the end of kernel K of the same step.
BASELINE = [
    ("qkv_old", 0.0, 60.0),
    ("attn", 1.0, 50.0),
    ("o_proj", 1.0, 40.0),
    ("allreduce", {"after": "o_proj", "delta": 1.0}, 45.0),   # alone: exposed
    ("add", {"after": "allreduce", "delta": 2.0}, 8.0),
    ("rmsnorm", 1.0, 7.0),
    ("gate_up", 1.0, 60.0),
    ("kv_copy", {"start": "gate_up", "delta": 3.0}, 30.0),    # hidden under gate_up
    ("silu", 1.0, 20.0),                                       # tight: P2 check deps
    ("down", 1.0, 40.0),
]

CANDIDATE = [
    ("qkv_new", 0.0, 58.0),
    ("attn", 1.0, 50.0),
    ("o_proj", 1.0, 40.0),
    ("gate_up", 1.0, 60.0),
    ("allreduce", {"start": "gate_up", "delta": 1.0}, 45.0),  # hidden under gate_up
    ("kv_copy", {"start": "gate_up", "delta": 8.0}, 30.0),
    ("fused_norm", 1.0, 10.0),
    ("silu", 6.0, 20.0),                                       # slack: P1 try fusion
    ("down", 6.0, 40.0),
]


def r3(x):
    return round(x, 3)


def jitter(step, k):
    """A small deterministic variation of a duration (never changes a gap)."""
    return 1.0 + 0.01 * ((step * 7 + k * 3) % 5 - 2)


def schedule(plan, step):
    """GPU (name, ts, dur) of one step, in plan order."""
    base = GPU_T0 + step * STEP_PERIOD
    placed = {}
    out = []
    last_end = base
    for k, (name, when, dur) in enumerate(plan):
        d = r3(dur * jitter(step, k))
        if isinstance(when, dict):
            ref = placed[when.get("after") or when.get("start")]
            ts = (ref[0] + ref[1] if "after" in when else ref[0]) + when["delta"]
        else:
            ts = last_end + when if out else base
        ts = r3(ts)
        placed[name] = (ts, d)
        if KERNELS[name][2] == S_COMPUTE:
            last_end = ts + d
        out.append((name, ts, d))
    return out


def metadata():
    ev = [{"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0, "args": {"name": "GPU 0"}},
          {"ph": "M", "name": "process_name", "pid": CPU_PID, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "thread_name", "pid": CPU_PID, "tid": CPU_PID, "args": {"name": "python3"}}]
    for s in (S_COMPUTE, S_NCCL, S_MEMCPY):
        ev.append({"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": s,
                   "args": {"name": "stream %d" % s}})
    return ev


def launch_events(name, ts, dur, cpu_t, ids):
    """Frames, cpu_op, runtime launch and the GPU event of one kernel."""
    kname, cat, stream, scope = KERNELS[name]
    ext, corr, pyid = ids
    memcpy = cat == "gpu_memcpy"
    op = CPU_OPS.get(name, "aten::mm")
    return [
        {"ph": "X", "cat": "python_function", "name": RUNNER, "pid": CPU_PID, "tid": CPU_PID,
         "ts": r3(cpu_t), "dur": 5.0, "args": {"Python id": pyid}},
        {"ph": "X", "cat": "python_function", "name": scope, "pid": CPU_PID, "tid": CPU_PID,
         "ts": r3(cpu_t + 0.1), "dur": 4.8, "args": {"Python id": pyid + 1, "Python parent id": pyid}},
        {"ph": "X", "cat": "cpu_op", "name": op, "pid": CPU_PID, "tid": CPU_PID,
         "ts": r3(cpu_t + 0.5), "dur": 4.0, "args": {"External id": ext}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync" if memcpy else "cudaLaunchKernel",
         "pid": CPU_PID, "tid": CPU_PID, "ts": r3(cpu_t + 1.0), "dur": 2.5,
         "args": {"correlation": corr, "External id": ext}},
        {"ph": "X", "cat": cat, "name": kname, "pid": GPU_PID, "tid": stream, "ts": ts, "dur": dur,
         "args": {"device": 0, "stream": stream, "correlation": corr, "External id": ext}},
    ]


def build(plan):
    events = metadata()
    ext, corr, pyid = 1000, 50000, 90000
    for step in range(STEPS):
        base = GPU_T0 + step * STEP_PERIOD
        cpu_t = base - 300.0
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (step + 1),
                       "pid": CPU_PID, "tid": CPU_PID, "ts": r3(cpu_t - 1.0), "dur": STEP_PERIOD - 2.0,
                       "args": {"External id": ext}})
        ext += 1
        for name, ts, dur in sorted(schedule(plan, step), key=lambda e: e[1]):
            events.extend(launch_events(name, ts, dur, cpu_t, (ext, corr, pyid)))
            cpu_t += 6.0
            ext, corr, pyid = ext + 1, corr + 1, pyid + 2
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "traceName": "kerndiff example",
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
            "traceEvents": events}


def write_gz(path, doc):
    text = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("utf-8")
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as z:
        z.write(text)
    with open(path, "wb") as f:
        f.write(raw.getvalue())


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[1] if len(argv) > 1 else os.path.join(here, "..", "..", "fixtures", "examples")
    os.makedirs(out, exist_ok=True)
    write_gz(os.path.join(out, "baseline.json.gz"), build(BASELINE))
    write_gz(os.path.join(out, "candidate.json.gz"), build(CANDIDATE))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
