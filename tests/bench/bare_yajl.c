#include "config.h"

/*
 * bare_yajl: the benchmark baseline.  Reads FILE (plain JSON, or gzip as
 * told by the magic bytes 1f 8b, concatenated members included) in 1 MiB
 * blocks and feeds every byte to a yajl parser whose callbacks all just
 * return 1 (yajl_number is set, so numbers are never converted).  This is
 * the "bare yajl parse with empty callbacks" that kerndiff's performance
 * ratios are measured against (product.md section 6).
 *
 *   bare_yajl FILE                 parse, print bytes and seconds on stderr
 *   bare_yajl --count-events FILE  also count the traceEvents elements
 *                                  (non-empty callbacks: not a baseline)
 *
 * Exit status: 0 on success, 1 on an I/O, gzip or JSON error, 2 on usage.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define PROG "bare_yajl"
#define BLOCK_SIZE (1u << 20)

/* ------------------------------------------------------------------ */
/* empty callbacks                                                     */

static int cb_null(void *ctx)
{
    (void)ctx;
    return 1;
}

static int cb_boolean(void *ctx, int v)
{
    (void)ctx;
    (void)v;
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    (void)s;
    (void)n;
    return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    (void)ctx;
    (void)s;
    (void)n;
    return 1;
}

static const yajl_callbacks EMPTY_CALLBACKS = {
    cb_null,   cb_boolean, NULL,    NULL,    cb_number, cb_string,
    cb_null,   cb_string,  cb_null, cb_null, cb_null,
};

/* ------------------------------------------------------------------ */
/* event counting callbacks (--count-events)                           */

typedef struct {
    unsigned depth;        /* open containers */
    unsigned events_depth; /* depth of the events array, 0 if not inside */
    int key_is_events;     /* last top-level key was "traceEvents" */
    uint64_t events;
} counter_t;

static int cnt_start_map(void *ctx)
{
    counter_t *c = ctx;
    if (c->events_depth && c->depth == c->events_depth)
        c->events++;
    c->depth++;
    return 1;
}

static int cnt_map_key(void *ctx, const unsigned char *s, size_t n)
{
    counter_t *c = ctx;
    if (c->depth == 1)
        c->key_is_events = n == 11 && memcmp(s, "traceEvents", 11) == 0;
    return 1;
}

static int cnt_start_array(void *ctx)
{
    counter_t *c = ctx;
    if (c->depth == 0 || (c->depth == 1 && c->key_is_events))
        c->events_depth = c->depth + 1;
    c->depth++;
    return 1;
}

static int cnt_end(void *ctx)
{
    counter_t *c = ctx;
    c->depth--;
    if (c->events_depth && c->depth < c->events_depth)
        c->events_depth = 0;
    return 1;
}

static const yajl_callbacks COUNT_CALLBACKS = {
    cb_null,       cb_boolean,  NULL,    NULL,    cb_number, cb_string,
    cnt_start_map, cnt_map_key, cnt_end, cnt_start_array, cnt_end,
};

/* ------------------------------------------------------------------ */
/* parsing                                                             */

typedef struct {
    const char *path;
    yajl_handle h;
    uint64_t fed; /* bytes handed to yajl so far */
} parse_t;

static double now_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Prints yajl's message, without its trailing newline, and the offset. */
static void report_parse_error(parse_t *p, const unsigned char *buf, size_t n)
{
    unsigned char *msg = yajl_get_error(p->h, 0, buf, n);
    size_t off = buf ? yajl_get_bytes_consumed(p->h) : 0;
    char *m = (char *)msg;
    size_t len = strlen(m);
    while (len && (m[len - 1] == '\n' || m[len - 1] == ' '))
        m[--len] = '\0';
    fprintf(stderr, PROG ": %s: JSON parse error near byte %llu: %s\n", p->path,
            (unsigned long long)(p->fed + off), m);
    yajl_free_error(p->h, msg);
}

static int feed(parse_t *p, const unsigned char *buf, size_t n)
{
    if (yajl_parse(p->h, buf, n) != yajl_status_ok) {
        report_parse_error(p, buf, n);
        return -1;
    }
    p->fed += n;
    return 0;
}

static int finish(parse_t *p)
{
    if (yajl_complete_parse(p->h) != yajl_status_ok) {
        report_parse_error(p, NULL, 0);
        return -1;
    }
    return 0;
}

static size_t read_block(FILE *f, const char *path, unsigned char *buf, int *err)
{
    size_t n = fread(buf, 1, BLOCK_SIZE, f);
    if (n < BLOCK_SIZE && ferror(f)) {
        fprintf(stderr, PROG ": %s: read error: %s\n", path, strerror(errno));
        *err = 1;
    }
    return n;
}

