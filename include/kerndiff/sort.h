/* sort.h — a stable merge sort specialised per element type at compile time.
 *
 * qsort calls its comparison through a pointer, once per comparison; on the
 * million-element arrays of a large trace (timed launches, Python frames,
 * kernel events) that call is most of the sort. KD_DEFINE_SORT(name, T, cmp)
 * defines
 *
 *     static void name(T *v, size_t n);
 *
 * sorting v by cmp (a qsort comparison, int cmp(const void *, const void *),
 * defined before the macro so it can be inlined): insertion sort of runs of
 * 16, then bottom-up merges through one scratch array. Stable, like glibc's
 * qsort whenever it has the memory for its merge sort; every caller's order
 * is total anyway (explicit tie-breaks), so the result is the same as
 * qsort's. If the scratch array cannot be allocated, qsort does the work. */
#ifndef KERNDIFF_SORT_H
#define KERNDIFF_SORT_H

#include <stdlib.h>
#include <string.h>

#define KD_SORT_RUN 16

#define KD_DEFINE_SORT(name, T, cmp)                                                   \
    static void name##_insertion_(T *v, size_t n)                                      \
    {                                                                                  \
        for (size_t i = 1; i < n; i++) {                                               \
            T x = v[i];                                                                \
            size_t j = i;                                                              \
            for (; j > 0 && cmp(&x, &v[j - 1]) < 0; j--)                               \
                v[j] = v[j - 1];                                                       \
            v[j] = x;                                                                  \
        }                                                                              \
    }                                                                                  \
                                                                                       \
    /* src[lo, mid) and src[mid, hi) into dst[lo, hi); ties from the left */          \
    static void name##_merge_(const T *src, T *dst, size_t lo, size_t mid, size_t hi)  \
    {                                                                                  \
        size_t i = lo, j = mid, k = lo;                                                \
        while (i < mid && j < hi)                                                      \
            dst[k++] = cmp(&src[j], &src[i]) < 0 ? src[j++] : src[i++];                \
        memcpy(dst + k, src + i, (mid - i) * sizeof *src);                             \
        k += mid - i;                                                                  \
        memcpy(dst + k, src + j, (hi - j) * sizeof *src);                              \
    }                                                                                  \
                                                                                       \
    static void name(T *v, size_t n)                                                   \
    {                                                                                  \
        for (size_t i = 0; i < n; i += KD_SORT_RUN)                                    \
            name##_insertion_(v + i, n - i < KD_SORT_RUN ? n - i : KD_SORT_RUN);       \
        if (n <= KD_SORT_RUN)                                                          \
            return;                                                                    \
        T *tmp = malloc(n * sizeof *tmp);                                              \
        if (!tmp) {                                                                    \
            qsort(v, n, sizeof *v, cmp);                                               \
            return;                                                                    \
        }                                                                              \
        T *src = v, *dst = tmp;                                                        \
        for (size_t w = KD_SORT_RUN; w < n; w *= 2) {                                  \
            for (size_t lo = 0; lo < n; lo += 2 * w) {                                 \
                size_t mid = lo + w < n ? lo + w : n;                                  \
                size_t hi = lo + 2 * w < n ? lo + 2 * w : n;                           \
                name##_merge_(src, dst, lo, mid, hi);                                  \
            }                                                                          \
            T *swap = src;                                                             \
            src = dst;                                                                 \
            dst = swap;                                                                \
        }                                                                              \
        if (src != v)                                                                  \
            memcpy(v, src, n * sizeof *v);                                             \
        free(tmp);                                                                     \
    }

#endif
