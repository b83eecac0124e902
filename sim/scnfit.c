/* scnfit.c: see scnfit.h. */
#include "scnfit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const fit_keys[] = {"params", "cells", "protocol", NULL};
static const char *const sourced_keys[] = {"key", "source", "fitted_on", NULL};
static const char *const assumed_keys[] = {"key", "why", NULL};
static const char *const fit_param_keys[] = {"key", "also", "min", "max", "physical_min",
                                              "physical_max", NULL};
static const char *const validated_keys[] = {
    "tp", "modes", "batch", "ctx", "hardware", "model", "grid", "verdict", "engine",
    /* what tpsim validate --write-domain adds (scnfit_bind_written) */
    "precision", "host_phases", "allreduce", "queue_depth", "graph_mode", "kill_switch_pct",
    "heldout_protocol", "heldout_cells", "heldout_mape_pct", "heldout_rms_pct", "inputs", NULL};
/* the keys only a written block has: all of them (graph_mode and the held-out errors as
 * scnfit_bind_written says) or none */
static const char *const written_keys[] = {"precision", "host_phases", "allreduce",
                                           "queue_depth", "kill_switch_pct", "heldout_protocol",
                                           "heldout_cells", "inputs", NULL};
static const char *const precision_keys[] = {"weights", "kv_cache", NULL};
static const char *const input_keys[] = {"file", "fp", NULL};
static const char *const fit_cell_keys[] = {"tp", "batch", "ctx", NULL};

/* A [lo, hi] pair of whole numbers. */
static int scnfit_range(const cfg_node *map, const char *key, long *lo, long *hi, tp_err *err)
{
    cfg_node *n = cfg_need(map, key, err);
    if (!n) return -1;
    if (n->kind != CFG_SEQ || n->n != 2)
        return cfg_error(n, err, "expected [lo, hi], two whole numbers");
    if (cfg_as_long(n->vals[0], 1, 1L << 24, lo, err) ||
        cfg_as_long(n->vals[1], 1, 1L << 24, hi, err))
        return -1;
    if (*lo > *hi) return cfg_error(n, err, "%ld > %ld, expected lo <= hi", *lo, *hi);
    return 0;
}

/* The choice text of key in map into out (cap bytes), the key required. */
static int scnfit_choice(const cfg_node *map, const char *key, const char *const *choices,
                         char *out, size_t cap, tp_err *err)
{
    cfg_node *n = cfg_need(map, key, err);
    int k;
    if (!n || cfg_as_choice(n, choices, &k, err)) return -1;
    snprintf(out, cap, "%s", choices[k]);
    return 0;
}

/* inputs: [{file, fp}]: each file once, relative to the scenario's folder, its fingerprint 16
 * lowercase hex digits (fprint.h). */
static int scnfit_bind_inputs(const cfg_node *in, scenario_domain *d, tp_err *err)
{
    if (in->kind != CFG_SEQ || in->n < 1 || in->n > SCN_DOMAIN_INPUTS)
        return cfg_error(in, err, "expected a list of 1 to %d {file, fp}", SCN_DOMAIN_INPUTS);
    for (size_t i = 0; i < in->n; i++) {
        const cfg_node *e = in->vals[i];
        scenario_input *x = &d->inputs[d->n_inputs];
        const char *file, *fp;
        if (cfg_expect_map(e, input_keys, err) ||
            cfg_string_fits(e, "file", 1, sizeof x->path, &file, err) ||
            cfg_string(e, "fp", 1, &fp, err))
            return -1;
        if (strlen(fp) != 16 || strspn(fp, "0123456789abcdef") != 16)
            return cfg_error(cfg_get(e, "fp"), err, "'%s', expected 16 lowercase hex digits "
                             "(a fingerprint tpsim validate --write-domain wrote)", fp);
        for (int j = 0; j < d->n_inputs; j++)
            if (!strcmp(d->inputs[j].path, file))
                return cfg_error(cfg_get(e, "file"), err, "'%s' is listed twice, expected each "
                                 "file once", file);
        snprintf(x->path, sizeof x->path, "%s", file);
        snprintf(x->fp, sizeof x->fp, "%s", fp);
        d->n_inputs++;
    }
    return 0;
}

