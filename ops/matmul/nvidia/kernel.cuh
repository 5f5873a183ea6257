// The SIMT matmul kernels (CUDA cores, f32 math), plain to fastest; each step keeps
// the previous one's ideas and adds one. Every kernel takes a GemmArgs by value,
// reads T (f32, f16, bf16) and widens it to f32, sums in f32 and rounds once when
// it stores C. Blocks walk the C tiles in a 1-D grid (tile = blockIdx.x: rows of
// tiles one after another; the last step walks them in groups), so any M and N fit. Edges are bounds-checked: a tile
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
// A block computes a BM x BN tile of C in BK-deep slices of K. Its warps each own a
// WM x WN piece; a lane of the warp computes TM x TN elements as (TM/4) x (TN/4)
// sub-blocks of 4 x 4 that lie kSubM rows and kSubN columns apart, so the lanes of a
// warp read consecutive float4 of A and of B from shared memory (broadcasts, no bank
// conflicts) and keep all their sums in registers. Pipelining, three levels:
// - global -> registers: the next slice is loaded while this one is computed, then
//   stored to the other of two shared buffers (one barrier per slice). The loop takes
//   two slices an iteration, so which buffer is read and which written is fixed in the
//   code; interior tiles (most of a large product) load with unchecked vector loads
//   from pointers that step a constant each slice, only edge tiles test the bounds;
// - shared -> registers: the fragments of step k+1 are read while step k is multiplied;
// - A is stored transposed (its columns become rows of BM values), with the columns
//   XOR-swizzled by the slice row so that the transposing stores do not conflict.
// Split-K: the grid may also cut K into pieces (blockIdx.x = piece * tiles + tile); each
// piece stores its f32 partial tile into a workspace slab and matmul_splitk_sum_kernel
// adds the slabs in piece order and rounds into C. Tiles are walked in groups of
// kGroupRows tile rows, column by column, so blocks running together share B in L2.
//
// Config: block tile BM x BN x BK, warp tile WM x WN, lane tile TM x TN, and the blocks
// per SM the register budget is sized for (__launch_bounds__). A "warp" here is a group
// of 32 threads: correct for any hardware warp width.
constexpr int kGroup = 32;     // threads in a warp tile
constexpr int kGroupRows = 8;  // tile rows walked together

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int MinBlocks_>
struct WarpTiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
    static constexpr int kMinBlocks = MinBlocks_;
    static constexpr int kWarpCols = BN / WN;
    static constexpr int kThreads = (BM / WM) * kWarpCols * kGroup;
    static constexpr int kLaneRows = WM / TM, kLaneCols = WN / TN;  // lanes of a warp tile
    static constexpr int kSubM = kLaneRows * kVec, kSubN = kLaneCols * kVec;
    static constexpr int kAVecs = BM * BK / kVec, kBVecs = BK * BN / kVec;  // 4-vectors a slice
    static constexpr int kALoads = (kAVecs + kThreads - 1) / kThreads, kBLoads = (kBVecs + kThreads - 1) / kThreads;
    // The swizzle: slice row k holds A column r at r ^ swizzle(k). A warp's transposing
    // stores cover 128 / BK rows x BK columns; shifting each group of 4 columns by a
    // further 128 / BK puts the 32 stores in 32 banks. A multiple of 4: float4 stay whole.
    static constexpr int kSwizzleMask = BM >= 32 ? 31 : BM - 1;
    __device__ static int swizzle(int k) { return (k / kVec * (128 / BK)) & kSwizzleMask; }

    static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0, "tiles nest");
    static_assert(TM % kVec == 0 && TN % kVec == 0, "lane tiles are 4 x 4 sub-blocks");
    static_assert(kLaneRows * kLaneCols == kGroup, "a warp tile has 32 lanes");
    static_assert(BK == 8 || BK == 16 || BK == 32, "slices of 8, 16 or 32");
    static_assert(BM % 32 == 0 || (BM & (BM - 1)) == 0, "the swizzle stays inside the tile");
    static_assert(2 * BK * (BM + BN) * 4 <= 48 * 1024, "static shared memory");
};

// How K is cut: pieces of k_piece (a multiple of BK) columns of A; partial: the workspace
// slabs (pieces x M x ldp floats, ldp = N rounded up to 4), nullptr when K is not split.
struct SplitK {
    int64_t k_piece = 0;
    float *partial = nullptr;
    int64_t ldp = 0;
};

