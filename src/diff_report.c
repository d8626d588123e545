/* diff_report.c — the diff reports (diff_report.h; product.md §5): Markdown for a PR
 * comment (kept under KD_MARKDOWN_LIMIT by truncating lists with a note),
 * CSV through libcsv, JSON through yajl_gen (jsonw.h), and an aligned text
 * table for a terminal. Every number is written with a fixed precision and
 * every list in the diff's own order, so the same diff gives the same bytes.
 * The text and Markdown lead with what changed beyond noise (the rows'
 * change, diff.h) and fold the noise rows into one line per stage; CSV and
 * JSON carry every statistic as its own column (schema kerndiff.diff/2).
 * Every report shows why a row's two kernels were paired (kd_diff_row.evidence)
 * and lists the replaced pairs as one line each; names too long for a column
 * are elided in the middle (short_kernel_name), so siblings that differ only
 * in their tail stay distinct. Columns and fields are documented in
 * docs/diff.md. */
#include "config.h"

#include "kerndiff/diff_report.h"

#include <csv.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/jsonw.h"
#include "kerndiff/strbuf.h"
#include "kerndiff/text.h"

/* A change smaller than this (in us) counts as unchanged in the top lists
 * and the text table; it prints as 0.0 anyway. */
#define KD_REPORT_EPS_US 0.05
/* Rows of the top-regressions / top-improvements lists. */
#define KD_REPORT_TOP 10
/* Code points of kernel names in the Markdown lists (the full table keeps
 * the whole name), of names in the text table, and of paths. Names longer
 * than that are elided in the middle (short_kernel_name). */
#define KD_REPORT_MD_NAME 80
#define KD_REPORT_TEXT_NAME 60
#define KD_REPORT_PATH 500
/* Code points of a row's evidence in the text report. */
#define KD_REPORT_TEXT_EVIDENCE 200
/* Rows of the text table, and lines of its replaced list. */
#define KD_REPORT_TEXT_ROWS 40

#define KD_REPORT_STR_(x) #x
#define KD_REPORT_STR(x) KD_REPORT_STR_(x)

/* ---- numbers ------------------------------------------------------------------ */

static bool zero_digits(const char *s)
{
    for (; *s; s++)
        if (*s != '0' && *s != '.')
            return false;
    return true;
}

