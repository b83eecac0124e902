/* plan_flags.c: see plan_flags.h. */
#include "plan_flags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "arcal.h"
#include "hw.h"
#include "locate.h"
#include "shard.h"

static const char pflags_usage[] = "usage: tpsim plan SCENARIO --gpus N --tpot-ms T [flags]\n";
static const char pflags_help_text[] =
    "  Searches every hardware x TP degree x mode x context, every batch 1..B whose weights +\n"
    "  KV cache fit in U x HBM less R GiB per GPU (vLLM's gpu_memory_utilization, default\n"
    "  0.90; reserve 4.84 GiB: vLLM's profiled activation + non-torch memory), simulates each\n"
    "  decode step and ranks the configurations meeting T ms per token by tokens/s per GPU\n"
    "  (batch / step / TP; replicas = N / TP). Per context: the ranking with 95% intervals,\n"
    "  winner and runner-up with why (host-, step-work-, straggler-, GPU- or all-reduce-bound,\n"
    "  as run's verdict; memory- or latency-capped), whether they separate, the Pareto\n"
    "  frontier; marks say where a row is outside the validated domain. Intervals are tpsim\n"
    "  validate's: the scenario's free parameters fitted on GRID (default: the bundled H100\n"
    "  grid) and their 95% profile-likelihood range, plus one measurement's error; a scenario\n"
    "  with no free parameter, prediction x (1 +- 1.96 x heldout_rms_pct / 100), the\n"
    "  root-mean-square relative error of its held-out cells that its validated: block\n"
    "  records (tpsim validate --write-domain; the low end at least 0), and no interval when\n"
    "  the block records none. Defaults:\n"
    "  the scenario's hardware and ctx, TP degrees of 1,2,4,8 that divide N, both modes, B\n"
    "  256; --ctx-range takes 5 contexts spaced evenly in log. Hardware: a models/hw/ file by\n"
    "  its id, GPU name or a unique id prefix (h100, h200, a100, l40s, b200). --format csv\n"
    "  (or --shard I/N -o FILE, a part for tpsim merge with its sidecar FILE.meta) writes\n"
    "  every cell, sweep's columns first. --plot DIR draws, per context, pareto-ctxC\n"
    "  (latency vs tokens/s per GPU: the frontier with its 95% intervals, the target, the\n"
    "  choice) and breakdown-ctxC (where the winner's and runner-up's step goes), PNG, SVG.\n"
    "  Host work is priced by vLLM V1 (engine vllm-v1, the vLLM run today), not the\n"
    "  scenario's engine, unless --set engine=NAME says otherwise; the fit runs under it too.\n"
    "  Scope: one decode step; no prefill interference, no queueing. With --workload\n"
    "  ISL,OSL,C (C clients in a closed loop, or rN for N requests/s over the N GPUs, split\n"
    "  evenly over the replicas) it searches serving instead: hardware x mode x TP x\n"
    "  max_num_seqs, each replica run by tpsim serve, ranked by output tokens/s per GPU\n"
    "  among those whose mean TPOT meets T (and mean TTFT --ttft-ms, when given).\n"
    "  Exit status: 0, 1 when some context has no configuration meeting T (the closest is\n"
    "  shown), 2 on bad input (one line).\n";

/* The all-reduce calibrations measured on h (hw_measured_files), the first by name for each TP
 * degree. */
static int pflags_calibs(const hw_spec *h, pflags_hw *out, tp_err *err)
{
    char (*paths)[HW_PATH_MAX] = malloc(LOCATE_MAX_NAMES * sizeof *paths);
    arcal *cal = malloc(sizeof *cal);
    if (!paths || !cal) {
        free(paths);
        free(cal);
        return tp_err_set(err, "out of memory");
    }
    int n = hw_measured_files(h, "models/allreduce", paths, LOCATE_MAX_NAMES);
    long seen[PFLAGS_MAX_CALIBS];
    out->n_calibs = 0;
    for (int i = 0; i < n && out->n_calibs < PFLAGS_MAX_CALIBS; i++) {
        tp_err ignored = {{0}};
        if (arcal_load(paths[i], cal, &ignored)) continue;
        int dup = 0;
        for (int j = 0; j < out->n_calibs; j++) dup |= seen[j] == cal->tp;
        if (dup) continue;
        seen[out->n_calibs] = cal->tp;
        snprintf(out->calibs[out->n_calibs++], sizeof out->calibs[0], "%s", paths[i]);
    }
    free(paths);
    free(cal);
    return 0;
}

