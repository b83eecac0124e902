/* cmd_validate.c: `tpsim validate`: a scenario against a measured grid, the study's way:
 * fit the declared parameters on the declared cells, predict the rest, apply the
 * pre-registered kill-switch. Its own functions are prefixed vcmd_ (val_ is the core's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "jw.h"
#include "locate.h"
#include "memo.h"
#include "ofile.h"
#include "plot.h"
#include "rfile.h"
#include "report_json.h"
#include "validate.h"
#include "vdomain.h"

/* protocols one invocation runs in turn (--summary) */
#define VCMD_MAX_PROTOCOLS 8

/* The usage: the flag list from the flag table (cli_help), the protocols' clauses from theirs
 * (validate.h). */
static const char validate_usage[] = "usage: tpsim validate SCENARIO [flags]\n";
static const char validate_usage_head[] =
    "  fits the scenario's fit.params on the calibration cells of the protocol only, predicts\n"
    "  every grid cell, and judges each config on its held-out cells against the kill-switch\n"
    "  and two null baselines (constant: the calibration cells' mean; additive: the study's\n"
    "  compute/k + comm + R0, R0 fitted on the same cells).\n";
static const char validate_usage_protocols[] =
    "With --summary several may be given: each runs in turn, its rows in the order given; a "
    "fit on the same calibration cells reuses the cells already simulated (the rows are those "
    "of one run each).";
static const char validate_usage_tail[] =
    "  verdicts: SUPPORTED (within the kill-switch and at most half the best baseline's\n"
    "  MAPE), PASS-NO-SKILL, FAIL, MISFIT (the fit misses a calibration cell by more than\n"
    "  kill-switch/3), UNIDENTIFIED (the parameters' 95% range moves a held-out prediction\n"
    "  past the kill-switch, or a fitted value stopped on a bound not declared physical),\n"
    "  UNTESTED. --strict exits 1 unless every judged config is SUPPORTED.\n"
    "  intervals: 95% profile likelihood from a relative measurement error --meas-cv\n"
    "  (default 1%: the study states no run-to-run spread) plus one measurement's error.\n"
    "  --scan DIR writes the objective over a grid of the free parameters (CSV + gnuplot).\n"
    "  --summary prints one table row per judged config. Default grid: the study's H100 grid\n"
    "  (../validate/h100-ctx2048.csv beside the scenario's folder, else validate/ in\n"
    "  $TPSIM_PATH or the share folder; --grid takes a file or a name; kill-switch 15%).\n"
    "  --write-domain rewrites the scenario's validated: block from this run, other bytes\n"
    "  kept: the domain, every input that changes a prediction and its fingerprint, each\n"
    "  protocol's verdict (several may be given), the first's held-out error (plan's interval\n"
    "  when nothing is fitted); not with --set, --model, --calib, --mode, --measured.\n"
    "  --write-domain-to FILE writes that text to FILE (cmp it: is the block current?).\n";
#define VCMD_USAGE_WIDTH 87 /* the paragraph's lines, wrapped at words */

/* Words of text from a line of `col` columns, wrapped at VCMD_USAGE_WIDTH with two spaces'
 * indent; returns the column reached. */
static int vcmd_wrap(const char *text, int col)
{
    while (*text) {
        int len = (int)strcspn(text, " ");
        if (col > 2 && col + 1 + len > VCMD_USAGE_WIDTH) col = printf("\n  ") - 1;
        else if (col > 2) col += printf(" ");
        col += printf("%.*s", len, text);
        text += len + (text[len] == ' ');
    }
    return col;
}

static void vcmd_usage(const cli_flag *flags)
{
    cli_help(stdout, validate_usage, flags, validate_usage_head);
    int col = printf("  protocols:");
    for (int i = 0; i < val_n_protocols; i++) {
        char clause[512];
        snprintf(clause, sizeof clause, "%s%s", val_protocols[i].help,
                 i + 1 < val_n_protocols ? "," : ".");
        col = vcmd_wrap(clause, col);
    }
    vcmd_wrap(validate_usage_protocols, col);
    printf("\n");
    fputs(validate_usage_tail, stdout);
}

static void vcmd_cell_name(const grid_cell *g, char *out, size_t cap)
{
    snprintf(out, cap, "TP-%ld b%ld ctx %ld", g->tp, g->batch, g->ctx);
}

static void vcmd_pct(double v, char *out, size_t cap)
{
    if (isnan(v)) snprintf(out, cap, "-");
    else snprintf(out, cap, "%.2f%%", v);
}

