/* cost.h: the GPU cost model, applied to a step program.
 *
 * Contract: cost_apply sets every op's gpu_s:
 *   kernel      max(bytes / (hbm_bw * hbm_eff), flops / (peak * flops_eff)) + kernel_fixed,
 *               peak the FP8 one for ops marked fp8 (fp8_peak_flops; 0: the BF16 peak)
 *   copy        bytes / pcie_bw + kernel_fixed
 *   all-reduce  coll_allreduce(the scenario's collective model, b, mode).total_s (coll.h)
 *   all-gather  the calibration's NCCL ring: lambda + (k-1)/k * b / beta
 * plus, when graph_node_s > 0 (CUDA-graph replay), that per-node overhead on every
 * graphable op.
 * With a kernel calibration (kernels != NULL), every kernel and copy instead costs its class's
 * law (kcal.h) at its bytes, FLOPs and the step's batch; an FP8 op's FLOPs count at the FP8
 * peak's rate (scaled by peak / fp8_peak: the calibration measured BF16 kernels), unless the
 * calibration has a gemm_fp8 class (measured FP8 GEMMs), which then prices them. An op with
 * a shape (prog.shape) whose class has a measured grid reads the grid (kcal_time). An op kind
 * with no class is an error naming it. Applied once, when the program is built; ops equal in
 * every field it reads (a layer's ops, repeated 80 times) are priced once, the same bits.
 * The calibration must be for the program's k (or NULL when k == 1).
 */
#ifndef TPSIM_COST_H
#define TPSIM_COST_H

#include "arcal.h"
#include "coll.h"
#include "err.h"
#include "hw.h"
#include "kcal.h"
#include "prog.h"

typedef struct cost_params {
    double hbm_bw, hbm_eff;
    double peak_flops, flops_eff;
    double pcie_bw;
    double kernel_fixed_s;
    double graph_node_s;
    int graphs;            /* the step is replayed from a CUDA graph */
    coll_setup allreduce;  /* model and calibration (cal NULL when k == 1) */
    double fp8_peak_flops; /* FLOP/s of the FP8 tensor cores, 0 where the GPU has none */
    const kcal *kernels;   /* a kernel calibration: every non-collective op from its law */
    int kernel_err_sign;   /* -1/+1: each class's time times (1 -/+ its error), 0: as fitted */
} cost_params;

typedef struct cost_totals {
    double compute_s;    /* kernels and copies */
    double collective_s; /* all-reduces and all-gathers */
} cost_totals;

int cost_apply(prog *p, const cost_params *c, cost_totals *totals, tp_err *err);

#endif
