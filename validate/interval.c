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
 * midpoint. It stops at 0.1% of t; the result is the last point found inside. The search
 * is a state (val_search) stepped by one objective value at a time, so several searches
 * can advance together (val_rays). */
typedef struct val_search {
    const double *x;
    double u[SCN_MAX_FIT];
    double t, t_max, t_in, t_out, f_min, want;
    int it, done;
    double y[SCN_MAX_FIT]; /* the point whose objective the next step reads */
} val_search;

static void val_search_point(val_search *s, const scenario *spec)
{
    const scenario_fit_param *fp = spec->fit_params;
    /* clamped: at the box edge t * u may round a hair outside the bounds */
    for (int i = 0; i < spec->n_fit_params; i++)
        s->y[i] = fmin(fp[i].hi, fmax(fp[i].lo, s->x[i] + s->t * s->u[i]));
}

static void val_search_init(val_search *s, const scenario *spec, const double *x,
                            const double *u, double t0, double t_max, double f_min,
                            double threshold)
{
    memset(s, 0, sizeof *s);
    s->x = x;
    for (int i = 0; i < spec->n_fit_params; i++) s->u[i] = u[i];
    s->t = fmin(t0, t_max), s->t_max = t_max, s->t_out = INFINITY, s->f_min = f_min;
    s->want = threshold - f_min;
    val_search_point(s, spec);
}

/* One step: the objective at s->y. */
static void val_search_step(val_search *s, const scenario *spec, double objective)
{
    double rise = objective - s->f_min, t = s->t;
    if (rise <= s->want) s->t_in = fmax(s->t_in, t);
    else s->t_out = fmin(s->t_out, t);
    s->done = ++s->it >= VAL_BISECT;
    if (s->t_in >= s->t_max || (!isinf(s->t_out) && s->t_out - s->t_in <= 1e-3 * s->t_out)) {
        s->done = 1;
        return;
    }
    double next = rise > 0 ? t * sqrt(s->want / rise) : 16 * t;
    if (rise <= s->want && next <= t * (1 + 1e-3)) { /* converged from inside */
        s->done = 1;
        return;
    }
    next *= 1 - 1e-4;
    if (isinf(s->t_out)) next = fmin(next, 16 * t);
    else if (!(next > s->t_in && next < s->t_out)) next = 0.5 * (s->t_in + s->t_out);
    s->t = fmin(next, s->t_max);
    val_search_point(s, spec);
}