/* What tpsim validate --write-domain adds to the block: every input that changes a
 * prediction, the held-out error it measured, each file's fingerprint. All of it is required
 * once any of it is written (a block is written whole or not at all), graph_mode only when
 * graphs were judged, the held-out errors only when some cell was held out. */
static int scnfit_bind_written(const cfg_node *v, const char *engine, scenario_domain *d,
                               tp_err *err)
{
    static const char *const weights[] = {"bf16", "fp8", "int4", "fp32", "fp64", NULL};
    static const char *const kv[] = {"bf16", "fp8", "fp32", "fp64", NULL};
    static const char *const overlap[] = {"serialised", "overlapped", NULL};
    static const char *const graph_modes[] = {"full", "piecewise", NULL};
    for (int i = 0; written_keys[i]; i++)
        if (!cfg_get(v, written_keys[i]))
            return cfg_error(v, err, "missing '%s': a block tpsim validate --write-domain wrote "
                             "has all of %s, engine; expected it whole (rerun tpsim validate "
                             "--write-domain) or none of them", written_keys[i],
                             "precision, host_phases, allreduce, queue_depth, kill_switch_pct, "
                             "heldout_protocol, heldout_cells, inputs");
    if (!engine) {
        cfg_need(v, "engine", err); /* its "missing key" line */
        return -1;
    }
    const cfg_node *p = cfg_get(v, "precision"), *gm = cfg_get(v, "graph_mode");
    const char *proto;
    if (cfg_expect_map(p, precision_keys, err) ||
        scnfit_choice(p, "weights", weights, d->weights, sizeof d->weights, err) ||
        scnfit_choice(p, "kv_cache", kv, d->kv_cache, sizeof d->kv_cache, err) ||
        scnfit_choice(v, "host_phases", overlap, d->host_phases, sizeof d->host_phases, err) ||
        scnfit_choice(v, "allreduce", coll_model_names, d->allreduce, sizeof d->allreduce, err) ||
        cfg_long(v, "queue_depth", 1, 1, 1L << 24, &d->queue_depth, err) ||
        cfg_double(v, "kill_switch_pct", 1, 0.001, 1000, &d->kill_switch_pct, err) ||
        cfg_string_fits(v, "heldout_protocol", 1, sizeof d->heldout_protocol, &proto, err) ||
        cfg_long(v, "heldout_cells", 1, 0, 1L << 24, &d->heldout_cells, err))
        return -1;
    if (gm && !d->graphs)
        return cfg_error(gm, err, "graph_mode without graphs in modes, expected it only when "
                         "graphs were judged");
    if (!gm && d->graphs) {
        cfg_need(v, "graph_mode", err);
        return -1;
    }
    if (gm && scnfit_choice(v, "graph_mode", graph_modes, d->graph_mode, sizeof d->graph_mode,
                            err))
        return -1;
    snprintf(d->heldout_protocol, sizeof d->heldout_protocol, "%s", proto);
    int req = d->heldout_cells > 0;
    if (cfg_double(v, "heldout_mape_pct", req, 0, 1e6, &d->heldout_mape_pct, err) ||
        cfg_double(v, "heldout_rms_pct", req, 0, 1e6, &d->heldout_rms_pct, err))
        return -1;
    if (!req && (cfg_get(v, "heldout_mape_pct") || cfg_get(v, "heldout_rms_pct")))
        return cfg_error(cfg_get(v, "heldout_cells"), err, "0 held-out cells with a held-out "
                         "error, expected the error only for a positive count");
    if (req && d->heldout_rms_pct < d->heldout_mape_pct)
        return cfg_error(cfg_get(v, "heldout_rms_pct"), err, "%g is below heldout_mape_pct %g, "
                         "expected the root-mean-square error at least the mean one",
                         d->heldout_rms_pct, d->heldout_mape_pct);
    if (scnfit_bind_inputs(cfg_get(v, "inputs"), d, err)) return -1;
    d->written = 1;
    return 0;
}

/* validated: {tp: [..], modes: [eager|graphs..], batch: [lo, hi], ctx: [lo, hi], hardware,
 * model, grid, verdict}: every key required, so a domain is never half stated; then what
 * validate --write-domain adds, whole or not at all (scnfit_bind_written). */
