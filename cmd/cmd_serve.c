/* cmd_serve.c: `tpsim serve`: one vLLM replica under a load, request by request (serve.h),
 * each step priced by the step model (servecost.h); reported as `vllm bench serve` does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "csv.h"
#include "jw.h"
#include "locate.h"
#include "ofile.h"
#include "pline.h"
#include "rfile.h"
#include "run.h"
#include "servecost.h"

#define SERVE_MAX_LENGTHS 1000000

static const char serve_usage[] = "usage: tpsim serve SCENARIO (--concurrency N | --rate R) "
                                  "[flags]\n";
static const char serve_help_text[] =
    "Simulates one vLLM replica (TP ranks of one node) serving requests: vLLM V1's scheduler\n"
    "(token budget, max_num_seqs, chunked prefill, a paged KV cache with preemption by\n"
    "recompute), each step priced by the step model for its mixed batch. Prints what `vllm\n"
    "bench serve` prints: TTFT, TPOT, ITL and E2E latency (mean, median, p90, p99) and\n"
    "throughput. Not modelled: speculative decoding, prefix caching, disaggregated prefill,\n"
    "more than one node.\n"
    "SCENARIO is a file or a name (scenarios/NAME.yaml). --lengths FILE: a CSV with columns\n"
    "isl,osl, one request's lengths a row, drawn uniformly (seeded).\n"
    "exit status: 0 done; 2 bad input (or a load that could never finish).\n";

typedef struct serve_opts {
    const char *path, *lengths_path, *trace_path;
    long tp, concurrency, requests, isl, osl, tokens, seqs, block;
    double rate, mem_util, reserve_gib;
    uint64_t seed;
    int have_seed, format; /* 0 text, 1 json, 2 csv */
    int quiet, interval;
} serve_opts;

enum {
    F_HELP, F_TP, F_CONC, F_RATE, F_REQ, F_ISL, F_OSL, F_LENGTHS, F_SEED, F_TOKENS, F_SEQS,
    F_BLOCK, F_MEM, F_RESERVE, F_FORMAT, F_TRACE, F_QUIET, F_INTERVAL
};

static const cli_flag serve_flags[] = {
    {"help", 'h', 0, NULL, "this help"},
    {"tp", 0, 1, "K", "tensor-parallel degree (default: the scenario's tp)"},
    {"concurrency", 0, 1, "N", "a closed loop of N clients, each sending its next request\n"
                               "when the last one finishes"},
    {"rate", 0, 1, "R", "Poisson arrivals, R requests per second"},
    {"requests", 0, 1, "M", "requests to finish (default: 10 per client, or 100 at a rate)"},
    {"isl", 0, 1, "N", "prompt tokens per request (default 1024)"},
    {"osl", 0, 1, "N", "output tokens per request (default 1024)"},
    {"lengths", 0, 1, "FILE", "a CSV of isl,osl pairs to draw each request's lengths from"},
    {"seed", 0, 1, "S", "the random seed (default: the scenario's)"},
    {"max-num-batched-tokens", 0, 1, "N", "the scheduler's token budget per step (default:\n"
                                          "vLLM's, 8192 on a GPU of 70 GiB or more, else 2048)"},
    {"max-num-seqs", 0, 1, "N", "requests running at once (default: vLLM's, 1024 or 256)"},
    {"block-size", 0, 1, "N", "KV cache block in tokens (default 16)"},
    {"gpu-memory-utilization", 0, 1, "F", "fraction of HBM vLLM takes (default 0.90)"},
    {"reserve-gib", 0, 1, "G", "per GPU: activations, CUDA context, NCCL (default 4.84)"},
    {"format", 0, 1, "text|json|csv", "the report's format (default text)"},
    {"trace", 0, 1, "FILE", "write the steps and requests as a Chrome/Perfetto trace"},
    {"quiet", 0, 0, NULL, "no progress line on a terminal"},
    {"interval", 0, 0, NULL, "also run with every kernel class's time at the ends of its\n"
                             "held-out error: [lo, hi] beside the mean TTFT and TPOT"},
    CMD_SCN_FLAGS,
    CLI_END};

