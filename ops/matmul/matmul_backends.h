// Entry points of every matmul backend; the frontend (matmul.cc) picks one.
#pragma once

#include "runtime/internal/dispatch.h"
#include "runtime/internal/plan.h"

namespace oprt::matmul {
namespace cpu {
oprt_status_t plan(MatmulPlan &plan);  // names the kernel
oprt_status_t run(const MatmulPlan &plan, const ExecArgs &args);
extern const VariantList<MatmulPlan> ladder;  // plain to fastest (cpu/ladder.cc); last: "auto"
}  // namespace cpu
namespace nvidia {
oprt_status_t plan(MatmulPlan &plan);
oprt_status_t run(const MatmulPlan &plan, const ExecArgs &args);
extern const VariantList<MatmulPlan> ladder;  // plain to fastest
}  // namespace nvidia
namespace metax {
oprt_status_t plan(MatmulPlan &plan);
oprt_status_t run(const MatmulPlan &plan, const ExecArgs &args);
extern const VariantList<MatmulPlan> ladder;  // plain to fastest
}  // namespace metax
}  // namespace oprt::matmul
