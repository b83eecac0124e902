/* cmd_validate.c: `tpsim validate`: a scenario against a measured grid, the study's way:
 * fit the declared parameters on the declared cells, predict the rest, apply the
 * pre-registered kill-switch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "jw.h"
#include "locate.h"
#include "plot.h"
#include "validate.h"

static const char validate_usage[] =
    "usage: tpsim validate SCENARIO [--grid FILE] [--kill-switch PCT] [--format text|json]\n"
    "                      [--plot DIR] [--set key=value]... [--calib FILE]... [--mode M]\n"
    "                      [--jobs N] [--quiet]\n"
    "  fits the scenario's fit.params on its fit.cells only, predicts every grid cell, and\n"
    "  judges each config on its held-out cells (default grid: the study's H100 grid,\n"
    "  ../validate/h100-ctx2048.csv beside the scenario's folder, else validate/ in\n"
    "  $TPSIM_PATH or the share folder; --grid takes a file or a name; kill-switch 15%)\n";

static void val_print_text(const val_report *r)
{
    const scenario *s = &r->scn;
    printf("tpsim validate %s against %s (kill-switch %.0f%% MAPE on held-out cells)\n", s->name,
           r->g->path, r->kill_switch_pct);
    if (r->n_fit) {
        printf("fitted on");
        for (int i = 0; i < s->n_fit_cells; i++)
            printf("%s TP-%ld batch %ld ctx %ld", i ? "," : "", s->fit_cells[i].tp,
                   s->fit_cells[i].batch, s->fit_cells[i].ctx);
        printf(" only (%d simulations, objective %.3g):\n", r->fit_evaluations, r->fit_objective);
        for (int i = 0; i < r->n_fit; i++)
            printf("  %-28s = %-12.6g (bounds %g .. %g)\n", s->fit_params[i].key, r->fitted[i],
                   s->fit_params[i].lo, s->fit_params[i].hi);
    } else {
        printf("no free parameters: every cell is a prediction\n");
    }
    printf("\n| Config | N | ctx | Measured (ms) | Sim compute (ms) | Sim comm (ms) | Predicted (ms) "
           "| Error (%%) | Cell |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *c = &r->cells[i];
        printf("| %s | %ld | %ld | %.2f | %.2f | %.2f | %.2f | %+.1f | %s |\n", c->g->config,
               c->g->batch, c->g->ctx, c->g->measured_ms, 1e3 * c->sim.breakdown.compute,
               1e3 * c->sim.breakdown.allreduce, c->predicted_ms, c->error_pct,
               c->calibration ? "calibration" : "held-out");
    }
    printf("\n%-12s %5s %9s %14s %9s  %-26s\n", "config", "cells", "MAPE all", "MAPE held-out",
           "verdict", "residual meas-comm-compute/k");
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        char held[16], grid_res[48] = "";
        if (isnan(c->heldout_mape_pct)) snprintf(held, sizeof held, "-");
        else snprintf(held, sizeof held, "%.2f%%", c->heldout_mape_pct);
        if (!isnan(c->residual_grid_ms))
            snprintf(grid_res, sizeof grid_res, " (grid's columns: %+.2f ms)", c->residual_grid_ms);
        printf("%-12s %5d %8.2f%% %14s %9s  %+.2f ms%s\n", c->config, c->n, c->mape_pct, held,
               !c->tested ? "UNTESTED" : c->pass ? "PASS" : "FAIL", c->residual_ms, grid_res);
    }
    if (r->shrink_to_tp)
        printf("\nstep shrink TP-%ld -> TP-%ld: measured %.3fx, predicted %.3fx, ideal %.2fx\n",
               r->shrink_from_tp, r->shrink_to_tp, r->shrink_measured, r->shrink_predicted,
               (double)r->shrink_to_tp / (double)r->shrink_from_tp);
    int all = 1, failed = 0;
    for (int k = 0; k < r->n_configs; k++) {
        all &= r->configs[k].pass;
        failed |= r->configs[k].tested && !r->configs[k].pass;
    }
    printf("verdict: %s\n",
           failed ? "the kill-switch fails for at least one config: refuted as stated"
           : all  ? "every config passes the kill-switch on its held-out cells"
                  : "not refuted, but some config has no held-out cell: untested there");
}

static void val_print_json(const val_report *r)
{
    const scenario *s = &r->scn;
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_kstr(&w, "scenario", s->name);
    jw_kstr(&w, "grid", r->g->path);
    jw_knum(&w, "kill_switch_pct", r->kill_switch_pct);
    jw_key(&w, "fitted");
    jw_obj(&w);
    for (int i = 0; i < r->n_fit; i++) jw_knum(&w, s->fit_params[i].key, r->fitted[i]);
    jw_end_obj(&w);
    jw_kint(&w, "fit_evaluations", r->fit_evaluations);
    jw_key(&w, "cells");
    jw_arr(&w);
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *c = &r->cells[i];
        const run_breakdown *b = &c->sim.breakdown;
        jw_obj(&w);
        jw_kstr(&w, "config", c->g->config);
        jw_kint(&w, "tp", c->g->tp);
        jw_kint(&w, "batch", c->g->batch);
        jw_kint(&w, "ctx", c->g->ctx);
        jw_knum(&w, "measured_ms", c->g->measured_ms);
        jw_knum(&w, "predicted_ms", c->predicted_ms);
        jw_knum(&w, "error_pct", c->error_pct);
        jw_kbool(&w, "calibration", c->calibration);
        cmd_json_breakdown(&w, "breakdown_ms", b);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_key(&w, "configs");
    jw_arr(&w);
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        jw_obj(&w);
        jw_kstr(&w, "config", c->config);
        jw_kint(&w, "tp", c->tp);
        jw_kint(&w, "cells", c->n);
        jw_kint(&w, "heldout_cells", c->n_heldout);
        jw_knum(&w, "mape_pct", c->mape_pct);
        jw_knum(&w, "heldout_mape_pct", c->heldout_mape_pct);
        jw_knum(&w, "kill_switch_pct", r->kill_switch_pct);
        jw_kbool(&w, "tested", c->tested);
        jw_kbool(&w, "pass", c->pass);
        jw_knum(&w, "residual_ms", c->residual_ms);
        jw_knum(&w, "residual_grid_ms", c->residual_grid_ms);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_key(&w, "shrink");
    jw_obj(&w);
    if (r->shrink_to_tp) {
        jw_kint(&w, "from_tp", r->shrink_from_tp);
        jw_kint(&w, "to_tp", r->shrink_to_tp);
        jw_knum(&w, "measured", r->shrink_measured);
        jw_knum(&w, "predicted", r->shrink_predicted);
        jw_knum(&w, "ideal", (double)r->shrink_to_tp / (double)r->shrink_from_tp);
    }
    jw_end_obj(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

/* The bundled grid: SCENARIO_DIR/../validate/h100-ctx2048.csv, else validate/h100-ctx2048.csv
 * under $TPSIM_PATH or the share folder (locate.h). */
