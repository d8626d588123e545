/* triage_report.h — one trace's triage report: the reference's "Overlap Opportunity
 * Table" as Markdown (reference §3.6, byte for byte), an aligned terminal
 * table, and CSV (libcsv quoting) of the rendered rows. */
#ifndef KERNDIFF_TRIAGE_REPORT_H
#define KERNDIFF_TRIAGE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "kerndiff/triage.h"

/* One row as rendered: the fields the table shows. */
typedef struct {
    kd_stage stage;
    const char *priority, *verdict, *kernel, *python_scope, *dependency_signal, *recommendation;
    double total_us, share_pct, exclusive_ratio, hidden_ratio;
} kd_table_row;

/* The Overlap Opportunity Table of rows in build order, stage headings and
 * the empty-table placeholder as the reference prints them; a trailing
 * newline ends the text. */
bool kd_render_overlap_table(FILE *out, const kd_table_row *rows, size_t n);

/* esc(): "|" -> "\|", newline -> "<br>" (malloc'd) */
char *kd_markdown_escape_cell(const char *s);

bool kd_triage_write_markdown(const kd_triage *t, const kd_triage_options *opt, FILE *out);
bool kd_triage_write_text(const kd_triage *t, const kd_triage_options *opt, FILE *out);
bool kd_triage_write_csv(const kd_triage *t, const kd_triage_options *opt, FILE *out);
/* The JSON document (conformance README field names). false on write error. */
bool kd_triage_write_json(const kd_triage *t, const kd_triage_options *opt, FILE *out);

#endif
