/* discover.h — resolve a trace path (file or directory) to the trace files
 * to analyse, as the reference's discover_trace_targets (reference §3.2). */
#ifndef KERNDIFF_DISCOVER_H
#define KERNDIFF_DISCOVER_H

#include <stddef.h>

#include "kerndiff/error.h"
#include "kerndiff/text.h"

typedef struct {
    char *path;      /* file path (dir + name as found) */
    kd_stage stage;  /* parse_stage(path) */
    /* The rank the file was chosen as (-1 unknown) and where it came from:
     * "distributedInfo" (the header, kd_peek_trace_header), "file name"
     * (kd_parse_rank_name), or NULL. Headers are read only when a directory
     * leaves a choice (more than one trace file): a lone file, and a file
     * named on the command line, get their name's rank, unread. */
    long rank;
    const char *rank_from; /* static */
    long world_size;       /* distributedInfo.world_size from the header, -1 unknown */
} kd_trace_file;

typedef struct {
    kd_trace_file *files; /* final order: (stage order, name) */
    size_t n;
    char *how; /* one line: "file", or how a directory was resolved (for inspect) */
} kd_trace_set;

/* Resolve path. A file is returned as is (its content is not checked here);
 * "-" (standard input) is one file "-" with how "standard input" and the
 * stage of no path (KD_STAGE_ALL), for the loader to read.
 * A directory with no trace gives KD_EINPUT "…: no trace files in directory".
 * A directory's rank (reference §3.2 step 7) comes from each file's
 * distributedInfo.rank, else its name (kd_parse_rank_name); rank 0, else the
 * lowest, is kept. Ranks are never guessed: when no file has one and a stage
 * still has several files, KD_EINPUT "DIR: N trace files and no way to tell
 * which is rank 0 (...): a, b, ..." (the names, sorted). Files of one rank
 * and stage from several runs: the newest, as the reference. */
kd_status kd_discover_traces(const char *path, kd_trace_set *out, kd_error *err);
void kd_trace_set_free(kd_trace_set *s);

/* parse_tp_rank on a basename: the rank, or -1 when no pattern matches. */
long kd_parse_tp_rank(const char *basename);
/* A file name's rank for discovery: kd_parse_tp_rank's patterns first, then
 * (?:^|[_-])rank[-_](\d+)(?:[_.-]|$) (trace_rank-0.json, rank_3.json);
 * -1 when none matches. */
long kd_parse_rank_name(const char *basename);
/* parse_stage(path): last 6 path components, lowered (reference §3.2). */
kd_stage kd_parse_stage(const char *path);

/* The trace-file test on a name + probe (exposed for tests). */
int kd_is_trace_file_name(const char *basename); /* 1 yes, 0 no, -1 needs probe */

#endif
