/* plan_out.c: see plan_out.h. */
#include "plan_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "domain.h"
#include "jw.h"
#include "sweeprow.h"

#define PLAN_GB 1e9

static const scenario *plan_out_scn(const plan_view *v, size_t cfg)
{
    return &v->sp->scn[v->r->cfgs[cfg].scn];
}

void plan_out_name(const plan_view *v, size_t cfg, char *out, size_t cap)
{
    const plan_cfg *g = &v->r->cfgs[cfg];
    snprintf(out, cap, "%s TP-%ld %s", plan_out_scn(v, cfg)->hw.name, g->tp,
             v->graphs[g->scn] ? "graphs" : "eager");
}

void plan_out_marks(const plan_view *v, size_t row, char *out, size_t cap)
{
    const plan_row *w = &v->r->rows[row];
    const plan_cfg *g = &v->r->cfgs[w->cfg];
    const scenario *s = plan_out_scn(v, w->cfg);
    /* the same words as run and sweep (domain.h), then what only plan knows */
    domain_cell dc = {w->sum.req.tp, w->sum.req.batch, w->sum.req.ctx, v->graphs[g->scn],
                      s->hw.name, s->model.name};
    domain_report dr;
    char dm[SWEEPROW_MARKS_MAX];
    domain_check(s, &dc, &dr);
    domain_join(&dr, dm, sizeof dm);
    const char *m = v->marks[w->cfg];
    snprintf(out, cap, "%s%s%s", dm, dm[0] && m[0] ? "; " : "", m);
}

long plan_out_closest(const plan_result *r, long ctx)
{
    long best = -1;
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->cfgs[r->rows[i].cfg].ctx == ctx &&
            (best < 0 || r->rows[i].sum.step_mean < r->rows[best].sum.step_mean))
            best = (long)i;
    return best;
}

size_t plan_out_shown(const plan_view *v, long ctx, size_t *rows)
{
    size_t *order = malloc((v->r->n_cfgs ? v->r->n_cfgs : 1) * sizeof *order), n = 0;
    if (!order) return 0;
    size_t k = plan_rank(v->r, ctx, order);
    for (size_t i = 0; i < k && i < (size_t)v->top; i++)
        rows[n++] = (size_t)v->r->cfgs[order[i]].pick;
    /* the runner-up is always shown: the answer compares it with the winner */
    if (k >= 2 && v->top < 2) rows[n++] = (size_t)v->r->cfgs[order[1]].pick;
    free(order);
    if (k == 0) {
        long c = plan_out_closest(v->r, ctx);
        if (c >= 0) rows[n++] = (size_t)c;
    }
    return n;
}

void plan_out_tok_interval(const plan_view *v, size_t row, double *lo, double *hi)
{
    const plan_row *w = &v->r->rows[row];
    double k = (double)w->sum.req.tp, b = (double)w->sum.req.batch;
    double plo = v->pred_lo[row], phi = v->pred_hi[row];
    *lo = isnan(phi) ? NAN : b / (phi * 1e-3 * k);
    *hi = isnan(plo) || plo <= 0 ? NAN : b / (plo * 1e-3 * k);
}

int plan_out_separable(const plan_view *v, size_t a, size_t b, char *out, size_t cap)
{
    const plan_row *x = &v->r->rows[a], *y = &v->r->rows[b];
    char na[96], nb[96];
    plan_out_name(v, x->cfg, na, sizeof na);
    plan_out_name(v, y->cfg, nb, sizeof nb);
    double alo, ahi, blo, bhi;
    plan_out_tok_interval(v, a, &alo, &ahi);
    plan_out_tok_interval(v, b, &blo, &bhi);
    double gain = 100.0 * (x->tok_s_gpu / y->tok_s_gpu - 1.0);
    if (isnan(alo) || isnan(blo)) {
        snprintf(out, cap, "%s beats %s by %.0f%% (no intervals)", na, nb, gain);
        return 0;
    }
    /* the half-widths relative to each value, added in quadrature: the spread of the ratio
     * if the two errors were independent (they share the fit, so this overstates it) */
    double ra = 0.5 * (ahi - alo) / x->tok_s_gpu, rb = 0.5 * (bhi - blo) / y->tok_s_gpu;
    double pm = 100.0 * sqrt(ra * ra + rb * rb) * (x->tok_s_gpu / y->tok_s_gpu);
    int sep = gain > pm;
    if (x->tok_s_gpu == y->tok_s_gpu)
        snprintf(out, cap, "%s ties with %s (%.1f tokens/s per GPU each): not separable", na, nb,
                 x->tok_s_gpu);
    else
        snprintf(out, cap, "%s beats %s by %.1f%% \xc2\xb1 %.1f%%: %s", na, nb, gain, pm,
                 sep ? "separable" : "not separable");
    return sep;
}

