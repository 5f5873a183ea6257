// The CPU elementwise framework: one flat loop the compiler vectorizes when
// every operand is dense, else a strided walk over the collapsed dims. An
// operator supplies its math in f32, `float f(float a, float b)` (unary ops
// ignore b), to elementwise_f32; `elementwise` takes a raw
// `op(T *out, const T *in0, const T *in1)` (copy moves bits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "operator_runtime/detail/cpu_convert.h"
#include "operator_runtime/detail/cpu_parallel.h"
#include "operator_runtime/detail/dtype.h"
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

// Values a dense 16-bit run widens at a time (2 KiB of f32 per operand, in L1).
constexpr int64_t kConvertBlock = 512;

// f(a, b) over the operands in f32. Dense 16-bit runs widen blocks of values
// into f32 buffers, apply f, and round once on the way out (cpu_convert.h:
// F16C for f16), so f's loop vectorizes like f32's; the rest converts value
// by value.
template <typename T, typename F>
void elementwise_f32(const ElementwisePlan &p, T *out, const T *in0, const T *in1, F f) {
    if constexpr (!std::is_same_v<T, float>) {
        if (p.contiguous) {
            const int64_t n = p.numel, blocks = (n + kConvertBlock - 1) / kConvertBlock;
            const bool binary = p.num_inputs > 1;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
            for (int64_t b = 0; b < blocks; ++b) {
                const int64_t i0 = b * kConvertBlock, m = std::min(kConvertBlock, n - i0);
                float x[kConvertBlock], y[kConvertBlock];
                widen(in0 + i0, x, m);
                if (binary) {
                    widen(in1 + i0, y, m);
                    for (int64_t i = 0; i < m; ++i) x[i] = f(x[i], y[i]);
                } else {
                    for (int64_t i = 0; i < m; ++i) x[i] = f(x[i], 0.0f);
                }
                narrow(x, out + i0, m);
            }
            return;
        }
    }
    elementwise(p, out, in0, in1,
                [f](T *o, const T *a, const T *b) { *o = from_f32<T>(f(to_f32(*a), to_f32(*b))); });
}

}  // namespace oprt::cpu