/* "%.*f", with a value that rounds to zero written without a sign. */
static const char *fmt_fixed(char *buf, size_t n, int prec, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "n/a");
        return buf;
    }
    snprintf(buf, n, "%.*f", prec, v);
    if (buf[0] == '-' && zero_digits(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
    return buf;
}

/* "%+.*f", zero written unsigned ("0.0"). */
static const char *fmt_signed(char *buf, size_t n, int prec, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "n/a");
        return buf;
    }
    snprintf(buf, n, "%+.*f", prec, v);
    if (zero_digits(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
    return buf;
}

/* "%+.1f%%", "n/a" when undefined (baseline 0). */
static const char *fmt_pct(char *buf, size_t n, double pct)
{
    if (!isfinite(pct)) {
        snprintf(buf, n, "n/a");
        return buf;
    }
    fmt_signed(buf, n - 1, 1, pct);
    strcat(buf, "%");
    return buf;
}

/* Relative change of a summary metric: "new" from nothing, "n/a" 0 -> 0. */
static const char *fmt_rel(char *buf, size_t n, double base, double cand)
{
    if (base == 0.0) {
        snprintf(buf, n, "%s", cand == 0.0 ? "n/a" : "new");
        return buf;
    }
    return fmt_pct(buf, n, (cand - base) / base * 100.0);
}

/* A row's percent: "new" / "gone" for added / removed kernels. */
static const char *fmt_row_pct(char *buf, size_t n, const kd_diff_row *r, double pct)
{
    if (!r->base.present) {
        snprintf(buf, n, "new");
        return buf;
    }
    if (!r->cand.present) {
        snprintf(buf, n, "gone");
        return buf;
    }
    return fmt_pct(buf, n, pct);
}

/* 60000 -> "60,000" */
static void fmt_grouped(char *buf, size_t n, unsigned long long v)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

/* ---- names: elided in the middle ------------------------------------------------ */

/* s[0..head) "..." s[from..len): malloc'd, NULL when out of memory */
static char *join_elided(const char *s, size_t len, size_t head, size_t from)
{
    char *out = malloc(head + 3 + (len - from) + 1);
    if (!out)
        return NULL;
    memcpy(out, s, head);
    memcpy(out + head, "...", 3);
    memcpy(out + head + 3, s + from, len - from + 1);
    return out;
}

/* s when it has at most max code points, else its first max - 3 - tail code
 * points, "..." and its last tail code points (tail + 3 < max): malloc'd,
 * NULL when out of memory. The head says what family a name is, the tail
 * what tells it from its siblings (a template argument, a number). */
static char *elide_middle(const char *s, size_t max, size_t tail)
{
    size_t len = strlen(s), n = kd_utf8_len(s);
    if (n <= max || max < tail + 4)
        return strdup(s);
    return join_elided(s, len, kd_utf8_offset(s, len, max - 3 - tail), kd_utf8_offset(s, len, n - tail));
}

static bool word_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* Code points of the tail that tells a kernel name from its siblings: its
 * final template-argument list ("<float, float, 2ul>", balanced), else its
 * last characters (a generated kernel's number: "..._view_17"); at least
 * max / 4 + 1 and at most 9 * max / 20, so the head keeps the family. A
 * tail that would start inside a word starts at the word instead (up to 8
 * code points earlier, else later). */
static size_t name_tail(const char *s, size_t max)
{
    size_t lo = max / 4 + 1, hi = max * 9 / 20, want = lo, len = strlen(s), n = kd_utf8_len(s);
    if (len && s[len - 1] == '>') {
        size_t depth = 0;
        for (size_t i = len; i-- > 0;) {
            if (s[i] == '>') {
                depth++;
            } else if (s[i] == '<' && --depth == 0) {
                want = kd_utf8_len(s + i);
                break;
            }
        }
    }
    want = want < lo ? lo : want > hi ? hi : want;
    if (want >= n)
        return want;
    size_t from = kd_utf8_offset(s, len, n - want), k = 0;
    if (!word_char(s[from]) || !word_char(s[from - 1]))
        return want;
    while (k < 8 && from - k > 1 && word_char(s[from - k - 1]))
        k++;
    if (from - k >= 1 && !word_char(s[from - k - 1]) && want + k <= hi)
        return want + k; /* ASCII word characters: one code point a byte */
    for (k = 0; k < 8 && word_char(s[from + k]); k++)
        ;
    return !word_char(s[from + k]) && want > k + 4 ? want - k : want;
}

/* A kernel name for a narrow place: normalized as kd_short_name does, and
 * when longer than max code points elided in the middle, keeping its head
 * and its distinguishing tail (max code points in all). Two names that
 * differ only in their last characters stay distinct. Malloc'd; NULL when
 * out of memory. */
static char *short_kernel_name(const char *s, size_t max)
{
    char *n = kd_normalize_text(s ? s : "");
    if (!n)
        return NULL;
    size_t len = strlen(n), cps = kd_utf8_len(n);
    if (cps <= max || max < 8)
        return n;
    size_t tail = name_tail(n, max), from = kd_utf8_offset(n, len, cps - tail);
    size_t head = kd_utf8_offset(n, len, max - 3 - tail), k = 0;
    /* a head that would end inside a word ends before it (8 code points at most) */
    while (k < 8 && head - k > 1 && word_char(n[head - k - 1]) && word_char(n[head - k]))
        k++;
    if (k < 8 && head - k > 1 && !word_char(n[head - k - 1]))
        head -= k;
    char *out = join_elided(n, len, head, from);
    free(n);
    return out;
}

/* ---- shared accessors ----------------------------------------------------------- */

static const char *stage_pid(const kd_diff_stage *s, bool cand)
{
    const char *p = cand ? s->cand_pid : s->base_pid;
    return p ? p : "";
}

static const char *gate_line(const kd_report *r)
{
    return r->gate ? r->gate->line : "kerndiff: no gate evaluated";
}

static size_t n_warnings(const kd_report *r)
{
    return r->gate ? r->gate->n_warnings : r->diff->n_warnings;
}

static const char *warning_at(const kd_report *r, size_t i)
{
    return r->gate ? r->gate->warnings[i] : r->diff->warnings[i];
}

static bool normalized(const kd_report *r) { return r->diff->normalized; }

static const char *time_unit(const kd_report *r) { return normalized(r) ? "us/step" : "us"; }

static const kd_diff_input *side_input(const kd_report *r, bool cand)
{
    return cand ? &r->diff->cand_in : &r->diff->base_in;
}

static const char *opt_path(const kd_report *r, bool cand)
{
    const char *p = side_input(r, cand)->path;
    return p ? p : "";
}

static const char *opt_mapping(const kd_report *r, bool cand) { return side_input(r, cand)->mapping; }

/* The distinct pids of a side over the compared stages, ", "-joined. */
static void side_pids(const kd_diff *d, bool cand, kd_strbuf *out)
{
    for (size_t i = 0; i < d->n_stages; i++) {
        const char *p = stage_pid(&d->stages[i], cand);
        bool seen = !*p;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(p, stage_pid(&d->stages[k], cand)) == 0;
        if (!seen) {
            if (out->n)
                kd_sb_puts(out, ", ");
            kd_sb_puts(out, p);
        }
    }
}

/* why the two kernels of a row were paired ("" when there is nothing to say) */
static const char *row_evidence(const kd_diff_row *r) { return r->evidence ? r->evidence : ""; }

/* a baseline kernel replaced by a different candidate kernel (a story line) */
static bool row_is_replaced(const kd_diff_row *r)
{
    return r->match == KD_MATCH_REPLACED && r->base.present && r->cand.present;
}

/* "228 = 228 launches", "76 -> 80 launches" (arrow: "->" or "→") */
static void launches_text(kd_strbuf *b, const kd_diff_row *r, const char *arrow)
{
    unsigned long long x = r->base.launches, y = r->cand.launches;
    if (x == y)
        kd_sb_printf(b, "%llu = %llu launches", x, y);
    else
        kd_sb_printf(b, "%llu %s %llu launches", x, arrow, y);
}

static bool row_is_changed(const kd_diff_row *r)
{
    return !r->base.present || !r->cand.present || fabs(r->d_exposed_us) >= KD_REPORT_EPS_US ||
           fabs(r->d_total_us) >= KD_REPORT_EPS_US || strcmp(r->priority_change, "=") != 0;
}

/* ---- the noise statistics (diff.h, stats.h) -------------------------------------- */

/* A row's change: "changed", "noise", "n/a", or "" when unknown (a row built
 * by hand without statistics: it is reported as before them). */
static const char *row_change(const kd_diff_row *r) { return r->change ? r->change : ""; }
static bool row_known(const kd_diff_row *r) { return *row_change(r) != '\0'; }
static bool row_is_noise(const kd_diff_row *r) { return strcmp(row_change(r), "noise") == 0; }
static bool row_is_na(const kd_diff_row *r) { return strcmp(row_change(r), "n/a") == 0; }
static bool row_is_real(const kd_diff_row *r) { return strcmp(row_change(r), "changed") == 0; }
static const char *row_change_kind(const kd_diff_row *r) { return r->change_kind ? r->change_kind : ""; }

/* A test's number of a row: only when its change is known (a hand-built row
 * has zeros there, not results), NAN otherwise. */
static double row_stat(const kd_diff_row *r, double v) { return row_known(r) ? v : NAN; }

/* A side's per-launch distribution is known when it has a sample. */
static bool dist_known(const kd_diff_side *s, const kd_dist *d) { return s->present && d->n > 0; }

/* The rows of a stage by change, counted as the reports list them (rows of
 * unknown change are in none), and the largest |Δ total %| among the noise. */
typedef struct {
    size_t changed, noise, na;
    double noise_max_pct;
} change_counts;

static size_t counts_known(const change_counts *c) { return c->changed + c->noise + c->na; }

static void stage_counts(const kd_diff_stage *s, change_counts *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < s->n_rows; i++) {
        const kd_diff_row *r = &s->rows[i];
        if (row_is_real(r)) {
            c->changed++;
        } else if (row_is_noise(r)) {
            c->noise++;
            if (isfinite(r->pct_total) && fabs(r->pct_total) > c->noise_max_pct)
                c->noise_max_pct = fabs(r->pct_total);
        } else if (row_is_na(r)) {
            c->na++;
        }
    }
}

/* whether the stage's rows say which change is real (a computed diff) */
static bool stage_has_stats(const kd_diff_stage *s)
{
    for (size_t i = 0; i < s->n_rows; i++)
        if (row_known(&s->rows[i]))
            return true;
    return false;
}

/* "%g" without a trailing exponent's zeros: "2e-9", "0.0043", "0.31"; a
 * p-value that underflowed reads "<1e-300" */
static const char *fmt_p(char *buf, size_t n, double p)
{
    if (!isfinite(p)) {
        snprintf(buf, n, "n/a");
    } else if (p < 1e-300) {
        snprintf(buf, n, "<1e-300");
    } else if (p < 1e-3) {
        char m[32];
        snprintf(m, sizeof m, "%.0e", p); /* "2e-09" */
        char *e = strchr(m, 'e');
        int exp = e ? atoi(e + 1) : 0;
        if (e)
            *e = '\0';
        snprintf(buf, n, "%se%d", m, exp);
    } else {
        snprintf(buf, n, "%.2g", p);
    }
    return buf;
}

/* "FDR 1 %, min effect 2 % / 1 us": the settings in force */
static void settings_text(const kd_diff *d, kd_strbuf *b)
{
    kd_sb_printf(b, "FDR %g %%, min effect %g %% / %g us", d->fdr * 100.0, d->min_effect_pct, d->min_effect_us);
}

/* "41 kernels moved within noise, largest ±0.8 %" */
static void noise_text(const change_counts *c, kd_strbuf *b)
{
    char x[64];
    kd_sb_printf(b, "%zu kernel%s moved within noise, largest ±%s %%", c->noise, c->noise == 1 ? "" : "s",
                 fmt_fixed(x, sizeof x, 1, c->noise_max_pct));
}

static void md_escape(kd_strbuf *b, const char *s);

/* What tells a row's change apart (one line or one cell): its launches and
 * medians, the shift with its interval, the test and the kind of change:
 * "228 -> 228 launches, median 529.2 -> 535.7 us, shift +6.5 us [+5.9,
 * +7.1] (p 2e-9, per call)"; "→" and "—" for "->" and "-" in Markdown.
 * Per-launch times are never per step. */

static void stats_text(kd_strbuf *b, const kd_diff_row *r, bool md)
{
    const char *arrow = md ? "→" : "->", *dash = md ? "—" : "-";
    char x[64], y[64], z[64];
    const kd_diff_side *bs = &r->base, *cs = &r->cand;
    if (bs->present)
        kd_sb_printf(b, "%" PRIu64, bs->launches);
    else
        kd_sb_puts(b, dash);
    kd_sb_printf(b, " %s ", arrow);
    if (cs->present)
        kd_sb_printf(b, "%" PRIu64, cs->launches);
    else
        kd_sb_puts(b, dash);
    kd_sb_puts(b, " launches");
    bool mb = dist_known(bs, &bs->dur), mc = dist_known(cs, &cs->dur);
    if (mb || mc)
        kd_sb_printf(b, ", median %s %s %s us", mb ? fmt_fixed(x, sizeof x, 1, bs->dur.median) : dash, arrow,
                     mc ? fmt_fixed(y, sizeof y, 1, cs->dur.median) : dash);
    double shift = row_stat(r, r->shift_us), lo = row_stat(r, r->shift_lo_us), hi = row_stat(r, r->shift_hi_us);
    if (isfinite(shift)) {
        kd_sb_printf(b, ", shift %s us", fmt_signed(x, sizeof x, 1, shift));
        if (isfinite(lo) && isfinite(hi))
            kd_sb_printf(b, " [%s, %s]", fmt_signed(y, sizeof y, 1, lo), fmt_signed(z, sizeof z, 1, hi));
    }
    /* why: the test, the kind of change, or what the row is */
    const char *why[3] = {NULL, NULL, NULL};
    size_t n = 0;
    double p = row_stat(r, r->p_value);
    char pbuf[64] = "";
    if (isfinite(p)) {
        snprintf(pbuf, sizeof pbuf, "p %s", fmt_p(x, sizeof x, p));
        why[n++] = pbuf;
    }
    if (*row_change_kind(r))
        why[n++] = row_change_kind(r);
    else if (row_is_real(r) && (!bs->present || !cs->present || r->match == KD_MATCH_REPLACED ||
                                r->match == KD_MATCH_RULE))
        why[n++] = kd_diff_row_kind(r); /* changed by what it is */
    if (row_is_na(r))
        why[n++] = "n/a: under " KD_REPORT_STR(KD_STATS_MIN_LAUNCHES) " launches";
    if (n) {
        kd_sb_puts(b, " (");
        for (size_t i = 0; i < n; i++) {
            kd_sb_puts(b, i ? ", " : "");
            if (md)
                md_escape(b, why[i]);
            else
                kd_sb_puts(b, why[i]);
        }
        kd_sb_puts(b, ")");
    }
}

/* The first lines of the text and Markdown reports: what changed beyond
 * noise, per compared stage (one line when one stage is compared), or
 * plainly that nothing did. Nothing when no row carries statistics. */
static void headline(const kd_report *r, bool md, kd_strbuf *b)
{
    const kd_diff *d = r->diff;
    change_counts c[KD_STAGE_COUNT];
    size_t idx[KD_STAGE_COUNT], k = 0, changed = 0, noise = 0;
    double largest = 0.0;
    for (size_t s = 0; s < d->n_stages && s < KD_STAGE_COUNT; s++) {
        if (!stage_has_stats(&d->stages[s]))
            continue;
        stage_counts(&d->stages[s], &c[k]);
        changed += c[k].changed;
        noise += c[k].noise;
        if (c[k].noise_max_pct > largest)
            largest = c[k].noise_max_pct;
        idx[k++] = s;
    }
    if (!k)
        return;
    const char *bo = md ? "**" : "";
    char x[64];
    kd_strbuf set = {0};
    settings_text(d, &set);
    if (!changed && !noise) {
        /* nothing could be tested: say so, not that nothing changed */
        kd_sb_printf(b, "%sNo kernel could be tested for noise%s: every kernel has fewer than %d launches on a "
                        "side (%s).\n",
                     bo, bo, KD_STATS_MIN_LAUNCHES, kd_sb_str(&set));
    } else if (!changed) {
        kd_sb_printf(b, "%sNo kernel changed beyond noise%s (", bo, bo);
        for (size_t i = 0; i < k; i++) {
            if (k > 1)
                kd_sb_printf(b, "%s%s ", i ? ", " : "", kd_stage_display_name(d->stages[idx[i]].stage));
            kd_sb_printf(b, "%zu kernel%s", counts_known(&c[i]), counts_known(&c[i]) == 1 ? "" : "s");
            if (c[i].na)
                kd_sb_printf(b, ", %zu n/a", c[i].na);
        }
        kd_sb_printf(b, "; largest move ±%s %%; %s).\n", fmt_fixed(x, sizeof x, 1, largest), kd_sb_str(&set));
    } else {
        for (size_t i = 0; i < k; i++) {
            const change_counts *ci = &c[i];
            if (k == 1)
                kd_sb_printf(b, "%sChanged beyond noise: %zu of %zu kernel%s%s (%s)", bo, ci->changed,
                             counts_known(ci), counts_known(ci) == 1 ? "" : "s", bo, kd_sb_str(&set));
            else {
                if (!i)
                    kd_sb_printf(b, "%sChanged beyond noise%s (%s):\n%s", bo, bo, kd_sb_str(&set), md ? "\n" : "");
                kd_sb_printf(b, "%s%s: %zu of %zu kernel%s", md ? "- " : "  ",
                             kd_stage_display_name(d->stages[idx[i]].stage), ci->changed, counts_known(ci),
                             counts_known(ci) == 1 ? "" : "s");
            }
            if (ci->noise)
                kd_sb_printf(b, "; %zu moved within noise (largest ±%s %%)", ci->noise,
                             fmt_fixed(x, sizeof x, 1, ci->noise_max_pct));
            if (ci->na)
                kd_sb_printf(b, "; %zu n/a (fewer than %d launches on a side)", ci->na, KD_STATS_MIN_LAUNCHES);
            kd_sb_puts(b, k == 1 ? ".\n" : "\n");
        }
    }
    b->oom = b->oom || set.oom;
    kd_sb_free(&set);
}

/* The gate's evidence of a stage, when tested and a gate is set: "shift
 * +5.1 us [+4.0, +6.2] of communication exposed time per launch (p 1e-5)" */
static bool gate_evidence_text(const kd_report *r, const kd_diff_stage *s, kd_strbuf *b)
{
    const kd_gate_evidence *g = &s->gate_evidence;
    bool gated = (r->fail && r->fail->set) || (r->warn && r->warn->set);
    if (!g->tested || !gated)
        return false;
    const kd_diff *d = r->diff;
    char x[64], y[64], z[64], p[64];
    kd_sb_printf(b, "shift %s us", fmt_signed(x, sizeof x, 1, g->shift_us));
    if (isfinite(g->lo_us) && isfinite(g->hi_us))
        kd_sb_printf(b, " [%s, %s]", fmt_signed(y, sizeof y, 1, g->lo_us), fmt_signed(z, sizeof z, 1, g->hi_us));
    kd_sb_printf(b, " of %s exposed time per launch (p %s)", kd_diff_category_name(d, s->sum_base.gate_category),
                 fmt_p(p, sizeof p, g->p_value));
    return true;
}

/* ---- Markdown: escaping ------------------------------------------------------------ */

/* The one escape of every piece of trace text in the Markdown (kernel names,
 * scopes, paths, warnings): a table cell or a line can then not be broken by
 * it. `|` -> `\|`, `\` -> `\\` (so a trailing backslash cannot escape our
 * `|`), newline (LF, CR, CRLF) -> `<br>`, `<` -> `&lt;`, `>` -> `&gt;`,
 * backtick -> "\`", other control characters -> space. */
static void md_escape(kd_strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        switch (c) {
        case '|': kd_sb_puts(b, "\\|"); break;
        case '\\': kd_sb_puts(b, "\\\\"); break;
        case '`': kd_sb_puts(b, "\\`"); break;
        case '<': kd_sb_puts(b, "&lt;"); break;
        case '>': kd_sb_puts(b, "&gt;"); break;
        case '\r':
            if (p[1] == '\n')
                p++;
            kd_sb_puts(b, "<br>");
            break;
        case '\n': kd_sb_puts(b, "<br>"); break;
        default:
            if (c < 0x20 || c == 0x7f)
                kd_sb_putn(b, " ", 1);
            else
                kd_sb_putn(b, p, 1);
        }
    }
}

/* Escaped, shortened to max code points with kd_short_name. */
static void md_escape_short(kd_strbuf *b, const char *s, size_t max)
{
    char *t = kd_short_name(s, max);
    if (!t) {
        b->oom = true;
        return;
    }
    md_escape(b, t);
    free(t);
}

/* A kernel name escaped, elided in the middle to max code points
 * (short_kernel_name). */
static void md_escape_name(kd_strbuf *b, const char *s, size_t max)
{
    char *t = short_kernel_name(s, max);
    if (!t) {
        b->oom = true;
        return;
    }
    md_escape(b, t);
    free(t);
}

/* ---- Markdown: fixed parts ------------------------------------------------------------ */

static void md_warnings(const kd_report *r, kd_strbuf *b)
{
    for (size_t i = 0; i < n_warnings(r); i++) {
        kd_sb_puts(b, "> **Warning:** ");
        md_escape(b, warning_at(r, i));
        kd_sb_puts(b, "\n\n");
    }
}

