/* cmd_fit.c: `tpsim fit-allreduce`, the command-line face of arfit.h.
 *
 * Reads a sweep, fits the linear and piecewise models, prints both (text or JSON) and, with -o,
 * writes the calibration file a scenario can name. Errors: exactly one line on stderr, nothing
 * on stdout, exit 2, and no output file (it is written to a temporary file in the same
 * directory and renamed into place only once complete).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync, fchmod */
#endif
#include "arfit.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_BAD_INPUT 2

static const char USAGE[] =
    "usage: tpsim fit-allreduce FILE [--tp K] [--weight abs|rel] [--min SIZE] [--max SIZE]\n"
    "                           [--fit linear|piecewise] [-o FILE.yaml] [--format text|json]\n"
    "                           [--hardware NAME]\n"
    "Fit t = lambda + 2(k-1)/k * b/beta to an all-reduce sweep (nccl-tests all_reduce_perf\n"
    "output or a tpsim-nccl-sweep CSV). SIZE is bytes or K/M/G (powers of 1024); the default\n"
    "range is 32K..256M. -o writes a calibration file; --fit picks the model it selects.\n";

typedef struct fit_args {
    const char *file;
    const char *out;
    const char *hardware;
    const char *fit;  /* "linear" or "piecewise" */
    int json;
    int tp;
    arfit_opts opts;
} fit_args;