static int serve_parse(int argc, char **argv, serve_opts *o, scn_opts *so, tp_err *err)
{
    cli_args ca;
    const char *v;
    int f;
    if (cli_begin(&ca, "serve", "tpsim serve --help", serve_flags, argc, argv, err)) return -1;
    while ((f = cli_next(&ca, &v, err)) != CLI_DONE) {
        long *target = f == F_TP ? &o->tp : f == F_CONC ? &o->concurrency
                     : f == F_REQ ? &o->requests : f == F_ISL ? &o->isl : f == F_OSL ? &o->osl
                     : f == F_TOKENS ? &o->tokens : f == F_SEQS ? &o->seqs
                     : f == F_BLOCK ? &o->block : NULL;
        if (f == CLI_ERROR) return -1;
        if (f == CLI_OPERAND) {
            if (o->path) return tp_err_set(err, "serve: a second scenario '%s', expected one", v);
            o->path = v;
        } else if (f == F_HELP) {
            cli_help(stdout, serve_usage, serve_flags, serve_help_text);
            return 1;
        } else if (target) {
            long hi = f == F_TP ? 1024 : f == F_REQ ? SERVE_MAX_REQUESTS
                    : f == F_ISL || f == F_OSL ? (1L << 24) : f == F_BLOCK ? 1024 : 1000000;
            if (cli_long(ca.shown, v, 1, hi, target, err)) return -1;
        } else if (f == F_RATE) {
            if (cli_double(ca.shown, v, 1e-9, 1e9, &o->rate, err)) return -1;
        } else if (f == F_MEM) {
            if (cli_double(ca.shown, v, 0.01, 1.0, &o->mem_util, err)) return -1;
        } else if (f == F_RESERVE) {
            if (cli_double(ca.shown, v, 0.0, 1024.0, &o->reserve_gib, err)) return -1;
        } else if (f == F_SEED) {
            if (cli_u64(ca.shown, v, &o->seed, err)) return -1;
            o->have_seed = 1;
        } else if (f == F_LENGTHS) {
            o->lengths_path = v;
        } else if (f == F_FORMAT) {
            if (!strcmp(v, "text")) o->format = 0;
            else if (!strcmp(v, "json")) o->format = 1;
            else if (!strcmp(v, "csv")) o->format = 2;
            else return tp_err_set(err, "--format: '%s', expected text, json or csv", v);
        } else if (f == F_TRACE) {
            o->trace_path = v;
        } else if (f == F_QUIET) {
            o->quiet = 1;
        } else if (f == F_INTERVAL) {
            o->interval = 1;
        } else if (cmd_scn_flag(so, serve_flags[f].name, v, err) < 0) {
            return -1;
        }
    }
    if (!o->path) return tp_err_set(err, "serve: missing SCENARIO (see tpsim serve --help)");
    if ((o->concurrency > 0) == (o->rate > 0))
        return tp_err_set(err, "serve: give one load: --concurrency N (a closed loop) or --rate R "
                          "(requests per second)");
    if (o->lengths_path && (o->isl || o->osl))
        return tp_err_set(err, "serve: --lengths and --isl/--osl both give lengths, expected one");
    return 0;
}

