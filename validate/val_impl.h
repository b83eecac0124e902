/* val_impl.h: what the parts of the validation core (validate.c, points.c, protocol.c,
 * bind.c, folds.c, interval.c) share; not for use outside validate/.
 *
 * Contract: val_ctx is the state of one validation run (the document, the options, the
 * grid, the scenario as loaded, the report being filled and the fold being fitted); the
 * functions below are the steps val_run_with calls, each failing with one tp_err line.
 */
#ifndef TPSIM_VAL_IMPL_H
#define TPSIM_VAL_IMPL_H

#include "par.h"
#include "validate.h"

/* The study's compute column is a roofline at 75.6% of the H100's 3.35 TB/s (docs/sources.md
 * #study: reproduces its predicted compute to 0.3% on all 8 cells); the additive null
 * baseline uses it as the study did. */
#define VAL_STUDY_HBM_EFF 0.756
#define VAL_RAYS 12 /* rays around the 2-parameter region (15 degrees from any tangent point) */
_Static_assert(2 * SCN_MAX_FIT + VAL_RAYS <= VAL_MAX_BOUND, "val_fold.bound holds every probe");
#define VAL_BISECT 16         /* steps at most per boundary search along one ray */
#define VAL_TWO_PI 6.283185307179586

typedef struct val_ctx {
    cfg_doc *doc;
    const scn_opts *opts;
    const grid *g;
    scenario *spec;           /* as loaded, with its fit and declarations */
    val_report *r;
    const val_fold *fold;     /* the fold being fitted */
    tp_err *err;
    int kernel_err_sign;      /* predictions with every kernel class moved by its calibration
                                 error, -1 or +1 (0: as calibrated); see scenario.h */
    par_team *team;           /* --jobs threads, started once per run (par.h) */
    cfg_doc **docs;           /* per thread of the team, the document its binds set (binding
                                 writes the fit's values into it); the caller's is doc */
    scenario_cache *cache;    /* the files the scenario names, parsed once per run and shared
                                 by every bind of it, on any thread (scenario.h) */
} val_ctx;

typedef struct val_band {
    double *lo, *hi;          /* per cell, the prediction's range over the accepted set */
} val_band;

/* protocol.c */
int val_tp_in(long tp, const long *v, int n);

/* bind.c */
int val_bind(cfg_doc *doc, scenario_cache *cache, const scn_opts *o, const scenario *spec,
             const double *x, scenario *out, tp_err *err);
int val_check_sets(const scn_opts *o, const scenario *spec, tp_err *err);
int val_check_box(cfg_doc *doc, scenario_cache *cache, const scn_opts *o, const scenario *spec,
                  tp_err *err);
int val_is_number(const cfg_node *n);
int val_knobs(cfg_doc *doc, const scenario *s, const scn_opts *o, tp_err *err);

/* folds.c */
val_config *val_config_for(val_report *r, const grid_cell *c, tp_err *err);
int val_make_folds(val_report *r, const scenario *spec, tp_err *err);
int val_home_fold(const val_report *r, int config);
val_role val_role_of(const val_report *r, int fold, size_t i);
int val_judges_config(const val_report *r, int config);

/* One simulated cell per job (par_map, par_team_map): each writes only its own slot. */
typedef struct val_cells_job {
    const scenario *bound;
    const grid_cell *const *cells; /* the cells to simulate, NULL entries skipped (left as set) */
    double *ms;                    /* their step, ms */
    run_summary *sums;             /* or NULL */
} val_cells_job;

/* points.c */
int val_predict(const scenario *s, long tp, long batch, long ctx, run_summary *sum, tp_err *err);
int val_cell_job(void *ctx, size_t i, tp_err *err);
double val_objective(const double *x, void *vctx, int *fail);
/* the objective at m points, rows of the fit's parameters (fit_objective_many) */
int val_objective_many(const double *xs, int m, void *vctx, double *v);
/* Fold f's predictions (ms; NAN for cells it does not judge) at m points into preds[p * n_cells
 * + i]; the points done in order before the first that failed (m: none), err set for it. */
int val_predict_points(val_ctx *c, int f, int m, const double *xs, double *preds, tp_err *err);
int val_predict_fold(val_ctx *c, int fold, const double *x, const char *set,
                     const char *set_src, int set_line, int set_col, double *preds,
                     run_summary *sums, const char *progress, tp_err *err);

/* interval.c */
int val_interval_fold(val_ctx *c, int f, val_band *band, double *preds, tp_err *err);
int val_sensitivity(val_ctx *c, double *preds, tp_err *err);
/* r->unverified from the inputs' fingerprints, and a --set sourced key made assumed */
void val_provenance(val_ctx *c);
/* sens entries for an unverified file's numbers: at most this many */
#define VAL_FILE_SENS_MAX 256
/* val_predict_fold with vs's file numbers (vs->file) moved by factor */
int val_predict_fold_moved(val_ctx *c, int fold, const double *x, const val_sens *vs,
                           double factor, double *preds, tp_err *err);

#endif
