/* trace_out.h: a tr_report written for people (a table) or programs (JSON), and as a
 * calibration file for scenarios.
 *
 * Contract: the writers print to the caller's FILE and allocate nothing. JSON: top level
 * `ranks`, `kernels`, `memcpys`, `graph_launches`, `collectives` (totals over the trace),
 * then `steps[]` with the same fields per step; times in us/ms as each key's suffix says.
 * The calibration (tr_out_calib) is YAML whose every value carries `source:` (files,
 * ranks, steps it was measured from): host.launch, host.collective and host.step (dist,
 * mean_us, cv, or `unmeasured: true`), gpu.kernel_fixed_us and gpu.hbm_efficiency (absent
 * when unmeasured), which a scenario loads (sim/measured.h), and an `apply:` list of the
 * `--set key=value` overrides that give a scenario the same values.
 */
#ifndef TPSIM_TRACE_OUT_H
#define TPSIM_TRACE_OUT_H

#include <stdio.h>

#include "trace_data.h"
#include "trace_stats.h"

void tr_out_text(FILE *f, const tr_trace *t, const tr_report *r);
void tr_out_json(FILE *f, const tr_trace *t, const tr_report *r);
/* hbm_bw: the GPU's nominal HBM bytes/s (from --hardware), or 0: then per-class
 * efficiencies (achieved / nominal) and gpu.hbm_efficiency are left out. */
void tr_out_calib(FILE *f, const tr_trace *t, const tr_report *r, double hbm_bw,
                  const char *hw_path);

/* Every GPU activity of the trace, one CSV row each, ranks in file order and each rank's by
 * start time: rank,kind,start_ns,dur_us,bytes,name. kind: kernel, memcpy or memset; dur_us
 * the duration (ns / 1000, exact to 3 decimals); bytes a kernel's launching op's input bytes
 * (0 when the op recorded no shapes) or a copy's bytes; name as the trace spells it (quoted
 * when needed, csv.h). `tpsim fit-kernels` reads it (calibrate/kprof.h). */
void tr_out_kernels(FILE *f, const tr_trace *t);

#endif
