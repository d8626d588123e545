/* sink.h — the fuzz targets' report sink: /dev/null, opened once per
 * process (reports are written to reach the writers, not to be read). */
#ifndef KERNDIFF_FUZZ_SINK_H
#define KERNDIFF_FUZZ_SINK_H

#include <stdio.h>

static inline FILE *fuzz_sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    return f;
}

#endif
