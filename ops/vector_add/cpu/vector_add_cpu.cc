// vector_add on the CPU: the elementwise framework with a + b in f32.
#include "runtime/cpu/cpu_elementwise.h"
#include "runtime/internal/dtype.h"
#include "ops/vector_add/vector_add_backends.h"

namespace oprt::vector_add::cpu {
namespace {

template <typename T>
void add(const ElementwisePlan &p, const ExecArgs &args) {
    oprt::cpu::elementwise_f32(p, static_cast<T *>(args.out), static_cast<const T *>(args.in0),
                               static_cast<const T *>(args.in1), [](float a, float b) { return a + b; });
}

}  // namespace

oprt_status_t plan(ElementwisePlan &plan) {
    plan.kernel_name = plan.contiguous ? "cpu.contiguous" : "cpu.strided";
    return OPRT_SUCCESS;
}

oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: add<float>(plan, args); break;
    case OPRT_DTYPE_F16: add<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: add<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::vector_add::cpu
