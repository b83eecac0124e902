/* cmd_fit.c: `tpsim fit-allreduce`, the command-line face of arfit.h.
 *
 * Reads a sweep, fits the linear and piecewise models, prints both (text or JSON) and, with -o,
 * writes the calibration file a scenario can name. Errors: exactly one line on stderr, nothing
 * on stdout, exit 2, and no output file (ofile.h: written whole, committed only after the
 * report reached stdout).
 */
#include "araic.h"
#include "arfit.h"
#include "coll.h"
#include "cli.h"
#include "fprint.h"
#include "num.h"
#include "ofile.h"
#include "nccl_tuning.h"
#include "nccltune.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_BAD_INPUT 2

static const char USAGE[] = "usage: tpsim fit-allreduce FILE [flags]\n";
static const char HELP_TEXT[] =
    "Fit t = lambda + 2(k-1)/k * b/beta to an all-reduce sweep (nccl-tests all_reduce_perf\n"
    "output or a tpsim-nccl-sweep CSV). SIZE is bytes or K/M/G (powers of 1024); the default\n"
    "range is 32K..256M. --column picks nccl-tests' out-of-place (default), in-place or the\n"
    "smaller time. -o writes a calibration file (-o - to stdout, instead of the report) with\n"
    "the fit of lower BIC unless --fit picks one. --tuner also fits NCCL's own cost model\n"
    "(channels, bandwidth per channel, a per-call overhead) for that NCCL version with the\n"
    "algorithms the run allowed (default ring: NCCL_ALGO of the sweep) and writes its block;\n"
    "with --tuning-log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING output, the sweep's own\n"
    "stdout will do) channels, bandwidth and algorithms are read from NCCL's table instead.\n"
    "--aic GPU reads FILE as AIConfigurator's all-reduce table (gpu column GPU, --tp K rows,\n"
    "NCCL rows of --nccl DIR, vLLM rows of --vllm DIR; --hardware names the GPU, whose SM\n"
    "sets vLLM's rule): NCCL's rows fitted as above, and vLLM's one-stage, two-stage and\n"
    "symm-mem lines and eager dispatch written as the calibration's custom block.\n";

typedef struct fit_args {
    const char *file;
    const char *out;
    const char *hardware;
    const char *fit;  /* "linear" or "piecewise"; NULL: the lower BIC */
    const char *fit_by; /* "--fit" or "lower BIC" */
    const char *tuner; /* NCCL version, NULL: no tuner fit */
    const char *tuning_log; /* NCCL's TUNING table: channels and bandwidth read, not fitted */
    unsigned algos;    /* NT_ALGO_BIT set for the tuner fit */
    double nvls_busbw;
    int json;
    int tp;
    arfit_opts opts;
    araic_sel aic; /* aic.gpu: the file is AIConfigurator's table (--aic) */
} fit_args;

static int parse_tp(const char *v, int *tp, tp_err *err)
{
    long k;
    if (num_long(v, 2, 4096, &k) != NUM_OK)
        return tp_err_set(err, "fit-allreduce: --tp '%s' is not a whole number >= 2", v);
    *tp = (int)k;
    return 0;
}

static int parse_choice(const char *flag, const char *v, const char *a, const char *b,
                        tp_err *err)
{
    if (strcmp(v, a) == 0) return 0;
    if (strcmp(v, b) == 0) return 1;
    return tp_err_set(err, "fit-allreduce: %s '%s' is not %s or %s", flag, v, a, b);
}

/* --algos ring,tree,nvls into a mask of NT_ALGO_BIT()s. */
static int parse_algos(const char *v, unsigned *algos, tp_err *err)
{
    char buf[64], *tok, *save;
    snprintf(buf, sizeof buf, "%s", v);
    *algos = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int al = nt_algo_parse(tok);
        if (al < 0)
            return tp_err_set(err, "fit-allreduce: --algos '%s' is not ring, tree or nvls", tok);
        *algos |= NT_ALGO_BIT(al);
    }
    if (!*algos || strlen(v) >= sizeof buf)
        return tp_err_set(err, "fit-allreduce: --algos '%s', expected a list of ring, tree, nvls",
                          v);
    return 0;
}

