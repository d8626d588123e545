/* triage.c — the per-stage loop of one trace's triage (reference §3.5). */
#include "config.h"

#include "kerndiff/triage.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/jsonw.h"

static size_t append(char *buf, size_t n, size_t at, const char *s)
{
    size_t len = strlen(s);
    if (at + 1 >= n)
        return at;
    size_t room = n - at - 1;
    if (len > room)
        len = room;
    memcpy(buf + at, s, len);
    buf[at + len] = '\0';
    return at + len;
}

/* Whether any pid seen in the side's traces contains sub. */
static bool some_pid_contains(const kd_side *s, const char *sub)
{
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->traces[i]->seen_pids.n; k++)
            if (strstr(kd_str(s->traces[i]->strings, s->traces[i]->seen_pids.v[k]), sub))
                return true;
    return false;
}

void kd_describe_no_kernels(const kd_side *s, const char *path, const char *pid_substring, char *buf,
                            size_t n)
{
    size_t at = 0;
    bool no_pid = pid_substring && *pid_substring && !some_pid_contains(s, pid_substring);
    buf[0] = '\0';
    at = append(buf, n, at, path);
    if (no_pid) {
        at = append(buf, n, at, ": no pid matches --pid '");
        at = append(buf, n, at, pid_substring);
        at = append(buf, n, at, "' (pids seen:");
    } else if (pid_substring && *pid_substring) {
        at = append(buf, n, at, ": no GPU kernels in the pids matching --pid '");
        at = append(buf, n, at, pid_substring);
        at = append(buf, n, at, "' (pids seen:");
    } else {
        at = append(buf, n, at, ": no GPU kernels found (pids seen:");
    }
    size_t shown = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->traces[i]->seen_pids.n && shown < 8; k++, shown++) {
            at = append(buf, n, at, " ");
            at = append(buf, n, at, kd_str(s->traces[i]->strings, s->traces[i]->seen_pids.v[k]));
        }
    if (!shown)
        at = append(buf, n, at, " none");
    if (no_pid) {
        append(buf, n, at, ")");
        return;
    }
    at = append(buf, n, at, "; categories seen:");
    shown = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->traces[i]->seen_cats.n && shown < 8; k++, shown++) {
            at = append(buf, n, at, " ");
            const char *c = kd_str(s->traces[i]->strings, s->traces[i]->seen_cats.v[k]);
            at = append(buf, n, at, *c ? c : "\"\"");
        }
    if (!shown)
        at = append(buf, n, at, " none");
    append(buf, n, at, ")");
}

static bool side_has_kernels(const kd_side *s)
{
    for (int i = 0; i < KD_STAGE_COUNT; i++)
        if (s->bundles.has[i])
            return true;
    return false;
}

/* One stage's formal analysis (reference §3.5 steps 3–4 and the candidate
 * lists). Each formal bundle is the exact pick of one rendered stage, so its
 * events are swept once. */