/* Plain JSON: the first block is already in buf. */
static int parse_plain(parse_t *p, FILE *f, unsigned char *buf, size_t n)
{
    int err = 0;
    while (n > 0) {
        if (feed(p, buf, n) != 0)
            return -1;
        n = read_block(f, p->path, buf, &err);
        if (err)
            return -1;
    }
    return finish(p);
}

static int inflate_error(const parse_t *p, z_stream *z, int rc)
{
    fprintf(stderr, PROG ": %s: gzip error: %s\n", p->path,
            z->msg ? z->msg : rc == Z_BUF_ERROR ? "truncated input" : "inflate failed");
    return -1;
}

/* Inflates the input held in z into out, feeding yajl; 1 = member end. */
static int inflate_input(parse_t *p, z_stream *z, unsigned char *out)
{
    while (z->avail_in > 0) {
        z->next_out = out;
        z->avail_out = BLOCK_SIZE;
        int rc = inflate(z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return inflate_error(p, z, rc);
        size_t have = BLOCK_SIZE - z->avail_out;
        if (have && feed(p, out, have) != 0)
            return -1;
        if (rc == Z_STREAM_END) {
            if (z->avail_in == 0)
                return 1;
            if (inflateReset(z) != Z_OK) /* concatenated member follows */
                return inflate_error(p, z, rc);
        } else if (rc == Z_BUF_ERROR && have == 0) {
            break; /* needs more input */
        }
    }
    return 0;
}

static int parse_gzip(parse_t *p, FILE *f, unsigned char *in, size_t n)
{
    z_stream z;
    int ended = 0, err = 0, rc = -1;
    unsigned char *out = malloc(BLOCK_SIZE);
    memset(&z, 0, sizeof z);
    if (!out) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    if (inflateInit2(&z, 15 + 32) != Z_OK) {
        fprintf(stderr, PROG ": %s: inflateInit2 failed\n", p->path);
        free(out);
        return -1;
    }
    while (n > 0) {
        z.next_in = in;
        z.avail_in = (uInt)n;
        int r = inflate_input(p, &z, out);
        if (r < 0)
            goto done;
        ended = r == 1;
        n = read_block(f, p->path, in, &err);
        if (err)
            goto done;
        if (n > 0 && ended) { /* a member ended exactly at a block boundary */
            if (inflateReset(&z) != Z_OK) {
                inflate_error(p, &z, Z_STREAM_ERROR);
                goto done;
            }
            ended = 0;
        }
    }
    if (!ended) {
        fprintf(stderr, PROG ": %s: gzip error: unexpected end of file\n", p->path);
        goto done;
    }
    rc = finish(p);
done:
    inflateEnd(&z);
    free(out);
    return rc;
}

static int parse_file(parse_t *p)
{
    int err = 0, rc;
    FILE *f = fopen(p->path, "rb");
    if (!f) {
        fprintf(stderr, PROG ": %s: cannot open: %s\n", p->path, strerror(errno));
        return -1;
    }
    unsigned char *buf = malloc(BLOCK_SIZE);
    if (!buf) {
        fprintf(stderr, PROG ": out of memory\n");
        fclose(f);
        return -1;
    }
    size_t n = read_block(f, p->path, buf, &err);
    if (err)
        rc = -1;
    else if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
        rc = parse_gzip(p, f, buf, n);
    else
        rc = parse_plain(p, f, buf, n);
    free(buf);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, PROG ": %s: close failed: %s\n", p->path, strerror(errno));
        rc = -1;
    }
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: " PROG " [--count-events] FILE\n");
}

int main(int argc, char **argv)
{
    int count = 0;
    const char *path = NULL;
    counter_t counter;
    parse_t p;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count-events"))
            count = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, PROG ": unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    memset(&counter, 0, sizeof counter);
    memset(&p, 0, sizeof p);
    p.path = path;
    p.h = yajl_alloc(count ? &COUNT_CALLBACKS : &EMPTY_CALLBACKS, NULL, &counter);
    if (!p.h) {
        fprintf(stderr, PROG ": yajl_alloc failed\n");
        return 1;
    }
    double t0 = now_seconds();
    int rc = parse_file(&p);
    double secs = now_seconds() - t0;
    yajl_free(p.h);
    if (rc != 0)
        return 1;
    fprintf(stderr, PROG ": %s: %llu bytes parsed in %.4f s (%.1f MB/s)\n", path,
            (unsigned long long)p.fed, secs, secs > 0 ? (double)p.fed / 1e6 / secs : 0.0);
    if (count)
        printf("events %llu\n", (unsigned long long)counter.events);
    return 0;
}
