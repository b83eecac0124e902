/* trace_stats.h: what an imported trace says about its decode steps.
 *
 * Contract: tr_analyze reads a tr_trace (sorting its records in place) and fills a
 * caller-owned tr_report (free with tr_report_free):
 *  - pairing: each GPU activity is paired with the host call of the same correlation id
 *    (an ac2g flow supplies the id where the record has none); kernels that share one
 *    cudaGraphLaunch/hipGraphLaunch correlation are that graph launch's kernels;
 *  - steps: host annotations whose name matches the marker (default vLLM's "^execute_"),
 *    or, with no marker in a rank, runs of GPU activity split at idle gaps (a gap longer
 *    than TR_GAP_MIN_NS and TR_GAP_FACTOR x the median gap); a GPU activity belongs to the
 *    step whose marker contains the start of its launching call (its own start if unpaired);
 *  - per step: counts, GPU busy (union over streams) and idle over the step's span,
 *    launch-call durations and host gaps between launches (mean, CV, p50, p99), the host
 *    work from the step's last GPU activity to the next step's first launch, and GPU time
 *    per kernel class with achieved bytes/s where the launching op recorded its input
 *    shapes. Totals cover the whole trace, all ranks. Times are nanoseconds.
 */
#ifndef TPSIM_TRACE_STATS_H
#define TPSIM_TRACE_STATS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "phase.h"
#include "trace_data.h"
#include "trace_names.h"

#define TR_GAP_MIN_NS 1000000 /* 1 ms: assumed; decode steps are separated by host work */
#define TR_GAP_FACTOR 20.0    /* assumed: a step gap dwarfs the launch gaps inside a step */


typedef struct tr_dstat {
    size_t n;
    double mean, cv, p50, p99; /* ns; cv is std/mean (population), 0 when n < 2 */
} tr_dstat;

typedef struct tr_counts {
    size_t kernels, memcpys, collectives, graph_launches, launches, unpaired;
    int64_t class_ns[TRC_COUNT];
    double class_bytes[TRC_COUNT];     /* bytes of the kernels whose op recorded shapes */
    int64_t class_bytes_ns[TRC_COUNT]; /* GPU time of those kernels */
} tr_counts;

typedef struct tr_step {
    long rank, index;
    int64_t start, end, gpu_busy, gpu_idle;
    int has_host_work;
    int64_t host_work;
    tr_counts c;
    tr_dstat launch_call, launch_gap;
    /* vLLM's host phases (phase.h) timed by the Python function events inside the step
     * (a with_stack trace): their summed durations, and whether any was there */
    int64_t phase_ns[PHASE_N];
    uint8_t has_phase[PHASE_N];
} tr_step;

typedef struct tr_api {
    uint32_t name;
    tr_dstat dur;
} tr_api;

typedef struct tr_report {
    size_t ranks;
    tr_counts total;
    size_t flows, flows_unmatched;
    const char *step_source;  /* "marker", "idle gaps" */
    tr_step *steps;           /* by start time, then rank */
    size_t n_steps;
    tr_dstat launch_call, launch_gap, host_work, kernel_dur; /* over every step */
    tr_dstat launch_interval; /* start to start of consecutive launches on a thread, in steps */
    int64_t kernel_fixed_ns;  /* 5th percentile of non-collective kernel durations in steps */
    tr_api *apis;             /* launch calls by API name, in steps */
    tr_dstat phase[PHASE_N];  /* per step, over the steps where the phase's functions ran */
    size_t n_apis;
} tr_report;

typedef struct tr_options {
    const regex_t *marker; /* NULL: vLLM's ^execute_ */
} tr_options;

int tr_analyze(tr_trace *t, const tr_options *o, tr_report *out, tp_err *err);
void tr_report_free(tr_report *r);
/* Stats of n values (sorted in place). */
tr_dstat tr_stats(double *v, size_t n);

#endif
