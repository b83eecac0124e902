/* cmd.h: the tpsim subcommands, and the scenario flags they share.
 *
 * Contract: each tpsim_cmd_X(argc, argv) takes argv[0] == "X" and returns the process exit
 * status: 0 on success (run: 1 when it ran but the cell does not fit in HBM), 2 on bad input
 * with exactly one line on stderr and nothing on stdout or in any output file. Flags go
 * through the flag layer (cli.h); CMD_SCN_FLAGS are the scenario flags of run and validate
 * (sweep lists --set, --calib and --measured itself: its --mode takes a list),
 * cmd_scn_flag records them and scn_opts_load (scnopt.h) applies them. `tpsim help CMD` is
 * `tpsim CMD --help`.
 */
#ifndef TPSIM_CMD_H
#define TPSIM_CMD_H

#include "err.h"
#include "scnopt.h"

/* Entries of a command's flag table (cli.h): --set, --calib, --mode, --measured,
 * --allow-foreign-calib. */
#define CMD_SCN_FLAGS                                                                          \
    CMD_SET_FLAG, CMD_MODEL_FLAG, CMD_CALIB_FLAG, CMD_MODE_FLAG, CMD_MEASURED_FLAG,             \
        CMD_FOREIGN_FLAG
/* each on its own, for a command that lists them apart (sweep's --mode takes a list) */
#define CMD_SET_FLAG                                                                           \
    {"set", 0, 1, "KEY=VALUE", "set a scenario key (dotted: host.launch.mean_us=20); repeatable"}
#define CMD_MODEL_FLAG                                                                         \
    {"model", 0, 1, "FILE|NAME", "the model: a tpsim model file or a Hugging Face config.json\n" \
                                 "(from the current folder) or a models/ name;\n"               \
                                 "wins over --set model="}
#define CMD_CALIB_FLAG                                                                         \
    {"calib", 0, 1, "FILE", "an all-reduce calibration (a file or a models/allreduce/ name)\n"  \
                            "for its tp:, in place of the scenario's; repeatable"}
#define CMD_MODE_FLAG {"mode", 0, 1, "eager|graphs", "execution mode (default: the scenario's)"}
#define CMD_MEASURED_FLAG                                                                      \
    {"measured", 0, 1, "FILE", "a trace calibration (tpsim trace import -o) applied on top"}
#define CMD_FOREIGN_FLAG                                                                       \
    {"allow-foreign-calib", 0, 0, NULL,                                                        \
     "use a calibration measured on other hardware (the report\n"                             \
     "says FOREIGN)"}
/* 1 if the flag named `name` (without dashes) is one of them and value was recorded, 0 if it
 * is not one of them, -1 on a bad value. */
int cmd_scn_flag(scn_opts *o, const char *name, const char *value, tp_err *err);
/* Writes `key: {host, compute, allreduce, wait_peers, gpu_idle, offset}` in ms. */
struct jw;
struct run_breakdown;
void cmd_json_breakdown(struct jw *w, const char *key, const struct run_breakdown *b);
/* Prints the scenario's notes (a config.json key accepted though tpsim does not read it:
 * model_arch.note) as "tpsim: note: LINE" on stderr; nothing when there are none. */
struct scenario;
void cmd_notes(const struct scenario *s);
/* Prints "tpsim: MESSAGE" to stderr and returns 2. */
int cmd_fail(const tp_err *err);

int tpsim_cmd_run(int argc, char **argv);
int tpsim_cmd_fit_allreduce(int argc, char **argv);
int tpsim_cmd_fit_kernels(int argc, char **argv);
int tpsim_cmd_validate(int argc, char **argv);
int tpsim_cmd_sweep(int argc, char **argv);
/* sweep --fit's fitter (sweep_fit.c, on the validation core): fits the scenario at `path`
 * with so's flags on the grid at grid_path and appends each fitted KEY=VALUE to so->sets, the
 * strings kept in store (SCN_MAX_FIT * SCN_MAX_FIT_KEYS of them); `shown` gets one
 * "sweep: fitted KEY=VALUE" line each. 0, or -1 with err set. */
int cmd_sweep_fit(const char *path, scn_opts *so, const char *grid_path, char (*store)[192],
                  char *shown, size_t shown_cap, tp_err *err);
int tpsim_cmd_trace(int argc, char **argv);
int tpsim_cmd_serve(int argc, char **argv);
int tpsim_cmd_allreduce(int argc, char **argv);
int tpsim_cmd_merge(int argc, char **argv);
int tpsim_cmd_plan(int argc, char **argv);

#endif
