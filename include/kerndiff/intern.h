/* intern.h — a small string interner: each distinct string is stored once in
 * an arena and named by a 32-bit id, so the loader's event arrays stay compact
 * (product.md §1 "compact arrays with interned strings"). */
#ifndef KERNDIFF_INTERN_H
#define KERNDIFF_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t kd_sid; /* 0 = no string (absent); kd_str(0) is "" */
typedef struct kd_interner kd_interner;

kd_interner *kd_interner_new(void);
void kd_interner_free(kd_interner *in);
/* Interns len bytes of s (need not be NUL-terminated). Returns 0 on OOM. */
kd_sid kd_intern(kd_interner *in, const char *s, size_t len);
/* Interns a NUL-terminated string. */
kd_sid kd_intern_cstr(kd_interner *in, const char *s);
/* The id of an interned string, or 0 when it was never interned (no insert). */
kd_sid kd_intern_find(const kd_interner *in, const char *s, size_t len);
const char *kd_str(const kd_interner *in, kd_sid id);
size_t kd_str_len(const kd_interner *in, kd_sid id);
/* Number of distinct strings (ids run 1..count). */
uint32_t kd_interner_count(const kd_interner *in);
/* Bytes held (arena + table), for memory reports. */
size_t kd_interner_bytes(const kd_interner *in);

#endif
