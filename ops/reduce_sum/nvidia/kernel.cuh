// reduce_sum kernels, shared by every GPU backend through device_traits.cuh.
// Element (o, k, i) of the input sits at in_off(o) + k * S + i (AxisPlan);
// sums accumulate in f32 (a thread walking one column of many rows: its running
// sum in f64) and round once to the output type. Every sum is taken
// in an order fixed by the plan, so results are deterministic: no atomics.
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
    gpu::enter_overlapped_kernel();
    for (int64_t t = gpu::global_thread_index(); t < outer * inner; t += gpu::grid_threads()) {
        const int64_t o = t / inner;
        int64_t io, oo;
        ix.offsets(o, &io, &oo);
        out[oo + (t - o * inner)] = dev::from_f32<T>(0.0f);
    }
}

// Row sums, G lanes per row (G = warp width for rows up to a few thousand
// elements, fewer lanes for very short rows). Idea: a row needs no shared
// memory or barrier: G lanes stream it with vector loads and a shuffle
// butterfly combines them; many rows per block keep the memory system busy.
template <typename Tin, typename Tout, int G>
__global__ void __launch_bounds__(256)
reduce_rows_group_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    const int lane = int(threadIdx.x) % G;
    const int64_t groups_per_block = blockDim.x / G;
    // `base` is the same for the whole block, so every lane of a warp runs the
    // same number of iterations and reaches the shuffles together.
    for (int64_t base = int64_t(blockIdx.x) * groups_per_block; base < rows;
         base += int64_t(gridDim.x) * groups_per_block) {
        const int64_t row = base + threadIdx.x / G;
        float acc = 0.0f;
        int64_t io = 0, oo = 0;
        if (row < rows) {
            ix.offsets(row, &io, &oo);
            acc = span_sum(in + io, L, lane, G);
        }
        acc = gpu::group_allreduce<G>(acc, gpu::SumOp{});
        if (row < rows && lane == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

// Blocks of kernels with kBatch = 16 vectors in flight a thread hold 64
// registers of loads alone: at most 512 threads, so the compiler may use more
// than the 64 registers a thread that 1024-thread blocks allow.
constexpr int max_threads_for_batch(int batch) { return batch > 8 ? 512 : 1024; }

// The sweep's reads, added into acc (the running sums of each lane of a
// vector): slabs of blockDim.x * B vectors of x (nvec in all), slab s read by
// block s % P in round s / P (P = gridDim.x), so the P blocks read memory as
// one moving front, each thread's B loads of a slab issued together and
// added as a tree; then the vectors past the last whole slab, one a thread
// over the grid.
template <typename T, int B>
__device__ __forceinline__ void sweep_vectors(const T *__restrict__ x, int64_t nvec,
                                              float (&acc)[gpu::vector_width<T>()]) {
    constexpr int W = gpu::vector_width<T>();
    const int64_t Tn = blockDim.x, P = gridDim.x;
    const int64_t slab = Tn * B;  // vectors
    const int64_t full = nvec / slab;
    for (int64_t s = blockIdx.x; s < full; s += P) {
        const T *p = x + (s * slab + threadIdx.x) * W;
        Vec<T, W> v[B];
#pragma unroll
        for (int u = 0; u < B; ++u) v[u] = gpu::load_vec<W>(p + u * Tn * W);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            float t[B];
#pragma unroll
            for (int u = 0; u < B; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
            for (int h = 1; h < B; h *= 2)
#pragma unroll
                for (int u = 0; u + h < B; u += 2 * h) t[u] += t[u + h];
            acc[e] += t[0];
        }
    }
    for (int64_t q = full * slab + int64_t(blockIdx.x) * Tn + threadIdx.x; q < nvec; q += P * Tn) {
        const Vec<T, W> v = gpu::load_vec<W>(x + q * W);
#pragma unroll
        for (int e = 0; e < W; ++e) acc[e] += dev::to_f32(v.v[e]);
    }
}

// The sum of all n elements of one dense run, first pass: partial[b] = block
// b's share. Idea: the whole vectors read as one moving front of the P =
// gridDim.x blocks (sweep_vectors), the elements before the first 16-byte
// boundary and after the last whole vector one by one. A second pass adds the
// P partials in a fixed order.
template <typename Tin, int B>
__global__ void __launch_bounds__(512, 1)
reduce_sweep_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t n) {
    gpu::enter_overlapped_kernel();
    constexpr int W = gpu::vector_width<Tin>();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    const int64_t T = blockDim.x, P = gridDim.x;
    const int64_t head = gpu::elements_before_vector_boundary(in, n);
    const int64_t nvec = (n - head) / W;
    float acc[W] = {};
    sweep_vectors<Tin, B>(in + head, nvec, acc);
    const int64_t g = int64_t(blockIdx.x) * T + threadIdx.x;  // this thread of the grid
    if (g < head) acc[0] += dev::to_f32(in[g]);  // head < W: one element a thread
    for (int64_t i = head + nvec * W + g; i < n; i += P * T) acc[1] += dev::to_f32(in[i]);
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < W; ++e) s += acc[e];
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Row sums, one block per row, for rows too long for one warp.
// Idea: the whole block streams the row with vector loads; warps combine with
// shuffles and then through one shared-memory slot per warp.
template <typename Tin, typename Tout, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_block_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io, L, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

// Few long rows (the sum of all elements, say) cut into chunks so every SM
// streams a share: block b sums chunk b % chunks of row b / chunks into
// partial[b]; a second kernel adds each row's partials in a fixed order:
// deterministic, no atomics, no zeroing of the output.
template <typename Tin, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_split_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t rows, int64_t L,
                         int64_t chunks, int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const int64_t row = b / chunks;
        const int64_t k0 = (b - row * chunks) * chunk_len;
        const int64_t n = L - k0 < chunk_len ? L - k0 : chunk_len;
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io + k0, n, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) partial[b] = acc;
    }
}

