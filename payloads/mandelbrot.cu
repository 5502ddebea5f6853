// Iteration counts of the Mandelbrot set over [x0, x0 + w*dx) x [y0, y0 + h*dy), f32.
#include "cuda_shim.h"

extern "C" __global__ void mandelbrot(unsigned *out, unsigned char *out8, int w, int h, float x0, float y0,
                                      float dx, float dy, int max_iter) {
    int px = blockIdx_x * blockDim_x + threadIdx_x;
    int py = blockIdx_y * blockDim_y + threadIdx_y;
    if (px >= w || py >= h) return;
    float cx = x0 + px * dx, cy = y0 + py * dy;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < max_iter && x * x + y * y <= 4.0f) {
        float xt = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = xt;
        it++;
    }
    out[py * w + px] = it;
    out8[py * w + px] = (unsigned char)it;
}
