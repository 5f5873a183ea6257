// The SIMT matmul kernels (CUDA cores, f32 math), plain to fastest; each step keeps
// the previous one's ideas and adds one. Every kernel takes a GemmArgs by value,
// reads T (f32, f16, bf16) and widens it to f32, sums in f32 and rounds once when
// it stores C. Blocks walk the C tiles in a 1-D grid (tile = blockIdx.x: rows of
// tiles one after another), so any M and N fit. Edges are bounds-checked: a tile
// past M, N or K loads zeros and stores nothing. The tensor-core kernels are in
// mma_sync.cuh and wgmma.cuh.
#pragma once

#include <cstdint>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_common.cuh"
#include "ops/matmul/nvidia/gemm_args.h"

namespace oprt::matmul::gpu_kernels {

template <typename T>
__device__ __forceinline__ float load_a(const GemmArgs &g, int64_t i, int64_t p) {
    return i < g.m && p < g.k ? dev::to_f32(static_cast<const T *>(g.a)[i * g.a_row + p * g.a_col]) : 0.0f;
}
template <typename T>
__device__ __forceinline__ float load_b(const GemmArgs &g, int64_t p, int64_t j) {
    return p < g.k && j < g.n ? dev::to_f32(static_cast<const T *>(g.b)[p * g.b_row + j * g.b_col]) : 0.0f;
}
template <typename T>
__device__ __forceinline__ void store_c(const GemmArgs &g, int64_t i, int64_t j, float v) {
    if (i < g.m && j < g.n) static_cast<T *>(g.c)[i * g.c_row + j * g.c_col] = dev::from_f32<T>(v);
}

// The first row and column of this block's BM x BN tile of C.
template <int BM, int BN>
__device__ __forceinline__ void tile_origin(const GemmArgs &g, int64_t *row0, int64_t *col0) {
    const int64_t tiles_n = (g.n + BN - 1) / BN;
    *row0 = int64_t(blockIdx.x) / tiles_n * BM;
    *col0 = int64_t(blockIdx.x) % tiles_n * BN;
}

// ---- Step 1: naive -----------------------------------------------------------------------
// One thread per C element, a dot product straight from global memory. Neighbouring
// threads take neighbouring columns, so B and C accesses coalesce for row-major B, C.
constexpr int kNaiveTile = 16;  // 16 x 16 threads a block

template <typename T>
__global__ void __launch_bounds__(kNaiveTile *kNaiveTile) matmul_naive_kernel(GemmArgs g) {
    int64_t row0, col0;
    tile_origin<kNaiveTile, kNaiveTile>(g, &row0, &col0);
    const int64_t i = row0 + threadIdx.x / kNaiveTile, j = col0 + threadIdx.x % kNaiveTile;
    if (i >= g.m || j >= g.n) return;
    float s = 0.0f;
    for (int64_t p = 0; p < g.k; ++p) s += load_a<T>(g, i, p) * load_b<T>(g, p, j);
    store_c<T>(g, i, j, s);
}

// ---- Step 2: smem_tiles -------------------------------------------------------------------
// A block stages a 32 x 32 tile of A and of B in shared memory, then every thread
// reads its row and column of the tiles from there: each global element is loaded
// once per block instead of once per thread (32x less traffic to L2).
constexpr int kSmemTile = 32;

template <typename T>
__global__ void __launch_bounds__(kSmemTile *kSmemTile) matmul_smem_tiles_kernel(GemmArgs g) {
    __shared__ float As[kSmemTile][kSmemTile];
    __shared__ float Bs[kSmemTile][kSmemTile + 1];  // +1: a column read hits 32 banks
    int64_t row0, col0;
    tile_origin<kSmemTile, kSmemTile>(g, &row0, &col0);
    const int ty = threadIdx.x / kSmemTile, tx = threadIdx.x % kSmemTile;
    float s = 0.0f;
    for (int64_t p0 = 0; p0 < g.k; p0 += kSmemTile) {
        As[ty][tx] = load_a<T>(g, row0 + ty, p0 + tx);
        Bs[ty][tx] = load_b<T>(g, p0 + ty, col0 + tx);
        __syncthreads();
#pragma unroll 8
        for (int p = 0; p < kSmemTile; ++p) s += As[ty][p] * Bs[p][tx];
        __syncthreads();
    }
    store_c<T>(g, row0 + ty, col0 + tx, s);
}

// ---- Step 3: blocking_1d ----------------------------------------------------------------
// Each thread computes kTM1 elements of one column of C: a B value read from shared
// memory is reused kTM1 times from a register, so shared-memory loads per FMA fall
// from 2 to about 1 + 1/kTM1. Tile 64 x 64 x 8, 512 threads.
constexpr int kBM1 = 64, kBN1 = 64, kBK1 = 8, kTM1 = 8;
constexpr int kThreads1 = kBM1 * kBN1 / kTM1;

template <typename T>
__global__ void __launch_bounds__(kThreads1) matmul_blocking_1d_kernel(GemmArgs g) {
    __shared__ float As[kBK1][kBM1];  // A transposed: a thread's kTM1 rows sit side by side
    __shared__ float Bs[kBK1][kBN1];
    int64_t row0, col0;
    tile_origin<kBM1, kBN1>(g, &row0, &col0);
    const int t = threadIdx.x;
    const int col = t % kBN1, rows = t / kBN1 * kTM1;  // this thread: C[rows .. rows + kTM1)[col]
    float acc[kTM1] = {};
    for (int64_t p0 = 0; p0 < g.k; p0 += kBK1) {
        As[t % kBK1][t / kBK1] = load_a<T>(g, row0 + t / kBK1, p0 + t % kBK1);  // 512 = 64 x 8 elements
        Bs[t / kBN1][t % kBN1] = load_b<T>(g, p0 + t / kBN1, col0 + t % kBN1);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kBK1; ++p) {
            const float b = Bs[p][col];
#pragma unroll
            for (int r = 0; r < kTM1; ++r) acc[r] += As[p][rows + r] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < kTM1; ++r) store_c<T>(g, row0 + rows + r, col0 + col, acc[r]);
}

// ---- Step 4: blocking_2d ----------------------------------------------------------------
// Each thread computes an 8 x 8 block of C: per k it loads 8 A and 8 B values into
// registers and does 64 FMAs with them (an outer product), 4 FMAs per shared load.
// Tile 128 x 128 x 8, 256 threads; the global loads are still one element each.
constexpr int kBM = 128, kBN = 128, kTM = 8, kTN = 8;
constexpr int kBK2 = 8;
constexpr int kThreads2 = kBM * kBN / (kTM * kTN);  // 256

template <typename T>
__global__ void __launch_bounds__(kThreads2) matmul_blocking_2d_kernel(GemmArgs g) {
    __shared__ float As[kBK2][kBM];
    __shared__ float Bs[kBK2][kBN];
    int64_t row0, col0;
    tile_origin<kBM, kBN>(g, &row0, &col0);
    const int t = threadIdx.x;
    const int trow = t / (kBN / kTN) * kTM, tcol = t % (kBN / kTN) * kTN;
    float acc[kTM][kTN] = {};
    float a_reg[kTM], b_reg[kTN];
    for (int64_t p0 = 0; p0 < g.k; p0 += kBK2) {
        // 128 x 8 elements of each tile over 256 threads: 4 each.
        for (int e = t; e < kBM * kBK2; e += kThreads2) {
            As[e % kBK2][e / kBK2] = load_a<T>(g, row0 + e / kBK2, p0 + e % kBK2);
            Bs[e / kBN][e % kBN] = load_b<T>(g, p0 + e / kBN, col0 + e % kBN);
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kBK2; ++p) {
#pragma unroll
            for (int r = 0; r < kTM; ++r) a_reg[r] = As[p][trow + r];
#pragma unroll
            for (int c = 0; c < kTN; ++c) b_reg[c] = Bs[p][tcol + c];
#pragma unroll
            for (int r = 0; r < kTM; ++r)
#pragma unroll
                for (int c = 0; c < kTN; ++c) acc[r][c] += a_reg[r] * b_reg[c];
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < kTM; ++r)
#pragma unroll
        for (int c = 0; c < kTN; ++c) store_c<T>(g, row0 + trow + r, col0 + tcol + c, acc[r][c]);
}

// ---- Vector access for steps 5 and 6 ----------------------------------------------------
// Both need row-major A and B (a_col == b_col == 1) with rows and pointers aligned to
// kVec elements: then 4 consecutive elements are one 16-byte (f32) or 8-byte load.
// A vector that runs past the matrix edge is loaded element by element.
constexpr int kVec = 4;

template <typename T>
__device__ __forceinline__ void load4(const T *row, int64_t col, int64_t cols, float (&f)[kVec]) {
    if (col + kVec <= cols) {
        const gpu::Vec<T, kVec> v = gpu::load_vec<kVec>(row + col);
#pragma unroll
        for (int e = 0; e < kVec; ++e) f[e] = dev::to_f32(v.v[e]);
    } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) f[e] = col + e < cols ? dev::to_f32(row[col + e]) : 0.0f;
    }
}

