// Entry points of every reduce_sum backend; the frontend (reduce_sum.cc) picks one.
#pragma once

#include "runtime/internal/dispatch.h"
#include "runtime/internal/plan.h"

namespace oprt::reduce_sum {
namespace cpu {
oprt_status_t plan(AxisPlan &plan);  // names the kernel
oprt_status_t run(const AxisPlan &plan, const ExecArgs &args);
extern const VariantList<AxisPlan> ladder;  // plain to fastest (cpu/ladder.cc); last: "auto"
}  // namespace cpu
namespace nvidia {
oprt_status_t plan(AxisPlan &plan);
oprt_status_t run(const AxisPlan &plan, const ExecArgs &args);
extern const VariantList<AxisPlan> ladder;  // plain to fastest
}  // namespace nvidia
namespace metax {
oprt_status_t plan(AxisPlan &plan);
oprt_status_t run(const AxisPlan &plan, const ExecArgs &args);
extern const VariantList<AxisPlan> ladder;  // plain to fastest
}  // namespace metax
}  // namespace oprt::reduce_sum
