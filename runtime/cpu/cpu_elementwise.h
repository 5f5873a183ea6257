// The CPU elementwise framework: one flat loop the compiler vectorizes when
// every operand is dense, else a walk over the rows of the collapsed dims. An
// operator supplies its math in f32, `float f(float a, float b)` (unary ops
// ignore b), to elementwise_f32; `elementwise` takes a raw
// `op(T *out, const T *in0, const T *in1)` (copy moves bits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/cpu/cpu_convert.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "runtime/internal/plan.h"

namespace oprt::cpu {

// Calls row(out, in0, in1, cols, so, s0, s1) for every row of the innermost
// collapsed dim (its length and the operands' strides along it), one task per row.
template <typename T, typename Row>
void for_each_row(const ElementwisePlan &p, T *out, const T *in0, const T *in1, Row row) {
    const int last = p.ndim - 1;
    const int64_t cols = p.shape[last];
    const int64_t rows = p.numel / cols;
    const int64_t so = p.strides[0][last], s0 = p.strides[1][last],
                  s1 = p.num_inputs > 1 ? p.strides[2][last] : 0;
    const int64_t grain = cols > 0 ? (kParallelGrain + cols - 1) / cols : rows;  // rows per chunk
    parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            int64_t oo = 0, o0 = 0, o1 = 0, rest = r;
            for (int d = last - 1; d >= 0; --d) {
                const int64_t idx = rest % p.shape[d];
                rest /= p.shape[d];
                oo += idx * p.strides[0][d];
                o0 += idx * p.strides[1][d];
                if (p.num_inputs > 1) o1 += idx * p.strides[2][d];
            }
            row(out + oo, in0 + o0, in1 + o1, cols, so, s0, s1);
        }
    });
}

// op(out + i, in0 + i, in1 + i) for i in [0, n): the loop of dense runs, built for
// AVX-512, AVX2 and baseline x86-64 (OPRT_CPU_CLONES) as the compute loops are. At
// small sizes these loops are not memory-bound: vector_add on 4096 f32 took 0.29 us
// with its operands in cache at the baseline's 4 floats a vector against 0.10 at
// AVX-512's 16, and 1.6 against 1.1 us from DRAM (2-core development machine, AMD
// EPYC with AVX-512, 2026-12-05). `op` comes by value: the loop reads a local copy
// (reading the captures through a reference inside the loop ran 1.7x slower).
template <typename T, typename Op>
OPRT_CPU_CLONES void dense_loop(T *out, const T *in0, const T *in1, int64_t n, Op op) {
    for (int64_t i = 0; i < n; ++i) op(out + i, in0 + i, in1 + i);
}

template <typename T, typename Op>
void elementwise(const ElementwisePlan &p, T *out, const T *in0, const T *in1, Op op) {
    if (in1 == nullptr) in1 = in0;  // unary ops ignore it; keeps pointer arithmetic defined
    const int64_t n = p.numel;
    if (p.contiguous) {
        parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
            dense_loop(out + begin, in0 + begin, in1 + begin, end - begin, op);
        });
        return;
    }
    // Rows whose values are adjacent in every operand (a broadcast row among them) take the
    // dense loop too.
    const bool unary = p.num_inputs < 2;
    for_each_row(p, out, in0, in1,
                 [&op, unary](T *po, const T *p0, const T *p1, int64_t cols, int64_t so, int64_t s0, int64_t s1) {
                     if (so == 1 && s0 == 1 && (unary || s1 == 1)) {
                         dense_loop(po, p0, p1, cols, op);
                         return;
                     }
                     for (int64_t c = 0; c < cols; ++c) op(po + c * so, p0 + c * s0, p1 + c * s1);
                 });
}

// Values a dense 16-bit run widens at a time (2 KiB of f32 per operand, in L1).
constexpr int64_t kConvertBlock = 512;

// f over n dense 16-bit values in blocks: widened into f32 buffers, f applied,
// rounded once on the way out (cpu_convert.h: F16C for f16), so f's loop
// vectorizes like f32's (and, as dense_loop, at each ISA's width). in1 is read
// only when `binary`.
template <typename T, typename F>
OPRT_CPU_CLONES void dense_f32_blocks(T *out, const T *in0, const T *in1, int64_t n, bool binary, F f) {
    float x[kConvertBlock], y[kConvertBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kConvertBlock) {
        const int64_t m = std::min(kConvertBlock, n - i0);
        widen(in0 + i0, x, m);
        if (binary) {
            widen(in1 + i0, y, m);
            for (int64_t i = 0; i < m; ++i) x[i] = f(x[i], y[i]);
        } else {
            for (int64_t i = 0; i < m; ++i) x[i] = f(x[i], 0.0f);
        }
        narrow(x, out + i0, m);
    }
}

// f(a, b) over the operands in f32. 16-bit operands go through
// dense_f32_blocks where they are dense: the whole tensor, one task per block,
// or each row whose values are adjacent in every operand; the rest converts
// value by value.
template <typename T, typename F>
void elementwise_f32(const ElementwisePlan &p, T *out, const T *in0, const T *in1, F f) {
    if constexpr (!std::is_same_v<T, float>) {
        const bool binary = p.num_inputs > 1;
        if (p.contiguous) {
            const int64_t n = p.numel, blocks = (n + kConvertBlock - 1) / kConvertBlock;
            parallel_for(blocks, kParallelGrain / kConvertBlock, [&](int64_t b0, int64_t b1) {
                const int64_t i0 = b0 * kConvertBlock, i1 = std::min(b1 * kConvertBlock, n);
                dense_f32_blocks(out + i0, in0 + i0, binary ? in1 + i0 : nullptr, i1 - i0, binary, f);
            });
            return;
        }
        if (in1 == nullptr) in1 = in0;
        for_each_row(p, out, in0, in1,
                     [&f, binary](T *po, const T *p0, const T *p1, int64_t cols, int64_t so, int64_t s0, int64_t s1) {
                         if (so == 1 && s0 == 1 && (!binary || s1 == 1)) {
                             dense_f32_blocks(po, p0, p1, cols, binary, f);
                         } else {
                             for (int64_t c = 0; c < cols; ++c)
                                 po[c * so] = from_f32<T>(f(to_f32(p0[c * s0]), to_f32(p1[c * s1])));
                         }
                     });
    } else {
        elementwise(p, out, in0, in1, [f](float *o, const float *a, const float *b) { *o = f(*a, *b); });
    }
}

}  // namespace oprt::cpu
