/* extract.c — kernel events of the chosen pid and the stage bundles
 * (reference §1 select_heaviest_pid, §4 "Extract", §3.4). */
#include "config.h"

#include "kerndiff/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/stage.h"

/* Python's `sub in s` on interned strings, which may hold NUL bytes */
static bool sid_contains(const kd_interner *in, kd_sid id, const char *sub)
{
    const char *s = kd_str(in, id);
    size_t n = kd_str_len(in, id), m = strlen(sub);
    if (m == 0)
        return true;
    for (size_t i = 0; i + m <= n; i++)
        if (s[i] == sub[0] && memcmp(s + i, sub, m) == 0)
            return true;
    return false;
}

kd_sid kd_select_heaviest_pid(const kd_trace *t, uint32_t flags_mask, const char *pid_substring,
                              const char *const *preferred)
{
    /* totals in first-appearance order of the pid (reference §1 step 1) */
    uint32_t nstr = kd_interner_count(t->strings) + 1;
    uint32_t *slot = calloc(nstr, sizeof *slot); /* pid sid -> index + 1 */
    kd_sid *pids = NULL;
    double *totals = NULL;
    size_t np = 0;
    kd_sid chosen = 0;
    if (!slot)
        return 0;
    for (size_t i = 0; i < t->kernels.n; i++) {
        const kd_kernel_rec *k = &t->kernels.v[i];
        if ((k->flags & flags_mask) != flags_mask)
            continue;
        if (pid_substring && *pid_substring && !sid_contains(t->strings, k->pid, pid_substring))
            continue;
        if (!slot[k->pid]) {
            kd_sid *np_ = realloc(pids, (np + 1) * sizeof *pids);
            double *nt_ = np_ ? realloc(totals, (np + 1) * sizeof *totals) : NULL;
            if (np_)
                pids = np_;
            if (!nt_)
                goto done;
            totals = nt_;
            pids[np] = k->pid;
            totals[np] = 0.0;
            slot[k->pid] = (uint32_t)++np;
        }
        totals[slot[k->pid] - 1] += k->dur;
    }
    if (!np)
        goto done;
    /* reference §1 steps 3–5: a preferred substring restricts the race; max()
     * keeps the first pid on ties */
    for (const char *const *pref = preferred; pref && *pref; pref++) {
        size_t best = np;
        for (size_t i = 0; i < np; i++)
            if (sid_contains(t->strings, pids[i], *pref) &&
                (best == np || totals[i] > totals[best]))
                best = i;
        if (best < np) {
            chosen = pids[best];
            goto done;
        }
    }
    size_t best = 0;
    for (size_t i = 1; i < np; i++)
        if (totals[i] > totals[best])
            best = i;
    chosen = pids[best];
done:
    free(slot);
    free(pids);
    free(totals);
    return chosen;
}

static int64_t thread_key(kd_sid pid, kd_sid tid) { return ((int64_t)pid << 32) | tid; }

/* Per distinct raw name: its canonical name and category, computed once. */
typedef struct {
    kd_sid *canonical; /* by name sid; 0 = not yet */
    kd_category *category;
    uint32_t cap;
} name_cache;

static bool canonical_of(kd_trace *t, name_cache *c, kd_sid name, kd_sid *canon, kd_category *cat)
{
    if (name < c->cap && c->canonical[name]) {
        *canon = c->canonical[name];
        *cat = c->category[name];
        return true;
    }
    const char *raw = kd_str(t->strings, name);
    char *s = kd_canonicalize_kernel_name(raw);
    if (!s)
        return false;
    *canon = kd_intern_cstr(t->strings, s);
    free(s);
    *cat = kd_rules_classify(kd_trace_rules(t), raw); /* reference §4: on the raw name */
    if (!*canon)
        return false;
    if (name < c->cap) {
        c->canonical[name] = *canon;
        c->category[name] = *cat;
    }
    return true;
}

typedef struct {
    kd_i64map thread_names; /* thread_key -> name sid */
    kd_i64map corr_ext;
    kd_stage_annotations ann;
} extract_inputs;

static kd_status build_inputs(const kd_trace *t, extract_inputs *in, kd_error *err)
{
    /* zeroed first: a failure part-way leaves maps free_inputs may free */
    memset(in, 0, sizeof *in);
    kd_i64map_init(&in->thread_names);
    kd_i64map_init(&in->corr_ext);
    for (size_t i = 0; i < t->thread_names.n; i++) {
        const kd_thread_name_rec *r = &t->thread_names.v[i];
        if (!kd_i64map_put(&in->thread_names, thread_key(r->pid, r->tid), r->name))
            return kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
    }
    for (size_t i = 0; i < t->corr_ext.n; i++)
        if (!kd_i64map_put(&in->corr_ext, t->corr_ext.v[i].corr, t->corr_ext.v[i].ext))
            return kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
    return kd_stage_annotations_build(t, &in->ann, err);
}

static void free_inputs(extract_inputs *in)
{
    kd_i64map_free(&in->thread_names);
    kd_i64map_free(&in->corr_ext);
    kd_stage_annotations_free(&in->ann);
}

