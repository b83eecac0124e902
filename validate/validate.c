/* validate.c: see validate.h. The fit of each fold, the baselines, the aggregation and the
 * run that ties them; the simulations at parameter values (on the --jobs team), protocols,
 * binding, folds and intervals are in points.c, protocol.c, bind.c, folds.c and interval.c
 * (val_impl.h). */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "memo.h"
#include "par.h"
#include "val_impl.h"

/* ---------------------------------------------------------------- fit ------------- */

static int val_fit_fold(val_ctx *c, val_fold *fd, tp_err *err)
{
    const scenario *spec = c->spec;
    if (spec->n_fit_params == 0) return 0;
    double lo[SCN_MAX_FIT], hi[SCN_MAX_FIT];
    for (int i = 0; i < spec->n_fit_params; i++)
        lo[i] = spec->fit_params[i].lo, hi[i] = spec->fit_params[i].hi;
    c->fold = fd;
    /* with more threads than a point has cells, the search evaluates ahead (fit.h): the
     * same points read, the same fit; with fewer, one point's cells already keep every
     * thread busy, and a point evaluated ahead is CPU time spent for nothing */
    int team = par_team_size(c->team), cells = fd->n_cal > 0 ? fd->n_cal : 1;
    int ahead = team > cells ? team / cells : 1;
    return fit_minimize_many(spec->n_fit_params, lo, hi, val_objective_many, c, ahead,
                             fd->fitted, &fd->objective, &fd->evaluations, &fd->stop);
}

/* ----------------------------------------------------------- baselines ------------ */

/* The study's Equation 2 on this scenario's model, hardware and all-reduce calibrations:
 * sharded compute at the study's HBM efficiency, the 160 layer all-reduces priced by the
 * NCCL fit whatever collective model the scenario uses, no host cost,
 * no fixed or launch latency, no offset. R0 is added per fold. */
static int val_additive_base(const scenario *bound, const val_report *r, int jobs,
                             double *base_ms, tp_err *err)
{
    scenario *a = malloc(sizeof *a);
    if (!a) return tp_err_set(err, "out of memory");
    *a = *bound;
    a->hbm_eff = VAL_STUDY_HBM_EFF;
    a->kernel_fixed_s = 0;
    a->launch_latency_s = 0;
    a->program.embedding_allreduce = 0;
    a->program.logits_gather = 0;
    a->launch = a->collective = a->step = a->driver = dist_const(0);
    memset(&a->phases, 0, sizeof a->phases);
    a->driver_per_peer_s = 0;
    a->broadcast_wait = 0;
    a->slow_rank = -1;
    a->slow_extra_step_s = 0;
    a->slow_launch_factor = 1.0;
    a->graphs = 0;
    a->allreduce_model = COLL_NCCL_FIT; /* the study's comm term is its NCCL fit */
    a->offset_s = 0;
    a->steps = 1;
    a->warmup = 1;
    int rc = -1;
    const grid_cell **cells = calloc(r->n_cells, sizeof *cells);
    if (cells) {
        for (size_t i = 0; i < r->n_cells; i++) cells[i] = r->cells[i].g;
        val_cells_job job = {a, cells, base_ms, NULL};
        rc = par_map(r->n_cells, jobs, val_cell_job, &job, NULL, err);
    } else {
        tp_err_set(err, "out of memory");
    }
    free(cells);
    free(a); /* a copy: bound's grids, not its own (scenario.h) */
    return rc;
}

/* base_ms: n_folds rows of n_cells, each fold's additive prediction before R0 (from that
 * fold's fitted scenario: under --loo each fold has its own fit) */
