// silu on the CPU: the elementwise framework (runtime/cpu/cpu_elementwise.h) with
// the math below in f32; f16/bf16 are widened on load and rounded once on store.
// exp is cpu_math.h's branch-free polynomial, so the loop vectorizes.
#include <algorithm>
#include <type_traits>

#include "runtime/cpu/cpu_elementwise.h"
#include "runtime/cpu/cpu_math.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "ops/silu/silu_backends.h"

namespace oprt::silu::cpu {
namespace {

// ---- the operator's math: edit here (and in nvidia/kernel.cuh, and the float64
// reference in python/operator_runtime_testing/reference/silu.py) ----
// x * sigmoid(x) with e = exp(-|x|) in (0, 1], which never overflows:
// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, accurate in
// both tails. When e underflows to 0 (x < -87) the true result is below
// 1e-36: -0, also for x = -inf where x * 0 would be NaN. NaN stays NaN.
inline float silu_f32(float x) {
    const float e = oprt::cpu::exp_f32(x > 0.0f ? -x : x);
    const float s = (x >= 0.0f ? 1.0f : e) / (1.0f + e);
    return s == 0.0f ? -0.0f : x * s;
}
// ---- end of the operator's math ----

// Dense f32 runs, compiled for AVX-512, AVX2 and baseline x86-64 (the exp
// polynomial and the division gain from the wider vectors).
OPRT_CPU_CLONES void silu_dense_f32(float *out, const float *in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = silu_f32(in[i]);
}

template <typename T>
void silu(const ElementwisePlan &p, const ExecArgs &args) {
    T *out = static_cast<T *>(args.out);
    const T *in = static_cast<const T *>(args.in0), *none = nullptr;
    if constexpr (std::is_same_v<T, float>) {
        if (p.contiguous) {
            oprt::cpu::parallel_for(p.numel, oprt::cpu::kParallelGrain, [&](int64_t begin, int64_t end) {
                silu_dense_f32(out + begin, in + begin, end - begin);
            });
            return;
        }
    }
    oprt::cpu::elementwise_f32(p, out, in, none, [](float x, float) { return silu_f32(x); });
}

}  // namespace

oprt_status_t plan(ElementwisePlan &plan) {
    plan.kernel_name = plan.contiguous ? "cpu.contiguous" : "cpu.strided";
    return OPRT_SUCCESS;
}

oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: silu<float>(plan, args); break;
    case OPRT_DTYPE_F16: silu<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: silu<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::silu::cpu