/* ------------------------------------------------------------------ CSV ---------- */

static const char *const plan_out_cols[] = {"gpus",
                                            "replicas",
                                            "target_ms",
                                            "meets_target",
                                            "tokens_per_s_per_gpu",
                                            "tokens_per_s_total",
                                            "kv_cache_free_gb_per_rank",
                                            "max_batch",
                                            "bound",
                                            "cell_marks",
                                            NULL};

static void plan_out_csv_row(FILE *f, const plan_view *v, size_t i)
{
    const plan_row *w = &v->r->rows[i];
    const plan_cfg *g = &v->r->cfgs[w->cfg];
    const scenario *s = plan_out_scn(v, w->cfg);
    sweeprow_val sv[SWEEPROW_COLS];
    char dmarks[SWEEPROW_MARKS_MAX];
    sweeprow_values(s, v->graphs[g->scn], &w->sum, sv, dmarks);
    for (int c = 0; c < SWEEPROW_COLS; c++) {
        if (c) fputc(',', f);
        sweeprow_csv(f, &sv[c]);
    }
    /* weights and KV cache per rank are sweep's columns (sweeprow.h) */
    fprintf(f, ",%ld,%ld,%.6f,%s,%.6f,%.6f,%.6f,%ld,", v->sp->gpus, v->sp->gpus / g->tp,
            v->sp->target_s * 1e3, w->meets ? "true" : "false", w->tok_s_gpu, w->tok_s_total,
            g->kv_free_bytes / PLAN_GB, g->max_batch);
    csv_put(f, run_bound_name(run_bound_of(&w->sum)));
    fputc(',', f);
    char marks[PLAN_ROW_MARKS_MAX];
    plan_out_marks(v, i, marks, sizeof marks);
    csv_put(f, marks);
    fputc('\n', f);
}

void plan_out_csv(FILE *f, const plan_view *v)
{
    sweeprow_val sv[SWEEPROW_COLS];
    char dmarks[SWEEPROW_MARKS_MAX];
    run_summary none;
    memset(&none, 0, sizeof none);
    sweeprow_values(&v->sp->scn[0], 0, &none, sv, dmarks); /* the names */
    for (int c = 0; c < SWEEPROW_COLS; c++) fprintf(f, "%s%s", c ? "," : "", sv[c].name);
    for (int c = 0; plan_out_cols[c]; c++) fprintf(f, ",%s", plan_out_cols[c]);
    fputc('\n', f);
    for (size_t i = 0; i < v->r->n_rows; i++) plan_out_csv_row(f, v, i);
}

/* ------------------------------------------------------------------ text --------- */

/* "GPU-bound (of the 25.10 ms step: compute 62%, all-reduce and waiting for peers 20%, GPU
 * waiting on launches 3%, on the per-step host work 9%)" */
static void plan_out_why_bound(const plan_row *w, char *out, size_t cap)
{
    const run_breakdown *b = &w->sum.breakdown;
    double st = w->sum.step_mean - b->offset, work, wait; /* run_bound_of's denominator */
    run_idle_split(&w->sum, &work, &wait);
    char offset[48] = "";
    if (b->offset != 0)
        snprintf(offset, sizeof offset, " (its %.2f ms offset aside)", b->offset * 1e3);
    snprintf(out, cap,
             "%s (of the %.2f ms step%s: compute %.0f%%, all-reduce and waiting for peers "
             "%.0f%%, GPU waiting on launches %.0f%%, on the per-step host work %.0f%%)",
             run_bound_name(run_bound_of(&w->sum)), st * 1e3, offset, 100 * b->compute / st,
             100 * (b->allreduce + b->wait_peers) / st, 100 * wait / st, 100 * work / st);
}

