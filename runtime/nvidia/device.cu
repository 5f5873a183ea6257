// The NVIDIA backend's runtime glue: is a device present, is a pointer device
// memory, per-device properties, and CUDA errors turned into oprt statuses.
// Nothing here synchronizes or allocates device memory, so every execute()
// stays stream-ordered and graph-capturable.
#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>
#include <utility>
#include <vector>

#include "runtime/internal/backend.h"
#include "runtime/internal/error.h"
#include "runtime/gpu/gpu_runtime.h"

namespace oprt {
namespace {

// Device properties, one slot per device id, filled on first use.
constexpr int kCachedDevices = 64;

struct DeviceSlot {
    std::once_flag once;
    cudaError_t error = cudaSuccess;
    gpu::DeviceInfo info;
};
DeviceSlot g_devices[kCachedDevices];

cudaError_t query_device(int device, gpu::DeviceInfo *info) {
    info->device = device;
    int smem_optin = 0;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                    device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->warp_size, cudaDevAttrWarpSize, device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->cc_major, cudaDevAttrComputeCapabilityMajor, device)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->cc_minor, cudaDevAttrComputeCapabilityMinor, device)) !=
            cudaSuccess)
        return e;
    info->smem_per_block_optin = size_t(smem_optin);
    return cudaSuccess;
}

// Runs pure queries (pointer attributes, device attributes, function
// attributes) with this thread in relaxed capture mode, restoring the caller's
// mode after: they neither enqueue work nor synchronize, but a strict
// (global / thread-local) capture may still count them as potentially unsafe
// and invalidate the caller's graph.
class RelaxedCaptureScope {
public:
    RelaxedCaptureScope() { ok_ = cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess; }
    ~RelaxedCaptureScope() {
        if (ok_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
    }
    RelaxedCaptureScope(const RelaxedCaptureScope &) = delete;
    RelaxedCaptureScope &operator=(const RelaxedCaptureScope &) = delete;

private:
    cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
    bool ok_ = false;
};

// The dynamic shared memory each kernel is already allowed on each device.
std::mutex g_smem_mutex;
std::vector<std::pair<const void *, size_t>> g_smem_allowed[kCachedDevices];
// Blocks per SM already queried on each device (same mutex).
struct ResidentEntry {
    const void *kernel;
    int threads;
    size_t smem;
    int blocks;
};
std::vector<ResidentEntry> g_resident[kCachedDevices];
// The kernels already allowed clusters above 8 blocks on each device (same mutex).
std::vector<const void *> g_large_clusters[kCachedDevices];

}  // namespace

namespace gpu {

oprt_status_t runtime_error(const char *op, const char *what, int code) {
    const cudaError_t e = static_cast<cudaError_t>(code);
    return fail(OPRT_ERR_RUNTIME, "%s: %s failed: %s (%s)", op, what, cudaGetErrorName(e),
                cudaGetErrorString(e));
}

oprt_status_t current_device(const char *op, DeviceInfo *info) {
    // cudaGetDevice touches no stream (allowed in any capture mode); the property queries
    // run relaxed, once per device (launch code asks on every execute).
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaGetDevice", e);
    }
    if (device < 0 || device >= kCachedDevices) {  // beyond the cache: ask every time
        RelaxedCaptureScope relaxed;
        if ((e = query_device(device, info)) != cudaSuccess) {
            (void)cudaGetLastError();
            return runtime_error(op, "querying device properties", e);
        }
        return OPRT_SUCCESS;
    }
    DeviceSlot &slot = g_devices[device];
    std::call_once(slot.once, [&] {
        RelaxedCaptureScope relaxed;
        slot.error = query_device(device, &slot.info);
        if (slot.error != cudaSuccess) (void)cudaGetLastError();
    });
    if (slot.error != cudaSuccess) return runtime_error(op, "querying device properties", slot.error);
    *info = slot.info;
    return OPRT_SUCCESS;
}

