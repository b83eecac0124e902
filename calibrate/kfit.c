/* kfit.c: see kfit.h. Units inside the fit: microseconds, megabytes, GFLOP (the normal
 * equations stay well scaled). */
#include "kfit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KF_MAXP 3

/* Row i's feature vector for a law: the columns its coefficients multiply. */
static int kf_features(int kind, const kp_sample *s, int mem_side, double *x)
{
    double mb = s->bytes * 1e-6, gf = s->flops * 1e-9;
    x[0] = 1.0;
    switch (kind) {
    case KL_CONST: return 1;
    case KL_LINEAR: x[1] = mb; return 2;
    case KL_ROW: x[1] = mb, x[2] = s->batch > 0 ? gf / s->batch : 0; return 3;
    case KL_SEQ: x[1] = mb, x[2] = s->batch; return 3;
    case KL_SUM: x[1] = mb, x[2] = gf; return 3;
    default: /* roofline: the side that binds (2: both, the sum, to start from) */
        x[1] = mem_side ? mb : 0, x[2] = mem_side != 1 ? gf : 0;
        return 3;
    }
}

static void kf_to_law(int kind, const double *c, kcal_law *l)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->t0_s = c[0] * 1e-6;
    if (kind == KL_CONST) return;
    l->s_per_byte = c[1] * 1e-12; /* us per MB */
    if (kind == KL_ROW) l->s_per_row_flop = c[2] * 1e-15; /* us per GFLOP */
    if (kind == KL_SEQ) l->s_per_seq = c[2] * 1e-6;
    if (kind == KL_ROOFLINE || kind == KL_SUM) l->s_per_flop = c[2] * 1e-15; /* us per GFLOP */
}

/* Solve the weighted normal equations over the active columns; 0 on success. */
static int kf_solve(const kp_sample *const *rows, size_t n, int kind, const unsigned char *side,
                    const int *active, int p, double *c)
{
    double A[KF_MAXP][KF_MAXP + 1] = {{0}};
    for (size_t i = 0; i < n; i++) {
        double x[KF_MAXP], y = rows[i]->us, w = rows[i]->w / (y * y);
        kf_features(kind, rows[i], side ? side[i] : 1, x);
        for (int a = 0; a < p; a++) {
            if (!active[a]) continue;
            for (int b = 0; b < p; b++)
                if (active[b]) A[a][b] += w * x[a] * x[b];
            A[a][p] += w * x[a] * y;
        }
    }
    int on[KF_MAXP];
    for (int a = 0; a < p; a++) on[a] = active[a] && A[a][a] > 0; /* an all-zero column: no term */
    for (int a = 0; a < p; a++)
        if (!on[a]) {
            for (int b = 0; b <= p; b++) A[a][b] = 0;
            A[a][a] = 1;
        }
    for (int col = 0; col < p; col++) { /* Gaussian elimination, partial pivoting */
        int piv = col;
        for (int r = col + 1; r < p; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col])) piv = r;
        if (fabs(A[piv][col]) < 1e-300) return -1;
        for (int b = 0; b <= p; b++) {
            double t = A[col][b];
            A[col][b] = A[piv][b];
            A[piv][b] = t;
        }
        for (int r = 0; r < p; r++) {
            if (r == col) continue;
            double f = A[r][col] / A[col][col];
            for (int b = col; b <= p; b++) A[r][b] -= f * A[col][b];
        }
    }
    for (int a = 0; a < p; a++) c[a] = on[a] ? A[a][p] / A[a][a] : 0.0;
    return 0;
}

/* Least squares with every coefficient >= 0: drop the most negative and refit. */
static int kf_nonneg(const kp_sample *const *rows, size_t n, int kind, const unsigned char *side,
                     double *c)
{
    double x[KF_MAXP];
    int p = kf_features(kind, rows[0], 1, x), active[KF_MAXP] = {1, 1, 1};
    for (int it = 0; it < p; it++) {
        if (kf_solve(rows, n, kind, side, active, p, c)) return -1;
        int worst = -1;
        for (int a = 0; a < p; a++)
            if (active[a] && c[a] < 0 && (worst < 0 || c[a] < c[worst])) worst = a;
        if (worst < 0) return 0;
        active[worst] = 0;
    }
    for (int a = 0; a < p; a++) c[a] = 0;
    return 0;
}

