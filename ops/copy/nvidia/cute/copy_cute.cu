// copy with CuTe (OPRT_WITH_CUTE): the CuTe elementwise kernel with the copy
// functor; 16-bit types move as raw 16-bit words, so f16 and bf16 share one kernel.
#include <cstdint>

#include "runtime/gpu/cute_elementwise.cuh"
#include "runtime/gpu/cute_launch.h"
#include "ops/copy/nvidia/kernel.cuh"

namespace oprt::cute_kernels {

oprt_status_t launch_cute_copy(const ElementwisePlan &p, const ExecArgs &args) {
    constexpr const char *kOp = "oprt_execute_copy";
    const copy::gpu_kernels::CopyOp op;
    if (p.dtype == OPRT_DTYPE_F32)
        return launch_cute_elementwise<float, 1>(kOp, "nvidia.cute_copy", p, args, op);
    return launch_cute_elementwise<uint16_t, 1>(kOp, "nvidia.cute_copy", p, args, op);
}

}  // namespace oprt::cute_kernels
