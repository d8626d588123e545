/* load.c — the streaming trace loader (load.h).
 *
 * Bytes flow file -> (zlib, zstd or liblzma when the magic bytes say gzip,
 * zstd or xz) -> yajl callback parser in large blocks. The callbacks track nesting depth; inside an event
 * object they capture only the fields the pipeline reads (ph cat name pid tid
 * ts dur, and args' External id / correlation / stream / cuda_stream / name)
 * into a scratch buffer, and at the event's closing brace classify_event()
 * decides what to keep. Outside the events list, the top-level keys
 * distributedInfo (rank, world_size) and deviceProperties (id, name) are
 * kept as the trace's metadata ("metadata" below); their callbacks are
 * reached only outside events, so an event pays nothing for them. Nothing
 * else of the document is stored. */
#include "config.h"

#include "kerndiff/load.h"

#include <errno.h>
#include <lzma.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDStream_advanced: our allocator */
#include <zstd.h>
#include <zstd_errors.h>

#include "kerndiff/text.h"
#include "kerndiff/value.h"
#include "load_internal.h"

#define IN_BLOCK (1u << 20)
#define OUT_BLOCK (4u << 20)
#define SMALL_GZIP (1u << 16)
#define SMALL_GZIP_BLOCK (1u << 18)
/* A JSON token still open after this many bytes fed without a callback is
 * "long": the next feeds gather at least as many bytes as it has (see
 * chunk_next), so yajl's rescans of it stay linear in total. */
#define LONG_TOKEN (1u << 20)

/* ---- yajl's memory ------------------------------------------------------
 * yajl does not check its allocations (a failed realloc of its lexer buffer
 * becomes a memcpy to NULL). It gets these functions instead: each block
 * carries a link in its parser's list, and a failure jumps back to the
 * guarded call into yajl (yg_* below), which returns an error; the handle
 * is then dead, never called again, and yg_done releases every block of it
 * at once. The guard is per parser (a local of the pass): no global state. */

typedef union ynode {
    struct {
        union ynode *prev, *next;
    } l;
    max_align_t align;
} ynode;

typedef struct {
    ynode head; /* circular list of the parser's live blocks */
    jmp_buf jb;
    bool armed;  /* inside a guarded call: a failure jumps */
    bool failed; /* an allocation failed: the handle is dead */
} yguard;

static void yg_init(yguard *g)
{
    g->head.l.prev = g->head.l.next = &g->head;
    g->armed = g->failed = false;
}

static void yg_link(yguard *g, ynode *b)
{
    b->l.prev = &g->head;
    b->l.next = g->head.l.next;
    g->head.l.next->l.prev = b;
    g->head.l.next = b;
}

static void yg_unlink(ynode *b)
{
    b->l.prev->l.next = b->l.next;
    b->l.next->l.prev = b->l.prev;
}

static void *yg_fail(yguard *g)
{
    g->failed = true;
    if (g->armed)
        longjmp(g->jb, 1);
    return NULL;
}

static void *yg_malloc(void *ctx, size_t n)
{
    yguard *g = ctx;
    ynode *b = n <= SIZE_MAX - sizeof *b ? malloc(sizeof *b + n) : NULL;
    if (!b)
        return yg_fail(g);
    yg_link(g, b);
    return b + 1;
}

static void *yg_realloc(void *ctx, void *p, size_t n)
{
    yguard *g = ctx;
    if (!p)
        return yg_malloc(ctx, n);
    ynode *b = (ynode *)p - 1;
    yg_unlink(b);
    ynode *nb = n <= SIZE_MAX - sizeof *nb ? realloc(b, sizeof *nb + n) : NULL;
    if (!nb) {
        yg_link(g, b); /* still the parser's: released by yg_done */
        return yg_fail(g);
    }
    yg_link(g, nb);
    return nb + 1;
}

static void yg_free(void *ctx, void *p)
{
    (void)ctx;
    if (!p)
        return;
    ynode *b = (ynode *)p - 1;
    yg_unlink(b);
    free(b);
}

/* The guarded calls: each returns as yajl would, or as from an error when an
 * allocation failed inside (g->failed then set). */
static yajl_handle yg_alloc(yguard *g, const yajl_callbacks *cb, void *ctx)
{
    yajl_alloc_funcs af = {yg_malloc, yg_realloc, yg_free, g};
    if (setjmp(g->jb)) {
        g->armed = false;
        return NULL;
    }
    g->armed = true;
    yajl_handle h = yajl_alloc(cb, &af, ctx);
    g->armed = false;
    return h;
}

static yajl_status yg_parse(yguard *g, yajl_handle h, const unsigned char *p, size_t n)
{
    if (setjmp(g->jb)) {
        g->armed = false;
        return yajl_status_error;
    }
    g->armed = true;
    yajl_status st = yajl_parse(h, p, n);
    g->armed = false;
    return st;
}

static yajl_status yg_complete(yguard *g, yajl_handle h)
{
    if (setjmp(g->jb)) {
        g->armed = false;
        return yajl_status_error;
    }
    g->armed = true;
    yajl_status st = yajl_complete_parse(h);
    g->armed = false;
    return st;
}

static unsigned char *yg_error(yguard *g, yajl_handle h, const unsigned char *p, size_t n)
{
    if (setjmp(g->jb)) {
        g->armed = false;
        return NULL;
    }
    g->armed = true;
    unsigned char *msg = yajl_get_error(h, 0, p, n);
    g->armed = false;
    return msg;
}

/* Frees the parser (after a failure: only its blocks, the handle is dead). */
static void yg_done(yguard *g, yajl_handle h)
{
    if (h && !g->failed)
        yajl_free(h);
    while (g->head.l.next != &g->head) {
        ynode *b = g->head.l.next;
        yg_unlink(b);
        free(b);
    }
}

typedef enum { TOP_NONE, TOP_OBJECT, TOP_LIST, TOP_SCALAR } top_kind;

/* The metadata keys (top level) and their members read. */
enum { MK_NONE = 0, MK_DIST, MK_DEVS };
enum { MF_NONE = 0, MF_RANK, MF_WORLD, MF_ID, MF_NAME };

/* Which metadata key a top-level key is. */
static int meta_top_key(const unsigned char *k, size_t len)
{
    if (len == 15 && memcmp(k, "distributedInfo", 15) == 0)
        return MK_DIST;
    if (len == 16 && memcmp(k, "deviceProperties", 16) == 0)
        return MK_DEVS;
    return MK_NONE;
}

/* A JSON integer's text (no fraction, no exponent) as int64; false when it
 * is not one or does not fit. */
static bool parse_int64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = len > 0 && s[0] == '-';
    if (neg)
        i = 1;
    if (i == len)
        return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

/* A scalar's integer value: a number with integer text (bools, floats,
 * strings and NaN are not integers). */
static bool scalar_int(kd_jtype type, const char *text, size_t len, int64_t *out)
{
    if (type != KD_J_INT || !text)
        return false;
    const char *t = text;
    size_t n = len;
    return kd_number_type(&t, &n) == KD_J_INT && parse_int64(t, n, out);
}

typedef struct {
    kd_trace *t;
    const char *label;
    kd_error *err;
    kd_status status; /* set by callbacks on fatal problems (OOM) */

    int depth;       /* open containers */
    top_kind top;
    bool key_is_trace_events; /* last top-level key was "traceEvents" */
    bool in_events;           /* inside the traceEvents list */
    int events_depth;         /* depth of the list's elements (list depth) */
    bool events_bad_type;     /* traceEvents value was not a list */

    /* current event */
    bool in_event;
    int ev_depth; /* depth inside the event object */
    field_id pending; /* field the next value fills */
    bool in_args;
    field_val f[F_COUNT];
    char *scratch;
    size_t scratch_n, scratch_cap;
    /* the field container open at event level / inside args (its first
     * child makes it non-empty: only truthiness is kept of containers) */
    field_id ev_open, args_open;
    int ev_open_depth, args_open_depth;

    kd_keeper keep; /* what of each event the trace keeps (keep.c) */

    /* pid, tid and cat repeat from event to event: the last string of each
     * is remembered so most events skip the hash lookup */
    bool bad_utf8; /* a kept string failed kd_utf8_input_valid: parse cancelled */
    bool forgot;   /* a later traceEvents key dropped the events kept so far */

    uint64_t tokens;     /* callbacks so far: none in a fed block = a token spans it */
    uint64_t max_string; /* the longest string or number accepted */
    size_t too_long;     /* the length of one longer: parse cancelled */

    /* metadata: the current top-level key is a metadata key (MK_*: its
     * value comes next), or its value is open (meta_in: distributedInfo's
     * object, members at depth 2; deviceProperties' list, devices at depth
     * 2, their members at depth 3); meta_field: the member whose value
     * comes next. saw_*: the key was met (a split load's halves merge by
     * them: the later half's key wins). */
    uint8_t meta_key, meta_in, meta_field;
    bool meta_dev_open; /* inside a device object (the last of t->devices) */
    bool saw_dist, saw_devs;
} loader;

/* Out of line: the buffer is reused from event to event, so it grows a few
 * times per load and scratch_put's common path stays short. */
static __attribute__((noinline)) bool scratch_grow(loader *L, size_t need)
{
    size_t cap = L->scratch_cap ? L->scratch_cap : 4096;
    while (cap < need)
        cap *= 2;
    char *p = realloc(L->scratch, cap);
    if (!p)
        return false;
    L->scratch = p;
    L->scratch_cap = cap;
    return true;
}

static bool scratch_put(loader *L, const char *s, size_t len, size_t *off)
{
    if (L->scratch_n + len + 1 > L->scratch_cap && !scratch_grow(L, L->scratch_n + len + 1))
        return false;
    memcpy(L->scratch + L->scratch_n, s, len);
    L->scratch[L->scratch_n + len] = '\0';
    *off = L->scratch_n;
    L->scratch_n += len + 1;
    return true;
}

static void reset_event(loader *L)
{
    for (int i = 0; i < F_COUNT; i++)
        L->f[i].type = KD_J_ABSENT;
    L->scratch_n = 0;
    L->pending = F_NONE;
    L->in_args = false;
    L->ev_open = L->args_open = F_NONE;
}

static field_id event_key(const unsigned char *k, size_t n)
{
#define KEY(lit, id)                                                               \
    if (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)                            \
        return id;
    switch (n) {
    case 2: KEY("ph", F_PH) KEY("ts", F_TS) break;
    case 3: KEY("cat", F_CAT) KEY("pid", F_PID) KEY("tid", F_TID) KEY("dur", F_DUR) break;
    case 4: KEY("name", F_NAME) KEY("args", F_ARGS) break;
    default: break;
    }
    return F_NONE;
}

static field_id args_key(const unsigned char *k, size_t n)
{
    switch (n) {
    case 4: KEY("name", F_A_NAME) break;
    case 6: KEY("stream", F_A_STREAM) break;
    case 11: KEY("External id", F_A_EXT) KEY("correlation", F_A_CORR)
             KEY("cuda_stream", F_A_CUDA_STREAM) break;
    default: break;
    }
#undef KEY
    return F_NONE;
}

/* ---- yajl callbacks --------------------------------------------------- */

#define OOM_IF(cond)                                                               \
    do {                                                                           \
        if (cond) {                                                                \
            L->status = KD_ENOMEM;                                                 \
            return 0;                                                              \
        }                                                                          \
    } while (0)

/* ---- metadata (distributedInfo, deviceProperties) ----------------------
 * Reached only outside events (L->meta_key or L->meta_in set). A repeated
 * key replaces what the earlier one gave, as Python's json keeps the last. */

/* A top-level key of the object: a metadata key starts afresh. */
static void meta_key_top(loader *L, const unsigned char *k, size_t len)
{
    L->meta_key = (uint8_t)meta_top_key(k, len);
    if (L->meta_key == MK_DIST) {
        L->t->has_rank = L->t->has_world_size = false;
        L->saw_dist = true;
    } else if (L->meta_key == MK_DEVS) {
        L->t->devices.n = 0;
        L->saw_devs = true;
    }
}

