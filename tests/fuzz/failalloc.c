/* failalloc.c — the failing allocator of failalloc.h: --wrap'd malloc,
 * calloc and realloc that count and, when armed, fail (test and fuzz
 * binaries only). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "failalloc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* The shim's state (test binaries only): -1 not armed. */
static atomic_long fail_at = -1;
static atomic_long counted;
static atomic_long failed;
static atomic_int from_mode;
static atomic_int env_read;

static void read_env(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&env_read, &expected, 1))
        return;
    const char *s = getenv("KD_FAIL_ALLOC_AFTER");
    if (s && *s) {
        char *end;
        long n = strtol(s, &end, 10);
        if (!*end && n >= 0)
            failalloc_arm(n, FAILALLOC_FROM);
    }
}

static bool should_fail(void)
{
    if (!atomic_load_explicit(&env_read, memory_order_relaxed))
        read_env();
    long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    long i = atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
    if (at < 0)
        return false;
    if (i == at || (i > at && atomic_load_explicit(&from_mode, memory_order_relaxed))) {
        atomic_fetch_add(&failed, 1);
        return true;
    }
    return false;
}

void failalloc_arm(long n, failalloc_mode mode)
{
    atomic_store(&env_read, 1);
    atomic_store(&fail_at, -1);
    atomic_store(&counted, 0);
    atomic_store(&failed, 0);
    atomic_store(&from_mode, mode == FAILALLOC_FROM);
    atomic_store(&fail_at, n);
}

long failalloc_disarm(void)
{
    atomic_store(&fail_at, -1);
    return atomic_load(&failed);
}

long failalloc_count(void) { return atomic_load(&counted); }

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }

void *__wrap_calloc(size_t k, size_t n) { return should_fail() ? NULL : __real_calloc(k, n); }

void *__wrap_realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees: never failed */
    return n && should_fail() ? NULL : __real_realloc(p, n);
}