/* --column oop|ip|min */
static int parse_column(const char *v, arfit_column *column, tp_err *err)
{
    if (!strcmp(v, "oop")) *column = ARFIT_COLUMN_OOP;
    else if (!strcmp(v, "ip")) *column = ARFIT_COLUMN_IP;
    else if (!strcmp(v, "min")) *column = ARFIT_COLUMN_MIN;
    else return tp_err_set(err, "fit-allreduce: --column '%s' is not oop, ip or min", v);
    return 0;
}

/* The flags together: a file, a range, and what --tuning-log and nvls need. */
static int check_args(const fit_args *a, tp_err *err)
{
    if (!a->file) return tp_err_set(err, "fit-allreduce: no sweep file given (see --help)");
    if ((a->aic.vllm_dir || a->aic.nccl_dir) && !a->aic.gpu)
        return tp_err_set(err, "fit-allreduce: --vllm and --nccl select rows of --aic GPU's "
                          "table, expected --aic");
    if (a->aic.gpu && (!a->aic.vllm_dir || !a->aic.nccl_dir || !a->tp || !a->hardware))
        return tp_err_set(err, "fit-allreduce: --aic needs --vllm DIR, --nccl DIR, --tp K and "
                          "--hardware NAME (its SM sets vLLM's rule)");
    if (a->aic.gpu && !coll_sm_of(a->hardware))
        return tp_err_set(err, "fit-allreduce: --hardware '%s' has no known compute capability "
                          "(vLLM's rule depends on it), expected e.g. H100 SXM or H200 SXM",
                          a->hardware);
    if (a->aic.gpu && a->tuner)
        return tp_err_set(err, "fit-allreduce: --tuner fits nccl-tests logs, not --aic tables");
    if (a->opts.min_bytes > a->opts.max_bytes)
        return tp_err_set(err, "fit-allreduce: --min is above --max");
    if (a->tuning_log && !a->tuner)
        return tp_err_set(err, "fit-allreduce: --tuning-log needs --tuner NCCL_VERSION (the "
                          "version whose latency constants apply)");
    if ((a->algos & NT_ALGO_BIT(NT_NVLS)) && a->nvls_busbw <= 0)
        return tp_err_set(err, "fit-allreduce: --algos nvls needs --nvls-busbw GBPS (its bus "
                          "bandwidth, e.g. from nccl-tests with NCCL_ALGO=NVLS)");
    return 0;
}

/* fit-allreduce's flags (parse_args reads them by index) */
static const cli_flag fit_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"tp", 0, 1, "K", "ranks of the sweep (a check against the file)"},
    {"weight", 0, 1, "abs|rel", "least squares on absolute or relative errors (default abs)"},
    {"min", 0, 1, "SIZE", "smallest message fitted (default 32K)"},
    {"max", 0, 1, "SIZE", "largest message fitted (default 256M)"},
    {"fit", 0, 1, "linear|piecewise", "the fit -o writes (default: the lower BIC)"},
    {"format", 0, 1, "text|json", "the report's format (default text)"},
    {"hardware", 0, 1, "NAME", "the hardware: the calibration file states"},
    {"output", 'o', 1, "FILE.yaml|-", "write the calibration file (-: to stdout)"},
    {"column", 0, 1, "oop|ip|min", "nccl-tests' out-of-place (default), in-place or\n"
                                   "smaller time"},
    {"tuner", 0, 1, "NCCL_VERSION", "also fit NCCL's own cost model for that version"},
    {"algos", 0, 1, "ring,tree,nvls", "the algorithms the run allowed (default ring)"},
    {"nvls-busbw", 0, 1, "GBPS", "NVLS bus bandwidth for the tuner fit"},
    {"tuning-log", 0, 1, "NCCL_LOG", "read channels, bandwidth and algorithms from NCCL's\n"
                                     "NCCL_DEBUG=INFO tuning table"},
    {"aic", 0, 1, "GPU", "FILE is AIConfigurator's all-reduce table; its gpu column"},
    {"vllm", 0, 1, "DIR", "--aic: the dir_version of the vLLM rows (e.g. 0.19.0)"},
    {"nccl", 0, 1, "DIR", "--aic: the dir_version of the NCCL rows (e.g. 2.29.2)"},
    CLI_END};