/* --lengths: a CSV with a header naming isl and osl (any order, other columns ignored). */
static int serve_read_lengths(const char *path, long (**out)[2], size_t *n, tp_err *err)
{
    size_t len;
    char *text = NULL;
    if (rfile_read(path, (size_t)64 << 20, "a CSV of isl,osl", &text, &len, err)) return -1;
    csv_reader r;
    csv_init(&r, path, text, len);
    char *fld[64];
    int lines[64], cols[64], ic = -1, oc = -1, ncol, rc = -1;
    long (*v)[2] = NULL;
    size_t cap = 0, k = 0;
    if ((ncol = csv_next(&r, fld, lines, cols, 64, err)) < 0) goto out;
    if (ncol == 0) {
        tp_err_set(err, "%s:1:1: empty file, expected a header with isl,osl", path);
        goto out;
    }
    for (int i = 0; i < ncol; i++) {
        int *slot = !strcmp(fld[i], "isl") ? &ic : !strcmp(fld[i], "osl") ? &oc : NULL;
        if (slot && *slot >= 0) {
            tp_err_set(err, "%s:%d:%d: duplicate column '%s', expected it once", path, lines[i],
                       cols[i], fld[i]);
            goto out;
        }
        if (slot) *slot = i;
    }
    if (ic < 0 || oc < 0) {
        tp_err_set(err, "%s:1:1: header lacks %s, expected columns isl and osl", path,
                   ic < 0 ? "isl" : "osl");
        goto out;
    }
    int n_fields;
    while ((n_fields = csv_next(&r, fld, lines, cols, 64, err)) > 0) {
        if (n_fields != ncol) {
            tp_err_set(err, "%s:%d:1: %d fields, expected %d as the header", path, lines[0],
                       n_fields, ncol);
            goto out;
        }
        if (k == SERVE_MAX_LENGTHS) {
            tp_err_set(err, "%s:%d:1: more than %d rows, expected at most that many", path,
                       lines[0], SERVE_MAX_LENGTHS);
            goto out;
        }
        if (k == cap) {
            cap = cap ? 2 * cap : 256;
            long (*nv)[2] = realloc(v, cap * sizeof *v);
            if (!nv) {
                tp_err_set(err, "out of memory");
                goto out;
            }
            v = nv;
        }
        for (int j = 0; j < 2; j++) {
            int c = j ? oc : ic;
            char what[48];
            snprintf(what, sizeof what, "%s:%d:%d: %s", path, lines[c], cols[c], j ? "osl" : "isl");
            if (cli_long(what, fld[c], 1, 1L << 24, &v[k][j], err)) goto out;
        }
        k++;
    }
    if (n_fields < 0) goto out;
    if (k == 0) {
        tp_err_set(err, "%s: no rows, expected at least one isl,osl pair", path);
        goto out;
    }
    *out = v, *n = k, v = NULL;
    rc = 0;
out:
    free(v);
    free(text);
    return rc;
}

/* --trace: Chrome trace events as they happen (steps on one track, requests as async slices,
 * the KV cache and queue as counters). */
typedef struct serve_obs {
    FILE *trace;
    int first;
    long total, done; /* requests, for the progress line */
    pline progress;
} serve_obs;

static void obs_sep(serve_obs *o)
{
    fputs(o->first ? "\n" : ",\n", o->trace);
    o->first = 0;
}

static void obs_step(void *ctx, const serve_step_info *s)
{
    serve_obs *o = ctx;
    if (!o->trace) return;
    obs_sep(o);
    fprintf(o->trace,
            "{\"name\":\"step\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,"
            "\"args\":{\"step\":%ld,\"tokens\":%ld,\"requests\":%ld,\"decodes\":%ld,"
            "\"prefills\":%ld}}",
            s->start * 1e6, (s->end - s->start) * 1e6, s->step, s->shape.tokens, s->shape.seqs,
            s->shape.decode_seqs, s->shape.prefill_seqs);
    obs_sep(o);
    fprintf(
        o->trace,
        "{\"name\":\"scheduler\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"kv_blocks\":%ld,"
        "\"running\":%ld,\"waiting\":%ld}}",
        s->start * 1e6, s->kv_used, s->running, s->waiting);
}

static void obs_request(void *ctx, const serve_req_info *r)
{
    serve_obs *o = ctx;
    o->done++;
    if (o->trace) {
        const char *fmt = "{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"%s\",\"id\":%ld,\"pid\":2,"
                          "\"tid\":2,\"ts\":%.3f%s}";
        char args[160];
        snprintf(args, sizeof args, ",\"args\":{\"isl\":%ld,\"osl\":%ld,\"preemptions\":%ld}",
                 r->isl, r->osl, r->preemptions);
        obs_sep(o);
        fprintf(o->trace, fmt, "request", "b", r->id, r->arrive * 1e6, args);
        obs_sep(o);
        fprintf(o->trace, fmt, "queued+prefill", "b", r->id, r->arrive * 1e6, "");
        obs_sep(o);
        fprintf(o->trace, fmt, "queued+prefill", "e", r->id, r->first * 1e6, "");
        obs_sep(o);
        fprintf(o->trace, fmt, "request", "e", r->id, r->done * 1e6, "");
    }
    pline_show(&o->progress, (double)o->done, (double)o->total, "requests");
}

typedef struct serve_report {
    const scenario *s;
    const serve_opts *o;
    const serve_config *c;
    const serve_result *r;
    const scost *cost;
    double weights;
    int interval;          /* lo/hi below hold the mean TTFT and TPOT's range */
    double lo[2], hi[2];   /* [0] TTFT, [1] TPOT, ms */
} serve_report;

static double q_ms(const qsketch *q, double p)
{
    return q->n ? 1e3 * qsketch_quantile((qsketch *)q, p) : NAN;
}

