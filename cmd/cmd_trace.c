/* cmd_trace.c: `tpsim trace import` and `tpsim trace compare`: read profiler traces
 * (Kineto JSON, Nsight SQLite), report their steps, write a calibration, and compare a
 * real trace with tpsim's own --trace. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "hw.h"
#include "jw.h"
#include "ofile.h"
#include "pline.h"
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
    "file) gives -o the nominal HBM bandwidth for per-class efficiencies. --kernels writes every\n"
    "GPU activity's duration (rank,kind,start_ns,dur_us,bytes,name), which fit-kernels reads.\n";

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
    const char *out, *marker, *hardware, *kernels;
    int json, quiet;
} trace_args;

enum { TF_HELP, TF_OUTPUT, TF_MARKER, TF_FORMAT, TF_HARDWARE, TF_KERNELS, TF_QUIET };

/* trace import's and compare's flags (compare takes --step-marker and --format) */
static const cli_flag trace_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"output", 'o', 1, "CALIB.yaml", "import: write a trace calibration (tpsim run --measured)"},
    {"step-marker", 0, 1, "REGEX", "steps from annotations matching this extended regex"},
    {"format", 0, 1, "text|json", "the report's format (default text)"},
    {"hardware", 0, 1, "HW.yaml", "import: a models/hw/ file, for per-class efficiencies"},
    {"kernels", 0, 1, "KERNELS.csv", "import: each GPU activity's duration, for fit-kernels"},
    {"quiet", 0, 0, NULL, "no progress line on a terminal"},
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
    regex_t re;
    if (a.marker && trace_marker(a.marker, &re, &err)) return cmd_fail(&err);
    tr_trace t = {0};
    tr_report rep = {0};
    ofile of = {0}, ok = {0}; /* -o's calibration, --kernels' listing */
    int status = 2;
    tr_options o = {a.marker ? &re : NULL};
    hw_spec hw = {0};
    if (a.hardware && (!a.out || hw_load(a.hardware, &hw, &err))) {
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
    if (a.out && cli_is_stdout(a.out)) /* -o -: the calibration is the output */
        tr_out_calib(stdout, &t, &rep, hw.hbm_bw, a.hardware);
    else if (a.json)
        tr_out_json(stdout, &t, &rep);
    else
        tr_out_text(stdout, &t, &rep);
    /* the files are installed last, once the report reached stdout (ofile_commit) */
    if (a.kernels) {
        tr_out_kernels(ok.f, &t);
        if (ofile_commit(&ok, &err)) goto out;
    }
    if (a.out && !cli_is_stdout(a.out)) {
        tr_out_calib(of.f, &t, &rep, hw.hbm_bw, a.hardware);
        if (ofile_commit(&of, &err)) goto out;
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

/* Per-step means of one side of a comparison, in ns. */
typedef struct trace_side {
    size_t steps;
    double step, host, compute, collective, idle, kernels;
    double cls[TRC_COUNT];
} trace_side;

static trace_side trace_summarise(const tr_report *r)
{
    trace_side s = {0};
    s.steps = r->n_steps;
    if (!r->n_steps) return s;
    for (size_t i = 0; i < r->n_steps; i++) {
        const tr_step *st = &r->steps[i];
        s.step += (double)(st->end - st->start);
        s.host += st->launch_call.mean * (double)st->launch_call.n;
        s.idle += (double)st->gpu_idle;
        s.kernels += (double)st->c.kernels;
        for (int k = 0; k < TRC_COUNT; k++) {
            s.cls[k] += (double)st->c.class_ns[k];
            if (k == TRC_COLLECTIVE)
                s.collective += (double)st->c.class_ns[k];
            else
                s.compute += (double)st->c.class_ns[k];
        }
    }
    double n = (double)r->n_steps;
    s.step /= n, s.host /= n, s.idle /= n, s.kernels /= n, s.compute /= n, s.collective /= n;
    for (int k = 0; k < TRC_COUNT; k++) s.cls[k] /= n;
    return s;
}

static void trace_row(FILE *f, jw *w, const char *what, double real, double sim)
{
    double diff = sim - real, pct = real != 0 ? 100.0 * diff / real : 0.0;
    if (w) {
        jw_key(w, what);
        jw_obj(w);
        jw_knum(w, "real_ms", real / 1e6);
        jw_knum(w, "sim_ms", sim / 1e6);
        jw_knum(w, "diff_ms", diff / 1e6);
        jw_key(w, "diff_pct");
        jw_num(w, real != 0 ? pct : 0.0 / 0.0);
        jw_end_obj(w);
    } else {
        fprintf(f, "| %s | %.3f | %.3f | %+.3f | ", what, real / 1e6, sim / 1e6, diff / 1e6);
        if (real != 0)
            fprintf(f, "%+.1f%% |\n", pct);
        else
            fprintf(f, "- |\n");
    }
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
    trace_side real = trace_summarise(&rep[0]), sim = trace_summarise(&rep[1]);
    jw w;
    jw *wp = NULL;
    if (a.json) {
        jw_init(&w, stdout, 1);
        wp = &w;
        jw_obj(wp);
        jw_kstr(wp, "real", a.files[0]);
        jw_kstr(wp, "sim", a.files[1]);
        jw_kint(wp, "real_steps", (int64_t)real.steps);
        jw_kint(wp, "sim_steps", (int64_t)sim.steps);
        jw_knum(wp, "real_kernels_per_step", real.kernels);
        jw_knum(wp, "sim_kernels_per_step", sim.kernels);
        jw_key(wp, "phases");
        jw_obj(wp);
    } else {
        printf("tpsim trace compare: %s (%zu steps) vs %s (%zu steps), per-step means\n",
               a.files[0], real.steps, a.files[1], sim.steps);
        printf("kernels per step: real %.1f, sim %.1f\n\n", real.kernels, sim.kernels);
        printf("| phase | real ms | sim ms | sim - real ms | diff |\n|---|---|---|---|---|\n");
    }
    trace_row(stdout, wp, "step", real.step, sim.step);
    trace_row(stdout, wp, "host_launch", real.host, sim.host);
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
    }
    status = 0;
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