namespace {
// Where one buffer lives: *device = its device id, or kManagedMemory.
constexpr int kManagedMemory = -1;

// What a pointer is, from the driver's cuPointerGetAttributes: one call for the three
// attributes, cheaper than cudaPointerGetAttributes (on the H200 host, 2026-12-02, with two
// attributes: 0.066 against 0.109 us), and execute() asks for every buffer of every call.
// Found through the runtime (no -lcuda); where it is not found, the runtime's query answers.
struct PointerKind {
    enum Type { kUnknown, kHost, kPinnedHost, kDevice, kManaged } type = kUnknown;
    int device = -1;
};

using PointerAttributesFn = CUresult (*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);

PointerAttributesFn pointer_attributes_fn() {
    static const PointerAttributesFn fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &p, 7000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess) {
            (void)cudaGetLastError();
            p = nullptr;
        }
        return reinterpret_cast<PointerAttributesFn>(p);
    }();
    return fn;
}

// false: the query itself failed (*error says how).
bool pointer_kind(const void *ptr, PointerKind *kind, cudaError_t *error) {
    if (PointerAttributesFn fn = pointer_attributes_fn()) {
        // Memory the driver does not know (plain host memory) reads as type 0, not an error.
        unsigned type = 0;
        int managed = 0, ordinal = -1;
        CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void *data[3] = {&type, &managed, &ordinal};
        const CUresult r = fn(3, attrs, data, CUdeviceptr(reinterpret_cast<uintptr_t>(ptr)));
        if (r == CUDA_SUCCESS) {
            kind->type = managed                       ? PointerKind::kManaged
                         : type == CU_MEMORYTYPE_DEVICE ? PointerKind::kDevice
                         : type == CU_MEMORYTYPE_HOST   ? PointerKind::kPinnedHost
                                                        : PointerKind::kHost;
            kind->device = ordinal;
            return true;
        }  // else (no context yet, ...): ask the runtime, which reports its own error
    }
    RelaxedCaptureScope relaxed;  // a strict capture may count the runtime's query as unsafe
    cudaPointerAttributes attr{};
    const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky; keep it from surfacing at the next launch check
        *error = e;
        return false;
    }
    kind->type = attr.type == cudaMemoryTypeManaged  ? PointerKind::kManaged
                 : attr.type == cudaMemoryTypeDevice ? PointerKind::kDevice
                 : attr.type == cudaMemoryTypeHost   ? PointerKind::kPinnedHost
                                                     : PointerKind::kHost;
    kind->device = attr.device;
    return true;
}

oprt_status_t buffer_device(const char *op, const char *arg, const void *ptr, int *device) {
    PointerKind kind;
    cudaError_t e = cudaSuccess;
    if (!pointer_kind(ptr, &kind, &e))
        return fail(OPRT_ERR_INVALID_ARG,
                    "%s: %s = %p is not memory the CUDA runtime can identify (%s); the nvidia "
                    "backend needs device or managed memory",
                    op, arg, ptr, cudaGetErrorName(e));
    if (kind.type == PointerKind::kManaged) {
        *device = kManagedMemory;
        return OPRT_SUCCESS;
    }
    if (kind.type == PointerKind::kDevice) {
        *device = kind.device;
        return OPRT_SUCCESS;
    }
    return fail(OPRT_ERR_INVALID_ARG,
                "%s: %s = %p is %s memory; the nvidia backend needs device memory (cudaMalloc) or "
                "managed memory (cudaMallocManaged)",
                op, arg, ptr, kind.type == PointerKind::kPinnedHost ? "pinned host" : "host");
}
}  // namespace

