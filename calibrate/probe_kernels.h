/* probe_kernels.h: C interface to the kernels of probe_kernels.cu (built with nvcc). */
#ifndef TPSIM_PROBE_KERNELS_H
#define TPSIM_PROBE_KERNELS_H

#include <stddef.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The empty kernel, for cudaLaunchKernel (no parameters: pass args NULL) and graph capture. */
const void *probe_empty_kernel(void);

/* One thread spinning ns nanoseconds on the GPU's global timer. */
cudaError_t probe_launch_spin(cudaStream_t s, unsigned long long ns);

/* Stream-read `bytes` (a multiple of 16) from src with blocks x threads. */
cudaError_t probe_launch_read(cudaStream_t s, const void *src, size_t bytes, unsigned *sink,
                              int blocks, int threads);

#ifdef __cplusplus
}
#endif

#endif