/* A key inside a metadata value. */
static __attribute__((noinline)) int meta_member_key(loader *L, const unsigned char *k, size_t len)
{
    L->meta_field = MF_NONE;
    if (L->meta_in == MK_DIST && L->depth == 2) {
        if (len == 4 && memcmp(k, "rank", 4) == 0) {
            L->meta_field = MF_RANK;
            L->t->has_rank = false;
        } else if (len == 10 && memcmp(k, "world_size", 10) == 0) {
            L->meta_field = MF_WORLD;
            L->t->has_world_size = false;
        }
    } else if (L->meta_in == MK_DEVS && L->meta_dev_open && L->depth == 3) {
        kd_device_rec *d = &L->t->devices.v[L->t->devices.n - 1];
        if (len == 2 && memcmp(k, "id", 2) == 0) {
            L->meta_field = MF_ID;
            d->id = -1;
        } else if (len == 4 && memcmp(k, "name", 4) == 0) {
            L->meta_field = MF_NAME;
            d->name = 0;
        }
    }
    return 1;
}

/* A scalar outside events while metadata is open. */
static int meta_value(loader *L, kd_jtype type, const char *text, size_t len)
{
    if (L->meta_key && L->depth == 1) { /* the key's value is a scalar: nothing */
        L->meta_key = MK_NONE;
        return 1;
    }
    int field = L->meta_field;
    L->meta_field = MF_NONE;
    int64_t v;
    if (L->meta_in == MK_DIST && L->depth == 2) {
        if (field == MF_RANK && scalar_int(type, text, len, &v)) {
            L->t->rank = v;
            L->t->has_rank = true;
        } else if (field == MF_WORLD && scalar_int(type, text, len, &v)) {
            L->t->world_size = v;
            L->t->has_world_size = true;
        }
    } else if (L->meta_in == MK_DEVS && L->meta_dev_open && L->depth == 3) {
        kd_device_rec *d = &L->t->devices.v[L->t->devices.n - 1];
        if (field == MF_ID && scalar_int(type, text, len, &v)) {
            d->id = v;
        } else if (field == MF_NAME && type == KD_J_STRING && kd_utf8_input_valid(text, len)) {
            d->name = kd_intern(L->t->strings, text, len);
            OOM_IF(!d->name);
        }
    }
    return 1;
}

/* A container opened outside events while metadata is open. */
static __attribute__((noinline)) int meta_open(loader *L, bool is_map)
{
    if (L->meta_key && L->depth == 1) {
        L->meta_in = (L->meta_key == MK_DIST && is_map) || (L->meta_key == MK_DEVS && !is_map)
                         ? L->meta_key
                         : MK_NONE;
        L->meta_key = MK_NONE;
        return 1;
    }
    L->meta_field = MF_NONE; /* a member's value that is a container */
    if (L->meta_in == MK_DEVS && L->depth == 2 && is_map) {
        kd_device_rec d = {-1, 0};
        OOM_IF(!KD_VEC_PUSH(L->t->devices, d));
        L->meta_dev_open = true;
    }
    return 1;
}

/* After a container outside events closed (L->depth is the depth again). */
static void meta_close(loader *L)
{
    if (L->depth == 1)
        L->meta_in = MK_NONE;
    else if (L->depth == 2)
        L->meta_dev_open = false;
}

static void start_event(loader *L)
{
    reset_event(L);
    L->in_event = true;
    L->ev_depth = L->depth;
    L->t->events_read++;
}

static void forget_events_for_new_key(loader *L)
{
    if (!L->t->has_trace_events && !L->events_bad_type)
        return;
    kd_keeper_forget(&L->keep);
    L->forgot = true;
}

static void note_child(loader *L)
{
    if (L->ev_open != F_NONE && L->depth == L->ev_open_depth)
        L->f[L->ev_open].container_empty = false;
    if (L->args_open != F_NONE && L->depth == L->args_open_depth)
        L->f[L->args_open].container_empty = false;
}

/* Whether the next scalar fills a field of the current event. */
static bool captures_value(const loader *L)
{
    return L->in_event && L->pending != F_NONE && L->depth == L->ev_depth + (L->in_args ? 1 : 0);
}

/* Stores a scalar into the field it fills (captures_value was true). */
static int capture_value(loader *L, kd_jtype type, const char *text, size_t len, bool b)
{
    if (type == KD_J_STRING && !kd_utf8_input_valid(text, len)) {
        L->bad_utf8 = true;
        return 0;
    }
    field_val *f = &L->f[L->pending];
    f->type = type;
    f->boolean = b;
    f->len = len;
    if (text)
        OOM_IF(!scratch_put(L, text, len, &f->off));
    L->pending = F_NONE;
    return 1;
}

/* A scalar outside any event: the document itself, the traceEvents value,
 * or an events-list element that is not an object. Rare, so out of line. */
static __attribute__((noinline)) int on_value_outside_event(loader *L, kd_jtype type,
                                                            const char *text, size_t len)
{
    if (L->meta_key | L->meta_in)
        return meta_value(L, type, text, len);
    if (L->depth == 0 && L->top == TOP_NONE) {
        L->top = TOP_SCALAR;
        return 1;
    }
    if (L->top == TOP_OBJECT && L->depth == 1 && L->key_is_trace_events) {
        L->key_is_trace_events = false;
        forget_events_for_new_key(L);
        L->events_bad_type = true; /* a scalar traceEvents: the last key wins */
        L->t->has_trace_events = false;
        return 1;
    }
    if (L->in_events && L->depth == L->events_depth) {
        L->t->events_read++;
        L->t->skipped[KD_SKIP_NOT_OBJECT]++;
    }
    return 1;
}

/* A scalar at the current depth. Inside an event (nearly every scalar of a
 * trace) only the field it may fill matters: the document-level cases need
 * depth < the event's, so they are tested only outside events. */
static int on_value(loader *L, kd_jtype type, const char *text, size_t len, bool b)
{
    L->tokens++;
    if (!L->in_event)
        return on_value_outside_event(L, type, text, len);
    note_child(L);
    return captures_value(L) ? capture_value(L, type, text, len, b) : 1;
}

static int cb_null(void *ctx) { return on_value(ctx, KD_J_NULL, NULL, 0, false); }
static int cb_bool(void *ctx, int b) { return on_value(ctx, KD_J_BOOL, NULL, 0, b != 0); }

/* A string or number over max_string: cancels the parse (parse_pass names it). */
static __attribute__((noinline)) int too_long(loader *L, size_t len)
{
    L->too_long = len;
    return 0;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    loader *L = ctx;
    if (len > L->max_string)
        return too_long(L, len);
    /* only a kept number's type matters: most numbers of an event are not
     * kept, and ts / dur (the longest) are typed by read_time if need be */
    kd_jtype type = KD_J_INT;
    if (captures_value(L) && L->pending != F_TS && L->pending != F_DUR)
        type = kd_number_type(&s, &len);
    return on_value(L, type, s, len, false);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    loader *L = ctx;
    if (len > L->max_string)
        return too_long(L, len);
    return on_value(L, KD_J_STRING, (const char *)s, len, false);
}

static int open_container(loader *L, bool is_map)
{
    L->tokens++;
    note_child(L);
    if (L->depth == 0 && L->top == TOP_NONE) {
        L->top = is_map ? TOP_OBJECT : TOP_LIST;
        if (!is_map) {
            L->in_events = true;
            L->events_depth = 1;
        }
    } else if (L->top == TOP_OBJECT && L->depth == 1 && L->key_is_trace_events) {
        L->key_is_trace_events = false;
        forget_events_for_new_key(L);
        L->events_bad_type = is_map;
        L->t->has_trace_events = !is_map;
        L->in_events = !is_map;
        L->events_depth = 2;
    } else if (L->in_events && !L->in_event && L->depth == L->events_depth) {
        if (is_map) {
            L->depth++;
            start_event(L);
            return 1;
        }
        L->t->events_read++;
        L->t->skipped[KD_SKIP_NOT_OBJECT]++;
    } else if (captures_value(L)) {
        field_id id = L->pending;
        L->f[id].type = is_map ? KD_J_OBJECT : KD_J_ARRAY;
        L->f[id].container_empty = true;
        L->pending = F_NONE;
        if (L->in_args) {
            L->args_open = id;
            L->args_open_depth = L->depth + 1;
        } else {
            L->ev_open = id;
            L->ev_open_depth = L->depth + 1;
            L->in_args = id == F_ARGS && is_map;
        }
    } else if ((L->meta_key | L->meta_in) && !L->in_event) {
        if (!meta_open(L, is_map))
            return 0;
    }
    L->depth++;
    return 1;
}

static int close_container(loader *L)
{
    L->tokens++;
    L->depth--;
    if (L->in_event) {
        if (L->depth == L->ev_depth - 1) {
            L->in_event = false;
            if (!kd_keep_event(&L->keep, L->f, L->scratch)) {
                if (!L->status)
                    L->status = KD_ENOMEM;
                return 0;
            }
            return 1;
        }
        if (L->args_open != F_NONE && L->depth == L->args_open_depth - 1)
            L->args_open = F_NONE;
        else if (L->ev_open != F_NONE && L->depth == L->ev_open_depth - 1) {
            L->ev_open = F_NONE;
            L->in_args = false;
        }
    } else if (L->in_events && L->depth == L->events_depth - 1) {
        L->in_events = false;
    } else if (L->meta_in) {
        meta_close(L);
    }
    return 1;
}

static int cb_start_map(void *ctx) { return open_container(ctx, true); }
static int cb_start_array(void *ctx) { return open_container(ctx, false); }
static int cb_end(void *ctx) { return close_container(ctx); }

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
    loader *L = ctx;
    L->tokens++;
    if (len > L->max_string)
        return too_long(L, len);
    note_child(L);
    if (L->top == TOP_OBJECT && L->depth == 1) {
        L->key_is_trace_events = len == 11 && memcmp(k, "traceEvents", 11) == 0;
        meta_key_top(L, k, len);
        return 1;
    }
    if (!L->in_event)
        return L->meta_in ? meta_member_key(L, k, len) : 1;
    if (L->depth == L->ev_depth)
        L->pending = event_key(k, len);
    else if (L->in_args && L->depth == L->ev_depth + 1)
        L->pending = args_key(k, len);
    return 1;
}

static const yajl_callbacks callbacks = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
    cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* ---- NaN / Infinity literals (divergence D5) ----------------------------
 * yajl rejects them; Python's json accepts them. When a parse fails at such
 * a literal, the file is parsed again through this filter, which rewrites
 * them outside strings as overflowing numbers (non-finite, as the event rules
 * need). Files without them never pay for the filter; a file with any
 * lexical error is parsed once more with it before the error is reported. */

typedef struct {
    bool in_str, esc;
    int tok; /* 0 none, 1 "NaN", 2 "Infinity" */
    int pos;
} nonfinite_filter;

static const char *const nonfinite_tokens[] = {NULL, "NaN", "Infinity"};

static size_t filter_nonfinite(nonfinite_filter *s, const unsigned char *in, size_t n,
                               unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        if (s->tok) {
            const char *t = nonfinite_tokens[s->tok];
            if (c == (unsigned char)t[s->pos]) {
                if (!t[++s->pos]) {
                    const char *lit = s->tok == 1 ? NAN_LITERAL : "1e999";
                    memcpy(out + o, lit, strlen(lit));
                    o += strlen(lit);
                    s->tok = 0;
                }
                continue;
            }
            memcpy(out + o, t, (size_t)s->pos); /* not the literal: let yajl judge */
            o += (size_t)s->pos;
            s->tok = 0;
        }
        if (s->in_str) {
            if (s->esc)
                s->esc = false;
            else if (c == '\\')
                s->esc = true;
            else if (c == '"')
                s->in_str = false;
        } else if (c == '"') {
            s->in_str = true;
        } else if (c == 'N' || c == 'I') {
            s->tok = c == 'N' ? 1 : 2;
            s->pos = 1;
            continue;
        }
        out[o++] = c;
    }
    return o;
}

