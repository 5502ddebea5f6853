// f64 arithmetic: y[i] = sqrt(a[i] * b[i] + c) / (a[i] - b[i]) and a dot product into one f64 (atomic add).
#include "cuda_shim.h"

extern "C" __global__ void f64_ops(const double *a, const double *b, double *y, double c, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    double p = __builtin_fma(a[i], b[i], c);
    double s = __nvvm_sqrt_rn_d(p < 0.0 ? -p : p);
    y[4 * i + 0] = s;
    y[4 * i + 1] = __nvvm_div_rn_d(a[i], b[i]);
    y[4 * i + 2] = __builtin_fmin(a[i], b[i]) - __builtin_fmax(a[i], b[i]);
    y[4 * i + 3] = __nvvm_rcp_rn_d(a[i]);
}

extern "C" __global__ void f64_dot(const double *a, const double *b, double *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) atomicAdd(out, a[i] * b[i]);
}
