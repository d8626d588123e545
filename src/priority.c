/* priority.c — the action rows of one stage: neighbours, dependency risk, priority and recommendation (priority.h; reference §4). */
#include "config.h"

#include "kerndiff/priority.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/sort.h"
#include "kerndiff/text.h"

/* ---- relaxed source-map lookup, memoized ------------------------------- */

static char *alias_text(void *ctx, size_t i)
{
    const kd_source_map *sm = ctx;
    return kd_source_stats_alias_text(sm, kd_str(sm->strings, sm->v[i].name), &sm->v[i]);
}

static int alias_bonus(void *ctx, size_t i)
{
    const kd_source_map *sm = ctx;
    return kd_source_stats_alias_bonus(sm, &sm->v[i]);
}

bool kd_source_lookup_init(kd_source_lookup *l, const kd_source_map *sm)
{
    memset(l, 0, sizeof *l);
    l->sm = sm;
    l->keys = malloc((sm->n ? sm->n : 1) * sizeof *l->keys);
    l->asked = kd_interner_new();
    if (!l->keys || !l->asked) {
        kd_source_lookup_free(l);
        return false;
    }
    for (size_t i = 0; i < sm->n; i++)
        l->keys[i] = kd_str(sm->strings, sm->v[i].name);
    if (!kd_relaxed_index_build(&l->ix, l->keys, sm->n)) {
        kd_source_lookup_free(l);
        return false;
    }
    return true;
}

void kd_source_lookup_free(kd_source_lookup *l)
{
    kd_relaxed_index_free(&l->ix);
    free(l->keys);
    kd_interner_free(l->asked);
    free(l->memo);
    memset(l, 0, sizeof *l);
}

const kd_source_stats *kd_source_lookup_find(kd_source_lookup *l, const char *name,
                                             kd_match_kind *kind)
{
    kd_sid q = kd_intern_cstr(l->asked, name);
    if (q && q >= l->memo_cap) {
        size_t cap = l->memo_cap ? l->memo_cap : 64;
        while (cap <= q)
            cap *= 2;
        long *m = realloc(l->memo, cap * sizeof *m);
        if (m) {
            memset(m + l->memo_cap, 0, (cap - l->memo_cap) * sizeof *m);
            l->memo = m;
            l->memo_cap = cap;
        }
    }
    bool memo_ok = q && q < l->memo_cap;
    if (memo_ok && l->memo[q] && !kind)
        return l->memo[q] > 0 ? &l->sm->v[l->memo[q] - 1] : NULL;
    kd_alias_scorer alias = {alias_text, alias_bonus, (void *)l->sm};
    long at = kd_relaxed_lookup(&l->ix, name, &alias, NULL, kind);
    if (memo_ok)
        l->memo[q] = at >= 0 ? at + 1 : -1;
    return at >= 0 ? &l->sm->v[at] : NULL;
}

/* ---- priority, risk, scope families ------------------------------------ */

const char *kd_dependency_risk_label(const char *signal)
{
    if (strcmp(signal, "serial risk low") == 0)
        return "low";
    if (strcmp(signal, "prev-side serial risk") == 0 || strcmp(signal, "next-side serial risk") == 0 ||
        strcmp(signal, "both-side serial risk") == 0)
        return "high";
    if (strcmp(signal, "adjacency unclear") == 0)
        return "unclear";
    return signal;
}

void kd_priority_and_recommendation(const char *verdict, kd_category category, const char *signal,
                                    double exclusive_ratio, double hidden_ratio, double share_pct,
                                    const char **priority, const char **recommendation)
{
    const char *dep = kd_dependency_risk_label(signal);
#define PICK(p, r)                                                                 \
    do {                                                                           \
        *priority = p;                                                             \
        *recommendation = r;                                                       \
        return;                                                                    \
    } while (0)
    if (share_pct < 1.0)
        PICK("P5", "skip");
    if (strcmp(verdict, "headroom") == 0) {
        if (strcmp(dep, "low") == 0)
            PICK("P1", category == KD_CAT_COMMUNICATION ? "try overlap" : "try fusion");
        PICK("P2", "check deps");
    }
    if (strcmp(verdict, "low-roi-hidden") == 0)
        PICK("P4", "skip");
    if (exclusive_ratio >= 0.85 && strcmp(dep, "low") == 0)
        PICK("P3", "defer");
    if (hidden_ratio >= 0.7)
        PICK("P5", "skip");
    if (strcmp(dep, "high") == 0)
        PICK("P4", "check deps");
    if (strcmp(dep, "unclear") == 0)
        PICK("P4", "inspect");
    PICK("P4", "defer");
#undef PICK
}