oprt_status_t enter_call_device(const char *op, const CallBuffer *buffers, int count, const void *stream,
                                int *previous) {
    *previous = kNoDeviceChange;
    // The driver's pointer query and cudaGetDevice are allowed in every capture mode
    // (the graph tests capture in global mode); the rarer stream and device calls
    // below run relaxed.
    int owner = kManagedMemory;
    const char *owner_arg = nullptr;
    for (int i = 0; i < count; ++i) {
        int device = kManagedMemory;
        const oprt_status_t s = buffer_device(op, buffers[i].name, buffers[i].ptr, &device);
        if (s != OPRT_SUCCESS) return s;
        if (device == kManagedMemory) continue;  // reachable from every device
        if (owner == kManagedMemory) {
            owner = device;
            owner_arg = buffers[i].name;
        } else if (device != owner) {
            return fail(OPRT_ERR_INVALID_ARG,
                        "%s: %s is memory of device %d but %s is memory of device %d; all buffers of "
                        "one call must be on one device",
                        op, owner_arg, owner, buffers[i].name, device);
        }
    }
    int current = 0;
    cudaError_t e = cudaGetDevice(&current);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaGetDevice", e);
    }
    if (owner == kManagedMemory) {  // only managed memory: the caller's device runs it
        owner = current;
        owner_arg = nullptr;
    }
    // A stream belongs to one device; a launch into another device's stream
    // fails. The implicit streams (NULL, legacy, per-thread) are every device's.
    // A capturing stream is not asked (cudaStreamGetDevice would invalidate
    // the capture); its launches are checked when the graph is instantiated.
    const cudaStream_t s = static_cast<cudaStream_t>(const_cast<void *>(stream));
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (s != nullptr && s != cudaStreamLegacy && s != cudaStreamPerThread &&
        cudaStreamIsCapturing(s, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
        RelaxedCaptureScope relaxed;
        int stream_device = owner;
        if (cudaStreamGetDevice(s, &stream_device) != cudaSuccess) {
            (void)cudaGetLastError();
            return fail(OPRT_ERR_INVALID_ARG, "%s: stream %p is not a valid CUDA stream", op, stream);
        }
        if (stream_device != owner) {
            if (owner_arg == nullptr)  // managed memory only: the stream picks the device
                owner = stream_device;
            else
                return fail(OPRT_ERR_INVALID_ARG,
                            "%s: the stream belongs to device %d but %s is memory of device %d; "
                            "pass a stream of device %d",
                            op, stream_device, owner_arg, owner, owner);
        }
    }
    if (owner != current) {
        RelaxedCaptureScope relaxed;
        if ((e = cudaSetDevice(owner)) != cudaSuccess) {
            (void)cudaGetLastError();
            return runtime_error(op, "cudaSetDevice", e);
        }
        *previous = current;
    }
    return OPRT_SUCCESS;
}

int enter_pointer_device(const void *ptr) {
    RelaxedCaptureScope relaxed;
    PointerKind kind;
    cudaError_t e = cudaSuccess;
    if (ptr == nullptr || !pointer_kind(ptr, &kind, &e) || kind.type != PointerKind::kDevice) return kNoDeviceChange;
    return enter_device(kind.device);
}

int enter_device(int device) {
    RelaxedCaptureScope relaxed;
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess || current == device || cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        return kNoDeviceChange;
    }
    return current;
}

int current_device_id() {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return current;
}

void restore_device(int previous) {
    if (previous == kNoDeviceChange) return;
    RelaxedCaptureScope relaxed;
    if (cudaSetDevice(previous) != cudaSuccess) (void)cudaGetLastError();
}

oprt_status_t check_launch(const char *op, const char *kernel_name) {
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return OPRT_SUCCESS;
    return fail(OPRT_ERR_RUNTIME, "%s: launching kernel '%s' failed: %s (%s)", op, kernel_name,
                cudaGetErrorName(e), cudaGetErrorString(e));
}

oprt_status_t allow_dynamic_smem(const char *op, const void *kernel, size_t bytes) {
    // Without opting in, dynamic plus static shared memory must stay within
    // 48 KB; the static part is the kernel's, so every nonzero size opts in
    // (once per kernel and size high-water mark).
    if (bytes == 0) return OPRT_SUCCESS;
    RelaxedCaptureScope relaxed;
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaGetDevice", e);
    }
    std::lock_guard<std::mutex> lock(g_smem_mutex);
    std::vector<std::pair<const void *, size_t>> *allowed =
        device >= 0 && device < kCachedDevices ? &g_smem_allowed[device] : nullptr;
    if (allowed != nullptr)
        for (const auto &entry : *allowed)
            if (entry.first == kernel && entry.second >= bytes) return OPRT_SUCCESS;
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
    }
    if (allowed != nullptr) {
        for (auto &entry : *allowed)
            if (entry.first == kernel) {
                entry.second = bytes;
                return OPRT_SUCCESS;
            }
        allowed->emplace_back(kernel, bytes);
    }
    return OPRT_SUCCESS;
}

