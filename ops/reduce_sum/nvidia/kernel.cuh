// reduce_sum kernels, shared by every GPU backend through device_traits.cuh.
// Element (o, k, i) of the input sits at in_off(o) + k * S + i (AxisPlan);
// sums accumulate in f32 (a thread walking one column of many rows: its running
// sum in f64) and round once to the output type. Every sum is taken
// in an order fixed by the plan, so results are deterministic: no atomics.
//
// This file: span_sum (a row's sum over cooperating threads), the empty-axis
// and strided kernels, and the host helpers of every launcher; the kernel
// families, each with its launch struct and launcher: rows.cuh (dense rows),
// inner.cuh (a non-last axis), ladder.cuh (the ladder's plain steps); the
// plan: reduce_sum_cuda.cu.
//
// Row kernels (the axis is dense, inner == 1) read each row with 16-byte
// vector loads after peeling the few elements before the row's first 16-byte
// boundary. Inner kernels (reducing a non-last axis) put threads across the
// inner run, so every step along the axis is one coalesced read of a row (the
// column sweep reads a dense narrow input front to back instead, each thread
// always on the same column).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_common.cuh"
#include "runtime/gpu/gpu_reduce.cuh"
#include "runtime/gpu/gpu_runtime.h"

namespace oprt::reduce_sum::gpu_kernels {

using gpu::OuterIndex;
using gpu::Vec;

// Sum of p[0..n) split over `nlanes` cooperating threads (this one is `lane`).
// Elements before the first 16-byte boundary and after the last whole vector
// are read one by one; the middle as aligned vectors, kBatch (8 or 16, then
// four) in flight per thread, into one accumulator per vector slot (independent
// add chains); the last (up to) three vectors are loaded together too, one round
// trip to memory where a loop over them waited for each in turn (a split
// chunk of 7.8 vectors a thread left part of every block three trips behind).
template <typename T, int kBatch = 8>
__device__ __forceinline__ float span_sum(const T *__restrict__ p, int64_t n, int64_t lane,
                                          int64_t nlanes) {
    static_assert(kBatch == 8 || kBatch == 16, "a batch is 8 or 16 vectors");
    constexpr int W = gpu::vector_width<T>();
    const int64_t head = gpu::elements_before_vector_boundary(p, n);
    float acc[W] = {};
    for (int64_t i = lane; i < head; i += nlanes) acc[0] += dev::to_f32(p[i]);
    const T *body = p + head;
    const int64_t nvec = (n - head) / W;
    int64_t q = lane;
    for (; q + (kBatch - 1) * nlanes < nvec; q += kBatch * nlanes) {
        Vec<T, W> v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) v[u] = gpu::load_vec<W>(body + (q + u * nlanes) * W);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            float t[kBatch];
#pragma unroll
            for (int u = 0; u < kBatch; ++u) t[u] = dev::to_f32(v[u].v[e]);
            float sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
            if constexpr (kBatch == 16)
                sum += ((t[8] + t[9]) + (t[10] + t[11])) + ((t[12] + t[13]) + (t[14] + t[15]));
            acc[e] += sum;
        }
    }
    for (; q + 3 * nlanes < nvec; q += 4 * nlanes) {  // fewer than kBatch left: fours
        const Vec<T, W> v0 = gpu::load_vec<W>(body + q * W);
        const Vec<T, W> v1 = gpu::load_vec<W>(body + (q + nlanes) * W);
        const Vec<T, W> v2 = gpu::load_vec<W>(body + (q + 2 * nlanes) * W);
        const Vec<T, W> v3 = gpu::load_vec<W>(body + (q + 3 * nlanes) * W);
#pragma unroll
        for (int e = 0; e < W; ++e)
            acc[e] += (dev::to_f32(v0.v[e]) + dev::to_f32(v1.v[e])) +
                      (dev::to_f32(v2.v[e]) + dev::to_f32(v3.v[e]));
    }
    if (q < nvec) {  // up to three left, loaded together (zeros past the end)
        Vec<T, W> v[3];
#pragma unroll
        for (int u = 0; u < 3; ++u) {
            v[u] = Vec<T, W>{};
            if (q + u * nlanes < nvec) v[u] = gpu::load_vec<W>(body + (q + u * nlanes) * W);
        }
#pragma unroll
        for (int e = 0; e < W; ++e)
            acc[e] += (dev::to_f32(v[0].v[e]) + dev::to_f32(v[1].v[e])) + dev::to_f32(v[2].v[e]);
    }
    for (int64_t i = head + nvec * W + lane; i < n; i += nlanes) acc[0] += dev::to_f32(p[i]);
    float total = 0.0f;
#pragma unroll
    for (int e = 0; e < W; ++e) total += acc[e];
    return total;
}

// out[o, i] = 0 for an empty axis.
// Trivial: one thread per output; `in` is never read (it may be NULL).
template <typename T>
__global__ void reduce_zero_kernel(T *out, int64_t outer, int64_t inner, OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    for (int64_t t = gpu::global_thread_index(); t < outer * inner; t += gpu::grid_threads()) {
        const int64_t o = t / inner;
        int64_t io, oo;
        ix.offsets(o, &io, &oo);
        out[oo + (t - o * inner)] = dev::from_f32<T>(0.0f);
    }
}

// Sums over a strided axis with one thread per output (inner == 1, axis
// stride != 1, many outputs). Idea: neighbouring threads take neighbouring
// outputs, which for these layouts are neighbouring addresses, so each step
// along the axis is a coalesced read; four loads in flight, added pairwise in
// f32, then into the thread's f64 sum (a thread adds its whole axis).
template <typename T>
__global__ void __launch_bounds__(256)
reduce_strided_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t outer, int64_t L, int64_t S,
                      OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    for (int64_t o = gpu::global_thread_index(); o < outer; o += gpu::grid_threads()) {
        int64_t io, oo;
        ix.offsets(o, &io, &oo);
        const T *p = in + io;
        double acc = 0.0;
        int64_t k = 0;
        for (; k + 3 < L; k += 4)
            acc += double((dev::to_f32(p[k * S]) + dev::to_f32(p[(k + 1) * S])) +
                          (dev::to_f32(p[(k + 2) * S]) + dev::to_f32(p[(k + 3) * S])));
        for (; k < L; ++k) acc += double(dev::to_f32(p[k * S]));
        out[oo] = dev::from_f32<T>(float(acc));
    }
}

// ---- Launchers -------------------------------------------------------------------

constexpr const char *kExecuteOp = "oprt_execute_reduce_sum";
constexpr int kStridedThreads = 256;  // reduce_strided_kernel's __launch_bounds__

// A grid of `blocks` blocks, within the launch limit.
inline unsigned grid_of(int64_t blocks) { return unsigned(gpu::clamp64(blocks, 1, gpu::kMaxGridBlocks)); }

template <typename T>
void launch_zero(T *out, int64_t outer, int64_t inner, const OuterIndex &ix, dev::stream_t stream) {
    gpu::launch_overlapped(&reduce_zero_kernel<T>, grid_of(gpu::ceil_div(outer * inner, 256)), 256, 0, stream, out,
                           outer, inner, ix);
}

template <typename T>
void launch_strided(const T *in, T *out, int64_t outer, int64_t L, int64_t S, const OuterIndex &ix,
                    dev::stream_t stream) {
    gpu::launch_overlapped(&reduce_strided_kernel<T>, grid_of(gpu::ceil_div(outer, kStridedThreads)), kStridedThreads,
                           0, stream, in, out, outer, L, S, ix);
}

}  // namespace oprt::reduce_sum::gpu_kernels