static size_t flush_nonfinite(nonfinite_filter *s, unsigned char *out)
{
    size_t o = 0;
    if (s->tok) {
        memcpy(out, nonfinite_tokens[s->tok], (size_t)s->pos);
        o = (size_t)s->pos;
        s->tok = 0;
    }
    return o;
}

/* The input offset of filtered output byte `at` of one block: the filter is
 * run again from its state at the block start (error reports only). */
static size_t original_offset(const nonfinite_filter *start, const unsigned char *in, size_t n,
                              size_t at)
{
    nonfinite_filter s = *start;
    unsigned char out[16];
    size_t produced = 0;
    for (size_t i = 0; i < n; i++) {
        produced += filter_nonfinite(&s, in + i, 1, out);
        if (produced > at)
            return i;
    }
    return n;
}

/* ---- byte source: a FILE or a memory buffer, optionally gunzipped ------- */

/* A buffer one thread fills (inflating a gzip trace) while another parses
 * what is already there: the gzip split load ("gzip split" below). filled,
 * done and failed change under mu; bytes below filled are not written again. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf;
    size_t cap;
    size_t filled;
    bool done, failed;
    /* the split point: chosen once by the filler, taken by the parser */
    bool decided;
    uint64_t stop_at;   /* 0: no split */
    uint64_t head_next; /* the parser has taken the bytes before this */
} growing;

/* Up to cap bytes from *pos on, waiting for the filler; 0 at the end or
 * (*failed set) when the filler failed. */
static size_t grow_read(growing *g, size_t *pos, unsigned char *dst, size_t cap, bool *failed)
{
    pthread_mutex_lock(&g->mu);
    while (g->filled == *pos && !g->done && !g->failed)
        pthread_cond_wait(&g->cv, &g->mu);
    size_t avail = g->filled - *pos;
    *failed = g->failed;
    pthread_mutex_unlock(&g->mu);
    size_t n = *failed ? 0 : avail < cap ? avail : cap;
    memcpy(dst, g->buf + *pos, n);
    *pos += n;
    return n;
}

typedef enum { CODEC_NONE, CODEC_GZIP, CODEC_ZSTD, CODEC_XZ } codec_id;

static const char *codec_name(codec_id c)
{
    static const char *const names[] = {"plain", "gzip", "zstd", "xz"};
    return names[c];
}

typedef struct {
    FILE *fp;
    bool own_fp;   /* fp was opened here (not standard input) */
    growing *grow; /* mem is grow's buffer, filled as it is read */
    bool grow_failed;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    codec_id codec;
    bool dec_ready, dec_done;
    bool frame_open; /* zstd: the last frame is not complete */
    z_stream z;
    ZSTD_DStream *zs;
    lzma_stream xz;
    unsigned char *inbuf;
    size_t in_cap; /* IN_BLOCK, or less for a small trace in memory */
    /* the unread input in inbuf (CODEC_NONE: the sniffed first bytes) */
    const unsigned char *in_next;
    size_t in_avail;
    bool in_eof;
    uint64_t bytes_in;
} source;

static size_t raw_read(source *s, unsigned char *dst, size_t cap)
{
    if (s->fp)
        return fread(dst, 1, cap, s->fp);
    if (s->grow)
        return grow_read(s->grow, &s->mem_pos, dst, cap, &s->grow_failed);
    size_t n = s->mem_len - s->mem_pos < cap ? s->mem_len - s->mem_pos : cap;
    memcpy(dst, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    return n;
}

static bool raw_error(const source *s) { return (s->fp && ferror(s->fp)) || s->grow_failed; }

/* Fills inbuf (keeping unread input); false only on read error. */
static bool refill(source *s)
{
    if (s->in_eof)
        return true;
    size_t keep = s->in_avail;
    if (keep && s->in_next != s->inbuf)
        memmove(s->inbuf, s->in_next, keep);
    size_t n = raw_read(s, s->inbuf + keep, s->in_cap - keep);
    if (raw_error(s))
        return false;
    if (n == 0)
        s->in_eof = true;
    s->bytes_in += n;
    s->in_next = s->inbuf;
    s->in_avail = keep + n;
    return true;
}

static long read_failed(kd_error *err, const char *label)
{
    kd_fail(err, KD_EIO, "%s: read error: %s", label, strerror(errno));
    return -1;
}

static long out_of_memory(kd_error *err, const char *label)
{
    kd_fail(err, KD_ENOMEM, "%s: out of memory", label);
    return -1;
}

/* After a gzip member: 1 another member follows, 0 the end (nothing, or only
 * zero bytes, which gzip -t accepts as padding), -1 read error, -2 garbage.
 * Reads on as needed: the next member's magic may lie across a read block. */
static int gzip_after_member(source *s)
{
    while (s->in_avail < 2 && !s->in_eof)
        if (!refill(s))
            return -1;
    if (s->in_avail == 0)
        return 0;
    if (s->in_avail >= 2 && s->in_next[0] == 0x1f && s->in_next[1] == 0x8b)
        return 1;
    for (;;) {
        for (size_t i = 0; i < s->in_avail; i++)
            if (s->in_next[i])
                return -2;
        s->in_next += s->in_avail;
        s->in_avail = 0;
        if (s->in_eof)
            return 0;
        if (!refill(s))
            return -1;
    }
}

static long gzip_read(source *s, unsigned char *dst, size_t cap, const char *label, kd_error *err)
{
    s->z.next_out = dst;
    s->z.avail_out = (uInt)cap;
    while (s->z.avail_out == cap && !s->dec_done) {
        if (s->in_avail == 0 && !refill(s))
            return read_failed(err, label);
        if (s->in_avail == 0 && s->in_eof) {
            kd_fail(err, KD_EINPUT, "%s: truncated gzip stream (ends after %llu compressed bytes)",
                    label, (unsigned long long)s->bytes_in);
            return -1;
        }
        s->z.next_in = (Bytef *)(uintptr_t)s->in_next;
        s->z.avail_in = (uInt)s->in_avail;
        int rc = inflate(&s->z, Z_NO_FLUSH);
        s->in_next = s->z.next_in;
        s->in_avail = s->z.avail_in;
        if (rc == Z_STREAM_END) {
            /* concatenated members are one stream, as gzip(1) reads them */
            int next = gzip_after_member(s);
            if (next == -1)
                return read_failed(err, label);
            if (next == -2) {
                kd_fail(err, KD_EINPUT, "%s: trailing garbage after the gzip stream", label);
                return -1;
            }
            if (next == 0)
                s->dec_done = true;
            else
                inflateReset(&s->z);
        } else if (rc == Z_BUF_ERROR && s->in_avail == 0) {
            continue; /* needs input: refilled next turn */
        } else if (rc == Z_MEM_ERROR) {
            return out_of_memory(err, label);
        } else if (rc != Z_OK) {
            kd_fail(err, KD_EINPUT, "%s: corrupt gzip data: %s", label,
                    s->z.msg ? s->z.msg : "inflate failed");
            return -1;
        }
    }
    return (long)(cap - s->z.avail_out);
}

/* zstd: one frame after another (ZSTD_decompressStream goes on to the next
 * frame by itself; skippable frames are skipped). */
static long zstd_read(source *s, unsigned char *dst, size_t cap, const char *label, kd_error *err)
{
    ZSTD_outBuffer out = {dst, cap, 0};
    while (out.pos == 0 && !s->dec_done) {
        if (s->in_avail == 0 && !s->in_eof && !refill(s))
            return read_failed(err, label);
        ZSTD_inBuffer in = {s->in_next, s->in_avail, 0};
        size_t r = ZSTD_decompressStream(s->zs, &out, &in);
        s->in_next += in.pos;
        s->in_avail -= in.pos;
        if (ZSTD_isError(r)) {
            if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
                return out_of_memory(err, label);
            kd_fail(err, KD_EINPUT, "%s: corrupt zstd data: %s", label, ZSTD_getErrorName(r));
            return -1;
        }
        if (out.pos || in.pos) /* 0: a frame ended (else a hint for the next) */
            s->frame_open = r != 0;
        if (s->in_eof && s->in_avail == 0 && out.pos == 0 && in.pos == 0) {
            if (s->frame_open) {
                kd_fail(err, KD_EINPUT,
                        "%s: truncated zstd stream (ends after %llu compressed bytes)", label,
                        (unsigned long long)s->bytes_in);
                return -1;
            }
            s->dec_done = true;
        }
    }
    return (long)out.pos;
}

/* xz: concatenated streams and stream padding, as xz(1) reads them. */
static long xz_read(source *s, unsigned char *dst, size_t cap, const char *label, kd_error *err)
{
    s->xz.next_out = dst;
    s->xz.avail_out = cap;
    while (s->xz.avail_out == cap && !s->dec_done) {
        if (s->in_avail == 0 && !s->in_eof && !refill(s))
            return read_failed(err, label);
        s->xz.next_in = s->in_next;
        s->xz.avail_in = s->in_avail;
        lzma_ret r = lzma_code(&s->xz, s->in_eof ? LZMA_FINISH : LZMA_RUN);
        s->in_next = s->xz.next_in;
        s->in_avail = s->xz.avail_in;
        if (r == LZMA_STREAM_END) {
            s->dec_done = true;
        } else if (r == LZMA_BUF_ERROR && s->in_eof) {
            kd_fail(err, KD_EINPUT, "%s: truncated xz stream (ends after %llu compressed bytes)",
                    label, (unsigned long long)s->bytes_in);
            return -1;
        } else if (r == LZMA_MEM_ERROR) {
            return out_of_memory(err, label);
        } else if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
            kd_fail(err, KD_EINPUT, "%s: corrupt xz data (%s)", label,
                    r == LZMA_FORMAT_ERROR    ? "not an xz stream"
                    : r == LZMA_OPTIONS_ERROR ? "unsupported options"
                                              : "bad data or check");
            return -1;
        }
    }
    return (long)(cap - s->xz.avail_out);
}

/* Reads up to cap decompressed bytes. Returns bytes, 0 at end; -1 on error
 * with err set. */
static long source_read(source *s, unsigned char *dst, size_t cap, const char *label,
                        kd_error *err)
{
    if (s->codec == CODEC_GZIP)
        return gzip_read(s, dst, cap, label, err);
    if (s->codec == CODEC_ZSTD)
        return zstd_read(s, dst, cap, label, err);
    if (s->codec == CODEC_XZ)
        return xz_read(s, dst, cap, label, err);
    size_t sniffed = 0;
    if (s->in_avail) { /* the sniffed first bytes lead the first block */
        sniffed = s->in_avail < cap ? s->in_avail : cap;
        memcpy(dst, s->in_next, sniffed);
        s->in_next += sniffed;
        s->in_avail -= sniffed;
    }
    size_t n = sniffed < cap ? raw_read(s, dst + sniffed, cap - sniffed) : 0;
    if (raw_error(s))
        return read_failed(err, label);
    s->bytes_in += n;
    return (long)(n + sniffed);
}

/* The decompressors allocate through these, like the rest of the library
 * (so a test's failing allocator reaches them too). */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    free(p);
}

static void *zstd_alloc(void *opaque, size_t n)
{
    (void)opaque;
    return malloc(n);
}

static void zstd_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    return nmemb && size > SIZE_MAX / nmemb ? NULL : malloc(nmemb * size);
}

static void xz_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

static const lzma_allocator xz_allocator = {xz_alloc, xz_free, NULL};

#define SNIFF 6 /* the longest magic read (xz) */

/* What the first bytes say: a codec read here, or (*refused) the name of a
 * compression that is not read, with the command that undoes it. */
