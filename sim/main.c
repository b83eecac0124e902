/* main.c: the tpsim command line: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

#define TPSIM_VERSION "0.1.0"

static const char usage[] =
    "tpsim " TPSIM_VERSION ": how long does one tensor-parallel decode step take, and why?\n"
    "\n"
    "usage: tpsim COMMAND [ARGS]\n"
    "  run SCENARIO [...]        simulate decode steps of one (tp, batch, ctx) cell and explain\n"
    "                            the step time (tpsim run --help)\n"
    "  validate SCENARIO [...]   fit the scenario's declared parameters on its declared cells,\n"
    "                            predict a measured grid, apply the kill-switch (--help)\n"
    "  sweep SCENARIO [...]      what-if grid over tp, batch, ctx, mode to CSV (--help)\n"
    "  fit-allreduce FILE [...]  fit t = lambda + 2(k-1)/k b/beta to an all-reduce sweep\n"
    "                            (all_reduce_perf stdout or tpsim-nccl-sweep CSV)\n"
    "  --help, --version\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("tpsim %s\n", TPSIM_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "run")) return tpsim_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "validate")) return tpsim_cmd_validate(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return tpsim_cmd_sweep(argc - 1, argv + 1);
    if (!strcmp(cmd, "fit-allreduce")) return tpsim_cmd_fit_allreduce(argc - 1, argv + 1);
    fprintf(stderr, "tpsim: unknown command '%s' (see tpsim --help)\n", cmd);
    return 2;
}
