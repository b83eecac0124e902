/* cmd_trace.c: `tpsim trace import` and `tpsim trace compare`: read profiler traces
 * (Kineto JSON, Nsight SQLite), report their steps, write a calibration, and compare a
 * real trace with tpsim's own --trace. */
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "fprint.h"
#include "hw.h"
#include "jw.h"
#include "ofile.h"
#include "pline.h"
#include "plot.h"
#include "rfile.h"
#include "trace_data.h"
#include "trace_kineto.h"
#include "trace_nsys.h"
#include "trace_out.h"
#include "trace_stats.h"

static const char trace_usage[] =
    "usage: tpsim trace import FILE... [flags]\n"
    "       tpsim trace compare REAL SIM [flags]\n";
static const char trace_help_text[] =
    "FILE: a PyTorch-profiler (Kineto) trace, .json or .json.gz, or an Nsight Systems SQLite\n"
    "export; several files are the ranks of one job, merged on absolute time. SIM is tpsim\n"
    "run --trace output. Steps come from vLLM's execute_* annotations, --step-marker (an\n"
    "extended regex on annotation names), or idle gaps on the GPU. --hardware (a models/hw/\n"
    "file, or the GPU's id, name or nvidia-smi name: b200, \"NVIDIA H100 80GB HBM3\") gives\n"
    "-o the nominal HBM bandwidth for per-class efficiencies. --kernels writes every\n"
    "GPU activity's duration (rank,kind,start_ns,dur_us,bytes,name), which fit-kernels reads.\n"
    "\n"
    "compare: first what each side ran (steps, ranks, TP degree, mode, GPU, model, kernels\n"
    "and launches a step) and a NOT LIKE FOR LIKE line for each difference; then per-step\n"
    "means, real against sim, each row one rank's step averaged over all of them:\n"
    "  step           a step's span: its marker, or a run of GPU work between idle gaps\n"
    "  launch_calls   the launch calls' own time (cudaLaunchKernel...); '-' for a tpsim\n"
    "                 trace, which prices each launch's call and framework work as one cost\n"
    "  host_dispatch  the host thread from each launch call to the next: the calls and the\n"
    "                 framework work between them (tpsim's per-launch host cost)\n"
    "  gpu_compute    GPU time of every kernel and copy but the collectives\n"
    "  collectives    GPU time of the collective kernels (NCCL, custom all-reduce)\n"
    "  gpu_idle       the step's span less the time some stream was busy\n"
    "and the GPU time per kernel class (gemm, attention, norm, elementwise, collective, copy),\n"
    "classified by kernel name. --plot DIR draws trace_compare: those per-class times, real\n"
    "beside simulated (PNG and SVG, with its .dat and .gp).\n";

static int trace_load_files(tr_trace *t, char **files, int n, tr_idmap *seen,
                            const char *progress, tp_err *err);

/* Reads every file into t; refuses two files claiming the same rank (found by hash: a file
 * of 40,000 ranks is checked in linear time), and a trace with no GPU activity. progress: a
 * label for the megabytes read of each Kineto file on a terminal (pline.h), NULL for none
 * (a 552 MB trace takes some 15 s; SQLite reads its own file). */
static int trace_load(tr_trace *t, char **files, int n, const char *progress, tp_err *err)
{
    tr_idmap seen = {0};
    int rc = trace_load_files(t, files, n, &seen, progress, err);
    tr_idmap_free(&seen);
    return rc;
}

