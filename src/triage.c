/* triage.c — the per-stage loop of one trace's triage (reference §3.5). */
#include "config.h"

#include "kerndiff/triage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    /* after the rows, which stay the reference's: kernels without a
     * duration count as launches (divergence D7) */
    if (!st && opt->zero_duration_launches)
        st = kd_aggregate_add_launches(&ts->aggregates, b->zero, b->n_zero, err);
    return st;
}

bool kd_triage_row_rendered(const kd_triage_options *opt, const kd_action_row *r)
{
    return r->share_pct >= opt->min_share;
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
    /* the stages the bundles were built with (side.h: the path's, unless
     * the stages are decided from the content) */
    const kd_stage *ms = t->mapping->stages, *fs = t->formal.stages;
    kd_status st = KD_OK;
    if (t->mapping == &t->formal) {
        st = kd_kernel_sites_build_both(t->formal.traces, fs, t->formal.n, t->framework,
                                        &t->mapping_kernel_map, &t->formal_payloads, err);
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
    t->kernel_sites = st == KD_OK;
    return st;
}

kd_status kd_triage_run(const kd_triage_options *opt, kd_triage *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    kd_side_options so = {opt->pid_substring, &opt->load, opt->stage_basis, opt->whole_trace};
    kd_status st = kd_side_open(opt->formal_path, &so, &out->formal, err);
    if (st)
        return st;
    out->mapping = &out->formal;
    if (opt->mapping_path && strcmp(opt->mapping_path, opt->formal_path) != 0) {
        st = kd_side_open(opt->mapping_path, &so, &out->mapping_own, err);
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

bool kd_triage_outside_warning(const kd_triage *t, char *buf, size_t n)
{
    const kd_kernel_accounting *a = &t->formal.bundles.acc;
    if (!a->outside && !a->unclaimed)
        return false;
    snprintf(buf, n,
             "%llu of %llu kernels (%.1f us) are in no table: %llu outside every stage annotation, "
             "%llu in a stage an earlier file holds (kerndiff diff compares them in its "
             "whole-trace stage all)",
             (unsigned long long)(a->outside + a->unclaimed), (unsigned long long)a->read,
             a->outside_us + a->unclaimed_us, (unsigned long long)a->outside,
             (unsigned long long)a->unclaimed);
    return true;
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
