// Backend selection: the per-thread current backend, what AUTO resolves to,
// and the device queries a GPU backend provides when it is built.
#pragma once

#include "operator_runtime/api.h"

namespace oprt {

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
