/* nccltune.c: see nccltune.h. Constants: docs/sources.md#nccl-tuner (read from
 * NVIDIA/nccl src/graph/tuning.cc at the tags named); formulas: the same entry (v2.27.3, same
 * structure in v2.30.7). Bandwidth caps are the Hopper row, identical in every version held
 * (single node): llMaxBw 141.0, perChMaxRingLL128Bw 36.7, perChMaxTreeLL128Bw 36.7,
 * perChMaxTreeBw 38.7 GB/s. */
#include "nccltune.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#define NT_LL_MAX_BW 141.0
#define NT_PERCH_RING_LL128 36.7
#define NT_PERCH_TREE_LL128 36.7
#define NT_PERCH_TREE 38.7

/* baseLat [Tree, Ring][LL, LL128, Simple]; hwLat[NVLINK][Tree, Ring, NVLS][LL, LL128, Simple] */
static const nt_table nt_tables[] = {
    {"2.21.5",
     {{6.8, 14.0, 0.0}, {6.6, 14.0, 8.4}},
     {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 25}},
     0},
    {"2.26.2",
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
     {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 25}},
     0},
    {"2.27.3",
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
     {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 25}},
     0},
    {"2.30.7",
     {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}},
     {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 25}},
     1},
};

const nt_table *nt_find(const char *version)
{
    for (size_t i = 0; i < sizeof nt_tables / sizeof nt_tables[0]; i++)
        if (!strcmp(nt_tables[i].version, version)) return &nt_tables[i];
    return NULL;
}

const char *nt_versions(void) { return "2.21.5, 2.26.2, 2.27.3, 2.30.7"; }

const char *nt_algo_name(int algo)
{
    static const char *const names[] = {"Tree", "Ring", "NVLS"};
    return algo >= 0 && algo < NT_NALGO ? names[algo] : "-";
}

const char *nt_proto_name(int proto)
{
    static const char *const names[] = {"LL", "LL128", "Simple"};
    return proto >= 0 && proto < NT_NPROTO ? names[proto] : "-";
}

int nt_algo_parse(const char *name)
{
    for (int a = 0; a < NT_NALGO; a++)
        if (!strcasecmp(name, nt_algo_name(a))) return a;
    return -1;
}

static double nt_min(double a, double b) { return a < b ? a : b; }

double nt_time(const nt_inputs *in, int algo, int proto, double bytes, double *lat_us)
{
    const nt_table *t = in->table;
    double k = (double)in->k, nsteps = 2.0 * (k - 1.0), nch = in->channels;
    double bus = nch * in->bw_per_channel_gbps, alg, lat;
    if (!(in->algos & NT_ALGO_BIT(algo)) || in->k < 2) return -1;
    switch (algo) {
    case NT_RING:
        if (proto == NT_LL) bus = nt_min(NT_LL_MAX_BW, bus * 0.5);
        if (proto == NT_LL128) bus = nt_min(bus * 0.92, nch * NT_PERCH_RING_LL128);
        alg = bus * k / nsteps;
        lat = t->base_lat[1][proto] + nsteps * t->nvlink_lat[NT_RING][proto];
        break;
    case NT_TREE:
        bus = nt_min(bus * 0.92, nch * NT_PERCH_TREE);
        if (proto == NT_LL) bus = nt_min(bus / 3.8, NT_LL_MAX_BW);
        if (proto == NT_LL128) bus = nt_min(bus * 7.0 / 9.0, nch * NT_PERCH_TREE_LL128);
        alg = bus * 0.5;
        lat = t->base_lat[0][proto] + 2.0 * (k - 1.0) * t->nvlink_lat[NT_TREE][proto];
        break;
    default: /* NVLS: Simple only, more than 2 GPUs, its own bus bandwidth */
        if (proto != NT_SIMPLE || in->k <= 2 || in->nvls_busbw_gbps <= 0) return -1;
        alg = in->nvls_busbw_gbps * (t->nvls_busbw_per_rank ? k / nsteps : 5.0 / 6.0);
        lat = t->nvlink_lat[NT_NVLS][NT_SIMPLE];
        break;
    }
    if (alg <= 0) return -1;
    if (lat_us) *lat_us = lat;
    return lat + bytes / (1000.0 * alg);
}