/* The point the search found: x + t_in u, clamped. */
static void val_search_end(const val_search *s, const scenario *spec, double *out)
{
    const scenario_fit_param *fp = spec->fit_params;
    for (int i = 0; i < spec->n_fit_params; i++)
        out[i] = fmin(fp[i].hi, fmax(fp[i].lo, s->x[i] + s->t_in * s->u[i]));
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

/* Start the search along u from fold f's fit; 0 when the optimum sits on this edge (no
 * search, the ray adds nothing). */
static int val_ray_start(val_ctx *c, int f, const double *u, double t0, val_search *s)
{
    val_fold *fd = &c->r->folds[f];
    double t_max = val_ray_max(c->spec, fd->fitted, u);
    if (!(t_max > 0) || isinf(t_max)) return 0;
    val_search_init(s, c->spec, fd->fitted, u, t0 > 0 ? t0 : 1e-3 * t_max, t_max, fd->objective,
                    val_region_threshold(fd->objective, &fd->scale));
    return 1;
}

/* The boundary point `end` into the fold's profile box and its list of probed points. */
static void val_ray_keep(val_ctx *c, int f, const double *end)
{
    val_fold *fd = &c->r->folds[f];
    for (int i = 0; i < c->spec->n_fit_params; i++) {
        fd->lo[i] = fmin(fd->lo[i], end[i]);
        fd->hi[i] = fmax(fd->hi[i], end[i]);
    }
    if (fd->n_bound < VAL_MAX_BOUND)
        memcpy(fd->bound[fd->n_bound++], end, sizeof fd->bound[0]);
}

/* One boundary point along u from the fit, its predictions added to the band. */
static int val_ray(val_ctx *c, int f, const double *u, double t0, val_band *band, double *preds,
                   double *t_found, tp_err *err)
{
    val_search s;
    double end[SCN_MAX_FIT];
    int fail = 0;
    if (t_found) *t_found = 0;
    if (!val_ray_start(c, f, u, t0, &s)) return 0;
    c->fold = &c->r->folds[f];
    while (!s.done) {
        double v = val_objective(s.y, c, &fail);
        if (fail) return -1;
        val_search_step(&s, c->spec, v);
    }
    val_search_end(&s, c->spec, end);
    if (t_found) *t_found = s.t_in;
    val_ray_keep(c, f, end);
    /* the predictions are monotone along a ray in every shipped model, so the extremes over
     * the accepted set lie on its boundary */
    if (val_predict_fold(c, f, end, NULL, NULL, 0, 0, preds, NULL, NULL, err)) return -1;
    val_band_add(c->r, f, preds, band);
    return 0;
}

/* The nr rays u[k] (start t0[k]) of fold f, as val_ray one after another gives them: with
 * threads, the searches advance together (each step's points evaluated at once) and their
 * ends are predicted at once. What they leave (the band's and box's extremes, the boundary
 * points in ray order, t_found) is the same; after a failure anywhere they are run again
 * one after another, so the error is the one that run meets. */
static int val_rays(val_ctx *c, int f, int nr, const double (*u)[SCN_MAX_FIT], const double *t0,
                    val_band *band, double *preds, double *t_found, tp_err *err)
{
    val_fold *fd = &c->r->folds[f];
    const int n_x = c->spec->n_fit_params, n_bound = fd->n_bound;
    size_t n_cells = c->r->n_cells;
    val_search s[2 * SCN_MAX_FIT + VAL_RAYS];
    int live[2 * SCN_MAX_FIT + VAL_RAYS], m = 0, ok = par_team_size(c->team) > 1 && nr > 1;
    double xs[(2 * SCN_MAX_FIT + VAL_RAYS) * SCN_MAX_FIT], v[2 * SCN_MAX_FIT + VAL_RAYS];
    double *ends = NULL;
    for (int k = 0; ok && k < nr; k++) live[k] = val_ray_start(c, f, u[k], t0[k], &s[k]);
    c->fold = fd;
    while (ok) { /* one step of every search still going, its points at once */
        m = 0;
        for (int k = 0; k < nr; k++)
            if (live[k] && !s[k].done) memcpy(xs + (size_t)m++ * n_x, s[k].y, n_x * sizeof *xs);
        if (!m) break;
        ok = val_objective_many(xs, m, c, v) == m;
        for (int k = 0, j = 0; ok && k < nr; k++)
            if (live[k] && !s[k].done) val_search_step(&s[k], c->spec, v[j++]);
    }
    m = 0;
    for (int k = 0; ok && k < nr; k++) {
        if (t_found) t_found[k] = live[k] ? s[k].t_in : 0;
        if (!live[k]) continue;
        val_search_end(&s[k], c->spec, xs + (size_t)m++ * n_x);
        val_ray_keep(c, f, xs + (size_t)(m - 1) * n_x);
    }
    if (ok && m) ok = (ends = malloc((size_t)m * n_cells * sizeof *ends)) &&
                      val_predict_points(c, f, m, xs, ends, err) == m;
    for (int j = 0; ok && j < m; j++) val_band_add(c->r, f, ends + (size_t)j * n_cells, band);
    free(ends);
    if (ok) return 0;
    fd->n_bound = n_bound; /* again one by one: the extremes are the same, taken twice */
    for (int k = 0; k < nr; k++)
        if (val_ray(c, f, u[k], t0[k], band, preds, t_found ? &t_found[k] : NULL, err)) return -1;
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
    int n = spec->n_fit_params;
    for (int i = 0; i < n; i++) fd->lo[i] = fd->hi[i] = fd->fitted[i];
    if (n == 0) return 0;
    double want = val_region_threshold(0.0, &fd->scale), range[SCN_MAX_FIT] = {0},
           reach[SCN_MAX_FIT] = {0};
    for (int i = 0; i < n; i++) range[i] = spec->fit_params[i].hi - spec->fit_params[i].lo;
    /* the two ends along each axis (in box units) */
    double axis_u[2 * SCN_MAX_FIT][SCN_MAX_FIT] = {{0}}, axis_t0[2 * SCN_MAX_FIT] = {0};
    double t[2 * SCN_MAX_FIT];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) axis_u[2 * i + k][i] = (k ? 1 : -1) * range[i];
    if (val_rays(c, f, 2 * n, (const double (*)[SCN_MAX_FIT])axis_u, axis_t0, band, preds, t, err))
        return -1;
    /* a flat axis (the box edge inside the set) counts as reaching one box range */
    for (int i = 0; i < n; i++) reach[i] = fmax(0.5 * (t[2 * i] + t[2 * i + 1]), 1e-9);
    if (n == 1) return 0;
    /* the quadratic rise/want = a p^2 + 2 b p q + d q^2 in box units p, q */
    double a = 1 / (reach[0] * reach[0]), d = 1 / (reach[1] * reach[1]), b = 0;
    double p = 0.5 * reach[0], q = 0.5 * reach[1], y[2][SCN_MAX_FIT], rise[2], obj[2];
    int probe[2], m = 0;
    c->fold = fd;
    for (int k = 0; k < 2; k++) {
        double qq = k ? -q : q;
        y[m][0] = fd->fitted[0] + p * range[0];
        y[m][1] = fd->fitted[1] + qq * range[1];
        int inside = y[m][0] >= spec->fit_params[0].lo && y[m][0] <= spec->fit_params[0].hi &&
                     y[m][1] >= spec->fit_params[1].lo && y[m][1] <= spec->fit_params[1].hi;
        probe[k] = inside ? m++ : -1;
    }
    /* both probes at once (n == 2: the rows are y's) */
    if (m && val_objective_many(y[0], m, c, obj) < m) return -1;
    for (int k = 0; k < 2; k++)
        rise[k] = probe[k] >= 0 ? (obj[probe[k]] - fd->objective) / want : NAN;
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
    double ray_u[VAL_RAYS][SCN_MAX_FIT], ray_t0[VAL_RAYS];
    for (int k = 0; k < VAL_RAYS; k++) {
        double th = VAL_TWO_PI * (k + 0.5) / VAL_RAYS, w[2];
        for (int i = 0; i < 2; i++)
            w[i] = cos(th) / sqrt(l1) * e1[i] + sin(th) / sqrt(l2) * e2[i];
        for (int i = 0; i < 2; i++) ray_u[k][i] = w[i] * range[i];
        ray_t0[k] = 1.0; /* t = 1: the ellipse */
    }
    return val_rays(c, f, VAL_RAYS, (const double (*)[SCN_MAX_FIT])ray_u, ray_t0, band, preds,
                    NULL, err);
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

/* 1 when the command line --set `key` */
static int val_key_set(const scn_opts *o, const char *key)
{
    for (int k = 0; k < o->n_sets; k++) {
        size_t len = strcspn(o->sets[k], "=");
        if (strlen(key) == len && !strncmp(o->sets[k], key, len)) return 1;
    }
    return 0;
}

void val_provenance(val_ctx *c)
{
    val_report *r = c->r;
    const scenario *spec = c->spec;
    /* a --set replaces a sourced number by the user's: it is assumed (val_sensitivity lists
     * it once, "set on the command line"), its source no longer applies */
    for (int i = 0; i < r->scn.n_decls; i++)
        if (!r->scn.decls[i].assumed && val_key_set(c->opts, r->scn.decls[i].key))
            r->scn.decls[i].assumed = 1;
    r->n_unverified = 0;
#define VAL_UNVERIFIED(path, why)                                                           \
    do {                                                                                    \
        if (r->n_unverified < 4)                                                            \
            snprintf(r->unverified[r->n_unverified++], sizeof r->unverified[0], "%.300s: %.300s", \
                     path, why);                                                            \
    } while (0)
    if (spec->has_kernels && spec->kernels.fp_why[0])
        VAL_UNVERIFIED(spec->kernels.path, spec->kernels.fp_why);
    for (int i = 0; i < spec->n_cals; i++)
        if (spec->cals[i].fp_why[0]) VAL_UNVERIFIED(spec->cals[i].path, spec->cals[i].fp_why);
    if (spec->measured.path[0] && spec->measured.fp_why[0])
        VAL_UNVERIFIED(spec->measured.path, spec->measured.fp_why);
#undef VAL_UNVERIFIED
}

/* A number of a calibration file whose fingerprint no longer matches: assumed, moved in the
 * file itself (val_predict_fold_moved). */
static int val_sens_file(val_report *r, int kind, const char *path, long tp, const char *key,
                         double value, const char *why, const char *const *also, int n_also,
                         tp_err *err)
{
    int n_file = 0;
    for (int i = 0; i < r->n_sens; i++) n_file += r->sens[i].file[0] != 0;
    if (n_file == VAL_FILE_SENS_MAX)
        return tp_err_set(err, "%s: more than %d numbers of unverified calibrations", path,
                          VAL_FILE_SENS_MAX);
    val_sens *s = &r->sens[r->n_sens];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->note, sizeof s->note, "%.250s: %.250s", path, why);
    snprintf(s->file, sizeof s->file, "%s", path);
    s->file_kind = kind;
    s->file_tp = tp;
    snprintf(s->file_keys[s->n_file_keys++], sizeof s->file_keys[0], "%s", key);
    for (int i = 0; i < n_also && s->n_file_keys < 4; i++)
        snprintf(s->file_keys[s->n_file_keys++], sizeof s->file_keys[0], "%s", also[i]);
    s->value = value;
    s->minus_ms = calloc(r->n_cells, sizeof *s->minus_ms);
    s->plus_ms = calloc(r->n_cells, sizeof *s->plus_ms);
    r->n_sens++;
    if (!s->minus_ms || !s->plus_ms) return tp_err_set(err, "out of memory");
    return 0;
}

