/* diff.c — match, delta rows, stage summaries and the gate (diff.h;
 * product.md §3–§4). */
#include "config.h"

#include "kerndiff/diff.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/match.h"
#include "kerndiff/text.h"

/* ---- running both sides ----------------------------------------------------- */

typedef struct {
    kd_triage_options opt;
    kd_triage *out;
    kd_error err;
    kd_status st;
} side_job;

static void *run_side(void *arg)
{
    side_job *j = arg;
    kd_error_clear(&j->err);
    j->st = kd_triage_run(&j->opt, j->out, &j->err);
    return NULL;
}

static kd_triage_options side_options(const kd_diff_options *o, const char *path, const char *mapping,
                                      const char *pid)
{
    kd_triage_options t = o->sides;
    t.formal_path = path;
    t.mapping_path = mapping;
    if (pid)
        t.pid_substring = pid;
    return t;
}

/* The two triages a diff is computed from; freed once the diff holds its
 * own copies of what it reports. */
typedef struct {
    kd_triage base, cand;
} diff_sources;

/* How both sides' stages are decided (divergence D7): from the paths only
 * when every file of both sides has a path naming its stage (prefill/ and
 * decode/ captures), so both are judged the same way; otherwise from the
 * content, so that a renamed copy gives the same stages. */
static kd_status choose_stage_basis(const kd_diff_options *o, kd_stage_basis *basis, kd_error *err)
{
    kd_trace_set b, c;
    kd_status st = kd_discover_traces(o->baseline_path, &b, err);
    if (st)
        return st;
    st = kd_discover_traces(o->candidate_path, &c, err);
    if (st) {
        kd_trace_set_free(&b);
        return st;
    }
    *basis = kd_trace_set_path_staged(&b) && kd_trace_set_path_staged(&c) ? KD_STAGES_REFERENCE
                                                                           : KD_STAGES_CONTENT;
    kd_trace_set_free(&b);
    kd_trace_set_free(&c);
    return KD_OK;
}

