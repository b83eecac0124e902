/* cmd_sweep.c: `tpsim sweep`: the what-if grid (tp x batch x ctx x mode) to CSV, one row
 * per cell, each row the same numbers `tpsim run` prints for that cell. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "jw.h"
#include "locate.h"
#include "ofile.h"
#include "plot.h"
#include "par.h"
#include "run.h"
#include "shard.h"
#include "sweeprow.h"

#define SWEEP_MAX 64

static const char sweep_usage[] = "usage: tpsim sweep SCENARIO [flags]\n";
static const char sweep_help_text[] =
    "  one row per cell (CSV with a header, or a JSON array of objects), each with the\n"
    "  scenario, model, hardware, mode, the cell, step times and breakdown in ms, and\n"
    "  fits_in_hbm (true/false: weights + KV cache + vLLM's 4.84 GiB reserve within the\n"
    "  capacity the GPU reports). A cell that does not fit is still simulated and reported;\n"
    "  the exit status stays 0.\n"
    "  SCENARIO and GRID are files or names (scenarios/NAME.yaml, validate/NAME.csv).\n"
    "  --fit GRID first fits the scenario's declared parameters on its declared cells of GRID\n"
    "  (as tpsim validate does) and sweeps with the fitted values.\n"
    "  --jobs N runs N cells at once (default: one per core; the output does not change);\n"
    "  --quiet drops the progress line a terminal gets on stderr. --shard I/N (0 <= I < N)\n"
    "  runs only cells I, I+N, I+2N... of the grid and writes a CSV part for tpsim merge to\n"
    "  -o FILE, with its shard, the grid's size and the sweep's fingerprint in FILE.meta.\n"
    "  --plot DIR draws step_vs_tp: the mean step time against the TP degree, one line per\n"
    "  batch (and mode, and context, where several), PNG and SVG, with its .dat and .gp.\n";

typedef struct sweep_opts {
    long tps[SWEEP_MAX], batches[SWEEP_MAX], ctxs[SWEEP_MAX];
    size_t n_tp, n_batch, n_ctx;
    int modes[2]; /* 0 eager, 1 graphs */
    int n_modes;
    run_request req;
    int have_seed;
    const char *fit_grid, *out, *plot;
    char scn_buf[1024], grid_buf[1024]; /* the scenario and grid, resolved */
    int json;
    int jobs, quiet;
    long shard, n_shards; /* n_shards 0: the whole grid */
    uint64_t fp;          /* the sweep's fingerprint (shard.h): flags here, scenario later */
} sweep_opts;

/* sweep's flags (sweep_parse reads them by index); its --mode takes a list */
static const cli_flag sweep_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"tp", 0, 1, "1,2,4,8", "TP degrees (default: the scenario's tp)"},
    {"batch", 0, 1, "1,2,4,8", "batch sizes (default: the scenario's)"},
    {"ctx", 0, 1, "2048,...", "context lengths (default: the scenario's)"},
    {"mode", 0, 1, "eager,graphs", "execution modes (default: the scenario's)"},
    {"steps", 0, 1, "N", "decode steps measured per cell"},
    {"warmup", 0, 1, "N", "steps run first and not measured"},
    {"seed", 0, 1, "S", "the random seed (default: the scenario's)"},
    {"fit", 0, 1, "GRID", "fit the scenario's declared parameters on GRID first"},
    {"output", 'o', 1, "FILE|-", "write the rows to FILE (default: stdout)"},
    {"format", 0, 1, "csv|json", "CSV with a header (default) or a JSON array"},
    {"jobs", 0, 1, "N", "cells at once (default: one per core)"},
    {"quiet", 0, 0, NULL, "no progress line on a terminal"},
    {"shard", 0, 1, "I/N", "only cells I, I+N, I+2N...: a CSV part for tpsim merge"},
    {"plot", 0, 1, "DIR", "draw step time vs TP degree (PNG, SVG) into DIR"},
    CMD_SET_FLAG,
    CMD_MODEL_FLAG,
    CMD_CALIB_FLAG,
    CMD_MEASURED_FLAG,
    CMD_FOREIGN_FLAG,
    CLI_END};