// Row sums of rows too long for one block, one cluster of C blocks per row.
// Idea: each block streams one chunk of the row; the blocks' partial sums meet
// through distributed shared memory and block 0 adds them in rank order: one
// launch, no workspace, the same sum every run.
template <typename Tin, typename Tout, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_cluster_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                           int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    __shared__ float slot[2];  // this block's partial, by row parity
    const unsigned C = dev::cluster_size();
    const unsigned rank = dev::cluster_rank();
    int parity = 0;
    // Every block of a cluster runs the same rows, so all reach each cluster barrier.
    for (int64_t row = blockIdx.x / C; row < rows; row += gridDim.x / C, parity ^= 1) {
        const int64_t k0 = int64_t(rank) * chunk_len;
        const int64_t n = L - k0 < 0 ? 0 : (L - k0 < chunk_len ? L - k0 : chunk_len);
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io + k0, n, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) slot[parity] = acc;
        // Release/acquire: every partial is written before block 0 reads it; a
        // slot is next written two rows later, after the next cluster barrier,
        // which block 0 reaches only after these reads.
        dev::cluster_sync();
        if (rank == 0 && threadIdx.x == 0) {
            float total = 0.0f;
            for (unsigned r = 0; r < C; ++r) total += *dev::cluster_map(&slot[parity], r);
            out[oo] = dev::from_f32<Tout>(total);
        }
    }
    dev::cluster_sync();  // no block exits while block 0 may still read its slot
}

// y[0..V) = the V sums, rounded to Tout (f32 partial sums stay f32). 16-bit
// outputs go as 16-byte vectors (gpu::store_out_vec: one stated store) where y
// is aligned for them; f32 as element stores.
template <typename Tout, int V>
__device__ __forceinline__ void store_sums(Tout *y, const float (&sums)[V]) {
    constexpr int N = 16 / int(sizeof(Tout));  // elements per 16-byte store
    if constexpr (sizeof(Tout) == 2 && V % N == 0) {
        if (gpu::aligned_to(y, 16)) {
#pragma unroll
            for (int g = 0; g < V / N; ++g) {
                Vec<Tout, N> r;
#pragma unroll
                for (int e = 0; e < N; ++e) r.v[e] = dev::from_f32<Tout>(sums[g * N + e]);
                gpu::store_out_vec<N>(y + g * N, r);
            }
            return;
        }
    }
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = dev::from_f32<Tout>(sums[e]);
}

