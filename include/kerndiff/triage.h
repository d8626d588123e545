/* triage.h — one trace's triage (reference §3.5): the formal side gives
 * timing, the mapping side Python-scope attribution (divergence D3: by
 * default the trace is its own mapping trace). */
#ifndef KERNDIFF_TRIAGE_H
#define KERNDIFF_TRIAGE_H

#include <stdio.h>

#include "kerndiff/aggregate.h"
#include "kerndiff/error.h"
#include "kerndiff/kernelsites.h"
#include "kerndiff/overlap.h"
#include "kerndiff/priority.h"
#include "kerndiff/side.h"
#include "kerndiff/sourcemap.h"

typedef struct {
    const char *formal_path;
    const char *mapping_path; /* NULL or equal to formal_path: the same side */
    const char *pid_substring; /* --pid, may be NULL */
    bool has_stage_filter;     /* --stage */
    kd_stage stage_filter;
    bool dump_internals;       /* JSON: also every event */
    size_t limit;              /* --limit: action rows per stage, 0 = all */
    double min_share;          /* --min-share: render bar in percent (default 1.0) */
    bool no_kernel_map;        /* --no-kernel-map: no kernel-site payloads */
    bool framework_set;        /* --framework given (else auto-detected) */
    kd_framework framework;    /* mapping kernel map sampling (reference §3.1) */
    kd_stage_basis stage_basis; /* side.h; triage: the reference's */
    bool whole_trace;          /* also the whole-trace stage all (the diff) */
    bool zero_duration_launches; /* kernels without a duration count as
                                    launches in the aggregates (the diff) */
    kd_load_options load;      /* threads per trace load (zero: one); with
                                  two and a separate mapping trace, the two
                                  kernel-site payloads are built at once */
} kd_triage_options;

/* One rendered stage: both bundles (NULL when the stage is skipped) and the
 * analysis of the formal events (reference §3.5 steps 3–8). */
typedef struct {
    kd_stage stage;
    kd_bundle *formal; /* its events carry the sweep results */
    const kd_bundle *mapping;
    kd_overlap_stats overlap;
    kd_aggregate_list aggregates;
    size_t top_overlap[5], n_top_overlap;
    size_t top_low_roi[5], n_top_low_roi;
    kd_source_map sources; /* after the formal payload merge */
    kd_source_map sources_mapping_only; /* before it; built only for --dump-internals */
    kd_action_rows rows;   /* all action rows (after --limit) */
} kd_triage_stage;

typedef struct {
    kd_side formal;
    kd_side mapping_own; /* used when a separate mapping trace is given */
    const kd_side *mapping;
    bool kernel_sites;            /* the payloads below were built */
    kd_framework framework;       /* used for the mapping kernel map */
    kd_kernel_map mapping_kernel_map;
    kd_kernel_map formal_payloads;
    kd_triage_stage stages[KD_STAGE_COUNT];
    size_t n_stages;
} kd_triage;

kd_status kd_triage_run(const kd_triage_options *opt, kd_triage *out, kd_error *err);
/* The analysis half of kd_triage_run, for sides loaded by the caller (the
 * fuzz target loads one from memory with kd_side_load_mem): out->formal is
 * loaded, out->mapping points at it or at out->mapping_own, the rest of out
 * is zero; opt->formal_path (and mapping_path) only name the sides in
 * messages. Frees out on failure, like kd_triage_run. */
kd_status kd_triage_analyze(const kd_triage_options *opt, kd_triage *out, kd_error *err);
void kd_triage_free(kd_triage *t);


/* Whether an action row clears the render bar (reference §3.5 step 8). */
bool kd_triage_row_rendered(const kd_triage_options *opt, const kd_action_row *r);

/* The warning when kernels of the formal side fall in no table: outside
 * every stage annotation, or in a stage an earlier file holds (divergence
 * D7: the tables stay the reference's, the loss is said). false when none. */
bool kd_triage_outside_warning(const kd_triage *t, char *buf, size_t n);

/* The message for a side without GPU kernels (names pids and categories
 * seen; when pid_substring is given and no pid contains it, says so), into
 * buf. */
void kd_describe_no_kernels(const kd_side *s, const char *path, const char *pid_substring, char *buf,
                            size_t n);

#endif
