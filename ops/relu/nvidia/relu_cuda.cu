// relu on NVIDIA GPUs: launch code. The kernels are the elementwise
// framework's (runtime/gpu/gpu_elementwise.cuh) with the functor of kernel.cuh.
#include "runtime/gpu/gpu_runtime.h"
#if defined(OPRT_WITH_CUTE)
#include "runtime/gpu/cute_launch.h"
#endif
#include "ops/relu/nvidia/kernel.cuh"
#include "ops/relu/relu_backends.h"

namespace oprt::relu::OPRT_GPU_BACKEND_NS {
namespace {
constexpr const char *kOp = "oprt_execute_relu";
}  // namespace

oprt_status_t plan(ElementwisePlan &p) {
    gpu::plan_elementwise(p);
    return OPRT_SUCCESS;
}

#if defined(OPRT_WITH_CUTE)  // scalar_grid_stride -> cute -> vec16
const VariantList<ElementwisePlan> ladder = gpu::CuteLadder<&cute_kernels::launch_cute_relu, &run>::list;
#else
const VariantList<ElementwisePlan> ladder = gpu::kElementwiseLadder;
#endif

oprt_status_t run(const ElementwisePlan &p, const ExecArgs &args) {
    const gpu_kernels::ReluOp op{p.scalar};
    switch (p.dtype) {
    case OPRT_DTYPE_F32: return gpu::launch_elementwise<float, 1>(kOp, p, args, op);
    case OPRT_DTYPE_F16: return gpu::launch_elementwise<dev::half_t, 1>(kOp, p, args, op);
    case OPRT_DTYPE_BF16: return gpu::launch_elementwise<dev::bf16_t, 1>(kOp, p, args, op);
    }
    return OPRT_ERR_UNSUPPORTED_DTYPE;  // unreachable: the frontend validated the dtype
}

}  // namespace oprt::relu::OPRT_GPU_BACKEND_NS
