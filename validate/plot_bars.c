/* plot_bars.c: the step-vs-TP and breakdown figures; see plot_impl.h. */
#include "plot.h"

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

typedef struct plot_series {
    long batch, ctx;
} plot_series;

static int plot_series_cmp(const void *a, const void *b)
{
    const plot_series *x = a, *y = b;
    if (x->ctx != y->ctx) return x->ctx < y->ctx ? -1 : 1;
    return (x->batch > y->batch) - (x->batch < y->batch);
}

static int plot_long_cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int plot_tp_cmp(const void *a, const void *b)
{
    const val_cell *x = *(const val_cell *const *)a, *y = *(const val_cell *const *)b;
    return (x->g->tp > y->g->tp) - (x->g->tp < y->g->tp);
}

/* Spread label heights (ascending order by value) at least `gap` apart, centred on the values. */
static void plot_spread(double *y, int n, double gap)
{
    for (int pass = 0; pass < 8; pass++)
        for (int i = 1; i < n; i++)
            if (y[i] - y[i - 1] < gap) {
                double mid = (y[i] + y[i - 1]) / 2;
                y[i - 1] = mid - gap / 2, y[i] = mid + gap / 2;
            }
}

/* (c) step vs TP degree per (batch, ctx): measured, ideal 1/k from the lowest TP, simulated.
 * Colour is the kind of line (measured red, simulated blue, ideal grey), the point shape the
 * batch: the figure's message is the red bundle staying flat while the others fall. */
static const int plot_pt_fill[] = {7, 5, 9, 13, 11, 15}, plot_pt_open[] = {6, 4, 8, 12, 10, 14};
static const char *const plot_col_meas = "#d62728", *const plot_col_sim = "#1f77b4",
                         *const plot_col_ideal = "#7f7f7f";

/* What the step-vs-TP figure's .dat and .gp share: its series and TP degrees (sorted), and
 * per TP degree the sums of the measured, simulated and ideal steps over the series. */
typedef struct plot_tp_fig {
    plot_series *ser;
    const val_cell **cells; /* scratch: one series' cells */
    long *tps;
    double *sum;            /* per tp: measured, simulated, ideal */
    int *cnt;
    size_t n_ser, n_tp;
    double ymax;
} plot_tp_fig;

/* the (batch, ctx) series and the TP degrees of the grid, each sorted */
static void plot_tp_collect(const val_report *r, plot_tp_fig *d)
{
    for (size_t i = 0; i < r->n_cells; i++) {
        const grid_cell *g = r->cells[i].g;
        size_t s = 0, t = 0;
        while (s < d->n_ser && !(d->ser[s].batch == g->batch && d->ser[s].ctx == g->ctx)) s++;
        if (s == d->n_ser) d->ser[d->n_ser++] = (plot_series){g->batch, g->ctx};
        while (t < d->n_tp && d->tps[t] != g->tp) t++;
        if (t == d->n_tp) d->tps[d->n_tp++] = g->tp;
    }
    qsort(d->ser, d->n_ser, sizeof *d->ser, plot_series_cmp);
    qsort(d->tps, d->n_tp, sizeof *d->tps, plot_long_cmp);
}

