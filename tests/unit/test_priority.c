/* test_priority.c — unit tests of src/priority.c (reference §4 "Neighbours and
 * dependency signal", "Priority and rows"): build_priority_and_recommendation,
 * dependency_risk_label, same_scope_family, and build_action_rows on
 * hand-made stages (trace -> bundle -> overlap sweep -> aggregates -> a
 * source map from a payload -> rows). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/aggregate.h"
#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "kerndiff/overlap.h"
#include "kerndiff/priority.h"
#include "kerndiff/sourcemap.h"
#include "suites.h"

#define ASSERT_DBL(a, b) ck_assert_msg((a) == (b), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* ---- build_priority_and_recommendation ----------------------------------------- */

#define ck_prio(verdict, cat, signal, excl, hid, share, wp, wr)                                   \
    do {                                                                                        \
        const char *p_ = NULL, *r_ = NULL;                                                      \
        kd_priority_and_recommendation((verdict), (cat), (signal), (excl), (hid), (share), &p_, &r_); \
        ck_assert_msg(p_ && r_ && strcmp(p_, (wp)) == 0 && strcmp(r_, (wr)) == 0,               \
                      "%s/%s/%s: got %s %s, want %s %s", (verdict), kd_category_name(cat), (signal), \
                      p_ ? p_ : "NULL", r_ ? r_ : "NULL", (wp), (wr));                           \
    } while (0)

START_TEST(test_priority_share_below_one)
{
    /* share < 1.0 wins over every verdict */
    ck_prio("headroom", KD_CAT_COMMUNICATION, "serial risk low", 1.0, 0.0, 0.999, "P5", "skip");
    ck_prio("low-roi-hidden", KD_CAT_MEMORY, "serial risk low", 0.0, 1.0, 0.0, "P5", "skip");
    ck_prio("other", KD_CAT_OTHER, "adjacency unclear", 0.9, 0.0, -1.0, "P5", "skip");
    /* exactly 1.0 is not below */
    ck_prio("headroom", KD_CAT_COMMUNICATION, "serial risk low", 1.0, 0.0, 1.0, "P1", "try overlap");
}
END_TEST

START_TEST(test_priority_headroom)
{
    ck_prio("headroom", KD_CAT_COMMUNICATION, "serial risk low", 0.5, 0.5, 10, "P1", "try overlap");
    ck_prio("headroom", KD_CAT_COMPUTE, "serial risk low", 0.5, 0.5, 10, "P1", "try fusion");
    ck_prio("headroom", KD_CAT_MEMORY, "serial risk low", 0.5, 0.5, 10, "P1", "try fusion");
    ck_prio("headroom", KD_CAT_ELEMENTWISE, "serial risk low", 0.5, 0.5, 10, "P1", "try fusion");
    ck_prio("headroom", KD_CAT_OTHER, "serial risk low", 0.5, 0.5, 10, "P1", "try fusion");
    static const char *const not_low[] = {"prev-side serial risk", "next-side serial risk",
                                          "both-side serial risk", "adjacency unclear",
                                          "something else", NULL};
    for (const char *const *s = not_low; *s; s++) {
        ck_prio("headroom", KD_CAT_COMMUNICATION, *s, 0.9, 0.1, 50, "P2", "check deps");
        ck_prio("headroom", KD_CAT_OTHER, *s, 0.9, 0.1, 50, "P2", "check deps");
    }
}
END_TEST

START_TEST(test_priority_low_roi)
{
    ck_prio("low-roi-hidden", KD_CAT_ELEMENTWISE, "serial risk low", 0.95, 0.0, 5, "P4", "skip");
    ck_prio("low-roi-hidden", KD_CAT_MEMORY, "both-side serial risk", 0.0, 1.0, 5, "P4", "skip");
    ck_prio("low-roi-hidden", KD_CAT_MEMORY, "adjacency unclear", 0.0, 1.0, 5, "P4", "skip");
}
END_TEST

START_TEST(test_priority_other_verdicts)
{
    /* excl >= 0.85 and risk low -> P3 defer (0.85 inclusive) */
    ck_prio("other", KD_CAT_OTHER, "serial risk low", 0.85, 0.9, 5, "P3", "defer");
    /* excl high but risk not low: falls to hidden / risk rules */
    ck_prio("other", KD_CAT_OTHER, "prev-side serial risk", 0.9, 0.0, 5, "P4", "check deps");
    /* hidden >= 0.7 -> P5 skip (0.7 inclusive), before the risk rules */
    ck_prio("other", KD_CAT_OTHER, "serial risk low", 0.84, 0.7, 5, "P5", "skip");
    ck_prio("other", KD_CAT_OTHER, "both-side serial risk", 0.1, 0.7, 5, "P5", "skip");
    /* high -> P4 check deps */
    ck_prio("other", KD_CAT_OTHER, "next-side serial risk", 0.5, 0.69, 5, "P4", "check deps");
    ck_prio("other", KD_CAT_OTHER, "both-side serial risk", 0.5, 0.1, 5, "P4", "check deps");
    /* unclear -> P4 inspect */
    ck_prio("other", KD_CAT_OTHER, "adjacency unclear", 0.5, 0.1, 5, "P4", "inspect");
    /* else -> P4 defer: low with excl < 0.85, or an unknown signal */
    ck_prio("other", KD_CAT_COMMUNICATION, "serial risk low", 0.84, 0.1, 5, "P4", "defer");
    ck_prio("other", KD_CAT_OTHER, "odd signal", 0.99, 0.1, 5, "P4", "defer");
    /* verdict names are exact */
    ck_prio("Headroom", KD_CAT_OTHER, "serial risk low", 0.99, 0.0, 5, "P3", "defer");
}
END_TEST

