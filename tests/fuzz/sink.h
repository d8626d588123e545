/* sink.h — what the fuzz targets share: the report sink, /dev/null opened
 * once per process (reports are written to reach the writers, not to be
 * read), and the gzip of an input. */
#ifndef KERNDIFF_FUZZ_SINK_H
#define KERNDIFF_FUZZ_SINK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static inline FILE *fuzz_sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

/* The gzip (level 1) of data, or NULL (malloc'd). Mutated gzip input
 * rarely gets past the CRC, so the targets fuzz gzip loads on the gzip of
 * their plain input instead. */
static inline unsigned char *gzip_of(const uint8_t *data, size_t size, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    uLong cap = deflateBound(&z, (uLong)size) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (!out || deflate(&z, Z_FINISH) != Z_STREAM_END) {
        free(out);
        out = NULL;
    }
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

#endif
