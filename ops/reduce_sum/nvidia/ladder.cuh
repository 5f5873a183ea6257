// The plain steps of the reduce_sum kernel ladder (oprt_list_reduce_sum_variants):
//   smem_tree     one block per output, scalar loads, a shared-memory tree
//   warp_shuffle  one warp per output, scalar loads, a shuffle butterfly
// then the plan's own kernels (rows.cuh): vec16 (16-byte loads, a warp or a
// block per row) and multi_block (rows split over several blocks when few rows
// cannot fill the GPU). Both plain kernels read element (o, k, i) at
// in_off(o) + k * S + i, so they run every layout the operator accepts; they
// are the readable starting points, not fast paths.
#pragma once

#include <cstdint>

#include "ops/reduce_sum/nvidia/kernel.cuh"

namespace oprt::reduce_sum::gpu_kernels {

// Geometry of the plain kernels, by value in their parameters.
struct SliceSum {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;  // axis length
    int64_t S = 0;  // axis stride of the input, in elements
    gpu::OuterIndex ix;
};

constexpr int kSmemTreeThreads = 256;

// Step 1: out[o, i] = sum_k in[o, k, i], one block per output.
// Idea: each thread adds every blockDim-th element with scalar loads; the
// block's partial sums are then halved in shared memory, one barrier per level,
// until slot 0 holds the total.
template <typename T>
__global__ void __launch_bounds__(kSmemTreeThreads)
reduce_smem_tree_kernel(const T *__restrict__ in, T *__restrict__ out, SliceSum q) {
    __shared__ float partial[kSmemTreeThreads];
    const int tid = int(threadIdx.x);
    for (int64_t t = blockIdx.x; t < q.outer * q.inner; t += gridDim.x) {
        const int64_t o = t / q.inner, i = t - o * q.inner;
        int64_t io, oo;
        q.ix.offsets(o, &io, &oo);
        float acc = 0.0f;
        for (int64_t k = tid; k < q.L; k += kSmemTreeThreads) acc += dev::to_f32(in[io + k * q.S + i]);
        partial[tid] = acc;
        __syncthreads();
        for (int half = kSmemTreeThreads / 2; half > 0; half /= 2) {
            if (tid < half) partial[tid] += partial[tid + half];
            __syncthreads();
        }
        if (tid == 0) out[oo + i] = dev::from_f32<T>(partial[0]);
        __syncthreads();  // slot 0 is read before the next output overwrites it
    }
}

constexpr int kWarpShuffleThreads = 256;

// Step 2: one warp per output, no shared memory and no barrier.
// Idea: the lanes of a warp add strided shares and a butterfly of register
// shuffles combines them; a block holds several warps, each on its own output.
template <typename T>
__global__ void __launch_bounds__(kWarpShuffleThreads)
reduce_warp_shuffle_kernel(const T *__restrict__ in, T *__restrict__ out, SliceSum q) {
    constexpr int64_t kWarps = kWarpShuffleThreads / dev::kWarpSize;
    const int lane = int(threadIdx.x) % dev::kWarpSize;
    const int64_t n = q.outer * q.inner;
    // `base` is the same for the whole block, so the lanes of a warp loop together.
    for (int64_t base = int64_t(blockIdx.x) * kWarps; base < n; base += int64_t(gridDim.x) * kWarps) {
        const int64_t t = base + threadIdx.x / dev::kWarpSize;
        float acc = 0.0f;
        int64_t oo = 0, i = 0;
        if (t < n) {
            const int64_t o = t / q.inner;
            i = t - o * q.inner;
            int64_t io;
            q.ix.offsets(o, &io, &oo);
            for (int64_t k = lane; k < q.L; k += dev::kWarpSize) acc += dev::to_f32(in[io + k * q.S + i]);
        }
        acc = gpu::warp_allreduce(acc, gpu::SumOp{});
        if (t < n && lane == 0) out[oo + i] = dev::from_f32<T>(acc);
    }
}

// ---- Launchers -------------------------------------------------------------------

template <typename T>
void launch_smem_tree(const T *in, T *out, const SliceSum &q, dev::stream_t stream) {
    reduce_smem_tree_kernel<T><<<grid_of(q.outer * q.inner), kSmemTreeThreads, 0, stream>>>(in, out, q);
}

template <typename T>
void launch_warp_shuffle(const T *in, T *out, const SliceSum &q, dev::stream_t stream) {
    const int64_t warps = kWarpShuffleThreads / dev::kWarpSize;  // a warp an output
    reduce_warp_shuffle_kernel<T><<<grid_of(gpu::ceil_div(q.outer * q.inner, warps)), kWarpShuffleThreads, 0, stream>>>(
        in, out, q);
}

}  // namespace oprt::reduce_sum::gpu_kernels
