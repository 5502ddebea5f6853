// The few CUDA spellings the payloads use, for clang's CUDA mode without NVIDIA's headers
// (`-nocudainc -nocudalib`): qualifiers as attributes, thread indices as NVVM builtins.
#pragma once

// A host build of the same kernels (`tests::native`, the PTX model's native reference)
// includes `cuda_host_shim.h` first, which defines these spellings for the CPU.
#ifndef NVGPU_HOST_BUILD

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))

#define threadIdx_x __nvvm_read_ptx_sreg_tid_x()
#define threadIdx_y __nvvm_read_ptx_sreg_tid_y()
#define threadIdx_z __nvvm_read_ptx_sreg_tid_z()
#define blockIdx_x __nvvm_read_ptx_sreg_ctaid_x()
#define blockIdx_y __nvvm_read_ptx_sreg_ctaid_y()
#define blockIdx_z __nvvm_read_ptx_sreg_ctaid_z()
#define blockDim_x __nvvm_read_ptx_sreg_ntid_x()
#define blockDim_y __nvvm_read_ptx_sreg_ntid_y()
#define blockDim_z __nvvm_read_ptx_sreg_ntid_z()
#define gridDim_x __nvvm_read_ptx_sreg_nctaid_x()
#define gridDim_y __nvvm_read_ptx_sreg_nctaid_y()
#define laneid __nvvm_read_ptx_sreg_laneid()

#define __syncthreads() __nvvm_bar_sync(0)

// CUDA's atomic functions in terms of the C11-style builtins clang lowers to atom/red.
static __device__ inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static __device__ inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static __device__ inline float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ inline double atomicAdd(double *p, double v) { return __nvvm_atom_add_gen_d(p, v); }
static __device__ inline int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
static __device__ inline int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
static __device__ inline unsigned atomicMin(unsigned *p, unsigned v) { return __nvvm_atom_min_gen_ui(p, v); }
static __device__ inline unsigned atomicMax(unsigned *p, unsigned v) { return __nvvm_atom_max_gen_ui(p, v); }
static __device__ inline unsigned atomicAnd(unsigned *p, unsigned v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
static __device__ inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
static __device__ inline unsigned atomicXor(unsigned *p, unsigned v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
static __device__ inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
static __device__ inline unsigned atomicInc(unsigned *p, unsigned v) { return __nvvm_atom_inc_gen_ui(p, v); }
static __device__ inline unsigned atomicDec(unsigned *p, unsigned v) { return __nvvm_atom_dec_gen_ui(p, v); }
static __device__ inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) { return __nvvm_atom_cas_gen_i((int *)p, (int)cmp, (int)v); }
#define FULL_MASK 0xffffffffu

static __device__ inline unsigned global_thread_x(void) { return blockIdx_x * blockDim_x + threadIdx_x; }

#endif  // NVGPU_HOST_BUILD
