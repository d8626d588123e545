/* hashmap.c — int64 -> int64 open addressing with linear probing (hashmap.h). */
#include "config.h"

#include "kerndiff/hashmap.h"

#include <stdlib.h>

static size_t slot_of(int64_t key, size_t cap)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing */
    return (size_t)(h >> 17) & (cap - 1);
}

void kd_i64map_init(kd_i64map *m)
{
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
}

void kd_i64map_free(kd_i64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    kd_i64map_init(m);
}

static bool rehash(kd_i64map *m, size_t cap)
{
    kd_i64map nm = {calloc(cap, sizeof(int64_t)), calloc(cap, sizeof(int64_t)),
                    calloc(cap, 1), cap, 0};
    if (!nm.keys || !nm.vals || !nm.used) {
        kd_i64map_free(&nm);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t s = slot_of(m->keys[i], cap);
        while (nm.used[s])
            s = (s + 1) & (cap - 1);
        nm.used[s] = 1;
        nm.keys[s] = m->keys[i];
        nm.vals[s] = m->vals[i];
        nm.n++;
    }
    kd_i64map_free(m);
    *m = nm;
    return true;
}

bool kd_i64map_put(kd_i64map *m, int64_t key, int64_t val)
{
    if ((m->n + 1) * 4 >= m->cap * 3 && !rehash(m, m->cap ? m->cap * 2 : 64))
        return false;
    size_t s = slot_of(key, m->cap);
    while (m->used[s] && m->keys[s] != key)
        s = (s + 1) & (m->cap - 1);
    if (!m->used[s]) {
        m->used[s] = 1;
        m->keys[s] = key;
        m->n++;
    }
    m->vals[s] = val;
    return true;
}

bool kd_i64map_get(const kd_i64map *m, int64_t key, int64_t *val)
{
    if (!m->cap)
        return false;
    size_t s = slot_of(key, m->cap);
    while (m->used[s]) {
        if (m->keys[s] == key) {
            if (val)
                *val = m->vals[s];
            return true;
        }
        s = (s + 1) & (m->cap - 1);
    }
    return false;
}
