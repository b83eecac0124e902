/* cmd_plan.c: `tpsim plan`: the deployment answer. Which hardware, TP degree, execution mode
 * and batch meet a per-token latency target at the most tokens/s per GPU, with the
 * intervals `tpsim validate` gives and the mechanism that bounds each answer. It lives in
 * validate/ because its intervals come from the validation core (validate.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "grid.h"
#include "locate.h"
#include "ofile.h"
#include "plan.h"
#include "plan_flags.h"
#include "plan_out.h"
#include "plan_serve.h"
#include "plot.h"
#include "shard.h"
#include "validate.h"


/* What every scenario of the search shares: the user's overrides, the fit's values and its
 * boundary points (the intervals), and where the hardware comes from. */
typedef struct pcmd_setup {
    const pflags_opts *o;
    const char *path;
    const scn_opts *user;
    const scenario *base; /* the scenario as given: its hardware and mode are the fit's */
    int n_fit;
    scenario_fit_param params[SCN_MAX_FIT];
    double fitted[SCN_MAX_FIT];
    int n_bound;
    double bound[VAL_MAX_BOUND][SCN_MAX_FIT];
    val_scale scale;      /* the fit's error scale (validate.h): declared error + model error */
    /* a scenario with no free parameter: its validated: block's held-out error (relative rms;
     * each interval +- VAL_Z95 x it), or none recorded (no_basis: no interval) */
    double heldout_rms;
    int heldout, no_basis;
    scenario_cache *files; /* every bind's model, hardware and calibrations, read once */
} pcmd_setup;

/* Every added calibration passes the scenario's collective model's own check (coll_check:
 * under `auto`, the custom block vLLM's all-reduce is priced with at its TP degrees). */
static int pcmd_custom_measured(const scenario *s)
{
    for (int i = 0; i < s->n_cals; i++) {
        coll_setup cs = run_coll_setup(s, &s->cals[i]);
        tp_err ignored = {{0}};
        if (s->cal_from_flag[i] && coll_check(&cs, &ignored)) return 0;
    }
    return 1;
}

/* The scenario on hardware h (index into o->hws, -1 for the scenario's own) in mode graphs,
 * with the fit's values (point NULL) or a boundary point's. */
static int pcmd_load(const pcmd_setup *ps, int h, int graphs, const double *point, scenario *out,
                     tp_err *err)
{
    scn_opts so = *ps->user;
    char store[1 + SCN_MAX_FIT * SCN_MAX_FIT_KEYS][192];
    int n = 0;
    if (h >= 0) {
        if (so.n_sets >= SCN_OPTS_MAX_SETS)
            return tp_err_set(err, "plan: the fit needs more --set slots, at most %d in all",
                              SCN_OPTS_MAX_SETS);
        snprintf(store[n], sizeof store[n], "hardware=%s", ps->o->hws[h].file);
        so.sets[so.n_sets++] = store[n++];
    }
    for (int i = 0; i < ps->n_fit; i++)
        for (int j = 0; j < ps->params[i].n_keys; j++) {
            if (so.n_sets >= SCN_OPTS_MAX_SETS)
                return tp_err_set(err, "plan: the fit needs more --set slots, at most %d in all",
                                  SCN_OPTS_MAX_SETS);
            snprintf(store[n], sizeof store[n], "%s=%.17g", ps->params[i].keys[j],
                     point ? point[i] : ps->fitted[i]);
            so.sets[so.n_sets++] = store[n++];
        }
    snprintf(so.mode_set, sizeof so.mode_set, "execution.mode=%s", graphs ? "graphs" : "eager");
    if (scn_opts_load_cached(ps->path, &so, ps->files, out, err)) return -1;
    /* other hardware than the scenario's: its own bundled calibrations, where there are any */
    if (h >= 0 && strcmp(out->hw.name, ps->base->hw.name) && ps->o->hws[h].n_calibs) {
        for (int k = 0; k < ps->o->hws[h].n_calibs; k++)
            if (scenario_add_allreduce(out, ps->o->hws[h].calibs[k], err)) return -1;
        /* `auto` runs vLLM's custom all-reduce, priced from the calibration's custom block;
         * a GPU whose bundled files measured NCCL only (A100, L40S) runs nccl-fit instead, and
         * its rows say so (pcmd_marks): the search keeps the hardware, never silently */
        if (out->allreduce_model == COLL_AUTO && !pcmd_custom_measured(out))
            out->allreduce_model = COLL_NCCL_FIT;
    }
    return 0;
}