/* The interval's error scale, and what its "95%" rests on. The synthetic checks are
 * tests/test_validate.c's: grids tpsim generates from known parameters with seeded noise. */
static void vcmd_print_scale(const val_scale *sc, int n_cal, int n_fit)
{
    if (!sc->estimated) {
        printf("  error scale %.2g%% per cell, the declared measurement error alone: model error "
               "is not estimable (%d calibration cell%s, %d free parameter%s), so the intervals "
               "are not 95%% ones for a model that may be wrong\n", 100 * sc->cv, n_cal,
               n_cal == 1 ? "" : "s", n_fit, n_fit == 1 ? "" : "s");
    } else if (sc->model_cv > 0) {
        printf("  error scale %.2f%% per cell: the misfit of %d cells over %d degrees of freedom "
               "(%.2f%%) exceeds the declared %.2g%%, model error %.2f%%; 95%% intervals with "
               "Student's t(%d) = %.3f\n", 100 * sc->cv, n_cal, sc->dof, 100 * sc->fit_rms,
               100 * sc->meas_cv, 100 * sc->model_cv, sc->dof, sc->q);
    } else {
        printf("  error scale %.2g%% per cell: the declared measurement error; the misfit of %d "
               "cells over %d degrees of freedom (%.2f%%) shows no model error beyond it; 95%% "
               "intervals\n", 100 * sc->cv, n_cal, sc->dof, 100 * sc->fit_rms);
    }
}

static void vcmd_print_folds(const val_report *r)
{
    const scenario *s = &r->scn;
    for (int f = 0; f < r->n_folds; f++) {
        const val_fold *fd = &r->folds[f];
        if (r->n_folds > 1) printf("fold %d (%s): ", f + 1, fd->label);
        printf("%s on", r->n_fit ? "fitted" : "no free parameters; calibration cells");
        for (int k = 0; k < fd->n_cal; k++) {
            char name[64];
            vcmd_cell_name(&r->g->cells[fd->cal[k]], name, sizeof name);
            printf("%s %s", k ? "," : "", name);
        }
        if (!fd->n_cal) printf(" nothing");
        if (r->n_fit)
            printf(" (%d evaluations of the objective, %.3g; %s)", fd->evaluations, fd->objective,
                   fit_stop_rule(fd->stop));
        printf("\n");
        if (fd->cal_all_of_from)
            printf("  fit.cells names none of these: every cell of the degrees fitted on "
                   "calibrates\n");
        if (fd->cal_borrowed)
            printf(
                "  includes the cells the borrowed values were fitted on (sourced: fitted_on)\n");
        for (int i = 0; i < r->n_fit; i++) {
            printf("  %-28s = %-12.6g (bounds %g .. %g", s->fit_params[i].key, fd->fitted[i],
                   s->fit_params[i].lo, s->fit_params[i].hi);
            if (r->opt.intervals) printf("; 95%% profile %.4g .. %.4g", fd->lo[i], fd->hi[i]);
            printf(")\n");
            const scenario_fit_param *fp = &s->fit_params[i];
            const char *phys = fd->at_bound[i] < 0 ? fp->physical_lo : fp->physical_hi;
            if (fd->at_bound[i])
                printf("    ON ITS BOUND (%s %g)%s%s\n", fd->at_bound[i] < 0 ? "min" : "max",
                       fd->at_bound[i] < 0 ? fp->lo : fp->hi,
                       phys[0] ? ", a physical limit: " : ": the fit wanted to go further, not a "
                                                          "physical limit: UNIDENTIFIED",
                       phys);

        }
        if (r->n_fit || fd->cal_borrowed)
            printf("  worst miss of its own calibration cells %.2f%% (MISFIT above %.2f%%)%s\n",
                   fd->cal_max_err_pct, r->kill_switch_pct / 3.0, fd->misfit ? ": MISFIT" : "");
        else if (fd->n_cal)
            printf("  worst miss of the calibration cells %.2f%% (nothing fitted on them: they fit "
                   "the null baselines only, so no MISFIT)\n", fd->cal_max_err_pct);
        if (r->opt.intervals) vcmd_print_scale(&fd->scale, fd->n_cal, r->n_fit);
        if (isnan(fd->r0_ms))
            printf("  null baselines: none (no calibration cell to fit them on)\n");
        else
            printf("  additive baseline R0 = %+.3f ms\n", fd->r0_ms);
    }
}

