/* cmd.h: the tpsim subcommands, and the scenario flags they share.
 *
 * Contract: each tpsim_cmd_X(argc, argv) takes argv[0] == "X" and returns the process exit
 * status: 0 on success, 2 on bad input with exactly one line on stderr and nothing on
 * stdout or in any output file. cmd_scn_flag consumes --set, --calib and --mode;
 * scn_opts_load (scnopt.h) applies them.
 */
#ifndef TPSIM_CMD_H
#define TPSIM_CMD_H

#include "err.h"
#include "scnopt.h"

/* 1 if argv[*i] was one of the shared flags (consumed), 0 if not, -1 on error. */
int cmd_scn_flag(scn_opts *o, int argc, char **argv, int *i, tp_err *err);
/* Writes `key: {host, compute, allreduce, wait_peers, gpu_idle, offset}` in ms. */
struct jw;
struct run_breakdown;
void cmd_json_breakdown(struct jw *w, const char *key, const struct run_breakdown *b);
/* Prints "tpsim: MESSAGE" to stderr and returns 2. */
int cmd_fail(const tp_err *err);

int tpsim_cmd_run(int argc, char **argv);
int tpsim_cmd_fit_allreduce(int argc, char **argv);
int tpsim_cmd_validate(int argc, char **argv);
int tpsim_cmd_sweep(int argc, char **argv);

#endif