/* The fit of the scenario's free parameters on the grid, as tpsim validate makes it, and the
 * boundary points of its 95% region. */
static int pcmd_fit(pcmd_setup *ps, const grid *g, char *note, size_t cap, tp_err *err)
{
    val_options vo = val_default_options();
    vo.files = ps->files;
    ps->scale = val_error_scale(0, 0, 0, vo.meas_cv); /* the declared error alone */
    /* --no-intervals skips only the intervals (pcmd_intervals), never the fit: without it
     * every cell would run at the YAML's starting values and the answer would change */
    if (ps->o->no_intervals) snprintf(note, cap, "none (--no-intervals)");
    if (ps->base->n_fit_params == 0) {
        /* nothing to fit, so nothing of the fit to carry: the error validate measured on the
         * scenario's held-out cells is what its predictions are known to miss by */
        const scenario_domain *d = &ps->base->domain;
        if (ps->o->no_intervals) return 0;
        if (!d->present || !d->written || d->heldout_cells < 1) {
            ps->no_basis = 1;
            snprintf(note, cap,
                     "none: the scenario has no free parameters and %s, so nothing measures its "
                     "error (tpsim validate --write-domain records it)",
                     !d->present ? "was never validated"
                     : !d->written ? "its validated: block was written by hand, with no held-out "
                                     "error"
                                   : "its validated: block holds no held-out cell");
            return 0;
        }
        ps->heldout = 1;
        ps->heldout_rms = d->heldout_rms_pct / 100;
        snprintf(note, cap,
                 "95%%: the scenario has no free parameters, so its own held-out error, as "
                 "tpsim validate measured it (validated: %ld held-out cells of protocol %s "
                 "against %.200s, root-mean-square %.2f%%): each prediction +-%.3f x %.2f%% = "
                 "+-%.2f%%", d->heldout_cells, d->heldout_protocol, d->grid, d->heldout_rms_pct,
                 VAL_Z95, d->heldout_rms_pct, VAL_Z95 * d->heldout_rms_pct);
        return 0;
    }
    vo.sensitivity = 0;
    val_report *rep = malloc(sizeof *rep);
    if (!rep) return tp_err_set(err, "out of memory");
    scn_opts so = *ps->user;
    so.quiet = 1;
    int rc = val_run_with(ps->path, &so, g, &vo, rep, err);
    if (rc == 0) {
        const val_fold *fd = &rep->folds[0];
        ps->n_fit = rep->scn.n_fit_params;
        memcpy(ps->params, rep->scn.fit_params, sizeof ps->params);
        memcpy(ps->fitted, fd->fitted, sizeof ps->fitted);
        ps->n_bound = fd->n_bound;
        memcpy(ps->bound, fd->bound, sizeof ps->bound);
        ps->scale = fd->scale;
        char proto[64];
        val_protocol_name(&rep->protocol, proto, sizeof proto);
        if (!ps->o->no_intervals)
            snprintf(note, cap,
                     "95%%, tpsim validate's: %d free parameter%s fitted on %.400s (protocol %s, "
                     "%d calibration cells), their profile-likelihood range (%d boundary points) "
                     "plus one cell's error at the fit's error scale (%.2f%%: meas_cv %.0f%% and "
                     "the model error the calibration cells' misfit shows)",
                     ps->n_fit, ps->n_fit == 1 ? "" : "s", g->path, proto, fd->n_cal,
                     ps->n_bound, 100 * fd->scale.cv, 100 * vo.meas_cv);
        val_free(rep);
    }
    free(rep);
    return rc;
}

