/* phys.h: the physical range of every rate and time a calibration or hardware file states.
 *
 * A file's number outside its range is refused at load ("file:line:col: ... expected LO..HI"):
 * a rate near zero would price a kernel at 10^290 s, and an engine adding such times overflows
 * its clock. The ranges are wide on purpose, each an order of magnitude or more beyond the
 * fastest and slowest hardware tpsim models; docs/sources.md#physical-bounds gives the
 * reasoning and the datasheet figures behind each.
 */
#ifndef TPSIM_PHYS_H
#define TPSIM_PHYS_H

/* Memory and link bandwidth, GB/s: 100 TB/s is 13x B200's 7.7 TB/s of HBM3e, the fastest memory
 * in models/hw (docs/sources.md#gpu-datasheets); 0.1 GB/s is below PCIe 1.0 x1 (0.25 GB/s),
 * slower than any path a GPU kernel or collective reads through (assumed floor). */
#define PHYS_GBPS_MIN 0.1
#define PHYS_GBPS_MAX 1e5
/* Arithmetic rate, TFLOP/s: 100 PFLOP/s is 22x B200's dense FP8 4.5 PFLOP/s
 * (models/hw/b200.yaml, docs/sources.md#physical-bounds); 1 GFLOP/s is below one CPU core
 * (assumed floor). A per-row rate in GFLOP/s takes the same range times 1000. */
#define PHYS_TFLOPS_MIN 1e-3
#define PHYS_TFLOPS_MAX 1e5
/* One kernel's, launch's, collective's or host phase's time, us: a decode step of the study
 * takes tens of ms (docs/sources.md#study); no one part of it takes a second. */
#define PHYS_TIME_US_MAX 1e6

#endif
