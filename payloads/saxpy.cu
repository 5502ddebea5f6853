// y[i] = a * x[i] + y[i] (f32), grid-stride loop.
#include "cuda_shim.h"

extern "C" __global__ void saxpy(unsigned n, float a, const float *x, float *y) {
    for (unsigned i = global_thread_x(); i < n; i += blockDim_x * gridDim_x)
        y[i] = a * x[i] + y[i];
}
