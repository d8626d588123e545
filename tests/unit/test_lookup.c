/* test_lookup.c — unit tests of src/lookup.c (reference §4 "Relaxed lookup"):
 * each stage of relaxed_source_stats_lookup (exact, prefix/substring, long
 * common prefix of the compact forms, alias token groups), the usable mask,
 * the reported match kind, and kernel_alias_token_groups. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/lookup.h"
#include "kerndiff/text.h"
#include "suites.h"

/* ---- helpers -------------------------------------------------------------- */

/* The alias scorer of a test: per key, a raw text and a bonus. */
typedef struct {
    const char *const *text;
    const int *bonus;
    int calls;
} alias_fixture;

static char *fx_text(void *ctx, size_t i)
{
    alias_fixture *f = ctx;
    f->calls++;
    return strdup(f->text[i]);
}

static int fx_bonus(void *ctx, size_t i)
{
    alias_fixture *f = ctx;
    return f->bonus ? f->bonus[i] : 0;
}

static void build(kd_relaxed_index *ix, const char *const *keys, size_t n)
{
    ck_assert(kd_relaxed_index_build(ix, keys, n));
}

/* lookup with an optional alias fixture; checks position and kind */
#define ck_lookup(ix, name, alias, usable, want_pos, want_kind)                                   \
    do {                                                                                       \
        kd_match_kind k_ = (kd_match_kind)99;                                                  \
        long p_ = kd_relaxed_lookup((ix), (name), (alias), (usable), &k_);                     \
        ck_assert_msg(p_ == (long)(want_pos) && k_ == (want_kind),                             \
                      "lookup(%s): got %ld/%s, want %ld/%s", (name), p_, kd_match_kind_name(k_), \
                      (long)(want_pos), kd_match_kind_name(want_kind));                        \
    } while (0)

/* n copies of c, malloc'd */
static char *rep(const char *unit, size_t n)
{
    size_t u = strlen(unit);
    char *s = malloc(u * n + 1);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * u, unit, u);
    s[u * n] = '\0';
    return s;
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* ---- match kind names ------------------------------------------------------ */

START_TEST(test_match_kind_names)
{
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_NONE), "none");
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_EXACT), "exact");
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_PREFIX), "prefix");
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_SUBSTRING), "substring");
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_LONG_PREFIX), "long-prefix");
    ck_assert_str_eq(kd_match_kind_name(KD_MATCH_ALIAS), "alias");
    ck_assert_str_eq(kd_match_kind_name((kd_match_kind)42), "none");
}
END_TEST

/* ---- stage 1: exact --------------------------------------------------------- */

START_TEST(test_exact)
{
    /* "abc" would be a prefix match of "abcd" and come first; exact wins */
    const char *keys[] = {"abcd", "abc", "x", "abc"};
    kd_relaxed_index ix;
    build(&ix, keys, 4);
    ck_lookup(&ix, "abc", NULL, NULL, 1, KD_MATCH_EXACT);
    ck_lookup(&ix, "abcd", NULL, NULL, 0, KD_MATCH_EXACT);
    ck_lookup(&ix, "x", NULL, NULL, 2, KD_MATCH_EXACT);
    /* exact is case-sensitive; the lowered scan then finds "abc" as prefix of
     * "abcd" (score 3) before the exact-length "abc" (score 3, not greater) */
    ck_lookup(&ix, "ABC", NULL, NULL, 0, KD_MATCH_PREFIX);
    /* asking again (the query is now interned) gives the same answers */
    ck_lookup(&ix, "ABC", NULL, NULL, 0, KD_MATCH_PREFIX);
    ck_lookup(&ix, "abc", NULL, NULL, 1, KD_MATCH_EXACT);
    /* a NULL kind pointer is allowed */
    ck_assert_int_eq(kd_relaxed_lookup(&ix, "x", NULL, NULL, NULL), 2);
    kd_relaxed_index_free(&ix);
    ck_assert_ptr_null(ix.keys);
}
END_TEST