/* parse_scope_signature: ("","") for empty/unmapped/n/a; regex
 * ^(.+?)\(\d+\):\s*(.+)$ -> (path, func); else (scope, "") */
static void scope_signature(const char *s, const char **path, size_t *path_len, const char **func)
{
    *path = "";
    *path_len = 0;
    *func = "";
    if (!*s || strcmp(s, "unmapped") == 0 || strcmp(s, "n/a") == 0)
        return;
    for (size_t i = 1; s[i]; i++) {
        if (s[i] != '(' || s[i + 1] < '0' || s[i + 1] > '9')
            continue;
        size_t j = i + 1;
        while (s[j] >= '0' && s[j] <= '9')
            j++;
        if (s[j] != ')' || s[j + 1] != ':')
            continue;
        const char *f = s + j + 2;
        while (*f == ' ' || *f == '\t' || *f == '\n' || *f == '\r' || *f == '\v' || *f == '\f')
            f++;
        if (!*f)
            continue; /* (.+) needs a character; backtracking to \s is immaterial */
        *path = s;
        *path_len = i;
        *func = f;
        return;
    }
    *path = s;
    *path_len = strlen(s);
}

bool kd_same_scope_family(const char *a, const char *b)
{
    const char *ap, *af, *bp, *bf;
    size_t al, bl;
    scope_signature(a, &ap, &al, &af);
    scope_signature(b, &bp, &bl, &bf);
    if (!al || !bl)
        return false;
    if (al == bl && memcmp(ap, bp, al) == 0)
        return true;
    return *af && *bf && strcmp(af, bf) == 0;
}

/* ---- neighbours ---------------------------------------------------------- */

typedef struct {
    const kd_kernel_event *prev, *next;
} neighbours;

typedef struct {
    const kd_kernel_event *e;
    uint32_t stream; /* dense */
} nb_item;

static int cmp_nb(const void *pa, const void *pb)
{
    const nb_item *a = pa, *b = pb;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->e->ts != b->e->ts)
        return a->e->ts < b->e->ts ? -1 : 1;
    if (a->e->end != b->e->end)
        return a->e->end < b->e->end ? -1 : 1;
    return (a->e->idx > b->e->idx) - (a->e->idx < b->e->idx);
}

KD_DEFINE_SORT(sort_nb_items, nb_item, cmp_nb)

/* build_stream_neighbor_index: per stream, sorted by (ts, end, idx). Indexed
 * by event position in the bundle. */
static neighbours *neighbour_index(const kd_bundle *b, size_t **pos_of_idx, size_t *max_idx)
{
    nb_item *items = malloc((b->n ? b->n : 1) * sizeof *items);
    neighbours *nb = calloc(b->n ? b->n : 1, sizeof *nb);
    kd_i64map dense;
    kd_i64map_init(&dense);
    size_t mx = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->events[i].idx > mx)
            mx = b->events[i].idx;
    size_t *pos = malloc((mx + 1) * sizeof *pos);
    bool ok = items && nb && pos;
    for (size_t i = 0; ok && i < b->n; i++) {
        int64_t d;
        if (!kd_i64map_get(&dense, b->events[i].stream, &d)) {
            d = (int64_t)dense.n;
            ok = kd_i64map_put(&dense, b->events[i].stream, d);
        }
        items[i] = (nb_item){&b->events[i], (uint32_t)d};
        pos[b->events[i].idx] = i;
    }
    if (ok) {
        sort_nb_items(items, b->n);
        for (size_t i = 0; i < b->n; i++) {
            size_t at = (size_t)(items[i].e - b->events);
            if (i > 0 && items[i - 1].stream == items[i].stream)
                nb[at].prev = items[i - 1].e;
            if (i + 1 < b->n && items[i + 1].stream == items[i].stream)
                nb[at].next = items[i + 1].e;
        }
    }
    free(items);
    kd_i64map_free(&dense);
    if (!ok) {
        free(nb);
        free(pos);
        return NULL;
    }
    *pos_of_idx = pos;
    *max_idx = mx;
    return nb;
}

static const char *scope_or_unmapped(const kd_source_lookup *l, const kd_source_stats *s)
{
    const char *b = s ? kd_source_stats_best(l->sm, &s->scope) : NULL;
    return b ? b : "unmapped";
}

static const char *launch_or_na(const kd_source_lookup *l, const kd_source_stats *s)
{
    const char *b = s ? kd_source_stats_best(l->sm, &s->launch_op) : NULL;
    return b ? b : "n/a";
}

