/* nccltune.h: NCCL's own all-reduce cost model (src/graph/tuning.cc, src/enqueue.cc), as
 * NCCL uses it to pick an algorithm x protocol on one NVLink node.
 *
 * Contract: a version-tagged table of NCCL's latency constants (docs/sources.md
 * #nccl-tuner, read from the NVIDIA/nccl tags named there) and the time formula there: time =
 * lat(algo, proto, k) + bytes / (1000 * algBw) microseconds, algBw from the bus bandwidth nChannels
 * * bwPerChannel with NCCL's caps. Channel count and per-channel bandwidth are not constants: they
 * are calibration inputs (NCCL's topology search gives them; read them from
 * NCCL_DEBUG_SUBSYS=TUNING or fit them with nt_fit). nt_pick takes the minimum-time enabled pair,
 * as topoGetAlgoInfo does. Single node only (nNodes = 1); Tree's treeCorrectionFactor is not
 * applied (its table is not in the sources); NVLS takes its bus bandwidth as its own input. Pure
 * functions, no allocation.
 */
#ifndef TPSIM_NCCLTUNE_H
#define TPSIM_NCCLTUNE_H

#include <stddef.h>

typedef enum nt_algo { NT_TREE, NT_RING, NT_NVLS, NT_NALGO } nt_algo;
typedef enum nt_proto { NT_LL, NT_LL128, NT_SIMPLE, NT_NPROTO } nt_proto;

#define NT_ALGO_BIT(a) (1u << (a))
#define NT_ALL_ALGOS (NT_ALGO_BIT(NT_TREE) | NT_ALGO_BIT(NT_RING) | NT_ALGO_BIT(NT_NVLS))

typedef struct nt_table {
    const char *version;
    double base_lat[2][NT_NPROTO];        /* [Tree, Ring][proto], us */
    double nvlink_lat[NT_NALGO][NT_NPROTO]; /* hwLat[NVLINK][Tree, Ring, NVLS][proto], us */
    int nvls_busbw_per_rank;              /* algBw = busBw * k/(2(k-1)) (2.30) instead of 5/6 */
} nt_table;

typedef struct nt_inputs {
    const nt_table *table;
    long k;
    double channels;            /* nChannels */
    double bw_per_channel_gbps; /* bwIntra, GB/s per channel */
    double nvls_busbw_gbps;     /* NVLS bus bandwidth; 0: NVLS off */
    unsigned algos;             /* NT_ALGO_BIT set: the algorithms enabled (NCCL_ALGO) */
} nt_inputs;

typedef struct nt_choice {
    int algo, proto;  /* -1 if nothing is enabled */
    double lat_us;    /* the latency term */
    double time_us;   /* latency + bytes / algBw */
} nt_choice;

/* The table for an NCCL version ("2.27.3"), or NULL. */
const nt_table *nt_find(const char *version);
/* The versions held, comma-separated, for messages. */
const char *nt_versions(void);
const char *nt_algo_name(int algo);
const char *nt_proto_name(int proto);
/* Algorithm by name (ring, tree, nvls; any case), or -1. */
int nt_algo_parse(const char *name);
/* Time of one pair, or a negative value when NCCL would not enable it. */
double nt_time(const nt_inputs *in, int algo, int proto, double bytes, double *lat_us);
/* The minimum-time enabled pair. */
nt_choice nt_pick(const nt_inputs *in, double bytes);

/* Least-squares fit of channels (whole numbers 1..64) and bw_per_channel, plus a constant
 * per-call overhead outside NCCL's model (launch_us >= 0), to measured times (us) at the
 * given sizes, on relative error. `in` gives table, k, algos, nvls; returns the mean
 * |relative error| of the fit, and fills channels, bw_per_channel_gbps and *launch_us.
 * Only the bus bandwidth channels x bw is identifiable unless a per-channel cap (LL128)
 * binds: among equal fits the fewest channels win. */
double nt_fit(nt_inputs *in, const double *bytes, const double *us, size_t n, double *launch_us);
/* With channels and bandwidth given (read from NCCL's TUNING table), only the overhead:
 * returns the mean |relative error| and fills *launch_us. */
double nt_fit_overhead(const nt_inputs *in, const double *bytes, const double *us, size_t n,
                       double *launch_us);

#endif
