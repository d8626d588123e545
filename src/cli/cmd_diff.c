/* cmd_diff.c — `kerndiff diff BASELINE CANDIDATE [options]` and its CI gate. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "kerndiff/diff.h"
#include "kerndiff/diff_report.h"

static void diff_help(void)
{
    printf("Usage: kerndiff diff BASELINE CANDIDATE [options]\n"
           "\n"
           "Compares two traces of the same workload kernel by kernel, per stage: total,\n"
           "exposed (critical-path) and hidden (overlapped) GPU time, how the triage\n"
           "priorities moved, kernels added and removed; and gates on exposed communication.\n"
           "BASELINE and CANDIDATE are trace files (.json, .json.gz), directories of traces,\n"
           "or '-' for one of them read from standard input.\n"
           "\n"
           "Choosing what is compared:\n"
           "  --pid SUBSTR           on both sides, analyse the process (pid) with the most\n"
           "                         GPU kernel time among those whose pid contains SUBSTR\n"
           "  --baseline-pid SUBSTR  the same for the baseline only (overrides --pid)\n"
           "  --candidate-pid SUBSTR the same for the candidate only (overrides --pid)\n"
           "  --stage STAGE          compare one stage only: extend (also spelled prefill),\n"
           "                         decode, or all\n"
           "  --baseline-mapping M   separate mapping trace for the baseline's Python scopes\n"
           "  --candidate-mapping M  the same for the candidate\n"
           "  --normalize MODE       none (default) or steps: divide every time by the\n"
           "                         side's ProfilerStep count (runs of different length)\n"
           "  --match-rule OLD_GLOB=NEW_GLOB\n"
           "                         pair a baseline kernel whose name matches OLD_GLOB\n"
           "                         with a candidate kernel matching NEW_GLOB (shell globs\n"
           "                         on the canonical name; repeatable), before any heuristic\n"
           "\n"
           "The CI gate (thresholds: REL%%, ABS with a unit us, ms or s, or both as REL%%,ABS):\n"
           "  --fail-on-exposed-comm REL[,ABS]\n"
           "                         exit 1 when, in any stage, exposed communication grows\n"
           "                         by more than REL percent and ABS: 5%%, 5%%,200us, 1ms\n"
           "  --warn-on-exposed-comm REL[,ABS]   the same, warning only\n"
           "  --allow-identical      let a gate judge a trace against itself (the same\n"
           "                         file or the same bytes on both sides): by default\n"
           "                         that exits 2, as does a gate with no stage in common\n"
           "                         or no communication kernel on either side\n"
           "\n"
           "Reports (exactly one may go to standard output):\n"
           "  --format FMT           standard output: text (default), markdown, csv or json\n"
           "  --markdown FILE        also write the Markdown report (PR comment) to FILE\n"
           "  --csv FILE             also write the CSV rows to FILE\n"
           "  --json FILE            also write the JSON report to FILE\n"
           "                         (FILE '-' is standard output, with -q)\n"
           "  -q, --quiet            no report on standard output (files and verdict only)\n"
           "  --limit N              how many of each side's top triage rows per stage carry\n"
           "                         a priority (P1-P5) into the diff; 0 (default) = all,\n"
           "                         at most 1000000\n"
           "  --min-share PCT        a kernel's triage priority counts only when it takes at\n"
           "                         least PCT percent of its stage's busy GPU time\n"
           "                         (default 1.0; 0 to 100)\n"
           "\n"
           "Analysis:\n"
           "  --framework FW         auto (default), sglang, vllm, trtllm or tokenspeed: how\n"
           "                         the mapping traces are sampled for kernel sites\n"
           "  --no-kernel-map        do not use kernel-site payloads (debug)\n"
           "  --threads N            1 or 2: threads that parse each large trace\n"
           "                         (default: 2 on a machine with 4 cores or more, as the\n"
           "                         two sides already load at once; the output is the same)\n"
           "  --max-string SIZE      the longest JSON string a trace may hold (default 256M:\n"
           "                         far above any kernel name); a longer one stops the load\n"
           "                         naming its byte offset. Bytes, or with K, M, G; none\n"
           "  --gate-significance    a gate regression the per-launch statistics call\n"
           "                         noise warns instead of failing (noisy CI jobs)\n"
           "\n"
           "Noise (a change is real when a rank test says so and it is large enough):\n"
           "  --fdr RATE             false-discovery rate over a stage's kernels\n"
           "                         (Benjamini-Hochberg; default 1%%)\n"
           "  --min-effect REL%%,ABS  the smallest per-launch change that counts\n"
           "                         (default 2%%,1us of the baseline median)\n"
           "  --gate-category NAME   the category the gate watches (default:\n"
           "                         communication; a rules file may add others)\n"
           "  --rules R              the kernel categories: default (current CUDA and\n"
           "                         ROCm stacks), reference (the reference's tables) or a\n"
           "                         rules file (kerndiff rules --help)\n"
           "  -h, --help             this help\n"
           "\n"
           "The verdict line (pass / warn / fail and the numbers) goes to stderr, except when\n"
           "stdout is the same file as stderr (2>&1 into a log) and its text or Markdown\n"
           "report already starts with it.\n"
           "Reports are written together once everything succeeded, or none is; an output\n"
           "that names an input, a directory or another output is refused before any work.\n"
           "Stages: each side's come from its stage annotations (a renamed copy gives the\n"
           "same report), or from the paths when every file of both sides is named for its\n"
           "stage; the whole-trace stage all, with every kernel of the pid, is always there.\n"
           "Exit status: 0 pass or warn, 1 the gate failed, 2 usage or input error, or a\n"
           "gate with nothing to judge.\n");
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
    const char **rules; /* --match-rule values, NULL-terminated (d.match_rules) */
    size_t n_rules;
} diff_cli;