/* Returns 1 when help was asked for, 0 when args are complete, -1 on error. */
static int parse_args(int argc, char **argv, fit_args *a, tp_err *err)
{
    enum { F_HELP, F_TP, F_WEIGHT, F_MIN, F_MAX, F_FIT, F_FORMAT, F_HARDWARE, F_OUT, F_COLUMN,
           F_TUNER, F_ALGOS, F_NVLS, F_TUNING_LOG, F_AIC, F_VLLM, F_NCCL };
    *a = (fit_args){.opts = arfit_default_opts(), .algos = NT_ALGO_BIT(NT_RING)};
    cli_args ca;
    const char *v;
    int f, c;
    if (cli_begin(&ca, "fit-allreduce", "tpsim fit-allreduce --help", fit_flags, argc, argv, err))
        return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        switch (f) {
        case CLI_ERROR: return -1;
        case CLI_OPERAND:
            if (a->file)
                return tp_err_set(err, "fit-allreduce: one sweep file only, got '%s' and '%s'",
                                  a->file, v);
            a->file = v;
            break;
        case F_HELP: cli_help(stdout, USAGE, fit_flags, HELP_TEXT); return 1;
        case F_TP:
            if (parse_tp(v, &a->tp, err)) return -1;
            break;
        case F_WEIGHT:
            if ((c = parse_choice("--weight", v, "abs", "rel", err)) < 0) return -1;
            a->opts.weight = c ? ARFIT_WEIGHT_REL : ARFIT_WEIGHT_ABS;
            break;
        case F_MIN:
        case F_MAX:
            if (cli_size(f == F_MIN ? "fit-allreduce: --min" : "fit-allreduce: --max", v,
                         f == F_MIN ? &a->opts.min_bytes : &a->opts.max_bytes, err))
                return -1;
            break;
        case F_FIT:
            if ((c = parse_choice("--fit", v, "linear", "piecewise", err)) < 0) return -1;
            a->fit = c ? "piecewise" : "linear";
            a->fit_by = "--fit";
            break;
        case F_COLUMN:
            if (parse_column(v, &a->opts.column, err)) return -1;
            break;
        case F_TUNER:
            if (!nt_find(v))
                return tp_err_set(err, "fit-allreduce: --tuner '%s' is not in the tuner table, "
                                  "expected one of %s", v, nt_versions());
            a->tuner = v;
            break;
        case F_ALGOS:
            if (parse_algos(v, &a->algos, err)) return -1;
            break;
        case F_TUNING_LOG:
            a->tuning_log = v;
            break;
        case F_AIC:
        case F_VLLM:
        case F_NCCL:
            if (!*v) return tp_err_set(err, "fit-allreduce: %s needs a value", ca.shown);
            *(f == F_AIC ? &a->aic.gpu : f == F_VLLM ? &a->aic.vllm_dir : &a->aic.nccl_dir) = v;
            break;
        case F_NVLS:
            if (cli_double("fit-allreduce: --nvls-busbw", v, 1e-3, 1e5, &a->nvls_busbw, err))
                return -1;
            break;
        case F_FORMAT:
            if ((c = parse_choice("--format", v, "text", "json", err)) < 0) return -1;
            a->json = c;
            break;
        case F_HARDWARE:
            if (!*v) return tp_err_set(err, "fit-allreduce: --hardware needs a name");
            a->hardware = v;
            break;
        case F_OUT:
            if (!*v) return tp_err_set(err, "fit-allreduce: %s needs a file name", ca.shown);
            a->out = v;
            break;
        default: break;
        }
    }
    return check_args(a, err);
}

