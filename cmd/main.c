/* main.c: the tpsim command line: dispatch to a subcommand through the command table below.
 * It lives in cmd/, the top layer (docs/DESIGN.md), with every command's entry point (cmd.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "coll.h"

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
    "  merge OUT PART...         join the parts of a sweep run with --shard I/N (--help)\n"
    "  plan SCENARIO --gpus N --tpot-ms T [...]  which hardware, TP degree, mode and batch\n"
    "                            meet a per-token latency target at the most tokens/s per GPU\n"
    "  fit-allreduce FILE [...]  fit t = lambda + 2(k-1)/k b/beta to an all-reduce sweep\n"
    "                            (all_reduce_perf stdout or tpsim-nccl-sweep CSV)\n"
    "  trace import|compare ...  read profiler traces (Kineto JSON, Nsight SQLite): steps,\n"
    "                            launch costs, a calibration; compare with tpsim's --trace\n"
    "  allreduce --tp K [...]    one all-reduce by size under a collective model\n"
    "                            (" COLL_MODEL_CHOICES "), against a log with --log\n"
    "  help COMMAND [SUB]        that command's help (same as tpsim COMMAND [SUB] --help)\n"
    "  --help, --version\n"
    "\n"
    "Flags take --name value or --name=value; -- ends the flags; -o - writes to stdout.\n"
    "A SCENARIO, --calib or --grid may be a file or a name (scenarios/NAME.yaml,\n"
    "models/allreduce/NAME.yaml, validate/NAME.csv), looked for here, in $TPSIM_PATH and in\n"
    "the share folder (man tpsim).\n"
    "Exit status: 0 done, 1 ran but the configuration does not fit in HBM (run) or nothing\n"
    "meets the target (plan),\n"
    "2 bad input (one line on stderr).\n";

typedef struct tpsim_command {
    const char *name;
    int (*run)(int argc, char **argv);
} tpsim_command;

static const tpsim_command commands[] = {
    {"run", tpsim_cmd_run},
    {"validate", tpsim_cmd_validate},
    {"sweep", tpsim_cmd_sweep},
    {"merge", tpsim_cmd_merge},
    {"plan", tpsim_cmd_plan},
    {"fit-allreduce", tpsim_cmd_fit_allreduce},
    {"fit-kernels", tpsim_cmd_fit_kernels},
    {"trace", tpsim_cmd_trace},
    {"allreduce", tpsim_cmd_allreduce},
};

static const tpsim_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static int tpsim_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc == 3 && !strcmp(argv[2], "--list")) {
        /* the command table, one name a line: scripts/gen-man.sh builds the man page's usage
         * section from it, so a new command is in the manual without anyone listing it */
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) puts(commands[i].name);
        return 0;
    }
    if (!strcmp(cmd, "help") && argc > 2) { /* tpsim help CMD [SUB] == tpsim CMD [SUB] --help */
        const tpsim_command *c = find_command(argv[2]);
        /* the commands that take a subcommand word (tpsim trace import|compare) */
        int sub = c && !strcmp(c->name, "trace");
        if (!c || argc > 3 + sub) {
            fprintf(stderr, "tpsim: help: %s '%s' (see tpsim --help)\n",
                    !c    ? "unknown command"
                    : sub ? "COMMAND [SUBCOMMAND], got also"
                          : "one COMMAND, got also",
                    argv[c ? 3 + sub : 2]);
            return 2;
        }
        char *help_argv[] = {argv[2], argc > 3 ? argv[3] : "--help", "--help", NULL};
        return c->run(argc > 3 ? 3 : 2, help_argv);
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("tpsim %s\n", TPSIM_VERSION);
        return 0;
    }
    const tpsim_command *c = find_command(cmd);
    if (c) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "tpsim: unknown command '%s' (see tpsim --help)\n", cmd);
    return 2;
}

/* A report that did not reach stdout (a full disk, /dev/full, a closed pipe) is a failure,
 * not a silent success: checked once, here, for every command. */
int main(int argc, char **argv)
{
    int status = tpsim_main(argc, argv);
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) bad = 1, e = errno;
    if (bad && status != 2) { /* a refused command has said why already; status 1 (ran, but
                                 * nothing fits / meets) still had a report to deliver */
        fprintf(stderr, "tpsim: cannot write to stdout%s%s\n", e ? ": " : "", e ? strerror(e) : "");
        return 2;
    }
    return status;
}
