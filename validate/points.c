/* points.c: the simulations of validation: each cell's step at parameter values (the fit's
 * objective, its predictions), many points at once on the --jobs team, with the memo; see
 * val_impl.h. */
#include "validate.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memo.h"
#include "par.h"
#include "val_impl.h"

int val_predict(const scenario *s, long tp, long batch, long ctx, run_summary *sum,
                tp_err *err)
{
    run_request req = {tp, batch, ctx, s->steps, s->warmup, s->seed, 0, RUN_REQ_PLAIN};
    return run_cell(s, &req, sum, NULL, err);
}

int val_cell_job(void *ctx, size_t i, tp_err *err)
{
    val_cells_job *j = ctx;
    const grid_cell *gc = j->cells[i];
    run_summary sum;
    if (!gc) return 0;
    j->ms[i] = NAN;
    if (val_predict(j->bound, gc->tp, gc->batch, gc->ctx, &sum, err)) return -1;
    j->ms[i] = sum.step_mean * 1e3;
    if (j->sums) j->sums[i] = sum;
    return 0;
}

/* The work of val_points_at: binding each point that has cells to simulate (one job per
 * point, on the document of the thread that runs it), then simulating them (one job per
 * cell). Each job writes only its own slots. */
typedef struct val_points_job {
    val_ctx *c;
    const double *xs;              /* the points, rows of n_x */
    int n_x;
    const int *pts;                /* bind job j binds point pts[j] */
    scenario **bound;              /* per point, NULL: nothing to simulate */
    size_t n;                      /* cells per point */
    const grid_cell *const *cells; /* per point and cell: to simulate, else NULL */
    double *ms;                    /* per point and cell, ms */
    run_summary *sums;             /* per cell (one point only), or NULL */
    const size_t *jobs;            /* cell job j simulates slot jobs[j] (point * n + cell) */
    char *bound_ok, *cell_ok;      /* per bind job, per cell job: it succeeded */
    /* one batch of binds then cells (val_point_any_job): per point, 0 until bound, then 1,
     * or -1 when its bind failed; a cell waits on `ready` for its point */
    int n_pts;
    signed char *state;
    pthread_mutex_t lock;
    pthread_cond_t ready;
} val_points_job;

static int val_bind_job(void *ctx, size_t j, int worker, tp_err *err)
{
    val_points_job *pj = ctx;
    int p = pj->pts[j];
    if (val_bind(pj->c->docs[worker], pj->c->cache, pj->c->opts, pj->c->spec,
                 pj->xs + (size_t)p * pj->n_x, pj->bound[p], err))
        return -1;
    pj->bound[p]->kernel_err_sign = pj->c->kernel_err_sign;
    pj->bound_ok[j] = 1;
    return 0;
}

static int val_point_cell_job(void *ctx, size_t j, tp_err *err)
{
    val_points_job *pj = ctx;
    size_t slot = pj->jobs[j], p = slot / pj->n, i = slot % pj->n;
    const grid_cell *gc = pj->cells[slot];
    run_summary sum;
    if (val_predict(pj->bound[p], gc->tp, gc->batch, gc->ctx, &sum, err)) return -1;
    pj->ms[slot] = sum.step_mean * 1e3;
    if (pj->sums) pj->sums[i] = sum;
    pj->cell_ok[j] = 1;
    return 0;
}

/* Several points in one batch: jobs 0..n_pts-1 bind, the rest simulate cells. The binds are
 * handed out first, so a cell seldom waits for its point's bind, which never waits: no job
 * waits on one that has not started. */
static int val_point_any_job(void *ctx, size_t j, int worker, tp_err *err)
{
    val_points_job *pj = ctx;
    if (j < (size_t)pj->n_pts) {
        int rc = val_bind_job(ctx, j, worker, err);
        pthread_mutex_lock(&pj->lock);
        pj->state[pj->pts[j]] = rc ? -1 : 1;
        pthread_cond_broadcast(&pj->ready);
        pthread_mutex_unlock(&pj->lock);
        return rc;
    }
    size_t k = j - (size_t)pj->n_pts, p = pj->jobs[k] / pj->n;
    pthread_mutex_lock(&pj->lock);
    while (!pj->state[p]) pthread_cond_wait(&pj->ready, &pj->lock);
    int st = pj->state[p];
    pthread_mutex_unlock(&pj->lock);
    return st < 0 ? 0 : val_point_cell_job(ctx, k, err);
}

