/* plan_serve.c: see plan_serve.h. */
#include "plan_serve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "ofile.h"
#include "par.h"
#include "run.h"
#include "servecost.h"

#define PSERVE_MAX_SEQS 16

typedef struct pserve_row {
    int scn;
    long tp, max_seqs, clients, requests;
    double rate;
    int ok;              /* simulated; else why says why not */
    char why[1100];
    double ttft_ms, tpot_ms, p99_tpot_ms, tok_s_gpu;
    long preemptions;
    int meets;
} pserve_row;

typedef struct pserve_job {
    const pflags_opts *o;
    const scenario *scn;
    pserve_row *rows;
} pserve_job;

static int pserve_cell(void *ctx, size_t i, tp_err *err)
{
    pserve_job *j = ctx;
    pserve_row *r = &j->rows[i];
    const scenario *s = &j->scn[r->scn];
    const pflags_opts *o = j->o;
    long tokens, seqs;
    scost_server_defaults(s, &tokens, &seqs);
    double weights;
    long blocks;
    tp_err why = {{0}};
    if (scost_kv_blocks(s, r->tp, SCOST_BLOCK, o->util, o->reserve_gib * PLAN_GIB, &weights,
                        &blocks, err))
        return -1;
    if (blocks < 1) {
        snprintf(r->why, sizeof r->why, "no room for a KV cache (%.1f GB weights per rank)",
                 weights / 1e9);
        return 0;
    }
    scost cost;
    if (scost_init(&cost, s, r->tp, s->graphs ? scost_capture_max(tokens, r->max_seqs) : 0,
                   &why)) {
        snprintf(r->why, sizeof r->why, "%s", why.msg);
        scost_free(&cost);
        return 0;
    }
    serve_config c = {tokens, r->max_seqs, SCOST_BLOCK, blocks, r->clients, r->rate,
                      r->requests, o->wl_isl, o->wl_osl, NULL, 0,
                      o->have_seed ? o->req.seed : s->seed, scost_price, &cost, NULL};
    serve_result res;
    if (serve_check(&c, &why)) {
        snprintf(r->why, sizeof r->why, "%s", why.msg);
        scost_free(&cost);
        return 0;
    }
    int rc = serve_run(&c, &res, err);
    scost_free(&cost);
    if (rc) return -1;
    r->ok = 1;
    r->ttft_ms = 1e3 * res.ttft_sum / (double)res.requests;
    r->tpot_ms = res.n_tpot ? 1e3 * res.tpot_sum / (double)res.n_tpot : 0.0;
    r->p99_tpot_ms = res.n_tpot ? 1e3 * qsketch_quantile(&res.tpot, 0.99) : 0.0;
    r->tok_s_gpu = (double)res.output_tokens / res.duration / (double)r->tp;
    r->preemptions = res.preemptions;
    r->meets = r->tpot_ms <= o->tpot_ms && (!o->ttft_ms || r->ttft_ms <= o->ttft_ms);
    serve_result_free(&res);
    return 0;
}

/* max_num_seqs candidates for a replica of `clients` clients (0: a rate). */
static size_t pserve_seqs(long clients, long dflt, long *out)
{
    size_t n = 0;
    if (clients <= 0) {
        const long fixed[] = {16, 64, 256};
        for (size_t i = 0; i < 3; i++)
            if (fixed[i] < dflt) out[n++] = fixed[i];
        out[n++] = dflt;
        return n;
    }
    for (long b = 8; b < clients && b < dflt && n < PSERVE_MAX_SEQS - 1; b *= 2) out[n++] = b;
    out[n++] = clients < dflt ? clients : dflt;
    return n;
}

static int pserve_cmp(const void *a, const void *b)
{
    const pserve_row *x = a, *y = b;
    if (x->ok != y->ok) return y->ok - x->ok;
    if (x->meets != y->meets) return y->meets - x->meets;
    if (x->tok_s_gpu != y->tok_s_gpu) return x->tok_s_gpu < y->tok_s_gpu ? 1 : -1;
    if (x->scn != y->scn) return x->scn - y->scn;
    if (x->tp != y->tp) return x->tp < y->tp ? -1 : 1;
    return x->max_seqs < y->max_seqs ? -1 : x->max_seqs > y->max_seqs;
}

static const char *pserve_mode(const scenario *s) { return s->graphs ? "graphs" : "eager"; }

