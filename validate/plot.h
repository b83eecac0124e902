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

#endif
