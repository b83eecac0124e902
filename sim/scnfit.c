/* scnfit.c: see scnfit.h. */
#include "scnfit.h"

#include <stdio.h>
#include <string.h>

static const char *const fit_keys[] = {"params", "cells", "protocol", NULL};
static const char *const sourced_keys[] = {"key", "source", "fitted_on", NULL};
static const char *const assumed_keys[] = {"key", "why", NULL};
static const char *const fit_param_keys[] = {"key", "also", "min", "max", "physical_min",
                                              "physical_max", NULL};
static const char *const validated_keys[] = {"tp", "modes", "batch", "ctx", "hardware", "model",
                                             "grid", "verdict", "engine", NULL};
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

/* validated: {tp: [..], modes: [eager|graphs..], batch: [lo, hi], ctx: [lo, hi], hardware,
 * model, grid, verdict}: every key required, so a domain is never half stated. */
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
