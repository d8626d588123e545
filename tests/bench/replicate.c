#include "config.h"

/*
 * replicate: make an N-times-longer trace out of a real one, for the
 * kerndiff benchmark ("10x along time").
 *
 *   replicate IN.json[.gz] [--times N] [--gzip] -o OUT
 *
 * IN is read N + 1 times with yajl (gzip or plain, via zlib's gzread).  The
 * first pass measures the time span of the events (ph "M" excluded) and the
 * largest integer id; each of the N copy passes then streams every event to
 * a yajl_gen, with
 *   - event-level "ts" shifted by k * (span + 1 us), rounded up to whole us
 *     so the fractional digits of the original are kept verbatim,
 *   - "id" (flows) and args "External id", "correlation", "Python id" and
 *     "Python parent id" shifted by k * (largest id + 1), so the copies do
 *     not alias each other's correlations,
 *   - metadata (ph "M") events written only in copy 0.
 * Numbers are passed through as text (yajl_number), never reformatted.
 * The output is {"traceEvents": [...], <the other top-level keys of IN>},
 * compact, also when IN is a bare list.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define PROG "replicate"
#define BLOCK_SIZE (1u << 20)
#define MAX_TIMES 10000

static const char *g_out_path; /* removed on fatal errors once opened */

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (g_out_path)
        (void)unlink(g_out_path);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q)
        die("out of memory");
    return q;
}

/* ------------------------------------------------------------------ */
/* token lists: one event (or the extra top-level keys), recorded      */

typedef enum { T_NULL, T_TRUE, T_FALSE, T_NUM, T_STR, T_KEY, T_MAP, T_EMAP, T_ARR, T_EARR } tok_type_t;

typedef struct {
    tok_type_t type;
    size_t off, len; /* text of T_NUM, T_STR, T_KEY */
} tok_t;

typedef struct {
    tok_t *v;
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
} toks_t;

static void toks_clear(toks_t *t)
{
    t->n = 0;
    t->tlen = 0;
}

static void toks_push(toks_t *t, tok_type_t type, const char *s, size_t len)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    if (t->tlen + len > t->tcap) {
        while (t->tlen + len > t->tcap)
            t->tcap = t->tcap ? t->tcap * 2 : 4096;
        t->text = xrealloc(t->text, t->tcap);
    }
    tok_t *k = &t->v[t->n++];
    k->type = type;
    k->off = t->tlen;
    k->len = len;
    if (len)
        memcpy(t->text + t->tlen, s, len);
    t->tlen += len;
}

static const char *tok_text(const toks_t *t, const tok_t *k)
{
    return t->text + k->off;
}

static int tok_is(const toks_t *t, const tok_t *k, const char *s)
{
    size_t n = strlen(s);
    return k->len == n && memcmp(tok_text(t, k), s, n) == 0;
}

