/* domain.h: whether a cell lies inside what its scenario was validated on, and each
 * extrapolation said in words ("TP-8 is outside the validated TP {2, 4}", "graph mode was
 * never validated").
 *
 * Contract: a scenario's `validated:` block (scenario.h's scenario_domain: TP degrees, modes,
 * batch and context ranges, hardware, model, the grid and the verdict it got) is what tpsim
 * validate judged it on, as its author states it (with `engine:`, the serving engine it was judged
 * under, compared with the scenario's). domain_check compares one cell with it: inside is
 * 1 only when no mark is made; a scenario without the block gets the one mark "this scenario was
 * never validated". Plain values, no allocation, no state; run, sweep and plan share it.
 */
#ifndef TPSIM_DOMAIN_H
#define TPSIM_DOMAIN_H

#include "scenario.h"

#define DOMAIN_MAX_MARKS 7 /* one per dimension: TP, mode, batch, ctx, hardware, model, engine */
#define DOMAIN_MARK_MAX 200
/* room for domain_statement: the TP list, ranges, hardware and model (64 each), grid (256),
 * verdict (256) */
#define DOMAIN_STATEMENT_MAX 768

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
/* The marks joined by "; " into buf (cap bytes), "" when inside. */
void domain_join(const domain_report *r, char *buf, size_t cap);
/* What the scenario was validated on and the verdict, in words, into buf: "TP {2, 4}, eager,
 * batch 1..8, ctx 2048..2048, H100 SXM, Llama-3.1-70B; validate/h100-ctx2048.csv: VERDICT";
 * "" (and 0 returned) when it has no validated: block, else 1. Every answer (run, sweep's and
 * plan's rows, plan's header) states it, inside the domain or not. */
int domain_statement(const scenario *s, char *buf, size_t cap);
/* The same for a reader, into buf: "TP {2, 4}, eager, ..., Llama-3.1-70B against
 * validate/h100-ctx2048.csv: VERDICT" with the verdict's words spelled out (MISFIT: "did not
 * fit", PASS-NO-SKILL: "passed, no better than a constant", PASS: "passed", FAIL: "failed",
 * UNTESTED: "untested"), for the text reports' headers; 0 and "" as domain_statement. */
int domain_statement_words(const scenario *s, char *buf, size_t cap);

#endif
