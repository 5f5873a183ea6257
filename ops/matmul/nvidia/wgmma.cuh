// matmul on Hopper tensor cores: TMA loads, a warp-specialized mbarrier pipeline and
// wgmma (wgmma.cu). Compiled for sm_90a only; elsewhere wgmma_supports says no.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "operator_runtime/api.h"
#include "ops/matmul/nvidia/gemm_args.h"
#include "runtime/gpu/gpu_runtime.h"  // OPRT_GPU_BACKEND_NS

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {

// f16/bf16 on a compute capability 9.0 device with the sm_90a kernels built in; K >= 1;
// A contiguous along K, B contiguous along N or along K; A and B 16-byte aligned with their
// other stride a multiple of 8 values (TMA's 16-byte rule) and at least the contiguous
// extent; M, N, K below 2^31. C: any strides.
bool wgmma_supports(const GemmArgs &g, oprt_dtype_t dtype);

// Device workspace wgmma_launch needs for this problem on the current device: f32 partial
// sums where the plan splits K (small M, or few tiles), else 0.
size_t wgmma_workspace_bytes(const GemmArgs &g, oprt_dtype_t dtype);

// Enqueues C = A @ B on `stream`; call only where wgmma_supports(g, dtype). `workspace`:
// at least wgmma_workspace_bytes(g, dtype) bytes, 8-byte aligned (may be null when that is 0).
cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, void *workspace, cudaStream_t stream);

// The plan's choice: one of the compiled kernel variants (tile shape, cluster) and how
// many ways K is split. wgmma_launch above runs wgmma_choose's; the benchmark
// (tests/cpp/nvidia/bench/matmul_kernels.cu --sweep) runs every variant to set the plan's table.
struct WgmmaChoice {
    int variant = 0;
    int splits = 1;             // 1 .. 16; fewer run where K has fewer k-tiles
    bool direct_store = false;  // C from registers to global memory even where TMA could store it
};
int wgmma_variant_count();
const char *wgmma_variant_name(int variant);  // e.g. "128x256c2": BM x BN, cluster of 2
WgmmaChoice wgmma_choose(const GemmArgs &g, int sms);
size_t wgmma_workspace_bytes(const GemmArgs &g, WgmmaChoice choice);
cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, WgmmaChoice choice, void *workspace,
                         cudaStream_t stream);

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
