/* diff_report.h — the diff reports (product.md §5): text for a terminal, CSV
 * (libcsv quoting), Markdown for a PR comment (< 60,000 characters), and JSON
 * (yajl_gen, schema kerndiff.diff/2). Every number has a fixed precision so
 * the same inputs give the same bytes. The text and Markdown say first what
 * changed beyond noise and fold the noise rows into one line per stage; the
 * CSV and JSON carry every statistic of a row (docs/diff.md). A row whose
 * change is NULL or "" (a diff built by hand) is reported as before the
 * statistics. */
#ifndef KERNDIFF_DIFF_REPORT_H
#define KERNDIFF_DIFF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "kerndiff/diff.h"

/* GitHub's comment limit is 65,536; the report stays under this. */
#define KD_MARKDOWN_LIMIT 60000

/* A report reads the diff alone (inputs, pids, rows: kd_diff owns them),
 * so it can be written after the traces are gone, or from a saved result. */
typedef struct {
    const kd_diff *diff;
    const kd_gate *fail, *warn;  /* may be unset (kd_gate.set false) */
    const kd_gate_result *gate;  /* verdict line and warnings */
} kd_report;

bool kd_diff_write_text(const kd_report *r, FILE *out);
bool kd_diff_write_markdown(const kd_report *r, FILE *out);
bool kd_diff_write_csv(const kd_report *r, FILE *out);
bool kd_diff_write_json(const kd_report *r, FILE *out);

#endif
