/* engine_events.h: the event engine, the reference back end of engine.h's model.
 *
 * Contract: engine_events_run computes engine.h's model with an event queue (evq.h): each
 * rank a host state machine plus one stream. It honours every field of engine_config
 * (engine_events.c lists them for ENGINE_BACKEND_FIELDS), is the only back end that writes a trace,
 * and takes its decisions from engine_rules.h, as maxplus.c does. Called by engine_run only,
 * which has checked the config and set up out (counts, method, rank_steps when kept); fills
 * out->events and the steps; returns 0, or -1 with err set (out of memory, or a deadlock,
 * which a checked config cannot reach). engine_run frees out on failure.
 */
#ifndef TPSIM_ENGINE_EVENTS_H
#define TPSIM_ENGINE_EVENTS_H

#include "engine.h"

int engine_events_run(const engine_config *c, engine_result *out, tp_err *err);

#endif
