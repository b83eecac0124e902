/* report_json.c: see report_json.h. */
#include "report_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "jw.h"
#include "rfile.h"

/* validate JSON: "folds", one entry per fit (vjson_print). */
static void vjson_folds(jw *w, const val_report *r)
{
    const scenario *s = &r->scn;
    jw_key(w, "folds");
    jw_arr(w);
    for (int f = 0; f < r->n_folds; f++) {
        const val_fold *fd = &r->folds[f];
        jw_obj(w);
        jw_kstr(w, "label", fd->label);
        jw_key(w, "calibration_cells");
        jw_arr(w);
        for (int k = 0; k < fd->n_cal; k++) {
            const grid_cell *g = &r->g->cells[fd->cal[k]];
            jw_obj(w);
            jw_kint(w, "tp", g->tp);
            jw_kint(w, "batch", g->batch);
            jw_kint(w, "ctx", g->ctx);
            jw_end_obj(w);
        }
        jw_end_arr(w);
        jw_kbool(w, "all_cells_of_fitted_degrees", fd->cal_all_of_from);
        jw_kbool(w, "borrowed_cells", fd->cal_borrowed);
        jw_key(w, "fitted");
        jw_obj(w);
        for (int i = 0; i < r->n_fit; i++) jw_knum(w, s->fit_params[i].key, fd->fitted[i]);
        jw_end_obj(w);
        jw_key(w, "fitted_95");
        jw_obj(w);
        for (int i = 0; i < r->n_fit && r->opt.intervals; i++) {
            jw_key(w, s->fit_params[i].key);
            jw_arr(w);
            jw_num(w, fd->lo[i]);
            jw_num(w, fd->hi[i]);
            jw_end_arr(w);
        }
        jw_end_obj(w);
        jw_knum(w, "objective", fd->objective);
        jw_kint(w, "evaluations", fd->evaluations);
        jw_kstr(w, "stop", fit_stop_name(fd->stop));
        jw_knum(w, "calibration_max_error_pct", fd->cal_max_err_pct);
        jw_kbool(w, "misfit", fd->misfit);
        jw_key(w, "at_bound"); /* per fitted key: "min", "max" or null */
        jw_obj(w);
        for (int i = 0; i < r->n_fit; i++) {
            jw_key(w, s->fit_params[i].key);
            jw_str(w, !fd->at_bound[i] ? NULL : fd->at_bound[i] < 0 ? "min" : "max");
        }
        jw_end_obj(w);
        jw_kbool(w, "on_free_bound", fd->on_free_bound);
        if (r->opt.intervals) {
            jw_key(w, "error_scale");
            jw_obj(w);
            jw_knum(w, "meas_cv_pct", 100 * fd->scale.meas_cv);
            jw_knum(w, "fit_rms_pct", 100 * fd->scale.fit_rms);
            jw_kint(w, "dof", fd->scale.dof);
            jw_kbool(w, "estimated", fd->scale.estimated);
            jw_knum(w, "model_cv_pct", 100 * fd->scale.model_cv);
            jw_knum(w, "cv_pct", 100 * fd->scale.cv);
            jw_knum(w, "quantile", fd->scale.q);
            /* "95%" where the synthetic checks support it: an estimated scale (or no model
             * error shown); "measurement error only" where model error cannot be estimated */
            jw_kstr(w, "interval", fd->scale.estimated ? "95%" : "measurement error only");
            jw_end_obj(w);
        }
        jw_knum(w, "additive_r0_ms", fd->r0_ms);
        jw_end_obj(w);
    }
    jw_end_arr(w);
}

