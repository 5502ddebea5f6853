// Access patterns for the unified-memory tests (tests/tests/uvm_patterns.rs): a random gather,
// a strided update, a streaming mix of three inputs, an in-place increment, a copy and column sums.
#include "cuda_shim.h"

// out[i] = in[idx[i]]: one random page of `in` per thread.
extern "C" __global__ void gather_u32(const unsigned *in, const unsigned *idx, unsigned *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) out[i] = in[idx[i]];
}

// buf[i * stride] = buf[i * stride] * 2654435761 + i: one word every `stride` words, read then
// written in place.
extern "C" __global__ void strided_update_u32(unsigned *buf, unsigned stride, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) {
        unsigned long long at = (unsigned long long)i * stride;
        buf[at] = buf[at] * 2654435761u + i;
    }
}

// out[i] = a[i] + 3 b[i] + 5 c[i] (wrapping): three input streams and one output stream.
extern "C" __global__ void mix3_u32(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out,
                                    unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) out[i] = a[i] + 3u * b[i] + 5u * c[i];
}

// buf[i] += 1, in place.
extern "C" __global__ void increment_u32(unsigned *buf, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) buf[i] += 1u;
}

// out[i] = in[i].
extern "C" __global__ void copy_u32(const unsigned *in, unsigned *out, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) out[i] = in[i];
}

// sums[c] += in[r * cols + c] over the rows r: thread i reads row i % rows of column i / rows,
// so a CTA reads down a column, one word `cols` words apart per thread.
extern "C" __global__ void column_sums_u32(const unsigned *in, unsigned rows, unsigned cols, unsigned *sums) {
    unsigned i = global_thread_x();
    if (i < rows * cols) atomicAdd(&sums[i / rows], in[(i % rows) * cols + i / rows]);
}