// Geometry of the inner-axis kernel, by value in its parameters.
struct InnerParams {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;          // axis length
    int64_t S = 0;          // axis stride of the input, in elements
    int64_t chunks = 1;     // blocks along the axis (gridDim.y)
    int64_t chunk_len = 0;  // axis positions per chunk
    int32_t bx = 1;         // threads across the inner run (each V elements wide)
    int32_t by = 1;         // threads along the axis
    int64_t tiles = 1;      // tiles of bx * V inner elements per outer position
    OuterIndex ix;
};

// The column sums of a bx x by tile: every thread brings its V sums, and the
// threads of row ty == 0 leave with their columns' totals. Rows are halved in
// shared memory (tile_sums, blockDim.x * V floats) in a fixed order; one row
// (by == 1) needs no tree.
template <int V>
__device__ __forceinline__ void join_tile_rows(float (&sums)[V], float *tile_sums, int ty, int bx, int by) {
    if (by == 1) return;  // uniform over the block
    float *mine = tile_sums + int64_t(threadIdx.x) * V;
#pragma unroll
    for (int e = 0; e < V; ++e) mine[e] = sums[e];
    __syncthreads();
    for (int h = by / 2; h > 0; h /= 2) {
        if (ty < h) {
            const float *other = tile_sums + int64_t(threadIdx.x + h * bx) * V;
#pragma unroll
            for (int e = 0; e < V; ++e) mine[e] += other[e];
        }
        __syncthreads();
    }
#pragma unroll
    for (int e = 0; e < V; ++e) sums[e] = mine[e];
    __syncthreads();  // the next call overwrites tile_sums
}