START_TEST(test_dependency_risk_label)
{
    ck_assert_str_eq(kd_dependency_risk_label("serial risk low"), "low");
    ck_assert_str_eq(kd_dependency_risk_label("prev-side serial risk"), "high");
    ck_assert_str_eq(kd_dependency_risk_label("next-side serial risk"), "high");
    ck_assert_str_eq(kd_dependency_risk_label("both-side serial risk"), "high");
    ck_assert_str_eq(kd_dependency_risk_label("adjacency unclear"), "unclear");
    /* anything else maps to itself */
    const char *odd = "odd";
    ck_assert_ptr_eq(kd_dependency_risk_label(odd), odd);
    ck_assert_str_eq(kd_dependency_risk_label(""), "");
}
END_TEST

/* ---- same_scope_family -------------------------------------------------------------- */

#define ck_family(a, b, want)                                                                  \
    do {                                                                                       \
        ck_assert_msg(kd_same_scope_family((a), (b)) == (want), "family(%s, %s) != %d", (a), (b), \
                      (int)(want));                                                            \
        ck_assert_msg(kd_same_scope_family((b), (a)) == (want), "family(%s, %s) != %d", (b), (a), \
                      (int)(want));                                                            \
    } while (0)

START_TEST(test_same_scope_family)
{
    /* OH scopes path(L): func: same path, or same func */
    ck_family("python/sglang/a.py(1): f", "python/sglang/a.py(2): g", true);
    ck_family("python/sglang/a.py(1): f", "python/sglang/b.py(2): f", true);
    ck_family("python/sglang/a.py(1): f", "python/sglang/b.py(2): g", false);
    ck_family("python/sglang/a.py(1): f", "python/sglang/a.py(1): f", true);
    /* \s* may be empty or several */
    ck_family("a.py(1):f", "a.py(22):   g", true);
    ck_family("x.py(1):f", "y.py(2):\tf", true);
    /* the path is the shortest prefix before "(digits):" */
    ck_family("a(1): b(2): c", "a(9): z", true);
    ck_family("a(1): b(2): c", "x(3): b(2): c", true);
    ck_family("a(1): b(2): c", "a(1): b(7): q", true);
    ck_family("p(1): b(2): c", "q(1): b(9): c", false);
    /* no match: the whole string is the path, func empty */
    ck_family("a(x): f", "a(x): f", true);
    ck_family("a(x): f", "a(y): f", false);
    ck_family("(1): f", "(1): f", true); /* .+? needs one char: no match */
    ck_family("(1): f", "(2): f", false);
    ck_family("a(1):", "a(2): g", false); /* (.+) needs one char */
    ck_family("a(1)x: f", "a(2): f", false);
    /* KH scopes path:L func never parse: equal only when identical */
    ck_family("python/sglang/a.py:1 f", "python/sglang/a.py:1 f", true);
    ck_family("python/sglang/a.py:1 f", "python/sglang/a.py:2 f", false);
    ck_family("python/sglang/a.py:1 f", "python/sglang/a.py(1): f", false);
    /* unmapped, n/a and "" have no path */
    ck_family("unmapped", "unmapped", false);
    ck_family("n/a", "n/a", false);
    ck_family("", "", false);
    ck_family("unmapped", "python/sglang/a.py(1): f", false);
    ck_family("N/A", "N/A", true); /* only the exact literals */
}
END_TEST

/* ---- stage fixture ---------------------------------------------------------------------- */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(w, 0);
        if (b->s && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + (size_t)w + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        ck_assert_ptr_nonnull(b->s);
        b->cap = cap;
    }
}

/* one formal kernel of pid TP00 */
typedef struct {
    const char *name;
    int stream;
    double ts, dur;
} kev;

/* a source-map entry: scope (NULL: none) and launch op (NULL: none) */
typedef struct {
    const char *name, *scope, *op;
} ksrc;

typedef struct {
    kd_trace *t;
    kd_bundle_map bm;
    kd_bundle *b;
    kd_overlap_stats st;
    kd_aggregate_list aggs;
    size_t top[5], low[5], ntop, nlow;
    kd_interner *pstrings;
    kd_source_map sm;
    kd_source_lookup l;
    kd_action_rows rows;
} stage;

#define BUSY_SWEEP (-1.0)

