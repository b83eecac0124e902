/* arfit.c: fit Equation 1 to a parsed all-reduce sweep and write the calibration file;
 * see arfit.h. Parsing is in arfit_parse.c. */
#include "arfit.h"

#include "num.h"
#include "rfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------------------------------------
 * Model and fits
 * ------------------------------------------------------------------------------------------- */

/* Bus factor of a ring all-reduce: each rank sends and receives 2(k-1)/k of the message. */
static double bus_factor(int k)
{
    return 2.0 * (k - 1) / k;
}

double arfit_line_time_us(arfit_line line, int k, double bytes)
{
    /* beta GB/s = beta * 1e3 bytes per us */
    return line.lambda_us + bus_factor(k) * bytes / (line.beta_gbps * 1e3);
}

double arfit_piecewise_time_us(const arfit_piecewise_fit *fit, double bytes)
{
    int i = 0;
    while (i + 1 < fit->n_pieces && bytes >= fit->pieces[i + 1].from_bytes) i++;
    return arfit_line_time_us(fit->pieces[i].line, fit->k, bytes);
}

arfit_opts arfit_default_opts(void)
{
    return (arfit_opts){ARFIT_DEFAULT_MIN_BYTES, ARFIT_DEFAULT_MAX_BYTES, ARFIT_WEIGHT_ABS,
                        ARFIT_COLUMN_OOP};
}

double arfit_r2(const double *measured, const double *model, size_t n)
{
    double mean = 0, ss_tot = 0, ss_res = 0;
    for (size_t i = 0; i < n; i++) mean += measured[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        ss_tot += (measured[i] - mean) * (measured[i] - mean);
        ss_res += (measured[i] - model[i]) * (measured[i] - model[i]);
    }
    if (ss_tot == 0) return ss_res == 0 ? 1.0 : 0.0;
    return 1.0 - ss_res / ss_tot;
}

static double weight_of(arfit_weight w, double t)
{
    /* rel: the residual divided by the time, squared, so a 40 us point counts as much as a
     * 1 ms one and the small messages a decode step sends are not drowned out. */
    return w == ARFIT_WEIGHT_REL ? 1.0 / (t * t) : 1.0;
}

/* Weighted least squares of t = a + s * x, x = bus_factor * bytes, on p[0..n). Returns -1 when
 * the slope is not positive (no physical bandwidth), the intercept is negative (no physical
 * latency) or the sizes do not vary. */
static int fit_segment(const arfit_point *p, size_t n, int k, arfit_weight w, arfit_line *out)
{
    double c = bus_factor(k), sw = 0, mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = weight_of(w, p[i].time_us);
        sw += wi;
        mx += wi * c * p[i].bytes;
        my += wi * p[i].time_us;
    }
    mx /= sw;
    my /= sw;
    double sxx = 0, sxy = 0; /* centred sums: the sizes span 4 decades */
    for (size_t i = 0; i < n; i++) {
        double wi = weight_of(w, p[i].time_us), dx = c * p[i].bytes - mx;
        sxx += wi * dx * dx;
        sxy += wi * dx * (p[i].time_us - my);
    }
    if (sxx <= 0) return -1;
    double slope = sxy / sxx; /* us per bus byte */
    if (!(slope > 0)) return -1;
    if (my - slope * mx < 0) return -1; /* a negative latency is no physical piece either */
    out->lambda_us = my - slope * mx;
    out->beta_gbps = 1.0 / (slope * 1e3);
    return 0;
}

/* Sum of squared relative residuals: the scale on which timing noise is roughly uniform
 * (a few percent at every size), so it is what model selection compares, whatever the
 * weighting of the fit itself. */
static double rel_rss(const arfit_point *p, size_t n, int k, arfit_line line)
{
    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (p[i].time_us - arfit_line_time_us(line, k, p[i].bytes)) / p[i].time_us;
        rss += r * r;
    }
    return rss;
}

/* The points of the sweep inside [min, max]: a contiguous run, since sizes increase. */
static size_t range_points(const arfit_sweep *s, const arfit_opts *o, size_t *first)
{
    size_t i = 0, n = 0;
    while (i < s->n && s->points[i].bytes < o->min_bytes) i++;
    *first = i;
    while (i + n < s->n && s->points[i + n].bytes <= o->max_bytes) n++;
    return n;
}

static int check_range(const arfit_sweep *s, const arfit_opts *o, size_t n, tp_err *err)
{
    char lo[32], hi[32];
    arfit_format_size(o->min_bytes, lo, sizeof lo);
    arfit_format_size(o->max_bytes, hi, sizeof hi);
    if (o->min_bytes > o->max_bytes)
        return tp_err_set(err, "%s: fit range %s..%s is empty (min above max)", s->file, lo, hi);
    if (n < ARFIT_MIN_POINTS)
        return tp_err_at(err, s->file, s->header_line, 0,
                         "too few points: %zu in the fit range %s..%s, need at least %d", n, lo,
                         hi, ARFIT_MIN_POINTS);
    return 0;
}

