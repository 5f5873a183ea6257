// Device traits: everything a GPU kernel of this project takes from its
// toolchain, in one small header. Kernels use only these names (plus plain
// CUDA C++), so another toolchain (MetaX MACA) swaps this header and reuses
// every kernel unchanged.
//
// To swap: define OPRT_DEVICE_TRAITS_HEADER to a header that defines the same
// names in namespace oprt::dev. Without it this file is the CUDA version.
//
// OPRT_DEVICE_WARP_SIZE=64 under nvcc is a compile-only check mode: kernels are
// instantiated with 64-lane warps and 64-bit lane masks so that an algorithm
// that assumes 32 lanes fails to compile or shows up in review. Code built that
// way must not run on an NVIDIA GPU.
#pragma once

#if defined(OPRT_DEVICE_TRAITS_HEADER)
#include OPRT_DEVICE_TRAITS_HEADER
#else

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#ifndef OPRT_DEVICE_WARP_SIZE
#define OPRT_DEVICE_WARP_SIZE 32
#endif

namespace oprt::dev {

// ---- Warp shape --------------------------------------------------------------
constexpr int kWarpSize = OPRT_DEVICE_WARP_SIZE;
static_assert(kWarpSize == 32 || kWarpSize == 64, "warps have 32 or 64 lanes");
// Largest block any kernel here launches, and the warps it holds.
constexpr int kMaxBlockThreads = 1024;
constexpr int kMaxWarps = kMaxBlockThreads / kWarpSize;

// One bit per lane.
using lane_mask_t = std::conditional_t<kWarpSize == 64, unsigned long long, unsigned int>;
constexpr lane_mask_t kFullLaneMask = ~lane_mask_t(0);

// ---- Shuffles and votes (every lane of the warp must call them) --------------
// The CUDA intrinsics take a 32-bit mask; in the 64-lane check mode the cast
// only has to compile.
template <typename V>
__device__ __forceinline__ V shfl_xor(V v, int lane_mask) {
    return __shfl_xor_sync(static_cast<unsigned>(kFullLaneMask), v, lane_mask, kWarpSize);
}
template <typename V>
__device__ __forceinline__ V shfl_down(V v, unsigned delta) {
    return __shfl_down_sync(static_cast<unsigned>(kFullLaneMask), v, delta, kWarpSize);
}
template <typename V>
__device__ __forceinline__ V shfl(V v, int src_lane) {
    return __shfl_sync(static_cast<unsigned>(kFullLaneMask), v, src_lane, kWarpSize);
}
__device__ __forceinline__ lane_mask_t ballot(bool pred) {
    return static_cast<lane_mask_t>(__ballot_sync(static_cast<unsigned>(kFullLaneMask), pred));
}
__device__ __forceinline__ bool any(bool pred) {
    return __any_sync(static_cast<unsigned>(kFullLaneMask), pred) != 0;
}
__device__ __forceinline__ bool all(bool pred) {
    return __all_sync(static_cast<unsigned>(kFullLaneMask), pred) != 0;
}

// ---- 16-bit float storage types and f32 conversions ---------------------------
using half_t = __half;
using bf16_t = __nv_bfloat16;

// Loads widen to f32; stores round once to nearest even (NaN stays NaN).
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(half_t v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(bf16_t v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ half_t from_f32<half_t>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ bf16_t from_f32<bf16_t>(float v) { return __float2bfloat16_rn(v); }

// ---- Host-side types the launch code names ------------------------------------
using stream_t = cudaStream_t;
using error_t = cudaError_t;
constexpr error_t kSuccess = cudaSuccess;
inline error_t get_last_error() { return cudaGetLastError(); }
inline const char *error_name(error_t e) { return cudaGetErrorName(e); }
inline const char *error_string(error_t e) { return cudaGetErrorString(e); }

}  // namespace oprt::dev

#endif  // OPRT_DEVICE_TRAITS_HEADER