static void md_files_cell(const kd_report *r, bool cand, kd_strbuf *b)
{
    const kd_diff_input *in = side_input(r, cand);
    for (size_t i = 0; i < in->n_files; i++) {
        if (i)
            kd_sb_puts(b, "<br>");
        md_escape_short(b, in->files[i].path, KD_REPORT_PATH);
    }
}

/* whether the resolved files say more than the path given */
static bool files_differ(const kd_report *r, bool cand)
{
    const kd_diff_input *in = side_input(r, cand);
    return in->n_files > 1 || (in->n_files == 1 && strcmp(in->files[0].path, opt_path(r, cand)) != 0);
}

/* "0 of 128 (distributedInfo)", "3 (file name)", "-" */
static const char *rank_text(const kd_diff_input *in, char *buf, size_t n)
{
    const kd_diff_file *f = in->n_files ? &in->files[0] : NULL;
    if (!f || (f->rank < 0 && f->world_size < 0))
        return "-";
    char rank[24] = "?", world[32] = "";
    if (f->rank >= 0)
        snprintf(rank, sizeof rank, "%ld", f->rank);
    if (f->world_size >= 0)
        snprintf(world, sizeof world, " of %ld", f->world_size);
    snprintf(buf, n, "%s%s%s%s%s", rank, world, *f->rank_from ? " (" : "", f->rank_from,
             *f->rank_from ? ")" : "");
    return buf;
}

static const char *device_text(const kd_diff_input *in)
{
    return in->n_files && *in->files[0].device ? in->files[0].device : "-";
}

/* "annotations: extend/prefill, decode, all" */
static void stages_text(const kd_diff_input *in, kd_strbuf *b)
{
    kd_sb_printf(b, "%s: %s", in->stages_how, in->stages);
}

/* The skipped kernels by reason: "bad_ts 3, bad_dur 1". */
static void skipped_text(const kd_kernel_accounting *a, kd_strbuf *b)
{
    bool any = false;
    for (int k = 0; k < KD_SKIP_COUNT; k++)
        if (a->skipped[k]) {
            kd_sb_printf(b, "%s%s %llu", any ? ", " : "", kd_skip_reason_name((kd_skip_reason)k),
                         (unsigned long long)a->skipped[k]);
            any = true;
        }
}

/* One accounting row of both sides (product: every kernel of the analysed
 * pid accounted for, divergence D7). */
typedef struct {
    const char *label;
    uint64_t (*count)(const kd_kernel_accounting *);
    bool always;
} acc_row;

static uint64_t acc_read(const kd_kernel_accounting *a) { return a->read; }
static uint64_t acc_analysed(const kd_kernel_accounting *a) { return a->analysed; }
static uint64_t acc_outside(const kd_kernel_accounting *a) { return a->outside; }
static uint64_t acc_unclaimed(const kd_kernel_accounting *a) { return a->unclaimed; }
static uint64_t acc_zero(const kd_kernel_accounting *a) { return a->zero_duration; }
static uint64_t acc_skipped(const kd_kernel_accounting *a) { return kd_accounting_skipped(a); }

static const acc_row acc_rows[] = {
    {"read (the analysed pid)", acc_read, true},
    {"in a stage", acc_analysed, true},
    {"outside every stage (only in all)", acc_outside, false},
    {"in a stage an earlier file holds", acc_unclaimed, false},
    {"zero duration (launches, no time)", acc_zero, false},
    {"skipped as malformed", acc_skipped, false},
};
#define N_ACC_ROWS (sizeof acc_rows / sizeof acc_rows[0])

static void md_accounting(const kd_report *r, kd_strbuf *b)
{
    const kd_kernel_accounting *a[2] = {&r->diff->base_in.acc, &r->diff->cand_in.acc};
    kd_sb_puts(b, "**Kernels accounted for**\n\n| kernels | baseline | candidate |\n| --- | ---: | ---: |\n");
    for (size_t i = 0; i < N_ACC_ROWS; i++) {
        uint64_t x = acc_rows[i].count(a[0]), y = acc_rows[i].count(a[1]);
        if (!acc_rows[i].always && !x && !y)
            continue;
        kd_sb_printf(b, "| %s | %llu | %llu |\n", acc_rows[i].label, (unsigned long long)x,
                     (unsigned long long)y);
    }
    if (acc_skipped(a[0]) || acc_skipped(a[1])) {
        kd_sb_puts(b, "| skipped, by reason | ");
        skipped_text(a[0], b);
        kd_sb_puts(b, " | ");
        skipped_text(a[1], b);
        kd_sb_puts(b, " |\n");
    }
    kd_sb_puts(b, "\n");
}

static void md_inputs(const kd_report *r, kd_strbuf *b)
{
    const kd_diff *d = r->diff;
    kd_sb_puts(b, "**Inputs**\n\n| input | baseline | candidate |\n| --- | --- | --- |\n| trace | ");
    md_escape_short(b, opt_path(r, false), KD_REPORT_PATH);
    kd_sb_puts(b, " | ");
    md_escape_short(b, opt_path(r, true), KD_REPORT_PATH);
    kd_sb_puts(b, " |\n");
    if (files_differ(r, false) || files_differ(r, true)) {
        kd_sb_puts(b, "| files | ");
        md_files_cell(r, false, b);
        kd_sb_puts(b, " | ");
        md_files_cell(r, true, b);
        kd_sb_puts(b, " |\n");
    }
    kd_sb_puts(b, "| mapping | ");
    for (int side = 0; side < 2; side++) {
        const char *m = opt_mapping(r, side == 1);
        if (m)
            md_escape_short(b, m, KD_REPORT_PATH);
        else
            kd_sb_puts(b, "(the trace itself)");
        kd_sb_puts(b, side ? " |\n" : " | ");
    }
    kd_strbuf pb = {0}, pc = {0};
    side_pids(d, false, &pb);
    side_pids(d, true, &pc);
    kd_sb_puts(b, "| pid | ");
    md_escape(b, pb.n ? kd_sb_str(&pb) : "-");
    kd_sb_puts(b, " | ");
    md_escape(b, pc.n ? kd_sb_str(&pc) : "-");
    kd_sb_puts(b, " |\n");
    kd_sb_free(&pb);
    kd_sb_free(&pc);
    char rb[96], rc[96];
    kd_sb_puts(b, "| rank | ");
    md_escape(b, rank_text(&d->base_in, rb, sizeof rb));
    kd_sb_puts(b, " | ");
    md_escape(b, rank_text(&d->cand_in, rc, sizeof rc));
    kd_sb_puts(b, " |\n| device | ");
    md_escape_short(b, device_text(&d->base_in), KD_REPORT_PATH);
    kd_sb_puts(b, " | ");
    md_escape_short(b, device_text(&d->cand_in), KD_REPORT_PATH);
    kd_sb_puts(b, " |\n| stages from | ");
    kd_strbuf sb = {0}, sc = {0};
    stages_text(&d->base_in, &sb);
    stages_text(&d->cand_in, &sc);
    md_escape(b, kd_sb_str(&sb));
    kd_sb_puts(b, " | ");
    md_escape(b, kd_sb_str(&sc));
    kd_sb_puts(b, " |\n");
    b->oom = b->oom || sb.oom || sc.oom;
    kd_sb_free(&sb);
    kd_sb_free(&sc);
    kd_sb_printf(b, "| ProfilerSteps | %.0f | %.0f |\n\n", d->steps_base, d->steps_cand);
    md_accounting(r, b);
    if (normalized(r))
        kd_sb_printf(b, "Normalization: **steps**: every time is per ProfilerStep (baseline / %.0f, "
                     "candidate / %.0f).\n\n",
                  d->steps_base, d->steps_cand);
    else
        kd_sb_puts(b, "Normalization: **none**: times are totals over each capture.\n\n");
    if (d->rules_name) {
        kd_sb_puts(b, "Kernel categories: rules **");
        md_escape(b, d->rules_name);
        kd_sb_puts(b, "** (");
        md_escape(b, d->rules_source ? d->rules_source : "built-in");
        kd_sb_puts(b, ").\n\n");
    }
}

static void md_metric_time(kd_strbuf *b, const char *label, double base, double cand)
{
    char x[64], y[64], z[64], w[64];
    kd_sb_printf(b, "| %s | %s | %s | %s | %s |\n", label, fmt_fixed(x, sizeof x, 1, base),
              fmt_fixed(y, sizeof y, 1, cand), fmt_signed(z, sizeof z, 1, cand - base),
              fmt_rel(w, sizeof w, base, cand));
}

static void md_metric_count(kd_strbuf *b, const char *label, double base, double cand)
{
    char x[64], y[64], z[64], w[64];
    kd_sb_printf(b, "| %s | %s | %s | %s | %s |\n", label, fmt_fixed(x, sizeof x, 0, base),
              fmt_fixed(y, sizeof y, 0, cand), fmt_signed(z, sizeof z, 0, cand - base),
              fmt_rel(w, sizeof w, base, cand));
}

static void md_summary(const kd_report *r, const kd_diff_stage *s, kd_strbuf *b)
{
    const kd_stage_summary *sb_ = &s->sum_base, *sc = &s->sum_cand;
    const char *u = time_unit(r);
    char label[96];
    kd_sb_printf(b, "### %s\n\n", kd_stage_display_name(s->stage));
    kd_sb_puts(b, "| metric | baseline | candidate | Δ | Δ% |\n| --- | ---: | ---: | ---: | ---: |\n");
    snprintf(label, sizeof label, "busy time (%s)", u);
    md_metric_time(b, label, sb_->busy_us, sc->busy_us);
    snprintf(label, sizeof label, "overlap time (%s)", u);
    md_metric_time(b, label, sb_->overlap_us, sc->overlap_us);
    md_metric_count(b, "max concurrent streams", sb_->max_concurrent_streams, sc->max_concurrent_streams);
    md_metric_count(b, "kernel launches", (double)sb_->launches, (double)sc->launches);
    md_metric_count(b, "ProfilerSteps", r->diff->steps_base, r->diff->steps_cand);
    if (sb_->steps && sc->steps) {
        /* per step: mean ± the 95 % half-width of the mean */
        kd_sb_printf(b, "| busy time per step (%s, mean ± 95%%) | %.1f ± %.1f | %.1f ± %.1f | %+.1f | %s |\n", "us",
                     sb_->step_busy_mean, sb_->step_busy_ci, sc->step_busy_mean, sc->step_busy_ci,
                     sc->step_busy_mean - sb_->step_busy_mean, "");
        kd_sb_printf(b, "| %s exposed per step (us, mean ± 95%%) | %.1f ± %.1f | %.1f ± %.1f | %+.1f | %s |\n",
                     kd_diff_category_name(r->diff, sb_->gate_category), sb_->step_gate_mean, sb_->step_gate_ci,
                     sc->step_gate_mean, sc->step_gate_ci, sc->step_gate_mean - sb_->step_gate_mean,
                     s->gate_evidence.step_tested ? "" : "");
    }
    kd_category order[KD_CAT_MAX];
    size_t ncat = kd_diff_report_categories(r->diff, order);
    for (size_t k = 0; k < ncat; k++) {
        kd_category c = order[k];
        const kd_time_split *x = &sb_->by_category[c], *y = &sc->by_category[c];
        const char *name = kd_diff_category_name(r->diff, c);
        snprintf(label, sizeof label, "%s total (%s)", name, u);
        md_metric_time(b, label, x->total_us, y->total_us);
        /* the gate's category leads, in bold */
        snprintf(label, sizeof label, k == 0 ? "**%s exposed (%s)**" : "%s exposed (%s)", name, u);
        md_metric_time(b, label, x->exposed_us, y->exposed_us);
        snprintf(label, sizeof label, "%s hidden (%s)", name, u);
        md_metric_time(b, label, x->hidden_us, y->hidden_us);
    }
    kd_sb_puts(b, "\n");
}

/* Under a stage's summary: its noise rows as one line, and the gate's
 * evidence when a gate is set. */
static void md_stage_noise(const kd_report *r, const kd_diff_stage *s, kd_strbuf *b)
{
    change_counts c;
    stage_counts(s, &c);
    if (c.noise) {
        noise_text(&c, b);
        kd_sb_puts(b, " (listed in the full table only).\n\n");
    }
    kd_strbuf g = {0};
    if (gate_evidence_text(r, s, &g)) {
        kd_sb_puts(b, "Gate evidence: ");
        md_escape(b, kd_sb_str(&g)); /* a category name is a rules file's text */
        kd_sb_puts(b, ".\n\n");
    }
    b->oom = b->oom || g.oom;
    kd_sb_free(&g);
}

