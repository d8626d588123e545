/* triage_report.c — one trace's triage as Markdown, text, CSV and JSON (triage_report.h). */
#include "config.h"

#include "kerndiff/triage_report.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/jsonw.h"
#include "kerndiff/text.h"

char *kd_markdown_escape_cell(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '|' ? 2 : *p == '\n' ? 4 : 1;
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s; *p; p++) {
        if (*p == '|') {
            *o++ = '\\';
            *o++ = '|';
        } else if (*p == '\n') {
            memcpy(o, "<br>", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return out;
}

static const char table_header[] =
    "| Priority | Verdict | Kernel | Python scope | Formal signal | Dep risk | Recommendation |\n"
    "| --- | --- | --- | --- | --- | --- | --- |\n";

static bool write_table_row(FILE *out, const kd_table_row *r)
{
    char signal[256];
    /* f"{total_us:.1f} us, share {share_pct:.1f}%, excl {x*100:.1f}% / hid {y*100:.1f}%" */
    snprintf(signal, sizeof signal, "%.1f us, share %.1f%%, excl %.1f%% / hid %.1f%%", r->total_us,
             r->share_pct, r->exclusive_ratio * 100.0, r->hidden_ratio * 100.0);
    char *k = kd_markdown_escape_cell(r->kernel);
    char *s = kd_markdown_escape_cell(r->python_scope);
    char *g = kd_markdown_escape_cell(signal);
    bool ok = k && s && g;
    if (ok)
        fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n", r->priority, r->verdict, k, s, g,
                kd_dependency_risk_label(r->dependency_signal), r->recommendation);
    free(k);
    free(s);
    free(g);
    return ok;
}

/* reference §3.6 stage sectioning: no rows -> the placeholder table; only
 * `all` -> one table without heading; else a "##### stage" heading per stage
 * group in stage order, a blank line between groups. */
bool kd_render_overlap_table(FILE *out, const kd_table_row *rows, size_t n)
{
    fputs("Overlap Opportunity Table\n", out);
    if (!n) {
        fputs(table_header, out);
        fputs("| - | - | No rows cleared the 1.0% reporting bar. Use mapping/formal mode for overlap "
              "attribution. | - | - | - | - |\n",
              out);
        return !ferror(out);
    }
    bool only_all = true;
    for (size_t i = 0; i < n; i++)
        only_all = only_all && rows[i].stage == KD_STAGE_ALL;
    bool ok = true, first = true;
    for (int st = KD_STAGE_EXTEND; st <= KD_STAGE_ALL && ok; st++) {
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
            any = rows[i].stage == (kd_stage)st;
        if (!any)
            continue;
        if (!first)
            fputc('\n', out);
        first = false;
        if (!only_all)
            fprintf(out, "##### %s\n", kd_stage_display_name((kd_stage)st));
        fputs(table_header, out);
        for (size_t i = 0; i < n && ok; i++)
            if (rows[i].stage == (kd_stage)st)
                ok = write_table_row(out, &rows[i]);
    }
    return ok && !ferror(out);
}

/* Walks the rendered rows of every stage in build order: the next one after
 * (*s, *i), its stage in *ts; NULL at the end. Start with *s = *i = 0. */
static const kd_action_row *next_rendered(const kd_triage *t, const kd_triage_options *opt, size_t *s,
                                          size_t *i, const kd_triage_stage **ts)
{
    for (; *s < t->n_stages; (*s)++, *i = 0)
        for (*ts = &t->stages[*s]; *i < (*ts)->rows.n;) {
            const kd_action_row *r = &(*ts)->rows.v[(*i)++];
            if (kd_triage_row_rendered(opt, r))
                return r;
        }
    return NULL;
}

/* The rendered rows of every stage, in build order. */
static kd_table_row *rendered_rows(const kd_triage *t, const kd_triage_options *opt, size_t *n)
{
    size_t total = 0;
    for (size_t s = 0; s < t->n_stages; s++)
        total += t->stages[s].rows.n;
    kd_table_row *v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0, s = 0, i = 0;
    const kd_triage_stage *ts;
    for (const kd_action_row *r; (r = next_rendered(t, opt, &s, &i, &ts));)
        v[k++] = (kd_table_row){ts->stage, r->priority, r->verdict,
                                kd_str(ts->formal->trace->strings, r->kernel), r->python_scope,
                                r->dependency_signal, r->recommendation, r->total_us,
                                r->share_pct, r->exclusive_ratio, r->hidden_ratio};
    *n = k;
    return v;
}

bool kd_triage_write_markdown(const kd_triage *t, const kd_triage_options *opt, FILE *out)
{
    size_t n;
    kd_table_row *rows = rendered_rows(t, opt, &n);
    bool ok = rows && kd_render_overlap_table(out, rows, n);
    free(rows);
    return ok;
}

/* ---- text --------------------------------------------------------------- */

enum { T_PRI, T_VERDICT, T_KERNEL, T_TOTAL, T_EXPOSED, T_HIDDEN, T_SHARE, T_RISK, T_REC, T_SCOPE, T_COLS };

static const char *const text_headers[T_COLS] = {
    "PRI", "VERDICT", "KERNEL", "TOTAL_US", "EXPOSED_US", "HIDDEN_US", "SHARE%", "RISK",
    "RECOMMENDATION", "PYTHON SCOPE"};

static void fill_text_cells(const kd_triage_stage *ts, const kd_action_row *r, char cells[T_COLS][96])
{
    const kd_aggregate *a = &ts->aggregates.v[r->aggregate];
    char *k = kd_short_name(kd_str(ts->formal->trace->strings, r->kernel), 60);
    char *s = kd_short_name(r->python_scope, 60);
    snprintf(cells[T_PRI], 96, "%s", r->priority);
    snprintf(cells[T_VERDICT], 96, "%s", r->verdict);
    snprintf(cells[T_KERNEL], 96, "%s", k ? k : "");
    snprintf(cells[T_TOTAL], 96, "%.1f", r->total_us);
    snprintf(cells[T_EXPOSED], 96, "%.1f", a->exclusive_us);
    snprintf(cells[T_HIDDEN], 96, "%.1f", a->hidden_us);
    snprintf(cells[T_SHARE], 96, "%.1f", r->share_pct);
    snprintf(cells[T_RISK], 96, "%s", kd_dependency_risk_label(r->dependency_signal));
    snprintf(cells[T_REC], 96, "%s", r->recommendation);
    snprintf(cells[T_SCOPE], 96, "%s", s ? s : "");
    free(k);
    free(s);
}

static void print_text_row(FILE *out, char cells[T_COLS][96], const size_t *width)
{
    for (int c = 0; c < T_COLS; c++) {
        bool numeric = c == T_TOTAL || c == T_EXPOSED || c == T_HIDDEN || c == T_SHARE;
        size_t pad = width[c] - kd_utf8_len(cells[c]);
        if (numeric)
            fprintf(out, "%*s%s", (int)pad, "", cells[c]);
        else if (c == T_COLS - 1)
            fputs(cells[c], out);
        else
            fprintf(out, "%s%*s", cells[c], (int)pad, "");
        if (c < T_COLS - 1)
            fputs("  ", out);
    }
    fputc('\n', out);
}

/* The pid the side analysed in trace i ("" when none). */
static const char *trace_pid(const kd_side *s, size_t i)
{
    for (int st = 0; st < KD_STAGE_COUNT; st++)
        if (s->bundles.has[st] && s->bundles.by_stage[st].trace == s->traces[i] &&
            s->bundles.by_stage[st].pid)
            return kd_str(s->traces[i]->strings, s->bundles.by_stage[st].pid);
    return "";
}

/* Trace i's rank (distributedInfo, else the name) and world size, -1 unknown. */
static long trace_rank(const kd_side *s, size_t i, const char **from)
{
    const kd_trace *t = s->traces[i];
    const kd_trace_file *f = &s->files.files[i];
    *from = t->has_rank ? "distributedInfo" : f->rank >= 0 && f->rank_from ? f->rank_from : NULL;
    return t->has_rank ? (long)t->rank : f->rank;
}

bool kd_triage_write_text(const kd_triage *t, const kd_triage_options *opt, FILE *out)
{
    fprintf(out, "kerndiff triage: %s", t->formal.files.n ? t->formal.files.files[0].path : "");
    if (t->mapping != &t->formal)
        fprintf(out, " (mapping: %s)", t->mapping->files.n ? t->mapping->files.files[0].path : "");
    fputc('\n', out);
    for (size_t i = 0; i < t->formal.n; i++) {
        const char *from, *device = kd_trace_device(t->formal.traces[i], trace_pid(&t->formal, i));
        long rank = trace_rank(&t->formal, i, &from);
        fprintf(out, "read %s: rank ", t->formal.files.files[i].path);
        if (rank >= 0)
            fprintf(out, "%ld (%s)", rank, from);
        else
            fputs("unknown", out);
        if (t->formal.traces[i]->has_world_size)
            fprintf(out, " of %lld", (long long)t->formal.traces[i]->world_size);
        fprintf(out, ", device %s\n", *device ? device : "unknown");
    }
    const kd_kernel_accounting *a = &t->formal.bundles.acc;
    const kd_rules *rules = t->formal.n ? kd_trace_rules(t->formal.traces[0]) : kd_rules_reference();
    fprintf(out, "rules: %s (%s)\n", rules->name, rules->source ? rules->source : "built-in");
    fprintf(out, "stages from %s; kernels: ", t->formal.stages_how ? t->formal.stages_how : "none");
    kd_accounting_write_text(a, out);
    fputc('\n', out);
    char warn[512];
    if (kd_triage_outside_warning(t, warn, sizeof warn))
        fprintf(out, "WARNING: %s\n", warn);
    for (size_t s = 0; s < t->n_stages; s++) {
        const kd_triage_stage *ts = &t->stages[s];
        fprintf(out, "\n== %s", kd_stage_display_name(ts->stage));
        if (!ts->formal) {
            fputs(": skipped (the mapping trace has no such stage)\n", out);
            continue;
        }
        fprintf(out, ": busy %.1f us, overlap %.1f us, max %d concurrent streams, pid %s\n",
                ts->overlap.total_busy_us, ts->overlap.total_overlap_us,
                (int)ts->overlap.max_concurrent_streams,
                kd_str(ts->formal->trace->strings, ts->formal->pid));
        size_t width[T_COLS], shown = 0;
        for (int c = 0; c < T_COLS; c++)
            width[c] = strlen(text_headers[c]);
        char cells[T_COLS][96];
        for (size_t i = 0; i < ts->rows.n; i++) {
            if (!kd_triage_row_rendered(opt, &ts->rows.v[i]))
                continue;
            fill_text_cells(ts, &ts->rows.v[i], cells);
            for (int c = 0; c < T_COLS; c++)
                if (kd_utf8_len(cells[c]) > width[c])
                    width[c] = kd_utf8_len(cells[c]);
            shown++;
        }
        if (!shown) {
            fprintf(out, "(no rows cleared the %.1f%% reporting bar)\n", opt->min_share);
            continue;
        }
        char head[T_COLS][96];
        for (int c = 0; c < T_COLS; c++)
            snprintf(head[c], 96, "%s", text_headers[c]);
        print_text_row(out, head, width);
        for (size_t i = 0; i < ts->rows.n; i++) {
            if (!kd_triage_row_rendered(opt, &ts->rows.v[i]))
                continue;
            fill_text_cells(ts, &ts->rows.v[i], cells);
            print_text_row(out, cells, width);
        }
    }
    return !ferror(out);
}

/* ---- CSV ------------------------------------------------------------------ */

static void csv_str(FILE *out, const char *s, bool last)
{
    csv_fwrite(out, s, strlen(s));
    fputc(last ? '\n' : ',', out);
}

static void csv_num(FILE *out, const char *fmt, double v)
{
    fprintf(out, fmt, v);
    fputc(',', out);
}

/* One row per rendered action row; columns documented in docs/triage.md. */
bool kd_triage_write_csv(const kd_triage *t, const kd_triage_options *opt, FILE *out)
{
    static const char *const header[] = {
        "stage", "priority", "verdict", "kernel", "category", "total_us", "exposed_us",
        "hidden_us", "hidden_by_compute_us", "share_pct", "exclusive_ratio", "hidden_ratio",
        "python_scope", "launch_op", "mapping_ratio", "dependency_signal", "dependency_risk",
        "prev_neighbor", "next_neighbor", "recommendation", "suggestion", NULL};
    for (size_t i = 0; header[i]; i++)
        fprintf(out, "%s%c", header[i], header[i + 1] ? ',' : '\n');
    size_t s = 0, i = 0;
    const kd_triage_stage *ts;
    for (const kd_action_row *r; (r = next_rendered(t, opt, &s, &i, &ts));) {
        const kd_aggregate *a = &ts->aggregates.v[r->aggregate];
        csv_str(out, kd_stage_name(ts->stage), false);
        csv_str(out, r->priority, false);
        csv_str(out, r->verdict, false);
        csv_str(out, kd_str(ts->formal->trace->strings, r->kernel), false);
        csv_str(out, kd_rules_category_name(kd_trace_rules(ts->formal->trace), r->category), false);
        csv_num(out, "%.3f", r->total_us);
        csv_num(out, "%.3f", a->exclusive_us);
        csv_num(out, "%.3f", a->hidden_us);
        csv_num(out, "%.3f", a->hidden_by_compute_us);
        csv_num(out, "%.4f", r->share_pct);
        csv_num(out, "%.6f", r->exclusive_ratio);
        csv_num(out, "%.6f", r->hidden_ratio);
        csv_str(out, r->python_scope, false);
        csv_str(out, r->launch_op, false);
        csv_num(out, "%.6f", r->mapping_ratio);
        csv_str(out, r->dependency_signal, false);
        csv_str(out, kd_dependency_risk_label(r->dependency_signal), false);
        csv_str(out, r->prev_neighbor, false);
        csv_str(out, r->next_neighbor, false);
        csv_str(out, r->recommendation, false);
        csv_str(out, r->suggestion, true);
    }
    return !ferror(out);
}

/* ---- JSON: every intermediate result (conformance README field names) ---- */

/* Which file, rank, world size and device the formal side read. */
static void write_files(kd_json *j, const kd_side *s)
{
    kd_json_key(j, "formal_files");
    kd_json_array_open(j);
    for (size_t i = 0; i < s->n; i++) {
        const kd_trace *t = s->traces[i];
        const char *from, *device = kd_trace_device(t, trace_pid(s, i));
        long rank = trace_rank(s, i, &from);
        kd_json_map_open(j);
        kd_json_key(j, "path");
        kd_json_str(j, s->files.files[i].path);
        kd_json_key(j, "stages_from");
        kd_json_str(j, s->stages_from[i]);
        kd_json_key(j, "rank");
        if (rank >= 0)
            kd_json_int(j, rank);
        else
            kd_json_null(j);
        kd_json_key(j, "rank_from");
        if (from)
            kd_json_str(j, from);
        else
            kd_json_null(j);
        kd_json_key(j, "world_size");
        if (t->has_world_size)
            kd_json_int(j, t->world_size);
        else
            kd_json_null(j);
        kd_json_key(j, "device");
        if (*device)
            kd_json_str(j, device);
        else
            kd_json_null(j);
        kd_json_map_close(j);
    }
    kd_json_array_close(j);
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
    kd_json_key(j, "category"); kd_json_str(j, kd_rules_category_name(kd_trace_rules(tr), e->category));
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

static void write_aggregate(kd_json *j, const kd_trace *tr, const kd_aggregate *a)
{
    const kd_interner *s = tr->strings;
    kd_json_map_open(j);
    kd_json_key(j, "name"); kd_json_str(j, kd_str(s, a->name));
    kd_json_key(j, "category"); kd_json_str(j, kd_rules_category_name(kd_trace_rules(tr), a->category));
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
static void write_rows(kd_json *j, const kd_trace *tr, const kd_action_rows *rows,
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
        kd_json_key(j, "kernel"); kd_json_str(j, kd_str(tr->strings, r->kernel));
        kd_json_key(j, "category"); kd_json_str(j, kd_rules_category_name(kd_trace_rules(tr), r->category));
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
        write_aggregate(j, ft, &ts->aggregates.v[i]);
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
    write_rows(j, ft, &ts->rows, NULL);
    kd_json_key(j, "rendered_rows");
    write_rows(j, ft, &ts->rows, opt);
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
    write_files(&j, &t->formal);
    kd_json_key(&j, "stages_from");
    kd_json_str(&j, t->formal.stages_how ? t->formal.stages_how : "none");
    const kd_rules *rules = t->formal.n ? kd_trace_rules(t->formal.traces[0]) : kd_rules_reference();
    kd_json_key(&j, "rules");
    kd_json_map_open(&j);
    kd_json_key(&j, "name"); kd_json_str(&j, rules->name);
    kd_json_key(&j, "source"); kd_json_str(&j, rules->source ? rules->source : "built-in");
    kd_json_map_close(&j);
    kd_json_key(&j, "accounting");
    kd_accounting_write_json(&j, &t->formal.bundles.acc);
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
