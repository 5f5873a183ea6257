// relu with CuTe (OPRT_WITH_CUTE): the CuTe elementwise kernel with the NVIDIA
// backend's relu functor (negative_slope from the plan, f32 math, one rounding).
#include "runtime/gpu/cute_elementwise.cuh"
#include "runtime/gpu/cute_launch.h"
#include "ops/relu/nvidia/kernel.cuh"

namespace oprt::cute_kernels {

oprt_status_t launch_cute_relu(const ElementwisePlan &p, const ExecArgs &args) {
    constexpr const char *kOp = "oprt_execute_relu";
    constexpr const char *kName = "nvidia.cute_relu";
    const relu::gpu_kernels::ReluOp op{p.scalar};
    switch (p.dtype) {
    case OPRT_DTYPE_F32: return launch_cute_elementwise<float, 1>(kOp, kName, p, args, op);
    case OPRT_DTYPE_F16: return launch_cute_elementwise<dev::half_t, 1>(kOp, kName, p, args, op);
    case OPRT_DTYPE_BF16: return launch_cute_elementwise<dev::bf16_t, 1>(kOp, kName, p, args, op);
    }
    return fail(OPRT_ERR_UNSUPPORTED_DTYPE, "%s: %s: unknown dtype %d", kOp, kName,
                static_cast<int>(p.dtype));
}

}  // namespace oprt::cute_kernels