static codec_id sniff_codec(const unsigned char *b, size_t n, const char **refused,
                            const char **undo)
{
    *refused = *undo = NULL;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return CODEC_GZIP;
    if (n >= 4 && ((b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) ||
                   ((b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18)))
        return CODEC_ZSTD; /* a frame, or a skippable frame ahead of one */
    if (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0)
        return CODEC_XZ;
    if (n >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9')
        *refused = "bzip2", *undo = "bzip2 -dc";
    else if (n >= 4 && memcmp(b, "\x04\x22\x4d\x18", 4) == 0)
        *refused = "lz4", *undo = "lz4 -dc";
    else if (n >= 4 && memcmp(b, "LZIP", 4) == 0)
        *refused = "lzip", *undo = "lzip -dc";
    else if (n >= 4 && memcmp(b, "PK\x03\x04", 4) == 0)
        *refused = "zip", *undo = "unzip -p";
    else if (n >= 2 && b[0] == 0x1f && b[1] == 0x9d)
        *refused = "compress (.Z)", *undo = "gzip -dc";
    return CODEC_NONE;
}

static bool source_open(source *s, const char *label, kd_error *err)
{
    /* a small trace in memory (tests, the fuzz targets) fits in a buffer of
     * its own size; the whole of it is read at the first refill */
    if (!s->in_cap) /* else the caller's (the header peek reads little) */
        s->in_cap = s->mem && s->mem_len < IN_BLOCK - 16 ? s->mem_len + 16 : IN_BLOCK;
    s->inbuf = malloc(s->in_cap);
    if (!s->inbuf) {
        out_of_memory(err, label);
        return false;
    }
    /* sniff the magic bytes: compression is detected by content, not suffix */
    size_t n = 0;
    while (n < SNIFF) {
        size_t r = raw_read(s, s->inbuf + n, SNIFF - n);
        if (raw_error(s)) {
            read_failed(err, label);
            return false;
        }
        if (r == 0)
            break;
        n += r;
    }
    s->bytes_in = n;
    s->in_next = s->inbuf;
    s->in_avail = n;
    /* a growing buffer holds inflated bytes: magic bytes there are not
     * JSON, as when streaming */
    const char *refused = NULL, *undo = NULL;
    s->codec = s->grow ? CODEC_NONE : sniff_codec(s->inbuf, n, &refused, &undo);
    if (refused) {
        kd_fail(err, KD_EINPUT,
                "%s: %s-compressed data, which kerndiff does not read: decompress it first "
                "(%s FILE | kerndiff COMMAND -)",
                label, refused, undo);
        return false;
    }
    if (s->codec == CODEC_GZIP) {
        memset(&s->z, 0, sizeof s->z);
        s->z.zalloc = z_alloc;
        s->z.zfree = z_free;
        int rc = inflateInit2(&s->z, 15 + 16);
        if (rc != Z_OK) {
            kd_fail(err, rc == Z_MEM_ERROR ? KD_ENOMEM : KD_EIO, "%s: %s", label,
                    rc == Z_MEM_ERROR ? "out of memory" : "cannot initialise zlib");
            return false;
        }
    } else if (s->codec == CODEC_ZSTD) {
        ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};
        s->zs = ZSTD_createDStream_advanced(mem);
        if (!s->zs || ZSTD_isError(ZSTD_initDStream(s->zs))) {
            out_of_memory(err, label);
            return false;
        }
    } else if (s->codec == CODEC_XZ) {
        lzma_stream init = LZMA_STREAM_INIT;
        s->xz = init;
        s->xz.allocator = &xz_allocator;
        lzma_ret r = lzma_stream_decoder(&s->xz, UINT64_MAX, LZMA_CONCATENATED);
        if (r != LZMA_OK) {
            kd_fail(err, r == LZMA_MEM_ERROR ? KD_ENOMEM : KD_EIO, "%s: %s", label,
                    r == LZMA_MEM_ERROR ? "out of memory" : "cannot initialise liblzma");
            return false;
        }
    }
    s->dec_ready = true;
    return true;
}

static void source_close(source *s)
{
    if (s->dec_ready && s->codec == CODEC_GZIP)
        inflateEnd(&s->z);
    if (s->dec_ready && s->codec == CODEC_XZ)
        lzma_end(&s->xz);
    ZSTD_freeDStream(s->zs); /* NULL is fine */
    if (s->fp && s->own_fp)
        fclose(s->fp);
    free(s->inbuf);
    memset(s, 0, sizeof *s);
}

/* ---- a reader thread for compressed input -------------------------------
 * Inflating (and its CRC) costs about a third of a bare parse; a second
 * thread decompresses the next blocks while this one parses, so a gzip
 * (zstd, xz) trace loads in about the time of parsing alone. */

#define READ_SLOTS 3

typedef struct {
    source *src;
    const char *label;
    kd_error err;
    pthread_t thread;
    bool threaded;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *buf[READ_SLOTS];
    size_t block; /* bytes per buffer */
    long len[READ_SLOTS];
    int head, count;
    bool stop;
} block_reader;

static void *reader_main(void *arg)
{
    block_reader *r = arg;
    int tail = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->count == READ_SLOTS && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
        long n = source_read(r->src, r->buf[tail], r->block, r->label, &r->err);
        pthread_mutex_lock(&r->mu);
        r->len[tail] = n;
        r->count++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        tail = (tail + 1) % READ_SLOTS;
        if (n <= 0)
            break;
    }
    return NULL;
}

static bool reader_start(block_reader *r, source *src, const char *label)
{
    memset(r, 0, sizeof *r);
    r->src = src;
    r->label = label;
    /* a small trace in memory (tests, the fuzz targets) needs no 4 MiB
     * blocks: a plain one gets one block of its own size, a gzip one
     * 256 KiB blocks (its inflated size is unknown; blocks only pace it) */
    bool packed = src->codec != CODEC_NONE;
    if (src->mem && !packed && src->mem_len < OUT_BLOCK)
        r->block = src->mem_len + 1;
    else if (src->mem && packed && src->mem_len < SMALL_GZIP)
        r->block = SMALL_GZIP_BLOCK;
    else
        r->block = OUT_BLOCK;
    for (int i = 0; i < (packed ? READ_SLOTS : 1); i++)
        if (!(r->buf[i] = malloc(r->block)))
            return false;
    if (!packed)
        return true;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->threaded = pthread_create(&r->thread, NULL, reader_main, r) == 0;
    if (!r->threaded) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    return true;
}

/* The next block (n bytes in *out; 0 at the end; -1 on error with err set).
 * The previous block is released first. */
