/* fit.c: see fit.h. */
#include "fit.h"

#include <math.h>

#define FIT_GRID_1D 41
#define FIT_GRID_2D 9
#define FIT_MAX_COMPASS 400 /* evaluations: a flat or noisy valley must not walk forever */
#define FIT_TOL_COMPASS 1e-5
#define FIT_TOL 1e-7

typedef struct fit_state {
    int n;
    fit_objective f;
    void *ctx;
    int fail, evals;
} fit_state;

static double fit_eval(fit_state *s, const double *x)
{
    if (s->fail) return INFINITY;
    s->evals++;
    double v = s->f(x, s->ctx, &s->fail);
    return s->fail || isnan(v) ? INFINITY : v;
}

static void fit_golden(fit_state *s, double a, double b, double *x, double *fx)
{
    const double g = 0.6180339887498949; /* (sqrt 5 - 1) / 2 */
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = fit_eval(s, &c), fd = fit_eval(s, &d);
    double tol = FIT_TOL * (b - a);
    while (b - a > tol && !s->fail) {
        if (fc <= fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            fc = fit_eval(s, &c);
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            fd = fit_eval(s, &d);
        }
    }
    double m = fc <= fd ? c : d, fm = fc <= fd ? fc : fd;
    if (fm < *fx) *x = m, *fx = fm;
}

static void fit_compass(fit_state *s, const double *lo, const double *hi, double *x, double *fx)
{
    double step[2] = {(hi[0] - lo[0]) / (FIT_GRID_2D - 1), (hi[1] - lo[1]) / (FIT_GRID_2D - 1)};
    int start = s->evals;
    while (!s->fail && s->evals - start < FIT_MAX_COMPASS &&
           (step[0] > FIT_TOL_COMPASS * (hi[0] - lo[0]) || step[1] > FIT_TOL_COMPASS * (hi[1] - lo[1]))) {
        int moved = 0;
        for (int dim = 0; dim < 2 && !moved; dim++)
            for (int sign = -1; sign <= 1 && !moved; sign += 2) {
                double y[2] = {x[0], x[1]};
                y[dim] = fmin(hi[dim], fmax(lo[dim], y[dim] + sign * step[dim]));
                double fy = fit_eval(s, y);
                /* a gain below a millionth is no move: along a flat valley it would walk on */
                if (fy < *fx - 1e-6 * fabs(*fx)) x[0] = y[0], x[1] = y[1], *fx = fy, moved = 1;
            }
        if (!moved) step[0] *= 0.5, step[1] *= 0.5;
    }
}

int fit_minimize(int n, const double *lo, const double *hi, fit_objective f, void *ctx,
                 double *x_best, double *f_best, int *evaluations)
{
    fit_state s = {n, f, ctx, 0, 0};
    double best = INFINITY, x[2] = {lo[0], n > 1 ? lo[1] : 0};
    if (n == 1) {
        for (int i = 0; i < FIT_GRID_1D; i++) {
            double xi = lo[0] + (hi[0] - lo[0]) * i / (FIT_GRID_1D - 1);
            double v = fit_eval(&s, &xi);
            if (v < best) best = v, x[0] = xi;
        }
        double h = (hi[0] - lo[0]) / (FIT_GRID_1D - 1);
        fit_golden(&s, fmax(lo[0], x[0] - h), fmin(hi[0], x[0] + h), &x[0], &best);
    } else {
        for (int i = 0; i < FIT_GRID_2D; i++)
            for (int j = 0; j < FIT_GRID_2D; j++) {
                double y[2] = {lo[0] + (hi[0] - lo[0]) * i / (FIT_GRID_2D - 1),
                               lo[1] + (hi[1] - lo[1]) * j / (FIT_GRID_2D - 1)};
                double v = fit_eval(&s, y);
                if (v < best) best = v, x[0] = y[0], x[1] = y[1];
            }
        fit_compass(&s, lo, hi, x, &best);
    }
    if (evaluations) *evaluations = s.evals;
    if (s.fail) return -1;
    for (int i = 0; i < n; i++) x_best[i] = x[i];
    *f_best = best;
    return 0;
}
