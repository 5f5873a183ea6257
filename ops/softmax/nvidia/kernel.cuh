// What every softmax kernel shares, on every GPU backend (device_traits.cuh):
// out = exp(x - max) / sum(exp(x - max)) along one axis, in f32, rounded once
// on store. NaN propagates (through the sum); a slice of all -inf gives NaN,
// as in PyTorch (exp(-inf - -inf) is NaN). Here: the two exps (each term's
// 2^x, the rescales' accurate expf), the running (max, sum) rules, where a
// row's 16-byte vectors start, and the host helpers the launchers use. The
// kernel families, each with its launch struct and launcher:
// rows_registers.cuh, rows_streamed.cuh, rows_bulk.cuh, rows_cluster.cuh,
// strided.cuh, ladder.cuh; the plan: softmax_cuda.cu.
#pragma once

#include <cstdint>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_common.cuh"
#include "runtime/gpu/gpu_reduce.cuh"
#include "runtime/gpu/gpu_runtime.h"

namespace oprt::softmax::gpu_kernels {

using gpu::F32Pair;
using gpu::OuterIndex;
using gpu::Vec;

// The accurate expf (about 1 ulp): the rescales of running (max, sum) pairs,
// where one exp scales a whole partial sum, and the terms of the streaming
// kernels and of the bulk ring's f32 slices.
__device__ __forceinline__ float exp_f32(float x) { return expf(x); }

// exp(x) of each element's term in the kernels that hold a row on chip, x =
// (element - max) <= 0: the special-function unit's 2^x of x log2(e), one
// instruction where an accurate expf takes about nine, at every output
// precision. Its relative error is under 2^-22 plus |x| 2^-24 from rounding
// the product: within 2e-6 for the terms that carry weight (|x| < 14) and
// 6e-6 at the underflow edge, under the f32 tolerance of 1e-5; far below a
// 16-bit output's half unit.
constexpr float kLog2e = 1.44269504088896341f;

__device__ __forceinline__ float exp_out(float x) { return dev::exp2_approx(x * kLog2e); }

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

// ---- Running (max, sum) ------------------------------------------------------
// (m, s) stands for s * exp(m) = sum of exp(x) seen so far. Rules that keep the
// special values right:
// - m only grows on x > m, so it is never NaN; a NaN x lands in s via exp(NaN).
// - x == -inf adds nothing (its exp is 0), which also avoids exp(-inf - -inf).
// - x == +inf gives exp(inf - inf) = NaN in s: PyTorch's NaN for such rows.
// The writing pass computes exp(x - m) / s; a row of all -inf keeps m = -inf
// and there exp(-inf - -inf) = NaN, as required.
__device__ __forceinline__ void online_add(F32Pair &ms, float x) {
    if (x > ms.a) {
        ms.b *= exp_f32(ms.a - x);
        ms.a = x;
    }
    if (x != neg_inf()) ms.b += exp_f32(x - ms.a);
}

// Adds W values with one rescale: the max of the vector first, then W exps.
template <int W>
__device__ __forceinline__ void online_add_vec(F32Pair &ms, const float (&x)[W]) {
    static_assert((W & (W - 1)) == 0, "W: a power of two");
    float vmax = x[0];
#pragma unroll
    for (int e = 1; e < W; ++e) vmax = fmaxf(vmax, x[e]);
    if (vmax > ms.a) {
        ms.b *= exp_f32(ms.a - vmax);
        ms.a = vmax;
    }
    // The W exps are added pairwise before joining the running sum: W times
    // shorter f32 add chains on rows of millions of elements.
    float e[W];
#pragma unroll
    for (int i = 0; i < W; ++i) e[i] = x[i] != neg_inf() ? exp_f32(x[i] - ms.a) : 0.0f;
#pragma unroll
    for (int h = W / 2; h > 0; h /= 2)
#pragma unroll
        for (int i = 0; i < h; ++i) e[i] += e[i + h];
    ms.b += e[0];
}

// Joins two running pairs. A part with s == 0 saw only -inf and adds nothing
// (skipping it avoids exp(-inf - -inf)); a NaN s stays NaN.
struct CombineOp {
    __device__ __forceinline__ F32Pair operator()(F32Pair x, F32Pair y) const {
        const float m = fmaxf(x.a, y.a);
        const float sx = x.b == 0.0f ? 0.0f : x.b * exp_f32(x.a - m);
        const float sy = y.b == 0.0f ? 0.0f : y.b * exp_f32(y.a - m);
        return F32Pair{m, sx + sy};
    }
};

__device__ __forceinline__ F32Pair empty_pair() { return F32Pair{neg_inf(), 0.0f}; }

// How a row (x in, y out) is read and written with 16-byte vectors: its
// `head` elements before x's first 16-byte boundary go one per thread (head <
// threads), the rest as vectors, when y sits at the same offset from a
// boundary; otherwise vec is false and the row goes element by element. Rows
// of odd length thus keep their vectors ((8192, 4095) bf16: 138 us with
// vectors on aligned rows only; H200, 2026-11-30).
struct RowHead {
    int64_t head;
    bool vec;
};
template <typename T>
__device__ __forceinline__ RowHead row_head(const T *x, const T *y, int64_t L, int64_t threads) {
    const uintptr_t mx = reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes;
    const uintptr_t my = reinterpret_cast<uintptr_t>(y) % gpu::kVectorBytes;
    const int64_t h = gpu::elements_before_vector_boundary(x, L);
    if (mx != my || mx % sizeof(T) != 0 || h >= threads) return RowHead{0, false};
    return RowHead{h, true};
}

// ---- Host side ---------------------------------------------------------------

constexpr const char *kExecuteOp = "oprt_execute_softmax";

// A grid of `blocks` blocks, within the launch limit.
inline unsigned grid_of(int64_t blocks) { return unsigned(gpu::clamp64(blocks, 1, gpu::kMaxGridBlocks)); }

// Whether every row of in and out starts on an `align`-byte boundary: the
// data pointers and every outer stride (in bytes) are multiples of it.
inline bool rows_aligned(const OuterIndex &ix, const void *in, const void *out, int64_t esize, int64_t align) {
    if (!gpu::aligned_to(in, size_t(align)) || !gpu::aligned_to(out, size_t(align))) return false;
    for (int d = 0; d < ix.ndim; ++d)
        if (ix.shape[d] > 1 && ((ix.in_strides[d] * esize) % align != 0 || (ix.out_strides[d] * esize) % align != 0))
            return false;
    return true;
}

// Bytes of dynamic shared memory a block may have beside its static scratch
// (at most kStaticSmemReserve: block reductions and barriers).
constexpr size_t kStaticSmemReserve = 1024;
inline int64_t smem_room(const gpu::DeviceInfo &info) {
    return int64_t(info.smem_per_block_optin) - int64_t(kStaticSmemReserve);
}

// Blocks of `kernel` (threads, dynamic shared memory) resident at once on the device.
inline oprt_status_t resident_blocks(const char *op, const void *kernel, int threads, size_t smem,
                                     const gpu::DeviceInfo &info, int64_t *blocks) {
    int per_sm = 0;
    const oprt_status_t s = gpu::resident_blocks_per_sm(op, kernel, threads, smem, &per_sm);
    *blocks = int64_t(per_sm) * info.sm_count;
    return s;
}

}  // namespace oprt::softmax::gpu_kernels