/* why the batch stops where it does */
static void plan_out_why_cap(const plan_view *v, size_t cfg, char *out, size_t cap)
{
    const plan_cfg *g = &v->r->cfgs[cfg];
    const plan_row *w = &v->r->rows[g->pick];
    double slack = (v->sp->target_s - w->sum.step_mean) * 1e3;
    plan_cap c = plan_cap_of(v->r, cfg, v->sp->batch_max);
    if (c == PLAN_MEMORY_CAPPED)
        snprintf(out, cap,
                 "memory-capped: %ld sequences of %ld tokens fill the %.1f GB of KV cache "
                 "per GPU (%.2f ms under the target)",
                 g->max_batch, g->ctx, g->kv_free_bytes / PLAN_GB, slack);
    else if (c == PLAN_BATCH_CAPPED)
        snprintf(out, cap, "batch-capped at --batch-max %ld (%.2f ms under the target)",
                 v->sp->batch_max, slack);
    else {
        size_t next = (size_t)g->pick + 1; /* the next batch of the same configuration */
        if (next < g->row0 + g->n_rows)
            snprintf(out, cap, "latency-capped: batch %ld would take %.2f ms",
                     v->r->rows[next].sum.req.batch, v->r->rows[next].sum.step_mean * 1e3);
        else
            snprintf(out, cap, "latency-capped");
    }
}

static void plan_out_text_row(FILE *f, const plan_view *v, size_t i, const char *rank,
                              const char *vs)
{
    const plan_row *w = &v->r->rows[i];
    const plan_cfg *g = &v->r->cfgs[w->cfg];
    char iv[48] = "", tiv[48] = "", marks[PLAN_ROW_MARKS_MAX];
    plan_out_marks(v, i, marks, sizeof marks);
    if (!isnan(v->pred_lo[i])) {
        double lo, hi;
        plan_out_tok_interval(v, i, &lo, &hi);
        snprintf(iv, sizeof iv, "[%.2f, %.2f]", v->pred_lo[i], v->pred_hi[i]);
        snprintf(tiv, sizeof tiv, "[%.4g, %.4g]", lo, hi);
    }
    fprintf(f, "  %-4s %-14s %-6s %3ld %8ld %6ld %8.2f %-16s %9.1f %-14s %-7s %11.0f  %-16s %s\n",
            rank, plan_out_scn(v, w->cfg)->hw.name, v->graphs[g->scn] ? "graphs" : "eager", g->tp,
            v->sp->gpus / g->tp, w->sum.req.batch, w->sum.step_mean * 1e3, iv, w->tok_s_gpu, tiv,
            vs, w->tok_s_total, run_bound_name(run_bound_of(&w->sum)), marks[0] ? marks : "-");
}

static void plan_out_text_pareto(FILE *f, const plan_view *v, long ctx)
{
    size_t *rows = malloc((v->r->n_rows ? v->r->n_rows : 1) * sizeof *rows);
    if (!rows) return;
    size_t n = plan_pareto(v->r, ctx, rows);
    fprintf(f,
            "  Pareto frontier (per-token latency vs tokens/s per GPU, %zu points), by latency:\n",
            n);
    /* runs of one configuration's consecutive batches, one line each */
    for (size_t i = 0; i < n;) {
        size_t j = i, cfg = v->r->rows[rows[i]].cfg;
        while (j + 1 < n && v->r->rows[rows[j + 1]].cfg == cfg) j++;
        const plan_row *a = &v->r->rows[rows[i]], *b = &v->r->rows[rows[j]];
        char name[96];
        plan_out_name(v, cfg, name, sizeof name);
        fprintf(f, "    %-26s batch %4ld..%-4ld %7.2f..%-7.2f ms %8.1f..%-8.1f tokens/s per GPU\n",
                name, a->sum.req.batch, b->sum.req.batch, a->sum.step_mean * 1e3,
                b->sum.step_mean * 1e3, a->tok_s_gpu, b->tok_s_gpu);
        i = j + 1;
    }
    free(rows);
}

/* Under a context's ranking: what does not fit, the closest when nothing meets the target, and
 * why the winner and the runner-up are where they are. */