// Four consecutive elements of a row of C: one vector store when the row is dense and
// aligned (checked once per launch: vec_c) and all four are inside.
template <typename T>
__device__ __forceinline__ void store4(const GemmArgs &g, bool vec_c, int64_t i, int64_t j, const float *f) {
    if (i >= g.m) return;
    T *c = static_cast<T *>(g.c);
    if (vec_c && j + kVec <= g.n) {
        gpu::Vec<T, kVec> v;
#pragma unroll
        for (int e = 0; e < kVec; ++e) v.v[e] = dev::from_f32<T>(f[e]);
        gpu::store_vec<kVec>(c + i * g.c_row + j, v);
        return;
    }
#pragma unroll
    for (int e = 0; e < kVec; ++e)
        if (j + e < g.n) c[i * g.c_row + (j + e) * g.c_col] = dev::from_f32<T>(f[e]);
}

// ---- Step 5: vectorized -----------------------------------------------------------------
// Step 4 with vector loads: each thread fetches 4 consecutive elements of a row of A
// (stored transposed in shared memory, so the compute loop reads a thread's 8 A
// values as two float4) and of B, and reads its B values as float4 too.
template <typename T>
__global__ void __launch_bounds__(kThreads2) matmul_vectorized_kernel(GemmArgs g, bool vec_c) {
    __shared__ alignas(16) float As[kBK2][kBM];
    __shared__ alignas(16) float Bs[kBK2][kBN];
    int64_t row0, col0;
    tile_origin<kBM, kBN>(g, &row0, &col0);
    const T *a = static_cast<const T *>(g.a);
    const T *b = static_cast<const T *>(g.b);
    const int t = threadIdx.x;
    const int trow = t / (kBN / kTN) * kTM, tcol = t % (kBN / kTN) * kTN;
    // Loads: A tile 128 x 8 = 256 vectors of 4 (a row, a half of its 8 columns);
    // B tile 8 x 128 = 256 vectors (a row, 4 columns).
    const int a_r = t / (kBK2 / kVec), a_c = t % (kBK2 / kVec) * kVec;
    const int b_r = t / (kBN / kVec), b_c = t % (kBN / kVec) * kVec;
    float acc[kTM][kTN] = {};
    for (int64_t p0 = 0; p0 < g.k; p0 += kBK2) {
        float f[kVec];
        if (row0 + a_r < g.m) load4(a + (row0 + a_r) * g.a_row, p0 + a_c, g.k, f);
        else f[0] = f[1] = f[2] = f[3] = 0.0f;
#pragma unroll
        for (int e = 0; e < kVec; ++e) As[a_c + e][a_r] = f[e];
        if (p0 + b_r < g.k) load4(b + (p0 + b_r) * g.b_row, col0 + b_c, g.n, f);
        else f[0] = f[1] = f[2] = f[3] = 0.0f;
        *reinterpret_cast<float4 *>(&Bs[b_r][b_c]) = make_float4(f[0], f[1], f[2], f[3]);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kBK2; ++p) {
            float a_reg[kTM], b_reg[kTN];
#pragma unroll
            for (int q = 0; q < kTM; q += kVec) *reinterpret_cast<float4 *>(&a_reg[q]) = *reinterpret_cast<const float4 *>(&As[p][trow + q]);
#pragma unroll
            for (int q = 0; q < kTN; q += kVec) *reinterpret_cast<float4 *>(&b_reg[q]) = *reinterpret_cast<const float4 *>(&Bs[p][tcol + q]);
#pragma unroll
            for (int r = 0; r < kTM; ++r)
#pragma unroll
                for (int c = 0; c < kTN; ++c) acc[r][c] += a_reg[r] * b_reg[c];
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < kTM; ++r)
#pragma unroll
        for (int c = 0; c < kTN; c += kVec) store4<T>(g, vec_c, row0 + trow + r, col0 + tcol + c, &acc[r][c]);
}

