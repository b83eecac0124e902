/* engine.c: engine_run, the one caller that chooses an engine back end (engine.h): it
 * checks the config, sets up the result both back ends fill, and runs the event engine
 * (engine_events.h) or the max-plus recursion (maxplus.h). The back ends know neither each
 * other nor this file. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "engine_events.h"
#include "maxplus.h"

static int engine_check(const engine_config *c, tp_err *err)
{
    if (!c->program || !c->host) return tp_err_set(err, "engine: no program or host model");
    if (c->tp < 1 || c->tp != c->program->tp)
        return tp_err_set(err, "engine: tp %ld does not match the program's %ld", c->tp,
                          c->program->tp);
    if (c->steps < 1 || c->warmup < 0) return tp_err_set(err, "engine: steps must be >= 1");
    if (c->queue_depth < 1) return tp_err_set(err, "engine: queue_depth must be >= 1");
    if (c->program->n == 0 || c->program->n > UINT32_MAX)
        return tp_err_set(err, "engine: empty program");
    return 0;
}

int engine_run(const engine_config *c, engine_result *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    if (engine_check(c, err)) return -1;
    const char *refused = maxplus_refusal(c);
    int fast = c->method != ENGINE_EVENTS && !refused;
    if (c->method == ENGINE_MAXPLUS && !fast)
        return tp_err_set(err, "engine: the max-plus path does not model this config: %s", refused);
    out->tp = c->tp;
    out->steps = c->steps;
    out->warmup = c->warmup;
    if (!c->on_step) {
        size_t n = (size_t)(c->steps + c->warmup) * (size_t)c->tp;
        out->rank_steps = calloc(n, sizeof *out->rank_steps);
        if (!out->rank_steps) return tp_err_set(err, "engine: out of memory");
    }
    int rc;
    if (fast) {
        out->method = ENGINE_MAXPLUS;
        out->method_why = c->method == ENGINE_MAXPLUS
                              ? "asked for"
                              : "it models this config (no trace, known op kinds, launch latency "
                                ">= 0) and is bit-identical to the event engine";
        rc = maxplus_run(c, out, err);
    } else {
        out->method = ENGINE_EVENTS;
        out->method_why =
            c->method == ENGINE_EVENTS ? "asked for (the reference semantics)" : refused;
        rc = engine_events_run(c, out, err);
    }
    if (rc) engine_result_free(out);
    return rc;
}

void engine_result_free(engine_result *r)
{
    free(r->rank_steps);
    memset(r, 0, sizeof *r);
}
