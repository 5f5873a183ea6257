// Candidate reduce_sum kernels that the library does not have, timed by
// camp_reduce_sum_bench (reduce_sum_shapes.cu) next to the library's own. Each
// targets cases where the plan trailed torch or inductor:
//   flight_tile_kernel  sums over the first axis (dim 0) with R rows of
//                       16-byte column loads in flight a thread (the
//                       library's inner tile keeps four);
//   lean_rows_kernel    dense rows, G lanes a row (a multiple of 32, not
//                       necessarily a power of two), each lane's N vectors
//                       loaded at once, no head peeling, one barrier;
//   sweep_sum_kernel    the sum of all elements: P blocks sweep one front
//                       through memory (block b reads slab round * P + b), B
//                       vectors in flight a thread, one partial a block;
//   rows_*_lb1_kernel   the library's group, block and split row kernels
//                       with a minimum of resident blocks in their bounds.
// The first three are bounded to one block a SM at least
// (__launch_bounds__(T, 1)): without that bound ptxas (CUDA 13.0, sm_90)
// issued f32 batches of 8 or 16 vectors as four loads, their adds, four more
// (16 vectors a thread in 40 registers), and the library's span_sum<T, 8>
// shows the same; with it all of a batch's loads go out before the first add
// (read in the SASS).
// They assume what the bench's inputs give: rows and columns a multiple of
// the vector width, 16-byte aligned bases (the candidate lists offer them
// only for such cases).
#pragma once

#include <cstdint>

#include "ops/reduce_sum/nvidia/kernel.cuh"

namespace oprt::reduce_sum::bench_kernels {

using gpu::Vec;

// out[i] (or partial[c * inner + i] for chunk c = blockIdx.y) = the sum over
// rows [c * chunk_len, (c + 1) * chunk_len) of in[k * inner + i]; outer 1.
// A block is a bx x by tile (bx threads of V columns across the inner run);
// every thread issues R row loads before it adds any (predicated at the
// chunk's end), then the tile's rows meet in shared memory (join_tile_rows).
template <typename Tin, typename Tout, int V, int R>
__global__ void __launch_bounds__(512, 1)
flight_tile_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, float *__restrict__ partial,
                   int64_t inner, int64_t L, int64_t chunk_len, int bx, int by) {
    gpu::enter_overlapped_kernel();
    extern __shared__ float tile_sums[];
    const int tx = int(threadIdx.x) % bx;
    const int ty = int(threadIdx.x) / bx;
    const int64_t c = blockIdx.y;
    const int64_t k0 = c * chunk_len;
    const int64_t k1 = L < k0 + chunk_len ? L : k0 + chunk_len;
    const int64_t i = (int64_t(blockIdx.x) * bx + tx) * V;
    float acc[V] = {};
    if (i < inner) {
        const Tin *col = in + i;
        for (int64_t k = k0 + ty; k < k1; k += int64_t(R) * by) {
            Vec<Tin, V> v[R];
#pragma unroll
            for (int u = 0; u < R; ++u) {
                v[u] = Vec<Tin, V>{};
                if (k + int64_t(u) * by < k1) v[u] = gpu::load_vec<V>(col + (k + int64_t(u) * by) * inner);
            }
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float t[R];
#pragma unroll
                for (int u = 0; u < R; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
                for (int w = 1; w < R; w *= 2)  // pairwise: (t0 + t1) + (t2 + t3) ...
#pragma unroll
                    for (int u = 0; u + w < R; u += 2 * w) t[u] += t[u + w];
                acc[e] += t[0];
            }
        }
    }
    gpu_kernels::join_tile_rows(acc, tile_sums, ty, bx, by);
    if (ty == 0 && i < inner) {
        if (partial != nullptr)
            gpu_kernels::store_sums(partial + c * inner + i, acc);
        else
            gpu_kernels::store_sums(out + i, acc);
    }
}