static double kf_time_us(const kcal_law *l, const kp_sample *s)
{
    return 1e6 * kcal_law_time(l, s->bytes, s->flops, s->batch);
}

static double kf_rel_sse(const kp_sample *const *rows, size_t n, const kcal_law *l)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (kf_time_us(l, rows[i]) - rows[i]->us) / rows[i]->us;
        e += rows[i]->w * r * r;
    }
    return e;
}

/* ---- smooth and tiled: t = t0 + qnorm(a * MB, b * GFLOP, q), fitted by Levenberg-Marquardt
 * on p = (t0, ln a, ln b, ln(q - 1)): the rates stay positive and q > 1 without bounds.
 * floor is the same fit with the FLOP feature replaced by 1 and t0 held at 0: then
 * t = qnorm(a * MB, b, q), b the floor in us. */
#define KF_NP 4

/* Solve A x = A[.][KF_NP] by elimination with partial pivoting; -1 when singular. */
static int kf_gauss(double A[KF_NP][KF_NP + 1], double *x)
{
    for (int col = 0; col < KF_NP; col++) {
        int piv = col;
        for (int r = col + 1; r < KF_NP; r++)
            if (fabs(A[r][col]) > fabs(A[piv][col])) piv = r;
        if (!(fabs(A[piv][col]) > 1e-300)) return -1;
        for (int b = 0; b <= KF_NP; b++) {
            double t = A[col][b];
            A[col][b] = A[piv][b];
            A[piv][b] = t;
        }
        for (int r = 0; r < KF_NP; r++) {
            if (r == col) continue;
            double f = A[r][col] / A[col][col];
            for (int b = col; b <= KF_NP; b++) A[r][b] -= f * A[col][b];
        }
    }
    for (int a = 0; a < KF_NP; a++) x[a] = A[a][KF_NP] / A[a][a];
    return 0;
}

typedef struct kf_qrow {
    double m, f, y, w; /* MB, (padded) GFLOP, measured us, weight / y^2 */
} kf_qrow;

static void kf_qlaw(int kind, const double *p, kcal_law *l)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->t0_s = p[0] * 1e-6;
    l->s_per_byte = exp(p[1]) * 1e-12;
    l->s_per_flop = exp(p[2]) * 1e-15;
    l->q = 1.0 + exp(p[3]);
    if (kind == KL_TILED) l->tile_m = KCAL_TILE_M;
    if (kind == KL_FLOOR) l->t0_s = exp(p[2]) * 1e-6, l->s_per_flop = 0;
}

/* The parameters' exponentials, once per evaluation of every row: q, exp(p1), exp(p2). */
typedef struct kf_qpar {
    double t0, q, a, c;
} kf_qpar;

static kf_qpar kf_qpar_of(const double *p)
{
    return (kf_qpar){p[0], 1.0 + exp(p[3]), exp(p[1]), exp(p[2])};
}

/* The model's time and, when g is given, its gradient in p. The q-norm as kcal_qnorm computes
 * it (the same operations, so the same bits), its smaller side's r^q computed once. */
static double kf_qeval(const kf_qpar *e, const kf_qrow *r, double *g)
{
    double q = e->q, A = e->a * r->m, C = e->c * r->f;
    double M = A > C ? A : C, rr = A > C ? C / A : A / C;
    if (M <= 0) {
        if (g) g[0] = 1.0, g[1] = g[2] = g[3] = 0.0;
        return e->t0;
    }
    double rq = pow(rr, q), P = M * pow(1.0 + rq, 1.0 / q);
    if (!g) return e->t0 + P;
    g[0] = 1.0;
    double x = A / M, y = C / M, xq = x == 1.0 ? 1.0 : rq, yq = y == 1.0 ? 1.0 : rq;
    if (x != 1.0 && x != rr) xq = pow(x, q); /* never: the smaller side's ratio is rr */
    if (y != 1.0 && y != rr) yq = pow(y, q);
    double S = xq + yq, lx = x > 0 && x != 1.0 ? xq * log(x) : 0.0;
    double ly = y > 0 && y != 1.0 ? yq * log(y) : 0.0;
    g[1] = A * pow(A / P, q - 1.0);
    g[2] = C * pow(C / P, q - 1.0);
    g[3] = P * (-log(S) / (q * q) + (lx + ly) / (q * S)) * (q - 1.0);
    return e->t0 + P;
}

