/* plan_flags.h: `tpsim plan`'s command line: one flag table (for parsing, --help and the man
 * page), each value checked, the scenario and the grid located; what cmd_plan.c searches with.
 *
 * Contract: pflags_defaults fills a caller-owned pflags_opts with the defaults; pflags_parse
 * reads argv into it and into scn_opts (both borrow argv's strings): 0 when the command line
 * is complete, 1 when --help was asked for (pflags_help prints it), -1 with one line in err.
 * Every flag that shapes the searched rows goes into o->fp, in order (shard.h), so a shard's
 * parts carry the plan's fingerprint. No globals beyond the constant tables.
 */
#ifndef TPSIM_PLAN_FLAGS_H
#define TPSIM_PLAN_FLAGS_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "run.h"
#include "scnopt.h"

#define PLAN_MAX_HW 8
#define PLAN_MAX_TP 16
#define PLAN_MAX_CTX 64
#define PLAN_GIB (1024.0 * 1024.0 * 1024.0)
/* vLLM's memory defaults, as run applies them (run.h): --gpu-memory-utilization and
 * --reserve-gib take their place */
#define PLAN_RESERVE_GIB RUN_RESERVE_GIB
#define PLAN_MEM_UTIL RUN_MEM_UTIL

/* --hardware NAME: its models/hw file (the id, or the path given) and the models/allreduce
 * calibrations measured on it (hardware: one of its names), one per TP degree */
#define PFLAGS_MAX_CALIBS 8
typedef struct pflags_hw {
    char file[1024];
    char calibs[PFLAGS_MAX_CALIBS][1024];
    int n_calibs;
} pflags_hw;

typedef struct pflags_opts {
    long gpus;
    double tpot_ms;
    pflags_hw hws[PLAN_MAX_HW];
    int n_hw;
    long tps[PLAN_MAX_TP];
    size_t n_tp;
    int modes[2], n_modes;
    long ctxs[PLAN_MAX_CTX];
    size_t n_ctx;
    int ctx_given;
    long batch_max;
    double util, reserve_gib;
    run_request req;
    int have_seed;
    const char *grid, *out, *plot;
    char scn_buf[1024], grid_buf[4096];
    int format; /* 0 text, 1 csv, 2 json */
    int jobs, quiet, top, no_intervals;
    long shard, n_shards;
    uint64_t fp; /* the part's fingerprint (shard.h): the flags here, the scenario later */
    /* --workload ISL,OSL,LOAD: the serving search (plan_serve.h) in place of the step's */
    int workload;
    long wl_isl, wl_osl, wl_conc; /* wl_conc > 0: that many clients, else wl_rate requests/s */
    double wl_rate, ttft_ms;      /* ttft_ms 0: no TTFT target */
} pflags_opts;

void pflags_defaults(pflags_opts *o);
int pflags_parse(int argc, char **argv, pflags_opts *o, scn_opts *so, const char **path,
                 tp_err *err);
void pflags_help(FILE *f);

#endif