static const struct option diff_options[] = {
    KD_CLI_COMMON_OPTIONS,
    {"baseline-mapping", required_argument, NULL, 'B'},
    {"candidate-mapping", required_argument, NULL, 'c'},
    {"baseline-pid", required_argument, NULL, 'b'},
    {"candidate-pid", required_argument, NULL, 'd'},
    {"normalize", required_argument, NULL, 'n'},
    {"fail-on-exposed-comm", required_argument, NULL, 'F'},
    {"warn-on-exposed-comm", required_argument, NULL, 'W'},
    {"allow-identical", no_argument, NULL, 'I'},
    {"match-rule", required_argument, NULL, 'R'},
    {"gate-category", required_argument, NULL, 'G'},
    {"fdr", required_argument, NULL, 'Q'},
    {"min-effect", required_argument, NULL, 'E'},
    {"gate-significance", no_argument, NULL, 'S' + 256},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* --fdr: "1%" or "0.01" */
static bool parse_fdr(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v))
        return false;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    *out = v;
    return !*end && v > 0.0 && v < 1.0;
}

/* --min-effect: the gate's threshold syntax (REL%, ABS or REL%,ABS) */
static int parse_min_effect(const char *s, kd_diff_options *d)
{
    kd_gate g;
    char msg[256];
    if (!kd_gate_parse(s, &g, msg, sizeof msg))
        return -1;
    d->min_effect_pct = g.rel_pct >= 0 ? g.rel_pct : 0.0;
    d->min_effect_us = g.abs_us;
    if (d->min_effect_pct == 0.0 && d->min_effect_us == 0.0)
        d->min_effect_us = 1e-9; /* a zero minimum asked for: not the default */
    return 0;
}

static int parse_gate(int c, const char *arg, diff_cli *o)
{
    const char *name = c == 'F' ? "fail" : "warn";
    kd_gate *g = c == 'F' ? &o->fail : &o->warn;
    char msg[256];
    if (g->set)
        return kd_cli_usage_error("diff", "--%s-on-exposed-comm given twice; give one threshold", name);
    if (!kd_gate_parse(arg, g, msg, sizeof msg))
        return kd_cli_usage_error("diff", "--%s-on-exposed-comm: %s", name, msg);
    return 0;
}

