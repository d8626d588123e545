/* hashmap.h — an open-addressing map from int64 keys to int64 values, for the
 * id lookups of the pipeline (correlation -> External id, External id -> index,
 * packed pairs such as kernel << 32 | location). Insertion overwrites, so
 * "a later event wins" falls out of trace order. Every key bit is mixed into
 * the slot index, so packed pairs spread as well as plain ids. */
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
    size_t probes; /* slots examined by puts and their rehashes, for the tests */
} kd_i64map;

void kd_i64map_init(kd_i64map *m);
void kd_i64map_free(kd_i64map *m);
/* false on OOM */
bool kd_i64map_put(kd_i64map *m, int64_t key, int64_t val);
/* true and *val set when key is present */
bool kd_i64map_get(const kd_i64map *m, int64_t key, int64_t *val);
/* The slots a get of key examines (its probe sequence, the final hit or empty
 * slot included); 0 for an empty map. Lets tests check the hash spreads keys
 * without timing anything. */
size_t kd_i64map_probe_count(const kd_i64map *m, int64_t key);

/* splitmix64's finalizer, the maps' hash: every bit of the key must reach
 * the slot index: the pipeline packs two ids
 * into one key (kp << 32 | loc, stage << 32 | name), and a multiplicative hash
 * that keeps only some bits of the product sends all keys sharing their low
 * half to one probe run (Reliability item 9).  splitmix64's finalizer is a
 * bijection whose every output bit depends on every input bit. */
static inline uint64_t kd_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

#endif
