/* error.h — errors as values. Library functions never print; they fill a
 * kd_error and return a status, and the CLI decides the exit code. */
#ifndef KERNDIFF_ERROR_H
#define KERNDIFF_ERROR_H

typedef enum {
    KD_OK = 0,
    KD_EINPUT, /* bad input file or trace content: exit 2 */
    KD_EUSAGE, /* bad command-line usage: exit 2 */
    KD_EIO,    /* cannot read/write a file: exit 2 */
    KD_ENOMEM
} kd_status;

typedef struct {
    kd_status status;
    char msg[1024]; /* one line, no trailing newline */
} kd_error;

/* Sets err (if non-NULL) and returns status, so callers can `return kd_fail(...)`. */
kd_status kd_fail(kd_error *err, kd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kd_error_clear(kd_error *err);

#endif
