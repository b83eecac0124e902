/* trace_kineto.h: read a PyTorch-profiler (Kineto) Chrome-trace JSON file, plain or .gz.
 *
 * Contract: tr_kineto_read appends one rank to t (its rank from distributedInfo.rank, else
 * the file's position) holding the file's kernels, copies, memsets, runtime/driver calls,
 * user annotations, framework-op input sizes and ac2g flow ends, with times on the
 * absolute clock baseTimeNanoseconds + ts. The file is streamed: a hand scanner finds each
 * event object's bounds in a sliding window and hands only the event kinds it needs to
 * jansson, so memory is the window (the largest event) plus the records kept. On a bad
 * file it returns -1 with one "file:line:col: ..." line in err and t holds no new rank.
 */
#ifndef TPSIM_TRACE_KINETO_H
#define TPSIM_TRACE_KINETO_H

#include "err.h"
#include "pline.h"
#include "trace_data.h"

int tr_kineto_read(tr_trace *t, const char *path, tp_err *err);
/* tr_kineto_read drawing progress (pline.h: megabytes read; NULL for none) as it reads. */
int tr_kineto_read_progress(tr_trace *t, const char *path, pline *progress, tp_err *err);

#endif