/* step_vs_tp.dat, one block per series; fills the per-TP sums and ymax */
static int plot_tp_write_dat(plot_ctx *c, plot_tp_fig *d)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[1];
    char name[96];
    snprintf(name, sizeof name, "%s.dat", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# %s: one block (gnuplot index) per batch/ctx series, sorted by tp.\n"
               "# ideal_ms = measured step at the series' lowest tp * that tp / tp (ideal 1/k)\n"
               "# tp measured_ms predicted_ms ideal_ms config\n",
            c->what);
    for (size_t s = 0; s < d->n_ser; s++) {
        const val_cell **cells = d->cells;
        size_t m = 0;
        for (size_t i = 0; i < r->n_cells; i++)
            if (r->cells[i].g->batch == d->ser[s].batch && r->cells[i].g->ctx == d->ser[s].ctx)
                cells[m++] = &r->cells[i];
        qsort(cells, m, sizeof *cells, plot_tp_cmp);
        fprintf(f, "%s# index %zu: batch %ld ctx %ld\n", s ? "\n\n" : "", s, d->ser[s].batch,
                d->ser[s].ctx);
        double k0 = (double)cells[0]->g->tp, m0 = cells[0]->g->measured_ms;
        for (size_t i = 0; i < m; i++) {
            const val_cell *v = cells[i];
            double ideal = m0 * k0 / (double)v->g->tp;
            fprintf(f, "%ld %.4f %.4f %.4f ", v->g->tp, v->g->measured_ms, v->predicted_ms, ideal);
            plot_dat_str(f, v->g->config);
            fputc('\n', f);
            size_t t = 0;
            while (d->tps[t] != v->g->tp) t++;
            d->sum[3 * t] += v->g->measured_ms, d->sum[3 * t + 1] += v->predicted_ms;
            d->sum[3 * t + 2] += ideal, d->cnt[t]++;
            d->ymax = fmax(d->ymax, fmax(v->g->measured_ms, v->predicted_ms));
        }
    }
    return plot_close(c, f, name);
}

/* the mean of each kind at the lowest and highest TP, spread so the labels don't touch */
static void plot_tp_end_labels(FILE *f, const plot_tp_fig *d, double yhi)
{
    static const char *const kind[] = {"measured", "simulated", "ideal"};
    const char *cols[] = {plot_col_meas, plot_col_sim, plot_col_ideal};
    for (int end = 0; end < 2 && d->n_tp > 0; end++) {
        size_t t = end ? d->n_tp - 1 : 0;
        if (end && d->n_tp == 1) break;
        int order[3] = {0, 1, 2};
        double v[3], y[3];
        for (int k = 0; k < 3; k++) v[k] = d->sum[3 * t + (size_t)k] / d->cnt[t];
        int kinds = (t == 0) ? 2 : 3; /* at the lowest TP ideal == measured */
        for (int i = 0; i < kinds; i++)
            for (int j = i + 1; j < kinds; j++)
                if (v[order[j]] < v[order[i]]) {
                    int tmp = order[i];
                    order[i] = order[j], order[j] = tmp;
                }
        for (int i = 0; i < kinds; i++) y[i] = v[order[i]];
        plot_spread(y, kinds, 0.045 * yhi);
        for (int i = 0; i < kinds; i++) {
            int k = order[i];
            char lab[96];
            if (end) snprintf(lab, sizeof lab, "%.2f ms %s", v[k], kind[k]);
            else snprintf(lab, sizeof lab, "%s %.2f ms", kind[k], v[k]);
            fputs("set label ", f);
            plot_qs(f, lab);
            fprintf(f, " at first %g, first %g %s font \",10\" tc rgb \"%s\"\n",
                    end ? (double)d->tps[t] * 1.1 : (double)d->tps[t] / 1.1, y[i],
                    end ? "left" : "right", cols[k]);
        }
    }
}

/* the plot command: three lines per series, then the key: kinds by colour and line, batches
 * by point shape */
