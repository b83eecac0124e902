/* validate.h: a scenario against a measured grid, with the study's pre-registration, under
 * a protocol that can tell a mechanism from no model.
 *
 * Contract: val_run_with loads the scenario (with the caller's overrides), refuses it when a
 * number the grid could inform is neither fitted, `sourced:` nor `assumed:` (val_knobs), and
 * runs one protocol, an entry of val_protocols[] (protocol.c; below):
 *   within        one fit on the scenario's fit.cells (plus the cells borrowed values were
 *                 fitted on); every other cell is held out;
 *   transfer A:B  one fit on the fit.cells of TP degrees A (all of A's cells when none is
 *                 named; `cal_all_of_from` says so); every cell of degrees B is held out,
 *                 and no cell of B is ever read by the fit;
 *   loo           one fit per config, on the fit.cells of the other configs (all their cells
 *                 when none); that config's cells are held out.
 * In every protocol a fold's calibration cells are the fit.cells its entry lets calibrate
 * (all it lets calibrate when none is named and the entry says so) plus the cells borrowed
 * values were fitted on; a cell that does not calibrate is held out where the entry judges
 * it, else unused.
 * The fit takes its declared free parameters (at most 2) and nothing else. Per config, on the
 * held-out cells of the fold that judges it: the MAPE, the two null baselines on the same
 * cells (constant: the mean of the fold's calibration cells of that config, else of all of
 * them; additive: the study's compute/k + comm + R0 with R0 fitted on the same calibration
 * cells), skill = 1 - MAPE / best baseline MAPE, and the verdict
 *   UNTESTED       no held-out cell;
 *   MISFIT         the fit misses one of its calibration cells by more than kill-switch/3;
 *   FAIL           held-out MAPE above the kill-switch;
 *   PASS_NO_SKILL  within the kill-switch, not at most half the best baseline's MAPE;
 *   SUPPORTED      within the kill-switch and at most half (and strictly below) the best
 *                  baseline's MAPE;
 *   UNIDENTIFIED   (with intervals) the calibration cells do not pin the prediction: the
 *                  parameters' 95% range moves a held-out prediction by more than the
 *                  kill-switch, or a fitted value stopped on a bound not declared physical
 *                  (fit.params physical_min/physical_max), unless even the best prediction
 *                  within that range misses by more than the kill-switch (then FAIL stands).
 *                  It is never SUPPORTED nor PASS_NO_SKILL, and `pass` is 0.
 * With intervals, every prediction gets a 95% profile-likelihood interval from the fold's
 * error scale (val_scale: the declared measurement error meas_cv and the model error the
 * calibration cells' misfit shows; Gaussian, chi2(1) = 3.84 on the fit's sum of squared
 * relative errors / cv^2), widened in quadrature by one new cell's error at that scale:
 * pred_lo <= predicted_ms <= pred_hi; n_inside counts the held-out measurements inside. A config is
 * `identified` when the parameters' part alone spans at most the kill-switch on every held-out cell
 * (a verdict on an unidentified prediction rests on where the fit stopped in a flat valley:
 * UNIDENTIFIED, above). With sensitivity, each
 * assumed number is moved by -20% and +20% with the fitted values held, and every held-out
 * prediction re-simulated. The report is caller-owned; free with val_free. A failed
 * kill-switch is a result, not an error: val_run fails only on bad input.
 */
#ifndef TPSIM_VALIDATE_H
#define TPSIM_VALIDATE_H

#include "fit.h"
#include "scnopt.h"
#include "grid.h"
#include "run.h"
#include "scenario.h"

#define VAL_MAX_CONFIGS 16
#define VAL_MAX_TP 8
#define VAL_Z95 1.959963984540054  /* two-sided 95% normal quantile */
#define VAL_CHI2_95 3.841458820694124 /* chi-square, 1 degree of freedom, 95% */
#define VAL_SENS_FRAC 0.20
#define VAL_FILE_KERNELS 1
#define VAL_FILE_ALLREDUCE 2
#define VAL_MAX_BOUND 32 /* boundary points per fold: 2 per parameter axis, plus the rays */
/* What the synthetic coverage checks (tests/test_validate.c, which asserts them) found for
 * the 95% intervals: grids tpsim generates from known parameters with seeded noise. */
