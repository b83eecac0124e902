/* validate.c: see validate.h. */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"

typedef struct val_fit_ctx {
    cfg_doc *doc;
    const scn_opts *opts;
    const grid *g;
    scenario *trial;
    tp_err *err;
} val_fit_ctx;

/* Bind the document with the free parameters set to x. A value the scenario refuses is
 * reported at the fit key that set it. */
static int val_bind(cfg_doc *doc, const scn_opts *o, const scenario *spec, const double *x,
                    scenario *out, tp_err *err)
{
    for (int i = 0; i < spec->n_fit_params; i++)
        for (int j = 0; j < spec->fit_params[i].n_keys; j++) {
            const scenario_fit_param *fp = &spec->fit_params[i];
            char assign[192];
            snprintf(assign, sizeof assign, "%s=%.17g", fp->keys[j], x[i]);
            if (cfg_set_at(doc, assign, spec->path, fp->key_line[j], fp->key_col[j], err))
                return -1;
        }
    if (scenario_bind(doc, out, err)) return -1;
    return scn_opts_apply(o, out, err);
}

/* The fit's values come from fitting: a --set on a fitted key would be silently lost. */
static int val_check_sets(const scn_opts *o, const scenario *spec, tp_err *err)
{
    for (int k = 0; k < o->n_sets; k++) {
        size_t len = strcspn(o->sets[k], "=");
        for (int i = 0; i < spec->n_fit_params; i++)
            for (int j = 0; j < spec->fit_params[i].n_keys; j++)
                if (strlen(spec->fit_params[i].keys[j]) == len &&
                    !strncmp(o->sets[k], spec->fit_params[i].keys[j], len))
                    return tp_err_set(err, "--set %s: '%.*s' is a free parameter of %s's fit, its "
                                      "value comes from fitting; change its min/max there instead",
                                      o->sets[k], (int)len, o->sets[k], spec->path);
    }
    return 0;
}

/* Every fitted key must take the whole box: both bounds and a non-integer inside. */
static int val_check_box(cfg_doc *doc, const scn_opts *o, const scenario *spec, tp_err *err)
{
    scenario probe;
    double x[SCN_MAX_FIT];
    for (int corner = 0; corner < 3; corner++) {
        for (int i = 0; i < spec->n_fit_params; i++) {
            const scenario_fit_param *fp = &spec->fit_params[i];
            x[i] = corner == 0 ? fp->lo : corner == 1 ? fp->hi : fp->lo + 0.3819660113 * (fp->hi - fp->lo);
        }
        if (val_bind(doc, o, spec, x, &probe, err)) return -1;
    }
    return 0;
}

static int val_predict(const scenario *s, long tp, long batch, long ctx, run_summary *sum,
                       tp_err *err)
{
    run_request req = {tp, batch, ctx, s->steps, s->warmup, s->seed, 0};
    return run_cell(s, &req, sum, NULL, err);
}

typedef struct val_fit_job {
    const scenario *bound;
    const grid *g;
    double rel[SCN_MAX_FIT];
} val_fit_job;

static int val_fit_cell(void *ctx, size_t i, tp_err *err)
{
    val_fit_job *j = ctx;
    const scenario_fit_cell *fc = &j->bound->fit_cells[i];
    const grid_cell *gc = grid_find(j->g, fc->tp, fc->batch, fc->ctx);
    run_summary sum;
    if (val_predict(j->bound, fc->tp, fc->batch, fc->ctx, &sum, err)) return -1;
    j->rel[i] = sum.step_mean * 1e3 / gc->measured_ms - 1.0;
    return 0;
}

static double val_objective(const double *x, void *vctx, int *fail)
{
    val_fit_ctx *c = vctx;
    scenario *spec = c->trial;
    scenario bound;
    if (val_bind(c->doc, c->opts, spec, x, &bound, c->err)) return *fail = 1, 0;
    val_fit_job job = {&bound, c->g, {0}};
    if (par_map((size_t)spec->n_fit_cells, c->opts->jobs, val_fit_cell, &job, NULL, c->err))
        return *fail = 1, 0;
    double sse = 0; /* summed in cell order, whatever the threads */
    for (int i = 0; i < spec->n_fit_cells; i++) sse += job.rel[i] * job.rel[i];
    return sse;
}

static int val_fit(cfg_doc *doc, const scn_opts *o, const grid *g, scenario *spec,
                   val_report *rep, tp_err *err)
{
    for (int i = 0; i < spec->n_fit_cells; i++) {
        const scenario_fit_cell *fc = &spec->fit_cells[i];
        if (!grid_find(g, fc->tp, fc->batch, fc->ctx))
            return tp_err_at(err, spec->path, fc->line, fc->col,
                             "fit cell tp %ld batch %ld ctx %ld is not in the grid %s", fc->tp,
                             fc->batch, fc->ctx, g->path);
    }
    rep->n_fit = spec->n_fit_params;
    if (spec->n_fit_params == 0) return val_bind(doc, o, spec, NULL, &rep->scn, err);
    if (val_check_sets(o, spec, err) || val_check_box(doc, o, spec, err)) return -1;
    double lo[SCN_MAX_FIT], hi[SCN_MAX_FIT];
    for (int i = 0; i < spec->n_fit_params; i++)
        lo[i] = spec->fit_params[i].lo, hi[i] = spec->fit_params[i].hi;
    val_fit_ctx ctx = {doc, o, g, spec, err};
    if (fit_minimize(spec->n_fit_params, lo, hi, val_objective, &ctx, rep->fitted,
                     &rep->fit_objective, &rep->fit_evaluations))
        return -1;
    return val_bind(doc, o, spec, rep->fitted, &rep->scn, err);
}

