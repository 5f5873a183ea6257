// matmul on Hopper tensor cores: TMA loads, a warp-specialized mbarrier pipeline and
// wgmma (wgmma.cu). Compiled for sm_90a only; elsewhere wgmma_supports says no.
#pragma once

#include <cuda_runtime.h>

#include "operator_runtime/api.h"
#include "ops/matmul/nvidia/gemm_args.h"
#include "runtime/gpu/gpu_runtime.h"  // OPRT_GPU_BACKEND_NS

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {

// f16/bf16 on a compute capability 9.0 device with the sm_90a kernels built in; K >= 1;
// A contiguous along K, B contiguous along N or along K; A and B 16-byte aligned with their
// other stride a multiple of 8 values (TMA's 16-byte rule) and at least the contiguous
// extent; M, N, K below 2^31. C: any strides.
bool wgmma_supports(const GemmArgs &g, oprt_dtype_t dtype);

// Enqueues C = A @ B on `stream`; call only where wgmma_supports(g, dtype).
cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, cudaStream_t stream);

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
