/* domain.h: whether a cell lies inside what its scenario was validated on, and each
 * extrapolation said in words ("TP-8 is outside the validated TP {2, 4}", "graph mode was
 * never validated", "../models/kernels/h100-sxm.yaml changed since validation").
 *
 * Contract: a scenario's `validated:` block (scenario.h's scenario_domain) is what tpsim
 * validate judged it on. tpsim validate --write-domain writes it from its own result
 * (written 1): the TP degrees, modes, batch and context ranges, hardware, model, engine, grid
 * and verdict, and every other input that changes a prediction (the precision of weights and
 * KV cache, the collective model, how host phases meet the GPU, the graph mode, the queue
 * depth) with the fingerprint of every file the predictions read (domain_inputs). A block
 * written by hand (written 0) holds only the first group, and every cell gets the mark that it
 * was not written by tpsim validate. domain_check compares one cell with it: inside is 1 only
 * when no mark is made; a scenario without the block gets the one mark "this scenario was
 * never validated". The files are compared once per load, not per cell: domain_inputs_check
 * (which scn_opts_load runs) keeps its marks in the scenario, and domain_check adds them.
 * domain_check, domain_join and the statements are plain values, no allocation, no state;
 * run, sweep and plan share them.
 */
#ifndef TPSIM_DOMAIN_H
#define TPSIM_DOMAIN_H

#include "scenario.h"

/* one per dimension (TP, mode, batch, ctx, hardware, model, engine, weights, KV cache,
 * all-reduce, host phases, graph mode, queue depth), the block not written by validate, and the
 * files' (SCN_INPUT_MARKS) */
#define DOMAIN_MAX_MARKS (14 + SCN_INPUT_MARKS)
#define DOMAIN_MARK_MAX SCN_INPUT_MARK_MAX
/* room for domain_statement: the TP list, ranges, hardware and model (64 each), engine (64),
 * grid (256), verdict (512), the hand-written note */
#define DOMAIN_STATEMENT_MAX 1280

typedef struct domain_cell {
    long tp, batch, ctx;
    int graphs;           /* the cell's execution mode */
    const char *hardware; /* the hardware it runs on (hw_spec.name) */
    const char *model;    /* the model it runs (model_arch.name) */
} domain_cell;

typedef struct domain_report {
    int inside;  /* 1: every dimension inside the validated domain */
    int n_marks;
    char marks[DOMAIN_MAX_MARKS][DOMAIN_MARK_MAX];
} domain_report;

void domain_check(const scenario *s, const domain_cell *c, domain_report *out);
/* The precision a scenario runs its layers' weights and its KV cache in, as a validated:
 * block names them ("bf16", "fp8", "int4"; the model's own dtype by its width). */
void domain_precision(const scenario *s, char weights[8], char kv_cache[8]);
/* The files the scenario's predictions read, each path relative to the scenario's folder and
 * its fingerprint now: the scenario itself (its content without validated:), its model,
 * hardware, kernel calibration and that file's grids, all-reduce calibrations, engine or
 * host-phase file and trace calibration, in that order, each once. Through cache (NULL: each
 * file hashed). *n of at most cap; 0, or -1 and one line (a file unreadable, a path too long). */
int domain_inputs(const scenario *s, scenario_cache *cache, scenario_input *out, int cap, int *n,
                  tp_err *err);
/* The path of file relative to the folder of the scenario at scenario_path, into out (cap):
 * both resolved (symlinks followed), then "../" for each folder to climb. 0, or -1 (a path
 * that does not resolve, or too long). */
int domain_relpath(const char *scenario_path, const char *file, char *out, size_t cap);
/* Compare a written validated: block's files with the files as they are now, once per load,
 * into s->input_marks (checked 1): each file whose fingerprint differs ("X changed since
 * validation (fingerprint N, validated V)") or that cannot be read; and, where the hardware,
 * model and engine are the block's, the files read now that the block does not name and
 * those it names that are not read now (the grid aside, which it fingerprints too). Nothing to
 * compare for a hand-written block or none. 0, or -1 and one line (out of room only). */
int domain_inputs_check(scenario *s, scenario_cache *cache, tp_err *err);
/* The marks joined by "; " into buf (cap bytes), "" when inside. */
void domain_join(const domain_report *r, char *buf, size_t cap);
/* What the scenario was validated on and the verdict, in words, into buf: "TP {2, 4}, eager,
 * batch 1..8, ctx 2048..2048, H100 SXM, Llama-3.1-70B, engine vllm-v0;
 * ../validate/h100-ctx2048.csv: VERDICT" (a hand-written block's verdict followed by
 * " (hand-written, not by tpsim validate --write-domain)");
 * "" (and 0 returned) when it has no validated: block, else 1. Every answer (run, sweep's and
 * plan's rows, plan's header) states it, inside the domain or not. */
int domain_statement(const scenario *s, char *buf, size_t cap);
/* The same for a reader, into buf: "TP {2, 4}, eager, ..., Llama-3.1-70B against
 * validate/h100-ctx2048.csv: VERDICT" with the verdict's words spelled out (MISFIT: "did not
 * fit", PASS-NO-SKILL: "passed, no better than a constant", PASS: "passed", FAIL: "failed",
 * UNTESTED: "untested"), for the text reports' headers; 0 and "" as domain_statement. */
int domain_statement_words(const scenario *s, char *buf, size_t cap);

#endif
