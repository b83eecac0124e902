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
int plot_step_vs_tp(plot_ctx *c)
{
    static const int pt_fill[] = {7, 5, 9, 13, 11, 15}, pt_open[] = {6, 4, 8, 12, 10, 14};
    static const char *const col_meas = "#d62728", *const col_sim = "#1f77b4",
                             *const col_ideal = "#7f7f7f";
    const val_report *r = c->r;
    const char *fig = plot_figures[1];
    size_t n = r->n_cells;
    plot_series *ser = calloc(n, sizeof *ser);
    const val_cell **cells = calloc(n, sizeof *cells);
    long *tps = calloc(n, sizeof *tps);
    double *sum = calloc(3 * n, sizeof *sum); /* per tp: measured, simulated, ideal */
    int *cnt = calloc(n, sizeof *cnt);
    size_t n_ser = 0, n_tp = 0;
    FILE *f = NULL;
    int rc = -1;
    if (!ser || !cells || !tps || !sum || !cnt) {
        tp_err_set(c->err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const grid_cell *g = r->cells[i].g;
        size_t s = 0, t = 0;
        while (s < n_ser && !(ser[s].batch == g->batch && ser[s].ctx == g->ctx)) s++;
        if (s == n_ser) ser[n_ser++] = (plot_series){g->batch, g->ctx};
        while (t < n_tp && tps[t] != g->tp) t++;
        if (t == n_tp) tps[n_tp++] = g->tp;
    }
    qsort(ser, n_ser, sizeof *ser, plot_series_cmp);
    qsort(tps, n_tp, sizeof *tps, plot_long_cmp);
    long tp_lo = tps[0], tp_hi = tps[n_tp - 1];

    char name[96];
    snprintf(name, sizeof name, "%s.dat", fig);
    if (!(f = plot_open(c, name))) goto out;
    fprintf(f, "# %s: one block (gnuplot index) per batch/ctx series, sorted by tp.\n"
               "# ideal_ms = measured step at the series' lowest tp * that tp / tp (ideal 1/k)\n"
               "# tp measured_ms predicted_ms ideal_ms config\n",
            c->what);
    double ymax = 0;
    for (size_t s = 0; s < n_ser; s++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (r->cells[i].g->batch == ser[s].batch && r->cells[i].g->ctx == ser[s].ctx)
                cells[m++] = &r->cells[i];
        qsort(cells, m, sizeof *cells, plot_tp_cmp);
        fprintf(f, "%s# index %zu: batch %ld ctx %ld\n", s ? "\n\n" : "", s, ser[s].batch, ser[s].ctx);
        double k0 = (double)cells[0]->g->tp, m0 = cells[0]->g->measured_ms;
        for (size_t i = 0; i < m; i++) {
            const val_cell *v = cells[i];
            double ideal = m0 * k0 / (double)v->g->tp;
            fprintf(f, "%ld %.4f %.4f %.4f ", v->g->tp, v->g->measured_ms, v->predicted_ms, ideal);
            plot_dat_str(f, v->g->config);
            fputc('\n', f);
            size_t t = 0;
            while (tps[t] != v->g->tp) t++;
            sum[3 * t] += v->g->measured_ms, sum[3 * t + 1] += v->predicted_ms;
            sum[3 * t + 2] += ideal, cnt[t]++;
            ymax = fmax(ymax, fmax(v->g->measured_ms, v->predicted_ms));
        }
    }
    if (plot_close(c, f, name)) {
        f = NULL;
        goto out;
    }

    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) goto out;
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
    double xlo = (double)tp_lo / 2.2, xhi = (double)tp_hi * 2.2;
    double yhi = plot_nice_ceil(ymax * 1.12, 5);
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
    for (size_t t = 0; t < n_tp; t++) fprintf(f, "%s\"TP-%ld\" %ld", t ? ", " : "", tps[t], tps[t]);
    fputs(")\n", f);
    /* the mean of each kind at the lowest and highest TP, spread so the labels don't touch */
    for (int end = 0; end < 2 && n_tp > 0; end++) {
        size_t t = end ? n_tp - 1 : 0;
        if (end && n_tp == 1) break;
        static const char *const kind[] = {"measured", "simulated", "ideal"};
        const char *cols[] = {col_meas, col_sim, col_ideal};
        int order[3] = {0, 1, 2};
        double v[3], y[3];
        for (int k = 0; k < 3; k++) v[k] = sum[3 * t + (size_t)k] / cnt[t];
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
                    end ? (double)tps[t] * 1.1 : (double)tps[t] / 1.1, y[i],
                    end ? "left" : "right", cols[k]);
        }
    }
    fputs("plot \\\n", f);
    for (size_t s = 0; s < n_ser; s++) {
        int pf = pt_fill[s % 6], po = pt_open[s % 6];
        fprintf(f, "     '%s.dat' index %zu using 1:4 with lines lw 1.5 dt 2 lc rgb \"%s\" notitle, \\\n"
                   "     '%s.dat' index %zu using 1:3 with linespoints lw 2 dt 4 pt %d ps 1.4 "
                   "lc rgb \"%s\" notitle, \\\n"
                   "     '%s.dat' index %zu using 1:2 with linespoints lw 2.5 pt %d ps 1.4 "
                   "lc rgb \"%s\" notitle, \\\n",
                fig, s, col_ideal, fig, s, po, col_sim, fig, s, pf, col_meas);
    }
    /* the key: kinds by colour and line, batches by point shape */
    fprintf(f, "     1/0 with linespoints lw 2.5 pt 7 ps 1.4 lc rgb \"%s\" title \"measured\", \\\n"
               "     1/0 with linespoints lw 2 dt 4 pt 6 ps 1.4 lc rgb \"%s\" title ",
            col_meas, col_sim);
    char key[160];
    snprintf(key, sizeof key, "simulated (%s)", r->scn.name);
    plot_qs(f, key);
    fprintf(f, ", \\\n     1/0 with lines lw 1.5 dt 2 lc rgb \"%s\" "
               "title \"ideal 1/k from the lowest TP's measured step\"",
            col_ideal);
    for (size_t s = 0; s < n_ser; s++) {
        snprintf(key, sizeof key, "batch %ld", ser[s].batch);
        if (c->multi_ctx) snprintf(key + strlen(key), sizeof key - strlen(key), ", ctx %ld", ser[s].ctx);
        fprintf(f, ", \\\n     1/0 with points pt %d ps 1.4 lc rgb \"black\" title ", pt_fill[s % 6]);
        plot_qs(f, key);
    }
    fputc('\n', f);
    plot_gp_tail(f, fig);
    rc = plot_close(c, f, name);
    f = NULL;
