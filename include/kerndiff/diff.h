/* diff.h — baseline vs candidate, kernel by kernel (product.md §3–§4): both
 * sides run the same triage (loaded concurrently), each stage pair's full
 * aggregate lists are matched (exact name + category, exact name, then the
 * relaxed lookup), and every matched / added / removed kernel gets a row of
 * deltas; stage summaries and the exposed-communication gate follow. */
#ifndef KERNDIFF_DIFF_H
#define KERNDIFF_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "kerndiff/error.h"
#include "kerndiff/intern.h"
#include "kerndiff/lookup.h"
#include "kerndiff/stats.h"
#include "kerndiff/triage.h"

typedef struct {
    const char *baseline_path, *candidate_path;
    const char *baseline_mapping, *candidate_mapping; /* NULL: the side itself */
    const char *baseline_pid, *candidate_pid; /* NULL: sides.pid_substring */
    /* the triage options of both sides (pid, stage, limit = action rows per
     * stage, min_share = render bar of the rows reports show, kernel map,
     * framework); its paths are not used */
    kd_triage_options sides;
    bool normalize_steps; /* --normalize steps */
    bool allow_identical; /* --allow-identical: a gate may judge a trace against itself */
    /* --match-rule OLD_GLOB=NEW_GLOB (repeatable): a baseline kernel whose
     * canonical name matches OLD_GLOB pairs with a candidate kernel matching
     * NEW_GLOB (fnmatch), before any heuristic; n_match_rules entries */
    const char *const *match_rules;
    size_t n_match_rules;
    /* --gate-category: the category the gate watches, NULL: communication */
    const char *gate_category;
    /* the noise statistics (stats.h): --fdr (Benjamini–Hochberg rate over a
     * stage's rows; 0: the default 1 %), --min-effect (a change smaller than
     * min_effect_pct of the baseline median or min_effect_us is not one;
     * both 0: the defaults 2 % and 1 us), --gate-significance (a gate
     * regression within noise warns instead of failing) */
    double fdr;
    double min_effect_pct, min_effect_us;
    bool gate_significance;
    bool sequential; /* load the sides one after the other (tests) */
} kd_diff_options;

/* One side of a diff row. Every string is the diff's own (kd_diff.strings):
 * the row outlives the traces it was computed from. */
typedef struct {
    bool present;
    const char *name; /* canonical kernel name on that side */
    kd_category category;
    const char *category_name; /* in the rules in force (kd_diff.category_names) */
    uint64_t launches;
    /* the diff says "exposed" for what the analysis calls exclusive time
     * (reference: exclusive_us, time with no other stream busy) */
    double total_us, exposed_us, hidden_us, hidden_by_compute_us, share_pct;
    double exposed_ratio, hidden_ratio;
    /* per launch, zero-duration launches included (µs; times per step
     * under --normalize steps are not divided: a launch is a launch) */
    kd_dist dur, exposed;
    /* per ProfilerStep (both sides >= 3 steps): the exposed time's mean and
     * the 95 % half-width of that mean; NAN without steps */
    double step_exposed_mean, step_exposed_ci;
    /* when the kernel is an action row on that side, else NULL */
    const char *priority, *verdict, *recommendation, *dependency_risk;
    const char *python_scope; /* "" when none */
} kd_diff_side;

