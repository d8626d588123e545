/* strbuf.c — a growable string (strbuf.h). */
#include "config.h"

#include "kerndiff/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kd_sb_putn(kd_strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return false;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return false;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return true;
}

bool kd_sb_puts(kd_strbuf *b, const char *s) { return kd_sb_putn(b, s, strlen(s)); }

bool kd_sb_printf(kd_strbuf *b, const char *fmt, ...)
{
    /* most pieces are short: formatted on the stack, copied once */
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return false;
    }
    if ((size_t)n < sizeof small)
        return kd_sb_putn(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = true;
        return false;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    bool ok = kd_sb_putn(b, big, (size_t)n);
    free(big);
    return ok;
}

void kd_sb_reset(kd_strbuf *b)
{
    b->n = 0;
    if (b->s)
        b->s[0] = '\0';
}

void kd_sb_free(kd_strbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

const char *kd_sb_str(const kd_strbuf *b) { return b->s ? b->s : ""; }
