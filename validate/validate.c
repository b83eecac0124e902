/* validate.c: see validate.h. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"

/* The study's compute column is a roofline at 75.6% of the H100's 3.35 TB/s (REFERENCE.md
 * section 1: reproduces its predicted compute to 0.3% on all 8 cells); the additive null
 * baseline uses it as the study did. */
#define VAL_STUDY_HBM_EFF 0.756
#define VAL_RAYS 12           /* rays around the 2-parameter region (15 degrees from any tangent point) */
#define VAL_BISECT 16         /* steps at most per boundary search along one ray */
#define VAL_TWO_PI 6.283185307179586

/* ------------------------------------------------------------ protocols ----------- */

static int val_tp_list(const char *s, size_t len, long *out, int *n, tp_err *err)
{
    *n = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        long v = 0;
        while (j < len && isdigit((unsigned char)s[j]) && v <= 1024) v = v * 10 + (s[j++] - '0');
        if (j == i || v < 1 || v > 1024 || (j < len && s[j] != ','))
            return tp_err_set(err, "'%.*s' is not a list of TP degrees, expected e.g. 2 or 2,4",
                              (int)len, s);
        for (int k = 0; k < *n; k++)
            if (out[k] == v) return tp_err_set(err, "TP degree %ld is listed twice", v);
        if (*n == VAL_MAX_TP) return tp_err_set(err, "more than %d TP degrees", VAL_MAX_TP);
        out[(*n)++] = v;
        i = j + (j < len);
        if (j < len && i == len)
            return tp_err_set(err, "'%.*s' ends with a comma, expected a TP degree", (int)len, s);
    }
    if (!*n) return tp_err_set(err, "an empty list of TP degrees, expected e.g. 2");
    return 0;
}

int val_protocol_parse(const char *text, val_protocol *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (!strcmp(text, "within")) return out->kind = VAL_WITHIN, 0;
    if (!strcmp(text, "loo")) return out->kind = VAL_LOO, 0;
    const char *spec = text;
    if (!strncmp(text, "transfer ", 9)) spec = text + 9;
    const char *colon = strchr(spec, ':');
    if (!colon || (spec == text && !isdigit((unsigned char)text[0])))
        return tp_err_set(err, "protocol '%s', expected within, loo or transfer A:B (e.g. transfer 2:4)",
                          text);
    out->kind = VAL_TRANSFER;
    if (val_tp_list(spec, (size_t)(colon - spec), out->from, &out->n_from, err) ||
        val_tp_list(colon + 1, strlen(colon + 1), out->to, &out->n_to, err))
        return -1;
    for (int i = 0; i < out->n_from; i++)
        for (int j = 0; j < out->n_to; j++)
            if (out->from[i] == out->to[j])
                return tp_err_set(err, "transfer %s: TP-%ld is on both sides, expected the degrees "
                                  "fitted on and the degrees judged to be disjoint", spec, out->from[i]);
    return 0;
}

static void val_tps(const long *v, int n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", i ? "," : "", v[i]);
}

void val_protocol_name(const val_protocol *p, char *out, size_t cap)
{
    if (p->kind != VAL_TRANSFER) {
        snprintf(out, cap, "%s", p->kind == VAL_WITHIN ? "within" : "loo");
        return;
    }
    char a[64], b[64];
    val_tps(p->from, p->n_from, a, sizeof a);
    val_tps(p->to, p->n_to, b, sizeof b);
    snprintf(out, cap, "transfer %s:%s", a, b);
}

static int val_tp_in(long tp, const long *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] == tp) return 1;
    return 0;
}

val_options val_default_options(void)
{
    val_options o;
    memset(&o, 0, sizeof o);
    o.kill_switch_pct = 15.0;
    o.meas_cv = 0.01;
    o.intervals = 1;
    o.sensitivity = 1;
    return o;
}