/* ---- Markdown: truncatable lists ---------------------------------------------------- */

/* The lists of a stage, in document order: the replaced pairs come right
 * after the stage's summary, before the tables. */
typedef enum {
    L_REPLACED = 0,
    L_REGRESSIONS,
    L_IMPROVEMENTS,
    L_PRIORITY,
    L_ADDED,
    L_REMOVED,
    L_FULL,
    L_KINDS
} md_kind;

/* What is cut first when the report is too long (product.md §5); the
 * replaced pairs go with the added/removed lists they stand for. */
typedef enum { TIER_TOP = 0, TIER_PRIORITY, TIER_ADDREM, TIER_FULL } md_tier;

static const md_tier tier_of[L_KINDS] = {TIER_ADDREM, TIER_TOP,    TIER_TOP, TIER_PRIORITY,
                                         TIER_ADDREM, TIER_ADDREM, TIER_FULL};

typedef struct {
    md_kind kind;
    const kd_report *r;
    const kd_diff_stage *st;
    size_t *rows; /* indexes into st->rows */
    size_t n, keep, total; /* total: rows of that kind before the top-10 cut */
    size_t *len;           /* rendered bytes of each row */
    size_t head_len, tail_len;
    bool has_stats; /* the stage's rows carry their change: one more column */
} md_list;

static bool row_in_kind(md_kind k, const kd_diff_row *r)
{
    switch (k) {
    case L_REPLACED: return row_is_replaced(r);
    /* the headline lists leave the noise out (it has one line per stage) */
    case L_REGRESSIONS: return r->d_exposed_us >= KD_REPORT_EPS_US && !row_is_noise(r);
    case L_IMPROVEMENTS: return r->d_exposed_us <= -KD_REPORT_EPS_US && !row_is_noise(r);
    case L_PRIORITY: return strcmp(r->priority_change, "=") != 0;
    case L_ADDED: return !r->base.present;
    case L_REMOVED: return !r->cand.present;
    default: return true;
    }
}

/* rows are ordered by |d exposed| desc, so the positive ones are in
 * descending and the negative ones in ascending order of d exposed */
static bool list_select(md_list *l)
{
    l->rows = malloc((l->st->n_rows ? l->st->n_rows : 1) * sizeof *l->rows);
    l->len = malloc((l->st->n_rows ? l->st->n_rows : 1) * sizeof *l->len);
    if (!l->rows || !l->len)
        return false;
    for (size_t i = 0; i < l->st->n_rows; i++)
        if (row_in_kind(l->kind, &l->st->rows[i]))
            l->rows[l->total++] = i;
    l->n = l->total;
    if ((l->kind == L_REGRESSIONS || l->kind == L_IMPROVEMENTS) && l->n > KD_REPORT_TOP)
        l->n = KD_REPORT_TOP;
    l->keep = l->n;
    return true;
}

static void md_cell_side_exposed(kd_strbuf *b, const kd_diff_side *s)
{
    char x[64];
    kd_sb_puts(b, s->present ? fmt_fixed(x, sizeof x, 1, s->exposed_us) : "—");
}

/* The statistics of a row in one cell (stats_text), its change first in
 * the full table: "**changed**: 228 → 228 launches, median ...". Nothing for
 * a row of unknown change. */
static void md_stats_cell(kd_strbuf *b, const kd_diff_row *r, bool with_change)
{
    if (!row_known(r))
        return;
    if (with_change && !row_is_na(r)) { /* an n/a row says so at its end */
        kd_sb_puts(b, row_is_real(r) ? "**" : "");
        md_escape(b, row_change(r));
        kd_sb_puts(b, row_is_real(r) ? "**: " : ": ");
    }
    stats_text(b, r, true);
}

static void md_row_top(const md_list *l, size_t k, kd_strbuf *b)
{
    const kd_diff_row *r = &l->st->rows[l->rows[k]];
    char x[64], y[64];
    kd_sb_printf(b, "| %zu | ", k + 1);
    md_escape_name(b, r->name, KD_REPORT_MD_NAME);
    kd_sb_printf(b, " | %s | %s | ", r->category_name, kd_diff_row_kind(r));
    md_cell_side_exposed(b, &r->base);
    kd_sb_puts(b, " | ");
    md_cell_side_exposed(b, &r->cand);
    kd_sb_printf(b, " | %s | %s |", fmt_signed(x, sizeof x, 1, r->d_exposed_us),
              fmt_row_pct(y, sizeof y, r, r->pct_exposed));
    if (l->has_stats) {
        kd_sb_puts(b, " ");
        md_stats_cell(b, r, false);
        kd_sb_puts(b, " |");
    }
    kd_sb_puts(b, "\n");
}

static void md_priority_cell(kd_strbuf *b, const kd_diff_side *s)
{
    if (!s->present)
        kd_sb_puts(b, "(absent)");
    else if (!s->priority)
        kd_sb_puts(b, "—");
    else
        kd_sb_printf(b, "%s %s", s->priority, s->recommendation ? s->recommendation : "");
}

static void md_row_priority(const md_list *l, size_t k, kd_strbuf *b)
{
    const kd_diff_row *r = &l->st->rows[l->rows[k]];
    char x[64];
    kd_sb_puts(b, "| ");
    md_escape_name(b, r->name, KD_REPORT_MD_NAME);
    kd_sb_printf(b, " | %s | ", kd_diff_row_kind(r));
    md_priority_cell(b, &r->base);
    kd_sb_puts(b, " | ");
    md_priority_cell(b, &r->cand);
    kd_sb_printf(b, " | %s | %s |\n", r->priority_change, fmt_signed(x, sizeof x, 1, r->d_exposed_us));
}

static void md_row_one_side(const md_list *l, size_t k, kd_strbuf *b)
{
    const kd_diff_row *r = &l->st->rows[l->rows[k]];
    const kd_diff_side *s = l->kind == L_ADDED ? &r->cand : &r->base;
    char x[64], y[64], z[64];
    kd_sb_puts(b, "| ");
    md_escape_name(b, s->name, KD_REPORT_MD_NAME);
    kd_sb_printf(b, " | %s | %" PRIu64 " | %s | %s | %s | ", s->category_name, s->launches,
              fmt_fixed(x, sizeof x, 1, s->total_us), fmt_fixed(y, sizeof y, 1, s->exposed_us),
              fmt_fixed(z, sizeof z, 1, s->hidden_us));
    md_escape_short(b, s->python_scope && *s->python_scope ? s->python_scope : "-", KD_REPORT_MD_NAME);
    kd_sb_puts(b, " |\n");
}

/* "b → c" of a field present on either side */
static void md_pair(kd_strbuf *b, const kd_diff_row *r, int prec, double bv, double cv)
{
    char x[64], y[64];
    kd_sb_printf(b, "%s → %s", r->base.present ? fmt_fixed(x, sizeof x, prec, bv) : "—",
              r->cand.present ? fmt_fixed(y, sizeof y, prec, cv) : "—");
}

/* the change, or "= P4" when an unchanged priority exists */
static void md_priority_change(kd_strbuf *b, const kd_diff_row *r)
{
    if (strcmp(r->priority_change, "=") == 0 && r->cand.present && r->cand.priority)
        kd_sb_printf(b, "= %s", r->cand.priority);
    else
        kd_sb_puts(b, r->priority_change);
}

static void md_row_full(const md_list *l, size_t k, kd_strbuf *b)
{
    const kd_diff_row *r = &l->st->rows[l->rows[k]];
    char x[64], y[64];
    kd_sb_puts(b, "| ");
    md_escape(b, r->name);
    if (r->base.present && r->cand.present && strcmp(r->base.name, r->cand.name) != 0) {
        kd_sb_puts(b, "<br>baseline: ");
        md_escape(b, r->base.name);
    }
    if (*row_evidence(r)) {
        kd_sb_puts(b, "<br>paired: ");
        md_escape(b, row_evidence(r));
    }
    kd_sb_printf(b, " | %s | %s | ", r->category_name, kd_diff_row_kind(r));
    md_pair(b, r, 0, (double)r->base.launches, (double)r->cand.launches);
    kd_sb_puts(b, " | ");
    md_pair(b, r, 1, r->base.total_us, r->cand.total_us);
    kd_sb_puts(b, " | ");
    md_pair(b, r, 1, r->base.exposed_us, r->cand.exposed_us);
    kd_sb_printf(b, " | %s | %s | ", fmt_signed(x, sizeof x, 1, r->d_exposed_us),
              fmt_row_pct(y, sizeof y, r, r->pct_exposed));
    md_pair(b, r, 1, r->base.hidden_us, r->cand.hidden_us);
    kd_sb_puts(b, " | ");
    md_priority_change(b, r);
    kd_sb_puts(b, " | ");
    const char *scope = r->cand.present ? r->cand.python_scope : r->base.python_scope;
    md_escape(b, scope && *scope ? scope : "-");
    kd_sb_puts(b, " |");
    if (l->has_stats) {
        kd_sb_puts(b, " ");
        md_stats_cell(b, r, true);
        kd_sb_puts(b, " |");
    }
    kd_sb_puts(b, "\n");
}

/* "- <code>old</code> → <code>new</code>: +1.5 us total (120.7 → 122.1 us),
 * 228 = 228 launches — EVIDENCE". The names go through md_escape inside
 * <code> (backslash escapes and entities are read there, not in a code span). */
static void md_row_replaced(const md_list *l, size_t k, kd_strbuf *b)
{
    const kd_diff_row *r = &l->st->rows[l->rows[k]];
    const char *u = time_unit(l->r);
    char x[64], y[64], z[64];
    kd_sb_puts(b, "- <code>");
    md_escape_name(b, r->base.name, KD_REPORT_MD_NAME);
    kd_sb_puts(b, "</code> → <code>");
    md_escape_name(b, r->cand.name, KD_REPORT_MD_NAME);
    kd_sb_printf(b, "</code>: %s %s total (%s → %s %s), ", fmt_signed(x, sizeof x, 1, r->d_total_us), u,
                 fmt_fixed(y, sizeof y, 1, r->base.total_us), fmt_fixed(z, sizeof z, 1, r->cand.total_us), u);
    launches_text(b, r, "→");
    if (*row_evidence(r)) {
        kd_sb_puts(b, " — ");
        md_escape(b, row_evidence(r));
    }
    kd_sb_puts(b, "\n");
}

static void md_list_row(const md_list *l, size_t k, kd_strbuf *b)
{
    switch (l->kind) {
    case L_REPLACED: md_row_replaced(l, k, b); break;
    case L_REGRESSIONS:
    case L_IMPROVEMENTS: md_row_top(l, k, b); break;
    case L_PRIORITY: md_row_priority(l, k, b); break;
    case L_ADDED:
    case L_REMOVED: md_row_one_side(l, k, b); break;
    default: md_row_full(l, k, b); break;
    }
}

static const char *const list_title[L_KINDS] = {"Replaced kernels",
                                                "Top regressions (exposed time grew)",
                                                "Top improvements (exposed time shrank)",
                                                "Priority changes",
                                                "Added kernels (candidate only)",
                                                "Removed kernels (baseline only)",
                                                ""};

static const char *const list_none[L_KINDS] = {"",
                                               "No kernel's exposed time grew by 0.05 us or more.",
                                               "No kernel's exposed time shrank by 0.05 us or more.",
                                               "No triage priority changed.",
                                               "No kernel was added.",
                                               "No kernel was removed.",
                                               ""};

/* the top lists of a stage with statistics leave the noise out */
static const char *const list_none_stats[L_KINDS] = {
    "", "No kernel outside the noise grew in exposed time by 0.05 us or more.",
    "No kernel outside the noise shrank in exposed time by 0.05 us or more.", "", "", "", ""};

