// A stand-in for the CUDA runtime, for checking the NVIDIA backend's host
// code on a machine without a GPU (scripts/ci/launch_check.sh). It provides
// the runtime calls libcamp_ops makes (camp_ops_standin is camp_ops's objects
// linked against this instead of cudart), answers as the GPU that
// CAMP_STANDIN_GPU names, runs nothing, and writes to stderr every launch
// (kernel, grid, block, shared memory, launch attributes, argument bytes),
// every kernel attribute set and every memset. Occupancy comes from each
// kernel's real registers, shared memory and thread bound, which
// CAMP_STANDIN_KERNELS lists (check_launches.py reads them from the fatbins
// with cuobjdump), by the usual rules (registers by 256 a warp, 1 KB of
// shared memory reserved a block).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Gpu {
    const char *name;
    int sms, cc_major, cc_minor;
    int smem_per_block_optin;  // bytes
    int smem_per_sm;           // bytes
};
// H200 (and H100 SXM); an H100 PCIe's fewer SMs; an A100 (no bulk copies, no clusters).
constexpr Gpu kGpus[] = {
    {"h200", 132, 9, 0, 232448, 233472},
    {"h100-pcie", 114, 9, 0, 232448, 233472},
    {"a100", 108, 8, 0, 166912, 167936},
};

struct Kernel {
    int regs = 0, smem = 0, max_threads = 1024;
    std::vector<int> param_bytes;
};

struct State {
    Gpu gpu = kGpus[0];
    std::map<std::string, Kernel> kernels;    // by mangled name
    std::map<const void *, std::string> names;  // host stub -> mangled name
    std::map<const void *, int> smem_allowed;   // cudaFuncAttributeMaxDynamicSharedMemorySize
    dim3 grid, block;                           // the <<<>>> configuration being launched
    size_t smem = 0;
    void *stream = nullptr;
    std::mutex mu;
};

State &state() {
    static State *s = [] {
        auto *st = new State;
        if (const char *g = std::getenv("CAMP_STANDIN_GPU"))
            for (const Gpu &gpu : kGpus)
                if (std::strcmp(gpu.name, g) == 0) st->gpu = gpu;
        // One line a kernel: mangled name, registers, static shared memory,
        // thread bound, parameter sizes ("8,8,4", or "-" for none).
        if (const char *path = std::getenv("CAMP_STANDIN_KERNELS")) {
            if (FILE *f = std::fopen(path, "r")) {
                static char name[8192], sizes[8192];
                Kernel k;
                while (std::fscanf(f, "%8191s %d %d %d %8191s", name, &k.regs, &k.smem, &k.max_threads, sizes) == 5) {
                    k.param_bytes.clear();
                    for (char *p = sizes; *p && *p != '-';) {
                        k.param_bytes.push_back(int(std::strtol(p, &p, 10)));
                        if (*p == ',') ++p;
                    }
                    st->kernels[name] = k;
                }
                std::fclose(f);
            }
        }
        return st;
    }();
    return *s;
}

const std::string &name_of(const void *f) {
    static const std::string unknown = "?";
    const auto it = state().names.find(f);
    return it == state().names.end() ? unknown : it->second;
}

const Kernel &kernel_of(const void *f) {
    static const Kernel none;
    const auto it = state().kernels.find(name_of(f));
    return it == state().kernels.end() ? none : it->second;
}

int blocks_per_sm(const void *f, int threads, size_t dynamic_smem) {
    const Kernel &k = kernel_of(f);
    const Gpu &g = state().gpu;
    if (threads <= 0 || threads > k.max_threads) return 0;
    const int warps = (threads + 31) / 32;
    int n = 64 / warps < 32 ? 64 / warps : 32;
    const int regs_per_warp = (k.regs * 32 + 255) / 256 * 256;
    if (regs_per_warp > 0 && 65536 / regs_per_warp / warps < n) n = 65536 / regs_per_warp / warps;
    const size_t smem_per_block = size_t(k.smem) + dynamic_smem + 1024;
    if (size_t(g.smem_per_sm) / smem_per_block < size_t(n)) n = int(size_t(g.smem_per_sm) / smem_per_block);
    return n;
}