const char *val_verdict_name(val_verdict v)
{
    static const char *const names[] = {"UNTESTED", "MISFIT", "FAIL", "PASS-NO-SKILL", "SUPPORTED"};
    return names[v];
}

const char *val_role_name(val_role r)
{
    static const char *const names[] = {"unused", "calibration", "held-out"};
    return names[r];
}

/* ------------------------------------------------------------ binding ------------- */

typedef struct val_ctx {
    cfg_doc *doc;
    const scn_opts *opts;
    const grid *g;
    scenario *spec;           /* as loaded, with its fit and declarations */
    val_report *r;
    const val_fold *fold;     /* the fold being fitted */
    tp_err *err;
} val_ctx;

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
    /* the same for a measured file's value (measured.h) that no --set replaced */
    for (int p = 0; p < MEASURED_PARTS; p++) {
        const measured_group *mg = &spec->measured.parts[p];
        for (int k = 0; k < mg->n_keys; k++)
            for (int i = 0; i < spec->n_fit_params; i++)
                for (int j = 0; j < spec->fit_params[i].n_keys; j++)
                    if (!mg->overridden_by[k][0] && !strcmp(mg->keys[k], spec->fit_params[i].keys[j]))
                        return tp_err_at(err, spec->measured.path, mg->line[k], mg->col[k],
                                         "%s: measured, but a free parameter of %s's fit, whose "
                                         "value comes from fitting; expected tpsim run with the "
                                         "measured file, or a scenario that does not fit it",
                                         mg->keys[k], spec->path);
    }
    return 0;
}

/* Every fitted key must take the whole box: both bounds and a non-integer inside. */
static int val_check_box(cfg_doc *doc, const scn_opts *o, const scenario *spec, tp_err *err)
{
    scenario *probe = malloc(sizeof *probe);
    if (!probe) return tp_err_set(err, "out of memory");
    double x[SCN_MAX_FIT];
    int rc = 0;
    for (int corner = 0; corner < 3 && !rc; corner++) {
        for (int i = 0; i < spec->n_fit_params; i++) {
            const scenario_fit_param *fp = &spec->fit_params[i];
            x[i] = corner == 0 ? fp->lo : corner == 1 ? fp->hi : fp->lo + 0.3819660113 * (fp->hi - fp->lo);
        }
        rc = val_bind(doc, o, spec, x, probe, err);
    }
    free(probe);
    return rc;
}

/* ------------------------------------------------------- declared knobs ----------- */

/* The key a --set assigns, if it is `path`. */
static int val_set_names(const scn_opts *o, const char *path)
{
    size_t len = strlen(path);
    for (int k = 0; k < o->n_sets; k++)
        if (!strncmp(o->sets[k], path, len) && o->sets[k][len] == '=') return 1;
    return 0;
}

static int val_is_number(const cfg_node *n)
{
    if (n->kind != CFG_SCALAR || n->quoted || !n->text[0]) return 0;
    char *end;
    strtod(n->text, &end);
    return *end == '\0';
}

static int val_knob_declared(const scenario *s, const scn_opts *o, const char *path)
{
    for (int i = 0; i < s->n_fit_params; i++)
        for (int j = 0; j < s->fit_params[i].n_keys; j++)
            if (!strcmp(s->fit_params[i].keys[j], path)) return 1;
    for (int i = 0; i < s->n_decls; i++)
        if (!strcmp(s->decls[i].key, path)) return 1;
    for (int p = 0; p < MEASURED_PARTS; p++) /* sourced by a trace calibration (measured.h) */
        for (int k = 0; k < s->measured.parts[p].n_keys; k++)
            if (!strcmp(s->measured.parts[p].keys[k], path)) return 1;
    return val_set_names(o, path);
}

/* Every number under gpu, host, execution, program's counts and offset_ms could have been
 * informed by the grid: it must be fitted, sourced or assumed (or set on the command line,
 * which makes it an assumption). */
