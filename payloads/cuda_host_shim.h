// The payloads' CUDA spellings for a host (x86) build of the same kernel source, used as the
// native reference the PTX model's speed is compared with (`tests::native`, `cargo xtask
// bench`). Only straight-line kernels build this way: one thread runs after another, so there
// is no `__syncthreads`, no shared memory and no atomics here.
#pragma once
#define NVGPU_HOST_BUILD 1

#define __global__
#define __device__

struct nvgpu_host_dim3 {
    unsigned x, y, z;
};
// Set by the host driver before each thread's call.
extern struct nvgpu_host_dim3 nvgpu_tid, nvgpu_ctaid, nvgpu_ntid, nvgpu_nctaid;

#define threadIdx_x nvgpu_tid.x
#define threadIdx_y nvgpu_tid.y
#define threadIdx_z nvgpu_tid.z
#define blockIdx_x nvgpu_ctaid.x
#define blockIdx_y nvgpu_ctaid.y
#define blockIdx_z nvgpu_ctaid.z
#define blockDim_x nvgpu_ntid.x
#define blockDim_y nvgpu_ntid.y
#define blockDim_z nvgpu_ntid.z
#define gridDim_x nvgpu_nctaid.x
#define gridDim_y nvgpu_nctaid.y

static inline unsigned global_thread_x(void) { return blockIdx_x * blockDim_x + threadIdx_x; }
