// The GPU elementwise framework (copy, vector_add, relu): out[i] = op(in0[i], in1[i])
// over an ElementwisePlan. An operator supplies only a functor
//   T operator()(T a) const             (one input)
//   T operator()(T a, T b) const        (two inputs)
// on storage values; it widens to f32 itself when it computes.
//
// Three kernels, chosen on the host in this order (as PyTorch's Loops.cuh does):
// - dense operands: one flat loop with the widest access every pointer's
//   alignment allows (16 bytes when all are 16-byte aligned, a few scalar head
//   and tail elements otherwise);
// - out and one input dense, the other input a row repeated over the outer
//   dim (a bias) or a scalar: 16-byte accesses on the dense operands, the row
//   read from cache (a division-free column walk);
// - anything else walks the collapsed dims with shapes and strides passed by
//   value in the kernel's parameters, so nothing is copied to the device per
//   call. Indices are 64-bit; the strided walk uses fast 32-bit division when
//   the tensor has fewer than 2^31 elements.
// The first two give each thread one 16-byte access per operand and launch as
// many blocks as that takes: measured on the H200 (tests/cpp/nvidia/bench/
// elementwise_variants.cu) this streams at the copy ceiling, 4-8% faster than
// a grid sized to the GPU looping over several vectors per thread.
#pragma once

#include <cstdint>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/internal/dispatch.h"
#include "runtime/gpu/gpu_common.cuh"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/internal/plan.h"

