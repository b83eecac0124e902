/* plot_plan.c: the figures of tpsim plan (plot.h): the Pareto frontier of per-token latency
 * against tokens/s per GPU with its intervals, the target and the chosen point;
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

/* long because the data and the script share the blocks' colours and key entries.
 * Block 0: every searched row, "step_ms tok_s_gpu"; then one block per run of consecutive
 * frontier points of one configuration (two blank lines apart: gnuplot's index), "step_ms
 * tok_s_gpu step_lo step_hi tok_lo tok_hi batch", NaN where a point has no interval. A
 * configuration's colour is the index of its first run. */
static int plot_plan_pareto(plot_ctx *c, const plot_plan_data *d, const char *fig)
{
    char name[PLOT_PATH_MAX];
    snprintf(name, sizeof name, "%s.dat", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# every searched row: per-token latency (ms), tokens/s per GPU\n");
    for (size_t i = 0; i < d->n_all; i++)
        fprintf(f, "%.6f %.6f\n", d->all_step_ms[i], d->all_tok[i]);
    if (!d->n_all) fputs("NaN NaN\n", f);
    fputs("\n\n# the Pareto frontier by latency, one block per run of a configuration: "
          "step_ms tok_s_gpu step_lo_ms step_hi_ms tok_lo tok_hi batch\n", f);
    int n_blocks = 0, colour[512];
    const char *first_label[512];
    int n_labels = 0;
    for (size_t i = 0; i < d->n_frontier;) {
        size_t j = i;
        while (j + 1 < d->n_frontier && !strcmp(d->frontier[j + 1].label, d->frontier[i].label))
            j++;
        fprintf(f, "# ");
        plot_dat_str(f, d->frontier[i].label);
        fputc('\n', f);
        for (size_t k = i; k <= j; k++) {
            const plot_plan_point *p = &d->frontier[k];
            fprintf(f, "%.6f %.6f ", p->step_ms, p->tok_gpu);
            const double iv[4] = {p->step_lo, p->step_hi, p->tok_lo, p->tok_hi};
            for (int q = 0; q < 4; q++)
                if (isnan(iv[q])) fputs("NaN ", f);
                else fprintf(f, "%.6f ", iv[q]);
            fprintf(f, "%ld\n", p->batch);
        }
        fputs("\n\n", f);
        if (n_blocks < 512) {
            int at = -1;
            for (int q = 0; q < n_labels; q++)
                if (!strcmp(first_label[q], d->frontier[i].label)) at = q;
            if (at < 0 && n_labels < 512) first_label[at = n_labels++] = d->frontier[i].label;
            colour[n_blocks] = at < 0 ? 0 : at;
        }
        n_blocks++;
        i = j + 1;
    }
    /* the frontier as one line, and the chosen point */
    fputs("# the frontier as one line: step_ms tok_s_gpu\n", f);
    for (size_t i = 0; i < d->n_frontier; i++)
        fprintf(f, "%.6f %.6f\n", d->frontier[i].step_ms, d->frontier[i].tok_gpu);
    if (!d->n_frontier) fputs("NaN NaN\n", f);
    fputs("\n\n# the chosen row: step_ms tok_s_gpu\n", f);
    if (d->pick_label) fprintf(f, "%.6f %.6f\n", d->pick_step_ms, d->pick_tok);
    else fputs("NaN NaN\n", f);
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, "plan", fig,
                 "the Pareto frontier of per-token latency vs tokens/s per GPU, with 95% "
                 "intervals", 1100, 680);
    fputs("set title ", f);
    plot_qs(f, d->title);
    fprintf(f,
            " font \",12\"\n"
            "set xlabel \"per-token latency (decode step, ms)\"\n"
            "set ylabel \"tokens/s per GPU\"\n"
            "set key outside right top vertical Left reverse font \",10\"\n"
            "set yrange [0:*]\n"
            "set offsets graph 0.03, graph 0.03, graph 0.06, 0\n"
            "set arrow 1 from %.6f, graph 0 to %.6f, graph 1 nohead lw 2 lc rgb \"#444444\" "
            "dt 2\n",
            d->target_ms, d->target_ms);
    fprintf(f, "plot \"%s.dat\" index 0 using 1:2 with points pt 7 ps 0.4 lc rgb \"#c8c8c8\" "
               "title \"every searched row\"", fig);
    for (int k = 0; k < n_blocks; k++) {
        const char *col = plot_palette[(k < 512 ? colour[k] : 0) % PLOT_N_PALETTE];
        int titled = k < 512;
        /* the key names each configuration once: at its first run */
        for (int q = 0; q < k && titled; q++)
            if (q < 512 && colour[q] == colour[k]) titled = 0;
        fprintf(f,
                ", \\\n     \"%s.dat\" index %d using 1:2:5:6 with yerrorbars pt 7 ps 0.9 "
                "lw 1.2 lc rgb \"%s\" ",
                fig, k + 1, col);
        if (titled) {
            fputs("title ", f);
            plot_qs(f, first_label[colour[k]]);
        } else {
            fputs("notitle", f);
        }
    }
    fprintf(f, ", \\\n     \"%s.dat\" index %d using 1:2 with lines lw 1.5 lc rgb \"#333333\" "
               "title \"Pareto frontier (95%% intervals)\"",
            fig, n_blocks + 1);
    char tl[64];
    snprintf(tl, sizeof tl, "target %.4g ms", d->target_ms);
    fputs(", \\\n     NaN with lines lw 2 dt 2 lc rgb \"#444444\" title ", f);
    plot_qs(f, tl);
    if (d->pick_label) {
        fprintf(f, ", \\\n     \"%s.dat\" index %d using 1:2 with points pt 6 ps 2.6 lw 2 "
                   "lc rgb \"black\" title ",
                fig, n_blocks + 2);
        plot_qs(f, d->pick_label);
    }
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