static void plot_tp_plot_cmd(FILE *f, const plot_ctx *c, const plot_tp_fig *d)
{
    const char *fig = plot_figures[1];
    fputs("plot \\\n", f);
    for (size_t s = 0; s < d->n_ser; s++) {
        int pf = plot_pt_fill[s % 6], po = plot_pt_open[s % 6];
        fprintf(
            f,
            "     '%s.dat' index %zu using 1:4 with lines lw 1.5 dt 2 lc rgb \"%s\" notitle, \\\n"
            "     '%s.dat' index %zu using 1:3 with linespoints lw 2 dt 4 pt %d ps 1.4 "
            "lc rgb \"%s\" notitle, \\\n"
            "     '%s.dat' index %zu using 1:2 with linespoints lw 2.5 pt %d ps 1.4 "
            "lc rgb \"%s\" notitle, \\\n",
            fig, s, plot_col_ideal, fig, s, po, plot_col_sim, fig, s, pf, plot_col_meas);
    }
    fprintf(f, "     1/0 with linespoints lw 2.5 pt 7 ps 1.4 lc rgb \"%s\" title \"measured\", \\\n"
               "     1/0 with linespoints lw 2 dt 4 pt 6 ps 1.4 lc rgb \"%s\" title ",
            plot_col_meas, plot_col_sim);
    char key[160];
    snprintf(key, sizeof key, "simulated (%s)", c->r->scn.name);
    plot_qs(f, key);
    fprintf(f, ", \\\n     1/0 with lines lw 1.5 dt 2 lc rgb \"%s\" "
               "title \"ideal 1/k from the lowest TP's measured step\"",
            plot_col_ideal);
    for (size_t s = 0; s < d->n_ser; s++) {
        snprintf(key, sizeof key, "batch %ld", d->ser[s].batch);
        if (c->multi_ctx)
            snprintf(key + strlen(key), sizeof key - strlen(key), ", ctx %ld", d->ser[s].ctx);
        fprintf(f, ", \\\n     1/0 with points pt %d ps 1.4 lc rgb \"black\" title ",
                plot_pt_fill[s % 6]);
        plot_qs(f, key);
    }
    fputc('\n', f);
}