static void vcmd_print_sens(const val_report *r)
{
    const scenario *s = &r->scn;
    printf("\ndeclared numbers (not fitted):\n");
    int any = 0;
    for (int i = 0; i < s->n_decls; i++)
        if (!s->decls[i].assumed) {
            printf("  sourced  %-28s %s%s\n", s->decls[i].key, s->decls[i].note,
                   s->decls[i].borrowed ? " [borrowed: its fitted_on cells calibrate]" : "");
            any = 1;
        }
    for (int k = 0; k < r->n_sens; k++) {
        const val_sens *v = &r->sens[k];
        printf("  assumed  %-28s = %g: %s\n", v->key, v->value, v->note);
        any = 1;
        if (!r->opt.sensitivity) continue;
        for (int sign = -1; sign <= 1; sign += 2) {
            printf("           %+.0f%%:", sign * 100 * VAL_SENS_FRAC);
            const double *m = sign < 0 ? v->minus_ms : v->plus_ms;
            for (size_t i = 0; i < r->n_cells; i++) {
                const val_cell *c = &r->cells[i];
                if (c->role != VAL_HELDOUT) continue;
                if (isnan(m[i])) printf(" TP-%ld b%ld n/a", c->g->tp, c->g->batch);
                else printf(" TP-%ld b%ld %+.2f%%", c->g->tp, c->g->batch,
                            100.0 * (m[i] / c->predicted_ms - 1.0));
            }
            printf("\n");
        }
    }
    if (!any) printf("  none\n");
    if (r->n_sens && r->opt.sensitivity)
        printf("  (moves of each held-out prediction with the fitted values held; n/a: out of the "
               "key's range)\n");
}

/* Every file the answer rests on, with the fingerprint of its bytes; a calibration also says
 * whether its numbers are those tpsim wrote (fprint.h). */
static void vcmd_print_inputs(const val_report *r)
{
    rfile_input in[RFILE_MAX_INPUTS];
    int n = rfile_inputs_read(in, RFILE_MAX_INPUTS);
    printf("\nfiles read (fingerprint of the bytes read):\n");
    for (int i = 0; i < n; i++) {
        int st = vjson_calib_state(&r->scn, in[i].path);
        printf("  %-16s %s%s%s\n", in[i].fp[0] ? in[i].fp : "(streamed)", in[i].path,
               st >= 0 ? "  numbers: " : "", vjson_state_name(st));
    }
}

/* The closing line: what the verdicts of the judged configs add up to. */
static void vcmd_print_verdict(const val_report *r)
{
    for (int i = 0; i < r->n_unverified; i++)
        printf("UNVERIFIED: %s; its numbers are assumed (above), not sourced\n",
               r->unverified[i]);
    if (r->n_unverified) printf("the verdict below rests on those assumed numbers\n");
    int supported = 1, failed = 0, misfit = 0, untested = 0, unidentified = 0;
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        if (!c->judged) continue;
        supported &= c->verdict == VAL_SUPPORTED;
        failed |= c->verdict == VAL_FAIL;
        misfit |= c->verdict == VAL_MISFIT;
        untested |= c->verdict == VAL_UNTESTED;
        unidentified |= c->verdict == VAL_UNIDENTIFIED;
    }
    printf("verdict%s: %s\n", r->n_unverified ? " (on the assumed numbers of an edited file)" : "",
           misfit   ? "the fit cannot reach its own calibration cells: MISFIT, nothing is tested"
           : failed ? "the kill-switch fails for at least one config: refuted as stated"
           : unidentified ? "the calibration cells do not pin the prediction of some judged "
                            "config: UNIDENTIFIED there, neither supported nor refuted"
           : supported
               ? "every judged config is SUPPORTED: within the kill-switch and at most half "
                 "the best null baseline's error"
           : untested ? "not refuted, but some config has no held-out cell: untested there"
                      : "within the kill-switch, but no better than a null baseline somewhere: "
                        "no skill shown");
}