/* Each configuration's own marks beyond domain.h's (plan_out_marks adds those per row): an
 * all-reduce or kernel calibration borrowed from other hardware; NCCL where the scenario runs
 * vLLM's custom all-reduce but the hardware's calibrations did not measure it (pcmd_load). */
static void pcmd_marks(const plan_spec *sp, const plan_result *r, coll_model base_model,
                       char (*marks)[PLAN_MARKS_MAX])
{
    for (size_t i = 0; i < r->n_cfgs; i++) {
        const plan_cfg *c = &r->cfgs[i];
        const scenario *s = &sp->scn[c->scn];
        const arcal *cal;
        const char *how;
        tp_err ignored = {{0}};
        marks[i][0] = '\0';
        if (c->tp > 1 && scenario_calibration(s, c->tp, &cal, &how, &ignored) == 0 && how)
            snprintf(marks[i], PLAN_MARKS_MAX, "all-reduce from %s (%s)", cal->hardware, how);
        const kcal *k;
        if (scenario_kernels(s, &k, &how, &ignored) == 0 && how) {
            size_t used = strlen(marks[i]);
            snprintf(marks[i] + used, PLAN_MARKS_MAX - used, "%sGPU kernels from %s (%s)",
                     used ? "; " : "", k->hardware, how);
        }
        if (c->tp > 1 && s->allreduce_model != base_model) {
            size_t used = strlen(marks[i]);
            snprintf(marks[i] + used, PLAN_MARKS_MAX - used,
                     "%sall-reduce %s: %s's calibrations have no custom all-reduce data",
                     used ? "; " : "", coll_model_names[s->allreduce_model], s->hw.name);
        }
    }
}

/* The interval of each row the answer shows and of each on the Pareto frontier: its predictions
 * (none under --no-intervals, nor for CSV without figures) at every boundary point of the
 * fit (the scenario re-bound there), their range widened by one measurement's error. */
static int pcmd_intervals(const pcmd_setup *ps, const plan_view *v, const int *scn_hw, double *lo,
                          double *hi, tp_err *err)
{
    /* none asked for, or none shown: CSV has no intervals (its figures do) */
    if (ps->o->no_intervals || ps->no_basis || (ps->o->format == 1 && !ps->o->plot)) return 0;
    const plan_result *r = v->r;
    /* the rows shown, then the Pareto frontier's (the figure's error bars, JSON's pareto) */
    size_t *shown = malloc((r->n_cfgs + 2 + r->n_rows) * sizeof *shown);
    int n_scn = v->sp->n_scn, nb = ps->n_bound, rc = -1;
    scenario **bs = calloc((size_t)(n_scn * (nb ? nb : 1)), sizeof *bs), *ks = NULL;
    if (!shown || !bs) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < v->sp->n_ctx; c++) {
        size_t n = plan_out_shown(v, v->sp->ctxs[c], shown);
        n += plan_pareto(r, v->sp->ctxs[c], shown + n);
        for (size_t i = 0; i < n; i++) {
            size_t row = shown[i];
            if (!isnan(lo[row])) continue; /* shown and on the frontier */
            const plan_row *w = &r->rows[row];
            int sc = r->cfgs[w->cfg].scn;
            double p = w->sum.step_mean * 1e3, blo = p, bhi = p;
            if (ps->heldout) { /* no free parameter: the held-out error's (pcmd_fit) */
                lo[row] = fmax(0, p * (1 - VAL_Z95 * ps->heldout_rms));
                hi[row] = p * (1 + VAL_Z95 * ps->heldout_rms);
                continue;
            }
            for (int j = 0; j < nb; j++) {
                scenario **s = &bs[sc * nb + j];
                if (!*s && (!(*s = calloc(1, sizeof **s)) ||
                            pcmd_load(ps, scn_hw[sc], v->graphs[sc], ps->bound[j], *s, err))) {
                    if (!*s) tp_err_set(err, "out of memory");
                    goto out;
                }
                run_request req = w->sum.req;
                run_summary sum;
                if (run_cell(*s, &req, &sum, NULL, err)) goto out;
                blo = fmin(blo, sum.step_mean * 1e3);
                bhi = fmax(bhi, sum.step_mean * 1e3);
            }
            /* as validate: a kernel calibration's own error moves every class by its MAPE,
             * all one way then all the other, at the fitted values */
            const scenario *cs = &v->sp->scn[sc];
            for (int sign = -1; cs->has_kernels && sign <= 1; sign += 2) {
                if (!ks && !(ks = malloc(sizeof *ks))) {
                    tp_err_set(err, "out of memory");
                    goto out;
                }
                memcpy(ks, cs, sizeof *ks);
                ks->kernel_err_sign = sign;
                run_request req = w->sum.req;
                run_summary sum;
                if (run_cell(ks, &req, &sum, NULL, err)) goto out;
                blo = fmin(blo, sum.step_mean * 1e3);
                bhi = fmax(bhi, sum.step_mean * 1e3);
            }
            val_pred_interval(p, blo, bhi, &ps->scale, &lo[row], &hi[row]);
        }
    }
    rc = 0;
