/* failalloc.h — a failing allocator for the out-of-memory tests (test and
 * fuzz binaries only; never the library or the tool).
 *
 * A binary linked with failalloc.c and
 *     -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
 * (KD_WRAP_ALLOC in Makefile.am) has every malloc, calloc and realloc
 * of its own objects and of libkerndiff (yajl's, zlib's, zstd's and
 * liblzma's allocations included: the loader hands them its own functions)
 * go through a counter. Armed with N, allocation number N (counting from 0
 * after arming) fails and, in FAILALLOC_FROM mode, every later one too (a
 * machine out of memory); FAILALLOC_ONE fails that one only (a transient
 * failure, which tests the clean-up paths). The counter is the shim's own
 * (atomic, shared by threads), not the library's: the library has no hook.
 * KD_FAIL_ALLOC_AFTER=N in the environment arms FAILALLOC_FROM mode with N
 * at the first allocation. */
#ifndef KD_FAILALLOC_H
#define KD_FAILALLOC_H

typedef enum { FAILALLOC_ONE, FAILALLOC_FROM } failalloc_mode;

/* Arms the counter: allocation number n (from 0) fails (and, FROM, all later). */
void failalloc_arm(long n, failalloc_mode mode);
/* Disarms it; returns the number of allocations that were made to fail. */
long failalloc_disarm(void);
/* Allocations counted since the last arm (armed or not: counting only). */
long failalloc_count(void);

#endif
