/* kernelsites.c — kernel-site attribution (kernelsites.h, kernel-sites.md).
 *
 * Per trace: the KH kernels of the KH pid, the cpu_op and launch indices
 * (grouped by External id / correlation, sorted by ts), and per-thread frame
 * timelines. A kernel's site needs "the frames active at q" on one thread;
 * all probes of a thread are answered by one sweep over its frames in (ts,
 * -end) order with the probes sorted by time: a frame joins the active list
 * when its ts is reached and leaves for good once its end falls more than
 * 1e-3 behind the probe, so the work is the frame count plus the active
 * depth per probe, not a scan of the thread per kernel. */
#include "config.h"

#include "kerndiff/kernelsites.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/counter.h"
#include "kerndiff/extract.h"
#include "kerndiff/hashmap.h"
#include "kerndiff/lookup.h"
#include "kerndiff/sort.h"
#include "kerndiff/stage.h"

/* ======================================================================
 * kernel-sites §2: location rules
 * ====================================================================== */

typedef struct {
    const char *prefix;
    int value;
} proj_prefix;

/* kernel-sites §2 PROJ, tested in this order */
static const proj_prefix PROJ[] = {
    {"python/sglang/", 300}, {"sglang/", 290},       {"vllm/", 285},      {"python/tokenspeed/", 283},
    {"tokenspeed/", 283},    {"tensorrt_llm/", 280}, {"sgl_kernel/", 260},
};

static const proj_prefix *proj_of(const char *s)
{
    for (size_t i = 0; i < sizeof PROJ / sizeof *PROJ; i++)
        if (kd_starts_with(s, PROJ[i].prefix))
            return &PROJ[i];
    return NULL;
}

static const char *const LOW_SIGNAL[] = {
    "__torch_function__", "__torch_dispatch__", "__call__", "_call_impl", "_wrapped_call_impl",
    "model_executor/parameter.py:", "model_executor/cuda_graph_runner.py:",
    "compilation/cuda_graph.py:", "pyexecutor/cuda_graph_runner.py:", "pyexecutor/py_executor.py:",
    "_torch/utils.py:", "torch/fx/graph_module.py:", NULL,
};

/* low_signal on an already stripped string */
static bool low_signal_stripped(const char *t, bool *oom)
{
    if (!*t)
        return false;
    char *l = kd_lower(t);
    if (!l) {
        *oom = true;
        return false;
    }
    bool r = kd_contains_any(l, LOW_SIGNAL);
    free(l);
    return r;
}

bool kd_ks_is_low_signal(const char *loc)
{
    char *t = kd_strip(loc ? loc : "");
    bool oom = false;
    bool r = t && low_signal_stripped(t, &oom);
    free(t);
    return r;
}

bool kd_ks_is_preferred(const char *loc)
{
    char *t = kd_strip(loc ? loc : "");
    bool r = t && proj_of(t);
    free(t);
    return r;
}

/* kernel-sites §2 source_location_priority on a stripped string */
static int slp_stripped(const char *t, bool *oom)
{
    if (!*t || strcmp(t, "unresolved") == 0)
        return -100;
    int pen = low_signal_stripped(t, oom) ? 80 : 0;
    const proj_prefix *p = proj_of(t);
    if (p)
        return p->value - pen;
    if (kd_starts_with(t, "python/"))
        return 180 - pen;
    if (kd_starts_with(t, "torch/") || strstr(t, "/torch/"))
        return 20; /* no pen */
    if (strstr(t, ".py:"))
        return 120 - pen;
    return 0;
}

int kd_ks_source_location_priority(const char *loc)
{
    char *t = kd_strip(loc ? loc : "");
    bool oom = false;
    int r = t ? slp_stripped(t, &oom) : -100;
    free(t);
    return r;
}

static const char *const NOISE[] = {
    "threading.py(", "multiprocessing/", "contextlib.py(", "torch/utils/_contextlib.py(",
    "runpy.py(", "asyncio/", "selectors.py(", "queue.py(", "socket.py(", "tqdm/_monitor.py(",
    "<string>(", "<built-in method ", NULL,
};

static bool starts_with_any(const char *s, const char *const *prefixes)
{
    for (const char *const *p = prefixes; *p; p++)
        if (kd_starts_with(s, *p))
            return true;
    return false;
}

/* kernel-sites §2 frame_priority rules 4 and 5: absolute checkouts */
static int checkout_priority(const char *raw, int sg, int vl, int ts, int trt, int other)
{
    if (strstr(raw, "/sglang/"))
        return sg;
    if (strstr(raw, "/vllm/"))
        return vl;
    if (strstr(raw, "/tokenspeed/") || strstr(raw, "/TokenSpeed/"))
        return ts;
    if (strstr(raw, "/TensorRT-LLM/") || strstr(raw, "/tensorrt_llm/"))
        return trt;
    return other;
}

/* frame_priority with raw = strip(name), n = nsl(raw) */
static int frame_priority_of(const char *raw, const char *n, bool *oom)
{
    static const char *const ZERO[] = {"triton/runtime/", "triton/backends/", "torch/_ops.py",
                                       "torch/nn/modules/module.py", NULL};
    /* kernel-sites §2 rule 1: NOISE is tested on the raw name */
    if (starts_with_any(raw, NOISE))
        return -20;
    int pen = low_signal_stripped(n, oom) ? 80 : 0;
    const proj_prefix *p = proj_of(n);
    if (p)
        return p->value - pen;
    if (kd_starts_with(n, "triton_kernels/"))
        return 220 - pen;
    if (starts_with_any(n, ZERO))
        return 0;
    if (kd_starts_with(raw, "/data/") || kd_starts_with(raw, "/Users/"))
        return checkout_priority(raw, 120, 118, 117, 116, 100);
    if (strstr(raw, ".py(")) {
        int c = checkout_priority(raw, 110, 108, 107, 106, 0);
        if (c)
            return c;
    }
    if (strstr(n, ".py:"))
        return strstr(raw, "site-packages") || kd_starts_with(n, "torch/") ? 45 : 35;
    return 0;
}

/* fp(name) given norm = nsl(name), which equals nsl(strip(name)) since nsl
 * normalizes first: false on OOM */
static bool frame_priority_norm(const char *name, const char *norm, int *out)
{
    char *raw = kd_strip(name);
    bool oom = !raw;
    if (!oom)
        *out = frame_priority_of(raw, norm, &oom);
    free(raw);
    return !oom;
}

static bool frame_priority(const char *name, int *out)
{
    char *n = kd_normalize_source_location(name);
    bool ok = n && frame_priority_norm(name, n, out);
    free(n);
    return ok;
}

int kd_ks_frame_priority(const char *name)
{
    int p = 0;
    return frame_priority(name ? name : "", &p) ? p : 0;
}

/* kernel-sites §2 stack_loc: split on "->" (not " -> "), strip, re-apply nsl,
 * keep slp > 0, the greatest (slp, index) wins: the last best part. */
bool kd_ks_stack_location(const char *stack, char **out)
{
    *out = NULL;
    if (!stack || !*stack)
        return true;
    char *best = NULL;
    int best_p = 0;
    const char *part = stack;
    bool oom = false;
    for (;;) {
        const char *sep = strstr(part, "->");
        size_t len = sep ? (size_t)(sep - part) : strlen(part);
        char *raw = strndup(part, len);
        char *s = raw ? kd_strip(raw) : NULL;
        char *n = s ? kd_normalize_source_location(s) : NULL;
        free(raw);
        free(s);
        if (!n) {
            oom = true;
            break;
        }
        char *nt = kd_strip(n); /* slp strips its argument */
        int p = nt ? slp_stripped(nt, &oom) : 0;
        oom = oom || !nt;
        free(nt);
        if (!oom && p > 0 && p >= best_p) {
            free(best);
            best = n;
            best_p = p;
        } else {
            free(n);
        }
        if (oom || !sep)
            break;
        part = sep + 2;
    }
    if (oom) {
        free(best);
        return false;
    }
    *out = best;
    return true;
}

/* kernel-sites §2 site_disp */
char *kd_ks_site_display(const char *location, const char *stack)
{
    char *loc = kd_strip(location && *location ? location : "unresolved");
    if (!loc)
        return NULL;
    bool oom = false;
    if (proj_of(loc) && !low_signal_stripped(loc, &oom) && !oom)
        return loc;
    char *s = NULL;
    if (oom || !kd_ks_stack_location(stack, &s)) {
        free(loc);
        return NULL;
    }
    if (s) {
        free(loc);
        return s;
    }
    return loc;
}

/* ======================================================================
 * kernel-sites §0/§4/§5: numeric helpers, matching, choose/stack
 * ====================================================================== */

double kd_ks_round3(double x)
{
    /* kernel-sites §0: glibc "%.3f" + strtod is Python's correctly rounded round(x, 3) */
    if (!isfinite(x))
        return x;
    if (fabs(x) < 0x1p40) {
        /* The same without text. "%.3f" rounds the exact x * 1000 to an
         * integer r, ties to even, and strtod reads r / 1000 back: the
         * double nearest r / 1000, which is what the division gives. Below
         * 2^50, p + e is x * 1000 exactly and every half-integer is a
         * double: when p is not one, p and the exact product lie on the same
         * side of the nearest one (their distance is a nonzero multiple of
         * ulp(p), more than |e|), so they round alike; when p is a tie, e
         * decides. (p == fl + 0.5, not p - fl: no product feeds a
         * subtraction that a compiler might contract into an fma.) */
        double p = x * 1000.0;
        double e = fma(x, 1000.0, -p);
        double fl = floor(p), r;
        if (p == fl + 0.5)
            r = e > 0 ? fl + 1.0 : e < 0 ? fl : nearbyint(p);
        else
            r = nearbyint(p);
        double q = r / 1000.0;
        return q == 0.0 ? copysign(0.0, x) : q; /* "-0.000" reads as -0.0 */
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%.3f", x);
    return strtod(buf, NULL);
}

/* Python float floor division a // b */
static double py_floordiv(double vx, double wx)
{
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0.0 && ((wx < 0) != (mod < 0)))
        div -= 1.0;
    if (div == 0.0)
        return copysign(0.0, vx / wx);
    double fl = floor(div);
    if (div - fl > 0.5)
        fl += 1.0;
    return fl;
}

