// softmax on the CPU, one row (or strided slice) per task. Rows up to
// kBufferedRow elements are read from memory once into an f32 buffer that
// stays in cache: max, then exp and sum in place, then scale and store.
// Longer rows take two streaming passes: an online max and sum per chunk, then
// exp and scale. All loops are plain arithmetic the compiler vectorizes.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_convert.h"
#include "runtime/cpu/cpu_math.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "ops/softmax/softmax_backends.h"

namespace oprt::softmax::cpu {
namespace {

using oprt::cpu::exp_f32;

constexpr int64_t kBufferedRow = 1 << 18;  // 1 MiB of f32: mostly in a core's L2 (measured faster than streaming)
constexpr int64_t kChunk = 2048;
constexpr int kLanes = 16;

// Max over n values; NaN is ignored here and propagates through exp later.
OPRT_CPU_CLONES float max_of(const float *x, int64_t n) {
    float lane[kLanes];
    std::fill(lane, lane + kLanes, -__builtin_inff());
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    float m = -__builtin_inff();
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    for (int l = 0; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
    return m;
}

// x[i] = exp(x[i] - m) in place; returns the sum.
OPRT_CPU_CLONES float exp_sum_inplace(float *x, int64_t n, float m) {
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            const float e = exp_f32(x[i + l] - m);
            x[i + l] = e;
            lane[l] += e;
        }
    float s = 0.0f;
    for (; i < n; ++i) {
        x[i] = exp_f32(x[i] - m);
        s += x[i];
    }
    for (int l = 0; l < kLanes; ++l) s += lane[l];
    return s;
}

// x[i] = exp(x[i] - m) * scale in place: the second pass of long rows.
OPRT_CPU_CLONES void exp_scale_inplace(float *x, int64_t n, float m, float scale) {
    for (int64_t i = 0; i < n; ++i) x[i] = exp_f32(x[i] - m) * scale;
}

// Dense 16-bit rows convert as arrays (cpu_convert.h: F16C for f16).
template <typename T>
inline void load(float *dst, const T *src, int64_t n, int64_t stride) {
    if constexpr (!std::is_same_v<T, float>) {
        if (stride == 1) return oprt::cpu::widen(src, dst, n);
    }
    if (stride == 1)
        for (int64_t i = 0; i < n; ++i) dst[i] = to_f32(src[i]);
    else
        for (int64_t i = 0; i < n; ++i) dst[i] = to_f32(src[i * stride]);
}

// dst = src * scale; src is the caller's buffer, scaled in place for 16-bit rows.
template <typename T>
inline void store_scaled(T *dst, float *src, int64_t n, int64_t stride, float scale) {
    if constexpr (!std::is_same_v<T, float>) {
        if (stride == 1) {
            if (scale != 1.0f)
                for (int64_t i = 0; i < n; ++i) src[i] *= scale;
            return oprt::cpu::narrow(src, dst, n);
        }
    }
    if (stride == 1)
        for (int64_t i = 0; i < n; ++i) dst[i] = from_f32<T>(src[i] * scale);
    else
        for (int64_t i = 0; i < n; ++i) dst[i * stride] = from_f32<T>(src[i] * scale);
}

template <typename T>
void softmax_buffered(const T *in, int64_t in_stride, T *out, int64_t out_stride, int64_t n,
                      float *buf) {
    load(buf, in, n, in_stride);
    const float m = max_of(buf, n);
    const float s = exp_sum_inplace(buf, n, m);
    store_scaled(out, buf, n, out_stride, 1.0f / s);
}

// Long rows: chunks of the row go through `buf` (kChunk floats) twice.
template <typename T>
void softmax_streaming(const T *in, int64_t in_stride, T *out, int64_t out_stride, int64_t n,
                       float *buf) {
    float m = -__builtin_inff(), s = 0.0f;
    bool nan = false;
    for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t len = std::min(kChunk, n - c);
        load(buf, in + c * in_stride, len, in_stride);
        const float cm = max_of(buf, len);
        if (cm > m) {
            s *= exp_f32(m - cm);  // rescale the running sum to the new max
            m = cm;
        }
        // While every value so far is -inf, exp(x - m) would be exp(-inf + inf) = NaN:
        // use 0 as the reference instead (the sum stays 0, NaN inputs still give NaN).
        const float cs = exp_sum_inplace(buf, len, m == -__builtin_inff() ? 0.0f : m);
        nan = nan || cs != cs;
        s += cs;
    }
    const float scale = nan ? __builtin_nanf("") : 1.0f / s;
    for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t len = std::min(kChunk, n - c);
        load(buf, in + c * in_stride, len, in_stride);
        exp_scale_inplace(buf, len, m, scale);
        store_scaled(out + c * out_stride, buf, len, out_stride, 1.0f);
    }
}

template <typename T>
void softmax(const AxisPlan &p, const ExecArgs &args) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const int64_t n = p.axis_len;
    const int64_t slices = p.outer * p.inner;
    const bool buffered = n <= kBufferedRow;
#pragma omp parallel if (oprt::cpu::fan_out(p.in_numel))
    {
        std::vector<float> buf(size_t(buffered ? n : kChunk));
#pragma omp for schedule(static)
        for (int64_t t = 0; t < slices; ++t) {
            const int64_t o = t / p.inner, i = t % p.inner;
            int64_t io, oo;
            axis_outer_offsets(p, o, &io, &oo);
            if (buffered)
                softmax_buffered(in + io + i, p.in_axis_stride, out + oo + i, p.out_axis_stride, n,
                                 buf.data());
            else
                softmax_streaming(in + io + i, p.in_axis_stride, out + oo + i, p.out_axis_stride,
                                  n, buf.data());
        }
    }
}

}  // namespace

oprt_status_t plan(AxisPlan &plan) {
    const bool buffered = plan.axis_len <= kBufferedRow;
    if (plan.rows_contiguous(/*check_out_axis=*/true))
        plan.kernel_name = buffered ? "cpu.rows_buffered" : "cpu.rows_streaming";
    else
        plan.kernel_name = buffered ? "cpu.strided_buffered" : "cpu.strided_streaming";
    return OPRT_SUCCESS;
}

oprt_status_t run(const AxisPlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: softmax<float>(plan, args); break;
    case OPRT_DTYPE_F16: softmax<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: softmax<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::softmax::cpu