/* step_vs_tp.gp: the title with the shrink, the axes, the end labels, the plot */
static int plot_tp_write_gp(plot_ctx *c, const plot_tp_fig *d)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[1];
    char name[96];
    snprintf(name, sizeof name, "%s.gp", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    plot_gp_head(f, "validate", fig, "decode step vs TP degree per batch (the study's figure c)",
                 1100, 760);
    char title[600], sub[300];
    if (r->shrink_from_tp)
        snprintf(sub, sizeof sub,
                 "step shrink TP-%ld→TP-%ld: measured %.2f×, simulated %.2f×, ideal %.2f×",
                 r->shrink_from_tp, r->shrink_to_tp, r->shrink_measured, r->shrink_predicted,
                 (double)r->shrink_to_tp / (double)r->shrink_from_tp);
    else
        snprintf(sub, sizeof sub, "one TP degree only: no shrink to show");
    snprintf(title, sizeof title, "%s: decode step vs TP degree\n%s", c->what, sub);
    fputs("set title ", f);
    plot_qs(f, title);
    long tp_lo = d->tps[0], tp_hi = d->tps[d->n_tp - 1];
    double xlo = (double)tp_lo / 2.2, xhi = (double)tp_hi * 2.2;
    double yhi = plot_nice_ceil(d->ymax * 1.12, 5);
    fprintf(f, " font \",13\"\n"
               "set xlabel \"tensor-parallel degree k (log2 scale)\"\n"
               "set ylabel \"decode step (ms)\"\n"
               "set logscale x 2\n"
               "set xrange [%g:%g]\n"
               "set yrange [0:%g]\n"
               "set grid noxtics ytics\n"
               "set key inside left bottom vertical Left reverse spacing 1.25 opaque box "
               "lc rgb \"#bbbbbb\" width 1\n"
               "set xtics (",
            xlo, xhi, yhi);
    for (size_t t = 0; t < d->n_tp; t++)
        fprintf(f, "%s\"TP-%ld\" %ld", t ? ", " : "", d->tps[t], d->tps[t]);
    fputs(")\n", f);
    plot_tp_end_labels(f, d, yhi);
    plot_tp_plot_cmd(f, c, d);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

int plot_step_vs_tp(plot_ctx *c)
{
    size_t n = c->r->n_cells;
    plot_tp_fig d = {0};
    d.ser = calloc(n, sizeof *d.ser);
    d.cells = calloc(n, sizeof *d.cells);
    d.tps = calloc(n, sizeof *d.tps);
    d.sum = calloc(3 * n, sizeof *d.sum);
    d.cnt = calloc(n, sizeof *d.cnt);
    int rc = -1;
    if (!d.ser || !d.cells || !d.tps || !d.sum || !d.cnt) {
        tp_err_set(c->err, "out of memory");
    } else {
        plot_tp_collect(c->r, &d);
        if (!plot_tp_write_dat(c, &d)) rc = plot_tp_write_gp(c, &d);
    }
    free(d.ser);
    free(d.cells);
    free(d.tps);
    free(d.sum);
    free(d.cnt);
    return rc;
}

typedef struct plot_bar {
    const val_cell *v;
    int config;
} plot_bar;

static int plot_bar_cmp(const void *a, const void *b)
{
    const plot_bar *x = a, *y = b;
    if (x->config != y->config) return x->config < y->config ? -1 : 1;
    if (x->v->g->ctx != y->v->g->ctx) return x->v->g->ctx < y->v->g->ctx ? -1 : 1;
    return (x->v->g->batch > y->v->g->batch) - (x->v->g->batch < y->v->g->batch);
}

/* What breakdown.dat tells breakdown.gp: the x extent, the y range, the offset, which parts
 * are non-zero, and the centre of each config's group of bars. */
typedef struct plot_bd_fig {
    double x, ymax, ymin, offset;
    int any_offset, any_wait, any_idle;
    double centers[VAL_MAX_CONFIGS + 1];
    int n_groups, group_cfg[VAL_MAX_CONFIGS + 1];
} plot_bd_fig;

/* breakdown.dat: a row per bar (bars sorted by config, ctx, batch), a gap between configs */
static int plot_bd_write_dat(plot_ctx *c, const plot_bar *bars, plot_bd_fig *d)
{
    const val_report *r = c->r;
    char name[96];
    snprintf(name, sizeof name, "%s.dat", plot_figures[2]);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f,
            "# %s: the simulated step of each cell, split as run_breakdown (ms per step,\n"
            "# mean over measured steps and ranks): compute + allreduce + wait_peers + gpu_idle\n"
            "# + offset = predicted. host is the host-side time per step (overlaps the GPU; not\n"
            "# stacked). gpu_idle is the time the GPU waited for the host (host-bound time).\n"
            "# x label config tp batch ctx compute_ms allreduce_ms wait_peers_ms gpu_idle_ms "
            "offset_ms predicted_ms measured_ms error_pct host_ms calibration\n",
            c->what);
    double first_x = 0;
    int prev = -1;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *v = bars[i].v;
        const run_breakdown *b = &v->sim.breakdown;
        if (prev >= 0 && bars[i].config != prev) {
            d->centers[d->n_groups] = (first_x + d->x - 1) / 2, d->group_cfg[d->n_groups++] = prev;
            d->x += 0.8; /* a gap between configs */
        }
        if (bars[i].config != prev) first_x = d->x;
        prev = bars[i].config;
        char lab[128];
        plot_cell_label(c, v->g, lab, sizeof lab);
        fprintf(f, "%g ", d->x);
        plot_dat_str(f, lab);
        fputc(' ', f);
        plot_dat_str(f, v->g->config);
        fprintf(f, " %ld %ld %ld %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.3f %.4f %d\n", v->g->tp,
                v->g->batch, v->g->ctx, 1e3 * b->compute, 1e3 * b->allreduce, 1e3 * b->wait_peers,
                1e3 * b->gpu_idle, 1e3 * b->offset, v->predicted_ms, v->g->measured_ms,
                v->error_pct, 1e3 * b->host, v->calibration);
        double pos = 1e3 * (b->compute + b->allreduce + b->wait_peers + b->gpu_idle);
        d->ymax = fmax(d->ymax, fmax(pos + fmax(0, 1e3 * b->offset), v->g->measured_ms));
        d->ymin = fmin(d->ymin, 1e3 * b->offset);
        if (b->offset != 0) d->any_offset = 1, d->offset = 1e3 * b->offset;
        if (b->wait_peers > 0) d->any_wait = 1;
        if (b->gpu_idle > 0) d->any_idle = 1;
        d->x += 1;
    }
    if (prev >= 0)
        d->centers[d->n_groups] = (first_x + d->x - 1) / 2, d->group_cfg[d->n_groups++] = prev;
    return plot_close(c, f, name);
}

