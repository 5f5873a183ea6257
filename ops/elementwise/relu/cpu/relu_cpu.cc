// relu on the CPU: the elementwise framework with x > 0 ? x : slope * x in f32.
#include "operator_runtime/detail/cpu_elementwise.h"
#include "operator_runtime/detail/dtype.h"
#include "ops/elementwise/relu/relu_backends.h"

namespace oprt::relu::cpu {
namespace {

template <typename T>
void relu(const ElementwisePlan &p, const ExecArgs &args) {
    const float slope = p.scalar;
    oprt::cpu::elementwise(p, static_cast<T *>(args.out), static_cast<const T *>(args.in0),
                           static_cast<const T *>(nullptr), [slope](T *o, const T *a, const T *) {
                               const float x = to_f32(*a);
                               const float scaled = slope * x;  // computed always: branch-free select
                               *o = from_f32<T>(x > 0.0f ? x : scaled);
                           });
}

}  // namespace

oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: relu<float>(plan, args); break;
    case OPRT_DTYPE_F16: relu<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: relu<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::relu::cpu
