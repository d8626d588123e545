/* cmd_triage.c — `kerndiff triage TRACE [--mapping M] [options]`. */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "kerndiff/triage.h"

static void triage_help(void)
{
    printf("Usage: kerndiff triage TRACE [--mapping M] [--pid SUBSTR] [--stage STAGE]\n"
           "                       [--format json] [--json FILE] [--dump-internals]\n"
           "\n"
           "Extracts one trace's GPU kernel events per stage (extend/prefill, decode, all)\n"
           "the way the reference triage does: the heaviest pid (TP00 preferred), streams,\n"
           "External ids, canonical names, categories and stages. TRACE is its own mapping\n"
           "trace unless --mapping gives a separate (graph-off) capture.\n"
           "\n"
           "  --mapping M        mapping trace (file or directory) for Python-scope attribution\n"
           "  --pid SUBSTR       analyse the heaviest pid whose name contains SUBSTR\n"
           "  --stage STAGE      only extend, decode or all\n"
           "  --format json      output format on stdout (json; the overlap table formats\n"
           "                     text, markdown and csv arrive with the overlap pipeline)\n"
           "  --json FILE        also write the JSON document to FILE ('-' = stdout)\n"
           "  --dump-internals   include every kernel event of every stage\n"
           "  -h, --help         this help\n"
           "\n"
           "Exit status: 0 ok; 2 bad usage, unreadable or invalid trace, or no GPU kernels.\n");
}

typedef struct {
    kd_triage_options t;
    const char *format;
    const char *json_file;
} triage_cli;

static int parse_triage_args(int argc, char **argv, triage_cli *o)
{
    static const struct option opts[] = {
        {"mapping", required_argument, NULL, 'm'},
        {"pid", required_argument, NULL, 'p'},
        {"stage", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},
        {"json", required_argument, NULL, 'j'},
        {"dump-internals", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': o->t.mapping_path = optarg; break;
        case 'p': o->t.pid_substring = optarg; break;
        case 's':
            if (!kd_stage_from_name(optarg, &o->t.stage_filter))
                return kd_cli_usage_error("triage", "--stage must be extend, decode or all, not '%s'",
                                          optarg);
            o->t.has_stage_filter = true;
            break;
        case 'f': o->format = optarg; break;
        case 'j': o->json_file = optarg; break;
        case 'd': o->t.dump_internals = true; break;
        case 'h': triage_help(); return -1;
        default:
            return kd_cli_usage_error("triage", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (strcmp(o->format, "json") != 0)
        return kd_cli_usage_error("triage", "--format %s is not available yet: only json is implemented",
                                  o->format);
    if (optind != argc - 1)
        return kd_cli_usage_error("triage", "expected exactly one TRACE argument");
    o->t.formal_path = argv[optind];
    return 0;
}

int kd_cmd_triage(int argc, char **argv)
{
    triage_cli o;
    memset(&o, 0, sizeof o);
    o.format = "json";
    o.t.min_share = KD_MIN_RENDER_SHARE_PCT;
    int rc = parse_triage_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? KD_EXIT_OK : rc;
    if (o.json_file && !kd_output_check(o.json_file))
        return KD_EXIT_ERROR;
    kd_error err;
    kd_error_clear(&err);
    kd_triage t;
    if (kd_triage_run(&o.t, &t, &err) != KD_OK)
        return kd_cli_error("%s", err.msg);
    rc = KD_EXIT_OK;
    if (o.json_file && strcmp(o.json_file, "-") != 0) {
        kd_output out;
        if (!kd_output_open(&out, o.json_file))
            rc = KD_EXIT_ERROR;
        else if (!kd_triage_write_json(&t, &o.t, out.fp)) {
            kd_output_abort(&out);
            rc = kd_cli_error("%s: write error", o.json_file);
        } else if (!kd_output_commit(&out))
            rc = KD_EXIT_ERROR;
    }
    if (rc == KD_EXIT_OK && !kd_triage_write_json(&t, &o.t, stdout))
        rc = kd_cli_error("standard output: write error");
    kd_triage_free(&t);
    return rc;
}