/* 1 when --help was asked for, 0 when the command line is complete, -1 on error. */
static int sweep_parse(int argc, char **argv, sweep_opts *o, scn_opts *so, const char **path,
                       tp_err *err)
{
    enum { F_HELP, F_TP, F_BATCH, F_CTX, F_MODE, F_STEPS, F_WARMUP, F_SEED, F_FIT, F_OUT,
           F_FORMAT, F_JOBS, F_QUIET, F_SHARD, F_PLOT };
    const char *v;
    long lv;
    cli_args ca;
    int f;
    if (cli_begin(&ca, "sweep", "tpsim sweep --help", sweep_flags, argc, argv, err)) return -1;
    o->fp = SHARD_FP_INIT;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        if (f == CLI_ERROR) return -1;
        /* every flag that shapes the rows goes into the fingerprint, in order (shard.h) */
        if (f >= 0 && f != F_OUT && f != F_JOBS && f != F_QUIET && f != F_SHARD && f != F_PLOT)
            shard_fp_flag(&o->fp, sweep_flags[f].name, v);
        if (f == CLI_OPERAND) {
            if (*path) return tp_err_set(err, "sweep: a second scenario '%s', expected one", v);
            *path = v;
        } else if (f == F_HELP) {
            cli_help(stdout, sweep_usage, sweep_flags, sweep_help_text);
            return 1;
        } else if (f == F_MODE) {
            if (cli_modes(v, o->modes, &o->n_modes, err)) return -1;
        } else if (f == F_TP || f == F_BATCH || f == F_CTX) {
            long *dst = f == F_TP ? o->tps : f == F_BATCH ? o->batches : o->ctxs;
            size_t *n = f == F_TP ? &o->n_tp : f == F_BATCH ? &o->n_batch : &o->n_ctx;
            long hi = f == F_TP ? 1024 : f == F_CTX ? (1L << 24) : (1L << 20);
            if (cli_list(ca.shown, v, 1, hi, dst, SWEEP_MAX, n, err)) return -1;
        } else if (f == F_STEPS || f == F_WARMUP) {
            if (cli_long(ca.shown, v, f == F_STEPS, 1000000, &lv, err)) return -1;
            *(f == F_STEPS ? &o->req.steps : &o->req.warmup) = lv;
        } else if (f == F_SEED) {
            if (cli_u64(ca.shown, v, &o->req.seed, err)) return -1;
            o->have_seed = 1;
        } else if (f == F_FIT) {
            o->fit_grid = v;
        } else if (f == F_OUT) {
            o->out = cli_is_stdout(v) ? NULL : v;
        } else if (f == F_FORMAT) {
            if (strcmp(v, "csv") && strcmp(v, "json"))
                return tp_err_set(err, "--format: '%s', expected csv or json", v);
            o->json = !strcmp(v, "json");
        } else if (f == F_JOBS) {
            if (cli_long(ca.shown, v, 1, 1024, &lv, err)) return -1;
            o->jobs = (int)lv;
        } else if (f == F_QUIET) {
            o->quiet = 1;
        } else if (f == F_PLOT) {
            o->plot = v;
        } else if (f == F_SHARD) {
            if (shard_parse(v, &o->shard, &o->n_shards, err)) return -1;
        } else if (cmd_scn_flag(so, sweep_flags[f].name, v, err) < 0) {
            return -1;
        }
    }
    if (!*path) return tp_err_set(err, "sweep: missing SCENARIO (see tpsim sweep --help)");
    if (o->n_shards && o->json)
        return tp_err_set(
            err, "--shard: parts are CSV (tpsim merge joins them), expected no --format json");
    if (o->n_shards && o->plot)
        return tp_err_set(
            err, "--plot: a shard holds part of the sweep, expected --plot without --shard");
    if (o->n_shards && !o->out)
        return tp_err_set(err, "--shard: a part goes to a file with its sidecar FILE.meta, "
                          "expected -o FILE");
    /* by name: scenarios/NAME.yaml, validate/NAME.csv (locate.h) */
    if (!(*path = locate_arg("scenarios", ".yaml", *path, o->scn_buf, sizeof o->scn_buf, err)))
        return -1;
    if (o->fit_grid && !(o->fit_grid = locate_arg("validate", ".csv", o->fit_grid, o->grid_buf,
                                                  sizeof o->grid_buf, err)))
        return -1;
    return 0;
}

