// Status and backend names, the thread-local error message, and the
// per-thread current backend.
#include <cstdarg>
#include <cstdio>
#include <string>

#include "operator_runtime/api.h"
#include "runtime/internal/backend.h"
#include "runtime/internal/dtype.h"
#include "runtime/internal/dispatch.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/error.h"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/internal/tensor.h"

namespace oprt {
namespace {

thread_local std::string t_last_error;
thread_local oprt_backend_t t_backend = OPRT_BACKEND_AUTO;
}  // namespace

oprt_status_t fail(oprt_status_t status, const char *format, ...) {
    char buffer[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    t_last_error = buffer;
    return status;
}

void clear_error() { t_last_error.clear(); }

bool backend_is_valid(int backend) {
    return backend == OPRT_BACKEND_AUTO || backend == OPRT_BACKEND_NVIDIA ||
           backend == OPRT_BACKEND_METAX || backend == OPRT_BACKEND_CPU;
}

static bool backend_available(oprt_backend_t backend) {
    switch (enum_value(backend)) {
    case OPRT_BACKEND_AUTO:
    case OPRT_BACKEND_CPU: return true;
#if defined(OPRT_WITH_NVIDIA)
    case OPRT_BACKEND_NVIDIA: return nvidia::device_available();
#endif
#if defined(OPRT_WITH_METAX)
    case OPRT_BACKEND_METAX: return metax::device_available();
#endif
    default: return false;
    }
}

oprt_status_t resolve_backend(const char *op, const void *data_hint, oprt_backend_t *backend) {
    const oprt_backend_t requested = t_backend;
    if (requested == OPRT_BACKEND_AUTO) {
        *backend = OPRT_BACKEND_CPU;
#if defined(OPRT_WITH_NVIDIA)
        if (nvidia::device_available() &&
            (data_hint == nullptr || nvidia::is_device_pointer(data_hint)))
            *backend = OPRT_BACKEND_NVIDIA;
#endif
#if defined(OPRT_WITH_METAX)
        if (metax::device_available() &&
            (data_hint == nullptr || metax::is_device_pointer(data_hint)))
            *backend = OPRT_BACKEND_METAX;
#endif
        (void)data_hint;
        return OPRT_SUCCESS;
    }
    if (!backend_available(requested))
        return fail(OPRT_ERR_BACKEND_UNAVAILABLE,
                    "%s: backend '%s' is not available (not built into this library, or no device "
                    "present)",
                    op, oprt_backend_string(requested));
    *backend = requested;
    return OPRT_SUCCESS;
}

#if defined(OPRT_WITH_NVIDIA) || defined(OPRT_WITH_METAX)
static bool is_gpu_backend(oprt_backend_t backend) {
    return backend == OPRT_BACKEND_NVIDIA || backend == OPRT_BACKEND_METAX;
}

oprt_status_t DeviceScope::enter_call(oprt_backend_t backend, const ExecContract &contract,
                                      const ExecArgs &args) {
    if (!is_gpu_backend(backend)) return OPRT_SUCCESS;
    // The buffers the kernels will touch: empty inputs (a reduction over a
    // zero-length axis) and an unneeded workspace are never read.
    gpu::CallBuffer buffers[4];
    int count = 0;
    buffers[count++] = {contract.names[0], args.out};
    const void *inputs[2] = {args.in0, args.in1};
    for (int i = 0; i < contract.num_inputs; ++i)
        if (contract.in[i].numel > 0) buffers[count++] = {contract.names[1 + i], inputs[i]};
    if (contract.workspace_bytes > 0) buffers[count++] = {"workspace", args.workspace};
    return gpu::enter_call_device(contract.op, buffers, count, args.stream, &previous_);
}

void DeviceScope::enter_create(oprt_backend_t backend, const void *data_hint) {
    if (!is_gpu_backend(backend)) return;
    previous_ = gpu::enter_pointer_device(data_hint);
    current_ = gpu::current_device_id();
}

void DeviceScope::enter_device(oprt_backend_t backend, int device) {
    if (!is_gpu_backend(backend) || device < 0) return;
    previous_ = gpu::enter_device(device);
    current_ = device;
}

DeviceScope::~DeviceScope() { gpu::restore_device(previous_); }
#else
oprt_status_t DeviceScope::enter_call(oprt_backend_t, const ExecContract &, const ExecArgs &) {
    return OPRT_SUCCESS;
}
void DeviceScope::enter_create(oprt_backend_t, const void *) {}
void DeviceScope::enter_device(oprt_backend_t, int) {}
DeviceScope::~DeviceScope() {}
#endif

}  // namespace oprt

extern "C" {

const char *oprt_status_string(oprt_status_t status) {
    switch (oprt::enum_value(status)) {
    case OPRT_SUCCESS: return "OPRT_SUCCESS";
    case OPRT_ERR_INVALID_ARG: return "OPRT_ERR_INVALID_ARG";
    case OPRT_ERR_UNSUPPORTED_DTYPE: return "OPRT_ERR_UNSUPPORTED_DTYPE";
    case OPRT_ERR_RUNTIME: return "OPRT_ERR_RUNTIME";
    case OPRT_ERR_INSUFFICIENT_WORKSPACE: return "OPRT_ERR_INSUFFICIENT_WORKSPACE";
    case OPRT_ERR_NOT_SUPPORTED: return "OPRT_ERR_NOT_SUPPORTED";
    case OPRT_ERR_BACKEND_UNAVAILABLE: return "OPRT_ERR_BACKEND_UNAVAILABLE";
    }
    return "OPRT_UNKNOWN_STATUS";
}

const char *oprt_backend_string(oprt_backend_t backend) {
    switch (oprt::enum_value(backend)) {
    case OPRT_BACKEND_AUTO: return "auto";
    case OPRT_BACKEND_NVIDIA: return "nvidia";
    case OPRT_BACKEND_METAX: return "metax";
    case OPRT_BACKEND_CPU: return "cpu";
    }
    return "unknown";
}

const char *oprt_dtype_string(oprt_dtype_t dtype) {
    switch (oprt::enum_value(dtype)) {
    case OPRT_DTYPE_F16: return "f16";
    case OPRT_DTYPE_F32: return "f32";
    case OPRT_DTYPE_BF16: return "bf16";
    }
    return "unknown";
}

oprt_status_t oprt_set_backend(oprt_backend_t backend) {
    if (!oprt::backend_is_valid(oprt::enum_value(backend)))
        return oprt::fail(OPRT_ERR_INVALID_ARG, "oprt_set_backend: backend = %d is not a known backend",
                          oprt::enum_value(backend));
    oprt::t_backend = backend;
    return OPRT_SUCCESS;
}

oprt_status_t oprt_get_backend(oprt_backend_t *backend) {
    if (backend == nullptr)
        return oprt::fail(OPRT_ERR_INVALID_ARG, "oprt_get_backend: backend (output pointer) is NULL");
    *backend = oprt::t_backend;
    return OPRT_SUCCESS;
}

oprt_status_t oprt_backend_is_available(oprt_backend_t backend, int *available) {
    if (available == nullptr)
        return oprt::fail(OPRT_ERR_INVALID_ARG,
                          "oprt_backend_is_available: available (output pointer) is NULL");
    if (!oprt::backend_is_valid(oprt::enum_value(backend)))
        return oprt::fail(OPRT_ERR_INVALID_ARG,
                          "oprt_backend_is_available: backend = %d is not a known backend",
                          oprt::enum_value(backend));
    *available = oprt::backend_available(backend) ? 1 : 0;
    return OPRT_SUCCESS;
}

oprt_status_t oprt_set_num_threads(int n) {
    if (n < 0 || n > OPRT_MAX_THREADS)
        return oprt::fail(OPRT_ERR_INVALID_ARG, "oprt_set_num_threads: n = %d is outside 0..%d (0: the default)",
                          n, OPRT_MAX_THREADS);
    oprt::cpu::set_max_threads(n);
    return OPRT_SUCCESS;
}

oprt_status_t oprt_get_num_threads(int *n) {
    if (n == nullptr)
        return oprt::fail(OPRT_ERR_INVALID_ARG, "oprt_get_num_threads: n (output pointer) is NULL");
    *n = oprt::cpu::max_threads();
    return OPRT_SUCCESS;
}

const char *oprt_last_error_message(void) { return oprt::t_last_error.c_str(); }

}  // extern "C"