static int val_knobs_walk(const cfg_node *n, const scenario *s, const scn_opts *o, tp_err *err)
{
    if (n->kind == CFG_SCALAR) {
        if (!val_is_number(n) || val_knob_declared(s, o, n->path)) return 0;
        return cfg_error(n, err, "a number the grid could inform is neither fitted, sourced nor "
                         "assumed; declare it under fit.params, sourced: {key, source} or "
                         "assumed: {key, why}");
    }
    for (size_t i = 0; i < n->n; i++)
        if (val_knobs_walk(n->vals[i], s, o, err)) return -1;
    return 0;
}

static int val_knobs(cfg_doc *doc, const scenario *s, const scn_opts *o, tp_err *err)
{
    static const char *const tops[] = {"gpu", "host", "execution", "offset_ms",
                                       "program.input_copies", "program.sampling_kernels", NULL};
    for (int i = 0; tops[i]; i++) {
        const cfg_node *n = cfg_find(cfg_root(doc), tops[i]);
        if (n && val_knobs_walk(n, s, o, err)) return -1;
    }
    return 0;
}

/* -------------------------------------------------------------- folds ------------- */

static int val_same_cell(const grid_cell *c, long tp, long batch, long ctx)
{
    return c->tp == tp && c->batch == batch && c->ctx == ctx;
}

static int val_fold_has(const val_fold *f, size_t i)
{
    for (int k = 0; k < f->n_cal; k++)
        if (f->cal[k] == i) return 1;
    return 0;
}

static void val_fold_add(val_fold *f, size_t i)
{
    if (!val_fold_has(f, i)) f->cal[f->n_cal++] = i;
}

static val_config *val_config_for(val_report *r, const grid_cell *c, tp_err *err)
{
    for (int i = 0; i < r->n_configs; i++)
        if (!strcmp(r->configs[i].config, c->config)) {
            if (r->configs[i].tp != c->tp) {
                tp_err_at(err, r->g->path, c->line, 0, "config '%s' has tp %ld here and %ld before",
                          c->config, c->tp, r->configs[i].tp);
                return NULL;
            }
            return &r->configs[i];
        }
    if (r->n_configs == VAL_MAX_CONFIGS) {
        tp_err_set(err, "%s: more than %d configs", r->g->path, VAL_MAX_CONFIGS);
        return NULL;
    }
    val_config *vc = &r->configs[r->n_configs++];
    memset(vc, 0, sizeof *vc);
    snprintf(vc->config, sizeof vc->config, "%s", c->config);
    vc->tp = c->tp;
    return vc;
}

/* May a fold calibrate on grid cell i? (transfer: only degrees A; loo: not the left-out config) */
static int val_fold_allows(const val_report *r, int fold, size_t i)
{
    const grid_cell *c = &r->g->cells[i];
    if (r->protocol.kind == VAL_TRANSFER) return val_tp_in(c->tp, r->protocol.from, r->protocol.n_from);
    if (r->protocol.kind == VAL_LOO) return strcmp(c->config, r->configs[fold].config) != 0;
    return 1;
}