// out[r] = the sum of row r (rows of L elements, L % W == 0, rows 16-byte
// aligned). G lanes a row (G % 32 == 0), blockDim.x / G rows a block; lane j
// loads vectors j, j + G, ... (N of them, those past the row not at all) at
// once. Warps combine with shuffles; a row wider than a warp meets through one
// shared slot a warp and one barrier, the row's first warp adds the slots.
template <typename Tin, typename Tout, int N>
__global__ void __launch_bounds__(gpu_kernels::max_threads_for_batch(N), 1)
lean_rows_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int rows, int L, int G) {
    gpu::enter_overlapped_kernel();
    constexpr int W = gpu::vector_width<Tin>();
    __shared__ float slot[32];
    const int rows_per_block = int(blockDim.x) / G;
    const int row = int(blockIdx.x) * rows_per_block + int(threadIdx.x) / G;
    const int lane = int(threadIdx.x) % G;
    const int nvec = L / W;
    float acc[W] = {};
    if (row < rows) {
        const Tin *p = in + int64_t(row) * L;
        Vec<Tin, W> v[N];
#pragma unroll
        for (int u = 0; u < N; ++u) {
            v[u] = Vec<Tin, W>{};
            if (lane + u * G < nvec) v[u] = gpu::load_vec<W>(p + (lane + u * G) * W);
        }
#pragma unroll
        for (int e = 0; e < W; ++e) {
            float t[N];
#pragma unroll
            for (int u = 0; u < N; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
            for (int w = 1; w < N; w *= 2)
#pragma unroll
                for (int u = 0; u + w < N; u += 2 * w) t[u] += t[u + w];
            acc[e] = t[0];
        }
    }
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3]));
    if constexpr (W == 8) s += ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    s = gpu::warp_allreduce(s, gpu::SumOp{});
    const int warp = int(threadIdx.x) / 32, wl = int(threadIdx.x) % 32;
    if (G == 32) {  // uniform over the block
        if (wl == 0 && row < rows) out[row] = dev::from_f32<Tout>(s);
        return;
    }
    if (wl == 0) slot[warp] = s;
    __syncthreads();
    const int warps_per_row = G / 32;
    if (lane < 32 && row < rows) {  // the row's first warp
        float w = wl < warps_per_row ? slot[warp + wl] : 0.0f;
        w = gpu::warp_allreduce(w, gpu::SumOp{});
        if (wl == 0) out[row] = dev::from_f32<Tout>(w);
    }
}

// partial[b] = block b's share of the n elements (n % W == 0, in 16-byte
// aligned): slabs of blockDim.x * B vectors, slab s read by block s % P in
// round s / P (P = gridDim.x), so the P blocks read one moving front; each
// thread's B loads of a slab are issued together. The last part slab goes
// vector by vector over every thread of the grid.
template <typename Tin, int B>
__global__ void __launch_bounds__(512, 1)
sweep_sum_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t n) {
    gpu::enter_overlapped_kernel();
    constexpr int W = gpu::vector_width<Tin>();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    const int64_t T = blockDim.x, P = gridDim.x;
    const int64_t slab = T * B;  // vectors
    const int64_t nvec = n / W;
    const int64_t full = nvec / slab;
    float acc[W] = {};
    for (int64_t s = blockIdx.x; s < full; s += P) {
        const Tin *p = in + (s * slab + threadIdx.x) * W;
        Vec<Tin, W> v[B];
#pragma unroll
        for (int u = 0; u < B; ++u) v[u] = gpu::load_vec<W>(p + u * T * W);
#pragma unroll
        for (int e = 0; e < W; ++e) {
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
    for (int64_t q = full * slab + blockIdx.x * T + threadIdx.x; q < nvec; q += P * T) {
        const Vec<Tin, W> v = gpu::load_vec<W>(in + q * W);
#pragma unroll
        for (int e = 0; e < W; ++e) acc[e] += dev::to_f32(v.v[e]);
    }
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < W; ++e) s += acc[e];
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

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
