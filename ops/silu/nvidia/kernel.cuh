// silu on the GPU: the elementwise framework (runtime/gpu/gpu_elementwise.cuh:
// 16-byte vectors on dense data, a broadcast path, a strided walk) with the
// functor below, computed in f32 and rounded once to the storage type. f32
// keeps the accurate expf (__expf's error grows with |x|); f16/bf16 keep 11 or
// 8 significant bits: there the special-function unit's 2^x, a few instructions
// instead of ~10, keeps the kernel memory-bound (with expf it was
// instruction-bound: 77-79% of the copy ceiling and 0.85x torch on the H200,
// 2026-11-29). Every dtype divides by 1 + e in [1, 2], where the
// fast division (a reciprocal and a multiply) is within 2 ulp: the IEEE
// division's ~10 instructions kept f32 silu at 0.82-0.96x torch (v5).
#pragma once

#include <type_traits>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_elementwise.cuh"

namespace oprt::silu::gpu_kernels {

struct SiluOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a) const {
        const float x = dev::to_f32(a);
        // ---- the operator's math: edit here (and in cpu/silu_cpu.cc) ----
        // e = exp(-|x|) never overflows; sigmoid(x) = 1 / (1 + e) for x >= 0 and
        // e / (1 + e) for x < 0. Once e underflows (x < -103) the result is -0,
        // also for x = -inf where x * 0 would be NaN. NaN stays NaN.
        float e;
        if constexpr (std::is_same<T, float>::value) {
            e = expf(-fabsf(x));
        } else {
            e = dev::exp2_approx(-fabsf(x) * 1.44269504088896341f);
        }
        const float s = __fdividef(x >= 0.0f ? 1.0f : e, 1.0f + e);  // 1 + e in [1, 2]
        const float y = s == 0.0f ? -0.0f : x * s;
        // ---- end of the operator's math ----
        return dev::from_f32<T>(y);
    }
};

}  // namespace oprt::silu::gpu_kernels