static double kf_qcost(const kf_qrow *r, size_t n, const double *p)
{
    kf_qpar e = kf_qpar_of(p);
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double d = kf_qeval(&e, &r[i], NULL) - r[i].y;
        sse += r[i].w * d * d;
    }
    return sse;
}

/* One damped Gauss-Newton step from p; 0 when it lowered the cost (p, *cost updated). */
static int kf_qstep(const kf_qrow *r, size_t n, double *p, double *cost, double *lambda, int pin0)
{
    double JJ[KF_NP][KF_NP] = {{0}}, Jr[KF_NP] = {0}, g[KF_NP];
    kf_qpar e = kf_qpar_of(p);
    for (size_t i = 0; i < n; i++) {
        double d = kf_qeval(&e, &r[i], g) - r[i].y;
        for (int a = 0; a < KF_NP; a++) {
            Jr[a] += r[i].w * g[a] * d;
            for (int b = 0; b < KF_NP; b++) JJ[a][b] += r[i].w * g[a] * g[b];
        }
    }
    for (; *lambda < 1e12; *lambda *= 10) {
        double A[KF_NP][KF_NP + 1], t[KF_NP];
        for (int a = 0; a < KF_NP; a++) {
            for (int b = 0; b < KF_NP; b++)
                A[a][b] = JJ[a][b] + (a == b ? *lambda * JJ[a][a] + 1e-30 : 0);
            A[a][KF_NP] = -Jr[a];
        }
        if (pin0) { /* floor: no additive t0, p[0] stays 0 */
            for (int b = 0; b < KF_NP; b++) A[0][b] = A[b][0] = 0;
            A[0][0] = 1, A[0][KF_NP] = 0;
        }
        if (kf_gauss(A, t)) continue;
        double np[KF_NP];
        for (int a = 0; a < KF_NP; a++) np[a] = p[a] + t[a];
        if (np[0] < 0 || pin0) np[0] = 0; /* the fixed cost is a time: projected onto >= 0 */
        if (np[3] > log(63.0)) np[3] = log(63.0); /* q <= 64: past it, the max */
        double c = kf_qcost(r, n, np);
        if (c < *cost) {
            memcpy(p, np, sizeof np);
            *cost = c;
            *lambda = *lambda > 1e-9 ? *lambda / 10 : *lambda;
            return 0;
        }
    }
    return -1;
}

static int kf_fit_qnorm(const kp_sample *const *rows, size_t n, int kind, kcal_law *out)
{
    double c[KF_MAXP] = {0};
    /* start: the sum's fit (floor: the linear one's t0 as the floor and its bandwidth) */
    if (n <= KF_NP || kf_nonneg(rows, n, kind == KL_FLOOR ? KL_LINEAR : KL_SUM, NULL, c)) return -1;
    kf_qrow *r = malloc(n * sizeof *r);
    if (!r) return -1;
    kcal_law probe = {.kind = kind, .tile_m = KCAL_TILE_M};
    for (size_t i = 0; i < n; i++) {
        double y = rows[i]->us;
        double f = kcal_padded_flops(&probe, rows[i]->flops, rows[i]->batch) * 1e-9;
        if (kind == KL_FLOOR) f = 1.0; /* the floor's constant feature */
        r[i] = (kf_qrow){rows[i]->bytes * 1e-6, f, y, rows[i]->w / (y * y)};
    }
    double p[KF_NP] = {c[0], log(c[1] > 0 ? c[1] : 1e-3), log(c[2] > 0 ? c[2] : 1e-3), 0.0};
    if (kind == KL_FLOOR) p[0] = 0, p[2] = log(c[0] > 1e-3 ? c[0] : 1e-3); /* floor from t0 */
    double cost = kf_qcost(r, n, p), lambda = 1e-3;
    for (int it = 0; it < 200; it++) {
        double before = cost;
        if (kf_qstep(r, n, p, &cost, &lambda, kind == KL_FLOOR) || before - cost < 1e-12 * before)
            break;
    }
    free(r);
    if (!isfinite(cost)) return -1;
    kf_qlaw(kind, p, out);
    return 0;
}

