// f32 division, square roots and the approximate transcendentals, one result slot each.
#include "cuda_shim.h"

#define SLOTS 12
extern "C" __global__ void f32_math(const float *a, const float *b, float *y, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    float x = a[i], z = b[i];
    float *o = y + SLOTS * i;
    o[0] = __nvvm_div_rn_f(x, z);
    o[1] = __nvvm_div_approx_f(x, z);
    o[2] = __nvvm_div_rz_f(x, z);
    o[3] = __nvvm_sqrt_rn_f(__builtin_fabsf(x));
    o[4] = __nvvm_sqrt_approx_f(__builtin_fabsf(x));
    o[5] = __nvvm_rsqrt_approx_f(__builtin_fabsf(x) + 1.0f);
    o[6] = __nvvm_rcp_rn_f(z);
    o[7] = __nvvm_sin_approx_f(x);
    o[8] = __nvvm_cos_approx_f(x);
    o[9] = __nvvm_ex2_approx_f(x);
    o[10] = __nvvm_lg2_approx_f(__builtin_fabsf(x) + 1.0f);
    o[11] = __nvvm_fmin_f(x, z) * 2.0f + __nvvm_fmax_ftz_f(x, z) - __nvvm_fabs_f(z);
}

// The IEEE-exact operations: results must match the CPU bit for bit.
extern "C" __global__ void f32_exact(const float *a, const float *b, const float *c, float *y, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    y[4 * i + 0] = a[i] + b[i];
    y[4 * i + 1] = a[i] * b[i];
    y[4 * i + 2] = __builtin_fmaf(a[i], b[i], c[i]);
    y[4 * i + 3] = a[i] / b[i];
}