static long reader_next(block_reader *r, unsigned char **out, kd_error *err)
{
    if (!r->threaded) {
        *out = r->buf[0];
        return source_read(r->src, r->buf[0], r->block, r->label, err);
    }
    pthread_mutex_lock(&r->mu);
    while (r->count == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    long n = r->len[r->head];
    *out = r->buf[r->head];
    pthread_mutex_unlock(&r->mu);
    if (n < 0 && err)
        *err = r->err;
    return n;
}

static void reader_release(block_reader *r)
{
    if (!r->threaded)
        return;
    pthread_mutex_lock(&r->mu);
    r->head = (r->head + 1) % READ_SLOTS;
    r->count--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void reader_stop(block_reader *r)
{
    if (r->threaded) {
        pthread_mutex_lock(&r->mu);
        r->stop = true;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    for (int i = 0; i < READ_SLOTS; i++)
        free(r->buf[i]);
}

/* ---- chunks: how the bytes reach yajl ------------------------------------
 * yajl buffers a token that a fed block leaves open and, at the next feed,
 * lexes it again from its start: a string spanning k blocks costs k times
 * its length, quadratic. So once a whole chunk went by without a callback
 * (a token at least that long is open: parse_pass counts them), the next
 * chunk gathers at least as many bytes as the open token has, and each
 * rescan is paid for by as many new bytes: linear in all. A normal trace
 * never gets there (a callback every few bytes) and gets the reader's blocks
 * as they are, with no copy. */

typedef struct {
    block_reader *rd;
    bool held;  /* a reader block is out (released at the next call) */
    bool ended; /* the reader gave its end */
    unsigned char *acc; /* the gathered chunk */
    size_t acc_cap;
    uint64_t want; /* gather at least this many bytes (0: a block as it is) */
} chunker;

/* The next chunk (n bytes in *out; 0 at the end; -1 on error with err set). */
static long chunk_next(chunker *c, unsigned char **out, const char *label, kd_error *err)
{
    if (c->held) {
        reader_release(c->rd);
        c->held = false;
    }
    if (c->ended)
        return 0;
    if (!c->want) {
        long n = reader_next(c->rd, out, err);
        if (n < 0)
            return -1;
        c->held = true;
        c->ended = n == 0;
        return n;
    }
    size_t len = 0;
    while (len < c->want) {
        unsigned char *b;
        long n = reader_next(c->rd, &b, err);
        if (n < 0)
            return -1;
        if (n == 0) {
            c->ended = true;
            break;
        }
        if ((size_t)n > c->acc_cap - len) {
            size_t cap = c->acc_cap ? c->acc_cap : c->want;
            while (cap - len < (size_t)n)
                cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
            unsigned char *p = realloc(c->acc, cap);
            if (!p) {
                reader_release(c->rd);
                return out_of_memory(err, label);
            }
            c->acc = p;
            c->acc_cap = cap;
        }
        memcpy(c->acc + len, b, (size_t)n);
        len += (size_t)n;
        reader_release(c->rd);
    }
    *out = c->acc;
    return (long)len;
}

/* After a fed chunk of n bytes: whether any callback came (tokens moved);
 * *run counts the bytes since one came, over whole chunks, which an open
 * token at least has. */
static void chunk_fed(chunker *c, bool called, uint64_t n, uint64_t *run)
{
    *run = called ? 0 : *run + n;
    c->want = *run >= LONG_TOKEN ? *run : 0;
    if (!c->want && c->acc) { /* the long token is over: its memory goes */
        free(c->acc);
        c->acc = NULL;
        c->acc_cap = 0;
    }
}

/* ---- one parse pass ---------------------------------------------------- */

typedef enum {
    PASS_OK,
    PASS_FAILED,
    PASS_RETRY_FILTERED,
    PASS_SPLIT,     /* split head: stopped at a confirmed event boundary */
    PASS_CANCELLED, /* split tail: the head found the boundary false */
    PASS_SERIAL     /* split head: the boundary bytes hit an error; load serially */
} pass_result;

/* How a pass takes part in a split load (see "split load" below). */
typedef struct {
    /* tail: fed before the file bytes, in place of the head's document */
    const char *prefix;
    /* tail: polled between blocks; the head sets it when the split fails */
    atomic_bool *cancel;
    /* head: file offset of the '{' the tail starts at (0: none) */
    uint64_t stop_at;
    /* head of a gzip split: stop_at is polled from here until decided */
    growing *grow;
} pass_ctl;

/* Head of a gzip split, before taking the bytes up to next: the split point
 * if the filler has decided it, else a note that these bytes are taken
 * (the filler then cuts only behind them). */
static void poll_split_point(pass_ctl *ctl, uint64_t next)
{
    growing *g = ctl->grow;
    pthread_mutex_lock(&g->mu);
    if (g->decided) {
        ctl->stop_at = g->stop_at;
        ctl->grow = NULL; /* final */
    } else {
        g->head_next = next;
    }
    pthread_mutex_unlock(&g->mu);
}

static void report_parse_error(yguard *g, yajl_handle h, const unsigned char *buf, size_t n,
                               uint64_t offset, bool at_end, const char *label, kd_error *err)
{
    unsigned char *msg = yg_error(g, h, buf, n);
    if (g->failed) { /* no memory for yajl's message */
        kd_fail(err, KD_ENOMEM, "%s: out of memory while loading", label);
        return;
    }
    const char *m = msg ? (const char *)msg : "parse error";
    if (at_end && strstr(m, "premature EOF"))
        kd_fail(err, KD_EINPUT, "%s: truncated JSON: the document ends early (at byte %llu)",
                label, (unsigned long long)offset);
    else
        kd_fail(err, KD_EINPUT, "%s: invalid JSON at byte %llu: %s", label,
                (unsigned long long)offset, m);
    /* yajl messages end with a newline-ish period; kd_fail keeps one line */
    size_t len = strlen(err->msg);
    while (len && (err->msg[len - 1] == '\n' || err->msg[len - 1] == ' '))
        err->msg[--len] = '\0';
    if (msg)
        yajl_free_error(h, msg);
}

/* A string (or number) over the limit, seen whole by a callback (end: the
 * offset just past it) or still open after run bytes (end: the offset fed). */
static void report_too_long(const loader *L, uint64_t end, size_t len, uint64_t run)
{
    if (len)
        kd_fail(L->err, KD_EINPUT,
                "%s: a JSON string longer than the %llu-byte limit (--max-string) at byte %llu",
                L->label, (unsigned long long)L->max_string,
                (unsigned long long)(end >= len + 2 ? end - len - 2 : 0));
    else
        kd_fail(L->err, KD_EINPUT,
                "%s: a JSON string longer than the %llu-byte limit (--max-string) at or before "
                "byte %llu",
                L->label, (unsigned long long)L->max_string,
                (unsigned long long)(end >= run ? end - run : 0));
}

/* Head of a split load: feeds the block holding ctl->stop_at up to that
 * '{', then the '{' alone. The split is confirmed when the '{' opened an
 * element of the events list (the tail parses from there); the started
 * event is then left to the tail. Otherwise the tail is cancelled and the
 * rest of the block fed, so the pass goes on as a serial one. */
static pass_result feed_split_block(loader *L, yguard *g, yajl_handle h, const unsigned char *p,
                                    size_t len, uint64_t offset, pass_ctl *ctl)
{
    size_t head = (size_t)(ctl->stop_at - offset);
    if (yg_parse(g, h, p, head) != yajl_status_ok)
        return PASS_SERIAL;
    uint64_t events = L->t->events_read;
    bool at_list = L->in_events && !L->in_event && L->depth == L->events_depth;
    if (yg_parse(g, h, p + head, 1) != yajl_status_ok)
        return PASS_SERIAL;
    if (at_list && L->in_event && L->t->events_read == events + 1) {
        L->t->events_read = events;
        return PASS_SPLIT;
    }
    atomic_store(ctl->cancel, true);
    ctl->stop_at = 0;
    if (yg_parse(g, h, p + head + 1, len - head - 1) != yajl_status_ok)
        return PASS_SERIAL;
    return PASS_OK;
}

static pass_result parse_pass(loader *L, source *src, bool filtered, pass_ctl *ctl)
{
    block_reader rd;
    bool rd_ok = reader_start(&rd, src, L->label);
    chunker ch = {&rd, false, false, NULL, 0, 0};
    unsigned char *buf = NULL;
    size_t fcap = filtered && rd_ok ? rd.block * 2 + 16 : 0;
    unsigned char *fbuf = fcap ? malloc(fcap) : NULL;
    yguard yg;
    yg_init(&yg);
    yajl_handle h = rd_ok ? yg_alloc(&yg, &callbacks, L) : NULL;
    pass_result res = PASS_FAILED;
    if (!rd_ok || (filtered && !fbuf) || !h) {
        kd_fail(L->err, KD_ENOMEM, "%s: out of memory", L->label);
        goto done;
    }
    nonfinite_filter nf = {0};
    uint64_t offset = 0; /* JSON bytes fed so far (before filtering) */
    uint64_t run = 0;    /* bytes fed since the last callback (chunk_fed) */
    bool first = true;
    if (ctl && ctl->prefix &&
        yg_parse(&yg, h, (const unsigned char *)ctl->prefix, strlen(ctl->prefix)) != yajl_status_ok) {
        if (yg.failed)
            kd_fail(L->err, KD_ENOMEM, "%s: out of memory while loading", L->label);
        goto done; /* else cannot happen: the prefixes are valid JSON openings */
    }
    for (;;) {
        if (ctl && ctl->prefix && atomic_load(ctl->cancel)) {
            res = PASS_CANCELLED;
            goto done;
        }
        long n = chunk_next(&ch, &buf, L->label, L->err);
        if (n < 0)
            goto done;
        const unsigned char *p = buf;
        size_t len = (size_t)n;
        if (first && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
            p += 3; /* a UTF-8 BOM is not content */
            len -= 3;
            offset += 3;
        }
        first = false;
        const unsigned char *raw = p;
        size_t raw_len = len;
        nonfinite_filter nf_before = nf;
        if (filtered && len > (fcap - 16) / 2) { /* a gathered chunk (long token) */
            unsigned char *f = realloc(fbuf, len * 2 + 16);
            if (!f) {
                kd_fail(L->err, KD_ENOMEM, "%s: out of memory while loading", L->label);
                goto done;
            }
            fbuf = f;
            fcap = len * 2 + 16;
        }
        if (n == 0 && filtered) {
            len = flush_nonfinite(&nf, fbuf);
            p = fbuf;
        } else if (filtered) {
            len = filter_nonfinite(&nf, p, len, fbuf);
            p = fbuf;
        }
        if (n == 0 && len == 0)
            break;
        L->t->bytes_json += (uint64_t)n;
        uint64_t tokens = L->tokens;
        yajl_status st = yajl_status_ok;
        if (ctl && ctl->grow)
            poll_split_point(ctl, offset + raw_len);
        if (ctl && ctl->stop_at && ctl->stop_at >= offset && ctl->stop_at < offset + raw_len) {
            res = feed_split_block(L, &yg, h, p, len, offset, ctl);
            if (res != PASS_OK)
                goto done;
            res = PASS_FAILED;
        } else {
            st = yg_parse(&yg, h, p, len);
        }
        if (st != yajl_status_ok) {
            if (L->status || yg.failed) {
                kd_fail(L->err, KD_ENOMEM, "%s: out of memory while loading", L->label);
                goto done;
            }
            size_t at = yajl_get_bytes_consumed(h);
            uint64_t where = offset + original_offset(&nf_before, raw, raw_len, at);
            if (L->too_long) {
                report_too_long(L, where, L->too_long, 0);
                goto done;
            }
            if (L->bad_utf8) {
                kd_fail(L->err, KD_EINPUT, "%s: invalid UTF-8 in a string (before byte %llu)", L->label,
                        (unsigned long long)where);
                goto done;
            }
            if (!filtered) { /* maybe a NaN / Infinity literal, maybe split across blocks */
                res = PASS_RETRY_FILTERED;
                goto done;
            }
            report_parse_error(&yg, h, p, len, where, false, L->label, L->err);
            goto done;
        }
        offset += raw_len;
        if (n == 0)
            break;
        chunk_fed(&ch, L->tokens != tokens, (uint64_t)n, &run);
        if (run > L->max_string) {
            report_too_long(L, offset, 0, run);
            goto done;
        }
    }
    if (L->t->bytes_json == 0) {
        kd_fail(L->err, KD_EINPUT, "%s: empty file", L->label);
        goto done;
    }
    if (yg_complete(&yg, h) != yajl_status_ok) {
        if (L->status || yg.failed) {
            kd_fail(L->err, KD_ENOMEM, "%s: out of memory while loading", L->label);
            goto done;
        }
        if (L->too_long) {
            report_too_long(L, offset, L->too_long, 0);
            goto done;
        }
        report_parse_error(&yg, h, NULL, 0, offset, true, L->label, L->err);
        goto done;
    }
    res = PASS_OK;
done:
    yg_done(&yg, h);
    reader_stop(&rd);
    free(ch.acc);
    free(fbuf);
    return res;
}

static bool check_shape(const loader *L, kd_error *err)
{
    const kd_trace *t = L->t;
    if (L->top == TOP_SCALAR || L->top == TOP_NONE) {
        kd_fail(err, KD_EINPUT, "%s: not a trace: the top-level JSON value is not an object or a list",
                L->label);
        return false;
    }
    if (L->top == TOP_OBJECT && L->events_bad_type) {
        kd_fail(err, KD_EINPUT, "%s: not a trace: \"traceEvents\" is not a list", L->label);
        return false;
    }
    if (L->top == TOP_OBJECT && !t->has_trace_events) {
        kd_fail(err, KD_EINPUT, "%s: not a trace: the top-level object has no \"traceEvents\" list",
                L->label);
        return false;
    }
    return true;
}

static kd_trace *trace_new(const char *label)
{
    kd_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->path = strdup(label);
    t->strings = kd_interner_new();
    if (!t->path || !t->strings) {
        kd_trace_free(t);
        return NULL;
    }
    return t;
}

typedef struct {
    const char *path;      /* file to open, or NULL */
    const void *mem;
    size_t mem_len;
    uint64_t start; /* read from this byte on (a split load's tail) */
    growing *grow;  /* mem is being filled (a gzip split's head) */
    bool is_stdin;  /* standard input (path and mem NULL): read once, no seek */
    const char *name; /* the trace's path (NULL: the label) */
    uint64_t max_string;
    const kd_rules *rules; /* the classification (NULL: the reference's) */
    size_t block; /* the read block (0: IN_BLOCK; the header peek's is small) */
} input;

static bool open_input(const input *in, source *s, const char *label, kd_error *err)
{
    memset(s, 0, sizeof *s);
    if (in->is_stdin) {
        s->fp = stdin;
    } else if (in->path) {
        s->fp = fopen(in->path, "rb");
        s->own_fp = s->fp != NULL;
        if (!s->fp) {
            kd_fail(err, errno == ENOENT ? KD_EINPUT : KD_EIO, "%s: cannot open: %s", label,
                    strerror(errno));
            return false;
        }
        if (in->start && fseeko(s->fp, (off_t)in->start, SEEK_SET) != 0) {
            kd_fail(err, KD_EIO, "%s: cannot seek: %s", label, strerror(errno));
            return false;
        }
    } else {
        s->mem = (const unsigned char *)in->mem + in->start;
        s->mem_len = in->mem_len - in->start;
        s->grow = in->grow;
    }
    s->in_cap = in->block;
    return source_open(s, label, err);
}

/* One pass over in: a new trace and its loader's end state. */
typedef struct {
    kd_trace *t;
    pass_result r;
    bool forgot; /* a second traceEvents key replaced the first */
    bool saw_dist, saw_devs; /* the metadata keys were met (merge_tail) */
} pass_outcome;

static pass_outcome run_pass(const input *in, const char *label, bool filtered, pass_ctl *ctl,
                             kd_error *err)
{
    pass_outcome o = {trace_new(in->name ? in->name : label), PASS_FAILED, false, false, false};
    if (!o.t) {
        kd_fail(err, KD_ENOMEM, "%s: out of memory", label);
        return o;
    }
    loader L;
    memset(&L, 0, sizeof L);
    L.t = o.t;
    L.label = label;
    L.err = err;
    L.max_string = in->max_string ? in->max_string : KD_LOAD_MAX_STRING;
    kd_keeper_init(&L.keep, o.t, in->rules, &L.status);
    reset_event(&L);
    source src;
    if (open_input(in, &src, label, err)) {
        o.r = parse_pass(&L, &src, filtered, ctl);
        o.t->bytes_in = src.bytes_in;
        o.t->gzip = src.codec == CODEC_GZIP;
        o.t->compression = codec_name(src.codec);
    }
    source_close(&src);
    free(L.scratch);
    kd_keeper_free(&L.keep);
    o.forgot = L.forgot;
    o.saw_dist = L.saw_dist;
    o.saw_devs = L.saw_devs;
    if (o.r == PASS_OK && !check_shape(&L, err))
        o.r = PASS_FAILED;
    if (o.r == PASS_OK)
        o.t->shape = L.top == TOP_LIST ? KD_SHAPE_LIST : KD_SHAPE_OBJECT;
    return o;
}

/* ---- split load ---------------------------------------------------------
 * yajl's lexing is most of a load's time and runs on one core. A large plain
 * file is therefore parsed as two halves at once: the tail from an event
 * boundary found near the middle (`}` `,` `{` outside any string, as far as
 * a byte scan can tell), behind a synthetic opening of the document; the
 * head from the start up to that boundary, where it checks that the `{`
 * really opens an element of the traceEvents list. A false boundary cancels
 * the tail and the head goes on alone; any problem in the tail (a parse
 * error, invalid UTF-8, a second traceEvents key) reloads the file serially,
 * so results and error messages are exactly the serial ones. The halves'
 * records are concatenated in trace order and the tail's strings re-interned
 * in its first-seen order, which gives the serial ids. */

#define SPLIT_WINDOW (1u << 20)

static size_t read_at(const input *in, FILE *fp, uint64_t at, unsigned char *buf, size_t n)
{
    if (!fp) {
        if (at >= in->mem_len)
            return 0;
        size_t left = (size_t)(in->mem_len - at);
        n = n < left ? n : left;
        memcpy(buf, (const unsigned char *)in->mem + at, n);
        return n;
    }
    if (fseeko(fp, (off_t)at, SEEK_SET) != 0)
        return 0;
    return fread(buf, 1, n, fp);
}

static bool json_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The offset of the '{' of the first `}`, `,`, `{` (blanks between) in buf. */
static bool find_boundary(const unsigned char *buf, size_t n, size_t *at)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '}')
            continue;
        size_t j = i + 1;
        while (j < n && json_space(buf[j]))
            j++;
        if (j >= n || buf[j] != ',')
            continue;
        j++;
        while (j < n && json_space(buf[j]))
            j++;
        if (j < n && buf[j] == '{') {
            *at = j;
            return true;
        }
    }
    return false;
}

