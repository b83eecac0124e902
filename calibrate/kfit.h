/* kfit.h: fitting kernel cost laws (kcal.h) to profile samples (kprof.h).
 *
 * Contract: kf_fit_law fits one law to samples by least squares on relative error
 * (sum of w ((t - y) / y)^2, every row's relative error weighted by its w, kp_weigh), every
 * coefficient kept >= 0 (a term that would go negative is dropped); a roofline's max is fitted by
 * alternating the rows' memory/compute assignment; the q-norm laws (smooth, tiled, floor) by
 * Levenberg-Marquardt from the sum's (floor: the linear law's) fit, rates kept > 0, q in
 * (1, 64], t0 >= 0. Candidates: gemm const, linear, row, roofline, sum, smooth, tiled;
 * attention const, linear, seq; the others const, linear, row, roofline, sum, floor.
 * kf_fit_class compares the candidate laws
 * for a class by held-out MAPE (each fold fitted on the others, predicted; pooled over rows,
 * weighted by w) and keeps the best, refitted on every sample; with one fold it compares in-sample
 * MAPE. The measured grid (kgrid.h, KL_GRID) competes too where every row of the class has
 * a grid shape: held out as the fitted laws are (a grid built on the other folds reads the
 * fold's rows; a row it cannot read is priced by the best fitted law, fitted on those folds,
 * as the fallback prices it at run time); when it wins, `law` keeps that law as its fallback.
 * Pure functions over caller-owned arrays.
 */
#ifndef TPSIM_KFIT_H
#define TPSIM_KFIT_H

#include <stddef.h>

#include "kcal.h"
#include "kprof.h"

#define KF_MAX_FOLDS 64

typedef struct kf_class_fit {
    int n;                    /* samples */
    int n_folds;
    int fold_id[KF_MAX_FOLDS];  /* the folds' kp_sample.fold, in order of first appearance */
    /* per candidate law and fold: held-out MAPE of the fold's rows (weighted by w), predicted
     * by a fit on the other folds; < 0 where not computed */
    double fold_pct[KL_COUNT][KF_MAX_FOLDS];
    kcal_law law;             /* the chosen law, fitted on every sample */
    double r2, mape_pct;      /* of that fit */
    double heldout_pct[KL_COUNT]; /* per candidate law; < 0: not a candidate */
    double insample_pct[KL_COUNT];
    int chosen_by_heldout;
    int chosen;               /* the law that won: law.kind, or KL_GRID (law is its fallback) */
} kf_class_fit;

/* Fit law `kind` to rows[0..n-1]; -1 when n is not above its parameters (kcal_law_params),
 * where the fit would pass through every row and read an error of 0. */
int kf_fit_law(const kp_sample *const *rows, size_t n, int kind, kcal_law *out);
double kf_mape_pct(const kp_sample *const *rows, size_t n, const kcal_law *l);
/* The same, each row weighted by its w (each token band counts alike). */
double kf_wmape_pct(const kp_sample *const *rows, size_t n, const kcal_law *l);
double kf_r2(const kp_sample *const *rows, size_t n, const kcal_law *l);
/* Compare the candidates for class cls over every sample of that class; -1 if it has none. */
int kf_fit_class(const kp_set *set, int cls, kf_class_fit *out);
/* The grid of rows[0..n-1] (their gx on the class's axes): 0 with *cells malloc'd (free it),
 * -1 when it does not fit (KG_MAX_AXIS) or memory runs out. */
int kf_grid(const kp_sample *const *rows, size_t n, int cls, kg_grid *g, float **cells);

#endif
