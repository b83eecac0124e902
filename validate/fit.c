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
    fit_objective_many f;
    void *ctx;
    int ahead;
    int fail, evals;
} fit_state;

/* Evaluate m points (rows of s->n); returns how many are usable in order, NaN read as
 * INFINITY. The caller counts each point as it reads it, the failed one included, as the
 * one-at-a-time search counts its calls. */
static int fit_batch(fit_state *s, const double *xs, int m, double *v)
{
    if (s->fail) return 0;
    int ok = s->f(xs, m, s->ctx, v);
    for (int j = 0; j < ok; j++)
        if (isnan(v[j])) v[j] = INFINITY;
    return ok;
}

/* One point, counted. */
static double fit_eval(fit_state *s, const double *x)
{
    double v;
    if (s->fail) return INFINITY;
    s->evals++;
    if (fit_batch(s, x, 1, &v) < 1) {
        s->fail = 1;
        return INFINITY;
    }
    return v;
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

/* The coarse grid: g points per axis over n axes, read in row-major order; the best into
 * x, *best. All at once when evaluating ahead, else one by one. */
static void fit_grid(fit_state *s, const double *lo, const double *hi, int g, double *x,
                     double *best)
{
    double xs[FIT_GRID_1D * 2], v[FIT_GRID_1D];
    int total = s->n == 1 ? g : g * g, chunk = s->ahead > 1 ? g : 1;
    for (int k0 = 0; k0 < total && !s->fail; k0 += chunk) {
        int m = total - k0 < chunk ? total - k0 : chunk;
        for (int j = 0; j < m; j++) {
            int k = k0 + j, i = s->n == 1 ? k : k / g, jj = k % g;
            xs[j * s->n] = lo[0] + (hi[0] - lo[0]) * i / (g - 1);
            if (s->n > 1) xs[j * s->n + 1] = lo[1] + (hi[1] - lo[1]) * jj / (g - 1);
        }
        int ok = fit_batch(s, xs, m, v);
        for (int j = 0; j < m; j++) {
            s->evals++;
            if (j >= ok) {
                s->fail = 1;
                break;
            }
            if (v[j] < *best) {
                *best = v[j];
                for (int d = 0; d < s->n; d++) x[d] = xs[j * s->n + d];
            }
        }
    }
}

static void fit_compass(fit_state *s, const double *lo, const double *hi, double *x, double *fx)
{
    double step[2] = {(hi[0] - lo[0]) / (FIT_GRID_2D - 1), (hi[1] - lo[1]) / (FIT_GRID_2D - 1)};
    int start = s->evals, last = 0; /* the try (1..4) that moved the step before, 0: none */
    while (!s->fail && s->evals - start < FIT_MAX_COMPASS &&
           (step[0] > FIT_TOL_COMPASS * (hi[0] - lo[0]) ||
            step[1] > FIT_TOL_COMPASS * (hi[1] - lo[1]))) {
        /* the tries in order: -x0, +x0, -x1, +x1 */
        double y[4][2], v[4];
        for (int k = 0; k < 4; k++) {
            int dim = k / 2;
            y[k][0] = x[0], y[k][1] = x[1];
            y[k][dim] = fmin(hi[dim], fmax(lo[dim], y[k][dim] + (k % 2 ? 1 : -1) * step[dim]));
        }
        int moved = 0;
        for (int k = 0; k < 4 && !moved && !s->fail;) {
            /* ahead: a valley walked one way moves by the same try again */
            int m = s->ahead <= 1 ? 1 : last > k ? last - k : 4 - k;
            int ok = fit_batch(s, y[k], m, v);
            for (int j = 0; j < m; j++, k++) {
                s->evals++;
                if (j >= ok) {
                    s->fail = 1;
                    break;
                }
                /* a gain below a millionth is no move: along a flat valley it would walk on */
                if (v[j] < *fx - 1e-6 * fabs(*fx)) {
                    x[0] = y[k][0], x[1] = y[k][1], *fx = v[j], moved = 1, last = k + 1;
                    break;
                }
            }
        }
        if (!moved) step[0] *= 0.5, step[1] *= 0.5, last = 0;
    }
}

int fit_minimize_many(int n, const double *lo, const double *hi, fit_objective_many f,
                      void *ctx, int ahead, double *x_best, double *f_best, int *evaluations)
{
    fit_state s = {n, f, ctx, ahead, 0, 0};
    double best = INFINITY, x[2] = {lo[0], n > 1 ? lo[1] : 0};
    if (n == 1) {
        fit_grid(&s, lo, hi, FIT_GRID_1D, x, &best);
        double h = (hi[0] - lo[0]) / (FIT_GRID_1D - 1);
        fit_golden(&s, fmax(lo[0], x[0] - h), fmin(hi[0], x[0] + h), &x[0], &best);
    } else {
        fit_grid(&s, lo, hi, FIT_GRID_2D, x, &best);
        fit_compass(&s, lo, hi, x, &best);
    }
    if (evaluations) *evaluations = s.evals;
    if (s.fail) return -1;
    for (int i = 0; i < n; i++) x_best[i] = x[i];
    *f_best = best;
    return 0;
}

/* fit_minimize's one-point objective as a many-point one */
typedef struct fit_one {
    int n;
    fit_objective f;
    void *ctx;
} fit_one;

static int fit_one_many(const double *xs, int m, void *ctx, double *v)
{
    fit_one *o = ctx;
    for (int j = 0; j < m; j++) {
        int fail = 0;
        v[j] = o->f(xs + (size_t)j * (size_t)o->n, o->ctx, &fail);
        if (fail) return j;
    }
    return m;
}

int fit_minimize(int n, const double *lo, const double *hi, fit_objective f, void *ctx,
                 double *x_best, double *f_best, int *evaluations)
{
    fit_one o = {n, f, ctx};
    return fit_minimize_many(n, lo, hi, fit_one_many, &o, 1, x_best, f_best, evaluations);
}
