// Building blocks shared by every GPU kernel: aligned vectors for 16-byte
// loads and stores, 64-bit thread indexing, fast 32-bit division for index
// math, and the outer-position walk of one-axis plans. Toolchain specifics come
// only from device_traits.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/internal/plan.h"

namespace oprt::gpu {

// Bytes one vectorized access moves: 128-bit loads and stores.
constexpr int kVectorBytes = 16;

// Elements of T in one 16-byte access (4 f32, 8 f16/bf16).
template <typename T>
constexpr int vector_width() {
    return kVectorBytes / int(sizeof(T));
}

// N elements of T read or written as one access. alignas makes the compiler
// emit a single N * sizeof(T)-byte instruction; callers guarantee alignment.
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
    T v[N];
};

template <int N, typename T>
__device__ __forceinline__ Vec<T, N> load_vec(const T *p) {
    return *reinterpret_cast<const Vec<T, N> *>(p);
}

template <int N, typename T>
__device__ __forceinline__ void store_vec(T *p, const Vec<T, N> &v) {
    *reinterpret_cast<Vec<T, N> *>(p) = v;
}

// store_vec for global memory that always is one 16-byte instruction (see
// dev::store_global_16); N * sizeof(T) must be 16.
template <int N, typename T>
__device__ __forceinline__ void store_vec_global(T *p, const Vec<T, N> &v) {
    static_assert(sizeof(Vec<T, N>) == 16, "a 16-byte vector");
    uint4 bits;
    memcpy(&bits, &v, 16);
    dev::store_global_16(p, bits);
}

// One vector of an operator's output: 16-bit vectors as one stated 16-byte
// store (store_vec_global), f32 as a plain one. Plain vector assignments of
// 16-bit values next to a kernel's scalar fallback were compiled to eight
// 2-byte stores in some instantiations (softmax (8192, 4095) bf16 rows 138 ->
// 53 us, reduce_sum (8, 2^25) first axis 16-bit 90 -> 102% of the copy
// ceiling); the stated store for f32 made rows of 32 f32 a thread spill and
// measured 0-3% slower elsewhere (H200, 2026-11-30).
template <int N, typename T>
__device__ __forceinline__ void store_out_vec(T *p, const Vec<T, N> &v) {
    if constexpr (sizeof(T) == 2 && sizeof(Vec<T, N>) == 16)
        store_vec_global<N>(p, v);
    else
        store_vec<N>(p, v);
}

// The N values of v as f32. bf16 is the upper half of an f32, so a 32-bit
// word of two bf16 widens with one shift and one mask; converting element by
// element, the compiler spends three instructions per pair.
template <typename T, int N>
__device__ __forceinline__ void widen(const Vec<T, N> &v, float (&f)[N]) {
    if constexpr (std::is_same<T, dev::bf16_t>::value && N % 2 == 0) {
        uint32_t w[N / 2];
        memcpy(w, &v, sizeof w);
#pragma unroll
        for (int i = 0; i < N / 2; ++i) {
            const uint32_t lo = w[i] << 16, hi = w[i] & 0xffff0000u;
            memcpy(&f[2 * i], &lo, 4);
            memcpy(&f[2 * i + 1], &hi, 4);
        }
    } else {
#pragma unroll
        for (int e = 0; e < N; ++e) f[e] = dev::to_f32(v.v[e]);
    }
}

// Elements of T before p's first 16-byte boundary, at most n: the scalar head
// of a walk whose body is aligned vectors.
template <typename T>
__device__ __forceinline__ int64_t elements_before_vector_boundary(const T *p, int64_t n) {
    const int64_t misalign = int64_t(reinterpret_cast<uintptr_t>(p) % kVectorBytes);
    const int64_t head = misalign ? (kVectorBytes - misalign) / int64_t(sizeof(T)) : 0;
    return head < n ? head : n;
}

