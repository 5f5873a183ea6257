// Kernels that use more than the default 48 KB of dynamic shared memory must opt in, once
// per device (the attribute belongs to the device's copy of the kernel). This does it the
// first time a kernel is launched on a device and afterwards only reads a flag, so launch
// code may call it on every execute. Header-only: the tensor-core kernels are also compiled
// into the benchmark, outside the library (whose gpu::allow_dynamic_smem keeps its state in
// the runtime).
#pragma once

#include <cuda_runtime.h>

#include <atomic>

namespace oprt::matmul {

template <auto Kernel>
cudaError_t opt_in_smem_once(int bytes) {
    constexpr int kMaxDevices = 64;
    static std::atomic<bool> done[kMaxDevices] = {};  // per kernel (template argument) and device
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return e;
    const bool tracked = device >= 0 && device < kMaxDevices;
    if (tracked && done[device].load(std::memory_order_acquire)) return cudaSuccess;
    e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e == cudaSuccess && tracked) done[device].store(true, std::memory_order_release);
    return e;
}

}  // namespace oprt::matmul
