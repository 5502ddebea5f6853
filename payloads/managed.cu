// x[i] = x[i] * mul + add (u32, wrapping) in place over managed memory, grid-stride loop: every
// page it touches first is a replayable GPU fault that unified memory services.
#include "cuda_shim.h"

extern "C" __global__ void managed_step_u32(unsigned *x, unsigned n, unsigned mul, unsigned add) {
    for (unsigned i = global_thread_x(); i < n; i += blockDim_x * gridDim_x)
        x[i] = x[i] * mul + add;
}
