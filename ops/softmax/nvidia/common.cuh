// What every softmax kernel shares: the exponentials, the running (max, sum)
// pair and how one row is read and written with 16-byte vectors.
// out = exp(x - max) / sum(exp(x - max)) along one axis, in f32, rounded once
// on store. NaN propagates (through the sum); a slice of all -inf gives NaN,
// as in PyTorch (exp(-inf - -inf) is NaN); +inf gives NaN (exp(inf - inf)).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_common.cuh"
#include "runtime/gpu/gpu_reduce.cuh"

namespace oprt::softmax::gpu_kernels {

using gpu::F32Pair;
using gpu::OuterIndex;
using gpu::Vec;

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

// The accurate expf (about 1 ulp): f32 results stay within ~1e-6 of a float64
// reference, which __expf's |x|-proportional error would not.
__device__ __forceinline__ float exp_f32(float x) { return expf(x); }

// exp(x - m) at the precision the output keeps: the accurate expf for f32;
// for f16/bf16 (11 or 8 significant bits) the special-function unit's 2^x of
// (x - m) * log2(e), one instruction instead of ~10. exp(-inf) is 0 either way.
constexpr float kLog2e = 1.44269504088896341f;
template <typename T>
__device__ __forceinline__ float exp_out(float x, float m) {
    if constexpr (std::is_same<T, float>::value) return expf(x - m);
    else return dev::exp2_approx((x - m) * kLog2e);
}

// ---- Running (max, sum) ------------------------------------------------------
// (m, s) stands for s * exp(m) = sum of exp(x) seen so far. m only grows on
// x > m, so it is never NaN; a NaN x lands in s via exp(NaN). x == -inf adds
// nothing, which also avoids exp(-inf - -inf); a row of all -inf keeps
// (-inf, 0) and its outputs exp(-inf - -inf) * (1 / 0) are NaN.
__device__ __forceinline__ F32Pair empty_pair() { return F32Pair{neg_inf(), 0.0f}; }

__device__ __forceinline__ void online_add(F32Pair &ms, float x) {
    if (x > ms.a) {
        ms.b *= exp_f32(ms.a - x);
        ms.a = x;
    }
    if (x != neg_inf()) ms.b += exp_f32(x - ms.a);
}

// Joins two pairs. A part with s == 0 saw only -inf and adds nothing
// (skipping it avoids exp(-inf - -inf)); a NaN s stays NaN.
struct CombineOp {
    __device__ __forceinline__ F32Pair operator()(F32Pair x, F32Pair y) const {
        const float m = fmaxf(x.a, y.a);
        const float sx = x.b == 0.0f ? 0.0f : x.b * exp_f32(x.a - m);
        const float sy = y.b == 0.0f ? 0.0f : y.b * exp_f32(y.a - m);
        return F32Pair{m, sx + sy};
    }
};

// ---- One row through 16-byte vectors ------------------------------------------
// A row is walked as "vectors" q = 0, 1, ... of P elements (16 bytes), counted
// from the 16-byte boundary at or before its first element: vector q holds
// row elements q * P - shift ... q * P - shift + P - 1, those outside
// [0, L) being padding (-inf on load: it does not move the max and its exp is
// 0; never stored). A vector wholly inside the row is one 16-byte load and
// one 16-byte store; the first and last ones of a row off boundaries go
// element by element. This needs in and out at the same offset from a
// boundary (two dense tensors of equal strides); otherwise `vec` is false,
// shift is 0 and every vector goes element by element. I: the index type,
// 32-bit where rows are shorter than 2^31 elements (fewer registers).
template <typename T, typename I = int64_t>
struct RowIO {
    static constexpr int P = gpu::vector_width<T>();
    const T *x;
    T *y;
    I L;
    I shift;
    bool vec;

    // The row at x (in) and y (out); `max_vecs`: the vectors the caller can
    // hold. A row off boundaries that would need one more than that goes
    // element by element (shift 0).
    __device__ __forceinline__ RowIO(const T *x_, T *y_, I L_, I max_vecs) : x(x_), y(y_), L(L_) {
        const uintptr_t mx = reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes;
        const uintptr_t my = reinterpret_cast<uintptr_t>(y) % gpu::kVectorBytes;
        shift = I(mx / sizeof(T));
        vec = mx == my && mx % sizeof(T) == 0 && (L + shift + P - 1) / P <= max_vecs;
        if (!vec) shift = 0;
    }
    __device__ __forceinline__ I vectors() const { return (L + shift + P - 1) / P; }

    __device__ __forceinline__ void load(I q, float (&f)[P]) const {
        const I r = q * P - shift;  // row index of the vector's first element
        if (vec && r >= 0 && r + P <= L) {
            gpu::widen(gpu::load_vec<P>(x + r), f);
        } else {
#pragma unroll
            for (int e = 0; e < P; ++e) f[e] = r + e >= 0 && r + e < L ? dev::to_f32(x[r + e]) : neg_inf();
        }
    }
    // y = f * scale on the row's elements of vector q.
    __device__ __forceinline__ void store(I q, const float (&f)[P], float scale) const {
        const I r = q * P - shift;
        if (vec && r >= 0 && r + P <= L) {
            Vec<T, P> v;
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(f[e] * scale);
            gpu::store_out_vec<P>(y + r, v);
        } else {
#pragma unroll
            for (int e = 0; e < P; ++e)
                if (r + e >= 0 && r + e < L) y[r + e] = dev::from_f32<T>(f[e] * scale);
        }
    }
};

// Vectors a plan must hold for rows of L elements: one more than L / P where
// L is not whole vectors, so rows of dense tensors, whose starts walk every
// offset from a boundary, keep their vector loads.
__host__ __device__ inline int64_t row_vectors(int64_t L, int64_t P) { return L % P == 0 ? L / P : L / P + 2; }

}  // namespace oprt::softmax::gpu_kernels
