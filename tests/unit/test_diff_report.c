/* test_diff_report.c — unit tests of src/diff_report.c (product.md §5) on a kd_diff
 * built by hand (no traces): three stages with rows of every kind (exact,
 * long-prefix, prefix, renumbered, replaced, added, removed), a priority
 * change, a NaN percent, a kernel name and an evidence made to break
 * Markdown and CSV, and two long generated names that differ only in their
 * number. Checks the Markdown sections (the replaced pairs, the evidence),
 * escaping and size limit, that the CSV parses back with libcsv (the
 * evidence column), that the JSON parses with yajl_tree, the text report's
 * evidence lines and names elided in the middle, and that every format is
 * deterministic. With the noise statistics (a stage whose rows carry their
 * change: a per-call change, an added kernel, noise rows and an n/a row):
 * the first lines say what changed (or that nothing did), the noise folds
 * into one line, a changed row shows its launches, medians and interval,
 * the CSV has every statistic as a parseable column and the JSON (schema 2)
 * the same keys, the stage counts and the settings. Rows without statistics
 * are reported as before them. */
#include "config.h"

#include <csv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "kerndiff/diff_report.h"
#include "kerndiff/text.h"
#include "suites.h"

#define EVIL "evil|name<script>`x`\nline2\\\"q\","
/* 40 columns, then the statistics: 7 of the row, 10 of each side, 2 per-step of each side */
#define N_CSV_COLUMNS 71
#define N_CSV_COLUMNS_V1 40

/* ---- a hand-made diff ----------------------------------------------------------- */

typedef struct {
    kd_diff d;
    kd_gate fail, warn;
    kd_gate_result gate;
    kd_report rep;
    char *warnings[2];
    char **names; /* generated names, freed at the end */
    size_t n_names;
} fixture;

static void side(kd_diff_side *s, const char *name, kd_category c, double exposed, double hidden,
                 const char *priority)
{
    memset(s, 0, sizeof *s);
    s->present = true;
    s->name = name;
    s->category = c;
    s->launches = 4;
    s->exposed_us = exposed;
    s->hidden_us = hidden;
    s->total_us = exposed + hidden;
    s->hidden_by_compute_us = hidden / 2;
    s->share_pct = s->total_us / 10.0;
    s->exposed_ratio = s->total_us > 0 ? exposed / s->total_us : 0.0;
    s->hidden_ratio = s->total_us > 0 ? hidden / s->total_us : 0.0;
    s->priority = priority;
    s->verdict = priority ? "headroom" : NULL;
    s->recommendation = priority ? "check deps" : NULL;
    s->dependency_risk = priority ? "high" : NULL;
    s->python_scope = "python/sglang/srt/layers/linear.py(450): forward";
}

static void finish(kd_diff_row *r, kd_match_kind m) { kd_diff_row_finish(r, m); }

static const char long_base[] =
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GemmShape<128, 128, 64>, "
    "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_64x3_tn_align8, Swizzle<1>, 3>>";
static const char long_cand[] =
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GemmShape<128, 128, 64>, "
    "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_64x3_tn_align8, Swizzle<8>, 4>>";

/* stage 0 (extend): one row of every kind */
static kd_diff_row *extend_rows(size_t *n)
{
    kd_diff_row *r = calloc(7, sizeof *r);
    ck_assert_ptr_nonnull(r);
    const char *nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    side(&r[0].base, nccl, KD_CAT_COMMUNICATION, 180.0, 0.0, "P1");
    side(&r[0].cand, nccl, KD_CAT_COMMUNICATION, 0.0, 180.9, NULL); /* P1->none, improvement */
    finish(&r[0], KD_MATCH_EXACT);
    side(&r[1].cand, "void flashinfer::norm::FusedAddRMSNormKernel<8u>", KD_CAT_COMPUTE, 40.0, 0.0, NULL);
    finish(&r[1], KD_MATCH_NONE); /* added */
    side(&r[2].base, "void at::native::add_kernel<float>", KD_CAT_ELEMENTWISE, 32.0, 0.0, "P2");
    finish(&r[2], KD_MATCH_NONE); /* removed */
    side(&r[3].base, EVIL, KD_CAT_OTHER, 10.0, 1.0, NULL);
    side(&r[3].cand, EVIL, KD_CAT_OTHER, 20.0, 1.0, NULL); /* regression */
    finish(&r[3], KD_MATCH_EXACT);
    side(&r[4].base, long_base, KD_CAT_COMPUTE, 239.4, 0.0, "P2");
    side(&r[4].cand, long_cand, KD_CAT_COMPUTE, 231.4, 0.0, "P2");
    finish(&r[4], KD_MATCH_LONG_PREFIX);
    side(&r[5].base, "void sgl_kernel::silu_and_mul_kernel<bf16>", KD_CAT_ELEMENTWISE, 0.0, 5.0, "P2");
    side(&r[5].cand, "void sgl_kernel::silu_and_mul_kernel<bf16>", KD_CAT_ELEMENTWISE, 0.5, 5.0, "P1");
    finish(&r[5], KD_MATCH_EXACT); /* P2->P1, NaN percent */
    side(&r[6].base, "Memcpy DtoD (Device -> Device)", KD_CAT_MEMORY, 0.0, 30.0, NULL);
    side(&r[6].cand, "Memcpy DtoD (Device -> Device)", KD_CAT_MEMORY, 0.0, 30.0, NULL);
    finish(&r[6], KD_MATCH_EXACT); /* unchanged */
    *n = 7;
    return r;
}

/* stage 1 (decode): a prefix match and an unchanged row */
static kd_diff_row *decode_rows(size_t *n)
{
    kd_diff_row *r = calloc(2, sizeof *r);
    ck_assert_ptr_nonnull(r);
    side(&r[0].base, "gemm_kernel", KD_CAT_COMPUTE, 50.0, 0.0, NULL);
    side(&r[0].cand, "gemm_kernel_v2", KD_CAT_COMPUTE, 55.0, 0.0, NULL);
    finish(&r[0], KD_MATCH_PREFIX);
    side(&r[1].base, "rotary_kernel", KD_CAT_ELEMENTWISE, 3.0, 0.0, NULL);
    side(&r[1].cand, "rotary_kernel", KD_CAT_ELEMENTWISE, 3.0, 0.0, NULL);
    finish(&r[1], KD_MATCH_EXACT);
    *n = 2;
    return r;
}

/* two generated names of 120 characters that differ only in their number */
#define GEN_NAME(n)                                                                                               \
    "triton_poi_fused__to_copy_add_addmm_gelu_mul_native_layer_norm_native_layer_norm_backward_split_unsqueeze_view_" \
    "1234_" #n
#define EVIDENCE_RENUMBERED "suffix 17 -> 18; 76 = 76 launches; same place in the launch order"
#define EVIDENCE_REPLACED "same place in the launch sequence (after k|a<1>, before k_b); 228 = 228 launches"

/* stage 2 (all): two generated kernels that swapped numbers (renumbered)
 * and a replaced kernel, each with its evidence */
static kd_diff_row *all_rows(size_t *n)
{
    kd_diff_row *r = calloc(3, sizeof *r);
    ck_assert_ptr_nonnull(r);
    side(&r[0].base, "aiter::fmha_fwd_hd128_bf16_rtz", KD_CAT_COMPUTE, 120700.0, 0.0, NULL);
    side(&r[0].cand, "sage_fwd", KD_CAT_COMPUTE, 122100.0, 0.0, NULL);
    r[0].base.launches = r[0].cand.launches = 228;
    r[0].evidence = EVIDENCE_REPLACED;
    finish(&r[0], KD_MATCH_REPLACED);
    side(&r[1].base, GEN_NAME(17), KD_CAT_ELEMENTWISE, 60.0, 0.0, NULL);
    side(&r[1].cand, GEN_NAME(18), KD_CAT_ELEMENTWISE, 65.0, 0.0, NULL);
    r[1].base.launches = r[1].cand.launches = 76;
    r[1].evidence = EVIDENCE_RENUMBERED;
    finish(&r[1], KD_MATCH_RENUMBERED);
    side(&r[2].base, GEN_NAME(18), KD_CAT_ELEMENTWISE, 40.0, 0.0, NULL);
    side(&r[2].cand, GEN_NAME(17), KD_CAT_ELEMENTWISE, 37.0, 0.0, NULL);
    r[2].evidence = "suffix 18 -> 17; 4 = 4 launches";
    finish(&r[2], KD_MATCH_RENUMBERED);
    *n = 3;
    return r;
}