/* product.md §1: the two sides are loaded concurrently, one thread each */
static kd_status run_sides(const kd_diff_options *o, diff_sources *d, kd_error *err)
{
    kd_stage_basis basis;
    kd_status st = choose_stage_basis(o, &basis, err);
    if (st)
        return st;
    side_job jobs[2] = {
        {side_options(o, o->baseline_path, o->baseline_mapping, o->baseline_pid), &d->base, {KD_OK, ""}, KD_OK},
        {side_options(o, o->candidate_path, o->candidate_mapping, o->candidate_pid), &d->cand, {KD_OK, ""},
         KD_OK},
    };
    for (int i = 0; i < 2; i++) {
        jobs[i].opt.stage_basis = basis;
        jobs[i].opt.whole_trace = true;
        jobs[i].opt.zero_duration_launches = true;
    }
    pthread_t th;
    bool threaded = !o->sequential && pthread_create(&th, NULL, run_side, &jobs[1]) == 0;
    run_side(&jobs[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        run_side(&jobs[1]);
    for (int i = 0; i < 2; i++)
        if (jobs[i].st) {
            if (err)
                *err = jobs[i].err;
            return jobs[i].st;
        }
    return KD_OK;
}

/* ---- warnings ----------------------------------------------------------------- */

static bool add_warning(char ***list, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool add_warning(char ***list, size_t *n, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **l = realloc(*list, (*n + 1) * sizeof *l);
    if (!l)
        return false;
    *list = l;
    l[*n] = strdup(buf);
    if (!l[*n])
        return false;
    (*n)++;
    return true;
}

/* ---- the diff's own strings ------------------------------------------------------ */

bool kd_diff_init(kd_diff *d)
{
    memset(d, 0, sizeof *d);
    d->strings = kd_interner_new();
    return d->strings != NULL;
}

const char *kd_diff_own(kd_diff *d, const char *s)
{
    kd_sid id = kd_intern_cstr(d->strings, s ? s : "");
    return id || !s || !*s ? kd_str(d->strings, id) : NULL;
}

/* ---- summaries ---------------------------------------------------------------- */

static void summarize(const kd_triage_stage *ts, double scale, kd_category gate, kd_stage_summary *s)
{
    memset(s, 0, sizeof *s);
    s->gate_category = gate;
    s->busy_us = ts->overlap.total_busy_us * scale;
    s->overlap_us = ts->overlap.total_overlap_us * scale;
    s->max_concurrent_streams = ts->overlap.max_concurrent_streams;
    for (size_t i = 0; i < ts->aggregates.n; i++) {
        const kd_aggregate *a = &ts->aggregates.v[i];
        s->launches += a->count;
        s->launches_by_category[a->category] += a->count;
        kd_time_split *c = &s->by_category[a->category];
        c->total_us += a->total_us * scale;
        c->exposed_us += a->exclusive_us * scale;
        c->hidden_us += a->hidden_us * scale;
        if (a->category == gate)
            s->comm_kernels += a->count;
    }
}

/* the gate's category: communication in a hand-built diff */
static kd_category gate_category_of(const kd_diff *d)
{
    return d->n_categories ? d->gate_category : KD_CAT_COMMUNICATION;
}

const char *kd_diff_category_name(const kd_diff *d, kd_category c)
{
    if (d->n_categories)
        return c < d->n_categories ? d->category_names[c] : "other";
    return kd_category_name(c);
}

size_t kd_diff_report_categories(const kd_diff *d, kd_category out[KD_CAT_MAX])
{
    size_t n = d->n_categories ? d->n_categories : KD_CAT_COUNT, k = 0;
    kd_category gate = gate_category_of(d);
    out[k++] = gate;
    for (size_t c = 0; c < n && k < KD_CAT_MAX; c++)
        if ((kd_category)c != gate)
            out[k++] = (kd_category)c;
    return k;
}

/* The rules in force, into the diff: their name, source and category names,
 * and the gate's category (--gate-category, else communication). */
static kd_status record_rules(const kd_diff_options *o, kd_diff *d, kd_error *err)
{
    const kd_rules *r = o->sides.load.rules ? o->sides.load.rules : kd_rules_reference();
    d->rules_name = kd_diff_own(d, r->name);
    d->rules_source = kd_diff_own(d, r->source ? r->source : "built-in");
    if (!d->rules_name || !d->rules_source)
        return kd_fail(err, KD_ENOMEM, "out of memory");
    d->n_categories = r->n_categories < KD_CAT_MAX ? r->n_categories : KD_CAT_MAX;
    for (size_t c = 0; c < d->n_categories; c++)
        if (!(d->category_names[c] = kd_diff_own(d, r->categories[c].name)))
            return kd_fail(err, KD_ENOMEM, "out of memory");
    const char *want = o->gate_category ? o->gate_category : "communication";
    int g = kd_rules_category_index(r, want);
    if (g < 0) {
        char names[512] = "";
        for (size_t c = 0; c < d->n_categories; c++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? ", " : "",
                     d->category_names[c]);
        return kd_fail(err, KD_EINPUT, "--gate-category '%s': the rules %s have no such category (%s)", want,
                       d->rules_name, names);
    }
    d->gate_category = (kd_category)g;
    return KD_OK;
}

double kd_stage_exposed_comm(const kd_stage_summary *s)
{
    return s->gate_category < KD_CAT_MAX ? s->by_category[s->gate_category].exposed_us : 0.0;
}

/* ---- matching ------------------------------------------------------------------- */

/* One side of a stage pair as the matcher sees it: each aggregate as a
 * kd_match_item (name, launches, scope, launch op, first launch). */
typedef struct {
    const kd_triage_stage *ts;
    const char **names; /* aggregate names */
    kd_match_item *items;
    /* every launch's duration and exposed time, by aggregate: aggregate i's
     * are [off[i], off[i + 1]) (zero-duration launches included) */
    double *dur, *exposed;
    size_t *off;
    /* per ProfilerStep (n_steps >= 3, else 0): the busy time, the gate
     * category's exposed time, and each aggregate's exposed time
     * (step_exposed[i * n_steps + k]) */
    size_t n_steps;
    bool steps_gpu;
    double *step_busy, *step_gate, *step_exposed;
} side_view;

static int64_t aggregate_key(kd_sid canonical, kd_category category)
{
    return (int64_t)(((uint64_t)canonical << 32) | (uint32_t)category);
}

/* Each aggregate's launches: the earliest (its first launch, for the
 * matcher) and every duration and exposed time (for the statistics), those
 * without a duration included. Two passes over the events: count, fill. */
static bool collect_launches(side_view *v)
{
    const kd_bundle *b = v->ts->formal;
    size_t na = v->ts->aggregates.n;
    kd_i64map at;
    kd_i64map_init(&at);
    v->off = calloc(na + 1, sizeof *v->off);
    v->dur = malloc((b->n + b->n_zero + 1) * sizeof *v->dur);
    v->exposed = malloc((b->n + b->n_zero + 1) * sizeof *v->exposed);
    size_t *fill = calloc(na + 1, sizeof *fill);
    bool ok = v->off && v->dur && v->exposed && fill;
    for (size_t i = 0; ok && i < na; i++) {
        v->items[i].first_ts = INFINITY;
        ok = kd_i64map_put(&at, aggregate_key(v->ts->aggregates.v[i].name, v->ts->aggregates.v[i].category),
                           (int64_t)i);
    }
    for (int round = 0; ok && round < 2; round++)
        for (int pass = 0; pass < 2; pass++) {
            const kd_kernel_event *e = pass ? b->zero : b->events;
            size_t n = pass ? b->n_zero : b->n;
            for (size_t k = 0; k < n; k++) {
                int64_t i;
                if (!kd_i64map_get(&at, aggregate_key(e[k].canonical, e[k].category), &i))
                    continue;
                if (round == 0) {
                    v->off[i + 1]++;
                    if (e[k].ts < v->items[i].first_ts)
                        v->items[i].first_ts = e[k].ts;
                    continue;
                }
                size_t slot = v->off[i] + fill[i]++;
                v->dur[slot] = e[k].dur;
                v->exposed[slot] = e[k].exclusive_us;
            }
            if (round == 0 && pass == 1)
                for (size_t i = 0; i < na; i++)
                    v->off[i + 1] += v->off[i];
        }
    free(fill);
    kd_i64map_free(&at);
    return ok;
}

static bool view_init(side_view *v, const kd_triage_stage *ts)
{
    size_t n = ts->aggregates.n ? ts->aggregates.n : 1;
    const kd_source_map *sm = &ts->sources;
    v->ts = ts;
    v->names = malloc(n * sizeof *v->names);
    v->items = calloc(n, sizeof *v->items);
    if (!v->names || !v->items)
        return false;
    for (size_t i = 0; i < ts->aggregates.n; i++) {
        const kd_aggregate *a = &ts->aggregates.v[i];
        v->names[i] = kd_str(ts->formal->trace->strings, a->name);
        const kd_source_stats *src = kd_source_map_get(sm, v->names[i]);
        const char *scope = src ? kd_source_stats_best(sm, &src->scope) : NULL;
        const char *op = src ? kd_source_stats_best(sm, &src->launch_op) : NULL;
        v->items[i] = (kd_match_item){v->names[i], a->category, a->count, a->total_us,
                                      scope ? scope : "", op ? op : "", 0.0};
    }
    return collect_launches(v);
}

static void view_free(side_view *v)
{
    free(v->names);
    free(v->items);
    free(v->dur);
    free(v->exposed);
    free(v->off);
    free(v->step_busy);
    free(v->step_gate);
    free(v->step_exposed);
}

/* ---- per ProfilerStep ------------------------------------------------------ */

#define STEPS_MIN 3

typedef struct {
    double start, end;
    int64_t step;
} step_span;

static int cmp_span(const void *pa, const void *pb)
{
    const step_span *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->step > b->step) - (a->step < b->step);
}

static int cmp_span_step(const void *pa, const void *pb)
{
    const step_span *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* The step spans of a trace, sorted: its GPU ProfilerStep annotations when
 * it has at least STEPS_MIN (they span the kernels themselves), else its
 * CPU ones; a step number once (its earliest span). 0 when fewer than
 * STEPS_MIN. n log n: sorted by step to drop repeats, then by start. */
static size_t step_spans(const kd_trace *t, step_span **out, bool *gpu)
{
    *out = NULL;
    for (int pass = 0; pass < 2; pass++) {
        *gpu = pass == 0;
        step_span *s = malloc((t->profiler_steps.n + 1) * sizeof *s);
        if (!s)
            return 0;
        size_t n = 0, k = 0;
        for (size_t i = 0; i < t->profiler_steps.n; i++) {
            const kd_step_rec *r = &t->profiler_steps.v[i];
            if (r->is_gpu == *gpu)
                s[n++] = (step_span){r->ts, r->end, r->step};
        }
        qsort(s, n, sizeof *s, cmp_span_step);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || s[i].step != s[i - 1].step)
                s[k++] = s[i];
        if (k >= STEPS_MIN) {
            qsort(s, k, sizeof *s, cmp_span);
            *out = s;
            return k;
        }
        free(s);
    }
    return 0;
}

/* The step of an event starting at ts: the last span starting at or before
 * it; a GPU span must still hold it (a CPU step's kernels run after its CPU
 * range ends, until the next step starts). -1 for none. */
static long step_of(const step_span *s, size_t n, bool gpu, double ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    size_t k = lo - 1;
    return !gpu || ts < s[k].end ? (long)k : -1;
}

typedef struct {
    double ts, end;
    long step;
} step_event;

static int cmp_step_event(const void *pa, const void *pb)
{
    const step_event *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* Each step's busy time (the union of its kernels' intervals), the gate
 * category's exposed time and every aggregate's exposed time. */
static bool collect_steps(side_view *v, kd_category gate)
{
    const kd_bundle *b = v->ts->formal;
    step_span *spans;
    size_t ns = step_spans(b->trace, &spans, &v->steps_gpu), na = v->ts->aggregates.n;
    if (!ns)
        return true;
    kd_i64map at;
    kd_i64map_init(&at);
    step_event *ev = malloc((b->n + 1) * sizeof *ev);
    v->step_busy = calloc(ns, sizeof *v->step_busy);
    v->step_gate = calloc(ns, sizeof *v->step_gate);
    v->step_exposed = calloc(ns * (na ? na : 1), sizeof *v->step_exposed);
    bool ok = ev && v->step_busy && v->step_gate && v->step_exposed;
    for (size_t i = 0; ok && i < na; i++)
        ok = kd_i64map_put(&at, aggregate_key(v->ts->aggregates.v[i].name, v->ts->aggregates.v[i].category),
                           (int64_t)i);
    size_t ne = 0;
    for (size_t k = 0; ok && k < b->n; k++) {
        const kd_kernel_event *e = &b->events[k];
        long s = step_of(spans, ns, v->steps_gpu, e->ts);
        int64_t i;
        if (s < 0)
            continue;
        ev[ne++] = (step_event){e->ts, e->end, s};
        if (e->category == gate)
            v->step_gate[s] += e->exclusive_us;
        if (kd_i64map_get(&at, aggregate_key(e->canonical, e->category), &i))
            v->step_exposed[(size_t)i * ns + (size_t)s] += e->exclusive_us;
    }
    if (ok) {
        qsort(ev, ne, sizeof *ev, cmp_step_event);
        for (size_t k = 0; k < ne;) {
            long s = ev[k].step;
            double lo = ev[k].ts, hi = ev[k].end;
            for (k++; k < ne && ev[k].step == s; k++) {
                if (ev[k].ts > hi) {
                    v->step_busy[s] += hi - lo;
                    lo = ev[k].ts;
                }
                if (ev[k].end > hi)
                    hi = ev[k].end;
            }
            v->step_busy[s] += hi - lo;
        }
        v->n_steps = ns;
    }
    kd_i64map_free(&at);
    free(ev);
    free(spans);
    return ok;
}

/* The mean of v[0..n) and the 95 % half-width of that mean (Student's t). */
static double mean_ci(const double *v, size_t n, size_t stride, double *mean)
{
    double sum = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i * stride];
    *mean = n ? sum / (double)n : NAN;
    if (n < 2)
        return NAN;
    for (size_t i = 0; i < n; i++)
        ss += (v[i * stride] - *mean) * (v[i * stride] - *mean);
    return kd_t_quantile(0.975, (double)(n - 1)) * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

/* Welch's interval of the difference of two means (c - b), 95 %. */
static void welch(const double *b, size_t nb, const double *c, size_t nc, double *diff, double *lo, double *hi)
{
    double mb, mc, vb = 0.0, vc = 0.0;
    mean_ci(b, nb, 1, &mb);
    mean_ci(c, nc, 1, &mc);
    for (size_t i = 0; i < nb; i++)
        vb += (b[i] - mb) * (b[i] - mb);
    for (size_t i = 0; i < nc; i++)
        vc += (c[i] - mc) * (c[i] - mc);
    vb /= (double)(nb - 1);
    vc /= (double)(nc - 1);
    double se2 = vb / (double)nb + vc / (double)nc;
    double df = se2 > 0.0 ? se2 * se2 / ((vb / (double)nb) * (vb / (double)nb) / (double)(nb - 1) +
                                         (vc / (double)nc) * (vc / (double)nc) / (double)(nc - 1))
                          : (double)(nb + nc - 2);
    double half = kd_t_quantile(0.975, df < 1.0 ? 1.0 : df) * sqrt(se2);
    *diff = mc - mb;
    *lo = *diff - half;
    *hi = *diff + half;
}

/* the baseline's source-map entry supplies the scope / launch-op text of
 * the relaxed lookup's alias step */
static char *baseline_alias_text(void *ctx, size_t i)
{
    const side_view *b = ctx;
    const kd_source_map *sm = &b->ts->sources;
    return kd_source_stats_alias_text(sm, b->names[i], kd_source_map_get(sm, b->names[i]));
}

static int baseline_alias_bonus(void *ctx, size_t i)
{
    const side_view *b = ctx;
    const kd_source_map *sm = &b->ts->sources;
    return kd_source_stats_alias_bonus(sm, kd_source_map_get(sm, b->names[i]));
}

/* ---- rows ------------------------------------------------------------------------ */

/* The kernel's action row on that side, if it clears the render bar: rows the
 * triage table would not show do not make a priority change either. */
static const kd_action_row *action_row_of(const kd_triage_stage *ts, size_t agg, double min_share)
{
    for (size_t i = 0; i < ts->rows.n; i++)
        if (ts->rows.v[i].aggregate == agg && ts->rows.v[i].share_pct >= min_share)
            return &ts->rows.v[i];
    return NULL;
}

/* One side of a row, every string copied into the diff's arena. false when
 * out of memory. */
static bool fill_side(kd_diff *d, const side_view *v, size_t i, double scale, double min_share,
                      kd_diff_side *s)
{
    const kd_aggregate *a = &v->ts->aggregates.v[i];
    const kd_action_row *r = action_row_of(v->ts, i, min_share);
    double busy = v->ts->overlap.total_busy_us;
    const kd_source_stats *src = kd_source_map_get(&v->ts->sources, v->names[i]);
    const char *scope = src ? kd_source_stats_best(&v->ts->sources, &src->scope) : NULL;
    *s = (kd_diff_side){
        .present = true,
        .name = kd_diff_own(d, v->names[i]),
        .category = a->category,
        .category_name = kd_diff_category_name(d, a->category),
        .launches = a->count,
        .total_us = a->total_us * scale,
        .exposed_us = a->exclusive_us * scale,
        .hidden_us = a->hidden_us * scale,
        .hidden_by_compute_us = a->hidden_by_compute_us * scale,
        .share_pct = busy > 0 ? a->total_us / busy * 100.0 : 0.0,
        .exposed_ratio = kd_aggregate_exclusive_ratio(a),
        .hidden_ratio = kd_aggregate_hidden_ratio(a),
        .priority = r ? kd_diff_own(d, r->priority) : NULL,
        .verdict = r ? kd_diff_own(d, r->verdict) : NULL,
        .recommendation = r ? kd_diff_own(d, r->recommendation) : NULL,
        .dependency_risk = r ? kd_diff_own(d, kd_dependency_risk_label(r->dependency_signal)) : NULL,
        .python_scope = kd_diff_own(d, r ? r->python_scope : scope ? scope : ""),
    };
    return s->name && s->python_scope && (!r || (s->priority && s->verdict && s->recommendation &&
                                                 s->dependency_risk));
}

static double rel_pct(double d, double base) { return base != 0.0 ? d / base * 100.0 : NAN; }

void kd_diff_row_finish(kd_diff_row *r, kd_match_kind match)
{
    r->match = match;
    if (!r->evidence)
        r->evidence = "";
    r->name = r->cand.present ? r->cand.name : r->base.name;
    r->category = r->cand.present ? r->cand.category : r->base.category;
    r->category_name = r->cand.present ? r->cand.category_name : r->base.category_name;
    if (!r->category_name)
        r->category_name = kd_category_name(r->category);
    r->d_total_us = r->cand.total_us - r->base.total_us;
    r->d_exposed_us = r->cand.exposed_us - r->base.exposed_us;
    r->d_hidden_us = r->cand.hidden_us - r->base.hidden_us;
    r->pct_total = rel_pct(r->d_total_us, r->base.total_us);
    r->pct_exposed = rel_pct(r->d_exposed_us, r->base.exposed_us);
    r->pct_hidden = rel_pct(r->d_hidden_us, r->base.hidden_us);
    const char *bp = r->base.priority, *cp = r->cand.priority;
    if ((!bp && !cp) || (bp && cp && strcmp(bp, cp) == 0))
        snprintf(r->priority_change, sizeof r->priority_change, "=");
    else if (!bp)
        snprintf(r->priority_change, sizeof r->priority_change, "new %s", cp);
    else
        snprintf(r->priority_change, sizeof r->priority_change, "%s->%s", bp, cp ? cp : "none");
}

static int cmp_rows(const void *pa, const void *pb)
{
    const kd_diff_row *a = pa, *b = pb;
    double x = fabs(a->d_exposed_us), y = fabs(b->d_exposed_us);
    if (x != y)
        return x > y ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return (a->category > b->category) - (a->category < b->category);
}

/* ---- statistics (stats.h) ----------------------------------------------------- */

/* Aggregate i's per-launch durations and exposed times: their summaries
 * (the durations are left sorted). */
static void side_distributions(const side_view *v, size_t i, kd_diff_side *s)
{
    size_t from = v->off[i], n = v->off[i + 1] - from;
    kd_dist_of(v->dur + from, n, &s->dur);
    kd_dist_of(v->exposed + from, n, &s->exposed);
}

/* A row's per-launch test: the durations of the two kernels, when both
 * sides have enough launches. */
static bool row_statistics(kd_diff_row *r, const side_view *b, long bi, const side_view *c, long ci)
{
    r->p_value = r->q_value = r->shift_us = r->shift_lo_us = r->shift_hi_us = NAN;
    r->base.step_exposed_mean = r->base.step_exposed_ci = NAN;
    r->cand.step_exposed_mean = r->cand.step_exposed_ci = NAN;
    bool steps = b->n_steps && c->n_steps;
    if (bi >= 0) {
        side_distributions(b, (size_t)bi, &r->base);
        if (steps)
            r->base.step_exposed_ci = mean_ci(b->step_exposed + (size_t)bi * b->n_steps, b->n_steps, 1,
                                              &r->base.step_exposed_mean);
    }
    if (ci >= 0) {
        side_distributions(c, (size_t)ci, &r->cand);
        if (steps)
            r->cand.step_exposed_ci = mean_ci(c->step_exposed + (size_t)ci * c->n_steps, c->n_steps, 1,
                                              &r->cand.step_exposed_mean);
    }
    if (bi < 0 || ci < 0 || r->base.dur.n < KD_STATS_MIN_LAUNCHES || r->cand.dur.n < KD_STATS_MIN_LAUNCHES)
        return true;
    const double *x = b->dur + b->off[bi], *y = c->dur + c->off[ci];
    kd_mwu t = kd_mann_whitney(x, r->base.dur.n, y, r->cand.dur.n);
    kd_hl h;
    if (!kd_hodges_lehmann(x, r->base.dur.n, y, r->cand.dur.n, 0.95, &h))
        return false;
    r->p_value = t.p;
    r->shift_us = h.shift;
    r->shift_lo_us = h.lo;
    r->shift_hi_us = h.hi;
    return true;
}

/* Benjamini–Hochberg over the stage's tested rows, then each row's change:
 * a per-call change is a discovery whose shift is at least the minimum
 * effect; a count change, launches that moved by more than the minimum
 * effect's share (at least one); a kernel added, removed, replaced or paired
 * by a rule is changed by what it is. */
static bool classify_changes(const kd_diff *d, kd_diff_stage *ds)
{
    size_t n = ds->n_rows, k = 0;
    double *p = malloc((n ? n : 1) * sizeof *p), *q = malloc((n ? n : 1) * sizeof *q);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    bool *reject = malloc((n ? n : 1) * sizeof *reject);
    bool ok = p && q && at && reject;
    for (size_t i = 0; ok && i < n; i++)
        if (!isnan(ds->rows[i].p_value)) {
            at[k] = i;
            p[k++] = ds->rows[i].p_value;
        }
    ok = ok && kd_benjamini_hochberg(p, k, d->fdr, reject, q);
    bool *discovery = ok ? calloc(n ? n : 1, sizeof *discovery) : NULL;
    ok = ok && discovery;
    for (size_t j = 0; ok && j < k; j++) {
        ds->rows[at[j]].q_value = q[j];
        discovery[at[j]] = reject[j];
    }
    ds->n_changed = ds->n_noise = ds->n_na = 0;
    ds->noise_max_pct = 0.0;
    for (size_t i = 0; ok && i < n; i++) {
        kd_diff_row *r = &ds->rows[i];
        bool one_sided = !r->base.present || !r->cand.present;
        bool by_kind = r->match == KD_MATCH_REPLACED || r->match == KD_MATCH_RULE;
        bool tested = !isnan(r->p_value);
        double floor_us = fmax(d->min_effect_pct / 100.0 * r->base.dur.median, d->min_effect_us);
        bool per_call = tested && discovery[i] && fabs(r->shift_us) >= floor_us;
        double lb = (double)r->base.launches, lc = (double)r->cand.launches;
        bool count = !one_sided && fabs(lc - lb) >= fmax(1.0, d->min_effect_pct / 100.0 * lb);
        r->change_kind = per_call && count ? "per call and count" : per_call ? "per call" : count ? "count" : "";
        if (one_sided || by_kind || per_call || count)
            r->change = "changed";
        else
            r->change = tested ? "noise" : "n/a";
        if (r->change[0] == 'c')
            ds->n_changed++;
        else if (r->change[0] == 'n' && r->change[1] == 'o') {
            ds->n_noise++;
            if (!isnan(r->pct_total) && fabs(r->pct_total) > ds->noise_max_pct)
                ds->noise_max_pct = fabs(r->pct_total);
        } else {
            ds->n_na++;
        }
    }
    free(p);
    free(q);
    free(at);
    free(reject);
    free(discovery);
    return ok;
}

/* The gate's evidence: every launch of the gate's category, its exposed
 * time, pooled over the kernels of each side and tested. */
static bool gate_evidence(const kd_diff *d, const side_view *b, const side_view *c, kd_gate_evidence *out)
{
    memset(out, 0, sizeof *out);
    const side_view *v[2] = {b, c};
    double *pool[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    bool ok = true;
    for (int s = 0; ok && s < 2; s++) {
        const kd_aggregate_list *al = &v[s]->ts->aggregates;
        pool[s] = malloc((v[s]->off[al->n] + 1) * sizeof *pool[s]);
        ok = pool[s] != NULL;
        for (size_t i = 0; ok && i < al->n; i++)
            if (al->v[i].category == d->gate_category)
                for (size_t k = v[s]->off[i]; k < v[s]->off[i + 1]; k++)
                    pool[s][n[s]++] = v[s]->exposed[k];
    }
    if (ok && n[0] >= KD_STATS_MIN_LAUNCHES && n[1] >= KD_STATS_MIN_LAUNCHES) {
        kd_dist unused;
        kd_dist_of(pool[0], n[0], &unused);
        kd_dist_of(pool[1], n[1], &unused);
        kd_mwu t = kd_mann_whitney(pool[0], n[0], pool[1], n[1]);
        kd_hl h;
        ok = kd_hodges_lehmann(pool[0], n[0], pool[1], n[1], 0.95, &h);
        if (ok)
            *out = (kd_gate_evidence){true, t.p, h.shift, h.lo, h.hi, false, NAN, NAN, NAN};
    }
    free(pool[0]);
    free(pool[1]);
    return ok;
}

/* The stage summaries' per-step figures and the gate's per-step evidence,
 * when both sides have steps. */
static void step_summaries(kd_diff_stage *ds, const side_view *b, const side_view *c)
{
    kd_stage_summary *s[2] = {&ds->sum_base, &ds->sum_cand};
    const side_view *v[2] = {b, c};
    bool steps = b->n_steps && c->n_steps;
    for (int i = 0; i < 2; i++) {
        s[i]->steps = steps ? v[i]->n_steps : 0;
        s[i]->step_busy_mean = s[i]->step_busy_ci = s[i]->step_gate_mean = s[i]->step_gate_ci = NAN;
        if (steps) {
            s[i]->step_busy_ci = mean_ci(v[i]->step_busy, v[i]->n_steps, 1, &s[i]->step_busy_mean);
            s[i]->step_gate_ci = mean_ci(v[i]->step_gate, v[i]->n_steps, 1, &s[i]->step_gate_mean);
        }
    }
    kd_gate_evidence *e = &ds->gate_evidence;
    e->step_tested = steps;
    e->step_diff_us = e->step_lo_us = e->step_hi_us = NAN;
    if (steps)
        welch(b->step_gate, b->n_steps, c->step_gate, c->n_steps, &e->step_diff_us, &e->step_lo_us,
              &e->step_hi_us);
}

static bool build_rows(kd_diff *d, kd_diff_stage *ds, const side_view *b, const side_view *c,
                       const kd_matching *m, double sb, double sc, double min_share)
{
    size_t nb = b->ts->aggregates.n, nc = c->ts->aggregates.n, n = 0;
    ds->rows = calloc(nb + nc + 1, sizeof *ds->rows);
    bool ok = ds->rows != NULL;
    for (size_t i = 0; ok && i < nc; i++) {
        kd_diff_row *r = &ds->rows[n++];
        ok = fill_side(d, c, i, sc, min_share, &r->cand) &&
             (m->base_of[i] < 0 || fill_side(d, b, (size_t)m->base_of[i], sb, min_share, &r->base));
        r->evidence = kd_diff_own(d, m->evidence[i] ? m->evidence[i] : "");
        ok = ok && r->evidence && row_statistics(r, b, m->base_of[i], c, (long)i);
        kd_diff_row_finish(r, m->kind[i]);
    }
    for (size_t i = 0; ok && i < nb; i++) {
        if (m->cand_of[i] >= 0)
            continue;
        kd_diff_row *r = &ds->rows[n++];
        ok = fill_side(d, b, i, sb, min_share, &r->base) && row_statistics(r, b, (long)i, c, -1);
        kd_diff_row_finish(r, KD_MATCH_NONE);
    }
    ds->n_rows = n;
    if (ok)
        qsort(ds->rows, n, sizeof *ds->rows, cmp_rows);
    return ok && classify_changes(d, ds);
}

const char *kd_diff_row_kind(const kd_diff_row *r)
{
    if (!r->base.present)
        return "added";
    if (!r->cand.present)
        return "removed";
    return kd_match_kind_name(r->match);
}

/* The triage stages a diff stage compares (both non-NULL). */
typedef struct {
    const kd_triage_stage *base, *cand;
} stage_pair;

static bool diff_stage(kd_diff *d, kd_diff_stage *ds, const stage_pair *p, const kd_diff_options *opt)
{
    side_view b, c;
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    bool ok = view_init(&b, p->base) && view_init(&c, p->cand) && collect_steps(&b, d->gate_category) &&
              collect_steps(&c, d->gate_category);
    size_t nc = p->cand->aggregates.n;
    kd_matching m;
    kd_alias_scorer alias = {baseline_alias_text, baseline_alias_bonus, &b};
    kd_match_options mo = {opt->match_rules, opt->n_match_rules, &alias};
    ok = ok && kd_match_kernels(b.items, p->base->aggregates.n, c.items, nc, &mo, &m, NULL) == KD_OK;
    if (ok) {
        ok = build_rows(d, ds, &b, &c, &m, d->scale_base, d->scale_cand, opt->sides.min_share);
        kd_matching_free(&m, nc);
    }
    summarize(p->base, d->scale_base, d->gate_category, &ds->sum_base);
    summarize(p->cand, d->scale_cand, d->gate_category, &ds->sum_cand);
    ok = ok && gate_evidence(d, &b, &c, &ds->gate_evidence);
    if (ok)
        step_summaries(ds, &b, &c);
    view_free(&b);
    view_free(&c);
    return ok;
}

/* ---- stage pairing ----------------------------------------------------------------- */

/* The side's analysed stage of the same name. Stages pair exactly, not by
 * the reference's pick_stage_value: every single-trace side has the
 * whole-trace stage all, and pairing one side's extend with the other's
 * whole trace would compare different kernel sets (divergence D7). */
static const kd_triage_stage *pick_stage(const kd_triage *t, kd_stage stage)
{
    for (size_t i = 0; i < t->n_stages; i++)
        if (t->stages[i].formal && t->stages[i].stage == stage)
            return &t->stages[i];
    return NULL;
}

/* The pid a stage analysed, in the diff's arena. */
static const char *stage_pid(kd_diff *d, const kd_triage_stage *ts)
{
    return kd_diff_own(d, ts->formal->pid ? kd_str(ts->formal->trace->strings, ts->formal->pid) : "");
}

static bool pair_stages(kd_diff *d, const diff_sources *src, stage_pair *pairs)
{
    bool ok = true;
    for (size_t i = 0; ok && i < src->cand.n_stages; i++) {
        const kd_triage_stage *c = &src->cand.stages[i];
        if (!c->formal)
            continue;
        const kd_triage_stage *b = pick_stage(&src->base, c->stage);
        if (!b) {
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "stage %s is only in the candidate: not compared",
                             kd_stage_display_name(c->stage));
            continue;
        }
        pairs[d->n_stages] = (stage_pair){b, c};
        kd_diff_stage *ds = &d->stages[d->n_stages++];
        memset(ds, 0, sizeof *ds);
        ds->stage = c->stage;
        ds->base_pid = stage_pid(d, b);
        ds->cand_pid = stage_pid(d, c);
        ok = ds->base_pid && ds->cand_pid;
    }
    for (size_t i = 0; ok && i < src->base.n_stages; i++) {
        const kd_triage_stage *b = &src->base.stages[i];
        if (b->formal && !pick_stage(&src->cand, b->stage))
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "stage %s is only in the baseline: not compared",
                             kd_stage_display_name(b->stage));
    }
    return ok;
}

static double side_steps(const kd_triage *t)
{
    uint64_t cpu = kd_side_profiler_steps(&t->formal, false);
    return (double)(cpu ? cpu : kd_side_profiler_steps(&t->formal, true));
}

/* One file a side read: its stages' source, rank, world size, device. */
static bool record_file(kd_diff *d, const kd_side *side, size_t i, kd_diff_file *f)
{
    const kd_trace *t = side->traces[i];
    const kd_trace_file *tf = &side->files.files[i];
    const kd_bundle_map *m = &side->bundles;
    const char *pid = "";
    for (int s = 0; s < KD_STAGE_COUNT && !*pid; s++)
        if (m->has[s] && m->by_stage[s].trace == t && m->by_stage[s].pid)
            pid = kd_str(t->strings, m->by_stage[s].pid);
    f->path = kd_diff_own(d, tf->path);
    f->stages_from = side->stages_from[i];
    f->rank = t->has_rank ? (long)t->rank : tf->rank;
    f->rank_from = t->has_rank ? "distributedInfo" : tf->rank >= 0 && tf->rank_from ? tf->rank_from : "";
    f->world_size = t->has_world_size ? (long)t->world_size : -1;
    f->device = kd_diff_own(d, kd_trace_device(t, pid));
    return f->path && f->device;
}

/* "extend/prefill, decode, all": the stages a side analysed. */
static const char *stage_list(kd_diff *d, const kd_triage *t)
{
    char buf[64] = "";
    for (size_t i = 0; i < t->n_stages; i++)
        if (t->stages[i].formal)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", *buf ? ", " : "",
                     kd_stage_display_name(t->stages[i].stage));
    return kd_diff_own(d, *buf ? buf : "none");
}

