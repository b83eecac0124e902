/* plan.h: the deployment search behind `tpsim plan`: every hardware x execution mode x TP
 * degree x context, every batch whose weights + KV cache fit, simulated and judged against
 * a per-token latency target.
 *
 * Contract: plan_search builds one configuration per (scenario, TP, ctx) in the order
 * scenario (hardware-major, then mode), TP, ctx, and gives each its KV-cache room per rank:
 *   kv_free = mem_util * HBM - weights - reserve,  max_batch = min(batch_max,
 *   floor(kv_free / kv_seq)),
 * with weights and kv_seq (one sequence of ctx tokens) the per-rank bytes of the step program
 * (prog.h). Its cells are batch 1..max_batch in that order; cell numbers run over every
 * configuration, and a shard (n_shards > 0) simulates only cells c with c % n_shards == shard.
 * Each simulated cell is one run_cell (run.h) on par_map's threads; rows are in cell order
 * and do not depend on the thread count. A row meets the target when its mean step is at
 * most target_s; tokens/s per GPU = batch / (step * tp), replicas = gpus / tp, total
 * tokens/s = replicas * batch / step. A configuration's pick is its row of largest tokens/s
 * per GPU meeting the target (the smaller batch on a tie), -1 when none does.
 * plan_rank orders the picks of one ctx (plan_cmp: more tokens/s per GPU first; on a tie the
 * lower step, then the smaller TP, then the configuration order); plan_pareto lists the rows
 * of one ctx that no other row of it beats on both step and tokens/s per GPU, by step.
 * The result is caller-owned; free with plan_free. Errors: one line in err, -1.
 */
#ifndef TPSIM_PLAN_H
#define TPSIM_PLAN_H

#include <stddef.h>

#include "run.h"
#include "scenario.h"

typedef struct plan_spec {
    const scenario *scn; /* n_scn scenarios: one per hardware x mode */
    int n_scn;
    const long *tps;
    size_t n_tp;
    const long *ctxs;
    size_t n_ctx;
    long batch_max;
    double mem_util;      /* vLLM's gpu_memory_utilization */
    double reserve_bytes; /* per GPU: activations, workspace, non-torch memory */
    long gpus;
    double target_s;
    run_request req; /* steps, warmup, seed: < 0 for the scenario's */
    int seed_given;
    long shard, n_shards; /* n_shards 0: every cell */
    int jobs;
    const char *progress; /* par_map's progress label, or NULL */
} plan_spec;

typedef struct plan_cfg {
    int scn; /* index into plan_spec.scn */
    long tp, ctx;
    double weight_bytes, kv_seq_bytes, kv_free_bytes; /* per rank */
    long max_batch;                                   /* 0: not even one sequence fits */
    size_t cell0;                                     /* its first cell number */
    size_t row0, n_rows;                              /* its simulated rows */
    long pick;                                        /* row index, or -1 */
} plan_cfg;

typedef struct plan_row {
    size_t cfg, cell;
    run_summary sum;
    double tok_s_gpu, tok_s_total;
    int meets;
} plan_row;

typedef struct plan_result {
    plan_cfg *cfgs;
    size_t n_cfgs;
    plan_row *rows;
    size_t n_rows;
    size_t n_cells; /* cells of the whole search, every shard */
} plan_result;

/* Weights and one sequence's KV cache per rank at (tp, ctx), bytes. */
int plan_bytes(const scenario *s, long tp, long ctx, double *weights, double *kv_seq, tp_err *err);
int plan_search(const plan_spec *sp, plan_result *out, tp_err *err);
void plan_free(plan_result *r);
/* <0 when pick a ranks before pick b (cfg indices), 0 only for the same configuration */
int plan_cmp(const plan_result *r, size_t a, size_t b);
/* The configurations of ctx with a pick, ranked, into order (n_cfgs entries); the count. */
size_t plan_rank(const plan_result *r, long ctx, size_t *order);
/* The Pareto rows of ctx into rows (n_rows entries), by step; the count (0 when out of
 * memory, as when ctx has no rows). */
size_t plan_pareto(const plan_result *r, long ctx, size_t *rows);

/* What bounds a row is run_bound_of (run.h), the rule run's verdict uses.
 * Why a configuration's batch stops where it does. */
typedef enum plan_cap { PLAN_LATENCY_CAPPED, PLAN_MEMORY_CAPPED, PLAN_BATCH_CAPPED } plan_cap;
plan_cap plan_cap_of(const plan_result *r, size_t cfg, long batch_max);

#endif
