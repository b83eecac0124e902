/* dist.h: cost distributions for host and GPU times.
 *
 * Contract: a dist is a small value (kind, mean, coefficient of variation) in SECONDS.
 * dist_sample draws one non-negative value from a caller-owned pcg32:
 *   constant  -> mean
 *   uniform   -> mean +- mean*cv*sqrt(3)  (so its CV is cv); cv <= DIST_UNIFORM_MAX_CV
 *                keeps it non-negative
 *   normal    -> N(mean, (mean*cv)^2), clamped at 0 (costs are never negative); with
 *                cv <= DIST_NORMAL_MAX_CV the clamp moves the mean by < 0.01%
 *   lognormal -> exp(N(mu, s^2)) with s^2 = ln(1+cv^2), mu = ln(mean) - s^2/2: mean and CV exact
 * A dist with cv == 0 or mean == 0 draws no random numbers (jitter-free runs consume no
 * draws) but keeps its kind, so a caller may rebuild it with another mean.
 * Wider spreads belong to the lognormal, whose mean and CV stay exact at any cv.
 * Draws come from a dist_rng, a PCG32 stream owned by the caller; normals are zig.h's
 * ziggurat (no log or sqrt on 99% of draws; before issue 21 it was the polar method, whose
 * draws differ, so jittered outputs changed once with it: README, "Random draws").
 * dist_make works out once how a dist draws (dist.draw), so dist_sample tests one value.
 * A lognormal draw is dist_exp(dist_lognormal_exponent(d, rng)); dist_exp is the C library's
 * exp bit for bit, at less cost (below), and dist_exp_n takes many at once, so that a caller
 * drawing one cost per rank can draw the exponents rank by rank and take the exps together.
 */
#ifndef TPSIM_DIST_H
#define TPSIM_DIST_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pcg32.h"
#include "zig.h"

#define DIST_UNIFORM_MAX_CV 0.5773502691896258 /* 1/sqrt(3): the lower edge stays >= 0 */
#define DIST_NORMAL_MAX_CV 0.25                /* 4 sigma: P(clamp) ~ 3e-5 */

typedef enum dist_kind { DIST_CONSTANT, DIST_UNIFORM, DIST_NORMAL, DIST_LOGNORMAL } dist_kind;

/* How a dist draws, worked out by dist_make: NONE (cv == 0 or mean == 0, or kind constant)
 * returns the mean and consumes no draws; 0 so a zeroed dist is the constant 0. */
typedef enum dist_draw { DIST_DRAW_NONE, DIST_DRAW_LOGNORMAL, DIST_DRAW_OTHER } dist_draw;

typedef struct dist {
    dist_kind kind;
    double mean; /* seconds, >= 0 */
    double cv;   /* >= 0 */
    /* derived by dist_make, so sampling does no logs, square roots or tests of cv */
    double a, b;
    dist_draw draw;
} dist;

typedef struct dist_rng {
    pcg32 pcg;
} dist_rng;

void dist_rng_seed(dist_rng *r, uint64_t seed, uint64_t stream);
dist dist_make(dist_kind kind, double mean, double cv);
static inline dist dist_const(double mean) { return dist_make(DIST_CONSTANT, mean, 0.0); }
/* The drawing part of dist_sample for the kinds not inlined below (uniform, normal). */
double dist_sample_drawn(const dist *d, dist_rng *rng);
/* A standard normal draw (zig.h). */
static inline double dist_std_normal(dist_rng *rng) { return zig_normal(&rng->pcg); }

/* exp(x), bit for bit what the C library's exp returns, for the lognormal draws. Where the C
 * library is glibc (>= 2.28) on x86-64, glibc's exp is Arm's optimized-routines algorithm
 * (scripts/exp-tables.py), with fused multiply-adds where the CPU has FMA and AVX2 (glibc's
 * own choice of variant); dist_exp computes that same variant with the same operations in
 * the same order, without the call through the PLT, glibc's errno wrapper and its dispatch,
 * and outside |x| in [2^-54, 512) (exp's own special cases) it calls exp. Elsewhere (another
 * C library or CPU) it is exp. tests/test_dist.c checks it against exp bit for bit. */
double dist_exp(double x);
/* x[i] = dist_exp(x[i]) for i < n: one call for many, their latencies overlapped. */
void dist_exp_n(double *x, size_t n);
/* The constants of dist_exp (dist_exp_tab.c, written by scripts/exp-tables.py). */
enum {
    DIST_EXP_INVLN2N, DIST_EXP_NEGLN2HIN, DIST_EXP_NEGLN2LON, DIST_EXP_SHIFT,
    DIST_EXP_C2, DIST_EXP_C3, DIST_EXP_C4, DIST_EXP_C5, DIST_EXP_CONSTS
};
#define DIST_EXP_N 128 /* table entries: 2^(j/N) for j < N */
extern const double dist_exp_c[DIST_EXP_CONSTS];
extern const uint64_t dist_exp_tab[2 * DIST_EXP_N];

/* The normal exponent of a lognormal draw: dist_sample of a lognormal d (d->draw ==
 * DIST_DRAW_LOGNORMAL) is dist_exp of this, from the same draws. */
static inline double dist_lognormal_exponent(const dist *d, dist_rng *rng)
{
    return d->a + d->b * dist_std_normal(rng);
}
/* Inline because the engine calls it once per op and rank: jitter-free dists return at
 * once, the lognormal (the usual jitter) without a switch. */
static inline double dist_sample(const dist *d, dist_rng *rng)
{
    if (d->draw == DIST_DRAW_LOGNORMAL) return dist_exp(dist_lognormal_exponent(d, rng));
    if (d->draw == DIST_DRAW_NONE) return d->mean;
    return dist_sample_drawn(d, rng);
}
/* Name as written in YAML ("constant", ...); dist_parse_kind returns -1 if unknown. */
const char *dist_kind_name(dist_kind kind);
int dist_parse_kind(const char *name, dist_kind *out);
#endif