long kd_ks_match_timed(const double *ts, const double *dur, size_t n, double probe)
{
    if (!n)
        return -1;
    /* kernel-sites §4 step 2: r = bisect_right(ts, probe + 1e-3) */
    double lim = probe + 1e-3;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ts[mid] <= lim)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t r = lo;
    if (r > 0) {
        /* step 4: the up to 4 latest-starting items, nearest by their end */
        size_t from = r > 4 ? r - 4 : 0, best = from;
        double bd = fabs(ts[from] + dur[from] - probe);
        for (size_t i = from + 1; i < r; i++) {
            double d = fabs(ts[i] + dur[i] - probe);
            if (d < bd) {
                bd = d;
                best = i;
            }
        }
        return (long)best;
    }
    /* step 5: the first two items, nearest by their start */
    size_t best = 0;
    if (n > 1 && fabs(ts[1] - probe) < fabs(ts[0] - probe))
        best = 1;
    return (long)best;
}

long kd_ks_choose_frame(const kd_ks_frame *const *act, size_t n)
{
    if (!n)
        return -1;
    /* kernel-sites §5 choose: the first maximal (prio, ts, -dur) */
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        const kd_ks_frame *a = act[i], *b = act[best];
        if (a->prio > b->prio || (a->prio == b->prio && a->ts > b->ts) ||
            (a->prio == b->prio && a->ts == b->ts && -a->dur > -b->dur))
            best = i;
    }
    return (long)best;
}

typedef struct {
    char *s;
    size_t len, cap;
} strbuf;

static bool sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p)
            return false;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return true;
}

static bool sb_cstr(strbuf *b, const char *s) { return sb_add(b, s, strlen(s)); }

/* kernel-sites §5 stack: norms of prio > 0 frames (else the last frame), the last 4 */
static bool stack_into(strbuf *b, const kd_ks_frame *const *act, size_t n)
{
    b->len = 0;
    if (!sb_add(b, "", 0))
        return false;
    if (!n)
        return true;
    size_t picked[4], np = 0;
    for (size_t i = n; i-- > 0 && np < 4;)
        if (act[i]->prio > 0)
            picked[np++] = i;
    if (!np)
        picked[np++] = n - 1;
    for (size_t k = np; k-- > 0;) {
        if (k != np - 1 && !sb_cstr(b, " -> "))
            return false;
        if (!sb_cstr(b, act[picked[k]]->norm))
            return false;
    }
    return true;
}

char *kd_ks_frame_stack(const kd_ks_frame *const *act, size_t n)
{
    strbuf b = {NULL, 0, 0};
    if (!stack_into(&b, act, n)) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

size_t kd_ks_sample_position(size_t i, size_t n)
{
    /* kernel-sites §8 sample: round(i(n-1)/15) never meets .5 */
    return (2 * i * (n - 1) + 15) / 30;
}

/* Python's string order (code points = UTF-8 bytes), NUL-safe */
static int str_order(const kd_interner *in, kd_sid a, kd_sid b)
{
    if (a == b)
        return 0;
    size_t la = kd_str_len(in, a), lb = kd_str_len(in, b);
    int c = memcmp(kd_str(in, a), kd_str(in, b), la < lb ? la : lb);
    if (c)
        return c;
    return la < lb ? -1 : la > lb;
}

/* ======================================================================
 * kernel-sites §3/§4: one trace's records
 * ====================================================================== */

/* What a trace string means here, computed once per distinct string. */
enum { SC_KERNEL = 1, SC_FRAME = 2, SC_MAPPED = 4 };
typedef struct {
    kd_sid canon;          /* kernel: canonicalize_name, in the map's interner */
    const char *category;  /* kernel: KH classify_kernel */
    kd_sid norm;           /* frame: nsl(name), map interner */
    int prio;              /* frame: fp(name) */
    kd_sid mapped;         /* the string itself in the map interner */
    uint8_t have;
} sid_cache;

typedef struct {
    kd_sid raw;    /* trace interner */
    kd_sid canon;  /* map interner */
    const char *category;
    kd_stage stage;
    double ts, dur;
    int64_t ext, corr;
} ks_kernel;

/* Events grouped by an id and sorted by ts within the group (§4). */
typedef struct {
    double *ts, *dur;
    uint32_t *rec; /* index into the trace's records */
    size_t n;
    kd_i64map group; /* id -> group index */
    size_t *start, *len;
} timed_index;

typedef struct {
    uint32_t *idx; /* the thread's frames (trace indices); once prepared in (ts, -end, trace order) */
    size_t n;
    bool prepared;
} thread_frames;

typedef struct {
    const kd_trace *t;
    kd_interner *out;
    kd_i64map cache_ix; /* trace sid -> cache position */
    sid_cache *cache;
    size_t n_cache, cap_cache;
    ks_kernel *k;
    size_t nk;
    timed_index ops, launches;
    kd_i64map thread_of; /* (pid << 32 | tid) -> thread index */
    thread_frames *threads;
    size_t n_threads;
    uint32_t *frame_pool;
} ks_trace;

static int64_t thread_key(kd_sid pid, kd_sid tid) { return (int64_t)(((uint64_t)pid << 32) | tid); }

/* The cache slot of a trace string (NULL on OOM); valid until the next call. */
static sid_cache *cache_of(ks_trace *x, kd_sid s)
{
    int64_t at;
    if (kd_i64map_get(&x->cache_ix, s, &at))
        return &x->cache[at];
    if (x->n_cache == x->cap_cache) {
        size_t cap = x->cap_cache ? x->cap_cache * 2 : 256;
        sid_cache *p = realloc(x->cache, cap * sizeof *p);
        if (!p)
            return NULL;
        x->cache = p;
        x->cap_cache = cap;
    }
    if (!kd_i64map_put(&x->cache_ix, s, (int64_t)x->n_cache))
        return NULL;
    memset(&x->cache[x->n_cache], 0, sizeof *x->cache);
    return &x->cache[x->n_cache++];
}

static bool mapped_sid(ks_trace *x, kd_sid s, kd_sid *out)
{
    sid_cache *c = cache_of(x, s);
    if (!c)
        return false;
    if (!(c->have & SC_MAPPED)) {
        c->mapped = kd_intern(x->out, kd_str(x->t->strings, s), kd_str_len(x->t->strings, s));
        if (!c->mapped)
            return false;
        c->have |= SC_MAPPED;
    }
    *out = c->mapped;
    return true;
}

static const sid_cache *kernel_name_info(ks_trace *x, kd_sid s)
{
    sid_cache *c = cache_of(x, s);
    if (!c || (c->have & SC_KERNEL))
        return c;
    const char *raw = kd_str(x->t->strings, s);
    char *canon = kd_canonicalize_kernel_name(raw);
    if (!canon)
        return NULL;
    c->canon = kd_intern_cstr(x->out, canon);
    free(canon);
    c->category = kd_rules_classify_site(kd_trace_rules(x->t), raw); /* kernel-sites §2: on the raw name */
    c->have |= SC_KERNEL;
    return c->canon ? c : NULL;
}

static const sid_cache *frame_name_info(ks_trace *x, kd_sid s)
{
    sid_cache *c = cache_of(x, s);
    if (!c || (c->have & SC_FRAME))
        return c;
    const char *raw = kd_str(x->t->strings, s);
    /* kernel-sites §3 step 4a: norm = nsl(name), prio = fp(name) */
    char *norm = kd_normalize_source_location(raw);
    if (!norm || !frame_priority_norm(raw, norm, &c->prio)) {
        free(norm);
        return NULL;
    }
    c->norm = kd_intern_cstr(x->out, norm);
    free(norm);
    c->have |= SC_FRAME;
    return c->norm ? c : NULL;
}

/* kernel-sites §3 step 4b: ext, else the correlation's External id */
static int64_t ext_with_fallback(const kd_i64map *corr_ext, int64_t ext, int64_t corr)
{
    int64_t v;
    if (ext == KD_NOID && corr != KD_NOID && kd_i64map_get(corr_ext, corr, &v))
        return v;
    return ext;
}

typedef struct {
    int64_t key;
    double ts, dur;
    uint32_t rec;
} timed_item;

static int cmp_timed_item(const void *pa, const void *pb)
{
    const timed_item *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->rec < b->rec ? -1 : a->rec > b->rec;
}

KD_DEFINE_SORT(sort_timed_items, timed_item, cmp_timed_item)

static void timed_index_free(timed_index *ix)
{
    free(ix->ts);
    free(ix->dur);
    free(ix->rec);
    free(ix->start);
    free(ix->len);
    kd_i64map_free(&ix->group);
    memset(ix, 0, sizeof *ix);
}

/* build_cpu_op_index / build_launch_index (§4): group by id, stable by ts */
static bool timed_index_build(timed_index *ix, timed_item *items, size_t n)
{
    memset(ix, 0, sizeof *ix);
    kd_i64map_init(&ix->group);
    sort_timed_items(items, n);
    size_t cap = n ? n : 1;
    ix->ts = malloc(cap * sizeof *ix->ts);
    ix->dur = malloc(cap * sizeof *ix->dur);
    ix->rec = malloc(cap * sizeof *ix->rec);
    ix->start = malloc(cap * sizeof *ix->start);
    ix->len = malloc(cap * sizeof *ix->len);
    if (!ix->ts || !ix->dur || !ix->rec || !ix->start || !ix->len)
        return false;
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        ix->ts[i] = items[i].ts;
        ix->dur[i] = items[i].dur;
        ix->rec[i] = items[i].rec;
        if (i == 0 || items[i].key != items[i - 1].key) {
            if (!kd_i64map_put(&ix->group, items[i].key, (int64_t)ng))
                return false;
            ix->start[ng] = i;
            ix->len[ng++] = 0;
        }
        ix->len[ng - 1]++;
    }
    ix->n = n;
    return true;
}

