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
    case DIST_LOGNORMAL: return exp(d->a + d->b * dist_std_normal(rng));
    default: return d->mean;
    }
    return x > 0.0 ? x : 0.0;
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
