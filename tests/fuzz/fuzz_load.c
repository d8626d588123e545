/*
 * fuzz_load — libFuzzer target for the loader and the extraction
 * (product.md §7: "the loader has a libFuzzer target").
 *
 * Input: the bytes of one trace file (plain or gzip JSON). Loads them with
 * kd_load_trace_mem, serially and as a split load (two threads cut at the
 * middle, load.h kd_load_options), which must agree exactly (the same trace,
 * or the same error message: abort() otherwise) — and the same for the gzip
 * of a plain input, which must load if and only if the input does — and with kd_side_load_mem
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
#include <zlib.h>

#include "kerndiff/inspect.h"
#include "kerndiff/load.h"
#include "kerndiff/side.h"

#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Loads data serially and split (any size is cut); abort() unless both give
 * the same trace or the same error. Returns whether it loaded. */
static bool load_both_ways(const uint8_t *data, size_t size, const char *what)
{
    kd_error err = {0}, split_err = {0};
    kd_trace *t = kd_load_trace_mem(data, size, "fuzz.json", &err);
    kd_load_options split = {.threads = 2, .split_min_bytes = 1};
    kd_trace *u = kd_load_trace_mem_opts(data, size, "fuzz.json", &split, &split_err);
    char why[256] = "";
    if ((t == NULL) != (u == NULL) ||
        (!t && (err.status != split_err.status || strcmp(err.msg, split_err.msg) != 0)) ||
        (t && !kd_trace_same(t, u, why, sizeof why))) {
        fprintf(stderr, "fuzz_load: %s: serial and split loads differ: %s | %s | %s\n", what,
                t ? "loaded" : err.msg, u ? "loaded" : split_err.msg, why);
        abort();
    }
    bool loaded = t != NULL;
    kd_trace_free(u);
    kd_trace_free(t);
    return loaded;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kd_error err = {0};
    bool loaded = load_both_ways(data, size, "input");
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
        size_t zn;
        unsigned char *z = gzip_of(data, size, &zn);
        if (z && load_both_ways(z, zn, "gzip of the input") != loaded) {
            fprintf(stderr, "fuzz_load: the input and its gzip load differently\n");
            abort();
        }
        free(z);
    }
    if (!loaded)
        return 0;

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