/* Every law number of an unverified kernel calibration (the terms its law has, kcal.h) */
static int val_sens_kcal(val_report *r, const kcal *k, tp_err *err)
{
    for (int cls = 0; cls < KC_COUNT; cls++) {
        const kcal_entry *e = &k->cls[cls];
        if (!e->valid || e->from >= 0) continue;
        int kd = e->law.kind, norm = kd == KL_SMOOTH || kd == KL_TILED;
        struct { const char *term; int used; double v; } t[] = {
            {"t0_us", 1, e->law.t0_s * 1e6},
            {"gbps", kd != KL_CONST && e->law.s_per_byte > 0, 1e-9 / e->law.s_per_byte},
            {"tflops", (kd == KL_ROOFLINE || kd == KL_SUM || norm) && e->law.s_per_flop > 0,
             1e-12 / e->law.s_per_flop},
            {"row_gflops", kd == KL_ROW && e->law.s_per_row_flop > 0, 1e-9 / e->law.s_per_row_flop},
            {"seq_us", kd == KL_SEQ, e->law.s_per_seq * 1e6}};
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            if (!t[i].used) continue;
            char key[96], also[3][96];
            const char *ap[3];
            int n_also = 0;
            snprintf(key, sizeof key, "classes.%s.%s", kcal_class_names[cls], t[i].term);
            for (int o = 0; o < KC_COUNT && n_also < 3; o++) /* the copies say the same */
                if (k->cls[o].valid && k->cls[o].from == cls) {
                    snprintf(also[n_also], sizeof also[0], "classes.%s.%s", kcal_class_names[o],
                             t[i].term);
                    ap[n_also] = also[n_also];
                    n_also++;
                }
            if (val_sens_file(r, VAL_FILE_KERNELS, k->path, 0, key, t[i].v, k->fp_why, ap,
                              n_also, err))
                return -1;
        }
    }
    return 0;
}