#define VAL_SYNTHETIC_COVERAGE                                                                  \
    "118 of 120 held-out cells at the declared error, 341 of 360 with 2% of undeclared model "   \
    "error"


/* A protocol as run: its entry in val_protocols[] and its value's parts. Zeroed, it is the
 * first entry (within). */
typedef struct val_protocol {
    int index;                             /* into val_protocols[] */
    long from[VAL_MAX_TP], to[VAL_MAX_TP]; /* transfer: TP degrees fitted on / judged */
    int n_from, n_to;
} val_protocol;

/* A text naming a protocol: "within", "loo" or "transfer A:B" (also just "A:B"), A and B
 * comma lists of TP degrees, disjoint: the first entry whose parser takes it. 0, or -1 with
 * a message naming what is expected (caller adds the position). */
int val_protocol_parse(const char *text, val_protocol *out, tp_err *err);
/* "within", "loo", "transfer 2:4" */
void val_protocol_name(const val_protocol *p, char *out, size_t cap);
/* "--within, --transfer A:B, --loo": every protocol's flag, in the table's order */
void val_protocol_flags(char *out, size_t cap);

typedef struct val_options {
    double kill_switch_pct;
    int protocol_given;     /* else the scenario's fit.protocol, else within */
    val_protocol protocol;
    double meas_cv;         /* relative measurement error of one grid cell (0.01 = 1%) */
    int intervals;          /* compute pred_lo/pred_hi */
    int sensitivity;        /* the +-20% moves of each assumed number */
    struct vmemo *memo;     /* objective values to reuse (memo.h), shared only by runs of one
                               scenario, options and grid; NULL: none. Not owned */
    struct scenario_cache *files; /* the named files parsed once (scenario.h), shared by the
                               runs of one invocation; NULL: one cache per run. Not owned */
} val_options;

/* kill-switch 15%, within (or the scenario's), meas_cv 1%, intervals and sensitivity on */
val_options val_default_options(void);

typedef enum val_role { VAL_UNUSED, VAL_CALIBRATION, VAL_HELDOUT } val_role;
typedef enum val_verdict {
    VAL_UNTESTED, VAL_MISFIT, VAL_FAIL, VAL_PASS_NO_SKILL, VAL_SUPPORTED, VAL_UNIDENTIFIED
} val_verdict;
const char *val_verdict_name(val_verdict v);
const char *val_role_name(val_role r);

typedef struct val_cell {
    const grid_cell *g;
    run_summary sim;
    double predicted_ms, error_pct;
    val_role role;            /* in the fold that judges its config */
    int calibration;          /* role == VAL_CALIBRATION */
    int fold;
    double fit_lo, fit_hi;    /* the parameters' 95% range of the prediction */
    double par_lo, par_hi;    /* the same from the free parameters alone (no kernel error):
                                 what identification reads */
    double pred_lo, pred_hi;  /* ... with one measurement's error added: NAN without intervals */
    int inside;               /* measured within [pred_lo, pred_hi] */
    double constant_ms, additive_ms; /* the null baselines' predictions, same fold */
} val_cell;

/* The relative error scale of one fold's predictions: the declared per-cell measurement
 * error (--meas-cv) and the model error the calibration cells' misfit shows beyond it. With
 * dof = calibration cells - free parameters > 0, fit_rms = sqrt(objective / dof) estimates
 * the scatter of one cell about the fitted model; what exceeds the declared error is model
 * error: model_cv = sqrt(max(0, fit_rms^2 - meas_cv^2)), and cv = sqrt(meas_cv^2 +
 * model_cv^2) = max(meas_cv, fit_rms) scales both the parameters' 95% region and one new
 * cell's error. At dof 0 (as many parameters as cells: an exact fit) the misfit says
 * nothing: model_cv 0, estimated 0, and the interval is the measurement error's alone.
 * Where the misfit sets cv, it is estimated from dof cells, and the quantile is Student's t
 * on dof (4.30 at 2) instead of z, for both parts of the interval. */
typedef struct val_scale {
    double meas_cv, fit_rms, model_cv, cv;
    int dof, estimated;
    double q;   /* the two-sided 95% quantile used: z (1.96) where cv is the declared error;
                   Student's t on dof where the misfit sets cv (an estimated scale) */
} val_scale;

