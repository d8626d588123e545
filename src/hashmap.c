/* hashmap.c — int64 -> int64 open addressing with linear probing (hashmap.h). */
#include "config.h"

#include "kerndiff/hashmap.h"

#include <stdlib.h>

static size_t slot_of(int64_t key, size_t cap)
{
    return (size_t)kd_mix64((uint64_t)key) & (cap - 1);
}

void kd_i64map_init(kd_i64map *m)
{
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->n = 0;
    m->probes = 0;
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
    kd_i64map nm = {.keys = calloc(cap, sizeof(int64_t)),
                    .vals = calloc(cap, sizeof(int64_t)),
                    .used = calloc(cap, 1),
                    .cap = cap,
                    .n = 0,
                    .probes = m->probes};
    if (!nm.keys || !nm.vals || !nm.used) {
        free(nm.keys);
        free(nm.vals);
        free(nm.used);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t s = slot_of(m->keys[i], cap);
        nm.probes++;
        while (nm.used[s]) {
            s = (s + 1) & (cap - 1);
            nm.probes++;
        }
        nm.used[s] = 1;
        nm.keys[s] = m->keys[i];
        nm.vals[s] = m->vals[i];
        nm.n++;
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = nm;
    return true;
}

bool kd_i64map_put(kd_i64map *m, int64_t key, int64_t val)
{
    if ((m->n + 1) * 4 >= m->cap * 3 && !rehash(m, m->cap ? m->cap * 2 : 64))
        return false;
    size_t s = slot_of(key, m->cap);
    m->probes++;
    while (m->used[s] && m->keys[s] != key) {
        s = (s + 1) & (m->cap - 1);
        m->probes++;
    }
    if (!m->used[s]) {
        m->used[s] = 1;
        m->keys[s] = key;
        m->n++;
    }
    m->vals[s] = val;
    return true;
}

size_t kd_i64map_probe_count(const kd_i64map *m, int64_t key)
{
    if (!m->cap)
        return 0;
    size_t s = slot_of(key, m->cap), probes = 1;
    while (m->used[s] && m->keys[s] != key) {
        s = (s + 1) & (m->cap - 1);
        probes++;
    }
    return probes;
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
