/* trace.h: the simulated timeline as Chrome trace-event JSON (opens in Perfetto and
 * chrome://tracing).
 *
 * Contract: trace_write emits one process per rank ("rank R"), one thread for its host
 * (tid 0) and one per stream (tid 1: the compute stream), and one complete ("X") event per
 * engine slice, named after the op (vLLM's module names) with its step, layer and bytes
 * as args; times in microseconds as the format requires.
 */
#ifndef TPSIM_TRACE_H
#define TPSIM_TRACE_H

#include <stdio.h>

#include "engine.h"
#include "prog.h"

void trace_write(FILE *f, const engine_result *res, const prog *p, const char *title);

#endif
