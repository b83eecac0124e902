/* plot.c: see plot.h. The driver of the validation and scan figure sets, on top of the
 * plotter: the figure sets' life, files and gnuplot runs are plot_files.c (which uses no
 * other part of it), the figures plot_mvp.c, plot_bars.c and plot_plan.c (which use only
 * plot_files.c).
 *
 * Everything is drawn in a private staging directory DIR/.plot.XXXXXX: the .dat files, the
 * .gp scripts (which name their data and images relative to the directory they sit in, so
 * `gnuplot NAME.gp` in DIR re-draws a figure), and the images gnuplot writes. Only when
 * every figure has drawn are the files renamed into DIR, data and scripts first and images
 * last; on any failure the staging directory is removed and DIR is left as it was.
 * gnuplot runs as a child process with stdin from /dev/null, its output captured to a log
 * in the staging directory, and a bounded wait (killed after PLOT_TIMEOUT_S).
 */
#include "plot.h"

#include "csv.h"
#include "ofile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "plot_impl.h"

/* ------------------------------------------------------------- driver ------------- */

int plot_validation_stage(const val_report *r, const char *dir, plot_stage **out, tp_err *err)
{
    *out = NULL;
    if (!r || !r->cells || r->n_cells == 0 || !r->g)
        return tp_err_set(err, "plot: nothing to plot (an empty validation report)");
    if (!dir) return tp_err_set(err, "plot: no output directory");
    char gnuplot[PLOT_PATH_MAX];
    plot_ctx *c = plot_stage_open(dir, "dat", gnuplot, err);
    if (!c) return -1;
    c->r = r;
    plot_grid_name(r->g->path, c->grid_name, sizeof c->grid_name);
    snprintf(c->what, sizeof c->what, "%s vs %s (%zu cells)",
             r->scn.name[0] ? r->scn.name : "scenario", c->grid_name, r->n_cells);
    c->tp_unique = 1;
    for (int i = 0; i < r->n_configs; i++)
        for (int j = 0; j < i; j++)
            if (r->configs[i].tp == r->configs[j].tp) c->tp_unique = 0;
    for (size_t i = 1; i < r->n_cells; i++)
        if (r->cells[i].g->ctx != r->cells[0].g->ctx) c->multi_ctx = 1;

    for (int i = 0; i < PLOT_N_FIGURES; i++)
        if (plot_set_add(c, plot_figures[i])) return plot_stage_fail(c);
    if (plot_measured_vs_predicted(c) || plot_step_vs_tp(c) || plot_breakdown(c))
        return plot_stage_fail(c);
    for (int i = 0; i < PLOT_N_FIGURES; i++)
        if (plot_run_gnuplot(c, gnuplot, plot_figures[i])) return plot_stage_fail(c);
    *out = c;
    return 0;
}

int plot_validation(const val_report *r, const char *dir, tp_err *err)
{
    plot_stage *set;
    if (plot_validation_stage(r, dir, &set, err)) return -1;
    return plot_commit(&set, 1, 0);
}

/* ------------------------------------------------------------- scan ---------------- */

/* The objective at every scanned point, as CSV; its minimum in *fmin_obj. */
static int plot_scan_csv(plot_ctx *c, const plot_scan_data *d, double *fmin_obj)
{
    char name[160];
    snprintf(name, sizeof name, "%s.csv", d->name);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    *fmin_obj = INFINITY;
    for (int i = 0; i < d->n1 * d->n2; i++) *fmin_obj = fmin(*fmin_obj, d->objective[i]);
    double scale = d->cv * d->cv;
    fprintf(f, "%s,%s%sobjective,delta_chi2\n", d->xkey, d->ykey ? d->ykey : "",
            d->ykey ? "," : "");
    for (int i = 0; i < d->n1; i++) {
        for (int j = 0; j < d->n2; j++) {
            double o = d->objective[i * d->n2 + j];
            /* floats print as floats (csv_float): a scan through 0 stays a float column */
            csv_float(f, d->x[i], 10);
            if (d->ykey) fputc(',', f), csv_float(f, d->y[j], 10);
            fputc(',', f);
            csv_float(f, o, 10);
            fputc(',', f);
            csv_float(f, (o - *fmin_obj) / scale, 6);
            fputc('\n', f);
        }
        if (d->ykey && i + 1 < d->n1) fputc('\n', f);
    }
    return plot_close(c, f, name);
}

