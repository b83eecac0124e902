/* zig.h: standard normal draws by the ziggurat method (Marsaglia and Tsang, "The Ziggurat
 * Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000), 256 layers.
 *
 * Contract: zig_normal(g) returns one N(0, 1) draw from the caller's pcg32, exact up to the
 * 52-bit resolution of its uniforms (the tail beyond r = 3.654 is drawn by Marsaglia's
 * exact tail method). Each attempt takes 64 bits (two pcg32 outputs): bits 0-7 pick the
 * layer, bit 8 the sign, bits 12-63 the position in the layer, so no bit serves twice (the
 * flaw of the paper's 32-bit version). About 98.8% of draws end on the first attempt with a
 * table lookup, a compare and a multiply, no log, sqrt or exp; the rest go to
 * zig_normal_slow. The tables are constants (zig_tab.c, written by scripts/zig-tables.py;
 * tests/test_zig.c checks their defining properties and the distribution).
 */
#ifndef TPSIM_ZIG_H
#define TPSIM_ZIG_H

#include <stdint.h>
#include <string.h>

#include "pcg32.h"

#define ZIG_LAYERS 256

extern const double zig_r, zig_v;            /* the base layer's edge; every layer's area */
extern const uint64_t zig_k[ZIG_LAYERS];     /* below k[i]: under the curve at once */
extern const double zig_w[ZIG_LAYERS];       /* x[i] / 2^52: layer i's width per unit */
extern const double zig_f[ZIG_LAYERS + 1];   /* exp(-x[i]^2 / 2); f[256] = 1 */

/* The rest of an attempt that fell outside the rectangle under the curve (layer i, 52-bit
 * position u, sign bit neg), then further attempts until one is accepted. */
double zig_normal_slow(pcg32 *g, uint32_t i, uint64_t u, int neg);

/* x with the sign bit set where neg (bit 63 of a double); a branch on a random sign would
 * be mispredicted half the time */
static inline double zig_signed(double x, uint64_t neg)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    b ^= neg << 63;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline double zig_normal(pcg32 *g)
{
    uint64_t bits = (uint64_t)pcg32_next(g) << 32;
    bits |= pcg32_next(g);
    uint32_t i = (uint32_t)(bits & (ZIG_LAYERS - 1));
    uint64_t u = bits >> 12;
    if (u < zig_k[i]) return zig_signed((double)u * zig_w[i], (bits >> 8) & 1);
    return zig_normal_slow(g, i, u, (int)(bits >> 8) & 1);
}

#endif
