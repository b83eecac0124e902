/* nccl_sweep.c: build/tpsim-nccl-sweep, an all-reduce message-size sweep on one node.
 *
 * One process drives K GPUs, one NCCL communicator each (ncclCommInitAll), every collective
 * issued inside ncclGroupStart/End. Sum, out-of-place, sizes doubling from --min to --max.
 * Each size: --warmup untimed calls, then --iters timed ones with a CUDA event between
 * consecutive calls on every GPU; the time of call i is the slowest GPU's gap between its
 * events i and i+1 (a collective is over when its last rank is). The result of the last call is
 * copied back from every GPU and compared with the exact expected sum: inputs are small whole
 * numbers, which BF16/FP16/FP32 add without rounding.
 *
 * Output (stdout or -o FILE): `# key: value` provenance lines, then
 * bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps with nccl-tests' definitions
 * (algbw = bytes / time, busbw = algbw * 2(k-1)/k). `tpsim fit-allreduce` reads it.
 * Every wait is polled against --timeout; failures print one line and exit 2 (cal_common.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "cal_common.h"
#include "cli.h"

#define MAX_GPUS 64
#define MAX_ITERS 100000

static const char USAGE[] = "usage: tpsim-nccl-sweep [flags]\n";
static const char HELP_TEXT[] =
    "All-reduce (sum, out-of-place) over K GPUs of this node, sizes doubling from --min\n"
    "(default 32K) to --max (default 256M); CSV for `tpsim fit-allreduce`.\n";

typedef enum { DT_BF16, DT_FP16, DT_FP32 } dtype_id;

typedef struct sweep_args {
    int gpus; /* 0: every visible GPU */
    size_t min_bytes, max_bytes;
    int iters, warmup;
    dtype_id dtype;
    double timeout_s;
    const char *out;
} sweep_args;

typedef struct sweep_ctx {
    int k;
    ncclComm_t comm[MAX_GPUS];
    cudaStream_t stream[MAX_GPUS];
    void *send[MAX_GPUS], *recv[MAX_GPUS];
    cudaEvent_t *events[MAX_GPUS]; /* iters + 1 per GPU */
    void *host;                    /* pinned, max_bytes: inputs out, results back */
    int comms_up;
} sweep_ctx;

static size_t dtype_size(dtype_id d)
{
    return d == DT_FP32 ? 4 : 2;
}

static const char *dtype_name(dtype_id d)
{
    return d == DT_BF16 ? "bf16" : d == DT_FP16 ? "fp16" : "fp32";
}

static ncclDataType_t dtype_nccl(dtype_id d)
{
    return d == DT_BF16 ? ncclBfloat16 : d == DT_FP16 ? ncclFloat16 : ncclFloat32;
}

/* ---------------------------------------------------------------------------------------------
 * Arguments
 * ------------------------------------------------------------------------------------------- */

static dtype_id parse_dtype(const char *v)
{
    if (strcmp(v, "bf16") == 0) return DT_BF16;
    if (strcmp(v, "fp16") == 0) return DT_FP16;
    if (strcmp(v, "fp32") == 0) return DT_FP32;
    cal_fail("--dtype '%s' is not bf16, fp16 or fp32", v);
}

static void parse_args(int argc, char **argv, sweep_args *a)
{
    *a = (sweep_args){.gpus = 0, .min_bytes = 32 * 1024, .max_bytes = 256u * 1024 * 1024,
                      .iters = 20, .warmup = 5, .dtype = DT_BF16, .timeout_s = 120};
    enum { F_HELP, F_GPUS, F_MIN, F_MAX, F_ITERS, F_WARMUP, F_DTYPE, F_TIMEOUT, F_OUT };
    static const cli_flag flags[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"gpus", 0, 1, "K", "GPUs of this node to reduce over (default: every visible one)"},
        {"min", 0, 1, "SIZE", "smallest message (default 32K)"},
        {"max", 0, 1, "SIZE", "largest message (default 256M)"},
        {"iters", 0, 1, "N", "timed all-reduces per size (default 20)"},
        {"warmup", 0, 1, "N", "untimed all-reduces first (default 5)"},
        {"dtype", 0, 1, "bf16|fp16|fp32", "element type (default bf16)"},
        {"timeout", 0, 1, "SECONDS", "give up after this long (default 120)"},
        {"output", 'o', 1, "FILE|-", "the CSV (default: stdout)"},
        CLI_END};
    cli_args ca;
    tp_err err;
    const char *v;
    int f;
    if (cli_begin(&ca, NULL, "tpsim-nccl-sweep --help", flags, argc, argv, &err))
        cal_fail("%s", err.msg);
    while ((f = cal_next_flag(&ca, USAGE, HELP_TEXT, &v)) != CLI_DONE) {
        switch (f) {
        case F_GPUS: a->gpus = (int)cal_parse_long("--gpus", v, 2, MAX_GPUS); break;
        case F_MIN: a->min_bytes = cal_parse_size("--min", v); break;
        case F_MAX: a->max_bytes = cal_parse_size("--max", v); break;
        case F_ITERS: a->iters = (int)cal_parse_long("--iters", v, 1, MAX_ITERS); break;
        case F_WARMUP: a->warmup = (int)cal_parse_long("--warmup", v, 0, MAX_ITERS); break;
        case F_DTYPE: a->dtype = parse_dtype(v); break;
        case F_TIMEOUT: a->timeout_s = cal_parse_double("--timeout", v, 1, 86400); break;
        case F_OUT:
            if (!*v) cal_fail("%s needs a file name", ca.shown);
            a->out = cli_is_stdout(v) ? NULL : v;
            break;
        default: break;
        }
    }
    size_t es = dtype_size(a->dtype);
    if (a->min_bytes > a->max_bytes) cal_fail("--min is above --max");
    if (a->min_bytes % es)
        cal_fail("--min %zu is not a whole number of %s elements (%zu bytes)", a->min_bytes,
                 dtype_name(a->dtype), es);
    if (a->max_bytes > ((size_t)16 << 30)) cal_fail("--max above 16G is not supported");
}

