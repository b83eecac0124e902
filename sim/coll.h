/* coll.h: what one all-reduce costs on the GPU, by the collective model a scenario names
 * (collective.allreduce):
 *   nccl-fit     the calibration's lambda + 2(k-1)/k * b / beta (or its pieces); under a
 *                CUDA graph its graph.lambda_us when measured
 *   nccl-tuner   NCCL's own cost model (nccltune.h) on the calibration's channels and
 *                per-channel bandwidth: the minimum-time algorithm x protocol, plus the
 *                calibration's per-call overhead (launch_us eager, graph_launch_us graphs)
 *   vllm-custom  vLLM's custom all-reduce (custom_all_reduce.py @00d618aa, .cuh @c9eabec7):
 *                one-stage when k == 2, or k <= 4 and b < 512 KiB, or k <= 8 and b < 256 KiB,
 *                else two-stage; eager copies the input into the registered buffer first
 *                (its own op, copy_in); none under graphs; b >= 8 MiB (max_size) or b % 16
 *                goes to NCCL (the tuner when calibrated, else the fit)
 *   auto         what that vLLM picks with its defaults (VLLM_ALLREDUCE_USE_SYMM_MEM=1,
 *                bf16): custom all-reduce for k in {2,4,6,8} below min(8 MiB,
 *                CUSTOM_ALL_REDUCE_MAX_SIZES[GPU][k]) (the cap applies where torch symmetric
 *                memory exists, SM 9.0/10.0/10.3); then torch's symm-mem all-reduce (multimem,
 *                or two-shot at k 2) up to SYMM_MEM_ALL_REDUCE_MAX_SIZES[GPU][k] inclusive,
 *                priced by the calibration's custom symm_mem line (measured in vLLM); NCCL
 *                above (docs/sources.md#vllm-ar-dispatch).
 * Completion is the engine's: the latest arrival + total_s (both custom stages and NCCL
 * begin with a cross-rank barrier). Contract: coll_check once per (model, calibration),
 * then coll_allreduce is a pure function of (bytes, mode), cheap enough per op.
 */
#ifndef TPSIM_COLL_H
#define TPSIM_COLL_H

#include <stddef.h>

#include "arcal.h"
#include "err.h"

typedef enum coll_model {
    COLL_NCCL_FIT,
    COLL_NCCL_TUNER,
    COLL_VLLM_CUSTOM,
    COLL_AUTO,
    COLL_N
} coll_model;

/* The names, in enum order, NULL-terminated (for cfg_as_choice): coll_models[i].name. */
extern const char *const coll_model_names[];
/* The choices as help and error lines write them; test_coll checks it is the table's names. */
#define COLL_MODEL_CHOICES "nccl-fit, nccl-tuner, vllm-custom or auto"

typedef struct coll_setup {
    coll_model model;
    const arcal *cal; /* the calibration for k = cal->tp */
    int sm;           /* compute capability x 10 (90 = Hopper); 0 if unknown */
} coll_setup;

typedef struct coll_cost {
    const char *model;         /* what priced it: nccl-fit, nccl-tuner or vllm-custom */
    coll_model priced_by;      /* the same, as the table's index */
    const char *algo, *proto;  /* Ring/Tree/NVLS x LL/LL128/Simple; one-stage/two-stage, "-" */
    int copy_in;               /* an eager copy into the registered buffer precedes it */
    double latency_s, body_s;  /* fixed part, and the part that grows with bytes */
    double total_s;            /* latency + body: the collective op's GPU time */
    int eager_in_graph;        /* under a graph, but priced with eager figures (no graph data) */
} coll_cost;

/* The collective models, one row each, in enum order: a new model is a row here (and its enum
 * value and COLL_MODEL_CHOICES), nothing else. */
typedef struct coll_model_def {
    const char *name; /* collective.allreduce's value, --model's */
    const char *help; /* one line: what it prices and from what */
    /* 0 if the calibration carries what the model needs at its k; else -1 with one line */
    int (*check)(const coll_setup *s, tp_err *err);
    /* one all-reduce of `bytes`; a model may hand a call to another (auto, NCCL fallbacks) */
    coll_cost (*price)(const coll_setup *s, double bytes, int graphs);
    /* the kernel a real run shows for a call this model priced, into out[cap] (the trace's
     * name); elem_bytes is the all-reduced type's size */
    void (*kernel_name)(const coll_cost *c, long tp, double elem_bytes, char *out, size_t cap);
    int algo_known; /* the calls it prices name a real algorithm (not a fitted ring) */
} coll_model_def;
extern const coll_model_def coll_models[COLL_N];

/* Compute capability from a hardware name (H100/H200/H800/H20 90, B200/GB200 100, B300 103,
 * A100/A800 80), 0 if unknown. A guess from a display name: run_coll_setup takes the
 * hardware file's compute_capability key instead (hw.h); this is for callers with a name only. */
int coll_sm_of(const char *hardware);
/* 0 if the calibration carries what the model needs at its k; else -1 with one line. */
int coll_check(const coll_setup *s, tp_err *err);
coll_cost coll_allreduce(const coll_setup *s, double bytes, int graphs);

/* vLLM's rules on their own (bytes, k, sm): the custom all-reduce's size cap, whether it
 * runs one stage, the symm-mem all-reduce's cap (0: none at (k, sm)), and what runs. */
double coll_vllm_custom_max(long k, int sm, int with_symm_mem_cap);
int coll_vllm_one_stage(long k, double bytes);
double coll_vllm_symm_max(long k, int sm);

typedef enum coll_path {
    COLL_PATH_ONE_STAGE,
    COLL_PATH_TWO_STAGE,
    COLL_PATH_SYMM_MULTIMEM,
    COLL_PATH_SYMM_TWO_SHOT,
    COLL_PATH_NCCL
} coll_path;
/* What vLLM's CudaCommunicator.all_reduce runs for b bytes at k ranks on SM sm: custom
 * all-reduce, then (symm_mem: its symm-mem communicator on) torch symm-mem, then NCCL. */
coll_path coll_vllm_path(long k, int sm, double bytes, int symm_mem);

#endif