static int trace_load_files(tr_trace *t, char **files, int n, tr_idmap *seen,
                            const char *progress, tp_err *err)
{
    for (int i = 0; i < n; i++) {
        /* zlib and SQLite stream the file themselves: regular files only (a FIFO would block) */
        if (rfile_check_regular(files[i], (size_t)16 << 30, "a trace file", err)) return -1;
        int sq = tr_nsys_is_sqlite(files[i]);
        if (sq < 0)
            return tp_err_set(err, "%s: cannot open, expected a readable trace file", files[i]);
        size_t before = t->n_ranks;
        char label[64];
        pline pl;
        if (n > 1) snprintf(label, sizeof label, "%s (file %d of %d)", progress, i + 1, n);
        pline_start(&pl, progress && n > 1 ? label : progress);
        int rc = sq ? tr_nsys_read(t, files[i], err)
                    : tr_kineto_read_progress(t, files[i], &pl, err);
        pline_end(&pl);
        if (rc) return -1;
        size_t gpu = 0;
        for (size_t a = before; a < t->n_ranks; a++) {
            long b = tr_idmap_get(seen, t->ranks[a].rank);
            if (b >= 0 && (size_t)b < before)
                return tp_err_set(err,
                                  "%s: rank %ld again (also in %s), expected one file per rank",
                                  files[i], t->ranks[a].rank, t->ranks[b].file);
            if (tr_idmap_put(seen, t->ranks[a].rank, a)) return tp_err_set(err, "out of memory");
            gpu += t->ranks[a].gpu.n;
        }
        if (gpu == 0)
            return tp_err_set(err,
                              "%s: no GPU activity (no kernel, memcpy or memset event), expected a "
                              "profiler trace recorded with CUDA/HIP activities",
                              files[i]);
    }
    return 0;
}

typedef struct trace_args {
    char *files[1024];
    int n_files;
    const char *out, *marker, *hardware, *kernels, *plot;
    int json, quiet;
} trace_args;

enum { TF_HELP, TF_OUTPUT, TF_MARKER, TF_FORMAT, TF_HARDWARE, TF_KERNELS, TF_QUIET, TF_PLOT };

/* trace import's and compare's flags (compare takes --step-marker and --format) */
static const cli_flag trace_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"output", 'o', 1, "CALIB.yaml", "import: write a trace calibration (tpsim run --measured)"},
    {"step-marker", 0, 1, "REGEX", "steps from annotations matching this extended regex"},
    {"format", 0, 1, "text|json", "the report's format (default text)"},
    {"hardware", 0, 1, "GPU", "import: the GPU (a models/hw/ file, its id, name or alias),\n"
                              "for per-class efficiencies"},
    {"kernels", 0, 1, "KERNELS.csv", "import: each GPU activity's duration, for fit-kernels"},
    {"quiet", 0, 0, NULL, "no progress line on a terminal"},
    {"plot", 0, 1, "DIR", "compare: draw per-class bars, real beside simulated (PNG, SVG)"},
    CLI_END};

/* argv[0] is the subcommand ("import", "compare"). 1 when --help was asked (usage printed). */
static int trace_parse(int argc, char **argv, trace_args *a, tp_err *err)
{
    char cmd[32];
    snprintf(cmd, sizeof cmd, "trace %s", argv[0]);
    memset(a, 0, sizeof *a);
    cli_args ca;
    const char *v;
    int f;
    if (cli_begin(&ca, cmd, "tpsim trace --help", trace_flags, argc, argv, err)) return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        if (f == CLI_ERROR) return -1;
        if (f == CLI_OPERAND) {
            if (a->n_files == (int)(sizeof a->files / sizeof a->files[0]))
                return tp_err_set(err, "%s: more than 1024 files", cmd);
            a->files[a->n_files++] = (char *)v;
        } else if (f == TF_HELP) {
            cli_help(stdout, trace_usage, trace_flags, trace_help_text);
            return 1;
        } else if (f == TF_OUTPUT) {
            a->out = v;
        } else if (f == TF_MARKER) {
            a->marker = v;
        } else if (f == TF_HARDWARE) {
            a->hardware = v;
        } else if (f == TF_KERNELS) {
            a->kernels = v;
        } else if (f == TF_PLOT) {
            a->plot = v;
        } else if (f == TF_QUIET) {
            a->quiet = 1;
        } else if (f == TF_FORMAT) {
            if (strcmp(v, "text") && strcmp(v, "json"))
                return tp_err_set(err, "--format: '%s', expected text or json", v);
            a->json = !strcmp(v, "json");
        }
    }
    return 0;
}

