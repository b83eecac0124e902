/* interval.c: the 95% interval of each prediction (the fit region's boundary, searched
 * along rays) and the one-at-a-time sensitivity of the step to each declared knob; see
 * val_impl.h. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"
#include "val_impl.h"

/* ----------------------------------------------------------- intervals ------------ */

/* Student's t, two-sided 95% (0.975 quantile), 1..30 degrees of freedom (NIST/SEMATECH
 * e-Handbook of Statistical Methods, section 1.3.6.7.2, critical values of the t
 * distribution); z beyond. */
static double val_t975(int dof)
{
    static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return dof >= 1 && dof <= 30 ? t[dof - 1] : VAL_Z95;
}

val_scale val_error_scale(double objective, int n_cal, int n_fit, double meas_cv)
{
    val_scale s = {.meas_cv = meas_cv, .fit_rms = NAN, .dof = n_cal - n_fit, .q = VAL_Z95};
    if (s.dof > 0) {
        s.fit_rms = sqrt(fmax(0.0, objective) / s.dof);
        s.model_cv = sqrt(fmax(0.0, s.fit_rms * s.fit_rms - meas_cv * meas_cv));
        s.estimated = 1;
        if (s.model_cv > 0) s.q = val_t975(s.dof);
    }
    s.cv = sqrt(meas_cv * meas_cv + s.model_cv * s.model_cv);
    return s;
}

void val_pred_interval(double p, double fit_lo, double fit_hi, const val_scale *s, double *lo,
                       double *hi)
{
    double noise = s->q * s->cv * p;
    *lo = p - sqrt((p - fit_lo) * (p - fit_lo) + noise * noise);
    *hi = p + sqrt((fit_hi - p) * (fit_hi - p) + noise * noise);
}

double val_region_threshold(double objective, const val_scale *s)
{
    return objective + s->q * s->q * s->cv * s->cv;
}


static void val_band_add(val_report *r, int fold, const double *preds, val_band *b)
{
    for (size_t i = 0; i < r->n_cells; i++) {
        if (r->cells[i].fold != fold || isnan(preds[i])) continue;
        b->lo[i] = fmin(b->lo[i], preds[i]);
        b->hi[i] = fmax(b->hi[i], preds[i]);
    }
}

/* The farthest point x + t u (0 <= t <= t_max) whose objective stays within threshold.
 * Near a minimum the rise is quadratic in t, so sqrt(rise) is linear: a step rescales t by
 * sqrt(wanted rise / rise at t), aimed a little inside, exact for a quadratic valley; a
 * flat direction grows t sixteen-fold. Once a point inside and one outside are known, a
 * proposal outside that bracket (a hinge, not a bowl) is replaced by the bracket's
 * midpoint. It stops at 0.1% of t; the result is the last point found inside. */
static int val_boundary(val_ctx *c, const double *x, const double *u, double t0, double t_max,
                        double f_min, double threshold, double *out, double *t_found)
{
    int n = c->spec->n_fit_params, fail = 0;
    double y[SCN_MAX_FIT], t = fmin(t0, t_max), t_in = 0, t_out = INFINITY, want = threshold - f_min;
    const scenario_fit_param *fp = c->spec->fit_params;
    for (int it = 0; it < VAL_BISECT; it++) {
        /* clamped: at the box edge t * u may round a hair outside the bounds */
        for (int i = 0; i < n; i++) y[i] = fmin(fp[i].hi, fmax(fp[i].lo, x[i] + t * u[i]));
        double rise = val_objective(y, c, &fail) - f_min;
        if (fail) return -1;
        if (rise <= want) t_in = fmax(t_in, t);
        else t_out = fmin(t_out, t);
        if (t_in >= t_max || (!isinf(t_out) && t_out - t_in <= 1e-3 * t_out)) break;
        double next = rise > 0 ? t * sqrt(want / rise) : 16 * t;
        if (rise <= want && next <= t * (1 + 1e-3)) break; /* converged from inside */
        next *= 1 - 1e-4;
        if (isinf(t_out)) next = fmin(next, 16 * t);
        else if (!(next > t_in && next < t_out)) next = 0.5 * (t_in + t_out);
        t = fmin(next, t_max);
    }
    for (int i = 0; i < n; i++) out[i] = fmin(fp[i].hi, fmax(fp[i].lo, x[i] + t_in * u[i]));
    if (t_found) *t_found = t_in;
    return 0;
}