static void stage_build(stage *s, const kev *ev, size_t nev, const ksrc *src, size_t nsrc, double busy,
                        size_t limit)
{
    memset(s, 0, sizeof *s);
    sbuf j = {NULL, 0, 0};
    sb_printf(&j, "{\"traceEvents\":[");
    for (size_t i = 0; i < nev; i++)
        sb_printf(&j,
                  "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":\"TP00\",\"tid\":%d,"
                  "\"ts\":%.17g,\"dur\":%.17g,\"args\":{\"stream\":%d}}",
                  i ? "," : "", ev[i].name, ev[i].stream, ev[i].ts, ev[i].dur, ev[i].stream);
    sb_printf(&j, "]}");
    kd_error err;
    kd_error_clear(&err);
    s->t = kd_load_trace_mem(j.s, j.n, "stage", &err);
    ck_assert_msg(s->t != NULL, "load: %s", err.msg);
    free(j.s);
    kd_trace *traces[1] = {s->t};
    kd_stage stages[1] = {KD_STAGE_ALL};
    ck_assert_int_eq(kd_build_bundle_map(traces, stages, 1, NULL, &s->bm, &err), KD_OK);
    ck_assert(s->bm.has[KD_STAGE_ALL]);
    s->b = &s->bm.by_stage[KD_STAGE_ALL];
    ck_assert_uint_eq(s->b->n, nev);
    ck_assert_int_eq(kd_analyze_overlap_in(s->b->events, s->b->n, s->t->strings, &s->st, &err), KD_OK);
    ck_assert_int_eq(kd_aggregate_events(s->b->events, s->b->n, &s->aggs, &err), KD_OK);
    s->ntop = kd_top_overlap_opportunities(&s->aggs, s->top);
    s->nlow = kd_top_hidden_low_roi(&s->aggs, s->low);

    /* the source map, from a payload: one site per entry */
    s->pstrings = kd_interner_new();
    kd_kernel_entry *entries = calloc(nsrc + 1, sizeof *entries);
    kd_site *sites = calloc(nsrc + 1, sizeof *sites);
    ck_assert(s->pstrings && entries && sites);
    for (size_t i = 0; i < nsrc; i++) {
        entries[i].name = kd_intern_cstr(s->pstrings, src[i].name);
        entries[i].category = "other";
        entries[i].sites = &sites[i];
        entries[i].n_sites = 1;
        sites[i].location = kd_intern_cstr(s->pstrings, src[i].scope ? src[i].scope : "unresolved");
        sites[i].launches = 1;
        sites[i].top_cpu_op = src[i].op ? kd_intern_cstr(s->pstrings, src[i].op) : 0;
    }
    s->sm.strings = kd_interner_new();
    ck_assert_ptr_nonnull(s->sm.strings);
    kd_stage_payload p = {s->pstrings, entries, nsrc};
    ck_assert_int_eq(kd_source_map_merge_payload(&s->sm, &p, &err), KD_OK);
    free(entries);
    free(sites);
    ck_assert(kd_source_lookup_init(&s->l, &s->sm));
    ck_assert_int_eq(kd_build_action_rows(s->b, &s->aggs, s->top, s->ntop, s->low, s->nlow, &s->l,
                                          busy == BUSY_SWEEP ? s->st.total_busy_us : busy, limit,
                                          &s->rows, &err),
                     KD_OK);
}

static void stage_free(stage *s)
{
    kd_action_rows_free(&s->rows);
    kd_source_lookup_free(&s->l);
    kd_source_map_free(&s->sm);
    kd_interner_free(s->pstrings);
    kd_aggregate_list_free(&s->aggs);
    kd_bundle_map_free(&s->bm);
    kd_trace_free(s->t);
}

static const char *row_kernel(const stage *s, const kd_action_row *r) { return kd_str(s->t->strings, r->kernel); }

/* the row of a kernel name (the first), or fail */
static const kd_action_row *row_of(const stage *s, const char *name)
{
    for (size_t i = 0; i < s->rows.n; i++)
        if (strcmp(row_kernel(s, &s->rows.v[i]), name) == 0)
            return &s->rows.v[i];
    ck_abort_msg("no row for %s (%zu rows)", name, s->rows.n);
    return NULL;
}

static void ck_row_names_(const stage *s, const char *const *names, size_t n, int line)
{
    sbuf got = {NULL, 0, 0};
    sb_printf(&got, "%s", "");
    for (size_t i = 0; i < s->rows.n; i++)
        sb_printf(&got, "%s%s/%s/%s", i ? " | " : "", row_kernel(s, &s->rows.v[i]), s->rows.v[i].verdict,
                  s->rows.v[i].priority);
    sbuf want = {NULL, 0, 0};
    sb_printf(&want, "%s", "");
    for (size_t i = 0; i < n; i++)
        sb_printf(&want, "%s%s", i ? " | " : "", names[i]);
    ck_assert_msg(strcmp(got.s, want.s) == 0, "line %d rows:\n got  %s\n want %s", line, got.s, want.s);
    free(got.s);
    free(want.s);
}
#define ck_rows(s, ...)                                                                         \
    do {                                                                                        \
        const char *const w_[] = {__VA_ARGS__};                                                 \
        ck_row_names_((s), w_, sizeof w_ / sizeof *w_, __LINE__);                               \
    } while (0)

#define N(a) (sizeof(a) / sizeof *(a))

#define SA "python/sglang/a.py(1): f"
#define SA2 "python/sglang/a.py(2): g"
#define SA3 "python/sglang/a.py(3): h"
#define SB "python/sglang/b.py(1): other"
#define SC "python/sglang/c.py(1): third"

/* ---- the tight-gap threshold ------------------------------------------------------------- */

