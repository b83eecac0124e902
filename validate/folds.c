/* folds.c: the folds a protocol makes of the grid (which configs calibrate, which are
 * judged) and each cell's role; see val_impl.h. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"
#include "val_impl.h"

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

val_config *val_config_for(val_report *r, const grid_cell *c, tp_err *err)
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

int val_make_folds(val_report *r, const scenario *spec, tp_err *err)
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
int val_home_fold(const val_report *r, int config)
{
    return r->protocol.kind == VAL_LOO ? config : 0;
}

val_role val_role_of(const val_report *r, int fold, size_t i)
{
    const grid_cell *c = &r->g->cells[i];
    if (val_fold_has(&r->folds[fold], i)) return VAL_CALIBRATION;
    switch (r->protocol.kind) {
    case VAL_TRANSFER: return val_tp_in(c->tp, r->protocol.to, r->protocol.n_to) ? VAL_HELDOUT : VAL_UNUSED;
    case VAL_LOO: return strcmp(c->config, r->configs[fold].config) ? VAL_UNUSED : VAL_HELDOUT;
    default: return VAL_HELDOUT;
    }
}

