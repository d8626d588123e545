/* lookup.c — relaxed name lookup (lookup.h). */
#include "config.h"

#include "kerndiff/lookup.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/text.h"

const char *kd_match_kind_name(kd_match_kind k)
{
    static const char *const names[] = {"none", "exact", "prefix", "substring", "long-prefix", "alias"};
    return k <= KD_MATCH_ALIAS ? names[k] : "none";
}

bool kd_relaxed_index_build(kd_relaxed_index *ix, const char *const *keys, size_t n)
{
    memset(ix, 0, sizeof *ix);
    ix->n = n;
    ix->keys = malloc((n ? n : 1) * sizeof *ix->keys);
    ix->lower = calloc(n ? n : 1, sizeof *ix->lower);
    ix->lower_len = malloc((n ? n : 1) * sizeof *ix->lower_len);
    ix->compact = calloc(n ? n : 1, sizeof *ix->compact);
    ix->compact_len = malloc((n ? n : 1) * sizeof *ix->compact_len);
    ix->exact = kd_interner_new();
    ix->pos_of_id = calloc(n + 1, sizeof *ix->pos_of_id);
    if (!ix->keys || !ix->lower || !ix->lower_len || !ix->compact || !ix->compact_len ||
        !ix->exact || !ix->pos_of_id) {
        kd_relaxed_index_free(ix);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        ix->keys[i] = keys[i];
        ix->lower[i] = kd_lower(keys[i]);
        ix->compact[i] = kd_compact_match_text(keys[i]);
        if (!ix->lower[i] || !ix->compact[i]) {
            kd_relaxed_index_free(ix);
            return false;
        }
        ix->lower_len[i] = kd_utf8_len(ix->lower[i]);
        ix->compact_len[i] = strlen(ix->compact[i]);
        uint32_t before = kd_interner_count(ix->exact);
        kd_sid id = kd_intern_cstr(ix->exact, keys[i]);
        if (!id) {
            kd_relaxed_index_free(ix);
            return false;
        }
        if (kd_interner_count(ix->exact) != before) /* first position of a key */
            ix->pos_of_id[id] = i + 1;
    }
    ix->key_ids = kd_interner_count(ix->exact);
    return true;
}

void kd_relaxed_index_free(kd_relaxed_index *ix)
{
    for (size_t i = 0; i < ix->n && ix->lower; i++) {
        free(ix->lower[i]);
        if (ix->compact)
            free(ix->compact[i]);
    }
    free(ix->keys);
    free(ix->lower);
    free(ix->lower_len);
    free(ix->compact);
    free(ix->compact_len);
    free(ix->pos_of_id);
    kd_interner_free(ix->exact);
    memset(ix, 0, sizeof *ix);
}

size_t kd_alias_groups(const char *c, const char *const *out[4])
{
    static const char *const g_flash[] = {"flashattnfwdsm90", "flashattnvarlenfunc",
                                          "vllmflashattnflashattninterface", "vllmfa3cfwd", NULL};
    static const char *const g_mha[] = {"maskedmultiheadattentionkernel", "attentioninplace",
                                        "attentionbackendtrtllm", NULL};
    static const char *const g_rope[] = {"fusedqknormropekernel", "applyqknormrope",
                                         "modelingqwen3py98applyqknormrope", NULL};
    static const char *const g_memset[] = {"memset", NULL};
    size_t n = 0;
    if (strstr(c, "flashattnfwdcombine"))
        out[n++] = g_flash;
    if (strstr(c, "kernelmha"))
        out[n++] = g_mha;
    if (strstr(c, "applybiasropeupdatekvcachev2"))
        out[n++] = g_rope;
    if (kd_starts_with(c, "memset"))
        out[n++] = g_memset;
    return n;
}

static bool can_use(const bool *usable, size_t i) { return !usable || usable[i]; }

/* reference §4 relaxed lookup step 2: prefix (min len) beats substring (min len // 2) */
static long prefix_or_substring(const kd_relaxed_index *ix, const char *low, size_t low_len,
                                const bool *usable, kd_match_kind *kind)
{
    long best = -1, score = -1;
    kd_match_kind best_kind = KD_MATCH_NONE;
    for (size_t i = 0; i < ix->n; i++) {
        if (!can_use(usable, i))
            continue;
        const char *k = ix->lower[i];
        size_t m = ix->lower_len[i] < low_len ? ix->lower_len[i] : low_len;
        long s;
        kd_match_kind kk;
        if (kd_starts_with(k, low) || kd_starts_with(low, k)) {
            s = (long)m;
            kk = KD_MATCH_PREFIX;
        } else if (strstr(k, low) || strstr(low, k)) {
            s = (long)(m / 2);
            kk = KD_MATCH_SUBSTRING;
        } else {
            continue;
        }
        if (s > score) {
            score = s;
            best = (long)i;
            best_kind = kk;
        }
    }
    /* an empty best key never wins */
    if (best >= 0 && *ix->keys[best]) {
        *kind = best_kind;
        return best;
    }
    return -1;
}

