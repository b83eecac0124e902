/* probe_gemv.c: see probe_gemv.h. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "probe_gemv.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <cublas_v2.h>

#include "cal_common.h"

#define GEMV_CALLS 20                        /* timed calls per (shape, batch) */
#define GEMV_WARM 3
#define GEMV_MIN_STREAM                                                                            \
    ((size_t)512 << 20) /* weights cycled per timing: > any L2 (50 MB on H100/H200) */
#define GEMV_MAX_COPIES 16

/* Llama-3.1-70B (models/llama-3.1-70b.yaml): the per-rank shapes of its linear layers. */
void probe_gemv_shapes(int tp, probe_gemv_shape out[PROBE_GEMV_LAYERS])
{
    const long hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128, inter = 28672,
               vocab = 128256;
    long q = heads / tp, kv = kv_heads / tp > 0 ? kv_heads / tp : 1; /* KV heads replicate past 8 */
    out[0] = (probe_gemv_shape){"qkv_proj", hidden, (q + 2 * kv) * head_dim};
    out[1] = (probe_gemv_shape){"o_proj", q * head_dim, hidden};
    out[2] = (probe_gemv_shape){"gate_up_proj", hidden, 2 * inter / tp};
    out[3] = (probe_gemv_shape){"down_proj", inter / tp, hidden};
    out[4] = (probe_gemv_shape){"lm_head", hidden, vocab / tp};
}

static void gemv_check(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) cal_fail("%s: cuBLAS status %d", what, (int)st);
}

/* cuBLAS is opened when the first GEMV is set up, not linked: cuBLAS and cuBLASLt are about
 * 500 MB, and loading them cost every start of the tool 0.45 s of CPU, --help and a refused
 * flag included. CAL_CUBLAS_DIR and CAL_CUBLAS_SONAME are the library the build found
 * (calibrate.mk), tried by its path first (as the rpath it replaces was), then by its name. */
#ifndef CAL_CUBLAS_SONAME
#error "CAL_CUBLAS_SONAME and CAL_CUBLAS_DIR are set by calibrate/calibrate.mk"
#endif
static struct {
    __typeof__(cublasCreate_v2) *create;
    __typeof__(cublasSetStream_v2) *set_stream;
    __typeof__(cublasDestroy_v2) *destroy;
    __typeof__(cublasGemmEx) *gemm_ex;
} gemv_blas;

static void *gemv_sym(void *so, const char *name)
{
    void *f = dlsym(so, name);
    if (!f) cal_fail("%s: no %s in it (%s)", CAL_CUBLAS_SONAME, name, dlerror());
    return f;
}

static void gemv_open_blas(void)
{
    if (gemv_blas.create) return;
    void *so = dlopen(CAL_CUBLAS_DIR "/" CAL_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!so) so = dlopen(CAL_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!so)
        cal_fail("cannot open cuBLAS (%s, built against %s/%s): %s", CAL_CUBLAS_SONAME,
                 CAL_CUBLAS_DIR, CAL_CUBLAS_SONAME, dlerror());
    /* POSIX: a function pointer from dlsym's void * (dlsym's own contract) */
    *(void **)&gemv_blas.create = gemv_sym(so, "cublasCreate_v2");
    *(void **)&gemv_blas.set_stream = gemv_sym(so, "cublasSetStream_v2");
    *(void **)&gemv_blas.destroy = gemv_sym(so, "cublasDestroy_v2");
    *(void **)&gemv_blas.gemm_ex = gemv_sym(so, "cublasGemmEx");
}

void probe_gemv_init(probe_gemv *g, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1,
                     double timeout_s)
{
    gemv_open_blas();
    cublasHandle_t h;
    gemv_check(gemv_blas.create(&h), "cublasCreate");
    gemv_check(gemv_blas.set_stream(h, s), "cublasSetStream");
    *g = (probe_gemv){h, s, e0, e1, timeout_s};
}

void probe_gemv_free(probe_gemv *g)
{
    if (g->handle) gemv_blas.destroy((cublasHandle_t)g->handle);
    g->handle = NULL;
}

static void gemv_call(probe_gemv *g, const void *w, const void *x, void *y, long in, long out,
                      int batch)
{
    const float alpha = 1.0f, beta = 0.0f;
    /* row-major y[B,out] = x[B,in] W[out,in]^T is, column-major, y' = W'^T x' ("TN"), as
     * PyTorch's addmm/linear calls it */
    gemv_check(gemv_blas.gemm_ex((cublasHandle_t)g->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)out,
                                 batch, (int)in, &alpha, w, CUDA_R_16BF, (int)in, x, CUDA_R_16BF,
                                 (int)in, &beta, y, CUDA_R_16BF, (int)out, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (bf16)");
}

double probe_gemv_measure(probe_gemv *g, const probe_gemv_shape *sh, const int *batches,
                          int n_batches, double *us, double *bytes)
{
    size_t wbytes = (size_t)sh->in * (size_t)sh->out * 2;
    int copies = (int)((GEMV_MIN_STREAM + wbytes - 1) / wbytes);
    if (copies < 2) copies = 2;
    if (copies > GEMV_MAX_COPIES) copies = GEMV_MAX_COPIES;
    int max_b = 1;
    for (int i = 0; i < n_batches; i++)
        if (batches[i] > max_b) max_b = batches[i];
    void *w[GEMV_MAX_COPIES] = {0}, *x, *y;
    for (int c = 0; c < copies; c++) {
        cal_check_cuda(cudaMalloc(&w[c], wbytes), "cudaMalloc (weights)");
        /* 0x3e3e: a bf16 of about 0.19, finite, so no NaN paths */
        cal_check_cuda(cudaMemsetAsync(w[c], 0x3e, wbytes, g->s), "cudaMemsetAsync");
    }
    cal_check_cuda(cudaMalloc(&x, (size_t)max_b * (size_t)sh->in * 2), "cudaMalloc (x)");
    cal_check_cuda(cudaMalloc(&y, (size_t)max_b * (size_t)sh->out * 2), "cudaMalloc (y)");
    cal_check_cuda(cudaMemsetAsync(x, 0x3e, (size_t)max_b * (size_t)sh->in * 2, g->s),
                   "cudaMemsetAsync");
    double sum = 0;
    for (int b = 0; b < n_batches; b++) {
        int batch = batches[b];
        for (int i = 0; i < GEMV_WARM; i++)
            gemv_call(g, w[i % copies], x, y, sh->in, sh->out, batch);
        cal_wait_stream(g->s, g->timeout_s, "cuBLAS warm-up");
        cal_check_cuda(cudaEventRecord(g->e0, g->s), "cudaEventRecord");
        for (int i = 0; i < GEMV_CALLS; i++)
            gemv_call(g, w[i % copies], x, y, sh->in, sh->out, batch);
        cal_check_cuda(cudaEventRecord(g->e1, g->s), "cudaEventRecord");
        cal_wait_event(g->e1, g->timeout_s, "cuBLAS GEMV");
        float ms = 0;
        cal_check_cuda(cudaEventElapsedTime(&ms, g->e0, g->e1), "cudaEventElapsedTime");
        us[b] = (double)ms * 1e3 / GEMV_CALLS;
        bytes[b] = (double)wbytes + 2.0 * (double)batch * (double)(sh->in + sh->out);
        sum += us[b];
    }
    for (int c = 0; c < copies; c++) cal_check_cuda(cudaFree(w[c]), "cudaFree");
    cal_check_cuda(cudaFree(x), "cudaFree");
    cal_check_cuda(cudaFree(y), "cudaFree");
    return sum / n_batches;
}
