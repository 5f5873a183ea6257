// Host helpers every GPU backend's launch code uses: device properties,
// pointer checks, launch-error conversion, large shared memory. Declared once
// here with no toolchain types; each GPU build variant defines them once
// (runtime/nvidia/device.cu for CUDA), so launch code shared between NVIDIA
// and MetaX calls the same names.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operator_runtime/api.h"

// The namespace a GPU backend's launch code defines its entry points in
// (oprt::<op>::OPRT_GPU_BACKEND_NS::{plan,run}). The MetaX units
// (ops/*/metax/*.maca) set it to metax and #include the NVIDIA launch code.
#ifndef OPRT_GPU_BACKEND_NS
#define OPRT_GPU_BACKEND_NS nvidia
#endif

namespace oprt::gpu {

// What plans and launches need to know about one device.
struct DeviceInfo {
    int device = 0;
    int sm_count = 1;
    int max_threads_per_sm = 2048;
    int warp_size = 32;
    size_t smem_per_block_optin = 48 * 1024;  // the most dynamic + static shared memory a block may opt in to
    int cc_major = 0;
    int cc_minor = 0;
};

// The properties of the calling thread's current device, queried once per
// device id and cached (devices differ: never assume device 0's numbers).
oprt_status_t current_device(const char *op, DeviceInfo *info);

// One data buffer of an execute call, named for messages.
struct CallBuffer {
    const char *name;
    const void *ptr;
};

// What enter_call_device and enter_pointer_device return when the caller's
// device was already the right one.
constexpr int kNoDeviceChange = -1;

// Before an execute's launches: every buffer must be device memory of one
// device (or managed memory), and `stream` (NULL and the implicit streams
// excepted) must belong to that device; anything else is OPRT_ERR_INVALID_ARG
// naming the buffer. Makes that device current for the call, so a kernel runs
// where its data lives whatever device the caller had current; *previous is
// the caller's device for restore_device (kNoDeviceChange when unchanged).
// Pure queries: nothing synchronizes, so this is safe during graph capture.
oprt_status_t enter_call_device(const char *op, const CallBuffer *buffers, int count, const void *stream,
                                int *previous);

// At descriptor creation: makes the device that owns `ptr` current (when it
// is device memory of another device), so the plan reads that device's
// properties. Returns the caller's device for restore_device.
int enter_pointer_device(const void *ptr);

// Makes `device` current (set_variant re-plans for a descriptor's device).
// Returns the caller's device for restore_device.
int enter_device(int device);

// The calling thread's current device (-1 when it cannot be asked).
int current_device_id();

// Makes `previous` current again (nothing for kNoDeviceChange).
void restore_device(int previous);

// OPRT_ERR_RUNTIME with the toolchain's error name and text. `code` is the
// toolchain's error value (cudaError_t on NVIDIA).
oprt_status_t runtime_error(const char *op, const char *what, int code);

// After one or more kernel launches: converts a launch error into
// OPRT_ERR_RUNTIME naming the op and the kernel.
oprt_status_t check_launch(const char *op, const char *kernel_name);

// Lets `kernel` (a __global__ function's address) use `bytes` of dynamic shared
// memory on the current device. The attribute is per device, so it is set per
// device id, once per (kernel, size) high-water mark.
oprt_status_t allow_dynamic_smem(const char *op, const void *kernel, size_t bytes);

// How many blocks of `kernel` (a __global__ function's address) with
// `threads` threads and `smem` bytes of dynamic shared memory one SM of the
// current device holds at once (allowing that shared memory first). Queried
// once per device, kernel, threads and smem, then cached: launch code may ask
// on every execute.
oprt_status_t resident_blocks_per_sm(const char *op, const void *kernel, int threads, size_t smem, int *blocks);

// Lets `kernel` run in clusters of more than the portable 8 blocks on the
// current device (set once per device and kernel, like allow_dynamic_smem).
oprt_status_t allow_large_clusters(const char *op, const void *kernel);

// The virtual architecture (e.g. 90 for compute_90) that `kernel`'s code on
// the current device was compiled from. Plans use it before choosing a kernel
// that needs sm_90 features (clusters): a build for older targets runs there
// too, JIT-compiled from older PTX, without them.
oprt_status_t kernel_ptx_version(const char *op, const void *kernel, int *version);

// Whether kernels may be launched overlapped with the kernel before them
// (programmatic dependent launch, gpu::launch_overlapped): a device of compute
// capability 9.0 or newer.
bool overlapped_launch_allowed();

// How many clusters of `cluster` blocks of `threads` threads with `smem` bytes
// of dynamic shared memory can run at once on the current device (0 when none
// can, e.g. a cluster size the device does not support). Allows `kernel`
// cluster sizes above the portable 8 and the shared memory first.
oprt_status_t max_active_clusters(const char *op, const void *kernel, int cluster, int threads,
                                  size_t smem, int *clusters);

}  // namespace oprt::gpu