static void plan_out_text_answer(FILE *f, const plan_view *v, long ctx, const size_t *order,
                                 size_t k)
{
    const plan_result *r = v->r;
    for (size_t i = 0; i < r->n_cfgs; i++) {
        const plan_cfg *g = &r->cfgs[i];
        if (g->ctx != ctx || g->max_batch > 0) continue;
        char name[96];
        plan_out_name(v, i, name, sizeof name);
        fprintf(f,
                "  does not fit: %s: weights %.1f GB + one sequence's KV cache %.2f GB > %.1f GB "
                "usable per GPU\n",
                name, g->weight_bytes / PLAN_GB, g->kv_seq_bytes / PLAN_GB,
                (g->kv_free_bytes + g->weight_bytes) / PLAN_GB);
    }
    char why[320], cap_why[256], name[96];
    if (k == 0) {
        long c = plan_out_closest(r, ctx);
        if (c >= 0) {
            plan_out_name(v, r->rows[c].cfg, name, sizeof name);
            plan_out_why_bound(&r->rows[c], why, sizeof why);
            fprintf(
                f,
                "  nothing meets the target; closest: %s batch %ld at %.2f ms (%.2f ms over): %s\n",
                name, r->rows[c].sum.req.batch, r->rows[c].sum.step_mean * 1e3,
                (r->rows[c].sum.step_mean - v->sp->target_s) * 1e3, why);
        } else {
            fprintf(f, "  nothing fits in memory at this context\n");
        }
    }
    for (size_t i = 0; i < k && i < 2; i++) {
        size_t cfg = order[i];
        const plan_row *w = &r->rows[r->cfgs[cfg].pick];
        plan_out_name(v, cfg, name, sizeof name);
        plan_out_why_bound(w, why, sizeof why);
        plan_out_why_cap(v, cfg, cap_why, sizeof cap_why);
        char marks[PLAN_ROW_MARKS_MAX];
        plan_out_marks(v, (size_t)r->cfgs[cfg].pick, marks, sizeof marks);
        fprintf(f, "  %-10s %s batch %ld: %s; %s%s%s\n", i ? "runner-up:" : "winner:", name,
                w->sum.req.batch, why, cap_why, marks[0] ? "; " : "", marks);
    }
}

static void plan_out_text_ctx(FILE *f, const plan_view *v, long ctx)
{
    const plan_result *r = v->r;
    size_t n_cfg = 0, n_fit = 0;
    for (size_t i = 0; i < r->n_cfgs; i++)
        if (r->cfgs[i].ctx == ctx) n_cfg++, n_fit += r->cfgs[i].max_batch > 0;
    size_t *order = malloc((r->n_cfgs ? r->n_cfgs : 1) * sizeof *order);
    size_t *shown = malloc((r->n_cfgs + 2) * sizeof *shown);
    if (!order || !shown) {
        free(order);
        free(shown);
        return;
    }
    size_t k = plan_rank(r, ctx, order), n_shown = plan_out_shown(v, ctx, shown);
    fprintf(f, "\nctx %ld: %zu of %zu configurations meet %.2f ms per token (%zu fit in memory)\n",
            ctx, k, n_cfg, v->sp->target_s * 1e3, n_fit);
    fprintf(f, "  %-4s %-14s %-6s %3s %8s %6s %8s %-16s %9s %-14s %-7s %11s  %-16s %s\n", "rank",
            "hardware", "mode", "tp", "replicas", "batch", "step_ms", "[95%]", "tok/s/GPU", "[95%]",
            "vs 1st", "total tok/s", "bound", "marks");
    for (size_t i = 0; i < n_shown; i++) {
        char rank[32];
        const char *vs = "-";
        if (k == 0)
            snprintf(rank, sizeof rank, "none");
        else {
            size_t pos = 0;
            while (pos < k && (size_t)r->cfgs[order[pos]].pick != shown[i]) pos++;
            /* equal tokens/s per GPU to the one above: a tie, ordered by the tie-breaks */
            int tie = pos > 0 && r->rows[r->cfgs[order[pos - 1]].pick].tok_s_gpu ==
                                     r->rows[shown[i]].tok_s_gpu;
            snprintf(rank, sizeof rank, "%zu%s", pos + 1, tie ? "=" : "");
            /* apart from the winner, or within the spread of the difference ("~") */
            char sentence[320];
            if (pos > 0 && !isnan(v->pred_lo[shown[i]]))
                vs = plan_out_separable(v, (size_t)r->cfgs[order[0]].pick, shown[i], sentence,
                                        sizeof sentence)
                         ? "apart"
                         : "~";
        }
        plan_out_text_row(f, v, shown[i], rank, vs);
    }
    if (k > (size_t)v->top && v->top >= 2)
        fprintf(f, "  ... %zu more (--top N, or -o FILE --format csv for every cell)\n",
                k - (size_t)v->top);
    plan_out_text_answer(f, v, ctx, order, k);
    if (k >= 2) {
        char sep[320];
        plan_out_separable(v, (size_t)r->cfgs[order[0]].pick, (size_t)r->cfgs[order[1]].pick, sep,
                           sizeof sep);
        fprintf(f, "  %s\n", sep);
    }
    plan_out_text_pareto(f, v, ctx);
    free(order);
    free(shown);
}

