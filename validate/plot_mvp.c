/* plot_mvp.c: the measured-vs-predicted figure; see plot_impl.h. */
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



static void plot_cell_short(const plot_ctx *c, const grid_cell *g, char *out, size_t n)
{
    if (c->multi_ctx) snprintf(out, n, "b%ld ctx %ld", g->batch, g->ctx);
    else snprintf(out, n, "b%ld", g->batch);
}

static double plot_overlap(double ax, double ay, double aw, double ah, double bx, double by,
                           double bw, double bh)
{
    double ox = fmin(ax + aw, bx + bw) - fmax(ax - aw, bx - bw);
    double oy = fmin(ay + ah, by + bh) - fmax(ay - ah, by - bh);
    return ox > 0 && oy > 0 ? ox * oy : 0;
}

/* Greedy label placement in (approximate) pixels: each cell's label goes to the first of
 * 16 spots round its point that overlaps the fewest points and labels already placed. */
static void plot_place_labels(const plot_ctx *c, double alo, double ahi, double px_span,
                              double *lx, double *ly)
{
    const val_report *r = c->r;
    size_t n = r->n_cells;
    double sc = px_span / (ahi - alo);
    double *hw = calloc(n, sizeof *hw);
    if (!hw) { /* fall back: all to the right */
        for (size_t i = 0; i < n; i++)
            lx[i] = r->cells[i].g->measured_ms + 14 / sc, ly[i] = r->cells[i].predicted_ms;
        return;
    }
    const double lh = 7.5; /* half label height */
    for (size_t i = 0; i < n; i++) {
        const val_cell *v = &r->cells[i];
        char lab[96];
        plot_cell_short(c, v->g, lab, sizeof lab);
        hw[i] = 3.4 * (double)strlen(lab) + 2;
        double px = (v->g->measured_ms - alo) * sc, py = (v->predicted_ms - alo) * sc;
        double rp = v->calibration ? 13 : 8;
        double best = INFINITY, bx = px + rp + hw[i] + 3, by = py;
        static const double dir[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1},
                                         {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
        for (int far = 0; far < 2; far++)
            for (int d = 0; d < 8; d++) {
                double k = far ? 2.2 : 1.0;
                double cx = px + dir[d][0] * k * (rp + hw[i] + 3);
                double cy = py + dir[d][1] * k * (rp + lh + 2);
                double cost = 0.5 * far; /* a small preference for near spots */
                for (size_t j = 0; j < n; j++) {
                    const val_cell *u = &r->cells[j];
                    double ux = (u->g->measured_ms - alo) * sc, uy = (u->predicted_ms - alo) * sc;
                    double ur = u->calibration ? 13 : 8;
                    cost += plot_overlap(cx, cy, hw[i], lh, ux, uy, ur, ur);
                    if (j < i) {
                        double jx = (lx[j] - alo) * sc, jy = (ly[j] - alo) * sc;
                        cost += plot_overlap(cx, cy, hw[i], lh, jx, jy, hw[j], lh);
                    }
                }
                if (cx - hw[i] < 0 || cx + hw[i] > px_span || cy - lh < 0 || cy + lh > px_span)
                    cost += 1e6;
                if (cost < best) best = cost, bx = cx, by = cy;
            }
        lx[i] = alo + bx / sc;
        ly[i] = alo + by / sc;
    }
    free(hw);
}

/* What the measured-vs-predicted .dat and .gp share: the cells of each config on either
 * side of the fit, and the axis range (the same on both axes). */
typedef struct plot_mvp_fig {
    int n_cal[VAL_MAX_CONFIGS], n_held[VAL_MAX_CONFIGS], n_unused[VAL_MAX_CONFIGS];
    double alo, ahi;
} plot_mvp_fig;

/* count each config's calibration and held-out cells; an axis range holding every point */
static void plot_mvp_axes(const val_report *r, plot_mvp_fig *d)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *v = &r->cells[i];
        int k = plot_config_index(r, v->g->config);
        if (k < r->n_configs) { /* by role: a cell no fold fits on or judges is neither */
            if (v->role == VAL_CALIBRATION) d->n_cal[k]++;
            else if (v->role == VAL_HELDOUT) d->n_held[k]++;
            else d->n_unused[k]++;
        }
        lo = fmin(lo, fmin(v->g->measured_ms, v->predicted_ms));
        hi = fmax(hi, fmax(v->g->measured_ms, v->predicted_ms));
    }
    /* room round the points, and at least +-10% of the largest step, so the band's edges show */
    double pad = fmax(0.12 * (hi - lo), 0.10 * fabs(hi));
    if (!(pad > 0)) pad = 1;
    double span = hi - lo + 2 * pad, step = span > 80 ? 20 : span > 40 ? 10 : span > 8 ? 5 : 1;
    d->alo = fmax(0, plot_nice_floor(lo - pad, step));
    d->ahi = plot_nice_ceil(hi + pad, step);
    if (d->ahi <= d->alo) d->ahi = d->alo + step;
}

