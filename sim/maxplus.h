/* maxplus.h: the engine's fast path, a max-plus recursion over the step program with no
 * event queue.
 *
 * Contract: for every config maxplus_supports accepts, maxplus_run delivers per-rank step
 * accounts bit-identical to the event engine's (same draws in the same order per rank: each
 * rank's draws depend only on its own program order, never on how ranks interleave; the
 * same floating-point operations in the same order, both taken from engine_rules.h). It
 * visits ops in program order and ranks inside each op, keeping per rank the host clock, the
 * stream's last end and a ring of the last queue_depth op ends (an op holds its queue slot
 * until it ends); a collective ends on every rank at the latest arrival plus its gpu_s.
 * Memory is O(k * min(queue_depth, ops)); steps go to engine_deliver as they end. Event
 * counts: the events the event engine would push, except that a rank reaching rank 0's
 * broadcast time exactly (a tie) is counted as not waiting, where the event engine's count
 * depends on event order.
 * It refuses (maxplus_supports == 0) what it does not model: the fields of engine_config in
 * maxplus.c's refusal list (a trace sink), op kinds it does not know, negative launch
 * latencies; engine_run (its only caller) then runs the event engine. maxplus.c lists the
 * fields it honours and refuses, so a new field it does not handle is a build error.
 */
#ifndef TPSIM_MAXPLUS_H
#define TPSIM_MAXPLUS_H

#include "engine.h"

int maxplus_supports(const engine_config *c);
/* Why the recursion does not model c (one clause, a static string), or NULL where it does. */
const char *maxplus_refusal(const engine_config *c);
/* out is set up by engine_run (counts, method, rank_steps when kept); returns 0 or -1 with err
 * set (out of memory). */
int maxplus_run(const engine_config *c, engine_result *out, tp_err *err);

#endif