typedef struct {
    const char *name; /* the candidate's name if present, else the baseline's */
    kd_category category;
    const char *category_name; /* the candidate's if present, else the baseline's */
    kd_match_kind match; /* KD_MATCH_NONE with only one side: added / removed */
    const char *evidence; /* why the two were paired, e.g. "same scope
                             flux.py(124), 228 = 228 launches"; "" for exact
                             matches and one-sided rows */
    kd_diff_side base, cand;
    double d_total_us, d_exposed_us, d_hidden_us;    /* candidate - baseline */
    double pct_total, pct_exposed, pct_hidden;       /* relative %, NAN when baseline is 0 */
    char priority_change[32];                        /* "P2->P1", "=", "new P1", "P3->none" */
    /* is it real (stats.h)? change: "changed", "noise", or "n/a" when a side
     * has fewer than KD_STATS_MIN_LAUNCHES launches; an added, removed or
     * replaced kernel is "changed". change_kind: "per call" (the per-launch
     * duration moved), "count" (the launches did), "per call and count", or
     * "" */
    const char *change, *change_kind;
    double p_value, q_value;                   /* Mann–Whitney on per-launch durations, BH-adjusted; NAN untested */
    double shift_us, shift_lo_us, shift_hi_us; /* Hodges–Lehmann, candidate - baseline, 95 %; NAN untested */
} kd_diff_row;

/* Fewer launches than this on a side: the row's change is "n/a". */
#define KD_STATS_MIN_LAUNCHES 5

/* The row arithmetic once both sides are filled: name and category from the
 * candidate when present, the deltas, relative changes and priority change. */
void kd_diff_row_finish(kd_diff_row *r, kd_match_kind match);

/* "exact", "prefix", "substring", "long-prefix", "alias", "added", "removed" */
const char *kd_diff_row_kind(const kd_diff_row *r);

typedef struct {
    double total_us, exposed_us, hidden_us;
} kd_time_split;

typedef struct {
    double busy_us, overlap_us, max_concurrent_streams;
    uint64_t launches; /* kernels without a duration included (divergence D7) */
    kd_time_split by_category[KD_CAT_MAX];
    uint64_t launches_by_category[KD_CAT_MAX];
    kd_category gate_category; /* the category the gate watches (kd_diff.gate_category) */
    uint64_t comm_kernels;     /* its launches (communication unless --gate-category) */
    /* per ProfilerStep, when both sides have >= 3: the steps used, and the
     * mean and 95 % half-width of the busy time and of the gate category's
     * exposed time per step (NAN without) */
    size_t steps;
    double step_busy_mean, step_busy_ci, step_gate_mean, step_gate_ci;
} kd_stage_summary;

/* The gate's evidence in a stage: the per-launch exposed time of the gate's
 * category, pooled over its kernels, tested between the sides. */
typedef struct {
    bool tested;
    double p_value;
    double shift_us, lo_us, hi_us; /* Hodges–Lehmann, candidate - baseline, 95 % */
    /* per step (both sides >= 3 steps): the difference of the means of the
     * exposed time per step, with its 95 % Welch interval */
    bool step_tested;
    double step_diff_us, step_lo_us, step_hi_us;
} kd_gate_evidence;

typedef struct {
    kd_stage stage;
    const char *base_pid, *cand_pid; /* the pid analysed on each side */
    kd_stage_summary sum_base, sum_cand;
    kd_diff_row *rows; /* ordered by |d exposed| desc, then name */
    size_t n_rows;
    /* the rows by change, and the largest |pct_total| among the noise rows */
    size_t n_changed, n_noise, n_na;
    double noise_max_pct;
    kd_gate_evidence gate_evidence;
} kd_diff_stage;

/* One trace file a side read: where it sits in a distributed job and on
 * which device, and where its stages came from. */
typedef struct {
    const char *path;
    const char *stages_from; /* "path", "annotations" or "none" */
    long rank, world_size;   /* -1: unknown */
    const char *rank_from;   /* "distributedInfo", "file name" or "" */
    const char *device;      /* deviceProperties name of the analysed device, "" unknown */
} kd_diff_file;

/* What one side of the diff read. */
typedef struct {
    const char *path;    /* as given */
    const char *mapping; /* a separate mapping trace, NULL: the trace itself */
    kd_diff_file *files; /* the trace files read (a directory resolved) */
    size_t n_files;
    double steps;        /* ProfilerStep count (0 = none) */
    const char *steps_from; /* the spans per-step statistics used: "gpu
                               annotations", "cpu annotations", "" none */
    const char *stages_how; /* how the side's stages were decided: "path",
                               "annotations", "none" or "mixed" */
    const char *stages;     /* the stages the side has, e.g. "extend/prefill, decode, all" */
    kd_kernel_accounting acc; /* where every kernel of the analysed pid went */
} kd_diff_input;

