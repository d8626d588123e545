/* lookup.c — relaxed name lookup (lookup.h), indexed.
 *
 * The reference (§4 "Relaxed lookup") scores every key against the query and
 * keeps the first key with the strictly greatest score. Here each stage finds
 * that same key from indexes, by reasoning about which keys can score what:
 *
 * Step 2 (lowercased, scores in code points, q = the lowered query):
 *   A  keys that start with q          score len(q)        sorted table + min tree
 *   B  proper prefixes of q            score len(key)      hashes of q's prefixes
 *   C  keys containing q elsewhere     score len(q) // 2   sampled 8-gram postings
 *   D  keys inside q, not at its start score len(key) // 2 anchor 8-grams, short-key hashes
 * Every class yields the first candidate position of its best score; the
 * overall winner is the greatest score, then the smallest position, exactly
 * the reference's "strictly greater replaces" scan. These arguments need the
 * lowered strings to be well-formed UTF-8 (byte prefix = code-point prefix,
 * longer = more code points); the loader guarantees it (kd_utf8_input_valid),
 * and the few keys or queries that are not (only from the API) are scored
 * one by one, exactly as the reference does.
 * Step 3: the compact forms of >= 96 characters, sorted; the best common
 * prefix lies next to the query's place in that order, and a min tree of each
 * key's length threshold skips the keys the 40% rule rejects.
 * Step 4: each key's alias hits and bonus are computed once; per combination
 * of query groups the keys are sorted by score once.
 *
 * Claimed keys (kd_relaxed_index_claim) leave every structure in O(log n).
 *
 * What is still a scan, for inputs the pipeline does not produce in bulk: a
 * query of fewer than 15 bytes looks for the keys containing it one key at a
 * time (the 8-gram postings need 15), and a malformed query is scored
 * against every key. */
#include "config.h"

#include "kerndiff/lookup.h"

#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/intern.h"
#include "kerndiff/text.h"

#define NONE UINT32_MAX
#define GRAM 8    /* bytes per gram: shorter ones (id digits, "void") are too common */
#define STRIDE 8  /* grams of a key are posted at offsets 0, 8, 16, ... */
#define MIN_SAMPLED_QUERY (GRAM + STRIDE - 1) /* shortest query the postings answer */
#define LONG_MIN 96    /* reference §4 step 3: compact forms at least this long */
#define LONG_PREFIX 64 /* ... sharing at least this prefix */
#define N_ALIAS_GROUPS 4

typedef struct {
    uint32_t *v; /* v[1] root, leaves at [leaves, 2 * leaves) */
    size_t leaves;
} mintree;

typedef struct {
    uint32_t samp, anch;
} bucket_start;

typedef struct {
    bool built, failed;
    kd_alias_scorer scorer;
    unsigned char (*hit)[N_ALIAS_GROUPS]; /* longest token hit per group, 0 none */
    long *bonus;
    uint32_t *order[1u << N_ALIAS_GROUPS]; /* per group mask: keys by score */
    size_t count[1u << N_ALIAS_GROUPS];
    size_t cursor[1u << N_ALIAS_GROUPS]; /* entries before it are claimed */
    bool sorted[1u << N_ALIAS_GROUPS];
} alias_cache;

struct kd_relaxed_impl {
    size_t n;
    const char *const *keys;
    bool *claimed;
    /* the step 2 and step 3 structures are built by the first query that
     * needs them: most lookups of the pipeline end at the exact key */
    bool groups_built, long_built, groups_failed, long_failed;
    /* step 1 */
    kd_interner *exact;
    size_t *pos_of_id; /* key id -> first position + 1 */
    /* groups: the distinct lowercased keys (ids of `lower` minus one) */
    kd_interner *lower;
    uint32_t ng;
    uint32_t *group_of; /* key position -> group */
    uint32_t *g_cp;     /* code points */
    bool *g_regular;    /* well-formed UTF-8 */
    uint32_t *g_first;  /* members[g_first[g] .. g_first[g + 1]): positions, ascending */
    uint32_t *members;
    uint32_t *g_cursor; /* members before it are claimed */
    uint32_t *g_hnext;  /* next group with the same hash key */
    kd_i64map by_hash;  /* hash key of (lowered text) -> a group */
    uint32_t *misfits;  /* groups that are not well-formed */
    uint32_t n_misfits;
    /* class A: regular groups in byte order, min first-candidate per range */
    uint32_t *sorted;
    uint32_t n_sorted;
    uint32_t *rank; /* group -> index in sorted, NONE for misfits */
    mintree tree_a;
    unsigned char *has_len; /* has_len[l]: a regular group of l bytes exists */
    size_t max_len;
    /* classes C and D: 8-gram buckets */
    unsigned bucket_bits;
    /* per bucket b, lists start at start[b] and end at start[b + 1] (one
     * cache line for both lists of a gram) */
    bucket_start *start;
    uint32_t *samp; /* (group, offset) pairs at offsets % STRIDE == 0 */
    uint32_t *anch; /* (group, offset) of each group's rarest gram */
    /* step 3 */
    uint32_t n_long;
    uint32_t *long_key;  /* entry -> key position, entries by (compact form, position) */
    const char **long_c; /* entry -> compact form */
    uint32_t *long_len;
    uint32_t *long_entry_of; /* key position -> entry or NONE */
    kd_interner *compact;
    mintree tree_need; /* int(0.4 * len) of unclaimed entries */
    mintree tree_pos;  /* key position of unclaimed entries */
    /* step 4 */
    alias_cache alias;
};

const char *kd_match_kind_name(kd_match_kind k)
{
    static const char *const names[] = {"none",  "exact",      "prefix",   "substring",  "long-prefix", "alias",
                                        "rule",  "renumbered", "template", "retargeted", "replaced"};
    return k <= KD_MATCH_REPLACED ? names[k] : "none";
}

/* ---- alias groups (reference §4 step 4, kernel_alias_token_groups) ---------- */

static const char *const g_flash[] = {"flashattnfwdsm90", "flashattnvarlenfunc",
                                      "vllmflashattnflashattninterface", "vllmfa3cfwd", NULL};
