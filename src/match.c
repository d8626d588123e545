/* match.c — pairing the baseline's kernels with the candidate's (match.h):
 * rules, exact names, keys that forgive what a rebuild changes (generated
 * numbers, template arguments, architecture words), the reference's relaxed
 * lookup, then kernels that replaced each other in the same place. */
#include "config.h"

#include "kerndiff/match.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/hashmap.h"
#include "kerndiff/intern.h"

/* A group larger than this pairs by launch order alone: the evidence costs
 * of every pair would be quadratic in it. */
#define GROUP_PAIR_LIMIT 4096
/* The replaced step examines at most this many baseline kernels sharing a
 * neighbour with a candidate. */
#define REPLACED_SCAN_LIMIT 256
/* "comparable launch counts" for a replacement */
#define REPLACED_MAX_RATIO 1.5
/* A replacement is a local change: the unmatched kernels between the two
 * matched neighbours are at most this many on each side (a region rewritten
 * whole is added and removed kernels, not a list of replacements). */
#define REPLACED_MAX_GAP 16

typedef struct {
    const kd_match_item *b, *c;
    size_t nb, nc;
    kd_matching *m;
    size_t *rank_b, *rank_c; /* place in the side's first-launch order */
    bool oom;
} matcher;

/* ---- small helpers ------------------------------------------------------ */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap, again;
    va_start(ap, f);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, f, again);
    va_end(again);
    va_end(ap);
    return s;
}

static void link_pair(matcher *x, size_t bi, size_t ci, kd_match_kind kind, char *evidence)
{
    /* every pair but an exact one says why; a rule's is written after */
    if (!evidence && kind != KD_MATCH_EXACT && kind != KD_MATCH_RULE)
        x->oom = true;
    x->m->cand_of[bi] = (long)ci;
    x->m->base_of[ci] = (long)bi;
    x->m->kind[ci] = kind;
    free(x->m->evidence[ci]);
    x->m->evidence[ci] = evidence;
}

static bool unmatched_b(const matcher *x, size_t i) { return x->m->cand_of[i] < 0; }
static bool unmatched_c(const matcher *x, size_t i) { return x->m->base_of[i] < 0; }

/* position in [0, 1] of an item in its side's first-launch order */
static double order_pos(const size_t *rank, size_t n, size_t i)
{
    return n > 1 ? (double)rank[i] / (double)(n - 1) : 0.0;
}

static bool both_set_differ(const char *a, const char *b) { return *a && *b && strcmp(a, b) != 0; }
static bool both_set_same(const char *a, const char *b) { return *a && *b && strcmp(a, b) == 0; }

static double launch_gap(uint64_t a, uint64_t b)
{
    return fabs(log((double)(a + 1) / (double)(b + 1)));
}

/* What speaks against pairing b and c: other launch counts, another place in
 * the launch order, another scope, launch op or category. 0 is perfect. */
static double pair_cost(const matcher *x, size_t bi, size_t ci)
{
    const kd_match_item *b = &x->b[bi], *c = &x->c[ci];
    double cost = 4.0 * launch_gap(b->launches, c->launches);
    cost += 2.0 * fabs(order_pos(x->rank_b, x->nb, bi) - order_pos(x->rank_c, x->nc, ci));
    cost += both_set_differ(b->scope, c->scope) ? 1.0 : 0.0;
    cost += both_set_differ(b->launch_op, c->launch_op) ? 0.5 : 0.0;
    cost += b->category != c->category ? 2.0 : 0.0;
    return cost;
}

/* "launches 76 = 76, launch order 41st / 40th" */
static char *launch_evidence(const matcher *x, size_t bi, size_t ci, const char *lead)
{
    uint64_t lb = x->b[bi].launches, lc = x->c[ci].launches;
    return fmt("%s%slaunches %llu %s %llu; launch order %zu / %zu", lead, *lead ? "; " : "",
               (unsigned long long)lb, lb == lc ? "=" : "->", (unsigned long long)lc, x->rank_b[bi] + 1,
               x->rank_c[ci] + 1);
}

/* ---- first-launch order --------------------------------------------------- */

typedef struct {
    double ts;
    size_t i;
} ts_index;