/* The rows as CSV (RFC 4180 quoting, a header line) or as a JSON array of objects. */
static void sweep_write(FILE *f, int json, const scenario *s, const int *row_mode,
                        const run_summary *rows, size_t n_rows)
{
    sweeprow_val v[SWEEPROW_COLS];
    char marks[SWEEPROW_MARKS_MAX];
    if (json) {
        jw w;
        jw_init(&w, f, 1);
        jw_arr(&w);
        for (size_t r = 0; r < n_rows; r++) {
            sweeprow_values(s, row_mode[r], &rows[r], v, marks);
            jw_obj(&w);
            for (int i = 0; i < SWEEPROW_COLS; i++) sweeprow_json(&w, &v[i]);
            jw_end_obj(&w);
        }
        jw_end_arr(&w);
        jw_done(&w);
        return;
    }
    for (size_t r = 0; r <= n_rows; r++) {
        if (r) sweeprow_values(s, row_mode[r - 1], &rows[r - 1], v, marks);
        else sweeprow_values(s, 0, &rows[0], v, marks); /* names only */
        for (int i = 0; i < SWEEPROW_COLS; i++) {
            if (i) fputc(',', f);
            if (!r) fputs(v[i].name, f);
            else sweeprow_csv(f, &v[i]);
        }
        fputc('\n', f);
    }
}

typedef struct sweep_job {
    const scenario *s;    /* per mode index */
    run_summary *rows;    /* req filled in, the rest by the job */
    const int *row_mode;  /* mode index per row */
} sweep_job;

static int sweep_cell(void *ctx, size_t i, tp_err *err)
{
    sweep_job *j = ctx;
    const scenario *s = &j->s[j->row_mode[i]];
    run_request req = j->rows[i].req;
    if (run_cell(s, &req, &j->rows[i], NULL, err)) return -1;
    return run_check_step(s, &j->rows[i], err) ? -1 : 0;
}

/* The cells in grid order (mode, tp, batch, ctx), each with its request; a shard keeps
 * every n_shards-th. Returns how many; row_mode[i] is the index of row i's mode. */
static size_t sweep_cells(const sweep_opts *o, const scenario *s, size_t total, run_summary *rows,
                          int *row_mode)
{
    size_t n_rows = 0;
    for (size_t cell = 0; cell < total; cell++) {
        if (o->n_shards && (long)(cell % (size_t)o->n_shards) != o->shard) continue;
        size_t c = cell % o->n_ctx, b = cell / o->n_ctx % o->n_batch;
        size_t a = cell / (o->n_ctx * o->n_batch) % o->n_tp;
        size_t m = cell / (o->n_ctx * o->n_batch * o->n_tp);
        run_request req = o->req;
        req.tp = o->tps[a], req.batch = o->batches[b], req.ctx = o->ctxs[c];
        if (!o->have_seed) req.seed = s[m].seed;
        rows[n_rows].req = run_defaults(&s[m], req);
        row_mode[n_rows++] = (int)m;
    }
    return n_rows;
}

/* The rows to stdout or -o FILE (installed only once whole); a shard's, with its sidecar
 * (shard_write). */