/* the title: what the stack adds up to, with the offset's sign and origin */
static void plot_bd_title(FILE *f, const plot_ctx *c, const plot_bd_fig *d, int offset_fitted)
{
    char title[700], sub[300];
    if (d->any_offset)
        snprintf(sub, sizeof sub,
                 "offset %+.2f ms/step (%s constant; hatched, %s): predicted = stack %s %.2f ms"
                 " · labels: prediction error",
                 d->offset, offset_fitted ? "fitted" : "scenario",
                 d->offset < 0 ? "below zero" : "on top", d->offset < 0 ? "−" : "+",
                 fabs(d->offset));
    else
        snprintf(sub, sizeof sub,
                 "predicted = compute + all-reduce + wait for peers + GPU idle · labels: "
                 "prediction error");
    snprintf(title, sizeof title, "%s: simulated step breakdown vs measured\n%s", c->what, sub);
    fputs("set title ", f);
    plot_qs(f, title);
}

/* a label over each config's group: its held-out MAPE and verdict, in the verdict's colour */
static void plot_bd_group_labels(FILE *f, const val_report *r, const plot_bd_fig *d)
{
    for (int gi = 0; gi < d->n_groups; gi++) {
        const val_config *vc = &r->configs[d->group_cfg[gi]];
        char lab[200];
        if (vc->n_heldout)
            snprintf(lab, sizeof lab, "%s\nheld-out MAPE %.1f%% (%s)", vc->config,
                     vc->heldout_mape_pct, val_verdict_name(vc->verdict));
        else
            snprintf(lab, sizeof lab, "%s\nMAPE %.1f%% (calibration only)", vc->config,
                     vc->mape_pct);
        fprintf(f, "set label %d ", gi + 1);
        plot_qs(f, lab);
        fprintf(f, " at first %g, graph 0.955 center font \",11\" tc rgb \"%s\"\n", d->centers[gi],
                plot_verdict_colour(vc->verdict));
    }
}

/* the plot command: the stacked parts, the offset (hatched), the predicted and measured
 * steps, the error labels */
static void plot_bd_plot_cmd(FILE *f, const plot_bd_fig *d, int offset_fitted)
{
    const char *dat = "'breakdown.dat'";
    fprintf(f,
            "S(a,b,cc,d) = a + b + cc + d\n"
            "top(a,b,cc,d,o) = S(a,b,cc,d) + (o > 0 ? o : 0)\n"
            "plot %s using 1:(0):($1-w):($1+w):(0):($7):xtic(2) with boxxyerror fs solid 1.0 "
            "border lc rgb \"white\" lc rgb \"#4c72b0\" title \"compute\", \\\n"
            "     %s using 1:(0):($1-w):($1+w):($7):($7+$8) with boxxyerror fs solid 1.0 "
            "border lc rgb \"white\" lc rgb \"#dd8452\" title \"all-reduce\"",
            dat, dat);
    fprintf(f, ", \\\n     %s using 1:(0):($1-w):($1+w):($7+$8):($7+$8+$9) with boxxyerror "
               "fs solid 1.0 border lc rgb \"white\" lc rgb \"#55a868\" title %s",
            dat, d->any_wait ? "\"wait for peers\"" : "\"wait for peers (0 here)\"");
    fprintf(f,
            ", \\\n     %s using 1:(0):($1-w):($1+w):($7+$8+$9):(S($7,$8,$9,$10)) with boxxyerror "
            "fs solid 1.0 border lc rgb \"white\" lc rgb \"#a5a5a5\" title %s",
            dat, d->any_idle ? "\"GPU idle (host-bound)\"" : "\"GPU idle, host-bound (0 here)\"");
    if (d->any_offset)
        fprintf(f, ", \\\n     %s using 1:(0):($1-w):($1+w):($11<0 ? $11 : S($7,$8,$9,$10)):"
                   "($11<0 ? 0 : S($7,$8,$9,$10)+$11) with boxxyerror fs pattern 4 border "
                   "lc rgb \"#444444\" lc rgb \"#444444\" title \"offset (%s per-step constant)\"",
                dat, offset_fitted ? "fitted" : "scenario's");
    fprintf(f, ", \\\n     %s using ($1-w-0.06):12:(2*w+0.12):(0) with vectors nohead lw 3.5 "
               "lc rgb \"black\" title \"predicted step\"", dat);
    fprintf(f, ", \\\n     %s using 1:13 with points pt 13 ps 2.4 lc rgb \"#e8112d\" "
               "title \"measured step\"", dat);
    fprintf(f, ", \\\n     %s using 1:13 with points pt 12 ps 2.4 lw 1.2 lc rgb \"black\" notitle",
            dat);
    fprintf(f,
            ", \\\n     %s using 1:((top($7,$8,$9,$10,$11) > $13 ? top($7,$8,$9,$10,$11) : $13) "
            "+ pad):($16 == 1 ? sprintf(\"%%+.1f%%%%\\n(fit cell)\", abs($14) < 0.05 ? 0 : $14) : "
            "sprintf(\"%%+.1f%%%%\", $14)) with labels center offset 0,0.9 font \",9.5\" notitle",
            dat);
    fputc('\n', f);
}