static kd_status analyse_stage(kd_triage *t, kd_triage_stage *ts, const kd_triage_options *opt,
                               kd_error *err)
{
    size_t limit = opt->limit;
    kd_bundle *b = ts->formal;
    kd_status st = kd_analyze_overlap_in(b->events, b->n, b->trace->strings, &ts->overlap, err);
    if (!st)
        st = kd_aggregate_events(b->events, b->n, &ts->aggregates, err);
    if (st)
        return st;
    ts->n_top_overlap = kd_top_overlap_opportunities(&ts->aggregates, ts->top_overlap);
    ts->n_top_low_roi = kd_top_hidden_low_roi(&ts->aggregates, ts->top_low_roi);
    /* reference §3.5 steps 5–7: the source map comes from the mapping bundle,
     * looked up with the loop stage */
    kd_kmap_lookup_fn lookup_fn = t->kernel_sites ? kd_kernel_map_lookup : NULL;
    void *lookup_ctx = t->kernel_sites ? &t->mapping_kernel_map : NULL;
    const kd_stage_payload *payload =
        t->kernel_sites ? kd_formal_payload_for(&t->formal_payloads, ts->stage) : NULL;
    if (opt->dump_internals && payload) {
        st = kd_source_map_build(ts->mapping, ts->stage, lookup_fn, lookup_ctx,
                                 &ts->sources_mapping_only, err);
        if (st)
            return st;
    }
    st = kd_source_map_build(ts->mapping, ts->stage, lookup_fn, lookup_ctx, &ts->sources, err);
    if (!st)
        st = kd_source_map_merge_payload(&ts->sources, payload, err);
    if (st)
        return st;
    kd_source_lookup lookup;
    if (!kd_source_lookup_init(&lookup, &ts->sources))
        return kd_fail(err, KD_ENOMEM, "out of memory indexing the source map");
    st = kd_build_action_rows(b, &ts->aggregates, ts->top_overlap, ts->n_top_overlap,
                              ts->top_low_roi, ts->n_top_low_roi, &lookup,
                              ts->overlap.total_busy_us, limit, &ts->rows, err);
    kd_source_lookup_free(&lookup);
    return st;
}

bool kd_triage_row_rendered(const kd_triage_options *opt, const kd_action_row *r)
{
    return r->share_pct >= opt->min_share;
}

static kd_stage *path_stages(const kd_side *s)
{
    kd_stage *v = malloc((s->n ? s->n : 1) * sizeof *v);
    for (size_t i = 0; v && i < s->n; i++)
        v[i] = s->files.files[i].stage;
    return v;
}

typedef struct {
    const kd_side *formal;
    const kd_stage *stages;
    kd_kernel_map *out;
    kd_error err;
    kd_status st;
} payload_job;

static void *build_formal_payloads(void *arg)
{
    payload_job *j = arg;
    j->st = kd_formal_payloads_build(j->formal->traces, j->stages, j->formal->n, j->out, &j->err);
    return NULL;
}

/* The two kernel-site payloads (reference §2.3): the mapping kernel map, from
 * every mapping trace, answers lookups for kernels without a scope chain; the
 * formal stage payloads are merged into each stage's source map. Together
 * they are most of the analysis after the load. A side that is its own
 * mapping side (divergence D3, the default) builds both from one pass over
 * its kernel sites: fewer instructions than the two builds, and faster than
 * the two at once on two threads, which compete for the memory both walk
 * (docs/performance.md, "What made it faster"). With a mapping trace of its own (--mapping) the
 * two read different traces: with two threads allowed (opt->load) they are
 * built at once, each reading the traces only and writing its own map. */
static kd_status build_kernel_sites(const kd_triage_options *opt, kd_triage *t, kd_error *err)
{
    t->framework = opt->framework_set
                       ? opt->framework
                       : kd_framework_detect(t->mapping->traces, t->mapping->n,
                                             opt->mapping_path ? opt->mapping_path : opt->formal_path);
    kd_stage *ms = path_stages(t->mapping), *fs = path_stages(&t->formal);
    kd_status st = ms && fs ? KD_OK : kd_fail(err, KD_ENOMEM, "out of memory");
    if (!st && t->mapping == &t->formal) {
        st = kd_kernel_sites_build_both(t->formal.traces, fs, t->formal.n, t->framework,
                                        &t->mapping_kernel_map, &t->formal_payloads, err);
        free(ms);
        free(fs);
        t->kernel_sites = st == KD_OK;
        return st;
    }
    payload_job job = {&t->formal, fs, &t->formal_payloads, {KD_OK, ""}, KD_OK};
    pthread_t th;
    bool threaded = !st && opt->load.threads >= 2 &&
                    pthread_create(&th, NULL, build_formal_payloads, &job) == 0;
    if (!st)
        st = kd_kernel_map_build(t->mapping->traces, ms, t->mapping->n, t->framework,
                                 &t->mapping_kernel_map, err);
    if (threaded)
        pthread_join(th, NULL);
    else if (!st)
        build_formal_payloads(&job);
    if (!st && job.st) {
        st = job.st;
        if (err)
            *err = job.err;
    }
    free(ms);
    free(fs);
    t->kernel_sites = st == KD_OK;
    return st;
}