START_TEST(test_tight_gap_threshold)
{
    /* threshold max(2, min(20, dur * 0.15)): a prev gap equal to it is tight,
     * a next gap 0.5 above it is not */
    static const struct {
        double dur, thr;
    } cases[] = {{5, 2}, {10, 2}, {13.2, 2}, {40, 6}, {100, 15}, {1000, 20}, {5000, 20}};
    for (size_t c = 0; c < N(cases); c++) {
        double d = cases[c].dur, t = cases[c].thr;
        kev ev[] = {{"plainP", 7, 0, 1}, {"plainC", 7, 1 + t, d}, {"plainN", 7, 1 + t + d + t + 0.5, 1}};
        ksrc src[] = {{"plainC", SA, NULL}, {"plainP", SA2, NULL}, {"plainN", SA3, NULL}};
        stage s;
        stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
        ck_rows(&s, "plainC/headroom/P2");
        const kd_action_row *r = row_of(&s, "plainC");
        ck_assert_msg(strcmp(r->dependency_signal, "prev-side serial risk") == 0, "dur %g: %s", d,
                      r->dependency_signal);
        ck_assert_str_eq(r->recommendation, "check deps");
        char want[128];
        snprintf(want, sizeof want, "plainP @ " SA2 " (gap %.1f us)", t);
        ck_assert_str_eq(r->prev_neighbor, want);
        snprintf(want, sizeof want, "plainN @ " SA3 " (gap %.1f us)", t + 0.5);
        ck_assert_str_eq(r->next_neighbor, want);
        stage_free(&s);
    }
}
END_TEST

/* ---- dependency signals ------------------------------------------------------------------- */

/* One headroom kernel "plainC" (dur 10, threshold 2) between "plainP" and
 * "plainN" on stream 7, with the given gaps and sources; its row. */
static void signal_case(double prev_gap, double next_gap, const ksrc *src, size_t nsrc,
                        const char *want_signal, const char *want_prio, const char *want_rec,
                        int line)
{
    kev ev[] = {{"plainP", 7, 0, 1}, {"plainC", 7, 1 + prev_gap, 10},
                {"plainN", 7, 1 + prev_gap + 10 + next_gap, 1}};
    stage s;
    stage_build(&s, ev, N(ev), src, nsrc, BUSY_SWEEP, 0);
    const kd_action_row *r = row_of(&s, "plainC");
    ck_assert_msg(strcmp(r->dependency_signal, want_signal) == 0 && strcmp(r->priority, want_prio) == 0 &&
                      strcmp(r->recommendation, want_rec) == 0,
                  "line %d: got %s %s %s, want %s %s %s", line, r->dependency_signal, r->priority,
                  r->recommendation, want_signal, want_prio, want_rec);
    stage_free(&s);
}
#define SIGNAL(pg, ng, src, sig, prio, rec) signal_case((pg), (ng), (src), N(src), (sig), (prio), (rec), __LINE__)

START_TEST(test_signal_sides)
{
    ksrc fam[] = {{"plainC", SA, NULL}, {"plainP", SA2, NULL}, {"plainN", SA3, NULL}};
    SIGNAL(1, 1, fam, "both-side serial risk", "P2", "check deps");
    SIGNAL(1, 5, fam, "prev-side serial risk", "P2", "check deps");
    SIGNAL(5, 1, fam, "next-side serial risk", "P2", "check deps");
    SIGNAL(5, 5, fam, "serial risk low", "P1", "try fusion");
    /* tight, different families, all mapped: low */
    ksrc diff[] = {{"plainC", SA, NULL}, {"plainP", SB, NULL}, {"plainN", SC, NULL}};
    SIGNAL(0, 0, diff, "serial risk low", "P1", "try fusion");
    /* same func on a different path is the same family */
    ksrc func[] = {{"plainC", "python/sglang/x.py(1): forward", NULL},
                   {"plainP", "python/sglang/y.py(9): forward", NULL},
                   {"plainN", SC, NULL}};
    SIGNAL(0, 0, func, "prev-side serial risk", "P2", "check deps");
}
END_TEST

START_TEST(test_signal_unclear)
{
    /* the current kernel unmapped, tight neighbours: unclear */
    ksrc nocur[] = {{"plainP", SB, NULL}, {"plainN", SC, NULL}};
    SIGNAL(1, 1, nocur, "adjacency unclear", "P2", "check deps");
    /* a neighbour unmapped, the other tight side low: unclear */
    ksrc noprev[] = {{"plainC", SA, NULL}, {"plainN", SC, NULL}};
    SIGNAL(1, 1, noprev, "adjacency unclear", "P2", "check deps");
    SIGNAL(1, 5, noprev, "adjacency unclear", "P2", "check deps");
    /* the unmapped side not tight: low */
    SIGNAL(5, 1, noprev, "serial risk low", "P1", "try fusion");
    /* nothing mapped, nothing tight: low */
    signal_case(5, 5, NULL, 0, "serial risk low", "P1", "try fusion", __LINE__);
    /* a risky side outranks an unclear one */
    ksrc mixed[] = {{"plainC", SA, NULL}, {"plainN", SA3, NULL}};
    SIGNAL(1, 1, mixed, "next-side serial risk", "P2", "check deps");
}
END_TEST

START_TEST(test_signal_launch_ops)
{
    /* the same launch op makes a tight side risky, whatever the scopes */
    ksrc op[] = {{"plainC", SA, "aten::mm"}, {"plainP", SB, "aten::mm"}, {"plainN", SC, "aten::add"}};
    SIGNAL(1, 1, op, "prev-side serial risk", "P2", "check deps");
    /* even with unmapped scopes (a site with only "unresolved" locations) */
    ksrc op_unmapped[] = {{"plainC", NULL, "aten::mm"}, {"plainN", NULL, "aten::mm"}};
    SIGNAL(1, 1, op_unmapped, "next-side serial risk", "P2", "check deps");
    /* "n/a" == "n/a" is not a match: both without op, different families */
    ksrc na[] = {{"plainC", SA, NULL}, {"plainP", SB, NULL}, {"plainN", SC, NULL}};
    SIGNAL(1, 1, na, "serial risk low", "P1", "try fusion");
}
END_TEST

