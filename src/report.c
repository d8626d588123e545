/* report.c — placeholder writers until the report module lands */
#include "config.h"
#include "kerndiff/report.h"
bool kd_diff_write_text(const kd_report *r, FILE *out) { fprintf(out, "%s\n", r->gate->line); return true; }
bool kd_diff_write_markdown(const kd_report *r, FILE *out) { fprintf(out, "%s\n", r->gate->line); return true; }
bool kd_diff_write_csv(const kd_report *r, FILE *out) { (void)r; (void)out; return true; }
bool kd_diff_write_json(const kd_report *r, FILE *out) { (void)r; fprintf(out, "{}\n"); return true; }
