// Softmax along a non-last axis, or a strided last axis: slices whose
// elements are `stride` apart. Neighbouring threads own neighbouring inner
// positions, so each step along the axis is a coalesced read. Many slices:
// one thread per slice, a running (max, sum) pass and a writing pass. Few
// slices: a bx x by tile of threads per group of bx slices, by threads along
// the axis whose pairs meet in a shared-memory tree.
#pragma once

#include "ops/softmax/nvidia/common.cuh"

namespace oprt::softmax::gpu_kernels {

// Geometry of the strided kernels, by value in their parameters.
struct SliceParams {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;
    int64_t in_stride = 0;   // axis stride of the input
    int64_t out_stride = 0;  // axis stride of the output
    int32_t bx = 1;          // tile kernel: threads across the inner run
    int32_t by = 1;          // tile kernel: threads along the axis
    int64_t tiles = 1;       // tile kernel: tiles of bx inner positions per outer position
    OuterIndex ix;
};

// Softmax of many strided slices, one thread per slice (slice = (o, i)).
// Idea: neighbouring threads own neighbouring inner positions, so each step
// along the axis is a coalesced read; one running (max, sum) pass, one write pass.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_thread_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    gpu::enter_overlapped_kernel();
    for (int64_t t = gpu::global_thread_index(); t < p.outer * p.inner; t += gpu::grid_threads()) {
        const int64_t o = t / p.inner;
        const int64_t i = t - o * p.inner;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        const T *x = in + io + i;
        T *y = out + oo + i;
        F32Pair ms = empty_pair();
        for (int64_t k = 0; k < p.L; ++k) online_add(ms, dev::to_f32(x[k * p.in_stride]));
        const float inv = 1.0f / ms.b;
        for (int64_t k = 0; k < p.L; ++k)
            y[k * p.out_stride] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.in_stride]) - ms.a) * inv);
    }
}

// Softmax of few strided slices: a bx x by tile per (outer, inner tile).
// Idea: bx threads span the inner run (coalesced), by threads split the axis;
// their running pairs meet in a fixed-order shared-memory tree, then the same
// threads write their share of the slice.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_tile_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    gpu::enter_overlapped_kernel();
    __shared__ F32Pair pairs[256];
    const int tx = int(threadIdx.x) % p.bx;
    const int ty = int(threadIdx.x) / p.bx;
    for (int64_t tile = blockIdx.x; tile < p.outer * p.tiles; tile += gridDim.x) {
        const int64_t o = tile / p.tiles;
        const int64_t i = (tile - o * p.tiles) * p.bx + tx;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        const T *x = in + io + i;
        T *y = out + oo + i;
        F32Pair ms = empty_pair();
        if (i < p.inner)
            for (int64_t k = ty; k < p.L; k += p.by) online_add(ms, dev::to_f32(x[k * p.in_stride]));
        pairs[threadIdx.x] = ms;
        __syncthreads();
        for (int h = p.by / 2; h > 0; h /= 2) {
            if (ty < h) pairs[threadIdx.x] = CombineOp{}(pairs[threadIdx.x], pairs[threadIdx.x + h * p.bx]);
            __syncthreads();
        }
        ms = pairs[tx];  // row 0 of the tile holds column tx's total
        const float inv = 1.0f / ms.b;
        if (i < p.inner)
            for (int64_t k = ty; k < p.L; k += p.by)
                y[k * p.out_stride] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.in_stride]) - ms.a) * inv);
        __syncthreads();  // the next tile overwrites pairs
    }
}

constexpr int kStridedThreads = 256;

template <typename T>
void launch_strided(const SliceParams &q, bool tile, const T *in, T *out, dev::stream_t stream) {
    if (!tile) {
        const int64_t blocks = gpu::clamp64(gpu::ceil_div(q.outer * q.inner, kStridedThreads), 1, gpu::kMaxGridBlocks);
        gpu::launch_overlapped(&softmax_strided_thread_kernel<T>, unsigned(blocks), kStridedThreads, 0, stream, in,
                               out, q);
    } else {
        const int64_t blocks = gpu::clamp64(q.outer * q.tiles, 1, gpu::kMaxGridBlocks);
        gpu::launch_overlapped(&softmax_strided_tile_kernel<T>, unsigned(blocks), unsigned(q.bx * q.by), 0, stream,
                               in, out, q);
    }
}

}  // namespace oprt::softmax::gpu_kernels