nt_choice nt_pick(const nt_inputs *in, double bytes)
{
    nt_choice best = {-1, -1, 0, 0};
    for (int a = 0; a < NT_NALGO; a++)
        for (int p = 0; p < NT_NPROTO; p++) {
            double lat, t = nt_time(in, a, p, bytes, &lat);
            if (t >= 0 && (best.algo < 0 || t < best.time_us)) best = (nt_choice){a, p, lat, t};
        }
    return best;
}

/* Sum of squared relative errors with the best constant overhead (>= 0) for these inputs. */
static double nt_objective(const nt_inputs *in, const double *bytes, const double *us, size_t n,
                           double *launch_us)
{
    double num = 0, den = 0, sse = 0;
    for (size_t i = 0; i < n; i++) {
        double pred = nt_pick(in, bytes[i]).time_us, w = 1.0 / (us[i] * us[i]);
        num += (us[i] - pred) * w;
        den += w;
    }
    double launch = den > 0 && num > 0 ? num / den : 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (nt_pick(in, bytes[i]).time_us + launch - us[i]) / us[i];
        sse += e * e;
    }
    *launch_us = launch;
    return sse;
}

double nt_fit(nt_inputs *in, const double *bytes, const double *us, size_t n, double *launch_us)
{
    double best_sse = INFINITY, best_bw = 1, best_ch = 1, best_launch = 0, launch;
    for (int ch = 1; ch <= 64; ch++) {
        in->channels = ch;
        /* a log grid over 0.5 .. 500 GB/s per channel, then golden-section around the best */
        double lo_bw = 0.5, step = pow(1000.0, 1.0 / 200.0), bw_best = lo_bw, sse_best = INFINITY;
        for (int i = 0; i <= 200; i++) {
            in->bw_per_channel_gbps = lo_bw * pow(step, i);
            double sse = nt_objective(in, bytes, us, n, &launch);
            if (sse < sse_best) sse_best = sse, bw_best = in->bw_per_channel_gbps;
        }
        double a = bw_best / step, b = bw_best * step, g = (sqrt(5.0) - 1) / 2;
        for (int it = 0; it < 40; it++) {
            double c = b - g * (b - a), d = a + g * (b - a), fc, fd;
            in->bw_per_channel_gbps = c;
            fc = nt_objective(in, bytes, us, n, &launch);
            in->bw_per_channel_gbps = d;
            fd = nt_objective(in, bytes, us, n, &launch);
            if (fc < fd) b = d; else a = c;
        }
        in->bw_per_channel_gbps = (a + b) / 2;
        double sse = nt_objective(in, bytes, us, n, &launch);
        if (sse < sse_best) sse_best = sse, bw_best = in->bw_per_channel_gbps;
        if (sse_best < best_sse * (1 - 1e-6) - 1e-12) /* fewest channels among equals */
            best_sse = sse_best, best_bw = bw_best, best_ch = ch;
    }
    in->channels = best_ch;
    in->bw_per_channel_gbps = best_bw;
    nt_objective(in, bytes, us, n, &best_launch);
    *launch_us = best_launch;
    double mae = 0;
    for (size_t i = 0; i < n; i++)
        mae += fabs((nt_pick(in, bytes[i]).time_us + best_launch - us[i]) / us[i]);
    return n ? mae / (double)n : 0;
}

double nt_fit_overhead(const nt_inputs *in, const double *bytes, const double *us, size_t n,
                       double *launch_us)
{
    nt_objective(in, bytes, us, n, launch_us);
    double mae = 0;
    for (size_t i = 0; i < n; i++)
        mae += fabs((nt_pick(in, bytes[i]).time_us + *launch_us - us[i]) / us[i]);
    return n ? mae / (double)n : 0;
}
