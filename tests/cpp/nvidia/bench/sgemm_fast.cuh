// Bench-only candidate: warp_tiling (ops/matmul/nvidia/kernel.cuh) with fewer non-FMA
// instructions in the K loop, timed by camp_sgemm_bench next to the production kernel.
//
// The production loop spends about 130 issue slots a slice on work other than its 1024 FFMAs
// (128 x 256 x 8 tile, 8 x 16 a lane): the bounds-checked global loads (64-bit row index
// math, a compare and branch per vector, a scalar fallback), the index of the shared buffer
// (buf is a run-time value) and the loop. Here:
// - interior tiles (the whole tile inside M and N, the K piece a whole number of slices)
//   load with plain 16-byte loads from pointers that advance by a constant each slice; only
//   edge tiles take the checked loads (a block-uniform branch, one body each);
// - the K loop is unrolled by two slices, so which shared buffer is read and which written
//   is known at compile time and every fragment read is LDS.128 [reg + immediate];
// - the fragment base offsets (with the swizzle) are computed once, before the loop.
// - optionally (S >= 2), interior tiles fill a ring of S shared buffers with cp.async
//   instead of staging the next slice in registers (body_ring).
// Same tile configs (WarpTiling), same split-K slabs, same summing kernel.
#pragma once

#include "ops/matmul/nvidia/kernel.cuh"

namespace sgemm_fast {

using oprt::matmul::GemmArgs;
namespace gk = oprt::matmul::gpu_kernels;
using gk::kVec;

template <typename Cfg, bool Checked, bool Unroll2 = true>
__device__ __forceinline__ void body(const GemmArgs &g, const float *__restrict__ a, const float *__restrict__ b,
                                     int64_t row0, int64_t col0, int64_t k0, int64_t k1, float (*As)[Cfg::BK][Cfg::BM],
                                     float (*Bs)[Cfg::BK][Cfg::BN], float (&acc)[Cfg::TM][Cfg::TN]) {
    constexpr int BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int kThreads = Cfg::kThreads;
    const int t = threadIdx.x, warp = t / gk::kGroup, lane = t % gk::kGroup;
    const int wrow = warp / Cfg::kWarpCols * Cfg::WM, wcol = warp % Cfg::kWarpCols * Cfg::WN;
    const int lrow = lane / Cfg::kLaneCols * kVec, lcol = lane % Cfg::kLaneCols * kVec;

    // This thread's global vectors: A row ar[v] column ac, B row br[v] column bc (the same
    // column for every v: kThreads is a multiple of BK/4 and of BN/4).
    static_assert(kThreads % (BK / kVec) == 0 && kThreads % (BN / kVec) == 0, "one column a thread");
    static_assert(Cfg::kAVecs % kThreads == 0 && Cfg::kBVecs % kThreads == 0, "whole loads a thread");
    constexpr int kAL = Cfg::kALoads, kBL = Cfg::kBLoads;
    constexpr int kARowStep = kThreads / (BK / kVec), kBRowStep = kThreads / (BN / kVec);
    const int ar = t / (BK / kVec), ac = t % (BK / kVec) * kVec;
    const int br = t / (BN / kVec), bc = t % (BN / kVec) * kVec;
    const float *pa = a + (row0 + ar) * g.a_row + k0 + ac;
    const float *pb = b + (k0 + br) * g.b_row + col0 + bc;
    const int64_t a_step = int64_t(kARowStep) * g.a_row, b_step = int64_t(kBRowStep) * g.b_row;
    const int64_t b_slice = int64_t(BK) * g.b_row;

    float a_next[kAL][kVec], b_next[kBL][kVec];
    auto fetch = [&](int64_t p0) {  // p0: the slice's first column of A (for the checks)
#pragma unroll
        for (int v = 0; v < kAL; ++v) {
            if (!Checked) {
                const float4 x = *reinterpret_cast<const float4 *>(pa + v * a_step);
                a_next[v][0] = x.x, a_next[v][1] = x.y, a_next[v][2] = x.z, a_next[v][3] = x.w;
            } else if (row0 + ar + v * kARowStep < g.m) {
                gk::load4(a + (row0 + ar + v * kARowStep) * g.a_row, p0 + ac, k1, a_next[v]);
            } else {
                a_next[v][0] = a_next[v][1] = a_next[v][2] = a_next[v][3] = 0.0f;
            }
        }
#pragma unroll
        for (int v = 0; v < kBL; ++v) {
            if (!Checked) {
                const float4 x = *reinterpret_cast<const float4 *>(pb + v * b_step);
                b_next[v][0] = x.x, b_next[v][1] = x.y, b_next[v][2] = x.z, b_next[v][3] = x.w;
            } else if (p0 + br + v * kBRowStep < k1) {
                gk::load4(b + (p0 + br + v * kBRowStep) * g.b_row, col0 + bc, g.n, b_next[v]);
            } else {
                b_next[v][0] = b_next[v][1] = b_next[v][2] = b_next[v][3] = 0.0f;
            }
        }
        pa += BK;
        pb += b_slice;
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int v = 0; v < kAL; ++v)
#pragma unroll
            for (int q = 0; q < kVec; ++q) {
                const int r = ar + v * kARowStep;
                As[buf][ac + q][r ^ Cfg::swizzle(ac + q)] = a_next[v][q];
            }
#pragma unroll
        for (int v = 0; v < kBL; ++v)
            *reinterpret_cast<float4 *>(&Bs[buf][br + v * kBRowStep][bc]) =
                make_float4(b_next[v][0], b_next[v][1], b_next[v][2], b_next[v][3]);
    };
    // Fragment offsets: A at row k, sub-block s: (wrow + s * kSubM + lrow) ^ swizzle(k).
    // swizzle(k) takes BK/4 values at most (one per 4 rows); precomputed per value.
    constexpr int kSwz = BK / kVec;
    int a_off[kSwz][TM / kVec];
#pragma unroll
    for (int w = 0; w < kSwz; ++w)
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s) a_off[w][s] = (wrow + s * Cfg::kSubM + lrow) ^ Cfg::swizzle(w * kVec);
    const int b_off = wcol + lcol;
    auto fragments = [&](int buf, int k, float (&af)[TM], float (&bf)[TN]) {
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s)
            *reinterpret_cast<float4 *>(&af[s * kVec]) =
                *reinterpret_cast<const float4 *>(&As[buf][k][a_off[k / kVec][s]]);
