/* bench.c: `make bench`: engine throughput on Llama-3.1-70B TP-8 decode steps with
 * jittered eager host costs, on one thread. Prints events_per_s and steps_per_s.
 * A benchmark, not a test: it asserts nothing about speed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "run.h"
#include "scenario.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 2000;
    if (steps < 1) steps = 2000;
    /* the eager-host hypothesis' order of magnitude: 6 us per launch, jittered per rank */
    const char *sets[] = {"host.launch.dist=lognormal",    "host.launch.mean_us=6",
                          "host.launch.cv=0.3",            "host.collective.dist=lognormal",
                          "host.collective.mean_us=10",    "host.collective.cv=0.3",
                          "host.step.dist=normal",         "host.step.mean_us=1500",
                          "host.step.cv=0.1",              "gpu.launch_latency_us=4"};
    scenario *s = malloc(sizeof *s);
    tp_err err;
    if (!s || scenario_load("scenarios/paper-additive.yaml", sets, 10, s, &err) ||
        scenario_add_allreduce(s, "models/allreduce/h100-sxm-tp8.yaml", &err)) {
        fprintf(stderr, "bench: %s\n", s ? err.msg : "out of memory");
        return 2;
    }
    run_request req = {8, 8, 2048, steps, 1, 42, 0};
    run_summary sum;
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) { /* best of five: the least disturbed run (shared VMs are noisy) */
        double t0 = now_s();
        if (run_cell(s, &req, &sum, NULL, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 2;
        }
        double dt = now_s() - t0;
        if (dt < best) best = dt;
    }
    printf("workload: Llama-3.1-70B TP-8 batch 8 ctx 2048, eager host jitter, %ld steps x 8 ranks\n",
           steps + 1);
    printf("ops_per_step_per_rank: %zu\n", sum.ops_per_step);
    printf("events: %llu\n", (unsigned long long)sum.events);
    printf("simulated_step_ms: %.3f\n", sum.step_mean * 1e3);
    printf("wall_s: %.3f\n", best);
    printf("events_per_s: %.0f\n", (double)sum.events / best);
    printf("steps_per_s: %.0f\n", (double)(steps + 1) / best);
    free(s);
    return 0;
}