START_TEST(test_empty_index)
{
    kd_relaxed_index ix;
    build(&ix, NULL, 0);
    ck_lookup(&ix, "anything", NULL, NULL, -1, KD_MATCH_NONE);
    ck_lookup(&ix, "", NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
}
END_TEST

/* ---- stage 2: prefix / substring --------------------------------------------- */

START_TEST(test_prefix_beats_substring)
{
    /* query "abcdef": "zzabcdefzz" contains it (6 // 2 = 3), "abcdefgh" is an
     * extension (min len 6); the later, higher score replaces the first */
    const char *keys[] = {"zzabcdefzz", "abcdefgh"};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "abcdef", NULL, NULL, 1, KD_MATCH_PREFIX);
    /* case-insensitive on both sides */
    ck_lookup(&ix, "ABCdef", NULL, NULL, 1, KD_MATCH_PREFIX);
    kd_relaxed_index_free(&ix);

    /* the key a prefix of the query also counts (score = key length) */
    const char *keys2[] = {"zzabcdefzz", "ABCD"}; /* the first does not contain "abcdefgh" */
    build(&ix, keys2, 2);
    ck_lookup(&ix, "abcdefgh", NULL, NULL, 1, KD_MATCH_PREFIX); /* "abcd" scores 4 */
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_prefix_tie_first_wins)
{
    /* "abcdefgh" (substring 8//2 = 4) first, then prefix "abcd" (4): equal,
     * not greater, so the substring key stays */
    const char *keys[] = {"xxabcdefghxx", "abcd"};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "abcdefgh", NULL, NULL, 0, KD_MATCH_SUBSTRING);
    kd_relaxed_index_free(&ix);

    /* two prefix keys of equal score: the first */
    const char *keys2[] = {"abcX", "abcY", "abc1"};
    build(&ix, keys2, 3);
    ck_lookup(&ix, "abc", NULL, NULL, 0, KD_MATCH_PREFIX);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_substring_score_floor_half)
{
    /* a long substring beats a short prefix: min(12, 14) // 2 = 6 > 2 */
    const char *keys[] = {"ab", "xabcdefghijklx"};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "abcdefghijkl", NULL, NULL, 1, KD_MATCH_SUBSTRING);
    /* query inside the key, or the key inside the query */
    ck_lookup(&ix, "zzxabcdefghijklxzz", NULL, NULL, 1, KD_MATCH_SUBSTRING);
    kd_relaxed_index_free(&ix);

    /* floor: a 5-long key inside the query scores 5 // 2 = 2, equal to the
     * earlier 2-long prefix, so the prefix stays; 6-long scores 3 and wins */
    const char *k5[] = {"qw", "bcdef"};
    build(&ix, k5, 2);
    ck_lookup(&ix, "qwbcdefg", NULL, NULL, 0, KD_MATCH_PREFIX);
    kd_relaxed_index_free(&ix);
    const char *k6[] = {"qw", "bcdefg"};
    build(&ix, k6, 2);
    ck_lookup(&ix, "qwbcdefgh", NULL, NULL, 1, KD_MATCH_SUBSTRING);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_lengths_in_code_points)
{
    /* query "abééé": 5 code points, 8 bytes. "ab" (prefix, 2) first; the key
     * "zabéééz" contains the query: min(5, 7) // 2 = 2 in code points (not
     * greater, "ab" stays), min(8, 10) // 2 = 4 in bytes */
    const char *keys[] = {"ab", "zab\xc3\xa9\xc3\xa9\xc3\xa9z"};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "ab\xc3\xa9\xc3\xa9\xc3\xa9", NULL, NULL, 0, KD_MATCH_PREFIX);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_empty_key_never_wins)
{
    kd_relaxed_index ix;
    /* "" is a prefix of everything with score 0: it is the best, but an empty
     * best key falls through (and nothing else matches) */
    const char *k1[] = {"", "zzz"};
    build(&ix, k1, 2);
    ck_lookup(&ix, "q", NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);

    /* "xqx" contains "q" but scores 1 // 2 = 0, not above the empty key's 0 */
    const char *k2[] = {"", "xqx"};
    build(&ix, k2, 2);
    ck_lookup(&ix, "q", NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);

    /* the same keys the other way round: "xqx" is first with 0, "" ties */
    const char *k3[] = {"xqx", ""};
    build(&ix, k3, 2);
    ck_lookup(&ix, "q", NULL, NULL, 0, KD_MATCH_SUBSTRING);
    kd_relaxed_index_free(&ix);

    /* an empty key loses to any positive score */
    const char *k4[] = {"", "qa"};
    build(&ix, k4, 2);
    ck_lookup(&ix, "q", NULL, NULL, 1, KD_MATCH_PREFIX);
    /* the empty key is still found by the exact stage */
    ck_lookup(&ix, "", NULL, NULL, 0, KD_MATCH_EXACT);
    kd_relaxed_index_free(&ix);

    /* an empty query: every key extends it with score 0; the first key wins */
    const char *k5[] = {"abc", "de"};
    build(&ix, k5, 2);
    ck_lookup(&ix, "", NULL, NULL, 0, KD_MATCH_PREFIX);
    kd_relaxed_index_free(&ix);
}
END_TEST

/* ---- stage 3: long common prefix --------------------------------------------- */

/* Query and keys differ right after "q" in their raw form (':' vs '.'), so the
 * prefix/substring stage cannot match; their compact forms share prefixes. */
START_TEST(test_long_prefix_basic)
{
    char *common = rep("a", 70);
    char *tail_q = rep("q", 40), *tail_k = rep("k", 40);
    char *query = cat3("q:", common, tail_q);  /* compact: q + 70a + 40q = 111 */
    char *key = cat3("q.", common, tail_k);    /* compact: q + 70a + 40k */
    const char *keys[] = {"unrelated", key};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, query, NULL, NULL, 1, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    free(common);
    free(tail_q);
    free(tail_k);
    free(query);
    free(key);
}
END_TEST

START_TEST(test_long_prefix_thresholds)
{
    kd_relaxed_index ix;
    /* p = 64 accepted, p = 63 rejected (prefix counts the leading "q") */
    for (int p = 63; p <= 64; p++) {
        char *common = rep("b", (size_t)p - 1);
        char *tq = rep("y", 60), *tk = rep("z", 60);
        char *query = cat3("q:", common, tq);
        char *key = cat3("q.", common, tk);
        const char *keys[] = {key};
        build(&ix, keys, 1);
        if (p == 64)
            ck_lookup(&ix, query, NULL, NULL, 0, KD_MATCH_LONG_PREFIX);
        else
            ck_lookup(&ix, query, NULL, NULL, -1, KD_MATCH_NONE);
        kd_relaxed_index_free(&ix);
        free(common);
        free(tq);
        free(tk);
        free(query);
        free(key);
    }
    /* p >= int(0.4 * shorter): shorter = 200 needs p >= 80 */
    for (int p = 79; p <= 80; p++) {
        char *common = rep("c", (size_t)p - 1);
        char *tq = rep("y", (size_t)(200 - p)), *tk = rep("z", (size_t)(220 - p));
        char *query = cat3("q:", common, tq); /* compact 200 */
        char *key = cat3("q.", common, tk);   /* compact 220 */
        const char *keys[] = {key};
        build(&ix, keys, 1);
        if (p == 80)
            ck_lookup(&ix, query, NULL, NULL, 0, KD_MATCH_LONG_PREFIX);
        else
            ck_lookup(&ix, query, NULL, NULL, -1, KD_MATCH_NONE);
        kd_relaxed_index_free(&ix);
        free(common);
        free(tq);
        free(tk);
        free(query);
        free(key);
    }
    /* int(0.4 * 163) = 65: p = 64 is rejected although >= 64 */
    {
        char *common = rep("d", 63);
        char *tq = rep("y", 99), *tk = rep("z", 120);
        char *query = cat3("q:", common, tq); /* compact 163 */
        char *key = cat3("q.", common, tk);
        const char *keys[] = {key};
        build(&ix, keys, 1);
        ck_lookup(&ix, query, NULL, NULL, -1, KD_MATCH_NONE);
        kd_relaxed_index_free(&ix);
        free(common);
        free(tq);
        free(tk);
        free(query);
        free(key);
    }
}
END_TEST

