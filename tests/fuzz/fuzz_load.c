/*
 * fuzz_load — libFuzzer target for the loader and the extraction
 * (product.md §7: "the loader has a libFuzzer target").
 *
 * Input: the bytes of one trace file (plain or gzip JSON). Loads them with
 * kd_load_trace_mem, serially and as a split load (two threads cut at the
 * middle, load.h kd_load_options), which must agree exactly (the same trace,
 * or the same error message: abort() otherwise), and with kd_side_load_mem
 * (kernel extraction, pid choice, stages, bundles), and builds the inspect
 * report, written to /dev/null in both formats. Any input must end in a
 * trace or an error value, never a crash, a sanitizer report or a leak. Built by `configure --enable-fuzzing`
 * (clang), run by `make fuzz` (tests/fuzz/README.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/inspect.h"
#include "kerndiff/load.h"
#include "kerndiff/side.h"

#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kd_error err = {0}, split_err = {0};
    kd_trace *t = kd_load_trace_mem(data, size, "fuzz.json", &err);
    kd_load_options split = {2, 1};
    kd_trace *u = kd_load_trace_mem_opts(data, size, "fuzz.json", &split, &split_err);
    char why[256] = "";
    if ((t == NULL) != (u == NULL) ||
        (!t && (err.status != split_err.status || strcmp(err.msg, split_err.msg) != 0)) ||
        (t && !kd_trace_same(t, u, why, sizeof why))) {
        fprintf(stderr, "fuzz_load: serial and split loads differ: %s | %s | %s\n",
                t ? "loaded" : err.msg, u ? "loaded" : split_err.msg, why);
        abort();
    }
    kd_trace_free(u);
    if (!t)
        return 0;
    kd_trace_free(t);

    kd_side side;
    if (kd_side_load_mem(data, size, "fuzz.json", NULL, &side, &err) != KD_OK)
        return 0;
    kd_inspect report;
    if (kd_inspect_build(&side, NULL, &report, &err) == KD_OK) {
        FILE *out = fuzz_sink();
        if (out) {
            kd_inspect_write_text(&report, out);
            kd_inspect_write_json(&report, out);
        }
        kd_inspect_free(&report);
    }
    kd_side_free(&side);
    return 0;
}
