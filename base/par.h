/* par.h: run n independent jobs on a pool of threads (POSIX threads), with a progress line.
 *
 * Contract: par_map calls fn(ctx, i, err) once for every i in 0..n-1, on up to `jobs`
 * threads (jobs <= 0: one per online core; never more threads than jobs). fn must write
 * only its own i's results. Indices are handed out in increasing order, so when the jobs
 * fail the one reported (its message copied to err, return -1) is the lowest failing
 * index, the same one a serial run reports; after a failure no higher index starts.
 * Each job gets its own tp_err. Results therefore do not depend on the thread count.
 * With a progress label and a terminal on stderr, a line "label: done/total  ETA ..."
 * is redrawn on stderr as jobs end and cleared at the end; otherwise nothing is printed.
 */
#ifndef TPSIM_PAR_H
#define TPSIM_PAR_H

#include <stddef.h>

#include "err.h"

typedef int (*par_fn)(void *ctx, size_t i, tp_err *err);

/* progress: NULL for none; shown only when stderr is a terminal */
int par_map(size_t n, int jobs, par_fn fn, void *ctx, const char *progress, tp_err *err);
/* A team: jobs - 1 threads (jobs <= 0: one per core) started once and kept asleep between
 * batches, for callers that map many small batches (validate's fit evaluations); the caller's
 * thread is the last worker. par_team_map is par_map on the team (same order, same errors,
 * same results); one batch at a time, from one caller thread. NULL when out of memory. */
typedef struct par_team par_team;
par_team *par_team_new(int jobs);
int par_team_map(par_team *t, size_t n, par_fn fn, void *ctx, const char *progress, tp_err *err);
void par_team_free(par_team *t);
/* Its threads, the caller included: jobs (or the cores) as asked, fewer only when a thread
 * could not be started. */
int par_team_size(const par_team *t);
/* par_team_map (no progress line) whose jobs are told which thread runs them, a worker index
 * 0..par_team_size(t)-1 (the caller's is the last), so each may use scratch of its own
 * thread's (validate's per-thread scenario documents). Which thread runs which job varies
 * from run to run: what a job writes must not depend on it. */
typedef int (*par_fn_w)(void *ctx, size_t i, int worker, tp_err *err);
int par_team_map_w(par_team *t, size_t n, par_fn_w fn, void *ctx, tp_err *err);
/* The number of online cores (at least 1): the default for --jobs. */
int par_cores(void);

#endif
