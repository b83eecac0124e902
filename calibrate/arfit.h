/* arfit.h: fit the all-reduce cost model to a measured message-size sweep.
 *
 * The model is the study's Equation 1 for a ring all-reduce over k ranks of b bytes:
 *
 *     t(b) = lambda + 2(k-1)/k * b / beta        (t in us, beta in GB/s = 1e9 bytes/s)
 *
 * A sweep comes from either
 *   - the unmodified stdout of nccl-tests `all_reduce_perf` (the out-of-place time column;
 *     k = the number of "#  Rank N ..." lines), or
 *   - the CSV that calibrate/tpsim-nccl-sweep writes: `# key: value` metadata lines (k in
 *     `# tp: K`), then the header row `bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps`
 *     and one row per size (time_us_mean is the time used).
 * The format is detected from the text, not from the file name.
 *
 * Two fits are offered:
 *   - linear: ordinary (weight abs) or relative-error (weight rel, residuals weighted 1/t^2)
 *     least squares of Equation 1 over a byte range;
 *   - piecewise: one (lambda_i, beta_i) per byte interval (each fitted with the chosen
 *     weight), breakpoints placed between measured sizes and chosen by exhaustive search over
 *     0..3 breaks, scored by BIC on relative residuals (timing noise is multiplicative). NCCL
 * switches protocol (LL, LL128, Simple) with message size, each with its own latency and bandwidth,
 * so one straight line cannot follow the small messages a decode step sends; the pieces can.
 *
 * Conventions: every function that checks user input takes a tp_err and returns -1 with one
 * line in it ("file:line: ...") on failure, 0 on success. No globals; the caller owns every
 * struct, and arfit_sweep_free releases what arfit_parse allocated inside one.
 */
#ifndef TPSIM_ARFIT_H
#define TPSIM_ARFIT_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* The study's fit range and the decode-relevant band where it reports the linear bias. */
#define ARFIT_DEFAULT_MIN_BYTES (32.0 * 1024)
#define ARFIT_DEFAULT_MAX_BYTES (256.0 * 1024 * 1024)
#define ARFIT_BAND_MIN_BYTES (32.0 * 1024)
#define ARFIT_BAND_MAX_BYTES (256.0 * 1024)

#define ARFIT_MIN_POINTS 3     /* fewest points in the fit range (and per piece) */
#define ARFIT_MAX_BREAKS 3
#define ARFIT_MAX_PIECES (ARFIT_MAX_BREAKS + 1)
#define ARFIT_NAME_MAX 128
/* Relative timing resolution assumed by model selection: repeated runs of one size differ by
 * about this much, so a misfit below it is noise, not a protocol change. */
#define ARFIT_TIME_RESOLUTION 0.01

/* ARFIT_FORMAT_AIC: the NCCL rows of AIConfigurator's all-reduce table (araic.h) */
typedef enum arfit_format {
    ARFIT_FORMAT_NCCL_TESTS,
    ARFIT_FORMAT_CSV,
    ARFIT_FORMAT_AIC
} arfit_format;
typedef enum arfit_weight { ARFIT_WEIGHT_ABS, ARFIT_WEIGHT_REL } arfit_weight;

typedef struct arfit_point {
    double bytes;   /* message size per rank, bytes */
    double time_us; /* measured time of one all-reduce: the column selected (out-of-place) */
    int line;       /* line of the row in the source, for error messages */
    double oop_us;  /* out-of-place time */
    double ip_us;   /* in-place time; < 0 when the source has none (CSV) */
} arfit_point;

typedef enum arfit_column { ARFIT_COLUMN_OOP, ARFIT_COLUMN_IP, ARFIT_COLUMN_MIN } arfit_column;

typedef struct arfit_sweep {
    arfit_point *points; /* sizes strictly increasing; owned, see arfit_sweep_free */
    size_t n;
    int k;                     /* ranks; from the file or, if it has none, the caller's tp */
    int k_line;                /* line that stated k (0: given by the caller) */
    int header_line;           /* line of the column header */
    arfit_format format;
    char gpu[ARFIT_NAME_MAX];  /* GPU name the file reports, "" if none */
    char file[ARFIT_NAME_MAX]; /* name used in error messages */
} arfit_sweep;

typedef struct arfit_opts {
    double min_bytes, max_bytes; /* inclusive fit range */
    arfit_weight weight;
    arfit_column column;         /* which time column the points carry (arfit_select_column) */
} arfit_opts;

/* One straight segment of Equation 1. */
typedef struct arfit_line {
    double lambda_us;
    double beta_gbps;
} arfit_line;

/* Goodness figures shared by both fits. band_bias_pct is the signed mean of
 * (fit - measured) / measured * 100 over the sweep's points in 32..256 KiB (whether or not
 * they were in the fit range), band_mae_pct the mean of its absolute value (a signed mean can
 * cancel an over- and an under-prediction); both NaN when the sweep has no point there. */
