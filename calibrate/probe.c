/* probe.c: build/tpsim-probe, the host and GPU constants of one GPU, as a models/hw/ file.
 *
 * Measures, on --device (default 0):
 *   launch_host_us      host time of one cudaLaunchKernel of an empty kernel (median of runs)
 *   kernel_period_us    GPU time per empty kernel run back to back (queued behind a spin
 *                       kernel so the host's launch rate does not pace them)
 *   graph_launch_host_us[_1000]  host time of one cudaGraphLaunch, graphs of 100 / 1000 nodes
 *   graph_node_us_100/_1000      GPU replay time per node of those graphs
 *   hbm_read_gbps       a streaming read kernel over --bytes (>= 1 GiB), best of runs
 *   sync_roundtrip_us   launch an empty kernel and cudaStreamSynchronize, host time
 *   sync_idle_us        cudaStreamSynchronize on an idle stream
 *   gemv_tpK_LAYER_bB_gbps  bf16 GEMV / skinny-GEMM bandwidth through cuBLAS (probe_gemv.h) for
 *                       Llama-3.1-70B's per-rank linear layers at TP K = 1, 2, 4, 8 and batch
 *                       B = 1, 2, 4, 8, 16 (weights + activations moved / time per call)
 *   gemv_tpK_bB_efficiency  all five layers of one rank together: bytes / time / hbm_gbps
 * and writes kind: hardware YAML (stdout or -o FILE). Datasheet figures (hbm_gbps, bf16_tflops,
 * pcie_gbps, hbm_gb) come from a table for H100 SXM and H200
 * (docs/sources.md#gpu-datasheets) or from flags. kernel_fixed_us = kernel_period_us;
 * launch_latency_us = sync_roundtrip_us - launch_host_us - kernel_period_us (enqueue to completion
 * seen by the host, less the parts measured separately: an upper bound on enqueue-to-start). Every
 * wait is polled against --timeout, except the measured cudaStreamSynchronize calls, and those run
 * only on empty kernels after a polled wait has shown the GPU responsive.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "cal_common.h"
#include "cli.h"
#include "probe_gemv.h"
#include "probe_kernels.h"

#define RUNS 7                   /* repeats of each measurement; the median is kept */
#define LAUNCHES 2000            /* host launch cost: launches per run */
#define PERIOD_KERNELS 500       /* GPU period: kernels queued behind the spin */
#define SPIN_NS 20000000ull      /* 20 ms: longer than enqueueing PERIOD_KERNELS takes */
#define SYNC_ROUNDS 200
#define MIN_READ_BYTES ((size_t)1 << 30)

static const char USAGE[] = "usage: tpsim-probe [flags]\n";
static const char HELP_TEXT[] =
    "Measures kernel-launch, CUDA-graph, synchronisation and HBM-read costs of one GPU, and\n"
    "cuBLAS bf16 GEMV bandwidth on Llama-3.1-70B's per-rank shapes (TP 1-8, batch 1-16), and\n"
    "writes a models/hw/ hardware file (see calibrate/README.md).\n";

typedef struct probe_args {
    int device;
    size_t read_bytes;
    double nominal_gbps, bf16_tflops, pcie_gbps; /* 0: from the table */
    const char *name;
    double timeout_s;
    const char *out;
} probe_args;

#define GEMV_TPS 4
#define GEMV_BATCHES 5
static const int gemv_tps[GEMV_TPS] = {1, 2, 4, 8};
static const int gemv_batches[GEMV_BATCHES] = {1, 2, 4, 8, 16};

typedef struct probe_result {
    double launch_host_us, kernel_period_us;
    double gemv_us[GEMV_TPS][PROBE_GEMV_LAYERS][GEMV_BATCHES];
    double gemv_bytes[GEMV_TPS][PROBE_GEMV_LAYERS][GEMV_BATCHES];
    double graph_host_us[2], graph_node_us[2]; /* 100 and 1000 nodes */
    double hbm_read_gbps;
    double sync_roundtrip_us, sync_idle_us;
} probe_result;

/* Datasheet figures, docs/sources.md#gpu-datasheets (NVIDIA H100 / H200 datasheets, SXM
 * columns). */
typedef struct gpu_spec {
    const char *label;
    double hbm_gb, hbm_gbps, bf16_tflops, pcie_gbps;
} gpu_spec;

