/* fit.c: see fit.h. */
#include "fit.h"

#include <math.h>

#define FIT_GRID_1D 41
#define FIT_GRID_2D 9
/* evaluations, guards only: the simplex hands a valley it crawls along (an objective flat
 * in one direction never shrinks it) to the compass, whose cap no objective the search can
 * converge on should reach; reaching it is reported, not taken for convergence */
#define FIT_MAX_SIMPLEX 200
#define FIT_MAX_COMPASS 400

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

/* The points the search may read next, handed to f up to ahead at once (all but the first
 * only ahead of need) and read one by one, each read counted: a point f did not reach (one
 * before it failed) is evaluated again alone when read. */
typedef struct fit_next {
    double y[4][2], v[4];
    int m, ok;
} fit_next;

static void fit_next_run(fit_state *s, fit_next *nx, int m)
{
    nx->m = m;
    nx->ok = s->fail ? 0 : fit_batch(s, nx->y[0], s->ahead <= 1 ? 1 : m < s->ahead ? m : s->ahead,
                                     nx->v);
}

static double fit_next_read(fit_state *s, fit_next *nx, int k)
{
    if (k < nx->ok) {
        s->evals++;
        return nx->v[k];
    }
    return fit_eval(s, nx->y[k]);
}

static void fit_clamp(const double *lo, const double *hi, double *y)
{
    for (int d = 0; d < 2; d++) y[d] = fmin(hi[d], fmax(lo[d], y[d]));
}

/* One Nelder-Mead step on the simplex v (values f, best first): reflection, then expansion
 * or a contraction, else a shrink towards the best (Lagarias et al. 1998's rules,
 * coefficients 1, 2, 1/2, 1/2), every point clamped to the box. */
static void fit_simplex_step(fit_state *s, const double *lo, const double *hi, double (*v)[2],
                             double *f)
{
    fit_next nx;
    double c[2];
    static const double coef[4] = {1, 2, 0.5, -0.5}; /* reflect, expand, outside, inside */
    for (int d = 0; d < 2; d++) c[d] = 0.5 * (v[0][d] + v[1][d]);
    for (int k = 0; k < 4; k++) {
        for (int d = 0; d < 2; d++) nx.y[k][d] = c[d] + coef[k] * (c[d] - v[2][d]);
        fit_clamp(lo, hi, nx.y[k]);
    }
    fit_next_run(s, &nx, 4);
    double fr = fit_next_read(s, &nx, 0), fk = INFINITY;
    int take = -1, k = fr < f[0] ? 1 : fr < f[1] ? 0 : fr < f[2] ? 2 : 3;
    if (k) fk = fit_next_read(s, &nx, k);
    if (s->fail) return;
    if (k == 0 || (k == 1 && !(fk < fr))) take = 0;
    else if (k == 1 || (k == 2 && fk <= fr) || (k == 3 && fk < f[2])) take = k;
    if (take >= 0) {
        v[2][0] = nx.y[take][0], v[2][1] = nx.y[take][1], f[2] = take ? fk : fr;
        return;
    }
    for (int i = 1; i < 3; i++)
        for (int d = 0; d < 2; d++) nx.y[i - 1][d] = v[i][d] = v[0][d] + 0.5 * (v[i][d] - v[0][d]);
    fit_next_run(s, &nx, 2);
    f[1] = fit_next_read(s, &nx, 0);
    f[2] = fit_next_read(s, &nx, 1);
}

/* Nelder and Mead's simplex from x (value *fx) with edges of the grid's spacing along the
 * axes (away from a bound), for at most FIT_MAX_SIMPLEX evaluations, until every vertex is
 * within FIT_TOL_STEP of each range of the best. The best into x, *fx; how far the simplex
 * still spreads about it on each axis into spread. */
static void fit_simplex(fit_state *s, const double *lo, const double *hi, double *x, double *fx,
                        double *spread)
{
    double v[3][2] = {{x[0], x[1]}, {x[0], x[1]}, {x[0], x[1]}}, f[3] = {*fx};
    fit_next nx;
    for (int d = 0; d < 2; d++) {
        double h = (hi[d] - lo[d]) / (FIT_GRID_2D - 1);
        v[d + 1][d] = x[d] + h <= hi[d] ? x[d] + h : x[d] - h;
        fit_clamp(lo, hi, v[d + 1]);
        nx.y[d][0] = v[d + 1][0], nx.y[d][1] = v[d + 1][1];
    }
    int start = s->evals;
    fit_next_run(s, &nx, 2);
    f[1] = fit_next_read(s, &nx, 0);
    f[2] = fit_next_read(s, &nx, 1);
    for (;;) {
        for (int i = 1; i < 3; i++) /* best first; ties keep their order */
            for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
                double t0 = v[j][0], t1 = v[j][1], tf = f[j];
                v[j][0] = v[j - 1][0], v[j][1] = v[j - 1][1], f[j] = f[j - 1];
                v[j - 1][0] = t0, v[j - 1][1] = t1, f[j - 1] = tf;
            }
        int small = 1;
        for (int d = 0; d < 2; d++) {
            spread[d] = fmax(fabs(v[1][d] - v[0][d]), fabs(v[2][d] - v[0][d]));
            small &= spread[d] <= FIT_TOL_STEP * (hi[d] - lo[d]);
        }
        if (s->fail || small || s->evals - start >= FIT_MAX_SIMPLEX) break;
        fit_simplex_step(s, lo, hi, v, f);
    }
    if (f[0] < *fx) x[0] = v[0][0], x[1] = v[0][1], *fx = f[0];
}

