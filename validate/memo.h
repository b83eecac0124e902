/* memo.h: the objective values a validation has already computed, so a second protocol (or
 * any later search) whose calibration cells are the same reuses them instead of simulating
 * again.
 *
 * Contract: a vmemo maps (free-parameter values, the ordered grid indices of the calibration
 * cells) to an objective value, exactly: keys compare bit for bit, so a hit returns what the
 * simulation gave for those very inputs and the output does not change. It is valid only
 * among runs of one scenario, one set of --set/--calib options and one grid (the caller's
 * promise: cmd_validate shares one across the protocols of a single invocation). Owned by the
 * caller (vmemo_new / vmemo_free); not thread-safe (the objective runs on one thread, its
 * cells on many). vmemo_put may fail only for memory, which loses nothing but the reuse.
 */
#ifndef TPSIM_MEMO_H
#define TPSIM_MEMO_H

#include <stddef.h>

typedef struct vmemo vmemo;

vmemo *vmemo_new(void);
void vmemo_free(vmemo *m);
/* 1 and *value on a hit, 0 on a miss */
int vmemo_get(vmemo *m, const double *x, int n, const size_t *cal, int n_cal, double *value);
/* 0, or -1 when out of memory (the value is then simply not kept) */
int vmemo_put(vmemo *m, const double *x, int n, const size_t *cal, int n_cal, double value);
/* lookups answered and values kept, for tests */
size_t vmemo_hits(const vmemo *m);
size_t vmemo_size(const vmemo *m);

#endif
