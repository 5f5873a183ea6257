// vector_add with CuTe (OPRT_WITH_CUTE): the CuTe elementwise kernel with the
// NVIDIA backend's add functor (f32 math, one rounding). No broadcasting.
#include "runtime/gpu/cute_elementwise.cuh"
#include "runtime/gpu/cute_launch.h"
#include "ops/vector_add/nvidia/kernel.cuh"

namespace oprt::cute_kernels {

oprt_status_t launch_cute_vector_add(const ElementwisePlan &p, const ExecArgs &args) {
    constexpr const char *kOp = "oprt_execute_vector_add";
    constexpr const char *kName = "nvidia.cute_vector_add";
    const vector_add::gpu_kernels::AddOp op;
    switch (p.dtype) {
    case OPRT_DTYPE_F32: return launch_cute_elementwise<float, 2>(kOp, kName, p, args, op);
    case OPRT_DTYPE_F16: return launch_cute_elementwise<dev::half_t, 2>(kOp, kName, p, args, op);
    case OPRT_DTYPE_BF16: return launch_cute_elementwise<dev::bf16_t, 2>(kOp, kName, p, args, op);
    }
    return fail(OPRT_ERR_UNSUPPORTED_DTYPE, "%s: %s: unknown dtype %d", kOp, kName,
                static_cast<int>(p.dtype));
}

}  // namespace oprt::cute_kernels
