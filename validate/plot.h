/* plot.h: the figures people look at, drawn with gnuplot.
 *
 * Contract: plot_validation writes into DIR (created if missing) PNG and SVG files of
 *   measured_vs_predicted   (the study's figure b) measured vs predicted step, y = x and
 *                           the +-kill-switch band, calibration cells marked apart;
 *   step_vs_tp              (figure c) step vs TP degree per batch: measured, ideal 1/k
 *                           from the lowest TP, and simulated;
 *   breakdown               a stacked bar per cell of the simulated step: host-side GPU
 *                           idle, compute, all-reduce, wait for peers (and the offset);
 * plus the .dat and .gp files that made them, so a figure can be re-drawn or restyled.
 * It needs `gnuplot` on PATH; a missing gnuplot or a failed draw is one error line. Files
 * appear whole or not at all.
 */
#ifndef TPSIM_PLOT_H
#define TPSIM_PLOT_H

#include "err.h"
#include "validate.h"

int plot_validation(const val_report *r, const char *dir, tp_err *err);
/* What a figure set needs, checked before any work: a usable DIR name (a directory or
 * nothing yet) and gnuplot on PATH. A set is installed only when stdout has taken the report
 * written so far (ofile_stdout_ok), so a command writes its report first; the folders a set
 * created (DIR and any missing above it) are removed again when it fails or a signal ends
 * the run, a signal at any moment included. */
int plot_check(const char *dir, tp_err *err);

/* plot_scan writes DIR/NAME.csv (the objective on an n1 x n2 grid of the free parameters:
 * one row per point, x-major, a blank line between x values so gnuplot sees the grid),
 * NAME.gp, NAME.png and NAME.svg: log10 of the objective as a colour map with the 95%
 * region (objective <= threshold) outlined and the fit marked, or for one parameter
 * (ykey NULL, n2 = 1) the curve with the threshold line; one such figure for each of d[0..n)
 * (the folds), all in one set: every file of every figure appears, or none. */
typedef struct plot_scan_data {
    const char *name, *title;
    const char *xkey, *ykey;
    int n1, n2;
    const double *x, *y;         /* n1 and n2 parameter values */
    const double *objective;     /* n1 * n2, x-major */
    double fit_x, fit_y, threshold, cv;
} plot_scan_data;

int plot_scan(const plot_scan_data *d, size_t n, const char *dir, tp_err *err);

/* plot_plan writes DIR/pareto-NAME and DIR/breakdown-NAME (.dat, .gp, .png, .svg): the
 * Pareto frontier of per-token latency against tokens/s per GPU (the rows no other row beats
 * on both), each point with its 95% interval of tokens/s per GPU as error bars (none where
 * NAN), coloured by configuration, every searched row a faint dot, the target as a vertical
 * line and the chosen point marked (both named in the key, outside the plot: never clipped);
 * and one stacked bar per entry of bars (the winner's step, the runner-up's) split into
 * compute, all-reduce, waiting for peers, GPU waiting on the host and offset, with the target
 * as a line. Files appear whole or not at all. tpsim plan --plot. */
typedef struct plot_plan_point {
    const char *label; /* its configuration: "H100 SXM TP-8 graphs" */
    long batch;
    double step_ms, tok_gpu;
    double step_lo, step_hi, tok_lo, tok_hi; /* its 95% interval; NAN: none */
} plot_plan_point;

typedef struct plot_plan_bar {
    const char *label;
    double compute_ms, allreduce_ms, wait_peers_ms, gpu_idle_ms, offset_ms;
} plot_plan_bar;

typedef struct plot_plan_data {
    const char *name, *title;  /* NAME: "ctx2048" */
    double target_ms;
    const plot_plan_point *frontier; /* by step time */
    size_t n_frontier;
    const double *all_step_ms, *all_tok; /* every searched row of the context */
    size_t n_all;
    const char *pick_label;    /* NULL: nothing chosen */
    double pick_step_ms, pick_tok;
    const plot_plan_bar *bars;
    int n_bars;
} plot_plan_data;

/* One figure pair per d[0..n) (a plan's contexts), all in one set: every file appears, or
 * none. */
int plot_plan(const plot_plan_data *d, size_t n, const char *dir, tp_err *err);

/* Figure sets that go in together or not at all (validate --plot DIR with --scan DIR2):
 * plot_validation_stage and plot_scan_stage draw a set into its staging folder and hand it
 * back (NULL and -1 with one line on failure, nothing left behind). plot_commit installs
 * every set when rc is 0, all of them checked before any moves, then removes the stages
 * (and, when anything failed, the folders the sets made) and frees them; it returns rc, or
 * -1 with one line in the failing set's err. plot_validation and plot_scan are one stage
 * and its commit. */
typedef struct plot_ctx plot_stage;
int plot_validation_stage(const val_report *r, const char *dir, plot_stage **out, tp_err *err);
int plot_scan_stage(const plot_scan_data *d, size_t n, const char *dir, plot_stage **out,
                    tp_err *err);
int plot_plan_stage(const plot_plan_data *d, size_t n, const char *dir, plot_stage **out,
                    tp_err *err);
int plot_commit(plot_stage **sets, int n, int rc);
/* The same, with also(arg) (another output's commit, e.g. plan's -o FILE) run after every
 * set is checked and before any moves, a failure of it failing the commit; from also to the
 * last move a signal waits, so a signal ends the run with all of them in place or none. (A
 * rename that fails part way, EIO or a full directory, can still leave part: all or none is
 * a promise about signals and every check made before the first move.) also should not
 * block: flush a stream first (ofile_flush). */
int plot_commit_with(plot_stage **sets, int n, int rc, int (*also)(void *), void *arg);

/* plot_xy and plot_groups: the figures of sweep --plot (step vs TP degree), allreduce --plot
 * (latency vs message size, measured beside modelled) and trace compare --plot (per class,
 * real beside simulated). Each writes DIR/NAME.dat, NAME.gp, NAME.png and NAME.svg, whole
 * or not at all, as plot_plan does; cmd names the command in the script's head.
 *
 * plot_xy: one data block per series ("x y", two blank lines apart: gnuplot's index), drawn
 * as lines with points, points only, or a line; log10 axes on request; with xtics_data the
 * x tics are the x values the series hold (TP degrees). */
enum { PLOT_LINESPOINTS, PLOT_POINTS, PLOT_LINE };

typedef struct plot_xy_series {
    const char *title;
    size_t n;
    const double *x, *y;
    int style; /* PLOT_LINESPOINTS, PLOT_POINTS or PLOT_LINE */
} plot_xy_series;

typedef struct plot_xy_data {
    const char *cmd, *name, *title, *about, *xlabel, *ylabel;
    int logx, logy, xtics_data;
    const plot_xy_series *series;
    int n_series;
} plot_xy_data;

int plot_xy(const plot_xy_data *d, const char *dir, tp_err *err);
int plot_xy_stage(const plot_xy_data *d, const char *dir, plot_stage **out, tp_err *err);

/* plot_groups: one row per group ("label" then one value per set, NAN written as NaN and
 * drawn as no bar), the sets side by side in each group. */
typedef struct plot_groups_data {
    const char *cmd, *name, *title, *about, *ylabel;
    int n_groups, n_sets;
    const char *const *groups, *const *sets;
    const double *values; /* n_groups * n_sets, group-major */
} plot_groups_data;

int plot_groups(const plot_groups_data *d, const char *dir, tp_err *err);

#endif
