/* lookup.h — the reference's relaxed name lookup (reference §4
 * relaxed_source_stats_lookup; kernel-sites.md §9 relaxed_kernel_entry_lookup):
 * exact key -> prefix/substring -> long common prefix of the compact forms
 * (>= 96 chars) -> alias token groups. Generic over a list of keys so the
 * source map, the kernel map and the diff matcher share one implementation.
 *
 * The reference scans every key for every query (reference §4: "Each call is
 * O(|sm|)"), which is quadratic when the diff matcher asks for every unmatched
 * kernel (product.md §6: lookups must be indexed). kd_relaxed_index answers
 * the same question, with the same winner and tie-breaking (the first key
 * position among the best scores), from indexes built once: a sorted table and
 * hashes of the lowercased keys for the prefix cases, sampled 8-gram postings
 * for "a key contains the query", anchor 8-grams for "the query contains a
 * key", a sorted table of the long compact forms for the common-prefix stage,
 * and per-key alias hits computed the first time the alias stage runs. */
#ifndef KERNDIFF_LOOKUP_H
#define KERNDIFF_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "kerndiff/intern.h" /* kept for the includers that relied on it */

/* How a diff row's two kernels were paired (match.h). The relaxed lookup
 * below gives PREFIX .. ALIAS; the matcher adds the others. */
typedef enum {
    KD_MATCH_NONE = 0,
    KD_MATCH_EXACT,
    KD_MATCH_PREFIX,
    KD_MATCH_SUBSTRING,
    KD_MATCH_LONG_PREFIX,
    KD_MATCH_ALIAS,
    KD_MATCH_RULE,        /* a user's --match-rule OLD_GLOB=NEW_GLOB */
    KD_MATCH_RENUMBERED,  /* generated names (Inductor/Triton) without their number */
    KD_MATCH_TEMPLATE,    /* the name without template arguments and parameters */
    KD_MATCH_RETARGETED,  /* the same library kernel for another GPU architecture */
    KD_MATCH_REPLACED     /* a different kernel in the same place of the work */
} kd_match_kind;

/* "exact", "prefix", "substring", "long-prefix", "alias", "rule",
 * "renumbered", "template", "retargeted", "replaced", "none" */
const char *kd_match_kind_name(kd_match_kind k);

/* The alias step's view of a candidate: the text whose compact form is
 * searched for the group tokens, and the score bonus of a hit. Both must
 * depend only on (ctx, i) for as long as the index lives: the index asks
 * each key once, the first time the alias stage runs with this scorer. */
typedef struct {
    char *(*text)(void *ctx, size_t i); /* malloc'd */
    int (*bonus)(void *ctx, size_t i);
    void *ctx;
} kd_alias_scorer;

typedef struct kd_relaxed_impl kd_relaxed_impl;

typedef struct {
    size_t n;
    const char **keys;     /* borrowed */
    kd_relaxed_impl *impl; /* the indexes and the claimed set */
} kd_relaxed_index;

/* keys: n NUL-terminated strings, kept borrowed. false on OOM. */
bool kd_relaxed_index_build(kd_relaxed_index *ix, const char *const *keys, size_t n);
void kd_relaxed_index_free(kd_relaxed_index *ix);

/* Removes key position pos from every later lookup's candidates (the diff
 * matcher's one-to-one claim), in O(log n). */
void kd_relaxed_index_claim(kd_relaxed_index *ix, size_t pos);

/* The lookup: returns the key position, or -1. The candidates are the keys
 * not claimed and, when usable is not NULL, with usable[i] set. usable is an
 * exact filter but not an indexed one (a rejected key costs a step); callers
 * that remove keys as they go should claim them instead. The index keeps
 * per-query caches, so one index must not be queried from two threads at
 * once. *kind gets the stage that matched. */
long kd_relaxed_lookup(const kd_relaxed_index *ix, const char *name, const kd_alias_scorer *alias,
                       const bool *usable, kd_match_kind *kind);

/* kernel_alias_token_groups of a compact name: the number of groups that
 * matched (<= 4), their token lists in out (NULL-terminated lists). */
size_t kd_alias_groups(const char *compact, const char *const *out[4]);

#endif