static int trace_marker(const char *text, regex_t *re, tp_err *err)
{
    int rc = regcomp(re, text, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[200];
        regerror(rc, re, msg, sizeof msg);
        return tp_err_set(err, "--step-marker '%s': %s, expected an extended regular expression",
                          text, msg);
    }
    return 0;
}

/* -o's calibration with its fingerprint (fprint.h): its numbers and the traces' bytes. */
static int tr_calib_sealed(FILE *f, const trace_args *a, const tr_trace *t, const tr_report *r,
                           double hbm_bw, tp_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return tp_err_set(err, "trace import: out of memory");
    tr_out_calib(m, t, r, hbm_bw, a->hardware);
    if (fclose(m)) {
        free(text);
        return tp_err_set(err, "%s: cannot write the calibration", a->out);
    }
    int rc = fp_seal(f, a->out, text, len, (const char *const *)a->files, a->n_files, err);
    free(text);
    return rc;
}

static int trace_import(int argc, char **argv)
{
    tp_err err = {{0}};
    trace_args a;
    int parsed = trace_parse(argc, argv, &a, &err);
    if (parsed) return parsed > 0 ? 0 : cmd_fail(&err);
    if (a.n_files == 0) {
        tp_err_set(&err, "trace import: no FILE given (see tpsim trace --help)");
        return cmd_fail(&err);
    }
    if (a.plot) {
        tp_err_set(&err, "--plot: trace compare's, expected trace import without it");
        return cmd_fail(&err);
    }
    regex_t re;
    if (a.marker && trace_marker(a.marker, &re, &err)) return cmd_fail(&err);
    tr_trace t = {0};
    tr_report rep = {0};
    ofile of = {0}, ok = {0}; /* -o's calibration, --kernels' listing */
    int status = 2;
    tr_options o = {a.marker ? &re : NULL};
    hw_spec hw = {0};
    char hw_path[HW_PATH_MAX];
    if (a.hardware && (!a.out || hw_resolve(a.hardware, hw_path, sizeof hw_path, &hw, &err))) {
        if (!a.out)
            tp_err_set(&err, "--hardware: only with -o (it sets the calibration's efficiencies)");
        goto out;
    }
    if (ofile_refuse_inputs(a.out, (const char *const *)a.files, a.n_files, &err)) goto out;
    if (a.kernels && (cli_is_stdout(a.kernels) || (a.out && !strcmp(a.out, a.kernels)))) {
        tp_err_set(&err, "--kernels '%s', expected a file other than -o's", a.kernels);
        goto out;
    }
    const char *const *in = (const char *const *)a.files;
    if (a.kernels && (ofile_refuse_inputs(a.kernels, in, a.n_files, &err) ||
                      ofile_refuse_inputs(a.kernels, &a.out, a.out != NULL, &err)))
        goto out;
    if (a.out && !cli_is_stdout(a.out) && ofile_open(&of, a.out, &err)) goto out;
    if (a.kernels && ofile_open(&ok, a.kernels, &err)) goto out;
    if (trace_load(&t, a.files, a.n_files, a.quiet ? NULL : "trace import", &err) ||
        tr_analyze(&t, &o, &rep, &err))
        goto out;
    if (a.out && cli_is_stdout(a.out)) { /* -o -: the calibration is the output */
        if (tr_calib_sealed(stdout, &a, &t, &rep, hw.hbm_bw, &err)) goto out;
    } else if (a.json)
        tr_out_json(stdout, &t, &rep);
    else
        tr_out_text(stdout, &t, &rep);
    /* the files are installed last, once the report reached stdout (ofile_commit) */
    if (a.kernels) {
        tr_out_kernels(ok.f, &t);
        if (ofile_commit(&ok, &err)) goto out;
    }
    if (a.out && !cli_is_stdout(a.out)) {
        if (tr_calib_sealed(of.f, &a, &t, &rep, hw.hbm_bw, &err) || ofile_commit(&of, &err))
            goto out;
    }
    status = 0;
out:
    ofile_abort(&of);
    ofile_abort(&ok);
    if (status) cmd_fail(&err);
    if (a.marker) regfree(&re);
    tr_report_free(&rep);
    tr_free(&t);
    return status;
}

