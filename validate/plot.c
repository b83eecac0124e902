/* plot.c: see plot.h.
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

#define PLOT_PATH_MAX 1024
#define PLOT_TIMEOUT_S 60
#define PLOT_LOG "gnuplot.log"

static const char *const plot_figures[] = {"measured_vs_predicted", "step_vs_tp", "breakdown"};
#define PLOT_N_FIGURES 3

/* Tableau 10: distinct on white, and readable by most colour-blind viewers in this order. */
static const char *const plot_palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                           "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                           "#bcbd22", "#17becf"};
#define PLOT_N_PALETTE 10

typedef struct plot_ctx {
    const val_report *r;
    const char *dir;
    char stage[PLOT_PATH_MAX];
    char what[256];     /* "SCENARIO vs GRID (N cells)" */
    char grid_name[128];
    int multi_ctx;      /* the grid has more than one ctx: labels name it */
    int tp_unique;      /* every config has its own tp: labels say "TP-K" */
    tp_err *err;
    int guard[1 + 4 * PLOT_N_FIGURES + 1]; /* signal-guard slots: the stage, its files, the log */
    int n_guard;
} plot_ctx;

/* ---------------------------------------------------------------- strings ---------- */

/* A gnuplot double-quoted string literal. */
static void plot_qs(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f), fputc(*s, f);
        else if (*s == '\n') fputs("\\n", f);
        else if (*s == '\r' || *s == '\t') fputc(' ', f);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* A data-file string column: double-quoted, no quotes or newlines inside. */
static void plot_dat_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
    fputc('"', f);
}

static void plot_grid_name(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!base[0]) base = "grid";
    size_t len = strlen(base);
    if (len >= n) len = n - 1;
    memcpy(out, base, len);
    out[len] = '\0';
    if (len > 4 && !strcmp(out + len - 4, ".csv")) out[len - 4] = '\0';
}

/* "TP-2 b1" (or "H100 TP-2 b1" when configs share a tp), " ctx 2048" when ctx varies. */
static void plot_cell_label(const plot_ctx *c, const grid_cell *g, char *out, size_t n)
{
    char ctx[32] = "";
    if (c->multi_ctx) snprintf(ctx, sizeof ctx, " ctx %ld", g->ctx);
    if (c->tp_unique) snprintf(out, n, "TP-%ld b%ld%s", g->tp, g->batch, ctx);
    else snprintf(out, n, "%s b%ld%s", g->config, g->batch, ctx);
}

static int plot_config_index(const val_report *r, const char *config)
{
    for (int i = 0; i < r->n_configs; i++)
        if (!strcmp(r->configs[i].config, config)) return i;
    return r->n_configs;
}

/* "offset_ms = -3.300" for each fitted parameter, and the calibration cells. */
static void plot_fit_note(const plot_ctx *c, char *out, size_t n)
{
    const val_report *r = c->r;
    size_t used = 0;
    out[0] = '\0';
    if (r->n_fit == 0) {
        snprintf(out, n, "no free parameters (nothing fitted)");
        return;
    }
    used += (size_t)snprintf(out + used, n - used, "fitted ");
    for (int i = 0; i < r->n_fit && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s = %.3f", i ? ", " : "",
                                 r->scn.fit_params[i].key, r->fitted[i]);
    int first = 1;
    for (size_t i = 0; i < r->n_cells && used < n; i++) {
        if (!r->cells[i].calibration) continue;
        char lab[96];
        plot_cell_label(c, r->cells[i].g, lab, sizeof lab);
        used += (size_t)snprintf(out + used, n - used, "%s%s", first ? " on " : ", ", lab);
        first = 0;
    }
}

/* -------------------------------------------------------------- files ------------ */

static FILE *plot_open(plot_ctx *c, const char *name)
{
    char path[PLOT_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", c->stage, name);
    FILE *f = fopen(path, "w");
    if (!f) tp_err_set(c->err, "plot: %s/%s: cannot create: %s", c->dir, name, strerror(errno));
    return f;
}

static int plot_close(plot_ctx *c, FILE *f, const char *name)
{
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) return tp_err_set(c->err, "plot: %s/%s: write failed", c->dir, name);
    return 0;
}

