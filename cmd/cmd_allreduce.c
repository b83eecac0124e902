/* cmd_allreduce.c: `tpsim allreduce`: what each collective model predicts for one all-reduce
 * over a range of sizes, and, with a measured nccl-tests log, how far off it is. This is how a
 * user sees which model fits their machine.
 *
 * Output: per size the bytes, the model that priced it (auto and vllm-custom fall back to
 * NCCL), the algorithm and protocol, the predicted time, and with --log the measured time and
 * the error. Errors: one line on stderr, nothing on stdout, exit 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arcal.h"
#include "arfit.h"
#include "cli.h"
#include "cmd.h"
#include "coll.h"
#include "jw.h"
#include "locate.h"
#include "plot.h"

#define AR_MAX_ROWS 64

static const char ar_usage[] = "usage: tpsim allreduce --tp K [flags]\n";
static const char ar_help_text[] =
    "Predict one all-reduce of each size over K ranks with a collective model (M, below;\n"
    "default auto) from an all-reduce calibration (default\n"
    "models/allreduce/h100-sxm-tpK.yaml). A..B steps by x2; sizes are bytes or K/M/G (powers\n"
    "of 1024). --log compares with the times of an nccl-tests all_reduce_perf log (its sizes\n"
    "when --sizes is not given), against NCCL's model unless --model says otherwise: the\n"
    "log measured NCCL, not vLLM's custom all-reduce. --plot DIR draws allreduce_latency:\n"
    "the modelled time against the message size, log-log, with the log's measured times\n"
    "beside it (PNG and SVG, with its .dat and .gp).\n";

typedef struct ar_args {
    long tp;
    const char *sizes, *model, *calib, *log, *plot;
    int graphs, json;
    arfit_column column;
} ar_args;

static int ar_parse_sizes(const char *text, double *out, size_t *n, tp_err *err)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) return tp_err_set(err, "--sizes: too long");
    snprintf(buf, sizeof buf, "%s", text);
    char *dots = strstr(buf, "..");
    *n = 0;
    if (dots) {
        double lo, hi;
        *dots = '\0';
        if (cli_size("--sizes", buf, &lo, err) || cli_size("--sizes", dots + 2, &hi, err))
            return -1;
        if (lo < 1 || hi < lo)
            return tp_err_set(err, "--sizes: '%s', expected A..B with 1 <= A <= B", text);
        for (double b = lo; b <= hi; b *= 2) {
            if (*n == AR_MAX_ROWS)
                return tp_err_set(err, "--sizes: '%s' has more than %d sizes", text, AR_MAX_ROWS);
            out[(*n)++] = b;
        }
        return 0;
    }
    char *save, *tok;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == AR_MAX_ROWS)
            return tp_err_set(err, "--sizes: more than %d sizes", AR_MAX_ROWS);
        if (cli_size("--sizes", tok, &out[*n], err)) return -1;
        if (out[*n] < 1) return tp_err_set(err, "--sizes: '%s' is not a positive size", tok);
        if (*n && out[*n] <= out[*n - 1])
            return tp_err_set(err, "--sizes: '%s' is not above the previous size, expected "
                              "increasing sizes", tok);
        (*n)++;
    }
    if (!*n) return tp_err_set(err, "--sizes: '%s', expected A..B or a list", text);
    return 0;
}

/* 1 for help, 0 to go on, -1 on error. */
static int ar_parse_args(int argc, char **argv, ar_args *a, tp_err *err)
{
    enum { F_HELP, F_TP, F_SIZES, F_MODEL, F_CALIB, F_MODE, F_LOG, F_COLUMN, F_FORMAT, F_PLOT };
    static const cli_flag flags[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"tp", 0, 1, "K", "ranks of the all-reduce (required)"},
        {"sizes", 0, 1, "A..B|A,B,...", "message sizes: A..B doubles, or a list (bytes or K/M/G)"},
        {"model", 0, 1, "M", COLL_MODEL_CHOICES " (default auto; with --log\n"
                             "NCCL's: nccl-tuner, else nccl-fit)"},
        {"calib", 0, 1, "FILE", "the all-reduce calibration\n"
                                "(default models/allreduce/h100-sxm-tpK.yaml)"},
        {"mode", 0, 1, "eager|graphs", "execution mode (default eager)"},
        {"log", 0, 1, "nccl-tests.out", "compare with an nccl-tests all_reduce_perf log"},
        {"column", 0, 1, "oop|ip|min", "the log's out-of-place (default), in-place or\n"
                                       "smaller time"},
        {"format", 0, 1, "text|json", "the report's format (default text)"},
        {"plot", 0, 1, "DIR", "draw latency vs message size (PNG, SVG) into DIR"},
        CLI_END};
    cli_args ca;
    const char *v;
    int f;
    *a = (ar_args){.tp = -1}; /* .model NULL: auto, or NCCL's own with --log (ar_default) */
    if (cli_begin(&ca, "allreduce", "tpsim allreduce --help", flags, argc, argv, err)) return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        switch (f) {
        case CLI_ERROR: return -1;
        case CLI_OPERAND:
            return tp_err_set(
                err, "allreduce: unexpected argument '%s' (see tpsim allreduce --help)", v);
        case F_HELP:
            cli_help(stdout, ar_usage, flags, ar_help_text);
            printf("  Collective models (M):\n");
            for (int m = 0; m < COLL_N; m++)
                printf("    %-12s %s\n", coll_models[m].name, coll_models[m].help);
            return 1;
        case F_TP:
            if (cli_long(ca.shown, v, 2, 1024, &a->tp, err)) return -1;
            break;
        case F_SIZES: a->sizes = v; break;
        case F_MODEL: a->model = v; break;
        case F_CALIB: a->calib = v; break;
        case F_LOG: a->log = v; break;
        case F_MODE:
            if (strcmp(v, "eager") && strcmp(v, "graphs"))
                return tp_err_set(err, "--mode: '%s', expected eager or graphs", v);
            a->graphs = !strcmp(v, "graphs");
            break;
        case F_COLUMN:
            if (!strcmp(v, "oop")) a->column = ARFIT_COLUMN_OOP;
            else if (!strcmp(v, "ip")) a->column = ARFIT_COLUMN_IP;
            else if (!strcmp(v, "min")) a->column = ARFIT_COLUMN_MIN;
            else return tp_err_set(err, "--column: '%s', expected oop, ip or min", v);
            break;
        case F_FORMAT:
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(err, "--format: '%s', expected text or json", v);
            a->json = !strcmp(v, "json");
            break;
        case F_PLOT: a->plot = v; break;
        default: break;
        }
    }
    if (a->tp < 0)
        return tp_err_set(err, "allreduce: --tp K is required (see tpsim allreduce --help)");
    if (!a->sizes && !a->log)
        return tp_err_set(err, "allreduce: give --sizes A..B, or --log with measured sizes");
    return 0;
}

