/* validate.h: a scenario against a measured grid, with the study's pre-registration.
 *
 * Contract: val_run loads the scenario (with the caller's overrides), fits its declared
 * free parameters (at most 2) on its declared calibration cells (at most 2, which must be
 * in the grid) and on nothing else, then predicts every grid cell. Per config it reports
 * MAPE over all and over held-out cells, the kill-switch verdict on the held-out MAPE
 * (a config without held-out cells is untested, not passed),
 * and the implied per-step residual measured - comm - compute/k (simulated comm and
 * compute; also from the grid's own prediction columns when it has them). The shrink
 * ratio is step(lowest tp) / step(next tp), the mean over batch/ctx present in both.
 * The report is caller-owned; free with val_free. A failed kill-switch is a result, not an
 * error: val_run fails only on bad input.
 */
#ifndef TPSIM_VALIDATE_H
#define TPSIM_VALIDATE_H

#include "scnopt.h"
#include "grid.h"
#include "run.h"
#include "scenario.h"

#define VAL_MAX_CONFIGS 16

typedef struct val_cell {
    const grid_cell *g;
    run_summary sim;
    double predicted_ms, error_pct;
    int calibration;
} val_cell;

typedef struct val_config {
    char config[48];
    long tp;
    int n, n_heldout;
    double mape_pct, heldout_mape_pct; /* heldout: NAN when every cell calibrates */
    int tested;               /* it has held-out cells: a config judged only on the cells it
                                 was fitted on is untested, never a pass */
    int pass;
    double residual_ms;       /* mean of measured - sim allreduce - sim compute */
    double residual_grid_ms;  /* the same from the grid's pred columns, NAN if absent */
    double measured_mean_ms, predicted_mean_ms;
} val_config;

typedef struct val_report {
    scenario scn;             /* as fitted */
    const grid *g;
    double kill_switch_pct;
    int n_fit;
    double fitted[SCN_MAX_FIT];
    double fit_objective;
    int fit_evaluations;
    val_cell *cells;          /* one per grid cell, grid order */
    size_t n_cells;
    val_config configs[VAL_MAX_CONFIGS];
    int n_configs;
    long shrink_from_tp, shrink_to_tp; /* 0 when the grid has one TP degree */
    double shrink_measured, shrink_predicted;
} val_report;

int val_run(const char *scenario_path, const scn_opts *opts, const grid *g,
            double kill_switch_pct, val_report *out, tp_err *err);
void val_free(val_report *r);

#endif
