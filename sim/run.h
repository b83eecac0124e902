/* run.h: simulate one grid cell (tp, batch, ctx) of a scenario and summarise it.
 *
 * Contract: run_cell builds the step program, applies the cost model, runs the engine and
 * fills a caller-owned run_summary (times in SECONDS). Step time of a step = mean over
 * ranks of that rank's step duration, plus the scenario's offset; the breakdown is the
 * per-step mean over measured steps and ranks, and compute + allreduce + wait_peers +
 * gpu_idle + offset equals the mean step time. Given a run_detail, the engine's result
 * (per-rank steps) and the program are handed to the caller to free with
 * run_release; with NULL, nothing is left allocated and the steps are folded as they end,
 * so memory does not grow with steps. Mean, min and max are exact; p50/p99 are exact up to
 * QSKETCH_EXACT measured steps and within QSKETCH_REL_ERR relative beyond (qsketch.h).
 */
#ifndef TPSIM_RUN_H
#define TPSIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "engine.h"
#include "qsketch.h"
#include "prog.h"
#include "scenario.h"

/* vLLM's memory figures: the activation/workspace reserve per GPU, from vLLM's memory profile
 * of a TP-2 instance on an 80 GB GPU (vllm-project/vllm PR #10511,
 * docs/sources.md#vllm-memory-profile): non-torch memory 3.58 GiB (CUDA context, NCCL and
 * custom all-reduce buffers) + PyTorch activation peak 1.26 GiB before the KV cache = 4.84 GiB.
 * That log is Llama-3-8B; for a 70B it is ASSUMED of the same order (the activation peak scales
 * with hidden size / TP). run's fit test is physical: weights + KV cache + that reserve within
 * the capacity the GPU reports (hw.h hbm_bytes), whatever gpu_memory_utilization a server sets;
 * plan sizes KV caches as vLLM does by default, RUN_MEM_UTIL of the capacity less the reserve
 * (--gpu-memory-utilization and --reserve-gib take their place). */
#define RUN_MEM_UTIL 0.90
#define RUN_RESERVE_GIB 4.84
#define RUN_RESERVE_BYTES (RUN_RESERVE_GIB * 1024.0 * 1024.0 * 1024.0)

/* Rewrites the costed program's GPU times before the engine runs it (serve's mixed steps:
 * attention and the logits priced for the step's own requests). 0, or -1 with err set. */
typedef int (*run_reprice_fn)(void *ctx, prog *p, tp_err *err);

typedef struct run_request {
    long tp, batch, ctx, steps, warmup;
    uint64_t seed;
    const engine_sink *trace; /* the timeline's sink, or NULL */
    /* serve's steps (zero for a decode step of batch sequences): */
    long seqs;                /* requests whose per-step host work runs; 0: batch */
    int eager;                /* launch op by op even where the scenario replays graphs */
    run_reprice_fn reprice;   /* NULL: the program as costed */
    void *reprice_ctx;
} run_request;
/* run_request's serve fields for a plain decode step, to end a positional initializer */
#define RUN_REQ_PLAIN 0, 0, NULL, NULL

typedef struct run_breakdown {
    double host, compute, allreduce, wait_peers, gpu_idle, offset;
    double step_work_idle; /* of gpu_idle: waiting out per-step host work (engine_step's) */
} run_breakdown;

typedef struct run_summary {
    run_request req;
    size_t ops_per_step, kernels_per_step, allreduces_per_step, collectives_per_step;
    size_t graph_launches_per_step; /* CUDA-graph launches (0 eager, 1 full, layers + 1
                                       piecewise) */
    size_t eager_launches_per_step; /* ops launched one by one (every op in eager mode) */
    double collective_dispatch_s;   /* mean host time per collective launch (host.collective, or
                                       the calibration's measured eager dispatch) */
    uint64_t events;
    engine_method method; /* the engine back end that ran */
    const char *method_why; /* why it ran (engine_result.method_why) */
    double step_mean, step_p50, step_p99, step_min, step_max;
    run_breakdown breakdown;
    cost_totals analytic; /* sum of op GPU times per step */
    double weight_bytes, kv_bytes; /* per rank */
    int fits_in_hbm;               /* weights + KV cache + RUN_RESERVE_BYTES within the
                                    * capacity the GPU reports */
    const arcal *calibration;      /* the all-reduce calibration used (NULL at k = 1) */
    const char *calibration_borrowed; /* NULL, "calibration_from" or "--allow-foreign-calib" */
    coll_cost allreduce_call;      /* one layer all-reduce (batch x hidden) at this cell */
    const kcal *kernels;           /* the kernel calibration that priced the GPU ops, or NULL */
    const char *kernels_borrowed;  /* NULL, "calibration_from" or "--allow-foreign-calib" */
} run_summary;