static void pserve_text(FILE *f, const pflags_opts *o, const scenario *scn, const pserve_row *r,
                        size_t n)
{
    fprintf(f, "tpsim plan --workload: %ld GPUs serving %ld + %ld tokens per request, ", o->gpus,
            o->wl_isl, o->wl_osl);
    if (o->wl_conc) fprintf(f, "%ld clients in a closed loop\n", o->wl_conc);
    else fprintf(f, "%g requests/s (Poisson)\n", o->wl_rate);
    fprintf(f, "targets: mean TPOT <= %g ms", o->tpot_ms);
    if (o->ttft_ms) fprintf(f, ", mean TTFT <= %g ms", o->ttft_ms);
    fprintf(f, "; each replica simulated by tpsim serve (vLLM V1 scheduler, chunked prefill)\n");
    fprintf(f, "%-4s %-10s %-7s %-14s %3s %8s %7s %9s %9s %9s %9s  %s\n", "rank", "hardware",
            "mode", "engine", "tp", "max_seqs", "clients", "ttft_ms", "tpot_ms", "p99_tpot",
            "tok/s/gpu", "meets");
    int shown = 0;
    for (size_t i = 0; i < n; i++) {
        const scenario *s = &scn[r[i].scn];
        if (!r[i].ok) {
            fprintf(f, "%-4s %-10s %-7s %-14s %3ld %8ld  %s\n", "-", s->hw.name, pserve_mode(s),
                    s->engine, r[i].tp, r[i].max_seqs, r[i].why);
            continue;
        }
        if (shown++ >= o->top) continue;
        fprintf(f, "%-4d %-10s %-7s %-14s %3ld %8ld %7ld %9.2f %9.3f %9.3f %9.1f  %s\n", shown,
                s->hw.name, pserve_mode(s), s->engine, r[i].tp, r[i].max_seqs, r[i].clients,
                r[i].ttft_ms, r[i].tpot_ms, r[i].p99_tpot_ms, r[i].tok_s_gpu,
                r[i].meets ? "yes" : "no");
    }
    if (n && r[0].ok && r[0].meets)
        fprintf(f, "choice: %s %s TP-%ld, max_num_seqs %ld: %.1f output tokens/s per GPU\n",
                scn[r[0].scn].hw.name, pserve_mode(&scn[r[0].scn]), r[0].tp, r[0].max_seqs,
                r[0].tok_s_gpu);
    else
        fprintf(f, "choice: none meets the targets (the rows above are the closest)\n");
}

static void pserve_csv(FILE *f, const scenario *scn, const pserve_row *r, size_t n)
{
    fprintf(f, "hardware,mode,serving_engine,tp,max_num_seqs,clients,rate,requests,mean_ttft_ms,"
               "mean_tpot_ms,p99_tpot_ms,output_throughput_per_gpu,preemptions,meets,status\n");
    for (size_t i = 0; i < n; i++) {
        const scenario *s = &scn[r[i].scn];
        csv_put(f, s->hw.name);
        fprintf(f, ",%s,", pserve_mode(s));
        csv_put(f, s->engine);
        fprintf(f, ",%ld,%ld,%ld,%.6g,%ld,", r[i].tp, r[i].max_seqs, r[i].clients, r[i].rate,
                r[i].requests);
        if (r[i].ok)
            fprintf(f, "%.6f,%.6f,%.6f,%.6f,%ld,%s,simulated\n", r[i].ttft_ms, r[i].tpot_ms,
                    r[i].p99_tpot_ms, r[i].tok_s_gpu, r[i].preemptions,
                    r[i].meets ? "true" : "false");
        else {
            fputs(",,,,,false,", f);
            csv_put(f, r[i].why);
            fputc('\n', f);
        }
    }
}

int plan_serve(const pflags_opts *o, const scenario *scn, int n_scn, tp_err *err)
{
    if (o->format == 2)
        return tp_err_set(err, "--format: json is not written for --workload, expected text or "
                          "csv"), 2;
    size_t cap = (size_t)n_scn * o->n_tp * PSERVE_MAX_SEQS, n = 0;
    pserve_row *rows = calloc(cap ? cap : 1, sizeof *rows);
    if (!rows) return tp_err_set(err, "out of memory"), 2;
    for (int i = 0; i < n_scn; i++)
        for (size_t t = 0; t < o->n_tp; t++) {
            long tp = o->tps[t], replicas = o->gpus / tp, tokens, dflt, cand[PSERVE_MAX_SEQS];
            scost_server_defaults(&scn[i], &tokens, &dflt);
            long clients = o->wl_conc ? (o->wl_conc + replicas - 1) / replicas : 0;
            size_t k = pserve_seqs(clients, dflt, cand);
            for (size_t c = 0; c < k; c++)
                rows[n++] = (pserve_row){
                    .scn = i, .tp = tp, .max_seqs = cand[c], .clients = clients,
                    .rate = o->wl_conc ? 0.0 : o->wl_rate / (double)replicas,
                    .requests = clients ? SCOST_REQUESTS_PER_CLIENT * clients
                                        : SCOST_RATE_REQUESTS};
        }
    pserve_job job = {o, scn, rows};
    int status = 2;
    ofile of = {0};
    if (par_map(n, o->jobs, pserve_cell, &job, o->quiet ? NULL : "plan", err)) goto out;
    qsort(rows, n, sizeof *rows, pserve_cmp);
    FILE *f = stdout;
    if (o->out) {
        if (ofile_open(&of, o->out, err)) goto out;
        f = of.f;
    }
    if (o->format == 1) pserve_csv(f, scn, rows, n);
    else pserve_text(f, o, scn, rows, n);
    if (o->out && ofile_commit(&of, err)) goto out;
    status = n && rows[0].ok && rows[0].meets ? 0 : 1;
out:
    free(rows);
    return status;
}
