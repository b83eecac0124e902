/* araic.h: NVIDIA AIConfigurator's all-reduce table (the layout of
 * ../shared/data/aiconfigurator/allreduce-h100-h200-sxm.csv) read strictly, and vLLM's
 * all-reduce lines fitted from it (`tpsim fit-allreduce FILE --aic GPU ...`).
 *
 * Layout: `#` lines, then a header row naming at least the columns of ARAIC_COLUMNS (any order;
 * others are ignored), then one row per measurement. Every row is checked, selected or not:
 * its field count is the header's; table custom_allreduce_perf or nccl_perf; dtype bfloat16,
 * half or int8; num_gpus a whole number >= 2; message_size_elems a whole number >= 1; bytes =
 * elems x 2 (bfloat16, half) or x 1 (int8), the unit check; latency_ms finite and > 0 (the
 * column is milliseconds: a header without latency_ms is refused). The selection is one GPU
 * (the gpu column), one TP degree (num_gpus), the vLLM rows of one dir_version (backends
 * vllm_graph and vllm_eager, bfloat16) and the NCCL rows of one dir_version (dtype half); in it
 * a size may appear once per backend, and each vllm_graph size needs its vllm_eager row.
 * Errors: one line "file:line: what, expected ...", -1; the caller exits 2.
 *
 * The fit: each size of the vllm_graph rows is assigned what vLLM runs there (coll_vllm_path,
 * the symm-mem communicator on as vLLM defaults, sm from the hardware); one line t = latency +
 * b / bw per path (one-stage, two-stage, symm-mem) by least squares on relative error (weights
 * 1/t^2) over its sizes, when it has ARFIT_MIN_POINTS or more. The eager dispatch of a path is
 * the mean of eager - graph over its sizes where the GPU time (graph) is at most half the eager
 * time, i.e. where the eager loop waits on the host: host work per call, not GPU time.
 */
#ifndef TPSIM_ARAIC_H
#define TPSIM_ARAIC_H

#include <stddef.h>
#include <stdio.h>

#include "arfit.h"
#include "err.h"

#define ARAIC_COLUMNS "table,gpu,dir_version,version,backend,dtype,num_gpus,message_size_elems," \
                      "bytes,latency_ms"

typedef struct araic_sel {
    const char *gpu;      /* the gpu column: h100_sxm, h200_sxm */
    const char *vllm_dir; /* dir_version of the vLLM rows, e.g. 0.19.0 */
    const char *nccl_dir; /* dir_version of the NCCL rows, e.g. 2.29.2 */
    int tp;               /* num_gpus */
} araic_sel;

typedef struct araic_point {
    double bytes, graph_us, eager_us;
    int line; /* of the vllm_graph row */
} araic_point;

typedef struct araic_table {
    arfit_sweep nccl;          /* the NCCL rows as a sweep (k = tp, format ARFIT_FORMAT_AIC) */
    araic_point *vllm;         /* the vLLM rows by size, ascending; owned */
    size_t n_vllm;
    int rows;                  /* data rows read (every row, selected or not) */
    char vllm_version[32];     /* the version column of the vLLM rows */
    char nccl_version[32];     /* the version column of the NCCL rows */
    char device[ARFIT_NAME_MAX]; /* the device column of the vLLM rows */
} araic_table;

typedef struct araic_line {
    int valid, n;              /* n: sizes fitted */
    double latency_us, gbps;   /* t = latency_us + bytes / (gbps * 1e3) us */
    double first_bytes, last_bytes, max_err_pct;
} araic_line;

typedef struct araic_fit {
    araic_line line[3];        /* one-stage, two-stage, symm-mem */
    double dispatch_us[2];     /* eager - graph: [0] custom path, [1] symm-mem; < 0: none */
    int dispatch_n[2];
} araic_fit;

int araic_read(const char *text, const char *file, const araic_sel *sel, araic_table *out,
               tp_err *err);
int araic_read_file(const char *path, const araic_sel *sel, araic_table *out, tp_err *err);
void araic_free(araic_table *t);

/* t = a + b/bw by least squares on relative error; 0, or -1 (no line: n < 2, a < 0, bw <= 0) */
int araic_fit_line(const double *bytes, const double *us, size_t n, araic_line *out);
/* The lines and dispatch costs at the table's k on SM sm (coll.h's rule); -1 with one line
 * when the one-stage line cannot be fitted. */
int araic_fit_lines(const araic_table *t, int sm, araic_fit *out, tp_err *err);
/* The calibration's custom: block for them, its source naming file and the selection. */
int araic_write_custom(FILE *f, const araic_table *t, const araic_fit *fit, const char *file,
                       const araic_sel *sel, int sm);

#endif