static void val_baselines(val_report *r, const double *base_all)
{
    for (int f = 0; f < r->n_folds; f++) {
        val_fold *fd = &r->folds[f];
        const double *base_ms = base_all + (size_t)f * r->n_cells;
        /* R0 minimising the squared relative errors: sum((b + R0 - m)/m)^2 */
        double num = 0, den = 0, all_sum = 0;
        for (int k = 0; k < fd->n_cal; k++) {
            double m = r->g->cells[fd->cal[k]].measured_ms, b = base_ms[fd->cal[k]];
            num += (m - b) / (m * m);
            den += 1.0 / (m * m);
            all_sum += m;
        }
        /* no calibration cell (a scenario with no free parameters and no fit.cells under
         * --within): R0 is fitted on nothing, so the baseline is absent, like constant's */
        fd->r0_ms = den > 0 ? num / den : NAN;
        for (size_t i = 0; i < r->n_cells; i++) {
            val_cell *vc = &r->cells[i];
            if (vc->fold != f) continue;
            vc->additive_ms = base_ms[i] + fd->r0_ms;
            double own = 0;
            int n_own = 0;
            for (int k = 0; k < fd->n_cal; k++)
                if (!strcmp(r->g->cells[fd->cal[k]].config, vc->g->config))
                    own += r->g->cells[fd->cal[k]].measured_ms, n_own++;
            vc->constant_ms = n_own ? own / n_own : fd->n_cal ? all_sum / fd->n_cal : NAN;
        }
    }
}

/* ---------------------------------------------------------- aggregation ----------- */

int val_misfit(double cal_max_err_pct, double ks)
{
    return cal_max_err_pct > ks / 3.0;
}

int val_identified(double param_spread_pct, double ks, int on_free_bound)
{
    return !isnan(param_spread_pct) && param_spread_pct <= ks && !on_free_bound;
}

/* The thresholds are the pre-registered kill-switch, kill-switch/3 for the fit's own cells
 * (val_misfit) and half the best baseline's MAPE. */
val_verdict val_verdict_for(double ks, int tested, double mape, double best, int misfit,
                            int with_intervals, int identified, double range_mape)
{
    if (!tested) return VAL_UNTESTED;
    if (misfit) return VAL_MISFIT;
    /* not pinned by the calibration cells: the verdict would show where the fit stopped,
     * unless no prediction within the parameters' range passes */
    if (with_intervals && !identified && !(range_mape > ks)) return VAL_UNIDENTIFIED;
    if (mape > ks) return VAL_FAIL;
    if (best > 0 && mape <= 0.5 * best && mape < best) return VAL_SUPPORTED;
    return VAL_PASS_NO_SKILL;
}