/* The tail's synthetic opening for the document's shape, or NULL. */
static const char *shape_prefix(const unsigned char *buf, size_t n)
{
    size_t i = n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < n && json_space(buf[i]))
        i++;
    return i == n ? NULL : buf[i] == '{' ? "{\"traceEvents\":[" : buf[i] == '[' ? "[" : NULL;
}

/* Where a split load would cut in (a plain file of at least min_bytes), and
 * the tail's synthetic opening for the document's shape. */
static bool find_split_point(const input *in, uint64_t min_bytes, uint64_t *at, const char **prefix)
{
    FILE *fp = NULL;
    uint64_t size = in->mem_len;
    if (in->is_stdin)
        return false; /* read once, as it streams */
    if (in->path) {
        struct stat sb;
        if (stat(in->path, &sb) != 0 || !S_ISREG(sb.st_mode))
            return false;
        size = (uint64_t)sb.st_size;
    }
    if (size < min_bytes || size < 64)
        return false;
    if (in->path && !(fp = fopen(in->path, "rb")))
        return false;
    unsigned char *buf = malloc(SPLIT_WINDOW);
    bool ok = false;
    size_t n = buf ? read_at(in, fp, 0, buf, 64) : 0;
    const char *shape = n >= 2 && !(buf[0] == 0x1f && buf[1] == 0x8b) ? shape_prefix(buf, n) : NULL;
    if (shape) {
        *prefix = shape;
        uint64_t mid = size / 2;
        size_t w = read_at(in, fp, mid, buf, SPLIT_WINDOW);
        size_t off;
        if (find_boundary(buf, w, &off)) {
            *at = mid + off;
            ok = true;
        }
    }
    free(buf);
    if (fp)
        fclose(fp);
    return ok;
}

typedef struct {
    input in;
    const char *label;
    pass_ctl ctl;
    atomic_bool cancel;
    kd_error err;
    pass_outcome out;
} split_tail;

static void *split_tail_main(void *arg)
{
    split_tail *j = arg;
    j->out = run_pass(&j->in, j->label, false, &j->ctl, &j->err);
    return NULL;
}

/* Appends src's records to dst, strings mapped by map (src id -> dst id). */
#define APPEND_REMAPPED(T, dst, src, fix)                                          \
    do {                                                                           \
        for (size_t i_ = 0; i_ < (src).n; i_++) {                                  \
            if (!KD_VEC_PUSH(dst, (src).v[i_]))                                    \
                goto oom;                                                          \
            T *r_ = &(dst).v[(dst).n - 1];                                         \
            fix;                                                                   \
        }                                                                          \
    } while (0)

static bool merge_tail(kd_trace *t, const pass_outcome *tail_out)
{
    const kd_trace *tail = tail_out->t;
    uint32_t n = kd_interner_count(tail->strings);
    kd_sid *map = malloc(((size_t)n + 1) * sizeof *map);
    uint32_t *cat_at = NULL, *pid_at = NULL;
    if (!map)
        return false;
    map[0] = 0;
    for (uint32_t id = 1; id <= n; id++)
        if (!(map[id] = kd_intern(t->strings, kd_str(tail->strings, id), kd_str_len(tail->strings, id))))
            goto oom;
    APPEND_REMAPPED(kd_kernel_rec, t->kernels, tail->kernels,
                    (r_->name = map[r_->name], r_->cat = map[r_->cat], r_->pid = map[r_->pid],
                     r_->tid = map[r_->tid], r_->stream = map[r_->stream]));
    APPEND_REMAPPED(kd_cpu_op_rec, t->cpu_ops, tail->cpu_ops,
                    (r_->name = map[r_->name], r_->pid = map[r_->pid], r_->tid = map[r_->tid]));
    APPEND_REMAPPED(kd_frame_rec, t->frames, tail->frames,
                    (r_->name = map[r_->name], r_->pid = map[r_->pid], r_->tid = map[r_->tid]));
    APPEND_REMAPPED(kd_launch_rec, t->launches, tail->launches,
                    (r_->name = map[r_->name], r_->pid = map[r_->pid], r_->tid = map[r_->tid]));
    APPEND_REMAPPED(kd_thread_name_rec, t->thread_names, tail->thread_names,
                    (r_->name = map[r_->name], r_->pid = map[r_->pid], r_->tid = map[r_->tid]));
    APPEND_REMAPPED(kd_annotation_rec, t->annotations, tail->annotations, (void)r_);
    APPEND_REMAPPED(kd_corr_ext_rec, t->corr_ext, tail->corr_ext, (void)r_);
    APPEND_REMAPPED(kd_step_rec, t->profiler_steps, tail->profiler_steps, (void)r_);
    /* first-seen cats (with counts) and pids: the head's, then the tail's new ones */
    uint32_t count = kd_interner_count(t->strings);
    cat_at = calloc((size_t)count + 1, sizeof *cat_at);
    pid_at = calloc((size_t)count + 1, sizeof *pid_at);
    if (!cat_at || !pid_at)
        goto oom;
    for (size_t i = 0; i < t->seen_cats.n; i++)
        cat_at[t->seen_cats.v[i]] = (uint32_t)i + 1;
    for (size_t i = 0; i < t->seen_pids.n; i++)
        pid_at[t->seen_pids.v[i]] = (uint32_t)i + 1;
    for (size_t i = 0; i < tail->seen_cats.n; i++) {
        kd_sid c = map[tail->seen_cats.v[i]];
        if (!cat_at[c]) {
            if (!KD_VEC_PUSH(t->seen_cats, c) || !KD_VEC_PUSH(t->seen_cat_counts, 0))
                goto oom;
            cat_at[c] = (uint32_t)t->seen_cats.n;
        }
        t->seen_cat_counts.v[cat_at[c] - 1] += tail->seen_cat_counts.v[i];
    }
    for (size_t i = 0; i < tail->seen_pids.n; i++) {
        kd_sid p = map[tail->seen_pids.v[i]];
        if (!pid_at[p]) {
            if (!KD_VEC_PUSH(t->seen_pids, p))
                goto oom;
            pid_at[p] = (uint32_t)t->seen_pids.n;
        }
    }
    /* metadata: the tail's key, when it has one, came later in the document */
    if (tail_out->saw_dist) {
        t->has_rank = tail->has_rank;
        t->rank = tail->rank;
        t->has_world_size = tail->has_world_size;
        t->world_size = tail->world_size;
    }
    if (tail_out->saw_devs) {
        t->devices.n = 0;
        APPEND_REMAPPED(kd_device_rec, t->devices, tail->devices, (r_->name = map[r_->name]));
    }
    t->events_read += tail->events_read;
    t->complete_events += tail->complete_events;
    for (int r = 0; r < KD_SKIP_COUNT; r++)
        t->skipped[r] += tail->skipped[r];
    free(map);
    free(cat_at);
    free(pid_at);
    return true;
oom:
    free(map);
    free(cat_at);
    free(pid_at);
    return false;
}

/* A split load of in (cut at `at`). NULL with *redo set: load serially
 * (from the filtered pass when *redo_filtered). NULL without: err is the
 * serial answer. */
static kd_trace *load_split(const input *in, const char *label, uint64_t at, const char *prefix,
                            bool *redo, bool *redo_filtered, kd_error *err)
{
    *redo = *redo_filtered = false;
    split_tail *j = calloc(1, sizeof *j);
    pthread_t th;
    if (!j) {
        *redo = true;
        return NULL;
    }
    j->in = *in;
    j->in.start = at;
    j->label = label;
    atomic_init(&j->cancel, false);
    j->ctl.prefix = prefix;
    j->ctl.cancel = &j->cancel;
    if (pthread_create(&th, NULL, split_tail_main, j) != 0) {
        free(j);
        *redo = true;
        return NULL;
    }
    pass_ctl head = {NULL, &j->cancel, at, NULL};
    pass_outcome h = run_pass(in, label, false, &head, err);
    if (h.r != PASS_SPLIT)
        atomic_store(&j->cancel, true);
    pthread_join(th, NULL);
    kd_trace *t = NULL;
    const kd_trace *tail = j->out.t;
    if (h.r == PASS_SPLIT) {
        if (j->out.r == PASS_OK && !j->out.forgot && merge_tail(h.t, &j->out)) {
            t = h.t;
            h.t = NULL;
            t->shape = tail->shape;
            t->has_trace_events = tail->has_trace_events;
            /* a plain file: every byte is a JSON byte, read once */
            t->bytes_in = t->bytes_json = at + tail->bytes_in;
            t->split = true;
        } else {
            *redo = true;
        }
    } else if (h.r == PASS_OK) { /* a false boundary: the head went on alone */
        t = h.t;
        h.t = NULL;
    } else if (h.r == PASS_RETRY_FILTERED) {
        *redo = *redo_filtered = true;
    } else if (h.r == PASS_SERIAL) {
        *redo = true;
    } /* PASS_FAILED: an error before the boundary, err is the serial one */
    kd_trace_free(h.t);
    kd_trace_free(j->out.t);
    free(j);
    return t;
}

/* The smallest size split: the caller's, else the default for the kind of
 * input (KD_LOAD_SPLIT_MIN or KD_LOAD_GZIP_SPLIT_MIN). */
static uint64_t split_min(const kd_load_options *opt, uint64_t fallback)
{
    return opt->split_min_bytes ? opt->split_min_bytes : fallback;
}

/* A load as the options allow, gzip taken as it streams: split when the
 * input is a large plain one, else serial (then, if need be, once more with
 * the non-finite filter; first_pass 1: with it at once). */
