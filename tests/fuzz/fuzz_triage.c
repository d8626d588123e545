/*
 * fuzz_triage — libFuzzer target for the whole triage pipeline on one small
 * in-memory trace: load → extract → overlap → aggregate → kernel sites →
 * source map → action rows, then every report format (Markdown, text, CSV,
 * JSON with the internals) written to /dev/null.
 *
 * The first input byte picks options, so that both the kernel-site and the
 * --no-kernel-map paths, --limit and the sglang/vllm sampling are reached;
 * the rest is the trace. Built by `configure --enable-fuzzing` (clang), run
 * by `make fuzz` (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kerndiff/side.h"
#include "kerndiff/triage.h"
#include "kerndiff/triage_report.h"

#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void options_from_byte(uint8_t b, kd_triage_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->formal_path = "fuzz.json";
    opt->min_share = (b & 1) ? 0.0 : 1.0;
    opt->no_kernel_map = (b & 2) != 0;
    opt->limit = (b & 4) ? 2 : 0;
    opt->dump_internals = (b & 8) != 0;
    opt->framework_set = (b & 16) != 0;
    opt->framework = (b & 32) ? KD_FW_VLLM : KD_FW_SGLANG;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    kd_triage_options opt;
    options_from_byte(data[0], &opt);
    data++;
    size--;

    kd_error err = {0};
    kd_triage t;
    memset(&t, 0, sizeof t);
    if (kd_side_load_mem(data, size, "fuzz.json", NULL, &t.formal, &err) != KD_OK)
        return 0;
    t.mapping = &t.formal;
    if (kd_triage_analyze(&opt, &t, &err) != KD_OK)
        return 0; /* kd_triage_analyze freed t */
    FILE *out = fuzz_sink();
    if (out) {
        kd_triage_write_markdown(&t, &opt, out);
        kd_triage_write_text(&t, &opt, out);
        kd_triage_write_csv(&t, &opt, out);
        kd_triage_write_json(&t, &opt, out);
    }
    kd_triage_free(&t);
    return 0;
}
