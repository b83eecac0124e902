/* trace_names.h: what kernel and Python-function names in a trace mean, the vocabulary
 * shared by the trace readers (trace_kineto.c filters events by it) and the analysis.
 *
 * Contract: pure functions of a name. tr_classify puts a GPU activity into a kernel class by
 * name fragments (NCCL, RCCL and vLLM's custom all-reduce are collectives, a "copy" never
 * is; attention, norms, GEMM libraries; the rest elementwise); tr_phase_of maps vLLM's
 * Python function events to the host phases of phase.h. Adding a kernel library or a vLLM
 * version's function names is a table entry in trace_names.c.
 */
#ifndef TPSIM_TRACE_NAMES_H
#define TPSIM_TRACE_NAMES_H

#include <stddef.h>

#include "trace_data.h"

typedef enum tr_class {
    TRC_GEMM, TRC_ATTENTION, TRC_NORM, TRC_ELEMENTWISE, TRC_COLLECTIVE, TRC_COPY, TRC_COUNT
} tr_class;

const char *tr_class_name(tr_class c);
/* The host phase (phase.h index) a Python function event times, from its name
 * ("vllm/v1/worker/gpu_model_runner.py(1518): _prepare_inputs"), or -1. */
int tr_phase_of(const char *name);
/* Whether an event's raw JSON text may be such an event (a cheap test before parsing). */
int tr_phase_maybe(const char *raw, size_t len);
/* The functions that time each phase, for the report: "_update_states, _prepare_inputs". */
const char *tr_phase_functions(int phase);

/* The class of a GPU activity from its kind and kernel name. */
tr_class tr_classify(const char *name, tr_gpu_kind kind);

#endif