static int cmp_ts_index(const void *pa, const void *pb)
{
    const ts_index *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static size_t *ranks_of(const kd_match_item *v, size_t n)
{
    ts_index *t = malloc((n ? n : 1) * sizeof *t);
    size_t *rank = malloc((n ? n : 1) * sizeof *rank);
    if (!t || !rank) {
        free(t);
        free(rank);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = (ts_index){isnan(v[i].first_ts) ? 0.0 : v[i].first_ts, i};
    qsort(t, n, sizeof *t, cmp_ts_index);
    for (size_t k = 0; k < n; k++)
        rank[t[k].i] = k;
    free(t);
    return rank;
}

/* Sorts item indexes v by their rank (launch order); false on OOM. */
static bool order_by_rank(const size_t *rank, size_t *v, size_t n)
{
    ts_index *t = malloc((n ? n : 1) * sizeof *t);
    if (!t)
        return false;
    for (size_t k = 0; k < n; k++)
        t[k] = (ts_index){(double)rank[v[k]], v[k]};
    qsort(t, n, sizeof *t, cmp_ts_index);
    for (size_t k = 0; k < n; k++)
        v[k] = t[k].i;
    free(t);
    return true;
}

/* ---- the keys ---------------------------------------------------------------- */

/* Inductor/Triton generated kernels: triton_{poi,red,per,tem}_..._N */
static char *renumber_key(const char *name, bool *oom)
{
    static const char *const kinds[] = {"triton_poi_", "triton_red_", "triton_per_", "triton_tem_"};
    bool generated = false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        generated = generated || strncmp(name, kinds[k], strlen(kinds[k])) == 0;
    size_t n = strlen(name), d = n;
    while (d > 0 && isdigit((unsigned char)name[d - 1]))
        d--;
    if (!generated || d == n || d == 0 || name[d - 1] != '_')
        return NULL;
    char *key = strndup(name, d - 1);
    *oom = *oom || !key;
    return key;
}

/* A template argument that only sets a size or a scalar type: a number
 * (2ul, 128), a boolean, or a scalar type (float, c10::BFloat16, int64_t). */
static bool scalar_argument(const char *tok, size_t n)
{
    static const char *const scalars[] = {
        "float",    "double",  "int",     "long",    "short",    "char",     "bool",     "unsigned",
        "signed",   "half",    "bfloat16", "__half", "__nv_bfloat16", "Half", "BFloat16", "int8_t",
        "int16_t",  "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
        "true",     "false",   "float2",  "float4",  "__half2", "__nv_bfloat162"};
    if (isdigit((unsigned char)tok[0]))
        return true; /* 2ul, 128, 0x10 */
    size_t start = n;
    while (start > 0 && tok[start - 1] != ':')
        start--; /* the last component: c10::BFloat16 -> BFloat16 */
    const char *w = tok + start;
    size_t wn = n - start;
    if ((wn > 7 && strncmp(w, "Float8_", 7) == 0) || (wn > 8 && strncmp(w, "__nv_fp8", 8) == 0))
        return true;
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++)
        if (strlen(scalars[k]) == wn && strncmp(w, scalars[k], wn) == 0)
            return true;
    return false;
}

static bool ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_' || ch == ':'; }

/* The name without its parameter list and with the template arguments that
 * only set sizes or scalar types as "T" (HTA's short name drops every
 * argument; keeping the others, e.g. the functor of a PyTorch elementwise
 * kernel, keeps add and mul apart). */
static char *template_key(const char *name, bool *oom)
{
    const char *s = strncmp(name, "void ", 5) == 0 ? name + 5 : name;
    if (!strpbrk(s, "<("))
        return NULL; /* no template arguments, no parameters */
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (!out) {
        *oom = true;
        return NULL;
    }
    size_t o = 0;
    int depth = 0;
    for (size_t i = 0; i < n;) {
        char ch = s[i];
        if (ch == '(' && depth == 0)
            break; /* the parameter list */
        if (depth > 0 && ident_char(ch)) {
            size_t j = i;
            while (j < n && ident_char(s[j]))
                j++;
            if (scalar_argument(s + i, j - i)) {
                out[o++] = 'T';
            } else {
                memcpy(out + o, s + i, j - i);
                o += j - i;
            }
            i = j;
            continue;
        }
        depth += ch == '<' ? 1 : ch == '>' ? -1 : 0;
        if (ch != ' ')
            out[o++] = ch;
        i++;
    }
    out[o] = '\0';
    return out;
}

/* An architecture word at s (length of the word, 0 when none): the GPU
 * generation names vendor libraries prefix their kernels with, and smNN. */
static size_t arch_word(const char *s)
{
    static const char *const words[] = {"maxwell", "pascal", "volta", "turing", "ampere",
                                        "ada",     "hopper", "blackwell", "gfx"};
    if (!strchr("mpvtahbgs", s[0]) || !s[0])
        return 0; /* no word starts so: most positions of most names */
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (words[k][0] != s[0])
            continue;
        size_t n = strlen(words[k]);
        if (strncmp(s, words[k], n) == 0) {
            while (strcmp(words[k], "gfx") == 0 && isalnum((unsigned char)s[n]))
                n++;
            return n;
        }
    }
    if (s[0] == 's' && s[1] == 'm' && isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3])) {
        size_t n = 4;
        while (isdigit((unsigned char)s[n]))
            n++;
        if (s[n] == 'a' && (s[n + 1] == '_' || !s[n + 1]))
            n++;
        return n;
    }
    return 0;
}

