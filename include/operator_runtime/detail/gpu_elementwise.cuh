// The GPU elementwise framework (copy, vector_add, relu): out[i] = op(in0[i], in1[i])
// over an ElementwisePlan. An operator supplies only a functor
//   T operator()(T a) const             (one input)
//   T operator()(T a, T b) const        (two inputs)
// on storage values; it widens to f32 itself when it computes.
//
// Two kernels, chosen on the host in this order (as PyTorch's Loops.cuh does):
// dense operands take one flat loop with the widest access every pointer's
// alignment allows (16 bytes when all are 16-byte aligned, a few scalar head
// and tail elements otherwise); anything else walks the collapsed dims with
// shapes and strides passed by value in the kernel's parameters, so nothing is
// copied to the device per call. Indices are 64-bit; the strided walk uses fast
// 32-bit division when the tensor has fewer than 2^31 elements.
#pragma once

#include <cstdint>

#include "operator_runtime/detail/device_traits.cuh"
#include "operator_runtime/detail/dispatch.h"
#include "operator_runtime/detail/gpu_common.cuh"
#include "operator_runtime/detail/gpu_runtime.h"
#include "operator_runtime/detail/plan.h"

namespace oprt::gpu {

// ElementwisePlan::kernel values of the GPU backends.
enum ElementwiseKernel : int32_t {
    kEwContiguous = 1,
    kEwStrided32 = 2,
    kEwStrided64 = 3,
};

constexpr int kEwThreads = 256;  // a multiple of 64: valid for 32- and 64-lane warps
constexpr int kEwUnroll = 4;     // accesses in flight per thread and operand

// Descriptor-time choice: pure function of the plan (no device query needed).
inline void plan_elementwise(ElementwisePlan &p) {
    if (p.contiguous) {
        p.kernel = kEwContiguous;
        p.kernel_name = "contiguous_vectorized";
    } else if (p.numel <= INT32_MAX) {
        p.kernel = kEwStrided32;
        p.kernel_name = "strided_index32";
    } else {
        p.kernel = kEwStrided64;
        p.kernel_name = "strided_index64";
    }
    p.workspace_bytes = 0;
}

template <int NIn, typename T, typename Op>
__device__ __forceinline__ T apply_op(const Op &op, T a, T b) {
    if constexpr (NIn == 1) {
        (void)b;
        return op(a);
    } else {
        return op(a, b);
    }
}

// out[i] = op(in0[i], in1[i]) for dense operands, N elements per access.
// Idea: every pointer shares its address modulo N * sizeof(T), so after `head`
// scalar elements all accesses are aligned N-wide; kEwUnroll loads are issued
// before any store so each thread keeps several requests in flight.
template <typename T, int NIn, int N, typename Op>
__global__ void __launch_bounds__(kEwThreads)
elementwise_contiguous_kernel(T *out, const T *in0, const T *in1, int64_t n, int64_t head, Op op) {
    const int64_t nvec = (n - head) / N;
    const int64_t body_end = head + nvec * N;
    const int64_t gid = global_thread_index();
    if (gid < head) out[gid] = apply_op<NIn>(op, in0[gid], in1[gid]);
    if (gid < n - body_end) {
        const int64_t i = body_end + gid;
        out[i] = apply_op<NIn>(op, in0[i], in1[i]);
    }
    T *vout = out + head;
    const T *v0 = in0 + head;
    const T *v1 = in1 + head;
    const int64_t tile = int64_t(blockDim.x) * kEwUnroll;
    for (int64_t base = int64_t(blockIdx.x) * tile; base < nvec; base += int64_t(gridDim.x) * tile) {
        Vec<T, N> a[kEwUnroll], b[kEwUnroll];
#pragma unroll
        for (int j = 0; j < kEwUnroll; ++j) {
            const int64_t q = base + threadIdx.x + int64_t(j) * blockDim.x;
            if (q < nvec) {
                a[j] = load_vec<N>(v0 + q * N);
                if constexpr (NIn > 1) b[j] = load_vec<N>(v1 + q * N);
            }
        }
#pragma unroll
        for (int j = 0; j < kEwUnroll; ++j) {
            const int64_t q = base + threadIdx.x + int64_t(j) * blockDim.x;
            if (q < nvec) {
                Vec<T, N> r;
#pragma unroll
                for (int e = 0; e < N; ++e) {
                    if constexpr (NIn > 1)
                        r.v[e] = op(a[j].v[e], b[j].v[e]);
                    else
                        r.v[e] = op(a[j].v[e]);
                }
                store_vec<N>(vout + q * N, r);
            }
        }
    }
}

// Collapsed dims of a strided launch, by value in the kernel parameters.
struct StridedLayout {
    int32_t ndim = 0;
    int64_t numel = 0;
    int64_t shape[OPRT_MAX_DIMS] = {};
    FastDivmod div[OPRT_MAX_DIMS];
    int64_t strides[ElementwisePlan::kMaxOperands][OPRT_MAX_DIMS] = {};
};

// Element offsets of linear index `idx` (row-major over the collapsed dims).
template <int NOps, typename Index>
__device__ __forceinline__ void strided_offsets(const StridedLayout &L, Index idx, int64_t *off) {
#pragma unroll
    for (int k = 0; k < NOps; ++k) off[k] = 0;
    for (int d = L.ndim - 1; d > 0; --d) {
        Index q;
        if constexpr (sizeof(Index) == 4)
            q = L.div[d].div(idx);
        else
            q = idx / Index(L.shape[d]);
        const int64_t r = int64_t(idx) - int64_t(q) * L.shape[d];
#pragma unroll
        for (int k = 0; k < NOps; ++k) off[k] += r * L.strides[k][d];
        idx = q;
    }
    if (L.ndim > 0) {
#pragma unroll
        for (int k = 0; k < NOps; ++k) off[k] += int64_t(idx) * L.strides[k][0];
    }
}

// out = op(in0, in1) over any collapsed strided/broadcast layout (stride 0 = broadcast).
// Idea: shapes and strides ride in the kernel parameters (constant bank), and
// Index = uint32_t turns each per-dim division into a multiply-high and a shift.
template <typename T, int NIn, typename Index, typename Op>
__global__ void __launch_bounds__(kEwThreads)
elementwise_strided_kernel(T *out, const T *in0, const T *in1, StridedLayout L, Op op) {
    constexpr int kOps = NIn + 1;
    const int64_t tile = int64_t(blockDim.x) * kEwUnroll;
    for (int64_t base = int64_t(blockIdx.x) * tile; base < L.numel; base += int64_t(gridDim.x) * tile) {
        T a[kEwUnroll], b[kEwUnroll];
        int64_t out_off[kEwUnroll];
#pragma unroll
        for (int j = 0; j < kEwUnroll; ++j) {
            const int64_t i = base + threadIdx.x + int64_t(j) * blockDim.x;
            if (i < L.numel) {
                int64_t off[kOps];
                strided_offsets<kOps>(L, Index(i), off);
                out_off[j] = off[0];
                a[j] = in0[off[1]];
                if constexpr (NIn > 1) b[j] = in1[off[2]];
                else b[j] = a[j];
            }
        }
#pragma unroll
        for (int j = 0; j < kEwUnroll; ++j) {
            const int64_t i = base + threadIdx.x + int64_t(j) * blockDim.x;
            if (i < L.numel) out[out_off[j]] = apply_op<NIn>(op, a[j], b[j]);
        }
    }
}

// ---- Launch --------------------------------------------------------------------

// The widest access (in elements, a power of two up to 16 bytes) at which every
// pointer has the same misalignment, and the scalar elements before the first
// aligned access.
template <typename T>
inline int common_vector_width(const void *const *ptrs, int count, int64_t n, int64_t *head) {
    for (int w = vector_width<T>(); w > 1; w /= 2) {
        const uintptr_t bytes = uintptr_t(w) * sizeof(T);
        const uintptr_t r0 = reinterpret_cast<uintptr_t>(ptrs[0]) % bytes;
        bool same = true;
        for (int k = 1; k < count; ++k) same = same && reinterpret_cast<uintptr_t>(ptrs[k]) % bytes == r0;
        if (!same) continue;
        const int64_t h = int64_t(((bytes - r0) % bytes) / sizeof(T));
        *head = h < n ? h : n;
        return w;
    }
    *head = 0;
    return 1;
}

template <typename T, int NIn, int N, typename Op>
void launch_contiguous(T *out, const T *in0, const T *in1, int64_t n, int64_t head, Op op,
                       dev::stream_t stream) {
    const int64_t nvec = (n - head) / N;
    const int64_t blocks = clamp64(ceil_div(nvec, int64_t(kEwThreads) * kEwUnroll), 1, kMaxGridBlocks);
    elementwise_contiguous_kernel<T, NIn, N, Op>
        <<<unsigned(blocks), kEwThreads, 0, stream>>>(out, in0, in1, n, head, op);
}

// Runs the plan's kernel for storage type T on args.stream. The frontend has
// validated everything; the caller has checked the pointers are device memory.
template <typename T, int NIn, typename Op>
oprt_status_t launch_elementwise(const char *op_name, const ElementwisePlan &p, const ExecArgs &args,
                                 Op op) {
    dev::stream_t stream = static_cast<dev::stream_t>(args.stream);
    T *out = static_cast<T *>(args.out);
    const T *in0 = static_cast<const T *>(args.in0);
    const T *in1 = NIn > 1 ? static_cast<const T *>(args.in1) : in0;
    const int64_t n = p.numel;

    if (p.kernel == kEwContiguous) {
        const void *ptrs[3] = {out, in0, in1};
        int64_t head = 0;
        const int w = common_vector_width<T>(ptrs, NIn + 1, n, &head);
        if constexpr (vector_width<T>() >= 8) {
            if (w == 8) launch_contiguous<T, NIn, 8>(out, in0, in1, n, head, op, stream);
        }
        if (w == 4) launch_contiguous<T, NIn, 4>(out, in0, in1, n, head, op, stream);
        if (w == 2) launch_contiguous<T, NIn, 2>(out, in0, in1, n, head, op, stream);
        if (w == 1) launch_contiguous<T, NIn, 1>(out, in0, in1, n, head, op, stream);
        return check_launch(op_name, p.kernel_name);
    }

    StridedLayout L;
    L.ndim = p.ndim;
    L.numel = n;
    for (int d = 0; d < p.ndim; ++d) {
        L.shape[d] = p.shape[d];
        if (p.kernel == kEwStrided32) L.div[d] = FastDivmod(uint32_t(p.shape[d]));
        for (int k = 0; k <= NIn; ++k) L.strides[k][d] = p.strides[k][d];
    }
    const int64_t blocks = clamp64(ceil_div(n, int64_t(kEwThreads) * kEwUnroll), 1, kMaxGridBlocks);
    if (p.kernel == kEwStrided32)
        elementwise_strided_kernel<T, NIn, uint32_t, Op>
            <<<unsigned(blocks), kEwThreads, 0, stream>>>(out, in0, in1, L, op);
    else
        elementwise_strided_kernel<T, NIn, uint64_t, Op>
            <<<unsigned(blocks), kEwThreads, 0, stream>>>(out, in0, in1, L, op);
    return check_launch(op_name, p.kernel_name);
}

}  // namespace oprt::gpu
