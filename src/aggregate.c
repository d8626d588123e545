/* aggregate.c — per-kernel aggregates of one stage and the two candidate
 * lists (aggregate.h; reference §4 "Aggregate" and "Opportunities", the
 * seed's aggregate_events, top_overlap_opportunities, top_hidden_low_roi). */
#include "config.h"

#include "kerndiff/aggregate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"

#define TOP_N 5

/* reference §4: "... if self.total_us else 0.0" */
double kd_aggregate_hidden_ratio(const kd_aggregate *a)
{
    return a->total_us ? a->hidden_us / a->total_us : 0.0;
}

double kd_aggregate_exclusive_ratio(const kd_aggregate *a)
{
    return a->total_us ? a->exclusive_us / a->total_us : 0.0;
}

/* ---- aggregate_events ------------------------------------------------- */

/* The (canonical, category) key as one int64 for the hash map. */
static int64_t pair_key(const kd_kernel_event *e)
{
    return (int64_t)(((uint64_t)e->canonical << 32) | (uint32_t)e->category);
}

static bool append_aggregate(kd_aggregate_list *l, size_t *cap, const kd_kernel_event *e)
{
    if (l->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        kd_aggregate *p = realloc(l->v, nc * sizeof *p);
        if (!p)
            return false;
        l->v = p;
        *cap = nc;
    }
    kd_aggregate *a = &l->v[l->n++];
    memset(a, 0, sizeof *a);
    a->name = e->canonical;
    a->category = e->category;
    a->kind = e->kind;
    a->overlap_with = (kd_counter)KD_COUNTER_INIT;
    a->representative_idx = -1;    /* None */
    a->representative_score = -1.0; /* reference §4: initial score -1 */
    return true;
}

/* reference §4: sums in event order, Counter.update, and the first event
 * with the strictly largest hidden + exclusive as representative */
static bool add_event(kd_aggregate *a, const kd_kernel_event *e)
{
    a->count++;
    a->total_us += e->dur;
    a->hidden_us += e->hidden_us;
    a->exclusive_us += e->exclusive_us;
    a->hidden_by_compute_us += e->hidden_by_compute_us;
    if (!kd_counter_update(&a->overlap_with, &e->overlap_with))
        return false;
    double score = e->hidden_us + e->exclusive_us;
    if (score > a->representative_score) {
        a->representative_score = score;
        a->representative_idx = e->idx;
    }
    return true;
}

kd_status kd_aggregate_events(const kd_kernel_event *events, size_t n, kd_aggregate_list *out,
                              kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_i64map index; /* pair key -> position in out, first-seen order */
    kd_i64map_init(&index);
    size_t cap = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const kd_kernel_event *e = &events[i];
        int64_t at;
        if (!kd_i64map_get(&index, pair_key(e), &at)) {
            at = (int64_t)out->n;
            ok = append_aggregate(out, &cap, e) && kd_i64map_put(&index, pair_key(e), at);
        }
        ok = ok && add_event(&out->v[at], e);
    }
    kd_i64map_free(&index);
    if (!ok) {
        kd_aggregate_list_free(out);
        return kd_fail(err, KD_ENOMEM, "aggregate: out of memory");
    }
    return KD_OK;
}

kd_status kd_aggregate_add_launches(kd_aggregate_list *l, const kd_kernel_event *zero, size_t n,
                                    kd_error *err)
{
    kd_i64map index;
    kd_i64map_init(&index);
    size_t cap = l->n; /* what the list holds at least */
    bool ok = true;
    for (size_t i = 0; i < l->n && ok; i++) {
        kd_kernel_event key = {.canonical = l->v[i].name, .category = l->v[i].category, .kind = l->v[i].kind};
        int64_t at;
        if (!kd_i64map_get(&index, pair_key(&key), &at))
            ok = kd_i64map_put(&index, pair_key(&key), (int64_t)i);
    }
    for (size_t i = 0; i < n && ok; i++) {
        int64_t at;
        if (!kd_i64map_get(&index, pair_key(&zero[i]), &at)) {
            at = (int64_t)l->n;
            ok = append_aggregate(l, &cap, &zero[i]) && kd_i64map_put(&index, pair_key(&zero[i]), at);
        }
        if (ok)
            l->v[at].count++; /* no time: totals, ratios and the representative stay */
    }
    kd_i64map_free(&index);
    return ok ? KD_OK : kd_fail(err, KD_ENOMEM, "aggregate: out of memory");
}

