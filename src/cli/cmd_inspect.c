/* cmd_inspect.c — `kerndiff inspect TRACE [--pid S] [--format text|json]`. */
#include "config.h"

#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "kerndiff/inspect.h"
#include "kerndiff/side.h"
#include "kerndiff/triage.h"

static void inspect_help(void)
{
    printf("Usage: kerndiff inspect TRACE [options]\n"
           "\n"
           "TRACE is a trace file (.json, .json.gz), a directory of traces, or '-' for\n"
           "standard input.\n"
           "Reports what is in a trace: the files resolved, the top-level shape, events\n"
           "read / kept / skipped as malformed (by reason), pids with their kernel time and\n"
           "which one is analysed and why, streams with kernel counts and busy time, stages\n"
           "and where they come from, kernel launches and time by category, counts of\n"
           "cpu_ops, Python frames, CUDA launches, annotations and ProfilerStep markers.\n"
           "\n"
           "  --pid SUBSTR     analyse the process (pid) with the most GPU kernel time\n"
           "                   among those whose pid contains SUBSTR\n"
           "  --format FMT     text (default) or json\n"
           "  --threads N      1 or 2: threads that parse one large trace (default: 2 on\n"
           "                   a machine with 2 cores or more; the output is the same)\n"
           "  --max-string SIZE  the longest JSON string a trace may hold (default 256M:\n"
           "                   far above any kernel name); a longer one stops the load\n"
           "                   naming its byte offset. Bytes, or with K, M, G; none\n"
           "  --rules R        the kernel categories: default (current CUDA and ROCm\n"
           "                   stacks), reference (the reference's tables) or a rules\n"
           "                   file (kerndiff rules --help)\n"
           "  -h, --help       this help\n"
           "\n"
           "Exit status: 0 ok; 2 bad usage, unreadable or invalid trace, or no GPU kernels.\n");
}

int kd_cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'f'},
        {"threads", required_argument, NULL, 'T'},
        {"max-string", required_argument, NULL, 'X'},
        {"rules", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    kd_cli_common com; /* --pid, --format, --threads, --max-string as the other commands read them */
    kd_cli_common_init(&com);
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
        case 'f':
        case 'T':
        case 'X':
        case 'r':
            if (kd_cli_common_option("inspect", c, optarg, &com) < 0)
                return KD_EXIT_ERROR;
            break;
        case 'h': inspect_help(); return KD_EXIT_OK;
        default: return kd_cli_bad_option("inspect", opts, c, argv[optind - 1]);
        }
    }
    const char *pid = com.analysis.pid_substring, *format = com.format;
    if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
        return kd_cli_usage_error("inspect", "--format must be text or json, not '%s'", format);
    if (optind != argc - 1)
        return kd_cli_usage_error("inspect", "expected exactly one TRACE argument, got %d", argc - optind);
    const char *path = argv[optind];
    kd_error err;
    kd_error_clear(&err);
    kd_side side;
    kd_load_options load = kd_cli_load_options(com.threads, 1, com.max_string);
    const kd_rules *rules;
    kd_rules_owned *owned;
    if (!kd_cli_rules(com.rules, &rules, &owned))
        return KD_EXIT_ERROR;
    load.rules = rules;
    /* the reference's stages, and the whole trace for the streams and
     * categories of every kernel of the pid */
    kd_side_options so = {pid, &load, KD_STAGES_REFERENCE, true};
    if (kd_side_open(path, &so, &side, &err) != KD_OK) {
        kd_rules_owned_free(owned);
        return kd_cli_error("%s", err.msg);
    }
    kd_inspect r;
    if (kd_inspect_build(&side, pid, &r, &err) != KD_OK) {
        kd_side_free(&side);
        kd_rules_owned_free(owned);
        return kd_cli_error("%s", err.msg);
    }
    bool ok = strcmp(format, "json") == 0 ? kd_inspect_write_json(&r, stdout)
                                          : kd_inspect_write_text(&r, stdout);
    int rc = ok ? KD_EXIT_OK : kd_cli_error("standard output: write error");
    if (ok && !r.chosen_pid) {
        /* product.md §7: a trace with no GPU kernels is an input error */
        char msg[1024];
        kd_describe_no_kernels(&side, path, pid, msg, sizeof msg);
        rc = kd_cli_error("%s", msg);
    }
    kd_inspect_free(&r);
    kd_side_free(&side);
    kd_rules_owned_free(owned);
    return rc;
}
