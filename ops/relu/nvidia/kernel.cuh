// relu on the GPU: the elementwise framework with x > 0 ? x : slope * x in f32,
// rounded once to the storage type. Slope 0 is the plain ReLU, max(x, 0), so
// relu(-inf) = 0 rather than 0 * -inf = NaN; NaN stays NaN for every slope.
#pragma once

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_elementwise.cuh"

namespace oprt::relu::gpu_kernels {

struct ReluOp {
    float negative_slope;
    template <typename T>
    __device__ __forceinline__ T operator()(T a) const {
        const float x = dev::to_f32(a);
        const float negative = negative_slope == 0.0f ? (x != x ? x : 0.0f) : negative_slope * x;
        return dev::from_f32<T>(x > 0.0f ? x : negative);
    }
};

}  // namespace oprt::relu::gpu_kernels