/* --hardware A,B: each a models/hw file by id, name, alias or id prefix (hw_resolve) */
static int pflags_parse_hw(const char *text, pflags_opts *o, tp_err *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    o->n_hw = 0;
    for (char *p = buf, *comma; p; p = comma) {
        comma = strchr(p, ',');
        if (comma) *comma++ = '\0';
        if (!*p)
            return tp_err_set(err, "--hardware: '%s' has an empty name, expected names "
                              "separated by commas", text);
        if (o->n_hw == PLAN_MAX_HW) return tp_err_set(err, "--hardware: at most %d", PLAN_MAX_HW);
        pflags_hw *h = &o->hws[o->n_hw];
        hw_spec spec;
        char path[1024];
        if (hw_resolve(p, path, sizeof path, &spec, err))
            return tp_err_set(err, "--hardware: %s", err->msg);
        snprintf(h->file, sizeof h->file, "%s", locate_is_name(p, ".yaml") ? spec.id : path);
        for (int i = 0; i < o->n_hw; i++)
            if (!strcmp(o->hws[i].file, h->file))
                return tp_err_set(err, "--hardware: '%s' listed twice", p);
        if (pflags_calibs(&spec, h, err)) return -1;
        o->n_hw++;
    }
    return 0;
}

/* "A..B": five contexts A .. B evenly spaced in log, rounded, repeats dropped */
static int pflags_ctx_range(const char *flag, const char *text, pflags_opts *o, tp_err *err)
{
    const char *dots = strstr(text, "..");
    char a[32], b[32];
    long lo, hi;
    if (!dots || (size_t)(dots - text) >= sizeof a || strlen(dots + 2) >= sizeof b)
        return tp_err_set(err, "%s: '%s', expected A..B (two contexts, A < B)", flag, text);
    snprintf(a, sizeof a, "%.*s", (int)(dots - text), text);
    snprintf(b, sizeof b, "%s", dots + 2);
    if (cli_long(flag, a, 1, 1L << 24, &lo, err) || cli_long(flag, b, 1, 1L << 24, &hi, err))
        return -1;
    if (lo >= hi) return tp_err_set(err, "%s: %ld..%ld, expected A < B", flag, lo, hi);
    o->n_ctx = 0;
    for (int i = 0; i < 5; i++) {
        long c = i == 4
                     ? hi
                     : lround(exp(log((double)lo) + i * (log((double)hi) - log((double)lo)) / 4));
        if (!o->n_ctx || o->ctxs[o->n_ctx - 1] != c) o->ctxs[o->n_ctx++] = c;
    }
    return 0;
}

/* --workload ISL,OSL,C or ISL,OSL,rR. */
static int pflags_workload(const char *flag, const char *text, pflags_opts *o, tp_err *err)
{
    char part[3][64];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        const char *c = i < 2 ? strchr(p, ',') : p + strlen(p);
        if (!c || (size_t)(c - p) >= sizeof part[i] || (i == 2 && strchr(p, ',')))
            return tp_err_set(err, "%s: '%s', expected ISL,OSL,C (clients) or ISL,OSL,rR "
                              "(requests per second)", flag, text);
        snprintf(part[i], sizeof part[i], "%.*s", (int)(c - p), p);
        p = c + 1;
    }
    if (cli_long(flag, part[0], 1, 1L << 24, &o->wl_isl, err) ||
        cli_long(flag, part[1], 1, 1L << 24, &o->wl_osl, err))
        return -1;
    o->wl_conc = 0, o->wl_rate = 0;
    if (part[2][0] == 'r') {
        if (cli_double(flag, part[2] + 1, 1e-9, 1e9, &o->wl_rate, err)) return -1;
    } else if (cli_long(flag, part[2], 1, 1000000, &o->wl_conc, err)) {
        return -1;
    }
    o->workload = 1;
    return 0;
}