/* A word starts at s (after '_' or the start) and ends at '_' or the end. */
static size_t arch_token_at(const char *name, size_t i)
{
    if (i > 0 && name[i - 1] != '_' && name[i - 1] != ' ' && name[i - 1] != ':' && name[i - 1] != '<')
        return 0;
    size_t n = arch_word(name + i);
    return n && (name[i + n] == '_' || !name[i + n]) ? n : 0;
}

static char *retarget_key(const char *name, bool *oom)
{
    size_t n = strlen(name);
    char *out = malloc(n * 2 + 8);
    if (!out) {
        *oom = true;
        return NULL;
    }
    size_t o = 0;
    bool any = false;
    for (size_t i = 0; i < n;) {
        size_t w = arch_token_at(name, i);
        if (w) {
            memcpy(out + o, "ARCH", 4);
            o += 4;
            i += w;
            any = true;
        } else {
            out[o++] = name[i++];
        }
    }
    out[o] = '\0';
    if (!any) {
        free(out);
        return NULL;
    }
    return out;
}

char *kd_match_renumber_key(const char *name)
{
    bool oom = false;
    return renumber_key(name, &oom);
}

char *kd_match_template_key(const char *name)
{
    bool oom = false;
    return template_key(name, &oom);
}

char *kd_match_retarget_key(const char *name)
{
    bool oom = false;
    return retarget_key(name, &oom);
}

/* The first architecture word of a name, into buf ("" when none). */
static const char *first_arch(const char *name, char *buf, size_t n)
{
    for (size_t i = 0; name[i]; i++) {
        size_t w = arch_token_at(name, i);
        if (w) {
            snprintf(buf, n, "%.*s", (int)w, name + i);
            return buf;
        }
    }
    return "";
}

/* ---- pairing a group of equal keys by evidence ------------------------------ */

typedef struct {
    double cost;
    bool same_name;
    size_t bi, ci;
    size_t rb, rc;
} pair_offer;

static int cmp_offer(const void *pa, const void *pb)
{
    const pair_offer *a = pa, *b = pb;
    if (a->cost != b->cost)
        return a->cost < b->cost ? -1 : 1;
    if (a->same_name != b->same_name)
        return a->same_name ? -1 : 1;
    if (a->rb != b->rb)
        return a->rb < b->rb ? -1 : 1;
    return (a->rc > b->rc) - (a->rc < b->rc);
}

typedef char *(*evidence_fn)(const matcher *x, size_t bi, size_t ci);

/* Pairs the unmatched baseline items bs with the candidate items cs, best
 * evidence first (pair_cost), one-to-one. */
static void pair_group(matcher *x, const size_t *bs, size_t nbs, const size_t *cs, size_t ncs,
                       kd_match_kind kind, evidence_fn why)
{
    size_t n = nbs * ncs;
    if (!n)
        return;
    if (n > GROUP_PAIR_LIMIT) {
        /* too many to weigh: zip them in launch order (the lists are) */
        for (size_t k = 0; k < nbs && k < ncs; k++) {
            bool same = strcmp(x->b[bs[k]].name, x->c[cs[k]].name) == 0;
            link_pair(x, bs[k], cs[k], same ? KD_MATCH_EXACT : kind,
                      same || !why ? NULL : why(x, bs[k], cs[k]));
        }
        return;
    }
    pair_offer *o = malloc(n * sizeof *o);
    if (!o) {
        x->oom = true;
        return;
    }
    /* bs and cs are in launch order: within a group, the k-th kernel
     * launched on one side is most likely the k-th on the other, whatever
     * else was added around them (the global order is only a hint) */
    size_t k = 0;
    for (size_t i = 0; i < nbs; i++)
        for (size_t j = 0; j < ncs; j++) {
            double gi = nbs > 1 ? (double)i / (double)(nbs - 1) : 0.0;
            double gj = ncs > 1 ? (double)j / (double)(ncs - 1) : 0.0;
            o[k++] = (pair_offer){pair_cost(x, bs[i], cs[j]) + 3.0 * fabs(gi - gj),
                                  strcmp(x->b[bs[i]].name, x->c[cs[j]].name) == 0,
                                  bs[i], cs[j], x->rank_b[bs[i]], x->rank_c[cs[j]]};
        }
    qsort(o, n, sizeof *o, cmp_offer);
    for (k = 0; k < n; k++) {
        if (!unmatched_b(x, o[k].bi) || !unmatched_c(x, o[k].ci))
            continue;
        link_pair(x, o[k].bi, o[k].ci, o[k].same_name ? KD_MATCH_EXACT : kind,
                  o[k].same_name || !why ? NULL : why(x, o[k].bi, o[k].ci));
    }
    free(o);
}