// The first row and column of tile `tile`: groups of kGroupRows tile rows, each group
// walked column by column (the tiles of a column share a B panel; the group's A panels
// are reused across its columns).
template <int BM, int BN>
__device__ __forceinline__ void grouped_tile_origin(const GemmArgs &g, int64_t tile, int64_t *row0, int64_t *col0) {
    const int64_t tiles_m = (g.m + BM - 1) / BM, tiles_n = (g.n + BN - 1) / BN;
    const int64_t per_group = int64_t(kGroupRows) * tiles_n;
    const int64_t first = tile / per_group * kGroupRows, in_group = tile % per_group;
    const int64_t rows = tiles_m - first < kGroupRows ? tiles_m - first : kGroupRows;
    *row0 = (first + in_group % rows) * BM;
    *col0 = in_group / rows * BN;
}

// The K loop of one block over columns k0 .. k1 of A, summing into acc. Checked: the
// loads test M, N and k1 (edge tiles); unchecked (interior tiles: the tile inside M and
// N, k1 - k0 a whole number of slices): plain vector loads from pointers that advance by
// a constant each slice. The loop takes two slices an iteration, buffer 0 then buffer 1,
// so every shared-memory address is a base fixed before the loop plus a constant.
template <typename Cfg, typename T, bool Checked>
__device__ __forceinline__ void warp_tiling_k_loop(const GemmArgs &g, int64_t row0, int64_t col0, int64_t k0,
                                                   int64_t k1, float (*As)[Cfg::BK][Cfg::BM],
                                                   float (*Bs)[Cfg::BK][Cfg::BN], float (&acc)[Cfg::TM][Cfg::TN]) {
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int kThreads = Cfg::kThreads;
    const T *a = static_cast<const T *>(g.a);
    const T *b = static_cast<const T *>(g.b);
    const int t = threadIdx.x, warp = t / kGroup, lane = t % kGroup;
    const int wrow = warp / Cfg::kWarpCols * Cfg::WM, wcol = warp % Cfg::kWarpCols * Cfg::WN;
    const int lrow = lane / Cfg::kLaneCols * kVec, lcol = lane % Cfg::kLaneCols * kVec;

    // Global -> registers. Consecutive threads take consecutive 4-vectors of a row of A
    // (BK/4 a row) and of B (BN/4 a row); a thread keeps one column and steps down the
    // rows: A rows ar + v * kARowStep at column ac, B rows br + v * kBRowStep at column bc.
    static_assert(kThreads % (BK / kVec) == 0 && kThreads % (BN / kVec) == 0, "one column a thread");
    constexpr int kARowStep = kThreads / (BK / kVec), kBRowStep = kThreads / (BN / kVec);
    const int ar = t / (BK / kVec), ac = t % (BK / kVec) * kVec;
    const int br = t / (BN / kVec), bc = t % (BN / kVec) * kVec;
    const T *pa = a + (row0 + ar) * g.a_row + k0 + ac;
    const T *pb = b + (k0 + br) * g.b_row + col0 + bc;
    const int64_t a_step = int64_t(kARowStep) * g.a_row, b_step = int64_t(kBRowStep) * g.b_row;
    float a_next[Cfg::kALoads][kVec], b_next[Cfg::kBLoads][kVec];
    auto fetch = [&](int64_t p0) {  // p0: the slice's first column of A
#pragma unroll
        for (int v = 0; v < Cfg::kALoads; ++v) {
            const int r = ar + v * kARowStep;
            if (Cfg::kAVecs % kThreads != 0 && r >= BM) break;  // a thread without an A vector
            if (!Checked) {
                const gpu::Vec<T, kVec> x = gpu::load_vec<kVec>(pa + v * a_step);
#pragma unroll
                for (int q = 0; q < kVec; ++q) a_next[v][q] = dev::to_f32(x.v[q]);
            } else if (row0 + r < g.m) {
                load4(a + (row0 + r) * g.a_row, p0 + ac, k1, a_next[v]);
            } else {
                a_next[v][0] = a_next[v][1] = a_next[v][2] = a_next[v][3] = 0.0f;
            }
        }
#pragma unroll
        for (int v = 0; v < Cfg::kBLoads; ++v) {
            const int r = br + v * kBRowStep;
            if (Cfg::kBVecs % kThreads != 0 && r >= BK) break;
            if (!Checked) {
                const gpu::Vec<T, kVec> x = gpu::load_vec<kVec>(pb + v * b_step);
#pragma unroll
                for (int q = 0; q < kVec; ++q) b_next[v][q] = dev::to_f32(x.v[q]);
            } else if (p0 + r < k1) {
                load4(b + (p0 + r) * g.b_row, col0 + bc, g.n, b_next[v]);
            } else {
                b_next[v][0] = b_next[v][1] = b_next[v][2] = b_next[v][3] = 0.0f;
            }
        }
        pa += BK;
        pb += BK * g.b_row;
    };
    // Registers -> shared buffer `buf`: A transposed and swizzled, B as it is.
    auto stash = [&](int buf) {
#pragma unroll
        for (int v = 0; v < Cfg::kALoads; ++v) {
            const int r = ar + v * kARowStep;
            if (Cfg::kAVecs % kThreads != 0 && r >= BM) break;
#pragma unroll
            for (int q = 0; q < kVec; ++q) As[buf][ac + q][r ^ Cfg::swizzle(ac + q)] = a_next[v][q];
        }
#pragma unroll
        for (int v = 0; v < Cfg::kBLoads; ++v) {
            const int r = br + v * kBRowStep;
            if (Cfg::kBVecs % kThreads != 0 && r >= BK) break;
            *reinterpret_cast<float4 *>(&Bs[buf][r][bc]) = make_float4(b_next[v][0], b_next[v][1], b_next[v][2], b_next[v][3]);
        }
    };
    // Shared -> registers: this lane's TM values of A and TN of B at slice row k. The A
    // offsets, swizzle included, take one value per 4 slice rows: computed once here.
    int a_off[BK / kVec][TM / kVec];
#pragma unroll
    for (int w = 0; w < BK / kVec; ++w)
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s) a_off[w][s] = (wrow + s * Cfg::kSubM + lrow) ^ Cfg::swizzle(w * kVec);
    const int b_off = wcol + lcol;
    auto fragments = [&](int buf, int k, float (&af)[TM], float (&bf)[TN]) {
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s)
            *reinterpret_cast<float4 *>(&af[s * kVec]) = *reinterpret_cast<const float4 *>(&As[buf][k][a_off[k / kVec][s]]);
