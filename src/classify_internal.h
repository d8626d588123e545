/* classify_internal.h — the reference's tables shared by the built-in
 * profiles (classify.c holds them; rules_default.c reuses all but the
 * overlap categories' keywords). Not installed. */
#ifndef KERNDIFF_CLASSIFY_INTERNAL_H
#define KERNDIFF_CLASSIFY_INTERNAL_H

#include "kerndiff/classify.h"

#define KD_N_BUILTIN_CATEGORIES 5
#define KD_REF_N_SITE_STEPS 16
#define KD_REF_N_HINT_LISTS 5

extern const kd_category_def kd_builtin_categories[KD_N_BUILTIN_CATEGORIES];
extern const kd_class_step kd_ref_site_steps[KD_REF_N_SITE_STEPS];
extern const char *const kd_ref_site_compute_like[];
extern const char *const kd_ref_hint_prefixes[];
extern const char *const *const kd_ref_hint_lists[KD_REF_N_HINT_LISTS];
extern const char *const kd_ref_decode_keywords[];
extern const char *const kd_ref_extend_keywords[];
extern const char *const kd_ref_launch_runtime[];
extern const char *const kd_ref_launch_any[];

/* The fields every built-in profile shares: its source, the five categories,
 * and every table but the overlap categories' (designated initializers). */
#define KD_BUILTIN_PROFILE                                                        \
    .source = "built-in", .categories = kd_builtin_categories,                    \
    .n_categories = KD_N_BUILTIN_CATEGORIES
#define KD_REF_SHARED_TABLES                                                      \
    .site_steps = kd_ref_site_steps, .n_site_steps = KD_REF_N_SITE_STEPS,         \
    .site_compute_like = kd_ref_site_compute_like, .hint_prefixes = kd_ref_hint_prefixes, \
    .hint_lists = kd_ref_hint_lists, .n_hint_lists = KD_REF_N_HINT_LISTS,         \
    .decode_keywords = kd_ref_decode_keywords, .extend_keywords = kd_ref_extend_keywords, \
    .launch_runtime = kd_ref_launch_runtime, .launch_any = kd_ref_launch_any

#endif