typedef struct ar_row {
    double bytes, measured_us; /* measured < 0: none */
    coll_cost c;
} ar_row;

static void ar_print_text(const ar_args *a, const arcal *cal, const coll_setup *cs,
                          const ar_row *rows, size_t n, double mape, int n_meas)
{
    printf("tpsim allreduce: TP-%ld, model %s, %s mode, calibration %s (%s)\n", a->tp,
           coll_model_names[cs->model], a->graphs ? "CUDA-graph" : "eager", cal->path,
           cal->hardware);
    printf("%10s %12s  %-11s %-18s %-6s %10s", "size", "bytes", "priced by", "algo", "proto", "us");
    if (a->log) printf(" %11s %8s", "measured_us", "error");
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        char sz[32];
        arfit_format_size(rows[i].bytes, sz, sizeof sz);
        printf("%10s %12.0f  %-11s %-18s %-6s %10.2f", sz, rows[i].bytes, rows[i].c.model,
               rows[i].c.algo, rows[i].c.proto, rows[i].c.total_s * 1e6);
        if (a->log && rows[i].measured_us >= 0)
            printf(" %11.2f %+7.1f%%", rows[i].measured_us,
                   100.0 * (rows[i].c.total_s * 1e6 - rows[i].measured_us) / rows[i].measured_us);
        else if (a->log)
            printf(" %11s %8s", "-", "-");
        printf("\n");
    }
    if (a->log)
        printf("MAPE %.1f%% over %d measured sizes (%s, %s)\n", mape, n_meas, a->log,
               arfit_column_name(a->column));
    /* host work, measured eager minus graph: shown, never part of the GPU times above */
    if (cal->eager_dispatch_s >= 0 || cal->symm_eager_dispatch_s >= 0) {
        printf("eager dispatch per call (host, not GPU time):");
        if (cal->eager_dispatch_s >= 0)
            printf(" custom %.2f us", cal->eager_dispatch_s * 1e6);
        if (cal->symm_eager_dispatch_s >= 0)
            printf("%s symm-mem %.2f us", cal->eager_dispatch_s >= 0 ? "," : "",
                   cal->symm_eager_dispatch_s * 1e6);
        printf("\n");
    }
}