/* match(index[id], probe): the record index, or -1 */
static long timed_match(const timed_index *ix, int64_t id, double probe)
{
    int64_t g;
    if (id == KD_NOID || !kd_i64map_get(&ix->group, id, &g))
        return -1;
    size_t s = ix->start[g];
    long i = kd_ks_match_timed(ix->ts + s, ix->dur + s, ix->len[g], probe);
    return i < 0 ? -1 : (long)ix->rec[s + (size_t)i];
}

static bool build_op_index(ks_trace *x, const kd_i64map *corr_ext)
{
    const kd_trace *t = x->t;
    timed_item *items = malloc((t->cpu_ops.n ? t->cpu_ops.n : 1) * sizeof *items);
    if (!items)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < t->cpu_ops.n; i++) {
        const kd_cpu_op_rec *op = &t->cpu_ops.v[i];
        /* kernel-sites §3 step 4c: any pid, any dur, ext via correlation */
        int64_t ext = ext_with_fallback(corr_ext, op->ext, op->corr);
        if (ext != KD_NOID)
            items[n++] = (timed_item){ext, op->ts, op->dur, (uint32_t)i};
    }
    bool ok = timed_index_build(&x->ops, items, n);
    free(items);
    return ok;
}

static bool build_launch_index(ks_trace *x)
{
    const kd_trace *t = x->t;
    timed_item *items = malloc((t->launches.n ? t->launches.n : 1) * sizeof *items);
    if (!items)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < t->launches.n; i++) {
        const kd_launch_rec *la = &t->launches.v[i];
        /* kernel-sites §3 step 4d: the KH launch test, corr non-None */
        if ((la->flags & KD_LF_KH) && la->corr != KD_NOID)
            items[n++] = (timed_item){la->corr, la->ts, la->dur, (uint32_t)i};
    }
    bool ok = timed_index_build(&x->launches, items, n);
    free(items);
    return ok;
}

/* The thread index of a frame (a new thread gets the next index). */
static bool frame_thread(ks_trace *x, int64_t key, size_t **count, size_t *cap, int64_t *th)
{
    if (kd_i64map_get(&x->thread_of, key, th))
        return true;
    *th = (int64_t)x->n_threads;
    if (x->n_threads == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        size_t *c = realloc(*count, nc * sizeof *c);
        if (!c)
            return false;
        *count = c;
        *cap = nc;
    }
    (*count)[x->n_threads++] = 0;
    return kd_i64map_put(&x->thread_of, key, *th);
}

/* Frames bucketed per (pid, tid) in trace order (§3 step 4a: any dur). */
static bool bucket_frames(ks_trace *x)
{
    const kd_trace *t = x->t;
    size_t nf = t->frames.n, *count = NULL, cap = 0;
    uint32_t *tix = malloc((nf ? nf : 1) * sizeof *tix);
    bool ok = tix != NULL;
    int64_t last_key = 0, th = -1;
    for (size_t i = 0; ok && i < nf; i++) {
        const kd_frame_rec *f = &t->frames.v[i];
        int64_t key = thread_key(f->pid, f->tid);
        if (th < 0 || key != last_key) /* frames of one thread come in runs */
            ok = frame_thread(x, key, &count, &cap, &th);
        last_key = key;
        if (ok) {
            tix[i] = (uint32_t)th;
            count[th]++;
        }
    }
    x->threads = ok ? calloc(x->n_threads ? x->n_threads : 1, sizeof *x->threads) : NULL;
    x->frame_pool = ok ? malloc((nf ? nf : 1) * sizeof *x->frame_pool) : NULL;
    ok = ok && x->threads && x->frame_pool;
    size_t off = 0;
    for (size_t i = 0; ok && i < x->n_threads; i++) {
        x->threads[i].idx = x->frame_pool + off;
        off += count[i];
    }
    for (size_t i = 0; ok && i < nf; i++) {
        thread_frames *tf = &x->threads[tix[i]];
        tf->idx[tf->n++] = (uint32_t)i;
    }
    free(tix);
    free(count);
    return ok;
}

typedef struct {
    double ts, end;
    uint32_t order;
} frame_key;

