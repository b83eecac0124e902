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

/* plot_scan writes DIR/NAME.csv (the objective on an n1 x n2 grid of the free parameters:
 * one row per point, x-major, a blank line between x values so gnuplot sees the grid),
 * NAME.gp, NAME.png and NAME.svg: log10 of the objective as a colour map with the 95%
 * region (objective <= threshold) outlined and the fit marked, or for one parameter
 * (ykey NULL, n2 = 1) the curve with the threshold line. Files appear whole or not at all. */
typedef struct plot_scan_data {
    const char *name, *title;
    const char *xkey, *ykey;
    int n1, n2;
    const double *x, *y;         /* n1 and n2 parameter values */
    const double *objective;     /* n1 * n2, x-major */
    double fit_x, fit_y, threshold, cv;
} plot_scan_data;

int plot_scan(const plot_scan_data *d, const char *dir, tp_err *err);

#endif