static int val_default_grid(const char *scenario_path, char *out, size_t cap, tp_err *err)
{
    const char *slash = strrchr(scenario_path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - scenario_path) : 0, scenario_path);
    return locate_file("validate", ".csv", "../validate/h100-ctx2048.csv", dir, out, cap, err);
}

int tpsim_cmd_validate(int argc, char **argv)
{
    tp_err err = {{0}};
    scn_opts so;
    memset(&so, 0, sizeof so);
    const char *path = NULL, *grid_path = NULL, *plot_dir = NULL, *v;
    double kill = 15.0;
    int json = 0;
    enum { F_HELP, F_GRID, F_PLOT, F_KILL, F_FORMAT, F_JOBS, F_QUIET };
    static const cli_flag flags[] = {{"help", 'h', 0},   {"grid", 0, 1},   {"plot", 0, 1},
                                     {"kill-switch", 0, 1}, {"format", 0, 1}, {"jobs", 0, 1},
                                     {"quiet", 0, 0}, CMD_SCN_FLAGS,
                                     {NULL, 0, 0}};
    cli_args ca;
    int f;
    if (cli_begin(&ca, "validate", "tpsim validate --help", flags, argc, argv, &err))
        return cmd_fail(&err);
    while ((f = cli_next(&ca, &v, &err)) != CLI_DONE) {
        if (f == CLI_ERROR) {
            return cmd_fail(&err);
        } else if (f == CLI_OPERAND) {
            if (path)
                return tp_err_set(&err, "validate: a second scenario '%s', expected one", v),
                       cmd_fail(&err);
            path = v;
        } else if (f == F_HELP) {
            fputs(validate_usage, stdout);
            return 0;
        } else if (f == F_JOBS) { /* cells at once; the output does not change */
            long jobs;
            if (cli_long(ca.shown, v, 1, 1024, &jobs, &err)) return cmd_fail(&err);
            so.jobs = (int)jobs;
        } else if (f == F_QUIET) {
            so.quiet = 1;
        } else if (f == F_GRID) {
            grid_path = v;
        } else if (f == F_PLOT) {
            plot_dir = v;
        } else if (f == F_KILL) {
            if (cli_double(ca.shown, v, 0.001, 1000, &kill, &err)) return cmd_fail(&err);
        } else if (f == F_FORMAT) {
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(&err, "--format: '%s', expected text or json", v), cmd_fail(&err);
            json = !strcmp(v, "json");
        } else if (cmd_scn_flag(&so, flags[f].name, v, &err) < 0) {
            return cmd_fail(&err);
        }
    }
    if (!path)
        return tp_err_set(&err, "validate: missing SCENARIO (see tpsim validate --help)"), cmd_fail(&err);
    char scn_buf[1024], grid_buf[4096];
    if (!(path = locate_arg("scenarios", ".yaml", path, scn_buf, sizeof scn_buf, &err)))
        return cmd_fail(&err);
    if (grid_path) {
        if (!(grid_path = locate_arg("validate", ".csv", grid_path, grid_buf, sizeof grid_buf, &err)))
            return cmd_fail(&err);
    } else if (val_default_grid(path, grid_buf, sizeof grid_buf, &err)) {
        return cmd_fail(&err);
    } else {
        grid_path = grid_buf;
    }
    grid g;
    val_report *rep = malloc(sizeof *rep);
    if (!rep) return tp_err_set(&err, "out of memory"), cmd_fail(&err);
    int status = 2;
    if (grid_load(grid_path, &g, &err)) {
        free(rep);
        return cmd_fail(&err);
    }
    if (val_run(path, &so, &g, kill, rep, &err)) goto out;
    if (plot_dir && plot_validation(rep, plot_dir, &err)) {
        val_free(rep);
        goto out;
    }
    if (json) val_print_json(rep);
    else val_print_text(rep);
    val_free(rep);
    status = 0;
out:
    if (status) cmd_fail(&err);
    grid_free(&g);
    free(rep);
    return status;
}
