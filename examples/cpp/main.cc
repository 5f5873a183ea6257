// softmax and reduce_sum through the installed C API, checked against a
// float64 reference: on the CPU backend always, and on the NVIDIA backend when
// the library has it and a GPU is visible (oprt_backend_is_available).
// Exits 0 when every check passes, 1 on a wrong result, 2 on an API error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "operator_runtime/operator_runtime.h"
#include "operator_runtime/version.h"

#ifdef OPRT_EXAMPLE_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

constexpr int64_t kRows = 64;
constexpr int64_t kCols = 1000;

// Where an operator's memory lives: host memory for the CPU backend, device
// memory for a GPU backend.
struct Memory {
    const char *name;
    oprt_backend_t backend;
    void *(*alloc)(size_t bytes);
    void (*release)(void *ptr);
    bool (*upload)(void *dst, const void *src, size_t bytes);
    bool (*download)(void *dst, const void *src, size_t bytes);
    bool (*sync)();
};

const Memory kHost = {
    "cpu",
    OPRT_BACKEND_CPU,
    [](size_t bytes) { return std::malloc(bytes ? bytes : 1); },
    [](void *ptr) { std::free(ptr); },
    [](void *dst, const void *src, size_t bytes) { return std::memcpy(dst, src, bytes) != nullptr; },
    [](void *dst, const void *src, size_t bytes) { return std::memcpy(dst, src, bytes) != nullptr; },
    []() { return true; },  // the CPU backend runs synchronously
};

#ifdef OPRT_EXAMPLE_WITH_CUDA
bool cuda_ok(cudaError_t err, const char *what) {
    if (err != cudaSuccess) std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(err));
    return err == cudaSuccess;
}

const Memory kNvidia = {
    "nvidia",
    OPRT_BACKEND_NVIDIA,
    [](size_t bytes) {
        void *ptr = nullptr;
        return cuda_ok(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc") ? ptr : nullptr;
    },
    [](void *ptr) { cudaFree(ptr); },
    [](void *dst, const void *src, size_t bytes) {
        return cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    },
    [](void *dst, const void *src, size_t bytes) {
        return cuda_ok(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    },
    []() { return cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); },
};
#endif

// A contiguous f32 view (strides count elements).
oprt_tensor_view_t view(void *data, std::vector<int64_t> shape) {
    oprt_tensor_view_t v{};
    v.data = data;
    v.dtype = OPRT_DTYPE_F32;
    v.ndim = static_cast<int32_t>(shape.size());
    int64_t stride = 1;
    for (int i = v.ndim - 1; i >= 0; --i) {
        v.shape[i] = shape[i];
        v.strides[i] = stride;
        stride *= shape[i];
    }
    return v;
}

bool ok(oprt_status_t status, const char *what) {
    if (status != OPRT_SUCCESS)
        std::fprintf(stderr, "%s failed: %s: %s\n", what, oprt_status_string(status),
                     oprt_last_error_message());
    return status == OPRT_SUCCESS;
}

// Device buffers freed on every path out.
struct Buffer {
    const Memory &mem;
    void *ptr = nullptr;
    Buffer(const Memory &m, size_t bytes) : mem(m), ptr(m.alloc(bytes)) {}
    ~Buffer() {
        if (ptr) mem.release(ptr);
    }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
};

// Runs softmax(x, axis=-1) and reduce_sum(x, axis=1) on one backend; false on an API error.
bool run(const Memory &mem, const std::vector<float> &x, std::vector<float> &softmax_out,
         std::vector<float> &sum_out) {
    const size_t n = x.size();
    Buffer in(mem, n * sizeof(float)), y(mem, n * sizeof(float)), s(mem, kRows * sizeof(float));
    if (!in.ptr || !y.ptr || !s.ptr || !mem.upload(in.ptr, x.data(), n * sizeof(float))) return false;
    if (!ok(oprt_set_backend(mem.backend), "oprt_set_backend")) return false;

    const oprt_tensor_view_t in_v = view(in.ptr, {kRows, kCols});
    const oprt_tensor_view_t y_v = view(y.ptr, {kRows, kCols});
    const oprt_tensor_view_t s_v = view(s.ptr, {kRows});

    oprt_softmax_descriptor_t sm = nullptr;
    if (!ok(oprt_create_softmax_descriptor(&sm, &y_v, &in_v, -1), "create softmax")) return false;
    size_t sm_ws = 0;
    bool good = ok(oprt_get_softmax_workspace_size(sm, &sm_ws), "softmax workspace size");
    if (good) {
        Buffer ws(mem, sm_ws);
        good = ws.ptr && ok(oprt_execute_softmax(sm, ws.ptr, sm_ws, y.ptr, in.ptr, nullptr),
                            "execute softmax") && mem.sync();
    }
    good = ok(oprt_destroy_softmax_descriptor(sm), "destroy softmax") && good;
    if (!good) return false;

    oprt_reduce_sum_descriptor_t rs = nullptr;
    if (!ok(oprt_create_reduce_sum_descriptor(&rs, &s_v, &in_v, 1), "create reduce_sum")) return false;
    size_t rs_ws = 0;
    good = ok(oprt_get_reduce_sum_workspace_size(rs, &rs_ws), "reduce_sum workspace size");
    if (good) {
        Buffer ws(mem, rs_ws);
        good = ws.ptr && ok(oprt_execute_reduce_sum(rs, ws.ptr, rs_ws, s.ptr, in.ptr, nullptr),
                            "execute reduce_sum") && mem.sync();
    }
    good = ok(oprt_destroy_reduce_sum_descriptor(rs), "destroy reduce_sum") && good;
    if (!good) return false;

    softmax_out.resize(n);
    sum_out.resize(kRows);
    return mem.download(softmax_out.data(), y.ptr, n * sizeof(float)) &&
           mem.download(sum_out.data(), s.ptr, kRows * sizeof(float));
}

int passed = 0, failed = 0;

void report(bool good, const std::string &what, const std::string &detail) {
    std::printf("%s %-18s %s\n", good ? "PASS" : "FAIL", what.c_str(), detail.c_str());
    (good ? passed : failed) += 1;
}

void report_error(const std::string &what, double err, double tol) {
    char detail[96];
    std::snprintf(detail, sizeof detail, "max error %.3g (tolerance %.3g)", err, tol);
    report(err <= tol, what, detail);
}

// Checks one backend's results against float64 softmax and row sums.
void check(const char *backend, const std::vector<float> &x, const std::vector<float> &y,
           const std::vector<float> &s) {
    double sm_err = 0, sum_err = 0, sum_tol = 0;
    for (int64_t r = 0; r < kRows; ++r) {
        const float *row = &x[r * kCols];
        double mx = -INFINITY, denom = 0, sum = 0, abs_sum = 0;
        for (int64_t c = 0; c < kCols; ++c) mx = std::fmax(mx, row[c]);
        for (int64_t c = 0; c < kCols; ++c) {
            denom += std::exp(double(row[c]) - mx);
            sum += row[c];
            abs_sum += std::fabs(row[c]);
        }
        for (int64_t c = 0; c < kCols; ++c) {
            const double expected = std::exp(double(row[c]) - mx) / denom;
            const double err = std::fabs(double(y[r * kCols + c]) - expected);
            sm_err = std::isnan(err) ? INFINITY : std::fmax(sm_err, err);
        }
        const double err = std::fabs(double(s[r]) - sum);
        sum_err = std::isnan(err) ? INFINITY : std::fmax(sum_err, err);
        sum_tol = std::fmax(sum_tol, 1e-6 * abs_sum);  // accumulation in f32 or wider
    }
    report_error(std::string(backend) + " softmax", sm_err, 1e-6);
    report_error(std::string(backend) + " reduce_sum", sum_err, sum_tol);
}

}  // namespace

