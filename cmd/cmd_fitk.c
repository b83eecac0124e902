/* cmd_fitk.c: `tpsim fit-kernels`, the command-line face of kprof.h and kfit.h.
 *
 * Fits: reads profiles, fits every kernel class (the laws compared by held-out error across
 * TP degrees), prints per class the laws' errors, R^2, MAPE and the residual by TP degree
 * and token count (text or JSON) and, with -o, writes the calibration a scenario names with
 * `kernels:`. --test prices every row of a profile with a calibration from the row's own
 * shape and reports per class and TP degree the MAPE and the worst error. Errors: one line,
 * exit 2, no output file.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "csv.h"
#include "fprint.h"
#include "cmd.h"
#include "jw.h"
#include "kcal.h"
#include "kfit.h"
#include "kprof.h"
#include "ofile.h"
#include "phys.h"
#include "pline.h"

#define FK_MAX_FILES 16

static const char FK_USAGE[] =
    "usage: tpsim fit-kernels PROFILE... --hardware NAME [flags]\n"
    "       tpsim fit-kernels --test PROFILE --calib FILE.yaml [flags]\n";
static const char FK_HELP_TEXT[] =
    "Fit per kernel class (gemm, attention, norm, rope, activation, add, embedding) a cost law\n"
    "t = t0 + ... to per-operator GPU profiles: Vidur's mlp.csv (time_stats.OP.median in ms and\n"
    "its shape columns), tpsim's decode-attention CSV (source,batch,context,q_heads,kv_heads,\n"
    "head_dim,kv_dtype_bytes,time_us), tpsim-probe's hardware file (FILE.yaml: its GEMV\n"
    "bandwidths) or tpsim trace import --kernels' listing (rank,kind,start_ns,dur_us,bytes,\n"
    "name: classed by kernel name; collectives and names of no class are reported, not fitted).\n"
    "Each op's bytes and FLOPs are those tpsim's program gives it. The laws const, linear\n"
    "(t0 + bytes/bw), row (+ FLOPs per token), seq (+ per sequence; attention), roofline\n"
    "(t0 + max(bytes/bw, flops/F)), sum, smooth (t0 + (mem^q + math^q)^(1/q)), tiled (smooth,\n"
    "the batch padded to 64-row tiles; GEMM) and floor ((t0^q + mem^q)^(1/q)) are compared by\n"
    "held-out MAPE, each TP degree (attention source, trace rank) predicted from a fit on the\n"
    "others; the best is refitted on all rows. The sampler and copies, which the profiles do\n"
    "not measure, take the add class's law (from: add). -o writes the calibration (every class\n"
    "needed). --test prices a profile the calibration was not fitted on and reports MAPE and\n"
    "worst error per class, TP. PATH@CLASS,... keeps only those classes' rows of a profile.\n"
    "AIConfigurator's tables (gemm_dtype,m,n,k,latency_ms; decode and prefill attention) are\n"
    "read too; their classes may also be priced by the measured grid (law grid: interpolated\n"
    "in log m, n, k), chosen like any law by held-out error over whole shapes left out, and\n"
    "written beside the calibration as FILE.CLASS.csv. --borrowed PROFILE (with --borrowed-from\n"
    "GPU) is a profile measured on another GPU, for classes no profile of --hardware measures:\n"
    "its classes are fitted as any, and each says in its source: that it is borrowed.\n";

typedef struct fk_args {
    const char *files[FK_MAX_FILES];
    int n_files;
    const char *hardware, *out, *test, *calib;
    int json, quiet;
    int n_own;                  /* files[0..n_own) are the hardware's, the rest --borrowed */
    const char *borrowed_from;  /* the GPU the --borrowed profiles measured */
} fk_args;

