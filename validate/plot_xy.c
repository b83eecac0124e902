/* plot_xy.c: the figures of sweep, allreduce and trace compare (plot.h): lines of series on
 * linear or log axes (plot_xy), and groups of bars side by side (plot_groups). Drawn like
 * every figure: a staging directory, gnuplot as a child, installed whole or not at all; this
 * file calls only plot_files.c. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot_impl.h"

static void plot_xy_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.12g", v); /* bytes to 2^40 exactly */
    else fputs(" NaN", f);
}

static int plot_xy_files(plot_ctx *c, const plot_xy_data *d)
{
    char name[PLOT_PATH_MAX];
    snprintf(name, sizeof name, "%s.dat", d->name);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# %s: x y, one block per series\n", d->about);
    for (int k = 0; k < d->n_series; k++) {
        fprintf(f, "# ");
        plot_dat_str(f, d->series[k].title);
        fputc('\n', f);
        for (size_t i = 0; i < d->series[k].n; i++) {
            plot_xy_num(f, d->series[k].x[i]);
            plot_xy_num(f, d->series[k].y[i]);
            fputc('\n', f);
        }
        if (!d->series[k].n) fputs("NaN NaN\n", f);
        fputs("\n\n", f);
    }
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", d->name);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, d->cmd, d->name, d->about, 1000, 640);
    fputs("set title ", f);
    plot_qs(f, d->title);
    fputs(" font \",12\"\nset xlabel ", f);
    plot_qs(f, d->xlabel);
    fputs("\nset ylabel ", f);
    plot_qs(f, d->ylabel);
    /* inside, top left: a long series name must not squeeze the plot */
    fputs("\nset key inside top left vertical Left reverse box opaque font \",10\"\n", f);
    if (d->logx) fputs("set logscale x 2\nset xtics 1024\nset mxtics 10\n"
                       "set format x \"%.0b %BB\"\n", f);
    if (d->logy) fputs("set logscale y 10\n", f);
    else fputs("set yrange [0:*]\n", f);
    fputs("set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.04\n", f);
    if (d->xtics_data) { /* the x values held, once each, as tics */
        fputs("set xtics (", f);
        int first = 1;
        for (int k = 0; k < d->n_series; k++)
            for (size_t i = 0; i < d->series[k].n; i++) {
                double x = d->series[k].x[i];
                int seen = 0;
                for (int q = 0; q <= k && !seen; q++)
                    for (size_t j = 0; j < (q < k ? d->series[q].n : i) && !seen; j++)
                        seen = d->series[q].x[j] == x;
                if (seen || !isfinite(x)) continue;
                fprintf(f, "%s%.9g", first ? "" : ", ", x);
                first = 0;
            }
        fputs(")\n", f);
    }
    fputs("plot ", f);
    for (int k = 0; k < d->n_series; k++) {
        const char *col = plot_palette[k % PLOT_N_PALETTE];
        const char *how = d->series[k].style == PLOT_POINTS ? "points pt 7 ps 1.1"
                          : d->series[k].style == PLOT_LINE ? "lines lw 2"
                                                            : "linespoints pt 7 ps 0.9 lw 2";
        fprintf(f, "%s\"%s.dat\" index %d using 1:2 with %s lc rgb \"%s\" title ",
                k ? ", \\\n     " : "", d->name, k, how, col);
        plot_qs(f, d->series[k].title);
    }
    if (!d->n_series) fputs("NaN notitle", f);
    fputc('\n', f);
    plot_gp_tail(f, d->name);
    return plot_close(c, f, name);
}

int plot_xy_stage(const plot_xy_data *d, const char *dir, plot_stage **out, tp_err *err)
{
    *out = NULL;
    if (!dir) return tp_err_set(err, "plot: no output directory");
    char gnuplot[PLOT_PATH_MAX];
    plot_ctx *c = plot_stage_open(dir, "dat", gnuplot, err);
    if (!c) return -1;
    if (plot_set_add(c, d->name) || plot_xy_files(c, d) || plot_run_gnuplot(c, gnuplot, d->name))
        return plot_stage_fail(c);
    *out = c;
    return 0;
}

int plot_xy(const plot_xy_data *d, const char *dir, tp_err *err)
{
    plot_stage *set;
    if (plot_xy_stage(d, dir, &set, err)) return -1;
    return plot_commit(&set, 1, 0);
}

static int plot_groups_files(plot_ctx *c, const plot_groups_data *d)
{
    char name[PLOT_PATH_MAX];
    snprintf(name, sizeof name, "%s.dat", d->name);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# %s: group", d->about);
    for (int s = 0; s < d->n_sets; s++) fprintf(f, " %s", d->sets[s]);
    fputc('\n', f);
    for (int g = 0; g < d->n_groups; g++) {
        plot_dat_str(f, d->groups[g]);
        for (int s = 0; s < d->n_sets; s++) plot_xy_num(f, d->values[g * d->n_sets + s]);
        fputc('\n', f);
    }
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", d->name);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, d->cmd, d->name, d->about, 1000, 600);
    fputs("set title ", f);
    plot_qs(f, d->title);
    fputs(" font \",12\"\nset ylabel ", f);
    plot_qs(f, d->ylabel);
    fputs("\nset style data histograms\n"
          "set style histogram clustered gap 1\n"
          "set style fill solid 0.85 border -1\n"
          "set yrange [0:*]\n"
          "set offsets 0, 0, graph 0.08, 0\n"
          "set key outside top center horizontal\n"
          "set xtics noenhanced rotate by -30 left font \",9\"\n"
          "set bmargin 7\n"
          "set rmargin 6\n",
          f);
    fputs("plot ", f);
    for (int s = 0; s < d->n_sets; s++) {
        fprintf(f, "%s\"%s.dat\" using %d%s lc rgb \"%s\" title ", s ? ", \\\n     " : "",
                d->name, s + 2, s ? "" : ":xtic(1)", plot_palette[s % PLOT_N_PALETTE]);
        plot_qs(f, d->sets[s]);
    }
    if (!d->n_sets) fputs("NaN notitle", f);
    fputc('\n', f);
    plot_gp_tail(f, d->name);
    return plot_close(c, f, name);
}

int plot_groups(const plot_groups_data *d, const char *dir, tp_err *err)
{
    if (!dir) return tp_err_set(err, "plot: no output directory");
    char gnuplot[PLOT_PATH_MAX];
    plot_ctx *c = plot_stage_open(dir, "dat", gnuplot, err);
    if (!c) return -1;
    if (plot_set_add(c, d->name) || plot_groups_files(c, d) ||
        plot_run_gnuplot(c, gnuplot, d->name))
        return plot_stage_fail(c);
    plot_stage *set = c;
    return plot_commit(&set, 1, 0);
}
