/* main.c: the tpsim command line: dispatch to a subcommand through the command table below.
 * It lives in cmd/, the top layer (docs/DESIGN.md), with every command's entry point (cmd.h). */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "coll.h"
#include "locate.h"

#define TPSIM_VERSION "0.1.0"

typedef struct tpsim_command {
    const char *name, *args; /* as the usage line writes them */
    const char *about;       /* what it does, lines of at most 62 columns */
    int (*run)(int argc, char **argv);
} tpsim_command;

/* The commands: the usage below, `help --list` (the man page) and dispatch all read this. */
static const tpsim_command commands[] = {
    {"run", "SCENARIO [...]",
     "simulate decode steps of one (tp, batch, ctx) cell and explain\nthe step time",
     tpsim_cmd_run},
    {"validate", "SCENARIO [...]",
     "fit the scenario's declared parameters on its declared cells,\npredict a measured grid, "
     "apply the kill-switch",
     tpsim_cmd_validate},
    {"serve", "SCENARIO --concurrency N|--rate R [...]",
     "one vLLM replica serving requests: TTFT, TPOT, ITL, E2E\nand throughput under a load, "
     "step by step",
     tpsim_cmd_serve},
    {"sweep", "SCENARIO [...]", "what-if grid over tp, batch, ctx, mode to CSV", tpsim_cmd_sweep},
    {"merge", "OUT PART...", "join the parts of a sweep run with --shard I/N", tpsim_cmd_merge},
    {"plan", "SCENARIO --gpus N --tpot-ms T [...]",
     "which hardware, TP degree, mode and batch meet a per-token\nlatency target at the most "
     "tokens/s per GPU",
     tpsim_cmd_plan},
    {"fit-allreduce", "FILE [...]",
     "fit t = lambda + 2(k-1)/k b/beta to an all-reduce sweep\n(all_reduce_perf stdout, "
     "tpsim-nccl-sweep CSV, AIConfigurator)",
     tpsim_cmd_fit_allreduce},
    {"fit-kernels", "PROFILE... [...]",
     "fit kernel cost laws to per-operator profiles (Vidur,\nAIConfigurator, tpsim-probe, "
     "traces) into a kernel calibration",
     tpsim_cmd_fit_kernels},
    {"trace", "import|compare ...",
     "read profiler traces (Kineto JSON, Nsight SQLite): steps,\nlaunch costs, a calibration; "
     "compare with tpsim's --trace",
     tpsim_cmd_trace},
    {"allreduce", "--tp K [...]",
     "one all-reduce by size under a collective model\n(" COLL_MODEL_CHOICES
     "), against a log with --log",
     tpsim_cmd_allreduce},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* "  NAME ARGS" in 28 columns (alone on its line when longer), then the lines of about */
static void usage_command(FILE *f, const char *name, const char *args, const char *about)
{
    char head[96];
    int w = snprintf(head, sizeof head, "  %s %s", name, args);
    if (w > 27) fprintf(f, "%s\n%28s", head, "");
    else fprintf(f, "%-28s", head);
    for (const char *p = about; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        if (*p) fprintf(f, "%28s", ""), p++;
    }
}

static void usage(FILE *f)
{
    fputs("tpsim " TPSIM_VERSION ": how long does one tensor-parallel decode step take, and "
          "why?\n\nusage: tpsim COMMAND [ARGS]   (tpsim COMMAND --help: its flags)\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        usage_command(f, commands[i].name, commands[i].args, commands[i].about);
    usage_command(f, "help", "COMMAND [SUB]",
                  "that command's help (same as tpsim COMMAND [SUB] --help)");
    usage_command(f, "version", "", "the version (also -V, --version)");
    fputs("  --help, -h\n"
          "\n"
          "Flags take --name value or --name=value; -- ends the flags; -o - writes to stdout.\n"
          "A SCENARIO, --calib or --grid may be a file or a name (scenarios/NAME.yaml,\n"
          "models/allreduce/NAME.yaml, validate/NAME.csv), looked for here, in $TPSIM_PATH and "
          "in\nthe share folder (man tpsim).\n"
          "Exit status: 0 done, 1 ran but the configuration does not fit in HBM (run) or "
          "nothing\nmeets the target (plan), 2 bad input (one line on stderr).\n",
          f);
}

static const tpsim_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

/* "unknown command 'X'" with the closest command's name, if one is close */
static int unknown_command(const char *what, const char *name)
{
    const char *names[N_COMMANDS + 2];
    for (size_t i = 0; i < N_COMMANDS; i++) names[i] = commands[i].name;
    names[N_COMMANDS] = "help", names[N_COMMANDS + 1] = "version";
    int best = locate_closest(name, names, (int)N_COMMANDS + 2);
    fprintf(stderr, "tpsim: %sunknown command '%s'%s%s%s (see tpsim --help)\n", what, name,
            best >= 0 ? "; did you mean " : "", best >= 0 ? names[best] : "",
            best >= 0 ? "?" : "");
    return 2;
}

static int tpsim_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc == 3 && !strcmp(argv[2], "--list")) {
        /* the command table, one name a line: scripts/gen-man.sh builds the man page's usage
         * section from it, so a new command is in the manual without anyone listing it */
        for (size_t i = 0; i < N_COMMANDS; i++) puts(commands[i].name);
        return 0;
    }
    if (!strcmp(cmd, "help") && argc == 3 && !strcmp(argv[2], "help")) {
        usage(stdout); /* help on help: what help does is in the usage */
        return 0;
    }
    if (!strcmp(cmd, "help") && argc > 2) { /* tpsim help CMD [SUB] == tpsim CMD [SUB] --help */
        const tpsim_command *c = find_command(argv[2]);
        /* the commands that take a subcommand word (tpsim trace import|compare) */
        int sub = c && !strcmp(c->name, "trace");
        if (!c) return unknown_command("help: ", argv[2]);
        if (argc > 3 + sub) {
            fprintf(stderr, "tpsim: help: %s '%s' (see tpsim --help)\n",
                    sub ? "COMMAND [SUBCOMMAND], got also" : "one COMMAND, got also",
                    argv[3 + sub]);
            return 2;
        }
        char *help_argv[] = {argv[2], argc > 3 ? argv[3] : "--help", "--help", NULL};
        return c->run(argc > 3 ? 3 : 2, help_argv);
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        if (argc > 2) {
            fprintf(stderr, "tpsim: %s takes no arguments, got '%s'\n", cmd, argv[2]);
            return 2;
        }
        printf("tpsim %s\n", TPSIM_VERSION);
        return 0;
    }
    const tpsim_command *c = find_command(cmd);
    if (c) return c->run(argc - 1, argv + 1);
    return unknown_command("", cmd);
}

/* A report that did not reach stdout (a full disk, /dev/full, a closed pipe) is a failure,
 * not a silent success: checked once, here, for every command. */
int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* validate's and plan's worker threads bind a ~100 KB scenario per parameter point and free
     * it; glibc hands each freed top of a thread's heap back to the kernel (madvise) past 128 KB,
     * which tripled the system time of a validation. Keep up to 256 MiB instead. */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
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
