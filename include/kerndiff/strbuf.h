/* strbuf.h — a growable NUL-terminated string, for the reports and messages
 * built piece by piece. Running out of memory is sticky: every later append
 * is a no-op and `oom` stays set, so a caller checks once at the end. */
#ifndef KERNDIFF_STRBUF_H
#define KERNDIFF_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *s; /* NULL until the first append */
    size_t n, cap;
    bool oom;
} kd_strbuf;

/* Appends s[0..n) (need not be NUL-terminated); false once out of memory. */
bool kd_sb_putn(kd_strbuf *b, const char *s, size_t n);
bool kd_sb_puts(kd_strbuf *b, const char *s);
bool kd_sb_printf(kd_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty again, keeping the memory. */
void kd_sb_reset(kd_strbuf *b);
void kd_sb_free(kd_strbuf *b);
/* The text so far ("" before any append). */
const char *kd_sb_str(const kd_strbuf *b);

#endif
