/* pcg32.h: the PCG32 random generator (O'Neill, "PCG: A Family of Simple Fast
 * Space-Efficient Statistically Good Algorithms for Random Number Generation", 2014):
 * a 64-bit LCG state with the XSH-RR output permutation, 32-bit outputs.
 *
 * Contract: a pcg32 is a plain value owned by its caller. pcg32_seed(seed, stream) gives
 * the reference sequence (seed 42, stream 54 -> 0xa15c02b7 0x7b47f409 0xba1d3330 ...);
 * distinct streams are independent sequences, which is how each simulated rank gets
 * draws that do not shift when another rank is added.
 */
#ifndef TPSIM_PCG32_H
#define TPSIM_PCG32_H

#include <stdint.h>

typedef struct pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd: selects the stream */
} pcg32;

/* The 64-bit LCG multiplier of the PCG paper (Knuth's MMIX constant). */
#define PCG32_MULT 6364136223846793005ULL

void pcg32_seed(pcg32 *rng, uint64_t seed, uint64_t stream);
/* Inline: the simulator's hot loop draws one or two per op and rank. */
static inline uint32_t pcg32_next(pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULT + rng->inc;
    /* XSH-RR: xorshift the high bits down, then rotate by the top 5 bits. */
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}
/* Uniform in [0, bound), without modulo bias; bound > 0. */
uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound);
/* Uniform double in [0, 1) with 53 random bits (two draws). */
double pcg32_unit(pcg32 *rng);
/* Uniform double in [0, 1) with 32 random bits (one draw): enough resolution for
 * sampling costs, at half the price. */
static inline double pcg32_unit32(pcg32 *rng) { return pcg32_next(rng) * (1.0 / 4294967296.0); }

#endif