/* The numbers of an unverified all-reduce calibration that price a step */
static int val_sens_arcal(val_report *r, const arcal *a, tp_err *err)
{
    static const char *const line_names[3] = {"one_stage", "two_stage", "symm_mem"};
    if (a->has_linear &&
        (val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, "lambda_us", a->lambda_s * 1e6,
                       a->fp_why, NULL, 0, err) ||
         val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, "beta_gbps", a->beta / 1e9,
                       a->fp_why, NULL, 0, err)))
        return -1;
    if (a->has_graph_lambda &&
        val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, "graph.lambda_us",
                      a->graph_lambda_s * 1e6, a->fp_why, NULL, 0, err))
        return -1;
    for (int i = 0; i < 3; i++) {
        if (!a->custom[i].valid) continue;
        char k1[96], k2[96];
        snprintf(k1, sizeof k1, "custom.%s.latency_us", line_names[i]);
        snprintf(k2, sizeof k2, "custom.%s.gbps", line_names[i]);
        if (val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, k1, a->custom[i].latency_s * 1e6,
                          a->fp_why, NULL, 0, err) ||
            val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, k2, a->custom[i].bw / 1e9,
                          a->fp_why, NULL, 0, err))
            return -1;
    }
    if (a->eager_dispatch_s >= 0 &&
        val_sens_file(r, VAL_FILE_ALLREDUCE, a->path, a->tp, "custom.eager_dispatch_us",
                      a->eager_dispatch_s * 1e6, a->fp_why, NULL, 0, err))
        return -1;
    return 0;
}

