/* intern.c — string interner: an arena of NUL-terminated strings plus an
 * open-addressing hash table of ids (intern.h). */
#include "config.h"

#include "kerndiff/intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"

/* Arena blocks start small and double up to ARENA_BLOCK_MAX: a small trace
 * (a test, a fuzz input) then costs kilobytes, a large one still gets
 * megabyte blocks. */
#define ARENA_BLOCK_MIN (1u << 14)
#define ARENA_BLOCK_MAX (1u << 20)

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    bool own; /* a long string's block of its own, never filled further */
    char data[];
} arena_block;

typedef struct {
    const char *s;
    size_t len;
} entry;

struct kd_interner {
    arena_block *blocks;
    entry *entries;   /* entries[id], id 0 unused */
    uint32_t count;   /* ids in use: 1..count */
    uint32_t entries_cap;
    uint32_t *table;  /* hash slots holding ids, 0 = empty */
    uint32_t table_cap; /* power of two */
    size_t arena_bytes;
    size_t next_block; /* capacity of the next shared block */
};

static uint64_t hash_bytes(const char *s, size_t len)
{
    /* 8 bytes per step (kernel and frame names run to hundreds of bytes),
     * then splitmix64's finalizer so that the low bits index the table well */
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    if (len > i)
        memcpy(&w, s + i, len - i);
    return kd_mix64(h ^ w);
}

kd_interner *kd_interner_new(void)
{
    kd_interner *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->table_cap = 64; /* both grow by doubling */
    in->table = calloc(in->table_cap, sizeof *in->table);
    in->entries_cap = 32;
    in->entries = calloc(in->entries_cap, sizeof *in->entries);
    if (!in->table || !in->entries) {
        kd_interner_free(in);
        return NULL;
    }
    in->entries[0].s = "";
    return in;
}

void kd_interner_free(kd_interner *in)
{
    if (!in)
        return;
    for (arena_block *b = in->blocks; b;) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(in->entries);
    free(in->table);
    free(in);
}

static size_t next_block_cap(kd_interner *in)
{
    size_t cap = in->next_block ? in->next_block : ARENA_BLOCK_MIN;
    in->next_block = cap < ARENA_BLOCK_MAX ? cap * 2 : ARENA_BLOCK_MAX;
    return cap;
}

static char *arena_copy(kd_interner *in, const char *s, size_t len)
{
    arena_block *b = in->blocks;
    if (!b || b->cap - b->used < len + 1) {
        /* long strings get a block of their own; the current block stays in front */
        bool own = len + 1 > ARENA_BLOCK_MAX / 4;
        size_t cap = own ? len + 1 : next_block_cap(in);
        while (cap < len + 1)
            cap = next_block_cap(in);
        arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        nb->own = own;
        in->arena_bytes += cap;
        if (b && own) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            in->blocks = nb;
        }
        b = nb;
    }
    char *dst = b->data + b->used;
    memcpy(dst, s, len);
    dst[len] = '\0';
    b->used += len + 1;
    return dst;
}

static int grow_table(kd_interner *in)
{
    uint32_t cap = in->table_cap * 2;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return 0;
    for (uint32_t id = 1; id <= in->count; id++) {
        uint64_t h = hash_bytes(in->entries[id].s, in->entries[id].len);
        uint32_t i = (uint32_t)h & (cap - 1);
        while (t[i])
            i = (i + 1) & (cap - 1);
        t[i] = id;
    }
    free(in->table);
    in->table = t;
    in->table_cap = cap;
    return 1;
}

kd_sid kd_intern(kd_interner *in, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    uint32_t mask = in->table_cap - 1;
    uint32_t i = (uint32_t)h & mask;
    while (in->table[i]) {
        const entry *e = &in->entries[in->table[i]];
        if (e->len == len && memcmp(e->s, s, len) == 0)
            return in->table[i];
        i = (i + 1) & mask;
    }
    if (in->count + 1 >= in->entries_cap) {
        uint32_t cap = in->entries_cap * 2;
        entry *ne = realloc(in->entries, cap * sizeof *ne);
        if (!ne)
            return 0;
        in->entries = ne;
        in->entries_cap = cap;
    }
    char *copy = arena_copy(in, s, len);
    if (!copy)
        return 0;
    kd_sid id = ++in->count;
    in->entries[id].s = copy;
    in->entries[id].len = len;
    in->table[i] = id;
    if ((uint64_t)in->count * 4 >= (uint64_t)in->table_cap * 3 && !grow_table(in))
        return 0;
    return id;
}

kd_sid kd_intern_find(const kd_interner *in, const char *s, size_t len)
{
    uint32_t mask = in->table_cap - 1;
    uint32_t i = (uint32_t)hash_bytes(s, len) & mask;
    while (in->table[i]) {
        const entry *e = &in->entries[in->table[i]];
        if (e->len == len && memcmp(e->s, s, len) == 0)
            return in->table[i];
        i = (i + 1) & mask;
    }
    return 0;
}

kd_sid kd_intern_cstr(kd_interner *in, const char *s) { return kd_intern(in, s, strlen(s)); }

const char *kd_str(const kd_interner *in, kd_sid id)
{
    return id && id <= in->count ? in->entries[id].s : "";
}

size_t kd_str_len(const kd_interner *in, kd_sid id)
{
    return id && id <= in->count ? in->entries[id].len : 0;
}

uint32_t kd_interner_count(const kd_interner *in) { return in->count; }

size_t kd_interner_bytes(const kd_interner *in)
{
    return in->arena_bytes + (size_t)in->entries_cap * sizeof(entry) +
           (size_t)in->table_cap * sizeof(uint32_t);
}
