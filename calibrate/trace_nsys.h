/* trace_nsys.h: read an Nsight Systems SQLite export (`nsys export --type sqlite`).
 *
 * Contract: tr_nsys_read appends one rank per profiled process that ran GPU work
 * (CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET rows, by globalPid), in process order,
 * with its CUDA runtime calls (CUPTI_ACTIVITY_KIND_RUNTIME, by the process of globalTid)
 * and NVTX ranges (NVTX_EVENTS, as annotations). Names come from StringIds; the runtime's
 * "_vNNNN" version suffix is dropped (cudaLaunchKernel_v7000 -> cudaLaunchKernel). Times are
 * the export's nanoseconds. A file without the kernel table, or not SQLite, is refused with
 * one line; tables the export omits (MEMSET, NVTX_EVENTS) are simply absent.
 */
#ifndef TPSIM_TRACE_NSYS_H
#define TPSIM_TRACE_NSYS_H

#include "err.h"
#include "trace_data.h"

/* 1 if the file starts with the SQLite header, 0 if not, -1 if it cannot be read. */
int tr_nsys_is_sqlite(const char *path);
int tr_nsys_read(tr_trace *t, const char *path, tp_err *err);

#endif
