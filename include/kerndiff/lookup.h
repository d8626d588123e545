/* lookup.h — the reference's relaxed name lookup (reference §4
 * relaxed_source_stats_lookup; kernel-sites.md §9 relaxed_kernel_entry_lookup):
 * exact key -> prefix/substring -> long common prefix of the compact forms
 * (>= 96 chars) -> alias token groups. Generic over a list of keys so the
 * source map, the kernel map and the diff matcher share one implementation.
 * Lowered and compact forms of the keys are computed once (kd_relaxed_index). */
#ifndef KERNDIFF_LOOKUP_H
#define KERNDIFF_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "kerndiff/intern.h"

typedef enum {
    KD_MATCH_NONE = 0,
    KD_MATCH_EXACT,
    KD_MATCH_PREFIX,
    KD_MATCH_SUBSTRING,
    KD_MATCH_LONG_PREFIX,
    KD_MATCH_ALIAS
} kd_match_kind;

/* "exact", "prefix", "substring", "long-prefix", "alias", "none" */
const char *kd_match_kind_name(kd_match_kind k);

/* The alias step's view of a candidate: the text whose compact form is
 * searched for the group tokens, and the score bonus of a hit. */
typedef struct {
    char *(*text)(void *ctx, size_t i); /* malloc'd */
    int (*bonus)(void *ctx, size_t i);
    void *ctx;
} kd_alias_scorer;

typedef struct {
    size_t n;
    const char **keys; /* borrowed */
    char **lower;      /* lowercase keys */
    size_t *lower_len; /* code points */
    char **compact;    /* compact forms */
    size_t *compact_len;
    kd_interner *exact; /* keys, then queries as they are asked */
    size_t *pos_of_id;  /* key id -> first position + 1 */
    uint32_t key_ids;   /* ids 1..key_ids are keys */
} kd_relaxed_index;

/* keys: n NUL-terminated strings, kept borrowed. false on OOM. */
bool kd_relaxed_index_build(kd_relaxed_index *ix, const char *const *keys, size_t n);
void kd_relaxed_index_free(kd_relaxed_index *ix);

/* The lookup: returns the key position, or -1. The query is interned into
 * the index's own table (past the key ids) for the exact step, so one index
 * must not be queried from two threads at once. usable (may be NULL) limits
 * the candidates (the diff matcher's still-unmatched keys). *kind gets the
 * stage that matched. */
long kd_relaxed_lookup(const kd_relaxed_index *ix, const char *name, const kd_alias_scorer *alias,
                       const bool *usable, kd_match_kind *kind);

/* kernel_alias_token_groups of a compact name: the number of groups that
 * matched (<= 4), their token lists in out (NULL-terminated lists). */
size_t kd_alias_groups(const char *compact, const char *const *out[4]);

#endif
