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

// How to run one problem: a compiled kernel variant (tile shape), how many ways K
// is split (f32 partial sums in a workspace, then a reduce kernel), and launch options.
struct WgmmaChoice {
    int variant = 0;
    int splits = 1;             // 1 .. 16; fewer run where K has fewer k-tiles
    bool direct_store = false;  // C from registers to global memory even where TMA could store it
    bool overlapped = true;     // programmatic dependent launch (overlaps the previous kernel's tail)
    bool cluster_k = false;     // K in two pieces summed in a cluster of two blocks (splits ignored)
};

// The plan: the variant and split for this shape on a device with `sms` SMs, from the table
// in wgmma.cu.
WgmmaChoice wgmma_choose(const GemmArgs &g, int sms);

// Device workspace the choice needs (0 when K is not split); any alignment.
size_t wgmma_workspace_bytes(const GemmArgs &g, WgmmaChoice choice);

// Enqueues C = A @ B on `stream`; call only where wgmma_supports(g, dtype). `workspace`: at
// least wgmma_workspace_bytes(g, choice) bytes (may be null when that is 0).
cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, WgmmaChoice choice, void *workspace,
                         cudaStream_t stream);

// The compiled variants, by number (the benchmark's --sweep runs each to set the table).
int wgmma_variant_count();
const char *wgmma_variant_name(int variant);  // e.g. "128x256": BM x BN

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