/* kernel-sites §5 active order: (ts asc, end desc, trace order) */
static int cmp_frame_key(const frame_key *a, const frame_key *b)
{
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_frame_key_v(const void *a, const void *b) { return cmp_frame_key(a, b); }

static frame_key key_of_frame(const kd_trace *t, uint32_t i)
{
    const kd_frame_rec *f = &t->frames.v[i];
    return (frame_key){f->ts, f->ts + f->dur, i};
}

KD_DEFINE_SORT(sort_frame_keys, frame_key, cmp_frame_key_v)

/* A thread's frames in the active order; real traces are already in it. */
static bool prepare_thread(const ks_trace *x, thread_frames *tf)
{
    if (tf->prepared)
        return true;
    bool sorted = true;
    for (size_t i = 1; sorted && i < tf->n; i++) {
        frame_key a = key_of_frame(x->t, tf->idx[i - 1]), b = key_of_frame(x->t, tf->idx[i]);
        sorted = cmp_frame_key(&a, &b) < 0;
    }
    if (!sorted) {
        frame_key *keys = malloc(tf->n * sizeof *keys);
        if (!keys)
            return false;
        for (size_t i = 0; i < tf->n; i++)
            keys[i] = key_of_frame(x->t, tf->idx[i]);
        sort_frame_keys(keys, tf->n);
        for (size_t i = 0; i < tf->n; i++)
            tf->idx[i] = keys[i].order;
        free(keys);
    }
    tf->prepared = true;
    return true;
}

static void ks_trace_free(ks_trace *x)
{
    kd_i64map_free(&x->cache_ix);
    free(x->cache);
    free(x->k);
    timed_index_free(&x->ops);
    timed_index_free(&x->launches);
    kd_i64map_free(&x->thread_of);
    free(x->threads);
    free(x->frame_pool);
    memset(x, 0, sizeof *x);
}

/* kernel-sites §3 step 4e: the KH kernels of the KH pid, in trace order */
static bool collect_kernels(ks_trace *x, const kd_i64map *corr_ext, const kd_stage_annotations *ann)
{
    static const char *const preferred[] = {"TP00", "TP-0", NULL};
    const kd_trace *t = x->t;
    /* §3 step 3: no pid substring ever reaches KH */
    kd_sid pid = kd_select_heaviest_pid(t, KD_KF_KH_KERNEL, NULL, preferred);
    x->k = malloc((t->kernels.n ? t->kernels.n : 1) * sizeof *x->k);
    if (!x->k)
        return false;
    for (size_t i = 0; pid && i < t->kernels.n; i++) {
        const kd_kernel_rec *r = &t->kernels.v[i];
        if (!(r->flags & KD_KF_KH_KERNEL) || r->pid != pid)
            continue;
        const sid_cache *c = kernel_name_info(x, r->name);
        if (!c)
            return false;
        int64_t ext = ext_with_fallback(corr_ext, r->ext, r->corr);
        x->k[x->nk++] = (ks_kernel){r->name, c->canon, c->category,
                                    kd_resolve_kernel_stage(ann, r->ts, ext),
                                    r->ts, r->dur, ext, r->corr};
    }
    return true;
}

static kd_status ks_trace_load(const kd_trace *t, kd_interner *out, ks_trace *x, kd_error *err)
{
    memset(x, 0, sizeof *x);
    x->t = t;
    x->out = out;
    kd_i64map_init(&x->cache_ix);
    kd_i64map_init(&x->ops.group);
    kd_i64map_init(&x->launches.group);
    kd_i64map_init(&x->thread_of);
    kd_i64map corr_ext;
    kd_i64map_init(&corr_ext);
    /* kernel-sites §3 step 1: corr -> ext, later events win */
    bool ok = true;
    for (size_t i = 0; ok && i < t->corr_ext.n; i++)
        ok = kd_i64map_put(&corr_ext, t->corr_ext.v[i].corr, t->corr_ext.v[i].ext);
    kd_stage_annotations ann;
    kd_status st = ok ? kd_stage_annotations_build(t, &ann, err) : KD_ENOMEM;
    if (st == KD_OK) {
        ok = collect_kernels(x, &corr_ext, &ann);
        kd_stage_annotations_free(&ann);
        /* the indices are only needed when there is a kernel to attribute */
        ok = ok && (!x->nk || (build_op_index(x, &corr_ext) && build_launch_index(x) &&
                               bucket_frames(x)));
    }
    kd_i64map_free(&corr_ext);
    if (st == KD_OK && ok)
        return KD_OK;
    ks_trace_free(x);
    if (st != KD_OK && st != KD_ENOMEM)
        return st;
    return kd_fail(err, KD_ENOMEM, "%s: out of memory building kernel sites", t->path);
}

/* ======================================================================
 * kernel-sites §5: the site of each kernel
 * ====================================================================== */

typedef struct {
    kd_sid loc;   /* map interner; "unresolved" when none */
    kd_sid stack; /* 0 = none */
    kd_sid op;    /* 0 = none (or an empty name) */
} ks_site;

typedef struct {
    uint32_t thread;
    double q;
    uint32_t id; /* the kernel position it answers */
} probe;

typedef struct {
    bool found;
    kd_sid loc, stack;
} probe_result;

static int cmp_probe(const void *pa, const void *pb)
{
    const probe *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->q != b->q)
        return a->q < b->q ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

KD_DEFINE_SORT(sort_probes, probe, cmp_probe)

typedef struct {
    uint32_t *active; /* trace frame indices, active order */
    kd_ks_frame *fr;
    const kd_ks_frame **act;
    kd_sid *norm;
    size_t cap;
    strbuf stack;
} sweep_buf;

static bool sweep_reserve(sweep_buf *b, size_t n)
{
    if (n <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *a = realloc(b->active, cap * sizeof *a);
    if (a)
        b->active = a;
    kd_ks_frame *f = a ? realloc(b->fr, cap * sizeof *f) : NULL;
    if (f)
        b->fr = f;
    const kd_ks_frame **p = f ? realloc(b->act, cap * sizeof *p) : NULL;
    if (p)
        b->act = p;
    kd_sid *s = p ? realloc(b->norm, cap * sizeof *s) : NULL;
    if (!s)
        return false;
    b->norm = s;
    b->cap = cap;
    return true;
}

/* The active frames -> choose / stack (§5). */
static bool answer_probe(ks_trace *x, sweep_buf *b, size_t na, probe_result *r)
{
    r->found = na > 0;
    if (!na)
        return true;
    for (size_t i = 0; i < na; i++) {
        const kd_frame_rec *f = &x->t->frames.v[b->active[i]];
        const sid_cache *c = frame_name_info(x, f->name);
        if (!c)
            return false;
        b->fr[i] = (kd_ks_frame){kd_str(x->out, c->norm), c->prio, f->ts, f->dur};
        b->norm[i] = c->norm;
        b->act[i] = &b->fr[i];
    }
    long c = kd_ks_choose_frame(b->act, na);
    if (!stack_into(&b->stack, b->act, na))
        return false;
    r->loc = b->norm[c];
    r->stack = b->stack.len ? kd_intern(x->out, b->stack.s, b->stack.len) : 0;
    return !b->stack.len || r->stack;
}

/* One thread's probes, ascending q: frames join at ts <= q and leave for
 * good once end < q - 1e-3 (a later probe only raises the bound). */
static bool sweep_thread(ks_trace *x, thread_frames *tf, const probe *p, size_t np,
                         probe_result *res, sweep_buf *b)
{
    if (!prepare_thread(x, tf))
        return false;
    const kd_frame_rec *fv = x->t->frames.v;
    size_t next = 0, na = 0;
    probe_result last = {false, 0, 0};
    bool have_last = false;
    for (size_t i = 0; i < np; i++) {
        double q = p[i].q;
        bool changed = false;
        for (; next < tf->n && fv[tf->idx[next]].ts <= q; next++) {
            if (!sweep_reserve(b, na + 1))
                return false;
            b->active[na++] = tf->idx[next];
            changed = true;
        }
        double lim = q - 1e-3;
        size_t keep = 0;
        for (size_t j = 0; j < na; j++) {
            const kd_frame_rec *f = &fv[b->active[j]];
            if (f->ts + f->dur >= lim)
                b->active[keep++] = b->active[j];
        }
        changed = changed || keep != na;
        na = keep;
        /* an unchanged active list gives the same answer */
        if (changed || !have_last) {
            if (!answer_probe(x, b, na, &last))
                return false;
            have_last = true;
        }
        res[p[i].id] = last;
    }
    return true;
}

/* Answers probes (sorted in place); res is indexed by probe id. */
static bool run_probes(ks_trace *x, probe *p, size_t np, probe_result *res)
{
    sort_probes(p, np);
    sweep_buf b;
    memset(&b, 0, sizeof b);
    bool ok = true;
    for (size_t i = 0; ok && i < np;) {
        size_t j = i;
        while (j < np && p[j].thread == p[i].thread)
            j++;
        ok = sweep_thread(x, &x->threads[p[i].thread], p + i, j - i, res, &b);
        i = j;
    }
    free(b.active);
    free(b.fr);
    free(b.act);
    free(b.norm);
    free(b.stack.s);
    return ok;
}

static bool thread_index(const ks_trace *x, kd_sid pid, kd_sid tid, uint32_t *out)
{
    int64_t th;
    if (!kd_i64map_get(&x->thread_of, thread_key(pid, tid), &th))
        return false;
    *out = (uint32_t)th;
    return true;
}

/* An op / launch name as a site's op: the map interner id, 0 for "". */
static bool op_name(ks_trace *x, kd_sid s, kd_sid *out)
{
    *out = 0;
    if (!kd_str_len(x->t->strings, s))
        return true;
    return mapped_sid(x, s, out);
}

typedef struct {
    long op, la; /* matched records, -1 none */
} site_match;

/* step 1 probes: the nearest cpu_op by ext, at op.ts + min(dur/2, 1) */
static size_t op_probes(ks_trace *x, const uint32_t *ks, size_t n, site_match *m, probe *p)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        const ks_kernel *k = &x->k[ks[i]];
        m[i].op = timed_match(&x->ops, k->ext, k->ts);
        m[i].la = -1;
        uint32_t th;
        if (m[i].op < 0)
            continue;
        const kd_cpu_op_rec *op = &x->t->cpu_ops.v[m[i].op];
        if (thread_index(x, op->pid, op->tid, &th))
            p[np++] = (probe){th, op->ts + fmin(op->dur * 0.5, 1.0), (uint32_t)i};
    }
    return np;
}

/* step 2 probes: the launch by correlation, also when the op had no active frame */
static size_t launch_probes(ks_trace *x, const uint32_t *ks, size_t n, const probe_result *r1,
                            site_match *m, probe *p)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        if (r1[i].found)
            continue;
        const ks_kernel *k = &x->k[ks[i]];
        m[i].la = timed_match(&x->launches, k->corr, k->ts);
        uint32_t th;
        if (m[i].la < 0)
            continue;
        const kd_launch_rec *la = &x->t->launches.v[m[i].la];
        if (thread_index(x, la->pid, la->tid, &th))
            p[np++] = (probe){th, la->ts, (uint32_t)i};
    }
    return np;
}

/* site(k) (§5) for the kernels at positions ks[0..n), into sites[0..n). */
static bool compute_sites(ks_trace *x, const uint32_t *ks, size_t n, ks_site *sites)
{
    const kd_trace *t = x->t;
    kd_sid unresolved = kd_intern_cstr(x->out, "unresolved");
    site_match *m = malloc((n ? n : 1) * sizeof *m);
    probe *p = malloc((n ? n : 1) * sizeof *p);
    probe_result *r1 = calloc(n ? n : 1, sizeof *r1), *r2 = calloc(n ? n : 1, sizeof *r2);
    bool ok = unresolved && m && p && r1 && r2;
    ok = ok && run_probes(x, p, op_probes(x, ks, n, m, p), r1);
    ok = ok && run_probes(x, p, launch_probes(x, ks, n, r1, m, p), r2);
    for (size_t i = 0; ok && i < n; i++) {
        kd_sid opn = 0, lan = 0;
        if (m[i].op >= 0)
            ok = op_name(x, t->cpu_ops.v[m[i].op].name, &opn);
        if (ok && m[i].la >= 0)
            ok = op_name(x, t->launches.v[m[i].la].name, &lan);
        if (r1[i].found)
            sites[i] = (ks_site){r1[i].loc, r1[i].stack, opn};
        else if (r2[i].found)
            sites[i] = (ks_site){r2[i].loc, r2[i].stack, m[i].op >= 0 ? opn : lan};
        else if (m[i].la >= 0)
            /* kernel-sites §11.1: the launch fallback keeps the launch name */
            sites[i] = (ks_site){unresolved, 0, lan};
        else
            sites[i] = (ks_site){unresolved, 0, opn};
    }
    free(m);
    free(p);
    free(r1);
    free(r2);
    return ok;
}

/* ======================================================================
 * kernel-sites §6: aggregation and merge
 * ====================================================================== */

typedef struct {
    kd_sid loc;
    double total;
    int64_t count;
    kd_counter ops, stacks;
} site_acc;

typedef struct {
    kd_sid name;
    site_acc *s;
    size_t n, cap;
} kernel_acc;

typedef struct {
    kernel_acc *k;
    size_t n, cap;
    kd_i64map kidx; /* name -> kernel position */
    kd_i64map sidx; /* (kernel position << 32 | loc) -> site position */
} site_stats;

static void site_stats_init(site_stats *s)
{
    memset(s, 0, sizeof *s);
    kd_i64map_init(&s->kidx);
    kd_i64map_init(&s->sidx);
}

static void site_stats_free(site_stats *s)
{
    for (size_t i = 0; i < s->n; i++) {
        for (size_t j = 0; j < s->k[i].n; j++) {
            kd_counter_free(&s->k[i].s[j].ops);
            kd_counter_free(&s->k[i].s[j].stacks);
        }
        free(s->k[i].s);
    }
    free(s->k);
    kd_i64map_free(&s->kidx);
    kd_i64map_free(&s->sidx);
    memset(s, 0, sizeof *s);
}