/* validate JSON: "cells", every grid cell with its prediction. */
static void vjson_cells(jw *w, const val_report *r)
{
    jw_key(w, "cells");
    jw_arr(w);
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *c = &r->cells[i];
        const run_breakdown *b = &c->sim.breakdown;
        jw_obj(w);
        jw_kstr(w, "config", c->g->config);
        jw_kint(w, "tp", c->g->tp);
        jw_kint(w, "batch", c->g->batch);
        jw_kint(w, "ctx", c->g->ctx);
        jw_knum(w, "measured_ms", c->g->measured_ms);
        jw_knum(w, "predicted_ms", c->predicted_ms);
        jw_knum(w, "pred_lo_ms", c->pred_lo); /* the names plan uses for the same interval */
        jw_knum(w, "pred_hi_ms", c->pred_hi);
        jw_knum(w, "fit_lo_ms", c->fit_lo);
        jw_knum(w, "fit_hi_ms", c->fit_hi);
        jw_knum(w, "param_lo_ms", c->par_lo); /* the free parameters' part alone */
        jw_knum(w, "param_hi_ms", c->par_hi);
        if (r->opt.intervals) jw_kbool(w, "inside_interval", c->inside); /* run: domain.inside */
        jw_knum(w, "error_pct", c->error_pct);
        jw_kstr(w, "role", val_role_name(c->role));
        /* "calibration" is the all-reduce calibration's path elsewhere (docs/json.md) */
        jw_kbool(w, "calibration_cell", c->calibration);
        jw_kint(w, "fold", c->fold + 1);
        jw_key(w, "baselines_ms");
        jw_obj(w);
        jw_knum(w, "constant", c->constant_ms);
        jw_knum(w, "additive", c->additive_ms);
        jw_end_obj(w);
        cmd_json_breakdown(w, "breakdown_ms", b);
        jw_end_obj(w);
    }
    jw_end_arr(w);
}

/* validate JSON: "configs", one verdict per config. */
static void vjson_configs(jw *w, const val_report *r)
{
    jw_key(w, "configs");
    jw_arr(w);
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        jw_obj(w);
        jw_kstr(w, "config", c->config);
        jw_kint(w, "tp", c->tp);
        jw_kbool(w, "judged", c->judged);
        jw_kint(w, "fold", c->fold + 1);
        jw_kint(w, "n_cells", c->n);
        jw_kint(w, "n_heldout", c->n_heldout); /* as coverage's: the same counts */
        jw_knum(w, "mape_pct", c->mape_pct);
        jw_knum(w, "heldout_mape_pct", c->heldout_mape_pct);
        jw_knum(w, "kill_switch_pct", r->kill_switch_pct);
        jw_key(w, "baselines");
        jw_obj(w);
        jw_knum(w, "constant", c->constant_mape_pct);
        jw_knum(w, "additive", c->additive_mape_pct);
        jw_end_obj(w);
        jw_kstr(w, "best_baseline", c->tested ? c->best_baseline : "");
        jw_knum(w, "skill", c->skill);
        jw_kstr(w, "verdict", val_verdict_name(c->verdict));
        jw_kbool(w, "tested", c->tested);
        jw_kbool(w, "pass", c->pass);
        if (r->opt.intervals) {
            jw_kint(w, "n_inside", c->n_inside);
            jw_kbool(w, "identified", c->identified);
            jw_knum(w, "param_spread_pct", c->param_spread_pct);
            jw_knum(w, "range_mape_pct", c->range_mape_pct);
        }
        jw_knum(w, "residual_ms", c->residual_ms);
        jw_knum(w, "residual_grid_ms", c->residual_grid_ms);
        jw_end_obj(w);
    }
    jw_end_arr(w);
}

/* validate JSON: "coverage", "sourced", "sensitivity" and "shrink". */
static void vjson_evidence(jw *w, const val_report *r)
{
    const scenario *s = &r->scn;
    jw_key(w, "coverage");
    jw_obj(w);
    jw_kint(w, "n_heldout", r->n_heldout); /* counts: "inside" is a cell's boolean */
    if (r->opt.intervals) jw_kint(w, "n_inside", r->n_inside);
    jw_knum(w, "nominal", 0.95);
    jw_kstr(w, "synthetic", VAL_SYNTHETIC_COVERAGE);
    jw_end_obj(w);
    jw_key(w, "sourced");
    jw_arr(w);
    for (int i = 0; i < s->n_decls; i++) {
        if (s->decls[i].assumed) continue;
        jw_obj(w);
        jw_kstr(w, "key", s->decls[i].key);
        jw_kstr(w, "source", s->decls[i].note);
        jw_kbool(w, "borrowed", s->decls[i].borrowed);
        jw_end_obj(w);
    }
    jw_end_arr(w);
    jw_key(w, "sensitivity");
    jw_arr(w);
    for (int k = 0; k < r->n_sens; k++) {
        const val_sens *v = &r->sens[k];
        jw_obj(w);
        jw_kstr(w, "key", v->key);
        jw_kstr(w, "why", v->note);
        jw_kstr(w, "in_file", v->file[0] ? v->file : NULL);
        jw_knum(w, "value", v->value);
        jw_knum(w, "change_pct", 100 * VAL_SENS_FRAC);
        jw_key(w, "cells");
        jw_arr(w);
        for (size_t i = 0; i < r->n_cells && r->opt.sensitivity; i++) {
            const val_cell *c = &r->cells[i];
            if (c->role != VAL_HELDOUT) continue;
            jw_obj(w);
            jw_kint(w, "tp", c->g->tp);
            jw_kint(w, "batch", c->g->batch);
            jw_kint(w, "ctx", c->g->ctx);
            jw_knum(w, "predicted_ms", c->predicted_ms);
            jw_knum(w, "minus_ms", v->minus_ms[i]);
            jw_knum(w, "plus_ms", v->plus_ms[i]);
            jw_end_obj(w);
        }
        jw_end_arr(w);
        jw_end_obj(w);
    }
    jw_end_arr(w);
    jw_key(w, "shrink");
    jw_obj(w);
    if (r->shrink_to_tp) {
        jw_kint(w, "from_tp", r->shrink_from_tp);
        jw_kint(w, "to_tp", r->shrink_to_tp);
        jw_knum(w, "measured_ratio", r->shrink_measured); /* "measured" is run's object */
        jw_knum(w, "predicted_ratio", r->shrink_predicted);
        jw_knum(w, "ideal_ratio", (double)r->shrink_to_tp / (double)r->shrink_from_tp);
    }
    jw_end_obj(w);
}

