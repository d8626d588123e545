/* main.c — `kerndiff COMMAND ...` dispatch, --help and --version. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: kerndiff COMMAND [options]\n"
            "\n"
            "Compare PyTorch-profiler (Kineto) traces kernel by kernel: exposed and hidden\n"
            "GPU time, overlap opportunities, exposed communication.\n"
            "\n"
            "Commands:\n"
            "  inspect TRACE                 what is in a trace: pids, streams, stages,\n"
            "                                kernel categories, step markers, chosen pid\n"
            "  diff BASELINE CANDIDATE       per-kernel deltas of exposed / hidden time,\n"
            "                                priority changes, exposed-communication gate\n"
            "  triage TRACE [--mapping M]    one trace's overlap-opportunity table\n"
            "\n"
            "TRACE is a trace file (.json or .json.gz, gzip detected by content) or a\n"
            "directory of traces (rank 0, newest file per stage, prefill/ and decode/).\n"
            "\n"
            "  kerndiff --help | --version | COMMAND --help\n"
            "\n"
            "Exit status: 0 success (diff: gate passed or warned), 1 diff gate failed,\n"
            "2 usage or input error (one line on stderr naming\n"
            "the file and, for parse errors, the byte offset).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return KD_EXIT_ERROR;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_help(stdout);
        return KD_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("kerndiff %s\n", PACKAGE_VERSION);
        return KD_EXIT_OK;
    }
    if (strcmp(cmd, "inspect") == 0)
        return kd_cmd_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "triage") == 0)
        return kd_cmd_triage(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0)
        return kd_cmd_diff(argc - 1, argv + 1);
    return kd_cli_error("unknown command '%s' (see 'kerndiff --help')", cmd);
}