val_scale val_error_scale(double objective, int n_cal, int n_fit, double meas_cv);
/* pred_lo, pred_hi of a prediction p whose parameters' 95% range is [fit_lo, fit_hi]: each
 * side widened in quadrature by one new cell's error, q * cv * p. Callable alone (tpsim
 * plan reuses it). */
void val_pred_interval(double p, double fit_lo, double fit_hi, const val_scale *s, double *lo,
                       double *hi);
/* The objective a point of the parameters' 95% region may reach: objective + q^2 cv^2
 * (q^2 = chi2(1) 95% = 3.84 with z). */
double val_region_threshold(double objective, const val_scale *s);

typedef struct val_fold {
    char label[64];           /* "all configs", or "without H100 TP-4" */
    size_t *cal;              /* grid indices of its calibration cells */
    int n_cal;
    int cal_all_of_from;      /* transfer/loo: fit.cells named none, every cell of the rest */
    int cal_borrowed;         /* cells added because borrowed values were fitted on them */
    double fitted[SCN_MAX_FIT];
    double objective;         /* sum of squared relative errors on the calibration cells */
    int evaluations;
    fit_stop stop;            /* the rule that stopped the search (fit.h); NONE: no fit */
    double cal_max_err_pct;   /* the fit's worst miss of its own calibration cells */
    int misfit;
    double r0_ms;             /* the additive baseline's fitted R0 */
    double lo[SCN_MAX_FIT], hi[SCN_MAX_FIT]; /* the parameters' 95% profile box */
    /* with intervals: the boundary points of the accepted set that were probed (every
     * prediction's interval is its range over these and the fit), so a caller can give a
     * cell the grid does not hold the same interval (tpsim plan) */
    double bound[VAL_MAX_BOUND][SCN_MAX_FIT];
    int n_bound;
    val_scale scale;          /* the error scale of its predictions (intervals) */
    int at_bound[SCN_MAX_FIT]; /* the fitted value sits on its min (-1) or max (+1), else 0 */
    int on_free_bound;        /* some fitted value sits on a bound not declared physical */
} val_fold;

typedef struct val_config {
    char config[48];
    long tp;
    int n, n_heldout, fold;
    double mape_pct, heldout_mape_pct; /* heldout: NAN when untested */
    int judged;               /* some cell of it is judged in its fold (the protocol's judges,
                                 calibration aside): its verdict counts in summaries */
    int tested, pass;         /* pass: verdict SUPPORTED or PASS_NO_SKILL */
    val_verdict verdict;
    double constant_mape_pct, additive_mape_pct, best_baseline_pct; /* NAN when untested */
    const char *best_baseline; /* "constant" or "additive" */
    double skill;             /* 1 - held-out MAPE / best baseline MAPE; NAN if untested or 0 */
    int n_inside;             /* held-out measurements inside their interval */
    int identified;           /* with intervals: every held-out prediction's parameter range
                                 (fit_lo..fit_hi) spans at most the kill-switch; otherwise
                                 the calibration cells leave it to where the fit stopped */
    double param_spread_pct;  /* the widest such range, % of the prediction (NAN without) */
    double range_mape_pct;    /* the held-out MAPE at best within those ranges: each cell's
                                 distance to [fit_lo, fit_hi] (NAN without intervals) */
    double residual_ms;       /* mean of measured - sim allreduce - sim compute */
    double residual_grid_ms;  /* the same from the grid's pred columns, NAN if absent */
    double measured_mean_ms, predicted_mean_ms;
} val_config;

typedef struct val_sens {
    char key[128];
    char note[512];
    /* a number of a calibration file whose fingerprint no longer matches (fprint.h): the
     * file, its kind, and the assignments that move it (its key and the classes that copy
     * its law); file "" for a number of the scenario's document */
    char file[256];
    int file_kind;            /* VAL_FILE_KERNELS or VAL_FILE_ALLREDUCE */
    long file_tp;             /* the all-reduce calibration's k */
    char file_keys[4][96];
    int n_file_keys;
    double value;             /* as used */
    double *minus_ms, *plus_ms; /* per report cell (NAN unless held out): the prediction at
                                   value * 0.8 and * 1.2, fitted values held */
} val_sens;

