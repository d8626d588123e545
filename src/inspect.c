/* inspect.c — the `kerndiff inspect` report (inspect.h). */
#include "config.h"

#include "kerndiff/inspect.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/jsonw.h"

/* A string -> index set, for merging pids and streams across traces. */
typedef struct {
    kd_interner *names;
} str_index;

static long index_of(str_index *ix, const char *s, size_t *count)
{
    uint32_t before = kd_interner_count(ix->names);
    kd_sid id = kd_intern_cstr(ix->names, s);
    if (!id)
        return -1;
    if (kd_interner_count(ix->names) != before)
        (*count)++;
    return (long)id - 1;
}

static bool collect_pids(kd_inspect *r, str_index *ix)
{
    size_t cap = 0;
    for (size_t i = 0; i < r->side->n; i++) {
        const kd_trace *t = r->side->traces[i];
        for (size_t k = 0; k < t->kernels.n; k++) {
            const kd_kernel_rec *kr = &t->kernels.v[k];
            if (!(kr->flags & KD_KF_OH_KERNEL))
                continue;
            size_t n = r->n_pids;
            long at = index_of(ix, kd_str(t->strings, kr->pid), &n);
            if (at < 0)
                return false;
            if (n != r->n_pids) {
                if (n > cap && !kd_vec_grow_((void **)&r->pids, &cap, r->n_pids, sizeof *r->pids))
                    return false;
                r->pids[at] = (kd_inspect_pid){strdup(kd_str(t->strings, kr->pid)), 0.0, 0};
                r->n_pids = n;
                if (!r->pids[at].pid)
                    return false;
            }
            r->pids[at].kernel_us += kr->dur;
            r->pids[at].kernels++;
        }
    }
    return true;
}

typedef struct {
    size_t stream;
    double ts, end;
} interval;