out:
    for (int i = 0; bs && i < n_scn * nb; i++) {
        if (bs[i]) scenario_free(bs[i]);
        free(bs[i]);
    }
    free(ks); /* a copy: it borrowed cs's grids */
    free(bs);
    free(shown);
    return rc;
}

/* The searched configuration that would come closest to an impossible target: the least
 * time its weights take to stream at the HBM's peak (no efficiency, no host, no all-reduce).
 * A target below it cannot be met by any batch. */
static int pcmd_floor(const plan_spec *sp, double *floor_s, size_t *at_scn, long *at_tp,
                      tp_err *err)
{
    *floor_s = INFINITY;
    for (int m = 0; m < sp->n_scn; m++)
        for (size_t a = 0; a < sp->n_tp; a++) {
            double w, kv;
            if (run_check_tp(&sp->scn[m], sp->tps[a], err) ||
                plan_bytes(&sp->scn[m], sp->tps[a], sp->ctxs[0], &w, &kv, err))
                return -1;
            double t = w / sp->scn[m].hw.hbm_bw;
            if (t < *floor_s) *floor_s = t, *at_scn = (size_t)m, *at_tp = sp->tps[a];
        }
    return 0;
}

/* What one context's figures show, kept until the one figure set is drawn. */
typedef struct pcmd_fig {
    plot_plan_bar bars[2];
    char bar_labels[2][128], pick_label[160], name[32], title[256];
} pcmd_fig;

/* long because it gathers, context by context, both figures' data: the frontier's points and
 * intervals, every row's, the winner and runner-up's bars.
 * The figures of each context (plot.h), one set for all contexts: the Pareto frontier with
 * each point's interval (pcmd_intervals), every other row faint, the winner marked, and the
 * winner's and runner-up's step split (the closest row's when none meets). */