/* Two parameters: a map of log10(objective) with the 95% contour and the fit marked. */
static void plot_scan_gp_map(FILE *f, const plot_scan_data *d, double floor_obj)
{
    fprintf(f, "set ylabel ");
    plot_qs(f, d->ykey);
    fprintf(f,
            "\nset view map\n"
            "set autoscale xfix\n"
            "set autoscale yfix\n"
            "set pm3d at b\n"
            "unset surface\n"
            "set contour base\n"
            "set cntrparam levels discrete %.10g\n"
            "unset clabel\n"
            "set palette defined (0 \"#08306b\", 1 \"#4292c6\", 2 \"#c6dbef\", "
            "3 \"#fee391\", 4 \"#d94801\")\n"
            "set cblabel \"log10 objective\"\n"
            "set key bottom right opaque box\n"
            "set label 1 \"fit\" at %.10g,%.10g point pt 7 ps 1.6 lc rgb \"#d62728\" "
            "offset 1,0 front\n"
            "splot \"%s.csv\" skip 1 using 1:2:(log10($3 > %g ? $3 : %g)) "
            "with pm3d notitle, \\\n"
            "      \"%s.csv\" skip 1 using 1:2:(log10($3 > %g ? $3 : %g)) "
            "with lines lw 2 lc rgb \"black\" title \"95%% region (delta chi2 = 3.84)\"\n",
            log10(d->threshold), d->fit_x, d->fit_y, d->name, floor_obj, floor_obj, d->name,
            floor_obj, floor_obj);
}

/* One parameter: the objective on a log scale, the fit and the 95% threshold marked. */
static void plot_scan_gp_line(FILE *f, const plot_scan_data *d, double floor_obj)
{
    fprintf(f,
            "set ylabel \"objective\"\n"
            "set logscale y\n"
            "set grid back lt 1 lc rgb \"#e3e3e3\" lw 1\n"
            "set arrow 1 from %.10g, graph 0 to %.10g, graph 1 nohead lc rgb \"#d62728\" dt 2\n"
            "plot \"%s.csv\" skip 1 using 1:($2 > %g ? $2 : %g) "
            "with lines lw 2 lc rgb \"#1f77b4\" title \"objective\", "
            "%.10g with lines dt 2 lc rgb \"black\" title \"95%% threshold\"\n",
            d->fit_x, d->fit_x, d->name, floor_obj, floor_obj, d->threshold);
}

static int plot_scan_files(plot_ctx *c, const plot_scan_data *d)
{
    double fmin_obj;
    if (plot_scan_csv(c, d, &fmin_obj)) return -1;
    char name[160];
    snprintf(name, sizeof name, "%s.gp", d->name);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f,
            "# %s.gp: the fit's objective (sum of squared relative errors on the calibration "
            "cells)\n"
            "# over its free parameters. Written by tpsim validate --scan with %s.csv. Re-draw:\n"
            "#   gnuplot %s.gp\n",
            d->name, d->name, d->name);
    plot_gp_png(f, d->name, 900, 640);
    fprintf(f, "set datafile separator \",\"\n"
               "set tics nomirror out\n");
    fprintf(f, "set title ");
    plot_qs(f, d->title);
    fprintf(f, "\nset xlabel ");
    plot_qs(f, d->xkey);
    fprintf(f, "\n");
    double floor_obj = fmax(fmin_obj, 1e-12);
    if (d->ykey) plot_scan_gp_map(f, d, floor_obj);
    else plot_scan_gp_line(f, d, floor_obj);
    plot_gp_tail(f, d->name);
    return plot_close(c, f, name);
}

int plot_scan_stage(const plot_scan_data *d, size_t n, const char *dir, plot_stage **out,
                    tp_err *err)
{
    *out = NULL;
    char gnuplot[PLOT_PATH_MAX];
    plot_ctx *c = plot_stage_open(dir, "csv", gnuplot, err);
    if (!c) return -1;
    for (size_t i = 0; i < n; i++)
        if (plot_set_add(c, d[i].name) || plot_scan_files(c, &d[i]) ||
            plot_run_gnuplot(c, gnuplot, d[i].name))
            return plot_stage_fail(c);
    *out = c;
    return 0;
}

int plot_scan(const plot_scan_data *d, size_t n, const char *dir, tp_err *err)
{
    plot_stage *set;
    if (plot_scan_stage(d, n, dir, &set, err)) return -1;
    return plot_commit(&set, 1, 0);
}