static const gpu_spec *lookup_spec(const char *name)
{
    static const gpu_spec h200 = {"H200 SXM", 141, 4800, 989, 64};
    static const gpu_spec h100 = {"H100 SXM", 80, 3350, 989, 64};
    if (strstr(name, "H200")) return &h200;
    /* "NVIDIA H100 80GB HBM3" is the SXM part; PCIe and NVL parts differ and are not listed */
    if (strstr(name, "H100") && (strstr(name, "HBM3") || strstr(name, "SXM"))) return &h100;
    return NULL;
}

static void parse_args(int argc, char **argv, probe_args *a)
{
    *a = (probe_args){.read_bytes = (size_t)2 << 30, .timeout_s = 60};
    enum { F_HELP, F_DEVICE, F_BYTES, F_NOMINAL, F_TFLOPS, F_PCIE, F_NAME, F_TIMEOUT, F_OUT };
    static const cli_flag flags[] = {
        {"help", 'h', 0, NULL, "this help"},
        {"device", 0, 1, "N", "the CUDA device to measure (default 0)"},
        {"bytes", 0, 1, "SIZE", "bytes read by the HBM probe (default 2G)"},
        {"nominal-gbps", 0, 1, "X", "the HBM's nominal bandwidth (default: from the table)"},
        {"bf16-tflops", 0, 1, "X", "the dense bf16 peak (default: from the table)"},
        {"pcie-gbps", 0, 1, "X", "the host link's bandwidth (default: from the table)"},
        {"name", 0, 1, "NAME", "the name: the hardware file states"},
        {"timeout", 0, 1, "SECONDS", "give up after this long (default 60)"},
        {"output", 'o', 1, "FILE|-", "the hardware file (default: stdout)"},
        CLI_END};
    cli_args ca;
    tp_err err;
    const char *v;
    int f;
    if (cli_begin(&ca, NULL, "tpsim-probe --help", flags, argc, argv, &err))
        cal_fail("%s", err.msg);
    while ((f = cal_next_flag(&ca, USAGE, HELP_TEXT, &v)) != CLI_DONE) {
        switch (f) {
        case F_DEVICE: a->device = (int)cal_parse_long("--device", v, 0, 1023); break;
        case F_BYTES: a->read_bytes = cal_parse_size("--bytes", v); break;
        case F_NOMINAL: a->nominal_gbps = cal_parse_double("--nominal-gbps", v, 1, 1e6); break;
        case F_TFLOPS: a->bf16_tflops = cal_parse_double("--bf16-tflops", v, 1, 1e6); break;
        case F_PCIE: a->pcie_gbps = cal_parse_double("--pcie-gbps", v, 1, 1e4); break;
        case F_NAME:
            if (!*v) cal_fail("--name needs a value");
            a->name = v;
            break;
        case F_TIMEOUT: a->timeout_s = cal_parse_double("--timeout", v, 1, 86400); break;
        case F_OUT:
            if (!*v) cal_fail("%s needs a file name", ca.shown);
            a->out = cli_is_stdout(v) ? NULL : v;
            break;
        default: break;
        }
    }
    if (a->read_bytes < MIN_READ_BYTES) cal_fail("--bytes must be at least 1G (HBM, not cache)");
    if (a->read_bytes % 16) cal_fail("--bytes must be a multiple of 16");
}

/* ---------------------------------------------------------------------------------------------
 * Measurements
 * ------------------------------------------------------------------------------------------- */