typedef struct val_report {
    scenario scn;             /* as fitted in fold 0 */
    const grid *g;
    val_options opt;
    val_protocol protocol;
    double kill_switch_pct;
    int n_fit;
    double fitted[SCN_MAX_FIT]; /* fold 0's */
    double fit_objective;
    int fit_evaluations;
    fit_stop fit_stop_reason; /* fold 0's */
    val_fold *folds;
    int n_folds;
    val_cell *cells;          /* one per grid cell, grid order */
    size_t n_cells;
    val_config configs[VAL_MAX_CONFIGS];
    int n_configs;
    int n_heldout, n_inside;  /* interval coverage over every held-out cell */
    val_sens *sens;           /* one per assumed number */
    int n_sens;
    /* input files whose fingerprint no longer matches their numbers (fprint.h): each
     * "PATH: why"; their numbers are among sens, and every verdict rests on them */
    char unverified[4][640];
    int n_unverified;
    long shrink_from_tp, shrink_to_tp; /* 0 when the grid has one TP degree */
    double shrink_measured, shrink_predicted;
} val_report;

/* One validation protocol: everything the core (folds.c, validate.c) and the command
 * (cmd_validate.c: its flag, usage and messages) know of it. Adding a protocol is adding an
 * entry to val_protocols[] in protocol.c. */
typedef struct val_protocol_def {
    const char *name;    /* fit.protocol's word and the flag --NAME */
    const char *value;   /* the flag's value as usage writes it ("A:B"); NULL: a switch */
    const char *example; /* a text it takes, for messages ("transfer 2:4"), or NULL */
    const char *help;    /* its clause in the usage's "protocols:" paragraph */
    /* text (fit.protocol's, or the flag's value) into p: 1 when the text is not this
     * protocol, 0, or -1 with err set; NULL: the text must be the name */
    int (*parse)(const char *text, val_protocol *p, tp_err *err);
    /* its name in reports ("transfer 2:4"); NULL: the name */
    void (*report_name)(const val_protocol *p, char *out, size_t cap);
    /* can the grid be judged this way (0, or -1 with err set); NULL: always */
    int (*check)(const val_report *r, tp_err *err);
    int fold_per_config; /* one fold per config, judging it ("without X"); else one fold
                            ("all configs") */
    /* may the fold calibrate on grid cell i; NULL: any cell */
    int (*calibrates)(const val_report *r, int fold, size_t i);
    /* is grid cell i judged (held out) in the fold, when it does not calibrate; NULL: yes */
    int (*judges)(const val_report *r, int fold, size_t i);
    int all_when_none;   /* fit.cells name none the fold may use: all it may use calibrate */
} val_protocol_def;

extern const val_protocol_def val_protocols[];
extern const int val_n_protocols;
const val_protocol_def *val_protocol_of(const val_protocol *p);

/* The verdict rule alone (the cases above), from a config's numbers: ks the kill-switch %,
 * mape its held-out MAPE %, best the best baseline's MAPE % (NAN: none), misfit its fold's
 * flag (val_misfit), with_intervals whether identification was computed, identified and
 * range_mape its identification and best MAPE within the parameters' range. */
val_verdict val_verdict_for(double ks, int tested, double mape, double best, int misfit,
                            int with_intervals, int identified, double range_mape);
/* A fit misses its own calibration cells: its worst miss above kill-switch / 3. */
int val_misfit(double cal_max_err_pct, double ks);
/* Identified: the parameters' spread of every held-out prediction at most the kill-switch,
 * and no fitted value on a bound not declared physical. */
int val_identified(double param_spread_pct, double ks, int on_free_bound);

int val_run_with(const char *scenario_path, const scn_opts *opts, const grid *g,
                 const val_options *vo, val_report *out, tp_err *err);
/* val_run_with at this kill-switch, the scenario's protocol, without intervals or
 * sensitivity (what sweep --fit needs) */
int val_run(const char *scenario_path, const scn_opts *opts, const grid *g,
            double kill_switch_pct, val_report *out, tp_err *err);
void val_free(val_report *r);


/* The objective (sum of squared relative errors on the fold's calibration cells) over an
 * n1 x n2 grid of the free parameters' boxes (n2 = 1 for one parameter), row-major,
 * into a caller-owned `objective` of n1*n2 values. */
int val_scan(const char *scenario_path, const scn_opts *opts, const val_report *r, int fold,
             int n1, int n2, double *objective, tp_err *err);

#endif
