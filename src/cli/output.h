/* output.h — every report of one run, committed together or not at all.
 *
 * A run names its outputs first (the stdout report and --markdown / --csv /
 * --json files), then kd_outputs_prepare() checks them all before any work:
 * an output never replaces an input trace, a directory, another output, a
 * device or a symlink, and a name that cannot be written fails here, not
 * after the analysis. Regular files (and paths that do not exist yet) are
 * written to a temp file in the target's directory and renamed into place;
 * an existing character device, FIFO or socket is written directly; a
 * symlink is followed and its target written, atomically there. Standard
 * output and the direct outputs are held in memory until everything has been
 * rendered, so a failed run leaves no report anywhere (docs/diff.md,
 * "Outputs"). Temp files are removed on SIGINT, SIGTERM and SIGHUP. */
#ifndef KERNDIFF_CLI_OUTPUT_H
#define KERNDIFF_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define KD_MAX_OUTPUTS 4

typedef enum {
    KD_OUT_STDOUT, /* the command's standard output */
    KD_OUT_RENAME, /* a regular file: temp file + rename */
    KD_OUT_DIRECT  /* a device, FIFO or socket: written in place at commit */
} kd_output_kind;

typedef struct {
    const char *option; /* "--json", or "--format" for the stdout report */
    const char *path;   /* as given; "-" is standard output */
    const char *format; /* text, markdown, csv, json */
    kd_output_kind kind;
    char *target;       /* the file written (a symlink followed) */
    char *tmp;          /* KD_OUT_RENAME: the temp file beside target */
    unsigned mode;      /* KD_OUT_RENAME: the final file's permission bits */
    FILE *fp;           /* open while rendering */
    char *buf;          /* KD_OUT_STDOUT / KD_OUT_DIRECT: what to write */
    size_t len;
} kd_output;

typedef struct {
    const char *cmd; /* for usage messages */
    kd_output v[KD_MAX_OUTPUTS];
    size_t n;
} kd_outputs;

void kd_outputs_init(kd_outputs *o, const char *cmd);

/* Adds one output (path "-" = standard output). false, with a usage error
 * printed, when a second report would go to standard output. */
bool kd_outputs_add(kd_outputs *o, const char *option, const char *path, const char *format);

/* Before any work: checks every output against the others and against the
 * inputs (the paths given and the trace files they resolve to, compared by
 * device and inode), creates the temp files. false: one line printed,
 * nothing left behind. inputs[i] may be NULL or "-". */
bool kd_outputs_prepare(kd_outputs *o, const char *const inputs[], size_t n_inputs);

/* Renders every output with render(ctx, format, fp), then commits them all:
 * the direct outputs, standard output, then the renames. false: one line
 * printed, and no file report left (standard output may have been written
 * only when a rename failed after it). */
typedef bool (*kd_render_fn)(void *ctx, const char *format, FILE *fp);
bool kd_outputs_write(kd_outputs *o, kd_render_fn render, void *ctx);

/* Removes the temp files and frees everything (a failed run). */
void kd_outputs_abort(kd_outputs *o);

/* Installs the handlers that remove registered temp files on SIGINT,
 * SIGTERM and SIGHUP before the signal takes its default effect, and
 * ignores SIGPIPE (a closed reader is a write error, docs/diff.md). */
void kd_outputs_install_signals(void);

#endif
