/* main.c — `kerndiff COMMAND ...` dispatch, --help and --version. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The commands, as tmux's cmd_entry table: one entry per command, with what
 * the main help says of it; the command parses its own options. */
typedef struct {
    const char *name;
    const char *operands; /* after the name, in the help */
    const char *summary;  /* two lines at most, for the help */
    int (*run)(int argc, char **argv);
} kd_command;

static const kd_command commands[] = {
    {"inspect", "TRACE", "what is in a trace: pids, streams, stages,\n"
                         "kernel categories, step markers, chosen pid", kd_cmd_inspect},
    {"diff", "BASELINE CANDIDATE", "per-kernel deltas of exposed / hidden time,\n"
                                   "priority changes, exposed-communication gate", kd_cmd_diff},
    {"triage", "TRACE", "one trace's overlap-opportunity table", kd_cmd_triage},
    {"rules", "--list|--show|--classify", "the kernel-category profiles (--rules),\n"
                                           "and what one makes of kernel names",
     kd_cmd_rules},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *out)
{
    fprintf(out, "Usage: kerndiff COMMAND [options] OPERANDS\n"
                 "\n"
                 "Compare PyTorch-profiler (Kineto) traces kernel by kernel: exposed and hidden\n"
                 "GPU time, overlap opportunities, exposed communication.\n"
                 "\n"
                 "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const char *line = commands[i].summary;
        int width = fprintf(out, "  %s %s", commands[i].name, commands[i].operands);
        while (*line) {
            size_t n = strcspn(line, "\n");
            fprintf(out, "%*s%.*s\n", width < 32 ? 32 - width : 1, "", (int)n, line);
            line += n + (line[n] == '\n');
            width = 0;
        }
    }
    fprintf(out, "\n"
                 "TRACE, BASELINE and CANDIDATE are trace files (.json, or compressed: gzip\n"
                 "detected by content), directories of traces (rank 0, newest file per stage,\n"
                 "prefill/ and decode/), or '-' for standard input.\n"
                 "\n"
                 "  kerndiff --help | --version | COMMAND --help\n"
                 "\n"
                 "Exit status: 0 success (diff: gate passed or warned), 1 diff gate failed,\n"
                 "2 usage or input error (one line on stderr naming the file and, for parse\n"
                 "errors, the byte offset).\n");
}

static const kd_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* "kerndiff A B diff": the command given after its operands. */
static int misplaced_command(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (!find_command(argv[i]))
            continue;
        fprintf(stderr, "%s: '%s' is not a command; the command comes first: %s %s", kd_prog, argv[1],
                kd_prog, argv[i]);
        for (int k = 1; k < argc; k++)
            if (k != i)
                fprintf(stderr, " %s", argv[k]);
        fputc('\n', stderr);
        return KD_EXIT_ERROR;
    }
    return -1;
}

static int unknown_command(int argc, char **argv)
{
    const char *cmd = argv[1];
    int rc = misplaced_command(argc, argv);
    if (rc >= 0)
        return rc;
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        names[i] = commands[i].name;
    const char *near = kd_cli_nearest(cmd, strlen(cmd), names, N_COMMANDS);
    if (near)
        return kd_cli_error("unknown command '%s'; did you mean '%s'? (see 'kerndiff --help')", cmd, near);
    if (access(cmd, F_OK) == 0)
        return kd_cli_error("'%s' is not a command; to read it: %s inspect %s, %s triage %s, "
                            "or %s diff %s CANDIDATE", cmd, kd_prog, cmd, kd_prog, cmd, kd_prog, cmd);
    return kd_cli_error("unknown command '%s' (see 'kerndiff --help')", cmd);
}

int main(int argc, char **argv)
{
    kd_cli_guard_stdio();
    kd_outputs_install_signals();
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
    const kd_command *c = find_command(cmd);
    if (c)
        return c->run(argc - 1, argv + 1);
    return unknown_command(argc, argv);
}
