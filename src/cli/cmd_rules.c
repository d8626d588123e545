/* cmd_rules.c — `kerndiff rules`: the classification profiles, shown in the
 * rules-file syntax, and what a profile makes of kernel names. */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kerndiff/rules_file.h"

static void rules_help(void)
{
    printf("Usage: kerndiff rules --list\n"
           "       kerndiff rules --show NAME|FILE\n"
           "       kerndiff rules --classify [--rules NAME|FILE] KERNEL... | -\n"
           "\n"
           "Kernel categories (compute, communication, memory, elementwise, other, and any\n"
           "a rules file adds) drive every summary, the priorities and the gate. A profile\n"
           "decides them: 'default' classifies current CUDA and ROCm stacks (GEMM\n"
           "libraries, attention kernels, the collectives of NCCL, RCCL, NVSHMEM, DeepEP\n"
           "and others); 'reference' is the reference's tables exactly (what conformance\n"
           "uses); a rules file (INI) extends either. Every command takes --rules.\n"
           "\n"
           "  --list             the built-in profiles\n"
           "  --show NAME|FILE   a profile in the rules-file syntax: a file to start from\n"
           "  --classify         the category of each KERNEL name (one per line from\n"
           "                     standard input with '-'): CATEGORY<TAB>NAME\n"
           "  --rules NAME|FILE  the profile --classify uses (default: default)\n"
           "  -h, --help         this help\n"
           "\n"
           "A rules file:\n"
           "  [rules]\n"
           "  base = default                 ; or reference\n"
           "  [category communication]       ; extend a category of the base\n"
           "  strong = hcom_, oneccl         ; keywords (lowered substrings)\n"
           "  weak = dispatch                ; only when the name is not compute-like\n"
           "  regex = ^my_ar_[0-9]+$         ; POSIX extended regex on the lowered name\n"
           "  replace = true                 ; drop the base's keywords first\n"
           "  [category attention]           ; a new category\n"
           "  kind = compute                 ; what it behaves as\n"
           "  strong = fmha, flash_attn, sage_fwd\n"
           "  [order]\n"
           "  steps = memory, communication, attention, compute, elementwise, memory:weak, communication:weak\n"
           "  [match]                        ; kerndiff diff --match-rule, as data\n"
           "  aiter::fmha_fwd* = sage_fwd\n"
           "\n"
           "Exit status: 0 ok; 2 bad usage or a bad rules file (one line: FILE:LINE: what).\n");
}

static int classify_one(const kd_rules *r, const char *name)
{
    printf("%s\t%s\n", kd_rules_category_name(r, kd_rules_classify(r, name)), name);
    return 0;
}

static int classify_stdin(const kd_rules *r)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        classify_one(r, line);
    }
    free(line);
    return ferror(stdin) ? kd_cli_error("standard input: read error") : KD_EXIT_OK;
}

int kd_cmd_rules(int argc, char **argv)
{
    static const struct option opts[] = {
        {"list", no_argument, NULL, 'l'},     {"show", required_argument, NULL, 's'},
        {"classify", no_argument, NULL, 'c'}, {"rules", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
    };
    const char *show = NULL, *spec = "default";
    bool list = false, classify = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': list = true; break;
        case 's': show = optarg; break;
        case 'c': classify = true; break;
        case 'r': spec = optarg; break;
        case 'h': rules_help(); return KD_EXIT_OK;
        default: return kd_cli_bad_option("rules", opts, c, argv[optind - 1]);
        }
    }
    if (list + (show != NULL) + classify != 1)
        return kd_cli_usage_error("rules", "give one of --list, --show NAME|FILE or --classify");
    if (!classify && optind != argc)
        return kd_cli_usage_error("rules", "unexpected operand '%s'", argv[optind]);
    if (list) {
        printf("default\tcurrent CUDA and ROCm stacks (docs/taxonomy.md)\n"
               "reference\tthe reference's tables, exactly (conformance)\n");
        return ferror(stdout) ? kd_cli_error("standard output: write error") : KD_EXIT_OK;
    }
    if (classify && optind == argc)
        return kd_cli_usage_error("rules", "--classify needs KERNEL names, or '-' to read them from standard input");
    const kd_rules *r;
    kd_rules_owned *owned;
    if (!kd_cli_rules(show ? show : spec, &r, &owned))
        return KD_EXIT_ERROR;
    int rc = KD_EXIT_OK;
    if (show) {
        rc = kd_rules_write_ini(r, stdout) ? KD_EXIT_OK : kd_cli_error("standard output: write error");
    } else {
        for (int i = optind; i < argc && !rc; i++)
            rc = strcmp(argv[i], "-") == 0 ? classify_stdin(r) : classify_one(r, argv[i]);
        if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
            rc = kd_cli_error("standard output: write error");
    }
    kd_rules_owned_free(owned);
    return rc;
}