/* The largest t with x + t u inside the box (INFINITY for u = 0). */
static double val_ray_max(const scenario *spec, const double *x, const double *u)
{
    double t_max = INFINITY;
    for (int i = 0; i < spec->n_fit_params; i++) {
        if (u[i] == 0) continue;
        double edge = u[i] > 0 ? spec->fit_params[i].hi : spec->fit_params[i].lo;
        t_max = fmin(t_max, (edge - x[i]) / u[i]);
    }
    return t_max;
}

/* One boundary point along u from the fit, its predictions added to the band. */
static int val_ray(val_ctx *c, int f, const double *u, double t0, val_band *band, double *preds,
                   double *t_found, tp_err *err)
{
    val_fold *fd = &c->r->folds[f];
    double t_max = val_ray_max(c->spec, fd->fitted, u), end[SCN_MAX_FIT];
    double threshold = val_region_threshold(fd->objective, &fd->scale);
    if (t_found) *t_found = 0;
    if (!(t_max > 0) || isinf(t_max)) return 0; /* the optimum sits on this edge */
    c->fold = fd;
    if (val_boundary(c, fd->fitted, u, t0 > 0 ? t0 : 1e-3 * t_max, t_max, fd->objective, threshold,
                     end, t_found))
        return -1;
    for (int i = 0; i < c->spec->n_fit_params; i++) {
        fd->lo[i] = fmin(fd->lo[i], end[i]);
        fd->hi[i] = fmax(fd->hi[i], end[i]);
    }
    if (fd->n_bound < VAL_MAX_BOUND)
        memcpy(fd->bound[fd->n_bound++], end, sizeof fd->bound[0]);
    /* the predictions are monotone along a ray in every shipped model, so the extremes over
     * the accepted set lie on its boundary */
    if (val_predict_fold(c, f, end, NULL, NULL, 0, 0, preds, NULL, NULL, err)) return -1;
    val_band_add(c->r, f, preds, band);
    return 0;
}

/* Profile-likelihood range of every prediction of one fold: the accepted set is
 * {theta : objective(theta) <= objective* + chi2_95 * cv^2}, and for a scalar prediction
 * the 95% profile interval is its range over that set, reached on the boundary. One
 * parameter: the set's two ends. Two: its ends along each axis first, which with one
 * diagonal probe give the local quadratic (Hessian) of the objective; then VAL_RAYS rays
 * spread evenly around that ellipse (not around the box, where a long thin valley would
 * fall between rays), each refined on the true objective. */
