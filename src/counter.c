/* counter.c — insertion-ordered Counter (counter.h). */
#include "config.h"

#include "kerndiff/counter.h"

#include <stdlib.h>
#include <string.h>

#define SMALL 16 /* below this, a linear scan beats hashing */

static uint32_t slot_of(kd_sid key, uint32_t cap)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1);
}

static bool rebuild_index(kd_counter *c, uint32_t cap)
{
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return false;
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t s = slot_of(c->items[i].key, cap);
        while (ix[s])
            s = (s + 1) & (cap - 1);
        ix[s] = i + 1;
    }
    free(c->index);
    c->index = ix;
    c->index_cap = cap;
    return true;
}

static long find(const kd_counter *c, kd_sid key)
{
    if (!c->index) {
        for (uint32_t i = 0; i < c->n; i++)
            if (c->items[i].key == key)
                return i;
        return -1;
    }
    uint32_t s = slot_of(key, c->index_cap);
    while (c->index[s]) {
        if (c->items[c->index[s] - 1].key == key)
            return c->index[s] - 1;
        s = (s + 1) & (c->index_cap - 1);
    }
    return -1;
}

bool kd_counter_add(kd_counter *c, kd_sid key, double amount)
{
    long at = find(c, key);
    if (at >= 0) {
        c->items[at].count += amount;
        return true;
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 2;
        kd_counter_item *p = realloc(c->items, cap * sizeof *p);
        if (!p)
            return false;
        c->items = p;
        c->cap = cap;
    }
    /* 0 + amount, as Python's missing-key default */
    c->items[c->n++] = (kd_counter_item){key, 0.0 + amount};
    if (c->n >= SMALL && (uint64_t)c->n * 2 >= c->index_cap)
        return rebuild_index(c, c->index_cap ? c->index_cap * 2 : 64);
    if (c->index) {
        uint32_t s = slot_of(key, c->index_cap);
        while (c->index[s])
            s = (s + 1) & (c->index_cap - 1);
        c->index[s] = c->n;
    }
    return true;
}

double kd_counter_get(const kd_counter *c, kd_sid key)
{
    long at = find(c, key);
    return at >= 0 ? c->items[at].count : 0.0;
}

bool kd_counter_update(kd_counter *dst, const kd_counter *src)
{
    for (uint32_t i = 0; i < src->n; i++)
        if (!kd_counter_add(dst, src->items[i].key, src->items[i].count))
            return false;
    return true;
}

kd_sid kd_counter_most_common(const kd_counter *c)
{
    if (!c->n)
        return 0;
    uint32_t best = 0;
    for (uint32_t i = 1; i < c->n; i++)
        if (c->items[i].count > c->items[best].count)
            best = i;
    return c->items[best].key;
}

size_t kd_counter_most_common_n(const kd_counter *c, size_t n, kd_counter_item *out)
{
    size_t want = n && n < c->n ? n : c->n;
    /* stable selection: repeatedly take the first maximum not yet taken */
    if (want <= 4) {
        unsigned char *taken = calloc(c->n ? c->n : 1, 1);
        if (!taken)
            return 0;
        for (size_t k = 0; k < want; k++) {
            long best = -1;
            for (uint32_t i = 0; i < c->n; i++)
                if (!taken[i] && (best < 0 || c->items[i].count > c->items[best].count))
                    best = i;
            taken[best] = 1;
            out[k] = c->items[best];
        }
        free(taken);
        return want;
    }
    /* insertion sort into out: stable, fine for the sizes reports print */
    size_t m = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        kd_counter_item it = c->items[i];
        size_t j = m < want ? m : want;
        while (j > 0 && out[j - 1].count < it.count) {
            if (j < want)
                out[j] = out[j - 1];
            j--;
        }
        if (j < want) {
            out[j] = it;
            if (m < want)
                m++;
        }
    }
    return m;
}

void kd_counter_free(kd_counter *c)
{
    free(c->items);
    free(c->index);
    memset(c, 0, sizeof *c);
}