void log_launch(const char *how, const void *f, dim3 g, dim3 b, size_t smem, void *stream, void **args,
                const std::string &attrs) {
    State &st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    std::fprintf(stderr, "%s %s grid=%u,%u,%u block=%u,%u,%u smem=%zu stream=%p%s args=", how, name_of(f).c_str(),
                 g.x, g.y, g.z, b.x, b.y, b.z, smem, stream, attrs.c_str());
    const Kernel &k = kernel_of(f);
    for (size_t i = 0; i < k.param_bytes.size(); ++i) {
        const auto *p = static_cast<const unsigned char *>(args[i]);
        if (i) std::fputc('|', stderr);
        for (int j = 0; j < k.param_bytes[i]; ++j) std::fprintf(stderr, "%02x", p[j]);
    }
    std::fputc('\n', stderr);
}

// cuTensorMapEncodeTiled, for the matmul's TMA loads: the driver's rules for
// the operands (CUDA driver API reference), and a map whose first word is the
// global address, so the launch's pointer check sees where it reads.
CUresult encode_tiled(CUtensorMap *map, CUtensorMapDataType, cuuint32_t rank, void *address, const cuuint64_t *dims,
                      const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *element_strides,
                      CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
    bool ok = rank >= 1 && rank <= 5 && reinterpret_cast<uintptr_t>(address) % 16 == 0;
    for (cuuint32_t d = 0; ok && d < rank; ++d) {
        ok = dims[d] >= 1 && dims[d] <= (cuuint64_t(1) << 32) && box[d] >= 1 && box[d] <= 256 &&
             element_strides[d] >= 1 && element_strides[d] <= 8;
        if (ok && d + 1 < rank) ok = strides[d] % 16 == 0 && strides[d] < (cuuint64_t(1) << 40);
    }
    if (!ok) {
        std::fprintf(stderr, "standin: cuTensorMapEncodeTiled refuses its operands (rank %u, address %p)\n", rank,
                     address);
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::memset(map, 0, sizeof *map);
    std::memcpy(map, &address, sizeof address);
    return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

// ---- Registration and <<<>>> launches (the calls nvcc's host stubs make) ----
void **__cudaRegisterFatBinary(void *) {
    static void *handle = nullptr;
    return &handle;
}
void __cudaRegisterFatBinaryEnd(void **) {}
void __cudaUnregisterFatBinary(void **) {}
void __cudaRegisterFunction(void **, const char *host_fun, char *device_fun, const char *, int, uint3 *, uint3 *,
                            dim3 *, dim3 *, int *) {
    state().names[host_fun] = device_fun;
}
void __cudaRegisterVar(void **, char *, char *, const char *, int, size_t, int, int) {}
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t smem, struct CUstream_st *stream) {
    State &st = state();
    st.grid = grid, st.block = block, st.smem = smem, st.stream = stream;
    return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, void *stream) {
    const State &st = state();
    *grid = st.grid, *block = st.block, *smem = st.smem;
    *static_cast<void **>(stream) = st.stream;
    return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *f) {
    *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void *>(f));
    return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                               cudaStream_t stream) {
    log_launch("launch", reinterpret_cast<const void *>(kernel), grid, block, smem, stream, args, "");
    return cudaSuccess;
}