static void md_list_head(const md_list *l, kd_strbuf *b)
{
    const char *u = time_unit(l->r);
    if (l->kind == L_REPLACED) { /* only when there is one */
        if (l->n)
            kd_sb_printf(b, "**%s**\n\n", list_title[l->kind]);
        return;
    }
    if (l->kind == L_FULL) {
        kd_sb_printf(b, "<details><summary>All %zu kernels</summary>\n\n", l->st->n_rows);
        kd_sb_printf(b, "| kernel | category | match | launches | total (%s) | exposed (%s) | Δ exposed (%s) | "
                     "Δ%% | hidden (%s) | priority | python scope |%s\n"
                     "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |%s\n",
                  u, u, u, u, l->has_stats ? " change (per launch) |" : "", l->has_stats ? " --- |" : "");
        return;
    }
    kd_sb_printf(b, "#### %s", list_title[l->kind]);
    if (l->total > l->n)
        kd_sb_printf(b, ": %zu of %zu", l->n, l->total);
    else if (l->n && (l->kind == L_ADDED || l->kind == L_REMOVED))
        kd_sb_printf(b, ": %zu", l->n);
    kd_sb_puts(b, "\n\n");
    if (!l->n) {
        kd_sb_printf(b, "%s\n", l->has_stats && *list_none_stats[l->kind] ? list_none_stats[l->kind]
                                                                           : list_none[l->kind]);
        return;
    }
    switch (l->kind) {
    case L_REGRESSIONS:
    case L_IMPROVEMENTS:
        kd_sb_printf(b, "| # | kernel | category | match | baseline exposed (%s) | candidate exposed (%s) | "
                     "Δ (%s) | Δ%% |%s\n| ---: | --- | --- | --- | ---: | ---: | ---: | ---: |%s\n",
                  u, u, u, l->has_stats ? " per launch |" : "", l->has_stats ? " --- |" : "");
        break;
    case L_PRIORITY:
        kd_sb_printf(b, "| kernel | match | baseline | candidate | change | Δ exposed (%s) |\n"
                     "| --- | --- | --- | --- | --- | ---: |\n",
                  u);
        break;
    default:
        kd_sb_printf(b, "| kernel | category | launches | total (%s) | exposed (%s) | hidden (%s) | python scope |\n"
                     "| --- | --- | ---: | ---: | ---: | ---: | --- |\n",
                  u, u, u);
        break;
    }
}

static void md_list_tail(const md_list *l, kd_strbuf *b)
{
    if (l->kind == L_REPLACED && !l->n)
        return;
    kd_sb_puts(b, l->kind == L_FULL ? "\n</details>\n\n" : "\n");
}

static void md_note(size_t hidden, kd_strbuf *b)
{
    char lim[32];
    if (!hidden)
        return;
    fmt_grouped(lim, sizeof lim, KD_MARKDOWN_LIMIT);
    kd_sb_printf(b, "\n… %zu more rows not shown (limit %s characters); see the CSV/JSON report\n", hidden, lim);
}

static size_t note_len(size_t hidden)
{
    kd_strbuf b = {0};
    md_note(hidden, &b);
    size_t n = b.n;
    kd_sb_free(&b);
    return n;
}

/* Renders each row once to learn its length. */
static bool list_measure(md_list *l, kd_strbuf *scratch)
{
    kd_sb_reset(scratch);
    md_list_head(l, scratch);
    l->head_len = scratch->n;
    kd_sb_reset(scratch);
    md_list_tail(l, scratch);
    l->tail_len = scratch->n;
    for (size_t k = 0; k < l->n; k++) {
        kd_sb_reset(scratch);
        md_list_row(l, k, scratch);
        l->len[k] = scratch->n;
    }
    return !scratch->oom;
}

static size_t list_size(const md_list *l)
{
    size_t n = l->head_len + l->tail_len + note_len(l->n - l->keep);
    for (size_t k = 0; k < l->keep; k++)
        n += l->len[k];
    return n;
}

/* ---- Markdown: the document ---------------------------------------------------------- */

typedef struct {
    const kd_report *r;
    kd_strbuf prelude;
    kd_strbuf summary[KD_STAGE_COUNT];
    md_list lists[KD_STAGE_COUNT][L_KINDS];
    size_t n_stages;
} md_doc;

static void md_doc_free(md_doc *m)
{
    kd_sb_free(&m->prelude);
    for (size_t s = 0; s < KD_STAGE_COUNT; s++) {
        kd_sb_free(&m->summary[s]);
        for (int k = 0; k < L_KINDS; k++) {
            free(m->lists[s][k].rows);
            free(m->lists[s][k].len);
        }
    }
}

static bool md_doc_build(md_doc *m, const kd_report *r)
{
    memset(m, 0, sizeof *m);
    m->r = r;
    m->n_stages = r->diff->n_stages;
    kd_sb_printf(&m->prelude, "%s\n\n", gate_line(r));
    md_warnings(r, &m->prelude);
    /* what changed leads, before the inputs' tables */
    kd_strbuf head = {0};
    headline(r, true, &head);
    if (head.n)
        kd_sb_printf(&m->prelude, "%s\n", kd_sb_str(&head));
    m->prelude.oom = m->prelude.oom || head.oom;
    kd_sb_free(&head);
    md_inputs(r, &m->prelude);
    if (!m->n_stages)
        kd_sb_puts(&m->prelude, "No stage is present on both sides: nothing was compared.\n");
    bool ok = !m->prelude.oom;
    kd_strbuf scratch = {0};
    for (size_t s = 0; ok && s < m->n_stages; s++) {
        md_summary(r, &r->diff->stages[s], &m->summary[s]);
        md_stage_noise(r, &r->diff->stages[s], &m->summary[s]);
        ok = !m->summary[s].oom;
        for (int k = 0; ok && k < L_KINDS; k++) {
            md_list *l = &m->lists[s][k];
            l->kind = (md_kind)k;
            l->r = r;
            l->st = &r->diff->stages[s];
            l->has_stats = stage_has_stats(l->st);
            ok = list_select(l) && list_measure(l, &scratch);
        }
    }
    kd_sb_free(&scratch);
    return ok;
}

static size_t md_doc_size(const md_doc *m)
{
    size_t n = m->prelude.n;
    for (size_t s = 0; s < m->n_stages; s++) {
        n += m->summary[s].n;
        for (int k = 0; k < L_KINDS; k++)
            n += list_size(&m->lists[s][k]);
    }
    return n;
}

/* Refills one tier's lists, in document order, row by row while the whole
 * stays under the limit (each list keeps a prefix of its rows). */
static void md_fill_tier(md_doc *m, md_tier t)
{
    size_t total = md_doc_size(m);
    for (size_t s = 0; s < m->n_stages; s++)
        for (int k = 0; k < L_KINDS; k++) {
            md_list *l = &m->lists[s][k];
            if (tier_of[k] != t)
                continue;
            while (l->keep < l->n) {
                size_t grow = l->len[l->keep] + note_len(l->n - l->keep - 1);
                size_t shrink = note_len(l->n - l->keep);
                if (total + grow - shrink >= KD_MARKDOWN_LIMIT)
                    break;
                total = total + grow - shrink;
                l->keep++;
            }
        }
}

/* product.md §5: under the limit by cutting the full table first, then the
 * added/removed lists, the priority changes and the top lists. */
static void md_doc_fit(md_doc *m)
{
    static const md_tier order[] = {TIER_FULL, TIER_ADDREM, TIER_PRIORITY, TIER_TOP};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (md_doc_size(m) < KD_MARKDOWN_LIMIT)
            return;
        for (size_t s = 0; s < m->n_stages; s++)
            for (int k = 0; k < L_KINDS; k++)
                if (tier_of[k] == order[i])
                    m->lists[s][k].keep = 0;
        if (md_doc_size(m) < KD_MARKDOWN_LIMIT) {
            md_fill_tier(m, order[i]);
            return;
        }
    }
}

static bool md_doc_write(const md_doc *m, FILE *out)
{
    kd_strbuf b = {0};
    fwrite(kd_sb_str(&m->prelude), 1, m->prelude.n, out);
    for (size_t s = 0; s < m->n_stages; s++) {
        fwrite(kd_sb_str(&m->summary[s]), 1, m->summary[s].n, out);
        for (int k = 0; k < L_KINDS; k++) {
            const md_list *l = &m->lists[s][k];
            kd_sb_reset(&b);
            md_list_head(l, &b);
            for (size_t i = 0; i < l->keep; i++)
                md_list_row(l, i, &b);
            md_note(l->n - l->keep, &b);
            md_list_tail(l, &b);
            fwrite(kd_sb_str(&b), 1, b.n, out);
        }
    }
    bool ok = !b.oom;
    kd_sb_free(&b);
    return ok && !ferror(out);
}

bool kd_diff_write_markdown(const kd_report *r, FILE *out)
{
    md_doc m;
    bool ok = md_doc_build(&m, r);
    if (ok) {
        md_doc_fit(&m);
        ok = md_doc_write(&m, out);
    }
    md_doc_free(&m);
    return ok;
}

/* ---- CSV ---------------------------------------------------------------------------- */

static const char *const csv_side_fields[] = {
    "launches",   "total_us",       "exposed_us", "hidden_us",      "hidden_by_compute_us",
    "share_pct",  "exposed_ratio",  "hidden_ratio", "priority",     "verdict",
    "recommendation", "dependency_risk", "python_scope", NULL};

static const char *const csv_tail_fields[] = {"d_total_us", "d_exposed_us", "d_hidden_us", "pct_total",
                                              "pct_exposed", "pct_hidden", "priority_change", NULL};

/* the statistics (schema 2): appended, so the columns before keep their
 * places; the row's test, then each side's per-launch distribution */
static const char *const csv_stat_fields[] = {"change",   "change_kind", "p_value",    "q_value",
                                              "shift_us", "shift_lo_us", "shift_hi_us", NULL};

typedef struct {
    const char *name;
    bool exposed; /* of the per-launch exposed time, else of the duration */
    size_t offset; /* in kd_dist */
} dist_field;

static const dist_field dist_fields[] = {
    {"dur_median_us", false, offsetof(kd_dist, median)},   {"dur_mean_us", false, offsetof(kd_dist, mean)},
    {"dur_p10_us", false, offsetof(kd_dist, p10)},         {"dur_p90_us", false, offsetof(kd_dist, p90)},
    {"dur_min_us", false, offsetof(kd_dist, min)},         {"dur_max_us", false, offsetof(kd_dist, max)},
    {"dur_sd_us", false, offsetof(kd_dist, sd)},           {"exposed_median_us", true, offsetof(kd_dist, median)},
    {"exposed_mean_us", true, offsetof(kd_dist, mean)},    {"exposed_p90_us", true, offsetof(kd_dist, p90)},
};
#define N_DIST_FIELDS (sizeof dist_fields / sizeof dist_fields[0])

/* a side's distribution field; false when the side has no sample */
static bool dist_value(const kd_diff_side *s, const dist_field *f, double *v)
{
    const kd_dist *d = f->exposed ? &s->exposed : &s->dur;
    if (!dist_known(s, d))
        return false;
    *v = *(const double *)((const char *)d + f->offset);
    return true;
}

static void csv_header(FILE *out)
{
    fputs("stage,kernel,category,match,evidence,baseline_name,candidate_name", out);
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; csv_side_fields[i]; i++)
            fprintf(out, ",%s%s", side ? "c_" : "b_", csv_side_fields[i]);
    for (size_t i = 0; csv_tail_fields[i]; i++)
        fprintf(out, ",%s", csv_tail_fields[i]);
    for (size_t i = 0; csv_stat_fields[i]; i++)
        fprintf(out, ",%s", csv_stat_fields[i]);
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < N_DIST_FIELDS; i++)
            fprintf(out, ",%s%s", side ? "c_" : "b_", dist_fields[i].name);
    fputs(",b_step_exposed_mean_us,b_step_exposed_ci_us,c_step_exposed_mean_us,c_step_exposed_ci_us", out);
    fputc('\n', out);
}

/* a side's per-step exposed mean and 95 % half-width (NaN: no steps) */
static double step_stat(const kd_diff_row *r, const kd_diff_side *s, double v)
{
    return s->present ? row_stat(r, v) : NAN;
}

