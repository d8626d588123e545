#include "config.h"

/*
 * phases: where one triage side's time goes, for the benchmark's
 * decomposition table (bench.sh --phases; docs/performance.md, "Why diff
 * cannot reach 1.3x on two cores").
 *
 *   phases [--threads N] TRACE
 *
 * Runs the library's triage of TRACE as `kerndiff triage --format json`
 * does, timing each step in this process: the load (kd_side_load: parse,
 * extraction, stages), the analysis (kd_triage_analyze: kernel sites,
 * overlap, aggregates, source map, rows) and the JSON report (written to
 * /dev/null). It also counts each step's minor page faults (fresh memory the
 * kernel had to zero and map) and then times touching that many fresh pages
 * on their own, which is what the memory the load keeps costs on this
 * machine, apart from any work done in it. --threads is the load's thread
 * count (default 1: a diff side on a two-core machine).
 *
 * Prints one line of NAME VALUE pairs on stdout (seconds, page counts):
 *   load S analysis S output S load_faults N analysis_faults N
 *   output_faults N fresh_load S page_bytes N
 * Exit status: 0; 1 when the trace cannot be triaged (message on stderr);
 * 2 on usage.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kerndiff/triage.h"
#include "kerndiff/triage_report.h"

#define PROG "phases"

static double now_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

/* Seconds to first-touch `pages` fresh pages (a block this large comes
 * straight from the kernel: glibc maps it on its own). */
static double fresh_pages_seconds(long pages, long page_bytes)
{
    if (pages <= 0)
        return 0.0;
    size_t len = (size_t)pages * (size_t)page_bytes;
    double t0 = now_seconds();
    volatile unsigned char *p = malloc(len);
    if (!p)
        return -1.0;
    for (size_t i = 0; i < len; i += (size_t)page_bytes)
        p[i] = 1;
    double t1 = now_seconds();
    free((void *)p);
    return t1 - t0;
}

static int usage(void)
{
    fprintf(stderr, "usage: " PROG " [--threads N] TRACE\n");
    return 2;
}

int main(int argc, char **argv)
{
    unsigned threads = 1;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 2)
                return usage();
            threads = (unsigned)v;
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return usage();

    kd_triage_options opt;
    memset(&opt, 0, sizeof opt);
    opt.formal_path = path;
    opt.min_share = 1.0; /* the CLI's default render bar */
    opt.load.threads = threads;
    kd_triage t;
    memset(&t, 0, sizeof t);
    kd_error err;
    kd_error_clear(&err);

    long f0 = minor_faults();
    double t0 = now_seconds();
    if (kd_side_load(path, NULL, &opt.load, &t.formal, &err) != KD_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return 1;
    }
    double t1 = now_seconds();
    long f1 = minor_faults();
    t.mapping = &t.formal;
    if (kd_triage_analyze(&opt, &t, &err) != KD_OK) { /* frees t on failure */
        fprintf(stderr, PROG ": %s\n", err.msg);
        return 1;
    }
    double t2 = now_seconds();
    long f2 = minor_faults();
    FILE *out = fopen("/dev/null", "w");
    bool written = out && kd_triage_write_json(&t, &opt, out);
    if (out)
        fclose(out);
    double t3 = now_seconds();
    long f3 = minor_faults();
    kd_triage_free(&t);
    if (!written) {
        fprintf(stderr, PROG ": cannot write the report to /dev/null\n");
        return 1;
    }

    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    double fresh = fresh_pages_seconds(f1 - f0, page);
    printf("load %.6f analysis %.6f output %.6f load_faults %ld analysis_faults %ld "
           "output_faults %ld fresh_load %.6f page_bytes %ld\n",
           t1 - t0, t2 - t1, t3 - t2, f1 - f0, f2 - f1, f3 - f2, fresh, page);
    return 0;
}
