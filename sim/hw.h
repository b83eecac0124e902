/* hw.h: one GPU's figures for the cost model (models/hw/NAME.yaml).
 *
 * Contract: hw_load validates one hardware file into a caller-owned value, in SI units
 * (bytes/s, FLOP/s, seconds). Efficiencies are optional in the file (a measured file from
 * build/tpsim-probe carries hbm_efficiency); absent ones are < 0, for the scenario to set.
 */
#ifndef TPSIM_HW_H
#define TPSIM_HW_H

#include "err.h"

typedef struct hw_spec {
    char name[64];
    long sms;
    double hbm_bytes;         /* capacity */
    double hbm_bw;            /* bytes/s, nominal */
    double peak_flops;        /* BF16 dense FLOP/s */
    double fp8_peak_flops;    /* FP8 dense FLOP/s, 0 if the GPU has no FP8 tensor cores */
    double pcie_bw;           /* bytes/s, one direction */
    double kernel_fixed_s;    /* GPU time every kernel pays */
    double launch_latency_s;  /* enqueue on an idle stream -> start */
    double hbm_efficiency;    /* (0,1], or -1 if the file does not say */
    double flops_efficiency;  /* (0,1], or -1 */
} hw_spec;

int hw_load(const char *path, hw_spec *out, tp_err *err);

#endif