/* The parsed flags together: required ones, --shard's and --tp's constraints; then the
 * scenario and the grid located. 0, or -1 with err set. */
static int pflags_check(pflags_opts *o, const char **path, tp_err *err)
{
    if (!*path) return tp_err_set(err, "plan: missing SCENARIO (see tpsim plan --help)");
    if (!o->gpus) return tp_err_set(err, "plan: missing --gpus N (the GPUs to deploy on)");
    if (!o->tpot_ms)
        return tp_err_set(err, "plan: missing --tpot-ms T (the per-token latency target)");
    if (o->ttft_ms && !o->workload)
        return tp_err_set(err, "--ttft-ms: a TTFT target needs a serving load, expected "
                          "--workload ISL,OSL,C too");
    if (o->workload && (o->n_shards || o->plot || o->ctx_given))
        return tp_err_set(err, "--workload: the serving search takes no %s, expected it without",
                          o->n_shards ? "--shard" : o->plot ? "--plot" : "--ctx");
    if (o->n_shards && o->plot)
        return tp_err_set(
            err, "--plot: a shard holds part of the search, expected --plot without --shard");
    if (o->n_shards && o->format != 1)
        return tp_err_set(err,
                          "--shard: parts are CSV (tpsim merge joins them), expected --format csv");
    if (o->n_shards && !o->out)
        return tp_err_set(err, "--shard: a part goes to a file with its sidecar FILE.meta, "
                          "expected -o FILE");
    for (size_t i = 0; i < o->n_tp; i++) {
        if (o->tps[i] > o->gpus)
            return tp_err_set(err, "--tp: TP-%ld needs more than the %ld GPUs of --gpus", o->tps[i],
                              o->gpus);
        if (o->gpus % o->tps[i])
            return tp_err_set(err,
                              "--tp: %ld GPUs are not divisible by TP-%ld, expected TP degrees "
                              "that divide --gpus (replicas = N / TP)",
                              o->gpus, o->tps[i]);
        for (size_t j = 0; j < i; j++)
            if (o->tps[j] == o->tps[i])
                return tp_err_set(err, "--tp: TP-%ld listed twice", o->tps[i]);
    }
    if (!(*path = locate_arg("scenarios", ".yaml", *path, o->scn_buf, sizeof o->scn_buf, err)))
        return -1;
    if (o->grid) {
        if (!(o->grid =
                  locate_arg("validate", ".csv", o->grid, o->grid_buf, sizeof o->grid_buf, err)))
            return -1;
    } else { /* as tpsim validate: SCENARIO_DIR/../validate/h100-ctx2048.csv, else validate/ */
        const char *slash = strrchr(*path, '/');
        char dir[1024];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - *path) : 0, *path);
        if (locate_file("validate", ".csv", "../validate/h100-ctx2048.csv", dir, o->grid_buf,
                        sizeof o->grid_buf, err))
            return -1;
        o->grid = o->grid_buf;
    }
    return 0;
}

/* plan's flags (pflags_flag reads them by index) */
enum { F_HELP, F_GPUS, F_TPOT, F_HW, F_TP, F_MODE, F_CTX, F_CTX_RANGE, F_BATCH_MAX, F_UTIL,
       F_RESERVE, F_TOP, F_GRID, F_NO_IV, F_FORMAT, F_OUT, F_STEPS, F_WARMUP, F_SEED,
       F_JOBS, F_QUIET, F_SHARD, F_PLOT, F_WORKLOAD, F_TTFT };
