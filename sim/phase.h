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
 * The engines draw them through engine_phases_sample (engine_rules.h), once per step and rank.
 *
 * A host-phase file (kind: host-phases, models/host/NAME.yaml, named by the scenario key
 * `phases:`) holds one such model for every scenario that names it: `phases:` (the map a
 * scenario's host.phases would hold) plus `sourced: [{key, source}]` and `assumed: [{key,
 * why}]`, where every number under phases is declared exactly once (a dotted key of the file:
 * "phases.schedule.mean_us"). phase_file_load checks all that (one "file:line:col: ..." line,
 * -1) and returns the assignments a scenario document takes ("host.phases.schedule.mean_us" =
 * the file's text, at the file's position) and the declarations under their scenario keys.
 * Plain values, no allocation kept.
 *
 * An engine file (kind: engine, models/host/NAME.yaml, named by the scenario key `engine:`) is a
 * host-phase file of one vLLM engine that also says how its phases meet the GPU and what its
 * CUDA graphs are: `name:` (what every output calls the engine), `host_phases:` (serialised or
 * overlapped: execution.host_phases, which a --set still overrides) and `graph_mode:` (full or
 * piecewise: what execution.mode graphs means under it). phase_file_load returns them too.
 */
#ifndef TPSIM_PHASE_H
#define TPSIM_PHASE_H

#include "cfg.h"
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

#define PHASE_FILE_ITEMS (PHASE_N * 4) /* dist, mean_us, cv, per_seq_us per phase */

typedef struct phase_item {
    char key[64];      /* the scenario key: "host.phases.schedule.mean_us" */
    char text[64];     /* the file's value, as written */
    int line, col;     /* where the file states it */
} phase_item;

typedef struct phase_decl {
    char key[64];      /* the scenario key, as phase_item */
    int assumed;       /* 1: assumed: (note says why), 0: sourced: (note is the source) */
    char note[256];
    int line, col;     /* where the file's entry names the key */
} phase_decl;

typedef struct phase_file {
    char path[512];
    int n_items;
    phase_item items[PHASE_FILE_ITEMS];
    int n_decls;       /* one per number among the items */
    phase_decl decls[PHASE_FILE_ITEMS];
    int engine;        /* kind: engine; the three fields below are set only then */
    char name[64];     /* the engine's name: */
    int overlap;       /* host_phases: 0 serialised, 1 overlapped */
    int graph_mode;    /* graph_mode: phase_graph_mode */
    int line, col;     /* where host_phases: is written (the splice's position) */
} phase_file;

int phase_file_load(const char *path, phase_file *out, tp_err *err);

/* execution.mode's CUDA-graph modes, as vLLM's cudagraph_mode names them for a decode step. */
typedef enum phase_graph_mode { PHASE_GRAPH_FULL, PHASE_GRAPH_PIECEWISE } phase_graph_mode;
/* "full" / "piecewise" */
const char *phase_graph_mode_name(int mode);

#endif
