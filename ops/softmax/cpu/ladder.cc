// The softmax kernel ladder of the CPU backend (oprt_list_softmax_variants with
// OPRT_BACKEND_CPU), plain to fastest; each step changes one idea:
//   three_pass  one thread, three loops over each slice: max, sum of exp, normalize
//   online      one reading pass keeping a running (max, sum), then the writing pass
//   vectorized  dense rows widened once into an f32 buffer (16-bit types converted in
//               blocks), 16-lane loops and a polynomial exp the compiler turns into SIMD
//   auto        the production kernel (softmax_cpu.cc): the vectorized step over the pool's
//               threads, whole rows a task (at least 2^15 elements' worth), long rows
//               streamed in chunks
// Compare them: python3 tests/run_ops.py --op softmax --backend cpu --mode bench --variant all
// Special values as everywhere: NaN propagates through the sum; a slice of all
// -inf gives NaN (exp(-inf - -inf)); a +inf gives NaN (exp(inf - inf)).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_convert.h"
#include "runtime/cpu/cpu_math.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "ops/softmax/softmax_backends.h"

namespace oprt::softmax::cpu {
namespace {

constexpr float kNegInf = -__builtin_inff();

// Slice t = (o, i) of the plan: its first input and output elements. Element k of
// the slice sits k * in_axis_stride (k * out_axis_stride) further: every layout.
template <typename T>
void slice(const AxisPlan &p, const ExecArgs &a, int64_t t, const T **in, T **out) {
    const int64_t o = t / p.inner, i = t % p.inner;
    int64_t io, oo;
    axis_outer_offsets(p, o, &io, &oo);
    *in = static_cast<const T *>(a.in0) + io + i;
    *out = static_cast<T *>(a.out) + oo + i;
}

// ---- Step 1: three_pass --------------------------------------------------------------
// The definition, loop by loop: the input is read three times, one element at a
// time through libm's exp; the sum is a double so that long rows stay exact.
template <typename T>
void three_pass(const AxisPlan &p, const ExecArgs &a) {
    const int64_t n = p.axis_len, si = p.in_axis_stride, so = p.out_axis_stride;
    for (int64_t t = 0; t < p.outer * p.inner; ++t) {
        const T *in;
        T *out;
        slice(p, a, t, &in, &out);
        float m = kNegInf;  // x > m is false for NaN: NaN reaches the output through the sum
        for (int64_t k = 0; k < n; ++k) {
            const float x = to_f32(in[k * si]);
            if (x > m) m = x;
        }
        double s = 0.0;
        for (int64_t k = 0; k < n; ++k) s += std::exp(to_f32(in[k * si]) - m);
        const float inv = float(1.0 / s);
        for (int64_t k = 0; k < n; ++k) out[k * so] = from_f32<T>(std::exp(to_f32(in[k * si]) - m) * inv);
    }
}

// ---- Step 2: online --------------------------------------------------------------------
// Max and sum in one pass: when a larger x arrives, the sum so far is rescaled by
// exp(old max - x). The input is read twice instead of three times.
template <typename T>
void online(const AxisPlan &p, const ExecArgs &a) {
    const int64_t n = p.axis_len, si = p.in_axis_stride, so = p.out_axis_stride;
    for (int64_t t = 0; t < p.outer * p.inner; ++t) {
        const T *in;
        T *out;
        slice(p, a, t, &in, &out);
        float m = kNegInf;
        double s = 0.0;
        for (int64_t k = 0; k < n; ++k) {
            const float x = to_f32(in[k * si]);
            if (x > m) {
                s *= std::exp(m - x);  // the terms so far, relative to the new max
                m = x;
            }
            // While the max is still -inf, x is -inf too: exp(x - 0) = 0 adds nothing
            // (exp(-inf - -inf) would be NaN); NaN inputs still make the sum NaN.
            s += std::exp(x - (m == kNegInf ? 0.0f : m));
        }
        const float inv = float(1.0 / s);
        for (int64_t k = 0; k < n; ++k) out[k * so] = from_f32<T>(std::exp(to_f32(in[k * si]) - m) * inv);
    }
}

// ---- Step 3: vectorized -----------------------------------------------------------------
// Dense rows only: the row is converted once into an f32 buffer, then each loop
// keeps 16 independent lanes and calls exp_f32 (no libm, no branches), which the
// compiler turns into SIMD instructions; OPRT_CPU_CLONES builds AVX-512 / AVX2 copies.
constexpr int kLanes = 16;

OPRT_CPU_CLONES float lanes_max(const float *x, int64_t n) {
    float lane[kLanes];
    std::fill(lane, lane + kLanes, kNegInf);
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] = x[k + l] > lane[l] ? x[k + l] : lane[l];
    float m = kNegInf;
    for (; k < n; ++k) m = x[k] > m ? x[k] : m;
    for (int l = 0; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
    return m;
}

// x[k] = exp(x[k] - m) in place; returns their sum.
OPRT_CPU_CLONES float lanes_exp_sum(float *x, int64_t n, float m) {
    float lane[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            x[k + l] = oprt::cpu::exp_f32(x[k + l] - m);
            lane[l] += x[k + l];
        }
    float s = 0.0f;
    for (; k < n; ++k) {
        x[k] = oprt::cpu::exp_f32(x[k] - m);
        s += x[k];
    }
    for (int l = 0; l < kLanes; ++l) s += lane[l];
    return s;
}

OPRT_CPU_CLONES void scale(float *x, int64_t n, float by) {
    for (int64_t k = 0; k < n; ++k) x[k] *= by;
}

template <typename T>
void vectorized(const AxisPlan &p, const ExecArgs &a) {
    const int64_t n = p.axis_len;
    std::vector<float> buf(size_t(std::max<int64_t>(n, 1)));
    for (int64_t r = 0; r < p.outer; ++r) {
        const T *in;
        T *out;
        slice(p, a, r, &in, &out);
        if constexpr (std::is_same_v<T, float>)
            std::copy(in, in + n, buf.data());
        else
            oprt::cpu::widen(in, buf.data(), n);  // 16-bit to f32 as a block (F16C for f16)
        const float m = lanes_max(buf.data(), n);
        scale(buf.data(), n, 1.0f / lanes_exp_sum(buf.data(), n, m));
        if constexpr (std::is_same_v<T, float>)
            std::copy(buf.data(), buf.data() + n, out);
        else
            oprt::cpu::narrow(buf.data(), out, n);
    }
}

// ---- The steps' plan and run functions ---------------------------------------------------

enum Step { kThreePass, kOnline, kVectorized };

template <Step S, typename T>
void run_step(const AxisPlan &p, const ExecArgs &a) {
    if constexpr (S == kThreePass) three_pass<T>(p, a);
    if constexpr (S == kOnline) online<T>(p, a);
    if constexpr (S == kVectorized) vectorized<T>(p, a);
}

template <Step S>
oprt_status_t run(const AxisPlan &p, const ExecArgs &a) {
    switch (p.dtype) {
    case OPRT_DTYPE_F32: run_step<S, float>(p, a); break;
    case OPRT_DTYPE_F16: run_step<S, f16_t>(p, a); break;
    case OPRT_DTYPE_BF16: run_step<S, bf16_t>(p, a); break;
    }
    return OPRT_SUCCESS;
}

oprt_status_t plan_three_pass(AxisPlan &p) {
    p.kernel_name = "cpu.three_pass";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t plan_online(AxisPlan &p) {
    p.kernel_name = "cpu.online";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t plan_vectorized(AxisPlan &p) {
    if (!p.rows_contiguous(/*check_out_axis=*/true))
        return fail(OPRT_ERR_NOT_SUPPORTED,
                    "'vectorized' loads each row as consecutive values: the softmax axis must have "
                    "stride 1 in and out with nothing after it (here axis strides %lld / %lld, inner "
                    "run %lld); use 'three_pass', 'online' or 'auto'",
                    (long long)p.in_axis_stride, (long long)p.out_axis_stride, (long long)p.inner);
    p.kernel_name = "cpu.vectorized";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

const Variant<AxisPlan> kLadderSteps[] = {
    {"three_pass", &plan_three_pass, &run<kThreePass>},
    {"online", &plan_online, &run<kOnline>},
    {"vectorized", &plan_vectorized, &run<kVectorized>},
    {"auto", &plan},  // the production plan and kernel (softmax_cpu.cc)
};

}  // namespace

const VariantList<AxisPlan> ladder = {kLadderSteps, 4};

}  // namespace oprt::softmax::cpu
