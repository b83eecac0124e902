/* hw.h: one GPU's figures for the cost model (models/hw/NAME.yaml).
 *
 * Contract: hw_load validates one hardware file into a caller-owned value, in SI units
 * (bytes/s, FLOP/s, seconds). Efficiencies are optional in the file (a measured file from
 * build/tpsim-probe carries hbm_efficiency); absent ones are < 0, for the scenario to set.
 * The file's `source:` sources its numbers except those its `assumed:` list names (decl.h).
 * Identity: the GPU's canonical id is the file's name without folder and extension
 * (models/hw/h100-sxm.yaml: h100-sxm); `name:` and the optional `aliases:` list (the device
 * names nvidia-smi and nccl-tests print, "NVIDIA H100 80GB HBM3") name the same GPU.
 * hw_same says whether a name another file states (a calibration's `hardware:`) is this
 * GPU: equal to the id, the name or an alias, ignoring case and anything not a letter or
 * digit ("H100 SXM" = "h100-sxm").
 */
#ifndef TPSIM_HW_H
#define TPSIM_HW_H

#include <stddef.h>

#include "decl.h"
#include "err.h"

#define HW_MAX_ALIASES 8

typedef struct hw_spec {
    char name[64];
    long sms;
    double hbm_bytes;         /* capacity as the GPU reports it (hbm_bytes:), else hbm_gb x 1e9 */
    int hbm_reported;         /* 1 when hbm_bytes came from the file's hbm_bytes: key */
    double hbm_bw;            /* bytes/s, nominal */
    double peak_flops;        /* BF16 dense FLOP/s */
    double fp8_peak_flops;    /* FP8 dense FLOP/s, 0 if the GPU has no FP8 tensor cores */
    double pcie_bw;           /* bytes/s, one direction */
    double kernel_fixed_s;    /* GPU time every kernel pays */
    double launch_latency_s;  /* enqueue on an idle stream -> start */
    double hbm_efficiency;    /* (0,1], or -1 if the file does not say */
    double flops_efficiency;  /* (0,1], or -1 */
    int compute_capability;   /* CUDA compute capability x 10 (9.0: 90); 0 when the file has
                                 no compute_capability: key (vLLM's all-reduce limits need it) */
    char id[64];              /* canonical id: the file's name, "h100-sxm" */
    char aliases[HW_MAX_ALIASES][64];
    int n_aliases;
    decl_list assumed;        /* the file's assumed: numbers (decl.h) */
} hw_spec;

int hw_load(const char *path, hw_spec *out, tp_err *err);
/* 1 when `name` names this GPU (its id, name or an alias), else 0. */
int hw_same(const hw_spec *h, const char *name);
/* 1 when two names are the same after folding case and dropping all but letters and digits. */
int hw_name_eq(const char *a, const char *b);
/* The models/hw file a GPU name names, into path[cap] (read into *out when out is not NULL):
 * a path or a file name locate finds (locate.h); else the file (in the current folder,
 * $TPSIM_PATH and the share folder) that hw_same says the name is; else the one file whose id
 * begins with the name ("h100": h100-sxm). 0, or -1 with one line naming every id there is. */
int hw_resolve(const char *name, char *path, size_t cap, hw_spec *out, tp_err *err);
/* The files KIND/NAME.yaml (KIND "models/kernels", "models/allreduce"; looked for in the
 * current folder, $TPSIM_PATH and the share folder, in name order) whose top-level hardware:
 * names h (hw_same): the calibrations measured on this GPU, into paths[0..max); how many. */
#define HW_PATH_MAX 1024
int hw_measured_files(const hw_spec *h, const char *kind, char (*paths)[HW_PATH_MAX], int max);
/* "H100 SXM (h100-sxm, NVIDIA H100 80GB HBM3, ...)": every name it answers to. */
void hw_names(const hw_spec *h, char *out, size_t cap);

#endif