/* one flag table and its switch: long because a split hides which flag sets what */
static int fk_parse(int argc, char **argv, fk_args *a, tp_err *err)
{
    enum { F_HELP, F_HW, F_OUT, F_FORMAT, F_TEST, F_CALIB, F_BORROWED, F_BORROWED_FROM, F_QUIET };
    static const cli_flag flags[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"hardware", 0, 1, "NAME", "the hardware: the calibration states (required with -o)"},
        {"output", 'o', 1, "FILE.yaml|-", "write the kernel calibration (every class needed)"},
        {"format", 0, 1, "text|json", "the report's format (default text)"},
        {"test", 0, 1, "PROFILE", "price a profile the calibration was not fitted on"},
        {"calib", 0, 1, "FILE.yaml", "the kernel calibration --test prices with"},
        {"borrowed", 0, 1, "PROFILE", "a profile measured on another GPU (--borrowed-from)"},
        {"borrowed-from", 0, 1, "NAME", "the GPU the --borrowed profiles were measured on"},
        {"quiet", 0, 0, NULL, "no progress line on a terminal"},
        CLI_END};
    memset(a, 0, sizeof *a);
    cli_args ca;
    const char *v, *borrowed[FK_MAX_FILES];
    int f, n_borrowed = 0;
    if (cli_begin(&ca, "fit-kernels", "tpsim fit-kernels --help", flags, argc, argv, err))
        return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        switch (f) {
        case CLI_ERROR: return -1;
        case CLI_OPERAND:
            if (a->n_files == FK_MAX_FILES)
                return tp_err_set(err,
                                  "fit-kernels: more than %d profiles, expected at most that many",
                                  FK_MAX_FILES);
            a->files[a->n_files++] = v;
            break;
        case F_HELP: cli_help(stdout, FK_USAGE, flags, FK_HELP_TEXT); return 1;
        case F_HW:
            if (!*v || strlen(v) >= 64)
                return tp_err_set(err, "fit-kernels: --hardware needs a name of 1..63 characters");
            for (const char *p = v; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr(" ._-+()", *p))
                    return tp_err_set(err, "fit-kernels: --hardware '%s': letters, digits, "
                                      "spaces and ._-+() only, expected a name like 'H100 SXM'", v);
            a->hardware = v;
            break;
        case F_OUT:
            if (!*v) return tp_err_set(err, "fit-kernels: %s needs a file name", ca.shown);
            a->out = v;
            break;
        case F_FORMAT:
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(err, "fit-kernels: --format '%s' is not text or json", v);
            a->json = !strcmp(v, "json");
            break;
        case F_TEST: a->test = v; break;
        case F_QUIET: a->quiet = 1; break;
        case F_CALIB: a->calib = v; break;
        case F_BORROWED:
            if (n_borrowed == FK_MAX_FILES)
                return tp_err_set(err, "fit-kernels: more than %d --borrowed profiles",
                                  FK_MAX_FILES);
            borrowed[n_borrowed++] = v;
            break;
        case F_BORROWED_FROM:
            if (!*v || strlen(v) >= 64)
                return tp_err_set(err, "fit-kernels: --borrowed-from needs a GPU name of 1..63 "
                                  "characters");
            a->borrowed_from = v;
            break;
        default: break;
        }
    }
    if (a->test || a->calib) {
        if (!a->test || !a->calib)
            return tp_err_set(err, "fit-kernels: --test PROFILE and --calib FILE go together");
        if (a->n_files || a->out || a->hardware)
            return tp_err_set(err, "fit-kernels: --test takes no other profile, -o or --hardware");
        return 0;
    }
    if (!a->n_files) return tp_err_set(err, "fit-kernels: no profile given (see --help)");
    if (!n_borrowed != !a->borrowed_from)
        return tp_err_set(err, "fit-kernels: --borrowed PROFILE and --borrowed-from GPU go "
                          "together");
    a->n_own = a->n_files;
    if (a->n_files + n_borrowed > FK_MAX_FILES)
        return tp_err_set(err, "fit-kernels: more than %d profiles, expected at most that many",
                          FK_MAX_FILES);
    for (int i = 0; i < n_borrowed; i++) a->files[a->n_files++] = borrowed[i];
    if (a->out && !a->hardware)
        return tp_err_set(err, "fit-kernels: -o needs --hardware NAME (the GPU the profiles were "
                          "measured on, as its hardware file names it)");
    return 0;
}

/* ------------------------------------------------------------------ breakdowns -------- */

#define FK_BINS 5
static const char *const fk_bin_names[FK_BINS] = {"1", "2-16", "17-128", "129-1024", ">1024"};
static int fk_bin(long tokens)
{
    return tokens <= 1 ? 0 : tokens <= 16 ? 1 : tokens <= 128 ? 2 : tokens <= 1024 ? 3 : 4;
}

typedef struct fk_acc {
    double n, bias, abs, worst; /* worst: the signed error of largest magnitude, % */
} fk_acc;

static void fk_add(fk_acc *a, double pct)
{
    a->n++;
    a->bias += pct;
    a->abs += fabs(pct);
    if (fabs(pct) > fabs(a->worst)) a->worst = pct;
}

/* The TP degrees seen (0: single-GPU benchmark rows) */
#define FK_MAX_TP 8
typedef struct fk_break {
    long tps[FK_MAX_TP];
    int n_tp;
    fk_acc by_tp[KC_COUNT][FK_MAX_TP], by_bin[KC_COUNT][FK_BINS], all[KC_COUNT];
    double worst_pct[KC_COUNT];
    int worst_line[KC_COUNT]; /* the profile's line of the worst row */
} fk_break;

static int fk_tp_index(fk_break *b, long tp)
{
    for (int i = 0; i < b->n_tp; i++)
        if (b->tps[i] == tp) return i;
    if (b->n_tp == FK_MAX_TP) return FK_MAX_TP - 1;
    b->tps[b->n_tp] = tp;
    return b->n_tp++;
}

static double fk_law_us(const kcal_law *l, const kp_sample *s)
{
    return 1e6 * kcal_law_time(l, s->bytes, s->flops, s->batch);
}

/* Each row's error by its class's law, or (cal given) by the calibration, grids included. */
static void fk_breakdown(const kp_set *set, const kcal_law *laws, const int *have,
                         const kcal *cal, fk_break *b)
{
    memset(b, 0, sizeof *b);
    for (size_t i = 0; i < set->n; i++) {
        const kp_sample *s = &set->s[i];
        if (!have[s->cls]) continue;
        double us = cal ? 1e6 * kcal_time(cal, s->cls, s->bytes, s->flops, s->batch,
                                          s->gx[0] > 0 ? s->gx : NULL)
                        : fk_law_us(&laws[s->cls], s);
        double pct = 100.0 * (us - s->us) / s->us;
        if (fabs(pct) > fabs(b->worst_pct[s->cls]))
            b->worst_pct[s->cls] = pct, b->worst_line[s->cls] = s->line;
        fk_add(&b->by_tp[s->cls][fk_tp_index(b, s->tp)], pct);
        fk_add(&b->by_bin[s->cls][fk_bin(s->tokens)], pct);
        fk_add(&b->all[s->cls], pct);
    }
}

/* ---------------------------------------------------------------------- fitting ------- */

typedef struct fk_result {
    kf_class_fit fit[KC_COUNT];
    int have[KC_COUNT];
    kcal_law laws[KC_COUNT];
    int from[KC_COUNT];
    fk_break br;
    char grid_path[KC_COUNT][512]; /* -o's grid CSV of a class whose grid won */
    int borrowed[KC_COUNT]; /* the --borrowed file (fk_args.files) a class's rows came from,
                               or -1 */
} fk_result;

static const char *fk_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A class's grid, every measured cell (the rows' geometric mean where a shape repeats), as
 * the CSV kcal reads: the profiles' provenance as # lines, the axes and us. */