static int pcmd_plot(const plan_view *v, const char *dir, plot_stage **set, tp_err *err)
{
    const plan_result *r = v->r;
    size_t n = r->n_rows ? r->n_rows : 1, nc = r->n_cfgs ? r->n_cfgs : 1;
    size_t nx = v->sp->n_ctx ? v->sp->n_ctx : 1;
    double *step = malloc(n * sizeof *step), *tok = malloc(n * sizeof *tok);
    size_t *rows = malloc(n * sizeof *rows), *order = malloc(nc * sizeof *order);
    plot_plan_point *pts = malloc(n * sizeof *pts);
    char (*labels)[96] = malloc(n * sizeof *labels);
    pcmd_fig *figs = calloc(nx, sizeof *figs);
    plot_plan_data *data = calloc(nx, sizeof *data);
    size_t used = 0, n_all = 0; /* pts and labels, step and tok fill up context by context */
    int rc = -1;
    if (!step || !tok || !rows || !order || !pts || !labels || !figs || !data) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    for (size_t c = 0; c < v->sp->n_ctx; c++) {
        long ctx = v->sp->ctxs[c];
        pcmd_fig *fg = &figs[c];
        size_t all0 = n_all, pt0 = used;
        for (size_t i = 0; i < r->n_rows; i++)
            if (r->cfgs[r->rows[i].cfg].ctx == ctx) {
                step[n_all] = r->rows[i].sum.step_mean * 1e3;
                tok[n_all++] = r->rows[i].tok_s_gpu;
            }
        size_t nf = plan_pareto(r, ctx, rows);
        for (size_t i = 0; i < nf; i++, used++) {
            const plan_row *w = &r->rows[rows[i]];
            plan_out_name(v, w->cfg, labels[used], sizeof labels[used]);
            double tlo, thi;
            plan_out_tok_interval(v, rows[i], &tlo, &thi);
            pts[used] = (plot_plan_point){labels[used], w->sum.req.batch, w->sum.step_mean * 1e3,
                                          w->tok_s_gpu, v->pred_lo[rows[i]], v->pred_hi[rows[i]],
                                          tlo, thi};
        }
        size_t k = plan_rank(r, ctx, order);
        long picks[2] = {k ? r->cfgs[order[0]].pick : plan_out_closest(r, ctx),
                         k > 1 ? r->cfgs[order[1]].pick : -1};
        int n_bars = 0;
        for (int b = 0; b < 2; b++) {
            if (picks[b] < 0) continue;
            const plan_row *w = &r->rows[picks[b]];
            char cfg[96];
            plan_out_name(v, w->cfg, cfg, sizeof cfg);
            snprintf(fg->bar_labels[n_bars], sizeof fg->bar_labels[n_bars], "%s: %s b%ld",
                     k ? (b ? "2" : "1") : "closest", cfg, w->sum.req.batch);
            const run_breakdown *bd = &w->sum.breakdown;
            fg->bars[n_bars] = (plot_plan_bar){fg->bar_labels[n_bars], bd->compute * 1e3,
                                               bd->allreduce * 1e3,    bd->wait_peers * 1e3,
                                               bd->gpu_idle * 1e3,     bd->offset * 1e3};
            n_bars++;
        }
        snprintf(fg->name, sizeof fg->name, "ctx%ld", ctx);
        snprintf(fg->title, sizeof fg->title,
                 "%s, %s on %ld GPUs, ctx %ld, target %.4g ms per token", v->sp->scn[0].name,
                 v->sp->scn[0].model.name, v->sp->gpus, ctx, v->sp->target_s * 1e3);
        data[c] = (plot_plan_data){.name = fg->name,
                                   .title = fg->title,
                                   .target_ms = v->sp->target_s * 1e3,
                                   .frontier = pts + pt0,
                                   .n_frontier = nf,
                                   .all_step_ms = step + all0,
                                   .all_tok = tok + all0,
                                   .n_all = n_all - all0,
                                   .bars = fg->bars,
                                   .n_bars = n_bars};
        if (k) {
            const plan_row *w = &r->rows[r->cfgs[order[0]].pick];
            char cfg[96];
            plan_out_name(v, w->cfg, cfg, sizeof cfg);
            snprintf(fg->pick_label, sizeof fg->pick_label, "chosen: %s, batch %ld", cfg,
                     w->sum.req.batch);
            data[c].pick_label = fg->pick_label;
            data[c].pick_step_ms = w->sum.step_mean * 1e3;
            data[c].pick_tok = w->tok_s_gpu;
        }
    }
    rc = plot_plan_stage(data, v->sp->n_ctx, dir, set, err);
out:
    free(step);
    free(tok);
    free(rows);
    free(order);
    free(pts);
    free(labels);
    free(figs);
    free(data);
    return rc;
}