/* What a side read, in the diff's arena. */
static bool record_input(kd_diff *d, kd_diff_input *in, const char *path, const char *mapping,
                         const kd_triage *t)
{
    const kd_side *side = &t->formal;
    in->path = kd_diff_own(d, path);
    in->mapping = mapping ? kd_diff_own(d, mapping) : NULL;
    in->steps = side_steps(t);
    in->stages_how = side->stages_how;
    step_span *spans = NULL;
    bool gpu = false;
    in->steps_from = side->n && step_spans(side->traces[0], &spans, &gpu) ? (gpu ? "gpu annotations" : "cpu annotations")
                                                                           : "";
    free(spans);
    in->stages = stage_list(d, t);
    in->acc = side->bundles.acc;
    in->files = calloc(side->n ? side->n : 1, sizeof *in->files);
    if (!in->path || (mapping && !in->mapping) || !in->files || !in->stages)
        return false;
    for (size_t i = 0; i < side->n; i++)
        if (!record_file(d, side, i, &in->files[in->n_files++]))
            return false;
    return true;
}

static kd_status set_scales(const kd_diff_options *o, kd_diff *d, kd_error *err)
{
    d->steps_base = d->base_in.steps;
    d->steps_cand = d->cand_in.steps;
    d->scale_base = d->scale_cand = 1.0;
    if (o->normalize_steps) {
        if (!d->steps_base || !d->steps_cand)
            return kd_fail(err, KD_EINPUT, "%s: --normalize steps: no ProfilerStep#N annotations in the trace",
                           !d->steps_base ? o->baseline_path : o->candidate_path);
        d->scale_base = 1.0 / d->steps_base;
        d->scale_cand = 1.0 / d->steps_cand;
        d->normalized = true;
    } else if (d->steps_base != d->steps_cand &&
               !add_warning(&d->warnings, &d->n_warnings,
                            "the sides have different ProfilerStep counts (baseline %.0f, candidate %.0f) "
                            "and --normalize is off: totals are not per step",
                            d->steps_base, d->steps_cand)) {
        return kd_fail(err, KD_ENOMEM, "out of memory");
    }
    return KD_OK;
}

