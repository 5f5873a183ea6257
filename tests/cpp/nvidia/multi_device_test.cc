// Several GPUs in one process. Every operator runs with each visible GPU as
// the current device (device properties and kernel attributes are per device:
// a cache filled for device 0 only would launch wrongly on device 1); two
// threads run every operator on two devices at once; a call runs on the device
// that holds its buffers whatever device the caller has current, and gives the
// caller's device back; one descriptor runs on every device; buffers of two
// devices, or a stream of another device, are a clear OPRT_ERR_INVALID_ARG.
// Tests needing two GPUs skip with the reason when fewer are visible.
#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "op_cases.h"

namespace nvt {
namespace {

int device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

#define NVT_SKIP_WITHOUT_TWO_GPUS()                                                            \
    do {                                                                                       \
        NVT_SKIP_WITHOUT_CUDA();                                                               \
        if (device_count() < 2) {                                                              \
            const std::string why_ = "needs two or more GPUs; " +                              \
                                     std::to_string(device_count()) + " visible";              \
            std::printf("[  SKIPPED ] %s\n", why_.c_str());                                    \
            GTEST_SKIP() << why_;                                                              \
        }                                                                                      \
    } while (0)

// Restores the test's current device however a test ends.
class CurrentDevice {
public:
    CurrentDevice() { (void)cudaGetDevice(&saved_); }
    ~CurrentDevice() { (void)cudaSetDevice(saved_); }

private:
    int saved_ = 0;
};

// Every operator, each dtype, odd sizes, a strided and a broadcast case, a
// reduction that needs a workspace, and softmax rows past one block's shared
// memory: the paths whose launches depend on per-device properties.
void check_every_operator(cudaStream_t stream = nullptr) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_elementwise(Ew::kCopy, dt, {{1027, 33}}, {{1027, 33}, {1, 1027}}, {}, false, 0.0f, stream);
        check_elementwise(Ew::kAdd, dt, {{513, 999}}, {{513, 999}}, {{999}}, false, 0.0f, stream);
        check_elementwise(Ew::kRelu, dt, {{100003}, {}, 1}, {{100003}, {}, 1}, {}, false, 0.1f, stream);
        check_reduce_sum(dt, {{3, 1 << 20}}, 1, false, Fill::kIntegers, {}, 0, stream);  // split: workspace
        check_reduce_sum(dt, {{4097, 257}}, 0, false, Fill::kIntegers, {}, 0, stream);
        check_softmax(dt, {{33, 1025}}, 1, true, {}, 0, stream);
        check_softmax(dt, {{5, 70001}}, -1, false, {}, 0, stream);  // beyond registers: shared memory
        check_softmax(dt, {{2, 600000}}, 1, false, {}, 0, stream);  // beyond one block's shared memory
    }
}

TEST(NvidiaMultiDevice, EveryOperatorOnEachVisibleDevice) {
    NVT_SKIP_WITHOUT_CUDA();
    NvidiaBackend backend;
    CurrentDevice restore;
    const int n = device_count();
    std::printf("[   INFO   ] %d GPU(s) visible\n", n);
    for (int d = 0; d < n; ++d) {
        SCOPED_TRACE("device " + std::to_string(d));
        NVT_CUDA_OK(cudaSetDevice(d));
        check_every_operator();
        if (HasFatalFailure()) return;
        int current = -1;
        NVT_CUDA_OK(cudaGetDevice(&current));
        EXPECT_EQ(current, d) << "a call changed the caller's current device";
    }
}

TEST(NvidiaMultiDevice, TwoThreadsOnTwoDevicesAtOnce) {
    NVT_SKIP_WITHOUT_TWO_GPUS();
    const int last = device_count() - 1;
    std::vector<std::thread> threads;
    for (int d : {0, last})
        threads.emplace_back([d] {
            SCOPED_TRACE("thread on device " + std::to_string(d));
            NvidiaBackend backend;  // the backend is per thread
            if (cudaSetDevice(d) != cudaSuccess) {
                ADD_FAILURE() << "cudaSetDevice(" << d << ") failed";
                return;
            }
            cudaStream_t stream = nullptr;
            if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
                ADD_FAILURE() << "cudaStreamCreate failed on device " << d;
                return;
            }
            for (int round = 0; round < 2; ++round) check_every_operator(stream);
            (void)cudaStreamDestroy(stream);
        });
    for (std::thread &t : threads) t.join();
}