static kernel_acc *kernel_of(site_stats *s, kd_sid name, size_t *pos)
{
    int64_t at;
    if (kd_i64map_get(&s->kidx, name, &at)) {
        *pos = (size_t)at;
        return &s->k[at];
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        kernel_acc *p = realloc(s->k, cap * sizeof *p);
        if (!p)
            return NULL;
        s->k = p;
        s->cap = cap;
    }
    if (!kd_i64map_put(&s->kidx, name, (int64_t)s->n))
        return NULL;
    s->k[s->n] = (kernel_acc){name, NULL, 0, 0};
    *pos = s->n;
    return &s->k[s->n++];
}

/* stats[name][loc], created on first use (insertion order matters, §6) */
static site_acc *site_of(site_stats *s, kd_sid name, kd_sid loc)
{
    size_t kp;
    kernel_acc *k = kernel_of(s, name, &kp);
    if (!k)
        return NULL;
    int64_t key = (int64_t)(((uint64_t)kp << 32) | loc), at;
    if (kd_i64map_get(&s->sidx, key, &at))
        return &k->s[at];
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 2;
        site_acc *p = realloc(k->s, cap * sizeof *p);
        if (!p)
            return NULL;
        k->s = p;
        k->cap = cap;
    }
    if (!kd_i64map_put(&s->sidx, key, (int64_t)k->n))
        return NULL;
    k->s[k->n] = (site_acc){loc, 0.0, 0, KD_COUNTER_INIT, KD_COUNTER_INIT};
    return &k->s[k->n++];
}

/* aggregate_kernel_sites (§6) over kernels ks with their sites */
static bool aggregate(site_stats *s, const ks_trace *x, const uint32_t *ks, const ks_site *sites,
                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ks_kernel *k = &x->k[ks[i]];
        site_acc *a = site_of(s, k->canon, sites[i].loc);
        if (!a)
            return false;
        a->total += k->dur;
        a->count += 1;
        if (sites[i].op && !kd_counter_add(&a->ops, sites[i].op, 1))
            return false;
        if (sites[i].stack && !kd_counter_add(&a->stacks, sites[i].stack, 1))
            return false;
    }
    return true;
}

/* merge_site_stats (§6): totals add local sums, Counters update */
static bool merge_stats(site_stats *dst, const site_stats *src)
{
    for (size_t i = 0; i < src->n; i++)
        for (size_t j = 0; j < src->k[i].n; j++) {
            const site_acc *from = &src->k[i].s[j];
            site_acc *to = site_of(dst, src->k[i].name, from->loc);
            if (!to)
                return false;
            to->total += from->total;
            to->count += from->count;
            if (!kd_counter_update(&to->ops, &from->ops) ||
                !kd_counter_update(&to->stacks, &from->stacks))
                return false;
        }
    return true;
}

/* {canonical: category}, the last kernel wins (§7) */
static bool update_categories(kd_i64map *cats, const ks_trace *x, const uint32_t *ks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ks_kernel *k = &x->k[ks[i]];
        if (!kd_i64map_put(cats, k->canon, (int64_t)(intptr_t)k->category))
            return false;
    }
    return true;
}

/* ======================================================================
 * kernel-sites §7: payload assembly
 * ====================================================================== */

typedef struct {
    int slp;
    double total;
    int64_t launches;
    size_t order;
} site_key;