void kd_aggregate_list_free(kd_aggregate_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        kd_counter_free(&l->v[i].overlap_with);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ---- candidate lists ---------------------------------------------------- */

/* A running top five of one Python sort(key, reverse=True)[:5]: candidates
 * arrive in list order and go after every kept one with a key >= theirs, so
 * equal keys keep their original order (reference §0: sorting is stable). */
typedef struct {
    double k1[TOP_N], k2[TOP_N];
    size_t pos[TOP_N];
    size_t n;
} top_five;

static bool key_greater(double a1, double a2, double b1, double b2)
{
    return a1 > b1 || (a1 == b1 && a2 > b2);
}

static void top_five_offer(top_five *t, double k1, double k2, size_t pos)
{
    size_t j = t->n;
    while (j > 0 && key_greater(k1, k2, t->k1[j - 1], t->k2[j - 1]))
        j--;
    if (j >= TOP_N)
        return;
    size_t last = t->n < TOP_N ? t->n : TOP_N - 1;
    for (size_t i = last; i > j; i--) {
        t->k1[i] = t->k1[i - 1];
        t->k2[i] = t->k2[i - 1];
        t->pos[i] = t->pos[i - 1];
    }
    t->k1[j] = k1;
    t->k2[j] = k2;
    t->pos[j] = pos;
    if (t->n < TOP_N)
        t->n++;
}

/* reference §4: top_overlap_opportunities' category_weight */
static double category_weight(kd_category c)
{
    switch (c) {
    case KD_CAT_COMMUNICATION: return 1.3;
    case KD_CAT_MEMORY: return 1.15;
    case KD_CAT_ELEMENTWISE: return 1.0;
    case KD_CAT_COMPUTE: return 0.35;
    case KD_CAT_OTHER: return 0.8;
    default: return 1.0; /* .get(category, 1.0) */
    }
}

/* reference §4: total_us >= 5.0 and exclusive_ratio >= 0.45; non-compute
 * (primary) before compute (fallback), each by exclusive_us * weight;
 * (primary + fallback)[:5]. */
size_t kd_top_overlap_opportunities(const kd_aggregate_list *l, size_t out[5])
{
    top_five primary = {.n = 0}, fallback = {.n = 0};
    for (size_t i = 0; i < l->n; i++) {
        const kd_aggregate *a = &l->v[i];
        if (!(a->total_us >= 5.0 && kd_aggregate_exclusive_ratio(a) >= 0.45))
            continue;
        double key = a->exclusive_us * category_weight(a->kind);
        top_five_offer(a->kind == KD_CAT_COMPUTE ? &fallback : &primary, key, 0.0, i);
    }
    size_t m = 0;
    for (size_t i = 0; i < primary.n; i++)
        out[m++] = primary.pos[i];
    for (size_t i = 0; i < fallback.n && m < TOP_N; i++)
        out[m++] = fallback.pos[i];
    return m;
}

/* reference §4: hidden_us * (1 + hidden_by_compute_us / max(hidden_us, 1.0)) */
static double low_roi_score(const kd_aggregate *a)
{
    double floor = a->hidden_us >= 1.0 ? a->hidden_us : 1.0;
    return a->hidden_us * (1.0 + a->hidden_by_compute_us / floor);
}

/* reference §4: elementwise or memory, total_us >= 5.0, hidden_ratio >= 0.65;
 * by (score, hidden_ratio) descending; first five. */
size_t kd_top_hidden_low_roi(const kd_aggregate_list *l, size_t out[5])
{
    top_five top = {.n = 0};
    for (size_t i = 0; i < l->n; i++) {
        const kd_aggregate *a = &l->v[i];
        if (a->kind != KD_CAT_ELEMENTWISE && a->kind != KD_CAT_MEMORY)
            continue;
        double ratio = kd_aggregate_hidden_ratio(a);
        if (a->total_us >= 5.0 && ratio >= 0.65)
            top_five_offer(&top, low_roi_score(a), ratio, i);
    }
    for (size_t i = 0; i < top.n; i++)
        out[i] = top.pos[i];
    return top.n;
}