static void vcmd_print_text(const val_report *r)
{
    const scenario *s = &r->scn;
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    printf("tpsim validate %s against %s\n", s->name, r->g->path);
    printf("engine %s (%s): host phases %s\n", s->engine,
           s->engine_path[0] ? s->engine_path : "the scenario's own host model",
           phase_mode_name(s->phases.overlap));
    printf("protocol %s, kill-switch %.0f%% MAPE on held-out cells", pn, r->kill_switch_pct);
    if (r->opt.intervals)
        printf(", intervals from a %.2g%% measurement error per cell (--meas-cv) and the model "
               "error the calibration cells' misfit shows", 100 * r->opt.meas_cv);
    printf("\n");
    vcmd_print_folds(r);
    printf(
        "\n| Config | N | ctx | Measured (ms) | Sim compute (ms) | Sim comm (ms) | Predicted (ms) "
        "| Interval (ms) | Error (%%) | Constant (ms) | Additive (ms) | Cell |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *c = &r->cells[i];
        char iv[48] = "-";
        if (r->opt.intervals)
            snprintf(iv, sizeof iv, "%.2f .. %.2f%s", c->pred_lo, c->pred_hi,
                     c->role == VAL_HELDOUT && !c->inside ? " (outside)" : "");
        char cons[24] = "-", add[24] = "-";
        if (!isnan(c->constant_ms)) snprintf(cons, sizeof cons, "%.2f", c->constant_ms);
        if (!isnan(c->additive_ms)) snprintf(add, sizeof add, "%.2f", c->additive_ms);
        printf("| %s | %ld | %ld | %.2f | %.2f | %.2f | %.2f | %s | %+.1f | %s | %s | %s |\n",
               c->g->config, c->g->batch, c->g->ctx, c->g->measured_ms,
               1e3 * c->sim.breakdown.compute, 1e3 * c->sim.breakdown.allreduce, c->predicted_ms,
               iv, c->error_pct, cons, add, val_role_name(c->role));
    }
    printf("\n%-12s %5s %9s %9s %9s %9s %7s %8s  %-14s %s\n", "config", "cells", "MAPE all",
           "held-out", "constant", "additive", "skill", "inside", "verdict",
           "residual meas-comm-compute/k");
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        char held[16], cons[16], add[16], skill[16] = "-", inside[16] = "-", grid_res[48] = "";
        vcmd_pct(c->heldout_mape_pct, held, sizeof held);
        vcmd_pct(c->constant_mape_pct, cons, sizeof cons);
        vcmd_pct(c->additive_mape_pct, add, sizeof add);
        if (!isnan(c->skill)) snprintf(skill, sizeof skill, "%+.2f", c->skill);
        if (r->opt.intervals && c->tested)
            snprintf(inside, sizeof inside, "%d/%d", c->n_inside, c->n_heldout);
        if (!isnan(c->residual_grid_ms))
            snprintf(grid_res, sizeof grid_res, " (grid's columns: %+.2f ms)", c->residual_grid_ms);
        printf("%-12s %5d %8.2f%% %9s %9s %9s %7s %8s  %-14s %+.2f ms%s\n", c->config, c->n,
               c->mape_pct, held, cons, add, skill, inside, val_verdict_name(c->verdict),
               c->residual_ms, grid_res);
    }
    for (int k = 0; k < r->n_configs && r->opt.intervals; k++) {
        const val_config *c = &r->configs[k];
        if (!c->tested || c->identified) continue;
        if (c->param_spread_pct > r->kill_switch_pct)
            printf("%s: not identified: the free parameters' 95%% range alone moves a held-out "
                   "prediction by %.1f%% (> the kill-switch): the calibration cells leave it to "
                   "where the fit stopped", c->config, c->param_spread_pct);
        else
            printf("%s: not identified: a fitted value stopped on a bound that is not a physical "
                   "limit", c->config);
        if (c->verdict == VAL_FAIL)
            printf("; FAIL stands: even the best prediction within that range misses by %.1f%%\n",
                   c->range_mape_pct);
        else
            printf(": UNIDENTIFIED, its %.2f%% shows nothing\n", c->heldout_mape_pct);
    }
    if (r->shrink_to_tp)
        printf("\nstep shrink TP-%ld -> TP-%ld: measured %.3fx, predicted %.3fx, ideal %.2fx\n",
               r->shrink_from_tp, r->shrink_to_tp, r->shrink_measured, r->shrink_predicted,
               (double)r->shrink_to_tp / (double)r->shrink_from_tp);
    if (r->opt.intervals)
        printf("held-out measurements inside their interval: %d of %d (on tpsim's synthetic "
               "grids the 95%% intervals hold %s)\n", r->n_inside, r->n_heldout,
               VAL_SYNTHETIC_COVERAGE);
    vcmd_print_sens(r);
    vcmd_print_inputs(r);
    vcmd_print_verdict(r);
}

/* One markdown row per judged config: scenario, protocol, config, held-out MAPE, best
 * baseline, skill, verdict, interval coverage, identification. */