static int sweep_output(sweep_opts *o, const char *path, const scenario *s, const int *row_mode,
                        const run_summary *rows, size_t n_rows, size_t total, ofile *of,
                        tp_err *err)
{
    if (o->n_shards) {
        /* the scenario's bytes complete the fingerprint (another file of the same name on
         * another machine is another sweep) */
        if (shard_fp_inputs(&o->fp, path, err)) return -1;
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) return tp_err_set(err, "out of memory");
        sweep_write(mem, 0, s, row_mode, rows, n_rows);
        int bad = ferror(mem);
        if (fclose(mem) != 0 || bad) {
            free(buf);
            return tp_err_set(err, "out of memory");
        }
        int rc = shard_write(o->out, buf, len, o->shard, o->n_shards, total, o->fp, err);
        free(buf);
        return rc;
    }
    FILE *out = stdout;
    if (o->out) {
        if (ofile_open(of, o->out, err)) return -1;
        out = of->f;
    }
    sweep_write(out, o->json, s, row_mode, rows, n_rows);
    if (o->out && !o->plot && ofile_commit(of, err)) return -1;
    return 0;
}

/* plot_commit_with's `also`: -o FILE goes in with the figure (none without -o). */
typedef struct sweep_commit_arg {
    const sweep_opts *o;
    ofile *of;
    tp_err *err;
} sweep_commit_arg;

static int sweep_commit_out(void *arg)
{
    sweep_commit_arg *a = arg;
    return a->o->out ? ofile_commit(a->of, a->err) : 0;
}

/* step_vs_tp (plot.h's plot_xy): one line per (mode, batch, ctx) through the TP degrees, from
 * the rows just written; then the figure and -o FILE go in together. */
static int sweep_plot(const sweep_opts *o, const scenario *s, const run_summary *rows,
                      size_t n_rows, ofile *of, tp_err *err)
{
    size_t n_lines = (size_t)o->n_modes * o->n_batch * o->n_ctx;
    plot_xy_series *ser = calloc(n_lines, sizeof *ser);
    double *x = calloc(n_rows + 1, sizeof *x), *y = calloc(n_rows + 1, sizeof *y);
    char (*titles)[96] = calloc(n_lines, sizeof *titles);
    plot_stage *set = NULL;
    int rc = -1;
    if (!ser || !x || !y || !titles) {
        tp_err_set(err, "out of memory");
        goto out;
    }
    size_t used = 0, line = 0;
    for (int m = 0; m < o->n_modes; m++)
        for (size_t b = 0; b < o->n_batch; b++)
            for (size_t c = 0; c < o->n_ctx; c++, line++) {
                size_t n = 0;
                for (size_t a = 0; a < o->n_tp; a++) {
                    size_t cell = ((((size_t)m * o->n_tp) + a) * o->n_batch + b) * o->n_ctx + c;
                    x[used + n] = (double)o->tps[a];
                    y[used + n++] = rows[cell].step_mean * 1e3;
                }
                int len = snprintf(titles[line], sizeof titles[line], "batch %ld", o->batches[b]);
                if (o->n_modes > 1)
                    len += snprintf(titles[line] + len, sizeof titles[line] - (size_t)len, " %s",
                                    o->modes[m] ? "graphs" : "eager");
                if (o->n_ctx > 1)
                    snprintf(titles[line] + len, sizeof titles[line] - (size_t)len, " ctx %ld",
                             o->ctxs[c]);
                ser[line] = (plot_xy_series){titles[line], n, x + used, y + used,
                                             PLOT_LINESPOINTS};
                used += n;
            }
    char title[256];
    snprintf(title, sizeof title, "%s, %s on %s: decode step vs TP degree", s->name, s->model.name,
             s->hw.name);
    plot_xy_data d = {.cmd = "sweep",
                      .name = "step_vs_tp",
                      .title = title,
                      .about = "mean decode step (ms) vs TP degree, one line per batch",
                      .xlabel = "TP degree (GPUs)",
                      .ylabel = "mean decode step (ms)",
                      .logx = 0,
                      .logy = 0,
                      .xtics_data = 1,
                      .series = ser,
                      .n_series = (int)n_lines};
    rc = plot_xy_stage(&d, o->plot, &set, err);
out:
    free(ser);
    free(x);
    free(y);
    free(titles);
    /* -o's bytes out before the commit holds the signals */
    if (!rc && o->out && ofile_flush(of, err)) rc = -1;
    sweep_commit_arg ca = {o, of, err};
    return plot_commit_with(&set, 1, rc, sweep_commit_out, &ca);
}