out:
    if (f) fclose(f);
    free(ser);
    free(cells);
    free(tps);
    free(sum);
    free(cnt);
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

/* A stacked bar per cell of the simulated step, the offset apart, the measured step on it. */
int plot_breakdown(plot_ctx *c)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[2];
    plot_bar *bars = calloc(r->n_cells, sizeof *bars);
    FILE *f = NULL;
    int rc = -1;
    if (!bars) return tp_err_set(c->err, "out of memory");
    for (size_t i = 0; i < r->n_cells; i++)
        bars[i] = (plot_bar){&r->cells[i], plot_config_index(r, r->cells[i].g->config)};
    qsort(bars, r->n_cells, sizeof *bars, plot_bar_cmp);

    char name[96];
    snprintf(name, sizeof name, "%s.dat", fig);
    if (!(f = plot_open(c, name))) goto out;
    fprintf(f, "# %s: the simulated step of each cell, split as run_breakdown (ms per step,\n"
               "# mean over measured steps and ranks): compute + allreduce + wait_peers + gpu_idle\n"
               "# + offset = predicted. host is the host-side time per step (overlaps the GPU; not\n"
               "# stacked). gpu_idle is the time the GPU waited for the host (host-bound time).\n"
               "# x label config tp batch ctx compute_ms allreduce_ms wait_peers_ms gpu_idle_ms "
               "offset_ms predicted_ms measured_ms error_pct host_ms calibration\n",
            c->what);
    double x = 0, ymax = 0, ymin = 0, offset = 0;
    int any_offset = 0, any_wait = 0, any_idle = 0, prev = -1;
    double centers[VAL_MAX_CONFIGS + 1], first_x = 0;
    int n_groups = 0, group_cfg[VAL_MAX_CONFIGS + 1];
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *v = bars[i].v;
        const run_breakdown *b = &v->sim.breakdown;
        if (prev >= 0 && bars[i].config != prev) {
            centers[n_groups] = (first_x + x - 1) / 2, group_cfg[n_groups++] = prev;
            x += 0.8; /* a gap between configs */
        }
        if (bars[i].config != prev) first_x = x;
        prev = bars[i].config;
        char lab[128];
        plot_cell_label(c, v->g, lab, sizeof lab);
        fprintf(f, "%g ", x);
        plot_dat_str(f, lab);
        fputc(' ', f);
        plot_dat_str(f, v->g->config);
        fprintf(f, " %ld %ld %ld %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.3f %.4f %d\n", v->g->tp,
                v->g->batch, v->g->ctx, 1e3 * b->compute, 1e3 * b->allreduce, 1e3 * b->wait_peers,
                1e3 * b->gpu_idle, 1e3 * b->offset, v->predicted_ms, v->g->measured_ms,
                v->error_pct, 1e3 * b->host, v->calibration);
        double pos = 1e3 * (b->compute + b->allreduce + b->wait_peers + b->gpu_idle);
        ymax = fmax(ymax, fmax(pos + fmax(0, 1e3 * b->offset), v->g->measured_ms));
        ymin = fmin(ymin, 1e3 * b->offset);
        if (b->offset != 0) any_offset = 1, offset = 1e3 * b->offset;
        if (b->wait_peers > 0) any_wait = 1;
        if (b->gpu_idle > 0) any_idle = 1;
        x += 1;
    }
    if (prev >= 0) centers[n_groups] = (first_x + x - 1) / 2, group_cfg[n_groups++] = prev;
    if (plot_close(c, f, name)) {
        f = NULL;
        goto out;
    }

    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) goto out;
    int wide = r->n_cells > 12;
    plot_gp_head(f, "validate", fig, "simulated step breakdown per cell, with the measured step",
                 wide ? 1500 : 1200, 760);
    char title[700], sub[300];
    int offset_fitted = 0;
    for (int i = 0; i < r->n_fit; i++)
        if (!strcmp(r->scn.fit_params[i].key, "offset_ms")) offset_fitted = 1;
    if (any_offset)
        snprintf(sub, sizeof sub,
                 "offset %+.2f ms/step (%s constant; hatched, %s): predicted = stack %s %.2f ms"
                 " · labels: prediction error",
                 offset, offset_fitted ? "fitted" : "scenario", offset < 0 ? "below zero" : "on top",
                 offset < 0 ? "−" : "+", fabs(offset));
    else
        snprintf(sub, sizeof sub,
                 "predicted = compute + all-reduce + wait for peers + GPU idle · labels: "
                 "prediction error");
    snprintf(title, sizeof title, "%s: simulated step breakdown vs measured\n%s", c->what, sub);
    fputs("set title ", f);
    plot_qs(f, title);
    double span = ymax - ymin;
    double ylo = ymin < 0 ? ymin - 0.08 * span : 0, yhi = ymax + 0.30 * span;
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
            x - 0.3, ylo, yhi, wide ? "rotate by -35 left" : "", 0.025 * span);
    for (int gi = 0; gi < n_groups; gi++) {
        const val_config *vc = &r->configs[group_cfg[gi]];
        char lab[200];
        if (vc->n_heldout)
            snprintf(lab, sizeof lab, "%s\nheld-out MAPE %.1f%% (%s)", vc->config,
                     vc->heldout_mape_pct, val_verdict_name(vc->verdict));
        else
            snprintf(lab, sizeof lab, "%s\nMAPE %.1f%% (calibration only)", vc->config, vc->mape_pct);
        fprintf(f, "set label %d ", gi + 1);
        plot_qs(f, lab);
        fprintf(f, " at first %g, graph 0.955 center font \",11\" tc rgb \"%s\"\n", centers[gi],
                plot_verdict_colour(vc->verdict));
    }
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
            dat, any_wait ? "\"wait for peers\"" : "\"wait for peers (0 here)\"");
    fprintf(f, ", \\\n     %s using 1:(0):($1-w):($1+w):($7+$8+$9):(S($7,$8,$9,$10)) with boxxyerror "
               "fs solid 1.0 border lc rgb \"white\" lc rgb \"#a5a5a5\" title %s",
            dat, any_idle ? "\"GPU idle (host-bound)\"" : "\"GPU idle, host-bound (0 here)\"");
    if (any_offset)
        fprintf(f, ", \\\n     %s using 1:(0):($1-w):($1+w):($11<0 ? $11 : S($7,$8,$9,$10)):"
                   "($11<0 ? 0 : S($7,$8,$9,$10)+$11) with boxxyerror fs pattern 4 border "
                   "lc rgb \"#444444\" lc rgb \"#444444\" title \"offset (%s per-step constant)\"",
                dat, offset_fitted ? "fitted" : "scenario's");
    fprintf(f, ", \\\n     %s using ($1-w-0.06):12:(2*w+0.12):(0) with vectors nohead lw 3.5 "
               "lc rgb \"black\" title \"predicted step\"", dat);
    fprintf(f, ", \\\n     %s using 1:13 with points pt 13 ps 2.4 lc rgb \"#e8112d\" "
               "title \"measured step\"", dat);
    fprintf(f, ", \\\n     %s using 1:13 with points pt 12 ps 2.4 lw 1.2 lc rgb \"black\" notitle", dat);
    fprintf(f, ", \\\n     %s using 1:((top($7,$8,$9,$10,$11) > $13 ? top($7,$8,$9,$10,$11) : $13) "
               "+ pad):($16 == 1 ? sprintf(\"%%+.1f%%%%\\n(fit cell)\", abs($14) < 0.05 ? 0 : $14) : "
               "sprintf(\"%%+.1f%%%%\", $14)) with labels center offset 0,0.9 font \",9.5\" notitle", dat);
    fputc('\n', f);
    plot_gp_tail(f, fig);
    rc = plot_close(c, f, name);
    f = NULL;
out:
    if (f) fclose(f);
    free(bars);
    return rc;
}