void plan_out_text(FILE *f, const plan_view *v)
{
    const plan_spec *sp = v->sp;
    const scenario *s = &sp->scn[0];
    fprintf(f, "tpsim plan: %s, %s on %ld GPUs, target %.2f ms per token\n", s->name, s->model.name,
            sp->gpus, sp->target_s * 1e3);
    fprintf(f, "engine: %s prices every row's host work (%s; host phases %s)\n", s->engine,
            s->engine_path[0] ? s->engine_path : "the scenario's own host model",
            phase_mode_name(s->phases.overlap));
    fprintf(f, "scope: one decode step at a fixed batch and context; no prefill interference, no "
               "queueing, no scheduler\n");
    fprintf(f, "memory: KV cache = %.2f x HBM - weights - %.2f GiB reserve per GPU\n", sp->mem_util,
            sp->reserve_bytes / (1024.0 * 1024 * 1024));
    fprintf(f, "intervals: %s\n", v->intervals_note);
    char what[DOMAIN_STATEMENT_MAX]; /* every row's marks are against this (domain.h) */
    if (domain_statement_words(s, what, sizeof what))
        fprintf(f, "tested: %s was tested on %s (each row's marks: where it lies outside)\n",
                s->name, what);
    else
        fprintf(f, "tested: %s was never tested against measurements: none backs any row\n",
                s->name);
    fprintf(f, "searched: %zu configurations, %zu cells (batch 1..%ld where the KV cache fits)\n",
            v->r->n_cfgs, v->r->n_cells, sp->batch_max);
    for (size_t c = 0; c < sp->n_ctx; c++) plan_out_text_ctx(f, v, sp->ctxs[c]);
}

/* ------------------------------------------------------------------ JSON --------- */

static void plan_out_json_row(jw *w, const plan_view *v, size_t i, long rank)
{
    const plan_row *row = &v->r->rows[i];
    const plan_cfg *g = &v->r->cfgs[row->cfg];
    sweeprow_val sv[SWEEPROW_COLS];
    char dmarks[SWEEPROW_MARKS_MAX];
    sweeprow_values(plan_out_scn(v, row->cfg), v->graphs[g->scn], &row->sum, sv, dmarks);
    jw_obj(w);
    for (int c = 0; c < SWEEPROW_COLS; c++) sweeprow_json(w, &sv[c]);
    jw_kint(w, "gpus", v->sp->gpus);
    jw_kint(w, "replicas", v->sp->gpus / g->tp);
    jw_knum(w, "target_ms", v->sp->target_s * 1e3);
    jw_kbool(w, "meets_target", row->meets);
    jw_knum(w, "tokens_per_s_per_gpu", row->tok_s_gpu);
    jw_knum(w, "tokens_per_s_total", row->tok_s_total);
    jw_knum(w, "kv_cache_free_gb_per_rank", g->kv_free_bytes / PLAN_GB);
    jw_kint(w, "max_batch", g->max_batch);
    jw_kstr(w, "bound", run_bound_name(run_bound_of(&row->sum)));
    char marks[PLAN_ROW_MARKS_MAX];
    plan_out_marks(v, i, marks, sizeof marks);
    jw_kstr(w, "cell_marks", marks); /* "marks" is run's list of domain marks */
    if (rank > 0) jw_kint(w, "place", rank); /* "rank" is a GPU's elsewhere */
    if (!isnan(v->pred_lo[i])) {
        double lo, hi;
        plan_out_tok_interval(v, i, &lo, &hi);
        jw_knum(w, "pred_lo_ms", v->pred_lo[i]);
        jw_knum(w, "pred_hi_ms", v->pred_hi[i]);
        jw_knum(w, "tokens_per_s_per_gpu_lo", lo);
        jw_knum(w, "tokens_per_s_per_gpu_hi", hi);
    }
    jw_end_obj(w);
}