kd_status kd_triage_run(const kd_triage_options *opt, kd_triage *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_status st = kd_side_load(opt->formal_path, opt->pid_substring, &opt->load, &out->formal, err);
    if (st)
        return st;
    out->mapping = &out->formal;
    if (opt->mapping_path && strcmp(opt->mapping_path, opt->formal_path) != 0) {
        st = kd_side_load(opt->mapping_path, opt->pid_substring, &opt->load, &out->mapping_own, err);
        if (st) {
            kd_triage_free(out);
            return st;
        }
        out->mapping = &out->mapping_own;
    }
    return kd_triage_analyze(opt, out, err);
}

kd_status kd_triage_analyze(const kd_triage_options *opt, kd_triage *out, kd_error *err)
{
    kd_status st;
    const kd_side *sides[2] = {&out->formal, out->mapping};
    const char *paths[2] = {opt->formal_path, opt->mapping_path ? opt->mapping_path : opt->formal_path};
    for (int i = 0; i < 2; i++)
        if (!side_has_kernels(sides[i])) {
            char msg[sizeof err->msg];
            kd_describe_no_kernels(sides[i], paths[i], opt->pid_substring, msg, sizeof msg);
            kd_triage_free(out);
            return kd_fail(err, KD_EINPUT, "%s", msg);
        }
    if (!opt->no_kernel_map && (st = build_kernel_sites(opt, out, err))) {
        kd_triage_free(out);
        return st;
    }
    kd_stage stages[KD_STAGE_COUNT];
    size_t n = kd_render_stages(&out->formal.bundles, stages);
    kd_bundle_map *mapping_bundles =
        out->mapping == &out->formal ? &out->formal.bundles : &out->mapping_own.bundles;
    for (size_t i = 0; i < n; i++) {
        if (opt->has_stage_filter && stages[i] != opt->stage_filter)
            continue;
        kd_triage_stage *ts = &out->stages[out->n_stages++];
        ts->stage = stages[i];
        ts->formal = kd_pick_stage_bundle(&out->formal.bundles, stages[i]);
        ts->mapping = kd_pick_stage_bundle(mapping_bundles, stages[i]);
        /* reference §3.5 step 2: skipped unless both sides have the stage */
        if (!ts->formal || !ts->mapping) {
            ts->formal = NULL;
            ts->mapping = NULL;
            continue;
        }
        st = analyse_stage(out, ts, opt, err);
        if (st) {
            kd_triage_free(out);
            return st;
        }
    }
    return KD_OK;
}

void kd_triage_free(kd_triage *t)
{
    for (size_t i = 0; i < t->n_stages; i++) {
        kd_aggregate_list_free(&t->stages[i].aggregates);
        kd_source_map_free(&t->stages[i].sources);
        kd_source_map_free(&t->stages[i].sources_mapping_only);
        kd_action_rows_free(&t->stages[i].rows);
    }
    kd_kernel_map_free(&t->mapping_kernel_map);
    kd_kernel_map_free(&t->formal_payloads);
    kd_side_free(&t->formal);
    kd_side_free(&t->mapping_own);
    memset(t, 0, sizeof *t);
}

static void write_paths(kd_json *j, const char *key, const kd_side *s)
{
    kd_json_key(j, key);
    kd_json_array_open(j);
    for (size_t i = 0; i < s->files.n; i++)
        kd_json_str(j, s->files.files[i].path);
    kd_json_array_close(j);
}

/* A Counter as [[key, count], ...] in insertion order (conformance README);
 * counts of launches are integers, overlap durations floats. */
