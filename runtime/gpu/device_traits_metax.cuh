// Device traits for MetaX MACA (mxcc): the names of device_traits.cuh for
// MetaX C500-class GPUs. Selected by the MetaX build (cmake/metax.cmake) with
// -DOPRT_DEVICE_TRAITS_HEADER="runtime/gpu/device_traits_metax.cuh";
// every kernel and launch unit of the NVIDIA backend is then compiled
// unchanged against these names.
//
// What differs from CUDA: warps have 64 lanes, lane masks are 64-bit, the
// runtime types are mcStream_t / mcError_t, half and bf16 come from
// maca_fp16.h / maca_bfloat16.h, and there are no sm_90 features (clusters,
// TMA, wgmma): cluster helpers compile to the one-block case and plans never
// choose a cluster kernel (OPRT_DEVICE_HAS_CLUSTER_LAUNCH 0).
//
// OPRT_METAX_COMPAT_NVCC=1 (scripts/ci/metax_compat.sh): nvcc compiles this
// header with the MACA names mapped onto CUDA ones (device_traits_metax_compat.cuh),
// so the MetaX units are type-checked with 64-lane warps where no MACA
// toolkit exists. Such objects are for checking only and never run.
#pragma once

#if defined(OPRT_METAX_COMPAT_NVCC)
#include "runtime/gpu/device_traits_metax_compat.cuh"
#else
#include <maca_bfloat16.h>
#include <maca_fp16.h>
#include <mc_runtime.h>
#endif

#include <cstdint>

#define OPRT_DEVICE_WARP_SIZE 64
#define OPRT_DEVICE_HAS_CLUSTERS 0
#define OPRT_DEVICE_HAS_CLUSTER_LAUNCH 0
#define OPRT_DEVICE_HAS_BULK_COPY_LAUNCH 0
#define OPRT_DEVICE_HAS_PDL_LAUNCH 0

namespace oprt::dev {

// ---- Warp shape --------------------------------------------------------------
constexpr int kWarpSize = OPRT_DEVICE_WARP_SIZE;
constexpr int kMaxBlockThreads = 1024;
constexpr int kMaxWarps = kMaxBlockThreads / kWarpSize;

// One bit per lane: 64 lanes, 64-bit masks.
using lane_mask_t = unsigned long long;
constexpr lane_mask_t kFullLaneMask = ~lane_mask_t(0);
static_assert(sizeof(lane_mask_t) * 8 == kWarpSize, "one mask bit per lane");

// ---- Shuffles and votes (every lane of the warp must call them) --------------
template <typename V>
__device__ __forceinline__ V shfl_xor(V v, int lane_mask) {
    return __shfl_xor_sync(kFullLaneMask, v, lane_mask, kWarpSize);
}
template <typename V>
__device__ __forceinline__ V shfl_down(V v, unsigned delta) {
    return __shfl_down_sync(kFullLaneMask, v, delta, kWarpSize);
}
template <typename V>
__device__ __forceinline__ V shfl(V v, int src_lane) {
    return __shfl_sync(kFullLaneMask, v, src_lane, kWarpSize);
}
__device__ __forceinline__ lane_mask_t ballot(bool pred) {
    return static_cast<lane_mask_t>(__ballot_sync(kFullLaneMask, pred));
}
__device__ __forceinline__ bool any(bool pred) { return __any_sync(kFullLaneMask, pred) != 0; }
__device__ __forceinline__ bool all(bool pred) { return __all_sync(kFullLaneMask, pred) != 0; }
__device__ __forceinline__ void syncwarp() { __syncwarp(kFullLaneMask); }

// ---- 16-bit float storage types and f32 conversions ---------------------------
using half_t = __half;
using bf16_t = __maca_bfloat16;

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(half_t v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(bf16_t v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ half_t from_f32<half_t>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ bf16_t from_f32<bf16_t>(float v) { return __float2bfloat16_rn(v); }

// ---- Fast exponential ------------------------------------------------------------
// No PTX here: the toolchain's fast 2^x (exp2f under fast math).
__device__ __forceinline__ float exp2_approx(float x) { return exp2f(x); }
__device__ __forceinline__ float log2_approx(float x) { return log2f(x); }

// ---- One 16-byte store to global memory ------------------------------------------
__device__ __forceinline__ void store_global_16(void *p, uint4 bits) { *static_cast<uint4 *>(p) = bits; }

// ---- A 16-byte copy from global to shared memory: synchronous here -------------
__device__ __forceinline__ void copy_async_16(void *smem, const void *gmem) {
    *static_cast<uint4 *>(smem) = *static_cast<const uint4 *>(gmem);
}
__device__ __forceinline__ void wait_copies() {}
__device__ __forceinline__ void commit_copies() {}
template <int N>
__device__ __forceinline__ void wait_copies_but_newest() {}

// ---- Programmatic dependent launch: none on MetaX; kernels launch plainly ------
__device__ __forceinline__ void wait_prior_grid() {}
__device__ __forceinline__ void allow_next_grid() {}

// ---- Thread-block clusters: none on MetaX; the one-block case ------------------
__device__ __forceinline__ unsigned cluster_rank() { return 0; }
__device__ __forceinline__ unsigned cluster_size() { return 1; }
__device__ __forceinline__ void cluster_arrive() {}
__device__ __forceinline__ void cluster_arrive_relaxed() {}
__device__ __forceinline__ void cluster_wait() { __syncthreads(); }
__device__ __forceinline__ void cluster_sync() { __syncthreads(); }
template <typename V>
__device__ __forceinline__ const V *cluster_map(const V *p, unsigned rank) {
    (void)rank;
    return p;
}

// ---- Host-side types the launch code names ------------------------------------
using stream_t = mcStream_t;
using error_t = mcError_t;
constexpr error_t kSuccess = mcSuccess;
inline error_t get_last_error() { return mcGetLastError(); }
inline const char *error_name(error_t e) { return mcGetErrorName(e); }
inline const char *error_string(error_t e) { return mcGetErrorString(e); }

}  // namespace oprt::dev

#if defined(OPRT_METAX_COMPAT_NVCC)
// From here on, CUDA-only names are errors in MetaX units: kernels and launch
// code reach the toolchain only through oprt::dev and oprt::gpu.
#pragma GCC poison cudaLaunchKernelEx cudaLaunchConfig_t cudaLaunchAttribute
#pragma GCC poison cudaFuncSetAttribute cudaFuncGetAttributes cudaPointerGetAttributes
#pragma GCC poison cudaOccupancyMaxActiveClusters cudaGetDevice cudaSetDevice cudaDeviceGetAttribute
#pragma GCC poison __nv_bfloat16 __clusterRelativeBlockRank __clusterSizeInBlocks
#pragma GCC poison __cluster_barrier_arrive __cluster_barrier_wait __cluster_map_shared_rank
#endif