/* measured_vs_predicted.dat: a block per config, each cell with its label's place */
static int plot_mvp_write_dat(plot_ctx *c, const double *lx, const double *ly)
{
    const val_report *r = c->r;
    char name[96];
    snprintf(name, sizeof name, "%s.dat", plot_figures[0]);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    fprintf(f, "# %s: one block (gnuplot index) per config, in the order of the key.\n"
               "# measured_ms predicted_ms batch ctx role error_pct label label_x label_y\n"
               "# (role: 0 held out, 1 calibration (fitted on), 2 unused: neither fitted on nor "
               "judged)\n",
            c->what);
    for (int k = 0; k < r->n_configs; k++) {
        fprintf(f, "%s# index %d: ", k ? "\n\n" : "", k);
        plot_dat_str(f, r->configs[k].config);
        fputc('\n', f);
        for (size_t i = 0; i < r->n_cells; i++) {
            const val_cell *v = &r->cells[i];
            if (strcmp(v->g->config, r->configs[k].config)) continue;
            char lab[96];
            plot_cell_short(c, v->g, lab, sizeof lab);
            fprintf(f, "%.4f %.4f %ld %ld %d %.3f ", v->g->measured_ms, v->predicted_ms,
                    v->g->batch, v->g->ctx,
                    v->role == VAL_HELDOUT ? 0 : v->role == VAL_CALIBRATION ? 1 : 2, v->error_pct);
            plot_dat_str(f, lab);
            fprintf(f, " %.4f %.4f\n", lx[i], ly[i]);
        }
    }
    return plot_close(c, f, name);
}

/* the plot command: the kill-switch band, y = x, then per config its held-out points,
 * calibration points and labels */
static void plot_mvp_plot_cmd(FILE *f, const val_report *r, const plot_mvp_fig *d)
{
    const char *fig = plot_figures[0];
    fprintf(f,
            "plot '+' using 1:($1*(1-ks)):($1*(1+ks)) with filledcurves fc rgb \"#dbe8f6\" "
            "fs solid 1.0 noborder title sprintf(\"±%%g%%%% kill-switch band\", 100*ks), \\\n"
            "     x with lines lc rgb \"#333333\" dt 2 lw 1.5 title \"y = x (exact prediction)\"");
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *vc = &r->configs[k];
        const char *col = plot_palette[k % PLOT_N_PALETTE];
        char key[200];
        if (d->n_held[k]) { /* the MAPE of the held-out cells alone */
            snprintf(key, sizeof key, "%s held-out: MAPE %.1f%%, %s", vc->config,
                     vc->heldout_mape_pct, val_verdict_name(vc->verdict));
            fprintf(f,
                    ", \\\n     '%s.dat' index %d using 1:($5==0?$2:1/0) with points pt 7 ps 1.7 "
                    "lc rgb \"%s\" title ",
                    fig, k, col);
            plot_qs(f, key);
        }
        if (d->n_cal[k]) {
            if (d->n_held[k])
                snprintf(key, sizeof key, "%s calibration cell (fitted on)", vc->config);
            else snprintf(key, sizeof key, "%s calibration cells (fitted on, not judged)",
                          vc->config);
            fprintf(f,
                    ", \\\n     '%s.dat' index %d using 1:($5==1?$2:1/0) with points pt 13 ps 3.0 "
                    "lc rgb \"%s\" title ",
                    fig, k, col);
            plot_qs(f, key);
            fprintf(f,
                    ", \\\n     '%s.dat' index %d using 1:($5==1?$2:1/0) with points pt 12 ps 3.0 "
                    "lw 1.5 lc rgb \"black\" notitle",
                    fig, k);
        }
        if (d->n_unused[k]) {
            snprintf(key, sizeof key, "%s unused cells (neither fitted on nor judged)", vc->config);
            fprintf(f,
                    ", \\\n     '%s.dat' index %d using 1:($5==2?$2:1/0) with points pt 6 ps 1.5 "
                    "lc rgb \"%s\" title ",
                    fig, k, col);
            plot_qs(f, key);
        }
        fprintf(f, ", \\\n     '%s.dat' index %d using 8:9:7 with labels center font \",9\" "
                   "tc rgb \"%s\" notitle", fig, k, col);
    }
    fputc('\n', f);
}

/* measured_vs_predicted.gp: title with the fit and kill-switch, square axes, the plot */
static int plot_mvp_write_gp(plot_ctx *c, const plot_mvp_fig *d)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[0];
    char name[96];
    snprintf(name, sizeof name, "%s.gp", fig);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    plot_gp_head(f, "validate", fig,
                 "measured vs predicted decode step per cell (the study's figure b)",
                 900, 900);
    char title[700], fit[300]; /* what (256) + fit + the kill-switch line */
    plot_fit_note(c, fit, sizeof fit);
    snprintf(title, sizeof title,
             "%s: measured vs predicted decode step\n"
             "%s\nkill switch: held-out MAPE ≤ %g%% per config",
             c->what, fit, r->kill_switch_pct);
    fputs("set title ", f);
    plot_qs(f, title);
    fprintf(f, " font \",13\"\n"
               "set xlabel \"measured step (ms)\"\n"
               "set ylabel \"predicted step (ms)\"\n"
               "set size ratio -1\n"
               "set xrange [%g:%g]\nset yrange [%g:%g]\n"
               "set key inside left top vertical Left reverse spacing 1.3 opaque box "
               "lc rgb \"#bbbbbb\" width 1\n"
               "set samples 200\n"
               "ks = %.6g / 100.0\n",
            d->alo, d->ahi, d->alo, d->ahi, r->kill_switch_pct);
    plot_mvp_plot_cmd(f, r, d);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

/* (b) measured vs predicted, one point per cell, with y = x and the kill-switch band. */
int plot_measured_vs_predicted(plot_ctx *c)
{
    const val_report *r = c->r;
    plot_mvp_fig d = {0};
    plot_mvp_axes(r, &d);
    double *lx = calloc(r->n_cells, sizeof *lx), *ly = calloc(r->n_cells, sizeof *ly);
    if (!lx || !ly) {
        free(lx);
        free(ly);
        return tp_err_set(c->err, "out of memory");
    }
    plot_place_labels(c, d.alo, d.ahi, 760, lx, ly);
    int rc = plot_mvp_write_dat(c, lx, ly);
    free(lx);
    free(ly);
    if (rc) return -1;
    return plot_mvp_write_gp(c, &d);
}