// 64-bit global thread index and grid-wide thread count: tensors over 2^31
// elements must not wrap.
__device__ __forceinline__ int64_t global_thread_index() {
    return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() { return int64_t(gridDim.x) * blockDim.x; }

// NaN-ignoring max that compiles to one instruction; softmax gets NaN from the
// sum of exp(NaN - max) instead.
__device__ __forceinline__ float max_f32(float a, float b) { return fmaxf(a, b); }

// Division by a fixed divisor with a multiply and a shift (Granlund-Montgomery,
// as in PyTorch's IntDivider). Valid for dividends below 2^31, which the
// 32-bit strided path guarantees.
struct FastDivmod {
    uint32_t divisor = 1;
    uint32_t multiplier = 0;
    uint32_t shift = 0;

    FastDivmod() = default;
    __host__ explicit FastDivmod(uint32_t d) : divisor(d) {
        shift = 0;
        while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;
        const uint64_t one = 1;
        multiplier = uint32_t(((one << 32) * ((one << shift) - d)) / d + 1);
    }
    __device__ __forceinline__ uint32_t div(uint32_t n) const {
        return (__umulhi(n, multiplier) + n) >> shift;
    }
};

// Offsets of the outer positions of an AxisPlan, passed to kernels by value.
// in_row_stride >= 0 overrides the input side with o * in_row_stride (used
// when a second pass reads partial results laid out densely in workspace).
struct OuterIndex {
    int32_t ndim = 0;
    int64_t in_row_stride = -1;
    int64_t shape[OPRT_MAX_DIMS] = {};
    int64_t in_strides[OPRT_MAX_DIMS] = {};
    int64_t out_strides[OPRT_MAX_DIMS] = {};

    __device__ __forceinline__ void offsets(int64_t o, int64_t *in_off, int64_t *out_off) const {
        const int64_t linear = o;
        int64_t in = 0, out = 0;
        if (ndim == 1) {  // the common case: one multiply, no division
            in = o * in_strides[0];
            out = o * out_strides[0];
        } else {
            for (int d = ndim - 1; d > 0; --d) {
                const int64_t q = o / shape[d];
                const int64_t idx = o - q * shape[d];
                in += idx * in_strides[d];
                out += idx * out_strides[d];
                o = q;
            }
            if (ndim > 0) {
                in += o * in_strides[0];
                out += o * out_strides[0];
            }
        }
        *in_off = in_row_stride >= 0 ? linear * in_row_stride : in;
        *out_off = out;
    }
};

inline OuterIndex outer_index(const AxisPlan &p) {
    OuterIndex ix;
    ix.ndim = p.outer_ndim;
    for (int d = 0; d < p.outer_ndim; ++d) {
        ix.shape[d] = p.outer_shape[d];
        ix.in_strides[d] = p.in_outer_strides[d];
        ix.out_strides[d] = p.out_outer_strides[d];
    }
    return ix;
}

// ---- Host-side geometry helpers ------------------------------------------------
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t next_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Grid sizes stay far below the 2^31 - 1 block limit; kernels loop (grid-stride)
// over whatever a capped grid does not cover.
constexpr int64_t kMaxGridBlocks = int64_t(1) << 30;

__host__ __device__ inline bool aligned_to(const void *p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Workspace: plans ask for kWorkspaceAlign bytes more than they use, and
// kernels take the workspace from its first 16-byte boundary (vector loads of
// it stay aligned whatever pointer the caller passes).
constexpr size_t kWorkspaceAlign = size_t(kVectorBytes);

template <typename T>
inline T *aligned_workspace(void *workspace) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
    return reinterpret_cast<T *>((p + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign);
}

// ---- Clusters (sm_90) ---------------------------------------------------------------
// Whether `kernel` (static shared memory only) can run on the current device
// in clusters of C blocks of `threads` threads: its code was built for sm_90 or
// newer (older code has the clusters compiled out) and at least one such
// cluster fits. `op` names the caller in errors.
inline oprt_status_t cluster_fits(const char *op, const void *kernel, int64_t C, int threads, bool *fits) {
    *fits = false;
    int ptx = 0;
    oprt_status_t s = kernel_ptx_version(op, kernel, &ptx);
    if (s != OPRT_SUCCESS || ptx < 90) return s;
    int active = 0;
    s = max_active_clusters(op, kernel, int(C), threads, 0, &active);
    *fits = active > 0;
    return s;
}

// ---- Overlapped launches (programmatic dependent launch, sm_90) -------------------
// A kernel launched with launch_overlapped may start while the kernel before it
// in the stream drains: its launch and the scheduling of its blocks hide behind
// the other's tail (about 0.65 us per kernel on the H200,
// 2026-11-29). Every such kernel starts with enter_overlapped_kernel(), before its
// first global-memory access: it lets the next kernel launch early in turn,
// then waits until the previous kernel has finished and its writes are
// visible. In a plainly launched kernel both are no-ops.
__device__ __forceinline__ void enter_overlapped_kernel() {
    dev::allow_next_grid();
    dev::wait_prior_grid();
}

// The same two steps the other way round: the next kernel may launch only
// once this one has waited for the previous one, so at most one kernel waits
// behind the running one, where the early form lets launched kernels queue
// up behind it, each waiting on the one before. In long runs of launches of
// small grids the early form made some calls up to twice as slow
// (docs/performance.md, "Long chains of overlapped launches"). reduce_sum's
// kernels take this form: in the benchmark's chains of up to 4096 calls it
// made 24 of 52 small and medium cases faster by more than 2% and 7 slower
// (H100, 2026-12-06: sums of 4096 elements 1.77 -> 1.62 us, (1024, 1024)
// dim=1 bf16 hot 2.26 -> 1.73, dim=0 f32 hot 3.49 -> 2.84; (1024, 1024) over
// all elements f32 4.30 -> 4.55), while the softmax and elementwise kernels
// measured slower in it overall.
__device__ __forceinline__ void enter_overlapped_kernel_wait_first() {
    dev::wait_prior_grid();
    dev::allow_next_grid();
}

#if OPRT_DEVICE_HAS_PDL_LAUNCH
// Adds the overlapped-launch attribute to attrs[n] where allowed; returns the new count.
inline unsigned add_overlapped_attribute(cudaLaunchAttribute *attrs, unsigned n) {
    if (!overlapped_launch_allowed()) return n;
    attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[n].val.programmaticStreamSerializationAllowed = 1;
    return n + 1;
}
#endif

// kernel<<<grid, threads, smem, stream>>>(args...), overlapped with the
// kernel before it where overlapped_launch_allowed(). Errors surface in
// check_launch, as for <<<>>>.
template <typename... Params, typename... Args>
void launch_overlapped(void (*kernel)(Params...), dim3 grid, unsigned threads, size_t smem, dev::stream_t stream,
                       const Args &...args) {
#if OPRT_DEVICE_HAS_PDL_LAUNCH
    cudaLaunchAttribute attr[1];
    const unsigned n = add_overlapped_attribute(attr, 0);
    if (n > 0) {
        cudaLaunchConfig_t config{};
        config.gridDim = grid;
        config.blockDim = dim3(threads, 1, 1);
        config.dynamicSmemBytes = smem;
        config.stream = stream;
        config.attrs = attr;
        config.numAttrs = n;
        (void)cudaLaunchKernelEx(&config, kernel, Params(args)...);
        return;
    }
#endif
    kernel<<<grid, threads, smem, stream>>>(Params(args)...);
}

#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// kernel<<<blocks, threads, smem, stream>>>(args...) in clusters of `cluster`
// blocks along x (blocks a multiple of it; block b is rank b % cluster of
// cluster b / cluster), overlapped as launch_overlapped. Sizes above the
// portable 8 opt the kernel in first. A refused launch is reported at once,
// as `op` failing in `what`.
template <typename... Params, typename... Args>
oprt_status_t launch_clustered(const char *op, const char *what, void (*kernel)(Params...), unsigned blocks,
                               unsigned cluster, unsigned threads, size_t smem, dev::stream_t stream,
                               const Args &...args) {
    if (cluster > 8) {
        const oprt_status_t s = allow_large_clusters(op, reinterpret_cast<const void *>(kernel));
        if (s != OPRT_SUCCESS) return s;
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks, 1, 1);
    config.blockDim = dim3(threads, 1, 1);
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = add_overlapped_attribute(attr, 1);
    const cudaError_t e = cudaLaunchKernelEx(&config, kernel, Params(args)...);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, what, int(e));
    }
    return OPRT_SUCCESS;
}
#endif

}  // namespace oprt::gpu
