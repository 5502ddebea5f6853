// Sums: one partial sum per block, by a shared-memory tree (u32 and f32) and by warp shuffles (u32).
#include "cuda_shim.h"

extern "C" __global__ void reduce_sum_u32(const unsigned *in, unsigned *partial, unsigned n) {
    extern __shared__ unsigned sdata[];
    unsigned tid = threadIdx_x;
    unsigned i = global_thread_x();
    sdata[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned s = blockDim_x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx_x] = sdata[0];
}

extern "C" __global__ void reduce_sum_f32(const float *in, float *partial, unsigned n) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx_x;
    unsigned i = global_thread_x();
    sdata[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim_x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx_x] = sdata[0];
}

// Block size a multiple of 32, at most 1024: each warp reduces by shfl.down, lane 0 of every
// warp adds its sum into the result with an atomic.
extern "C" __global__ void reduce_sum_shfl_u32(const unsigned *in, unsigned *total, unsigned n) {
    unsigned i = global_thread_x();
    unsigned v = i < n ? in[i] : 0;
    for (int off = 16; off > 0; off >>= 1)
        v += __nvvm_shfl_sync_down_i32(FULL_MASK, v, off, 0x1f);
    if ((threadIdx_x & 31) == 0) atomicAdd(total, v);
}