/* Every fact a reader must not miss about what was compared: how each
 * side's stages were decided, kernels outside every stage, the same trace
 * on both sides, different devices or world sizes (divergence D7). */
static bool warn_inputs(kd_diff *d)
{
    const kd_diff_input *in[2] = {&d->base_in, &d->cand_in};
    const char *side[2] = {"baseline", "candidate"};
    bool ok = true;
    if (strcmp(in[0]->stages_how, in[1]->stages_how) != 0)
        ok = add_warning(&d->warnings, &d->n_warnings,
                         "the sides' stages were decided differently (baseline: %s, candidate: %s): "
                         "a stage may not hold the same work on both sides; the whole-trace stage "
                         "all, where both sides have it, compares every kernel",
                         in[0]->stages_how, in[1]->stages_how);
    for (int i = 0; ok && i < 2; i++) {
        const kd_kernel_accounting *a = &in[i]->acc;
        if (a->outside)
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "%s: %llu of %llu kernels (%.1f us) are outside every stage annotation: "
                             "only the whole-trace stage all holds them",
                             side[i], (unsigned long long)a->outside, (unsigned long long)a->read,
                             a->outside_us);
        if (ok && a->unclaimed)
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "%s: %llu kernels (%.1f us) are in a stage an earlier file of the side "
                             "already holds: not compared",
                             side[i], (unsigned long long)a->unclaimed, a->unclaimed_us);
        if (ok && kd_accounting_skipped(a))
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "%s: %llu malformed kernel events skipped (see the accounting)", side[i],
                             (unsigned long long)kd_accounting_skipped(a));
    }
    if (ok && d->identical)
        ok = add_warning(&d->warnings, &d->n_warnings,
                         "baseline and candidate are %s: every difference is zero by construction",
                         d->identical);
    if (ok && in[0]->n_files && in[1]->n_files) {
        const kd_diff_file *b = &in[0]->files[0], *c = &in[1]->files[0];
        if (*b->device && *c->device && strcmp(b->device, c->device) != 0)
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "different devices: baseline %s, candidate %s", b->device, c->device);
        if (ok && b->world_size >= 0 && c->world_size >= 0 && b->world_size != c->world_size)
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "different world sizes: baseline %ld ranks, candidate %ld", b->world_size,
                             c->world_size);
    }
    return ok;
}

