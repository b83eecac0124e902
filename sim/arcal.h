/* arcal.h: all-reduce cost calibrations (models/allreduce/NAME.yaml, or written by
 * `tpsim fit-allreduce -o`).
 *
 * Contract: one file calibrates one (hardware, k). `fit: linear` is the study's Equation 1,
 * t(b) = lambda + 2(k-1)/k * b / beta. `fit: piecewise` carries pieces, each applying from
 * its from_bytes up to the next piece's, with its own lambda and beta (protocol changes).
 * A piecewise file may also carry the linear lambda_us/beta_gbps for comparison. Optional
 * blocks feed the other collective models (sim/coll.h), each with its own source:
 *   graph:  {lambda_us}   nccl-fit's lambda when the all-reduce is replayed from a CUDA graph
 *   tuner:  {nccl_version, algorithms, channels, bw_per_channel_gbps, nvls_busbw_gbps,
 *            launch_us, graph_launch_us}   nccl-tuner's inputs (sim/nccltune.h)
 *   custom: {vllm, one_stage: {latency_us, gbps}, two_stage: {...}, symm_mem: {...},
 *            eager_dispatch_us, symm_mem_eager_dispatch_us}   vLLM's custom all-reduce
 *            kernel, t = latency + b / bandwidth per stage; symm_mem the torch
 *            symmetric-memory all-reduce vLLM runs between the custom cap and its own (copies
 *            in and out included); eager_dispatch_us the measured eager-minus-graph time of
 *            one call on the custom path (symm_mem_...: on the symm-mem path): HOST work per
 *            call, reported, never added to GPU time
 * `hardware:` and `tp:` say what was measured: a scenario on other hardware must borrow it
 * explicitly (scenario.h). Values are caller-owned; times in seconds, bandwidths in bytes/s.
 */
#ifndef TPSIM_ARCAL_H
#define TPSIM_ARCAL_H

#include "decl.h"
#include "err.h"
#include "fprint.h"

#define ARCAL_MAX_PIECES 8

typedef struct arcal_piece {
    double from_bytes;
    double lambda_s;
    double beta; /* bytes/s */
} arcal_piece;

/* t(b) = latency + b / bw, for one kernel variant; valid = 0 when the file has none. */
typedef struct arcal_line {
    int valid;
    double latency_s, bw;
} arcal_line;

typedef struct arcal_tuner {
    int valid;
    char nccl_version[16];
    unsigned algos;              /* NT_ALGO_BIT set */
    double channels, bw_per_channel_gbps, nvls_busbw_gbps;
    double launch_s;             /* per call, outside NCCL's model (eager) */
    double graph_launch_s;       /* the same under a CUDA graph; < 0: not measured */
} arcal_tuner;

typedef struct arcal {
    char path[256];
    char named_at[320];          /* where it was named (scenario file:line:col, or the path) */
    char hardware[64];
    long tp;
    int piecewise;      /* which fit t() uses */
    int has_linear;     /* lambda_s/beta valid */
    double lambda_s, beta;
    int n_pieces;
    arcal_piece pieces[ARCAL_MAX_PIECES];
    double min_bytes, max_bytes; /* the fit's range, 0 if the file does not say */
    int has_graph_lambda;        /* graph.lambda_us given */
    double graph_lambda_s;
    arcal_tuner tuner;
    char custom_vllm[48];        /* the vLLM version whose kernel was measured */
    arcal_line custom[3];        /* [0] one-stage, [1] two-stage, [2] torch symm-mem */
    double eager_dispatch_s;     /* host time per eager call, custom path; < 0: none */
    double symm_eager_dispatch_s; /* the same on the symm-mem path; < 0: none */
    decl_list assumed; /* the file's assumed: numbers (decl.h); its source: sources the rest */
    fp_check fp;       /* its fingerprint (fprint.h): FP_NONE for a hand-written file */
    char fp_why[200];  /* "" unless its numbers differ from those fit-allreduce wrote: then
                          every number of the file is assumed, not sourced */
} arcal;

int arcal_load(const char *path, arcal *out, tp_err *err);
/* The same with one number overridden ("lambda_us=25"): validate's sensitivity to a number
 * the file's fingerprint no longer vouches for. */
int arcal_load_set(const char *path, const char *assignment, arcal *out, tp_err *err);
/* All-reduce of b bytes over the calibration's k ranks. */
double arcal_allreduce_time(const arcal *c, double bytes);
/* The latency term of that time (the fit's lambda, or its piece's). */
double arcal_allreduce_lambda(const arcal *c, double bytes);
/* All-gather producing b bytes in total: a ring moves (k-1)/k of it, half an all-reduce. */
double arcal_allgather_time(const arcal *c, double bytes);

#endif