// A descriptor and buffers on the last device, executed while device 0 is
// current: the call runs on the last device, and device 0 is current after it.
TEST(NvidiaMultiDevice, CallRunsWhereItsBuffersLive) {
    NVT_SKIP_WITHOUT_TWO_GPUS();
    NvidiaBackend backend;
    CurrentDevice restore;
    const int last = device_count() - 1;
    NVT_CUDA_OK(cudaSetDevice(last));
    Tensor in, out;
    make_tensor(in, OPRT_DTYPE_F32, {64, 3000}, {}, 0, Fill::kUniform, 5);
    make_tensor(out, OPRT_DTYPE_F32, {64, 3000}, {}, 0, Fill::kPoison);
    ASSERT_FALSE(HasFatalFailure());
    const oprt_tensor_view_t ov = out.view(), iv = in.view();

    // Created with device 0 current, too: the plan reads the output's device.
    NVT_CUDA_OK(cudaSetDevice(0));
    oprt_softmax_descriptor_t desc = nullptr;
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&desc, &ov, &iv, 1));
    size_t ws_size = 0;
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(desc, &ws_size));
    EXPECT_EQ(ws_size, 0u);
    NVT_OPRT_OK(oprt_execute_softmax(desc, nullptr, 0, out.data(), in.data(), nullptr));
    int current = -1;
    NVT_CUDA_OK(cudaGetDevice(&current));
    EXPECT_EQ(current, 0) << "execute must give the caller's device back";

    // A stream of the last device is accepted with device 0 current.
    NVT_CUDA_OK(cudaSetDevice(last));
    cudaStream_t last_stream = nullptr;
    NVT_CUDA_OK(cudaStreamCreateWithFlags(&last_stream, cudaStreamNonBlocking));
    NVT_CUDA_OK(cudaDeviceSynchronize());
    NVT_CUDA_OK(cudaSetDevice(0));
    NVT_OPRT_OK(oprt_execute_softmax(desc, nullptr, 0, out.data(), in.data(), last_stream));
    NVT_CUDA_OK(cudaSetDevice(last));
    NVT_CUDA_OK(cudaStreamSynchronize(last_stream));
    NVT_CUDA_OK(cudaStreamDestroy(last_stream));
    download(out);
    for (int64_t r = 0; r < 64; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < 3000; ++c) sum += out.get(r * 3000 + c);
        ASSERT_NEAR(sum, 1.0, 1e-4) << "row " << r;
    }
    NVT_OPRT_OK(oprt_destroy_softmax_descriptor(desc));
}

// One descriptor planned with buffers on GPU 0 and executed with buffers of the
// same shape on the last GPU (data parallelism with one plan): the kernels that
// opt in to large shared memory or large clusters must get those attributes on
// the device that launches them, not only on the device that planned.
TEST(NvidiaMultiDevice, OneDescriptorExecutesOnEveryDevice) {
    NVT_SKIP_WITHOUT_TWO_GPUS();
    NvidiaBackend backend;
    CurrentDevice restore;
    const int last = device_count() - 1;
    const int64_t rows = 5, cols = 20001;  // f32 rows of 80 KB: the shared-memory row kernel
    Tensor in0, out0, in1, out1, sin0, sout0, sin1, sout1;
    NVT_CUDA_OK(cudaSetDevice(0));
    make_tensor(in0, OPRT_DTYPE_F32, {rows, cols}, {}, 0, Fill::kIntegers, 7);
    make_tensor(out0, OPRT_DTYPE_F32, {rows, cols}, {}, 0, Fill::kPoison);
    make_tensor(sin0, OPRT_DTYPE_F32, {3, 1 << 20}, {}, 0, Fill::kIntegers, 8);  // few long rows: split
    make_tensor(sout0, OPRT_DTYPE_F32, {3}, {}, 0, Fill::kPoison);
    NVT_CUDA_OK(cudaSetDevice(last));
    make_tensor(in1, OPRT_DTYPE_F32, {rows, cols}, {}, 0, Fill::kIntegers, 7);
    make_tensor(out1, OPRT_DTYPE_F32, {rows, cols}, {}, 0, Fill::kPoison);
    make_tensor(sin1, OPRT_DTYPE_F32, {3, 1 << 20}, {}, 0, Fill::kIntegers, 8);
    make_tensor(sout1, OPRT_DTYPE_F32, {3}, {}, 0, Fill::kPoison);
    ASSERT_FALSE(HasFatalFailure());
    NVT_CUDA_OK(cudaSetDevice(0));

    const oprt_tensor_view_t ov = out0.view(), iv = in0.view(), sov = sout0.view(), siv = sin0.view();
    oprt_softmax_descriptor_t sm = nullptr;
    oprt_reduce_sum_descriptor_t rs = nullptr;
    NVT_OPRT_OK(oprt_create_softmax_descriptor(&sm, &ov, &iv, 1));
    NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&rs, &sov, &siv, 1));
    size_t sm_ws = 0, rs_ws = 0;
    NVT_OPRT_OK(oprt_get_softmax_workspace_size(sm, &sm_ws));
    NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(rs, &rs_ws));
    // The last device first: nothing has run on device 0 yet either.
    for (int d : {last, 0}) {
        SCOPED_TRACE("buffers on device " + std::to_string(d));
        NVT_CUDA_OK(cudaSetDevice(d));
        DeviceBuffer sm_buf(sm_ws), rs_buf(rs_ws);
        NVT_CUDA_OK(cudaSetDevice(0));  // the caller's device stays 0
        Tensor &in = d == 0 ? in0 : in1, &out = d == 0 ? out0 : out1;
        Tensor &sin = d == 0 ? sin0 : sin1, &sout = d == 0 ? sout0 : sout1;
        NVT_OPRT_OK(oprt_execute_softmax(sm, sm_ws ? sm_buf.get() : nullptr, sm_ws, out.data(), in.data(), nullptr));
        NVT_OPRT_OK(oprt_execute_reduce_sum(rs, rs_ws ? rs_buf.get() : nullptr, rs_ws, sout.data(), sin.data(), nullptr));
        NVT_CUDA_OK(cudaSetDevice(d));
        download(out);
        download(sout);
        NVT_CUDA_OK(cudaSetDevice(0));
        for (int64_t r = 0; r < rows; ++r) {
            double max = -1e30, sum = 0, got_sum = 0;
            for (int64_t c = 0; c < cols; ++c) max = std::max(max, double(in.get(r * cols + c)));
            for (int64_t c = 0; c < cols; ++c) sum += std::exp(double(in.get(r * cols + c)) - max);
            for (int64_t c = 0; c < cols; c += 997) {
                const double want = std::exp(double(in.get(r * cols + c)) - max) / sum;
                ASSERT_NEAR(out.get(r * cols + c), want, 1e-6 + 1e-5 * want) << "row " << r << " col " << c;
            }
            for (int64_t c = 0; c < cols; ++c) got_sum += out.get(r * cols + c);
            ASSERT_NEAR(got_sum, 1.0, 1e-4) << "row " << r;
        }
        for (int64_t r = 0; r < 3; ++r) {
            double want = 0;  // small integers: the f32 sum is exact
            for (int64_t c = 0; c < (1 << 20); ++c) want += sin.get(r * (1 << 20) + c);
            ASSERT_EQ(double(sout.get(r)), want) << "reduce_sum row " << r;
        }
    }
    NVT_OPRT_OK(oprt_destroy_softmax_descriptor(sm));
    NVT_OPRT_OK(oprt_destroy_reduce_sum_descriptor(rs));
}