typedef struct arfit_quality {
    double r2;            /* of time, unweighted, over the fitted points */
    double band_bias_pct;
    double band_mae_pct;
    int band_points;
    double bic;           /* n ln(RSS_rel / n) + p ln n on relative residuals (see .c) */
} arfit_quality;

typedef struct arfit_linear_fit {
    arfit_line line;
    arfit_quality q;
    int n_points; /* points in the fit range */
    int k;
} arfit_linear_fit;

typedef struct arfit_piece {
    arfit_line line;
    double from_bytes;              /* piece applies from here to the next piece's from_bytes */
    double first_bytes, last_bytes; /* measured sizes it was fitted on */
    int n_points;
} arfit_piece;

typedef struct arfit_piecewise_fit {
    arfit_piece pieces[ARFIT_MAX_PIECES]; /* sorted by bytes; pieces[0].from_bytes = 0 */
    int n_pieces;
    arfit_quality q;
    int n_points;
    int k;
} arfit_piecewise_fit;

/* Default options: the study's range, weight abs. */
arfit_opts arfit_default_opts(void);

/* Parse a sweep from text (NUL-terminated). `file` names the source in messages. tp is the
 * caller's --tp (0: not given); it supplies k when the file has none and must match the file's
 * k when it has one. Refuses unknown formats, malformed rows, non-positive, non-numeric or
 * non-finite times (either column), sizes that do not increase, two rank listings, tp
 * mismatches, k < 2 and empty sweeps; and, for nccl-tests output, a collective other than
 * all_reduce (the "Collective test starting" line, or a row with redop none), a non-zero
 * #wrong, an out-of-bounds footer other than "0 OK" or any FAILED / failure line, two ranks
 * on one host's device, and a rank count that is not a multiple of nThread x nGpus.
 * On success *out owns its points; on failure *out holds nothing to free. */
int arfit_parse(const char *text, const char *file, int tp, arfit_sweep *out, tp_err *err);

/* Use the out-of-place, in-place, or the smaller of the two times for every point. Refused
 * (-1) for ip and min when the sweep has no in-place column (a CSV). */
int arfit_select_column(arfit_sweep *s, arfit_column column, tp_err *err);
/* "out-of-place", "in-place", "min of out-of-place and in-place". */
const char *arfit_column_name(arfit_column column);
/* Copy src into dst (len bytes), keeping only characters safe in a one-line report and a
 * plain YAML scalar (anything else becomes a space), leading and trailing blanks dropped. */
void arfit_copy_plain(char *dst, size_t len, const char *src);

/* Read and parse a file (see arfit_parse). */
int arfit_parse_file(const char *path, int tp, arfit_sweep *out, tp_err *err);

void arfit_sweep_free(arfit_sweep *s);

/* Model time (us) of one all-reduce of `bytes` over k ranks on one line. */
double arfit_line_time_us(arfit_line line, int k, double bytes);

/* Piecewise model time: the piece whose interval holds `bytes`. */
double arfit_piecewise_time_us(const arfit_piecewise_fit *fit, double bytes);

/* Fit Equation 1 over opts->[min_bytes, max_bytes]. Refuses fewer than ARFIT_MIN_POINTS points
 * in range and a fit whose bandwidth is not positive or whose latency is negative. */
int arfit_fit_linear(const arfit_sweep *s, const arfit_opts *opts, arfit_linear_fit *out,
                     tp_err *err);

/* Piecewise fit over the same range and weighting: 0..ARFIT_MAX_BREAKS breaks between measured
 * sizes, each piece >= ARFIT_MIN_POINTS points with a positive bandwidth and a non-negative
 * latency, the lowest BIC wins (with no break it equals the linear fit). */
int arfit_fit_piecewise(const arfit_sweep *s, const arfit_opts *opts, arfit_piecewise_fit *out,
                        tp_err *err);

/* R^2 of measured times against model times: 1 - SS_res / SS_tot (1 when SS_tot is 0 and the
 * fit is exact). Exposed for tests. */
double arfit_r2(const double *measured, const double *model, size_t n);


/* Format a byte count compactly ("32K", "256M", "1536"), for reports. */
void arfit_format_size(double bytes, char *buf, size_t len);

/* Write the calibration YAML the engine loads (kind: allreduce-calibration, sim/arcal.h).
 * `fit_name` is "linear" or "piecewise" and sets `fit:`; the linear lambda_us/beta_gbps are
 * always written, with the fit's range, weight, n_points, r2 and band biases; `pieces:` (each
 * from_bytes, lambda_us, beta_gbps) only for piecewise. hardware may be NULL (then the file's GPU
 * name or "unknown"). Returns 0, or -1 if the stream reports an error. */
int arfit_write_calibration(FILE *f, const arfit_sweep *s, const arfit_opts *opts,
                            const arfit_linear_fit *lin, const arfit_piecewise_fit *pw,
                            const char *fit_name, const char *hardware);

/* `tpsim fit-allreduce ...` (argv[0] is "fit-allreduce"); returns the exit status. */
int tpsim_cmd_fit_allreduce(int argc, char **argv);

#endif
