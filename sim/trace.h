/* trace.h: the simulated timeline as a Kineto-compatible Chrome trace (opens in Perfetto and
 * chrome://tracing; read by Holistic Trace Analysis, TraceLens and `tpsim trace import`).
 *
 * Contract: trace_init binds a writer to a caller-owned FILE; as the engine's sink
 * (trace_start, trace_slice) it writes the header when the run starts, then each slice as it
 * happens: nothing is held but a 64 KiB output buffer and per-op fragments, so memory does
 * not grow with steps. trace_end closes the document; it returns -1 if a write failed. Warm-up
 * steps are not written; steps are numbered from the first measured one. Layout: one process per
 * rank (pid = rank; `distributedInfo.ranks_by_pid` says so), host thread tid 0, compute stream
 * tid 7. Host launches are `cuda_runtime` events (cudaLaunchKernel, cudaMemcpyAsync,
 * cudaGraphLaunch, cudaStreamSynchronize), GPU work is `kernel` / `gpu_memcpy` with
 * `args.correlation` and an `ac2g` flow from its launch; the kernels replayed by one graph share
 * its launch's correlation id; each step is a `user_annotation` "execute_step_N"; other host work
 * is `cpu_op`. A collective's kernel spans its wait for peers (args.wait_peers_ns), as a real NCCL
 * kernel does. Times: every start and end is rounded once to a tick of 2^-10 us (0.98 ns) and
 * written exactly, as decimal microseconds (at most ten decimals), formatted without printf; a
 * slice never starts before the previous one on its thread ends, and since a viewer's ts + dur is
 * exact in IEEE double on that grid, none overlap or stick out of the step that encloses
 * them as a viewer computes them either.
 * Collectives carry the kernel names real traces show, so tools that classify communication
 * by name (Holistic Trace Analysis: "nccl") see them: NCCL's
 * "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" (algorithm
 * and protocol from the tuner when it priced the call, else RING_LL, NCCL's choice for
 * decode-sized messages; args.algo_assumed says so), vLLM's custom all-reduce
 * "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*, ...)" (or
 * _2stage), with args.op (tpsim's op), args.collective and args.priced_by. Correlation ids, and
 * so the ac2g flow ids (Kineto's flow id is the correlation id), are unique in the file. trace_gzip
 * makes the output gzip (for a .gz path).
 */
#ifndef TPSIM_TRACE_H
#define TPSIM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include <zlib.h>

#include "coll.h"
#include "engine.h"
#include "err.h"

/* The largest time a trace holds: 2^53 ticks of 2^-10 us (8.8e6 s, about 100 days), the last
 * integer a viewer's double holds exactly; beyond it (a calibration pricing a kernel at
 * 10^290 s) the writer writes nothing wrong: trace_end refuses the file. */
#define TRACE_MAX_TICKS 9007199254740992.0
#include "prog.h"

#define TRACE_BUF 65536

typedef struct trace_rank {
    int64_t host_end, stream_end;  /* last end written on each thread, ns */
    int64_t wait_start;            /* pending wait-for-peers start, -1 none */
} trace_rank;

typedef struct trace_writer {
    FILE *f;
    char title[256];
    char device[64], model[64]; /* trace_identify: the GPU and the LLM, "" unknown */
    int started;
    const prog *p;
    long tp, warmup;
    uint32_t *corr_base;   /* per op: the op whose launch enqueues it (graph runs share one) */
    char *frags;           /* per op: its ",\"layer\":L,\"bytes\":B" args, TW_FRAG bytes each */
    trace_rank *ranks;
    char *knames;          /* per op: a collective's kernel name ("" for others), TW_KNAME bytes */
    coll_setup coll;       /* how collectives are priced (trace_collectives), for their names */
    double elem_bytes;     /* bytes of a collective's element (2: bf16) */
    int have_coll;
    int graphs;
    int gzip;              /* 1: deflate into f as gzip (trace_gzip) */
    z_stream z;
    int failed;
    double out_of_range_s; /* the first time beyond TRACE_MAX_TICKS, 0 if none (trace_end) */
    size_t len;
    char buf[TRACE_BUF];
} trace_writer;

void trace_init(trace_writer *w, FILE *f, const char *title);
/* The GPU's name (written as Kineto's deviceProperties[0].name) and the model's (otherData.
 * model), so `trace compare` can say when it is given two different ones; before the run. */
void trace_identify(trace_writer *w, const char *device, const char *model);
/* Before the run: the collective model that prices the all-reduces (their kernel names),
 * and the bytes of one element of their messages. Without it they are named NCCL RING_LL. */
void trace_collectives(trace_writer *w, const coll_setup *c, double elem_bytes);
/* Before the run: write gzip (deflate, RFC 1952) instead of plain JSON. 0, or -1 no memory. */
int trace_gzip(trace_writer *w);
/* The engine's sink (ctx is the trace_writer): trace_start when the run starts (0, or -1
 * out of memory), trace_slice per slice. */
int trace_start(void *ctx, const engine_config *c);
void trace_slice(void *ctx, const engine_slice *s);
/* Ends the document and frees the writer's memory; 0, or -1 with err set if a write failed. */
int trace_end(trace_writer *w, tp_err *err);
/* Frees the writer's memory without finishing the document (the run failed). */
void trace_abort(trace_writer *w);

#endif
