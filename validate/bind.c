/* bind.c: binding a scenario at fit parameters, and the checks that a scenario's fit and
 * --set flags name declared, numeric knobs; see val_impl.h. */
#include "validate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "par.h"
#include "val_impl.h"

/* Bind the document with the free parameters set to x. A value the scenario refuses is
 * reported at the fit key that set it. The named files come from cache (NULL: read again). */
int val_bind(cfg_doc *doc, scenario_cache *cache, const scn_opts *o, const scenario *spec,
             const double *x, scenario *out, tp_err *err)
{
    for (int i = 0; i < spec->n_fit_params; i++)
        for (int j = 0; j < spec->fit_params[i].n_keys; j++) {
            const scenario_fit_param *fp = &spec->fit_params[i];
            char assign[192];
            snprintf(assign, sizeof assign, "%s=%.17g", fp->keys[j], x[i]);
            if (cfg_set_at(doc, assign, spec->path, fp->key_line[j], fp->key_col[j], err))
                return -1;
        }
    if (scenario_bind_cached(doc, cache, out, err)) return -1;
    if (!scn_opts_apply(o, out, err)) return 0;
    scenario_free(out); /* a failed bind holds nothing */
    return -1;
}

/* The fit's values come from fitting: a --set on a fitted key would be silently lost. */
int val_check_sets(const scn_opts *o, const scenario *spec, tp_err *err)
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
                    if (!mg->overridden_by[k][0] &&
                        !strcmp(mg->keys[k], spec->fit_params[i].keys[j]))
                        return tp_err_at(err, spec->measured.path, mg->line[k], mg->col[k],
                                         "%s: measured, but a free parameter of %s's fit, whose "
                                         "value comes from fitting; expected tpsim run with the "
                                         "measured file, or a scenario that does not fit it",
                                         mg->keys[k], spec->path);
    }
    return 0;
}

/* Every fitted key must take the whole box: both bounds and a non-integer inside. */
int val_check_box(cfg_doc *doc, scenario_cache *cache, const scn_opts *o, const scenario *spec,
                  tp_err *err)
{
    scenario *probe = malloc(sizeof *probe);
    if (!probe) return tp_err_set(err, "out of memory");
    double x[SCN_MAX_FIT];
    int rc = 0;
    for (int corner = 0; corner < 3 && !rc; corner++) {
        for (int i = 0; i < spec->n_fit_params; i++) {
            const scenario_fit_param *fp = &spec->fit_params[i];
            x[i] = corner == 0   ? fp->lo
                   : corner == 1 ? fp->hi
                                 : fp->lo + 0.3819660113 * (fp->hi - fp->lo);
        }
        rc = val_bind(doc, cache, o, spec, x, probe, err);
        if (!rc) scenario_free(probe);
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

int val_is_number(const cfg_node *n)
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

int val_knobs(cfg_doc *doc, const scenario *s, const scn_opts *o, tp_err *err)
{
    static const char *const tops[] = {"gpu", "host", "execution", "offset_ms",
                                       "program.input_copies", "program.sampling_kernels", NULL};
    for (int i = 0; tops[i]; i++) {
        const cfg_node *n = cfg_find(cfg_root(doc), tops[i]);
        if (n && val_knobs_walk(n, s, o, err)) return -1;
    }
    return 0;
}