int kf_fit_law(const kp_sample *const *rows, size_t n, int kind, kcal_law *out)
{
    if (kind == KL_SMOOTH || kind == KL_TILED || kind == KL_FLOOR)
        return kf_fit_qnorm(rows, n, kind, out);
    double c[KF_MAXP] = {0}, x[KF_MAXP];
    /* one row more than parameters (kcal.h): a fit through every row has no error to report */
    if (!n || n <= (size_t)kf_features(kind, rows[0], 1, x)) return -1;
    if (kind != KL_ROOFLINE) {
        if (kf_nonneg(rows, n, kind, NULL, c)) return -1;
        kf_to_law(kind, c, out);
        return 0;
    }
    /* roofline: start from the sum of both terms, then alternate: assign each row to the
     * side its fitted terms say binds, refit, until the assignment stops changing */
    unsigned char *side = malloc(n);
    if (!side) return -1;
    memset(side, 2, n);
    kcal_law best = {0}, l;
    double best_e = INFINITY;
    for (int it = 0; it < 50; it++) {
        if (kf_nonneg(rows, n, kind, side, c)) break;
        kf_to_law(kind, c, &l);
        double e = kf_rel_sse(rows, n, &l);
        if (e < best_e && it > 0) best_e = e, best = l;
        int changed = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char m = rows[i]->bytes * l.s_per_byte >= rows[i]->flops * l.s_per_flop ||
                              l.s_per_flop == 0;
            if (l.s_per_byte == 0 && l.s_per_flop > 0) m = 0;
            changed |= m != side[i];
            side[i] = m;
        }
        if (!changed) break;
    }
    free(side);
    if (isinf(best_e)) return -1;
    *out = best;
    return 0;
}

double kf_mape_pct(const kp_sample *const *rows, size_t n, const kcal_law *l)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) e += fabs(kf_time_us(l, rows[i]) - rows[i]->us) / rows[i]->us;
    return n ? 100.0 * e / (double)n : NAN;
}

double kf_wmape_pct(const kp_sample *const *rows, size_t n, const kcal_law *l)
{
    double e = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        e += rows[i]->w * fabs(kf_time_us(l, rows[i]) - rows[i]->us) / rows[i]->us;
        w += rows[i]->w;
    }
    return w > 0 ? 100.0 * e / w : NAN;
}

double kf_r2(const kp_sample *const *rows, size_t n, const kcal_law *l)
{
    double mean = 0, ss = 0, res = 0;
    for (size_t i = 0; i < n; i++) mean += rows[i]->us;
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = rows[i]->us - mean, r = rows[i]->us - kf_time_us(l, rows[i]);
        ss += d * d;
        res += r * r;
    }
    return ss > 0 ? 1.0 - res / ss : (res == 0 ? 1.0 : 0.0);
}

int kf_grid(const kp_sample *const *rows, size_t n, int cls, kg_grid *g, float **cells)
{
    int dims = kg_class_dims(cls, NULL);
    *cells = NULL;
    if (!dims || !n) return -1;
    double (*x)[KG_MAX_DIMS] = malloc(n * sizeof *x), *t = malloc(n * sizeof *t);
    size_t need = 0;
    int rc = -1;
    if (!x || !t) goto out;
    for (size_t i = 0; i < n; i++) {
        memcpy(x[i], rows[i]->gx, sizeof x[i]);
        t[i] = rows[i]->us;
    }
    const double (*cx)[KG_MAX_DIMS] = (const double (*)[KG_MAX_DIMS])x;
    kg_build(cx, t, n, dims, g, NULL, 0, &need); /* sizes it */
    if (!need || !(*cells = malloc(need * sizeof **cells))) goto out;
    rc = kg_build(cx, t, n, dims, g, *cells, need, &need);
out:
    if (rc) free(*cells), *cells = NULL;
    free(x);
    free(t);
    return rc;
}

