// matmul on tensor cores with mma.sync (sm_80 and newer): f16/bf16 in, f32 accumulation.
//
// Idea: a block computes a 128x128 tile of C with 8 warps, each owning a 64x32 warp tile
// (4 x 4 mma.m16n8k16 results, 64 f32 accumulators per thread). K advances 32 at a time
// through a 4-stage ring of shared-memory tiles filled with cp.async 16-byte chunks, so the
// loads of the next three k-tiles run while the warps compute on the current one. A chunk
// that crosses the edge of M, N or K copies only its valid bytes and the hardware zero-fills
// the rest, so odd sizes need no special path. Warps read their fragments with ldmatrix
// (.trans for an operand stored contiguous along M or N instead of K). Chunk positions are
// XOR-swizzled per row so the eight rows one ldmatrix phase reads sit in eight different
// bank groups (no conflicts, no padding).
//
// Layouts: A contiguous along K (row-major) or along M (column-major), B contiguous along N
// (row-major) or along K (column-major); the other stride a multiple of 8 elements and the
// base 16-byte aligned, so every cp.async chunk is aligned. C: any strides.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "operator_runtime/api.h"
#include "ops/matmul/nvidia/gemm_args.h"
#include "ops/matmul/nvidia/smem_opt_in.cuh"
#include "runtime/gpu/gpu_runtime.h"  // OPRT_GPU_BACKEND_NS

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {
namespace mma_sync_detail {

constexpr int kBM = 128, kBN = 128, kBK = 32;  // block tile
constexpr int kStages = 4;
constexpr int kThreads = 256;                  // 8 warps: 2 along M x 4 along N
constexpr int kWarpM = 64, kWarpN = 32;        // warp tile
constexpr int kTileBytes = kBM * kBK * 2;      // one operand's k-tile (128 x 32 16-bit values)
constexpr int kStageBytes = 2 * kTileBytes;    // A then B
constexpr int kSmemBytes = kStages * kStageBytes;
constexpr int kGroupM = 8;                     // block rasterization: 8 M-tiles share B tiles in L2

// Byte offset of 16-byte chunk `chunk` of row `row` in a k-tile. A K-major tile (rows along
// M or N, 32 K values = 4 chunks a row) and an MN-major tile (rows along K, 128 values = 16
// chunks a row). The XOR makes eight consecutive rows at one logical chunk land in eight
// different 16-byte bank groups.
template <bool KMajor>
__device__ __forceinline__ uint32_t chunk_offset(int row, int chunk) {
    if constexpr (KMajor) return uint32_t(row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4));
    else return uint32_t(row * 256 + ((chunk ^ (row & 7)) << 4));
}

// 16 bytes global -> shared, of which only `src_bytes` (0..16) are read; the rest is zero.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// One operand's k-tile: 128 values along MN (from mn0) x 32 along K (from k0), 512 chunks,
// two per thread. s_mn / s_k: the operand's strides along MN and K (the contiguous one is 1).
template <bool KMajor>
__device__ __forceinline__ void load_tile(uint32_t tile, const uint16_t *g, int64_t s_mn, int64_t s_k,
                                          int64_t mn0, int64_t mn_extent, int64_t k0, int64_t k_extent,
                                          int tid) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int q = tid + i * kThreads;
        int row, chunk;
        int64_t mn, k, valid;
        if constexpr (KMajor) {
            row = q >> 2, chunk = q & 3;
            mn = mn0 + row, k = k0 + chunk * 8;
            valid = mn < mn_extent ? k_extent - k : 0;
        } else {
            row = q >> 4, chunk = q & 15;
            k = k0 + row, mn = mn0 + chunk * 8;
            valid = k < k_extent ? mn_extent - mn : 0;
        }
        valid = valid < 0 ? 0 : valid > 8 ? 8 : valid;
        const uint16_t *src = valid > 0 ? g + mn * s_mn + k * s_k : g;
        cp_async16(tile + chunk_offset<KMajor>(row, chunk), src, int(valid) * 2);
    }
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