static const char *const g_mha[] = {"maskedmultiheadattentionkernel", "attentioninplace",
                                    "attentionbackendtrtllm", NULL};
static const char *const g_rope[] = {"fusedqknormropekernel", "applyqknormrope",
                                     "modelingqwen3py98applyqknormrope", NULL};
static const char *const g_memset[] = {"memset", NULL};
static const char *const *const alias_tokens[N_ALIAS_GROUPS] = {g_flash, g_mha, g_rope, g_memset};

/* the groups a compact name triggers, as a mask in module order */
static unsigned alias_mask(const char *c)
{
    unsigned m = 0;
    if (strstr(c, "flashattnfwdcombine"))
        m |= 1u;
    if (strstr(c, "kernelmha"))
        m |= 2u;
    if (strstr(c, "applybiasropeupdatekvcachev2"))
        m |= 4u;
    if (kd_starts_with(c, "memset"))
        m |= 8u;
    return m;
}

size_t kd_alias_groups(const char *c, const char *const *out[4])
{
    unsigned m = alias_mask(c);
    size_t n = 0;
    for (unsigned g = 0; g < N_ALIAS_GROUPS; g++)
        if (m & (1u << g))
            out[n++] = alias_tokens[g];
    return n;
}

/* ---- small helpers ------------------------------------------------------------ */

static bool is_cont(unsigned char b) { return (b & 0xC0) == 0x80; }

/* well-formed as kd_utf8_decode reads it (every sequence complete); *cp gets
 * kd_utf8_len's count */
static bool utf8_regular(const char *s, size_t len, size_t *cp)
{
    size_t pos = 0, count = 0;
    uint32_t c;
    while (pos < len) {
        unsigned char b = (unsigned char)s[pos];
        if (b < 0x80) {
            pos++;
        } else {
            size_t k = kd_utf8_decode(s + pos, len - pos, &c);
            if (c == KD_UTF8_INVALID)
                return false;
            pos += k;
        }
        count++;
    }
    *cp = count;
    return true;
}

/* polynomial hash over bytes (mod 2^64): prefix hashes make every substring's
 * hash O(1); a collision only costs a memcmp, never a wrong answer */
#define HASH_BASE 0x100000001B3ull

static uint64_t poly_hash(const char *s, size_t len)
{
    uint64_t h = 0;
    for (size_t i = 0; i < len; i++)
        h = h * HASH_BASE + (unsigned char)s[i] + 1;
    return h;
}

static int64_t hash_key(uint64_t h, size_t len) { return (int64_t)kd_mix64(h ^ (len * 0x9E3779B97F4A7C15ull)); }

static uint64_t gram_at(const char *s)
{
    uint64_t g;
    memcpy(&g, s, GRAM);
    return g;
}

static uint32_t bucket_of(const kd_relaxed_impl *m, uint64_t gram)
{
    return (uint32_t)(kd_mix64(gram) >> (64 - m->bucket_bits));
}

static const char *gstr(const kd_relaxed_impl *m, uint32_t g) { return kd_str(m->lower, g + 1); }
static size_t glen(const kd_relaxed_impl *m, uint32_t g) { return kd_str_len(m->lower, g + 1); }

static bool candidate(const kd_relaxed_impl *m, uint32_t pos, const bool *usable)
{
    return !m->claimed[pos] && (!usable || usable[pos]);
}

/* the group's first candidate position, or NONE */
static uint32_t group_first(const kd_relaxed_impl *m, uint32_t g, const bool *usable)
{
    for (uint32_t k = m->g_cursor[g]; k < m->g_first[g + 1]; k++)
        if (candidate(m, m->members[k], usable))
            return m->members[k];
    return NONE;
}

/* ---- min trees ------------------------------------------------------------------ */

static bool tree_init(mintree *t, size_t n)
{
    t->leaves = 1;
    while (t->leaves < n)
        t->leaves *= 2;
    t->v = malloc(2 * t->leaves * sizeof *t->v);
    if (!t->v)
        return false;
    for (size_t i = 0; i < 2 * t->leaves; i++)
        t->v[i] = NONE;
    return true;
}

static void tree_build(mintree *t)
{
    for (size_t i = t->leaves - 1; i >= 1; i--)
        t->v[i] = t->v[2 * i] < t->v[2 * i + 1] ? t->v[2 * i] : t->v[2 * i + 1];
}

static void tree_set(mintree *t, size_t i, uint32_t v)
{
    i += t->leaves;
    t->v[i] = v;
    for (i /= 2; i >= 1; i /= 2) {
        uint32_t m = t->v[2 * i] < t->v[2 * i + 1] ? t->v[2 * i] : t->v[2 * i + 1];
        if (t->v[i] == m)
            break;
        t->v[i] = m;
    }
}

static uint32_t tree_min(const mintree *t, size_t lo, size_t hi)
{
    uint32_t m = NONE;
    for (lo += t->leaves, hi += t->leaves; lo < hi; lo /= 2, hi /= 2) {
        if (lo & 1) {
            if (t->v[lo] < m)
                m = t->v[lo];
            lo++;
        }
        if (hi & 1) {
            hi--;
            if (t->v[hi] < m)
                m = t->v[hi];
        }
    }
    return m;
}

/* ---- build ------------------------------------------------------------------------ */

static bool build_exact(kd_relaxed_impl *m, const char *const *keys)
{
    m->exact = kd_interner_new();
    m->pos_of_id = calloc(m->n + 1, sizeof *m->pos_of_id);
    if (!m->exact || !m->pos_of_id)
        return false;
    for (size_t i = 0; i < m->n; i++) {
        uint32_t before = kd_interner_count(m->exact);
        kd_sid id = kd_intern_cstr(m->exact, keys[i]);
        if (!id)
            return false;
        if (kd_interner_count(m->exact) != before) /* first position of a key */
            m->pos_of_id[id] = i + 1;
    }
    return true;
}