static int val_aggregate(val_report *r)
{
    double grid_resid[VAL_MAX_CONFIGS] = {0}, held[VAL_MAX_CONFIGS] = {0},
           cons[VAL_MAX_CONFIGS] = {0}, add[VAL_MAX_CONFIGS] = {0}, range[VAL_MAX_CONFIGS] = {0};
    int grid_resid_ok[VAL_MAX_CONFIGS];
    for (int i = 0; i < VAL_MAX_CONFIGS; i++) grid_resid_ok[i] = 1;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *vc = &r->cells[i];
        int k = 0;
        while (strcmp(r->configs[k].config, vc->g->config)) k++;
        val_config *c = &r->configs[k];
        double ae = fabs(vc->error_pct), m = vc->g->measured_ms;
        c->n++;
        c->mape_pct += ae;
        if (vc->role == VAL_HELDOUT) {
            c->n_heldout++;
            held[k] += ae;
            cons[k] += fabs(vc->constant_ms - m) / m * 100.0;
            add[k] += fabs(vc->additive_ms - m) / m * 100.0;
            r->n_heldout++;
            if (vc->inside) c->n_inside++, r->n_inside++;
        }
        if (vc->role == VAL_HELDOUT && !isnan(vc->fit_lo)) {
            c->param_spread_pct = fmax(c->param_spread_pct,
                                       100.0 * (vc->par_hi - vc->par_lo) / vc->predicted_ms);
            double gap = m < vc->fit_lo ? vc->fit_lo - m : m > vc->fit_hi ? m - vc->fit_hi : 0.0;
            range[k] += gap / m * 100.0;
        }
        c->residual_ms += m - 1e3 * (vc->sim.breakdown.allreduce + vc->sim.breakdown.compute);
        if (isnan(vc->g->pred_comm_ms) || isnan(vc->g->pred_compute_ms)) grid_resid_ok[k] = 0;
        else grid_resid[k] += m - vc->g->pred_comm_ms - vc->g->pred_compute_ms;
        c->measured_mean_ms += m;
        c->predicted_mean_ms += vc->predicted_ms;
    }
    for (int k = 0; k < r->n_configs; k++) {
        val_config *c = &r->configs[k];
        const val_fold *fd = &r->folds[c->fold];
        c->mape_pct /= c->n;
        c->tested = c->n_heldout > 0;
        c->heldout_mape_pct = c->tested ? held[k] / c->n_heldout : NAN;
        c->constant_mape_pct = c->tested ? cons[k] / c->n_heldout : NAN;
        c->additive_mape_pct = c->tested ? add[k] / c->n_heldout : NAN;
        /* the best baseline: a NAN one (no calibration cell to take a mean of) never wins */
        c->best_baseline = "additive";
        c->best_baseline_pct = c->additive_mape_pct;
        if (!isnan(c->constant_mape_pct) &&
            (isnan(c->best_baseline_pct) || c->constant_mape_pct <= c->best_baseline_pct))
            c->best_baseline = "constant", c->best_baseline_pct = c->constant_mape_pct;
        c->skill = c->tested && c->best_baseline_pct > 0
                       ? 1.0 - c->heldout_mape_pct / c->best_baseline_pct
                       : NAN;
        if (!r->opt.intervals || !c->tested) c->param_spread_pct = NAN;
        c->identified = val_identified(c->param_spread_pct, r->kill_switch_pct, fd->on_free_bound);
        c->range_mape_pct = isnan(c->param_spread_pct) ? NAN : range[k] / c->n_heldout;
        c->verdict = val_verdict_for(r->kill_switch_pct, c->tested, c->heldout_mape_pct,
                                     c->best_baseline_pct, fd->misfit, r->opt.intervals,
                                     c->identified, c->range_mape_pct);
        c->pass = c->verdict == VAL_SUPPORTED || c->verdict == VAL_PASS_NO_SKILL;
        c->residual_ms /= c->n;
        c->residual_grid_ms = grid_resid_ok[k] ? grid_resid[k] / c->n : NAN;
        c->measured_mean_ms /= c->n;
        c->predicted_mean_ms /= c->n;
    }
    return 0;
}

/* Mean over shared (batch, ctx) of step(tp_a) / step(tp_b), measured and predicted. */
static void val_shrink(val_report *r)
{
    long a = 0, b = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        long tp = r->cells[i].g->tp;
        if (!a || tp < a) a = tp;
    }
    for (size_t i = 0; i < r->n_cells; i++) {
        long tp = r->cells[i].g->tp;
        if (tp > a && (!b || tp < b)) b = tp;
    }
    if (!b) return;
    double sm = 0, sp = 0;
    int n = 0;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *x = &r->cells[i];
        if (x->g->tp != a) continue;
        for (size_t j = 0; j < r->n_cells; j++) {
            const val_cell *y = &r->cells[j];
            if (y->g->tp != b || y->g->batch != x->g->batch || y->g->ctx != x->g->ctx) continue;
            sm += x->g->measured_ms / y->g->measured_ms;
            sp += x->predicted_ms / y->predicted_ms;
            n++;
        }
    }
    if (!n) return;
    r->shrink_from_tp = a;
    r->shrink_to_tp = b;
    r->shrink_measured = sm / n;
    r->shrink_predicted = sp / n;
}

/* ---------------------------------------------------------------- run ------------- */