/* Whether some compared stage has a communication kernel on either side. */
static bool comm_measured(const kd_diff *d)
{
    for (size_t i = 0; i < d->n_stages; i++)
        if (d->stages[i].sum_base.comm_kernels || d->stages[i].sum_cand.comm_kernels)
            return true;
    return false;
}

/* "baseline compute 812, memory 40; candidate compute 790": the kernels
 * each side launched by category over the compared stages (the
 * whole-trace stage alone when it is compared: the stages overlap). */
static void categories_seen(const kd_diff *d, char *buf, size_t n)
{
    uint64_t count[2][KD_CAT_MAX] = {{0}};
    size_t ncat = d->n_categories ? d->n_categories : KD_CAT_COUNT;
    bool whole = false;
    for (size_t i = 0; i < d->n_stages; i++)
        whole = whole || d->stages[i].stage == KD_STAGE_ALL;
    for (size_t i = 0; i < d->n_stages; i++)
        for (size_t c = 0; c < ncat && (!whole || d->stages[i].stage == KD_STAGE_ALL); c++) {
            count[0][c] += d->stages[i].sum_base.launches_by_category[c];
            count[1][c] += d->stages[i].sum_cand.launches_by_category[c];
        }
    buf[0] = '\0';
    for (int side = 0; side < 2; side++) {
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", side ? "; candidate" : "baseline",
                 "");
        bool any = false;
        for (size_t c = 0; c < ncat; c++)
            if (count[side][c]) {
                snprintf(buf + strlen(buf), n - strlen(buf), "%s %s %llu", any ? "," : "",
                         kd_diff_category_name(d, (kd_category)c), (unsigned long long)count[side][c]);
                any = true;
            }
        if (!any)
            snprintf(buf + strlen(buf), n - strlen(buf), " none");
    }
}

