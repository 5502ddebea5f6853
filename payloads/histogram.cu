// 256-bin histogram of bytes: per-block bins in shared memory, then added into global bins.
#include "cuda_shim.h"

extern "C" __global__ void histogram256(const unsigned char *data, unsigned n, unsigned *bins) {
    __shared__ unsigned local[256];
    for (unsigned b = threadIdx_x; b < 256; b += blockDim_x) local[b] = 0;
    __syncthreads();
    for (unsigned i = global_thread_x(); i < n; i += blockDim_x * gridDim_x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (unsigned b = threadIdx_x; b < 256; b += blockDim_x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

// The same straight into global memory.
extern "C" __global__ void histogram256_global(const unsigned char *data, unsigned n, unsigned *bins) {
    unsigned i = global_thread_x();
    if (i < n) atomicAdd(&bins[data[i]], 1u);
}
