// CuTe kernels of the NVIDIA backend (compiled only with OPRT_WITH_CUTE, i.e.
// CAMP_ENABLE_CUTE found the CUTLASS headers: cmake/cutlass.cmake). They are
// alternatives to the hand-written kernels, to be offered as the "cute" variant
// of copy, vector_add and relu. Each takes the descriptor's plan and the
// execute arguments like a backend's run(); it handles contiguous layouts with
// 16-byte aligned pointers (128-bit accesses) and returns OPRT_ERR_NOT_SUPPORTED,
// with a message, for anything else, so that a caller can fall back.
#pragma once

#include "runtime/internal/dispatch.h"
#include "runtime/internal/plan.h"

namespace oprt::cute_kernels {

oprt_status_t launch_cute_copy(const ElementwisePlan &p, const ExecArgs &args);
oprt_status_t launch_cute_vector_add(const ElementwisePlan &p, const ExecArgs &args);
oprt_status_t launch_cute_relu(const ElementwisePlan &p, const ExecArgs &args);

}  // namespace oprt::cute_kernels