/* One side of a comparison: what it ran (GPU, model, mode), and per-step means over its
 * rank-steps, in ns. steps counts decode steps (the most any one rank has), not rank-steps. */
typedef struct trace_side {
    size_t steps, ranks;
    long tp; /* the job's world size when the trace states it, else its ranks */
    const char *device, *model; /* "" when the trace does not say */
    double step, calls, dispatch, compute, collective, idle, kernels, launches, graph_launches;
    double moe_kernels; /* kernels a step whose name says mixture of experts (fused_moe...) */
    double per_launch;  /* host time per launch: dispatch / launches */
    double cls[TRC_COUNT];
} trace_side;

/* 1 when name contains word (ASCII, any case). */
static int trace_has_word(const char *name, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = name; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == word[i]) i++;
        if (i == n) return 1;
    }
    return 0;
}

static trace_side trace_summarise(const tr_trace *t, const tr_report *r)
{
    trace_side s = {0};
    s.ranks = r->ranks;
    s.device = s.model = "";
    for (size_t i = 0; i < t->n_ranks; i++) {
        if (!s.device[0]) s.device = t->ranks[i].device;
        if (!s.model[0]) s.model = t->ranks[i].model;
        if (t->ranks[i].world_size > s.tp) s.tp = t->ranks[i].world_size;
        size_t n = 0;
        for (size_t j = 0; j < r->n_steps; j++) n += r->steps[j].rank == t->ranks[i].rank;
        if (n > s.steps) s.steps = n;
        for (size_t g = 0; g < t->ranks[i].gpu.n; g++) {
            const tr_gpu *k = &t->ranks[i].gpu.v[g];
            if (k->kind == TR_KERNEL && (trace_has_word(tr_name(t, k->name), "moe") ||
                                         trace_has_word(tr_name(t, k->name), "expert")))
                s.moe_kernels++;
        }
    }
    if (s.tp < (long)s.ranks) s.tp = (long)s.ranks;
    if (!r->n_steps) return s;
    for (size_t i = 0; i < r->n_steps; i++) {
        const tr_step *st = &r->steps[i];
        double calls = st->launch_call.mean * (double)st->launch_call.n;
        s.step += (double)(st->end - st->start);
        s.calls += calls;
        /* the host thread from a launch's call to the next one's: the call and the framework
         * work between two calls, which is what tpsim's per-launch host cost stands for */
        s.dispatch += calls + st->launch_gap.mean * (double)st->launch_gap.n;
        s.idle += (double)st->gpu_idle;
        s.kernels += (double)st->c.kernels;
        s.launches += (double)st->c.launches;
        s.graph_launches += (double)st->c.graph_launches;
        for (int k = 0; k < TRC_COUNT; k++) {
            s.cls[k] += (double)st->c.class_ns[k];
            if (k == TRC_COLLECTIVE)
                s.collective += (double)st->c.class_ns[k];
            else
                s.compute += (double)st->c.class_ns[k];
        }
    }
    s.per_launch = s.launches > 0 ? s.dispatch / s.launches : 0;
    double n = (double)r->n_steps;
    s.step /= n, s.calls /= n, s.dispatch /= n, s.idle /= n, s.kernels /= n, s.compute /= n;
    s.collective /= n, s.launches /= n, s.graph_launches /= n, s.moe_kernels /= n;
    for (int k = 0; k < TRC_COUNT; k++) s.cls[k] /= n;
    return s;
}

/* A GPU name's canonical id when a models/hw file answers to it, else the name itself. */
static void trace_gpu_id(const char *name, char *out, size_t cap)
{
    char path[HW_PATH_MAX];
    hw_spec h;
    tp_err e = {{0}};
    if (name[0] && !hw_resolve(name, path, sizeof path, &h, &e))
        snprintf(out, cap, "%s", h.id);
    else
        snprintf(out, cap, "%s", name);
}