/* Nothing fits in memory: the message names the roomiest configuration and its numbers. */
static void pcmd_no_fit(const pflags_opts *o, const scenario *scn, const plan_result *r,
                        tp_err *err)
{
    size_t best = 0;
    for (size_t i = 0; i < r->n_cfgs; i++)
        if (r->cfgs[i].kv_free_bytes - r->cfgs[i].kv_seq_bytes >
            r->cfgs[best].kv_free_bytes - r->cfgs[best].kv_seq_bytes)
            best = i;
    const plan_cfg *b = &r->cfgs[best];
    tp_err_set(err,
               "plan: no configuration fits: the roomiest, %s TP-%ld at ctx %ld, has "
               "%.2f GB per GPU for the KV cache (%.2f x %.1f GB HBM - %.1f GB weights - %.2f GiB "
               "reserve), one sequence needs %.2f GB",
               scn[b->scn].hw.name, b->tp, b->ctx, b->kv_free_bytes / 1e9, o->util,
               scn[b->scn].hw.hbm_bytes / 1e9, b->weight_bytes / 1e9, o->reserve_gib,
               b->kv_seq_bytes / 1e9);
}

/* A shard's CSV to -o FILE and its sidecar FILE.meta (shard_write), at once. */
static int pcmd_write_shard(pflags_opts *o, const char *path, const plan_result *r,
                            const plan_view *view, tp_err *err)
{
    if (shard_fp_inputs(&o->fp, path, err)) return -1;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return tp_err_set(err, "out of memory");
    plan_out_csv(mem, view);
    int bad = ferror(mem);
    if (fclose(mem) != 0 || bad) {
        free(buf);
        return tp_err_set(err, "out of memory");
    }
    int rc = shard_write(o->out, buf, len, o->shard, o->n_shards, r->n_cells, o->fp, err);
    free(buf);
    return rc;
}

/* The report (text, CSV or JSON) to stdout or -o FILE. The file is left for the caller to
 * commit once every other output is in (or to abort on failure). */
static int pcmd_write(pflags_opts *o, const plan_view *view, ofile *of, tp_err *err)
{
    FILE *out = stdout;
    if (o->out) {
        if (ofile_open(of, o->out, err)) return -1;
        out = of->f;
    }
    if (o->format == 1)
        plan_out_csv(out, view);
    else if (o->format == 2)
        plan_out_json(out, view);
    else
        plan_out_text(out, view);
    return 0;
}

/* plot_commit_with's `also`: -o FILE goes in with the figures (none without -o). */
typedef struct pcmd_commit_arg {
    const pflags_opts *o;
    ofile *of;
    tp_err *err;
} pcmd_commit_arg;

static int pcmd_commit_out(void *arg)
{
    pcmd_commit_arg *a = arg;
    return a->o->out ? ofile_commit(a->of, a->err) : 0;
}

/* Every output of the command: the report first, then the figures, drawn and checked, then
 * -o FILE and the figures go in together (plot_commit_with). A report that cannot be written
 * leaves no figures, and a failed draw leaves no -o FILE (stdout, a stream, has its report
 * by then); of is aborted by the caller on failure. */
static int pcmd_outputs(pflags_opts *o, const char *path, const plan_result *r,
                        const plan_view *view, ofile *of, tp_err *err)
{
    if (o->n_shards) return pcmd_write_shard(o, path, r, view, err); /* never --plot */
    if (pcmd_write(o, view, of, err)) return -1;
    plot_stage *figs = NULL;
    int drawn = o->plot && pcmd_plot(view, o->plot, &figs, err) ? -1 : 0;
    /* -o's bytes out before the commit holds the signals: a FIFO's slow reader or a slow
     * fsync must not hold off Ctrl-C */
    if (!drawn && o->out && ofile_flush(of, err)) drawn = -1;
    pcmd_commit_arg ca = {o, of, err};
    return plot_commit_with(&figs, 1, drawn, pcmd_commit_out, &ca);
}

