// Backend selection: the per-thread current backend, what AUTO resolves to,
// and the device queries a GPU backend provides when it is built.
#pragma once

#include "operator_runtime/api.h"

namespace oprt {

struct ExecContract;
struct ExecArgs;

// Makes the device that owns a GPU call's buffers current for the call and
// gives the caller's device back when it goes out of scope (several GPUs in one
// process: a kernel runs where its data lives). Nothing for the CPU backend.
class DeviceScope {
public:
    DeviceScope() = default;
    ~DeviceScope();
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

    // execute: every buffer on one device and the stream of that device, else
    // OPRT_ERR_INVALID_ARG naming the buffer (gpu::enter_call_device).
    oprt_status_t enter_call(oprt_backend_t backend, const ExecContract &contract, const ExecArgs &args);
    // create: the device of the output's memory, so the plan reads its properties.
    void enter_create(oprt_backend_t backend, const void *data_hint);
    // set_variant: the device a descriptor was planned for (-1: nothing to do).
    void enter_device(oprt_backend_t backend, int device);
    // The current GPU while in scope (-1 for the CPU backend or when unknown).
    int current() const { return current_; }

private:
    int previous_ = -1;  // gpu::kNoDeviceChange
    int current_ = -1;
};

// The backend a descriptor created now on this thread runs on. AUTO resolves
// to the GPU backend of this build when `data_hint` is device memory (or is
// NULL and a device is present), else to CPU. Fails for a backend that is not
// built or has no device.
oprt_status_t resolve_backend(const char *op, const void *data_hint, oprt_backend_t *backend);

bool backend_is_valid(int backend);

namespace nvidia {
// Defined by the NVIDIA backend (runtime/nvidia/device.cu) when it is built.
bool device_available();
bool is_device_pointer(const void *ptr);
}  // namespace nvidia

namespace metax {
bool device_available();
bool is_device_pointer(const void *ptr);
}  // namespace metax

}  // namespace oprt
