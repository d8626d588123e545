/* cli.h — shared pieces of the kerndiff command line: usage errors, output
 * files written atomically, option parsing helpers. The CLI decides exit
 * codes: 0 ok, 1 gate failed, 2 usage or input error. */
#ifndef KERNDIFF_CLI_H
#define KERNDIFF_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kerndiff/error.h"
#include "kerndiff/kernelsites.h"
#include "kerndiff/text.h"
#include "kerndiff/rules_file.h"
#include "kerndiff/triage.h"
#include "output.h"

#define KD_EXIT_OK 0
#define KD_EXIT_GATE 1
#define KD_EXIT_ERROR 2

extern const char *kd_prog; /* "kerndiff" */

/* Prints "kerndiff: MSG" (one line) on stderr; returns KD_EXIT_ERROR. */
int kd_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error with a pointer to --help; returns KD_EXIT_ERROR. */
int kd_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether standard output was closed when kerndiff started (main() then
 * put /dev/null on the descriptor so no file takes its number). */
extern bool kd_stdout_was_closed;
/* Opens /dev/null on any of descriptors 0-2 that is closed, noting stdout. */
void kd_cli_guard_stdio(void);

/* Option values: a whole number >= 0; a percentage >= 0 ("1.5" or "1.5%"). */
bool kd_cli_parse_size(const char *s, size_t *out);
bool kd_cli_parse_share(const char *s, double *out);
/* --threads: 1 or 2. */
bool kd_cli_parse_threads(const char *s, unsigned *out);

/* The load options for `threads` (--threads; 0: two threads per trace when
 * the machine has two cores for each of the `parallel` traces loaded at
 * once, else one). */
kd_load_options kd_cli_load_options(unsigned threads, unsigned parallel, uint64_t max_string);

/* --max-string: a byte count with an optional K, M or G (powers of 1024),
 * at least 1; "none" for no limit (UINT64_MAX). */
bool kd_cli_parse_max_string(const char *s, uint64_t *out);

/* The options triage and diff share (product.md §2: common and output options). */
typedef struct {
    /* --pid, --stage, --limit, --min-share, --no-kernel-map, --framework:
     * stored where the library reads them (paths are the command's) */
    kd_triage_options analysis;
    const char *format;   /* stdout: text, markdown, csv, json */
    const char *files[3]; /* --markdown, --csv, --json */
    bool quiet;
    unsigned threads; /* --threads: 1 or 2, 0 = by the cores */
    uint64_t max_string; /* --max-string: 0 the default, UINT64_MAX none */
    const char *rules;   /* --rules NAME|FILE (default: "default") */
} kd_cli_common;

/* getopt_long entries of the shared options (letters p s l S f M C j K w q T) */
#define KD_CLI_COMMON_OPTIONS                                                      \
    {"pid", required_argument, NULL, 'p'}, {"stage", required_argument, NULL, 's'},     \
    {"limit", required_argument, NULL, 'l'}, {"min-share", required_argument, NULL, 'S'}, \
    {"format", required_argument, NULL, 'f'}, {"markdown", required_argument, NULL, 'M'}, \
    {"csv", required_argument, NULL, 'C'}, {"json", required_argument, NULL, 'j'},       \
    {"no-kernel-map", no_argument, NULL, 'K'}, {"framework", required_argument, NULL, 'w'}, \
    {"quiet", no_argument, NULL, 'q'}, {"threads", required_argument, NULL, 'T'},          \
    {"max-string", required_argument, NULL, 'X'}, {"rules", required_argument, NULL, 'r'}

/* the formats of files[0..2] */
extern const char *const kd_cli_file_formats[3];

/* Defaults: text on stdout, the 1.0 % render bar. */
void kd_cli_common_init(kd_cli_common *o);
/* One option of argv: 1 stored, 0 not a shared option, -1 a usage error
 * (printed; the caller exits 2). */
int kd_cli_common_option(const char *cmd, int c, const char *arg, kd_cli_common *o);

/* The profile --rules names (a built-in or a file), loaded before any work;
 * *owned is set when it came from a file (free with kd_rules_owned_free).
 * false: the one-line error was printed; exit 2. */
bool kd_cli_rules(const char *spec, const kd_rules **rules, kd_rules_owned **owned);

/* --limit's range (0 = no limit). */
#define KD_CLI_LIMIT_MAX 1000000

/* Names the outputs of a run (the stdout report unless quiet, then the
 * --markdown/--csv/--json files) and prepares them against the inputs
 * before any work (output.h). false: a message was printed; exit 2. */
bool kd_cli_plan_outputs(const char *cmd, const kd_cli_common *com, const char *const inputs[],
                         size_t n_inputs, kd_outputs *outs);

/* false (usage error printed) when more than one input is "-". */
bool kd_cli_one_stdin(const char *cmd, const char *const inputs[], size_t n);

/* The name among names[0..n) nearest to word[0..len) by edit distance, or
 * NULL when none is near enough to be a likely misspelling. */
const char *kd_cli_nearest(const char *word, size_t len, const char *const names[], size_t n);

/* getopt_long's '?' (unknown) or ':' (value missing) for argument arg as a
 * usage error, with the nearest option for a misspelling. Returns 2. */
int kd_cli_bad_option(const char *cmd, const struct option *opts, int c, const char *arg);

int kd_cmd_inspect(int argc, char **argv);
int kd_cmd_triage(int argc, char **argv);
int kd_cmd_rules(int argc, char **argv);
int kd_cmd_diff(int argc, char **argv);

#endif
