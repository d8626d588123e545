/* error.c — errors as values (error.h). */
#include "config.h"

#include "kerndiff/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

kd_status kd_fail(kd_error *err, kd_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* one line: a message never carries a newline from trace content */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        err->status = status;
    }
    return status;
}

void kd_error_clear(kd_error *err)
{
    if (err) {
        err->status = KD_OK;
        err->msg[0] = '\0';
    }
}