int main() {
    // One version: the library's, the headers' and the CMake package's.
    std::printf("operator_runtime %s (headers %s, CMake package %s)\n", oprt_version(),
                OPRT_VERSION_STRING, OPRT_EXAMPLE_PACKAGE_VERSION);
    const bool same_version = std::strcmp(oprt_version(), OPRT_VERSION_STRING) == 0 &&
                              std::strcmp(oprt_version(), OPRT_EXAMPLE_PACKAGE_VERSION) == 0;
    report(same_version, "version",
           same_version ? "library, headers and CMake package agree"
                        : "library, headers and CMake package differ");

    std::vector<float> x(kRows * kCols);
    uint64_t state = 42;
    for (float &v : x) {  // deterministic values in [-4, 4)
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        v = float((state >> 40) * 0x1p-24 * 8.0 - 4.0);
    }

    std::vector<const Memory *> targets = {&kHost};
    int nvidia = 0;
    if (!ok(oprt_backend_is_available(OPRT_BACKEND_NVIDIA, &nvidia), "oprt_backend_is_available")) return 2;
#ifdef OPRT_EXAMPLE_WITH_CUDA
    if (nvidia)
        targets.push_back(&kNvidia);
    else
        std::printf("SKIP nvidia: the library has the NVIDIA backend but no GPU is visible\n");
#else
    std::printf("SKIP nvidia: %s\n", nvidia ? "this example was built without the CUDA toolkit"
                                            : "the library has no NVIDIA backend or no GPU is visible");
#endif

    for (const Memory *mem : targets) {
        std::vector<float> y, s;
        if (!run(*mem, x, y, s)) {
            std::fprintf(stderr, "%s: an API call failed\n", mem->name);
            return 2;
        }
        check(mem->name, x, y, s);
    }
    std::printf("oprt_example: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