static double mean_ms(double sum, long n) { return n ? 1e3 * sum / (double)n : NAN; }

typedef struct serve_metric {
    const char *name, *key;
    const qsketch *q;
    double sum;
    long n;
} serve_metric;

static void serve_metrics(const serve_result *r, serve_metric m[4])
{
    m[0] = (serve_metric){"TTFT", "ttft", &r->ttft, r->ttft_sum, r->requests};
    m[1] = (serve_metric){"TPOT", "tpot", &r->tpot, r->tpot_sum, r->n_tpot};
    m[2] = (serve_metric){"ITL", "itl", &r->itl, r->itl_sum, r->n_itl};
    m[3] = (serve_metric){"E2EL", "e2el", &r->e2e, r->e2e_sum, r->requests};
}

static const char *serve_mode(const scenario *s) { return s->graphs ? "graphs" : "eager"; }

static void serve_text(const serve_report *p)
{
    const serve_result *r = p->r;
    const serve_config *c = p->c;
    const scenario *s = p->s;
    long gpus = p->o->tp;
    printf("scenario   %s (%s)\n", s->name, s->path);
    printf("model      %s on %ld x %s, TP-%ld, %s (vLLM V1 scheduler; CUDA graphs %s)\n",
           s->model.name, gpus, s->hw.name, p->o->tp, serve_mode(s),
           s->graphs ? "FULL_AND_PIECEWISE" : "off");
    printf("engine     %s%s%s%s: host phases %s\n", s->engine, s->engine_path[0] ? " (" : "",
           s->engine_path, s->engine_path[0] ? ")" : "",
           s->phases.overlap ? "overlapped" : "serialised");
    printf("server     max_num_batched_tokens %ld, max_num_seqs %ld, KV cache %ld blocks of %ld "
           "tokens (%ld tokens; weights %.1f GB per rank)\n",
           c->max_num_batched_tokens, c->max_num_seqs, c->kv_blocks, c->block_size,
           c->kv_blocks * c->block_size, p->weights / 1e9);
    if (c->concurrency > 0)
        printf("load       closed loop, %ld clients, %ld requests", c->concurrency, c->requests);
    else
        printf("load       Poisson, %.4g requests/s, %ld requests", c->rate, c->requests);
    if (c->n_lengths)
        printf(", lengths drawn from %s (%zu pairs), seed %llu\n", p->o->lengths_path,
               c->n_lengths, (unsigned long long)c->seed);
    else
        printf(", isl %ld, osl %ld, seed %llu\n", c->isl, c->osl, (unsigned long long)c->seed);
    printf("============ Serving Benchmark Result ============\n");
    printf("%-40s %ld\n", "Successful requests:", r->requests);
    if (c->concurrency > 0) printf("%-40s %ld\n", "Maximum request concurrency:", c->concurrency);
    printf("%-40s %.2f\n", "Benchmark duration (s):", r->duration);
    printf("%-40s %ld\n", "Total input tokens:", r->input_tokens);
    printf("%-40s %ld\n", "Total generated tokens:", r->output_tokens);
    printf("%-40s %.2f\n", "Request throughput (req/s):", (double)r->requests / r->duration);
    printf("%-40s %.2f\n", "Output token throughput (tok/s):",
           (double)r->output_tokens / r->duration);
    printf("%-40s %.2f\n", "Total Token throughput (tok/s):",
           (double)(r->output_tokens + r->input_tokens) / r->duration);
    printf("%-40s %.2f\n", "Output tokens/s per GPU:",
           (double)r->output_tokens / r->duration / (double)gpus);
    serve_metric m[4];
    serve_metrics(r, m);
    static const char *const heads[4] = {
        "---------------Time to First Token----------------",
        "-----Time per Output Token (excl. 1st token)------",
        "---------------Inter-token Latency----------------",
        "----------------End-to-end Latency----------------"};
    for (int i = 0; i < 4; i++) {
        char label[64];
        printf("%s\n", heads[i]);
        snprintf(label, sizeof label, "Mean %s (ms):", m[i].name);
        if (p->interval && i < 2)
            printf("%-40s %.2f  [%.2f, %.2f]\n", label, mean_ms(m[i].sum, m[i].n), p->lo[i],
                   p->hi[i]);
        else
            printf("%-40s %.2f\n", label, mean_ms(m[i].sum, m[i].n));
        snprintf(label, sizeof label, "Median %s (ms):", m[i].name);
        printf("%-40s %.2f\n", label, q_ms(m[i].q, 0.5));
        snprintf(label, sizeof label, "P90 %s (ms):", m[i].name);
        printf("%-40s %.2f\n", label, q_ms(m[i].q, 0.9));
        snprintf(label, sizeof label, "P99 %s (ms):", m[i].name);
        printf("%-40s %.2f\n", label, q_ms(m[i].q, 0.99));
    }
    printf("==================================================\n");
    printf("steps      %ld (%.1f tokens a step on average, at most %ld requests in one); "
           "preemptions %ld\n",
           r->steps, r->tokens_per_step_mean, r->batch_peak, r->preemptions);
    printf("KV cache   %.1f%% in use on average over the steps, %.1f%% at the peak\n",
           100.0 * r->kv_mean, 100.0 * r->kv_peak);
    printf("pricing    %ld step shapes simulated (%ld full graph, %ld piecewise, %ld eager), "
           "%ld steps from the cache\n",
           p->cost->misses, p->cost->full_steps, p->cost->piecewise_steps, p->cost->eager_steps,
           p->cost->hits);
}

