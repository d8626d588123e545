/* cmd_diff.c — `kerndiff diff BASELINE CANDIDATE [options]` and its CI gate. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kerndiff/diff.h"
#include "kerndiff/report.h"

static void diff_help(void)
{
    printf("Usage: kerndiff diff BASELINE CANDIDATE [options]\n"
           "\n"
           "Compares two traces of the same workload kernel by kernel, per stage: total,\n"
           "exposed (critical-path) and hidden (overlapped) GPU time, how the triage\n"
           "priorities moved, kernels added and removed; and gates on exposed communication.\n"
           "\n"
           "  --baseline-mapping M   separate mapping trace for the baseline's Python scopes\n"
           "  --candidate-mapping M  the same for the candidate\n"
           "  --pid SUBSTR           analyse the heaviest pid whose name contains SUBSTR\n"
           "  --stage STAGE          only extend, decode or all\n"
           "  --limit N              triage action rows per stage used for priorities (0 = all)\n"
           "  --min-share PCT        render bar of those rows (default 1.0)\n"
           "  --normalize MODE       none (default) or steps: divide every time by the\n"
           "                         side's ProfilerStep count\n"
           "  --fail-on-exposed-comm REL[,ABS]\n"
           "                         exit 1 when, in any stage, exposed communication grows\n"
           "                         by more than REL percent and ABS us: 5%%, 5%%,200us, 200us\n"
           "  --warn-on-exposed-comm REL[,ABS]   the same, warning only\n"
           "  --format FMT           stdout: text (default), markdown, csv or json\n"
           "  --markdown FILE        also write the Markdown report (PR comment) to FILE\n"
           "  --csv FILE             also write the CSV rows to FILE\n"
           "  --json FILE            also write the JSON report to FILE ('-' = stdout)\n"
           "  --framework FW         auto (default), sglang, vllm, trtllm or tokenspeed: how\n"
           "                         the mapping traces are sampled for kernel sites\n"
           "  --no-kernel-map        do not use kernel-site payloads (debug)\n"
           "  --threads N            1 or 2: threads that parse each large trace\n"
           "                         (default: 2 on a machine with 4 cores or more, as the\n"
           "                         two sides already load at once; the output is the same)\n"
           "  -q, --quiet            nothing on stdout (files and the verdict line only)\n"
           "  -h, --help             this help\n"
           "\n"
           "The verdict line (pass / warn / fail and the numbers) always goes to stderr.\n"
           "Exit status: 0 pass or warn, 1 the gate failed, 2 usage or input error.\n");
}

typedef bool (*report_fn)(const kd_report *, FILE *);

static report_fn report_for(const char *format)
{
    if (strcmp(format, "text") == 0)
        return kd_diff_write_text;
    if (strcmp(format, "markdown") == 0)
        return kd_diff_write_markdown;
    if (strcmp(format, "csv") == 0)
        return kd_diff_write_csv;
    if (strcmp(format, "json") == 0)
        return kd_diff_write_json;
    return NULL;
}

typedef struct {
    kd_diff_options d;
    kd_gate fail, warn;
    kd_cli_common com;
} diff_cli;

static int parse_diff_args(int argc, char **argv, diff_cli *o)
{
    static const struct option opts[] = {
        KD_CLI_COMMON_OPTIONS,
        {"baseline-mapping", required_argument, NULL, 'B'},
        {"candidate-mapping", required_argument, NULL, 'c'},
        {"normalize", required_argument, NULL, 'n'},
        {"fail-on-exposed-comm", required_argument, NULL, 'F'},
        {"warn-on-exposed-comm", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    char msg[256];
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
        int common = kd_cli_common_option("diff", c, optarg, &o->com);
        if (common < 0)
            return KD_EXIT_ERROR;
        if (common)
            continue;
        switch (c) {
        case 'B': o->d.baseline_mapping = optarg; break;
        case 'c': o->d.candidate_mapping = optarg; break;
        case 'n':
            if (strcmp(optarg, "none") && strcmp(optarg, "steps"))
                return kd_cli_usage_error("diff", "--normalize must be none or steps, not '%s'", optarg);
            o->d.normalize_steps = strcmp(optarg, "steps") == 0;
            break;
        case 'F':
        case 'W':
            if (!kd_gate_parse(optarg, c == 'F' ? &o->fail : &o->warn, msg, sizeof msg))
                return kd_cli_usage_error("diff", "--%s-on-exposed-comm: %s", c == 'F' ? "fail" : "warn", msg);
            break;
        case 'h': diff_help(); return -1;
        default:
            return kd_cli_usage_error("diff", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    o->d.sides = o->com.analysis;
    o->d.sides.load = kd_cli_load_options(o->com.threads, 2); /* the sides load at once */
    if (!report_for(o->com.format))
        return kd_cli_usage_error("diff", "--format must be text, markdown, csv or json, not '%s'", o->com.format);
    if (optind != argc - 2)
        return kd_cli_usage_error("diff", "expected BASELINE and CANDIDATE");
    o->d.baseline_path = argv[optind];
    o->d.candidate_path = argv[optind + 1];
    return 0;
}

static bool write_one(void *ctx, size_t i, FILE *fp)
{
    return report_for(kd_cli_file_formats[i])(ctx, fp);
}

/* every extra file written atomically; on a failure none is left behind */
static bool write_files(const kd_report *rep, const diff_cli *o)
{
    return kd_cli_write_outputs(o->com.files, 3, write_one, (void *)rep);
}

int kd_cmd_diff(int argc, char **argv)
{
    diff_cli o;
    memset(&o, 0, sizeof o);
    kd_cli_common_init(&o.com);
    int rc = parse_diff_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? KD_EXIT_OK : rc;
    for (int i = 0; i < 3; i++)
        if (o.com.files[i] && !kd_output_check(o.com.files[i]))
            return KD_EXIT_ERROR;
    kd_error err;
    kd_error_clear(&err);
    kd_diff d;
    if (kd_diff_run(&o.d, &d, &err) != KD_OK)
        return kd_cli_error("%s", err.msg);
    kd_gate_result gate;
    kd_diff_gate(&d, &o.fail, &o.warn, &gate);
    kd_report rep = {&d, &o.d, &o.fail, &o.warn, &gate};
    rc = write_files(&rep, &o) ? KD_EXIT_OK : KD_EXIT_ERROR;
    if (rc == KD_EXIT_OK && !o.com.quiet && !report_for(o.com.format)(&rep, stdout))
        rc = kd_cli_error("standard output: write error");
    if (rc == KD_EXIT_OK && fflush(stdout) != 0)
        rc = kd_cli_error("standard output: write error");
    if (rc == KD_EXIT_OK) {
        /* product.md §4: the verdict line always goes to stderr */
        fprintf(stderr, "%s\n", gate.line);
        for (size_t i = 0; i < gate.n_warnings; i++)
            fprintf(stderr, "kerndiff: warning: %s\n", gate.warnings[i]);
        if (gate.verdict == KD_VERDICT_FAIL)
            rc = KD_EXIT_GATE;
    }
    kd_gate_result_free(&gate);
    kd_diff_free(&d);
    return rc;
}
