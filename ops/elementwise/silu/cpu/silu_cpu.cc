// silu on the CPU: the elementwise framework (detail/cpu_elementwise.h) with
// the math below in f32; f16/bf16 are widened on load and rounded once on store.
#include "operator_runtime/detail/cpu_elementwise.h"
#include "operator_runtime/detail/dtype.h"
#include "ops/elementwise/silu/silu_backends.h"

namespace oprt::silu::cpu {
namespace {

// ---- the operator's math: edit here (and in nvidia/kernel.cuh, and the float64
// reference in python/operator_runtime_testing/reference.py) ----
inline float silu_f32(float x) {
    return x;  // placeholder: the identity
}
// ---- end of the operator's math ----

template <typename T>
void silu(const ElementwisePlan &p, const ExecArgs &args) {
    T *out = static_cast<T *>(args.out);
    const T *in = static_cast<const T *>(args.in0), *none = nullptr;
    oprt::cpu::elementwise(p, out, in, none, [](T *o, const T *a, const T *) {
        *o = from_f32<T>(silu_f32(to_f32(*a)));
    });
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
