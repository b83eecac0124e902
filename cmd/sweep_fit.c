/* sweep_fit.c: `tpsim sweep --fit`'s fitter (cmd.h): the validation core fits the scenario's
 * declared parameters and the sweep runs with them as overrides; the kill-switch is the
 * validation default (val_default_options), not a number of the sweep's own. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "grid.h"
#include "validate.h"

/* Append the fitted values as overrides, so every sweep cell uses them; `shown` collects
 * them for stderr once the sweep has succeeded. */
int cmd_sweep_fit(const char *path, scn_opts *so, const char *grid_path, char (*store)[192],
                  char *shown, size_t shown_cap, tp_err *err)
{
    grid g;
    if (grid_load(grid_path, &g, err)) return -1;
    val_report *rep = malloc(sizeof *rep);
    int rc = -1;
    if (!rep) {
        tp_err_set(err, "out of memory");
    } else if (val_run(path, so, &g, val_default_options().kill_switch_pct, rep, err) == 0) {
        int n = 0;
        size_t used = 0;
        rc = 0;
        for (int i = 0; i < rep->n_fit && rc == 0; i++)
            for (int j = 0; j < rep->scn.fit_params[i].n_keys; j++) {
                if (so->n_sets == SCN_OPTS_MAX_SETS) {
                    rc = tp_err_set(err,
                                    "sweep: --fit needs %d more --set slots, at most %d in all",
                                    rep->scn.fit_params[i].n_keys - j, SCN_OPTS_MAX_SETS);
                    break;
                }
                snprintf(store[n], sizeof store[n], "%s=%.17g", rep->scn.fit_params[i].keys[j],
                         rep->fitted[i]);
                so->sets[so->n_sets++] = store[n];
                int w = snprintf(shown + used, shown_cap - used, "sweep: fitted %s\n", store[n++]);
                if (w > 0 && (size_t)w < shown_cap - used) used += (size_t)w;
            }
        val_free(rep);
    }
    free(rep);
    grid_free(&g);
    return rc;
}