/* The compass search that certifies the answer: from x, at steps (the grid's spacing halved
 * down to the first power-of-two fraction that covers the simplex's spread), the four
 * neighbours x +- step on each axis (a neighbour the box puts back on x is no neighbour)
 * in turn, moving to the first lower by more than a millionth of the objective; when none
 * is, both steps halve. Converged when none is at steps under FIT_TOL_STEP of each range. */
static fit_stop fit_compass(fit_state *s, const double *lo, const double *hi,
                            const double *spread, double *x, double *fx)
{
    double step[2], tol[2];
    for (int d = 0; d < 2; d++) {
        step[d] = (hi[d] - lo[d]) / (FIT_GRID_2D - 1);
        tol[d] = FIT_TOL_STEP * (hi[d] - lo[d]);
        while (0.5 * step[d] >= spread[d] && step[d] >= tol[d]) step[d] *= 0.5;
    }
    int start = s->evals, last = 0; /* the try (1..4) that moved the step before, 0: none */
    while (!s->fail) {
        if (s->evals - start >= FIT_MAX_COMPASS) return FIT_STOP_CAP;
        /* the tries in order: -x0, +x0, -x1, +x1 */
        double y[4][2], v[4];
        int nt = 0, moved = 0;
        for (int k = 0; k < 4; k++) {
            int dim = k / 2;
            y[nt][0] = x[0], y[nt][1] = x[1];
            y[nt][dim] = fmin(hi[dim], fmax(lo[dim], x[dim] + (k % 2 ? 1 : -1) * step[dim]));
            if (y[nt][dim] != x[dim]) nt++;
        }
        for (int k = 0; k < nt && !moved && !s->fail;) {
            /* ahead: a valley walked one way moves by the same try again */
            int m = s->ahead <= 1 ? 1 : last > k ? last - k : nt - k;
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
        if (moved || s->fail) continue;
        if (step[0] < tol[0] && step[1] < tol[1]) return FIT_STOP_STEP;
        step[0] *= 0.5, step[1] *= 0.5, last = 0;
    }
    return FIT_STOP_NONE;
}

int fit_minimize_many(int n, const double *lo, const double *hi, fit_objective_many f,
                      void *ctx, int ahead, double *x_best, double *f_best, int *evaluations,
                      fit_stop *stop)
{
    fit_state s = {n, f, ctx, ahead, 0, 0};
    fit_stop why = FIT_STOP_BRACKET;
    double best = INFINITY, x[2] = {lo[0], n > 1 ? lo[1] : 0};
    if (n == 1) {
        fit_grid(&s, lo, hi, FIT_GRID_1D, x, &best);
        double h = (hi[0] - lo[0]) / (FIT_GRID_1D - 1);
        fit_golden(&s, fmax(lo[0], x[0] - h), fmin(hi[0], x[0] + h), &x[0], &best);
    } else {
        fit_grid(&s, lo, hi, FIT_GRID_2D, x, &best);
        double spread[2];
        fit_simplex(&s, lo, hi, x, &best, spread);
        why = fit_compass(&s, lo, hi, spread, x, &best);
    }
    if (evaluations) *evaluations = s.evals;
    if (stop) *stop = s.fail ? FIT_STOP_NONE : why;
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
                 double *x_best, double *f_best, int *evaluations, fit_stop *stop)
{
    fit_one o = {n, f, ctx};
    return fit_minimize_many(n, lo, hi, fit_one_many, &o, 1, x_best, f_best, evaluations, stop);
}

const char *fit_stop_name(fit_stop why)
{
    return why == FIT_STOP_BRACKET ? "bracket"
           : why == FIT_STOP_STEP  ? "step"
           : why == FIT_STOP_CAP   ? "cap"
                                   : NULL;
}

const char *fit_stop_rule(fit_stop why)
{
    if (why == FIT_STOP_BRACKET) return "converged: golden-section bracket under 1e-7 of its start";
    if (why == FIT_STOP_STEP)
        return "converged: no neighbour a step under 1e-4 of each range away is lower";
    return why == FIT_STOP_CAP ? "NOT converged: stopped at the evaluation cap" : "no fit";
}