/* The search the flags ask for, over the n_scn (hardware, mode) scenarios. */
static plan_spec pcmd_spec(const pflags_opts *o, const scenario *scn, int n_scn)
{
    return (plan_spec){.scn = scn,
                       .n_scn = n_scn,
                       .tps = o->tps,
                       .n_tp = o->n_tp,
                       .ctxs = o->ctxs,
                       .n_ctx = o->n_ctx,
                       .batch_max = o->batch_max,
                       .mem_util = o->util,
                       .reserve_bytes = o->reserve_gib * PLAN_GIB,
                       .gpus = o->gpus,
                       .target_s = o->tpot_ms * 1e-3,
                       .req = o->req,
                       .seed_given = o->have_seed,
                       .shard = o->shard,
                       .n_shards = o->n_shards,
                       .jobs = o->jobs,
                       .progress = o->quiet ? NULL : "plan"};
}

/* What a flag left out means: TP 1, 2, 4, 8 where they divide the GPUs; both modes; the
 * scenario's context. Returns the modes searched. */
static int pcmd_defaults(pflags_opts *o, const scenario *base)
{
    if (!o->n_tp)
        for (long k = 1; k <= 8 && k <= o->gpus; k *= 2)
            if (o->gpus % k == 0) o->tps[o->n_tp++] = k;
    if (!o->n_modes) o->modes[0] = 0, o->modes[1] = 1, o->n_modes = 2;
    if (!o->n_ctx) o->ctxs[o->n_ctx++] = base->ctx;
    return o->n_modes;
}

/* One scenario per (hardware, mode): scn[i] with its mode graphs[i] and hardware scn_hw[i]
 * (-1: the scenario's own). */
static int pcmd_load_all(pcmd_setup *ps, int n_hw, scenario *scn, int *graphs, int *scn_hw,
                         tp_err *err)
{
    const pflags_opts *o = ps->o;
    for (int h = 0; h < n_hw; h++)
        for (int m = 0; m < o->n_modes; m++) {
            int i = h * o->n_modes + m;
            graphs[i] = o->modes[m];
            scn_hw[i] = o->n_hw ? h : -1;
            if (pcmd_load(ps, scn_hw[i], graphs[i], NULL, &scn[i], err)) return -1;
        }
    return 0;
}

/* A target below the fastest configuration's weight-streaming floor is impossible, not
 * merely unmet: refused before the search. */
static int pcmd_reachable(const plan_spec *sp, const pflags_opts *o, const scenario *scn,
                          tp_err *err)
{
    double floor_s;
    size_t at = 0;
    long at_tp = 0;
    if (pcmd_floor(sp, &floor_s, &at, &at_tp, err)) return -1;
    if (sp->target_s < floor_s)
        return tp_err_set(err,
                          "--tpot-ms %g: impossible: the fastest configuration searched, %s "
                          "TP-%ld, needs at least %.3f ms per token to stream its weights once at "
                          "the HBM's peak",
                          o->tpot_ms, scn[at].hw.name, at_tp, floor_s * 1e3);
    return 0;
}

/* The engine plan prices host work with unless the user's --set engine= says otherwise: the
 * vLLM users run today, V1 with its default graph mode (FULL for a decode-only batch;
 * models/host/vllm-v1.yaml). A scenario's own engine: (V0 for the eager hypotheses, the engine
 * of the study's era) states what it was judged under, not what a deployment runs now. */
#define PCMD_ENGINE "engine=vllm-v1"

/* PCMD_ENGINE after the user's sets unless one of them sets engine= (theirs wins); last, so
 * the user's --set keep their numbers in error messages. */
static int pcmd_default_engine(scn_opts *so, tp_err *err)
{
    for (int i = 0; i < so->n_sets; i++)
        if (!strncmp(so->sets[i], "engine=", 7)) return 0;
    if (so->n_sets >= SCN_OPTS_MAX_SETS)
        return tp_err_set(err, "plan: at most %d --set, one of them taken by %s",
                          SCN_OPTS_MAX_SETS - 1, PCMD_ENGINE);
    so->sets[so->n_sets++] = PCMD_ENGINE;
    return 0;
}

