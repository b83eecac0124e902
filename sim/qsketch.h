/* qsketch.h: quantiles of a stream of doubles in bounded memory.
 *
 * Contract: the first QSKETCH_EXACT values are kept, and quantiles of up to that many are
 * exact: the linear interpolation between order statistics v[floor(q(n-1))] and the next.
 * Past that, the values move into a log-bucketed sketch
 * (DDSketch, Masson, Rim and Lee, VLDB 2019): bucket i holds (gamma^(i-1), gamma^i] with
 * gamma = (1+a)/(1-a), a = QSKETCH_REL_ERR, negatives mirrored, zeros counted apart; a
 * bucket answers with 2 gamma^i / (gamma+1), within relative a of every value in it, so the
 * interpolated quantile is within a * |exact quantile| (plus rounding, ~1e-12 relative) as
 * long as the values have one sign. The buckets span at most QSKETCH_MAX_BUCKETS per sign
 * (a value range of e^21 at a = 1e-5); beyond that the smallest magnitudes are folded into
 * the lowest bucket kept, as DDSketch does, and only quantiles inside the folded range
 * lose the bound. Memory: 8 bytes a value kept (grown by doubling from 64, so a short run
 * holds little), at most 512 KB, then 8 bytes per bucket spanned. Count, min
 * and max are always exact. The caller owns the value; free it with qsketch_free.
 */
#ifndef TPSIM_QSKETCH_H
#define TPSIM_QSKETCH_H

#include <stddef.h>
#include <stdint.h>

#define QSKETCH_EXACT 65536
#define QSKETCH_REL_ERR 1e-5
#define QSKETCH_MAX_BUCKETS (1 << 20)

typedef struct qsketch_store { /* counts of buckets lo .. lo + len - 1 */
    uint64_t *count;
    long lo;
    size_t len;
} qsketch_store;

typedef struct qsketch {
    double *exact; /* the first values, while n <= QSKETCH_EXACT */
    size_t cap;    /* exact's room, a power of two up to QSKETCH_EXACT */
    uint64_t n, zeros;
    double min, max;
    qsketch_store pos, neg; /* neg holds -x for x < 0 */
    double log_gamma;
    int sketching;
} qsketch;

void qsketch_init(qsketch *q);
/* Returns 0, or -1 when out of memory (the value is then not counted). */
int qsketch_add(qsketch *q, double x);
/* The q-quantile (0 <= q <= 1); 0 when empty. Sorts the kept values (not const). */
double qsketch_quantile(qsketch *q, double p);
void qsketch_free(qsketch *q);

#endif