/* ---------------------------------------------------------------------------------------------
 * Failure paths that must not leave NCCL hanging
 * ------------------------------------------------------------------------------------------- */

static void abort_comms(sweep_ctx *c)
{
    if (!c->comms_up) return;
    for (int g = 0; g < c->k; g++) ncclCommAbort(c->comm[g]);
    c->comms_up = 0;
}

static void nccl_fail(sweep_ctx *c, ncclResult_t r, const char *what)
{
    const char *last = c->comms_up ? ncclGetLastError(c->comm[0]) : "";
    abort_comms(c);
    cal_fail("%s: NCCL error: %s%s%s", what, ncclGetErrorString(r), last && *last ? ": " : "",
             last ? last : "");
}

static void check_nccl(sweep_ctx *c, ncclResult_t r, const char *what)
{
    if (r != ncclSuccess) nccl_fail(c, r, what);
}

static void check_cuda(sweep_ctx *c, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return;
    abort_comms(c);
    cal_fail("%s: %s", what, cudaGetErrorString(e));
}

/* Poll the given GPUs' events, and their communicators' async errors, until all are done or
 * the deadline passes; then abort the communicators so no NCCL kernel is left spinning. */
static void wait_gpus(sweep_ctx *c, int first, int last, int event_index, double timeout_s,
                      const char *what)
{
    double deadline = cal_now() + timeout_s;
    int done[MAX_GPUS] = {0}, left = last - first + 1;
    while (left > 0) {
        for (int g = first; g <= last; g++) {
            if (done[g]) continue;
            ncclResult_t async;
            check_nccl(c, ncclCommGetAsyncError(c->comm[g], &async), what);
            check_nccl(c, async, what);
            cudaError_t e = cudaEventQuery(c->events[g][event_index]);
            if (e == cudaSuccess) {
                done[g] = 1;
                left--;
            } else if (e != cudaErrorNotReady) {
                check_cuda(c, e, what);
            }
        }
        if (left > 0 && cal_now() > deadline) {
            abort_comms(c);
            cal_fail("%s: timed out after %.0f s (%d of %d GPUs unfinished)", what, timeout_s,
                     left, last - first + 1);
        }
    }
}

static void wait_all(sweep_ctx *c, int event_index, double timeout_s, const char *what)
{
    wait_gpus(c, 0, c->k - 1, event_index, timeout_s, what);
}

/* ---------------------------------------------------------------------------------------------
 * Inputs and the check
 * ------------------------------------------------------------------------------------------- */

/* Input element i of rank r: a small whole number, so every partial sum is exact. */
static unsigned input_value(size_t i, int r)
{
    return (unsigned)((i + 3u * (unsigned)r) % 5u);
}

static uint16_t bf16_of_small(unsigned v)
{
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (uint16_t)(bits >> 16); /* exact: a small integer has no low mantissa bits */
}

static uint16_t fp16_of_small(unsigned v)
{
    if (v == 0) return 0;
    int e = 0;
    while ((v >> (e + 1)) != 0) e++;
    uint16_t mant = (uint16_t)((v << (10 - e)) & 0x3ffu);
    return (uint16_t)(((unsigned)(e + 15) << 10) | mant);
}

