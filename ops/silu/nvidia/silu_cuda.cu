// silu on NVIDIA GPUs: launch code. The kernels are the elementwise
// framework's (runtime/gpu/gpu_elementwise.cuh) with the functor of kernel.cuh.
#include "runtime/gpu/gpu_runtime.h"
#include "ops/silu/nvidia/kernel.cuh"
#include "ops/silu/silu_backends.h"

namespace oprt::silu::OPRT_GPU_BACKEND_NS {
namespace {
constexpr const char *kOp = "oprt_execute_silu";
}  // namespace

oprt_status_t plan(ElementwisePlan &p) {
    gpu::plan_elementwise(p);
    return OPRT_SUCCESS;
}

// The shared elementwise ladder: scalar_grid_stride -> vec16 (runtime/gpu/gpu_elementwise.cuh).
const VariantList<ElementwisePlan> ladder = gpu::kElementwiseLadder;

oprt_status_t run(const ElementwisePlan &p, const ExecArgs &args) {
    // The frontend has checked the buffers and made their device current.
    const gpu_kernels::SiluOp op{};
    switch (p.dtype) {
    case OPRT_DTYPE_F32: return gpu::launch_elementwise<float, 1>(kOp, p, args, op);
    case OPRT_DTYPE_F16: return gpu::launch_elementwise<dev::half_t, 1>(kOp, p, args, op);
    case OPRT_DTYPE_BF16: return gpu::launch_elementwise<dev::bf16_t, 1>(kOp, p, args, op);
    }
    return OPRT_ERR_UNSUPPORTED_DTYPE;  // unreachable: the frontend validated the dtype
}

}  // namespace oprt::silu::OPRT_GPU_BACKEND_NS
