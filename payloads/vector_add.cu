// c[i] = a[i] + b[i] for u32 (wrapping) and f32.
#include "cuda_shim.h"

extern "C" __global__ void vector_add_u32(const unsigned *a, const unsigned *b, unsigned *c, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void vector_add_f32(const float *a, const float *b, float *c, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) c[i] = a[i] + b[i];
}