oprt_status_t resident_blocks_per_sm(const char *op, const void *kernel, int threads, size_t smem, int *blocks) {
    *blocks = 0;
    oprt_status_t s = allow_dynamic_smem(op, kernel, smem);
    if (s != OPRT_SUCCESS) return s;
    RelaxedCaptureScope relaxed;
    const int device = current_device_id();  // -1: not cached, asked every time
    std::vector<ResidentEntry> *cache = device >= 0 && device < kCachedDevices ? &g_resident[device] : nullptr;
    {
        std::lock_guard<std::mutex> lock(g_smem_mutex);
        if (cache != nullptr)
            for (const ResidentEntry &r : *cache)
                if (r.kernel == kernel && r.threads == threads && r.smem == smem) {
                    *blocks = r.blocks;
                    return OPRT_SUCCESS;
                }
    }
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, smem);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", e);
    }
    std::lock_guard<std::mutex> lock(g_smem_mutex);
    if (cache != nullptr) cache->push_back(ResidentEntry{kernel, threads, smem, *blocks});
    return OPRT_SUCCESS;
}

oprt_status_t allow_large_clusters(const char *op, const void *kernel) {
    RelaxedCaptureScope relaxed;
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaGetDevice", e);
    }
    std::lock_guard<std::mutex> lock(g_smem_mutex);
    std::vector<const void *> *allowed =
        device >= 0 && device < kCachedDevices ? &g_large_clusters[device] : nullptr;
    if (allowed != nullptr)
        for (const void *k : *allowed)
            if (k == kernel) return OPRT_SUCCESS;
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)", e);
    }
    if (allowed != nullptr) allowed->push_back(kernel);
    return OPRT_SUCCESS;
}

oprt_status_t kernel_ptx_version(const char *op, const void *kernel, int *version) {
    RelaxedCaptureScope relaxed;
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return runtime_error(op, "cudaFuncGetAttributes", e);
    }
    *version = attr.ptxVersion;
    return OPRT_SUCCESS;
}

bool overlapped_launch_allowed() {
    // Every launch asks: where every device is sm_90 or newer (the usual machine) the
    // answer is known once, without asking which device is current.
    static const bool every_device = [] {
        RelaxedCaptureScope relaxed;  // the first launch may be under a strict capture
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
            (void)cudaGetLastError();
            return false;
        }
        for (int d = 0; d < count; ++d) {
            int major = 0;
            if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess) {
                (void)cudaGetLastError();
                return false;
            }
            if (major < 9) return false;
        }
        return true;
    }();
    if (every_device) return true;
    DeviceInfo info;
    return current_device("launch", &info) == OPRT_SUCCESS && info.cc_major >= 9;
}

oprt_status_t max_active_clusters(const char *op, const void *kernel, int cluster, int threads,
                                  size_t smem, int *clusters) {
    *clusters = 0;
    oprt_status_t s = allow_dynamic_smem(op, kernel, smem);
    if (s != OPRT_SUCCESS) return s;
    // Sizes above 8 are non-portable: the kernel must opt in; where it cannot,
    // no clusters of this size run here.
    if (cluster > 8 && allow_large_clusters(op, kernel) != OPRT_SUCCESS) return OPRT_SUCCESS;
    RelaxedCaptureScope relaxed;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(cluster), 1, 1);
    config.blockDim = dim3(unsigned(threads), 1, 1);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &config) != cudaSuccess) {
        (void)cudaGetLastError();  // e.g. a size this device cannot schedule: none
        n = 0;
    }
    *clusters = n;
    return OPRT_SUCCESS;
}

}  // namespace gpu

namespace nvidia {

bool device_available() {
    static const bool available = [] {
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        return count > 0;
    }();
    return available;
}

bool is_device_pointer(const void *ptr) {
    if (ptr == nullptr || !device_available()) return false;
    RelaxedCaptureScope relaxed;
    gpu::PointerKind kind;
    cudaError_t e = cudaSuccess;
    return gpu::pointer_kind(ptr, &kind, &e) &&
           (kind.type == gpu::PointerKind::kDevice || kind.type == gpu::PointerKind::kManaged);
}

}  // namespace nvidia
}  // namespace oprt