/* Why a gate could judge nothing, "" when it can (product.md §4: the gate
 * never says PASS about what it did not measure). */
static void unjudged_reason(const kd_diff *d, char *buf, size_t n)
{
    char cats[256];
    buf[0] = '\0';
    if (!d->n_stages) {
        snprintf(buf, n, "nothing to compare: no stage in common (baseline: %s; candidate: %s)",
                 d->base_in.stages, d->cand_in.stages);
    } else if (d->identical && !d->allow_identical) {
        snprintf(buf, n,
                 "baseline and candidate are %s: a gate on a trace against itself proves nothing "
                 "(--allow-identical to run it anyway)",
                 d->identical);
    } else if (!comm_measured(d)) {
        categories_seen(d, cats, sizeof cats);
        const char *g = kd_diff_category_name(d, gate_category_of(d));
        snprintf(buf, n,
                 "the exposed-%s gate has nothing to measure: no %s kernel on either side (kernels "
                 "seen: %s)",
                 g, g, cats);
    }
}

/* Without a gate, what a gate could not judge is a warning in every output. */
static bool warn_unjudged(kd_diff *d)
{
    if (!d->n_stages)
        return add_warning(&d->warnings, &d->n_warnings,
                           "nothing to compare: no stage in common (baseline: %s; candidate: %s)",
                           d->base_in.stages, d->cand_in.stages);
    if (!comm_measured(d)) {
        char cats[256];
        categories_seen(d, cats, sizeof cats);
        const char *g = kd_diff_category_name(d, gate_category_of(d));
        return add_warning(&d->warnings, &d->n_warnings,
                           "no %s kernel on either side: exposed %s is not measured (kernels seen: %s)",
                           g, g, cats);
    }
    return true;
}