static void write_counter_as(kd_json *j, const kd_interner *s, const kd_counter *c, bool integers)
{
    kd_json_array_open(j);
    for (uint32_t i = 0; i < c->n; i++) {
        kd_json_array_open(j);
        kd_json_str(j, kd_str(s, c->items[i].key));
        if (integers)
            kd_json_int(j, (int64_t)c->items[i].count);
        else
            kd_json_double(j, c->items[i].count);
        kd_json_array_close(j);
    }
    kd_json_array_close(j);
}

static void write_counter(kd_json *j, const kd_interner *s, const kd_counter *c)
{
    write_counter_as(j, s, c, false);
}

static void write_int_counter(kd_json *j, const kd_interner *s, const kd_counter *c)
{
    write_counter_as(j, s, c, true);
}

static void write_event(kd_json *j, const kd_trace *tr, const kd_kernel_event *e)
{
    const kd_interner *s = tr->strings;
    kd_json_map_open(j);
    kd_json_key(j, "idx"); kd_json_int(j, e->idx);
    kd_json_key(j, "name"); kd_json_str(j, kd_str(s, e->name));
    kd_json_key(j, "canonical_name"); kd_json_str(j, kd_str(s, e->canonical));
    kd_json_key(j, "category"); kd_json_str(j, kd_category_name(e->category));
    kd_json_key(j, "stage"); kd_json_str(j, kd_stage_name(e->stage));
    kd_json_key(j, "pid"); kd_json_str(j, kd_str(s, e->pid));
    kd_json_key(j, "tid"); kd_json_str(j, kd_str(s, e->tid));
    kd_json_key(j, "stream"); kd_json_str(j, kd_str(s, e->stream));
    kd_json_key(j, "ts"); kd_json_double(j, e->ts);
    kd_json_key(j, "dur"); kd_json_double(j, e->dur);
    kd_json_key(j, "end"); kd_json_double(j, e->end);
    kd_json_key(j, "external_id"); kd_json_opt_int(j, e->ext, KD_NOID);
    kd_json_key(j, "correlation"); kd_json_opt_int(j, e->corr, KD_NOID);
    kd_json_key(j, "hidden_us"); kd_json_double(j, e->hidden_us);
    kd_json_key(j, "exclusive_us"); kd_json_double(j, e->exclusive_us);
    kd_json_key(j, "hidden_by_compute_us"); kd_json_double(j, e->hidden_by_compute_us);
    kd_json_key(j, "overlap_with"); write_counter(j, s, &e->overlap_with);
    kd_json_map_close(j);
}

static void write_aggregate(kd_json *j, const kd_interner *s, const kd_aggregate *a)
{
    kd_json_map_open(j);
    kd_json_key(j, "name"); kd_json_str(j, kd_str(s, a->name));
    kd_json_key(j, "category"); kd_json_str(j, kd_category_name(a->category));
    kd_json_key(j, "count"); kd_json_int(j, (int64_t)a->count);
    kd_json_key(j, "total_us"); kd_json_double(j, a->total_us);
    kd_json_key(j, "hidden_us"); kd_json_double(j, a->hidden_us);
    kd_json_key(j, "exclusive_us"); kd_json_double(j, a->exclusive_us);
    kd_json_key(j, "hidden_by_compute_us"); kd_json_double(j, a->hidden_by_compute_us);
    kd_json_key(j, "hidden_ratio"); kd_json_double(j, kd_aggregate_hidden_ratio(a));
    kd_json_key(j, "exclusive_ratio"); kd_json_double(j, kd_aggregate_exclusive_ratio(a));
    kd_json_key(j, "representative_idx"); kd_json_opt_int(j, a->representative_idx, -1);
    kd_json_key(j, "overlap_with"); write_counter(j, s, &a->overlap_with);
    kd_json_map_close(j);
}

static void write_name_list(kd_json *j, const kd_interner *s, const kd_aggregate_list *l,
                            const size_t *idx, size_t n)
{
    kd_json_array_open(j);
    for (size_t i = 0; i < n; i++)
        kd_json_str(j, kd_str(s, l->v[idx[i]].name));
    kd_json_array_close(j);
}

