/* fit.h: bounded minimisation of one or two parameters, for pre-registered fits.
 *
 * Contract: fit_minimize searches the box lo..hi (n = 1 or 2) for the minimum of f: a
 * coarse grid first (so a non-convex or flat objective does not trap it), then golden-
 * section (n = 1, to 1e-7 of the range) or a shrinking compass search (n = 2, to 1e-5 of
 * each range) around the best grid point. The compass takes only gains above a millionth
 * of the objective and stops after 400 evaluations, so a flat or noisy (jittered
 * simulation) valley ends the search instead of walking it. f returns the objective and sets *fail on error (the search
 * stops and returns -1 with f's error). Deterministic: same f, same answer.
 */
#ifndef TPSIM_FIT_H
#define TPSIM_FIT_H

#include "err.h"

typedef double (*fit_objective)(const double *x, void *ctx, int *fail);

int fit_minimize(int n, const double *lo, const double *hi, fit_objective f, void *ctx,
                 double *x_best, double *f_best, int *evaluations);

#endif