static void encode(dtype_id d, void *buf, size_t i, unsigned v)
{
    if (d == DT_FP32) ((float *)buf)[i] = (float)v;
    else if (d == DT_BF16) ((uint16_t *)buf)[i] = bf16_of_small(v);
    else ((uint16_t *)buf)[i] = fp16_of_small(v);
}

static int element_equals(dtype_id d, const void *buf, size_t i, unsigned v)
{
    if (d == DT_FP32) return ((const float *)buf)[i] == (float)v;
    uint16_t want = d == DT_BF16 ? bf16_of_small(v) : fp16_of_small(v);
    return ((const uint16_t *)buf)[i] == want;
}

static void fill_inputs(sweep_ctx *c, const sweep_args *a)
{
    size_t count = a->max_bytes / dtype_size(a->dtype);
    for (int g = 0; g < c->k; g++) {
        for (size_t i = 0; i < count; i++) encode(a->dtype, c->host, i, input_value(i, g));
        check_cuda(c, cudaSetDevice(g), "cudaSetDevice");
        check_cuda(c, cudaMemcpyAsync(c->send[g], c->host, count * dtype_size(a->dtype),
                                      cudaMemcpyHostToDevice, c->stream[g]),
                   "copying inputs to the GPU");
        check_cuda(c, cudaEventRecord(c->events[g][0], c->stream[g]), "cudaEventRecord");
        wait_gpus(c, g, g, 0, a->timeout_s, "copying inputs to the GPU");
    }
}

