/* match.h — which baseline kernel each candidate kernel is (product.md §3,
 * the matching issue): one-to-one, deterministic, in steps that each report
 * their kind and a short evidence string:
 *
 *   1. rule        a user's --match-rule OLD_GLOB=NEW_GLOB
 *   2. exact       the same canonical name (same category first)
 *   3. renumbered  generated names (triton_poi_…_17) without their number
 *   4. template    the name without template arguments and parameter lists
 *   5. retargeted  architecture words (ampere_, volta_, sm90_, …) normalized
 *   6. relaxed     the reference's lookup: prefix, substring, long-prefix, alias
 *   7. replaced    a removed and an added kernel in the same place of the work
 *
 * Where several kernels share a key (steps 3–5), they are paired by evidence
 * — launch count, place in the launch order, Python scope, launch op — never
 * by a suffix number. */
#ifndef KERNDIFF_MATCH_H
#define KERNDIFF_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kerndiff/classify.h"
#include "kerndiff/error.h"
#include "kerndiff/lookup.h"

/* One kernel (a per-stage aggregate) of one side, as the matcher sees it. */
typedef struct {
    const char *name;      /* canonical name */
    kd_category category;
    uint64_t launches;
    double total_us;
    const char *scope;     /* best Python scope, "" when unmapped */
    const char *launch_op; /* best launch op, "" when none */
    double first_ts;       /* its first launch (any clock: only the order counts) */
} kd_match_item;

typedef struct {
    const char *const *rules; /* "OLD_GLOB=NEW_GLOB" */
    size_t n_rules;
    /* the relaxed step's alias scorer over baseline item indexes (lookup.h);
     * NULL: no alias step */
    const kd_alias_scorer *alias;
} kd_match_options;

typedef struct {
    long *cand_of;          /* per baseline item: candidate index, -1 */
    long *base_of;          /* per candidate item: baseline index, -1 */
    kd_match_kind *kind;    /* per candidate item (KD_MATCH_NONE: added) */
    char **evidence;        /* per candidate item: malloc'd, NULL when none */
} kd_matching;

kd_status kd_match_kernels(const kd_match_item *b, size_t nb, const kd_match_item *c, size_t nc,
                           const kd_match_options *opt, kd_matching *out, kd_error *err);
void kd_matching_free(kd_matching *m, size_t nc);

/* The keys of steps 3–5, malloc'd, NULL when the step does not apply to the
 * name (exposed for tests): the name without its generated number; without
 * template arguments and parameters; with architecture words as "ARCH". */
char *kd_match_renumber_key(const char *name);
char *kd_match_template_key(const char *name);
char *kd_match_retarget_key(const char *name);

#endif