/* product.md §4: zero communication kernels on one side is reported loudly */
static bool warn_missing_comm(kd_diff *d)
{
    bool ok = true;
    for (size_t i = 0; ok && i < d->n_stages; i++) {
        const kd_diff_stage *s = &d->stages[i];
        if (!s->sum_base.comm_kernels != !s->sum_cand.comm_kernels)
            ok = add_warning(&d->warnings, &d->n_warnings,
                             "stage %s: the %s has no %s kernels while the %s has %llu: "
                             "likely a classification or capture problem; the %s gate "
                             "cannot be trusted",
                             kd_stage_display_name(s->stage), 
                             s->sum_base.comm_kernels ? "candidate" : "baseline",
                             kd_diff_category_name(d, gate_category_of(d)),
                             s->sum_base.comm_kernels ? "baseline" : "candidate",
                             (unsigned long long)(s->sum_base.comm_kernels + s->sum_cand.comm_kernels),
                             kd_diff_category_name(d, gate_category_of(d)));
    }
    return ok;
}

kd_status kd_diff_run(const kd_diff_options *opt, kd_diff *out, kd_error *err)
{
    diff_sources src;
    stage_pair pairs[KD_STAGE_COUNT];
    memset(&src, 0, sizeof src);
    if (!kd_diff_init(out))
        return kd_fail(err, KD_ENOMEM, "out of memory");
    out->fdr = opt->fdr > 0.0 ? opt->fdr : 0.01;
    bool effect_set = opt->min_effect_pct != 0.0 || opt->min_effect_us != 0.0;
    out->min_effect_pct = effect_set ? opt->min_effect_pct : 2.0;
    out->min_effect_us = effect_set ? opt->min_effect_us : 1.0;
    out->gate_significance = opt->gate_significance;
    kd_status st = record_rules(opt, out, err);
    if (!st)
        st = run_sides(opt, &src, err);
    if (!st && (!record_input(out, &out->base_in, opt->baseline_path, opt->baseline_mapping, &src.base) ||
                !record_input(out, &out->cand_in, opt->candidate_path, opt->candidate_mapping, &src.cand)))
        st = kd_fail(err, KD_ENOMEM, "out of memory");
    if (!st) {
        out->identical = kd_trace_sets_identical(&src.base.formal.files, &src.cand.formal.files);
        out->allow_identical = opt->allow_identical;
    }
    if (!st && !warn_inputs(out))
        st = kd_fail(err, KD_ENOMEM, "out of memory");
    if (!st)
        st = set_scales(opt, out, err);
    if (!st && !pair_stages(out, &src, pairs))
        st = kd_fail(err, KD_ENOMEM, "out of memory");
    for (size_t i = 0; !st && i < out->n_stages; i++)
        if (!diff_stage(out, &out->stages[i], &pairs[i], opt))
            st = kd_fail(err, KD_ENOMEM, "out of memory matching kernels");
    if (!st && (!warn_missing_comm(out) || !warn_unjudged(out)))
        st = kd_fail(err, KD_ENOMEM, "out of memory");
    /* the result holds its own copies: the traces go now, before any report */
    kd_triage_free(&src.base);
    kd_triage_free(&src.cand);
    if (st)
        kd_diff_free(out);
    return st;
}

void kd_diff_free(kd_diff *d)
{
    for (size_t i = 0; i < d->n_stages; i++)
        free(d->stages[i].rows);
    for (size_t i = 0; i < d->n_warnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    free(d->base_in.files);
    free(d->cand_in.files);
    kd_interner_free(d->strings);
    memset(d, 0, sizeof *d);
}

/* ---- gate --------------------------------------------------------------------------- */

/* The length of the time unit at p (us, the micro sign s, ms, s) and its factor to
 * microseconds; 0 when p starts no unit. */
static size_t time_unit(const char *p, double *scale)
{
    static const struct {
        const char *unit;
        double us;
    } units[] = {{"us", 1.0}, {"\u00b5s", 1.0}, {"ms", 1e3}, {"s", 1e6}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].unit);
        if (strncmp(p, units[i].unit, n) == 0) {
            *scale = units[i].us;
            return n;
        }
    }
    return 0;
}

bool kd_gate_parse(const char *s, kd_gate *out, char *msg, size_t msgsz)
{
    size_t unit;
    double scale;
    memset(out, 0, sizeof *out);
    out->rel_pct = -1.0;
    const char *p = s;
    bool have_rel = false, have_abs = false;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v) || v < 0)
            goto bad;
        if (*end == '%' && !have_rel && !have_abs) {
            out->rel_pct = v;
            have_rel = true;
            end++;
        } else if ((unit = time_unit(end, &scale)) > 0 && !have_abs) {
            out->abs_us = v * scale;
            have_abs = true;
            end += unit;
        } else {
            goto bad;
        }
        if (*end == ',' && end[1] && have_rel && !have_abs)
            end++;
        else if (*end)
            goto bad;
        p = end;
    }
    if (!have_rel && !have_abs)
        goto bad;
    out->set = true;
    return true;