/* mkdir -p */
static int plot_mkdirs(const char *dir, tp_err *err)
{
    char p[PLOT_PATH_MAX];
    if (!dir[0]) return tp_err_set(err, "plot: empty output directory name");
    if (strlen(dir) >= sizeof p) return tp_err_set(err, "plot: %s: path too long", dir);
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return tp_err_set(err, "plot: %s: cannot create directory: %s", p, strerror(errno));
        *s = keep;
        if (!keep) break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tp_err_set(err, "plot: %s: not a directory", dir);
    return 0;
}

static void plot_remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[PLOT_PATH_MAX + 300];
            snprintf(p, sizeof p, "%s/%s", stage, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(stage);
}

/* The gnuplot executable on PATH (as execvp would search it), or -1. */
static int plot_find_gnuplot(char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) snprintf(out, n, "./gnuplot");
        else snprintf(out, n, "%.*s/gnuplot", (int)len, p);
        struct stat sb;
        if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0) return 0;
        if (!end) break;
        p = end + 1;
    }
    return -1;
}

/* The last meaningful line gnuplot printed (its error), or "". */
static void plot_log_line(const char *stage, char *out, size_t n)
{
    char p[PLOT_PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/%s", stage, PLOT_LOG);
    out[0] = '\0';
    FILE *f = fopen(p, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *s = line, *e = line + strlen(line);
        while (*s == ' ' || *s == '\t') s++;
        while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) *--e = 0;
        if (!*s || strspn(s, "^ ") == strlen(s)) continue; /* blank, or gnuplot's caret line */
        snprintf(out, n, "%s", s);
    }
    fclose(f);
}