/* --match-rule OLD_GLOB=NEW_GLOB: exactly one '=', a glob on each side;
 * kept (argv outlives the run) in o->rules. */
static int parse_match_rule(const char *arg, diff_cli *o)
{
    const char *eq = strchr(arg, '=');
    const char *why = !eq                 ? "no '='"
                      : strchr(eq + 1, '=') ? "more than one '=' (a '=' in a name: match it with '?')"
                      : eq == arg           ? "OLD_GLOB is empty"
                      : !eq[1]              ? "NEW_GLOB is empty"
                                            : NULL;
    if (why)
        return kd_cli_usage_error("diff", "--match-rule takes OLD_GLOB=NEW_GLOB, not '%s': %s", arg, why);
    const char **r = realloc(o->rules, (o->n_rules + 2) * sizeof *r);
    if (!r)
        return kd_cli_error("out of memory");
    r[o->n_rules++] = arg;
    r[o->n_rules] = NULL;
    o->rules = r;
    return 0;
}

static int parse_diff_args(int argc, char **argv, diff_cli *o)
{
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hq", diff_options, NULL)) != -1) {
        int common = kd_cli_common_option("diff", c, optarg, &o->com);
        if (common < 0)
            return KD_EXIT_ERROR;
        if (common)
            continue;
        switch (c) {
        case 'B': o->d.baseline_mapping = optarg; break;
        case 'c': o->d.candidate_mapping = optarg; break;
        case 'b': o->d.baseline_pid = optarg; break;
        case 'd': o->d.candidate_pid = optarg; break;
        case 'n':
            if (strcmp(optarg, "none") && strcmp(optarg, "steps"))
                return kd_cli_usage_error("diff", "--normalize must be none or steps, not '%s'", optarg);
            o->d.normalize_steps = strcmp(optarg, "steps") == 0;
            break;
        case 'F':
        case 'W':
            if (parse_gate(c, optarg, o))
                return KD_EXIT_ERROR;
            break;
        case 'I': o->d.allow_identical = true; break;
        case 'G': o->d.gate_category = optarg; break;
        case 'Q':
            if (!parse_fdr(optarg, &o->d.fdr))
                return kd_cli_usage_error("diff", "--fdr takes a rate above 0 and below 100%%, as 1%% or 0.01, not '%s'",
                                          optarg);
            break;
        case 'E':
            if (parse_min_effect(optarg, &o->d) != 0)
                return kd_cli_usage_error("diff", "--min-effect takes REL%%, ABS or REL%%,ABS with ABS in us, ms or s "
                                                  "(default 2%%,1us), not '%s'", optarg);
            break;
        case 'S' + 256: o->d.gate_significance = true; break;
        case 'R':
            if (parse_match_rule(optarg, o))
                return KD_EXIT_ERROR;
            break;
        case 'h': diff_help(); return -1;
        default: return kd_cli_bad_option("diff", diff_options, c, argv[optind - 1]);
        }
    }
    o->d.match_rules = o->rules;
    o->d.n_match_rules = o->n_rules;
    o->d.sides = o->com.analysis;
    o->d.sides.load = kd_cli_load_options(o->com.threads, 2, o->com.max_string); /* the sides load at once */
    if (!report_for(o->com.format))
        return kd_cli_usage_error("diff", "--format must be text, markdown, csv or json, not '%s'", o->com.format);
    if (optind != argc - 2)
        return kd_cli_usage_error("diff", "expected BASELINE and CANDIDATE, got %d operand%s", argc - optind,
                                  argc - optind == 1 ? "" : "s");
    o->d.baseline_path = argv[optind];
    o->d.candidate_path = argv[optind + 1];
    return 0;
}

/* Whether the verdict line and warnings on stderr would only repeat them:
 * the text and Markdown reports start with both, and when stdout is not a
 * terminal but the same file as stderr (a CI log taking 2>&1) the reader
 * would see them twice. */