TEST(NvidiaMultiDevice, MismatchedDevicesAreClearErrors) {
    NVT_SKIP_WITHOUT_TWO_GPUS();
    NvidiaBackend backend;
    CurrentDevice restore;
    const int last = device_count() - 1;
    const int64_t n = 4099;
    NVT_CUDA_OK(cudaSetDevice(0));
    DeviceBuffer a0(n * 4), out0(n * 4);
    cudaStream_t stream0 = nullptr;
    NVT_CUDA_OK(cudaStreamCreateWithFlags(&stream0, cudaStreamNonBlocking));
    NVT_CUDA_OK(cudaSetDevice(last));
    DeviceBuffer b1(n * 4);
    NVT_CUDA_OK(cudaMemset(b1.get(), 0, n * 4));
    NVT_CUDA_OK(cudaSetDevice(0));
    NVT_CUDA_OK(cudaMemset(a0.get(), 0, n * 4));

    auto view = [&](void *p) {
        oprt_tensor_view_t v{};
        v.data = p;
        v.dtype = OPRT_DTYPE_F32;
        v.ndim = 1;
        v.shape[0] = n;
        v.strides[0] = 1;
        return v;
    };
    const oprt_tensor_view_t ov = view(out0.get()), av = view(a0.get()), bv = view(b1.get());
    oprt_vector_add_descriptor_t desc = nullptr;
    NVT_OPRT_OK(oprt_create_vector_add_descriptor(&desc, &ov, &av, &bv));

    // Buffers of two devices in one call.
    EXPECT_EQ(oprt_execute_vector_add(desc, nullptr, 0, out0.get(), a0.get(), b1.get(), nullptr),
              OPRT_ERR_INVALID_ARG);
    const std::string two_devices = oprt_last_error_message();
    EXPECT_NE(two_devices.find("memory of device " + std::to_string(last)), std::string::npos) << two_devices;
    EXPECT_NE(two_devices.find("one device"), std::string::npos) << two_devices;

    // Buffers of the last device with a stream of device 0.
    NVT_CUDA_OK(cudaSetDevice(last));
    DeviceBuffer a1(n * 4), out1(n * 4);
    NVT_CUDA_OK(cudaSetDevice(0));
    EXPECT_EQ(oprt_execute_vector_add(desc, nullptr, 0, out1.get(), a1.get(), b1.get(), stream0),
              OPRT_ERR_INVALID_ARG);
    const std::string wrong_stream = oprt_last_error_message();
    EXPECT_NE(wrong_stream.find("stream belongs to device 0"), std::string::npos) << wrong_stream;

    // Nothing sticky: the same descriptor still runs on device 0 afterwards.
    NVT_OPRT_OK(oprt_execute_vector_add(desc, nullptr, 0, out0.get(), a0.get(), a0.get(), stream0));
    NVT_CUDA_OK(cudaStreamSynchronize(stream0));
    NVT_CUDA_OK(cudaGetLastError());
    NVT_OPRT_OK(oprt_destroy_vector_add_descriptor(desc));
    NVT_CUDA_OK(cudaStreamDestroy(stream0));
}

}  // namespace
}  // namespace nvt
