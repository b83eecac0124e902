/* plan_serve.h: `tpsim plan --workload`: the deployment search on serving, not on one step.
 *
 * Contract: plan_serve runs one serving simulation (serve.h, servecost.h) per scenario
 * (hardware x mode, as plan loads them) x TP degree x max_num_seqs candidate, on par_map's
 * threads, and prints the ranking in o->format (text or csv; json refused). The workload is the
 * whole deployment's: o->gpus / tp replicas share it evenly (each gets ceil(C / replicas)
 * clients, or R / replicas requests per second). max_num_seqs candidates: 8, 16, 32, ... below
 * a replica's clients, and the clients themselves (at a rate: 16, 64, 256 and vLLM's default).
 * A row meets the targets when its mean TPOT <= o->tpot_ms and, with o->ttft_ms, its mean
 * TTFT <= o->ttft_ms; rows are ranked by output tokens/s per GPU, those meeting first. A
 * configuration that cannot hold the workload (no KV room, a request larger than the cache) is
 * a row saying why. Returns the exit status: 0 when a row meets the targets, 1 when none does,
 * 2 with err set.
 */
#ifndef TPSIM_PLAN_SERVE_H
#define TPSIM_PLAN_SERVE_H

#include "err.h"
#include "plan_flags.h"
#include "scenario.h"

int plan_serve(const pflags_opts *o, const scenario *scn, int n_scn, tp_err *err);

#endif