/* Run `gnuplot NAME.gp` in the staging directory, with a bounded wait. */
static int plot_run_gnuplot(plot_ctx *c, const char *gnuplot, const char *fig)
{
    char script[96];
    snprintf(script, sizeof script, "%s.gp", fig);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return tp_err_set(c->err, "plot: cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(c->stage) != 0) _exit(126);
        int in = open("/dev/null", O_RDONLY);
        int log = open(PLOT_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || log < 0) _exit(126);
        dup2(in, 0);
        dup2(log, 1);
        dup2(log, 2);
        close(in);
        close(log);
        char *argv[] = {(char *)"gnuplot", script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    int status = 0;
    struct timespec tick = {0, 10 * 1000 * 1000};
    long waited_ms = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return tp_err_set(c->err, "plot: waiting for gnuplot: %s", strerror(errno));
        if (waited_ms >= PLOT_TIMEOUT_S * 1000L) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return tp_err_set(c->err, "plot: gnuplot did not finish %s within %d s; killed it",
                              script, PLOT_TIMEOUT_S);
        }
        nanosleep(&tick, NULL);
        waited_ms += 10;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char msg[400];
    plot_log_line(c->stage, msg, sizeof msg);
    if (WIFSIGNALED(status))
        return tp_err_set(c->err, "plot: gnuplot was killed by signal %d drawing %s%s%s",
                          WTERMSIG(status), script, msg[0] ? ": " : "", msg);
    if (WEXITSTATUS(status) == 127 && !msg[0])
        return tp_err_set(c->err, "plot: cannot run %s; install gnuplot-nox", gnuplot);
    return tp_err_set(c->err, "plot: gnuplot failed drawing %s/%s: %s", c->dir, fig,
                      msg[0] ? msg : "no message");
}

/* ------------------------------------------------------------- scripts ------------ */

static void plot_gp_head(FILE *f, const char *fig, const char *about, int w, int h)
{
    fprintf(f,
            "# %s.gp: %s\n"
            "# Written by tpsim (sim/plot.c) with %s.dat. Re-draw or restyle in this directory:\n"
            "#   gnuplot %s.gp\n"
            "set encoding utf8\n"
            "W = %d; H = %d\n"
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "    set terminal pngcairo size W,H noenhanced font \"DejaVu Sans,11\" "
            "background rgb \"white\"\n"
            "} else {\n"
            "    set terminal png size W,H noenhanced background rgb \"white\"\n"
            "}\n"
            "set output \"%s.png\"\n"
            "set border lw 1.2\n"
            "set grid back lt 1 lc rgb \"#e3e3e3\" lw 1\n"
            "set tics nomirror out\n",
            fig, about, fig, fig, w, h, fig);
}

static void plot_gp_tail(FILE *f, const char *fig)
{
    fprintf(f,
            "set output\n"
            "set terminal svg size W,H dynamic noenhanced font \"DejaVu Sans,11\" "
            "background rgb \"white\"\n"
            "set output \"%s.svg\"\n"
            "replot\n"
            "set output\n",
            fig);
}

static double plot_nice_floor(double x, double step) { return step * floor(x / step); }
static double plot_nice_ceil(double x, double step) { return step * ceil(x / step); }

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

/* (b) measured vs predicted, one point per cell, with y = x and the kill-switch band. */
static int plot_measured_vs_predicted(plot_ctx *c)
{
    const val_report *r = c->r;
    const char *fig = plot_figures[0];
    double lo = INFINITY, hi = -INFINITY;
    int n_cal[VAL_MAX_CONFIGS] = {0}, n_held[VAL_MAX_CONFIGS] = {0};
    for (size_t i = 0; i < r->n_cells; i++) {
        const val_cell *v = &r->cells[i];
        int k = plot_config_index(r, v->g->config);
        if (k < r->n_configs) {
            if (v->calibration) n_cal[k]++;
            else n_held[k]++;
        }
        lo = fmin(lo, fmin(v->g->measured_ms, v->predicted_ms));
        hi = fmax(hi, fmax(v->g->measured_ms, v->predicted_ms));
    }
    /* room round the points, and at least +-10% of the largest step, so the band's edges show */
    double pad = fmax(0.12 * (hi - lo), 0.10 * fabs(hi));
    if (!(pad > 0)) pad = 1;
    double span = hi - lo + 2 * pad, step = span > 80 ? 20 : span > 40 ? 10 : span > 8 ? 5 : 1;
    double alo = fmax(0, plot_nice_floor(lo - pad, step));
    double ahi = plot_nice_ceil(hi + pad, step);
    if (ahi <= alo) ahi = alo + step;

    double *lx = calloc(r->n_cells, sizeof *lx), *ly = calloc(r->n_cells, sizeof *ly);
    if (!lx || !ly) {
        free(lx);
        free(ly);
        return tp_err_set(c->err, "out of memory");
    }
    plot_place_labels(c, alo, ahi, 760, lx, ly);
    char name[96];
    snprintf(name, sizeof name, "%s.dat", fig);
    FILE *f = plot_open(c, name);
    if (!f) {
        free(lx);
        free(ly);
        return -1;
    }
    fprintf(f, "# %s: one block (gnuplot index) per config, in the order of the key.\n"
               "# measured_ms predicted_ms batch ctx calibration error_pct label label_x label_y\n",
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
                    v->g->batch, v->g->ctx, v->calibration, v->error_pct);
            plot_dat_str(f, lab);
            fprintf(f, " %.4f %.4f\n", lx[i], ly[i]);
        }
    }
    free(lx);
    free(ly);
    if (plot_close(c, f, name)) return -1;

    snprintf(name, sizeof name, "%s.gp", fig);
    if (!(f = plot_open(c, name))) return -1;
    plot_gp_head(f, fig, "measured vs predicted decode step per cell (the study's figure b)",
                 900, 900);
    char title[600], fit[300];
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
            alo, ahi, alo, ahi, r->kill_switch_pct);
    fprintf(f, "plot '+' using 1:($1*(1-ks)):($1*(1+ks)) with filledcurves fc rgb \"#dbe8f6\" "
               "fs solid 1.0 noborder title sprintf(\"±%%g%%%% kill-switch band\", 100*ks), \\\n"
               "     x with lines lc rgb \"#333333\" dt 2 lw 1.5 title \"y = x (exact prediction)\"");
    for (int k = 0; k < r->n_configs; k++) {
        const val_config *vc = &r->configs[k];
        const char *col = plot_palette[k % PLOT_N_PALETTE];
        char key[200];
        double m = vc->n_heldout ? vc->heldout_mape_pct : vc->mape_pct;
        if (n_held[k]) {
            snprintf(key, sizeof key, "%s held-out: MAPE %.1f%%, %s", vc->config, m,
                     vc->pass ? "pass" : "FAIL");
            fprintf(f, ", \\\n     '%s.dat' index %d using 1:($5==0?$2:1/0) with points pt 7 ps 1.7 "
                       "lc rgb \"%s\" title ", fig, k, col);
            plot_qs(f, key);
        }
        if (n_cal[k]) {
            if (n_held[k]) snprintf(key, sizeof key, "%s calibration cell (fitted on)", vc->config);
            else snprintf(key, sizeof key, "%s calibration cells: MAPE %.1f%% (all fitted on)",
                          vc->config, vc->mape_pct);
            fprintf(f, ", \\\n     '%s.dat' index %d using 1:($5==1?$2:1/0) with points pt 13 ps 3.0 "
                       "lc rgb \"%s\" title ", fig, k, col);
            plot_qs(f, key);
            fprintf(f, ", \\\n     '%s.dat' index %d using 1:($5==1?$2:1/0) with points pt 12 ps 3.0 "
                       "lw 1.5 lc rgb \"black\" notitle", fig, k);
        }
        fprintf(f, ", \\\n     '%s.dat' index %d using 8:9:7 with labels center font \",9\" "
                   "tc rgb \"%s\" notitle", fig, k, col);
    }
    fputc('\n', f);
    plot_gp_tail(f, fig);
    return plot_close(c, f, name);
}

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
static int plot_step_vs_tp(plot_ctx *c)
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
    plot_gp_head(f, fig, "decode step vs TP degree per batch (the study's figure c)", 1100, 760);
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
static int plot_breakdown(plot_ctx *c)
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
    plot_gp_head(f, fig, "simulated step breakdown per cell, with the measured step",
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
                     vc->heldout_mape_pct, vc->pass ? "pass" : "FAIL");
        else
            snprintf(lab, sizeof lab, "%s\nMAPE %.1f%% (calibration only)", vc->config, vc->mape_pct);
        fprintf(f, "set label %d ", gi + 1);
        plot_qs(f, lab);
        fprintf(f, " at first %g, graph 0.955 center font \",11\" tc rgb \"%s\"\n", centers[gi],
                vc->pass ? "#1a7f37" : "#b00020");
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

