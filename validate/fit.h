/* fit.h: bounded minimisation of one or two parameters, for pre-registered fits.
 *
 * Contract: fit_minimize searches the box lo..hi (n = 1 or 2) for the minimum of f: a
 * coarse grid first (so a non-convex or flat objective does not trap it), then golden-
 * section (n = 1, to 1e-7 of the range) or a shrinking compass search (n = 2, to 1e-5 of
 * each range) around the best grid point. The compass takes only gains above a millionth
 * of the objective and stops after 400 evaluations, so a flat or noisy (jittered
 * simulation) valley ends the search instead of walking it. f returns the objective and
 * sets *fail on error (the search stops and returns -1 with f's error). Deterministic: same
 * f, same answer.
 *
 * fit_minimize_many is the same search on an objective that takes several points at once
 * (so their work can run in parallel): with ahead > 1 it hands over the whole coarse grid
 * at once, and a compass step's tries up to the one that moved the step before (all four
 * after a step that did not move) together, evaluating ahead of the one-at-a-time search.
 * The points, the order it reads their values in, the answer and the count of evaluations
 * (the points a one-at-a-time search evaluates) do not depend on ahead; a point evaluated
 * ahead only costs time, and one that fails matters only if the one-at-a-time search
 * would have reached it. With ahead 1 it evaluates one point at a time, exactly those.
 */
#ifndef TPSIM_FIT_H
#define TPSIM_FIT_H

#include "err.h"

typedef double (*fit_objective)(const double *x, void *ctx, int *fail);
/* f at m points, xs row-major (n values each), into v[0..m-1]. Returns how many points in
 * order succeeded before the first that failed (m: none failed); the points after a failed
 * one may be left unevaluated. */
typedef int (*fit_objective_many)(const double *xs, int m, void *ctx, double *v);

int fit_minimize(int n, const double *lo, const double *hi, fit_objective f, void *ctx,
                 double *x_best, double *f_best, int *evaluations);
int fit_minimize_many(int n, const double *lo, const double *hi, fit_objective_many f,
                      void *ctx, int ahead, double *x_best, double *f_best, int *evaluations);

#endif