void plan_out_json(FILE *f, const plan_view *v)
{
    const plan_spec *sp = v->sp;
    const plan_result *r = v->r;
    jw w;
    jw_init(&w, f, 1);
    jw_obj(&w);
    jw_kstr(&w, "scenario", sp->scn[0].name);
    jw_kstr(&w, "model", sp->scn[0].model.name);
    jw_kint(&w, "gpus", sp->gpus);
    jw_knum(&w, "target_ms", sp->target_s * 1e3);
    jw_knum(&w, "gpu_memory_utilization", sp->mem_util);
    jw_knum(&w, "reserve_gib", sp->reserve_bytes / (1024.0 * 1024 * 1024));
    jw_kint(&w, "batch_max", sp->batch_max);
    jw_kstr(&w, "intervals", v->intervals_note);
    jw_kuint(&w, "n_cells", r->n_cells);
    jw_kuint(&w, "n_configurations", r->n_cfgs);
    jw_key(&w, "contexts");
    jw_arr(&w);
    size_t *order = malloc((r->n_cfgs ? r->n_cfgs : 1) * sizeof *order);
    size_t *rows = malloc((r->n_rows ? r->n_rows : 1) * sizeof *rows);
    for (size_t c = 0; order && rows && c < sp->n_ctx; c++) {
        long ctx = sp->ctxs[c];
        size_t k = plan_rank(r, ctx, order);
        jw_obj(&w);
        jw_kint(&w, "ctx", ctx);
        jw_kuint(&w, "n_meeting", k); /* configurations meeting the target */
        jw_key(&w, "ranked");
        jw_arr(&w);
        for (size_t i = 0; i < k && i < (size_t)v->top; i++)
            plan_out_json_row(&w, v, (size_t)r->cfgs[order[i]].pick, (long)i + 1);
        jw_end_arr(&w);
        if (k >= 1) {
            jw_key(&w, "winner");
            plan_out_json_row(&w, v, (size_t)r->cfgs[order[0]].pick, 1);
        }
        if (k >= 2) {
            char sep[320];
            jw_key(&w, "runner_up");
            plan_out_json_row(&w, v, (size_t)r->cfgs[order[1]].pick, 2);
            int s = plan_out_separable(v, (size_t)r->cfgs[order[0]].pick,
                                       (size_t)r->cfgs[order[1]].pick, sep, sizeof sep);
            jw_kbool(&w, "separable", s);
            jw_kstr(&w, "separation", sep);
        }
        if (k == 0) {
            long cl = plan_out_closest(r, ctx);
            jw_key(&w, "closest");
            if (cl >= 0)
                plan_out_json_row(&w, v, (size_t)cl, 0);
            else
                jw_num(&w, NAN);
        }
        size_t n = plan_pareto(r, ctx, rows);
        jw_key(&w, "pareto");
        jw_arr(&w);
        for (size_t i = 0; i < n; i++) plan_out_json_row(&w, v, rows[i], 0);
        jw_end_arr(&w);
        jw_end_obj(&w);
    }
    free(order);
    free(rows);
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

int plan_out_status(const plan_view *v)
{
    for (size_t c = 0; c < v->sp->n_ctx; c++) {
        int any = 0;
        for (size_t i = 0; i < v->r->n_cfgs && !any; i++)
            any = v->r->cfgs[i].ctx == v->sp->ctxs[c] && v->r->cfgs[i].pick >= 0;
        if (!any) return 1;
    }
    return 0;
}