int scnfit_bind_domain(const cfg_node *v, scenario_domain *d, tp_err *err)
{
    static const char *const modes[] = {"eager", "graphs", NULL};
    const char *hw, *model, *grid, *verdict, *engine = NULL;
    cfg_node *tp, *m;
    if (cfg_expect_map(v, validated_keys, err) || !(tp = cfg_need(v, "tp", err)) ||
        !(m = cfg_need(v, "modes", err)))
        return -1;
    if (tp->kind != CFG_SEQ || tp->n < 1 || tp->n > SCN_DOMAIN_TP_MAX)
        return cfg_error(tp, err, "expected a list of 1 to %d TP degrees", SCN_DOMAIN_TP_MAX);
    for (size_t i = 0; i < tp->n; i++)
        if (cfg_as_long(tp->vals[i], 1, 1024, &d->tp[d->n_tp++], err)) return -1;
    if (m->kind != CFG_SEQ || m->n < 1)
        return cfg_error(m, err, "expected a list of eager, graphs");
    for (size_t i = 0; i < m->n; i++) {
        int k;
        if (cfg_as_choice(m->vals[i], modes, &k, err)) return -1;
        if (k) d->graphs = 1;
        else d->eager = 1;
    }
    if (scnfit_range(v, "batch", &d->batch_lo, &d->batch_hi, err) ||
        scnfit_range(v, "ctx", &d->ctx_lo, &d->ctx_hi, err) ||
        cfg_string_fits(v, "hardware", 1, sizeof d->hardware, &hw, err) ||
        cfg_string_fits(v, "model", 1, sizeof d->model, &model, err) ||
        cfg_string_fits(v, "grid", 1, sizeof d->grid, &grid, err) ||
        cfg_string_fits(v, "verdict", 1, sizeof d->verdict, &verdict, err) ||
        cfg_string_fits(v, "engine", 0, sizeof d->engine, &engine, err))
        return -1;
    snprintf(d->engine, sizeof d->engine, "%s", engine ? engine : "");
    snprintf(d->hardware, sizeof d->hardware, "%s", hw);
    snprintf(d->model, sizeof d->model, "%s", model);
    snprintf(d->grid, sizeof d->grid, "%s", grid);
    snprintf(d->verdict, sizeof d->verdict, "%s", verdict);
    d->heldout_mape_pct = d->heldout_rms_pct = NAN;
    const cfg_node *first = NULL;
    for (int i = 0; written_keys[i] && !first; i++) first = cfg_get(v, written_keys[i]);
    if (!first) first = cfg_get(v, "graph_mode");
    if (!first) first = cfg_get(v, "heldout_mape_pct");
    if (!first) first = cfg_get(v, "heldout_rms_pct");
    if (first && scnfit_bind_written(v, engine, d, err)) return -1;
    d->present = 1;
    return 0;
}

/* A fit key must name a number written in the scenario (so the fit has a starting value
 * and a type), and no key may be fitted twice. */
static int scnfit_fit_key(const cfg_node *root, const cfg_node *n, const scenario *s,
                            scenario_fit_param *fp, tp_err *err)
{
    const char *key;
    double v;
    if (cfg_as_string(n, &key, err)) return -1;
    if (strlen(key) >= sizeof fp->keys[0]) return cfg_error(n, err, "key too long");
    if (!strcmp(key, "fit") || !strncmp(key, "fit.", 4))
        return cfg_error(n, err, "a fit parameter cannot set the fit block itself");
    const cfg_node *target = cfg_find(root, key);
    if (!target || target->kind != CFG_SCALAR)
        return cfg_error(n, err, "'%s' names no scalar in this scenario, expected a numeric key "
                         "written in the file (its value is the starting point)", key);
    if (cfg_as_double(target, -1e300, 1e300, &v, err)) return -1;
    for (int i = 0; i <= s->n_fit_params && i < SCN_MAX_FIT; i++) {
        const scenario_fit_param *other = &s->fit_params[i];
        for (int j = 0; j < other->n_keys; j++)
            if (!strcmp(other->keys[j], key))
                return cfg_error(n, err, "'%s' is already fitted (line %d), each key may be "
                                 "fitted once", key, other->key_line[j]);
    }
    fp->key_line[fp->n_keys] = n->line;
    fp->key_col[fp->n_keys] = n->col;
    snprintf(fp->keys[fp->n_keys++], sizeof fp->keys[0], "%s", key);
    return 0;
}