#pragma unroll
        for (int s = 0; s < TN / kVec; ++s)
            *reinterpret_cast<float4 *>(&bf[s * kVec]) = *reinterpret_cast<const float4 *>(&Bs[buf][k][b_off + s * Cfg::kSubN]);
    };
    // One slice from buffer `buf`: the fragments of step k + 1 are read during step k's FMAs.
    auto compute = [&](int buf) {
        float af[2][TM], bf[2][TN];
        fragments(buf, 0, af[0], bf[0]);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) fragments(buf, k + 1, af[(k + 1) % 2], bf[(k + 1) % 2]);
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int c = 0; c < TN; ++c) acc[r][c] += af[k % 2][r] * bf[k % 2][c];
        }
    };

    // Slice i is computed from buffer i % 2 while slice i + 1 is loaded into registers, then
    // stored into the other buffer (nobody reads it during slice i); one barrier a slice.
    const int64_t slices = (k1 - k0 + BK - 1) / BK;
    if (slices > 0) {
        fetch(k0);
        stash(0);
    }
    __syncthreads();
    for (int64_t i = 0; i < slices; i += 2) {
        const int64_t p0 = k0 + i * BK;
        if (i + 1 < slices) fetch(p0 + BK);
        compute(0);
        if (i + 1 < slices) stash(1);
        __syncthreads();
        if (i + 1 >= slices) break;
        if (i + 2 < slices) fetch(p0 + 2 * BK);
        compute(1);
        if (i + 2 < slices) stash(0);
        __syncthreads();
    }
}

