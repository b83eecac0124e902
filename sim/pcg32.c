/* pcg32.c: see pcg32.h. Written from the published algorithm (pcg-random.org). */
#include "pcg32.h"

static void pcg32_step(pcg32 *rng)
{
    rng->state = rng->state * PCG32_MULT + rng->inc;
}

void pcg32_seed(pcg32 *rng, uint64_t seed, uint64_t stream)
{
    rng->state = 0;
    rng->inc = (stream << 1u) | 1u;
    pcg32_step(rng);
    rng->state += seed;
    pcg32_step(rng);
}

uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound)
{
    /* Reject the lowest (2^32 mod bound) values so every residue is equally likely. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = pcg32_next(rng);
        if (r >= threshold) return r % bound;
    }
}

double pcg32_unit(pcg32 *rng)
{
    uint64_t hi = pcg32_next(rng) >> 5; /* 27 bits */
    uint64_t lo = pcg32_next(rng) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0); /* / 2^53 */
}
