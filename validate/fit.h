/* fit.h: bounded minimisation of one or two parameters, for pre-registered fits.
 *
 * Contract: fit_minimize searches the box lo..hi (n = 1 or 2) for the minimum of f: a
 * coarse grid first (so a non-convex or flat objective does not trap it), then around the
 * best grid point golden-section (n = 1, to FIT_TOL of its bracket of two grid cells) or, for
 * n = 2, Nelder and Mead's simplex (which walks a valley the axes cross, as a host time and
 * its spread trade off) and then a compass search that certifies the answer: it stops,
 * converged, when no neighbour at steps under FIT_TOL_STEP of each range is lower by more
 * than a millionth of the objective. *stop says which rule stopped it; an evaluation cap
 * guards each phase, and a compass that reaches its cap says so (FIT_STOP_CAP) instead of
 * passing for converged. f returns the objective and sets *fail on error (the search
 * stops and returns -1 with f's error). Deterministic: same f, same answer.
 *
 * fit_minimize_many is the same search on an objective that takes several points at once
 * (so their work can run in parallel): with ahead > 1 it hands over the whole coarse grid
 * at once, a simplex step's reflection with the points that may follow it, and a compass
 * step's tries up to the one that moved the step before (all after a step that did not
 * move) together, evaluating ahead of the one-at-a-time search. The points, the order it
 * reads their values in, the answer and the count of evaluations (the points a
 * one-at-a-time search evaluates) do not depend on ahead; a point evaluated ahead only
 * costs time, and one that fails matters only if the one-at-a-time search would have
 * reached it. With ahead 1 it evaluates one point at a time, exactly those.
 */
#ifndef TPSIM_FIT_H
#define TPSIM_FIT_H

#include "err.h"

/* Why a search stopped (fit_minimize's *stop). */
typedef enum fit_stop {
    FIT_STOP_NONE,    /* no answer (f failed) */
    FIT_STOP_BRACKET, /* n = 1: the golden-section bracket narrowed to FIT_TOL of its start */
    FIT_STOP_STEP,    /* n = 2, converged: no neighbour at steps under FIT_TOL_STEP of each
                         range is lower */
    FIT_STOP_CAP      /* n = 2: the compass's evaluation cap came first: not converged */
} fit_stop;
/* The convergence step of a two-parameter fit, a fraction of each parameter's range: a
 * tenth of the 1e-3 of the range within which validate calls a fitted value on its bound,
 * so where the search stops never decides that (eager-straggler: a step moves its host time
 * per launch, 0..60 us, by 0.004 us, about 0.02% of a step of 1141 launches). */
#define FIT_TOL_STEP 1e-4
#define FIT_TOL 1e-7

/* "bracket", "step", "cap" (JSON's words); NULL for FIT_STOP_NONE */
const char *fit_stop_name(fit_stop why);
/* the rule in words, for a report: "converged: ..." or "NOT converged: ..." */
const char *fit_stop_rule(fit_stop why);

typedef double (*fit_objective)(const double *x, void *ctx, int *fail);
/* f at m points, xs row-major (n values each), into v[0..m-1]. Returns how many points in
 * order succeeded before the first that failed (m: none failed); the points after a failed
 * one may be left unevaluated. */
typedef int (*fit_objective_many)(const double *xs, int m, void *ctx, double *v);

int fit_minimize(int n, const double *lo, const double *hi, fit_objective f, void *ctx,
                 double *x_best, double *f_best, int *evaluations, fit_stop *stop);
int fit_minimize_many(int n, const double *lo, const double *hi, fit_objective_many f,
                      void *ctx, int ahead, double *x_best, double *f_best, int *evaluations,
                      fit_stop *stop);

#endif