/* What limits a step, from its breakdown (one rule for run's verdict and plan's bound column):
 * the largest of the times that lie on the step's critical path. The GPU's idle time splits,
 * as the engine measured it, into waiting out the per-step host work (breakdown.step_work_idle:
 * the driver, the broadcast wait, the host phases, host.step) and the rest, waiting on
 * launches. The candidates: the stream's busy time (compute + all-reduce, GPU or ALLREDUCE by
 * the larger), counted only while it is on the critical path (the host is busy under 95% of the
 * step less its offset, or the GPU idles at most 5% of it); the launch wait (HOST); the step
 * work's idle (STEP_WORK); the wait for peers (STRAGGLER). Ties go to the earlier one. */
typedef enum run_bound {
    RUN_BOUND_GPU, RUN_BOUND_ALLREDUCE, RUN_BOUND_HOST, RUN_BOUND_STEP_WORK, RUN_BOUND_STRAGGLER
} run_bound;
run_bound run_bound_of(const run_summary *r);
/* "GPU-bound", "all-reduce-bound", "host-bound", "step-work-bound", "straggler-bound" */
const char *run_bound_name(run_bound b);
/* The GPU's idle per step split: waiting out the per-step host work, and the rest (waiting on
 * launches); both >= 0 and summing to the idle (0 when the idle is not positive). */
void run_idle_split(const run_summary *r, double *step_work_s, double *launch_wait_s);

typedef struct run_detail {
    prog program;
    engine_result result;
} run_detail;

/* The request with the scenario's defaults for any field < 0. */
run_request run_defaults(const scenario *s, run_request partial);
int run_cell(const scenario *s, const run_request *req, run_summary *out, run_detail *detail,
             tp_err *err);
/* run_cell on a chosen engine back end (run_cell uses ENGINE_AUTO): for tests and bench. */
int run_cell_on(const scenario *s, const run_request *req, engine_method method, run_summary *out,
                run_detail *detail, tp_err *err);
/* run_cell with a progress line for long runs: `progress` (a label, NULL for none; the caller
 * decides it is wanted, e.g. stderr is a terminal) shows "label: done/total steps  ETA Ns" on
 * stderr, from step 256 on at most every 0.25 s, and clears it at the end (a run of fewer steps
 * prints nothing). */
int run_cell_progress(const scenario *s, const run_request *req, run_summary *out,
                      const char *progress, tp_err *err);
void run_release(run_detail *detail);
/* The host cost of one collective launch at the summary's cell (tp, batch, calibration and
 * allreduce_call filled): host.collective, or with host.collective: measured the calibration's
 * measured eager dispatch per call (custom.eager_dispatch_us, or symm_mem_eager_dispatch_us
 * where `auto` runs torch's symm-mem all-reduce), less one launch where the copy into the
 * registered buffer is its own op (the measured call includes it). -1 with one line when the
 * calibration has none. */
int run_collective_dispatch(const scenario *s, const run_summary *r, dist *out, tp_err *err);
/* The cell's step program with every op's GPU time, as run_cell builds it (the request's
 * eager flag and reprice hook honoured), without running the engine. Caller frees with
 * prog_free; on error nothing is left allocated. */
int run_program_costed(const scenario *s, const run_request *req, prog *p, tp_err *err);
/* The time of one layer all-reduce (batch x hidden x dtype bytes) at the summary's cell. */
double run_allreduce_call_s(const scenario *s, const run_summary *r);
/* The collective model set-up for the scenario at its calibration for k. */
coll_setup run_coll_setup(const scenario *s, const arcal *cal);
/* Refuses a summary whose step is not positive (an offset larger than the step). */
int run_check_step(const scenario *s, const run_summary *r, tp_err *err);
/* Can this scenario run at tp (shards the model, has a calibration of its own hardware or
 * one it borrows, the collective model's inputs, its slow rank exists)? */
int run_check_tp(const scenario *s, long tp, tp_err *err);

#endif
