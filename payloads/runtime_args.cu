// A kernel whose parameters exercise every layout rule of the parameter block: 32- and 64-bit
// integers and floats, pointers, a by-value struct (aligned 8) and a byte between wider ones.
// The runtime test checks the layout the driver derives from clang's PTX against the ABI.
#include "cuda_shim.h"

struct Pair {
    double weight;
    int bias;
};

extern "C" __global__ void mixed(unsigned n, long long k, float a, double b, const float *x, struct Pair p,
                                 unsigned char c, double *out) {
    unsigned i = global_thread_x();
    if (i < n)
        out[i] = (double)k + a + b + x[i] * p.weight + p.bias + c;
}

extern "C" __global__ void no_params(void) {}
