// copy on NVIDIA GPUs: launch code. The kernels are the elementwise
// framework's (runtime/gpu/gpu_elementwise.cuh) with the functor of kernel.cuh.
#include <cstdint>

#include "runtime/gpu/gpu_runtime.h"
#if defined(OPRT_WITH_CUTE)
#include "runtime/gpu/cute_launch.h"
#endif
#include "ops/copy/copy_backends.h"
#include "ops/copy/nvidia/kernel.cuh"

namespace oprt::copy::OPRT_GPU_BACKEND_NS {
namespace {
constexpr const char *kOp = "oprt_execute_copy";
}  // namespace

oprt_status_t plan(ElementwisePlan &p) {
    gpu::plan_elementwise(p);
    return OPRT_SUCCESS;
}

#if defined(OPRT_WITH_CUTE)  // scalar_grid_stride -> cute -> vec16
const VariantList<ElementwisePlan> ladder = gpu::CuteLadder<&cute_kernels::launch_cute_copy, &run>::list;
#else
const VariantList<ElementwisePlan> ladder = gpu::kElementwiseLadder;
#endif

oprt_status_t run(const ElementwisePlan &p, const ExecArgs &args) {
    const gpu_kernels::CopyOp op;
    // Raw bits: both 16-bit types move as the same words.
    if (p.dtype == OPRT_DTYPE_F32) return gpu::launch_elementwise<float, 1>(kOp, p, args, op);
    return gpu::launch_elementwise<uint16_t, 1>(kOp, p, args, op);
}

}  // namespace oprt::copy::OPRT_GPU_BACKEND_NS