/* A gate threshold: REL percent and/or ABS microseconds (product.md §4). */
typedef struct {
    bool set;
    double rel_pct; /* -1 when only ABS was given */
    double abs_us;
} kd_gate;

/* "5%", "5%,200us", "200us"; false with a message on bad syntax. */
bool kd_gate_parse(const char *s, kd_gate *out, char *msg, size_t msgsz);

/* KD_VERDICT_UNJUDGED: a gate was set but there is nothing it can judge
 * (no stage in common, no communication kernel on either side, the same
 * trace on both sides): the CLI exits 2 and writes no report. */
typedef enum { KD_VERDICT_PASS = 0, KD_VERDICT_WARN, KD_VERDICT_FAIL, KD_VERDICT_UNJUDGED } kd_verdict;

typedef struct {
    kd_verdict verdict;
    char line[4096];   /* the verdict line (stderr and the head of the Markdown) */
    char **warnings;   /* loud warnings every report repeats */
    size_t n_warnings;
} kd_gate_result;

/* A diff owns its data: every string it reports is copied into `strings`,
 * and the two triages it was computed from are freed before kd_diff_run
 * returns, so memory holds the result, not two traces. */
typedef struct {
    kd_interner *strings;          /* the diff's own copies of names, paths, pids */
    kd_diff_input base_in, cand_in;
    double steps_base, steps_cand; /* ProfilerStep counts (0 = none) */
    double scale_base, scale_cand; /* 1 / steps with --normalize steps, else 1 */
    bool normalized;               /* --normalize steps: times are per step */
    double fdr, min_effect_pct, min_effect_us; /* the statistics' settings in force */
    bool gate_significance;
    kd_diff_stage stages[KD_STAGE_COUNT];
    size_t n_stages;
    /* the rules in force: their name and source ("built-in", or a file with
     * its hash), their categories in rule order (0 of them in a diff built
     * by hand: the built-in five), and the one the gate watches */
    const char *rules_name, *rules_source;
    const char *category_names[KD_CAT_MAX];
    size_t n_categories;
    kd_category gate_category;
    /* the two sides are one file or the same bytes ("the same file", "the
     * same bytes"; NULL: they differ), and whether that is allowed */
    const char *identical;
    bool allow_identical;
    char **warnings; /* stage pairing, step counts, missing communication */
    size_t n_warnings;
} kd_diff;

/* An empty diff with its string arena; false when out of memory. For
 * callers that build a diff by hand (tests, a merge of saved results). */
bool kd_diff_init(kd_diff *d);
/* s copied into d's arena ("" for NULL); NULL when out of memory. */
const char *kd_diff_own(kd_diff *d, const char *s);

kd_status kd_diff_run(const kd_diff_options *opt, kd_diff *out, kd_error *err);
void kd_diff_free(kd_diff *d);

/* Applies the gates to every stage (after normalization). */
void kd_diff_gate(const kd_diff *d, const kd_gate *fail, const kd_gate *warn, kd_gate_result *out);
void kd_gate_result_free(kd_gate_result *g);

/* Exposed time of the gate's category (communication unless
 * --gate-category) in a summary. */
double kd_stage_exposed_comm(const kd_stage_summary *s);
/* A category's name in d's rules (the built-in names in a hand-built diff). */
const char *kd_diff_category_name(const kd_diff *d, kd_category c);
/* The categories d's reports list: the gate's first, then the others in
 * rule order; returns their count. */
size_t kd_diff_report_categories(const kd_diff *d, kd_category out[KD_CAT_MAX]);

#endif
