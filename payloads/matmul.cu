// C = A * B for row-major f32 matrices (A: m x k, B: k x n), 16x16 tiles in shared memory.
#include "cuda_shim.h"
#define TILE 16

extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int m, int n, int k) {
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int tx = threadIdx_x, ty = threadIdx_y;
    int row = blockIdx_y * TILE + ty;
    int col = blockIdx_x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
        int ac = t * TILE + tx, br = t * TILE + ty;
        ta[ty][tx] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        tb[ty][tx] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; i++) acc += ta[ty][i] * tb[i][tx];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
