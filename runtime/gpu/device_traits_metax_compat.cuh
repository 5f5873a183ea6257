// Compile-only check mode for the MetaX units (scripts/ci/metax_compat.sh):
// under nvcc, the MACA names device_traits_metax.cuh and runtime/metax/device.maca
// use are mapped onto their CUDA counterparts, so the MetaX translation units
// are compiled with 64-lane warps and 64-bit lane masks on a machine without
// MACA. After this header, CUDA-only names that MetaX code must not use
// directly (warp intrinsics outside the traits, cluster and launch-attribute
// APIs, the cuda* runtime) are poisoned: using one in a kernel or launch unit
// is a compile error. Objects built this way are never linked or run.
#pragma once

#if !defined(OPRT_METAX_COMPAT_NVCC)
#error "device_traits_metax_compat.cuh is for the nvcc compatibility check only"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// 16-bit types (maca_fp16.h provides __half; maca_bfloat16.h __maca_bfloat16).
using __maca_bfloat16 = __nv_bfloat16;

// Runtime types, values and functions (mc_runtime.h).
using mcStream_t = cudaStream_t;
using mcError_t = cudaError_t;
using mcPointerAttribute_t = cudaPointerAttributes;
using mcStreamCaptureMode = cudaStreamCaptureMode;
using mcFuncAttributes = cudaFuncAttributes;
#define mcSuccess cudaSuccess
#define mcGetLastError cudaGetLastError
#define mcGetErrorName cudaGetErrorName
#define mcGetErrorString cudaGetErrorString
#define mcGetDevice cudaGetDevice
#define mcSetDevice cudaSetDevice
#define mcGetDeviceCount cudaGetDeviceCount
#define mcDeviceGetAttribute cudaDeviceGetAttribute
#define mcDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define mcDevAttrMaxThreadsPerMultiProcessor cudaDevAttrMaxThreadsPerMultiProcessor
#define mcDevAttrWarpSize cudaDevAttrWarpSize
#define mcDevAttrMaxSharedMemoryPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define mcDevAttrComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#define mcDevAttrComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor
#define mcPointerGetAttributes cudaPointerGetAttributes
#define mcMemoryTypeDevice cudaMemoryTypeDevice
#define mcMemoryTypeManaged cudaMemoryTypeManaged
#define mcMemoryTypeHost cudaMemoryTypeHost
#define mcFuncSetAttribute cudaFuncSetAttribute
#define mcOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define mcFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define mcThreadExchangeStreamCaptureMode cudaThreadExchangeStreamCaptureMode
#define mcStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed

// MACA's warp intrinsics take a 64-bit lane mask and a width up to 64. CUDA's
// take a 32-bit mask; these wrappers accept the MACA form (the mask only has to
// type-check here: nothing built in this mode runs).
namespace oprt_metax_compat {
template <typename V>
__device__ __forceinline__ V shfl_xor_sync(unsigned long long mask, V v, int lane_mask, int width) {
    return ::__shfl_xor_sync(static_cast<unsigned>(mask), v, lane_mask, width);
}
template <typename V>
__device__ __forceinline__ V shfl_down_sync(unsigned long long mask, V v, unsigned delta, int width) {
    return ::__shfl_down_sync(static_cast<unsigned>(mask), v, delta, width);
}
template <typename V>
__device__ __forceinline__ V shfl_sync(unsigned long long mask, V v, int src, int width) {
    return ::__shfl_sync(static_cast<unsigned>(mask), v, src, width);
}
__device__ __forceinline__ unsigned long long ballot_sync(unsigned long long mask, bool p) {
    return ::__ballot_sync(static_cast<unsigned>(mask), p);
}
__device__ __forceinline__ int any_sync(unsigned long long mask, bool p) {
    return ::__any_sync(static_cast<unsigned>(mask), p);
}
__device__ __forceinline__ int all_sync(unsigned long long mask, bool p) {
    return ::__all_sync(static_cast<unsigned>(mask), p);
}
__device__ __forceinline__ void syncwarp(unsigned long long mask) { ::__syncwarp(static_cast<unsigned>(mask)); }
}  // namespace oprt_metax_compat
#define __shfl_xor_sync oprt_metax_compat::shfl_xor_sync
#define __shfl_down_sync oprt_metax_compat::shfl_down_sync
#define __shfl_sync oprt_metax_compat::shfl_sync
#define __ballot_sync oprt_metax_compat::ballot_sync
#define __any_sync oprt_metax_compat::any_sync
#define __all_sync oprt_metax_compat::all_sync
#define __syncwarp oprt_metax_compat::syncwarp