static int val_make_folds(val_report *r, const scenario *spec, tp_err *err)
{
    const grid *g = r->g;
    for (int i = 0; i < spec->n_fit_cells; i++) {
        const scenario_fit_cell *fc = &spec->fit_cells[i];
        if (!grid_find(g, fc->tp, fc->batch, fc->ctx))
            return tp_err_at(err, spec->path, fc->line, fc->col,
                             "fit cell tp %ld batch %ld ctx %ld is not in the grid %s", fc->tp,
                             fc->batch, fc->ctx, g->path);
    }
    for (int i = 0; i < spec->n_borrowed_cells; i++) {
        const scenario_fit_cell *fc = &spec->borrowed_cells[i];
        if (!grid_find(g, fc->tp, fc->batch, fc->ctx))
            return tp_err_at(err, spec->path, fc->line, fc->col,
                             "fitted_on cell tp %ld batch %ld ctx %ld is not in the grid %s: the "
                             "borrowed value was fitted on other data", fc->tp, fc->batch, fc->ctx,
                             g->path);
    }
    if (r->protocol.kind == VAL_TRANSFER) {
        char pn[96];
        val_protocol_name(&r->protocol, pn, sizeof pn);
        int have_from = 0, have_to = 0;
        for (size_t i = 0; i < g->n; i++) {
            have_from |= val_tp_in(g->cells[i].tp, r->protocol.from, r->protocol.n_from);
            have_to |= val_tp_in(g->cells[i].tp, r->protocol.to, r->protocol.n_to);
        }
        if (!have_from || !have_to)
            return tp_err_set(err, "%s: the grid %s has no cell of the TP degree(s) %s, expected "
                              "degrees it measured", pn, g->path, have_from ? "judged" : "fitted on");
    }
    r->n_folds = r->protocol.kind == VAL_LOO ? r->n_configs : 1;
    if (r->protocol.kind == VAL_LOO && r->n_configs < 2)
        return tp_err_set(err, "loo: the grid %s has one config, expected at least two", g->path);
    r->folds = calloc((size_t)r->n_folds, sizeof *r->folds);
    if (!r->folds) return tp_err_set(err, "out of memory");
    for (int f = 0; f < r->n_folds; f++) {
        val_fold *fd = &r->folds[f];
        fd->cal = calloc(g->n, sizeof *fd->cal);
        if (!fd->cal) return tp_err_set(err, "out of memory");
        if (r->protocol.kind == VAL_LOO)
            snprintf(fd->label, sizeof fd->label, "without %s", r->configs[f].config);
        else
            snprintf(fd->label, sizeof fd->label, "all configs");
        for (size_t i = 0; i < g->n; i++)
            for (int k = 0; k < spec->n_fit_cells; k++)
                if (val_same_cell(&g->cells[i], spec->fit_cells[k].tp, spec->fit_cells[k].batch,
                                  spec->fit_cells[k].ctx) && val_fold_allows(r, f, i))
                    val_fold_add(fd, i);
        if (!fd->n_cal && r->protocol.kind != VAL_WITHIN) {
            fd->cal_all_of_from = 1;
            for (size_t i = 0; i < g->n; i++)
                if (val_fold_allows(r, f, i)) val_fold_add(fd, i);
        }
        /* borrowed values were fitted on these: they calibrate, whatever the protocol */
        for (size_t i = 0; i < g->n; i++)
            for (int k = 0; k < spec->n_borrowed_cells; k++)
                if (val_same_cell(&g->cells[i], spec->borrowed_cells[k].tp,
                                  spec->borrowed_cells[k].batch, spec->borrowed_cells[k].ctx) &&
                    !val_fold_has(fd, i)) {
                    val_fold_add(fd, i);
                    fd->cal_borrowed = 1;
                }
    }
    return 0;
}

/* The fold that judges a config, and a cell's role in it. */
static int val_home_fold(const val_report *r, int config)
{
    return r->protocol.kind == VAL_LOO ? config : 0;
}

static val_role val_role_of(const val_report *r, int fold, size_t i)
{
    const grid_cell *c = &r->g->cells[i];
    if (val_fold_has(&r->folds[fold], i)) return VAL_CALIBRATION;
    switch (r->protocol.kind) {
    case VAL_TRANSFER: return val_tp_in(c->tp, r->protocol.to, r->protocol.n_to) ? VAL_HELDOUT : VAL_UNUSED;
    case VAL_LOO: return strcmp(c->config, r->configs[fold].config) ? VAL_UNUSED : VAL_HELDOUT;
    default: return VAL_HELDOUT;
    }
}

/* ---------------------------------------------------------------- fit ------------- */

static int val_predict(const scenario *s, long tp, long batch, long ctx, run_summary *sum,
                       tp_err *err)
{
    run_request req = {tp, batch, ctx, s->steps, s->warmup, s->seed, 0};
    return run_cell(s, &req, sum, NULL, err);
}