/* Load and check the scenario, the protocol and the knobs; the caller frees doc and spec. */
static int val_open(const char *path, const scn_opts *o, const val_options *vo,
                    scenario_cache *cache, cfg_doc **doc, scenario **spec, val_protocol *proto,
                    tp_err *err)
{
    *spec = calloc(1, sizeof **spec);
    *doc = scn_opts_open(path, o, err);
    if (!*spec) return tp_err_set(err, "out of memory");
    if (!*doc || scenario_bind_cached(*doc, cache, *spec, err)) return -1;
    scenario *s = *spec;
    /* every measured grid read whole: validate vouches for each input it lists */
    if (s->has_kernels && kcal_need_all(&s->kernels, err)) return -1;
    if (s->has_kernels) kcal_grids_vouch(&s->kernels);
    if (vo->protocol_given) {
        *proto = vo->protocol;
    } else if (s->fit_protocol[0]) {
        if (val_protocol_parse(s->fit_protocol, proto, err)) {
            char msg[TP_ERR_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return tp_err_at(err, s->path, s->fit_protocol_line, s->fit_protocol_col,
                             "fit.protocol: %s", msg);
        }
    } else {
        memset(proto, 0, sizeof *proto);
    }
    if (s->n_fit_params && (val_check_sets(o, s, err) || val_check_box(*doc, cache, o, s, err)))
        return -1;
    return val_knobs(*doc, s, o, err);
}

/* A --calib file for a TP degree the grid does not have would be ignored: refused. */
static int val_check_calib_tps(scenario *spec, const scn_opts *o, const grid *g, tp_err *err)
{
    long tps[VAL_MAX_CONFIGS * 4];
    int n = 0;
    for (size_t i = 0; i < g->n; i++) {
        int seen = 0;
        for (int k = 0; k < n; k++) seen |= tps[k] == g->cells[i].tp;
        if (!seen && n < (int)(sizeof tps / sizeof tps[0])) tps[n++] = g->cells[i].tp;
    }
    return scn_opts_apply(o, spec, err) || scenario_check_flag_calibs(spec, tps, n, err) ? -1 : 0;
}

static int val_setup_cells(val_report *r, tp_err *err)
{
    const grid *g = r->g;
    r->cells = calloc(g->n, sizeof *r->cells);
    if (!r->cells) return tp_err_set(err, "out of memory");
    r->n_cells = g->n;
    for (size_t i = 0; i < g->n; i++) {
        r->cells[i].g = &g->cells[i];
        if (!val_config_for(r, &g->cells[i], err)) return -1;
    }
    return 0;
}

/* Each cell's fold (its config's) and role in it. */
static void val_assign_roles(val_report *out)
{
    for (size_t i = 0; i < out->n_cells; i++) {
        val_cell *vc = &out->cells[i];
        int k = 0;
        while (strcmp(out->configs[k].config, vc->g->config)) k++;
        vc->fold = out->configs[k].fold;
        vc->role = val_role_of(out, vc->fold, i);
        vc->calibration = vc->role == VAL_CALIBRATION;
    }
}

/* Fold f: its fit, its predictions (the band starts at them), the fit's own miss of its
 * calibration cells, the additive baseline before R0 into base (one row of n_cells), the
 * error scale and the fitted values on a bound. */
static int val_fold_run(val_ctx *c, int f, double *preds, run_summary *sums, val_band *band,
                        double *base, tp_err *err)
{
    val_report *out = c->r;
    const grid *g = c->g;
    const scn_opts *o = c->opts;
    const scenario *spec = c->spec;
    val_fold *fd = &out->folds[f];
    if (val_fit_fold(c, fd, err) ||
        val_predict_fold(c, f, fd->fitted, NULL, NULL, 0, 0, preds, sums, "validate", err))
        return -1;
    for (size_t i = 0; i < g->n; i++) {
        val_cell *vc = &out->cells[i];
        if (vc->fold != f) continue;
        vc->sim = sums[i];
        vc->predicted_ms = preds[i];
        vc->error_pct = 100.0 * (vc->predicted_ms - vc->g->measured_ms) / vc->g->measured_ms;
        band->lo[i] = band->hi[i] = preds[i];
    }
    /* the fit's own miss of each calibration cell (predicted in this fold's fit) */
    scenario *bound = calloc(1, sizeof *bound);
    if (!bound) {
        tp_err_set(err, "out of memory");
        return -1;
    }
    int bad = val_bind(c->doc, c->cache, o, spec, fd->fitted, bound, err);
    for (int k = 0; k < fd->n_cal && !bad; k++) {
        const grid_cell *gc = &g->cells[fd->cal[k]];
        run_summary sum;
        bad = val_predict(bound, gc->tp, gc->batch, gc->ctx, &sum, err);
        double e = fabs(100.0 * (sum.step_mean * 1e3 - gc->measured_ms) / gc->measured_ms);
        fd->cal_max_err_pct = fmax(fd->cal_max_err_pct, e);
        /* nothing fitted: the objective no search computed, so the error scale reads the
         * model's miss of these cells, held out from it in all but name */
        if (spec->n_fit_params == 0 && !fd->cal_borrowed) fd->objective += e * e / 1e4;
    }
    if (!bad && f == 0) { /* the report's copy, read for its names: it holds no grids */
        out->scn = *bound;
        out->scn.kernels.grids = NULL;
    }
    /* the additive baseline from this fold's own fit */
    if (!bad) bad = val_additive_base(bound, out, o->jobs, base, err);
    scenario_free(bound);
    free(bound);
    if (bad) return -1;
    /* with no free parameters and no value borrowed from a fit on these cells (sourced:
     * fitted_on), nothing was fitted to miss them: they fit the baselines only, and the
     * model's error on them is reported, never a MISFIT */
    fd->misfit = (spec->n_fit_params > 0 || fd->cal_borrowed) &&
                 val_misfit(fd->cal_max_err_pct, out->opt.kill_switch_pct);
    fd->scale = val_error_scale(fd->objective, fd->n_cal, spec->n_fit_params, out->opt.meas_cv);
    /* a fitted value on its bound: the fit wanted to go further; flagged unless the
     * scenario declares that bound a physical limit */
    for (int i = 0; i < spec->n_fit_params; i++) {
        const scenario_fit_param *fp = &spec->fit_params[i];
        double tol = 1e-3 * (fp->hi - fp->lo);
        fd->at_bound[i] = fd->fitted[i] <= fp->lo + tol   ? -1
                          : fd->fitted[i] >= fp->hi - tol ? 1
                                                          : 0;
        if ((fd->at_bound[i] < 0 && !fp->physical_lo[0]) ||
            (fd->at_bound[i] > 0 && !fp->physical_hi[0]))
            fd->on_free_bound = 1;
    }
    return 0;
}

/* With intervals, each cell's parameter range (par_lo/hi), widened by the kernel
 * calibrations' error (fit_lo/hi), and its 95% interval; NAN without. */
static int val_intervals(val_ctx *c, val_band *band, double *preds, tp_err *err)
{
    val_report *out = c->r;
    const grid *g = c->g;
    if (out->opt.intervals) {
        for (int f = 0; f < out->n_folds; f++)
            if (val_interval_fold(c, f, band, preds, err)) return -1;
        for (size_t i = 0; i < g->n; i++) /* before the kernel error widens the band */
            out->cells[i].par_lo = band->lo[i], out->cells[i].par_hi = band->hi[i];
        /* a kernel calibration's own error reaches the band: every class moved by its
         * held-out MAPE, all one way then all the other, at each fold's fitted values */
        for (int f = 0; out->scn.has_kernels && f < out->n_folds; f++)
            for (int sign = -1; sign <= 1; sign += 2) {
                c->kernel_err_sign = sign;
                int bad = val_predict_fold(c, f, out->folds[f].fitted, NULL, NULL, 0, 0, preds,
                                           NULL, NULL, err);
                c->kernel_err_sign = 0;
                if (bad) return -1;
                for (size_t i = 0; i < g->n; i++) {
                    if (out->cells[i].fold != f || isnan(preds[i])) continue;
                    band->lo[i] = fmin(band->lo[i], preds[i]);
                    band->hi[i] = fmax(band->hi[i], preds[i]);
                }
            }
        for (size_t i = 0; i < g->n; i++) {
            val_cell *vc = &out->cells[i];
            vc->fit_lo = band->lo[i];
            vc->fit_hi = band->hi[i];
            val_pred_interval(vc->predicted_ms, band->lo[i], band->hi[i],
                              &out->folds[vc->fold].scale, &vc->pred_lo, &vc->pred_hi);
            vc->inside = vc->g->measured_ms >= vc->pred_lo && vc->g->measured_ms <= vc->pred_hi;
        }
    } else {
        for (size_t i = 0; i < g->n; i++) {
            val_cell *vc = &out->cells[i];
            vc->fit_lo = vc->fit_hi = vc->pred_lo = vc->pred_hi = vc->par_lo = vc->par_hi = NAN;
        }
    }
    return 0;
}

/* The team's threads, created once per run, and a copy of the document for each (the
 * caller's thread, the last worker, uses doc itself). */
static int val_workers(const char *path, const scn_opts *o, cfg_doc *doc, par_team **team,
                       cfg_doc ***docs, tp_err *err)
{
    if (!(*team = par_team_new(o->jobs))) return tp_err_set(err, "cannot create a thread pool");
    int n = par_team_size(*team);
    if (!(*docs = calloc((size_t)n, sizeof **docs))) return tp_err_set(err, "out of memory");
    for (int w = 0; w < n - 1; w++)
        if (!((*docs)[w] = scn_opts_open(path, o, err))) return -1;
    (*docs)[n - 1] = doc;
    return 0;
}

static void val_workers_free(par_team *team, cfg_doc **docs)
{
    for (int w = 0; team && docs && w < par_team_size(team) - 1; w++) cfg_free(docs[w]);
    free(docs);
    par_team_free(team);
}

int val_run_with(const char *path, const scn_opts *o, const grid *g, const val_options *vo,
                 val_report *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    out->g = g;
    out->opt = *vo;
    out->kill_switch_pct = vo->kill_switch_pct;
    scenario *spec = NULL;
    cfg_doc *doc = NULL;
    double *preds = NULL, *base = NULL;
    run_summary *sums = NULL;
    val_band band = {NULL, NULL};
    par_team *team = NULL;
    cfg_doc **docs = NULL;
    scenario_cache *own = vo->files ? NULL : scenario_cache_new(),
                   *cache = vo->files ? vo->files : own;
    int rc = -1;
    if (!cache) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    if (val_open(path, o, vo, cache, &doc, &spec, &out->protocol, err) ||
        val_setup_cells(out, err) || val_make_folds(out, spec, err) ||
        val_check_calib_tps(spec, o, g, err) ||
        val_workers(path, o, doc, &team, &docs, err)) /* for every fit and prediction */
        goto out;
    preds = calloc(g->n, sizeof *preds);
    base = calloc(g->n * (size_t)out->n_folds, sizeof *base);
    sums = calloc(g->n, sizeof *sums);
    band.lo = calloc(g->n, sizeof *band.lo);
    band.hi = calloc(g->n, sizeof *band.hi);
    if (!preds || !base || !sums || !band.lo || !band.hi) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (int k = 0; k < out->n_configs; k++) out->configs[k].fold = val_home_fold(out, k);
    for (int k = 0; k < out->n_configs; k++) out->configs[k].judged = val_judges_config(out, k);
    val_assign_roles(out);
    val_ctx ctx = {doc, o, g, spec, out, NULL, err, 0, team, docs, cache};
    out->n_fit = spec->n_fit_params;
    for (int f = 0; f < out->n_folds; f++)
        if (val_fold_run(&ctx, f, preds, sums, &band, base + (size_t)f * g->n, err)) goto out;
    for (int i = 0; i < out->n_fit; i++) out->fitted[i] = out->folds[0].fitted[i];
    out->fit_objective = out->folds[0].objective;
    out->fit_evaluations = out->folds[0].evaluations;
    out->fit_stop_reason = out->folds[0].stop;
    val_baselines(out, base);
    val_provenance(&ctx);
    if (val_intervals(&ctx, &band, preds, err)) goto out;
    if (vo->sensitivity && val_sensitivity(&ctx, preds, err)) goto out;
    val_aggregate(out);
    val_shrink(out);
    rc = 0;
out:
    cfg_free(doc);
    if (spec) scenario_free(spec);
    free(spec);
    free(preds);
    free(base);
    free(sums);
    free(band.lo);
    free(band.hi);
    val_workers_free(team, docs);
    scenario_cache_free(own);
    if (rc) val_free(out);
    return rc;
}

int val_run(const char *path, const scn_opts *o, const grid *g, double kill_switch_pct,
            val_report *out, tp_err *err)
{
    val_options vo = val_default_options();
    vo.kill_switch_pct = kill_switch_pct;
    vo.intervals = 0;
    vo.sensitivity = 0;
    return val_run_with(path, o, g, &vo, out, err);
}

void val_free(val_report *r)
{
    free(r->cells);
    r->cells = NULL;
    r->n_cells = 0;
    for (int f = 0; f < r->n_folds; f++) free(r->folds[f].cal);
    free(r->folds);
    r->folds = NULL;
    r->n_folds = 0;
    for (int s = 0; s < r->n_sens; s++) {
        free(r->sens[s].minus_ms);
        free(r->sens[s].plus_ms);
    }
    free(r->sens);
    r->sens = NULL;
    r->n_sens = 0;
}

int val_scan(const char *path, const scn_opts *o, const val_report *r, int fold, int n1, int n2,
             double *objective, tp_err *err)
{
    scenario *spec = NULL;
    cfg_doc *doc = NULL;
    val_protocol proto;
    par_team *team = NULL;
    cfg_doc **docs = NULL;
    scenario_cache *own = r->opt.files ? NULL : scenario_cache_new(),
                   *cache = r->opt.files ? r->opt.files : own;
    int rc = -1;
    if (!cache) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    if (val_open(path, o, &r->opt, cache, &doc, &spec, &proto, err) ||
        val_workers(path, o, doc, &team, &docs, err))
        goto out;
    if (spec->n_fit_params == 0) {
        tp_err_set(err, "--scan: %s has no free parameters, nothing to scan", path);
        goto out;
    }
    val_ctx ctx = {doc, o, r->g, spec, (val_report *)r, &r->folds[fold], err, 0, team, docs,
                   cache};
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n2; j++) {
            double x[SCN_MAX_FIT];
            const scenario_fit_param *p = spec->fit_params;
            x[0] = p[0].lo + (p[0].hi - p[0].lo) * i / (n1 > 1 ? n1 - 1 : 1);
            if (spec->n_fit_params > 1)
                x[1] = p[1].lo + (p[1].hi - p[1].lo) * j / (n2 > 1 ? n2 - 1 : 1);
            int fail = 0;
            objective[i * n2 + j] = val_objective(x, &ctx, &fail);
            if (fail) goto out;
        }
    rc = 0;
out:
    val_workers_free(team, docs);
    scenario_cache_free(own);
    cfg_free(doc);
    if (spec) scenario_free(spec);
    free(spec);
    return rc;
}