static size_t common_prefix(const char *a, const char *b)
{
    size_t p = 0;
    while (a[p] && a[p] == b[p])
        p++;
    return p;
}

/* step 3: the longest common prefix of compact forms, both >= 96 long */
static long long_prefix(const kd_relaxed_index *ix, const char *c, size_t clen, const bool *usable)
{
    static const char flash[] = "voidcutlassdevicekernelflash";
    long best = -1, score = -1;
    for (size_t i = 0; i < ix->n; i++) {
        if (!can_use(usable, i) || ix->compact_len[i] < 96)
            continue;
        size_t p = common_prefix(c, ix->compact[i]);
        size_t shorter = clen < ix->compact_len[i] ? clen : ix->compact_len[i];
        if (p < 64 || p < (size_t)(0.4 * (double)shorter))
            continue;
        long s = (long)p;
        if (kd_starts_with(c, flash) && kd_starts_with(ix->compact[i], flash))
            s += 32;
        if (s > score) {
            score = s;
            best = (long)i;
        }
    }
    return best >= 0 && *ix->keys[best] ? best : -1;
}

/* step 4: alias token groups; 1000*(group+1) + longest hit token, plus bonus */
static long alias_match(const kd_relaxed_index *ix, const char *c, const kd_alias_scorer *alias,
                        const bool *usable)
{
    const char *const *groups[4];
    size_t ng = kd_alias_groups(c, groups);
    if (!ng || !alias)
        return -1;
    long best = -1, score = -1;
    for (size_t i = 0; i < ix->n; i++) {
        if (!can_use(usable, i))
            continue;
        char *raw = alias->text(alias->ctx, i);
        char *text = raw ? kd_compact_match_text(raw) : NULL;
        free(raw);
        if (!text)
            return -1;
        long s = 0;
        for (size_t g = 0; g < ng; g++) {
            size_t longest = 0;
            bool hit = false;
            for (const char *const *tok = groups[g]; *tok; tok++)
                if (strstr(text, *tok)) {
                    hit = true;
                    if (strlen(*tok) > longest)
                        longest = strlen(*tok);
                }
            if (hit)
                s += 1000 * (long)(g + 1) + (long)longest;
        }
        free(text);
        if (s <= 0)
            continue;
        s += alias->bonus(alias->ctx, i);
        if (s > score) {
            score = s;
            best = (long)i;
        }
    }
    return best >= 0 && *ix->keys[best] ? best : -1;
}

long kd_relaxed_lookup(const kd_relaxed_index *ix, const char *name, const kd_alias_scorer *alias,
                       const bool *usable, kd_match_kind *kind)
{
    kd_match_kind dummy;
    if (!kind)
        kind = &dummy;
    *kind = KD_MATCH_NONE;
    /* exact key: interning the query adds it past the key ids, never below */
    long exact = -1;
    kd_sid id = kd_intern_cstr(ix->exact, name);
    if (id && id <= ix->key_ids && ix->pos_of_id[id] && can_use(usable, ix->pos_of_id[id] - 1))
        exact = (long)ix->pos_of_id[id] - 1;
    if (exact >= 0) {
        *kind = KD_MATCH_EXACT;
        return exact;
    }
    char *low = kd_lower(name);
    char *c = kd_compact_match_text(name);
    long r = -1;
    if (low && c) {
        r = prefix_or_substring(ix, low, kd_utf8_len(low), usable, kind);
        if (r < 0 && strlen(c) >= 96 && (r = long_prefix(ix, c, strlen(c), usable)) >= 0)
            *kind = KD_MATCH_LONG_PREFIX;
        if (r < 0 && (r = alias_match(ix, c, alias, usable)) >= 0)
            *kind = KD_MATCH_ALIAS;
    }
    free(low);
    free(c);
    if (r < 0)
        *kind = KD_MATCH_NONE;
    return r;
}