/* breakdown.gp: title, axes, group labels, plot */
static int plot_bd_write_gp(plot_ctx *c, const plot_bd_fig *d)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[2];
    char name[96];
    snprintf(name, sizeof name, "%s.gp", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    int wide = r->n_cells > 12;
    plot_gp_head(f, "validate", fig, "simulated step breakdown per cell, with the measured step",
                 wide ? 1500 : 1200, 760);
    int offset_fitted = 0;
    for (int i = 0; i < r->n_fit; i++)
        if (!strcmp(r->scn.fit_params[i].key, "offset_ms")) offset_fitted = 1;
    plot_bd_title(f, c, d, offset_fitted);
    double span = d->ymax - d->ymin;
    double ylo = d->ymin < 0 ? d->ymin - 0.08 * span : 0, yhi = d->ymax + 0.30 * span;
    fprintf(f, " font \",13\"\n"
               "set ylabel \"time per decode step (ms)\"\n"
               "set xrange [-0.7:%g]\n"
               "set yrange [%g:%g]\n"
               "set grid noxtics ytics\n"
               "set xtics scale 0 %s\n"
               "set xzeroaxis lt -1 lw 1\n"
               "set key below horizontal Left reverse spacing 1.2 width 2 maxrows 2 box "
               "lc rgb \"#bbbbbb\"\n"
               "w = 0.36  # half bar width\n"
               "pad = %g  # label offset above a bar\n",
            d->x - 0.3, ylo, yhi, wide ? "rotate by -35 left" : "", 0.025 * span);
    plot_bd_group_labels(f, r, d);
    plot_bd_plot_cmd(f, d, offset_fitted);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

/* A stacked bar per cell of the simulated step, the offset apart, the measured step on it. */
int plot_breakdown(plot_ctx *c)
{
    const val_report *r = c->r;
    plot_bar *bars = calloc(r->n_cells, sizeof *bars);
    if (!bars) return tp_err_set(c->err, "out of memory");
    for (size_t i = 0; i < r->n_cells; i++)
        bars[i] = (plot_bar){&r->cells[i], plot_config_index(r, r->cells[i].g->config)};
    qsort(bars, r->n_cells, sizeof *bars, plot_bar_cmp);
    plot_bd_fig d = {0};
    int rc = -1;
    if (!plot_bd_write_dat(c, bars, &d)) rc = plot_bd_write_gp(c, &d);
    free(bars);
    return rc;
}