/* BIC under multiplicative noise: n ln(RSS_rel / n) + params ln n. RSS_rel is floored at the
 * timing resolution (ARFIT_TIME_RESOLUTION per point): structure finer than repeated
 * measurements can resolve is not evidence for another piece, and without the floor an
 * exhaustive search over break positions splits even a clean straight line. */
static double bic(double rss_rel, size_t n, int params)
{
    double floor = (double)n * ARFIT_TIME_RESOLUTION * ARFIT_TIME_RESOLUTION;
    if (rss_rel < floor) rss_rel = floor;
    return (double)n * log(rss_rel / (double)n) + params * log((double)n);
}

/* R^2 over the fitted points and the band bias over all of the sweep's band points. */
static void assess(const arfit_sweep *s, const arfit_point *p, size_t n,
                   const arfit_piecewise_fit *model, arfit_quality *q)
{
    double *meas = malloc(n * sizeof *meas), *pred = malloc(n * sizeof *pred);
    q->r2 = NAN;
    if (meas && pred) {
        for (size_t i = 0; i < n; i++) {
            meas[i] = p[i].time_us;
            pred[i] = arfit_piecewise_time_us(model, p[i].bytes);
        }
        q->r2 = arfit_r2(meas, pred, n);
    }
    free(meas);
    free(pred);
    double sum = 0, sum_abs = 0;
    int m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const arfit_point *pt = &s->points[i];
        if (pt->bytes < ARFIT_BAND_MIN_BYTES || pt->bytes > ARFIT_BAND_MAX_BYTES) continue;
        double e = (arfit_piecewise_time_us(model, pt->bytes) - pt->time_us) / pt->time_us;
        sum += e * 100.0;
        sum_abs += fabs(e) * 100.0;
        m++;
    }
    q->band_points = m;
    q->band_bias_pct = m ? sum / m : NAN;
    q->band_mae_pct = m ? sum_abs / m : NAN;
}

static void set_piece(arfit_piece *pc, const arfit_point *p, size_t n, arfit_line line,
                      double from)
{
    pc->line = line;
    pc->from_bytes = from;
    pc->first_bytes = p[0].bytes;
    pc->last_bytes = p[n - 1].bytes;
    pc->n_points = (int)n;
}

int arfit_fit_linear(const arfit_sweep *s, const arfit_opts *o, arfit_linear_fit *out,
                     tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t first, n = range_points(s, o, &first);
    if (check_range(s, o, n, err) != 0) return -1;
    const arfit_point *p = s->points + first;
    if (fit_segment(p, n, s->k, o->weight, &out->line) != 0)
        return tp_err_at(err, s->file, p[0].line, 0,
                         "no physical fit over the range: the times give a non-positive "
                         "bandwidth or a negative latency");
    arfit_piecewise_fit one = {.n_pieces = 1, .k = s->k};
    set_piece(&one.pieces[0], p, n, out->line, 0);
    assess(s, p, n, &one, &out->q);
    out->q.bic = bic(rel_rss(p, n, s->k, out->line), n, 2);
    out->n_points = (int)n;
    out->k = s->k;
    return 0;
}

/* Break positions: piece j holds points [at[j], at[j+1]). Breaks are searched among at most
 * ARFIT_MAX_CANDIDATES positions (every position for a sweep of doubling sizes; evenly
 * spaced ones for a finely stepped sweep), and each piece's fit is computed once and kept,
 * so the search costs O(candidates^3) placements of O(1) each, not O(n^4). */
#define ARFIT_MAX_CANDIDATES 48

typedef struct cuts {
    size_t at[ARFIT_MAX_PIECES + 1];
    int pieces;
} cuts;

typedef struct seg_memo {
    signed char state; /* 0 not yet fitted, 1 fitted, -1 no physical fit */
    arfit_line line;
    double rss;
} seg_memo;

typedef struct break_search {
    const arfit_point *p;
    size_t n, n_cand;
    size_t cand[ARFIT_MAX_CANDIDATES + 2]; /* piece starts: 0, up to 48 more, then the end */
    seg_memo *memo;                         /* [(n_cand + 1)^2], by candidate index */
    int k;
    arfit_weight w;
} break_search;