static int val_points_at(val_ctx *c, int m, const double *xs, size_t n, const size_t *idx,
                         const grid_cell *const *cells, double *ms, run_summary *sums,
                         const char *progress, tp_err *err);

/* val_points_at's binds and cells of several points in one batch, so no thread idles while
 * the last binds run: the points done (m), or after a failure (or without a condition
 * variable) again one point at a time, which reports what a one-point-at-a-time run does;
 * -1 when no lock could be made (the caller binds, then simulates). */
static int val_points_one_batch(val_points_job *pj, int m, size_t n_jobs, const size_t *idx,
                                const grid_cell *const *cells, struct vmemo *memo, tp_err *err)
{
    val_ctx *c = pj->c;
    size_t n = pj->n;
    int rc = -1, done = 0;
    if (pthread_mutex_init(&pj->lock, NULL)) return -1;
    if (!pthread_cond_init(&pj->ready, NULL)) {
        tp_err scratch = {{0}};
        rc = par_team_map_w(c->team, (size_t)pj->n_pts + n_jobs, val_point_any_job, pj, &scratch);
        pthread_cond_destroy(&pj->ready);
    }
    pthread_mutex_destroy(&pj->lock);
    if (!rc) {
        for (size_t j = 0; j < n_jobs; j++) /* no memory: no reuse */
            vmemo_put(memo, pj->xs + pj->jobs[j] / n * pj->n_x, pj->n_x, &idx[pj->jobs[j] % n], 1,
                      pj->ms[pj->jobs[j]]);
        return m;
    }
    while (done < m && val_points_at(c, 1, pj->xs + (size_t)done * pj->n_x, n, idx, cells,
                                     pj->ms + (size_t)done * n, NULL, NULL, err) == 1)
        done++;
    return done;
}

/* The step (ms) of n cells (grid indices idx[], cells[i] NULL where not wanted, those slots
 * left as they are) at each of m parameter points xs (rows of the fit's parameters) into
 * ms[p * n + i]: from the memo where the same point and cell were simulated before (another
 * protocol whose fit visits the same points, or an earlier step of this one; memo.h), the
 * rest simulated on --jobs threads, the points bound at once and then every cell at once,
 * and kept. sums (one point only) takes each cell's full summary. Returns the number of
 * points done, in order, before the first that failed (m: none), err set for that one as a
 * one-point-at-a-time evaluation would report it: its bind, or its lowest failing cell. */