int tpsim_cmd_sweep(int argc, char **argv)
{
    tp_err err = {{0}};
    sweep_opts o;
    scn_opts so;
    memset(&o, 0, sizeof o);
    memset(&so, 0, sizeof so);
    o.req = (run_request){-1, -1, -1, -1, -1, 0, 0, RUN_REQ_PLAIN};
    const char *path = NULL;
    char fitted[SCN_MAX_FIT * SCN_MAX_FIT_KEYS][192];
    int parsed = sweep_parse(argc, argv, &o, &so, &path, &err);
    if (parsed > 0) return 0;
    if (parsed < 0) return cmd_fail(&err);
    scenario *s = calloc(2, sizeof *s); /* one per mode */
    run_summary *rows = calloc(SWEEP_MAX * 4, sizeof *rows);
    int *row_mode = calloc(SWEEP_MAX * 4, sizeof *row_mode), status = 2;
    size_t n_rows = 0, total;
    char shown[2048] = "";
    ofile of = {0};
    if (!s || !rows || !row_mode) {
        tp_err_set(&err, "out of memory");
        goto out;
    }
    /* defaults from the scenario for any axis not given; every axis checked before any work */
    if ((o.plot && plot_check(o.plot, &err)) || scn_opts_load(path, &so, s, &err)) goto out;
    cmd_notes(s);
    if (!o.n_tp) o.tps[o.n_tp++] = s->tp;
    if (!o.n_batch) o.batches[o.n_batch++] = s->batch;
    if (!o.n_ctx) o.ctxs[o.n_ctx++] = s->ctx;
    if (!o.n_modes) o.modes[o.n_modes++] = s->graphs;
    total = o.n_tp * o.n_batch * o.n_ctx * (size_t)o.n_modes;
    if (total > SWEEP_MAX * 4) {
        tp_err_set(&err, "sweep: %zu cells, at most %d", total, SWEEP_MAX * 4);
        goto out;
    }
    for (size_t a = 0; a < o.n_tp; a++)
        if (run_check_tp(s, o.tps[a], &err)) goto out;
    for (size_t c = 0; c < o.n_ctx; c++) /* before any cell runs, as the tps are */
        if (model_check_ctx(&s->model, o.ctxs[c], &err)) goto out;
    if (scenario_check_flag_calibs(s, o.tps, (int)o.n_tp, &err)) goto out;
    so.jobs = o.jobs; /* the fit's simulations run on the same threads, quietly */
    so.quiet = 1;
    if (o.fit_grid && cmd_sweep_fit(path, &so, o.fit_grid, fitted, shown, sizeof shown, &err))
        goto out;
    for (int m = 0; m < o.n_modes; m++) { /* the mode applies after the --set flags */
        snprintf(so.mode_set, sizeof so.mode_set, "execution.mode=%s",
                 o.modes[m] ? "graphs" : "eager");
        scenario_free(&s[m]); /* s[0] held the defaults' load (its kernel grids, kcal.h) */
        if (scn_opts_load(path, &so, &s[m], &err)) goto out;
    }
    n_rows = sweep_cells(&o, s, total, rows, row_mode);
    sweep_job job = {s, rows, row_mode};
    if (par_map(n_rows, o.jobs, sweep_cell, &job, o.quiet ? NULL : "sweep", &err)) goto out;
    for (size_t i = 0; i < n_rows; i++) row_mode[i] = o.modes[row_mode[i]]; /* now: graphs? */
    if (sweep_output(&o, path, s, row_mode, rows, n_rows, total, &of, &err)) goto out;
    if (o.plot && sweep_plot(&o, s, rows, n_rows, &of, &err)) goto out;
    fputs(shown, stderr);
    status = 0;
out:
    if (status) {
        ofile_abort(&of);
        cmd_fail(&err);
    }
    for (int m = 0; s && m < 2; m++) scenario_free(&s[m]);
    free(s);
    free(rows);
    free(row_mode);
    return status;
}