template <bool Bf16>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (Bf16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

template <bool Bf16>
__device__ __forceinline__ void store_pair(void *c, int64_t i0, int64_t i1, float v0, float v1, bool pair) {
    if constexpr (Bf16) {
        auto *p = static_cast<__nv_bfloat16 *>(c);
        if (pair) {
            *reinterpret_cast<__nv_bfloat162 *>(p + i0) = __floats2bfloat162_rn(v0, v1);
        } else {
            p[i0] = __float2bfloat16_rn(v0);
            if (i1 >= 0) p[i1] = __float2bfloat16_rn(v1);
        }
    } else {
        auto *p = static_cast<__half *>(c);
        if (pair) {
            *reinterpret_cast<__half2 *>(p + i0) = __floats2half2_rn(v0, v1);
        } else {
            p[i0] = __float2half_rn(v0);
            if (i1 >= 0) p[i1] = __float2half_rn(v1);
        }
    }
}

// AK: A is contiguous along K (else along M). BK: B is contiguous along K (else along N).
// c_pairs: C is contiguous along N with 4-byte aligned even columns (two values a store).
template <bool Bf16, bool AK, bool BK>
__global__ void __launch_bounds__(kThreads) mma_sync_kernel(GemmArgs g, bool c_pairs) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) uint8_t smem[];
    const uint32_t smem_base = uint32_t(__cvta_generic_to_shared(smem));
    const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp >> 2, warp_n = warp & 3;

    // Block -> tile, kGroupM M-tiles at a time down each column of N-tiles.
    const int64_t tiles_m = (g.m + kBM - 1) / kBM, tiles_n = (g.n + kBN - 1) / kBN;
    const int64_t bid = blockIdx.x, per_group = kGroupM * tiles_n;
    const int64_t first_m = (bid / per_group) * kGroupM;
    const int64_t group_m = tiles_m - first_m < kGroupM ? tiles_m - first_m : kGroupM;
    const int64_t m0 = (first_m + (bid % per_group) % group_m) * kBM;
    const int64_t n0 = ((bid % per_group) / group_m) * kBN;

    const auto *a = static_cast<const uint16_t *>(g.a);
    const auto *b = static_cast<const uint16_t *>(g.b);
    const int64_t k_tiles = (g.k + kBK - 1) / kBK;
    auto load_stage = [&](int stage, int64_t kt) {
        const uint32_t sa = smem_base + stage * kStageBytes, sb = sa + kTileBytes;
        load_tile<AK>(sa, a, g.a_row, g.a_col, m0, g.m, kt * kBK, g.k, tid);
        load_tile<BK>(sb, b, g.b_col, g.b_row, n0, g.n, kt * kBK, g.k, tid);
    };

    float acc[4][4][4] = {};

#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < k_tiles) load_stage(s, s);
        cp_async_commit();
    }

    for (int64_t kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<kStages - 2>();  // k-tile kt has landed (this thread's chunks)
        __syncthreads();               // ... everyone's; and everyone is done with k-tile kt - 1
        if (kt + kStages - 1 < k_tiles) load_stage(int((kt + kStages - 1) % kStages), kt + kStages - 1);
        cp_async_commit();

        const uint32_t sa = smem_base + int(kt % kStages) * kStageBytes, sb = sa + kTileBytes;
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
            uint32_t af[4][4], bf[4][2];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                const int mb = warp_m * kWarpM + mi * 16;
                if constexpr (AK) {  // rows m, 8-value chunks along k
                    ldmatrix_x4(af[mi], sa + chunk_offset<true>(mb + (lane & 15), kk * 2 + (lane >> 4)));
                } else {             // rows k, chunks along m
                    const int i = lane >> 3, r = lane & 7;
                    ldmatrix_x4_trans(af[mi], sa + chunk_offset<false>(kk * 16 + r + (i >> 1) * 8, (mb >> 3) + (i & 1)));
                }
            }
