/* dist.c: see dist.h. */
#include "dist.h"

#include <math.h>
#include <string.h>

static const char *const dist_names[] = {"constant", "uniform", "normal", "lognormal"};

dist dist_make(dist_kind kind, double mean, double cv)
{
    dist d = {kind, mean, cv, 0.0, 0.0, DIST_DRAW_NONE};
    if (cv == 0.0 || mean == 0.0) { /* draws nothing, but remembers its kind */
        d.a = mean;
        return d;
    }
    switch (d.kind) {
    case DIST_CONSTANT: d.a = mean; break;
    case DIST_UNIFORM:
        d.a = mean * cv * sqrt(3.0);
        d.draw = DIST_DRAW_OTHER;
        break; /* half-width */
    case DIST_NORMAL: d.a = mean * cv; d.draw = DIST_DRAW_OTHER; break;              /* sd */
    case DIST_LOGNORMAL: {
        double s2 = log1p(cv * cv);
        d.a = log(mean) - 0.5 * s2; /* mu */
        d.b = sqrt(s2);             /* sigma */
        d.draw = DIST_DRAW_LOGNORMAL;
        break;
    }
    }
    return d;
}

void dist_rng_seed(dist_rng *r, uint64_t seed, uint64_t stream)
{
    pcg32_seed(&r->pcg, seed, stream);
}

double dist_sample_drawn(const dist *d, dist_rng *rng)
{
    double x;
    switch (d->kind) {
    case DIST_CONSTANT: return d->a;
    case DIST_UNIFORM: x = d->mean + d->a * (2.0 * pcg32_unit(&rng->pcg) - 1.0); break;
    case DIST_NORMAL: x = d->mean + d->a * dist_std_normal(rng); break;
    case DIST_LOGNORMAL: return dist_exp(dist_lognormal_exponent(d, rng));
    default: return d->mean;
    }
    return x > 0.0 ? x : 0.0;
}

/* dist_exp as glibc's FMA variant (x86-64 glibc >= 2.28; see dist.h). */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GNUC__) &&                            \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 28))
#define DIST_EXP_FUSED 1

/* Does glibc's exp take its FMA variant (e_exp-fma.c, built with -mfma -mavx2) here? Its
 * rule (sysdeps/x86_64/fpu/multiarch/ifunc-avx-fma4.h): FMA and AVX2 both usable, else the
 * FMA4, AVX or SSE2 builds; libgcc's feature bits, like glibc's, count a feature usable only
 * where the OS saves the AVX state. (A GLIBC_TUNABLES hwcaps mask that hides FMA or AVX2
 * from glibc alone would part the two; tests/test_dist.c would then fail.) */
static int dist_exp_glibc_fused(void)
{
    return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
}

static inline double dist_exp_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* One exp of x with |x| in [2^-54, 512), as glibc's e_exp.c computes it in its FMA build
 * (the fused operations read off its object code: kd = x invln2N + shift fused; r = x + kd
 * negln2hiN + kd negln2loN as two fused steps; the polynomial as three; the final scale +
 * scale tmp fused). Every other operation is a plain one, as the build has them; there is no
 * a * b + c written out here that a compiler could fuse on its own. */
__attribute__((target("fma"))) static inline double dist_exp_fused1(double x)
{
    const double *c = dist_exp_c;
    double kd = __builtin_fma(x, c[DIST_EXP_INVLN2N], c[DIST_EXP_SHIFT]);
    uint64_t ki;
    memcpy(&ki, &kd, sizeof ki);
    kd -= c[DIST_EXP_SHIFT];
    double r = __builtin_fma(kd, c[DIST_EXP_NEGLN2HIN], x);
    r = __builtin_fma(kd, c[DIST_EXP_NEGLN2LON], r);
    size_t idx = 2 * (size_t)(ki % DIST_EXP_N);
    uint64_t top = ki << (52 - 7); /* 7 = log2 DIST_EXP_N */
    double tail = dist_exp_from_bits(dist_exp_tab[idx]);
    double scale = dist_exp_from_bits(dist_exp_tab[idx + 1] + top);
    double r2 = r * r;
    double p23 = __builtin_fma(r, c[DIST_EXP_C3], c[DIST_EXP_C2]);
    double p45 = __builtin_fma(r, c[DIST_EXP_C5], c[DIST_EXP_C4]);
    double tmp = __builtin_fma(r2 * r2, p45, __builtin_fma(p23, r2, tail + r));
    return __builtin_fma(scale, tmp, scale);
}

/* |x| in [2^-54, 512): exp's fast path (glibc's test: the top 12 bits' exponent field) */
static inline int dist_exp_fast(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (uint32_t)((b >> 52) & 0x7ff) - 0x3c9u < 0x408u - 0x3c9u;
}

__attribute__((target("fma"))) static void dist_exp_n_fused(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = dist_exp_fast(x[i]) ? dist_exp_fused1(x[i]) : exp(x[i]);
}
#endif

double dist_exp(double x)
{
#ifdef DIST_EXP_FUSED
    if (dist_exp_glibc_fused() && dist_exp_fast(x)) return dist_exp_fused1(x);
#endif
    return exp(x);
}

void dist_exp_n(double *x, size_t n)
{
#ifdef DIST_EXP_FUSED
    if (dist_exp_glibc_fused()) {
        dist_exp_n_fused(x, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) x[i] = exp(x[i]);
}

const char *dist_kind_name(dist_kind kind)
{
    return (unsigned)kind < sizeof dist_names / sizeof dist_names[0] ? dist_names[kind] : "?";
}

int dist_parse_kind(const char *name, dist_kind *out)
{
    for (unsigned i = 0; i < sizeof dist_names / sizeof dist_names[0]; i++)
        if (strcmp(name, dist_names[i]) == 0) {
            *out = (dist_kind)i;
            return 0;
        }
    return -1;
}
