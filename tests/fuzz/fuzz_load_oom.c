/*
 * fuzz_load_oom — libFuzzer target for the loader under failing
 * allocations (failalloc.h: this binary's malloc, calloc and realloc are
 * wrapped, the library's and yajl's, zlib's, zstd's and liblzma's included).
 *
 * Input: three option bytes, then the trace. Byte 0: bit 0 fails every
 * allocation from the chosen one on (a machine out of memory) rather than
 * that one only; bit 1 loads split (two threads, cut at the middle); bits
 * 2-3 compress the trace first (0 as it is, 1 gzip, 2 zstd, 3 xz), so each
 * decompressor is reached whatever the fuzzer mutates; bit 4 also builds
 * the side (kd_side_load_mem: extraction, bundles) under the failing
 * allocator (KD_FUZZ_OOM_SIDE=0 turns that off, to fuzz the loader
 * alone). Bytes 1-2: which allocation fails (little-endian, from 0).
 *
 * The trace is first loaded with no failure (the reference), then again
 * with the failing allocator: that load must give the reference's trace
 * (a failure the loader recovered from, e.g. a split load falling back to
 * one thread), the reference's error, or KD_ENOMEM naming the label and
 * "out of memory"; abort() otherwise. Any crash, sanitizer report or leak
 * is a finding too. Built by `configure --enable-fuzzing` (clang), run by
 * `make fuzz` (tests/fuzz/README.md).
 */
#include "config.h"

#include <lzma.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "kerndiff/load.h"
#include "kerndiff/side.h"

#include "failalloc.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *compress_as(int codec, const uint8_t *data, size_t size, size_t *out_len)
{
    unsigned char *out = NULL;
    if (codec == 1) {
        out = gzip_of(data, size, out_len);
    } else if (codec == 2) {
        size_t cap = ZSTD_compressBound(size);
        out = malloc(cap);
        size_t n = out ? ZSTD_compress(out, cap, data, size, 1) : 0;
        if (!out || ZSTD_isError(n)) {
            free(out);
            return NULL;
        }
        *out_len = n;
    } else if (codec == 3) {
        size_t cap = lzma_stream_buffer_bound(size), pos = 0;
        out = malloc(cap);
        if (!out || lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, data, size, out, &pos, cap) !=
                        LZMA_OK) {
            free(out);
            return NULL;
        }
        *out_len = pos;
    }
    return out;
}

static void expect(bool ok, const char *what, const kd_error *err, const kd_error *ref_err)
{
    if (ok)
        return;
    fprintf(stderr, "fuzz_load_oom: %s: %s | reference: %s\n", what, err->msg, ref_err->msg);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    failalloc_mode mode = (data[0] & 1) ? FAILALLOC_FROM : FAILALLOC_ONE;
    kd_load_options split = {.threads = 2, .split_min_bytes = 1};
    const kd_load_options *opt = (data[0] & 2) ? &split : NULL;
    int codec = (data[0] >> 2) & 3;
    const char *side_env = getenv("KD_FUZZ_OOM_SIDE");
    bool side = (data[0] & 16) != 0 && !(side_env && strcmp(side_env, "0") == 0);
    long at = (long)data[1] | (long)data[2] << 8;
    data += 3;
    size -= 3;

    unsigned char *packed = NULL;
    if (codec) {
        size_t n = 0;
        packed = compress_as(codec, data, size, &n);
        if (!packed)
            return 0;
        data = packed;
        size = n;
    }

    kd_error ref_err = {0}, err = {0};
    kd_trace *ref = kd_load_trace_mem_opts(data, size, "fuzz.json", opt, &ref_err);

    failalloc_arm(at, mode);
    kd_trace *t = kd_load_trace_mem_opts(data, size, "fuzz.json", opt, &err);
    long failed = failalloc_disarm();
    char why[256] = "";
    if (t) {
        expect(ref && kd_trace_same(ref, t, why, sizeof why), "loaded differently", &err, &ref_err);
    } else if (!failed || err.status != KD_ENOMEM) {
        expect(!ref && err.status == ref_err.status && strcmp(err.msg, ref_err.msg) == 0,
               failed ? "failed otherwise than the reference" : "no failure injected, yet failed",
               &err, &ref_err);
    } else {
        expect(strstr(err.msg, "fuzz.json") && strstr(err.msg, "out of memory"),
               "an out-of-memory message without the label or the words", &err, &ref_err);
    }
    kd_trace_free(t);

    if (side && ref) {
        kd_side s;
        failalloc_arm(at, mode);
        kd_status st = kd_side_load_mem(data, size, "fuzz.json", NULL, &s, &err);
        failalloc_disarm();
        if (st == KD_OK)
            kd_side_free(&s);
    }
    kd_trace_free(ref);
    free(packed);
    return 0;
}
