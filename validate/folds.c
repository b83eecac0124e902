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

/* May a fold calibrate on grid cell i? (the protocol's entry says) */
static int val_fold_allows(const val_report *r, int fold, size_t i)
{
    const val_protocol_def *d = val_protocol_of(&r->protocol);
    return !d->calibrates || d->calibrates(r, fold, i);
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
    const val_protocol_def *d = val_protocol_of(&r->protocol);
    if (d->check && d->check(r, err)) return -1;
    r->n_folds = d->fold_per_config ? r->n_configs : 1;
    r->folds = calloc((size_t)r->n_folds, sizeof *r->folds);
    if (!r->folds) return tp_err_set(err, "out of memory");
    for (int f = 0; f < r->n_folds; f++) {
        val_fold *fd = &r->folds[f];
        fd->cal = calloc(g->n, sizeof *fd->cal);
        if (!fd->cal) return tp_err_set(err, "out of memory");
        if (d->fold_per_config)
            snprintf(fd->label, sizeof fd->label, "without %s", r->configs[f].config);
        else
            snprintf(fd->label, sizeof fd->label, "all configs");
        for (size_t i = 0; i < g->n; i++)
            for (int k = 0; k < spec->n_fit_cells; k++)
                if (val_same_cell(&g->cells[i], spec->fit_cells[k].tp, spec->fit_cells[k].batch,
                                  spec->fit_cells[k].ctx) && val_fold_allows(r, f, i))
                    val_fold_add(fd, i);
        if (!fd->n_cal && d->all_when_none) {
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
    return val_protocol_of(&r->protocol)->fold_per_config ? config : 0;
}

val_role val_role_of(const val_report *r, int fold, size_t i)
{
    const val_protocol_def *d = val_protocol_of(&r->protocol);
    if (val_fold_has(&r->folds[fold], i)) return VAL_CALIBRATION;
    return !d->judges || d->judges(r, fold, i) ? VAL_HELDOUT : VAL_UNUSED;
}

/* A config is judged when its fold judges some cell of it, calibration aside. */
int val_judges_config(const val_report *r, int config)
{
    const val_protocol_def *d = val_protocol_of(&r->protocol);
    for (size_t i = 0; i < r->g->n; i++)
        if (!strcmp(r->g->cells[i].config, r->configs[config].config) &&
            (!d->judges || d->judges(r, r->configs[config].fold, i)))
            return 1;
    return 0;
}
