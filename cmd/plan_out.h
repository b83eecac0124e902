/* plan_out.h: what `tpsim plan` prints: the searched cells as CSV (sweep's columns, then the
 * plan's), and the answer per context as text or JSON (the ranked configurations with their
 * intervals, winner and runner-up with why, whether they separate, the Pareto frontier).
 *
 * Contract: a plan_view borrows everything it points to. pred_lo/pred_hi are per row, NAN
 * where no interval was computed; marks are per configuration, the ones domain.h does not
 * make (an all-reduce or kernel calibration borrowed from other hardware, NCCL standing in for
 * a custom all-reduce the hardware's calibrations did not measure); plan_out_marks joins them
 * with the row's domain marks. The writers only write to f; plan_out_status says what the exit
 * status is.
 */
#ifndef TPSIM_PLAN_OUT_H
#define TPSIM_PLAN_OUT_H

#include <stdio.h>

#include "plan.h"
#include "sweeprow.h"

#define PLAN_MARKS_MAX 256
/* a row's marks: its domain marks (sweeprow.h) and its configuration's */
#define PLAN_ROW_MARKS_MAX (SWEEPROW_MARKS_MAX + PLAN_MARKS_MAX)

typedef struct plan_view {
    const plan_spec *sp;
    const plan_result *r;
    const int *graphs; /* per scenario of sp: its execution mode */
    const double *pred_lo, *pred_hi;
    char (*marks)[PLAN_MARKS_MAX]; /* per configuration: its own marks ("" if none) */
    const char *intervals_note;    /* how the intervals were made */
    int top;                       /* ranked rows shown per context */
} plan_view;

/* The answer's rows per ctx: the ranked picks (at most top), plus the closest row when
 * none meets. The row indices of one ctx into rows; the count. */
size_t plan_out_shown(const plan_view *v, long ctx, size_t *rows);
/* The row nearest the target when none meets it: the fastest row of ctx; -1 if none. */
long plan_out_closest(const plan_result *r, long ctx);
void plan_out_csv(FILE *f, const plan_view *v);
void plan_out_text(FILE *f, const plan_view *v);
void plan_out_json(FILE *f, const plan_view *v);
/* 0 when every ctx has a configuration meeting the target, else 1 */
int plan_out_status(const plan_view *v);

/* A row's marks: its configuration's, and its batch's when outside the validated ones. */
void plan_out_marks(const plan_view *v, size_t row, char *out, size_t cap);
/* "H100 SXM TP-8 graphs" */
void plan_out_name(const plan_view *v, size_t cfg, char *out, size_t cap);
/* Tokens/s per GPU interval of a row from its step interval. */
void plan_out_tok_interval(const plan_view *v, size_t row, double *lo, double *hi);
/* The sentence comparing ranked rows a and b: "X beats Y by 6.0% ± 9.0%: not separable",
 * where the gain is in tokens/s per GPU and the spread is the two rows' 95% half-widths
 * (relative) added in quadrature, as if their errors were independent: they share the fit's
 * parameters, which moves both the same way, so this overstates the spread of the ratio.
 * 1 (separable) when the gain exceeds the spread. */
int plan_out_separable(const plan_view *v, size_t a, size_t b, char *out, size_t cap);

#endif