static void ar_print_json(const ar_args *a, const arcal *cal, const coll_setup *cs,
                          const ar_row *rows, size_t n, double mape, int n_meas)
{
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_kint(&w, "tp", a->tp);
    jw_kstr(&w, "collective_model", coll_model_names[cs->model]);
    jw_kstr(&w, "mode", a->graphs ? "graphs" : "eager");
    jw_kstr(&w, "calibration", cal->path);
    jw_kstr(&w, "hardware", cal->hardware);
    jw_knum(&w, "eager_dispatch_us",
            cal->eager_dispatch_s >= 0 ? cal->eager_dispatch_s * 1e6 : NAN);
    jw_knum(&w, "symm_mem_eager_dispatch_us",
            cal->symm_eager_dispatch_s >= 0 ? cal->symm_eager_dispatch_s * 1e6 : NAN);
    if (a->log) {
        jw_kstr(&w, "log", a->log);
        jw_kint(&w, "measured_sizes", n_meas);
        jw_knum(&w, "mape_pct", n_meas ? mape : NAN);
    }
    jw_key(&w, "rows");
    jw_arr(&w);
    for (size_t i = 0; i < n; i++) {
        jw_obj(&w);
        jw_knum(&w, "bytes", rows[i].bytes);
        jw_kstr(&w, "priced_by", rows[i].c.model);
        jw_kstr(&w, "algo", rows[i].c.algo);
        jw_kstr(&w, "proto", rows[i].c.proto);
        jw_knum(&w, "us", rows[i].c.total_s * 1e6);
        jw_knum(&w, "latency_us", rows[i].c.latency_s * 1e6);
        jw_knum(&w, "body_us", rows[i].c.body_s * 1e6);
        jw_kbool(&w, "copy_in", rows[i].c.copy_in);
        if (rows[i].measured_us >= 0) {
            jw_knum(&w, "measured_us", rows[i].measured_us);
            jw_knum(&w, "error_pct",
                    100.0 * (rows[i].c.total_s * 1e6 - rows[i].measured_us) / rows[i].measured_us);
        }
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    jw_done(&w);
}

/* allreduce_latency (plot.h's plot_xy): the model's time at every size, and the log's measured
 * times at the sizes it holds; log-log. */
static int ar_plot(const ar_args *a, const coll_setup *cs, const ar_row *rows, size_t n,
                   tp_err *err)
{
    double *x = calloc(2 * n + 1, sizeof *x), *y = calloc(2 * n + 1, sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return tp_err_set(err, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) x[i] = rows[i].bytes, y[i] = rows[i].c.total_s * 1e6;
    for (size_t i = 0; i < n; i++)
        if (rows[i].measured_us >= 0) x[n + m] = rows[i].bytes, y[n + m++] = rows[i].measured_us;
    char model[96], meas[1100], title[256];
    snprintf(model, sizeof model, "modelled (%s)", coll_model_names[cs->model]);
    const char *base = a->log ? strrchr(a->log, '/') : NULL;
    snprintf(meas, sizeof meas, "measured (%s, %s)", base ? base + 1 : a->log ? a->log : "",
             arfit_column_name(a->column));
    snprintf(title, sizeof title, "all-reduce over %ld ranks, %s mode, calibration %s", a->tp,
             a->graphs ? "CUDA-graph" : "eager", cs->cal->hardware);
    plot_xy_series ser[2] = {{model, n, x, y, PLOT_LINESPOINTS},
                             {meas, m, x + n, y + n, PLOT_POINTS}};
    plot_xy_data d = {.cmd = "allreduce",
                      .name = "allreduce_latency",
                      .title = title,
                      .about = "all-reduce time (us) vs message size (bytes), modelled and "
                               "measured",
                      .xlabel = "message size",
                      .ylabel = "all-reduce time (us)",
                      .logx = 1,
                      .logy = 1,
                      .series = ser,
                      .n_series = a->log ? 2 : 1};
    int rc = plot_xy(&d, a->plot, err);
    free(x);
    free(y);
    return rc;
}

/* The model when --model is not given: auto, or with --log the model of what the log ran:
 * an nccl-tests log measured NCCL, not vLLM's custom all-reduce, so nccl-tuner when the
 * calibration holds the tuner's data, else nccl-fit. */
static void ar_default(ar_args *a, coll_setup *cs)
{
    tp_err e = {{0}};
    cs->model = COLL_AUTO;
    if (a->log) {
        cs->model = COLL_NCCL_TUNER;
        if (coll_check(cs, &e)) cs->model = COLL_NCCL_FIT;
    }
    a->model = coll_model_names[cs->model];
}

int tpsim_cmd_allreduce(int argc, char **argv)
{
    tp_err err = {{0}};
    ar_args a;
    int r = ar_parse_args(argc, argv, &a, &err);
    /* the log measured NCCL (nccl-tests), so it is judged against NCCL's model unless --model
     * says otherwise: the tuner's when the calibration has its data, else the fit */
    if (r == 1) return 0; /* the help was printed */
    if (r) return cmd_fail(&err);
    int model = -1;
    for (int i = 0; a.model && coll_model_names[i]; i++)
        if (!strcmp(a.model, coll_model_names[i])) model = i;
    if (a.model && model < 0) {
        tp_err_set(&err, "--model: '%s', expected " COLL_MODEL_CHOICES, a.model);
        return cmd_fail(&err);
    }
    /* the bundled calibration by name, so it is found from any folder (locate.h) */
    char def[128], found[1024];
    snprintf(def, sizeof def, "h100-sxm-tp%ld", a.tp);
    const char *calib = locate_arg("models/allreduce", ".yaml", a.calib ? a.calib : def, found,
                                   sizeof found, &err);
    arcal *cal = malloc(sizeof *cal);
    ar_row *rows = calloc(AR_MAX_ROWS, sizeof *rows);
    double sizes[AR_MAX_ROWS];
    size_t n = 0;
    arfit_sweep sw = {0};
    int have_log = 0, status = 2;
    if (!cal || !rows) {
        tp_err_set(&err, "out of memory");
        goto out;
    }
    if ((a.plot && plot_check(a.plot, &err)) || !calib || arcal_load(calib, cal, &err)) goto out;
    if (cal->tp != a.tp) {
        tp_err_set(&err, "%s: a calibration for tp %ld, expected one for --tp %ld", cal->path,
                   cal->tp, a.tp);
        goto out;
    }
    coll_setup cs = {(coll_model)model, cal, coll_sm_of(cal->hardware)};
    if (!a.model) ar_default(&a, &cs);
    if (coll_check(&cs, &err)) goto out;
    if (a.sizes && ar_parse_sizes(a.sizes, sizes, &n, &err)) goto out;
    if (a.log) {
        if (arfit_parse_file(a.log, (int)a.tp, &sw, &err) ||
            arfit_select_column(&sw, a.column, &err))
            goto out;
        have_log = 1;
        if (!a.sizes) {
            if (sw.n > AR_MAX_ROWS) {
                tp_err_set(&err, "%s: %zu sizes, at most %d (use --sizes)", a.log, sw.n,
                           AR_MAX_ROWS);
                goto out;
            }
            for (size_t i = 0; i < sw.n; i++) sizes[n++] = sw.points[i].bytes;
        }
    }
    double ape = 0;
    int n_meas = 0;
    for (size_t i = 0; i < n; i++) {
        rows[i].bytes = sizes[i];
        rows[i].measured_us = -1;
        rows[i].c = coll_allreduce(&cs, sizes[i], a.graphs);
        for (size_t j = 0; have_log && j < sw.n; j++)
            if (sw.points[j].bytes == sizes[i]) rows[i].measured_us = sw.points[j].time_us;
        if (rows[i].measured_us >= 0) {
            ape += fabs(rows[i].c.total_s * 1e6 - rows[i].measured_us) / rows[i].measured_us;
            n_meas++;
        }
    }
    double mape = n_meas ? 100.0 * ape / n_meas : 0;
    if (a.json) ar_print_json(&a, cal, &cs, rows, n, mape, n_meas);
    else ar_print_text(&a, cal, &cs, rows, n, mape, n_meas);
    status = fflush(stdout) == 0 ? 0 : 2;
    if (status) tp_err_set(&err, "allreduce: writing the report failed");
    if (!status && a.plot && ar_plot(&a, &cs, rows, n, &err)) status = 2;
out:
    if (have_log) arfit_sweep_free(&sw);
    free(cal);
    free(rows);
    return status ? cmd_fail(&err) : 0;
}