typedef struct {
    char *key;
    size_t i;
    size_t rank;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The unmatched items of one side with a key, sorted by (key, launch order). */
typedef char *(*key_fn)(const char *name, bool *oom);

static keyed *keyed_items(matcher *x, bool cand, key_fn keyfn, size_t *count)
{
    size_t n = cand ? x->nc : x->nb, k = 0;
    keyed *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        x->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (cand ? !unmatched_c(x, i) : !unmatched_b(x, i))
            continue;
        char *key = keyfn(cand ? x->c[i].name : x->b[i].name, &x->oom);
        if (key)
            v[k++] = (keyed){key, i, cand ? x->rank_c[i] : x->rank_b[i]};
    }
    qsort(v, k, sizeof *v, cmp_keyed);
    *count = k;
    return v;
}

static void free_keyed(keyed *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].key);
    free(v);
}

/* Steps 3–5: the unmatched kernels whose keys are equal, paired by evidence
 * within each key. */
static void match_by_key(matcher *x, key_fn keyfn, kd_match_kind kind, evidence_fn why)
{
    size_t nkb = 0, nkc = 0;
    keyed *kb = keyed_items(x, false, keyfn, &nkb), *kc = keyed_items(x, true, keyfn, &nkc);
    size_t *bs = malloc((nkb ? nkb : 1) * sizeof *bs), *cs = malloc((nkc ? nkc : 1) * sizeof *cs);
    if (!kb || !kc || !bs || !cs)
        x->oom = true;
    for (size_t i = 0, j = 0; !x->oom && i < nkb && j < nkc;) {
        int c = strcmp(kb[i].key, kc[j].key);
        if (c < 0) {
            i++;
            continue;
        }
        if (c > 0) {
            j++;
            continue;
        }
        size_t nbs = 0, ncs = 0;
        const char *key = kb[i].key;
        while (i < nkb && strcmp(kb[i].key, key) == 0)
            bs[nbs++] = kb[i++].i;
        while (j < nkc && strcmp(kc[j].key, key) == 0)
            cs[ncs++] = kc[j++].i;
        pair_group(x, bs, nbs, cs, ncs, kind, why);
    }
    free_keyed(kb, nkb);
    free_keyed(kc, nkc);
    free(bs);
    free(cs);
}

static char *why_renumbered(const matcher *x, size_t bi, size_t ci)
{
    const char *b = x->b[bi].name, *c = x->c[ci].name;
    const char *sb = strrchr(b, '_'), *sc = strrchr(c, '_');
    char lead[96];
    snprintf(lead, sizeof lead, "%s -> %s", sb ? sb : "", sc ? sc : "");
    return launch_evidence(x, bi, ci, lead);
}

static char *why_template(const matcher *x, size_t bi, size_t ci)
{
    return launch_evidence(x, bi, ci, "the same name without template arguments and parameters");
}

static char *why_retargeted(const matcher *x, size_t bi, size_t ci)
{
    char ab[32], ac[32], lead[96];
    snprintf(lead, sizeof lead, "%s -> %s", first_arch(x->b[bi].name, ab, sizeof ab),
             first_arch(x->c[ci].name, ac, sizeof ac));
    return launch_evidence(x, bi, ci, lead);
}

/* ---- step 1: rules ------------------------------------------------------------ */

