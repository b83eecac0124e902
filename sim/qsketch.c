/* qsketch.c: see qsketch.h. */
#include "qsketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void qsketch_init(qsketch *q)
{
    memset(q, 0, sizeof *q);
    const double a = QSKETCH_REL_ERR;
    q->log_gamma = log((1 + a) / (1 - a));
}

void qsketch_free(qsketch *q)
{
    free(q->exact);
    free(q->pos.count);
    free(q->neg.count);
    memset(q, 0, sizeof *q);
}

static long qs_key(const qsketch *q, double mag) { return (long)ceil(log(mag) / q->log_gamma); }

/* Count one bucket, growing the span to reach it (or folding it into the lowest bucket
 * once the span is at its cap). */
static int qs_store_add(qsketch_store *s, long key)
{
    if (s->len == 0) {
        if (!(s->count = calloc(1, sizeof *s->count))) return -1;
        s->lo = key;
        s->len = 1;
    }
    long hi = s->lo + (long)s->len - 1;
    if (key < s->lo || key > hi) {
        long new_lo = key < s->lo ? key : s->lo, new_hi = key > hi ? key : hi;
        if (new_hi - new_lo + 1 > QSKETCH_MAX_BUCKETS) { /* keep the largest magnitudes */
            new_lo = new_hi - QSKETCH_MAX_BUCKETS + 1;
            if (key < new_lo) key = new_lo;
        }
        size_t len = (size_t)(new_hi - new_lo + 1);
        uint64_t *c = calloc(len, sizeof *c);
        if (!c) return -1;
        for (size_t i = 0; i < s->len; i++) {
            long k = s->lo + (long)i;
            c[(k < new_lo ? new_lo : k) - new_lo] += s->count[i];
        }
        free(s->count);
        s->count = c;
        s->lo = new_lo;
        s->len = len;
    }
    s->count[key - s->lo]++;
    return 0;
}

static int qs_sketch(qsketch *q, double x)
{
    if (x == 0) {
        q->zeros++;
        return 0;
    }
    return x > 0 ? qs_store_add(&q->pos, qs_key(q, x)) : qs_store_add(&q->neg, qs_key(q, -x));
}

int qsketch_add(qsketch *q, double x)
{
    if (!q->sketching && q->n == QSKETCH_EXACT) { /* the kept values move into the buckets */
        for (uint64_t i = 0; i < q->n; i++)
            if (qs_sketch(q, q->exact[i])) return -1;
        free(q->exact);
        q->exact = NULL;
        q->cap = 0;
        q->sketching = 1;
    }
    if (q->sketching) {
        if (qs_sketch(q, x)) return -1;
    } else {
        if (q->n == q->cap) { /* doubling: a 10-step run keeps 64 values, not 65,536 */
            size_t cap = q->cap ? 2 * q->cap : 64;
            double *grown = realloc(q->exact, cap * sizeof *grown);
            if (!grown) return -1;
            q->exact = grown;
            q->cap = cap;
        }
        q->exact[q->n] = x;
    }
    if (q->n == 0 || x < q->min) q->min = x;
    if (q->n == 0 || x > q->max) q->max = x;
    q->n++;
    return 0;
}

static int qs_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The value standing for the rank-th smallest (0-based): its bucket's representative. */
static double qs_at(const qsketch *q, uint64_t rank)
{
    const double gamma = exp(q->log_gamma);
    for (size_t i = q->neg.len; i-- > 0;) { /* most negative first */
        if (rank < q->neg.count[i])
            return -2 * exp((double)(q->neg.lo + (long)i) * q->log_gamma) / (gamma + 1);
        rank -= q->neg.count[i];
    }
    if (rank < q->zeros) return 0;
    rank -= q->zeros;
    for (size_t i = 0; i < q->pos.len; i++) {
        if (rank < q->pos.count[i])
            return 2 * exp((double)(q->pos.lo + (long)i) * q->log_gamma) / (gamma + 1);
        rank -= q->pos.count[i];
    }
    return q->max;
}

double qsketch_quantile(qsketch *q, double p)
{
    if (q->n == 0) return 0;
    double pos = p * (double)(q->n - 1);
    uint64_t i = (uint64_t)pos;
    double f = pos - (double)i, lo, hi;
    if (!q->sketching) {
        qsort(q->exact, (size_t)q->n, sizeof *q->exact, qs_cmp);
        if (i + 1 >= q->n) return q->exact[q->n - 1];
        return q->exact[i] + f * (q->exact[i + 1] - q->exact[i]);
    }
    lo = qs_at(q, i);
    hi = i + 1 < q->n ? qs_at(q, i + 1) : lo;
    double v = lo + f * (hi - lo);
    return v < q->min ? q->min : v > q->max ? q->max : v; /* the true quantile lies inside */
}
