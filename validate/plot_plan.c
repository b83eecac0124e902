/* plot_plan.c: the figures of tpsim plan (plot.h): the Pareto plot of per-token latency
 * against tokens/s per GPU, one curve per configuration, the target and the chosen point;
 * and a stacked bar of where the winner's (and runner-up's) step goes. Drawn like the
 * validation figures: a staging directory, gnuplot as a child, installed whole or not at all. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ofile.h"
#include "plot_impl.h"

/* one block per curve (two blank lines apart: gnuplot's index), "step_ms tok_s_gpu batch" */
static int plot_plan_pareto(plot_ctx *c, const plot_plan_data *d, const char *fig)
{
    char name[PLOT_PATH_MAX];
    snprintf(name, sizeof name, "%s.dat", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# per-token latency (ms), tokens/s per GPU, batch; one block per configuration\n");
    for (int k = 0; k < d->n_curves; k++) {
        fprintf(f, "# ");
        plot_dat_str(f, d->curves[k].label);
        fputc('\n', f);
        for (size_t i = 0; i < d->curves[k].n; i++)
            fprintf(f, "%.6f %.6f %ld\n", d->curves[k].step_ms[i], d->curves[k].tok_gpu[i],
                    d->curves[k].batch[i]);
        fputs("\n\n", f);
    }
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, "plan", fig,
                 "per-token latency vs tokens/s per GPU, one curve per configuration", 1000, 680);
    fputs("set title ", f);
    plot_qs(f, d->title);
    fprintf(f,
            " font \",13\"\n"
            "set xlabel \"per-token latency (decode step, ms)\"\n"
            "set ylabel \"tokens/s per GPU\"\n"
            "set key outside right top vertical\n"
            "set yrange [0:*]\n"
            "set offsets 0, 0, graph 0.06, 0\n"
            "set arrow 1 from %.6f, graph 0 to %.6f, graph 1 nohead lw 2 lc rgb \"#444444\" dt 2\n"
            "set label 1 ",
            d->target_ms, d->target_ms);
    char tl[64];
    snprintf(tl, sizeof tl, "target %.4g ms", d->target_ms);
    plot_qs(f, tl);
    fprintf(f, " at %.6f, graph 0.03 right offset -0.5,0\n", d->target_ms);
    if (d->pick_label) {
        fprintf(f, "set label 2 ");
        plot_qs(f, d->pick_label);
        fprintf(f, " at %.6f,%.6f point pt 7 ps 2.2 lc rgb \"black\" offset -1,-1.2 right front\n",
                d->pick_step_ms, d->pick_tok);
    }
    fputs("plot ", f);
    for (int k = 0; k < d->n_curves; k++) {
        fprintf(f,
                "%s\"%s.dat\" index %d using 1:2 with linespoints pt 7 ps 0.5 lw 2 lc rgb \"%s\" "
                "title ",
                k ? ", \\\n     " : "", fig, k, plot_palette[k % PLOT_N_PALETTE]);
        plot_qs(f, d->curves[k].label);
    }
    if (!d->n_curves) fprintf(f, "%.6f notitle", d->target_ms);
    fputc('\n', f);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

/* one row per bar: label, then compute, all-reduce, wait for peers, GPU idle, offset (ms) */
static int plot_plan_bars(plot_ctx *c, const plot_plan_data *d, const char *fig)
{
    char name[PLOT_PATH_MAX];
    snprintf(name, sizeof name, "%s.dat", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# label compute_ms allreduce_ms wait_peers_ms gpu_idle_ms offset_ms\n");
    for (int i = 0; i < d->n_bars; i++) {
        const plot_plan_bar *b = &d->bars[i];
        plot_dat_str(f, b->label);
        fprintf(f, " %.6f %.6f %.6f %.6f %.6f\n", b->compute_ms, b->allreduce_ms, b->wait_peers_ms,
                b->gpu_idle_ms, b->offset_ms);
    }
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, "plan", fig, "where the chosen configurations' decode step goes", 1000, 600);
    char title[512];
    snprintf(title, sizeof title, "where the step goes\n%s", d->title);
    fputs("set title ", f);
    plot_qs(f, title);
    fprintf(f, " font \",13\"\n"
               "set style data histograms\n"
               "set style histogram rowstacked\n"
               "set style fill solid 0.85 border -1\n"
               "set boxwidth 0.6\n"
               "set ylabel \"ms per decode step\"\n"
               "set yrange [0:*]\n"
               "set offsets 0, 0, graph 0.08, 0\n"
               "set key outside bottom center horizontal\n"
               "set xtics noenhanced font \",9\"\n"
               "set arrow 1 from graph 0, first %.6f to graph 1, first %.6f nohead lw 2 "
               "lc rgb \"#444444\" dt 2\n"
               "plot \"%s.dat\" using 2:xtic(1) title \"compute\" lc rgb \"%s\", \\\n"
               "     '' using 3 title \"all-reduce\" lc rgb \"%s\", \\\n"
               "     '' using 4 title \"waiting for peers\" lc rgb \"%s\", \\\n"
               "     '' using 5 title \"GPU waiting on the host (launches, step work)\" "
               "lc rgb \"%s\", \\\n"
               "     '' using 6 title \"offset\" lc rgb \"%s\"\n",
            d->target_ms, d->target_ms, fig, plot_palette[0], plot_palette[1], plot_palette[3],
            plot_palette[7], plot_palette[4]);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

int plot_plan_stage(const plot_plan_data *d, size_t n, const char *dir, plot_stage **out,
                    tp_err *err)
{
    *out = NULL;
    if (!dir) return tp_err_set(err, "plot: no output directory");
    char gnuplot[PLOT_PATH_MAX];
    plot_ctx *c = plot_stage_open(dir, "dat", gnuplot, err);
    if (!c) return -1;
    for (size_t i = 0; i < n; i++) {
        char pareto[PLOT_FIG_MAX], bars[PLOT_FIG_MAX];
        snprintf(pareto, sizeof pareto, "pareto-%s", d[i].name);
        snprintf(bars, sizeof bars, "breakdown-%s", d[i].name);
        if (plot_set_add(c, pareto) || plot_set_add(c, bars) ||
            plot_plan_pareto(c, &d[i], pareto) || plot_plan_bars(c, &d[i], bars) ||
            plot_run_gnuplot(c, gnuplot, pareto) || plot_run_gnuplot(c, gnuplot, bars))
            return plot_stage_fail(c);
    }
    *out = c;
    return 0;
}

int plot_plan(const plot_plan_data *d, size_t n, const char *dir, tp_err *err)
{
    plot_stage *set;
    if (plot_plan_stage(d, n, dir, &set, err)) return -1;
    return plot_commit(&set, 1, 0);
}
