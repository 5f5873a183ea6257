// reduce_sum over a non-last axis (threads across the inner run, every step
// along the axis one coalesced read): inner tiles (4 rows in flight a
// thread, or 8-16 in the flight tiles), the flight warps, the column sweep;
// their launch struct (InnerParams, TileShape) and launchers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ops/reduce_sum/nvidia/kernel.cuh"
#include "ops/reduce_sum/nvidia/rows.cuh"

namespace oprt::reduce_sum::gpu_kernels {

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
    gpu::enter_overlapped_kernel_wait_first();
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
    gpu::enter_overlapped_kernel_wait_first();
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
    gpu::enter_overlapped_kernel_wait_first();
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

// ---- Launchers -------------------------------------------------------------------

// bx x by tile of the inner kernel for `threads` threads and V-wide columns.
struct TileShape {
    int bx, by;
    int64_t tiles;
};
constexpr int kFinalizeThreads = 1024;
constexpr int64_t kFinalizeRowBytes = 128;
constexpr int64_t kFinalizeRowsPerThread = 4;
constexpr int64_t kFinalizeMinThreads = 256;

inline TileShape tile_of(int64_t inner, int V, int bx, int threads) {
    return {bx, threads / bx, gpu::ceil_div(gpu::ceil_div(inner, V), bx)};
}
// Tile of the second pass over `rows` partial rows: the partials sit in L2, so
// tile rows can be short (128 bytes: many blocks share the pass), and the tile
// is as tall as gives each thread about kFinalizeRowsPerThread rows (one
// round of loads). The first pass's 1 KB rows at 1024 threads gave (65536,
// 1024) axis 0 four blocks of 33 rows a thread: 71.6 -> 68.9 us f32, 43.8 ->
// 41.1 bf16 with this tile (H200, 2026-11-29).
inline TileShape finalize_tile(int64_t inner, int V, int64_t rows) {
    const int64_t columns = gpu::ceil_div(inner, V);
    const int64_t min_bx = gpu::clamp64(kFinalizeRowBytes / (V * int64_t(sizeof(float))), 1, kFinalizeThreads);
    const int64_t by =
        gpu::clamp64(gpu::next_pow2(gpu::ceil_div(rows, kFinalizeRowsPerThread)), 1, kFinalizeThreads / min_bx);
    const int64_t bx = gpu::clamp64(std::max(min_bx, kFinalizeMinThreads / by), 1, gpu::next_pow2(columns));
    return tile_of(inner, V, int(bx), int(bx * by));
}

// Calls f(std::integral_constant<int, V>) for the runtime width v (<= MaxV).
template <int MaxV, typename F>
void with_vector_width(int v, F f) {
    if constexpr (MaxV >= 8) {
        if (v >= 8) return f(std::integral_constant<int, 8>{});
    }
    if (v >= 4) return f(std::integral_constant<int, 4>{});
    if (v >= 2) return f(std::integral_constant<int, 2>{});
    f(std::integral_constant<int, 1>{});
}

// The inner tile kernel's launch: q takes the tile's shape; a block per tile and
// chunk, V floats of shared memory a thread. R rows in flight a thread: 4 (any
// width V), or 8 or 16 (the flight tile, first passes: V = 16 bytes).
template <typename Tin, typename Tout>
void launch_inner(const Tin *in, Tout *out, float *partial, InnerParams q, int V, int R, const TileShape &t,
                  dev::stream_t stream) {
    q.bx = t.bx;
    q.by = t.by;
    q.tiles = t.tiles;
    const unsigned threads = unsigned(t.bx * t.by);
    const dim3 grid(unsigned(gpu::clamp64(q.outer * q.tiles, 1, gpu::kMaxGridBlocks)), unsigned(q.chunks));
    const size_t smem = size_t(threads) * size_t(V) * sizeof(float);
    constexpr int W = gpu::vector_width<Tin>();
    if constexpr (std::is_same_v<Tin, Tout>) {  // first passes only
        if (R != 4 && V == W) {
            auto *kernel = &reduce_inner_tile_kernel<Tin, Tout, W, 16>;
            if constexpr (W == 4)  // R = 8: f32 in one pass only (flight_rows)
                if (R == 8) kernel = &reduce_inner_tile_kernel<Tin, Tout, W, 8>;
            gpu::launch_overlapped(kernel, grid, threads, smem, stream, in, out, partial, q);
            return;
        }
    }
    with_vector_width<W>(V, [&](auto width) {
        constexpr int kV = decltype(width)::value;
        gpu::launch_overlapped(&reduce_inner_tile_kernel<Tin, Tout, kV>, grid, threads, smem, stream, in, out,
                               partial, q);
    });
}

// The inner tile kernel over q's axis (q: outer, inner, L, S, ix) with V-wide columns, bx of `threads`
// across, R rows in flight a thread, the axis in `chunks` chunks: chunks > 1
// write partial rows into the workspace and a second tile pass adds them.
template <typename T>
void launch_inner_tiles(const T *in, T *out, void *workspace, InnerParams q, int V, int64_t chunks, int threads, int bx,
                        int R, dev::stream_t stream) {
    q.chunks = chunks;
    q.chunk_len = gpu::ceil_div(q.L, chunks);
    const TileShape t = tile_of(q.inner, V, bx, threads);
    float *partial = chunks == 1 ? nullptr : gpu::aligned_workspace<float>(workspace);
    launch_inner<T, T>(in, out, partial, q, V, R, t, stream);
    if (chunks == 1) return;
    // Second pass: partial is [chunks][outer][inner]; reduce its first axis,
    // with tiles narrowed like the first pass's so many blocks share it.
    InnerParams f;
    f.outer = q.outer;
    f.inner = q.inner;
    f.L = chunks;
    f.S = q.outer * q.inner;
    f.chunks = 1;
    f.chunk_len = chunks;
    f.ix = q.ix;
    f.ix.in_row_stride = q.inner;
    int fv = 4;
    while (fv > 1 && q.inner % fv != 0) fv /= 2;
    const TileShape ft = finalize_tile(q.inner, fv, chunks);
    launch_inner<float, T>(partial, out, nullptr, f, fv, 4, ft, stream);
}

// Flight tiles: R = 16 rows in flight a thread, 8 for f32 in one pass.
inline int flight_rows(int64_t W, int64_t chunks) { return W == 4 && chunks == 1 ? 8 : 16; }

// Flight warps: warps of G = kFlightWarpRows rows by (warp width) / G
// columns, R = kFlightWarpInFlight rows in flight a lane; in on a 16-byte
// boundary, whole vectors.
constexpr int kFlightWarpRows = 8;       // G
constexpr int kFlightWarpInFlight = 16;  // R
template <typename T>
void launch_flight_warp(const T *in, T *out, int64_t L, int64_t S, int64_t inner, int threads, dev::stream_t stream) {
    constexpr int W = gpu::vector_width<T>();
    constexpr int64_t columns_a_warp = dev::kWarpSize / kFlightWarpRows;
    const int64_t warps = gpu::ceil_div(inner / W, columns_a_warp);
    // A warp for every column group (the kernel does not loop): the plan's
    // inner runs (under 2^24 elements) need under 2^16 blocks.
    const int64_t blocks = gpu::ceil_div(warps, threads / dev::kWarpSize);
    gpu::launch_overlapped(&reduce_inner_flight_warp_kernel<T, kFlightWarpInFlight, kFlightWarpRows>, unsigned(blocks),
                           unsigned(threads), 0, stream, in, out, L, S, inner);
}

// Column sweep: P blocks of `threads` over the dense (L, inner) input,
// kColumnSweepBatch vectors a thread a slab, each column's P partial sums
// (workspace); then groups of finish_lanes lanes sum each column's row of
// partials. 16-bit, in on a 16-byte boundary.
constexpr int kColumnSweepBatch = 4;
template <typename T>
void launch_column_sweep(const T *in, T *out, float *partial, int64_t L, int64_t inner, int threads, int64_t P,
                         int finish_lanes, dev::stream_t stream) {
    constexpr int W = gpu::vector_width<T>();
    const int64_t rows = threads / std::max<int64_t>(inner / W, dev::kWarpSize);  // of column sums
    const size_t smem = size_t(rows * inner) * sizeof(float);
    gpu::launch_overlapped(&reduce_inner_column_sweep_kernel<T, kColumnSweepBatch>, unsigned(P), unsigned(threads),
                           smem, stream, in, partial, L, int(inner));
    // Second pass: the row kernel over each column's row of P partials.
    OuterIndex fix;
    fix.ndim = 1;
    fix.shape[0] = inner;
    fix.in_strides[0] = P;
    fix.out_strides[0] = 1;  // outer 1: the output's inner run from its start
    fix.in_row_stride = P;
    launch_row_groups<float, T>(partial, out, inner, P, finish_lanes, fix, stream);
}

}  // namespace oprt::reduce_sum::gpu_kernels