static const cli_flag pflags_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"gpus", 0, 1, "N", "GPUs to deploy on (required)"},
    {"tpot-ms", 0, 1, "T", "the per-token latency target in ms (required)"},
    {"hardware", 0, 1, "h100,h200,...", "hardware to search: h100, h200, a100, l40s, b200\n"
                                        "(default: the scenario's)"},
    {"tp", 0, 1, "1,2,4,8", "TP degrees (default: those of 1,2,4,8 that divide N)"},
    {"mode", 0, 1, "eager,graphs", "execution modes (default: both)"},
    {"ctx", 0, 1, "C,...", "contexts (default: the scenario's ctx)"},
    {"ctx-range", 0, 1, "A..B", "5 contexts from A to B, spaced evenly in log"},
    {"batch-max", 0, 1, "B", "largest batch searched (default 256)"},
    {"gpu-memory-utilization", 0, 1, "U", "share of HBM for weights + KV cache (default 0.90)"},
    {"reserve-gib", 0, 1, "R", "GiB per GPU reserved for activations (default 4.84)"},
    {"top", 0, 1, "N", "rows of each ranking shown (default 10)"},
    {"grid", 0, 1, "GRID", "the grid the intervals' fit uses (default: the bundled H100 one)"},
    {"no-intervals", 0, 0, NULL, "skip the 95% intervals (faster)"},
    {"format", 0, 1, "text|csv|json", "the report's format (default text)"},
    {"output", 'o', 1, "FILE|-", "write the report to FILE (default: stdout)"},
    {"steps", 0, 1, "N", "decode steps measured per cell"},
    {"warmup", 0, 1, "N", "steps run first and not measured"},
    {"seed", 0, 1, "S", "the random seed (default: the scenario's)"},
    {"jobs", 0, 1, "N", "cells at once (default: one per core)"},
    {"quiet", 0, 0, NULL, "no progress line on a terminal"},
    {"shard", 0, 1, "I/N", "only cells I, I+N, ...: a CSV part for tpsim merge"},
    {"plot", 0, 1, "DIR", "draw the Pareto and breakdown figures (PNG, SVG) into DIR"},
    {"workload", 0, 1, "ISL,OSL,C|rR", "plan serving: prompt and output tokens per request and\n"
                                        "C clients (closed loop) or R requests/s in all"},
    {"ttft-ms", 0, 1, "T", "with --workload: the mean time-to-first-token target in ms"},
    CMD_SET_FLAG,
    CMD_MODEL_FLAG,
    CMD_CALIB_FLAG,
    CMD_MEASURED_FLAG,
    CMD_FOREIGN_FLAG,
    CLI_END};