/* a text cell (libcsv quoting); NULL is an empty cell */
static void csv_text(FILE *out, const char *s, bool first)
{
    if (!first)
        fputc(',', out);
    if (s)
        csv_fwrite(out, s, strlen(s));
}

/* a number cell; NaN (and an absent side) is an empty cell */
static void csv_number(FILE *out, int prec, double v, bool present)
{
    char buf[64];
    fputc(',', out);
    if (present && isfinite(v))
        fputs(fmt_fixed(buf, sizeof buf, prec, v), out);
}

/* a probability: 4 significant digits ("0.3125", "2.31e-09"), empty when NaN */
static void csv_probability(FILE *out, double v)
{
    fputc(',', out);
    if (isfinite(v))
        fprintf(out, "%.4g", v);
}

/* the row's test and each side's distribution (csv_stat_fields, dist_fields) */
static void csv_stats(FILE *out, const kd_diff_row *r)
{
    csv_text(out, r->change, false);
    csv_text(out, row_known(r) ? row_change_kind(r) : NULL, false);
    csv_probability(out, row_stat(r, r->p_value));
    csv_probability(out, row_stat(r, r->q_value));
    csv_number(out, 3, row_stat(r, r->shift_us), true);
    csv_number(out, 3, row_stat(r, r->shift_lo_us), true);
    csv_number(out, 3, row_stat(r, r->shift_hi_us), true);
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < N_DIST_FIELDS; i++) {
            double v = NAN;
            bool known = dist_value(side ? &r->cand : &r->base, &dist_fields[i], &v);
            csv_number(out, 3, v, known);
        }
    csv_number(out, 3, step_stat(r, &r->base, r->base.step_exposed_mean), true);
    csv_number(out, 3, step_stat(r, &r->base, r->base.step_exposed_ci), true);
    csv_number(out, 3, step_stat(r, &r->cand, r->cand.step_exposed_mean), true);
    csv_number(out, 3, step_stat(r, &r->cand, r->cand.step_exposed_ci), true);
}

static void csv_side(FILE *out, const kd_diff_side *s)
{
    bool p = s->present;
    fputc(',', out);
    if (p)
        fprintf(out, "%" PRIu64, s->launches);
    csv_number(out, 3, s->total_us, p);
    csv_number(out, 3, s->exposed_us, p);
    csv_number(out, 3, s->hidden_us, p);
    csv_number(out, 3, s->hidden_by_compute_us, p);
    csv_number(out, 4, s->share_pct, p);
    csv_number(out, 4, s->exposed_ratio, p);
    csv_number(out, 4, s->hidden_ratio, p);
    csv_text(out, p ? s->priority : NULL, false);
    csv_text(out, p ? s->verdict : NULL, false);
    csv_text(out, p ? s->recommendation : NULL, false);
    csv_text(out, p ? s->dependency_risk : NULL, false);
    csv_text(out, p ? (s->python_scope ? s->python_scope : "") : NULL, false);
}

static void csv_row(FILE *out, kd_stage stage, const kd_diff_row *r)
{
    csv_text(out, kd_stage_name(stage), true);
    csv_text(out, r->name, false);
    csv_text(out, r->category_name, false);
    csv_text(out, kd_diff_row_kind(r), false);
    csv_text(out, row_evidence(r), false); /* "" (quoted) when there is nothing to say */
    csv_text(out, r->base.present ? r->base.name : NULL, false);
    csv_text(out, r->cand.present ? r->cand.name : NULL, false);
    csv_side(out, &r->base);
    csv_side(out, &r->cand);
    csv_number(out, 3, r->d_total_us, true);
    csv_number(out, 3, r->d_exposed_us, true);
    csv_number(out, 3, r->d_hidden_us, true);
    csv_number(out, 4, r->pct_total, true);
    csv_number(out, 4, r->pct_exposed, true);
    csv_number(out, 4, r->pct_hidden, true);
    csv_text(out, r->priority_change, false);
    csv_stats(out, r);
    fputc('\n', out);
}

bool kd_diff_write_csv(const kd_report *r, FILE *out)
{
    csv_header(out);
    for (size_t s = 0; s < r->diff->n_stages; s++) {
        const kd_diff_stage *st = &r->diff->stages[s];
        for (size_t i = 0; i < st->n_rows; i++)
            csv_row(out, st->stage, &st->rows[i]);
    }
    return fflush(out) == 0 && !ferror(out);
}

/* ---- JSON --------------------------------------------------------------------------- */

static void json_str_or_null(kd_json *j, const char *s)
{
    if (s)
        kd_json_str(j, s);
    else
        kd_json_null(j);
}

static void json_files(kd_json *j, const kd_diff_input *in)
{
    kd_json_array_open(j);
    for (size_t i = 0; i < in->n_files; i++)
        kd_json_str(j, in->files[i].path);
    kd_json_array_close(j);
}

static void json_long_or_null(kd_json *j, const char *key, long v)
{
    kd_json_key(j, key);
    if (v >= 0)
        kd_json_int(j, v);
    else
        kd_json_null(j);
}

static void json_input_side(kd_json *j, const kd_diff_input *in)
{
    kd_json_map_open(j);
    kd_json_key(j, "stages_from");
    kd_json_str(j, in->stages_how);
    kd_json_key(j, "stages");
    kd_json_str(j, in->stages);
    kd_json_key(j, "steps_from");
    json_str_or_null(j, in->steps_from && *in->steps_from ? in->steps_from : NULL);
    kd_json_key(j, "files");
    kd_json_array_open(j);
    for (size_t i = 0; i < in->n_files; i++) {
        const kd_diff_file *f = &in->files[i];
        kd_json_map_open(j);
        kd_json_key(j, "path");
        kd_json_str(j, f->path);
        kd_json_key(j, "stages_from");
        kd_json_str(j, f->stages_from);
        json_long_or_null(j, "rank", f->rank);
        kd_json_key(j, "rank_from");
        json_str_or_null(j, *f->rank_from ? f->rank_from : NULL);
        json_long_or_null(j, "world_size", f->world_size);
        kd_json_key(j, "device");
        json_str_or_null(j, *f->device ? f->device : NULL);
        kd_json_map_close(j);
    }
    kd_json_array_close(j);
    kd_json_key(j, "accounting");
    kd_accounting_write_json(j, &in->acc);
    kd_json_map_close(j);
}

static void json_inputs(kd_json *j, const kd_report *r)
{
    const kd_diff *d = r->diff;
    kd_json_key(j, "inputs");
    kd_json_map_open(j);
    kd_json_key(j, "baseline");
    kd_json_str(j, opt_path(r, false));
    kd_json_key(j, "candidate");
    kd_json_str(j, opt_path(r, true));
    kd_json_key(j, "baseline_mapping");
    json_str_or_null(j, opt_mapping(r, false));
    kd_json_key(j, "candidate_mapping");
    json_str_or_null(j, opt_mapping(r, true));
    kd_json_key(j, "baseline_files");
    json_files(j, side_input(r, false));
    kd_json_key(j, "candidate_files");
    json_files(j, side_input(r, true));
    kd_json_key(j, "baseline_pid");
    json_str_or_null(j, d->n_stages ? stage_pid(&d->stages[0], false) : NULL);
    kd_json_key(j, "candidate_pid");
    json_str_or_null(j, d->n_stages ? stage_pid(&d->stages[0], true) : NULL);
    kd_json_key(j, "identical");
    json_str_or_null(j, d->identical);
    kd_json_key(j, "rules");
    kd_json_map_open(j);
    kd_json_key(j, "name");
    json_str_or_null(j, d->rules_name);
    kd_json_key(j, "source");
    json_str_or_null(j, d->rules_source);
    kd_json_key(j, "gate_category");
    kd_json_str(j, kd_diff_category_name(d, d->n_categories ? d->gate_category : KD_CAT_COMMUNICATION));
    kd_json_map_close(j);
    kd_json_key(j, "sides");
    kd_json_map_open(j);
    kd_json_key(j, "baseline");
    json_input_side(j, side_input(r, false));
    kd_json_key(j, "candidate");
    json_input_side(j, side_input(r, true));
    kd_json_map_close(j);
    kd_json_key(j, "normalize");
    kd_json_str(j, normalized(r) ? "steps" : "none");
    kd_json_key(j, "steps");
    kd_json_map_open(j);
    kd_json_key(j, "baseline");
    kd_json_int(j, (int64_t)d->steps_base);
    kd_json_key(j, "candidate");
    kd_json_int(j, (int64_t)d->steps_cand);
    kd_json_map_close(j);
    kd_json_map_close(j);
}

static void json_threshold(kd_json *j, const char *key, const kd_gate *g)
{
    kd_json_key(j, key);
    if (!g || !g->set) {
        kd_json_null(j);
        return;
    }
    kd_json_map_open(j);
    kd_json_key(j, "rel_pct");
    if (g->rel_pct < 0)
        kd_json_null(j);
    else
        kd_json_double(j, g->rel_pct);
    kd_json_key(j, "abs_us");
    kd_json_double(j, g->abs_us);
    kd_json_map_close(j);
}

static const char *verdict_name(const kd_report *r)
{
    if (!r->gate)
        return "pass";
    switch (r->gate->verdict) {
    case KD_VERDICT_FAIL: return "fail";
    case KD_VERDICT_WARN: return "warn";
    case KD_VERDICT_UNJUDGED: return "unjudged";
    default: return "pass";
    }
}

static void json_gate(kd_json *j, const kd_report *r)
{
    kd_json_key(j, "gate");
    kd_json_map_open(j);
    kd_json_key(j, "verdict");
    kd_json_str(j, verdict_name(r));
    kd_json_key(j, "line");
    kd_json_str(j, gate_line(r));
    json_threshold(j, "fail_on", r->fail);
    json_threshold(j, "warn_on", r->warn);
    kd_json_map_close(j);
    kd_json_key(j, "warnings");
    kd_json_array_open(j);
    for (size_t i = 0; i < n_warnings(r); i++)
        kd_json_str(j, warning_at(r, i));
    kd_json_array_close(j);
}

/* One side's (or the delta's) summary; launches as a signed difference for
 * the delta. */
static void json_num_key(kd_json *j, const char *prefix, const char *key, bool present, double v)
{
    char k[64];
    snprintf(k, sizeof k, "%s%s", prefix, key);
    kd_json_key(j, k);
    if (present)
        kd_json_double(j, v);
    else
        kd_json_null(j);
}

static void json_summary(kd_json *j, const kd_diff *d, const kd_stage_summary *s, const kd_stage_summary *minus)
{
    kd_json_map_open(j);
    kd_json_key(j, "busy_us");
    kd_json_double(j, s->busy_us - (minus ? minus->busy_us : 0.0));
    kd_json_key(j, "overlap_us");
    kd_json_double(j, s->overlap_us - (minus ? minus->overlap_us : 0.0));
    kd_json_key(j, "max_concurrent_streams");
    kd_json_double(j, s->max_concurrent_streams - (minus ? minus->max_concurrent_streams : 0.0));
    kd_json_key(j, "launches");
    kd_json_int(j, (int64_t)s->launches - (minus ? (int64_t)minus->launches : 0));
    kd_json_key(j, "communication_launches");
    kd_json_int(j, (int64_t)s->comm_kernels - (minus ? (int64_t)minus->comm_kernels : 0));
    if (!minus) {
        /* per ProfilerStep: mean and 95 % half-width (null without steps) */
        bool st = s->steps > 0;
        kd_json_key(j, "steps");
        kd_json_int(j, (int64_t)s->steps);
        json_num_key(j, "", "step_busy_mean_us", st, s->step_busy_mean);
        json_num_key(j, "", "step_busy_ci_us", st, s->step_busy_ci);
        json_num_key(j, "", "step_gate_exposed_mean_us", st, s->step_gate_mean);
        json_num_key(j, "", "step_gate_exposed_ci_us", st, s->step_gate_ci);
    }
    kd_json_key(j, "categories");
    kd_json_map_open(j);
    kd_category order[KD_CAT_MAX];
    size_t ncat = kd_diff_report_categories(d, order);
    for (size_t k = 0; k < ncat; k++) {
        kd_category c = order[k];
        const kd_time_split *x = &s->by_category[c], *y = minus ? &minus->by_category[c] : NULL;
        kd_json_key(j, kd_diff_category_name(d, c));
        kd_json_map_open(j);
        kd_json_key(j, "total_us");
        kd_json_double(j, x->total_us - (y ? y->total_us : 0.0));
        kd_json_key(j, "exposed_us");
        kd_json_double(j, x->exposed_us - (y ? y->exposed_us : 0.0));
        kd_json_key(j, "hidden_us");
        kd_json_double(j, x->hidden_us - (y ? y->hidden_us : 0.0));
        kd_json_map_close(j);
    }
    kd_json_map_close(j);
    kd_json_map_close(j);
}