/* reference §4: args.stream or args.cuda_stream or thread_name or "tid={tid}";
 * truthiness makes stream 0 fall through. */
static kd_sid resolve_stream(kd_trace *t, const extract_inputs *in, const kd_kernel_rec *k)
{
    if (k->stream)
        return k->stream;
    int64_t name;
    if (kd_i64map_get(&in->thread_names, thread_key(k->pid, k->tid), &name))
        return (kd_sid)name;
    size_t tlen = kd_str_len(t->strings, k->tid);
    char *buf = malloc(tlen + 4);
    if (!buf)
        return 0;
    memcpy(buf, "tid=", 4);
    memcpy(buf + 4, kd_str(t->strings, k->tid), tlen);
    kd_sid id = kd_intern(t->strings, buf, tlen + 4);
    free(buf);
    return id;
}

kd_status kd_extract_kernel_events(kd_trace *t, const char *pid_substring, kd_kernel_list *out,
                                   kd_error *err)
{
    static const char *const tp00[] = {"TP00", NULL};
    memset(out, 0, sizeof *out);
    bool has_sub = pid_substring && *pid_substring;
    out->pid = kd_select_heaviest_pid(t, KD_KF_OH_KERNEL, pid_substring, has_sub ? NULL : tp00);
    if (!out->pid)
        return KD_OK;
    extract_inputs in;
    kd_status st = build_inputs(t, &in, err);
    if (st) {
        free_inputs(&in);
        return st;
    }
    name_cache nc = {NULL, NULL, kd_interner_count(t->strings) + 1};
    nc.canonical = calloc(nc.cap, sizeof *nc.canonical);
    nc.category = calloc(nc.cap, sizeof *nc.category);
    size_t cap = 0, zcap = 0;
    for (size_t i = 0; i < t->kernels.n && !st; i++) {
        const kd_kernel_rec *k = &t->kernels.v[i];
        if (k->pid != out->pid) {
            out->other_pids += (k->flags & (KD_KF_OH_KERNEL | KD_KF_ZERO_DUR | KD_KF_SKIPPED)) != 0;
            continue;
        }
        if (k->flags & KD_KF_SKIPPED) {
            out->skipped[KD_KF_SKIP_REASON(k->flags)]++;
            continue;
        }
        bool zero = (k->flags & KD_KF_ZERO_DUR) != 0;
        if (!(k->flags & KD_KF_OH_KERNEL) && !zero)
            continue;
        kd_kernel_event **v = zero ? &out->zero : &out->v;
        size_t *n = zero ? &out->n_zero : &out->n, *c = zero ? &zcap : &cap;
        if (!nc.canonical || !nc.category ||
            (*n == *c && !kd_vec_grow_((void **)v, c, *n, sizeof **v))) {
            st = kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
            break;
        }
        kd_kernel_event *e = &(*v)[*n];
        memset(e, 0, sizeof *e);
        e->idx = (uint32_t)*n;
        e->name = k->name;
        e->pid = k->pid;
        e->tid = k->tid;
        e->ts = k->ts;
        e->dur = k->dur;
        e->end = k->ts + k->dur;
        e->corr = k->corr;
        e->ext = k->ext;
        int64_t via;
        if (e->ext == KD_NOID && e->corr != KD_NOID && kd_i64map_get(&in.corr_ext, e->corr, &via))
            e->ext = via;
        e->stream = zero ? 0 : resolve_stream(t, &in, k);
        if ((!zero && !e->stream) || !canonical_of(t, &nc, k->name, &e->canonical, &e->category)) {
            st = kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
            break;
        }
        e->kind = kd_rules_kind(kd_trace_rules(t), e->category);
        e->stage = kd_resolve_kernel_stage(&in.ann, e->ts, e->ext);
        (*n)++;
    }
    free(nc.canonical);
    free(nc.category);
    free_inputs(&in);
    if (st)
        kd_kernel_list_free(out);
    return st;
}

void kd_kernel_list_free(kd_kernel_list *l)
{
    free(l->v);
    free(l->zero);
    memset(l, 0, sizeof *l);
}


/* The stage trace events go to: the path's when it names one (reference
 * §3.4 step 3), else the event's own. */
static kd_stage stage_of(kd_stage path_stage, const kd_kernel_event *e)
{
    return path_stage != KD_STAGE_ALL ? path_stage : e->stage;
}

/* Copies the events of `stage` (every event for whole) into *dst. */
static bool take_events(const kd_kernel_event *v, size_t n, kd_stage path_stage, int stage, bool whole,
                        kd_kernel_event **dst, size_t *dst_n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += whole || stage_of(path_stage, &v[i]) == (kd_stage)stage;
    *dst = malloc((count ? count : 1) * sizeof **dst);
    if (!*dst)
        return false;
    for (size_t i = 0; i < n; i++)
        if (whole || stage_of(path_stage, &v[i]) == (kd_stage)stage)
            (*dst)[(*dst_n)++] = v[i];
    return true;
}

/* group_events_by_stage + the bundle claim of reference §3.4 for one trace,
 * with the whole-trace stage of a one-trace side when asked (divergence D7),
 * and where each of its kernels went into m->acc */
