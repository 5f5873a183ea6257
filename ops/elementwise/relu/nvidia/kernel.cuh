// relu on the GPU: the elementwise framework with x > 0 ? x : slope * x in f32,
// rounded once to the storage type (NaN stays NaN: the comparison is false).
#pragma once

#include "operator_runtime/detail/device_traits.cuh"
#include "operator_runtime/detail/gpu_elementwise.cuh"

namespace oprt::relu::gpu_kernels {

struct ReluOp {
    float negative_slope;
    template <typename T>
    __device__ __forceinline__ T operator()(T a) const {
        const float x = dev::to_f32(a);
        return dev::from_f32<T>(x > 0.0f ? x : negative_slope * x);
    }
};

}  // namespace oprt::relu::gpu_kernels