static void json_str_key(kd_json *j, const char *prefix, const char *key, bool present, const char *v)
{
    char k[64];
    snprintf(k, sizeof k, "%s%s", prefix, key);
    kd_json_key(j, k);
    json_str_or_null(j, present ? v : NULL);
}

static void json_side(kd_json *j, const char *prefix, const kd_diff_side *s)
{
    bool p = s->present;
    char k[64];
    snprintf(k, sizeof k, "%slaunches", prefix);
    kd_json_key(j, k);
    if (p)
        kd_json_int(j, (int64_t)s->launches);
    else
        kd_json_null(j);
    json_num_key(j, prefix, "total_us", p, s->total_us);
    json_num_key(j, prefix, "exposed_us", p, s->exposed_us);
    json_num_key(j, prefix, "hidden_us", p, s->hidden_us);
    json_num_key(j, prefix, "hidden_by_compute_us", p, s->hidden_by_compute_us);
    json_num_key(j, prefix, "share_pct", p, s->share_pct);
    json_num_key(j, prefix, "exposed_ratio", p, s->exposed_ratio);
    json_num_key(j, prefix, "hidden_ratio", p, s->hidden_ratio);
    json_str_key(j, prefix, "priority", p, s->priority);
    json_str_key(j, prefix, "verdict", p, s->verdict);
    json_str_key(j, prefix, "recommendation", p, s->recommendation);
    json_str_key(j, prefix, "dependency_risk", p, s->dependency_risk);
    json_str_key(j, prefix, "python_scope", p, s->python_scope ? s->python_scope : "");
}

static void json_row(kd_json *j, kd_stage stage, const kd_diff_row *r)
{
    kd_json_map_open(j);
    json_str_key(j, "", "stage", true, kd_stage_name(stage));
    json_str_key(j, "", "kernel", true, r->name);
    json_str_key(j, "", "category", true, r->category_name);
    json_str_key(j, "", "match", true, kd_diff_row_kind(r));
    json_str_key(j, "", "evidence", true, row_evidence(r));
    json_str_key(j, "", "baseline_name", r->base.present, r->base.name);
    json_str_key(j, "", "candidate_name", r->cand.present, r->cand.name);
    json_side(j, "b_", &r->base);
    json_side(j, "c_", &r->cand);
    json_num_key(j, "", "d_total_us", true, r->d_total_us);
    json_num_key(j, "", "d_exposed_us", true, r->d_exposed_us);
    json_num_key(j, "", "d_hidden_us", true, r->d_hidden_us);
    json_num_key(j, "", "pct_total", true, r->pct_total);
    json_num_key(j, "", "pct_exposed", true, r->pct_exposed);
    json_num_key(j, "", "pct_hidden", true, r->pct_hidden);
    json_str_key(j, "", "priority_change", true, r->priority_change);
    /* the statistics, as the CSV's csv_stats */
    json_str_key(j, "", "change", true, r->change);
    json_str_key(j, "", "change_kind", row_known(r), row_change_kind(r));
    json_num_key(j, "", "p_value", true, row_stat(r, r->p_value));
    json_num_key(j, "", "q_value", true, row_stat(r, r->q_value));
    json_num_key(j, "", "shift_us", true, row_stat(r, r->shift_us));
    json_num_key(j, "", "shift_lo_us", true, row_stat(r, r->shift_lo_us));
    json_num_key(j, "", "shift_hi_us", true, row_stat(r, r->shift_hi_us));
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < N_DIST_FIELDS; i++) {
            double v = NAN;
            bool known = dist_value(side ? &r->cand : &r->base, &dist_fields[i], &v);
            json_num_key(j, side ? "c_" : "b_", dist_fields[i].name, known, v);
        }
    json_num_key(j, "b_", "step_exposed_mean_us", true, step_stat(r, &r->base, r->base.step_exposed_mean));
    json_num_key(j, "b_", "step_exposed_ci_us", true, step_stat(r, &r->base, r->base.step_exposed_ci));
    json_num_key(j, "c_", "step_exposed_mean_us", true, step_stat(r, &r->cand, r->cand.step_exposed_mean));
    json_num_key(j, "c_", "step_exposed_ci_us", true, step_stat(r, &r->cand, r->cand.step_exposed_ci));
    kd_json_map_close(j);
}

/* the statistics' settings in force */
static void json_statistics(kd_json *j, const kd_diff *d)
{
    kd_json_key(j, "statistics");
    kd_json_map_open(j);
    kd_json_key(j, "fdr");
    kd_json_double(j, d->fdr);
    kd_json_key(j, "min_effect_pct");
    kd_json_double(j, d->min_effect_pct);
    kd_json_key(j, "min_effect_us");
    kd_json_double(j, d->min_effect_us);
    kd_json_key(j, "gate_significance");
    kd_json_bool(j, d->gate_significance);
    kd_json_key(j, "min_launches");
    kd_json_int(j, KD_STATS_MIN_LAUNCHES);
    kd_json_map_close(j);
}

static void json_stage(kd_json *j, const kd_report *r, const kd_diff_stage *s)
{
    kd_json_map_open(j);
    json_str_key(j, "", "stage", true, kd_stage_name(s->stage));
    json_str_key(j, "", "display", true, kd_stage_display_name(s->stage));
    json_str_key(j, "", "baseline_pid", true, stage_pid(s, false));
    json_str_key(j, "", "candidate_pid", true, stage_pid(s, true));
    kd_json_key(j, "summary");
    kd_json_map_open(j);
    kd_json_key(j, "baseline");
    json_summary(j, r->diff, &s->sum_base, NULL);
    kd_json_key(j, "candidate");
    json_summary(j, r->diff, &s->sum_cand, NULL);
    kd_json_key(j, "delta");
    json_summary(j, r->diff, &s->sum_cand, &s->sum_base);
    kd_json_map_close(j);
    /* the rows by change (the library's counts) and the gate's evidence */
    kd_json_key(j, "changed");
    kd_json_int(j, (int64_t)s->n_changed);
    kd_json_key(j, "noise");
    kd_json_int(j, (int64_t)s->n_noise);
    kd_json_key(j, "na");
    kd_json_int(j, (int64_t)s->n_na);
    json_num_key(j, "", "noise_max_pct", true, s->noise_max_pct);
    const kd_gate_evidence *g = &s->gate_evidence;
    kd_json_key(j, "gate_evidence");
    kd_json_map_open(j);
    kd_json_key(j, "tested");
    kd_json_bool(j, g->tested);
    json_num_key(j, "", "p_value", g->tested, g->p_value);
    json_num_key(j, "", "shift_us", g->tested, g->shift_us);
    json_num_key(j, "", "lo_us", g->tested, g->lo_us);
    json_num_key(j, "", "hi_us", g->tested, g->hi_us);
    kd_json_key(j, "step_tested");
    kd_json_bool(j, g->step_tested);
    json_num_key(j, "", "step_diff_us", g->step_tested, g->step_diff_us);
    json_num_key(j, "", "step_lo_us", g->step_tested, g->step_lo_us);
    json_num_key(j, "", "step_hi_us", g->step_tested, g->step_hi_us);
    kd_json_map_close(j);
    kd_json_key(j, "rows");
    kd_json_array_open(j);
    for (size_t i = 0; i < s->n_rows; i++)
        json_row(j, s->stage, &s->rows[i]);
    kd_json_array_close(j);
    kd_json_map_close(j);
}

bool kd_diff_write_json(const kd_report *r, FILE *out)
{
    kd_json j;
    if (!kd_json_open(&j, out, true))
        return false;
    kd_json_map_open(&j);
    kd_json_key(&j, "schema");
    kd_json_str(&j, "kerndiff.diff/2");
    json_inputs(&j, r);
    json_gate(&j, r);
    json_statistics(&j, r->diff);
    kd_json_key(&j, "stages");
    kd_json_array_open(&j);
    for (size_t s = 0; s < r->diff->n_stages; s++)
        json_stage(&j, r, &r->diff->stages[s]);
    kd_json_array_close(&j);
    kd_json_map_close(&j);
    bool ok = kd_json_close(&j);
    if (fputc('\n', out) == EOF)
        ok = false;
    return ok && !ferror(out);
}

/* ---- text ------------------------------------------------------------------------------ */

/* X_CHANGE only in a stage whose rows carry their change */
enum { X_KERNEL, X_CAT, X_MATCH, X_BEXP, X_CEXP, X_DEXP, X_DPCT, X_BTOT, X_CTOT, X_PRIO, X_CHANGE, X_COLS };

static const char *const text_headers[X_COLS] = {"KERNEL",    "CATEGORY",  "MATCH",   "B_EXPOSED",
                                                 "C_EXPOSED", "D_EXPOSED", "D_EXP%",  "B_TOTAL",
                                                 "C_TOTAL",   "PRIORITY",  "CHANGE"};

#define X_CELL 256

/* control characters would reach the terminal: '?' instead */
static void text_sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* a kernel name elided in the middle (short_kernel_name); max * 4 < X_CELL */
static void text_cell_name(char *cell, const char *s, size_t max)
{
    char *t = short_kernel_name(s, max);
    snprintf(cell, X_CELL, "%s", t ? t : "");
    free(t);
    text_sanitize(cell);
}

/* Trace text for a line of the text report: elided in the middle to max
 * code points (the last `tail` kept), control characters as '?'. Malloc'd;
 * NULL when out of memory. */
static char *text_elided(const char *s, size_t max, size_t tail)
{
    char *t = elide_middle(s ? s : "", max, tail);
    if (t)
        text_sanitize(t);
    return t;
}

/* fputs of a kernel name elided to KD_REPORT_TEXT_NAME */
static bool text_put_name(FILE *out, const char *name)
{
    char cell[X_CELL];
    text_cell_name(cell, name, KD_REPORT_TEXT_NAME);
    return fputs(cell, out) != EOF;
}

/* fputs of a row's evidence, elided to KD_REPORT_TEXT_EVIDENCE */
static bool text_put_evidence(FILE *out, const kd_diff_row *r)
{
    char *t = text_elided(row_evidence(r), KD_REPORT_TEXT_EVIDENCE, KD_REPORT_TEXT_EVIDENCE / 2);
    if (!t)
        return false;
    fputs(t, out);
    free(t);
    return true;
}

static void text_side_num(char *cell, const kd_diff_side *s, double v)
{
    if (s->present)
        fmt_fixed(cell, X_CELL, 1, v);
    else
        snprintf(cell, X_CELL, "-");
}

static void text_cells(const kd_diff_row *r, char cells[X_COLS][X_CELL])
{
    text_cell_name(cells[X_KERNEL], r->name, KD_REPORT_TEXT_NAME);
    snprintf(cells[X_CAT], X_CELL, "%s", r->category_name);
    snprintf(cells[X_MATCH], X_CELL, "%s", kd_diff_row_kind(r));
    text_side_num(cells[X_BEXP], &r->base, r->base.exposed_us);
    text_side_num(cells[X_CEXP], &r->cand, r->cand.exposed_us);
    fmt_signed(cells[X_DEXP], X_CELL, 1, r->d_exposed_us);
    fmt_row_pct(cells[X_DPCT], X_CELL, r, r->pct_exposed);
    text_side_num(cells[X_BTOT], &r->base, r->base.total_us);
    text_side_num(cells[X_CTOT], &r->cand, r->cand.total_us);
    snprintf(cells[X_PRIO], X_CELL, "%s", r->priority_change);
    snprintf(cells[X_CHANGE], X_CELL, "%s", row_change(r));
    text_sanitize(cells[X_CHANGE]);
}