static void toks_free(toks_t *t)
{
    free(t->v);
    free(t->text);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------------ */
/* output                                                              */

typedef struct {
    gzFile gz;
    uint64_t bytes;
} out_t;

static void out_write(out_t *o, const unsigned char *p, size_t n)
{
    while (n > 0) {
        unsigned chunk = n > BLOCK_SIZE ? BLOCK_SIZE : (unsigned)n;
        if (gzwrite(o->gz, p, chunk) != (int)chunk) {
            int zerr = 0;
            const char *msg = gzerror(o->gz, &zerr);
            die("%s: write failed: %s", g_out_path, zerr == Z_ERRNO ? strerror(errno) : msg);
        }
        p += chunk;
        n -= chunk;
        o->bytes += chunk;
    }
}

static void out_drain(out_t *o, yajl_gen g)
{
    const unsigned char *buf;
    size_t len;
    if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
        die("internal error: yajl_gen_get_buf failed");
    out_write(o, buf, len);
    yajl_gen_clear(g);
}

static void gen_check(yajl_gen_status st)
{
    if (st != yajl_gen_status_ok)
        die("internal error: yajl_gen failed (status %d)", (int)st);
}

/* ------------------------------------------------------------------ */
/* replicator state                                                    */

typedef struct {
    const char *in_path;
    unsigned times;
    int scan; /* 1 in the measuring pass */
    unsigned copy;
    /* structure tracking */
    unsigned depth;
    int top_is_map, in_events, expect_events;
    unsigned events_level;
    toks_t ev;      /* the event being recorded */
    toks_t extras;  /* other top-level keys and values */
    toks_t *sink;   /* where top-level non-event tokens go, or NULL */
    /* measured in the scan pass */
    double min_ts, max_end;
    int have_ts;
    uint64_t max_id;
    uint64_t shift_us, id_stride;
    /* output */
    yajl_gen g;
    out_t out;
    uint64_t events_in, events_out;
} rep_t;

static int is_plain_uint(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static uint64_t parse_uint(const char *s, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    return v;
}

static double parse_num(const char *s, size_t n, int *ok)
{
    char buf[64];
    char *end;
    if (n == 0 || n >= sizeof buf) {
        *ok = 0;
        return 0;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, &end);
    *ok = end == buf + n && isfinite(v);
    return v;
}

static int is_id_key(const toks_t *t, const tok_t *key, int in_args)
{
    if (!in_args)
        return tok_is(t, key, "id");
    return tok_is(t, key, "External id") || tok_is(t, key, "correlation") ||
           tok_is(t, key, "Python id") || tok_is(t, key, "Python parent id");
}

/* Walks one recorded event, calling fn for every token with the key that
 * names it (event level or args level), or NULL. */
typedef void (*visit_fn)(rep_t *r, const toks_t *t, const tok_t *tok, const tok_t *key,
                         int in_args);

static void visit_event(rep_t *r, const toks_t *t, visit_fn fn)
{
    unsigned nest = 0;
    int in_args = 0;
    const tok_t *key = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const tok_t *k = &t->v[i];
        if (k->type == T_EMAP || k->type == T_EARR) {
            nest--;
            if (in_args && nest == 1)
                in_args = 0;
        }
        const tok_t *named = NULL;
        if (i > 0 && t->v[i - 1].type == T_KEY && (nest == 1 || (nest == 2 && in_args)))
            named = key;
        fn(r, t, k, named, in_args && nest == 2);
        if (k->type == T_KEY && (nest == 1 || (nest == 2 && in_args)))
            key = k;
        if (k->type == T_MAP || k->type == T_ARR) {
            if (k->type == T_MAP && nest == 1 && named && tok_is(t, named, "args"))
                in_args = 1;
            nest++;
        }
    }
}

/* Event-level string value of key, or NULL. */
static const tok_t *event_field(const toks_t *t, const char *name)
{
    unsigned nest = 0;
    for (size_t i = 0; i + 1 < t->n; i++) {
        const tok_t *k = &t->v[i];
        if (k->type == T_MAP || k->type == T_ARR)
            nest++;
        else if (k->type == T_EMAP || k->type == T_EARR)
            nest--;
        else if (nest == 1 && k->type == T_KEY && tok_is(t, k, name))
            return &t->v[i + 1];
    }
    return NULL;
}

static int event_is_metadata(const toks_t *t)
{
    const tok_t *ph = event_field(t, "ph");
    return ph && ph->type == T_STR && tok_is(t, ph, "M");
}

static void scan_ids(rep_t *r, const toks_t *t, const tok_t *tok, const tok_t *key, int in_args)
{
    if (!key || tok->type != T_NUM || !is_id_key(t, key, in_args))
        return;
    if (is_plain_uint(tok_text(t, tok), tok->len)) {
        uint64_t v = parse_uint(tok_text(t, tok), tok->len);
        if (v > r->max_id)
            r->max_id = v;
    }
}

static double field_number(const toks_t *t, const char *name, int *ok)
{
    const tok_t *v = event_field(t, name);
    *ok = 0;
    if (!v || v->type != T_NUM)
        return 0;
    return parse_num(tok_text(t, v), v->len, ok);
}

static void scan_event(rep_t *r, const toks_t *t)
{
    int ok_ts, ok_dur;
    visit_event(r, t, scan_ids);
    if (event_is_metadata(t))
        return;
    double ts = field_number(t, "ts", &ok_ts);
    double dur = field_number(t, "dur", &ok_dur);
    if (!ok_ts)
        return;
    double end = ts + (ok_dur && dur > 0 ? dur : 0);
    if (!r->have_ts || ts < r->min_ts)
        r->min_ts = ts;
    if (!r->have_ts || end > r->max_end)
        r->max_end = end;
    r->have_ts = 1;
}

/* ts + shift for a number written as digits[.digits]: exact, fraction kept. */
static void gen_shifted_ts(rep_t *r, const char *s, size_t n, uint64_t shift)
{
    char buf[96];
    size_t int_len = 0;
    while (int_len < n && s[int_len] >= '0' && s[int_len] <= '9')
        int_len++;
    int simple = int_len > 0 && int_len <= 18;
    for (size_t i = int_len; simple && i < n; i++)
        simple = (i == int_len && s[i] == '.') || (i > int_len && s[i] >= '0' && s[i] <= '9');
    int len;
    if (simple && n - int_len < 40) {
        len = snprintf(buf, sizeof buf, "%llu%.*s",
                       (unsigned long long)(parse_uint(s, int_len) + shift), (int)(n - int_len),
                       s + int_len);
    } else {
        int ok;
        double v = parse_num(s, n, &ok);
        if (!ok) {
            gen_check(yajl_gen_number(r->g, s, n));
            return;
        }
        len = snprintf(buf, sizeof buf, "%.3f", v + (double)shift);
    }
    gen_check(yajl_gen_number(r->g, buf, (size_t)len));
}

static void gen_number(rep_t *r, const toks_t *t, const tok_t *tok, const tok_t *key, int in_args)
{
    const char *s = tok_text(t, tok);
    char buf[32];
    if (r->copy > 0 && key && !in_args && tok_is(t, key, "ts")) {
        gen_shifted_ts(r, s, tok->len, r->copy * r->shift_us);
        return;
    }
    if (r->copy > 0 && key && is_id_key(t, key, in_args) && is_plain_uint(s, tok->len)) {
        int len = snprintf(buf, sizeof buf, "%llu",
                           (unsigned long long)(parse_uint(s, tok->len) + r->copy * r->id_stride));
        gen_check(yajl_gen_number(r->g, buf, (size_t)len));
        return;
    }
    gen_check(yajl_gen_number(r->g, s, tok->len));
}

static void gen_token(rep_t *r, const toks_t *t, const tok_t *tok, const tok_t *key, int in_args)
{
    const unsigned char *s = (const unsigned char *)tok_text(t, tok);
    switch (tok->type) {
    case T_NULL:
        gen_check(yajl_gen_null(r->g));
        break;
    case T_TRUE:
    case T_FALSE:
        gen_check(yajl_gen_bool(r->g, tok->type == T_TRUE));
        break;
    case T_NUM:
        gen_number(r, t, tok, key, in_args);
        break;
    case T_STR:
    case T_KEY:
        gen_check(yajl_gen_string(r->g, s, tok->len));
        break;
    case T_MAP:
        gen_check(yajl_gen_map_open(r->g));
        break;
    case T_EMAP:
        gen_check(yajl_gen_map_close(r->g));
        break;
    case T_ARR:
        gen_check(yajl_gen_array_open(r->g));
        break;
    case T_EARR:
        gen_check(yajl_gen_array_close(r->g));
        break;
    }
}

static void emit_event(rep_t *r, const toks_t *t)
{
    if (r->copy > 0 && event_is_metadata(t))
        return;
    visit_event(r, t, gen_token);
    r->events_out++;
    out_drain(&r->out, r->g);
}

static void process_event(rep_t *r)
{
    r->events_in++;
    if (r->scan)
        scan_event(r, &r->ev);
    else
        emit_event(r, &r->ev);
    toks_clear(&r->ev);
}

/* ------------------------------------------------------------------ */
/* parse callbacks: every token goes through on_token                  */

static void top_level_token(rep_t *r, tok_type_t type, const char *s, size_t n, unsigned level)
{
    if (level == 0) {
        if (type == T_MAP)
            r->top_is_map = 1;
        else if (type == T_ARR) {
            r->in_events = 1;
            r->events_level = 1;
        } else if (type != T_EMAP && type != T_EARR)
            die("%s: not a trace: the top level is neither an object nor a list", r->in_path);
        return;
    }
    if (level == 1 && type == T_KEY) {
        r->expect_events = n == 11 && memcmp(s, "traceEvents", 11) == 0;
        r->sink = r->expect_events || !r->scan ? NULL : &r->extras;
    } else if (level == 1 && r->expect_events && type == T_ARR) {
        r->in_events = 1;
        r->events_level = 2;
        r->expect_events = 0;
        return;
    }
    if (r->sink)
        toks_push(r->sink, type, s, n);
}

static int on_token(void *ctx, tok_type_t type, const char *s, size_t n)
{
    rep_t *r = ctx;
    int is_start = type == T_MAP || type == T_ARR;
    int is_end = type == T_EMAP || type == T_EARR;
    if (is_end)
        r->depth--;
    unsigned level = r->depth;
    if (r->in_events && level + 1 == r->events_level && type == T_EARR) {
        r->in_events = 0;
    } else if (r->in_events && level >= r->events_level) {
        toks_push(&r->ev, type, s, n);
        if (level == r->events_level && !is_start)
            process_event(r);
    } else if (r->top_is_map || level == 0) {
        top_level_token(r, type, s, n, level);
    }
    if (is_start)
        r->depth++;
    return 1;
}

static int cb_null(void *c)
{
    return on_token(c, T_NULL, NULL, 0);
}

static int cb_bool(void *c, int v)
{
    return on_token(c, v ? T_TRUE : T_FALSE, NULL, 0);
}

static int cb_number(void *c, const char *s, size_t n)
{
    return on_token(c, T_NUM, s, n);
}

static int cb_string(void *c, const unsigned char *s, size_t n)
{
    return on_token(c, T_STR, (const char *)s, n);
}

static int cb_key(void *c, const unsigned char *s, size_t n)
{
    return on_token(c, T_KEY, (const char *)s, n);
}

static int cb_map(void *c)
{
    return on_token(c, T_MAP, NULL, 0);
}

static int cb_emap(void *c)
{
    return on_token(c, T_EMAP, NULL, 0);
}

static int cb_arr(void *c)
{
    return on_token(c, T_ARR, NULL, 0);
}

static int cb_earr(void *c)
{
    return on_token(c, T_EARR, NULL, 0);
}

static const yajl_callbacks CALLBACKS = {
    cb_null, cb_bool, NULL, NULL, cb_number, cb_string, cb_map, cb_key, cb_emap, cb_arr, cb_earr,
};

/* ------------------------------------------------------------------ */
/* passes                                                              */

static void parse_error(rep_t *r, yajl_handle h, const unsigned char *buf, size_t n)
{
    unsigned char *msg = yajl_get_error(h, 0, buf, n);
    char *m = (char *)msg;
    size_t len = strlen(m);
    while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
        m[--len] = '\0';
    fprintf(stderr, PROG ": %s: JSON parse error: %s\n", r->in_path, m);
    yajl_free_error(h, msg);
    if (g_out_path)
        (void)unlink(g_out_path);
    exit(1);
}

static void reset_structure(rep_t *r)
{
    r->depth = 0;
    r->top_is_map = r->in_events = r->expect_events = 0;
    r->events_level = 0;
    r->sink = NULL;
    toks_clear(&r->ev);
}

static void run_pass(rep_t *r, unsigned char *buf)
{
    gzFile in = gzopen(r->in_path, "rb");
    if (!in)
        die("%s: cannot open: %s", r->in_path, strerror(errno));
    if (gzbuffer(in, BLOCK_SIZE) != 0)
        die("%s: gzbuffer failed", r->in_path);
    yajl_handle h = yajl_alloc(&CALLBACKS, NULL, r);
    if (!h)
        die("yajl_alloc failed");
    reset_structure(r);
    for (;;) {
        int n = gzread(in, buf, BLOCK_SIZE);
        if (n < 0) {
            int zerr = 0;
            const char *msg = gzerror(in, &zerr);
            die("%s: read failed: %s", r->in_path, zerr == Z_ERRNO ? strerror(errno) : msg);
        }
        if (n == 0)
            break;
        if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok)
            parse_error(r, h, buf, (size_t)n);
    }
    if (yajl_complete_parse(h) != yajl_status_ok)
        parse_error(r, h, NULL, 0);
    yajl_free(h);
    if (gzclose(in) != Z_OK)
        die("%s: close failed", r->in_path);
}