template <typename Cfg, typename T>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) matmul_warp_tiling_kernel(GemmArgs g, bool vec_c,
                                                                                          SplitK sk) {
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    __shared__ alignas(16) float As[2][BK][BM];
    __shared__ alignas(16) float Bs[2][BK][BN];
    const int64_t tiles = ((g.m + BM - 1) / BM) * ((g.n + BN - 1) / BN);
    const int64_t piece = int64_t(blockIdx.x) / tiles;
    int64_t row0, col0;
    grouped_tile_origin<BM, BN>(g, int64_t(blockIdx.x) % tiles, &row0, &col0);
    const int64_t k0 = piece * sk.k_piece, k1 = k0 + sk.k_piece < g.k ? k0 + sk.k_piece : g.k;

    float acc[TM][TN] = {};  // [sub-row block * 4 + r][sub-column block * 4 + c]
    const bool interior = row0 + BM <= g.m && col0 + BN <= g.n && (k1 - k0) % BK == 0;  // the same in the whole block
    if (interior) warp_tiling_k_loop<Cfg, T, false>(g, row0, col0, k0, k1, As, Bs, acc);
    else warp_tiling_k_loop<Cfg, T, true>(g, row0, col0, k0, k1, As, Bs, acc);

    const int t = threadIdx.x, warp = t / kGroup, lane = t % kGroup;
    const int wrow = warp / Cfg::kWarpCols * Cfg::WM, wcol = warp % Cfg::kWarpCols * Cfg::WN;
    const int lrow = lane / Cfg::kLaneCols * kVec, lcol = lane % Cfg::kLaneCols * kVec;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int64_t i = row0 + wrow + r / kVec * Cfg::kSubM + lrow + r % kVec;
#pragma unroll
        for (int s = 0; s < TN / kVec; ++s) {
            const int64_t j = col0 + wcol + s * Cfg::kSubN + lcol;
            if (sk.partial == nullptr) {
                store4<T>(g, vec_c, i, j, &acc[r][s * kVec]);
            } else if (i < g.m && j < sk.ldp) {  // f32 partial tile: ldp is a multiple of 4
                float *slab = sk.partial + piece * g.m * sk.ldp;
                *reinterpret_cast<float4 *>(slab + i * sk.ldp + j) =
                    make_float4(acc[r][s * kVec], acc[r][s * kVec + 1], acc[r][s * kVec + 2], acc[r][s * kVec + 3]);
            }
        }
    }
}

// Split-K's second step: C = the sum of the `pieces` partial slabs, added in piece order
// (the same result on every run), rounded once to T; four columns per thread.
template <typename T>
__global__ void __launch_bounds__(256) matmul_splitk_sum_kernel(GemmArgs g, bool vec_c, SplitK sk, int pieces) {
    const int64_t quads = sk.ldp / kVec, total = g.m * quads, slab = g.m * sk.ldp;
    for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < total; q += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = q / quads, j = q % quads * kVec;
        const float *src = sk.partial + i * sk.ldp + j;
        float4 s = *reinterpret_cast<const float4 *>(src);
        for (int p = 1; p < pieces; ++p) {
            const float4 v = *reinterpret_cast<const float4 *>(src + p * slab);
            s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
        }
        const float f[kVec] = {s.x, s.y, s.z, s.w};
        store4<T>(g, vec_c, i, j, f);
    }
}

// ---- warp_tiling launches (host) ---------------------------------------------------------
// The K split actually run for a request of `splits` pieces of a BK-sliced K: each piece
// a whole number of slices, none empty. pieces == 1: K is not split.
struct SplitShape {
    int64_t k_piece;
    int pieces;
};
inline SplitShape split_shape(int64_t k, int bk, int splits) {
    const int64_t slices = (k + bk - 1) / bk;
    if (splits <= 1 || slices <= 1) return {k, 1};
    const int64_t want = splits < slices ? splits : slices;
    const int64_t per = (slices + want - 1) / want * bk;
    return {per, int((k + per - 1) / per)};
}

// Workspace bytes a split run needs: the slabs, plus 16 to align them.
inline size_t split_workspace_bytes(int64_t m, int64_t n, int64_t k, int bk, int splits) {
    const SplitShape s = split_shape(k, bk, splits);
    return s.pieces > 1 ? size_t(s.pieces) * size_t(m) * size_t((n + kVec - 1) / kVec * kVec) * sizeof(float) + 16 : 0;
}

// Enqueues C = A @ B with config Cfg, K cut into `splits` pieces (workspace: at least
// split_workspace_bytes). Needs row-major A and B with rows a multiple of 4 elements
// apart and 4-element-aligned pointers; vec_c: C stored as vectors (see store4).
template <typename Cfg, typename T>
void launch_warp_tiling(const GemmArgs &g, bool vec_c, int splits, void *workspace, dev::stream_t stream) {
    const int64_t tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
    const SplitShape s = split_shape(g.k, Cfg::BK, splits);
    SplitK sk;
    sk.k_piece = s.k_piece;
    if (s.pieces > 1) {
        sk.partial = reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(workspace) + 15) / 16 * 16);
        sk.ldp = (g.n + kVec - 1) / kVec * kVec;
    }
    matmul_warp_tiling_kernel<Cfg, T><<<unsigned(tiles * s.pieces), Cfg::kThreads, 0, stream>>>(g, vec_c, sk);
    if (s.pieces == 1) return;
    const int64_t quads = g.m * (sk.ldp / kVec), blocks = (quads + 255) / 256;
    matmul_splitk_sum_kernel<T><<<unsigned(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(g, vec_c, sk, s.pieces);
}

}  // namespace oprt::matmul::gpu_kernels
