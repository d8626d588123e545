/* load.h — read one trace file in a single streaming pass (product.md §1).
 *
 * gzip, zstd and xz are detected by magic bytes (concatenated gzip members,
 * zstd frames and xz streams are read as one stream; zero padding after the
 * last gzip member is accepted, as gzip -t does); bzip2, lz4, zip, lzip and
 * compress(1) data are refused with a message naming the compression. The
 * bytes go through the decompressor in large blocks into yajl's callback
 * parser; no document tree is ever built. The path "-" is standard input
 * (read once, as it streams: never split, and parsed with the NaN/Infinity
 * filter from the start, since it cannot be read twice); its messages name
 * it "standard input" and its trace's path is "-". A string (or number) longer
 * than the max_string limit stops the load with a message naming its byte
 * offset; a failed allocation anywhere, yajl's included, ends the load with
 * KD_ENOMEM "out of memory" and everything it allocated released. Accepted shapes: an object with a
 * "traceEvents" list (other keys skipped; a repeated key replaces the earlier
 * one, as Python's json does) and a bare top-level list (divergence D2).
 * Bare NaN/Infinity literals are tolerated (divergence D5). The top-level
 * keys distributedInfo and deviceProperties, before or after traceEvents,
 * fill the trace's metadata (trace.h: rank, world_size, devices). */
#ifndef KERNDIFF_LOAD_H
#define KERNDIFF_LOAD_H

#include "kerndiff/classify.h"
#include "kerndiff/error.h"
#include "kerndiff/trace.h"

/* How a load may use the machine. threads >= 2 lets a large trace be
 * parsed as two halves on two threads (the result is the serial one, byte
 * for byte): a plain file of KD_LOAD_SPLIT_MIN bytes or more; a gzip one of
 * KD_LOAD_GZIP_SPLIT_MIN..KD_LOAD_GZIP_SPLIT_MAX uncompressed bytes (as its
 * trailer says), inflated into memory on the second thread while the first
 * parses it. The caller decides from the cores it has. split_min_bytes: the
 * smallest (uncompressed) size split, plain or gzip (0: the defaults). */
typedef struct {
    unsigned threads;
    uint64_t split_min_bytes;
    /* The longest JSON string (or number) accepted, in bytes (0: the default,
     * KD_LOAD_MAX_STRING; UINT64_MAX: no limit). A longer one stops the load:
     * KD_EINPUT "...: a JSON string longer than the N-byte limit
     * (--max-string) at byte B". Bounds the memory one string can take (yajl
     * holds a string whole before handing it over). */
    uint64_t max_string;
    /* The classification the trace is loaded with (classify.h): which names
     * are kernels, launches, stage annotations; kept in kd_trace.rules for
     * every later step. NULL: the reference's tables. */
    const kd_rules *rules;
} kd_load_options;

/* 256 MiB: far above any real kernel name (a few KiB), and above the
 * longest strings of real traces' other keys. */
#define KD_LOAD_MAX_STRING ((uint64_t)256 << 20)

/* The label of standard input (the path "-") in messages. */
#define KD_LOAD_STDIN_LABEL "standard input"

#define KD_LOAD_SPLIT_MIN (16u << 20)
/* A gzip trace is split from a smaller size than a plain one: the thread
 * that inflates it is there anyway. The largest is bounded because its
 * inflated bytes are held during the load, on top of the trace. */
#define KD_LOAD_GZIP_SPLIT_MIN (1u << 20)
#define KD_LOAD_GZIP_SPLIT_MAX (64u << 20)

/* Loads path ("-": standard input) into a new trace. On failure returns
 * NULL and err names the file and the problem (with the byte offset for parse
 * errors). */
kd_trace *kd_load_trace(const char *path, kd_error *err);

/* Same, from a memory buffer (plain JSON, gzip, zstd or xz); label names it
 * in errors. */
kd_trace *kd_load_trace_mem(const void *data, size_t len, const char *label, kd_error *err);

/* The same with options (NULL: one thread). */
kd_trace *kd_load_trace_opts(const char *path, const kd_load_options *opt, kd_error *err);
kd_trace *kd_load_trace_mem_opts(const void *data, size_t len, const char *label,
                                 const kd_load_options *opt, kd_error *err);

/* Shape probe for discover's trace-file test (reference §3.2): true when the
 * file parses as an object with a list traceEvents, or a non-empty list whose
 * first 8 items are objects. Reads no more than needed. */
bool kd_probe_trace_shape(const char *path);

/* The rank and world size a trace file declares (distributedInfo), read from
 * the document's start: parsing stops at the "traceEvents" key (or the first
 * event of a bare list) so a multi-GB trace costs a few KB. Looks no further
 * when traceEvents comes first (has_rank stays false). Plain, gzip, zstd, xz.
 * Only integers count (a string, float or bool rank is not recorded); of a
 * repeated key the last one before traceEvents wins. path is a file ("-" is
 * not standard input here). A file that cannot be opened or read gives
 * KD_EINPUT "PATH: ..."; a malformed, truncated or refused (bzip2, ...)
 * document is not an error: it declares nothing (has_rank false). */
typedef struct { bool has_rank, has_world_size; int64_t rank, world_size; } kd_trace_header;
kd_status kd_peek_trace_header(const char *path, kd_trace_header *out, kd_error *err);

#endif