static int fk_write_grid(FILE *f, const fk_args *a, const kp_set *set, int cls, tp_err *err)
{
    const kp_sample **rows = malloc((set->n ? set->n : 1) * sizeof *rows);
    kg_grid *g = malloc(sizeof *g);
    float *cells = NULL;
    size_t n = 0;
    int rc = -1;
    for (size_t i = 0; rows && i < set->n; i++)
        if (set->s[i].cls == cls) rows[n++] = &set->s[i];
    if (!rows || !g || kf_grid(rows, n, cls, g, &cells)) {
        tp_err_set(err, "fit-kernels: cannot build the %s grid", kcal_class_names[cls]);
        goto out;
    }
    const char *const *names;
    int dims = kg_class_dims(cls, &names);
    /* no '#' lines: the provenance is the calibration's source:, and a grid reads with any
     * CSV reader's defaults (pandas, Python's csv) */
    for (int d = 0; d < dims; d++) fprintf(f, "%s,", names[d]);
    fprintf(f, "us\n");
    for (size_t c = 0; c < g->cells; c++) {
        if (isnan(cells[c])) continue;
        for (int d = 0; d < dims; d++)
            fprintf(f, "%.9g,", g->axis[d][c / g->stride[d] % (size_t)g->n[d]]);
        csv_float(f, (double)cells[c], 7); /* the axes are sizes; the time a float */
        fputc('\n', f);
    }
    rc = ferror(f) ? tp_err_set(err, "fit-kernels: cannot write the grid") : 0;
out:
    free(rows);
    free(g);
    free(cells);
    return rc;
}

/* -o FILE.yaml's grids: FILE.CLASS.csv beside it, each written whole or not at all. */
static int fk_write_grids(const fk_args *a, const kp_set *set, fk_result *r, tp_err *err)
{
    size_t len = strlen(a->out);
    if (len > 5 && !strcmp(a->out + len - 5, ".yaml")) len -= 5;
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k] || r->fit[k].chosen != KL_GRID) continue;
        if (cli_is_stdout(a->out))
            return tp_err_set(err, "fit-kernels: the %s class's law is its measured grid, which "
                              "is written beside the calibration, expected -o FILE.yaml, not -",
                              kcal_class_names[k]);
        snprintf(r->grid_path[k], sizeof r->grid_path[k], "%.*s.%s.csv", (int)len, a->out,
                 kcal_class_names[k]);
        ofile of = {0};
        int ok = ofile_open(&of, r->grid_path[k], err) == 0 &&
                 fk_write_grid(of.f, a, set, k, err) == 0 && ofile_commit(&of, err) == 0;
        ofile_abort(&of);
        if (!ok) return -1;
    }
    return 0;
}

/* kf_fit_class holds out at most KF_MAX_FOLDS groups: rows of a further group would be in
 * every fit and in no held-out test, a silently partial comparison, so it is refused. */
static int fk_check_folds(const kp_set *set, tp_err *err)
{
    for (int k = 0; k < KC_COUNT; k++) {
        int folds[KF_MAX_FOLDS], nf = 0;
        for (size_t i = 0; i < set->n; i++) {
            const kp_sample *s = &set->s[i];
            int seen = 0;
            for (int f = 0; f < nf && !seen; f++) seen = folds[f] == s->fold;
            if (seen || s->cls != k) continue;
            if (nf == KF_MAX_FOLDS)
                return tp_err_set(err, "fit-kernels: the '%s' class's rows come from more than %d "
                                  "held-out groups (TP degrees, attention sources, trace ranks), "
                                  "expected at most %d", kcal_class_names[k], KF_MAX_FOLDS,
                                  KF_MAX_FOLDS);
            folds[nf++] = s->fold;
        }
    }
    return 0;
}

/* Every class's fit; pl shows the classes done (a class of 10^6 rows takes minutes). A class
 * with rows but too few for any law is refused: a fit through each of its rows would report an
 * error of 0, which the calibration's intervals would then trust (kcal.h). */
static int fk_fit_all(const kp_set *set, fk_result *r, pline *pl, tp_err *err)
{
    int borrowed[KC_COUNT]; /* fk_read_file's, kept */
    memcpy(borrowed, r->borrowed, sizeof borrowed);
    memset(r, 0, sizeof *r);
    memcpy(r->borrowed, borrowed, sizeof borrowed);
    for (int k = 0; k < KC_COUNT; k++) {
        pline_show(pl, k, KC_COUNT, "classes fitted");
        r->from[k] = -1;
        if (kf_fit_class(set, k, &r->fit[k]) == 0) {
            r->have[k] = 1;
            r->laws[k] = r->fit[k].law;
            continue;
        }
        size_t rows = 0;
        for (size_t i = 0; i < set->n; i++) rows += set->s[i].cls == k;
        if (rows)
            return tp_err_set(err, "fit-kernels: the '%s' class has %zu row%s, too few for any "
                              "law: a fit through every row leaves its error unknown, expected "
                              "at least %d (one more than the constant law's parameter)",
                              kcal_class_names[k], rows, rows > 1 ? "s" : "",
                              kcal_law_params(KL_CONST) + 1);
    }
    fk_breakdown(set, r->laws, r->have, NULL, &r->br);
    /* not measured by any profile: the sampler's kernels and the copies are short passes
     * over a few bytes, priced like the measured elementwise add */
    static const int borrowers[] = {KC_SAMPLER, KC_COPY};
    for (size_t i = 0; i < 2; i++) {
        int k = borrowers[i];
        if (!r->have[k] && r->have[KC_ADD]) r->from[k] = KC_ADD, r->laws[k] = r->laws[KC_ADD];
    }
    return 0;
}

