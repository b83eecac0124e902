/* nccl_tuning.h (prefix ntr_): read NCCL's own tuning table from its log (NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=INIT,TUNING), for the nccl-tuner model's calibration inputs.
 *
 * The log carries, on rank 0, a table (NVIDIA/nccl issue #1154 shows it):
 *     NCCL INFO   Algorithm   |        Tree        |        Ring        | ...
 *     NCCL INFO   Protocol    |   LL | LL128 | Simple |   LL | LL128 | Simple | ...
 *     NCCL INFO     AllReduce |  lat/  bw |  lat/  bw | ...          (us / GB/s algorithm bw)
 * each algorithm spanning its three protocol columns, and the lines "N coll channels, ..."
 * and "... nRanks K nNodes ...". nt_tuning_read keeps the first AllReduce row, the channel
 * count and k. nt_tuning_inputs turns them into nccltune inputs: the bus bandwidth of Ring
 * Simple (algBw x 2(k-1)/k) over the channels; NVLS's bus bandwidth back from its algBw by the
 * version's factor; the algorithms whose Ring/Tree/NVLS bandwidth is not 0 (NCCL zeroes what
 * NCCL_ALGO disables). Errors: one line "file:line: ..." and -1.
 */
#ifndef TPSIM_NCCL_TUNING_H
#define TPSIM_NCCL_TUNING_H

#include "err.h"
#include "nccltune.h"

typedef struct ntr_tuning {
    long channels, k;
    int have_table;
    double lat_us[NT_NALGO][NT_NPROTO]; /* Tree, Ring, NVLS; -1 where the table has no column */
    double algbw[NT_NALGO][NT_NPROTO];
    int table_line;
} ntr_tuning;

int ntr_tuning_read(const char *path, ntr_tuning *out, tp_err *err);
/* Inputs for `version`'s table; *max_lat_diff_us gets the largest |table latency - the
 * version's formula| over the enabled Ring/Tree pairs (a check that the version is right). */
int ntr_tuning_inputs(const ntr_tuning *t, const char *path, const char *version, nt_inputs *in,
                      double *max_lat_diff_us, tp_err *err);

#endif