START_TEST(test_signal_dependency_like)
{
    /* communication: any non-communication neighbour is dependency-like */
    static const char *const dep_of_comm[] = {"gemm_x", "rmsnorm_x", "memcpy_x", "plainQ", NULL};
    for (const char *const *nb = dep_of_comm; *nb; nb++) {
        kev ev[] = {{*nb, 7, 0, 1}, {"nccl_allreduce", 7, 1.5, 10}};
        stage s;
        stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
        const kd_action_row *r = row_of(&s, "nccl_allreduce");
        ck_assert_msg(strcmp(r->dependency_signal, "prev-side serial risk") == 0, "%s: %s", *nb,
                      r->dependency_signal);
        ck_assert_str_eq(r->next_neighbor, "none");
        stage_free(&s);
    }
    {
        /* comm next to comm: not dependency-like; unmapped -> unclear */
        kev ev[] = {{"nccl_allgather", 7, 0, 1}, {"nccl_allreduce", 7, 1.5, 10}};
        stage s;
        stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
        ck_assert_str_eq(row_of(&s, "nccl_allreduce")->dependency_signal, "adjacency unclear");
        stage_free(&s);
    }
    {
        /* comm, risk low: P1 try overlap */
        kev ev[] = {{"nccl_allreduce", 7, 0, 10}};
        ksrc src[] = {{"nccl_allreduce", SA, NULL}};
        stage s;
        stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
        const kd_action_row *r = row_of(&s, "nccl_allreduce");
        ck_assert_str_eq(r->dependency_signal, "serial risk low");
        ck_assert_str_eq(r->priority, "P1");
        ck_assert_str_eq(r->recommendation, "try overlap");
        ck_assert_str_eq(r->prev_neighbor, "none");
        ck_assert_str_eq(r->next_neighbor, "none");
        stage_free(&s);
    }
    /* elementwise / memory: compute, communication, elementwise, memory
     * neighbours are dependency-like, "other" is not */
    static const struct {
        const char *cur, *nb, *signal;
    } em[] = {
        {"rmsnorm_kernel", "gemm_x", "prev-side serial risk"},
        {"rmsnorm_kernel", "nccl_x", "prev-side serial risk"},
        {"rmsnorm_kernel", "silu_x", "prev-side serial risk"},
        {"rmsnorm_kernel", "memset_x", "prev-side serial risk"},
        {"rmsnorm_kernel", "plainQ", "adjacency unclear"},
        {"memcpy_d2d", "gemm_x", "prev-side serial risk"},
        {"memcpy_d2d", "plainQ", "adjacency unclear"},
        /* compute and other currents: never dependency-like */
        {"gemm_cur", "rmsnorm_x", "adjacency unclear"},
        {"plainCur", "gemm_x", "adjacency unclear"},
    };
    for (size_t i = 0; i < N(em); i++) {
        kev ev[] = {{em[i].nb, 7, 0, 1}, {em[i].cur, 7, 1.5, 10}};
        stage s;
        stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
        const kd_action_row *r = row_of(&s, em[i].cur);
        ck_assert_msg(strcmp(r->dependency_signal, em[i].signal) == 0, "%s after %s: %s, want %s", em[i].cur,
                      em[i].nb, r->dependency_signal, em[i].signal);
        stage_free(&s);
    }
}
END_TEST

/* ---- neighbour text ----------------------------------------------------------------------- */

START_TEST(test_neighbour_text)
{
    /* names and scopes shortened to 28 code points (25 + "..."); an
     * overlapping prev on the same stream clamps the gap to 0 */
    const char *longname = "plain_very_long_name_abcdefghij"; /* 31 */
    const char *longscope = "python/sglang/srt/layers/very_long.py(123): forward";
    kev ev[] = {{longname, 7, 0, 12}, {"plainC", 7, 10, 10}, {"plainN", 7, 20.25, 1}};
    ksrc src[] = {{"plainC", SA, NULL}, {longname, longscope, NULL}, {"plainN", SC, NULL}};
    stage s;
    stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
    const kd_action_row *r = row_of(&s, "plainC");
    ck_assert_str_eq(r->prev_neighbor, "plain_very_long_name_abcd... @ python/sglang/srt/layers/... (gap 0.0 us)");
    ck_assert_str_eq(r->next_neighbor, "plainN @ " SC " (gap 0.2 us)");
    ck_assert_str_eq(r->python_scope, SA);
    ck_assert_str_eq(r->launch_op, "n/a");
    stage_free(&s);

    /* exactly 28 code points stay whole; multi-byte names count code points */
    const char *n28 = "plain_twenty_eight_chars_xyz";
    const char *u30 = "plain_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"; /* 6 + 24 = 30 code points */
    kev ev2[] = {{n28, 7, 0, 1}, {"plainC", 7, 1, 10}, {u30, 7, 11, 1}};
    stage_build(&s, ev2, N(ev2), NULL, 0, BUSY_SWEEP, 0);
    r = row_of(&s, "plainC");
    ck_assert_str_eq(r->prev_neighbor, "plain_twenty_eight_chars_xyz @ unmapped (gap 0.0 us)");
    ck_assert_str_eq(r->next_neighbor,
                     "plain_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9... @ unmapped (gap 0.0 us)");
    ck_assert_str_eq(r->python_scope, "unmapped");
    ck_assert_str_eq(r->dependency_signal, "adjacency unclear");
    stage_free(&s);
}
END_TEST

