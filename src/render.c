/* render.c — Markdown, text and CSV of one trace's triage (render.h). */
#include "config.h"

#include "kerndiff/render.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

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

/* The rendered rows of every stage, in build order. */
static kd_table_row *rendered_rows(const kd_triage *t, const kd_triage_options *opt, size_t *n)
{
    size_t total = 0;
    for (size_t s = 0; s < t->n_stages; s++)
        total += t->stages[s].rows.n;
    kd_table_row *v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t s = 0; s < t->n_stages; s++) {
        const kd_triage_stage *ts = &t->stages[s];
        for (size_t i = 0; i < ts->rows.n; i++) {
            const kd_action_row *r = &ts->rows.v[i];
            if (!kd_triage_row_rendered(opt, r))
                continue;
            v[k++] = (kd_table_row){ts->stage, r->priority, r->verdict,
                                    kd_str(ts->formal->trace->strings, r->kernel), r->python_scope,
                                    r->dependency_signal, r->recommendation, r->total_us,
                                    r->share_pct, r->exclusive_ratio, r->hidden_ratio};
        }
    }
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

bool kd_triage_write_text(const kd_triage *t, const kd_triage_options *opt, FILE *out)
{
    fprintf(out, "kerndiff triage: %s", t->formal.files.n ? t->formal.files.files[0].path : "");
    if (t->mapping != &t->formal)
        fprintf(out, " (mapping: %s)", t->mapping->files.n ? t->mapping->files.files[0].path : "");
    fputc('\n', out);
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
    for (size_t s = 0; s < t->n_stages; s++) {
        const kd_triage_stage *ts = &t->stages[s];
        for (size_t i = 0; i < ts->rows.n; i++) {
            const kd_action_row *r = &ts->rows.v[i];
            if (!kd_triage_row_rendered(opt, r))
                continue;
            const kd_aggregate *a = &ts->aggregates.v[r->aggregate];
            csv_str(out, kd_stage_name(ts->stage), false);
            csv_str(out, r->priority, false);
            csv_str(out, r->verdict, false);
            csv_str(out, kd_str(ts->formal->trace->strings, r->kernel), false);
            csv_str(out, kd_category_name(r->category), false);
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
    }
    return !ferror(out);
}