#define TRACE_MAX_MISMATCH 8
/* The ways the two sides did not run the same thing: GPU, model, mode, kernels a step, TP
 * ranks; each one line into m[], how many. */
static int trace_mismatches(const trace_side *a, const trace_side *b, char (*m)[256])
{
    int n = 0;
    char ia[64], ib[64];
    trace_gpu_id(a->device, ia, sizeof ia);
    trace_gpu_id(b->device, ib, sizeof ib);
    if (a->device[0] && b->device[0] && !hw_name_eq(ia, ib))
        snprintf(m[n++], 256, "device: real ran on %s, sim on %s", a->device, b->device);
    if (a->model[0] && b->model[0] && !hw_name_eq(a->model, b->model))
        snprintf(m[n++], 256, "model: real is %s, sim %s", a->model, b->model);
    if ((a->moe_kernels > 0) != (b->moe_kernels > 0))
        snprintf(m[n++], 256, "model: %s runs mixture-of-experts kernels (%.0f a step), %s none",
                 a->moe_kernels > 0 ? "real" : "sim",
                 a->moe_kernels > 0 ? a->moe_kernels : b->moe_kernels,
                 a->moe_kernels > 0 ? "sim" : "real");
    int ga = a->graph_launches > 0, gb = b->graph_launches > 0;
    if (ga != gb)
        snprintf(m[n++], 256, "mode: real runs %s, sim %s", ga ? "CUDA graphs" : "eager",
                 gb ? "CUDA graphs" : "eager");
    double hi = a->kernels > b->kernels ? a->kernels : b->kernels;
    if (hi > 0 && fabs(a->kernels - b->kernels) > 0.1 * hi) /* assumed: 10% is not one step */
        snprintf(m[n++], 256, "kernels a step: real %.1f, sim %.1f (more than 10%% apart: "
                 "not the same step)", a->kernels, b->kernels);
    if (a->tp != b->tp)
        snprintf(m[n++], 256, "TP degree: real %ld, sim %ld", a->tp, b->tp);
    return n;
}

/* A row; sim < 0 when that side does not have the quantity (null in JSON, "-" in text). */
static void trace_row(FILE *f, jw *w, const char *what, double real, double sim)
{
    int have = sim >= 0;
    double diff = sim - real, pct = real != 0 ? 100.0 * diff / real : 0.0;
    if (w) {
        jw_key(w, what);
        jw_obj(w);
        jw_knum(w, "real_ms", real / 1e6);
        jw_key(w, "sim_ms");
        jw_num(w, have ? sim / 1e6 : 0.0 / 0.0);
        jw_key(w, "diff_ms");
        jw_num(w, have ? diff / 1e6 : 0.0 / 0.0);
        jw_key(w, "diff_pct");
        jw_num(w, have && real != 0 ? pct : 0.0 / 0.0);
        jw_end_obj(w);
    } else if (!have) {
        fprintf(f, "| %s | %.3f | - | - | - |\n", what, real / 1e6);
    } else {
        fprintf(f, "| %s | %.3f | %.3f | %+.3f | ", what, real / 1e6, sim / 1e6, diff / 1e6);
        if (real != 0)
            fprintf(f, "%+.1f%% |\n", pct);
        else
            fprintf(f, "- |\n");
    }
}