static kd_trace *load_streaming(const input *in, const char *label, const kd_load_options *opt,
                                int first_pass, kd_error *err)
{
    uint64_t at;
    const char *prefix;
    if (opt && opt->threads >= 2 &&
        find_split_point(in, split_min(opt, KD_LOAD_SPLIT_MIN), &at, &prefix)) {
        bool redo, redo_filtered;
        kd_trace *t = load_split(in, label, at, prefix, &redo, &redo_filtered, err);
        if (t || !redo)
            return t;
        first_pass = redo_filtered ? 1 : 0;
    }
    for (int filtered = first_pass; filtered < 2; filtered++) {
        pass_outcome o = run_pass(in, label, filtered, NULL, err);
        if (o.r == PASS_OK)
            return o.t;
        kd_trace_free(o.t);
        if (o.r != PASS_RETRY_FILTERED)
            return NULL;
    }
    return NULL;
}

/* ---- gzip split -----------------------------------------------------------
 * A gzip stream cannot be entered in the middle, so a gzip trace normally
 * streams through one parser, a reader thread inflating beside it. With two
 * threads allowed and an uncompressed size (the gzip trailer's ISIZE) of
 * KD_LOAD_GZIP_SPLIT_MIN..KD_LOAD_GZIP_SPLIT_MAX, the second thread (there
 * is one anyway, inflating) instead inflates the whole trace into one buffer
 * while the head parses it as it fills; once done inflating, that thread
 * parses the tail, from an event boundary it chose behind GZIP_SPLIT_AT of
 * the trace (inflating is about a third of parsing, so the cut is past the
 * middle: both finish about together). The
 * rest is the plain split load's: the head checks the boundary, a false one
 * cancels the tail, the halves merge. Anything unexpected (a corrupt or
 * truncated stream, more bytes than the trailer said, a parse error) falls
 * back to the streaming load, so results and error messages are exactly
 * the streaming ones. */

#define GZIP_SPLIT_AT(n) ((n) / 3 * 2)

/* The gzip trailer's ISIZE (the last member's uncompressed size, mod 2^32):
 * a size hint. false when in is not a regular gzip file or buffer. */