static int val_is_calibration(const scenario *s, const grid_cell *c)
{
    for (int i = 0; i < s->n_fit_cells; i++)
        if (s->fit_cells[i].tp == c->tp && s->fit_cells[i].batch == c->batch &&
            s->fit_cells[i].ctx == c->ctx)
            return 1;
    return 0;
}

static val_config *val_config_for(val_report *r, const grid_cell *c)
{
    for (int i = 0; i < r->n_configs; i++)
        if (!strcmp(r->configs[i].config, c->config)) return &r->configs[i];
    if (r->n_configs == VAL_MAX_CONFIGS) return NULL;
    val_config *vc = &r->configs[r->n_configs++];
    memset(vc, 0, sizeof *vc);
    snprintf(vc->config, sizeof vc->config, "%s", c->config);
    vc->tp = c->tp;
    return vc;
}

static int val_aggregate(val_report *r, tp_err *err)
{
    double grid_resid[VAL_MAX_CONFIGS] = {0}, heldout_sum[VAL_MAX_CONFIGS] = {0};
    int grid_resid_ok[VAL_MAX_CONFIGS];
    for (int i = 0; i < VAL_MAX_CONFIGS; i++) grid_resid_ok[i] = 1;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *vc = &r->cells[i];
        val_config *c = val_config_for(r, vc->g);
        if (!c) return tp_err_set(err, "%s: more than %d configs", r->g->path, VAL_MAX_CONFIGS);
        if (c->tp != vc->g->tp)
            return tp_err_at(err, r->g->path, vc->g->line, 0,
                             "config '%s' has tp %ld here and %ld before", c->config, vc->g->tp, c->tp);
        int k = (int)(c - r->configs);
        double ae = fabs(vc->error_pct);
        c->n++;
        c->mape_pct += ae;
        if (!vc->calibration) c->n_heldout++, heldout_sum[k] += ae;
        c->residual_ms += vc->g->measured_ms - 1e3 * (vc->sim.breakdown.allreduce + vc->sim.breakdown.compute);
        if (isnan(vc->g->pred_comm_ms) || isnan(vc->g->pred_compute_ms)) grid_resid_ok[k] = 0;
        else grid_resid[k] += vc->g->measured_ms - vc->g->pred_comm_ms - vc->g->pred_compute_ms;
        c->measured_mean_ms += vc->g->measured_ms;
        c->predicted_mean_ms += vc->predicted_ms;
    }
    for (int k = 0; k < r->n_configs; k++) {
        val_config *c = &r->configs[k];
        c->mape_pct /= c->n;
        c->heldout_mape_pct = c->n_heldout ? heldout_sum[k] / c->n_heldout : NAN;
        /* the verdict is on held-out cells only: an in-sample fit proves nothing */
        c->tested = c->n_heldout > 0;
        c->pass = c->tested && c->heldout_mape_pct <= r->kill_switch_pct;
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

static int val_predict_cell(void *ctx, size_t i, tp_err *err)
{
    val_report *r = ctx;
    val_cell *vc = &r->cells[i];
    return val_predict(&r->scn, vc->g->tp, vc->g->batch, vc->g->ctx, &vc->sim, err);
}

int val_run(const char *path, const scn_opts *o, const grid *g, double kill_switch_pct,
            val_report *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    out->g = g;
    out->kill_switch_pct = kill_switch_pct;
    scenario *spec = malloc(sizeof *spec);
    const char *sets[SCN_OPTS_MAX_SETS + 1];
    cfg_doc *doc = scenario_open(path, sets, scn_opts_sets(o, sets), err);
    int rc = -1;
    if (!spec || !doc) {
        if (!spec) tp_err_set(err, "out of memory");
        goto out;
    }
    if (scenario_bind(doc, spec, err) || val_fit(doc, o, g, spec, out, err)) goto out;
    out->cells = calloc(g->n, sizeof *out->cells);
    if (!out->cells) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    out->n_cells = g->n;
    for (size_t i = 0; i < g->n; i++) out->cells[i].g = &g->cells[i];
    if (par_map(g->n, o->jobs, val_predict_cell, out, o->quiet ? NULL : "validate", err)) goto out;
    for (size_t i = 0; i < g->n; i++) {
        val_cell *vc = &out->cells[i];
        vc->predicted_ms = vc->sim.step_mean * 1e3;
        vc->error_pct = 100.0 * (vc->predicted_ms - vc->g->measured_ms) / vc->g->measured_ms;
        vc->calibration = val_is_calibration(spec, vc->g);
    }
    if (val_aggregate(out, err)) goto out;
    val_shrink(out);
    rc = 0;
out:
    cfg_free(doc);
    free(spec);
    if (rc) val_free(out);
    return rc;
}

void val_free(val_report *r)
{
    free(r->cells);
    r->cells = NULL;
    r->n_cells = 0;
}