START_TEST(test_neighbours_same_stream_only_and_relaxed)
{
    /* neighbours come from the representative's own stream, sorted by
     * (ts, end, idx); another stream's kernel in between does not count.
     * Neighbour scopes go through the relaxed lookup (prefix match). */
    kev ev[] = {{"plainN", 7, 30, 1},   {"plainC", 7, 10, 10}, {"plainX", 8, 21, 1},
                {"plainP", 7, 5, 1},    {"plainP", 7, 2, 1}};
    ksrc src[] = {{"plainC", SA, NULL}, {"plainP_long_key", SB, NULL}};
    stage s;
    stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
    const kd_action_row *r = row_of(&s, "plainC");
    ck_assert_str_eq(r->prev_neighbor, "plainP @ " SB " (gap 4.0 us)");
    ck_assert_str_eq(r->next_neighbor, "plainN @ unmapped (gap 10.0 us)");
    ck_assert_str_eq(r->dependency_signal, "serial risk low");
    ck_assert_int_eq(r->representative_idx, 1);
    stage_free(&s);
}
END_TEST

/* ---- rows: P5, seen names, limit, share, suggestions ----------------------------------------- */

/* "void kern(float)" (other) exposed on stream 7; "gemm_big" (compute) on 8;
 * "void kern(rmsnorm)" (elementwise, same canonical name) hidden under it on 9 */
static const kev seen_events[] = {
    {"void kern(float)", 7, 0, 50}, {"gemm_big", 8, 100, 100}, {"void kern(rmsnorm)", 9, 120, 20}};

START_TEST(test_rows_seen_names)
{
    stage s;
    /* shares 5%, 10%, 2%: the headroom row marks "void kern" seen, so the
     * low-roi row of the elementwise aggregate is skipped */
    stage_build(&s, seen_events, N(seen_events), NULL, 0, 1000.0, 0);
    ck_assert_uint_eq(s.ntop, 2);
    ck_assert_uint_eq(s.nlow, 1);
    ck_rows(&s, "void kern/headroom/P1", "gemm_big/headroom/P1");
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_p5_headroom_dropped)
{
    stage s;
    /* busy 10000: "void kern" headroom is 0.5% -> P5, dropped and not seen;
     * gemm_big is exactly 1.0% -> kept; the low-roi row is kept although P5 */
    stage_build(&s, seen_events, N(seen_events), NULL, 0, 10000.0, 0);
    ck_rows(&s, "gemm_big/headroom/P1", "void kern/low-roi-hidden/P5");
    const kd_action_row *g = &s.rows.v[0];
    ASSERT_DBL(g->share_pct, 100.0 / 10000.0 * 100.0);
    ck_assert_str_eq(g->recommendation, "try fusion");
    const kd_action_row *k = &s.rows.v[1];
    ck_assert_str_eq(k->recommendation, "skip");
    ck_assert_int_eq(k->category, KD_CAT_ELEMENTWISE);
    ASSERT_DBL(k->share_pct, 20.0 / 10000.0 * 100.0);
    ASSERT_DBL(k->hidden_ratio, 1.0);
    ASSERT_DBL(k->exclusive_ratio, 0.0);
    ck_assert_str_eq(k->suggestion,
                     "Mostly hidden under gemm_big (20.0 us). Revisit only if schedule or fusion changes.");
    stage_free(&s);

    /* busy 0: every share is 0, every headroom row dropped, low-roi kept */
    stage_build(&s, seen_events, N(seen_events), NULL, 0, 0.0, 0);
    ck_rows(&s, "void kern/low-roi-hidden/P5");
    ASSERT_DBL(s.rows.v[0].share_pct, 0.0);
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_share_and_fields)
{
    stage s;
    ksrc src[] = {{"gemm_big", SA, "aten::mm"}, {"void kern", SB, NULL}};
    stage_build(&s, seen_events, N(seen_events), src, N(src), BUSY_SWEEP, 0);
    /* sweep busy = 50 + 100 (union) */
    ASSERT_DBL(s.st.total_busy_us, 150.0);
    ck_rows(&s, "void kern/headroom/P1", "gemm_big/headroom/P1");
    const kd_action_row *k = &s.rows.v[0], *g = &s.rows.v[1];
    ASSERT_DBL(k->share_pct, 50.0 / 150.0 * 100.0);
    ASSERT_DBL(g->share_pct, 100.0 / 150.0 * 100.0);
    ASSERT_DBL(k->total_us, 50.0);
    ASSERT_DBL(g->exclusive_ratio, 0.8);
    ASSERT_DBL(g->hidden_ratio, 0.2);
    ck_assert_str_eq(g->python_scope, SA);
    ck_assert_str_eq(g->launch_op, "aten::mm");
    ASSERT_DBL(g->mapping_ratio, 1.0);
    ck_assert_str_eq(k->python_scope, SB);
    ck_assert_str_eq(k->launch_op, "n/a");
    ck_assert_int_eq(k->category, KD_CAT_OTHER);
    ck_assert_int_eq(k->representative_idx, 0);
    ck_assert_int_eq(g->representative_idx, 1);
    ck_assert_str_eq(k->verdict, "headroom");
    ck_assert_str_eq(k->suggestion,
                     "This work is still exposed. Check stream placement and immediate dependencies.");
    ck_assert_str_eq(g->suggestion,
                     "This work is still exposed. Check stream placement and immediate dependencies.");
    ck_assert_uint_eq(k->aggregate, s.top[0]);
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_headroom_suggestions_and_order)
{
    /* five exposed kernels on their own streams; primary (non-compute) by
     * exclusive x weight, then compute */
    kev ev[] = {{"plainO", 1, 0, 10},        {"gemm_x", 2, 100, 10},    {"elementwise_add", 3, 200, 10},
                {"nccl_allreduce", 4, 300, 10}, {"memcpy_h2d", 5, 400, 10}};
    stage s;
    stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
    ck_rows(&s, "nccl_allreduce/headroom/P1", "memcpy_h2d/headroom/P1", "elementwise_add/headroom/P1",
            "plainO/headroom/P1", "gemm_x/headroom/P1");
    ck_assert_str_eq(s.rows.v[0].suggestion, "Communication is still exposed. Check overlap with nearby compute.");
    ck_assert_str_eq(s.rows.v[0].recommendation, "try overlap");
    ck_assert_str_eq(s.rows.v[1].suggestion, "This work is still exposed. Check fusion or nearby compute coverage.");
    ck_assert_str_eq(s.rows.v[2].suggestion, "This work is still exposed. Check fusion or nearby compute coverage.");
    ck_assert_str_eq(s.rows.v[3].suggestion,
                     "This work is still exposed. Check stream placement and immediate dependencies.");
    ck_assert_str_eq(s.rows.v[4].suggestion,
                     "This work is still exposed. Check stream placement and immediate dependencies.");
    ck_assert_str_eq(s.rows.v[4].recommendation, "try fusion");
    for (size_t i = 0; i < 5; i++) {
        ck_assert_str_eq(s.rows.v[i].dependency_signal, "serial risk low");
        ASSERT_DBL(s.rows.v[i].share_pct, 10.0 / 50.0 * 100.0);
    }
    stage_free(&s);
}
END_TEST

