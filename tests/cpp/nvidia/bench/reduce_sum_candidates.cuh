// Candidate reduce_sum kernels that the library does not have, timed by
// camp_reduce_sum_bench (reduce_sum_shapes.cu) next to the library's own:
//   rows_*_lb1_kernel   the library's group, block and split row kernels
//                       with a minimum of resident blocks in their bounds.
#pragma once

#include <cstdint>

#include "ops/reduce_sum/nvidia/kernel.cuh"

namespace oprt::reduce_sum::bench_kernels {

// The library's row kernels (kernel.cuh) as they are, with a minimum of
// resident blocks in their bounds: the same span_sum, so the only difference
// is ptxas's schedule (with the library's bounds, span_sum<T, 8> issues four
// of a batch's eight loads before its first add, f32 and 16-bit alike;
// 16-vector batches all 16). Block and split: the library's bound plus one
// block a SM (64 registers at most, as before; an 8-byte spill in the f16
// split kernel); the group kernel's 256 threads four a SM (one a SM let it
// take 92-99 registers, where the library's takes 54).
template <typename Tin, typename Tout, int G>
__global__ void __launch_bounds__(256, 4)
rows_group_lb1_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                      gpu::OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    const int lane = int(threadIdx.x) % G;
    const int64_t groups_per_block = blockDim.x / G;
    for (int64_t base = int64_t(blockIdx.x) * groups_per_block; base < rows;
         base += int64_t(gridDim.x) * groups_per_block) {
        const int64_t row = base + threadIdx.x / G;
        float acc = 0.0f;
        int64_t io = 0, oo = 0;
        if (row < rows) {
            ix.offsets(row, &io, &oo);
            acc = gpu_kernels::span_sum(in + io, L, lane, G);
        }
        acc = gpu::group_allreduce<G>(acc, gpu::SumOp{});
        if (row < rows && lane == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

template <typename Tin, typename Tout, int kBatch>
__global__ void __launch_bounds__(gpu_kernels::max_threads_for_batch(kBatch), 1)
rows_block_lb1_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                      gpu::OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = gpu_kernels::span_sum<Tin, kBatch>(in + io, L, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

template <typename Tin, int kBatch>
__global__ void __launch_bounds__(gpu_kernels::max_threads_for_batch(kBatch), 1)
rows_split_lb1_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t rows, int64_t L,
                      int64_t chunks, int64_t chunk_len, gpu::OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const int64_t row = b / chunks;
        const int64_t k0 = (b - row * chunks) * chunk_len;
        const int64_t n = L - k0 < chunk_len ? L - k0 : chunk_len;
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = gpu_kernels::span_sum<Tin, kBatch>(in + io + k0, n, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) partial[b] = acc;
    }
}

}  // namespace oprt::reduce_sum::bench_kernels
