/* counter.h — Python's collections.Counter over interned strings: counts in
 * first-insertion order, since insertion order decides ties in most_common
 * (reference §0). Keys are ids of one interner, owned by whoever owns the
 * counter. Small counters (the common case) are scanned; larger ones get a
 * hash index. */
#ifndef KERNDIFF_COUNTER_H
#define KERNDIFF_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerndiff/intern.h"

typedef struct {
    kd_sid key;
    double count;
} kd_counter_item;

typedef struct {
    kd_counter_item *items; /* insertion order */
    uint32_t n, cap;
    uint32_t *index; /* open addressing, item index + 1; NULL while small */
    uint32_t index_cap;
} kd_counter;

#define KD_COUNTER_INIT {NULL, 0, 0, NULL, 0}

/* counter[key] += amount; false on OOM */
bool kd_counter_add(kd_counter *c, kd_sid key, double amount);
/* counter[key] (0 when absent) */
double kd_counter_get(const kd_counter *c, kd_sid key);
/* Counter.update(src): src's keys in src's order */
bool kd_counter_update(kd_counter *dst, const kd_counter *src);
/* most_common(1)[0][0], 0 when empty: the highest count, first inserted on ties */
kd_sid kd_counter_most_common(const kd_counter *c);
/* most_common(n): a stable sort by count descending, first n, into out
 * (capacity n). Returns the number written. n = 0 means all (out holds c->n). */
size_t kd_counter_most_common_n(const kd_counter *c, size_t n, kd_counter_item *out);
void kd_counter_free(kd_counter *c);

#endif