static bool build_groups(kd_relaxed_impl *m, const char *const *keys)
{
    size_t n = m->n;
    m->lower = kd_interner_new();
    m->group_of = malloc((n ? n : 1) * sizeof *m->group_of);
    if (!m->lower || !m->group_of)
        return false;
    for (size_t i = 0; i < n; i++) {
        char *low = kd_lower(keys[i]);
        kd_sid id = low ? kd_intern_cstr(m->lower, low) : 0;
        free(low);
        if (!id)
            return false;
        m->group_of[i] = id - 1;
    }
    uint32_t ng = m->ng = kd_interner_count(m->lower);
    m->g_cp = malloc((ng ? ng : 1) * sizeof *m->g_cp);
    m->g_regular = malloc((ng ? ng : 1) * sizeof *m->g_regular);
    m->g_first = calloc((size_t)ng + 1, sizeof *m->g_first);
    m->members = malloc((n ? n : 1) * sizeof *m->members);
    m->g_cursor = malloc((ng ? ng : 1) * sizeof *m->g_cursor);
    m->g_hnext = malloc((ng ? ng : 1) * sizeof *m->g_hnext);
    m->misfits = malloc((ng ? ng : 1) * sizeof *m->misfits);
    if (!m->g_cp || !m->g_regular || !m->g_first || !m->members || !m->g_cursor || !m->g_hnext ||
        !m->misfits)
        return false;
    for (size_t i = 0; i < n; i++)
        m->g_first[m->group_of[i] + 1]++;
    for (uint32_t g = 0; g < ng; g++)
        m->g_first[g + 1] += m->g_first[g];
    for (uint32_t g = 0; g < ng; g++)
        m->g_cursor[g] = m->g_first[g];
    for (size_t i = 0; i < n; i++) /* ascending positions within each group */
        m->members[m->g_cursor[m->group_of[i]]++] = (uint32_t)i;
    for (uint32_t g = 0; g < ng; g++)
        m->g_cursor[g] = m->g_first[g];
    for (uint32_t g = 0; g < ng; g++) {
        size_t cp = 0, len = glen(m, g);
        m->g_regular[g] = utf8_regular(gstr(m, g), len, &cp);
        m->g_cp[g] = (uint32_t)(m->g_regular[g] ? cp : kd_utf8_len(gstr(m, g)));
        m->g_hnext[g] = NONE;
        if (!m->g_regular[g]) {
            m->misfits[m->n_misfits++] = g;
            continue;
        }
        if (len > m->max_len)
            m->max_len = len;
        int64_t key = hash_key(poly_hash(gstr(m, g), len), len), head;
        if (kd_i64map_get(&m->by_hash, key, &head))
            m->g_hnext[g] = (uint32_t)head;
        if (!kd_i64map_put(&m->by_hash, key, g))
            return false;
    }
    m->has_len = calloc(m->max_len + 1, 1);
    if (!m->has_len)
        return false;
    for (uint32_t g = 0; g < ng; g++)
        if (m->g_regular[g])
            m->has_len[glen(m, g)] = 1;
    return true;
}

typedef struct {
    const char *s;
    uint32_t id;
} str_id;