#pragma unroll
            for (int nj = 0; nj < 2; ++nj) {  // 16 columns (two n8 tiles) per ldmatrix.x4
                const int nb = warp_n * kWarpN + nj * 16;
                const int i = lane >> 3, r = lane & 7;
                uint32_t t[4];
                if constexpr (BK) {  // rows n, chunks along k
                    ldmatrix_x4(t, sb + chunk_offset<true>(nb + r + (i >> 1) * 8, kk * 2 + (i & 1)));
                } else {             // rows k, chunks along n
                    ldmatrix_x4_trans(t, sb + chunk_offset<false>(kk * 16 + r + (i & 1) * 8, (nb >> 3) + (i >> 1)));
                }
                bf[2 * nj][0] = t[0], bf[2 * nj][1] = t[1];
                bf[2 * nj + 1][0] = t[2], bf[2 * nj + 1][1] = t[3];
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma_16816<Bf16>(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
        }
    }
    cp_async_wait<0>();  // nothing may be in flight into shared memory when the block exits

    // Accumulator (mi, ni, h, e): row g + 8h of m16 tile mi, column 2t + e of n8 tile ni.
    const int gr = lane >> 2, tc = (lane & 3) * 2;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int64_t row = m0 + warp_m * kWarpM + mi * 16 + gr + 8 * h;
            if (row >= g.m) continue;
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                const int64_t col = n0 + warp_n * kWarpN + ni * 8 + tc;
                if (col >= g.n) continue;
                const bool second = col + 1 < g.n;
                const int64_t i0 = row * g.c_row + col * g.c_col;
                store_pair<Bf16>(g.c, i0, second ? i0 + g.c_col : -1, acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1],
                                 c_pairs && second);
            }
        }
#endif
}

// Contiguous along the first dimension (stride 1), the other stride usable for 16-byte
// chunks (a multiple of 8 values, or unused because that extent is 1).
inline bool chunkable(int64_t unit, int64_t other, int64_t other_extent) {
    return unit == 1 && (other_extent <= 1 || (other >= 0 && other % 8 == 0));
}

}  // namespace mma_sync_detail

// f16/bf16 on compute capability >= 8.0; A contiguous along K or M, B along N or K (the
// other stride a multiple of 8), A and B 16-byte aligned, C anywhere.
inline bool mma_sync_supports(const GemmArgs &g, oprt_dtype_t dtype) {
    using namespace mma_sync_detail;
    if (dtype != OPRT_DTYPE_F16 && dtype != OPRT_DTYPE_BF16) return false;
    if (g.m < 0 || g.n < 0 || g.k < 0) return false;
    if (reinterpret_cast<uintptr_t>(g.a) % 16 != 0 || reinterpret_cast<uintptr_t>(g.b) % 16 != 0) return false;
    const bool a_ok = chunkable(g.a_col, g.a_row, g.m) || chunkable(g.a_row, g.a_col, g.k);
    const bool b_ok = chunkable(g.b_col, g.b_row, g.k) || chunkable(g.b_row, g.b_col, g.n);
    if (!a_ok || !b_ok) return false;
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 8;
}

namespace mma_sync_detail {
template <bool Bf16, bool AK, bool BK>
cudaError_t launch(const GemmArgs &g, cudaStream_t stream) {
    auto kernel = mma_sync_kernel<Bf16, AK, BK>;
    cudaError_t e = opt_in_smem_once<mma_sync_kernel<Bf16, AK, BK>>(kSmemBytes);  // above 48 KB
    if (e != cudaSuccess) return e;
    const int64_t blocks = ((g.m + kBM - 1) / kBM) * ((g.n + kBN - 1) / kBN);
    const bool c_pairs = g.c_col == 1 && g.c_row % 2 == 0 && reinterpret_cast<uintptr_t>(g.c) % 4 == 0;
    kernel<<<dim3(unsigned(blocks)), kThreads, kSmemBytes, stream>>>(g, c_pairs);
    return cudaGetLastError();
}
}  // namespace mma_sync_detail

// Enqueues C = A @ B on `stream`; call only where mma_sync_supports(g, dtype).
inline cudaError_t mma_sync_launch(const GemmArgs &g, oprt_dtype_t dtype, cudaStream_t stream) {
    using namespace mma_sync_detail;
    if (g.m == 0 || g.n == 0) return cudaSuccess;
    const bool bf16 = dtype == OPRT_DTYPE_BF16;
    const bool ak = chunkable(g.a_col, g.a_row, g.m);  // else contiguous along M
    const bool bk = !chunkable(g.b_col, g.b_row, g.k);  // contiguous along N preferred
    if (bf16) {
        if (ak) return bk ? launch<true, true, true>(g, stream) : launch<true, true, false>(g, stream);
        return bk ? launch<true, false, true>(g, stream) : launch<true, false, false>(g, stream);
    }
    if (ak) return bk ? launch<false, true, true>(g, stream) : launch<false, true, false>(g, stream);
    return bk ? launch<false, false, true>(g, stream) : launch<false, false, false>(g, stream);
}

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
