// Helpers of the NVIDIA GPU tests: device detection (tests skip with the
// reason when no CUDA device is visible), device buffers, host tensors with
// arbitrary strides and offsets, float64 references and dtype tolerances.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/internal/dtype.h"
#include "operator_runtime/operator_runtime.h"

namespace nvt {

// Empty when a CUDA device is usable, else why not.
inline std::string cuda_unavailable_reason() {
    static const std::string reason = [] {
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return std::string("no CUDA device visible: cudaGetDeviceCount failed with ") +
                   cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
        }
        if (count == 0) return std::string("no CUDA device visible: cudaGetDeviceCount returned 0");
        int available = 0;
        if (oprt_backend_is_available(OPRT_BACKEND_NVIDIA, &available) != OPRT_SUCCESS || !available)
            return std::string("the nvidia backend reports no device: ") + oprt_last_error_message();
        return std::string();
    }();
    return reason;
}

#define NVT_SKIP_WITHOUT_CUDA()                                                   \
    do {                                                                          \
        const std::string why_ = ::nvt::cuda_unavailable_reason();                \
        if (!why_.empty()) {                                                      \
            std::printf("[  SKIPPED ] %s\n", why_.c_str());                       \
            GTEST_SKIP() << why_;                                                 \
        }                                                                         \
    } while (0)

#define NVT_CUDA_OK(expr)                                                                   \
    do {                                                                                    \
        const cudaError_t e_ = (expr);                                                      \
        ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorName(e_) << " "          \
                                   << cudaGetErrorString(e_);                               \
    } while (0)

#define NVT_OPRT_OK(expr)                                                                   \
    do {                                                                                    \
        const oprt_status_t s_ = (expr);                                                    \
        ASSERT_EQ(s_, OPRT_SUCCESS) << #expr << ": " << oprt_status_string(s_) << ": "      \
                                    << oprt_last_error_message();                           \
    } while (0)

// Device memory owned by the test.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes) { allocate(bytes); }
    ~DeviceBuffer() {
        if (ptr_ != nullptr) cudaFree(ptr_);
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }

    cudaError_t allocate(size_t bytes) {
        bytes_ = bytes;
        // Never 0 bytes: a valid device pointer even for empty tensors.
        return cudaMalloc(&ptr_, bytes > 0 ? bytes : 16);
    }
    void *get() const { return ptr_; }
    size_t bytes() const { return bytes_; }

private:
    void *ptr_ = nullptr;
    size_t bytes_ = 0;
};

inline size_t dtype_bytes(oprt_dtype_t d) { return d == OPRT_DTYPE_F32 ? 4 : 2; }
inline const char *dtype_name(oprt_dtype_t d) { return oprt_dtype_string(d); }

// Value of raw element bytes as f32, and rounding an f32 into raw bytes.
inline float decode(oprt_dtype_t d, const unsigned char *p) {
    if (d == OPRT_DTYPE_F32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return d == OPRT_DTYPE_F16 ? oprt::f16_to_f32(oprt::f16_t{bits}) : oprt::bf16_to_f32(oprt::bf16_t{bits});
}
inline void encode(oprt_dtype_t d, float v, unsigned char *p) {
    if (d == OPRT_DTYPE_F32) {
        std::memcpy(p, &v, 4);
        return;
    }
    const uint16_t bits = d == OPRT_DTYPE_F16 ? oprt::f32_to_f16(v).bits : oprt::f32_to_bf16(v).bits;
    std::memcpy(p, &bits, 2);
}

// A strided tensor in a host byte buffer, uploaded to device memory at the
// same offsets. `offset` elements precede element 0 (misaligned cases).
struct Tensor {
    oprt_dtype_t dtype = OPRT_DTYPE_F32;
    std::vector<int64_t> shape, strides;
    int64_t offset = 0;
    std::vector<unsigned char> host;  // offset + extent elements
    DeviceBuffer dev;

    int ndim() const { return int(shape.size()); }
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t s : shape) n *= s;
        return n;
    }
    int64_t storage_elems() const {
        int64_t extent = 1;
        bool empty = false;
        for (int d = 0; d < ndim(); ++d) {
            if (shape[d] == 0) empty = true;
            extent += (shape[d] - 1) * strides[d];
        }
        return offset + (empty ? 0 : extent);
    }
    size_t esize() const { return dtype_bytes(dtype); }
    int64_t linear_to_offset(int64_t linear) const {  // row-major linear index -> element offset
        int64_t off = offset;
        for (int d = ndim() - 1; d >= 0; --d) {
            off += (linear % shape[d]) * strides[d];
            linear /= shape[d];
        }
        return off;
    }
    float get(int64_t elem_offset) const { return decode(dtype, &host[size_t(elem_offset) * esize()]); }
    void set(int64_t elem_offset, float v) { encode(dtype, v, &host[size_t(elem_offset) * esize()]); }
    void *data() const { return static_cast<unsigned char *>(dev.get()) + offset * esize(); }

    oprt_tensor_view_t view() const {
        oprt_tensor_view_t v{};
        v.data = data();
        v.dtype = dtype;
        v.ndim = ndim();
        for (int d = 0; d < ndim(); ++d) {
            v.shape[d] = shape[d];
            v.strides[d] = strides[d];
        }
        return v;
    }
};

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &shape) {
    std::vector<int64_t> s(shape.size());
    int64_t acc = 1;
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
        s[d] = acc;
        acc *= shape[d];
    }
    return s;
}