static int cmp_str_id(const void *pa, const void *pb)
{
    const str_id *a = pa, *b = pb;
    int c = strcmp(a->s, b->s);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

static bool build_sorted(kd_relaxed_impl *m)
{
    uint32_t ng = m->ng;
    str_id *tmp = malloc((ng ? ng : 1) * sizeof *tmp);
    m->sorted = malloc((ng ? ng : 1) * sizeof *m->sorted);
    m->rank = malloc((ng ? ng : 1) * sizeof *m->rank);
    if (!tmp || !m->sorted || !m->rank || !tree_init(&m->tree_a, ng ? ng : 1)) {
        free(tmp);
        return false;
    }
    uint32_t k = 0;
    for (uint32_t g = 0; g < ng; g++) {
        m->rank[g] = NONE;
        if (m->g_regular[g])
            tmp[k++] = (str_id){gstr(m, g), g};
    }
    qsort(tmp, k, sizeof *tmp, cmp_str_id);
    m->n_sorted = k;
    for (uint32_t r = 0; r < k; r++) {
        m->sorted[r] = tmp[r].id;
        m->rank[tmp[r].id] = r;
        m->tree_a.v[m->tree_a.leaves + r] = m->members[m->g_first[tmp[r].id]];
    }
    tree_build(&m->tree_a);
    free(tmp);
    return true;
}

/* CSR lists: counts in on entry, first slots out; the last entry the total */
static void csr_prefix(bucket_start *st, size_t buckets)
{
    uint32_t samp = 0, anch = 0;
    for (size_t b = 0; b <= buckets; b++) {
        bucket_start c = st[b];
        st[b] = (bucket_start){samp, anch};
        samp += c.samp;
        anch += c.anch;
    }
}

/* filling with start[b]++ leaves start[b] at bucket b's end: shift back */
static void csr_unshift(bucket_start *st, size_t buckets)
{
    memmove(st + 1, st, buckets * sizeof *st);
    st[0] = (bucket_start){0, 0};
}

static bool build_grams(kd_relaxed_impl *m)
{
    size_t total = 0;
    for (uint32_t g = 0; g < m->ng; g++)
        if (m->g_regular[g] && glen(m, g) >= GRAM)
            total += glen(m, g) - GRAM + 1;
    /* about one bucket per 16 grams: merged buckets only cost verifications */
    m->bucket_bits = 10;
    while (m->bucket_bits < 22 && ((size_t)1 << m->bucket_bits) * 16 < total)
        m->bucket_bits++;
    size_t nb = (size_t)1 << m->bucket_bits;
    uint32_t *freq = calloc(nb, sizeof *freq);
    uint32_t *anch_off = malloc((m->ng ? m->ng : 1) * sizeof *anch_off);
    m->start = calloc(nb + 1, sizeof *m->start);
    bool ok = freq && anch_off && m->start;
    size_t n_samp = 0, n_anch = 0;
    for (uint32_t g = 0; ok && g < m->ng; g++) {
        size_t len = glen(m, g);
        if (!m->g_regular[g] || len < GRAM)
            continue;
        const char *s = gstr(m, g);
        for (size_t off = 0; off + GRAM <= len; off++) {
            uint32_t b = bucket_of(m, gram_at(s + off));
            if (freq[b] < UINT32_MAX)
                freq[b]++;
            if (off % STRIDE == 0) {
                m->start[b].samp++;
                n_samp++;
            }
        }
    }
    /* each group's anchor: its rarest gram, the first one on ties */
    for (uint32_t g = 0; ok && g < m->ng; g++) {
        size_t len = glen(m, g);
        anch_off[g] = NONE;
        if (!m->g_regular[g] || len < GRAM)
            continue;
        const char *s = gstr(m, g);
        uint32_t best = NONE, best_b = 0;
        for (size_t off = 0; off + GRAM <= len; off++) {
            uint32_t b = bucket_of(m, gram_at(s + off));
            if (anch_off[g] == NONE || freq[b] < best) {
                best = freq[b];
                best_b = b;
                anch_off[g] = (uint32_t)off;
            }
        }
        m->start[best_b].anch++;
        n_anch++;
    }
    if (ok && (n_samp > UINT32_MAX / 2 || n_anch > UINT32_MAX / 2))
        ok = false;
    if (ok) {
        csr_prefix(m->start, nb);
        m->samp = malloc((2 * n_samp + 1) * sizeof *m->samp);
        m->anch = malloc((2 * n_anch + 1) * sizeof *m->anch);
        ok = m->samp && m->anch;
    }
    if (ok) {
        for (uint32_t g = 0; g < m->ng; g++) {
            size_t len = glen(m, g);
            if (!m->g_regular[g] || len < GRAM)
                continue;
            const char *s = gstr(m, g);
            for (size_t off = 0; off + GRAM <= len; off += STRIDE) {
                uint32_t b = bucket_of(m, gram_at(s + off));
                uint32_t at = m->start[b].samp++;
                m->samp[2 * at] = g;
                m->samp[2 * at + 1] = (uint32_t)off;
            }
            uint32_t b = bucket_of(m, gram_at(s + anch_off[g]));
            uint32_t at = m->start[b].anch++;
            m->anch[2 * at] = g;
            m->anch[2 * at + 1] = anch_off[g];
        }
        csr_unshift(m->start, nb);
    }
    free(freq);
    free(anch_off);
    return ok;
}

typedef struct {
    const char *c;
    uint32_t pos;
} long_entry;

static int cmp_long_entry(const void *pa, const void *pb)
{
    const long_entry *a = pa, *b = pb;
    int c = strcmp(a->c, b->c);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

static uint32_t need_of(size_t len) { return (uint32_t)(size_t)(0.4 * (double)len); }

static bool build_long(kd_relaxed_impl *m, const char *const *keys)
{
    size_t n = m->n;
    m->compact = kd_interner_new();
    m->long_entry_of = malloc((n ? n : 1) * sizeof *m->long_entry_of);
    long_entry *tmp = malloc((n ? n : 1) * sizeof *tmp);
    bool ok = m->compact && m->long_entry_of && tmp;
    uint32_t k = 0;
    for (size_t i = 0; ok && i < n; i++) {
        m->long_entry_of[i] = NONE;
        char *c = kd_compact_match_text(keys[i]);
        ok = c != NULL;
        size_t len = ok ? strlen(c) : 0;
        if (ok && len >= LONG_MIN) {
            kd_sid id = kd_intern(m->compact, c, len);
            ok = id != 0;
            tmp[k++] = (long_entry){kd_str(m->compact, id), (uint32_t)i};
        }
        free(c);
    }
    if (ok) {
        qsort(tmp, k, sizeof *tmp, cmp_long_entry);
        m->n_long = k;
        m->long_key = malloc((k ? k : 1) * sizeof *m->long_key);
        m->long_c = malloc((k ? k : 1) * sizeof *m->long_c);
        m->long_len = malloc((k ? k : 1) * sizeof *m->long_len);
        ok = m->long_key && m->long_c && m->long_len && tree_init(&m->tree_need, k ? k : 1) &&
             tree_init(&m->tree_pos, k ? k : 1);
    }
    for (uint32_t e = 0; ok && e < k; e++) {
        m->long_key[e] = tmp[e].pos;
        m->long_c[e] = tmp[e].c;
        m->long_len[e] = (uint32_t)strlen(tmp[e].c);
        m->long_entry_of[tmp[e].pos] = e;
        m->tree_need.v[m->tree_need.leaves + e] = need_of(m->long_len[e]);
        m->tree_pos.v[m->tree_pos.leaves + e] = tmp[e].pos;
    }
    if (ok) {
        tree_build(&m->tree_need);
        tree_build(&m->tree_pos);
    }
    free(tmp);
    return ok;
}

static void alias_cache_free(alias_cache *a)
{
    free(a->hit);
    free(a->bonus);
    for (size_t i = 0; i < (1u << N_ALIAS_GROUPS); i++)
        free(a->order[i]);
    memset(a, 0, sizeof *a);
}

static void impl_free(kd_relaxed_impl *m)
{
    if (!m)
        return;
    free(m->claimed);
    kd_interner_free(m->exact);
    free(m->pos_of_id);
    kd_interner_free(m->lower);
    free(m->group_of);
    free(m->g_cp);
    free(m->g_regular);
    free(m->g_first);
    free(m->members);
    free(m->g_cursor);
    free(m->g_hnext);
    kd_i64map_free(&m->by_hash);
    free(m->misfits);
    free(m->sorted);
    free(m->rank);
    free(m->tree_a.v);
    free(m->has_len);
    free(m->start);
    free(m->samp);
    free(m->anch);
    free(m->long_key);
    free(m->long_c);
    free(m->long_len);
    free(m->long_entry_of);
    kd_interner_free(m->compact);
    free(m->tree_need.v);
    free(m->tree_pos.v);
    alias_cache_free(&m->alias);
    free(m);
}

static void apply_claim(kd_relaxed_impl *m, size_t pos);

/* step 2's structures, with the claims made so far; false on OOM */
static bool ensure_groups(kd_relaxed_impl *m)
{
    if (!m->groups_built && !m->groups_failed) {
        m->groups_built = build_groups(m, m->keys) && build_sorted(m) && build_grams(m);
        m->groups_failed = !m->groups_built;
        for (size_t i = 0; m->groups_built && i < m->n; i++)
            if (m->claimed[i])
                apply_claim(m, i);
    }
    return m->groups_built;
}

/* step 3's structures, with the claims made so far; false on OOM */
static bool ensure_long(kd_relaxed_impl *m)
{
    if (!m->long_built && !m->long_failed) {
        m->long_built = build_long(m, m->keys);
        m->long_failed = !m->long_built;
        for (size_t i = 0; m->long_built && i < m->n; i++)
            if (m->claimed[i])
                apply_claim(m, i);
    }
    return m->long_built;
}

bool kd_relaxed_index_build(kd_relaxed_index *ix, const char *const *keys, size_t n)
{
    memset(ix, 0, sizeof *ix);
    if (n >= NONE) /* positions are 32-bit */
        return false;
    kd_relaxed_impl *m = calloc(1, sizeof *m);
    ix->keys = malloc((n ? n : 1) * sizeof *ix->keys);
    if (!m || !ix->keys) {
        free(m);
        free(ix->keys);
        ix->keys = NULL;
        return false;
    }
    ix->n = m->n = n;
    ix->impl = m;
    for (size_t i = 0; i < n; i++)
        ix->keys[i] = keys[i];
    m->keys = ix->keys;
    kd_i64map_init(&m->by_hash);
    m->claimed = calloc(n ? n : 1, sizeof *m->claimed);
    if (!m->claimed || !build_exact(m, keys)) {
        kd_relaxed_index_free(ix);
        return false;
    }
    return true;
}

void kd_relaxed_index_free(kd_relaxed_index *ix)
{
    impl_free(ix->impl);
    free(ix->keys);
    memset(ix, 0, sizeof *ix);
}

void kd_relaxed_index_claim(kd_relaxed_index *ix, size_t pos)
{
    kd_relaxed_impl *m = ix->impl;
    if (!m || pos >= m->n || m->claimed[pos])
        return;
    m->claimed[pos] = true;
    apply_claim(m, pos);
}

/* takes a claimed key out of the structures built so far */
static void apply_claim(kd_relaxed_impl *m, size_t pos)
{
    if (m->groups_built) {
        uint32_t g = m->group_of[pos];
        uint32_t before = m->g_cursor[g];
        while (m->g_cursor[g] < m->g_first[g + 1] && m->claimed[m->members[m->g_cursor[g]]])
            m->g_cursor[g]++;
        if (m->g_cursor[g] != before && m->rank[g] != NONE)
            tree_set(&m->tree_a, m->rank[g],
                     m->g_cursor[g] < m->g_first[g + 1] ? m->members[m->g_cursor[g]] : NONE);
    }
    if (m->long_built && m->long_entry_of[pos] != NONE) {
        tree_set(&m->tree_need, m->long_entry_of[pos], NONE);
        tree_set(&m->tree_pos, m->long_entry_of[pos], NONE);
    }
}

/* ---- step 2: prefix or substring ---------------------------------------------------- */

typedef struct {
    long score;
    uint32_t pos;
    kd_match_kind kind;
} pick;

/* the reference keeps the first of the greatest scores: the smallest position */
static void consider(pick *b, long score, uint32_t pos, kd_match_kind kind)
{
    if (pos == NONE)
        return;
    if (score > b->score || (score == b->score && pos < b->pos)) {
        b->score = score;
        b->pos = pos;
        b->kind = kind;
    }
}

/* one key against the query, as the reference scores it (reference §4 step 2) */
static void consider_pair(pick *b, const kd_relaxed_impl *m, uint32_t g, const char *q, size_t q_cp,
                          const bool *usable)
{
    uint32_t pos = group_first(m, g, usable);
    if (pos == NONE)
        return;
    const char *k = gstr(m, g);
    size_t mn = m->g_cp[g] < q_cp ? m->g_cp[g] : q_cp;
    if (kd_starts_with(k, q) || kd_starts_with(q, k))
        consider(b, (long)mn, pos, KD_MATCH_PREFIX);
    else if (strstr(k, q) || strstr(q, k))
        consider(b, (long)(mn / 2), pos, KD_MATCH_SUBSTRING);
}

/* the query's lowered text with prefix hashes and code-point counts */
typedef struct {
    const char *s;
    size_t len, cp;
    uint64_t *h;    /* h[j]: hash of s[0, j) */
    uint64_t *pw;   /* HASH_BASE^j */
    uint32_t *cpre; /* code points in s[0, j) */
} query;

static uint64_t sub_hash(const query *q, size_t i, size_t j) { return q->h[j] - q->h[i] * q->pw[j - i]; }

/* regular groups whose text is s[i, j) of the query */
static uint32_t hash_head(const kd_relaxed_impl *m, const query *q, size_t i, size_t j)
{
    int64_t head;
    if (!kd_i64map_get(&m->by_hash, hash_key(sub_hash(q, i, j), j - i), &head))
        return NONE;
    return (uint32_t)head;
}

static bool is_boundary(const query *q, size_t j) { return j == 0 || j == q->len || !is_cont((unsigned char)q->s[j]); }

/* class A: keys starting with q, score len(q) */
static void class_a(pick *b, const kd_relaxed_impl *m, const query *q, const bool *usable)
{
    size_t lo = 0, hi = m->n_sorted;
    while (lo < hi) { /* first >= q */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(gstr(m, m->sorted[mid]), q->s) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo;
    hi = m->n_sorted;
    while (lo < hi) { /* first not starting with q */
        size_t mid = lo + (hi - lo) / 2;
        if (strncmp(gstr(m, m->sorted[mid]), q->s, q->len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (first == lo)
        return;
    if (!usable) {
        consider(b, (long)q->cp, tree_min(&m->tree_a, first, lo), KD_MATCH_PREFIX);
        return;
    }
    for (size_t r = first; r < lo; r++)
        consider(b, (long)q->cp, group_first(m, m->sorted[r], usable), KD_MATCH_PREFIX);
}

/* class B: the longest proper prefix of q that is a candidate key */
static void class_b(pick *b, const kd_relaxed_impl *m, const query *q, const bool *usable)
{
    for (size_t j = q->len; j-- > 0;) {
        if ((long)q->cpre[j] < b->score)
            return; /* shorter prefixes score less */
        if (j > m->max_len || !m->has_len[j] || !is_boundary(q, j))
            continue;
        for (uint32_t g = hash_head(m, q, 0, j); g != NONE; g = m->g_hnext[g]) {
            if (glen(m, g) != j)
                continue;
            uint32_t pos = group_first(m, g, usable);
            if (pos != NONE && memcmp(gstr(m, g), q->s, j) == 0) {
                consider(b, (long)q->cpre[j], pos, KD_MATCH_PREFIX);
                return;
            }
        }
    }
}

/* class C: the first candidate key containing q (not at its start: those are A) */
static uint32_t class_c(const kd_relaxed_impl *m, const query *q, const bool *usable)
{
    uint32_t best = NONE;
    if (q->len < MIN_SAMPLED_QUERY) {
        for (uint32_t r = 0; r < m->n_sorted; r++) {
            uint32_t g = m->sorted[r];
            if (glen(m, g) <= q->len)
                continue;
            uint32_t pos = group_first(m, g, usable);
            if (pos < best && strstr(gstr(m, g), q->s))
                best = pos;
        }
        return best;
    }
    /* an occurrence at offset t of a key covers one posted offset for each
     * residue of t mod STRIDE: look up the rarest of q's grams per residue */
    for (size_t o = 0; o < STRIDE; o++) {
        size_t qoff = o, fewest = SIZE_MAX;
        for (size_t at = o; at + GRAM <= q->len; at += STRIDE) {
            uint32_t bk = bucket_of(m, gram_at(q->s + at));
            size_t c = m->start[bk + 1].samp - m->start[bk].samp;
            if (c < fewest) {
                fewest = c;
                qoff = at;
            }
        }
        uint32_t bk = bucket_of(m, gram_at(q->s + qoff));
        for (uint32_t e = m->start[bk].samp; e < m->start[bk + 1].samp; e++) {
            uint32_t g = m->samp[2 * e], off = m->samp[2 * e + 1];
            if (off < qoff || off - qoff + q->len > glen(m, g))
                continue;
            uint32_t pos = group_first(m, g, usable);
            if (pos < best && memcmp(gstr(m, g) + (off - qoff), q->s, q->len) == 0)
                best = pos;
        }
    }
    return best;
}

/* a candidate key found inside q at start s (> 0): class D unless it is also a
 * prefix of q (then it is class B and scores its full length) */
static void consider_inner(pick *b, const kd_relaxed_impl *m, const query *q, uint32_t g, size_t s,
                           const bool *usable)
{
    size_t len = glen(m, g);
    if ((long)(m->g_cp[g] / 2) < b->score || s + len > q->len)
        return;
    uint32_t pos = group_first(m, g, usable);
    if (pos == NONE || (pos >= b->pos && (long)(m->g_cp[g] / 2) == b->score))
        return;
    if (memcmp(q->s + s, gstr(m, g), len) != 0 || memcmp(q->s, gstr(m, g), len) == 0)
        return;
    consider(b, (long)(m->g_cp[g] / 2), pos, KD_MATCH_SUBSTRING);
}

/* class D: keys inside q, score len(key) // 2 */
static void class_d(pick *b, const kd_relaxed_impl *m, const query *q, const bool *usable)
{
    /* keys shorter than a gram: every short substring of q */
    for (size_t len = 1; len < GRAM && len <= m->max_len; len++) {
        if (!m->has_len[len])
            continue;
        for (size_t s = 1; s + len <= q->len; s++) {
            if (!is_boundary(q, s) || !is_boundary(q, s + len))
                continue;
            for (uint32_t g = hash_head(m, q, s, s + len); g != NONE; g = m->g_hnext[g])
                if (glen(m, g) == len)
                    consider_inner(b, m, q, g, s, usable);
        }
    }
    /* longer keys: through the gram each is anchored at */
    for (size_t t = 0; t + GRAM <= q->len; t++) {
        uint32_t bk = bucket_of(m, gram_at(q->s + t));
        for (uint32_t e = m->start[bk].anch; e < m->start[bk + 1].anch; e++) {
            uint32_t g = m->anch[2 * e], a = m->anch[2 * e + 1];
            if (a < t)
                consider_inner(b, m, q, g, t - a, usable);
        }
    }
}

static bool query_init(query *q, const char *low)
{
    q->s = low;
    q->len = strlen(low);
    q->h = malloc((q->len + 1) * sizeof *q->h);
    q->pw = malloc((q->len + 1) * sizeof *q->pw);
    q->cpre = malloc((q->len + 1) * sizeof *q->cpre);
    if (!q->h || !q->pw || !q->cpre)
        return false;
    q->h[0] = 0;
    q->pw[0] = 1;
    q->cpre[0] = 0;
    for (size_t j = 0; j < q->len; j++) {
        q->h[j + 1] = q->h[j] * HASH_BASE + (unsigned char)low[j] + 1;
        q->pw[j + 1] = q->pw[j] * HASH_BASE;
        q->cpre[j + 1] = q->cpre[j] + !is_cont((unsigned char)low[j]);
    }
    return true;
}

static void query_free(query *q)
{
    free(q->h);
    free(q->pw);
    free(q->cpre);
}

/* reference §4 step 2: prefix (min len) beats substring (min len // 2) */
static long prefix_or_substring(const kd_relaxed_impl *m, const char *const *keys, const char *low,
                                const bool *usable, kd_match_kind *kind)
{
    pick b = {-1, NONE, KD_MATCH_NONE};
    size_t len = strlen(low), q_cp = 0;
    if (!utf8_regular(low, len, &q_cp)) {
        /* not well-formed: the reference's scan, one key at a time */
        q_cp = kd_utf8_len(low);
        for (uint32_t g = 0; g < m->ng; g++)
            consider_pair(&b, m, g, low, q_cp, usable);
    } else {
        for (uint32_t i = 0; i < m->n_misfits; i++)
            consider_pair(&b, m, m->misfits[i], low, q_cp, usable);
        query q;
        if (!query_init(&q, low)) {
            query_free(&q);
            return -1;
        }
        q.cp = q_cp;
        class_a(&b, m, &q, usable);
        /* a non-empty query: every other class scores below len(q) */
        if (q.len > 0 && b.score < (long)q.cp) {
            class_b(&b, m, &q, usable);
            if ((long)(q.cp / 2) >= b.score)
                consider(&b, (long)(q.cp / 2), class_c(m, &q, usable), KD_MATCH_SUBSTRING);
            if ((long)((q.cp - 1) / 2) >= b.score)
                class_d(&b, m, &q, usable);
        }
        query_free(&q);
    }
    /* an empty best key never wins */
    if (b.pos == NONE || !*keys[b.pos])
        return -1;
    *kind = b.kind;
    return (long)b.pos;
}

/* ---- step 3: long common prefix -------------------------------------------------------- */

typedef struct {
    const kd_relaxed_impl *m;
    const char *c;
    size_t clen, t0; /* t0 = int(0.4 * len(query)) */
    const bool *usable;
    bool stop;
} long_query;

static size_t lcp_entry(const long_query *lq, uint32_t e)
{
    const char *a = lq->c, *b = lq->m->long_c[e];
    size_t p = 0;
    while (a[p] && a[p] == b[p])
        p++;
    return p;
}

/* reference §4 step 3: p >= 64 and p >= int(0.4 * shorter length) */
static bool accepted(const long_query *lq, uint32_t e, size_t p)
{
    size_t elen = lq->m->long_len[e];
    size_t shorter = lq->clen < elen ? lq->clen : elen;
    return p >= LONG_PREFIX && !(p < (size_t)(0.4 * (double)shorter));
}

static bool entry_candidate(const long_query *lq, uint32_t e)
{
    return candidate(lq->m, lq->m->long_key[e], lq->usable);
}

/* The first accepted candidate entry at or after `from` (right) or before it
 * (left, scanning down), in the subtree node = [nlo, nhi). Common prefixes
 * with the query only shrink away from its place, so the edge nearest to it
 * bounds a subtree: below 64 ends the search, and under t0 a subtree whose
 * smallest length threshold exceeds that bound holds no accepted entry. */
static uint32_t find_side(long_query *lq, size_t node, size_t nlo, size_t nhi, size_t from, bool right,
                          size_t *lcp)
{
    const kd_relaxed_impl *m = lq->m;
    size_t lo = right ? (nlo > from ? nlo : from) : nlo;
    size_t hi = right ? nhi : (nhi < from ? nhi : from);
    if (hi > m->n_long)
        hi = m->n_long;
    if (lq->stop || lo >= hi || m->tree_pos.v[node] == NONE)
        return NONE;
    uint32_t edge = (uint32_t)(right ? lo : hi - 1);
    size_t bound = lcp_entry(lq, edge);
    if (bound < LONG_PREFIX) {
        lq->stop = true;
        return NONE;
    }
    if (bound < lq->t0 && m->tree_need.v[node] > bound)
        return NONE;
    if (nhi - nlo == 1) {
        if (entry_candidate(lq, edge) && accepted(lq, edge, bound)) {
            *lcp = bound;
            return edge;
        }
        return NONE;
    }
    size_t mid = nlo + (nhi - nlo) / 2;
    uint32_t r;
    if (right) {
        r = find_side(lq, 2 * node, nlo, mid, from, right, lcp);
        if (r == NONE)
            r = find_side(lq, 2 * node + 1, mid, nhi, from, right, lcp);
    } else {
        r = find_side(lq, 2 * node + 1, mid, nhi, from, right, lcp);
        if (r == NONE)
            r = find_side(lq, 2 * node, nlo, mid, from, right, lcp);
    }
    return r;
}

/* the smallest key position among accepted candidates in [lo, hi) whose
 * common prefix is exactly p (the best one) */
static void min_pos_at(const long_query *lq, size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi,
                       size_t p, uint32_t *best)
{
    const kd_relaxed_impl *m = lq->m;
    if (nhi <= lo || nlo >= hi || m->tree_pos.v[node] >= *best)
        return;
    if (p < lq->t0 && m->tree_need.v[node] > p)
        return;
    if (nhi - nlo == 1) {
        uint32_t e = (uint32_t)nlo;
        if (entry_candidate(lq, e) && lcp_entry(lq, e) == p && accepted(lq, e, p))
            *best = m->long_key[e];
        return;
    }
    size_t mid = nlo + (nhi - nlo) / 2;
    bool left_first = m->tree_pos.v[2 * node] <= m->tree_pos.v[2 * node + 1];
    min_pos_at(lq, left_first ? 2 * node : 2 * node + 1, left_first ? nlo : mid, left_first ? mid : nhi, lo,
               hi, p, best);
    min_pos_at(lq, left_first ? 2 * node + 1 : 2 * node, left_first ? mid : nlo, left_first ? nhi : mid, lo,
               hi, p, best);
}

/* first entry in [lo, hi) whose compact form does not start with c[0, p) when
 * `after`, else the first that is >= c[0, p) */
static size_t prefix_bound(const long_query *lq, size_t p, bool after)
{
    size_t lo = 0, hi = lq->m->n_long;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(lq->m->long_c[mid], lq->c, p);
        if (after ? c <= 0 : c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* step 3: the longest common prefix of compact forms, both >= 96 long. The
 * +32 of two flash-attention names never reorders: an accepted key shares the
 * first 64 characters, so it starts with the 28-character marker exactly when
 * the query does. */
static long long_prefix(const kd_relaxed_impl *m, const char *c, size_t clen, const bool *usable)
{
    if (!m->n_long)
        return -1;
    long_query lq = {m, c, clen, (size_t)(0.4 * (double)clen), usable, false};
    size_t ins = 0, hi = m->n_long;
    while (ins < hi) {
        size_t mid = ins + (hi - ins) / 2;
        if (strcmp(m->long_c[mid], c) < 0)
            ins = mid + 1;
        else
            hi = mid;
    }
    size_t lcp_r = 0, lcp_l = 0;
    uint32_t r = find_side(&lq, 1, 0, m->tree_pos.leaves, ins, true, &lcp_r);
    lq.stop = false;
    uint32_t l = find_side(&lq, 1, 0, m->tree_pos.leaves, ins, false, &lcp_l);
    if (r == NONE && l == NONE)
        return -1;
    size_t p = r == NONE ? lcp_l : l == NONE ? lcp_r : lcp_r > lcp_l ? lcp_r : lcp_l;
    uint32_t best = NONE;
    min_pos_at(&lq, 1, 0, m->tree_pos.leaves, prefix_bound(&lq, p, false), prefix_bound(&lq, p, true), p,
               &best);
    return best == NONE ? -1 : (long)best;
}

/* ---- step 4: alias token groups ------------------------------------------------------------ */

static bool same_scorer(const kd_alias_scorer *a, const kd_alias_scorer *b)
{
    return a->text == b->text && a->bonus == b->bonus && a->ctx == b->ctx;
}

/* every key's longest token hit per group and its bonus, once per scorer */
static bool alias_prepare(kd_relaxed_impl *m, const kd_alias_scorer *sc)
{
    alias_cache *a = &m->alias;
    if (a->built && same_scorer(&a->scorer, sc))
        return !a->failed;
    alias_cache_free(a);
    a->built = true;
    a->scorer = *sc;
    a->hit = calloc(m->n ? m->n : 1, sizeof *a->hit);
    a->bonus = calloc(m->n ? m->n : 1, sizeof *a->bonus);
    if (!a->hit || !a->bonus)
        return !(a->failed = true);
    for (size_t i = 0; i < m->n; i++) {
        char *raw = sc->text(sc->ctx, i);
        char *text = raw ? kd_compact_match_text(raw) : NULL;
        free(raw);
        if (!text)
            return !(a->failed = true);
        for (unsigned g = 0; g < N_ALIAS_GROUPS; g++)
            for (const char *const *tok = alias_tokens[g]; *tok; tok++)
                if (strlen(*tok) > a->hit[i][g] && strstr(text, *tok))
                    a->hit[i][g] = (unsigned char)strlen(*tok);
        free(text);
        bool any = false;
        for (unsigned g = 0; g < N_ALIAS_GROUPS; g++)
            any = any || a->hit[i][g];
        if (any) /* the reference asks for the bonus of hits only */
            a->bonus[i] = sc->bonus(sc->ctx, i);
    }
    return true;
}

typedef struct {
    long score;
    uint32_t pos;
} scored;

static int cmp_scored(const void *pa, const void *pb)
{
    const scored *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* the keys a query with these groups can pick, best first: group number j
 * (in the query's own list) adds 1000 * (j + 1) + its longest hit token */
static bool alias_order(kd_relaxed_impl *m, unsigned mask)
{
    alias_cache *a = &m->alias;
    if (a->sorted[mask])
        return true;
    scored *tmp = malloc((m->n ? m->n : 1) * sizeof *tmp);
    if (!tmp)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        long s = 0;
        unsigned j = 0;
        for (unsigned g = 0; g < N_ALIAS_GROUPS; g++) {
            if (!(mask & (1u << g)))
                continue;
            j++;
            if (a->hit[i][g])
                s += 1000 * (long)j + a->hit[i][g];
        }
        if (s <= 0)
            continue;
        s += a->bonus[i];
        if (s > -1) /* the reference's best score starts at -1 */
            tmp[k++] = (scored){s, (uint32_t)i};
    }
    qsort(tmp, k, sizeof *tmp, cmp_scored);
    a->order[mask] = malloc((k ? k : 1) * sizeof *a->order[mask]);
    if (!a->order[mask]) {
        free(tmp);
        return false;
    }
    for (size_t i = 0; i < k; i++)
        a->order[mask][i] = tmp[i].pos;
    free(tmp);
    a->count[mask] = k;
    a->cursor[mask] = 0;
    a->sorted[mask] = true;
    return true;
}

/* step 4: alias token groups; 1000*(group+1) + longest hit token, plus bonus */
static long alias_match(kd_relaxed_impl *m, const char *const *keys, const char *c,
                        const kd_alias_scorer *alias, const bool *usable)
{
    unsigned mask = alias_mask(c);
    if (!mask || !alias || !alias_prepare(m, alias) || !alias_order(m, mask))
        return -1;
    alias_cache *a = &m->alias;
    while (a->cursor[mask] < a->count[mask] && m->claimed[a->order[mask][a->cursor[mask]]])
        a->cursor[mask]++;
    for (size_t i = a->cursor[mask]; i < a->count[mask]; i++) {
        uint32_t pos = a->order[mask][i];
        if (candidate(m, pos, usable))
            return *keys[pos] ? (long)pos : -1; /* an empty best key never wins */
    }
    return -1;
}

/* ---- the lookup ------------------------------------------------------------------------------ */

long kd_relaxed_lookup(const kd_relaxed_index *ix, const char *name, const kd_alias_scorer *alias,
                       const bool *usable, kd_match_kind *kind)
{
    kd_match_kind dummy;
    if (!kind)
        kind = &dummy;
    *kind = KD_MATCH_NONE;
    kd_relaxed_impl *m = ix->impl;
    if (!m || !name)
        return -1;
    /* exact key: only its first position counts */
    kd_sid id = kd_intern_find(m->exact, name, strlen(name));
    if (id && m->pos_of_id[id] && candidate(m, (uint32_t)(m->pos_of_id[id] - 1), usable)) {
        *kind = KD_MATCH_EXACT;
        return (long)m->pos_of_id[id] - 1;
    }
    const char *const *keys = ix->keys;
    char *low = kd_lower(name);
    char *c = kd_compact_match_text(name);
    long r = -1;
    if (low && c && ensure_groups(m)) {
        r = prefix_or_substring(m, keys, low, usable, kind);
        if (r < 0 && strlen(c) >= LONG_MIN && ensure_long(m) &&
            (r = long_prefix(m, c, strlen(c), usable)) >= 0)
            *kind = KD_MATCH_LONG_PREFIX;
        if (r < 0 && (r = alias_match(m, keys, c, alias, usable)) >= 0)
            *kind = KD_MATCH_ALIAS;
    }
    free(low);
    free(c);
    if (r < 0)
        *kind = KD_MATCH_NONE;
    return r;
}