static void trace_side_json(jw *w, const char *side, const trace_side *s)
{
    char key[48];
    snprintf(key, sizeof key, "%s_steps", side);
    jw_kint(w, key, (int64_t)s->steps);
    snprintf(key, sizeof key, "%s_ranks", side);
    jw_kint(w, key, (int64_t)s->ranks);
    snprintf(key, sizeof key, "%s_tp", side);
    jw_kint(w, key, s->tp);
    snprintf(key, sizeof key, "%s_device", side);
    jw_kstr(w, key, s->device[0] ? s->device : NULL);
    snprintf(key, sizeof key, "%s_model", side);
    jw_kstr(w, key, s->model[0] ? s->model : NULL);
    snprintf(key, sizeof key, "%s_mode", side);
    jw_kstr(w, key, s->graph_launches > 0 ? "graphs" : "eager");
    snprintf(key, sizeof key, "%s_kernels_per_step", side);
    jw_knum(w, key, s->kernels);
    snprintf(key, sizeof key, "%s_launches_per_step", side);
    jw_knum(w, key, s->launches);
    snprintf(key, sizeof key, "%s_host_per_launch_us", side);
    jw_knum(w, key, s->per_launch / 1e3);
}

static void trace_side_text(const char *side, const char *file, const trace_side *s)
{
    printf("%-4s %s: %zu step%s on %zu rank%s of TP-%ld, %s%s%s%s%s, %.1f kernels and %.1f "
           "launches a step\n",
           side, file, s->steps, s->steps == 1 ? "" : "s", s->ranks, s->ranks == 1 ? "" : "s",
           s->tp,
           s->graph_launches > 0 ? "CUDA graphs" : "eager", s->device[0] ? ", " : "", s->device,
           s->model[0] ? ", " : "", s->model, s->kernels, s->launches);
}

/* What each side ran and how they differ, then the phase table's opening (JSON: the keys
 * before "phases", and that object opened). */
static void trace_compare_head(jw *wp, char **files, const trace_side *real,
                               const trace_side *sim, char (*mis)[256], int n_mis)
{
    if (wp) {
        jw_init(wp, stdout, 1);
        jw_obj(wp);
        jw_kstr(wp, "real", files[0]);
        jw_kstr(wp, "sim", files[1]);
        trace_side_json(wp, "real", real);
        trace_side_json(wp, "sim", sim);
        jw_key(wp, "mismatches");
        jw_arr(wp);
        for (int i = 0; i < n_mis; i++) jw_str(wp, mis[i]);
        jw_end_arr(wp);
        jw_key(wp, "phases");
        jw_obj(wp);
        return;
    }
    printf("tpsim trace compare: per-step means over each side's steps and ranks\n");
    trace_side_text("real", files[0], real);
    trace_side_text("sim", files[1], sim);
    printf("host per launch: real %.2f us, sim %.2f us (from one launch call to the next on a "
           "host thread)\n", real->per_launch / 1e3, sim->per_launch / 1e3);
    for (int i = 0; i < n_mis; i++) printf("** NOT LIKE FOR LIKE: %s\n", mis[i]);
    printf("\n| phase | real ms | sim ms | sim - real ms | diff |\n|---|---|---|---|---|\n");
}

/* trace_compare.png (plot.h's plot_groups): each kernel class's ms per step, real beside
 * simulated, the numbers of the report's class rows. */
static int trace_plot(char **files, const trace_side *real, const trace_side *sim,
                      const char *dir, tp_err *err)
{
    const char *groups[TRC_COUNT], *sets[2] = {"real", "simulated"};
    double values[TRC_COUNT * 2];
    for (int k = 0; k < TRC_COUNT; k++) {
        groups[k] = tr_class_name((tr_class)k);
        values[2 * k] = real->cls[k] / 1e6;
        values[2 * k + 1] = sim->cls[k] / 1e6;
    }
    char title[600];
    const char *a = strrchr(files[0], '/'), *b = strrchr(files[1], '/');
    snprintf(title, sizeof title, "GPU time per step by kernel class: %.250s vs %.250s",
             a ? a + 1 : files[0], b ? b + 1 : files[1]);
    plot_groups_data d = {.cmd = "trace compare",
                          .name = "trace_compare",
                          .title = title,
                          .about = "ms per step by kernel class, real and simulated",
                          .ylabel = "ms per step",
                          .n_groups = TRC_COUNT,
                          .n_sets = 2,
                          .groups = groups,
                          .sets = sets,
                          .values = values};
    return plot_groups(&d, dir, err);
}

