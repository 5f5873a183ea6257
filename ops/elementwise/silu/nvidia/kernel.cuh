// silu on the GPU: the elementwise framework (detail/gpu_elementwise.cuh:
// 16-byte vectors on dense data, a broadcast path, a strided walk) with the
// functor below, computed in f32 and rounded once to the storage type. The
// accurate expf (not __expf, whose error grows with |x| and flushes tiny
// results): silu is bound by memory traffic, not by the exp.
#pragma once

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
        const float e = expf(-fabsf(x));
        const float s = (x >= 0.0f ? 1.0f : e) / (1.0f + e);
        const float y = s == 0.0f ? -0.0f : x * s;
        // ---- end of the operator's math ----
        return dev::from_f32<T>(y);
    }
};

}  // namespace oprt::silu::gpu_kernels
