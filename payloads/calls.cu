// Calls to non-inlined device functions (PTX `.func` and `call`): scalar and pointer arguments,
// return values, a function calling another.
#include "cuda_shim.h"

__attribute__((noinline)) __device__ unsigned mix(unsigned a, unsigned b) { return a * 2654435761u ^ (b >> 3); }

__attribute__((noinline)) __device__ float lerp3(float a, float b, float t, unsigned *count) {
    count[0] += 1;
    return a + t * (b - a) + (float)mix((unsigned)a, 7u);
}

__attribute__((noinline)) __device__ void store_pair(unsigned *p, unsigned a, unsigned b) {
    p[0] = mix(a, b);
    p[1] = mix(b, a);
}

extern "C" __global__ void calls(const float *a, const float *b, float *out, unsigned *pairs, unsigned *count, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    out[i] = lerp3(a[i], b[i], 0.25f, count + i);
    store_pair(pairs + 2 * i, i, n);
}