static int trace_compare(int argc, char **argv)
{
    tp_err err = {{0}};
    trace_args a;
    int parsed = trace_parse(argc, argv, &a, &err);
    if (parsed) return parsed > 0 ? 0 : cmd_fail(&err);
    if (a.n_files != 2 || a.out || a.hardware || a.kernels) {
        tp_err_set(
            &err,
            "trace compare: expected REAL SIM (two files) and no -o (see tpsim trace --help)");
        return cmd_fail(&err);
    }
    if (a.plot && plot_check(a.plot, &err)) return cmd_fail(&err);
    regex_t re;
    if (a.marker && trace_marker(a.marker, &re, &err)) return cmd_fail(&err);
    tr_options o = {a.marker ? &re : NULL};
    tr_trace t[2] = {{0}, {0}};
    tr_report rep[2] = {{0}, {0}};
    int status = 2;
    for (int i = 0; i < 2; i++)
        if (trace_load(&t[i], &a.files[i], 1, a.quiet ? NULL : "trace compare", &err) ||
            tr_analyze(&t[i], &o, &rep[i], &err))
            goto out;
    for (int i = 0; i < 2; i++)
        if (rep[i].n_steps == 0) {
            tp_err_set(&err, "%s: no steps found, expected a trace with GPU activity", a.files[i]);
            goto out;
        }
    trace_side real = trace_summarise(&t[0], &rep[0]), sim = trace_summarise(&t[1], &rep[1]);
    char mis[TRACE_MAX_MISMATCH][256];
    int n_mis = trace_mismatches(&real, &sim, mis);
    /* tpsim draws one host cost per launch and writes it as the launch call: it has no
     * separate call time, so that row is the real side's alone */
    int sim_is_tpsim = t[1].n_ranks > 0 && sim.model[0];
    jw w;
    jw *wp = a.json ? &w : NULL;
    trace_compare_head(wp, a.files, &real, &sim, mis, n_mis);
    trace_row(stdout, wp, "step", real.step, sim.step);
    trace_row(stdout, wp, "launch_calls", real.calls, sim_is_tpsim ? -1 : sim.calls);
    trace_row(stdout, wp, "host_dispatch", real.dispatch, sim.dispatch);
    trace_row(stdout, wp, "gpu_compute", real.compute, sim.compute);
    trace_row(stdout, wp, "collectives", real.collective, sim.collective);
    trace_row(stdout, wp, "gpu_idle", real.idle, sim.idle);
    if (wp) {
        jw_end_obj(wp);
        jw_key(wp, "classes");
        jw_obj(wp);
    } else {
        printf("\n| kernel class | real ms | sim ms | sim - real ms | diff "
               "|\n|---|---|---|---|---|\n");
    }
    for (int k = 0; k < TRC_COUNT; k++)
        trace_row(stdout, wp, tr_class_name((tr_class)k), real.cls[k], sim.cls[k]);
    if (wp) {
        jw_end_obj(wp);
        jw_end_obj(wp);
        jw_done(wp);
    } else if (sim_is_tpsim) {
        printf("\nlaunch_calls: tpsim prices a launch's call and the framework work around it "
               "as one host cost, so only host_dispatch compares them (tpsim trace --help)\n");
    }
    status = 0;
    if (a.plot && (fflush(stdout) || trace_plot(a.files, &real, &sim, a.plot, &err))) status = 2;
out:
    if (status) cmd_fail(&err);
    if (a.marker) regfree(&re);
    for (int i = 0; i < 2; i++) {
        tr_report_free(&rep[i]);
        tr_free(&t[i]);
    }
    return status;
}

int tpsim_cmd_trace(int argc, char **argv)
{
    tp_err err = {{0}};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_help(argc < 2 ? stderr : stdout, trace_usage, trace_flags, trace_help_text);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "import")) return trace_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "compare")) return trace_compare(argc - 1, argv + 1);
    tp_err_set(&err, "trace: unknown subcommand '%s', expected import or compare", argv[1]);
    return cmd_fail(&err);
}