/* Law l's error as the reports compare it: held out where the class's law was chosen so, else
 * in-sample, where the grid is no candidate (it passes through every row: 0 by construction);
 * < 0: none. */
static double fk_law_pct(const kf_class_fit *c, int l)
{
    if (c->chosen_by_heldout) return c->heldout_pct[l];
    return l == KL_GRID ? -1 : c->insample_pct[l];
}

/* The law's fields; bare: its name alone (after "fallback: "). */
static void fk_law_fields(FILE *f, const kcal_law *l, int bare)
{
    fprintf(f, "%s%s, t0_us: %.4f", bare ? "" : "law: ", kcal_law_names[l->kind], l->t0_s * 1e6);
    if (l->kind != KL_CONST)
        fprintf(f, ", gbps: %.2f", l->s_per_byte > 0 ? 1e-9 / l->s_per_byte : 0.0);
    int norm = l->kind == KL_SMOOTH || l->kind == KL_TILED;
    if (l->kind == KL_ROOFLINE || l->kind == KL_SUM || norm)
        fprintf(f, ", tflops: %.2f", l->s_per_flop > 0 ? 1e-12 / l->s_per_flop : 0.0);
    if (norm || l->kind == KL_FLOOR) fprintf(f, ", q: %.4f", l->q);
    if (l->kind == KL_TILED) fprintf(f, ", tile_m: %.0f", l->tile_m);
    if (l->kind == KL_ROW)
        fprintf(f, ", row_gflops: %.6f", l->s_per_row_flop > 0 ? 1e-9 / l->s_per_row_flop : 0.0);
    if (l->kind == KL_SEQ) fprintf(f, ", seq_us: %.5f", l->s_per_seq * 1e6);
}

/* YAML keeps these names plain: anything else becomes a space. */
static void fk_plain(FILE *f, const char *s)
{
    for (; *s; s++) fputc(isalnum((unsigned char)*s) || strchr("./_-+()", *s) ? *s : ' ', f);
}

static int fk_write(FILE *f, const fk_args *a, const kp_set *set, const fk_result *r)
{
    fprintf(f, "# Kernel cost calibration fitted by `tpsim fit-kernels` from per-operator GPU "
               "profiles.\n# t = t0 + ... per op class (sim/kcal.h); the laws' held-out errors are "
               "under laws_compared.\nkind: kernel-calibration\nhardware: %s\n", a->hardware);
    fprintf(f, "source:\n  how: >-\n    Fitted by tpsim fit-kernels on %zu samples: per op class, "
               "least squares on relative error of each candidate law, every coefficient >= 0 "
               "(smooth, tiled, floor: Levenberg-Marquardt, q >= 1); "
               "the law kept is the one of lowest held-out MAPE (each TP degree, or each "
               "attention source, predicted from a fit on the others), refitted on all rows. "
               "Bytes and FLOPs per op as tpsim's program counts them; tiled pads the batch to "
               "Hopper's 64-row wgmma tile (docs/sources.md#wgmma-tile). The sampler and copies "
               "are not in the profiles: they take the add class's law (from: add).%s\n  where: ",
            set->n, set->trace_rows ? " Trace listing rows: each kernel's traced time, bytes "
            "the launching op's input bytes (0 unrecorded), no FLOPs or batch." : "");
    for (int i = 0; i < a->n_files; i++) {
        if (i) fprintf(f, ", ");
        fk_plain(f, a->files[i]);
    }
    for (int i = 0; i < set->n_provenance; i++) {
        fprintf(f, "\n  provenance%d: >-\n    ", i + 1);
        fk_plain(f, set->provenance[i]);
    }
    fprintf(f, "\nlaws_compared:   # held-out MAPE %% by law (in-sample where one fold)\n");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k]) continue;
        fprintf(f, "  %s: {", kcal_class_names[k]);
        int first = 1;
        for (int l = 0; l < KL_COUNT; l++) {
            double v = fk_law_pct(&r->fit[k], l);
            if (v < 0) continue;
            fprintf(f, "%s%s: %.2f", first ? "" : ", ", kcal_law_names[l], v);
            first = 0;
        }
        fprintf(f, "}\n");
    }
    /* a class no profile measured is priced by another's law: its numbers are assumed */
    int n_assumed = 0;
    for (int k = 0; k < KC_COUNT; k++) {
        if (r->have[k] || r->from[k] < 0) continue;
        if (!n_assumed++) fprintf(f, "assumed:\n");
        const char *keys[] = {"t0_us", "gbps"};
        for (int i = 0; i < (r->laws[k].kind == KL_CONST ? 1 : 2); i++)
            fprintf(f, "  - {key: classes.%s.%s, why: \"no profile measures the %s; the %s class's "
                       "law, copied\"}\n", kcal_class_names[k], keys[i], kcal_class_names[k],
                    kcal_class_names[r->from[k]]);
    }
    fprintf(f, "classes:\n");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k] && r->from[k] < 0) continue;
        fprintf(f, "  %s: {", kcal_class_names[k]);
        const kf_class_fit *c = &r->fit[k];
        int grid = r->have[k] && c->chosen == KL_GRID;
        if (grid) {
            fprintf(f, "law: grid, grid: ");
            fk_plain(f, fk_base(r->grid_path[k]));
            char hex[FP_HEX]; /* the grid's bytes: fp_seal's numbers then cover the grid too */
            tp_err ferr = {{0}};
            if (fp_file(r->grid_path[k], hex, &ferr)) return -1;
            fprintf(f, ", grid_fp: \"%s\", fallback: ", hex);
        }
        fk_law_fields(f, &r->laws[k], grid);
        if (r->have[k]) {
            fprintf(f, ", n: %d, r2: %.5f, mape_pct: %.2f", c->n, grid ? 1.0 : c->r2,
                    grid ? c->insample_pct[KL_GRID] : c->mape_pct);
            if (c->chosen_by_heldout)
                fprintf(f, ", heldout_mape_pct: %.2f", c->heldout_pct[c->chosen]);
            if (grid) fprintf(f, ", fallback_heldout_mape_pct: %.2f", c->heldout_pct[c->law.kind]);
        } else {
            fprintf(f, ", from: %s", kcal_class_names[r->from[k]]);
        }
        int b = r->borrowed[r->have[k] ? k : r->from[k]];
        if (b >= 0) {
            fprintf(f, ", source: \"borrowed: %s measured on %s (", r->have[k] ? "rows" : "the law "
                    "it copies,", a->borrowed_from);
            fk_plain(f, a->files[b]);
            fprintf(f, "), not on %s; no profile of %s measures it\"", a->hardware, a->hardware);
        }
        fprintf(f, "}\n");
    }
    return ferror(f) ? -1 : 0;
}

