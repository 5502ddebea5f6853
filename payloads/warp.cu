// Warp collectives: votes, ballots and every shuffle mode.
#include "cuda_shim.h"

// out[8 * tid + k]: ballot, all, any, uni, shfl up/down/bfly/idx.
extern "C" __global__ void warp_ops(const unsigned *in, unsigned *out, unsigned n) {
    unsigned i = global_thread_x();
    unsigned v = i < n ? in[i] : 0;
    unsigned p = v & 1;
    unsigned mask = __nvvm_activemask();
    unsigned *o = out + 8 * i;
    unsigned ballot = __nvvm_vote_ballot_sync(mask, p);
    unsigned all = __nvvm_vote_all_sync(mask, p);
    unsigned any = __nvvm_vote_any_sync(mask, p);
    unsigned uni = __nvvm_vote_uni_sync(mask, v > 100);
    unsigned up = __nvvm_shfl_sync_up_i32(mask, v, 3, 0);
    unsigned down = __nvvm_shfl_sync_down_i32(mask, v, 5, 0x1f);
    unsigned bfly = __nvvm_shfl_sync_bfly_i32(mask, v, 6, 0x1f);
    unsigned idx = __nvvm_shfl_sync_idx_i32(mask, v, v & 31, 0x1f);
    if (i < n) {
        o[0] = ballot; o[1] = all; o[2] = any; o[3] = uni;
        o[4] = up; o[5] = down; o[6] = bfly; o[7] = idx;
    }
}

// Shuffles within 8-lane segments (width 8: c = ((32 - 8) << 8) | 7 for idx/down/bfly, (32 - 8) << 8 for up).
extern "C" __global__ void warp_segments(const float *in, float *out) {
    unsigned i = global_thread_x();
    float v = in[i];
    float s = v;
    for (int off = 4; off > 0; off >>= 1)
        s += __nvvm_shfl_sync_bfly_f32(FULL_MASK, s, off, ((32 - 8) << 8) | 7);
    float u = __nvvm_shfl_sync_up_f32(FULL_MASK, v, 1, (32 - 8) << 8);
    out[2 * i] = s;
    out[2 * i + 1] = u;
}

// Atomics of every kind on global and shared memory.
extern "C" __global__ void atomics(unsigned *g, int *gs, unsigned long long *g64, float *gf, unsigned n) {
    __shared__ unsigned sh[4];
    unsigned t = threadIdx_x;
    if (t < 4) sh[t] = 0;
    __syncthreads();
    unsigned i = global_thread_x();
    if (i < n) {
        atomicAdd(&g[0], i);
        atomicMax(&g[1], i * 7 % 101);
        atomicMin(&g[2], i * 13 % 97 + 3);
        atomicAnd(&g[3], ~(1u << (i % 32)) | 1u);
        atomicOr(&g[4], 1u << (i % 32));
        atomicXor(&g[5], i);
        atomicInc(&g[6], 16);
        atomicDec(&g[7], 9);
        atomicMin(&gs[0], (int)i - 50);
        atomicMax(&gs[1], -(int)i);
        atomicAdd(g64, (unsigned long long)i << 33);
        atomicAdd(gf, 0.5f);
        atomicCAS(&g[8], i, i + 1);
        atomicAdd(&sh[0], 1);
        atomicMax(&sh[1], i);
        atomicExch(&sh[2], 5);
    }
    __syncthreads();
    if (t == 0) {
        atomicAdd(&g[9], sh[0]);
        atomicMax(&g[10], sh[1]);
        atomicAdd(&g[11], sh[2]);
    }
}