static void candidates(break_search *b)
{
    size_t inner = b->n - 1; /* a piece may start at positions 1 .. n-1 */
    size_t want = inner < ARFIT_MAX_CANDIDATES ? inner : ARFIT_MAX_CANDIDATES;
    b->cand[0] = 0;
    b->n_cand = 1;
    for (size_t i = 1; i <= want; i++) {
        size_t at = 1 + (i - 1) * inner / want;
        if (at > b->cand[b->n_cand - 1]) b->cand[b->n_cand++] = at;
    }
    b->cand[b->n_cand] = b->n; /* the end, as index n_cand */
}

/* The piece from candidate i to candidate j (j == n_cand: the end), fitted once. */
static const seg_memo *segment(break_search *b, size_t i, size_t j)
{
    seg_memo *m = &b->memo[i * (b->n_cand + 1) + j];
    if (m->state == 0) {
        size_t from = b->cand[i], len = b->cand[j] - from;
        m->state = fit_segment(b->p + from, len, b->k, b->w, &m->line) == 0 ? 1 : -1;
        if (m->state == 1) m->rss = rel_rss(b->p + from, len, b->k, m->line);
    }
    return m;
}

/* Try every placement of `left` more breaks after candidate `from`; keep the best by BIC. */
static void search_breaks(break_search *b, int pieces, int placed, size_t *idx, double rss,
                          arfit_line *lines, double *best_bic, cuts *best, arfit_line *best_lines)
{
    size_t from = idx[placed];
    if (placed == pieces - 1) { /* the last piece runs to the end */
        if (b->n - b->cand[from] < ARFIT_MIN_POINTS) return;
        const seg_memo *m = segment(b, from, b->n_cand);
        if (m->state != 1) return;
        lines[placed] = m->line;
        /* each piece: lambda and beta; each break: its position */
        double score = bic(rss + m->rss, b->n, 3 * pieces - 1);
        if (score < *best_bic) {
            *best_bic = score;
            best->pieces = pieces;
            for (int j = 0; j < pieces; j++) best->at[j] = b->cand[idx[j]];
            best->at[pieces] = b->n;
            memcpy(best_lines, lines, (size_t)pieces * sizeof *lines);
        }
        return;
    }
    for (size_t next = from + 1; next < b->n_cand; next++) {
        if (b->cand[next] - b->cand[from] < ARFIT_MIN_POINTS) continue;
        const seg_memo *m = segment(b, from, next);
        if (m->state != 1) continue;
        lines[placed] = m->line;
        idx[placed + 1] = next;
        search_breaks(b, pieces, placed + 1, idx, rss + m->rss, lines, best_bic, best, best_lines);
    }
}

