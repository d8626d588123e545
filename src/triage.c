/* triage.c — the per-stage loop of one trace's triage (reference §3.5). */
#include "config.h"

#include "kerndiff/triage.h"

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

void kd_describe_no_kernels(const kd_side *s, const char *path, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    at = append(buf, n, at, path);
    at = append(buf, n, at, ": no GPU kernels found (pids seen:");
    size_t shown = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->traces[i]->seen_pids.n && shown < 8; k++, shown++) {
            at = append(buf, n, at, " ");
            at = append(buf, n, at, kd_str(s->traces[i]->strings, s->traces[i]->seen_pids.v[k]));
        }
    if (!shown)
        at = append(buf, n, at, " none");
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
    for (int i = 0; i < 3; i++)
        if (s->bundles.has[i])
            return true;
    return false;
}

/* One stage's formal analysis (reference §3.5 steps 3–4 and the candidate
 * lists). Each formal bundle is the exact pick of one rendered stage, so its
 * events are swept once. */
static kd_status analyse_stage(kd_triage_stage *ts, kd_error *err)
{
    kd_bundle *b = ts->formal;
    kd_status st = kd_analyze_overlap(b->events, b->n, &ts->overlap, err);
    if (!st)
        st = kd_aggregate_events(b->events, b->n, &ts->aggregates, err);
    if (st)
        return st;
    ts->n_top_overlap = kd_top_overlap_opportunities(&ts->aggregates, ts->top_overlap);
    ts->n_top_low_roi = kd_top_hidden_low_roi(&ts->aggregates, ts->top_low_roi);
    return KD_OK;
}

kd_status kd_triage_run(const kd_triage_options *opt, kd_triage *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_status st = kd_side_load(opt->formal_path, opt->pid_substring, &out->formal, err);
    if (st)
        return st;
    out->mapping = &out->formal;
    if (opt->mapping_path && strcmp(opt->mapping_path, opt->formal_path) != 0) {
        st = kd_side_load(opt->mapping_path, opt->pid_substring, &out->mapping_own, err);
        if (st) {
            kd_triage_free(out);
            return st;
        }
        out->mapping = &out->mapping_own;
    }
    const kd_side *sides[2] = {&out->formal, out->mapping};
    const char *paths[2] = {opt->formal_path, opt->mapping_path ? opt->mapping_path : opt->formal_path};
    for (int i = 0; i < 2; i++)
        if (!side_has_kernels(sides[i])) {
            char msg[sizeof err->msg];
            kd_describe_no_kernels(sides[i], paths[i], msg, sizeof msg);
            kd_triage_free(out);
            return kd_fail(err, KD_EINPUT, "%s", msg);
        }
    kd_stage stages[3];
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
        st = analyse_stage(ts, err);
        if (st) {
            kd_triage_free(out);
            return st;
        }
    }
    return KD_OK;
}

void kd_triage_free(kd_triage *t)
{
    for (size_t i = 0; i < t->n_stages; i++)
        kd_aggregate_list_free(&t->stages[i].aggregates);
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

/* A Counter as [[key, count], ...] in insertion order (conformance README). */
static void write_counter(kd_json *j, const kd_interner *s, const kd_counter *c)
{
    kd_json_array_open(j);
    for (uint32_t i = 0; i < c->n; i++) {
        kd_json_array_open(j);
        kd_json_str(j, kd_str(s, c->items[i].key));
        kd_json_double(j, c->items[i].count);
        kd_json_array_close(j);
    }
    kd_json_array_close(j);
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