static void measure(rep_t *r, unsigned char *buf)
{
    r->scan = 1;
    run_pass(r, buf);
    r->scan = 0;
    if (!r->have_ts)
        die("%s: no event with a numeric ts", r->in_path);
    r->shift_us = (uint64_t)ceil(r->max_end - r->min_ts) + 1;
    r->id_stride = r->max_id + 1;
}

static void write_extras(rep_t *r)
{
    const toks_t *t = &r->extras;
    for (size_t i = 0; i < t->n; i++)
        gen_token(r, t, &t->v[i], NULL, 0);
}

static void replicate(rep_t *r, unsigned char *buf)
{
    gen_check(yajl_gen_map_open(r->g));
    gen_check(yajl_gen_string(r->g, (const unsigned char *)"traceEvents", 11));
    gen_check(yajl_gen_array_open(r->g));
    for (r->copy = 0; r->copy < r->times; r->copy++)
        run_pass(r, buf);
    gen_check(yajl_gen_array_close(r->g));
    write_extras(r);
    gen_check(yajl_gen_map_close(r->g));
    out_drain(&r->out, r->g);
    const unsigned char nl = '\n';
    out_write(&r->out, &nl, 1);
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " IN.json[.gz] [--times N] [--gzip] -o OUT\n");
}

int main(int argc, char **argv)
{
    static rep_t r;
    const char *out = NULL;
    int gzip = 0;

    r.times = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--times") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > MAX_TIMES)
                die("--times: expected an integer in 1..%d, got '%s'", MAX_TIMES, argv[i]);
            r.times = (unsigned)v;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--gzip")) {
            gzip = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] != '-' && !r.in_path) {
            r.in_path = a;
        } else {
            usage(stderr);
            die("unexpected argument '%s'", a);
        }
    }
    if (!r.in_path || !out) {
        usage(stderr);
        return 2;
    }
    unsigned char *buf = malloc(BLOCK_SIZE);
    if (!buf)
        die("out of memory");
    measure(&r, buf);
    r.out.gz = gzopen(out, gzip ? "wb1" : "wbT");
    if (!r.out.gz)
        die("%s: cannot open for writing: %s", out, strerror(errno));
    g_out_path = out;
    if (gzbuffer(r.out.gz, BLOCK_SIZE) != 0)
        die("%s: gzbuffer failed", out);
    r.g = yajl_gen_alloc(NULL);
    if (!r.g)
        die("yajl_gen_alloc failed");
    replicate(&r, buf);
    yajl_gen_free(r.g);
    if (gzclose(r.out.gz) != Z_OK)
        die("%s: close failed", out);
    fprintf(stderr, "%s: %llu bytes, %llu events (%u copies of %llu), shift %llu us\n", out,
            (unsigned long long)r.out.bytes, (unsigned long long)r.events_out, r.times,
            (unsigned long long)(r.events_in / (r.times + 1)), (unsigned long long)r.shift_us);
    toks_free(&r.ev);
    toks_free(&r.extras);
    free(buf);
    return 0;
}