/* three exposed + three hidden kernels */
static const kev limit_events[] = {
    {"plainO1", 1, 0, 30},      {"plainO2", 2, 100, 20},     {"plainO3", 3, 200, 10},
    {"gemm_cover", 4, 300, 100}, {"silu_a", 5, 310, 30},     {"memcpy_b", 6, 320, 20},
    {"rmsnorm_c", 7, 330, 10},
};

START_TEST(test_rows_limit)
{
    stage s;
    stage_build(&s, limit_events, N(limit_events), NULL, 0, BUSY_SWEEP, 0);
    /* headroom: plain 1..3, then gemm_cover (compute, exclusive 0.7);
     * low-roi by hidden x (1 + hbc / hidden) */
    ck_rows(&s, "plainO1/headroom/P1", "plainO2/headroom/P1", "plainO3/headroom/P1",
            "gemm_cover/headroom/P1", "silu_a/low-roi-hidden/P4", "memcpy_b/low-roi-hidden/P4",
            "rmsnorm_c/low-roi-hidden/P4");
    stage_free(&s);
    stage_build(&s, limit_events, N(limit_events), NULL, 0, BUSY_SWEEP, 5);
    ck_rows(&s, "plainO1/headroom/P1", "plainO2/headroom/P1", "plainO3/headroom/P1",
            "gemm_cover/headroom/P1", "silu_a/low-roi-hidden/P4");
    stage_free(&s);
    stage_build(&s, limit_events, N(limit_events), NULL, 0, BUSY_SWEEP, 1);
    ck_rows(&s, "plainO1/headroom/P1");
    stage_free(&s);
    stage_build(&s, limit_events, N(limit_events), NULL, 0, BUSY_SWEEP, 100);
    ck_assert_uint_eq(s.rows.n, 7);
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_hidden_suggestions)
{
    stage s;
    /* hidden under two kernels: the larger overlap names the suggestion;
     * names over 48 code points are shortened */
    const char *longhider = "gemm_a_really_long_kernel_name_that_goes_past_forty_eight";
    kev ev[] = {{longhider, 1, 0, 30}, {"gemm_small", 2, 30, 10}, {"silu_h", 3, 10, 25}};
    stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
    const kd_action_row *r = row_of(&s, "silu_h");
    ck_assert_str_eq(r->verdict, "low-roi-hidden");
    ck_assert_str_eq(r->suggestion,
                     "Mostly hidden under gemm_a_really_long_kernel_name_that_goes_past... (20.0 us). "
                     "Revisit only if schedule or fusion changes.");
    stage_free(&s);

    /* a tie in overlap time: the first inserted */
    kev ev2[] = {{"gemm_first", 1, 0, 10}, {"gemm_second", 2, 10, 10}, {"silu_t", 3, 0, 20}};
    stage_build(&s, ev2, N(ev2), NULL, 0, BUSY_SWEEP, 0);
    ck_assert_str_eq(row_of(&s, "silu_t")->suggestion,
                     "Mostly hidden under gemm_first (10.0 us). Revisit only if schedule or fusion changes.");
    stage_free(&s);

    /* hidden only under a kernel whose canonical name is "": overlap_with
     * stays empty -> "Mostly hidden already." */
    kev ev3[] = {{" ", 1, 0, 40}, {"memcpy_z", 2, 5, 20}};
    stage_build(&s, ev3, N(ev3), NULL, 0, BUSY_SWEEP, 0);
    r = row_of(&s, "memcpy_z");
    ck_assert_uint_eq(s.aggs.v[r->aggregate].overlap_with.n, 0);
    ck_assert_str_eq(r->suggestion, "Mostly hidden already. Revisit only if schedule or fusion changes.");
    ck_assert_str_eq(r->priority, "P4");
    ck_assert_str_eq(r->recommendation, "skip");
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_low_roi_duplicate_names)
{
    /* two low-roi aggregates with one canonical name (memory and
     * elementwise): the second is skipped as seen */
    kev ev[] = {{"gemm_cover", 1, 0, 100}, {"void k(memcpy)", 2, 10, 30}, {"void k(silu)", 3, 50, 20}};
    stage s;
    stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 0);
    ck_assert_uint_eq(s.nlow, 2);
    ck_rows(&s, "gemm_cover/headroom/P1", "void k/low-roi-hidden/P4");
    ck_assert_int_eq(s.rows.v[1].category, KD_CAT_MEMORY);
    stage_free(&s);
}
END_TEST