/* One flag or operand into o and so: 0, 1 for --help, -1 with err set. */
static int pflags_flag(pflags_opts *o, scn_opts *so, const char **path, int f, const char *shown,
                     const char *v, tp_err *err)
{
    long lv;
    if (f == CLI_OPERAND) {
        if (*path) return tp_err_set(err, "plan: a second scenario '%s', expected one", v);
        *path = v;
    } else if (f == F_HELP) {
        return 1;
    } else if (f == F_GPUS) {
        if (cli_long(shown, v, 1, 1 << 20, &o->gpus, err)) return -1;
    } else if (f == F_TPOT) {
        /* a target at or below zero is impossible, not merely unmet */
        if (cli_double(shown, v, 1e-6, 1e6, &o->tpot_ms, err)) return -1;
    } else if (f == F_HW) {
        if (pflags_parse_hw(v, o, err)) return -1;
    } else if (f == F_TP) {
        if (cli_list(shown, v, 1, 1024, o->tps, PLAN_MAX_TP, &o->n_tp, err)) return -1;
    } else if (f == F_MODE) {
        if (cli_modes(v, o->modes, &o->n_modes, err)) return -1;
    } else if (f == F_CTX || f == F_CTX_RANGE) {
        if (o->ctx_given)
            return tp_err_set(
                err, "%s: the contexts are already given, expected one of --ctx, --ctx-range",
                shown);
        o->ctx_given = 1;
        if (f == F_CTX
                ? cli_list(shown, v, 1, 1L << 24, o->ctxs, PLAN_MAX_CTX, &o->n_ctx, err)
                : pflags_ctx_range(shown, v, o, err))
            return -1;
    } else if (f == F_BATCH_MAX) {
        if (cli_long(shown, v, 1, 1L << 16, &o->batch_max, err)) return -1;
    } else if (f == F_UTIL) {
        if (cli_double(shown, v, 0.01, 1.0, &o->util, err)) return -1;
    } else if (f == F_RESERVE) {
        if (cli_double(shown, v, 0, 1e4, &o->reserve_gib, err)) return -1;
    } else if (f == F_TOP) {
        if (cli_long(shown, v, 1, 1000, &lv, err)) return -1;
        o->top = (int)lv;
    } else if (f == F_GRID) {
        o->grid = v;
    } else if (f == F_NO_IV) {
        o->no_intervals = 1;
    } else if (f == F_FORMAT) {
        o->format = !strcmp(v, "text")   ? 0
                    : !strcmp(v, "csv")  ? 1
                    : !strcmp(v, "json") ? 2
                                         : -1;
        if (o->format < 0)
            return tp_err_set(err, "--format: '%s', expected text, csv or json", v);
    } else if (f == F_OUT) {
        o->out = cli_is_stdout(v) ? NULL : v;
    } else if (f == F_STEPS || f == F_WARMUP) {
        if (cli_long(shown, v, f == F_STEPS, 1000000, &lv, err)) return -1;
        *(f == F_STEPS ? &o->req.steps : &o->req.warmup) = lv;
    } else if (f == F_SEED) {
        if (cli_u64(shown, v, &o->req.seed, err)) return -1;
        o->have_seed = 1;
    } else if (f == F_JOBS) {
        if (cli_long(shown, v, 1, 1024, &lv, err)) return -1;
        o->jobs = (int)lv;
    } else if (f == F_QUIET) {
        o->quiet = 1;
    } else if (f == F_PLOT) {
        o->plot = v;
    } else if (f == F_WORKLOAD) {
        if (pflags_workload(shown, v, o, err)) return -1;
    } else if (f == F_TTFT) {
        if (cli_double(shown, v, 1e-6, 1e9, &o->ttft_ms, err)) return -1;
    } else if (f == F_SHARD) {
        if (shard_parse(v, &o->shard, &o->n_shards, err)) return -1;
    } else if (cmd_scn_flag(so, pflags_flags[f].name, v, err) < 0) {
        return -1;
    }
    return 0;
}

int pflags_parse(int argc, char **argv, pflags_opts *o, scn_opts *so, const char **path,
                      tp_err *err)
{
    const char *v;
    cli_args ca;
    int f, rc;
    if (cli_begin(&ca, "plan", "tpsim plan --help", pflags_flags, argc, argv, err)) return -1;
    o->fp = SHARD_FP_INIT;
    shard_fp_flag(&o->fp, "plan", NULL); /* a plan's parts are not a sweep's */
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        if (f == CLI_ERROR) return -1;
        /* every flag that shapes the rows goes into the fingerprint, in order (shard.h) */
        if (f >= 0 && f != F_OUT && f != F_JOBS && f != F_QUIET && f != F_SHARD)
            shard_fp_flag(&o->fp, pflags_flags[f].name, v);
        if ((rc = pflags_flag(o, so, path, f, ca.shown, v, err))) return rc;
    }
    return pflags_check(o, path, err);
}

void pflags_defaults(pflags_opts *o)
{
    memset(o, 0, sizeof *o);
    o->req = (run_request){-1, -1, -1, -1, -1, 0, 0, RUN_REQ_PLAIN};
    o->batch_max = 256, o->util = PLAN_MEM_UTIL, o->reserve_gib = PLAN_RESERVE_GIB, o->top = 10;
}

void pflags_help(FILE *f) { cli_help(f, pflags_usage, pflags_flags, pflags_help_text); }
