// Conversions between integer widths and floats, with the rounding modes C and NVVM give.
#include "cuda_shim.h"

#define SLOTS 16
extern "C" __global__ void conversions(const float *f, const double *d, const int *s, long long *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    long long *o = out + SLOTS * i;
    float x = f[i];
    double y = d[i];
    int v = s[i];
    o[0] = (long long)(int)x;                     // cvt.rzi.s32.f32
    o[1] = (long long)(unsigned)(x < 0 ? -x : x); // cvt.rzi.u32.f32
    o[2] = (long long)y;                          // cvt.rzi.s64.f64
    o[3] = __nvvm_f2i_rn(x);                      // cvt.rni.s32.f32
    o[4] = __nvvm_f2i_rm(x);                      // cvt.rmi.s32.f32
    o[5] = __nvvm_f2i_rp(x);                      // cvt.rpi.s32.f32
    o[6] = (long long)(signed char)v;             // cvt.s8 / sign extension
    o[7] = (long long)(unsigned short)v;          // and.b32 / cvt.u16
    float fv = (float)v;                          // cvt.rn.f32.s32
    o[8] = (long long)__builtin_bit_cast(unsigned, fv);
    double dv = (double)x;                        // cvt.f64.f32
    o[9] = __builtin_bit_cast(long long, dv);
    float fy = (float)y;                          // cvt.rn.f32.f64
    o[10] = (long long)__builtin_bit_cast(unsigned, fy);
    o[11] = (long long)__builtin_bit_cast(unsigned, __nvvm_d2f_rz(y));
    o[12] = (long long)__builtin_bit_cast(unsigned, __nvvm_ui2f_rn((unsigned)v));
    o[13] = __builtin_bit_cast(long long, (double)(long long)v * 3.0);
    o[14] = (long long)__builtin_bit_cast(unsigned, __nvvm_saturate_f(x));
    o[15] = (long long)(unsigned long long)(y < 0 ? -y : y);
}

// Integer arithmetic: division, remainder, min/max, high multiply, bit operations.
extern "C" __global__ void int_ops(const int *a, const int *b, unsigned *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    unsigned *o = out + 16 * i;
    o[0] = y != 0 ? (unsigned)(x / y) : 0;
    o[1] = y != 0 ? (unsigned)(x % y) : 0;
    o[2] = uy != 0 ? ux / uy : 0;
    o[3] = uy != 0 ? ux % uy : 0;
    o[4] = (unsigned)(x < y ? x : y);
    o[5] = ux > uy ? ux : uy;
    o[6] = (unsigned)__nvvm_mulhi_i(x, y);
    o[7] = __nvvm_mulhi_ui(ux, uy);
    o[8] = __builtin_popcount(ux);
    o[9] = ux ? __builtin_clz(ux) : 32;
    o[10] = __builtin_bitreverse32(ux);
    o[11] = (ux >> (uy & 31)) | (ux << ((32 - (uy & 31)) & 31));
    o[12] = (unsigned)(x >> (uy & 31));
    o[13] = (ux >> 5) & 0x3ff;
    o[14] = __nvvm_prmt(ux, uy, 0x3210 ^ (ux & 0x7777));
    o[15] = (unsigned)(x < 0 ? -x : x);
}

// 64-bit integer division and remainder.
extern "C" __global__ void int64_ops(const long long *a, const long long *b, long long *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    long long x = a[i], y = b[i];
    out[4 * i + 0] = y ? x / y : 0;
    out[4 * i + 1] = y ? x % y : 0;
    out[4 * i + 2] = y ? (long long)((unsigned long long)x / (unsigned long long)y) : 0;
    out[4 * i + 3] = (long long)__nvvm_mulhi_ull((unsigned long long)x, (unsigned long long)y);
}