static int cmp_site_key_desc(const void *pa, const void *pb)
{
    const site_key *a = pa, *b = pb;
    if (a->slp != b->slp)
        return a->slp > b->slp ? -1 : 1;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    if (a->launches != b->launches)
        return a->launches > b->launches ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static const char *opt_str(const kd_interner *in, kd_sid s) { return s ? kd_str(in, s) : NULL; }

/* Memo of the location rules over interned strings, shared by the payloads
 * of one build: a kernel map's stacks and locations repeat across sites,
 * stages and global. */
typedef struct {
    kd_interner *in;            /* where results are interned; NULL: slp only */
    const kd_interner *strings; /* where the keys live */
    kd_i64map stack_loc;        /* stack -> stack_loc (0 = none) */
    kd_i64map disp;             /* (loc << 32 | stack) -> site_disp */
    kd_i64map disp_slp;         /* (loc << 32 | stack) -> slp(site_disp) */
} loc_memo;

static void loc_memo_init(loc_memo *m, kd_interner *in, const kd_interner *strings)
{
    m->in = in;
    m->strings = strings;
    kd_i64map_init(&m->stack_loc);
    kd_i64map_init(&m->disp);
    kd_i64map_init(&m->disp_slp);
}

static void loc_memo_free(loc_memo *m)
{
    kd_i64map_free(&m->stack_loc);
    kd_i64map_free(&m->disp);
    kd_i64map_free(&m->disp_slp);
}

static int64_t pair_key(kd_sid a, kd_sid b) { return (int64_t)(((uint64_t)a << 32) | b); }

/* stack_loc(stack) as an interned id, 0 for none */
static bool memo_stack_loc(loc_memo *m, kd_sid stack, kd_sid *out)
{
    int64_t v;
    if (kd_i64map_get(&m->stack_loc, stack, &v)) {
        *out = (kd_sid)v;
        return true;
    }
    char *s = NULL;
    if (!kd_ks_stack_location(opt_str(m->strings, stack), &s))
        return false;
    *out = s ? kd_intern_cstr(m->in, s) : 0;
    bool ok = (!s || *out) && kd_i64map_put(&m->stack_loc, stack, *out);
    free(s);
    return ok;
}

/* site_disp(site) as an interned id */
static bool memo_site_disp(loc_memo *m, kd_sid loc, kd_sid stack, kd_sid *out)
{
    int64_t v, key = pair_key(loc, stack);
    if (kd_i64map_get(&m->disp, key, &v)) {
        *out = (kd_sid)v;
        return true;
    }
    char *d = kd_ks_site_display(kd_str(m->strings, loc), opt_str(m->strings, stack));
    *out = d ? kd_intern_cstr(m->in, d) : 0;
    free(d);
    return *out && kd_i64map_put(&m->disp, key, *out);
}

/* slp(site_disp(site)) */
static bool memo_disp_slp(loc_memo *m, kd_sid loc, kd_sid stack, int *out)
{
    int64_t v, key = pair_key(loc, stack);
    if (kd_i64map_get(&m->disp_slp, key, &v)) {
        *out = (int)v;
        return true;
    }
    char *d = kd_ks_site_display(kd_str(m->strings, loc), opt_str(m->strings, stack));
    if (!d)
        return false;
    *out = kd_ks_source_location_priority(d);
    free(d);
    return kd_i64map_put(&m->disp_slp, key, *out);
}

static bool sort_sites(loc_memo *m, kd_site *sites, size_t n)
{
    site_key *keys = malloc((n ? n : 1) * sizeof *keys);
    kd_site *tmp = malloc((n ? n : 1) * sizeof *tmp);
    bool ok = keys && tmp;
    for (size_t i = 0; ok && i < n; i++) {
        /* §7 step 4: slp(site_disp), the ROUNDED total, launches */
        keys[i] = (site_key){0, sites[i].total_us, sites[i].launches, i};
        ok = memo_disp_slp(m, sites[i].location, sites[i].stack, &keys[i].slp);
    }
    if (ok) {
        qsort(keys, n, sizeof *keys, cmp_site_key_desc);
        for (size_t i = 0; i < n; i++)
            tmp[i] = sites[keys[i].order];
        memcpy(sites, tmp, n * sizeof *sites);
    }
    free(keys);
    free(tmp);
    return ok;
}

bool kd_ks_sort_sites(kd_site *sites, size_t n, const kd_interner *strings)
{
    loc_memo m;
    loc_memo_init(&m, NULL, strings);
    bool ok = sort_sites(&m, sites, n);
    loc_memo_free(&m);
    return ok;
}

typedef struct {
    double total;
    size_t order;
} total_key;

static int cmp_total_desc(const void *pa, const void *pb)
{
    const total_key *a = pa, *b = pb;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* One site dict (§7 step 3). */
static bool make_site(loc_memo *m, const site_acc *a, double T, kd_site *out)
{
    kd_sid top_stack = kd_counter_most_common(&a->stacks), d = 0;
    if (top_stack && !memo_stack_loc(m, top_stack, &d))
        return false;
    /* display_location always prefers the stack (§11.2) */
    if (!d)
        d = a->loc;
    *out = (kd_site){a->loc,
                     d,
                     a->count,
                     kd_ks_round3(a->total),
                     T != 0.0 ? kd_ks_round3(100.0 * a->total / T) : 0.0,
                     kd_counter_most_common(&a->ops),
                     top_stack};
    return true;
}

static bool make_entry(loc_memo *m, const kernel_acc *k, const kd_i64map *cats,
                       kd_kernel_entry *e)
{
    int64_t cat;
    e->name = k->name;
    e->category = kd_i64map_get(cats, k->name, &cat) ? (const char *)(intptr_t)cat : "other";
    e->n_sites = 0;
    e->best_location = 0;
    e->sites = malloc((k->n ? k->n : 1) * sizeof *e->sites);
    total_key *order = malloc((k->n ? k->n : 1) * sizeof *order);
    bool ok = e->sites && order;
    double T = 0.0;
    for (size_t i = 0; i < k->n; i++)
        T += k->s[i].total;
    for (size_t i = 0; ok && i < k->n; i++)
        order[i] = (total_key){k->s[i].total, i};
    if (ok) /* §7 step 2: pre-order by the unrounded total */
        qsort(order, k->n, sizeof *order, cmp_total_desc);
    for (size_t i = 0; ok && i < k->n; i++)
        ok = make_site(m, &k->s[order[i].order], T, &e->sites[e->n_sites++]);
    free(order);
    ok = ok && sort_sites(m, e->sites, e->n_sites);
    /* best_location = site_disp(sites[0]), not its display_location */
    if (ok && e->n_sites)
        ok = memo_site_disp(m, e->sites[0].location, e->sites[0].stack, &e->best_location);
    return ok;
}

typedef struct {
    const kd_interner *in;
    kd_sid name;
    size_t pos;
} name_key;

static int cmp_name_key(const void *pa, const void *pb)
{
    const name_key *a = pa, *b = pb;
    int c = str_order(a->in, a->name, b->name);
    return c ? c : (a->pos < b->pos ? -1 : a->pos > b->pos);
}

static void payload_free(kd_stage_payload *p)
{
    for (size_t i = 0; p->v && i < p->n; i++)
        free(p->v[i].sites);
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

/* build_stage_payload (§7): kernels in sorted name order */
static bool build_payload(loc_memo *m, const site_stats *s, const kd_i64map *cats,
                          kd_stage_payload *out)
{
    kd_interner *in = m->in;
    out->strings = in;
    out->n = 0;
    out->v = calloc(s->n ? s->n : 1, sizeof *out->v);
    name_key *names = malloc((s->n ? s->n : 1) * sizeof *names);
    bool ok = out->v && names;
    for (size_t i = 0; ok && i < s->n; i++)
        names[i] = (name_key){in, s->k[i].name, i};
    if (ok)
        qsort(names, s->n, sizeof *names, cmp_name_key);
    for (size_t i = 0; ok && i < s->n; i++) {
        ok = make_entry(m, &s->k[names[i].pos], cats, &out->v[i]);
        out->n = i + 1;
    }
    free(names);
    if (!ok)
        payload_free(out);
    return ok;
}

/* ======================================================================
 * kernel-sites §6/§8: stage groups, sampling
 * ====================================================================== */

typedef struct {
    kd_stage stage;
    uint32_t *ks; /* kernel positions, kernel order */
    size_t n;
} stage_group;

typedef struct {
    stage_group g[KD_STAGE_COUNT];
    size_t n;
    uint32_t *pool;
} stage_groups;

/* group_kernels_by_stage(K, parse_stage(path)) (§6) */
static bool group_by_stage(const ks_trace *x, kd_stage path_stage, stage_groups *out)
{
    memset(out, 0, sizeof *out);
    out->pool = malloc((x->nk ? x->nk : 1) * sizeof *out->pool);
    if (!out->pool)
        return false;
    size_t count[KD_STAGE_COUNT] = {0, 0, 0};
    int slot[KD_STAGE_COUNT] = {-1, -1, -1};
    for (size_t i = 0; i < x->nk; i++) {
        kd_stage st = path_stage != KD_STAGE_ALL ? path_stage : x->k[i].stage;
        if (slot[st] < 0) {
            slot[st] = (int)out->n;
            out->g[out->n++].stage = st;
        }
        count[st]++;
    }
    size_t off = 0;
    for (size_t i = 0; i < out->n; i++) {
        out->g[i].ks = out->pool + off;
        off += count[out->g[i].stage];
    }
    for (size_t i = 0; i < x->nk; i++) {
        kd_stage st = path_stage != KD_STAGE_ALL ? path_stage : x->k[i].stage;
        stage_group *g = &out->g[slot[st]];
        g->ks[g->n++] = (uint32_t)i;
    }
    return true;
}

typedef struct {
    const ks_trace *x;
    uint32_t k;
    size_t pos;
} sample_key;

static int cmp_sample_canon(const void *pa, const void *pb)
{
    const sample_key *a = pa, *b = pb;
    int c = str_order(a->x->out, a->x->k[a->k].canon, b->x->k[b->k].canon);
    return c ? c : (a->pos < b->pos ? -1 : a->pos > b->pos);
}

static int cmp_sample_ts_raw(const void *pa, const void *pb)
{
    const sample_key *a = pa, *b = pb;
    const ks_kernel *ka = &a->x->k[a->k], *kb = &b->x->k[b->k];
    if (ka->ts != kb->ts)
        return ka->ts < kb->ts ? -1 : 1;
    int c = str_order(a->x->t->strings, ka->raw, kb->raw);
    return c ? c : (a->pos < b->pos ? -1 : a->pos > b->pos);
}

/* sample(Ks) (§8): 16 per canonical name in name order, then stable by (ts, raw name) */
static bool sample_group(const ks_trace *x, const stage_group *g, uint32_t **out, size_t *n_out)
{
    sample_key *keys = malloc((g->n ? g->n : 1) * sizeof *keys);
    uint32_t *res = malloc((g->n ? g->n : 1) * sizeof *res);
    if (!keys || !res) {
        free(keys);
        free(res);
        return false;
    }
    for (size_t i = 0; i < g->n; i++)
        keys[i] = (sample_key){x, g->ks[i], i};
    qsort(keys, g->n, sizeof *keys, cmp_sample_canon);
    size_t n = 0;
    for (size_t i = 0; i < g->n;) {
        size_t j = i;
        while (j < g->n && x->k[keys[j].k].canon == x->k[keys[i].k].canon)
            j++;
        size_t len = j - i;
        if (len <= 16)
            for (size_t p = i; p < j; p++)
                keys[n++] = keys[p];
        else
            for (size_t s = 0; s < 16; s++)
                keys[n++] = keys[i + kd_ks_sample_position(s, len)];
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        keys[i].pos = i; /* concatenation order decides ties */
    qsort(keys, n, sizeof *keys, cmp_sample_ts_raw);
    for (size_t i = 0; i < n; i++)
        res[i] = keys[i].k;
    free(keys);
    *out = res;
    *n_out = n;
    return true;
}

/* Sites of the kernels ks[0..n), by kernel position (site(k) depends only on k). */
static bool sites_for(ks_trace *x, const uint32_t *ks, size_t n, ks_site *by_kernel)
{
    ks_site *tmp = malloc((n ? n : 1) * sizeof *tmp);
    bool ok = tmp && compute_sites(x, ks, n, tmp);
    for (size_t i = 0; ok && i < n; i++)
        by_kernel[ks[i]] = tmp[i];
    free(tmp);
    return ok;
}

/* Local aggregation of ks via by_kernel sites. */
static bool aggregate_list(site_stats *s, const ks_trace *x, const uint32_t *ks, size_t n,
                           const ks_site *by_kernel)
{
    ks_site *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return false;
    for (size_t i = 0; i < n; i++)
        tmp[i] = by_kernel[ks[i]];
    bool ok = aggregate(s, x, ks, tmp, n);
    free(tmp);
    return ok;
}

/* ======================================================================
 * kernel-sites §8: drivers
 * ====================================================================== */

static kd_status map_init(kd_kernel_map *m, bool is_kernel_map, kd_error *err)
{
    memset(m, 0, sizeof *m);
    m->is_kernel_map = is_kernel_map;
    m->strings = kd_interner_new();
    if (!m->strings)
        return kd_fail(err, KD_ENOMEM, "out of memory building the kernel map");
    for (int s = 0; s < KD_STAGE_COUNT; s++)
        m->stages[s].strings = m->strings;
    m->global.strings = m->strings;
    return KD_OK;
}

typedef struct {
    site_stats stats[KD_STAGE_COUNT], global;
    kd_i64map cats[KD_STAGE_COUNT], gcats;
    bool has[KD_STAGE_COUNT];
    kd_stage order[KD_STAGE_COUNT];
    size_t n_order;
} mapping_acc;

static void mapping_acc_init(mapping_acc *a)
{
    memset(a, 0, sizeof *a);
    for (int s = 0; s < KD_STAGE_COUNT; s++) {
        site_stats_init(&a->stats[s]);
        kd_i64map_init(&a->cats[s]);
    }
    site_stats_init(&a->global);
    kd_i64map_init(&a->gcats);
}

static void mapping_acc_free(mapping_acc *a)
{
    for (int s = 0; s < KD_STAGE_COUNT; s++) {
        site_stats_free(&a->stats[s]);
        kd_i64map_free(&a->cats[s]);
    }
    site_stats_free(&a->global);
    kd_i64map_free(&a->gcats);
}

/* One stage group of a mapping trace (§8 step 3). sited: by_kernel already
 * holds every kernel's site (the shared build), else the group's are
 * computed here. */
static bool mapping_group(mapping_acc *a, ks_trace *x, const stage_group *g, kd_framework fw,
                          ks_site *by_kernel, bool sited)
{
    uint32_t *S = g->ks;
    size_t n = g->n;
    bool sampled = fw != KD_FW_SGLANG;
    if (sampled && !sample_group(x, g, &S, &n))
        return false;
    site_stats local;
    site_stats_init(&local);
    bool ok = (sited || sites_for(x, S, n, by_kernel)) && aggregate_list(&local, x, S, n, by_kernel);
    if (ok && !a->has[g->stage]) {
        a->has[g->stage] = true;
        a->order[a->n_order++] = g->stage;
    }
    ok = ok && merge_stats(&a->stats[g->stage], &local) && merge_stats(&a->global, &local) &&
         update_categories(&a->cats[g->stage], x, g->ks, g->n) &&
         update_categories(&a->gcats, x, g->ks, g->n);
    site_stats_free(&local);
    if (sampled)
        free(S);
    return ok;
}

static kd_status mapping_trace(mapping_acc *a, kd_interner *in, const kd_trace *t,
                               kd_stage path_stage, kd_framework fw, kd_error *err)
{
    ks_trace x;
    kd_status st = ks_trace_load(t, in, &x, err);
    if (st)
        return st;
    bool ok = true;
    if (x.nk) { /* §8 step 1: a trace without kernels is skipped */
        stage_groups groups;
        ks_site *by_kernel = malloc(x.nk * sizeof *by_kernel);
        ok = by_kernel && group_by_stage(&x, path_stage, &groups);
        bool grouped = ok;
        for (size_t i = 0; ok && i < groups.n; i++)
            ok = mapping_group(a, &x, &groups.g[i], fw, by_kernel, false);
        if (grouped)
            free(groups.pool);
        free(by_kernel);
    }
    ks_trace_free(&x);
    return ok ? KD_OK : kd_fail(err, KD_ENOMEM, "%s: out of memory building the kernel map", t->path);
}

/* §8 result: the accumulated stages in first-merge order, plus global. */
static kd_status finish_kernel_map(mapping_acc *a, kd_kernel_map *out, kd_error *err)
{
    kd_status st = KD_OK;
    loc_memo memo;
    loc_memo_init(&memo, out->strings, out->strings);
    for (size_t i = 0; st == KD_OK && i < a->n_order; i++) {
        kd_stage s = a->order[i];
        if (!build_payload(&memo, &a->stats[s], &a->cats[s], &out->stages[s]))
            st = kd_fail(err, KD_ENOMEM, "out of memory building the kernel map");
        out->has[s] = true;
        out->order[out->n_order++] = s;
    }
    if (st == KD_OK && !build_payload(&memo, &a->global, &a->gcats, &out->global))
        st = kd_fail(err, KD_ENOMEM, "out of memory building the kernel map");
    loc_memo_free(&memo);
    return st;
}

kd_status kd_kernel_map_build(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                              kd_framework fw, kd_kernel_map *out, kd_error *err)
{
    kd_status st = map_init(out, true, err);
    if (st)
        return st;
    mapping_acc a;
    mapping_acc_init(&a);
    for (size_t i = 0; st == KD_OK && i < n; i++)
        st = mapping_trace(&a, out->strings, traces[i], path_stages[i], fw, err);
    if (st == KD_OK)
        st = finish_kernel_map(&a, out, err);
    mapping_acc_free(&a);
    if (st)
        kd_kernel_map_free(out);
    return st;
}

/* payloads[stage] = payload(aggregate(Ks), cats(Ks)) (§8 formal) */
static bool formal_group(kd_kernel_map *m, loc_memo *memo, ks_trace *x, const stage_group *g,
                         const ks_site *by_kernel)
{
    site_stats local;
    kd_i64map cats;
    site_stats_init(&local);
    kd_i64map_init(&cats);
    kd_stage_payload p = {m->strings, NULL, 0};
    bool ok = aggregate_list(&local, x, g->ks, g->n, by_kernel) &&
              update_categories(&cats, x, g->ks, g->n) && build_payload(memo, &local, &cats, &p);
    site_stats_free(&local);
    kd_i64map_free(&cats);
    if (!ok)
        return false;
    /* a later trace overwrites the stage; the key keeps its first position */
    payload_free(&m->stages[g->stage]);
    m->stages[g->stage] = p;
    if (!m->has[g->stage]) {
        m->has[g->stage] = true;
        m->order[m->n_order++] = g->stage;
    }
    return true;
}

/* Every kernel's site, by kernel position (x->nk > 0). */
static ks_site *all_sites(ks_trace *x)
{
    ks_site *by_kernel = malloc(x->nk * sizeof *by_kernel);
    uint32_t *all = malloc(x->nk * sizeof *all);
    bool ok = by_kernel && all;
    for (size_t i = 0; ok && i < x->nk; i++)
        all[i] = (uint32_t)i;
    ok = ok && sites_for(x, all, x->nk, by_kernel);
    free(all);
    if (!ok) {
        free(by_kernel);
        return NULL;
    }
    return by_kernel;
}

/* One trace's contribution: to the formal payloads m (memo for m), and when
 * a is not NULL to the kernel map accumulator too (the shared build: both
 * use the same records and sites, computed once). */
static kd_status sites_trace(mapping_acc *a, kd_framework fw, kd_kernel_map *m, loc_memo *memo,
                             const kd_trace *t, kd_stage path_stage, kd_error *err)
{
    ks_trace x;
    kd_status st = ks_trace_load(t, m->strings, &x, err);
    if (st)
        return st;
    bool ok = true;
    if (x.nk) {
        stage_groups groups;
        ks_site *by_kernel = all_sites(&x);
        ok = by_kernel && group_by_stage(&x, path_stage, &groups);
        bool grouped = ok;
        for (size_t i = 0; ok && a && i < groups.n; i++)
            ok = mapping_group(a, &x, &groups.g[i], fw, by_kernel, true);
        for (size_t i = 0; ok && i < groups.n; i++)
            ok = formal_group(m, memo, &x, &groups.g[i], by_kernel);
        if (grouped)
            free(groups.pool);
        free(by_kernel);
    }
    ks_trace_free(&x);
    return ok ? KD_OK : kd_fail(err, KD_ENOMEM, "%s: out of memory building stage payloads", t->path);
}

kd_status kd_formal_payloads_build(kd_trace *const *traces, const kd_stage *path_stages, size_t n,
                                   kd_kernel_map *out, kd_error *err)
{
    kd_status st = map_init(out, false, err);
    loc_memo memo;
    loc_memo_init(&memo, out->strings, out->strings);
    for (size_t i = 0; st == KD_OK && i < n; i++)
        st = sites_trace(NULL, KD_FW_SGLANG, out, &memo, traces[i], path_stages[i], err);
    loc_memo_free(&memo);
    if (st)
        kd_kernel_map_free(out);
    return st;
}

kd_status kd_kernel_sites_build_both(kd_trace *const *traces, const kd_stage *path_stages,
                                     size_t n, kd_framework fw, kd_kernel_map *kmap,
                                     kd_kernel_map *payloads, kd_error *err)
{
    kd_status st = map_init(kmap, true, err);
    if (st)
        return st;
    st = map_init(payloads, false, err);
    if (st) {
        kd_kernel_map_free(kmap);
        return st;
    }
    /* one interner for both: the sites are interned once */
    kd_interner_free(payloads->strings);
    payloads->strings = kmap->strings;
    payloads->strings_borrowed = true;
    for (int s = 0; s < KD_STAGE_COUNT; s++)
        payloads->stages[s].strings = kmap->strings;
    payloads->global.strings = kmap->strings;
    mapping_acc a;
    mapping_acc_init(&a);
    loc_memo memo;
    loc_memo_init(&memo, payloads->strings, payloads->strings);
    for (size_t i = 0; st == KD_OK && i < n; i++)
        st = sites_trace(&a, fw, payloads, &memo, traces[i], path_stages[i], err);
    loc_memo_free(&memo);
    if (st == KD_OK)
        st = finish_kernel_map(&a, kmap, err);
    mapping_acc_free(&a);
    if (st) {
        kd_kernel_map_free(payloads);
        kd_kernel_map_free(kmap);
    }
    return st;
}

/* ======================================================================
 * kernel-sites §9: lookup
 * ====================================================================== */

#define N_PAYLOADS 4 /* the three stages, then global */

struct kd_kernel_map_lookup_state {
    kd_relaxed_index ix[N_PAYLOADS];
    const char **keys[N_PAYLOADS];
    bool built[N_PAYLOADS];
    kd_interner *names; /* queried names */
    kd_i64map memo;     /* (stage << 32 | name) -> (payload << 32 | entry), -1 none */
};

static const kd_stage_payload *payload_at(const kd_kernel_map *m, size_t p)
{
    if (p < 3)
        return m->has[p] ? &m->stages[p] : NULL;
    return &m->global;
}

static void lookup_state_free(kd_kernel_map_lookup_state *ls)
{
    if (!ls)
        return;
    for (size_t p = 0; p < N_PAYLOADS; p++) {
        if (ls->built[p])
            kd_relaxed_index_free(&ls->ix[p]);
        free(ls->keys[p]);
    }
    kd_interner_free(ls->names);
    kd_i64map_free(&ls->memo);
    free(ls);
}

static bool ensure_index(kd_kernel_map_lookup_state *ls, const kd_stage_payload *pl, size_t p)
{
    if (ls->built[p])
        return true;
    ls->keys[p] = malloc((pl->n ? pl->n : 1) * sizeof *ls->keys[p]);
    if (!ls->keys[p])
        return false;
    for (size_t i = 0; i < pl->n; i++)
        ls->keys[p][i] = kd_str(pl->strings, pl->v[i].name);
    if (!kd_relaxed_index_build(&ls->ix[p], ls->keys[p], pl->n))
        return false;
    ls->built[p] = true;
    return true;
}

/* §9 alias text: key, best_location, then 4 sites' location, display, op, stack */
static char *alias_text(void *ctx, size_t i)
{
    const kd_stage_payload *p = ctx;
    const kd_kernel_entry *e = &p->v[i];
    const kd_interner *in = p->strings;
    strbuf b = {NULL, 0, 0};
    bool ok = sb_cstr(&b, kd_str(in, e->name)) && sb_cstr(&b, " ") &&
              sb_cstr(&b, kd_str(in, e->best_location));
    for (size_t s = 0; ok && s < e->n_sites && s < 4; s++) {
        const kd_site *st = &e->sites[s];
        kd_sid parts[4] = {st->location, st->display_location, st->top_cpu_op, st->stack};
        for (int j = 0; ok && j < 4; j++)
            ok = sb_cstr(&b, " ") && sb_cstr(&b, kd_str(in, parts[j]));
    }
    if (!ok) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* best_site_summary's location part (§9 summary) */
static char *entry_summary(const kd_stage_payload *p, const kd_kernel_entry *e)
{
    const kd_interner *in = p->strings;
    if (!e->n_sites)
        return strdup(e->best_location && *kd_str(in, e->best_location)
                          ? kd_str(in, e->best_location)
                          : "unresolved");
    char **disp = calloc(e->n_sites, sizeof *disp);
    if (!disp)
        return NULL;
    size_t n_pref = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < e->n_sites; i++) {
        disp[i] = kd_ks_site_display(kd_str(in, e->sites[i].location), opt_str(in, e->sites[i].stack));
        ok = disp[i] != NULL;
        n_pref += ok && kd_ks_is_preferred(disp[i]);
    }
    strbuf b = {NULL, 0, 0};
    size_t taken = 0, n_p = n_pref ? n_pref : e->n_sites;
    ok = ok && sb_add(&b, "", 0);
    for (size_t i = 0; ok && i < e->n_sites && taken < 2; i++) {
        if (n_pref && !kd_ks_is_preferred(disp[i]))
            continue;
        if (taken)
            ok = sb_cstr(&b, "<br>");
        ok = ok && sb_cstr(&b, disp[i]);
        if (ok && n_p > 1) {
            char share[400];
            snprintf(share, sizeof share, " (site share %.0f%%)", e->sites[i].share_pct_within_kernel);
            ok = sb_cstr(&b, share);
        }
        taken++;
    }
    for (size_t i = 0; i < e->n_sites; i++)
        free(disp[i]);
    free(disp);
    if (!ok) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* §9 alias bonus: max(slp(best_location), slp(summary)) + int(TU // 10) */
static int alias_bonus(void *ctx, size_t i)
{
    const kd_stage_payload *p = ctx;
    const kd_kernel_entry *e = &p->v[i];
    int a = kd_ks_source_location_priority(kd_str(p->strings, e->best_location));
    char *sum = entry_summary(p, e);
    int b = sum ? kd_ks_source_location_priority(sum) : -100;
    free(sum);
    double tu = 0.0;
    for (size_t s = 0; s < e->n_sites; s++)
        tu += e->sites[s].total_us;
    double f = py_floordiv(tu, 10.0);
    long extra = f >= (double)INT_MAX ? INT_MAX : f <= (double)INT_MIN ? INT_MIN : (long)f;
    long r = (long)(a > b ? a : b) + extra;
    return r > INT_MAX ? INT_MAX : (int)r;
}

/* relaxed_kernel_entry_lookup in payload p: entry position or -1 */
static long relaxed_in(kd_kernel_map_lookup_state *ls, const kd_kernel_map *m, size_t p,
                       const char *name, bool *oom)
{
    const kd_stage_payload *pl = payload_at(m, p);
    if (!pl || !pl->n)
        return -1;
    if (!ensure_index(ls, pl, p)) {
        *oom = true;
        return -1;
    }
    kd_alias_scorer scorer = {alias_text, alias_bonus, (void *)pl};
    return kd_relaxed_lookup(&ls->ix[p], name, &scorer, NULL, NULL);
}

/* stage_aliases (§9); KH never produces prefill, so extend's list is extend, all */
static size_t stage_aliases(kd_stage s, kd_stage out[2])
{
    out[0] = s;
    if (s == KD_STAGE_ALL)
        return 1;
    out[1] = KD_STAGE_ALL;
    return 2;
}

/* lookup_kernel_map_entry: (payload << 32 | entry) or -1 */
static int64_t lookup_uncached(kd_kernel_map_lookup_state *ls, const kd_kernel_map *m,
                               kd_stage stage, const char *name, bool *oom)
{
    kd_stage al[2];
    size_t na = stage_aliases(stage, al);
    for (size_t i = 0; i < na; i++) {
        long e = relaxed_in(ls, m, (size_t)al[i], name, oom);
        if (e >= 0)
            return (int64_t)(((uint64_t)al[i] << 32) | (uint64_t)e);
    }
    long e = relaxed_in(ls, m, 3, name, oom);
    return e >= 0 ? (int64_t)((3ull << 32) | (uint64_t)e) : -1;
}

const kd_kernel_entry *kd_kernel_map_lookup(void *kernel_map, kd_stage stage, const char *name,
                                            const kd_interner **strings)
{
    kd_kernel_map *m = kernel_map;
    if (!m || !name)
        return NULL;
    if (!m->lookup) {
        m->lookup = calloc(1, sizeof *m->lookup);
        if (!m->lookup)
            return NULL;
        kd_i64map_init(&m->lookup->memo);
        m->lookup->names = kd_interner_new();
        if (!m->lookup->names) {
            lookup_state_free(m->lookup);
            m->lookup = NULL;
            return NULL;
        }
    }
    kd_kernel_map_lookup_state *ls = m->lookup;
    kd_sid id = kd_intern_cstr(ls->names, name);
    if (!id)
        return NULL;
    int64_t key = (int64_t)(((uint64_t)stage << 32) | id), v;
    if (!kd_i64map_get(&ls->memo, key, &v)) {
        bool oom = false;
        v = lookup_uncached(ls, m, stage, name, &oom);
        if (oom || !kd_i64map_put(&ls->memo, key, v))
            return NULL;
    }
    if (v < 0)
        return NULL;
    const kd_stage_payload *pl = payload_at(m, (size_t)((uint64_t)v >> 32));
    if (strings)
        *strings = pl->strings;
    return &pl->v[(uint32_t)v];
}

const kd_stage_payload *kd_formal_payload_for(const kd_kernel_map *m, kd_stage stage)
{
    if (!m)
        return NULL;
    if (m->has[stage])
        return &m->stages[stage];
    if (m->has[KD_STAGE_ALL])
        return &m->stages[KD_STAGE_ALL];
    if (m->n_order == 1)
        return &m->stages[m->order[0]];
    return NULL;
}

void kd_kernel_map_free(kd_kernel_map *m)
{
    if (!m)
        return;
    for (int s = 0; s < KD_STAGE_COUNT; s++)
        payload_free(&m->stages[s]);
    payload_free(&m->global);
    lookup_state_free(m->lookup);
    if (!m->strings_borrowed)
        kd_interner_free(m->strings);
    memset(m, 0, sizeof *m);
}

/* ======================================================================
 * JSON (conformance layout)
 * ====================================================================== */

static void json_opt_str(kd_json *j, const kd_interner *in, kd_sid s)
{
    if (s)
        kd_json_strn(j, kd_str(in, s), kd_str_len(in, s));
    else
        kd_json_null(j);
}

static void json_sid(kd_json *j, const kd_interner *in, kd_sid s)
{
    kd_json_strn(j, kd_str(in, s), kd_str_len(in, s));
}

static void write_site(kd_json *j, const kd_interner *in, const kd_site *s)
{
    kd_json_map_open(j);
    kd_json_key(j, "location");
    json_sid(j, in, s->location);
    kd_json_key(j, "display_location");
    json_sid(j, in, s->display_location);
    kd_json_key(j, "launches");
    kd_json_int(j, s->launches);
    kd_json_key(j, "total_us");
    kd_json_double(j, s->total_us);
    kd_json_key(j, "share_pct_within_kernel");
    kd_json_double(j, s->share_pct_within_kernel);
    kd_json_key(j, "top_cpu_op");
    json_opt_str(j, in, s->top_cpu_op);
    kd_json_key(j, "stack");
    json_opt_str(j, in, s->stack);
    kd_json_map_close(j);
}

void kd_stage_payload_write_json(kd_json *j, const kd_stage_payload *p)
{
    kd_json_map_open(j);
    kd_json_key(j, "kernels");
    kd_json_map_open(j);
    for (size_t i = 0; i < p->n; i++) {
        const kd_kernel_entry *e = &p->v[i];
        kd_json_strn(j, kd_str(p->strings, e->name), kd_str_len(p->strings, e->name));
        kd_json_map_open(j);
        kd_json_key(j, "category");
        kd_json_str(j, e->category);
        kd_json_key(j, "sites");
        kd_json_array_open(j);
        for (size_t s = 0; s < e->n_sites; s++)
            write_site(j, p->strings, &e->sites[s]);
        kd_json_array_close(j);
        kd_json_key(j, "best_location");
        json_sid(j, p->strings, e->best_location);
        kd_json_map_close(j);
    }
    kd_json_map_close(j);
    kd_json_map_close(j);
}

static void write_stage_map(kd_json *j, const kd_kernel_map *m)
{
    kd_json_map_open(j);
    for (size_t i = 0; i < m->n_order; i++) {
        kd_json_key(j, kd_stage_name(m->order[i]));
        kd_stage_payload_write_json(j, &m->stages[m->order[i]]);
    }
    kd_json_map_close(j);
}

void kd_kernel_map_write_json(kd_json *j, const kd_kernel_map *m)
{
    if (!m->is_kernel_map) {
        write_stage_map(j, m);
        return;
    }
    kd_json_map_open(j);
    kd_json_key(j, "stages");
    write_stage_map(j, m);
    kd_json_key(j, "global");
    kd_stage_payload_write_json(j, &m->global);
    kd_json_map_close(j);
}