/* is_neighbor_dependency_like */
static bool dependency_like(const kd_kernel_event *cur, const kd_kernel_event *nb)
{
    if (!nb)
        return false;
    if (cur->kind == KD_CAT_COMMUNICATION)
        return nb->kind != KD_CAT_COMMUNICATION;
    if (cur->kind == KD_CAT_ELEMENTWISE || cur->kind == KD_CAT_MEMORY)
        return nb->kind != KD_CAT_OTHER;
    return false;
}

/* "{short(canon,28)} @ {short(scope,28)} (gap {gap:.1f} us)" or "none" */
static char *describe_neighbour(const kd_trace *t, kd_source_lookup *l, const kd_kernel_event *nb,
                                double gap)
{
    if (!nb)
        return strdup("none");
    const char *canon = kd_str(t->strings, nb->canonical);
    const char *scope = scope_or_unmapped(l, kd_source_lookup_find(l, canon, NULL));
    char *a = kd_short_name(canon, 28), *b = kd_short_name(scope, 28);
    char *out = NULL;
    if (a && b) {
        size_t n = strlen(a) + strlen(b) + 64;
        out = malloc(n);
        if (out)
            snprintf(out, n, "%s @ %s (gap %.1f us)", a, b, gap);
    }
    free(a);
    free(b);
    return out;
}

typedef struct {
    const char *signal;
    char *prev, *next;
} dependency;

/* classify_dependency_signal (reference §4) */
static bool classify_dependency(const kd_trace *t, kd_source_lookup *l, const kd_kernel_event *cur,
                                const kd_source_stats *src, const neighbours *nb, dependency *out)
{
    const char *cur_scope = scope_or_unmapped(l, src), *cur_launch = launch_or_na(l, src);
    const kd_kernel_event *side[2] = {nb->prev, nb->next};
    bool tight[2] = {false, false}, risk[2] = {false, false}, unclear[2] = {false, false};
    double gap[2] = {0.0, 0.0};
    double threshold = fmax(2.0, fmin(20.0, cur->dur * 0.15));
    for (int s = 0; s < 2; s++) {
        if (!side[s])
            continue;
        double g = s == 0 ? cur->ts - side[s]->end : side[s]->ts - cur->end;
        gap[s] = g < 0.0 ? 0.0 : g;
        const kd_source_stats *ns =
            kd_source_lookup_find(l, kd_str(t->strings, side[s]->canonical), NULL);
        const char *scope = scope_or_unmapped(l, ns), *launch = launch_or_na(l, ns);
        tight[s] = gap[s] <= threshold;
        risk[s] = tight[s] && (kd_same_scope_family(cur_scope, scope) ||
                               (strcmp(cur_launch, "n/a") != 0 && strcmp(cur_launch, launch) == 0) ||
                               dependency_like(cur, side[s]));
        unclear[s] = tight[s] && !risk[s] &&
                     (strcmp(cur_scope, "unmapped") == 0 || strcmp(scope, "unmapped") == 0);
    }
    out->signal = risk[0] && risk[1] ? "both-side serial risk"
                  : risk[0]          ? "prev-side serial risk"
                  : risk[1]          ? "next-side serial risk"
                  : unclear[0] || unclear[1] ? "adjacency unclear"
                                             : "serial risk low";
    out->prev = describe_neighbour(t, l, side[0], gap[0]);
    out->next = describe_neighbour(t, l, side[1], gap[1]);
    return out->prev && out->next;
}

/* ---- suggestions --------------------------------------------------------- */

static char *headroom_suggestion(kd_category c)
{
    if (c == KD_CAT_COMMUNICATION)
        return strdup("Communication is still exposed. Check overlap with nearby compute.");
    if (c == KD_CAT_ELEMENTWISE || c == KD_CAT_MEMORY)
        return strdup("This work is still exposed. Check fusion or nearby compute coverage.");
    return strdup("This work is still exposed. Check stream placement and immediate dependencies.");
}

static char *hidden_suggestion(const kd_trace *t, const kd_aggregate *a)
{
    kd_sid top = kd_counter_most_common(&a->overlap_with);
    if (!top)
        return strdup("Mostly hidden already. Revisit only if schedule or fusion changes.");
    char *name = kd_short_name(kd_str(t->strings, top), 48);
    if (!name)
        return NULL;
    size_t n = strlen(name) + 128;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "Mostly hidden under %s (%.1f us). Revisit only if schedule or fusion changes.",
                 name, kd_counter_get(&a->overlap_with, top));
    free(name);
    return out;
}

/* ---- rows ------------------------------------------------------------------ */

typedef struct {
    const kd_bundle *b;
    const kd_aggregate_list *aggs;
    kd_source_lookup *sources;
    double busy;
    neighbours *nb;
    size_t *pos_of_idx;
    size_t max_idx;
} row_ctx;