static void serve_json(const serve_report *p)
{
    const serve_result *r = p->r;
    const serve_config *c = p->c;
    const scenario *s = p->s;
    jw w;
    jw_init(&w, stdout, 1);
    jw_obj(&w);
    jw_kstr(&w, "scenario", s->name);
    jw_kstr(&w, "model", s->model.name);
    jw_kstr(&w, "hardware", s->hw.name);
    jw_kstr(&w, "mode", serve_mode(s));
    jw_kstr(&w, "serving_engine", s->engine);
    jw_kstr(&w, "serving_engine_file", s->engine_path[0] ? s->engine_path : NULL);
    jw_kint(&w, "tp", p->o->tp);
    jw_kuint(&w, "seed", c->seed);
    jw_kint(&w, "concurrency", c->concurrency);
    jw_key(&w, "rate");
    if (c->rate > 0) jw_num(&w, c->rate);
    else jw_str(&w, NULL);
    jw_kint(&w, "isl", c->n_lengths ? 0 : c->isl);
    jw_kint(&w, "osl", c->n_lengths ? 0 : c->osl);
    jw_kstr(&w, "lengths", p->o->lengths_path);
    jw_kint(&w, "max_num_batched_tokens", c->max_num_batched_tokens);
    jw_kint(&w, "max_num_seqs", c->max_num_seqs);
    jw_kint(&w, "block_size", c->block_size);
    jw_kint(&w, "kv_blocks", c->kv_blocks);
    jw_knum(&w, "weights_gb_per_rank", p->weights / 1e9);
    jw_kint(&w, "requests", r->requests);
    jw_knum(&w, "duration_s", r->duration);
    jw_kint(&w, "input_tokens", r->input_tokens);
    jw_kint(&w, "output_tokens", r->output_tokens);
    jw_knum(&w, "request_throughput", (double)r->requests / r->duration);
    jw_knum(&w, "output_throughput", (double)r->output_tokens / r->duration);
    jw_knum(&w, "total_token_throughput",
            (double)(r->output_tokens + r->input_tokens) / r->duration);
    jw_knum(&w, "output_throughput_per_gpu",
            (double)r->output_tokens / r->duration / (double)p->o->tp);
    serve_metric m[4];
    serve_metrics(r, m);
    for (int i = 0; i < 4; i++) {
        char key[32];
        snprintf(key, sizeof key, "mean_%s_ms", m[i].key);
        jw_knum(&w, key, mean_ms(m[i].sum, m[i].n));
        snprintf(key, sizeof key, "median_%s_ms", m[i].key);
        jw_knum(&w, key, q_ms(m[i].q, 0.5));
        snprintf(key, sizeof key, "p90_%s_ms", m[i].key);
        jw_knum(&w, key, q_ms(m[i].q, 0.9));
        snprintf(key, sizeof key, "p99_%s_ms", m[i].key);
        jw_knum(&w, key, q_ms(m[i].q, 0.99));
    }
    if (p->interval) {
        jw_knum(&w, "mean_ttft_lo_ms", p->lo[0]);
        jw_knum(&w, "mean_ttft_hi_ms", p->hi[0]);
        jw_knum(&w, "mean_tpot_lo_ms", p->lo[1]);
        jw_knum(&w, "mean_tpot_hi_ms", p->hi[1]);
    }
    jw_kint(&w, "n_steps", r->steps);
    jw_kint(&w, "preemptions", r->preemptions);
    jw_knum(&w, "tokens_per_step", r->tokens_per_step_mean);
    jw_kint(&w, "batch_peak", r->batch_peak);
    jw_knum(&w, "kv_cache_mean", r->kv_mean);
    jw_knum(&w, "kv_cache_peak", r->kv_peak);
    jw_kint(&w, "shapes_priced", p->cost->misses);
    jw_end_obj(&w);
    jw_done(&w);
}

