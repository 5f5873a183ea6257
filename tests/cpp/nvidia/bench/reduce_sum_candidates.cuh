// Candidate reduce_sum kernels that the library does not have, timed by
// camp_reduce_sum_bench (reduce_sum_shapes.cu) next to the library's own. Both
// sum the first axis of a dense (L, inner) input, inner a whole number of
// 16-byte vectors, the input on a 16-byte boundary:
//   flight_warp_kernel   the flight tile with the rows of a column joined
//                        inside a warp by shuffles: no shared memory, no barrier;
//   column_sweep_kernel  a narrow inner run read as the sweep reads the sum of
//                        all elements (one moving front of slabs), each thread
//                        always on the same column.
#pragma once

#include <cstdint>

#include "ops/reduce_sum/nvidia/kernel.cuh"

namespace oprt::reduce_sum::bench_kernels {

using gpu::Vec;

// out[i] = sum_k in[k, i] in one pass. A warp is X = 32 / G columns of V = 16
// bytes by G rows: lane (tx, ty) = (lane % X, lane / X) adds rows ty, ty + G,
// ... of its column, R of them loaded (predicated at the axis's end) before any
// is added, as the flight tile does; the G lanes of a column then meet by a
// shuffle butterfly (offsets X .. 16), and lane ty == 0 stores. Warps are
// independent: warp w of the grid takes columns [w * X, w * X + X).
template <typename T, int R, int G>
__global__ void __launch_bounds__(512, 1)
flight_warp_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t L, int64_t inner) {
    static_assert(G >= 1 && G <= 32 && 32 % G == 0 && (R == 4 || R == 8 || R == 16), "G rows of a warp, R in flight");
    constexpr int V = gpu::vector_width<T>();
    constexpr int X = 32 / G;
    gpu::enter_overlapped_kernel();
    const int lane = int(threadIdx.x) % 32;
    const int tx = lane % X, ty = lane / X;
    const int64_t warp = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    const int64_t i = (warp * X + tx) * V;
    float acc[V] = {};
    if (i < inner) {
        const T *col = in + i;
        for (int64_t k = ty; k < L; k += int64_t(R) * G) {
            Vec<T, V> v[R];
#pragma unroll
            for (int u = 0; u < R; ++u) {
                v[u] = Vec<T, V>{};
                if (k + u * G < L) v[u] = gpu::load_vec<V>(col + (k + u * G) * inner);
            }
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float t[R];
#pragma unroll
                for (int u = 0; u < R; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
                for (int w = 1; w < R; w *= 2)
#pragma unroll
                    for (int u = 0; u + w < R; u += 2 * w) t[u] += t[u + w];
                acc[e] += t[0];
            }
        }
    }
#pragma unroll
    for (int off = X; off < 32; off *= 2)  // every lane of the warp takes part
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += dev::shfl_xor(acc[e], off);
    if (ty == 0 && i < inner) gpu_kernels::store_sums(out + i, acc);
}

// First pass of the column sums of a tall, narrow input: n = L * inner elements
// read as reduce_sweep_kernel reads them (slabs of blockDim.x * B vectors, slab
// s by block s % P, B loads a thread issued together; the vectors past the
// last whole slab one a thread over the grid). cv = inner / V vectors a row
// (a power of two) divide blockDim.x (a multiple of 32), so every vector a thread reads
// is of column tid % cv. A block's threads of one column meet by shuffles
// within the warp (cv < 32) and a fixed-order tree over the warps in shared
// memory (max(T / 32, T / cv) * inner floats); partial[i * P + b] = block b's sum of element
// column i (transposed: the second pass adds rows of P partials).
template <typename T, int B>
__global__ void __launch_bounds__(512, 1)
column_sweep_kernel(const T *__restrict__ in, float *__restrict__ partial, int64_t L, int inner) {
    constexpr int V = gpu::vector_width<T>();
    gpu::enter_overlapped_kernel();
    extern __shared__ float warp_sums[];  // [warp][inner]
    const int64_t Tn = blockDim.x, P = gridDim.x;
    const int cv = inner / V;
    const int64_t slab = Tn * B;  // vectors
    const int64_t nvec = L * cv;
    const int64_t full = nvec / slab;
    float acc[V] = {};
    for (int64_t s = blockIdx.x; s < full; s += P) {
        const T *p = in + (s * slab + threadIdx.x) * V;
        Vec<T, V> v[B];
#pragma unroll
        for (int u = 0; u < B; ++u) v[u] = gpu::load_vec<V>(p + u * Tn * V);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            float t[B];
#pragma unroll
            for (int u = 0; u < B; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
            for (int w = 1; w < B; w *= 2)
#pragma unroll
                for (int u = 0; u + w < B; u += 2 * w) t[u] += t[u + w];
            acc[e] += t[0];
        }
    }
    for (int64_t q = full * slab + int64_t(blockIdx.x) * Tn + threadIdx.x; q < nvec; q += P * Tn) {
        const Vec<T, V> v = gpu::load_vec<V>(in + q * V);
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += dev::to_f32(v.v[e]);
    }
    // cv is a power of two: under 32, the lanes of a warp alike mod cv hold the
    // same column and a row of warp sums is a warp's; else a row is cv threads.
    const int lane = int(threadIdx.x) % 32;
    for (int off = cv; off < 32; off *= 2)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += dev::shfl_xor(acc[e], off);
    if (cv >= 32 || lane < cv) {
        const int row = cv >= 32 ? int(threadIdx.x) / cv : int(threadIdx.x) / 32;
        const int c = cv >= 32 ? int(threadIdx.x) % cv : lane;
#pragma unroll
        for (int e = 0; e < V; ++e) warp_sums[row * inner + c * V + e] = acc[e];
    }
    __syncthreads();
    const int nrows = int(Tn) / (cv > 32 ? cv : 32);  // halved in a fixed order
    for (int h = nrows / 2; h > 0; h /= 2) {
        for (int j = threadIdx.x; j < h * inner; j += int(Tn)) warp_sums[j] += warp_sums[j + h * inner];
        __syncthreads();
    }
    for (int j = threadIdx.x; j < inner; j += int(Tn)) partial[int64_t(j) * P + blockIdx.x] = warp_sums[j];
}

}  // namespace oprt::reduce_sum::bench_kernels