static void vcmd_print_summary(const val_report *r)
{
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *c = &r->configs[k];
        if (!c->judged) continue;
        char held[16], best[48] = "-", skill[16] = "-", inside[16] = "-", ident[48] = "-";
        vcmd_pct(c->heldout_mape_pct, held, sizeof held);
        if (!isnan(c->param_spread_pct))
            snprintf(ident, sizeof ident, "%s (%.1f%%%s)", c->identified ? "yes" : "no",
                     c->param_spread_pct, r->folds[c->fold].on_free_bound ? ", on a bound" : "");
        if (!isnan(c->best_baseline_pct))
            snprintf(best, sizeof best, "%s %.2f%%", c->best_baseline, c->best_baseline_pct);
        if (!isnan(c->skill)) snprintf(skill, sizeof skill, "%+.2f", c->skill);
        if (r->opt.intervals && c->tested)
            snprintf(inside, sizeof inside, "%d/%d", c->n_inside, c->n_heldout);
        printf("| %s | %s | %s | %s | %s | %s | %s%s | %s | %s |\n", r->scn.name, pn, c->config,
               held, best, skill, val_verdict_name(c->verdict),
               r->n_unverified ? " (on an edited file's numbers)" : "", inside, ident);
    }
}

/* --scan DIR: the objective of each fold's fit over a grid of its free parameters. */
#define VAL_SCAN_2D 25
#define VAL_SCAN_1D 101
static int vcmd_write_scan(const char *path, const scn_opts *so, const val_report *r,
                           const char *dir, plot_stage **set, tp_err *err)
{
    if (r->n_fit == 0)
        return tp_err_set(err, "--scan: %s has no free parameters, nothing to scan", path);
    int n1 = r->n_fit == 2 ? VAL_SCAN_2D : VAL_SCAN_1D, n2 = r->n_fit == 2 ? VAL_SCAN_2D : 1;
    size_t cells = (size_t)(n1 * n2), nf = (size_t)(r->n_folds > 0 ? r->n_folds : 1);
    double *obj = calloc(nf * cells, sizeof *obj), x[VAL_SCAN_1D], y[VAL_SCAN_2D];
    plot_scan_data *d = calloc(nf, sizeof *d);
    char(*names)[64] = calloc(nf, sizeof *names), (*titles)[512] = calloc(nf, sizeof *titles);
    int rc = -1;
    if (!obj || !d || !names || !titles) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    const scenario_fit_param *p = r->scn.fit_params;
    for (int i = 0; i < n1; i++) x[i] = p[0].lo + (p[0].hi - p[0].lo) * i / (n1 - 1);
    for (int j = 0; j < n2; j++) y[j] = n2 > 1 ? p[1].lo + (p[1].hi - p[1].lo) * j / (n2 - 1) : 0;
    char pn[96];
    val_protocol_name(&r->protocol, pn, sizeof pn);
    /* every fold's scan first, then one figure set: all of them are installed, or none */
    for (int f = 0; f < r->n_folds; f++) {
        const val_fold *fd = &r->folds[f];
        if (r->n_folds > 1) snprintf(names[f], sizeof names[f], "objective-fold%d", f + 1);
        else snprintf(names[f], sizeof names[f], "objective");
        snprintf(titles[f], sizeof titles[f],
                 "%s, %s%s%s: fit objective, %d calibration cells, meas-cv %.2g%%", r->scn.name, pn,
                 r->n_folds > 1 ? " " : "", r->n_folds > 1 ? fd->label : "", fd->n_cal,
                 100 * r->opt.meas_cv);
        d[f] = (plot_scan_data){names[f],
                                titles[f],
                                p[0].key,
                                r->n_fit == 2 ? p[1].key : NULL,
                                n1,
                                n2,
                                x,
                                y,
                                obj + (size_t)f * cells,
                                fd->fitted[0],
                                r->n_fit == 2 ? fd->fitted[1] : 0,
                                val_region_threshold(fd->objective, &fd->scale),
                                r->opt.meas_cv};
        if (val_scan(path, so, r, f, n1, n2, obj + (size_t)f * cells, err)) goto out;
    }
    rc = plot_scan_stage(d, (size_t)r->n_folds, dir, set, err);
out:
    free(obj);
    free(d);
    free(names);
    free(titles);
    return rc;
}

/* The bundled grid: SCENARIO_DIR/../validate/h100-ctx2048.csv, else validate/h100-ctx2048.csv
 * under $TPSIM_PATH or the share folder (locate.h). */
static int vcmd_default_grid(const char *scenario_path, char *out, size_t cap, tp_err *err)
{
    const char *slash = strrchr(scenario_path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - scenario_path) : 0, scenario_path);
    return locate_file("validate", ".csv", "../validate/h100-ctx2048.csv", dir, out, cap, err);
}