static void check_result(sweep_ctx *c, const sweep_args *a, size_t count)
{
    for (int g = 0; g < c->k; g++) {
        check_cuda(c, cudaSetDevice(g), "cudaSetDevice");
        check_cuda(c, cudaMemcpyAsync(c->host, c->recv[g], count * dtype_size(a->dtype),
                                      cudaMemcpyDeviceToHost, c->stream[g]),
                   "copying the result back");
        check_cuda(c, cudaEventRecord(c->events[g][0], c->stream[g]), "cudaEventRecord");
        wait_gpus(c, g, g, 0, a->timeout_s, "copying the result back");
        for (size_t i = 0; i < count; i++) {
            unsigned want = 0;
            for (int r = 0; r < c->k; r++) want += input_value(i, r);
            if (!element_equals(a->dtype, c->host, i, want)) {
                abort_comms(c);
                cal_fail("wrong all-reduce result at %zu bytes: GPU %d element %zu is not %u",
                         count * dtype_size(a->dtype), g, i, want);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * The sweep
 * ------------------------------------------------------------------------------------------- */

static void setup(sweep_ctx *c, const sweep_args *a)
{
    int devs[MAX_GPUS];
    for (int g = 0; g < c->k; g++) {
        devs[g] = g;
        check_cuda(c, cudaSetDevice(g), "cudaSetDevice");
        check_cuda(c, cudaStreamCreateWithFlags(&c->stream[g], cudaStreamNonBlocking),
                   "cudaStreamCreate");
        check_cuda(c, cudaMalloc(&c->send[g], a->max_bytes), "cudaMalloc (send buffer)");
        check_cuda(c, cudaMalloc(&c->recv[g], a->max_bytes), "cudaMalloc (receive buffer)");
        c->events[g] = calloc((size_t)a->iters + 1, sizeof(cudaEvent_t));
        if (!c->events[g]) cal_fail("out of memory");
        for (int i = 0; i <= a->iters; i++)
            check_cuda(c, cudaEventCreate(&c->events[g][i]), "cudaEventCreate");
    }
    check_cuda(c, cudaMallocHost(&c->host, a->max_bytes), "cudaMallocHost");
    check_nccl(c, ncclCommInitAll(c->comm, c->k, devs), "ncclCommInitAll");
    c->comms_up = 1;
}

static void enqueue_all_reduce(sweep_ctx *c, const sweep_args *a, size_t count)
{
    check_nccl(c, ncclGroupStart(), "ncclGroupStart");
    for (int g = 0; g < c->k; g++)
        check_nccl(c, ncclAllReduce(c->send[g], c->recv[g], count, dtype_nccl(a->dtype), ncclSum,
                                    c->comm[g], c->stream[g]),
                   "ncclAllReduce");
    check_nccl(c, ncclGroupEnd(), "ncclGroupEnd");
}

static void record_all(sweep_ctx *c, int index)
{
    for (int g = 0; g < c->k; g++)
        check_cuda(c, cudaEventRecord(c->events[g][index], c->stream[g]), "cudaEventRecord");
}

/* Times one size; returns mean and min over the timed calls, in us. */
static void time_size(sweep_ctx *c, const sweep_args *a, size_t bytes, double *mean_us,
                      double *min_us)
{
    size_t count = bytes / dtype_size(a->dtype);
    for (int g = 0; g < c->k; g++) {
        check_cuda(c, cudaSetDevice(g), "cudaSetDevice");
        /* a stale result from an earlier size must not pass the check */
        check_cuda(c, cudaMemsetAsync(c->recv[g], 0xff, bytes, c->stream[g]), "cudaMemsetAsync");
    }
    for (int w = 0; w < a->warmup; w++) enqueue_all_reduce(c, a, count);
    record_all(c, 0);
    for (int it = 0; it < a->iters; it++) {
        enqueue_all_reduce(c, a, count);
        record_all(c, it + 1);
    }
    wait_all(c, a->iters, a->timeout_s, "all-reduce");
    double sum = 0, best = 1e300;
    for (int it = 0; it < a->iters; it++) {
        double slowest = 0;
        for (int g = 0; g < c->k; g++) {
            float ms = 0;
            check_cuda(c, cudaEventElapsedTime(&ms, c->events[g][it], c->events[g][it + 1]),
                       "cudaEventElapsedTime");
            if (ms * 1e3 > slowest) slowest = ms * 1e3;
        }
        sum += slowest;
        if (slowest < best) best = slowest;
    }
    *mean_us = sum / a->iters;
    *min_us = best;
    check_result(c, a, count);
}

static void write_header(cal_text *t, const sweep_ctx *c, const sweep_args *a)
{
    struct cudaDeviceProp prop;
    cal_check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int nccl_v = 0, drv = 0, rt = 0;
    ncclGetVersion(&nccl_v);
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char gpu[256], host[256], date[64], dv[32], rv[32];
    cal_plain(gpu, sizeof gpu, prop.name);
    cal_host(host, sizeof host);
    cal_date(date, sizeof date);
    cal_cuda_version_string(drv, dv, sizeof dv);
    cal_cuda_version_string(rt, rv, sizeof rv);
    cal_printf(t, "# tool: tpsim-nccl-sweep (calibrate/nccl_sweep.c)\n");
    cal_printf(t, "# gpu: %s\n# gpus: %d\n", gpu, c->k);
    cal_printf(t, "# nccl: %d.%d.%d\n", nccl_v / 10000, (nccl_v % 10000) / 100, nccl_v % 100);
    cal_printf(t, "# cuda_driver: %s\n# cuda_runtime: %s\n", dv, rv);
    cal_printf(t, "# host: %s\n# date: %s\n", host, date);
    const char *env[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_P2P_LEVEL"};
    for (size_t i = 0; i < sizeof env / sizeof *env; i++) {
        const char *v = getenv(env[i]);
        char val[128];
        if (!v) continue;
        cal_plain(val, sizeof val, v);
        char key[32];
        size_t j = 0;
        for (; env[i][j] && j + 1 < sizeof key; j++)
            key[j] = (char)(env[i][j] >= 'A' && env[i][j] <= 'Z' ? env[i][j] + 32 : env[i][j]);
        key[j] = '\0';
        cal_printf(t, "# %s: %s\n", key, val);
    }
    cal_printf(t, "# tp: %d\n# dtype: %s\n# op: sum, out-of-place\n", c->k, dtype_name(a->dtype));
    cal_printf(t, "# iters: %d\n# warmup: %d\n", a->iters, a->warmup);
    cal_printf(t, "# time: per call, the slowest GPU's gap between CUDA events around it\n");
    cal_printf(t, "bytes,count,time_us_mean,time_us_min,algbw_gbps,busbw_gbps\n");
}

int main(int argc, char **argv)
{
    cal_set_tool("tpsim-nccl-sweep");
    sweep_args a;
    parse_args(argc, argv, &a);
    int n = cal_device_count();
    int k = a.gpus ? a.gpus : n;
    if (k < 2) cal_fail("only %d CUDA device: an all-reduce sweep needs at least 2", n);
    if (k > n) cal_fail("only %d CUDA devices, --gpus %d asked for", n, k);

    sweep_ctx c = {.k = k};
    setup(&c, &a);
    fill_inputs(&c, &a);
    cal_text out = {0};
    write_header(&out, &c, &a);
    double bus = 2.0 * (k - 1) / k;
    for (size_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 2) {
        double mean, min;
        time_size(&c, &a, bytes, &mean, &min);
        double algbw = (double)bytes / (mean * 1e3);
        cal_printf(&out, "%zu,%zu,%.3f,%.3f,%.3f,%.3f\n", bytes, bytes / dtype_size(a.dtype), mean,
                   min, algbw, algbw * bus);
    }
    for (int g = 0; g < k; g++) ncclCommDestroy(c.comm[g]);
    c.comms_up = 0;
    cal_write_output(&out, a.out);
    cal_text_free(&out);
    return 0;
}