/* The grid's error on rows (weighted by w), accumulated: a row it cannot read is priced by
 * the fallback law fb, as kcal_time prices it at run time. */
static void kf_grid_err(const kg_grid *g, const float *cells, const kcal_law *fb,
                        const kp_sample *const *rows, size_t n, int fold, double *e, double *w)
{
    for (size_t i = 0; i < n; i++) {
        if (fold >= 0 && rows[i]->fold != fold) continue;
        double p = kg_eval(g, cells, rows[i]->gx);
        if (isnan(p)) p = kf_time_us(fb, rows[i]);
        *e += rows[i]->w * fabs(p - rows[i]->us) / rows[i]->us;
        *w += rows[i]->w;
    }
}

/* The grid as a candidate, out->law (of kind out->chosen) its fallback: its in-sample and
 * held-out errors into out (each fold's fallback fitted on the other folds, as the grid is
 * built on them); 0 when it competes. */
static int kf_grid_candidate(const kp_sample **rows, size_t n, const kp_sample **train,
                             const int *folds, int nf, int cls, kf_class_fit *out)
{
    for (size_t i = 0; i < n; i++)
        if (!(rows[i]->gx[0] > 0)) return -1;
    kg_grid *g = malloc(sizeof *g);
    float *cells = NULL;
    double e = 0, w = 0;
    if (!g || kf_grid(rows, n, cls, g, &cells)) {
        free(g);
        return -1;
    }
    kf_grid_err(g, cells, &out->law, rows, n, -1, &e, &w);
    free(cells);
    out->insample_pct[KL_GRID] = 100.0 * e / w;
    e = w = 0;
    for (int f = 0; f < nf && nf > 1; f++) {
        size_t nt = 0;
        double ef = 0, wf = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i]->fold != folds[f]) train[nt++] = rows[i];
        kcal_law fb;
        if (kf_fit_law(train, nt, out->chosen, &fb) || kf_grid(train, nt, cls, g, &cells)) {
            free(g);
            return -1;
        }
        kf_grid_err(g, cells, &fb, rows, n, folds[f], &ef, &wf);
        free(cells);
        out->fold_pct[KL_GRID][f] = wf > 0 ? 100.0 * ef / wf : -1;
        e += ef, w += wf;
    }
    if (nf > 1) out->heldout_pct[KL_GRID] = 100.0 * e / w;
    free(g);
    return 0;
}

/* Law kind's held-out error over the nf folds into out (heldout_pct, fold_pct): each fold
 * predicted by a fit on the others. -1, with none of it set, when a fold's complement is too
 * small for the law. */
static int kf_heldout(const kp_sample *const *rows, size_t n, const kp_sample **train,
                      const int *folds, int nf, int kind, kf_class_fit *out)
{
    double e = 0, wsum = 0, pct[KF_MAX_FOLDS];
    for (int f = 0; f < nf; f++) {
        size_t nt = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i]->fold != folds[f]) train[nt++] = rows[i];
        kcal_law lf;
        if (kf_fit_law(train, nt, kind, &lf)) return -1;
        double ef = 0, wf = 0;
        for (size_t i = 0; i < n; i++)
            if (rows[i]->fold == folds[f]) {
                double d = kf_time_us(&lf, rows[i]) - rows[i]->us;
                ef += rows[i]->w * fabs(d) / rows[i]->us;
                wf += rows[i]->w;
            }
        pct[f] = wf > 0 ? 100.0 * ef / wf : -1;
        e += ef, wsum += wf;
    }
    memcpy(out->fold_pct[kind], pct, (size_t)nf * sizeof pct[0]);
    out->heldout_pct[kind] = 100.0 * e / wsum;
    return 0;
}