namespace oprt::gpu {

// ElementwisePlan::kernel values of the GPU backends.
enum ElementwiseKernel : int32_t {
    kEwContiguous = 1,
    kEwStrided32 = 2,
    kEwStrided64 = 3,
    kEwBroadcast = 4,
    kEwScalarGridStride = 5,  // ladder step 1 (oprt_set_<op>_variant "scalar_grid_stride")
};

constexpr int kEwThreads = 256;  // a multiple of 64: valid for 32- and 64-lane warps
constexpr int kEwUnroll = 4;     // elements per thread and loop step of the strided kernel

// The broadcast layouts the fast path takes: out dense, every input but one
// dense, and that one (`input`) repeating a dense row of `period` elements
// over the outer dim (period 1: a scalar). After dimension collapsing these
// are exactly ndim 1 with stride 0 (scalar) and ndim 2 with strides {0, 1}.
struct BroadcastLayout {
    bool ok = false;
    int input = 0;
    int64_t period = 1;
};

inline BroadcastLayout broadcast_layout(const ElementwisePlan &p) {
    BroadcastLayout b;
    if (p.ndim < 1 || p.ndim > 2) return b;
    const int64_t inner = p.ndim == 2 ? p.shape[1] : 1;
    auto dense = [&](int k) {
        return p.ndim == 1 ? p.strides[k][0] == 1 : (p.strides[k][0] == inner && p.strides[k][1] == 1);
    };
    auto repeated = [&](int k) {
        return p.ndim == 1 ? p.strides[k][0] == 0 : (p.strides[k][0] == 0 && p.strides[k][1] == 1);
    };
    if (!dense(0)) return b;
    int which = -1;
    for (int k = 1; k <= p.num_inputs; ++k) {
        if (dense(k)) continue;
        if (!repeated(k) || which >= 0) return b;
        which = k - 1;
    }
    if (which < 0) return b;
    // A row shorter than one vector would wrap inside a vector: strided path.
    const int64_t vec = kVectorBytes / (p.dtype == OPRT_DTYPE_F32 ? 4 : 2);
    if (inner != 1 && inner < vec) return b;
    b.ok = true;
    b.input = which;
    b.period = inner;
    return b;
}

// Descriptor-time choice: pure function of the plan (no device query needed).
inline void plan_elementwise(ElementwisePlan &p) {
    const BroadcastLayout b = broadcast_layout(p);
    if (p.contiguous) {
        p.kernel = kEwContiguous;
        p.kernel_name = "contiguous_vectorized";
    } else if (b.ok) {
        p.kernel = kEwBroadcast;
        p.kernel_name = b.period == 1 ? "broadcast_scalar_vectorized" : "broadcast_row_vectorized";
    } else if (p.numel <= INT32_MAX) {
        p.kernel = kEwStrided32;
        p.kernel_name = "strided_index32";
    } else {
        p.kernel = kEwStrided64;
        p.kernel_name = "strided_index64";
    }
    p.workspace_bytes = 0;
}

// ---- The kernel ladder (oprt_list_<op>_variants) ---------------------------------
// Every elementwise operator shares it: "scalar_grid_stride" (the textbook
// kernel: one element per thread and loop step, any layout), then "vec16" (the
// plan's 16-byte-vector kernels: dense operands, or a dense row / scalar
// broadcast). Strided layouts have only the first step; "auto" runs the plan's
// strided kernel there.

// Blocks of the scalar grid-stride kernel: a fixed grid (about 8 resident
// blocks per SM on a 132-SM GPU, then each thread loops), as the textbook does.
constexpr int64_t kEwGridStrideBlocks = 1024;

inline oprt_status_t plan_elementwise_scalar(ElementwisePlan &p) {
    p.kernel = kEwScalarGridStride;
    p.kernel_name = "scalar_grid_stride";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

// Step 2 ("vec16"): the plan's vectorized kernels; NOT_SUPPORTED where it would take the strided one.
inline oprt_status_t plan_elementwise_vec16(ElementwisePlan &p) {
    plan_elementwise(p);
    if (p.kernel == kEwContiguous || p.kernel == kEwBroadcast) return OPRT_SUCCESS;
    return fail(OPRT_ERR_NOT_SUPPORTED,
                "16-byte vectors need dense operands (or one input a dense row or a scalar repeated); "
                "this layout is strided (the plan runs %s): use 'scalar_grid_stride' or 'auto'",
                p.kernel_name);
}

// The "cute" step of builds with CuTe (CAMP_ENABLE_CUTE; the op's launch code
// lists it between the two above): CuTe's tiled 128-bit copies
// (runtime/gpu/cute_elementwise.cuh) over operands of one dense layout.
inline oprt_status_t plan_elementwise_cute(ElementwisePlan &p) {
    plan_elementwise(p);
    if (p.contiguous) {
        p.kernel_name = "cute_tiled_copy";
        return OPRT_SUCCESS;
    }
    return fail(OPRT_ERR_NOT_SUPPORTED,
                "'cute' handles operands of one dense layout only (no broadcast, no strides): use "
                "'scalar_grid_stride', 'vec16' or 'auto'");
}

// The ladder with the CuTe step for an operator whose CuTe launcher is `Cute`
// (runtime/gpu/cute_launch.h) and whose hand-written run() is `Run`. CuTe's 128-bit
// accesses need 16-byte aligned pointers, known only at execute: misaligned
// data runs the hand-written kernels (same results).
template <oprt_status_t (*Cute)(const ElementwisePlan &, const ExecArgs &),
          oprt_status_t (*Run)(const ElementwisePlan &, const ExecArgs &)>
struct CuteLadder {
    static oprt_status_t run_cute(const ElementwisePlan &p, const ExecArgs &args) {
        const oprt_status_t s = Cute(p, args);
        if (s != OPRT_ERR_NOT_SUPPORTED) return s;
        clear_error();
        return Run(p, args);
    }
    static constexpr Variant<ElementwisePlan> steps[] = {
        {"scalar_grid_stride", &plan_elementwise_scalar},
        {"cute", &plan_elementwise_cute, &run_cute},
        {"vec16", &plan_elementwise_vec16},
    };
    static constexpr VariantList<ElementwisePlan> list = {steps, 3};
};

inline const Variant<ElementwisePlan> kElementwiseLadderSteps[] = {
    {"scalar_grid_stride", &plan_elementwise_scalar},
    {"vec16", &plan_elementwise_vec16},
};
inline const VariantList<ElementwisePlan> kElementwiseLadder = {kElementwiseLadderSteps, 2};

template <int NIn, typename T, typename Op>
__device__ __forceinline__ T apply_op(const Op &op, T a, T b) {
    if constexpr (NIn == 1) {
        (void)b;
        return op(a);
    } else {
        return op(a, b);
    }
}

template <int NIn, int N, typename T, typename Op>
__device__ __forceinline__ Vec<T, N> apply_vec(const Op &op, const Vec<T, N> &a, const Vec<T, N> &b) {
    Vec<T, N> r;
#pragma unroll
    for (int e = 0; e < N; ++e) r.v[e] = apply_op<NIn>(op, a.v[e], b.v[e]);
    return r;
}

// out[i] = op(in0[i], in1[i]) for dense operands, N elements per access.
// Idea: every pointer shares its address modulo N * sizeof(T), so after `head`
// scalar elements all accesses are aligned N-wide; one 16-byte access per
// thread and operand, and the block scheduler streams the blocks through.
template <typename T, int NIn, int N, typename Op>
__global__ void __launch_bounds__(kEwThreads)
elementwise_contiguous_kernel(T *out, const T *in0, const T *in1, int64_t n, int64_t head, Op op) {
    enter_overlapped_kernel();
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
    for (int64_t q = gid; q < nvec; q += grid_threads()) {  // one step unless the grid is capped
        const Vec<T, N> a = load_vec<N>(v0 + q * N);
        const Vec<T, N> b = NIn > 1 ? load_vec<N>(v1 + q * N) : a;
        store_vec<N>(vout + q * N, apply_vec<NIn>(op, a, b));
    }
}

// How the broadcast kernel reads the repeated operand.
enum BroadcastMode : int {
    kBcastScalar = 0,   // one element, loaded once
    kBcastRowVec = 1,   // row length a multiple of N and the row 16-byte aligned: vector loads
    kBcastRowElem = 2,  // any other row: element loads (the row sits in L1)
};

// out[i] = op(in0[i], in1[i]) where input B repeats a row of C elements
// (element i reads row[i % C]; C == 1 is a scalar) and the rest are dense.
// Idea: the dense operands move as aligned 16-byte vectors, one per thread;
// the row stays in cache and costs no HBM traffic; the column comes from one
// multiply-high division (32-bit indices) instead of the strided kernel's
// division per dim and operand.
template <typename T, int NIn, int N, int B, int kMode, typename Op>
__global__ void __launch_bounds__(kEwThreads)
elementwise_broadcast_kernel(T *out, const T *in0, const T *in1, int64_t n, int64_t C, FastDivmod cdiv, Op op) {
    static_assert(B == 0 || (B == 1 && NIn == 2), "the repeated input exists");
    enter_overlapped_kernel();
    const T *row = B == 0 ? in0 : in1;
    const T *dense = B == 0 ? in1 : in0;  // unused when NIn == 1
    const int64_t nvec = n / N;
    const int64_t gid = global_thread_index();
    auto combine = [&](T r, T d) { return B == 0 ? apply_op<NIn>(op, r, d) : apply_op<NIn>(op, d, r); };
    // Column of element i: FastDivmod needs i < 2^31, which n <= INT32_MAX guarantees.
    const bool index32 = n <= INT32_MAX;
    auto column = [&](int64_t i) {
        if (index32) return int64_t(uint32_t(i) - cdiv.div(uint32_t(i)) * uint32_t(C));
        return i % C;
    };
    if (gid < n - nvec * N) {  // scalar tail
        const int64_t i = nvec * N + gid;
        out[i] = combine(row[kMode == kBcastScalar ? 0 : column(i)], dense[NIn > 1 ? i : 0]);
    }
    for (int64_t q = gid; q < nvec; q += grid_threads()) {
        Vec<T, N> r;
        if constexpr (kMode == kBcastScalar) {
#pragma unroll
            for (int e = 0; e < N; ++e) r.v[e] = row[0];
        } else if constexpr (kMode == kBcastRowVec) {
            r = load_vec<N>(row + column(q * N));
        } else {
            const int64_t c = column(q * N);
#pragma unroll
            for (int e = 0; e < N; ++e) {
                const int64_t ce = c + e;
                r.v[e] = row[ce >= C ? ce - C : ce];  // C >= N: wraps at most once
            }
        }
        const Vec<T, N> d = NIn > 1 ? load_vec<N>(dense + q * N) : r;
        Vec<T, N> o;
#pragma unroll
        for (int e = 0; e < N; ++e) o.v[e] = combine(r.v[e], d.v[e]);
        store_vec<N>(out + q * N, o);
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
    enter_overlapped_kernel();
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

template <typename T, int NIn, bool kDense, typename Op>
__global__ void __launch_bounds__(256)
elementwise_scalar_grid_stride_kernel(T *out, const T *in0, const T *in1, StridedLayout L, Op op) {
    for (int64_t i = global_thread_index(); i < L.numel; i += grid_threads()) {
        if constexpr (kDense) {
            const T a = in0[i];
            out[i] = apply_op<NIn>(op, a, NIn > 1 ? in1[i] : a);
        } else {
            int64_t off[NIn + 1];
            strided_offsets<NIn + 1>(L, uint64_t(i), off);
            const T a = in0[off[1]];
            T b = a;
            if constexpr (NIn > 1) b = in1[off[2]];
            out[off[0]] = apply_op<NIn>(op, a, b);
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

// One block per kEwThreads vectors (at least one block, for the scalar head and tail).
inline unsigned one_vector_blocks(int64_t nvec) {
    return unsigned(clamp64(ceil_div(nvec, int64_t(kEwThreads)), 1, kMaxGridBlocks));
}

template <typename T, int NIn, int N, typename Op>
void launch_contiguous(T *out, const T *in0, const T *in1, int64_t n, int64_t head, Op op, dev::stream_t stream) {
    launch_overlapped(&elementwise_contiguous_kernel<T, NIn, N, Op>, one_vector_blocks((n - head) / N), kEwThreads,
                      0, stream, out, in0, in1, n, head, op);
}

template <typename T, int NIn, int B, typename Op>
void launch_broadcast(T *out, const T *in0, const T *in1, int64_t n, int64_t C, Op op, dev::stream_t stream) {
    constexpr int N = vector_width<T>();
    const T *row = B == 0 ? in0 : in1;
    const unsigned blocks = one_vector_blocks(n / N);
    const FastDivmod cdiv(uint32_t(C <= INT32_MAX ? C : 1));  // used only when n <= INT32_MAX (so C is too)
    if (C == 1) {
        launch_overlapped(&elementwise_broadcast_kernel<T, NIn, N, B, kBcastScalar, Op>, blocks, kEwThreads, 0, stream, out,
                          in0, in1, n, C, cdiv, op);
    } else if (C % N == 0 && aligned_to(row, kVectorBytes)) {
        launch_overlapped(&elementwise_broadcast_kernel<T, NIn, N, B, kBcastRowVec, Op>, blocks, kEwThreads, 0, stream, out,
                          in0, in1, n, C, cdiv, op);
    } else {
        launch_overlapped(&elementwise_broadcast_kernel<T, NIn, N, B, kBcastRowElem, Op>, blocks, kEwThreads, 0, stream, out,
                          in0, in1, n, C, cdiv, op);
    }
}

template <typename T, int NIn, typename Op>
void launch_scalar_grid_stride(const ElementwisePlan &p, T *out, const T *in0, const T *in1, Op op,
                               dev::stream_t stream) {
    StridedLayout L;
    L.ndim = p.ndim;
    L.numel = p.numel;
    for (int d = 0; d < p.ndim; ++d) {
        L.shape[d] = p.shape[d];
        for (int k = 0; k <= NIn; ++k) L.strides[k][d] = p.strides[k][d];
    }
    const unsigned blocks = unsigned(clamp64(ceil_div(p.numel, kEwThreads), 1, kEwGridStrideBlocks));
    if (p.contiguous)
        elementwise_scalar_grid_stride_kernel<T, NIn, true, Op><<<blocks, kEwThreads, 0, stream>>>(out, in0, in1, L, op);
    else
        elementwise_scalar_grid_stride_kernel<T, NIn, false, Op><<<blocks, kEwThreads, 0, stream>>>(out, in0, in1, L, op);
}

template <typename T, int NIn, typename Op>
void launch_strided(const ElementwisePlan &p, T *out, const T *in0, const T *in1, Op op, dev::stream_t stream) {
    StridedLayout L;
    L.ndim = p.ndim;
    L.numel = p.numel;
    const bool index32 = p.numel <= INT32_MAX;
    for (int d = 0; d < p.ndim; ++d) {
        L.shape[d] = p.shape[d];
        if (index32) L.div[d] = FastDivmod(uint32_t(p.shape[d]));
        for (int k = 0; k <= NIn; ++k) L.strides[k][d] = p.strides[k][d];
    }
    const int64_t blocks = clamp64(ceil_div(p.numel, int64_t(kEwThreads) * kEwUnroll), 1, kMaxGridBlocks);
    if (index32)
        launch_overlapped(&elementwise_strided_kernel<T, NIn, uint32_t, Op>, unsigned(blocks), kEwThreads, 0, stream,
                          out, in0, in1, L, op);
    else
        launch_overlapped(&elementwise_strided_kernel<T, NIn, uint64_t, Op>, unsigned(blocks), kEwThreads, 0, stream,
                          out, in0, in1, L, op);
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

    if (p.kernel == kEwScalarGridStride) {
        launch_scalar_grid_stride<T, NIn>(p, out, in0, in1, op, stream);
        return check_launch(op_name, p.kernel_name);
    }
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
    if (p.kernel == kEwBroadcast) {
        // out and the dense input must be 16-byte aligned; a misaligned view
        // (rare) takes the strided kernel below, same results.
        const BroadcastLayout b = broadcast_layout(p);
        const bool dense_aligned =
            aligned_to(out, kVectorBytes) && (NIn == 1 || aligned_to(b.input == 0 ? in1 : in0, kVectorBytes));
        if (dense_aligned) {
            if (b.input == 0) launch_broadcast<T, NIn, 0>(out, in0, in1, n, b.period, op, stream);
            if constexpr (NIn > 1) {
                if (b.input == 1) launch_broadcast<T, NIn, 1>(out, in0, in1, n, b.period, op, stream);
            }
            return check_launch(op_name, p.kernel_name);
        }
    }
    launch_strided<T, NIn>(p, out, in0, in1, op, stream);
    return check_launch(op_name, p.kernel_name);
}

}  // namespace oprt::gpu