// ---- Step 6: warp_tiling (the production f32 kernel) ------------------------------------
// Tile 128 x 128 x 16, 256 threads = 8 warps in 2 x 4, each warp owning a 64 x 32
// piece of C; a lane computes 8 x 8 elements as 2 x 2 sub-blocks of 4 x 4 spread 32
// rows and 16 columns apart, so the lanes of a warp read 8 distinct float4 of A and
// 4 of B per k (broadcasts, no bank conflicts) and keep their results in registers.
// Double buffered: the next K slice is loaded from global memory into registers
// while this one is computed, then stored to the other shared buffer (one barrier
// per slice).
constexpr int kBK = 16;
constexpr int kWarpRows = 2, kWarpCols = 4;          // warps in the block
constexpr int kWM = kBM / kWarpRows, kWN = kBN / kWarpCols;  // 64 x 32 per warp
constexpr int kLaneRows = 8, kLaneCols = 4;          // lanes in the warp (8 x 4 = 32)
constexpr int kSubM = kWM / 2, kSubN = kWN / 2;      // 32 x 16: lanes x 4 elements
constexpr int kThreads = kWarpRows * kWarpCols * 32;  // 256
constexpr int kALoads = kBM * kBK / kVec / kThreads;  // vectors of A per thread per slice: 2
constexpr int kBLoads = kBK * kBN / kVec / kThreads;  // and of B: 2

