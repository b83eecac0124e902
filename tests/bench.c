/* bench.c: `make bench` and `make bench-peer`: engine throughput on Llama-3.1-70B TP-8 decode
 * steps with jittered eager host costs, on one thread, and the peak RSS of a long run.
 * A benchmark, not a test: it asserts nothing about speed.
 *
 *   bench [--scenario FILE] [--steps N] [--reps R] [--method auto|events|maxplus]
 *         [--tp K] [--batch B] [--set key=value]...
 * prints key: value lines: events, rank_ops (ops per rank and step x ranks x steps),
 * wall_s (best of R runs: the least disturbed on shared machines), events_per_s,
 * rank_ops_per_s, steps_per_s, cpu_s and ns_per_rank_op_cpu (the process's CPU time, best
 * of R: on shared cores the figure that does not count the wait for a core), max_rss_mb
 * (getrusage: the whole process's peak). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "run.h"
#include "scenario.h"

#define BENCH_MAX_SETS 32

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int usage(void)
{
    fputs("usage: bench [--scenario FILE] [--steps N] [--reps R] [--method auto|events|maxplus]\n"
          "             [--tp K] [--batch B] [--set key=value]...\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    /* default: the eager-host hypothesis' order of magnitude, 6 us per launch, jittered */
    const char *path = "scenarios/paper-additive.yaml",
               *calib = "models/allreduce/h100-sxm-tp8.yaml";
    const char *sets[BENCH_MAX_SETS] = {
        "host.launch.dist=lognormal",     "host.launch.mean_us=6",      "host.launch.cv=0.3",
        "host.collective.dist=lognormal", "host.collective.mean_us=10", "host.collective.cv=0.3",
        "host.step.dist=normal",          "host.step.mean_us=1500",     "host.step.cv=0.1",
        "gpu.launch_latency_us=4"};
    int n_sets = 10, reps = 5;
    long steps = 2000, tp = 8, batch = 8;
    engine_method method = ENGINE_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        i++;
        if (!strcmp(a, "--scenario")) path = v, calib = NULL, n_sets = 0, batch = -1;
        else if (!strcmp(a, "--steps")) steps = atol(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--tp")) tp = atol(v);
        else if (!strcmp(a, "--batch")) batch = atol(v);
        else if (!strcmp(a, "--set") && n_sets < BENCH_MAX_SETS) sets[n_sets++] = v;
        else if (!strcmp(a, "--method"))
            method = !strcmp(v, "events")    ? ENGINE_EVENTS
                     : !strcmp(v, "maxplus") ? ENGINE_MAXPLUS
                                             : ENGINE_AUTO;
        else return usage();
    }
    if (steps < 1 || reps < 1 || tp < 1) return usage();
    scenario *s = calloc(1, sizeof *s);
    tp_err err;
    if (!s || scenario_load(path, sets, n_sets, s, &err) ||
        (calib && scenario_add_allreduce(s, calib, &err))) {
        fprintf(stderr, "bench: %s\n", s ? err.msg : "out of memory");
        return 2;
    }
    run_request req = {tp, batch < 0 ? s->batch : batch, s->ctx, steps, 1, 42, 0, RUN_REQ_PLAIN};
    run_summary sum;
    double best = 1e30, best_cpu = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (run_cell_on(s, &req, method, &sum, NULL, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 2;
        }
        double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (dt < best) best = dt;
        if (dc < best_cpu) best_cpu = dc;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double all_steps = (double)(steps + req.warmup);
    double rank_ops = all_steps * (double)tp * (double)sum.ops_per_step;
    printf("workload: %s, %s TP-%ld batch %ld ctx %ld, %.0f steps x %ld ranks\n", s->name,
           s->model.name, tp, req.batch, req.ctx, all_steps, tp);
    printf("engine: %s\n", sum.method == ENGINE_MAXPLUS ? "maxplus" : "events");
    printf("ops_per_step_per_rank: %zu\n", sum.ops_per_step);
    printf("events: %llu\n", (unsigned long long)sum.events);
    printf("rank_ops: %.0f\n", rank_ops);
    printf("simulated_step_ms: %.6f\n", sum.step_mean * 1e3);
    printf("step_ms_p50: %.6f\n", sum.step_p50 * 1e3);
    printf("step_ms_p99: %.6f\n", sum.step_p99 * 1e3);
    printf("wall_s: %.4f\n", best);
    printf("events_per_s: %.0f\n", (double)sum.events / best);
    printf("rank_ops_per_s: %.0f\n", rank_ops / best);
    printf("ns_per_rank_op: %.2f\n", best / rank_ops * 1e9);
    printf("steps_per_s: %.0f\n", all_steps / best);
    printf("cpu_s: %.4f\n", best_cpu);
    printf("ns_per_rank_op_cpu: %.2f\n", best_cpu / rank_ops * 1e9);
    printf("max_rss_mb: %.1f\n", (double)ru.ru_maxrss / 1024.0);
    scenario_free(s);
    free(s);
    return 0;
}
