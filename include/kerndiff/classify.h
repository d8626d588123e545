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

/* The overlap module's categories (reference §4 classify_kernel). Every
 * behaviour that depends on a category (priority, suggestions, the gate's
 * communication) is keyed by these values. */
typedef enum {
    KD_CAT_COMPUTE = 0,
    KD_CAT_COMMUNICATION,
    KD_CAT_MEMORY,
    KD_CAT_ELEMENTWISE,
    KD_CAT_OTHER,
    KD_CAT_COUNT
} kd_category;

/* "compute", "communication", "memory", "elementwise", "other". */
const char *kd_category_name(kd_category c);
/* OH CATEGORY_PRIORITY: compute 4, communication 3, memory 2, elementwise 1, other 0. */
int kd_category_priority(kd_category c);

/* One step of a first-match-wins classification: a lowered name containing
 * any of `keywords` gets the step's category, unless `unless_compute_like`
 * and the name also contains a keyword of the profile's compute-like list
 * (the reference's weak tiers). */
typedef struct {
    kd_category category;
    const char *label; /* the kernel-site helpers' category string */
    const char *const *keywords; /* NULL-terminated */
    bool unless_compute_like;
} kd_class_step;

typedef struct {
    const char *name; /* the profile's name, for reports */
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