static void serve_csv(const serve_report *p)
{
    const serve_result *r = p->r;
    const serve_config *c = p->c;
    serve_metric m[4];
    serve_metrics(r, m);
    printf("scenario,model,hardware,mode,serving_engine,tp,concurrency,rate,isl,osl,requests,"
           "duration_s,"
           "output_throughput,output_throughput_per_gpu");
    for (int i = 0; i < 4; i++)
        printf(",mean_%s_ms,median_%s_ms,p90_%s_ms,p99_%s_ms", m[i].key, m[i].key, m[i].key,
               m[i].key);
    if (p->interval) printf(",mean_ttft_lo_ms,mean_ttft_hi_ms,mean_tpot_lo_ms,mean_tpot_hi_ms");
    printf(",n_steps,preemptions,kv_blocks,kv_cache_peak\n");
    csv_put(stdout, p->s->name);
    putchar(',');
    csv_put(stdout, p->s->model.name);
    putchar(',');
    csv_put(stdout, p->s->hw.name);
    printf(",%s,", serve_mode(p->s));
    csv_put(stdout, p->s->engine);
    printf(",%ld,%ld,%.6g,%ld,%ld,%ld,%.6f,%.6f,%.6f", p->o->tp,
           c->concurrency, c->rate, c->n_lengths ? 0 : c->isl, c->n_lengths ? 0 : c->osl,
           r->requests, r->duration, (double)r->output_tokens / r->duration,
           (double)r->output_tokens / r->duration / (double)p->o->tp);
    for (int i = 0; i < 4; i++)
        printf(",%.6f,%.6f,%.6f,%.6f", mean_ms(m[i].sum, m[i].n), q_ms(m[i].q, 0.5),
               q_ms(m[i].q, 0.9), q_ms(m[i].q, 0.99));
    if (p->interval) printf(",%.6f,%.6f,%.6f,%.6f", p->lo[0], p->hi[0], p->lo[1], p->hi[1]);
    printf(",%ld,%ld,%ld,%.6f\n", r->steps, r->preemptions, c->kv_blocks, r->kv_peak);
}

/* The server's defaults for this GPU, as vLLM picks them. */
static void serve_defaults(const scenario *s, serve_opts *o)
{
    long tokens, seqs;
    scost_server_defaults(s, &tokens, &seqs);
    if (!o->tokens) o->tokens = tokens;
    if (!o->seqs) o->seqs = seqs;
    if (!o->block) o->block = SCOST_BLOCK;
    if (!o->tp) o->tp = s->tp;
    if (!o->have_seed) o->seed = s->seed;
    if (!o->requests)
        o->requests = o->concurrency > 0 ? SCOST_REQUESTS_PER_CLIENT * o->concurrency
                                            : SCOST_RATE_REQUESTS;
    if (!o->lengths_path) {
        if (!o->isl) o->isl = 1024;
        if (!o->osl) o->osl = 1024;
    }
}

/* --interval: the same load with every kernel class's time at (1 -/+ its held-out error),
 * the calibration's own (kcal_error_pct), each run on its own step cache; lo and hi are the
 * smallest and largest mean TTFT and TPOT of the three runs. */
