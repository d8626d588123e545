/* cmd_triage.c — `kerndiff triage TRACE [--mapping M] [options]`. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kerndiff/triage.h"
#include "kerndiff/triage_report.h"

static void triage_help(void)
{
    printf("Usage: kerndiff triage TRACE [options]\n"
           "\n"
           "The overlap-opportunity table of one trace, per stage (extend/prefill, decode,\n"
           "all): the kernels with the most exposed time (still on the critical path) and\n"
           "the mostly hidden memory/elementwise kernels, each with its Python scope, its\n"
           "same-stream neighbours' dependency risk, a priority and a recommendation.\n"
           "TRACE is a trace file (.json, .json.gz), a directory of traces, or '-' for\n"
           "standard input; it is its own mapping trace unless --mapping names another.\n"
           "\n"
           "  --mapping M        mapping trace (file or directory) for Python-scope attribution\n"
           "  --pid SUBSTR       analyse the process (pid) with the most GPU kernel time among\n"
           "                     those whose pid contains SUBSTR\n"
           "  --stage STAGE      one stage only: extend (also spelled prefill), decode or all\n"
           "  --limit N          keep at most the N first rows of each stage's table, in\n"
           "                     priority order; 0 (default) keeps them all; at most 1000000\n"
           "  --min-share PCT    show only kernels that take at least PCT percent of the\n"
           "                     stage's busy GPU time (default 1.0; 0 shows every row;\n"
           "                     applied after --limit)\n"
           "  --format FMT       standard output: text (default), markdown, csv or json\n"
           "  --markdown FILE    also write the Markdown table to FILE\n"
           "  --csv FILE         also write the rendered rows as CSV to FILE\n"
           "  --json FILE        also write the JSON document to FILE\n"
           "                     (FILE '-' is standard output, with -q: one report there)\n"
           "  --dump-internals   JSON: also every kernel event and the source map before\n"
           "                     the kernel-site merge\n"
           "  --framework FW     auto (default), sglang, vllm, trtllm or tokenspeed: how the\n"
           "                     mapping trace is sampled for kernel sites\n"
           "  --no-kernel-map    do not use kernel-site payloads (debug)\n"
           "  --threads N        1 or 2: threads that parse one large trace (default:\n"
           "                     2 on a machine with 2 cores or more; the output is the same)\n"
           "  -q, --quiet        no report on standard output (files only)\n"
           "  --max-string SIZE  the longest JSON string a trace may hold (default 256M:\n"
           "                     far above any kernel name); a longer one stops the load\n"
           "                     naming its byte offset. Bytes, or with K, M, G; none\n"
           "  --rules R          the kernel categories: default (current CUDA and ROCm\n"
           "                     stacks), reference (the reference's tables, what\n"
           "                     conformance uses) or a rules file (kerndiff rules --help)\n"
           "  -h, --help         this help\n"
           "\n"
           "Reports are written together once everything succeeded, or none is; an output\n"
           "that names an input, a directory or another output is refused before any work.\n"
           "Exit status: 0 ok; 2 bad usage, unreadable or invalid trace, or no GPU kernels.\n");
}

typedef bool (*writer_fn)(const kd_triage *, const kd_triage_options *, FILE *);

static writer_fn writer_for(const char *format)
{
    if (strcmp(format, "text") == 0)
        return kd_triage_write_text;
    if (strcmp(format, "markdown") == 0)
        return kd_triage_write_markdown;
    if (strcmp(format, "csv") == 0)
        return kd_triage_write_csv;
    if (strcmp(format, "json") == 0)
        return kd_triage_write_json;
    return NULL;
}

typedef struct {
    kd_triage_options t;
    kd_cli_common com;
} triage_cli;

static const struct option triage_options[] = {
    KD_CLI_COMMON_OPTIONS,
    {"mapping", required_argument, NULL, 'm'},
    {"dump-internals", no_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_triage_args(int argc, char **argv, triage_cli *o)
{
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hq", triage_options, NULL)) != -1) {
        int common = kd_cli_common_option("triage", c, optarg, &o->com);
        if (common < 0)
            return KD_EXIT_ERROR;
        if (common)
            continue;
        switch (c) {
        case 'm': o->com.analysis.mapping_path = optarg; break;
        case 'd': o->com.analysis.dump_internals = true; break;
        case 'h': triage_help(); return -1;
        default: return kd_cli_bad_option("triage", triage_options, c, argv[optind - 1]);
        }
    }
    o->t = o->com.analysis;
    o->t.load = kd_cli_load_options(o->com.threads, 1, o->com.max_string);
    if (!writer_for(o->com.format))
        return kd_cli_usage_error("triage", "--format must be text, markdown, csv or json, not '%s'",
                                  o->com.format);
    if (optind != argc - 1)
        return kd_cli_usage_error("triage", "expected exactly one TRACE argument, got %d", argc - optind);
    o->t.formal_path = argv[optind];
    return 0;
}

typedef struct {
    const kd_triage *t;
    const triage_cli *o;
} output_ctx;

static bool render_table(void *ctx, const char *format, FILE *fp)
{
    const output_ctx *c = ctx;
    return writer_for(format)(c->t, &c->o->t, fp);
}

int kd_cmd_triage(int argc, char **argv)
{
    triage_cli o;
    memset(&o, 0, sizeof o);
    kd_cli_common_init(&o.com);
    int rc = parse_triage_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? KD_EXIT_OK : rc;
    const char *inputs[2] = {o.t.formal_path, o.t.mapping_path};
    kd_outputs outs;
    if (!kd_cli_one_stdin("triage", inputs, 2) || !kd_cli_plan_outputs("triage", &o.com, inputs, 2, &outs))
        return KD_EXIT_ERROR;
    kd_error err;
    kd_error_clear(&err);
    kd_triage t;
    const kd_rules *rules;
    kd_rules_owned *owned;
    if (!kd_cli_rules(o.com.rules, &rules, &owned)) {
        kd_outputs_abort(&outs);
        return KD_EXIT_ERROR;
    }
    o.t.load.rules = rules;
    if (kd_triage_run(&o.t, &t, &err) != KD_OK) {
        kd_outputs_abort(&outs);
        kd_rules_owned_free(owned);
        return kd_cli_error("%s", err.msg);
    }
    output_ctx ctx = {&t, &o};
    rc = kd_outputs_write(&outs, render_table, &ctx) ? KD_EXIT_OK : KD_EXIT_ERROR;
    char warn[512];
    if (rc == KD_EXIT_OK && kd_triage_outside_warning(&t, warn, sizeof warn))
        fprintf(stderr, "kerndiff: warning: %s: %s\n", o.t.formal_path, warn);
    kd_triage_free(&t);
    kd_rules_owned_free(owned);
    return rc;
}