int kf_fit_class(const kp_set *set, int cls, kf_class_fit *out)
{
    memset(out, 0, sizeof *out);
    const kp_sample **rows = malloc((set->n ? set->n : 1) * sizeof *rows);
    const kp_sample **train = malloc((set->n ? set->n : 1) * sizeof *train);
    int *folds = out->fold_id, nf = 0, rc = -1;
    size_t n = 0;
    if (!rows || !train) goto out;
    for (size_t i = 0; i < set->n; i++) {
        if (set->s[i].cls != cls) continue;
        rows[n++] = &set->s[i];
        int seen = 0;
        for (int f = 0; f < nf; f++) seen |= folds[f] == set->s[i].fold;
        if (!seen && nf < KF_MAX_FOLDS) folds[nf++] = set->s[i].fold;
    }
    if (!n) goto out;
    out->n = (int)n;
    out->n_folds = nf;
    /* the attention kernels' time grows with the batch's sequences (one block each); the
     * other classes' candidates are the byte laws and the roofline; the GEMMs' also the
     * smooth roofline and its M-tiled form, tensor-core physics the elementwise ops lack */
    static const int attn_laws[] = {KL_CONST, KL_LINEAR, KL_SEQ, -1};
    static const int op_laws[] = {KL_CONST, KL_LINEAR, KL_ROW, KL_ROOFLINE, KL_SUM, KL_FLOOR, -1};
    static const int gemm_laws[] = {KL_CONST, KL_LINEAR, KL_ROW, KL_ROOFLINE, KL_SUM, KL_SMOOTH,
                                    KL_TILED, -1};
    const int *cand = cls == KC_ATTENTION                     ? attn_laws
                     : cls == KC_GEMM || cls == KC_GEMM_FP8 ? gemm_laws
                                                            : op_laws;
    /* by held-out error among the laws every fold's training rows can fit; when none can (a
     * fold's complement has too few rows, kf_fit_law), by in-sample error among all */
    int best = -1, best_in = -1;
    double best_score = INFINITY, best_in_score = INFINITY;
    for (int k = 0; k < KL_COUNT; k++) {
        out->heldout_pct[k] = out->insample_pct[k] = -1;
        for (int f = 0; f < KF_MAX_FOLDS; f++) out->fold_pct[k][f] = -1;
    }
    for (int ci = 0; cand[ci] >= 0; ci++) {
        int kind = cand[ci];
        kcal_law l;
        if (kf_fit_law(rows, n, kind, &l)) continue;
        out->insample_pct[kind] = kf_wmape_pct(rows, n, &l);
        double score = out->insample_pct[kind];
        if (best_in < 0 || score < best_in_score - 0.01) best_in_score = score, best_in = kind;
        if (nf > 1) {
            if (kf_heldout(rows, n, train, folds, nf, kind, out)) continue;
            score = out->heldout_pct[kind];
        }
        /* a later (richer) law must beat the simpler one by 0.01 points, not by rounding */
        if (best < 0 || score < best_score - 0.01) best_score = score, best = kind;
    }
    out->chosen_by_heldout = nf > 1 && best >= 0;
    if (best < 0) best = best_in, best_score = best_in_score;
    if (best < 0) goto out;
    kf_fit_law(rows, n, best, &out->law);
    out->mape_pct = kf_mape_pct(rows, n, &out->law);
    out->r2 = kf_r2(rows, n, &out->law);
    out->chosen = best;
    if (kf_grid_candidate(rows, n, train, folds, nf, cls, out) == 0) {
        double gs = nf > 1 ? out->heldout_pct[KL_GRID] : out->insample_pct[KL_GRID];
        /* in-sample the grid is exact: with one fold it would always win, so it must be
         * held out, against held-out laws, to be chosen */
        if (out->chosen_by_heldout && gs < best_score - 0.01) out->chosen = KL_GRID;
    }
    rc = 0;
out:
    free(rows);
    free(train);
    return rc;
}