/* What one validate command line asks for (vcmd_parse). */
typedef struct vcmd_opts {
    const char *path, *grid_path, *plot_dir, *scan_dir;
    const char *domain_out; /* --write-domain (the scenario) or --write-domain-to FILE; NULL */
    val_options vo;
    int json, summary, strict, n_protocols;
    val_protocol protocols[VCMD_MAX_PROTOCOLS];
} vcmd_opts;

/* A protocol flag (one per val_protocols[] entry): appended to o->protocols. second_shown
 * keeps the flag that gave a second one (ca.shown is reused). */
static int vcmd_protocol_flag(vcmd_opts *o, const char *shown, const char *text,
                              char *second_shown, size_t cap, tp_err *err)
{
    if (o->n_protocols == VCMD_MAX_PROTOCOLS)
        return tp_err_set(err, "%s: a protocol past the %dth, expected at most %d", shown,
                          VCMD_MAX_PROTOCOLS, VCMD_MAX_PROTOCOLS);
    if (o->n_protocols && !second_shown[0]) snprintf(second_shown, cap, "%s", shown);
    o->vo.protocol_given = 1;
    if (val_protocol_parse(text, &o->protocols[o->n_protocols++], err)) {
        char msg[TP_ERR_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        return tp_err_set(err, "%s: %s", shown, msg);
    }
    return 0;
}

/* The command's flags: its own, one per protocol (validate.h) from F_PROTOCOL on, then the
 * scenario flags (cmd.h); a table past cap is cut short, which cli_begin refuses. */
enum { F_HELP, F_GRID, F_PLOT, F_KILL, F_FORMAT, F_CV, F_STRICT, F_SUMMARY, F_SCAN, F_JOBS,
       F_QUIET, F_WRITE_DOMAIN, F_WRITE_DOMAIN_TO, F_PROTOCOL };
static void vcmd_flags(cli_flag *out, size_t cap)
{
    static const cli_flag own[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"grid", 0, 1, "FILE", "the measured grid (default: the study's H100 grid)"},
        {"plot", 0, 1, "DIR", "draw the validation figures (PNG, SVG) into DIR"},
        {"kill-switch", 0, 1, "PCT", "held-out MAPE a config must stay within (default 15)"},
        {"format", 0, 1, "text|json", "the report's format (default text)"},
        {"meas-cv", 0, 1, "PCT", "relative measurement error per cell (default 1)"},
        {"strict", 0, 0, NULL, "exit 1 unless every judged config is SUPPORTED on verified inputs"},
        {"summary", 0, 0, NULL, "one table row per judged config"},
        {"scan", 0, 1, "DIR", "write the objective over the free parameters (CSV, gnuplot)"},
        {"jobs", 0, 1, "N", "cells at once (default: one per core)"},
        {"quiet", 0, 0, NULL, "no progress line on a terminal"},
        {"write-domain", 0, 0, NULL, "rewrite the scenario's validated: block from this run"},
        {"write-domain-to", 0, 1, "FILE", "write the scenario with that block to FILE instead"}};
    static const cli_flag scn[] = {CMD_SCN_FLAGS};
    _Static_assert(sizeof own / sizeof own[0] == F_PROTOCOL, "one entry per F_ value");
    size_t n = 0;
    for (size_t i = 0; i < sizeof own / sizeof own[0] && n + 1 < cap; i++) out[n++] = own[i];
    for (int i = 0; i < val_n_protocols && n + 1 < cap; i++)
        out[n++] = (cli_flag){val_protocols[i].name, 0, val_protocols[i].value != NULL,
                              val_protocols[i].value, "a protocol (see protocols below)"};
    for (size_t i = 0; i < sizeof scn / sizeof scn[0] && n + 1 < cap; i++) out[n++] = scn[i];
    out[n] = (cli_flag)CLI_END;
}

/* --write-domain states the scenario file as written: an override would be recorded as if
 * it were the file's. 0, or -1 with err set. */
static int vcmd_domain_alone(const vcmd_opts *o, const scn_opts *so, tp_err *err)
{
    const char *over = so->n_sets ? "--set" : so->model_set[0] ? "--model"
                     : so->n_calibs ? "--calib" : so->mode_set[0] ? "--mode"
                     : so->measured ? "--measured"
                     : so->allow_foreign_calib ? "--allow-foreign-calib" : NULL;
    if (o->domain_out && over)
        return tp_err_set(err, "--write-domain: with %s, expected the scenario as written (edit "
                          "the file instead: the block records what the file states)", over);
    return 0;
}

