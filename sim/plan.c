/* plan.c: see plan.h. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

int plan_bytes(const scenario *s, long tp, long ctx, double *weights, double *kv_seq, tp_err *err)
{
    prog p;
    memset(&p, 0, sizeof p);
    if (prog_build(&p, &s->model, &s->program, tp, 1, ctx, err)) return -1;
    *weights = p.weight_bytes;
    *kv_seq = p.kv_bytes; /* batch 1: one sequence's cache, read whole every step */
    prog_free(&p);
    return 0;
}

typedef struct plan_job {
    const plan_spec *sp;
    plan_result *r;
} plan_job;

static int plan_cell(void *ctx, size_t i, tp_err *err)
{
    plan_job *j = ctx;
    plan_row *row = &j->r->rows[i];
    const plan_cfg *c = &j->r->cfgs[row->cfg];
    const scenario *s = &j->sp->scn[c->scn];
    run_request req = row->sum.req;
    if (run_cell(s, &req, &row->sum, NULL, err) || run_check_step(s, &row->sum, err)) return -1;
    double step = row->sum.step_mean;
    row->tok_s_gpu = (double)req.batch / (step * (double)req.tp);
    row->tok_s_total = row->tok_s_gpu * (double)j->sp->gpus;
    row->meets = step <= j->sp->target_s;
    return 0;
}

int plan_search(const plan_spec *sp, plan_result *out, tp_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n_cfgs = (size_t)sp->n_scn * sp->n_tp * sp->n_ctx, cells = 0, rows = 0;
    out->cfgs = calloc(n_cfgs ? n_cfgs : 1, sizeof *out->cfgs);
    if (!out->cfgs) return tp_err_set(err, "out of memory");
    for (int m = 0; m < sp->n_scn; m++)
        for (size_t a = 0; a < sp->n_tp; a++)
            for (size_t c = 0; c < sp->n_ctx; c++) {
                plan_cfg *g = &out->cfgs[out->n_cfgs++];
                g->scn = m, g->tp = sp->tps[a], g->ctx = sp->ctxs[c], g->pick = -1;
                const scenario *s = &sp->scn[m];
                if (run_check_tp(s, g->tp, err) ||
                    plan_bytes(s, g->tp, g->ctx, &g->weight_bytes, &g->kv_seq_bytes, err))
                    goto fail;
                g->kv_free_bytes =
                    sp->mem_util * s->hw.hbm_bytes - g->weight_bytes - sp->reserve_bytes;
                double fit = g->kv_free_bytes > 0 ? floor(g->kv_free_bytes / g->kv_seq_bytes) : 0;
                g->max_batch = fit < (double)sp->batch_max ? (long)fit : sp->batch_max;
                g->cell0 = cells;
                cells += (size_t)g->max_batch;
            }
    out->n_cells = cells;
    for (size_t c = 0; c < cells; c++)
        if (!sp->n_shards || (long)(c % (size_t)sp->n_shards) == sp->shard) rows++;
    out->rows = calloc(rows ? rows : 1, sizeof *out->rows);
    if (!out->rows) {
        tp_err_set(err, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < out->n_cfgs; i++) {
        plan_cfg *g = &out->cfgs[i];
        const scenario *s = &sp->scn[g->scn];
        g->row0 = out->n_rows;
        for (long b = 1; b <= g->max_batch; b++) {
            size_t cell = g->cell0 + (size_t)(b - 1);
            if (sp->n_shards && (long)(cell % (size_t)sp->n_shards) != sp->shard) continue;
            plan_row *row = &out->rows[out->n_rows++];
            run_request req = sp->req;
            req.tp = g->tp, req.batch = b, req.ctx = g->ctx;
            if (!sp->seed_given) req.seed = s->seed;
            row->cfg = i, row->cell = cell;
            row->sum.req = run_defaults(s, req);
        }
        g->n_rows = out->n_rows - g->row0;
    }
    plan_job job = {sp, out};
    if (par_map(out->n_rows, sp->jobs, plan_cell, &job, sp->progress, err)) goto fail;
    for (size_t i = 0; i < out->n_cfgs; i++) {
        plan_cfg *g = &out->cfgs[i];
        for (size_t k = g->row0; k < g->row0 + g->n_rows; k++)
            if (out->rows[k].meets &&
                (g->pick < 0 || out->rows[k].tok_s_gpu > out->rows[g->pick].tok_s_gpu))
                g->pick = (long)k;
    }
    return 0;
fail:
    plan_free(out);
    return -1;
}

void plan_free(plan_result *r)
{
    free(r->cfgs);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

int plan_cmp(const plan_result *r, size_t a, size_t b)
{
    const plan_row *x = &r->rows[r->cfgs[a].pick], *y = &r->rows[r->cfgs[b].pick];
    if (x->tok_s_gpu != y->tok_s_gpu) return x->tok_s_gpu > y->tok_s_gpu ? -1 : 1;
    if (x->sum.step_mean != y->sum.step_mean) return x->sum.step_mean < y->sum.step_mean ? -1 : 1;
    if (r->cfgs[a].tp != r->cfgs[b].tp) return r->cfgs[a].tp < r->cfgs[b].tp ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
}

size_t plan_rank(const plan_result *r, long ctx, size_t *order)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_cfgs; i++)
        if (r->cfgs[i].ctx == ctx && r->cfgs[i].pick >= 0) order[n++] = i;
    /* insertion sort: a few dozen configurations, and a stable, total order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && plan_cmp(r, order[j - 1], order[j]) > 0; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return n;
}

/* a row of one ctx with its sort keys, so qsort needs no context */
typedef struct plan_key {
    double step, tok;
    size_t row;
} plan_key;

static int plan_key_cmp(const void *a, const void *b)
{
    const plan_key *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->tok != y->tok) return x->tok > y->tok ? -1 : 1;
    return x->row < y->row ? -1 : 1;
}

size_t plan_pareto(const plan_result *r, long ctx, size_t *rows)
{
    size_t n = 0, kept = 0;
    plan_key *k = malloc((r->n_rows ? r->n_rows : 1) * sizeof *k);
    if (!k) return 0;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->cfgs[r->rows[i].cfg].ctx == ctx)
            k[n++] = (plan_key){r->rows[i].sum.step_mean, r->rows[i].tok_s_gpu, i};
    qsort(k, n, sizeof *k, plan_key_cmp);
    /* by step, a row is on the frontier when it beats every faster row's tokens/s per GPU */
    double best = -1;
    for (size_t i = 0; i < n; i++)
        if (k[i].tok > best) {
            best = k[i].tok;
            rows[kept++] = k[i].row;
        }
    free(k);
    return kept;
}

plan_cap plan_cap_of(const plan_result *r, size_t cfg, long batch_max)
{
    const plan_cfg *g = &r->cfgs[cfg];
    long b = g->pick < 0 ? 0 : r->rows[g->pick].sum.req.batch;
    if (b < g->max_batch) return PLAN_LATENCY_CAPPED;
    return g->max_batch == batch_max ? PLAN_BATCH_CAPPED : PLAN_MEMORY_CAPPED;
}