/* One simulated cell per job (par_map): each writes only its own slot. */
typedef struct val_cells_job {
    const scenario *bound;
    const grid_cell *const *cells; /* the cells to simulate, NULL entries skipped */
    double *ms;                    /* their step, ms (NAN where skipped) */
    run_summary *sums;             /* or NULL */
} val_cells_job;

static int val_cell_job(void *ctx, size_t i, tp_err *err)
{
    val_cells_job *j = ctx;
    const grid_cell *gc = j->cells[i];
    run_summary sum;
    j->ms[i] = NAN;
    if (!gc) return 0;
    if (val_predict(j->bound, gc->tp, gc->batch, gc->ctx, &sum, err)) return -1;
    j->ms[i] = sum.step_mean * 1e3;
    if (j->sums) j->sums[i] = sum;
    return 0;
}

/* Sum of squared relative errors of the fold's calibration cells at parameters x, the cells
 * simulated on --jobs threads and summed in cell order (the same whatever the threads). */
static double val_objective(const double *x, void *vctx, int *fail)
{
    val_ctx *c = vctx;
    size_t n = (size_t)c->fold->n_cal;
    scenario *bound = malloc(sizeof *bound);
    const grid_cell **cells = calloc(n ? n : 1, sizeof *cells);
    double *ms = calloc(n ? n : 1, sizeof *ms), sse = 0;
    if (!bound || !cells || !ms) {
        tp_err_set(c->err, "out of memory");
        *fail = 1;
    } else if (val_bind(c->doc, c->opts, c->spec, x, bound, c->err)) {
        *fail = 1;
    } else {
        for (size_t i = 0; i < n; i++) cells[i] = &c->g->cells[c->fold->cal[i]];
        val_cells_job job = {bound, cells, ms, NULL};
        if (par_map(n, c->opts->jobs, val_cell_job, &job, NULL, c->err)) *fail = 1;
        for (size_t i = 0; i < n && !*fail; i++) {
            double rel = ms[i] / cells[i]->measured_ms - 1.0;
            sse += rel * rel;
        }
    }
    free(bound);
    free(cells);
    free(ms);
    return sse;
}

static int val_fit_fold(val_ctx *c, val_fold *fd, tp_err *err)
{
    const scenario *spec = c->spec;
    if (spec->n_fit_params == 0) return 0;
    double lo[SCN_MAX_FIT], hi[SCN_MAX_FIT];
    for (int i = 0; i < spec->n_fit_params; i++)
        lo[i] = spec->fit_params[i].lo, hi[i] = spec->fit_params[i].hi;
    c->fold = fd;
    return fit_minimize(spec->n_fit_params, lo, hi, val_objective, c, fd->fitted, &fd->objective,
                        &fd->evaluations);
}

/* Predict every cell whose config this fold judges into preds (ms, NAN elsewhere), with
 * the free parameters at x and, when `set` is given, one more override; on --jobs threads,
 * with a progress line when `progress` names one. */
static int val_predict_fold(val_ctx *c, int fold, const double *x, const char *set,
                            const char *set_src, int set_line, int set_col, double *preds,
                            run_summary *sums, const char *progress, tp_err *err)
{
    size_t n = c->r->n_cells;
    scenario *bound = malloc(sizeof *bound);
    const grid_cell **cells = calloc(n, sizeof *cells);
    int rc = -1;
    if (!bound || !cells) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    if (set && cfg_set_at(c->doc, set, set_src, set_line, set_col, err)) goto out;
    if (val_bind(c->doc, c->opts, c->spec, x, bound, err)) goto out;
    for (size_t i = 0; i < n; i++) cells[i] = c->r->cells[i].fold == fold ? c->r->cells[i].g : NULL;
    val_cells_job job = {bound, cells, preds, sums};
    rc = par_map(n, c->opts->jobs, val_cell_job, &job, c->opts->quiet ? NULL : progress, err);
out:
    free(bound);
    free(cells);
    return rc;
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
    free(a);
    return rc;
}