/* The command line into o and so: 0, 1 when --help was printed, -1 with err set. */
static int vcmd_parse(int argc, char **argv, vcmd_opts *o, scn_opts *so, tp_err *err)
{
    const char *v;
    char second_shown[80] = ""; /* the flag that gave a second protocol (ca.shown is reused) */
    double cv_pct = 100 * o->vo.meas_cv;
    cli_flag flags[CLI_MAX_FLAGS + 2];
    vcmd_flags(flags, sizeof flags / sizeof flags[0]);
    cli_args ca;
    int f;
    if (cli_begin(&ca, "validate", "tpsim validate --help", flags, argc, argv, err)) return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        if (f == CLI_ERROR) {
            return -1;
        } else if (f == CLI_OPERAND) {
            if (o->path)
                return tp_err_set(err, "validate: a second scenario '%s', expected one", v);
            o->path = v;
        } else if (f == F_HELP) {
            vcmd_usage(flags);
            return 1;
        } else if (f == F_GRID) {
            o->grid_path = v;
        } else if (f == F_PLOT) {
            o->plot_dir = v;
        } else if (f == F_KILL) {
            if (cli_double(ca.shown, v, 0.001, 1000, &o->vo.kill_switch_pct, err)) return -1;
        } else if (f >= F_PROTOCOL && f < F_PROTOCOL + val_n_protocols) {
            const val_protocol_def *d = &val_protocols[f - F_PROTOCOL];
            if (vcmd_protocol_flag(o, ca.shown, d->value ? v : d->name, second_shown,
                                   sizeof second_shown, err))
                return -1;
        } else if (f == F_CV) {
            if (cli_double(ca.shown, v, 0.001, 50, &cv_pct, err)) return -1;
            o->vo.meas_cv = cv_pct / 100.0;
        } else if (f == F_JOBS) { /* cells at once; the output does not change */
            long jobs;
            if (cli_long(ca.shown, v, 1, 1024, &jobs, err)) return -1;
            so->jobs = (int)jobs;
        } else if (f == F_QUIET) {
            so->quiet = 1;
        } else if (f == F_STRICT) {
            o->strict = 1;
        } else if (f == F_SUMMARY) {
            o->summary = 1;
        } else if (f == F_SCAN) {
            o->scan_dir = v;
        } else if (f == F_WRITE_DOMAIN || f == F_WRITE_DOMAIN_TO) {
            if (o->domain_out)
                return tp_err_set(err, "%s: the block is written once, expected one of "
                                  "--write-domain, --write-domain-to", ca.shown);
            if (f == F_WRITE_DOMAIN_TO && (!v[0] || cli_is_stdout(v)))
                return tp_err_set(err, "%s: '%s', expected a file name (the report is on "
                                  "stdout)", ca.shown, v);
            o->domain_out = f == F_WRITE_DOMAIN ? "" : v; /* "": the scenario, once located */
        } else if (f == F_FORMAT) {
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(err, "--format: '%s', expected text or json", v);
            o->json = !strcmp(v, "json");
        } else if (cmd_scn_flag(so, flags[f].name, v, err) < 0) {
            return -1;
        }
    }
    if (!o->path) return tp_err_set(err, "validate: missing SCENARIO (see tpsim validate --help)");
    if (vcmd_domain_alone(o, so, err)) return -1;
    /* a summary row prints no sensitivity: the +-20% runs of every assumed number would be
     * simulated for nothing (the validation table's scenarios x protocols) */
    if (o->summary && !o->json) o->vo.sensitivity = 0;
    /* several protocols: one table row per judged config of each, in the order given (the
     * validation table's use); a report, JSON or figures describe one */
    if (second_shown[0] &&
        (!(o->summary || o->domain_out) || o->json || o->plot_dir || o->scan_dir)) {
        char names[256];
        val_protocol_flags(names, sizeof names);
        return tp_err_set(err, "%s: a second protocol, expected one of %s (several only with "
                          "--summary or --write-domain, without --format json, --plot or "
                          "--scan)", second_shown, names);
    }
    return 0;
}

/* Each protocol in turn on one grid: its report, figures and --strict count. 0 (*unsupported
 * set when --strict finds a judged config not SUPPORTED), or -1 with err set. */