int arfit_fit_piecewise(const arfit_sweep *s, const arfit_opts *o, arfit_piecewise_fit *out,
                        tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t first, n = range_points(s, o, &first);
    if (check_range(s, o, n, err) != 0) return -1;
    const arfit_point *p = s->points + first;
    double best_bic = INFINITY;
    cuts best = {{0}, 0};
    arfit_line best_lines[ARFIT_MAX_PIECES], lines[ARFIT_MAX_PIECES];
    break_search b = {.p = p, .n = n, .k = s->k, .w = o->weight};
    candidates(&b);
    b.memo = calloc((b.n_cand + 1) * (b.n_cand + 1), sizeof *b.memo);
    if (!b.memo) return tp_err_set(err, "%s: out of memory", s->file);
    for (int pieces = 1; pieces <= ARFIT_MAX_PIECES; pieces++) {
        size_t idx[ARFIT_MAX_PIECES + 1] = {0};
        search_breaks(&b, pieces, 0, idx, 0.0, lines, &best_bic, &best, best_lines);
    }
    free(b.memo);
    if (best.pieces == 0)
        return tp_err_at(err, s->file, p[0].line, 0,
                         "times do not grow with size over the fit range: no positive "
                         "bandwidth fits");
    out->n_pieces = best.pieces;
    out->k = s->k;
    out->n_points = (int)n;
    for (int j = 0; j < best.pieces; j++) {
        const arfit_point *q = p + best.at[j];
        /* a break sits halfway, on a log scale, between the sizes either side of it */
        double from = j == 0 ? 0 : round(sqrt(q[-1].bytes * q[0].bytes));
        set_piece(&out->pieces[j], q, best.at[j + 1] - best.at[j], best_lines[j], from);
    }
    assess(s, p, n, out, &out->q);
    out->q.bic = best_bic;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Sizes
 * ------------------------------------------------------------------------------------------- */

void arfit_format_size(double bytes, char *buf, size_t len)
{
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        double unit = pow(1024.0, 3 - i);
        if (bytes >= unit && fmod(bytes, unit) == 0) {
            snprintf(buf, len, "%.0f%c", bytes / unit, suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%.0f", bytes);
}

/* ---------------------------------------------------------------------------------------------
 * Calibration file
 * ------------------------------------------------------------------------------------------- */

static void write_bias(FILE *f, const char *label, const arfit_quality *q)
{
    if (q->band_points)
        fprintf(f,
                "%s R2 %.6f, band bias %+.1f%% (mean |error| %.1f%%) over 32-256 KiB (%d points)",
                label, q->r2, q->band_bias_pct, q->band_mae_pct, q->band_points);
    else
        fprintf(f, "%s R2 %.6f, no point in 32-256 KiB", label, q->r2);
}

int arfit_write_calibration(FILE *f, const arfit_sweep *s, const arfit_opts *o,
                            const arfit_linear_fit *lin, const arfit_piecewise_fit *pw,
                            const char *fit_name, const char *hardware)
{
    int piecewise = strcmp(fit_name, "piecewise") == 0;
    char hw[ARFIT_NAME_MAX], lo[32], hi[32];
    arfit_copy_plain(hw, sizeof hw, hardware ? hardware : s->gpu);
    if (!hw[0]) snprintf(hw, sizeof hw, "unknown");
    arfit_format_size(o->min_bytes, lo, sizeof lo);
    arfit_format_size(o->max_bytes, hi, sizeof hi);

    fprintf(f, "# All-reduce cost calibration fitted by `tpsim fit-allreduce` from a measured "
               "sweep.\n");
    fprintf(f, "# t_AR(b) = lambda + 2(k-1)/k * b / beta     (the study's Equation 1)\n");
    fprintf(f, "kind: allreduce-calibration\n");
    fprintf(f, "hardware: %s\n", hw);
    fprintf(f, "tp: %d\n", s->k);
    fprintf(f, "fit: %s\n", piecewise ? "piecewise" : "linear");
    fprintf(f, "lambda_us: %.4f\n", lin->line.lambda_us);
    fprintf(f, "beta_gbps: %.3f\n", lin->line.beta_gbps);
    /* how good the fits are: informational, the engine does not use them */
    fprintf(f, "weight: %s\n", o->weight == ARFIT_WEIGHT_REL ? "rel" : "abs");
    fprintf(f, "min_bytes: %.0f\n", o->min_bytes);
    fprintf(f, "max_bytes: %.0f\n", o->max_bytes);
    fprintf(f, "n_points: %d\n", lin->n_points);
    fprintf(f, "r2: %.6f\n", lin->q.r2);
    if (lin->q.band_points) fprintf(f, "band_bias_pct: %.2f\n", lin->q.band_bias_pct);
    fprintf(f, "piecewise_r2: %.6f\n", pw->q.r2);
    if (pw->q.band_points) fprintf(f, "piecewise_band_bias_pct: %.2f\n", pw->q.band_bias_pct);
    if (piecewise) {
        fprintf(f, "# piece i applies from its from_bytes up to the next piece's from_bytes\n");
        fprintf(f, "pieces:\n");
        for (int j = 0; j < pw->n_pieces; j++) {
            const arfit_piece *pc = &pw->pieces[j];
            fprintf(f, "  - from_bytes: %.0f\n", pc->from_bytes);
            fprintf(f, "    lambda_us: %.4f\n", pc->line.lambda_us);
            fprintf(f, "    beta_gbps: %.3f\n", pc->line.beta_gbps);
        }
    }
    fprintf(f, "source:\n  how: >-\n");
    fprintf(f, "    Measured sweep fitted by tpsim fit-allreduce: least squares of Equation 1, "
               "weight %s,\n",
            o->weight == ARFIT_WEIGHT_REL ? "rel" : "abs");
    fprintf(f, "    over %s..%s bytes (%d points), k %d.", lo, hi, lin->n_points, s->k);
    write_bias(f, " Linear:", &lin->q);
    fprintf(f, ".\n    Piecewise (%d pieces, breaks by BIC):", pw->n_pieces);
    write_bias(f, "", &pw->q);
    fprintf(f, ".\n");
    char where[ARFIT_NAME_MAX];
    arfit_copy_plain(where, sizeof where, s->file);
    if (s->format == ARFIT_FORMAT_AIC)
        fprintf(f, "  where: %s (AIConfigurator all-reduce table, nccl_perf rows, nccl-tests "
                "all_reduce_perf, half, out-of-place)\n", where);
    else
        fprintf(f, "  where: %s (%s%s)\n", where,
                s->format == ARFIT_FORMAT_CSV ? "tpsim-nccl-sweep CSV"
                                              : "nccl-tests all_reduce_perf output, ",
                s->format == ARFIT_FORMAT_CSV ? "" : arfit_column_name(o->column));
    return ferror(f) ? -1 : 0;
}