// upload (and poison, below) finish before they return: cudaMemcpy from pageable memory
// and cudaMemset may still be running on the legacy stream, which work on a
// non-blocking stream does not wait for (a graph replay's first kernels once
// ran before the poison landed and "lost" their output; a kernel on another
// thread's device once wrote the end of its output before make_tensor's poison
// landed over it).
inline void upload(Tensor &t) {
    ASSERT_EQ(cudaMemcpy(t.dev.get(), t.host.data(), t.host.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

enum class Fill { kUniform, kIntegers, kPoison };

// Makes a tensor, fills every storage element (gaps included) and uploads it.
// kUniform: uniform in [-range, range]; kIntegers: integers in [-8, 8] (f32
// sums of them are exact); kPoison: all bytes 0xFF (NaN in every dtype).
inline void make_tensor(Tensor &t, oprt_dtype_t dtype, std::vector<int64_t> shape,
                        std::vector<int64_t> strides = {}, int64_t offset = 0,
                        Fill fill = Fill::kUniform, uint32_t seed = 1, float range = 4.0f) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.strides = strides.empty() ? contiguous_strides(t.shape) : std::move(strides);
    t.offset = offset;
    const int64_t n = t.storage_elems();
    t.host.assign(size_t(n) * t.esize(), 0xFF);
    if (fill != Fill::kPoison) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> uni(-range, range);
        std::uniform_int_distribution<int> ints(-8, 8);
        for (int64_t i = 0; i < n; ++i) t.set(i, fill == Fill::kUniform ? uni(rng) : float(ints(rng)));
    }
    t.dev.allocate(t.host.size());
    upload(t);
}

inline void download(Tensor &t) {
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(t.host.data(), t.dev.get(), t.host.size(), cudaMemcpyDeviceToHost), cudaSuccess);
}
// Output poisoned with NaN bytes before each run: an unwritten element fails.
inline void poison(Tensor &t) {
    ASSERT_EQ(cudaMemset(t.dev.get(), 0xFF, t.host.size() > 0 ? t.host.size() : 1), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Tolerances of a result rounded once to `d` from an exact value.
struct Tol {
    double rtol, atol;
};
inline Tol rounding_tol(oprt_dtype_t d) {
    switch (d) {
    case OPRT_DTYPE_F32: return {2e-7, 1e-30};
    case OPRT_DTYPE_F16: return {1e-3, 6e-8};
    case OPRT_DTYPE_BF16: return {4e-3, 1e-30};
    }
    return {0, 0};
}

inline bool close(double got, double want, double rtol, double atol) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

// Checks every element of `out` against want(linear index) and that storage
// outside out's elements (gaps of a strided output, the offset prefix) kept
// the poison bytes. Reports at most a few failures.
inline void expect_output(const Tensor &out, const std::function<double(int64_t)> &want,
                          const std::function<Tol(int64_t)> &tol, const std::string &what) {
    const int64_t n = out.numel();
    std::vector<char> is_elem(size_t(out.storage_elems()), 0);
    int failures = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t off = out.linear_to_offset(i);
        is_elem[size_t(off)] = 1;
        const double w = want(i);
        const double g = out.get(off);
        const Tol t = tol(i);
        if (!close(g, w, t.rtol, t.atol)) {
            if (++failures <= 5)
                ADD_FAILURE() << what << ": element " << i << " = " << g << ", want " << w
                              << " (rtol " << t.rtol << ", atol " << t.atol << ")";
        }
    }
    for (size_t e = 0; e < is_elem.size(); ++e) {
        if (is_elem[e]) continue;
        for (size_t b = 0; b < out.esize(); ++b)
            if (out.host[e * out.esize() + b] != 0xFF) {
                if (++failures <= 5) ADD_FAILURE() << what << ": storage element " << e << " outside the output was written";
                break;
            }
    }
    if (failures > 5) ADD_FAILURE() << what << ": " << failures << " failures in total";
}

// Sets the calling thread's backend to nvidia for the test's lifetime.
class NvidiaBackend {
public:
    NvidiaBackend() {
        oprt_get_backend(&saved_);
        oprt_set_backend(OPRT_BACKEND_NVIDIA);
    }
    ~NvidiaBackend() { oprt_set_backend(saved_); }

private:
    oprt_backend_t saved_ = OPRT_BACKEND_AUTO;
};

inline std::string shape_str(const std::vector<int64_t> &s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + ")";
}

}  // namespace nvt