/* The calibration with its fingerprint (fprint.h): the numbers, the profiles' and the
 * grids' bytes, so a loader tells an edited number from the fitted one. */
static int fk_write_sealed(FILE *f, const fk_args *a, const kp_set *set, const fk_result *r,
                           tp_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return tp_err_set(err, "fit-kernels: out of memory");
    int bad = fk_write(m, a, set, r);
    if (fclose(m) || bad) {
        free(text);
        return tp_err_set(err, "%s: cannot write the calibration", a->out);
    }
    int rc = fp_seal(f, a->out, text, len, a->files, a->n_files, err);
    free(text);
    return rc;
}

/* A fold's name: "tpK" (a TP degree), an attention source's name, "rankN" (a trace's rank),
 * "shapesG" (an AIConfigurator table's shape group, kp_shape_fold). */
static void fk_fold_name(const kp_set *set, int fold, char *out, size_t cap)
{
    if (fold >= 3000) snprintf(out, cap, "shapes%d", fold - 3000);
    else if (fold >= 2000) snprintf(out, cap, "rank%d", fold - 2000);
    else if (fold >= 1000) snprintf(out, cap, "%s", set->sources[fold - 1000]);
    else snprintf(out, cap, "tp%-2d", fold);
}

/* Trace kernels not fitted, by name: never dropped without a word. */
static void fk_print_skipped(const kp_skipped *k)
{
    if (!k->collectives && !k->unmapped) return;
    printf("trace kernels not fitted: %zu collectives (the collective model prices them), %zu of "
           "no tpsim op kind:\n", k->collectives, k->unmapped);
    for (int i = 0; i < k->n_names; i++) printf("  %6zu  %.100s\n", k->counts[i], k->names[i]);
    if (k->names_over) printf("  %6zu  (other names)\n", k->names_over);
}

static void fk_print_text(const fk_args *a, const kp_set *set, const fk_result *r)
{
    printf("kernel fit: %zu samples from %d profile%s\n", set->n, a->n_files,
           a->n_files > 1 ? "s" : "");
    printf("%-10s %6s %5s  %-9s", "class", "n", "folds", "law");
    for (int l = 0; l < KL_COUNT; l++) printf(" %9s", kcal_law_names[l]);
    printf(" %8s %7s\n", "R2", "MAPE%");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k]) continue;
        const kf_class_fit *c = &r->fit[k];
        printf("%-10s %6d %5d  %-9s", kcal_class_names[k], c->n, c->n_folds,
               kcal_law_names[c->chosen]);
        for (int l = 0; l < KL_COUNT; l++) {
            double v = fk_law_pct(c, l);
            if (v < 0) printf(" %9s", "-");
            else printf(" %9.2f", v);
        }
        printf(" %8.5f %7.2f\n", c->r2, c->mape_pct);
    }
    printf("(law columns: held-out MAPE %% per candidate law, "
           "in-sample where a class has one fold, or a fold's complement too few rows)\n");
    printf("chosen laws:\n");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k] && r->from[k] < 0) continue;
        printf("  %-10s ", kcal_class_names[k]);
        if (r->have[k] && r->fit[k].chosen == KL_GRID) printf("law: grid, fallback ");
        fk_law_fields(stdout, &r->laws[k], 0);
        if (r->from[k] >= 0) printf("  (not measured: from %s)", kcal_class_names[r->from[k]]);
        printf("\n");
    }
    int multi = 0;
    for (int k = 0; k < KC_COUNT; k++) multi |= r->have[k] && r->fit[k].chosen_by_heldout;
    if (multi)
        printf("held-out MAPE %% of the chosen law by fold (TP degree, attention source, trace "
               "rank), each predicted from a fit on the others:\n");
    for (int k = 0; k < KC_COUNT; k++) {
        const kf_class_fit *c = &r->fit[k];
        if (!r->have[k] || !c->chosen_by_heldout) continue;
        printf("  %-10s", kcal_class_names[k]);
        for (int f = 0; f < c->n_folds; f++) {
            double v = c->fold_pct[c->chosen][f];
            char name[80];
            fk_fold_name(set, c->fold_id[f], name, sizeof name);
            printf("  %s %5.1f", name, v);
        }
        printf("\n");
    }
    printf("residual (fit - measured)/measured, mean %% / MAPE %%, by TP degree:\n");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k]) continue;
        printf("  %-10s", kcal_class_names[k]);
        for (int t = 0; t < r->br.n_tp; t++) {
            const fk_acc *x = &r->br.by_tp[k][t];
            if (!x->n) continue;
            if (r->br.tps[t])
                printf("  tp%-2ld %+6.1f/%5.1f", r->br.tps[t], x->bias / x->n, x->abs / x->n);
            else printf("  gpu  %+6.1f/%5.1f", x->bias / x->n, x->abs / x->n);
        }
        printf("\n");
    }
    printf("by tokens (batch):\n");
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k]) continue;
        printf("  %-10s", kcal_class_names[k]);
        for (int b = 0; b < FK_BINS; b++) {
            const fk_acc *x = &r->br.by_bin[k][b];
            if (x->n) printf("  %s %+6.1f/%5.1f", fk_bin_names[b], x->bias / x->n, x->abs / x->n);
        }
        printf("\n");
    }
    fk_print_skipped(&set->skipped);
    if (a->out) printf("wrote %s\n", a->out);
}