static void summary(kd_stage_summary *s, double comm_exposed)
{
    memset(s, 0, sizeof *s);
    s->gate_category = KD_CAT_COMMUNICATION;
    s->busy_us = 1000.0;
    s->overlap_us = 100.0;
    s->max_concurrent_streams = 2.0;
    s->launches = 40;
    s->comm_kernels = 4;
    s->by_category[KD_CAT_COMMUNICATION] = (kd_time_split){180.0, comm_exposed, 180.0 - comm_exposed};
    s->by_category[KD_CAT_COMPUTE] = (kd_time_split){700.0, 650.0, 50.0};
}

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    kd_diff *d = &f->d;
    ck_assert(kd_diff_init(d));
    d->steps_base = d->base_in.steps = 4;
    d->steps_cand = d->cand_in.steps = 5;
    d->scale_base = d->scale_cand = 1.0;
    d->base_in.path = kd_diff_own(d, "base|line.json.gz");
    d->cand_in.path = kd_diff_own(d, "cand`idate<1>.json.gz");
    d->cand_in.mapping = kd_diff_own(d, "mapping.json");
    for (int side = 0; side < 2; side++) {
        kd_diff_input *in = side ? &d->cand_in : &d->base_in;
        in->files = calloc(1, sizeof *in->files);
        ck_assert_ptr_nonnull(in->files);
        in->files[in->n_files++] = (kd_diff_file){in->path, "annotations", 0, 8, "distributedInfo",
                                                  side ? "NVIDIA H100 | 80GB" : "NVIDIA H100"};
        in->stages_how = "annotations";
        in->stages = "extend/prefill, decode, all";
        in->acc.read = in->acc.analysed = 40;
    }
    d->n_stages = 3;
    d->stages[0].stage = KD_STAGE_EXTEND;
    d->stages[0].rows = extend_rows(&d->stages[0].n_rows);
    summary(&d->stages[0].sum_base, 180.0);
    summary(&d->stages[0].sum_cand, 0.0);
    d->stages[1].stage = KD_STAGE_DECODE;
    d->stages[1].rows = decode_rows(&d->stages[1].n_rows);
    summary(&d->stages[1].sum_base, 10.0);
    summary(&d->stages[1].sum_cand, 10.0);
    d->stages[2].stage = KD_STAGE_ALL;
    d->stages[2].rows = all_rows(&d->stages[2].n_rows);
    summary(&d->stages[2].sum_base, 10.0);
    summary(&d->stages[2].sum_cand, 10.0);
    for (int s = 0; s < 3; s++)
        d->stages[s].base_pid = d->stages[s].cand_pid = kd_diff_own(d, "TP00-gpu");
    d->warnings = calloc(2, sizeof *d->warnings);
    ck_assert_ptr_nonnull(d->warnings);
    d->warnings[0] = strdup("the sides have different ProfilerStep counts (baseline 4, candidate 5)");
    d->warnings[1] = strdup("stage all | is only in the <baseline>");
    d->n_warnings = 2;
    ck_assert(kd_gate_parse("5%,200us", &f->fail, (char[128]){0}, 128));
    kd_diff_gate(d, &f->fail, &f->warn, &f->gate);
    f->rep = (kd_report){d, &f->fail, &f->warn, &f->gate};
}

static void fixture_free(fixture *f)
{
    kd_diff_free(&f->d);
    for (size_t i = 0; i < f->n_names; i++)
        free(f->names[i]);
    free(f->names);
    kd_gate_result_free(&f->gate);
}

/* n rows of long, distinct names; only_added: every row has only a candidate */
static void big_stage(fixture *f, size_t s, size_t n, size_t name_len, bool only_added)
{
    kd_diff_stage *st = &f->d.stages[s];
    free(st->rows);
    st->rows = calloc(n, sizeof *st->rows);
    f->names = realloc(f->names, (f->n_names + n) * sizeof *f->names);
    ck_assert(st->rows && f->names);
    for (size_t i = 0; i < n; i++) {
        char *name = malloc(name_len + 1);
        ck_assert_ptr_nonnull(name);
        int k = snprintf(name, name_len + 1, "kernel_%05zu<|`", i);
        memset(name + k, 'x', name_len - (size_t)k);
        name[name_len] = '\0';
        f->names[f->n_names++] = name;
        kd_diff_row *r = &st->rows[i];
        double e = (double)(n - i);
        if (!only_added)
            side(&r->base, name, KD_CAT_COMPUTE, e, 1.0, NULL);
        side(&r->cand, name, KD_CAT_COMPUTE, 2 * e, 1.0, NULL);
        finish(r, only_added ? KD_MATCH_NONE : KD_MATCH_EXACT);
    }
    st->n_rows = n;
}

/* ---- rendering helpers ---------------------------------------------------------------- */

typedef bool (*writer)(const kd_report *, FILE *);

static char *render(const kd_report *r, writer w, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    ck_assert_ptr_nonnull(f);
    ck_assert(w(r, f));
    ck_assert_int_eq(fclose(f), 0);
    if (len)
        *len = n;
    return buf;
}

/* cells of a Markdown table line: unescaped `|` (not after an odd run of `\`) */
static size_t unescaped_pipes(const char *line, size_t len)
{
    size_t pipes = 0, bs = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '\\') {
            bs++;
            continue;
        }
        if (line[i] == '|' && bs % 2 == 0)
            pipes++;
        bs = 0;
    }
    return pipes;
}

/* every line of a table has as many cell separators as its header */
static void check_tables(const char *md)
{
    size_t want = 0;
    for (const char *p = md; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && p[0] == '|') {
            size_t n = unescaped_pipes(p, len);
            if (!want)
                want = n;
            ck_assert_msg(n == want, "table line with %zu separators, header %zu: %.*s", n, want,
                          (int)(len > 200 ? 200 : len), p);
        } else {
            want = 0;
        }
        p = e ? e + 1 : p + len;
    }
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- Markdown --------------------------------------------------------------------------- */