/* with_best: the derived fields (mapping_ratio, best_*), which the
 * conformance outputs carry only for the merged map */
static void write_source_map(kd_json *j, const kd_source_map *sm, bool with_best)
{
    kd_json_map_open(j);
    for (size_t i = 0; i < sm->n; i++) {
        const kd_source_stats *s = &sm->v[i];
        kd_json_key(j, kd_str(sm->strings, s->name));
        kd_json_map_open(j);
        kd_json_key(j, "total_count"); kd_json_int(j, (int64_t)s->total_count);
        kd_json_key(j, "mapped_count"); kd_json_int(j, (int64_t)s->mapped_count);
        if (with_best) {
            const char *b;
            kd_json_key(j, "mapping_ratio"); kd_json_double(j, kd_source_stats_mapping_ratio(s));
            kd_json_key(j, "best_scope");
            (b = kd_source_stats_best(sm, &s->scope)) ? kd_json_str(j, b) : kd_json_null(j);
            kd_json_key(j, "best_chain");
            (b = kd_source_stats_best(sm, &s->chain)) ? kd_json_str(j, b) : kd_json_null(j);
            kd_json_key(j, "best_launch_op");
            (b = kd_source_stats_best(sm, &s->launch_op)) ? kd_json_str(j, b) : kd_json_null(j);
        }
        kd_json_key(j, "scope_counter"); write_int_counter(j, sm->strings, &s->scope);
        kd_json_key(j, "chain_counter"); write_int_counter(j, sm->strings, &s->chain);
        kd_json_key(j, "launch_op_counter"); write_int_counter(j, sm->strings, &s->launch_op);
        kd_json_key(j, "site_share_counter"); write_int_counter(j, sm->strings, &s->site_share);
        kd_json_map_close(j);
    }
    kd_json_map_close(j);
}

/* action rows; with opt, only those that clear the render bar */
static void write_rows(kd_json *j, const kd_interner *s, const kd_action_rows *rows,
                       const kd_triage_options *opt)
{
    kd_json_array_open(j);
    for (size_t i = 0; i < rows->n; i++) {
        const kd_action_row *r = &rows->v[i];
        if (opt && !kd_triage_row_rendered(opt, r))
            continue;
        kd_json_map_open(j);
        kd_json_key(j, "priority"); kd_json_str(j, r->priority);
        kd_json_key(j, "verdict"); kd_json_str(j, r->verdict);
        kd_json_key(j, "kernel"); kd_json_str(j, kd_str(s, r->kernel));
        kd_json_key(j, "category"); kd_json_str(j, kd_category_name(r->category));
        kd_json_key(j, "total_us"); kd_json_double(j, r->total_us);
        kd_json_key(j, "share_pct"); kd_json_double(j, r->share_pct);
        kd_json_key(j, "exclusive_ratio"); kd_json_double(j, r->exclusive_ratio);
        kd_json_key(j, "hidden_ratio"); kd_json_double(j, r->hidden_ratio);
        kd_json_key(j, "python_scope"); kd_json_str(j, r->python_scope);
        kd_json_key(j, "launch_op"); kd_json_str(j, r->launch_op);
        kd_json_key(j, "mapping_ratio"); kd_json_double(j, r->mapping_ratio);
        kd_json_key(j, "dependency_signal"); kd_json_str(j, r->dependency_signal);
        kd_json_key(j, "prev_neighbor"); kd_json_str(j, r->prev_neighbor);
        kd_json_key(j, "next_neighbor"); kd_json_str(j, r->next_neighbor);
        kd_json_key(j, "recommendation"); kd_json_str(j, r->recommendation);
        kd_json_key(j, "suggestion"); kd_json_str(j, r->suggestion);
        kd_json_key(j, "representative_idx"); kd_json_opt_int(j, r->representative_idx, -1);
        kd_json_map_close(j);
    }
    kd_json_array_close(j);
}