static void fk_json_acc(jw *w, const char *key, const fk_acc *x)
{
    jw_key(w, key);
    jw_obj(w);
    jw_kint(w, "n", (int64_t)x->n);
    jw_knum(w, "bias_pct", x->bias / x->n);
    jw_knum(w, "mape_pct", x->abs / x->n);
    jw_knum(w, "worst_pct", x->worst);
    jw_end_obj(w);
}

static void fk_json_breaks(jw *w, const fk_break *b, int k, int bins)
{
    char key[32];
    jw_key(w, "by_tp");
    jw_obj(w);
    for (int t = 0; t < b->n_tp; t++) {
        if (!b->by_tp[k][t].n) continue;
        snprintf(key, sizeof key, "%ld", b->tps[t]);
        fk_json_acc(w, key, &b->by_tp[k][t]);
    }
    jw_end_obj(w);
    if (!bins) return;
    jw_key(w, "by_tokens");
    jw_obj(w);
    for (int i = 0; i < FK_BINS; i++)
        if (b->by_bin[k][i].n) fk_json_acc(w, fk_bin_names[i], &b->by_bin[k][i]);
    jw_end_obj(w);
}

/* "skipped": trace kernels not fitted (collectives; names of no class, with their counts). */
static void fk_json_skipped(jw *w, const kp_skipped *k)
{
    jw_key(w, "skipped");
    jw_obj(w);
    jw_kint(w, "n_collective_kernels", (int64_t)k->collectives);
    jw_kint(w, "n_unmapped_kernels", (int64_t)k->unmapped);
    jw_key(w, "unmapped_names");
    jw_obj(w);
    for (int i = 0; i < k->n_names; i++) jw_kint(w, k->names[i], (int64_t)k->counts[i]);
    jw_end_obj(w);
    jw_kint(w, "n_other_unmapped_kernels", (int64_t)k->names_over);
    jw_end_obj(w);
}

/* "heldout_by_fold": the chosen law's held-out MAPE per fold, keyed by TP degree or source. */
static void fk_json_folds(jw *w, const kp_set *set, const kf_class_fit *c)
{
    char key[80];
    jw_key(w, "heldout_by_fold");
    jw_obj(w);
    for (int f = 0; f < c->n_folds; f++) {
        if (c->fold_id[f] >= 1000) fk_fold_name(set, c->fold_id[f], key, sizeof key);
        else snprintf(key, sizeof key, "%d", c->fold_id[f]);
        jw_knum(w, key, c->fold_pct[c->chosen][f]);
    }
    jw_end_obj(w);
}

static void fk_print_json(const fk_args *a, const kp_set *set, const fk_result *r)
{
    jw w;
    jw_init(&w, stdout, 0);
    jw_obj(&w);
    jw_key(&w, "files");
    jw_arr(&w);
    for (int i = 0; i < a->n_files; i++) jw_str(&w, a->files[i]);
    jw_end_arr(&w);
    jw_kint(&w, "samples", (int64_t)set->n);
    fk_json_skipped(&w, &set->skipped);
    jw_key(&w, "classes");
    jw_obj(&w);
    for (int k = 0; k < KC_COUNT; k++) {
        if (!r->have[k] && r->from[k] < 0) continue;
        jw_key(&w, kcal_class_names[k]);
        jw_obj(&w);
        const kcal_law *l = &r->laws[k];
        jw_kstr(&w, "law", kcal_law_names[r->have[k] ? r->fit[k].chosen : l->kind]);
        if (r->have[k] && r->fit[k].chosen == KL_GRID)
            jw_kstr(&w, "fallback", kcal_law_names[l->kind]);
        jw_knum(&w, "t0_us", l->t0_s * 1e6);
        jw_knum(&w, "gbps", l->s_per_byte > 0 ? 1e-9 / l->s_per_byte : 0);
        jw_knum(&w, "tflops", l->s_per_flop > 0 ? 1e-12 / l->s_per_flop : 0);
        jw_knum(&w, "row_gflops", l->s_per_row_flop > 0 ? 1e-9 / l->s_per_row_flop : 0);
        jw_knum(&w, "seq_us", l->s_per_seq * 1e6);
        jw_knum(&w, "q", l->q);
        jw_knum(&w, "tile_m", l->tile_m);
        if (r->from[k] >= 0) {
            jw_kstr(&w, "from", kcal_class_names[r->from[k]]);
        } else {
            const kf_class_fit *c = &r->fit[k];
            jw_kint(&w, "n", c->n);
            jw_kint(&w, "n_folds", c->n_folds); /* "folds" is validate's list of fits */
            jw_knum(&w, "r2", c->r2);
            jw_knum(&w, "mape_pct", c->mape_pct);
            jw_kbool(&w, "chosen_by_heldout", c->chosen_by_heldout);
            /* per law: "heldout_mape_pct" is one number elsewhere (docs/json.md) */
            jw_key(&w, c->chosen_by_heldout ? "law_heldout_mape_pct" : "law_insample_mape_pct");
            jw_obj(&w);
            for (int m = 0; m < KL_COUNT; m++) {
                double v = fk_law_pct(c, m);
                if (v >= 0) jw_knum(&w, kcal_law_names[m], v);
            }
            jw_end_obj(&w);
            if (c->chosen_by_heldout) fk_json_folds(&w, set, c);
            fk_json_breaks(&w, &r->br, k, 1);
        }
        jw_end_obj(&w);
    }
    jw_end_obj(&w);
    if (a->out) jw_kstr(&w, "output", a->out);
    jw_end_obj(&w);
    jw_done(&w);
}

