/* sourcemap.h — kernel -> Python scope / launch op attribution of one stage
 * (reference §4 "Source map": build_kernel_source_map and
 * merge_source_map_from_kernel_payload). Built from at most 16 samples per
 * kernel name of the mapping bundle; every step is indexed (per-thread
 * timelines, one offline sweep for all temporal queries) instead of the
 * reference's rescans of the whole trace per kernel. */
#ifndef KERNDIFF_SOURCEMAP_H
#define KERNDIFF_SOURCEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "kerndiff/counter.h"
#include "kerndiff/error.h"
#include "kerndiff/extract.h"
#include "kerndiff/payload.h"

typedef struct {
    kd_sid name; /* canonical kernel name */
    uint64_t total_count, mapped_count;
    kd_counter scope, chain, launch_op, site_share;
} kd_source_stats;

typedef struct {
    kd_interner *strings; /* owned: names and every counter key */
    kd_source_stats *v;   /* insertion order */
    size_t n, cap;
    uint32_t *index; /* name sid -> position + 1 */
    size_t index_cap;
} kd_source_map;

kd_status kd_source_map_build(const kd_bundle *mapping, kd_stage stage, kd_kmap_lookup_fn lookup,
                              void *lookup_ctx, kd_source_map *out, kd_error *err);
/* merge_source_map_from_kernel_payload; a NULL or empty payload changes nothing. */
kd_status kd_source_map_merge_payload(kd_source_map *sm, const kd_stage_payload *payload,
                                      kd_error *err);
void kd_source_map_free(kd_source_map *sm);

/* The stats of an exact key, or NULL. */
const kd_source_stats *kd_source_map_get(const kd_source_map *sm, const char *name);
double kd_source_stats_mapping_ratio(const kd_source_stats *s);
/* best_scope / best_chain / best_launch_op: most_common(1) key, or NULL. */
const char *kd_source_stats_best(const kd_source_map *sm, const kd_counter *c);

/* The relaxed lookup's alias step on a source-map key (reference §4 step 4):
 * the text "key best_scope best_chain best_launch_op" (malloc'd) and the bonus
 * source_scope_priority(best_scope) + int(mapping_ratio * 100). s may be NULL
 * (a key without stats: the key alone, bonus 0). */
char *kd_source_stats_alias_text(const kd_source_map *sm, const char *key, const kd_source_stats *s);
int kd_source_stats_alias_bonus(const kd_source_map *sm, const kd_source_stats *s);

/* Helpers of the attribution rules, exposed for tests. */
/* OH choose_best_scope over a chain of canonical scope names; index or -1. */
int kd_choose_best_scope(const char *const *chain, size_t n);
/* OH is_low_signal_scope */
bool kd_is_low_signal_scope(const char *scope);
/* is_meaningful_python_scope / is_fallback_python_scope on a canonical scope */
bool kd_is_meaningful_python_scope(const char *canonical);
bool kd_is_fallback_python_scope(const char *canonical);
/* OH source_scope_priority */
int kd_source_scope_priority(const char *scope);

#endif
