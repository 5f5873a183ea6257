// softmax along an axis that is not the last dense one (a non-last axis, or
// a strided last axis), on every GPU backend: a thread per slice, or tiles of
// slices; their launch struct (SliceParams, shared with ladder.cuh) and launchers.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

constexpr int kStridedThreads = 256;  // a block of either kernel

// Geometry of the slice kernels (these and the ladder's plain steps): slice
// t = (o, i) of outer x inner, L elements apart by the axis strides.
struct SliceParams {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;
    int64_t S_in = 0;   // axis strides, in elements
    int64_t S_out = 0;
    int32_t bx = 1;     // tile kernel: threads across the inner run
    int32_t by = 1;     // tile kernel: threads along the axis
    int64_t tiles = 1;  // tile kernel: tiles of bx inner positions per outer position
    OuterIndex ix;

    // Slice t: where its first input and output elements sit.
    __device__ __forceinline__ void start(int64_t t, int64_t *in_off, int64_t *out_off) const {
        const int64_t o = t / inner, i = t - o * inner;
        ix.offsets(o, in_off, out_off);
        *in_off += i;
        *out_off += i;
    }
};

// Many strided slices, one thread per slice: neighbouring threads own
// neighbouring inner positions, so each step along the axis is a coalesced
// read; one running (max, sum) pass, one write pass.
template <typename T>
__global__ void __launch_bounds__(kStridedThreads)
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
        for (int64_t k = 0; k < p.L; ++k) online_add(ms, dev::to_f32(x[k * p.S_in]));
        const float inv = 1.0f / ms.b;
        for (int64_t k = 0; k < p.L; ++k)
            y[k * p.S_out] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.S_in]) - ms.a) * inv);
    }
}

// Few strided slices: a bx x by tile per (outer, inner tile); bx threads span
// the inner run (coalesced), by threads split the axis; their running pairs
// meet in a fixed-order shared-memory tree, then each writes its share.
template <typename T>
__global__ void __launch_bounds__(kStridedThreads)
softmax_strided_tile_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    gpu::enter_overlapped_kernel();
    __shared__ F32Pair pairs[kStridedThreads];
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
            for (int64_t k = ty; k < p.L; k += p.by) online_add(ms, dev::to_f32(x[k * p.S_in]));
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
                y[k * p.S_out] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.S_in]) - ms.a) * inv);
        __syncthreads();  // the next tile overwrites pairs
    }
}

// ---- Launchers -------------------------------------------------------------------


template <typename T>
void launch_strided_thread(const T *in, T *out, const SliceParams &q, dev::stream_t stream) {
    const unsigned blocks = grid_of(gpu::ceil_div(q.outer * q.inner, kStridedThreads));  // a thread a slice
    gpu::launch_overlapped(&softmax_strided_thread_kernel<T>, blocks, kStridedThreads, 0, stream, in, out, q);
}

// Tiles of bx inner positions by `by` threads along the axis (bx * by <= kStridedThreads).
template <typename T>
void launch_strided_tile(const T *in, T *out, SliceParams q, int bx, int by, dev::stream_t stream) {
    q.bx = bx;
    q.by = by;
    q.tiles = gpu::ceil_div(q.inner, int64_t(bx));
    gpu::launch_overlapped(&softmax_strided_tile_kernel<T>, grid_of(q.outer * q.tiles), unsigned(bx * by), 0, stream,
                           in, out, q);
}

}  // namespace oprt::softmax::gpu_kernels
