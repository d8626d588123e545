/* framework.h — the serving framework a trace comes from (SGLang, vLLM,
 * TensorRT-LLM, TokenSpeed): parsed from --framework or detected from the
 * path and the Python frames (reference §3.1). */
#ifndef KERNDIFF_FRAMEWORK_H
#define KERNDIFF_FRAMEWORK_H

#include <stdbool.h>
#include <stddef.h>

#include "kerndiff/trace.h"

/* The serving framework: only changes the mapping kernel map's sampling
 * (kernel-sites.md §8: every kernel for sglang, 16 per name otherwise). */
typedef enum { KD_FW_SGLANG = 0, KD_FW_VLLM, KD_FW_TRTLLM, KD_FW_TOKENSPEED } kd_framework;

/* --framework choices (reference §3.1): sglang, vllm, trtllm|tllm|tensorrt-llm,
 * tokenspeed|token-speed|ts, auto. Case-sensitive like argparse. For "auto"
 * *is_auto is set and *out is KD_FW_SGLANG (the fallback). false if unknown. */
bool kd_framework_parse(const char *s, kd_framework *out, bool *is_auto);
/* "sglang", "vllm", "trtllm", "tokenspeed" */
const char *kd_framework_name(kd_framework fw);
/* "SGLang", "vLLM", "TensorRT-LLM", "TokenSpeed" (reference §3.6) */
const char *kd_framework_display_name(kd_framework fw);

/* --framework auto. Checks, in order:
 *  1. the input path (may be NULL), components from the last to the first,
 *     lowered: the first component naming exactly one framework decides
 *     (sglang; vllm; tensorrt_llm, tensorrt-llm, trtllm; tokenspeed,
 *     token-speed, token_speed);
 *  2. the traces' Python frames (python_function names, lowered): the number
 *     of frames containing "sglang/" (or "sgl_kernel/"), "vllm/",
 *     "tensorrt_llm/" (or "tensorrt-llm/"), "tokenspeed/"; the largest count
 *     wins, ties in the enum order;
 *  3. otherwise KD_FW_SGLANG. */
kd_framework kd_framework_detect(kd_trace *const *traces, size_t n, const char *path);

#endif