/* ------------------------------------------------------------- driver ------------- */

/* Every file of the set is checked in the staging directory before any is moved: a figure
 * gnuplot did not write fails the whole set, and the old figures stay as they were, never
 * mixed with new ones. Then the set is moved in, each by rename(2) in the same directory. */
static int plot_install(plot_ctx *c)
{
    static const char *const ext[] = {"dat", "gp", "png", "svg"};
    for (int e = 2; e < 4; e++)
        for (int i = 0; i < PLOT_N_FIGURES; i++) {
            char from[PLOT_PATH_MAX + 64];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, plot_figures[i], ext[e]);
            struct stat sb;
            if (stat(from, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0)
                return tp_err_set(c->err, "plot: gnuplot wrote no %s.%s; the figures in %s are "
                                          "unchanged", plot_figures[i], ext[e], c->dir);
        }
    for (int e = 0; e < 4; e++)
        for (int i = 0; i < PLOT_N_FIGURES; i++) {
            char from[PLOT_PATH_MAX + 64], to[PLOT_PATH_MAX + 64];
            snprintf(from, sizeof from, "%s/%s.%s", c->stage, plot_figures[i], ext[e]);
            snprintf(to, sizeof to, "%s/%s.%s", c->dir, plot_figures[i], ext[e]);
            if (rename(from, to) != 0)
                return tp_err_set(c->err, "plot: %s: cannot write: %s", to, strerror(errno));
        }
    return 0;
}

/* What every figure set needs first: a usable output path, gnuplot on PATH (into `gnuplot`,
 * PLOT_PATH_MAX bytes) and the output folder. */
static int plot_prepare(const char *dir, char *gnuplot, tp_err *err)
{
    if (strlen(dir) > PLOT_PATH_MAX - 64) return tp_err_set(err, "plot: %s: path too long", dir);
    if (plot_find_gnuplot(gnuplot, PLOT_PATH_MAX))
        return tp_err_set(err, "plot: gnuplot not found on PATH; install gnuplot-nox");
    return plot_mkdirs(dir, err);
}