static int vcmd_run(vcmd_opts *o, const scn_opts *so, const grid *g, val_report *rep,
                    vdom *dom, int *unsupported, tp_err *err)
{
    const char *path = o->path;
    for (int p = 0; p < (o->n_protocols ? o->n_protocols : 1); p++) {
        if (o->n_protocols) o->vo.protocol = o->protocols[p];
        if (val_run_with(path, so, g, &o->vo, rep, err)) return -1;
        if (o->domain_out && vdom_add(dom, rep, err)) { /* each protocol's part of the block */
            val_free(rep);
            return -1;
        }
        if (o->scan_dir && rep->n_fit == 0) { /* refused before the report is printed */
            tp_err_set(err, "--scan: %s has no free parameters, nothing to scan", path);
            val_free(rep);
            return -1;
        }
        if (o->json) vjson_print(rep);
        else if (o->summary) vcmd_print_summary(rep);
        else vcmd_print_text(rep);
        /* the figures and the scan go in together, or neither does */
        plot_stage *sets[2] = {NULL, NULL};
        int drawn = 0;
        /* a report that did not reach stdout installs nothing: no figure is drawn for it */
        if ((o->plot_dir || o->scan_dir) && ofile_stdout_ok(err)) drawn = -1;
        else if (o->plot_dir && plot_validation_stage(rep, o->plot_dir, &sets[0], err)) drawn = -1;
        else if (o->scan_dir && vcmd_write_scan(path, so, rep, o->scan_dir, &sets[1], err))
            drawn = -1;
        if (plot_commit(sets, 2, drawn)) {
            val_free(rep);
            return -1;
        }
        for (int k = 0; o->strict && k < rep->n_configs; k++)
            if (rep->configs[k].judged && rep->configs[k].verdict != VAL_SUPPORTED)
                *unsupported = 1;
        if (o->strict && rep->n_unverified) *unsupported = 1; /* SUPPORTED on edited numbers */
        val_free(rep);
    }
    return 0;
}

int tpsim_cmd_validate(int argc, char **argv)
{
    tp_err err = {{0}};
    scn_opts so;
    memset(&so, 0, sizeof so);
    vcmd_opts o;
    memset(&o, 0, sizeof o);
    o.vo = val_default_options();
    int parsed = vcmd_parse(argc, argv, &o, &so, &err);
    if (parsed) return parsed > 0 ? 0 : cmd_fail(&err);
    char scn_buf[1024], grid_buf[4096];
    if (!(o.path = locate_arg("scenarios", ".yaml", o.path, scn_buf, sizeof scn_buf, &err)))
        return cmd_fail(&err);
    if (o.grid_path) {
        if (!(o.grid_path = locate_arg("validate", ".csv", o.grid_path, grid_buf, sizeof grid_buf,
                                       &err)))
            return cmd_fail(&err);
    } else if (vcmd_default_grid(o.path, grid_buf, sizeof grid_buf, &err)) {
        return cmd_fail(&err);
    } else {
        o.grid_path = grid_buf;
    }
    /* --write-domain-to names another file than the inputs (--write-domain is the one way to
     * rewrite the scenario) */
    const char *ins[2] = {o.path, o.grid_path};
    if (o.domain_out && o.domain_out[0] && ofile_refuse_inputs(o.domain_out, ins, 2, &err))
        return cmd_fail(&err);
    grid g;
    val_report *rep = malloc(sizeof *rep);
    if (!rep) return tp_err_set(&err, "out of memory"), cmd_fail(&err);
    int status = 2, unsupported = 0;
    if (grid_load(o.grid_path, &g, &err)) {
        free(rep);
        return cmd_fail(&err);
    }
    /* the figures are installed last, after the report reached stdout (plot.h) */
    if ((o.plot_dir && plot_check(o.plot_dir, &err)) ||
        (o.scan_dir && plot_check(o.scan_dir, &err)))
        goto out;
    /* the protocols of one invocation share one scenario, options and grid, so a fit on the
     * same calibration cells reuses the cells already simulated (memo.h) */
    o.vo.memo = vmemo_new(); /* NULL (no memory) only loses the reuse */
    /* ... and read the files it names once: a kernel calibration's measured grids take longer
     * to parse than a protocol's simulations */
    o.vo.files = scenario_cache_new(); /* NULL: each run keeps its own */
    vdom dom = {0};
    /* the block goes in after every report reached stdout (ofile.h), or not at all */
    if (vcmd_run(&o, &so, &g, rep, &dom, &unsupported, &err) == 0 &&
        (!o.domain_out || vdom_write(&dom, o.path, o.domain_out[0] ? o.domain_out : o.path,
                                     &err) == 0))
        status = unsupported ? 1 : 0;
    vmemo_free(o.vo.memo);
    scenario_cache_free(o.vo.files);
out:
    if (status == 2) cmd_fail(&err);
    grid_free(&g);
    free(rep);
    return status;
}