static void match_rules(matcher *x, const kd_match_options *opt)
{
    for (size_t r = 0; !x->oom && opt && r < opt->n_rules; r++) {
        const char *rule = opt->rules[r], *eq = strchr(rule, '=');
        if (!eq)
            continue;
        char *old_glob = strndup(rule, (size_t)(eq - rule));
        const char *new_glob = eq + 1;
        size_t *bs = malloc((x->nb ? x->nb : 1) * sizeof *bs), *cs = malloc((x->nc ? x->nc : 1) * sizeof *cs);
        if (!old_glob || !bs || !cs) {
            x->oom = true;
        } else {
            size_t nbs = 0, ncs = 0;
            for (size_t i = 0; i < x->nb; i++)
                if (unmatched_b(x, i) && fnmatch(old_glob, x->b[i].name, 0) == 0)
                    bs[nbs++] = i;
            for (size_t i = 0; i < x->nc; i++)
                if (unmatched_c(x, i) && fnmatch(new_glob, x->c[i].name, 0) == 0)
                    cs[ncs++] = i;
            /* evidence decides among the kernels a rule names */
            if (!order_by_rank(x->rank_b, bs, nbs) || !order_by_rank(x->rank_c, cs, ncs))
                x->oom = true;
            else
                pair_group(x, bs, nbs, cs, ncs, KD_MATCH_RULE, NULL);
        }
        /* the evidence of a rule's pairs names the rule */
        for (size_t i = 0; !x->oom && i < x->nc; i++)
            if (x->m->kind[i] == KD_MATCH_RULE && !x->m->evidence[i]) {
                char lead[512];
                snprintf(lead, sizeof lead, "--match-rule '%s'", rule);
                x->m->evidence[i] = launch_evidence(x, (size_t)x->m->base_of[i], i, lead);
                x->oom = x->oom || !x->m->evidence[i];
            }
        free(old_glob);
        free(bs);
        free(cs);
    }
}

/* ---- step 2: exact names --------------------------------------------------------- */

static int64_t name_category_key(kd_sid name, kd_category category)
{
    return (int64_t)(((uint64_t)name << 32) | (uint32_t)category);
}

/* the same canonical name and category, then the same name (product.md §3
 * step 1); generated names are left to the renumbered step, whose evidence
 * decides whether a kernel kept its number */
static void match_exact(matcher *x)
{
    kd_interner *names = kd_interner_new();
    kd_i64map by_key, first_by_name;
    kd_i64map_init(&by_key);
    kd_i64map_init(&first_by_name);
    size_t nb = x->nb, nc = x->nc;
    long *next_same = malloc((nb ? nb : 1) * sizeof *next_same);
    kd_sid *bid = malloc((nb ? nb : 1) * sizeof *bid);
    bool *generated = calloc(nc ? nc : 1, sizeof *generated);
    bool ok = names && next_same && bid && generated;
    for (size_t i = 0; ok && i < nc; i++) {
        char *k = renumber_key(x->c[i].name, &x->oom);
        generated[i] = k != NULL;
        free(k);
    }
    for (size_t i = nb; ok && i-- > 0;) {
        bid[i] = kd_intern_cstr(names, x->b[i].name);
        int64_t head = -1;
        kd_i64map_get(&first_by_name, bid[i], &head);
        next_same[i] = (long)head;
        ok = bid[i] && kd_i64map_put(&first_by_name, bid[i], (int64_t)i) &&
             kd_i64map_put(&by_key, name_category_key(bid[i], x->b[i].category), (int64_t)i);
    }
    for (size_t i = 0; ok && i < nc; i++) {
        kd_sid id = generated[i] ? 0 : kd_intern_find(names, x->c[i].name, strlen(x->c[i].name));
        int64_t at;
        if (id && kd_i64map_get(&by_key, name_category_key(id, x->c[i].category), &at) && unmatched_b(x, (size_t)at) &&
            unmatched_c(x, i))
            link_pair(x, (size_t)at, i, KD_MATCH_EXACT, NULL);
    }
    for (size_t i = 0; ok && i < nc; i++) {
        if (!unmatched_c(x, i) || generated[i])
            continue;
        kd_sid id = kd_intern_find(names, x->c[i].name, strlen(x->c[i].name));
        int64_t at = -1;
        if (!id || !kd_i64map_get(&first_by_name, id, &at))
            continue;
        for (long k = (long)at; k >= 0; k = next_same[k])
            if (unmatched_b(x, (size_t)k)) {
                link_pair(x, (size_t)k, i, KD_MATCH_EXACT, NULL);
                break;
            }
    }
    x->oom = x->oom || !ok;
    kd_interner_free(names);
    kd_i64map_free(&by_key);
    kd_i64map_free(&first_by_name);
    free(next_same);
    free(bid);
    free(generated);
}