int val_interval_fold(val_ctx *c, int f, val_band *band, double *preds, tp_err *err)
{
    val_report *r = c->r;
    val_fold *fd = &r->folds[f];
    const scenario *spec = c->spec;
    int n = spec->n_fit_params, fail = 0;
    for (int i = 0; i < n; i++) fd->lo[i] = fd->hi[i] = fd->fitted[i];
    if (n == 0) return 0;
    double want = val_region_threshold(0.0, &fd->scale), range[SCN_MAX_FIT], reach[SCN_MAX_FIT];
    for (int i = 0; i < n; i++) range[i] = spec->fit_params[i].hi - spec->fit_params[i].lo;
    /* the two ends along each axis (in box units) */
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int sign = -1; sign <= 1; sign += 2) {
            double u[SCN_MAX_FIT] = {0, 0}, t;
            u[i] = sign * range[i];
            if (val_ray(c, f, u, 0, band, preds, &t, err)) return -1;
            sum += t;
        }
        /* a flat axis (the box edge inside the set) counts as reaching one box range */
        reach[i] = fmax(0.5 * sum, 1e-9);
    }
    if (n == 1) return 0;
    /* the quadratic rise/want = a p^2 + 2 b p q + d q^2 in box units p, q */
    double a = 1 / (reach[0] * reach[0]), d = 1 / (reach[1] * reach[1]), b = 0;
    double p = 0.5 * reach[0], q = 0.5 * reach[1], y[SCN_MAX_FIT], rise[2];
    c->fold = fd;
    for (int k = 0; k < 2; k++) {
        double qq = k ? -q : q;
        y[0] = fd->fitted[0] + p * range[0];
        y[1] = fd->fitted[1] + qq * range[1];
        int inside = y[0] >= spec->fit_params[0].lo && y[0] <= spec->fit_params[0].hi &&
                     y[1] >= spec->fit_params[1].lo && y[1] <= spec->fit_params[1].hi;
        rise[k] = inside ? (val_objective(y, c, &fail) - fd->objective) / want : NAN;
        if (fail) return -1;
    }
    if (!isnan(rise[0]) && !isnan(rise[1])) b = (rise[0] - rise[1]) / (4 * p * q);
    /* eigen-decomposition of [[a, b], [b, d]], eigenvalues kept positive */
    double tr = a + d, det = a * d - b * b, disc = sqrt(fmax(0, 0.25 * tr * tr - det));
    double l1 = 0.5 * tr + disc, l2 = 0.5 * tr - disc, floor_l = 1e-6 * l1;
    if (!(l2 > floor_l)) l2 = floor_l;
    double e1[2] = {b, l1 - a};
    if (fabs(b) < 1e-300 * (fabs(a) + fabs(d))) e1[0] = a >= d ? 1 : 0, e1[1] = a >= d ? 0 : 1;
    double norm = hypot(e1[0], e1[1]);
    e1[0] /= norm, e1[1] /= norm;
    double e2[2] = {-e1[1], e1[0]};
    for (int k = 0; k < VAL_RAYS; k++) {
        double th = VAL_TWO_PI * (k + 0.5) / VAL_RAYS, w[2], u[SCN_MAX_FIT];
        for (int i = 0; i < 2; i++)
            w[i] = cos(th) / sqrt(l1) * e1[i] + sin(th) / sqrt(l2) * e2[i];
        for (int i = 0; i < 2; i++) u[i] = w[i] * range[i];
        if (val_ray(c, f, u, 1.0, band, preds, NULL, err)) return -1; /* t = 1: the ellipse */
    }
    return 0;
}

/* --------------------------------------------------------- sensitivity ------------ */

/* One assumed number; `inherited` is its value when it comes from a file the scenario
 * names (the hardware file's assumed:, decl.h) and the scenario does not set the key,
 * else NAN (the value is the document's). */
static int val_sens_add(val_report *r, const char *key, const char *note, cfg_doc *doc,
                        double inherited, tp_err *err)
{
    for (int i = 0; i < r->n_sens; i++)
        if (!strcmp(r->sens[i].key, key)) return 0;
    const cfg_node *n = cfg_find(cfg_root(doc), key);
    if (n && !val_is_number(n)) return 0; /* a --set on a string or a flag moves nothing */
    if (!n && isnan(inherited)) return 0;
    val_sens *s = &r->sens[r->n_sens];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->note, sizeof s->note, "%s", note);
    s->value = n ? strtod(n->text, NULL) : inherited;
    s->minus_ms = calloc(r->n_cells, sizeof *s->minus_ms);
    s->plus_ms = calloc(r->n_cells, sizeof *s->plus_ms);
    r->n_sens++;
    if (!s->minus_ms || !s->plus_ms) return tp_err_set(err, "out of memory");
    return 0;
}