// Sums over a non-last axis: out[o, i] = sum_k in[o, k, i] (or, when the axis
// is split over gridDim.y chunks, partial[c, o, i], added by a second kernel).
// Idea: a block is a bx x by tile; bx threads span the inner run with V-wide
// vector loads, so each step along the axis is one coalesced row read, and by
// threads walk the axis in parallel; a fixed-order tree in shared memory joins
// them. Threads hold V accumulators, so rows are read once: f32 for vector
// columns (V > 1), f64 for a single column (V == 1: strided and broadcast rows,
// where one thread may add a thousand rows of its column; in f32 its running sum
// lost 1.3e-6 on 2^27 x 1e-3f, H200, 2026-12-01). (A form whose
// chunks met in one cluster through distributed shared memory, one launch and
// no workspace, measured 12-30% slower than the two passes on three of the
// four shapes it took: H200, 2026-11-30.)
//
// R rows in flight a thread, added pairwise in f32 before they join the
// running sum:
//   R = 4 (the inner tile): four rows a step, the last up to 3 loaded
//     together; up to 1024 threads.
//   R = 8 or 16 (the flight tile): every step issues its R row loads
//     (predicated at the chunk's end) before it adds any, so a thread's whole
//     share of a short chunk is one round trip to memory. Vector columns only
//     (the plan sends inputs whose inner run and strides are whole 16-byte
//     vectors; the run checks the base). The bound of one block a SM lets
//     ptxas issue all R loads before the first add (with the inner tile's
//     bound it interleaved them by fours; read in the SASS, CUDA 13.0, sm_90).
template <typename Tin, typename Tout, int V, int R = 4>
__global__ void __launch_bounds__(R == 4 ? 1024 : 512, R == 4 ? 0 : 1)
reduce_inner_tile_kernel(const Tin *__restrict__ in, Tout *__restrict__ out,
                         float *__restrict__ partial, InnerParams p) {
    static_assert(R == 4 || ((R == 8 || R == 16) && V > 1), "4 rows, or 8 or 16 rows of vectors, in flight");
    gpu::enter_overlapped_kernel();
    extern __shared__ float tile_sums[];  // blockDim.x * V floats, laid out [ty][tx][V]
    const int tx = int(threadIdx.x) % p.bx;
    const int ty = int(threadIdx.x) / p.bx;
    const int64_t c = blockIdx.y;
    const int64_t k0 = c * p.chunk_len;
    const int64_t k1 = p.L < k0 + p.chunk_len ? p.L : k0 + p.chunk_len;
    const int64_t S = p.S, by = p.by;
    for (int64_t tile = blockIdx.x; tile < p.outer * p.tiles; tile += gridDim.x) {
        const int64_t o = tile / p.tiles;
        const int64_t i = ((tile - o * p.tiles) * p.bx + tx) * V;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        using Acc = std::conditional_t<V == 1, double, float>;
        Acc acc[V] = {};
        if (i < p.inner) {  // inner % V == 0, so the whole vector is in range
            const Tin *col = in + io + i;
            if constexpr (R == 4) {
                int64_t k = k0 + ty;
                for (; k + 3 * by < k1; k += 4 * by) {
                    const Vec<Tin, V> v0 = gpu::load_vec<V>(col + k * S);
                    const Vec<Tin, V> v1 = gpu::load_vec<V>(col + (k + by) * S);
                    const Vec<Tin, V> v2 = gpu::load_vec<V>(col + (k + 2 * by) * S);
                    const Vec<Tin, V> v3 = gpu::load_vec<V>(col + (k + 3 * by) * S);
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        acc[e] += Acc((dev::to_f32(v0.v[e]) + dev::to_f32(v1.v[e])) +
                                      (dev::to_f32(v2.v[e]) + dev::to_f32(v3.v[e])));
                }
                // The last up to 3 rows: their loads go out together, not one
                // round trip to memory each (a chunk of 249 rows left 2-3).
                if (k < k1) {
                    const bool has1 = k + by < k1, has2 = k + 2 * by < k1;
                    Vec<Tin, V> v0 = gpu::load_vec<V>(col + k * S), v1{}, v2{};
                    if (has1) v1 = gpu::load_vec<V>(col + (k + by) * S);
                    if (has2) v2 = gpu::load_vec<V>(col + (k + 2 * by) * S);
#pragma unroll
                    for (int e = 0; e < V; ++e) {
                        float tail = dev::to_f32(v0.v[e]);
                        if (has1) tail += dev::to_f32(v1.v[e]);
                        if (has2) tail += dev::to_f32(v2.v[e]);
                        acc[e] += Acc(tail);
                    }
                }
            } else {
                for (int64_t k = k0 + ty; k < k1; k += R * by) {
                    Vec<Tin, V> v[R];
#pragma unroll
                    for (int u = 0; u < R; ++u) {
                        v[u] = Vec<Tin, V>{};
                        if (k + u * by < k1) v[u] = gpu::load_vec<V>(col + (k + u * by) * S);
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
        }
        float sums[V];
#pragma unroll
        for (int e = 0; e < V; ++e) sums[e] = float(acc[e]);
        join_tile_rows(sums, tile_sums, ty, p.bx, p.by);
        if (ty == 0 && i < p.inner) {
            if (partial != nullptr)
                store_sums(partial + (c * p.outer + o) * p.inner + i, sums);
            else
                store_sums(out + oo + i, sums);
        }
    }
}

// Sums over the first axis of a short axis and a long inner run, in one pass
// (outer 1): out[i] = sum_k in[k * S + i]. Idea: the flight tile without its
// shared-memory tree. A warp is X = (warp width) / G columns of V-wide vectors
// (16 bytes) by G rows: lane (tx, ty) = (lane % X, lane / X) adds rows ty,
// ty + G, ... of its column, R of them loaded (predicated at the axis's end)
// before any is added, as the flight tile does; the G lanes of a column then
// meet by a shuffle butterfly (lane offsets X, 2X, ... up to half the warp),
// and lane ty == 0 stores. Warps share nothing (no shared memory, no barrier):
// warp w of the grid takes columns [w * X, w * X + X); the grid covers every
// warp (no grid-stride loop: with one, ptxas gave the 16-bit instances 4-6
// more registers than the form measured in camp_reduce_sum_bench; CUDA 13.0,
// sm_90). Vector columns only: the plan sends inputs whose inner run and axis
// stride are whole 16-byte vectors; the run checks the base.
template <typename T, int R, int G>
__global__ void __launch_bounds__(512, 1)
reduce_inner_flight_warp_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t L, int64_t S,
                                int64_t inner) {
    constexpr int kWarp = dev::kWarpSize;
    static_assert(G >= 1 && G <= kWarp && kWarp % G == 0 && (R == 8 || R == 16), "G rows of a warp, R in flight");
    constexpr int V = gpu::vector_width<T>();
    constexpr int X = kWarp / G;
    gpu::enter_overlapped_kernel();
    const int lane = int(threadIdx.x) % kWarp;
    const int tx = lane % X, ty = lane / X;
    const int64_t w = int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int64_t i = (w * X + tx) * V;
    float acc[V] = {};
    if (i < inner) {  // inner % V == 0, so the whole vector is in range
        const T *col = in + i;
        for (int64_t k = ty; k < L; k += int64_t(R) * G) {
            Vec<T, V> v[R];
#pragma unroll
            for (int u = 0; u < R; ++u) {
                v[u] = Vec<T, V>{};
                if (k + u * G < L) v[u] = gpu::load_vec<V>(col + (k + u * G) * S);
            }
#pragma unroll
            for (int e = 0; e < V; ++e) {
                float t[R];
#pragma unroll
                for (int u = 0; u < R; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
                for (int h = 1; h < R; h *= 2)
#pragma unroll
                    for (int u = 0; u + h < R; u += 2 * h) t[u] += t[u + h];
                acc[e] += t[0];
            }
        }
    }
#pragma unroll
    for (int off = X; off < kWarp; off *= 2)  // every lane of the warp takes part
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += dev::shfl_xor(acc[e], off);
    if (ty == 0 && i < inner) store_sums(out + i, acc);
}

// Sums over the first axis of a dense, tall, narrow input (outer 1, axis
// stride == inner), first pass: partial[i * P + b] = block b's share of column
// i (P = gridDim.x). Idea: the n = L * inner elements are read as
// reduce_sweep_kernel reads the sum of all elements (sweep_vectors). The cv =
// inner / V vectors of a row are a power of two that divides blockDim.x (a
// power of two, a multiple of the warp width), so every vector a thread reads
// is of column threadIdx.x % cv: a thread keeps the V running sums of one
// column. A block's threads of one column meet by shuffles within the warp
// (cv under the warp width) and a fixed-order tree over rows of `inner`
// floats in shared memory (blockDim.x / max(cv, warp width) rows). The
// partials are transposed so each column's P sums are one row for the row
// kernel of the second pass, as split rows' partials are. `in` on a 16-byte
// boundary (the run checks).
template <typename T, int B>
__global__ void __launch_bounds__(512, 1)
reduce_inner_column_sweep_kernel(const T *__restrict__ in, float *__restrict__ partial, int64_t L, int inner) {
    constexpr int kWarp = dev::kWarpSize;
    constexpr int V = gpu::vector_width<T>();
    gpu::enter_overlapped_kernel();
    extern __shared__ float column_sums[];  // [row][inner]
    const int64_t Tn = blockDim.x, P = gridDim.x;
    const int cv = inner / V;
    float acc[V] = {};
    sweep_vectors<T, B>(in, L * cv, acc);
    // Under the warp width, the lanes of a warp alike mod cv hold the same
    // column and a row of column sums is a warp's; else a row is cv threads.
    const int lane = int(threadIdx.x) % kWarp;
    for (int off = cv; off < kWarp; off *= 2)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += dev::shfl_xor(acc[e], off);
    if (cv >= kWarp || lane < cv) {
        const int row = cv >= kWarp ? int(threadIdx.x) / cv : int(threadIdx.x) / kWarp;
        const int c = cv >= kWarp ? int(threadIdx.x) % cv : lane;
#pragma unroll
        for (int e = 0; e < V; ++e) column_sums[row * inner + c * V + e] = acc[e];
    }
    __syncthreads();
    const int rows = int(Tn) / (cv > kWarp ? cv : kWarp);  // halved in a fixed order
    for (int h = rows / 2; h > 0; h /= 2) {
        for (int j = threadIdx.x; j < h * inner; j += int(Tn)) column_sums[j] += column_sums[j + h * inner];
        __syncthreads();
    }
    for (int j = threadIdx.x; j < inner; j += int(Tn)) partial[int64_t(j) * P + blockIdx.x] = column_sums[j];
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
    gpu::enter_overlapped_kernel();
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

}  // namespace oprt::reduce_sum::gpu_kernels