START_TEST(test_markdown_sections)
{
    fixture f;
    fixture_init(&f);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    size_t vl = strlen(f.gate.line);
    ck_assert_msg(strncmp(md, f.gate.line, vl) == 0 && md[vl] == '\n', "first line: %.120s", md);
    ck_assert_msg(strstr(f.gate.line, "PASS") != NULL, "%s", f.gate.line);
    static const char *const want[] = {
        "> **Warning:** the sides have different ProfilerStep counts",
        "**Inputs**",
        "| pid | TP00-gpu | TP00-gpu |",
        "| mapping | (the trace itself) | mapping.json |",
        "| ProfilerSteps | 4 | 5 |",
        "Normalization: **none**",
        "### extend/prefill\n\n| metric | baseline | candidate | Δ | Δ% |",
        "### decode\n",
        "| busy time (us) | 1000.0 | 1000.0 | 0.0 | 0.0% |",
        "| overlap time (us) |",
        "| max concurrent streams | 2 | 2 | 0 | 0.0% |",
        "| kernel launches | 40 | 40 | 0 | 0.0% |",
        "| **communication exposed (us)** | 180.0 | 0.0 | -180.0 | -100.0% |",
        "| communication hidden (us) | 0.0 | 180.0 | +180.0 | new |",
        "| elementwise exposed (us) | 0.0 | 0.0 | 0.0 | n/a |",
        "| other hidden (us) |",
        "#### Top regressions (exposed time grew)",
        "#### Top improvements (exposed time shrank)",
        "#### Priority changes",
        "#### Added kernels (candidate only): 1",
        "#### Removed kernels (baseline only): 1",
        "<details><summary>All 7 kernels</summary>",
        "<details><summary>All 2 kernels</summary>",
        "</details>",
        "| long-prefix |",
        "| prefix |",
        "| +40.0 | new |",        /* added: percent "new" */
        "| -32.0 | gone |",       /* removed: percent "gone" */
        "| 0.0 | 0.5 | +0.5 | n/a |", /* NaN percent */
        "| P2 check deps | P1 check deps | P2->P1 |",
        "| P1 check deps | — | P1->none |",
        "| (absent) | P2->none |",
        "No kernel's exposed time shrank by 0.05 us or more.", /* decode has no improvement */
        "No kernel was added.",
        "<br>baseline: void cutlass::device_kernel",
        /* the replaced pairs: one line each, after the summary, before the tables */
        "| other hidden (us) | 0.0 | 0.0 | 0.0 | n/a |\n\n**Replaced kernels**\n\n"
        "- <code>aiter::fmha_fwd_hd128_bf16_rtz</code> → <code>sage_fwd</code>: +1400.0 us total "
        "(120700.0 → 122100.0 us), 228 = 228 launches — same place in the launch sequence "
        "(after k\\|a&lt;1&gt;, before k_b); 228 = 228 launches\n\n#### Top regressions",
        /* the full table: the kind, the baseline's name and the evidence */
        "<details><summary>All 3 kernels</summary>",
        "_1234_18<br>baseline: " GEN_NAME(17) "<br>paired: suffix 17 -&gt; 18; 76 = 76 launches; same place in "
        "the launch order | elementwise | renumbered | 76 → 76 |",
        "| sage_fwd<br>baseline: aiter::fmha_fwd_hd128_bf16_rtz<br>paired: same place in the launch sequence "
        "(after k\\|a&lt;1&gt;, before k_b); 228 = 228 launches | compute | replaced | 228 → 228 |",
        NULL};
    for (size_t i = 0; want[i]; i++)
        ck_assert_msg(strstr(md, want[i]) != NULL, "missing: %s", want[i]);
    /* top lists are shortened, the full table keeps the whole name */
    ck_assert(strstr(md, "Swizzle&lt;8&gt;, 4&gt;&gt;<br>baseline:") != NULL);
    ck_assert(strstr(md, "more rows not shown") == NULL);
    /* one Replaced section: only the stage that has a replaced pair */
    ck_assert_uint_eq(count_of(md, "**Replaced kernels**"), 1);
    ck_assert(strstr(strstr(md, "### all"), "**Replaced kernels**") != NULL);
    /* exact and one-sided rows say nothing about a pairing */
    ck_assert(strstr(md, "ncclWork*)<br>") == NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_markdown_escapes_trace_text)
{
    fixture f;
    fixture_init(&f);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert_msg(strstr(md, "evil\\|name&lt;script&gt;\\`x\\`<br>line2\\\\\"q\",") != NULL, "%s", md);
    ck_assert(strstr(md, "<script>") == NULL);
    ck_assert(strstr(md, "`x`") == NULL);
    ck_assert(strstr(md, "evil|") == NULL);
    ck_assert(strstr(md, "base\\|line.json.gz") != NULL);
    ck_assert(strstr(md, "cand\\`idate&lt;1&gt;.json.gz") != NULL);
    ck_assert(strstr(md, "stage all \\| is only in the &lt;baseline&gt;") != NULL);
    /* the evidence is trace text too: `|` and `<` escaped wherever it goes */
    ck_assert(strstr(md, "k|a") == NULL && strstr(md, "a<1>") == NULL);
    ck_assert_uint_eq(count_of(md, "(after k\\|a&lt;1&gt;, before k_b)"), 2); /* the bullet, the table */
    /* the only raw '<' are the report's own tags */
    for (const char *p = strchr(md, '<'); p; p = strchr(p + 1, '<'))
        ck_assert_msg(strncmp(p, "<br>", 4) == 0 || strncmp(p, "<details>", 9) == 0 ||
                          strncmp(p, "</details>", 10) == 0 || strncmp(p, "<summary>", 9) == 0 ||
                          strncmp(p, "</summary>", 10) == 0 || strncmp(p, "<code>", 6) == 0 ||
                          strncmp(p, "</code>", 7) == 0,
                      "raw <: %.40s", p);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_markdown_limit_full_table)
{
    fixture f;
    fixture_init(&f);
    big_stage(&f, 0, 4000, 300, false);
    size_t len;
    char *md = render(&f.rep, kd_diff_write_markdown, &len);
    ck_assert_uint_lt(len, KD_MARKDOWN_LIMIT);
    ck_assert_uint_eq(strlen(md), len);
    const char *note = strstr(md, " more rows not shown (limit 60,000 characters); see the CSV/JSON report");
    ck_assert_ptr_nonnull(note);
    /* the note counts the rows the full table left out */
    const char *num = note;
    while (num > md && num[-1] >= '0' && num[-1] <= '9')
        num--;
    size_t hidden = strtoul(num, NULL, 10);
    const char *details = strstr(md, "<details><summary>All 4000 kernels</summary>");
    ck_assert_ptr_nonnull(details);
    size_t shown = 0;
    for (const char *p = strstr(details, "\n| kernel_"); p && p < note; p = strstr(p + 1, "\n| kernel_"))
        shown++;
    ck_assert_uint_gt(shown, 0);
    ck_assert_uint_eq(shown + hidden, 4000);
    /* the top lists are whole; the table closes */
    ck_assert_uint_eq(count_of(md, "#### Top regressions (exposed time grew): 10 of 4000"), 1);
    ck_assert(strstr(md, "\n</details>\n") != NULL);
    ck_assert(strstr(md, "### decode") != NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_markdown_limit_lists)
{
    /* so many added kernels that the added list is cut too */
    fixture f;
    fixture_init(&f);
    big_stage(&f, 0, 3000, 2000, true);
    size_t len;
    char *md = render(&f.rep, kd_diff_write_markdown, &len);
    ck_assert_uint_lt(len, KD_MARKDOWN_LIMIT);
    ck_assert_uint_ge(count_of(md, "more rows not shown (limit 60,000 characters)"), 2);
    ck_assert(strstr(md, "3000 more rows not shown") != NULL); /* the full table: no row at all */
    ck_assert(strstr(md, "#### Added kernels (candidate only): 3000") != NULL);
    ck_assert(strstr(md, "### decode") != NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_markdown_limit_replaced)
{
    /* so many replaced pairs, with long evidence, that their section is cut
     * (with the added/removed lists, after the full tables) */
    fixture f;
    fixture_init(&f);
    big_stage(&f, 0, 2000, 200, false);
    kd_diff_stage *st = &f.d.stages[0];
    for (size_t i = 0; i < st->n_rows; i++) {
        st->rows[i].evidence = "same place in the launch sequence (after k|a<1>, before k_b); 4 = 4 launches";
        finish(&st->rows[i], KD_MATCH_REPLACED);
    }
    size_t len;
    char *md = render(&f.rep, kd_diff_write_markdown, &len);
    ck_assert_uint_lt(len, KD_MARKDOWN_LIMIT);
    const char *sec = strstr(md, "**Replaced kernels**\n\n- <code>kernel_00000&lt;\\|\\`xxx");
    ck_assert_ptr_nonnull(sec);
    ck_assert(strstr(sec, "more rows not shown (limit 60,000 characters)") != NULL);
    ck_assert(strstr(md, "2000 more rows not shown") != NULL); /* the full table: no row at all */
    /* the top lists are whole */
    ck_assert_uint_eq(count_of(md, "#### Top regressions (exposed time grew): 10 of 2000"), 1);
    ck_assert(strstr(md, "### all") != NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_markdown_huge_name)
{
    /* one 1 MB kernel name: the report still fits */
    fixture f;
    fixture_init(&f);
    big_stage(&f, 1, 3, 1 << 20, false);
    size_t len;
    char *md = render(&f.rep, kd_diff_write_markdown, &len);
    ck_assert_uint_lt(len, KD_MARKDOWN_LIMIT);
    ck_assert(strstr(md, "3 more rows not shown") != NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

/* ---- CSV ----------------------------------------------------------------------------------- */

typedef struct {
    size_t fields, records;
    size_t *per_record;
    char **cells; /* of every record, in order */
    size_t n_cells;
} csv_read;

static void on_field(void *s, size_t len, void *data)
{
    csv_read *c = data;
    c->cells = realloc(c->cells, (c->n_cells + 1) * sizeof *c->cells);
    c->cells[c->n_cells] = strndup(s ? s : "", len);
    c->n_cells++;
    c->fields++;
}

static void on_record(int ch, void *data)
{
    (void)ch;
    csv_read *c = data;
    c->per_record = realloc(c->per_record, (c->records + 1) * sizeof *c->per_record);
    c->per_record[c->records++] = c->fields;
    c->fields = 0;
}

static void csv_read_all(const char *text, size_t len, csv_read *c)
{
    struct csv_parser p;
    memset(c, 0, sizeof *c);
    ck_assert_int_eq(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI), 0);
    ck_assert_uint_eq(csv_parse(&p, text, len, on_field, on_record, c), len);
    ck_assert_int_eq(csv_fini(&p, on_field, on_record, c), 0);
    csv_free(&p);
}

static void csv_read_free(csv_read *c)
{
    for (size_t i = 0; i < c->n_cells; i++)
        free(c->cells[i]);
    free(c->cells);
    free(c->per_record);
}

static const char *cell(const csv_read *c, size_t record, const char *column)
{
    for (size_t k = 0; k < N_CSV_COLUMNS; k++)
        if (strcmp(c->cells[k], column) == 0)
            return c->cells[record * N_CSV_COLUMNS + k];
    ck_abort_msg("no column %s", column);
    return NULL;
}

START_TEST(test_csv_parses_back)
{
    fixture f;
    fixture_init(&f);
    size_t len;
    char *text = render(&f.rep, kd_diff_write_csv, &len);
    csv_read c;
    csv_read_all(text, len, &c);
    ck_assert_uint_eq(c.records, 1 + 7 + 2 + 3);
    for (size_t i = 0; i < c.records; i++)
        ck_assert_msg(c.per_record[i] == N_CSV_COLUMNS, "record %zu: %zu fields", i, c.per_record[i]);
    ck_assert_str_eq(c.cells[0], "stage");
    ck_assert_str_eq(c.cells[N_CSV_COLUMNS_V1 - 1], "priority_change"); /* the old columns keep their places */
    ck_assert_str_eq(c.cells[N_CSV_COLUMNS_V1], "change");
    ck_assert_str_eq(c.cells[N_CSV_COLUMNS - 5], "c_exposed_p90_us");
    ck_assert_str_eq(c.cells[N_CSV_COLUMNS - 4], "b_step_exposed_mean_us");
    ck_assert_str_eq(c.cells[N_CSV_COLUMNS - 1], "c_step_exposed_ci_us");
    /* rows without statistics: every new cell empty */
    for (size_t rec = 1; rec < c.records; rec++)
        for (size_t k = N_CSV_COLUMNS_V1; k < N_CSV_COLUMNS; k++)
            ck_assert_msg(*c.cells[rec * N_CSV_COLUMNS + k] == '\0', "record %zu, %s: %s", rec, c.cells[k],
                          c.cells[rec * N_CSV_COLUMNS + k]);
    /* the evidence right after the match kind */
    ck_assert_str_eq(c.cells[3], "match");
    ck_assert_str_eq(c.cells[4], "evidence");
    ck_assert_str_eq(c.cells[5], "baseline_name");
    /* record 1 = extend row 0 (nccl), P1->none */
    ck_assert_str_eq(cell(&c, 1, "stage"), "extend");
    ck_assert_str_eq(cell(&c, 1, "match"), "exact");
    ck_assert_str_eq(cell(&c, 1, "b_exposed_us"), "180.000");
    ck_assert_str_eq(cell(&c, 1, "c_exposed_us"), "0.000");
    ck_assert_str_eq(cell(&c, 1, "d_exposed_us"), "-180.000");
    ck_assert_str_eq(cell(&c, 1, "pct_exposed"), "-100.0000");
    ck_assert_str_eq(cell(&c, 1, "pct_hidden"), ""); /* NaN */
    ck_assert_str_eq(cell(&c, 1, "b_priority"), "P1");
    ck_assert_str_eq(cell(&c, 1, "c_priority"), "");
    ck_assert_str_eq(cell(&c, 1, "priority_change"), "P1->none");
    /* added: the baseline side is empty */
    ck_assert_str_eq(cell(&c, 2, "match"), "added");
    ck_assert_str_eq(cell(&c, 2, "baseline_name"), "");
    ck_assert_str_eq(cell(&c, 2, "b_launches"), "");
    ck_assert_str_eq(cell(&c, 2, "b_total_us"), "");
    ck_assert_str_eq(cell(&c, 2, "c_launches"), "4");
    ck_assert_str_eq(cell(&c, 3, "match"), "removed");
    ck_assert_str_eq(cell(&c, 3, "c_exposed_ratio"), "");
    /* the malicious name round-trips */
    ck_assert_str_eq(cell(&c, 4, "kernel"), EVIL);
    ck_assert_str_eq(cell(&c, 5, "match"), "long-prefix");
    ck_assert_str_eq(cell(&c, 5, "baseline_name"), long_base);
    ck_assert_str_eq(cell(&c, 5, "candidate_name"), long_cand);
    ck_assert_str_eq(cell(&c, 5, "b_share_pct"), "23.9400");
    ck_assert_str_eq(cell(&c, 8, "stage"), "decode");
    ck_assert_str_eq(cell(&c, 8, "match"), "prefix");
    ck_assert_str_eq(cell(&c, 8, "evidence"), "");
    /* exact and one-sided rows: an empty evidence */
    ck_assert_str_eq(cell(&c, 1, "evidence"), "");
    ck_assert_str_eq(cell(&c, 2, "evidence"), "");
    /* records 10..12 = stage all */
    ck_assert_str_eq(cell(&c, 10, "stage"), "all");
    ck_assert_str_eq(cell(&c, 10, "match"), "replaced");
    ck_assert_str_eq(cell(&c, 10, "evidence"), EVIDENCE_REPLACED);
    ck_assert_str_eq(cell(&c, 10, "baseline_name"), "aiter::fmha_fwd_hd128_bf16_rtz");
    ck_assert_str_eq(cell(&c, 10, "candidate_name"), "sage_fwd");
    ck_assert_str_eq(cell(&c, 11, "match"), "renumbered");
    ck_assert_str_eq(cell(&c, 11, "evidence"), EVIDENCE_RENUMBERED);
    ck_assert_str_eq(cell(&c, 11, "baseline_name"), GEN_NAME(17));
    ck_assert_str_eq(cell(&c, 11, "candidate_name"), GEN_NAME(18));
    /* an empty evidence is an empty string, quoted as python_scope's */
    ck_assert(strstr(text, "\"communication\",\"exact\",\"\",\"ncclDevKernel") != NULL);
    csv_read_free(&c);
    free(text);
    fixture_free(&f);
}
END_TEST

/* ---- JSON ------------------------------------------------------------------------------------ */

static yajl_val jget(yajl_val v, const char *a, const char *b, yajl_type t)
{
    const char *path[3] = {a, b, NULL};
    return yajl_tree_get(v, path, t);
}

START_TEST(test_json_parses)
{
    fixture f;
    fixture_init(&f);
    char *text = render(&f.rep, kd_diff_write_json, NULL);
    char err[256];
    yajl_val doc = yajl_tree_parse(text, err, sizeof err);
    ck_assert_msg(doc != NULL, "%s", err);
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "schema", NULL, yajl_t_string)), "kerndiff.diff/2");
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "gate", "verdict", yajl_t_string)), "pass");
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "gate", "line", yajl_t_string)), f.gate.line);
    yajl_val fail = jget(doc, "gate", "fail_on", yajl_t_object);
    ck_assert_ptr_nonnull(fail);
    ck_assert(YAJL_GET_DOUBLE(jget(fail, "rel_pct", NULL, yajl_t_number)) == 5.0);
    ck_assert(YAJL_GET_DOUBLE(jget(fail, "abs_us", NULL, yajl_t_number)) == 200.0);
    ck_assert(YAJL_IS_NULL(jget(doc, "gate", "warn_on", yajl_t_any)));
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "inputs", "baseline", yajl_t_string)), "base|line.json.gz");
    ck_assert(YAJL_IS_NULL(jget(doc, "inputs", "baseline_mapping", yajl_t_any)));
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "inputs", "candidate_mapping", yajl_t_string)), "mapping.json");
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "inputs", "baseline_pid", yajl_t_string)), "TP00-gpu");
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "inputs", "normalize", yajl_t_string)), "none");
    ck_assert_ptr_nonnull(jget(doc, "inputs", "baseline_files", yajl_t_array));
    ck_assert_uint_eq(YAJL_GET_ARRAY(jget(doc, "warnings", NULL, yajl_t_array))->len, 2);
    yajl_val stages = jget(doc, "stages", NULL, yajl_t_array);
    ck_assert_ptr_nonnull(stages);
    ck_assert_uint_eq(YAJL_GET_ARRAY(stages)->len, 3);
    yajl_val s0 = YAJL_GET_ARRAY(stages)->values[0];
    ck_assert_str_eq(YAJL_GET_STRING(jget(s0, "stage", NULL, yajl_t_string)), "extend");
    const char *sum_path[] = {"summary", "delta", "categories", "communication", "exposed_us", NULL};
    ck_assert(YAJL_GET_DOUBLE(yajl_tree_get(s0, sum_path, yajl_t_number)) == -180.0);
    const char *launch_path[] = {"summary", "baseline", "launches", NULL};
    ck_assert(YAJL_GET_INTEGER(yajl_tree_get(s0, launch_path, yajl_t_number)) == 40);
    yajl_val rows = jget(s0, "rows", NULL, yajl_t_array);
    ck_assert_uint_eq(YAJL_GET_ARRAY(rows)->len, 7);
    /* every CSV column is a field of every row */
    char *csv = render(&f.rep, kd_diff_write_csv, NULL);
    char *nl = strchr(csv, '\n');
    *nl = '\0';
    for (size_t i = 0; i < YAJL_GET_ARRAY(rows)->len; i++) {
        yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
        ck_assert_uint_eq(YAJL_GET_OBJECT(row)->len, N_CSV_COLUMNS);
        char *save = NULL;
        char *hdr = strdup(csv);
        for (char *k = strtok_r(hdr, ",", &save); k; k = strtok_r(NULL, ",", &save))
            ck_assert_msg(jget(row, k, NULL, yajl_t_any) != NULL, "row %zu lacks %s", i, k);
        free(hdr);
    }
    yajl_val added = YAJL_GET_ARRAY(rows)->values[1];
    ck_assert_str_eq(YAJL_GET_STRING(jget(added, "match", NULL, yajl_t_string)), "added");
    ck_assert(YAJL_IS_NULL(jget(added, "b_total_us", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(added, "baseline_name", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(added, "pct_exposed", NULL, yajl_t_any))); /* NaN */
    yajl_val evil = YAJL_GET_ARRAY(rows)->values[3];
    ck_assert_str_eq(YAJL_GET_STRING(jget(evil, "kernel", NULL, yajl_t_string)), EVIL);
    /* the evidence: a string on every row, "" for exact and one-sided rows */
    ck_assert_str_eq(YAJL_GET_STRING(jget(added, "evidence", NULL, yajl_t_string)), "");
    ck_assert_str_eq(YAJL_GET_STRING(jget(evil, "evidence", NULL, yajl_t_string)), "");
    yajl_val all_rows_ = jget(YAJL_GET_ARRAY(stages)->values[2], "rows", NULL, yajl_t_array);
    ck_assert_ptr_nonnull(all_rows_);
    yajl_val replaced = YAJL_GET_ARRAY(all_rows_)->values[0], renumbered = YAJL_GET_ARRAY(all_rows_)->values[1];
    ck_assert_uint_eq(YAJL_GET_OBJECT(replaced)->len, N_CSV_COLUMNS);
    ck_assert_str_eq(YAJL_GET_STRING(jget(replaced, "match", NULL, yajl_t_string)), "replaced");
    ck_assert_str_eq(YAJL_GET_STRING(jget(replaced, "evidence", NULL, yajl_t_string)), EVIDENCE_REPLACED);
    ck_assert_str_eq(YAJL_GET_STRING(jget(renumbered, "match", NULL, yajl_t_string)), "renumbered");
    ck_assert_str_eq(YAJL_GET_STRING(jget(renumbered, "evidence", NULL, yajl_t_string)), EVIDENCE_RENUMBERED);
    free(csv);
    yajl_tree_free(doc);
    free(text);
    fixture_free(&f);
}
END_TEST

/* ---- text ------------------------------------------------------------------------------------ */

START_TEST(test_text)
{
    fixture f;
    fixture_init(&f);
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    size_t vl = strlen(f.gate.line);
    ck_assert(strncmp(t, f.gate.line, vl) == 0 && t[vl] == '\n');
    ck_assert(strstr(t, "WARNING: the sides have different ProfilerStep counts") != NULL);
    ck_assert(strstr(t, "== extend/prefill: busy 1000.0 -> 1000.0 us") != NULL);
    ck_assert(strstr(t, "exposed communication 180.0 -> 0.0 us (-180.0, -100.0%)") != NULL);
    ck_assert(strstr(t, "1 unchanged row hidden") != NULL); /* the memcpy */
    ck_assert(strstr(t, "long-prefix") != NULL);
    ck_assert(strstr(t, "P2->P1") != NULL);
    ck_assert(strstr(t, "gone") != NULL && strstr(t, "new") != NULL);
    /* a long name is elided in the middle: its head and its distinguishing tail */
    ck_assert_msg(strstr(t, "\nvoid cutlass::device_kernel<..._tn_align8, Swizzle<8>, 4>>  ") != NULL, "%s", t);
    /* under a relaxed match: the baseline's name (no evidence to give) */
    ck_assert(strstr(t, "\n    paired with void cutlass::device_kernel<..._tn_align8, Swizzle<1>, 3>>\n") != NULL);
    /* nothing under exact or one-sided rows */
    ck_assert(strstr(t, "P1->none\n    ") == NULL);
    ck_assert_uint_eq(count_of(t, "\n    paired"), 2 + 1 + 2); /* extend, decode, all */
    for (const char *p = t; *p; p++)
        ck_assert_msg(*p == '\n' || (unsigned char)*p >= 0x20, "control byte %d", *p);
    free(t);
    fixture_free(&f);
}
END_TEST

/* the line of t that starts with prefix (after a newline), as a new string */
static char *line_starting(const char *t, const char *prefix, const char *after)
{
    const char *p = strstr(after ? after : t, prefix);
    while (p && p != t && p[-1] != '\n')
        p = strstr(p + 1, prefix);
    if (!p)
        return NULL;
    const char *e = strchr(p, '\n');
    return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

START_TEST(test_text_evidence_and_elision)
{
    fixture f;
    fixture_init(&f);
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    const char *all = strstr(t, "\n== all: ");
    ck_assert_ptr_nonnull(all);
    /* the replaced pair as one line, before the stage's table */
    const char *rep = strstr(all, "\nreplaced:\n  aiter::fmha_fwd_hd128_bf16_rtz -> sage_fwd: +1400.0 us total "
                                  "(120700.0 -> 122100.0 us), 228 = 228 launches -- " EVIDENCE_REPLACED "\nKERNEL ");
    ck_assert_msg(rep != NULL, "%s", all);
    ck_assert_uint_eq(count_of(t, "\nreplaced:\n"), 1); /* only the stage that has one */
    /* the two generated names differ only in their number: both stay whole
     * at the end, and distinct, in 60 code points */
    char *a = line_starting(t, "triton_poi_fused_", all), *b = NULL;
    ck_assert_ptr_nonnull(a);
    b = line_starting(t, "triton_poi_fused_", strstr(all, a) + strlen(a));
    ck_assert_ptr_nonnull(b);
    char *ka = strndup(a, strcspn(a, " ")), *kb = strndup(b, strcspn(b, " "));
    ck_assert_msg(strcmp(ka, kb) != 0, "%s | %s", ka, kb);
    ck_assert_uint_le(strlen(ka), 60);
    ck_assert(strstr(ka, "...") != NULL);
    ck_assert(kd_ends_with(ka, "_1234_18") || kd_ends_with(ka, "_1234_17"));
    ck_assert(kd_ends_with(kb, "_1234_18") || kd_ends_with(kb, "_1234_17"));
    ck_assert(strncmp(ka, "triton_poi_fused__to_copy_add_addmm", 35) == 0);
    /* the row says what it was paired with, and why */
    char *pa = line_starting(t, "    paired with triton_poi_fused_", strstr(all, a));
    ck_assert_ptr_nonnull(pa);
    ck_assert_msg(kd_ends_with(pa, "_1234_17: " EVIDENCE_RENUMBERED), "%s", pa);
    /* the table's widths: the kernel column is 60 wide */
    char *hdr = line_starting(t, "KERNEL ", all);
    ck_assert_ptr_nonnull(hdr);
    ck_assert_uint_eq(strstr(hdr, "CATEGORY") - hdr, 60 + 2);
    free(hdr);
    free(pa);
    free(ka);
    free(kb);
    free(a);
    free(b);
    free(t);
    fixture_free(&f);
}
END_TEST

START_TEST(test_text_replaced_normalized)
{
    /* per-step times say so on the replaced line too */
    fixture f;
    fixture_init(&f);
    f.d.normalized = true;
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    ck_assert(strstr(t, "sage_fwd: +1400.0 us/step total (120700.0 -> 122100.0 us/step), 228 = 228 launches") != NULL);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert(strstr(md, "<code>sage_fwd</code>: +1400.0 us/step total (120700.0 → 122100.0 us/step)") != NULL);
    free(md);
    free(t);
    fixture_free(&f);
}
END_TEST

START_TEST(test_text_limits_rows)
{
    fixture f;
    fixture_init(&f);
    big_stage(&f, 0, 100, 200, false);
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    ck_assert(strstr(t, "60 more changed rows not shown") != NULL);
    free(t);
    fixture_free(&f);
}
END_TEST

/* ---- determinism ------------------------------------------------------------------------------ */

START_TEST(test_deterministic)
{
    static const writer writers[] = {kd_diff_write_markdown, kd_diff_write_csv, kd_diff_write_json,
                                     kd_diff_write_text};
    for (size_t w = 0; w < 4; w++) {
        fixture a, b;
        fixture_init(&a);
        fixture_init(&b);
        size_t la, lb;
        char *x = render(&a.rep, writers[w], &la);
        char *y = render(&b.rep, writers[w], &lb);
        char *z = render(&a.rep, writers[w], NULL);
        ck_assert_uint_eq(la, lb);
        ck_assert(memcmp(x, y, la) == 0 && memcmp(x, z, la) == 0);
        free(x);
        free(y);
        free(z);
        fixture_free(&a);
        fixture_free(&b);
    }
}
END_TEST

START_TEST(test_no_stage)
{
    fixture f;
    fixture_init(&f);
    size_t n = f.d.n_stages;
    f.d.n_stages = 0;
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert(strstr(md, "No stage is present on both sides") != NULL);
    char *js = render(&f.rep, kd_diff_write_json, NULL);
    yajl_val doc = yajl_tree_parse(js, NULL, 0);
    ck_assert_ptr_nonnull(doc);
    ck_assert(YAJL_IS_NULL(jget(doc, "inputs", "baseline_pid", yajl_t_any)));
    yajl_tree_free(doc);
    free(js);
    free(md);
    f.d.n_stages = n;
    fixture_free(&f);
}
END_TEST

/* ---- the noise statistics ------------------------------------------------------------------ */

#define K_FLASH "flash_fwd_kernel"
#define K_ADDED "fused_add_rmsnorm_kernel"
#define K_MEMCPY "Memcpy HtoD (Pinned -> Device)"
#define K_NOISE2 "elementwise_kernel<add>"
#define K_NOISE3 "reduce_kernel<sum>"
#define K_NA "nccl_init_kernel"
#define SETTINGS "(FDR 1 %, min effect 2 % / 1 us)"

static void dist(kd_dist *d, uint64_t n, double median)
{
    *d = (kd_dist){n, n * median, median, median, 0.9 * median, 1.1 * median, 0.8 * median, 1.25 * median,
                   0.05 * median};
}

/* a side of n launches of `median` us each, all exposed */
static void stat_side(kd_diff_side *s, const char *name, kd_category c, uint64_t n, double median)
{
    side(s, name, c, (double)n * median, 0.0, NULL);
    s->launches = n;
    dist(&s->dur, n, median);
    dist(&s->exposed, n, median);
}

static void tested(kd_diff_row *r, const char *change, const char *kind, double p, double q, double shift,
                   double lo, double hi)
{
    r->change = change;
    r->change_kind = kind;
    r->p_value = p;
    r->q_value = q;
    r->shift_us = shift;
    r->shift_lo_us = lo;
    r->shift_hi_us = hi;
}

/* Stage s gets rows with statistics, in diff order: a per-call change and an
 * added kernel (when changed), three noise rows (the largest -0.8 % of total
 * time) and an n/a row (3 launches a side); the library's counts and a
 * tested gate evidence. */
static void stats_stage(fixture *f, size_t s, bool changed)
{
    kd_diff_stage *st = &f->d.stages[s];
    free(st->rows);
    st->rows = calloc(6, sizeof *st->rows);
    ck_assert_ptr_nonnull(st->rows);
    kd_diff_row *r = st->rows;
    size_t n = 0;
    if (changed) {
        stat_side(&r[n].base, K_FLASH, KD_CAT_COMPUTE, 228, 529.2);
        stat_side(&r[n].cand, K_FLASH, KD_CAT_COMPUTE, 228, 535.7);
        finish(&r[n], KD_MATCH_EXACT);
        tested(&r[n++], "changed", "per call", 2.3e-9, 1.2e-8, 6.5, 5.9, 7.1);
        stat_side(&r[n].cand, K_ADDED, KD_CAT_COMPUTE, 50, 0.8);
        finish(&r[n], KD_MATCH_NONE);
        tested(&r[n++], "changed", "", NAN, NAN, NAN, NAN, NAN);
    }
    stat_side(&r[n].base, K_MEMCPY, KD_CAT_MEMORY, 200, 1.875);
    stat_side(&r[n].cand, K_MEMCPY, KD_CAT_MEMORY, 200, 1.86);
    finish(&r[n], KD_MATCH_EXACT);
    tested(&r[n++], "noise", "", 0.41, 0.9, -0.01, -0.04, 0.02);
    stat_side(&r[n].base, K_NOISE2, KD_CAT_ELEMENTWISE, 100, 2.4);
    stat_side(&r[n].cand, K_NOISE2, KD_CAT_ELEMENTWISE, 100, 2.412);
    finish(&r[n], KD_MATCH_EXACT);
    tested(&r[n++], "noise", "", 0.6, 0.9, 0.01, -0.02, 0.03);
    stat_side(&r[n].base, K_NA, KD_CAT_COMMUNICATION, 3, 0.5);
    stat_side(&r[n].cand, K_NA, KD_CAT_COMMUNICATION, 3, 0.8);
    finish(&r[n], KD_MATCH_EXACT);
    tested(&r[n++], "n/a", "", NAN, NAN, NAN, NAN, NAN);
    stat_side(&r[n].base, K_NOISE3, KD_CAT_ELEMENTWISE, 100, 1.33);
    stat_side(&r[n].cand, K_NOISE3, KD_CAT_ELEMENTWISE, 100, 1.334);
    finish(&r[n], KD_MATCH_EXACT);
    tested(&r[n++], "noise", "", 0.8, 0.9, 0.0, -0.01, 0.01);
    st->n_rows = n;
    st->n_changed = changed ? 2 : 0;
    st->n_noise = 3;
    st->n_na = 1;
    st->noise_max_pct = 0.8;
    st->gate_evidence = (kd_gate_evidence){true, 1e-5, 5.1, 4.0, 6.2, false, NAN, NAN, NAN};
    f->d.fdr = 0.01;
    f->d.min_effect_pct = 2.0;
    f->d.min_effect_us = 1.0;
}

/* the fixture with statistics in stage all (the others have none) */
static void fixture_stats(fixture *f, bool changed)
{
    fixture_init(f);
    stats_stage(f, 2, changed);
}

/* the number of lines before needle in t */
static size_t line_of(const char *t, const char *needle)
{
    const char *p = strstr(t, needle);
    ck_assert_msg(p != NULL, "missing: %s", needle);
    size_t n = 0;
    for (const char *q = t; q < p; q++)
        n += *q == '\n';
    return n;
}

#define HEADLINE                                                                                                 \
    "Changed beyond noise: 2 of 6 kernels** " SETTINGS "; 3 moved within noise (largest ±0.8 %); 1 n/a (fewer "  \
    "than 5 launches on a side).\n"
#define STATS_FLASH "228 -> 228 launches, median 529.2 -> 535.7 us, shift +6.5 us [+5.9, +7.1] (p 2e-9, per call)"

START_TEST(test_stats_text)
{
    fixture f;
    fixture_stats(&f, true);
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    /* what changed leads: right after the verdict and the warnings, before the inputs */
    const char *head = "\nWARNING: stage all | is only in the <baseline>\nChanged beyond noise: 2 of 6 kernels " SETTINGS
                       "; 3 moved within noise (largest ±0.8 %); 1 n/a (fewer than 5 launches on a side).\n\nbaseline: ";
    ck_assert_msg(strstr(t, head) != NULL, "%s", t);
    ck_assert_uint_eq(line_of(t, "Changed beyond noise"), 3);
    const char *all = strstr(t, "\n== all: ");
    ck_assert_ptr_nonnull(all);
    ck_assert_msg(strstr(all, "\ngate evidence: shift +5.1 us [+4.0, +6.2] of communication exposed time per launch "
                              "(p 1e-5)\nKERNEL ") != NULL,
                  "%s", all);
    /* the noise: one line, no row */
    ck_assert_uint_eq(count_of(t, "\n3 kernels moved within noise, largest ±0.8 %\n"), 1);
    ck_assert(strstr(t, "Memcpy HtoD") == NULL && strstr(t, K_NOISE2) == NULL && strstr(t, K_NOISE3) == NULL);
    /* the changed rows, then the n/a row, each with its launches, medians and interval */
    char *flash = line_starting(t, K_FLASH, all), *added = line_starting(t, K_ADDED, all),
         *na = line_starting(t, K_NA, all);
    ck_assert(flash && added && na);
    ck_assert_msg(kd_ends_with(flash, "  =         changed"), "%s", flash);
    ck_assert_msg(kd_ends_with(na, "  n/a"), "%s", na);
    ck_assert(strstr(t, flash) < strstr(t, added) && strstr(t, added) < strstr(t, na));
    ck_assert(strstr(t, "\n    " STATS_FLASH "\n") != NULL);
    ck_assert(strstr(t, "\n    - -> 50 launches, median - -> 0.8 us (added)\n") != NULL);
    ck_assert(strstr(t, "\n    3 -> 3 launches, median 0.5 -> 0.8 us (n/a: under 5 launches)\n") != NULL);
    /* the column only where rows have statistics; the others as before */
    ck_assert_uint_eq(count_of(t, "PRIORITY  CHANGE\n"), 1);
    ck_assert(strstr(t, "1 unchanged row hidden") != NULL); /* extend's memcpy */
    ck_assert_uint_eq(count_of(t, "gate evidence"), 1);
    free(flash);
    free(added);
    free(na);
    free(t);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_markdown)
{
    fixture f;
    fixture_stats(&f, true);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert_msg(strstr(md, "\n**" HEADLINE) != NULL, "%s", md);
    ck_assert(strstr(md, "baseline&gt;\n\n**" HEADLINE "\n**Inputs**") != NULL);
    const char *all = strstr(md, "### all\n");
    ck_assert_ptr_nonnull(all);
    const char *details = strstr(all, "<details>");
    ck_assert_ptr_nonnull(details);
    /* the noise: one line under the summary, its rows only in the full table */
    ck_assert_uint_eq(count_of(md, "3 kernels moved within noise, largest ±0.8 % (listed in the full table only)."), 1);
    ck_assert(strstr(all, "only).\n\nGate evidence: shift +5.1 us [+4.0, +6.2] of communication exposed time per "
                          "launch (p 1e-5).\n\n#### Top regressions") != NULL);
    ck_assert_uint_eq(count_of(all, "Memcpy HtoD"), 1);
    ck_assert(strstr(all, "Memcpy HtoD") > details);
    ck_assert_uint_eq(count_of(all, "elementwise_kernel&lt;add&gt;"), 1);
    /* the headline lists: changed and n/a rows, with a per-launch cell */
    ck_assert(strstr(all, "| Δ (us) | Δ% | per launch |\n") != NULL);
    ck_assert(strstr(all, "| 1 | " K_FLASH " | compute | exact | 120657.6 | 122139.6 | +1482.0 | +1.2% | 228 → 228 "
                          "launches, median 529.2 → 535.7 us, shift +6.5 us [+5.9, +7.1] (p 2e-9, per call) |\n") !=
              NULL);
    ck_assert(strstr(all, "| — → 50 launches, median — → 0.8 us (added) |\n") != NULL);
    ck_assert(strstr(all, "| 3 → 3 launches, median 0.5 → 0.8 us (n/a: under 5 launches) |\n") != NULL);
    ck_assert(strstr(all, "No kernel outside the noise shrank in exposed time by 0.05 us or more.") != NULL);
    /* the full table keeps every row, its change first */
    ck_assert(strstr(details, "| **changed**: 228 → 228 launches, median 529.2 → 535.7 us") != NULL);
    ck_assert(strstr(details, "| noise: 200 → 200 launches, median 1.9 → 1.9 us, shift ") != NULL);
    ck_assert(strstr(details, "| change (per launch) |\n") != NULL);
    /* stages without statistics keep their columns */
    ck_assert_uint_eq(count_of(md, "| per launch |"), 1);
    ck_assert_uint_eq(count_of(md, "| change (per launch) |"), 1);
    ck_assert_uint_eq(count_of(md, "Gate evidence"), 1);
    for (const char *p = strchr(md, '<'); p; p = strchr(p + 1, '<'))
        ck_assert_msg(strncmp(p, "<br>", 4) == 0 || strncmp(p, "<details>", 9) == 0 ||
                          strncmp(p, "</details>", 10) == 0 || strncmp(p, "<summary>", 9) == 0 ||
                          strncmp(p, "</summary>", 10) == 0 || strncmp(p, "<code>", 6) == 0 ||
                          strncmp(p, "</code>", 7) == 0,
                      "raw <: %.40s", p);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_nothing_changed)
{
    fixture f;
    fixture_stats(&f, false);
    static const char line[] = "No kernel changed beyond noise** (4 kernels, 1 n/a; largest move ±0.8 %; FDR 1 %, "
                               "min effect 2 % / 1 us).\n";
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    ck_assert_msg(strstr(t, "\nNo kernel changed beyond noise (4 kernels, 1 n/a; largest move ±0.8 %; FDR 1 %, "
                            "min effect 2 % / 1 us).\n") != NULL,
                  "%s", t);
    ck_assert_uint_eq(line_of(t, "No kernel changed beyond noise"), 3);
    ck_assert(line_of(t, "No kernel changed beyond noise") < line_of(t, "\n== "));
    ck_assert(strstr(t, "Changed beyond noise") == NULL);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert_msg(strstr(md, "\n**" "No kernel changed beyond noise**") != NULL, "%s", md);
    ck_assert(strstr(md, line) != NULL);
    ck_assert(line_of(md, line) < line_of(md, "**Inputs**"));
    check_tables(md);
    /* no regression but the n/a row; no improvement outside the noise */
    const char *all = strstr(md, "### all\n");
    ck_assert(strstr(all, "No kernel outside the noise shrank in exposed time") != NULL);
    free(md);
    free(t);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_several_stages)
{
    /* two stages with statistics: one line each, under the settings */
    fixture f;
    fixture_stats(&f, true);
    stats_stage(&f, 1, false);
    char *t = render(&f.rep, kd_diff_write_text, NULL);
    ck_assert_msg(strstr(t, "\nChanged beyond noise " SETTINGS ":\n"
                            "  decode: 0 of 4 kernels; 3 moved within noise (largest ±0.8 %); 1 n/a (fewer than 5 "
                            "launches on a side)\n"
                            "  all: 2 of 6 kernels; 3 moved within noise (largest ±0.8 %); 1 n/a (fewer than 5 "
                            "launches on a side)\n\nbaseline: ") != NULL,
                  "%s", t);
    char *md = render(&f.rep, kd_diff_write_markdown, NULL);
    ck_assert_msg(strstr(md, "**Changed beyond noise** " SETTINGS ":\n\n- decode: 0 of 4 kernels; 3 moved within "
                             "noise (largest ±0.8 %); 1 n/a (fewer than 5 launches on a side)\n- all: 2 of 6") != NULL,
                  "%s", md);
    ck_assert(strstr(strstr(md, "### decode"), "(no kernel") == NULL);
    ck_assert(strstr(t, "(no kernel changed beyond noise)") == NULL); /* decode lists its n/a row */
    check_tables(md);
    free(md);
    free(t);
    fixture_free(&f);
}
END_TEST

/* the CSV's columns after the 40 of schema 1, in order */
static const char *const stat_columns[] = {
    "change", "change_kind", "p_value", "q_value", "shift_us", "shift_lo_us", "shift_hi_us",
    "b_dur_median_us", "b_dur_mean_us", "b_dur_p10_us", "b_dur_p90_us", "b_dur_min_us", "b_dur_max_us",
    "b_dur_sd_us", "b_exposed_median_us", "b_exposed_mean_us", "b_exposed_p90_us",
    "c_dur_median_us", "c_dur_mean_us", "c_dur_p10_us", "c_dur_p90_us", "c_dur_min_us", "c_dur_max_us",
    "c_dur_sd_us", "c_exposed_median_us", "c_exposed_mean_us", "c_exposed_p90_us", NULL};

static double parse_number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    ck_assert_msg(*s && *end == '\0', "not a number: '%s'", s);
    return v;
}

START_TEST(test_stats_csv)
{
    fixture f;
    fixture_stats(&f, true);
    size_t len;
    char *text = render(&f.rep, kd_diff_write_csv, &len);
    csv_read c;
    csv_read_all(text, len, &c);
    ck_assert_uint_eq(c.records, 1 + 7 + 2 + 6);
    for (size_t i = 0; i < c.records; i++)
        ck_assert_uint_eq(c.per_record[i], N_CSV_COLUMNS);
    for (size_t k = 0; stat_columns[k]; k++)
        ck_assert_str_eq(c.cells[N_CSV_COLUMNS_V1 + k], stat_columns[k]);
    /* records 10..15: stage all */
    ck_assert_str_eq(cell(&c, 10, "kernel"), K_FLASH);
    ck_assert_str_eq(cell(&c, 10, "change"), "changed");
    ck_assert_str_eq(cell(&c, 10, "change_kind"), "per call");
    ck_assert(fabs(parse_number(cell(&c, 10, "p_value")) - 2.3e-9) < 1e-12);
    ck_assert(fabs(parse_number(cell(&c, 10, "q_value")) - 1.2e-8) < 1e-11);
    ck_assert_str_eq(cell(&c, 10, "shift_us"), "6.500");
    ck_assert_str_eq(cell(&c, 10, "shift_lo_us"), "5.900");
    ck_assert_str_eq(cell(&c, 10, "shift_hi_us"), "7.100");
    ck_assert_str_eq(cell(&c, 10, "b_dur_median_us"), "529.200");
    ck_assert_str_eq(cell(&c, 10, "c_dur_median_us"), "535.700");
    ck_assert_str_eq(cell(&c, 10, "b_dur_min_us"), "423.360");
    ck_assert_str_eq(cell(&c, 10, "c_exposed_mean_us"), "535.700");
    /* added: no baseline sample, no test */
    ck_assert_str_eq(cell(&c, 11, "kernel"), K_ADDED);
    ck_assert_str_eq(cell(&c, 11, "change"), "changed");
    ck_assert_str_eq(cell(&c, 11, "change_kind"), "");
    ck_assert_str_eq(cell(&c, 11, "p_value"), "");
    ck_assert_str_eq(cell(&c, 11, "shift_us"), "");
    ck_assert_str_eq(cell(&c, 11, "b_dur_median_us"), "");
    ck_assert_str_eq(cell(&c, 11, "c_dur_median_us"), "0.800");
    ck_assert_str_eq(cell(&c, 12, "change"), "noise");
    ck_assert_str_eq(cell(&c, 14, "kernel"), K_NA);
    ck_assert_str_eq(cell(&c, 14, "change"), "n/a");
    ck_assert_str_eq(cell(&c, 14, "q_value"), "");
    ck_assert_str_eq(cell(&c, 14, "b_dur_p90_us"), "0.550");
    /* a change_kind "" is a quoted empty string, an unknown change an empty cell */
    ck_assert(strstr(text, ",\"changed\",\"\",,,,,,,") != NULL);
    ck_assert_str_eq(cell(&c, 1, "change"), "");
    /* every statistic is a number or empty */
    for (size_t rec = 1; rec < c.records; rec++)
        for (size_t k = N_CSV_COLUMNS_V1 + 2; k < N_CSV_COLUMNS; k++) {
            const char *v = c.cells[rec * N_CSV_COLUMNS + k];
            if (*v)
                (void)parse_number(v);
        }
    csv_read_free(&c);
    free(text);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_json)
{
    fixture f;
    fixture_stats(&f, true);
    char *text = render(&f.rep, kd_diff_write_json, NULL);
    char err[256];
    yajl_val doc = yajl_tree_parse(text, err, sizeof err);
    ck_assert_msg(doc != NULL, "%s", err);
    ck_assert_str_eq(YAJL_GET_STRING(jget(doc, "schema", NULL, yajl_t_string)), "kerndiff.diff/2");
    yajl_val st = jget(doc, "statistics", NULL, yajl_t_object);
    ck_assert_ptr_nonnull(st);
    ck_assert(YAJL_GET_DOUBLE(jget(st, "fdr", NULL, yajl_t_number)) == 0.01);
    ck_assert(YAJL_GET_DOUBLE(jget(st, "min_effect_pct", NULL, yajl_t_number)) == 2.0);
    ck_assert(YAJL_GET_DOUBLE(jget(st, "min_effect_us", NULL, yajl_t_number)) == 1.0);
    ck_assert(YAJL_IS_FALSE(jget(st, "gate_significance", NULL, yajl_t_any)));
    ck_assert_int_eq(YAJL_GET_INTEGER(jget(st, "min_launches", NULL, yajl_t_number)), 5);
    yajl_val stages = jget(doc, "stages", NULL, yajl_t_array);
    yajl_val s0 = YAJL_GET_ARRAY(stages)->values[0], s2 = YAJL_GET_ARRAY(stages)->values[2];
    /* the stage's counts and the gate's evidence */
    ck_assert_int_eq(YAJL_GET_INTEGER(jget(s2, "changed", NULL, yajl_t_number)), 2);
    ck_assert_int_eq(YAJL_GET_INTEGER(jget(s2, "noise", NULL, yajl_t_number)), 3);
    ck_assert_int_eq(YAJL_GET_INTEGER(jget(s2, "na", NULL, yajl_t_number)), 1);
    ck_assert(YAJL_GET_DOUBLE(jget(s2, "noise_max_pct", NULL, yajl_t_number)) == 0.8);
    ck_assert(YAJL_IS_TRUE(jget(s2, "gate_evidence", "tested", yajl_t_any)));
    ck_assert(YAJL_GET_DOUBLE(jget(s2, "gate_evidence", "p_value", yajl_t_number)) == 1e-5);
    ck_assert(YAJL_GET_DOUBLE(jget(s2, "gate_evidence", "shift_us", yajl_t_number)) == 5.1);
    ck_assert(YAJL_GET_DOUBLE(jget(s2, "gate_evidence", "lo_us", yajl_t_number)) == 4.0);
    ck_assert(YAJL_GET_DOUBLE(jget(s2, "gate_evidence", "hi_us", yajl_t_number)) == 6.2);
    ck_assert(YAJL_IS_FALSE(jget(s0, "gate_evidence", "tested", yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(s0, "gate_evidence", "p_value", yajl_t_any)));
    ck_assert_int_eq(YAJL_GET_INTEGER(jget(s0, "changed", NULL, yajl_t_number)), 0);
    /* every row's keys are the CSV's columns, in their order */
    char *csv = render(&f.rep, kd_diff_write_csv, NULL);
    *strchr(csv, '\n') = '\0';
    for (size_t s = 0; s < 3; s++) {
        yajl_val rows = jget(YAJL_GET_ARRAY(stages)->values[s], "rows", NULL, yajl_t_array);
        for (size_t i = 0; i < YAJL_GET_ARRAY(rows)->len; i++) {
            yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
            ck_assert_uint_eq(YAJL_GET_OBJECT(row)->len, N_CSV_COLUMNS);
            char *save = NULL, *hdr = strdup(csv);
            size_t k = 0;
            for (char *key = strtok_r(hdr, ",", &save); key; key = strtok_r(NULL, ",", &save), k++)
                ck_assert_str_eq(YAJL_GET_OBJECT(row)->keys[k], key);
            ck_assert_uint_eq(k, N_CSV_COLUMNS);
            free(hdr);
        }
    }
    yajl_val rows = jget(s2, "rows", NULL, yajl_t_array);
    yajl_val flash = YAJL_GET_ARRAY(rows)->values[0], added = YAJL_GET_ARRAY(rows)->values[1];
    ck_assert_str_eq(YAJL_GET_STRING(jget(flash, "change", NULL, yajl_t_string)), "changed");
    ck_assert_str_eq(YAJL_GET_STRING(jget(flash, "change_kind", NULL, yajl_t_string)), "per call");
    ck_assert(YAJL_GET_DOUBLE(jget(flash, "p_value", NULL, yajl_t_number)) == 2.3e-9);
    ck_assert(YAJL_GET_DOUBLE(jget(flash, "shift_hi_us", NULL, yajl_t_number)) == 7.1);
    ck_assert(YAJL_GET_DOUBLE(jget(flash, "b_dur_median_us", NULL, yajl_t_number)) == 529.2);
    ck_assert(YAJL_IS_NULL(jget(added, "b_dur_median_us", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(added, "p_value", NULL, yajl_t_any)));
    ck_assert_str_eq(YAJL_GET_STRING(jget(added, "change_kind", NULL, yajl_t_string)), "");
    /* a row of unknown change: null statistics */
    yajl_val old = YAJL_GET_ARRAY(jget(s0, "rows", NULL, yajl_t_array))->values[0];
    ck_assert(YAJL_IS_NULL(jget(old, "change", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(old, "change_kind", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(old, "p_value", NULL, yajl_t_any)));
    ck_assert(YAJL_IS_NULL(jget(old, "c_dur_sd_us", NULL, yajl_t_any)));
    free(csv);
    yajl_tree_free(doc);
    free(text);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_markdown_limit)
{
    /* thousands of rows with statistics: the report still fits, the noise
     * leaves the top lists, the tables stay whole */
    fixture f;
    fixture_stats(&f, true);
    big_stage(&f, 0, 3000, 200, false);
    kd_diff_stage *st = &f.d.stages[0];
    for (size_t i = 0; i < st->n_rows; i++) {
        kd_diff_row *r = &st->rows[i];
        dist(&r->base.dur, 4 + i % 3, 1.0);
        dist(&r->cand.dur, 4 + i % 3, 2.0);
        if (i % 2)
            tested(r, "noise", "", 0.5, 0.9, 0.1, -0.1, 0.3);
        else
            tested(r, "changed", "per call", 1e-6, 1e-5, 1.0, 0.9, 1.1);
    }
    size_t len;
    char *md = render(&f.rep, kd_diff_write_markdown, &len);
    ck_assert_uint_lt(len, KD_MARKDOWN_LIMIT);
    ck_assert(strstr(md, "**Changed beyond noise**") != NULL);
    ck_assert(strstr(md, "#### Top regressions (exposed time grew): 10 of 1500") != NULL);
    ck_assert(strstr(md, "1500 kernels moved within noise") != NULL);
    ck_assert(strstr(md, "3000 more rows not shown") != NULL || strstr(md, "more rows not shown") != NULL);
    check_tables(md);
    free(md);
    fixture_free(&f);
}
END_TEST

START_TEST(test_stats_deterministic)
{
    static const writer writers[] = {kd_diff_write_markdown, kd_diff_write_csv, kd_diff_write_json,
                                     kd_diff_write_text};
    for (size_t w = 0; w < 4; w++) {
        fixture a, b;
        fixture_stats(&a, true);
        fixture_stats(&b, true);
        size_t la, lb;
        char *x = render(&a.rep, writers[w], &la);
        char *y = render(&b.rep, writers[w], &lb);
        ck_assert_uint_eq(la, lb);
        ck_assert(memcmp(x, y, la) == 0);
        free(x);
        free(y);
        fixture_free(&a);
        fixture_free(&b);
    }
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_markdown_sections);
    tcase_add_test(tc, test_markdown_escapes_trace_text);
    tcase_add_test(tc, test_markdown_limit_full_table);
    tcase_add_test(tc, test_markdown_limit_lists);
    tcase_add_test(tc, test_markdown_limit_replaced);
    tcase_add_test(tc, test_markdown_huge_name);
    tcase_add_test(tc, test_csv_parses_back);
    tcase_add_test(tc, test_json_parses);
    tcase_add_test(tc, test_text);
    tcase_add_test(tc, test_text_evidence_and_elision);
    tcase_add_test(tc, test_text_replaced_normalized);
    tcase_add_test(tc, test_text_limits_rows);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_no_stage);
    tcase_add_test(tc, test_stats_text);
    tcase_add_test(tc, test_stats_markdown);
    tcase_add_test(tc, test_stats_nothing_changed);
    tcase_add_test(tc, test_stats_several_stages);
    tcase_add_test(tc, test_stats_csv);
    tcase_add_test(tc, test_stats_json);
    tcase_add_test(tc, test_stats_markdown_limit);
    tcase_add_test(tc, test_stats_deterministic);
    suite_add_tcase(s, tc);
    return s;
}
