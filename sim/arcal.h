/* arcal.h: all-reduce cost calibrations (models/allreduce/NAME.yaml, or written by
 * `tpsim fit-allreduce -o`).
 *
 * Contract: one file calibrates one (hardware, k). `fit: linear` is the study's Equation 1,
 * t(b) = lambda + 2(k-1)/k * b / beta. `fit: piecewise` carries pieces, each applying from
 * its from_bytes up to the next piece's, with its own lambda and beta (protocol changes).
 * A piecewise file may also carry the linear lambda_us/beta_gbps for comparison. Values are
 * caller-owned; times in seconds, bandwidths in bytes/s.
 */
#ifndef TPSIM_ARCAL_H
#define TPSIM_ARCAL_H

#include "err.h"

#define ARCAL_MAX_PIECES 8

typedef struct arcal_piece {
    double from_bytes;
    double lambda_s;
    double beta; /* bytes/s */
} arcal_piece;

typedef struct arcal {
    char path[256];
    char hardware[64];
    long tp;
    int piecewise;      /* which fit t() uses */
    int has_linear;     /* lambda_s/beta valid */
    double lambda_s, beta;
    int n_pieces;
    arcal_piece pieces[ARCAL_MAX_PIECES];
} arcal;

int arcal_load(const char *path, arcal *out, tp_err *err);
/* All-reduce of b bytes over the calibration's k ranks. */
double arcal_allreduce_time(const arcal *c, double bytes);
/* All-gather producing b bytes in total: a ring moves (k-1)/k of it, half an all-reduce. */
double arcal_allgather_time(const arcal *c, double bytes);

#endif