// ---- Launches with attributes ----
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *f, void **args) {
    std::string attrs;
    char buf[96];
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        const cudaLaunchAttribute &a = config->attrs[i];
        if (a.id == cudaLaunchAttributeClusterDimension)
            std::snprintf(buf, sizeof buf, " cluster=%u,%u,%u", a.val.clusterDim.x, a.val.clusterDim.y,
                          a.val.clusterDim.z);
        else if (a.id == cudaLaunchAttributeCooperative)
            std::snprintf(buf, sizeof buf, " cooperative=%d", a.val.cooperative);
        else if (a.id == cudaLaunchAttributeProgrammaticStreamSerialization)
            std::snprintf(buf, sizeof buf, " overlapped=%d", a.val.programmaticStreamSerializationAllowed);
        else
            std::snprintf(buf, sizeof buf, " attribute%d", int(a.id));
        attrs += buf;
    }
    log_launch("launch", f, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream, args, attrs);
    return cudaSuccess;
}

// ---- Devices, kernels, pointers, streams ----
cudaError_t cudaGetDeviceCount(int *count) {
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int) {
    const Gpu &g = state().gpu;
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = g.sms; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = 2048; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = g.smem_per_block_optin; break;
    case cudaDevAttrComputeCapabilityMajor: *value = g.cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = g.cc_minor; break;
    default:
        std::fprintf(stderr, "standin: cudaDeviceGetAttribute(%d) is not answered here\n", int(attr));
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *f) {
    std::memset(attr, 0, sizeof *attr);
    const Kernel &k = kernel_of(f);
    const auto it = state().smem_allowed.find(f);
    attr->numRegs = k.regs;
    attr->sharedSizeBytes = size_t(k.smem);
    attr->maxThreadsPerBlock = k.max_threads;
    attr->maxDynamicSharedSizeBytes = it == state().smem_allowed.end() ? 48 * 1024 - k.smem : it->second;
    attr->ptxVersion = attr->binaryVersion = state().gpu.cc_major * 10 + state().gpu.cc_minor;
    return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void *f, cudaFuncAttribute attr, int value) {
    State &st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) st.smem_allowed[f] = value;
    std::fprintf(stderr, "setattr %s %d %d\n", name_of(f).c_str(), int(attr), value);
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *f, int threads, size_t smem) {
    *blocks = blocks_per_sm(f, threads, smem);
    return cudaSuccess;
}
// Clusters as if the SMs were one pool (a real GPU places a cluster within one
// of its GPCs, so it may hold fewer): enough for the plans' choices to be exercised.
cudaError_t cudaOccupancyMaxActiveClusters(int *clusters, const void *f, const cudaLaunchConfig_t *config) {
    unsigned size = 1;
    for (unsigned i = 0; i < config->numAttrs; ++i)
        if (config->attrs[i].id == cudaLaunchAttributeClusterDimension) size = config->attrs[i].val.clusterDim.x;
    const int per_sm = blocks_per_sm(f, int(config->blockDim.x), config->dynamicSmemBytes);
    *clusters = state().gpu.cc_major < 9 || size > 16 ? 0 : int(unsigned(per_sm * state().gpu.sms) / size);
    return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *) {
    std::memset(attr, 0, sizeof *attr);
    attr->type = cudaMemoryTypeDevice;  // every pointer is device 0's memory
    return cudaSuccess;
}
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned, unsigned long long,
                                             cudaDriverEntryPointQueryResult *result) {
    if (std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
        *fn = reinterpret_cast<void *>(&encode_tiled);
        if (result) *result = cudaDriverEntryPointSuccess;
        return cudaSuccess;
    }
    *fn = nullptr;  // no other driver call: the library takes its runtime-only paths
    if (result) *result = cudaDriverEntryPointSymbolNotFound;
    return cudaErrorSymbolNotFound;
}
cudaError_t cudaStreamGetDevice(cudaStream_t, int *device) {
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus *status) {
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode *) { return cudaSuccess; }
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream) {
    State &st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    std::fprintf(stderr, "memset %p %d %zu %p\n", p, value, bytes, static_cast<void *>(stream));
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorStandin"; }
const char *cudaGetErrorString(cudaError_t) { return "(the stand-in runtime)"; }

}  // extern "C"