static int cmp_interval(const void *pa, const void *pb)
{
    const interval *a = pa, *b = pb;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

static bool collect_streams(kd_inspect *r, str_index *ix)
{
    size_t total = 0, cap = 0;
    /* every kernel of the pid once: the whole-trace stage when there is one */
    const kd_bundle_map *m = &r->side->bundles;
    int first = m->whole ? KD_STAGE_ALL : 0;
    for (int s = first; s < KD_STAGE_COUNT; s++)
        total += m->has[s] ? m->by_stage[s].n : 0;
    interval *iv = malloc((total ? total : 1) * sizeof *iv);
    if (!iv)
        return false;
    size_t k = 0;
    for (int s = first; s < KD_STAGE_COUNT; s++) {
        const kd_bundle *b = &m->by_stage[s];
        if (!m->has[s])
            continue;
        for (size_t i = 0; i < b->n; i++) {
            const kd_kernel_event *e = &b->events[i];
            const char *name = kd_str(b->trace->strings, e->stream);
            size_t n = r->n_streams;
            long at = index_of(ix, name, &n);
            if (at < 0 || (n > cap && !kd_vec_grow_((void **)&r->streams, &cap, r->n_streams,
                                                    sizeof *r->streams))) {
                free(iv);
                return false;
            }
            if (n != r->n_streams) {
                r->streams[at] = (kd_inspect_stream){strdup(name), 0, 0.0};
                r->n_streams = n;
            }
            r->streams[at].kernels++;
            r->cat_launches[e->category]++;
            r->cat_total_us[e->category] += e->dur;
            iv[k++] = (interval){(size_t)at, e->ts, e->end};
        }
    }
    /* busy time: the union of each stream's intervals */
    qsort(iv, k, sizeof *iv, cmp_interval);
    for (size_t i = 0; i < k;) {
        size_t s = iv[i].stream;
        double lo = iv[i].ts, hi = iv[i].end;
        for (i++; i < k && iv[i].stream == s; i++) {
            if (iv[i].ts > hi) {
                r->streams[s].busy_us += hi - lo;
                lo = iv[i].ts;
            }
            if (iv[i].end > hi)
                hi = iv[i].end;
        }
        r->streams[s].busy_us += hi - lo;
    }
    free(iv);
    return true;
}

static void collect_counts(kd_inspect *r)
{
    for (size_t i = 0; i < r->side->n; i++) {
        const kd_trace *t = r->side->traces[i];
        r->events_read += t->events_read;
        r->complete_events += t->complete_events;
        for (size_t k = 0; k < t->kernels.n; k++)
            r->kernel_records += (t->kernels.v[k].flags & (KD_KF_OH_KERNEL | KD_KF_KH_KERNEL)) != 0;
        for (size_t k = 0; k < t->seen_cats.n; k++)
            if (strcmp(kd_str(t->strings, t->seen_cats.v[k]), "Operator") == 0)
                r->legacy_cpu_ops += t->seen_cat_counts.v[k];
        r->cpu_ops += t->cpu_ops.n;
        r->frames += t->frames.n;
        r->launches += t->launches.n;
        r->annotations += t->annotations.n;
        r->thread_names += t->thread_names.n;
        for (int k = 0; k < KD_SKIP_COUNT; k++)
            r->skipped[k] += t->skipped[k];
    }
}

static void collect_stages(kd_inspect *r)
{
    const kd_bundle_map *m = &r->side->bundles;
    bool others = m->has[KD_STAGE_EXTEND] || m->has[KD_STAGE_DECODE];
    for (int s = 0; s < KD_STAGE_COUNT; s++) {
        const kd_bundle *b = &m->by_stage[s];
        /* the reference's stages: the whole trace is in the accounting */
        if (!m->has[s] || (s == KD_STAGE_ALL && m->whole && others))
            continue;
        const char *how = "none";
        for (size_t i = 0; i < r->side->files.n; i++)
            if (strcmp(r->side->files.files[i].path, b->trace->path) == 0)
                how = r->side->files.files[i].stage != KD_STAGE_ALL ? "path"
                      : s != KD_STAGE_ALL                          ? "annotation"
                                                                   : "none";
        r->stages[r->n_stages++] = (kd_inspect_stage){(kd_stage)s, b->n, how, b->trace->path};
    }
}

static const char *why_chosen(const char *pid, const char *pid_substring)
{
    if (pid_substring && *pid_substring)
        return "the pid matching --pid with the most kernel time";
    if (strstr(pid, "TP00"))
        return "contains TP00 (rank-0 preference) with the most kernel time";
    return "the most kernel time";
}

kd_status kd_inspect_build(const kd_side *side, const char *pid_substring, kd_inspect *out,
                           kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->side = side;
    out->rules = side->n ? kd_trace_rules(side->traces[0]) : kd_rules_reference();
    out->pid_substring = pid_substring;
    str_index pids = {kd_interner_new()}, streams = {kd_interner_new()};
    bool ok = pids.names && streams.names && collect_pids(out, &pids) &&
              collect_streams(out, &streams);
    kd_interner_free(pids.names);
    kd_interner_free(streams.names);
    if (!ok) {
        kd_inspect_free(out);
        return kd_fail(err, KD_ENOMEM, "out of memory building the inspect report");
    }
    collect_counts(out);
    collect_stages(out);
    out->acc = side->bundles.acc;
    out->steps_cpu = kd_side_profiler_steps(side, false);
    out->steps_gpu = kd_side_profiler_steps(side, true);
    out->steps = out->steps_cpu ? out->steps_cpu : out->steps_gpu;
    for (int s = 0; s < 3 && !out->chosen_pid; s++)
        if (side->bundles.has[s]) {
            const kd_bundle *b = &side->bundles.by_stage[s];
            out->chosen_pid = strdup(kd_str(b->trace->strings, b->pid));
            out->chosen_why = why_chosen(out->chosen_pid ? out->chosen_pid : "", pid_substring);
        }
    return KD_OK;
}

void kd_inspect_free(kd_inspect *r)
{
    for (size_t i = 0; i < r->n_pids; i++)
        free(r->pids[i].pid);
    for (size_t i = 0; i < r->n_streams; i++)
        free(r->streams[i].stream);
    free(r->pids);
    free(r->streams);
    free(r->chosen_pid);
    memset(r, 0, sizeof *r);
}

/* A file's rank and world size as text ("0 (distributedInfo)", "unknown"). */
static void file_rank(const kd_side *s, size_t i, char *rank, size_t rn, char *world, size_t wn)
{
    const kd_trace *t = s->traces[i];
    const kd_trace_file *f = &s->files.files[i];
    if (t->has_rank)
        snprintf(rank, rn, "%lld (distributedInfo)", (long long)t->rank);
    else if (f->rank >= 0)
        snprintf(rank, rn, "%ld (%s)", f->rank, f->rank_from ? f->rank_from : "file name");
    else
        snprintf(rank, rn, "unknown");
    if (t->has_world_size)
        snprintf(world, wn, "%lld", (long long)t->world_size);
    else
        snprintf(world, wn, "unknown");
}

static bool has_communication(const kd_inspect *r)
{
    int c = kd_rules_category_index(r->rules, "communication");
    return c >= 0 && r->cat_launches[c] > 0;
}

bool kd_inspect_write_text(const kd_inspect *r, FILE *out)
{
    const kd_side *s = r->side;
    fprintf(out, "Files (%s):\n", s->files.how ? s->files.how : "");
    for (size_t i = 0; i < s->n; i++) {
        const kd_trace *t = s->traces[i];
        fprintf(out, "  %s  [%s, %s, %.1f MB JSON]\n", t->path, t->compression ? t->compression : "plain",
                t->shape == KD_SHAPE_LIST ? "bare list" : "{\"traceEvents\": [...]}",
                (double)t->bytes_json / 1e6);
        char rank[64], world[64];
        file_rank(s, i, rank, sizeof rank, world, sizeof world);
        const char *device = kd_trace_device(t, r->chosen_pid ? r->chosen_pid : "");
        fprintf(out, "    rank %s, world size %s, device %s\n", rank, world, *device ? device : "unknown");
    }
    fprintf(out, "Events: %llu read, %llu complete (ph X), %llu kernel-like kept, %llu skipped\n",
            (unsigned long long)r->events_read, (unsigned long long)r->complete_events,
            (unsigned long long)r->kernel_records,
            (unsigned long long)(r->skipped[0] + r->skipped[1] + r->skipped[2] + r->skipped[3] +
                                 r->skipped[4] + r->skipped[5] + r->skipped[6] + r->skipped[7]));
    for (int k = 0; k < KD_SKIP_COUNT; k++)
        if (r->skipped[k])
            fprintf(out, "  skipped %-12s %llu\n", kd_skip_reason_name((kd_skip_reason)k),
                    (unsigned long long)r->skipped[k]);
    fprintf(out, "Pids with GPU kernels:\n");
    for (size_t i = 0; i < r->n_pids; i++)
        fprintf(out, "  %-24s %8llu kernels %14.1f us%s\n", r->pids[i].pid,
                (unsigned long long)r->pids[i].kernels, r->pids[i].kernel_us,
                r->chosen_pid && strcmp(r->pids[i].pid, r->chosen_pid) == 0 ? "  <- chosen" : "");
    if (r->chosen_pid)
        fprintf(out, "Chosen pid: %s (%s)\n", r->chosen_pid, r->chosen_why);
    else
        fprintf(out, "Chosen pid: none (no GPU kernels)\n");
    fprintf(out, "Streams (chosen pid):\n");
    for (size_t i = 0; i < r->n_streams; i++)
        fprintf(out, "  %-24s %8llu kernels %14.1f us busy\n", r->streams[i].stream,
                (unsigned long long)r->streams[i].kernels, r->streams[i].busy_us);
    const kd_kernel_accounting *a = &r->acc;
    fputs("Kernels of the chosen pid: ", out);
    kd_accounting_write_text(a, out);
    fputc('\n', out);
    if (a->outside)
        fprintf(out, "warning: %llu kernels (%.1f us) are outside every stage annotation: a diff compares "
                     "them in its whole-trace stage all only\n",
                (unsigned long long)a->outside, a->outside_us);
    fprintf(out, "Stages:\n");
    for (size_t i = 0; i < r->n_stages; i++)
        fprintf(out, "  %-16s %8llu kernels (from %s)\n", kd_stage_display_name(r->stages[i].stage),
                (unsigned long long)r->stages[i].kernels, r->stages[i].how);
    fprintf(out, "Kernels by category (chosen pid):\n");
    for (size_t c = 0; c < r->rules->n_categories && c < KD_CAT_MAX; c++)
        fprintf(out, "  %-14s %8llu launches %14.1f us\n", kd_rules_category_name(r->rules, (kd_category)c),
                (unsigned long long)r->cat_launches[c], r->cat_total_us[c]);
    fprintf(out, "CPU side: %llu cpu_ops%s, %llu python frames, %llu CUDA launches, "
                 "%llu stage annotations, %llu thread names\n",
            (unsigned long long)(r->cpu_ops + r->legacy_cpu_ops),
            r->legacy_cpu_ops ? " (2021 category Operator)" : "", (unsigned long long)r->frames,
            (unsigned long long)r->launches, (unsigned long long)r->annotations,
            (unsigned long long)r->thread_names);
    fprintf(out, "Rules: %s (%s)\n", r->rules->name, r->rules->source ? r->rules->source : "built-in");
    fprintf(out, "ProfilerStep markers: %llu steps (%llu CPU, %llu GPU annotations)\n",
            (unsigned long long)r->steps, (unsigned long long)r->steps_cpu,
            (unsigned long long)r->steps_gpu);
    if (!has_communication(r))
        fprintf(out, "warning: no communication kernels (NCCL etc.) on the chosen pid: "
                     "exposed-communication figures and the CI gate will have nothing to compare\n");
    return !ferror(out);
}

bool kd_inspect_write_json(const kd_inspect *r, FILE *out)
{
    const kd_side *s = r->side;
    kd_json j;
    if (!kd_json_open(&j, out, true))
        return false;
    kd_json_map_open(&j);
    kd_json_key(&j, "schema"); kd_json_str(&j, "kerndiff.inspect/1");
    kd_json_key(&j, "resolution"); kd_json_str(&j, s->files.how ? s->files.how : "");
    kd_json_key(&j, "files");
    kd_json_array_open(&j);
    for (size_t i = 0; i < s->n; i++) {
        const kd_trace *t = s->traces[i];
        kd_json_map_open(&j);
        kd_json_key(&j, "path"); kd_json_str(&j, t->path);
        kd_json_key(&j, "gzip"); kd_json_bool(&j, t->gzip);
        kd_json_key(&j, "compression"); kd_json_str(&j, t->compression ? t->compression : "plain");
        kd_json_key(&j, "shape"); kd_json_str(&j, t->shape == KD_SHAPE_LIST ? "list" : "object");
        kd_json_key(&j, "json_bytes"); kd_json_int(&j, (int64_t)t->bytes_json);
        kd_json_key(&j, "rank");
        if (t->has_rank)
            kd_json_int(&j, t->rank);
        else if (s->files.files[i].rank >= 0)
            kd_json_int(&j, s->files.files[i].rank);
        else
            kd_json_null(&j);
        kd_json_key(&j, "rank_from");
        if (t->has_rank || (s->files.files[i].rank >= 0 && s->files.files[i].rank_from))
            kd_json_str(&j, t->has_rank ? "distributedInfo" : s->files.files[i].rank_from);
        else
            kd_json_null(&j);
        kd_json_key(&j, "world_size");
        if (t->has_world_size)
            kd_json_int(&j, t->world_size);
        else
            kd_json_null(&j);
        const char *device = kd_trace_device(t, r->chosen_pid ? r->chosen_pid : "");
        kd_json_key(&j, "device");
        if (*device)
            kd_json_str(&j, device);
        else
            kd_json_null(&j);
        kd_json_map_close(&j);
    }
    kd_json_array_close(&j);
    kd_json_key(&j, "events");
    kd_json_map_open(&j);
    kd_json_key(&j, "read"); kd_json_int(&j, (int64_t)r->events_read);
    kd_json_key(&j, "complete"); kd_json_int(&j, (int64_t)r->complete_events);
    kd_json_key(&j, "kernel_like"); kd_json_int(&j, (int64_t)r->kernel_records);
    kd_json_key(&j, "cpu_ops"); kd_json_int(&j, (int64_t)(r->cpu_ops + r->legacy_cpu_ops));
    kd_json_key(&j, "legacy_cpu_ops"); kd_json_int(&j, (int64_t)r->legacy_cpu_ops);
    kd_json_key(&j, "python_frames"); kd_json_int(&j, (int64_t)r->frames);
    kd_json_key(&j, "cuda_launches"); kd_json_int(&j, (int64_t)r->launches);
    kd_json_key(&j, "stage_annotations"); kd_json_int(&j, (int64_t)r->annotations);
    kd_json_key(&j, "thread_names"); kd_json_int(&j, (int64_t)r->thread_names);
    kd_json_map_close(&j);
    kd_json_key(&j, "skipped");
    kd_json_map_open(&j);
    for (int k = 0; k < KD_SKIP_COUNT; k++) {
        kd_json_key(&j, kd_skip_reason_name((kd_skip_reason)k));
        kd_json_int(&j, (int64_t)r->skipped[k]);
    }
    kd_json_map_close(&j);
    const kd_kernel_accounting *a = &r->acc;
    kd_json_key(&j, "accounting");
    kd_accounting_write_json(&j, a);
    kd_json_key(&j, "chosen_pid");
    if (r->chosen_pid)
        kd_json_str(&j, r->chosen_pid);
    else
        kd_json_null(&j);
    kd_json_key(&j, "chosen_why"); kd_json_str(&j, r->chosen_why ? r->chosen_why : "no GPU kernels");
    kd_json_key(&j, "pids");
    kd_json_array_open(&j);
    for (size_t i = 0; i < r->n_pids; i++) {
        kd_json_map_open(&j);
        kd_json_key(&j, "pid"); kd_json_str(&j, r->pids[i].pid);
        kd_json_key(&j, "kernels"); kd_json_int(&j, (int64_t)r->pids[i].kernels);
        kd_json_key(&j, "kernel_us"); kd_json_double(&j, r->pids[i].kernel_us);
        kd_json_map_close(&j);
    }
    kd_json_array_close(&j);
    kd_json_key(&j, "streams");
    kd_json_array_open(&j);
    for (size_t i = 0; i < r->n_streams; i++) {
        kd_json_map_open(&j);
        kd_json_key(&j, "stream"); kd_json_str(&j, r->streams[i].stream);
        kd_json_key(&j, "kernels"); kd_json_int(&j, (int64_t)r->streams[i].kernels);
        kd_json_key(&j, "busy_us"); kd_json_double(&j, r->streams[i].busy_us);
        kd_json_map_close(&j);
    }
    kd_json_array_close(&j);
    kd_json_key(&j, "stages");
    kd_json_array_open(&j);
    for (size_t i = 0; i < r->n_stages; i++) {
        kd_json_map_open(&j);
        kd_json_key(&j, "stage"); kd_json_str(&j, kd_stage_name(r->stages[i].stage));
        kd_json_key(&j, "kernels"); kd_json_int(&j, (int64_t)r->stages[i].kernels);
        kd_json_key(&j, "from"); kd_json_str(&j, r->stages[i].how);
        kd_json_key(&j, "trace"); kd_json_str(&j, r->stages[i].trace);
        kd_json_map_close(&j);
    }
    kd_json_array_close(&j);
    kd_json_key(&j, "categories");
    kd_json_map_open(&j);
    for (size_t c = 0; c < r->rules->n_categories && c < KD_CAT_MAX; c++) {
        kd_json_key(&j, kd_rules_category_name(r->rules, (kd_category)c));
        kd_json_map_open(&j);
        kd_json_key(&j, "launches"); kd_json_int(&j, (int64_t)r->cat_launches[c]);
        kd_json_key(&j, "total_us"); kd_json_double(&j, r->cat_total_us[c]);
        kd_json_map_close(&j);
    }
    kd_json_map_close(&j);
    kd_json_key(&j, "steps"); kd_json_int(&j, (int64_t)r->steps);
    kd_json_key(&j, "rules");
    kd_json_map_open(&j);
    kd_json_key(&j, "name"); kd_json_str(&j, r->rules->name);
    kd_json_key(&j, "source"); kd_json_str(&j, r->rules->source ? r->rules->source : "built-in");
    kd_json_map_close(&j);
    kd_json_key(&j, "warnings");
    kd_json_array_open(&j);
    if (!has_communication(r))
        kd_json_str(&j, "no communication kernels on the chosen pid");
    if (a->outside) {
        char w[256];
        snprintf(w, sizeof w, "%llu kernels (%.1f us) are outside every stage annotation",
                 (unsigned long long)a->outside, a->outside_us);
        kd_json_str(&j, w);
    }
    kd_json_array_close(&j);
    kd_json_map_close(&j);
    bool ok = !j.failed && fputc('\n', out) != EOF;
    return kd_json_close(&j) && ok;
}