int plot_validation(const val_report *r, const char *dir, tp_err *err)
{
    if (!r || !r->cells || r->n_cells == 0 || !r->g)
        return tp_err_set(err, "plot: nothing to plot (an empty validation report)");
    if (!dir) return tp_err_set(err, "plot: no output directory");
    char gnuplot[PLOT_PATH_MAX];
    if (plot_prepare(dir, gnuplot, err)) return -1;

    plot_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.dir = dir;
    c.err = err;
    plot_grid_name(r->g->path, c.grid_name, sizeof c.grid_name);
    snprintf(c.what, sizeof c.what, "%s vs %s (%zu cells)", r->scn.name[0] ? r->scn.name : "scenario",
             c.grid_name, r->n_cells);
    c.tp_unique = 1;
    for (int i = 0; i < r->n_configs; i++)
        for (int j = 0; j < i; j++)
            if (r->configs[i].tp == r->configs[j].tp) c.tp_unique = 0;
    for (size_t i = 1; i < r->n_cells; i++)
        if (r->cells[i].g->ctx != r->cells[0].g->ctx) c.multi_ctx = 1;

    snprintf(c.stage, sizeof c.stage, "%s/.plot.XXXXXX", dir);
    if (!mkdtemp(c.stage))
        return tp_err_set(err, "plot: %s: cannot create a staging directory: %s", dir, strerror(errno));
    /* a signal while drawing removes the staging directory and what is in it (ofile.h) */
    static const char *const ext[] = {"dat", "gp", "png", "svg"};
    c.guard[c.n_guard++] = ofile_guard(c.stage);
    for (int i = 0; i < PLOT_N_FIGURES; i++)
        for (int e = 0; e < 4; e++) {
            char p[PLOT_PATH_MAX + 64];
            snprintf(p, sizeof p, "%s/%s.%s", c.stage, plot_figures[i], ext[e]);
            c.guard[c.n_guard++] = ofile_guard(p);
        }
    char log[PLOT_PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/%s", c.stage, PLOT_LOG);
    c.guard[c.n_guard++] = ofile_guard(log);
    int rc = -1;
    if (plot_measured_vs_predicted(&c) || plot_step_vs_tp(&c) || plot_breakdown(&c)) goto out;
    for (int i = 0; i < PLOT_N_FIGURES; i++)
        if (plot_run_gnuplot(&c, gnuplot, plot_figures[i])) goto out;
    if (plot_install(&c)) goto out;
    rc = 0;
out:
    plot_remove_stage(c.stage);
    for (int i = 0; i < c.n_guard; i++) ofile_guard_release(c.guard[i]);
    return rc;
}

/* ------------------------------------------------------------- scan ---------------- */

static int plot_scan_files(plot_ctx *c, const plot_scan_data *d)
{
    char name[160];
    snprintf(name, sizeof name, "%s.csv", d->name);
    FILE *f = plot_open(c, name);
    if (!f) return -1;
    double fmin_obj = INFINITY;
    for (int i = 0; i < d->n1 * d->n2; i++) fmin_obj = fmin(fmin_obj, d->objective[i]);
    fprintf(f, "%s,%s%sobjective,delta_chi2\n", d->xkey, d->ykey ? d->ykey : "", d->ykey ? "," : "");
    for (int i = 0; i < d->n1; i++) {
        for (int j = 0; j < d->n2; j++) {
            double o = d->objective[i * d->n2 + j];
            if (d->ykey) fprintf(f, "%.10g,%.10g,%.10g,%.6g\n", d->x[i], d->y[j], o,
                                 (o - fmin_obj) / (d->cv * d->cv));
            else fprintf(f, "%.10g,%.10g,%.6g\n", d->x[i], o, (o - fmin_obj) / (d->cv * d->cv));
        }
        if (d->ykey && i + 1 < d->n1) fputc('\n', f);
    }
    if (plot_close(c, f, name)) return -1;
    snprintf(name, sizeof name, "%s.gp", d->name);
    if (!(f = plot_open(c, name))) return -1;
    fprintf(f,
            "# %s.gp: the fit's objective (sum of squared relative errors on the calibration cells)\n"
            "# over its free parameters. Written by tpsim validate --scan with %s.csv. Re-draw:\n"
            "#   gnuplot %s.gp\n"
            "set encoding utf8\n"
            "W = 900; H = 640\n"
            "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "    set terminal pngcairo size W,H noenhanced font \"DejaVu Sans,11\" background rgb \"white\"\n"
            "} else {\n"
            "    set terminal png size W,H noenhanced background rgb \"white\"\n"
            "}\n"
            "set output \"%s.png\"\n"
            "set datafile separator \",\"\n"
            "set tics nomirror out\n",
            d->name, d->name, d->name, d->name);
    fprintf(f, "set title ");
    plot_qs(f, d->title);
    fprintf(f, "\nset xlabel ");
    plot_qs(f, d->xkey);
    fprintf(f, "\n");
    double floor_obj = fmax(fmin_obj, 1e-12);
    if (d->ykey) {
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
                "set palette defined (0 \"#08306b\", 1 \"#4292c6\", 2 \"#c6dbef\", 3 \"#fee391\", 4 \"#d94801\")\n"
                "set cblabel \"log10 objective\"\n"
                "set key bottom right opaque box\n"
                "set label 1 \"fit\" at %.10g,%.10g point pt 7 ps 1.6 lc rgb \"#d62728\" offset 1,0 front\n"
                "splot \"%s.csv\" skip 1 using 1:2:(log10($3 > %g ? $3 : %g)) with pm3d notitle, \\\n"
                "      \"%s.csv\" skip 1 using 1:2:(log10($3 > %g ? $3 : %g)) with lines lw 2 lc rgb \"black\" "
                "title \"95%% region (delta chi2 = 3.84)\"\n",
                log10(d->threshold), d->fit_x, d->fit_y, d->name, floor_obj, floor_obj, d->name,
                floor_obj, floor_obj);
    } else {
        fprintf(f,
                "set ylabel \"objective\"\n"
                "set logscale y\n"
                "set grid back lt 1 lc rgb \"#e3e3e3\" lw 1\n"
                "set arrow 1 from %.10g, graph 0 to %.10g, graph 1 nohead lc rgb \"#d62728\" dt 2\n"
                "plot \"%s.csv\" skip 1 using 1:($2 > %g ? $2 : %g) with lines lw 2 lc rgb \"#1f77b4\" "
                "title \"objective\", %.10g with lines dt 2 lc rgb \"black\" title \"95%% threshold\"\n",
                d->fit_x, d->fit_x, d->name, floor_obj, floor_obj, d->threshold);
    }
    plot_gp_tail(f, d->name);
    return plot_close(c, f, name);
}

