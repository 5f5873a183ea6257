// Plans: plain data computed once when a descriptor is created, after the
// frontend has validated every argument. Backends read a plan and launch; they
// never re-check arguments. Pure C++, shared by host and device code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operator_runtime/api.h"

namespace oprt {

// Elementwise ops (copy, vector_add, relu): out[i] = f(in0[i], in1[i]).
// Dimensions are collapsed across all operands (size-1 dims dropped, dims
// ordered by out's strides, neighbours merged where every operand is dense
// across them), so a dense tensor of any shape becomes ndim == 1.
struct ElementwisePlan {
    static constexpr int kMaxOperands = 3;  // [0] out, [1] in0, [2] in1
    oprt_dtype_t dtype = OPRT_DTYPE_F32;
    int32_t num_inputs = 1;
    int64_t numel = 0;
    int32_t ndim = 0;  // collapsed; 0 means a single element
    int64_t shape[OPRT_MAX_DIMS] = {};
    int64_t strides[kMaxOperands][OPRT_MAX_DIMS] = {};  // in elements; 0 = broadcast
    // Every operand's element i sits at offset i: one flat loop, vectorizable.
    bool contiguous = false;
    float scalar = 0.0f;  // the op's scalar parameter (relu: negative_slope)
    // Set by the backend's plan hook: which kernel runs, and its scratch need.
    int32_t kernel = 0;
    const char *kernel_name = "";
    size_t workspace_bytes = 0;
};

// One-axis ops (reduce_sum, softmax). Element (o, k, i) of the input is at
//   in_offset(o) + k * in_axis_stride + i
// and its output at out_offset(o) + i (+ k * out_axis_stride for softmax),
// where o runs over the `outer` positions (a collapsed index space of
// outer_ndim dims), k over the axis, and i over an `inner` run that is
// stride-1 in both tensors (inner == 1 when there is none).
struct AxisPlan {
    oprt_dtype_t dtype = OPRT_DTYPE_F32;
    int64_t axis_len = 0;
    int64_t in_axis_stride = 0;
    int64_t out_axis_stride = 0;  // softmax only
    int64_t inner = 1;
    int64_t outer = 1;
    int32_t outer_ndim = 0;
    int64_t outer_shape[OPRT_MAX_DIMS] = {};
    int64_t in_outer_strides[OPRT_MAX_DIMS] = {};
    int64_t out_outer_strides[OPRT_MAX_DIMS] = {};
    int64_t in_numel = 0;
    int64_t out_numel = 0;
    // Set by the backend's plan hook: which kernel runs, and its scratch need.
    int32_t kernel = 0;
    const char *kernel_name = "";
    int64_t launch[4] = {};  // backend-specific launch geometry chosen for this shape
    size_t workspace_bytes = 0;

    // Dense rows: the axis is stride-1 in the input (and the output, for
    // softmax) and there is no inner run: the row fast path applies.
    bool rows_contiguous(bool check_out_axis) const {
        return inner == 1 && (axis_len <= 1 || in_axis_stride == 1) &&
               (!check_out_axis || axis_len <= 1 || out_axis_stride == 1);
    }
};

// matmul: C (M, N) = A (M, K) @ B (K, N), each operand 2-D with its own strides
// in elements (A[i][p] at a + i * a_row + p * a_col; an input stride may be 0).
struct MatmulPlan {
    oprt_dtype_t dtype = OPRT_DTYPE_F32;
    int64_t m = 0, n = 0, k = 0;
    int64_t a_row = 0, a_col = 0;
    int64_t b_row = 0, b_col = 0;
    int64_t c_row = 0, c_col = 0;
    // Set by the backend's plan hook: which kernel runs, and its scratch need.
    int32_t kernel = 0;
    const char *kernel_name = "";
    int64_t launch[4] = {};  // backend-specific launch geometry chosen for this shape
    size_t workspace_bytes = 0;
};

// Offsets of outer position `o` in the input and the output.
#if defined(__CUDACC__) || defined(__MACACC__)
__host__ __device__
#endif
inline void axis_outer_offsets(const AxisPlan &p, int64_t o, int64_t *in_off, int64_t *out_off) {
    int64_t in = 0, out = 0;
    for (int d = p.outer_ndim - 1; d >= 0; --d) {
        const int64_t idx = o % p.outer_shape[d];
        o /= p.outer_shape[d];
        in += idx * p.in_outer_strides[d];
        out += idx * p.out_outer_strides[d];
    }
    *in_off = in;
    *out_off = out;
}

}  // namespace oprt
