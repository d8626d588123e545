/* classify.h — kernel classification as a value: a kd_rules holds every
 * table that decides what a name is (the categories of the overlap module
 * and of the kernel-site helpers, the loader's kernel-name hint, the stage
 * keywords of annotations, the CUDA launch names). It is built once and
 * reaches every place that classifies through kd_load_options (the loaded
 * trace keeps it: kd_trace.rules), so a different profile changes the
 * loader, the analysis and the kernel sites alike. kd_rules_reference() is
 * the reference's own tables, verbatim (reference §1, §4; kernel-sites.md
 * §2). */
#ifndef KERNDIFF_CLASSIFY_H
#define KERNDIFF_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A category: an index into a profile's category table (kd_rules.categories).
 * Every profile starts with the overlap module's five (reference §4
 * classify_kernel), at these indexes; a rules file may add more (e.g.
 * attention), each behaving as one of the five: its kind. Every behaviour
 * that depends on a category (priority, suggestions, the hidden-by-compute
 * time) reads the kind; reports and the gate read the category. */
typedef uint8_t kd_category;
enum {
    KD_CAT_COMPUTE = 0,
    KD_CAT_COMMUNICATION,
    KD_CAT_MEMORY,
    KD_CAT_ELEMENTWISE,
    KD_CAT_OTHER,
    KD_CAT_COUNT /* the built-in five: the kinds */
};
#define KD_CAT_MAX 16 /* categories a profile may have */

/* The built-in five's names: "compute", "communication", "memory",
 * "elementwise", "other" (a kind's name). */
const char *kd_category_name(kd_category c);
/* OH CATEGORY_PRIORITY of a kind: compute 4, communication 3, memory 2, elementwise 1, other 0. */
int kd_category_priority(kd_category kind);

typedef struct {
    const char *name;
    kd_category kind; /* one of the built-in five */
} kd_category_def;

/* One step of a first-match-wins classification: a lowered name containing
 * any of `keywords`, or matching `regex` (a POSIX extended regular
 * expression, compiled; NULL for none), gets the step's category, unless
 * `unless_compute_like` and the name also contains a keyword of the
 * profile's compute-like list (the reference's weak tiers). */
typedef struct {
    kd_category category;
    const char *label; /* the kernel-site helpers' category string */
    const char *const *keywords; /* NULL-terminated, may be NULL */
    bool unless_compute_like;
    const void *regex; /* a regex_t, or NULL */
} kd_class_step;

typedef struct {
    const char *name; /* the profile's name, for reports: "default", "reference", or the file's path */
    /* where it comes from, for reports: "built-in", or "PATH (hash 0123456789abcdef)" */
    const char *source;
    /* the categories, indexed by kd_category; the first KD_CAT_COUNT are the
     * built-in five, in enum order */
    const kd_category_def *categories;
    size_t n_categories;
    /* the matcher's user rules (match.h): "OLD_GLOB=NEW_GLOB" */
    const char *const *match_rules;
    size_t n_match_rules;
    /* OH classify_kernel: steps in order, then KD_CAT_OTHER */
    const kd_class_step *steps;
    size_t n_steps;
    const char *const *compute_like;
    /* KH classify_kernel (kernel-sites.md §2): steps by label, then "other" */
    const kd_class_step *site_steps;
    size_t n_site_steps;
    const char *const *site_compute_like;
    /* OH is_kernel_event's last step: a name starting with one of
     * hint_prefixes or containing a keyword of one of hint_lists */
    const char *const *hint_prefixes;
    const char *const *const *hint_lists;
    size_t n_hint_lists;
    /* reference §2.1: annotation names that select a stage (lowered) */
    const char *const *decode_keywords;
    const char *const *extend_keywords;
    /* CUDA launch names, lowered: of cuda_runtime events, of any category */
    const char *const *launch_runtime;
    const char *const *launch_any;
} kd_rules;

/* The reference's tables, exactly. */
const kd_rules *kd_rules_reference(void);
/* The default profile: current CUDA and ROCm stacks classified correctly
 * (docs/taxonomy.md); the reference's tables for everything but the
 * overlap categories. */
const kd_rules *kd_rules_default(void);
/* A built-in profile by name ("default", "reference"), NULL when none. */
const kd_rules *kd_rules_builtin(const char *name);

/* Category c's name and kind in r ("other" / KD_CAT_OTHER when out of range). */
const char *kd_rules_category_name(const kd_rules *r, kd_category c);
kd_category kd_rules_kind(const kd_rules *r, kd_category c);
/* The category named name, -1 when the profile has none. */
int kd_rules_category_index(const kd_rules *r, const char *name);

/* OH classify_kernel on the raw (not normalized) name. */
kd_category kd_rules_classify(const kd_rules *r, const char *raw_name);
/* KH classify_kernel: "communication", "memory", "hybrid_linear",
 * "attention", ..., "other" (static strings). */
const char *kd_rules_classify_site(const kd_rules *r, const char *raw_name);
/* The kernel-name hint on a lowered name. */
bool kd_rules_kernel_name_hint(const kd_rules *r, const char *lowered_name);
/* The stage an annotation's lowered name selects, -1 for none. */
int kd_rules_annotation_stage(const kd_rules *r, const char *lowered_name);
/* Whether a lowered name is a CUDA launch: of a cuda_runtime event
 * (runtime) or of any category. */
bool kd_rules_is_launch(const kd_rules *r, const char *lowered_name, bool runtime);

/* The built-in profile's functions, as before kd_rules (tests). */
kd_category kd_classify_kernel(const char *raw_name);
const char *kd_classify_kernel_kh(const char *raw_name);
bool kd_kernel_name_hint(const char *lowered_name);

#endif
