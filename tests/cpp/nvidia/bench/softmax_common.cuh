// Host helpers shared by the softmax benchmarks (softmax_rows.cu,
// softmax_cluster.cu): the tests' tolerances, the float64 reference of a row,
// and the library's plan for dense rows through the C API.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "operator_runtime/api.h"
#include "operator_runtime/ops/softmax.h"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"
#include "tests/cpp/nvidia/bench/sweep_common.cuh"

// The library's test tolerances (tests/cpp/nvidia/op_cases.h, softmax_tol).
template <typename T>
double softmax_rtol() {
    return sizeof(T) == 4 ? 1e-5 : std::is_same<T, __half>::value ? 2e-3 : 8e-3;
}
// The absolute part: f16 rounds outputs below its smallest normal (6.1e-5) to
// subnormal steps of 6e-8 (op_cases.h's softmax_tol: 1e-7).
template <typename T>
double softmax_atol() {
    return std::is_same<T, __half>::value ? 1e-7 : 1e-12;
}

// put(k, y) for every element k of the row x[0, L), y its softmax in float64.
template <typename T, typename F>
void softmax_reference_row(const T *x, int64_t L, F put) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < L; ++k) m = std::max(m, double(to_float(x[k])));
    for (int64_t k = 0; k < L; ++k) s += std::exp(double(to_float(x[k])) - m);
    for (int64_t k = 0; k < L; ++k) put(k, std::exp(double(to_float(x[k])) - m) / s);
}

// The library's softmax over the last axis of `rows` dense rows of L
// elements of T (descriptor, kernel name, workspace); exits on failure.
struct SoftmaxPlan {
    oprt_softmax_descriptor_t desc = nullptr;
    void *ws = nullptr;
    size_t ws_bytes = 0;
    std::string kernel;
};
template <typename T>
SoftmaxPlan make_softmax_plan(void *in, void *out, int64_t rows, int64_t L) {
    oprt_tensor_view_t v{};
    v.data = in;
    v.dtype = dtype_enum<T>();
    v.ndim = 2;
    v.shape[0] = rows;
    v.shape[1] = L;
    v.strides[0] = L;
    v.strides[1] = 1;
    oprt_tensor_view_t o = v;
    o.data = out;
    SoftmaxPlan p;
    if (oprt_create_softmax_descriptor(&p.desc, &o, &v, 1) != OPRT_SUCCESS) {
        std::printf("oprt_create_softmax_descriptor: %s\n", oprt_last_error_message());
        std::exit(1);
    }
    const char *kernel = "?";
    oprt_get_softmax_kernel_name(p.desc, &kernel);
    p.kernel = kernel;
    oprt_get_softmax_workspace_size(p.desc, &p.ws_bytes);
    if (p.ws_bytes > 0) CK(cudaMalloc(&p.ws, p.ws_bytes));
    return p;
}
inline void execute_softmax_plan(const SoftmaxPlan &p, const void *in, void *out, cudaStream_t stream) {
    const oprt_status_t s = oprt_execute_softmax(p.desc, p.ws, p.ws_bytes, out, in, stream);
    if (s != OPRT_SUCCESS) {
        std::printf("oprt_execute_softmax: %s: %s\n", oprt_status_string(s), oprt_last_error_message());
        std::exit(1);
    }
}
inline void destroy_softmax_plan(SoftmaxPlan &p) {
    if (p.desc != nullptr) oprt_destroy_softmax_descriptor(p.desc);
    if (p.ws != nullptr) CK(cudaFree(p.ws));
    p = SoftmaxPlan{};
}