static void free_row(kd_action_row *r)
{
    free(r->python_scope);
    free(r->launch_op);
    free(r->prev_neighbor);
    free(r->next_neighbor);
    free(r->suggestion);
}

/* make_action_row */
static bool make_row(const row_ctx *c, size_t agg, const char *verdict, char *suggestion,
                     kd_action_row *r)
{
    const kd_aggregate *a = &c->aggs->v[agg];
    const kd_trace *t = c->b->trace;
    memset(r, 0, sizeof *r);
    r->suggestion = suggestion;
    r->verdict = verdict;
    r->aggregate = agg;
    r->kernel = a->name;
    r->category = a->category;
    r->total_us = a->total_us;
    r->share_pct = c->busy > 0 ? a->total_us / c->busy * 100.0 : 0.0;
    r->exclusive_ratio = kd_aggregate_exclusive_ratio(a);
    r->hidden_ratio = kd_aggregate_hidden_ratio(a);
    r->representative_idx = a->representative_idx;
    const kd_source_stats *src = kd_source_lookup_find(c->sources, kd_str(t->strings, a->name), NULL);
    r->python_scope = strdup(scope_or_unmapped(c->sources, src));
    r->launch_op = strdup(launch_or_na(c->sources, src));
    r->mapping_ratio = src ? kd_source_stats_mapping_ratio(src) : 0.0;
    dependency dep = {"adjacency unclear", NULL, NULL};
    bool ok = suggestion && r->python_scope && r->launch_op;
    if (ok && a->representative_idx >= 0 && (size_t)a->representative_idx <= c->max_idx) {
        size_t at = c->pos_of_idx[a->representative_idx];
        ok = classify_dependency(t, c->sources, &c->b->events[at], src, &c->nb[at], &dep);
    }
    r->dependency_signal = dep.signal;
    r->prev_neighbor = dep.prev ? dep.prev : strdup("none");
    r->next_neighbor = dep.next ? dep.next : strdup("none");
    kd_priority_and_recommendation(verdict, a->kind, dep.signal, r->exclusive_ratio,
                                   r->hidden_ratio, r->share_pct, &r->priority, &r->recommendation);
    return ok && r->prev_neighbor && r->next_neighbor;
}

static bool push_row(kd_action_rows *out, size_t *cap, const kd_action_row *r)
{
    if (out->n == *cap && !kd_vec_grow_((void **)&out->v, cap, out->n, sizeof *out->v))
        return false;
    out->v[out->n++] = *r;
    return true;
}

static bool seen_name(const kd_action_rows *rows, kd_sid name)
{
    for (size_t i = 0; i < rows->n; i++)
        if (rows->v[i].kernel == name)
            return true;
    return false;
}

kd_status kd_build_action_rows(const kd_bundle *formal, const kd_aggregate_list *aggs,
                               const size_t *top_overlap, size_t n_top_overlap,
                               const size_t *top_low_roi, size_t n_top_low_roi,
                               kd_source_lookup *sources, double total_busy_us, size_t limit,
                               kd_action_rows *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    row_ctx c = {formal, aggs, sources, total_busy_us, NULL, NULL, 0};
    c.nb = neighbour_index(formal, &c.pos_of_idx, &c.max_idx);
    size_t cap = 0;
    bool ok = c.nb != NULL;
    /* headroom rows: a P5 row is dropped and not marked seen */
    for (size_t i = 0; ok && i < n_top_overlap; i++) {
        kd_action_row r;
        ok = make_row(&c, top_overlap[i], "headroom",
                      headroom_suggestion(aggs->v[top_overlap[i]].kind), &r);
        if (ok && strcmp(r.priority, "P5") == 0) {
            free_row(&r);
            continue;
        }
        ok = ok && push_row(out, &cap, &r);
        if (!ok)
            free_row(&r);
    }
    /* low-roi rows skip names already seen (rows are keyed by name only) */
    for (size_t i = 0; ok && i < n_top_low_roi; i++) {
        const kd_aggregate *a = &aggs->v[top_low_roi[i]];
        if (seen_name(out, a->name))
            continue;
        kd_action_row r;
        ok = make_row(&c, top_low_roi[i], "low-roi-hidden", hidden_suggestion(formal->trace, a), &r) &&
             push_row(out, &cap, &r);
        if (!ok)
            free_row(&r);
    }
    free(c.nb);
    free(c.pos_of_idx);
    if (!ok) {
        kd_action_rows_free(out);
        return kd_fail(err, KD_ENOMEM, "out of memory building the action rows");
    }
    while (limit > 0 && out->n > limit)
        free_row(&out->v[--out->n]);
    return KD_OK;
}

void kd_action_rows_free(kd_action_rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        free_row(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}