static int serve_interval(scenario *s, const serve_opts *o, const serve_config *c,
                          serve_report *rep, tp_err *err)
{
    serve_metric m[4];
    serve_metrics(rep->r, m);
    for (int i = 0; i < 2; i++) rep->lo[i] = rep->hi[i] = mean_ms(m[i].sum, m[i].n);
    int rc = 0;
    for (int sign = -1; sign <= 1 && rc == 0; sign += 2) {
        scost cost;
        serve_result r;
        s->kernel_err_sign = sign;
        serve_config cc = *c;
        cc.observe = NULL;
        cc.price_ctx = &cost;
        if (scost_init(&cost, s, o->tp, ((const scost *)c->price_ctx)->capture_max, err) ||
            serve_run(&cc, &r, err)) {
            scost_free(&cost);
            rc = -1;
            break;
        }
        serve_metric e[4];
        serve_metrics(&r, e);
        for (int i = 0; i < 2; i++) {
            double v = mean_ms(e[i].sum, e[i].n);
            if (v < rep->lo[i]) rep->lo[i] = v;
            if (v > rep->hi[i]) rep->hi[i] = v;
        }
        serve_result_free(&r);
        scost_free(&cost);
    }
    s->kernel_err_sign = 0;
    return rc;
}

int tpsim_cmd_serve(int argc, char **argv)
{
    tp_err err = {{0}};
    scn_opts so;
    memset(&so, 0, sizeof so);
    serve_opts o = {0};
    o.mem_util = RUN_MEM_UTIL, o.reserve_gib = RUN_RESERVE_GIB;
    int parsed = serve_parse(argc, argv, &o, &so, &err);
    if (parsed) return parsed > 0 ? 0 : cmd_fail(&err);
    const char *path = o.path;
    char scn_buf[1024];
    if (!(path = locate_arg("scenarios", ".yaml", path, scn_buf, sizeof scn_buf, &err)))
        return cmd_fail(&err);
    scenario *s = calloc(1, sizeof *s);
    if (!s) return tp_err_set(&err, "out of memory"), cmd_fail(&err);
    int status = 2;
    long (*lengths)[2] = NULL;
    size_t n_lengths = 0;
    scost cost;
    memset(&cost, 0, sizeof cost);
    ofile tf = {0};
    serve_result res;
    memset(&res, 0, sizeof res);
    int have_res = 0;
    if (scn_opts_load(path, &so, s, &err)) goto out;
    serve_defaults(s, &o);
    if (o.lengths_path && serve_read_lengths(o.lengths_path, &lengths, &n_lengths, &err)) goto out;
    double weights;
    long blocks;
    if (scost_kv_blocks(s, o.tp, o.block, o.mem_util, o.reserve_gib * 1024.0 * 1024.0 * 1024.0,
                        &weights, &blocks, &err))
        goto out;
    if (blocks < 1) {
        tp_err_set(&err, "serve: %s at TP-%ld leaves no room for a KV cache: %.1f GB weights per "
                   "rank + %.2f GiB reserve > %.2f x %.1f GB HBM", s->model.name, o.tp,
                   weights / 1e9, o.reserve_gib, o.mem_util, s->hw.hbm_bytes / 1e9);
        goto out;
    }
    if (scost_init(&cost, s, o.tp, s->graphs ? scost_capture_max(o.tokens, o.seqs) : 0, &err))
        goto out;
    serve_obs obs = {NULL, 1, o.requests, 0, {0}};
    pline_start(&obs.progress, o.quiet ? NULL : "serve");
    serve_observer observer = {obs_step, obs_request, &obs};
    serve_config c = {o.tokens, o.seqs, o.block, blocks, o.concurrency, o.rate, o.requests, o.isl,
                      o.osl, (const long (*)[2])lengths, n_lengths, o.seed, scost_price, &cost,
                      &observer};
    if (serve_check(&c, &err)) goto out;
    if (o.trace_path) {
        if (ofile_open(&tf, o.trace_path, &err)) goto out;
        obs.trace = tf.f;
        fprintf(tf.f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    }
    if (serve_run(&c, &res, &err)) {
        if (o.trace_path) ofile_abort(&tf);
        goto out;
    }
    have_res = 1;
    pline_end(&obs.progress);
    if (o.trace_path) fprintf(tf.f, "\n]}\n");
    serve_report rep = {s, &o, &c, &res, &cost, weights, o.interval, {0, 0}, {0, 0}};
    if (o.interval && serve_interval(s, &o, &c, &rep, &err)) goto out;
    if (o.format == 1) serve_json(&rep);
    else if (o.format == 2) serve_csv(&rep);
    else serve_text(&rep);
    if (o.trace_path && ofile_commit(&tf, &err)) goto out;
    status = 0;
out:
    if (status == 2) cmd_fail(&err);
    if (have_res) serve_result_free(&res);
    scost_free(&cost);
    free(lengths);
    scenario_free(s);
    free(s);
    return status;
}