static int scnfit_cell(const cfg_node *c, scenario_fit_cell *fc, tp_err *err)
{
    if (cfg_expect_map(c, fit_cell_keys, err) || cfg_long(c, "tp", 1, 1, 1024, &fc->tp, err) ||
        cfg_long(c, "batch", 1, 1, 1 << 20, &fc->batch, err) ||
        cfg_long(c, "ctx", 1, 1, 1 << 24, &fc->ctx, err))
        return -1;
    fc->line = c->line;
    fc->col = c->col;
    return 0;
}

int scnfit_bind_fit(const cfg_node *root, const cfg_node *fit, scenario *s, tp_err *err)
{
    cfg_node *params, *cells;
    if (cfg_expect_map(fit, fit_keys, err) || !(params = cfg_need(fit, "params", err)) ||
        !(cells = cfg_need(fit, "cells", err)))
        return -1;
    if (params->kind != CFG_SEQ || params->n < 1 || params->n > SCN_MAX_FIT)
        return cfg_error(params, err, "expected a list of 1 to %d {key, min, max}", SCN_MAX_FIT);
    if (cells->kind != CFG_SEQ || cells->n < 1 || cells->n > SCN_MAX_FIT_CELLS)
        return cfg_error(cells, err, "expected a list of 1 to %d {tp, batch, ctx}",
                         SCN_MAX_FIT_CELLS);
    cfg_node *proto = cfg_get(fit, "protocol");
    if (proto) {
        const char *text;
        if (cfg_as_string(proto, &text, err)) return -1;
        if (strlen(text) >= sizeof s->fit_protocol)
            return cfg_error(proto, err, "too long, expected within, loo or transfer A:B");
        snprintf(s->fit_protocol, sizeof s->fit_protocol, "%s", text);
        s->fit_protocol_line = proto->line;
        s->fit_protocol_col = proto->col;
    }
    for (size_t i = 0; i < params->n; i++) {
        const cfg_node *p = params->vals[i];
        scenario_fit_param *fp = &s->fit_params[i];
        const char *key;
        if (cfg_expect_map(p, fit_param_keys, err) || cfg_string(p, "key", 1, &key, err) ||
            cfg_double(p, "min", 1, -1e12, 1e12, &fp->lo, err) ||
            cfg_double(p, "max", 1, -1e12, 1e12, &fp->hi, err))
            return -1;
        if (fp->hi <= fp->lo)
            return cfg_error(cfg_get(p, "max"), err, "%g is not above min %g", fp->hi, fp->lo);
        /* a bound that is a physical limit (a cost cannot be negative), declared with why: a
         * fit that stops there is not flagged as stopped on an arbitrary box edge */
        const char *why[2] = {NULL, NULL};
        if (cfg_string(p, "physical_min", 0, &why[0], err) ||
            cfg_string(p, "physical_max", 0, &why[1], err))
            return -1;
        for (int b = 0; b < 2; b++) {
            char *dst = b ? fp->physical_hi : fp->physical_lo;
            if (why[b] && (!why[b][0] || strlen(why[b]) >= sizeof fp->physical_lo))
                return cfg_error(cfg_get(p, b ? "physical_max" : "physical_min"), err,
                                 "expected why the bound is a physical limit, 1 to %zu characters",
                                 sizeof fp->physical_lo - 1);
            snprintf(dst, sizeof fp->physical_lo, "%s", why[b] ? why[b] : "");
        }
        s->n_fit_params = (int)i; /* the params so far, for the duplicate check */
        if (scnfit_fit_key(root, cfg_get(p, "key"), s, fp, err)) return -1;
        snprintf(fp->key, sizeof fp->key, "%s", key);
        cfg_node *also = cfg_get(p, "also"); /* more keys tied to the same value */
        if (also && (also->kind != CFG_SEQ || also->n + 1 > SCN_MAX_FIT_KEYS))
            return cfg_error(also, err, "expected a list of at most %d more keys",
                             SCN_MAX_FIT_KEYS - 1);
        for (size_t j = 0; also && j < also->n; j++)
            if (scnfit_fit_key(root, also->vals[j], s, fp, err)) return -1;
    }
    for (size_t i = 0; i < cells->n; i++)
        if (scnfit_cell(cells->vals[i], &s->fit_cells[i], err)) return -1;
    s->n_fit_params = (int)params->n;
    s->n_fit_cells = (int)cells->n;
    return 0;
}