static int val_points_at(val_ctx *c, int m, const double *xs, size_t n, const size_t *idx,
                         const grid_cell *const *cells, double *ms, run_summary *sums,
                         const char *progress, tp_err *err)
{
    /* a full summary is not kept; a prediction with the kernel classes moved by their
     * error (kernel_err_sign) is another scenario than the fit's */
    struct vmemo *memo = sums || c->kernel_err_sign ? NULL : c->r->opt.memo;
    const int n_x = c->spec->n_fit_params;
    size_t slots = (size_t)m * n, n_jobs = 0;
    const grid_cell **todo = calloc(slots ? slots : 1, sizeof *todo);
    scenario **bound = calloc((size_t)m, sizeof *bound);
    size_t *jobs = calloc(slots ? slots : 1, sizeof *jobs);
    int *pts = calloc((size_t)m, sizeof *pts), n_pts = 0, done = 0;
    char *ok = calloc(2 * (size_t)m + slots + 1, 1);
    if (!todo || !bound || !jobs || !pts || !ok) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (int p = 0; p < m; p++) {
        const double *x = xs + (size_t)p * n_x;
        size_t first = n_jobs;
        for (size_t i = 0; i < n; i++)
            if (cells[i] && !vmemo_get(memo, x, n_x, &idx[i], 1, &ms[(size_t)p * n + i])) {
                todo[(size_t)p * n + i] = cells[i];
                jobs[n_jobs++] = (size_t)p * n + i;
            }
        if (n_jobs == first) continue;
        if (!(bound[p] = calloc(1, sizeof *bound[p]))) {
            tp_err_set(err, "out of memory");
            goto out;
        }
        pts[n_pts++] = p;
    }
    val_points_job pj = {.c = c, .xs = xs, .n_x = n_x, .pts = pts, .bound = bound, .n = n,
                         .cells = todo, .ms = ms, .sums = sums, .jobs = jobs, .bound_ok = ok,
                         .cell_ok = ok + m, .n_pts = n_pts, .state = (signed char *)ok + m + slots};
    if (n_pts > 1 && (done = val_points_one_batch(&pj, m, n_jobs, idx, cells, memo, err)) >= 0)
        goto out;
    done = 0;
    tp_err bind_err = {{0}};
    int failed_at = m; /* the lowest point whose bind failed (the jobs before it all ran) */
    if (par_team_map_w(c->team, (size_t)n_pts, val_bind_job, &pj, &bind_err))
        for (int k = n_pts - 1; k >= 0; k--)
            if (!pj.bound_ok[k]) failed_at = pts[k];
    /* the cells of the points before it; a failing one is reported before that bind */
    size_t n_run = 0;
    while (n_run < n_jobs && jobs[n_run] / n < (size_t)failed_at) n_run++;
    if (par_team_map(c->team, n_run, val_point_cell_job, &pj, progress, err)) {
        for (size_t j = n_run; j-- > 0;)
            if (!pj.cell_ok[j]) failed_at = (int)(jobs[j] / n);
    } else if (failed_at < m) {
        *err = bind_err;
    }
    for (size_t j = 0; j < n_run; j++) /* no memory: no reuse */
        if (jobs[j] / n < (size_t)failed_at)
            vmemo_put(memo, xs + jobs[j] / n * n_x, n_x, &idx[jobs[j] % n], 1, ms[jobs[j]]);
    done = failed_at;
out:
    for (int p = 0; p < m && bound; p++) {
        if (bound[p]) scenario_free(bound[p]);
        free(bound[p]);
    }
    free(bound);
    free(todo);
    free(jobs);
    free(pts);
    free(ok);
    return done;
}
#define VAL_POINTS_AT_ONCE 32 /* bound scenarios held at once (about 100 kB each) */

/* Sum of squared relative errors of the fold's calibration cells at each of m points xs
 * (fit_objective_many): the cells simulated on --jobs threads (or known from the memo) and
 * summed in the fold's cell order (the same whatever the threads). */
int val_objective_many(const double *xs, int m, void *vctx, double *v)
{
    val_ctx *c = vctx;
    size_t n = (size_t)c->fold->n_cal;
    int n_x = c->spec->n_fit_params, done = 0;
    const grid_cell **cells = calloc(n ? n : 1, sizeof *cells);
    double *ms = calloc(VAL_POINTS_AT_ONCE * (n ? n : 1), sizeof *ms);
    if (!cells || !ms) {
        tp_err_set(c->err, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) cells[i] = &c->g->cells[c->fold->cal[i]];
        for (int p0 = 0; p0 < m && done == p0; p0 += VAL_POINTS_AT_ONCE) {
            int k = m - p0 < VAL_POINTS_AT_ONCE ? m - p0 : VAL_POINTS_AT_ONCE;
            int ok = val_points_at(c, k, xs + (size_t)p0 * n_x, n, c->fold->cal, cells, ms, NULL,
                                   NULL, c->err);
            for (int p = 0; p < ok; p++) {
                double sse = 0;
                for (size_t i = 0; i < n; i++) {
                    double rel = ms[(size_t)p * n + i] / cells[i]->measured_ms - 1.0;
                    sse += rel * rel;
                }
                v[p0 + p] = sse;
            }
            done = p0 + ok;
        }
    }
    free(cells);
    free(ms);
    return done;
}

double val_objective(const double *x, void *vctx, int *fail)
{
    double v = 0;
    if (val_objective_many(x, 1, vctx, &v) < 1) *fail = 1;
    return v;
}

int val_predict_points(val_ctx *c, int f, int m, const double *xs, double *preds, tp_err *err)
{
    size_t n = c->r->n_cells;
    const grid_cell **cells = calloc(n ? n : 1, sizeof *cells);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    int done = 0;
    if (!cells || !idx) {
        tp_err_set(err, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++) {
            cells[i] = c->r->cells[i].fold == f ? c->r->cells[i].g : NULL;
            idx[i] = i; /* val_report.cells are in grid order */
        }
        for (size_t k = 0; k < (size_t)m * n; k++) preds[k] = NAN;
        done = val_points_at(c, m, xs, n, idx, cells, preds, NULL, NULL, err);
    }
    free(cells);
    free(idx);
    return done;
}