int vjson_calib_state(const scenario *s, const char *path)
{
    if (s->has_kernels && !strcmp(s->kernels.path, path))
        return s->kernels.fp_why[0] ? FP_MISMATCH : (int)s->kernels.fp.state;
    for (int i = 0; i < s->n_cals; i++)
        if (!strcmp(s->cals[i].path, path)) return (int)s->cals[i].fp.state;
    if (s->measured.path[0] && !strcmp(s->measured.path, path)) return (int)s->measured.fp.state;
    return -1;
}

const char *vjson_state_name(int state)
{
    return state == FP_MATCH ? "verified" : state == FP_MISMATCH ? "EDITED"
         : state == FP_NONE  ? "not sealed" : "";
}

/* validate JSON: "inputs_read" (every file read, its fingerprint, a calibration's numbers' check)
 * and "unverified" */
static void vjson_files(jw *w, const val_report *r)
{
    rfile_input in[RFILE_MAX_INPUTS];
    int n = rfile_inputs_read(in, RFILE_MAX_INPUTS);
    jw_key(w, "inputs_read");
    jw_arr(w);
    for (int i = 0; i < n; i++) {
        int st = vjson_calib_state(&r->scn, in[i].path);
        jw_obj(w);
        jw_kstr(w, "path", in[i].path);
        jw_kstr(w, "fingerprint", in[i].fp[0] ? in[i].fp : NULL);
        jw_kstr(w, "numbers", st < 0 ? NULL : st == FP_MATCH ? "verified"
                                : st == FP_MISMATCH ? "edited" : "not_sealed");
        jw_end_obj(w);
    }
    jw_end_arr(w);
    jw_key(w, "unverified");
    jw_arr(w);
    for (int i = 0; i < r->n_unverified; i++) jw_str(w, r->unverified[i]);
    jw_end_arr(w);
}

void vjson_print(const val_report *r)
{
    const scenario *s = &r->scn;
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_kstr(&w, "scenario", s->name);
    jw_kstr(&w, "serving_engine", s->engine);
    jw_kstr(&w, "grid", r->g->path);
    jw_kstr(&w, "protocol", pn);
    jw_knum(&w, "kill_switch_pct", r->kill_switch_pct);
    jw_knum(&w, "meas_cv_pct", 100 * r->opt.meas_cv);
    jw_key(&w, "fitted");
    jw_obj(&w);
    for (int i = 0; i < r->n_fit; i++) jw_knum(&w, s->fit_params[i].key, r->fitted[i]);
    jw_end_obj(&w);
    jw_kint(&w, "fit_evaluations", r->fit_evaluations);
    jw_kstr(&w, "fit_stop", fit_stop_name(r->fit_stop_reason));
    vjson_folds(&w, r);
    vjson_cells(&w, r);
    vjson_configs(&w, r);
    vjson_evidence(&w, r);
    vjson_files(&w, r);
    jw_end_obj(&w);
    jw_done(&w);
}
