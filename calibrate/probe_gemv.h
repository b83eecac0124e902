/* probe_gemv.h: bf16 GEMV / skinny-GEMM bandwidth through cuBLAS, as vLLM's linear layers
 * run it (torch.nn.functional.linear -> cublasGemmEx, y[B,out] = x[B,in] W[out,in]^T, bf16
 * in and out, fp32 accumulation), on Llama-3.1-70B's per-rank weight shapes.
 *
 * Contract: probe_gemv_shapes gives the five linear layers of one rank at TP degree tp
 * (qkv_proj, o_proj, gate_up_proj, down_proj, lm_head; hidden 8192, 64 query and 8 KV heads
 * of 128, intermediate 28672, vocab 128256: models/llama-3.1-70b.yaml). probe_gemv_measure
 * times one layer at one batch: the weights are cycled through enough copies to exceed the
 * L2 cache, so every call streams its weights from HBM; it returns the mean time per call
 * and the bytes one call must move (weights + activations in + out). Failures end the tool
 * through cal_fail; waits are polled against timeout_s.
 */
#ifndef TPSIM_PROBE_GEMV_H
#define TPSIM_PROBE_GEMV_H

#include <stddef.h>

#include <cuda_runtime.h>

#define PROBE_GEMV_LAYERS 5

typedef struct probe_gemv_shape {
    const char *layer;
    long in, out;
} probe_gemv_shape;

typedef struct probe_gemv {
    void *handle;   /* cublasHandle_t */
    cudaStream_t s;
    cudaEvent_t e0, e1;
    double timeout_s;
} probe_gemv;

void probe_gemv_shapes(int tp, probe_gemv_shape out[PROBE_GEMV_LAYERS]);
void probe_gemv_init(probe_gemv *g, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                     double timeout_s);
/* Mean microseconds per call over batches; *bytes per call. */
double probe_gemv_measure(probe_gemv *g, const probe_gemv_shape *shape, const int *batches,
                          int n_batches, double *us, double *bytes);
void probe_gemv_free(probe_gemv *g);

#endif