/* Predict every cell whose config this fold judges into preds (ms, NAN elsewhere), with
 * the free parameters at x and, when `set` is given, one more override; on --jobs threads,
 * with a progress line when `progress` names one. */
int val_predict_fold(val_ctx *c, int fold, const double *x, const char *set,
                            const char *set_src, int set_line, int set_col, double *preds,
                            run_summary *sums, const char *progress, tp_err *err)
{
    size_t n = c->r->n_cells;
    scenario *bound = NULL;
    const grid_cell **cells = calloc(n, sizeof *cells);
    size_t *idx = calloc(n, sizeof *idx);
    int rc = -1;
    if (!cells || !idx) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        preds[i] = NAN;
        cells[i] = c->r->cells[i].fold == fold ? c->r->cells[i].g : NULL;
        idx[i] = i; /* val_report.cells are in grid order */
    }
    if (c->opts->quiet) progress = NULL;
    if (!set) { /* the fit's own scenario at x: the memo's cells */
        rc = val_points_at(c, 1, x, n, idx, cells, preds, sums, progress, err) == 1 ? 0 : -1;
        goto out;
    }
    if (!(bound = calloc(1, sizeof *bound))) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    if (cfg_set_at(c->doc, set, set_src, set_line, set_col, err)) goto out;
    if (val_bind(c->doc, c->cache, c->opts, c->spec, x, bound, err)) goto out;
    bound->kernel_err_sign = c->kernel_err_sign;
    val_cells_job job = {bound, cells, preds, sums};
    rc = par_team_map(c->team, n, val_cell_job, &job, progress, err);
out:
    if (bound) scenario_free(bound);
    free(bound);
    free(cells);
    free(idx);
    return rc;
}

/* The kernel or all-reduce calibration of `bound` replaced by its file read again with vs's
 * numbers moved by factor. */
static int val_move_file(scenario *bound, const val_sens *vs, double factor, tp_err *err)
{
    char assign[4][160];
    const char *ap[4];
    for (int i = 0; i < vs->n_file_keys; i++) {
        snprintf(assign[i], sizeof assign[i], "%s=%.17g", vs->file_keys[i], vs->value * factor);
        ap[i] = assign[i];
    }
    if (vs->file_kind == VAL_FILE_KERNELS) {
        kcal k;
        if (kcal_load_set(vs->file, ap, vs->n_file_keys, &k, err)) return -1;
        snprintf(k.named_at, sizeof k.named_at, "%s", bound->kernels.named_at);
        kcal_free(&bound->kernels);
        bound->kernels = k;
        return 0;
    }
    for (int j = 0; j < bound->n_cals; j++) {
        if (bound->cals[j].tp != vs->file_tp || strcmp(bound->cals[j].path, vs->file)) continue;
        arcal a;
        if (arcal_load_set(vs->file, ap[0], &a, err)) return -1;
        snprintf(a.named_at, sizeof a.named_at, "%s", bound->cals[j].named_at);
        bound->cals[j] = a;
    }
    return 0;
}

int val_predict_fold_moved(val_ctx *c, int fold, const double *x, const val_sens *vs,
                           double factor, double *preds, tp_err *err)
{
    size_t n = c->r->n_cells;
    scenario *bound = calloc(1, sizeof *bound);
    const grid_cell **cells = calloc(n ? n : 1, sizeof *cells);
    int rc = -1;
    if (!bound || !cells) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        preds[i] = NAN;
        cells[i] = c->r->cells[i].fold == fold ? c->r->cells[i].g : NULL;
    }
    if (val_bind(c->doc, c->cache, c->opts, c->spec, x, bound, err)) goto out;
    bound->kernel_err_sign = c->kernel_err_sign;
    if (val_move_file(bound, vs, factor, err)) goto out;
    val_cells_job job = {bound, cells, preds, NULL};
    rc = par_team_map(c->team, n, val_cell_job, &job, NULL, err);
out:
    if (bound) scenario_free(bound);
    free(bound);
    free(cells);
    return rc;
}