/* ------------------------------------------------------------------------ --test ------ */

static int fk_test(const fk_args *a, tp_err *err)
{
    kcal *cal = calloc(1, sizeof *cal);
    kp_set set = {0};
    if (!cal) return tp_err_set(err, "fit-kernels: out of memory");
    if (kcal_load(a->calib, cal, err) || kcal_need_all(cal, err) ||
        kp_read(a->test, &set, err)) {
        kp_free(&set);
        kcal_free(cal);
        free(cal);
        return -1;
    }
    kcal_law laws[KC_COUNT];
    int have[KC_COUNT] = {0};
    for (int k = 0; k < KC_COUNT; k++)
        if (cal->cls[k].valid) laws[k] = cal->cls[k].law, have[k] = 1;
    for (size_t i = 0; i < set.n; i++)
        if (!have[set.s[i].cls]) {
            tp_err_set(err, "%s: no '%s' class to price %s:%d with", a->calib,
                       kcal_class_names[set.s[i].cls], a->test, set.s[i].line);
            kp_free(&set);
            kcal_free(cal);
            free(cal);
            return -1;
        }
    const char *lawname[KC_COUNT];
    for (int k = 0; k < KC_COUNT; k++)
        lawname[k] = have[k] ? kcal_law_names[cal->cls[k].grid >= 0 ? KL_GRID : laws[k].kind] : "";
    fk_break b;
    fk_breakdown(&set, laws, have, cal, &b);
    if (a->json) {
        jw w;
        jw_init(&w, stdout, 0);
        jw_obj(&w);
        jw_kstr(&w, "profile", a->test);
        jw_kstr(&w, "kernel_calibration", a->calib);
        jw_kint(&w, "samples", (int64_t)set.n);
        jw_key(&w, "classes");
        jw_obj(&w);
        for (int k = 0; k < KC_COUNT; k++) {
            if (!b.all[k].n) continue;
            jw_key(&w, kcal_class_names[k]);
            jw_obj(&w);
            jw_kstr(&w, "law", lawname[k]);
            jw_kint(&w, "worst_line", b.worst_line[k]);
            jw_kint(&w, "n", (int64_t)b.all[k].n);
            jw_knum(&w, "mape_pct", b.all[k].abs / b.all[k].n);
            jw_knum(&w, "worst_pct", b.all[k].worst);
            fk_json_breaks(&w, &b, k, 1);
            jw_end_obj(&w);
        }
        jw_end_obj(&w);
        jw_end_obj(&w);
        jw_done(&w);
    } else {
        printf("kernel test: %s priced by %s (%s), %zu samples\n", a->test, a->calib, cal->hardware,
               set.n);
        printf("(fit - measured)/measured per class and TP degree: MAPE %% (worst %%)\n");
        printf("%-10s %-9s %16s", "class", "law", "all");
        for (int t = 0; t < b.n_tp; t++) {
            char h[16];
            snprintf(h, sizeof h, b.tps[t] ? "tp%ld" : "gpu", b.tps[t]);
            printf(" %16s", h);
        }
        printf("\n");
        for (int k = 0; k < KC_COUNT; k++) {
            if (!b.all[k].n) continue;
            printf("%-10s %-9s %7.1f (%+6.1f)", kcal_class_names[k], lawname[k],
                   b.all[k].abs / b.all[k].n, b.all[k].worst);
            for (int t = 0; t < b.n_tp; t++) {
                const fk_acc *x = &b.by_tp[k][t];
                if (x->n) printf(" %7.1f (%+6.1f)", x->abs / x->n, x->worst);
                else printf(" %16s", "-");
            }
            printf("  worst: line %d\n", b.worst_line[k]);
        }
    }
    kp_free(&set);
    kcal_free(cal);
    free(cal);
    return 0;
}

/* A profile operand, PATH or PATH@CLASS,CLASS,...: only those classes' rows are kept from it
 * (a table that measures some classes better than another's). */
static int fk_read(const char *arg, kp_set *set, tp_err *err)
{
    const char *at = strrchr(arg, '@');
    char path[1024];
    int keep[KC_COUNT] = {0};
    if (!at) return kp_read(arg, set, err);
    snprintf(path, sizeof path, "%.*s", (int)(at - arg), arg);
    for (const char *p = at + 1; *p;) {
        size_t len = strcspn(p, ",");
        int k = -1;
        for (int c = 0; c < KC_COUNT; c++)
            if (strlen(kcal_class_names[c]) == len && !strncmp(p, kcal_class_names[c], len)) k = c;
        if (k < 0)
            return tp_err_set(err, "fit-kernels: '%s': '%.*s' is no class, expected PATH@CLASS,... "
                              "with classes of gemm, attention, norm, rope, activation, add, "
                              "embedding, gemm_fp8, prefill_attention", arg, (int)len, p);
        keep[k] = 1;
        p += len + (p[len] == ',');
    }
    size_t first = set->n, n = first;
    if (kp_read(path, set, err)) return -1;
    for (size_t i = first; i < set->n; i++)
        if (keep[set->s[i].cls]) set->s[n++] = set->s[i];
    set->n = n;
    return 0;
}

/* Profile i into set, noting in r which classes a --borrowed one measured: a class takes rows
 * of one GPU only (the hardware's own, or one borrowed file), never a mix. */