static bool text_numeric(int c) { return c >= X_BEXP && c <= X_CTOT; }

static void text_print_row(FILE *out, char cells[X_COLS][X_CELL], const size_t *width, int ncols)
{
    for (int c = 0; c < ncols; c++) {
        size_t len = kd_utf8_len(cells[c]);
        int pad = (int)(width[c] > len ? width[c] - len : 0);
        if (text_numeric(c))
            fprintf(out, "%*s%s", pad, "", cells[c]);
        else if (c == ncols - 1)
            fputs(cells[c], out);
        else
            fprintf(out, "%s%*s", cells[c], pad, "");
        if (c < ncols - 1)
            fputs("  ", out);
    }
    fputc('\n', out);
}

/* Under a row whose change is known and shown: its launches, medians, shift
 * and test (stats_text), e.g.
 *     228 -> 228 launches, median 529.2 -> 535.7 us, shift +6.5 us [+5.9, +7.1] (p 2e-9, per call) */
static bool text_stats(FILE *out, const kd_diff_row *r)
{
    if (!row_known(r))
        return true;
    kd_strbuf b = {0};
    stats_text(&b, r, false);
    bool ok = !b.oom;
    fprintf(out, "    %s\n", kd_sb_str(&b));
    kd_sb_free(&b);
    return ok;
}

/* Under a matched row that is not exact, what the table cannot show: the
 * baseline's name when it differs, and why the two were paired:
 *     paired with triton_poi_fused_addmm_gelu_view_17: _17 -> _18; launches 76 = 76; ...
 * Nothing for an exact match or a one-sided row. */
static bool text_paired(FILE *out, const kd_diff_row *r)
{
    if (!r->base.present || !r->cand.present || r->match == KD_MATCH_EXACT)
        return true;
    bool renamed = strcmp(r->base.name, r->cand.name) != 0, why = *row_evidence(r) != '\0';
    if (!renamed && !why)
        return true;
    bool ok = true;
    fputs(renamed ? "    paired with " : "    paired", out);
    if (renamed)
        ok = text_put_name(out, r->base.name);
    if (why) {
        fputs(": ", out);
        ok = ok && text_put_evidence(out, r);
    }
    fputc('\n', out);
    return ok;
}

/* The replaced pairs of a stage as story lines, before its table (the
 * Markdown's bullets in ASCII), at most KD_REPORT_TEXT_ROWS of them:
 *   replaced:
 *     aiter::fmha_fwd_hd128_bf16_rtz -> sage_fwd: +1400.0 us total
 *       (120700.0 -> 122100.0 us), 228 = 228 launches -- EVIDENCE   (one line) */
static bool text_replaced(const kd_report *r, const kd_diff_stage *s, FILE *out)
{
    const char *u = time_unit(r);
    size_t n = 0, shown = 0;
    bool ok = true;
    for (size_t i = 0; i < s->n_rows; i++) {
        const kd_diff_row *row = &s->rows[i];
        if (!row_is_replaced(row))
            continue;
        n++;
        if (shown == KD_REPORT_TEXT_ROWS)
            continue;
        if (!shown++)
            fputs("replaced:\n", out);
        char x[64], y[64], z[64];
        kd_strbuf b = {0};
        fputs("  ", out);
        ok = ok && text_put_name(out, row->base.name);
        fputs(" -> ", out);
        ok = ok && text_put_name(out, row->cand.name);
        launches_text(&b, row, "->");
        fprintf(out, ": %s %s total (%s -> %s %s), %s", fmt_signed(x, sizeof x, 1, row->d_total_us), u,
                fmt_fixed(y, sizeof y, 1, row->base.total_us), fmt_fixed(z, sizeof z, 1, row->cand.total_us), u,
                kd_sb_str(&b));
        ok = ok && !b.oom;
        kd_sb_free(&b);
        if (*row_evidence(row)) {
            fputs(" -- ", out);
            ok = ok && text_put_evidence(out, row);
        }
        fputc('\n', out);
    }
    if (n > shown)
        fprintf(out, "  %zu more replaced pairs not shown; see --csv or --json\n", n - shown);
    return ok;
}

/* whether the table lists a row: a change beyond noise always; never a
 * noise row (one line says how many); n/a rows and rows of unknown change
 * when they moved by 0.05 us or more, came or went or changed priority */
static bool text_lists(const kd_diff_row *r)
{
    return row_is_real(r) || (!row_is_noise(r) && row_is_changed(r));
}

/* the shown rows: the first KD_REPORT_TEXT_ROWS listed ones, the n/a rows
 * after the others */
static size_t text_pick(const kd_diff_stage *s, size_t *pick, size_t *changed)
{
    size_t n = 0;
    *changed = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < s->n_rows; i++) {
            const kd_diff_row *r = &s->rows[i];
            if (!text_lists(r) || row_is_na(r) != (pass == 1))
                continue;
            if (n < KD_REPORT_TEXT_ROWS)
                pick[n++] = i;
            (*changed)++;
        }
    return n;
}

static void text_summary(const kd_report *r, const kd_diff_stage *s, FILE *out)
{
    const char *u = time_unit(r);
    double bb = s->sum_base.busy_us, bc = s->sum_cand.busy_us;
    double eb = kd_stage_exposed_comm(&s->sum_base), ec = kd_stage_exposed_comm(&s->sum_cand);
    char a[64], b[64], c[64], d[64], e[64], f[64], g[64], h[64];
    fprintf(out, "\n== %s: busy %s -> %s %s (%s, %s); exposed communication %s -> %s %s (%s, %s)\n",
            kd_stage_display_name(s->stage), fmt_fixed(a, sizeof a, 1, bb), fmt_fixed(b, sizeof b, 1, bc), u,
            fmt_signed(c, sizeof c, 1, bc - bb), fmt_rel(d, sizeof d, bb, bc), fmt_fixed(e, sizeof e, 1, eb),
            fmt_fixed(f, sizeof f, 1, ec), u, fmt_signed(g, sizeof g, 1, ec - eb), fmt_rel(h, sizeof h, eb, ec));
    const kd_stage_summary *x = &s->sum_base, *y = &s->sum_cand;
    if (x->steps && y->steps)
        fprintf(out, "per step (%zu -> %zu steps, mean ± 95%%): busy %.1f ± %.1f -> %.1f ± %.1f us; exposed "
                     "%s %.1f ± %.1f -> %.1f ± %.1f us\n",
                x->steps, y->steps, x->step_busy_mean, x->step_busy_ci, y->step_busy_mean, y->step_busy_ci,
                kd_diff_category_name(r->diff, x->gate_category), x->step_gate_mean, x->step_gate_ci,
                y->step_gate_mean, y->step_gate_ci);
}

static bool text_stage(const kd_report *r, const kd_diff_stage *s, FILE *out)
{
    text_summary(r, s, out);
    kd_strbuf g = {0};
    bool ok = true;
    if (gate_evidence_text(r, s, &g) && !g.oom) {
        text_sanitize(g.s);
        fprintf(out, "gate evidence: %s\n", g.s);
    }
    ok = !g.oom;
    kd_sb_free(&g);
    if (!ok || !text_replaced(r, s, out))
        return false;
    size_t *pick = malloc((s->n_rows ? s->n_rows : 1) * sizeof *pick), changed;
    if (!pick)
        return false;
    bool stats = stage_has_stats(s);
    int ncols = stats ? X_COLS : X_CHANGE;
    change_counts cc;
    stage_counts(s, &cc);
    size_t n = text_pick(s, pick, &changed);
    if (n) {
        size_t width[X_COLS];
        char cells[X_COLS][X_CELL];
        for (int c = 0; c < X_COLS; c++)
            width[c] = strlen(text_headers[c]);
        for (size_t i = 0; i < n; i++) {
            text_cells(&s->rows[pick[i]], cells);
            for (int c = 0; c < X_COLS; c++)
                if (kd_utf8_len(cells[c]) > width[c])
                    width[c] = kd_utf8_len(cells[c]);
        }
        for (int c = 0; c < X_COLS; c++)
            snprintf(cells[c], X_CELL, "%s", text_headers[c]);
        text_print_row(out, cells, width, ncols);
        for (size_t i = 0; i < n; i++) {
            const kd_diff_row *row = &s->rows[pick[i]];
            text_cells(row, cells);
            text_print_row(out, cells, width, ncols);
            ok = ok && text_stats(out, row) && text_paired(out, row);
        }
    } else {
        fputs(stats && cc.noise ? "(no kernel changed beyond noise)\n" : "(no kernel changed)\n", out);
    }
    if (changed > n)
        fprintf(out, "%zu more changed rows not shown; see --csv or --json\n", changed - n);
    size_t hidden = s->n_rows - changed - cc.noise;
    if (hidden)
        fprintf(out, "%zu unchanged row%s hidden\n", hidden, hidden == 1 ? "" : "s");
    if (cc.noise) {
        kd_strbuf b = {0};
        noise_text(&cc, &b);
        fprintf(out, "%s\n", kd_sb_str(&b));
        ok = ok && !b.oom;
        kd_sb_free(&b);
    }
    free(pick);
    return ok;
}

/* A path or a device name for the text report: at most KD_REPORT_PATH code
 * points, elided in the middle so a path keeps its file name. */
static char *text_path(const char *s) { return text_elided(s, KD_REPORT_PATH, KD_REPORT_PATH / 2); }

static bool text_inputs(const kd_report *r, FILE *out)
{
    bool ok = true;
    for (int side = 0; ok && side < 2; side++) {
        kd_strbuf pids = {0};
        side_pids(r->diff, side == 1, &pids);
        char *path = text_path(opt_path(r, side == 1));
        ok = path && !pids.oom;
        fprintf(out, "%s %s (pid %s, %.0f ProfilerSteps)", side ? "candidate:" : "baseline: ", path ? path : "",
                pids.n ? kd_sb_str(&pids) : "-", side ? r->diff->steps_cand : r->diff->steps_base);
        free(path);
        kd_sb_free(&pids);
        const char *m = opt_mapping(r, side == 1);
        if (m) {
            path = text_path(m);
            ok = ok && path;
            fprintf(out, ", mapping %s", path ? path : "");
            free(path);
        }
        fputc('\n', out);
        const kd_diff_input *in = side_input(r, side == 1);
        const kd_kernel_accounting *a = &in->acc;
        char rank[96];
        char *device = text_path(device_text(in));
        ok = ok && device;
        fprintf(out, "  stages from %s (%s); rank %s; device %s\n", in->stages_how, in->stages,
                rank_text(in, rank, sizeof rank), device ? device : "");
        free(device);
        fputs("  kernels: ", out);
        kd_accounting_write_text(a, out);
        fputc('\n', out);
    }
    fprintf(out, "normalization: %s\n", normalized(r) ? "steps (every time is per ProfilerStep)" : "none");
    if (r->diff->rules_name) {
        char rules[X_CELL * 2];
        snprintf(rules, sizeof rules, "%s (%s)", r->diff->rules_name,
                 r->diff->rules_source ? r->diff->rules_source : "built-in");
        text_sanitize(rules);
        fprintf(out, "rules: %s\n", rules);
    }
    return ok;
}

bool kd_diff_write_text(const kd_report *r, FILE *out)
{
    fprintf(out, "%s\n", gate_line(r));
    for (size_t i = 0; i < n_warnings(r); i++)
        fprintf(out, "WARNING: %s\n", warning_at(r, i));
    /* what changed leads, before the inputs */
    kd_strbuf head = {0};
    headline(r, false, &head);
    if (head.n)
        fprintf(out, "%s\n", kd_sb_str(&head));
    bool ok = !head.oom;
    kd_sb_free(&head);
    ok = text_inputs(r, out) && ok;
    if (!r->diff->n_stages)
        fputs("\nno stage is present on both sides: nothing was compared\n", out);
    for (size_t s = 0; ok && s < r->diff->n_stages; s++)
        ok = text_stage(r, &r->diff->stages[s], out);
    return ok && !ferror(out);
}