static kd_status claim_stages(kd_trace *t, kd_stage path_stage, const kd_kernel_list *ev, bool whole,
                              kd_bundle_map *m, size_t ti, kd_error *err)
{
    size_t count[KD_STAGE_COUNT] = {0, 0, 0};
    double us[KD_STAGE_COUNT] = {0, 0, 0};
    for (size_t i = 0; i < ev->n; i++) {
        count[stage_of(path_stage, &ev->v[i])]++;
        us[stage_of(path_stage, &ev->v[i])] += ev->v[i].dur;
    }
    bool others = count[KD_STAGE_EXTEND] || count[KD_STAGE_DECODE];
    m->annotated[ti] = path_stage == KD_STAGE_ALL && others;
    kd_kernel_accounting *acc = &m->acc;
    acc->read += ev->n + ev->n_zero;
    acc->zero_duration += ev->n_zero;
    acc->other_pids += ev->other_pids;
    for (int r = 0; r < KD_SKIP_COUNT; r++) {
        acc->skipped[r] += ev->skipped[r];
        acc->read += ev->skipped[r];
    }
    for (int s = 0; s < KD_STAGE_COUNT; s++) {
        if (!count[s])
            continue;
        if (s == KD_STAGE_ALL && others) {
            acc->outside += count[s]; /* reference §3.4: dropped silently */
            acc->outside_us += us[s];
            continue;
        }
        if (m->has[s]) {
            acc->unclaimed += count[s];
            acc->unclaimed_us += us[s];
            continue;
        }
        kd_bundle *b = &m->by_stage[s];
        if (!take_events(ev->v, ev->n, path_stage, s, false, &b->events, &b->n) ||
            !take_events(ev->zero, ev->n_zero, path_stage, s, false, &b->zero, &b->n_zero))
            return kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
        b->trace = t;
        b->pid = ev->pid;
        m->has[s] = true;
        acc->analysed += count[s];
    }
    if (whole && others) {
        kd_bundle *b = &m->by_stage[KD_STAGE_ALL];
        if (!take_events(ev->v, ev->n, path_stage, KD_STAGE_ALL, true, &b->events, &b->n) ||
            !take_events(ev->zero, ev->n_zero, path_stage, KD_STAGE_ALL, true, &b->zero, &b->n_zero))
            return kd_fail(err, KD_ENOMEM, "%s: out of memory", t->path);
        b->trace = t;
        b->pid = ev->pid;
        m->has[KD_STAGE_ALL] = true;
    }
    m->whole = whole && m->has[KD_STAGE_ALL];
    return KD_OK;
}

kd_status kd_build_bundle_map(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                              const char *pid_substring, kd_bundle_map *out, kd_error *err)
{
    kd_bundle_options o = {pid_substring, false};
    return kd_build_bundle_map_opts(traces, path_stages, n, &o, out, err);
}

kd_status kd_build_bundle_map_opts(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                                   const kd_bundle_options *opt, kd_bundle_map *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->annotated = calloc(n ? n : 1, sizeof *out->annotated);
    if (!out->annotated)
        return kd_fail(err, KD_ENOMEM, "out of memory");
    out->n_traces = n;
    for (size_t i = 0; i < n; i++) {
        kd_kernel_list ev;
        kd_status st = kd_extract_kernel_events(traces[i], opt->pid_substring, &ev, err);
        if (!st && ev.n)
            st = claim_stages(traces[i], path_stages[i], &ev, opt->whole_trace && n == 1, out, i, err);
        kd_kernel_list_free(&ev);
        if (st) {
            kd_bundle_map_free(out);
            return st;
        }
    }
    return KD_OK;
}

void kd_bundle_map_free(kd_bundle_map *m)
{
    for (int s = 0; s < KD_STAGE_COUNT; s++) {
        for (size_t i = 0; i < m->by_stage[s].n; i++)
            kd_counter_free(&m->by_stage[s].events[i].overlap_with);
        free(m->by_stage[s].events);
        free(m->by_stage[s].zero);
    }
    free(m->annotated);
    memset(m, 0, sizeof *m);
}

size_t kd_render_stages(const kd_bundle_map *m, kd_stage out[KD_STAGE_COUNT])
{
    size_t n = 0;
    for (int s = KD_STAGE_EXTEND; s <= KD_STAGE_DECODE; s++)
        if (m->has[s])
            out[n++] = (kd_stage)s;
    if ((!n || m->whole) && m->has[KD_STAGE_ALL])
        out[n++] = KD_STAGE_ALL;
    return n;
}

kd_bundle *kd_pick_stage_bundle(kd_bundle_map *m, kd_stage stage)
{
    if (m->has[stage])
        return &m->by_stage[stage];
    if (m->has[KD_STAGE_ALL])
        return &m->by_stage[KD_STAGE_ALL];
    int only = -1, count = 0;
    for (int s = 0; s < KD_STAGE_COUNT; s++)
        if (m->has[s]) {
            only = s;
            count++;
        }
    return count == 1 ? &m->by_stage[only] : NULL;
}
