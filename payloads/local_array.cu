// A per-thread array indexed at run time (local memory: `.local` depot, %SP/%SPL, cvta.local):
// each thread fills 16 slots from its input, then reads them back in a data-dependent order.
#include "cuda_shim.h"

extern "C" __global__ void local_array(const unsigned *in, unsigned *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i >= n) return;
    volatile unsigned buf[16];
    unsigned x = in[i];
    for (int k = 0; k < 16; k++) buf[k] = x * (k + 1) + k;
    unsigned acc = 0;
    for (int k = 0; k < 16; k++) acc = acc * 31 + buf[(x + 7 * k) & 15];
    out[i] = acc;
}
