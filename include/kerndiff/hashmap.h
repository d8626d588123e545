/* hashmap.h — an open-addressing map from int64 keys to int64 values, for the
 * id lookups of the pipeline (correlation -> External id, External id -> index).
 * Insertion overwrites, so "a later event wins" falls out of trace order. */
#ifndef KERNDIFF_HASHMAP_H
#define KERNDIFF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t *keys;
    int64_t *vals;
    unsigned char *used;
    size_t cap; /* power of two, 0 when empty */
    size_t n;
} kd_i64map;

void kd_i64map_init(kd_i64map *m);
void kd_i64map_free(kd_i64map *m);
/* false on OOM */
bool kd_i64map_put(kd_i64map *m, int64_t key, int64_t val);
/* true and *val set when key is present */
bool kd_i64map_get(const kd_i64map *m, int64_t key, int64_t *val);

#endif