/* "--name value" or "--name=value"; advances *i past what it used. NULL if not this flag. */
static const char *flag_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_tp(const char *v, int *tp, tp_err *err)
{
    char *end;
    errno = 0;
    long k = strtol(v, &end, 10);
    if (end == v || *end || errno || k < 2 || k > 4096)
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

/* One flag at argv[*i]: 1 if consumed, 0 if not a known flag, -1 on a bad value. */
static int parse_flag(int argc, char **argv, int *i, fit_args *a, tp_err *err)
{
    int missing = 0, c;
    const char *v;
    if ((v = flag_value(argc, argv, i, "--tp", &missing)))
        return parse_tp(v, &a->tp, err) == 0 ? 1 : -1;
    if ((v = flag_value(argc, argv, i, "--weight", &missing))) {
        if ((c = parse_choice("--weight", v, "abs", "rel", err)) < 0) return -1;
        a->opts.weight = c ? ARFIT_WEIGHT_REL : ARFIT_WEIGHT_ABS;
        return 1;
    }
    if ((v = flag_value(argc, argv, i, "--min", &missing)))
        return cli_size("fit-allreduce: --min", v, &a->opts.min_bytes, err) == 0 ? 1 : -1;
    if ((v = flag_value(argc, argv, i, "--max", &missing)))
        return cli_size("fit-allreduce: --max", v, &a->opts.max_bytes, err) == 0 ? 1 : -1;
    if ((v = flag_value(argc, argv, i, "--fit", &missing))) {
        if ((c = parse_choice("--fit", v, "linear", "piecewise", err)) < 0) return -1;
        a->fit = c ? "piecewise" : "linear";
        return 1;
    }
    if ((v = flag_value(argc, argv, i, "--format", &missing))) {
        if ((c = parse_choice("--format", v, "text", "json", err)) < 0) return -1;
        a->json = c;
        return 1;
    }
    if ((v = flag_value(argc, argv, i, "--hardware", &missing))) {
        if (!*v) return tp_err_set(err, "fit-allreduce: --hardware needs a name");
        a->hardware = v;
        return 1;
    }
    if ((v = flag_value(argc, argv, i, "-o", &missing)) ||
        (!missing && (v = flag_value(argc, argv, i, "--output", &missing)))) {
        if (!*v) return tp_err_set(err, "fit-allreduce: -o needs a file name");
        a->out = v;
        return 1;
    }
    if (missing) return tp_err_set(err, "fit-allreduce: %s needs a value", argv[*i]);
    return 0;
}

/* Returns 1 when help was asked for, 0 when args are complete, -1 on error. */
static int parse_args(int argc, char **argv, fit_args *a, tp_err *err)
{
    *a = (fit_args){.fit = "linear", .opts = arfit_default_opts()};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 1;
        int r = parse_flag(argc, argv, &i, a, err);
        if (r < 0) return -1;
        if (r > 0) continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return tp_err_set(err, "fit-allreduce: unknown option '%s' (see --help)", argv[i]);
        if (a->file)
            return tp_err_set(err, "fit-allreduce: one sweep file only, got '%s' and '%s'",
                              a->file, argv[i]);
        a->file = argv[i];
    }
    if (!a->file) return tp_err_set(err, "fit-allreduce: no sweep file given (see --help)");
    if (a->opts.min_bytes > a->opts.max_bytes)
        return tp_err_set(err, "fit-allreduce: --min is above --max");
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Reports
 * ------------------------------------------------------------------------------------------- */

static const char *format_name(arfit_format f)
{
    return f == ARFIT_FORMAT_CSV ? "tpsim-nccl-sweep CSV" : "nccl-tests all_reduce_perf";
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
                       const arfit_piecewise_fit *pw)
{
    char lo[32], hi[32], bias[64];
    arfit_format_size(a->opts.min_bytes, lo, sizeof lo);
    arfit_format_size(a->opts.max_bytes, hi, sizeof hi);
    printf("all-reduce fit: %s (%s), k=%d\n", a->file, format_name(s->format), s->k);
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
    if (a->out) printf("wrote %s (fit: %s)\n", a->out, a->fit);
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
                       const arfit_piecewise_fit *pw)
{
    printf("{\"file\":");
    json_string(a->file);
    printf(",\"format\":\"%s\",\"k\":%d,\"weight\":\"%s\",\"min_bytes\":%.0f,\"max_bytes\":%.0f,",
           s->format == ARFIT_FORMAT_CSV ? "csv" : "nccl-tests", s->k,
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
    if (a->out) {
        printf(",\"output\":");
        json_string(a->out);
        printf(",\"fit\":\"%s\"", a->fit);
    }
    printf("}\n");
}

/* ---------------------------------------------------------------------------------------------
 * The calibration file, written whole or not at all
 * ------------------------------------------------------------------------------------------- */

static int write_atomically(const fit_args *a, const arfit_sweep *s, const arfit_linear_fit *lin,
                            const arfit_piecewise_fit *pw, tp_err *err)
{
    char tmp[4096];
    const char *slash = strrchr(a->out, '/');
    int dir_len = slash ? (int)(slash - a->out + 1) : 0;
    if (snprintf(tmp, sizeof tmp, "%.*s.%s.tmp.XXXXXX", dir_len, a->out,
                 slash ? slash + 1 : a->out) >= (int)sizeof tmp)
        return tp_err_set(err, "%s: output path too long", a->out);
    int fd = mkstemp(tmp);
    if (fd < 0) return tp_err_set(err, "%s: cannot create: %s", a->out, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return tp_err_set(err, "%s: cannot write: %s", a->out, strerror(errno));
    }
    fchmod(fd, 0644); /* mkstemp's 0600 would hide a calibration meant to be shared */
    int bad = arfit_write_calibration(f, s, &a->opts, lin, pw, a->fit, a->hardware) != 0;
    bad |= fflush(f) != 0 || fsync(fd) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, a->out) != 0) {
        int e = errno;
        unlink(tmp);
        return tp_err_set(err, "%s: cannot write: %s", a->out, strerror(e));
    }
    return 0;
}

int tpsim_cmd_fit_allreduce(int argc, char **argv)
{
    tp_err err = {{0}};
    fit_args a;
    int r = parse_args(argc, argv, &a, &err);
    if (r == 1) {
        fputs(USAGE, stdout);
        return 0;
    }
    arfit_sweep s;
    arfit_linear_fit lin;
    arfit_piecewise_fit pw;
    int ok = r == 0 && arfit_parse_file(a.file, a.tp, &s, &err) == 0;
    if (ok) {
        ok = arfit_fit_linear(&s, &a.opts, &lin, &err) == 0 &&
             arfit_fit_piecewise(&s, &a.opts, &pw, &err) == 0 &&
             (!a.out || write_atomically(&a, &s, &lin, &pw, &err) == 0);
        if (ok) {
            if (a.json) print_json(&a, &s, &lin, &pw);
            else print_text(&a, &s, &lin, &pw);
        }
        arfit_sweep_free(&s);
    }
    if (!ok) {
        fprintf(stderr, "%s\n", err.msg);
        return EXIT_BAD_INPUT;
    }
    return fflush(stdout) == 0 ? 0 : EXIT_BAD_INPUT;
}