/* The value moved by frac; integers stay integers. */
static void val_sens_value(const cfg_node *n, double v, double frac, char *out, size_t cap)
{
    int integer = n && !strpbrk(n->text, ".eE");
    if (integer) snprintf(out, cap, "%ld", lround(v * (1.0 + frac)));
    else snprintf(out, cap, "%.17g", v * (1.0 + frac));
}

int val_sensitivity(val_ctx *c, double *preds, tp_err *err)
{
    val_report *r = c->r;
    const scenario *spec = c->spec;
    r->sens = calloc(SCN_MAX_DECLS + SCN_OPTS_MAX_SETS + DECL_MAX, sizeof *r->sens);
    if (!r->sens) return tp_err_set(err, "out of memory");
    for (int i = 0; i < spec->n_decls; i++)
        if (spec->decls[i].assumed &&
            val_sens_add(r, spec->decls[i].key, spec->decls[i].note, c->doc, NAN, err))
            return -1;
    for (int k = 0; k < c->opts->n_sets; k++) {
        char key[192];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(c->opts->sets[k], "="), c->opts->sets[k]);
        if (val_sens_add(r, key, "set on the command line", c->doc, NAN, err)) return -1;
    }
    /* the hardware file's assumed numbers that reach the prediction: those the scenario's
     * gpu: does not replace (a replaced one is the scenario's, declared there); with
     * kernels: every GPU op's time is the calibration's, so only the launch latency reaches it */
    static const char *const hw_keys[][2] = {{"kernel_fixed_us", "gpu.kernel_fixed_us"},
                                             {"launch_latency_us", "gpu.launch_latency_us"},
                                             {"hbm_efficiency", "gpu.hbm_efficiency"},
                                             {"flops_efficiency", "gpu.flops_efficiency"}};
    const decl_list *hd = &spec->hw.assumed;
    for (int i = 0; i < hd->n; i++)
        for (size_t k = 0; k < sizeof hw_keys / sizeof hw_keys[0]; k++) {
            if (strcmp(hd->items[i].key, hw_keys[k][0]) || cfg_find(cfg_root(c->doc), hw_keys[k][1]))
                continue;
            if (spec->has_kernels && strcmp(hw_keys[k][0], "launch_latency_us")) continue;
            char note[400];
            snprintf(note, sizeof note, "%s:%d:%d: %s", hd->file, hd->items[i].line,
                     hd->items[i].col, hd->items[i].why);
            if (val_sens_add(r, hw_keys[k][1], note, c->doc, hd->items[i].value, err)) return -1;
        }
    for (int s = 0; s < r->n_sens; s++) {
        val_sens *vs = &r->sens[s];
        const cfg_node *n = cfg_find(cfg_root(c->doc), vs->key);
        char orig[192], assign[320], val[64];
        /* an inherited value is restored by setting the key to it: the same number */
        if (n) snprintf(orig, sizeof orig, "%s=%s", vs->key, n->text);
        else snprintf(orig, sizeof orig, "%s=%.17g", vs->key, vs->value);
        for (size_t i = 0; i < r->n_cells; i++) vs->minus_ms[i] = vs->plus_ms[i] = NAN;
        for (int sign = -1; sign <= 1; sign += 2) {
            val_sens_value(n, vs->value, sign * VAL_SENS_FRAC, val, sizeof val);
            snprintf(assign, sizeof assign, "%s=%s", vs->key, val);
            for (int f = 0; f < r->n_folds; f++) {
                tp_err moved = {{0}};
                /* a moved value the scenario refuses (a fraction past 1) leaves NAN */
                if (val_predict_fold(c, f, r->folds[f].fitted, assign, "sensitivity", 1, 1, preds,
                                     NULL, NULL, &moved))
                    continue;
                for (size_t i = 0; i < r->n_cells; i++)
                    if (r->cells[i].fold == f && r->cells[i].role == VAL_HELDOUT)
                        (sign < 0 ? vs->minus_ms : vs->plus_ms)[i] = preds[i];
            }
            if (cfg_set_at(c->doc, orig, "sensitivity", 1, 1, err)) return -1;
        }
    }
    return 0;
}