#pragma unroll
        for (int s = 0; s < TN / kVec; ++s)
            *reinterpret_cast<float4 *>(&bf[s * kVec]) =
                *reinterpret_cast<const float4 *>(&Bs[buf][k][b_off + s * Cfg::kSubN]);
    };
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

    const int64_t slices = (k1 - k0 + BK - 1) / BK;
    if (slices > 0) {
        fetch(k0);
        stash(0);
    }
    __syncthreads();
    if constexpr (!Unroll2) {  // one slice an iteration, the buffer index a run-time value (half the code)
        int buf = 0;
        for (int64_t i = 0; i < slices; ++i) {
            const bool more = i + 1 < slices;
            if (more) fetch(k0 + (i + 1) * BK);
            compute(buf);
            if (more) stash(buf ^ 1);
            __syncthreads();
            buf ^= 1;
        }
    } else {
        // Two slices an iteration: buffer 0 then buffer 1, each index a compile-time constant.
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
}

// Asynchronous copies (sm_80 and newer): global -> shared without registers.
__device__ __forceinline__ void copy4(const void *smem, const float *gmem) {
    const unsigned d = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(gmem) : "memory");
}
__device__ __forceinline__ void copy16(const void *smem, const float *gmem) {
    const unsigned d = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(gmem) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_copies_but() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Interior tiles through a ring of S shared buffers filled by cp.async (S - 1 slices in
// flight while one is computed, no staging registers): A copied element by element into
// its transposed, swizzled place, B 16 bytes at a time. One barrier a slice; the loop is
// unrolled by S so every buffer index is a compile-time constant. Needs (k1 - k0) a
// multiple of BK and the tile inside M and N.
template <typename Cfg, int S>
__device__ __forceinline__ void body_ring(const GemmArgs &g, const float *__restrict__ a,
                                          const float *__restrict__ b, int64_t row0, int64_t col0, int64_t k0,
                                          int64_t k1, float (*As)[Cfg::BK][Cfg::BM], float (*Bs)[Cfg::BK][Cfg::BN],
                                          float (&acc)[Cfg::TM][Cfg::TN]) {
    constexpr int BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int kThreads = Cfg::kThreads;
    static_assert(S >= 2, "a ring of 2 or more");
    static_assert(Cfg::kAVecs % kThreads == 0 && Cfg::kBVecs % kThreads == 0, "whole loads a thread");
    const int t = threadIdx.x, warp = t / gk::kGroup, lane = t % gk::kGroup;
    const int wrow = warp / Cfg::kWarpCols * Cfg::WM, wcol = warp % Cfg::kWarpCols * Cfg::WN;
    const int lrow = lane / Cfg::kLaneCols * kVec, lcol = lane % Cfg::kLaneCols * kVec;
    constexpr int kAL = Cfg::kALoads, kBL = Cfg::kBLoads;
    constexpr int kARowStep = kThreads / (BK / kVec), kBRowStep = kThreads / (BN / kVec);
    const int ar = t / (BK / kVec), ac = t % (BK / kVec) * kVec;
    const int br = t / (BN / kVec), bc = t % (BN / kVec) * kVec;
    const float *pa = a + (row0 + ar) * g.a_row + k0 + ac;
    const float *pb = b + (k0 + br) * g.b_row + col0 + bc;
    const int64_t a_step = int64_t(kARowStep) * g.a_row, b_step = int64_t(kBRowStep) * g.b_row;
    const int64_t b_slice = int64_t(BK) * g.b_row;

    auto issue = [&](int buf) {
#pragma unroll
        for (int v = 0; v < kAL; ++v)
#pragma unroll
            for (int q = 0; q < kVec; ++q)
                copy4(&As[buf][ac + q][(ar + v * kARowStep) ^ Cfg::swizzle(ac + q)], pa + v * a_step + q);
#pragma unroll
        for (int v = 0; v < kBL; ++v) copy16(&Bs[buf][br + v * kBRowStep][bc], pb + v * b_step);
        pa += BK;
        pb += b_slice;
    };
    constexpr int kSwz = BK / kVec;
    int a_off[kSwz][TM / kVec];
#pragma unroll
    for (int w = 0; w < kSwz; ++w)
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s) a_off[w][s] = (wrow + s * Cfg::kSubM + lrow) ^ Cfg::swizzle(w * kVec);
    const int b_off = wcol + lcol;
    auto fragments = [&](int buf, int k, float (&af)[TM], float (&bf)[TN]) {
#pragma unroll
        for (int s = 0; s < TM / kVec; ++s)
            *reinterpret_cast<float4 *>(&af[s * kVec]) =
                *reinterpret_cast<const float4 *>(&As[buf][k][a_off[k / kVec][s]]);
#pragma unroll
        for (int s = 0; s < TN / kVec; ++s)
            *reinterpret_cast<float4 *>(&bf[s * kVec]) =
                *reinterpret_cast<const float4 *>(&Bs[buf][k][b_off + s * Cfg::kSubN]);
    };
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

    const int64_t slices = (k1 - k0) / BK;
#pragma unroll
    for (int j = 0; j < S - 1; ++j) {  // slices 0 .. S-2 in flight; one group each, empty or not
        if (j < slices) issue(j);
        commit_copies();
    }
    // Slice i + j sits in buffer j. Before computing it: its group done (S - 2 younger ones
    // may still run), and a barrier, after which every thread is past slice i + j - 1, so its
    // buffer, (j + S - 1) % S, takes slice i + j + S - 1.
    for (int64_t i = 0; i < slices; i += S) {
#pragma unroll
        for (int j = 0; j < S; ++j) {
            if (i + j >= slices) break;
            wait_copies_but<S - 2>();
            __syncthreads();
            if (i + j + S - 1 < slices) issue((j + S - 1) % S);
            commit_copies();
            compute(j);
        }
    }
    wait_copies_but<0>();  // no copy still writing when the block ends (all groups are empty by now)
}

// S: as launch's, below.
template <typename Cfg, int S>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) kernel(GemmArgs g, bool vec_c, gk::SplitK sk) {
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int kBufs = S > 2 ? S : 2;  // the ring's S buffers, or the register path's two
    static_assert(kBufs * BK * (BM + BN) * 4 <= 48 * 1024, "static shared memory");
    __shared__ alignas(16) float As[kBufs][BK][BM];
    __shared__ alignas(16) float Bs[kBufs][BK][BN];
    const int64_t tiles = ((g.m + BM - 1) / BM) * ((g.n + BN - 1) / BN);
    const int64_t piece = int64_t(blockIdx.x) / tiles;
    int64_t row0, col0;
    gk::grouped_tile_origin<BM, BN>(g, int64_t(blockIdx.x) % tiles, &row0, &col0);
    const int64_t k0 = piece * sk.k_piece, k1 = k0 + sk.k_piece < g.k ? k0 + sk.k_piece : g.k;
    const float *a = static_cast<const float *>(g.a);
    const float *b = static_cast<const float *>(g.b);

    float acc[TM][TN] = {};
    const bool interior = row0 + BM <= g.m && col0 + BN <= g.n && (k1 - k0) % BK == 0;
    if (!interior) body<Cfg, true>(g, a, b, row0, col0, k0, k1, As, Bs, acc);
    else if constexpr (S >= 2) body_ring<Cfg, S>(g, a, b, row0, col0, k0, k1, As, Bs, acc);
    else body<Cfg, false, S == 0>(g, a, b, row0, col0, k0, k1, As, Bs, acc);

    const int t = threadIdx.x, warp = t / gk::kGroup, lane = t % gk::kGroup;
    const int wrow = warp / Cfg::kWarpCols * Cfg::WM, wcol = warp % Cfg::kWarpCols * Cfg::WN;
    const int lrow = lane / Cfg::kLaneCols * kVec, lcol = lane % Cfg::kLaneCols * kVec;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int64_t i = row0 + wrow + r / kVec * Cfg::kSubM + lrow + r % kVec;
#pragma unroll
        for (int s = 0; s < TN / kVec; ++s) {
            const int64_t j = col0 + wcol + s * Cfg::kSubN + lcol;
            if (sk.partial == nullptr) {
                gk::store4<float>(g, vec_c, i, j, &acc[r][s * kVec]);
            } else if (i < g.m && j < sk.ldp) {
                float *slab = sk.partial + piece * g.m * sk.ldp;
                *reinterpret_cast<float4 *>(slab + i * sk.ldp + j) =
                    make_float4(acc[r][s * kVec], acc[r][s * kVec + 1], acc[r][s * kVec + 2], acc[r][s * kVec + 3]);
            }
        }
    }
}

// launch_warp_tiling's contract (kernel.cuh), this kernel; S: 0 for the register-staged
// interior path unrolled by two slices, 1 for the same one slice an iteration, 2 or more for
// the cp.async ring of S buffers.
template <typename Cfg, int S>
void launch(const GemmArgs &g, bool vec_c, int splits, void *workspace, cudaStream_t stream) {
    const int64_t tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
    const gk::SplitShape s = gk::split_shape(g.k, Cfg::BK, splits);
    gk::SplitK sk;
    sk.k_piece = s.k_piece;
    if (s.pieces > 1) {
        sk.partial = reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(workspace) + 15) / 16 * 16);
        sk.ldp = (g.n + kVec - 1) / kVec * kVec;
    }
    kernel<Cfg, S><<<unsigned(tiles * s.pieces), Cfg::kThreads, 0, stream>>>(g, vec_c, sk);
    if (s.pieces == 1) return;
    const int64_t quads = g.m * (sk.ldp / kVec), blocks = (quads + 255) / 256;
    gk::matmul_splitk_sum_kernel<float><<<unsigned(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(g, vec_c, sk,
                                                                                                     s.pieces);
}

}  // namespace sgemm_fast
