/* sweeprow.c: see sweeprow.h. */
#include "sweeprow.h"

#include <math.h>

#include "csv.h"
#include "jw.h"

void sweeprow_values(const scenario *s, int graphs, const run_summary *r, sweeprow_val *v,
                     char marks[SWEEPROW_MARKS_MAX])
{
    const run_breakdown *b = &r->breakdown;
    int i = 0;
#define SV_S(n, x) v[i++] = (sweeprow_val){n, SWEEPROW_STR, x, 0, 0}
#define SV_I(n, x)                                                                                 \
    v[i++] = (sweeprow_val)                                                                        \
    {                                                                                              \
        n, SWEEPROW_INT, NULL, (unsigned long long)(x), 0                                          \
    }
#define SV_M(n, x)                                                                                 \
    v[i++] = (sweeprow_val)                                                                        \
    {                                                                                              \
        n, SWEEPROW_MS, NULL, 0, (x)*1e3                                                           \
    }
    SV_S("scenario", s->name);
    SV_S("model", s->model.name);
    SV_S("hardware", s->hw.name);
    SV_S("mode", graphs ? "graphs" : "eager");
    SV_S("graph_mode", scenario_graph_mode(s, graphs));
    SV_S("serving_engine", s->engine); /* the engine whose host model priced the row */
    SV_I("tp", r->req.tp);
    SV_I("batch", r->req.batch);
    SV_I("ctx", r->req.ctx);
    SV_I("steps", r->req.steps);
    SV_I("seed", r->req.seed);
    SV_M("step_ms_mean", r->step_mean);
    SV_M("step_ms_p50", r->step_p50);
    SV_M("step_ms_p99", r->step_p99);
    SV_M("step_ms_min", r->step_min);
    SV_M("step_ms_max", r->step_max);
    SV_M("host_ms", b->host);
    SV_M("compute_ms", b->compute);
    SV_M("allreduce_ms", b->allreduce);
    SV_M("wait_peers_ms", b->wait_peers);
    SV_M("gpu_idle_ms", b->gpu_idle);
    SV_M("offset_ms", b->offset);
    SV_I("kernels_per_step", r->kernels_per_step);
    SV_I("allreduces_per_step", r->allreduces_per_step);
    /* memory per rank, as run reports it (the names of docs/json.md) */
    v[i++] = (sweeprow_val){"weights_gb_per_rank", SWEEPROW_GB, NULL, 0, r->weight_bytes / 1e9};
    v[i++] = (sweeprow_val){"kv_cache_gb_per_rank", SWEEPROW_GB, NULL, 0, r->kv_bytes / 1e9};
    v[i++] =
        (sweeprow_val){"fits_in_hbm", SWEEPROW_BOOL, NULL, (unsigned long long)r->fits_in_hbm, 0};
    /* where the all-reduce cost came from, and how a calibration of other hardware was
     * borrowed (NULL: none at TP-1 / its own hardware's): CSV empty, JSON null */
    SV_S("calibration", r->calibration ? r->calibration->path : NULL);
    SV_S("calibration_borrowed", r->calibration_borrowed);
    /* and where the GPU ops' times came from: the kernel calibration (NULL: the roofline) */
    SV_S("kernel_calibration", r->kernels ? r->kernels->path : NULL);
    SV_S("kernel_calibration_borrowed", r->kernels_borrowed);
    /* the cell against the scenario's validated domain (domain.h): marks "" when inside */
    domain_cell dc = {r->req.tp, r->req.batch, r->req.ctx, graphs, s->hw.name, s->model.name};
    domain_report dr;
    domain_check(s, &dc, &dr);
    domain_join(&dr, marks, SWEEPROW_MARKS_MAX - DOMAIN_STATEMENT_MAX);
    v[i++] = (sweeprow_val){"in_domain", SWEEPROW_BOOL, NULL, (unsigned long long)dr.inside, 0};
    SV_S("domain_marks", marks);
    char *what = marks + SWEEPROW_MARKS_MAX - DOMAIN_STATEMENT_MAX;
    SV_S("validated_domain", domain_statement(s, what, DOMAIN_STATEMENT_MAX) ? what : NULL);
#undef SV_S
#undef SV_I
#undef SV_M
}

void sweeprow_csv(FILE *f, const sweeprow_val *v)
{
    if (v->kind == SWEEPROW_STR)
        csv_put(f, v->s ? v->s : "");
    else if (v->kind == SWEEPROW_INT)
        fprintf(f, "%llu", v->u);
    else if (v->kind == SWEEPROW_MS || v->kind == SWEEPROW_GB)
        fprintf(f, "%.6f", v->ms);
    else
        fputs(v->u ? "true" : "false", f);
}

void sweeprow_json(jw *w, const sweeprow_val *v)
{
    if (v->kind == SWEEPROW_STR)
        jw_kstr(w, v->name, v->s); /* NULL: null */
    else if (v->kind == SWEEPROW_INT)
        jw_kuint(w, v->name, v->u);
    else if (v->kind == SWEEPROW_MS || v->kind == SWEEPROW_GB)
        jw_knum(w, v->name, v->ms);
    else
        jw_kbool(w, v->name, (int)v->u);
}