template <typename T>
__global__ void __launch_bounds__(kThreads, 2) matmul_warp_tiling_kernel(GemmArgs g, bool vec_c) {
    __shared__ alignas(16) float As[2][kBK][kBM];
    __shared__ alignas(16) float Bs[2][kBK][kBN];
    int64_t row0, col0;
    tile_origin<kBM, kBN>(g, &row0, &col0);
    const T *a = static_cast<const T *>(g.a);
    const T *b = static_cast<const T *>(g.b);
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int wrow = warp / kWarpCols * kWM, wcol = warp % kWarpCols * kWN;
    const int lrow = lane / kLaneCols * kVec, lcol = lane % kLaneCols * kVec;

    float a_next[kALoads][kVec], b_next[kBLoads][kVec];
    // Slice p0 into registers: A vector v of this thread is row (t + v*256) / 4 of the
    // tile, columns ((t + v*256) % 4) * 4; B vector v is row (t + v*256) / 32.
    auto fetch = [&](int64_t p0) {
#pragma unroll
        for (int v = 0; v < kALoads; ++v) {
            const int e = t + v * kThreads, r = e / (kBK / kVec), c = e % (kBK / kVec) * kVec;
            if (row0 + r < g.m) load4(a + (row0 + r) * g.a_row, p0 + c, g.k, a_next[v]);
            else a_next[v][0] = a_next[v][1] = a_next[v][2] = a_next[v][3] = 0.0f;
        }
#pragma unroll
        for (int v = 0; v < kBLoads; ++v) {
            const int e = t + v * kThreads, r = e / (kBN / kVec), c = e % (kBN / kVec) * kVec;
            if (p0 + r < g.k) load4(b + (p0 + r) * g.b_row, col0 + c, g.n, b_next[v]);
            else b_next[v][0] = b_next[v][1] = b_next[v][2] = b_next[v][3] = 0.0f;
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int v = 0; v < kALoads; ++v) {
            const int e = t + v * kThreads, r = e / (kBK / kVec), c = e % (kBK / kVec) * kVec;
#pragma unroll
            for (int q = 0; q < kVec; ++q) As[buf][c + q][r] = a_next[v][q];
        }
#pragma unroll
        for (int v = 0; v < kBLoads; ++v) {
            const int e = t + v * kThreads, r = e / (kBN / kVec), c = e % (kBN / kVec) * kVec;
            *reinterpret_cast<float4 *>(&Bs[buf][r][c]) = make_float4(b_next[v][0], b_next[v][1], b_next[v][2], b_next[v][3]);
        }
    };

    float acc[2 * kVec][2 * kVec] = {};  // [sub-row block * 4 + r][sub-col block * 4 + c]
    int buf = 0;
    if (g.k > 0) {
        fetch(0);
        stash(0);
    }
    __syncthreads();
    for (int64_t p0 = 0; p0 < g.k; p0 += kBK) {
        const bool more = p0 + kBK < g.k;
        if (more) fetch(p0 + kBK);  // in flight while this slice is computed
#pragma unroll
        for (int p = 0; p < kBK; ++p) {
            float a_reg[2 * kVec], b_reg[2 * kVec];
#pragma unroll
            for (int s = 0; s < 2; ++s) {
                *reinterpret_cast<float4 *>(&a_reg[s * kVec]) =
                    *reinterpret_cast<const float4 *>(&As[buf][p][wrow + s * kSubM + lrow]);
                *reinterpret_cast<float4 *>(&b_reg[s * kVec]) =
                    *reinterpret_cast<const float4 *>(&Bs[buf][p][wcol + s * kSubN + lcol]);
            }
#pragma unroll
            for (int r = 0; r < 2 * kVec; ++r)
#pragma unroll
                for (int c = 0; c < 2 * kVec; ++c) acc[r][c] += a_reg[r] * b_reg[c];
        }
        if (more) stash(buf ^ 1);  // the other buffer: nobody reads it in this slice
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int r = 0; r < 2 * kVec; ++r)
#pragma unroll
        for (int s = 0; s < 2; ++s)
            store4<T>(g, vec_c, row0 + wrow + (r / kVec) * kSubM + lrow + r % kVec,
                      col0 + wcol + s * kSubN + lcol, &acc[r][s * kVec]);
}

}  // namespace oprt::matmul::gpu_kernels