int plot_scan(const plot_scan_data *d, const char *dir, tp_err *err)
{
    char gnuplot[PLOT_PATH_MAX];
    if (plot_prepare(dir, gnuplot, err)) return -1;
    plot_ctx c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.err = err;
    snprintf(c.stage, sizeof c.stage, "%s/.plot.XXXXXX", dir);
    if (!mkdtemp(c.stage))
        return tp_err_set(err, "plot: %s: cannot create a staging directory: %s", dir, strerror(errno));
    int rc = -1;
    if (plot_scan_files(&c, d) || plot_run_gnuplot(&c, gnuplot, d->name)) goto out;
    static const char *const ext[] = {"csv", "gp", "png", "svg"};
    for (int e = 0; e < 4; e++) {
        char from[PLOT_PATH_MAX + 200], to[PLOT_PATH_MAX + 200];
        snprintf(from, sizeof from, "%s/%s.%s", c.stage, d->name, ext[e]);
        snprintf(to, sizeof to, "%s/%s.%s", dir, d->name, ext[e]);
        struct stat sb;
        if (e >= 2 && (stat(from, &sb) != 0 || sb.st_size == 0)) {
            tp_err_set(err, "plot: gnuplot wrote no %s.%s", d->name, ext[e]);
            goto out;
        }
        if (rename(from, to) != 0) {
            tp_err_set(err, "plot: %s: cannot write: %s", to, strerror(errno));
            goto out;
        }
    }
    rc = 0;
out:
    plot_remove_stage(c.stage);
    return rc;
}
