// vector_add on the GPU: the elementwise framework with a + b computed in f32
// and rounded once to the storage type.
#pragma once

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_elementwise.cuh"

namespace oprt::vector_add::gpu_kernels {

struct AddOp {
    template <typename T>
    __device__ __forceinline__ T operator()(T a, T b) const {
        return dev::from_f32<T>(dev::to_f32(a) + dev::to_f32(b));
    }
};

}  // namespace oprt::vector_add::gpu_kernels
