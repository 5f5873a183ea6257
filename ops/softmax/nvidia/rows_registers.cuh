// Softmax of dense rows held in registers: short and medium rows (up to 16384
// elements), the production kernel for most shapes.
//
// Idea: a row is loaded once, with 16-byte vectors, into the registers of the
// `tpr` threads that own it (thread t of the row holds vectors t, t + tpr,
// ..., K of them: coalesced, K loads in flight per thread), reduced to its max
// and to the sum of its exps, and written from the registers: HBM is read
// once and written once, one exp per element, one reciprocal per row.
// Short rows (tpr <= warp width, G): several rows per 128-thread block, the
// reductions are shuffle butterflies inside each group of G lanes, with no
// shared memory and no barrier. Longer rows: one row per block of tpr
// threads, the reductions go through shared memory (block_allreduce).
// The table choosing G / tpr and K is in softmax_plan.cu.
#pragma once

#include "ops/softmax/nvidia/common.cuh"

namespace oprt::softmax::gpu_kernels {

// Blocks of rows on groups of lanes; the most threads a block-per-row launch uses.
constexpr int kGroupBlockThreads = 128;
constexpr int kMaxRowThreads = 512;

// Launch geometry (a typed launch struct: the plan's launch[] values, named).
struct RegisterRows {
    int64_t rows = 0;
    int64_t L = 0;
    int32_t threads_per_row = 1;  // G (<= warp) or the block size
    int32_t vecs = 1;             // K: 16-byte vectors a thread holds
    OuterIndex ix;
};

// G > 0: rows on groups of G lanes, kGroupBlockThreads / G rows per block.
// G == 0: one row per block of blockDim.x threads. Both ask for at most 64
// registers a thread (half the SM's threads resident at least).
template <typename T, int G, int K>
__global__ void __launch_bounds__(G > 0 ? kGroupBlockThreads : kMaxRowThreads,
                                  G > 0 ? 2048 / 2 / kGroupBlockThreads : 2048 / 2 / kMaxRowThreads)
softmax_rows_registers_kernel(const T *__restrict__ in, T *__restrict__ out, RegisterRows p) {
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    __shared__ gpu::BlockReduceScratch<float> scratch;  // G == 0 only
    const int tpr = G > 0 ? G : int(blockDim.x);
    const int lane = G > 0 ? int(threadIdx.x) % G : int(threadIdx.x);
    const int64_t rows_per_block = G > 0 ? blockDim.x / G : 1;
    // `base` is uniform over the block: every lane reaches the shuffles and barriers.
    for (int64_t base = int64_t(blockIdx.x) * rows_per_block; base < p.rows;
         base += int64_t(gridDim.x) * rows_per_block) {
        const int64_t row = base + (G > 0 ? int64_t(threadIdx.x) / G : 0);
        const bool valid = row < p.rows;
        int64_t io = 0, oo = 0;
        if (valid) p.ix.offsets(row, &io, &oo);
        const RowIO<T, int32_t> r(in + io, out + oo, valid ? int32_t(p.L) : 0, K * tpr);  // no row: all padding
        float x[K][P];
#pragma unroll
        for (int j = 0; j < K; ++j) r.load(j * tpr + lane, x[j]);  // all K loads first
        float m = neg_inf();
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int e = 0; e < P; ++e) m = fmaxf(m, x[j][e]);
        if constexpr (G > 0) m = gpu::group_allreduce<G>(m, gpu::MaxOp{});
        else m = gpu::block_allreduce(m, gpu::MaxOp{}, neg_inf(), scratch);
        // -inf (and padding) adds 0, also in a row of all -inf, whose sum stays
        // 0: 0 * (1 / 0) gives its NaN outputs.
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int e = 0; e < P; ++e) {
                x[j][e] = x[j][e] != neg_inf() ? exp_out<T>(x[j][e], m) : 0.0f;
                s += x[j][e];
            }
        if constexpr (G > 0) s = gpu::group_allreduce<G>(s, gpu::SumOp{});
        else s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
        const float inv = 1.0f / s;
        if (!valid) continue;
#pragma unroll
        for (int j = 0; j < K; ++j) r.store(j * tpr + lane, x[j], inv);
    }
}

// Calls f(std::integral_constant<int, V>) for the runtime count v, 1 <= v <= Max.
template <int Max, typename F>
void with_count(int v, F f) {
    if (v >= Max) f(std::integral_constant<int, Max>{});
    else if constexpr (Max > 1) with_count<Max - 1>(v, f);
}

// Calls f(std::integral_constant<int, G>) for the power of two g <= Max.
template <int Max, typename F>
void with_pow2(int g, F f) {
    if (g >= Max) f(std::integral_constant<int, Max>{});
    else if constexpr (Max > 1) with_pow2<Max / 2>(g, f);
}

template <typename T>
void launch_rows_registers(const RegisterRows &p, const T *in, T *out, dev::stream_t stream) {
    constexpr int kMaxVecs = 32 / gpu::vector_width<T>();  // 32 values a thread
    const int tpr = p.threads_per_row;
    with_count<kMaxVecs>(p.vecs, [&](auto k) {
        constexpr int K = decltype(k)::value;
        if (tpr > dev::kWarpSize) {  // a block per row
            const int64_t blocks = gpu::clamp64(p.rows, 1, gpu::kMaxGridBlocks);
            gpu::launch_overlapped(&softmax_rows_registers_kernel<T, 0, K>, unsigned(blocks), unsigned(tpr), 0,
                                   stream, in, out, p);
        } else if (tpr == dev::kWarpSize || K == 1) {  // the plan takes K > 1 only on whole warps
            with_pow2<dev::kWarpSize>(tpr, [&](auto g) {
                constexpr int G = decltype(g)::value;
                if constexpr (G == dev::kWarpSize || K == 1) {
                    const int64_t blocks =
                        gpu::clamp64(gpu::ceil_div(p.rows, kGroupBlockThreads / G), 1, gpu::kMaxGridBlocks);
                    gpu::launch_overlapped(&softmax_rows_registers_kernel<T, G, K>, unsigned(blocks),
                                           unsigned(kGroupBlockThreads), 0, stream, in, out, p);
                }
            });
        }
    });
}

}  // namespace oprt::softmax::gpu_kernels