/* ---- step 6: the reference's relaxed lookup ------------------------------------------ */

typedef struct {
    const kd_alias_scorer *outer;
    const size_t *at_of; /* index key -> baseline item */
} alias_ctx;

static char *alias_text(void *ctx, size_t k)
{
    const alias_ctx *a = ctx;
    return a->outer->text(a->outer->ctx, a->at_of[k]);
}

static int alias_bonus(void *ctx, size_t k)
{
    const alias_ctx *a = ctx;
    return a->outer->bonus(a->outer->ctx, a->at_of[k]);
}

typedef struct {
    size_t i;
    double total;
} by_total;

static int cmp_by_total_desc(const void *pa, const void *pb)
{
    const by_total *a = pa, *b = pb;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* The unmatched candidates, heaviest first (ties in list order). */
static by_total *unmatched_by_total(matcher *x, size_t *count)
{
    by_total *order = malloc((x->nc ? x->nc : 1) * sizeof *order);
    size_t k = 0;
    if (!order) {
        x->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < x->nc; i++)
        if (unmatched_c(x, i))
            order[k++] = (by_total){i, x->c[i].total_us};
    qsort(order, k, sizeof *order, cmp_by_total_desc);
    *count = k;
    return order;
}

static const char *relaxed_lead(kd_match_kind k)
{
    switch (k) {
    case KD_MATCH_PREFIX: return "one name starts the other";
    case KD_MATCH_SUBSTRING: return "one name contains the other";
    case KD_MATCH_LONG_PREFIX: return "the names share a long common prefix";
    case KD_MATCH_ALIAS: return "the same alias group";
    default: return "";
    }
}

/* product.md §3 step 2: unmatched candidates by descending total time, each
 * looked up among the still-unmatched baseline kernels; one-to-one. The
 * index holds only the baseline kernels left unmatched, in their order (so
 * ties still go to the first), and a match claims its key. */
static void match_relaxed(matcher *x, const kd_match_options *opt)
{
    size_t nb = x->nb, nk = 0, k = 0;
    kd_relaxed_index ix;
    size_t *at_of = malloc((nb ? nb : 1) * sizeof *at_of);
    const char **keys = malloc((nb ? nb : 1) * sizeof *keys);
    by_total *order = unmatched_by_total(x, &k);
    for (size_t i = 0; keys && at_of && i < nb; i++)
        if (unmatched_b(x, i)) {
            at_of[nk] = i;
            keys[nk++] = x->b[i].name;
        }
    if (!order || !at_of || !keys || !kd_relaxed_index_build(&ix, keys, nk)) {
        x->oom = true;
        free(order);
        free(at_of);
        free(keys);
        return;
    }
    alias_ctx actx = {opt ? opt->alias : NULL, at_of};
    kd_alias_scorer alias = {alias_text, alias_bonus, &actx};
    for (size_t i = 0; i < k && nk; i++) {
        kd_match_kind kind;
        long at = kd_relaxed_lookup(&ix, x->c[order[i].i].name, actx.outer ? &alias : NULL, NULL, &kind);
        if (at >= 0) {
            size_t bi = at_of[at], ci = order[i].i;
            link_pair(x, bi, ci, kind, launch_evidence(x, bi, ci, relaxed_lead(kind)));
            kd_relaxed_index_claim(&ix, (size_t)at);
        }
    }
    kd_relaxed_index_free(&ix);
    free(order);
    free(at_of);
    free(keys);
}

/* ---- step 7: replaced ---------------------------------------------------------- */

/* For each item of a side, the matched kernels launched first just before
 * and just after it (as baseline indexes: the pair's id), -1 when none. */
typedef struct {
    long *prev, *next;
    size_t *by_rank; /* item at each rank */
    bool *anchor;    /* matched before this step */
    size_t *gap;     /* unmatched kernels between the item's two neighbours */
} neighbours;

static bool neighbours_build(matcher *x, bool cand, neighbours *nb)
{
    size_t n = cand ? x->nc : x->nb;
    const size_t *rank = cand ? x->rank_c : x->rank_b;
    nb->prev = malloc((n ? n : 1) * sizeof *nb->prev);
    nb->next = malloc((n ? n : 1) * sizeof *nb->next);
    nb->by_rank = malloc((n ? n : 1) * sizeof *nb->by_rank);
    nb->anchor = malloc((n ? n : 1) * sizeof *nb->anchor);
    nb->gap = malloc((n ? n : 1) * sizeof *nb->gap);
    if (!nb->prev || !nb->next || !nb->by_rank || !nb->anchor || !nb->gap)
        return false;
    for (size_t i = 0; i < n; i++) {
        nb->by_rank[rank[i]] = i;
        nb->anchor[i] = cand ? x->m->base_of[i] >= 0 : x->m->cand_of[i] >= 0;
    }
    long last = -1;
    for (size_t r = 0; r < n; r++) {
        size_t i = nb->by_rank[r];
        nb->prev[i] = last;
        long id = cand ? x->m->base_of[i] : (x->m->cand_of[i] >= 0 ? (long)i : -1);
        if (id >= 0)
            last = id;
    }
    last = -1;
    for (size_t r = n; r-- > 0;) {
        size_t i = nb->by_rank[r];
        nb->next[i] = last;
        long id = cand ? x->m->base_of[i] : (x->m->cand_of[i] >= 0 ? (long)i : -1);
        if (id >= 0)
            last = id;
    }
    /* each run of unmatched kernels between two matched ones: its length */
    for (size_t r = 0; r < n;) {
        if (nb->anchor[nb->by_rank[r]]) {
            nb->gap[nb->by_rank[r++]] = 0;
            continue;
        }
        size_t end = r;
        while (end < n && !nb->anchor[nb->by_rank[end]])
            end++;
        for (size_t k = r; k < end; k++)
            nb->gap[nb->by_rank[k]] = end - r;
        r = end;
    }
    return true;
}

static void neighbours_free(neighbours *nb)
{
    free(nb->prev);
    free(nb->next);
    free(nb->by_rank);
    free(nb->anchor);
    free(nb->gap);
}

typedef struct {
    int score;
    double gap, dist;
    long bi;
} replaced_best;

static int replaced_score(const matcher *x, const neighbours *nb, const neighbours *nc, size_t bi, size_t ci)
{
    const kd_match_item *b = &x->b[bi], *c = &x->c[ci];
    uint64_t lo = b->launches < c->launches ? b->launches : c->launches;
    uint64_t hi = b->launches < c->launches ? c->launches : b->launches;
    /* not the category: a classification may differ (aiter::fmha_fwd is
     * compute, sage_fwd other) where the work is the same */
    if (!lo || (double)hi / (double)lo > REPLACED_MAX_RATIO || nb->gap[bi] > REPLACED_MAX_GAP ||
        nc->gap[ci] > REPLACED_MAX_GAP)
        return -1;
    int score = 0;
    score += nb->prev[bi] >= 0 && nb->prev[bi] == nc->prev[ci] ? 2 : 0;
    score += nb->next[bi] >= 0 && nb->next[bi] == nc->next[ci] ? 2 : 0;
    score += both_set_same(b->scope, c->scope) ? 1 : 0;
    score += both_set_same(b->launch_op, c->launch_op) ? 1 : 0;
    return score;
}

static void offer_replaced(const matcher *x, const neighbours *nb, const neighbours *nc, size_t bi, size_t ci,
                           replaced_best *best)
{
    if (!unmatched_b(x, bi))
        return;
    int score = replaced_score(x, nb, nc, bi, ci);
    /* a shared neighbour is required: scope and launch op alone say little */
    if (score < 3)
        return;
    double gap = launch_gap(x->b[bi].launches, x->c[ci].launches);
    double dist = fabs(order_pos(x->rank_b, x->nb, bi) - order_pos(x->rank_c, x->nc, ci));
    if (best->bi < 0 || score > best->score || (score == best->score && gap < best->gap) ||
        (score == best->score && gap == best->gap && dist < best->dist)) {
        *best = (replaced_best){score, gap, dist, (long)bi};
    }
}

/* The baseline items whose neighbour before (or after) is `anchor`, by
 * rank: a candidate can only be paired with one of them (a shared
 * neighbour is required). */
static void scan_anchor(const matcher *x, const neighbours *nb, const neighbours *nc, long anchor, bool after,
                        size_t ci, replaced_best *best)
{
    if (anchor < 0)
        return;
    /* the baseline items sharing the neighbour sit next to it in launch
     * order: walk away from it until another matched kernel */
    long r = (long)x->rank_b[anchor];
    size_t seen = 0;
    for (long k = after ? r + 1 : r - 1; k >= 0 && (size_t)k < x->nb && seen < REPLACED_SCAN_LIMIT;
         k += after ? 1 : -1, seen++) {
        size_t bi = nb->by_rank[k];
        if (nb->anchor[bi])
            break; /* the gap ends at the next kernel matched before */
        offer_replaced(x, nb, nc, bi, ci, best);
    }
}

static void match_replaced(matcher *x)
{
    neighbours nb = {0}, nc = {0};
    size_t k = 0;
    by_total *order = NULL;
    if (!neighbours_build(x, false, &nb) || !neighbours_build(x, true, &nc) ||
        !(order = unmatched_by_total(x, &k))) {
        x->oom = true;
        goto done;
    }
    for (size_t o = 0; o < k; o++) {
        size_t ci = order[o].i;
        replaced_best best = {0, 0.0, 0.0, -1};
        scan_anchor(x, &nb, &nc, nc.prev[ci], true, ci, &best);
        scan_anchor(x, &nb, &nc, nc.next[ci], false, ci, &best);
        if (best.bi < 0)
            continue;
        size_t bi = (size_t)best.bi;
        char lead[512] = "the same place in the launch order";
        if (nb.prev[bi] >= 0 && nb.prev[bi] == nc.prev[ci])
            snprintf(lead + strlen(lead), sizeof lead - strlen(lead), " (after %.60s)", x->b[nb.prev[bi]].name);
        if (nb.next[bi] >= 0 && nb.next[bi] == nc.next[ci])
            snprintf(lead + strlen(lead), sizeof lead - strlen(lead), " (before %.60s)", x->b[nb.next[bi]].name);
        if (both_set_same(x->b[bi].scope, x->c[ci].scope))
            snprintf(lead + strlen(lead), sizeof lead - strlen(lead), "; same scope %.80s", x->c[ci].scope);
        if (both_set_same(x->b[bi].launch_op, x->c[ci].launch_op))
            snprintf(lead + strlen(lead), sizeof lead - strlen(lead), "; same launch op %.60s",
                     x->c[ci].launch_op);
        link_pair(x, bi, ci, KD_MATCH_REPLACED, launch_evidence(x, bi, ci, lead));
    }
done:
    neighbours_free(&nb);
    neighbours_free(&nc);
    free(order);
}

/* ---- the matcher ------------------------------------------------------------------ */

kd_status kd_match_kernels(const kd_match_item *b, size_t nb, const kd_match_item *c, size_t nc,
                           const kd_match_options *opt, kd_matching *out, kd_error *err)
{
    memset(out, 0, sizeof *out);
    out->cand_of = malloc((nb ? nb : 1) * sizeof *out->cand_of);
    out->base_of = malloc((nc ? nc : 1) * sizeof *out->base_of);
    out->kind = calloc(nc ? nc : 1, sizeof *out->kind);
    out->evidence = calloc(nc ? nc : 1, sizeof *out->evidence);
    matcher x = {b, c, nb, nc, out, ranks_of(b, nb), ranks_of(c, nc), false};
    if (!out->cand_of || !out->base_of || !out->kind || !out->evidence || !x.rank_b || !x.rank_c) {
        free(x.rank_b);
        free(x.rank_c);
        kd_matching_free(out, nc);
        return kd_fail(err, KD_ENOMEM, "out of memory matching kernels");
    }
    for (size_t i = 0; i < nb; i++)
        out->cand_of[i] = -1;
    for (size_t i = 0; i < nc; i++)
        out->base_of[i] = -1;
    match_rules(&x, opt);
    if (!x.oom)
        match_exact(&x);
    if (!x.oom)
        match_by_key(&x, renumber_key, KD_MATCH_RENUMBERED, why_renumbered);
    if (!x.oom)
        match_by_key(&x, template_key, KD_MATCH_TEMPLATE, why_template);
    if (!x.oom)
        match_by_key(&x, retarget_key, KD_MATCH_RETARGETED, why_retargeted);
    if (!x.oom)
        match_relaxed(&x, opt);
    if (!x.oom)
        match_replaced(&x);
    free(x.rank_b);
    free(x.rank_c);
    if (x.oom) {
        kd_matching_free(out, nc);
        return kd_fail(err, KD_ENOMEM, "out of memory matching kernels");
    }
    return KD_OK;
}

void kd_matching_free(kd_matching *m, size_t nc)
{
    for (size_t i = 0; m->evidence && i < nc; i++)
        free(m->evidence[i]);
    free(m->evidence);
    free(m->cand_of);
    free(m->base_of);
    free(m->kind);
    memset(m, 0, sizeof *m);
}