bad:
    snprintf(msg, msgsz, "bad threshold '%s': expected REL%%, ABS or REL%%,ABS with ABS in us, ms or s (e.g. 5%%, 200us, 5%%,1.5ms)", s);
    return false;
}

/* "more than REL percent and more than ABS microseconds" (product.md §4) */
static bool exceeds(const kd_gate *g, double base, double cand)
{
    double inc = cand - base;
    if (!g->set || inc <= 0 || inc <= g->abs_us)
        return false;
    if (g->rel_pct < 0)
        return true;
    return base > 0 ? inc / base * 100.0 > g->rel_pct : true;
}

/* the unit of the gate's times: per step under --normalize steps (the
 * absolute threshold is then compared with per-step times too) */
static const char *gate_unit(const kd_diff *d) { return d->normalized ? "us/step" : "us"; }

static void describe_gate(const kd_diff *d, const kd_gate *g, char *buf, size_t n)
{
    if (g->rel_pct >= 0 && g->abs_us > 0)
        snprintf(buf, n, "%g%% and %g %s", g->rel_pct, g->abs_us, gate_unit(d));
    else if (g->rel_pct >= 0)
        snprintf(buf, n, "%g%%", g->rel_pct);
    else
        snprintf(buf, n, "%g %s", g->abs_us, gate_unit(d));
}

static void describe_change(const kd_diff *d, const kd_diff_stage *s, char *buf, size_t n)
{
    double b = kd_stage_exposed_comm(&s->sum_base), c = kd_stage_exposed_comm(&s->sum_cand);
    double pct = rel_pct(c - b, b);
    const char *u = gate_unit(d), *stage = kd_stage_display_name(s->stage);
    if (c == b)
        snprintf(buf, n, "%s %.1f %s (unchanged)", stage, b, u);
    else if (isnan(pct))
        snprintf(buf, n, "%s %.1f -> %.1f %s (%+.1f %s)", stage, b, c, u, c - b, u);
    else
        snprintf(buf, n, "%s %.1f -> %.1f %s (%+.1f %s, %+.1f%%)", stage, b, c, u, c - b, u, pct);
    /* the evidence: the per-launch exposed time's shift and its interval */
    const kd_gate_evidence *e = &s->gate_evidence;
    if (e->step_tested && c != b)
        snprintf(buf + strlen(buf), n - strlen(buf), " [per step %+.1f us, 95%% CI %+.1f..%+.1f]",
                 e->step_diff_us, e->step_lo_us, e->step_hi_us);
    if (e->tested && c != b)
        snprintf(buf + strlen(buf), n - strlen(buf), " [per launch %+.1f us, 95%% CI %+.1f..%+.1f, p %.2g]",
                 e->shift_us, e->lo_us, e->hi_us, e->p_value);
}

/* --gate-significance: the stage's per-launch evidence does not show a
 * growth (not significant at the FDR, or an interval reaching zero) */
static bool within_noise(const kd_diff *d, const kd_diff_stage *s)
{
    const kd_gate_evidence *e = &s->gate_evidence;
    if (!d->gate_significance)
        return false;
    /* the per-step totals are the gate's own quantity: they decide when
     * there are steps; else the per-launch test */
    if (e->step_tested)
        return e->step_lo_us <= 0.0;
    return e->tested && (e->p_value >= d->fdr || e->lo_us <= 0.0);
}

void kd_diff_gate(const kd_diff *d, const kd_gate *fail, const kd_gate *warn, kd_gate_result *out)
{
    memset(out, 0, sizeof *out);
    char failed[1024] = "", warned[1024] = "", all[1024] = "", buf[384];
    bool comm_missing = false;
    for (size_t i = 0; i < d->n_stages; i++) {
        const kd_diff_stage *s = &d->stages[i];
        double b = kd_stage_exposed_comm(&s->sum_base), c = kd_stage_exposed_comm(&s->sum_cand);
        describe_change(d, s, buf, sizeof buf);
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", *all ? "; " : "", buf);
        if (!s->sum_base.comm_kernels != !s->sum_cand.comm_kernels)
            comm_missing = true;
        if (exceeds(fail, b, c) && within_noise(d, s))
            snprintf(warned + strlen(warned), sizeof warned - strlen(warned), "%s%s (within noise)",
                     *warned ? "; " : "", buf);
        else if (exceeds(fail, b, c))
            snprintf(failed + strlen(failed), sizeof failed - strlen(failed), "%s%s", *failed ? "; " : "", buf);
        else if (exceeds(warn, b, c))
            snprintf(warned + strlen(warned), sizeof warned - strlen(warned), "%s%s", *warned ? "; " : "", buf);
    }
    if (!d->n_stages)
        snprintf(all, sizeof all, "no stage to compare");
    char g[64], why[768];
    const char *cat = kd_diff_category_name(d, gate_category_of(d));
    unjudged_reason(d, why, sizeof why);
    if ((fail->set || warn->set) && *why) {
        out->verdict = KD_VERDICT_UNJUDGED;
        snprintf(out->line, sizeof out->line, "kerndiff: ERROR: %s", why);
    } else if (*failed) {
        describe_gate(d, fail, g, sizeof g);
        out->verdict = KD_VERDICT_FAIL;
        snprintf(out->line, sizeof out->line, "kerndiff: FAIL: exposed %s grew by more than %s: %s", cat, g, failed);
    } else if ((fail->set || warn->set) && comm_missing) {
        out->verdict = fail->set ? KD_VERDICT_FAIL : KD_VERDICT_WARN;
        snprintf(out->line, sizeof out->line,
                 "kerndiff: %s: one side has no %s kernels, the exposed-%s gate cannot be trusted: %s",
                 fail->set ? "FAIL" : "WARN", cat, cat, all);
    } else if (*warned) {
        describe_gate(d, warn->set ? warn : fail, g, sizeof g);
        out->verdict = KD_VERDICT_WARN;
        snprintf(out->line, sizeof out->line, "kerndiff: WARN: exposed %s grew by more than %s: %s", cat, g, warned);
    } else if (fail->set || warn->set) {
        describe_gate(d, fail->set ? fail : warn, g, sizeof g);
        snprintf(out->line, sizeof out->line, "kerndiff: PASS: exposed %s within %s: %s", cat, g, all);
    } else {
        snprintf(out->line, sizeof out->line, "kerndiff: no gate set; exposed %s: %s", cat, all);
    }
    for (size_t i = 0; i < d->n_warnings; i++)
        add_warning(&out->warnings, &out->n_warnings, "%s", d->warnings[i]);
}

void kd_gate_result_free(kd_gate_result *g)
{
    for (size_t i = 0; i < g->n_warnings; i++)
        free(g->warnings[i]);
    free(g->warnings);
    memset(g, 0, sizeof *g);
}
