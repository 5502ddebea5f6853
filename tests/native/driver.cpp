// The native reference of the PTX model (`tests::native`): the payloads' straight-line kernels
// (`vector_add.cu`, `mandelbrot.cu`) compiled for the host with `cuda_host_shim.h`, each
// thread of the grid run in turn, best of REPS runs timed with CLOCK_MONOTONIC. Prints one line
// per kernel, `native KERNEL: NS ns, checksum HEX` (FNV-1a 64 of the output bytes), which the
// test compares with the model's output of the same launch.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_host_shim.h"

struct nvgpu_host_dim3 nvgpu_tid, nvgpu_ctaid, nvgpu_ntid, nvgpu_nctaid;

#include "vector_add.cu"
#include "mandelbrot.cu"

static uint64_t fnv1a(const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x00000100000001b3ull;
    }
    return h;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Runs `body` for every thread of a grid of `grid` blocks of `block` threads (x and y).
#define FOR_EACH_THREAD(gx, gy, bx, by, body)                                          \
    do {                                                                               \
        nvgpu_nctaid = (struct nvgpu_host_dim3){(unsigned)(gx), (unsigned)(gy), 1};                   \
        nvgpu_ntid = (struct nvgpu_host_dim3){(unsigned)(bx), (unsigned)(by), 1};                 \
        for (unsigned cy = 0; cy < (gy); cy++)                                         \
            for (unsigned cx = 0; cx < (gx); cx++)                                     \
                for (unsigned ty = 0; ty < (by); ty++)                                 \
                    for (unsigned tx = 0; tx < (bx); tx++) {                           \
                        nvgpu_ctaid = (struct nvgpu_host_dim3){cx, cy, 0};             \
                        nvgpu_tid = (struct nvgpu_host_dim3){tx, ty, 0};               \
                        body;                                                          \
                    }                                                                  \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s N W H MAX_ITER\n", argv[0]);
        return 2;
    }
    const unsigned n = (unsigned)strtoul(argv[1], 0, 10);
    const int w = atoi(argv[2]), h = atoi(argv[3]), max_iter = atoi(argv[4]);
    const int reps = 5;

    // vector_add_f32 over the inputs the test writes: a[i] = i * 0.5, b[i] = 1000 - i.
    float *a = (float *)malloc(n * sizeof(float)), *b = (float *)malloc(n * sizeof(float));
    float *c = (float *)malloc(n * sizeof(float));
    for (unsigned i = 0; i < n; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)i;
    }
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        memset(c, 0, n * sizeof(float));
        uint64_t t0 = now_ns();
        FOR_EACH_THREAD((n + 255) / 256, 1, 256, 1, vector_add_f32(a, b, c, n));
        uint64_t t = now_ns() - t0;
        if (t < best) best = t;
    }
    printf("native vector_add_f32: %llu ns, checksum %016llx\n", (unsigned long long)best,
           (unsigned long long)fnv1a(c, n * sizeof(float)));

    unsigned *out = (unsigned *)malloc((size_t)w * h * sizeof(unsigned));
    unsigned char *out8 = (unsigned char *)malloc((size_t)w * h);
    best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        FOR_EACH_THREAD((w + 15) / 16, (h + 15) / 16, 16, 16,
                        mandelbrot(out, out8, w, h, -2.0f, -1.25f, 2.5f / w, 2.5f / h, max_iter));
        uint64_t t = now_ns() - t0;
        if (t < best) best = t;
    }
    printf("native mandelbrot: %llu ns, checksum %016llx\n", (unsigned long long)best,
           (unsigned long long)fnv1a(out, (size_t)w * h * sizeof(unsigned)));
    return 0;
}
