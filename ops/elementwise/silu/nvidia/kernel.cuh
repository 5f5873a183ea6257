// silu on the GPU: the elementwise framework (detail/gpu_elementwise.cuh:
// 16-byte vectors on dense data, a broadcast path, a strided walk) with the
// functor below, computed in f32 and rounded once to the storage type. f32
// keeps the accurate expf and an IEEE division (__expf's error grows with |x|).
// f16/bf16 keep 11 or 8 significant bits: there the special-function unit's 2^x
// and a fast division, a few instructions instead of ~20, keep the kernel
// memory-bound (with expf it was instruction-bound: 77-79% of the copy ceiling
// and 0.85x torch on the H200, docs/perf/performance.md of 2026-11-29).
#pragma once

#include <type_traits>

#include "operator_runtime/detail/device_traits.cuh"
#include "operator_runtime/detail/gpu_elementwise.cuh"

namespace oprt::silu::gpu_kernels {

struct SiluOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a) const {
        const float x = dev::to_f32(a);
        // ---- the operator's math: edit here (and in cpu/silu_cpu.cc) ----
        // e = exp(-|x|) never overflows; sigmoid(x) = 1 / (1 + e) for x >= 0 and
        // e / (1 + e) for x < 0. Once e underflows (x < -103) the result is -0,
        // also for x = -inf where x * 0 would be NaN. NaN stays NaN.
        float e, s;
        if constexpr (std::is_same<T, float>::value) {
            e = expf(-fabsf(x));
            s = (x >= 0.0f ? 1.0f : e) / (1.0f + e);
        } else {  // 1 + e is in [1, 2]: the fast division is within 2 ulp there
            e = dev::exp2_approx(-fabsf(x) * 1.44269504088896341f);
            s = __fdividef(x >= 0.0f ? 1.0f : e, 1.0f + e);
        }
        const float y = s == 0.0f ? -0.0f : x * s;
        // ---- end of the operator's math ----
        return dev::from_f32<T>(y);
    }
};

}  // namespace oprt::silu::gpu_kernels