START_TEST(test_rows_empty)
{
    /* no candidate: no rows */
    kev ev[] = {{"plainTiny", 1, 0, 4}};
    stage s;
    stage_build(&s, ev, N(ev), NULL, 0, BUSY_SWEEP, 3);
    ck_assert_uint_eq(s.rows.n, 0);
    stage_free(&s);
}
END_TEST

START_TEST(test_source_lookup_memo_and_kind)
{
    ksrc src[] = {{"plainC_ext", SA, "aten::x"}};
    kev ev[] = {{"plainC", 7, 0, 10}};
    stage s;
    stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
    kd_match_kind k = KD_MATCH_NONE;
    const kd_source_stats *a = kd_source_lookup_find(&s.l, "plainC", &k);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(k, KD_MATCH_PREFIX);
    ck_assert_ptr_eq(kd_source_lookup_find(&s.l, "plainC", NULL), a);
    ck_assert_ptr_eq(kd_source_lookup_find(&s.l, "plainC_ext", &k), a);
    ck_assert_int_eq(k, KD_MATCH_EXACT);
    ck_assert_ptr_null(kd_source_lookup_find(&s.l, "zzz", NULL));
    ck_assert_ptr_null(kd_source_lookup_find(&s.l, "zzz", &k));
    ck_assert_int_eq(k, KD_MATCH_NONE);
    /* the row used the relaxed match */
    ck_assert_str_eq(row_of(&s, "plainC")->python_scope, SA);
    ck_assert_str_eq(row_of(&s, "plainC")->launch_op, "aten::x");
    stage_free(&s);
}
END_TEST

START_TEST(test_source_lookup_alias_text_and_bonus)
{
    /* the alias stage of the source-map lookup: text from key, best scope,
     * chain and launch op; bonus = source_scope_priority(best scope) +
     * int(mapping_ratio * 100). Two memset candidates hit the memset token
     * alike; the sglang-scoped one (300 + 100) beats the plain one (120 + 100). */
    ksrc src[] = {{"zz_first", "other/x.py(1): memset_wrapper", NULL},
                  {"zz_second", "python/sglang/y.py(1): memset_wrapper", NULL}};
    kev ev[] = {{"plainC", 7, 0, 10}};
    stage s;
    stage_build(&s, ev, N(ev), src, N(src), BUSY_SWEEP, 0);
    kd_match_kind k;
    const kd_source_stats *a = kd_source_lookup_find(&s.l, "Memset (Device)", &k);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(k, KD_MATCH_ALIAS);
    ck_assert_str_eq(kd_str(s.sm.strings, a->name), "zz_second");
    stage_free(&s);
}
END_TEST

Suite *rows_suite(void)
{
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_priority_share_below_one);
    tcase_add_test(tc, test_priority_headroom);
    tcase_add_test(tc, test_priority_low_roi);
    tcase_add_test(tc, test_priority_other_verdicts);
    tcase_add_test(tc, test_dependency_risk_label);
    tcase_add_test(tc, test_same_scope_family);
    tcase_add_test(tc, test_tight_gap_threshold);
    tcase_add_test(tc, test_signal_sides);
    tcase_add_test(tc, test_signal_unclear);
    tcase_add_test(tc, test_signal_launch_ops);
    tcase_add_test(tc, test_signal_dependency_like);
    tcase_add_test(tc, test_neighbour_text);
    tcase_add_test(tc, test_neighbours_same_stream_only_and_relaxed);
    tcase_add_test(tc, test_rows_seen_names);
    tcase_add_test(tc, test_rows_p5_headroom_dropped);
    tcase_add_test(tc, test_rows_share_and_fields);
    tcase_add_test(tc, test_rows_headroom_suggestions_and_order);
    tcase_add_test(tc, test_rows_limit);
    tcase_add_test(tc, test_rows_hidden_suggestions);
    tcase_add_test(tc, test_rows_low_roi_duplicate_names);
    tcase_add_test(tc, test_rows_empty);
    tcase_add_test(tc, test_source_lookup_memo_and_kind);
    tcase_add_test(tc, test_source_lookup_alias_text_and_bonus);
    suite_add_tcase(s, tc);
    return s;
}