static bool gzip_size_hint(const input *in, uint64_t *isize)
{
    unsigned char head[2], tail[4];
    if (in->is_stdin)
        return false;
    if (in->path) {
        struct stat sb;
        FILE *fp;
        if (stat(in->path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 18 ||
            !(fp = fopen(in->path, "rb")))
            return false;
        bool ok = read_at(in, fp, 0, head, 2) == 2 &&
                  read_at(in, fp, (uint64_t)sb.st_size - 4, tail, 4) == 4;
        fclose(fp);
        if (!ok)
            return false;
    } else {
        if (in->mem_len < 18) /* the smallest gzip member */
            return false;
        memcpy(head, in->mem, 2);
        memcpy(tail, (const unsigned char *)in->mem + in->mem_len - 4, 4);
    }
    if (head[0] != 0x1f || head[1] != 0x8b)
        return false;
    *isize = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 |
             (uint64_t)tail[3] << 24;
    return true;
}

typedef struct {
    input in; /* the gzip file or buffer */
    const char *label;
    growing g;
    size_t expected; /* bytes, as the trailer says */
    size_t cut_from; /* where the boundary search starts */
    atomic_bool abandon; /* the head stopped early: no need to go on */
    bool cut;            /* a split point was chosen */
    uint64_t compressed; /* input bytes read */
    split_tail tail;
} gzip_split;

/* Chooses the split point from the first have bytes, before any byte
 * behind cut_from is handed to the head (fill_growing), so the head is
 * always before it. */
static void choose_split_point(gzip_split *j, size_t have)
{
    growing *g = &j->g;
    size_t from = j->cut_from < have ? j->cut_from : have, off;
    size_t window = have - from < SPLIT_WINDOW ? have - from : SPLIT_WINDOW;
    const char *prefix = shape_prefix(g->buf, have < 64 ? have : 64);
    bool found = prefix && find_boundary(g->buf + from, window, &off);
    pthread_mutex_lock(&g->mu);
    if (found && g->head_next <= from + off) {
        g->stop_at = from + off;
        j->tail.ctl.prefix = prefix;
        j->cut = true;
    }
    g->decided = true;
    pthread_mutex_unlock(&g->mu);
}

/* Hands the first have bytes to the head (done: that is all). */
static void publish(growing *g, size_t have, bool done)
{
    pthread_mutex_lock(&g->mu);
    g->filled = have;
    g->done = done;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Inflates into g until the end, an error, or more than g->cap bytes. The
 * bytes up to cut_from are handed over as they come; those behind it wait
 * until the split point is chosen, which needs SPLIT_WINDOW of them (or
 * the end, or the size the trailer gave). */
static bool fill_growing(gzip_split *j)
{
    growing *g = &j->g;
    kd_error ignored;
    source src;
    size_t have = 0;
    bool ok = open_input(&j->in, &src, j->label, &ignored) && src.codec == CODEC_GZIP,
         decided = false;
    while (ok && !atomic_load(&j->abandon)) {
        if (have == g->cap) {
            ok = false; /* more than the trailer said (several members) */
            break;
        }
        size_t want = g->cap - have < OUT_BLOCK ? g->cap - have : OUT_BLOCK;
        if (!decided && have < j->cut_from && j->cut_from - have < want)
            want = j->cut_from - have; /* stop at cut_from: hand that over first */
        long r = source_read(&src, g->buf + have, want, j->label, &ignored);
        if (r < 0) {
            ok = false;
            break;
        }
        have += (size_t)r;
        if (!decided && (r == 0 || have >= j->cut_from + SPLIT_WINDOW || have >= j->expected)) {
            choose_split_point(j, have);
            decided = true;
        }
        if (decided || have <= j->cut_from || r == 0)
            publish(g, have, r == 0);
        if (r == 0)
            break;
    }
    j->compressed = src.bytes_in;
    source_close(&src);
    return ok && g->done;
}

/* The filler thread: inflate, then parse the tail if there is one. */
static void *gzip_split_main(void *arg)
{
    gzip_split *j = arg;
    growing *g = &j->g;
    if (!fill_growing(j)) {
        pthread_mutex_lock(&g->mu);
        g->failed = g->decided = true;
        j->cut = false;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        return NULL;
    }
    if (j->cut && !atomic_load(&j->tail.cancel)) {
        j->tail.in = j->in;
        j->tail.in.path = NULL;
        j->tail.in.mem = g->buf;
        j->tail.in.mem_len = g->filled;
        j->tail.in.start = g->stop_at;
        split_tail_main(&j->tail);
    }
    return NULL;
}

/* The gzip split load, or NULL when it does not apply or did not work (the
 * caller then streams; *filtered set: a NaN or Infinity literal was met,
 * stream with the filter at once). */
static kd_trace *load_gzip_split(const input *in, const char *label, const kd_load_options *opt,
                                 bool *filtered)
{
    *filtered = false;
    uint64_t hint;
    if (!opt || opt->threads < 2 || in->start || !gzip_size_hint(in, &hint) ||
        hint < split_min(opt, KD_LOAD_GZIP_SPLIT_MIN) ||
        hint > KD_LOAD_GZIP_SPLIT_MAX)
        return NULL;
    gzip_split *j = calloc(1, sizeof *j);
    unsigned char *buf = malloc((size_t)hint + 1); /* +1: the end needs no more room */
    pthread_t th;
    bool started = false;
    if (j && buf) {
        j->in = *in;
        j->label = label;
        j->g.buf = buf;
        j->g.cap = (size_t)hint + 1;
        j->expected = (size_t)hint;
        j->cut_from = GZIP_SPLIT_AT((size_t)hint);
        pthread_mutex_init(&j->g.mu, NULL);
        pthread_cond_init(&j->g.cv, NULL);
        atomic_init(&j->abandon, false);
        j->tail.label = label;
        atomic_init(&j->tail.cancel, false);
        j->tail.ctl.cancel = &j->tail.cancel;
        started = pthread_create(&th, NULL, gzip_split_main, j) == 0;
        if (!started) {
            pthread_mutex_destroy(&j->g.mu);
            pthread_cond_destroy(&j->g.cv);
        }
    }
    if (!started) {
        free(buf);
        free(j);
        return NULL;
    }
    input grow_in = *in;
    grow_in.path = NULL;
    grow_in.mem = buf;
    grow_in.mem_len = j->g.cap;
    grow_in.grow = &j->g;
    pass_ctl head = {NULL, &j->tail.cancel, 0, &j->g};
    kd_error ignored;
    pass_outcome h = run_pass(&grow_in, label, false, &head, &ignored);
    if (h.r != PASS_SPLIT)
        atomic_store(&j->tail.cancel, true);
    if (h.r != PASS_SPLIT && h.r != PASS_OK)
        atomic_store(&j->abandon, true);
    *filtered = h.r == PASS_RETRY_FILTERED;
    pthread_join(th, NULL);
    kd_trace *t = NULL;
    const kd_trace *tail = j->tail.out.t;
    if (!j->g.failed && h.r == PASS_SPLIT && j->tail.out.r == PASS_OK && !j->tail.out.forgot &&
        merge_tail(h.t, &j->tail.out)) {
        t = h.t;
        h.t = NULL;
        t->shape = tail->shape;
        t->has_trace_events = tail->has_trace_events;
        t->bytes_json = j->g.stop_at + tail->bytes_in;
        t->split = true;
    } else if (!j->g.failed && h.r == PASS_OK) { /* no cut, or a false boundary */
        t = h.t;
        h.t = NULL;
    }
    if (t) { /* the file, not the buffer, was read */
        t->gzip = true;
        t->compression = codec_name(CODEC_GZIP);
        t->bytes_in = j->compressed;
    }
    kd_trace_free(h.t);
    kd_trace_free(j->tail.out.t);
    pthread_mutex_destroy(&j->g.mu);
    pthread_cond_destroy(&j->g.cv);
    free(buf);
    free(j);
    return t;
}

static kd_trace *load_input(const input *in, const char *label, const kd_load_options *opt,
                            kd_error *err)
{
    bool filtered;
    kd_trace *t = load_gzip_split(in, label, opt, &filtered);
    /* standard input cannot be read a second time: the NaN / Infinity
     * filter is on from the start */
    return t ? t : load_streaming(in, label, opt, filtered || in->is_stdin ? 1 : 0, err);
}

kd_trace *kd_load_trace_opts(const char *path, const kd_load_options *opt, kd_error *err)
{
    bool std = path && strcmp(path, "-") == 0;
    input in = {.path = std ? NULL : path, .is_stdin = std, .name = path,
                .max_string = opt ? opt->max_string : 0, .rules = opt ? opt->rules : NULL};
    return load_input(&in, std ? KD_LOAD_STDIN_LABEL : path, opt, err);
}

kd_trace *kd_load_trace_mem_opts(const void *data, size_t len, const char *label,
                                 const kd_load_options *opt, kd_error *err)
{
    input in = {.mem = data, .mem_len = len, .max_string = opt ? opt->max_string : 0,
                .rules = opt ? opt->rules : NULL};
    return load_input(&in, label, opt, err);
}

kd_trace *kd_load_trace(const char *path, kd_error *err)
{
    return kd_load_trace_opts(path, NULL, err);
}

kd_trace *kd_load_trace_mem(const void *data, size_t len, const char *label, kd_error *err)
{
    return kd_load_trace_mem_opts(data, len, label, NULL, err);
}

/* ---- shape probe (reference §3.2 trace-file test) ------------------------ */

typedef struct {
    int depth;
    top_kind top;
    bool key_is_trace_events;
    int items;  /* objects seen among the first list items */
    int result; /* -1 undecided, 0 no, 1 yes */
    uint64_t tokens; /* callbacks (chunk_fed) */
} probe;

static int probe_decide(probe *p, int result)
{
    p->result = result;
    return 0; /* cancel the parse: decided */
}

static int probe_value(probe *p, bool is_map)
{
    p->tokens++;
    if (p->depth == 0)
        return probe_decide(p, 0); /* a top-level scalar */
    if (p->top == TOP_LIST && p->depth == 1) {
        if (!is_map)
            return probe_decide(p, 0);
        if (++p->items >= 8)
            return probe_decide(p, 1);
    }
    if (p->top == TOP_OBJECT && p->depth == 1)
        p->key_is_trace_events = false;
    return 1;
}

static int pb_scalar(void *ctx) { return probe_value(ctx, false); }
static int pb_bool(void *ctx, int b) { (void)b; return probe_value(ctx, false); }
static int pb_number(void *ctx, const char *s, size_t l) { (void)s; (void)l; return probe_value(ctx, false); }
static int pb_string(void *ctx, const unsigned char *s, size_t l) { (void)s; (void)l; return probe_value(ctx, false); }

static int pb_open(void *ctx, bool is_map)
{
    probe *p = ctx;
    p->tokens++;
    if (p->depth == 0) {
        p->top = is_map ? TOP_OBJECT : TOP_LIST;
    } else if (p->top == TOP_OBJECT && p->depth == 1 && p->key_is_trace_events && !is_map) {
        return probe_decide(p, 1);
    } else if (!probe_value(p, is_map)) {
        return 0;
    }
    p->depth++;
    return 1;
}

static int pb_map(void *ctx) { return pb_open(ctx, true); }
static int pb_array(void *ctx) { return pb_open(ctx, false); }

static int pb_end(void *ctx)
{
    probe *p = ctx;
    p->tokens++;
    if (--p->depth == 0)
        return probe_decide(p, p->top == TOP_LIST && p->items > 0);
    return 1;
}

static int pb_key(void *ctx, const unsigned char *k, size_t len)
{
    probe *p = ctx;
    p->tokens++;
    if (p->top == TOP_OBJECT && p->depth == 1)
        p->key_is_trace_events = len == 11 && memcmp(k, "traceEvents", 11) == 0;
    return 1;
}

static const yajl_callbacks probe_callbacks = {
    pb_scalar, pb_bool, NULL, NULL, pb_number, pb_string,
    pb_map, pb_key, pb_end, pb_array, pb_end,
};

bool kd_probe_trace_shape(const char *path)
{
    kd_error err;
    input in = {.path = path};
    source src;
    probe p = {0, TOP_NONE, false, 0, -1, 0};
    yguard yg;
    yg_init(&yg);
    yajl_handle h = yg_alloc(&yg, &probe_callbacks, &p);
    if (h && !open_input(&in, &src, path, &err)) {
        source_close(&src); /* what it opened before failing */
    } else if (h) {
        block_reader rd;
        chunker ch = {&rd, false, false, NULL, 0, 0};
        unsigned char *fbuf = NULL;
        size_t fcap = 0;
        if (reader_start(&rd, &src, path)) {
            nonfinite_filter nf = {0}; /* Python's json reads NaN too (divergence D5) */
            bool first = true;
            uint64_t run = 0;
            for (;;) {
                unsigned char *buf;
                long n = chunk_next(&ch, &buf, path, &err);
                if (n <= 0)
                    break;
                const unsigned char *q = buf;
                size_t len = (size_t)n;
                if (first && len >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0) {
                    q += 3;
                    len -= 3;
                }
                first = false;
                if (len * 2 + 16 > fcap) {
                    unsigned char *f = realloc(fbuf, len * 2 + 16);
                    if (!f)
                        break;
                    fbuf = f;
                    fcap = len * 2 + 16;
                }
                len = filter_nonfinite(&nf, q, len, fbuf);
                uint64_t tokens = p.tokens;
                if (yg_parse(&yg, h, fbuf, len) != yajl_status_ok)
                    break;
                chunk_fed(&ch, p.tokens != tokens, (uint64_t)n, &run);
                if (run > KD_LOAD_MAX_STRING)
                    break; /* not decided: not taken for a trace */
            }
        }
        reader_stop(&rd);
        free(ch.acc);
        free(fbuf);
        source_close(&src);
    }
    yg_done(&yg, h);
    return p.result == 1;
}

/* ---- header peek (discover's rank) ---------------------------------------
 * The same source (and decompressors) as a load, in small blocks, through a
 * parser that only follows the top-level keys up to "traceEvents". A token
 * left open by a block makes the next read at least as long as the bytes
 * since the last callback (as chunk_fed does), so a long string before
 * traceEvents costs linear time. */

#define PEEK_BLOCK (16u << 10)

typedef struct {
    int depth;
    top_kind top;
    bool key_dist;  /* the last top-level key was distributedInfo */
    bool in_dist;   /* inside its object (members at depth 2) */
    int field;      /* MF_RANK / MF_WORLD: the member whose value comes next */
    bool decided;   /* traceEvents reached, or the document ended */
    uint64_t tokens;
    kd_trace_header h;
} peeker;

static int pk_stop(peeker *p)
{
    p->decided = true;
    return 0; /* cancel the parse */
}

static int pk_value(peeker *p, kd_jtype type, const char *text, size_t len)
{
    p->tokens++;
    if (p->depth == 0)
        return pk_stop(p); /* a top-level scalar: nothing declared */
    if (p->depth == 1)
        p->key_dist = false;
    int field = p->field;
    p->field = MF_NONE;
    int64_t v;
    if (p->in_dist && p->depth == 2 && field != MF_NONE && scalar_int(type, text, len, &v)) {
        if (field == MF_RANK) {
            p->h.rank = v;
            p->h.has_rank = true;
        } else {
            p->h.world_size = v;
            p->h.has_world_size = true;
        }
    }
    return 1;
}

static int pk_null(void *ctx) { return pk_value(ctx, KD_J_NULL, NULL, 0); }
static int pk_bool(void *ctx, int b) { (void)b; return pk_value(ctx, KD_J_BOOL, NULL, 0); }
static int pk_number(void *ctx, const char *s, size_t l) { return pk_value(ctx, KD_J_INT, s, l); }
static int pk_string(void *ctx, const unsigned char *s, size_t l)
{
    return pk_value(ctx, KD_J_STRING, (const char *)s, l);
}

static int pk_open(void *ctx, bool is_map)
{
    peeker *p = ctx;
    p->tokens++;
    if (p->depth == 0) {
        p->top = is_map ? TOP_OBJECT : TOP_LIST;
        if (!is_map)
            return pk_stop(p); /* a bare list declares nothing */
    } else if (p->depth == 1) {
        p->in_dist = p->key_dist && is_map;
        p->key_dist = false;
    }
    p->field = MF_NONE;
    p->depth++;
    return 1;
}

static int pk_map(void *ctx) { return pk_open(ctx, true); }
static int pk_array(void *ctx) { return pk_open(ctx, false); }

static int pk_end(void *ctx)
{
    peeker *p = ctx;
    p->tokens++;
    if (--p->depth == 1)
        p->in_dist = false;
    if (p->depth == 0)
        return pk_stop(p);
    return 1;
}

static int pk_key(void *ctx, const unsigned char *k, size_t len)
{
    peeker *p = ctx;
    p->tokens++;
    p->field = MF_NONE;
    if (p->depth == 1) {
        if (len == 11 && memcmp(k, "traceEvents", 11) == 0)
            return pk_stop(p);
        p->key_dist = meta_top_key(k, len) == MK_DIST;
        if (p->key_dist) /* the last distributedInfo wins, as in Python */
            p->h.has_rank = p->h.has_world_size = false;
    } else if (p->depth == 2 && p->in_dist) {
        if (len == 4 && memcmp(k, "rank", 4) == 0) {
            p->field = MF_RANK;
            p->h.has_rank = false;
        } else if (len == 10 && memcmp(k, "world_size", 10) == 0) {
            p->field = MF_WORLD;
            p->h.has_world_size = false;
        }
    }
    return 1;
}

static const yajl_callbacks peek_callbacks = {
    pk_null, pk_bool, NULL, NULL, pk_number, pk_string,
    pk_map, pk_key, pk_end, pk_array, pk_end,
};

/* Reads at least want bytes (less only at the end) into *buf (grown);
 * -1 on error with err set. */
static long peek_read(source *src, unsigned char **buf, size_t *cap, size_t want,
                      const char *label, kd_error *err)
{
    if (want > *cap) {
        unsigned char *nb = realloc(*buf, want);
        if (!nb)
            return out_of_memory(err, label);
        *buf = nb;
        *cap = want;
    }
    size_t n = 0;
    while (n < want) {
        long r = source_read(src, *buf + n, want - n, label, err);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        n += (size_t)r;
    }
    return (long)n;
}

kd_status kd_peek_trace_header(const char *path, kd_trace_header *out, kd_error *err)
{
    kd_trace_header none = {false, false, 0, 0};
    if (out)
        *out = none;
    if (!path || !out)
        return kd_fail(err, KD_EUSAGE, "kd_peek_trace_header: no path or no output");
    kd_error e;
    kd_error_clear(&e);
    input in = {.path = path, .block = PEEK_BLOCK};
    source src;
    peeker p = {0, TOP_NONE, false, false, MF_NONE, false, 0, {false, false, 0, 0}};
    unsigned char *buf = NULL, *fbuf = NULL;
    size_t cap = 0, fcap = 0;
    kd_status st = KD_OK;
    yguard yg;
    yg_init(&yg);
    yajl_handle h = NULL;
    if (!open_input(&in, &src, path, &e)) {
        /* cannot open or read: an error; a refused compression: no header */
        if (!src.fp || e.status == KD_EIO || e.status == KD_ENOMEM)
            st = e.status == KD_ENOMEM ? KD_ENOMEM : KD_EINPUT;
        goto done;
    }
    h = yg_alloc(&yg, &peek_callbacks, &p);
    if (!h) {
        st = KD_ENOMEM;
        kd_fail(&e, KD_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    nonfinite_filter nf = {0}; /* Python's json reads NaN too (divergence D5) */
    bool first = true, ended = false;
    uint64_t run = 0;
    size_t want = PEEK_BLOCK;
    while (!p.decided && !ended) {
        long n = peek_read(&src, &buf, &cap, want, path, &e);
        if (n < 0) {
            /* a read error is one; corrupt or truncated data is a header
             * that says nothing */
            if (e.status == KD_EIO || e.status == KD_ENOMEM)
                st = e.status == KD_ENOMEM ? KD_ENOMEM : KD_EINPUT;
            break;
        }
        ended = (size_t)n < want;
        const unsigned char *q = buf;
        size_t len = (size_t)n;
        if (first && len >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0) {
            q += 3;
            len -= 3;
        }
        first = false;
        if (len * 2 + 16 > fcap) {
            unsigned char *f = realloc(fbuf, len * 2 + 16);
            if (!f) {
                st = KD_ENOMEM;
                kd_fail(&e, KD_ENOMEM, "%s: out of memory", path);
                break;
            }
            fbuf = f;
            fcap = len * 2 + 16;
        }
        len = filter_nonfinite(&nf, q, len, fbuf);
        if (ended)
            len += flush_nonfinite(&nf, fbuf + len);
        uint64_t tokens = p.tokens;
        yajl_status ys = yg_parse(&yg, h, fbuf, len);
        if (yg.failed) {
            st = KD_ENOMEM;
            kd_fail(&e, KD_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (ys != yajl_status_ok)
            break; /* decided (cancelled), or malformed */
        if (ended && yg_complete(&yg, h) != yajl_status_ok && yg.failed) {
            st = KD_ENOMEM;
            kd_fail(&e, KD_ENOMEM, "%s: out of memory", path);
            break;
        }
        run = p.tokens != tokens ? 0 : run + (uint64_t)n;
        if (run > KD_LOAD_MAX_STRING)
            break; /* a string longer than any load accepts */
        want = run >= PEEK_BLOCK ? (size_t)run : PEEK_BLOCK;
    }
done:
    yg_done(&yg, h);
    source_close(&src);
    free(buf);
    free(fbuf);
    if (st != KD_OK) {
        if (err) {
            *err = e;
            err->status = st;
        }
        return st;
    }
    if (p.decided) /* else malformed or cut short: it declares nothing */
        *out = p.h;
    return KD_OK;
}