static void write_stage(kd_json *j, const kd_triage_stage *ts, const kd_triage_options *opt)
{
    if (!ts->formal) {
        kd_json_null(j);
        return;
    }
    const kd_trace *ft = ts->formal->trace, *mt = ts->mapping->trace;
    kd_json_map_open(j);
    kd_json_key(j, "formal_pid"); kd_json_str(j, kd_str(ft->strings, ts->formal->pid));
    kd_json_key(j, "mapping_pid"); kd_json_str(j, kd_str(mt->strings, ts->mapping->pid));
    kd_json_key(j, "formal_trace"); kd_json_str(j, ft->path);
    kd_json_key(j, "mapping_trace"); kd_json_str(j, mt->path);
    kd_json_key(j, "overlap_stats");
    kd_json_map_open(j);
    kd_json_key(j, "total_busy_us"); kd_json_double(j, ts->overlap.total_busy_us);
    kd_json_key(j, "total_overlap_us"); kd_json_double(j, ts->overlap.total_overlap_us);
    kd_json_key(j, "max_concurrent_streams"); kd_json_double(j, ts->overlap.max_concurrent_streams);
    kd_json_map_close(j);
    kd_json_key(j, "aggregates");
    kd_json_array_open(j);
    for (size_t i = 0; i < ts->aggregates.n; i++)
        write_aggregate(j, ft->strings, &ts->aggregates.v[i]);
    kd_json_array_close(j);
    kd_json_key(j, "top_overlap_opportunities");
    write_name_list(j, ft->strings, &ts->aggregates, ts->top_overlap, ts->n_top_overlap);
    kd_json_key(j, "top_hidden_low_roi");
    write_name_list(j, ft->strings, &ts->aggregates, ts->top_low_roi, ts->n_top_low_roi);
    if (opt->dump_internals) {
        /* without a formal payload the map before and after the merge are one */
        kd_json_key(j, "source_map_mapping_only");
        write_source_map(j, ts->sources_mapping_only.strings ? &ts->sources_mapping_only : &ts->sources,
                         false);
    }
    kd_json_key(j, "source_map");
    write_source_map(j, &ts->sources, true);
    kd_json_key(j, "action_rows");
    write_rows(j, ft->strings, &ts->rows, NULL);
    kd_json_key(j, "rendered_rows");
    write_rows(j, ft->strings, &ts->rows, opt);
    if (opt->dump_internals) {
        kd_json_key(j, "events");
        kd_json_array_open(j);
        for (size_t i = 0; i < ts->formal->n; i++)
            write_event(j, ft, &ts->formal->events[i]);
        kd_json_array_close(j);
    }
    kd_json_map_close(j);
}

bool kd_triage_write_json(const kd_triage *t, const kd_triage_options *opt, FILE *out)
{
    kd_json j;
    if (!kd_json_open(&j, out, false))
        return false;
    kd_json_map_open(&j);
    kd_json_key(&j, "schema"); kd_json_str(&j, "kerndiff.triage/1");
    write_paths(&j, "mapping_traces", t->mapping);
    write_paths(&j, "formal_traces", &t->formal);
    if (opt->dump_internals) {
        kd_json_key(&j, "mapping_kernel_map");
        if (t->kernel_sites)
            kd_kernel_map_write_json(&j, &t->mapping_kernel_map);
        else
            kd_json_null(&j);
        kd_json_key(&j, "formal_stage_payloads");
        if (t->kernel_sites) {
            kd_kernel_map_write_json(&j, &t->formal_payloads);
        } else {
            kd_json_map_open(&j);
            kd_json_map_close(&j);
        }
    }
    kd_json_key(&j, "stages");
    kd_json_map_open(&j);
    for (size_t i = 0; i < t->n_stages; i++) {
        kd_json_key(&j, kd_stage_name(t->stages[i].stage));
        write_stage(&j, &t->stages[i], opt);
    }
    kd_json_map_close(&j);
    kd_json_map_close(&j);
    bool ok = !j.failed;
    if (fputc('\n', out) == EOF)
        ok = false;
    return kd_json_close(&j) && ok;
}