/* vs's moves for a number of a file: each fold re-predicted with the file read again */
static void val_sens_moves_file(val_ctx *c, val_sens *vs, double *preds)
{
    val_report *r = c->r;
    for (size_t i = 0; i < r->n_cells; i++) vs->minus_ms[i] = vs->plus_ms[i] = NAN;
    for (int sign = -1; sign <= 1; sign += 2)
        for (int f = 0; f < r->n_folds; f++) {
            tp_err moved = {{0}}; /* a moved value the file refuses leaves NAN */
            if (val_predict_fold_moved(c, f, r->folds[f].fitted, vs, 1.0 + sign * VAL_SENS_FRAC,
                                       preds, &moved))
                continue;
            for (size_t i = 0; i < r->n_cells; i++)
                if (r->cells[i].fold == f && r->cells[i].role == VAL_HELDOUT)
                    (sign < 0 ? vs->minus_ms : vs->plus_ms)[i] = preds[i];
        }
}

/* An unverified file's numbers (val_provenance): assumed, each with its sensitivity */
static int val_sens_files(val_ctx *c, tp_err *err)
{
    val_report *r = c->r;
    const scenario *spec = c->spec;
    if (spec->has_kernels && spec->kernels.fp_why[0] && val_sens_kcal(r, &spec->kernels, err))
        return -1;
    for (int i = 0; i < spec->n_cals; i++)
        if (spec->cals[i].fp_why[0] && val_sens_arcal(r, &spec->cals[i], err)) return -1;
    const measured_cal *m = &spec->measured;
    for (int p = 0; m->path[0] && m->fp_why[0] && p < MEASURED_PARTS; p++) {
        const measured_group *g = &m->parts[p];
        char note[512];
        snprintf(note, sizeof note, "%.250s: %.250s", m->path, m->fp_why);
        for (int k = 0; g->state == MEASURED_SET && k < g->n_keys; k++)
            if (!g->overridden_by[k][0] && val_sens_add(r, g->keys[k], note, c->doc, NAN, err))
                return -1;
    }
    return 0;
}

int val_sensitivity(val_ctx *c, double *preds, tp_err *err)
{
    val_report *r = c->r;
    const scenario *spec = c->spec;
    r->sens = calloc(SCN_MAX_DECLS + SCN_OPTS_MAX_SETS + DECL_MAX + VAL_FILE_SENS_MAX,
                     sizeof *r->sens);
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
            if (strcmp(hd->items[i].key, hw_keys[k][0]) ||
                cfg_find(cfg_root(c->doc), hw_keys[k][1]))
                continue;
            if (spec->has_kernels && strcmp(hw_keys[k][0], "launch_latency_us")) continue;
            char note[400];
            snprintf(note, sizeof note, "%s:%d:%d: %s", hd->file, hd->items[i].line,
                     hd->items[i].col, hd->items[i].why);
            if (val_sens_add(r, hw_keys[k][1], note, c->doc, hd->items[i].value, err)) return -1;
        }
    if (val_sens_files(c, err)) return -1;
    for (int s = 0; s < r->n_sens; s++) {
        val_sens *vs = &r->sens[s];
        if (vs->file[0]) { /* moved in its file, every fold re-predicted */
            val_sens_moves_file(c, vs, preds);
            continue;
        }
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
