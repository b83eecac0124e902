/* zig.c: see zig.h. */
#include "zig.h"

#include <math.h>

/* uniform in (0, 1]: never 0, so its log is finite */
static double zig_unit_pos(pcg32 *g) { return 1.0 - pcg32_unit(g); }

double zig_normal_slow(pcg32 *g, uint32_t i, uint64_t u, int neg)
{
    for (;;) {
        double x;
        if (i == 0) {
            /* the base layer past r stands for the tail: Marsaglia's method draws
             * r + a with a ~ Exp(r) kept with probability exp(-a^2 / 2) (paper, section 3) */
            double a, b;
            do {
                a = -log(zig_unit_pos(g)) / zig_r;
                b = -log(zig_unit_pos(g));
            } while (b + b < a * a);
            x = zig_r + a;
            return neg ? -x : x;
        }
        /* layer i's rectangle sticks out of the curve: keep x if a uniform height in the
         * layer, f[i] to f[i+1], falls under exp(-x^2 / 2) */
        x = (double)u * zig_w[i];
        if (zig_f[i] + pcg32_unit(g) * (zig_f[i + 1] - zig_f[i]) < exp(-0.5 * x * x))
            return neg ? -x : x;
        /* rejected: a new attempt, as in zig_normal */
        uint64_t bits = (uint64_t)pcg32_next(g) << 32;
        bits |= pcg32_next(g);
        i = (uint32_t)(bits & (ZIG_LAYERS - 1));
        u = bits >> 12;
        neg = (int)(bits >> 8) & 1;
        if (u < zig_k[i]) {
            x = (double)u * zig_w[i];
            return neg ? -x : x;
        }
    }
}
