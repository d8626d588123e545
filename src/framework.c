/* framework.c — which serving framework a trace comes from (framework.h;
 * reference §3.1). */
#include "config.h"

#include "kerndiff/framework.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/text.h"

bool kd_framework_parse(const char *s, kd_framework *out, bool *is_auto)
{
    static const struct {
        const char *name;
        kd_framework fw;
    } choices[] = {
        {"sglang", KD_FW_SGLANG},         {"vllm", KD_FW_VLLM},
        {"trtllm", KD_FW_TRTLLM},         {"tllm", KD_FW_TRTLLM},
        {"tensorrt-llm", KD_FW_TRTLLM},   {"tokenspeed", KD_FW_TOKENSPEED},
        {"token-speed", KD_FW_TOKENSPEED}, {"ts", KD_FW_TOKENSPEED},
    };
    if (is_auto)
        *is_auto = false;
    if (!s)
        return false;
    if (strcmp(s, "auto") == 0) {
        *out = KD_FW_SGLANG;
        if (is_auto)
            *is_auto = true;
        return true;
    }
    for (size_t i = 0; i < sizeof choices / sizeof *choices; i++)
        if (strcmp(s, choices[i].name) == 0) {
            *out = choices[i].fw;
            return true;
        }
    return false;
}

const char *kd_framework_name(kd_framework fw)
{
    static const char *const names[] = {"sglang", "vllm", "trtllm", "tokenspeed"};
    return (unsigned)fw < 4 ? names[fw] : "sglang";
}

const char *kd_framework_display_name(kd_framework fw)
{
    static const char *const names[] = {"SGLang", "vLLM", "TensorRT-LLM", "TokenSpeed"};
    return (unsigned)fw < 4 ? names[fw] : "SGLang";
}

/* Frameworks a lowered path component names, as bits. */
static unsigned path_component_frameworks(const char *c, size_t len)
{
    static const struct {
        const char *token;
        kd_framework fw;
    } tokens[] = {
        {"sglang", KD_FW_SGLANG},         {"vllm", KD_FW_VLLM},
        {"tensorrt_llm", KD_FW_TRTLLM},   {"tensorrt-llm", KD_FW_TRTLLM},
        {"trtllm", KD_FW_TRTLLM},         {"tokenspeed", KD_FW_TOKENSPEED},
        {"token-speed", KD_FW_TOKENSPEED}, {"token_speed", KD_FW_TOKENSPEED},
    };
    unsigned bits = 0;
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        size_t m = strlen(tokens[i].token);
        for (size_t p = 0; p + m <= len; p++)
            if (memcmp(c + p, tokens[i].token, m) == 0) {
                bits |= 1u << tokens[i].fw;
                break;
            }
    }
    return bits;
}

static bool detect_from_path(const char *path, kd_framework *out)
{
    char *l = path ? kd_lower(path) : NULL;
    if (!l)
        return false;
    bool found = false;
    size_t end = strlen(l);
    while (end > 0 && !found) {
        size_t begin = end;
        while (begin > 0 && l[begin - 1] != '/')
            begin--;
        unsigned bits = path_component_frameworks(l + begin, end - begin);
        if (bits && !(bits & (bits - 1))) {
            for (int fw = 0; fw < 4; fw++)
                if (bits == 1u << fw)
                    *out = (kd_framework)fw;
            found = true;
        }
        end = begin ? begin - 1 : 0;
    }
    free(l);
    return found;
}

/* Per distinct frame name: which framework's source tree it comes from (-1 none). */
static int frame_framework(const char *name)
{
    char *l = kd_lower(name);
    int fw = -1;
    if (!l)
        return -1;
    if (strstr(l, "sglang/") || strstr(l, "sgl_kernel/"))
        fw = KD_FW_SGLANG;
    else if (strstr(l, "vllm/"))
        fw = KD_FW_VLLM;
    else if (strstr(l, "tensorrt_llm/") || strstr(l, "tensorrt-llm/"))
        fw = KD_FW_TRTLLM;
    else if (strstr(l, "tokenspeed/"))
        fw = KD_FW_TOKENSPEED;
    free(l);
    return fw;
}

static void count_trace_frameworks(const kd_trace *t, size_t counts[4])
{
    size_t nstr = (size_t)kd_interner_count(t->strings) + 1;
    signed char *memo = malloc(nstr);
    if (!memo)
        return;
    memset(memo, -2, nstr); /* -2: not yet classified */
    for (size_t i = 0; i < t->frames.n; i++) {
        kd_sid s = t->frames.v[i].name;
        if (memo[s] == -2)
            memo[s] = (signed char)frame_framework(kd_str(t->strings, s));
        if (memo[s] >= 0)
            counts[(int)memo[s]]++;
    }
    free(memo);
}

kd_framework kd_framework_detect(kd_trace *const *traces, size_t n, const char *path)
{
    kd_framework fw = KD_FW_SGLANG;
    if (detect_from_path(path, &fw))
        return fw;
    size_t counts[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (traces[i])
            count_trace_frameworks(traces[i], counts);
    size_t best = 0;
    for (size_t f = 1; f < 4; f++)
        if (counts[f] > counts[best])
            best = f;
    return counts[best] ? (kd_framework)best : KD_FW_SGLANG;
}