static void launch_empty(cudaStream_t s)
{
    cal_check_cuda(cudaLaunchKernel(probe_empty_kernel(), (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL,
                                    0, s),
                   "cudaLaunchKernel");
}

static float elapsed_us(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cal_check_cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return ms * 1e3f;
}

static double measure_launch_host(cudaStream_t s, double timeout_s)
{
    double runs[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = cal_now();
        for (int i = 0; i < LAUNCHES; i++) launch_empty(s);
        runs[r] = (cal_now() - t0) * 1e6 / LAUNCHES;
        cal_wait_stream(s, timeout_s, "empty kernels");
    }
    return cal_median(runs, RUNS);
}

static double measure_kernel_period(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                                    double timeout_s)
{
    double runs[RUNS];
    for (int r = 0; r < RUNS; r++) {
        cal_check_cuda(probe_launch_spin(s, SPIN_NS), "spin kernel");
        cal_check_cuda(cudaEventRecord(e0, s), "cudaEventRecord");
        for (int i = 0; i < PERIOD_KERNELS; i++) launch_empty(s);
        cal_check_cuda(cudaEventRecord(e1, s), "cudaEventRecord");
        cal_wait_event(e1, timeout_s, "back-to-back empty kernels");
        runs[r] = elapsed_us(e0, e1) / PERIOD_KERNELS;
    }
    return cal_median(runs, RUNS);
}

static cudaGraphExec_t capture_graph(cudaStream_t s, int nodes)
{
    cudaGraph_t g;
    cudaGraphExec_t exec;
    cal_check_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "graph capture");
    for (int i = 0; i < nodes; i++) launch_empty(s);
    cal_check_cuda(cudaStreamEndCapture(s, &g), "graph capture");
    cal_check_cuda(cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate");
    cal_check_cuda(cudaGraphDestroy(g), "cudaGraphDestroy");
    cal_check_cuda(cudaGraphUpload(exec, s), "cudaGraphUpload");
    return exec;
}

/* Host cost of cudaGraphLaunch on an idle stream, and GPU time per node of one replay (the
 * replay queued behind a spin, so it is not paced by the launch). */
static void measure_graph(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int nodes,
                          double timeout_s, double *host_us, double *node_us)
{
    cudaGraphExec_t exec = capture_graph(s, nodes);
    cal_check_cuda(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); /* first replay: warm-up */
    cal_wait_stream(s, timeout_s, "graph replay");
    double host[RUNS], node[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = cal_now();
        cal_check_cuda(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
        host[r] = (cal_now() - t0) * 1e6;
        cal_wait_stream(s, timeout_s, "graph replay");
        cal_check_cuda(probe_launch_spin(s, SPIN_NS / 10), "spin kernel");
        cal_check_cuda(cudaEventRecord(e0, s), "cudaEventRecord");
        cal_check_cuda(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
        cal_check_cuda(cudaEventRecord(e1, s), "cudaEventRecord");
        cal_wait_event(e1, timeout_s, "graph replay");
        node[r] = elapsed_us(e0, e1) / nodes;
    }
    cal_check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    *host_us = cal_median(host, RUNS);
    *node_us = cal_median(node, RUNS);
}

static double measure_hbm_read(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, size_t bytes,
                               int sms, double timeout_s)
{
    void *buf;
    unsigned *sink;
    cal_check_cuda(cudaMalloc(&buf, bytes), "cudaMalloc (read buffer)");
    cal_check_cuda(cudaMalloc((void **)&sink, sizeof *sink), "cudaMalloc");
    cal_check_cuda(cudaMemsetAsync(buf, 0x5a, bytes, s), "cudaMemsetAsync");
    const int threads = 512, blocks = sms * 4; /* enough warps per SM to cover HBM latency */
    double best = 0;
    for (int r = 0; r <= RUNS; r++) {
        cal_check_cuda(cudaEventRecord(e0, s), "cudaEventRecord");
        cal_check_cuda(probe_launch_read(s, buf, bytes, sink, blocks, threads), "read kernel");
        cal_check_cuda(cudaEventRecord(e1, s), "cudaEventRecord");
        cal_wait_event(e1, timeout_s, "HBM read kernel");
        double gbps = (double)bytes / (elapsed_us(e0, e1) * 1e3);
        if (r > 0 && gbps > best) best = gbps; /* run 0 warms up */
    }
    cal_check_cuda(cudaFree(buf), "cudaFree");
    cal_check_cuda(cudaFree(sink), "cudaFree");
    return best;
}

/* The synchronize calls are the thing measured here, so they cannot be polled; they only ever
 * wait for an empty kernel, right after a polled wait showed the GPU answering. */
static void measure_sync(cudaStream_t s, double timeout_s, double *roundtrip_us, double *idle_us)
{
    double rt[SYNC_ROUNDS], idle[SYNC_ROUNDS];
    launch_empty(s);
    cal_wait_stream(s, timeout_s, "empty kernel");
    for (int i = 0; i < SYNC_ROUNDS; i++) {
        double t0 = cal_now();
        launch_empty(s);
        cal_check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        double t1 = cal_now();
        cal_check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
        double t2 = cal_now();
        rt[i] = (t1 - t0) * 1e6;
        idle[i] = (t2 - t1) * 1e6;
    }
    *roundtrip_us = cal_median(rt, SYNC_ROUNDS);
    *idle_us = cal_median(idle, SYNC_ROUNDS);
}

static void measure_all(const probe_args *a, int sms, probe_result *r)
{
    cudaStream_t s;
    cudaEvent_t e0, e1;
    cal_check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    cal_check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
    cal_check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
    for (int i = 0; i < 100; i++) launch_empty(s); /* load the module, warm the queues */
    cal_wait_stream(s, a->timeout_s, "warm-up kernels");
    r->launch_host_us = measure_launch_host(s, a->timeout_s);
    r->kernel_period_us = measure_kernel_period(s, e0, e1, a->timeout_s);
    measure_graph(s, e0, e1, 100, a->timeout_s, &r->graph_host_us[0], &r->graph_node_us[0]);
    measure_graph(s, e0, e1, 1000, a->timeout_s, &r->graph_host_us[1], &r->graph_node_us[1]);
    r->hbm_read_gbps = measure_hbm_read(s, e0, e1, a->read_bytes, sms, a->timeout_s);
    measure_sync(s, a->timeout_s, &r->sync_roundtrip_us, &r->sync_idle_us);
    probe_gemv g;
    probe_gemv_init(&g, s, e0, e1, a->timeout_s);
    for (int t = 0; t < GEMV_TPS; t++) {
        probe_gemv_shape shapes[PROBE_GEMV_LAYERS];
        probe_gemv_shapes(gemv_tps[t], shapes);
        for (int l = 0; l < PROBE_GEMV_LAYERS; l++)
            probe_gemv_measure(&g, &shapes[l], gemv_batches, GEMV_BATCHES, r->gemv_us[t][l],
                               r->gemv_bytes[t][l]);
    }
    probe_gemv_free(&g);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(s);
}

/* ---------------------------------------------------------------------------------------------
 * The hardware file
 * ------------------------------------------------------------------------------------------- */

static void write_yaml(cal_text *t, const probe_args *a, const struct cudaDeviceProp *prop,
                       const gpu_spec *spec, const probe_result *r)
{
    char gpu[256], name[256], host[256], date[64], dv[32], rv[32];
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cal_cuda_version_string(drv, dv, sizeof dv);
    cal_cuda_version_string(rt, rv, sizeof rv);
    cal_plain(gpu, sizeof gpu, prop->name);
    cal_plain(name, sizeof name, a->name ? a->name : spec ? spec->label : gpu);
    cal_host(host, sizeof host);
    cal_date(date, sizeof date);
    double hbm_gbps = a->nominal_gbps ? a->nominal_gbps : spec->hbm_gbps;
    double hbm_gb = spec ? spec->hbm_gb : (double)prop->totalGlobalMem / 1e9;
    double eff = r->hbm_read_gbps / hbm_gbps;
    double latency = r->sync_roundtrip_us - r->launch_host_us - r->kernel_period_us;

    cal_printf(t, "# %s, measured by build/tpsim-probe on %s, %s (calibrate/README.md).\n", gpu,
               host, date);
    cal_printf(t, "kind: hardware\nname: %s\n", name);
    cal_printf(t, "sms: %d\n", prop->multiProcessorCount);
    cal_printf(t, "hbm_gb: %.0f\n", hbm_gb);
    cal_printf(t, "hbm_gbps: %.0f\n", hbm_gbps);
    cal_printf(t, "bf16_tflops: %.0f\n", a->bf16_tflops ? a->bf16_tflops : spec->bf16_tflops);
    cal_printf(t, "pcie_gbps: %.0f\n", a->pcie_gbps ? a->pcie_gbps : spec->pcie_gbps);
    cal_printf(t, "kernel_fixed_us: %.3f      # = measured.kernel_period_us\n",
               r->kernel_period_us);
    cal_printf(t, "launch_latency_us: %.3f    # sync_roundtrip - launch_host - kernel_period\n",
               latency > 0 ? latency : 0.0);
    eff = eff > 1 ? 1.0 : eff < 0.001 ? 0.001 : eff; /* the schema's range, (0, 1] */
    cal_printf(t, "hbm_efficiency: %.3f       # hbm_read_gbps / hbm_gbps\n", eff);
    cal_printf(t, "measured:\n");
    cal_printf(t, "  launch_host_us: %.3f\n", r->launch_host_us);
    cal_printf(t, "  kernel_period_us: %.3f\n", r->kernel_period_us);
    cal_printf(t, "  graph_launch_host_us: %.3f\n", r->graph_host_us[0]);
    cal_printf(t, "  graph_launch_host_us_1000: %.3f\n", r->graph_host_us[1]);
    cal_printf(t, "  graph_node_us_100: %.4f\n", r->graph_node_us[0]);
    cal_printf(t, "  graph_node_us_1000: %.4f\n", r->graph_node_us[1]);
    cal_printf(t, "  hbm_read_gbps: %.1f\n", r->hbm_read_gbps);
    cal_printf(t, "  hbm_read_bytes: %zu\n", a->read_bytes);
    cal_printf(t, "  sync_roundtrip_us: %.3f\n", r->sync_roundtrip_us);
    cal_printf(t, "  sync_idle_us: %.3f\n", r->sync_idle_us);
    for (int k = 0; k < GEMV_TPS; k++) {
        probe_gemv_shape shapes[PROBE_GEMV_LAYERS];
        probe_gemv_shapes(gemv_tps[k], shapes);
        for (int b = 0; b < GEMV_BATCHES; b++) {
            double bytes = 0, us = 0;
            for (int l = 0; l < PROBE_GEMV_LAYERS; l++) {
                double gbps = r->gemv_bytes[k][l][b] / (r->gemv_us[k][l][b] * 1e3);
                cal_printf(t, "  gemv_tp%d_%s_b%d_gbps: %.1f\n", gemv_tps[k], shapes[l].layer,
                           gemv_batches[b], gbps);
                bytes += r->gemv_bytes[k][l][b];
                us += r->gemv_us[k][l][b];
            }
            cal_printf(t, "  gemv_tp%d_b%d_efficiency: %.4f\n", gemv_tps[k], gemv_batches[b],
                       bytes / (us * 1e3) / hbm_gbps);
        }
    }
    cal_printf(t, "source:\n");
    cal_printf(t,
               "  how: build/tpsim-probe (calibrate/probe.c, probe_gemv.c); medians of %d runs "
               "(HBM read: the "
               "best; GEMV: cublasGemmEx bf16 TN, mean of 20 calls cycling weight copies past L2); "
               "datasheet figures from %s\n",
               RUNS,
               spec && !a->nominal_gbps ? "docs/sources.md#gpu-datasheets" : "the command line");
    cal_printf(t, "  where: %s\n", host);
    cal_printf(t, "  date: %s\n", date);
    cal_printf(t, "  gpu: %s\n", gpu);
    cal_printf(t, "  device: %d\n", a->device);
    cal_printf(t, "  driver: CUDA %s\n  runtime: CUDA %s\n", dv, rv);
}

int main(int argc, char **argv)
{
    cal_set_tool("tpsim-probe");
    probe_args a;
    parse_args(argc, argv, &a);
    int n = cal_device_count();
    if (a.device >= n) cal_fail("--device %d: only %d CUDA device(s)", a.device, n);
    cal_check_cuda(cudaSetDevice(a.device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    cal_check_cuda(cudaGetDeviceProperties(&prop, a.device), "cudaGetDeviceProperties");
    const gpu_spec *spec = lookup_spec(prop.name);
    if (!spec && (!a.nominal_gbps || !a.bf16_tflops || !a.pcie_gbps))
        cal_fail("no datasheet figures for '%s': pass --nominal-gbps, --bf16-tflops and "
                 "--pcie-gbps",
                 prop.name);
    if (prop.totalGlobalMem < a.read_bytes + ((size_t)256 << 20))
        cal_fail("--bytes %zu does not fit in the GPU's %zu bytes", a.read_bytes,
                 (size_t)prop.totalGlobalMem);
    probe_result r;
    measure_all(&a, prop.multiProcessorCount, &r);
    cal_text out = {0};
    write_yaml(&out, &a, &prop, spec, &r);
    cal_write_output(&out, a.out);
    cal_text_free(&out);
    return 0;
}