int tpsim_cmd_plan(int argc, char **argv)
{
    tp_err err = {{0}};
    pflags_opts o;
    scn_opts so;
    pflags_defaults(&o);
    memset(&so, 0, sizeof so);
    const char *path = NULL;
    int parsed = pflags_parse(argc, argv, &o, &so, &path, &err);
    if (parsed > 0) return pflags_help(stdout), 0;
    if (parsed < 0 || pcmd_default_engine(&so, &err)) return cmd_fail(&err);
    int status = 2, n_hw = o.n_hw ? o.n_hw : 1, n_scn = 0;
    grid g = {0};
    scenario *base = calloc(1, sizeof *base), *scn = NULL;
    int graphs[2 * PLAN_MAX_HW], scn_hw[2 * PLAN_MAX_HW];
    plan_result r = {0};
    double *lo = NULL, *hi = NULL;
    char note[1024], (*marks)[PLAN_MARKS_MAX] = NULL;
    ofile of = {0};
    pcmd_setup *ps = calloc(1, sizeof *ps);
    scenario_cache *files = scenario_cache_new();
    if (!base || !ps || !files) {
        tp_err_set(&err, "out of memory");
        goto out;
    }
    /* a figure folder that cannot be made is refused before any work */
    if ((o.plot && plot_check(o.plot, &err)) || grid_load(o.grid, &g, &err) ||
        scn_opts_load_cached(path, &so, files, base, &err))
        goto out;
    cmd_notes(base);
    n_scn = n_hw * pcmd_defaults(&o, base); /* both modes when --mode left them out */
    *ps = (pcmd_setup){.o = &o, .path = path, .user = &so, .base = base, .files = files};
    so.jobs = o.jobs;
    if (pcmd_fit(ps, &g, note, sizeof note, &err)) goto out;
    if (!(scn = calloc((size_t)n_scn, sizeof *scn))) {
        tp_err_set(&err, "out of memory");
        goto out;
    }
    if (pcmd_load_all(ps, n_hw, scn, graphs, scn_hw, &err)) goto out;
    if (o.workload) { /* the serving search: each replica run by tpsim serve */
        status = plan_serve(&o, scn, n_scn, &err);
        goto out;
    }
    plan_spec sp = pcmd_spec(&o, scn, n_scn);
    if (pcmd_reachable(&sp, &o, scn, &err)) goto out;
    if (plan_search(&sp, &r, &err)) goto out;
    if (!r.n_cells) {
        pcmd_no_fit(&o, scn, &r, &err);
        goto out;
    }
    lo = malloc((r.n_rows ? r.n_rows : 1) * sizeof *lo);
    hi = malloc((r.n_rows ? r.n_rows : 1) * sizeof *hi);
    marks = calloc(r.n_cfgs, sizeof *marks);
    if (!lo || !hi || !marks) {
        tp_err_set(&err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < r.n_rows; i++) lo[i] = hi[i] = NAN;
    pcmd_marks(&sp, &r, ps->base->allreduce_model, marks);
    plan_view view = {&sp, &r, graphs, lo, hi, marks, note, o.top};
    if (pcmd_intervals(ps, &view, scn_hw, lo, hi, &err)) goto out;
    if (pcmd_outputs(&o, path, &r, &view, &of, &err)) goto out;
    status = o.n_shards ? 0 : plan_out_status(&view);
    if (status == 1)
        fprintf(stderr, "tpsim: plan: at some context no configuration meets %g ms per token "
                        "(the closest is shown)\n", o.tpot_ms);
out:
    if (status == 2) {
        ofile_abort(&of);
        cmd_fail(&err);
    }
    plan_free(&r);
    grid_free(&g);
    if (base) scenario_free(base);
    for (int i = 0; scn && i < n_scn; i++) scenario_free(&scn[i]);
    free(base);
    free(scn);
    free(ps);
    scenario_cache_free(files);
    free(lo), free(hi), free(marks);
    return status;
}
