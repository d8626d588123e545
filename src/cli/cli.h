/* cli.h — shared pieces of the kerndiff command line: usage errors, output
 * files written atomically, option parsing helpers. The CLI decides exit
 * codes: 0 ok, 1 gate failed, 2 usage or input error. */
#ifndef KERNDIFF_CLI_H
#define KERNDIFF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "kerndiff/error.h"
#include "kerndiff/kernelsites.h"
#include "kerndiff/text.h"
#include "kerndiff/triage.h"

#define KD_EXIT_OK 0
#define KD_EXIT_GATE 1
#define KD_EXIT_ERROR 2

extern const char *kd_prog; /* "kerndiff" */

/* Prints "kerndiff: MSG" (one line) on stderr; returns KD_EXIT_ERROR. */
int kd_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error with a pointer to --help; returns KD_EXIT_ERROR. */
int kd_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An output destination: stdout ("-") or a file written to a temp file in
 * the same directory and renamed into place on commit (product.md §2). */
typedef struct {
    const char *path; /* NULL or "-" for stdout */
    char *tmp;
    FILE *fp;
} kd_output;

/* Opens; on failure prints the error and returns false. */
bool kd_output_open(kd_output *o, const char *path);
/* Closes and renames into place; false (message printed) on failure. */
bool kd_output_commit(kd_output *o);
/* Closes and removes the temp file (failed run: nothing left behind). */
void kd_output_abort(kd_output *o);

/* Checks up front that PATH's directory is writable, so a run fails before
 * any work when an output cannot be created. */
bool kd_output_check(const char *path);

/* Option values: a whole number >= 0; a percentage >= 0 ("1.5" or "1.5%"). */
bool kd_cli_parse_size(const char *s, size_t *out);
bool kd_cli_parse_share(const char *s, double *out);
/* --threads: 1 or 2. */
bool kd_cli_parse_threads(const char *s, unsigned *out);

/* The load options for `threads` (--threads; 0: two threads per trace when
 * the machine has two cores for each of the `parallel` traces loaded at
 * once, else one). */
kd_load_options kd_cli_load_options(unsigned threads, unsigned parallel);

/* Writes every named output (files[i] may be NULL) with write(ctx, i, fp),
 * each atomically; if any fails, none is left behind. */
bool kd_cli_write_outputs(const char *const files[], size_t n,
                          bool (*write)(void *ctx, size_t i, FILE *fp), void *ctx);

/* The options triage and diff share (product.md §2: common and output options). */
typedef struct {
    /* --pid, --stage, --limit, --min-share, --no-kernel-map, --framework:
     * stored where the library reads them (paths are the command's) */
    kd_triage_options analysis;
    const char *format;   /* stdout: text, markdown, csv, json */
    const char *files[3]; /* --markdown, --csv, --json */
    bool quiet;
    unsigned threads; /* --threads: 1 or 2, 0 = by the cores */
} kd_cli_common;

/* getopt_long entries of the shared options (letters p s l S f M C j K w q T) */
#define KD_CLI_COMMON_OPTIONS                                                      \
    {"pid", required_argument, NULL, 'p'}, {"stage", required_argument, NULL, 's'},     \
    {"limit", required_argument, NULL, 'l'}, {"min-share", required_argument, NULL, 'S'}, \
    {"format", required_argument, NULL, 'f'}, {"markdown", required_argument, NULL, 'M'}, \
    {"csv", required_argument, NULL, 'C'}, {"json", required_argument, NULL, 'j'},       \
    {"no-kernel-map", no_argument, NULL, 'K'}, {"framework", required_argument, NULL, 'w'}, \
    {"quiet", no_argument, NULL, 'q'}, {"threads", required_argument, NULL, 'T'}

/* the formats of files[0..2] */
extern const char *const kd_cli_file_formats[3];

/* Defaults: text on stdout, the 1.0 % render bar. */
void kd_cli_common_init(kd_cli_common *o);
/* One option of argv: 1 stored, 0 not a shared option, -1 a usage error
 * (printed; the caller exits 2). */
int kd_cli_common_option(const char *cmd, int c, const char *arg, kd_cli_common *o);

int kd_cmd_inspect(int argc, char **argv);
int kd_cmd_triage(int argc, char **argv);
int kd_cmd_diff(int argc, char **argv);

#endif
