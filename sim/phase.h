/* phase.h: the per-step host phases of a vLLM decode step (scheduler, broadcast of the
 * step's inputs to the TP workers, input preparation, the sampler's GPU->CPU sync, output
 * processing and detokenisation): one host model that eager and graph scenarios share.
 *
 * Contract: a scenario's host.phases gives each named phase a dist (mean_us, cv) plus an
 * optional per_seq_us, so that at batch B its cost has mean mean_us + per_seq_us * B (the
 * dist's kind and cv kept). execution.host_phases says how the phases meet the GPU:
 *   serialised (vLLM V0; the default): after the stream drains, with host.step, so the
 *     step grows by their sum;
 *   overlapped (V1 async scheduling, vLLM PR #19970 / #23569): right after the step's last
 *     launch, before the drain, so the step grows only by their excess over the GPU's
 *     remaining work.
 * The engines draw them through engine_phases_sample (engine.h), once per step and rank.
 */
#ifndef TPSIM_PHASE_H
#define TPSIM_PHASE_H

#include "engine.h"

#define PHASE_N ENGINE_PHASES

/* In the order a V0 step runs them; NULL-terminated. */
extern const char *const phase_names[PHASE_N + 1];

typedef struct phase_model {
    dist base[PHASE_N];       /* at batch 0: kind, mean (s), cv */
    double per_seq_s[PHASE_N]; /* added to the mean per sequence in the batch */
    int overlap;              /* execution.host_phases: 0 serialised, 1 overlapped */
} phase_model;

/* Phase i's dist at batch `batch`. */
dist phase_at(const phase_model *m, int i, long batch);
/* Fill an engine host's phases for batch `batch`. */
void phase_fill(const phase_model *m, long batch, engine_host *h);
/* The sum of the phases' means at batch `batch`, seconds. */
double phase_total_s(const phase_model *m, long batch);
/* "serialised" / "overlapped". */
const char *phase_mode_name(int overlap);

#endif
