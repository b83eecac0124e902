/* plot_impl.h: what the parts of the plotter share; not for use outside validate/. The parts,
 * bottom to top: plot_files.c (sets, files, gnuplot; calls no other part), the figures
 * plot_mvp.c, plot_bars.c, plot_plan.c and plot_xy.c (each calls only plot_files.c), and
 * plot.c, the validation and scan drivers.
 *
 * Contract: plot_ctx is one figure set being drawn into its staging directory (see plot.c);
 * each figure function writes NAME.dat and NAME.gp there and fails with one tp_err line.
 */
#ifndef TPSIM_PLOT_IMPL_H
#define TPSIM_PLOT_IMPL_H

#include "plot.h"

#include "ofile.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>


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

#define PLOT_MAX_MADE 8   /* new folder levels one set may create (each is signal-guarded) */
#define PLOT_FIG_MAX 160  /* a figure's name, with its NUL */

typedef struct plot_ctx {
    const val_report *r;
    const char *dir;
    char stage[PLOT_PATH_MAX];  /* "" until plot_set_begin made it */
    const char *data_ext;       /* "dat", or "csv" for the scan */
    char (*figs)[PLOT_FIG_MAX]; /* the set's figures: NAME.{data_ext,gp,png,svg} each */
    size_t n_figs;
    char (*leaves)[OFILE_LEAF_MAX]; /* the stage's files, guarded as one entry: the log, then
                                     * four per figure */
    size_t n_leaves;
    int stage_slot, files_slot; /* signal-guard slots, -1 none */
    int made_len[PLOT_MAX_MADE]; /* folders made here: strlen of each level's prefix of dir */
    int made_slot[PLOT_MAX_MADE];
    int n_made;
    sigset_t held_from;         /* the mask before plot_set_move held the signals */
    int held;
    char what[256];     /* "SCENARIO vs GRID (N cells)" */
    char grid_name[128];
    int multi_ctx;      /* the grid has more than one ctx: labels name it */
    int tp_unique;      /* every config has its own tp: labels say "TP-K" */
    tp_err *err;
} plot_ctx;

/* plot_files.c: one figure set's life, shared by every plotter; a set may hold any number of
 * figures, in one folder. The caller zeroes c and sets c->err, then:
 *   plot_set_begin   checks DIR, finds gnuplot (into gnuplot, PLOT_PATH_MAX bytes), creates
 *                    the missing folders of DIR and the staging folder DIR/.plot.XXXXXX, each
 *                    guarded from the moment it exists (ofile_mkdir_guarded); on failure it
 *                    has undone all of that.
 *   plot_set_add     adds a figure, its four files guarded before they exist.
 *   plot_set_install checks every image in the stage, that no figure's name is taken by a
 *                    folder in DIR, then that stdout took the report (ofile_stdout_ok): that is
 *                    plot_set_check; then (plot_set_move), with the signals held until
 *                    plot_set_end, renames data and scripts, images last, into DIR: a signal
 *                    then waits for the whole set to be in place. Several sets go in together
 *                    by checking them all before moving any, and ending them in reverse.
 *   plot_set_end     removes the stage, and on failure (rc != 0) the folders made; frees the
 *                    set; returns rc. Call it after a successful begin, whatever happened.
 * A signal at any other point removes the stage, its files and the folders made (ofile.h). */
int plot_set_begin(plot_ctx *c, const char *dir, const char *data_ext, char *gnuplot);
int plot_set_add(plot_ctx *c, const char *fig);
int plot_set_install(plot_ctx *c);
int plot_set_check(plot_ctx *c);
int plot_set_move(plot_ctx *c);
int plot_set_end(plot_ctx *c, int rc);
/* A set on the heap for the staged API (plot.h): calloc and plot_set_begin, NULL and one
 * line on failure; plot_stage_fail ends (rc -1) and frees it, returning -1. */
plot_ctx *plot_stage_open(const char *dir, const char *data_ext, char *gnuplot, tp_err *err);
int plot_stage_fail(plot_ctx *c);

/* plot_files.c */
void plot_cell_label(const plot_ctx *c, const grid_cell *g, char *out, size_t n);
int plot_close(plot_ctx *c, FILE *f, const char *name);
int plot_config_index(const val_report *r, const char *config);
void plot_dat_str(FILE *f, const char *s);
int plot_find_gnuplot(char *out, size_t n);
void plot_fit_note(const plot_ctx *c, char *out, size_t n);
void plot_grid_name(const char *path, char *out, size_t n);
void plot_qs(FILE *f, const char *s);
int plot_run_gnuplot(plot_ctx *c, const char *gnuplot, const char *fig);
FILE *plot_open(plot_ctx *c, const char *name);

/* plot_files.c: the head every gnuplot script of ours starts with (cmd: the command that
 * wrote it, "validate", "plan") and its tail (the SVG) */
void plot_gp_head(FILE *f, const char *cmd, const char *fig, const char *about, int w, int h);
/* the PNG terminal of size w x h writing fig.png, which every head (and the scan's) sets */
void plot_gp_png(FILE *f, const char *fig, int w, int h);
void plot_gp_tail(FILE *f, const char *fig);

/* plot_mvp.c */
int plot_measured_vs_predicted(plot_ctx *c);

/* plot_bars.c */
int plot_breakdown(plot_ctx *c);
int plot_step_vs_tp(plot_ctx *c);

/* A verdict's label colour, the same verdict the text and JSON give: green only for
 * SUPPORTED, red for FAIL and MISFIT, amber for no skill, grey for UNIDENTIFIED/UNTESTED. */
static inline const char *plot_verdict_colour(val_verdict v)
{
    switch (v) {
    case VAL_SUPPORTED: return "#1a7f37";
    case VAL_FAIL:
    case VAL_MISFIT: return "#b00020";
    case VAL_PASS_NO_SKILL: return "#9a6700";
    default: return "#57606a";
    }
}

/* rounding an axis to a step */
static inline double plot_nice_floor(double x, double step) { return step * floor(x / step); }
static inline double plot_nice_ceil(double x, double step) { return step * ceil(x / step); }

#endif
