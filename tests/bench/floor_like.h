/* floor_like.h: the like-for-like floor of make bench-peer (build/peer/floor-like): the peers'
 * max-plus floor (../shared/peer/floor.c) drawing its normals with tpsim's sampler, so that
 * its ratio to tpsim measures the engine and not the normal generator.
 *
 * The floor is not copied: the Makefile generates build/peer/floor-like.c from
 * ../shared/peer/floor.c by one sed substitution of its one normal draw,
 *     std_normal(&rng[r])  ->  floor_like_normal(&rng[r].state, rng[r].inc)
 * (the build stops if it does not match exactly once) and a rename of its generator function
 * pcg32 to floor_pcg32 (tpsim's pcg32 is a type), and compiles it with -include of this
 * header and tpsim's sim/pcg32.c, sim/zig.c and sim/zig_tab.c. The floor's PCG32 (state, inc;
 * its rng_seed) is the published algorithm that sim/pcg32.c implements, so each rank's stream
 * is tpsim's; its polar method (std_normal) is left in place, unused. Everything else,
 * exp included, is the floor's own.
 */
#ifndef TPSIM_FLOOR_LIKE_H
#define TPSIM_FLOOR_LIKE_H

#include <stdint.h>

#include "zig.h"

/* tpsim's standard normal (zig.h) drawn from the floor's generator state: a pcg32 value
 * built from it and written back, which the compiler keeps in registers. */
static inline double floor_like_normal(uint64_t *state, uint64_t inc)
{
    pcg32 g = {*state, inc};
    double z = zig_normal(&g);
    *state = g.state;
    return z;
}

#endif
