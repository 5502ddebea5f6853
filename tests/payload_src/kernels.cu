// Kernels for tests/tests/payload_real.rs: compiled to PTX by clang-19 at test time, then to
// cubins by NVIDIA's ptxas. Their signatures fix the parameter layout the test expects.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

extern "C" __global__ __attribute__((launch_bounds(256))) void saxpy(int n, float a, const float *x, float *y) {
    int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
    if (i < n) y[i] = a * x[i] + y[i];
}

// A static shared array of 256 floats (1024 bytes), and parameters of mixed sizes and alignments.
extern "C" __global__ void reverse_block(float *data, char tag, double scale, short count) {
    __shared__ float tile[256];
    unsigned t = __nvvm_read_ptx_sreg_tid_x();
    unsigned base = __nvvm_read_ptx_sreg_ctaid_x() * 256;
    tile[t] = data[base + t] * (float)scale + (float)tag;
    __syncthreads();
    if ((int)t < count) data[base + t] = tile[255 - t];
}

// No parameters at all.
extern "C" __global__ void empty_kernel() {}

// A global variable the code addresses: leaves relocations for the loader to apply.
__attribute__((device)) unsigned counter;
__attribute__((device)) unsigned table[4] = {1, 2, 3, 4};

extern "C" __global__ void bump(unsigned k) {
    __nvvm_atom_add_gen_i((int *)&counter, (int)table[k & 3]);
}