static void val_baselines(val_report *r, const double *base_ms)
{
    for (int f = 0; f < r->n_folds; f++) {
        val_fold *fd = &r->folds[f];
        /* R0 minimising the squared relative errors: sum((b + R0 - m)/m)^2 */
        double num = 0, den = 0, all_sum = 0;
        for (int k = 0; k < fd->n_cal; k++) {
            double m = r->g->cells[fd->cal[k]].measured_ms, b = base_ms[fd->cal[k]];
            num += (m - b) / (m * m);
            den += 1.0 / (m * m);
            all_sum += m;
        }
        fd->r0_ms = den > 0 ? num / den : 0.0;
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

/* ----------------------------------------------------------- intervals ------------ */

typedef struct val_band {
    double *lo, *hi;          /* per cell, the prediction's range over the accepted set */
} val_band;

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
    double threshold = fd->objective + VAL_CHI2_95 * c->r->opt.meas_cv * c->r->opt.meas_cv;
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
static int val_interval_fold(val_ctx *c, int f, val_band *band, double *preds, tp_err *err)
{
    val_report *r = c->r;
    val_fold *fd = &r->folds[f];
    const scenario *spec = c->spec;
    int n = spec->n_fit_params, fail = 0;
    for (int i = 0; i < n; i++) fd->lo[i] = fd->hi[i] = fd->fitted[i];
    if (n == 0) return 0;
    double want = VAL_CHI2_95 * r->opt.meas_cv * r->opt.meas_cv, range[SCN_MAX_FIT], reach[SCN_MAX_FIT];
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

static int val_sens_add(val_report *r, const char *key, const char *note, cfg_doc *doc, tp_err *err)
{
    for (int i = 0; i < r->n_sens; i++)
        if (!strcmp(r->sens[i].key, key)) return 0;
    const cfg_node *n = cfg_find(cfg_root(doc), key);
    if (!n || !val_is_number(n)) return 0; /* a --set on a string or a flag moves nothing */
    val_sens *s = &r->sens[r->n_sens];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    snprintf(s->note, sizeof s->note, "%s", note);
    s->value = strtod(n->text, NULL);
    s->minus_ms = calloc(r->n_cells, sizeof *s->minus_ms);
    s->plus_ms = calloc(r->n_cells, sizeof *s->plus_ms);
    r->n_sens++;
    if (!s->minus_ms || !s->plus_ms) return tp_err_set(err, "out of memory");
    return 0;
}

/* The value moved by frac; integers stay integers. */
static void val_sens_value(const cfg_node *n, double v, double frac, char *out, size_t cap)
{
    int integer = !strpbrk(n->text, ".eE");
    if (integer) snprintf(out, cap, "%ld", lround(v * (1.0 + frac)));
    else snprintf(out, cap, "%.17g", v * (1.0 + frac));
}

static int val_sensitivity(val_ctx *c, double *preds, tp_err *err)
{
    val_report *r = c->r;
    const scenario *spec = c->spec;
    r->sens = calloc(SCN_MAX_DECLS + SCN_OPTS_MAX_SETS, sizeof *r->sens);
    if (!r->sens) return tp_err_set(err, "out of memory");
    for (int i = 0; i < spec->n_decls; i++)
        if (spec->decls[i].assumed && val_sens_add(r, spec->decls[i].key, spec->decls[i].note, c->doc, err))
            return -1;
    for (int k = 0; k < c->opts->n_sets; k++) {
        char key[192];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(c->opts->sets[k], "="), c->opts->sets[k]);
        if (val_sens_add(r, key, "set on the command line", c->doc, err)) return -1;
    }
    for (int s = 0; s < r->n_sens; s++) {
        val_sens *vs = &r->sens[s];
        const cfg_node *n = cfg_find(cfg_root(c->doc), vs->key);
        char orig[192], assign[320], val[64];
        snprintf(orig, sizeof orig, "%s=%s", vs->key, n->text);
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

/* ---------------------------------------------------------- aggregation ----------- */

static int val_aggregate(val_report *r)
{
    double grid_resid[VAL_MAX_CONFIGS] = {0}, held[VAL_MAX_CONFIGS] = {0},
           cons[VAL_MAX_CONFIGS] = {0}, add[VAL_MAX_CONFIGS] = {0};
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
        if (vc->role == VAL_HELDOUT && !isnan(vc->fit_lo))
            c->param_spread_pct = fmax(c->param_spread_pct,
                                       100.0 * (vc->fit_hi - vc->fit_lo) / vc->predicted_ms);
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
        c->skill = c->tested && c->best_baseline_pct > 0 ? 1.0 - c->heldout_mape_pct / c->best_baseline_pct
                                                          : NAN;
        double ks = r->kill_switch_pct, mape = c->heldout_mape_pct, best = c->best_baseline_pct;
        if (!c->tested) c->verdict = VAL_UNTESTED;
        else if (fd->misfit) c->verdict = VAL_MISFIT;
        else if (mape > ks) c->verdict = VAL_FAIL;
        else if (best > 0 && mape <= 0.5 * best && mape < best) c->verdict = VAL_SUPPORTED;
        else c->verdict = VAL_PASS_NO_SKILL;
        c->pass = c->tested && !fd->misfit && mape <= ks;
        if (!r->opt.intervals || !c->tested) c->param_spread_pct = NAN;
        c->identified = !isnan(c->param_spread_pct) && c->param_spread_pct <= ks;
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
static int val_open(const char *path, const scn_opts *o, const val_options *vo, cfg_doc **doc,
                    scenario **spec, val_protocol *proto, tp_err *err)
{
    *spec = malloc(sizeof **spec);
    *doc = scn_opts_open(path, o, err);
    if (!*spec) return tp_err_set(err, "out of memory");
    if (!*doc || scenario_bind(*doc, *spec, err)) return -1;
    scenario *s = *spec;
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
    if (s->n_fit_params && (val_check_sets(o, s, err) || val_check_box(*doc, o, s, err))) return -1;
    return val_knobs(*doc, s, o, err);
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
    int rc = -1;
    if (val_open(path, o, vo, &doc, &spec, &out->protocol, err) || val_setup_cells(out, err) ||
        val_make_folds(out, spec, err))
        goto out;
    preds = calloc(g->n, sizeof *preds);
    base = calloc(g->n, sizeof *base);
    sums = calloc(g->n, sizeof *sums);
    band.lo = calloc(g->n, sizeof *band.lo);
    band.hi = calloc(g->n, sizeof *band.hi);
    if (!preds || !base || !sums || !band.lo || !band.hi) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (int k = 0; k < out->n_configs; k++) out->configs[k].fold = val_home_fold(out, k);
    for (size_t i = 0; i < g->n; i++) {
        val_cell *vc = &out->cells[i];
        int k = 0;
        while (strcmp(out->configs[k].config, vc->g->config)) k++;
        vc->fold = out->configs[k].fold;
        vc->role = val_role_of(out, vc->fold, i);
        vc->calibration = vc->role == VAL_CALIBRATION;
    }
    val_ctx ctx = {doc, o, g, spec, out, NULL, err};
    out->n_fit = spec->n_fit_params;
    for (int f = 0; f < out->n_folds; f++) {
        val_fold *fd = &out->folds[f];
        if (val_fit_fold(&ctx, fd, err) ||
            val_predict_fold(&ctx, f, fd->fitted, NULL, NULL, 0, 0, preds, sums, "validate", err))
            goto out;
        for (size_t i = 0; i < g->n; i++) {
            val_cell *vc = &out->cells[i];
            if (vc->fold != f) continue;
            vc->sim = sums[i];
            vc->predicted_ms = preds[i];
            vc->error_pct = 100.0 * (vc->predicted_ms - vc->g->measured_ms) / vc->g->measured_ms;
            band.lo[i] = band.hi[i] = preds[i];
        }
        /* the fit's own miss of each calibration cell (predicted in this fold's fit) */
        scenario *bound = malloc(sizeof *bound);
        if (!bound) {
            tp_err_set(err, "out of memory");
            goto out;
        }
        int bad = val_bind(doc, o, spec, fd->fitted, bound, err);
        for (int k = 0; k < fd->n_cal && !bad; k++) {
            const grid_cell *gc = &g->cells[fd->cal[k]];
            run_summary sum;
            bad = val_predict(bound, gc->tp, gc->batch, gc->ctx, &sum, err);
            double e = fabs(100.0 * (sum.step_mean * 1e3 - gc->measured_ms) / gc->measured_ms);
            fd->cal_max_err_pct = fmax(fd->cal_max_err_pct, e);
        }
        if (!bad && f == 0) out->scn = *bound;
        free(bound);
        if (bad) goto out;
        fd->misfit = fd->cal_max_err_pct > vo->kill_switch_pct / 3.0;
    }
    for (int i = 0; i < out->n_fit; i++) out->fitted[i] = out->folds[0].fitted[i];
    out->fit_objective = out->folds[0].objective;
    out->fit_evaluations = out->folds[0].evaluations;
    if (val_additive_base(&out->scn, out, o->jobs, base, err)) goto out;
    val_baselines(out, base);
    if (vo->intervals) {
        for (int f = 0; f < out->n_folds; f++)
            if (val_interval_fold(&ctx, f, &band, preds, err)) goto out;
        double z = VAL_Z95 * vo->meas_cv;
        for (size_t i = 0; i < g->n; i++) {
            val_cell *vc = &out->cells[i];
            double p = vc->predicted_ms, noise = z * p;
            vc->fit_lo = band.lo[i];
            vc->fit_hi = band.hi[i];
            vc->pred_lo = p - sqrt((p - band.lo[i]) * (p - band.lo[i]) + noise * noise);
            vc->pred_hi = p + sqrt((band.hi[i] - p) * (band.hi[i] - p) + noise * noise);
            vc->inside = vc->g->measured_ms >= vc->pred_lo && vc->g->measured_ms <= vc->pred_hi;
        }
    } else {
        for (size_t i = 0; i < g->n; i++) {
            val_cell *vc = &out->cells[i];
            vc->fit_lo = vc->fit_hi = vc->pred_lo = vc->pred_hi = NAN;
        }
    }
    if (vo->sensitivity && val_sensitivity(&ctx, preds, err)) goto out;
    val_aggregate(out);
    val_shrink(out);
    rc = 0;
out:
    cfg_free(doc);
    free(spec);
    free(preds);
    free(base);
    free(sums);
    free(band.lo);
    free(band.hi);
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
    int rc = -1;
    if (val_open(path, o, &r->opt, &doc, &spec, &proto, err)) goto out;
    if (spec->n_fit_params == 0) {
        tp_err_set(err, "--scan: %s has no free parameters, nothing to scan", path);
        goto out;
    }
    val_ctx ctx = {doc, o, r->g, spec, (val_report *)r, &r->folds[fold], err};
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n2; j++) {
            double x[SCN_MAX_FIT];
            const scenario_fit_param *p = spec->fit_params;
            x[0] = p[0].lo + (p[0].hi - p[0].lo) * i / (n1 > 1 ? n1 - 1 : 1);
            if (spec->n_fit_params > 1) x[1] = p[1].lo + (p[1].hi - p[1].lo) * j / (n2 > 1 ? n2 - 1 : 1);
            int fail = 0;
            objective[i * n2 + j] = val_objective(x, &ctx, &fail);
            if (fail) goto out;
        }
    rc = 0;
out:
    cfg_free(doc);
    free(spec);
    return rc;
}