/* NCCL's own model fitted to the sweep (--tuner). */
typedef struct fit_tuner {
    int valid;
    nt_inputs in;
    double launch_us, mae_pct;
    int n_points;
    int from_log;           /* channels and bandwidth read from NCCL's TUNING table */
    double lat_diff_us;     /* largest |table latency - the version's| (from_log) */
} fit_tuner;

static int fit_tuner_model(const fit_args *a, const arfit_sweep *s, fit_tuner *t, tp_err *err)
{
    memset(t, 0, sizeof *t);
    if (!a->tuner) return 0;
    double *bytes = malloc(s->n * sizeof *bytes), *us = malloc(s->n * sizeof *us);
    if (!bytes || !us) {
        free(bytes);
        free(us);
        return tp_err_set(err, "fit-allreduce: out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->points[i].bytes >= a->opts.min_bytes && s->points[i].bytes <= a->opts.max_bytes) {
            bytes[n] = s->points[i].bytes;
            us[n++] = s->points[i].time_us;
        }
    t->in = (nt_inputs){nt_find(a->tuner), s->k, 1, 1, a->nvls_busbw, a->algos};
    int bad = 0;
    if (a->tuning_log) {
        ntr_tuning log;
        bad = ntr_tuning_read(a->tuning_log, &log, err) ||
              ntr_tuning_inputs(&log, a->tuning_log, a->tuner, &t->in, &t->lat_diff_us, err);
        t->from_log = 1;
        if (!bad && n >= ARFIT_MIN_POINTS)
            t->mae_pct = 100.0 * nt_fit_overhead(&t->in, bytes, us, n, &t->launch_us);
    } else if (n >= ARFIT_MIN_POINTS) {
        t->mae_pct = 100.0 * nt_fit(&t->in, bytes, us, n, &t->launch_us);
    }
    free(bytes);
    free(us);
    if (bad) return -1;
    if (n < ARFIT_MIN_POINTS)
        return tp_err_set(err, "%s: %zu points in the fit range, the tuner fit needs %d",
                          s->file, n, ARFIT_MIN_POINTS);
    t->n_points = (int)n;
    t->valid = 1;
    return 0;
}

/* --aic: the table read, vLLM's lines fitted; the NCCL rows become the sweep *s (owned by
 * x->table: araic_free, not arfit_sweep_free). */
typedef struct fit_aic {
    int valid, sm;
    araic_table table;
    araic_fit fit;
} fit_aic;

static int read_sweep(fit_args *a, arfit_sweep *s, fit_aic *x, tp_err *err)
{
    memset(x, 0, sizeof *x);
    if (!a->aic.gpu) return arfit_parse_file(a->file, a->tp, s, err);
    a->aic.tp = a->tp;
    x->sm = coll_sm_of(a->hardware);
    if (araic_read_file(a->file, &a->aic, &x->table, err)) return -1;
    if (araic_fit_lines(&x->table, x->sm, &x->fit, err)) {
        araic_free(&x->table);
        return -1;
    }
    x->valid = 1;
    *s = x->table.nccl; /* a view: x->table owns the points */
    return 0;
}

static void print_aic(const fit_aic *x)
{
    static const char *const names[] = {"one-stage", "two-stage", "symm-mem"};
    if (!x->valid) return;
    printf("vLLM %s in a CUDA graph (%zu sizes, %d rows read), t = latency + b/bw:\n",
           x->table.vllm_version, x->table.n_vllm, x->table.rows);
    for (int i = 0; i < 3; i++) {
        const araic_line *l = &x->fit.line[i];
        char lo[32], hi[32];
        arfit_format_size(l->first_bytes, lo, sizeof lo);
        arfit_format_size(l->last_bytes, hi, sizeof hi);
        if (l->valid)
            printf("  %-10s %8.3f us %9.2f GB/s  %s..%s (%d sizes, max |error| %.1f%%)\n",
                   names[i], l->latency_us, l->gbps, lo, hi, l->n, l->max_err_pct);
        else
            printf("  %-10s not fitted (vLLM's rule runs it at fewer than %d sizes)\n", names[i],
                   ARFIT_MIN_POINTS);
    }
    for (int i = 0; i < 2; i++)
        if (x->fit.dispatch_us[i] >= 0)
            printf("  eager dispatch (%s path, host per call) %.2f us (%d sizes)\n",
                   i ? "symm-mem" : "custom", x->fit.dispatch_us[i], x->fit.dispatch_n[i]);
}

/* A path as a plain YAML scalar: characters YAML would read as syntax become spaces. */
static void plain_path(char *dst, size_t len, const char *src)
{
    size_t j = 0;
    for (const char *p = src; *p && j + 1 < len; p++)
        dst[j++] = (isalnum((unsigned char)*p) || strchr("./_-+()", *p)) ? *p : ' ';
    dst[j] = '\0';
}

/* The calibration file: the fits, then the tuner block when fitted. */
static int write_calibration(FILE *f, const fit_args *a, const arfit_sweep *s,
                             const arfit_linear_fit *lin, const arfit_piecewise_fit *pw,
                             const fit_tuner *t, const fit_aic *x)
{
    if (arfit_write_calibration(f, s, &a->opts, lin, pw, a->fit, a->hardware)) return -1;
    if (x->valid)
        return araic_write_custom(f, &x->table, &x->fit, a->file, &a->aic, x->sm);
    if (!t->valid) return 0;
    static const char *const names[] = {"tree", "ring", "nvls"};
    fprintf(f, "# NCCL's own cost model (tpsim allreduce, collective.allreduce: nccl-tuner)\n");
    fprintf(f, "tuner:\n  nccl_version: \"%s\"\n  algorithms: [", a->tuner);
    for (int al = 0, first = 1; al < NT_NALGO; al++)
        if (t->in.algos & NT_ALGO_BIT(al))
            fprintf(f, "%s%s", first ? "" : ", ", names[al]), first = 0;
    fprintf(f, "]\n  channels: %.0f\n  bw_per_channel_gbps: %.4f\n", t->in.channels,
            t->in.bw_per_channel_gbps);
    if (t->in.nvls_busbw_gbps > 0) fprintf(f, "  nvls_busbw_gbps: %.3f\n", t->in.nvls_busbw_gbps);
    fprintf(f, "  launch_us: %.4f\n", t->launch_us);
    if (t->from_log)
        fprintf(f,
                "  source:\n    how: >-\n      Channels, bandwidth per channel (Ring Simple's "
                "algorithm bandwidth x 2(k-1)/k over the channels) and algorithms read from "
                "NCCL's own tuning table; NCCL %s's latency constants (docs/sources.md"
                "#nccl-tuner; the table's differ by at most %.2f us); the per-call overhead "
                "(launch_us) fitted by tpsim fit-allreduce over %d points; mean |error| %.1f%%.\n",
                a->tuner, t->lat_diff_us, t->n_points, t->mae_pct);
    else
        fprintf(f,
                "  source:\n    how: >-\n      Fitted by tpsim fit-allreduce --tuner %s: NCCL %s's "
                "latency constants and time formula (docs/sources.md#nccl-tuner), channels "
                "(whole, 1..64) and bandwidth per channel by least squares on relative error, "
                "plus a constant per-call overhead outside NCCL's model (launch_us), over %d "
                "points; mean |error| %.1f%%.\n",
                a->tuner, a->tuner, t->n_points, t->mae_pct);
    char log[256] = "";
    if (t->from_log) plain_path(log, sizeof log, a->tuning_log);
    fprintf(f, "    where: %s (%s)%s%s\n", s->file, arfit_column_name(a->opts.column),
            t->from_log ? ", and the tuning table in " : "", log);
    return ferror(f) ? -1 : 0;
}

/* The calibration with its fingerprint (fprint.h): its numbers and the logs it was fitted on,
 * so a loader tells an edited number from the fitted one. */
static int write_sealed(FILE *f, const fit_args *a, const arfit_sweep *s,
                        const arfit_linear_fit *lin, const arfit_piecewise_fit *pw,
                        const fit_tuner *tu, const fit_aic *aic, tp_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return tp_err_set(err, "fit-allreduce: out of memory");
    int bad = write_calibration(m, a, s, lin, pw, tu, aic);
    if (fclose(m) || bad) {
        free(text);
        return tp_err_set(err, "%s: cannot write the calibration", a->out);
    }
    const char *in[2] = {a->file, a->tuning_log};
    int rc = fp_seal(f, a->out, text, len, in, a->tuning_log ? 2 : 1, err);
    free(text);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Reports
 * ------------------------------------------------------------------------------------------- */

static const char *format_name(arfit_format f)
{
    return f == ARFIT_FORMAT_CSV   ? "tpsim-nccl-sweep CSV"
           : f == ARFIT_FORMAT_AIC ? "AIConfigurator all-reduce table"
                                   : "nccl-tests all_reduce_perf";
}

static void text_bias(const arfit_quality *q, char *buf, size_t len)
{
    if (q->band_points)
        snprintf(buf, len, "%+.1f%% (|err| %.1f%%, %d pts)", q->band_bias_pct, q->band_mae_pct,
                 q->band_points);
    else
        snprintf(buf, len, "n/a (no point)");
}

static void print_text(const fit_args *a, const arfit_sweep *s, const arfit_linear_fit *lin,
                       const arfit_piecewise_fit *pw, const fit_tuner *t)
{
    char lo[32], hi[32], bias[64];
    arfit_format_size(a->opts.min_bytes, lo, sizeof lo);
    arfit_format_size(a->opts.max_bytes, hi, sizeof hi);
    printf("all-reduce fit: %s (%s), k=%d, column %s\n", a->file, format_name(s->format), s->k,
           s->format == ARFIT_FORMAT_CSV ? "time_us_mean" : arfit_column_name(a->opts.column));
    printf("model t = lambda + 2(k-1)/k * b/beta; range %s..%s, %d points, weight %s\n", lo, hi,
           lin->n_points, a->opts.weight == ARFIT_WEIGHT_REL ? "rel" : "abs");
    printf("%-10s %-26s %10s %10s %10s   %s\n", "fit", "bytes", "lambda_us", "beta_gbps", "R2",
           "band bias 32-256K (fit-meas)/meas");
    text_bias(&lin->q, bias, sizeof bias);
    printf("%-10s %-26s %10.2f %10.1f %10.6f   %s\n", "linear", "all", lin->line.lambda_us,
           lin->line.beta_gbps, lin->q.r2, bias);
    text_bias(&pw->q, bias, sizeof bias);
    printf("%-10s %-26s %10s %10s %10.6f   %s\n", "piecewise",
           pw->n_pieces == 1 ? "1 piece" : "", "", "", pw->q.r2, bias);
    for (int j = 0; j < pw->n_pieces; j++) {
        const arfit_piece *pc = &pw->pieces[j];
        char from[32], first[32], last[32], span[160];
        arfit_format_size(pc->from_bytes, from, sizeof from);
        arfit_format_size(pc->first_bytes, first, sizeof first);
        arfit_format_size(pc->last_bytes, last, sizeof last);
        snprintf(span, sizeof span, "from %s (%s..%s, %d)", from, first, last, pc->n_points);
        printf("  piece %d  %-26s %10.2f %10.1f\n", j + 1, span, pc->line.lambda_us,
               pc->line.beta_gbps);
    }
    printf("BIC: linear %.1f, piecewise %.1f (%d pieces chosen among 1..%d)\n", lin->q.bic,
           pw->q.bic, pw->n_pieces, ARFIT_MAX_PIECES);
    printf("chosen fit: %s (%s)\n", a->fit, a->fit_by);
    if (t->valid)
        printf("nccl-tuner %s: %.0f channels x %.2f GB/s (%s), per-call overhead %.2f us, mean "
               "|error| %.1f%% (%d points)\n", a->tuner, t->in.channels, t->in.bw_per_channel_gbps,
               t->from_log ? "read from NCCL's tuning table" : "fitted", t->launch_us, t->mae_pct,
               t->n_points);
    if (t->valid && t->from_log)
        printf(
            "  the table's Tree/Ring latencies differ from NCCL %s's formula by at most %.2f us\n",
            a->tuner, t->lat_diff_us);
    if (a->out) printf("wrote %s (fit: %s, %s%s)\n", a->out, a->fit, a->fit_by,
                       t->valid ? ", with the tuner block" : "");
}

static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

/* JSON has no NaN: a band bias over no point is null. */
static void json_number(const char *fmt, double v)
{
    if (isfinite(v)) printf(fmt, v);
    else printf("null");
}

static void print_json(const fit_args *a, const arfit_sweep *s, const arfit_linear_fit *lin,
                       const arfit_piecewise_fit *pw, const fit_tuner *t)
{
    printf("{\"file\":");
    json_string(a->file);
    printf(",\"format\":\"%s\",\"tp\":%d,\"weight\":\"%s\",\"min_bytes\":%.0f,\"max_bytes\":%.0f,",
           s->format == ARFIT_FORMAT_CSV ? "csv" : s->format == ARFIT_FORMAT_AIC ? "aic"
                                                                           : "nccl-tests", s->k,
           a->opts.weight == ARFIT_WEIGHT_REL ? "rel" : "abs", a->opts.min_bytes,
           a->opts.max_bytes);
    printf("\"n_points\":%d,\"lambda_us\":%.6g,\"beta_gbps\":%.6g,\"r2\":%.8f,", lin->n_points,
           lin->line.lambda_us, lin->line.beta_gbps, lin->q.r2);
    printf("\"band_bias_pct\":");
    json_number("%.4g", lin->q.band_bias_pct);
    printf(",\"band_mae_pct\":");
    json_number("%.4g", lin->q.band_mae_pct);
    printf(",\"band_points\":%d,\"bic\":%.6g,", lin->q.band_points, lin->q.bic);
    printf("\"piecewise\":{\"n_pieces\":%d,\"r2\":%.8f,\"band_bias_pct\":", pw->n_pieces,
           pw->q.r2);
    json_number("%.4g", pw->q.band_bias_pct);
    printf(",\"band_mae_pct\":");
    json_number("%.4g", pw->q.band_mae_pct);
    printf(",\"bic\":%.6g,\"pieces\":[", pw->q.bic);
    for (int j = 0; j < pw->n_pieces; j++) {
        const arfit_piece *pc = &pw->pieces[j];
        printf("%s{\"from_bytes\":%.0f,\"first_bytes\":%.0f,\"last_bytes\":%.0f,"
               "\"n_points\":%d,\"lambda_us\":%.6g,\"beta_gbps\":%.6g}",
               j ? "," : "", pc->from_bytes, pc->first_bytes, pc->last_bytes, pc->n_points,
               pc->line.lambda_us, pc->line.beta_gbps);
    }
    printf("]}");
    printf(",\"column\":\"%s\",\"chosen_fit\":\"%s\",\"chosen_by\":\"%s\"",
           s->format == ARFIT_FORMAT_CSV ? "time_us_mean"
           : a->opts.column == ARFIT_COLUMN_OOP ? "oop"
           : a->opts.column == ARFIT_COLUMN_IP ? "ip" : "min",
           a->fit, a->fit_by);
    if (t->valid)
        printf(
            ",\"tuner\":{\"nccl_version\":\"%s\",\"channels\":%.0f,\"bw_per_channel_gbps\":%.10g,"
            "\"nvls_busbw_gbps\":%.10g,\"algos_mask\":%u,\"from_tuning_log\":%s,"
            "\"launch_us\":%.6g,\"mae_pct\":%.4g,\"n_points\":%d}",
            a->tuner, t->in.channels, t->in.bw_per_channel_gbps, t->in.nvls_busbw_gbps, t->in.algos,
            t->from_log ? "true" : "false", t->launch_us, t->mae_pct, t->n_points);
    if (a->out) { /* the fit written is chosen_fit's (one key for one thing, docs/json.md) */
        printf(",\"output\":");
        json_string(a->out);
    }
    printf("}\n");
}

/* The chosen fit misses the decode band (32-256 KiB) by more than 10% and the other does
 * better there: say so, on stderr, and go on. */
static void warn_band_bias(const fit_args *a, const arfit_linear_fit *lin,
                           const arfit_piecewise_fit *pw)
{
    int pick_pw = strcmp(a->fit, "piecewise") == 0;
    const arfit_quality *chosen = pick_pw ? &pw->q : &lin->q, *other = pick_pw ? &lin->q : &pw->q;
    if (!chosen->band_points || !(fabs(chosen->band_bias_pct) > 10.0) ||
        !(fabs(other->band_bias_pct) < fabs(chosen->band_bias_pct)))
        return;
    fprintf(stderr, "tpsim: warning: the %s fit (%s) is %+.1f%% off the measured times at "
            "32-256 KiB, where decode all-reduces are; the %s fit is %+.1f%% (--fit %s)\n",
            a->fit, a->fit_by, chosen->band_bias_pct, pick_pw ? "linear" : "piecewise",
            other->band_bias_pct, pick_pw ? "linear" : "piecewise");
}

int tpsim_cmd_fit_allreduce(int argc, char **argv)
{
    tp_err err = {{0}};
    fit_args a;
    int r = parse_args(argc, argv, &a, &err);
    if (r == 1) return 0; /* the help was printed */
    arfit_sweep s;
    arfit_linear_fit lin;
    arfit_piecewise_fit pw;
    fit_tuner tu;
    fit_aic aic;
    /* The calibration file goes through ofile (whole or not at all) and is committed only once
     * the report has reached stdout: a failed run leaves no file. */
    ofile of = {0};
    int ok = r == 0 && read_sweep(&a, &s, &aic, &err) == 0;
    if (ok) {
        ok = arfit_select_column(&s, a.opts.column, &err) == 0 &&
             arfit_fit_linear(&s, &a.opts, &lin, &err) == 0 &&
             arfit_fit_piecewise(&s, &a.opts, &pw, &err) == 0 &&
             fit_tuner_model(&a, &s, &tu, &err) == 0;
        if (ok && !a.fit) { /* the lower BIC, unless --fit says otherwise */
            a.fit = pw.q.bic < lin.q.bic ? "piecewise" : "linear";
            a.fit_by = "lower BIC";
        }
        if (ok) warn_band_bias(&a, &lin, &pw);
        int to_stdout = a.out && cli_is_stdout(a.out);
        if (ok && a.out && !to_stdout) {
            ok = ofile_open(&of, a.out, &err) == 0;
            if (ok) ok = write_sealed(of.f, &a, &s, &lin, &pw, &tu, &aic, &err) == 0;
        }
        if (ok && to_stdout) {
            /* -o -: the calibration file is the output; the report is not printed */
            ok = write_sealed(stdout, &a, &s, &lin, &pw, &tu, &aic, &err) == 0;
        } else if (ok) {
            if (a.json) print_json(&a, &s, &lin, &pw, &tu);
            else print_text(&a, &s, &lin, &pw, &tu);
            if (!a.json) print_aic(&aic);
            if (fflush(stdout) != 0 || ferror(stdout))
                ok = tp_err_set(&err, "fit-allreduce: cannot write to stdout: %s",
                                strerror(errno)) == 0;
        }
        if (ok && a.out && !to_stdout) ok = ofile_commit(&of, &err) == 0;
        ofile_abort(&of);
        if (aic.valid) araic_free(&aic.table);
        else arfit_sweep_free(&s);
    }
    if (!ok) {
        fprintf(stderr, "tpsim: %s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    return 0;
}