static bool stderr_repeats_stdout(const diff_cli *o)
{
    struct stat out, err;
    if (o->com.quiet || isatty(STDOUT_FILENO))
        return false;
    if (strcmp(o->com.format, "text") != 0 && strcmp(o->com.format, "markdown") != 0)
        return false;
    return fstat(STDOUT_FILENO, &out) == 0 && fstat(STDERR_FILENO, &err) == 0 &&
           out.st_dev == err.st_dev && out.st_ino == err.st_ino;
}

static bool render_report(void *ctx, const char *format, FILE *fp)
{
    return report_for(format)(ctx, fp);
}

static int run_diff(diff_cli *o, int argc, char **argv)
{
    int rc = parse_diff_args(argc, argv, o);
    if (rc)
        return rc < 0 ? KD_EXIT_OK : rc;
    const char *inputs[4] = {o->d.baseline_path, o->d.candidate_path, o->d.baseline_mapping,
                             o->d.candidate_mapping};
    kd_outputs outs;
    if (!kd_cli_one_stdin("diff", inputs, 4) || !kd_cli_plan_outputs("diff", &o->com, inputs, 4, &outs))
        return KD_EXIT_ERROR;
    kd_error err;
    kd_error_clear(&err);
    kd_diff d;
    const kd_rules *rules;
    kd_rules_owned *owned;
    if (!kd_cli_rules(o->com.rules, &rules, &owned)) {
        kd_outputs_abort(&outs);
        return KD_EXIT_ERROR;
    }
    o->d.sides.load.rules = rules;
    /* the command line's match rules first, then the rules file's */
    const char **match = calloc(o->n_rules + rules->n_match_rules + 1, sizeof *match);
    if (!match) {
        kd_outputs_abort(&outs);
        kd_rules_owned_free(owned);
        return kd_cli_error("out of memory");
    }
    for (size_t i = 0; i < o->n_rules; i++)
        match[i] = o->rules[i];
    for (size_t i = 0; i < rules->n_match_rules; i++)
        match[o->n_rules + i] = rules->match_rules[i];
    o->d.match_rules = match;
    o->d.n_match_rules = o->n_rules + rules->n_match_rules;
    rc = kd_diff_run(&o->d, &d, &err) != KD_OK ? KD_EXIT_ERROR : KD_EXIT_OK;
    free(match);
    if (rc) {
        kd_outputs_abort(&outs);
        kd_rules_owned_free(owned);
        return kd_cli_error("%s", err.msg);
    }
    kd_gate_result gate;
    kd_diff_gate(&d, &o->fail, &o->warn, &gate);
    if (gate.verdict == KD_VERDICT_UNJUDGED) {
        /* a gate that measured nothing: no report may claim a verdict */
        kd_outputs_abort(&outs);
        fprintf(stderr, "%s\n", gate.line);
        kd_gate_result_free(&gate);
        kd_diff_free(&d);
        kd_rules_owned_free(owned);
        return KD_EXIT_ERROR;
    }
    kd_report rep = {&d, &o->fail, &o->warn, &gate};
    rc = kd_outputs_write(&outs, render_report, &rep) ? KD_EXIT_OK : KD_EXIT_ERROR;
    if (rc == KD_EXIT_OK && !stderr_repeats_stdout(o)) {
        /* product.md §4: the verdict line goes to stderr */
        fprintf(stderr, "%s\n", gate.line);
        for (size_t i = 0; i < gate.n_warnings; i++)
            fprintf(stderr, "kerndiff: warning: %s\n", gate.warnings[i]);
    }
    if (rc == KD_EXIT_OK && gate.verdict == KD_VERDICT_FAIL)
        rc = KD_EXIT_GATE;
    kd_gate_result_free(&gate);
    kd_diff_free(&d);
    kd_rules_owned_free(owned);
    return rc;
}

int kd_cmd_diff(int argc, char **argv)
{
    diff_cli o;
    memset(&o, 0, sizeof o);
    kd_cli_common_init(&o.com);
    int rc = run_diff(&o, argc, argv);
    free(o.rules);
    return rc;
}
