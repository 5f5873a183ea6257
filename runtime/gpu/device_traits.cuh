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

// ---- Fast exponential ------------------------------------------------------------
// 2^x on the special-function unit (about 2 ulp; 0 for -inf, NaN stays NaN).
// Used where the result is rounded to a 16-bit type anyway: one instruction
// instead of the ~10 of the accurate expf.
__device__ __forceinline__ float exp2_approx(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}

// log2(x) on the special-function unit (absolute error about 2^-22; -inf for
// 0, NaN stays NaN): for exponents that feed exp2_approx.
__device__ __forceinline__ float log2_approx(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return log2f(x);
#endif
}

// ---- One 16-byte store to global memory ------------------------------------------
// For kernels where the compiler, having split a 16-byte vector into elements,
// emits four 4-byte stores for a plain vector store (the bulk softmax kernel's
// write pass): the instruction is stated, so it stays one access.
__device__ __forceinline__ void store_global_16(void *p, uint4 bits) {
#if defined(__CUDA_ARCH__)
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(bits.x), "r"(bits.y), "r"(bits.z),
                 "r"(bits.w)
                 : "memory");
#else
    *static_cast<uint4 *>(p) = bits;
#endif
}

// ---- A 16-byte copy from global to shared memory without registers -----------
// copy_async_16 starts it (cp.async on sm_80+: the data goes to shared memory
// while the thread runs on, holding no register for it); wait_copies()
// returns once every copy this thread started has landed. Older targets copy
// synchronously.
__device__ __forceinline__ void copy_async_16(void *smem, const void *gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#else
    *static_cast<uint4 *>(smem) = *static_cast<const uint4 *>(gmem);
#endif
}
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");  // = commit_group + wait_group 0
#endif
}
// Copies in groups: commit_copies() closes a group of the copies this thread
// started since the last one; wait_copies_but_newest<N>() returns once every
// group but the newest N has landed.
__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wait_copies_but_newest() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// ---- Programmatic dependent launch (sm_90) -------------------------------------
// A kernel launched with gpu::launch_overlapped may start while the kernel
// before it in the stream is still finishing (its launch and prologue hide
// behind the other's tail). Such a kernel calls wait_prior_grid() before its
// first global-memory access: it returns once the previous kernel has
// completed and its writes are visible (at once for a plain launch).
// allow_next_grid() lets the next kernel launch before this one ends.
__device__ __forceinline__ void wait_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
// Host side: whether launch code may ask for overlapped launches. Other
// toolchains set 0 and launch plainly.
#ifndef OPRT_DEVICE_HAS_PDL_LAUNCH
#define OPRT_DEVICE_HAS_PDL_LAUNCH 1
#endif

// ---- Thread-block clusters (sm_90) -------------------------------------------------
// A cluster is a group of blocks scheduled together on one GPC that can read
// each other's shared memory (distributed shared memory) and share a barrier.
// Kernels that use these are only chosen by a plan when the kernel was built
// for compute capability 9.0 or newer (see gpu_runtime.h kernel_ptx_version);
// in code built for older targets they compile to the one-block case, so a
// cluster of 1 behaves exactly like a plain block.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define OPRT_DEVICE_HAS_CLUSTERS 1
#else
#define OPRT_DEVICE_HAS_CLUSTERS 0
#endif
// Host side: whether launch code may launch cluster kernels at all
// (cudaLaunchKernelEx with a cluster dimension). Other toolchains' headers set 0
// and plans then never choose a cluster kernel.
#ifndef OPRT_DEVICE_HAS_CLUSTER_LAUNCH
#define OPRT_DEVICE_HAS_CLUSTER_LAUNCH 1
#endif
// Host side: whether sm_90 bulk asynchronous copies (gpu_bulk_copy.cuh) and
// cooperative launches may be planned and launched. Other toolchains set 0.
#ifndef OPRT_DEVICE_HAS_BULK_COPY_LAUNCH
#define OPRT_DEVICE_HAS_BULK_COPY_LAUNCH 1
#endif

// This block's rank in its cluster, and the cluster's size in blocks.
__device__ __forceinline__ unsigned cluster_rank() {
#if OPRT_DEVICE_HAS_CLUSTERS
    return __clusterRelativeBlockRank();
#else
    return 0;
#endif
}
__device__ __forceinline__ unsigned cluster_size() {
#if OPRT_DEVICE_HAS_CLUSTERS
    return __clusterSizeInBlocks();
#else
    return 1;
#endif
}

// Reconverges the calling warp. Needed after divergent code that reaches a
// barrier whose non-aligned form lets threads pass one by one (the cluster
// barrier): the next __syncthreads must find every warp converged.
__device__ __forceinline__ void syncwarp() { __syncwarp(); }

// cluster_sync: a barrier over every thread of every block of the cluster,
// with release / acquire ordering of shared memory (local and distributed):
// what a block wrote before it is visible to the other blocks' reads after
// it. Every thread of the cluster must call it the same number of times. It
// comes in two halves, for work between them that needs no other block:
// cluster_arrive (releasing this thread's earlier memory accesses), then
// cluster_wait (for every thread of the cluster to arrive).
// cluster_arrive_relaxed orders no memory: for an arrival whose wait only
// needs the others to have got this far (an mbarrier's init, fenced itself).
__device__ __forceinline__ void cluster_arrive() {
#if OPRT_DEVICE_HAS_CLUSTERS
    __cluster_barrier_arrive();
#endif
}
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if OPRT_DEVICE_HAS_CLUSTERS
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if OPRT_DEVICE_HAS_CLUSTERS
    __cluster_barrier_wait();
#else
    __syncthreads();
#endif
}
__device__ __forceinline__ void cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

// The address of `p` (a shared-memory variable of this block) in the shared
// memory of block `rank` of the cluster: the same variable of another block.
template <typename V>
__device__ __forceinline__ const V *cluster_map(const V *p, unsigned rank) {
#if OPRT_DEVICE_HAS_CLUSTERS
    return static_cast<const V *>(__cluster_map_shared_rank(p, rank));
#else
    (void)rank;
    return p;
#endif
}

// ---- Host-side types the launch code names ------------------------------------
using stream_t = cudaStream_t;
using error_t = cudaError_t;
constexpr error_t kSuccess = cudaSuccess;
inline error_t get_last_error() { return cudaGetLastError(); }
inline const char *error_name(error_t e) { return cudaGetErrorName(e); }
inline const char *error_string(error_t e) { return cudaGetErrorString(e); }

}  // namespace oprt::dev

#endif  // OPRT_DEVICE_TRAITS_HEADER
