// The CPU elementwise framework: one flat loop the compiler vectorizes when
// every operand is dense, else a strided walk over the collapsed dims. An
// operator supplies only `op(T *out, const T *in0, const T *in1)`.
#pragma once

#include <cstdint>

#include "operator_runtime/detail/cpu_parallel.h"
#include "operator_runtime/detail/plan.h"

namespace oprt::cpu {

template <typename T, typename Op>
void elementwise(const ElementwisePlan &p, T *out, const T *in0, const T *in1, Op op) {
    if (in1 == nullptr) in1 = in0;  // unary ops ignore it; keeps pointer arithmetic defined
    const int64_t n = p.numel;
    if (p.contiguous) {
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
        for (int64_t i = 0; i < n; ++i) op(out + i, in0 + i, in1 + i);
        return;
    }
    // Strided: one task per row of the innermost collapsed dim.
    const int last = p.ndim - 1;
    const int64_t cols = p.shape[last];
    const int64_t rows = n / cols;
    const int64_t so = p.strides[0][last], s0 = p.strides[1][last],
                  s1 = p.num_inputs > 1 ? p.strides[2][last] : 0;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
        int64_t oo = 0, o0 = 0, o1 = 0, rest = r;
        for (int d = last - 1; d >= 0; --d) {
            const int64_t idx = rest % p.shape[d];
            rest /= p.shape[d];
            oo += idx * p.strides[0][d];
            o0 += idx * p.strides[1][d];
            if (p.num_inputs > 1) o1 += idx * p.strides[2][d];
        }
        T *po = out + oo;
        const T *p0 = in0 + o0, *p1 = in1 + o1;
        for (int64_t c = 0; c < cols; ++c) op(po + c * so, p0 + c * s0, p1 + c * s1);
    }
}

}  // namespace oprt::cpu