START_TEST(test_long_prefix_lengths_96)
{
    kd_relaxed_index ix;
    /* a key whose compact form is 95 long is not a candidate, even with a
     * 90-char common prefix */
    char *common = rep("e", 89);
    char *tq = rep("y", 20);
    char *t5 = rep("z", 5), *t6 = rep("z", 6);
    char *query = cat3("q:", common, tq); /* compact 110 */
    char *key95 = cat3("q.", common, t5); /* compact 95 */
    char *key96 = cat3("q.", common, t6); /* compact 96 */
    const char *k95[] = {key95};
    build(&ix, k95, 1);
    ck_lookup(&ix, query, NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
    const char *k96[] = {key95, key96};
    build(&ix, k96, 2);
    ck_lookup(&ix, query, NULL, NULL, 1, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    /* a query whose compact form is 95 long skips the stage */
    char *q95 = cat3("q:", common, t5); /* compact 95, differs from key96 late */
    q95[strlen(q95) - 1] = 'w';
    build(&ix, k96, 2);
    ck_lookup(&ix, q95, NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
    free(common);
    free(tq);
    free(t5);
    free(t6);
    free(query);
    free(key95);
    free(key96);
    free(q95);
}
END_TEST

START_TEST(test_long_prefix_longest_first_on_ties)
{
    kd_relaxed_index ix;
    char *c70 = rep("f", 69), *c80 = rep("f", 79);
    char *tq = rep("f", 40);
    char *query = cat3("q:", c80, tq);      /* compact q + 119 f */
    char *k70 = cat3("q.", c70, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"); /* p 70 */
    char *k80 = cat3("q.", c80, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"); /* p 80 */
    char *k80b = cat3("q-", c80, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); /* p 80 */
    const char *keys[] = {k70, k80, k80b};
    build(&ix, keys, 3);
    ck_lookup(&ix, query, NULL, NULL, 1, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    const char *keys2[] = {k80b, k70, k80};
    build(&ix, keys2, 3);
    ck_lookup(&ix, query, NULL, NULL, 0, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    free(c70);
    free(c80);
    free(tq);
    free(query);
    free(k70);
    free(k80);
    free(k80b);
}
END_TEST

START_TEST(test_long_prefix_flash)
{
    /* the +32 bonus of two "voidcutlassdevicekernelflash" names: with p >= 64
     * both sides share the first 64 compact chars, so the bonus applies to
     * every accepted candidate alike and cannot change the winner; check the
     * stage still picks the longest prefix */
    const char *base = "void cutlass::device_kernel<flash::FlashAttnFwdSm90<";
    char *mid = rep("Params", 12);
    char *query = cat3(base, mid, "QueryTail, 1>>(Params)");
    char *k1 = cat3("void_cutlass::device_kernel<flash::FlashAttnFwdSm90<", "Params", "X");
    char *k1b = rep("z", 100);
    char *k1c = cat3(k1, k1b, "");
    char *k2 = cat3("void_cutlass::device_kernel<flash::FlashAttnFwdSm90<", mid, "KeyTail>>");
    const char *keys[] = {k1c, k2};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, query, NULL, NULL, 1, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    free(mid);
    free(query);
    free(k1);
    free(k1b);
    free(k1c);
    free(k2);
}
END_TEST

START_TEST(test_long_prefix_before_alias)
{
    /* a long-prefix match is returned before the alias stage runs */
    char *common = rep("memset", 14);
    char *query = cat3("memset:", common, "queryqueryqueryqueryqueryquery");
    char *key = cat3("memset.", common, "keykeykeykeykeykeykeykeykeykey");
    const char *keys[] = {"memset_other", key};
    const char *texts[] = {"memset_other", "k"};
    alias_fixture fx = {texts, NULL, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, query, &sc, NULL, 1, KD_MATCH_LONG_PREFIX);
    ck_assert_int_eq(fx.calls, 0);
    kd_relaxed_index_free(&ix);
    free(common);
    free(query);
    free(key);
}
END_TEST

/* ---- stage 4: alias groups ------------------------------------------------------ */

START_TEST(test_alias_groups_detection)
{
    const char *const *g[4];
    ck_assert_uint_eq(kd_alias_groups("nothinghere", g), 0);
    ck_assert_uint_eq(kd_alias_groups("", g), 0);

    ck_assert_uint_eq(kd_alias_groups("xxflashattnfwdcombinexx", g), 1);
    ck_assert_str_eq(g[0][0], "flashattnfwdsm90");
    ck_assert_str_eq(g[0][1], "flashattnvarlenfunc");
    ck_assert_str_eq(g[0][2], "vllmflashattnflashattninterface");
    ck_assert_str_eq(g[0][3], "vllmfa3cfwd");
    ck_assert_ptr_null(g[0][4]);

    ck_assert_uint_eq(kd_alias_groups("voidkernelmha", g), 1);
    ck_assert_str_eq(g[0][0], "maskedmultiheadattentionkernel");
    ck_assert_str_eq(g[0][1], "attentioninplace");
    ck_assert_str_eq(g[0][2], "attentionbackendtrtllm");
    ck_assert_ptr_null(g[0][3]);

    ck_assert_uint_eq(kd_alias_groups("applybiasropeupdatekvcachev2kernel", g), 1);
    ck_assert_str_eq(g[0][0], "fusedqknormropekernel");
    ck_assert_str_eq(g[0][1], "applyqknormrope");
    ck_assert_str_eq(g[0][2], "modelingqwen3py98applyqknormrope");
    ck_assert_ptr_null(g[0][3]);

    /* memset only as a prefix */
    ck_assert_uint_eq(kd_alias_groups("memset32", g), 1);
    ck_assert_str_eq(g[0][0], "memset");
    ck_assert_ptr_null(g[0][1]);
    ck_assert_uint_eq(kd_alias_groups("xmemset", g), 0);

    /* all four, in the module's order */
    ck_assert_uint_eq(
        kd_alias_groups("memsetflashattnfwdcombinekernelmhaapplybiasropeupdatekvcachev2", g), 4);
    ck_assert_str_eq(g[0][0], "flashattnfwdsm90");
    ck_assert_str_eq(g[1][0], "maskedmultiheadattentionkernel");
    ck_assert_str_eq(g[2][0], "fusedqknormropekernel");
    ck_assert_str_eq(g[3][0], "memset");

    /* two groups: positions follow the matched list */
    ck_assert_uint_eq(kd_alias_groups("memsetkernelmha", g), 2);
    ck_assert_str_eq(g[0][0], "maskedmultiheadattentionkernel");
    ck_assert_str_eq(g[1][0], "memset");
}
END_TEST

START_TEST(test_alias_each_group)
{
    struct {
        const char *query, *hit_text;
    } cases[] = {
        {"void flash_attn_fwd_combine<float>", "python/vllm/vllm_flash_attn/flash_attn_interface.py(1): f"},
        {"kernel_mha<half>", "masked_multihead_attention_kernel"},
        {"applyBiasRopeUpdateKVCacheV2<bf16>", "fused_qk_norm_rope_kernel"},
        {"Memset (Device)", "memset"},
    };
    for (size_t c = 0; c < 4; c++) {
        const char *keys[] = {"zz_unrelated_1", "zz_unrelated_2"};
        const char *texts[] = {"nothing", cases[c].hit_text};
        alias_fixture fx = {texts, NULL, 0};
        kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
        kd_relaxed_index ix;
        build(&ix, keys, 2);
        ck_lookup(&ix, cases[c].query, &sc, NULL, 1, KD_MATCH_ALIAS);
        ck_assert_int_eq(fx.calls, 2);
        /* without a scorer, no alias stage */
        ck_lookup(&ix, cases[c].query, NULL, NULL, -1, KD_MATCH_NONE);
        kd_relaxed_index_free(&ix);
    }
}
END_TEST

START_TEST(test_alias_no_groups_no_scan)
{
    const char *keys[] = {"zz1"};
    const char *texts[] = {"memset"};
    alias_fixture fx = {texts, NULL, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 1);
    ck_lookup(&ix, "plain_kernel", &sc, NULL, -1, KD_MATCH_NONE);
    ck_assert_int_eq(fx.calls, 0);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_alias_longest_token_and_bonus)
{
    /* flash group: key 0 matches "vllmfa3cfwd" (1000 + 11), key 1 matches
     * "flashattnfwdsm90" (16) and "vllmfa3cfwd" (the longest counts: 1016);
     * bonus 4 on key 0 gives 1015 < 1016; bonus 6 gives 1017 > 1016 */
    const char *keys[] = {"ka", "kb"};
    const char *texts[] = {"vllm::fa3_c_fwd", "FlashAttnFwdSm90 + vllm fa3 c fwd"};
    int b4[] = {4, 0}, b6[] = {6, 0}, b5[] = {5, 0};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    /* the index asks a scorer once per key: each bonus table is its own scorer */
    alias_fixture fx = {texts, b4, 0}, fx6 = {texts, b6, 0}, fx5 = {texts, b5, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx}, sc6 = {fx_text, fx_bonus, &fx6},
                    sc5 = {fx_text, fx_bonus, &fx5};
    ck_lookup(&ix, "FlashAttnFwdCombine", &sc, NULL, 1, KD_MATCH_ALIAS);
    ck_lookup(&ix, "FlashAttnFwdCombine", &sc6, NULL, 0, KD_MATCH_ALIAS);
    /* a tie (1016 each): the first key */
    ck_lookup(&ix, "FlashAttnFwdCombine", &sc5, NULL, 0, KD_MATCH_ALIAS);
    /* back to the first scorer: its answers are recomputed, not stale */
    ck_lookup(&ix, "FlashAttnFwdCombine", &sc, NULL, 1, KD_MATCH_ALIAS);
    ck_assert_int_eq(fx.calls, 4);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_alias_weight_by_matched_position)
{
    /* query groups: flash (module group 0) and memset (module group 3), at
     * matched positions 0 and 1. Key F hits flash: 1000*1 + 31 + 1500 = 2531.
     * Key M hits memset: 1000*2 + 6 = 2006 (by module index it would be
     * 1000*4 + 6 = 4006 and win). */
    const char *keys[] = {"kf", "km"};
    const char *texts[] = {"vllm_flash_attn.flash_attn_interface", "memset"};
    int bonus[] = {1500, 0};
    alias_fixture fx = {texts, bonus, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "Memset_flash_attn_fwd_combine", &sc, NULL, 0, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);
    /* key F's bonus 974 gives 2005 < 2006 */
    int bonus2[] = {974, 0};
    fx.bonus = bonus2;
    build(&ix, keys, 2);
    ck_lookup(&ix, "Memset_flash_attn_fwd_combine", &sc, NULL, 1, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);

    /* both groups hit by one key add up: 1000 + 16 + 2000 + 6 = 3022, against
     * a memset-only key's 2006 + bonus: 1015 -> 3021 loses, 1017 -> 3023 wins */
    const char *keys2[] = {"km", "kboth"};
    const char *texts2[] = {"memset", "memset flashattnfwdsm90"};
    int bonus3[] = {1015, 0};
    alias_fixture fx2 = {texts2, bonus3, 0};
    kd_alias_scorer sc2 = {fx_text, fx_bonus, &fx2};
    build(&ix, keys2, 2);
    ck_lookup(&ix, "Memset_flash_attn_fwd_combine", &sc2, NULL, 1, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);
    int bonus4[] = {1017, 0};
    fx2.bonus = bonus4;
    build(&ix, keys2, 2);
    ck_lookup(&ix, "Memset_flash_attn_fwd_combine", &sc2, NULL, 0, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_alias_no_hit_skipped)
{
    /* a key without a token hit is skipped however large its bonus; the bonus
     * is added only to keys that hit */
    const char *keys[] = {"k0", "k1"};
    const char *texts[] = {"no tokens at all", "memset"};
    int bonus[] = {100000, 0};
    alias_fixture fx = {texts, bonus, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 2);
    ck_lookup(&ix, "memsetD2D", &sc, NULL, 1, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);

    /* nobody hits: none */
    const char *texts2[] = {"x", "y"};
    alias_fixture fx2 = {texts2, bonus, 0};
    kd_alias_scorer sc2 = {fx_text, fx_bonus, &fx2};
    build(&ix, keys, 2);
    ck_lookup(&ix, "memsetD2D", &sc2, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);

    /* a hit whose final score is not above the initial -1 is never chosen */
    int neg[] = {0, -5000};
    alias_fixture fx3 = {texts, neg, 0};
    kd_alias_scorer sc3 = {fx_text, fx_bonus, &fx3};
    build(&ix, keys, 2);
    ck_lookup(&ix, "memsetD2D", &sc3, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_alias_text_is_compacted)
{
    /* the scorer's text is compacted before the token search */
    const char *keys[] = {"k0"};
    const char *texts[] = {"Masked-Multi-Head Attention::Kernel"};
    alias_fixture fx = {texts, NULL, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 1);
    ck_lookup(&ix, "void kernel_MHA<x>", &sc, NULL, 0, KD_MATCH_ALIAS);
    kd_relaxed_index_free(&ix);
}
END_TEST

START_TEST(test_alias_empty_key_never_wins)
{
    /* the alias stage returns only truthy keys */
    const char *keys[] = {""};
    const char *texts[] = {"memset"};
    alias_fixture fx = {texts, NULL, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    kd_relaxed_index ix;
    build(&ix, keys, 1);
    /* the query "memset..." has "" as a prefix (score 0, empty: falls through) */
    ck_lookup(&ix, "memset_x", &sc, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
}
END_TEST

/* ---- usable mask ------------------------------------------------------------------ */

START_TEST(test_usable_mask)
{
    const char *keys[] = {"abc", "abcdef", "zzabcdefzz", "memsetkey"};
    kd_relaxed_index ix;
    build(&ix, keys, 4);
    bool all[] = {true, true, true, true};
    ck_lookup(&ix, "abc", NULL, all, 0, KD_MATCH_EXACT);
    /* the exact key unusable: the prefix scan picks "abcdef" (3) */
    bool no0[] = {false, true, true, true};
    ck_lookup(&ix, "abc", NULL, no0, 1, KD_MATCH_PREFIX);
    /* then the substring key */
    bool only2[] = {false, false, true, true};
    ck_lookup(&ix, "abcdef", NULL, only2, 2, KD_MATCH_SUBSTRING);
    bool none[] = {false, false, false, false};
    ck_lookup(&ix, "abc", NULL, none, -1, KD_MATCH_NONE);
    /* the alias stage honours the mask */
    const char *texts[] = {"memset", "memset", "memset", "memset"};
    int bonus[] = {10, 20, 30, 40};
    alias_fixture fx = {texts, bonus, 0};
    kd_alias_scorer sc = {fx_text, fx_bonus, &fx};
    ck_lookup(&ix, "Memset-X", &sc, NULL, 3, KD_MATCH_ALIAS);
    bool no3[] = {true, true, true, false};
    ck_lookup(&ix, "Memset-X", &sc, no3, 2, KD_MATCH_ALIAS);
    ck_lookup(&ix, "Memset-X", &sc, none, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);

    /* the long-prefix stage honours it too */
    char *common = rep("g", 79);
    char *query = cat3("q:", common, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
    char *ka = cat3("q.", common, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    char *kb = cat3("q-", common, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    const char *k2[] = {ka, kb};
    build(&ix, k2, 2);
    ck_lookup(&ix, query, NULL, NULL, 0, KD_MATCH_LONG_PREFIX);
    bool no_a[] = {false, true};
    ck_lookup(&ix, query, NULL, no_a, 1, KD_MATCH_LONG_PREFIX);
    kd_relaxed_index_free(&ix);
    free(common);
    free(query);
    free(ka);
    free(kb);
}
END_TEST

START_TEST(test_duplicate_keys_exact_first)
{
    const char *keys[] = {"dup", "other", "dup"};
    kd_relaxed_index ix;
    build(&ix, keys, 3);
    ck_lookup(&ix, "dup", NULL, NULL, 0, KD_MATCH_EXACT);
    kd_relaxed_index_free(&ix);
}
END_TEST

/* ---- the indexed lookup against the reference's scan ----------------------------- */

/* The reference's relaxed lookup as a plain scan of every key (reference §4;
 * the implementation lookup.c had before it was indexed), kept here only to
 * check the index: same position, same kind, for every query. */
typedef struct {
    size_t n;
    const char *const *keys;
    char **lower, **compact;
    size_t *lower_len, *compact_len;
} ref_index;

static void ref_build(ref_index *r, const char *const *keys, size_t n)
{
    r->n = n;
    r->keys = keys;
    r->lower = calloc(n + 1, sizeof *r->lower);
    r->compact = calloc(n + 1, sizeof *r->compact);
    r->lower_len = calloc(n + 1, sizeof *r->lower_len);
    r->compact_len = calloc(n + 1, sizeof *r->compact_len);
    for (size_t i = 0; i < n; i++) {
        r->lower[i] = kd_lower(keys[i]);
        r->compact[i] = kd_compact_match_text(keys[i]);
        r->lower_len[i] = kd_utf8_len(r->lower[i]);
        r->compact_len[i] = strlen(r->compact[i]);
    }
}

static void ref_free(ref_index *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->lower[i]);
        free(r->compact[i]);
    }
    free(r->lower);
    free(r->compact);
    free(r->lower_len);
    free(r->compact_len);
}

static bool ref_use(const bool *usable, size_t i) { return !usable || usable[i]; }

static long ref_prefix_or_substring(const ref_index *r, const char *low, size_t low_len, const bool *usable,
                                    kd_match_kind *kind)
{
    long best = -1, score = -1;
    kd_match_kind best_kind = KD_MATCH_NONE;
    for (size_t i = 0; i < r->n; i++) {
        if (!ref_use(usable, i))
            continue;
        const char *k = r->lower[i];
        size_t m = r->lower_len[i] < low_len ? r->lower_len[i] : low_len;
        long sc;
        kd_match_kind kk;
        if (kd_starts_with(k, low) || kd_starts_with(low, k)) {
            sc = (long)m;
            kk = KD_MATCH_PREFIX;
        } else if (strstr(k, low) || strstr(low, k)) {
            sc = (long)(m / 2);
            kk = KD_MATCH_SUBSTRING;
        } else {
            continue;
        }
        if (sc > score) {
            score = sc;
            best = (long)i;
            best_kind = kk;
        }
    }
    if (best >= 0 && *r->keys[best]) {
        *kind = best_kind;
        return best;
    }
    return -1;
}

static long ref_long_prefix(const ref_index *r, const char *c, size_t clen, const bool *usable)
{
    static const char flash[] = "voidcutlassdevicekernelflash";
    long best = -1, score = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (!ref_use(usable, i) || r->compact_len[i] < 96)
            continue;
        size_t p = 0;
        while (c[p] && c[p] == r->compact[i][p])
            p++;
        size_t shorter = clen < r->compact_len[i] ? clen : r->compact_len[i];
        if (p < 64 || p < (size_t)(0.4 * (double)shorter))
            continue;
        long sc = (long)p;
        if (kd_starts_with(c, flash) && kd_starts_with(r->compact[i], flash))
            sc += 32;
        if (sc > score) {
            score = sc;
            best = (long)i;
        }
    }
    return best >= 0 && *r->keys[best] ? best : -1;
}

static long ref_alias(const ref_index *r, const char *c, const kd_alias_scorer *alias, const bool *usable)
{
    const char *const *groups[4];
    size_t ng = kd_alias_groups(c, groups);
    if (!ng || !alias)
        return -1;
    long best = -1, score = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (!ref_use(usable, i))
            continue;
        char *raw = alias->text(alias->ctx, i);
        char *text = kd_compact_match_text(raw);
        free(raw);
        long sc = 0;
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
                sc += 1000 * (long)(g + 1) + (long)longest;
        }
        free(text);
        if (sc <= 0)
            continue;
        sc += alias->bonus(alias->ctx, i);
        if (sc > score) {
            score = sc;
            best = (long)i;
        }
    }
    return best >= 0 && *r->keys[best] ? best : -1;
}

static long ref_lookup(const ref_index *r, const char *name, const kd_alias_scorer *alias, const bool *usable,
                       kd_match_kind *kind)
{
    *kind = KD_MATCH_NONE;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->keys[i], name) == 0) { /* the first position of the key only */
            if (ref_use(usable, i)) {
                *kind = KD_MATCH_EXACT;
                return (long)i;
            }
            break;
        }
    char *low = kd_lower(name);
    char *c = kd_compact_match_text(name);
    long res = ref_prefix_or_substring(r, low, kd_utf8_len(low), usable, kind);
    if (res < 0 && strlen(c) >= 96 && (res = ref_long_prefix(r, c, strlen(c), usable)) >= 0)
        *kind = KD_MATCH_LONG_PREFIX;
    if (res < 0 && (res = ref_alias(r, c, alias, usable)) >= 0)
        *kind = KD_MATCH_ALIAS;
    free(low);
    free(c);
    if (res < 0)
        *kind = KD_MATCH_NONE;
    return res;
}

/* a deterministic generator (xorshift64*) */
typedef struct {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

static size_t rng_below(rng *r, size_t n) { return n ? (size_t)(rng_next(r) % n) : 0; }

/* a random string of up to max_units units drawn from `units` */
static char *rand_from(rng *r, const char *const *units, size_t n_units, size_t min_units, size_t max_units)
{
    size_t k = min_units + rng_below(r, max_units - min_units + 1);
    size_t cap = 1;
    const char **pick = malloc((k ? k : 1) * sizeof *pick);
    for (size_t i = 0; i < k; i++) {
        pick[i] = units[rng_below(r, n_units)];
        cap += strlen(pick[i]);
    }
    char *s = malloc(cap);
    s[0] = '\0';
    for (size_t i = 0; i < k; i++)
        strcat(s, pick[i]);
    free(pick);
    return s;
}

/* a query: a mutation of a key (cut, extended, wrapped, case-flipped) or fresh */
static char *rand_query(rng *r, char **keys, size_t n, const char *const *units, size_t n_units,
                        size_t max_units)
{
    if (!n || rng_below(r, 4) == 0)
        return rand_from(r, units, n_units, 0, max_units);
    const char *k = keys[rng_below(r, n)];
    char *add = rand_from(r, units, n_units, 0, 3);
    size_t kl = strlen(k), al = strlen(add);
    char *q = malloc(kl + 2 * al + 1);
    switch (rng_below(r, 6)) {
    case 0: /* the key itself */
        memcpy(q, k, kl + 1);
        break;
    case 1: /* a prefix of it */
        memcpy(q, k, kl);
        q[rng_below(r, kl + 1)] = '\0';
        break;
    case 2: /* extended */
        snprintf(q, kl + 2 * al + 1, "%s%s", k, add);
        break;
    case 3: /* wrapped */
        snprintf(q, kl + 2 * al + 1, "%s%s%s", add, k, add);
        break;
    case 4: { /* a middle piece */
        size_t a = rng_below(r, kl + 1), b = a + rng_below(r, kl - a + 1);
        memcpy(q, k + a, b - a);
        q[b - a] = '\0';
        break;
    }
    default: /* ASCII case flipped */
        for (size_t i = 0; i <= kl; i++)
            q[i] = k[i] >= 'a' && k[i] <= 'z' ? (char)(k[i] - 32) : k[i];
        break;
    }
    free(add);
    return q;
}

/* texts for the alias stage: every key has one, some with group tokens */
static const char *const alias_texts[] = {
    "nothing here", "memset", "FlashAttnFwdSm90", "vllm fa3 c fwd", "masked_multihead_attention_kernel",
    "attention inplace", "fused_qk_norm_rope_kernel", "apply qk norm rope + memset", "", "vllm_flash_attn.flash_attn_interface",
};

typedef struct {
    size_t n;
    int *bonus;
} rand_alias;

static char *ra_text(void *ctx, size_t i)
{
    (void)ctx;
    return strdup(alias_texts[(i * 7 + 3) % (sizeof alias_texts / sizeof alias_texts[0])]);
}

static int ra_bonus(void *ctx, size_t i)
{
    rand_alias *a = ctx;
    return a->bonus[i % a->n];
}

/* One scenario: n keys drawn from units, then queries asked of both the
 * index and the scan, with the diff matcher's claims (the answer leaves the
 * candidates) or a random usable mask. */
static void compare_scenario(uint64_t seed, const char *const *units, size_t n_units, size_t n_keys,
                             size_t min_units, size_t max_units, size_t n_queries, bool claims)
{
    rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
    char **keys = malloc((n_keys ? n_keys : 1) * sizeof *keys);
    for (size_t i = 0; i < n_keys; i++) {
        if (i && rng_below(&r, 8) == 0)
            keys[i] = strdup(keys[rng_below(&r, i)]); /* duplicates */
        else
            keys[i] = rand_from(&r, units, n_units, min_units, max_units);
    }
    int bonus[13];
    for (size_t i = 0; i < 13; i++)
        bonus[i] = (int)rng_below(&r, 3000) - 1500;
    rand_alias ra = {13, bonus};
    kd_alias_scorer sc = {ra_text, ra_bonus, &ra};
    ref_index ref;
    ref_build(&ref, (const char *const *)keys, n_keys);
    kd_relaxed_index ix;
    ck_assert(kd_relaxed_index_build(&ix, (const char *const *)keys, n_keys));
    bool *usable = malloc((n_keys ? n_keys : 1) * sizeof *usable);
    for (size_t i = 0; i < n_keys; i++)
        usable[i] = true;
    for (size_t qi = 0; qi < n_queries; qi++) {
        char *q = rand_query(&r, keys, n_keys, units, n_units, max_units);
        if (!claims)
            for (size_t i = 0; i < n_keys; i++)
                usable[i] = rng_below(&r, 4) != 0;
        kd_match_kind want_kind, got_kind;
        long want = ref_lookup(&ref, q, &sc, usable, &want_kind);
        long got = kd_relaxed_lookup(&ix, q, &sc, claims ? NULL : usable, &got_kind);
        ck_assert_msg(got == want && got_kind == want_kind,
                      "seed %llu query %zu \"%s\": index %ld/%s, scan %ld/%s", (unsigned long long)seed, qi, q,
                      got, kd_match_kind_name(got_kind), want, kd_match_kind_name(want_kind));
        if (claims && want >= 0 && rng_below(&r, 3) != 0) {
            usable[want] = false;
            kd_relaxed_index_claim(&ix, (size_t)want);
        }
        free(q);
    }
    kd_relaxed_index_free(&ix);
    ref_free(&ref);
    for (size_t i = 0; i < n_keys; i++)
        free(keys[i]);
    free(keys);
    free(usable);
}

/* small alphabets make prefixes and substrings frequent; multi-byte and
 * case-mapping characters (U+0130 lowers to 3 bytes, the Kelvin sign to k)
 * check code-point lengths; a stray byte makes a key or query malformed */
static const char *const units_ab[] = {"a", "b"};
static const char *const units_abc[] = {"a", "b", "c", "_", "A", "B"};
static const char *const units_utf8[] = {"a", "b", "\xc3\xa9", "\xc4\xb0", "\xe2\x84\xaa", "k", "I", "\xe2\x82\xac"};
static const char *const units_bad[] = {"a", "b", "\xc3\xa9", "\xc3", "\x80", "\xed\xb0\x80"};
static const char *const units_words[] = {"gemm", "kernel", "void ", "::", "<", ">", "128", "64", "_", "fwd",
                                          "flash", "attn", "combine", "memset", "mha", " "};

START_TEST(test_index_matches_scan_random)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        compare_scenario(seed, units_ab, 2, 30, 0, 9, 200, seed % 2);
        compare_scenario(seed, units_abc, 6, 60, 0, 12, 200, seed % 2 == 0);
        compare_scenario(seed, units_utf8, 8, 40, 0, 8, 200, seed % 2);
        compare_scenario(seed, units_bad, 6, 30, 0, 6, 150, seed % 2 == 0);
        compare_scenario(seed, units_words, 16, 80, 1, 14, 200, seed % 2);
    }
}
END_TEST

START_TEST(test_index_matches_scan_long_prefix)
{
    /* compact forms >= 96 sharing long prefixes, lengths around the 40% rule:
     * stems of 60..100 characters, tails of 0..150 */
    static const char *const stems[] = {"void cutlass::device_kernel<flash::FlashAttnFwdSm90<", "void cutlass::Kernel2<",
                                        "ncclDevKernel_AllReduce_"};
    for (uint64_t seed = 1; seed <= 30; seed++) {
        rng r = {seed * 7919 + 3};
        size_t n = 40;
        char **keys = malloc(n * sizeof *keys);
        for (size_t i = 0; i < n; i++) {
            char *stem = rand_from(&r, units_ab, 2, 40, 90);
            char *tail = rand_from(&r, units_abc, 6, 0, 150);
            const char *head = stems[rng_below(&r, 3)];
            size_t len = strlen(head) + strlen(stem) + strlen(tail) + 1;
            keys[i] = malloc(len);
            /* few stems: many keys share one */
            if (i >= 4 && rng_below(&r, 3) != 0) {
                size_t from = rng_below(&r, i);
                size_t cut = rng_below(&r, strlen(keys[from]) + 1);
                keys[i] = realloc(keys[i], cut + strlen(tail) + 1);
                memcpy(keys[i], keys[from], cut);
                strcpy(keys[i] + cut, tail);
            } else {
                snprintf(keys[i], len, "%s%s%s", head, stem, tail);
            }
            free(stem);
            free(tail);
        }
        ref_index ref;
        ref_build(&ref, (const char *const *)keys, n);
        kd_relaxed_index ix;
        ck_assert(kd_relaxed_index_build(&ix, (const char *const *)keys, n));
        bool *usable = malloc(n * sizeof *usable);
        for (size_t i = 0; i < n; i++)
            usable[i] = true;
        for (size_t qi = 0; qi < 150; qi++) {
            const char *k = keys[rng_below(&r, n)];
            size_t cut = rng_below(&r, strlen(k) + 1);
            char *tail = rand_from(&r, units_abc, 6, 0, 150);
            char *q = malloc(cut + strlen(tail) + 3);
            memcpy(q, "x", 1); /* never a prefix or substring: straight to step 3 */
            memcpy(q + 1, k, cut);
            strcpy(q + 1 + cut, tail);
            const char *ask = rng_below(&r, 2) ? q + 1 : q;
            kd_match_kind wk, gk;
            long want = ref_lookup(&ref, ask, NULL, usable, &wk);
            long got = kd_relaxed_lookup(&ix, ask, NULL, NULL, &gk);
            ck_assert_msg(got == want && gk == wk, "seed %llu query %zu: index %ld/%s, scan %ld/%s",
                          (unsigned long long)seed, qi, got, kd_match_kind_name(gk), want,
                          kd_match_kind_name(wk));
            if (want >= 0 && rng_below(&r, 2)) {
                usable[want] = false;
                kd_relaxed_index_claim(&ix, (size_t)want);
            }
            free(q);
            free(tail);
        }
        kd_relaxed_index_free(&ix);
        ref_free(&ref);
        for (size_t i = 0; i < n; i++)
            free(keys[i]);
        free(keys);
        free(usable);
    }
}
END_TEST

/* Thue-Morse strings collide under any polynomial hash mod 2^64 from about
 * 2^11 characters: the index must not take a hash hit for a match */
static char *thue_morse(size_t n, bool flip)
{
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)(((__builtin_popcountll(i) & 1) ^ flip) ? 'b' : 'a');
    s[n] = '\0';
    return s;
}

START_TEST(test_index_matches_scan_adversarial)
{
    /* chains of prefixes and substrings: a, aa, aaa, ... */
    const size_t chain = 60;
    char **keys = malloc((chain + 6) * sizeof *keys);
    size_t n = 0;
    for (size_t i = 0; i < chain; i++)
        keys[n++] = rep(i % 2 ? "a" : "ba", i / 2 + 1);
    keys[n++] = thue_morse(4096, false);
    keys[n++] = thue_morse(4096, true);
    keys[n++] = strdup("");
    keys[n++] = cat3("x", keys[chain], "y");
    keys[n++] = cat3("y", keys[chain + 1], "");
    keys[n++] = strdup("b");
    ref_index ref;
    ref_build(&ref, (const char *const *)keys, n);
    kd_relaxed_index ix;
    ck_assert(kd_relaxed_index_build(&ix, (const char *const *)keys, n));
    bool *usable = malloc(n * sizeof *usable);
    for (size_t i = 0; i < n; i++)
        usable[i] = true;
    char *tm = thue_morse(4096, false), *tmc = thue_morse(4096, true);
    char *queries[] = {
        strdup(""), strdup("a"), strdup("b"), strdup("ab"), rep("a", 40), rep("ba", 40), cat3("z", tm, ""),
        cat3("", tmc, "z"), cat3("", tm, ""), strdup(tm + 1), strdup(tmc + 7), cat3("q", tm + 100, "q"),
        rep("aab", 30), cat3("x", tmc, "y"), strdup("A"), strdup("BA"),
    };
    size_t nq = sizeof queries / sizeof queries[0];
    for (int round = 0; round < 3; round++) /* then again, after claims */
        for (size_t qi = 0; qi < nq; qi++) {
            kd_match_kind wk, gk;
            long want = ref_lookup(&ref, queries[qi], NULL, usable, &wk);
            long got = kd_relaxed_lookup(&ix, queries[qi], NULL, NULL, &gk);
            ck_assert_msg(got == want && gk == wk, "round %d query %zu: index %ld/%s, scan %ld/%s", round, qi,
                          got, kd_match_kind_name(gk), want, kd_match_kind_name(wk));
            if (want >= 0 && round > 0) {
                usable[want] = false;
                kd_relaxed_index_claim(&ix, (size_t)want);
            }
        }
    for (size_t qi = 0; qi < nq; qi++)
        free(queries[qi]);
    free(tm);
    free(tmc);
    kd_relaxed_index_free(&ix);
    ref_free(&ref);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    free(usable);
}
END_TEST

START_TEST(test_claim_is_a_filter)
{
    /* a claim drops exactly that key; claiming twice or out of range is harmless */
    const char *keys[] = {"abc", "abcdef", "zzabcdefzz", "abc"};
    kd_relaxed_index ix;
    build(&ix, keys, 4);
    ck_lookup(&ix, "abc", NULL, NULL, 0, KD_MATCH_EXACT);
    kd_relaxed_index_claim(&ix, 0);
    kd_relaxed_index_claim(&ix, 0);
    kd_relaxed_index_claim(&ix, 99);
    /* the exact stage looks at the first position only; the duplicate is a prefix */
    ck_lookup(&ix, "abc", NULL, NULL, 1, KD_MATCH_PREFIX);
    kd_relaxed_index_claim(&ix, 1);
    ck_lookup(&ix, "abc", NULL, NULL, 3, KD_MATCH_PREFIX);
    ck_lookup(&ix, "abcdef", NULL, NULL, 2, KD_MATCH_SUBSTRING);
    kd_relaxed_index_claim(&ix, 2);
    kd_relaxed_index_claim(&ix, 3);
    ck_lookup(&ix, "abc", NULL, NULL, -1, KD_MATCH_NONE);
    kd_relaxed_index_free(&ix);
}
END_TEST

Suite *lookup_suite(void)
{
    Suite *s = suite_create("lookup");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_match_kind_names);
    tcase_add_test(tc, test_exact);
    tcase_add_test(tc, test_empty_index);
    tcase_add_test(tc, test_prefix_beats_substring);
    tcase_add_test(tc, test_prefix_tie_first_wins);
    tcase_add_test(tc, test_substring_score_floor_half);
    tcase_add_test(tc, test_lengths_in_code_points);
    tcase_add_test(tc, test_empty_key_never_wins);
    tcase_add_test(tc, test_long_prefix_basic);
    tcase_add_test(tc, test_long_prefix_thresholds);
    tcase_add_test(tc, test_long_prefix_lengths_96);
    tcase_add_test(tc, test_long_prefix_longest_first_on_ties);
    tcase_add_test(tc, test_long_prefix_flash);
    tcase_add_test(tc, test_long_prefix_before_alias);
    tcase_add_test(tc, test_alias_groups_detection);
    tcase_add_test(tc, test_alias_each_group);
    tcase_add_test(tc, test_alias_no_groups_no_scan);
    tcase_add_test(tc, test_alias_longest_token_and_bonus);
    tcase_add_test(tc, test_alias_weight_by_matched_position);
    tcase_add_test(tc, test_alias_no_hit_skipped);
    tcase_add_test(tc, test_alias_text_is_compacted);
    tcase_add_test(tc, test_alias_empty_key_never_wins);
    tcase_add_test(tc, test_usable_mask);
    tcase_add_test(tc, test_duplicate_keys_exact_first);
    tcase_add_test(tc, test_claim_is_a_filter);
    suite_add_tcase(s, tc);
    TCase *vs = tcase_create("index-vs-scan");
    tcase_set_timeout(vs, 120);
    tcase_add_test(vs, test_index_matches_scan_random);
    tcase_add_test(vs, test_index_matches_scan_long_prefix);
    tcase_add_test(vs, test_index_matches_scan_adversarial);
    suite_add_tcase(s, vs);
    return s;
}
