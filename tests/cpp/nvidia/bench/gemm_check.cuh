// What the matmul harnesses (matmul_kernels.cu, sgemm_kernels.cu) share to check a kernel's C
// against a reference: operands filled with a reproducible random pattern and NaN padding,
// a grid-wide max relative error, a workspace, and whether a failed kernel broke the context.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tests/cpp/nvidia/bench/graph_timing.cuh"  // CK

namespace gemm_check {

__device__ inline float uniform(uint64_t i, uint32_t seed) {  // [-1, 1), from a hash of (i, seed)
    uint64_t x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return float(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// outer x ld buffer: entries with inner index < inner get random values, the padding NaN
// (a kernel that reads outside its matrix then fails the check).
template <typename T>
__global__ void fill(T *p, int64_t outer, int64_t inner, int64_t ld, uint32_t seed) {
    const int64_t total = outer * ld;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
        p[i] = T(i % ld < inner ? uniform(uint64_t(i), seed) : NAN);
}

__device__ inline float to_f(float x) { return x; }
__device__ inline float to_f(double x) { return float(x); }
__device__ inline float to_f(__half x) { return __half2float(x); }
__device__ inline float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }

// stats[0]: the max over elements of |x - ref| / max(|ref|, floor) (as float bits: errors are
// >= 0, so they order as integers); stats[1]: entries that are NaN or infinite.
template <typename T, typename R>
__global__ void compare(const T *x, const R *ref, int64_t count, float floor, unsigned *stats) {
    float worst = 0.f;
    unsigned bad = 0;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
        const float v = to_f(x[i]), r = to_f(ref[i]);
        if (!isfinite(v) || !isfinite(r)) {
            ++bad;
            continue;
        }
        worst = fmaxf(worst, fabsf(v - r) / fmaxf(fabsf(r), floor));
    }
    atomicMax(&stats[0], __float_as_uint(worst));
    if (bad) atomicAdd(&stats[1], bad);
}

// compare() run now: the max relative error of x against ref, NaN where an entry of either is
// not finite. stats: two unsigned of device memory.
template <typename T, typename R>
double max_error(const T *x, const R *ref, int64_t count, float floor, unsigned *stats, cudaStream_t stream) {
    CK(cudaMemsetAsync(stats, 0, 2 * sizeof(unsigned), stream));
    compare<<<1024, 256, 0, stream>>>(x, ref, count, floor, stats);
    unsigned h[2];
    CK(cudaMemcpyAsync(h, stats, sizeof h, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    float worst;
    std::memcpy(&worst, &h[0], sizeof worst);
    return h[1] ? double(NAN) : double(worst);
}

// A workspace at least `bytes` large (grown as needed, kept for the program's life).
inline void *workspace(size_t bytes) {
    static void *p = nullptr;
    static size_t size = 0;
    if (bytes == 0) return nullptr;
    if (bytes > size) {
        if (p) CK(cudaFree(p));
        CK(cudaMalloc(&p, bytes));
        size = bytes;
    }
    return p;
}

// Whether the CUDA context still works (a kernel that faulted breaks it for good).
inline bool context_alive() {
    void *p = nullptr;
    if (cudaMalloc(&p, 256) != cudaSuccess) return false;
    cudaFree(p);
    return true;
}

}  // namespace gemm_check