int scnfit_declared(const scenario *s, const char *key, int *line)
{
    for (int i = 0; i < s->n_fit_params; i++)
        for (int j = 0; j < s->fit_params[i].n_keys; j++)
            if (!strcmp(s->fit_params[i].keys[j], key))
                return *line = s->fit_params[i].key_line[j], 1;
    for (int i = 0; i < s->n_decls; i++)
        if (!strcmp(s->decls[i].key, key)) return *line = s->decls[i].line, 1;
    return 0;
}

/* sourced: [{key, source, fitted_on?}] and assumed: [{key, why}]: each key a number written
 * in the scenario, declared once, never also fitted. */
int scnfit_bind_decls(const cfg_node *root, const cfg_node *list, int assumed, scenario *s,
                               tp_err *err)
{
    if (list->kind != CFG_SEQ)
        return cfg_error(list, err, "expected a list of {key, %s}", assumed ? "why" : "source");
    for (size_t i = 0; i < list->n; i++) {
        const cfg_node *e = list->vals[i];
        const char *key, *note;
        if (s->n_decls == SCN_MAX_DECLS)
            return cfg_error(e, err, "more than %d sourced and assumed entries", SCN_MAX_DECLS);
        scenario_decl *d = &s->decls[s->n_decls];
        memset(d, 0, sizeof *d);
        if (cfg_expect_map(e, assumed ? assumed_keys : sourced_keys, err) ||
            cfg_string(e, "key", 1, &key, err) ||
            cfg_string(e, assumed ? "why" : "source", 1, &note, err))
            return -1;
        const cfg_node *kn = cfg_get(e, "key"), *target = cfg_find(root, key);
        double v;
        if (strlen(key) >= sizeof d->key) return cfg_error(kn, err, "key too long");
        if (!target || target->kind != CFG_SCALAR || target->quoted ||
            cfg_as_double(target, -1e300, 1e300, &v, err))
            return cfg_error(kn, err, "'%s' names no number in this scenario, expected a numeric "
                             "key written in the file", key);
        int line;
        if (scnfit_declared(s, key, &line))
            return cfg_error(kn, err, "'%s' is already fitted or declared (line %d), expected "
                             "each number declared once", key, line);
        snprintf(d->key, sizeof d->key, "%s", key);
        snprintf(d->note, sizeof d->note, "%s", note);
        d->assumed = assumed;
        d->line = kn->line;
        d->col = kn->col;
        const cfg_node *on = assumed ? NULL : cfg_get(e, "fitted_on");
        if (on) {
            if (on->kind != CFG_SEQ || on->n < 1)
                return cfg_error(on, err, "expected a list of the cells {tp, batch, ctx} the value "
                                 "was fitted on");
            d->borrowed = 1;
            for (size_t j = 0; j < on->n; j++) {
                scenario_fit_cell c;
                if (scnfit_cell(on->vals[j], &c, err)) return -1;
                int seen = 0;
                for (int k = 0; k < s->n_borrowed_cells; k++)
                    seen |= s->borrowed_cells[k].tp == c.tp &&
                            s->borrowed_cells[k].batch == c.batch &&
                            s->borrowed_cells[k].ctx == c.ctx;
                if (seen) continue;
                if (s->n_borrowed_cells == SCN_MAX_FIT_CELLS)
                    return cfg_error(on->vals[j], err, "more than %d distinct fitted_on cells",
                                     SCN_MAX_FIT_CELLS);
                s->borrowed_cells[s->n_borrowed_cells++] = c;
            }
        }
        s->n_decls++;
    }
    return 0;
}