static int fk_read_file(const fk_args *a, int i, kp_set *set, fk_result *r, tp_err *err)
{
    size_t n0 = set->n;
    int seen[KC_COUNT] = {0};
    if (i == 0)
        for (int k = 0; k < KC_COUNT; k++) r->borrowed[k] = -1;
    for (size_t j = 0; j < n0; j++) seen[set->s[j].cls] = 1;
    if (fk_read(a->files[i], set, err)) return -1;
    for (size_t j = n0; j < set->n; j++) {
        int k = set->s[j].cls;
        if (i >= a->n_own && seen[k] && r->borrowed[k] != i)
            return tp_err_set(err, "fit-kernels: --borrowed %s measures '%s', which another "
                              "profile measures too, expected each class from one GPU's profile",
                              a->files[i], kcal_class_names[k]);
        if (i >= a->n_own) r->borrowed[k] = i;
        else if (r->borrowed[k] >= 0)
            return tp_err_set(err, "fit-kernels: %s measures '%s', borrowed from %s, expected "
                              "each class from one GPU's profile", a->files[i],
                              kcal_class_names[k], a->files[r->borrowed[k]]);
    }
    return 0;
}

int tpsim_cmd_fit_kernels(int argc, char **argv)
{
    tp_err err = {{0}};
    fk_args a;
    int r = fk_parse(argc, argv, &a, &err);
    if (r == 1) return 0; /* the help was printed */
    if (r < 0) return cmd_fail(&err);
    if (a.test) return fk_test(&a, &err) ? cmd_fail(&err) : 0;
    kp_set set = {0};
    fk_result *res = calloc(1, sizeof *res);
    ofile of = {0};
    int ok = res != NULL;
    if (!ok) tp_err_set(&err, "fit-kernels: out of memory");
    /* a terminal sees the files read, then the classes fitted (--quiet: never) */
    pline pl;
    pline_start(&pl, a.quiet ? NULL : "fit-kernels");
    for (int i = 0; ok && i < a.n_files; i++) {
        pline_show(&pl, i, a.n_files, "profiles read");
        ok = fk_read_file(&a, i, &set, res, &err) == 0;
    }
    if (ok) ok = fk_check_folds(&set, &err) == 0;
    if (ok) kp_weigh(&set), ok = fk_fit_all(&set, res, &pl, &err) == 0;
    pline_end(&pl);
    if (ok && a.out) /* a calibration must price every op tpsim emits */
        for (int k = 0; k < KC_COUNT && ok; k++)
            if (!res->have[k] && res->from[k] < 0 && !KCAL_OPTIONAL(k))
                ok = tp_err_set(&err, "fit-kernels: no profile row measures the '%s' class, which "
                                "-o needs (every class tpsim's ops map to); add a profile that "
                                "measures it", kcal_class_names[k]) == 0;
    for (int k = 0; k < KC_COUNT && ok && a.out; k++) /* kcal_load's bound: the file must load */
        if (res->have[k] && (res->fit[k].mape_pct >= 99.995 ||
                             (res->fit[k].chosen_by_heldout &&
                              res->fit[k].heldout_pct[res->fit[k].chosen] >= 99.995)))
            ok = tp_err_set(&err, "fit-kernels: the '%s' class's law misses its rows by 100%% or "
                            "more, expected under 100%% (a calibration's error bounds its "
                            "intervals)", kcal_class_names[k]) == 0;
    for (int k = 0; k < KC_COUNT && ok && a.out; k++) { /* phys.h's ranges: the file must load */
        const kcal_law *l = &res->laws[k];
        double gbps = l->s_per_byte > 0 ? 1e-9 / l->s_per_byte : 0;
        double tf = l->s_per_flop > 0 ? 1e-12 / l->s_per_flop : 0;
        double rg = l->s_per_row_flop > 0 ? 1e-12 / l->s_per_row_flop : 0; /* TFLOP/s */
        if (!res->have[k]) continue;
        if ((gbps && (gbps < PHYS_GBPS_MIN || gbps > PHYS_GBPS_MAX)) ||
            (tf && (tf < PHYS_TFLOPS_MIN || tf > PHYS_TFLOPS_MAX)) ||
            (rg && (rg < PHYS_TFLOPS_MIN || rg > PHYS_TFLOPS_MAX)) ||
            l->t0_s * 1e6 > PHYS_TIME_US_MAX || l->s_per_seq * 1e6 > PHYS_TIME_US_MAX)
            ok = tp_err_set(&err, "fit-kernels: the '%s' class's law has a rate or time outside "
                            "the physical range (%g GB/s, %g TFLOP/s), expected %g..%g GB/s and "
                            "%g..%g TFLOP/s (docs/sources.md#physical-bounds)",
                            kcal_class_names[k], gbps, tf, PHYS_GBPS_MIN, PHYS_GBPS_MAX,
                            PHYS_TFLOPS_MIN, PHYS_TFLOPS_MAX) == 0;
    }
    if (ok && a.out) ok = fk_write_grids(&a, &set, res, &err) == 0;
    int to_stdout = a.out && cli_is_stdout(a.out);
    if (ok && a.out && !to_stdout) {
        ok = ofile_open(&of, a.out, &err) == 0;
        if (ok) ok = fk_write_sealed(of.f, &a, &set, res, &err) == 0;
    }
    if (ok && to_stdout) ok = fk_write_sealed(stdout, &a, &set, res, &err) == 0;
    else if (ok && a.json) fk_print_json(&a, &set, res);
    else if (ok) fk_print_text(&a, &set, res);
    if (ok && fflush(stdout)) ok = tp_err_set(&err, "fit-kernels: cannot write to stdout") == 0;
    if (ok && a.out && !to_stdout) ok = ofile_commit(&of, &err) == 0;
    ofile_abort(&of);
    kp_free(&set);
    free(res);
    return ok ? 0 : cmd_fail(&err);
}
