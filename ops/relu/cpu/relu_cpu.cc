// relu on the CPU: the elementwise framework with x > 0 ? x : slope * x in f32.
#include "runtime/cpu/cpu_elementwise.h"
#include "runtime/internal/dtype.h"
#include "ops/relu/relu_backends.h"

namespace oprt::relu::cpu {
namespace {

template <typename T>
void relu(const ElementwisePlan &p, const ExecArgs &args) {
    T *out = static_cast<T *>(args.out);
    const T *in = static_cast<const T *>(args.in0), *none = nullptr;
    const float slope = p.scalar;
    if (slope == 0.0f) {  // plain ReLU: max(x, 0), NaN kept (x == x is false only for NaN)
        oprt::cpu::elementwise_f32(p, out, in, none, [](float x, float) { return x > 0.0f || x != x ? x : 0.0f; });
        return;
    }
    oprt::cpu::elementwise_f32(p, out, in, none, [slope](float x, float) {
        const float scaled = slope * x;  // computed always: the select becomes a blend
        return x > 0.0f ? x : scaled;
    });
}

}  // namespace

oprt_status_t plan(ElementwisePlan &plan) {
    plan.kernel_name = plan.contiguous ? "cpu.contiguous" : "cpu.strided";
    return OPRT_SUCCESS;
}

oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: relu<float>(plan, args); break;
    case OPRT_DTYPE_F16: relu<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: relu<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::relu::cpu
