// Entry points of every relu backend; the frontend (relu.cc) picks one.
#pragma once

#include "runtime/internal/dispatch.h"
#include "runtime/internal/plan.h"

namespace oprt::relu {
namespace cpu {
oprt_status_t plan(ElementwisePlan &plan);  // names the kernel
oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args);
}  // namespace cpu
namespace nvidia {
oprt_status_t plan(ElementwisePlan &plan);
oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args);
extern const VariantList<ElementwisePlan> ladder;  // plain to fastest
}  // namespace nvidia
namespace metax {
oprt_status_t plan(ElementwisePlan &plan);
oprt_status_t run(const ElementwisePlan &plan, const ExecArgs &args);
extern const VariantList<ElementwisePlan> ladder;  // plain to fastest
}  // namespace metax
}  // namespace oprt::relu
